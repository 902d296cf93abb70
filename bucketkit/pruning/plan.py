"""Scan planning: which partitions, buckets and files a filter can hit (pure Python).

A filter (a DNF of ``(column, op, value)`` terms, see :mod:`bucketkit.pruning.filters`) is projected the
way an Iceberg transform projects a predicate: through the table's bucket function onto bucket ids
(:func:`buckets_for`), and onto the typed values of partition directories
(:func:`partition_predicate`). :func:`plan_scan` turns a table plus filters into a
:class:`ScanPlan`: plain data saying which partition directories and which bucket files to read,
and why.

Pruning never guesses. Buckets are pruned only when *every* conjunction pins *every* bucket column
with ``=``, ``in`` or ``is null`` (Trino's rule); the literal values are hashed with the table's own
:class:`~bucketkit.hashing.hive.BucketFunction`, so a literal compared with an ``int`` column hashes as
an ``int``. A literal that can never equal a value of the column's type (``3.5`` for ``int``)
selects no bucket. Partitions are pruned on the typed values of their directory names before their
files are listed. Anything else is left to the reader: the whole filter is always applied again to
the rows read (pruning works at file granularity), see :attr:`ScanPlan.residual`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from bucketkit.acid import plan as acidplan
from bucketkit.hudi import plan as hudiplan
from bucketkit.errors import InvalidArgumentError, TableNotFoundError
from bucketkit.io import HIVE_DEFAULT_PARTITION
from bucketkit.pruning.filters import DNF, UNKNOWN, Term, coerce_literal, evaluate, normalize, to_text
from bucketkit.layout.discovery import format_bytes
from bucketkit.table import BucketedTable, open_table
from bucketkit.trust import bucketing_doubt
from bucketkit.units import ReadUnit, TableKind
from bucketkit.layout.manifest import Placement, placement
from bucketkit.layout.metadata import read_spec
from bucketkit.layout.versions import TablePaths, Version, find_version
from bucketkit.acid.writeids import ValidWriteIdList

__all__ = ["buckets_for", "partition_predicate", "plan_scan", "table_as_of", "ScanPlan", "PartitionScan", "enumeration_bound",
           "normalize_filters"]

normalize_filters = normalize  # its name before bucketkit.pruning.filters (in docs and __all__): kept for callers

_PINNING = ("=", "in", "is null")  # the ops a bucket function can project: they pin a column's values


def _typed_partition_value(raw: str | None, hive_type: str) -> Any:
    """A partition directory value as the Python value of its column type (UNKNOWN if unsure)."""
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
    return UNKNOWN  # timestamp, char padding, unparsable: never prune on it


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
            terms.append(Term(name or c, op, v))
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
    return [c for c in candidates if all(evaluate(t, c) is not False for t in others)]


def _with_signed_zeros(values: list, hive_type: str) -> list:
    # SQL says 0.0 = -0.0, but Hive's hash (v2; v1 only by its sign bit) tells their bits apart.
    if hive_type not in ("float", "double"):
        return values
    return values + [-0.0 if math.copysign(1, v) > 0 else 0.0 for v in values if isinstance(v, float) and v == 0]


def buckets_for(spec, dnf: DNF) -> tuple[frozenset[int] | None, str]:
    """The buckets rows matching ``dnf`` can lie in: ``(frozenset, reason)`` or ``(None, reason)`` = all.

    Args:
        spec: the table's :class:`~bucketkit.layout.metadata.TableSpec`.
        dnf: normalised filters (see :func:`bucketkit.pruning.filters.normalize`), column names as the table spells them.
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
                where = f" in conjunction {i + 1} ({to_text((conj,))})" if len(dnf) > 1 else ""
                return None, f"bucket column {column} is not pinned with =, IN or IS NULL{where}"
            columns.append(_with_signed_zeros(values, hive_type))
        per_conj.append(columns)
    combos = sum(math.prod(len(v) for v in cols) for cols in per_conj)
    bound = enumeration_bound(n)
    if combos > bound:
        return None, f"{combos} value combinations exceed the enumeration bound {bound} (max(4 x {n}, 1000))"
    fn = spec.bucket_function()
    try:
        selected = {fn.bucket_of(list(combo)) for cols in per_conj for combo in itertools.product(*cols)}
    except InvalidArgumentError as exc:  # a value the family cannot hash for sure (Hudi: an empty key)
        return None, f"cannot hash {exc}"
    how = f"hashed with {spec.hashing} as {', '.join(spec.bucket_types)}"
    if len(selected) == n:
        return None, f"the {combos} value combination(s) hit all {n} buckets ({how})"
    if not selected:
        return frozenset(), "no value of the filter can occur in the bucket column(s): no bucket selected"
    pins = tuple(tuple(t for t in conj if t[0] in spec.bucketed_by and t[1] in _PINNING) for conj in dnf)
    return frozenset(selected), f"{to_text(pins)}: {combos} value combination(s) {how}"


# -- partition pruning --------------------------------------------------------------------------------
def _surviving(spec, dnf: DNF, values: dict[str, str]) -> tuple[int, ...]:
    """Indices of the conjunctions a partition with these directory values may satisfy."""
    typed = {c: _typed_partition_value(values.get(c), t) for c, t in zip(spec.partitioned_by, spec.partition_types)}
    return tuple(i for i, conj in enumerate(dnf)
                 if all(evaluate(t, typed[t[0]]) is not False for t in conj if t[0] in typed))


def partition_predicate(spec, dnf: DNF) -> Callable[[dict[str, str]], bool]:
    """A ``partition_filter`` for :func:`bucketkit.layout.discovery.discover`: False only for partitions no row
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
        snapshot: for a table of a kind (``ScanPlan.kind``), the partition's snapshot as the kind
            planned it, else None. For Hive ACID (an :class:`~bucketkit.acid.state.AcidState`: base,
            deltas, delete deltas and original files chosen; obsolete and aborted ones)
            ``bucket_files`` holds each bucket's original, base/delta and delete-delta files, and
            each bucket is one unit.
        scheme: how its files are named (:class:`~bucketkit.layout.discovery.PartitionLayout`'s
            scheme: ``"hive"``, ``"spark"``, ``"acid"``, ...).
        vouched: its files are exactly those a bucketkit commit (or ``validate --vouch``) recorded with the
            read's layout (:mod:`bucketkit.layout.manifest`): a reader need not re-hash its rows.
    """

    values: dict
    path: str
    bucket_files: dict
    sizes: dict = field(default_factory=dict)
    snapshot: Any = None
    scheme: str = ""
    vouched: bool = False

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
        unbucketed: why the table is read as unbucketed (its hash cannot be vouched for, see
            :mod:`bucketkit.trust`), or None; then no bucket is pruned and joins shuffle.
        exact: ``root`` holds no file of a partition the plan lacks (a reader of every partition may read it
            whole).
        root: the directory the plan's files were listed in: the table's, or the table's store
            where the version read is kept (its files stay there after later commits).
        version: the version read by time travel (``as_of=``), or None: the live version.
        kind: the table's kind when its partitions are snapshots of several files
            (:class:`bucketkit.units.TableKind`; Hive ACID: :class:`bucketkit.acid.plan.AcidKind`),
            else None: plain data files. Every partition carries its snapshot
            (``PartitionScan.snapshot``); readers read the plan's :meth:`units`.
        placement: for a Hive-hashed table of plain files read bucketed, whether its rows' placement is
            vouched for by its manifest or checked row by row as they are read, and why
            (:class:`bucketkit.layout.manifest.Placement`); None where no read checks placement.
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
    unbucketed: str | None = None
    kind: TableKind | None = None
    root: str = ""
    version: Version | None = None
    placement: Placement | None = None
    #: ``root`` holds only the listed partitions' files (:attr:`~bucketkit.layout.discovery.TableLayout.exact`):
    #: a reader of every partition may read it whole
    exact: bool = True

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

    def units(self) -> list[ReadUnit]:
        """Every read unit of the plan (:mod:`bucketkit.units`), partition by partition, bucket by bucket:
        one per data file, or for a plan of a kind (Hive ACID) what the kind makes of each snapshot."""
        if self.kind is not None:
            return self.kind.units(self)
        checked = self.placement is not None  # Hive-hashed plain files read bucketed: vouched, or re-hashed
        return [ReadUnit(f, p.sizes.get(f, 1), b, tuple(p.values.items()), checked=checked and not p.vouched and b >= 0)
                for p in self.partitions for b in sorted(p.bucket_files) for f in p.bucket_files[b]]

    def row_id_refused(self) -> str | None:
        """Why the plan's rows have no identity to return (``row_id=True``), or None: a full-ACID table's
        rows have Hive's ``row__id``."""
        if self.kind is None:
            return f"{self.table} is not a Hive ACID table; only full-ACID tables have Hive's row__id"
        return self.kind.row_id_refused(str(self.table))

    def explain(self) -> str:
        """Readable text: partitions, buckets, files and bytes selected vs total, and why."""
        spec, n = self.table.spec, self.table.spec.bucket_count
        cols = ", ".join(f"{c} {t}" for c, t in zip(spec.bucketed_by, spec.bucket_types))
        buckets = ("all" if self.selected_buckets is None
                   else f"{len(self.selected_buckets)} of {n}: {sorted(self.selected_buckets)}")
        how = f"{n} buckets by {cols}, {spec.hashing}" if spec.bucketed else "unbucketed"
        if self.kind is not None:
            how = f"{self.kind.name}, {how}, {self.kind.versions()}"
        lines = [
            f"scan of {self.table} ({spec.file_format}, {how})",
            *([f"version:    {self.version} (time travel)"] if self.version is not None else []),
            *([f"files from: {self.root} (the version listed, kept there for reads planned on it)"]
              if self.root and self.version is None and self.root != self.table.location else []),
            f"filters:    {to_text(self.filters)}",
            f"partitions: {self.partitions_selected} of {self.partitions_total} ({self.partition_reason})",
            f"buckets:    {buckets} ({self.bucket_reason})",
            f"files:      {self.files_selected} of {self.files_listed} listed, {format_bytes(self.bytes_selected)} "
            f"of {format_bytes(self.bytes_listed)} ({len(self.files)} non-empty to read)",
        ]
        for p in self.partitions[:20]:
            where = "/".join(f"{k}={v}" for k, v in p.values.items()) or "(table root)"
            count = sum(len(fs) for fs in p.bucket_files.values())
            if self.kind is not None:
                lines += self.kind.explain_partition(where, p)
                continue
            if len(p.bucket_files) == n:
                lines.append(f"  {where}: all {n} buckets, {count} files, {format_bytes(sum(p.sizes.values()))}")
                continue
            shown = ", ".join(f"bucket {b}: {' '.join(f.rsplit('/', 1)[-1] for f in fs) or '(no file)'}"
                              for b, fs in sorted(p.bucket_files.items())[:8])
            more = f" ... (+{len(p.bucket_files) - 8} buckets)" if len(p.bucket_files) > 8 else ""
            lines.append(f"  {where}: {shown}{more}")
        if len(self.partitions) > 20:
            lines.append(f"  ... (+{len(self.partitions) - 20} partitions)")
        if self.placement is not None:
            lines.append(f"placement:  {self.placement}")
        lines.append(f"residual:   {to_text(self.residual)} (applied to the rows read)")
        if self.columns is not None:
            lines.append(f"columns:    {', '.join(self.columns)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()


def plan_scan(table: BucketedTable | str, filters: Any = None, *, columns: Sequence[str] | None = None,
              write_ids: ValidWriteIdList | str | None = None,
              partition_filter: Callable[[dict[str, str]], bool] | None = None, as_of: Any = None,
              query_type: str | None = None, begin: Any = None, end: Any = None, **table_options: Any) -> ScanPlan:
    """Plan a scan: the partitions, buckets and files that rows matching ``filters`` can lie in.

    Args:
        table: a :class:`~bucketkit.table.BucketedTable`, or a path opened with
            :func:`~bucketkit.table.open_table` (``table_options`` such as ``bucketed_by=``,
            ``bucket_count=``, ``bucket_types=`` describe a foreign table without metadata).
        filters: pyarrow/deltalake-style filters (see :func:`bucketkit.pruning.filters.normalize`).
        columns: columns the scan returns (None = all).
        write_ids: for a Hive ACID table, the snapshot: Hive's ValidWriteIdList string
            (``db.table:hwm:minOpen:open:aborted``); None = every write id found is committed.
        partition_filter: called with each partition's values (raw strings); only partitions it
            accepts (and ``filters`` keep) are listed.
        as_of: time travel: a version number, or a time (``datetime`` or ISO string; the version live
            then) of a table bucketkit keeps versions of (``bucketkit.history``). None: the live
            version, whose files the plan reads from where they stay after later commits.

    Returns:
        A :class:`ScanPlan`; nothing is read, only directories are listed (pruned partitions are
        not), plus, for a Hive ACID table, one data file's footer to tell full-ACID from insert-only.
    """
    table = open_table(table, **table_options) if not isinstance(table, BucketedTable) else table
    version, hudi = None, None
    if hudiplan.is_hudi_table(table):
        hudi = hudiplan.table_kind(table, hudiplan.HudiQuery(query_type or "snapshot", as_of, begin, end))
    else:
        hudiplan.hudi_refused(table, query_type=query_type, begin=begin, end=end)
    if as_of is not None and hudi is None:
        table, version = _as_it_was(table, as_of)
    spec = table.spec
    # the columns partition directories are values of: a Hudi table's partition fields live in its files too
    pspec = spec if hudi is None else spec.with_(partitioned_by=hudi.fields, partition_types=tuple(
        dict(spec.columns)[f] for f in hudi.fields))
    dnf = _resolve_columns(normalize(filters), table)
    columns = _checked_columns(columns, table)
    seen: dict[tuple, bool] = {}  # every partition discover() offers the filter (it may list twice)
    by_filters = partition_predicate(pspec, dnf)
    keep = by_filters if partition_filter is None else (lambda v: by_filters(v) and partition_filter(v))
    counted = (lambda v: seen.setdefault(tuple(sorted(v.items())), keep(v))) if pspec.partitioned_by else None
    if hudi is not None:
        layout = hudi.layout(table, counted)
    else:
        layout = table.layout(partition_filter=counted, unvouched=True, pinned=True,
                              version=version.write_id if version else None)
    doubt = bucketing_doubt(table, layout)
    selected, reason = (None, f"read unbucketed: {doubt}") if doubt else buckets_for(spec, dnf)
    if hudi is not None and write_ids is not None:
        raise InvalidArgumentError(f"write_ids={write_ids!r}: {table} is an Apache Hudi table, not Hive ACID")
    kind: TableKind | None = hudi if hudi is not None else acidplan.table_kind(table, layout, write_ids)
    # plain Hive-hashed files read bucketed: is their placement vouched for, or checked as rows are read (by the
    # live version's manifest where it is read, pinned or not: the same files; a kept version's by its own)
    trust = None if doubt or kind is not None or spec.hash_family != "hive" or not spec.bucketed \
        else placement(table.filesystem, layout.root if version else table.location, spec, layout.partition_layouts)
    cache: dict[tuple[int, ...], frozenset[int] | None] = {}
    scans: list[PartitionScan] = []
    listed = listed_bytes = 0
    for part in layout.partition_layouts:
        survivors = _surviving(pspec, dnf, part.values) if pspec.partitioned_by and dnf else tuple(range(len(dnf)))
        if dnf and not survivors:
            continue
        if survivors not in cache:
            cache[survivors] = buckets_for(spec, tuple(dnf[i] for i in survivors))[0] if dnf and not doubt else None
        scan, files, size = _partition_scan(table, part, cache[survivors], kind, doubt, trust)
        scans.append(scan)
        listed, listed_bytes = listed + files, listed_bytes + size
    total = len(seen) if pspec.partitioned_by else len(layout.partition_layouts) if hudi is not None else 1
    preason = _partition_reason(table, pspec, dnf, hudi is not None, len(scans), total)
    if kind is not None:
        kind = kind.settled(table.filesystem, scans, spec.file_format)
    return ScanPlan(table, dnf, selected, reason, preason, tuple(scans), dnf, columns, total, listed, listed_bytes,
                    doubt, kind, layout.root, version, trust, getattr(layout, "exact", True))


def _checked_columns(columns: Sequence[str] | None, table: BucketedTable) -> tuple[str, ...] | None:
    """``columns`` as a tuple, each one the table has (a table without known columns: as given)."""
    if columns is None:
        return None
    columns, spec = tuple(columns), table.spec
    known = [n for n, _ in spec.columns] + list(spec.partitioned_by) + ["row__id"]  # row__id: ACID, row_id=True
    missing = [c for c in columns if spec.columns and c not in known]
    if missing:
        raise InvalidArgumentError(f"columns={list(columns)}: {missing} not in {table}; expected some of {known}")
    return columns


def _partition_scan(table: BucketedTable, part: Any, mine: frozenset[int] | None, kind: TableKind | None,
                    doubt: str | None, trust: Placement | None) -> tuple[PartitionScan, int, int]:
    """One listed partition's scan of buckets ``mine`` (None: all), with the number and bytes of its files listed."""
    spec = table.spec
    if kind is not None:  # a table kind plans the partition's snapshot (Hive ACID, Hudi)
        state, files, sizes = kind.plan_partition(table.filesystem, part.path, bucket_count=spec.bucket_count,
                                                  selected=mine, unbucketed=doubt is not None)
        return (PartitionScan(dict(part.values), part.path, files, {f: sizes[f] for fs in files.values() for f in fs},
                              state, part.scheme), len(sizes), sum(sizes.values()))
    if part.doubt is not None:  # files no bucket scheme places: every one read, unbucketed (doubt says why)
        return (PartitionScan(dict(part.values), part.path, {-1: tuple(f.path for f in part.unplaced)},
                              {f.path: f.size for f in part.unplaced}, scheme=part.scheme),
                len(part.unplaced), sum(f.size for f in part.unplaced))
    chosen = {b: fs for b, fs in part.buckets.items() if mine is None or b in mine}
    return (PartitionScan(dict(part.values), part.path, {b: tuple(f.path for f in fs) for b, fs in sorted(chosen.items())},
                          {f.path: f.size for fs in chosen.values() for f in fs}, scheme=part.scheme,
                          vouched=trust is not None and part.relpath in trust.vouched),
            sum(len(fs) for fs in part.buckets.values()), sum(f.size for fs in part.buckets.values() for f in fs))


def _partition_reason(table: BucketedTable, pspec: Any, dnf: DNF, hudi: bool, kept: int, total: int) -> str:
    """Why these partitions are read, in words."""
    if hudi and not pspec.partitioned_by:
        return ("unpartitioned table" if not partition_fields_of(table) else
                "the table's partition paths are not its partition fields' values (its key generator formats them)")
    if not pspec.partitioned_by:
        return "unpartitioned table"
    if kept == total:
        return "no filter excludes a partition" if dnf else "no filter"
    cols = sorted({t[0] for conj in dnf for t in conj if t[0] in pspec.partitioned_by})
    return (f"filters on partition column(s) {', '.join(cols)} exclude {total - kept}" if cols
            else f"the partition filter excludes {total - kept}")


def partition_fields_of(table: BucketedTable) -> tuple[str, ...]:
    """A Hudi table's partition fields (``hoodie.table.partition.fields``), else the spec's partition columns."""
    from bucketkit.hudi.table import partition_fields

    return partition_fields(dict(table.spec.properties)) if hudiplan.is_hudi_table(table) else table.spec.partitioned_by


def table_as_of(table: BucketedTable, as_of: Any) -> BucketedTable:
    """``table`` as it was at ``as_of`` (a version number or a time, as :func:`plan_scan` takes it; None: as it is):
    with the spec that version was written with, which a later overwrite or ``rebucket`` may have changed (another
    bucket count, hash version, key). What decides how the version's files are bucketed (a join's pairing, pruning)
    must read it from this table, not the live one. A Hudi table's ``as_of`` is an instant of its own timeline: the
    table is returned as it is."""
    if as_of is None or hudiplan.is_hudi_table(table):
        return table
    return _as_it_was(table, as_of)[0]


def _as_it_was(table: BucketedTable, as_of: Any) -> tuple[BucketedTable, Version]:
    """(``table`` with the spec its kept version ``as_of`` was written with, that version)."""
    paths = TablePaths.at(table.filesystem, table.location)
    version = find_version(table.filesystem, paths, as_of, str(table))
    try:
        spec = read_spec(paths.version(version.write_id), table.filesystem)
    except TableNotFoundError:
        return table, version
    return (table if spec == table.spec else dataclasses.replace(table, spec=spec)), version
