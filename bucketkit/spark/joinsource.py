"""The ``bucketkit_join`` Python data source: one Spark partition per bucket group, joined in place.

A Python data source cannot tell Spark that two scans are co-partitioned, so the shuffle-free join
pairs the buckets itself: each input partition is one :class:`~bucketkit.joinplan.BucketGroup`,
and ``read()`` runs the pyarrow kernel (:func:`bucketkit.joinexec.execute_group`) on it. The
source does not prune columns (the API has no projection push-down), so the execution spec
carries exactly the columns :func:`bucketkit.join` was asked for.

Options: ``payload`` = base64 of the pickled ``(JoinExec, groups)``, written by :func:`payload_of`.
"""

from __future__ import annotations

import base64
import pickle
from typing import Any, Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from bucketkit.errors import InvalidArgumentError
from bucketkit.joinexec import JoinExec, execute_group
from bucketkit.joinplan import BucketGroup

__all__ = ["JoinDataSource", "NAME", "payload_of", "register", "read_groups"]

NAME = "bucketkit_join"


def payload_of(ex: JoinExec, groups: Sequence[BucketGroup]) -> str:
    """The ``payload`` option: the execution spec and the groups, pickled and base64-encoded."""
    return base64.b64encode(pickle.dumps((ex, tuple(groups)), protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")


def _load(options: Any) -> tuple[JoinExec, tuple[BucketGroup, ...]]:
    raw = options.get("payload")
    if not raw:
        raise InvalidArgumentError(f"format {NAME!r} needs the 'payload' option; use bucketkit.join() to build it")
    return pickle.loads(base64.b64decode(raw))


class _GroupPartition(InputPartition):
    """One bucket group (carried whole, so a task needs nothing else)."""

    def __init__(self, group: BucketGroup) -> None:
        super().__init__(group.group_id)
        self.group = group


class _JoinReader(DataSourceReader):
    def __init__(self, ex: JoinExec, groups: Sequence[BucketGroup]) -> None:
        self.ex = ex
        self.groups = tuple(groups)

    def partitions(self) -> Sequence[InputPartition]:
        # Largest groups first: with few cores the long tasks start early and the small ones fill in.
        ordered = sorted(self.groups, key=lambda g: (-g.bytes, g.group_id))
        return [_GroupPartition(g) for g in ordered] or [_GroupPartition(BucketGroup(-1, (), (), (), ()))]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        group = partition.group
        if group.group_id < 0:
            return iter(())
        return execute_group(self.ex, group)


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
        return _JoinReader(ex, groups)


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
    return spark.read.format(NAME).option("payload", payload_of(ex, groups)).load()
