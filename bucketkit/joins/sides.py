"""One side of a bucketed join after pruning: its read units, bucket by bucket; and a group, the buckets of
both sides one task joins.

A side's units come from its scan plan (:meth:`bucketkit.pruning.plan.ScanPlan.units`): one data file
each, or for a Hive ACID side one bucket of a partition's snapshot each
(:class:`bucketkit.acid.plan.AcidBucket`; its plan's :class:`~bucketkit.units.TableKind` says so),
read and estimated as a whole. Either way a unit's rows
are exactly the rows of its bucket, so every kind of table joins bucket by bucket.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from bucketkit.table import BucketedTable
    from bucketkit.units import ReadUnit

__all__ = ["SideFiles", "BucketGroup", "scan_side"]


@dataclass(frozen=True)
class SideFiles:
    """One side after pruning: what :func:`~bucketkit.joins.plan.pair_buckets` needs.

    Attributes:
        bucket_count: the side's bucket count.
        selected: bucket ids left after pruning (None = all).
        files: bucket id → read units of that bucket across the selected partitions (selected
            ids only): :class:`bucketkit.units.ReadUnit`.
        reason: why these partitions/buckets (from the scan planner), for the printout.
        unbucketed: why the side must be read as unbucketed (see :mod:`bucketkit.trust`), or None.
        snapshot: for a side whose table is of a kind (Hive ACID), the snapshot it reads in words
            (``TableKind.describe``); empty otherwise.
        unsorted: why the side's units are not sorted files (its kind's name and ``TableKind.unsorted``),
            or None.
        placement: whether the rows of its plain Hive-hashed files are vouched for or re-hashed as they are read,
            and why (:class:`bucketkit.layout.manifest.Placement`, in words); empty where nothing is checked.
    """

    bucket_count: int
    selected: frozenset[int] | None
    files: dict[int, tuple[Any, ...]]
    reason: str = ""
    residual: tuple = ()
    unbucketed: str | None = None
    snapshot: str = ""
    unsorted: str | None = None
    placement: str = ""

    def is_selected(self, bucket: int) -> bool:
        return self.selected is None or bucket in self.selected


@dataclass(frozen=True)
class BucketGroup:
    """The buckets of both sides that one task joins.

    Attributes:
        group_id: the bucket id of the side with fewer buckets.
        left_buckets: left bucket ids read (after pruning).
        right_buckets: right bucket ids read (after pruning).
        left_files: the left's read units across its selected partitions (:class:`bucketkit.units.ReadUnit`:
            data files, or whole ACID buckets).
        right_files: the right's files.
        build_side: ``"left"`` or ``"right"``: the smaller side, held in the hash table.
        left_memory, right_memory: estimated decoded (in-memory Arrow) bytes of each side's rows,
            all columns (:func:`estimate_memory`; 0 = not estimated).
    """

    group_id: int
    left_buckets: tuple[int, ...]
    right_buckets: tuple[int, ...]
    left_files: tuple[ReadUnit, ...]
    right_files: tuple[ReadUnit, ...]
    build_side: str = "right"
    left_memory: int = 0
    right_memory: int = 0

    @property
    def memory(self) -> int:
        """Estimated decoded bytes of both sides (what a hash join of the group holds, before its own
        structures: see :func:`bucketkit.joins.memory.working_set`)."""
        return self.left_memory + self.right_memory

    @property
    def left_bytes(self) -> int:
        return sum(f.size for f in self.left_files)

    @property
    def right_bytes(self) -> int:
        return sum(f.size for f in self.right_files)

    @property
    def bytes(self) -> int:
        return self.left_bytes + self.right_bytes


def scan_side(table: BucketedTable, filters: Any, write_ids: str | None = None, as_of: Any = None) -> SideFiles:
    """Plan one side's scan (:func:`bucketkit.pruning.plan.plan_scan`) and list its read units."""
    from bucketkit.pruning.plan import plan_scan

    scan = plan_scan(table, filters, write_ids=write_ids, as_of=as_of)
    files: dict[int, list[Any]] = {}
    for unit in scan.units():
        files.setdefault(unit.bucket, []).append(unit)
    reason = "; ".join(r for r in (scan.partition_reason, scan.bucket_reason) if r)
    kind = scan.kind
    return SideFiles(table.spec.bucket_count, scan.selected_buckets, {b: tuple(f) for b, f in files.items()},
                     reason, scan.residual, scan.unbucketed, kind.describe(scan) if kind else "",
                     f"{kind.name}: {kind.unsorted}" if kind and kind.unsorted else None,
                     "" if scan.placement is None else str(scan.placement))
