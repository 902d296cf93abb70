"""``bucketkit.validate``: re-hash every row of a bucketed table and report the rows in the wrong bucket.

It reads only the bucket columns of each ORC/Parquet file (footers and column chunks, no Spark),
computes each row's bucket with the table's bucket function (Hive v1/v2 or Spark's ``bucketBy``
hash) and compares it with the bucket of the file the row sits in. The result is plain data:
printable, and ``to_dict()`` is what ``bucketkit validate --json`` prints.

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

from bucketkit.acid.read import bucket_files, read_bucket, snapshot, state_buckets
from bucketkit.errors import BucketkitError, InvalidArgumentError, TableNotFoundError
from bucketkit.io import DataFile, detect_data_file, file_columns, resolve_filesystem
from bucketkit.layout.discovery import PartitionLayout, discover
from bucketkit.layout.metadata import TableSpec, check_table_dir, read_spec
from bucketkit.table import BucketedTable, open_table
from bucketkit.trust import spec_doubt
from bucketkit.layout.versions import vanished

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
    """

    root: str
    bucket_function: str
    spec_source: str
    files_checked: int = 0
    rows_checked: int = 0
    misplaced: tuple[MisplacedRow, ...] = ()
    skipped: tuple[str, ...] = ()

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
                "misplaced_rows": self.misplaced_rows, "skipped": list(self.skipped),
                "misplaced": [m.to_dict() for m in self.misplaced]}

    def format(self, max_report: int = 20) -> str:
        """A report listing at most ``max_report`` misplaced rows."""
        lines = [f"{self.root}: {self.bucket_function}; checked {self.rows_checked} rows in {self.files_checked} "
                 f"files (spec from {self.spec_source})"]
        lines += [f"  misplaced: {row}" for row in self.misplaced[:max_report]]
        if len(self.misplaced) > max_report:
            lines.append(f"  ... {len(self.misplaced) - max_report} more misplaced rows (--json lists all)")
        lines += [f"skipped: {s}" for s in self.skipped]
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
             write_ids: str | None = None) -> ValidationResult:
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

    Returns:
        A :class:`ValidationResult`; ``ok`` is False when a row is in the wrong bucket.

    Raises:
        InvalidArgumentError: the hash is unknown (no ``bucketing_version`` nor ``hash_family``
            for a table without metadata, or a bucket type without a hash), or bad arguments.
        TableNotFoundError: the path is not a table directory.
    """
    pick = _row_picker(sample, every)
    opened, partitioned_by, source = _open(table, filesystem, partitioned_by, dict(
        bucketed_by=bucketed_by, bucket_count=bucket_count, bucketing_version=bucketing_version,
        bucket_types=bucket_types, table_columns=table_columns, hash_family=hash_family))
    doubt = opened.unbucketed_reason or spec_doubt(opened.spec)
    if doubt:
        raise InvalidArgumentError(f"{table}: cannot validate, the hash is unknown: {doubt} "
                                   "(on the command line: --bucketing-version 1|2 or --hash-family spark)")
    layout = discover(opened.location, opened.spec.bucket_count, filesystem=opened.filesystem,
                      partitioned_by=partitioned_by, partition_filter=partition_filter)
    tally = _Tally(layout.filesystem, opened.spec, pick, write_ids)
    for part in layout.partition_layouts:
        tally.check_partition(part)
    return ValidationResult(layout.root, str(tally.function), source, tally.files, tally.rows, tuple(tally.misplaced),
                            tuple(tally.skipped))


def _open(table: str | os.PathLike[str] | BucketedTable, filesystem: pafs.FileSystem | None, partitioned_by: Sequence[str] | None,
          spec_args: dict[str, Any]) -> tuple[BucketedTable, Sequence[str] | None, str]:
    """The table, the partition columns to list it with (None: from its directories), the spec's source."""
    if isinstance(table, BucketedTable):
        return table, table.spec.partitioned_by, "table"
    path = os.path.expanduser(os.fspath(table))
    fs, root = resolve_filesystem(path, filesystem)
    check_table_dir(path, fs, root)  # a file or missing path is not "a table without metadata"
    try:
        read_spec(root, fs)
    except TableNotFoundError:
        opened = open_table(root, filesystem=fs, partitioned_by=partitioned_by, **spec_args)
        return opened, partitioned_by, "arguments"
    opened = open_table(root, filesystem=fs, **spec_args)
    return opened, opened.spec.partitioned_by, "bucketkit metadata"


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
    """Checks files one by one and keeps count."""

    fs: Any
    spec: TableSpec
    pick: Callable[[int], Any]
    write_ids: str | None = None
    files: int = 0
    rows: int = 0
    misplaced: list[MisplacedRow] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.function = self.spec.bucket_function()

    def check_partition(self, part: PartitionLayout) -> None:
        spec = self.spec
        if (part.scheme == "spark") != (spec.hash_family == "spark") and part.scheme != "empty":
            self.skipped.append(f"{part.path}: {part.scheme} file names in a table hashed with {spec.hashing}; "
                                "which hash placed these rows is unknown, not checked")
            return
        if part.scheme == "acid" and any(f.name.startswith("bucket_") for fs in part.buckets.values() for f in fs):
            self.check_acid(part.path)
            return
        for bucket, bucket_files in part.buckets.items():
            for f in bucket_files:
                if f.size != 0 and f.kind != "delete_delta":
                    self.check_file(f.path, bucket)

    def check_acid(self, root: str) -> None:
        """Re-hash the snapshot rows of each bucket of a full-ACID partition (what readers see)."""
        state = snapshot(self.fs, root, self.write_ids)
        for bucket in state_buckets(state):
            files = bucket_files(state, bucket)
            if not files.inserts and not files.originals:
                continue
            table = read_bucket(self.fs, root, state, bucket, write_ids=self.write_ids, row_id=True,
                                columns=list(self.spec.bucketed_by))
            self.files += len(files.inserts) + len(files.originals)
            missing = [c for c in self.spec.bucketed_by if c not in table.column_names]
            if missing:
                raise BucketkitError(f"{root}: bucket column(s) {missing} not found in the ACID files' row struct")
            self._compare(root, [table.column(c) for c in self.spec.bucketed_by], table.num_rows, bucket,
                          table.column("row__id"))

    def check_file(self, path: str, bucket: int) -> None:
        reader = detect_file(self.fs, path)
        if reader is None:
            self.skipped.append(f"{path}: neither ORC nor Parquet, not checked")
            return
        with reader:
            arrays, n = _bucket_columns(reader, self.spec)
        self.files += 1
        self._compare(path, arrays, n, bucket)

    def _compare(self, where: str, arrays: list, n: int, bucket: int, row_ids: Any = None) -> None:
        """Re-hash the picked rows of ``arrays`` (``n`` rows found in ``bucket``); keep the misplaced."""
        rows = self.pick(n)
        if len(rows) < n:
            arrays = [a.take(rows) for a in arrays]
        expected = self.function.bucket_ids(arrays)
        self.rows += len(rows)
        for i in np.flatnonzero(expected != bucket):
            key = tuple(a[int(i)].as_py() for a in arrays)
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


def _bucket_columns(reader: DataFile, spec: TableSpec) -> tuple[list, int]:
    """Read only the bucket columns of a file: ``(arrays, rows)``. ACID files nest rows in ``row``."""
    schema = reader.schema
    if "row" in schema.names and pa.types.is_struct(schema.field("row").type):
        table = pa.Table.from_struct_array(reader.read(columns=["row"]).column("row"))
        schema = table.schema
    else:
        table = None
    by_table = file_columns(schema.names, [c for c, _ in spec.columns] or schema.names)
    wanted = []
    for name in spec.bucketed_by:
        if name not in by_table:
            raise BucketkitError(f"bucket column {name!r} not found among the file's columns {schema.names}")
        wanted.append(by_table[name])
    if table is None:
        table = reader.read(columns=wanted)
    return [table.column(c) for c in wanted], table.num_rows
