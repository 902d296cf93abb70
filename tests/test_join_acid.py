"""Bucketed joins with a Hive ACID side, without Spark: the plan pairs ACID buckets (snapshot units,
not files), and the kernel's rows equal a reference join of the rows the writes left.

The ACID tables are written as Hive 3 writes them (tests/support/acid.py); the expected ACID rows are
those the writes left, kept while writing, never read back through bucketkit.
"""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings, strategies as st

from bucketkit.joins.execute import build_exec, execute_group
from bucketkit.joins.memory import row_width
from bucketkit.acid.plan import AcidBucket
from bucketkit.joins.plan import JOIN_TYPES, plan_join

from support.acid import AcidTable
from support.joins import reference_join, shape, sort_key, write_table

keys = st.lists(st.one_of(st.integers(-5, 15), st.none()), max_size=25)
history = st.lists(st.tuples(keys, st.lists(st.integers(-5, 15), max_size=6), st.booleans()), min_size=1,
                   max_size=5)


def build(root, n, steps):
    acid = AcidTable(root, n)
    (root).mkdir(parents=True, exist_ok=True)
    for inserts, deletes, committed in steps:
        acid.write(inserts, deletes, committed)
    return acid


def joined(plan, columns=None):
    ex = build_exec(plan, columns)
    batches = [b for g in plan.groups for b in execute_group(ex, g)]
    return ex, sorted((tuple(r.values()) for r in pa.Table.from_batches(batches, schema=ex.schema).to_pylist()),
                      key=sort_key)


def reference(left, right, how, ex):
    return sorted(shape(reference_join(left, right, ["k"], ["k"], how), ex.output, {"k": "k"}), key=sort_key)


@settings(max_examples=30, deadline=None)
@given(steps=history, right_keys=keys, how=st.sampled_from(JOIN_TYPES), k=st.sampled_from([1, 2]),
       acid_left=st.booleans())
def test_acid_side_joins_bucket_by_bucket_like_the_reference(tmp_path_factory, steps, right_keys, how, k, acid_left):
    base = tmp_path_factory.mktemp("aj")
    acid = build(base / "acid", 4, steps)
    plain, _ = write_table(str(base / "plain"), {"k": right_keys, "w": [f"w{i}" for i in range(len(right_keys))]},
                           {"k": "int", "w": "string"}, ["k"], 4 * k)
    at, ids = acid.open_table(), acid.write_ids()
    if acid_left:
        plan = plan_join(at, plain, "k", how, left_write_ids=ids)
        left, right = acid.rows(), [dict(k=a, w=f"w{i}") for i, a in enumerate(right_keys)]
    else:
        plan = plan_join(plain, at, "k", how, right_write_ids=ids)
        left, right = [dict(k=a, w=f"w{i}") for i, a in enumerate(right_keys)], acid.rows()
    assert plan.strategy == "bucketed", plan.reason
    acid_units = [f for g in plan.groups for f in (g.left_files if acid_left else g.right_files)]
    assert all(isinstance(f.source, AcidBucket) for f in acid_units)
    assert not plan.merge
    ex, got = joined(plan)
    assert got == reference(left, right, plan.how, ex)


def test_both_sides_acid_with_an_open_write_and_a_multiple_bucket_count(tmp_path):
    left = build(tmp_path / "l", 2, [(list(range(30)), [], True), ([], [3, 4, 5], True), ([100, 3], [7], False)])
    right = build(tmp_path / "r", 4, [(list(range(0, 60, 2)), [], True), ([6, 6], [6], True)])
    plan = plan_join(left.open_table(), right.open_table(), "k", "full", left_write_ids=left.write_ids(),
                     right_write_ids=right.write_ids())
    assert plan.strategy == "bucketed"
    assert [(g.left_buckets, g.right_buckets) for g in sorted(plan.groups, key=lambda g: g.group_id)] == \
        [((0,), (0, 2)), ((1,), (1, 3))]
    ex, got = joined(plan)
    assert got == reference(left.rows(), right.rows(), "full", ex)
    assert {r["k"] for r in left.rows()} >= {0, 1, 29} and not {3, 4, 5, 100} & {r["k"] for r in left.rows()}


def test_explain_says_the_side_is_acid_and_which_write_ids_are_visible(tmp_path):
    acid = build(tmp_path / "a", 2, [([1, 2, 3], [], True), ([], [2], True), ([9], [], False)])
    plain, _ = write_table(str(tmp_path / "p"), {"k": [1, 2], "w": ["a", "b"]}, {"k": "int", "w": "string"}, ["k"], 2)
    plan = plan_join(acid.open_table(), plain, "k", left_write_ids=acid.write_ids())
    text = plan.explain()
    assert "db.acid:3:3:3:" in text and "Hive ACID" in text
    assert "delta_0000001_0000001_0000" in text and "delete_delta_0000002_0000002_0000" in text
    assert "hash join (the left side is Hive ACID" in text
    assert plan.to_dict()["left_snapshot"] == plan.left_snapshot and plan.right_snapshot == ""
    without = plan_join(acid.open_table(), plain, "k")
    assert "every write id in the directory names visible" in without.left_snapshot


def test_memory_estimate_of_an_acid_bucket_counts_inserts_less_delete_events(tmp_path):
    acid = build(tmp_path / "a", 1, [(list(range(100)), [], True), ([], list(range(30)), True)])
    plain, _ = write_table(str(tmp_path / "p"), {"k": [1], "w": ["a"]}, {"k": "int", "w": "string"}, ["k"], 1)
    plan = plan_join(acid.open_table(), plain, "k")
    (unit,) = plan.groups[0].left_files
    assert isinstance(unit.source, AcidBucket) and unit.rows == 70
    assert plan.groups[0].left_memory == int(70 * row_width(plan.left_schema))
    assert all(f.source is None for f in plan.groups[0].right_files)


def test_pruned_acid_join_reads_only_the_selected_buckets(tmp_path):
    acid = build(tmp_path / "a", 4, [(list(range(40)), [], True), ([], [5], True)])
    plain, _ = write_table(str(tmp_path / "p"), {"k": list(range(40)), "w": ["x"] * 40}, {"k": "int", "w": "string"},
                           ["k"], 4)
    plan = plan_join(acid.open_table(), plain, "k", left_filters=[("k", "=", 7)])
    bucket = acid.bucket_of(7)
    assert [g.left_buckets for g in plan.groups] == [(bucket,)]
    (unit,) = plan.groups[0].left_files
    assert unit.bucket == bucket and all(f"bucket_{bucket:05d}" in p for p in unit.data_files + unit.delete_files)
    ex, got = joined(plan)
    assert got == [(7, "v7@1", "x")]


def test_partitioned_acid_table_joins_with_its_partition_values(tmp_path):
    from bucketkit.table import open_table

    parts = {1: build(tmp_path / "t" / "p=1", 2, [([1, 2, 3], [], True), ([], [1], True)]),
             2: build(tmp_path / "t" / "p=2", 2, [([1, 5], [], True)])}
    table = open_table(str(tmp_path / "t"), bucketed_by="k", bucket_count=2, bucketing_version=2,
                       table_columns={"k": "int", "v": "string"}, partitioned_by=["p"], partition_types=["int"])
    plain, _ = write_table(str(tmp_path / "q"), {"k": [1, 2, 5], "w": ["a", "b", "c"]}, {"k": "int", "w": "string"},
                           ["k"], 2)
    plan = plan_join(table, plain, "k", left_filters=[("p", "in", [1, 2])])
    assert plan.strategy == "bucketed" and "2 partitions read" in plan.left_snapshot
    ex, got = joined(plan)
    left = [dict(r, p=p) for p, t in parts.items() for r in t.rows()]
    assert got == reference(left, [{"k": 1, "w": "a"}, {"k": 2, "w": "b"}, {"k": 5, "w": "c"}], "inner", ex)
    assert sorted((r[0], r[2]) for r in got) == [(1, 2), (2, 1), (5, 2)]
