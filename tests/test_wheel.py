"""bucketkit as pip users get it: a wheel built from the checkout carries the Spark catalog, and a
session without the catalog is only ever one the caller asked for.

The wheel tests build the wheel the way ``pip install .`` does (the build backend compiles jvm/ against
each supported Spark release's jars), install it into a fresh virtualenv whose only other packages
are the dependencies (this .venv's site-packages as a plain path: none of its .pth files, so not the
editable checkout) — with each other release's pyspark installed into it in turn — and run
tests/smoke/installed.py there, outside the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

import bucketkit.jvmbuild as jvmbuild
from bucketkit.errors import JvmBuildError

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel, built once as ``pip wheel .`` builds it: a jar for every supported Spark release."""
    dist = tmp_path_factory.mktemp("dist")
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
                         capture_output=True, text=True, timeout=1800,
                         env={k: v for k, v in os.environ.items() if k != "BUCKETKIT_SPARK_RELEASES"})
    assert out.returncode == 0, out.stdout + out.stderr
    (built,) = dist.glob("bucketkit-*.whl")
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


def _fresh_venv(tmp_path: Path, wheel: Path, pyspark: str | None) -> Path:
    """A virtualenv with the wheel installed and, for ``pyspark``, that pyspark; every other
    dependency is this .venv's site-packages as a plain path, after the venv's own."""
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    packages = [str(wheel)] + ([f"pyspark=={pyspark}"] if pyspark else [])
    out = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                          *packages], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _installed_release() -> str:
    import importlib.metadata

    return jvmbuild.release_of(importlib.metadata.version("pyspark"))


@pytest.mark.parametrize("release", list(jvmbuild.RELEASES))
def test_the_wheel_works_installed_on_each_spark_release(wheel, tmp_path, release):
    """tests/smoke/installed.py in a fresh virtualenv: this .venv's pyspark for its own release, else
    that release's pyspark installed into the virtualenv (the full suite runs on this .venv's only)."""
    python = _fresh_venv(tmp_path, wheel, None if release == _installed_release() else jvmbuild.RELEASES[release])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run([str(python), str(REPO / "tests" / "smoke" / "installed.py"), str(work)], cwd=work,
                         capture_output=True, text=True, timeout=900, env=env)
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


def test_a_running_session_without_the_catalog_is_refused_not_reused(tmp_path):
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
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert "REFUSED" in out.stdout, out.stdout[-2000:] + out.stderr[-4000:]
