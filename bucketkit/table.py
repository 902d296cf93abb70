"""A bucketed table as scan, join and the CLI see it: where it is, and how it is bucketed.

:func:`open_table` resolves a path table (spec from bucketkit's metadata file, or given by the
caller for a foreign table written by Hive/Trino/Spark) into a :class:`BucketedTable`. Catalog
tables are resolved by :func:`bucketkit.spark.catalog.load_table`, which returns the same object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import pyarrow.fs as pafs

from bucketkit.errors import InvalidArgumentError, TableNotFoundError
from bucketkit.metadata import TableSpec, check_table_dir, read_spec, resolve_filesystem

__all__ = ["BucketedTable", "open_table"]


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
    """

    location: str
    spec: TableSpec
    filesystem: pafs.FileSystem = field(default_factory=pafs.LocalFileSystem, compare=False)
    name: str | None = None
    unbucketed_reason: str | None = None

    def layout(self, partition_filter: Callable[[dict[str, str]], bool] | None = None):
        """List and map the table's files to buckets (see :func:`bucketkit.layout.discover`)."""
        from bucketkit.layout import discover

        return discover(self.location, self.spec.bucket_count, filesystem=self.filesystem,
                        partitioned_by=self.spec.partitioned_by, partition_filter=partition_filter)

    def __str__(self) -> str:
        return self.name or self.location


def open_table(
    path: str | BucketedTable,
    *,
    filesystem: pafs.FileSystem | None = None,
    bucketed_by: Sequence[str] | str | None = None,
    bucket_count: int | None = None,
    bucketing_version: int | None = None,
    bucket_types: Sequence[str] | None = None,
    partitioned_by: Sequence[str] | None = None,
    partition_types: Sequence[str] | None = None,
    columns: dict[str, str] | None = None,
    file_format: str | None = None,
    sorted_by: Sequence[Any] | None = None,
    hash_family: str | None = None,
) -> BucketedTable:
    """Open a bucketed path table.

    The spec comes from bucketkit's metadata file when present; explicit arguments must then agree
    with it. For a foreign table (no metadata file) ``bucketed_by`` and ``bucket_count`` are
    required, and ``bucket_types`` (or ``columns``) since the type decides the hash. The hash is
    never guessed: give ``bucketing_version=1`` (Hive before 3, Spark's Hive writer) or ``2``
    (Hive 3, Trino), or ``hash_family="spark"`` for a Spark ``bucketBy`` table; without either the
    table opens with :attr:`BucketedTable.unbucketed_reason` set, and reads are correct but unpruned.
    """
    if isinstance(path, BucketedTable):
        return path
    fs, root = resolve_filesystem(path, filesystem)
    check_table_dir(path, fs, root)  # a file or missing path is not "a table without metadata"
    given = {k: v for k, v in dict(bucketed_by=bucketed_by, bucket_count=bucket_count,
                                    bucketing_version=bucketing_version, hash_family=hash_family).items()
             if v is not None}
    try:
        spec = read_spec(root, fs)
    except TableNotFoundError:
        if bucketed_by is None or bucket_count is None:
            raise TableNotFoundError(
                f"{path}: no bucketkit metadata; for a table written by Hive/Trino/Spark pass "
                f"bucketed_by=, bucket_count=, bucketing_version= and bucket_types= (or columns=)") from None
        if bucket_types is None and columns is None:
            raise InvalidArgumentError(
                f"{path}: give the Hive type of bucket column(s) {bucketed_by!r} with bucket_types= "
                f"or columns= (the type decides the hash)")
        spec = TableSpec.create(
            bucketed_by, bucket_count, bucket_types=bucket_types, columns=columns or {},
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
