"""The ``bucketkit`` Spark data source: ``spark.read.format("bucketkit").load(path)``.

A Python data source (``pyspark.sql.datasource``). Spark hands the ``.where(...)`` filters it can
push down to :meth:`BucketkitReader.pushFilters`; the ones pruning understands (``=``, ``<=>``,
``IN``, ``IS [NOT] NULL``, comparisons, ``NOT`` of those) become the scan's filters, and the reader
plans with :func:`bucketkit.pruning.plan.plan_scan`, so only the selected partitions are listed and only
the selected buckets' files become input partitions (one per file). All filters are handed back to
Spark, which applies them to the rows read: pruning works at file granularity. Push-down needs
``spark.sql.python.filterPushdown.enabled=true`` (set by :func:`bucketkit.get_session` and
:func:`bucketkit.spark.session.configure`).

Options: ``path`` (via ``load``); for a table without bucketkit metadata ``bucketed_by``
(``"a,b"``), ``bucket_count``, ``bucketing_version`` (or ``hash_family=spark``), ``bucket_types`` (``"bigint,string"``),
``partitioned_by``, ``partition_types``, ``columns`` (``"k bigint, s string"``), ``file_format``;
or ``spec`` (a :class:`~bucketkit.layout.metadata.TableSpec` as JSON), which :func:`read_table` uses for
catalog tables (with ``transactional`` and ``unbucketed_reason``).

Every input partition is one read unit of the plan (:meth:`~bucketkit.pruning.plan.ScanPlan.units`: a data
file, or one (partition, bucket) of a Hive ACID snapshot), read exactly as :func:`bucketkit.scan` reads
its units (:func:`bucketkit.spark.scan.unit_reader`); options
``write_ids`` (Hive's ValidWriteIdList string: the snapshot), ``row_id`` (``true``: add Hive's
``row__id``), ``check_buckets`` (``true``: re-hash every row of a bucketed table and fail on one
its file's bucket does not hold, as the SQL catalog asks) and ``as_of`` (a version number or an ISO
timestamp: time travel, as :func:`bucketkit.scan`'s ``as_of``). Each partition tells the JVM its bucket
(:class:`UnitPartition`), so Spark SQL joins a bucketed ACID table without an Exchange.
"""

from __future__ import annotations

import pickle
from typing import Any, Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from bucketkit.errors import InvalidArgumentError
from bucketkit.io import resolve_filesystem, split_top_level
from bucketkit.layout.metadata import TableSpec
from bucketkit.spark.types import arrow_schema
from bucketkit.spark.filters import from_pushed
from bucketkit.table import BucketedTable, open_table

__all__ = ["BucketkitDataSource", "BucketkitReader", "UnitPartition", "register_data_sources", "read_table",
           "table_from_options"]


def table_from_options(options: dict[str, str]) -> BucketedTable:
    """The table a ``bucketkit`` read names, from the data source options (keys case-insensitive)."""
    opts = {k.lower(): v for k, v in options.items()}
    if opts.get("catalog_table"):  # a session catalog table, described by the JVM catalog (SQL reads)
        import json

        from bucketkit.spark.catalog import table_from_description

        return table_from_description(json.loads(opts["catalog_table"]))
    path = opts.get("path")
    if not path:
        raise InvalidArgumentError("format('bucketkit'): give the table directory, e.g. .load('/data/t')")
    if "table" in opts:
        raise InvalidArgumentError(
            f"format('bucketkit'): option table={opts['table']!r} needs the session catalog; use "
            f"bucketkit.spark.datasource.read_table(spark, {opts['table']!r}) instead")
    if "spec" in opts:
        fs, root = resolve_filesystem(path)
        return BucketedTable(root, TableSpec.from_json(opts["spec"]), fs, unbucketed_reason=opts.get("unbucketed_reason"),
                             transactional=opts.get("transactional"))

    def listed(key: str) -> list[str] | None:
        return split_top_level(opts[key]) if opts.get(key) else None

    def number(key: str) -> int | None:
        if not opts.get(key):
            return None
        try:
            return int(opts[key])
        except ValueError:
            raise InvalidArgumentError(f"format('bucketkit'): option {key}={opts[key]!r}: expected an integer") from None

    columns = None
    if opts.get("table_columns"):
        columns = {}
        for item in split_top_level(opts["table_columns"]):
            name, _, hive_type = item.partition(" ")
            if not hive_type.strip():
                raise InvalidArgumentError(f"format('bucketkit'): option table_columns={opts['table_columns']!r}: "
                                           f"expected 'name type, ...', e.g. 'k bigint, s string'")
            columns[name.strip("`")] = hive_type.strip()
    return open_table(path, bucketed_by=listed("bucketed_by"), bucket_count=number("bucket_count"),
                      bucketing_version=number("bucketing_version"), bucket_types=listed("bucket_types"),
                      partitioned_by=listed("partitioned_by"), partition_types=listed("partition_types"),
                      table_columns=columns, file_format=opts.get("file_format"), hash_family=opts.get("hash_family"))


class UnitPartition(InputPartition):
    """One input partition: one read unit (:class:`bucketkit.units.ReadUnit`: a data file, or one bucket
    of a Hive ACID partition's snapshot), or none (Spark wants at least one partition).

    Pickled as a plain dict the JVM catalog reads (with Spark's own unpickler, Pyrolite) to key its
    scan by bucket (``io.bucketkit.acid.AcidSnapshotScan``): ``bucket`` (the hash bucket, -1 when
    this reader reads the table unbucketed), ``unbucketed`` (why, or None), ``bytes`` (the unit's
    file sizes), ``pruned`` (whether the read selected buckets), ``payload`` (the unit itself,
    pickled again for the Python reader; absent: nothing to read) and, where its rows are to be
    checked against their bucket, ``unchecked``: the partition pickled without the check, for the
    JVM to read instead where nothing relies on the buckets (a full read the plan does not key; as
    for plain tables).
    """

    def __init__(self, unit: Any = None, unbucketed: str | None = None, check: Any = None,
                 pruned: bool = False) -> None:
        self.unit, self.unbucketed, self.check, self.pruned = unit, unbucketed, check, pruned

    def __getstate__(self) -> dict:
        state = {"bucket": -1 if self.unbucketed or self.unit is None else self.unit.bucket,
                 "unbucketed": self.unbucketed, "bytes": self.unit.size if self.unit is not None else 0,
                 "pruned": self.pruned}
        if self.unit is not None:
            state["payload"] = pickle.dumps((self.unit, self.check), 5)
        if self.check is not None:
            state["unchecked"] = pickle.dumps(UnitPartition(self.unit, self.unbucketed, None, self.pruned), 5)
        return state

    def __setstate__(self, state: dict) -> None:
        self.unit, self.check = pickle.loads(state["payload"]) if "payload" in state else (None, None)
        self.unbucketed, self.pruned = state["unbucketed"], state["pruned"]


def _flag(options: dict[str, str], key: str) -> bool:
    value = {k.lower(): v for k, v in options.items()}.get(key, "false").strip().lower()
    if value not in ("true", "false"):
        raise InvalidArgumentError(f"format('bucketkit'): option {key}={value!r}: expected true or false")
    return value == "true"


class BucketkitReader(DataSourceReader):
    """Plans with bucket/partition pruning from the pushed filters; reads files with pyarrow."""

    def __init__(self, table: BucketedTable, schema: Any, write_ids: str | None = None, row_id: bool = False,
                 check_buckets: bool = False, as_of: Any = None) -> None:
        self.table, self.schema, self.write_ids, self.row_id = table, schema, write_ids, row_id
        self.check_buckets, self.as_of = check_buckets, as_of
        self.pushed: list[tuple] = []

    def pushFilters(self, filters: list) -> Iterator:
        for f in filters:
            term = from_pushed(f)
            if term is not None:
                self.pushed.append(term)
            yield f  # Spark still applies every filter: pruning selects files, not rows

    def plan(self):
        """The :class:`~bucketkit.pruning.plan.ScanPlan` for the filters pushed so far."""
        from bucketkit.pruning.plan import plan_scan

        return plan_scan(self.table, [self.pushed] if self.pushed else None, write_ids=self.write_ids,
                         as_of=self.as_of)

    def partitions(self) -> list[InputPartition]:
        plan = self.plan()
        refused = self.row_id and plan.row_id_refused()
        if refused:
            raise InvalidArgumentError(f"format('bucketkit'): option row_id=true: {refused}")
        if plan.kind is not None:
            plan.kind.check(self.table.filesystem, plan)
        check = None if plan.unbucketed or not self.check_buckets else self.table.spec
        pruned = plan.selected_buckets is not None
        parts = [UnitPartition(u, plan.unbucketed, check, pruned) for u in plan.units() if not u.empty]
        return parts or [UnitPartition()]  # Spark wants at least one partition

    def read(self, partition: InputPartition) -> Iterator:
        from bucketkit.spark.scan import unit_reader

        if partition.unit is None:
            return
        batches = unit_reader(self.table, arrow_schema(self.schema), self.row_id)(partition.unit)
        yield from batches if partition.check is None else _checked(batches, partition)


def _checked(batches: Iterator, partition: UnitPartition) -> Iterator:
    """``batches`` of one read unit, each row's bucket re-hashed and checked against the bucket its file names
    (:func:`bucketkit.units.check_placement`, what the JVM's ``BucketReadCheck`` does for plain tables)."""
    from bucketkit.units import check_placement

    for batch in batches:
        yield check_placement(batch, partition.unit, partition.check,
                              "; SET spark.bucketkit.checkBuckets=false skips this check")


class BucketkitDataSource(DataSource):
    """``spark.read.format("bucketkit")``: a bucketed table, pruned by the ``.where`` filters."""

    @classmethod
    def name(cls) -> str:
        return "bucketkit"

    def _table(self) -> BucketedTable:
        table = table_from_options(dict(self.options))
        if not table.spec.columns:
            from bucketkit.spark.scan import with_columns_from_files

            layout = table.layout()
            files = [f.path for p in layout.partition_layouts for fs in p.buckets.values() for f in fs if f.size > 0]
            table = with_columns_from_files(table, files)
        return table

    def schema(self) -> Any:
        from bucketkit.spark.scan import ROW_ID_DDL, spark_ddl

        row_id = f", `row__id` {ROW_ID_DDL}" if _flag(self.options, "row_id") else ""
        return spark_ddl(self._table()) + row_id  # DDL text: no JVM in the data source's Python worker

    def reader(self, schema: Any) -> BucketkitReader:
        opts = {k.lower(): v for k, v in self.options.items()}
        table = self._table()
        write_ids = opts.get("write_ids") or None
        if write_ids is None and opts.get("session_write_ids") and table.name:
            from bucketkit.acid.writeids import for_table

            write_ids = for_table(opts["session_write_ids"], table.name)
        as_of = opts.get("as_of") or None
        return BucketkitReader(table, schema, write_ids, _flag(self.options, "row_id"), _flag(self.options, "check_buckets"),
                               int(as_of) if as_of is not None and as_of.strip().isdigit() else as_of)


def read_table(spark: Any, name: str) -> Any:
    """``spark.read.format("bucketkit")`` for a catalog table (its spec travels as the ``spec`` option)."""
    from bucketkit.spark.catalog import load_table

    table = load_table(spark, name)
    reader = spark.read.format("bucketkit").option("spec", table.spec.to_json())
    for key in ("transactional", "unbucketed_reason"):
        if getattr(table, key):
            reader = reader.option(key, getattr(table, key))
    return reader.load(table.location)


def register_data_sources(spark: Any) -> None:
    """Register bucketkit's Python data source (format ``bucketkit``) with ``spark`` (idempotent)."""
    spark.dataSource.register(BucketkitDataSource)
