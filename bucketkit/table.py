"""A bucketed table as scan, join and the CLI see it: where it is, and how it is bucketed.

A *table reference* is a :class:`BucketedTable`, a directory (a path or URI) or a catalog table
name. :func:`reference_kind` tells which from the reference alone, never from the local disk:
a string naming a directory has a ``/`` (``./t``, ``/data/t``, ``s3://b/t``) and a catalog name
is an identifier (``t``, ``db.t``, ``spark_catalog.db.t``, back-quoted parts allowed).
:func:`open_table` resolves a directory (spec from bucketkit's metadata file, or given by the
caller for a foreign table written by Hive/Trino/Spark) into a :class:`BucketedTable`; catalog
names need Spark: :func:`bucketkit.spark.catalog.resolve_table` resolves any reference.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence, Union

import pyarrow.fs as pafs

from bucketkit.errors import InvalidArgumentError, TableNotFoundError
from bucketkit.io import check_format, resolve_filesystem
from bucketkit.layout.metadata import TableSpec, check_table_dir, read_spec

__all__ = ["BucketedTable", "TableRef", "open_table", "reference_kind", "spec_options_given"]

_IDENTIFIER = r"(?:`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)"
_CATALOG_NAME = re.compile(rf"{_IDENTIFIER}(?:\.{_IDENTIFIER}){{0,2}}")


@dataclass(frozen=True)
class BucketedTable:
    """A table location plus its bucketing spec.

    Attributes:
        location: the table's root directory (path inside ``filesystem``).
        spec: how the table is bucketed.
        filesystem: a pyarrow filesystem (local by default; S3, GCS, HDFS, ... via URIs).
        name: the catalog name, for catalog tables.
        unbucketed_reason: set when bucketkit cannot vouch for how the table's rows are placed
            (e.g. no ``bucketing_version`` was given for a foreign table): then every reader reads
            it as unbucketed, with this reason in its plan, instead of guessing a hash.
        transactional: ``"full"`` or ``"insert_only"`` for a Hive ACID table whose catalog says
            so; ``None``: decided from the files (see :mod:`bucketkit.acid.plan`).
    """

    location: str
    spec: TableSpec
    filesystem: pafs.FileSystem = field(default_factory=pafs.LocalFileSystem, compare=False)
    name: str | None = None
    unbucketed_reason: str | None = None
    transactional: str | None = None
    #: for a catalog table, the values of each partition the metastore lists (in ``spec.partitioned_by`` order, as
    #: the metastore spells them): only these are the table's, as Hive, Trino and Spark SQL read it; a directory the
    #: metastore does not list (an external table's dropped partition) is not. None: every ``k=v`` directory
    registered: tuple[tuple[str, ...], ...] | None = field(default=None, compare=False, repr=False)

    def layout(self, partition_filter: Callable[[dict[str, str]], bool] | None = None, *, unvouched: bool = False,
               pinned: bool = False, version: str | None = None):
        """List and map the table's files to buckets (see :func:`bucketkit.layout.discovery.discover`):
        the live version, read in place or ``pinned`` (its files read from the table's store, where
        later commits leave them: :func:`~bucketkit.layout.discovery.pin`), or the kept ``version``
        (a write id: time travel)."""
        from bucketkit.acid.plan import WRITER_IDS
        from bucketkit.layout.discovery import discover, pin
        from bucketkit.layout.versions import TablePaths

        # a table that is not bucketed (Hive 3's unbucketed ACID table): its bucket_N are writer ids,
        # below what Hive's bucket codec can hold
        count = self.spec.bucket_count if self.spec.bucketed else WRITER_IDS
        root = self.location if version is None else TablePaths.at(self.filesystem, self.location).version(version)
        unlisted: list[dict[str, str]] = []
        if self.registered is not None and self.spec.partitioned_by:
            listed, inner, cols = set(self.registered), partition_filter, self.spec.partitioned_by

            def partition_filter(values: dict[str, str]) -> bool:  # noqa: F811 - the metastore's partitions only
                if tuple(values.get(c) for c in cols) not in listed:
                    unlisted.append(values)
                    return False
                return inner is None or inner(values)

        layout = discover(root, count, filesystem=self.filesystem, partitioned_by=self.spec.partitioned_by,
                          partition_filter=partition_filter, unvouched=unvouched)
        if unlisted:  # the directory holds partitions that are not the table's: read it partition by partition
            layout = dataclasses.replace(layout, exact=False)
        return pin(layout) if pinned and version is None else layout

    def __str__(self) -> str:
        return self.name or self.location


TableRef = Union["BucketedTable", str, "os.PathLike[str]"]


def reference_kind(ref: Any) -> Literal["table", "path", "catalog"]:
    """What a table reference names: an opened ``"table"``, a directory (``"path"``) or a ``"catalog"`` table.

    Decided by the reference's spelling alone: a directory has a ``/`` (or ``\\``) or a URI
    scheme, or starts with ``.``/``~``; a catalog name is ``name``, ``db.name`` or
    ``catalog.db.name``. A directory in the working directory is ``./name``.

    Raises:
        InvalidArgumentError: neither (e.g. ``"my table"``, ``3``).
    """
    if isinstance(ref, BucketedTable):
        return "table"
    if isinstance(ref, os.PathLike):
        return "path"
    if isinstance(ref, str):
        if "/" in ref or "\\" in ref or ref.startswith((".", "~")):
            return "path"
        if _CATALOG_NAME.fullmatch(ref):
            return "catalog"
    session = type(ref).__name__ == "SparkSession"  # plan_scan(spark, "t"): the session where the table goes
    raise InvalidArgumentError(
        f"table {ref!r}: expected a BucketedTable, a directory ('./t', '/data/t', 's3://bucket/t') "
        f"or a catalog table name ('t', 'db.t')" + (
            "; plan_scan and plan_join take the table first and the session as spark= (scan, join and write "
            "take the session first)" if session else ""))


def open_table(
    path: str | os.PathLike[str] | BucketedTable,
    *,
    filesystem: pafs.FileSystem | None = None,
    bucketed_by: Sequence[str] | str | None = None,
    bucket_count: int | None = None,
    bucketing_version: int | None = None,
    bucket_types: Sequence[str] | None = None,
    partitioned_by: Sequence[str] | None = None,
    partition_types: Sequence[str] | None = None,
    table_columns: dict[str, str] | None = None,
    file_format: str | None = None,
    sorted_by: Sequence[Any] | None = None,
    hash_family: str | None = None,
) -> BucketedTable:
    """Open a bucketed path table.

    The spec comes from bucketkit's metadata file when present; explicit arguments must then agree
    with it. For a foreign table (no metadata file) ``bucketed_by`` and ``bucket_count`` are
    required, and ``bucket_types`` (or ``table_columns``, every data column's Hive type) since the
    type decides the hash. The hash is never guessed: give ``bucketing_version=1`` (Hive before 3,
    Spark's Hive writer) or ``2`` (Hive 3, Trino), or ``hash_family="spark"`` for a Spark
    ``bucketBy`` table; without either the table opens with :attr:`BucketedTable.unbucketed_reason`
    set, and reads are correct but unpruned. A Hive ACID directory (``base_``/``delta_``
    sub-directories) opened without ``bucketed_by``/``bucket_count`` is an unbucketed ACID table
    (:func:`bucketkit.acid.plan.unbucketed_spec`), read unbucketed.
    """
    if isinstance(path, BucketedTable):
        return path
    path = os.path.expanduser(os.fspath(path))
    fs, root = resolve_filesystem(path, filesystem)
    check_table_dir(path, fs, root)  # a file or missing path is not "a table without metadata"
    from bucketkit.hudi import table as hudi

    if hudi.is_hudi_dir(fs, root):
        return _open_hudi(path, fs, root, dict(
            bucketed_by=bucketed_by, bucket_count=bucket_count, bucketing_version=bucketing_version,
            bucket_types=bucket_types, partitioned_by=partitioned_by, partition_types=partition_types,
            table_columns=table_columns, file_format=file_format, sorted_by=sorted_by, hash_family=hash_family))
    given = {k: v for k, v in dict(bucketed_by=bucketed_by, bucket_count=bucket_count,
                                    bucketing_version=bucketing_version, hash_family=hash_family).items()
             if v is not None}
    try:
        spec = read_spec(root, fs)
    except TableNotFoundError:
        if bucketed_by is None and bucket_count is None and bucket_types is None:
            from bucketkit.acid.plan import UNBUCKETED, unbucketed_spec

            acid = unbucketed_spec(fs, root, partitioned_by=partitioned_by, partition_types=partition_types,
                                   table_columns=table_columns, file_format=file_format)
            if acid is not None:
                return BucketedTable(root, acid, fs, unbucketed_reason=UNBUCKETED)
        if bucketed_by is None or bucket_count is None:
            raise TableNotFoundError(
                f"{path}: no bucketkit metadata; for a table written by Hive/Trino/Spark pass "
                f"bucketed_by=, bucket_count=, bucketing_version= and bucket_types= (or table_columns=)") from None
        if bucket_types is None and table_columns is None:
            raise InvalidArgumentError(
                f"{path}: give the Hive type of bucket column(s) {bucketed_by!r} with bucket_types= "
                f"or table_columns= (the type decides the hash)")
        check_format(file_format or "orc")  # files bucketkit's Python readers read (not a TEXTFILE table's)
        spec = TableSpec.create(
            bucketed_by, bucket_count, bucket_types=bucket_types, columns=table_columns or {},
            bucketing_version=bucketing_version or 1, partitioned_by=tuple(partitioned_by or ()),
            partition_types=tuple(partition_types or ()), file_format=file_format or "orc",
            sorted_by=tuple(sorted_by or ()), hash_family=hash_family or "hive")
        unknown = None
        if bucketing_version is None and hash_family is None:
            unknown = ("no bucketing_version given for a table without bucketkit metadata: pass "
                       "bucketing_version=1 (Hive < 3, Spark's Hive writer) or 2 (Hive 3, Trino), or "
                       "hash_family='spark' for a Spark bucketBy table, to prune and join by bucket")
        return BucketedTable(root, spec, fs, unbucketed_reason=unknown)
    if "bucketed_by" in given and isinstance(given["bucketed_by"], str):
        given["bucketed_by"] = (given["bucketed_by"],)
    if "bucketed_by" in given:
        given["bucketed_by"] = tuple(given["bucketed_by"])
    clashes = [f"{k}={v!r} (metadata says {getattr(spec, k)!r})" for k, v in given.items() if getattr(spec, k) != v]
    if clashes:
        raise InvalidArgumentError(f"{path}: arguments disagree with the table's bucketkit metadata: "
                                   + ", ".join(clashes))
    return BucketedTable(root, spec, fs)


def _open_hudi(path: str, fs: pafs.FileSystem, root: str, given: dict[str, Any]) -> BucketedTable:
    """An Apache Hudi table directory (``.hoodie/``): spec from its properties and hudi-rs's schema,
    bucketed by Hudi's bucket index when ``bucket_count`` is given (:mod:`bucketkit.hudi.table`)."""
    from bucketkit.hudi import table as hudi

    foreign = sorted(k for k in ("bucketing_version", "bucket_types", "partitioned_by", "partition_types",
                                 "table_columns", "file_format", "sorted_by") if given.get(k) is not None)
    if given.get("hash_family") not in (None, "hudi"):
        foreign.append("hash_family")
    if foreign:
        raise InvalidArgumentError(f"{path} is an Apache Hudi table: {', '.join(foreign)} do not apply (its columns, "
                                   "partitions and format are Hudi's; its bucket index hashes by Hudi's own rule: "
                                   "give bucket_count= and, if not the record key, bucketed_by=)")
    properties = hudi.read_properties(fs, root)
    spec = hudi.hudi_spec(fs, root, properties, bucketed_by=given.get("bucketed_by"),
                          bucket_count=given.get("bucket_count"))
    reason = hudi.UNBUCKETED if not spec.bucketed else hudi.pinned_by_key(properties, spec.bucketed_by)
    return BucketedTable(root, spec, fs, unbucketed_reason=reason)


_SPEC_OPTIONS = tuple(p for p in inspect.signature(open_table).parameters if p != "path")


def spec_options_given(options: dict[str, Any]) -> dict[str, Any]:
    """The spec options (:func:`open_table`'s keywords) a caller gave, Nones dropped.

    Raises:
        InvalidArgumentError: an option that is not one of them.
    """
    unknown = sorted(set(options) - set(_SPEC_OPTIONS))
    if unknown:
        raise InvalidArgumentError(f"unknown option(s) {', '.join(unknown)}; a table's spec options are "
                                   f"{', '.join(_SPEC_OPTIONS)}")
    return {k: v for k, v in options.items() if v is not None}
