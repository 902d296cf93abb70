"""Join planning without Spark: pairing rules, pruning per join type, fallbacks and their reasons."""

from __future__ import annotations

import json
import pickle

import pytest

from bucketkit.errors import InvalidArgumentError
from bucketkit.joins.plan import (ReadUnit, JoinPlan, SideFiles, incompatibility, normalize_how, normalize_on,
                                pair_buckets, plan_join)
from bucketkit.layout.metadata import TableSpec
from bucketkit.table import BucketedTable


def side(n: int, selected=None, size=10) -> SideFiles:
    files = {b: (ReadUnit(f"/t{n}/{b:06d}_0", size * (b + 1), b),) for b in range(n)
             if selected is None or b in selected}
    return SideFiles(n, None if selected is None else frozenset(selected), files)


def table(by=("k",), types=("bigint",), n=4, version=2, **kw) -> BucketedTable:
    columns = kw.pop("columns", None) or [("k", "bigint"), ("a", "int"), ("b", "string"), ("v", "double")]
    return BucketedTable(f"/tables/{'_'.join(by)}{n}v{version}",
                         TableSpec(tuple(by), tuple(types), n, version, columns=tuple(columns), **kw))


# -- pairing -----------------------------------------------------------------------------------------

def test_equal_counts_pair_bucket_i_with_i():
    groups = pair_buckets(side(4), side(4), "inner")
    assert sorted((g.group_id, g.left_buckets, g.right_buckets) for g in groups) == [
        (i, (i,), (i,)) for i in range(4)]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_multiple_counts_any_integer_factor(k):
    n = 4
    groups = {g.group_id: g for g in pair_buckets(side(n), side(k * n), "inner")}
    assert sorted(groups) == list(range(n))
    for i, g in groups.items():
        assert g.left_buckets == (i,)
        assert g.right_buckets == tuple(i + j * n for j in range(k))
        assert [f.bucket for f in g.right_files] == list(g.right_buckets)
    flipped = {g.group_id: g for g in pair_buckets(side(k * n), side(n), "inner")}
    assert all(flipped[i].left_buckets == tuple(i + j * n for j in range(k)) for i in range(n))


def test_counts_that_do_not_divide_are_refused():
    with pytest.raises(InvalidArgumentError, match="64 and 96"):
        pair_buckets(side(64), side(96), "inner")


def test_groups_come_largest_first_and_build_on_the_smaller_side():
    left = side(4, size=10)
    right = SideFiles(4, None, {b: (ReadUnit(f"/r/{b}", 1000 if b == 2 else 1, b),) for b in range(4)})
    groups = pair_buckets(left, right, "inner")
    assert groups[0].group_id == 2
    sizes = [g.bytes for g in groups]
    assert sizes == sorted(sizes, reverse=True)
    assert groups[0].build_side == "left"  # left bucket 2 = 30 bytes < 1000
    assert all(g.build_side == "right" for g in groups[1:])


# Pruning per join type: which groups exist, and what each side contributes to them.
@pytest.mark.parametrize("how, groups, left_parts", [
    ("inner", [1], {1: (1,)}),
    ("left_semi", [1], {1: (1,)}),
    ("left", [1], {1: (1,)}),
    ("left_anti", [1], {1: (1,)}),
    ("right", [0, 1, 2, 3], {0: (), 1: (1,), 2: (), 3: ()}),
    ("full", [0, 1, 2, 3], {0: (), 1: (1,), 2: (), 3: ()}),
])
def test_left_pruning_per_join_type(how, groups, left_parts):
    planned = {g.group_id: g for g in pair_buckets(side(4, {1}), side(4), how)}
    assert sorted(planned) == groups
    assert {i: g.left_buckets for i, g in planned.items()} == left_parts
    assert all(g.right_buckets == (g.group_id,) for g in planned.values())
    assert all(not g.left_files for g in planned.values() if not g.left_buckets)


@pytest.mark.parametrize("how, groups", [
    ("inner", [2]), ("left_semi", [2]), ("right", [2]),
    ("left", [0, 1, 2, 3]), ("left_anti", [0, 1, 2, 3]), ("full", [0, 1, 2, 3]),
])
def test_right_pruning_per_join_type(how, groups):
    planned = {g.group_id: g for g in pair_buckets(side(4), side(4, {2}), how)}
    assert sorted(planned) == groups
    assert {i: g.right_buckets for i, g in planned.items()} == {i: ((2,) if i == 2 else ()) for i in groups}


@pytest.mark.parametrize("how, groups", [
    ("inner", []), ("left_semi", []), ("left", [1]), ("left_anti", [1]), ("right", [2]), ("full", [1, 2]),
])
def test_disjoint_pruning_on_both_sides(how, groups):
    assert sorted(g.group_id for g in pair_buckets(side(4, {1}), side(4, {2}), how)) == groups


def test_pruning_on_the_many_bucket_side_keeps_only_matching_buckets():
    # left 4 buckets, right 12: right bucket 9 holds rows with h % 4 == 1, so it pairs with left 1.
    groups = pair_buckets(side(4), side(12, {9}), "inner")
    assert [(g.group_id, g.left_buckets, g.right_buckets) for g in groups] == [(1, (1,), (9,))]


# -- arguments -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("alias, canonical", [
    ("inner", "inner"), ("left", "left"), ("leftouter", "left"), ("left_outer", "left"), ("right", "right"),
    ("rightouter", "right"), ("right_outer", "right"), ("full", "full"), ("outer", "full"),
    ("fullouter", "full"), ("full_outer", "full"), ("semi", "left_semi"), ("leftsemi", "left_semi"),
    ("left_semi", "left_semi"), ("anti", "left_anti"), ("leftanti", "left_anti"), ("left_anti", "left_anti"),
    ("LEFT_OUTER", "left"),
])
def test_join_type_aliases(alias, canonical):
    assert normalize_how(alias) == canonical


def test_unknown_join_type_lists_the_valid_ones():
    with pytest.raises(InvalidArgumentError, match="cross.*leftsemi"):
        normalize_how("cross")


def test_on_forms():
    assert normalize_on("k") == (("k",), ("k",), True)
    assert normalize_on(["a", "b"]) == (("a", "b"), ("a", "b"), True)
    assert normalize_on([("a", "x"), ("b", "y")]) == (("a", "b"), ("x", "y"), False)
    for bad in ([], ["a", ("b", "c")], [("a",)], ["a", "a"]):
        with pytest.raises(InvalidArgumentError):
            normalize_on(bad)


def test_unknown_key_names_the_table_and_its_columns():
    with pytest.raises(InvalidArgumentError, match="nope.*columns"):
        plan_join(table(), table(), "nope")


# -- fallbacks and their reasons --------------------------------------------------------------------------

def test_type_mismatch_in_v2_falls_back_with_the_reason():
    lt = table(("user_id",), ("bigint",), columns=[("user_id", "bigint")])
    rt = table(("user_id",), ("int",), columns=[("user_id", "int")])
    plan = plan_join(lt, rt, "user_id")
    assert plan.strategy == "shuffle" and not plan.groups
    assert "left is bucketed by bigint user_id, right by int user_id" in plan.reason
    assert "v2 hashes differ" in plan.reason


def test_version_mismatch_falls_back():
    plan = plan_join(table(version=1), table(version=2), "k")
    assert plan.strategy == "shuffle"
    assert "(v1)" in plan.reason and "(v2)" in plan.reason


def test_keys_that_are_not_the_bucket_columns_fall_back():
    lt = table(("a", "b"), ("int", "string"))
    plan = plan_join(lt, lt, "a")
    assert plan.strategy == "shuffle"
    assert plan.reason.startswith("left join keys (a) are not the bucket columns (a, b)")


def test_counts_that_do_not_divide_fall_back():
    plan = plan_join(table(n=64), table(n=96), "k")
    assert plan.strategy == "shuffle" and "bucket counts 64 and 96: neither divides the other" in plan.reason


def test_bucket_columns_paired_crosswise_fall_back():
    lt = table(("a", "b"), ("int", "int"), columns=[("a", "int"), ("b", "int")])
    reason = incompatibility(lt, lt, ("a", "b"), ("b", "a"))
    assert reason and "pairs a with b" in reason


def test_extra_join_keys_beyond_the_bucket_columns_keep_the_pairing():
    # rows equal on (k, a) are equal on k, so they share a bucket: still co-partitioned.
    assert incompatibility(table(), table(), ("k", "a"), ("k", "a")) is None
    assert incompatibility(table(), table(n=8), ("a", "k"), ("a", "k")) is None


def test_non_bucket_key_types_must_agree():
    lt = table(columns=[("k", "bigint"), ("a", "int")])
    rt = table(columns=[("k", "bigint"), ("a", "bigint")])
    plan = plan_join(lt, rt, ["k", "a"])
    assert plan.strategy == "shuffle" and "join key a is int32 on the left" in plan.reason


# -- the plan as data ---------------------------------------------------------------------------------

def bucketed_plan(how="inner", **kw) -> JoinPlan:
    return plan_join(table(), table(n=8), "k", how, left_files=side(4), right_files=side(8), **kw)


def test_plan_is_plain_data():
    plan = bucketed_plan("left_outer")
    assert plan.strategy == "bucketed" and plan.how == "left"
    assert "4 and 8 buckets" in plan.reason and "i, i+4" in plan.reason
    assert len(plan.groups) == 4 and plan.left_files == 4 and plan.right_files == 8
    assert plan.left_bytes == 10 + 20 + 30 + 40
    copy = pickle.loads(pickle.dumps(plan))
    assert copy == plan
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["strategy"] == "bucketed" and data["totals"]["groups"] == 4
    assert data["groups"][0]["right_buckets"] == [3, 7]  # largest group first


def test_explain_reads_like_an_explain():
    text = str(bucketed_plan())
    assert text.splitlines()[0] == "JoinPlan: inner join on (k) of /tables/k4v2 and /tables/k8v2"
    assert "strategy: bucketed" in text
    assert "groups: 4, left 4 files" in text and "skew" in text
    assert "group 3: left buckets [3]" in text and "right buckets [3, 7]" in text
    assert "hash join (buckets are not sorted on both sides)" in text


def test_merge_join_chosen_only_for_ascending_sort_on_a_key_pair():
    sorted_t = table(sorted_by=("k",))
    plan = plan_join(sorted_t, sorted_t, "k", left_files=side(4), right_files=side(4))
    assert plan.merge and "sorted ascending by k=k" in plan.merge_reason
    desc = table(sorted_by=("k DESC",))
    plan = plan_join(desc, desc, "k", left_files=side(4), right_files=side(4))
    assert not plan.merge and "descending" in plan.merge_reason
    by_a = table(sorted_by=("a",))
    plan = plan_join(by_a, by_a, "k", left_files=side(4), right_files=side(4))
    assert not plan.merge and "not a join key pair" in plan.merge_reason
