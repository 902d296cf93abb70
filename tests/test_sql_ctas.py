"""CREATE TABLE ... CLUSTERED BY ... [AS SELECT] as teams write it (dbt-spark, notebooks, DataFrameWriter):
io.bucketkit.spark.CreateAsSelect, docs/sql.md.

Golden values come from Spark: the storage a ``USING hive OPTIONS (fileFormat ...)`` table gets is the one
Spark gives ``STORED AS``; a CTAS's rows are the source query's, read with the catalog off; a v1 CTAS places
rows as Spark's own Hive CTAS does (catalog off), and a v2 CTAS's placement is checked by ``validate`` (whose
hash tests/test_hashing*.py hold equal to Hive's classes).
"""

from __future__ import annotations

import os

import pytest
from pyspark.errors import AnalysisException
from support.sparkown import catalog_off, rows_by_bucket, rows_of, spark_rows

import bucketkit
from bucketkit.spark.catalog import load_table

pytestmark = pytest.mark.spark

SOURCE = ("SELECT IF(id % 13 = 0, NULL, CAST((id * 7919) % 1000 AS INT)) AS k, CONCAT('v', CAST(id AS STRING)) AS v, "
          "CAST(id % 3 AS STRING) AS dt FROM range(500)")


@pytest.fixture(scope="module")
def src(spark):
    spark.sql(SOURCE).createOrReplaceTempView("ctas_src")
    return "ctas_src"


def storage(spark, table):
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE FORMATTED {table}").collect()}
    return {k: described.get(k) for k in ("Serde Library", "InputFormat", "OutputFormat", "Num Buckets",
                                          "Bucket Columns")}


def location(spark, table):
    return spark.sql(f"DESCRIBE FORMATTED {table}").where("col_name = 'Location'").collect()[0][1]


def drop(spark, *tables):
    for t in tables:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_using_hive_with_a_file_format_is_the_table_stored_as_gives(spark, fmt):
    """dbt-spark's Hive model DDL, which Spark refuses ("Creating bucketed Hive serde table is not supported yet")."""
    drop(spark, "ctas_using", "ctas_stored")
    spark.sql(f"CREATE TABLE ctas_using (k INT, v STRING) USING hive OPTIONS (fileFormat '{fmt}') "
              "CLUSTERED BY (k) INTO 4 BUCKETS")
    spark.sql(f"CREATE TABLE ctas_stored (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS {fmt}")
    assert storage(spark, "ctas_using") == storage(spark, "ctas_stored")
    assert storage(spark, "ctas_using")["Num Buckets"] == "4"


@pytest.mark.parametrize("form", ["using", "stored"])
@pytest.mark.parametrize("fmt", ["orc", "parquet"])
@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_a_v2_ctas_is_written_by_bucketkit_and_committed_whole(spark, src, form, fmt, partitioned):
    drop(spark, "ctas_v2")
    how = f"USING hive OPTIONS (fileFormat '{fmt}')" if form == "using" else f"STORED AS {fmt}"
    columns, part = ("k, v, dt", "PARTITIONED BY (dt)") if partitioned else ("k, v", "")
    spark.sql(f"CREATE TABLE ctas_v2 {how} {part} CLUSTERED BY (k) INTO 8 BUCKETS "
              f"TBLPROPERTIES ('bucketing_version'='2') AS SELECT {columns} FROM {src}")
    assert spark_rows(spark, "SELECT * FROM ctas_v2") == spark_rows(spark, f"SELECT {columns} FROM {src}")
    checked = bucketkit.validate(load_table(spark, "ctas_v2"))
    assert checked.ok and checked.rows_checked == 500 and checked.misplaced_rows == 0
    root = location(spark, "ctas_v2").removeprefix("file:")
    assert os.path.isfile(os.path.join(root, "_bucketkit_files.json"))  # a bucketkit commit, recorded
    plan = spark.sql("SELECT * FROM ctas_v2 a JOIN ctas_v2 b ON a.k = b.k").select("*")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        text = plan._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    assert "Exchange" not in text and "placement vouched" in text, text


def test_a_v1_ctas_places_rows_as_sparks_own_hive_ctas(spark, src):
    drop(spark, "ctas_v1_spark", "ctas_v1_ours")
    ddl = "CREATE TABLE {} USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v FROM " + src
    with catalog_off(spark):
        spark.sql("CREATE TABLE ctas_v1_spark CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC AS SELECT k, v FROM " + src)
    spark.sql(ddl.format("ctas_v1_ours"))

    assert rows_by_bucket(spark, "ctas_v1_ours") == rows_by_bucket(spark, "ctas_v1_spark")
    assert os.path.isfile(os.path.join(location(spark, "ctas_v1_ours").removeprefix("file:"), "_bucketkit_files.json"))


def test_dataframe_writer_save_as_table_of_a_hive_bucketed_table(spark, src):
    drop(spark, "ctas_saved")
    spark.table(src).select("k", "v").write.format("hive").option("fileFormat", "parquet").bucketBy(4, "k") \
        .saveAsTable("ctas_saved")
    assert storage(spark, "ctas_saved")["Num Buckets"] == "4"
    assert spark_rows(spark, "SELECT * FROM ctas_saved") == spark_rows(spark, f"SELECT k, v FROM {src}")
    assert bucketkit.validate(load_table(spark, "ctas_saved")).ok


def test_a_failing_ctas_leaves_no_table_and_no_directory(spark, src):
    drop(spark, "ctas_fails")
    with pytest.raises(Exception, match="boom"):
        spark.sql("CREATE TABLE ctas_fails STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS "
                  "TBLPROPERTIES ('bucketing_version'='2') AS "
                  f"SELECT k, CAST(IF(v = 'v499', raise_error('boom'), v) AS STRING) AS v FROM {src}")
    assert not spark.catalog.tableExists("ctas_fails")
    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    assert not os.path.exists(os.path.join(warehouse, "ctas_fails"))


def test_ctas_onto_an_existing_table_keeps_it_or_names_it(spark, src):
    drop(spark, "ctas_there")
    ddl = ("CREATE TABLE {} ctas_there STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS "
           "TBLPROPERTIES ('bucketing_version'='2') AS SELECT k, v FROM " + src)
    spark.sql(ddl.format(""))
    spark.sql(ddl.format("IF NOT EXISTS").replace(f"FROM {src}", f"FROM {src} WHERE k < 10"))
    assert spark.table("ctas_there").count() == 500
    with pytest.raises(AnalysisException, match=r"ctas_there.*already exists"):
        spark.sql(ddl.format(""))
    assert spark.table("ctas_there").count() == 500


def test_a_v2_ctas_bucketed_by_two_columns_is_written_placed_as_hive_places(spark, src):
    """CLUSTERED BY (k, v) with bucketing v2: was refused (bucketkit's INSERT wrote one-column keys); now written, every
    row in the file of the bucket Hive's own classes give (k, v)."""
    from support.hive_oracle import HiveOracle

    from bucketkit.layout.naming import bucket_of

    drop(spark, "ctas_two")
    spark.sql("CREATE TABLE ctas_two STORED AS ORC CLUSTERED BY (k, v) INTO 4 BUCKETS "
              f"TBLPROPERTIES ('bucketing_version'='2') AS SELECT k, v FROM {src}")
    assert spark_rows(spark, "SELECT * FROM ctas_two") == spark_rows(spark, f"SELECT k, v FROM {src}")
    hive = HiveOracle(spark)
    placed = spark_rows(spark, "SELECT input_file_name(), k, v FROM ctas_two")
    assert len(placed) == 500 and all(
        bucket_of(f.rsplit("/", 1)[-1]) == (hive.v2([k, v], ["int", "string"]) & 0x7FFFFFFF) % 4 for f, k, v in placed)


def test_a_v2_ctas_bucketkit_cannot_write_is_refused_saying_why(spark, src):
    """A v2 table partitioned by a timestamp: bucketkit's SQL INSERT does not write it, Spark's would hash v1."""
    drop(spark, "ctas_ts")
    with pytest.raises(AnalysisException, match=r"ctas_ts AS SELECT.*partition column ts has type timestamp"):
        spark.sql("CREATE TABLE ctas_ts STORED AS ORC PARTITIONED BY (ts) CLUSTERED BY (k) INTO 4 BUCKETS "
                  f"TBLPROPERTIES ('bucketing_version'='2') AS SELECT k, v, TIMESTAMP'2024-01-01 00:00:00' AS ts "
                  f"FROM {src}")
    assert not spark.catalog.tableExists("ctas_ts")


@pytest.mark.parametrize("ddl", ["STORED AS TEXTFILE", "USING hive OPTIONS (fileFormat 'textfile')"])
def test_a_ctas_into_a_text_table_is_written_as_its_insert(spark, src, ddl):
    """Hive and Trino write v2 on CTAS whatever the format; a TEXTFILE v2 CTAS was refused. Its rows are placed by
    Hive's v2 hash (Hive's own Murmur3 class) and read back as Spark's own Hive reader reads the files."""
    from support.hive_oracle import HiveOracle

    drop(spark, "ctas_text")
    spark.sql(f"CREATE TABLE ctas_text {ddl} CLUSTERED BY (k) INTO 4 BUCKETS "
              f"TBLPROPERTIES ('bucketing_version'='2') AS SELECT k, v FROM {src}")
    try:
        assert storage(spark, "ctas_text")["Serde Library"] == "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
        assert rows_of(spark, "SELECT * FROM ctas_text") == spark_rows(spark, f"SELECT k, v FROM {src}")
        hive = HiveOracle(spark)
        placed = rows_by_bucket(spark, "ctas_text")
        assert all((hive.v2([k], ["int"]) & 0x7FFFFFFF) % 4 == b for b, found in placed.items() for k, _ in found)
    finally:
        drop(spark, "ctas_text")


# -- REPLACE TABLE AS SELECT (Spark refuses it for every Hive table of the session catalog) -------------------------

def _replace_sql(spark, src, how, name="rtas_t"):
    spark.sql(f"{how} TABLE {name} USING hive OPTIONS (fileFormat 'parquet') CLUSTERED BY (k) INTO 8 BUCKETS "
              f"TBLPROPERTIES ('bucketing_version'='2') AS SELECT k, v, dt FROM {src} WHERE k < 700")


def _replace_writer(spark, src, how, name="rtas_t"):
    from pyspark.sql.functions.partitioning import bucket

    writer = (spark.table(src).where("k < 700").writeTo(name).using("hive").option("fileFormat", "parquet")
              .partitionedBy(bucket(8, "k")).tableProperty("bucketing_version", "2"))
    writer.createOrReplace() if how == "CREATE OR REPLACE" else writer.replace()


def _leftovers(spark, name):
    """Tables and table directories a REPLACE left (not bucketkit's hidden .<table>.bucketkit.* entries beside
    each table it writes, which every commit leaves today: issue 48)."""
    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    tables = [r.tableName for r in spark.sql("SHOW TABLES").collect() if r.tableName.startswith(name + "_")]
    return tables + [e for e in os.listdir(warehouse) if name in e and e != name and not e.startswith(".")]


@pytest.mark.parametrize("api", [_replace_sql, _replace_writer], ids=["sql", "writeTo"])
@pytest.mark.parametrize("how", ["REPLACE", "CREATE OR REPLACE"])
def test_replace_table_as_select_rewrites_a_bucketed_table_whole(spark, src, api, how):
    """v1 ORC 4 buckets -> v2 Parquet 8 buckets: the rows are the query's (Spark's, catalog off), placed by v2."""
    drop(spark, "rtas_t")
    spark.sql("CREATE TABLE rtas_t STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v FROM " + src)
    api(spark, src, how)
    assert spark_rows(spark, "SELECT * FROM rtas_t") == spark_rows(spark, f"SELECT k, v, dt FROM {src} WHERE k < 700")
    assert storage(spark, "rtas_t")["Num Buckets"] == "8" and "parquet" in storage(spark, "rtas_t")["Serde Library"]
    assert spark.sql("SHOW TBLPROPERTIES rtas_t ('bucketing_version')").first().value == "2"
    checked = bucketkit.validate(load_table(spark, "rtas_t"))
    assert checked.ok and checked.rows_checked == len(spark_rows(spark, f"SELECT k FROM {src} WHERE k < 700"))
    assert set(rows_by_bucket(spark, "rtas_t")) <= set(range(8)) and len(rows_by_bucket(spark, "rtas_t")) > 4
    assert not _leftovers(spark, "rtas_t")


def test_write_to_create_makes_a_hive_bucketed_table(spark, src):
    from pyspark.sql.functions.partitioning import bucket

    drop(spark, "wt_create")
    (spark.table(src).select("k", "v").writeTo("wt_create").using("hive").option("fileFormat", "orc")
     .partitionedBy(bucket(4, "k")).tableProperty("bucketing_version", "2").create())
    assert storage(spark, "wt_create")["Num Buckets"] == "4" and "orc" in storage(spark, "wt_create")["Serde Library"]
    assert spark_rows(spark, "SELECT * FROM wt_create") == spark_rows(spark, f"SELECT k, v FROM {src}")
    checked = bucketkit.validate(load_table(spark, "wt_create"))
    assert checked.ok and checked.rows_checked == 500
    drop(spark, "wt_create")


def test_a_replace_whose_query_fails_leaves_the_old_table_as_it_was(spark, src):
    drop(spark, "rtas_keep")
    spark.sql("CREATE TABLE rtas_keep STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS "
              f"TBLPROPERTIES ('bucketing_version'='2') AS SELECT k, v FROM {src}")
    before = spark_rows(spark, "SELECT * FROM rtas_keep")
    with pytest.raises(Exception, match="boom"):
        spark.sql("CREATE OR REPLACE TABLE rtas_keep USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY (k) "
                  "INTO 8 BUCKETS TBLPROPERTIES ('bucketing_version'='2') AS "
                  f"SELECT k, CAST(IF(v = 'v499', raise_error('boom'), v) AS STRING) AS v FROM {src}")
    assert spark_rows(spark, "SELECT * FROM rtas_keep") == before and len(before) == 500
    assert storage(spark, "rtas_keep")["Num Buckets"] == "4" and not _leftovers(spark, "rtas_keep")


def test_replace_of_a_missing_table_is_refused_and_create_or_replace_creates_it(spark, src):
    drop(spark, "rtas_new")
    with pytest.raises(AnalysisException, match=r"rtas_new.*no such table.*CREATE OR REPLACE"):
        _replace_sql(spark, src, "REPLACE", "rtas_new")
    assert not spark.catalog.tableExists("rtas_new")
    _replace_sql(spark, src, "CREATE OR REPLACE", "rtas_new")
    assert spark_rows(spark, "SELECT * FROM rtas_new") == spark_rows(spark, f"SELECT k, v, dt FROM {src} WHERE k < 700")


def test_a_staging_table_left_behind_is_named_never_overwritten(spark, src):
    drop(spark, "rtas_left", "rtas_left__bucketkit_replacing")
    spark.sql(f"CREATE TABLE rtas_left STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v FROM {src}")
    spark.sql("CREATE TABLE rtas_left__bucketkit_replacing (k INT) STORED AS ORC")
    with pytest.raises(AnalysisException, match=r"rtas_left__bucketkit_replacing.*did not finish"):
        _replace_sql(spark, src, "REPLACE", "rtas_left")
    assert spark.table("rtas_left").count() == 500
    drop(spark, "rtas_left", "rtas_left__bucketkit_replacing")


def test_a_replace_the_metastore_could_not_rename_leaves_the_old_table_as_it_was(spark, src):
    """Hive refuses every ALTER TABLE (RENAME too) of a table whose bucket column is spelled with capitals, as Spark's
    own ALTER TABLE on it shows. A REPLACE of such a table is refused before the old one is dropped. Failed before: the
    old table was dropped and the new one left as rtas_caps__bucketkit_replacing."""
    drop(spark, "rtas_caps", "rtas_caps__bucketkit_replacing")
    spark.sql(f"CREATE TABLE rtas_caps STORED AS ORC CLUSTERED BY (Key) INTO 4 BUCKETS AS SELECT k AS Key, v FROM {src}")
    with catalog_off(spark), pytest.raises(AnalysisException, match="Bucket columns Key is not part of the table"):
        spark.sql("ALTER TABLE rtas_caps SET TBLPROPERTIES ('x'='y')")  # Spark's own: the metastore's refusal
    before = spark_rows(spark, "SELECT * FROM rtas_caps")
    with pytest.raises(AnalysisException, match=r"rtas_caps.*metastore refuses to alter the new table.*left as it was"):
        spark.sql("CREATE OR REPLACE TABLE rtas_caps USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY (Key) "
                  f"INTO 8 BUCKETS AS SELECT k AS Key, v FROM {src} WHERE k < 10")
    assert spark_rows(spark, "SELECT * FROM rtas_caps") == before and len(before) == 500
    assert storage(spark, "rtas_caps")["Num Buckets"] == "4" and not _leftovers(spark, "rtas_caps")
    drop(spark, "rtas_caps")


def _default_location(spark, name):
    return os.path.join(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"), name)


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_readers_during_replaces_see_the_old_table_or_the_new_one(spark, src, partitioned):
    """Six REPLACEs, alternating two tables (500 rows ORC v1 / fewer rows Parquet v2), while a second thread reads
    the table in a loop: every read returns one table's rows whole. Unpartitioned, none fails (with the old table
    dropped before the new one was renamed, a read between them found no table, or the files purged under it).
    Partitioned (dropped, then renamed), a read may find no table for that moment; never a table's files gone, never
    one table's partitions read as the other's."""
    import threading

    drop(spark, "rtas_swap", "rtas_swap__bucketkit_replacing")
    part = "PARTITIONED BY (dt)" if partitioned else ""
    a = f"USING hive OPTIONS (fileFormat 'orc') {part} CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v, dt FROM {src}"
    b = (f"USING hive OPTIONS (fileFormat 'parquet') {part} CLUSTERED BY (k) INTO 8 BUCKETS TBLPROPERTIES "
         f"('bucketing_version'='2') AS SELECT k, v, dt FROM {src} WHERE k < 700 OR k IS NULL")
    spark.sql("CREATE TABLE rtas_swap " + a)
    whole = {500, spark.sql(f"SELECT count(*) FROM {src} WHERE k < 700 OR k IS NULL").first()[0]}
    seen, failures, done = [], [], threading.Event()

    def read():
        while not done.is_set():
            try:
                seen.append(spark.sql("SELECT count(*) FROM rtas_swap").first()[0])
            except Exception as e:  # noqa: BLE001 - any failure is the finding
                failures.append(f"{type(e).__name__}: {e}"[:300])

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(6):
            spark.sql("CREATE OR REPLACE TABLE rtas_swap " + (b if i % 2 == 0 else a))
    finally:
        done.set()
        reader.join()
    # partitioned: between the DROP and the RENAME no table (a query that resolved the old table and then got the new
    # table's partitions from the metastore read them as the old table's: 'is not a Parquet file', met once in a full
    # run; now it reads the table it resolved, from its directory)
    allowed = ("TABLE_OR_VIEW_NOT_FOUND",) if partitioned else ()
    assert [f for f in failures if not any(a in f for a in allowed)] == [], failures[:3]
    assert len(seen) >= 6 and set(seen) <= whole, set(seen)
    assert spark_rows(spark, "SELECT * FROM rtas_swap") == spark_rows(spark, f"SELECT k, v, dt FROM {src}")
    home = location(spark, "rtas_swap").removeprefix("file:")
    assert os.path.dirname(home) == _default_location(spark, "rtas_swap")  # inside the table's own directory
    assert os.path.basename(home).startswith(".") and not _leftovers(spark, "rtas_swap")
    checked = bucketkit.validate(load_table(spark, "rtas_swap"))
    assert checked.ok and checked.rows_checked == 500
    drop(spark, "rtas_swap")


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_a_query_that_resolved_a_table_reads_it_whole_after_two_replaces(spark, src, partitioned):
    """A DataFrame analyzed on the table, then two REPLACEs, then run: it reads the table it resolved, whole (Spark's
    rows, catalog off), partitioned or not. The tables a REPLACE replaced stay for the retention period (7 days by default), not only
    until the next REPLACE: with one generation kept, the second REPLACE deleted the files under the reader
    (FAILED_READ_FILE, which the concurrent reader test met once in a full run)."""
    drop(spark, "rtas_held", "rtas_held__bucketkit_replacing")
    part = "PARTITIONED BY (dt)" if partitioned else ""
    ddl = f"USING hive OPTIONS (fileFormat 'orc') {part} CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v, dt FROM {src}"
    spark.sql("CREATE TABLE rtas_held " + ddl + " WHERE k < 300")
    held = spark.table("rtas_held")
    for bound in (500, 700):
        spark.sql(f"CREATE OR REPLACE TABLE rtas_held {ddl} WHERE k < {bound}")
    # partitioned, the metastore lists the live table's partitions when the query runs (Spark's own plan then reads
    # them as the resolved table's, another format or not): bucketkit reads the resolved table from its directory
    read = sorted(map(tuple, held.collect()), key=repr)
    assert read == spark_rows(spark, f"SELECT k, v, dt FROM {src} WHERE k < 300")
    assert spark_rows(spark, "SELECT * FROM rtas_held") == spark_rows(spark, f"SELECT k, v, dt FROM {src} WHERE k < 700")
    drop(spark, "rtas_held")
    assert not os.path.exists(_default_location(spark, "rtas_held"))


def test_a_replace_deletes_the_tables_replaced_longer_ago_than_the_retention(spark):
    """io.bucketkit.layout.TableListing.expiredTables, the rule each REPLACE deletes by: a table in the default
    location (first one: its plain entries; later ones: .bucketkit.table-<millis> and what commits keep beside it) is
    deleted once the table after it was built at least the retention period ago; the live table and the one it
    replaced never are, nor an entry whose time does not parse."""
    listing = spark._jvm.io.bucketkit.layout.TableListing
    entries = ["000000_0", "dt=1", ".hive-staging_x", ".bucketkit.table-1000", "..bucketkit.table-1000.bucketkit.versions",
               ".bucketkit.table-2000", ".bucketkit.table-3000", "..bucketkit.table-3000.bucketkit.lock",
               ".bucketkit.table-x"]

    def expired(home, old, now, retain):
        return sorted(listing.expiredTables(entries, home, old, now, retain))

    first = ["000000_0", ".hive-staging_x", "dt=1"]
    gen1 = [".bucketkit.table-1000", "..bucketkit.table-1000.bucketkit.versions"]
    assert expired(".bucketkit.table-3000", ".bucketkit.table-2000", 3000, 0) == sorted(first + gen1)
    assert expired(".bucketkit.table-3000", ".bucketkit.table-2000", 3000, 2001) == []  # replaced 2000, 1000 ago
    assert expired(".bucketkit.table-3000", ".bucketkit.table-2000", 3000, 2000) == sorted(first)
    assert expired(".bucketkit.table-3000", ".bucketkit.table-2000", 10**6, 1999) == sorted(first + gen1)
    assert expired(".bucketkit.table-3000", "", 10**6, 0) == sorted(gen1 + [".bucketkit.table-2000"])  # old: the location
    assert expired(".bucketkit.table-3000", None, 10**6, 0) == sorted(first + gen1 + [".bucketkit.table-2000"])


def test_which_replaced_tables_expire_is_decided_alike_by_python_and_the_jvm(spark):
    """One rule for the tables a REPLACE keeps: Python's versions.expired_tables (vacuum) and the JVM's
    TableListing.expiredTables (each REPLACE) name the same entries, on generated default locations."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from bucketkit.layout.versions import REPLACED_PREFIX, expired_tables

    listing = spark._jvm.io.bucketkit.layout.TableListing
    assert listing.REPLACED_PREFIX == REPLACED_PREFIX
    millis = st.one_of(st.integers(0, 5000).map(str), st.sampled_from(["", "x", "12ab", "9" * 19, "٣"]))
    entry = st.one_of(st.sampled_from(["000000_0", "dt=1", ".hive-staging", "_SUCCESS", ".bucketkit.live"]),
                      millis.map(lambda m: REPLACED_PREFIX + m),
                      millis.map(lambda m: "." + REPLACED_PREFIX + m + ".bucketkit.versions"))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(entry, max_size=12, unique=True), st.integers(0, 5000).map(lambda m: REPLACED_PREFIX + str(m)),
           st.one_of(st.none(), st.just(""), entry), st.integers(0, 10000), st.integers(0, 6000))
    def same(entries, home, old, now, retain):
        entries = sorted(set(entries) | {home})
        assert expired_tables(entries, home, old, now, retain) == list(
            listing.expiredTables(entries, home, old, now, retain)), (entries, home, old, now, retain)

    same()


def test_vacuum_of_a_replaced_table_removes_the_tables_replaced_before_it(spark, src):
    """bucketkit.vacuum(table, retain=0) of a table REPLACEs swapped in removes the tables they replaced (kept for
    the retention period otherwise) and frees their bytes; the table reads Spark's rows afterwards; dry_run names
    them and removes nothing."""
    drop(spark, "rtas_vac")
    ddl = f"USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v FROM {src}"
    spark.sql(f"CREATE TABLE rtas_vac {ddl} WHERE k < 300")
    for bound in (500, 700):
        spark.sql(f"CREATE OR REPLACE TABLE rtas_vac {ddl} WHERE k < {bound}")
    default = _default_location(spark, "rtas_vac")
    before = sorted(os.listdir(default))
    assert len([e for e in before if e.startswith(".bucketkit.table-")]) == 2, before
    assert any(not e.startswith(".") for e in before), before  # the first table's files
    assert bucketkit.vacuum("rtas_vac", spark=spark).removed_tables == ()  # within the retention period
    planned = bucketkit.vacuum("rtas_vac", spark=spark, retain=0, dry_run=True)
    assert len(planned.removed_tables) >= 2 and sorted(os.listdir(default)) == before
    done = bucketkit.vacuum("rtas_vac", spark=spark, retain=0)
    home = os.path.basename(location(spark, "rtas_vac").removeprefix("file:"))
    assert sorted(done.removed_tables) == sorted(planned.removed_tables) and done.freed_bytes > 0
    assert [e for e in os.listdir(default) if not e.startswith("." + home)] == [home], os.listdir(default)
    assert spark_rows(spark, "SELECT * FROM rtas_vac") == spark_rows(spark, f"SELECT k, v FROM {src} WHERE k < 700")
    drop(spark, "rtas_vac")


def test_the_retention_period_is_read_alike_by_python_and_the_jvm(spark):
    """One rule for BUCKETKIT_RETENTION: Python's versions.retention (commits, vacuum) and the JVM's
    KeptVersions.retention (the tables a REPLACE keeps) accept the same values, as the same seconds, and refuse the
    same ones."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from bucketkit.errors import InvalidArgumentError
    from bucketkit.layout.versions import retention

    kept = spark._jvm.io.bucketkit.layout.KeptVersions

    def python(raw):
        os.environ["BUCKETKIT_RETENTION"] = raw
        try:
            return retention()
        except InvalidArgumentError:
            return "refused"
        finally:
            del os.environ["BUCKETKIT_RETENTION"]

    def jvm(raw):
        try:
            return kept.retention(raw)
        except Exception as e:  # noqa: BLE001 - py4j's wrapper of IllegalArgumentException
            assert "expected seconds >= 0" in str(e)
            return "refused"

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.text(alphabet="0123456789.-+e _x", max_size=8), st.text(max_size=6),
                     st.floats(min_value=0, max_value=1e9).map(str), st.integers(0, 10**12).map(str)))
    def same(raw):
        if "\x00" in raw or not raw.isprintable():  # what an environment variable holds
            return
        assert python(raw) == jvm(raw), raw

    assert kept.retention(None) == 7 * 24 * 3600.0
    same()


def test_a_sql_insert_during_a_replace_is_rolled_back_not_put_into_the_replaced_table(spark, src, tmp_path):
    """An INSERT into a partitioned table whose query is still running when a REPLACE swaps the table: committing it
    would put its rows into the replaced table's directory and its new partition (dt=9) into the new table pointing
    there. The INSERT fails naming the REPLACE, nothing of it committed; the table is the REPLACE's (Spark's rows,
    catalog off). The INSERT's one task waits for the REPLACE to finish (a flag file), on one of local[2]'s cores."""
    import threading
    import time

    from pyspark.sql.types import BooleanType

    drop(spark, "rtas_race")
    ddl = (f"USING hive OPTIONS (fileFormat 'orc') PARTITIONED BY (dt) CLUSTERED BY (k) INTO 4 BUCKETS "
           f"AS SELECT k, v, dt FROM {src}")
    spark.sql(f"CREATE TABLE rtas_race {ddl} WHERE k < 300")
    flag, started = str(tmp_path / "replaced"), str(tmp_path / "started")

    def wait_for_replace(_):
        open(started, "a").close()  # the INSERT is planned and its task runs: its commit is begun
        deadline = time.time() + 120
        while not os.path.exists(flag) and time.time() < deadline:
            time.sleep(0.05)
        return True

    spark.udf.register("bk_wait_for_replace", wait_for_replace, BooleanType())
    failure = []

    def insert():
        try:
            spark.sql("INSERT INTO rtas_race SELECT /*+ COALESCE(1) */ k, v, '9' AS dt FROM "
                      f"(SELECT * FROM {src} LIMIT 20) WHERE bk_wait_for_replace(k)")
        except Exception as e:  # noqa: BLE001 - the finding
            failure.append(str(e))

    writer = threading.Thread(target=insert)
    writer.start()
    try:
        deadline = time.time() + 120
        while not os.path.exists(started) and time.time() < deadline:
            time.sleep(0.05)
        spark.sql(f"CREATE OR REPLACE TABLE rtas_race {ddl} WHERE k < 500")
    finally:
        open(flag, "w").close()
        writer.join()
    assert failure and "was replaced during the write" in failure[0], failure
    assert spark_rows(spark, "SELECT * FROM rtas_race") == spark_rows(spark, f"SELECT k, v, dt FROM {src} WHERE k < 500")
    assert spark_rows(spark, "SHOW PARTITIONS rtas_race") == [("dt=0",), ("dt=1",), ("dt=2",)]
    drop(spark, "rtas_race")


def test_bucketkit_write_during_a_replace_is_rolled_back(spark, src, monkeypatch):
    """bucketkit.write(df, table=...) whose task writes are done when a REPLACE swaps the table: the commit is
    refused (ConcurrentModificationError naming the REPLACE), nothing of it committed; the table is the REPLACE's."""
    import bucketkit.spark.writer as writer
    from bucketkit.errors import ConcurrentModificationError

    drop(spark, "rtas_race2")
    ddl = (f"USING hive OPTIONS (fileFormat 'orc') PARTITIONED BY (dt) CLUSTERED BY (k) INTO 4 BUCKETS "
           f"AS SELECT k, v, dt FROM {src}")
    spark.sql(f"CREATE TABLE rtas_race2 {ddl} WHERE k < 300")

    def replace_now(name, count=None):
        if name == "after_task_writes":
            spark.sql(f"CREATE OR REPLACE TABLE rtas_race2 {ddl} WHERE k < 500")

    monkeypatch.setattr(writer, "fault_point", replace_now)
    with pytest.raises(ConcurrentModificationError, match="rtas_race2 was replaced during this write"):
        bucketkit.write(spark.sql(f"SELECT k, v, '9' AS dt FROM {src} LIMIT 20"), "k", 4, table="rtas_race2",
                        partitioned_by=["dt"], mode="append")
    assert spark_rows(spark, "SELECT * FROM rtas_race2") == spark_rows(spark, f"SELECT k, v, dt FROM {src} WHERE k < 500")
    drop(spark, "rtas_race2")


def test_a_replace_whose_column_type_the_metastore_refuses_in_place_still_replaces(spark, src):
    """Hive refuses changing v from STRING to INT in place (hive.metastore.disallow.incompatible.col.type.changes, as
    an ALTER through Hive's client shows): that REPLACE drops the old table and renames the new one, rows Spark's."""
    drop(spark, "rtas_retype", "rtas_retype_probe")
    spark.sql(f"CREATE TABLE rtas_retype STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v FROM {src}")
    spark.sql("CREATE OR REPLACE TABLE rtas_retype USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY (k) INTO 4 "
              f"BUCKETS AS SELECT k, CAST(substr(v, 2) AS INT) AS v FROM {src}")
    assert dict(spark.table("rtas_retype").dtypes) == {"k": "int", "v": "int"}
    assert spark_rows(spark, "SELECT * FROM rtas_retype") == spark_rows(
        spark, f"SELECT k, CAST(substr(v, 2) AS INT) AS v FROM {src}")
    described = {r.col_name: r.data_type for r in spark.sql("DESCRIBE FORMATTED rtas_retype").collect()}
    assert described["Type"] == "MANAGED" and not _leftovers(spark, "rtas_retype")
    assert bucketkit.validate(load_table(spark, "rtas_retype")).ok
    drop(spark, "rtas_retype")


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_a_replaced_table_dropped_frees_its_name_and_location(spark, src, partitioned):
    """After REPLACE then DROP TABLE, nothing of the table is left in the warehouse, and CREATE TABLE of the name
    (which Spark refuses where the default location holds files) works. Partitioned: the REPLACE swaps by rename."""
    drop(spark, "rtas_gone")
    part = "PARTITIONED BY (dt)" if partitioned else ""
    spark.sql(f"CREATE TABLE rtas_gone STORED AS ORC {part} CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v, dt FROM {src}")
    spark.sql(f"CREATE OR REPLACE TABLE rtas_gone USING hive OPTIONS (fileFormat 'orc') {part} CLUSTERED BY (k) "
              f"INTO 8 BUCKETS AS SELECT k, v, dt FROM {src} WHERE k < 300")
    assert spark_rows(spark, "SELECT * FROM rtas_gone") == spark_rows(spark, f"SELECT k, v, dt FROM {src} WHERE k < 300")
    drop(spark, "rtas_gone")
    assert not os.path.exists(_default_location(spark, "rtas_gone"))
    spark.sql("CREATE TABLE rtas_gone STORED AS ORC AS SELECT 1 AS a")
    assert spark.table("rtas_gone").count() == 1
    drop(spark, "rtas_gone")


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_a_replaced_table_renamed_moves_its_directory_with_its_name(spark, src, partitioned):
    """The metastore moves a managed table's files on RENAME only where it is located at its default path; a replaced
    table is located inside it, so bucketkit moves that directory with the name, and each partition's location with
    it. The old name is then free (CREATE TABLE of it works: Spark refuses a taken default location), and a DROP under
    the new name leaves nothing. Failed before, partitioned: the partitions stayed located in the old name's
    directory, which had moved, and the table read no row (catalog on and off)."""
    drop(spark, "rtas_moved", "rtas_moved2")
    p, by = (", CAST(k % 3 AS STRING) AS p", "PARTITIONED BY (p) ") if partitioned else ("", "")
    spark.sql(f"CREATE TABLE rtas_moved STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k, v FROM {src}")
    spark.sql(f"CREATE OR REPLACE TABLE rtas_moved USING hive OPTIONS (fileFormat 'orc') {by}CLUSTERED BY (k) INTO 8 "
              f"BUCKETS AS SELECT k, v{p} FROM {src} WHERE k < 300")
    spark.sql("ALTER TABLE rtas_moved RENAME TO rtas_moved2")
    home = _default_location(spark, "rtas_moved2") + "/"
    assert location(spark, "rtas_moved2").removeprefix("file:").startswith(home)
    if partitioned:
        for part in ("0", "1", "2"):
            where = spark.sql(f"DESCRIBE FORMATTED rtas_moved2 PARTITION (p='{part}')").where("col_name = 'Location'")
            assert where.first()[1].removeprefix("file:").startswith(home), part
    assert not os.path.exists(_default_location(spark, "rtas_moved"))
    expected = spark_rows(spark, f"SELECT k, v{p} FROM {src} WHERE k < 300")
    assert len(expected) == 138 and spark_rows(spark, "SELECT * FROM rtas_moved2") == expected
    assert rows_of(spark, "SELECT * FROM rtas_moved2") == expected
    assert bucketkit.validate(load_table(spark, "rtas_moved2")).ok
    spark.sql("CREATE TABLE rtas_moved STORED AS ORC AS SELECT 1 AS a")
    drop(spark, "rtas_moved", "rtas_moved2")
    assert not os.path.exists(_default_location(spark, "rtas_moved2"))


def test_a_dropped_managed_table_takes_its_kept_versions_with_it(spark, src):
    """A managed table bucketkit's INSERT wrote keeps its versions beside its directory, in the warehouse
    (.<table>.bucketkit.versions, the lock); its DROP deletes them with its files, as the metastore deletes a managed
    table's files: the database directory lists no entry of it afterwards (issue 48). An external table keeps them."""
    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")

    def beside(name):
        return sorted(e for e in os.listdir(warehouse) if e.startswith(f".{name}.bucketkit"))

    drop(spark, "ctas_kept")
    spark.sql("CREATE TABLE ctas_kept STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS TBLPROPERTIES "
              f"('bucketing_version'='2') AS SELECT k, v FROM {src}")
    spark.sql(f"INSERT OVERWRITE TABLE ctas_kept SELECT k, v FROM {src} WHERE k < 100")
    assert ".ctas_kept.bucketkit.versions" in beside("ctas_kept")
    drop(spark, "ctas_kept")
    assert beside("ctas_kept") == [] and not os.path.exists(_default_location(spark, "ctas_kept"))


def test_ctas_column_types_are_sparks_own(spark):
    """VARCHAR/CHAR casts in the query: the table's columns are those Spark's own CTAS gives (catalog off)."""
    spark.sql("CREATE OR REPLACE TEMP VIEW ctas_typed_src AS SELECT CAST(id AS INT) AS k, "
              "CAST(CONCAT('v', id) AS VARCHAR(10)) AS v, CAST('x' AS CHAR(3)) AS c, CAST(id AS DECIMAL(9, 2)) AS d "
              "FROM range(20)")
    described = {}
    for name, off in (("ctas_typed_on", False), ("ctas_typed_off", True)):
        drop(spark, name)
        ddl = f"CREATE TABLE {name} STORED AS ORC CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT * FROM ctas_typed_src"
        if off:
            with catalog_off(spark):
                spark.sql(ddl)
        else:
            spark.sql(ddl)
        described[off] = [(r.col_name, r.data_type) for r in spark.sql(f"DESCRIBE {name}").collect()]
    assert described[False] == described[True] and described[True][0] == ("k", "int")
    assert spark_rows(spark, "SELECT * FROM ctas_typed_on") == spark_rows(spark, "SELECT * FROM ctas_typed_off")
    drop(spark, "ctas_typed_on", "ctas_typed_off")
