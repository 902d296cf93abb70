"""The on-disk names of a table's versions and of the commits that switch between them (no Spark).

A table directory ``<parent>/<name>`` is always one complete *version*. A commit builds the next
version in a hidden sibling and switches it into place (:mod:`bucketkit.writing.commit`). The names:

* ``<name>/.bucketkit-version-<write id>``: marks which write made the live version. A reader
  that finds the same marker before and after listing the table has listed one version.
* ``<parent>/.<name>.bucketkit-<write id>/``: the next version while it is built; after an
  exchange, the previous version until it is deleted.
* ``<parent>/.<name>.bucketkit-<write id>.old/``: the previous version, where the switch renames
  it aside instead (no exchange on this filesystem).
* ``<parent>/.<name>.bucketkit-<write id>.json``: the commit's journal (owner, state).
* ``<parent>/.<name>.bucketkit.lock``: the lock that serialises committers (local filesystems).

Hidden names (``.`` prefix) are skipped by Hive, Trino, Spark and bucketkit listings.
"""

from __future__ import annotations

import json
import os
import posixpath
import secrets
import socket
import time
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from bucketkit.errors import ConcurrentModificationError, UnfinishedCommitError

__all__ = ["TablePaths", "VERSION_PREFIX", "live_version", "read_json", "write_json", "owner_alive",
           "pending_writes", "unfinished_switch", "wait_for_switch", "vanished", "remove"]

VERSION_PREFIX = ".bucketkit-version-"
SWITCHING = "switching"  # journal state: the next version is complete and is being switched in


@dataclass(frozen=True)
class TablePaths:
    """Every path of the commit protocol for the table at ``root`` (a path inside a filesystem)."""

    root: str

    @property
    def parent(self) -> str:
        return posixpath.dirname(self.root.rstrip("/"))

    @property
    def name(self) -> str:
        return posixpath.basename(self.root.rstrip("/"))

    @property
    def prefix(self) -> str:
        return f".{self.name}.bucketkit-"

    def next(self, write_id: str) -> str:
        return posixpath.join(self.parent, self.prefix + write_id)

    def aside(self, write_id: str) -> str:
        return self.next(write_id) + ".old"

    def journal(self, write_id: str) -> str:
        return self.next(write_id) + ".json"

    @property
    def lock(self) -> str:
        return posixpath.join(self.parent, f".{self.name}.bucketkit.lock")


def read_json(fs: pafs.FileSystem, path: str) -> dict[str, Any] | None:
    try:
        with fs.open_input_stream(path) as f:
            return json.loads(f.read().decode("utf-8"))
    except (FileNotFoundError, ValueError):  # missing, or cut short by a kill before its rename
        return None


def write_json(fs: pafs.FileSystem, path: str, data: dict[str, Any]) -> None:
    """Write atomically: a temporary hidden file renamed over the target."""
    tmp = posixpath.join(posixpath.dirname(path), f".{posixpath.basename(path)}.{secrets.token_hex(4)}.tmp")
    with fs.open_output_stream(tmp) as f:
        f.write(json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))
    fs.move(tmp, path)


def remove(fs: pafs.FileSystem, path: str) -> None:
    """Delete a file or directory tree if it exists."""
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.Directory:
        fs.delete_dir(path)
    elif info.type != pafs.FileType.NotFound:
        fs.delete_file(path)


def live_version(fs: pafs.FileSystem, root: str) -> str | None:
    """The write id that made the live version (None: no marker, e.g. a table bucketkit did not write)."""
    infos = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
    ids = sorted(i.base_name[len(VERSION_PREFIX):] for i in infos if i.base_name.startswith(VERSION_PREFIX))
    return ids[-1] if ids else None


def owner_alive(journal: dict[str, Any] | None, stale_after: float) -> bool:
    """Whether the writer that owns a journal may still be running.

    Same host: its process exists. Another host: it started less than ``stale_after`` seconds ago.
    """
    if not journal:
        return False
    if journal.get("host") == socket.gethostname():
        try:
            os.kill(int(journal["pid"]), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return time.time() - float(journal.get("started", 0)) < stale_after


def pending_writes(fs: pafs.FileSystem, paths: TablePaths) -> dict[str, set[str]]:
    """write id -> the sibling names it left (``""`` next dir, ``".old"``, ``".json"``)."""
    out: dict[str, set[str]] = {}
    for info in fs.get_file_info(pafs.FileSelector(paths.parent, allow_not_found=True)):
        name = info.base_name
        if not name.startswith(paths.prefix) or name.endswith(".tmp"):
            continue
        rest = name[len(paths.prefix):]
        suffix = next((s for s in (".json", ".old") if rest.endswith(s)), "")
        out.setdefault(rest[:len(rest) - len(suffix)], set()).add(suffix)
    return out


def unfinished_switch(fs: pafs.FileSystem, root: str) -> dict[str, Any] | None:
    """The journal of a commit caught between the two renames of a switch (or on an object store,
    during its per-file move), or None. ``journal["alive"]`` says whether its writer still runs."""
    paths = TablePaths(root.rstrip("/"))
    for write_id in sorted(pending_writes(fs, paths)):
        journal = read_json(fs, paths.journal(write_id))
        if journal and journal.get("state") == SWITCHING:
            return {**journal, "alive": owner_alive(journal, 6 * 3600.0)}
    return None


def wait_for_switch(fs: pafs.FileSystem, root: str, table: str, *, timeout: float = 2.0) -> bool:
    """Wait while a commit is between the two steps of its switch; False if none was.

    Raises:
        UnfinishedCommitError: its writer died there (``recover`` restores the table), or is still
            switching after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    waited = False
    while (journal := unfinished_switch(fs, root)) is not None:
        if not journal["alive"] or time.monotonic() > deadline:
            raise _unfinished_error(table, journal)
        time.sleep(0.02)
        waited = True
    return waited


def _unfinished_error(table: str, journal: dict[str, Any]) -> UnfinishedCommitError:
    write = f"table {table}: write {journal.get('write_id')}"
    if journal["alive"]:
        return UnfinishedCommitError(f"{write} has been switching its new version into place for too long; "
                                     "run the read again")
    return UnfinishedCommitError(
        f"{write} died while switching its new version into place, so the table directory is missing or "
        f"incomplete; run bucketkit.writing.commit.recover({table!r}) or `bucketkit recover {table}` (it restores the "
        "last committed version), then read again")


def vanished(table: str, path: str) -> ConcurrentModificationError:
    """The error for a planned file that is gone when read: a concurrent overwrite."""
    return ConcurrentModificationError(
        f"table {table}: file {path} is gone: the table was overwritten while it was read; run the read again")
