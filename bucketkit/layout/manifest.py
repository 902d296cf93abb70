"""A table's file manifest: which files bucketkit can vouch were placed by a known bucket function (no Spark).

A pruned read and a bucket-by-bucket join are only as right as the files' placement. Files bucketkit
did not write may hold rows of other buckets (Hive 1.x without ``hive.enforce.bucketing``, a copy,
a tool naming files ``000000_0`` by hand), so a read checks every row it reads against its file's
bucket (Trino's ``hive.validate-bucketing``). Files bucketkit itself placed need no such check, and
the manifest is how a reader knows them: every commit (:mod:`bucketkit.writing.commit`) records, in
the version it builds, ``_bucketkit_files.json`` (hidden: Hive, Trino and Spark skip ``_`` names)
with each visible file's path relative to the table, size and modification time, and the layout
the rows were hashed with. ``bucketkit validate --vouch`` records the same for a table whose every
row it re-hashed and found in place.

A partition is **vouched** when its files are exactly those the manifest lists for its directory,
each with the recorded size and modification time (milliseconds, as Hadoop's ``FileStatus`` gives
it), and the manifest's layout is the one the read hashes with. Anything else -- a file another
engine added or rewrote, a file gone, a table bucketkit never wrote, a manifest of another
layout -- is **checked**, row by row, as before. The SQL catalog decides by the same rule
(``io.bucketkit.layout.FileManifest``; tests/test_manifest_jvm.py holds the two equal).
"""

from __future__ import annotations

import collections
import functools
import json
import posixpath
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import pyarrow.fs as pafs

from bucketkit.io import is_hidden_path

__all__ = ["MANIFEST_FILE", "Manifest", "Placement", "placement", "read_manifest", "record_manifest", "layout_of",
           "listed_files", "NO_MANIFEST"]

MANIFEST_FILE = "_bucketkit_files.json"
FORMAT = 1
#: What decides where a row lands: the manifest's layout must equal the read's on all of these.
LAYOUT_KEYS = ("hash_family", "bucketed_by", "bucket_types", "bucket_count", "bucketing_version")


def layout_of(spec: Any) -> dict[str, Any]:
    """The layout fields of a :class:`~bucketkit.layout.metadata.TableSpec`, normalised as the manifest
    stores them (column names and types lower case: Hive's and Spark's are case-insensitive)."""
    return {"hash_family": spec.hash_family or "hive", "bucketed_by": [c.lower() for c in spec.bucketed_by],
            "bucket_types": [str(t).lower() for t in spec.bucket_types], "bucket_count": int(spec.bucket_count),
            "bucketing_version": int(spec.bucketing_version)}


@dataclass(frozen=True)
class Manifest:
    """A table's recorded files (see the module docstring).

    Attributes:
        by: who vouches: ``"commit <write id>"`` or ``"validate"``.
        layout: :data:`LAYOUT_KEYS` as :func:`layout_of` gives them.
        files: path relative to the table root -> (size in bytes, modification time in milliseconds).
    """

    by: str
    layout: Mapping[str, Any]
    files: Mapping[str, tuple[int, int]]

    def layout_doubt(self, spec: Any) -> str | None:
        """Why the manifest cannot vouch for a read hashing with ``spec``'s layout, or None."""
        mine, read = {k: self.layout.get(k) for k in LAYOUT_KEYS}, layout_of(spec)
        diffs = [f"{k} {mine[k]} where the read hashes with {read[k]}" for k in LAYOUT_KEYS if mine[k] != read[k]]
        return f"its manifest ({self.by}) records {', '.join(diffs)}" if diffs else None

    @functools.cached_property
    def _per_dir(self) -> dict[str, int]:
        """Recorded files per directory, counted once (not once per partition checked)."""
        return dict(collections.Counter(posixpath.dirname(p) for p in self.files))

    def partition_doubt(self, relpath: str, listed: Iterable[tuple[str, int, int | None]]) -> str | None:
        """Why the files ``listed`` in the partition directory ``relpath`` (``""``: the table root) --
        ``(name, size, mtime_ms)`` each -- are not exactly the manifest's, or None: vouched."""
        prefix = relpath.strip("/") + "/" if relpath.strip("/") else ""
        seen = 0
        for name, size, mtime in listed:
            seen += 1
            recorded = self.files.get(prefix + name)
            if recorded is None:
                return f"{prefix + name} is not among the files {self.by} recorded"
            if recorded != (size, mtime):
                return (f"{prefix + name} changed since {self.by} recorded it (size {size}, modified {mtime} ms; "
                        f"recorded {recorded[0]}, {recorded[1]} ms)")
        expected = self._per_dir.get(prefix.rstrip("/"), 0)
        if seen != expected:
            return f"{expected - seen} file(s) {self.by} recorded in {prefix or 'the table root'} are gone"
        return None


def read_manifest(fs: pafs.FileSystem, root: str) -> Manifest | None:
    """The manifest at ``root`` (a table directory, or a kept version of one), or None: none, or not
    readable as one (a reader then checks rows, never trusts a file it cannot parse)."""
    try:
        with fs.open_input_stream(posixpath.join(root, MANIFEST_FILE)) as f:
            data = json.loads(f.read().decode("utf-8"))
        if data.get("bucketkit_manifest_version") != FORMAT:
            return None
        files = {str(p): (int(v[0]), int(v[1])) for p, v in data["files"].items()}
        return Manifest(str(data["by"]), dict(data["layout"]), files)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def listed_files(fs: pafs.FileSystem, root: str) -> dict[str, tuple[int, int]]:
    """Every visible file below ``root`` (hidden names skipped at every level, as readers skip them):
    relative path -> (size, mtime in ms)."""
    cut, out = len(root.rstrip("/")) + 1, {}
    for info in fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True)):
        rel = info.path[cut:]
        if info.type == pafs.FileType.File and not is_hidden_path(rel):
            out[rel] = (int(info.size or 0), _mtime_ms(info))
    return out


def _mtime_ms(info: pafs.FileInfo) -> int:
    ns = info.mtime_ns
    return -1 if ns is None else int(ns) // 1_000_000


def record_manifest(fs: pafs.FileSystem, root: str, spec: Any, by: str,
                    files: Mapping[str, tuple[int, int]] | None = None) -> Manifest:
    """Write ``root``'s manifest: ``files`` (default: every visible file below ``root`` now), placed by
    ``spec``'s layout, vouched for ``by`` whom. Written to a hidden temporary name, then moved over."""
    from bucketkit.layout.versions import write_json

    files = listed_files(fs, root) if files is None else dict(files)
    manifest = Manifest(by, layout_of(spec), {p: (int(s), int(m)) for p, (s, m) in files.items()})
    write_json(fs, posixpath.join(root, MANIFEST_FILE),
               {"bucketkit_manifest_version": FORMAT, "by": by, "layout": dict(manifest.layout),
                "files": {p: list(v) for p, v in sorted(manifest.files.items())}})
    return manifest


#: Why a table without a manifest is checked, in words.
NO_MANIFEST = (f"no {MANIFEST_FILE} (a table bucketkit did not commit, or committed before it kept one; "
               "`bucketkit validate --vouch` records one for a table whose every row it finds in place)")


@dataclass(frozen=True)
class Placement:
    """Whether a read can trust the placement of its partitions' rows (see the module docstring).

    Attributes:
        vouched: the partition directories (relative to the table root) whose files the manifest vouches for.
        checked: the partition directories whose rows must be re-hashed as they are read.
        reason: why, in words: who vouches, or the first reason a partition is checked.
    """

    vouched: frozenset[str]
    checked: frozenset[str]
    reason: str

    def __str__(self) -> str:
        if not self.checked:
            return f"vouched: {self.reason}; rows are not re-hashed"
        some = f" in {len(self.checked)} of {len(self.checked) + len(self.vouched)} partitions" if self.vouched else ""
        return f"checked row by row{some}: {self.reason}"


def placement(fs: pafs.FileSystem, root: str, spec: Any, partitions: Iterable[Any]) -> Placement:
    """Which of ``partitions`` (:class:`~bucketkit.layout.discovery.PartitionLayout`s, their ``relpath``
    relative to ``root``: the table directory, or the kept version read) the manifest at ``root`` vouches
    for, read with ``spec``."""
    manifest = read_manifest(fs, root)
    doubt = NO_MANIFEST if manifest is None else manifest.layout_doubt(spec)
    vouched, checked, first = set(), set(), None
    for p in partitions:
        why = doubt or manifest.partition_doubt(p.relpath, ((f.name, f.size, f.mtime_ms)
                                                            for f in [*p.files, *p.unplaced]))
        if why:
            checked.add(p.relpath)
            first = first or why
        else:
            vouched.add(p.relpath)
    if first is None:  # every partition vouched, or none read (a filter kept none): the table's own verdict
        first = doubt or f"every file read is one {manifest.by} recorded"
    return Placement(frozenset(vouched), frozenset(checked), first)
