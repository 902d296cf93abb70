"""Reading one side of a bucket group: file by file, stripe by stripe, in bounded batches.

The join reads ORC stripes and Parquet row groups itself (:meth:`bucketkit.io.DataFile.batches`),
on the calling thread, rather than through ``pyarrow.dataset``: under a capped address space
(``spark.executor.pyspark.memory``) an allocation failure inside the dataset scanner's thread pool
left ``AsyncScanner::ToTable`` waiting forever on a future nobody completes (issue 11). Reading here either returns a batch or raises.
Each batch gets the file's partition values as constant columns and the side's filters applied.
An ACID bucket (:class:`~bucketkit.joins.sides.AcidBucketRef`) is read whole, its snapshot merged by
:func:`bucketkit.acid.read.read_bucket`, then cut into batches the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.errors import ConcurrentModificationError
from bucketkit.pruning.filters import to_pyarrow
from bucketkit.io import HIVE_DEFAULT_PARTITION, file_columns, open_data_file
from bucketkit.joins.sides import AcidBucketRef, FileRef, acid_batches

__all__ = ["SideRead"]


@dataclass(frozen=True)
class SideRead:
    """What to read from one side's files.

    Attributes:
        filesystem: the side's pyarrow filesystem.
        file_format: ``"orc"`` or ``"parquet"``.
        schema: Arrow schema of the side's rows (data columns, then partition columns).
        partition_types: Arrow type of each partition column, by name.
        columns: the columns to read (output columns of this side plus its join keys).
        filters: normalised DNF filters (:func:`bucketkit.pruning.filters.normalize`), applied
            while reading, before the join (``()`` = none).
        table: the table's name or location, for error messages.
    """

    filesystem: pafs.FileSystem
    file_format: str
    schema: pa.Schema
    partition_types: tuple[tuple[str, pa.DataType], ...]
    columns: tuple[str, ...]
    filters: tuple = ()
    table: str = ""

    def expression(self) -> Any:
        return to_pyarrow(self.filters)

    @property
    def read_schema(self) -> pa.Schema:
        """The schema of the batches this side yields (``columns``, in order)."""
        return pa.schema([self.schema.field(c) for c in self.columns])

    def empty(self) -> pa.Table:
        return self.read_schema.empty_table()

    def read(self, files: Sequence[FileRef], batch_rows: int = 65536) -> pa.Table:
        """Read the needed columns of these files, filters applied, as one table."""
        return pa.Table.from_batches(list(self.stream(files, batch_rows)), schema=self.read_schema)

    def stream(self, files: Sequence[FileRef], batch_rows: int) -> Iterator[pa.RecordBatch]:
        """The batches of these files, one file after another."""
        for f in files:
            yield from self.batches(f, batch_rows)

    def batches(self, f: FileRef, batch_rows: int) -> Iterator[pa.RecordBatch]:
        """The rows of one file in file order, batch by batch (filters applied).

        Raises:
            ConcurrentModificationError: the file vanished after the join was planned.
        """
        if f.size <= 0:
            return
        parts = dict(self.partition_types)
        data_cols = [c for c in self.columns if c not in parts]
        filter_cols = {c for conj in self.filters for c, _, _ in conj}
        wanted = list(dict.fromkeys([*data_cols, *(c for c in filter_cols if c not in parts)]))
        expr = self.expression()
        for batch in self._file_batches(f, wanted, batch_rows):
            batch = self._complete(batch, f, wanted)
            if expr is not None:
                batch = _filter(batch, expr)
            yield batch.select(list(self.columns))

    def _file_batches(self, f: FileRef | AcidBucketRef, columns: list[str], batch_rows: int
                      ) -> Iterator[pa.RecordBatch]:
        if isinstance(f, AcidBucketRef):
            yield from self._acid_batches(f, columns, batch_rows)
            return
        try:
            data = open_data_file(self.filesystem, f.path, self.file_format)
        except FileNotFoundError as exc:
            raise ConcurrentModificationError(
                f"{self.table or 'join side'}: data file {f.path} vanished after the join was planned: the "
                "table was overwritten while the join read it; run the join again") from exc
        with data:
            parts = dict(self.partition_types)
            by_table = file_columns(data.schema.names, [n for n in self.schema.names if n not in parts])
            found = [c for c in columns if c in by_table]
            for batch in data.batches([by_table[c] for c in found], batch_rows):
                yield batch.rename_columns(found)

    def _acid_batches(self, f: AcidBucketRef, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
        try:
            parts = dict(self.partition_types)
            target = pa.schema([fld for fld in self.schema if fld.name not in parts])
            yield from acid_batches(self.filesystem, f, columns, target, self.file_format, batch_rows)
        except FileNotFoundError as exc:
            raise ConcurrentModificationError(
                f"{self.table or 'join side'}: a file of ACID bucket {f.bucket} in {f.path} vanished after the join "
                f"was planned ({exc}): a compaction's cleaner removed it; run the join again") from exc

    def _complete(self, batch: pa.RecordBatch, f: FileRef, wanted: list[str]) -> pa.RecordBatch:
        """The batch with every wanted data column (missing ones NULL) cast to the schema, plus partitions."""
        n = batch.num_rows
        values = dict(f.partition)
        names, arrays = [], []
        for name in wanted:
            typ = self.schema.field(name).type
            arr = batch.column(name) if name in batch.schema.names else pa.nulls(n, typ)
            arrays.append(arr.cast(typ) if arr.type != typ else arr)
            names.append(name)
        for name, typ in self.partition_types:
            if name in self.columns or any(c == name for conj in self.filters for c, _, _ in conj):
                raw = values.get(name)
                null = raw is None or raw == HIVE_DEFAULT_PARTITION
                arrays.append(pa.nulls(n, typ) if null else pa.repeat(pa.scalar(raw).cast(typ), n))
                names.append(name)
        return pa.RecordBatch.from_arrays(arrays, names=names)


def _filter(batch: pa.RecordBatch, expr: Any) -> pa.RecordBatch:
    """The rows of ``batch`` passing ``expr``, evaluated on this thread (Acero, ``use_threads=False``)."""
    import pyarrow.acero as acero

    plan = acero.Declaration.from_sequence([
        acero.Declaration("table_source", acero.TableSourceNodeOptions(pa.Table.from_batches([batch]))),
        acero.Declaration("filter", acero.FilterNodeOptions(expr))])
    table = plan.to_table(use_threads=False)
    return table.combine_chunks().to_batches()[0] if table.num_rows else batch.slice(0, 0)
