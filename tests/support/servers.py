"""Servers the tests start in processes of their own (moto's S3 server, a Spark Connect server): a free port for
one, and the wait until it listens there."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    """A port of 127.0.0.1 no one listens on now (the server started next binds it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, server: subprocess.Popen, log: Path, timeout: float, poll: float = 0.1) -> None:
    """Return once something listens on 127.0.0.1:``port``; fail, with the tail of the server's ``log``, when
    ``server`` exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if server.poll() is not None or time.monotonic() > deadline:
            state = "exited" if server.poll() is not None else f"not listening after {timeout:.0f} s"
            raise AssertionError(f"server on 127.0.0.1:{port} {state}: {log.read_text(errors='replace')[-4000:]}")
        time.sleep(poll)
