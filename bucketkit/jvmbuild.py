"""Build bucketkit's JVM part (the Spark SQL catalog) from the Java sources in ``jvm/src``.

There is no Maven here on purpose: the sources are compiled with ``javac --release 17`` against the
jars inside the pinned pyspark — the exact classes Spark will run them with, so a DSv2 API change
between Spark versions is a compile error, not a runtime one — and packed into
``bucketkit/jars/bucketkit-spark.jar``, which ships inside the Python package and is never
committed. The jar records a digest of its sources and of the pyspark version; :func:`jar_path`
rebuilds only when they changed. ``make demo`` and ``make test`` run ``python -m bucketkit.jvmbuild``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from bucketkit.errors import JvmBuildError
from bucketkit.javacheck import java_tool, require_java

__all__ = ["JAR", "SOURCES", "jar_path", "jar_spark_version", "build", "pyspark_jars"]

PACKAGE = Path(__file__).resolve().parent
SOURCES = PACKAGE.parent / "jvm" / "src"
JAR = PACKAGE / "jars" / "bucketkit-spark.jar"
_DIGEST_ENTRY = "META-INF/bucketkit-sources.sha256"
_SPARK_ENTRY = "META-INF/bucketkit-pyspark.version"  # the pyspark whose jars the classes were compiled against
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries with one timestamp: the same sources give the same jar


def pyspark_jars() -> Path:
    """The ``jars`` directory of the installed pyspark (found without importing pyspark)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise JvmBuildError("pyspark is not installed; bucketkit's catalog is compiled against its jars "
                            "(run `make test` or `pip install -e .`)")
    jars = Path(spec.origin).parent / "jars"
    if not jars.is_dir():
        raise JvmBuildError(f"{jars}: pyspark's jars directory is missing; expected Spark's jars inside the "
                            f"pyspark package")
    return jars


def _digest(root: Path, sources: list[Path]) -> str:
    h = hashlib.sha256(f"pyspark {importlib.metadata.version('pyspark')}; release 17; jar format 2\n".encode())
    for src in sources:
        h.update(f"{src.relative_to(root).as_posix()}\n".encode())
        h.update(src.read_bytes())
    return h.hexdigest()


def _jar_entry(jar: Path, entry: str) -> str | None:
    """The text of ``entry`` in ``jar`` (None: no such jar or entry)."""
    try:
        with zipfile.ZipFile(jar) as z:
            return z.read(entry).decode().strip()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def build(jar: Path = JAR, *, sources: Path = SOURCES, force: bool = False) -> Path | None:
    """Compile the Java files under ``sources`` into ``jar`` unless it is up to date; the jar's path
    (None: no sources and no jar).

    Raises:
        JavaNotFoundError: no Java 17+ ``javac``.
        JvmBuildError: the sources do not compile against this pyspark (javac's messages included).
    """
    root, sources = sources, sorted(sources.rglob("*.java")) if sources.is_dir() else []
    if not sources:
        return jar if jar.is_file() else None
    digest = _digest(root, sources)
    if not force and _jar_entry(jar, _DIGEST_ENTRY) == digest:
        return jar
    require_java(compiler=True)
    with tempfile.TemporaryDirectory(prefix="bucketkit-javac-") as tmp:
        classes = Path(tmp, "classes")
        cmd = [java_tool("javac") or "javac", "--release", "17", "-nowarn", "-encoding", "UTF-8",
               "-cp", str(pyspark_jars() / "*"), "-d", str(classes), *map(str, sources)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise JvmBuildError(f"javac could not compile {root} against {pyspark_jars()}:\n"
                                f"{(out.stderr or out.stdout).strip()}")
        jar.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tmp, jar.name)
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", _FIXED_TIME), "Manifest-Version: 1.0\r\n\r\n")
            z.writestr(zipfile.ZipInfo(_DIGEST_ENTRY, _FIXED_TIME), digest + "\n")
            z.writestr(zipfile.ZipInfo(_SPARK_ENTRY, _FIXED_TIME), importlib.metadata.version("pyspark") + "\n")
            for cls in sorted(classes.rglob("*.class")):
                info = zipfile.ZipInfo(cls.relative_to(classes).as_posix(), _FIXED_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, cls.read_bytes())
        os.replace(partial, jar)  # readers never see half a jar
    return jar


def jar_spark_version(jar: Path) -> str | None:
    """The pyspark version ``jar`` was compiled against (None: a jar from before this was recorded)."""
    return _jar_entry(jar, _SPARK_ENTRY)


def _minor(version: str) -> tuple[str, ...]:
    return tuple(version.split(".")[:2])


def jar_path() -> Path | None:
    """The jar to put on Spark's classpath, built first if its sources changed (None: no JVM part).

    An installed package without ``jvm/src`` uses the jar it shipped with, if it was compiled
    against this pyspark's feature release (Spark's internal APIs the catalog uses change between
    ``4.0`` and ``4.3``; patch releases keep them).

    Raises:
        JvmBuildError: the shipped jar targets another Spark than the installed pyspark.
    """
    jar = build()
    if jar is not None:
        compiled, installed = jar_spark_version(jar), importlib.metadata.version("pyspark")
        if compiled is not None and _minor(compiled) != _minor(installed):
            raise JvmBuildError(f"{jar}: bucketkit's Spark catalog was compiled for pyspark {compiled}, but pyspark "
                                f"{installed} is installed; install the bucketkit built for Spark "
                                f"{'.'.join(_minor(installed))} (or pyspark {compiled})")
    return jar


def main() -> int:
    try:
        jar = build(force="--force" in sys.argv[1:])
    except Exception as exc:  # one line for make, not a traceback
        print(f"bucketkit: {exc}", file=sys.stderr)
        return 1
    print(f"bucketkit's Spark catalog: {jar}" if jar else "bucketkit: no Java sources in jvm/src; nothing to build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
