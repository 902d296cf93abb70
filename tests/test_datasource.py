"""The ``bucketkit`` Spark data source: schema, push-down pruning, exact rows vs Spark's own read."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.errors import InvalidArgumentError
from bucketkit.io import split_top_level
from bucketkit.layout.metadata import TableSpec
from bucketkit.pruning.plan import plan_scan
from bucketkit.spark.datasource import UnitPartition, read_table, table_from_options
from bucketkit.units import ReadUnit
from support.scan import write_arrow_table
from support.scan import SPEC, filters, full_read, hive_table, rows_for, sorted_rows  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    base = tmp_path_factory.mktemp("ds")
    v2 = write_arrow_table(str(base / "v2"), SPEC.with_(bucketing_version=2), rows_for(), hive_names=True)
    foreign = write_arrow_table(str(base / "foreign"), SPEC, rows_for(), metadata=False)
    return {"v2": v2, "foreign": foreign}


FOREIGN = {"bucketed_by": "k", "bucket_count": "8", "bucketing_version": "1", "bucket_types": "bigint",
           "partitioned_by": "p", "partition_types": "int", "table_columns": "k bigint, s string, x double"}


def test_options_describe_a_foreign_table(tables):
    table = table_from_options({"path": tables["foreign"], **FOREIGN})
    assert table.spec.bucketed_by == ("k",) and table.spec.bucket_count == 8 and table.spec.bucketing_version == 1
    assert table.spec.columns == (("k", "bigint"), ("s", "string"), ("x", "double"))
    assert split_top_level("decimal(10,2), map<string,int>,int") == ["decimal(10,2)", "map<string,int>", "int"]
    with pytest.raises(InvalidArgumentError, match="bucket_count='eight'"):
        table_from_options({"path": tables["foreign"], **FOREIGN, "bucket_count": "eight"})
    with pytest.raises(InvalidArgumentError, match="read_table"):
        table_from_options({"path": tables["foreign"], "table": "db.t"})
    again = pickle.loads(pickle.dumps(UnitPartition(ReadUnit("/a/000001_0", 10, 1, (("p", "2"),)))))
    assert again.unit.values == {"p": "2"} and again.unit.bucket == 1 and again.check is None


def test_full_read_matches_spark(spark, tables):
    df = spark.read.format("bucketkit").load(tables["v2"])
    assert df.schema == full_read(spark, tables["v2"], SPEC).schema
    assert sorted_rows(df) == sorted_rows(full_read(spark, tables["v2"], SPEC))


def test_where_on_the_bucket_column_reads_only_its_files(spark, tables):
    root = tables["v2"]
    df = spark.read.format("bucketkit").load(root).where("k = 42")
    assert sorted_rows(df) == sorted_rows(full_read(spark, root, SPEC).where("k = 42"))
    plan = plan_scan(root, [("k", "=", 42)])
    assert len(plan.selected_buckets) == 1 and len(plan.files) < len(plan_scan(root).files)
    # one input partition per selected non-empty file: the reader touched only those
    assert df.rdd.getNumPartitions() == len(plan.files)
    both = spark.read.format("bucketkit").load(root).where("k IN (1, 2) AND p = 1")
    assert both.rdd.getNumPartitions() == len(plan_scan(root, [("k", "in", [1, 2]), ("p", "=", 1)]).files)
    nothing = spark.read.format("bucketkit").load(root).where("k = 3.5")
    assert nothing.count() == 0


def test_foreign_table_with_options(spark, tables):
    reader = spark.read.format("bucketkit")
    for key, value in FOREIGN.items():
        reader = reader.option(key, value)
    df = reader.load(tables["foreign"]).where("k <=> NULL AND p IS NULL")
    assert sorted_rows(df) == sorted_rows(full_read(spark, tables["foreign"], SPEC).where("k IS NULL AND p IS NULL"))


@settings(max_examples=20)
@given(data=st.data())
def test_data_source_returns_exactly_what_spark_returns(spark, tables, data):
    dnf, sql = data.draw(filters(["k", "s", "x", "p"]))
    got = spark.read.format("bucketkit").load(tables["v2"]).where(sql)
    assert sorted_rows(got) == sorted_rows(full_read(spark, tables["v2"], SPEC).where(sql)), sql


def test_catalog_table_through_read_table(spark, hive_table):
    name, _ = hive_table
    df = read_table(spark, name).where("k = 42 AND p = 1")
    assert sorted_rows(df) == sorted_rows(spark.table(name).where("k = 42 AND p = 1"))
    assert df.count() > 0
