"""``bucketkit.write``: a Spark DataFrame into a Hive/Trino-compatible bucketed table, switched in whole.

The pipeline (docs/writing.md explains each choice):

1. The spec: Hive types from the DataFrame schema (``bucket_types`` may override, e.g.
   ``varchar(20)``); an existing table's spec must match (:class:`SpecMismatchError` names the
   difference).
2. A bucket-id column computed by a scalar Arrow UDF from only the key columns (Hive's hash, v1 or
   v2, from :mod:`bucketkit.hashing`).
3. One shuffle so that every (partition, bucket) group lands in exactly one task; for an
   unpartitioned table bucket ``b`` is routed to task ``b mod n`` exactly (see
   :func:`routing_keys`), then a sort by (partition, bucket, sorted_by).
4. Spark's own JVM ORC/Parquet writer writes one file per group into the hidden staging directory
   of the table's next version, a hidden sibling of the table directory (``partitionBy`` on the
   partition columns and the bucket id).
5. The driver names the files (``000003_0_<write id>.orc``), adds empty bucket files if asked, and
   commits them with :class:`bucketkit.commit.Transaction`, which switches the whole directory so
   readers see the old table or the new one (catalog updates included).
"""

from __future__ import annotations

import posixpath
import struct
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.commit import Transaction, fault_point, recover, visible_files
from bucketkit.errors import (InvalidArgumentError, SpecMismatchError, TableExistsError, TableNotFoundError)
from bucketkit.io import (COMPRESSIONS, DEFAULT_COMPRESSION, FILE_FORMATS, empty_file, footer_rows, is_hidden_path,
                          read_schema, resolve_filesystem, spark_uri)
from bucketkit.metadata import METADATA_FILE, SortKey, TableSpec, read_spec
from bucketkit.naming import HIVE, LEGACY_PRESTO
from bucketkit.partitions import parse_partition_path, partition_path
from bucketkit.spark import catalog
from bucketkit.spark.hashcol import bucket_id_column

__all__ = ["write", "WriteResult", "WrittenFile", "PartitionWrite", "MODES", "OVERWRITE_SCOPES"]

MODES = ("error", "append", "overwrite", "ignore")
OVERWRITE_SCOPES = ("table", "partitions")
NAMINGS = ("hive", "legacy-presto")
MAX_BUCKETS = 99999  # Trino's file names carry 5 bucket digits
BUCKET_COLUMN = "bucketkit_bucket"  # the bucket id column; a partitionBy level of the staged output only


@dataclass(frozen=True)
class WrittenFile:
    """One file a write added: its bucket, full path (inside the filesystem), rows and bytes."""

    bucket: int
    path: str
    rows: int
    bytes: int


@dataclass(frozen=True)
class PartitionWrite:
    """The files a write added to one partition (``values == {}`` for an unpartitioned table)."""

    values: dict[str, str]
    path: str
    files: tuple[WrittenFile, ...]

    @property
    def rows(self) -> int:
        return sum(f.rows for f in self.files)

    def files_by_bucket(self) -> dict[int, tuple[WrittenFile, ...]]:
        out: dict[int, list[WrittenFile]] = {}
        for f in self.files:
            out.setdefault(f.bucket, []).append(f)
        return {b: tuple(v) for b, v in sorted(out.items())}


@dataclass(frozen=True)
class WriteResult:
    """What :func:`write` did. Printable; ``skipped`` is True for ``mode="ignore"`` on an existing table."""

    location: str
    spec: TableSpec
    mode: str
    write_id: str | None
    partitions: tuple[PartitionWrite, ...] = ()
    replaced_files: int = 0
    table: str | None = None
    skipped: bool = False
    recovered: tuple[str, ...] = field(default=())

    @property
    def files(self) -> tuple[WrittenFile, ...]:
        return tuple(f for p in self.partitions for f in p.files)

    @property
    def rows(self) -> int:
        return sum(f.rows for f in self.files)

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def __str__(self) -> str:
        target = self.table or self.location
        if self.skipped:
            return f"{target}: exists, nothing written (mode='ignore')"
        lines = [f"{target}: {self.mode} {self.rows} rows in {len(self.files)} files ({self.bytes} bytes), "
                 f"{len(self.partitions)} partition(s), write {self.write_id}"
                 + (f", replaced {self.replaced_files} files" if self.replaced_files else "")]
        for p in self.partitions[:20]:
            label = p.path or "(table root)"
            lines.append(f"  {label}: {p.rows} rows, {len(p.files)} files, "
                         f"{sum(1 for f in p.files if f.rows == 0)} empty")
        if len(self.partitions) > 20:
            lines.append(f"  ... {len(self.partitions) - 20} more partitions")
        return "\n".join(lines)


def _names(value: Sequence[str] | str | None, option: str) -> tuple[str, ...]:
    if value is None:
        return ()
    out = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(v, str) and v for v in out):
        raise InvalidArgumentError(f"{option}={value!r}: expected a column name or a list of column names")
    return out


def _choice(option: str, value: Any, valid: Sequence[str]) -> str:
    if value not in valid:
        raise InvalidArgumentError(f"{option}={value!r}: expected one of {list(valid)}")
    return value


def build_spec(schema: Any, bucketed_by: Sequence[str], bucket_count: int, *, sorted_by: Sequence[Any] = (),
               partitioned_by: Sequence[str] = (), bucketing_version: int = 2, file_format: str = "orc",
               naming: str = "hive", bucket_types: Sequence[str] | Mapping[str, str] | None = None) -> TableSpec:
    """The :class:`TableSpec` a DataFrame with this Spark ``schema`` is written with."""
    from bucketkit.hashing import check_bucketable
    from bucketkit.spark.types import hive_type_of_spark

    names = [f.name for f in schema.fields]
    used = list(bucketed_by) + list(partitioned_by) + [SortKey.of(s).column for s in sorted_by]
    missing = [c for c in used if c not in names]
    if missing:
        raise InvalidArgumentError(f"column(s) {missing} not in the DataFrame's columns {names}")
    if BUCKET_COLUMN in names:
        raise InvalidArgumentError(f"the DataFrame has a column named {BUCKET_COLUMN!r}, which bucketkit reserves")
    if len(partitioned_by) >= len(names):
        raise InvalidArgumentError(f"partitioned_by={list(partitioned_by)} leaves no data columns in {names}")
    types = {f.name: hive_type_of_spark(f) for f in schema.fields}
    if bucket_types is not None:
        given = dict(bucket_types) if isinstance(bucket_types, Mapping) else dict(zip(bucketed_by, bucket_types))
        if not isinstance(bucket_types, Mapping) and len(bucket_types) != len(bucketed_by):
            raise InvalidArgumentError(f"bucket_types={list(bucket_types)}: expected one Hive type per bucket "
                                       f"column {list(bucketed_by)}")
        unknown = [c for c in given if c not in bucketed_by]
        if unknown:
            raise InvalidArgumentError(f"bucket_types names {unknown}, which are not bucket columns {list(bucketed_by)}")
        types.update(given)
    for c in bucketed_by:
        types[c] = str(check_bucketable(c, types[c]))
    if not 1 <= bucket_count <= MAX_BUCKETS:
        raise InvalidArgumentError(f"bucket_count={bucket_count!r}: expected 1..{MAX_BUCKETS} "
                                   "(Trino-compatible file names carry 5 bucket digits)")
    return TableSpec(
        tuple(bucketed_by), tuple(types[c] for c in bucketed_by), bucket_count, bucketing_version=bucketing_version,
        sorted_by=tuple(sorted_by), partitioned_by=tuple(partitioned_by),
        partition_types=tuple(types[c] for c in partitioned_by),
        columns=tuple((n, types[n]) for n in names if n not in partitioned_by), file_format=file_format,
        naming=naming)


def write(df: Any, bucketed_by: Sequence[str] | str, bucket_count: int, *, path: str | None = None,
          table: str | None = None, sorted_by: Sequence[Any] | None = None,
          partitioned_by: Sequence[str] | str | None = None, bucketing_version: int = 2, file_format: str = "orc",
          mode: str = "error", create_empty_bucket_files: bool = False, naming: str = "hive",
          compression: str | None = None, bucket_types: Sequence[str] | Mapping[str, str] | None = None,
          overwrite_scope: str = "table", num_tasks: int | None = None,
          filesystem: pafs.FileSystem | None = None) -> WriteResult:
    """Write ``df`` as a Hive/Trino-compatible bucketed table: one file per bucket per partition.

    Args:
        df: the rows to write.
        bucketed_by: bucket column(s), in hash order.
        bucket_count: number of buckets (1..99999).
        path: the table directory (local path or URI). Exactly one of ``path`` / ``table``.
        table: a table name in the Spark session catalog (Hive metastore); created as a Hive
            bucketed table (``CLUSTERED BY ... INTO n BUCKETS``) if missing.
        sorted_by: sort keys inside each file: ``"col"``, ``"col DESC"`` or ``("col", "descending")``.
        partitioned_by: Hive partition column(s) (directory levels ``k=v``).
        bucketing_version: 1 (Hive < 3, Spark) or 2 (Hive 3, Trino's default).
        file_format: ``"orc"`` or ``"parquet"``.
        mode: ``"error"`` (the table must not exist), ``"append"``, ``"overwrite"``, ``"ignore"``
            (do nothing if the table exists).
        create_empty_bucket_files: give every bucket without rows in this write a valid empty
            file, in each partition written (Hive's behaviour); off: no file (Trino's default).
        naming: ``"hive"`` (``000003_0_<write id>.orc``) or ``"legacy-presto"``
            (``<write id>_bucket-00003.orc``).
        compression: codec (``snappy`` default; ORC: none/snappy/zlib/lz4/zstd; Parquet:
            none/snappy/gzip/lz4/zstd/brotli). Hive before 4 cannot read zstd ORC.
        bucket_types: Hive types of bucket columns when they differ from the DataFrame's (e.g.
            ``{"name": "varchar(20)"}``): the type decides the hash.
        overwrite_scope: with ``mode="overwrite"``: ``"table"`` replaces the whole table,
            ``"partitions"`` only the partitions the data has rows for (Hive's ``INSERT OVERWRITE
            ... PARTITION``, Spark's dynamic partition overwrite).
        num_tasks: Spark tasks that write the files (default: from ``spark.sql.shuffle.partitions``).
        filesystem: a pyarrow filesystem for ``path``.

    Returns:
        A :class:`WriteResult` listing per partition and bucket the files written, rows and bytes.

    Raises:
        InvalidArgumentError: a bad option (the message lists the valid values).
        TableExistsError: ``mode="error"`` and the table exists.
        SpecMismatchError: appending (or overwriting partitions) with a different spec.
        ConcurrentModificationError: the table changed during the write; nothing was committed.
    """
    if (path is None) == (table is None):
        raise InvalidArgumentError(f"give exactly one of path= or table=, got path={path!r}, table={table!r}")
    mode = _choice("mode", mode, MODES)
    file_format = _choice("file_format", file_format, FILE_FORMATS)
    naming = _choice("naming", naming, NAMINGS)
    overwrite_scope = _choice("overwrite_scope", overwrite_scope, OVERWRITE_SCOPES)
    compression = _choice(f"compression (for {file_format})", (compression or DEFAULT_COMPRESSION).lower(),
                          COMPRESSIONS[file_format])
    if bucketing_version not in (1, 2):
        raise InvalidArgumentError(f"bucketing_version={bucketing_version!r}: expected 1 or 2")
    if not isinstance(bucket_count, int) or isinstance(bucket_count, bool):
        raise InvalidArgumentError(f"bucket_count={bucket_count!r}: expected an int")
    if num_tasks is not None and (not isinstance(num_tasks, int) or num_tasks < 1):
        raise InvalidArgumentError(f"num_tasks={num_tasks!r}: expected a positive int or None")
    bucketed = _names(bucketed_by, "bucketed_by")
    parts = _names(partitioned_by, "partitioned_by")
    def spec_of(schema: Any) -> TableSpec:
        return build_spec(schema, bucketed, bucket_count, sorted_by=tuple(sorted_by or ()), partitioned_by=parts,
                          bucketing_version=bucketing_version, file_format=file_format, naming=naming,
                          bucket_types=bucket_types)

    spec = spec_of(df.schema)
    spark = df.sparkSession

    if table is not None:
        location = catalog.table_location(spark, table)
        fs, root = resolve_filesystem(location)
        loaded = catalog.load_table(spark, table) if catalog.table_exists(spark, table) else None
        existing = loaded.spec if loaded is not None else None
        if existing is not None and existing.bucketing_version == 2:
            foreign = catalog.spark_written_files(loaded)
            if foreign:
                warnings.warn(f"table {table}: {len(foreign)} file(s) such as {foreign[0]} were written by Spark's "
                              "own INSERT, which places rows by the v1 hash although the table says "
                              "bucketing_version=2; Hive and Trino will miss those rows", stacklevel=2)
    else:
        location = path
        fs, root = resolve_filesystem(path, filesystem)
        try:
            existing = read_spec(root, fs)
        except TableNotFoundError:
            existing = None
            if visible_files(fs, root) and mode in ("error", "append", "ignore"):
                raise (TableExistsError if mode != "append" else TableNotFoundError)(
                    f"{path}: the directory holds files but no bucketkit metadata ({METADATA_FILE}); "
                    "bucketkit will not mix its files with unknown ones (use mode='overwrite' to replace them)")
    target = table or path
    actions = [a for a in recover(root, filesystem=fs) if a.state != "in progress"]
    recovered = tuple(map(str, actions))
    for action in actions:  # a dead write committed its files; its catalog partitions may be missing
        if action.state == "rolled forward" and table and action.extra.get("catalog") == table \
                and catalog.table_exists(spark, table):
            catalog.add_partitions(spark, table, action.extra.get("partitions", []), location)
    if recovered:
        warnings.warn(f"{target}: finished interrupted earlier writes: {'; '.join(recovered)}", stacklevel=2)

    if existing is not None:
        if mode == "error":
            raise TableExistsError(f"{target} exists (mode='error'); use mode='append', 'overwrite' or 'ignore'")
        if mode == "ignore":
            return WriteResult(str(location), existing, mode, None, table=table, skipped=True, recovered=recovered)
        if set(existing.column_types) == set(spec.column_types):  # same columns in another order: use the table's
            df = df.select(*[c for c, _ in existing.columns], *existing.partitioned_by)
            spec = spec_of(df.schema)
        must_match = mode == "append" or overwrite_scope == "partitions" or table is not None
        diffs = existing.differences(spec)
        if diffs and must_match:
            raise SpecMismatchError(f"{target}: the write's spec differs from the table's: " + "; ".join(diffs))
    if table is not None and any(not s.ascending for s in spec.sorted_by):
        raise InvalidArgumentError(f"table {table!r}: Spark's catalog accepts only ascending SORTED BY columns, "
                                   f"got {[str(s) for s in spec.sorted_by]}")

    tx = Transaction(root, spec, mode="error" if mode == "ignore" else mode, filesystem=fs, extra={"catalog": table})
    staging = tx.begin()
    try:
        data_dir = posixpath.join(staging, "data")
        write_staged(df, spec, spark_uri(fs, data_dir, location=location), compression=compression,
                     num_tasks=num_tasks)
        fault_point("after_task_writes")
        groups = staged_groups(fs, data_dir)  # {(partition relpath, bucket): [staged file paths]}
        files, infos = _final_names(fs, staging, spec, tx.write_id, groups, create_empty_bucket_files)
    except BaseException:
        tx.abort()
        raise
    written_parts = sorted({p for p, _ in groups} | ({""} if not parts else set()))
    replace = None if (mode == "overwrite" and overwrite_scope == "table") else written_parts
    tx.extra["partitions"] = [parse_partition_path(p) for p in written_parts if p]

    def update_catalog() -> None:
        if table is None:
            return
        if not catalog.table_exists(spark, table):
            catalog.create_table(spark, table, spec, location)
        elif mode == "overwrite" and overwrite_scope == "table" and parts:
            old = [parse_partition_path(r.partition) for r in spark.sql(f"SHOW PARTITIONS {table}").collect()]
            new = {partition_path(p) for p in tx.extra["partitions"]}
            catalog.drop_partitions(spark, table, [p for p in old if partition_path(p) not in new])
        catalog.add_partitions(spark, table, tx.extra["partitions"], location)
        spark.catalog.refreshTable(table)

    summary = tx.commit(files, replace=replace if mode == "overwrite" else None, on_committed=update_catalog)
    by_part: dict[str, list[WrittenFile]] = {}
    for rel in summary.added:
        bucket, rows, size = infos[rel]
        by_part.setdefault(posixpath.dirname(rel), []).append(
            WrittenFile(bucket, posixpath.join(root, rel), rows, size))
    partitions = tuple(PartitionWrite(parse_partition_path(p), p, tuple(sorted(fl, key=lambda f: f.bucket)))
                       for p, fl in sorted(by_part.items()))
    return WriteResult(str(location), spec, mode, tx.write_id, partitions, len(summary.replaced), table,
                       recovered=recovered)


def _final_names(fs: pafs.FileSystem, staging: str, spec: TableSpec, write_id: str,
                 groups: dict[tuple[str, int], list[pafs.FileInfo]], empty_files: bool
                 ) -> tuple[dict[str, str], dict[str, tuple[int, int, int]]]:
    """Final relative path -> staged path, and final path -> (bucket, rows, bytes)."""
    ext = "." + spec.file_format

    def name(bucket: int, copy: int) -> str:
        if spec.naming == "legacy-presto":
            return LEGACY_PRESTO.format(bucket, query_id=write_id, tail=(f"_{copy}" if copy else "") + ext)
        return HIVE.format(bucket, copy=copy or None, tail=write_id + ext)

    files: dict[str, str] = {}
    infos: dict[str, tuple[int, int, int]] = {}
    sample = None
    for (part, bucket), staged in sorted(groups.items()):
        for copy, info in enumerate(staged):  # more than one only if Spark split a group's file
            rel = posixpath.join(part, name(bucket, copy))
            files[rel] = info.path
            infos[rel] = (bucket, footer_rows(fs, info.path, spec.file_format), info.size)
            sample = sample or info.path
    if empty_files:
        partitions = sorted({p for p, _ in groups}) or ([""] if not spec.partitioned_by else [])
        content = empty_file_bytes(fs, spec, sample)
        for part in partitions:
            for bucket in range(spec.bucket_count):
                if (part, bucket) in groups:
                    continue
                rel = posixpath.join(part, name(bucket, 0))
                staged = posixpath.join(staging, "empty", rel)
                fs.create_dir(posixpath.dirname(staged), recursive=True)
                with fs.open_output_stream(staged) as out:
                    out.write(content)
                files[rel] = staged
                infos[rel] = (bucket, 0, len(content))
    return files, infos


def empty_table_schema(spec: TableSpec) -> pa.Schema:
    """The Arrow schema of the table's data files (data columns, table order)."""
    from bucketkit.hivetypes import arrow_type_of_hive

    return pa.schema([pa.field(n, arrow_type_of_hive(t)) for n, t in spec.columns])


# -- the Spark side --------------------------------------------------------------------------------
def routing_keys(num_tasks: int) -> list[int]:
    """For every task ``t < num_tasks`` an int whose Spark hash partition among ``num_tasks`` is ``t``.

    Spark's ``repartition(n, col)`` sends a row to ``pmod(murmur3_x86_32(col, seed 42), n)``, and
    for an int column that hash is the standard Murmur3 of its 4 little-endian bytes. Routing
    bucket ``b`` by ``keys[b % n]`` puts it in task ``b % n`` exactly, so n tasks get equal bucket
    counts (hashing the bucket id itself would pile several buckets into some tasks and none into
    others). The keys are per task, not per bucket, so the routing expression has n literals
    whatever the bucket count (one per bucket made 99999 buckets cost a minute of planning).
    """
    import mmh3

    first: dict[int, int] = {}
    value = 0
    while len(first) < num_tasks:
        first.setdefault(mmh3.hash(struct.pack("<i", value), 42, signed=True) % num_tasks, value)
        value += 1
    return [first[t] for t in range(num_tasks)]


def _largest_divisor(n: int, at_most: int) -> int:
    return max(d for d in range(1, min(n, at_most) + 1) if n % d == 0)


def write_staged(df: Any, spec: TableSpec, uri: str, *, compression: str, num_tasks: int | None) -> None:
    """Shuffle, sort and write ``df`` with Spark's own writer: one file per (partition, bucket) at ``uri``."""
    from pyspark.sql import functions as F

    parts = list(spec.partitioned_by)
    # "" and NULL share the __HIVE_DEFAULT_PARTITION__ directory; as two sort groups they would make
    # Spark open that directory's file twice.
    part_cols = [F.when(F.col(c) == "", None).otherwise(F.col(c)).alias(c) if t.startswith(("string", "varchar", "char"))
                 else F.col(c) for c, t in zip(parts, spec.partition_types)]
    bucket = bucket_id_column(spec.bucketed_by, spec.bucket_types, spec.bucketing_version,
                              spec.bucket_count).alias(BUCKET_COLUMN)
    out = df.select(*[F.col(c) for c, _ in spec.columns], *part_cols, bucket)
    default = int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    if parts:
        out = out.repartition(num_tasks or default, *[F.col(c) for c in parts], F.col(BUCKET_COLUMN))
    else:
        n = num_tasks or _largest_divisor(spec.bucket_count, default)
        keys = F.array(*[F.lit(k) for k in routing_keys(n)])
        out = out.repartition(n, F.element_at(keys, F.col(BUCKET_COLUMN) % n + 1))
    order = [F.col(c) for c in parts] + [F.col(BUCKET_COLUMN)]
    order += [F.col(s.column).asc() if s.ascending else F.col(s.column).desc() for s in spec.sorted_by]
    (out.sortWithinPartitions(*order).write.mode("error").format(spec.file_format)
     .option("compression", compression).option("maxRecordsPerFile", 0)
     .partitionBy(*parts, BUCKET_COLUMN).save(uri))


def staged_groups(fs: pafs.FileSystem, data_dir: str) -> dict[tuple[str, int], list[pafs.FileInfo]]:
    """``(partition relpath, bucket) -> staged files`` from Spark's ``.../bucketkit_bucket=N/part-*`` output."""
    groups: dict[tuple[str, int], list[pafs.FileInfo]] = {}
    infos = fs.get_file_info(pafs.FileSelector(data_dir, recursive=True, allow_not_found=True))
    for info in infos:
        rel = posixpath.relpath(info.path, data_dir)
        if info.type != pafs.FileType.File or is_hidden_path(rel):
            continue
        values = parse_partition_path(posixpath.dirname(rel))
        bucket = int(values.pop(BUCKET_COLUMN))
        groups.setdefault((partition_path(values), bucket), []).append(info)
    return {k: sorted(v, key=lambda i: i.path) for k, v in groups.items()}


def empty_file_bytes(fs: pafs.FileSystem, spec: TableSpec, sample: str | None) -> bytes:
    """A valid ORC/Parquet file with no rows and the table's schema (taken from a written file if
    any, so that Spark's own column metadata is kept): :func:`bucketkit.io.empty_file`."""
    schema = empty_table_schema(spec) if sample is None else read_schema(fs, sample, spec.file_format)
    return empty_file(schema, spec.file_format)
