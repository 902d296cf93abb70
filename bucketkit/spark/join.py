"""``bucketkit.join``: join two bucketed tables bucket by bucket, without a shuffle.

The plan (:func:`bucketkit.plan_join`) decides: co-partitioned tables are joined by Spark tasks
that each run the pyarrow kernel on a pack of bucket groups (:mod:`bucketkit.spark.jointasks`);
anything else falls back to
Spark's own join over :func:`bucketkit.scan` of both sides (which still prunes), and the plan
says why. Either way the DataFrame has the rows and columns of Spark's
``left_df.join(right_df, on, how)``. :func:`plan_join` returns the plan without running it.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from functools import reduce
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from bucketkit.errors import BucketkitError, InvalidArgumentError, LayoutError, TableNotFoundError
from bucketkit.layout.discovery import format_bytes
from bucketkit.joins.execute import build_exec, output_columns, select_output
from bucketkit.joins.plan import JoinPlan, normalize_how, normalize_on
from bucketkit.joins.plan import plan_join as core_plan_join
from bucketkit.spark.catalog import describe_catalog_table, resolve_table, table_from_description
from bucketkit.spark.driver import (SERVER_SETUP, ServerError, has_extensions, is_connect, jar_class, master, refusal,
                                    session_key, table_function)
from bucketkit.spark.filters import is_spark_filter
from bucketkit.spark.sqlstatus import COMPATIBLE_TRANSFORMS
from bucketkit.table import BucketedTable, TableRef, open_table, reference_kind
from bucketkit.trust import spec_doubt, transactional_kind

_MOVES = itertools.count()

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["join", "plan_join", "join_memory"]


def join_memory(spark: Any) -> int | None:
    """The ``spark.bucketkit.join.memory`` option in bytes (None when unset).

    Raises:
        InvalidArgumentError: the option is not a size like ``512m``.
    """
    from bucketkit.joins.memory import OPTION, parse_size

    value = spark.conf.get(OPTION, None)
    return parse_size(value) if value not in (None, "") else None


def plan_join(left: TableRef, right: TableRef, on: str | Sequence[Any], how: str = "inner", *,
              left_filters: SparkFilters = None, right_filters: SparkFilters = None,
              spark: SparkSession | None = None, left_write_ids: str | None = None,
              right_write_ids: str | None = None, left_as_of: Any = None, right_as_of: Any = None) -> JoinPlan:
    """What :func:`join` runs, without running it: bucket groups paired, or Spark's join and why.

    Arguments as for :func:`join`; ``spark`` is needed only for catalog table names and SQL /
    Column filters. Returns plain data (print ``.explain()``).
    """
    sides = _sides(spark, left, right, on)
    if isinstance(sides, _Moving):
        return _moved_plan(sides, on, how, left_filters, right_filters, spark)
    lt, rt = sides
    plan = core_plan_join(lt, rt, on, how, left_filters=None if is_spark_filter(left_filters) else left_filters,
                          right_filters=None if is_spark_filter(right_filters) else right_filters,
                          left_write_ids=left_write_ids, right_write_ids=right_write_ids, left_as_of=left_as_of,
                          right_as_of=right_as_of)
    spark_filters = [n for n, f in (("left", left_filters), ("right", right_filters)) if is_spark_filter(f)]
    room = _worker_room(spark) if plan.bucketed and spark is not None else None
    if room is not None and room[1] < MIN_WORKER_ROOM:
        cap, free = room
        why = (f"each Python worker is capped at {format_bytes(cap)} (spark.executor.pyspark.memory) and has "
               f"{format_bytes(free)} of it left for a join task, below the {format_bytes(MIN_WORKER_ROOM)} one needs")
        jvm = _jvm_doubt(spark, plan)
        plan = replace(plan, strategy="shuffle" if jvm else "jvm", groups=() if jvm else plan.groups,
                       reason=f"{why}; {jvm}: Spark joins the two scans" if jvm else
                       f"{why}: Spark joins the bucketed scans in the JVM, bucket by bucket (no shuffle)")
    if plan.bucketed and spark_filters:
        # A SQL string or Column may hold what pyarrow cannot evaluate exactly (UDFs, casts), and an
        # outer join must filter its side before joining, so Spark's join applies it.
        reason = (f"{' and '.join(spark_filters)} filters are a SQL string or Column, which only Spark "
                  "evaluates; pass (column, op, value) filters to join bucket by bucket")
        plan = replace(plan, strategy="shuffle", reason=reason, groups=(), left_filters=left_filters,
                       right_filters=right_filters)
    elif spark_filters:
        plan = replace(plan, left_filters=left_filters, right_filters=right_filters)
    if plan.bucketed and spark is not None:
        plan = _expanding(spark, plan)
    return plan


#: Output rows per row read above which Spark's JVM join of the bucketed scans can beat the Python kernel, whose
#: tasks hand every output row to Spark through Arrow (measured, 2M x 2M rows in 16 buckets, both sessions:
#: 0.83 s against 1.89 s at 0.5, level at 2.5, 1.61 against 1.31 s at 4; benchmarks/bench_join.py --repeated-keys).
EXPANDS = 2.0
#: Output rows per bucket below which the JVM's tasks cost more than the rows save, in a session whose bucketed
#: scans run a task per bucket (a session the user built: :func:`_groups_buckets`), each with its own sort or hash
#: map, where the kernel packs its groups into few tasks. Measured in a plain session, 4 output rows per row read:
#: 16M output rows in 16 buckets 1.31 s JVM against 1.61 s kernel; in 64 buckets 3.04 s against 1.84 s; 8M in 64
#: buckets 2.34 s against 1.05 s; 2M in 64 buckets (10 per row) 1.23 s against 0.62 s. Where the scans group small
#: buckets (get_session()) the JVM won at every size tried: 20k x 20k rows in 16 buckets, 8 rows per key a side,
#: 256 ms against 343 ms (Spark's join 328 ms); 200k x 200k, 20 per key, 390 against 654 ms.
OUTPUT_PER_BUCKET = 1_000_000
#: bucketkit's setting for grouping a bucketed scan's small buckets into few tasks (docs/sql.md)
GROUP_BUCKETS = "spark.bucketkit.groupBuckets"


def _expanding(spark: Any, plan: JoinPlan) -> JoinPlan:
    """``plan`` joined in the JVM where its keys repeat enough that the join outputs more than :data:`EXPANDS`
    rows per row read and, where the session's scans run a task per bucket, :data:`OUTPUT_PER_BUCKET` rows per
    bucket (estimated on the largest group: :func:`key_matches`, scaled to all groups by their bytes), else as it
    is."""
    from pyarrow import ArrowException

    from bucketkit.joins.execute import key_matches

    if (plan.how not in ("inner", "left", "right", "full") or len(plan.left_keys) != 1 or not plan.groups
            or _tables_jvm_doubt(spark, plan)):
        return plan  # a semi or anti join outputs at most its rows; the JVM could not join these tables
    try:
        rows, matches = key_matches(plan, plan.groups[0])
    except ArrowException:  # key types Arrow cannot compare: no estimate, the kernel joins them as planned
        return plan
    buckets = max(plan.left.spec.bucket_count, plan.right.spec.bucket_count)
    output = matches * (plan.left_bytes + plan.right_bytes) / max(1, plan.groups[0].bytes)
    if matches <= EXPANDS * rows or (output < OUTPUT_PER_BUCKET * buckets and not _groups_buckets(spark)):
        return plan
    why = (f"the keys repeat: the largest bucket group's {rows:,.0f} rows make about {matches:,.0f} matches "
           f"({matches / max(rows, 1):.1f} output rows per row read, above {EXPANDS:g}; about {output:,.0f} in "
           f"all, {output / buckets:,.0f} per bucket)")
    doubt = _session_jvm_doubt(spark)  # the tables' own doubt was asked above
    if doubt:
        return replace(plan, reason=f"{plan.reason}; {why}, which Spark's JVM join builds faster, but {doubt}")
    return replace(plan, strategy="jvm", reason=f"{plan.reason}; {why}: Spark joins the bucketed scans in the "
                   "JVM, bucket by bucket (no shuffle), building its rows there")


def _side(spark: Any, ref: Any) -> Any:
    """A join side as a plain DataFrame — a DataFrame, or a catalog table declared without buckets (not
    Hive ACID) — or the :class:`BucketedTable` it names (:func:`resolve_table`'s; a catalog table's
    metastore entry read once, as :func:`~bucketkit.spark.catalog.load_table` reads it)."""
    if hasattr(ref, "sparkSession") and hasattr(ref, "schema"):
        return ref
    if spark is None or not isinstance(ref, str) or reference_kind(ref) != "catalog":
        return resolve_table(spark, ref)
    try:
        d = describe_catalog_table(spark, ref)
    except TableNotFoundError:
        return resolve_table(spark, ref)  # its error, which names the directory spelling too
    if not d["bucket_columns"] and transactional_kind(d["properties"]) is None:
        return spark.table(ref)
    return table_from_description(d)


class _Moving(NamedTuple):
    """A join with one plain side: which side, its DataFrame, the other side's table, the keys of each."""

    side: str
    df: Any
    table: BucketedTable
    keys: tuple
    df_keys: tuple


def _sides(spark: Any, left: Any, right: Any, on: Any) -> tuple[BucketedTable, BucketedTable] | _Moving:
    """Both sides' tables, or the plain side of the join (:func:`_side`) and its partner."""
    lt, rt = _side(spark, left), _side(spark, right)
    lplain, rplain = not isinstance(lt, BucketedTable), not isinstance(rt, BucketedTable)
    if lplain and rplain:
        raise InvalidArgumentError("bucketkit.join: neither side is a bucketed table (a DataFrame or a table without "
                                   "CLUSTERED BY on both sides): join them with Spark (left.join(right, on, how))")
    if not lplain and not rplain:
        return lt, rt
    lkeys, rkeys, _ = normalize_on(on)
    return _Moving("left", lt, rt, rkeys, lkeys) if lplain else _Moving("right", rt, lt, lkeys, rkeys)


def _why_not_moved(table: BucketedTable, keys: tuple, df: Any, df_keys: tuple) -> str | None:
    """Why the plain side cannot be hashed into ``table``'s buckets (Spark's join then), or None."""
    from bucketkit.spark.types import hive_type_of_spark

    spec = table.spec
    doubt = table.unbucketed_reason or spec_doubt(spec)
    if doubt:
        return f"the table {table} is read unbucketed: {doubt}"
    if spec.hash_family != "hive":
        return f"the table {table} is placed by {spec.hashing}, which bucketkit does not write"
    if not set(spec.bucketed_by) <= set(keys):
        return f"the join keys {list(keys)} of {table} do not include its bucket columns {list(spec.bucketed_by)}"
    fields = {f.name: f for f in df.schema.fields}
    for column, hive_type in zip(spec.bucketed_by, spec.bucket_types):
        other = df_keys[keys.index(column)]
        if other not in fields:
            raise InvalidArgumentError(f"join key {other!r} is not a column of the DataFrame side "
                                       f"(columns: {list(fields)})")
        if hive_type_of_spark(fields[other]) != hive_type:
            return (f"the DataFrame's key {other} is {hive_type_of_spark(fields[other])} where {table}'s bucket column "
                    f"{column} is {hive_type}: hashing it as {hive_type} could place rows where no key matches")
    return None


def _spark_moves(spark: Any, table: BucketedTable, filters: Any) -> bool:
    """Whether Spark SQL can move the plain side itself: ``table`` is a catalog table this session's
    catalog plans bucketed (its scan reports the buckets) and Spark shuffles only the side that does not
    match (``spark.sql.sources.v2.bucketing.shuffle.enabled``); the table's own side unfiltered."""
    if spark is None or not table.name or filters is not None or table.transactional:
        return False
    if spark.conf.get("spark.sql.sources.v2.bucketing.shuffle.enabled", "false").lower() != "true":
        return False
    from bucketkit.spark.sqlstatus import sql_status

    try:
        return sql_status(spark, table.name).bucketed
    except BucketkitError:
        return False


def _moved_plan(moving: _Moving, on: Any, how: str, left_filters: Any, right_filters: Any,
                spark: Any = None, spark_moves: bool | None = None) -> JoinPlan:
    """The plan of a join with one plain side: which side moves into which buckets, or why Spark joins.
    The plain side is shown as the table it becomes (``BucketedTable`` named for what it is)."""
    from bucketkit.layout.metadata import TableSpec
    from bucketkit.spark.types import hive_type_of_spark

    side, df, table, keys, df_keys = moving
    spec = table.spec
    columns = tuple((f.name, hive_type_of_spark(f)) for f in df.schema.fields)
    by = tuple(df_keys[keys.index(c)] if c in keys else c for c in spec.bucketed_by)
    why = _why_not_moved(table, keys, df, df_keys)
    stand_in = BucketedTable(f"(the {side} side, a DataFrame)", TableSpec(
        bucketed_by=by, bucket_types=spec.bucket_types, bucket_count=spec.bucket_count,
        bucketing_version=spec.bucketing_version, columns=columns, file_format="parquet"), None,
        name=f"the {side} DataFrame")
    lkeys, rkeys, using = normalize_on(on)
    common = dict(how=normalize_how(how), left_keys=lkeys, right_keys=rkeys, using=using,
                  left=stand_in if side == "left" else table, right=table if side == "left" else stand_in,
                  left_filters=left_filters, right_filters=right_filters, plain_side=side)
    if why is not None:
        return JoinPlan("shuffle", f"the {side} side is a DataFrame and cannot move into {table}'s buckets: {why}",
                        **common)
    if spark_moves is None:
        spark_moves = _spark_moves(spark, table, right_filters if side == "left" else left_filters)
    how_moved = ("Spark SQL's storage-partitioned join shuffles it into them (bucketkit's catalog reports the "
                 "table's buckets)" if spark_moves else "join() writes it once, then joins bucket by bucket")
    return JoinPlan(f"move-{side}", f"the {side} side is not bucketed: it is hashed into {table}'s "
                    f"{spec.bucket_count} buckets with {spec.hashing} (that table's own bucket function); "
                    f"{how_moved}: only the {side} side moves", **common)


def _temp_root(spark: Any) -> str:
    """Where a moved side is written: ``spark.bucketkit.join.tempDir``, else (local master only) a
    temporary directory of this machine, removed when the Python process exits."""
    import atexit
    import shutil
    import tempfile

    base = spark.conf.get("spark.bucketkit.join.tempDir", None)
    if not base:
        if not master(spark).startswith("local"):
            raise InvalidArgumentError(
                "bucketkit.join with a DataFrame side writes it into the table's buckets first: set "
                "spark.bucketkit.join.tempDir to a directory every executor can write (e.g. s3://bucket/tmp)")
        base = tempfile.gettempdir()
    if "://" in base:
        from bucketkit.io import resolve_filesystem

        uri = base.rstrip("/") + f"/bucketkit-join-{os.getpid()}-{next(_MOVES)}"
        fs, path = resolve_filesystem(uri)
        atexit.register(_remove_quietly, fs, path)
        return uri + "/t"
    root = tempfile.mkdtemp(prefix="bucketkit-join-", dir=base)
    atexit.register(shutil.rmtree, root, True)
    return os.path.join(root, "t")


def _remove_quietly(fs: Any, path: str) -> None:
    """Delete a moved side's directory at exit; one already gone (or unreachable by then) is left be."""
    try:
        fs.delete_dir(path)
    except OSError:
        pass


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
    left_as_of: Any = None,
    right_as_of: Any = None,
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
        left_as_of, right_as_of: time travel on a side bucketkit writes: a version number or a time
            (as :func:`bucketkit.scan`'s ``as_of``). Without them each side's live version is read
            from where its files stay after later commits.

    Returns:
        A DataFrame with the rows and columns of Spark's ``left_df.join(right_df, on, how)``;
        :func:`plan_join` with the same arguments gives the plan it runs.

    One side may be plain — a DataFrame, or a catalog table without buckets: it is hashed into the
    other side's buckets with that table's own bucket function (written once, under
    ``spark.bucketkit.join.tempDir``; in local mode a temporary directory removed at exit), and the
    two are joined bucket by bucket: only that side moves. Where that cannot be proven right (key
    types differ, the table is read unbucketed), Spark joins the two, and :func:`plan_join` says why.
    """
    sides = _sides(spark, left, right, on)
    if isinstance(sides, _Moving):
        as_of = left_as_of if sides[0] == "right" else right_as_of  # the table's side: the other moves
        if as_of is not None:
            raise InvalidArgumentError(f"{'left' if sides[0] == 'right' else 'right'}_as_of={as_of!r} with a DataFrame "
                                       "on the other side: read the table with bucketkit.scan(..., as_of=) and join "
                                       "the two DataFrames")
        return _join_moved(spark, sides, on, how, left_filters=left_filters, right_filters=right_filters,
                           columns=columns, left_write_ids=left_write_ids, right_write_ids=right_write_ids)
    plan = plan_join(*sides, on, how, left_filters=left_filters, right_filters=right_filters, spark=spark,
                     left_write_ids=left_write_ids, right_write_ids=right_write_ids, left_as_of=left_as_of,
                     right_as_of=right_as_of)
    if plan.strategy == "jvm":
        df = _joined(_jvm_side(spark, plan.left, plan.left_filters, plan.left_as_of),
                     _jvm_side(spark, plan.right, plan.right_filters, plan.right_as_of), plan, columns)
    elif plan.bucketed:
        from bucketkit.spark.jointasks import read_groups

        ex = build_exec(plan, columns, memory=join_memory(spark))
        df = read_groups(spark, ex, plan.groups)
        if list(ex.names) != df.columns:
            df = df.toDF(*ex.names)
    else:
        df = _spark_join(spark, plan, columns)
    return df


#: The least a join task's Python worker must have for the join (below it, the JVM joins the buckets).
MIN_WORKER_ROOM = 16 * 2 ** 20
#: Address space a worker takes once a join task runs, beyond what its imports take: pyarrow's thread
#: pools, their stacks and malloc arenas. Measured under a 500 MiB cap: 322 MiB after the imports, about
#: 450 MiB when a join task started (its budget then said 49.7 MiB free). Starting those threads in a
#: probe is what a capped worker can hang on, so the probe imports only and this is added.
TASK_THREADS = 128 * 2 ** 20
_ROOM: dict[tuple[int, str], tuple[int, int]] = {}


def _worker_room(spark: Any) -> tuple[int, int] | None:
    """``(cap, bytes a join task would have)`` of this session's Python workers under
    ``spark.executor.pyspark.memory``, or None when they are not capped. Asked of a worker once per
    session and cap (one small task): what a worker takes before it joins (the interpreter, pyarrow,
    bucketkit's join modules) is known only there; :data:`TASK_THREADS` more once its threads run."""
    cap = spark.conf.get("spark.executor.pyspark.memory", None)
    if not cap:
        return None
    key = (session_key(spark), cap)
    if key not in _ROOM:
        _ROOM[key] = _probe_room(spark)
    limit, free = _ROOM[key]
    return None if free < 0 else (limit, free)


def _room(_: Any = None) -> tuple[int, int]:
    """In a worker: ``(cap, room)`` a join task would have there, or ``(0, -1)`` when it is not capped."""
    import bucketkit.joins.execute  # noqa: F401  (what a join task imports)
    import bucketkit.spark.jointasks  # noqa: F401
    from bucketkit.joins.memory import room_under_cap

    return room_under_cap(TASK_THREADS) or (0, -1)


def _probe_room(spark: Any) -> tuple[int, int]:
    """:func:`_room` asked of one worker. No Arrow in the probe: Arrow's reader starts the threads a capped
    worker can hang on. A classic session asks one RDD task; a Connect client (no RDDs) one pickled Python
    UDF over one row."""
    if not is_connect(spark):
        return tuple(spark.sparkContext.parallelize([0], 1).map(_room).collect()[0])
    from pyspark.sql import functions as F

    probe = F.udf(_room, "struct<limit: long, free: long>", useArrow=False)
    row = spark.range(1, numPartitions=1).select(probe(F.col("id")).alias("r")).collect()[0]["r"]
    return (row["limit"], row["free"])


def _jvm_doubt(spark: Any, plan: JoinPlan) -> str | None:
    """Why the JVM cannot join ``plan``'s sides bucket by bucket (:func:`_jvm_side`), or None."""
    return _tables_jvm_doubt(spark, plan) or _session_jvm_doubt(spark)


def _session_jvm_doubt(spark: Any) -> str | None:
    """Why this session cannot run a JVM bucket join at all (no jar, no extensions on its server), or None."""
    if is_connect(spark):
        if not has_extensions(spark):
            return f"the Spark Connect server has no bucketkit extensions ({SERVER_SETUP})"
    elif jar_class(spark, "spark.BucketDirectory") is None:
        return "bucketkit's jar could not be added to this session (the warning said why)"
    return None


def _groups_buckets(spark: Any) -> bool:
    """Whether the JVM's bucketed scans in ``spark`` group small buckets into few tasks, as the JVM decides it
    (io.bucketkit.table.BucketScan.groupsBuckets). A Spark Connect client, which cannot call the server's JVM, reads
    the two settings that rule it (:func:`settings_group_buckets`)."""
    scan = jar_class(spark, "table.BucketScan")
    if scan is not None:
        return bool(scan.groupsBuckets(spark._jsparkSession))
    return is_connect(spark) and settings_group_buckets(spark.conf.get)


def settings_group_buckets(get: Any) -> bool:
    """BucketScan.groupsBuckets from a session's settings (``get(name, default)``): bucketkit's
    ``spark.bucketkit.groupBuckets`` not off and Spark's :data:`COMPATIBLE_TRANSFORMS` on, each read as Java's
    ``Boolean.parseBoolean`` reads it. Held equal to the JVM's answer by tests/test_join_spark.py."""
    return (str(get(GROUP_BUCKETS, "true")).lower() == "true"
            and str(get(COMPATIBLE_TRANSFORMS, "false")).lower() == "true")


def _tables_jvm_doubt(spark: Any, plan: JoinPlan) -> str | None:
    """Why the JVM cannot join these two tables bucket by bucket whatever the session has, or None."""
    for side, table, snapshot in (("left", plan.left, plan.left_snapshot), ("right", plan.right, plan.right_snapshot)):
        spec = table.spec
        if snapshot or table.transactional:
            return f"the {side} side is a Hive ACID table, which the JVM does not read bucketed"
        if spec.hash_family != "hive" or len(spec.bucketed_by) != 1 or spec.file_format not in ("orc", "parquet"):
            return f"the {side} side is not one Hive-hashed bucket column of ORC or Parquet files"
    counts = (plan.left.spec.bucket_count, plan.right.spec.bucket_count)
    if counts[0] != counts[1] and spark.conf.get(COMPATIBLE_TRANSFORMS, "false").lower() != "true":
        # Spark matches two bucketed scans of different counts only by reducing one to the other
        return (f"the sides have {counts[0]} and {counts[1]} buckets, and this session does not let Spark reduce one "
                f"to the other ({COMPATIBLE_TRANSFORMS} is off)")
    return None


def _jvm_side(spark: Any, table: BucketedTable, filters: Any, as_of: Any) -> Any:
    """One side of a ``"jvm"`` join: the directory its plan reads (the version it lists, kept for it)
    as a bucketed DSv2 relation of bucketkit's JVM part (io.bucketkit.spark.BucketDirectory)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.sql import DataFrame

    from bucketkit.spark.filters import to_column
    from bucketkit.spark.scan import plan_and_predicates, spark_schema
    from bucketkit.spark.types import CHAR_VARCHAR_METADATA_KEY

    plan, spark_filters = plan_and_predicates(spark, table, None, filters, None, {}, as_of=as_of)
    spec = plan.table.spec
    schema, hive_types = spark_schema(plan.table), dict(spec.columns)
    for field in schema.fields:  # char/varchar hash as Hive hashes them: the JVM reads the type from here
        hive = hive_types.get(field.name, "")
        if hive.startswith(("char", "varchar")):
            field.metadata = {**field.metadata, CHAR_VARCHAR_METADATA_KEY: hive}
    args = (plan.root or table.location, table.name or table.location, schema.json(), list(spec.partitioned_by),
            spec.bucketed_by[0], spec.bucket_count, spec.bucketing_version, spec.file_format)
    try:
        if is_connect(spark):
            df = table_function(spark, "bucketkit_directory", *args)
        else:
            df = DataFrame(jar_class(spark, "spark.BucketDirectory").read(spark._jsparkSession, *args), spark)
    except (Py4JJavaError, ServerError) as exc:
        raise LayoutError(f"{table}: reading it bucketed in the JVM failed: {refusal(exc)}") from None
    where = to_column(plan.filters)
    df = df.where(where) if where is not None else df
    for f in spark_filters:
        df = df.where(f)
    return df


def _spark_join(spark: Any, plan: JoinPlan, columns: Sequence[Any] | None) -> Any:
    """The fallback: Spark's own join over bucketkit.scan of both sides."""
    from bucketkit.spark.scan import scan

    ldf = scan(spark, table=plan.left, filters=plan.left_filters, write_ids=plan.left_write_ids, as_of=plan.left_as_of)
    rdf = scan(spark, table=plan.right, filters=plan.right_filters, write_ids=plan.right_write_ids,
               as_of=plan.right_as_of)
    return _joined(ldf, rdf, plan, columns)


def _joined(ldf: Any, rdf: Any, plan: JoinPlan, columns: Sequence[Any] | None) -> Any:
    """Spark's join of two DataFrames as ``plan`` says (keys, type), with the ``columns`` chosen."""
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


def _join_moved(spark: Any, moving: _Moving, on: Any, how: str, *, left_filters: Any, right_filters: Any,
                columns: Any, left_write_ids: Any, right_write_ids: Any) -> Any:
    """``join`` with one plain side: that side written into the other's buckets, then joined bucket by bucket."""
    from bucketkit.spark.writer import write

    side, df, table, keys, df_keys = moving
    plain_filters = left_filters if side == "left" else right_filters
    if plain_filters is not None and not is_spark_filter(plain_filters):
        raise InvalidArgumentError(f"{side}_filters={plain_filters!r}: the {side} side is a DataFrame; filter it "
                                   f"with .where(...) (or pass a SQL string) before joining")
    if plain_filters is not None:
        df = df.where(plain_filters)
    why = _why_not_moved(table, keys, df, df_keys)
    table_filters = right_filters if side == "left" else left_filters
    if why is None and _spark_moves(spark, table, table_filters):
        ldf, rdf = (df, spark.table(table.name)) if side == "left" else (spark.table(table.name), df)
        return _joined(ldf, rdf, _moved_plan(moving, on, how, left_filters, right_filters, spark, True), columns)
    if why is None:
        spec = table.spec
        by = [df_keys[keys.index(c)] for c in spec.bucketed_by]
        root = _temp_root(spark)
        write(df, by, spec.bucket_count, path=root, bucketing_version=spec.bucketing_version, file_format="parquet",
              mode="overwrite")
        moved = open_table(root)
        left, right = (moved, table) if side == "left" else (table, moved)
        return join(spark, left, right, on, how, left_filters=None if side == "left" else left_filters,
                    right_filters=None if side == "right" else right_filters, columns=columns,
                    left_write_ids=left_write_ids, right_write_ids=right_write_ids)
    from bucketkit.spark.scan import scan

    other = scan(spark, table=table, filters=right_filters if side == "left" else left_filters,
                 write_ids=right_write_ids if side == "left" else left_write_ids)
    ldf, rdf = (df, other) if side == "left" else (other, df)
    return _joined(ldf, rdf, _moved_plan(moving, on, how, left_filters, right_filters, spark, False), columns)
