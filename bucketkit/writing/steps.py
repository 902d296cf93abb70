"""The pure half of :func:`bucketkit.write`: options, target, spec reconciliation and the finalize step.

``bucketkit.write`` runs four steps; only the third needs Spark (:mod:`bucketkit.spark.writer`):

1. resolve the target: a path (:func:`path_target`) or a catalog table, with the spec it has;
2. reconcile the write's spec with the table's (:func:`reconcile`);
3. stage: Spark writes one file per (partition, bucket) below ``<staging>/data`` as
   ``<partition>/bucketkit_bucket=<b>/part-*``;
4. finalize (:func:`finalize`): give the staged files their final names (``000003_0_<write
   id>.orc`` or ``<write id>_bucket-00003.orc``), add empty bucket files if asked, and commit them
   with :class:`bucketkit.writing.commit.Transaction`; the result is a :class:`WriteResult`.

Nothing here imports pyspark, so steps 1, 2 and 4 are tested without a JVM.
"""

from __future__ import annotations

import contextlib
import functools
import posixpath
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Literal, Sequence, get_args

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.writing.commit import CommitSummary, Transaction, visible_files
from bucketkit.writing.recovery import RecoveryAction
from bucketkit.errors import InvalidArgumentError, SpecMismatchError, TableExistsError, TableNotFoundError
from bucketkit.hashing.hive import check_bucketable
from bucketkit.io import (COMPRESSIONS, DEFAULT_COMPRESSION, empty_file, ensure_dir, footer_rows, is_hidden_path,
                          read_schema, resolve_filesystem)
from bucketkit.layout.metadata import METADATA_FILE, TableSpec, read_spec, spelled_as
from bucketkit.layout.naming import HIVE, LEGACY_PRESTO
from bucketkit.layout.partitions import parse_partition_path, partition_path

__all__ = ["Mode", "OverwriteScope", "MODES", "OVERWRITE_SCOPES", "WriteOptions", "WriteTarget",
           "WriteResult", "WrittenFile", "PartitionWrite", "path_target", "reconcile", "finalize",
           "staged_groups", "recovered_partitions", "file_name", "empty_file_bytes", "BUCKET_COLUMN", "STAGED_DATA"]

Mode = Literal["error", "append", "overwrite", "ignore"]
OverwriteScope = Literal["table", "partitions"]
MODES: tuple[str, ...] = get_args(Mode)
OVERWRITE_SCOPES: tuple[str, ...] = get_args(OverwriteScope)
BUCKET_COLUMN = "bucketkit_bucket"  # the bucket id column; a partitionBy level of the staged output only
STAGED_DATA = "data"  # Spark's output directory inside the write's staging directory


def _choice(option: str, value: object, valid: tuple[str, ...]) -> str:
    if value not in valid:
        raise InvalidArgumentError(f"{option}={value!r}: expected one of {list(valid)}")
    return value  # type: ignore[return-value]


@dataclass(frozen=True)
class WriteOptions:
    """How a write goes, checked once when built (an error lists the valid values).

    The spec's own options (``file_format``, ``naming``, ``bucketing_version``) are checked by
    :class:`~bucketkit.layout.metadata.TableSpec`; the codec by :meth:`codec`, which needs the format.
    """

    mode: Mode = "error"
    overwrite_scope: OverwriteScope = "table"
    compression: str | None = None
    create_empty_bucket_files: bool = False
    num_tasks: int | None = None

    def __post_init__(self) -> None:
        _choice("mode", self.mode, MODES)
        _choice("overwrite_scope", self.overwrite_scope, OVERWRITE_SCOPES)
        if self.num_tasks is not None and (not isinstance(self.num_tasks, int) or self.num_tasks < 1):
            raise InvalidArgumentError(f"num_tasks={self.num_tasks!r}: expected a positive int or None")

    def codec(self, file_format: str) -> str:
        """The compression codec for ``file_format`` (``snappy`` unless given)."""
        return _choice(f"compression (for {file_format})", (self.compression or DEFAULT_COMPRESSION).lower(),
                       COMPRESSIONS[file_format])

    @property
    def replaces_table(self) -> bool:
        """An overwrite of the whole table (not only of the partitions written)."""
        return self.mode == "overwrite" and self.overwrite_scope == "table"

    @property
    def commit_mode(self) -> str:
        """The :class:`~bucketkit.writing.commit.Transaction` mode (``ignore`` commits only into a new table)."""
        return "error" if self.mode == "ignore" else self.mode


@dataclass(frozen=True)
class WriteTarget:
    """Where a write goes: the table's location (path or URI), its filesystem and root inside it,
    the spec it has (None: no table yet) and its catalog name (catalog tables)."""

    location: str
    filesystem: pafs.FileSystem
    root: str
    existing: TableSpec | None
    table: str | None = None

    def __str__(self) -> str:
        return self.table or self.location


def path_target(path: str, filesystem: pafs.FileSystem | None, mode: str) -> WriteTarget:
    """The target of a write to a table directory; refuses to mix with files of unknown origin."""
    fs, root = resolve_filesystem(path, filesystem)
    try:
        existing = read_spec(root, fs)
    except TableNotFoundError:
        existing = None
        if visible_files(fs, root) and mode in ("error", "append", "ignore"):
            raise (TableExistsError if mode != "append" else TableNotFoundError)(
                f"{path}: the directory holds files but no bucketkit metadata ({METADATA_FILE}); "
                "bucketkit will not mix its files with unknown ones (use mode='overwrite' to replace them)")
    return WriteTarget(path, fs, root, existing)


def reconcile(spec: TableSpec, target: WriteTarget, options: WriteOptions) -> tuple[TableSpec, tuple[str, ...]]:
    """The spec the write goes ahead with, and the column order to select (``()``: as given).

    The same columns in another order are written in the table's order. Appending, overwriting
    partitions or writing a catalog table needs the table's spec; a whole-table overwrite of a path
    table may change it.
    """
    existing, order = target.existing, ()
    if existing is not None:
        if options.mode == "error":
            raise TableExistsError(f"{target} exists (mode='error'); use mode='append', 'overwrite' or 'ignore'")
        types = {c.lower(): t for c, t in spec.column_types.items()}  # names are case-insensitive
        if set(types) == {c.lower() for c in existing.column_types}:  # written as the table orders and spells them
            order = tuple(c for c, _ in existing.columns) + existing.partitioned_by
            parts = tuple(spelled_as(spec.partitioned_by, order))
            spec = spec.with_(columns=tuple((c, types[c.lower()]) for c in order if c not in parts),
                              partitioned_by=parts)
        if target.table is not None:  # a catalog table bucketed on a type no write here hashes (a CHAR, as in
            for column, hive_type in zip(existing.bucketed_by, existing.bucket_types):  # SQL): say so, not a mismatch
                check_bucketable(column, hive_type)
        diffs = existing.differences(spec)
        if diffs and (options.mode == "append" or options.overwrite_scope == "partitions" or target.table):
            raise SpecMismatchError(f"{target}: the write's spec differs from the table's: " + "; ".join(diffs))
    if target.table is not None and any(not s.ascending for s in spec.sorted_by):
        raise InvalidArgumentError(f"table {target.table!r}: Spark's catalog accepts only ascending SORTED BY "
                                   f"columns, got {[str(s) for s in spec.sorted_by]}")
    return spec, order


# -- results ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WrittenFile:
    """One file a write added: its bucket, full path (inside the filesystem), rows and bytes."""

    bucket: int
    path: str
    rows: int | None  # None: not counted (a TEXTFILE table's files have no footer)
    bytes: int


def _counted(rows: int | None) -> str:
    return "rows not counted" if rows is None else f"{rows} rows"


def _total(rows: Iterable[int | None]) -> int | None:
    """The sum of row counts, or None if one was not counted."""
    counts = list(rows)
    return None if any(r is None for r in counts) else sum(counts)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PartitionWrite:
    """The files a write added to one partition (``values == {}`` for an unpartitioned table)."""

    values: dict[str, str]
    path: str
    files: tuple[WrittenFile, ...]

    @property
    def rows(self) -> int | None:
        return _total(f.rows for f in self.files)

    def files_by_bucket(self) -> dict[int, tuple[WrittenFile, ...]]:
        out: dict[int, list[WrittenFile]] = {}
        for f in self.files:
            out.setdefault(f.bucket, []).append(f)
        return {b: tuple(v) for b, v in sorted(out.items())}


@dataclass(frozen=True)
class WriteResult:
    """What :func:`bucketkit.write` did. Printable; ``skipped`` is True for ``mode="ignore"`` on an existing table."""

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
    def rows(self) -> int | None:
        return _total(f.rows for f in self.files)

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def __str__(self) -> str:
        target = self.table or self.location
        if self.skipped:
            return f"{target}: exists, nothing written (mode='ignore')"
        done = {"append": "appended", "overwrite": "overwrote with"}.get(self.mode, "created with")
        lines = [f"{target}: {done} {_counted(self.rows)} in {len(self.files)} files ({self.bytes} bytes), "
                 f"{len(self.partitions)} partition(s), write {self.write_id}"
                 + (f", replaced {self.replaced_files} files" if self.replaced_files else "")]
        for p in self.partitions[:20]:
            label = p.path or "(table root)"
            lines.append(f"  {label}: {_counted(p.rows)}, {len(p.files)} files, "
                         f"{sum(1 for f in p.files if f.rows == 0)} empty")
        if len(self.partitions) > 20:
            lines.append(f"  ... {len(self.partitions) - 20} more partitions")
        return "\n".join(lines)


# -- finalize --------------------------------------------------------------------------------------
@contextlib.contextmanager
def aborting(tx: Transaction) -> Iterator[None]:
    """Discard the write's staged files if the block fails (before the commit)."""
    try:
        yield
    except BaseException:
        tx.abort()
        raise


def finalize(tx: Transaction, options: WriteOptions, target: WriteTarget, *, recovered: tuple[str, ...] = (),
             on_committed: Callable[[list[dict[str, str]]], None] | None = None,
             also_replace: Sequence[str] = (), before_commit: Callable[[], None] | None = None) -> WriteResult:
    """Name the files staged below ``<tx.staging>/data``, add empty bucket files if asked, commit.

    Args:
        tx: the begun transaction whose staging directory holds the staged output.
        options: the write's options (mode, overwrite scope, empty bucket files).
        target: the table written.
        recovered: what recovery did before the write (carried into the result).
        on_committed: called with the values of the partitions written once the new version is
            live (the Spark writer updates the catalog there).
        also_replace: partition paths the write covers even without rows in them (a SQL
            ``INSERT ... PARTITION (p='x')``, whose partition exists, and is emptied by an overwrite,
            whether or not the query returned rows).
        before_commit: called just before the commit; what it raises rolls the write back (the Spark
            writer checks the catalog table is still located where the write began).
    """
    with aborting(tx):
        groups = staged_groups(tx.fs, posixpath.join(tx.staging, STAGED_DATA))
        files = _named_files(tx.fs, tx.spec, tx.write_id, groups)
        if options.create_empty_bucket_files:
            files.update(_empty_bucket_files(tx, groups, next((f.path for f in files.values()), None)))
        if before_commit is not None:
            before_commit()
    written = sorted({p for p, _ in groups} | set(also_replace) | ({""} if not tx.spec.partitioned_by else set()))
    tx.extra["partitions"] = [parse_partition_path(p) for p in written if p]
    replace = None if options.replaces_table else written
    done = functools.partial(on_committed, tx.extra["partitions"]) if on_committed else None
    summary = tx.commit({rel: f.path for rel, f in files.items()},
                        replace=replace if options.mode == "overwrite" else None, on_committed=done,
                        rows=_total(f.rows for f in files.values()))
    return WriteResult(str(target.location), tx.spec, options.mode, tx.write_id, _partitions(tx.published, summary, files),
                       len(summary.replaced), target.table, recovered=recovered)


def recovered_partitions(actions: Sequence[RecoveryAction], table: str | None) -> list[dict[str, str]]:
    """The partitions that writes :func:`~bucketkit.writing.recovery.recover` rolled forward committed into the
    catalog table ``table``: their files are live, but the dead writer may not have registered them."""
    return [p for a in actions if table and a.state == "rolled forward" and a.extra.get("catalog") == table
            for p in a.extra.get("partitions", [])]


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


def file_name(spec: TableSpec, write_id: str, bucket: int, copy: int = 0) -> str:
    """The final name of a bucket's file (``copy`` > 0 only if Spark split a group's file)."""
    ext = "" if spec.file_format == "text" else "." + spec.file_format  # Hive names its text files without one
    if spec.naming == "legacy-presto":
        return LEGACY_PRESTO.format(bucket, query_id=write_id, tail=(f"_{copy}" if copy else "") + ext)
    return HIVE.format(bucket, copy=copy or None, tail=write_id + ext)


def _named_files(fs: pafs.FileSystem, spec: TableSpec, write_id: str,
                 groups: dict[tuple[str, int], list[pafs.FileInfo]]) -> dict[str, WrittenFile]:
    """Final relative path -> the staged file (its staged path, bucket, rows, bytes)."""
    files: dict[str, WrittenFile] = {}
    for (part, bucket), staged in sorted(groups.items()):
        for copy, info in enumerate(staged):
            files[posixpath.join(part, file_name(spec, write_id, bucket, copy))] = WrittenFile(
                bucket, info.path, None if spec.file_format == "text" else footer_rows(fs, info.path, spec.file_format),
                info.size)
    return files


def _empty_bucket_files(tx: Transaction, groups: dict[tuple[str, int], list[pafs.FileInfo]],
                        sample: str | None) -> dict[str, WrittenFile]:
    """A valid empty file for every bucket without rows, in each partition written (Hive's behaviour)."""
    spec, fs = tx.spec, tx.fs
    partitions = sorted({p for p, _ in groups}) or ([""] if not spec.partitioned_by else [])
    content = empty_file_bytes(fs, spec, sample)
    files: dict[str, WrittenFile] = {}
    for part in partitions:
        for bucket in range(spec.bucket_count):
            if (part, bucket) in groups:
                continue
            rel = posixpath.join(part, file_name(spec, tx.write_id, bucket))
            staged = posixpath.join(tx.staging, "empty", rel)
            ensure_dir(fs, posixpath.dirname(staged))
            with fs.open_output_stream(staged) as out:
                out.write(content)
            files[rel] = WrittenFile(bucket, staged, 0, len(content))
    return files


def _partitions(root: str, summary: CommitSummary, files: dict[str, WrittenFile]) -> tuple[PartitionWrite, ...]:
    """The committed files per partition, with their final paths, in bucket order."""
    by_part: dict[str, list[WrittenFile]] = {}
    for rel in summary.added:
        f = files[rel]
        by_part.setdefault(posixpath.dirname(rel), []).append(
            WrittenFile(f.bucket, posixpath.join(root, rel), f.rows, f.bytes))
    return tuple(PartitionWrite(parse_partition_path(p), p, tuple(sorted(fl, key=lambda f: f.bucket)))
                 for p, fl in sorted(by_part.items()))


# -- file formats ----------------------------------------------------------------------------------
def empty_table_schema(spec: TableSpec) -> pa.Schema:
    """The Arrow schema of the table's data files (data columns, table order)."""
    from bucketkit.hivetypes import arrow_type_of_hive

    return pa.schema([pa.field(n, arrow_type_of_hive(t)) for n, t in spec.columns])


def empty_file_bytes(fs: pafs.FileSystem, spec: TableSpec, sample: str | None) -> bytes:
    """A valid ORC/Parquet file with no rows and the table's schema (taken from a written file if
    any, so that Spark's own column metadata is kept): :func:`bucketkit.io.empty_file`."""
    if spec.file_format == "text":
        return b""  # an empty text file has no rows, as Hive writes an empty bucket's
    schema = empty_table_schema(spec) if sample is None else read_schema(fs, sample, spec.file_format)
    return empty_file(schema, spec.file_format)
