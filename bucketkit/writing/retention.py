"""The store of a table's kept versions, as a commit and recovery change it: a version recorded as committed
(:func:`record_committed`), one that never became live forgotten (:func:`forget`), the files a commit retires
deleted (:func:`delete_files`), and versions replaced longer ago than the retention period removed
(:func:`expire`, :func:`vacuum`). Names and records: :mod:`bucketkit.layout.versions`; the commit that calls
these steps: :mod:`bucketkit.writing.commit`."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import time
from dataclasses import dataclass
from typing import Sequence

import pyarrow.fs as pafs

from bucketkit.errors import InvalidArgumentError
from bucketkit.io import for_each_request, resolve_filesystem
from bucketkit.layout.versions import (REPLACED_PREFIX, TablePaths, Version, expired_tables, history, named_version,
                                       remove, retention, write_json)
from bucketkit.writing.atomic import commit_lock, is_local

__all__ = ["record_committed", "forget", "delete_files", "expire", "vacuum", "VacuumResult"]


def delete_files(fs: pafs.FileSystem, paths: Sequence[str]) -> None:
    """Delete files (gone already: fine), then the directories that emptied (an object store has none)."""
    for_each_request(fs, lambda path: remove(fs, path), list(paths))
    if is_local(fs):
        for parent in sorted({posixpath.dirname(p) for p in paths}, key=len, reverse=True):
            with contextlib.suppress(OSError):
                os.removedirs(parent)


def forget(fs: pafs.FileSystem, paths: TablePaths, write_id: str) -> None:
    """Remove a version that never became live from the store (a rolled-back write)."""
    remove(fs, paths.version(write_id))
    remove(fs, paths.record(write_id))


def record_committed(fs: pafs.FileSystem, paths: TablePaths, record: Version | None) -> Version | None:
    """Mark a kept version live: its record gets the commit time (returned as it is now)."""
    if record is not None and record.committed is None:
        record = dataclasses.replace(record, committed=time.time())
        write_json(fs, paths.record(record.write_id), record.to_dict())
    return record


@dataclass(frozen=True)
class VacuumResult:
    """What :func:`vacuum` removed: the versions, and the bytes no other kept version shared."""

    removed: tuple[Version, ...]
    freed_bytes: int
    kept: tuple[Version, ...]
    #: entries of the table's default location holding tables a REPLACE replaced (see :func:`vacuum`)
    removed_tables: tuple[str, ...] = ()

    def __str__(self) -> str:
        tables = (f"; removed {len(self.removed_tables)} entr{'y' if len(self.removed_tables) == 1 else 'ies'} of "
                  "tables a REPLACE replaced" if self.removed_tables else "")
        if not self.removed and not self.removed_tables:
            return f"nothing to remove; {len(self.kept)} version(s) kept"
        return (f"removed {len(self.removed)} version(s) ({', '.join(str(v.version) for v in self.removed)}), "
                f"freed {self.freed_bytes:,} bytes; {len(self.kept)} version(s) kept{tables}")


def expire(fs: pafs.FileSystem, paths: TablePaths, retain: float | None = None, *, dry_run: bool = False,
           versions: Sequence[Version] | None = None, through: str | None = None) -> VacuumResult:
    """Remove the kept versions replaced more than ``retain`` seconds ago (default: the retention
    period, :func:`~bucketkit.layout.versions.retention`); the live version always stays. A version's
    time counts from when the next one replaced it: a read planned on it just before is still served.
    ``versions``: the table's committed versions, oldest first, where the caller has read them. ``through``: the
    path the caller reached the table by; where it is one of the table's kept versions (a metastore locates a table
    whose versions are kept inside it at one: :func:`~bucketkit.layout.versions.named_version`), that version stays
    whatever its age, its readers reading it until the metastore moves on."""
    retain = retention() if retain is None else float(retain)
    if retain < 0:
        raise InvalidArgumentError(f"retain={retain!r}: expected seconds >= 0")
    versions = history(fs, paths) if versions is None else list(versions)
    cutoff, removed, freed, named = time.time() - retain, [], 0, named_version(through or "")
    for v, after in zip(versions, versions[1:]):
        if v.removed is None and v.write_id != named and after.committed is not None and after.committed <= cutoff:
            if not dry_run:
                freed += _delete_version(fs, paths.version(v.write_id))
                write_json(fs, paths.record(v.write_id), {**v.to_dict(), "removed": time.time()})
            removed.append(v)
    gone = {v.write_id for v in removed}
    return VacuumResult(tuple(removed), freed, tuple(v for v in versions if v.removed is None and v.write_id not in gone))


def _delete_version(fs: pafs.FileSystem, path: str) -> int:
    """Delete a kept version; the bytes freed (files no other version or the live table links)."""
    freed, links = 0, is_local(fs)  # elsewhere a kept file is a copy: all its bytes go
    for info in fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True)):
        if info.type == pafs.FileType.File:
            try:
                shared = links and os.stat(info.path).st_nlink > 1
            except OSError:
                shared = False
            if not shared:
                freed += info.size or 0
    remove(fs, path)
    return freed


def vacuum(path: str, *, retain: float | None = None, filesystem: pafs.FileSystem | None = None,
           dry_run: bool = False) -> VacuumResult:
    """Remove the kept versions of the table at ``path`` that were replaced more than ``retain``
    seconds ago (default the retention period, 7 days); with ``retain=0`` every version but the
    live one. Reads planned on a removed version, and time travel to it, then fail with
    :class:`~bucketkit.errors.VersionNotFoundError`. ``path`` may be one of the table's kept versions,
    where a metastore locates a table whose versions are kept inside it: that version stays too. Where ``path``
    is a table a ``REPLACE TABLE ... AS SELECT`` swapped in, the tables REPLACEs replaced more than ``retain``
    seconds ago go too (:func:`~bucketkit.layout.versions.expired_tables`, ``removed_tables``)."""
    fs, root = resolve_filesystem(path, filesystem)
    paths = TablePaths.at(fs, root)
    with contextlib.nullcontext() if dry_run else commit_lock(fs, paths.lock):
        result = expire(fs, paths, retain, dry_run=dry_run, through=root)
    if not posixpath.basename(root).startswith(REPLACED_PREFIX):
        return result
    # a table a REPLACE TABLE AS SELECT swapped in (located in <default location>/.bucketkit.table-<millis>): the
    # tables it and earlier REPLACEs replaced, kept there for the retention period, go by the rule each REPLACE
    # deletes them by (the live one stays; so does the one being read, until the retention)
    location = posixpath.dirname(root)
    entries = {posixpath.basename(i.path): i for i in fs.get_file_info(pafs.FileSelector(location))}
    retain_s = retention() if retain is None else float(retain)
    gone = expired_tables(sorted(entries), posixpath.basename(root), None, int(time.time() * 1000),
                          int(retain_s * 1000))
    freed = 0
    for entry in [] if dry_run else gone:
        if entries[entry].type == pafs.FileType.Directory:
            freed += _delete_version(fs, entries[entry].path)
        else:  # the first table's files lie in the location itself
            freed += entries[entry].size or 0
            remove(fs, entries[entry].path)
    return dataclasses.replace(result, freed_bytes=result.freed_bytes + freed, removed_tables=tuple(gone))
