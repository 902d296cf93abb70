"""The ``bucketkit`` command: look at a bucketed table's files without starting Spark.

Subcommands (each also takes ``--json``):

* ``bucketkit inspect PATH [--bucket-count N] [--partition k=v ...] [--plot FILE.png]``: per
  partition the naming scheme detected, files, bytes and rows (from ORC/Parquet footers) per
  bucket, empty buckets, skew; unfinished writes (and leftover staging directories) as warnings.
* ``bucketkit recover PATH [--dry-run]``: finish or undo writes whose writer died
  (:func:`bucketkit.commit.recover`).
* ``bucketkit validate PATH [--sample FRACTION | --every N]``: re-hash the bucket columns of every
  row with the table's bucket function; report each row stored in the wrong bucket.
* ``bucketkit plan-join LEFT RIGHT --on k [--how inner]``: print the join plan.

The spec comes from bucketkit's metadata file when the table has one; for tables written by
Hive, Trino or Spark give ``--bucket-count`` (and, for ``validate``, ``--bucketed-by``,
``--bucket-types``, ``--bucketing-version``). Exit status: 0 fine, 1 problems found (mis-bucketed
rows), 2 bad usage or a table error (message on one line: ``bucketkit: error: ...``).
"""

from __future__ import annotations

import argparse
import json
import posixpath
import sys
from typing import Any, Sequence

from bucketkit.errors import BucketkitError
from bucketkit.io import DataFile, detect_data_file, positional_names, split_top_level
from bucketkit.layout import format_bytes

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
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("recover", help="finish or undo bucketkit writes whose writer died")
    p.add_argument("path", help="table directory (local path or URI)")
    p.add_argument("--dry-run", action="store_true", help="only report what would be done")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_recover)

    p = sub.add_parser("plan-join", help="how bucketkit.join would join two tables")
    p.add_argument("left", help="left table directory (with bucketkit metadata)")
    p.add_argument("right", help="right table directory (with bucketkit metadata)")
    p.add_argument("--on", action="append", required=True, metavar="KEY",
                   help="join key, or LEFT=RIGHT for different names (repeatable or comma-separated)")
    p.add_argument("--how", default="inner", help="inner, left, right, full, left_semi, left_anti")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_plan_join)
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


def _resolve(args: argparse.Namespace, full: bool):
    """``(BucketedTable or None, bucket_count, partitioned_by, source)`` from metadata or flags."""
    from bucketkit.errors import TableNotFoundError
    from bucketkit.io import resolve_filesystem
    from bucketkit.metadata import check_table_dir, read_spec
    from bucketkit.table import open_table

    fs, root = resolve_filesystem(args.path)
    check_table_dir(args.path, fs, root)  # a file or missing path is not "a table without metadata"
    partitioned_by = _split_types(args.partitioned_by)
    try:
        spec = read_spec(root, fs)
    except TableNotFoundError:
        spec = None
    if full or spec is not None:
        table = open_table(root, filesystem=fs, bucketed_by=_split_types(getattr(args, "bucketed_by", None)),
                           bucket_count=args.bucket_count, bucketing_version=getattr(args, "bucketing_version", None),
                           bucket_types=_split_types(getattr(args, "bucket_types", None)),
                           partitioned_by=partitioned_by, hash_family=getattr(args, "hash_family", None))
        source = "bucketkit metadata" if spec is not None else "command-line flags"
        return table, table.spec.bucket_count, table.spec.partitioned_by if spec is not None else partitioned_by, source
    if args.bucket_count is None:
        raise TableNotFoundError(f"{args.path}: no bucketkit metadata; pass --bucket-count N for a table written by "
                                 f"Hive, Trino or Spark")
    return None, args.bucket_count, partitioned_by, "command-line flags"


def _open_file(fs, path: str) -> DataFile | None:
    """Open an ORC or Parquet file by its magic bytes (None: neither)."""
    from bucketkit.versions import vanished

    try:
        return detect_data_file(fs, path)
    except FileNotFoundError:
        raise vanished(posixpath.dirname(path), path) from None


def _row_count(fs, path: str, size: int) -> int | None:
    if size == 0:
        return 0  # Hive and ORC allow a zero-byte file as an empty bucket
    data = _open_file(fs, path)
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
    from bucketkit.layout import discover

    table, bucket_count, partitioned_by, source = _resolve(args, full=False)
    layout = discover(args.path if table is None else table.location, bucket_count,
                      filesystem=None if table is None else table.filesystem,
                      partitioned_by=partitioned_by, partition_filter=_partition_filter(args.partition))
    fs = layout.filesystem
    parts = []
    for p in layout.partition_layouts:
        info = p.summary()
        if not args.no_rows:
            rows = {b: [_row_count(fs, f.path, f.size) for f in files] for b, files in p.buckets.items()}
            known = all(r is not None for rs in rows.values() for r in rs)
            info["rows"] = sum(r for rs in rows.values() for r in rs) if known else None
            info["rows_per_bucket"] = [sum(rs) for rs in rows.values()] if known else None
        basis = "rows" if info.get("rows_per_bucket") is not None else "bytes"
        info["skew"] = _skew(info[f"{basis}_per_bucket"])
        info["skew_basis"] = basis
        parts.append(info)
    from bucketkit.commit import recover

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


def _inspect_text(data: dict[str, Any]) -> str:
    by = f", partitioned by ({', '.join(data['partitioned_by'])})" if data["partitioned_by"] else ""
    lines = [f"{data['root']}: {data['bucket_count']} buckets{by} (spec from {data['spec_source']}), "
             f"{len(data['partitions'])} partition(s)"]
    for part in data["partitions"]:
        name = "/".join(f"{k}={v}" for k, v in part["values"].items()) or "(unpartitioned)"
        rows = "" if part.get("rows") is None else f", {part['rows']} rows"
        empty = part["empty_buckets"]
        skew = "" if part["skew"] is None else f", skew {part['skew']:.2f}x by {part['skew_basis']} (max/mean)"
        lines.append(f"{name}: scheme {part['scheme']}, {part['files']} files, {format_bytes(part['bytes'])}{rows}, "
                     f"{len(empty)} empty bucket(s){' ' + str(empty) if 0 < len(empty) <= 16 else ''}{skew}")
        lines.append(f"  files per bucket: {' '.join(map(str, part['files_per_bucket']))}")
        lines.append(f"  bytes per bucket: {' '.join(map(str, part['bytes_per_bucket']))}")
        if part.get("rows_per_bucket") is not None:
            lines.append(f"  rows per bucket:  {' '.join(map(str, part['rows_per_bucket']))}")
        if part["obsolete"]:
            lines.append(f"  obsolete (ACID, superseded): {len(part['obsolete'])}: "
                         + ", ".join(p.rsplit('/', 1)[-1] for p in part["obsolete"][:8]))
    lines += [f"warning: {w}" for w in data["warnings"]]
    return "\n".join(lines)


def _plot(parts: list[dict[str, Any]], bucket_count: int, target: str, title: str) -> None:
    import matplotlib

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
def _bucket_columns(reader: DataFile, names: Sequence[str], spec) -> tuple[list, int]:
    """Read only the bucket columns of a file: ``(arrays, rows)``. ACID files nest rows in ``row``."""
    import pyarrow as pa

    schema = reader.schema
    if "row" in schema.names and pa.types.is_struct(schema.field("row").type):
        table = pa.Table.from_struct_array(reader.read(columns=["row"]).column("row"))
        schema = table.schema
    else:
        table = None
    lower = {n.lower(): n for n in schema.names}
    data_columns = [c for c, _ in spec.columns]
    wanted = []
    for name in names:
        if name.lower() in lower:
            wanted.append(lower[name.lower()])
        elif name in data_columns and positional_names(schema.names):
            wanted.append(schema.names[data_columns.index(name)])  # old Hive ORC files: _col0, _col1, ...
        else:
            raise BucketkitError(f"bucket column {name!r} not found among the file's columns {schema.names}")
    if table is None:
        table = reader.read(columns=wanted)
    return [table.column(c) for c in wanted], table.num_rows


def cmd_validate(args: argparse.Namespace) -> int:
    import numpy as np

    from bucketkit.layout import discover

    from bucketkit.trust import spec_doubt

    table, _, partitioned_by, source = _resolve(args, full=True)
    spec = table.spec
    doubt = table.unbucketed_reason or spec_doubt(spec)
    if doubt:
        raise BucketkitError(f"{args.path}: cannot validate, the hash is unknown: {doubt} "
                             "(on the command line: --bucketing-version 1|2 or --hash-family spark)")
    function = spec.bucket_function()
    layout = discover(table.location, spec.bucket_count, filesystem=table.filesystem,
                      partitioned_by=partitioned_by, partition_filter=_partition_filter(args.partition))
    rng = np.random.default_rng(0)
    bad: list[dict[str, Any]] = []
    checked = files = 0
    skipped: list[str] = []
    for part in layout.partition_layouts:
        if (part.scheme == "spark") != (spec.hash_family == "spark") and part.scheme != "empty":
            skipped.append(f"{part.path}: {part.scheme} file names in a table hashed with {spec.hashing}; "
                           "which hash placed these rows is unknown, not checked")
            continue
        for bucket, bucket_files in part.buckets.items():
            for f in bucket_files:
                if f.size == 0 or f.kind == "delete_delta":
                    continue
                reader = _open_file(layout.filesystem, f.path)
                if reader is None:
                    skipped.append(f"{f.path}: neither ORC nor Parquet, not checked")
                    continue
                with reader:
                    arrays, n = _bucket_columns(reader, spec.bucketed_by, spec)
                files += 1
                if args.every:
                    rows = np.arange(0, n, args.every)
                elif args.sample is not None:
                    rows = np.flatnonzero(rng.random(n) < args.sample)
                else:
                    rows = np.arange(n)
                if len(rows) < n:
                    arrays = [a.take(rows) for a in arrays]
                expected = function.bucket_ids(arrays)
                checked += len(rows)
                for i in np.flatnonzero(expected != bucket):
                    bad.append({"file": f.path, "row": int(rows[i]), "bucket": bucket, "expected_bucket": int(expected[i]),
                                "key": [a[int(i)].as_py() for a in arrays]})
    data = {"root": layout.root, "spec_source": source, "bucket_function": str(function), "files_checked": files,
            "rows_checked": checked, "misplaced_rows": len(bad), "skipped": skipped, "misplaced": bad}
    lines = [f"{layout.root}: {function}; checked {checked} rows in {files} files (spec from {source})"]
    for row in bad[:args.max_report]:
        lines.append(f"  misplaced: {row['file']} row {row['row']}: key {row['key']} is in bucket {row['bucket']}, "
                     f"belongs in bucket {row['expected_bucket']}")
    if len(bad) > args.max_report:
        lines.append(f"  ... {len(bad) - args.max_report} more misplaced rows (--json lists all)")
    lines += [f"skipped: {s}" for s in skipped]
    lines.append(f"{len(bad)} misplaced row(s)" if bad else "ok: every row is in its bucket")
    _emit(args, data, "\n".join(lines))
    return EXIT_PROBLEMS if bad else EXIT_OK


# -- plan-join ----------------------------------------------------------------------------------
def cmd_plan_join(args: argparse.Namespace) -> int:
    from bucketkit.joinplan import plan_join

    on: list[Any] = []
    for key in _split_types(args.on) or []:
        left, sep, right = key.partition("=")
        on.append((left.strip(), right.strip()) if sep else key)
    plan = plan_join(args.left, args.right, on, args.how)
    _emit(args, plan.to_dict(), plan.explain(max_groups=8))
    return EXIT_OK


def cmd_recover(args: argparse.Namespace) -> int:
    from bucketkit.commit import recover

    actions = recover(args.path, dry_run=args.dry_run)
    data = {"path": args.path, "actions": [{"write_id": a.write_id, "state": a.state, "detail": a.detail}
                                           for a in actions]}
    _emit(args, data, "\n".join(map(str, actions)) or f"{args.path}: nothing to recover")
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
