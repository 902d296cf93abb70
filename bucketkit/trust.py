"""Whether bucketkit can vouch for how a table's rows are placed in its buckets (pure).

Pruning and bucket-by-bucket joins are only as right as the hash they assume. A table is read as
unbucketed -- every file, correct rows, no pruning, a shuffle join -- with the reason in the plan
whenever that hash cannot be known for sure:

* the caller gave no ``bucketing_version`` (nor ``hash_family``) for a table without bucketkit
  metadata (:attr:`~bucketkit.table.BucketedTable.unbucketed_reason`, set by ``open_table``);
* a bucket column's type has no hash in the table's family (Hive cannot bucket on timestamp or
  decimal: Trino reads such tables unbucketed too);
* the files contradict the declared family: Spark ``bucketBy`` names (``part-..._00003.c000...``)
  in a Hive-bucketed table, Hive/Trino names in a Spark ``bucketBy`` table, or files of Spark's own
  Hive ``INSERT`` (always the v1 hash) in a ``bucketing_version=2`` table.
"""

from __future__ import annotations

from bucketkit.errors import UnsupportedTypeError
from bucketkit.metadata import TableSpec
from bucketkit.naming import is_spark_hive_insert

__all__ = ["spec_doubt", "layout_doubt", "bucketing_doubt"]


def spec_doubt(spec: TableSpec) -> str | None:
    """Why the spec's own bucket function cannot exist (an unhashable bucket type), or None."""
    try:
        spec.bucket_function()
    except UnsupportedTypeError as exc:
        return f"{exc} (Trino reads such tables as unbucketed too)"
    return None


def layout_doubt(spec: TableSpec, layout) -> str | None:
    """Why the table's files contradict its declared hash family, or None.

    Args:
        spec: the declared spec.
        layout: the table's :class:`~bucketkit.layout.TableLayout` (the partitions being read).
    """
    for part in layout.partition_layouts:
        files = [f for fs in part.buckets.values() for f in fs]
        if spec.hash_family == "spark":
            if part.scheme not in ("spark", "empty"):
                return (f"{part.path}: files named by the {part.scheme} scheme (such as {files[0].name}) in a Spark "
                        "bucketBy table, whose writer names files part-..._NNNNN.c000...; which hash placed "
                        "their rows is unknown")
            continue
        spark_named = next((f for f in files if f.scheme == "spark"), None)
        if spark_named is not None:
            return (f"{spark_named.path}: a Spark bucketBy file name in a table declared with {spec.hashing}; "
                    "bucketBy places rows by Spark's Murmur3 hash (seed 42), not Hive's")
        if spec.bucketing_version == 2:
            inserted = next((f for f in files if is_spark_hive_insert(f.name)), None)
            if inserted is not None:
                return (f"{inserted.path} was written by Spark's own INSERT, which places rows by the Hive v1 hash, "
                        "into a bucketing_version=2 table")
    return None


def bucketing_doubt(table, layout) -> str | None:
    """The first reason the table must be read unbucketed, or None when its bucketing is vouched for."""
    return table.unbucketed_reason or spec_doubt(table.spec) or layout_doubt(table.spec, layout)
