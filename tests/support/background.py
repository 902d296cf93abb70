"""Work a test waits for, started when the session starts and run beside the rest of the suite.

Some tests spend most of their time in child processes of their own (the wheel built and smoke-run on each
Spark release); the suite's own session leaves the machine's cores idle for much of its run, so such work is
started early in one worker thread, one job after the other, and each test takes its job's result when it gets
there. A test module offers its jobs with a function ``queue_background(names, tmp_path_factory)`` (``names``: its
selected tests), which conftest's ``background_work`` fixture calls when the session starts. A job started by no one runs
when its test asks for it, as before. The tests' assertions stay in the tests.
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any, Callable

_LOCK = threading.Lock()
_POOL: concurrent.futures.ThreadPoolExecutor | None = None
_JOBS: dict[str, concurrent.futures.Future] = {}


def start(name: str, work: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Queue ``work(*args, **kwargs)`` as job ``name`` unless it is queued already (jobs run one at a time, in
    order)."""
    global _POOL
    with _LOCK:
        if name not in _JOBS:
            if _POOL is None:
                _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tests-background")
            _JOBS[name] = _POOL.submit(work, *args, **kwargs)


def result(name: str, work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Job ``name``'s result (its exception, re-raised), queued now with ``work(*args, **kwargs)`` if no one
    started it."""
    start(name, work, *args, **kwargs)
    return _JOBS[name].result()


def done(name: str) -> Any:
    """The result of job ``name``, which must have been queued before the calling job (for a job that needs it)."""
    return _JOBS[name].result()


def stop() -> None:
    """Drop the jobs not started yet (a run that ends early, ``-x`` or Ctrl-C, does not wait for them); a running
    one finishes."""
    with _LOCK:
        if _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
