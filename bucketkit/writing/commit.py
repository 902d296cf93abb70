"""Atomic commit of a write into a bucketed table directory (pure pyarrow.fs, no Spark).

A reader sees the table's old version or its new one, never a part or a mix, because a commit
switches whole directories, never files (docs/writing.md, "Commit protocol"; names in
:mod:`bucketkit.layout.versions`):

1. :meth:`Transaction.begin` writes the journal ``<parent>/.<name>.bucketkit-<id>.json`` (owner:
   host, pid, start) and creates the next version ``<parent>/.<name>.bucketkit-<id>/`` with a
   hidden staging directory inside, where the tasks write.
2. :meth:`Transaction.commit` renames the staged files to their final names inside the next
   version. Then, holding the table's commit lock: it checks that nothing changed underneath,
   hard-links every file the write keeps from the live version (all of them for an append, those
   outside the replaced partitions for a partition overwrite, none for a table overwrite), writes
   the metadata file and the version marker, flips the journal to ``switching`` and **switches**
   the directories (:func:`bucketkit.writing.atomic.switch`: one ``RENAME_EXCHANGE`` on a local Linux
   filesystem, two renames elsewhere) -- the commit point. Files a foreign writer put into the
   old version meanwhile are moved over. Last: the catalog, then -- a grace period later, so that
   a reader still listing the old version is not shown a part of it -- the old version and the
   journal.
3. :func:`recover` finishes what a dead writer left. The live version's marker says whether the
   switch happened: if so, the old version is deleted (rolled forward), otherwise the unfinished
   next version is (rolled back). Between the two renames of a switch, the table path is missing:
   recovery renames the complete next version into place.

On a store that cannot rename a directory (S3, GCS, ADLS) the same steps run in the ``inside`` layout
(:mod:`bucketkit.layout.versions`): the next version is built in place in the table's own store, and
the commit point is writing the pointer that names it, not a switch; nothing is renamed or written
outside the table. A metastore table is then published where its readers look: the caller's
``on_committed`` moves its locations to the new version (``io.bucketkit.write.MetastorePublish``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import secrets
import signal
import socket
import string
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import pyarrow.fs as pafs

from bucketkit.writing.atomic import SWITCHES, commit_lock, is_local, link_or_copy, switch
from bucketkit.errors import CommitError, ConcurrentModificationError, InvalidArgumentError
from bucketkit.io import STAGING_DIR, is_hidden, resolve_filesystem
from bucketkit.layout.manifest import record_manifest
from bucketkit.layout.metadata import METADATA_FILE, TableSpec, write_spec
from bucketkit.layout.versions import (SWITCHING, VERSION_PREFIX, TablePaths, Version, history, live_pointer,
                                       exists, live_root, live_version, owner_alive, pending_writes, read_json, remove,
                                       retention, table_root, visible_files, write_json)

__all__ = ["Transaction", "LAYOUTS", "CommitSummary", "RecoveryAction", "recover", "new_write_id", "visible_files",
           "fault_point", "settle", "expire", "vacuum", "VacuumResult", "FAULT_ENV", "FAULT_POINTS", "RETIRE_GRACE"]

FAULT_ENV = "BUCKETKIT_FAULT"
#: Where ``BUCKETKIT_FAULT`` can kill a writer: after the Spark tasks wrote; after the n-th file
#: placed into the next version (staged files, then links of kept files); with the next version
#: complete and the journal ``switching``; between the two renames of a non-exchange switch; and
#: right after the switch, before the old version is deleted.
FAULT_POINTS = ("after_task_writes", "during_build", "before_switch", "during_switch", "after_switch")
_ALPHABET = string.ascii_lowercase + string.digits
#: ``layout=`` values of :class:`Transaction`: where versions live and how one is published.
LAYOUTS = ("auto", "inside", "beside")


def new_write_id() -> str:
    """A unique, time-ordered write id shaped like a Presto query id (``20190526_072952_00009_fn7s5``).

    The shape lets the same id serve as the tail of Hive names and as the query id of legacy
    Presto names (whose pattern requires exactly this form).
    """
    stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime())
    return f"{stamp}_{secrets.randbelow(100000):05d}_{''.join(secrets.choice(_ALPHABET) for _ in range(5))}"


def fault_point(name: str, count: int | None = None) -> None:
    """Test hook: SIGKILL this process when ``BUCKETKIT_FAULT`` names this point.

    ``BUCKETKIT_FAULT=during_build:3`` kills right after the third file; a point without a count
    fires the first time it is reached. Never set outside tests.
    """
    wanted = os.environ.get(FAULT_ENV)
    if not wanted:
        return
    point, _, n = wanted.partition(":")
    if point == name and (not n or count == int(n)):
        os.kill(os.getpid(), signal.SIGKILL)


def _read_text(fs: pafs.FileSystem, path: str) -> str | None:
    try:
        with fs.open_input_stream(path) as f:
            return f.read().decode("utf-8")
    except FileNotFoundError:
        return None


def _refused(exc: OSError) -> bool:
    """Whether a store refused a write for want of permission (local: EACCES/EPERM; HDFS's
    AccessControlException; S3's AccessDenied), as pyarrow reports it."""
    text = str(exc)
    return isinstance(exc, PermissionError) or any(
        marker in text for marker in ("Permission denied", "AccessControlException", "ACCESS_DENIED", "AccessDenied"))


def _in_scope(relpath: str, scope: Sequence[str] | None) -> bool:
    """Whether a file lies in one of the partition directories of ``scope`` (None = whole table)."""
    return scope is None or any(relpath.startswith(p.rstrip("/") + "/") or not p for p in scope)


def _sweep(fs: pafs.FileSystem, old: str, live: str, known: Sequence[str]) -> list[str]:
    """Move files that appeared in the old version after ``known`` was listed (a foreign writer) to
    ``live``, unless ``live`` has a file of that name."""
    seen = set(known)
    moved = []
    for rel in visible_files(fs, old):
        target = posixpath.join(live, rel)
        if rel not in seen and fs.get_file_info(target).type == pafs.FileType.NotFound:
            fs.create_dir(posixpath.dirname(target), recursive=True)
            fs.move(posixpath.join(old, rel), target)
            moved.append(rel)
    return moved


@dataclass(frozen=True)
class CommitSummary:
    """What a commit did: files added, files replaced (gone with the old version), how it switched."""

    write_id: str
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    metadata_written: bool
    switch: str = ""  # "exchange", "rename" or "created"
    swept: tuple[str, ...] = ()  # files a foreign writer added during the commit, moved over


#: Seconds a switched-out version stays before it is deleted. A reader that opened the table
#: directory just before the switch lists the old version; deleting its entries under that listing
#: would show the reader a part of it.
RETIRE_GRACE = 1.0
_RETIRING: list[threading.Timer] = []


def settle() -> None:
    """Wait until every old version this process switched out is deleted (tests; the timers are
    not daemons, so the interpreter also waits for them at exit)."""
    while _RETIRING:
        _RETIRING.pop().join()


class Transaction:
    """One write into one table directory, from staging to commit.

    Args:
        path: the table's root directory (local path or URI).
        spec: the spec the table will have after the commit (written to the metadata file).
        mode: ``"error"``, ``"append"`` or ``"overwrite"`` (``ignore`` is decided by the caller).
        filesystem: a pyarrow filesystem; resolved from ``path`` when omitted.
        extra: opaque data stored in the journal (the Spark writer records its catalog work).
        switch: ``"auto"`` (exchange where the filesystem can, else two renames), ``"exchange"``
            or ``"rename"`` (tests of the fallback).
        layout: ``"auto"`` (:meth:`TablePaths.at`: inside the table, published by a pointer, on a store
            without atomic directory renames, where a pointer exists, or where the table's parent directory
            may not be written (:meth:`begin`); else beside it, switched), ``"inside"`` or ``"beside"``
            (either on any store).
        grace: seconds before the switched-out version is deleted, in a background timer
            (default :data:`RETIRE_GRACE`; 0 deletes it before :meth:`commit` returns).
    """

    def __init__(self, path: str, spec: TableSpec, *, mode: str, filesystem: pafs.FileSystem | None = None,
                 write_id: str | None = None, extra: dict[str, Any] | None = None, switch: str = "auto",
                 grace: float | None = None, layout: str = "auto") -> None:
        if switch not in SWITCHES:
            raise InvalidArgumentError(f"switch={switch!r}: expected one of {list(SWITCHES)}")
        if layout not in LAYOUTS:
            raise InvalidArgumentError(f"layout={layout!r}: expected one of {list(LAYOUTS)}")
        self.fs, root = resolve_filesystem(path, filesystem)
        self.root = table_root(root)  # a metastore table of the inside layout is located at its live version
        self.spec = spec
        self.mode = mode
        self.how = switch
        self.grace = RETIRE_GRACE if grace is None else grace
        self.write_id = write_id or new_write_id()
        self._auto = layout == "auto"
        self._use(TablePaths.at(self.fs, self.root) if self._auto else TablePaths(self.root, layout == "inside"))
        self._retiring: list[str] = []  # inside: files at the table directory's top the commit took in
        self._base: str | None = None  # inside: the write id of the version the next one is built on
        self.extra = dict(extra or {})
        self._spec_text: str | None = None
        self._snapshot: list[str] | None = None
        self._begun = False
        self._placed = 0
        self._dirs: set[str] = set()

    def _use(self, paths: TablePaths) -> None:
        self.paths = paths
        self.inside = paths.inside
        self.next = paths.next(self.write_id)
        #: where the committed version's files are: the table directory, or (inside) the version's own
        self.published = self.next if self.inside else self.root
        self.staging = posixpath.join(self.next, STAGING_DIR)

    # -- phase 1 ---------------------------------------------------------------------------------
    def _open_journal(self) -> None:
        """Write the journal where the layout keeps it. Beside the table, a store may refuse it: on a
        shared warehouse, permissions are often granted per table location (HDFS ACLs, Ranger, Lake
        Formation). A table that keeps no versions beside it then commits inside it, writing nothing
        outside its location (``layout="auto"``; the metastore is moved to each version, and a directory
        table is read through bucketkit: a warning says so)."""
        try:
            self.fs.create_dir(self.paths.parent, recursive=True)
            self._journal("writing")
            return
        except OSError as exc:
            if self.inside or not self._auto or not _refused(exc):
                raise
            if exists(self.fs, self.paths.store):
                raise CommitError(f"table {self.root}: its journal {self.paths.journal(self.write_id)} may not be "
                                  f"written ({exc}); the table keeps its versions beside it, in {self.paths.store}: "
                                  "grant writes there, or move the table") from exc
            refusal = exc
        self._use(TablePaths(self.root, True))
        self._journal("writing")
        if not self.extra.get("catalog"):
            warnings.warn(
                f"table {self.root}: its parent directory may not be written ({refusal}), so this commit keeps the "
                f"table's versions inside it, published by the pointer {self.paths.pointer}: bucketkit's readers "
                "read each commit whole; an engine reading the directory itself (Hive, Trino, Spark without "
                "bucketkit) sees none of its files. Write it as a metastore table (table=) for those engines",
                stacklevel=3)

    def _journal(self, state: str, **more: Any) -> None:
        write_json(self.fs, self.paths.journal(self.write_id),
                   {"write_id": self.write_id, "state": state, "host": socket.gethostname(), "pid": os.getpid(),
                    "started": self._started, "mode": self.mode, "extra": self.extra, **more})

    def _sources(self) -> dict[str, str]:
        """The live table's files: relative path -> where it is. Inside, the pointer's version plus files
        at the table directory's top that its commit did not take (all of them before the first commit:
        a table another engine wrote, or its files written since); they become ``_retiring``."""
        pointer = live_pointer(self.fs, self.root) if self.inside else None
        self._base = pointer["write_id"] if pointer else None  # the version this one is built on
        live = self.paths.version(pointer["write_id"]) if pointer else self.root
        sources = {rel: posixpath.join(live, rel) for rel in visible_files(self.fs, live)}
        if live == self.root:
            self._retiring = sorted(sources) if self.inside else []
            return sources
        retiring = set(pointer.get("retiring", ()))
        self._retiring = [rel for rel in visible_files(self.fs, self.root) if rel not in retiring]
        for rel in self._retiring:
            if rel in sources:
                raise CommitError(f"table {self.root}: {posixpath.join(self.root, rel)} was written into the table "
                                  f"directory by another writer, and the live version has a file of that name")
            sources[rel] = posixpath.join(self.root, rel)
        return sources

    def begin(self) -> str:
        """Write the journal, create the next version's staging directory; returns the staging path."""
        self._started = time.time()
        self._open_journal()
        live = live_root(self.fs, self.root) if self.inside else self.root
        self._spec_text = _read_text(self.fs, posixpath.join(live, METADATA_FILE))
        if self.mode == "overwrite":
            self._snapshot = sorted(self._sources())
        self.fs.create_dir(self.staging, recursive=True)
        self._begun = True
        return self.staging

    def abort(self) -> None:
        """Discard everything staged (before the switch only)."""
        remove(self.fs, self.next)
        _forget(self.fs, self.paths, self.write_id)
        remove(self.fs, self.paths.journal(self.write_id))

    def _keep(self, replace: Sequence[str] | None, rows: int | None) -> tuple[Version, list[Version]]:
        """Keep the complete next version in the table's store (hard links; inside, it was built there)
        with its record, not yet committed: a read planned on it reads it there after later commits
        (:mod:`bucketkit.layout.versions`). Returns the record and the versions committed before it."""
        kept = self.paths.version(self.write_id)
        files = size = 0
        cut, made = len(self.next) + 1, set()
        for info in self.fs.get_file_info(pafs.FileSelector(self.next, recursive=True)):
            if info.type != pafs.FileType.File:
                continue
            rel = info.path[cut:]
            target = posixpath.join(kept, rel)
            if kept != self.next:
                if posixpath.dirname(target) not in made:
                    self.fs.create_dir(posixpath.dirname(target), recursive=True)
                    made.add(posixpath.dirname(target))
                link_or_copy(self.fs, info.path, target)
            if not any(is_hidden(part) for part in rel.split("/")):
                files, size = files + 1, size + (info.size or 0)
        earlier = [v for v in history(self.fs, self.paths, committed_only=False) if v.write_id != self.write_id]
        operation = ("create" if self._spec_text is None else self.mode if self.mode != "overwrite" or replace is None
                     else "overwrite partitions")
        record = Version(max((v.version for v in earlier), default=-1) + 1, self.write_id, None, operation,
                         tuple(replace or ()), files, size, rows)
        write_json(self.fs, self.paths.record(self.write_id), record.to_dict())
        return record, [v for v in earlier if v.committed is not None]

    def _retire(self, old: str | None) -> None:
        """Delete the old version (inside: the files the commit took from the table directory's top)
        and the journal, ``grace`` seconds later (see :func:`settle`)."""
        top = [posixpath.join(self.root, rel) for rel in self._retiring]

        def run() -> None:
            if old:
                remove(self.fs, old)
            _delete_files(self.fs, top)
            remove(self.fs, self.paths.journal(self.write_id))

        if not (old or top) or self.grace <= 0:
            run()
            return
        timer = threading.Timer(self.grace, run)
        timer.name = f"bucketkit-retire-{self.write_id}"
        _RETIRING.append(timer)
        timer.start()

    # -- phase 2 ---------------------------------------------------------------------------------
    def _still_based(self) -> None:
        """Inside: the version this one was built on is still the live one. A store without directory renames
        has no lock across writers: a commit published since would be lost under this one's pointer (an append's
        rows too), so this write fails instead, and nothing of it is committed. Asked just before the pointer is
        written, it leaves a window of one request, not of the whole build."""
        now = (live_pointer(self.fs, self.root) or {}).get("write_id")
        if now != self._base:
            raise ConcurrentModificationError(
                f"table {self.root}: write {now} was committed during write {self.write_id}, which was built on "
                f"{'no version' if self._base is None else 'version ' + self._base} (this store has no lock across "
                "writers); nothing of this write was committed: run it again")

    def _check(self, current: list[str], replace: Sequence[str] | None) -> None:
        """``current``: the live files :meth:`_sources` just listed, from the version it read (``_base``)."""
        based = self.paths.version(self._base) if self._base else self.root
        now = _read_text(self.fs, posixpath.join(based, METADATA_FILE))
        where = f"table {self.root}"
        if self._spec_text is not None and now is None:
            raise ConcurrentModificationError(f"{where} was dropped (its {METADATA_FILE} vanished) during write {self.write_id}")
        if self._spec_text is None and now is not None:
            if not (self.mode == "append" and TableSpec.from_json(now) == self.spec):
                raise ConcurrentModificationError(
                    f"{where} was created by another writer during write {self.write_id} (mode={self.mode!r})")
        elif self._spec_text != now:
            raise ConcurrentModificationError(f"{where}: {METADATA_FILE} changed during write {self.write_id}")
        if self.mode != "overwrite":
            return
        seen = [f for f in current if _in_scope(f, replace)]
        expected = [f for f in self._snapshot or () if _in_scope(f, replace)]
        if seen != expected:
            extra, gone = sorted(set(seen) - set(expected)), sorted(set(expected) - set(seen))
            raise ConcurrentModificationError(
                f"{where}: files of the overwritten {'table' if replace is None else 'partitions'} changed "
                f"during write {self.write_id} (another writer committed): new {extra[:5]}, missing {gone[:5]}")

    def _place(self, src: str, rel: str) -> None:
        """Put one file at ``rel`` in the next version (``src`` is moved, or linked if it is live)."""
        target = posixpath.join(self.next, rel)
        parent = posixpath.dirname(target)
        if parent not in self._dirs:
            self.fs.create_dir(parent, recursive=True)
            self._dirs.add(parent)
        if src.startswith(self.next + "/"):
            self.fs.move(src, target)
        else:
            link_or_copy(self.fs, src, target)
        self._placed += 1
        fault_point("during_build", self._placed)

    def _build(self, replace: Sequence[str] | None) -> tuple[list[str], list[str]]:
        """Complete the next version from the live one (under the lock): (live files, replaced ones)."""
        sources = self._sources()
        current = sorted(sources)
        self._check(current, replace)
        replaced = [f for f in current if self.mode == "overwrite" and _in_scope(f, replace)]
        gone = set(replaced)
        for rel in current:
            if rel not in gone:
                self._place(sources[rel], rel)
        write_spec(self.next, self.spec, self.fs)
        with self.fs.open_output_stream(posixpath.join(self.next, VERSION_PREFIX + self.write_id)) as f:
            f.write(self.write_id.encode("ascii"))
        remove(self.fs, self.staging)
        # every file of the version, placed by this spec: readers need not re-hash their rows (layout/manifest)
        record_manifest(self.fs, self.next, self.spec, f"commit {self.write_id}")
        return current, replaced

    def commit(self, files: dict[str, str], *, replace: Sequence[str] | None = None,
               on_committed: Callable[[], None] | None = None, rows: int | None = None) -> CommitSummary:
        """Build the next version and switch it into place (see the module docstring).

        Args:
            files: final path relative to the table root -> staged path (absolute, in the staging dir).
            replace: overwrite only: partition directories to replace; ``None`` = the whole table.
            on_committed: called once the new version is live (catalog updates).
            rows: rows the write added, for the version's record (None: not counted).

        Raises:
            ConcurrentModificationError: the table changed underneath; nothing was changed.
            CommitError: building or switching failed; the table is as it was.
        """
        if not self._begun:
            raise CommitError(f"write {self.write_id}: commit() called before begin()")
        how, old, replaced, swept = "", None, [], []
        try:
            for rel, src in sorted(files.items()):
                self._place(src, rel)
            with commit_lock(self.fs, self.paths.lock):
                current, replaced = self._build(replace)
                record, earlier = self._keep(replace, rows)
                self._journal(SWITCHING, known=current)
                fault_point("before_switch")
                if self.inside:  # the commit point: one object written whole names the new version
                    self._still_based()
                    write_json(self.fs, self.paths.pointer, {"write_id": self.write_id, "retiring": self._retiring})
                    how = "pointer"
                else:
                    how = switch(self.fs, self.root, self.next, self.paths.aside(self.write_id), how=self.how,
                                 between=lambda: fault_point("during_switch"))
                fault_point("after_switch")
                old = {"exchange": self.next, "rename": self.paths.aside(self.write_id)}.get(how)
                swept = _sweep(self.fs, old, self.root, current) if old else []
                expire(self.fs, self.paths, versions=[*earlier, _committed(self.fs, self.paths, record)])
        except BaseException as exc:
            if how:  # switched: the new version is live; recover() removes the old one
                raise CommitError(f"write {self.write_id} into {self.root} is committed, but what follows its commit "
                                  f"point failed ({exc}); run bucketkit.writing.commit.recover({self.root!r})"
                                  ) from exc
            self.abort()
            if isinstance(exc, CommitError) or not isinstance(exc, Exception):
                raise
            raise CommitError(f"write {self.write_id} into {self.root} failed before its switch and was rolled "
                              f"back: {exc}") from exc
        published = False
        try:
            if on_committed is not None:
                on_committed()
            published = True
        finally:
            if not published:  # the catalog still names the files the commit took in: they stay
                self._retiring = []
            self._retire(old)
        return CommitSummary(self.write_id, tuple(sorted(files)), tuple(replaced),
                             self._spec_text != self.spec.to_json(), how, tuple(swept))


def _delete_files(fs: pafs.FileSystem, paths: Sequence[str]) -> None:
    """Delete files (gone already: fine), then the directories that emptied (an object store has none)."""
    for path in paths:
        remove(fs, path)
    if is_local(fs):
        for parent in sorted({posixpath.dirname(p) for p in paths}, key=len, reverse=True):
            with contextlib.suppress(OSError):
                os.removedirs(parent)


def _forget(fs: pafs.FileSystem, paths: TablePaths, write_id: str) -> None:
    """Remove a version that never became live from the store (a rolled-back write)."""
    remove(fs, paths.version(write_id))
    remove(fs, paths.record(write_id))


def _committed(fs: pafs.FileSystem, paths: TablePaths, record: Version | None) -> Version | None:
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

    def __str__(self) -> str:
        if not self.removed:
            return f"nothing to remove; {len(self.kept)} version(s) kept"
        return (f"removed {len(self.removed)} version(s) ({', '.join(str(v.version) for v in self.removed)}), "
                f"freed {self.freed_bytes:,} bytes; {len(self.kept)} version(s) kept")


def expire(fs: pafs.FileSystem, paths: TablePaths, retain: float | None = None, *, dry_run: bool = False,
           versions: Sequence[Version] | None = None) -> VacuumResult:
    """Remove the kept versions replaced more than ``retain`` seconds ago (default: the retention
    period, :func:`~bucketkit.layout.versions.retention`); the live version always stays. A version's
    time counts from when the next one replaced it: a read planned on it just before is still served.
    ``versions``: the table's committed versions, oldest first, where the caller has read them."""
    retain = retention() if retain is None else float(retain)
    if retain < 0:
        raise InvalidArgumentError(f"retain={retain!r}: expected seconds >= 0")
    versions = history(fs, paths) if versions is None else list(versions)
    cutoff, removed, freed = time.time() - retain, [], 0
    for v, after in zip(versions, versions[1:]):
        if v.removed is None and after.committed is not None and after.committed <= cutoff:
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
    :class:`~bucketkit.errors.VersionNotFoundError`."""
    fs, root = resolve_filesystem(path, filesystem)
    paths = TablePaths.at(fs, root)
    with contextlib.nullcontext() if dry_run else commit_lock(fs, paths.lock):
        return expire(fs, paths, retain, dry_run=dry_run)


@dataclass(frozen=True)
class RecoveryAction:
    """What :func:`recover` found (and did) for one write a dead writer left unfinished."""

    write_id: str
    state: str  # "in progress", "rolled back", "rolled forward" (or "would ...")
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        return f"write {self.write_id}: {self.state}" + (f" ({self.detail})" if self.detail else "")


def _recover_one(fs: pafs.FileSystem, paths: TablePaths, write_id: str, journal: dict[str, Any] | None,
                 live: str | None, dry_run: bool) -> tuple[str, str]:
    """Finish (forward) or undo (back) one dead write; returns (direction, detail)."""
    nxt, aside = paths.next(write_id), paths.aside(write_id)
    journal = journal or {}
    if paths.inside:
        return _recover_inside(fs, paths, write_id, journal, dry_run)
    if live == write_id:  # switched: the old version is at nxt (exchange) or aside (renames)
        old, direction, detail = (aside if exists(fs, aside) else nxt), "forward", "new version is live"
    elif not exists(fs, paths.root) and journal.get("state") == SWITCHING and exists(fs, nxt):
        old, direction, detail = aside, "forward", "died between the renames; new version renamed into place"
        if not dry_run:
            fs.move(nxt, paths.root)
    elif not exists(fs, paths.root) and exists(fs, aside):
        old, direction, detail = nxt, "back", "died between the renames; old version renamed back"
        if not dry_run:
            fs.move(aside, paths.root)
    else:
        old, direction, detail = nxt, "back", f"died while {journal.get('state', 'writing')}; unfinished version removed"
    if not dry_run:
        if direction == "forward" and exists(fs, old):
            swept = _sweep(fs, old, paths.root, journal.get("known", ()))
            detail += f", {len(swept)} foreign file(s) moved over" if swept else ""
        if direction == "forward":
            record = read_json(fs, paths.record(write_id))
            _committed(fs, paths, Version.from_dict(record) if record else None)
        else:
            _forget(fs, paths, write_id)
        for path in (old, nxt, aside, paths.journal(write_id)):
            remove(fs, path)
    return direction, detail


def _recover_inside(fs: pafs.FileSystem, paths: TablePaths, write_id: str, journal: dict[str, Any],
                    dry_run: bool) -> tuple[str, str]:
    """:func:`_recover_one` where a pointer publishes versions: the write is live when the pointer names
    it (then the files it took from the table directory's top go), else its version is removed."""
    pointer = live_pointer(fs, paths.root) or {}
    if pointer.get("write_id") == write_id:
        if not dry_run:
            record = read_json(fs, paths.record(write_id))
            _committed(fs, paths, Version.from_dict(record) if record else None)
            _delete_files(fs, [posixpath.join(paths.root, rel) for rel in pointer.get("retiring", ())])
            remove(fs, paths.journal(write_id))
        return "forward", "new version is live"
    if not dry_run:
        _forget(fs, paths, write_id)
        remove(fs, paths.journal(write_id))
    return "back", f"died while {journal.get('state', 'writing')}; unfinished version removed"


def recover(path: str, *, filesystem: pafs.FileSystem | None = None, dry_run: bool = False,
            stale_after: float = 6 * 3600.0) -> list[RecoveryAction]:
    """Finish or undo writes whose writer died, so the table reads as its last committed version.

    A write whose writer is still running (same host: its process exists; another host: started
    less than ``stale_after`` seconds ago) is reported as ``in progress`` and left alone. Otherwise,
    if the live version is the write's (its switch happened), the old version is deleted (``rolled
    forward``); if it died between the two renames of a switch, the complete new version is renamed
    into place; else the unfinished version is deleted (``rolled back``).

    Args:
        path: the table's root directory.
        dry_run: only report (``bucketkit inspect``); states read "would roll back" etc.
    """
    fs, root = resolve_filesystem(path, filesystem)
    paths = TablePaths.at(fs, root)
    actions: list[RecoveryAction] = []
    if not pending_writes(fs, paths):
        return actions
    with contextlib.nullcontext() if dry_run else commit_lock(fs, paths.lock):
        writes = pending_writes(fs, paths)
        live = live_version(fs, paths.root) if writes else None
        for write_id in sorted(writes):
            journal = read_json(fs, paths.journal(write_id))
            if owner_alive(journal, stale_after):
                actions.append(RecoveryAction(write_id, "in progress", "its writer is still running"))
                continue
            direction, detail = _recover_one(fs, paths, write_id, journal, live, dry_run)
            state = f"would roll {direction}" if dry_run else f"rolled {direction}"
            actions.append(RecoveryAction(write_id, state, detail, (journal or {}).get("extra", {})))
    return actions
