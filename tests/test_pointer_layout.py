"""The layout of stores that cannot rename a directory (S3, GCS, ADLS: versions inside the table, the
live one named by the pointer ``.bucketkit.live``; bucketkit.layout.versions), forced on this disk so
that Spark reaches it: bucketkit.scan, the data source and the SQL catalog read the version the pointer
names, the same rows; a later bucketkit.write finds the layout and keeps it, writing nothing beside the
table; all three refuse, naming it, a file another engine put at the table's top; a SQL INSERT or a
bucketkit.write into a metastore table of this layout publishes the new version in the metastore,
where Spark's own reader (catalog off: Hive's and Trino's way, by the metastore's locations) reads the
same rows. The expected rows are those each commit wrote."""

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
from support.sparkown import catalog_off

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


def locations(spark, name: str) -> set[str]:
    """The table's location and its partitions', as the metastore holds them."""
    out = {spark.sql(f"DESCRIBE TABLE EXTENDED {name}").where("col_name = 'Location'").first()["data_type"]}
    for row in spark.sql(f"SHOW PARTITIONS {name}").collect():
        spec = ", ".join(f"{k}='{v}'" for k, v in (kv.split("=", 1) for kv in row[0].split("/")))
        part = spark.sql(f"DESCRIBE TABLE EXTENDED {name} PARTITION ({spec})").where("col_name = 'Location'").first()
        out.add(part["data_type"].rsplit("/", 1)[0])
    return out


def published_at(spark, root) -> str:
    """The one directory the metastore names for the table and its partitions: its live version's."""
    (where,) = locations(spark, "pointer_t")
    assert where.endswith(live_root(pafs.LocalFileSystem(), str(root))), (where, live_root(pafs.LocalFileSystem(), str(root)))
    return where


def test_a_sql_insert_publishes_its_version_in_the_metastore_for_every_reader(spark, table, tmp_path):
    """A SQL INSERT through the catalog commits inside the table and moves the metastore (table and partitions,
    io.bucketkit.write.MetastorePublish) to the new version: Spark's own reader, through the metastore as Hive and
    Trino read, returns what bucketkit returns; the next commit finds the table from the moved location; a table
    overwrite drops the partitions it removed."""
    spark.sql("INSERT INTO pointer_t PARTITION (p='9') SELECT 99, 'sql'")
    expected = as_counter(ONE) + Counter({("9", 99, "sql"): 1})
    first = published_at(spark, table)
    assert rows(spark.table("pointer_t")) == expected
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == expected  # Spark's own plan reads where the metastore says
    spark.sql("INSERT OVERWRITE TABLE pointer_t PARTITION (p) SELECT 5, 'over', '1'")  # Hive's: partition p=1 only
    assert published_at(spark, table) != first
    after = Counter({k: n for k, n in expected.items() if k[0] != "1"}) + Counter({("1", 5, "over"): 1})
    assert [r[0] for r in spark.sql("SHOW PARTITIONS pointer_t").collect()] == ["p=1", "p=2", "p=9"]
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == after
    assert rows(bucketkit.scan(spark, "pointer_t")) == rows(spark.table("pointer_t")) == after
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # nothing beside the table
    history = bucketkit.history("pointer_t", spark=spark)
    assert [v.operation for v in history][-2:] == ["append", "overwrite partitions"]
    assert rows(spark.sql(f"SELECT * FROM pointer_t VERSION AS OF {history[-2].version}")) == expected


def test_bucketkit_write_to_the_table_publishes_its_version_too(spark, table):
    df = spark.createDataFrame([(k, tag, p[2:]) for p, items in TWO.items() for k, tag in items],
                               "k long, tag string, p string")
    bucketkit.write(df, "k", 4, table="pointer_t", partitioned_by=["p"], mode="append", bucketing_version=2,
                    file_format="parquet")
    published_at(spark, table)
    both = as_counter(ONE) + as_counter(TWO)
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == both
    assert rows(spark.table("pointer_t")) == rows(bucketkit.scan(spark, str(table))) == both
    # a table overwrite: the metastore drops the partitions the new version has not
    bucketkit.write(df.where("p = '3'"), "k", 4, table="pointer_t", partitioned_by=["p"], mode="overwrite",
                    bucketing_version=2, file_format="parquet")
    published_at(spark, table)
    assert [r[0] for r in spark.sql("SHOW PARTITIONS pointer_t").collect()] == ["p=3"]
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == as_counter({"p=3": TWO["p=3"]})


def test_a_write_by_path_moves_the_metastore_table_published_there(spark, table):
    """Once a write by table= (or a SQL INSERT) published the table in the metastore, its pointer names that table,
    and a write by path into the table's directory moves it too: Spark's own reader (the metastore's locations, as
    Hive and Trino read) returns the path write's rows. Before, the path write left the metastore on the version
    before it, with no word said."""
    df = spark.createDataFrame([(k, tag, p[2:]) for p, items in TWO.items() for k, tag in items],
                               "k long, tag string, p string")
    bucketkit.write(df.limit(0), "k", 4, table="pointer_t", partitioned_by=["p"], mode="append", bucketing_version=2,
                    file_format="parquet")  # published: the metastore at the live version
    first = published_at(spark, table)
    write(spark, table, TWO)  # by path
    assert published_at(spark, table) != first
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == as_counter(ONE) + as_counter(TWO)
    assert [r[0] for r in spark.sql("SHOW PARTITIONS pointer_t").collect()] == ["p=1", "p=2", "p=3"]


def test_a_write_by_path_warns_when_the_published_table_is_not_in_this_metastore(spark, table):
    """The pointer names a metastore table this session does not have at the table's versions (dropped, or another
    metastore's): the path write commits, and a warning names the table whose readers still read the old version."""
    from bucketkit.errors import InsideLayoutWarning

    bucketkit.write(spark.range(0).selectExpr("id AS k", "'x' AS tag", "'1' AS p"), "k", 4, table="pointer_t",
                    partitioned_by=["p"], mode="append", bucketing_version=2, file_format="parquet")
    spark.sql("DROP TABLE pointer_t")  # external: the files stay, the pointer still names it
    with pytest.warns(InsideLayoutWarning, match=r"pointer_t.*still.*read the version before"):
        write(spark, table, TWO)
    assert rows(bucketkit.scan(spark, str(table))) == as_counter(ONE) + as_counter(TWO)


def test_the_session_setting_commits_inside_the_table_on_any_store(spark):
    """``spark.bucketkit.commit.layout=inside``: a SQL INSERT into a managed table and a bucketkit.write into it
    commit inside the table on this disk too (nothing beside it in the warehouse), the metastore moved to each
    version, where Spark's own reader finds the rows bucketkit reads; DROP TABLE removes the table's directory;
    a value that is no layout fails the INSERT and the write, naming the setting, and commits nothing."""
    import os

    from bucketkit.errors import InvalidArgumentError
    from bucketkit.writing.commit import LAYOUT_CONF

    def location():
        return spark.sql("DESCRIBE TABLE EXTENDED layout_t").where("col_name = 'Location'").first()[1]

    def counts(session):
        return sorted(tuple(r) for r in session.sql("SELECT v, count(*) FROM layout_t GROUP BY v").collect())

    spark.sql("DROP TABLE IF EXISTS layout_t")
    spark.sql("CREATE TABLE layout_t (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='2')")
    root = location().removeprefix("file:")
    warehouse = os.path.dirname(root)
    spark.conf.set(LAYOUT_CONF, "inside")
    try:
        spark.sql("INSERT INTO layout_t SELECT CAST(id AS INT), 'a' FROM range(20)")
        bucketkit.write(spark.range(20, 30).selectExpr("CAST(id AS INT) AS k", "'b' AS v"), "k", 4, table="layout_t",
                        mode="append")
        assert location().removeprefix("file:").startswith(root + "/.bucketkit.versions/")
        assert [e for e in os.listdir(warehouse) if "layout_t" in e] == ["layout_t"]  # nothing beside the table
        with catalog_off(spark):
            assert counts(spark) == [("a", 20), ("b", 10)]
        assert counts(spark) == [("a", 20), ("b", 10)]
        spark.conf.set(LAYOUT_CONF, "sideways")
        with pytest.raises(Exception, match=r"spark\.bucketkit\.commit\.layout='sideways': expected one of"):
            spark.sql("INSERT INTO layout_t SELECT 1, 'c'")
        with pytest.raises(InvalidArgumentError, match=r"spark\.bucketkit\.commit\.layout='sideways'"):
            bucketkit.write(spark.range(1).selectExpr("CAST(id AS INT) AS k", "'c' AS v"), "k", 4, table="layout_t",
                            mode="append")
        assert counts(spark) == [("a", 20), ("b", 10)]
    finally:
        spark.conf.unset(LAYOUT_CONF)
        spark.sql("DROP TABLE IF EXISTS layout_t")
    assert not os.path.exists(root)  # a managed table: its directory, kept versions and all


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_a_renamed_managed_table_of_this_layout_moves_its_directory_and_frees_the_old_name(spark, partitioned):
    """ALTER TABLE ... RENAME of a managed table whose commits keep their versions inside it: the metastore moves no
    file of a table located below its default path, so bucketkit moves the table's directory (versions, pointer,
    records) with the name, and the table and each partition are located at the same version there. Its rows,
    history and the next INSERT follow the name, read alike with the catalog on and off; the database directory
    lists only the new name; a table created under the old name starts empty. Failed before: the table stayed in the
    old name's directory, and CREATE TABLE of the old name failed (LOCATION_ALREADY_EXISTS)."""
    import os

    from bucketkit.writing.commit import LAYOUT_CONF
    from support.sparkown import rows_of

    def where(table, partition=""):
        described = spark.sql(f"DESCRIBE FORMATTED {table}{partition}").where("col_name = 'Location'")
        return described.first()[1].removeprefix("file:")

    p, by = (", CAST(id % 3 AS STRING)", "PARTITIONED BY (p STRING) ") if partitioned else ("", "")
    for t in ("moved_t", "moved_t2"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    spark.sql(f"CREATE TABLE moved_t (k INT, v STRING) {by}CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
    home = where("moved_t")
    warehouse = os.path.dirname(home)
    spark.conf.set(LAYOUT_CONF, "inside")
    try:
        for tag, n in (("a", 30), ("b", 10)):
            spark.sql(f"INSERT INTO moved_t SELECT CAST(id AS INT), '{tag}'{p} FROM range({n})")
        assert where("moved_t").startswith(home + "/.bucketkit.versions/")
        spark.sql("ALTER TABLE moved_t RENAME TO moved_t2")
        version = os.path.basename(where("moved_t2"))
        assert where("moved_t2") == os.path.join(warehouse, "moved_t2", ".bucketkit.versions", version)
        if partitioned:
            assert where("moved_t2", " PARTITION (p='1')") == os.path.join(where("moved_t2"), "p=1")
        assert sorted(e for e in os.listdir(warehouse) if e.startswith(("moved_t", ".moved_t"))) == ["moved_t2"]
        counts = "SELECT v, count(*) FROM moved_t2 GROUP BY v"
        with catalog_off(spark):
            assert rows_of(spark, counts) == [("a", 30), ("b", 10)]
        assert rows_of(spark, counts) == [("a", 30), ("b", 10)]
        assert [v.operation for v in bucketkit.history("moved_t2", spark=spark)] == ["create", "append"]
        spark.sql(f"INSERT INTO moved_t2 SELECT CAST(id AS INT), 'c'{p} FROM range(5)")
        with catalog_off(spark):
            assert rows_of(spark, counts) == [("a", 30), ("b", 10), ("c", 5)]
        spark.sql("CREATE TABLE moved_t (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
        assert spark.table("moved_t").count() == 0
    finally:
        spark.conf.unset(LAYOUT_CONF)
        for t in ("moved_t", "moved_t2"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")
    assert not os.path.exists(os.path.join(warehouse, "moved_t2"))


def test_a_replaced_table_whose_commits_publish_inside_it_is_dropped_whole(spark):
    """A managed table a REPLACE ... AS SELECT swapped in (located in <table>/.bucketkit.table-<time>) whose next
    INSERT publishes inside it (located at <table>/.bucketkit.table-<time>/.bucketkit.versions/<id>): DROP TABLE
    deletes its default directory whole, the replaced table's versions and pointer included, so the name is free.
    Failed before: only the REPLACE's directory went, and CREATE TABLE of the name failed (LOCATION_ALREADY_EXISTS)."""
    import os

    from bucketkit.writing.commit import LAYOUT_CONF
    from support.sparkown import rows_of

    spark.sql("DROP TABLE IF EXISTS replaced_t")
    spark.sql("CREATE TABLE replaced_t (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
    home = spark.sql("DESCRIBE FORMATTED replaced_t").where("col_name = 'Location'").first()[1].removeprefix("file:")
    spark.conf.set(LAYOUT_CONF, "inside")
    try:
        spark.sql("INSERT INTO replaced_t SELECT CAST(id AS INT), 'a' FROM range(10)")
        spark.sql("CREATE OR REPLACE TABLE replaced_t USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY (k) INTO 4 "
                  "BUCKETS AS SELECT CAST(id AS INT) AS k, 'b' AS v FROM range(6)")
        spark.sql("INSERT INTO replaced_t SELECT CAST(id AS INT), 'c' FROM range(3)")
        where = spark.sql("DESCRIBE FORMATTED replaced_t").where("col_name = 'Location'").first()[1]
        assert "/.bucketkit.table-" in where and "/.bucketkit.versions/" in where
        counts = "SELECT v, count(*) FROM replaced_t GROUP BY v"
        with catalog_off(spark):
            assert rows_of(spark, counts) == [("b", 6), ("c", 3)]
        assert rows_of(spark, counts) == [("b", 6), ("c", 3)]
        spark.sql("DROP TABLE replaced_t")
        assert not os.path.exists(home)
        spark.sql("CREATE TABLE replaced_t (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
        assert spark.table("replaced_t").count() == 0
    finally:
        spark.conf.unset(LAYOUT_CONF)
        spark.sql("DROP TABLE IF EXISTS replaced_t")


def test_a_table_the_metastore_cannot_move_is_refused_inside_before_anything_is_written(spark, tmp_path):
    """A commit inside the table is published by moving the metastore (ALTER TABLE ... SET LOCATION), which Hive
    refuses for a table whose bucket column is spelled with capitals (Spark's own ALTER TABLE fails the same).
    Such a commit is refused before anything is written, for a SQL INSERT and bucketkit.write alike; a table whose
    bucket column is lower case (a sort column need not be) takes rows spelled otherwise. Failed before: the rows were committed, the metastore never
    moved, and Spark's own reader read the table empty."""
    import os

    from bucketkit.errors import CommitError
    from bucketkit.writing.commit import LAYOUT_CONF

    spark.sql("DROP TABLE IF EXISTS caps_t")
    spark.sql("DROP TABLE IF EXISTS lower_t")
    spark.sql(f"CREATE TABLE caps_t (UserId INT, v STRING) CLUSTERED BY (UserId) INTO 4 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path / 'caps_t'}' TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql(f"CREATE TABLE lower_t (userid INT, V STRING) CLUSTERED BY (userid) SORTED BY (V) INTO 4 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path / 'lower_t'}' TBLPROPERTIES ('bucketing_version'='2')")
    rows = spark.range(12).selectExpr("CAST(id AS INT) AS UserId", "'a' AS v")
    spark.conf.set(LAYOUT_CONF, "inside")
    try:
        with pytest.raises(Exception, match=r"caps_t.*\['UserId'\] are spelled with capitals.*Nothing was written"):
            spark.sql("INSERT INTO caps_t SELECT CAST(id AS INT), 'a' FROM range(12)")
        with pytest.raises(CommitError, match=r"caps_t.*\['UserId'\] are spelled with capitals.*Nothing was written"):
            bucketkit.write(rows, "userid", 4, table="caps_t", mode="append")
        assert not os.path.exists(tmp_path / "caps_t") or os.listdir(tmp_path / "caps_t") == []
        bucketkit.write(rows, "UserId", 4, table="lower_t", mode="append")
        with catalog_off(spark):
            assert spark.sql("SELECT count(*) FROM lower_t").first()[0] == 12
    finally:
        spark.conf.unset(LAYOUT_CONF)
    spark.sql("INSERT INTO caps_t SELECT CAST(id AS INT), 'b' FROM range(12)")  # beside the table: nothing to move
    with catalog_off(spark):
        assert spark.sql("SELECT count(*) FROM caps_t").first()[0] == 12


def test_a_metastore_failing_the_publish_is_a_clear_error_and_the_next_write_publishes(spark, table, monkeypatch):
    """The metastore failing after the commit point (unreachable, a refusal): the write's rows are committed, and
    the error says so and what the metastore's readers see until the next bucketkit write publishes, which an append
    of no rows does. It used to be the driver's own error, with nothing said of the committed rows."""
    from bucketkit.errors import CommitError
    from bucketkit.spark import catalog

    df = spark.createDataFrame([(k, tag, p[2:]) for p, items in TWO.items() for k, tag in items],
                               "k long, tag string, p string")
    options = dict(partitioned_by=["p"], mode="append", bucketing_version=2, file_format="parquet")
    publish = catalog.publish
    bucketkit.write(df.limit(0), "k", 4, table="pointer_t", **options)  # the fixture's table, published
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == as_counter(ONE)

    def unreachable(*args):
        raise RuntimeError("Could not connect to meta store using any of the URIs provided")

    monkeypatch.setattr(catalog, "publish", unreachable)
    with pytest.raises(CommitError, match=r"table pointer_t: write \S+ is committed .*could not be updated after it "
                                          r"\(Could not connect to meta store.*see the previous version until"):
        bucketkit.write(df, "k", 4, table="pointer_t", **options)
    both = as_counter(ONE) + as_counter(TWO)
    assert rows(bucketkit.scan(spark, str(table))) == both
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == as_counter(ONE)
    # a vacuum of the table by its name leaves the version the metastore names, older than the live one
    assert [v.operation for v in bucketkit.vacuum("pointer_t", spark=spark, retain=0).kept] == ["append", "append"]
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == as_counter(ONE)
    monkeypatch.setattr(catalog, "publish", publish)
    bucketkit.write(df.limit(0), "k", 4, table="pointer_t", **options)
    with catalog_off(spark):
        assert rows(spark.table("pointer_t")) == both
