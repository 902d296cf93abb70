"""bucketkit's build backend: setuptools', plus the JVM part compiled into every wheel.

``pip install .``, ``pip install git+<url>`` and ``pip wheel .`` build a wheel through this
backend (``pyproject.toml``: ``build-backend``, ``backend-path``). Before setuptools packs the
wheel, ``jvm/src`` is compiled with ``javac`` against the jars of the pyspark the wheel targets
(installed into the build environment: :data:`SPARK`) into ``bucketkit/jars/bucketkit-spark.jar``,
which the wheel then carries as package data: an install needs no ``make``, no repository on disk
and no ``javac``. Editable installs (``make``'s ``pip install -e``) compile nothing here: ``make jar``
builds the jar beside the sources.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook setuptools has)

#: The pyspark whose jars the wheel's catalog is compiled against (the one pyproject pins).
SPARK = "pyspark==4.3.0"
ROOT = Path(__file__).resolve().parent.parent


def get_requires_for_build_wheel(config_settings=None):
    return [*_setuptools.get_requires_for_build_wheel(config_settings), SPARK]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    sys.path.insert(0, str(ROOT))  # bucketkit.jvmbuild needs only the standard library and javac
    try:
        from bucketkit.jvmbuild import build

        build(force=True)
    finally:
        sys.path.remove(str(ROOT))
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
