"""One verdict per table (issue 47): Spark SQL through bucketkit's catalog and the Python API
(``plan_scan``, ``bucketkit.scan``) read a table bucketed or unbucketed alike, for the same reason.

Each table kind is made as its users make it (SQL DDL and INSERT, or bucketkit.write then an EXTERNAL
table over the files). The SQL side's verdict is the catalog's own (``sql_status`` asks
``HiveBucketedTable.vouch``, what a query's table resolution runs); the Python side's is the scan plan.
Golden rows: Spark's own reader with the catalog off.
"""

from __future__ import annotations

import pytest
from support.sparkown import catalog_off, final_plan, scans, spark_rows

import bucketkit

pytestmark = pytest.mark.spark

ZEROS = "0.0 and -0.0"


def _external(spark, tmp_path, name, df, by, ddl, version, fmt="ORC"):
    path = str(tmp_path / name)
    bucketkit.write(df.repartition(1), by, 4, path=path, bucketing_version=version, file_format=fmt.lower())
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE EXTERNAL TABLE {name} ({ddl}) CLUSTERED BY ({', '.join(by)}) INTO 4 BUCKETS STORED AS {fmt} "
              f"LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='{version}')")


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    """name -> (the filter read, the reason both sides give for reading unbucketed, or None: bucketed)."""
    tmp = tmp_path_factory.mktemp("one_verdict")
    zeros = spark.createDataFrame([(0.0, "pos"), (-0.0, "neg"), (1.5, "x"), (-2.25, "y")] +
                                  [(float(i), f"v{i}") for i in range(3, 60)], "d double, v string")
    _external(spark, tmp, "ov_double", zeros, ["d"], "d DOUBLE, v STRING", 2)
    _external(spark, tmp, "ov_float", zeros.selectExpr("CAST(d AS FLOAT) AS f", "v"), ["f"], "f FLOAT, v STRING", 1,
              "PARQUET")
    ints = spark.range(200).selectExpr("CAST(id AS INT) AS k", "CAST(id % 7 AS INT) AS j", "CONCAT('v', id) AS v")
    _external(spark, tmp, "ov_int", ints.select("k", "v"), ["k"], "k INT, v STRING", 2)
    _external(spark, tmp, "ov_multi", ints, ["k", "j"], "k INT, j INT, v STRING", 2)
    spark.sql("DROP TABLE IF EXISTS ov_text")
    spark.sql("CREATE TABLE ov_text (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS TEXTFILE "
              "TBLPROPERTIES ('bucketing_version'='1')")
    spark.sql("INSERT INTO ov_text SELECT CAST(id AS INT), CONCAT('v', id) FROM range(200)")  # bucketkit's writer, v1
    yield {"ov_double": ("d = 0.0", ZEROS), "ov_float": ("f = 0.0", ZEROS), "ov_int": ("k = 42", None),
           "ov_text": ("k = 42", None), "ov_multi": ("k = 42 AND j = 0", None)}
    for name in ("ov_double", "ov_float", "ov_int", "ov_multi", "ov_text"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def _python_verdict(spark, name):
    """(bucketed, reason) of the Python API: the scan plan's, or, for a table bucketkit.scan reads through the
    catalog (TEXTFILE), whether its DataFrame's plan holds bucketkit's scan."""
    try:
        plan = bucketkit.plan_scan(name, spark=spark)
    except bucketkit.InvalidArgumentError as exc:
        assert "TEXTFILE" in str(exc)
        df = bucketkit.scan(spark, name)
        df.collect()
        return bool(scans(final_plan(df))), None
    return plan.unbucketed is None, plan.unbucketed


@pytest.mark.parametrize("name", ["ov_double", "ov_float", "ov_int", "ov_text", "ov_multi"])
def test_sql_and_the_python_api_give_one_verdict_and_one_reason(spark, tables, name):
    where, because = tables[name]
    status = bucketkit.sql_status(spark, name)
    bucketed, reason = _python_verdict(spark, name)
    assert status.bucketed == bucketed, (status, reason)
    assert status.bucketed == (because is None), status
    if because is not None:
        assert because in status.detail and because in reason, (status.detail, reason)


@pytest.mark.parametrize("name", ["ov_double", "ov_float", "ov_int", "ov_text", "ov_multi"])
def test_both_return_sparks_rows(spark, tables, name):
    where, _ = tables[name]
    sql = f"SELECT * FROM {name} WHERE {where}"
    golden = spark_rows(spark, sql)
    assert golden, sql
    if name in ("ov_double", "ov_float"):
        assert sorted(r[1] for r in golden) == ["neg", "pos"]  # Spark's equality: both zeros
    assert sorted(tuple(r) for r in spark.sql(sql).collect()) == golden
    assert sorted(tuple(r) for r in bucketkit.scan(spark, name, filters=where).collect()) == golden
    with catalog_off(spark):
        assert sorted(tuple(r) for r in spark.table(name).where(where).collect()) == golden


def test_a_join_on_a_double_key_is_sparks_join_on_both_sides(spark, tables):
    """bucketkit.join and SQL both join such a table as Spark does; the rows are Spark's (both zeros pair)."""
    plan = bucketkit.plan_join("ov_double", "ov_double", on="d", spark=spark)
    assert plan.strategy != "bucketed" and ZEROS in plan.reason, plan.reason
    sql = "SELECT a.v, b.v FROM ov_double a JOIN ov_double b ON a.d = b.d WHERE a.d = 0.0"
    assert sorted(tuple(r) for r in spark.sql(sql).collect()) == spark_rows(spark, sql)
    assert len(spark_rows(spark, sql)) == 4
