"""Hive ACID plans executed by Spark: one task per (partition, bucket) read unit.

Spark has no reader for Hive's ACID files (base + deltas − delete events, original files with
synthetic row ids), so each unit of an ACID :class:`~bucketkit.pruning.ScanPlan` is read by
:func:`bucketkit.acidplan.read_unit` (pyarrow) inside a Spark task: ``mapInArrow`` over a
``spark.range`` with one row, and one partition, per unit. The rows come out as the table's
columns (data columns, then partition columns as typed constants), plus Hive's ``row__id`` on
request. Files Hive 3 would refuse (ACID v1) are refused on the driver, before any task runs, with
:class:`~bucketkit.errors.AcidStateError` naming the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from bucketkit import acidplan
from bucketkit.pruning import ScanPlan
from bucketkit.table import BucketedTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["acid_schema", "read_acid", "ROW_ID_DDL"]

#: Hive's ``ROW__ID`` as Spark sees it (``row__id``, the name Hive's Spark integrations use).
ROW_ID_DDL = "struct<writeid:bigint,bucketid:int,rowid:bigint>"


def acid_schema(table: BucketedTable, row_id: bool) -> Any:
    """The Spark schema of an ACID read: the table's columns, then ``row__id`` on request."""
    from pyspark.sql.types import StructField, _parse_datatype_string

    from bucketkit.spark.scan import spark_schema

    schema = spark_schema(table)
    if row_id:
        schema = schema.add(StructField("row__id", _parse_datatype_string(ROW_ID_DDL), True))
    return schema


def unit_reader(table: BucketedTable, kind: str, ids: Any, target: Any, row_id: bool) -> Any:
    """``read(unit) -> Iterator[pa.RecordBatch]``: a picklable reader of one unit of an ACID plan
    (of kind ``kind`` and snapshot ``ids``) as ``target`` (an Arrow schema); what both ``scan``
    and the ``bucketkit`` data source run in their tasks."""
    fs, spec = table.filesystem, table.spec
    names = [n for n, _ in spec.columns]
    fmt = spec.file_format

    def read(unit: acidplan.ReadUnit) -> Iterator[Any]:
        data = acidplan.read_unit(fs, unit.path, unit.state, unit.bucket, kind=kind, write_ids=ids, row_id=row_id,
                                  file_format=fmt)
        yield from acidplan.conform(data, target, names, spec.partitioned_by, unit.values).to_batches(65536)

    return read


def read_acid(spark: SparkSession, plan: ScanPlan, table: BucketedTable, *, row_id: bool = False) -> DataFrame:
    """The rows of an ACID plan's snapshot as a DataFrame (filters are the caller's to apply)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if row_id and plan.acid_kind != acidplan.FULL:
        raise_insert_only_row_id(table)
    acidplan.check_files(table.filesystem, plan)
    schema = acid_schema(table, row_id)
    units = acidplan.units(plan)
    if not units:
        return spark.createDataFrame([], schema)
    read = unit_reader(table, plan.acid_kind, plan.write_ids, to_arrow_schema(schema, timezone="UTC"), row_id)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                yield from read(units[i])

    return spark.range(0, len(units), 1, numPartitions=len(units)).mapInArrow(run, schema)


def raise_insert_only_row_id(table: BucketedTable) -> None:
    from bucketkit.errors import InvalidArgumentError

    raise InvalidArgumentError(f"row_id=True: {table} is an insert-only Hive ACID table; Hive gives ROW__ID "
                               f"identities only to full-ACID tables")
