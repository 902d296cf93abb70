"""Joins above their memory budget (grace hash join), memory estimates, and the join's read errors.

The reference is the nested-loop SQL join of support.joins (independent of the kernels); budgets of a
few KiB force the spilling path with many parts and recursion on tables of tens of rows.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pyarrow.orc as orc
import pytest
from hypothesis import given, settings, strategies as st

from bucketkit.joins import execute as joinexec
from bucketkit.errors import ConcurrentModificationError, InvalidArgumentError, JoinMemoryError
from bucketkit.joins.execute import build_exec, execute_group
from bucketkit.joins.memory import Budget, parse_size, task_budget, working_set
from bucketkit.joins.plan import JOIN_TYPES, SideFiles, plan_join
from bucketkit.joins.spill import SpillStats, grace_join

from support.joins import reference_join, shape, sort_key, write_table

COLUMNS = {"k": "bigint", "s": "string", "v": "double"}


def rows_of(keys, tag, key="k"):
    return {key: keys, "s": [f"{tag}{i}" for i in range(len(keys))], "v": [float(i) for i in range(len(keys))]}


def plan_of(lt, lf, rt, rf, on, how):
    sides = [SideFiles(t.spec.bucket_count, None, {b: tuple(f) for b, f in files.items()})
             for t, files in ((lt, lf), (rt, rf))]
    plan = plan_join(lt, rt, on, how, left_files=sides[0], right_files=sides[1])
    assert plan.strategy == "bucketed", plan.reason
    return plan


def run(plan, budget, spill_dir=None, columns=None):
    ex = build_exec(plan, columns, batch_rows=7, spill_dir=spill_dir)
    stats = SpillStats()
    batches = [b for g in plan.groups for b in execute_group(ex, g, stats, Budget(budget, "test budget"))]
    return ex, pa.Table.from_batches(batches, schema=ex.schema), stats


def expected(lrows, rrows, lkeys, rkeys, how, ex):
    left = [dict(zip(lrows, vals)) for vals in zip(*lrows.values())]
    right = [dict(zip(rrows, vals)) for vals in zip(*rrows.values())]
    pairs = reference_join(left, right, lkeys, rkeys, how)
    return sorted(shape(pairs, ex.output, dict(zip(lkeys, rkeys))), key=sort_key)


def got(table):
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=sort_key)


def one_key_need(lkeys, rkeys, width=60):
    """Working set of the rows of the most frequent non-NULL key, both sides (a generous width)."""
    counts = {}
    for k in [*lkeys, *rkeys]:
        if k is not None:
            counts[k] = counts.get(k, 0) + 1
    top = max(counts.values(), default=0)
    return working_set(top * width, top * width, top, top)


keys_st = st.lists(st.one_of(st.none(), st.integers(-50, 50), st.sampled_from([7, 7, 2 ** 40])), max_size=60)


@settings(max_examples=40)
@given(lkeys=keys_st, rkeys=keys_st, how=st.sampled_from(JOIN_TYPES), budget=st.integers(200, 6000),
       key_type=st.sampled_from(["bigint", "string"]))
def test_spilled_join_matches_the_reference_join(tmp_path_factory, lkeys, rkeys, how, budget, key_type):
    base = tmp_path_factory.mktemp("spill")
    conv = (lambda k: k) if key_type == "bigint" else (lambda k: None if k is None else f"key{k}")
    lrows, rrows = rows_of([conv(k) for k in lkeys], "l"), rows_of([conv(k) for k in rkeys], "r")
    cols = {**COLUMNS, "k": key_type}
    lt, lf = write_table(str(base / "l"), lrows, cols, ["k"], 2)
    rt, rf = write_table(str(base / "r"), rrows, cols, ["k"], 4, files_per_bucket=2)
    plan = plan_of(lt, lf, rt, rf, "k", how)
    budget = max(budget, 4 * one_key_need(lkeys, rkeys))  # never below what one key value needs
    ex, table, stats = run(plan, budget, spill_dir=str(base))
    assert got(table) == expected(lrows, rrows, ["k"], ["k"], how, ex)
    if any(ex.working_set(g) > budget for g in plan.groups):
        assert stats.parts_joined >= 4
    assert not [p for p in os.listdir(base) if p.startswith("bucketkit-join-")]  # spill files removed


@pytest.mark.parametrize("how", JOIN_TYPES)
def test_tiny_budget_splits_into_many_parts_and_recurses(tmp_path, how):
    lkeys = [i % 300 for i in range(600)] + [None] * 5
    rkeys = [i % 400 for i in range(0, 800, 3)] + [None] * 3
    lrows, rrows = rows_of(lkeys, "l"), rows_of(rkeys, "r")
    lt, lf = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 2)
    plan = plan_of(lt, lf, rt, rf, "k", how)
    ex = build_exec(plan, batch_rows=50)
    stats = SpillStats()
    budget = Budget(3000, "test budget")
    # An estimate far below the truth: the first split is too coarse, so parts must be split again.
    batches = [t for g in plan.groups for t in grace_join(
        lambda a, b: joinexec.hash_join(a, b, ex), ex.left.stream(g.left_files, 50), ex.right.stream(g.right_files, 50),
        (ex.left.read_schema, ex.right.read_schema), (ex.left_keys, ex.right_keys), budget=budget, needed=3000,
        what="test group", directory=str(tmp_path), stats=stats)]
    table = pa.concat_tables(batches) if batches else ex.schema.empty_table()
    assert got(table) == expected(lrows, rrows, ["k"], ["k"], how, ex)
    assert stats.max_level >= 1 and stats.parts_joined >= 20
    assert stats.max_part_working_set <= budget.bytes


def test_two_key_join_spills_exactly(tmp_path):
    cols = {"a": "int", "b": "string", "v": "double"}
    lrows = {"a": [i % 5 for i in range(120)], "b": [f"x{i % 7}" if i % 11 else None for i in range(120)],
             "v": [float(i) for i in range(120)]}
    rrows = {"a": [i % 4 for i in range(90)], "b": [f"x{i % 9}" for i in range(90)], "v": [float(-i) for i in range(90)]}
    lt, lf = write_table(str(tmp_path / "l"), lrows, cols, ["a"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rrows, cols, ["a"], 2)
    for how in ("full", "left_anti"):
        plan = plan_of(lt, lf, rt, rf, ["a", "b"], how)
        ex, table, stats = run(plan, 4000)
        assert stats.parts_joined > 2
        assert got(table) == expected(lrows, rrows, ["a", "b"], ["a", "b"], how, ex)


def test_one_key_above_the_budget_fails_with_the_budget_group_and_remedy(tmp_path):
    lt, lf = write_table(str(tmp_path / "l"), rows_of([7] * 400 + list(range(50)), "l"), COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of([7] * 300, "r"), COLUMNS, ["k"], 2)
    plan = plan_of(lt, lf, rt, rf, "k", "inner")
    with pytest.raises(JoinMemoryError) as err:
        run(plan, 5000)
    text = str(err.value)
    assert "4.9 KiB (test budget)" in text and "bucket group" in text and "left buckets" in text
    assert "one join key value" in text and "spark.executor.pyspark.memory" in text


def test_memory_error_in_the_kernel_becomes_the_budget_error(tmp_path, monkeypatch):
    lt, lf = write_table(str(tmp_path / "l"), rows_of([1, 2, 3], "l"), COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of([2, 3], "r"), COLUMNS, ["k"], 2)
    plan = plan_of(lt, lf, rt, rf, "k", "inner")

    def fail(*args):
        raise pa.ArrowMemoryError("realloc of size 4194304 failed")

    monkeypatch.setattr(joinexec, "_integer_key_join", fail)
    with pytest.raises(JoinMemoryError, match=r"realloc of size 4194304 failed.*Remedy"):
        run(plan, 10 ** 9)


def test_a_file_that_vanished_after_planning_is_a_concurrent_modification(tmp_path):
    lt, lf = write_table(str(tmp_path / "l"), rows_of(list(range(20)), "l"), COLUMNS, ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of(list(range(20)), "r"), COLUMNS, ["k"], 2)
    plan = plan_of(lt, lf, rt, rf, "k", "inner")
    gone = plan.groups[0].right_files[0].path
    os.remove(gone)
    with pytest.raises(ConcurrentModificationError, match="overwritten while the join read it; run the join again") \
            as err:
        run(plan, 10 ** 9)
    assert gone in str(err.value) and str(tmp_path / "r") in str(err.value)


def test_plan_estimates_decoded_bytes_from_footers(tmp_path):
    n = 5000
    lt, lf = write_table(str(tmp_path / "l"), {"k": list(range(n)), "v": [0.5] * n}, {"k": "bigint", "v": "double"},
                         ["k"], 2)
    rt, rf = write_table(str(tmp_path / "r"), rows_of(list(range(n)), "r"), COLUMNS, ["k"], 2)
    plan = plan_of(lt, lf, rt, rf, "k", "inner")
    for g in plan.groups:
        decoded = sum(orc.read_table(f.path).nbytes for f in g.left_files if f.size)
        assert g.left_memory == pytest.approx(decoded, rel=0.02)  # fixed widths: footer rows x 16 bytes
        rows = sum(orc.ORCFile(f.path).nrows for f in g.right_files if f.size)
        assert sum(f.rows for f in g.right_files if f.size) == rows
        assert g.right_memory > g.right_bytes  # decoded, not compressed file bytes
    assert "memory: about" in plan.explain() and "in memory" in plan.explain()
    assert plan.to_dict()["totals"]["memory_estimate"] == plan.memory


def test_parse_size_follows_sparks_units():
    assert parse_size("600m") == 600 * 2 ** 20 and parse_size("2g") == 2 ** 31 and parse_size("512") == 512 * 2 ** 20
    assert parse_size("64k") == 65536 and parse_size("100b") == 100 and parse_size("1.5GiB") == 3 * 2 ** 29
    with pytest.raises(InvalidArgumentError, match="spark.bucketkit.join.memory='lots'"):
        parse_size("lots")


def test_budget_follows_an_address_space_cap():
    code = textwrap.dedent("""
        import resource
        from bucketkit.joins.memory import task_budget
        with open('/proc/self/status') as f:
            vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith('VmSize:'))
        cap = vm + 300 * 2 ** 20
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
        b = task_budget(None)
        print(b.bytes, cap - vm, b.source)
        print(task_budget(10 * 2 ** 20).bytes)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYSPARK_EXECUTOR_MEMORY_MB": "700"})
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    got_bytes, free, source = first.split(" ", 2)
    assert 0 < int(got_bytes) < int(free)
    assert "spark.executor.pyspark.memory gives each Python worker 700 MiB" in source
    assert int(second) == 10 * 2 ** 20  # a configured budget below the cap is kept
    assert task_budget(None).bytes == 2 ** 29  # uncapped here: bucketkit's default


def test_footers_that_undercount_switch_to_spilling_while_reading(tmp_path):
    from dataclasses import replace

    lrows, rrows = rows_of([i % 97 for i in range(900)], "l"), rows_of([i % 89 for i in range(700)], "r")
    lt, lf = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 1)
    rt, rf = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 1)
    plan = plan_of(lt, lf, rt, rf, "k", "full")
    lying = tuple(replace(g, left_files=tuple(replace(f, rows=1) for f in g.left_files),
                          right_files=tuple(replace(f, rows=1) for f in g.right_files)) for g in plan.groups)
    plan = replace(plan, groups=lying)
    ex = build_exec(plan, batch_rows=64)
    assert all(ex.working_set(g) < 20_000 for g in plan.groups)  # the estimate says: fits in memory
    stats = SpillStats()
    batches = [b for g in plan.groups for b in execute_group(ex, g, stats, Budget(20_000, "test budget"))]
    assert stats.parts_joined >= 4  # reading found out, and the group was joined in parts
    assert got(pa.Table.from_batches(batches, schema=ex.schema)) == expected(lrows, rrows, ["k"], ["k"], "full", ex)
