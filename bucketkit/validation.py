"""``bucketkit.validate``: re-hash every row of a bucketed table and report the rows in the wrong bucket.

It plans the table as a scan does (:func:`bucketkit.pruning.plan.plan_scan`) and reads each of its
read units (:mod:`bucketkit.units`) -- a data file, or one bucket of a Hive ACID partition's snapshot
-- for the bucket columns only (footers and column chunks, no Spark), computes each row's bucket with
the table's bucket function (Hive v1/v2 or Spark's ``bucketBy`` hash) and compares it with the
unit's bucket. The result is plain data: printable, and ``to_dict()`` is what
``bucketkit validate --json`` prints.

The module is not named ``validate`` so that importing it never shadows the function
``bucketkit.validate``.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.errors import BucketkitError, InvalidArgumentError, TableNotFoundError
from bucketkit.io import DataFile, detect_data_file, detect_format, resolve_filesystem
from bucketkit.layout.discovery import infer_partition_keys
from bucketkit.layout.metadata import TableSpec, check_table_dir, read_spec
from bucketkit.layout.manifest import MANIFEST_FILE, listed_files, record_manifest
from bucketkit.pruning.plan import PartitionScan, plan_scan
from bucketkit.table import BucketedTable, open_table, reference_kind
from bucketkit.trust import spec_doubt
from bucketkit.layout.versions import live_root, vanished
from bucketkit.units import ReadUnit, TableKind, row_value

__all__ = ["validate", "ValidationResult", "MisplacedRow", "detect_file"]


@dataclass(frozen=True)
class MisplacedRow:
    """A row stored in the file of one bucket that its key hashes to another.

    For a Hive ACID table, ``file`` is the partition directory, ``row_id`` Hive's identity of the
    row (``row__id``: write id, encoded bucket, row id) and ``row`` its row id: an ACID bucket's
    rows are a snapshot merged from several files.
    """

    file: str
    row: int
    bucket: int
    expected_bucket: int
    key: tuple[Any, ...]
    row_id: tuple[int, int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"file": self.file, "row": self.row, "bucket": self.bucket, "expected_bucket": self.expected_bucket,
               "key": list(self.key)}
        return out if self.row_id is None else {**out, "row_id": list(self.row_id)}

    def __str__(self) -> str:
        where = f"{self.file} row {self.row}" if self.row_id is None else \
            f"{self.file} row__id (writeid, bucketid, rowid) {self.row_id}"
        return f"{where}: key {list(self.key)} is in bucket {self.bucket}, belongs in bucket {self.expected_bucket}"


@dataclass(frozen=True)
class ValidationResult:
    """What :func:`validate` checked and found.

    Attributes:
        root: the table directory checked.
        bucket_function: the bucket function rows were re-hashed with, in words.
        spec_source: where the spec came from: ``"bucketkit metadata"``, ``"arguments"`` or
            ``"table"`` (a :class:`~bucketkit.table.BucketedTable` was given).
        files_checked, rows_checked: what was read and re-hashed.
        misplaced: every row found in the wrong bucket.
        skipped: files or partitions not checked, each with the reason.
        vouched: with ``vouch=True``: where the manifest that vouches for the files was written, or why none
            was (:mod:`bucketkit.layout.manifest`); None when not asked.
    """

    root: str
    bucket_function: str
    spec_source: str
    files_checked: int = 0
    rows_checked: int = 0
    misplaced: tuple[MisplacedRow, ...] = ()
    skipped: tuple[str, ...] = ()
    vouched: str | None = None

    @property
    def misplaced_rows(self) -> int:
        return len(self.misplaced)

    @property
    def ok(self) -> bool:
        """True when every row checked is in its bucket."""
        return not self.misplaced

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "spec_source": self.spec_source, "bucket_function": self.bucket_function,
                "files_checked": self.files_checked, "rows_checked": self.rows_checked,
                "misplaced_rows": self.misplaced_rows, "skipped": list(self.skipped), "vouched": self.vouched,
                "misplaced": [m.to_dict() for m in self.misplaced]}

    def format(self, max_report: int = 20) -> str:
        """A report listing at most ``max_report`` misplaced rows."""
        lines = [f"{self.root}: {self.bucket_function}; checked {self.rows_checked} rows in {self.files_checked} "
                 f"files (spec from {self.spec_source})"]
        lines += [f"  misplaced: {row}" for row in self.misplaced[:max_report]]
        if len(self.misplaced) > max_report:
            lines.append(f"  ... {len(self.misplaced) - max_report} more misplaced rows (--json lists all)")
        lines += [f"skipped: {s}" for s in self.skipped]
        if self.vouched is not None:
            lines.append(f"vouch: {self.vouched}")
        lines.append(f"{len(self.misplaced)} misplaced row(s)" if self.misplaced else "ok: every row is in its bucket")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def validate(table: str | os.PathLike[str] | BucketedTable, *, filesystem: pafs.FileSystem | None = None,
             bucketed_by: Sequence[str] | str | None = None, bucket_count: int | None = None,
             bucketing_version: int | None = None, bucket_types: Sequence[str] | None = None,
             partitioned_by: Sequence[str] | None = None, table_columns: dict[str, str] | None = None,
             hash_family: str | None = None, partition_filter: Callable[[dict[str, str]], bool] | None = None,
             sample: float | None = None, every: int | None = None,
             write_ids: str | None = None, vouch: bool = False) -> ValidationResult:
    """Re-hash the bucket columns of every row and report each row stored in the wrong bucket.

    Args:
        table: a table directory (local path or URI; a string is always a directory here, as
            for :func:`~bucketkit.table.open_table`) or a :class:`~bucketkit.table.BucketedTable`
            (for a catalog table: :func:`bucketkit.spark.catalog.resolve_table`).
        filesystem: a pyarrow filesystem for a path.
        bucketed_by, bucket_count, bucketing_version, bucket_types, table_columns, hash_family: the
            spec of a table without bucketkit metadata, as :func:`bucketkit.table.open_table`
            takes it; with metadata they must agree with it. The hash is never guessed.
        partitioned_by: partition columns in directory order (default: from the ``k=v``
            directories, or the metadata).
        partition_filter: called with each partition's values; only partitions it accepts are checked.
        sample: check a seeded random fraction of each file's rows.
        every: check every ``every``-th row of each file.
        write_ids: for a Hive ACID table, the snapshot to check (Hive's ValidWriteIdList string);
            None: every write id in the directory names. An ACID partition is checked bucket by
            bucket on its snapshot's rows (base + deltas - delete events), as readers see them:
            deleted rows and rows of open or aborted writes are not checked.
        vouch: when every row of every file was checked and found in place, and no file changed meanwhile,
            record the files in the table's manifest (``_bucketkit_files.json``): bucketkit's reads and the
            SQL catalog then read them without re-hashing each row, until a file is added, removed or
            rewritten (:mod:`bucketkit.layout.manifest`). ``result.vouched`` says where, or why not.

    Returns:
        A :class:`ValidationResult`; ``ok`` is False when a row is in the wrong bucket.

    Raises:
        InvalidArgumentError: the hash is unknown (no ``bucketing_version`` nor ``hash_family``
            for a table without metadata, or a bucket type without a hash), or bad arguments.
        TableNotFoundError: the path is not a table directory.
    """
    pick = _row_picker(sample, every)
    opened, source = _open(table, filesystem, partitioned_by, dict(
        bucketed_by=bucketed_by, bucket_count=bucket_count, bucketing_version=bucketing_version,
        bucket_types=bucket_types, table_columns=table_columns, hash_family=hash_family))
    doubt = opened.unbucketed_reason or spec_doubt(opened.spec)
    if doubt:
        raise InvalidArgumentError(f"{table}: cannot validate, the hash is unknown: {doubt} "
                                   "(on the command line: --bucketing-version 1|2 or --hash-family spark)")
    plan = plan_scan(opened, write_ids=write_ids, partition_filter=partition_filter)
    before = listed_files(opened.filesystem, plan.root or opened.location) if vouch else None
    tally = _Tally(opened.filesystem, opened.spec, pick, plan.kind)
    skip = {tuple(p.values.items()): _skip_reason(p, opened.spec, plan.unbucketed) for p in plan.partitions}
    tally.skipped += [reason for reason in skip.values() if reason]
    for unit in plan.units():
        if not skip[unit.partition] and not unit.empty:
            tally.check(unit)
    vouched = None if before is None else _vouch(opened, plan, before, tally, (sample, every, partition_filter))
    return ValidationResult(opened.location, str(tally.function), source, tally.files, tally.rows,
                            tuple(tally.misplaced), tuple(tally.skipped), vouched)


def _vouch(table: BucketedTable, plan: Any, before: dict, tally: Any, partial: tuple) -> str:
    """Record the validated files in the table's manifest, or say why not (``validate(vouch=True)``)."""
    fs, root = table.filesystem, plan.root or table.location
    why = ("rows were missed: " + "; ".join(tally.skipped) if tally.skipped
           else "misplaced rows were found" if tally.misplaced
           else "not every row was checked (sample, every or a partition filter)" if any(x is not None for x in partial)
           else f"{table} is a {plan.kind.name} table, whose reads check their own units" if plan.kind is not None
           else f"{table} is hashed with {table.spec.hashing}, not Hive's" if table.spec.hash_family != "hive"
           else "the table changed while it was validated" if listed_files(fs, root) != before else None)
    if why:
        return f"not vouched: {why}"
    live = live_root(fs, table.location)  # an object store's table: the version its pointer names
    record_manifest(fs, live, table.spec, "validate", before)
    return f"vouched: {len(before)} file(s) recorded in " + posixpath.join(live, MANIFEST_FILE)


def _skip_reason(part: PartitionScan, spec: TableSpec, doubt: str | None) -> str | None:
    """Why a partition's rows are not judged: its files are named by another hash family's writer, or no
    bucket scheme places them."""
    if -1 in part.bucket_files:
        return f"{part.path}: files no bucket scheme places, not checked ({doubt})"
    if (part.scheme == "spark") != (spec.hash_family == "spark") and part.scheme != "empty":
        return (f"{part.path}: {part.scheme} file names in a table hashed with {spec.hashing}; which hash placed "
                "these rows is unknown, not checked")
    return None


def _open(table: str | os.PathLike[str] | BucketedTable, filesystem: pafs.FileSystem | None, partitioned_by: Sequence[str] | None,
          spec_args: dict[str, Any]) -> tuple[BucketedTable, str]:
    """The table (a foreign one partitioned by ``partitioned_by``, else by what its ``k=v`` directories
    name) and where its spec came from."""
    if isinstance(table, BucketedTable):
        return table, "table"
    path = os.path.expanduser(os.fspath(table))
    fs, root = resolve_filesystem(path, filesystem)
    try:
        check_table_dir(path, fs, root)  # a file or missing path is not "a table without metadata"
    except TableNotFoundError as exc:
        if isinstance(table, str) and filesystem is None and _catalog_name(table):
            raise TableNotFoundError(
                f"{exc}. {table!r} is spelled as a catalog table name; validate reads a table's files without "
                f"Spark: pass its location (DESCRIBE FORMATTED {table}), or bucketkit.spark.catalog.resolve_table("
                f"spark, {table!r}); a directory in the working directory is './{table}'") from None
        raise
    try:
        read_spec(root, fs)
    except TableNotFoundError:
        keys = partitioned_by if partitioned_by is not None else infer_partition_keys(fs, root)
        return open_table(root, filesystem=fs, partitioned_by=keys, **spec_args), "arguments"
    return open_table(root, filesystem=fs, **spec_args), "bucketkit metadata"


def _catalog_name(table: str) -> bool:
    try:
        return reference_kind(table) == "catalog"
    except InvalidArgumentError:
        return False


def _row_picker(sample: float | None, every: int | None) -> Callable[[int], Any]:
    """``rows(n)``: the indices of a file's rows to check (all, every N-th, or a seeded sample)."""
    if sample is not None and every is not None:
        raise InvalidArgumentError(f"sample={sample!r}, every={every!r}: give one of them, not both")
    if every is not None:
        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            raise InvalidArgumentError(f"every={every!r}: expected a positive int")
        return lambda n: np.arange(0, n, every)
    if sample is not None:
        rng = np.random.default_rng(0)  # one stream over the files in listing order: reproducible
        return lambda n: np.flatnonzero(rng.random(n) < sample)
    return np.arange


@dataclass
class _Tally:
    """Checks read units one by one and keeps count."""

    fs: Any
    spec: TableSpec
    pick: Callable[[int], Any]
    kind: TableKind | None = None
    files: int = 0
    rows: int = 0
    misplaced: list[MisplacedRow] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.function = self.spec.bucket_function()
        names = [c for c, _ in self.spec.columns] or list(self.spec.bucketed_by)
        self.target = pa.schema([(c, pa.null()) for c in names])  # the table's names: file columns map to them

    def check(self, unit: ReadUnit) -> None:
        """Re-hash the bucket columns of one unit's rows. A unit whose rows are its data files' (a plain
        file; an insert-only ACID bucket's current files) is checked file by file, naming the file and
        row; one whose rows are merged (delete events) is checked on what readers see -- deleted rows
        and rows of open or aborted writes are not checked -- naming each row by its identity."""
        row_id = self.kind is not None and self.kind.row_id_refused("") is None
        if unit.source is not None and (row_id or unit.delete_files):
            table = unit.read(self.fs, self.spec.file_format, row_id=row_id, columns=list(self.spec.bucketed_by))
            self.files += len(unit.data_files)
            self._compare(unit.path, self._keys(table, unit.describe()), table.num_rows, unit.bucket,
                          table.column("row__id") if row_id else None)
            return
        for path in unit.data_files:
            self._check_file(ReadUnit(path, 1, unit.bucket, unit.partition))

    def _check_file(self, unit: ReadUnit) -> None:
        try:
            fmt = detect_format(self.fs, unit.path)
        except FileNotFoundError:
            raise vanished(posixpath.dirname(unit.path), unit.path) from None
        if fmt is None:
            if self.fs.get_file_info(unit.path).size:  # an empty file is an empty bucket: nothing to check
                self.skipped.append(f"{unit.path}: neither ORC nor Parquet, not checked")
            return
        batches = list(unit.batches(self.fs, list(self.spec.bucketed_by), self.target, fmt))
        table = pa.Table.from_batches(batches) if batches else pa.table({})
        self.files += 1
        self._compare(unit.path, self._keys(table, unit.describe()), table.num_rows, unit.bucket)

    def _keys(self, table: pa.Table, where: str) -> list:
        missing = [c for c in self.spec.bucketed_by if c not in table.column_names]
        if missing and table.num_rows:
            raise BucketkitError(f"{where}: bucket column(s) {missing} not found among its columns "
                                 f"{[c for c in table.column_names if c != 'row__id']}")
        return [table.column(c) if c in table.column_names else pa.array([]) for c in self.spec.bucketed_by]

    def _compare(self, where: str, arrays: list, n: int, bucket: int, row_ids: Any = None) -> None:
        """Re-hash the picked rows of ``arrays`` (``n`` rows found in ``bucket``); keep the misplaced."""
        rows = self.pick(n)
        if len(rows) < n:
            arrays = [a.take(rows) for a in arrays]
        expected = self.function.bucket_ids(arrays)
        self.rows += len(rows)
        for i in np.flatnonzero(expected != bucket):
            key = tuple(row_value(a, int(i)) for a in arrays)
            if row_ids is None:
                self.misplaced.append(MisplacedRow(where, int(rows[i]), bucket, int(expected[i]), key))
                continue
            rid = row_ids[int(rows[i])].as_py()
            self.misplaced.append(MisplacedRow(where, rid["rowid"], bucket, int(expected[i]), key,
                                               (rid["writeid"], rid["bucketid"], rid["rowid"])))


def detect_file(fs: pafs.FileSystem, path: str) -> DataFile | None:
    """:func:`bucketkit.io.detect_data_file` (None: neither ORC nor Parquet); a file deleted since
    the listing is a :func:`~bucketkit.layout.versions.vanished` error."""
    try:
        return detect_data_file(fs, path)
    except FileNotFoundError:
        raise vanished(posixpath.dirname(path), path) from None
