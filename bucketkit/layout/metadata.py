"""A bucketed table's spec, and the hidden metadata file that records it for path tables.

A :class:`TableSpec` says how a table is bucketed: the bucket columns and their Hive types, the
bucket count, the bucketing version, sort and partition columns, file format and naming. The writer
records it in ``<table>/_bucketkit_table.json`` (hidden: its name starts with ``_``, so Hive, Trino
and Spark skip it) and scan, join and the CLI read it back, so users need not repeat the spec.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Iterable, Literal, Sequence, get_args

import pyarrow.fs as pafs

from bucketkit.errors import InvalidArgumentError, TableNotFoundError
from bucketkit.hashing.hive import HASH_FAMILIES, hashing_name
from bucketkit.hivetypes import parse_hive_type
from bucketkit.io import TableFormat, check_table_format, ensure_dir, resolve_filesystem, write_whole

__all__ = ["TableSpec", "SortKey", "METADATA_FILE", "Naming", "NAMINGS", "read_spec", "write_spec",
           "bucketing_version_from_properties", "spelled_as", "spelled_keys"]

METADATA_FILE = "_bucketkit_table.json"
FORMAT_VERSION = 1
Naming = Literal["hive", "legacy-presto"]
NAMINGS: tuple[str, ...] = get_args(Naming)


@dataclass(frozen=True)
class SortKey:
    """One ``SORTED BY`` column: Hive's ``col ASC`` / ``col DESC``."""

    column: str
    ascending: bool = True

    def __str__(self) -> str:
        return f"{self.column} {'ASC' if self.ascending else 'DESC'}"

    @classmethod
    def of(cls, value: "str | SortKey | tuple[str, str]") -> "SortKey":
        """``"ts"``, ``"ts DESC"``, ``("ts", "descending")`` or a SortKey."""
        if isinstance(value, SortKey):
            return value
        if isinstance(value, (tuple, list)) and len(value) == 2:
            name, order = value
        elif isinstance(value, str):
            parts = value.split()
            name, order = (parts[0], parts[1]) if len(parts) == 2 else (value, "asc")
        else:
            raise InvalidArgumentError(f"sorted_by entry {value!r}: expected 'col', 'col DESC' or ('col', 'descending')")
        order = str(order).lower()
        if order not in ("asc", "ascending", "desc", "descending"):
            raise InvalidArgumentError(f"sorted_by entry {value!r}: order must be asc/ascending or desc/descending")
        return cls(str(name), order.startswith("asc"))


def spelled_as(wanted: Iterable[str], names: Sequence[str]) -> list[str]:
    """Each of ``wanted`` as ``names`` spell it: column names are case-insensitive in Hive, Trino and
    Spark (``spark.sql.caseSensitive`` is off by default) and the Hive metastore keeps them lower case,
    so a bucket column ``userid`` of a table whose schema says ``UserId`` is that column. The exact
    name wins; else the one name equal but for case; a name with none (or with several, differing
    only in case) is returned as given, for the caller to report as missing."""
    by_lower: dict[str, list[str]] = {}
    for n in names:
        by_lower.setdefault(n.lower(), []).append(n)
    out = []
    for w in wanted:
        alike = by_lower.get(str(w).lower(), [])
        out.append(w if w in names or len(alike) != 1 else alike[0])
    return out


def spelled_keys(keys: Iterable[Any], names: Sequence[str]) -> tuple[SortKey, ...]:
    """``sorted_by`` entries (:meth:`SortKey.of`'s forms) as :class:`SortKey` objects whose columns ``names`` spell
    (:func:`spelled_as`)."""
    parsed = [SortKey.of(k) for k in keys]
    return tuple(SortKey(c, k.ascending) for c, k in zip(spelled_as([k.column for k in parsed], names), parsed))


def bucketing_version_from_properties(properties: dict[str, str] | None) -> int:
    """Trino's rule: ``bucketing_version`` missing → 1, ``"1"`` → 1, ``"2"`` → 2, else an error."""
    value = (properties or {}).get("bucketing_version")
    if value is None:
        return 1
    if str(value).strip() in ("1", "2"):
        return int(value)
    raise InvalidArgumentError(f"table property bucketing_version={value!r}: expected '1' or '2'")


def _folded(field_name: str, value: Any) -> Any:
    """A spec field as :meth:`TableSpec.differences` compares it: column names without their case."""
    if field_name in ("bucketed_by", "partitioned_by"):
        return tuple(c.lower() for c in value)
    if field_name == "sorted_by":
        return tuple((s.column.lower(), s.ascending) for s in value)
    if field_name == "columns":
        return tuple((c.lower(), t) for c, t in value)
    return value


@dataclass(frozen=True)
class TableSpec:
    """How a table is bucketed and stored.

    Attributes:
        bucketed_by: bucket column names, in hash order; ``()`` for a table that is not bucketed
            (Hive 3's default managed ACID table: its ``bucket_N`` files are numbered by writer).
        bucket_types: their Hive types (``"bigint"``, ``"varchar(20)"``, ...), same order.
        bucket_count: number of buckets (1 .. 99999 for Trino-compatible names); 0 when not bucketed.
        bucketing_version: 1 (Hive < 3, Spark's Hive writer) or 2 (Hive 3, Trino's default).
        sorted_by: ``SORTED BY`` keys inside each bucket file.
        partitioned_by: Hive partition column names (directory levels, in order).
        partition_types: their Hive types.
        columns: every data column (not partition columns) as ``(name, hive type)``, file order.
        file_format: ``"orc"`` or ``"parquet"``; ``"text"`` for a Hive TEXTFILE table bucketkit's SQL INSERT
            committed (its files are read and written by Spark SQL only).
        naming: file naming scheme used when writing: ``"hive"`` or ``"legacy-presto"``.
        properties: extra table properties (kept as given).
        hash_family: ``"hive"`` (Hive/Trino bucketing, ``bucketing_version`` 1 or 2) or ``"spark"``
            (a Spark ``bucketBy`` table: Murmur3 seed 42 and Spark's own encoding, whatever
            ``bucketing_version`` says; bucketkit reads such tables but never writes them).
    """

    bucketed_by: tuple[str, ...]
    bucket_types: tuple[str, ...]
    bucket_count: int
    bucketing_version: int = 2
    sorted_by: tuple[SortKey, ...] = ()
    partitioned_by: tuple[str, ...] = ()
    partition_types: tuple[str, ...] = ()
    columns: tuple[tuple[str, str], ...] = ()
    file_format: TableFormat = "orc"
    naming: Naming = "hive"
    properties: tuple[tuple[str, str], ...] = field(default=())
    hash_family: str = "hive"

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple((str(n), str(parse_hive_type(t))) for n, t in self.columns))
        # bucket and sort columns as the columns spell them (a metastore's CLUSTERED BY is lower case)
        spelling = [n for n, _ in self.columns]
        object.__setattr__(self, "bucketed_by", tuple(spelled_as(self.bucketed_by, spelling)))
        object.__setattr__(self, "bucket_types", tuple(str(parse_hive_type(t)) for t in self.bucket_types))
        object.__setattr__(self, "sorted_by", spelled_keys(self.sorted_by, spelling))
        object.__setattr__(self, "partitioned_by", tuple(self.partitioned_by))
        ptypes = tuple(self.partition_types) or ("string",) * len(self.partitioned_by)
        object.__setattr__(self, "partition_types", tuple(str(parse_hive_type(t)) for t in ptypes))
        object.__setattr__(self, "properties", tuple(sorted(dict(self.properties).items())))
        if not self.bucketed_by and self.bucket_count != 0:
            raise InvalidArgumentError("bucketed_by: expected at least one bucket column")
        if len(self.bucket_types) != len(self.bucketed_by):
            raise InvalidArgumentError(
                f"bucket_types {list(self.bucket_types)} must give one Hive type per bucket column "
                f"{list(self.bucketed_by)}")
        if len(set(self.bucketed_by)) != len(self.bucketed_by):
            raise InvalidArgumentError(f"bucketed_by {list(self.bucketed_by)} names a column twice")
        if not isinstance(self.bucket_count, int) or isinstance(self.bucket_count, bool) or (
                self.bucket_count < 1 and self.bucketed_by):
            raise InvalidArgumentError(f"bucket_count={self.bucket_count!r}: expected a positive integer")
        if self.hash_family not in HASH_FAMILIES:
            raise InvalidArgumentError(f"hash_family={self.hash_family!r}: expected one of {list(HASH_FAMILIES)}")
        if self.bucketing_version not in (1, 2):
            raise InvalidArgumentError(f"bucketing_version={self.bucketing_version!r}: expected 1 or 2")
        if len(self.partition_types) != len(self.partitioned_by):
            raise InvalidArgumentError(
                f"partition_types {list(self.partition_types)} must give one Hive type per partition "
                f"column {list(self.partitioned_by)}")
        overlap = set(self.partitioned_by) & set(self.bucketed_by)
        if overlap:
            raise InvalidArgumentError(f"column(s) {sorted(overlap)} cannot be both partition and bucket columns")
        check_table_format(self.file_format)
        if self.naming not in NAMINGS:
            raise InvalidArgumentError(f"naming={self.naming!r}: expected one of {list(NAMINGS)}")
        if self.columns:
            names = [n for n, _ in self.columns]
            missing = [c for c in self.bucketed_by + tuple(s.column for s in self.sorted_by) if c not in names]
            if missing:
                raise InvalidArgumentError(f"column(s) {missing} are not among the table's columns {names}")

    # -- derived ---------------------------------------------------------------------------------
    @property
    def column_types(self) -> dict[str, str]:
        """Hive type of every column, data columns then partition columns."""
        return {**dict(self.columns), **dict(zip(self.partitioned_by, self.partition_types))}

    @property
    def bucketed(self) -> bool:
        """Whether rows are placed by a hash of bucket columns (False: no bucket columns, 0 buckets)."""
        return bool(self.bucketed_by)

    def bucket_function(self):
        """The :class:`bucketkit.hashing.hive.BucketFunction` that places rows of this table; None for
        a table that is not bucketed (nothing hashes its rows)."""
        from bucketkit.hashing.hive import BucketFunction  # hashing is below metadata; imported lazily for speed

        if not self.bucketed:
            return None
        return BucketFunction(self.bucketing_version, self.bucket_types, self.bucket_count, self.hash_family)

    @property
    def hashing(self) -> str:
        """How rows are hashed, in words (``"Hive bucketing v2"``, ``"Spark's bucketBy hash ..."``)."""
        return hashing_name(self.hash_family, self.bucketing_version)

    def with_(self, **changes: Any) -> "TableSpec":
        return replace(self, **changes)

    def differences(self, other: "TableSpec") -> list[str]:
        """Human-readable differences that make ``other`` incompatible for an append."""
        out = []
        for name in ("hash_family", "bucketed_by", "bucket_types", "bucket_count", "bucketing_version", "sorted_by",
                     "partitioned_by", "partition_types", "columns", "file_format"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if _folded(name, mine) != _folded(name, theirs):
                fmt = (lambda v: [str(x) for x in v]) if isinstance(mine, tuple) else repr
                out.append(f"{name}: table has {fmt(mine)}, write has {fmt(theirs)}")
        return out

    # -- serialisation ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sorted_by"] = [{"column": s.column, "ascending": s.ascending} for s in self.sorted_by]
        d["columns"] = [list(c) for c in self.columns]
        d["properties"] = dict(self.properties)
        if self.hash_family == "hive":
            del d["hash_family"]  # the only family bucketkit writes; files stay readable by older versions
        return {"bucketkit_metadata_version": FORMAT_VERSION, **d}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TableSpec":
        data = dict(data)
        version = data.pop("bucketkit_metadata_version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise InvalidArgumentError(f"bucketkit metadata version {version!r}: this bucketkit reads {FORMAT_VERSION}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise InvalidArgumentError(f"bucketkit metadata has unknown keys {sorted(unknown)}")
        data["sorted_by"] = tuple(SortKey(s["column"], s["ascending"]) for s in data.get("sorted_by", ()))
        data["columns"] = tuple(tuple(c) for c in data.get("columns", ()))
        data["properties"] = tuple(dict(data.get("properties", {})).items())
        return cls(**data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "TableSpec":
        return cls.from_dict(json.loads(text))

    @classmethod
    def create(cls, bucketed_by: Sequence[str] | str, bucket_count: int, *, bucket_types: Iterable[str] | None = None,
               columns: dict[str, str] | Sequence[tuple[str, str]] | None = None, **kwargs: Any) -> "TableSpec":
        """Build a spec, taking the bucket types from ``columns`` when not given."""
        bucketed_by = (bucketed_by,) if isinstance(bucketed_by, str) else tuple(bucketed_by)
        cols = tuple((columns.items() if isinstance(columns, dict) else columns) or ())
        if bucket_types is None:
            lookup = dict(cols)
            missing = [c for c in bucketed_by if c not in lookup]
            if missing:
                raise InvalidArgumentError(f"bucket column(s) {missing}: no Hive type given (pass bucket_types=)")
            bucket_types = [lookup[c] for c in bucketed_by]
        return cls(bucketed_by, tuple(bucket_types), bucket_count, columns=cols, **kwargs)


def read_spec(path: str, filesystem: pafs.FileSystem | None = None) -> TableSpec:
    """Read ``<path>/_bucketkit_table.json``.

    Raises:
        TableNotFoundError: there is no metadata file (not a bucketkit table; pass the spec).
    """
    from bucketkit.layout.versions import live_root, wait_for_switch

    fs, root = resolve_filesystem(path, filesystem)
    check_table_dir(path, fs, root)
    target = posixpath.join(live_root(fs, root), METADATA_FILE)  # a pointer's version on an object store
    try:
        with fs.open_input_stream(target) as f:
            text = f.read().decode("utf-8")
    except FileNotFoundError:
        if wait_for_switch(fs, root, path):  # a commit was between the two renames of its switch
            return read_spec(root, fs)
        raise TableNotFoundError(
            f"{path}: no {METADATA_FILE} (not written by bucketkit); pass bucketed_by, bucket_count "
            f"and bucketing_version for a foreign table") from None
    except OSError as exc:  # permission denied, a non-file at the metadata's name
        raise TableNotFoundError(f"{target}: cannot be read ({exc}); expected a readable metadata file") from None
    try:
        return TableSpec.from_json(text)
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidArgumentError(f"{target}: invalid bucketkit metadata: {exc}") from None


def check_table_dir(path: Any, fs: pafs.FileSystem, root: str) -> None:
    """Raise :class:`TableNotFoundError` naming ``path`` unless it is a directory bucketkit can reach.

    Callers get one bucketkit error for a missing path, a file, or an unreadable parent instead of
    the OS's FileNotFoundError / NotADirectoryError / PermissionError.
    """
    try:
        info = fs.get_file_info(root.rstrip("/") or "/")
    except OSError as exc:
        raise TableNotFoundError(f"{path}: cannot be read ({exc}); expected a readable table directory") from None
    if info.type == pafs.FileType.NotFound:
        from bucketkit.layout.versions import wait_for_switch

        if wait_for_switch(fs, root, path):  # a commit was between the two renames of its switch
            return check_table_dir(path, fs, root)
    if info.type != pafs.FileType.Directory:
        what = "is a file" if info.type == pafs.FileType.File else "does not exist"
        raise TableNotFoundError(f"{path}: {what}; expected a table directory")


def write_spec(path: str, spec: TableSpec, filesystem: pafs.FileSystem | None = None) -> None:
    """Write the metadata file atomically (:func:`~bucketkit.io.write_whole`: a temporary hidden file renamed
    over the old one, or on an object store one object written whole)."""
    fs, root = resolve_filesystem(path, filesystem)
    ensure_dir(fs, root)
    write_whole(fs, posixpath.join(root, METADATA_FILE), spec.to_json().encode("utf-8"))
