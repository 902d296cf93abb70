"""Read one bucket of a Hive ACID snapshot with pyarrow: base + deltas − delete events.

A full-ACID (Hive 3, ``hive.acid.version`` 2) ORC file holds the columns ``operation``,
``originalTransaction``, ``bucket``, ``rowId``, ``currentTransaction`` and ``row`` (a struct of
the table's columns). ``(originalTransaction, bucket, rowId)`` identifies a row for its whole life
(``bucket`` is the encoded :class:`~bucketkit.acid.naming.BucketCodec` value, statement id included);
UPDATE is split into a delete event plus an insert. So a bucket's snapshot is the rows of its
``bucket_N`` files in the chosen base and deltas whose ``currentTransaction`` is valid, minus every
row whose identity appears among the valid delete events of the ``delete_delta/bucket_N`` files:
delete events of a row always land in the file of the row's own bucket, so buckets are read
independently (pruning and bucketed joins keep working).

Original files (from before the table became transactional) get Hive's synthetic identity:
``originalTransaction`` 0, ``bucket`` = V1 encoding of the bucket in the file name, ``rowId`` = rows
of the bucket's earlier original files (by path) + the row's position. Insert-only tables
(``transactional_properties=insert_only``) hold plain files in their base/delta directories: no
identities, no deletes.

ACID v1 files (Hive 2, no ``hive.acid.version`` in the footer and none in the directory's
``_orc_acid_version``) are refused with :class:`~bucketkit.errors.AcidStateError`, as Trino does.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.orc as po

from bucketkit.acid.naming import ACID_VERSION_FILE, encode_bucket_property, original_row_id_bases
from bucketkit.acid.state import METADATA_FILE, AcidState, acid_state, file_bucket
from bucketkit.errors import AcidStateError, CorruptTableError
from bucketkit.io import not_readable
from bucketkit.acid.writeids import ValidTxnList, ValidWriteIdList

__all__ = ["ACID_COLUMNS", "BucketFiles", "bucket_files", "state_buckets", "read_bucket", "read_snapshot",
           "read_insert_only", "list_partition", "check_versions",
           "snapshot"]

ACID_COLUMNS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction", "row")
ROW_ID = ("originalTransaction", "bucket", "rowId")
_ROW_ID_TYPE = pa.struct([("writeid", pa.int64()), ("bucketid", pa.int32()), ("rowid", pa.int64())])


@dataclass(frozen=True)
class BucketFiles:
    """The files one bucket of a snapshot reads (paths relative to the partition directory).

    Attributes:
        bucket: the bucket (or writer) id.
        inserts: ``bucket_N`` files of the base and the deltas, in Hive's read order.
        deletes: ``bucket_N`` files of the delete deltas.
        originals: original files of the bucket, in path order (their row ids follow that order).
    """

    bucket: int
    inserts: tuple[str, ...]
    deletes: tuple[str, ...]
    originals: tuple[str, ...]


def _by_bucket(state: AcidState) -> dict[tuple[str, int | None], tuple[str, ...]]:
    """``(kind, bucket) -> files`` of ``state`` in read order, computed once per state and kept on it:
    a read of every bucket asks once per bucket, and name parsing over all files each time cost
    0.1 s of a 1.8 s read of 64 buckets x 4 directories."""
    index = state.__dict__.get("_bucket_index")
    if index is None:
        built: dict[tuple[str, int | None], list[str]] = {}
        dirs = [("insert", d) for d in ([state.base] if state.base else []) + list(state.deltas)]
        for kind, d in dirs + [("delete", d) for d in state.delete_deltas]:
            for p in state.files[d]:
                built.setdefault((kind, file_bucket(p)), []).append(p)
        for p in state.original_files:
            built.setdefault(("original", file_bucket(p)), []).append(p)
        index = {k: tuple(v) for k, v in built.items()}
        object.__setattr__(state, "_bucket_index", index)  # a cache, not a field: equality ignores it
    return index


def bucket_files(state: AcidState, bucket: int) -> BucketFiles:
    """The files of ``bucket`` in ``state`` (what a pruned read of one bucket opens)."""
    index = _by_bucket(state)
    return BucketFiles(bucket, index.get(("insert", bucket), ()), index.get(("delete", bucket), ()),
                       index.get(("original", bucket), ()))


def state_buckets(state: AcidState) -> list[int]:
    """Every bucket id that has a file in the snapshot."""
    paths = list(state.original_files) + [p for files in state.files.values() for p in files]
    return sorted({b for b in map(file_bucket, paths) if b is not None})


# -- listing a partition --------------------------------------------------------------------------
def list_partition(fs: pafs.FileSystem, root: str) -> tuple[list[tuple[str, int | None]], dict[str, str]]:
    """``(entries, metadata)`` for :func:`~bucketkit.acid.state.acid_state`: every path under
    ``root`` with its size (``None`` for directories) and the ``_metadata_acid`` texts."""
    entries, metadata = [], {}
    for info in fs.get_file_info(pafs.FileSelector(root, recursive=True)):
        rel = posixpath.relpath(info.path, root)
        is_dir = info.type == pafs.FileType.Directory
        entries.append((rel, None if is_dir else info.size))
        parts = rel.split("/")
        if len(parts) == 2 and parts[1] == METADATA_FILE:
            with fs.open_input_stream(info.path) as f:
                metadata[parts[0]] = f.read().decode("utf-8", "replace")
    return entries, metadata


def snapshot(fs: pafs.FileSystem, root: str, write_ids: ValidWriteIdList | str | None = None,
             txns: ValidTxnList | str | None = None) -> AcidState:
    """List ``root`` and choose its snapshot directories (:func:`~bucketkit.acid.state.acid_state`)."""
    entries, metadata = list_partition(fs, root)
    return acid_state(entries, write_ids, txns, metadata=metadata)


# -- reading files --------------------------------------------------------------------------------
def _open_orc(fs: pafs.FileSystem, path: str) -> po.ORCFile:
    source = fs.open_input_file(path)
    try:
        return po.ORCFile(source)
    except (pa.ArrowException, OSError) as exc:
        source.close()
        raise not_readable(path, "orc", exc) from None


def _dir_acid_version(fs: pafs.FileSystem, directory: str) -> int:
    try:
        with fs.open_input_stream(posixpath.join(directory, ACID_VERSION_FILE)) as f:
            return int(f.read(1).decode("ascii"))  # Hive reads one byte
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return 0


def _check_acid_version(fs: pafs.FileSystem, path: str, orc: po.ORCFile) -> None:
    raw = (orc.metadata or {}).get(b"hive.acid.version")
    try:
        version = int(raw) if raw is not None else 0
    except ValueError:
        version = 0
    if version >= 2 or _dir_acid_version(fs, posixpath.dirname(path)) >= 2:
        return
    shown = "<empty>" if raw is None else raw.decode("utf-8", "replace")
    raise AcidStateError(
        f"Hive transactional tables are supported since Hive 3.0. Expected `hive.acid.version` in ORC metadata in "
        f"{path} to be >=2 but was {shown}. If you have upgraded from an older version of Hive, make sure a major "
        f"compaction has been run at least once after the upgrade.")


def check_versions(fs: pafs.FileSystem, paths: Sequence[str]) -> None:
    """Refuse ACID data files Hive 3 would refuse (ACID v1) before reading any: a directory's
    ``_orc_acid_version`` saying 2 or more vouches for its files (read once per directory), else
    each file's footer must.

    Raises:
        AcidStateError: naming the first such file (Trino's message).
    """
    versions: dict[str, int] = {}
    for path in paths:
        directory = posixpath.dirname(path)
        if directory not in versions:
            versions[directory] = _dir_acid_version(fs, directory)
        if versions[directory] < 2:
            _check_acid_version(fs, path, _open_orc(fs, path))


def _read_acid_file(fs: pafs.FileSystem, path: str, write_ids: ValidWriteIdList, delete: bool,
                    columns: Sequence[str] | None = None) -> tuple[pa.Table, pa.StructType | None]:
    """The valid events of one ACID file (identity columns, plus ``row`` for inserts) and the
    file's full ``row`` type; ``columns`` reads only those fields of ``row`` (ORC reads nested
    fields one by one, so a key column costs a fraction of the strings beside it)."""
    orc = _open_orc(fs, path)
    _check_acid_version(fs, path, orc)
    if tuple(orc.schema.names) != ACID_COLUMNS:
        raise AcidStateError(f"{path}: columns {orc.schema.names}; a Hive 3 full-ACID file has {list(ACID_COLUMNS)} "
                             f"(files added by LOAD DATA without ACID columns are not supported)")
    row_type = orc.schema.field("row").type
    wanted = list(ROW_ID) + ["currentTransaction"]
    if not delete:
        wanted += ["row"] if columns is None else [f"row.{n}" for n in _row_fields(row_type, columns)]
    table = orc.read(columns=wanted)
    return _only_valid(table, write_ids).drop_columns(["currentTransaction"]), row_type


def _row_fields(row_type: pa.StructType, columns: Sequence[str]) -> list[str]:
    """The ``row`` fields named by ``columns`` (case-insensitively, as Hive names are), in file order."""
    wanted = {c.lower() for c in columns}
    return [f.name for f in row_type if f.name.lower() in wanted]


def _only_valid(table: pa.Table, write_ids: ValidWriteIdList) -> pa.Table:
    """Events of valid write ids. A file is usually all of one valid write: checked from its
    min/max first, so the common case copies nothing."""
    if table.num_rows == 0:
        return table
    low, high = (v.as_py() for v in pc.min_max(table["currentTransaction"]).values())
    if high <= write_ids.high_watermark and not any(low <= e <= high for e in write_ids.exceptions):
        return table
    return table.filter(_valid_mask(table["currentTransaction"], write_ids))


def _valid_mask(write_id: pa.ChunkedArray, write_ids: ValidWriteIdList) -> pa.ChunkedArray:
    mask = pc.less_equal(write_id, pa.scalar(write_ids.high_watermark, pa.int64()))
    if write_ids.exceptions:
        mask = pc.and_(mask, pc.invert(pc.is_in(write_id, pa.array(write_ids.exceptions, pa.int64()))))
    return mask


def _flatten_row(table: pa.Table, row_id: bool, columns: Sequence[str] | None) -> pa.Table:
    """The user columns out of ``row`` (named as ``columns`` names them), plus ``row__id`` on request."""
    if "row" in table.column_names:
        row = table["row"].combine_chunks()
        out = pa.Table.from_arrays(row.flatten(), names=[f.name for f in row.type])
    else:  # no field of row was asked for: the row count is what is left
        out = table.select([])
    if columns is not None:
        by_lower = {n.lower(): n for n in out.column_names}
        picked = [c for c in columns if c.lower() in by_lower]
        out = out.select([by_lower[c.lower()] for c in picked]).rename_columns(picked)
    if row_id:
        ids = pa.StructArray.from_arrays([table[c].combine_chunks() for c in ROW_ID], fields=list(_ROW_ID_TYPE))
        out = out.append_column("row__id", ids)
    return out


def _read_originals(fs: pafs.FileSystem, root: str, paths: Sequence[str], bucket: int) -> list[pa.Table]:
    """Original files of one bucket with Hive's synthetic ``(0, bucket, base + position)`` ids."""
    orcs = {p: _open_orc(fs, posixpath.join(root, p)) for p in paths}
    bases = original_row_id_bases([(p, bucket, orcs[p].nrows) for p in paths])
    prop = encode_bucket_property(bucket)
    out = []
    for p in paths:
        data = orcs[p].read().combine_chunks()
        n, base = data.num_rows, bases[p]
        out.append(pa.table({
            "originalTransaction": pa.array(np.zeros(n, np.int64)),
            "bucket": pa.array(np.full(n, prop, np.int32)),
            "rowId": pa.array(np.arange(base, base + n, dtype=np.int64)),
            "row": pa.StructArray.from_arrays([c.combine_chunks() for c in data.columns], fields=list(data.schema)),
        }))
    return out


def _remove_deleted(rows: pa.Table, deletes: pa.Table | None) -> pa.Table:
    """Drop rows whose identity has a delete event, keeping the rows' order.

    The rows of one file nearly always share ``originalTransaction`` and ``bucket`` (one write of
    one bucket), with ``rowId`` ascending (Hive writes events sorted by identity): then the delete
    events of that pair are found by binary search of their row ids. Otherwise (a compacted base
    holds many writes) a hash semi-join of the three identity columns finds the deleted positions.
    Measured on a 156k-row bucket with 15.6k delete events: 2.3 ms for the search, 6.4 ms for the
    semi-join, 4.7 ms for ``is_in`` on the row ids.
    """
    if deletes is None or deletes.num_rows == 0 or rows.num_rows == 0:
        return rows
    otid, bucket = _single(rows["originalTransaction"]), _single(rows["bucket"])
    row_ids = rows["rowId"].to_numpy()
    if otid is not None and bucket is not None and rows["rowId"].null_count == 0 and bool(
            (row_ids[1:] > row_ids[:-1]).all()):
        if _single(deletes["originalTransaction"]) == otid and _single(deletes["bucket"]) == bucket:
            mine = deletes["rowId"].to_numpy()  # every event is of this write and bucket: nothing to select
        else:
            mine = deletes.filter(pc.and_(pc.equal(deletes["originalTransaction"], otid),
                                          pc.equal(deletes["bucket"], bucket)))["rowId"].to_numpy()
        at = np.searchsorted(row_ids, mine)
        inside = at < len(row_ids)
        hit = at[inside][row_ids[at[inside]] == mine[inside]]
    else:
        keys = rows.select(list(ROW_ID)).append_column("__pos", pa.array(np.arange(rows.num_rows, dtype=np.int64)))
        hit = keys.join(deletes, keys=list(ROW_ID), join_type="left semi")["__pos"].to_numpy()
    if len(hit) == 0:
        return rows
    keep = np.ones(rows.num_rows, dtype=bool)
    keep[hit] = False
    return rows.filter(pa.array(keep))


def _single(column: pa.ChunkedArray) -> pa.Scalar | None:
    """The column's only value, or None when it holds several (or nulls)."""
    if column.null_count:
        return None
    low, high = pc.min_max(column).values()
    return low if low == high else None


def read_bucket(fs: pafs.FileSystem, root: str, state: AcidState, bucket: int, *,
                write_ids: ValidWriteIdList | str | None = None, row_id: bool = False,
                columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of one bucket of a full-ACID snapshot, as Hive returns them.

    Args:
        fs, root: the filesystem and the partition directory ``state`` was listed from.
        state: the snapshot's directories (:func:`snapshot`).
        bucket: the bucket (or, unbucketed, writer) id.
        write_ids: the same snapshot as ``state`` (rows and delete events of invalid write ids
            inside a kept delta are dropped, as Hive does); ``None``: all committed.
        row_id: add Hive's ``row__id`` struct (writeid, bucketid, rowid).
        columns: the user columns to return, in this order (matched case-insensitively, named as
            given); only they are read. Columns no file has are left out. ``None``: all.

    Raises:
        AcidStateError: a file of an ACID version Hive 3 refuses, or without ACID columns.
    """
    ids = write_ids if isinstance(write_ids, ValidWriteIdList) else ValidWriteIdList.parse(write_ids or "")
    files = bucket_files(state, bucket)
    acid, row_type = [], None
    for p in files.inserts:
        table, row_type = _read_acid_file(fs, posixpath.join(root, p), ids, False, columns)
        acid.append(table)
    originals = _read_originals(fs, root, files.originals, bucket)
    if row_type is not None and originals:
        originals = _align_originals(originals, row_type)
    if not originals and not acid:
        return pa.table({})
    dels = [_read_acid_file(fs, posixpath.join(root, p), ids, True)[0] for p in files.deletes]
    deletes = pa.concat_tables(dels) if dels else None
    parts = [_flatten_row(_remove_deleted(t, deletes), row_id, columns) for t in originals + acid]
    return pa.concat_tables(parts, promote_options="permissive") if len(parts) > 1 else parts[0]


def _align_originals(originals: list[pa.Table], target: pa.StructType) -> list[pa.Table]:
    """Original files name their columns as written before the table became transactional; Hive
    maps them by position onto the table's columns, here the ``row`` struct of the ACID files."""
    out = []
    for t in originals:
        row = t["row"].combine_chunks()
        if row.type.num_fields != target.num_fields:
            raise CorruptTableError(f"an original file has {row.type.num_fields} columns; the table's ACID files "
                                    f"have {target.num_fields} ({[f.name for f in target]})")
        fields = [row.field(i).cast(target.field(i).type) for i in range(target.num_fields)]
        out.append(t.set_column(3, "row", pa.StructArray.from_arrays(fields, fields=list(target))))
    return out


def read_snapshot(fs: pafs.FileSystem, root: str, state: AcidState, *,
                  write_ids: ValidWriteIdList | str | None = None, row_id: bool = False) -> pa.Table:
    """Every bucket of a full-ACID snapshot, bucket by bucket (see :func:`read_bucket`)."""
    tables = [read_bucket(fs, root, state, b, write_ids=write_ids, row_id=row_id) for b in state_buckets(state)]
    tables = [t for t in tables if t.num_columns]
    return pa.concat_tables(tables) if tables else pa.table({})


def read_insert_only(fs: pafs.FileSystem, root: str, state: AcidState, bucket: int | None = None,
                     file_format: str = "orc") -> pa.Table:
    """An insert-only snapshot (plain files in base/deltas, originals): one bucket or all."""
    import pyarrow.dataset as ds

    dirs = ([state.base] if state.base else []) + list(state.deltas)
    paths = list(state.original_files) + [p for d in dirs for p in state.files[d]]
    if bucket is not None:
        paths = [p for p in paths if file_bucket(p) == bucket]
    if not paths:
        return pa.table({})
    return ds.dataset([posixpath.join(root, p) for p in paths], format=file_format, filesystem=fs).to_table()
