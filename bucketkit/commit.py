"""Atomic commit of a write into a bucketed table directory (pure pyarrow.fs, no Spark).

The protocol (documented in docs/writing.md) follows Presto's inserts:

1. :meth:`Transaction.begin` creates the hidden staging directory ``<table>/.bucketkit-staging-<id>/``
   (with an owner record, ``_writer.json``) and remembers what the table looked like: its metadata
   file and, for an overwrite, its visible files. Tasks write into the staging directory.
2. :meth:`Transaction.commit` checks nothing changed underneath, writes the journal
   ``_commit.json`` (state ``prepared``: every move it is about to make), moves the files being
   replaced into ``<table>/.bucketkit-trash-<id>/``, re-checks, then flips the journal to
   ``committed`` -- the commit point -- moves the new files into place, writes the metadata file,
   and deletes trash and staging (journal last).
3. :func:`recover` finishes what a dead writer left: a journal in state ``committed`` is rolled
   forward (the remaining moves, the metadata), anything else is rolled back (trashed files go
   back, the staging directory is deleted). So after recovery the table always reads as its last
   committed state; hidden directories are never read by Hive, Trino, Spark or bucketkit.
"""

from __future__ import annotations

import json
import os
import posixpath
import secrets
import signal
import socket
import string
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import pyarrow.fs as pafs

from bucketkit.errors import CommitError, ConcurrentModificationError
from bucketkit.metadata import METADATA_FILE, TableSpec, resolve_filesystem

__all__ = ["Transaction", "CommitSummary", "RecoveryAction", "recover", "new_write_id", "visible_files",
           "fault_point", "STAGING_PREFIX", "TRASH_PREFIX", "JOURNAL_FILE", "OWNER_FILE", "FAULT_ENV"]

STAGING_PREFIX = ".bucketkit-staging-"
TRASH_PREFIX = ".bucketkit-trash-"
JOURNAL_FILE = "_commit.json"
OWNER_FILE = "_writer.json"
FAULT_ENV = "BUCKETKIT_FAULT"
FAULT_POINTS = ("after_task_writes", "during_overwrite_trash", "during_moves", "after_moves_before_metadata")
_ALPHABET = string.ascii_lowercase + string.digits


def new_write_id() -> str:
    """A unique, time-ordered write id shaped like a Presto query id (``20190526_072952_00009_fn7s5``).

    The shape lets the same id serve as the tail of Hive names and as the query id of legacy
    Presto names (whose pattern requires exactly this form).
    """
    stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime())
    return f"{stamp}_{secrets.randbelow(100000):05d}_{''.join(secrets.choice(_ALPHABET) for _ in range(5))}"


def fault_point(name: str, count: int | None = None) -> None:
    """Test hook: SIGKILL this process when ``BUCKETKIT_FAULT`` names this point.

    ``BUCKETKIT_FAULT=during_moves:3`` kills right after the third move; a point without a count
    fires the first time it is reached. Never set outside tests.
    """
    wanted = os.environ.get(FAULT_ENV)
    if not wanted:
        return
    point, _, n = wanted.partition(":")
    if point == name and (not n or count == int(n)):
        os.kill(os.getpid(), signal.SIGKILL)


def _hidden(name: str) -> bool:
    return name.startswith((".", "_"))


def visible_files(fs: pafs.FileSystem, root: str, under: str = "") -> list[str]:
    """Paths (relative to ``root``) of every visible file below ``root/under``, sorted.

    Hidden names (``.`` or ``_`` prefix) are skipped at every level, so staging and trash
    directories, ``_SUCCESS`` and the metadata file never count.
    """
    out: list[str] = []
    pending = [posixpath.join(root, under) if under else root]
    while pending:
        infos = fs.get_file_info(pafs.FileSelector(pending.pop(), allow_not_found=True))
        for info in infos:
            if _hidden(info.base_name):
                continue
            if info.type == pafs.FileType.Directory:
                pending.append(info.path)
            elif info.type == pafs.FileType.File:
                out.append(posixpath.relpath(info.path, root))
    return sorted(out)


def _exists(fs: pafs.FileSystem, path: str) -> bool:
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def _read_text(fs: pafs.FileSystem, path: str) -> str | None:
    try:
        with fs.open_input_stream(path) as f:
            return f.read().decode("utf-8")
    except FileNotFoundError:
        return None


def _write_json(fs: pafs.FileSystem, path: str, data: dict[str, Any]) -> None:
    """Write atomically: a temporary hidden file renamed over the target."""
    tmp = posixpath.join(posixpath.dirname(path), f".{posixpath.basename(path)}.{secrets.token_hex(4)}.tmp")
    with fs.open_output_stream(tmp) as f:
        f.write(json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))
    fs.move(tmp, path)


def _in_scope(relpath: str, scope: Sequence[str] | None) -> bool:
    """Whether a file lies in one of the partition directories of ``scope`` (None = whole table)."""
    return scope is None or any(relpath.startswith(p.rstrip("/") + "/") or not p for p in scope)


@dataclass(frozen=True)
class CommitSummary:
    """What a commit did: files moved into place and files replaced (now deleted)."""

    write_id: str
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    metadata_written: bool


class Transaction:
    """One write into one table directory, from staging to commit.

    Args:
        path: the table's root directory (local path or URI).
        spec: the spec the table will have after the commit (written to the metadata file).
        mode: ``"error"``, ``"append"`` or ``"overwrite"`` (``ignore`` is decided by the caller).
        replace: for overwrite, the partition directories (relative, ``"k=v/..."``) whose files are
            replaced, or ``None`` for the whole table; known only once the data is written, so it
            is passed to :meth:`commit`. The snapshot taken by :meth:`begin` covers the whole table.
        filesystem: a pyarrow filesystem; resolved from ``path`` when omitted.
        extra: opaque data stored in the journal (the Spark writer records its catalog work).
    """

    def __init__(self, path: str, spec: TableSpec, *, mode: str, filesystem: pafs.FileSystem | None = None,
                 write_id: str | None = None, extra: dict[str, Any] | None = None) -> None:
        self.fs, self.root = resolve_filesystem(path, filesystem)
        self.spec = spec
        self.mode = mode
        self.write_id = write_id or new_write_id()
        self.staging = posixpath.join(self.root, STAGING_PREFIX + self.write_id)
        self.trash = posixpath.join(self.root, TRASH_PREFIX + self.write_id)
        self.extra = dict(extra or {})
        self._spec_text: str | None = None
        self._snapshot: list[str] | None = None
        self._begun = False

    # -- phase 1 ---------------------------------------------------------------------------------
    def begin(self) -> str:
        """Create the staging directory, remember the table's state; returns the staging path."""
        self._spec_text = _read_text(self.fs, posixpath.join(self.root, METADATA_FILE))
        if self.mode == "overwrite":
            self._snapshot = visible_files(self.fs, self.root)
        self.fs.create_dir(self.staging, recursive=True)
        _write_json(self.fs, posixpath.join(self.staging, OWNER_FILE),
                    {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time(),
                     "write_id": self.write_id})
        self._begun = True
        return self.staging

    def abort(self) -> None:
        """Discard everything staged (before the commit point only)."""
        if _exists(self.fs, self.staging):
            self.fs.delete_dir(self.staging)

    # -- phase 2 ---------------------------------------------------------------------------------
    def _check(self, replace: Sequence[str] | None, *, after_trash: bool) -> None:
        current = _read_text(self.fs, posixpath.join(self.root, METADATA_FILE))
        where = f"table {self.root}"
        if self._spec_text is not None and current is None:
            raise ConcurrentModificationError(f"{where} was dropped (its {METADATA_FILE} vanished) during write {self.write_id}")
        if self._spec_text is None and current is not None:
            same = self.mode == "append" and TableSpec.from_json(current) == self.spec
            if not same:
                raise ConcurrentModificationError(
                    f"{where} was created by another writer during write {self.write_id} (mode={self.mode!r})")
        elif self._spec_text != current:
            raise ConcurrentModificationError(f"{where}: {METADATA_FILE} changed during write {self.write_id}")
        if self.mode != "overwrite":
            return
        now = [f for f in visible_files(self.fs, self.root) if _in_scope(f, replace)]
        expected = [] if after_trash else [f for f in self._snapshot or () if _in_scope(f, replace)]
        if now != expected:
            extra, gone = sorted(set(now) - set(expected)), sorted(set(expected) - set(now))
            raise ConcurrentModificationError(
                f"{where}: files of the overwritten {'table' if replace is None else 'partitions'} changed "
                f"during write {self.write_id} (another writer committed): new {extra[:5]}, missing {gone[:5]}")

    def commit(self, files: dict[str, str], *, replace: Sequence[str] | None = None,
               on_committed: Callable[[], None] | None = None) -> CommitSummary:
        """Move staged files into place atomically (see the module docstring).

        Args:
            files: final path relative to the table root -> staged path (absolute, in the staging dir).
            replace: overwrite only: partition directories to replace; ``None`` = the whole table.
            on_committed: called after the files and metadata are in place (catalog updates).

        Raises:
            ConcurrentModificationError: the table changed underneath; nothing was changed.
            CommitError: a move failed; everything done so far was undone.
        """
        if not self._begun:
            raise CommitError(f"write {self.write_id}: commit() called before begin()")
        try:
            self._check(replace, after_trash=False)
        except CommitError:
            self.abort()
            raise
        old = [f for f in self._snapshot or () if _in_scope(f, replace)] if self.mode == "overwrite" else []
        trash_moves = [(f, posixpath.relpath(posixpath.join(self.trash, f), self.root)) for f in old]
        moves = [(posixpath.relpath(src, self.root), dst) for dst, src in sorted(files.items())]
        old_dirs = sorted({posixpath.dirname(f) for f in old} - {posixpath.dirname(d) for d, _ in moves} - {""})
        journal = {"write_id": self.write_id, "state": "prepared", "trash": trash_moves, "moves": moves,
                   "remove_dirs": old_dirs, "spec": self.spec.to_dict(), "extra": self.extra}
        journal_path = posixpath.join(self.staging, JOURNAL_FILE)
        _write_json(self.fs, journal_path, journal)
        done_trash = done = 0
        try:
            for i, (src, dst) in enumerate(trash_moves, 1):
                self._move(src, dst)
                done_trash = i
                fault_point("during_overwrite_trash", i)
            self._check(replace, after_trash=True)
        except Exception as exc:
            self._undo(trash_moves[:done_trash], [])
            self._cleanup()
            if isinstance(exc, CommitError):
                raise
            raise CommitError(f"write {self.write_id} into {self.root} failed before its commit point "
                              f"and was rolled back: {exc}") from exc
        _write_json(self.fs, journal_path, {**journal, "state": "committed"})  # the commit point
        try:
            for i, (src, dst) in enumerate(moves, 1):
                self._move(src, dst)
                done = i
                fault_point("during_moves", i)
            fault_point("after_moves_before_metadata")
            written = _finish_metadata(self.fs, self.root, self.spec, old_dirs)
        except Exception as exc:
            _write_json(self.fs, journal_path, {**journal, "state": "aborted"})
            self._undo(trash_moves, moves[:done])
            self._cleanup()
            raise CommitError(f"write {self.write_id} into {self.root} failed while moving files into place "
                              f"and was rolled back: {exc}") from exc
        if on_committed is not None:
            on_committed()
        self._cleanup()
        return CommitSummary(self.write_id, tuple(d for _, d in moves), tuple(old), written)

    # -- helpers ---------------------------------------------------------------------------------
    def _abs(self, rel: str) -> str:
        return posixpath.join(self.root, rel)

    def _move(self, src: str, dst: str) -> None:
        target = self._abs(dst)
        if _exists(self.fs, target):
            raise CommitError(f"{target} already exists; bucketkit never overwrites a file")
        self.fs.create_dir(posixpath.dirname(target), recursive=True)
        self.fs.move(self._abs(src), target)

    def _undo(self, trash_moves: Iterable[tuple[str, str]], moves: Iterable[tuple[str, str]]) -> None:
        _roll(self.fs, self.root, list(moves) + list(trash_moves), backward=True)

    def _cleanup(self) -> None:
        if _exists(self.fs, self.trash):
            self.fs.delete_dir(self.trash)
        self.abort()


def _roll(fs: pafs.FileSystem, root: str, moves: Sequence[tuple[str, str]], *, backward: bool) -> None:
    """Redo (forward) or undo (backward) journal moves; each step is skipped if already done."""
    for src, dst in (reversed(moves) if backward else moves):
        a, b = (dst, src) if backward else (src, dst)
        a, b = posixpath.join(root, a), posixpath.join(root, b)
        if _exists(fs, a) and not _exists(fs, b):
            fs.create_dir(posixpath.dirname(b), recursive=True)
            fs.move(a, b)


def _finish_metadata(fs: pafs.FileSystem, root: str, spec: TableSpec, remove_dirs: Sequence[str]) -> bool:
    """Write the spec if it differs from the table's, and drop emptied partition directories."""
    from bucketkit.metadata import write_spec

    path = posixpath.join(root, METADATA_FILE)
    written = _read_text(fs, path) != spec.to_json()
    if written:
        write_spec(root, spec, fs)
    for rel in sorted(remove_dirs, key=lambda d: -d.count("/")):
        d = posixpath.join(root, rel)
        while d != root and _exists(fs, d) and not fs.get_file_info(pafs.FileSelector(d)):
            fs.delete_dir(d)
            d = posixpath.dirname(d)
    return written


@dataclass(frozen=True)
class RecoveryAction:
    """What :func:`recover` found (and did) for one leftover staging or trash directory."""

    write_id: str
    state: str  # "in progress", "rolled back", "rolled forward", "trash removed" (or "would ...")
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        return f"write {self.write_id}: {self.state}" + (f" ({self.detail})" if self.detail else "")


def _owner_alive(owner: dict[str, Any] | None, stale_after: float) -> bool:
    if not owner:
        return False
    if owner.get("host") == socket.gethostname():
        try:
            os.kill(int(owner["pid"]), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return time.time() - float(owner.get("started", 0)) < stale_after


def recover(path: str, *, filesystem: pafs.FileSystem | None = None, dry_run: bool = False,
            stale_after: float = 6 * 3600.0) -> list[RecoveryAction]:
    """Finish or undo writes whose writer died, so the table reads as its last committed state.

    A staging directory whose writer is still running (same host: its process exists; another
    host: started less than ``stale_after`` seconds ago) is reported as ``in progress`` and left
    alone. Otherwise a journal in state ``committed`` is rolled forward; anything else is rolled
    back. Trash directories without a staging directory are deleted.

    Args:
        path: the table's root directory.
        dry_run: only report (``bucketkit inspect``); states read "would roll back" etc.
    """
    fs, root = resolve_filesystem(path, filesystem)
    actions: list[RecoveryAction] = []
    entries = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
    staged = {e.base_name[len(STAGING_PREFIX):] for e in entries if e.base_name.startswith(STAGING_PREFIX)}
    for entry in sorted(entries, key=lambda e: e.base_name):
        name = entry.base_name
        if name.startswith(TRASH_PREFIX) and name[len(TRASH_PREFIX):] not in staged:
            if not dry_run:
                fs.delete_dir(entry.path)
            actions.append(RecoveryAction(name[len(TRASH_PREFIX):], ("would remove" if dry_run else "removed")
                                          + " leftover trash"))
        if not name.startswith(STAGING_PREFIX):
            continue
        write_id = name[len(STAGING_PREFIX):]
        owner_text = _read_text(fs, posixpath.join(entry.path, OWNER_FILE))
        if _owner_alive(json.loads(owner_text) if owner_text else None, stale_after):
            actions.append(RecoveryAction(write_id, "in progress", "its writer is still running"))
            continue
        text = _read_text(fs, posixpath.join(entry.path, JOURNAL_FILE))
        journal = json.loads(text) if text else {"state": "writing", "trash": [], "moves": []}
        extra = journal.get("extra", {})
        if journal["state"] == "committed":
            detail = f"{len(journal['moves'])} file(s) moved into place, metadata written"
            if not dry_run:
                _roll(fs, root, [tuple(m) for m in journal["trash"] + journal["moves"]], backward=False)
                _finish_metadata(fs, root, TableSpec.from_dict(journal["spec"]), journal.get("remove_dirs", ()))
            state = "would roll forward" if dry_run else "rolled forward"
        else:
            detail = f"died while {journal['state']}; {len(journal['trash'])} replaced file(s) restored"
            if not dry_run:
                _roll(fs, root, [tuple(m) for m in journal["moves"] + journal["trash"]], backward=True)
            state = "would roll back" if dry_run else "rolled back"
        if not dry_run:
            trash = posixpath.join(root, TRASH_PREFIX + write_id)
            if _exists(fs, trash):
                fs.delete_dir(trash)
            fs.delete_dir(entry.path)
        actions.append(RecoveryAction(write_id, state, detail, extra))
    return actions
