"""bucketkit as pip users get it: a wheel built from the checkout carries the Spark catalog, and a
session without the catalog is only ever one the caller asked for.

The wheel tests build the wheel the way ``pip install .`` does (the build backend compiles jvm/ against
each supported Spark release's jars), install it into a fresh virtualenv whose only other packages
are the dependencies (this .venv's site-packages as a plain path: none of its .pth files, so not the
editable checkout) — with each other release's pyspark installed into it in turn — and run
tests/smoke/installed.py there, outside the repository.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import bucketkit.jvmbuild as jvmbuild
from bucketkit.errors import JvmBuildError
from support import background
from support import wheel as support_wheel

pytestmark = pytest.mark.spark


def queue_background(names: set[str], tmp_path_factory) -> None:
    """The wheel's build and smoke runs, beside the suite (tests/support/background.py)."""
    if "test_the_wheel_works_installed_on_each_spark_release" in names:
        support_wheel.queue(tmp_path_factory)
    if "test_a_running_session_without_the_catalog_is_refused_not_reused" in names:
        background.start("no-catalog-session", _no_catalog_session, tmp_path_factory.mktemp("no-catalog"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel, built once as ``pip wheel .`` builds it: a jar for every supported Spark release (queued at the
    session's start beside the suite when these tests are selected: support/wheel.py)."""
    built = background.result("wheel", support_wheel.build, tmp_path_factory.mktemp("dist"))
    out = built["run"]
    assert out.returncode == 0, out.stdout + out.stderr
    (built,) = built["all"]
    return built


def test_the_wheel_carries_a_catalog_jar_per_spark_release(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        versions = {r: z.read(f"bucketkit/jars/bucketkit-spark-{r}.jar") for r in jvmbuild.RELEASES}
    assert {f"bucketkit/jars/bucketkit-spark-{r}.jar" for r in jvmbuild.RELEASES} | {"pyspark_bucketkit/__init__.py"} <= names
    assert not any(n.startswith(("tests/", "jvm/")) for n in names)
    assert not [n for n in names if n.startswith("bucketkit/jars/") and n.removeprefix("bucketkit/jars/").removeprefix(
        "bucketkit-spark-").removesuffix(".jar") not in jvmbuild.RELEASES]
    for release, data in versions.items():  # each compiled against its own release's jars
        jar = Path(wheel.parent, f"{release}.jar")
        jar.write_bytes(data)
        assert jvmbuild.release_of(jvmbuild.jar_spark_version(jar)) == release


@pytest.mark.parametrize("release", list(jvmbuild.RELEASES))
def test_the_wheel_works_installed_on_each_spark_release(wheel, tmp_path_factory, release):
    """tests/smoke/installed.py in a fresh virtualenv: this .venv's pyspark for its own release, else
    that release's pyspark installed into the virtualenv (the full suite runs on this .venv's only)."""
    ran = background.result(f"smoke-{release}", support_wheel.smoke, tmp_path_factory.mktemp(f"smoke-{release}"),
                             release)
    out = ran["install"]
    assert out.returncode == 0, out.stdout + out.stderr
    out = ran["smoke"]
    assert f"SMOKE OK on pyspark {release}." in out.stdout, out.stdout[-3000:] + out.stderr[-6000:]


def test_a_session_without_the_jar_is_refused(monkeypatch):
    import bucketkit.spark.session as session

    monkeypatch.setattr(session, "jar_path", lambda: None)
    with pytest.raises(JvmBuildError, match=r"catalog is missing.*catalog=False"):
        session.get_session("no-jar")


def test_a_jar_for_another_spark_is_refused(tmp_path, monkeypatch):
    jar = tmp_path / "old.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/bucketkit-pyspark.version", "3.5.1\n")
    monkeypatch.setattr(jvmbuild, "build", lambda: jar)
    with pytest.raises(JvmBuildError, match=r"compiled for pyspark 3\.5\.1, but pyspark 4\.3\.\d+ is installed"):
        jvmbuild.jar_path()


def test_the_built_jar_records_its_spark():
    import importlib.metadata

    assert jvmbuild.jar_spark_version(jvmbuild.JAR) == importlib.metadata.version("pyspark")


def _no_catalog_session(tmp_path: Path) -> subprocess.CompletedProcess:
    """A child process that starts a session without the catalog, then asks get_session for one with it."""
    script = textwrap.dedent(f"""
        import bucketkit
        from bucketkit.errors import JvmBuildError
        plain = bucketkit.get_session("plain", warehouse={str(tmp_path / 'wh')!r}, catalog=False)
        plain.sql("CREATE TABLE t (k int) CLUSTERED BY (k) INTO 2 BUCKETS STORED AS ORC")
        status = bucketkit.sql_status(plain, "t")
        assert not status.bucketed and "catalog is not this session's" in status.detail, status
        try:
            bucketkit.get_session("again", warehouse={str(tmp_path / 'wh')!r})
        except JvmBuildError as exc:
            assert "started without bucketkit's catalog" in str(exc) and "spark.stop()" in str(exc), exc
            print("REFUSED")
    """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path)


def test_a_running_session_without_the_catalog_is_refused_not_reused(tmp_path_factory):
    out = background.result("no-catalog-session", _no_catalog_session, tmp_path_factory.mktemp("no-catalog"))
    assert "REFUSED" in out.stdout, out.stdout[-2000:] + out.stderr[-4000:]
