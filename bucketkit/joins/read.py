"""Reading one side of a bucket group: file by file, stripe by stripe, in bounded batches.

The join reads ORC stripes and Parquet row groups itself (:meth:`bucketkit.io.DataFile.batches`),
on the calling thread, rather than through ``pyarrow.dataset``: under a capped address space
(``spark.executor.pyspark.memory``) an allocation failure inside the dataset scanner's thread pool
left ``AsyncScanner::ToTable`` waiting forever on a future nobody completes (issue 11). Reading here either returns a batch or raises.
Each batch gets the file's partition values as constant columns and the side's filters applied.
A side reads read units (:class:`bucketkit.units.ReadUnit`) without asking their kind: a data file
yields its stripes, an ACID bucket its snapshot (merged whole), both cut into the same batches and
conformed to the side's columns by :func:`bucketkit.units.conform`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.errors import ConcurrentModificationError
from bucketkit.pruning.filters import to_pyarrow
from bucketkit.units import ReadUnit, check_placement, conform

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
        placement: the table's spec, by whose bucket function the rows of a
            :attr:`~bucketkit.units.ReadUnit.checked` unit are re-hashed as they are read
            (:func:`bucketkit.units.check_placement`: the join pairs buckets by the files' names, and a row in
            another bucket's file would miss its partners); None: no unit is checked.
    """

    filesystem: pafs.FileSystem
    file_format: str
    schema: pa.Schema
    partition_types: tuple[tuple[str, pa.DataType], ...]
    columns: tuple[str, ...]
    filters: tuple = ()
    table: str = ""
    placement: Any = None

    def expression(self) -> Any:
        return to_pyarrow(self.filters)

    @property
    def read_schema(self) -> pa.Schema:
        """The schema of the batches this side yields (``columns``, in order)."""
        return pa.schema([self.schema.field(c) for c in self.columns])

    def empty(self) -> pa.Table:
        return self.read_schema.empty_table()

    def read(self, files: Sequence[ReadUnit], batch_rows: int = 65536) -> pa.Table:
        """Read the needed columns of these files, filters applied, as one table."""
        return pa.Table.from_batches(list(self.stream(files, batch_rows)), schema=self.read_schema)

    def stream(self, files: Sequence[ReadUnit], batch_rows: int) -> Iterator[pa.RecordBatch]:
        """The batches of these files, one file after another."""
        for f in files:
            yield from self.batches(f, batch_rows)

    def batches(self, f: ReadUnit, batch_rows: int) -> Iterator[pa.RecordBatch]:
        """The rows of one file in file order, batch by batch (filters applied).

        Raises:
            ConcurrentModificationError: the file vanished after the join was planned.
            CorruptTableError: a row of a checked unit belongs in another bucket than its file's.
        """
        if f.size <= 0:
            return
        parts = dict(self.partition_types)
        data = pa.schema([fld for fld in self.schema if fld.name not in parts])  # the table's data columns
        filter_cols = {c for conj in self.filters for c, _, _ in conj}
        check = self.placement if f.checked else None  # its rows re-hashed: its bucket columns read too
        wanted = list(dict.fromkeys([*(c for c in self.columns if c not in parts),
                                     *(c for c in filter_cols if c not in parts),
                                     *(check.bucketed_by if check is not None else ())]))
        # each batch as: the wanted data columns (missing ones NULL) cast to the schema, then the
        # partition columns the side reads or filters on
        constants = [name for name in parts if name in self.columns or name in filter_cols]
        target = pa.schema([self.schema.field(c) for c in [*wanted, *constants]])
        expr = self.expression()
        try:
            for batch in f.batches(self.filesystem, wanted, data, self.file_format, batch_rows):
                table = conform(batch, target, data.names, constants, f.values)
                batch = table.to_batches()[0] if table.num_rows else pa.RecordBatch.from_pylist([], schema=target)
                if expr is not None:
                    batch = _filter(batch, expr)
                if check is not None:
                    check_placement(batch, f, check)
                yield batch.select(list(self.columns))
        except FileNotFoundError as exc:
            raise ConcurrentModificationError(
                f"{self.table or 'join side'}: {f.describe()} vanished after the join was planned ({exc}): "
                f"{f.gone()} while the join read it; run the join again") from exc


def _filter(batch: pa.RecordBatch, expr: Any) -> pa.RecordBatch:
    """The rows of ``batch`` passing ``expr``, evaluated on this thread (Acero, ``use_threads=False``)."""
    import pyarrow.acero as acero

    plan = acero.Declaration.from_sequence([
        acero.Declaration("table_source", acero.TableSourceNodeOptions(pa.Table.from_batches([batch]))),
        acero.Declaration("filter", acero.FilterNodeOptions(expr))])
    table = plan.to_table(use_threads=False)
    return table.combine_chunks().to_batches()[0] if table.num_rows else batch.slice(0, 0)
