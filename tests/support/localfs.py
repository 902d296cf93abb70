"""The local disk as a pyarrow ``FileSystemHandler``, for test stores that change one behaviour of it (an object
store's renames: :mod:`support.objectstore`; a store that refuses writes outside one directory,
:class:`ConfinedHandler`). Every write passes :meth:`LocalHandler.writing` first."""

from __future__ import annotations

import os

import pyarrow.fs as pafs

#: ``BUCKETKIT_FILESYSTEMS=file=support.localfs:confined_filesystem`` confines a process's local writes to this directory
WRITABLE_ENV = "BUCKETKIT_TEST_WRITABLE"


class LocalHandler(pafs.FileSystemHandler):
    """Delegates to pyarrow's ``LocalFileSystem``; subclasses name the store and may refuse writes."""

    type_name = "local-test"

    def __init__(self) -> None:
        self.local = pafs.LocalFileSystem()

    def writing(self, path: str) -> None:
        """Called before anything at ``path`` is created, changed or deleted (raise to refuse)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and {k: v for k, v in vars(other).items() if k != "local"} == {
            k: v for k, v in vars(self).items() if k != "local"}

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return self.type_name

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.local.get_file_info(selector)

    def create_dir(self, path, recursive):
        if self.local.get_file_info(path).type != pafs.FileType.Directory:
            self.writing(path)
        self.local.create_dir(path, recursive=recursive)

    def delete_dir(self, path):
        self.writing(path)
        self.local.delete_dir(path)

    def delete_dir_contents(self, path, missing_dir_ok=False):
        self.writing(path)
        self.local.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self):
        raise OSError(f"{self.type_name}: refusing to empty the root")

    def delete_file(self, path):
        self.writing(path)
        self.local.delete_file(path)

    def move(self, src, dest):
        self.writing(src)
        self.writing(dest)
        self.local.move(src, dest)

    def copy_file(self, src, dest):
        self.writing(dest)
        self.local.copy_file(src, dest)

    def open_input_stream(self, path):
        return self.local.open_input_stream(path)

    def open_input_file(self, path):
        return self.local.open_input_file(path)

    def open_output_stream(self, path, metadata):
        self.writing(path)
        return self.local.open_output_stream(path)

    def open_append_stream(self, path, metadata):
        self.writing(path)
        return self.local.open_append_stream(path)


class ConfinedHandler(LocalHandler):
    """The local disk, refusing every write outside ``writable`` (directories, ``os.pathsep``-separated) with the
    error a user who may not write there gets (``PermissionError``, EACCES): a warehouse whose permissions are
    granted per table location."""

    type_name = "confined+local"  # renames directories, as the local disk does

    def __init__(self, writable: str) -> None:
        super().__init__()
        self.writable = tuple(w.rstrip("/") + "/" for w in writable.split(os.pathsep))

    def writing(self, path: str) -> None:
        if not (path + "/").startswith(self.writable):
            raise PermissionError(f"[Errno 13] Permission denied: '{path}'")


def confined_filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """``BUCKETKIT_FILESYSTEMS``'s factory for ``file:`` URIs: the local disk, writable only below ``$WRITABLE_ENV``."""
    path = uri[len("file:"):]
    return pafs.PyFileSystem(ConfinedHandler(os.environ[WRITABLE_ENV])), "/" + path.lstrip("/")
