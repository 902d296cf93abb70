"""SQL INSERT INTO / OVERWRITE through bucketkit's catalog (io.bucketkit.table.BucketWrite, docs/sql.md).

Golden data never comes from bucketkit's writer: rows are compared with the source query, file
placement of v1 tables with Spark's own Hive INSERT of the same rows, and v2 placement with
``validate`` (whose hashing tests/test_hashing*.py hold equal to Hive's own classes).
"""

from __future__ import annotations

import os
import re
import time

import pytest
from support import background
from support import files as support_files
from support.sparkown import catalog_off, rows_by_bucket, spark_insert

import bucketkit
from bucketkit.io import KEPT_VERSIONS
from bucketkit.writing.commit import RETIRE_GRACE, settle
from bucketkit.layout.naming import bucket_of, is_spark_hive_insert
from bucketkit.spark.catalog import load_table

pytestmark = pytest.mark.spark

SOURCE = """SELECT IF(id % 17 = 0, NULL, CAST((id * 7919) % 1000 AS INT)) AS k, CONCAT('v', CAST(id AS STRING)) AS v,
                   CASE id % 4 WHEN 0 THEN 'a' WHEN 1 THEN 'b/c=d' WHEN 2 THEN 'x y' ELSE NULL END AS p
            FROM range({n})"""


@pytest.fixture(scope="module")
def src(spark):
    spark.sql(SOURCE.format(n=600)).createOrReplaceTempView("sqli_src")
    spark.sql(SOURCE.format(n=90)).selectExpr("k + 5000 AS k", "v", "p").createOrReplaceTempView("sqli_more")
    return "sqli_src"


def create(spark, name, tmp_path, *, version=2, fmt="ORC", buckets=8, partitioned=False, cols="k INT, v STRING",
           clustered="k"):
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} ({cols}) {'PARTITIONED BY (p STRING)' if partitioned else ''} "
              f"CLUSTERED BY ({clustered}) INTO {buckets} BUCKETS STORED AS {fmt} "
              f"LOCATION '{tmp_path / name}' TBLPROPERTIES ('bucketing_version'='{version}')")
    return tmp_path / name


def rows(spark, sql):
    with catalog_off(spark):  # Spark's own unbucketed read of the files
        return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)


def data_files(root):
    """The data files under ``root`` as paths relative to it."""
    return sorted(str(p.relative_to(root)) for p in support_files.data_files(root))


def assert_clean(root):
    """No staging, journal or old version left beside or inside the table (the commit process
    deletes a switched-out version after bucketkit.writing.commit.RETIRE_GRACE, on its own); the
    store of kept versions stays, by design (docs/writing.md, Versions)."""
    settle()
    parent, name = os.path.split(str(root).rstrip("/"))
    deadline = time.time() + 10 * RETIRE_GRACE + 5
    while True:
        left = [x for x in os.listdir(parent) if x.startswith(f".{name}.bucketkit") and not x.endswith(".lock")
                and x != f".{name}{KEPT_VERSIONS}"]
        if not left or time.time() > deadline:
            break
        time.sleep(0.1)
    assert left == []
    assert not any("_attempt" in f or "staging" in f for f in os.listdir(root))


@pytest.mark.parametrize("fmt", ["ORC", "PARQUET"])
def test_insert_into_v2_table_places_every_row_in_its_v2_bucket(spark, src, tmp_path, fmt):
    root = create(spark, f"sqli_v2_{fmt.lower()}", tmp_path, fmt=fmt)
    spark.sql(f"INSERT INTO sqli_v2_{fmt.lower()} SELECT k, v FROM {src}")
    files = data_files(root)
    assert len(files) == 8 and sorted(bucket_of(f) for f in files) == list(range(8))  # one Hive-named file per bucket
    assert all(re.fullmatch(r"00000\d_0_\d{8}_\d{6}_\d{5}_[a-z0-9]{5}\." + fmt.lower(), f) for f in files), files
    checked = bucketkit.validate(load_table(spark, f"sqli_v2_{fmt.lower()}"))
    assert checked.ok and checked.rows_checked == 600 and checked.misplaced_rows == 0
    assert rows(spark, f"SELECT * FROM sqli_v2_{fmt.lower()}") == rows(spark, f"SELECT k, v FROM {src}")
    assert_clean(root)


def test_insert_into_v1_table_places_rows_as_sparks_own_hive_insert(spark, src, tmp_path):
    create(spark, "sqli_v1_spark", tmp_path, version=1)
    root = create(spark, "sqli_v1_ours", tmp_path, version=1)
    spark_insert(spark, f"INSERT INTO sqli_v1_spark SELECT k, v FROM {src}")
    spark.sql(f"INSERT INTO sqli_v1_ours SELECT k, v FROM {src}")
    assert all(not is_spark_hive_insert(f) for f in data_files(root))

    assert rows_by_bucket(spark, "sqli_v1_ours") == rows_by_bucket(spark, "sqli_v1_spark")


def test_append_adds_files_and_overwrite_replaces_the_table(spark, src, tmp_path):
    root = create(spark, "sqli_rw", tmp_path)
    spark.sql(f"INSERT INTO sqli_rw SELECT k, v FROM {src}")
    first = data_files(root)
    spark.sql("INSERT INTO sqli_rw SELECT k, v FROM sqli_more")
    second = data_files(root)
    assert set(first) < set(second) and len(second) > len(first)
    assert rows(spark, "SELECT * FROM sqli_rw") == sorted(rows(spark, f"SELECT k, v FROM {src}")
                                                           + rows(spark, "SELECT k, v FROM sqli_more"), key=repr)
    spark.sql("INSERT OVERWRITE TABLE sqli_rw SELECT k, v FROM sqli_more")
    assert not set(data_files(root)) & set(second)
    assert rows(spark, "SELECT * FROM sqli_rw") == rows(spark, "SELECT k, v FROM sqli_more")
    assert bucketkit.validate(load_table(spark, "sqli_rw")).ok
    assert_clean(root)


def test_partitioned_inserts_follow_hive_semantics(spark, src, tmp_path):
    root = create(spark, "sqli_parts", tmp_path, partitioned=True)
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql(f"INSERT INTO sqli_parts PARTITION (p) SELECT k, v, p FROM {src}")  # dynamic, incl. NULL and 'b/c=d'
    spark.sql("INSERT INTO sqli_parts PARTITION (p='s') SELECT k, v FROM sqli_more")  # static
    expected = rows(spark, f"SELECT k, v, p FROM {src}") + rows(spark, "SELECT k, v, 's' FROM sqli_more")
    assert rows(spark, "SELECT * FROM sqli_parts") == sorted(expected, key=repr)
    shown = sorted(r[0] for r in spark.sql("SHOW PARTITIONS sqli_parts").collect())
    assert shown == ["p=__HIVE_DEFAULT_PARTITION__", "p=a", "p=b%2Fc%3Dd", "p=s", "p=x y"]
    assert bucketkit.validate(load_table(spark, "sqli_parts")).ok
    # dynamic overwrite replaces only the partitions written, whatever partitionOverwriteMode says
    spark.sql("INSERT OVERWRITE TABLE sqli_parts PARTITION (p) SELECT k, v, 'a' FROM sqli_more")
    got = rows(spark, "SELECT * FROM sqli_parts")
    expected = [r for r in expected if r[2] != "a"] + rows(spark, "SELECT k, v, 'a' FROM sqli_more")
    assert got == sorted(expected, key=repr)
    # a static overwrite empties its partition even when the query has no rows (Hive's behaviour)
    spark.sql("INSERT OVERWRITE TABLE sqli_parts PARTITION (p='s') SELECT k, v FROM sqli_more WHERE false")
    assert rows(spark, "SELECT count(*) FROM sqli_parts WHERE p = 's'") == [(0,)]
    assert rows(spark, "SELECT count(*) FROM sqli_parts WHERE p = 'x y'") == rows(
        spark, f"SELECT count(*) FROM {src} WHERE p = 'x y'")
    assert bucketkit.validate(load_table(spark, "sqli_parts")).ok
    assert_clean(root)


def test_a_failing_insert_leaves_the_table_as_it_was(spark, src, tmp_path):
    root = create(spark, "sqli_fail", tmp_path)
    spark.sql(f"INSERT INTO sqli_fail SELECT k, v FROM {src}")
    before = data_files(root)
    with pytest.raises(Exception, match="boom"):
        spark.sql(f"INSERT OVERWRITE TABLE sqli_fail SELECT k, IF(k = 500, raise_error('boom'), v) FROM {src}")
    assert data_files(root) == before
    assert rows(spark, "SELECT * FROM sqli_fail") == rows(spark, f"SELECT k, v FROM {src}")
    assert_clean(root)


def test_sql_insert_into_a_bucketkit_written_table(spark, src, tmp_path):
    spark.sql("DROP TABLE IF EXISTS sqli_bk")
    bucketkit.write(spark.sql(f"SELECT k, v FROM {src}"), "k", 8, table="sqli_bk", bucketing_version=2)
    spark.sql("INSERT INTO sqli_bk SELECT k, v FROM sqli_more")
    table = load_table(spark, "sqli_bk")
    assert bucketkit.validate(table).ok
    assert rows(spark, "SELECT count(*) FROM sqli_bk") == [(690,)]


def _placed_as_hive_places(spark, table, version, types, buckets):
    """Every row of ``table`` (read by Spark's own plan) sits in the file of the bucket Hive's own classes give its
    bucket columns (the first ``len(types)`` columns); returns how many rows were checked."""
    from support.hive_oracle import HiveOracle
    from support.sparkown import spark_rows

    hive = HiveOracle(spark)
    checked = 0
    for r in spark_rows(spark, f"SELECT input_file_name(), * FROM {table}"):
        keys = list(r[1:1 + len(types)])
        expected = hive.v1_bucket(keys, types, buckets) if version == 1 else (hive.v2(keys, types) & 0x7FFFFFFF) % buckets
        assert bucket_of(r[0].rsplit("/", 1)[-1]) == expected, (table, r)
        checked += 1
    return checked


@pytest.mark.parametrize("version,fmt,partitioned", [(2, "ORC", False), (2, "PARQUET", True), (1, "ORC", True),
                                                     (1, "PARQUET", False)])
def test_insert_into_a_table_bucketed_by_several_columns(spark, src, tmp_path, version, fmt, partitioned):
    """CLUSTERED BY (k, v), common in Hive warehouses: bucketkit's INSERT writes it (v2 was refused, v1 left to Spark's
    writer), every row in the file of the bucket Hive's own classes give (k, v), and OVERWRITE replaces it."""
    name = f"sqli_two_v{version}_{fmt.lower()}"
    root = create(spark, name, tmp_path, version=version, fmt=fmt, partitioned=partitioned, clustered="k, v")
    select, more = (f"SELECT k, v, p FROM {src}", "SELECT k, v, p FROM sqli_more") if partitioned else \
        (f"SELECT k, v FROM {src}", "SELECT k, v FROM sqli_more")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql(f"INSERT INTO {name} {select}")
    spark.sql(f"INSERT INTO {name} {more}")
    files = data_files(root)
    assert files and not any(is_spark_hive_insert(f.rsplit("/", 1)[-1]) for f in files), files  # bucketkit's writer
    assert rows(spark, f"SELECT * FROM {name}") == sorted(rows(spark, select) + rows(spark, more), key=repr)
    assert _placed_as_hive_places(spark, name, version, ["int", "string"], 8) == 690
    spark.sql(f"INSERT OVERWRITE TABLE {name} {more}")  # partitioned: the 90 rows hold all four partitions
    assert rows(spark, f"SELECT * FROM {name}") == rows(spark, more)
    assert bucketkit.validate(load_table(spark, name)).ok
    assert_clean(root)


@pytest.mark.parametrize("part", ["`part col`", "`p.x`"])
def test_column_names_with_a_space_or_a_dot_are_one_name_each(spark, tmp_path, part):
    """Hive and Spark take any backticked name. The catalog described its bucket and partition columns to Spark through
    Expressions.bucket/identity, which parse a name: `part col` was a syntax error on every INSERT, and `p.x` a
    nested field (NON_PARTITION_COLUMN). Rows against Spark's own read; placement by validate."""
    name = "sqli_names"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (`User Id` INT, `b.x` STRING, v BIGINT) PARTITIONED BY ({part} STRING) "
              f"CLUSTERED BY (`User Id`, `b.x`) INTO 4 BUCKETS STORED AS PARQUET LOCATION '{tmp_path / name}' "
              "TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    source = "SELECT CAST(id % 40 AS INT), CONCAT('s', id % 3), id, CAST(id % 3 AS STRING) FROM range(300)"
    spark.sql(f"INSERT INTO {name} {source}")
    spark.sql(f"INSERT INTO {name} PARTITION ({part}='z') SELECT CAST(id AS INT), 's1', id FROM range(10)")
    assert rows(spark, f"SELECT * FROM {name}") == sorted(
        rows(spark, source) + rows(spark, "SELECT CAST(id AS INT), 's1', id, 'z' FROM range(10)"), key=repr)
    assert sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {name} WHERE `User Id` = 7 AND `b.x` = 's1'").collect()) \
        == sorted(rows(spark, f"SELECT * FROM {name} WHERE `User Id` = 7 AND `b.x` = 's1'")) != []
    assert bucketkit.validate(load_table(spark, name)).ok
    spark.sql(f"DROP TABLE {name}")


def test_a_v1_table_bucketed_by_a_varchar_and_another_column_is_refused(spark, src, tmp_path):
    """Bucketing v1 hashes a varchar from 1 (Hadoop's Text.hashCode) where Spark's writer hashes a string from 0, and the
    write's function cannot say which of two columns is the varchar: refused, as Spark's own INSERT would misplace."""
    create(spark, "sqli_two_varchar", tmp_path, version=1, cols="k INT, v VARCHAR(20)", clustered="k, v")
    with pytest.raises(Exception, match=r"cannot INSERT into .*sqli_two_varchar.*varchar"):
        spark.sql(f"INSERT INTO sqli_two_varchar SELECT k, v FROM {src}")


def test_open_files_are_bounded_and_extra_files_stay_valid(spark, src, tmp_path):
    root = create(spark, "sqli_bounded", tmp_path, buckets=32)  # several buckets a task: files to close
    spark.conf.set("spark.bucketkit.write.maxOpenFiles", "1")
    try:
        spark.sql(f"INSERT INTO sqli_bounded SELECT k, v FROM {src}")
    finally:
        spark.conf.unset("spark.bucketkit.write.maxOpenFiles")
    files = data_files(root)
    assert len(files) > 32 and any("_copy_" in f for f in files)  # several files per bucket, Hive's copy names
    assert bucketkit.validate(load_table(spark, "sqli_bounded")).ok
    assert rows(spark, "SELECT * FROM sqli_bounded") == rows(spark, f"SELECT k, v FROM {src}")


def test_unpartitioned_insert_routes_each_bucket_to_one_task_in_generated_code(spark, tmp_path):
    """NULL keys included, every bucket's rows reach one task (one file a bucket, no copies), routed by
    generated code (HiveBucketFunction.route over the bucket id), not Spark's row-by-row V2 function call."""
    root = create(spark, "sqli_routed", tmp_path, buckets=16, cols="k BIGINT, v STRING")
    spark.range(3000).selectExpr("CASE WHEN id % 10 = 0 THEN NULL ELSE id * 7919 END AS k",
                                 "CAST(id AS STRING) AS v").createOrReplaceTempView("sqli_routed_src")
    insert = "INSERT INTO sqli_routed SELECT * FROM sqli_routed_src"
    plan = spark.sql(f"EXPLAIN {insert}").first()[0]
    assert "HiveBucketFunction.route(" in plan and "hive_v2_bucket_16_route" not in plan, plan
    spark.sql(insert)
    files = data_files(root)
    assert [int(f.split("_")[0]) for f in files] == list(range(16)) and not any("_copy_" in f for f in files), files
    assert bucketkit.validate(load_table(spark, "sqli_routed")).ok
    assert rows(spark, "SELECT * FROM sqli_routed") == rows(spark, "SELECT * FROM sqli_routed_src")


def test_sorted_by_tables_get_sorted_files(spark, src, tmp_path):
    import pyarrow.orc as orc

    spark.sql("DROP TABLE IF EXISTS sqli_sorted")
    spark.sql(f"CREATE TABLE sqli_sorted (k INT, v STRING) CLUSTERED BY (k) SORTED BY (k) INTO 8 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path / 'sqli_sorted'}' TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql(f"INSERT INTO sqli_sorted SELECT k, v FROM {src}")
    files = data_files(tmp_path / "sqli_sorted")
    assert len(files) == 8
    for f in files:
        keys = orc.read_table(str(tmp_path / "sqli_sorted" / f)).column("k").to_pylist()
        assert keys == sorted(keys, key=lambda x: (x is not None, x)), f  # NULLs first, as Spark's ASC sorts
    assert bucketkit.validate(load_table(spark, "sqli_sorted")).ok


def test_the_commit_python_cannot_be_changed_at_run_time(spark, src, tmp_path):
    """spark.bucketkit.python names a program the driver runs (issue 28): a SQL user of a shared server must not
    choose it. It is a static setting: SET and spark.conf.set are refused, and no marker program ever runs."""
    from pyspark.errors import AnalysisException

    marker, ran = tmp_path / "marker.sh", tmp_path / "ran"
    marker.write_text(f"#!/bin/sh\ntouch {ran}\n")
    marker.chmod(0o755)
    with pytest.raises(AnalysisException, match=r"spark\.bucketkit\.python"):
        spark.sql(f"SET spark.bucketkit.python={marker}")
    with pytest.raises(AnalysisException, match=r"spark\.bucketkit\.python"):
        spark.conf.set("spark.bucketkit.python", str(marker))
    root = create(spark, "sqli_python_static", tmp_path)
    spark.sql(f"INSERT INTO sqli_python_static SELECT k, v FROM {src}")
    assert len(data_files(root)) == 8 and not ran.exists()


def _missing_python_session(tmp_path) -> str:
    """A session of its own whose static setting names no commit program: what its INSERT printed."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import os
        from bucketkit.spark.session import get_session
        spark = get_session("nopython", warehouse={str(tmp_path / "wh")!r},
                            conf={{"spark.bucketkit.python": {str(tmp_path / "no-such-python")!r}}})
        spark.sql("CREATE TABLE t (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
                  "TBLPROPERTIES ('bucketing_version'='2')")
        try:
            spark.sql("INSERT INTO t VALUES (1, 'a')")
            print("NO ERROR")
        except Exception as e:
            print("ERROR", " ".join(str(e).split())[:4000])
        files = [f for d, _, fs in os.walk({str(tmp_path / "wh")!r}) for f in fs if f.endswith(".orc")]
        print("FILES", len(files))
    """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path).stdout


def queue_background(names, tmp_path_factory) -> None:
    """The session of its own runs beside the suite (tests/support/background.py)."""
    if "test_a_missing_commit_python_is_named_and_nothing_is_written" in names:
        background.start("missing_commit_python", _missing_python_session, tmp_path_factory.mktemp("nopython"))


def test_a_missing_commit_python_is_named_and_nothing_is_written(tmp_path_factory):
    """The application's own setting (static) naming no program: the INSERT fails naming it and the setting,
    and writes nothing. A session of its own (the setting cannot change in this one)."""
    out = background.result("missing_commit_python", _missing_python_session, tmp_path_factory.mktemp("nopython"))
    assert re.search(r"ERROR .*starting '.*no-such-python' failed.*spark\.bucketkit\.python", out), out
    assert "FILES 0" in out, out


CRAFTED = ["..", "../..", "../../escape", "/abs/path", "a/../../b", "%2F..%2F..", "x" * 200, ".", "p=..", "c:\\\\x"]


def test_crafted_partition_values_stay_inside_the_table(spark, tmp_path):
    """Issue 28: whatever a partition value says, the commit writes, links, renames and deletes only inside the
    table's own directory (and its sibling staging, gone after the readers' grace). Every value reads back as
    written, as Spark's own plan reads it."""
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    root = tmp_path / "box" / "t"
    spark.sql("DROP TABLE IF EXISTS sqli_crafted")
    spark.sql(f"CREATE TABLE sqli_crafted (k INT, v STRING) PARTITIONED BY (p STRING) CLUSTERED BY (k) INTO 4 BUCKETS "
              f"STORED AS ORC LOCATION '{root}' TBLPROPERTIES ('bucketing_version'='2')")

    def entries():
        return {os.path.relpath(os.path.join(d, f), tmp_path) for d, ds, fs in os.walk(tmp_path) for f in ds + fs}

    before = entries()
    for value in CRAFTED:
        spark.sql(f"INSERT INTO sqli_crafted PARTITION (p) SELECT 1, 'a', '{value}'")
    lock = os.path.join("box", ".t.bucketkit.lock")  # the table's commit lock, beside it by design (docs/writing.md)
    kept = os.path.join("box", ".t" + KEPT_VERSIONS)  # and its kept versions, each a copy of the table's tree

    def outside():
        return sorted(e for e in entries() - before if not e.startswith((os.path.join("box", "t") + os.sep,
                                                                          kept + os.sep))
                      and e not in (os.path.join("box", "t"), lock, kept))

    deadline = time.monotonic() + RETIRE_GRACE + 10  # switched-out versions (beside the table) go after their grace
    while outside() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert outside() == []
    rows = sorted(r.p for r in spark.sql("SELECT p FROM sqli_crafted").collect())
    with catalog_off(spark):
        assert rows == sorted(r.p for r in spark.sql("SELECT p FROM sqli_crafted").collect())
    assert len(rows) == len(CRAFTED) and "../../escape" in rows and "/abs/path" in rows
    spark.sql("DROP TABLE IF EXISTS sqli_crafted")


@pytest.mark.parametrize("source,target,moves", [
    ((8, 2, "k INT"), (8, 2, "k INT"), False),       # alike: the source's buckets are the target's
    ((8, 2, "k INT"), (16, 2, "k INT"), False),      # 8 into 16: each target bucket within one source bucket
    ((16, 2, "k INT"), (8, 2, "k INT"), False),      # 16 into 8: the small source reads hash % 2 per task
    ((3, 2, "k INT"), (8, 2, "k INT"), True),        # 3 into 8: a task holds hash % 3 (or all): not whole buckets
    ((8, 1, "k INT"), (8, 2, "k INT"), True),        # v1 into v2: another hash
    ((8, 2, "k INT"), (8, 2, "k BIGINT"), True),     # INT into BIGINT: v2 hashes them differently
    ((4, 2, "k INT"), (12, 2, "k INT"), False),      # 4 into 12
], ids=["8 into 8", "8 into 16", "16 into 8", "3 into 8", "v1 into v2", "int into bigint", "4 into 12"])
def test_a_copy_between_tables_bucketed_alike_moves_no_rows(spark, src, tmp_path, source, target, moves):
    """INSERT ... SELECT from a table whose tasks already hold the target's buckets drops Spark's shuffle
    (io.bucketkit.rules.WriteFromAlikeBuckets); every row still lands in its bucket, one file per bucket."""
    (sb, sv, scol), (tb, tv, tcol) = source, target
    create(spark, "sqli_from", tmp_path, buckets=sb, version=sv, cols=f"{scol}, v STRING")
    spark.sql(f"INSERT INTO sqli_from SELECT k, v FROM {src}")
    root = create(spark, "sqli_to", tmp_path, buckets=tb, version=tv, cols=f"{tcol}, v STRING")
    insert = "INSERT OVERWRITE TABLE sqli_to SELECT k, v FROM sqli_from"
    plan = spark.sql(f"EXPLAIN {insert}").first()[0]
    assert ("Exchange" in plan) == moves, plan
    spark.sql(insert)
    assert rows(spark, "SELECT k, v FROM sqli_to") == rows(spark, f"SELECT k, v FROM {src}")
    assert bucketkit.validate(load_table(spark, "sqli_to")).ok
    buckets = [bucket_of(f) for f in data_files(root)]
    assert len(buckets) == len(set(buckets)), buckets  # one file per bucket, as with the shuffle


def test_a_copy_of_ungrouped_buckets_into_fewer_keeps_its_shuffle(spark, src, tmp_path):
    create(spark, "sqli_from", tmp_path, buckets=16)
    spark.sql(f"INSERT INTO sqli_from SELECT k, v FROM {src}")
    create(spark, "sqli_to", tmp_path)
    spark.conf.set("spark.bucketkit.groupBuckets", "false")  # one task per source bucket: two per target bucket
    try:
        assert "Exchange" in spark.sql("EXPLAIN INSERT INTO sqli_to SELECT * FROM sqli_from").first()[0]
    finally:
        spark.conf.unset("spark.bucketkit.groupBuckets")


def test_a_copy_keeps_its_shuffle_when_switched_off(spark, src, tmp_path):
    create(spark, "sqli_from", tmp_path)
    create(spark, "sqli_to", tmp_path)
    spark.conf.set("spark.bucketkit.writeFromAlikeBuckets", "false")
    try:
        assert "Exchange" in spark.sql("EXPLAIN INSERT INTO sqli_to SELECT * FROM sqli_from").first()[0]
    finally:
        spark.conf.unset("spark.bucketkit.writeFromAlikeBuckets")


def test_a_table_whose_columns_are_spelled_in_mixed_case_takes_inserts_as_spark_places_them(spark, src, tmp_path):
    """Spark keeps a Hive table's columns as its DDL spelled them; the metastore keeps CLUSTERED BY and SORTED BY lower
    case. Both name the same column (Hive, Trino and Spark are case-insensitive). Failed before: the commit refused
    'column(s) ['userid'] are not among the table's columns ['UserId', 'Val']' and no INSERT ran."""
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    for name in ("sqli_case", "sqli_case_spark"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} (UserId INT, Val STRING, Dt STRING) PARTITIONED BY (Dt) CLUSTERED BY (UserId) "
                  f"SORTED BY (Val) INTO 4 BUCKETS STORED AS ORC LOCATION '{tmp_path / name}'")
    query = f"SELECT k, v, CASE WHEN k % 2 = 0 THEN 'd1' ELSE 'd2' END FROM {src} WHERE k IS NOT NULL"
    spark.sql(f"INSERT INTO sqli_case {query}")
    spark_insert(spark, f"INSERT INTO sqli_case_spark {query}")
    assert rows_by_bucket(spark, "sqli_case") == rows_by_bucket(spark, "sqli_case_spark")  # Spark's own v1 placement
    assert all(not is_spark_hive_insert(f) for f in data_files(tmp_path / "sqli_case"))
    spark.sql("INSERT OVERWRITE sqli_case PARTITION (dt='d1') SELECT userid + 1, 'w' FROM sqli_case_spark "
              "WHERE DT = 'd2'")
    assert rows(spark, "SELECT * FROM sqli_case") == rows(
        spark, "SELECT * FROM sqli_case_spark WHERE Dt = 'd2' UNION ALL "
               "SELECT UserId + 1, 'w', 'd1' FROM sqli_case_spark WHERE Dt = 'd2'")
    table = load_table(spark, "sqli_case")
    assert table.spec.bucketed_by == ("UserId",) and [k.column for k in table.spec.sorted_by] == ["Val"]
    assert bucketkit.validate(table).ok
    plan = spark.sql("SELECT * FROM sqli_case WHERE userid = 7")._jdf.queryExecution().executedPlan().toString()
    assert "buckets=1 of 4" in plan


def test_insert_overwrite_if_not_exists_skips_a_partition_that_exists_as_hive_does(spark, src, tmp_path):
    """``INSERT OVERWRITE t PARTITION (p='x') IF NOT EXISTS``: Hive's meaning, and Spark's own Hive INSERT's (the golden
    twin, catalog off): rows are written only where the partition is missing. Failed before: the catalog's DSv2 insert
    refused the statement (UNSUPPORTED_FEATURE.INSERT_PARTITION_SPEC_IF_NOT_EXISTS)."""
    create(spark, "sqli_ine", tmp_path, partitioned=True)
    create(spark, "sqli_ine_spark", tmp_path, partitioned=True, version=1)
    statements = [f"INSERT OVERWRITE TABLE {{t}} PARTITION (p='x') IF NOT EXISTS SELECT k, v FROM {src}",
                  "INSERT OVERWRITE TABLE {t} PARTITION (p='x') IF NOT EXISTS SELECT k, 'again' FROM sqli_more",
                  "INSERT OVERWRITE TABLE {t} PARTITION (P='y') IF NOT EXISTS SELECT k, 'y' FROM sqli_more"]
    for statement in statements:
        spark.sql(statement.format(t="sqli_ine"))
        spark_insert(spark, statement.format(t="sqli_ine_spark"))
        assert rows(spark, "SELECT * FROM sqli_ine") == rows(spark, "SELECT * FROM sqli_ine_spark")
    assert rows(spark, "SELECT p, count(*) FROM sqli_ine GROUP BY p") == [("x", 600), ("y", 90)]
    assert bucketkit.validate(load_table(spark, "sqli_ine")).ok


def test_an_empty_static_partition_value_is_refused_as_sparks_hive_insert_refuses_it(spark, src, tmp_path):
    """``PARTITION (p='')``: Spark's own Hive INSERT (the golden twin, catalog off) refuses it with INVALID_PARTITION_SPEC,
    as Hive does, and so does the catalog, leaving the table as it was; NULL as a static value and '' or NULL from the
    query into a dynamic partition go to the NULL partition in both. Failed before: the catalog's DSv2 insert put the
    rows into the NULL partition, and INSERT OVERWRITE ... PARTITION (p='') replaced that partition's rows."""
    create(spark, "sqli_empty", tmp_path, partitioned=True)
    create(spark, "sqli_empty_spark", tmp_path, partitioned=True, version=1)
    refused = ["INSERT INTO {t} PARTITION (p='') SELECT k, v FROM sqli_more",
               "INSERT OVERWRITE TABLE {t} PARTITION (p='') SELECT k, v FROM sqli_more",
               "INSERT OVERWRITE TABLE {t} PARTITION (p='') IF NOT EXISTS SELECT k, v FROM sqli_more"]
    accepted = [f"INSERT INTO {{t}} SELECT k, v, p FROM {src}",
                "INSERT INTO {t} PARTITION (p=NULL) SELECT k, v FROM sqli_more WHERE k % 2 = 0",
                "INSERT INTO {t} PARTITION (p) SELECT k, v, IF(k % 3 = 0, '', NULL) FROM sqli_more"]
    for statement in accepted[:1] + refused + accepted[1:]:
        expected = None
        try:
            spark_insert(spark, statement.format(t="sqli_empty_spark"))
        except Exception as e:  # noqa: BLE001 - Spark's own answer is the golden value, whatever its type
            expected = e
        if expected is None:
            spark.sql(statement.format(t="sqli_empty"))
        else:
            assert "INVALID_PARTITION_SPEC" in str(expected) and "empty partition column value" in str(expected)
            with pytest.raises(type(expected), match=r"INVALID_PARTITION_SPEC.*\[p=Some\(\)\]\) contains an empty"):
                spark.sql(statement.format(t="sqli_empty"))
    assert rows(spark, "SELECT * FROM sqli_empty") == rows(spark, "SELECT * FROM sqli_empty_spark")
    assert rows(spark, "SELECT count(*) FROM sqli_empty WHERE p IS NULL")[0][0] > 150  # src's NULLs and the later rows
    assert bucketkit.validate(load_table(spark, "sqli_empty")).ok


ROW_LEVEL = ["DELETE FROM {t} WHERE v = 'v1'", "DELETE FROM {t}", "UPDATE {t} SET v = 'u' WHERE k = 7",
             "MERGE INTO {t} AS x USING (SELECT 7 AS k) s ON x.k = s.k WHEN MATCHED THEN DELETE",
             "MERGE INTO {t} x USING (SELECT {cols} FROM sqli_more) s ON x.k = s.k WHEN NOT MATCHED THEN INSERT *"]


@pytest.mark.parametrize("partitioned", [True, False])
def test_delete_update_and_merge_are_refused_as_spark_refuses_them_naming_what_does_the_job(spark, src, tmp_path,
                                                                                          partitioned):
    """DELETE, UPDATE and MERGE into a Hive bucketed table that is not transactional: Spark's own plan (catalog off)
    refuses each, and so does the catalog, saying which statement, which table, and what removes rows instead. Failed
    before: the catalog's message was "does not support batch scan", about something else."""
    create(spark, "sqli_rl", tmp_path, partitioned=partitioned, version=1)
    cols = "k, v, p" if partitioned else "k, v"
    spark.sql(f"INSERT INTO sqli_rl SELECT {cols} FROM {src}")
    before = rows(spark, "SELECT * FROM sqli_rl")
    for statement in ROW_LEVEL:
        with catalog_off(spark), pytest.raises(Exception, match="does not support"):
            spark.sql(statement.format(t="sqli_rl", cols=cols))
        with pytest.raises(Exception) as refused:
            spark.sql(statement.format(t="sqli_rl", cols=cols))
        message = str(refused.value)
        verb = statement.split(" {t}")[0]
        assert f"bucketkit: {verb} spark_catalog.default.sqli_rl: the table does not support {verb}." in message
        assert "INSERT OVERWRITE spark_catalog.default.sqli_rl" in message
        assert ("DROP PARTITION" in message) == partitioned
        assert "batch scan" not in message
    assert rows(spark, "SELECT * FROM sqli_rl") == before
