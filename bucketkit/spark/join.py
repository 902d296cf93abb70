"""``bucketkit.join``: join two bucketed tables bucket by bucket, without a shuffle.

The plan (:func:`bucketkit.plan_join`) decides: co-partitioned tables are joined by Spark tasks
that each run the pyarrow kernel on a pack of bucket groups (:mod:`bucketkit.spark.jointasks`);
anything else falls back to
Spark's own join over :func:`bucketkit.scan` of both sides (which still prunes), and the plan
says why. Either way the DataFrame has the rows and columns of Spark's
``left_df.join(right_df, on, how)``. :func:`plan_join` returns the plan without running it.
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from typing import TYPE_CHECKING, Any, Sequence

from bucketkit.joinexec import build_exec, output_columns, select_output
from bucketkit.joinplan import JoinPlan
from bucketkit.joinplan import plan_join as core_plan_join
from bucketkit.spark.catalog import resolve_table
from bucketkit.spark.filters import is_spark_filter
from bucketkit.table import TableRef

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["join", "plan_join", "join_memory"]


def join_memory(spark: Any) -> int | None:
    """The ``spark.bucketkit.join.memory`` option in bytes (None when unset).

    Raises:
        InvalidArgumentError: the option is not a size like ``512m``.
    """
    from bucketkit.joinmemory import OPTION, parse_size

    value = spark.conf.get(OPTION, None)
    return parse_size(value) if value not in (None, "") else None


def plan_join(left: TableRef, right: TableRef, on: str | Sequence[Any], how: str = "inner", *,
              left_filters: SparkFilters = None, right_filters: SparkFilters = None,
              spark: SparkSession | None = None, left_write_ids: str | None = None,
              right_write_ids: str | None = None) -> JoinPlan:
    """What :func:`join` runs, without running it: bucket groups paired, or Spark's join and why.

    Arguments as for :func:`join`; ``spark`` is needed only for catalog table names and SQL /
    Column filters. Returns plain data (print ``.explain()``).
    """
    lt, rt = resolve_table(spark, left), resolve_table(spark, right)
    plan = core_plan_join(lt, rt, on, how, left_filters=None if is_spark_filter(left_filters) else left_filters,
                          right_filters=None if is_spark_filter(right_filters) else right_filters,
                          left_write_ids=left_write_ids, right_write_ids=right_write_ids)
    spark_filters = [n for n, f in (("left", left_filters), ("right", right_filters)) if is_spark_filter(f)]
    if plan.bucketed and spark_filters:
        # A SQL string or Column may hold what pyarrow cannot evaluate exactly (UDFs, casts), and an
        # outer join must filter its side before joining, so Spark's join applies it.
        reason = (f"{' and '.join(spark_filters)} filters are a SQL string or Column, which only Spark "
                  "evaluates; pass (column, op, value) filters to join bucket by bucket")
        plan = replace(plan, strategy="shuffle", reason=reason, groups=(), left_filters=left_filters,
                       right_filters=right_filters)
    elif spark_filters:
        plan = replace(plan, left_filters=left_filters, right_filters=right_filters)
    return plan


def join(
    spark: SparkSession,
    left: TableRef,
    right: TableRef,
    on: str | Sequence[Any],
    how: str = "inner",
    *,
    left_filters: SparkFilters = None,
    right_filters: SparkFilters = None,
    columns: Sequence[Any] | None = None,
    left_write_ids: str | None = None,
    right_write_ids: str | None = None,
) -> DataFrame:
    """Join two bucketed tables; shuffle-free when they are bucketed alike on the keys.

    Args:
        spark: the SparkSession.
        left, right: table references: directories with bucketkit metadata (``"/data/t"``,
            ``"./t"``), catalog table names (``"db.t"``) or BucketedTable objects.
        on: column names present on both sides (keys appear once in the output, as with Spark's
            ``df.join(other, ["k"])``), or ``(left_name, right_name)`` pairs (all left columns, then
            all right columns, as with ``df.join(other, df.a == other.b)``).
        how: inner, left, right, full, left_semi, left_anti, or Spark's aliases (left_outer, outer, ...).
        left_filters, right_filters: each side's filter, applied before the join:
            ``[("k", "in", [1, 2])]``-style (prunes partitions and buckets, evaluated in the join) or a
            SQL string / Column (forces Spark's join, see the plan's reason).
        columns: output columns to return, in order: names (every output column of that name) or
            ``("left"|"right", name)``. Only these (plus keys and filter columns) are read.
        left_write_ids, right_write_ids: for a Hive ACID side, the snapshot to read: Hive's
            ValidWriteIdList string (``db.t:hwm:minOpen:open:aborted``, as the metastore gives
            it); None: every write id in the directory names is committed. An ACID side is
            joined bucket by bucket like any other (its buckets merged from base, deltas and
            delete deltas).

    Returns:
        A DataFrame with the rows and columns of Spark's ``left_df.join(right_df, on, how)``;
        :func:`plan_join` with the same arguments gives the plan it runs.
    """
    plan = plan_join(left, right, on, how, left_filters=left_filters, right_filters=right_filters, spark=spark,
                     left_write_ids=left_write_ids, right_write_ids=right_write_ids)
    if plan.bucketed:
        from bucketkit.spark.jointasks import read_groups

        ex = build_exec(plan, columns, memory=join_memory(spark))
        df = read_groups(spark, ex, plan.groups)
        if list(ex.names) != df.columns:
            df = df.toDF(*ex.names)
    else:
        df = _spark_join(spark, plan, columns)
    return df


def _spark_join(spark: Any, plan: JoinPlan, columns: Sequence[Any] | None) -> Any:
    """The fallback: Spark's own join over bucketkit.scan of both sides."""
    from bucketkit.spark.scan import scan

    ldf = scan(spark, table=plan.left, filters=plan.left_filters, write_ids=plan.left_write_ids)
    rdf = scan(spark, table=plan.right, filters=plan.right_filters, write_ids=plan.right_write_ids)
    how = plan.how  # the canonical join types are Spark's own names
    if plan.using:
        joined = ldf.join(rdf, list(plan.left_keys), how)
    else:
        cond = reduce(lambda a, b: a & b, [ldf[lk] == rdf[rk] for lk, rk in zip(plan.left_keys, plan.right_keys)])
        joined = ldf.join(rdf, cond, how)
    if columns is None:
        return joined
    chosen = select_output(output_columns(plan, ldf.columns, rdf.columns), columns)
    # A USING key is the join's own column (left's, right's or their coalesce, by join type).
    return joined.select(*[joined[col] if plan.using and col in plan.left_keys else
                           (ldf if source == "left" else rdf)[col] for _, source, col in chosen])
