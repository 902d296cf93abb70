"""ALTER TABLE and friends on bucketed tables through bucketkit's catalog (issue 29).

For each statement Spark runs on a Hive table, on ORC and Parquet tables, partitioned and not: rows
are written through the catalog, the statement runs, the rows read with the catalog on equal Spark's
own plan with it off (a full read and a key lookup), then an INSERT follows the change, and the rows
are compared again and every row sits in its bucket (``validate``). Golden rows: Spark's own plan.
"""

from __future__ import annotations

import pytest
from support.sparkown import rows_of, spark_rows

import bucketkit
from bucketkit.spark.catalog import load_table

pytestmark = pytest.mark.spark


def same_rows(spark, table, key=7):
    for sql in (f"SELECT * FROM {table}", f"SELECT * FROM {table} WHERE k = {key}"):
        assert rows_of(spark, sql) == spark_rows(spark, sql), sql


def insert(spark, table, start, partitioned, extra=""):
    p = ", IF(id % 2 = 0, 'a', 'b')" if partitioned else ""
    spark.sql(f"INSERT INTO {table} SELECT CAST(id AS INT), CONCAT('v', CAST(id AS STRING)){extra}{p} "
              f"FROM range({start}, {start + 200})")


STATEMENTS = {
    "ADD COLUMNS": ["ALTER TABLE {t} ADD COLUMNS (w int)"],
    "CHANGE COLUMN comment": ["ALTER TABLE {t} CHANGE COLUMN v v string COMMENT 'the value'"],
    "SET/UNSET TBLPROPERTIES": ["ALTER TABLE {t} SET TBLPROPERTIES ('owner.team'='data')",
                                "ALTER TABLE {t} UNSET TBLPROPERTIES ('owner.team')"],
    "RENAME": ["ALTER TABLE {t} RENAME TO {t}_renamed", "ALTER TABLE {t}_renamed RENAME TO {t}"],
    "SET SERDEPROPERTIES": ["ALTER TABLE {t} SET SERDEPROPERTIES ('note'='x')"],
    "TRUNCATE": ["TRUNCATE TABLE {t}"],
    "ADD/DROP PARTITION": ["ALTER TABLE {t} ADD PARTITION (p='z')", "ALTER TABLE {t} DROP PARTITION (p='a')"],
    "RENAME PARTITION": ["ALTER TABLE {t} PARTITION (p='b') RENAME TO PARTITION (p='c')"],
    "ANALYZE, MSCK REPAIR, SHOW (PARTITION)": ["ANALYZE TABLE {t} COMPUTE STATISTICS FOR COLUMNS k",
                                               "MSCK REPAIR TABLE {t}", "SHOW PARTITIONS {t}"],
}
CASES = [(fmt, part, name) for fmt, part in (("ORC", False), ("ORC", True), ("PARQUET", False))
         for name in STATEMENTS if part or "PARTITION" not in name]


@pytest.mark.parametrize("fmt, partitioned, statement", CASES)
def test_statement_then_reads_and_inserts(spark, fmt, partitioned, statement):
    t = f"ddl_{fmt.lower()}_{int(partitioned)}"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    spark.sql(f"DROP TABLE IF EXISTS {t}_renamed")
    spark.sql(f"CREATE TABLE {t} (k int, v string) {'PARTITIONED BY (p string)' if partitioned else ''} "
              f"CLUSTERED BY (k) INTO 4 BUCKETS STORED AS {fmt} TBLPROPERTIES ('bucketing_version'='2')")
    try:
        insert(spark, t, 0, partitioned)
        same_rows(spark, t)
        for sql in STATEMENTS[statement]:  # with the catalog on, as a user runs them
            spark.sql(sql.format(t=t))
        same_rows(spark, t)
        assert bucketkit.sql_status(spark, t).bucketed, bucketkit.sql_status(spark, t)
        insert(spark, t, 1000, partitioned, ", 5" if statement == "ADD COLUMNS" else "")
        same_rows(spark, t, key=1007)
        check = bucketkit.validate(load_table(spark, t))
        assert check.ok and check.rows_checked == len(spark_rows(spark, f"SELECT * FROM {t}"))
        assert bucketkit.sql_status(spark, t).bucketed
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")
        spark.sql(f"DROP TABLE IF EXISTS {t}_renamed")


@pytest.mark.parametrize("statement, reason", [
    ("ALTER TABLE {t} SET TBLPROPERTIES ('bucketing_version'='1')", "bucketing_version"),
])
def test_a_change_that_makes_the_files_lie_is_read_unbucketed_and_refused_for_inserts(spark, statement, reason):
    t = "ddl_lie"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    spark.sql(f"CREATE TABLE {t} (k int, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              f"TBLPROPERTIES ('bucketing_version'='2')")
    try:
        insert(spark, t, 0, False)
        spark.sql(statement.format(t=t))
        status = bucketkit.sql_status(spark, t)
        assert not status.bucketed and reason in status.detail, status
        same_rows(spark, t)
        with pytest.raises(Exception, match=reason):
            insert(spark, t, 1000, False)
        bucketkit.rebucket(spark, t)  # the supported way: the files rewritten as the table now says
        assert bucketkit.sql_status(spark, t).bucketed
        insert(spark, t, 1000, False)
        assert bucketkit.validate(load_table(spark, t)).ok
        same_rows(spark, t, key=1007)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


@pytest.mark.parametrize("partitioned", [False, True])
def test_set_location_to_a_copy(spark, tmp_path, partitioned):
    import shutil

    t = f"ddl_loc_{int(partitioned)}"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    spark.sql(f"CREATE TABLE {t} (k int, v string) {'PARTITIONED BY (p string)' if partitioned else ''} "
              f"CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC LOCATION '{tmp_path / 'old'}' "
              f"TBLPROPERTIES ('bucketing_version'='2')")
    try:
        insert(spark, t, 0, partitioned)
        shutil.copytree(tmp_path / "old", tmp_path / "new")
        spark.sql(f"ALTER TABLE {t} SET LOCATION '{tmp_path / 'new'}'")
        if partitioned:  # partitions keep their own locations (Hive's rule): point them at the copy too
            for p in ("a", "b"):
                spark.sql(f"ALTER TABLE {t} PARTITION (p='{p}') SET LOCATION '{tmp_path / 'new' / f'p={p}'}'")
        shutil.rmtree(tmp_path / "old")
        same_rows(spark, t)
        insert(spark, t, 1000, partitioned)
        same_rows(spark, t, key=1007)
        assert bucketkit.validate(load_table(spark, t)).ok
        assert not (tmp_path / "old").exists()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_clustered_by_cannot_be_altered_in_spark_sql_rebucket_does_it(spark):
    spark.sql("DROP TABLE IF EXISTS ddl_cl")
    spark.sql("CREATE TABLE ddl_cl (k int, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
    try:
        with pytest.raises(Exception, match="ALTER TABLE CLUSTERED BY is not valid"):
            spark.sql("ALTER TABLE ddl_cl CLUSTERED BY (v) INTO 8 BUCKETS")
    finally:
        spark.sql("DROP TABLE IF EXISTS ddl_cl")
