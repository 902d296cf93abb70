"""Run the whole benchmark suite and record it: ``python -m benchmarks.run [--scale S] [--only a,b]``.

Runs ``benchmarks/bench_<topic>.py``'s ``run(scale)`` for each topic in order (hashing, planning,
write, scan, join, join_memory, acid), prints one table of bucketkit's times and their ratios to the Spark baseline
measured in the same run, and rewrites ``benchmarks/RESULTS.md``: machine, date, command, the figures
of this run against the issues' goals (topics an ``--only`` run skips keep their earlier figures),
and a history section to which every run appends a dated block (earlier blocks are kept). A topic whose module is missing or fails is reported and skipped;
the exit code is then 1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shlex
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from benchmarks.common import BenchResult, format_results, jvm_pid, machine_info, peak_rss_mb

TOPICS = ("hashing", "planning", "write", "scan", "join", "join_memory", "acid", "sql", "sql_shapes", "size_curve",
          "rebucket", "hudi", "plain_session", "layout", "object_store")

# What each issue asks of its benchmark, quoted in RESULTS.md next to the figures.
GOALS = {
    "hashing": "Vectorised, per core, on 10M values: >= 200M rows/s for v1 on int/bigint, >= 20M rows/s "
               "for v2 on ~16-byte strings; adding a bucket-id column to a 10M-row Spark DataFrame, next "
               "to Spark's own `hash()` column on the same data.",
    "planning": "Listing + mapping 100k files spread over 1k partitions on local disk: <= 2 s.",
    "object_store": "Issue 48: a commit on S3 (moto's server, 0 and 20 ms added to each request: simulated, not S3's), "
                    "whole-table and one-partition overwrites of 1 and 4 partitions x 64 buckets, its copies in flight "
                    "together against one after the other; no goal is set.",
    "layout": "Issue 48: a write whose versions live inside the table (S3's layout; where a store refuses writes "
              "beside a table; spark.bucketkit.commit.layout=inside) against Spark's own Hive-bucketed INSERT and "
              "against the local disk's switch beside the table, overwrite and append, 200k and 2M rows; no goal "
              "is set: the figures say what the layout costs.",
    "write": "10M rows (bigint, string, double), 64 buckets, ORC, input in one partition per core: bucketkit.write "
             "and a SQL INSERT through bucketkit's catalog <= 1.0x Spark's Hive-bucketed INSERT (issue 14; the "
             "earlier goal of 0.8x lies below the measured floor of any one-file-per-bucket write), writing 64 "
             "files where Spark writes tasks x 64.",
    "scan": "64 buckets, 10M rows: point lookup `key = v` and `key IN (5 values)` >= 8x faster than "
            "Spark's full read (ratio <= 0.125) and within 1.5x of reading the matching bucket files by "
            "hand; full scans <= 1.2x Spark's native reader of the same files.",
    "join": "Two 10M-row tables, 64 buckets, ORC, inner join + aggregate: <= 0.25x Spark's shuffle join "
            "over the same files and <= 0.5x Spark's bucketed join of `bucketBy(64)` copies; also 64 vs "
            "256 buckets and a left outer join; peak memory recorded.",
    "join_memory": "20M x 20M rows, 4 buckets, `spark.executor.pyspark.memory=600m`: bucketkit.join completes, "
                   "within 0.8x of Spark's join time on the same data, peak Python worker RSS within the cap; "
                   "12M x 12M under `500m` (a worker has ~1 MiB left for a join task): the JVM joins the "
                   "buckets, also within 0.8x.",
    "acid": "10M-row bucketed Hive ACID table (64 buckets), 10% of rows deleted over 3 delete deltas: full read "
            "<= 1.5x Spark reading the same surviving rows from a plain ORC table; a point lookup reads one bucket.",
    "sql": "The 10M x 10M join + aggregate written as SQL through bucketkit's catalog: <= 0.6x Spark's "
           "shuffle join over the same files, with no Exchange; reported beside bucketkit.join; GROUP BY k "
           "vs Spark's.",
    "sql_shapes": "Never slower than Spark's own plan, whatever the query (issue 26): count(*), filters and "
                  "aggregates on other columns, DISTINCT, top-k, GROUP BY k, point lookups, dynamic partition "
                  "pruning and a star join with a plain table, catalog on <= 1.0x catalog off, at 1M, 8M and "
                  "20M rows (64 buckets; 8, 64 and 256 at 8M).",
    "size_curve": "Fast at every size (issue 23), 100k, 1M and 10M rows, 64 buckets: SQL join, GROUP BY k and lookup "
                  "through the catalog, and the Python API's join, scan + groupBy and lookup, <= 1.0x Spark's own plan "
                  "at every size (<= 0.5x join, <= 0.3x GROUP BY at 10M); SQL INSERT and bucketkit.write <= 1.2x "
                  "Spark's Hive INSERT at 100k-2M rows, <= 0.8x at 10M.",
    "hudi": "Apache Hudi tables (issue 24): a snapshot read of a MOR table (log files merged by hudi-rs) vs Spark's "
            "Parquet reader of its base files; a bucket-index lookup (one file slice) and a join of two bucket-index "
            "tables (16 x 32 buckets, bucket by bucket) vs Spark's filter and shuffle join of the same base files, at "
            "100k and 2M rows.",
    "plain_session": "The API in a session the user built (issue 45), nothing of bucketkit's configured: a lookup on a "
                     "table bucketkit committed <= 1.2x the one-bucket floor and >= 8x faster than a full read; the "
                     "read-time check of a table no commit vouches for <= 5% of the lookup; write "
                     "<= 0.8x Spark's INSERT at 4M and 10M rows; join <= 0.2x Spark's shuffle join at 10M; with Python "
                     "workers capped at 500m, the 12M x 12M join in 4 buckets <= 0.8x.",
    "rebucket": "Re-bucketing a catalog table 64 <-> 256 buckets at 1M and 8M rows: bucketkit.rebucket (atomic, in "
                "place, metastore updated) <= 1.0x the manual way, a Spark CTAS + DROP + RENAME (v1); to v2 reported.",
}

RESULTS_FILE = Path(__file__).resolve().parent / "RESULTS.md"
HISTORY_FILE = Path(__file__).resolve().parent / "HISTORY.md"
HISTORY_HEAD = ("# Benchmark history\n\nEvery run of `python -m benchmarks.run`, oldest first: each result's ratio and "
                "whether its goal was met.\n")
_CARRIED = "*Not re-run by the last command; kept from an earlier run.*"
HISTORY_HEADING = "## History"


@dataclass
class TopicRun:
    """The outcome of one topic's ``run(scale)``."""

    topic: str
    results: list[BenchResult] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    peak_rss_mb: float | None = None


def run_topic(topic: str, scale: float) -> TopicRun:
    """Import ``benchmarks.bench_<topic>`` and run it; failures are captured, not raised."""
    outcome = TopicRun(topic)
    start = time.perf_counter()
    try:
        module = importlib.import_module(f"benchmarks.bench_{topic}")
    except ModuleNotFoundError as exc:
        if exc.name != f"benchmarks.bench_{topic}":
            raise
        outcome.error = f"benchmarks/bench_{topic}.py does not exist yet"
        return outcome
    try:
        outcome.results = list(module.run(scale=scale))
    except Exception as exc:  # one broken benchmark must not cost the figures of the others
        outcome.error = f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    outcome.seconds = time.perf_counter() - start
    outcome.peak_rss_mb = _process_peak_rss()
    return outcome


def _process_peak_rss() -> float:
    """Peak RSS of this Python process plus the local Spark JVM, if a session is running."""
    pids = [os.getpid()]
    if "pyspark" in sys.modules:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        pid = jvm_pid(session) if session is not None else None
        if pid is not None:
            pids.append(pid)
    return round(peak_rss_mb(pids), 1)


def _machine_lines(info: dict) -> list[str]:
    return [
        f"- CPU: {info.get('cpu')} ({info.get('cores')} cores, {info.get('cores_usable')} usable), "
        f"memory {info.get('memory_gb')} GB",
        f"- OS: {info.get('os')}",
        f"- Python {info.get('python')}, pyspark {info.get('pyspark')}, pyarrow {info.get('pyarrow')}, "
        f"numpy {info.get('numpy')}, numba {info.get('numba')}; Java: {info.get('java')}",
    ]


def _topic_sections(text: str) -> dict[str, str]:
    """Every section (``### title`` up to the next heading) of an existing RESULTS.md, in its order: a topic's,
    titled by the topic, and the notes written by hand between them (titled by their heading), which a run keeps
    where they stand."""
    latest = text.split(f"\n{HISTORY_HEADING}", 1)[0]  # a RESULTS.md from before HISTORY.md ends with one
    return {match[1]: match[2].strip("\n")
            for match in re.finditer(r"^### ([^\n]+)\n(.*?)(?=^##|\Z)", latest, flags=re.MULTILINE | re.DOTALL)}


def render_latest(runs: Sequence[TopicRun], info: dict, command: str, scale: float,
                  earlier: dict[str, str] | None = None) -> str:
    """The "latest run" part of RESULTS.md; topics this run skipped keep their ``earlier`` section."""
    lines = [
        "# Benchmark results",
        "",
        "Written by `python -m benchmarks.run` (`make bench`); every figure compares bucketkit with a Spark",
        "baseline measured in the same run on the same data. Ratio = bucketkit time / baseline time",
        "(below 1: bucketkit is faster). Times are the best of several repeats.",
        "",
        f"## Latest figures (last command run {info['date']})",
        "",
        f"Last command: `{command}` (scale {scale:g}; 1.0 = the sizes the issues name)",
        "",
        *_machine_lines(info),
        "",
    ]
    if scale < 1:
        lines += [f"> Scale {scale:g} is a smoke run: sizes are too small for the figures to mean much.", ""]
    ran = {run.topic: run for run in runs}
    earlier = earlier or {}
    for title in [*earlier, *(t for t in TOPICS if t not in earlier)]:  # the file's order; new topics last
        if title not in ran:
            previous = earlier.get(title)
            if previous:
                note = "" if title not in TOPICS or _CARRIED in previous else f"{_CARRIED}\n\n"
                lines += [f"### {title}", "", note + previous, ""]
            continue
        run = ran[title]
        commit = f", commit {info['commit']}" if info.get("commit") else ""
        lines += [f"### {run.topic}", "", f"_Measured {info['date']}{commit}, scale {scale:g}._", "",
                  f"Goal: {GOALS.get(run.topic, '-')}", ""]
        if run.error:
            lines += [f"Not measured: {run.error}", ""]
            continue
        if run.results:
            lines += [format_results(run.results, markdown=True), ""]
        lines += [f"Wall time of the topic {run.seconds:.1f} s; peak RSS so far (driver Python + JVM) "
                  f"{run.peak_rss_mb} MB.", ""]
        extras = [(r.name, r.extra) for r in run.results if r.extra]
        if extras:
            lines += ["<details><summary>extra figures</summary>", ""]
            lines += [f"- {name}: " + ", ".join(f"{k}={_short(v)}" for k, v in extra.items())
                      for name, extra in extras]
            lines += ["", "</details>", ""]
    return "\n".join(lines)


def _short(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render_history_block(runs: Sequence[TopicRun], info: dict, command: str) -> str:
    """One dated block of the history section: each result's ratio and whether its goal was met."""
    lines = [f"### {info['date']}: `{command}`", "",
             f"{info.get('cpu')}, {info.get('cores')} cores, {info.get('memory_gb')} GB; "
             f"pyspark {info.get('pyspark')}, pyarrow {info.get('pyarrow')}", ""]
    for run in runs:
        if run.error:
            lines.append(f"- {run.topic}: not measured ({run.error})")
        for r in run.results:
            ratio = f"{r.ratio:.2f}x {r.baseline}" if r.ratio is not None else f"{r.ours_s:.3g} s"
            goal = {True: "; goal met", False: "; goal NOT met", None: ""}[r.goal_met]
            lines.append(f"- {run.topic} / {r.name}: {ratio}{goal}")
    return "\n".join(lines) + "\n"


_ROW = re.compile(r"^\| (?!benchmark \||---)(.+?) \| (.+?) \| (.+?) \| (.+?) \| (.+?) \| (.*?) \| .*\|$")
_MEASURED = re.compile(r"^_Measured (\S+?)(?:, commit (\S+?))?(?: \([^)]*\))?, scale")  # a hand-written (note) too


def render_summary(latest: str) -> str:
    """One table of every benchmark in ``latest`` (the per-topic sections): its figure, its goal and
    whether the latest run met it, when and at which commit it was measured."""
    lines = ["## Summary", "",
             "Every benchmark's latest figure; the sections below have the baselines, notes and extra figures.",
             "", "| topic | benchmark | bucketkit | ratio | goal | measured |", "|---|---|---|---|---|---|"]
    for topic, body in _topic_sections(latest).items():
        if topic not in TOPICS:  # a note written by hand
            continue
        when = next((m for m in map(_MEASURED.match, body.splitlines()) if m), None)
        stamp = f"{when[1][:10]} {when[2] or ''}".strip() if when else "-"
        table = body.split("\n| benchmark |", 1)[-1].split("\n\n", 1)[0]  # the first: tables kept below are older
        for row in filter(None, map(_ROW.match, table.splitlines())):
            name, ours, _, _, ratio, goal = (c.strip() for c in row.groups())
            lines.append(f"| {topic} | {name} | {ours} | {ratio} | {goal or '-'} | {stamp} |")
    return "\n".join(lines) + "\n"


def write_results(runs: Sequence[TopicRun], info: dict, command: str, scale: float,
                  path: Path = RESULTS_FILE, history_path: Path | None = None) -> None:
    """Rewrite ``path``: a summary table of every benchmark, then the latest figures of each topic in
    full; append this run's block to the history file beside it (``HISTORY.md``)."""
    history_path = history_path or path.with_name(HISTORY_FILE.name)
    history, earlier = "", {}
    if path.exists():
        text = path.read_text(encoding="utf-8")
        earlier = _topic_sections(text)
        match = re.search(rf"^{re.escape(HISTORY_HEADING)}\s*$", text, flags=re.MULTILINE)
        if match:  # a RESULTS.md from before HISTORY.md: its history moves there
            history = text[match.end():].strip("\n")
    previous = history_path.read_text(encoding="utf-8").removeprefix(HISTORY_HEAD).strip("\n") \
        if history_path.exists() else ""
    blocks = [b for b in (previous, history, render_history_block(runs, info, command).strip("\n")) if b]
    history_path.write_text(HISTORY_HEAD + "\n" + "\n\n".join(blocks) + "\n", encoding="utf-8")
    latest = render_latest(runs, info, command, scale, earlier).rstrip("\n")
    head, _, topics = latest.partition("\n### ")
    body = "\n".join([head.rstrip("\n"), "", render_summary("### " + topics), "### " + topics])
    path.write_text(body + "\n", encoding="utf-8")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="size factor; 1.0 = the sizes the issues name (default), 0.01 for a smoke run")
    parser.add_argument("--only", default="",
                        help=f"comma-separated topics to run, from {','.join(TOPICS)} (default: all)")
    parser.add_argument("--results", type=Path, default=RESULTS_FILE,
                        help="Markdown file to write (default: benchmarks/RESULTS.md)")
    parser.add_argument("--no-results", action="store_true", help="print only; do not write the results file")
    args = parser.parse_args(argv)
    if args.scale <= 0:
        parser.error(f"--scale {args.scale}: expected a positive number")
    topics = [t.strip() for t in args.only.split(",") if t.strip()] or list(TOPICS)
    unknown = [t for t in topics if t not in TOPICS]
    if unknown:
        parser.error(f"--only: unknown topic(s) {unknown}; expected some of {list(TOPICS)}")
    args.topics = [t for t in TOPICS if t in topics]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    command = "python -m benchmarks.run " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    info = machine_info()
    print(f"bucketkit benchmarks, scale {args.scale:g}, topics: {', '.join(args.topics)}", flush=True)
    runs = []
    for topic in args.topics:
        print(f"\n== {topic} ==", flush=True)
        run = run_topic(topic, args.scale)
        runs.append(run)
        if run.error:
            print(f"{topic}: not measured: {run.error}", flush=True)
        else:
            print(format_results(run.results), flush=True)
            print(f"({run.seconds:.1f} s)", flush=True)
    everything = [r for run in runs for r in run.results]
    print("\n== all results (ratio = bucketkit / baseline; below 1 = bucketkit faster) ==")
    print(format_results(everything) if everything else "(no results)")
    if not args.no_results:
        write_results(runs, info, command.strip(), args.scale, args.results)
        print(f"\nwrote {args.results}")
    _stop_session()
    return 1 if any(run.error for run in runs) else 0


def _stop_session() -> None:
    try:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        if session is not None:
            session.stop()
    except Exception:  # nothing to stop
        pass


if __name__ == "__main__":
    sys.exit(main())
