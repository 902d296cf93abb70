"""Spark SQL through bucketkit's catalog (io.bucketkit.spark.BucketkitCatalog, docs/sql.md).

Tables are written by Spark's own Hive INSERT and by ``bucketkit.write``; every result is compared
with the same query planned by Spark itself with the catalog switched off
(``spark.bucketkit.catalog.enabled=false``: Spark reads its own Hive table, with its shuffles), so
golden rows never come from bucketkit. Plans are Spark's executed plans (after AQE).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bucketkit
from bucketkit.errors import BucketCountMismatchError, CorruptTableError
from bucketkit.layout.naming import bucket_of, is_spark_hive_insert
from support.sparkown import (SWITCH, catalog_off, no_broadcast, rows_of, scans, spark_insert,
                              spark_insert_into_v2, spark_rows, unbucketed_scans)

ROWS = 400  # keys 0..59 and NULLs, several rows per key


def run(spark, sql):
    """(sorted rows, executed plan text) of a query, and the same rows planned by Spark alone."""
    with no_broadcast(spark):
        df = spark.sql(sql)
        rows = sorted(df.collect(), key=repr)
        plan = df._jdf.queryExecution().executedPlan().toString()
        with catalog_off(spark):
            golden_df = spark.sql(sql)
            golden = sorted(golden_df.collect(), key=repr)
            golden_plan = golden_df._jdf.queryExecution().executedPlan().toString()
    return rows, plan, golden, golden_plan


def source_rows(spark, salt):
    return spark.sql(f"""
        SELECT IF(id % 13 = 0, NULL, CAST((id * {salt}) % 60 AS INT)) AS k,
               CONCAT('v', CAST(id AS STRING)) AS v, CAST(id % 2 AS INT) AS p
        FROM range({ROWS})""")


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    """name -> description; every table bucketed on k (INT)."""
    made = {}

    def hive_insert(name, buckets, salt, props="TBLPROPERTIES ('bucketing_version'='1')"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} (k INT, v STRING) CLUSTERED BY (k) INTO {buckets} BUCKETS "
                  f"STORED AS ORC {props}")
        source_rows(spark, salt).select("k", "v").createOrReplaceTempView("sql_catalog_src")
        spark_insert(spark, f"INSERT INTO {name} SELECT k, v FROM sql_catalog_src")
        made[name] = "spark-insert"

    hive_insert("sqlc_ins8a", 8, 7)
    hive_insert("sqlc_ins8b", 8, 11)
    hive_insert("sqlc_ins16", 16, 5)
    hive_insert("sqlc_nover", 8, 3, props="")  # no bucketing_version: version 1, as Hive and Trino read it
    hive_insert("sqlc_badver", 8, 3, props="TBLPROPERTIES ('bucketing_version'='3')")  # an unknown hash
    for version in (1, 2):
        for fmt in ("orc", "parquet"):
            for part in (False, True):
                name = f"sqlc_bk_v{version}_{fmt}{'_p' if part else ''}"
                spark.sql(f"DROP TABLE IF EXISTS {name}")
                df = source_rows(spark, 7 + version)
                bucketkit.write(df if part else df.drop("p"), "k", 8, table=name, bucketing_version=version,
                                file_format=fmt, partitioned_by="p" if part else None)
                made[name] = "bucketkit"
    spark.sql("DROP TABLE IF EXISTS sqlc_bk_v1_orc16")
    bucketkit.write(source_rows(spark, 13).drop("p"), "k", 16, table="sqlc_bk_v1_orc16", bucketing_version=1)
    return made


def assert_shuffle_free(plan):
    assert "Exchange" not in plan, plan
    assert len(scans(plan)) >= 1, plan


JOINS = ["INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER"]


@pytest.mark.parametrize("how", JOINS)
def test_join_of_spark_inserted_tables_has_no_exchange(spark, tables, how):
    rows, plan, golden, golden_plan = run(
        spark, f"SELECT a.k AS ak, b.k AS bk, a.v AS av, b.v AS bv FROM sqlc_ins8a a {how} JOIN sqlc_ins8b b "
               f"ON a.k = b.k")
    assert_shuffle_free(plan)
    assert "Exchange" in golden_plan  # Spark alone shuffles these tables
    assert rows == golden
    # rows with NULL keys never match, and are kept exactly by the outer side(s)
    assert any(r.ak is None and r.av is not None for r in rows) == (how in ("LEFT OUTER", "FULL OUTER"))
    assert any(r.bk is None and r.bv is not None for r in rows) == (how in ("RIGHT OUTER", "FULL OUTER"))
    # small buckets are joined by hash (HashJoinBucketPairs), but a full outer join by merge: Spark's full outer
    # hash join tracking matched build rows measured slower than the sorts it saves (benchmarks/RESULTS.md)
    final = plan.split("== Initial Plan ==")[0]
    assert ("ShuffledHashJoin" in final) == (how != "FULL OUTER"), final
    assert ("SortMergeJoin" in final) == (how == "FULL OUTER"), final


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_join_of_bucketkit_tables_has_no_exchange(spark, tables, version, fmt):
    a, b = f"sqlc_bk_v{version}_{fmt}", f"sqlc_bk_v{version}_{fmt}_p"
    rows, plan, golden, _ = run(spark, f"SELECT * FROM {a} FULL OUTER JOIN {b} USING (k)")
    assert_shuffle_free(plan)
    assert rows == golden and len(rows) > ROWS


def test_v1_and_v2_tables_are_not_co_partitioned(spark, tables):
    """Same column, same count, different hashes: Spark must shuffle (bucket i != bucket i)."""
    rows, plan, golden, _ = run(spark, "SELECT * FROM sqlc_bk_v1_orc JOIN sqlc_bk_v2_orc USING (k)")
    assert "Exchange" in plan
    assert rows == golden


def test_group_by_bucket_key_has_no_exchange(spark, tables):
    for table in ("sqlc_ins8a", "sqlc_bk_v2_parquet_p"):
        rows, plan, golden, _ = run(spark, f"SELECT k, count(*) AS n, max(v) AS m FROM {table} GROUP BY k")
        assert_shuffle_free(plan)
        assert rows == golden


def test_window_on_bucket_key_has_no_exchange(spark, tables):
    rows, plan, golden, _ = run(
        spark, "SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v) AS r FROM sqlc_bk_v2_orc")
    assert_shuffle_free(plan)
    assert rows == golden


@pytest.mark.parametrize("other", ["sqlc_ins16", "sqlc_bk_v1_orc16"])
def test_8_by_16_buckets_join_without_exchange(spark, tables, other):
    rows, plan, golden, _ = run(spark, f"SELECT * FROM sqlc_ins8a JOIN {other} USING (k)")
    assert_shuffle_free(plan)
    assert rows == golden and rows


@pytest.mark.parametrize("shuffle_one_side", [False, True])
def test_join_with_an_unbucketed_dataframe_stays_correct(spark, tables, shuffle_one_side):
    spark.range(0, 80, 3).selectExpr("CAST(id AS INT) AS k", "id * 2 AS w").createOrReplaceTempView("sqlc_plain")
    key = "spark.sql.sources.v2.bucketing.shuffle.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, str(shuffle_one_side).lower())
    try:
        rows, plan, golden, _ = run(spark, "SELECT * FROM sqlc_bk_v2_orc_p a JOIN sqlc_plain b USING (k)")
    finally:
        spark.conf.set(key, before)
    assert rows == golden and rows
    assert scans(plan)


def buckets_holding(spark, table, where):
    """Bucket ids of the files (named by Spark's Hive writer) holding rows matching `where`,
    found by Spark reading the files unbucketed."""
    location = spark.sql(f"DESCRIBE FORMATTED {table}").where("col_name = 'Location'").collect()[0][1]
    files = (spark.read.orc(location).where(where).selectExpr("input_file_name() AS f").distinct().collect())
    return {int(r.f.rsplit("/", 1)[-1].split("_")[0]) for r in files}


def chosen_buckets(scan):
    return {int(b) for b in re.search(r"buckets=\d+ of \d+ \{([^}]*)\}", scan).group(1).split(", ")}


@pytest.mark.parametrize("where", ["k = 3", "k IN (3, 7, 17)", "k IS NULL", "k = 3 OR k <=> 44"])
def test_point_filters_read_only_matching_buckets(spark, tables, where):
    rows, plan, golden, _ = run(spark, f"SELECT * FROM sqlc_ins8a WHERE {where}")
    assert rows == golden and rows
    expected = buckets_holding(spark, "sqlc_ins8a", where)
    (scan,) = scans(plan)
    assert chosen_buckets(scan) == expected


def test_partition_filter_prunes_partitions_and_buckets(spark, tables):
    rows, plan, golden, _ = run(spark, "SELECT * FROM sqlc_bk_v2_orc_p WHERE p = 1 AND k IN (4, 9)")
    assert rows == golden and rows
    (scan,) = scans(plan)
    # the metastore is asked for the partitions the filter keeps, as Spark's own plan asks it
    assert "partitions=1 (pruned by the metastore)" in scan
    assert chosen_buckets(scan) == buckets_holding(spark, "sqlc_bk_v2_orc_p", "p = 1 AND k IN (4, 9)")
    spark.conf.set("spark.sql.hive.metastorePartitionPruning", "false")  # Spark's switch: every partition asked for
    try:
        again, plan, golden, _ = run(spark, "SELECT * FROM sqlc_bk_v2_orc_p WHERE p = 1 AND k IN (4, 9)")
    finally:
        spark.conf.unset("spark.sql.hive.metastorePartitionPruning")
    assert again == rows == golden and "partitions=1 of 2" in scans(plan)[0]


def test_a_table_without_bucketing_version_is_hive_v1(spark, tables):
    """Spark's own DDL writes no bucketing_version, and its INSERT hashes with v1: Hive
    (Utilities.getBucketingVersion) and Trino read a missing property as 1, and so does bucketkit."""
    rows, plan, golden, golden_plan = run(spark, "SELECT * FROM sqlc_nover a JOIN sqlc_ins8a b USING (k)")
    assert rows == golden and len(rows) > 0
    assert "Exchange" in golden_plan
    assert_shuffle_free(plan)
    assert any("sqlc_nover" in s and "Hive bucketing v1" in s for s in scans(plan))
    rows, plan, golden, _ = run(spark, "SELECT k, count(*) AS n FROM sqlc_nover GROUP BY k")
    assert_shuffle_free(plan)
    assert rows == golden
    for key in (3, 18, 57):  # salt 3: keys are multiples of 3
        rows, plan, golden, _ = run(spark, f"SELECT * FROM sqlc_nover WHERE k = {key}")
        assert rows == golden and rows, key
        (scan,) = scans(plan)
        assert "buckets=1 of 8" in scan
    # the Python core gives the same verdict: v1, pruned to the same bucket
    plan = bucketkit.plan_scan("sqlc_nover", [("k", "=", 5)], spark=spark)
    assert plan.unbucketed is None and plan.table.spec.bucketing_version == 1
    assert len(plan.selected_buckets) == 1


def test_a_table_with_an_unknown_bucketing_version_is_read_unbucketed_by_both(spark, tables):
    rows, plan, golden, golden_plan = run(spark, "SELECT * FROM sqlc_badver a JOIN sqlc_ins8a b USING (k)")
    assert rows == golden and rows
    assert not any("sqlc_badver" in s for s in scans(plan))
    status = bucketkit.sql_status(spark, "sqlc_badver")
    assert not status.bucketed and "bucketing_version='3'" in status.detail
    # bucketkit.scan reads it too, unbucketed, for the same reason (never refused where SQL reads it)
    plan = bucketkit.plan_scan("sqlc_badver", [("k", "=", 5)], spark=spark)
    assert plan.unbucketed and "bucketing_version='3'" in plan.unbucketed
    assert bucketkit.scan(spark, "sqlc_badver").count() == spark.table("sqlc_badver").count()


def test_spark_bucketby_tables_pass_through(spark, tables):
    spark.sql("DROP TABLE IF EXISTS sqlc_bucketby")
    source_rows(spark, 7).write.bucketBy(8, "k").format("parquet").saveAsTable("sqlc_bucketby")
    rows, plan, golden, golden_plan = run(spark, "SELECT k, count(*) FROM sqlc_bucketby GROUP BY k")
    assert rows == golden
    assert not scans(plan)


def test_small_tables_still_broadcast(spark, tables):
    df = spark.sql("SELECT * FROM sqlc_bk_v1_orc a JOIN sqlc_bk_v2_orc b USING (k)")
    df.collect()
    assert "BroadcastHashJoin" in df._jdf.queryExecution().executedPlan().toString()


def test_insert_through_the_catalog_is_read_bucketed(spark, tables):
    spark.sql("DROP TABLE IF EXISTS sqlc_insert")
    spark.sql("CREATE TABLE sqlc_insert (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='1')")
    spark.sql("INSERT INTO sqlc_insert VALUES (1, 'a'), (2, 'b')")
    spark.sql("INSERT INTO sqlc_insert VALUES (3, 'c')")
    assert sorted(r.k for r in spark.sql("SELECT k FROM sqlc_insert").collect()) == [1, 2, 3]
    assert scans(spark.sql("SELECT * FROM sqlc_insert")._jdf.queryExecution().executedPlan().toString())


def test_commands_see_sparks_own_table(spark, tables):
    """DDL runs on Spark's V1 table (ResolveSessionCatalog), as without the catalog."""
    described = {r.col_name: r.data_type for r in spark.sql("DESCRIBE FORMATTED sqlc_bk_v2_orc_p").collect()}
    assert described["Num Buckets"] == "8" and described["Bucket Columns"] == "[`k`]"
    assert len(spark.sql("SHOW PARTITIONS sqlc_bk_v2_orc_p").collect()) == 2
    spark.sql("ANALYZE TABLE sqlc_bk_v2_orc_p COMPUTE STATISTICS")
    spark.sql("ALTER TABLE sqlc_bk_v2_orc_p ADD IF NOT EXISTS PARTITION (p=7)")
    assert len(spark.sql("SHOW PARTITIONS sqlc_bk_v2_orc_p").collect()) == 3
    spark.sql("ALTER TABLE sqlc_bk_v2_orc_p DROP PARTITION (p=7)")
    (scan,) = scans(spark.sql("SELECT * FROM sqlc_bk_v2_orc_p")._jdf.queryExecution().executedPlan().toString())
    assert "partitions=2 of 2" in scan


NAMES = st.one_of(
    st.from_regex(r"\A\d{1,7}_\d{1,3}(_copy_\d{1,2})?([_.][a-z0-9._-]{0,12})?\Z"),
    st.from_regex(r"\A\d{8}_\d{6}_\d{5}_[a-z0-9]{5}_bucket-\d{1,6}([-_.][a-z0-9]{0,6})?\Z"),
    st.from_regex(r"\Abucket_\d{1,6}(_\d{1,3})?\Z"),
    st.from_regex(r"\Apart-\d{5}-[0-9a-f-]{8}_\d{5}\.c000(\.snappy)?\.orc\Z"),
    st.from_regex(r"\A\d{5}_0_part-\d{5}-[0-9a-f-]{34,37}_\d{5}\.c00\d(\.zstd)?\.orc\Z"),
    st.text(st.sampled_from("0123456789_-.abcopyuket\n\u0085\u2028é٣"), max_size=24),
)


@settings(max_examples=300)
@given(name=NAMES)
def test_java_file_to_bucket_mapping_equals_python(spark, name):
    files = spark._jvm.io.bucketkit.layout.BucketFiles
    python = bucket_of(name)
    assert files.bucketOf(name) == (None if python is None else str(python))
    assert files.isSparkHiveInsert(name) == is_spark_hive_insert(name)


SEGMENTS = st.text(st.sampled_from("aZ09-._~=+%: é#?;[]"), max_size=6)


@settings(max_examples=300)
@given(scheme=st.sampled_from(["file:", "hdfs://nn:8020", "s3a://bucket", "FILE:", "file://", "hdfs://", "x"]),
       segments=st.lists(SEGMENTS, min_size=1, max_size=4), trailing=st.booleans())
def test_a_plain_path_is_the_url_string_hadoop_prints_for_it(spark, scheme, segments, trailing):
    """A scan hands Spark each file as the URL string Hadoop's Path prints for it
    (``new Path(s).toUri().toString()``, SparkPath's own). Where the listing's string is plain it is used as it is,
    without parsing a Path per file: then it must be exactly what Hadoop prints."""
    jvm = spark._jvm
    s = scheme + "/" + "/".join(segments) + ("/" if trailing else "")
    if not jvm.io.bucketkit.layout.BucketFiles.isPlainUri(s):
        return
    assert jvm.org.apache.spark.paths.SparkPath.fromPath(jvm.org.apache.hadoop.fs.Path(s)).urlEncoded() == s


def test_plain_paths_are_found_plain(spark):
    """The fast path is taken where it should be (the property above holds vacuously otherwise)."""
    plain = spark._jvm.io.bucketkit.layout.BucketFiles.isPlainUri
    assert plain("file:/tmp/w/t/d=2024-01-02/000003_0_copy_1") and plain("hdfs://nn:8020/w/t/x.orc")
    assert not any(plain(s) for s in ("file:/tmp/a b/0", "file:/tmp/a%20b/0", "file:/tmp/./0", "file:/tmp//0",
                                      "file:/tmp/0/", "file:///tmp/0", "/tmp/0", "file:/tmp/é/0", "file:/tmp/../0",
                                      "é:/tmp/0", "F:/tmp/0"))


def test_java_layout_rules_equal_python_layout(spark, tmp_path):
    from bucketkit.layout.discovery import discover

    cases = {
        "hive": ["000000_0", "000003_0_copy_1", "000003_0", "_SUCCESS", ".crc"],
        "original": ["a.orc", "b.orc", "c.orc", "d.orc"],
    }
    for name, files in cases.items():
        d = tmp_path / name
        d.mkdir()
        for f in files:
            (d / f).write_bytes(b"x")
        java = sorted(spark._jvm.io.bucketkit.layout.BucketFiles.describe(str(d), 4, 1))
        layout = discover(str(d), 4)
        python = sorted(f"{b}:{f.name}" for b, fs in layout.partition_layouts[0].buckets.items() for f in fs)
        assert java == python
    # no verdict: the JVM's doubt and Python's refusal give one reason (a table read unbucketed by SQL is read
    # unbucketed by bucketkit.scan, with the same words in both plans)
    doubts = {"mismatch": (["a.orc", "b.orc"], "original scheme applies"),
              "mixed, as many as buckets": (["000000_0", "000001_0", "000003_0", "loaded.orc"],
                                            "loaded.orc: a file outside every bucket naming scheme beside"),
              "mixed, fewer": (["000000_0", "loaded.orc"], "loaded.orc: a file outside every bucket naming scheme")}
    for name, (files, why) in doubts.items():
        d = tmp_path / name
        d.mkdir()
        for f in files:
            (d / f).write_bytes(b"x")
        java = spark._jvm.io.bucketkit.layout.BucketFiles.describe(str(d), 4, 1)
        assert len(java) == 1 and java[0].startswith("doubt:") and why in java[0], (name, list(java))
        with pytest.raises((CorruptTableError, BucketCountMismatchError), match=why):
            discover(str(d), 4)


def test_configure_builder_adds_the_jar_beside_other_jars_and_the_catalog():
    from pyspark.sql import SparkSession

    from bucketkit.jvmbuild import jar_path
    from bucketkit.spark.session import CATALOG_CONF, configure_builder

    options = configure_builder(SparkSession.builder.config("spark.jars", "/opt/other.jar")
                                .config("spark.sql.extensions", "org.example.Ext"))._options
    assert options["spark.jars"] == f"/opt/other.jar,{jar_path()}"
    assert {k: options[k] for k in CATALOG_CONF} == CATALOG_CONF
    # bucketkit's planner rules are added beside the user's extensions, once
    assert options["spark.sql.extensions"] == "org.example.Ext,io.bucketkit.spark.BucketkitExtensions"
    again = configure_builder(SparkSession.builder.config("spark.sql.extensions",
                                                          "io.bucketkit.spark.BucketkitExtensions"))._options
    assert again["spark.sql.extensions"] == "io.bucketkit.spark.BucketkitExtensions"
    only_jar = configure_builder(SparkSession.builder, catalog=False)._options
    assert "spark.sql.catalog.spark_catalog" not in only_jar and "spark.sql.extensions" not in only_jar and only_jar["spark.jars"] == str(jar_path())


def test_get_session_returning_the_running_session_leaves_no_temporary_directory(spark, monkeypatch, tmp_path):
    """get_session() without warehouse= makes a temporary directory for a new session's warehouse; when getOrCreate
    returns the session already running (its own warehouse), that directory is removed again, not left empty."""
    import glob
    import tempfile

    from bucketkit.spark.session import get_session

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert get_session("bucketkit-tests", shuffle_partitions=4) is not None  # the suite's session, still running
    assert spark.conf.get("spark.sql.warehouse.dir") != str(tmp_path)
    assert glob.glob(str(tmp_path / "bucketkit-spark-*")) == []


def test_a_local_directory_lists_as_hadoop_lists_it_through_a_hive_sessions_file_system(spark, tmp_path):
    """A Hive session serves file: paths with Hive's ProxyLocalFileSystem; the catalog reads such a
    directory through java.nio (one stat per file, not Hadoop's three). The listing must be Hadoop's:
    the same files, paths, sizes and times, hidden files left out, in a directory whose name needs escaping."""
    jvm = spark._jvm
    d = tmp_path / "a b%20c=é"
    d.mkdir()
    for i, name in enumerate(["000000_0", "000001_0_copy_1", "000002_0.orc", "_SUCCESS", ".000000_0.crc"]):
        (d / name).write_bytes(b"x" * (10 + i))
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    path = jvm.org.apache.hadoop.fs.Path(str(d))
    fs = path.getFileSystem(conf)
    assert fs.getClass().getName() == "org.apache.hadoop.hive.ql.io.ProxyLocalFileSystem"
    hadoop = sorted((s.getPath().toString(), s.getLen(), s.getModificationTime()) for s in fs.listStatus(path)
                    if not s.getPath().getName().startswith(("_", ".")))
    from py4j.java_gateway import get_field

    listing = jvm.io.bucketkit.layout.BucketFiles.list(conf, str(d), 4, 2)
    assert get_field(listing, "doubt") is None
    ours = sorted((get_field(f, "path"), get_field(f, "size"), get_field(f, "modificationTime"))
                  for f in get_field(listing, "files"))
    assert ours == hadoop and len(ours) == 3


def test_a_table_in_a_directory_with_a_non_ascii_name_is_read_bucketed(spark, tmp_path):
    """java.nio refuses a file: URI holding a raw non-ASCII character; Hadoop names such a directory by the
    URI's decoded path. A table at .../café%201 x% must read (bucketed, its rows Spark's own)."""
    path = str(tmp_path / "café%201 x%" / "t")
    bucketkit.write(spark.range(200).selectExpr("id % 20 AS k", "id AS v"), "k", 4, path=path)
    spark.sql("DROP TABLE IF EXISTS sqlc_cafe")
    spark.sql(f"CREATE EXTERNAL TABLE sqlc_cafe (k BIGINT, v BIGINT) CLUSTERED BY (k) INTO 4 BUCKETS "
              f"STORED AS ORC LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='2')")
    try:
        rows, plan, golden, _ = run(spark, "SELECT * FROM sqlc_cafe WHERE k = 3")
        assert rows == golden and len(rows) == 10
        assert scans(plan) and "buckets=1 of 4" in scans(plan)[0], plan
    finally:
        spark.sql("DROP TABLE IF EXISTS sqlc_cafe")


def test_a_filter_pushed_to_the_orc_reader_by_one_query_never_reaches_the_next(spark, tmp_path):
    """The catalog's ORC scans share one broadcast Hadoop configuration between queries
    (ConfBroadcasts), and Spark's ORC reader writes a query's pushed filter (its search argument) into
    the configuration it is given. Files whose row groups a filter skips (v ascending within each
    file) read again without a filter must give every row, as Spark's own plan does."""
    path = str(tmp_path / "t")
    bucketkit.write(spark.range(120_000).coalesce(1).selectExpr("id % 2 AS k", "id AS v"), "k", 2, path=path)
    spark.sql("DROP TABLE IF EXISTS sqlc_sarg")
    spark.sql(f"CREATE EXTERNAL TABLE sqlc_sarg (k BIGINT, v BIGINT) CLUSTERED BY (k) INTO 2 BUCKETS "
              f"STORED AS ORC LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='2')")
    try:
        everything = "SELECT count(v), sum(v) FROM sqlc_sarg"
        with catalog_off(spark):
            golden = spark.sql(everything).collect()
        assert spark.sql("SELECT * FROM sqlc_sarg WHERE v = 123").collect() == [(1, 123)]
        assert spark.sql(everything).collect() == golden
        assert spark.sql("SELECT count(*) FROM sqlc_sarg WHERE k = 1").collect() == [(60_000,)]
        assert spark.sql(everything).collect() == golden == [(120_000, sum(range(120_000)))]
    finally:
        spark.sql("DROP TABLE IF EXISTS sqlc_sarg")


@pytest.mark.parametrize("fmt", ["PARQUET", "ORC"])
def test_one_query_reading_a_table_twice_with_other_columns_reads_each_sides_own(spark, tmp_path, fmt):
    """Spark's Parquet scan writes the columns it reads into the Hadoop configuration it is given and broadcasts that
    object; in local mode every task reads the one object. The two scans of a self join shared the table's
    configuration, so the side planned first read with the other's columns: sum(x.u) came back as sum(v), an IN
    subquery counted 200 of 100 rows, and x.b failed with "Index 1 out of bounds". Rows from Spark's own plan."""
    name = f"sqlc_twice_{fmt.lower()}"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (a INT, b STRING, v BIGINT, u BIGINT) CLUSTERED BY (a) INTO 4 BUCKETS "
              f"STORED AS {fmt} LOCATION '{tmp_path / name}' TBLPROPERTIES ('bucketing_version'='2')")
    try:
        spark.sql(f"INSERT INTO {name} SELECT CAST(id % 40 AS INT), CONCAT('s', id % 3), id, id * 2 FROM range(200)")
        for query in [f"SELECT sum(x.u), sum(y.v) FROM {name} x JOIN {name} y ON x.a = y.a",
                      f"SELECT count(*) FROM {name} x WHERE x.u IN (SELECT v FROM {name})",
                      f"SELECT x.a, x.b FROM {name} x JOIN {name} y ON x.a = y.a WHERE y.v < 20"]:
            golden = spark_rows(spark, query)
            assert rows_of(spark, query) == golden and golden, query
        assert rows_of(spark, f"SELECT sum(x.u), sum(y.v) FROM {name} x JOIN {name} y ON x.a = y.a") == [(199000, 99500)]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_v2_table_holding_sparks_v1_insert_files_passes_through(spark, tables):
    """Spark's Hive INSERT places rows by the v1 hash whatever bucketing_version says (trust.py). bucketkit's
    sessions refuse such INSERTs now (test_sql_write_guard.py); tables holding them come from elsewhere, or
    from a v1 table whose property was changed later, as here."""
    spark.sql("DROP TABLE IF EXISTS sqlc_v2_spark_insert")
    spark.sql("CREATE TABLE sqlc_v2_spark_insert (k INT, v STRING) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='1')")
    spark_insert(spark, "INSERT INTO sqlc_v2_spark_insert SELECT k, v FROM sqlc_ins8a")
    spark.sql("ALTER TABLE sqlc_v2_spark_insert SET TBLPROPERTIES ('bucketing_version'='2')")
    rows, plan, golden, _ = run(spark, "SELECT * FROM sqlc_v2_spark_insert WHERE k = 3")
    assert rows == golden and rows
    assert not scans(plan)
    # read unbucketed, every file, with the reason in the plan
    scan = unbucketed_scans(plan)[0]
    assert "written by Spark's own INSERT" in scan and "files=8" in scan, scan


def test_a_query_lists_and_vouches_for_only_the_partitions_it_reads(spark, tables, tmp_path):
    """The files of a partition a query does not read are neither listed nor judged: a partition whose
    files cannot be vouched for (here a sub-directory) makes only the queries reading it unbucketed,
    and those read the files Spark's own reader reads there (its file index: not the sub-directory's)."""
    import shutil

    spark.sql("DROP TABLE IF EXISTS sqlc_lazy")
    bucketkit.write(source_rows(spark, 17), "k", 8, table="sqlc_lazy", bucketing_version=2, partitioned_by="p")
    root = Path(spark.sql("DESCRIBE FORMATTED sqlc_lazy").where("col_name = 'Location'").collect()[0][1]
                .removeprefix("file:"))
    odd = tmp_path / "p2"
    shutil.copytree(root / "p=1", odd)
    (odd / "extra").mkdir()
    shutil.copy(sorted(odd.glob("0*"))[0], odd / "extra" / "000000_0")
    from bucketkit.spark.catalog import misplaced_partition

    def misplaced(jar):  # the jar's one call (CatalogPartitions) and the Python rule it stands in for, alike
        ct = spark._jsparkSession.sessionState().catalog().getTableMetadata(
            spark._jvm.org.apache.spark.sql.catalyst.TableIdentifier("sqlc_lazy"))
        return misplaced_partition(spark, ct, jar=jar)

    assert misplaced(True) is None and misplaced(False) is None
    with catalog_off(spark):
        spark.sql(f"ALTER TABLE sqlc_lazy ADD PARTITION (p=2) LOCATION '{odd}'")
    assert misplaced(True) == misplaced(False) and misplaced(True)[0] == "p=2"
    assert misplaced(True)[1].rstrip("/").endswith(str(odd)) and misplaced(True)[2].endswith("p=2")
    rows, plan, golden, _ = run(spark, "SELECT k, count(*) FROM sqlc_lazy WHERE p < 2 GROUP BY k")
    assert rows == golden and rows
    assert "Exchange" not in plan and "partitions=2 (pruned by the metastore)" in scans(plan)[0], plan
    rows, plan, golden, _ = run(spark, "SELECT k, count(*), max(v) FROM sqlc_lazy GROUP BY k")
    assert rows == golden and rows
    scan = unbucketed_scans(plan)[0]
    assert "a sub-directory in a bucketed partition" in scan and "partitions=3 of 3" in scan, scan
    rows, plan, golden, _ = run(spark, "SELECT count(*), max(v) FROM sqlc_lazy WHERE p = 2")
    assert rows == golden and "partitions=1 (pruned by the metastore), files=7" in unbucketed_scans(plan)[0], plan
    status = bucketkit.sql_status(spark, "sqlc_lazy")
    assert not status.bucketed and "a sub-directory" in status.detail
    # bucketkit's Python readers find partitions under the table's directory: one kept elsewhere is refused,
    # never a partial read (SQL above reads it)
    for read in (lambda: bucketkit.scan(spark, "sqlc_lazy"), lambda: bucketkit.plan_scan("sqlc_lazy", spark=spark)):
        with pytest.raises(bucketkit.LayoutError, match=r"partition p=2 is kept at .*p2, outside the table's dir"):
            read()


def test_sql_and_scan_read_a_partition_they_cannot_vouch_for_alike(spark, tables):
    """One verdict, one behaviour: a partition whose files no bucket layout allows (a sub-directory) is read
    unbucketed, with the reason, by SQL and by bucketkit.scan alike, the rows Spark's own plan returns; a read
    of the sound partitions stays bucketed in both, pruned by the key where asked."""
    import shutil

    spark.sql("DROP TABLE IF EXISTS sqlc_odd")
    bucketkit.write(source_rows(spark, 19), "k", 8, table="sqlc_odd", bucketing_version=2, partitioned_by="p")
    root = Path(spark.sql("DESCRIBE FORMATTED sqlc_odd").where("col_name = 'Location'").collect()[0][1]
                .removeprefix("file:"))
    shutil.copytree(root / "p=1", root / "p=2")
    (root / "p=2" / "extra").mkdir()
    shutil.copy(sorted((root / "p=2").glob("0*"))[0], root / "p=2" / "extra" / "000000_0")
    with catalog_off(spark):
        spark.sql("ALTER TABLE sqlc_odd ADD PARTITION (p=2)")
    for where, filters in [("", None), ("WHERE p = 2 AND k = 5", [("p", "=", 2), ("k", "=", 5)]),
                           ("WHERE p = 0 AND k = 4", [("p", "=", 0), ("k", "=", 4)])]:
        rows, plan, golden, _ = run(spark, f"SELECT k, v, p FROM sqlc_odd {where}")
        assert rows == golden and rows, where
        scanned = sorted(bucketkit.scan(spark, "sqlc_odd", filters=filters).select("k", "v", "p").collect(), key=repr)
        assert scanned == golden, where
        planned = bucketkit.plan_scan("sqlc_odd", filters, spark=spark)
        if "p = 0" in where:
            assert scans(plan) and planned.unbucketed is None and planned.selected_buckets is not None, plan
        else:
            assert unbucketed_scans(plan) and not scans(plan), plan
            assert planned.unbucketed and "sub-directory" in planned.unbucketed, planned.explain()


def test_a_pruned_scan_of_a_table_read_unbucketed_checks_no_buckets(spark, tables):
    """A partition-pruned bucketkit.scan of a v2 table holding Spark's (v1-placed) INSERT files: the table is
    read unbucketed, so no row is checked against the bucket its file's name gives (the v2 hash of a row
    in a v1-placed file differs from the name's bucket: a check would fail the read SQL returns)."""
    spark.sql("DROP TABLE IF EXISTS sqlc_v2_part_insert")
    spark.sql("CREATE TABLE sqlc_v2_part_insert (k INT, v STRING) PARTITIONED BY (p INT) CLUSTERED BY (k) "
              "INTO 8 BUCKETS STORED AS ORC TBLPROPERTIES ('bucketing_version'='2')")
    source_rows(spark, 23).createOrReplaceTempView("sqlc_v2_part_src")
    spark_insert_into_v2(spark, "sqlc_v2_part_insert",
                         "INSERT INTO sqlc_v2_part_insert PARTITION (p) SELECT k, v, p FROM sqlc_v2_part_src")
    rows, plan, golden, _ = run(spark, "SELECT k, v, p FROM sqlc_v2_part_insert WHERE p = 1")
    assert rows == golden and rows and unbucketed_scans(plan)
    planned = bucketkit.plan_scan("sqlc_v2_part_insert", [("p", "=", 1)], spark=spark)
    assert planned.unbucketed and planned.is_pruned
    scanned = bucketkit.scan(spark, "sqlc_v2_part_insert", filters=[("p", "=", 1)]).select("k", "v", "p").collect()
    assert sorted(scanned, key=repr) == golden


# -- SORTED BY ------------------------------------------------------------------------------------
SORTS = re.compile(r"\bSort \[")


def files_of(spark, table):
    location = spark.sql(f"DESCRIBE FORMATTED {table}").where("col_name = 'Location'").collect()[0][1]
    root = location.removeprefix("file:")
    return sorted(str(p) for p in Path(root).rglob("*")
                  if p.is_file() and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts))


def assert_files_sorted(spark, table, columns):
    """Each data file's rows are in ascending order of `columns`, NULLs first (read by pyarrow)."""
    import pyarrow.orc as orc

    for path in files_of(spark, table):
        rows = orc.read_table(path, columns=columns).to_pylist()
        keys = [tuple((0,) if r[c] is None else (1, r[c]) for c in columns) for r in rows]
        assert keys == sorted(keys), path


@pytest.fixture(scope="module")
def sorted_tables(spark, tables):
    """Tables CLUSTERED BY (k) SORTED BY (k, v), v1, 8 buckets: by Spark's own Hive INSERT from one
    task (one file per bucket) and from two (two files per bucket), by a SQL INSERT through the
    catalog (bucketkit's writer: one file per bucket), by bucketkit.write, and appended to."""

    def insert(name, tasks, own):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} (k INT, v STRING) CLUSTERED BY (k) SORTED BY (k, v) INTO 8 BUCKETS "
                  "STORED AS ORC TBLPROPERTIES ('bucketing_version'='1')")
        source_rows(spark, 17).select("k", "v").repartition(tasks).createOrReplaceTempView("sqlc_sorted_src")
        statement = f"INSERT INTO {name} SELECT k, v FROM sqlc_sorted_src"
        spark_insert(spark, statement) if own else spark.sql(statement)

    insert("sqlc_sorted_ins", 1, own=True)
    insert("sqlc_sorted_ins2", 2, own=True)
    insert("sqlc_sorted_sql", 2, own=False)
    for name, part in (("sqlc_sorted_bk", False), ("sqlc_sorted_bk_p", True), ("sqlc_sorted_bk_app", False)):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        df = source_rows(spark, 19)
        bucketkit.write(df if part else df.drop("p"), "k", 8, table=name, bucketing_version=1,
                        sorted_by=["k", "v"], partitioned_by="p" if part else None)
    bucketkit.write(source_rows(spark, 23).drop("p"), "k", 8, table="sqlc_sorted_bk_app", bucketing_version=1,
                    sorted_by=["k", "v"], mode="append")
    for name in ("sqlc_sorted_ins", "sqlc_sorted_ins2", "sqlc_sorted_sql", "sqlc_sorted_bk", "sqlc_sorted_bk_p",
                 "sqlc_sorted_bk_app"):
        assert_files_sorted(spark, name, ["k", "v"])  # what the reported order rests on, checked on the files
    assert len(files_of(spark, "sqlc_sorted_sql")) == 8
    return {"one file per bucket": ("sqlc_sorted_ins", "sqlc_sorted_bk", "sqlc_sorted_sql"),
            "two files per bucket": ("sqlc_sorted_ins2", "sqlc_sorted_bk_app", "sqlc_sorted_bk_p")}


def sorted_join(spark, a, b, how="INNER", where=""):
    """A join of two of the sorted tables on k: its rows (equal to Spark's own) and its final plan,
    which has no Exchange."""
    rows, plan, golden, golden_plan = run(spark, f"SELECT a.k, a.v, b.v AS w FROM {a} a {how} JOIN {b} b "
                                                 f"ON a.k = b.k {where}")
    assert_shuffle_free(plan)
    assert rows == golden and rows
    assert SORTS.search(golden_plan)  # Spark alone sorts (and shuffles) these tables
    return plan.split("== Initial Plan ==")[0]


@pytest.mark.parametrize("other", [1, 2])
def test_join_of_sorted_one_file_buckets_needs_no_sort(spark, sorted_tables, other):
    a, b = sorted_tables["one file per bucket"][0], sorted_tables["one file per bucket"][other]
    for how in JOINS:
        plan = sorted_join(spark, a, b, how)
        assert not SORTS.search(plan), plan
        assert all("sorted by [k, v]" in s for s in scans(plan)), plan


def test_window_ordered_by_the_second_sort_column_needs_no_sort(spark, sorted_tables):
    a = sorted_tables["one file per bucket"][0]
    rows, plan, golden, _ = run(spark, f"SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v) AS r FROM {a}")
    assert_shuffle_free(plan)
    assert not SORTS.search(plan), plan
    assert rows == golden


@pytest.mark.parametrize("table", ["sqlc_sorted_ins2", "sqlc_sorted_bk_app", "sqlc_sorted_bk_p"])
def test_buckets_of_two_sorted_files_are_sorted_again(spark, sorted_tables, table):
    """Each file is sorted, the bucket is not: two INSERTs' files, an append, two partitions."""
    plan = sorted_join(spark, sorted_tables["one file per bucket"][0], table)
    assert len(SORTS.findall(plan)) == 1, plan  # the two-file side only
    assert not any("sorted by" in s for s in scans(plan) if table in s)


def test_a_partition_filter_leaving_one_file_per_bucket_reports_the_order(spark, sorted_tables):
    plan = sorted_join(spark, sorted_tables["one file per bucket"][0], "sqlc_sorted_bk_p", where="WHERE b.p = 1")
    assert not SORTS.search(plan), plan


# -- why a table passes through -----------------------------------------------------------------
def plans_bucketed(spark, table):
    return bool(scans(spark.sql(f"SELECT * FROM {table}")._jdf.queryExecution().executedPlan().toString()))


def test_sql_status_says_what_a_query_gets(spark, tables):
    """sql_status asks the catalog's own rules: its answer is the plan's, for every kind of table."""
    for table in tables:
        status = bucketkit.sql_status(spark, table)
        assert status.bucketed == plans_bucketed(spark, table), status
    assert bucketkit.sql_status(spark, "sqlc_nover").bucketed
    status = bucketkit.sql_status(spark, "sqlc_bk_v2_orc_p")
    assert status.bucketed, status
    assert status.detail.startswith("Hive bucketing v2, 8 buckets on k (transform hive_v2_bucket_8(k)), orc, "
                                    "2 partition(s)"), status
    with catalog_off(spark):
        status = bucketkit.sql_status(spark, "sqlc_bk_v2_orc")
        assert not status.bucketed and "spark.bucketkit.catalog.enabled=false" in str(status)
    with pytest.raises(bucketkit.TableNotFoundError, match="sqlc_missing"):
        bucketkit.sql_status(spark, "sqlc_missing")


def test_a_multi_column_table_is_read_bucketed_without_a_warning(spark, tables):
    spark.sql("DROP TABLE IF EXISTS sqlc_two_cols")
    spark.sql("CREATE TABLE sqlc_two_cols (k INT, j INT, v STRING) CLUSTERED BY (k, j) INTO 4 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='1')")
    spark.sql("INSERT INTO sqlc_two_cols SELECT k, k, v FROM sqlc_ins8a")
    spark.sql("DROP TABLE IF EXISTS sqlc_plain_pq")
    spark.sql("CREATE TABLE sqlc_plain_pq (k INT) STORED AS PARQUET")
    status = bucketkit.sql_status(spark, "default.sqlc_two_cols")
    assert status.bucketed and "4 buckets on k, j (keyed by _bucket_hash" in status.detail, status
    for _ in range(2):
        rows, plan, golden, _ = run(spark, "SELECT * FROM sqlc_two_cols a JOIN sqlc_plain_pq b USING (k)")
        assert rows == golden
        assert [s for s in scans(plan) if "sqlc_two_cols" in s and "bucketed by k, j" in s], plan
    warned = [w for w in spark._jvm.io.bucketkit.table.PassThrough.warned() if "sqlc_" in w]
    assert not any("sqlc_two_cols" in w or "sqlc_plain_pq" in w for w in warned), warned


def test_a_table_path_with_a_space_and_escaped_partition_values_are_read_whole(spark, tmp_path):
    """Catalog locations are URIs: `p=a%2Fb` on disk is `p=a%252Fb` in their raw text, a space is `%20`.
    Taken literally, the partition (or the whole table) would list as missing and read as empty."""
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql("DROP TABLE IF EXISTS sqlc_spaced")
    spark.sql(f"CREATE TABLE sqlc_spaced (k INT, v STRING) PARTITIONED BY (p STRING) CLUSTERED BY (k) INTO 4 BUCKETS "
              f"STORED AS ORC LOCATION '{tmp_path}/a dir'")
    spark_insert(spark, "INSERT INTO sqlc_spaced PARTITION (p) SELECT CAST(id AS INT), 'x', "
                        "IF(id % 2 = 0, 'a/b=c', 'd e') FROM range(40)")
    rows, plan, golden, _ = run(spark, "SELECT p, count(*) AS n FROM sqlc_spaced GROUP BY p")
    assert rows == golden and sorted(r.n for r in rows) == [20, 20]
    assert any("sqlc_spaced" in s for s in scans(plan))
    # partitions at their default places, escaped: bucketkit.scan finds them all (none taken for "elsewhere")
    assert bucketkit.scan(spark, "sqlc_spaced").count() == 40
