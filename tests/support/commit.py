"""Helpers for the commit tests: tables of small Parquet files committed with Transaction, and the two
kinds of reader (a plain directory reader, and bucketkit's plan + per-file read)."""

from __future__ import annotations

import os
import posixpath
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from bucketkit.writing.commit import Transaction
from bucketkit.layout.metadata import TableSpec

REPO = Path(__file__).resolve().parents[1]
SPEC = TableSpec(("k",), ("bigint",), 4, columns=(("k", "bigint"), ("tag", "string")), partitioned_by=("p",),
                 file_format="parquet")
FLAT = TableSpec(("k",), ("bigint",), 4, columns=(("k", "bigint"), ("tag", "string")), file_format="parquet")


def stage_rows(tx: Transaction, rows: dict[str, list[tuple[int, str]]]) -> dict[str, str]:
    """Write each partition's (k, tag) rows as 4 Parquet bucket files in staging; final -> staged."""
    out: dict[str, str] = {}
    for part, items in rows.items():
        for b in range(4):
            mine = [r for r in items if r[0] % 4 == b]
            if not mine:
                continue
            staged = Path(tx.staging) / f"{part.replace('=', '_')}_{b}.parquet"
            pq.write_table(pa.table({"k": [r[0] for r in mine], "tag": [r[1] for r in mine]}), staged)
            out[f"{part}/{b:06d}_0_{tx.write_id}.parquet".lstrip("/")] = str(staged)
    return out


def commit_rows(root: str | Path, rows: dict[str, list[tuple[int, str]]], *, mode: str = "append",
                replace=None, spec: TableSpec = SPEC, switch: str = "auto", write_id: str | None = None,
                layout: str = "auto"):
    tx = Transaction(str(root), spec, mode=mode, switch=switch, write_id=write_id, layout=layout)
    tx.begin()
    return tx.commit(stage_rows(tx, rows), replace=replace)


class ListingRaced(Exception):
    """A plain read found no file at all while the table directory was switched under it."""


def read_plain(root: str | Path) -> Counter:
    """A plain directory reader (what Spark/Hive/Trino do): list the directory, read every file.

    pyarrow lists a directory's names, then stats each name by path; names a switch took away
    meanwhile are dropped silently. When that drops every file, the read is empty: raised as
    :class:`ListingRaced` if the directory was switched during the read (an empty read without a
    switch is returned, and fails the caller's check)."""
    inode = os.stat(root).st_ino
    table = pads.dataset(str(root), format="parquet", partitioning="hive").to_table()
    if table.num_columns == 0 and os.stat(root).st_ino != inode:
        raise ListingRaced(str(root))
    parts = [str(v) for v in table.column("p").to_pylist()] if "p" in table.column_names else [None] * table.num_rows
    return Counter(zip(parts, table.column("k").to_pylist(), table.column("tag").to_pylist()))


def read_bucketkit(root: str | Path) -> Counter:
    """bucketkit's reader: plan_scan, then each planned read unit through the reader its tasks run (``unit_reader``)."""
    from bucketkit.pruning.plan import plan_scan

    return read_plan(plan_scan(str(root)))


def read_plan(plan) -> Counter:
    """The rows of a :class:`~bucketkit.pruning.plan.ScanPlan`'s read units, read when this is called."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from bucketkit.spark.scan import unit_reader
    from bucketkit.spark.types import arrow_schema

    table = plan.table
    fields = [StructField("k", LongType()), StructField("tag", StringType())]
    fields += [StructField("p", StringType())] if table.spec.partitioned_by else []
    schema = StructType(fields)
    out: Counter = Counter()
    read = unit_reader(table, arrow_schema(schema))
    for unit in plan.units():
        for batch in read(unit):
            cols = batch.to_pydict()
            out.update(zip(cols.get("p", [None] * batch.num_rows), cols["k"], cols["tag"]))
    return out


def listed_files(root: str | Path, *, recursive: bool = False) -> list[str]:
    """bucketkit's listing alone (no data read): the files ``discover`` maps, relative to the root;
    directory by directory as ``plan_scan`` lists, or in one recursive listing."""
    from bucketkit.layout.discovery import discover

    layout = discover(str(root), SPEC.bucket_count, partition_filter=None if recursive else (lambda values: True))
    return [posixpath.join(p.relpath, f.name) if p.relpath else f.name for p in layout.partition_layouts for f in p.files]


def as_counter(rows: dict[str, list[tuple[int, str]]]) -> Counter:
    return Counter((part.split("=", 1)[1] if part else None, k, tag) for part, items in rows.items()
                   for k, tag in items)


def version_rows(v: int, flat: bool) -> dict[str, list[tuple[int, str]]]:
    """Version v's rows: a count that differs between neighbours, keys unique to v, tag v."""
    rows = [(v * 10_000 + i, f"v{v}") for i in range(40 + 29 * (v % 5))]
    if flat:
        return {"": rows}
    return {f"p={i}": [r for r in rows if r[0] % 3 == i] for i in range(3) if any(r[0] % 3 == i for r in rows)}


def version_id(v: int) -> str:
    """Version v's write id (the shape of new_write_id), so file names tell their version."""
    return f"20260101_000000_{v:05d}_loopv"
