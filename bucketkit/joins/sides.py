"""One side of a bucketed join after pruning: its read units, bucket by bucket.

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

__all__ = ["SideFiles", "scan_side"]


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
    """

    bucket_count: int
    selected: frozenset[int] | None
    files: dict[int, tuple[Any, ...]]
    reason: str = ""
    residual: tuple = ()
    unbucketed: str | None = None
    snapshot: str = ""
    unsorted: str | None = None

    def is_selected(self, bucket: int) -> bool:
        return self.selected is None or bucket in self.selected


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
                     f"{kind.name}: {kind.unsorted}" if kind and kind.unsorted else None)
