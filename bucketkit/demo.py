"""``make demo`` / ``python -m bucketkit.demo``: what bucketkit does, end to end, in about a minute.

1. writes two bucketed tables with :func:`bucketkit.write` (Hive bucketing v2, Hive 3's default):
   ``page_views`` partitioned by ``dt`` in 16 buckets and ``users`` in 32 (a multiple), and prints
   their layout;
2. lets Spark's own Hive writer produce a v1 table (``CREATE TABLE ... CLUSTERED BY``, ``INSERT``)
   and reads it with bucketkit: every row re-hashed into the file it sits in, a pruned lookup;
3. a pruned lookup on ``page_views``: buckets, files and bytes read against the whole table;
4. a bucketed join of the two tables with its plan, checked to run without a shuffle, timed next to
   Spark's own shuffle join of the same files, with the same result.

Options: ``--rows N`` (page views; default 2,000,000), ``--workdir DIR`` (default
``.bucketkit-demo`` in the current directory), ``--keep`` (leave the tables there to explore with
``bucketkit inspect``).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from bucketkit.errors import InvalidArgumentError
from bucketkit.layout.discovery import format_bytes

__all__ = ["main", "run", "DemoReport"]

MARKER = ".bucketkit-demo-workdir"
SPARK_TABLE = "bucketkit_demo_users_v1"
COUNTRIES = ("DE", "FR", "US", "BR", "IN", "JP", "NG", "GB", "CA", "MX", "ID", "KE")
DAYS = 7


@dataclass
class DemoReport:
    """The demo's claims, as figures a test can check."""

    rows: int = 0
    users: int = 0
    lookup_user: int = 0
    lookup_buckets_read: int = 0
    lookup_buckets_total: int = 0
    lookup_files_read: int = 0
    lookup_files_total: int = 0
    lookup_rows: int = 0
    lookup_rows_spark: int = 0
    spark_table_rows: int = 0
    spark_table_misplaced: int = 0
    spark_lookup_buckets_read: int = 0
    spark_lookup_equal: bool = False
    join_strategy: str = ""
    join_exchange_ours: bool = True
    join_exchange_spark: bool = False
    join_result_ours: list = field(default_factory=list)
    join_result_spark: list = field(default_factory=list)
    join_s: float = 0.0
    spark_join_s: float = 0.0
    total_s: float = 0.0


class Progress:
    """One line per step with the seconds since the demo started; dots while a long step runs."""

    def __init__(self, out: Callable[[str], None] = print, dots_every: float = 3.0) -> None:
        self.start = time.perf_counter()
        self.out = out
        self.dots_every = dots_every

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    @contextlib.contextmanager
    def step(self, label: str, *, own_line: bool = False) -> Iterator[None]:
        """Print ``label`` now and the step's seconds when it ends; ``own_line`` when the step may
        print something itself (the JVM's start-up notice) that should not break the line."""
        began = time.perf_counter()
        sys.stdout.write(f"[{self.elapsed():5.1f}s] {label} ..." + ("\n" if own_line else ""))
        sys.stdout.flush()
        stop = threading.Event()

        def dots() -> None:
            while not stop.wait(self.dots_every):
                sys.stdout.write(".")
                sys.stdout.flush()

        ticker = threading.Thread(target=dots, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()
            took = f"{time.perf_counter() - began:.1f} s"
            sys.stdout.write(f"\n[{self.elapsed():5.1f}s] {label}: {took}\n" if own_line else f" {took}\n")
            sys.stdout.flush()


def _speed(ours: float, theirs: float) -> str:
    if ours <= 0 or theirs <= 0:
        return "not timed"
    return f"{theirs / ours:.1f}x faster" if ours < theirs else f"{ours / theirs:.1f}x slower"


def _heading(text: str) -> None:
    print(f"\n== {text} ==", flush=True)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in str(text).splitlines())


def layout_summary(table: Any) -> str:
    """A few lines on a table's layout: partitions, files and bytes per bucket, naming scheme."""
    layout = table.layout()
    spec = table.spec
    n = spec.bucket_count
    files_per_bucket = [0] * n
    bytes_per_bucket = [0] * n
    schemes = set()
    empty = 0
    for part in layout.partition_layouts:
        schemes.add(str(part.scheme))
        for bucket, files in part.buckets.items():
            files_per_bucket[bucket] += len(files)
            bytes_per_bucket[bucket] += sum(f.size for f in files)
            empty += not any(f.size for f in files)
    parts = len(layout.partition_layouts)
    total_files, total_bytes = sum(files_per_bucket), sum(bytes_per_bucket)
    mean = total_bytes / n
    by = ", ".join(f"{c} {t}" for c, t in zip(spec.bucketed_by, spec.bucket_types))
    lines = [
        f"{table}: {n} buckets by ({by}), Hive bucketing v{spec.bucketing_version}, {spec.file_format}"
        + (f", partitioned by {', '.join(spec.partitioned_by)}" if spec.partitioned_by else ""),
        f"  {parts} partition(s), {total_files} files, {format_bytes(total_bytes)}; naming: {', '.join(sorted(schemes))}; "
        f"empty (partition, bucket) pairs: {empty}",
        f"  files per bucket (all partitions): min {min(files_per_bucket)}, max {max(files_per_bucket)}; "
        f"bytes per bucket: min {format_bytes(min(bytes_per_bucket))}, max {format_bytes(max(bytes_per_bucket))}, "
        f"skew {max(bytes_per_bucket) / mean if mean else 1:.2f}x (max / mean)",
    ]
    first = layout.partition_layouts[0]
    where = "/".join(f"{k}={v}" for k, v in first.values.items()) or "(table root)"
    def files(bucket: int) -> str:
        names = [f.name for f in first.buckets[bucket]]
        return names[0] if len(names) == 1 else f"{len(names)} files ({names[0]}, ...)" if names else "(none)"

    shown = [f"{b}: {files(b)}" for b in sorted(first.buckets)[:2]]
    lines.append(f"  bucket map of {where}: " + "; ".join(shown) + (" ..." if n > 2 else ""))
    return "\n".join(lines)


def _executed_plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def _best_of(fn: Callable[[], Any], times: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(times):
        began = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - began)
    return best, result


def _prepare_workdir(workdir: Path) -> None:
    """Create (or empty) the demo's working directory; never empty a directory the demo did not make."""
    if workdir.exists() and any(workdir.iterdir()) and not (workdir / MARKER).exists():
        raise InvalidArgumentError(
            f"--workdir {workdir}: directory exists, is not empty and was not created by the demo "
            f"(no {MARKER} file); expected a new or empty directory")
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    (workdir / MARKER).write_text("created by python -m bucketkit.demo; safe to delete\n")


def _make_data(spark: Any, rows: int, users: int) -> tuple[Any, Any]:
    from pyspark.sql import functions as F

    countries = F.array(*[F.lit(c) for c in COUNTRIES])
    # A few heavy users and a long tail, as real page views have (squaring a uniform skews it).
    page_views = spark.range(rows, numPartitions=4).select(
        F.floor(F.pow(F.rand(seed=7), 2) * users).cast("bigint").alias("user_id"),
        F.concat(F.lit("https://shop.example.com/p/"), (F.col("id") * 7919 % 5000).cast("string")).alias("page_url"),
        F.date_add(F.lit("2024-06-01").cast("date"), (F.col("id") % DAYS).cast("int")).alias("dt"),
    )
    user_rows = spark.range(users, numPartitions=2).select(
        F.col("id").alias("user_id"),
        F.concat(F.lit("user_"), F.col("id").cast("string")).alias("name"),
        F.element_at(countries, (F.col("id") % len(COUNTRIES) + 1).cast("int")).alias("country"),
    )
    return page_views, user_rows


def run_demo(spark: Any, rows: int, workdir: Path, report: DemoReport, progress: Progress) -> DemoReport:
    """Every step of the demo on an existing session; fills and returns ``report``."""
    users = max(100, rows // 10)
    report.rows, report.users = rows, users
    page_views_df, users_df = _make_data(spark, rows, users)
    pv_path, users_path = str(workdir / "page_views"), str(workdir / "users")
    page_views, users_table = _write_tables(page_views_df, users_df, pv_path, users_path, report, progress)
    _spark_written_table(spark, users_df, users_table, report, progress)
    _pruned_lookup(spark, page_views, pv_path, report, progress)
    _bucketed_join(spark, page_views, users_table, pv_path, users_path, report, progress)
    return report


def _write_tables(page_views_df: Any, users_df: Any, pv_path: str, users_path: str, report: DemoReport,
                  progress: Progress) -> tuple[Any, Any]:
    import bucketkit
    from bucketkit.table import open_table

    rows, users = report.rows, report.users
    _heading("1. write two bucketed tables with bucketkit.write (Hive bucketing v2)")
    with progress.step(f"page_views: {rows:,} rows, partitioned by dt, 16 buckets by user_id"):
        pv_written = bucketkit.write(page_views_df, "user_id", 16, path=pv_path, partitioned_by=["dt"],
                                     bucketing_version=2)
    with progress.step(f"users: {users:,} rows, 32 buckets by user_id"):
        users_written = bucketkit.write(users_df, "user_id", 32, path=users_path, bucketing_version=2)
    for written in (pv_written, users_written):
        print(f"  {written.rows:,} rows in {len(written.files)} files ({format_bytes(written.bytes)}), "
              f"{len(written.partitions)} partition(s): one file per bucket and partition")
    page_views, users_table = open_table(pv_path), open_table(users_path)
    print(layout_summary(page_views))
    print(layout_summary(users_table))
    return page_views, users_table


def _spark_written_table(spark: Any, users_df: Any, users_table: Any, report: DemoReport, progress: Progress) -> None:
    import bucketkit
    from bucketkit.spark.catalog import load_table

    users = report.users
    _heading("2. a table written by Spark's own Hive writer (bucketing v1), read with bucketkit")
    users_df.createOrReplaceTempView("bucketkit_demo_users_src")
    with progress.step(f"CREATE TABLE {SPARK_TABLE} ... CLUSTERED BY (user_id) INTO 8 BUCKETS; INSERT"):
        spark.sql(f"DROP TABLE IF EXISTS {SPARK_TABLE}")
        spark.sql(f"CREATE TABLE {SPARK_TABLE} (user_id bigint, name string, country string) "
                  "CLUSTERED BY (user_id) INTO 8 BUCKETS STORED AS ORC")
        spark.sql(f"INSERT INTO {SPARK_TABLE} SELECT user_id, name, country FROM bucketkit_demo_users_src")
    spark_table = load_table(spark, SPARK_TABLE)
    print(layout_summary(spark_table))
    with progress.step("re-hashing every row of Spark's files with bucketkit's v1 function"):
        checked = bucketkit.validate(spark_table)
    report.spark_table_rows, report.spark_table_misplaced = checked.rows_checked, checked.misplaced_rows
    print(f"  bucketkit.validate(load_table(spark, {SPARK_TABLE!r})): {checked.bucket_function}")
    print(f"  {report.spark_table_rows:,} rows in {checked.files_checked} files, {report.spark_table_misplaced} "
          f"in a file of another bucket: bucketkit hashes exactly as Spark's Hive writer (Hive v1) does")
    lookup_user = report.lookup_user = 4242 % users
    spark_plan = bucketkit.plan_scan(spark_table, [("user_id", "=", lookup_user)])
    report.spark_lookup_buckets_read = len(spark_plan.selected_buckets or range(8))
    ours = sorted(map(tuple, bucketkit.scan(spark, table=SPARK_TABLE, filters=[("user_id", "=", lookup_user)])
                      .select("user_id", "name", "country").collect()))
    theirs = sorted(map(tuple, spark.sql(f"SELECT user_id, name, country FROM {SPARK_TABLE} "
                                         f"WHERE user_id = {lookup_user}").collect()))
    report.spark_lookup_equal = ours == theirs
    print(f"  lookup user_id = {lookup_user}: bucketkit reads {report.spark_lookup_buckets_read} of 8 buckets "
          f"({spark_plan.files_selected} of {spark_plan.files_listed} files) and returns {ours}; "
          f"Spark SQL (all files) returns the same: {report.spark_lookup_equal}")
    mixed = bucketkit.plan_join(users_table, spark_table, "user_id")
    print(f"  joining bucketkit's v2 users with Spark's v1 copy: strategy {mixed.strategy}, because {mixed.reason}")


def _pruned_lookup(spark: Any, page_views: Any, pv_path: str, report: DemoReport, progress: Progress) -> None:
    import bucketkit
    from pyspark.sql import functions as F

    lookup_user = report.lookup_user
    _heading(f"3. a pruned lookup: page views of user_id = {lookup_user}")
    filters = [("user_id", "=", lookup_user)]
    plan = bucketkit.plan_scan(page_views, filters)
    print(_indent(plan.explain()))
    with progress.step("bucketkit.scan (reads the selected buckets only)"):
        lookup_s, found = _best_of(lambda: bucketkit.scan(spark, pv_path, filters=filters).collect(), 1)
    with progress.step("Spark: spark.read.orc(page_views).where(user_id = ...) (reads every file)"):
        spark_lookup_s, found_spark = _best_of(
            lambda: spark.read.orc(pv_path).where(F.col("user_id") == lookup_user).collect(), 1)
    report.lookup_buckets_total = page_views.spec.bucket_count
    report.lookup_buckets_read = len(plan.selected_buckets) if plan.selected_buckets is not None else 16
    report.lookup_files_read, report.lookup_files_total = plan.files_selected, plan.files_listed
    report.lookup_rows, report.lookup_rows_spark = len(found), len(found_spark)
    print(f"  {report.lookup_buckets_read} of {report.lookup_buckets_total} buckets, {plan.files_selected} of "
          f"{plan.files_listed} files, {format_bytes(plan.bytes_selected)} of {format_bytes(plan.bytes_listed)}; "
          f"{len(found)} rows in {lookup_s:.2f} s (Spark's full read: {len(found_spark)} rows in {spark_lookup_s:.2f} s)")
    for row in sorted(found, key=lambda r: (str(r["dt"]), r["page_url"]))[:5]:
        print(f"    {row['user_id']}  {row['dt']}  {row['page_url']}")
    if len(found) > 5:
        print(f"    ... {len(found) - 5} more")


def _bucketed_join(spark: Any, page_views: Any, users_table: Any, pv_path: str, users_path: str,
                   report: DemoReport, progress: Progress) -> None:
    import bucketkit
    from pyspark.sql import functions as F

    _heading("4. a bucketed join: page_views (16 buckets) x users (32 buckets) on user_id")
    join_plan = bucketkit.plan_join(page_views, users_table, "user_id")
    report.join_strategy = join_plan.strategy
    print(_indent(join_plan.explain(max_groups=3)))
    joined = bucketkit.join(spark, page_views, users_table, "user_id")
    plan_text = _executed_plan(joined)
    report.join_exchange_ours = "Exchange" in plan_text
    spark_joined = spark.read.orc(pv_path).join(spark.read.orc(users_path), "user_id")

    def per_country(df: Any) -> list:
        rows_ = df.groupBy("country").agg(F.count("*").alias("views"), F.sum("user_id").alias("sum_user_id"),
                                           F.sum(F.length("page_url")).alias("url_chars")).collect()
        return sorted(tuple(r) for r in rows_)

    with progress.step("bucketkit.join + views per country (best of 2)"):
        report.join_s, report.join_result_ours = _best_of(lambda: per_country(joined), 2)
    broadcast = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    # Both tables are "large" here by design; a broadcast would hide the shuffle being compared.
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        report.join_exchange_spark = "Exchange" in _executed_plan(spark_joined)
        with progress.step("Spark's own shuffle join of the same files + views per country (best of 2)"):
            report.spark_join_s, report.join_result_spark = _best_of(lambda: per_country(spark_joined), 2)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", broadcast)
    print(f"  executed plan of bucketkit.join: {'has an Exchange (shuffle)' if report.join_exchange_ours else 'no Exchange: no shuffle'}"
          f"; Spark's join: {'Exchange hashpartitioning on both sides' if report.join_exchange_spark else 'no Exchange'}")
    print(f"  {'country':8} {'views':>10} {'sum(user_id)':>16}")
    for country, views, sum_user_id, _ in sorted(report.join_result_ours, key=lambda r: -r[1])[:5]:
        print(f"  {country:8} {views:>10,} {sum_user_id:>16,}")
    same = report.join_result_ours == report.join_result_spark
    print(f"  same result as Spark's join: {same}; bucketkit {report.join_s:.2f} s vs Spark {report.spark_join_s:.2f} s: "
          f"{_speed(report.join_s, report.spark_join_s)}")


def _summary(report: DemoReport, workdir: Path, keep: bool) -> None:
    _heading("summary")
    print(f"- wrote page_views ({report.rows:,} rows, 16 buckets x {DAYS} days) and users ({report.users:,} rows, "
          f"32 buckets) with Hive bucketing v2, readable by Hive 3, Trino and Spark")
    print(f"- read Spark's own Hive-bucketed (v1) table: {report.spark_table_misplaced} of "
          f"{report.spark_table_rows:,} rows misplaced; lookup read {report.spark_lookup_buckets_read} of 8 buckets")
    print(f"- lookup: {report.lookup_buckets_read} of {report.lookup_buckets_total} buckets, "
          f"{report.lookup_files_read} of {report.lookup_files_total} files, {report.lookup_rows} rows "
          f"(Spark, reading everything: {report.lookup_rows_spark})")
    print(f"- join: {report.join_strategy}, {'no shuffle' if not report.join_exchange_ours else 'SHUFFLED'}, "
          f"{report.join_s:.2f} s vs Spark's shuffle join {report.spark_join_s:.2f} s "
          f"({_speed(report.join_s, report.spark_join_s)}), same result: "
          f"{report.join_result_ours == report.join_result_spark}")
    print(f"- total {report.total_s:.0f} s"
          + (f"; tables kept in {workdir} (try: bucketkit inspect {workdir / 'page_views'})" if keep
             else f"; {workdir} removed (--keep to explore the tables with `bucketkit inspect`)"))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bucketkit.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="page views to generate (default 2,000,000)")
    parser.add_argument("--workdir", type=Path, default=Path(".bucketkit-demo"),
                        help="where the tables go (default .bucketkit-demo in the current directory)")
    parser.add_argument("--keep", action="store_true", help="keep the tables in --workdir afterwards")
    args = parser.parse_args(argv)
    if args.rows < 1000:
        parser.error(f"--rows {args.rows}: expected at least 1000")
    return args


def run(argv: Sequence[str] | None = None) -> DemoReport:
    """Run the demo and return its figures (``main`` prints them and returns an exit code)."""
    args = parse_args(argv)
    workdir = args.workdir.resolve()
    _prepare_workdir(workdir)
    progress = Progress()
    report = DemoReport()
    from pyspark.sql import SparkSession

    from bucketkit.spark.session import get_session

    ours = SparkSession.getActiveSession() is None
    with progress.step("starting Spark (local[2])" if ours else "using the running Spark session", own_line=True):
        spark = get_session("bucketkit-demo", warehouse=str(workdir / "spark-warehouse"))
    try:
        run_demo(spark, args.rows, workdir, report, progress)
        report.total_s = progress.elapsed()
        _summary(report, workdir, args.keep)
    finally:
        if not args.keep:
            with contextlib.suppress(Exception):
                spark.sql(f"DROP TABLE IF EXISTS {SPARK_TABLE}")
        if ours:
            spark.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns 0 when every claim of the demo held, 1 otherwise."""
    report = run(argv)
    claims = [
        report.spark_table_misplaced == 0,
        report.spark_lookup_equal,
        report.lookup_buckets_read < report.lookup_buckets_total,
        report.lookup_rows == report.lookup_rows_spark,
        not report.join_exchange_ours,
        report.join_result_ours == report.join_result_spark,
    ]
    return 0 if all(claims) else 1


if __name__ == "__main__":
    sys.exit(main())
