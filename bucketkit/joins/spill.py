"""Grace hash join: a bucket group too large for its memory budget, joined part by part.

Both sides are read batch by batch and split by further hash bits of the join key into ``k``
parts, each part of each side written to local disk as an Arrow IPC stream (Spark's local
directory in a worker). Rows can only match rows of the same part, so joining part i of the left
with part i of the right, for every i, gives exactly the group's join for every join type: an
unmatched row is unmatched in its part because all its possible matches are in that part. A part
still above the budget is split again with a different hash (recursion); a part that does not
shrink when split holds mostly one key value and cannot be joined within the budget, which raises
:class:`~bucketkit.errors.JoinMemoryError`.

Rows with a NULL key never match, so they skip the partitioning: they are joined at once with an
empty other side, which keeps exactly the rows the join type preserves (left, full, left anti).
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bucketkit.joins.memory import Budget, budget_error, partitions_for, working_set

__all__ = ["grace_join", "partition_ids", "spill_directory", "MAX_LEVELS", "SpillStats"]

#: Splits before giving up: each splits into at least 4 parts, so rows of different keys part
#: ways unless one key value alone is larger than the budget.
MAX_LEVELS = 4
#: At most this many parts a split (two open spill files each; part ids must fit 8 bits).
FANOUT = 128

Join = Callable[[pa.Table, pa.Table], pa.Table]


class SpillStats:
    """Counters of a grace join: parts joined, deepest level, bytes written (tests check them)."""

    def __init__(self) -> None:
        self.parts_joined = 0
        self.max_level = 0
        self.bytes_spilled = 0
        self.max_part_working_set = 0


def spill_directory() -> str:
    """Spark's local directory in an executor (``SPARK_LOCAL_DIRS``), else the system's temp dir."""
    local = [d for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(",") if d and os.path.isdir(d)]
    return local[0] if local else tempfile.gettempdir()


def key_valid(batch: pa.RecordBatch, keys: Sequence[str]) -> np.ndarray:
    """True where every key column is non-NULL (only those rows can match)."""
    valid = np.ones(batch.num_rows, np.bool_)
    for k in keys:
        col = batch.column(k)
        if col.null_count:
            valid &= col.is_valid().to_numpy(zero_copy_only=False)
    return valid


_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def partition_ids(batch: pa.RecordBatch, keys: Sequence[str], level: int, parts: int) -> np.ndarray:
    """The part (0..parts-1, a power of two) of each row: high bits of a hash seeded by ``level``.

    One integer-like key: splitmix64 of the value (cheap, vectorised). Anything else: pandas'
    row hash of the key columns (strings, decimals, several keys), seeded per level. Equal keys get
    equal parts on both sides since both sides' key types are equal (the planner checks that).
    """
    col = batch.column(keys[0])
    t = col.type
    if len(keys) == 1 and (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)):
        x = pc.fill_null(col.cast(pa.int64()) if not pa.types.is_int64(t) else col, 0).to_numpy()
        h = x.view(np.uint64) + np.uint64(0x9E3779B97F4A7C15 * (level + 1) % 2 ** 64)
        h = (h ^ (h >> np.uint64(30))) * _M1
        h = (h ^ (h >> np.uint64(27))) * _M2
        h = h ^ (h >> np.uint64(31))
    else:
        import pandas as pd

        frame = pa.Table.from_batches([batch.select(list(keys))]).to_pandas()
        h = pd.util.hash_pandas_object(frame, index=False, hash_key=f"bucketkit-join{level:02d}"[:16]).to_numpy()
    bits = int(parts).bit_length() - 1
    return (h >> np.uint64(64 - bits)).astype(np.int64) if bits else np.zeros(batch.num_rows, np.int64)


class _Spill:
    """One side's rows split into parts, each an Arrow IPC stream file."""

    def __init__(self, directory: str, side: str, schema: pa.Schema, parts: int) -> None:
        self.paths = [os.path.join(directory, f"{side}-{p}.arrow") for p in range(parts)]
        self.schema = schema
        self.writers: list[pa.ipc.RecordBatchStreamWriter | None] = [None] * parts
        self.rows = [0] * parts
        self.bytes = [0] * parts

    def add(self, batch: pa.RecordBatch, ids: np.ndarray) -> None:
        order = np.argsort(ids.astype(np.uint8), kind="stable")  # a radix sort on 8 bits
        counts = np.bincount(ids, minlength=len(self.paths))
        batch = batch.take(pa.array(order))
        offset = 0
        for p, count in enumerate(counts):
            if not count:
                continue
            piece = batch.slice(offset, count)
            offset += count
            if self.writers[p] is None:
                self.writers[p] = pa.ipc.new_stream(pa.OSFile(self.paths[p], "wb"), self.schema)
            self.writers[p].write_batch(piece)
            self.rows[p] += count
            self.bytes[p] += piece.nbytes

    def close(self) -> None:
        for w in self.writers:
            if w is not None:
                w.close()

    def batches(self, p: int) -> Iterator[pa.RecordBatch]:
        """Part p batch by batch, memory-mapped (the pages are the file's, not the heap's)."""
        if self.writers[p] is None:
            return
        with pa.memory_map(self.paths[p]) as source:
            yield from pa.ipc.open_stream(source)

    def table(self, p: int) -> pa.Table:
        return pa.Table.from_batches(list(self.batches(p)), schema=self.schema)

    def remove(self, p: int) -> None:
        if self.writers[p] is not None and os.path.exists(self.paths[p]):
            os.remove(self.paths[p])


def _one_key(spill: _Spill, p: int, keys: Sequence[str]) -> bool:
    """Whether part p holds at most one distinct key (its NULL keys were taken out before)."""
    seen: list = [None] * len(keys)
    for batch in spill.batches(p):
        for i, k in enumerate(keys):
            low, high = pc.min_max(batch.column(k)).values()
            if low != high or (seen[i] is not None and seen[i] != low):
                return False
            seen[i] = low
    return True


def grace_join(join: Join, left: Iterable[pa.RecordBatch], right: Iterable[pa.RecordBatch],
               schemas: tuple[pa.Schema, pa.Schema], keys: tuple[Sequence[str], Sequence[str]], *,
               budget: Budget, needed: float, what: str, directory: str | None = None, level: int = 0,
               stats: SpillStats | None = None) -> Iterator[pa.Table]:
    """Join two streams of batches within ``budget`` bytes, spilling parts to ``directory``.

    Args:
        join: joins two in-memory tables (the hash kernel with the join's type and output).
        left, right: each side's batches (schemas ``schemas``), join keys ``keys``.
        budget: the memory budget; ``needed`` is the estimated working set of the whole input,
            which sets the number of parts.
        what: the group, for error messages.
    """
    stats = stats if stats is not None else SpillStats()
    stats.max_level = max(stats.max_level, level)
    parts = partitions_for(needed, budget.bytes, FANOUT)
    empty = (schemas[0].empty_table(), schemas[1].empty_table())
    with tempfile.TemporaryDirectory(prefix="bucketkit-join-", dir=directory or spill_directory()) as tmp:
        spills = []
        for i, (batches, schema, side_keys) in enumerate(zip((left, right), schemas, keys)):
            spill = _Spill(tmp, ("left", "right")[i], schema, parts)
            try:
                for batch in batches:
                    valid = key_valid(batch, side_keys)
                    if not valid.all():
                        nulls = pa.Table.from_batches([batch.filter(pa.array(~valid))])
                        out = join(nulls, empty[1]) if i == 0 else join(empty[0], nulls)
                        if out.num_rows:
                            yield out
                        batch = batch.filter(pa.array(valid))
                    if batch.num_rows:
                        spill.add(batch, partition_ids(batch, side_keys, level, parts))
            finally:
                spill.close()
            stats.bytes_spilled += sum(spill.bytes)
            spills.append(spill)
        lsp, rsp = spills
        for p in range(parts):
            need = working_set(lsp.bytes[p], rsp.bytes[p], lsp.rows[p], rsp.rows[p])
            if need <= budget.bytes:
                stats.parts_joined += 1
                stats.max_part_working_set = max(stats.max_part_working_set, need)
                out = join(lsp.table(p), rsp.table(p))
                if out.num_rows:
                    yield out
            elif level + 1 >= MAX_LEVELS or (_one_key(lsp, p, keys[0]) and _one_key(rsp, p, keys[1])):
                raise budget_error(f"{what}, part {p + 1} of {parts} at split level {level + 1} "
                                   f"({lsp.rows[p]:,} left rows x {rsp.rows[p]:,} right rows)", need, budget,
                                   "all its rows share one join key value (or a few), so splitting by further "
                                   "hash bits cannot shrink it")
            else:
                yield from grace_join(join, lsp.batches(p), rsp.batches(p), schemas, keys, budget=budget,
                                      needed=need, what=what, directory=tmp, level=level + 1, stats=stats)
            lsp.remove(p)
            rsp.remove(p)
