"""Recovery: finishing or undoing the writes whose writer died (:func:`recover`, run at the start of every write
and by ``bucketkit recover``), and moving over files a foreign writer put into a version being switched out
(:func:`sweep`). Each is a step the commit (:mod:`bucketkit.writing.commit`) or the next writer calls; the
journals it reads are :mod:`bucketkit.layout.versions`'s."""

from __future__ import annotations

import contextlib
import posixpath
from dataclasses import dataclass, field
from typing import Any, Sequence

import pyarrow.fs as pafs

from bucketkit.io import resolve_filesystem
from bucketkit.layout.versions import (SWITCHING, TablePaths, Version, exists, live_pointer, live_version, owner_alive,
                                       pending_writes, read_json, remove, visible_files)
from bucketkit.writing.atomic import commit_lock
from bucketkit.writing.retention import delete_files, forget, record_committed

__all__ = ["recover", "RecoveryAction", "sweep"]


def sweep(fs: pafs.FileSystem, old: str, live: str, known: Sequence[str]) -> list[str]:
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
            swept = sweep(fs, old, paths.root, journal.get("known", ()))
            detail += f", {len(swept)} foreign file(s) moved over" if swept else ""
        if direction == "forward":
            record = read_json(fs, paths.record(write_id))
            record_committed(fs, paths, Version.from_dict(record) if record else None)
        else:
            forget(fs, paths, write_id)
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
            record_committed(fs, paths, Version.from_dict(record) if record else None)
            delete_files(fs, [posixpath.join(paths.root, rel) for rel in pointer.get("retiring", ())])
            remove(fs, paths.journal(write_id))
        table = (journal.get("extra") or {}).get("catalog")  # its writer died before or after moving the metastore
        return "forward", "new version is live" + (
            f"; the metastore may still locate table {table} at the version before it (Hive, Trino and Spark's own "
            "reader read that one) until a bucketkit write into the table publishes a later one: an append of no "
            "rows will do" if table else "")
    if not dry_run:
        forget(fs, paths, write_id)
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
