"""Re-bucketing: the supported way to change how a table's rows are hashed (``bucketkit.rebucket``).

A table's bucket columns, count and ``bucketing_version`` say where every row sits; changing them
in the metastore alone (``ALTER TABLE ... SET TBLPROPERTIES``, a table re-created over the same
directory) makes the files lie, and bucketkit then reads the table unbucketed with the reason
(docs/sql.md, "Which tables"). :func:`rebucket` rewrites the rows in the new layout instead:

1. the table's rows are read as they are (every bucket, never pruned, so wherever they sit);
2. they are written in the new layout into a new version of the table's directory and switched in
   whole by bucketkit's commit (:func:`bucketkit.write`, ``mode="overwrite"``): readers see the old
   layout or the new one, never a mix, and a failure leaves the old table;
3. for a catalog table, the metastore then gets the new ``CLUSTERED BY ... INTO n BUCKETS`` and
   ``bucketing_version`` (``io.bucketkit.spark.CatalogEdit``; Spark SQL has no statement for it).
   Between 2 and 3 the catalog and bucketkit's record of the files disagree, and readers read the
   table unbucketed: right rows, never a hash the files were not written with.

Neither Hive nor Trino can do this; by hand it is a CTAS into a new table and a rename.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Sequence

from bucketkit.errors import BucketkitError, CommitError, InsideLayoutWarning, InvalidArgumentError
from bucketkit.layout.metadata import spelled_as
from bucketkit.writing.commit import unmovable
from bucketkit.spark.driver import call, is_connect, refusal
from bucketkit.table import TableRef, reference_kind

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from bucketkit.writing.steps import WriteResult

__all__ = ["rebucket"]


def rebucket(spark: SparkSession, table: TableRef, *, bucketed_by: Sequence[str] | str | None = None,
             bucket_count: int | None = None, bucketing_version: int | None = None,
             sorted_by: Sequence[Any] | None = None) -> WriteResult:
    """Rewrite ``table`` with another bucketing, atomically; options not given keep the table's.

    Args:
        spark: the SparkSession (its catalog, for a catalog table name).
        table: a catalog table name (``db.t``) or a table directory with bucketkit's metadata.
        bucketed_by, bucket_count, bucketing_version, sorted_by: the new layout (``sorted_by=()``
            drops the sort).

    Returns:
        The :class:`~bucketkit.writing.steps.WriteResult` of the rewrite.

    Raises:
        InvalidArgumentError: a Hive ACID table (its files belong to Hive's transactions: compact and
            rewrite it with Hive), a table Spark's ``bucketBy`` placed (Spark's hash; rewrite it with
            Spark), or a bad option.
    """
    from bucketkit.io import spark_uri
    from bucketkit.layout.versions import TablePaths
    from bucketkit.spark.catalog import publish, resolve_table, table_location
    from bucketkit.spark.scan import scan
    from bucketkit.spark.writer import write

    current = resolve_table(spark, table)
    spec = current.spec
    if current.transactional:
        raise InvalidArgumentError(f"table {current}: a Hive ACID table; its files belong to Hive's transactions, so "
                                   f"bucketkit does not rewrite them (use Hive: CREATE TABLE ... AS SELECT, or a "
                                   f"compaction)")
    if spec.hash_family != "hive":
        raise InvalidArgumentError(f"table {current}: placed by Spark's own hash (a bucketBy table); rewrite it with "
                                   f"Spark's writer, or into a new Hive bucketed table with bucketkit.write")
    by = [bucketed_by] if isinstance(bucketed_by, str) else list(bucketed_by or spec.bucketed_by)
    types = dict(spec.columns)
    by = spelled_as(by, list(types))
    unknown = [c for c in by if c not in types]
    if unknown:
        raise InvalidArgumentError(f"bucketed_by={by!r}: {unknown} not among the table's data columns {list(types)}")
    catalog_table = isinstance(table, str) and reference_kind(table) == "catalog"
    why = (unmovable(spec.bucketed_by) or unmovable(by)) if catalog_table else None  # its CLUSTERED BY now, after
    if why is not None:  # its CLUSTERED BY could not be changed after the rewrite: refuse before it
        raise InvalidArgumentError(f"table {table}: cannot be re-bucketed in place: {why}. Nothing was written. Write "
                                   "its rows into a new table whose bucket column is named in lower case")
    rows = scan(spark, current)  # every bucket, never pruned: rows wherever they sit
    with warnings.catch_warnings():
        if catalog_table:  # written by path, but published in the metastore below: no directory-table warning
            warnings.simplefilter("ignore", InsideLayoutWarning)
        result = write(rows, by, bucket_count or spec.bucket_count, path=current.location,
                       filesystem=current.filesystem,
                       sorted_by=list(spec.sorted_by) if sorted_by is None else sorted_by,
                       partitioned_by=list(spec.partitioned_by) or None,
                       bucketing_version=bucketing_version or spec.bucketing_version, file_format=spec.file_format,
                       bucket_types={c: types[c] for c in by}, mode="overwrite")
    if catalog_table:
        # Between the switch just made and the metastore edit below, the table's record and its catalog
        # entry disagree, so Spark SQL reads it unbucketed through Spark's own relation, which Spark
        # caches with its file listing. Drop any such relation now, while the previous files are still
        # kept for readers (the commit's grace), so no later query reuses a listing of files about to go.
        spark.catalog.refreshTable(table)
        paths = TablePaths.at(current.filesystem, current.location)
        if paths.inside:  # committed inside the table (no renames, or none beside it): move the metastore there
            publish(spark, table, spark_uri(current.filesystem, paths.version(result.write_id),
                                            location=table_location(spark, table)))
        new = result.spec
        try:
            if is_connect(spark):  # the same CatalogEdit, asked through SQL (io.bucketkit.spark.DriverCalls)
                call(spark, "bucketkit_set_bucketing", table, list(new.bucketed_by), new.bucket_count,
                     [s.column for s in new.sorted_by], new.bucketing_version)
            else:
                spark.sparkContext._jvm.io.bucketkit.spark.CatalogEdit.setBucketing(
                    spark._jsparkSession, table, _strings(spark, new.bucketed_by), new.bucket_count,
                    _strings(spark, [s.column for s in new.sorted_by]), new.bucketing_version)
        except BucketkitError:
            raise
        except Exception as exc:  # py4j's and Connect's errors alike
            raise CommitError(
                f"table {table}: its files are rewritten in {new.bucket_count} buckets by {list(new.bucketed_by)} "
                f"(write {result.write_id}), but the metastore's CLUSTERED BY could not be changed ({refusal(exc)}): Spark SQL "
                "and bucketkit read it unbucketed (bucketkit's record and the catalog disagree) until it is set: "
                f"ALTER TABLE {table} CLUSTERED BY ({', '.join(new.bucketed_by)}) INTO {new.bucket_count} BUCKETS, "
                "and its bucketing_version property") from exc
    return result


def _strings(spark: Any, values: Sequence[str]) -> Any:
    """A Java ``String[]`` of ``values``."""
    array = spark.sparkContext._gateway.new_array(spark.sparkContext._jvm.java.lang.String, len(values))
    for i, v in enumerate(values):
        array[i] = v
    return array
