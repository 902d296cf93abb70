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
