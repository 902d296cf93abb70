"""The ``bucketkit`` command: look at a bucketed table's files without starting Spark (and rebucket it with Spark).

Subcommands (each also takes ``--json``):

* ``bucketkit inspect PATH [--bucket-count N] [--partition k=v ...] [--plot FILE.png]``: per
  partition the naming scheme detected, files, bytes and rows (from ORC/Parquet footers) per
  bucket, empty buckets, skew; unfinished writes (and leftover staging directories) as warnings.
  For a Hive ACID table (``--write-ids`` for a snapshot; an unbucketed one needs no
  ``--bucket-count``) per partition the chosen base/deltas/delete deltas, obsolete and aborted
  directories, and per bucket its files of each kind, rows and delete events.
* ``bucketkit recover PATH [--dry-run]``: finish or undo writes whose writer died
  (:func:`bucketkit.writing.recovery.recover`).
* ``bucketkit history PATH``: the versions bucketkit keeps of a table it writes (:func:`bucketkit.history`).
* ``bucketkit vacuum PATH [--retain SECONDS] [--dry-run]``: remove kept versions replaced more than
  ``--retain`` seconds ago (default 7 days; :func:`bucketkit.vacuum`).
* ``bucketkit validate PATH [--sample FRACTION | --every N] [--write-ids LIST] [--vouch]``: re-hash the bucket
  columns of every row with the table's bucket function; report each row stored in the wrong bucket
  (a Hive ACID table: the rows of its snapshot, bucket by bucket).
* ``bucketkit plan-join LEFT RIGHT --on k [--how inner]``: print the join plan.
* ``bucketkit rebucket TABLE [--bucket-count N] [--bucketing-version V] [--bucketed-by COLS] [--conf K=V ...]``:
  rewrite a table in another bucketing, atomically (:func:`bucketkit.rebucket`; starts a local Spark
  session, configured by ``--conf``).

The spec comes from bucketkit's metadata file when the table has one; for tables written by
Hive, Trino or Spark give ``--bucket-count`` (and, for ``validate``, ``--bucketed-by``,
``--bucket-types``, ``--bucketing-version``). Exit status: 0 fine, 1 problems found (mis-bucketed
rows), 2 bad usage or a table error (message on one line: ``bucketkit: error: ...``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any, Sequence

from bucketkit.errors import BucketkitError, InvalidArgumentError
from bucketkit.io import split_top_level
from bucketkit.layout.discovery import format_bytes

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_PROBLEMS, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, like every other bucketkit error
        self.exit(EXIT_ERROR, f"bucketkit: error: {self.prog}: {message} (see --help)\n")


def _split_types(values: Sequence[str] | None) -> list[str] | None:
    """``["int,varchar(10)", "decimal(10,2)"]`` → split on commas outside ``()`` and ``<>``."""
    return [item for value in values for item in split_top_level(value)] if values else None


def _spec_args(p: argparse.ArgumentParser, full: bool) -> None:
    g = p.add_argument_group("table spec (read from _bucketkit_table.json when present)")
    g.add_argument("--bucket-count", type=int, help="number of buckets")
    g.add_argument("--partitioned-by", action="append", metavar="COLS",
                   help="partition columns in directory order (comma-separated; default: from k=v directories)")
    if full:
        g.add_argument("--bucketed-by", action="append", metavar="COLS", help="bucket columns (comma-separated)")
        g.add_argument("--bucket-types", action="append", metavar="TYPES",
                       help="their Hive types, e.g. 'bigint' or 'int,varchar(20)'")
        g.add_argument("--bucketing-version", type=int, choices=(1, 2),
                       help="Hive bucketing version: 1 (Hive < 3, Spark's Hive writer) or 2 (Hive 3, Trino)")
        g.add_argument("--hash-family", choices=("hive", "spark"),
                       help="'spark' for a Spark bucketBy table (Spark's own hash); default hive")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bucketkit", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("inspect", help="files, bytes, rows per bucket of each partition")
    p.add_argument("path", help="table directory (local path or URI such as s3://bucket/t)")
    _spec_args(p, full=False)
    p.add_argument("--partition", action="append", default=[], metavar="K=V",
                   help="only partitions with this value (repeatable)")
    p.add_argument("--no-rows", action="store_true", help="skip reading row counts from file footers")
    p.add_argument("--plot", metavar="FILE.png", help="bar charts of files/bytes/rows per bucket")
    p.add_argument("--write-ids", metavar="LIST",
                   help="Hive ACID snapshot: Hive's ValidWriteIdList 'db.table:hwm:minOpen:open:aborted' "
                        "(default: every write id found is committed)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("validate", help="re-hash every row and report rows in the wrong bucket")
    p.add_argument("path", help="table directory (local path or URI)")
    _spec_args(p, full=True)
    p.add_argument("--partition", action="append", default=[], metavar="K=V", help="only these partitions")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--sample", type=float, metavar="FRACTION", help="check a random fraction of each file's rows")
    how.add_argument("--every", type=int, metavar="N", help="check every N-th row")
    p.add_argument("--max-report", type=int, default=20, metavar="N", help="rows listed in text output (default 20)")
    p.add_argument("--write-ids", metavar="LIST",
                   help="Hive ACID snapshot to check: Hive's ValidWriteIdList 'db.table:hwm:minOpen:open:aborted' "
                        "(default: every write id found is committed)")
    p.add_argument("--vouch", action="store_true",
                   help="when every row is in place, record the files in the table's manifest: reads then trust "
                        "their placement instead of re-hashing rows, until a file changes")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("recover", help="finish or undo bucketkit writes whose writer died")
    p.add_argument("path", help="table directory (local path or URI)")
    p.add_argument("--dry-run", action="store_true", help="only report what would be done")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_recover)

    p = sub.add_parser("history", help="the versions bucketkit keeps of a table it writes")
    p.add_argument("path", help="table directory (local path or URI)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("vacuum", help="remove kept versions older than the retention period")
    p.add_argument("path", help="table directory (local path or URI)")
    p.add_argument("--retain", type=float, default=None, metavar="SECONDS",
                   help="keep versions replaced less than this long ago (default: 7 days; 0: only the live one)")
    p.add_argument("--dry-run", action="store_true", help="only report what would be removed")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_vacuum)

    p = sub.add_parser("plan-join", help="how bucketkit.join would join two tables")
    p.add_argument("left", help="left table directory (with bucketkit metadata)")
    p.add_argument("right", help="right table directory (with bucketkit metadata)")
    p.add_argument("--on", action="append", required=True, metavar="KEY",
                   help="join key, or LEFT=RIGHT for different names (repeatable or comma-separated)")
    p.add_argument("--how", default="inner", help="inner, left, right, full, left_semi, left_anti")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_plan_join)

    p = sub.add_parser("rebucket", help="rewrite a table with another bucketing, atomically (starts Spark)")
    p.add_argument("table", help="table directory with bucketkit metadata, or a catalog table name (db.t) of the "
                                 "metastore the --conf settings name")
    p.add_argument("--bucket-count", type=int, metavar="N", help="new number of buckets (default: unchanged)")
    p.add_argument("--bucketing-version", type=int, choices=(1, 2), help="new Hive bucketing version (default: unchanged)")
    p.add_argument("--bucketed-by", metavar="COLS", help="new bucket column(s), comma-separated (default: unchanged)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting for the session (repeatable), e.g. "
                        "spark.hadoop.hive.metastore.uris=thrift://metastore:9083")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_rebucket)

    p = sub.add_parser("spark-conf", help="the jar and settings a Spark server needs for bucketkit, as flags "
                                          "(spark-submit, spark-sql, start-connect-server.sh, start-thriftserver.sh)")
    p.add_argument("--properties", action="store_true", help="as spark-defaults.conf lines instead of flags")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_spark_conf)
    return parser


# -- shared helpers -----------------------------------------------------------------------------
def _partition_filter(pairs: Sequence[str]):
    wanted: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BucketkitError(f"--partition {pair!r}: expected KEY=VALUE")
        wanted[key] = value
    if not wanted:
        return None
    return lambda values: all(values.get(k) == v for k, v in wanted.items())


def _resolve(args: argparse.Namespace):
    """``(BucketedTable or None, bucket_count, partitioned_by, source)`` from metadata or flags."""
    from bucketkit.errors import TableNotFoundError
    from bucketkit.io import resolve_filesystem
    from bucketkit.layout.metadata import check_table_dir, read_spec
    from bucketkit.table import open_table

    fs, root = resolve_filesystem(args.path)
    check_table_dir(args.path, fs, root)  # a file or missing path is not "a table without metadata"
    partitioned_by = _split_types(args.partitioned_by)
    try:
        read_spec(root, fs)
    except TableNotFoundError:
        if args.bucket_count is None:
            from bucketkit.acid.plan import WRITER_IDS, unbucketed_spec

            if unbucketed_spec(fs, root, partitioned_by=partitioned_by) is not None:
                return None, WRITER_IDS, partitioned_by, "Hive ACID directories; bucket_N are writer ids"
        if args.bucket_count is None:
            raise TableNotFoundError(f"{args.path}: no bucketkit metadata; pass --bucket-count N for a table written "
                                     f"by Hive, Trino or Spark") from None
        return None, args.bucket_count, partitioned_by, "command-line flags"
    table = open_table(root, filesystem=fs, bucket_count=args.bucket_count, partitioned_by=partitioned_by)
    return table, table.spec.bucket_count, table.spec.partitioned_by, "bucketkit metadata"


def _row_count(fs, path: str, size: int) -> int | None:
    if size == 0:
        return 0  # Hive and ORC allow a zero-byte file as an empty bucket
    from bucketkit.validation import detect_file

    data = detect_file(fs, path)
    if data is None:
        return None
    with data:
        return data.num_rows


def _skew(values: Sequence[int]) -> float | None:
    mean = sum(values) / len(values) if values else 0
    return round(max(values) / mean, 3) if mean else None


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    print(json.dumps(data, indent=2, sort_keys=False) if args.json else text)


# -- inspect ------------------------------------------------------------------------------------
def cmd_inspect(args: argparse.Namespace) -> int:
    from bucketkit.hudi.table import is_hudi_dir
    from bucketkit.io import resolve_filesystem
    from bucketkit.layout.discovery import discover

    if is_hudi_dir(*resolve_filesystem(args.path)):
        return _inspect_hudi(args)
    table, bucket_count, partitioned_by, source = _resolve(args)
    layout = discover(args.path if table is None else table.location, bucket_count,
                      filesystem=None if table is None else table.filesystem,
                      partitioned_by=partitioned_by, partition_filter=_partition_filter(args.partition))
    fs = layout.filesystem
    parts = []
    acid = any(p.scheme == "acid" for p in layout.partition_layouts)
    for p in layout.partition_layouts:
        info = p.summary()
        if acid:
            parts.append(_inspect_acid(fs, p.path, info, args, bucket_count, source.startswith("Hive ACID")))
            continue
        if not args.no_rows:
            rows = {b: [_row_count(fs, f.path, f.size) for f in files] for b, files in p.buckets.items()}
            known = all(r is not None for rs in rows.values() for r in rs)
            info["rows"] = sum(r for rs in rows.values() for r in rs) if known else None
            info["rows_per_bucket"] = [sum(rs) for rs in rows.values()] if known else None
        basis = "rows" if info.get("rows_per_bucket") is not None else "bytes"
        info["skew"] = _skew(info[f"{basis}_per_bucket"])
        info["skew_basis"] = basis
        parts.append(info)
    from bucketkit.writing.recovery import recover

    warnings = [f"leftover staging directory {d} (an interrupted bucketkit write; hidden from readers, safe to "
                f"delete when no write is running)" for d in layout.staging_dirs]
    warnings += [f"unfinished {a} (run `bucketkit recover {layout.root}`)"
                 for a in recover(layout.root, filesystem=fs, dry_run=True) if a.state != "in progress"]
    data = {"root": layout.root, "bucket_count": bucket_count, "spec_source": source,
            "partitioned_by": list(layout.partitioned_by), "partitions": parts, "warnings": warnings}
    if table is not None:
        data["spec"] = table.spec.to_dict()
    if args.plot:
        _plot(parts, bucket_count, args.plot, layout.root)
    _emit(args, data, _inspect_text(data))
    return EXIT_OK


def _inspect_hudi(args: argparse.Namespace) -> int:
    """An Apache Hudi table: its file groups, latest file slices (base and log files) and, with
    ``--bucket-count``, the bucket of each (Hudi's bucket index), as the scan plan lists them."""
    from bucketkit.pruning.plan import plan_scan

    plan = plan_scan(args.path, bucket_count=args.bucket_count, partition_filter=_partition_filter(args.partition))
    kind, fs, root = plan.kind, plan.table.filesystem, plan.table.location
    parts = []
    for p in plan.partitions:
        slices = [{"file_group": s.file_id, "bucket": s.bucket if plan.table.spec.bucketed else None,
                   "base_file": s.base or None, "log_files": list(s.logs), "bytes": s.size,
                   "base_rows": None if args.no_rows or not s.base else _row_count(fs, f"{root}/{s.base}", 1),
                   "instant": s.instant} for s in p.snapshot]
        parts.append({"values": dict(p.values), "path": p.path, "file_slices": slices})
    data = {"root": plan.table.location, "hudi": {"table_type": kind.table_type, "table_version": kind.version,
                                                  "instant": kind.instant},
            "bucket_count": plan.table.spec.bucket_count or None, "unbucketed": plan.unbucketed,
            "partitions": parts}
    lines = [f"{data['root']}: {kind.name}, {kind.versions()}, {len(parts)} partition(s)"]
    if plan.unbucketed:
        lines.append(f"  read unbucketed: {plan.unbucketed}")
    for part in parts:
        name = "/".join(f"{k}={v}" for k, v in part["values"].items()) or part["path"]
        lines.append(f"  {name}: {len(part['file_slices'])} file group(s)")
        for s in part["file_slices"]:
            bucket = "" if s["bucket"] is None else f"bucket {s['bucket']}: "
            rows = "" if s["base_rows"] is None else f", {s['base_rows']} base rows"
            lines.append(f"    {bucket}{s['file_group']}: base {s['base_file'] or 'none'} + {len(s['log_files'])} "
                         f"log file(s), {s['bytes']} bytes{rows}")
    _emit(args, data, "\n".join(lines))
    return EXIT_OK


def _inspect_acid(fs, path: str, info: dict[str, Any], args: argparse.Namespace, bucket_count: int,
                  unbucketed: bool) -> dict[str, Any]:
    """An ACID partition: its snapshot; rows and skew from its base/delta/original files only."""
    from bucketkit.acid.plan import describe_partition

    counter = None if args.no_rows else (lambda f: _row_count(fs, f, fs.get_file_info(f).size))
    info["acid"] = acid = describe_partition(fs, path, args.write_ids, counter)
    if unbucketed:  # bucket ids are writer ids: no per-bucket-id lists over 4096 ids
        for key in ("files_per_bucket", "bytes_per_bucket", "empty_buckets"):
            info.pop(key)
    rows = [b.get("rows") for b in acid["buckets"].values()]
    if not args.no_rows and None not in rows:
        info["rows"] = sum(rows)
        if not unbucketed:
            info["rows_per_bucket"] = [acid["buckets"].get(b, {}).get("rows", 0) for b in range(bucket_count)]
    basis = "rows" if info.get("rows") is not None else "bytes"
    info["skew"] = None if unbucketed else _skew(info[f"{basis}_per_bucket"])
    info["skew_basis"] = basis
    return info


def _acid_text(acid: dict[str, Any]) -> list[str]:
    def names(items: Sequence[str]) -> str:
        return (", ".join(items[:8]) + (f" ... (+{len(items) - 8})" if len(items) > 8 else "")) if items else "none"

    lines = [f"  Hive ACID snapshot: base {acid['base'] or 'none'}; deltas {names(acid['deltas'])}; delete deltas "
             f"{names(acid['delete_deltas'])}; {len(acid['original_files'])} original file(s)"]
    if acid["obsolete"]:
        lines.append(f"  obsolete (not read): {names(acid['obsolete'])}")
    if acid["aborted"]:
        lines.append(f"  aborted (not read): {names(acid['aborted'])}")
    for b, info in acid["buckets"].items():
        files = ", ".join(f"{info[k]} {k}" for k in ("original", "base", "delta", "delete_delta"))
        rows = "" if info.get("rows") is None else f"; {info['rows']} rows, {info['delete_events']} delete events"
        lines.append(f"  bucket {b}: {files} file(s){rows}")
    return lines


def _inspect_text(data: dict[str, Any]) -> str:
    by = f", partitioned by ({', '.join(data['partitioned_by'])})" if data["partitioned_by"] else ""
    buckets = "unbucketed" if data["spec_source"].startswith("Hive ACID") else f"{data['bucket_count']} buckets"
    lines = [f"{data['root']}: {buckets}{by} (spec from {data['spec_source']}), "
             f"{len(data['partitions'])} partition(s)"]
    for part in data["partitions"]:
        name = "/".join(f"{k}={v}" for k, v in part["values"].items()) or "(unpartitioned)"
        rows = "" if part.get("rows") is None else f", {part['rows']} rows"
        empty = part.get("empty_buckets", [])
        skew = "" if part["skew"] is None else f", skew {part['skew']:.2f}x by {part['skew_basis']} (max/mean)"
        empties = (f", {len(empty)} empty bucket(s){' ' + str(empty) if 0 < len(empty) <= 16 else ''}"
                   if "empty_buckets" in part else "")
        lines.append(f"{name}: scheme {part['scheme']}, {part['files']} files, {format_bytes(part['bytes'])}{rows}"
                     f"{empties}{skew}")
        if "acid" in part:
            lines += _acid_text(part["acid"])
        if "files_per_bucket" not in part:
            continue
        lines.append(f"  files per bucket: {' '.join(map(str, part['files_per_bucket']))}")
        lines.append(f"  bytes per bucket: {' '.join(map(str, part['bytes_per_bucket']))}")
        if part.get("rows_per_bucket") is not None:
            lines.append(f"  rows per bucket:  {' '.join(map(str, part['rows_per_bucket']))}")
        if part["obsolete"] and "acid" not in part:
            lines.append(f"  obsolete (ACID, superseded): {len(part['obsolete'])}: "
                         + ", ".join(p.rsplit('/', 1)[-1] for p in part["obsolete"][:8]))
    lines += [f"warning: {w}" for w in data["warnings"]]
    return "\n".join(lines)


def _plot(parts: list[dict[str, Any]], bucket_count: int, target: str, title: str) -> None:
    try:
        import matplotlib
    except ImportError:
        raise InvalidArgumentError(f"--plot {target}: needs matplotlib, which bucketkit installs only with the "
                                   f"plot extra: pip install 'bucketkit[plot]'") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [("files", "files_per_bucket"), ("bytes", "bytes_per_bucket")]
    if all(p.get("rows_per_bucket") is not None for p in parts):
        series.append(("rows", "rows_per_bucket"))
    fig, axes = plt.subplots(len(series), 1, figsize=(max(6, bucket_count * 0.15), 2.2 * len(series)), sharex=True)
    for ax, (label, key) in zip(axes, series):
        totals = [sum(p[key][b] for p in parts) for b in range(bucket_count)]
        ax.bar(range(bucket_count), totals)
        ax.set_ylabel(label)
    axes[-1].set_xlabel("bucket")
    axes[0].set_title(f"{title} ({len(parts)} partition(s))", fontsize=9)
    fig.tight_layout()
    fig.savefig(target)
    plt.close(fig)


# -- validate -----------------------------------------------------------------------------------
def cmd_validate(args: argparse.Namespace) -> int:
    from bucketkit.validation import validate

    result = validate(args.path, bucketed_by=_split_types(args.bucketed_by), bucket_count=args.bucket_count,
                      bucketing_version=args.bucketing_version, bucket_types=_split_types(args.bucket_types),
                      partitioned_by=_split_types(args.partitioned_by), hash_family=args.hash_family,
                      partition_filter=_partition_filter(args.partition), sample=args.sample, every=args.every,
                      write_ids=args.write_ids, vouch=args.vouch)
    if result.spec_source == "arguments":
        result = dataclasses.replace(result, spec_source="command-line flags")
    _emit(args, result.to_dict(), result.format(args.max_report))
    return EXIT_PROBLEMS if result.misplaced else EXIT_OK


# -- plan-join ----------------------------------------------------------------------------------
def cmd_plan_join(args: argparse.Namespace) -> int:
    from bucketkit.joins.plan import plan_join

    on: list[Any] = []
    for key in _split_types(args.on) or []:
        left, sep, right = key.partition("=")
        on.append((left.strip(), right.strip()) if sep else key)
    plan = plan_join(args.left, args.right, on, args.how)
    _emit(args, plan.to_dict(), plan.explain(max_groups=8))
    return EXIT_OK


def cmd_rebucket(args: argparse.Namespace) -> int:
    conf = {}
    for pair in args.conf:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise BucketkitError(f"--conf {pair!r}: expected KEY=VALUE")
        conf[key.strip()] = value
    from bucketkit.spark.rebucket import rebucket
    from bucketkit.spark.session import get_session

    spark = get_session("bucketkit-rebucket", conf=conf)
    result = rebucket(spark, args.table, bucket_count=args.bucket_count, bucketing_version=args.bucketing_version,
                      bucketed_by=_split_types([args.bucketed_by] if args.bucketed_by else None))
    spec = result.spec
    data = {"table": args.table, "bucketed_by": list(spec.bucketed_by), "bucket_count": spec.bucket_count,
            "bucketing_version": spec.bucketing_version, "rows": result.rows, "files": len(result.files),
            "write_id": result.write_id}
    _emit(args, data, f"{args.table}: rewritten as {spec.bucket_count} buckets by {', '.join(spec.bucketed_by)} "
                      f"(Hive bucketing v{spec.bucketing_version}): {result.rows} rows in {len(result.files)} files")
    return EXIT_OK


def cmd_recover(args: argparse.Namespace) -> int:
    from bucketkit.writing.recovery import recover

    actions = recover(args.path, dry_run=args.dry_run)
    data = {"path": args.path, "actions": [{"write_id": a.write_id, "state": a.state, "detail": a.detail}
                                           for a in actions]}
    _emit(args, data, "\n".join(map(str, actions)) or f"{args.path}: nothing to recover")
    return EXIT_OK


def cmd_history(args: argparse.Namespace) -> int:
    from bucketkit.spark.versions import history

    versions = history(args.path)
    _emit(args, {"path": args.path, "versions": [v.to_dict() for v in versions]},
          "\n".join(map(str, versions)) or f"{args.path}: no version kept (no bucketkit commit since versions are kept)")
    return EXIT_OK


def cmd_vacuum(args: argparse.Namespace) -> int:
    from bucketkit.spark.versions import vacuum

    result = vacuum(args.path, retain=args.retain, dry_run=args.dry_run)
    _emit(args, {"path": args.path, "removed": [v.to_dict() for v in result.removed],
                 "freed_bytes": result.freed_bytes, "kept": [v.to_dict() for v in result.kept],
                 "removed_tables": list(result.removed_tables), "dry_run": args.dry_run},
          ("would remove: " if args.dry_run else "") + str(result))
    return EXIT_OK


def cmd_spark_conf(args: argparse.Namespace) -> int:
    import shlex

    from bucketkit.spark.session import server_conf

    conf = server_conf()
    jar = shlex.quote(conf["spark.jars"])
    if args.properties:
        text = "\n".join(f"{k} {v}" for k, v in conf.items())
    else:
        flags = [f"--jars {jar}", f"--driver-class-path {jar}"]
        flags += [f"--conf {shlex.quote(f'{k}={v}')}" for k, v in conf.items() if k not in ("spark.jars",
                                                                                          "spark.driver.extraClassPath")]
        text = " ".join(flags)  # one line: `spark-sql $(bucketkit spark-conf)` takes it as it is
    _emit(args, conf, text)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bucketkit`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (BucketkitError, OSError) as exc:
        message = " ".join(str(exc).split())  # one line
        print(f"bucketkit: error: {message}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
