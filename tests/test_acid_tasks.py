"""How an ACID scan spreads its (partition, bucket) units over Spark tasks (no Spark needed)."""

from __future__ import annotations

from bucketkit.spark.scan import TASK_BYTES, task_count


def test_units_are_packed_one_task_per_core_until_tasks_grow_large():
    assert task_count(64, 348 * 2**20, 2) == 2                 # the benchmark's 10M rows: a task per core
    assert task_count(64, 40 * TASK_BYTES, 2) == 40            # large tables: about TASK_BYTES a task
    assert task_count(4096, 10**6 * TASK_BYTES, 8) == 4096     # never more tasks than units
    assert task_count(3, 0, 8) == 3 and task_count(1, 10, 2) == 1
