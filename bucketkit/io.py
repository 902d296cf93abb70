"""File formats, paths and the names every module agrees on (pure pyarrow, no Spark).

One home for what touches bytes and locations:

* **Formats**: ORC and Parquet behind one :class:`DataFile` (schema, footer row count, column
  reads, bounded batches), :func:`read_file`, :func:`footer_rows`, :func:`empty_file` (a file with
  a footer and no rows) and the codecs Spark's writers accept (:data:`COMPRESSIONS`). Files are
  read with ``pyarrow.orc``/``pyarrow.parquet`` on the calling thread, not through the dataset
  scanner: under a capped address space an allocation failure in the scanner's thread pool left
  ``AsyncScanner::ToTable`` waiting forever (issue 11); a direct read returns or raises.
* **Locations**: a local path or URI -> ``(pyarrow filesystem, path inside it)``
  (:func:`resolve_filesystem`), and a path inside a filesystem -> the URI Spark's Hadoop
  filesystems take (:func:`spark_uri`).
* **Names**: the hidden-name rule of Hive, Trino and Spark (:func:`is_hidden`), bucketkit's
  staging names, ``__HIVE_DEFAULT_PARTITION__``, and the comma split of type lists.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import os
import posixpath
import re
import secrets
import urllib.parse
from typing import Any, Callable, Iterator, Literal, Sequence, get_args
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs

from bucketkit.errors import CorruptTableError, InvalidArgumentError, UnsupportedTypeError

__all__ = ["FileFormat", "FILE_FORMATS", "COMPRESSIONS", "DEFAULT_COMPRESSION", "HIVE_DEFAULT_PARTITION", "STAGING_DIR",
           "STAGING_PREFIX", "HIDDEN_PREFIXES", "is_hidden", "is_hidden_path", "split_top_level", "resolve_filesystem", "spark_uri",
           "hadoop_to_uri", "renames_directories", "has_directories", "ensure_dir", "for_each_request", "write_whole", "check_format",
           "TableFormat", "TABLE_FORMATS", "check_table_format",
           "DataFile", "open_data_file", "detect_format", "detect_data_file", "read_file", "read_schema", "footer_rows",
           "empty_file", "positional_names", "file_columns", "GREGORIAN_START", "julian_to_gregorian_days",
           "spark_calendar"]

FileFormat = Literal["orc", "parquet"]
FILE_FORMATS: tuple[str, ...] = get_args(FileFormat)
#: A table's format: a data file format, or ``"text"`` (a Hive TEXTFILE table, whose files Spark SQL reads and
#: writes through bucketkit's catalog with the table's own serde; bucketkit's Python readers do not read them).
TableFormat = Literal["orc", "parquet", "text"]
TABLE_FORMATS: tuple[str, ...] = get_args(TableFormat)
#: Codecs Spark's ORC and Parquet writers accept (the ``compression`` write option).
COMPRESSIONS = {"orc": ("none", "snappy", "zlib", "lz4", "zstd"),
                "parquet": ("none", "snappy", "gzip", "lz4", "zstd", "brotli")}
DEFAULT_COMPRESSION = "snappy"  # readable by Hive 2/3, Trino, PrestoDB and Spark; fast to write
#: The directory name Hive and Spark give a NULL or empty partition value.
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Where Spark's tasks write, inside the next version of a table (:mod:`bucketkit.writing.commit`).
STAGING_DIR = ".bucketkit-staging"
#: Per-write staging directories inside the table itself, left by interrupted writes of bucketkit
#: before the versioned commit; listings report them (``TableLayout.staging_dirs``).
STAGING_PREFIX = STAGING_DIR + "-"
#: The suffix of the hidden directory beside a table that keeps its committed versions
#: (:mod:`bucketkit.layout.versions`): ``<parent>/.<name>.bucketkit.versions/<write id>/``.
KEPT_VERSIONS = ".bucketkit.versions"

_MAGIC = {b"PAR1": "parquet", b"ORC": "orc"}


# -- names --------------------------------------------------------------------------------------
HIDDEN_PREFIXES = ("_", ".")


def is_hidden(name: str) -> bool:
    """Hive, Trino and Spark skip names starting with ``_`` or ``.`` (``_SUCCESS``, ``.crc``)."""
    return name.startswith(HIDDEN_PREFIXES)


def is_hidden_path(relpath: str) -> bool:
    """Whether any part of a relative ``a/b/c`` path is hidden (:func:`is_hidden`)."""
    # String tests rather than a split: listings call this once per file of 100k-file tables.
    return relpath.startswith(HIDDEN_PREFIXES) or "/_" in relpath or "/." in relpath


def split_top_level(text: str) -> list[str]:
    """Split at commas outside ``(...)`` and ``<...>``, dropping empty items.

    ``"decimal(10,2), map<string,int>,int"`` -> ``["decimal(10,2)", "map<string,int>", "int"]``.
    """
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "(<"
        depth -= ch in ")>"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


# -- locations ----------------------------------------------------------------------------------
#: Hadoop's schemes for stores pyarrow names otherwise (the metastore's locations are Hadoop's).
_PYARROW_SCHEMES = {"s3a": "s3", "s3n": "s3"}
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")  # Hadoop writes file:/x too; one letter is a Windows drive
#: ``scheme=module:callable[,...]``: the filesystem of URI schemes pyarrow lacks, for every bucketkit
#: process (a SQL INSERT's commit runs in a Python process of its own, started with the driver's environment).
FILESYSTEMS_ENV = "BUCKETKIT_FILESYSTEMS"
_REGISTERED: dict[str, Any] = {}


def register_filesystem(scheme: str, factory: Any) -> None:
    """Resolve URIs of ``scheme`` (one pyarrow has no filesystem for: ``wasbs``, a store of your own) with
    ``factory(uri) -> (pyarrow filesystem, path inside it)``, in this process. A SQL INSERT's commit runs
    in a process of its own: name the factory in ``BUCKETKIT_FILESYSTEMS`` (``scheme=module:callable``)
    in the driver's environment for that."""
    _REGISTERED[scheme.lower()] = factory


def _registered(scheme: str) -> Any | None:
    """The factory registered for ``scheme``, in this process or in ``BUCKETKIT_FILESYSTEMS``, or None."""
    if scheme in _REGISTERED:
        return _REGISTERED[scheme]
    for item in filter(None, (x.strip() for x in os.environ.get(FILESYSTEMS_ENV, "").split(","))):
        name, _, target = item.partition("=")
        if name.strip().lower() != scheme:
            continue
        module, _, attr = target.strip().partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise InvalidArgumentError(f"{FILESYSTEMS_ENV}: {item!r}: cannot load {target.strip()!r} ({exc}); "
                                       "expected scheme=module:callable") from None
        _REGISTERED[scheme] = factory
        return factory
    return None


def renames_directories(fs: pafs.FileSystem) -> bool:
    """Whether ``fs`` renames a directory in one atomic step (a local disk, HDFS); object stores copy
    it object by object."""
    name = fs.type_name
    return name in ("local", "hdfs") or name.endswith(("+file", "+local", "+hdfs"))  # fsspec's: py::fsspec+file


def has_directories(fs: pafs.FileSystem) -> bool:
    """Whether a file's directory must exist before the file is written. pyarrow's S3 and GCS filesystems name
    an object by its whole path, and ``create_dir(recursive=True)`` writes an empty marker object for every
    level of the path (five requests for ``bucket/warehouse/t/.bucketkit.versions/<id>/p=1``): there writing
    the object is enough."""
    return fs.type_name not in ("s3", "gcs")


def ensure_dir(fs: pafs.FileSystem, path: str) -> None:
    """Make the directory ``path`` exist where a store has directories (see :func:`has_directories`)."""
    if has_directories(fs):
        fs.create_dir(path, recursive=True)


#: Requests one step of a commit keeps in flight on a store whose every file operation is a round trip (a copy
#: of each file an append keeps on S3, GCS or ADLS; a copy on HDFS), as ``pyarrow.fs.copy_files`` does.
REQUEST_THREADS = 16


def for_each_request(fs: pafs.FileSystem, fn: Callable[[Any], Any], items: Sequence[Any]) -> None:
    """``fn(item)`` for each item: one after the other on this machine's own filesystem (each a system call of
    microseconds), in up to :data:`REQUEST_THREADS` threads on any other store (each a request that waits on the
    network). ``fn`` must be safe to run in threads. The first failure is raised once the calls under way have
    returned; the calls not begun are dropped."""
    if isinstance(fs, pafs.LocalFileSystem) or len(items) < 2 or REQUEST_THREADS < 2:
        for item in items:
            fn(item)
        return
    with concurrent.futures.ThreadPoolExecutor(min(REQUEST_THREADS, len(items)),
                                               thread_name_prefix="bucketkit-request") as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            for done in concurrent.futures.as_completed(futures):
                done.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def write_whole(fs: pafs.FileSystem, path: str, data: bytes) -> None:
    """Write ``path`` so that a reader gets its old bytes or the new ones, never a part: where the store
    renames, a hidden temporary file renamed over it; on an object store, one object written whole (a rename
    there would be a copy and a delete)."""
    if not renames_directories(fs):
        with fs.open_output_stream(path) as f:
            f.write(data)
        return
    tmp = posixpath.join(posixpath.dirname(path), f".{posixpath.basename(path)}.{secrets.token_hex(4)}.tmp")
    with fs.open_output_stream(tmp) as f:
        f.write(data)
    fs.move(tmp, path)


def resolve_filesystem(path: str, filesystem: pafs.FileSystem | None = None) -> tuple[pafs.FileSystem, str]:
    """``(filesystem, path inside it)`` for a local path or a URI (``s3://``, ``file://``, ...); Hadoop's
    ``s3a://`` and ``s3n://`` (how Spark and the metastore name S3 locations) are pyarrow's ``s3://``.

    Raises:
        InvalidArgumentError: a URI whose scheme pyarrow has no filesystem for (``wasbs://``,
            ``viewfs://`` ...), or whose filesystem cannot be opened here (``hdfs://`` without libhdfs),
            naming it: never read as a local path.
    """
    if filesystem is not None:
        return filesystem, path
    match = _URI.match(str(path))
    if match is None:  # a plain local path, not a URI
        return pafs.LocalFileSystem(), os.path.abspath(path)
    scheme = match.group(1).lower()
    factory = _registered(scheme)
    if factory is not None:
        return factory(path)
    uri = _PYARROW_SCHEMES[scheme] + path[len(scheme):] if scheme in _PYARROW_SCHEMES else path
    if uri.lower().startswith("s3:") and "allow_delayed_open" not in uri:
        # a small object (a commit's pointer, record, journal, manifest) in one PUT, not a multipart upload's
        # three requests (apache/arrow#40557); an error opening it is raised when it is closed, still inside
        # the write that made it
        uri += ("&" if "?" in uri else "?") + "allow_delayed_open=true"
    try:
        return pafs.FileSystem.from_uri(uri)
    except (ValueError, TypeError) as exc:
        raise InvalidArgumentError(
            f"{path}: pyarrow has no filesystem for {scheme}:// ({exc}); pass filesystem= (a pyarrow filesystem, "
            "e.g. pyarrow.fs.PyFileSystem(pyarrow.fs.FSSpecHandler(...)) for an fsspec store) with the path inside "
            f"it, or register one for the scheme (bucketkit.io.register_filesystem, {FILESYSTEMS_ENV})") from None
    except OSError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__  # libhdfs lists every path it tried
        raise InvalidArgumentError(f"{path}: its {scheme}:// filesystem cannot be opened here ({first}); pass "
                                   "filesystem= (a pyarrow filesystem) with the path inside it") from None


#: Environment variables pyarrow's ``FileSystem.from_uri`` takes an S3 endpoint from, first found first.
S3_ENDPOINT_ENV = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")


def s3_endpoint(uri: str) -> str | None:
    """The endpoint bucketkit's S3 requests for ``uri`` (``s3://``, ``s3a://``) go to, as :func:`resolve_filesystem`
    opens it: the URI's own ``endpoint_override``, else the environment's (:data:`S3_ENDPOINT_ENV`); None: AWS's."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(uri).query)
    if query.get("endpoint_override"):
        return query["endpoint_override"][0]
    return next((os.environ[k] for k in S3_ENDPOINT_ENV if os.environ.get(k)), None)


def endpoint_key(endpoint: str | None) -> str | None:
    """``endpoint`` as two spellings of one S3 endpoint compare equal: host and port, lower case, without the
    scheme; None for AWS's own (unset, or a host under ``amazonaws.com``, which the region decides)."""
    if not endpoint or not endpoint.strip():
        return None
    host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", endpoint.strip().lower()).rstrip("/")
    return None if host.split(":")[0].endswith("amazonaws.com") else host


def s3_bucket(uri: str) -> str | None:
    """The bucket of an ``s3://``, ``s3a://`` or ``s3n://`` URI, else None."""
    scheme, sep, rest = uri.partition("://")
    s3 = sep and scheme.lower() in ("s3", *_PYARROW_SCHEMES)  # pyarrow's and Hadoop's names of S3
    return rest.split("/", 1)[0].rsplit("@", 1)[-1] if s3 else None


def check_s3_endpoint(uri: str, spark_endpoint: str | None) -> None:
    """Refuse an S3 table that Spark and bucketkit would reach at two different stores: Spark's jobs write and read its
    files through Hadoop's S3A, at ``spark_endpoint`` (``fs.s3a.endpoint``, per bucket ``fs.s3a.bucket.<b>.endpoint``),
    bucketkit's planning and commit through pyarrow (:func:`s3_endpoint`). A MinIO or Ceph store named to Spark alone
    would have bucketkit list, commit and vacuum on AWS.

    Raises:
        InvalidArgumentError: the two endpoints differ (:func:`endpoint_key`); the message names both and the setting.
    """
    bucket = s3_bucket(uri)
    if bucket is None or endpoint_key(spark_endpoint) == endpoint_key(ours := s3_endpoint(uri)):
        return
    raise InvalidArgumentError(
        f"{uri}: Spark reaches bucket {bucket} at {spark_endpoint or 'AWS S3'} (fs.s3a.endpoint), bucketkit's S3 "
        f"requests (pyarrow) go to {ours or 'AWS S3'}: the two would see different stores. Set {S3_ENDPOINT_ENV[1]}="
        f"{spark_endpoint or '(unset)'}, with the store's keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, in the "
        "driver's environment and in the executors' (spark.executorEnv.*), or pass filesystem=")


#: Scheme of Spark's Hadoop filesystem for each pyarrow filesystem (``FileSystem.type_name``).
_SPARK_SCHEMES = {"local": "file", "s3": "s3a", "gcs": "gs", "hdfs": "hdfs"}


def spark_uri(filesystem: pafs.FileSystem, path: str, *, location: str | None = None) -> str:
    """The URI Spark (a Hadoop ``Path``) reads or writes ``path``, a path inside ``filesystem``, at.

    Hadoop's ``Path`` takes the path part literally (a space stays a space, ``%`` stays ``%``), so
    the path is not percent-encoded. ``location``, a URI the caller was given for this filesystem
    (a table's location), keeps its scheme and authority (``s3://`` stays ``s3://``, an HDFS name
    node stays); otherwise the scheme follows the filesystem (``s3a://`` for S3; a relative local
    path is made absolute). A path in a filesystem of another kind is returned as it is.
    """
    if location is not None and "://" in location:
        scheme, _, rest = location.partition("://")
        authority = rest.split("/", 1)[0] if path.startswith("/") else ""  # S3/GCS paths begin with the bucket
        return f"{scheme}://{authority}{path}"
    scheme = _SPARK_SCHEMES.get(filesystem.type_name)
    if scheme is None:
        return path
    return f"{scheme}://{os.path.abspath(path) if scheme == 'file' else path}"


def hadoop_to_uri(location: str) -> str:
    """A ``java.net.URI``'s text as Spark's catalog gives it -> a URI pyarrow parses.

    Hadoop's ``file:/x`` (any scheme without an authority) becomes ``file:///x``, and characters outside ASCII, which ``URI.toString``
    leaves as they are, are percent-encoded as UTF-8 (what ``URI.toASCIIString`` gives).
    """
    bare = re.match(r"([A-Za-z][A-Za-z0-9+.-]+):/(?!/)", location)  # no authority: file:/x (Hadoop's) is file:///x
    if bare:
        location = f"{bare.group(1)}://{location[len(bare.group(1)) + 1:]}"
    return re.sub(r"[^\x00-\x7f]+", lambda m: quote(m.group(0), safe=""), location)


# -- formats ------------------------------------------------------------------------------------
def check_format(file_format: str) -> str:
    """``file_format`` if bucketkit reads and writes it (:data:`FILE_FORMATS`), else an error."""
    if file_format == "text":
        raise InvalidArgumentError("file_format='text': a Hive TEXTFILE table's files are read and written by Spark SQL "
                                   "through bucketkit's catalog (the table's own serde), not by bucketkit's Python "
                                   f"readers and writer, which take {list(FILE_FORMATS)}")
    if file_format not in FILE_FORMATS:
        raise InvalidArgumentError(f"file_format={file_format!r}: expected one of {list(FILE_FORMATS)}")
    return file_format


def check_table_format(file_format: str) -> str:
    """``file_format`` if a table bucketkit commits may have it (:data:`TABLE_FORMATS`), else an error."""
    if file_format not in TABLE_FORMATS:
        raise InvalidArgumentError(f"file_format={file_format!r}: expected one of {list(TABLE_FORMATS)}")
    return file_format


class DataFile:
    """One open ORC or Parquet file: schema, footer row count, column reads and bounded batches.

    Values are read as Spark's readers read them: an ORC file's dates before 1582-10-15 are rebased from the hybrid
    Julian calendar Spark's writer (and Hive 2's) stores them in (:func:`julian_to_gregorian_days`), as are a
    Parquet file's that Spark wrote in that calendar (before 3.0, or with its legacy rebase mode); Parquet's INT96
    timestamps (Spark's default) are read in microseconds, Spark's unit, which holds years 1-9999.

    Use as a context manager (closes the file); built by :func:`open_data_file`.
    """

    def __init__(self, source: Any, file_format: str, path: str = "") -> None:
        self.file_format = check_format(file_format)
        self._source = source
        self.path = path
        if file_format == "orc":
            import pyarrow.orc as orc

            self._reader: Any = orc.ORCFile(source)
            self._julian = True  # Spark's ORC reader rebases every file's dates (its DaysWritable, OrcColumnVector)
        else:
            import pyarrow.parquet as pq

            self._reader = pq.ParquetFile(source, coerce_int96_timestamp_unit="us")
            self._julian = _legacy_parquet(self._reader.metadata.metadata or {})

    def __enter__(self) -> DataFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._source.close()

    @property
    def schema(self) -> pa.Schema:
        """The file's Arrow schema (with its key-value metadata)."""
        return self._reader.schema if self.file_format == "orc" else self._reader.schema_arrow

    @property
    def num_rows(self) -> int:
        """The row count in the footer (nothing else is read)."""
        return self._reader.nrows if self.file_format == "orc" else self._reader.metadata.num_rows

    def read(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The whole file, or only ``columns`` (in that order)."""
        with self._reading():
            if columns is None:
                return self._spark_values(self._reader.read())
            return self._spark_values(self._reader.read(columns=list(columns)).select(list(columns)))  # ORC: file order

    def batches(self, columns: Sequence[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
        """``columns`` (in that order) in file order, at most ``batch_rows`` rows a batch, one ORC stripe or Parquet
        row group in memory at a time, read on this thread."""
        with self._reading():
            if self.file_format == "orc":
                for i in range(self._reader.nstripes):
                    stripe = self._spark_values(self._reader.read_stripe(i, columns=list(columns)))
                    for offset in range(0, stripe.num_rows, batch_rows):
                        yield stripe.slice(offset, batch_rows).select(list(columns))
            else:
                for batch in self._reader.iter_batches(batch_size=batch_rows, columns=list(columns), use_threads=False):
                    yield self._spark_values(batch)

    def _spark_values(self, data: Any) -> Any:
        return spark_calendar(data) if self._julian else data

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """pyarrow's ORC reader holds timestamps in nanoseconds and fails on one outside 1677-2262: that failure
        named as the file's, with where such values can be read."""
        try:
            yield
        except pa.ArrowInvalid as exc:
            if "out of range for nanosecond" not in str(exc):
                raise
            raise UnsupportedTypeError(
                f"{self.path or 'an ORC file'}: holds a timestamp outside 1677-09-21..2262-04-11 ({exc}), which "
                "pyarrow's ORC reader cannot read (it reads timestamps in nanoseconds): bucketkit's Python readers "
                "(bucketkit.join's kernel, the bucketkit data source, validate) cannot read this file; Spark's own "
                "reader can (bucketkit.scan, Spark SQL through bucketkit's catalog, or a join of the two scans)"
            ) from None


#: 1582-10-15, the Gregorian calendar's first day, in days since 1970-01-01. Spark's ORC writer (as Hive 2's, and Spark
#: before 3.0 in Parquet) stores earlier dates as days of the hybrid calendar: Julian before that day.
GREGORIAN_START = -141427


def julian_to_gregorian_days(days: Any) -> Any:
    """Days since 1970-01-01 in the hybrid Julian calendar -> the same local date's days in the proleptic Gregorian
    calendar (Spark's ``RebaseDateTime.rebaseJulianToGregorianDays``; a date the Gregorian calendar lacks, such as
    1500-02-29, becomes the day after the month's 28th, as Spark's does). Days from 1582-10-15 on are unchanged.
    An ``int64`` numpy array in, the same out (tests hold it to Spark's function through the JVM)."""
    import numpy as np

    d = np.asarray(days, dtype=np.int64)
    jdn = d + 2440588  # Julian day number
    cycles = np.where(jdn < 0, -jdn // 1461 + 1, 0)  # the Julian calendar repeats every 4 years, 1,461 days
    c = jdn + cycles * 1461 + 32082
    years4 = (4 * c + 3) // 1461
    e = c - 1461 * years4 // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = years4 - 4800 + m // 10 - 4 * cycles  # astronomical: 1 BC is year 0
    y = year - (month <= 2)  # the proleptic Gregorian days of (year, month, 1): a 400-year era, then its day
    era = y // 400
    yoe = y - era * 400
    doe = yoe * 365 + yoe // 4 - yoe // 100 + (153 * ((month + 9) % 12) + 2) // 5
    return np.where(d < GREGORIAN_START, era * 146097 + doe - 719468 + day - 1, d)


def spark_calendar(data: Any) -> Any:
    """A table or batch read from a file that stores dates in the hybrid Julian calendar, with its dates (at any
    depth of lists, structs and maps) before 1582-10-15 rebased as Spark's readers rebase them."""
    if not any(_has_dates(t) for t in data.schema.types):
        return data
    rebased = [_gregorian(c) if _has_dates(c.type) else None for c in data.columns]
    if all(r is None for r in rebased):
        return data
    return type(data).from_arrays([c if r is None else r for c, r in zip(data.columns, rebased)], schema=data.schema)


def _has_dates(t: pa.DataType) -> bool:
    return pa.types.is_date32(t) or any(_has_dates(t.field(i).type) for i in range(t.num_fields))


def _gregorian(column: Any) -> Any:
    """``column`` with its dates before 1582-10-15 rebased, or None where it has none (nothing to rebuild)."""
    import numpy as np
    import pyarrow.compute as pc

    t = column.type
    if isinstance(column, pa.ChunkedArray):
        chunks = column.chunks
        rebased = [_gregorian(c) for c in chunks]
        return None if all(r is None for r in rebased) else \
            pa.chunked_array([c if r is None else r for c, r in zip(chunks, rebased)], t)
    if pa.types.is_date32(t):
        days = column.view(pa.int32())
        low = pc.min(days).as_py()
        if low is None or low >= GREGORIAN_START:
            return None
        rebased = julian_to_gregorian_days(days.fill_null(0).to_numpy()).astype(np.int32)
        return pa.array(rebased, pa.int32(), mask=column.is_null().to_numpy(zero_copy_only=False)).view(t)
    if pa.types.is_struct(t):
        fields = [column.field(i) for i in range(t.num_fields)]
        rebased = [_gregorian(f) for f in fields]
        if all(r is None for r in rebased):
            return None
        return pa.StructArray.from_arrays([f if r is None else r for f, r in zip(fields, rebased)], fields=list(t),
                                          mask=column.is_null() if column.null_count else None)
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)):
        return None
    if column.offset and column.null_count:
        column = pa.concat_arrays([column])  # unsliced: a sliced list's validity cannot be rebuilt from offsets
    mask = column.is_null() if column.null_count else None
    if pa.types.is_map(t):
        keys, items = _gregorian(column.keys), _gregorian(column.items)
        if keys is None and items is None:
            return None
        return pa.MapArray.from_arrays(column.offsets, column.keys if keys is None else keys,
                                       column.items if items is None else items, type=t, mask=mask)
    values = _gregorian(column.values)
    if values is None:
        return None
    cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
    return cls.from_arrays(column.offsets, values, type=t, mask=mask)


def _legacy_parquet(metadata: dict) -> bool:
    """Whether Spark reads a Parquet file's dates as the hybrid Julian calendar's (``DataSourceUtils.
    datetimeRebaseSpec``): written by Spark before 3.0, or with its legacy rebase mode. Files of other writers are
    read as they are (Spark 4's default ``datetimeRebaseModeInRead``, CORRECTED)."""
    version = metadata.get(b"org.apache.spark.version")
    return version is not None and (version.decode("ascii", "replace") < "3.0.0"
                                    or b"org.apache.spark.legacyDateTime" in metadata)


def open_data_file(filesystem: pafs.FileSystem, path: str, file_format: str) -> DataFile:
    """Open ``path`` as ``file_format``. A missing file raises ``FileNotFoundError``."""
    return _data_file(filesystem.open_input_file(path), file_format, path)


def detect_format(filesystem: pafs.FileSystem, path: str) -> str | None:
    """``"orc"`` or ``"parquet"`` as ``path``'s magic bytes say; None for a file that is neither (a text
    file of a Hive table). A missing file raises ``FileNotFoundError``."""
    with filesystem.open_input_file(path) as source:
        return _format_of(source.read(4))


def _format_of(head: bytes) -> str | None:
    return _MAGIC.get(head) or _MAGIC.get(head[:3])


def detect_data_file(filesystem: pafs.FileSystem, path: str) -> DataFile | None:
    """Open ``path`` as the format its magic bytes say; None for a file that is neither ORC nor
    Parquet (a text file of a Hive table). A missing file raises ``FileNotFoundError``."""
    source = filesystem.open_input_file(path)
    head = source.read(4)
    source.seek(0)
    file_format = _format_of(head)
    if file_format is None:
        source.close()
        return None
    return _data_file(source, file_format, path)


def _data_file(source: Any, file_format: str, path: str) -> DataFile:
    try:
        return DataFile(source, file_format, path)
    except BaseException as exc:
        source.close()
        if isinstance(exc, (pa.ArrowException, OSError)) and not isinstance(exc, FileNotFoundError):
            raise not_readable(path, file_format, exc) from None
        raise


def not_readable(path: str, file_format: str, exc: BaseException) -> Exception:
    """The error for a data file whose footer ``file_format``'s reader cannot read (it names the file)."""
    return CorruptTableError(f"{path}: not a readable {file_format.upper()} file ({exc}); the table's "
                             f"files must all be {file_format.upper()}")


def read_file(filesystem: pafs.FileSystem, path: str, file_format: str, columns: Sequence[str] | None = None,
              filter: Any = None) -> pa.Table:  # noqa: A002 (pyarrow's name for it)
    """One file as an Arrow table: ``columns`` only (None = all), rows passing ``filter`` (a
    ``pyarrow.compute`` expression, evaluated on this thread) only."""
    with open_data_file(filesystem, path, file_format) as f:
        table = f.read(columns)
    return table if filter is None else table.filter(filter)


def read_schema(filesystem: pafs.FileSystem, path: str, file_format: str) -> pa.Schema:
    """A file's Arrow schema, from its footer."""
    with open_data_file(filesystem, path, file_format) as f:
        return f.schema


def footer_rows(filesystem: pafs.FileSystem, path: str, file_format: str) -> int:
    """A file's row count, from its footer."""
    with open_data_file(filesystem, path, file_format) as f:
        return f.num_rows


def empty_file(schema: pa.Schema, file_format: str) -> bytes:
    """A valid file with ``schema`` and no rows.

    Spark reads a zero-byte ``.orc`` as empty but pyarrow does not ("File size too small"), so an
    empty bucket gets a real file with a footer and schema, in both formats.
    """
    sink = pa.BufferOutputStream()
    if check_format(file_format) == "orc":
        import pyarrow.orc as orc

        orc.write_table(schema.empty_table(), sink)
    else:
        import pyarrow.parquet as pq

        pq.write_table(schema.empty_table(), sink)
    return sink.getvalue().to_pybytes()


def positional_names(names: Sequence[str]) -> bool:
    """Whether a file names its columns by position (``_col0``, ``_col1``, ...), as Hive's ORC
    writer did: such columns map to the table's by position, not by name."""
    return bool(names) and all(re.fullmatch(r"_col\d+", n) for n in names)


def file_columns(file_names: Sequence[str], table_columns: Sequence[str]) -> dict[str, str]:
    """Which column of a data file holds each of the table's data columns ``table_columns``: by
    position when the file names its columns ``_col0``, ``_col1``, ... and has no more of them than
    the table (Hive's ORC writer; Spark's ORC reader maps them so too, ``OrcUtils.requestedColumnIds``),
    else by name, case-insensitively (Hive's columns are lower case, a file's may not be). A table
    column the file lacks (added later) is absent: read as NULL. The one rule for ACID reads, joins,
    the data source and validation."""
    if len(file_names) <= len(table_columns) and positional_names(file_names):
        return dict(zip(table_columns, file_names))
    by_lower = {n.lower(): n for n in file_names}
    return {c: by_lower[c.lower()] for c in table_columns if c.lower() in by_lower}
