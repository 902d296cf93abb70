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
* ``<parent>/.<name>.bucketkit.versions/<write id>/``: every committed version, kept whole (hard
  links: a file unchanged between versions is stored once) until vacuum or the retention period
  removes it; ``<write id>.json`` beside it is its record (:class:`Version`). A read planned on a
  version reads its files there, so later commits never pull them away (:func:`pin`).

Hidden names (``.`` prefix) are skipped by Hive, Trino, Spark and bucketkit listings.

On a store that cannot rename a directory atomically (S3, GCS, ADLS: :func:`renames_directories`),
nothing is switched and nothing is written beside the table; every name lives *inside* the table
directory ``<root>`` (``TablePaths(root, inside=True)``):

* ``<root>/.bucketkit.versions/<write id>/``: every version, built there in place and kept whole
  (the live one too); ``<write id>.json`` beside it is its record.
* ``<root>/.bucketkit.live``: the *pointer*, which names the live version (one object written whole:
  a reader sees the old pointer or the new one). Publishing a version is writing it.
* ``<root>/.bucketkit-<write id>.json``: a commit's journal; ``<root>/.bucketkit.lock`` its lock.

Files in ``<root>`` outside those names (a table another engine wrote) are the table until the first
commit; that commit takes them into its version and deletes them once published. A metastore table of
this layout is located at its live version, ``<root>/.bucketkit.versions/<write id>`` (:func:`table_root`
maps it back to ``<root>``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import posixpath
import re
import socket
import time
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow.fs as pafs

from bucketkit.errors import ConcurrentModificationError, InvalidArgumentError, UnfinishedCommitError, VersionNotFoundError
from bucketkit.io import KEPT_VERSIONS, for_each_request, is_hidden, is_hidden_path, renames_directories, write_whole

__all__ = ["TablePaths", "POINTER", "renames_directories", "live_pointer", "live_root", "table_root", "named_version",
           "exists",
           "visible_files", "VERSION_PREFIX", "live_version", "read_json", "write_json", "owner_alive",
           "pending_writes", "unfinished_switch", "wait_for_switch", "vanished", "remove", "Version",
           "history", "find_version", "RETENTION", "retention", "REPLACED_PREFIX", "expired_tables"]

VERSION_PREFIX = ".bucketkit-version-"
#: Inside a table directory on a store without atomic directory renames: which version is live.
POINTER = ".bucketkit.live"
SWITCHING = "switching"  # journal state: the next version is complete and is being switched in
#: Seconds a version stays readable after a later one replaced it, by default (Delta's default, 7
#: days): reads planned on it and time travel to it work until then.
RETENTION = 7 * 24 * 3600.0
_SECONDS = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


def retention() -> float:
    """The retention period in seconds: ``BUCKETKIT_RETENTION`` if set, else :data:`RETENTION`."""
    raw = os.environ.get("BUCKETKIT_RETENTION")
    if raw is None:
        return RETENTION
    # digits, optionally with a fraction: the JVM's KeptVersions.retention reads the same variable (a REPLACE TABLE
    # keeps the tables it replaced for this long) by the same rule, which a differential test holds equal
    if not _SECONDS.fullmatch(raw):
        raise InvalidArgumentError(f"BUCKETKIT_RETENTION={raw!r}: expected seconds >= 0")
    return float(raw)


#: The name's prefix of the directory, inside a metastore table's default location, that holds a table a
#: ``REPLACE TABLE ... AS SELECT`` swapped in, followed by the time (ms) it was built (the JVM's
#: ``TableListing.REPLACED_PREFIX``; docs/sql.md).
REPLACED_PREFIX = ".bucketkit.table-"


def _built_at(name: str) -> int | None:
    """When the table the entry ``name`` of a default location belongs to was built: -1 the first one (its plain
    entries), None a time that does not parse."""
    for prefix in (REPLACED_PREFIX, "." + REPLACED_PREFIX):
        if name.startswith(prefix):
            digits = re.match(r"[0-9]+", name[len(prefix):])
            return int(digits.group()) if digits and len(digits.group()) <= 18 else None
    return -1


def expired_tables(entries: list[str], home: str, old: str | None, now_ms: int, retain_ms: int) -> list[str]:
    """Which ``entries`` (names) of a table's default location hold tables replaced at least ``retain_ms`` before
    ``now_ms``: each REPLACE builds the new table in :data:`REPLACED_PREFIX` ``<millis>``, and a table was replaced
    when the next one was built. ``home`` (the live table) and ``old`` (the one it replaced: an entry's name, ``""``
    the location itself, None none there) never are; nor an entry whose time does not parse. The JVM's
    ``TableListing.expiredTables``, which each REPLACE deletes by; a differential test holds them equal."""
    built = sorted({at for at in map(_built_at, entries) if at is not None and at >= 0})
    home_at = _built_at(home)
    old_at = None if old is None else -1 if old == "" else _built_at(old)
    expired = []
    for entry in entries:
        at = _built_at(entry)
        later = [b for b in built if at is not None and b > at]
        if at is not None and at != home_at and at != old_at and later and now_ms - later[0] >= retain_ms:
            expired.append(entry)
    return expired


@dataclass(frozen=True)
class TablePaths:
    """Every path of the commit protocol for the table at ``root`` (a path inside a filesystem).

    ``inside``: the layout of stores without atomic directory renames (see the module docstring),
    where versions, journals and the lock live inside ``root`` and a pointer names the live version.
    :meth:`at` decides it for a table.
    """

    root: str
    inside: bool = False

    @classmethod
    def at(cls, fs: pafs.FileSystem, root: str) -> TablePaths:
        """The paths of the table at ``root``, by what its store holds: inside it where a pointer names its
        live version, beside it where it keeps versions there; else inside it where it keeps versions inside
        (a table whose first commit went inside and died before its pointer: its recovery finds its journal
        there) or where the store cannot rename directories (S3, GCS, ADLS); else beside it (a local disk,
        HDFS: the table's directory is switched whole, so an engine reading the directory sees one version;
        a commit that may not write beside it goes inside: :meth:`Transaction.begin`)."""
        root = table_root(root)
        inside, beside = cls(root, True), cls(root)
        if exists(fs, inside.pointer):
            return inside
        if exists(fs, beside.store):
            return beside
        return inside if not renames_directories(fs) or exists(fs, inside.store) else beside

    @property
    def parent(self) -> str:
        """Where the commit's journals and lock live: beside the table, or in it (``inside``)."""
        return self.root if self.inside else posixpath.dirname(self.root.rstrip("/"))

    @property
    def name(self) -> str:
        return posixpath.basename(self.root.rstrip("/"))

    @property
    def prefix(self) -> str:
        return ".bucketkit-" if self.inside else f".{self.name}.bucketkit-"

    def next(self, write_id: str) -> str:
        """Where a write builds its version: beside the table, or (``inside``) in the store, in place."""
        return self.version(write_id) if self.inside else posixpath.join(self.parent, self.prefix + write_id)

    def aside(self, write_id: str) -> str:
        return self.next(write_id) + ".old"

    def journal(self, write_id: str) -> str:
        return posixpath.join(self.parent, self.prefix + write_id + ".json")

    @property
    def lock(self) -> str:
        return posixpath.join(self.parent, ".bucketkit.lock" if self.inside else f".{self.name}.bucketkit.lock")

    @property
    def store(self) -> str:
        """Where committed versions are kept (a hidden sibling, or a hidden directory inside, that no engine lists)."""
        return posixpath.join(self.root, KEPT_VERSIONS) if self.inside else posixpath.join(
            self.parent, f".{self.name}{KEPT_VERSIONS}")

    @property
    def pointer(self) -> str:
        """``inside``: the object naming the live version."""
        return posixpath.join(self.root, POINTER)

    def version(self, write_id: str) -> str:
        return posixpath.join(self.store, write_id)

    def record(self, write_id: str) -> str:
        return posixpath.join(self.store, write_id + ".json")


def partition_dirs(fs: pafs.FileSystem, root: str, depth: int) -> list[str]:
    """Paths (relative to ``root``) of the visible directories exactly ``depth`` levels below it, sorted: a
    partitioned table's partition directories, empty ones included (hidden names skipped at every level)."""
    level = [root.rstrip("/")]
    cut = len(root.rstrip("/")) + 1
    for _ in range(depth):
        below: list[str] = []
        for path in level:
            below.extend(info.path for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
                         if info.type == pafs.FileType.Directory and not is_hidden(info.base_name))
        level = below
    return sorted(p[cut:] for p in level) if depth else []


def visible_files(fs: pafs.FileSystem, root: str, under: str = "") -> list[str]:
    """Paths (relative to ``root``) of every visible file below ``root/under``, sorted.

    Hidden names (``.`` or ``_`` prefix) are skipped at every level, so staging directories,
    version markers, ``_SUCCESS`` and the metadata file never count.
    """
    out: list[str] = []
    cut = len(root.rstrip("/")) + 1
    pending = [posixpath.join(root, under) if under else root]
    if not isinstance(fs, pafs.LocalFileSystem):
        return _visible_files_listed(fs, pending[0], cut)
    while pending:
        infos = fs.get_file_info(pafs.FileSelector(pending.pop(), allow_not_found=True))
        for info in infos:
            if is_hidden(info.base_name):
                continue
            if info.type == pafs.FileType.Directory:
                pending.append(info.path)
            elif info.type == pafs.FileType.File:
                out.append(info.path[cut:])
    return sorted(out)


def _visible_files_listed(fs: pafs.FileSystem, start: str, cut: int) -> list[str]:
    """:func:`visible_files` on a store where each listing is a request (S3, GCS, ADLS, HDFS), which lists a
    whole tree in a request per 1,000 keys: the top level listed, then, where it has no hidden directory (a
    version of a table), the whole tree below it in one listing; else (a table's kept versions inside it) each
    visible directory's tree, those listings in flight together. Hidden names are dropped at every level.
    Listed level by level, a table of 1,000 partitions took 1,000 requests, one after the other."""
    top = fs.get_file_info(pafs.FileSelector(start, allow_not_found=True))
    dirs = [info.path for info in top if info.type == pafs.FileType.Directory and not is_hidden(info.base_name)]
    if dirs and not any(info.type == pafs.FileType.Directory and is_hidden(info.base_name) for info in top):
        top, dirs = fs.get_file_info(pafs.FileSelector(start, recursive=True, allow_not_found=True)), []
    listed: list[list[pafs.FileInfo]] = [top] + [[] for _ in dirs]

    def list_one(i: int) -> None:
        listed[i + 1] = fs.get_file_info(pafs.FileSelector(dirs[i], recursive=True, allow_not_found=True))

    for_each_request(fs, list_one, range(len(dirs)))
    below = len(start.rstrip("/")) + 1
    return sorted(info.path[cut:] for infos in listed for info in infos if info.type == pafs.FileType.File
                  and not is_hidden_path(info.path[below:]))


def table_root(path: str) -> str:
    """The table directory of ``path``: itself, or, for one of its versions kept inside it
    (``<root>/.bucketkit.versions/<write id>``, where the metastore points a table of the ``inside``
    layout once a commit published it), ``<root>``."""
    path = path.rstrip("/") or "/"
    return posixpath.dirname(posixpath.dirname(path)) if named_version(path) else path


def named_version(path: str) -> str | None:
    """The write id of the kept version ``path`` is (``<root>/.bucketkit.versions/<write id>``: a metastore table of
    the ``inside`` layout is located there), else None. Its readers read it until the metastore moves on, so
    retention leaves it (:func:`bucketkit.writing.retention.expire`)."""
    path = path.rstrip("/") or "/"
    return posixpath.basename(path) if posixpath.basename(posixpath.dirname(path)) == KEPT_VERSIONS else None


def exists(fs: pafs.FileSystem, path: str) -> bool:
    """Whether ``path`` is there (a file or a directory)."""
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def live_pointer(fs: pafs.FileSystem, root: str) -> dict[str, Any] | None:
    """The pointer of a table in the ``inside`` layout: ``{"write_id": ..., "retiring": [...]}`` (the
    files its commit took from the table directory's top and deletes), or None (no pointer)."""
    pointer = TablePaths(root.rstrip("/") or "/", True).pointer
    # asked of its metadata first: a table without one (every table but those) is only listed, never opened
    return read_json(fs, pointer) if fs.get_file_info(pointer).type == pafs.FileType.File else None


def live_root(fs: pafs.FileSystem, root: str) -> str:
    """The directory that holds the table's live version: the version a pointer names, else ``root``."""
    pointer = live_pointer(fs, root)
    return TablePaths(root.rstrip("/") or "/", True).version(pointer["write_id"]) if pointer else root


@dataclass(frozen=True)
class Version:
    """One committed version of a table, as ``bucketkit.history`` lists it.

    Attributes:
        version: its number: 0 for the first version kept, then one more per commit.
        write_id: the write that made it (its ``.bucketkit-version-<id>`` marker).
        committed: when it became the live version (seconds since the epoch, UTC); None while its
            commit has not switched it in.
        operation: ``"create"``, ``"append"``, ``"overwrite"`` or ``"overwrite partitions"``.
        partitions: the partition directories an overwrite of some partitions replaced.
        files, bytes: data files and their bytes in the version (the whole table, not the write).
        rows: rows the write added (None: not counted).
        removed: when vacuum (or the retention period) deleted its files; None while readable.
    """

    version: int
    write_id: str
    committed: float | None
    operation: str
    partitions: tuple[str, ...] = ()
    files: int = 0
    bytes: int = 0
    rows: int | None = None
    removed: float | None = None

    @property
    def committed_at(self) -> _dt.datetime | None:
        return None if self.committed is None else _dt.datetime.fromtimestamp(self.committed, _dt.timezone.utc)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["partitions"] = list(self.partitions)
        out["committed_at"] = None if self.committed is None else self.committed_at.isoformat()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Version:
        return cls(int(data["version"]), str(data["write_id"]), data.get("committed"), str(data["operation"]),
                   tuple(data.get("partitions") or ()), int(data.get("files", 0)), int(data.get("bytes", 0)),
                   data.get("rows"), data.get("removed"))

    def __str__(self) -> str:
        when = self.committed_at.isoformat(timespec="seconds") if self.committed is not None else "not committed"
        rows = "" if self.rows is None else f", {self.rows:,} rows written"
        gone = "" if self.removed is None else f" (removed {_iso(self.removed)})"
        return f"version {self.version} {when} {self.operation}: {self.files} files, {self.bytes:,} bytes{rows}{gone}"


def _iso(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).isoformat(timespec="seconds")


def history(fs: pafs.FileSystem, paths: TablePaths, *, committed_only: bool = True) -> list[Version]:
    """Every version the table's store records, oldest first (those removed by vacuum included). A record is
    kept for every commit, so on an object store they are read with their requests in flight together."""
    records = [info.path for info in fs.get_file_info(pafs.FileSelector(paths.store, allow_not_found=True))
               if info.base_name.endswith(".json") and not info.base_name.startswith(".")]
    read: list[dict[str, Any] | None] = [None] * len(records)

    def read_one(i: int) -> None:
        read[i] = read_json(fs, records[i])

    for_each_request(fs, read_one, range(len(records)))
    out = [Version.from_dict(data) for data in read if data is not None]
    return sorted((v for v in out if v.committed is not None or not committed_only), key=lambda v: v.version)


def find_version(fs: pafs.FileSystem, paths: TablePaths, as_of: Any, table: str) -> Version:
    """The version ``as_of`` names: a version number, or the live one at a time (``datetime``; an ISO
    string; a naive time is UTC).

    Raises:
        InvalidArgumentError: ``as_of`` is neither.
        VersionNotFoundError: no such version, a time before the first, or vacuum removed it.
    """
    versions = history(fs, paths)
    known = (f"versions {versions[0].version}..{versions[-1].version}, committed {_iso(versions[0].committed)} "
             f"to {_iso(versions[-1].committed)}") if versions else "no version recorded (written before versions were kept)"
    if isinstance(as_of, bool) or not isinstance(as_of, (int, str, _dt.datetime)):
        raise InvalidArgumentError(f"as_of={as_of!r}: expected a version number, a datetime or an ISO timestamp")
    if isinstance(as_of, int):
        found = next((v for v in versions if v.version == as_of), None)
        if found is None:
            raise VersionNotFoundError(f"table {table}: no version {as_of} ({known})")
    else:
        when = as_of
        if isinstance(when, str):
            try:
                when = _dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
            except ValueError:
                raise InvalidArgumentError(f"as_of={as_of!r}: not an ISO timestamp (e.g. '2026-11-24T08:00:00Z') "
                                           "nor a version number") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.timezone.utc)
        ts = when.timestamp()
        # a version's own commit time (committed_at: microseconds) names it
        found = next((v for v in reversed(versions) if v.committed <= ts + 1e-6), None)
        if found is None:
            raise VersionNotFoundError(f"table {table}: no version was live at {when.isoformat()} ({known})")
    if found.removed is not None:
        raise VersionNotFoundError(
            f"table {table}: version {found.version} (committed {_iso(found.committed)}) was removed at "
            f"{_iso(found.removed)} by vacuum or the retention period ({retention() / 86400:g} days; "
            f"BUCKETKIT_RETENTION); {known}")
    return found


def read_json(fs: pafs.FileSystem, path: str) -> dict[str, Any] | None:
    try:
        with fs.open_input_stream(path) as f:
            return json.loads(f.read().decode("utf-8"))
    except (FileNotFoundError, ValueError):  # missing, or cut short by a kill before its rename
        return None


def write_json(fs: pafs.FileSystem, path: str, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON so that a reader gets the old object or the new one (:func:`~bucketkit.io.write_whole`)."""
    write_whole(fs, path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))


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

    Same host: its process exists, and is the writer: a process the pid names now that started after the write did
    is another one (pids are reused: at Linux's default ``pid_max`` of 32768 a busy host wraps them within the hour,
    and a dead writer's journal stayed "in progress"). Another host: it started less than ``stale_after`` seconds ago.
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
        began = process_started(int(journal["pid"]))
        return began is None or began <= float(journal.get("started", 0)) + 2.0  # /proc's btime: whole seconds
    return time.time() - float(journal.get("started", 0)) < stale_after


def process_started(pid: int) -> float | None:
    """When process ``pid`` started, in seconds since the epoch (Linux's ``/proc``), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            after_name = f.read().rsplit(b")", 1)[1].split()  # fields from the 3rd on: the name may hold spaces
        with open("/proc/stat", "rb") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith(b"btime "))
        return boot + int(after_name[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime, in clock ticks
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def pending_writes(fs: pafs.FileSystem, paths: TablePaths) -> dict[str, set[str]]:
    """write id -> the sibling names it left (``""`` next dir, ``".old"``, ``".json"``)."""
    out: dict[str, set[str]] = {}
    for info in fs.get_file_info(pafs.FileSelector(paths.parent, allow_not_found=True)):
        name = info.base_name
        if not name.startswith(paths.prefix) or name.endswith(".tmp") or name.startswith(VERSION_PREFIX):
            continue
        rest = name[len(paths.prefix):]
        suffix = next((s for s in (".json", ".old") if rest.endswith(s)), "")
        out.setdefault(rest[:len(rest) - len(suffix)], set()).add(suffix)
    return out


def unfinished_switch(fs: pafs.FileSystem, root: str) -> dict[str, Any] | None:
    """The journal of a commit caught between the two renames of a switch (or on an object store,
    during its per-file move), or None. ``journal["alive"]`` says whether its writer still runs.
    Never in the ``inside`` layout, where a commit switches nothing: it writes a pointer."""
    paths = TablePaths.at(fs, root)
    if paths.inside:
        return None
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
        f"incomplete; run bucketkit.writing.recovery.recover({table!r}) or `bucketkit recover {table}` (it restores the "
        "last committed version), then read again")


def vanished(table: str, path: str) -> ConcurrentModificationError:
    """The error for a planned file that is gone when read: a concurrent overwrite."""
    return ConcurrentModificationError(
        f"table {table}: file {path} is gone: the table was overwritten while it was read; run the read again")
