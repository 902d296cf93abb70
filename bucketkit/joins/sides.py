"""One side of a bucketed join after pruning: its read units, bucket by bucket.

A read unit is a :class:`FileRef` (one data file of a bucket) or, for a Hive ACID (transactional)
partition, an :class:`AcidBucketRef`: one bucket of the partition's snapshot, ``(partition
directory, snapshot state, bucket, write ids)``. An ACID bucket is not a file: its rows are the
bucket's base and delta files minus the delete events of its delete-delta files
(:func:`bucketkit.acid.read.read_bucket`), so it is read, and its memory estimated, as a whole.
Its rows are still exactly the rows of that bucket (a row's delete events live in its own
bucket's file), so ACID tables join bucket by bucket like any other.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.acid.plan import FULL, INSERT_ONLY, conform, data_schema
from bucketkit.acid.read import BucketFiles, bucket_files, read_bucket, read_insert_only
from bucketkit.acid.state import AcidState
from bucketkit.io import footer_rows, read_schema

if TYPE_CHECKING:
    from bucketkit.pruning.plan import PartitionScan, ScanPlan
    from bucketkit.table import BucketedTable

__all__ = ["FileRef", "AcidBucketRef", "SideFiles", "scan_side", "acid_rows", "acid_batches", "describe_acid",
           "unit_schema"]


@dataclass(frozen=True)
class FileRef:
    """One data file of a bucket group.

    Attributes:
        path: full path inside the table's filesystem.
        size: bytes (0 = an empty bucket file, never opened).
        bucket: the bucket id the file belongs to.
        partition: the partition values of its directory, ``(name, raw string)`` pairs.
        rows: the row count in the file's footer (-1 = not read, or unreadable).
    """

    path: str
    size: int
    bucket: int
    partition: tuple[tuple[str, str], ...] = ()
    rows: int = -1


@dataclass(frozen=True)
class AcidBucketRef:
    """One bucket of one Hive ACID partition's snapshot, read as a whole.

    Attributes:
        path: the partition directory (the snapshot's root).
        size: bytes of the bucket's base, delta, delete-delta and original files.
        bucket: the bucket id.
        partition: the partition values, ``(name, raw string)`` pairs.
        rows: estimated rows of the snapshot: footer rows of its base/delta/original files less
            its delete events (-1 = not estimated yet).
        state: the partition's snapshot (:func:`bucketkit.acid.read.snapshot`).
        write_ids: Hive's ValidWriteIdList string the snapshot was taken with (None: every write
            id in the directory names is committed).
        kind: ``"full"`` (ACID columns, delete deltas) or ``"insert_only"`` (plain files in the
            snapshot's directories, :mod:`bucketkit.acid.plan`).
    """

    path: str
    size: int
    bucket: int
    partition: tuple[tuple[str, str], ...] = ()
    rows: int = -1
    state: AcidState | None = None
    write_ids: str | None = None
    kind: str = FULL

    @property
    def files(self) -> BucketFiles:
        """The files this bucket reads (relative to :attr:`path`)."""
        return bucket_files(self.state, self.bucket)


@dataclass(frozen=True)
class SideFiles:
    """One side after pruning: what :func:`~bucketkit.joins.plan.pair_buckets` needs.

    Attributes:
        bucket_count: the side's bucket count.
        selected: bucket ids left after pruning (None = all).
        files: bucket id → read units of that bucket across the selected partitions (selected
            ids only): :class:`FileRef` or :class:`AcidBucketRef`.
        reason: why these partitions/buckets (from the scan planner), for the printout.
        unbucketed: why the side must be read as unbucketed (see :mod:`bucketkit.trust`), or None.
        acid: for a Hive ACID side, the snapshot it reads in words (see :func:`describe_acid`);
            empty otherwise.
    """

    bucket_count: int
    selected: frozenset[int] | None
    files: dict[int, tuple[Any, ...]]
    reason: str = ""
    residual: tuple = ()
    unbucketed: str | None = None
    acid: str = ""

    def is_selected(self, bucket: int) -> bool:
        return self.selected is None or bucket in self.selected


def scan_side(table: BucketedTable, filters: Any, write_ids: str | None = None) -> SideFiles:
    """Plan one side's scan (:func:`bucketkit.pruning.plan.plan_scan`) and list its read units."""
    from bucketkit.pruning.plan import plan_scan

    scan = plan_scan(table, filters, write_ids=write_ids)
    ids = None if scan.write_ids is None else str(scan.write_ids)
    files: dict[int, list[Any]] = {}
    for part in scan.partitions:
        pvals = tuple((k, v) for k, v in part.values.items())
        for bucket, paths in part.bucket_files.items():
            if part.acid is None:
                files.setdefault(bucket, []).extend(FileRef(p, part.sizes.get(p, 1), bucket, pvals) for p in paths)
            elif bucket_files(part.acid, bucket).inserts or bucket_files(part.acid, bucket).originals:
                size = sum(part.sizes.get(p, 1) for p in paths)  # delete events alone delete nothing here
                files.setdefault(bucket, []).append(AcidBucketRef(part.path, size, bucket, pvals, -1, part.acid, ids,
                                                                  scan.acid_kind or FULL))
    reason = "; ".join(r for r in (scan.partition_reason, scan.bucket_reason) if r)
    acid = describe_acid([(p.path, p.acid) for p in scan.partitions], ids, scan.acid_kind) if scan.acid else ""
    return SideFiles(table.spec.bucket_count, scan.selected_buckets, {b: tuple(f) for b, f in files.items()},
                     reason, scan.residual, scan.unbucketed, acid)


def acid_rows(filesystem: pafs.FileSystem, ref: AcidBucketRef, file_format: str = "orc") -> int | None:
    """Estimated rows of an ACID bucket: its base/delta/original files' footer rows less its delete
    events (each deletes at most one row), None when a footer cannot be read."""
    files = ref.files
    try:
        inserted = sum(footer_rows(filesystem, posixpath.join(ref.path, p), file_format)
                       for p in files.inserts + files.originals)
        deleted = sum(footer_rows(filesystem, posixpath.join(ref.path, p), "orc") for p in files.deletes)
    except (OSError, pa.ArrowException):
        return None
    return max(0, inserted - deleted)


def acid_batches(filesystem: pafs.FileSystem, ref: AcidBucketRef, columns: Sequence[str], target: pa.Schema,
                 file_format: str, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The snapshot rows of an ACID bucket: ``columns`` of the table's data columns ``target``
    (a full-ACID bucket leaves out those no file has; insert-only files get them as nulls)."""
    if ref.kind == INSERT_ONLY:
        data = read_insert_only(filesystem, ref.path, ref.state, ref.bucket, file_format)
        table = conform(data, target, target.names, (), {}).select(list(columns)) if data.num_columns else data
    else:
        table = read_bucket(filesystem, ref.path, ref.state, ref.bucket, write_ids=ref.write_ids, columns=columns)
    yield from table.to_batches(max_chunksize=batch_rows)


def unit_schema(filesystem: pafs.FileSystem, ref: FileRef | AcidBucketRef, file_format: str) -> pa.Schema:
    """The columns of a read unit: a file's schema; an ACID bucket's ``row`` struct (or, with only
    original files, the first one's schema)."""
    if not isinstance(ref, AcidBucketRef):
        return read_schema(filesystem, ref.path, file_format)
    files = ref.files
    return data_schema(filesystem, posixpath.join(ref.path, (files.inserts + files.originals)[0]), file_format)


def describe_acid(states: Sequence[tuple[str, AcidState]], write_ids: str | None, kind: str | None = FULL) -> str:
    """An ACID side's snapshot in words: which write ids are visible and which directories it reads."""
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
