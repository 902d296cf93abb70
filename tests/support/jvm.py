"""bucketkit's jar beside a test-only catalog compiled from tests/jvm (the ``probe`` fixture)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import zipfile

import pytest

from bucketkit.javacheck import java_tool
from bucketkit.jvmbuild import JAR, pyspark_jars


PROBE = pathlib.Path(__file__).resolve().parent.parent / "jvm"


@pytest.fixture(scope="module")
def probe(spark, tmp_path_factory):
    """A test-only in-memory catalog ``probe`` (tests/jvm) whose tables report Hive bucketing through
    HiveBucketFunction: Spark's own planner decides what it makes of the function."""
    out = tmp_path_factory.mktemp("probe")
    sources = sorted(map(str, PROBE.rglob("*.java")))
    classpath = f"{pyspark_jars() / '*'}{os.pathsep}{JAR}"
    subprocess.run([java_tool("javac") or "javac", "--release", "17", "-nowarn", "-cp", classpath,
                    "-d", str(out / "classes"), *sources], check=True, capture_output=True)
    jar = out / "probe.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for cls in (out / "classes").rglob("*.class"):
            z.write(cls, cls.relative_to(out / "classes").as_posix())
    spark.sql(f"ADD JAR '{jar}'")
    spark.conf.set("spark.sql.catalog.probe", "io.bucketkit.probe.ProbeCatalog")
    return spark
