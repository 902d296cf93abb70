"""How bucketkit's own Spark tasks are counted and packed (bucketkit.spark.tasks; no Spark needed)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from bucketkit.spark.tasks import JOIN_TASK_BYTES, SCAN_TASK_BYTES, pack, task_count


def scan_tasks(units, total, parallelism):
    return task_count(units, total, parallelism, SCAN_TASK_BYTES)


def test_units_are_packed_one_task_per_core_until_tasks_grow_large():
    assert scan_tasks(64, 348 * 2**20, 2) == 2                      # the benchmark's 10M rows: a task per core
    assert scan_tasks(64, 40 * SCAN_TASK_BYTES, 2) == 40            # large tables: about SCAN_TASK_BYTES a task
    assert scan_tasks(4096, 10**6 * SCAN_TASK_BYTES, 8) == 4096     # never more tasks than units
    assert scan_tasks(3, 0, 8) == 3 and scan_tasks(1, 10, 2) == 1
    assert task_count(100, 0, 2, JOIN_TASK_BYTES, per_core=2) == 4  # a join: two tasks a core


@given(st.lists(st.integers(0, 10**6), max_size=40), st.integers(1, 12))
def test_packing_keeps_every_item_once_heaviest_tasks_first_and_balanced(weights, tasks):
    items = list(range(len(weights)))
    packs = pack(items, weights, tasks)
    assert sorted(i for p in packs for i in p) == items
    assert len(packs) <= tasks and all(packs)
    loads = [sum(weights[i] + 1 for i in p) for p in packs]
    assert loads == sorted(loads, reverse=True)
    if packs:  # LPT: the lightest task is never lighter than the heaviest minus its largest item
        heaviest = packs[0]
        assert loads[-1] >= loads[0] - max(weights[i] + 1 for i in heaviest) or len(packs) < min(tasks, len(items))
