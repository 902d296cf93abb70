"""bucketkit.io's URIs against Hadoop's own ``Path`` (pyspark's jars, through py4j): the oracle for
what Spark reads and writes, and for the location strings Spark's catalog hands back."""

from __future__ import annotations

import pyarrow.fs as pafs
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit import io

NAME = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\~"),
               min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))
SHAPED = st.sampled_from(["a b", "50%", "%20", "ü", "日本", "#x", "q?", "[1]", "{a,b}", "x=%2F", "*", "a:b"])
PATHS = st.lists(st.one_of(NAME, SHAPED), min_size=1, max_size=4).map(lambda parts: "/tmp/" + "/".join(parts))


def test_spark_uri_is_read_back_by_hadoop_as_the_same_path(spark):
    hadoop_path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path

    @settings(max_examples=300)
    @given(PATHS)
    def check(path):
        uri = hadoop_path(io.spark_uri(pafs.LocalFileSystem(), path)).toUri()
        assert (uri.getScheme(), uri.getPath()) == ("file", path)
        # Spark's catalog gives a location as such a java.net.URI's text; it resolves to the same path.
        fs, inside = io.resolve_filesystem(io.hadoop_to_uri(uri.toString()))
        assert (fs.type_name, inside) == ("local", path), uri.toString()

    check()


def test_julian_dates_are_rebased_as_sparks_rebase_datetime_does(spark):
    """io.julian_to_gregorian_days (how bucketkit's pyarrow reads see an ORC file's dates before 1582-10-15, which
    Spark's writer stores in the hybrid Julian calendar) against Spark's own RebaseDateTime, through the JVM."""
    rebase = spark.sparkContext._jvm.org.apache.spark.sql.catalyst.util.RebaseDateTime.rebaseJulianToGregorianDays
    edges = [io.GREGORIAN_START + d for d in range(-12, 3)] + [-719164, -719163, -719162, -(2 ** 31), 2 ** 31 - 1, 0]

    @settings(max_examples=400)
    @given(st.lists(st.integers(-(2 ** 31), 2 ** 31 - 1) | st.integers(-800_000, io.GREGORIAN_START + 5),
                    min_size=1, max_size=20))
    def check(days):
        assert io.julian_to_gregorian_days(days).tolist() == [rebase(d) for d in days]

    check()
    assert io.julian_to_gregorian_days(edges).tolist() == [rebase(d) for d in edges]
