"""How much memory a bucket group needs, and how much a join task may use.

Estimates are decoded Arrow bytes (what the join holds), not file bytes: ORC and Parquet footers
give each file's row count, the schema gives each column's width (fixed-width types exactly;
strings and binaries at :data:`VARIABLE_WIDTH` bytes a value unless a Parquet footer says better).

The budget of a join task (:func:`task_budget`) is the smallest of:
    * the bucketkit option ``spark.bucketkit.join.memory`` (a Spark size: ``512m``, ``2g``; no unit =
      MiB), else :data:`DEFAULT_BUDGET`;
    * under a capped address space (Spark sets ``RLIMIT_AS`` of each Python worker, i.e. of each
      concurrent task, from ``spark.executor.pyspark.memory``), what the worker has left below
      the cap, less a reserve for the allocator and threads.
"""

from __future__ import annotations

import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import pyarrow as pa

from bucketkit.errors import InvalidArgumentError, JoinMemoryError
from bucketkit.hashing.npkernels import address_space_cap
from bucketkit.units import ReadUnit
from bucketkit.layout.discovery import format_bytes

if TYPE_CHECKING:
    from bucketkit.joins.sides import BucketGroup
    from bucketkit.table import BucketedTable

__all__ = ["Budget", "task_budget", "parse_size", "OPTION", "DEFAULT_BUDGET", "VARIABLE_WIDTH", "column_width",
           "row_width", "working_set", "budget_error", "partitions_for", "estimate_memory",
           "address_space_cap", "room_under_cap"]

OPTION = "spark.bucketkit.join.memory"
DEFAULT_BUDGET = 512 * 1024 * 1024
#: Assumed bytes of one string/binary value (plus its 4-byte offset) when no footer says better.
VARIABLE_WIDTH = 24
#: Address space kept free under a cap: allocator slack, thread stacks, Arrow's output buffers.
CAP_RESERVE = 48 * 1024 * 1024
#: Share of the free address space the join's working set may take (the rest absorbs fragmentation).
CAP_SHARE = 0.7

_UNITS = {"": 2 ** 20, "b": 1, "k": 2 ** 10, "kb": 2 ** 10, "m": 2 ** 20, "mb": 2 ** 20, "g": 2 ** 30,
          "gb": 2 ** 30, "t": 2 ** 40, "tb": 2 ** 40}


def parse_size(text: str | int, option: str = OPTION) -> int:
    """A Spark-style size (``"600m"``, ``"2g"``, ``"1048576b"``; no unit = MiB, as Spark's) in bytes."""
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    unit = match and match[2].lower().replace("i", "")
    if not match or unit not in _UNITS:
        raise InvalidArgumentError(f"{option}={text!r}: expected a size like 512m, 2g or 1048576b")
    return int(float(match[1]) * _UNITS[unit])


@dataclass(frozen=True)
class Budget:
    """The memory a join task may use for one group: ``bytes``, and where that figure comes from."""

    bytes: int
    source: str

    def __str__(self) -> str:
        return f"{format_bytes(self.bytes)} ({self.source})"


def _address_space() -> tuple[int | None, int]:
    """``(RLIMIT_AS soft limit or None, current VmSize)`` of this process, in bytes."""
    soft = address_space_cap()
    if soft is None:
        return None, 0
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration):
        vm = 0
    return soft, vm


def room_under_cap(taken_later: int = 0) -> tuple[int, int] | None:
    """``(cap, bytes a join may use)`` in this process under its address-space cap (None: uncapped):
    70 % of what is left below the cap less :data:`CAP_RESERVE` and ``taken_later`` (what the process
    will take before the join runs)."""
    cap, used = _address_space()
    return None if cap is None else (cap, _room(cap, used, taken_later))


def _room(cap: int, used: int, taken_later: int = 0) -> int:
    return max(0, int((cap - used - taken_later - CAP_RESERVE) * CAP_SHARE))


def task_budget(configured: int | None = None) -> Budget:
    """The budget of a join task in this process (see the module docstring).

    ``configured`` is the ``spark.bucketkit.join.memory`` value read on the driver (None = unset).
    """
    budget = Budget(configured, f"{OPTION}={format_bytes(configured)}") if configured else \
        Budget(DEFAULT_BUDGET, f"bucketkit's default, {OPTION} unset")
    cap, used = _address_space()
    if cap is None:
        return budget
    free = _room(cap, used)
    if free >= budget.bytes:
        return budget
    spark_mb = os.environ.get("PYSPARK_EXECUTOR_MEMORY_MB")
    where = (f"spark.executor.pyspark.memory gives each Python worker {spark_mb} MiB" if spark_mb else
             f"the process's address space is capped at {format_bytes(cap)}")
    return Budget(free, f"{where}, of which {format_bytes(cap - used)} was free when the task started")


def column_width(typ: pa.DataType) -> float:
    """Decoded bytes of one value of ``typ`` in Arrow (validity bit included)."""
    if pa.types.is_boolean(typ):
        return 0.25
    try:
        return typ.bit_width / 8 + 0.125
    except ValueError:  # variable width: strings, binaries, nested
        pass
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return 4 + 4 * column_width(typ.value_type)
    if pa.types.is_struct(typ):
        return sum(column_width(f.type) for f in typ)
    if pa.types.is_map(typ):
        return 4 + 4 * (column_width(typ.key_type) + column_width(typ.item_type))
    return VARIABLE_WIDTH


def row_width(schema: pa.Schema, columns: Sequence[str] | None = None) -> float:
    """Decoded bytes of one row of these columns (all of ``schema`` when None)."""
    names = schema.names if columns is None else columns
    return sum(column_width(schema.field(c).type) for c in names)


def working_set(left_bytes: float, right_bytes: float, left_rows: float, right_rows: float) -> int:
    """Peak bytes of joining two in-memory sides of these sizes with the hash kernels.

    Both inputs, plus the hash table, probe heads, pair indices and the output table: the output
    of a key-to-key join is about the larger side's rows with both sides' columns. Calibrated on
    the 20M-row benchmark (see docs/joins.md): measured peaks stay below this figure.
    """
    return int(2 * (left_bytes + right_bytes) + 64 * (left_rows + right_rows))


def budget_error(what: str, needed: float, budget: Budget, cause: str = "") -> JoinMemoryError:
    """The error of a group that cannot be joined within its budget, with the remedy."""
    return JoinMemoryError(
        f"{what} needs about {format_bytes(needed)} to join, more than the join memory budget of {budget}"
        f"{': ' + cause if cause else ''}. Remedy: raise spark.executor.pyspark.memory (or {OPTION}, if that is "
        "the limit), or rewrite the tables with more buckets; the rows of one join key value must fit in the "
        "budget")


def partitions_for(needed: float, budget: int, fanout_max: int = 256) -> int:
    """How many parts (a power of two, 2..fanout_max) split ``needed`` bytes into budget-sized ones."""
    parts = 2 ** max(1, math.ceil(math.log2(max(2.0, needed / max(1, budget * 0.5)))))
    return int(min(fanout_max, parts))


def estimate_memory(groups: Sequence[BucketGroup], left: BucketedTable, right: BucketedTable,
                    left_schema: pa.Schema | None, right_schema: pa.Schema | None) -> tuple[BucketGroup, ...]:
    """The groups with each file's footer row count and each side's decoded size filled in.

    Decoded bytes = footer rows x the row width of the side's schema (:mod:`bucketkit.joins.memory`);
    a file whose footer cannot be read (or a side without a schema) counts 4 bytes per file byte.
    An ACID bucket's rows are its base/delta/original footer rows less its delete events.
    Footers are read a few at a time, which matters on object stores.
    """
    todo = {(side, f.path, f.bucket): f for g in groups for side, files in (("l", g.left_files), ("r", g.right_files))
            for f in files if f.rows < 0 and f.size > 0}
    tables = {"l": left, "r": right}

    def rows_of(key: tuple[str, str, int]) -> int | None:
        f, fs = todo[key], tables[key[0]].filesystem
        fmt = tables[key[0]].spec.file_format
        return f.count_rows(fs, fmt)

    with ThreadPoolExecutor(max_workers=8) as pool:
        counts = dict(zip(todo, pool.map(rows_of, todo)))
    widths = {"l": row_width(left_schema) if left_schema is not None else None,
              "r": row_width(right_schema) if right_schema is not None else None}

    def side(key: str, files: tuple[ReadUnit, ...]) -> tuple[tuple[ReadUnit, ...], int]:
        out, memory = [], 0.0
        for f in files:
            rows = counts.get((key, f.path, f.bucket))
            f = replace(f, rows=rows) if rows is not None else f
            known = f.rows >= 0 and widths[key] is not None
            memory += f.rows * widths[key] if known else 4 * f.size
            out.append(f)
        return tuple(out), int(memory)

    estimated = []
    for g in groups:
        (lf, lm), (rf, rm) = side("l", g.left_files), side("r", g.right_files)
        estimated.append(replace(g, left_files=lf, right_files=rf, left_memory=lm, right_memory=rm))
    return tuple(estimated)
