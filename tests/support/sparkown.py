"""Spark's own behaviour beside bucketkit's catalog, for golden files and golden results.

The test session runs with bucketkit's catalog (io.bucketkit.spark.BucketkitCatalog), which reads
Hive bucketed tables as bucketed and writes INSERTs into them with bucketkit's writer. Tests that
need what Spark itself writes or plans (Spark's Hive INSERT, with its v1 hash and its
``00000_0_part-*`` names; Spark's unbucketed reads) switch it off for one statement.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

SWITCH = "spark.bucketkit.catalog.enabled"


@contextmanager
def no_broadcast(spark):
    """Spark broadcasts no side of a join inside the block (tests' tables are small enough for it)."""
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        yield
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)


@contextmanager
def catalog_off(spark):
    """Spark plans and writes Hive tables its own way inside the block."""
    spark.conf.set(SWITCH, "false")
    try:
        yield
    finally:
        spark.conf.unset(SWITCH)


def rows_of(spark, sql: str) -> list[tuple]:
    """The rows of ``sql`` as tuples, in one order (by repr): compare catalog on with catalog off."""
    return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)


def spark_rows(spark, sql: str) -> list[tuple]:
    """:func:`rows_of` with Spark's own plan (catalog off): the golden rows."""
    with catalog_off(spark):
        return rows_of(spark, sql)


def rows_by_bucket(spark, table: str) -> dict[int, set[tuple]]:
    """Each bucket's rows of ``table`` (its files' names say the bucket), read by Spark's own plan."""
    from bucketkit.layout.naming import bucket_of

    out: dict[int, set[tuple]] = {}
    for r in spark_rows(spark, f"SELECT input_file_name(), * FROM {table}"):
        out.setdefault(bucket_of(r[0].rsplit("/", 1)[-1]), set()).add(r[1:])
    return out


def spark_insert(spark, statement: str) -> None:
    """Run an ``INSERT`` with Spark's own Hive writer (not bucketkit's)."""
    with catalog_off(spark):
        spark.sql(statement)


def spark_insert_into_v2(spark, table: str, statement: str) -> None:
    """What Spark's own Hive writer leaves in a ``bucketing_version=2`` table: rows placed by the v1
    hash (it ignores the property). bucketkit's sessions refuse that write (SparkWriteGuard), so the
    property is 1 while Spark writes and 2 again after; the files are the ones a plain Spark session
    writes into the v2 table."""
    with catalog_off(spark):
        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('bucketing_version'='1')")
        try:
            spark.sql(statement)
        finally:
            spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('bucketing_version'='2')")


def final_plan(df):
    """A query's executed plan; of an adaptive plan, the final one (not the initial plan printed after it)."""
    return df._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]


def scans(plan: str) -> list[str]:
    """The lines of ``plan`` that are bucketkit's bucketed scans (BucketScan's description)."""
    return re.findall(r"BatchScan \S+\[[^\]]*\] bucketkit \S+ (?!read unbucketed).*", plan)


def unbucketed_scans(plan: str) -> list[str]:
    """The lines of ``plan`` that are bucketkit's scans of files it cannot vouch for, read unbucketed."""
    return re.findall(r"BatchScan \S+\[[^\]]*\] bucketkit \S+ read unbucketed .*", plan)


def last_plan(spark, containing: str) -> str:
    """The physical plan (the final one, where adaptive) of the session's last query whose plan has ``containing``."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    for i in reversed(range(executions.size())):
        plan = executions.apply(i).physicalPlanDescription()
        if containing in plan:
            return plan
    raise AssertionError(f"no query with {containing!r} in its plan ran")
