"""An S3 server on this machine for the tests: moto's standalone server, started once per session.

The ``s3`` fixture is a fresh, empty place on it for each test (:class:`S3Place`): a pyarrow
``S3FileSystem`` and a ``bucket/prefix`` of its own, the same place as a URI that carries the endpoint
and the keys (for entry points that take a URI only, such as ``bucketkit inspect``), and
:meth:`S3Place.upload` to copy a table written on the local disk there byte for byte. Tests that take
it skip, saying why, where moto (the ``test`` extra: ``moto[server]``) or pyarrow's S3 support is
missing. The server holds its objects in memory and never leaves 127.0.0.1.

Test modules import the fixtures: ``from support.s3 import s3, s3_server  # noqa: F401``.
"""

from __future__ import annotations

import posixpath
import re
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from support.servers import free_port, wait_for_port

__all__ = ["BUCKET", "REGION", "S3Place", "s3", "s3_server"]

BUCKET = "bucketkit-tests"
REGION = "us-east-1"
_REQUEST = re.compile(r'"(?:\x1b\[[0-9;]*m)*([A-Z]+ \S+) HTTP/')  # werkzeug's access log line, colours or not
_KEY, _SECRET = "testing", "testing"  # moto accepts any keys; pyarrow must not go looking for real ones


@dataclass(frozen=True)
class S3Place:
    """A test's own prefix on the S3 server.

    Attributes:
        filesystem: a pyarrow ``S3FileSystem`` pointed at the server.
        root: ``bucket/prefix``: the test's place, a path inside ``filesystem``.
        endpoint: ``127.0.0.1:<port>``.
    """

    filesystem: pafs.S3FileSystem
    root: str
    endpoint: str
    log: Path | None = None

    def requests(self) -> list[str]:
        """The requests the server has logged so far, each as ``"METHOD /bucket/key?query"`` (its access log)."""
        if self.log is None:
            return []
        return [m.group(1) for m in map(_REQUEST.search, self.log.read_text(errors="replace").splitlines()) if m]

    def path(self, *parts: str) -> str:
        """A path below the test's place, inside :attr:`filesystem`."""
        return posixpath.join(self.root, *parts)

    def uri(self, *parts: str) -> str:
        """The same place as ``s3://`` URI that pyarrow's ``FileSystem.from_uri`` resolves to this server."""
        return (f"s3://{_KEY}:{_SECRET}@{self.path(*parts)}"
                f"?endpoint_override={self.endpoint}&scheme=http&region={REGION}")

    def upload(self, local_dir: str, *parts: str) -> str:
        """Copy every file below the local ``local_dir`` (hidden ones too) to :meth:`path` ``(*parts)``."""
        target = self.path(*parts)
        pafs.copy_files(str(local_dir), target, source_filesystem=pafs.LocalFileSystem(),
                        destination_filesystem=self.filesystem, use_threads=False)
        return target

    def files(self, *parts: str) -> dict[str, int]:
        """Every object below :meth:`path` ``(*parts)`` as the server lists it: relative path -> size."""
        base = self.path(*parts)
        infos = self.filesystem.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        return {i.path[len(base) + 1:]: i.size for i in infos if i.type == pafs.FileType.File}


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """``(endpoint, filesystem, log)`` of moto's S3 server, started on a free port of 127.0.0.1 with one bucket
    (``log``: its access log, a line per request).

    The server runs in a process of its own (``python -m moto.server``): in the tests' process (moto's
    ``ThreadedMotoServer``) it shared the interpreter's lock with the client it served, and the S3 tests took
    77 s here against 70 s with the server beside them."""
    pytest.importorskip(
        "moto.server", reason="moto is not installed: the S3 tests need `pip install 'moto[server]'` (the test extra)")
    pytest.importorskip("pyarrow._s3fs", reason="this pyarrow was built without S3 support")
    port = free_port()
    log = tmp_path_factory.mktemp("s3_server") / "server.log"  # a file, not a pipe: a full pipe would stop it
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                  stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, server, log, 60)
        endpoint = f"127.0.0.1:{port}"
        fs = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key=_KEY, secret_key=_SECRET,
                               region=REGION, allow_bucket_creation=True, connect_timeout=5, request_timeout=20)
        fs.create_dir(BUCKET)
        yield endpoint, fs, log
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def s3(s3_server, request) -> S3Place:
    """A fresh, empty ``bucket/prefix`` on the session's S3 server, named for the test."""
    endpoint, fs, log = s3_server
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name)[:60]
    return S3Place(fs, f"{BUCKET}/{name}-{secrets.token_hex(3)}", endpoint, log)
