"""Apache Hudi tables in scan plans: the file slices a query reads, which bucket each holds, and reading
one slice (a read unit) into the table's columns (pure Python + hudi-rs).

hudi-rs plans what Hudi's own readers read: the latest file slice of each file group as of an instant
(a snapshot, or ``as_of`` for time travel), base files only (``read_optimized``), or the slices an
instant range changed (``incremental``, commits in ``(begin, end]``). Each slice is one read unit
(:class:`HudiSlice`: a base Parquet file plus the log files merged into it), read by hudi-rs's file
group reader inside a Spark task, on the executors: updates, deletes and rollbacks applied as Hudi
applies them.

Partition paths prune: for Hudi's simple and complex key generators a path is the partition fields'
values (``city=chennai`` or ``chennai``), typed by the columns; other key generators (time-based,
custom) format their paths, which then never prune. A bucket-index table (``bucket_count=``) puts
bucket ``b`` in one file group per partition whose id starts with ``b`` as 8 digits; a layout that
says otherwise (an id without the prefix, a bucket beyond the count, two groups for one bucket) is
read unbucketed with the reason, never guessed.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator, Mapping, Sequence
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.errors import InvalidArgumentError
from bucketkit.hashing.hudi import bucket_of_file_id
from bucketkit.hudi.table import CORE_ERRORS, hudi_uri, key_generator, load, partition_fields, refusal
from bucketkit.io import footer_rows, read_schema
from bucketkit.layout.discovery import PartitionLayout
from bucketkit.units import ReadUnit

__all__ = ["QUERY_TYPES", "HudiQuery", "SliceFiles", "HudiKind", "HudiSlice", "HudiLayout", "is_hudi_table",
           "table_kind", "hudi_refused"]

QUERY_TYPES = ("snapshot", "read_optimized", "incremental")
_RO = "hoodie.read.use.read_optimized.mode"


@dataclass(frozen=True)
class HudiQuery:
    """What a read of a Hudi table sees: ``snapshot`` (``as_of`` an instant, or the latest),
    ``read_optimized`` (base files only) or ``incremental`` (what commits in ``(begin, end]`` changed)."""

    query_type: str = "snapshot"
    as_of: str | None = None
    begin: str | None = None
    end: str | None = None

    def __post_init__(self) -> None:
        if self.query_type not in QUERY_TYPES:
            raise InvalidArgumentError(f"query_type={self.query_type!r}: expected one of {list(QUERY_TYPES)}")
        if self.query_type == "incremental":
            if self.begin is None:
                raise InvalidArgumentError("query_type='incremental' needs begin= (an instant: what commits after it "
                                           "changed; '0' for everything)")
            if self.as_of is not None:
                raise InvalidArgumentError("as_of= with query_type='incremental': give the range as begin= and end=")
        elif self.begin is not None or self.end is not None:
            raise InvalidArgumentError(f"begin=/end= are for query_type='incremental', not {self.query_type!r}")
        for name in ("as_of", "begin", "end"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                object.__setattr__(self, name, str(value))

    def options(self) -> tuple[tuple[str, str], ...]:
        """hudi-rs's read options (``HudiReadOptions.hudi_options``) for this query."""
        out = []
        if self.query_type == "read_optimized":
            out.append((_RO, "true"))
        if self.as_of is not None:
            out.append(("hoodie.read.as.of.timestamp", self.as_of))
        if self.query_type == "incremental":
            out.append(("hoodie.read.start.timestamp", self.begin))
            if self.end is not None:
                out.append(("hoodie.read.end.timestamp", self.end))
        return tuple(out)

    def read_options(self) -> Any:
        import hudi

        opts = hudi.HudiReadOptions(hudi_options=dict(self.options()))
        return opts.with_query_type(hudi.HudiQueryType.Incremental) if self.query_type == "incremental" else opts

    def __str__(self) -> str:
        if self.query_type == "incremental":
            return f"incremental, commits after {self.begin} up to {self.end or 'the latest'}"
        what = "read-optimized (base files only)" if self.query_type == "read_optimized" else "snapshot"
        return f"{what} as of {self.as_of}" if self.as_of else what


@dataclass(frozen=True)
class SliceFiles:
    """One file slice as listed: its file group, partition, files (relative to the table) and bucket.

    Attributes:
        file_id: the file group's id (``00000005-<uuid>-0`` in a bucket-index table).
        partition_path: the partition's path relative to the table (``""``: not partitioned).
        base: the base file (relative path; ``""``: a slice of log files only).
        logs: its log files, in order (relative paths).
        size: bytes of its files.
        instant: the instant that created the slice.
    """

    file_id: str
    partition_path: str
    base: str
    logs: tuple[str, ...]
    size: int
    instant: str

    @property
    def bucket(self) -> int | None:
        return bucket_of_file_id(self.file_id)


def _list_slices(table: Any, uri: str, query: HudiQuery) -> list[SliceFiles]:
    try:
        slices = table.get_file_slices(query.read_options())
    except CORE_ERRORS as exc:
        raise refusal(uri, f"list the file slices of a {query} read", exc) from None
    out = []
    for s in slices:
        base = s.base_file_relative_path() if s.base_file_name else ""
        logs = tuple(s.log_files_relative_paths())
        out.append(SliceFiles(s.file_id, s.partition_path, base, logs, int(s.total_size_bytes()),
                              s.creation_instant_time))
    return sorted(out, key=lambda s: (s.partition_path, s.bucket if s.bucket is not None else -1, s.file_id))


def _latest_instant(table: Any, uri: str) -> str | None:
    """The table's latest completed instant (``""`` where hudi-rs names none), or None for a table created and
    never written (no completed commit of any kind), from one read of its timeline."""
    try:
        timeline = table.get_timeline()
        written = bool(timeline.get_completed_commits() or timeline.get_completed_deltacommits()
                       or timeline.get_completed_replacecommits())
    except CORE_ERRORS as exc:
        raise refusal(uri, "read the table's timeline", exc) from None
    if not written:
        return None
    try:
        return timeline.get_latest_commit_timestamp()
    except CORE_ERRORS:
        return ""


@dataclass(frozen=True)
class HudiLayout:
    """The partitions of a Hudi read as the planner walks them (``partition_layouts``, ``root``)."""

    root: str
    partition_layouts: list[PartitionLayout]


@dataclass(frozen=True)
class HudiKind:
    """A Hudi table as a scan plan's kind (:class:`bucketkit.units.TableKind`): each partition's latest
    file slices (or those ``query`` reads), one unit each (:class:`HudiSlice`).

    Attributes:
        uri: the table as hudi-rs opens it.
        root: the table's location in its filesystem (the units' path).
        query: what the read sees.
        table_type: ``COPY_ON_WRITE`` or ``MERGE_ON_READ``.
        version: the table version (6, 8, 9).
        instant: the latest completed instant the read sees (``as_of`` or the table's latest).
        slices: every slice the query reads, by partition path.
        fields: the partition fields whose values the paths are (empty: paths do not prune).
        hive_style: ``k=v`` paths.
        urlencoded: paths percent-encode their values (``hoodie.datasource.write.partitionpath.urlencode``).
    """

    uri: str
    root: str
    query: HudiQuery
    table_type: str
    version: int
    instant: str
    slices: tuple[SliceFiles, ...] = field(repr=False)
    fields: tuple[str, ...] = ()
    hive_style: bool = False
    urlencoded: bool = False
    unsorted: ClassVar[str] = "a Hudi file slice is its base file merged with its log files, not a sorted file"

    @property
    def name(self) -> str:
        kind = "copy-on-write" if self.table_type == "COPY_ON_WRITE" else "merge-on-read"
        return f"Apache Hudi {kind} (table version {self.version}), {self.query}"

    def versions(self) -> str:
        return f"instant {self.instant or '(none: empty table)'}"

    # -- listing ------------------------------------------------------------------------------------
    def partition_values(self, path: str) -> dict[str, str] | None:
        """The partition fields' values of a partition path, or None where the path is not their values."""
        if not self.fields:
            return {}
        parts = [p for p in path.split("/") if p] if path else []
        if len(parts) != len(self.fields):
            return None
        values = {}
        for name, part in zip(self.fields, parts):
            if self.hive_style:
                key, eq, raw = part.partition("=")
                if not eq or key != name:
                    return None
            else:
                raw = part
            values[name] = unquote(raw) if self.urlencoded else raw
        return values

    def layout(self, table: Any, keep: Callable[[dict[str, str]], bool] | None) -> HudiLayout:
        """The partitions the read lists (those ``keep`` accepts), each with why it cannot be read by
        bucket (``PartitionLayout.doubt``) where its file groups contradict the table's bucket index."""
        spec = table.spec
        by_path: dict[str, list[SliceFiles]] = {}
        for s in self.slices:
            by_path.setdefault(s.partition_path, []).append(s)
        if not by_path:
            by_path[""] = []  # an empty table: one partition, nothing to read
        parts = []
        for path in sorted(by_path):
            values = self.partition_values(path) or {}
            if keep is not None and self.fields and not keep(values):
                continue
            doubt = _bucket_doubt(posixpath.join(table.location, path), by_path[path], spec.bucket_count) \
                if spec.bucketed else None
            parts.append(PartitionLayout(values, posixpath.join(table.location, path).rstrip("/"), path, "hudi", {},
                                         doubt=doubt))
        return HudiLayout(table.location, parts)

    def plan_partition(self, fs: pafs.FileSystem, path: str, *, bucket_count: int, selected: frozenset[int] | None,
                       unbucketed: bool) -> tuple[tuple[SliceFiles, ...], dict[int, tuple[str, ...]], dict[str, int]]:
        root = self.root.rstrip("/")
        rel = posixpath.relpath(path, root) if path != root else ""
        rel = "" if rel == "." else rel
        mine = tuple(s for s in self.slices if s.partition_path == rel
                     and (unbucketed or selected is None or s.bucket in selected))
        files: dict[int, tuple[str, ...]] = {}
        sizes: dict[str, int] = {}
        for s in mine:
            paths = tuple(posixpath.join(root, f) for f in ((s.base,) if s.base else ()) + s.logs)
            key = -1 if unbucketed else s.bucket
            files[key] = files.get(key, ()) + paths
            for p in paths:
                sizes[p] = max(1, s.size // max(1, len(paths)))
        return mine, files, sizes

    def settled(self, fs: pafs.FileSystem, partitions: Sequence[Any], file_format: str) -> HudiKind:
        return self

    def units(self, plan: Any) -> list[ReadUnit]:
        out = []
        for p in plan.partitions:
            for s in p.snapshot:
                bucket = -1 if plan.unbucketed is not None or s.bucket is None else s.bucket
                out.append(ReadUnit(self.root, s.size, bucket, tuple(p.values.items()), -1,
                                    HudiSlice(s, self.query, self.uri)))
        return out

    def describe(self, plan: Any) -> str:
        slices = [s for p in plan.partitions for s in p.snapshot]
        logs = sum(len(s.logs) for s in slices)
        return (f"{self.name}: {len(slices)} file slice(s) of {len(plan.partitions)} partition(s) as of "
                f"{self.versions()}, {sum(1 for s in slices if s.base)} base file(s) and {logs} log file(s)")

    def explain_partition(self, where: str, partition: Any, limit: int = 8) -> list[str]:
        slices = partition.snapshot
        lines = [f"  {where}: {len(slices)} file slice(s), {sum(len(s.logs) for s in slices)} log file(s)"]
        for s in slices[:limit]:
            bucket = f"bucket {s.bucket}: " if s.bucket is not None else ""
            base = s.base.rsplit("/", 1)[-1] if s.base else "(no base file)"
            lines.append(f"    {bucket}file group {s.file_id}: {base} + {len(s.logs)} log file(s)")
        if len(slices) > limit:
            lines.append(f"    ... (+{len(slices) - limit} file slices)")
        return lines

    def check(self, fs: pafs.FileSystem, plan: Any) -> None:
        return None  # hudi-rs refuses what it cannot read when the slice is read, naming the file

    def row_id_refused(self, table: str) -> str | None:
        return f"{table} is an Apache Hudi table; only full-ACID Hive tables have Hive's row__id"


def _bucket_doubt(where: str, slices: Sequence[SliceFiles], count: int) -> str | None:
    """Why a partition's file groups contradict a bucket index of ``count`` buckets, or None."""
    seen: dict[int, str] = {}
    for s in slices:
        b = s.bucket
        if b is None:
            return (f"{where}: file group {s.file_id} has no bucket number (a Hudi bucket-index file group's id "
                    "starts with its bucket as 8 digits, 00000005-...): not a bucket-index layout")
        if b >= count:
            return (f"{where}: file group {s.file_id} holds bucket {b}, not below the bucket_count={count} given "
                    "(the table's hoodie.bucket.index.num.buckets is another count)")
        if b in seen:
            return f"{where}: file groups {seen[b]} and {s.file_id} both hold bucket {b}"
        seen[b] = s.file_id
    return None


def is_hudi_table(table: Any) -> bool:
    """Whether a :class:`~bucketkit.table.BucketedTable` was opened as a Hudi table (its spec carries
    ``hoodie.table.type``)."""
    return "hoodie.table.type" in dict(table.spec.properties)


def hudi_refused(table: Any, **options: Any) -> None:
    """Refuse Hudi's read options (``query_type``, ``begin``, ``end``) on a table that is not Hudi."""
    given = sorted(k for k, v in options.items() if v is not None)
    if given:
        raise InvalidArgumentError(f"{', '.join(given)}: {table} is not an Apache Hudi table (no .hoodie/ "
                                   "timeline); these options read Hudi tables")


def _true(properties: Mapping[str, str], key: str) -> bool:
    return properties.get(key, "false").strip().lower() == "true"


def table_kind(table: Any, query: HudiQuery) -> HudiKind:
    """The :class:`HudiKind` of a read of a Hudi table: its file slices listed by hudi-rs."""
    properties = dict(table.spec.properties)
    uri = hudi_uri(table.filesystem, table.location)
    hudi_table = load(uri)
    latest = _latest_instant(hudi_table, uri)
    # an empty table (created, never written): nothing to read, as Hudi's readers return
    slices = tuple(_list_slices(hudi_table, uri, query)) if latest is not None else ()
    instant = query.as_of or query.end or latest or ""
    fields = partition_fields(properties)
    names = {n.lower() for n, _ in table.spec.columns}
    prunes = key_generator(properties) in ("simple", "complex") and all(f.lower() in names for f in fields)
    kind = HudiKind(uri, table.location, query, properties.get("hoodie.table.type", ""),
                    int(properties["hoodie.table.version"]), instant, slices, fields if prunes else (),
                    _true(properties, "hoodie.datasource.write.hive_style_partitioning"),
                    _true(properties, "hoodie.datasource.write.partitionpath.urlencode"))
    if kind.fields and any(kind.partition_values(s.partition_path) is None for s in slices):
        kind = dataclasses.replace(kind, fields=())  # some path is not the fields' values: paths never prune
    return kind


# -- one file slice: a read unit's source --------------------------------------------------------------
_READERS: dict[tuple, Any] = {}


def _reader(uri: str, query: HudiQuery) -> Any:
    """hudi-rs's file group reader of a table for a query, one per worker process."""
    key = (uri, query)
    if key not in _READERS:
        table = load(uri)
        try:
            _READERS[key] = table.create_file_group_reader_with_options(query.read_options())
        except CORE_ERRORS as exc:
            raise refusal(uri, "make a file group reader", exc) from None
    return _READERS[key]


@dataclass(frozen=True)
class HudiSlice:
    """The source of a read unit (:class:`bucketkit.units.ReadUnit`) that is one Hudi file slice: its
    base file merged with its log files by hudi-rs's file group reader, as Hudi merges them (the unit's
    path is the table's location, its files' paths relative to it)."""

    files_: SliceFiles
    query: HudiQuery
    uri: str

    def files(self, unit: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
        s = self.files_
        return ((posixpath.join(unit.path, s.base),) if s.base else (),
                tuple(posixpath.join(unit.path, f) for f in s.logs))

    def plain_file(self, unit: Any) -> str | None:
        """The base file, for a slice without log files read as a snapshot (copy-on-write, read-optimized): it
        holds the slice's rows as written. An incremental read keeps only some commits' rows: None."""
        s = self.files_
        if s.logs or not s.base or self.query.query_type == "incremental":
            return None
        return posixpath.join(unit.path, s.base)

    def rows(self, fs: pafs.FileSystem, unit: Any, file_format: str) -> int | None:
        """Its base file's footer rows (an estimate where log files update, insert or delete rows)."""
        if not self.files_.base:
            return None
        try:
            return footer_rows(fs, self.files(unit)[0][0], "parquet")
        except (OSError, pa.ArrowException):
            return None

    def schema(self, fs: pafs.FileSystem, unit: Any, file_format: str) -> pa.Schema:
        data = self.files(unit)[0]
        return read_schema(fs, data[0], "parquet") if data else self.read(fs, unit, file_format=file_format).schema

    def read(self, fs: pafs.FileSystem, unit: Any, *, file_format: str, row_id: bool = False,
             columns: Sequence[str] | None = None) -> pa.Table:
        if row_id:
            raise InvalidArgumentError(f"row_id=True: {unit.path} is an Apache Hudi table; only full-ACID Hive "
                                       "tables have Hive's row__id")
        batches = list(self._stream(fs, unit))
        if not batches:
            return pa.Table.from_batches([], schema=self.schema(fs, unit, file_format))
        return pa.Table.from_batches(batches)

    def batches(self, fs: pafs.FileSystem, unit: Any, columns: Sequence[str], target: pa.Schema, file_format: str,
                batch_rows: int) -> Iterator[pa.RecordBatch]:
        for batch in self._stream(fs, unit):
            found = [c for c in columns if c in batch.schema.names]
            yield batch.select(found)

    def _stream(self, fs: pafs.FileSystem, unit: Any) -> Iterator[pa.RecordBatch]:
        """The slice's rows as hudi-rs's file group reader streams them (merged with its logs)."""
        s = self.files_
        try:
            stream = _reader(self.uri, self.query).read_file_slice_from_paths_stream(
                s.base, list(s.logs), self.query.read_options())
            for batch in stream:
                yield batch
        except CORE_ERRORS as exc:
            missing = _missing(fs, self.files(unit))
            if missing:
                raise FileNotFoundError(missing) from None
            raise refusal(unit.path, f"read {self.describe(unit)}", exc) from None

    def describe(self, unit: Any) -> str:
        s = self.files_
        where = f"partition {s.partition_path}" if s.partition_path else "the table"
        return (f"file slice of file group {s.file_id} in {where} of {unit.path} ({s.base or 'no base file'} + "
                f"{len(s.logs)} log file(s))")

    def gone(self, unit: Any) -> str:
        return "Hudi's cleaner removed an older file slice (or a rollback or overwrite replaced it)"


def _missing(fs: pafs.FileSystem, files: tuple[tuple[str, ...], tuple[str, ...]]) -> str | None:
    for path in files[0] + files[1]:
        try:
            if fs.get_file_info(path).type == pafs.FileType.NotFound:
                return path
        except OSError:
            return path
    return None
