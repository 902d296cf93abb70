"""The per-group join kernel without Spark: hash join and streaming merge join vs a reference join."""

from __future__ import annotations

import os
import random

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from bucketkit.errors import CorruptTableError, InvalidArgumentError
from bucketkit.pruning.filters import normalize as normalize_filters
from bucketkit.joins.execute import MergeStats, build_exec, execute_group, key_matches, merge_join
from bucketkit.joins.plan import JOIN_TYPES, SideFiles, plan_join

from support.joins import reference_join, shape, sort_key, write_table

COLUMNS = {"k": "bigint", "s": "string", "v": "double"}


def rows_of(keys, tag):
    return {"k": keys, "s": [f"{tag}{i}" for i in range(len(keys))], "v": [float(i) for i in range(len(keys))]}


def run(lt, lfiles, rt, rfiles, on, how, columns=None, left_filters=None, right_filters=None, batch_rows=65536,
        stats=None):
    sides = []
    for t, files, filters in ((lt, lfiles, left_filters), (rt, rfiles, right_filters)):
        sides.append(SideFiles(t.spec.bucket_count, None, {b: tuple(f) for b, f in files.items()},
                               residual=normalize_filters(filters)))
    plan = plan_join(lt, rt, on, how, left_filters=left_filters, right_filters=right_filters,
                           left_files=sides[0], right_files=sides[1])
    assert plan.strategy == "bucketed", plan.reason
    ex = build_exec(plan, columns, batch_rows=batch_rows)
    batches = [b for g in plan.groups for b in execute_group(ex, g, stats)]
    table = pa.Table.from_batches(batches, schema=ex.schema)
    return plan, ex, table


def expected(lrows, rrows, lkeys, rkeys, how, ex, lfilter=lambda r: True, rfilter=lambda r: True):
    left = [dict(zip(lrows, vals)) for vals in zip(*lrows.values())]
    right = [dict(zip(rrows, vals)) for vals in zip(*rrows.values())]
    pairs = reference_join([r for r in left if lfilter(r)], [r for r in right if rfilter(r)], lkeys, rkeys, how)
    return sorted(shape(pairs, ex.output, dict(zip(lkeys, rkeys))), key=sort_key)


def got(table):
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=sort_key)


keys_st = st.lists(st.one_of(st.none(), st.integers(-5, 30), st.sampled_from([7, 7, 7, 2 ** 40])), max_size=40)


@settings(max_examples=25)
@given(lkeys=keys_st, rkeys=keys_st, how=st.sampled_from(JOIN_TYPES), k=st.sampled_from([1, 2, 3]),
       flip=st.booleans())
def test_hash_kernel_matches_the_reference_join(tmp_path_factory, lkeys, rkeys, how, k, flip):
    base = tmp_path_factory.mktemp("j")
    n, m = (4, 4 * k) if not flip else (4 * k, 4)
    lrows, rrows = rows_of(lkeys, "l"), rows_of(rkeys, "r")
    lt, lf = write_table(str(base / "l"), lrows, COLUMNS, ["k"], n)
    rt, rf = write_table(str(base / "r"), rrows, COLUMNS, ["k"], m, files_per_bucket=2)
    plan, ex, table = run(lt, lf, rt, rf, "k", how)
    assert table.schema == ex.schema
    assert got(table) == expected(lrows, rrows, ["k"], ["k"], how, ex)


@pytest.mark.parametrize("how, names", [
    ("inner", ["k", "s", "v", "s", "v"]), ("left", ["k", "s", "v", "s", "v"]),
    ("right", ["k", "s", "v", "s", "v"]), ("full", ["k", "s", "v", "s", "v"]),
    ("left_semi", ["k", "s", "v"]), ("left_anti", ["k", "s", "v"]),
])
def test_using_join_output_columns_and_key_source(tmp_path, how, names):
    lt, lf = write_table(str(tmp_path / "l"), rows_of([1, 2, None], "l"), COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of([2, 3, None], "r"), COLUMNS, ["k"], 2)
    _, ex, table = run(lt, lf, rt, rf, "k", how)
    assert [f.name.split("#")[0] for f in ex.schema] == names
    assert ex.schema.types[:3] == [pa.int64(), pa.string(), pa.float64()]
    keys = sorted((k for k in table.column(0).to_pylist()), key=lambda x: (x is None, x))
    assert keys == {"inner": [2], "left": [1, 2, None], "right": [2, 3, None], "full": [1, 2, 3, None, None],
                    "left_semi": [2], "left_anti": [1, None]}[how]


def test_pairs_join_keeps_both_sides_columns(tmp_path):
    lt, lf = write_table(str(tmp_path / "l"), rows_of([1, 2], "l"), COLUMNS, ["k"], 2)
    rcols = {"id": "bigint", "w": "string"}
    rt, rf = write_table(str(tmp_path / "r"), {"id": [2, 2, 5], "w": ["a", "b", "c"]}, rcols, ["id"], 4)
    _, ex, table = run(lt, lf, rt, rf, [("k", "id")], "full")
    assert ex.schema.names == ["k", "s", "v", "id", "w"]
    assert got(table) == sorted([(1, "l0", 0.0, None, None), (2, "l1", 1.0, 2, "a"), (2, "l1", 1.0, 2, "b"),
                                 (None, None, None, 5, "c")], key=sort_key)


def test_columns_prune_what_is_read(tmp_path):
    lt, lf = write_table(str(tmp_path / "l"), rows_of([1, 2, 2], "l"), COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of([2, 3], "r"), COLUMNS, ["k"], 2)
    _, ex, table = run(lt, lf, rt, rf, "k", "inner", columns=[("right", "v"), "k"])
    assert ex.left.columns == ("k",) and ex.right.columns == ("k", "v")
    assert ex.schema.names == ["v", "k"]
    assert got(table) == [(0.0, 2), (0.0, 2)]
    _, ex, _ = run(lt, lf, rt, rf, "k", "inner", columns=["s"])
    assert ex.schema.names == ["s", "s#2"]
    with pytest.raises(InvalidArgumentError, match="nope"):
        run(lt, lf, rt, rf, "k", "inner", columns=["nope"])


@pytest.mark.parametrize("how", JOIN_TYPES)
def test_filters_apply_to_each_side_before_the_join(tmp_path, how):
    lrows, rrows = rows_of([1, 2, 3, None, 5], "l"), rows_of([1, 2, 3, 3, None], "r")
    lt, lf = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 4)
    rt, rf = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 4)
    lfil, rfil = [("v", ">=", 1.0)], [[("k", "in", [1, 3, None])], [("s", "is null")]]
    _, ex, table = run(lt, lf, rt, rf, "k", how, left_filters=lfil, right_filters=rfil)
    assert got(table) == expected(lrows, rrows, ["k"], ["k"], how, ex, lambda r: r["v"] >= 1.0,
                                  lambda r: r["k"] in (1, 3))


def test_not_in_follows_sql_for_nulls(tmp_path):
    lrows = rows_of([1, 2, None], "l")
    lt, lf = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of([], "r"), COLUMNS, ["k"], 2)
    _, _, table = run(lt, lf, rt, rf, "k", "left_anti", left_filters=[("k", "not in", [1])])
    assert table.column("k").to_pylist() == [2]
    _, _, table = run(lt, lf, rt, rf, "k", "left_anti", left_filters=[("k", "not in", [1, None])])
    assert table.num_rows == 0


def test_partitioned_sides_add_partition_columns(tmp_path):
    cols = {"k": "bigint", "v": "double", "dt": "date"}
    lrows = {"k": [1, 2, 3, 4], "v": [1.0, 2.0, 3.0, 4.0], "dt": [pa.scalar(0, pa.date32()).as_py()] * 2 + [None] * 2}
    lt, lf = write_table(str(tmp_path / "l"), lrows, cols, ["k"], 2, partitioned_by=["dt"], partition_types=["date"])
    rt, rf = write_table(str(tmp_path / "r"), rows_of([1, 3, 4], "r"), COLUMNS, ["k"], 2)
    _, ex, table = run(lt, lf, rt, rf, "k", "inner", columns=["k", "dt", "s"],
                       left_filters=[("dt", "is null")])
    assert ex.schema.field("dt").type == pa.date32()
    assert got(table) == [(3, None, "r1"), (4, None, "r2")]


def test_parquet_sides(tmp_path):
    lrows, rrows = rows_of(list(range(200)), "l"), rows_of(list(range(100, 300)), "r")
    lt, lf = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 4, file_format="parquet")
    rt, rf = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 4, file_format="parquet")
    _, ex, table = run(lt, lf, rt, rf, "k", "full")
    assert got(table) == expected(lrows, rrows, ["k"], ["k"], "full", ex)


# -- streaming merge join ------------------------------------------------------------------------------

@settings(max_examples=20)
@given(lkeys=keys_st, rkeys=keys_st, how=st.sampled_from(JOIN_TYPES), batch=st.sampled_from([1, 3, 8]))
def test_merge_kernel_matches_the_reference_join(tmp_path_factory, lkeys, rkeys, how, batch):
    base = tmp_path_factory.mktemp("m")
    lrows, rrows = rows_of(lkeys, "l"), rows_of(rkeys, "r")
    lt, lf = write_table(str(base / "l"), lrows, COLUMNS, ["k"], 2, sorted_by=["k"], file_format="parquet")
    rt, rf = write_table(str(base / "r"), rrows, COLUMNS, ["k"], 4, sorted_by=["k"], file_format="parquet",
                         files_per_bucket=2)
    plan, ex, table = run(lt, lf, rt, rf, "k", how, batch_rows=batch)
    assert plan.merge and ex.merge
    assert got(table) == expected(lrows, rrows, ["k"], ["k"], how, ex)


def test_merge_join_memory_is_bounded_by_batches_not_bucket_size(tmp_path):
    n = 20_000
    rng = random.Random(1)
    lrows = rows_of([rng.randrange(n) for _ in range(n)], "l")
    rrows = rows_of([rng.randrange(n) for _ in range(n)], "r")
    lt, lf = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 1, sorted_by=["k"], file_format="parquet")
    rt, rf = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 1, sorted_by=["k"], file_format="parquet")
    stats = MergeStats()
    plan, ex, table = run(lt, lf, rt, rf, "k", "full", batch_rows=500, stats=stats)
    assert plan.merge
    # Two files read 500 rows at a time (parquet row groups of 50): a few batches held, never a bucket.
    assert stats.max_buffered_rows <= 4 * 500 < n
    assert stats.chunks_joined > 20
    hashed = build_exec(plan.__class__(**{**plan.__dict__, "merge": False}), batch_rows=500)
    whole = pa.Table.from_batches([b for g in plan.groups for b in execute_group(hashed, g)])
    assert got(table) == got(whole)


def test_merge_join_detects_unsorted_files(tmp_path):
    lt, lf = write_table(str(tmp_path / "l"), rows_of([3, 1, 2], "l"), COLUMNS, ["k"], 1, file_format="parquet")
    sorted_t = lt.__class__(lt.location, lt.spec.with_(sorted_by=("k",)), lt.filesystem)
    plan = plan_join(sorted_t, sorted_t, "k", left_files=SideFiles(1, None, {0: tuple(lf[0])}),
                           right_files=SideFiles(1, None, {0: tuple(lf[0])}))
    ex = build_exec(plan, batch_rows=1)
    with pytest.raises(CorruptTableError, match="not sorted ascending by k"):
        list(merge_join(plan.groups[0].left_files, plan.groups[0].right_files, ex))


def test_a_file_holding_another_buckets_rows_fails_the_join_naming_it(tmp_path):
    """A table no bucketkit commit recorded (no manifest: its placement is checked as it is read) joins by bucket
    while every row is in its bucket's file; once bucket 1's file is renamed as a second file of bucket 0 (what a
    writer that never hashed leaves), the join re-hashes the rows it reads and fails naming that file, instead of
    pairing its rows with bucket 0 of the other side and missing their partners."""
    lt, lf = write_table(str(tmp_path / "l"), rows_of(list(range(40)), "l"), COLUMNS, ["k"], 4)
    rt, _ = write_table(str(tmp_path / "r"), rows_of(list(range(40)), "r"), COLUMNS, ["k"], 4)
    plan = plan_join(lt, rt, "k")
    assert plan.strategy == "bucketed" and all(u.checked for g in plan.groups for u in g.left_files), plan.reason
    assert "placement: checked row by row: no _bucketkit_files.json" in plan.explain()
    ex = build_exec(plan)
    assert sum(b.num_rows for g in plan.groups for b in execute_group(ex, g)) == 40
    moved = lf[1][0].path
    os.rename(moved, os.path.join(os.path.dirname(moved), "000000_0_copy_1"))
    plan = plan_join(lt, rt, "k")
    ex = build_exec(plan)
    with pytest.raises(CorruptTableError, match=r"000000_0_copy_1: a row with k = \d+ is in bucket 0's files, but "
                                                r".* places it in bucket 1"):
        [b for g in plan.groups for b in execute_group(ex, g)]


def test_zero_byte_files_are_empty_buckets(tmp_path):
    lt, lf = write_table(str(tmp_path / "l"), rows_of([1], "l"), COLUMNS, ["k"], 8)
    assert sum(1 for fs in lf.values() for f in fs if f.size == 0) == 7
    rt, rf = write_table(str(tmp_path / "r"), rows_of([1, 2], "r"), COLUMNS, ["k"], 8)
    _, _, table = run(lt, lf, rt, rf, "k", "full")
    assert sorted(table.column("k").to_pylist()) == [1, 2]


@settings(max_examples=40)
@given(nl=st.integers(0, 400), nr=st.integers(0, 400), span=st.integers(1, 60), nulls=st.floats(0, 0.5),
       how=st.sampled_from(JOIN_TYPES), key_type=st.sampled_from([pa.int64(), pa.int32(), pa.int8(), pa.date32()]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_integer_key_fast_path_equals_acero(nl, nr, span, nulls, how, key_type, seed):
    """The numba pair-finding path and Acero's hash join give the same rows, for every join type."""
    import numpy as np

    from bucketkit.joins import execute as joinexec

    rng = np.random.default_rng(seed)

    def side(n, tag):
        keys = rng.integers(-span, span, n)
        k = pa.array(keys, mask=rng.random(n) < nulls)
        k = k.cast(pa.int32()).view(key_type) if key_type == pa.date32() else k.cast(key_type)
        return pa.table({"k": k,
                         "v": pa.array([f"{tag}{i}" for i in range(n)], pa.string())})

    left, right = side(nl, "l"), side(nr, "r")

    class Ex:  # the fields of JoinExec that hash_join reads
        left_keys, right_keys = ("k",), ("k",)

    Ex.how = how
    out = [("left", "k"), ("left", "v")] if how in ("left_semi", "left_anti") else \
        [("coalesce" if how == "full" else ("right" if how == "right" else "left"), "k"), ("left", "v"), ("right", "v")]
    Ex.output = tuple(out)
    Ex.schema = pa.schema([("k", key_type)] + [(f"v{i}", pa.string()) for i in range(len(out) - 1)])
    fast = joinexec._integer_key_join(left, right, Ex)
    assert fast is not None
    original, joinexec._integer_key_join = joinexec._integer_key_join, lambda *a: None
    try:
        slow = joinexec.hash_join(left, right, Ex)
    finally:
        joinexec._integer_key_join = original
    assert fast.schema == slow.schema
    rows = lambda t: sorted(map(tuple, (r.values() for r in t.to_pylist())), key=repr)  # noqa: E731
    assert rows(fast) == rows(slow)


@settings(max_examples=25)
@given(lkeys=keys_st, rkeys=keys_st, k=st.sampled_from([1, 2]), filtered=st.booleans())
def test_key_matches_counts_the_pairs_arrows_join_makes(tmp_path_factory, lkeys, rkeys, k, filtered):
    """key_matches, which picks bucketkit.join's strategy, against Arrow's own inner join of the same rows
    (filters applied): summed over the groups, the matching pairs (NULLs match nothing)."""
    base = tmp_path_factory.mktemp("m")
    lrows, rrows = rows_of(lkeys, "l"), rows_of(rkeys, "r")
    lt, lf = write_table(str(base / "l"), lrows, COLUMNS, ["k"], 4)
    rt, rf = write_table(str(base / "r"), rrows, COLUMNS, ["k"], 4 * k, files_per_bucket=2)
    rfilter = [("v", "<", 20.0)] if filtered else None
    sides = [SideFiles(t.spec.bucket_count, None, {b: tuple(f) for b, f in files.items()},
                       residual=normalize_filters(flt)) for t, files, flt in ((lt, lf, None), (rt, rf, rfilter))]
    plan = plan_join(lt, rt, "k", "inner", right_filters=rfilter, left_files=sides[0], right_files=sides[1])
    schema = pa.schema([("k", pa.int64()), ("s", pa.string()), ("v", pa.float64())])
    left, right = pa.table(lrows, schema=schema), pa.table(rrows, schema=schema)
    right = right.filter(pa.compute.less(right["v"], 20.0)) if filtered else right
    assert sum(key_matches(plan, g)[1] for g in plan.groups) == left.join(right, "k", join_type="inner").num_rows


def test_key_matches_scales_a_sample_of_the_larger_side(tmp_path):
    """A side over sample_rows is sampled: 40 rows of key 7 against 3 rows of it, 4 sampled, 4 x 3 matches
    scaled by 40 / 4 -- the 120 pairs of the join; a side with a filter is not."""
    lt, lf = write_table(str(tmp_path / "l"), rows_of([7] * 40, "l"), COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of([7, 7, 7, 1], "r"), COLUMNS, ["k"], 2)
    sides = [SideFiles(2, None, {b: tuple(f) for b, f in files.items()}) for files in (lf, rf)]
    plan = plan_join(lt, rt, "k", "inner", left_files=sides[0], right_files=sides[1])
    group = next(g for g in plan.groups if g.left_files)
    assert key_matches(plan, group, sample_rows=4) == (43, 120) == key_matches(plan, group)  # key 1: another bucket
    # a filtered side is read whole: 4 of its 40 rows pass, 4 x 3 pairs (a sample of 2 passing rows, scaled by the
    # footer's 40, would say 120)
    filtered = plan_join(lt, rt, "k", "inner", left_filters=[("v", "<", 4.0)], left_files=SideFiles(
        2, None, sides[0].files, residual=normalize_filters([("v", "<", 4.0)])), right_files=sides[1])
    group = next(g for g in filtered.groups if g.left_files)
    assert key_matches(filtered, group, sample_rows=2) == (7, 12)
    with pytest.raises(InvalidArgumentError, match="one key pair"):
        key_matches(plan_join(lt, rt, ["k", "s"], "inner", left_files=sides[0], right_files=sides[1]), group)
