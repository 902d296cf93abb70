"""Running a bucketed join's groups as Spark tasks, with no shuffle.

Spark cannot be told that two bucketed scans are co-partitioned, so the shuffle-free join pairs the
buckets itself: the bucket groups of a :class:`~bucketkit.joins.plan.JoinPlan` are packed into tasks
(:func:`pack_groups`, :mod:`bucketkit.spark.tasks`), and each task runs the pyarrow kernel
(:func:`bucketkit.joins.execute.execute_group`) on its groups and hands the joined rows to Spark.

The execution spec carries exactly the columns :func:`bucketkit.join` was asked for, since nothing
would prune them later.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from bucketkit.joins.execute import JoinExec, execute_group
from bucketkit.spark.driver import default_parallelism
from bucketkit.spark.tasks import JOIN_TASK_BYTES, pack, run_packs, task_count
from bucketkit.joins.plan import BucketGroup

__all__ = ["pack_groups", "read_groups"]


def pack_groups(groups: Sequence[BucketGroup], parallelism: int, task_bytes: int = JOIN_TASK_BYTES,
                size: Callable[[BucketGroup], int] | None = None) -> list[list[BucketGroup]]:
    """Bucket groups packed into tasks (:func:`bucketkit.spark.tasks.pack`) weighed by ``size``
    (default: their file bytes; :func:`read_groups` passes the estimated decoded bytes of the columns
    read): at least ``2 * parallelism`` tasks, so every core stays busy while the long tasks run."""
    if not groups:
        return []
    weights = [int((size or (lambda g: g.bytes))(g)) for g in groups]
    ordered = sorted(range(len(groups)), key=lambda i: groups[i].group_id)  # ties broken by group id
    tasks = task_count(len(groups), sum(weights), parallelism, task_bytes, per_core=2)
    return pack([groups[i] for i in ordered], [weights[i] for i in ordered], tasks)


def read_groups(spark: Any, ex: JoinExec, groups: Sequence[BucketGroup]) -> Any:
    """A DataFrame of the joined groups (columns named as in ``ex.schema``), one Spark task per pack."""
    from pyspark.sql.pandas.types import from_arrow_schema

    def decoded(g: BucketGroup) -> int:
        return int(ex.side_estimate(ex.left, g.left_files)[1] + ex.side_estimate(ex.right, g.right_files)[1])

    packs = pack_groups(groups, default_parallelism(spark), size=decoded)
    return run_packs(spark, packs, lambda group: execute_group(ex, group), from_arrow_schema(ex.schema))
