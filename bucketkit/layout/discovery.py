"""Which file holds which bucket: list a table directory and map every data file to its bucket.

:func:`discover` lists a table (any pyarrow filesystem: local, ``s3://``, ``gs://``, HDFS), finds
its Hive partition directories (``dt=2019-03-01/country=FR``), and maps the files of each
partition to bucket ids the way Trino does:

1. Hidden names (``_`` or ``.`` prefix) are skipped at every level, directories included.
2. A partition whose visible files all match a bucket naming pattern (legacy Presto, Hive, ACID;
   see :mod:`bucketkit.layout.naming`) may hold any number of files per bucket, including none.
3. Otherwise, if every file matches Spark's ``bucketBy`` pattern, the partition is a Spark
   bucketed layout (scheme ``"spark"``; Spark hashes rows differently).
4. Otherwise the original scheme applies: exactly ``bucket_count`` files, the i-th by name is
   bucket i.

Corrupt layouts raise :class:`~bucketkit.errors.CorruptTableError` naming the file or directory: a
bucket id >= the bucket count, a visible sub-directory in a bucket directory (other than Hive ACID
``base_``/``delta_``/``delete_delta_`` directories), Hive names mixed with Spark names, a file or
an unexpected directory at a partition level. A count mismatch in the original scheme raises
:class:`~bucketkit.errors.BucketCountMismatchError` naming the directory and both counts.

A listing sees one version of the table: bucketkit's commit switches whole directories and marks
each version (:mod:`bucketkit.layout.versions`); when the marker changed during the listing, or a
directory vanished under it, the table is listed again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import posixpath
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

import pyarrow.fs as pafs

from bucketkit.acid.naming import is_acid_side_file, parse_acid_dir
from bucketkit.acid.state import select_current
from bucketkit.writing.atomic import is_local, list_pinned
from bucketkit.errors import (BucketCountMismatchError, ConcurrentModificationError, CorruptTableError,
                              InvalidArgumentError, TableNotFoundError)
from bucketkit.io import HIDDEN_PREFIXES, KEPT_VERSIONS, STAGING_PREFIX, is_hidden_path, resolve_filesystem
from bucketkit.layout.naming import ORIGINAL, SPARK, TRINO_ORDER, bucket_and_scheme, buckets_of_names
from bucketkit.layout.partitions import parse_partition_dir
from bucketkit.layout.versions import VERSION_PREFIX, TablePaths, live_pointer, visible_files, wait_for_switch


def format_bytes(n: float) -> str:
    """A byte count for people: ``"812 B"``, ``"3.2 MiB"`` (binary units, one decimal)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")

__all__ = ["discover", "pin", "infer_partition_keys", "TableLayout", "PartitionLayout", "BucketFile", "KINDS"]

#: ``kind`` of a file: plain (non-ACID) data, or its role in a Hive ACID table.
KINDS = ("data", "original", "base", "delta", "delete_delta")
_SCHEME_ORDER = [s.name for s in TRINO_ORDER]


class BucketFile(NamedTuple):
    """One data file and its bucket (an immutable record; a NamedTuple because tables have 100k+).

    Attributes:
        path: full path inside the layout's filesystem.
        name: the file name.
        bucket: its bucket id.
        size: bytes.
        kind: ``"data"`` for a plain table; in an ACID table ``"original"``, ``"base"``,
            ``"delta"`` or ``"delete_delta"``.
        scheme: the naming scheme that gave the bucket (``"hive"``, ``"legacy-presto"``,
            ``"acid"``, ``"spark"`` or ``"original"``).
        mtime: modification time in ns as listed (0: not known); a hard link has its file's.
        mtime_ms: the same time in whole milliseconds (``mtime_ns // 1_000_000``, None: not known), the
            unit of Hadoop's ``FileStatus.getModificationTime()``, to compare with what the JVM lists.
    """

    path: str
    name: str
    bucket: int
    size: int
    kind: str
    scheme: str
    mtime: int = 0
    mtime_ms: int | None = None


@dataclass(frozen=True, eq=False)
class PartitionLayout:
    """The bucket map of one partition (or of an unpartitioned table).

    Attributes:
        values: partition values (unescaped; ``{}`` when unpartitioned).
        path: the partition directory.
        relpath: ``k=v/...`` relative to the table root (``""`` when unpartitioned).
        scheme: ``"hive"``, ``"legacy-presto"``, ``"acid"``, ``"spark"``, ``"original"``, several
            pattern schemes joined with ``+`` (e.g. ``"legacy-presto+hive"``), or ``"empty"``.
        buckets: every bucket id → its files (possibly none).
        obsolete: ACID directories and original files superseded by a base or compaction.
        doubt: why the partition's files cannot be placed in buckets (scheme ``"unvouched"``; only when
            :func:`discover` is asked to keep such partitions): its buckets are empty, its visible files
            are in ``unplaced``.
        unplaced: the visible files of an ``"unvouched"`` partition (bucket -1), as Spark's reader
            reads them (the files directly in the directory).
    """

    values: dict[str, str]
    path: str
    relpath: str
    scheme: str
    buckets: dict[int, list[BucketFile]]
    obsolete: tuple[str, ...] = ()
    doubt: str | None = None
    unplaced: tuple[BucketFile, ...] = ()

    def files_by_bucket(self, kinds: Iterable[str] | None = None) -> dict[int, list[str]]:
        """Bucket id → file paths (all kinds, or only ``kinds``)."""
        keep = None if kinds is None else frozenset(kinds)
        return {b: [f.path for f in files if keep is None or f.kind in keep] for b, files in self.buckets.items()}

    def bucket_bytes(self) -> dict[int, int]:
        return {b: sum(f.size for f in files) for b, files in self.buckets.items()}

    @property
    def files(self) -> list[BucketFile]:
        return [f for files in self.buckets.values() for f in files]

    @property
    def empty_buckets(self) -> list[int]:
        return [b for b, files in self.buckets.items() if not files]

    def summary(self) -> dict[str, Any]:
        """Plain-data description (files and bytes per bucket) for printing or JSON."""
        files = [len(v) for v in self.buckets.values()]
        sizes = list(self.bucket_bytes().values())
        return {"values": dict(self.values), "path": self.path, "scheme": self.scheme, "files": sum(files),
                "bytes": sum(sizes), "files_per_bucket": files, "bytes_per_bucket": sizes,
                "empty_buckets": self.empty_buckets, "obsolete": list(self.obsolete)}


@dataclass(frozen=True, eq=False)
class TableLayout:
    """Every partition of a table with its bucket map (see :func:`discover`).

    Attributes:
        root: the table directory (path inside ``filesystem``).
        bucket_count: the declared bucket count.
        partitioned_by: partition column names (given or inferred from ``k=v`` directories).
        partition_layouts: one :class:`PartitionLayout` per partition, ordered by path.
        filesystem: the pyarrow filesystem listed.
        staging_dirs: leftover ``.bucketkit-staging-*`` directories (relative paths): an
            interrupted write; hidden, so no reader sees them.
        version: the write id of the version listed (its ``.bucketkit-version-<id>`` marker), or None
            for a table bucketkit did not write.
    """

    root: str
    bucket_count: int
    partitioned_by: tuple[str, ...]
    partition_layouts: list[PartitionLayout]
    filesystem: pafs.FileSystem = field(repr=False)
    staging_dirs: tuple[str, ...] = ()
    version: str | None = None
    #: ``root`` holds no visible file beyond the listed partitions' files (false where it is a kept version that
    #: still holds a partition a writer outside bucketkit has since dropped): a reader may read it whole
    exact: bool = True

    @property
    def partitions(self) -> list[dict[str, str]]:
        """Partition values, ``[{}]`` for an unpartitioned table."""
        return [dict(p.values) for p in self.partition_layouts]

    @property
    def schemes(self) -> set[str]:
        return {p.scheme for p in self.partition_layouts}

    def partition(self, partition: Mapping[str, Any] | str) -> PartitionLayout:
        """The partition with these values (a dict, or a ``k=v/...`` path).

        Raises:
            InvalidArgumentError: no such partition (the message lists some that exist).
        """
        for p in self.partition_layouts:
            if (p.relpath == partition if isinstance(partition, str)
                    else p.values == {k: str(v) for k, v in partition.items()}):
                return p
        known = ", ".join(p.relpath or "<root>" for p in self.partition_layouts[:5])
        raise InvalidArgumentError(f"{self.root}: no partition {partition!r}; partitions include: {known or 'none'}")

    def files_by_bucket(self, partition: Mapping[str, Any] | str | None = None, *,
                        kinds: Iterable[str] | None = None) -> dict[int, list[str]]:
        """Bucket id → file paths, for one partition or (``None``) all partitions together.

        Every bucket id ``0 .. bucket_count-1`` is present, with an empty list for an empty bucket.
        """
        if partition is not None:
            return self.partition(partition).files_by_bucket(kinds)
        out: dict[int, list[str]] = {b: [] for b in range(self.bucket_count)}
        for p in self.partition_layouts:
            for b, paths in p.files_by_bucket(kinds).items():
                out[b].extend(paths)
        return out

    def bucket_bytes(self, partition: Mapping[str, Any] | str | None = None) -> dict[int, int]:
        """Bucket id → bytes, for one partition or all together."""
        if partition is not None:
            return self.partition(partition).bucket_bytes()
        out = {b: 0 for b in range(self.bucket_count)}
        for p in self.partition_layouts:
            for b, n in p.bucket_bytes().items():
                out[b] += n
        return out

    @property
    def total_bytes(self) -> int:
        return sum(f.size for p in self.partition_layouts for f in p.files)

    @property
    def file_count(self) -> int:
        return sum(len(files) for p in self.partition_layouts for files in p.buckets.values())

    def summary(self) -> dict[str, Any]:
        """Plain-data description of the whole layout (what ``bucketkit inspect --json`` builds on)."""
        return {"root": self.root, "bucket_count": self.bucket_count, "partitioned_by": list(self.partitioned_by),
                "partitions": [p.summary() for p in self.partition_layouts],
                "staging_dirs": list(self.staging_dirs)}


# -- listing ------------------------------------------------------------------------------------
# A visible directory entry: (name, is_dir, size, full path, mtime in ns or None when not known).
_Child = tuple[str, bool, int, str, int | None]
# A listing: directory relative to the listed base ("" for the base itself) -> its visible entries.
_Tree = dict[str, list[_Child]]


def _list(fs: pafs.FileSystem, base: str, recursive: bool, staging: set[str], prefix: str) -> _Tree:
    """List ``base``; hidden names anywhere in the relative path are dropped (staging dirs and the
    version marker noted in ``staging``, the marker by its bare name)."""
    if is_local(fs):
        return _list_local(base, recursive, staging, prefix)
    return _tree(_entries(fs, base, recursive), base, staging, prefix)


def _tree(entries: Iterable[tuple[str, int, bool, int | None]], base: str, staging: set[str], prefix: str) -> _Tree:
    """:func:`_list` of the flat entries :func:`_entries` gives for ``base``."""
    cut = len(base.rstrip("/")) + 1
    tree: _Tree = {"": []}
    for path, size, is_dir, mtime in entries:
        rel = path[cut:]
        if is_hidden_path(rel):
            _note_hidden(rel, staging, prefix)
            continue
        parent, _, name = rel.rpartition("/")
        children = tree.get(parent)
        if children is None:
            children = tree[parent] = []
        children.append((name, is_dir, size, path, mtime))
    return tree


def _note_hidden(rel: str, staging: set[str], prefix: str) -> None:
    """Note a hidden entry (``rel``: its path below the listed base) in ``staging`` when it is the
    version marker (at the table root; by its bare name) or in a staging directory (that directory)."""
    if not prefix and rel.startswith(VERSION_PREFIX):
        staging.add(rel)
    elif STAGING_PREFIX in rel:
        parts = rel.split("/")
        i = next((i for i, p in enumerate(parts) if p.startswith(STAGING_PREFIX)), None)
        if i is not None:  # else the prefix is inside a name: no staging directory
            staging.add(posixpath.join(prefix, *parts[:i + 1]))


def _list_local(base: str, recursive: bool, staging: set[str], prefix: str) -> _Tree:
    """:func:`_list` of a local directory, read the way :func:`~bucketkit.writing.atomic.list_pinned`
    reads it (see :func:`_entries`: each directory through one open handle, its entries looked up
    relative to that handle, hidden ones neither looked up nor descended into), but straight into
    the tree: splitting the flat listing's paths again cost as much as the stat calls (100k files)."""
    tree: _Tree = {"": []}
    pending = [(os.open(base, os.O_RDONLY | os.O_DIRECTORY), base.rstrip("/"), "")]
    try:
        while pending:
            fd, path, rel = pending.pop()
            try:
                children: list[_Child] = []
                add = children.append
                inside = path + "/"
                with os.scandir(fd) as entries:
                    for entry in entries:
                        name = entry.name
                        if name.startswith(HIDDEN_PREFIXES):
                            _note_hidden(f"{rel}/{name}" if rel else name, staging, prefix)
                        elif entry.is_dir():
                            add((name, True, 0, inside + name, 0))
                            if recursive:
                                pending.append((os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd),
                                                inside + name, f"{rel}/{name}" if rel else name))
                        else:
                            try:
                                st = entry.stat()
                            except FileNotFoundError:
                                if not entry.is_symlink():  # a dangling link is no file (as pyarrow)
                                    raise
                                continue
                            add((name, False, st.st_size, inside + name, st.st_mtime_ns))
                if children:
                    tree[rel] = children
            finally:
                os.close(fd)
    finally:
        for fd, _, _ in pending:
            os.close(fd)
    return tree


def _entries(fs: pafs.FileSystem, base: str, recursive: bool) -> Iterable[tuple[str, int, bool, int | None]]:
    """``(path, size, is_dir, mtime_ns)`` of the entries below ``base`` (mtime None: the store gave none).
    A local directory is listed through open handles (:func:`~bucketkit.writing.atomic.list_pinned`):
    pyarrow's local listing looks each name up by path again and drops the names a switch took away
    meanwhile, marker included, so a listing racing a commit came back empty or partial and looked whole."""
    if is_local(fs):
        return list_pinned(base, recursive=recursive, skip=HIDDEN_PREFIXES)
    infos = fs.get_file_info(pafs.FileSelector(base, recursive=recursive))
    # These set a size on regular files only; asking .type costs ~50x more than .size, per file.
    sized_files_only = fs.type_name in ("local", "s3", "gcs")
    directory = pafs.FileType.Directory
    return [(info.path, 0, True, 0) if info.size is None or (not sized_files_only and info.type == directory)
            else (info.path, info.size, False, info.mtime_ns) for info in infos]


def _below(tree: _Tree, rel: str) -> Callable[[str], list[_Child]]:
    """Children of ``rel/inner`` (``inner == ""``: of ``rel`` itself) in a listing."""
    prefix = rel + "/" if rel else ""
    return lambda inner: tree.get(prefix + inner if inner else rel, [])


def _check_partition_dir(name: str, level: int, keys: Sequence[str], path: str) -> tuple[str, str]:
    parsed = parse_partition_dir(name)
    if parsed is None or parsed[0].lower() != keys[level].lower():
        found = "a directory that is not key=value" if parsed is None else f"key {parsed[0]!r}"
        raise CorruptTableError(
            f"{path}: expected a partition directory {keys[level]}=<value> at partition level {level + 1} "
            f"(partition columns {list(keys)}), found {found}")
    return keys[level], parsed[1]


def _stray_file(path: str, level: int, keys: Sequence[str]) -> CorruptTableError:
    return CorruptTableError(
        f"{path}: a file where partition directories {keys[level]}=<value> are expected (partition columns "
        f"{list(keys)}); data files belong in {'/'.join(f'{c}=...' for c in keys)}/")


def _infer_keys(children_of: Callable[[str], list[_Child]]) -> list[str]:
    """Partition keys along the first chain of ``k=v`` directories (all chains are checked later)."""
    keys: list[str] = []
    rel = ""
    while True:
        kv = sorted(c[0] for c in children_of(rel) if c[1] and parse_partition_dir(c[0]))
        if not kv:
            return keys
        keys.append(parse_partition_dir(kv[0])[0])
        rel = posixpath.join(rel, kv[0]) if rel else kv[0]


def pin(layout: TableLayout) -> TableLayout:
    """``layout`` with its files read from the table's store, where the version it listed is kept
    whole (:mod:`bucketkit.layout.versions`): a read planned on it then reads that version even after
    later commits replace the table directory's files. Only when every file listed is the kept
    version's own (same relative path, size and modification time: a hard link of it) and each listed
    partition's kept directory holds no other visible file; otherwise -- no version kept, a store of
    copies, or files changed or removed since by a writer that does not commit through bucketkit (an
    engine's ``TRUNCATE``) -- the layout is returned unchanged and read where it lies. A kept version that
    holds partitions the listing lacks (dropped since by such a writer) is pinned, but not ``exact``."""
    if layout.version is None or not is_local(layout.filesystem):  # elsewhere kept versions are copies
        return layout
    if posixpath.basename(posixpath.dirname(layout.root)) == KEPT_VERSIONS:
        return layout  # listed in the store already (a pointer named it): it stays
    fs, kept = layout.filesystem, TablePaths(layout.root).version(layout.version)
    try:
        stamps = {path[len(kept) + 1:]: (size, mtime) for path, size, is_dir, mtime in _entries(fs, kept, True)
                  if not is_dir}
    except (FileNotFoundError, NotADirectoryError):
        return layout
    cut = len(layout.root.rstrip("/")) + 1
    parts = layout.partition_layouts
    listed = {f.path[cut:]: (f.size, f.mtime) for p in parts for f in [*p.files, *p.unplaced]}
    if any(stamps.get(rel) != stamp for rel, stamp in listed.items()):
        return layout
    homes = {p.path[cut:] if len(p.path) >= cut else "" for p in parts}
    visible = [rel for rel in stamps if not is_hidden_path(rel)]
    beyond = [rel for rel in visible if rel not in listed]
    if any(posixpath.dirname(rel) in homes for rel in beyond):
        return layout

    def moved(path: str) -> str:
        return posixpath.join(kept, path[cut:]) if len(path) >= cut else kept

    return dataclasses.replace(layout, root=kept, exact=layout.exact and not beyond, partition_layouts=[dataclasses.replace(
        p, path=moved(p.path), buckets={b: [f._replace(path=moved(f.path)) for f in fs_] for b, fs_ in p.buckets.items()},
        unplaced=tuple(f._replace(path=moved(f.path)) for f in p.unplaced)) for p in parts])


def infer_partition_keys(fs: pafs.FileSystem, root: str) -> tuple[str, ...]:
    """The partition columns the first chain of ``k=v`` directories under ``root`` names (one listing
    per level), as :func:`discover` infers them when none are given."""
    def children_of(rel: str) -> list[tuple[str, bool, None, None, None]]:
        infos = fs.get_file_info(pafs.FileSelector(posixpath.join(root, rel) if rel else root))
        return [(i.base_name, i.type == pafs.FileType.Directory, None, None, None) for i in infos]

    return tuple(_infer_keys(children_of))


def _walk_partitions(children_of: Callable[[str], list[_Child]], keys: list[str]) -> list[tuple[str, dict[str, str]]]:
    """``(relpath, values)`` of every partition directory, checking every level above them."""
    level_dirs: list[tuple[str, dict[str, str]]] = [("", {})]
    for level in range(len(keys)):
        nxt = []
        for rel, values in level_dirs:
            for name, is_dir, _, full, _ in children_of(rel):
                if not is_dir:
                    raise _stray_file(full, level, keys)
                key, value = _check_partition_dir(name, level, keys, full)
                nxt.append((posixpath.join(rel, name) if rel else name, {**values, key: value}))
        level_dirs = nxt
    return sorted(level_dirs, key=lambda rv: rv[0])


# -- mapping one bucket directory ---------------------------------------------------------------
_BUCKET, _NAME = itemgetter(2), itemgetter(1)  # BucketFile.bucket, BucketFile.name, read without a frame


def _bucket_files(files: Sequence[_Child], buckets: Iterable[int], kind: str,
                  schemes: Iterable[str]) -> list[BucketFile]:
    """The :class:`BucketFile` of each listed file, built in bulk: BucketFile's own ``__new__`` is a
    Python frame, and a frame per file is too slow for 100k files."""
    if not files:
        return []
    names, _, sizes, paths, mtimes = zip(*files)
    try:
        millis = [m // 1_000_000 for m in mtimes]
    except TypeError:  # a store that gives no modification time (None) for some files
        millis = [None if m is None else m // 1_000_000 for m in mtimes]
        mtimes = [m or 0 for m in mtimes]
    return list(map(tuple.__new__, repeat(BucketFile),
                    zip(paths, names, buckets, sizes, repeat(kind), schemes, mtimes, millis)))


def _assign(files: list[_Child], bucket_count: int, directory: str, kind: str,
            allow_fallback: bool = True) -> tuple[str, list[BucketFile]]:
    """Map the visible files of one directory to buckets: ``(scheme, files)``."""
    if not files:
        return "empty", []
    names = [f[0] for f in files]
    one = buckets_of_names(names)  # usually all names are of one scheme: one regex pass
    if one is not None:
        scheme, ids = one
        out = _bucket_files(files, ids, kind, repeat(scheme))
    elif None not in (found := list(map(bucket_and_scheme, names))):
        scheme = "+".join(s for s in _SCHEME_ORDER if s in {s for _, s in found})
        out = _bucket_files(files, [b for b, _ in found], kind, [s for _, s in found])
    else:
        spark = [SPARK.parse(f[0]) if p is None else None for f, p in zip(files, found)]
        named = [f for f, p in zip(files, found) if p is not None]
        unnamed = next(f for f, p in zip(files, found) if p is None)  # the first file no Hive-like scheme names
        spark_only = [f for f, s in zip(files, spark) if s is not None]
        if named and spark_only:
            raise CorruptTableError(
                f"{spark_only[0][3]}: Spark bucketBy file name mixed with Hive-style bucket file names (such as "
                f"{named[0][0]}) in {directory}; the two schemes hash rows differently (table is corrupt)")
        if named and kind == "data":
            # a file no scheme names beside files that are named (LOAD DATA, a copy by hand): its rows were placed by
            # no hash, and ordering every file by name would give the named ones other buckets than their names say
            # (the JVM catalog's BucketFiles.list decides alike: one verdict)
            raise CorruptTableError(f"{unnamed[3]}: a file outside every bucket naming scheme beside bucket-named files "
                                    f"(such as {named[0][0]}) in {directory}")
        if len(spark_only) == len(files):
            scheme = "spark"
            out = _bucket_files(files, [s.bucket for s in spark], kind, repeat(scheme))
        elif not allow_fallback:
            raise CorruptTableError(f"{unnamed[3]}: not a bucket file name (expected bucket_NNNNN or NNNNNN_N) "
                                    f"inside Hive ACID directory {directory}")
        else:
            by_name = {f[0]: f for f in files}
            scheme = "original"
            ordered = ORIGINAL.assign(by_name, bucket_count, directory=directory)
            out = _bucket_files([by_name[name] for _, name in ordered], [b for b, _ in ordered], kind,
                                repeat(scheme))
    if max(map(_BUCKET, out)) >= bucket_count:
        f = next(f for f in out if f.bucket >= bucket_count)
        raise CorruptTableError(
            f"{f.path}: bucket {f.bucket} (from its {f.scheme} file name) is not below the table's bucket "
            f"count {bucket_count} (table is corrupt)")
    return scheme, out


def _map_partition(values: dict[str, str], path: str, relpath: str,
                   children_of: Callable[[str], list[_Child]], bucket_count: int,
                   unvouched: bool = False) -> PartitionLayout:
    children = children_of("")
    subdirs = [c[0] for c in children if c[1]]
    files = [c for c in children if not c[1]] if subdirs else children
    foreign = sorted(d for d in subdirs if parse_acid_dir(d) is None)
    buckets: dict[int, list[BucketFile]] = {b: [] for b in range(bucket_count)}
    obsolete: list[str] = []
    acid = len(foreign) < len(subdirs)
    try:
        if foreign:
            raise CorruptTableError(
                f"{posixpath.join(path, foreign[0])}: visible sub-directory inside bucket directory {path}; expected "
                f"only bucket files, hidden names (_ or . prefix) or Hive ACID base_/delta_/delete_delta_ directories")
        if not subdirs:
            scheme, mapped = _assign(files, bucket_count, path, "data")
            if len(mapped) > len(set(map(_BUCKET, mapped))):  # a bucket of several files lists them by name
                mapped.sort(key=_NAME)
    except (CorruptTableError, BucketCountMismatchError) as exc:
        if not unvouched or acid:
            raise
        # a plain partition whose files no bucket scheme places: read unbucketed, as Spark reads it
        unplaced = tuple(_bucket_files(sorted(files), repeat(-1), "data", repeat("unvouched")))
        return PartitionLayout(values, path, relpath, "unvouched", buckets, (), str(exc), unplaced)
    if subdirs:
        scheme, mapped = "acid", []
        state = select_current(subdirs)
        if state.originals_current:
            mapped += sorted(_assign(files, bucket_count, path, "original")[1], key=_NAME)
        else:
            obsolete += sorted(f[3] for f in files)
        kinds = [(state.base, "base")] if state.base else []
        kinds += [(d, "delta") for d in state.deltas] + [(d, "delete_delta") for d in state.delete_deltas]
        for name, kind in kinds:
            directory = posixpath.join(path, name)
            kids = children_of(name)
            for sub in [c for c in kids if c[1]]:  # UNION ALL into an insert-only table writes sub-directories
                if not sub[0].startswith("HIVE_UNION_SUBDIR_"):
                    raise CorruptTableError(f"{sub[3]}: visible sub-directory inside Hive ACID directory "
                                            f"{directory}; expected only bucket files (or HIVE_UNION_SUBDIR_N)")
                kids = kids + children_of(posixpath.join(name, sub[0]))
            data = sorted(c for c in kids if not c[1] and not is_acid_side_file(c[0]))
            mapped += _assign(data, bucket_count, directory, kind, allow_fallback=False)[1]
        obsolete += [posixpath.join(path, d) for d in state.obsolete]
    for f in mapped:
        buckets[f.bucket].append(f)
    return PartitionLayout(values, path, relpath, scheme, buckets, tuple(obsolete))


# -- the entry point ----------------------------------------------------------------------------
def discover(path: str, bucket_count: int, *, filesystem: pafs.FileSystem | None = None,
             partitioned_by: Sequence[str] | None = None,
             partition_filter: Callable[[dict[str, str]], bool] | None = None,
             unvouched: bool = False) -> TableLayout:
    """List a bucketed table and map each partition's files to bucket ids.

    Args:
        path: the table directory: a local path or a URI (``s3://bucket/warehouse/t``).
        bucket_count: the table's declared bucket count.
        filesystem: a pyarrow filesystem (then ``path`` is a path inside it).
        partitioned_by: partition column names in directory order; ``()`` for an unpartitioned
            table; ``None`` to infer them from ``k=v`` directories.
        partition_filter: called with each partition's values (unescaped strings) before that
            partition's files are listed; partitions it rejects are neither listed nor returned.
        unvouched: keep a plain (not ACID) partition whose files no bucket layout allows, as a
            :class:`PartitionLayout` of scheme ``"unvouched"`` saying why (a reader reads it unbucketed,
            as the SQL catalog does), instead of raising.

    Returns:
        The :class:`TableLayout`.

    Raises:
        TableNotFoundError: ``path`` does not exist or is not a directory.
        UnfinishedCommitError: a writer died between the two renames of its switch (no exchange on
            this filesystem); ``bucketkit.writing.recovery.recover`` restores the table. While such a writer
            is alive, the listing waits up to 2 s for it.
        ConcurrentModificationError: commits kept switching versions during 20 listings in a row.
        CorruptTableError: a file or directory no bucketed layout allows (named in the message; a plain
            partition's is kept instead when ``unvouched``).
        BucketCountMismatchError: original scheme with a file count other than ``bucket_count`` (kept
            instead when ``unvouched``).
        InvalidArgumentError: a bad ``bucket_count``.
    """
    if not isinstance(bucket_count, int) or isinstance(bucket_count, bool) or bucket_count < 1:
        raise InvalidArgumentError(f"bucket_count={bucket_count!r}: expected a positive integer")
    fs, root = resolve_filesystem(path, filesystem)
    root = root.rstrip("/") or "/"
    keys = None if partitioned_by is None else [str(k) for k in partitioned_by]
    for attempt in range(_ATTEMPTS):
        info = fs.get_file_info(root)
        # a store without directory renames: the live version's directory, which no commit switches
        pointer = live_pointer(fs, root) if info.type == pafs.FileType.Directory else None
        if pointer is None and _check_switch(fs, info) and wait_for_switch(fs, root, path):
            continue  # a commit was between the two steps of its switch
        if info.type != pafs.FileType.Directory:
            what = "is a file" if info.type == pafs.FileType.File else "does not exist"
            raise TableNotFoundError(f"{path}: {what}; expected a table directory")
        listed = TablePaths(root, True).version(pointer["write_id"]) if pointer else root
        try:
            with _collector_paused():
                layout, marker = _discover_once(fs, listed, bucket_count, keys, partition_filter, unvouched)
        except (FileNotFoundError, NotADirectoryError):
            continue  # a directory vanished while listed: a commit switched versions (or vacuum removed one)
        if pointer:
            _refuse_foreign(fs, root, pointer, path)
            return layout  # a published version never changes
        if live_pointer(fs, root) is not None:
            continue  # the first commit of the table's store published meanwhile: what was listed is retiring
        if marker is None or fs.get_file_info(posixpath.join(root, marker)).type != pafs.FileType.NotFound:
            return layout  # the same version before and after the listing: one version was listed
    raise ConcurrentModificationError(
        f"{path}: the table changed under {_ATTEMPTS} listings in a row (concurrent commits); run the read again")


_ATTEMPTS = 20  # listings in a row that saw a commit switch versions


def _refuse_foreign(fs: pafs.FileSystem, root: str, pointer: dict[str, Any], path: Any) -> None:
    """A table whose pointer names its live version holds no other visible file, but those its last
    commit took into the version and is deleting: any other was written by another engine into the
    table directory since, and is part of no version bucketkit reads. Reading without it would drop
    its rows, so the read fails, naming it."""
    retiring = set(pointer.get("retiring", ()))
    foreign = [f for f in visible_files(fs, root) if f not in retiring]
    if foreign:
        raise CorruptTableError(
            f"{path}: {len(foreign)} file(s) such as {posixpath.join(root, foreign[0])} were written into the table "
            f"directory after bucketkit's last commit, whose version {pointer['write_id']} (in "
            f"{TablePaths(root, True).store}) is what bucketkit reads on this store; their rows would be missed. "
            "The next bucketkit commit (an append of no rows will do) takes them into the table")


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (when it runs) for one listing, then file what the
    listing built under its oldest generation. A listing creates no cycles, but container objects
    that outlive it, a BucketFile per file and a list per bucket: running, the collector passed over
    every live object each ~70k of them, freeing nothing (~25% of a 100k-file listing); resumed as
    is, it would pass over all of them at once (~10%). ``gc.freeze()`` then ``gc.unfreeze()`` moves
    them (and the program's other young objects, whose cycles then wait for the next full collection)
    to the oldest generation unvisited. Skipped when the program keeps objects frozen (before forking
    workers): unfreezing would release those too."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def _check_switch(fs: pafs.FileSystem, info: pafs.FileInfo) -> bool:
    """Whether to look for a commit caught mid-switch: the table is missing (between the two
    renames), or the store moves directories file by file (object stores)."""
    return info.type == pafs.FileType.NotFound or fs.type_name not in ("local", "hdfs")


def _discover_once(fs: pafs.FileSystem, root: str, bucket_count: int, keys: list[str] | None,
                   partition_filter: Callable[[dict[str, str]], bool] | None,
                   unvouched: bool = False) -> tuple[TableLayout, str | None]:
    """One listing of the table, and the name of its version marker (None: no marker)."""
    staging: set[str] = set()

    def join(rel: str) -> str:
        return posixpath.join(root, rel) if rel else root

    layouts = []
    if partition_filter is None:
        tree = _list(fs, root, True, staging, "")
        children = lambda rel: tree.get(rel, [])  # noqa: E731
        if keys is None:
            keys = _infer_keys(children)
        for rel, values in _walk_partitions(children, keys):
            layouts.append(_map_partition(values, join(rel), rel, _below(tree, rel), bucket_count, unvouched))
            tree.pop(rel, None)  # its files are mapped: their memory goes to the next partition's, still cached
    else:
        listed = lambda rel: _list(fs, join(rel), False, staging, rel)[""]  # noqa: E731
        if keys is None:
            keys = _infer_keys(listed)
        for rel, values in _walk_partitions(listed, keys):
            if partition_filter(dict(values)):
                sub = _list(fs, join(rel), True, staging, rel)
                layouts.append(_map_partition(values, join(rel), rel, _below(sub, ""), bucket_count, unvouched))
    markers = sorted(s for s in staging if s.startswith(VERSION_PREFIX))
    staging.difference_update(markers)
    marker = markers[-1] if markers else None
    layout = TableLayout(root, bucket_count, tuple(keys), layouts, fs, tuple(sorted(staging)),
                         marker[len(VERSION_PREFIX):] if marker else None)
    return layout, marker
