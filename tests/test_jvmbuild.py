"""The JVM part is compiled from source with javac against pyspark's own jars, and only when needed."""

import zipfile

import pytest

from bucketkit.errors import JvmBuildError
from bucketkit.jvmbuild import build

GOOD = """package io.bucketkit.probe;
public final class Probe {
    public static String typeName() { return org.apache.spark.sql.types.DataTypes.LongType.typeName(); }
}
"""


def _write(root, text):
    src = root / "io" / "bucketkit" / "probe" / "Probe.java"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(text)
    return src


def test_compiles_against_pyspark_and_rebuilds_only_on_change(tmp_path):
    jar = tmp_path / "out" / "probe.jar"
    _write(tmp_path / "src", GOOD)
    assert build(jar, sources=tmp_path / "src") == jar
    with zipfile.ZipFile(jar) as z:
        assert "io/bucketkit/probe/Probe.class" in z.namelist()
    first = jar.stat().st_mtime_ns
    build(jar, sources=tmp_path / "src")
    assert jar.stat().st_mtime_ns == first  # unchanged sources: no javac run, same file
    _write(tmp_path / "src", GOOD.replace("LongType", "IntegerType"))
    build(jar, sources=tmp_path / "src")
    assert jar.stat().st_mtime_ns != first


def test_same_sources_give_the_same_jar(tmp_path):
    _write(tmp_path / "src", GOOD)
    a, b = build(tmp_path / "a.jar", sources=tmp_path / "src"), build(tmp_path / "b.jar", sources=tmp_path / "src")
    assert a.read_bytes() == b.read_bytes()


def test_compile_error_names_the_file(tmp_path):
    _write(tmp_path / "src", GOOD.replace("typeName();", "noSuchMethod();"))
    with pytest.raises(JvmBuildError, match=r"Probe\.java.*noSuchMethod|noSuchMethod"):
        build(tmp_path / "x.jar", sources=tmp_path / "src")
    assert not (tmp_path / "x.jar").exists()


def test_no_sources_no_jar(tmp_path):
    assert build(tmp_path / "none.jar", sources=tmp_path / "empty") is None
