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


def test_a_release_builds_with_the_newest_release_sources_not_newer_than_itself(tmp_path):
    from bucketkit.jvmbuild import _overlay

    for name in ("4.0", "4.2", "4.10"):
        (tmp_path / "release" / name).mkdir(parents=True)
    (tmp_path / "src").mkdir()
    picked = {r: _overlay(tmp_path / "src", r) for r in ("3.5", "4.0", "4.1", "4.2", "4.3", "4.10", "5.0")}
    assert {r: p and p.name for r, p in picked.items()} == {
        "3.5": None, "4.0": "4.0", "4.1": "4.0", "4.2": "4.2", "4.3": "4.2", "4.10": "4.10", "5.0": "4.10"}


def test_every_supported_release_has_its_release_sources():
    from bucketkit.jvmbuild import RELEASES, SOURCES, _overlay

    for release in RELEASES:
        overlay = _overlay(SOURCES, release)
        assert overlay is not None and (overlay / "io" / "bucketkit" / "compat" / "SparkRelease.java").is_file()


def test_a_build_compiles_the_release_sources_with_the_common_ones(tmp_path):
    """jvm/src code calling a class only a release directory has compiles for that release."""
    _write(tmp_path / "src", GOOD.replace("return org.apache.spark.sql.types.DataTypes.LongType.typeName();",
                                          "return Release.name();"))
    release = tmp_path / "release" / "4.0" / "io" / "bucketkit" / "probe"
    release.mkdir(parents=True)
    (release / "Release.java").write_text("package io.bucketkit.probe;\n"
                                          "final class Release { static String name() { return \"4.0+\"; } }\n")
    jar = build(tmp_path / "out.jar", sources=tmp_path / "src")
    with zipfile.ZipFile(jar) as z:
        assert {"io/bucketkit/probe/Probe.class", "io/bucketkit/probe/Release.class"} <= set(z.namelist())


def test_an_unsupported_pyspark_is_a_clear_error(monkeypatch):
    import bucketkit.jvmbuild as jvmbuild

    monkeypatch.setattr(jvmbuild, "_installed_pyspark", lambda: "3.5.1")
    with pytest.raises(JvmBuildError, match=r"pyspark 3\.5\.1 is installed.*supports Spark 4\.0, 4\.1, 4\.2, 4\.3 only"):
        jvmbuild.jar_path()


def test_an_install_without_this_releases_jar_names_the_jars_it_has(tmp_path, monkeypatch):
    import bucketkit.jvmbuild as jvmbuild

    (tmp_path / "bucketkit-spark-4.0.jar").write_bytes(b"")
    monkeypatch.setattr(jvmbuild, "JARS", tmp_path)
    monkeypatch.setattr(jvmbuild, "build", lambda: None)
    with pytest.raises(JvmBuildError, match=r"carries its Spark catalog for bucketkit-spark-4\.0\.jar, not for pyspark 4\.3"):
        jvmbuild.jar_path()


def test_wanted_releases():
    from bucketkit.jvmbuild import RELEASES, wanted_releases

    assert wanted_releases(None) == wanted_releases("all") == list(RELEASES)
    assert wanted_releases(" 4.0, 4.3 ") == ["4.0", "4.3"]
    with pytest.raises(JvmBuildError, match=r"names 3\.5; expected some of 4\.0, 4\.1, 4\.2, 4\.3"):
        wanted_releases("3.5,4.0")
