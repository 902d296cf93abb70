"""The read unit: these data files, plus these delete files, for one (partition, bucket).

Every Python reader of a table reads units: ``bucketkit.join``'s bucket groups, ``bucketkit.scan``'s
Python tasks (Hive ACID tables), the ``bucketkit`` data source and ``bucketkit.validate``. A unit says
where its rows
are (:attr:`ReadUnit.path`), how big it is, which bucket and partition it belongs to, and -- through
its :attr:`ReadUnit.source` -- how its rows are made from its files, the way pyiceberg's
``FileScanTask(data_file, delete_files)`` carries a data file's deletes with it:

* ``source=None``: one plain data file, read as written (Hive, Trino, Spark and bucketkit bucket
  files; original files of no bucket in an unbucketed read);
* a snapshot source, for table kinds whose rows are several files merged: one bucket of a Hive ACID
  partition's snapshot (base + deltas - delete events, :class:`bucketkit.acid.plan.AcidBucket`),
  and next Hudi's file slices (a base file plus log files).

A table kind plugs in twice: its units get a source (:class:`UnitSource`), and its scan plans a
:class:`TableKind` (``ScanPlan.kind``), which plans each partition's snapshot, makes the plan's units,
explains them and checks their files before a task runs. The planner, the readers, the data source
and the join ask the kind, never which kind it is: Hive ACID is one (:class:`bucketkit.acid.plan.AcidKind`). Every reader turns what a unit yields into the table's columns with one rule,
:func:`conform` (file columns by name or Hive's ``_colN`` positions, partition values as typed
constants, columns added later as NULLs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Protocol, Sequence

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.errors import ConcurrentModificationError, CorruptTableError, InvalidArgumentError, VersionNotFoundError
from bucketkit.io import (HIVE_DEFAULT_PARTITION, KEPT_VERSIONS, file_columns, footer_rows, open_data_file, read_file,
                          read_schema)

__all__ = ["ReadUnit", "UnitSource", "TableKind", "conform", "check_placement", "row_value"]


class UnitSource(Protocol):
    """How a kind of read unit makes its rows from its files (picklable: it travels to the tasks)."""

    def files(self, unit: ReadUnit) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The unit's data files and its delete (or log) files, full paths."""

    def rows(self, filesystem: pafs.FileSystem, unit: ReadUnit, file_format: str) -> int | None:
        """Estimated rows (from footers), or None when a footer cannot be read."""

    def schema(self, filesystem: pafs.FileSystem, unit: ReadUnit, file_format: str) -> pa.Schema:
        """The columns the unit's rows have, as its files name them."""

    def read(self, filesystem: pafs.FileSystem, unit: ReadUnit, *, file_format: str, row_id: bool = False,
             columns: Sequence[str] | None = None) -> pa.Table:
        """The unit's rows as one table (``columns`` of them where the kind can read fewer, None: all),
        with the kind's row identity (``row__id``) on request."""

    def batches(self, filesystem: pafs.FileSystem, unit: ReadUnit, columns: Sequence[str], target: pa.Schema,
                file_format: str, batch_rows: int) -> Iterator[pa.RecordBatch]:
        """The unit's rows: ``columns`` of the table's data columns ``target``, named as the table names
        them (a column no file has may be left out: :func:`conform` adds it as NULLs)."""

    def plain_file(self, unit: ReadUnit) -> str | None:
        """The one data file that holds exactly the unit's rows, as written, if there is one (a Hudi file slice
        without log files): readers may then read it as a plain file (Spark's own reader); else None."""

    def describe(self, unit: ReadUnit) -> str:
        """The unit in words, for errors: e.g. ``a file of ACID bucket 3 in <dir>``."""

    def gone(self, unit: ReadUnit) -> str:
        """Why a file of the unit can vanish after a read was planned, in words."""


class TableKind(Protocol):
    """A kind of table whose partitions are snapshots of several files, as its scan plan carries it.

    ``name`` is what plans print (``Hive ACID full``); ``unsorted`` why its units are not sorted files
    (a merge join cannot stream them), or None.
    """

    name: str
    unsorted: str | None

    def plan_partition(self, filesystem: pafs.FileSystem, path: str, *, bucket_count: int,
                       selected: frozenset[int] | None, unbucketed: bool
                       ) -> tuple[Any, dict[int, tuple[str, ...]], dict[str, int]]:
        """One partition's snapshot: ``(state, bucket -> its files, path -> size of every file listed)``."""

    def settled(self, filesystem: pafs.FileSystem, partitions: Sequence[Any], file_format: str) -> TableKind:
        """The kind once every partition is planned (what the files say about it, e.g. full or insert-only)."""

    def units(self, plan: Any) -> list[ReadUnit]:
        """The plan's read units, partition by partition, bucket by bucket."""

    def versions(self) -> str:
        """Which versions of the files the snapshot sees, in a few words (``write ids all committed``)."""

    def describe(self, plan: Any) -> str:
        """The plan's snapshot in words: which versions are visible, which directories are read."""

    def explain_partition(self, where: str, partition: Any) -> list[str]:
        """Plan text of one partition's snapshot."""

    def check(self, filesystem: pafs.FileSystem, plan: Any) -> None:
        """Refuse, before any task runs, files of the plan no reader of the kind would read."""

    def row_id_refused(self, table: str) -> str | None:
        """Why ``row_id=True`` is refused on this table (None: its rows have identities)."""


@dataclass(frozen=True)
class ReadUnit:
    """What one reader reads as a whole, for one (partition, bucket).

    Attributes:
        path: the data file; for a unit with a :attr:`source`, the directory its files are in.
        size: bytes of its files (0: an empty file, never opened).
        bucket: the bucket id (-1: a file of no bucket, read unbucketed).
        partition: the partition values of its directory, ``(name, raw string)`` pairs.
        rows: rows by the footers (-1: not read yet, or unreadable).
        source: how its rows are made from its files (:class:`UnitSource`); None: one plain data file.
        checked: whether a reader that relies on the unit's bucket re-hashes its rows as it reads them: a plain
            Hive-hashed file whose placement no bucketkit commit vouches for
            (:class:`bucketkit.layout.manifest.Placement`).
    """

    path: str
    size: int
    bucket: int
    partition: tuple[tuple[str, str], ...] = ()
    rows: int = -1
    source: Any = None
    checked: bool = False

    @property
    def values(self) -> dict[str, str]:
        """The partition values by name."""
        return dict(self.partition)

    @property
    def data_files(self) -> tuple[str, ...]:
        """The files holding the unit's rows (full paths)."""
        return self.source.files(self)[0] if self.source is not None else (self.path,)

    @property
    def delete_files(self) -> tuple[str, ...]:
        """The files that delete or update rows of its data files (full paths): none for a plain file."""
        return self.source.files(self)[1] if self.source is not None else ()

    @property
    def plain_file(self) -> str | None:
        """The one data file holding exactly the unit's rows as written (a plain unit's own; a kind's where it has
        one: :meth:`UnitSource.plain_file`), or None: the unit's rows are made from several files."""
        return self.path if self.source is None else self.source.plain_file(self)

    @property
    def empty(self) -> bool:
        """Whether there is nothing to read (a zero-byte data file: an empty bucket, never opened)."""
        return self.size <= 0 and self.source is None

    def read(self, filesystem: pafs.FileSystem, file_format: str, *, row_id: bool = False,
             table: str = "", columns: Sequence[str] | None = None) -> pa.Table:
        """The unit's rows as one table, as its files name the columns (:func:`conform` makes them the
        table's), with Hive's ``row__id`` on request where the kind has row identities. ``columns``
        (table names) narrows what a kind reads where it can; None: every column."""
        if self.source is not None:
            return self.source.read(filesystem, self, file_format=file_format, row_id=row_id, columns=columns)
        if row_id:
            raise InvalidArgumentError(f"row_id=True: {table or self.path} is not a Hive ACID table; only full-ACID "
                                       f"tables have Hive's row__id")
        return read_file(filesystem, self.path, file_format)

    def count_rows(self, filesystem: pafs.FileSystem, file_format: str) -> int | None:
        """Rows by the footers of the unit's files (None: a footer cannot be read)."""
        if self.source is not None:
            return self.source.rows(filesystem, self, file_format)
        try:
            return footer_rows(filesystem, self.path, file_format)
        except (OSError, pa.ArrowException):
            return None

    def schema(self, filesystem: pafs.FileSystem, file_format: str) -> pa.Schema:
        """The columns of the unit's rows, as its files name them."""
        if self.source is not None:
            return self.source.schema(filesystem, self, file_format)
        return read_schema(filesystem, self.path, file_format)

    def batches(self, filesystem: pafs.FileSystem, columns: Sequence[str], target: pa.Schema, file_format: str,
                batch_rows: int = 65536) -> Iterator[pa.RecordBatch]:
        """The unit's rows, batch by batch, in file order: ``columns`` of the table's data columns
        ``target``, named as the table names them; a column none of its files has may be missing
        (:func:`conform` adds it). Raises FileNotFoundError when a file is gone."""
        if self.empty:
            return
        path = self.plain_file
        if path is None:
            yield from self.source.batches(filesystem, self, columns, target, file_format, batch_rows)
            return
        with open_data_file(filesystem, path, file_format) as data:
            by_table = file_columns(data.schema.names, target.names)
            found = [c for c in columns if c in by_table]
            for batch in data.batches([by_table[c] for c in found], batch_rows):
                yield batch.rename_columns(found)

    def describe(self) -> str:
        """The unit in words, for errors."""
        return self.source.describe(self) if self.source is not None else f"data file {self.path}"

    def gone(self) -> str:
        """Why a file of the unit can vanish after a read was planned, in words."""
        return self.source.gone(self) if self.source is not None else "the table was overwritten"

    def vanished(self, table: str) -> ConcurrentModificationError | VersionNotFoundError:
        """The error for a file of the unit gone when read, after the read was planned."""
        if f"{KEPT_VERSIONS}/" in self.path:  # read from a kept version: vacuum or the retention removed it
            return VersionNotFoundError(
                f"table {table}: {self.describe()} is gone: the version this read was planned on was removed by "
                "vacuum or the retention period (BUCKETKIT_RETENTION seconds, 7 days by default) before it ran; "
                "plan the read again (bucketkit.history lists the versions kept)")
        return ConcurrentModificationError(
            f"table {table}: {self.describe()} is gone: {self.gone()} while it was read; run the read again")


def conform(data: pa.Table | pa.RecordBatch, target: pa.Schema, names: Sequence[str], partitioned_by: Sequence[str],
            values: Mapping[str, str | None]) -> pa.Table:
    """Rows read from files as the table's columns: ``target``'s fields in order, file columns by
    name (case-insensitive; by position when the file names them ``_col0..``, as Hive's ORC writer
    did), partition columns as typed constants from the directory ``values``, missing columns null.

    Args:
        data: the rows as read (a table or one batch).
        target: the columns wanted, typed as the table types them.
        names: the table's data columns, in order (what ``_colN`` positions refer to).
        partitioned_by: the table's partition columns.
        values: this unit's partition values (raw strings; ``__HIVE_DEFAULT_PARTITION__`` is NULL).
    """
    n = data.num_rows
    by_table = file_columns(data.schema.names, names)
    by_lower = {c.lower(): c for c in data.schema.names}  # columns the read adds (row__id) by name
    arrays = []
    for fld in target:
        if fld.name in partitioned_by:
            raw = values.get(fld.name)
            null = raw is None or raw == HIVE_DEFAULT_PARTITION
            arrays.append(pa.nulls(n, fld.type) if null else pa.repeat(pa.scalar(raw).cast(fld.type), n))
            continue
        source = by_table.get(fld.name) or by_lower.get(fld.name.lower())
        if source is None:
            arrays.append(pa.nulls(n, fld.type))  # column added after this file was written
            continue
        column = data.column(source)
        column = column.cast(fld.type) if column.type != fld.type else column
        arrays.append(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)
    return pa.Table.from_arrays(arrays, schema=target)


def row_value(column: pa.Array | pa.ChunkedArray, i: int) -> Any:
    """Row ``i`` of ``column`` as Python, for a message; a date or timestamp beyond Python's years 1-9999 as Arrow's
    text of it (``as_py`` raises there)."""
    try:
        return column[i].as_py()
    except (OverflowError, ValueError):
        return column.slice(i, 1).cast(pa.string())[0].as_py()


def check_placement(batch: pa.RecordBatch, unit: ReadUnit, spec: Any, hint: str = "") -> pa.RecordBatch:
    """``batch`` (rows of ``unit``, its columns named as the table's) as it is, once each row's bucket columns are
    re-hashed by the table's bucket function (``spec``: its :class:`~bucketkit.layout.metadata.TableSpec`).

    Raises :class:`CorruptTableError` at a row that belongs in a bucket other than the one the unit's file is named
    for (what the SQL catalog's scan checks, io.bucketkit.read.FileBucketCheck; Trino's
    ``hive.validate-bucketing``): a table whose files were never hashed as its metadata says fails, instead of a
    pruned read or a join by bucket returning wrong rows. ``hint`` ends the message (how to skip the check)."""
    import numpy as np

    if not batch.num_rows:
        return batch
    function = spec.bucket_function()
    columns = [batch.column(batch.schema.get_field_index(c)) for c in spec.bucketed_by]
    found = function.bucket_ids(columns)
    wrong = np.flatnonzero(found != unit.bucket)
    if len(wrong):
        i = int(wrong[0])
        key = tuple(row_value(c, i) for c in columns)
        raise CorruptTableError(
            f"{unit.path}: a row with {', '.join(spec.bucketed_by)} = {key if len(key) > 1 else key[0]!r} is in "
            f"bucket {unit.bucket}'s files, but {function} places it in bucket {int(found[i])}: the files were not "
            f"written as the table's metadata says, so pruning and bucket joins would return wrong rows. Check it "
            f"with `bucketkit validate`{hint}")
    return batch
