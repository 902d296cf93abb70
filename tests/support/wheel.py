"""The wheel as pip builds it, installed into fresh virtualenvs and smoke-run on each Spark release: the child
processes of tests/test_wheel.py, which asserts on what they return. Queued early as background jobs
(tests/support/background.py) when those tests are selected: minutes of child processes beside the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from support import background

import bucketkit.jvmbuild as jvmbuild

REPO = Path(__file__).resolve().parents[2]


def build(dist: Path) -> dict:
    """``pip wheel .`` into ``dist``: a jar for every supported Spark release. ``run``: pip's run; ``wheel``: the
    wheel built (None when none was)."""
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
                         capture_output=True, text=True, timeout=1800,
                         env={k: v for k, v in os.environ.items() if k != "BUCKETKIT_SPARK_RELEASES"})
    wheels = list(dist.glob("bucketkit-*.whl"))
    return {"run": run, "wheel": wheels[0] if run.returncode == 0 and len(wheels) == 1 else None, "all": wheels}


def installed_release() -> str:
    import importlib.metadata

    return jvmbuild.release_of(importlib.metadata.version("pyspark"))


def _fresh_venv(tmp_path: Path, wheel: Path, pyspark: str | None) -> tuple[Path, subprocess.CompletedProcess]:
    """A virtualenv with the wheel installed and, for ``pyspark``, that pyspark; every other
    dependency is this .venv's site-packages as a plain path, after the venv's own."""
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    packages = [str(wheel)] + ([f"pyspark=={pyspark}"] if pyspark else [])
    out = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                          *packages], capture_output=True, text=True, timeout=900)
    if out.returncode == 0:
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        Path(site, "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, out


def smoke(tmp_path: Path, release: str) -> dict:
    """tests/smoke/installed.py in a fresh virtualenv holding the wheel (job ``wheel``'s): this .venv's pyspark for
    its own release, else that release's pyspark installed into the virtualenv. ``install``: pip's run;
    ``smoke``: the script's run (None when the install failed)."""
    wheel = background.done("wheel")["wheel"]
    if wheel is None:  # the build failed: test_wheel's wheel fixture says how
        return {"install": background.done("wheel")["run"], "smoke": None}
    python, install = _fresh_venv(tmp_path, wheel, None if release == installed_release() else jvmbuild.RELEASES[release])
    if install.returncode != 0:
        return {"install": install, "smoke": None}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run([str(python), str(REPO / "tests" / "smoke" / "installed.py"), str(work)], cwd=work,
                         capture_output=True, text=True, timeout=900, env=env)
    return {"install": install, "smoke": out}


def queue(tmp_path_factory) -> None:
    """Queue the wheel's build, then a smoke run per release, as background jobs."""
    background.start("wheel", build, tmp_path_factory.mktemp("dist"))
    for release in jvmbuild.RELEASES:
        background.start(f"smoke-{release}", smoke, tmp_path_factory.mktemp(f"smoke-{release}"), release)
