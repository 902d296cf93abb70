"""A store with an object store's semantics on the local disk, for Spark's JVM and for bucketkit's Python
alike, under the URI scheme ``objtest://`` (``objtest:///abs/path`` is the local ``/abs/path``).

Hadoop's side is ``tests/jvm/ObjectStoreFileSystem.java`` (compiled here against pyspark's jars): a directory
rename is a copy then a delete, file by file, with a pause between files, as S3A does, and each one is logged.
Python's side (:func:`filesystem`, named in ``BUCKETKIT_FILESYSTEMS`` so that a SQL INSERT's commit process
finds it) moves a file as a copy then a delete, and refuses to move a directory, logging it. A commit that
relied on a directory rename leaves a line in the log: the tests assert the log stays empty.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyarrow.fs as pafs

from support.localfs import LocalHandler

SCHEME = "objtest"
JAVA_CLASS = "bucketkit.testfs.ObjectStoreFileSystem"
LOG_ENV = "BUCKETKIT_OBJTEST_LOG"  # where both sides log a directory rename
SOURCE = Path(__file__).resolve().parents[1] / "jvm" / "ObjectStoreFileSystem.java"


def _log(line: str) -> None:
    log = os.environ.get(LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


class ObjectStoreHandler(LocalHandler):
    """The local filesystem, but a move is a copy plus a delete and a directory cannot be moved."""

    type_name = SCHEME

    def move(self, src, dest):
        if self.local.get_file_info(src).type == pafs.FileType.Directory:
            _log(f"python: rename of directory {src} -> {dest}")
            raise OSError(f"objtest: {src} is a directory: an object store cannot rename it")
        self.local.copy_file(src, dest)
        self.local.delete_file(src)


def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """``BUCKETKIT_FILESYSTEMS``'s factory: ``objtest:///abs/path`` -> (this store, ``/abs/path``)."""
    path = uri[len(SCHEME) + 1:]  # objtest:///x, or Hadoop's objtest:/x
    return pafs.PyFileSystem(ObjectStoreHandler()), "/" + path.lstrip("/")


def build_jar(out: Path) -> Path:
    """The Hadoop filesystem compiled against pyspark's jars, as a jar in ``out``."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    classes = out / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "--release", "17", "-nowarn", "-d", str(classes), "-cp", f"{jars}/*", str(SOURCE)],
                   check=True, capture_output=True, text=True)
    jar = out / "objtest.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True, capture_output=True, text=True)
    return jar
