"""The commit of a write into a bucketed table (pure pyarrow.fs, no Spark), as one sequence: :class:`Transaction`.

A reader sees the table's old version or its new one, never a part or a mix, because a commit
publishes whole versions, never files (docs/writing.md, "Commit protocol"; names in
:mod:`bucketkit.layout.versions`). The steps, in order:

1. :meth:`Transaction.begin`: the journal (owner: host, pid, start) where the layout keeps it, and the
   next version with a hidden staging directory inside, where the tasks write. On a local disk or HDFS
   the next version is ``<parent>/.<name>.bucketkit-<id>/``, beside the table; on a store that cannot
   rename a directory (S3, GCS, ADLS), or where the table's parent may not be written, everything lives
   inside the table (the ``inside`` layout) and the next version is built in place in its store.
2. :meth:`Transaction.commit`:
   a. the staged files get their final names inside the next version; then, holding the table's lock:
   b. nothing changed underneath (the metadata file, the files of an overwritten scope);
   c. every file the write keeps from the live version is placed into the next version (a hard link
      locally; all of them for an append, those outside the replaced partitions for a partition
      overwrite, none for a table overwrite); the metadata file, the version marker and the manifest;
   d. the version kept in the table's store with its record (:mod:`bucketkit.writing.retention`);
   e. the journal says ``switching``; **the commit point**: the directories switched
      (:func:`bucketkit.writing.atomic.switch`: one ``RENAME_EXCHANGE`` on a local Linux filesystem, two
      renames elsewhere), or, inside, the pointer ``.bucketkit.live`` written, naming the new version;
   f. files a foreign writer put into the old version meanwhile moved over
      (:func:`bucketkit.writing.recovery.sweep`); the version recorded committed, expired ones removed
      (:mod:`bucketkit.writing.retention`);
   g. the caller's ``on_committed`` (the catalog; a metastore table published at the new version:
      ``io.bucketkit.write.MetastorePublish``), then -- a grace period later, so that a reader still
      listing the old version is not shown a part of it -- the old version and the journal deleted.
3. A writer that died on the way is finished or undone by the next one before it begins
   (:func:`bucketkit.writing.recovery.recover`): the live version's marker or the pointer says whether
   the commit point was passed.
"""

from __future__ import annotations

import os
import posixpath
import secrets
import signal
import socket
import string
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pyarrow.fs as pafs

from bucketkit.writing.atomic import SWITCHES, commit_lock, link_or_copy, switch
from bucketkit.errors import CommitError, ConcurrentModificationError, InsideLayoutWarning, InvalidArgumentError
from bucketkit.io import STAGING_DIR, ensure_dir, for_each_request, has_directories, resolve_filesystem
from bucketkit.layout.manifest import Manifest, record_manifest
from bucketkit.layout.metadata import METADATA_FILE, TableSpec, write_spec
from bucketkit.layout.versions import (SWITCHING, VERSION_PREFIX, TablePaths, Version, exists, history, read_json,
                                       partition_dirs, remove, retention, table_root, visible_files,
                                       write_json)
from bucketkit.writing.recovery import sweep
from bucketkit.writing.retention import delete_files, expire, forget, record_committed

__all__ = ["Transaction", "LAYOUTS", "LAYOUT_CONF", "layout_setting", "CommitSummary", "new_write_id", "visible_files",
           "fault_point", "settle", "FAULT_ENV", "FAULT_POINTS", "RETIRE_GRACE", "unmovable"]

FAULT_ENV = "BUCKETKIT_FAULT"
#: Where ``BUCKETKIT_FAULT`` can kill a writer: after the Spark tasks wrote; after the n-th file
#: placed into the next version (staged files, then links of kept files); with the next version
#: complete and the journal ``switching``; between the two renames of a non-exchange switch; and
#: right after the switch, before the old version is deleted.
FAULT_POINTS = ("after_task_writes", "during_build", "before_switch", "during_switch", "after_switch")
_ALPHABET = string.ascii_lowercase + string.digits
#: ``layout=`` values of :class:`Transaction`: where versions live and how one is published.
LAYOUTS = ("auto", "inside", "beside")
#: The Spark setting that chooses the layout for a session's SQL INSERTs and its ``bucketkit.write`` calls.
LAYOUT_CONF = "spark.bucketkit.commit.layout"


def layout_setting(value: str | None) -> str:
    """The layout ``spark.bucketkit.commit.layout`` names (unset: ``auto``), or an error naming the setting."""
    layout = (value or "auto").strip()
    if layout not in LAYOUTS:
        raise InvalidArgumentError(f"{LAYOUT_CONF}={value!r}: expected one of {list(LAYOUTS)}")
    return layout


def unmovable(bucketed_by: Sequence[str]) -> str | None:
    """Why the Hive metastore, through Spark, cannot move a table bucketed by ``bucketed_by`` to another location (or
    change its CLUSTERED BY to those columns), or None.

    Hive checks every ``ALTER TABLE`` (``SET LOCATION``, ``RENAME``, ``SET TBLPROPERTIES``) for bucket columns among
    the table's columns, comparing them as given with its own lower-case column names (``Table.setBucketCols``);
    Spark gives them as the table's DDL spelled them. A table whose CLUSTERED BY column has a capital letter can be
    created, written and read, never altered: Spark's own ``ALTER TABLE`` fails on it the same way.
    """
    capitals = [c for c in bucketed_by if c != c.lower()]
    if not capitals:
        return None
    return (f"its bucket column(s) {capitals} are spelled with capitals, and the Hive metastore refuses every ALTER "
            "TABLE of such a table (it looks CLUSTERED BY columns up among its lower-case column names; Spark's own "
            "ALTER TABLE ... SET LOCATION fails the same way)")


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
        self._through = root  # that version (the metastore's readers read it until it moves on): kept by expire
        self.spec = spec
        self.mode = mode
        self.how = switch
        self.grace = RETIRE_GRACE if grace is None else grace
        self.write_id = write_id or new_write_id()
        self._auto = layout == "auto"
        self._use(TablePaths.at(self.fs, self.root) if self._auto else TablePaths(self.root, layout == "inside"))
        self._retiring: list[str] = []  # inside: files at the table directory's top the commit took in
        self._published_to: str | None = None  # inside: the metastore table the live version is published to
        self._base: str | None = None  # inside: the write id of the version the next one is built on
        self.extra = dict(extra or {})
        self._spec_text: str | None = None
        self._snapshot: list[str] | None = None
        self._begun = False
        self._placed = 0
        self._count = threading.Lock()  # _placed, counted by the threads that place files
        self._dirs: set[str] = set()

    def _use(self, paths: TablePaths) -> None:
        self.paths = paths
        self.inside = paths.inside
        self.next = paths.next(self.write_id)
        #: where the committed version's files are: the table directory, or (inside) the version's own
        self.published = self.next if self.inside else self.root
        self.staging = posixpath.join(self.next, STAGING_DIR)

    # -- phase 1 ---------------------------------------------------------------------------------
    def _first_journal(self) -> None:
        ensure_dir(self.fs, self.paths.parent)
        self._journal("writing")

    def _open_journal(self) -> None:
        """Write the journal where the layout keeps it. Beside the table, a store may refuse it: on a
        shared warehouse, permissions are often granted per table location (HDFS ACLs, Ranger, Lake
        Formation). A table that keeps no versions beside it then commits inside it, writing nothing
        outside its location (``layout="auto"``; the metastore is moved to each version, and a directory
        table is read through bucketkit: a warning says so)."""
        try:
            self._first_journal()
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
        self._check_publishable(refusal)
        self._first_journal()  # the table's own directory, created if the table is new
        if not self.extra.get("catalog"):
            warnings.warn(
                f"table {self.root}: its parent directory may not be written ({refusal}), so this commit keeps the "
                f"table's versions inside it, published by the pointer {self.paths.pointer}: bucketkit's readers "
                "read each commit whole; an engine reading the directory itself (Hive, Trino, Spark without "
                "bucketkit) sees none of its files. Write it as a metastore table (table=) for those engines",
                InsideLayoutWarning, stacklevel=3)

    def _journal(self, state: str, **more: Any) -> None:
        write_json(self.fs, self.paths.journal(self.write_id),
                   {"write_id": self.write_id, "state": state, "host": socket.gethostname(), "pid": os.getpid(),
                    "started": self._started, "mode": self.mode, "extra": self.extra, **more})

    @property
    def metastore_table(self) -> str | None:
        """Inside: the metastore table located at this table's live version (a write by ``table=`` or a SQL INSERT
        names it; its pointer keeps the name), which every commit must move there, a write by path too; else None."""
        return self.extra.get("metastore") or self.extra.get("catalog") or self._published_to

    def _pointer(self) -> dict[str, Any] | None:
        """The table's pointer (inside), opened without first asking whether it is there: on an object store each
        question is a request. (Readers ask first, ``versions.live_pointer``: most tables they read have none.)"""
        return read_json(self.fs, self.paths.pointer)

    def _sources(self) -> dict[str, str]:
        """The live table's files: relative path -> where it is. Inside, the pointer's version plus files
        at the table directory's top that its commit did not take (all of them before the first commit:
        a table another engine wrote, or its files written since); they become ``_retiring``."""
        pointer = self._pointer() if self.inside else None
        self._base = pointer["write_id"] if pointer else None  # the version this one is built on
        self._published_to = pointer.get("table") if pointer else None
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

    def _check_publishable(self, cause: BaseException | None = None) -> None:
        """Refuse, before anything is written, a metastore table (``extra["catalog"]``) committed inside: its
        readers would only see the version once the metastore moves there, which it will not (:func:`unmovable`)."""
        why = unmovable(self.spec.bucketed_by) if self.extra.get("catalog") else None
        if why is not None:
            raise CommitError(f"table {self.extra['catalog']}: this commit would keep the new version inside the table "
                              f"({self.paths.pointer}) and move the metastore to it, but {why}. Nothing was written. "
                              "Commit beside the table (layout='beside', spark.bucketkit.commit.layout=beside: a local "
                              "disk or HDFS whose table parent may be written), or recreate the table with lower-case "
                              "column names") from cause

    def begin(self) -> str:
        """Write the journal, create the next version's staging directory; returns the staging path."""
        self._started = time.time()
        if self.inside:
            self._check_publishable()
        self._open_journal()
        pointer = self._pointer() if self.inside else None
        live = self.paths.version(pointer["write_id"]) if pointer else self.root
        self._spec_text = _read_text(self.fs, posixpath.join(live, METADATA_FILE))
        if self.mode == "overwrite":
            self._snapshot = sorted(self._sources())
        ensure_dir(self.fs, self.staging)
        self._begun = True
        return self.staging

    def abort(self) -> None:
        """Discard everything staged (before the switch only)."""
        remove(self.fs, self.next)
        forget(self.fs, self.paths, self.write_id)
        remove(self.fs, self.paths.journal(self.write_id))

    def _keep(self, replace: Sequence[str] | None, rows: int | None,
              manifest: Manifest) -> tuple[Version, list[Version]]:
        """Keep the complete next version in the table's store (hard links; inside, it was built there)
        with its record, not yet committed: a read planned on it reads it there after later commits
        (:mod:`bucketkit.layout.versions`). Returns the record and the versions committed before it."""
        kept = self.paths.version(self.write_id)
        # the version's files are its manifest's (the listing _build just made); beside the table, every file of
        # the version is linked into the store, its hidden ones (spec, marker, manifest) too
        files, size = len(manifest.files), sum(s for s, _ in manifest.files.values())
        if kept != self.next:
            copies = [(info.path, posixpath.join(kept, info.path[len(self.next) + 1:]))
                      for info in self.fs.get_file_info(pafs.FileSelector(self.next, recursive=True))
                      if info.type == pafs.FileType.File]
            for parent in sorted({posixpath.dirname(target) for _, target in copies}):
                ensure_dir(self.fs, parent)
            for_each_request(self.fs, lambda copy: link_or_copy(self.fs, *copy), copies)
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
            delete_files(self.fs, top)
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
        now = (self._pointer() or {}).get("write_id")
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
            # created meanwhile with this write's spec: an append or an overwrite goes on as on a table that existed
            # (an overwrite fails below if the other writer's files are in its scope: partitions two backfill jobs
            # overwrite side by side into a new table both land, as in Hive)
            if not (self.mode in ("append", "overwrite") and TableSpec.from_json(now) == self.spec):
                raise ConcurrentModificationError(
                    f"{where} was created by another writer during write {self.write_id} (mode={self.mode!r})")
            self._spec_text = now  # this write creates nothing: its record says append or overwrite
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

    def _place_all(self, moves: Sequence[tuple[str, str]]) -> None:
        """Put each ``(src, rel)`` file at ``rel`` in the next version (``src`` is moved, or linked if it is live).
        On an object store a staged file is copied, and left for the staging directory's removal to delete with the
        others in one request: pyarrow's move is a copy, a delete, and a marker object written for the directory
        the delete emptied. A store's copies are requests, kept in flight together (:func:`for_each_request`)."""
        placed = [(src, posixpath.join(self.next, rel)) for src, rel in moves]
        for parent in sorted({posixpath.dirname(target) for _, target in placed} - self._dirs):
            ensure_dir(self.fs, parent)
            self._dirs.add(parent)
        for_each_request(self.fs, self._place, placed)

    def _place(self, move: tuple[str, str]) -> None:
        src, target = move
        if src.startswith(self.next + "/"):
            (self.fs.move if has_directories(self.fs) else self.fs.copy_file)(src, target)
        else:
            link_or_copy(self.fs, src, target)
        with self._count:
            self._placed += 1
            placed = self._placed
        fault_point("during_build", placed)

    def _keep_partition_dirs(self, replace: Sequence[str] | None) -> None:
        """Make the live version's partition directories that the next version, its files placed, lacks exist in it
        too: a partition the metastore registers with an empty directory (TRUNCATE ... PARTITION, ADD PARTITION, an
        INSERT OVERWRITE ... PARTITION of no rows: the metastore keeps it, as Hive does). Without its directory Spark's
        own Hive text reader fails ("Input path does not exist"), as Trino does on a registered partition whose
        location is gone. Not after a whole-table overwrite, which replaces every partition; stores without
        directories (S3, GCS) have nothing to keep."""
        depth = len(self.spec.partitioned_by)
        if not depth or not has_directories(self.fs) or (self.mode == "overwrite" and replace is None):
            return
        live = self.paths.version(self._base) if self._base else self.root
        placed = set(partition_dirs(self.fs, self.next, depth))
        for rel in partition_dirs(self.fs, live, depth):
            if rel not in placed:
                ensure_dir(self.fs, posixpath.join(self.next, rel))

    def _build(self, replace: Sequence[str] | None) -> tuple[list[str], list[str], Manifest]:
        """Complete the next version from the live one (under the lock): (live files, replaced ones, the
        version's manifest)."""
        sources = self._sources()
        current = sorted(sources)
        self._check(current, replace)
        replaced = [f for f in current if self.mode == "overwrite" and _in_scope(f, replace)]
        gone = set(replaced)
        self._place_all([(sources[rel], rel) for rel in current if rel not in gone])
        self._keep_partition_dirs(replace)
        write_spec(self.next, self.spec, self.fs)
        with self.fs.open_output_stream(posixpath.join(self.next, VERSION_PREFIX + self.write_id)) as f:
            f.write(self.write_id.encode("ascii"))
        remove(self.fs, self.staging)
        # every file of the version, placed by this spec: readers need not re-hash their rows (layout/manifest)
        manifest = record_manifest(self.fs, self.next, self.spec, f"commit {self.write_id}")
        return current, replaced, manifest

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
            self._place_all([(src, rel) for rel, src in sorted(files.items())])
            with commit_lock(self.fs, self.paths.lock):
                current, replaced, manifest = self._build(replace)
                record, earlier = self._keep(replace, rows, manifest)
                self._journal(SWITCHING, known=current)
                fault_point("before_switch")
                if self.inside:  # the commit point: one object written whole names the new version
                    self._still_based()
                    named = {"table": self.metastore_table} if self.metastore_table else {}
                    write_json(self.fs, self.paths.pointer,
                               {"write_id": self.write_id, "retiring": self._retiring, **named})
                    how = "pointer"
                else:
                    how = switch(self.fs, self.root, self.next, self.paths.aside(self.write_id), how=self.how,
                                 between=lambda: fault_point("during_switch"))
                fault_point("after_switch")
                old = {"exchange": self.next, "rename": self.paths.aside(self.write_id)}.get(how)
                swept = sweep(self.fs, old, self.root, current) if old else []
                # the version this one replaced stays for the grace at least: readers listing it now, and the
                # metastore's (moved to the new one by on_committed, after this), read it whole
                expire(self.fs, self.paths, max(retention(), RETIRE_GRACE), through=self._through,
                       versions=[*earlier, record_committed(self.fs, self.paths, record)])
        except BaseException as exc:
            if how:  # switched: the new version is live; recover() removes the old one
                raise CommitError(f"write {self.write_id} into {self.root} is committed, but what follows its commit "
                                  f"point failed ({exc}); run bucketkit.writing.recovery.recover({self.root!r})"
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
