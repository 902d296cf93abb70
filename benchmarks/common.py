"""Shared helpers of the benchmark suite: timing, the benchmark SparkSession, result tables.

Every ``benchmarks/bench_<topic>.py`` module exposes ``run(scale: float = 1.0) -> list[BenchResult]``
and compares bucketkit with a Spark baseline measured in the same run, so a ratio stays meaningful
on a busy machine even when the absolute seconds do not. ``python -m benchmarks.run`` runs them all.

Conventions:
    * Sizes: ``scaled(10_000_000, scale)``; ``scale=1.0`` is the size the issue names.
    * Data: generate under ``data_dir("<topic>")`` (``benchmarks/.data``, gitignored), reuse it
      between runs when it is already there and of the right size.
    * Spark: ``bench_session()`` returns the one session of the run (``getOrCreate``); set any
      runtime conf a benchmark depends on explicitly, since earlier modules share the session.
    * Goals: set ``goal_ratio`` (ours/baseline must be <= it), ``goal_s`` (ours_s must be <= it)
      or ``extra={"rows_per_s": r, "goal_rows_per_s": g}`` so RESULTS.md can say whether a goal
      was met.
"""

from __future__ import annotations

import datetime as _dt
import gc
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = [
    "BenchResult",
    "timed",
    "bench_session",
    "data_dir",
    "machine_info",
    "print_results",
    "format_results",
    "peak_rss_mb",
    "jvm_pid",
    "descendants",
    "spark_peak_memory",
    "scaled",
    "BENCH_ROOT",
]

BENCH_ROOT = Path(__file__).resolve().parent / ".data"


@dataclass
class BenchResult:
    """One measured comparison: bucketkit against a Spark baseline in the same run.

    Attributes:
        name: what was measured, e.g. ``"join inner+agg 64 buckets"``.
        ours_s: bucketkit's time in seconds (best of repeats).
        baseline_s: the baseline's time in seconds, or None when there is no baseline.
        baseline: what the baseline is, e.g. ``"Spark shuffle join"``.
        notes: one line of context (sizes, files, bytes).
        extra: further figures (``rows``, ``rows_per_s``, ``peak_rss_mb``, ...); JSON-serialisable.
        goal_ratio: the issue's goal as a maximum of ``ours_s / baseline_s``, if it has one.
        goal_s: the issue's goal as a maximum of ``ours_s``, if it has one.
    """

    name: str
    ours_s: float
    baseline_s: float | None
    baseline: str
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    goal_ratio: float | None = None
    goal_s: float | None = None

    @property
    def ratio(self) -> float | None:
        """``ours_s / baseline_s`` (below 1: bucketkit is faster); None without a baseline."""
        if not self.baseline_s or self.ours_s is None:
            return None
        return self.ours_s / self.baseline_s

    @property
    def goal_met(self) -> bool | None:
        """Whether every goal this result carries is met; None when it carries none."""
        checks = []
        if self.goal_ratio is not None and self.ratio is not None:
            checks.append(self.ratio <= self.goal_ratio)
        if self.goal_s is not None:
            checks.append(self.ours_s <= self.goal_s)
        if "goal_rows_per_s" in self.extra and "rows_per_s" in self.extra:
            checks.append(self.extra["rows_per_s"] >= self.extra["goal_rows_per_s"])
        return all(checks) if checks else None

    @property
    def goal_text(self) -> str:
        """The goals in words, e.g. ``"<= 0.25x"``; empty when there is none."""
        parts = []
        if self.goal_ratio is not None:
            parts.append(f"<= {self.goal_ratio:g}x")
        if self.goal_s is not None:
            parts.append(f"<= {self.goal_s:g} s")
        if "goal_rows_per_s" in self.extra:
            got = self.extra.get("rows_per_s")
            parts.append(f">= {_si(self.extra['goal_rows_per_s'])} rows/s"
                         + (f" (got {_si(got)})" if got is not None else ""))
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio, "goal_met": self.goal_met}


def times_interleaved(fns: Sequence[Callable[[], Any]], repeat: int = 5, warmup: int = 1) -> list[list[float]]:
    """Every time of each function, run in alternating rounds whose order rotates (A, B, C, then B, C, A, ...).

    Timing one function after another favours the later ones: the JVM's JIT, the page cache and
    Spark's caches are warmer by then. Alternating gives every contender the same conditions, and
    rotating the order gives none of them a fixed neighbour (the one that always runs right after a
    full-table read would pay for its garbage).
    """
    for _ in range(max(0, warmup)):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for r in range(max(1, repeat)):
        for j in range(len(fns)):
            i = (j + r) % len(fns)
            gc.collect()
            start = time.perf_counter()
            fns[i]()
            times[i].append(time.perf_counter() - start)
    return times


def timed_interleaved(fns: Sequence[Callable[[], Any]], repeat: int = 5, warmup: int = 1) -> list[float]:
    """Best time of each function, run in alternating rounds (:func:`times_interleaved`)."""
    return [min(t) for t in times_interleaved(fns, repeat, warmup)]


def timed(fn: Callable[[], Any], repeat: int = 3, warmup: int = 1, *,
          clock: Callable[[], float] = time.perf_counter) -> float:
    """Run ``fn`` ``warmup`` times untimed, then ``repeat`` times; return the best time in seconds.

    The best of several runs is the least noisy estimate of what the code costs on a shared
    machine (noise only ever adds time). ``clock=time.process_time`` measures this process's CPU
    time instead: for single-threaded code, what the wall time would be on an idle machine.
    """
    for _ in range(max(0, warmup)):
        fn()
    best = math.inf
    for _ in range(max(1, repeat)):
        gc.collect()
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


#: Turns bucketkit's catalog off (Spark's own plan of the same SQL over the same files) for one session.
CATALOG_SWITCH = "spark.bucketkit.catalog.enabled"


def catalog_rows(spark: Any, text: str, catalog: bool) -> list:
    """The rows of SQL ``text`` with bucketkit's catalog on (``catalog=True``) or off: the comparison of the
    SQL benchmarks, catalog on against Spark's own plan."""
    spark.conf.set(CATALOG_SWITCH, str(catalog).lower())
    try:
        return spark.sql(text).collect()
    finally:
        spark.conf.unset(CATALOG_SWITCH)


def data_dir(name: str) -> Path:
    """``benchmarks/.data/<name>`` (created; gitignored) for a benchmark's generated data."""
    path = BENCH_ROOT / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def bench_session(**overrides: Any):
    """The SparkSession of a benchmark run, via :func:`bucketkit.spark.session.get_session`.

    ``local[2]``, UI and progress bars off, 8 shuffle partitions (one core's worth of work each is
    what Spark's local mode does best; Spark's default of 200 would handicap the baselines), 4 GB
    of driver memory, and a fixed warehouse + Derby metastore under ``benchmarks/.data`` so that
    catalog tables one module writes survive for the next. Keyword ``overrides`` go to
    ``get_session`` (``conf={...}`` is merged with the defaults here). Static settings (memory,
    warehouse) only take effect if no session exists yet in this process.
    """
    # Benchmarks rewrite the same tables many times a run: keep only the live version of each (a
    # commit then deletes the version it replaces, as before versions were kept), or the kept copies
    # of every overwrite would fill the disk. Set before the JVM starts: the SQL commit process inherits it.
    os.environ.setdefault("BUCKETKIT_RETENTION", "0")
    from bucketkit.spark.session import get_session

    conf = {
        "spark.driver.memory": os.environ.get("BUCKETKIT_BENCH_DRIVER_MEMORY", "4g"),
        "spark.sql.adaptive.enabled": "true",
        **dict(overrides.pop("conf", None) or {}),
    }
    kwargs: dict[str, Any] = {
        "app_name": "bucketkit-bench",
        "master": "local[2]",
        "warehouse": str(data_dir("spark") / "warehouse"),
        "shuffle_partitions": 8,
        "conf": conf,
    }
    kwargs.update(overrides)
    return get_session(**kwargs)


def jvm_pid(spark: Any) -> int | None:
    """Process id of the session's JVM (local mode: driver and executors), for :func:`peak_rss_mb`."""
    try:
        return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # a remote/Connect session has no local JVM to measure
        return None


def peak_rss_mb(pids: int | Iterable[int] | None = None) -> float:
    """Sum of the peak resident set sizes (``VmHWM``) of ``pids`` in MiB (Linux ``/proc``).

    ``pids`` defaults to this process. Processes that have gone are skipped; the peak of a
    process is since its start (write ``5`` to ``/proc/<pid>/clear_refs`` to reset it, if allowed).
    """
    if pids is None:
        pids = [os.getpid()]
    elif isinstance(pids, int):
        pids = [pids]
    total_kb = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        total_kb += int(line.split()[1])
                        break
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total_kb / 1024


def descendants(pid: int) -> list[int]:
    """Every descendant of ``pid`` (the JVM's Python daemon and workers)."""
    out, frontier = [], [pid]
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    procs[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in procs.items() if pp == parent]
        out += kids
        frontier += kids
    return out


def spark_peak_memory(spark: Any) -> dict[str, float | None]:
    """Peak RSS (MiB) of the session's JVM and of its largest Python worker so far."""
    pid = jvm_pid(spark)
    workers = descendants(pid) if pid else []
    return {"jvm_peak_rss_mb": round(peak_rss_mb(pid), 1) if pid else None,
            "python_workers_peak_rss_mb_max": round(max((peak_rss_mb(p) for p in workers), default=0.0), 1)}


def with_spark_memory(spark: Any, results: list[BenchResult]) -> list[BenchResult]:
    """``results``, each carrying the session's peak memory so far (:func:`spark_peak_memory`)."""
    memory = spark_peak_memory(spark)
    for r in results:
        r.extra.update(memory)
    return results


def scaled(n: int, scale: float, minimum: int = 1000) -> int:
    """``n * scale`` rounded, but at least ``minimum`` (so tiny smoke runs still do real work)."""
    return max(int(minimum), int(round(n * scale)))


def _read_first(path: str, key: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def machine_info() -> dict[str, Any]:
    """CPU, cores, memory, OS and the versions that matter, for the header of RESULTS.md."""
    import subprocess

    mem_kb = _read_first("/proc/meminfo", "MemTotal")
    info: dict[str, Any] = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": _read_first("/proc/cpuinfo", "model name") or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_gb": round(int(mem_kb.split()[0]) / 1024 / 1024, 1) if mem_kb else None,
        "os": platform.platform(),
        "python": sys.version.split()[0],
    }
    try:  # the commit measured, so a figure can be traced to the code that gave it
        out = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=30)
        dirty = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True, timeout=30).stdout.strip()
        info["commit"] = out.stdout.strip() + ("+changes" if dirty else "") if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        info["commit"] = None
    for module in ("pyspark", "pyarrow", "numpy", "numba"):
        try:
            info[module] = __import__(module).__version__
        except Exception:  # not installed: say so rather than fail the run
            info[module] = None
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        info["java"] = (out.stderr or out.stdout).splitlines()[0].strip()
    except (OSError, subprocess.TimeoutExpired, IndexError):
        info["java"] = None
    return info


def _si(value: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.3g}"


def _fmt_s(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _fmt_ratio(result: BenchResult) -> str:
    ratio = result.ratio
    if ratio is None:
        return "-"
    return f"{ratio:.2f}x ({1 / ratio:.1f}x faster)" if ratio < 0.95 else f"{ratio:.2f}x"


def _fmt_goal(result: BenchResult) -> str:
    if not result.goal_text:
        return ""
    met = result.goal_met
    return f"{result.goal_text} {'met' if met else 'NOT met' if met is False else '?'}"


_COLUMNS = ("benchmark", "bucketkit", "baseline", "baseline time", "ratio", "goal", "notes")


def _rows(results: Sequence[BenchResult]) -> list[tuple[str, ...]]:
    return [(r.name, _fmt_s(r.ours_s), r.baseline or "-", _fmt_s(r.baseline_s), _fmt_ratio(r),
             _fmt_goal(r), r.notes) for r in results]


def format_results(results: Sequence[BenchResult], *, markdown: bool = False) -> str:
    """The results as an aligned text table, or a Markdown table with ``markdown=True``."""
    rows = _rows(results)
    if markdown:
        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        lines = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(_COLUMNS)]
    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    out = [line(_COLUMNS), line(["-" * w for w in widths])]
    out += [line(row) for row in rows]
    return "\n".join(out)


def print_results(results: Sequence[BenchResult]) -> None:
    """Print ``results`` as a table with each ratio (ours / baseline; below 1 = bucketkit faster)."""
    print(format_results(results), flush=True)
