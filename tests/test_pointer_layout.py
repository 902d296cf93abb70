"""The layout of stores that cannot rename a directory (S3, GCS, ADLS: versions inside the table, the
live one named by the pointer ``.bucketkit.live``; bucketkit.layout.versions), forced on this disk so
that Spark reaches it: bucketkit.scan, the data source and the SQL catalog read the version the pointer
names, the same rows; a later bucketkit.write finds the layout and keeps it, writing nothing beside the
table; all three refuse, naming it, a file another engine put at the table's top; a SQL INSERT into a
metastore table of this layout is refused before anything is written (the metastore would keep naming
the old files). The expected rows are those each commit wrote."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pyarrow.fs as pafs
import pytest

import bucketkit
from bucketkit.errors import CorruptTableError
from bucketkit.layout.versions import TablePaths, live_root
from support.commit import as_counter, commit_rows

ONE = {"p=1": [(k, "one") for k in range(10)], "p=2": [(k, "one") for k in range(10, 14)]}
TWO = {"p=1": [(k, "two") for k in range(20, 23)], "p=3": [(k, "two") for k in range(30, 32)]}


def rows(df) -> Counter:
    return Counter((str(r["p"]), r["k"], r["tag"]) for r in df.collect())


def write(spark, root, data: dict) -> None:
    """bucketkit.write of ``data``'s rows, appended (Hive's v2 placement)."""
    df = spark.createDataFrame([(k, tag, p[2:]) for p, items in data.items() for k, tag in items],
                               "k long, tag string, p string")
    bucketkit.write(df, "k", 4, path=str(root), partitioned_by=["p"], mode="append", bucketing_version=2,
                    file_format="parquet")


@pytest.fixture
def table(spark, tmp_path):
    """A partitioned table (4 buckets by k bigint, Parquet) created inside its directory on this disk (a commit
    of no rows with the layout forced), then written by bucketkit.write, registered in the metastore there."""
    root = tmp_path / "t"
    commit_rows(root, {}, layout="inside")
    write(spark, root, ONE)
    spark.sql("DROP TABLE IF EXISTS pointer_t")
    spark.sql(f"CREATE TABLE pointer_t (k BIGINT, tag STRING) PARTITIONED BY (p STRING) CLUSTERED BY (k) "
              f"INTO 4 BUCKETS STORED AS PARQUET LOCATION '{root}' TBLPROPERTIES ('bucketing_version'='2')")
    yield root
    spark.sql("DROP TABLE IF EXISTS pointer_t")


def test_scan_the_data_source_and_sql_read_the_version_the_pointer_names(spark, table):
    assert TablePaths.at(pafs.LocalFileSystem(), str(table)).inside
    assert [p.name for p in table.iterdir() if not p.name.startswith(".")] == []  # a plain reader sees no file
    expected = as_counter(ONE)
    assert rows(bucketkit.scan(spark, str(table))) == expected
    assert rows(spark.read.format("bucketkit").load(str(table))) == expected
    assert rows(spark.table("pointer_t")) == expected
    assert bucketkit.sql_status(spark, "pointer_t").bucketed
    lookup = spark.sql("SELECT * FROM pointer_t WHERE k = 3")
    assert rows(lookup) == Counter({("1", 3, "one"): 1})
    grouped = spark.sql("SELECT k, count(*) FROM pointer_t GROUP BY k")
    assert sorted(tuple(r) for r in grouped.collect()) == sorted((k, 1) for _, k, _ in expected)
    assert "Exchange" not in grouped._jdf.queryExecution().executedPlan().toString()


def test_a_later_write_keeps_the_layout_and_time_travel_reads_each_version(spark, table, tmp_path):
    write(spark, table, TWO)
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # nothing beside the table
    assert live_root(pafs.LocalFileSystem(), str(table)) != str(table)
    both = as_counter(ONE) + as_counter(TWO)
    assert rows(bucketkit.scan(spark, str(table))) == rows(spark.table("pointer_t")) == both
    assert rows(spark.sql("SELECT * FROM pointer_t VERSION AS OF 1")) == as_counter(ONE)  # 0: the empty create
    assert rows(bucketkit.scan(spark, str(table), as_of=1)) == as_counter(ONE)
    assert rows(spark.sql("SELECT * FROM pointer_t VERSION AS OF 0")) == Counter()


def test_a_file_another_engine_put_at_the_top_is_refused_by_every_reader(spark, table):
    stray = table / "p=2" / "000001_0_copy_1"
    stray.parent.mkdir()
    live = Path(live_root(pafs.LocalFileSystem(), str(table))) / "p=2"
    shutil.copy(next(f for f in live.iterdir() if not f.name.startswith(".")), stray)
    with pytest.raises(CorruptTableError, match=r"p=2/000001_0_copy_1 were written into the table directory"):
        bucketkit.scan(spark, str(table))
    with pytest.raises(Exception, match=r"p=2/000001_0_copy_1 were written into the table directory"):
        spark.table("pointer_t").collect()


def test_a_sql_insert_into_a_metastore_table_of_this_layout_is_refused(spark, table):
    with pytest.raises(Exception, match=r"(?s)table \S*pointer_t .*cannot rename a directory.*SET LOCATION.*nothing was written"):
        spark.sql("INSERT INTO pointer_t PARTITION (p='9') SELECT 99, 'sql'")
    assert rows(spark.table("pointer_t")) == as_counter(ONE)
