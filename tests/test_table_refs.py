"""Table references: one spelling rule for paths, URIs, catalog names and BucketedTables, never the disk."""

from __future__ import annotations

import os
import pathlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bucketkit
from bucketkit.errors import InvalidArgumentError, TableNotFoundError
from bucketkit.layout.metadata import TableSpec, write_spec
from bucketkit.spark.catalog import resolve_table
from bucketkit.table import open_table, reference_kind

IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
SEGMENT = st.text(st.characters(blacklist_characters="/\\\x00", blacklist_categories=("Cs",)), min_size=1, max_size=8)


@given(parts=st.lists(IDENT, min_size=1, max_size=3))
def test_identifiers_are_catalog_names(parts):
    assert reference_kind(".".join(parts)) == "catalog"
    assert reference_kind(".".join(f"`{p}`" for p in parts)) == "catalog"


@given(segments=st.lists(SEGMENT, min_size=2, max_size=4), prefix=st.sampled_from(["", "/", "./", "../", "~/"]))
def test_anything_with_a_slash_is_a_directory(segments, prefix):
    assert reference_kind(prefix + "/".join(segments)) == "path"


@pytest.mark.parametrize("ref", ["s3://lake/t", "hdfs://nn:8020/warehouse/t", "file:///data/t", "gs://b/t", ".",
                                 "./t", "~/lake/t", "C:\\data\\t"])
def test_uris_and_relative_paths_are_directories(ref):
    assert reference_kind(ref) == "path"
    assert reference_kind(pathlib.Path("t")) == "path"


@pytest.mark.parametrize("ref", ["my table", "db.t.x.y", "1t", "", 3, None, ["t"]])
def test_neither_is_a_clear_error(ref):
    with pytest.raises(InvalidArgumentError, match="expected a BucketedTable, a directory .* or a catalog table name"):
        reference_kind(ref)


def test_an_existing_directory_does_not_turn_a_name_into_a_path(tmp_path, monkeypatch):
    """The old join guessed with os.path.exists: 't' read the directory if one happened to exist."""
    write_spec(str(tmp_path / "t"), TableSpec.create(["k"], 4, columns={"k": "int"}))
    monkeypatch.chdir(tmp_path)
    assert reference_kind("t") == "catalog"
    with pytest.raises(InvalidArgumentError, match=r"catalog table name, which needs a SparkSession.*'\./t'"):
        resolve_table(None, "t")
    assert resolve_table(None, "./t").spec.bucket_count == 4
    assert resolve_table(None, pathlib.Path("t")).location == os.path.join(str(tmp_path), "t")


def test_spec_options_apply_to_directories_only(tmp_path):
    write_spec(str(tmp_path / "t"), TableSpec.create(["k"], 4, columns={"k": "int"}))
    table = open_table(str(tmp_path / "t"))
    assert resolve_table(None, table) is table
    with pytest.raises(InvalidArgumentError, match="BucketedTable, which carries its own spec; bucket_count"):
        resolve_table(None, table, bucket_count=4)
    with pytest.raises(InvalidArgumentError, match="catalog table, which carries its own spec; bucketing_version"):
        resolve_table(None, "db.t", bucketing_version=2)
    with pytest.raises(InvalidArgumentError, match="unknown option.*bucket_cnt.*bucket_count"):
        resolve_table(None, str(tmp_path / "t"), bucket_cnt=4)


def test_plans_need_no_spark_for_directories_and_tuple_filters(tmp_path):
    write_spec(str(tmp_path / "t"), TableSpec.create(["k"], 4, columns={"k": "int"}))
    plan = bucketkit.plan_scan(str(tmp_path / "t"), [("k", "=", 1)])
    assert plan.selected_buckets is not None and len(plan.selected_buckets) == 1
    with pytest.raises(InvalidArgumentError, match="SQL predicate or Column needs Spark; pass spark="):
        bucketkit.plan_scan(str(tmp_path / "t"), "k = 1")
    with pytest.raises(InvalidArgumentError, match="exactly one of table= .* or path="):
        bucketkit.plan_scan(str(tmp_path / "t"), path=str(tmp_path / "t"))


@pytest.mark.spark
def test_a_session_where_a_plan_wants_the_table_says_where_the_session_goes(spark):
    """scan(spark, t) takes the session first, plan_scan(t, spark=spark) the table: the slip gets the order."""
    for call in (lambda: bucketkit.plan_scan(spark, "t"), lambda: bucketkit.plan_join(spark, "a", "k")):
        with pytest.raises(InvalidArgumentError, match="take the table first and the session as spark="):
            call()


@pytest.mark.spark
def test_a_missing_catalog_table_says_how_to_name_a_directory(spark):
    with pytest.raises(TableNotFoundError, match=r"no_such_table.*for a directory of that name write '\./no_such_table'"):
        resolve_table(spark, "no_such_table")


@pytest.mark.spark
def test_a_name_qualified_with_the_session_catalog_is_that_table(spark):
    """``spark_catalog.db.t`` is how Spark SQL, DataFrameWriterV2 and dbt name a session-catalog table, and
    reference_kind takes it for one. Failed before: every call with such a name raised a raw IllegalArgumentException
    with no reason ('bucketkit: table spark_catalog.default.t: ') from the JVM's parse of a two-part name."""
    spark.sql("DROP TABLE IF EXISTS refs_three")
    rows = spark.range(40).selectExpr("id AS k", "CAST(id AS STRING) AS v")
    bucketkit.write(rows, "k", 4, table="spark_catalog.default.refs_three")
    bucketkit.write(rows, "k", 4, table="SPARK_CATALOG.default.refs_three", mode="append")
    assert sorted(r.k for r in bucketkit.scan(spark, "spark_catalog.default.refs_three", filters=[("k", "=", 5)])
                  .collect()) == [5, 5]
    plan = bucketkit.plan_scan("spark_catalog.default.refs_three", [("k", "=", 5)], spark=spark)
    assert plan.selected_buckets is not None and len(plan.selected_buckets) == 1
    assert [v.operation for v in bucketkit.history("spark_catalog.default.refs_three", spark=spark)] == [
        "create", "append"]
    assert bucketkit.join(spark, "spark_catalog.default.refs_three", "default.refs_three", "k").count() == 160
    assert "planned bucketed" in str(bucketkit.sql_status(spark, "spark_catalog.default.refs_three"))
    spark.sql("DROP TABLE refs_three")


@pytest.mark.spark
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab_1.` ", min_size=1, max_size=5), st.booleans()), min_size=1, max_size=3))
def test_a_table_name_splits_as_sparks_own_parser_splits_it(spark, parts):
    """bucketkit.spark.catalog.name_parts against Spark's parseMultipartIdentifier (the golden split)."""
    from bucketkit.spark.catalog import name_parts

    plain = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what Spark SQL takes unquoted
    pieces = [f"`{p.replace('`', '``')}`" if quote or not plain.fullmatch(p) else p for p, quote in parts]
    name = ".".join(pieces)
    parser = spark._jsparkSession.sessionState().sqlParser()
    spark_parts = list(spark.sparkContext._jvm.scala.jdk.javaapi.CollectionConverters.asJava(
        parser.parseMultipartIdentifier(name)))
    if len(spark_parts) == 3 and spark_parts[0].lower() == "spark_catalog":
        spark_parts = spark_parts[1:]
    assert name_parts(name) == spark_parts
