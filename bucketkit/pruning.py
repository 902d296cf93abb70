"""Scan planning: which partitions, buckets and files a filter can hit (pure Python).

Filters come in the form pyarrow and deltalake users know: a list of ``(column, op, value)``
tuples AND-ed together, or a list of such lists OR-ed together (disjunctive normal form, DNF).
:func:`normalize_filters` turns either into a DNF of plain tuples; :func:`plan_scan` turns a table
plus a DNF into a :class:`ScanPlan`: plain data saying which partition directories and which bucket
files to read, and why.

Pruning never guesses. Buckets are pruned only when *every* conjunction pins *every* bucket column
with ``=``, ``in`` or ``is null`` (Trino's rule); the literal values are hashed with the table's own
:class:`~bucketkit.hashing.BucketFunction`, so a literal compared with an ``int`` column hashes as
an ``int``. A literal that can never equal a value of the column's type (``3.5`` for ``int``)
selects no bucket. Partitions are pruned on the typed values of their directory names before their
files are listed. Anything else is left to the reader: the whole filter is always applied again to
the rows read (pruning works at file granularity), see :attr:`ScanPlan.residual`.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from bucketkit.errors import InvalidArgumentError
from bucketkit.io import HIVE_DEFAULT_PARTITION
from bucketkit.layout import format_bytes
from bucketkit.table import BucketedTable, open_table
from bucketkit.trust import bucketing_doubt

__all__ = ["normalize_filters", "buckets_for", "partition_predicate", "plan_scan", "ScanPlan",
           "PartitionScan", "format_filters", "OPS", "enumeration_bound"]

Term = tuple  # (column, op, value)
DNF = tuple  # conjunctions, each a tuple of terms; () = no filter, an empty conjunction = TRUE

# Canonical op -> accepted spellings (case-insensitive, "_" and spaces interchangeable).
_SPELLINGS = {
    "=": ("=", "=="), "!=": ("!=", "<>"), "<": ("<",), "<=": ("<=",), ">": (">",), ">=": (">=",),
    "in": ("in",), "not in": ("not in", "not_in"),
    "is null": ("is null", "is_null", "isnull"), "is not null": ("is not null", "is_not_null", "not null"),
}
OPS = tuple(_SPELLINGS)
_OP_OF = {spelling: op for op, spellings in _SPELLINGS.items() for spelling in spellings}
_LIST_OPS = ("in", "not in")
_NULL_OPS = ("is null", "is not null")
_PINNING = ("=", "in", "is null")


def _plain(value: Any) -> Any:
    """numpy / pyarrow scalars -> Python values."""
    if hasattr(value, "as_py"):
        return value.as_py()
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _term(raw: Any) -> Term:
    if not isinstance(raw, (tuple, list)) or len(raw) not in (2, 3) or not isinstance(raw[0], str):
        raise InvalidArgumentError(
            f"filter term {raw!r}: expected (column, op, value) or (column, 'is null'), e.g. ('k', '=', 1)")
    column, op = raw[0], raw[1]
    canon = _OP_OF.get(" ".join(str(op).lower().replace("_", " ").split())) if isinstance(op, str) else None
    if canon is None:
        raise InvalidArgumentError(f"filter term {tuple(raw)!r}: unknown op {op!r}; expected one of {list(OPS)}")
    if canon in _NULL_OPS:
        if len(raw) == 3 and raw[2] not in (None, True):
            raise InvalidArgumentError(f"filter term {tuple(raw)!r}: {canon!r} takes no value")
        return (column, canon, None)
    if len(raw) != 3:
        raise InvalidArgumentError(f"filter term {tuple(raw)!r}: op {canon!r} needs a value")
    value = raw[2]
    if canon in _LIST_OPS:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise InvalidArgumentError(
                f"filter term {tuple(raw)!r}: {canon!r} needs a list of values, e.g. ('k', 'in', [1, 2])")
        return (column, canon, tuple(_plain(v) for v in value))
    if isinstance(value, (list, tuple, set, frozenset)):
        raise InvalidArgumentError(f"filter term {tuple(raw)!r}: {canon!r} compares with one value; use 'in'")
    return (column, canon, _plain(value))


def normalize_filters(filters: Any) -> DNF:
    """Normalise pyarrow/deltalake-style filters into a DNF: a tuple of conjunctions of terms.

    Accepted: ``None`` (no filter), a list of terms (AND), a list of lists of terms (OR of ANDs),
    or an already normalised DNF. A term is ``(column, op, value)`` with op one of :data:`OPS`
    (``"=="``, ``"<>"``, ``"not_in"``, ``"is_null"``... are accepted spellings), or
    ``(column, "is null")`` / ``(column, "is not null")``. Comparisons follow SQL: a ``None`` value
    in ``=``/``in`` matches no row, use ``"is null"``.

    Raises:
        InvalidArgumentError: a malformed term or an unknown op (the message lists the valid ones).
    """
    if filters is None:
        return ()
    if isinstance(filters, (str, bytes)) or not isinstance(filters, (list, tuple)):
        raise InvalidArgumentError(
            f"filters={filters!r}: expected a list of (column, op, value) tuples or a list of such lists "
            f"(SQL predicate strings are accepted by bucketkit.scan)")
    items = list(filters)
    if not items:
        return ()
    if all(isinstance(i, (list, tuple)) and (not i or isinstance(i[0], (list, tuple))) for i in items):
        return tuple(tuple(_term(t) for t in conj) for conj in items)
    if any(isinstance(i, (list, tuple)) and i and isinstance(i[0], (list, tuple)) for i in items):
        raise InvalidArgumentError(f"filters={filters!r}: mixes terms and lists of terms; use either "
                                   f"[term, ...] (AND) or [[term, ...], ...] (OR of ANDs)")
    return (tuple(_term(t) for t in items),)


def format_filters(dnf: DNF) -> str:
    """SQL-like text of a DNF, for explanations."""
    def lit(v: Any) -> str:
        return "NULL" if v is None else repr(v.isoformat()) if isinstance(v, _dt.date) else repr(v)

    def term(t: Term) -> str:
        c, op, v = t
        if op in _NULL_OPS:
            return f"{c} {op.upper()}"
        if op in _LIST_OPS:
            return f"{c} {op.upper()} ({', '.join(lit(x) for x in v)})"
        return f"{c} {op} {lit(v)}"

    if not dnf:
        return "(none)"
    parts = [" AND ".join(term(t) for t in conj) or "TRUE" for conj in dnf]
    return parts[0] if len(parts) == 1 else " OR ".join(f"({p})" for p in parts)


# -- evaluating a term on one known value ------------------------------------------------------------
_UNKNOWN = object()


def _comparable(a: Any, b: Any) -> tuple[Any, Any] | None:
    """Both values in one Python-comparable domain, or None when Spark might compare them otherwise."""
    num = (int, float, decimal.Decimal)
    if isinstance(a, bool) or isinstance(b, bool):
        return (a, b) if isinstance(a, bool) and isinstance(b, bool) else None
    if isinstance(a, num) and isinstance(b, num):
        if any(isinstance(x, float) and math.isnan(x) for x in (a, b)):
            return None  # Spark orders NaN above everything and NaN = NaN; don't mimic, just keep
        if isinstance(a, decimal.Decimal) != isinstance(b, decimal.Decimal):
            a, b = decimal.Decimal(a) if isinstance(a, float) else a, decimal.Decimal(b) if isinstance(b, float) else b
        return a, b
    if isinstance(a, str) and isinstance(b, str):
        return a, b
    if isinstance(a, _dt.date) and not isinstance(a, _dt.datetime):
        if isinstance(b, str):
            try:
                b = _dt.date.fromisoformat(b.strip())
            except ValueError:
                return None
        if isinstance(b, _dt.date) and not isinstance(b, _dt.datetime):
            return a, b
    return None


def _eval(term: Term, value: Any) -> bool | None:
    """SQL truth of ``term`` for a column holding ``value``: True, False, or None (can't tell: keep)."""
    _, op, lit = term
    if value is _UNKNOWN:
        return None
    if op == "is null":
        return value is None
    if op == "is not null":
        return value is not None
    if value is None:
        return False  # NULL compared with anything is not true
    if op in _LIST_OPS:
        results = [_eval((None, "=", x), value) for x in lit]
        if op == "in":
            return True if True in results else (None if None in results else False)
        if any(x is None for x in lit) or True in results:
            return False  # x NOT IN (..., NULL) is never true
        return None if None in results else True
    if lit is None:
        return False
    pair = _comparable(value, lit)
    if pair is None:
        return None
    a, b = pair
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _typed_partition_value(raw: str | None, hive_type: str) -> Any:
    """A partition directory value as the Python value of its column type (_UNKNOWN if unsure)."""
    if raw is None or raw == HIVE_DEFAULT_PARTITION:
        return None
    name = hive_type.split("(")[0]
    try:
        if name in ("tinyint", "smallint", "int", "bigint"):
            return int(raw)
        if name in ("float", "double"):
            return float(raw)
        if name == "decimal":
            return decimal.Decimal(raw)
        if name == "boolean":
            return {"true": True, "false": False}[raw.lower()]
        if name == "date":
            return _dt.date.fromisoformat(raw)
        if name in ("string", "varchar"):
            return raw
    except (ValueError, KeyError, decimal.InvalidOperation):
        pass
    return _UNKNOWN  # timestamp, char padding, unparsable: never prune on it


# -- resolution of filter columns to the table's -----------------------------------------------------
def _resolve_columns(dnf: DNF, table: BucketedTable) -> DNF:
    """Column names as the table spells them (Hive/Spark names are case-insensitive)."""
    spec = table.spec
    known = [n for n, _ in spec.columns] + list(spec.partitioned_by) + list(spec.bucketed_by)
    lookup = {n.lower(): n for n in known}
    out = []
    for conj in dnf:
        terms = []
        for c, op, v in conj:
            name = lookup.get(c.lower())
            if name is None and spec.columns:
                raise InvalidArgumentError(f"filter on column {c!r}: {table} has no such column; "
                                           f"expected one of {sorted(set(known))}")
            terms.append((name or c, op, v))
        out.append(tuple(terms))
    return tuple(out)


# -- bucket pruning -----------------------------------------------------------------------------------
def enumeration_bound(bucket_count: int) -> int:
    """Most value combinations hashed before giving up (Trino: ``max(4 * bucket_count, 1000)``)."""
    return max(4 * bucket_count, 1000)


class _CannotPin(Exception):
    """A pinning literal whose hash cannot be known (the comparison depends on implicit casts)."""


def _pinned_values(conj: tuple, column: str, hive_type: str) -> list | None:
    """Values of ``column`` a row matching ``conj`` may hold, or None if the conjunction does not pin it."""
    from bucketkit.hashing import coerce_literal

    pins = [t for t in conj if t[0] == column and t[1] in _PINNING]
    if not pins:
        return None
    candidates: list | None = None
    for _, op, v in pins:
        raw = [None] if op == "is null" else list(v) if op == "in" else [v]
        values = []
        for x in raw:
            if x is None:
                if op == "is null":
                    values.append(None)
                continue  # `= NULL` / `IN (NULL)` is never true
            try:
                ok, canon = coerce_literal(x, hive_type)
            except InvalidArgumentError as exc:  # e.g. a number against a string column: casts decide
                raise _CannotPin(f"{column} {op} {x!r}: {exc}") from None
            if ok and canon not in values:
                values.append(canon)
        candidates = values if candidates is None else [c for c in candidates if c in values]
    others = [t for t in conj if t[0] == column and t[1] not in _PINNING]
    return [c for c in candidates if all(_eval(t, c) is not False for t in others)]


def _with_signed_zeros(values: list, hive_type: str) -> list:
    # SQL says 0.0 = -0.0, but Hive's hash (v2; v1 only by its sign bit) tells their bits apart.
    if hive_type not in ("float", "double"):
        return values
    return values + [-0.0 if math.copysign(1, v) > 0 else 0.0 for v in values if isinstance(v, float) and v == 0]


def buckets_for(spec, dnf: DNF) -> tuple[frozenset[int] | None, str]:
    """The buckets rows matching ``dnf`` can lie in: ``(frozenset, reason)`` or ``(None, reason)`` = all.

    Args:
        spec: the table's :class:`~bucketkit.metadata.TableSpec`.
        dnf: normalised filters (see :func:`normalize_filters`), column names as the table spells them.
    """
    n = spec.bucket_count
    if not dnf:
        return None, "no filter"
    if any(t.split("(")[0] in ("array", "map", "struct") for t in spec.bucket_types):
        return None, f"bucket types {list(spec.bucket_types)}: literals of complex types are not hashed"
    per_conj = []
    for i, conj in enumerate(dnf):
        columns = []
        for column, hive_type in zip(spec.bucketed_by, spec.bucket_types):
            try:
                values = _pinned_values(conj, column, hive_type)
            except _CannotPin as exc:
                return None, f"cannot hash {exc}"
            if values is None:
                where = f" in conjunction {i + 1} ({format_filters((conj,))})" if len(dnf) > 1 else ""
                return None, f"bucket column {column} is not pinned with =, IN or IS NULL{where}"
            columns.append(_with_signed_zeros(values, hive_type))
        per_conj.append(columns)
    combos = sum(math.prod(len(v) for v in cols) for cols in per_conj)
    bound = enumeration_bound(n)
    if combos > bound:
        return None, f"{combos} value combinations exceed the enumeration bound {bound} (max(4 x {n}, 1000))"
    fn = spec.bucket_function()
    selected = {fn.bucket_of(list(combo)) for cols in per_conj for combo in itertools.product(*cols)}
    how = f"hashed with {spec.hashing} as {', '.join(spec.bucket_types)}"
    if len(selected) == n:
        return None, f"the {combos} value combination(s) hit all {n} buckets ({how})"
    if not selected:
        return frozenset(), "no value of the filter can occur in the bucket column(s): no bucket selected"
    pins = tuple(tuple(t for t in conj if t[0] in spec.bucketed_by and t[1] in _PINNING) for conj in dnf)
    return frozenset(selected), f"{format_filters(pins)}: {combos} value combination(s) {how}"


# -- partition pruning --------------------------------------------------------------------------------
def _surviving(spec, dnf: DNF, values: dict[str, str]) -> tuple[int, ...]:
    """Indices of the conjunctions a partition with these directory values may satisfy."""
    typed = {c: _typed_partition_value(values.get(c), t) for c, t in zip(spec.partitioned_by, spec.partition_types)}
    return tuple(i for i, conj in enumerate(dnf)
                 if all(_eval(t, typed[t[0]]) is not False for t in conj if t[0] in typed))


def partition_predicate(spec, dnf: DNF) -> Callable[[dict[str, str]], bool]:
    """A ``partition_filter`` for :func:`bucketkit.layout.discover`: False only for partitions no row
    of which can match ``dnf`` (directory values typed with the partition column types)."""
    def keep(values: dict[str, str]) -> bool:
        return not dnf or bool(_surviving(spec, dnf, values))
    return keep


# -- the plan -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PartitionScan:
    """What to read in one partition directory.

    Attributes:
        values: partition values as in the directory names (``{}`` for an unpartitioned table).
        path: the directory.
        bucket_files: selected bucket id -> its files (full paths; a bucket may have none).
        sizes: file path -> size in bytes (zero-byte ORC files are empty buckets, never read).
    """

    values: dict
    path: str
    bucket_files: dict
    sizes: dict = field(default_factory=dict)

    @property
    def files(self) -> tuple[str, ...]:
        """Selected non-empty files, in bucket order."""
        return tuple(f for b in sorted(self.bucket_files) for f in self.bucket_files[b] if self.sizes.get(f, 1) > 0)


@dataclass(frozen=True)
class ScanPlan:
    """Which partitions, buckets and files a scan reads, and why. Plain data; see :meth:`explain`.

    Attributes:
        table: the table scanned.
        filters: the normalised filters (DNF) pruning was computed from.
        selected_buckets: bucket ids that can hold matching rows, or None for all.
        bucket_reason: why these buckets (or why all).
        partition_reason: why these partitions.
        partitions: one :class:`PartitionScan` per selected partition.
        residual: filters the reader must still apply to the rows read (all of them: pruning is by file).
        columns: columns to return (None = all).
        partitions_total / partitions_selected: partition directories seen / kept.
        files_listed / bytes_listed: files in the kept partitions (pruned ones are never listed).
        files_selected / bytes_selected: files (with bytes) in the selected buckets.
        acid: the selected files include Hive ACID base/delta files (rows need ACID merging).
        unbucketed: why the table is read as unbucketed (its hash cannot be vouched for, see
            :mod:`bucketkit.trust`), or None; then no bucket is pruned and joins shuffle.
    """

    table: BucketedTable
    filters: DNF
    selected_buckets: frozenset[int] | None
    bucket_reason: str
    partition_reason: str
    partitions: tuple[PartitionScan, ...]
    residual: DNF
    columns: tuple[str, ...] | None
    partitions_total: int
    files_listed: int
    bytes_listed: int
    acid: bool = False
    unbucketed: str | None = None

    @property
    def partitions_selected(self) -> int:
        return len(self.partitions)

    @property
    def files(self) -> tuple[str, ...]:
        """Every non-empty file to read."""
        return tuple(f for p in self.partitions for f in p.files)

    @property
    def files_selected(self) -> int:
        return sum(len(fs) for p in self.partitions for fs in p.bucket_files.values())

    @property
    def bytes_selected(self) -> int:
        return sum(p.sizes.get(f, 0) for p in self.partitions for fs in p.bucket_files.values() for f in fs)

    @property
    def is_pruned(self) -> bool:
        """True when the plan reads less than the whole table."""
        return self.selected_buckets is not None or self.partitions_selected < self.partitions_total

    def explain(self) -> str:
        """Readable text: partitions, buckets, files and bytes selected vs total, and why."""
        spec, n = self.table.spec, self.table.spec.bucket_count
        cols = ", ".join(f"{c} {t}" for c, t in zip(spec.bucketed_by, spec.bucket_types))
        buckets = ("all" if self.selected_buckets is None
                   else f"{len(self.selected_buckets)} of {n}: {sorted(self.selected_buckets)}")
        lines = [
            f"scan of {self.table} ({spec.file_format}, {n} buckets by {cols}, {spec.hashing})",
            f"filters:    {format_filters(self.filters)}",
            f"partitions: {self.partitions_selected} of {self.partitions_total} ({self.partition_reason})",
            f"buckets:    {buckets} ({self.bucket_reason})",
            f"files:      {self.files_selected} of {self.files_listed} listed, {format_bytes(self.bytes_selected)} "
            f"of {format_bytes(self.bytes_listed)} ({len(self.files)} non-empty to read)",
        ]
        for p in self.partitions[:20]:
            where = "/".join(f"{k}={v}" for k, v in p.values.items()) or "(table root)"
            count = sum(len(fs) for fs in p.bucket_files.values())
            if len(p.bucket_files) == n:
                lines.append(f"  {where}: all {n} buckets, {count} files, {format_bytes(sum(p.sizes.values()))}")
                continue
            shown = ", ".join(f"bucket {b}: {' '.join(f.rsplit('/', 1)[-1] for f in fs) or '(no file)'}"
                              for b, fs in sorted(p.bucket_files.items())[:8])
            more = f" ... (+{len(p.bucket_files) - 8} buckets)" if len(p.bucket_files) > 8 else ""
            lines.append(f"  {where}: {shown}{more}")
        if len(self.partitions) > 20:
            lines.append(f"  ... (+{len(self.partitions) - 20} partitions)")
        lines.append(f"residual:   {format_filters(self.residual)} (applied to the rows read)")
        if self.columns is not None:
            lines.append(f"columns:    {', '.join(self.columns)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()


def plan_scan(table: BucketedTable | str, filters: Any = None, *, columns: Sequence[str] | None = None,
              **table_options: Any) -> ScanPlan:
    """Plan a scan: the partitions, buckets and files that rows matching ``filters`` can lie in.

    Args:
        table: a :class:`~bucketkit.table.BucketedTable`, or a path opened with
            :func:`~bucketkit.table.open_table` (``table_options`` such as ``bucketed_by=``,
            ``bucket_count=``, ``bucket_types=`` describe a foreign table without metadata).
        filters: pyarrow/deltalake-style filters (see :func:`normalize_filters`).
        columns: columns the scan returns (None = all).

    Returns:
        A :class:`ScanPlan`; nothing is read, only directories are listed (pruned partitions are not).
    """
    table = open_table(table, **table_options) if not isinstance(table, BucketedTable) else table
    spec = table.spec
    dnf = _resolve_columns(normalize_filters(filters), table)
    if columns is not None:
        columns = tuple(columns)
        known = [n for n, _ in spec.columns] + list(spec.partitioned_by)
        missing = [c for c in columns if spec.columns and c not in known]
        if missing:
            raise InvalidArgumentError(f"columns={list(columns)}: {missing} not in {table}; expected some of {known}")
    seen: dict[tuple, bool] = {}  # every partition discover() offers the filter (it may list twice)
    keep = partition_predicate(spec, dnf)
    layout = table.layout(partition_filter=(lambda v: seen.setdefault(tuple(sorted(v.items())), keep(v)))
                          if spec.partitioned_by else None)
    doubt = bucketing_doubt(table, layout)
    selected, reason = (None, f"read unbucketed: {doubt}") if doubt else buckets_for(spec, dnf)
    cache: dict[tuple[int, ...], frozenset[int] | None] = {}
    scans, listed, listed_bytes, acid = [], 0, 0, False
    for part in layout.partition_layouts:
        survivors = _surviving(spec, dnf, part.values) if spec.partitioned_by and dnf else tuple(range(len(dnf)))
        if dnf and not survivors:
            continue
        if survivors not in cache:
            cache[survivors] = buckets_for(spec, tuple(dnf[i] for i in survivors))[0] if dnf and not doubt else None
        mine = cache[survivors]
        chosen = {b: fs for b, fs in part.buckets.items() if mine is None or b in mine}
        acid = acid or any(f.kind not in ("data", "original") for fs in chosen.values() for f in fs)
        listed += sum(len(fs) for fs in part.buckets.values())
        listed_bytes += sum(f.size for fs in part.buckets.values() for f in fs)
        scans.append(PartitionScan(dict(part.values), part.path,
                                   {b: tuple(f.path for f in fs) for b, fs in sorted(chosen.items())},
                                   {f.path: f.size for fs in chosen.values() for f in fs}))
    total = len(seen) if spec.partitioned_by else 1
    if not spec.partitioned_by:
        preason = "unpartitioned table"
    elif len(scans) == total:
        preason = "no filter excludes a partition" if dnf else "no filter"
    else:
        cols = sorted({t[0] for conj in dnf for t in conj if t[0] in spec.partitioned_by})
        preason = f"filters on partition column(s) {', '.join(cols)} exclude {total - len(scans)}"
    return ScanPlan(table, dnf, selected, reason, preason, tuple(scans), dnf, columns, total, listed, listed_bytes,
                    acid, doubt)
