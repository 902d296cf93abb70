"""Detect a usable Java (17+) before Spark tries to start, and say so in one clear line.

``python -m bucketkit.javacheck`` exits 1 with one line on stderr when Java is missing or too old;
the Makefile runs it before the demo and the tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from bucketkit.errors import JavaNotFoundError

MIN_JAVA = 17


def _java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("java")


def java_version() -> int | None:
    """The major version of the Java runtime Spark would use, or None if there is none."""
    java = _java_executable()
    if java is None:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" means Java 8


def require_java() -> None:
    """Raise :class:`JavaNotFoundError` with one clear line unless Java 17+ is available."""
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


def main() -> int:
    try:
        require_java()
    except JavaNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
