"""The ``bucketkit_join`` Python data source: one Spark partition per bucket group, joined in place.

A Python data source cannot tell Spark that two scans are co-partitioned, so the shuffle-free join
pairs the buckets itself: each input partition is one :class:`~bucketkit.joinplan.BucketGroup`,
and ``read()`` runs the pyarrow kernel (:func:`bucketkit.joinexec.execute_group`) on it. The
source does not prune columns (the API has no projection push-down), so the execution spec
carries exactly the columns :func:`bucketkit.join` was asked for.

Options: ``payload`` = base64 of the pickled ``(JoinExec, groups)``, written by :func:`payload_of`;
``parallelism`` = the session's default parallelism, for packing groups into tasks
(:func:`pack_groups`: few groups a task when the data is small, since a Spark task costs more
than joining a small group; about ``TASK_BYTES`` a task when it is large).
"""

from __future__ import annotations

import base64
import pickle
from typing import Any, Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from bucketkit.errors import InvalidArgumentError
from bucketkit.joinexec import JoinExec, execute_group
from bucketkit.joinplan import BucketGroup

__all__ = ["JoinDataSource", "NAME", "payload_of", "register", "read_groups", "pack_groups", "TASK_BYTES"]

NAME = "bucketkit_join"


def payload_of(ex: JoinExec, groups: Sequence[BucketGroup]) -> str:
    """The ``payload`` option: the execution spec and the groups, pickled and base64-encoded."""
    return base64.b64encode(pickle.dumps((ex, tuple(groups)), protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")


def _load(options: Any) -> tuple[JoinExec, tuple[BucketGroup, ...]]:
    raw = options.get("payload")
    if not raw:
        raise InvalidArgumentError(f"format {NAME!r} needs the 'payload' option; use bucketkit.join() to build it")
    return pickle.loads(base64.b64decode(raw))


# A task of few groups costs Spark more (scheduling, a Python worker round trip) than joining
# them, so groups are packed into tasks: at least this many bytes a task, when there are enough.
TASK_BYTES = 256 * 1024 * 1024


class _GroupsPartition(InputPartition):
    """Some bucket groups (carried whole, so a task needs nothing else), joined one after another."""

    def __init__(self, groups: Sequence[BucketGroup]) -> None:
        super().__init__([g.group_id for g in groups])
        self.groups = tuple(groups)


def pack_groups(groups: Sequence[BucketGroup], parallelism: int, task_bytes: int = TASK_BYTES
                ) -> list[list[BucketGroup]]:
    """Pack groups into tasks, largest first onto the lightest task (LPT scheduling).

    The task count is at least ``2 * parallelism`` (so every core stays busy while the long tasks
    run) and grows with the data so a task holds about ``task_bytes``; never more than the groups.
    """
    if not groups:
        return []
    total = sum(g.bytes for g in groups)
    tasks = min(len(groups), max(2 * max(1, parallelism), -(-total // max(1, task_bytes))))
    bins: list[list[BucketGroup]] = [[] for _ in range(tasks)]
    loads = [0] * tasks
    for g in sorted(groups, key=lambda g: (-g.bytes, g.group_id)):
        i = loads.index(min(loads))
        bins[i].append(g)
        loads[i] += g.bytes + 1
    order = sorted(range(tasks), key=lambda i: -loads[i])
    return [bins[i] for i in order if bins[i]]


class _JoinReader(DataSourceReader):
    def __init__(self, ex: JoinExec, groups: Sequence[BucketGroup], parallelism: int) -> None:
        self.ex = ex
        self.groups = tuple(groups)
        self.parallelism = parallelism

    def partitions(self) -> Sequence[InputPartition]:
        # Heaviest tasks first: with few cores the long tasks start early and the small ones fill in.
        return [_GroupsPartition(p) for p in pack_groups(self.groups, self.parallelism)] or [_GroupsPartition(())]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        for group in partition.groups:
            yield from execute_group(self.ex, group)


class JoinDataSource(DataSource):
    """``spark.read.format("bucketkit_join").option("payload", ...)``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        from pyspark.sql.pandas.types import from_arrow_schema

        ex, _ = _load(self.options)
        return from_arrow_schema(ex.schema)

    def reader(self, schema: Any) -> DataSourceReader:
        ex, groups = _load(self.options)
        return _JoinReader(ex, groups, int(self.options.get("parallelism", "2")))


def register(spark: Any) -> None:
    """Register the data source with this session (once)."""
    if getattr(spark, "_bucketkit_join_registered", False):
        return
    spark.dataSource.register(JoinDataSource)
    try:
        spark._bucketkit_join_registered = True
    except AttributeError:  # a session object that takes no attributes: register every time
        pass


def read_groups(spark: Any, ex: JoinExec, groups: Sequence[BucketGroup]) -> Any:
    """A DataFrame of the joined groups (columns named as in ``ex.schema``)."""
    register(spark)
    parallelism = spark.sparkContext.defaultParallelism
    return (spark.read.format(NAME).option("payload", payload_of(ex, groups))
            .option("parallelism", str(parallelism)).load())
