"""table=: Hive bucketed tables in the session catalog, read by Spark SQL; Spark's v1 INSERT guard."""

from __future__ import annotations

import re
import warnings

import pytest

import bucketkit
from bucketkit.errors import (InvalidArgumentError, SpecMismatchError, TableExistsError, TableNotFoundError,
                              ViewError)
from bucketkit.hashing.hive import bucket_number, hive_hash
from bucketkit.layout.naming import bucket_of
from bucketkit.spark.catalog import MANAGED_PROPERTY, load_table, spark_written_files
from support.sparkown import spark_insert, spark_insert_into_v2


@pytest.fixture(scope="module")
def source(spark):
    return spark.range(300).selectExpr("id % 97 as k", "concat('v', cast(id as string)) as v",
                                       "case when id % 4 = 0 then null else cast(id % 2 as string) end as p")


def rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_catalog_table_reads_in_spark_sql_and_describes_its_buckets(spark, source):
    result = bucketkit.write(source, "k", 8, table="cat_v1", partitioned_by="p", bucketing_version=1,
                             sorted_by=["k"], create_empty_bucket_files=True)
    assert result.table == "cat_v1" and result.rows == 300
    assert rows(spark.table("cat_v1").select("k", "v", "p")) == rows(source)
    described = {r.col_name: r.data_type for r in spark.sql("DESCRIBE FORMATTED cat_v1").collect()}
    assert described["Num Buckets"] == "8"
    assert described["Bucket Columns"] == "[`k`]" and described["Sort Columns"] == "[`k`]"
    assert "bucketing_version=1" in described["Table Properties"]
    assert f"{MANAGED_PROPERTY}=true" in described["Table Properties"]
    parts = {r.partition for r in spark.sql("SHOW PARTITIONS cat_v1").collect()}
    assert parts == {"p=0", "p=1", "p=__HIVE_DEFAULT_PARTITION__"}
    # Spark's Hive reader sees the NULL partition as NULL, and a pruned partition read works
    assert spark.table("cat_v1").where("p is null").count() == source.where("p is null").count()


def test_load_table_reads_the_spec_back(spark, source):
    bucketkit.write(source, "k", 4, table="cat_v2", bucket_types={"k": "bigint"})
    table = load_table(spark, "cat_v2")
    spec = table.spec
    assert (spec.bucketed_by, spec.bucket_types, spec.bucket_count, spec.bucketing_version) == (("k",), ("bigint",), 4, 2)
    assert spec.columns == (("k", "bigint"), ("v", "string"), ("p", "string"))
    assert spec.file_format == "orc" and table.name == "cat_v2"
    for f in bucketkit.write(source, "k", 4, table="cat_v2", mode="append").files:
        assert bucket_of(f.path.rsplit("/", 1)[-1]) == f.bucket
    assert spark.table("cat_v2").count() == 600


def test_load_table_of_a_table_spark_created(spark, tmp_path):
    spark.sql(f"CREATE TABLE spark_made (a int, b varchar(10)) PARTITIONED BY (d date) CLUSTERED BY (a, b) "
              f"SORTED BY (a) INTO 6 BUCKETS STORED AS PARQUET LOCATION '{tmp_path}/sm'")
    spec = load_table(spark, "spark_made").spec
    assert spec.bucketing_version == 1  # no property: Trino's rule
    assert spec.bucket_types == ("int", "varchar(10)") and spec.partition_types == ("date",)
    assert spec.file_format == "parquet" and [s.column for s in spec.sorted_by] == ["a"]


def test_a_write_into_an_existing_table_follows_its_options_as_an_insert_does(spark, source, tmp_path):
    """A Hive bucketed table Spark's DDL made has no bucketing_version property: v1, by Hive's and Trino's rule.
    ``bucketkit.write(df, "k", 4, table=..., mode="append")`` into it, with no version given, failed ("table has 1,
    write has 2"), where an INSERT follows the table. It now writes the table's version; one given and different is
    still refused. Placement checked against Hive's own v1 bucket function (ObjectInspectorUtils)."""
    from support.hive_oracle import HiveOracle

    spark.sql(f"CREATE TABLE follows_v1 (k bigint, v string, p string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path}/follows_v1'")
    result = bucketkit.write(source.limit(200), "k", 4, table="follows_v1", mode="append")
    assert result.spec.bucketing_version == 1
    hive = HiveOracle(spark)
    placed = spark.table("follows_v1").selectExpr("k", "input_file_name() AS f").collect()
    assert len(placed) == 200
    assert all(bucket_of(r.f.rsplit("/", 1)[-1]) == hive.v1_bucket([r.k], ["bigint"], 4) for r in placed)
    with pytest.raises(SpecMismatchError, match="bucketing_version: table has 1, write has 2"):
        bucketkit.write(source, "k", 4, table="follows_v1", mode="append", bucketing_version=2)
    # partitioned, sorted, Parquet: the options not given follow the table too
    spark.sql(f"CREATE TABLE follows_all (k bigint, v string) PARTITIONED BY (p string) CLUSTERED BY (k) SORTED BY (k) "
              f"INTO 4 BUCKETS STORED AS PARQUET LOCATION '{tmp_path}/follows_all'")
    result = bucketkit.write(source.limit(200), "k", 4, table="follows_all", mode="append")
    assert (result.spec.file_format, result.spec.partitioned_by, [s.column for s in result.spec.sorted_by],
            result.spec.bucketing_version) == ("parquet", ("p",), ["k"], 1)
    assert rows(spark.table("follows_all").select("k", "v", "p")) == rows(source.limit(200).select("k", "v", "p"))
    assert all(f.path.endswith(".parquet") for f in result.files)


def test_catalog_modes_and_mismatch(spark, source):
    bucketkit.write(source, "k", 4, table="cat_modes")
    with pytest.raises(TableExistsError):
        bucketkit.write(source, "k", 4, table="cat_modes")
    assert bucketkit.write(source, "k", 4, table="cat_modes", mode="ignore").skipped
    with pytest.raises(SpecMismatchError, match="bucket_count"):
        bucketkit.write(source, "k", 8, table="cat_modes", mode="overwrite")
    bucketkit.write(source.limit(10), "k", 4, table="cat_modes", mode="overwrite")
    assert spark.table("cat_modes").count() == 10
    with pytest.raises(InvalidArgumentError, match="ascending"):
        bucketkit.write(source, "k", 4, table="cat_desc", sorted_by=["k DESC"])


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_name_written_again_after_drop_table_does_not_take_in_the_dropped_tables_rows(spark, source, partitioned):
    """``bucketkit.write(table=)`` creates an EXTERNAL table, whose DROP keeps its files. Writing the name again
    created the table over them: "created with N rows" and a table of the old rows plus the new ones (unpartitioned),
    or old partitions left to come back with MSCK REPAIR. As Spark's saveAsTable does for a location that is not empty
    (LOCATION_ALREADY_EXISTS), the write is refused naming the location; mode='overwrite' replaces the files, and
    Spark's own read (the golden rows) sees the new rows only."""
    name = "cat_again_p" if partitioned else "cat_again"
    kw = {"partitioned_by": "p"} if partitioned else {}
    bucketkit.write(source, "k", 4, table=name, **kw)
    spark.sql(f"DROP TABLE {name}")
    new = source.where("k < 10").selectExpr("k", "upper(v) AS v", "p")
    for mode in ("error", "append", "ignore"):
        with pytest.raises(TableExistsError, match=rf"table {name} is not in the catalog, but its location "
                                                   rf"\S+/{name} holds a table's files \(such as \S+\.orc"):
            bucketkit.write(new, "k", 4, table=name, mode=mode, **kw)
    assert not spark.catalog.tableExists(name)
    bucketkit.write(new, "k", 4, table=name, mode="overwrite", **kw)
    assert rows(spark.table(name).select("k", "v", "p")) == rows(new)
    if partitioned:
        spark.sql(f"MSCK REPAIR TABLE {name}")
        assert rows(spark.table(name).select("k", "v", "p")) == rows(new)


def test_overwrite_table_scope_drops_old_catalog_partitions(spark, source):
    bucketkit.write(source, "k", 4, table="cat_parts", partitioned_by="p")
    bucketkit.write(source.where("p = '1'"), "k", 4, table="cat_parts", partitioned_by="p", mode="overwrite")
    assert [r.partition for r in spark.sql("SHOW PARTITIONS cat_parts").collect()] == ["p=1"]
    assert spark.table("cat_parts").count() == source.where("p = '1'").count()


def test_spark_insert_into_a_v2_table_writes_v1_hashes_and_bucketkit_warns(spark, source):
    bucketkit.write(source, "k", 8, table="cat_guard", bucketing_version=2)
    source.createOrReplaceTempView("guard_src")
    spark_insert_into_v2(spark, "cat_guard", "INSERT INTO cat_guard SELECT k, v, p FROM guard_src")  # Spark accepts it ...
    foreign = spark_written_files(load_table(spark, "cat_guard"))
    assert foreign, "Spark's insert should have left files named like 00001_0_part-..."
    table = load_table(spark, "cat_guard")
    misplaced = 0
    for r in spark.table("cat_guard").selectExpr("k", "input_file_name() as f").collect():
        name = r.f.rsplit("/", 1)[-1]
        if any(name == f.rsplit("/", 1)[-1] for f in foreign):
            misplaced += bucket_of(name) != bucket_number(hive_hash([r.k], ["bigint"], 2), 8)
            assert bucket_of(name) == bucket_number(hive_hash([r.k], ["bigint"], 1), 8)  # ... with v1 hashes
    assert misplaced > 0 and table.spec.bucketing_version == 2
    with pytest.warns(UserWarning, match=re.escape("written by Spark's own INSERT")):
        bucketkit.write(source, "k", 8, table="cat_guard", mode="append")


def test_views_are_read_as_spark_sql_reads_them_and_refused_as_tables(spark, source):
    """A view (temporary or not) is a name Spark's tableExists is true of, with no files: bucketkit.scan read it
    with a raw IllegalArgumentException from the JVM, and a write into it, or into a database that does not exist,
    raised Spark's AnalysisException. bucketkit.scan now reads a view as Spark SQL does (Spark's rows, the golden
    values); what needs a table's files says the name is a view, and a missing database is named."""
    bucketkit.write(source, "k", 4, table="cat_under_view")
    spark.sql("CREATE OR REPLACE VIEW cat_view AS SELECT k, v FROM cat_under_view WHERE p = '1'")
    source.createOrReplaceTempView("cat_temp_view")
    for view in ("cat_view", "cat_temp_view"):
        want = spark.table(view).where("k IN (3, 5)").select("v")
        assert rows(bucketkit.scan(spark, view, filters=[("k", "in", [3, 5])], columns=["v"])) == rows(want)
        with pytest.raises(InvalidArgumentError, match=rf"'{view}' is a view, read through Spark SQL"):
            bucketkit.scan(spark, view, as_of=0)
        with pytest.raises(ViewError, match=rf"'{view}' is a (temporary )?view, not a table"):
            bucketkit.plan_scan(view, spark=spark)
        with pytest.raises(ViewError, match=rf"'{view}' is a (temporary )?view, not a table"):
            bucketkit.write(source, "k", 4, table=view, mode="append")
    with pytest.raises(TableNotFoundError, match="table no_such_db.t: database 'no_such_db' does not exist"):
        bucketkit.write(source, "k", 4, table="no_such_db.t")


def test_a_write_casts_columns_into_the_tables_wider_types_as_sparks_insert_does(spark, source):
    """An int key appended to a bigint table (and a float into double) was refused (SpecMismatchError) where Spark's
    own INSERT casts it: the rows now go in as the table's types, hashed as them. Golden values: Spark's INSERT of
    the same rows into a table of the same columns with the catalog off (its rows), and the placement by Hive's own
    hash as bucketkit.validate re-hashes it; a narrowing is still refused, naming both types."""
    from pyspark.sql import functions as F

    spark.sql("DROP TABLE IF EXISTS cat_wide")
    spark.sql("DROP TABLE IF EXISTS cat_wide_spark")
    spark.sql("CREATE TABLE cat_wide (k bigint, x double, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("CREATE TABLE cat_wide_spark (k bigint, x double, v string) STORED AS ORC")
    narrow = source.select(F.col("k").cast("int").alias("k"), (F.col("k") / 4).cast("float").alias("x"), "v")
    bucketkit.write(narrow, "k", 4, table="cat_wide", mode="append")
    narrow.createOrReplaceTempView("cat_wide_src")
    spark.sql("INSERT INTO cat_wide_spark SELECT * FROM cat_wide_src")
    assert rows(spark.table("cat_wide")) == rows(spark.table("cat_wide_spark"))
    location = spark.sql("DESCRIBE FORMATTED cat_wide").where("col_name = 'Location'").first()[1]
    assert bucketkit.validate(location).ok
    with pytest.raises(SpecMismatchError, match=r"table has \['bigint'\], write has \['string'\]"):
        bucketkit.write(narrow.withColumn("k", F.col("k").cast("string")), "k", 4, table="cat_wide", mode="append")
