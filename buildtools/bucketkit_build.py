"""bucketkit's build backend: setuptools', plus the JVM part compiled into every wheel.

``pip install .``, ``pip install git+<url>`` and ``pip wheel .`` build a wheel through this
backend (``pyproject.toml``: ``build-backend``, ``backend-path``). Before setuptools packs the
wheel, ``jvm/`` is compiled with ``javac`` into one jar per Spark feature release the wheel supports,
``bucketkit/jars/bucketkit-spark-<x.y>.jar``, each against that release's own jars (a pyspark source
distribution fetched once with pip and cached: ``bucketkit.jvmbuild.spark_jars_of``); at run time
bucketkit picks the jar of the installed pyspark. An install needs no ``make``, no repository on disk
and no ``javac``. Every release in ``bucketkit.jvmbuild.RELEASES`` by default; the environment variable
``BUCKETKIT_SPARK_RELEASES`` (e.g. ``4.0`` or ``4.0,4.3``) builds fewer. Editable installs
(``make``'s ``pip install -e``) compile nothing here: ``make jar`` builds the jar for the virtualenv's
pyspark beside the sources.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook setuptools has)

ROOT = Path(__file__).resolve().parent.parent


def get_requires_for_build_wheel(config_settings=None):
    # pip itself: the build fetches each release's pyspark with `python -m pip download`
    return [*_setuptools.get_requires_for_build_wheel(config_settings), "pip"]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    # setuptools' build/lib keeps what earlier builds copied there (a jar or module since renamed):
    # a wheel carries only what the checkout has now
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    sys.path.insert(0, str(ROOT))  # bucketkit.jvmbuild needs only the standard library, pip and javac
    try:
        from bucketkit import jvmbuild

        releases = jvmbuild.wanted_releases(os.environ.get("BUCKETKIT_SPARK_RELEASES"))
        for jar in jvmbuild.JARS.glob("*.jar"):  # the wheel carries the jars built now, none left by a checkout's make
            if jar not in [jvmbuild.jar_for(r) for r in releases]:
                jar.unlink()
        for release in releases:
            jvmbuild.build_release(release, force=True)
    finally:
        sys.path.remove(str(ROOT))
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
