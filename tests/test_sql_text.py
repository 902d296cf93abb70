"""Hive TEXTFILE bucketed tables (Hive's default format) through bucketkit's catalog (issue 20).

Read bucketed — shuffle-free joins of N and kN buckets, bucket pruning — with rows equal to Spark's
own Hive reader of the same table (the catalog off), because the files are read by the table's own
serde (``LazySimpleSerDe``) through Spark's ``HadoopTableReader.fillObject``. Hive's own test files
(``auto_sortmerge_join``, in ../shared) give Hive's stated answer: ``auto_sortmerge_join_5.q.out``
counts 19 rows for the join of the 4-bucket small table with the 2-bucket big one.
"""

from __future__ import annotations

import shutil

import pytest
from support.sparkown import catalog_off, final_plan, rows_of, scans, spark_rows

import bucketkit
from support.engine import engine, needs_engine

pytestmark = pytest.mark.spark


@pytest.fixture()
def hive_tables(spark, tmp_path):
    """auto_sortmerge_join_5.q's tables: small = small/000000_0..000003_0 in 4 buckets, big = big/000000_0 and
    000001_0 in 2 buckets, both CLUSTERED BY (key) SORTED BY (key), TEXTFILE, bucketing v1."""
    for name, files, buckets in (("txt_small", [f"small/00000{i}_0" for i in range(4)], 4),
                                 ("txt_big", ["big/000000_0", "big/000001_0"], 2)):
        root = tmp_path / name
        root.mkdir()
        for f in files:
            shutil.copy(engine(f"hive/auto_sortmerge_join/{f}"), root / f.split("/")[1])
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE EXTERNAL TABLE {name} (key string, value string) CLUSTERED BY (key) SORTED BY (key) "
                  f"INTO {buckets} BUCKETS STORED AS TEXTFILE LOCATION '{root}' TBLPROPERTIES ('bucketing_version'='1')")
    yield
    for name in ("txt_small", "txt_big"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@needs_engine
def test_hives_sortmerge_join_files_join_without_an_exchange(spark, hive_tables):
    sql = "SELECT count(*) FROM txt_small a JOIN txt_big b ON a.key = b.key"
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        assert spark.sql(sql).first()[0] == 19  # auto_sortmerge_join_5.q.out
        assert spark_rows(spark, sql) == [(19,)]
        df = spark.sql(sql)
        df.collect()
        plan = final_plan(df)
        assert "Exchange hashpartitioning" not in plan, plan
        assert len(scans(plan)) == 2 and all("text" in s for s in scans(plan)), plan
        pairs = "SELECT a.key, a.value, b.value FROM txt_small a JOIN txt_big b ON a.key = b.key"
        assert rows_of(spark, pairs) == spark_rows(spark, pairs)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)
    assert bucketkit.sql_status(spark, "txt_big").bucketed


@needs_engine
def test_text_tables_read_as_sparks_hive_reader_reads_them(spark, hive_tables):
    for sql in ("SELECT * FROM txt_big", "SELECT value, key FROM txt_small", "SELECT count(*) FROM txt_big",
                "SELECT key, count(*) FROM txt_big GROUP BY key", "SELECT * FROM txt_big WHERE key = '100'"):
        assert rows_of(spark, sql) == spark_rows(spark, sql), sql
    (scan,) = [s for s in scans(final_plan(spark.sql("SELECT * FROM txt_big WHERE key = '100'")))]
    assert "buckets=1 of 2" in scan, scan


def test_lazy_simple_serde_values_read_as_spark_reads_them(spark, tmp_path):
    """Escapes, \\N NULLs, malformed numbers (NULL), custom delimiters, every type: the serde's answer."""
    root = tmp_path / "typed"
    spark.sql("DROP TABLE IF EXISTS txt_typed")
    spark.sql(f"CREATE TABLE txt_typed (k int, b boolean, d double, s string, dt date, a array<int>) "
              f"CLUSTERED BY (k) INTO 2 BUCKETS ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' ESCAPED BY '\\\\' "
              f"COLLECTION ITEMS TERMINATED BY ',' STORED AS TEXTFILE LOCATION '{root}'")
    try:
        with catalog_off(spark):  # Spark's own Hive writer (v1, one file per bucket) writes the files
            spark.sql("INSERT INTO txt_typed VALUES (1, true, 1.5, 'a|b', DATE'2020-01-02', array(1, 2)), "
                      "(2, false, -0.0, NULL, NULL, NULL), (NULL, NULL, NULL, 'x\\\\y', DATE'1970-01-01', array()), "
                      "(3, true, 1e300, '', DATE'2999-12-31', array(NULL, 3))")
        (root / "000000_0_copy_9").write_text("oops|maybe|nan|\\N|2020-13-45|x,y\n4|TRUE|  7|t\\|u|2020-02-29|5\n")
        for sql in ("SELECT * FROM txt_typed", "SELECT k, s FROM txt_typed WHERE k = 4", "SELECT count(*) FROM txt_typed"):
            assert rows_of(spark, sql) == spark_rows(spark, sql), sql
    finally:
        spark.sql("DROP TABLE IF EXISTS txt_typed")


def _hive_bucket(hive, key, hive_type: str, version: int, buckets: int) -> int:
    """The bucket Hive's own classes give ``key`` (ObjectInspectorUtils for v1, its Murmur3 for v2)."""
    if version == 1:
        return hive.v1_bucket([key], [hive_type], buckets)
    return (hive.v2([key], [hive_type]) & 0x7FFFFFFF) % buckets


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_inserts_into_a_text_table_are_placed_by_hives_hash_and_read_as_spark_reads_them(spark, tmp_path, version,
                                                                                       partitioned):
    """bucketkit's INSERT writes TEXTFILE tables (Spark's own Hive writer with the table's serde: LazySimpleSerDe's
    delimiters, escapes and \\N NULLs), one file per bucket placed by the table's own bucketing_version, committed
    as its ORC and Parquet INSERTs are (a v2 text table was refused, and Spark's own writer hashes v1 only). Golden:
    Spark's own Hive reader of the files (catalog off) and Hive's own hash classes for each row's bucket."""
    from support.hive_oracle import HiveOracle
    from support.sparkown import rows_by_bucket

    name = f"txt_w{version}_{int(partitioned)}"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (k int, v string, s varchar(10){', d string' if partitioned else ''}) "
              f"{'PARTITIONED BY (d) ' if partitioned else ''}CLUSTERED BY (k) INTO 4 BUCKETS STORED AS TEXTFILE "
              f"LOCATION '{tmp_path / name}' TBLPROPERTIES ('bucketing_version'='{version}')")
    rows = "CAST(id AS INT), CONCAT('v', id, '|\\t,x\\\\'), CAST(id AS STRING)" + (", CAST(id % 3 AS STRING)" if partitioned else "")
    try:
        spark.sql(f"INSERT INTO {name} SELECT {rows} FROM range(60) UNION ALL SELECT NULL, NULL, NULL"
                  + (", NULL" if partitioned else ""))
        spark.sql(f"INSERT INTO {name} SELECT {rows} FROM range(60, 70)")
        def golden(sql):  # Spark's Hive text reader gives a NULL partition value as its directory name; Hive, Trino
            # and Spark's own ORC/Parquet reads of the same table give NULL, as bucketkit's read does
            return sorted((tuple(None if c == "__HIVE_DEFAULT_PARTITION__" else c for c in r)
                           for r in spark_rows(spark, sql)), key=repr)

        for sql in (f"SELECT * FROM {name}", f"SELECT * FROM {name} WHERE k = 7", f"SELECT count(*), max(v) FROM {name}"):
            assert rows_of(spark, sql) == golden(sql), sql
        assert len(golden(f"SELECT * FROM {name}")) == 71
        df = spark.sql(f"SELECT * FROM {name} WHERE k = 7")
        df.collect()
        (scan,) = scans(final_plan(df))
        assert "buckets=1 of 4" in scan and "placement vouched" in scan, scan
        hive = HiveOracle(spark)
        placed = rows_by_bucket(spark, name)
        assert sum(map(len, placed.values())) == 71
        assert all(_hive_bucket(hive, r[0], "int", version, 4) == b for b, found in placed.items() for r in found)
        spark.sql(f"INSERT OVERWRITE {name} SELECT {rows} FROM range(5)")
        # the NULL row's partition (partitioned) is not one the overwrite writes: it stays, as in Hive
        assert sorted(r[0] for r in spark_rows(spark, f"SELECT k FROM {name}") if r[0] is not None) == [0, 1, 2, 3, 4]
        # its versions are bucketkit's as any table's: history lists the three commits, vacuum frees the old ones
        assert [v.operation for v in bucketkit.history(name, spark=spark)] == [
            "create", "append", "overwrite partitions" if partitioned else "overwrite"]
        assert len(bucketkit.vacuum(name, spark=spark, retain=0).removed) == 2
        assert len(spark_rows(spark, f"SELECT * FROM {name}")) == 5 + partitioned
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_text_table_bucketed_by_a_varchar_is_placed_by_hives_varchar_hash(spark, tmp_path):
    """Spark's own Hive writer hashes a VARCHAR key as a STRING (tests/support/plain.py pins it in a session without
    bucketkit), Hive and Trino hash it from 1: its INSERT into a v1 TEXTFILE table wrote rows every later pruned read
    missed. bucketkit writes the table with Hive's varchar hash; with the catalog off Spark's write is refused,
    naming the column, and nothing is written."""
    from support.hive_oracle import HiveOracle
    from support.sparkown import rows_by_bucket

    root = tmp_path / "vc"
    spark.sql("DROP TABLE IF EXISTS txt_varchar")
    spark.sql(f"CREATE TABLE txt_varchar (k varchar(10), v bigint) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS TEXTFILE "
              f"LOCATION '{root}' TBLPROPERTIES ('bucketing_version'='1')")
    try:
        insert = "INSERT INTO txt_varchar SELECT CAST(CONCAT('v', id) AS VARCHAR(10)), id FROM range(60)"
        with catalog_off(spark):
            with pytest.raises(Exception, match=r"INSERT into \S*txt_varchar .*bucket column k \(varchar\(10\)\).*from 1"):
                spark.sql(insert)
        assert not [p for p in root.rglob("*") if p.is_file()] if root.exists() else True
        spark.sql(insert)
        hive = HiveOracle(spark)
        placed = rows_by_bucket(spark, "txt_varchar")
        assert sum(map(len, placed.values())) == 60
        assert all(hive.v1_bucket([k], ["varchar(10)"], 8) == b for b, found in placed.items() for k, _ in found)
        assert rows_of(spark, "SELECT * FROM txt_varchar WHERE k = 'v5'") == [("v5", 5)]
    finally:
        spark.sql("DROP TABLE IF EXISTS txt_varchar")


@needs_engine
def test_bucketkit_scan_reads_a_text_table_as_sql_does(spark, hive_tables):
    """One behaviour for one table: bucketkit.scan of a TEXTFILE catalog table is the catalog's read (pruned)."""
    df = bucketkit.scan(spark, "txt_big", filters=[("key", "=", "100")], columns=["value"])
    assert sorted(tuple(r) for r in df.collect()) == [tuple(r[1:]) for r in spark_rows(spark, "SELECT key, value "
                                                                                        "FROM txt_big WHERE key = '100'")]
    (scan,) = scans(final_plan(df))
    assert "buckets=1 of 2" in scan, scan
    assert sorted(tuple(r) for r in bucketkit.scan(spark, "txt_small", filters="key > '2'").collect()) == \
        spark_rows(spark, "SELECT * FROM txt_small WHERE key > '2'")
    with pytest.raises(bucketkit.InvalidArgumentError, match="TEXTFILE.*bucketkit.scan"):
        bucketkit.plan_scan("txt_big", spark=spark)


def test_input_file_name_of_a_text_table_is_sparks(spark, tmp_path):
    """bucketkit's text reader names the file it reads as Spark's own readers do (InputFileBlockHolder):
    ``input_file_name()`` gave '' through the catalog, and the check of each row's bucket, which finds the file
    there, checked nothing (tests/test_sql_metadata.py's TEXTFILE tables)."""
    spark.sql("DROP TABLE IF EXISTS txt_files")
    spark.sql(f"CREATE TABLE txt_files (k int, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS TEXTFILE "
              f"LOCATION '{tmp_path / 'files'}'")
    try:
        with catalog_off(spark):  # Spark's own Hive writer: a v1 int key, placed as Hive places it
            spark.sql("INSERT INTO txt_files SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(40)")
        for sql in ("SELECT input_file_name(), k FROM txt_files", "SELECT input_file_name(), v FROM txt_files WHERE k = 7"):
            got = rows_of(spark, sql)
            assert got == spark_rows(spark, sql) and all(r[0].startswith("file:") for r in got), got
    finally:
        spark.sql("DROP TABLE IF EXISTS txt_files")


def test_a_truncated_partition_of_a_text_table_stays_readable_by_spark_after_later_inserts(spark):
    """TRUNCATE TABLE t PARTITION (d='1') leaves the partition registered with an empty directory; bucketkit's next
    commit built the new version from files only, so the directory vanished and Spark's own Hive text reader failed
    every read of the table ("Input path does not exist"). Same for ALTER TABLE ... ADD PARTITION."""
    spark.sql("DROP TABLE IF EXISTS txt_trunc")
    spark.sql("CREATE TABLE txt_trunc (k int, v string) PARTITIONED BY (d string) CLUSTERED BY (k) INTO 4 BUCKETS "
              "STORED AS TEXTFILE")  # managed: TRUNCATE takes no external table
    try:
        spark.sql("INSERT INTO txt_trunc SELECT CAST(id AS INT), CAST(id AS STRING), CAST(id % 3 AS STRING) FROM range(30)")
        spark.sql("TRUNCATE TABLE txt_trunc PARTITION (d='1')")
        spark.sql("ALTER TABLE txt_trunc ADD PARTITION (d='9')")
        spark.sql("INSERT INTO txt_trunc SELECT 100, 'x', '2'")
        for sql in ("SELECT * FROM txt_trunc", "SELECT * FROM txt_trunc WHERE k = 100"):
            assert rows_of(spark, sql) == spark_rows(spark, sql), sql
        assert len(spark_rows(spark, "SELECT * FROM txt_trunc")) == 21
    finally:
        spark.sql("DROP TABLE IF EXISTS txt_trunc")
