"""Whether bucketkit can vouch for how a table's rows are placed in its buckets (pure).

Pruning and bucket-by-bucket joins are only as right as the hash they assume. A table is read as
unbucketed -- every file, correct rows, no pruning, a shuffle join -- with the reason in the plan
whenever that hash cannot be known for sure:

* the caller gave no ``bucketing_version`` (nor ``hash_family``) for a table without bucketkit
  metadata (:attr:`~bucketkit.table.BucketedTable.unbucketed_reason`, set by ``open_table``);
* a bucket column's type has no hash in the table's family (Hive cannot bucket on timestamp or
  decimal: Trino reads such tables unbucketed too);
* a Hive-hashed bucket column holds a float or double (:func:`floating_doubt`): Spark's equality
  makes 0.0 and -0.0 one key, Hive's hash places them in different buckets (Trino does not prune on
  such keys either); the Spark SQL catalog reads such tables unbucketed by the same rule;
* the files contradict the declared family: Spark ``bucketBy`` names (``part-..._00003.c000...``)
  in a Hive-bucketed table, Hive/Trino names in a Spark ``bucketBy`` table, or files of Spark's own
  Hive ``INSERT`` (always the v1 hash) in a ``bucketing_version=2`` table;
* bucketkit's own record of how it hashed its files (``_bucketkit_table.json``) says another hash
  family, version, count or bucket columns than the catalog (``ALTER TABLE ... SET TBLPROPERTIES
  ('bucketing_version'='2')`` on a table bucketkit wrote with v1): :func:`record_disagreement`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from bucketkit.acid.plan import transactional_kind
from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hashing.hive import check_bucketable
from bucketkit.hivetypes import HiveType, parse_hive_type
from bucketkit.layout.metadata import TableSpec
from bucketkit.layout.naming import is_spark_hive_insert

__all__ = ["spec_doubt", "floating_doubt", "layout_doubt", "bucketing_doubt", "CatalogVerdict", "catalog_verdict", "format_of_serde", "LAYOUT_FIELDS", "HUDI_REASON", "is_hudi_catalog_table",
           "record_disagreement"]

# What decides where a row lands: bucketkit's record and the catalog must agree on these.
LAYOUT_FIELDS = ("hash_family", "bucketed_by", "bucket_count", "bucketing_version")


@dataclass(frozen=True)
class CatalogVerdict:
    """What a catalog table's metadata says of its bucketing (see :func:`catalog_verdict`).

    Attributes:
        kind: ``"hudi"`` (an Apache Hudi table, read from its location as Hudi's: :mod:`bucketkit.hudi`),
            ``"spark"`` (a data source table: Spark's own ``bucketBy``), ``"acid"`` (a Hive
            transactional table), ``"not-bucketed"``, ``"unbucketed"`` (a Hive bucketed table whose
            hash or layout cannot be known: read it unbucketed, for ``reason``) or ``"bucketed"``.
        version: the Hive bucketing version (``"bucketed"``; 1 for ``"spark"``), else 0.
        format: ``"orc"``/``"parquet"`` (or the provider for ``"spark"``), None when unknown.
        reason: why, for every kind but ``"bucketed"``.
    """

    kind: str
    version: int
    format: str | None
    reason: str | None


#: Hive's TEXTFILE serde (with TextInputFormat: ``STORED AS TEXTFILE``, Hive's default format).
TEXT_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


def format_of_serde(serde: str | None) -> str | None:
    """``"orc"``, ``"parquet"``, ``"text"`` (Hive's LazySimpleSerDe) or None, from a serde class name
    (the JVM's ``TableVerdict.format``)."""
    s = (serde or "").lower()
    return "orc" if "orc" in s else "parquet" if "parquet" in s else "text" if s.strip() == TEXT_SERDE.lower() else None


#: Why a Hudi table in the catalog is never read with Hive's or Spark's hash (the JVM's ``TableVerdict.HUDI_REASON``).
HUDI_REASON = ("an Apache Hudi table: its rows are placed by Hudi's bucket index, not by Hive's or Spark's hash, "
               "whatever CLUSTERED BY its Hive sync declared; bucketkit reads it from its location (bucketkit.scan, "
               "docs/hudi.md)")


def is_hudi_catalog_table(provider: str | None, properties: Mapping[str, str]) -> bool:
    """Whether a catalog table is Hudi's: provider ``hudi``, or what Hudi's Hive sync leaves in its properties
    (``spark.sql.sources.provider=hudi``, ``last_commit_time_sync``, ``hoodie.*`` keys)."""
    if (provider or "").lower() == "hudi" or properties.get("spark.sql.sources.provider", "").lower() == "hudi":
        return True
    return any(k == "last_commit_time_sync" or k.startswith("hoodie.") for k in properties)


def catalog_verdict(provider: str | None, bucket_columns: Sequence[str], properties: Mapping[str, str],
                    serde: str | None, bucket_types: Sequence[str | None]) -> CatalogVerdict:
    """What a catalog table's metadata says of its bucketing, by Hive's and Trino's rules (pure).

    The JVM catalog decides by the same rules (``io.bucketkit.table.TableVerdict``; a differential
    test holds the two equal over generated tables): a missing ``bucketing_version`` is version 1
    (Hive's ``Utilities.getBucketingVersion``, Trino's ``HiveBucketing.getBucketingVersion``); any
    value but 1 or 2 leaves the hash unknown, so the table is read unbucketed, never guessed.

    Args:
        provider: the table's provider (``"hive"`` for a Hive serde table; None is Hive).
        bucket_columns: the ``CLUSTERED BY`` columns (empty: not bucketed).
        properties: the table properties.
        serde: the storage serde class name.
        bucket_types: each bucket column's Hive type, None for a name that is not a data column.
    """
    p = (provider or "hive").lower()
    if is_hudi_catalog_table(p, properties):
        return CatalogVerdict("hudi", 0, "parquet", HUDI_REASON)
    if p != "hive":
        return CatalogVerdict("spark", 1, p, f"provider {p} (Spark plans its own bucketBy tables)")
    declared = properties.get("bucketing_version")
    text = "1" if declared is None else declared.strip()
    version = int(text) if text in ("1", "2") else 0
    bad_version = (f"table property bucketing_version='{declared}', expected '1' or '2' (missing is 1, as Hive and "
                   "Trino read it); any other value leaves the hash unknown")
    if transactional_kind(properties) is not None:
        return CatalogVerdict("acid", version, format_of_serde(serde),
                              bad_version if version == 0 else "a Hive ACID table (transactional=true)")
    if not bucket_columns:
        return CatalogVerdict("not-bucketed", 0, format_of_serde(serde), "not bucketed")

    def unbucketed(reason: str) -> CatalogVerdict:
        return CatalogVerdict("unbucketed", 0, None, reason)

    if version == 0:
        return unbucketed(bad_version)
    fmt = format_of_serde(serde)
    if fmt is None:
        return unbucketed(f"serde {serde or '(none)'} is not ORC, Parquet or Hive's text serde")
    if bucket_types[0] is None:
        return unbucketed(f"bucket column {bucket_columns[0]} is not a data column")
    if len(bucket_columns) == 1:
        try:
            check_bucketable(bucket_columns[0], bucket_types[0])
        except (UnsupportedTypeError, InvalidArgumentError) as exc:
            return unbucketed(f"bucket column {bucket_columns[0]}: {exc}")
    return CatalogVerdict("bucketed", version, fmt, None)


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
        layout: the table's :class:`~bucketkit.layout.discovery.TableLayout` (the partitions being read).
    """
    for part in layout.partition_layouts:
        if part.doubt is not None:
            return part.doubt
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


def _floating(t: HiveType) -> bool:
    """Whether a float or double sits anywhere in ``t`` (also inside a struct, array or map)."""
    return t.name in ("float", "double") or any(_floating(c) for c in t.children)


def floating_doubt(spec: TableSpec) -> str | None:
    """Why a Hive-hashed table's buckets cannot serve a read or a join: a bucket column holding a float
    or double, or None.

    Spark (and Hive, and Trino) compare 0.0 and -0.0 as equal; Hive's hash places them in different
    buckets. A join bucket by bucket would miss the pairs, a GROUP BY split one group, and a
    filter's bucket is not one bucket. One verdict for every reader: ``bucketkit.scan``, ``plan_scan``
    and ``bucketkit.join`` read such a table unbucketed, as the SQL catalog does (its
    ``io.bucketkit.hashing.HiveBucketFunction`` refuses to bind such a column; tests/test_one_verdict.py
    holds the two equal). Writes and ``validate`` still place and check rows by Hive's hash. Spark's
    own ``bucketBy`` hash normalizes -0.0, so its tables are not concerned.
    """
    if spec.hash_family != "hive":
        return None
    for column, hive_type in zip(spec.bucketed_by, spec.bucket_types):
        if hive_type is not None and _floating(parse_hive_type(hive_type)):
            return (f"bucket column {column} is {hive_type}: Spark treats 0.0 and -0.0 as one key but Hive hashes "
                    "them into different buckets, so its buckets cannot be used (Trino does not prune on such keys "
                    "either)")
    return None


def bucketing_doubt(table, layout) -> str | None:
    """The first reason the table must be read unbucketed, or None when its bucketing is vouched for."""
    return table.unbucketed_reason or spec_doubt(table.spec) or floating_doubt(table.spec) \
        or layout_doubt(table.spec, layout)


def _layout_value(name: str, value):
    if name == "bucketed_by":
        return [str(c).lower() for c in value]
    if name == "hash_family":
        return value or "hive"  # a record without it was written by bucketkit's Hive writer
    return int(value)


def _show(value) -> str:
    return "(" + ", ".join(value) + ")" if isinstance(value, list) else str(value)


def record_disagreement(catalog: Mapping[str, object], record: Mapping[str, object], where: str) -> str | None:
    """Why a table whose catalog says ``catalog`` cannot be read bucketed when bucketkit's record at
    ``where`` says ``record`` (both mappings of :data:`LAYOUT_FIELDS`; a record's missing
    ``hash_family`` is ``"hive"``), or None when they agree.

    The record says how bucketkit hashed the files it wrote; the catalog what the table declares now.
    After ``ALTER TABLE ... SET TBLPROPERTIES ('bucketing_version'='2')`` on a table bucketkit wrote
    with v1, pruning by the catalog's hash would skip the files that hold a key (Hive and Trino would
    too: the files lie to them). Read unbucketed, with this reason. The JVM catalog applies the same
    rule (``TableVerdict.recordDisagreement``; a hypothesis test holds the two equal).
    """
    diffs = []
    for name in LAYOUT_FIELDS:
        recorded, declared = _layout_value(name, record.get(name)), _layout_value(name, catalog.get(name))
        if recorded != declared:
            diffs.append(f"{name} {_show(recorded)} where the catalog says {_show(declared)}")
    if not diffs:
        return None
    return (f"bucketkit's record {where} says its files were written with " + ", ".join(diffs)
            + ": pruning or joining by the catalog's layout would miss rows. Set the table back (ALTER TABLE ... "
            "SET TBLPROPERTIES / CLUSTERED BY as recorded), or rewrite it in the new layout")
