"""Join planning: pair the buckets of two tables, or say why they cannot be paired.

Two tables hashed the same way on the join keys can be joined bucket by bucket: a row of bucket i
on one side can only match rows of bucket i on the other. With bucket counts N and kN (any integer
k), ``(h mod kN) mod N == h mod N``, so bucket i of the N-side pairs with buckets i, i+N, ...,
i+(k-1)N of the kN-side; each such set is one *bucket group*, joined by one task.

:func:`plan_join` returns a :class:`JoinPlan`: plain, picklable data that names the strategy
(``"bucketed"`` or ``"shuffle"``), the reason in words, and the groups with the files of each side.
It needs no Spark; :func:`bucketkit.join` executes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import pyarrow as pa

from bucketkit.errors import InvalidArgumentError
from bucketkit.hivetypes import arrow_type_of_hive
from bucketkit.joins.memory import estimate_memory
from bucketkit.joins.sides import BucketGroup, SideFiles, scan_side
from bucketkit.layout.discovery import format_bytes
from bucketkit.layout.metadata import spelled_as
from bucketkit.pruning.plan import table_as_of
from bucketkit.table import BucketedTable, open_table
from bucketkit.trust import floating_doubt, spec_doubt
from bucketkit.units import ReadUnit

__all__ = ["plan_join", "JoinPlan", "BucketGroup", "ReadUnit", "SideFiles", "normalize_how",
           "normalize_on", "pair_buckets", "JOIN_TYPES"]

# Canonical join types, and every spelling Spark's DataFrame.join accepts for them.
JOIN_TYPES = ("inner", "left", "right", "full", "left_semi", "left_anti")
_HOW_ALIASES = {
    "inner": "inner",
    "left": "left", "leftouter": "left", "left_outer": "left",
    "right": "right", "rightouter": "right", "right_outer": "right",
    "full": "full", "fullouter": "full", "full_outer": "full", "outer": "full",
    "semi": "left_semi", "leftsemi": "left_semi", "left_semi": "left_semi",
    "anti": "left_anti", "leftanti": "left_anti", "left_anti": "left_anti",
}
# Which side's rows survive unmatched: that side's bucket pruning decides which groups exist.
_PRESERVED = {"inner": (), "left": ("left",), "right": ("right",), "full": ("left", "right"),
              "left_semi": (), "left_anti": ("left",)}


def normalize_how(how: str) -> str:
    """Spark's join type spellings (``"left_outer"``, ``"fullouter"``, ``"leftsemi"``, ...) → canonical."""
    key = str(how).lower().replace(" ", "")
    if key not in _HOW_ALIASES:
        raise InvalidArgumentError(f"how={how!r}: expected one of {sorted(_HOW_ALIASES)}")
    return _HOW_ALIASES[key]


def normalize_on(on: str | Sequence[Any]) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """``on`` → ``(left_keys, right_keys, using)``; ``using`` is True when names were given.

    ``on`` is a column name, a list of names present on both sides (Spark's ``USING`` join), or a
    list of ``(left_name, right_name)`` pairs.
    """
    items = [on] if isinstance(on, str) else list(on or ())
    if not items:
        raise InvalidArgumentError("on: expected at least one join key (a name or a (left, right) pair)")
    if all(isinstance(i, str) for i in items):
        keys = tuple(items)
        using = True
        left, right = keys, keys
    elif all(isinstance(i, (tuple, list)) and len(i) == 2 and all(isinstance(x, str) for x in i) for i in items):
        left, right, using = tuple(i[0] for i in items), tuple(i[1] for i in items), False
    else:
        raise InvalidArgumentError(f"on={on!r}: expected column names or (left_name, right_name) pairs, not a mix")
    for side, keys in (("left", left), ("right", right)):
        if len(set(keys)) != len(keys):
            raise InvalidArgumentError(f"on={on!r}: {side} key {sorted(k for k in keys if keys.count(k) > 1)[0]!r} "
                                       "appears twice")
    return left, right, using


def pair_buckets(left: SideFiles, right: SideFiles, how: str) -> tuple[BucketGroup, ...]:
    """Pair the buckets of two compatible sides into groups, applying pruning per join type.

    A group exists when the join can produce rows from it: for an inner or semi join both sides
    must have a selected bucket in it (a bucket pruned on one side needs nothing from the other);
    a preserved side (left of a left outer/anti join, both of a full join) keeps every group where
    it has a selected bucket, the other side's pruning then only empties its part of the group.
    Groups come largest first, so few cores pack them well.
    """
    how = normalize_how(how)
    n, m = left.bucket_count, right.bucket_count
    small = min(n, m)
    if max(n, m) % small:
        raise InvalidArgumentError(f"bucket counts {n} and {m}: neither divides the other")
    groups = []
    for g in range(small):
        lb = tuple(b for b in range(g, n, small) if left.is_selected(b))
        rb = tuple(b for b in range(g, m, small) if right.is_selected(b))
        present = {"left": bool(lb), "right": bool(rb)}
        preserved = _PRESERVED[how]
        needed = any(present[s] for s in preserved) if preserved else (present["left"] and present["right"])
        if not needed:
            continue
        lf = tuple(f for b in lb for f in left.files.get(b, ()))
        rf = tuple(f for b in rb for f in right.files.get(b, ()))
        build = "left" if sum(f.size for f in lf) < sum(f.size for f in rf) else "right"
        groups.append(BucketGroup(g, lb, rb, lf, rf, build))
    groups.sort(key=lambda grp: (-grp.bytes, grp.group_id))
    return tuple(groups)


@dataclass(frozen=True)
class JoinPlan:
    """How :func:`bucketkit.join` will join two tables. Plain data: print it, test it, pickle it.

    Attributes:
        strategy: ``"bucketed"`` (bucket groups joined without a shuffle), ``"shuffle"`` (Spark's
            own join over the two scans), ``"move-left"``/``"move-right"`` (that plain side hashed
            into the other's buckets, then joined bucket by bucket; see ``plain_side``) or ``"jvm"``
            (the groups joined by Spark in the JVM, bucket by bucket, where a Python worker's memory
            cannot hold a join task, or where the keys repeat so that the output outnumbers the rows
            read; ``groups`` are those the Python join would have run).
        reason: why, in words.
        how: canonical join type: one of :data:`JOIN_TYPES`.
        left_keys, right_keys: the join keys of each side, paired by position.
        using: True when ``on`` gave names (Spark's ``USING`` join: the keys appear once).
        left, right: the two tables (location + spec).
        left_filters, right_filters: each side's filters as given (applied before the join).
        groups: the bucket groups, largest first (empty for ``"shuffle"``).
        left_pruning, right_pruning: what the scan planner selected on each side and why.
        left_placement, right_placement: whether each side's rows are vouched for or re-hashed as they are read,
            and why (:attr:`~bucketkit.joins.sides.SideFiles.placement`).
        merge: True when each group is joined by the streaming merge join (sorted buckets).
        merge_reason: why the merge join is or is not used.
        left_schema, right_schema: Arrow schema of each side (data then partition columns).
        left_residual, right_residual: each side's normalised filters (DNF) the rows read must pass.
        left_snapshot, right_snapshot: for a side of a table kind (Hive ACID), its snapshot in words
            (which write ids are visible, which directories are read); empty for plain files.
        left_write_ids, right_write_ids: the ValidWriteIdList each ACID side was read with (None: all).
        left_as_of, right_as_of: the version each side was read at (time travel), as given; None: live.
        plain_side: ``"left"``/``"right"`` when that side is a DataFrame (or a table without buckets):
            strategy ``"move-<side>"`` writes it into the other side's buckets, ``"shuffle"`` has Spark
            join the two; its table is then the layout it would get, not a directory.
    """

    strategy: str
    reason: str
    how: str
    left_keys: tuple[str, ...]
    right_keys: tuple[str, ...]
    using: bool
    left: BucketedTable
    right: BucketedTable
    left_filters: Any = None
    right_filters: Any = None
    groups: tuple[BucketGroup, ...] = ()
    left_pruning: str = ""
    right_pruning: str = ""
    left_placement: str = ""
    right_placement: str = ""
    merge: bool = False
    merge_reason: str = ""
    left_schema: pa.Schema | None = field(default=None, compare=False)
    right_schema: pa.Schema | None = field(default=None, compare=False)
    left_residual: tuple = ()
    right_residual: tuple = ()
    left_snapshot: str = ""
    right_snapshot: str = ""
    left_write_ids: str | None = None
    right_write_ids: str | None = None
    left_as_of: Any = None
    right_as_of: Any = None
    plain_side: str = ""

    @property
    def bucketed(self) -> bool:
        return self.strategy == "bucketed"

    @property
    def left_files(self) -> int:
        return sum(len(g.left_files) for g in self.groups)

    @property
    def right_files(self) -> int:
        return sum(len(g.right_files) for g in self.groups)

    @property
    def left_bytes(self) -> int:
        return sum(g.left_bytes for g in self.groups)

    @property
    def right_bytes(self) -> int:
        return sum(g.right_bytes for g in self.groups)

    @property
    def memory(self) -> int:
        """Estimated decoded bytes of all groups (see :attr:`BucketGroup.memory`)."""
        return sum(g.memory for g in self.groups)

    @property
    def skew(self) -> float:
        """Largest group's bytes over the mean group's (1.0 = perfectly even)."""
        sizes = [g.bytes for g in self.groups]
        mean = sum(sizes) / len(sizes) if sizes else 0
        return max(sizes) / mean if mean else 1.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (``bucketkit ... --json``)."""
        def side(table: BucketedTable) -> dict[str, Any]:
            return {"table": str(table), "location": table.location, "spec": table.spec.to_dict()}

        return {
            "strategy": self.strategy, "reason": self.reason, "how": self.how,
            "left_keys": list(self.left_keys), "right_keys": list(self.right_keys), "using": self.using,
            "left": side(self.left), "right": side(self.right),
            "left_filters": _jsonable(self.left_filters), "right_filters": _jsonable(self.right_filters),
            "left_pruning": self.left_pruning, "right_pruning": self.right_pruning,
            "left_placement": self.left_placement, "right_placement": self.right_placement,
            "merge": self.merge, "merge_reason": self.merge_reason, "left_snapshot": self.left_snapshot,
            "right_snapshot": self.right_snapshot, "plain_side": self.plain_side,
            "totals": {"groups": len(self.groups), "left_files": self.left_files, "right_files": self.right_files,
                       "left_bytes": self.left_bytes, "right_bytes": self.right_bytes, "skew": round(self.skew, 3),
                       "memory_estimate": self.memory},
            "groups": [{"group": g.group_id, "left_buckets": list(g.left_buckets),
                        "right_buckets": list(g.right_buckets), "build_side": g.build_side,
                        "memory_estimate": g.memory,
                        "left_files": [[f.path, f.size] for f in g.left_files],
                        "right_files": [[f.path, f.size] for f in g.right_files]} for g in self.groups],
        }

    def explain(self, max_groups: int = 5) -> str:
        """A readable plan, like ``EXPLAIN``: strategy, why, groups, files and bytes, skew."""
        keys = ", ".join(lk if lk == rk else f"{lk}={rk}" for lk, rk in zip(self.left_keys, self.right_keys))
        lines = [f"JoinPlan: {self.how} join on ({keys}) of {self.left} and {self.right}",
                 f"  strategy: {self.strategy}", f"  reason:   {self.reason}"]
        for name, table, pruning, filters, snapshot, placement in (
                ("left", self.left, self.left_pruning, self.left_filters, self.left_snapshot, self.left_placement),
                ("right", self.right, self.right_pruning, self.right_filters, self.right_snapshot,
                 self.right_placement)):
            spec = table.spec
            by = ", ".join(f"{t} {c}" for c, t in zip(spec.bucketed_by, spec.bucket_types))
            if name == self.plain_side:
                lines.append(f"  {name + ':':6} a DataFrame, not bucketed" + (
                    f"; written into {spec.bucket_count} buckets by ({by}), {spec.hashing} when run"
                    if self.strategy.startswith("move") else ""))
                continue
            layout = f"{spec.bucket_count} buckets by ({by}), {spec.hashing}" if spec.bucketed else "not bucketed"
            lines.append(f"  {name + ':':6} {layout}"
                         + (f", sorted by ({', '.join(map(str, spec.sorted_by))})" if spec.sorted_by else "")
                         + (f", partitioned by ({', '.join(spec.partitioned_by)})" if spec.partitioned_by else ""))
            if filters:
                lines.append(f"          filters: {filters}")
            if pruning:
                lines.append(f"          pruning: {pruning}")
            if snapshot:
                lines.append(f"          snapshot: {snapshot}")
            if placement and self.bucketed:
                lines.append(f"          placement: {placement}")
        if self.bucketed:
            lines.append(f"  groups: {len(self.groups)}, left {self.left_files} files / {format_bytes(self.left_bytes)}, "
                         f"right {self.right_files} files / {format_bytes(self.right_bytes)}, skew {self.skew:.2f}x "
                         "(largest group / mean)")
            lines.append(f"  memory: about {format_bytes(self.memory)} decoded in Arrow, largest group "
                         f"{format_bytes(max((g.memory for g in self.groups), default=0))} (estimated from footer row "
                         "counts x column widths; a group above the join budget is joined in parts spilled to disk)")
            lines.append(f"  kernel: {'streaming merge join' if self.merge else 'hash join'} ({self.merge_reason})")
            for g in self.groups[:max_groups]:
                lines.append(f"    group {g.group_id}: left buckets {list(g.left_buckets)} "
                             f"({len(g.left_files)} files, {format_bytes(g.left_bytes)}) x right buckets "
                             f"{list(g.right_buckets)} ({len(g.right_files)} files, {format_bytes(g.right_bytes)}), "
                             f"~{format_bytes(g.memory)} in memory, build {g.build_side}")
            if len(self.groups) > max_groups:
                lines.append(f"    ... {len(self.groups) - max_groups} more groups")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


# -- compatibility ---------------------------------------------------------------------------------

def _describe(table: BucketedTable) -> str:
    spec = table.spec
    return ", ".join(f"{t} {c}" for c, t in zip(spec.bucketed_by, spec.bucket_types))


def incompatibility(left: BucketedTable, right: BucketedTable, left_keys: Sequence[str],
                    right_keys: Sequence[str]) -> str | None:
    """Why the two tables cannot be joined bucket by bucket on these keys, or None if they can.

    The bucket columns of each side must all be join keys, paired with each other position by
    position (a key list that is a superset of the bucket columns is fine: equal keys imply equal
    bucket columns), hashed identically (same version, same Hive type per key), with bucket
    counts equal or one a multiple of the other.
    """
    ls, rs = left.spec, right.spec
    for name, spec, keys in (("left", ls, left_keys), ("right", rs, right_keys)):
        missing = [c for c in spec.bucketed_by if c not in keys]
        if missing:
            return (f"{name} join keys ({', '.join(keys)}) are not the bucket columns "
                    f"({', '.join(spec.bucketed_by)}): {', '.join(missing)} is not joined on")
    if len(ls.bucketed_by) != len(rs.bucketed_by):
        return (f"left is bucketed by {len(ls.bucketed_by)} column(s) ({', '.join(ls.bucketed_by)}), right by "
                f"{len(rs.bucketed_by)} ({', '.join(rs.bucketed_by)})")
    pair_of = dict(zip(left_keys, right_keys))
    for i, (lc, rc) in enumerate(zip(ls.bucketed_by, rs.bucketed_by)):
        if pair_of[lc] != rc:
            return (f"bucket column {i + 1} is {lc} on the left and {rc} on the right, but the join pairs "
                    f"{lc} with {pair_of[lc]}")
    for name, spec in (("left", ls), ("right", rs)):
        floating = floating_doubt(spec)
        if floating:  # the rule io.bucketkit.hashing.HiveBucketFunction applies to Spark SQL's joins, for one verdict
            return f"{name} {floating}"
    reason = ls.bucket_function().incompatibility(rs.bucket_function())
    if reason:
        short = {"hive": "v{0.bucketing_version}", "spark": "Spark's bucketBy hash"}
        lv = f" ({short[ls.hash_family].format(ls)})" if ls.hashing != rs.hashing else ""
        rv = f" ({short[rs.hash_family].format(rs)})" if lv else ""
        return f"left is bucketed by {_describe(left)}{lv}, right by {_describe(right)}{rv}: {reason}"
    n, m = ls.bucket_count, rs.bucket_count
    if max(n, m) % min(n, m):
        return f"bucket counts {n} and {m}: neither divides the other"
    return None


# -- planning ------------------------------------------------------------------------------------

def side_schema(table: BucketedTable) -> pa.Schema | None:
    """Arrow schema of a table's rows (data columns, then partition columns), None if unknown."""
    spec = table.spec
    if not spec.columns:
        return None
    cols = list(spec.columns) + list(zip(spec.partitioned_by, spec.partition_types))
    return pa.schema([(n, arrow_type_of_hive(t)) for n, t in cols])


def _merge_choice(plan_left: BucketedTable, plan_right: BucketedTable, left_keys: Sequence[str],
                  right_keys: Sequence[str], schema: pa.Schema | None) -> tuple[bool, str]:
    ls, rs = plan_left.spec.sorted_by, plan_right.spec.sorted_by
    if not ls or not rs:
        return False, "buckets are not sorted on both sides"
    pairs = dict(zip(left_keys, right_keys))
    first_l, first_r = ls[0], rs[0]
    if first_l.column not in pairs or pairs[first_l.column] != first_r.column:
        return False, (f"first sort columns {first_l.column} (left) and {first_r.column} (right) are not a "
                       "join key pair")
    if not (first_l.ascending and first_r.ascending):
        return False, "buckets are sorted descending; the merge join needs ascending keys"
    if schema is not None and first_l.column in schema.names:
        t = schema.field(first_l.column).type
        if pa.types.is_floating(t):
            return False, f"first sort key {first_l.column} is floating point (NaN ordering)"
    return True, f"both sides sorted ascending by {first_l.column}={first_r.column}"


def plan_join(
    left: BucketedTable | str,
    right: BucketedTable | str,
    on: str | Sequence[Any],
    how: str = "inner",
    *,
    left_filters: Any = None,
    right_filters: Any = None,
    left_files: SideFiles | None = None,
    right_files: SideFiles | None = None,
    left_write_ids: str | None = None,
    right_write_ids: str | None = None,
    left_as_of: Any = None,
    right_as_of: Any = None,
) -> JoinPlan:
    """Plan a join of two bucketed tables.

    Args:
        left, right: :class:`~bucketkit.table.BucketedTable` objects or table paths (opened with
            :func:`~bucketkit.table.open_table`, so they need bucketkit metadata).
        on: column names shared by both sides, or ``(left_name, right_name)`` pairs.
        how: inner, left, right, full, left_semi, left_anti, or any of Spark's aliases.
        left_filters, right_filters: filters of each side (see :func:`bucketkit.pruning.plan.plan_scan`),
            applied before the join; they prune partitions and buckets of their side, and through
            the pairing the other side's too where the join type allows.
        left_files, right_files: the files already selected for a side (None: found by
            :func:`~bucketkit.pruning.plan.plan_scan`), for a caller that lists files its own way or a
            test that knows which file holds which bucket.
        left_write_ids, right_write_ids: for a Hive ACID side, the snapshot to read: Hive's
            ValidWriteIdList string (``db.t:hwm:minOpen:open:aborted``); None: every write id in
            the directory names is committed.
        left_as_of, right_as_of: time travel on a side (as :func:`~bucketkit.pruning.plan.plan_scan`'s ``as_of``):
            that version's files, bucketed as that version was written (its spec), which a later overwrite or
            ``rebucket`` may have changed; the plan's ``left``/``right`` are the tables as they were then.

    Returns:
        A :class:`JoinPlan`: ``"bucketed"`` with the bucket groups, or ``"shuffle"`` with the reason.

    Raises:
        InvalidArgumentError: unknown join type, malformed ``on``, or a key that is not a column.
    """
    how = normalize_how(how)
    # each side as it was at the version read: its files are bucketed by that version's spec, not the live one's
    lt, rt = table_as_of(open_table(left), left_as_of), table_as_of(open_table(right), right_as_of)
    lkeys, rkeys, using = normalize_on(on)
    lschema, rschema = side_schema(lt), side_schema(rt)
    lkeys = tuple(spelled_as(lkeys, lschema.names)) if lschema is not None else lkeys  # names are case-insensitive
    rkeys = tuple(spelled_as(rkeys, rschema.names)) if rschema is not None else rkeys
    for name, schema, keys in (("left", lschema, lkeys), ("right", rschema, rkeys)):
        if schema is not None:
            unknown = [k for k in keys if k not in schema.names]
            if unknown:
                raise InvalidArgumentError(f"join key(s) {unknown} are not columns of the {name} table "
                                           f"{lt if name == 'left' else rt} (columns: {schema.names})")
    common = dict(how=how, left_keys=lkeys, right_keys=rkeys, using=using, left=lt, right=rt,
                  left_filters=left_filters, right_filters=right_filters, left_schema=lschema,
                  right_schema=rschema, left_write_ids=left_write_ids, right_write_ids=right_write_ids,
                  left_as_of=left_as_of, right_as_of=right_as_of)
    reason = next((f"the {side} table {t} is read unbucketed: {why}" for side, t in (("left", lt), ("right", rt))
                   if (why := t.unbucketed_reason or spec_doubt(t.spec))), None)
    reason = reason or incompatibility(lt, rt, lkeys, rkeys)
    if reason is None and lschema is not None and rschema is not None:
        for lk, rk in zip(lkeys, rkeys):
            if lschema.field(lk).type != rschema.field(rk).type:
                reason = (f"join key {lk} is {lschema.field(lk).type} on the left and {rk} is "
                          f"{rschema.field(rk).type} on the right")
                break
    if reason is not None:
        return JoinPlan("shuffle", reason, **common)
    lside = left_files if left_files is not None else scan_side(lt, left_filters, left_write_ids, left_as_of)
    rside = right_files if right_files is not None else scan_side(rt, right_filters, right_write_ids, right_as_of)
    doubt = next((f"the {side} table {t} is read unbucketed: {sf.unbucketed}"
                  for side, t, sf in (("left", lt, lside), ("right", rt, rside)) if sf.unbucketed), None)
    if doubt is not None:
        return JoinPlan("shuffle", doubt, **common)
    groups = estimate_memory(pair_buckets(lside, rside, how), lt, rt, lschema, rschema)
    unsorted = next((f"the {side} side is {sf.unsorted}"
                     for side, sf in (("left", lside), ("right", rside)) if sf.unsorted), None)
    merge, merge_reason = (False, unsorted) if unsorted else _merge_choice(lt, rt, lkeys, rkeys, lschema)
    n, m = lt.spec.bucket_count, rt.spec.bucket_count
    ratio = "" if n == m else f"; {min(n, m)} groups: bucket i of the {min(n, m)}-bucket side pairs with " \
                              f"i, i+{min(n, m)}, ... of the {max(n, m)}-bucket side"
    reason = (f"both sides bucketed by ({_describe(lt)}) with {lt.spec.hashing}, "
              f"{n} and {m} buckets{ratio}")
    return JoinPlan("bucketed", reason, groups=groups, left_pruning=lside.reason, right_pruning=rside.reason,
                    left_placement=lside.placement, right_placement=rside.placement,
                    merge=merge, merge_reason=merge_reason, left_residual=lside.residual,
                    right_residual=rside.residual, left_snapshot=lside.snapshot, right_snapshot=rside.snapshot,
                    **common)
