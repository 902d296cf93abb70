"""Whether Spark SQL plans a table bucketed through bucketkit's catalog, and if not, why (docs/sql.md).

A table the catalog cannot vouch for passes through to Spark as its own, unbucketed table; ``EXPLAIN``
and ``DESCRIBE`` of it are Spark's and cannot say so. :func:`sql_status` asks the catalog's own
rules (``io.bucketkit.spark.DriverCalls.status``, the same ``HiveBucketedTable.vouch`` a query's
table resolution runs), so the answer is the one a query gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bucketkit.errors import LayoutError, TableNotFoundError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SqlStatus", "sql_status", "catalog_off", "Held", "held", "CATALOG_CLASS", "COMPATIBLE_TRANSFORMS"]

_CATALOG = "spark.sql.catalog.spark_catalog"
#: bucketkit's SQL catalog, the class ``spark.sql.catalog.spark_catalog`` names in its sessions.
CATALOG_CLASS = "io.bucketkit.spark.BucketkitCatalog"
_SWITCH = "spark.bucketkit.catalog.enabled"
#: Spark's setting that joins bucket(8) with bucket(16) scans without a shuffle, reducing one grouping of buckets into
#: tasks to another; the catalog's sessions set it (io.bucketkit.table.BucketScan groups buckets only where it is on).
COMPATIBLE_TRANSFORMS = "spark.sql.sources.v2.bucketing.allowCompatibleTransforms.enabled"


@dataclass(frozen=True)
class SqlStatus:
    """What Spark SQL makes of one table in one session.

    Attributes:
        table: the table name as given.
        bucketed: whether queries see its Hive bucketing (shuffle-free joins and GROUP BY on the
            bucket column, bucket pruning).
        detail: what the catalog reports (bucketed), or why the table passes through (unbucketed).
    """

    table: str
    bucketed: bool
    detail: str

    def __str__(self) -> str:
        how = "planned bucketed" if self.bucketed else "read unbucketed"
        return f"{self.table}: {how} by Spark SQL: {self.detail}"


def sql_status(spark: SparkSession, table: str) -> SqlStatus:
    """Whether Spark SQL in ``spark`` plans ``table`` (``t`` or ``db.t``) bucketed, and why not.

    It lists the table's files as a query would (a wrong file name is a reason too).

    Raises:
        TableNotFoundError: no such table in the session catalog.
        LayoutError: listing the table failed (e.g. a commit died mid-switch; the message says what
            to run).
    """
    from py4j.protocol import Py4JJavaError

    from bucketkit.spark.catalog import table_exists
    from bucketkit.spark.driver import ServerError, call, is_connect, refusal

    if not table_exists(spark, table):
        raise TableNotFoundError(f"table {table!r}: not in the session catalog; expected an existing table")
    off = catalog_off(spark)
    if off is not None:
        return SqlStatus(table, False, off)
    try:
        if is_connect(spark):  # the same DriverCalls.status, asked through SQL (bucketkit_status)
            state, detail = call(spark, "bucketkit_status", table)
        else:
            state, detail = spark._jvm.io.bucketkit.spark.DriverCalls.status(spark._jsparkSession, table)
    except (Py4JJavaError, ServerError) as exc:
        raise LayoutError(f"table {table!r}: listing its files failed: {refusal(exc)}") from None
    return SqlStatus(table, state == "bucketed", detail)


def catalog_off(spark: SparkSession) -> str | None:
    """Why Spark SQL in ``spark`` does not read tables through bucketkit's catalog, or None when it does."""
    configured = spark.conf.get(_CATALOG, None)
    if configured != CATALOG_CLASS:
        return (f"bucketkit's catalog is not this session's ({_CATALOG}={configured}); "
                "create the session with bucketkit.get_session() or configure_builder()")
    if spark.conf.get(_SWITCH, "true").strip().lower() == "false":
        return f"{_SWITCH}=false in this session"
    return None


@dataclass(frozen=True)
class Held:
    """How :func:`bucketkit.scan` reads a catalog table through bucketkit's catalog (:func:`held`).

    Attributes:
        table: the table's name as the catalog spells it, quoted with its catalog and database
            (```spark_catalog`.`db`.`t```): what is read, never a temporary view of the same name.
        version: the table's version live now, read with ``VERSION AS OF`` it (its files are that kept
            version's own), or None: read in place, as each query lists it.
    """

    table: str
    version: int | None


def held(spark: SparkSession, table: str) -> Held | None:
    """How :func:`bucketkit.scan` reads ``table`` through the catalog, or None where the catalog does not
    read it bucketed (off in this session, a table it passes through to Spark, a Hive ACID table): then
    bucketkit reads it itself, with the same verdict. One call to the JVM
    (``io.bucketkit.spark.DriverCalls.held``; on Spark Connect, ``bucketkit_held`` through SQL), which
    lists the table as a query would.

    Raises:
        LayoutError: listing the table failed.
    """
    import json

    from py4j.protocol import Py4JJavaError

    from bucketkit.spark.driver import ServerError, call, is_connect, jar_class, refusal

    if catalog_off(spark) is not None:
        return None
    try:
        if is_connect(spark):
            answer = call(spark, "bucketkit_held", table)[0]
        else:
            calls = jar_class(spark, "spark.DriverCalls")
            if calls is None:
                return None
            answer = calls.held(spark._jsparkSession, table)
    except (Py4JJavaError, ServerError) as exc:
        raise LayoutError(f"table {table!r}: listing its files failed: {refusal(exc)}") from None
    d = json.loads(answer)
    return Held(d["table"], d["version"]) if d["bucketed"] else None
