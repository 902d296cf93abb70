"""Hive ACID tables in scan plans: each partition's snapshot, its files per bucket, and reading one
(partition, bucket) unit into the table's columns (pure Python + pyarrow).

A table is read as Hive ACID when its catalog says so (``transactional=true``; ``insert_only``
from ``transactional_properties``) or, for a directory, when any partition holds ``base_``/
``delta_``/``delete_delta_`` directories; then every partition is planned from its snapshot
(:func:`~bucketkit.acid.read.snapshot`, Hive's ``getAcidState``), so obsolete, aborted and open
directories are never planned, and original files get Hive's synthetic row ids. Full-ACID or
insert-only: the catalog's properties when known, else the first data file of the snapshot (ORC
with Hive's ACID columns: full; anything else: insert-only).

An unbucketed ACID table (Hive 3's default managed table) needs no bucket spec: its ``bucket_N``
files are numbered by writer, so each bucket id found is one read unit and nothing is pruned.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.acid.naming import is_acid_side_file, parse_acid_dir
from bucketkit.acid.read import (ACID_COLUMNS, bucket_files, check_versions, list_partition, read_bucket,
                                read_insert_only, state_buckets)
from bucketkit.acid.state import AcidState, acid_state, file_bucket
from bucketkit.errors import CorruptTableError, InvalidArgumentError
from bucketkit.hivetypes import hive_type_of_arrow
from bucketkit.io import footer_rows, is_hidden_path, read_schema
from bucketkit.layout.metadata import TableSpec
from bucketkit.layout.partitions import parse_partition_dir
from bucketkit.acid.writeids import ValidWriteIdList
from bucketkit.units import ReadUnit, conform

__all__ = ["FULL", "INSERT_ONLY", "WRITER_IDS", "UNBUCKETED", "transactional_kind", "coerce_write_ids",
           "AcidKind", "table_kind", "plan_partition", "file_kind", "data_schema", "unbucketed_spec", "bucket_summary",
           "explain_partition", "describe_partition", "describe_snapshot", "AcidBucket", "units", "check_files"]

FULL, INSERT_ONLY = "full", "insert_only"
#: Bucket (writer) ids a V1 BucketCodec can hold: the bucket count of an unbucketed ACID table.
WRITER_IDS = 4096
UNBUCKETED = ("an unbucketed Hive ACID table: its bucket_N files are numbered by writer, not by hash; each "
              "bucket id found is read on its own and none is pruned")


def transactional_kind(properties: Mapping[str, str]) -> str | None:
    """``"full"``, ``"insert_only"`` or ``None`` (not transactional) from a table's properties.

    Transactional as Hive's ``AcidUtils.isTransactionalTable`` says (``transactional`` or
    ``TRANSACTIONAL`` equal to ``true`` in any case); the JVM catalog's ``TableVerdict.isAcid`` is
    held equal to it by tests/test_verdict_jvm.py.
    """
    value = properties.get("transactional")
    if value is None:
        value = properties.get("TRANSACTIONAL")
    if value is None or str(value).strip().lower() != "true":
        return None
    kind = str(properties.get("transactional_properties", "")).strip().lower()
    return INSERT_ONLY if kind == "insert_only" else FULL


def coerce_write_ids(value: ValidWriteIdList | str | None) -> ValidWriteIdList | None:
    """The ``write_ids=`` option: Hive's ``db.table:hwm:minOpen:open:aborted`` string (or None = all committed)."""
    if value is None or isinstance(value, ValidWriteIdList):
        return value
    if not isinstance(value, str):
        raise InvalidArgumentError(f"write_ids={value!r}: expected Hive's ValidWriteIdList string "
                                   f"'db.table:<high watermark>:<min open>:<open ids>:<aborted ids>'")
    return ValidWriteIdList.parse(value)


# -- Hive ACID as a kind of table in scan plans -------------------------------------------------------
@dataclass(frozen=True)
class AcidKind:
    """Hive ACID as a scan plan's table kind (:class:`bucketkit.units.TableKind`): each partition is
    planned from its snapshot, each (partition, bucket) is one unit (:class:`AcidBucket`).

    Attributes:
        kind: :data:`FULL` or :data:`INSERT_ONLY`; None until :meth:`settled` reads it from the files
            (a directory carries no property saying which).
        write_ids: the snapshot's ValidWriteIdList (None: every write id in the directory names is committed).
    """

    kind: str | None = None
    write_ids: ValidWriteIdList | None = None
    unsorted: ClassVar[str] = "a bucket is its base and deltas less the delete events, not a sorted file"

    @property
    def name(self) -> str:
        return f"Hive ACID {self.kind or FULL}"

    def versions(self) -> str:
        return f"write ids {self.write_ids or 'all committed'}"

    def plan_partition(self, fs: pafs.FileSystem, path: str, *, bucket_count: int, selected: frozenset[int] | None,
                       unbucketed: bool) -> tuple[AcidState, dict[int, tuple[str, ...]], dict[str, int]]:
        return plan_partition(fs, path, write_ids=self.write_ids, bucket_count=bucket_count, selected=selected,
                              unbucketed=unbucketed)

    def settled(self, fs: pafs.FileSystem, partitions: Sequence[Any], file_format: str) -> AcidKind:
        """Full-ACID or insert-only from the first base/delta data file, where the catalog did not say."""
        if self.kind is not None:
            return self
        found = (file_kind(fs, p.path, p.snapshot, file_format) for p in partitions)
        return dataclasses.replace(self, kind=next(filter(None, found), FULL))

    def units(self, plan: Any) -> list[ReadUnit]:
        return units(plan)

    def describe(self, plan: Any) -> str:
        return describe_snapshot([(p.path, p.snapshot) for p in plan.partitions],
                                 None if self.write_ids is None else str(self.write_ids), self.kind)

    def explain_partition(self, where: str, partition: Any) -> list[str]:
        return explain_partition(where, partition)

    def check(self, fs: pafs.FileSystem, plan: Any) -> None:
        check_files(fs, plan)

    def row_id_refused(self, table: str) -> str | None:
        if self.kind == INSERT_ONLY:
            return f"{table} is an insert-only Hive ACID table; Hive gives ROW__ID identities only to full-ACID tables"
        return None


def table_kind(table: Any, layout: Any, write_ids: ValidWriteIdList | str | None) -> AcidKind | None:
    """The :class:`AcidKind` of a table to plan (``transactional=true`` in its catalog, or any partition of
    ``base_``/``delta_`` directories), or None; ``write_ids`` on any other table is refused."""
    ids = coerce_write_ids(write_ids)
    if table.transactional is not None or any(p.scheme == "acid" for p in layout.partition_layouts):
        return AcidKind(table.transactional, ids)
    if ids is not None:
        raise InvalidArgumentError(f"write_ids={str(ids)!r}: {table} is not a Hive ACID table (no base_/delta_ "
                                   f"directories, no transactional=true property)")
    return None


def describe_snapshot(states: Sequence[tuple[str, AcidState]], write_ids: str | None, kind: str | None = FULL) -> str:
    """ACID partitions' snapshots in words: which write ids are visible and which directories they read."""
    visible = (f"write ids visible per ValidWriteIdList {write_ids}" if write_ids else
               "every write id in the directory names visible (no ValidWriteIdList given)")
    if len(states) == 1:
        state = states[0][1]
        dirs = ", ".join(([state.base] if state.base else []) + list(state.deltas) + list(state.delete_deltas))
        originals = f" + {len(state.original_files)} original file(s)" if state.original_files else ""
        read = f"reads {dirs or '(no directory)'}{originals}"
    else:
        counts = [(s.base is not None, len(s.deltas), len(s.delete_deltas)) for _, s in states]
        read = (f"{len(states)} partitions read {sum(c[0] for c in counts)} base(s), {sum(c[1] for c in counts)} "
                f"delta(s), {sum(c[2] for c in counts)} delete delta(s)")
    merged = "base + deltas - delete events" if kind != INSERT_ONLY else "base + deltas (insert-only)"
    return f"Hive ACID ({kind or FULL}): {visible}; {read}; each bucket is {merged}"


# -- planning one partition -----------------------------------------------------------------------
def plan_partition(fs: pafs.FileSystem, path: str, *, write_ids: ValidWriteIdList | None, bucket_count: int,
                   selected: frozenset[int] | None, unbucketed: bool
                   ) -> tuple[AcidState, dict[int, tuple[str, ...]], dict[str, int]]:
    """The snapshot of one ACID partition and the files of its selected buckets.

    Returns:
        ``(state, bucket -> full paths of the bucket's original, base/delta and delete-delta files,
        path -> size of every data file listed)``. Bucketed: every bucket id below ``bucket_count``
        (selected ones only); unbucketed: each bucket id found.

    Raises:
        CorruptTableError: a snapshot file whose name gives no bucket, or a bucket id >= the count.
        AcidStateError: no base usable for the snapshot (not enough history).
    """
    entries, metadata = list_partition(fs, path)
    state = acid_state(entries, write_ids, metadata=metadata)
    sizes = {posixpath.join(path, rel): size for rel, size in entries if size is not None and not is_hidden_path(rel)}
    found = set()
    for rel in list(state.original_files) + [p for files in state.files.values() for p in files]:
        b = file_bucket(rel)
        if b is None or (b >= bucket_count and not unbucketed):
            what = "gives no bucket id (expected bucket_N, or NNNNNN_N[_copy_M] for original files)" if b is None \
                else f"has bucket id {b}, not below the table's bucket count {bucket_count} (table is corrupt)"
            raise CorruptTableError(f"{posixpath.join(path, rel)}: a file of the Hive ACID snapshot whose name {what}")
        found.add(b)
    ids = sorted(found) if unbucketed else range(bucket_count)
    chosen = {}
    for b in ids:
        if selected is None or b in selected:
            bf = bucket_files(state, b)
            chosen[b] = tuple(posixpath.join(path, p) for p in bf.originals + bf.inserts + bf.deletes)
    return state, chosen, sizes


def file_kind(fs: pafs.FileSystem, root: str, state: AcidState, file_format: str) -> str | None:
    """Full-ACID or insert-only, from the first base/delta data file (None: the snapshot has none)."""
    for d in ([state.base] if state.base else []) + list(state.deltas):
        for rel in state.files.get(d, ()):
            if file_format != "orc":
                return INSERT_ONLY
            return FULL if tuple(read_schema(fs, posixpath.join(root, rel), "orc").names) == ACID_COLUMNS else INSERT_ONLY
    return None


def data_schema(fs: pafs.FileSystem, path: str, file_format: str) -> pa.Schema:
    """The table columns a data file holds: the ``row`` struct of a full-ACID file, else its own."""
    schema = read_schema(fs, path, file_format)
    if tuple(schema.names) == ACID_COLUMNS:
        return pa.schema(list(schema.field("row").type))
    return schema


def _acid_files_in(fs: pafs.FileSystem, directory: str, keys: list[str], recursive: bool) -> list[tuple]:
    """``(is a delete delta, file, partition keys)`` of data files in ACID directories below ``directory``."""
    out = []
    for info in fs.get_file_info(pafs.FileSelector(directory, recursive=recursive)):
        parts = posixpath.relpath(info.path, directory).split("/")
        if (info.type != pafs.FileType.File or is_hidden_path("/".join(parts)) or len(parts) < 2
                or is_acid_side_file(parts[-1])):
            continue
        acid = next((parse_acid_dir(p) for p in parts[:-1] if parse_acid_dir(p)), None)
        above = parts[:next(i for i, p in enumerate(parts) if parse_acid_dir(p))] if acid else []
        if acid is not None and all(parse_partition_dir(p) for p in above):
            out.append((acid.kind == "delete_delta", info.path, keys + [parse_partition_dir(p)[0] for p in above]))
    return out


def _first_acid_file(fs: pafs.FileSystem, root: str) -> tuple[str, list[str]] | None:
    """``(a data file in an ACID directory, the partition keys above it)``, base/delta files before
    delete-delta ones (a delete delta's ``row`` struct may be empty). Looks down the first ``k=v``
    directory of each level first, and lists the whole table only if that finds none."""
    directory, keys = root, []
    while True:
        children = sorted((i for i in fs.get_file_info(pafs.FileSelector(directory))
                           if i.type == pafs.FileType.Directory and not is_hidden_path(i.base_name)),
                          key=lambda i: i.path)
        found = [(parse_acid_dir(i.base_name).kind == "delete_delta", f.path) for i in children
                 if parse_acid_dir(i.base_name) for f in fs.get_file_info(pafs.FileSelector(i.path, recursive=True))
                 if f.type == pafs.FileType.File and not is_hidden_path(posixpath.relpath(f.path, i.path))
                 and not is_acid_side_file(f.base_name)]
        if found:
            return min(found)[1], keys
        kv = [i for i in children if parse_partition_dir(i.base_name)]
        if not kv:
            break
        directory = kv[0].path
        keys.append(parse_partition_dir(kv[0].base_name)[0])
    found = _acid_files_in(fs, root, [], True)
    return (min(found)[1], min(found)[2]) if found else None


def unbucketed_spec(fs: pafs.FileSystem, root: str, *, partitioned_by: Sequence[str] | None = None,
                    partition_types: Sequence[str] | None = None, table_columns: Mapping[str, str] | None = None,
                    file_format: str | None = None) -> TableSpec | None:
    """A spec for an unbucketed ACID table directory (``None`` if ``root`` holds no ACID directory).

    The columns come from ``table_columns`` or the first data file of an ACID directory, the
    partition columns from the ``k=v`` directories above it (types ``string`` unless given). The
    spec is not bucketed (no bucket columns, 0 buckets, no bucket function): its ``bucket_N`` files
    are numbered by writer (below :data:`WRITER_IDS`), and readers read it unbucketed (:data:`UNBUCKETED`).
    """
    found = _first_acid_file(fs, root)
    if found is None:
        return None
    fmt = file_format or "orc"
    columns = dict(table_columns) if table_columns else {
        f.name: str(hive_type_of_arrow(f.type)) for f in data_schema(fs, found[0], fmt)}
    keys = tuple(partitioned_by) if partitioned_by is not None else tuple(found[1])
    return TableSpec.create((), 0, columns=columns, bucketing_version=2, partitioned_by=keys,
                            partition_types=tuple(partition_types or ()), file_format=fmt)


def bucket_summary(state: AcidState, bucket: int) -> dict[str, int]:
    """Files of each kind one bucket of ``state`` reads: ``{"original", "base", "delta", "delete_delta"}``."""
    bf = bucket_files(state, bucket)
    base = sum(1 for p in bf.inserts if state.base and p.startswith(state.base + "/"))
    return {"original": len(bf.originals), "base": base, "delta": len(bf.inserts) - base,
            "delete_delta": len(bf.deletes)}


def explain_partition(where: str, scan: Any, limit: int = 8) -> list[str]:
    """Plan text of one ACID partition (a :class:`~bucketkit.pruning.plan.PartitionScan`): the chosen
    directories, what is obsolete or aborted, and each selected bucket's files by kind."""
    st = scan.snapshot

    def names(items: Sequence[str]) -> str:
        more = f" ... (+{len(items) - limit})" if len(items) > limit else ""
        return (", ".join(items[:limit]) + more) if items else "none"

    lines = [f"  {where}: base {st.base or 'none'}; deltas {names(st.deltas)}; delete deltas {names(st.delete_deltas)}; "
             f"original files {len(st.original_files)}"]
    if st.obsolete:
        lines.append(f"    obsolete (not read): {names(st.obsolete)}")
    if st.aborted:
        lines.append(f"    aborted (not read): {names(st.aborted)}")
    shown = sorted(scan.bucket_files)[:limit]
    for b in shown:
        counts = bucket_summary(st, b)
        lines.append(f"    bucket {b}: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + " file(s)")
    if len(scan.bucket_files) > limit:
        lines.append(f"    ... (+{len(scan.bucket_files) - limit} buckets)")
    return lines


def describe_partition(fs: pafs.FileSystem, path: str, write_ids: ValidWriteIdList | str | None = None,
                       row_count: Callable[[str], int | None] | None = None) -> dict[str, Any]:
    """Plain data for ``bucketkit inspect``: one ACID partition's snapshot (chosen, obsolete and
    aborted directories) and, per bucket id found, its files of each kind; with ``row_count`` (a
    file path -> footer rows), the rows of its original/base/delta files (before deletes) and its
    delete events (rows of its delete-delta files: each deletes one row version, possibly one
    an earlier event already deleted).
    """
    entries, metadata = list_partition(fs, path)
    state = acid_state(entries, coerce_write_ids(write_ids), metadata=metadata)
    buckets: dict[int, dict[str, Any]] = {}
    for b in state_buckets(state):
        info: dict[str, Any] = dict(bucket_summary(state, b))
        if row_count is not None:
            bf = bucket_files(state, b)
            counts = [[row_count(posixpath.join(path, p)) for p in group]
                      for group in (bf.originals + bf.inserts, bf.deletes)]
            info["rows"], info["delete_events"] = (None if None in c else sum(c) for c in counts)
        buckets[b] = info
    return {"base": state.base, "deltas": list(state.deltas), "delete_deltas": list(state.delete_deltas),
            "original_files": list(state.original_files), "obsolete": list(state.obsolete),
            "aborted": list(state.aborted), "buckets": buckets}


# -- one bucket of a snapshot: a read unit's source -------------------------------------------------
@dataclass(frozen=True)
class AcidBucket:
    """The source of a read unit (:class:`bucketkit.units.ReadUnit`) that is one bucket of a Hive ACID
    partition's snapshot: its base, delta and original files less the delete events of its delete
    deltas (full ACID), or its plain files (insert-only), read as a whole. A row's delete events live
    in its own bucket's files, so a bucket's rows are exactly that bucket's: ACID tables join and
    prune bucket by bucket like any other.

    Attributes:
        state: the partition's snapshot (:func:`bucketkit.acid.read.snapshot`); the unit's path is
            the partition directory its files are relative to.
        kind: :data:`FULL` or :data:`INSERT_ONLY`.
        write_ids: Hive's ValidWriteIdList the snapshot was taken with (None: every write id in the
            directory names is committed).
    """

    state: AcidState
    kind: str = FULL
    write_ids: Any = None

    def files(self, unit: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The bucket's original, base and delta files, and its delete-delta files (full paths)."""
        bf = bucket_files(self.state, unit.bucket)
        return (tuple(posixpath.join(unit.path, p) for p in bf.originals + bf.inserts),
                tuple(posixpath.join(unit.path, p) for p in bf.deletes))

    def rows(self, fs: pafs.FileSystem, unit: Any, file_format: str) -> int | None:
        """Its base/delta/original files' footer rows less its delete events (each deletes at most one row)."""
        data, deletes = self.files(unit)
        try:
            inserted = sum(footer_rows(fs, p, file_format) for p in data)
            deleted = sum(footer_rows(fs, p, "orc") for p in deletes)
        except (OSError, pa.ArrowException):
            return None
        return max(0, inserted - deleted)

    def schema(self, fs: pafs.FileSystem, unit: Any, file_format: str) -> pa.Schema:
        """The ``row`` struct's columns of its first file (or, with only original files, their own)."""
        bf = bucket_files(self.state, unit.bucket)
        return data_schema(fs, posixpath.join(unit.path, (bf.inserts + bf.originals)[0]), file_format)

    def read(self, fs: pafs.FileSystem, unit: Any, *, file_format: str, row_id: bool = False,
             columns: Sequence[str] | None = None) -> pa.Table:
        """The bucket's snapshot rows (user columns, plus ``row__id`` on request)."""
        if self.kind == INSERT_ONLY:
            if row_id:
                raise InvalidArgumentError(f"{unit.path}: row_id=True on an insert-only ACID table; Hive gives "
                                           f"ROW__ID identities only to full-ACID tables")
            return read_insert_only(fs, unit.path, self.state, unit.bucket, file_format)
        return read_bucket(fs, unit.path, self.state, unit.bucket, write_ids=self.write_ids, row_id=row_id,
                           columns=columns)

    def batches(self, fs: pafs.FileSystem, unit: Any, columns: Sequence[str], target: pa.Schema, file_format: str,
                batch_rows: int) -> Iterator[pa.RecordBatch]:
        """``columns`` of the snapshot rows (a full-ACID bucket leaves out those no file has; insert-only
        files get them as nulls)."""
        if self.kind == INSERT_ONLY:
            data = self.read(fs, unit, file_format=file_format)
            table = conform(data, target, target.names, (), {}).select(list(columns)) if data.num_columns else data
        else:
            table = self.read(fs, unit, file_format=file_format, columns=columns)
        yield from table.to_batches(max_chunksize=batch_rows)

    def plain_file(self, unit: Any) -> str | None:
        return None  # a bucket's rows are always its files merged (or, insert-only, several files conformed)

    def describe(self, unit: Any) -> str:
        return f"a file of ACID bucket {unit.bucket} in {unit.path}"

    def gone(self, unit: Any) -> str:
        return "a compaction's cleaner removed it"


def check_files(fs: pafs.FileSystem, plan: Any) -> None:
    """Refuse, on the driver and before any task runs, a full-ACID plan's files that Hive 3 would
    refuse (:func:`~bucketkit.acid.read.check_versions`): the error names the file."""
    if plan.kind.kind != FULL:
        return
    paths = []
    for p in plan.partitions:
        for b in p.bucket_files:
            bf = bucket_files(p.snapshot, b)
            paths += [posixpath.join(p.path, rel) for rel in bf.inserts + bf.deletes]
    check_versions(fs, paths)


def units(plan: Any) -> list[ReadUnit]:
    """The read units of an ACID :class:`~bucketkit.pruning.plan.ScanPlan`: one per (partition, bucket)
    whose snapshot has rows to read (a bucket of delete events only deletes nothing here)."""
    out = []
    for p in plan.partitions:
        source = AcidBucket(p.snapshot, plan.kind.kind or FULL, plan.kind.write_ids)
        for b in sorted(p.bucket_files):
            bf = bucket_files(p.snapshot, b)
            if bf.inserts or bf.originals:
                out.append(ReadUnit(p.path, sum(p.sizes.get(f, 1) for f in p.bucket_files[b]), b,
                                    tuple(p.values.items()), -1, source))
    return out
