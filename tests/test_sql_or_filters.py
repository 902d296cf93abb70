"""WHERE clauses with OR (and NOT over AND, which Spark turns into an OR) whose one side has no data-source filter
form (arithmetic, a function, a boolean comparison) return Spark's rows through bucketkit's catalog, bucketkit.scan
and the ``bucketkit`` data source. Spark's ``PredicateUtils.toV1`` turns such an OR into its other side, and the
catalog's reader, given that as a row-group filter, skipped rows the query keeps. Expected rows: the same SQL with
the catalog off."""

from __future__ import annotations

import pytest

import bucketkit
from support.sparkown import rows_of, spark_rows

WHERE = ["k + 1 > 6 OR k IS NULL", "v + 1 > 3 OR s IS NULL", "upper(s) = 'B' OR v = 1",
         "NOT (v + 1 > 3 AND s IS NOT NULL)", "v * 2 = 4 OR k = 7", "(k = 5 AND v + 0 = 1) OR (s = 'c' AND v < 9)",
         "NOT (k = 6 OR upper(s) = 'A')", "k = 5 OR k = 7"]


@pytest.fixture(scope="module")
def tables(spark):
    names = []
    for fmt, version in (("ORC", 2), ("PARQUET", 1)):
        name = f"or_filters_{fmt.lower()}"
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} (k int, v int, s string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS {fmt} "
                  f"TBLPROPERTIES ('bucketing_version'='{version}')")
        spark.sql(f"INSERT INTO {name} VALUES (5, 1, 'a'), (6, 2, 'b'), (NULL, 3, NULL), (7, 4, 'c')")
        names.append(name)
    spark.sql("DROP TABLE IF EXISTS or_filters_bool")
    spark.sql("CREATE TABLE or_filters_bool (k boolean, v int) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("INSERT INTO or_filters_bool VALUES (true, 1), (false, 2), (NULL, 3), (true, 4)")
    yield names
    for name in names + ["or_filters_bool"]:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("where", WHERE)
def test_an_or_returns_sparks_rows_in_sql_scan_and_the_data_source(spark, tables, where):
    for name in tables:
        sql = f"SELECT k, v, s FROM {name} WHERE {where}"
        golden = spark_rows(spark, sql)
        assert rows_of(spark, sql) == golden, name
        assert sorted(map(tuple, bucketkit.scan(spark, name, filters=where).select("k", "v", "s").collect()),
                      key=repr) == golden, name
        location = spark.sql(f"DESCRIBE FORMATTED {name}").where("col_name = 'Location'").first().data_type
        data_source = spark.read.format("bucketkit").option("bucketing_version", "2" if "orc" in name else "1") \
            .option("bucketed_by", "k").option("bucket_count", "4").option("bucket_types", "int") \
            .option("table_columns", "k int, v int, s string").load(location).where(where).select("k", "v", "s")
        assert sorted(map(tuple, data_source.collect()), key=repr) == golden, name


def test_a_boolean_key_compared_in_an_or(spark, tables):
    sql = "SELECT k, v FROM or_filters_bool WHERE k > false OR k IS NULL"
    golden = spark_rows(spark, sql)
    assert len(golden) == 3
    assert rows_of(spark, sql) == golden
