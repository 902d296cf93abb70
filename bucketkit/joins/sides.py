"""One side of a bucketed join after pruning: its read units, bucket by bucket.

A side's units come from its scan plan (:meth:`bucketkit.pruning.plan.ScanPlan.units`): one data file
each, or for a Hive ACID side one bucket of a partition's snapshot each
(:class:`bucketkit.acid.plan.AcidBucket`), read and estimated as a whole. Either way a unit's rows
are exactly the rows of its bucket, so every kind of table joins bucket by bucket.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from bucketkit.acid.plan import FULL, INSERT_ONLY
from bucketkit.acid.state import AcidState

if TYPE_CHECKING:
    from bucketkit.table import BucketedTable

__all__ = ["SideFiles", "scan_side", "describe_acid"]


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
    files: dict[int, list[Any]] = {}
    for unit in scan.units():
        files.setdefault(unit.bucket, []).append(unit)
    reason = "; ".join(r for r in (scan.partition_reason, scan.bucket_reason) if r)
    ids = None if scan.write_ids is None else str(scan.write_ids)
    acid = describe_acid([(p.path, p.acid) for p in scan.partitions], ids, scan.acid_kind) if scan.acid else ""
    return SideFiles(table.spec.bucket_count, scan.selected_buckets, {b: tuple(f) for b, f in files.items()},
                     reason, scan.residual, scan.unbucketed, acid)


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
