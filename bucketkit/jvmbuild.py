"""Build bucketkit's JVM part (the Spark SQL catalog) from the Java sources in ``jvm/``.

There is no Maven here on purpose: the sources are compiled with ``javac --release 17`` against the
jars of the Spark they will run in — a DSv2 API change between Spark versions is a compile error,
not a runtime one — into one jar per Spark feature release, ``bucketkit/jars/bucketkit-spark-<x.y>.jar``
(the way Iceberg ships a runtime per Spark version), shipped inside the Python package and never
committed. ``jvm/src`` is the same for every release; the few calls whose signatures differ between
releases live in ``jvm/release/<x.y>/`` (``io/bucketkit/compat/SparkRelease.java``), and a build for
Spark ``x.y`` adds the newest of those not newer than ``x.y``.

At run time :func:`jar_path` picks the jar of the installed pyspark's feature release. In a checkout
(``make demo``/``make test``) it builds that jar first when its sources changed; an installed wheel
carries one jar per release in :data:`RELEASES`, compiled by the build backend
(``buildtools/bucketkit_build.py``) against each release's jars (:func:`spark_jars_of`, fetched from
PyPI's pyspark once and cached). A pyspark outside :data:`RELEASES` is a clear error naming it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from bucketkit.errors import JvmBuildError
from bucketkit.javacheck import java_tool, require_java

__all__ = ["JAR", "RELEASES", "SOURCES", "build", "build_release", "jar_for", "jar_path", "jar_spark_version",
           "pyspark_jars", "release_of", "spark_jars_of", "wanted_releases"]

PACKAGE = Path(__file__).resolve().parent
SOURCES = PACKAGE.parent / "jvm" / "src"
JARS = PACKAGE / "jars"
#: The Spark feature releases bucketkit's catalog is built for, each with the pyspark release a wheel's
#: jar is compiled against (patch releases keep the APIs the catalog uses).
RELEASES = {"4.0": "4.0.5", "4.1": "4.1.4", "4.2": "4.2.1", "4.3": "4.3.0"}
_DIGEST_ENTRY = "META-INF/bucketkit-sources.sha256"
_SPARK_ENTRY = "META-INF/bucketkit-pyspark.version"  # the pyspark whose jars the classes were compiled against
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries with one timestamp: the same sources give the same jar
# the jars javac reads compiling the catalog (javac -verbose), by name: a fetched pyspark keeps only these
_COMPILE_JARS = ("spark-", "scala-", "hadoop-client-api", "jackson-", "log4j-", "hive-", "slf4j-", "pickle-",
                 "kryo-", "jsr305-", "orc-", "parquet-")


def release_of(version: str) -> str:
    """A Spark version's feature release: ``"4.0.5"`` -> ``"4.0"``."""
    return ".".join(version.split(".")[:2])


def _installed_pyspark() -> str | None:
    try:
        return importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return None


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in release.split(".") if p.isdigit())


def jar_for(release: str) -> Path:
    """Where the jar for Spark feature release ``release`` (``"x.y"``) lives in the package."""
    return JARS / f"bucketkit-spark-{release}.jar"


#: The jar for the installed pyspark's feature release (the newest supported one without pyspark).
JAR = jar_for(release_of(_installed_pyspark() or max(RELEASES, key=_release_key)))


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


def _digest(roots: list[Path], sources: list[tuple[Path, Path]], spark: str) -> str:
    h = hashlib.sha256(f"pyspark {spark}; release 17; jar format 3\n".encode())
    for root, src in sources:
        h.update(f"{src.relative_to(root.parent).as_posix()}\n".encode())
        h.update(src.read_bytes())
    return h.hexdigest()


def _overlay(sources: Path, release: str) -> Path | None:
    """The release-specific sources a build for ``release`` adds to ``sources``: the newest
    ``<sources>/../release/<x.y>`` not newer than ``release`` (None: there are none)."""
    base = sources.parent / "release"
    found = [d for d in base.iterdir() if d.is_dir() and _release_key(d.name) <= _release_key(release)] \
        if base.is_dir() else []
    return max(found, key=lambda d: _release_key(d.name)) if found else None


def _jar_entry(jar: Path, entry: str) -> str | None:
    """The text of ``entry`` in ``jar`` (None: no such jar or entry)."""
    try:
        with zipfile.ZipFile(jar) as z:
            return z.read(entry).decode().strip()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def build(jar: Path | None = None, *, sources: Path = SOURCES, force: bool = False,
          spark_jars: Path | None = None, spark: str | None = None) -> Path | None:
    """Compile the Java files under ``sources`` (plus the release's ``jvm/release/<x.y>``) against
    ``spark_jars`` (default: the installed pyspark's, version ``spark``) into ``jar`` (default: the jar for
    that release) unless it is up to date; the jar's path (None: no sources and no jar).

    Raises:
        JavaNotFoundError: no Java 17+ ``javac``.
        JvmBuildError: the sources do not compile against this Spark (javac's messages included).
    """
    spark = spark or _installed_pyspark() or ""
    jar = jar or jar_for(release_of(spark))
    roots = [sources] if sources.is_dir() else []
    overlay = _overlay(sources, release_of(spark)) if roots else None
    roots += [overlay] if overlay else []
    files = [(root, f) for root in roots for f in sorted(root.rglob("*.java"))]
    if not files:
        return jar if jar.is_file() else None
    digest = _digest(roots, files, spark)
    if not force and _jar_entry(jar, _DIGEST_ENTRY) == digest:
        return jar
    require_java(compiler=True)
    spark_jars = spark_jars or pyspark_jars()
    with tempfile.TemporaryDirectory(prefix="bucketkit-javac-") as tmp:
        classes = Path(tmp, "classes")
        cmd = [java_tool("javac") or "javac", "--release", "17", "-nowarn", "-encoding", "UTF-8",
               "-cp", str(spark_jars / "*"), "-d", str(classes), *(str(f) for _, f in files)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise JvmBuildError(f"javac could not compile {', '.join(map(str, roots))} against {spark_jars} "
                                f"(Spark {spark}):\n{(out.stderr or out.stdout).strip()}")
        jar.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tmp, jar.name)
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", _FIXED_TIME), "Manifest-Version: 1.0\r\n\r\n")
            z.writestr(zipfile.ZipInfo(_DIGEST_ENTRY, _FIXED_TIME), digest + "\n")
            z.writestr(zipfile.ZipInfo(_SPARK_ENTRY, _FIXED_TIME), spark + "\n")
            for cls in sorted(classes.rglob("*.class")):
                info = zipfile.ZipInfo(cls.relative_to(classes).as_posix(), _FIXED_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, cls.read_bytes())
        os.replace(partial, jar)  # readers never see half a jar
    return jar


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bucketkit" / "spark-jars"


def spark_jars_of(version: str) -> Path:
    """A directory holding the jars of pyspark ``version`` that the catalog compiles against: the
    installed pyspark's own when it is that version, else fetched once from the package index with
    pip (pyspark's source distribution carries Spark's jars) into ``~/.cache/bucketkit/spark-jars``.

    Raises:
        JvmBuildError: pip could not fetch that pyspark (offline, or no such version).
    """
    if _installed_pyspark() == version:
        return pyspark_jars()
    target = _cache_dir() / version
    if (target / "READY").is_file():
        return target
    with tempfile.TemporaryDirectory(prefix="bucketkit-pyspark-") as tmp:
        out = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                              "--disable-pip-version-check", "-d", tmp, f"pyspark=={version}"],
                             capture_output=True, text=True)
        archives = list(Path(tmp).glob(f"pyspark-{version}.tar.gz"))
        if out.returncode != 0 or not archives:
            raise JvmBuildError(f"could not fetch pyspark {version} to compile bucketkit's catalog for Spark "
                                f"{release_of(version)} (pip download: {(out.stderr or out.stdout).strip()[-500:]}); "
                                f"build for fewer releases with BUCKETKIT_SPARK_RELEASES, e.g. "
                                f"BUCKETKIT_SPARK_RELEASES={release_of(_installed_pyspark() or version)}")
        partial = Path(tmp, "jars")
        partial.mkdir()
        with tarfile.open(archives[0]) as tar:
            for member in tar:
                name = Path(member.name).name
                if member.isfile() and "/jars/" in member.name and name.endswith(".jar") and name.startswith(_COMPILE_JARS):
                    with tar.extractfile(member) as src:
                        (partial / name).write_bytes(src.read())
        if not any(partial.glob("spark-sql_*.jar")):
            raise JvmBuildError(f"{archives[0].name}: no Spark jars inside; expected pyspark's deps/jars")
        (partial / "READY").write_text(version + "\n")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():  # a fetch interrupted before READY
            shutil.rmtree(target)
        os.replace(partial, target)
    return target


def build_release(release: str, *, force: bool = False) -> Path | None:
    """The jar for Spark feature release ``release``, compiled against :data:`RELEASES`' pyspark of it
    (the installed pyspark when it is of that release)."""
    installed = _installed_pyspark()
    spark = installed if installed and release_of(installed) == release else RELEASES[release]
    return build(jar_for(release), force=force, spark_jars=spark_jars_of(spark), spark=spark)


def jar_spark_version(jar: Path) -> str | None:
    """The pyspark version ``jar`` was compiled against (None: a jar from before this was recorded)."""
    return _jar_entry(jar, _SPARK_ENTRY)


def jar_path() -> Path | None:
    """The jar to put on Spark's classpath for the installed pyspark, built first in a checkout if its
    sources changed (None: no JVM part).

    An installed package without ``jvm/src`` uses the jar it shipped for this pyspark's feature
    release (Spark's internal APIs the catalog uses change between ``4.0`` and ``4.3``; patch
    releases keep them).

    Raises:
        JvmBuildError: pyspark is not a release bucketkit supports, or no jar was shipped for it.
    """
    installed = _installed_pyspark()
    if installed is None:
        raise JvmBuildError("pyspark is not installed; bucketkit needs pyspark "
                            f"{min(RELEASES, key=_release_key)}-{max(RELEASES, key=_release_key)} (pip install pyspark)")
    release = release_of(installed)
    if release not in RELEASES:
        raise JvmBuildError(f"pyspark {installed} is installed, but bucketkit's Spark catalog supports Spark "
                            f"{', '.join(RELEASES)} only; install one of those (bucketkit's write, scan and join "
                            f"of directories need no catalog: get_session(catalog=False))")
    jar = build()
    if jar is None:
        shipped = sorted(p.name for p in JARS.glob("bucketkit-spark-*.jar"))
        if shipped:
            raise JvmBuildError(f"this bucketkit carries its Spark catalog for {', '.join(shipped)}, not for pyspark "
                                f"{installed}: reinstall bucketkit from a wheel built for Spark {release} "
                                f"(BUCKETKIT_SPARK_RELEASES={release} pip install ...)")
        return None
    compiled = jar_spark_version(jar)
    if compiled is not None and release_of(compiled) != release:
        raise JvmBuildError(f"{jar}: bucketkit's Spark catalog was compiled for pyspark {compiled}, but pyspark "
                            f"{installed} is installed; install the bucketkit built for Spark {release} "
                            f"(or pyspark {compiled})")
    return jar


def wanted_releases(text: str | None) -> list[str]:
    """The releases named in ``text`` (``"4.0,4.3"``, or ``"all"``/empty for every one in :data:`RELEASES`).

    Raises:
        JvmBuildError: a release bucketkit does not support.
    """
    names = [r.strip() for r in (text or "all").split(",") if r.strip()]
    if names in ([], ["all"]):
        return list(RELEASES)
    unknown = [r for r in names if r not in RELEASES]
    if unknown:
        raise JvmBuildError(f"BUCKETKIT_SPARK_RELEASES names {', '.join(unknown)}; expected some of "
                            f"{', '.join(RELEASES)} (or 'all')")
    return names


def main(argv: list[str] | None = None) -> int:
    """``python -m bucketkit.jvmbuild [--force] [--releases 4.0,4.3|all]``: the jar for the installed
    pyspark (``make jar``), or for the named Spark releases (the wheel build)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if "--releases" in args:
            jars = [build_release(r, force="--force" in args) for r in wanted_releases(args[args.index("--releases") + 1])]
        else:
            jars = [build(force="--force" in args)]
    except Exception as exc:  # one line for make, not a traceback
        print(f"bucketkit: {exc}", file=sys.stderr)
        return 1
    for jar in jars:
        print(f"bucketkit's Spark catalog: {jar}" if jar else "bucketkit: no Java sources in jvm/src; nothing to build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
