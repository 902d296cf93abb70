"""bucketkit as pip users get it: a wheel built from the checkout carries the Spark catalog, and a
session without the catalog is only ever one the caller asked for.

The wheel test builds the wheel the way ``pip install .`` does (the build backend compiles jvm/src
against the pyspark the wheel targets), installs it into a fresh virtualenv whose only other
packages are the dependencies (this .venv's site-packages as a plain path: none of its .pth files,
so not the editable checkout), and runs tests/smoke/installed.py there, outside the repository.
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


def test_wheel_carries_the_catalog_and_works_installed(tmp_path):
    dist = tmp_path / "dist"
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    (wheel,) = dist.glob("bucketkit-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {"bucketkit/jars/bucketkit-spark.jar", "pyspark_bucketkit/__init__.py"} <= names
        assert not any(n.startswith(("tests/", "jvm/")) for n in names)
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    out = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                          str(wheel)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run([str(python), str(REPO / "tests" / "smoke" / "installed.py"), str(work)], cwd=work,
                         capture_output=True, text=True, timeout=900, env=env)
    assert "SMOKE OK" in out.stdout, out.stdout[-3000:] + out.stderr[-6000:]


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
