"""Filesystem primitives of the commit: switch a whole directory, link a file, serialise committers.

* :func:`switch` puts a complete next version of a table directory in place of the live one. On a
  local Linux filesystem that supports it, ``renameat2(RENAME_EXCHANGE)`` swaps the two
  directories in one step: every reader resolving the path sees the old directory or the new one.
  Elsewhere (HDFS, object stores, other systems) the old directory is renamed aside and the new one
  renamed in: two steps, with a short window in which the path does not exist.
* :func:`link_or_copy` carries a file kept from the live version into the next one: a hard link on
  a local filesystem (no data copied), a copy elsewhere.
* :func:`commit_lock` serialises committers of one table on one machine (``fcntl.flock`` on a
  hidden lock file next to the table); other stores get no lock (see docs/writing.md).
* :func:`list_pinned` is the reader's side of the switch: it lists a local directory tree through
  open directory handles, so it lists the version the path named when it was opened, whole.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
from typing import Callable, Iterable, Iterator

import pyarrow.fs as pafs

__all__ = ["switch", "exchange", "link_or_copy", "commit_lock", "list_pinned", "is_local", "SWITCHES"]

#: ``switch=`` values: ``auto`` (exchange when the filesystem supports it), ``exchange``, ``rename``.
SWITCHES = ("auto", "exchange", "rename")
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_NO_EXCHANGE = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP)


def is_local(fs: pafs.FileSystem) -> bool:
    """Whether paths of ``fs`` are paths of this machine's filesystem (``os`` functions apply)."""
    return isinstance(fs, pafs.LocalFileSystem)


def _renameat2() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2  # glibc >= 2.28
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _renameat2()


def exchange(a: str, b: str) -> bool:
    """Atomically swap two local directories; False if this system or filesystem cannot.

    Raises:
        OSError: the exchange is supported but failed (a path is missing, permissions, ...).
    """
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, f"renameat2(RENAME_EXCHANGE) of {a} and {b}: {os.strerror(code)}")


def switch(fs: pafs.FileSystem, live: str, nxt: str, aside: str, *, how: str = "auto",
           between: Callable[[], None] = lambda: None) -> str:
    """Put directory ``nxt`` at ``live``; the previous ``live`` (if any) ends at ``nxt`` or ``aside``.

    Returns how: ``"created"`` (there was no live directory; one rename), ``"exchange"`` (the old
    version is now at ``nxt``) or ``"rename"`` (the old version is now at ``aside``; ``between``
    runs between the two renames, while ``live`` does not exist).
    """
    if fs.get_file_info(live).type == pafs.FileType.NotFound:
        fs.move(nxt, live)
        return "created"
    if how != "rename" and is_local(fs) and exchange(live, nxt):
        return "exchange"
    if how == "exchange":
        raise OSError(errno.EOPNOTSUPP, f"{live}: this filesystem cannot exchange directories (renameat2)")
    fs.move(live, aside)
    between()
    try:
        fs.move(nxt, live)
    except BaseException:
        fs.move(aside, live)
        raise
    return "rename"


def link_or_copy(fs: pafs.FileSystem, src: str, dst: str) -> None:
    """Make ``dst`` hold the same bytes as ``src``: a hard link locally, else a copy (the parent exists)."""
    if is_local(fs):
        try:
            os.link(src, dst)
            return
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
        shutil.copy2(src, dst)
        return
    fs.copy_file(src, dst)


def list_pinned(root: str, *, recursive: bool, skip: tuple[str, ...] = ()) -> Iterable[tuple[str, int, bool, int]]:
    """``(path, size, is_dir, mtime_ns)`` of every entry below the local directory ``root``.

    Each directory is read through one open handle, and its entries are looked up (size,
    sub-directories) relative to that handle, never by path again. So a switch that lands during
    the listing cannot make it drop the names of the version being listed, nor mix in the next
    one. Listers that read the names and then stat each one by path (pyarrow's local filesystem)
    silently drop the names a switch took away in between: an empty or partial listing.
    Entries whose name starts with one of ``skip`` are reported (size 0) but neither looked up nor
    descended into; directories report mtime 0.

    Raises:
        FileNotFoundError: ``root`` is missing, or an entry vanished while listed (the listed
            version is being deleted).
        NotADirectoryError: ``root`` is not a directory.
    """
    out: list[tuple[str, int, bool, int]] = []
    add = out.append
    pending = [(os.open(root, os.O_RDONLY | os.O_DIRECTORY), root.rstrip("/"))]
    try:
        while pending:
            fd, path = pending.pop()
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        name = entry.name
                        full = f"{path}/{name}"
                        if name.startswith(skip):
                            add((full, 0, entry.is_dir(), 0))
                        elif entry.is_dir():
                            add((full, 0, True, 0))
                            if recursive:
                                pending.append((os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), full))
                        else:
                            try:
                                st = entry.stat()
                                add((full, st.st_size, False, st.st_mtime_ns))
                            except FileNotFoundError:
                                if not entry.is_symlink():  # a dangling link is no file (as pyarrow)
                                    raise
            finally:
                os.close(fd)
    finally:
        for fd, _ in pending:
            os.close(fd)
    return out


@contextlib.contextmanager
def commit_lock(fs: pafs.FileSystem, lock_path: str) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (local filesystems; a no-op elsewhere).

    ``flock`` locks belong to an open file description, so two threads of one process exclude
    each other too; the kernel drops the lock when its holder dies.
    """
    if not is_local(fs):
        yield
        return
    import fcntl

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
