"""Detect a usable Java (17+) and its compiler before Spark tries to start, and say so in one line.

``python -m bucketkit.javacheck`` exits 1 with one line on stderr when Java or ``javac`` is missing
or too old; the Makefile runs it before the demo and the tests (``javac`` builds bucketkit's Spark
catalog, see :mod:`bucketkit.jvmbuild`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from bucketkit.errors import JavaNotFoundError

MIN_JAVA = 17


def java_tool(name: str = "java") -> str | None:
    """The path of a JDK tool (``java``, ``javac``): JAVA_HOME's first, then PATH's; None if absent."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def java_version(tool: str = "java") -> int | None:
    """The major version of the Java runtime Spark would use (or of ``javac``), None if there is none."""
    java = java_tool(tool)
    if java is None:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'(?:version "|javac )(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" means Java 8


def require_java(compiler: bool = False) -> None:
    """Raise :class:`JavaNotFoundError` with one clear line unless Java 17+ (and, with ``compiler``,
    its ``javac``) is available."""
    version = java_version()
    if version is None:
        raise JavaNotFoundError(
            f"bucketkit needs Java {MIN_JAVA}+ for Spark, but no `java` was found on PATH or in "
            f"JAVA_HOME (install e.g. openjdk-{MIN_JAVA}-jre-headless)"
        )
    if version < MIN_JAVA:
        raise JavaNotFoundError(
            f"bucketkit needs Java {MIN_JAVA}+ for Spark, but `java` is version {version} "
            f"(set JAVA_HOME to a Java {MIN_JAVA}+ runtime)"
        )
    if compiler:
        javac = java_version("javac")
        if javac is None or javac < MIN_JAVA:
            found = "no `javac` was found on PATH or in JAVA_HOME" if javac is None else f"`javac` is version {javac}"
            raise JavaNotFoundError(
                f"bucketkit needs a Java {MIN_JAVA}+ JDK (with `javac`, to build its Spark catalog), but {found} "
                f"(install e.g. openjdk-{MIN_JAVA}-jdk-headless)"
            )


def main() -> int:
    try:
        require_java(compiler=True)
    except JavaNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
