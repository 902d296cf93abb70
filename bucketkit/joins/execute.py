"""The per-group join kernel: read one bucket group of both sides, filter, join, shape the output.

Pure pyarrow (no Spark), so it is tested directly and runs unchanged inside Spark's Python workers.
:func:`build_exec` turns a :class:`~bucketkit.joins.plan.JoinPlan` plus the wanted output columns into
a :class:`JoinExec` (plain, picklable data: what to read from each side, how to shape the output);
:func:`execute_group` runs it for one :class:`~bucketkit.joins.plan.BucketGroup`.

Two kernels:
    * hash join: each side's files read into one table (only the needed columns, filters applied
      while reading), joined with Acero (``pyarrow.Table.join``) building on the smaller side;
    * streaming merge join, when both sides' buckets are sorted ascending on a join key pair: the
      files are read batch by batch and cut into key ranges that are complete on both sides
      (every row with a key below the smallest "last key read" of all files has been read), each
      range joined by the hash kernel. Memory is bounded by the batches (plus the longest run of
      one key), not by the bucket size, and every join type stays exact.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass, replace
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bucketkit.errors import CorruptTableError, InvalidArgumentError
from bucketkit.hashing.npkernels import numba_module
from bucketkit.hivetypes import arrow_type_of_hive
from bucketkit.joins.memory import Budget, address_space_cap, budget_error, row_width, task_budget, working_set
from bucketkit.joins.plan import BucketGroup, JoinPlan
from bucketkit.joins.read import SideRead
from bucketkit.units import ReadUnit
from bucketkit.joins.spill import SpillStats, grace_join

__all__ = ["SideRead", "JoinExec", "build_exec", "execute_group", "hash_join", "merge_join", "MergeStats",
           "output_columns", "select_output"]

# Acero's join type for each canonical type, and the type with the inputs swapped.
_ACERO = {"inner": "inner", "left": "left outer", "right": "right outer", "full": "full outer",
          "left_semi": "left semi", "left_anti": "left anti"}
_FLIPPED = {"inner": "inner", "left": "right outer", "right": "left outer", "full": "full outer",
            "left_semi": "right semi", "left_anti": "right anti"}


@dataclass(frozen=True)
class JoinExec:
    """Everything a worker needs to join any group of a plan (picklable).

    Attributes:
        how: canonical join type.
        left_keys, right_keys: join keys, paired by position.
        left, right: what to read from each side.
        output: the output columns in order, as ``(source, column)`` with source ``"left"``,
            ``"right"`` or ``"coalesce"`` (full outer USING key: left's value, else right's).
        schema: the output Arrow schema; a name repeated in Spark's output (a non-key column on
            both sides) gets ``#2`` appended here, so the names are unique.
        names: the output names as Spark's join has them (repeats allowed).
        merge: use the streaming merge join (sorted buckets) instead of one hash join.
        merge_key: the (left, right) key pair the buckets are sorted on.
        batch_rows: rows per batch read and emitted.
        memory: the configured join memory budget in bytes (``spark.bucketkit.join.memory``;
            None = bucketkit's default); a worker lowers it to what its address-space cap leaves
            (:func:`bucketkit.joins.memory.task_budget`).
        spill_dir: where parts of a group above the budget go (None = Spark's local dir or the temp dir).
    """

    how: str
    left_keys: tuple[str, ...]
    right_keys: tuple[str, ...]
    left: SideRead
    right: SideRead
    output: tuple[tuple[str, str], ...]
    schema: pa.Schema
    names: tuple[str, ...] = ()
    merge: bool = False
    merge_key: tuple[str, str] | None = None
    batch_rows: int = 65536
    memory: int | None = None
    spill_dir: str | None = None

    def side_estimate(self, side: SideRead, files: Sequence[ReadUnit]) -> tuple[float, float]:
        """``(rows, decoded bytes)`` of the columns read from these files, from footer row counts."""
        width = row_width(side.schema, side.columns)
        rows = sum(f.rows if f.rows >= 0 else 4 * f.size / max(1.0, width) for f in files if f.size > 0)
        return rows, rows * width

    def working_set(self, group: BucketGroup) -> int:
        """Estimated peak bytes of joining this group in memory (see :func:`bucketkit.joins.memory.working_set`)."""
        lrows, lbytes = self.side_estimate(self.left, group.left_files)
        rrows, rbytes = self.side_estimate(self.right, group.right_files)
        return working_set(lbytes, rbytes, lrows, rrows)


def output_columns(plan: JoinPlan, left_names: Sequence[str], right_names: Sequence[str]
                   ) -> list[tuple[str, str, str]]:
    """The columns of Spark's ``left.join(right, on, how)``: ``(output name, source, column)``.

    USING join (``on`` = names): the keys once (left's value; right's for a right join; their
    coalesce for a full join), then the left's other columns, then the right's. Pairs: every left
    column, then every right column (like ``left.join(right, left.a == right.b)``). Semi and anti
    joins: the left's columns only (keys first for a USING join, as Spark does).
    """
    semi = plan.how in ("left_semi", "left_anti")
    out: list[tuple[str, str, str]] = []
    if plan.using:
        key_source = {"right": "right", "full": "coalesce"}.get(plan.how, "left")
        out += [(k, key_source, k) for k in plan.left_keys]
        out += [(c, "left", c) for c in left_names if c not in plan.left_keys]
        if not semi:
            out += [(c, "right", c) for c in right_names if c not in plan.right_keys]
    else:
        out += [(c, "left", c) for c in left_names]
        if not semi:
            out += [(c, "right", c) for c in right_names]
    return out


def select_output(out: list[tuple[str, str, str]], columns: Sequence[Any] | None) -> list[tuple[str, str, str]]:
    """The entries of :func:`output_columns` that ``columns`` asks for, in its order (None = all)."""
    if columns is None:
        return out
    chosen = []
    for item in columns:
        if isinstance(item, (tuple, list)) and len(item) == 2 and item[0] in ("left", "right"):
            side, name = item
            hits = [o for o in out if o[0] == name and (o[1] == side or (o[1] == "coalesce"))]
        elif isinstance(item, str):
            hits = [o for o in out if o[0] == item]
        else:
            hits = []
        if not hits:
            raise InvalidArgumentError(f"columns: {item!r} is not an output column of this join; expected one of "
                                       f"{sorted({o[0] for o in out})} or ('left'|'right', name)")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def _schema_of(table: Any, files: Sequence[ReadUnit]) -> pa.Schema:
    """A side's schema when its spec lists no columns: the first non-empty file's, plus partitions."""
    spec = table.spec
    parts = [(n, arrow_type_of_hive(t)) for n, t in zip(spec.partitioned_by, spec.partition_types)]
    for f in files:
        if f.size > 0:
            schema = f.schema(table.filesystem, spec.file_format)
            return pa.schema([fld for fld in schema if fld.name not in dict(parts)] + parts)
    raise InvalidArgumentError(f"{table}: the table spec lists no columns and no non-empty file was selected "
                               "to read them from; pass table_columns= to open_table")


def build_exec(plan: JoinPlan, columns: Sequence[Any] | None = None, *, batch_rows: int = 65536,
               memory: int | None = None, spill_dir: str | None = None) -> JoinExec:
    """The execution spec of a bucketed plan, reading only what ``columns`` needs.

    Args:
        plan: a plan with strategy ``"bucketed"``.
        columns: output columns to keep, in order: names (every output column of that name) or
            ``("left"|"right", name)``; None keeps all of Spark's output columns.
        batch_rows: rows per batch.
        memory: the join memory budget per task in bytes (None = bucketkit's default).
        spill_dir: the directory of spilled parts (None = Spark's local dir or the temp dir).
    """
    if not plan.bucketed:
        raise InvalidArgumentError(f"plan strategy is {plan.strategy!r}: only a bucketed plan runs per group")
    lschema = plan.left_schema or _schema_of(plan.left, [f for g in plan.groups for f in g.left_files])
    rschema = plan.right_schema or _schema_of(plan.right, [f for g in plan.groups for f in g.right_files])
    selected = select_output(output_columns(plan, lschema.names, rschema.names), columns)
    if not selected:
        raise InvalidArgumentError("columns: expected at least one output column")
    fields, seen = [], {}
    for name, source, col in selected:
        typ = (lschema if source in ("left", "coalesce") else rschema).field(col).type
        seen[name] = seen.get(name, 0) + 1
        fields.append(pa.field(name if seen[name] == 1 else f"{name}#{seen[name]}", typ))

    def side(table: Any, schema: pa.Schema, keys: Sequence[str], sources: tuple[str, ...], dnf: tuple) -> SideRead:
        needed = dict.fromkeys([*keys, *(c for _, s, c in selected if s in sources)])
        spec = table.spec
        ptypes = tuple((n, arrow_type_of_hive(t)) for n, t in zip(spec.partitioned_by, spec.partition_types))
        return SideRead(table.filesystem, spec.file_format, schema, ptypes, tuple(needed), tuple(dnf or ()),
                        str(table), spec)

    output = tuple((s, c) for _, s, c in selected)
    merge_key = None
    if plan.merge:
        lcol = plan.left.spec.sorted_by[0].column
        merge_key = (lcol, dict(zip(plan.left_keys, plan.right_keys))[lcol])
    return JoinExec(plan.how, plan.left_keys, plan.right_keys,
                    side(plan.left, lschema, plan.left_keys, ("left", "coalesce"), plan.left_residual),
                    side(plan.right, rschema, plan.right_keys, ("right",), plan.right_residual),
                    output, pa.schema(fields), tuple(n for n, _, _ in selected), plan.merge, merge_key, batch_rows,
                    memory, spill_dir)


def hash_join(left: pa.Table, right: pa.Table, ex: JoinExec) -> pa.Table:
    """Join two in-memory sides with Acero and shape the output like Spark's join.

    Acero builds its hash table on the right input, so when the left is smaller the inputs are
    swapped and the join type flipped. NULL keys never match; outer joins keep their rows.
    """
    fast = _integer_key_join(left, right, ex)
    if fast is not None:
        return fast
    lnames = [f"l{i}" for i in range(left.num_columns)]
    rnames = [f"r{i}" for i in range(right.num_columns)]
    lpos = {c: f"l{i}" for i, c in enumerate(left.column_names)}
    rpos = {c: f"r{i}" for i, c in enumerate(right.column_names)}
    lt, rt = left.rename_columns(lnames), right.rename_columns(rnames)
    lk, rk = [lpos[k] for k in ex.left_keys], [rpos[k] for k in ex.right_keys]
    threads = address_space_cap() is None  # under a cap every thread's stack and arena costs address space
    if left.num_rows < right.num_rows:
        joined = rt.join(lt, rk, lk, join_type=_FLIPPED[ex.how], coalesce_keys=False, use_threads=threads)
    else:
        joined = lt.join(rt, lk, rk, join_type=_ACERO[ex.how], coalesce_keys=False, use_threads=threads)
    return _shape_output(ex, lambda c: joined.column(lpos[c]), lambda c: joined.column(rpos[c]))


def _shape_output(ex: JoinExec, left_column: Any, right_column: Any) -> pa.Table:
    """The output table from the joined sides' columns (``left_column(name)`` -> array, same for right).

    A USING key of a full join is the coalesce of both sides' keys; types are cast to the schema.
    """
    key_pairs = dict(zip(ex.left_keys, ex.right_keys))
    arrays = []
    for (source, col), fld in zip(ex.output, ex.schema):
        if source == "left":
            arr = left_column(col)
        elif source == "right":
            arr = right_column(col)
        else:
            arr = pc.coalesce(left_column(col), right_column(key_pairs[col]))
        arrays.append(arr.cast(fld.type) if arr.type != fld.type else arr)
    return pa.Table.from_arrays(arrays, schema=ex.schema)


def _integer_key(ex: JoinExec) -> bool:
    """Whether the join has the one integer-like key the numba kernel takes."""
    if len(ex.left_keys) != 1:
        return False
    return _integer_type(ex.left.schema.field(ex.left_keys[0]).type)


def _integer_type(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_date32(t)) and not pa.types.is_uint64(t)


def _kernels() -> Any:
    """The numba kernels module, or None under an address-space cap where it is not loaded yet
    (:func:`bucketkit.hashing.npkernels.numba_module`, the one rule).

    numba's LLVM takes ~190 MiB of address space, a third of a 600 MiB
    ``spark.executor.pyspark.memory``; there the join keeps that room for data and Acero joins
    instead (measured as fast on grace-join parts: 3.0 vs 2.8 s for 5M x 5M rows). A library that
    fails to load under the cap is a reason to use Acero too, not an error.
    """
    return numba_module("bucketkit.joins.kernels")


def _int64_keys(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """``(keys as int64, valid)`` for an integer-like key column, else None."""
    t = column.type
    if not _integer_type(t):
        return None
    if pa.types.is_date32(t):
        column = column.cast(pa.int32())
    valid = column.is_valid().to_numpy(zero_copy_only=False) if column.null_count else np.ones(len(column), np.bool_)
    values = pc.fill_null(column, 0) if column.null_count else column
    return np.asarray(values.to_numpy(), dtype=np.int64), valid


def _integer_key_join(left: pa.Table, right: pa.Table, ex: JoinExec) -> pa.Table | None:
    """The numba fast path for one integer-like key pair (see :mod:`bucketkit.joins.kernels`)."""
    if len(ex.left_keys) != 1:
        return None
    kernels = _kernels()
    lk, rk = _int64_keys(left.column(ex.left_keys[0])), _int64_keys(right.column(ex.right_keys[0]))
    if lk is None or rk is None or kernels is None:
        return None
    li, ri = kernels.join_indices(lk[0], lk[1], rk[0], rk[1], ex.how)

    def take(table: pa.Table, idx: np.ndarray) -> pa.Table:
        missing = idx < 0
        return table.take(pa.array(idx, mask=missing) if missing.any() else idx)

    lt = take(left, li)
    rt = take(right, ri) if ri is not None else None  # semi/anti joins output no right column
    return _shape_output(ex, lt.column, rt.column if rt is not None else None)


@dataclass
class MergeStats:
    """Counters of a merge join: ``max_buffered_rows`` proves its memory bound."""

    batches_read: int = 0
    chunks_joined: int = 0
    max_buffered_rows: int = 0


class _SortedStream:
    """One sorted file read batch by batch, with the rows read but not yet joined."""

    def __init__(self, side: SideRead, f: ReadUnit, key: str, batch_rows: int) -> None:
        self.path, self.key = f.path, key
        self._it = side.batches(f, batch_rows)
        self.pending: list[pa.Table] = []
        self.frontier: Any = None  # the largest non-null key read so far
        self.done = False

    def rows(self) -> int:
        return sum(t.num_rows for t in self.pending)

    def advance(self) -> bool:
        """Read one batch; False once the file is exhausted."""
        for batch in self._it:
            if batch.num_rows == 0:
                continue
            keys = batch.column(self.key).drop_null()
            if len(keys):
                bad = pc.any(pc.less(keys.slice(1), keys.slice(0, len(keys) - 1))).as_py()
                first = keys[0].as_py()
                if bad or (self.frontier is not None and first < self.frontier):
                    raise CorruptTableError(f"{self.path}: rows are not sorted ascending by {self.key}, "
                                            "though the table spec says sorted_by; rewrite it or drop sorted_by")
                self.frontier = keys[len(keys) - 1].as_py()
            self.pending.append(pa.Table.from_batches([batch]))
            return True
        self.done = True
        return False

    def take_below(self, bound: Any) -> pa.Table | None:
        """Remove and return the pending rows whose key is < bound or NULL (bound None = all)."""
        if not self.pending:
            return None
        table = pa.concat_tables(self.pending)
        if bound is None:
            self.pending = []
            return table
        key = table.column(self.key)
        ready = pc.fill_null(pc.less(key, pa.scalar(bound, key.type)), True)
        self.pending = [table.filter(pc.invert(ready))]
        return table.filter(ready)


def merge_join(left_files: Sequence[ReadUnit], right_files: Sequence[ReadUnit], ex: JoinExec,
               stats: MergeStats | None = None) -> Iterator[pa.Table]:
    """Streaming merge join of two groups of files each sorted ascending on ``ex.merge_key``.

    Rows with keys below the smallest frontier of the unfinished files are complete on both sides
    (nothing later in any file can be smaller), so that key range is joined and emitted. NULL keys
    match nothing and are emitted with whichever range is next.
    """
    stats = stats if stats is not None else MergeStats()
    lkey, rkey = ex.merge_key
    streams = ([("left", _SortedStream(ex.left, f, lkey, ex.batch_rows)) for f in left_files if f.size > 0]
               + [("right", _SortedStream(ex.right, f, rkey, ex.batch_rows)) for f in right_files if f.size > 0])
    while True:
        live = [s for _, s in streams if not s.done]
        if not live:
            bound, final = None, True
        else:
            # Read from the file that holds everyone back: no frontier yet, else the smallest one.
            unstarted = [s for s in live if s.frontier is None]
            lagging = unstarted[0] if unstarted else min(live, key=lambda s: s.frontier)
            lagging.advance()
            stats.batches_read += 1
            stats.max_buffered_rows = max(stats.max_buffered_rows, sum(s.rows() for _, s in streams))
            live = [s for _, s in streams if not s.done]
            if any(s.frontier is None for s in live):
                continue
            bound, final = (min(s.frontier for s in live) if live else None), not live
            if not final and sum(s.rows() for _, s in streams) < ex.batch_rows:
                continue
        parts = {"left": [], "right": []}
        for side, s in streams:
            taken = s.take_below(bound)
            if taken is not None and taken.num_rows:
                parts[side].append(taken)
        lt = pa.concat_tables(parts["left"]) if parts["left"] else ex.left.empty()
        rt = pa.concat_tables(parts["right"]) if parts["right"] else ex.right.empty()
        if lt.num_rows or rt.num_rows:
            stats.chunks_joined += 1
            out = hash_join(lt.select(list(ex.left.columns)), rt.select(list(ex.right.columns)), ex)
            if out.num_rows:
                yield out
        if final:
            return


def key_matches(plan: JoinPlan, group: BucketGroup, sample_rows: int = 16384) -> tuple[float, float]:
    """``(rows, matches)`` of one bucket group of a join on one key pair: the rows its two sides read and an
    estimate of the pairs of them whose keys are equal (NULL matches nothing), what an inner join of the group
    outputs. The larger side (by footer row counts) is sampled where it has no filter: its first
    ``sample_rows`` keys, matched against all of the smaller side's, the matches scaled by its rows over the
    sample (exact when it holds no more). A side with a filter is read whole, its rows counted as they pass.
    Reads keys (and filter columns) only, and counts by hash kernels (``value_counts``, ``index_in``), not
    Acero, whose first use in a process costs most of a second. Raises what reading raises, and
    ``pyarrow.ArrowException`` where Arrow cannot compare the two sides' key types."""
    if len(plan.left_keys) != 1:
        raise InvalidArgumentError(f"key_matches: a join on one key pair, not {list(plan.left_keys)}")
    ex = build_exec(plan, [plan.left_keys[0]])  # any output column will do: each side reads its keys
    # an estimate, not the join: rows are not re-hashed here (the join's own read checks them)
    sides = [(replace(ex.left, placement=None), ex.left_keys[0], group.left_files),
             (replace(ex.right, placement=None), ex.right_keys[0], group.right_files)]
    lrows, rrows = (ex.side_estimate(side, files)[0] for side, _, files in sides)
    (big, big_key, big_files), (small, small_key, small_files) = sides if lrows >= rrows else sides[::-1]
    limit = sample_rows if not big.filters else sys.maxsize
    sample, taken = [], 0
    for batch in big.stream(big_files, min(limit, ex.batch_rows)):
        sample.append(batch.column(big.columns.index(big_key)).slice(0, limit - taken))
        taken += len(sample[-1])
        if taken >= limit:
            break
    big_rows = max(lrows, rrows) if taken >= limit else taken  # a sample stands for the side's footer rows
    other = small.read(small_files)[small_key]
    if not taken or not len(other):
        return big_rows + len(other), 0.0
    counts = pc.value_counts(pa.chunked_array(sample).drop_null())
    at = pc.index_in(other, value_set=counts.field("values").cast(other.type)).drop_null()
    matches = pc.sum(pc.take(counts.field("counts"), at)).as_py() or 0
    return big_rows + len(other), matches * big_rows / taken


def describe_group(ex: JoinExec, group: BucketGroup) -> str:
    """The group in words, for errors: its id, buckets and tables."""
    return (f"bucket group {group.group_id} (left buckets {list(group.left_buckets)} of {ex.left.table or 'left'}, "
            f"right buckets {list(group.right_buckets)} of {ex.right.table or 'right'})")


def execute_group(ex: JoinExec, group: BucketGroup, stats: MergeStats | SpillStats | None = None,
                  budget: Budget | None = None) -> Iterator[pa.RecordBatch]:
    """Join one bucket group; yields record batches of ``ex.schema``.

    Sorted buckets stream through the merge join. Otherwise a group whose estimated working set
    fits the budget is read whole and joined in memory (the numba kernel for one integer key);
    a larger one, or one found larger while reading, goes through the grace hash join
    (:mod:`bucketkit.joins.spill`). Running out of memory anyway raises
    :class:`~bucketkit.errors.JoinMemoryError` naming the budget and the group.
    """
    if budget is None:
        if _integer_key(ex):
            _kernels()  # load numba (if it is to be used) before measuring what the worker has left
        budget = task_budget(ex.memory)
    try:
        if ex.merge:
            tables: Iterator[pa.Table] = merge_join(group.left_files, group.right_files, ex,
                                                    stats if isinstance(stats, MergeStats) else None)
        else:
            tables = _hash_group(ex, group, budget, stats if isinstance(stats, SpillStats) else None)
        for table in tables:
            yield from table.to_batches(max_chunksize=ex.batch_rows)
    except MemoryError as exc:  # pyarrow's ArrowMemoryError too: the estimate was short
        raise budget_error(describe_group(ex, group), ex.working_set(group), budget,
                           f"{type(exc).__name__}: {exc}") from exc


def _hash_group(ex: JoinExec, group: BucketGroup, budget: Budget, stats: SpillStats | None) -> Iterator[pa.Table]:
    """The group in memory when it fits, else by the grace hash join (also when reading shows it does not fit)."""
    streams = [ex.left.stream(group.left_files, ex.batch_rows), ex.right.stream(group.right_files, ex.batch_rows)]
    needed = ex.working_set(group)
    read: list[list[pa.RecordBatch]] = [[], []]
    if needed <= budget.bytes:
        complete, seen = _read_within(streams, read, budget.bytes)
        if complete:
            left = pa.Table.from_batches(read[0], schema=ex.left.read_schema)
            right = pa.Table.from_batches(read[1], schema=ex.right.read_schema)
            del read
            yield hash_join(left, right, ex)
            return
        needed = max(needed, 2 * seen)  # the footers undercounted: assume at least as much again is unread
    left_in, right_in = (itertools.chain(r, s) for r, s in zip(read, streams))
    yield from grace_join(lambda lt, rt: hash_join(lt, rt, ex), left_in, right_in,
                          (ex.left.read_schema, ex.right.read_schema), (ex.left_keys, ex.right_keys),
                          budget=budget, needed=needed, what=describe_group(ex, group), directory=ex.spill_dir,
                          stats=stats)


def _read_within(streams: Sequence[Iterator[pa.RecordBatch]], read: list[list[pa.RecordBatch]], limit: int
                 ) -> tuple[bool, int]:
    """Read both sides into ``read`` until done (True) or their working set passes ``limit`` (False).

    Returns the flag and the working set of what was read.
    """
    rows, nbytes = [0, 0], [0, 0]
    for i, stream in enumerate(streams):
        for batch in stream:
            read[i].append(batch)
            rows[i] += batch.num_rows
            nbytes[i] += batch.nbytes
            seen = working_set(nbytes[0], nbytes[1], rows[0], rows[1])
            if seen > limit:
                return False, seen
    return True, working_set(nbytes[0], nbytes[1], rows[0], rows[1])
