"""An Apache Hudi table as bucketkit sees it: its ``hoodie.properties``, its columns, and the spec it
is read with (pure Python + hudi-rs).

A directory is a Hudi table when it holds ``.hoodie/hoodie.properties``. bucketkit reads table
versions 6, 8 and 9 (Hudi 0.14 - 1.x), as hudi-rs does; any other version is refused naming it. Its
columns are what hudi-rs reads (Hudi's five ``_hoodie_*`` meta columns first when the table populates
them, as Spark's Hudi reader returns them); partition columns stay data columns, read from the files
(Hudi writes them there), and the partition path only prunes.

A Hudi table is bucketed only by its bucket index (``hoodie.index.type=BUCKET``), whose bucket count
Hudi keeps in the writer's settings, not in ``hoodie.properties``: ``bucket_count=`` (the writer's
``hoodie.bucket.index.num.buckets``) reads it by bucket, hashed by Hudi's own rule
(:mod:`bucketkit.hashing.hudi`) on ``bucketed_by=`` (``hoodie.bucket.index.hash.field``; default: the
record key fields). Without it the table is read unbucketed, never with another engine's hash.
"""

from __future__ import annotations

import posixpath
from typing import Any, Mapping, Sequence

import pyarrow.fs as pafs

from bucketkit.errors import InvalidArgumentError, TableNotFoundError, UnsupportedTableError
from bucketkit.hivetypes import hive_type_of_arrow
from bucketkit.layout.metadata import TableSpec

__all__ = ["HOODIE", "PROPERTIES", "SUPPORTED_VERSIONS", "META_COLUMNS", "is_hudi_dir", "read_properties",
           "table_version", "hudi_uri", "load", "hudi_spec", "UNBUCKETED", "CORE_ERRORS", "refusal"]

HOODIE = ".hoodie"
PROPERTIES = "hoodie.properties"
SUPPORTED_VERSIONS = (6, 8, 9)
META_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name")
UNBUCKETED = ("a Hudi table read without bucket_count=: Hudi keeps its bucket index's count in the writer's "
              "settings, not in hoodie.properties; give it (hoodie.bucket.index.num.buckets) to prune and join by "
              "bucket")
#: What hudi-rs raises: its ``HudiCoreError``, a class its bindings do not export (it derives from ``Exception``
#: only), besides OS and Arrow errors; callers wrap each with :func:`refusal`.
CORE_ERRORS: tuple[type, ...] = (Exception,)
#: The hudi-rs scheme of each pyarrow filesystem (``FileSystem.type_name``).
_SCHEMES = {"s3": "s3", "gcs": "gs"}


def is_hudi_dir(fs: pafs.FileSystem, root: str) -> bool:
    """Whether ``root`` holds a Hudi table (``.hoodie/hoodie.properties``)."""
    try:
        return fs.get_file_info(posixpath.join(root, HOODIE, PROPERTIES)).type == pafs.FileType.File
    except OSError:
        return False


def read_properties(fs: pafs.FileSystem, root: str) -> dict[str, str]:
    """``.hoodie/hoodie.properties`` as a dict (Java properties: ``#`` comments, ``\\:`` escapes)."""
    path = posixpath.join(root, HOODIE, PROPERTIES)
    try:
        with fs.open_input_stream(path) as f:
            text = f.read().decode("utf-8")
    except OSError as exc:
        raise TableNotFoundError(f"{path}: cannot be read ({exc}); expected a Hudi table's properties") from None
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip().replace("\\:", ":").replace("\\=", "=").replace("\\\\", "\\")
    return out


def table_version(properties: Mapping[str, str], root: str) -> int:
    """The table version, if bucketkit reads it (6, 8, 9); else :class:`UnsupportedTableError` naming it."""
    raw = properties.get("hoodie.table.version", "")
    version = int(raw) if raw.strip().isdigit() else None
    if version not in SUPPORTED_VERSIONS:
        raise UnsupportedTableError(
            f"{root}: Hudi table version {raw or '(none)'} (hoodie.table.version in .hoodie/hoodie.properties); "
            f"bucketkit reads Hudi table versions {', '.join(map(str, SUPPORTED_VERSIONS))} (Hudi 0.14 to 1.x). "
            "Upgrade the table with Hudi's own tools, or read it with Spark and Hudi's bundle")
    return version


def hudi_uri(fs: pafs.FileSystem, root: str) -> str:
    """The table's location as hudi-rs opens it: a local path, or ``s3://`` / ``gs://`` URIs."""
    if fs.type_name == "local":
        return root
    scheme = _SCHEMES.get(fs.type_name)
    if scheme is None:
        raise UnsupportedTableError(f"{root}: a Hudi table on a {fs.type_name} filesystem; bucketkit reads Hudi "
                                    "tables through hudi-rs, on local disks, S3 and GCS")
    return f"{scheme}://{root}"


def refusal(root: str, what: str, exc: BaseException) -> UnsupportedTableError:
    """A hudi-rs error as bucketkit's: which table, what was being done, hudi-rs's own words."""
    return UnsupportedTableError(f"{root}: hudi-rs cannot {what}: {str(exc).strip() or type(exc).__name__}")


def load(uri: str, options: Mapping[str, str] | None = None) -> Any:
    """The hudi-rs table at ``uri`` (``hudi.HudiTable``); a clear error when the package is missing."""
    try:
        import hudi
    except ImportError:
        raise UnsupportedTableError(
            f"{uri} is an Apache Hudi table: reading it needs hudi-rs's Python package, the optional extra "
            "`pip install \"bucketkit[hudi]\"` (or `pip install hudi`)") from None
    try:
        return hudi.HudiTableBuilder.from_base_uri(uri).with_hudi_options(dict(options or {})).build()
    except CORE_ERRORS as exc:
        raise refusal(uri, "open the table", exc) from None


def hudi_spec(fs: pafs.FileSystem, root: str, properties: Mapping[str, str], *,
              bucketed_by: Sequence[str] | str | None = None, bucket_count: int | None = None) -> TableSpec:
    """The spec a Hudi table is read with: its columns (meta columns first when populated), Parquet,
    bucketed by Hudi's bucket index when ``bucket_count`` is given (on ``bucketed_by``, else the record
    key fields), else not bucketed. Its ``hoodie.*`` properties travel in ``TableSpec.properties``."""
    table_version(properties, root)
    base_format = properties.get("hoodie.table.base.file.format", "PARQUET").lower()
    if base_format != "parquet":
        raise UnsupportedTableError(f"{root}: Hudi base file format {base_format.upper()} "
                                    "(hoodie.table.base.file.format); bucketkit reads Parquet base files")
    table = load(hudi_uri(fs, root))
    meta = properties.get("hoodie.populate.meta.fields", "true").strip().lower() != "false"
    try:
        schema = table.get_schema_with_meta_fields() if meta else table.get_schema()
    except CORE_ERRORS as exc:
        raise refusal(root, "read the table's schema", exc) from None
    columns = tuple((f.name, str(hive_type_of_arrow(f.type))) for f in schema)
    keys = _fields(properties.get("hoodie.table.recordkey.fields", ""))
    if bucket_count is None:
        if bucketed_by is not None:
            raise InvalidArgumentError(f"{root}: bucketed_by={bucketed_by!r} without bucket_count=; give the Hudi "
                                       "bucket index's hoodie.bucket.index.num.buckets as bucket_count=")
        return TableSpec.create((), 0, columns=columns, file_format="parquet", properties=tuple(properties.items()))
    fields = (bucketed_by,) if isinstance(bucketed_by, str) else tuple(bucketed_by or keys)
    if not fields:
        raise InvalidArgumentError(f"{root}: no record key fields in hoodie.properties; give the bucket index's "
                                   "hash fields as bucketed_by=")
    names = {n.lower(): n for n, _ in columns}
    missing = [c for c in fields if c.lower() not in names]
    if missing:
        raise InvalidArgumentError(f"{root}: bucketed_by column(s) {missing} are not columns of the Hudi table "
                                   f"(expected some of {[n for n, _ in columns]})")
    return TableSpec.create(tuple(names[c.lower()] for c in fields), bucket_count, columns=columns,
                            file_format="parquet", hash_family="hudi", properties=tuple(properties.items()))


def _fields(text: str) -> tuple[str, ...]:
    return tuple(f.strip() for f in text.split(",") if f.strip())


def record_key_fields(properties: Mapping[str, str]) -> tuple[str, ...]:
    """``hoodie.table.recordkey.fields``, in order."""
    return _fields(properties.get("hoodie.table.recordkey.fields", ""))


def partition_fields(properties: Mapping[str, str]) -> tuple[str, ...]:
    """``hoodie.table.partition.fields`` (a custom key generator's ``field:type`` suffixes dropped)."""
    return tuple(f.split(":")[0] for f in _fields(properties.get("hoodie.table.partition.fields", "")))


def key_generator(properties: Mapping[str, str]) -> str:
    """``simple``, ``complex``, ``nonpartitioned``, ``timestamp``, ``custom``, ... from either property."""
    kind = properties.get("hoodie.table.keygenerator.type", "").strip().lower()
    if kind:
        return kind
    cls = properties.get("hoodie.table.keygenerator.class", "").rsplit(".", 1)[-1].lower()
    for name in ("nonpartitioned", "complex", "simple", "timebased", "timestamp", "custom"):
        if cls.startswith(name):
            return "timestamp" if name == "timebased" else name
    return cls or "simple"


def pinned_by_key(properties: Mapping[str, str], bucketed_by: Sequence[str]) -> str | None:
    """Why Hudi's writers could have hashed the bucket columns other than as their values, or None.

    Hudi hashes the values its record key spells: a simple key is the value itself; a complex key
    ``f1:v1,f2:v2`` is split back into values (in record-key order since Hudi 0.13, hash-field order
    before), and a single-field complex key (``id:5``) is hashed whole by Hudi 1.x but as ``5`` before.
    """
    keys = [k.lower() for k in record_key_fields(properties)]
    cols = [c.lower() for c in bucketed_by]
    if any(c not in keys for c in cols):
        return (f"bucket column(s) {[c for c in bucketed_by if c.lower() not in keys]} are not record key fields "
                f"({', '.join(record_key_fields(properties)) or 'none'}); Hudi's bucket index hashes record key fields")
    if len(cols) > 1 and cols != [k for k in keys if k in cols]:
        return (f"bucket columns {list(bucketed_by)} are not in the record key's order ({', '.join(keys)}): Hudi "
                "before 0.13 hashed them in one order, later releases in the other")
    if key_generator(properties) == "complex" and len(keys) == 1:
        return ("a single-field complex record key (id:5): Hudi 1.x hashes the key whole, earlier releases its "
                "value; which wrote the table is unknown")
    return None


__all__ += ["record_key_fields", "partition_fields", "key_generator", "pinned_by_key"]
