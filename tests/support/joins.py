"""Test helpers of the join tests: bucketed tables written with pyarrow, and a reference join.

The tables are placed by bucketkit.hashing.hive (itself tested against Hive's classes) and named with
bucketkit.layout.naming's Hive scheme; Spark-backed tests also use tables written by Spark's own Hive writer.
The reference join is a plain nested-loop SQL join, independent of the kernel under test.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

from bucketkit.hashing.hive import bucket_ids
from bucketkit.hivetypes import arrow_type_of_hive
from bucketkit.joins.plan import ReadUnit
from bucketkit.layout.metadata import TableSpec, write_spec
from bucketkit.layout.naming import HIVE
from bucketkit.layout.partitions import partition_path
from bucketkit.table import BucketedTable, open_table


def write_table(path: str, rows: dict[str, list], columns: dict[str, str], bucketed_by: Sequence[str],
                bucket_count: int, *, version: int = 2, sorted_by: Sequence[str] = (),
                partitioned_by: Sequence[str] = (), partition_types: Sequence[str] = (),
                file_format: str = "orc", files_per_bucket: int = 1, empty_files: bool = True
                ) -> tuple[BucketedTable, dict[int, list[ReadUnit]]]:
    """Write ``rows`` as a Hive-bucketed table (one directory per partition) with bucketkit metadata.

    Returns the table and, independently of bucketkit.layout.discovery, the files written for each bucket.
    """
    data_cols = {c: t for c, t in columns.items() if c not in partitioned_by}
    ptypes = dict(zip(partitioned_by, partition_types or ["string"] * len(partitioned_by)))
    full = pa.table({c: pa.array(rows[c], arrow_type_of_hive(t)) for c, t in {**data_cols, **ptypes}.items()})
    spec = TableSpec.create(tuple(bucketed_by), bucket_count, columns=data_cols, bucketing_version=version,
                            sorted_by=tuple(sorted_by), partitioned_by=tuple(partitioned_by),
                            partition_types=tuple(ptypes.values()), file_format=file_format)
    os.makedirs(path, exist_ok=True)
    write_spec(path, spec)
    written: dict[int, list[ReadUnit]] = {b: [] for b in range(bucket_count)}
    groups: dict[tuple, list[int]] = {}
    for i in range(full.num_rows):
        key = tuple(full.column(p)[i].as_py() for p in partitioned_by)
        groups.setdefault(key, []).append(i)
    if not partitioned_by and not groups:
        groups[()] = []
    for key, idx in groups.items():
        part = full.take(pa.array(idx, pa.int64())).select(list(data_cols))
        pdir = os.path.join(path, partition_path({p: None if v is None else str(v)
                                                  for p, v in zip(partitioned_by, key)})) if key else path
        os.makedirs(pdir, exist_ok=True)
        ids = bucket_ids([part.column(c) for c in bucketed_by], spec.bucket_types, version, bucket_count) \
            if part.num_rows else np.zeros(0, np.int32)
        for b in range(bucket_count):
            chunk = part.filter(pa.array(ids == b)) if part.num_rows else part
            if sorted_by:
                chunk = chunk.sort_by([(c, "ascending", "at_start") for c in sorted_by])
            pieces = np.array_split(np.arange(chunk.num_rows), files_per_bucket)
            for copy, piece in enumerate(pieces):
                name = HIVE.format(b, copy=copy or None) + (".parquet" if file_format == "parquet" else "")
                target = os.path.join(pdir, name)
                sub = chunk.take(pa.array(piece, pa.int64()))
                if sub.num_rows == 0 and empty_files and file_format == "orc":
                    open(target, "wb").close()  # Hive's empty bucket: a zero-byte ORC file
                elif sub.num_rows or empty_files:
                    (orc.write_table(sub, target, stripe_size=64 * 1024) if file_format == "orc"
                     else pq.write_table(sub, target, row_group_size=50))
                else:
                    continue
                pvals = tuple((p, None if v is None else str(v)) for p, v in zip(partitioned_by, key))
                pvals = tuple((p, "__HIVE_DEFAULT_PARTITION__" if v is None else v) for p, v in pvals)
                written[b].append(ReadUnit(os.path.abspath(target), os.path.getsize(target), b, pvals))
    return open_table(path), written


def _eq(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a == b


def reference_join(left: list[dict], right: list[dict], lkeys: Sequence[str], rkeys: Sequence[str], how: str
                   ) -> list[tuple]:
    """Nested-loop SQL join; rows as (left row dict or None, right row dict or None)."""
    out, matched_r = [], set()
    for lrow in left:
        hits = [j for j, rrow in enumerate(right) if all(_eq(lrow[a], rrow[b]) for a, b in zip(lkeys, rkeys))]
        if how == "left_semi":
            if hits:
                out.append((lrow, None))
            continue
        if how == "left_anti":
            if not hits:
                out.append((lrow, None))
            continue
        for j in hits:
            out.append((lrow, right[j]))
            matched_r.add(j)
        if not hits and how in ("left", "full"):
            out.append((lrow, None))
    if how in ("right", "full"):
        out += [(None, rrow) for j, rrow in enumerate(right) if j not in matched_r]
    return out


def shape(pairs: list[tuple], output: Sequence[tuple[str, str]], key_pairs: dict[str, str]) -> list[tuple]:
    """Rows of the reference join projected like JoinExec.output (source, column)."""
    rows = []
    for lrow, rrow in pairs:
        row = []
        for source, col in output:
            if source == "left":
                row.append(lrow[col] if lrow else None)
            elif source == "right":
                row.append(rrow[col] if rrow else None)
            else:
                row.append(lrow[col] if lrow else rrow[key_pairs[col]])
        rows.append(tuple(row))
    return rows


def sort_key(row: tuple) -> tuple:
    return tuple((v is None, str(type(v)), v if v is not None else 0) for v in row)


COLUMNS = {"k": "bigint", "s": "string", "v": "double"}


SPARK_SCHEMA = "k bigint, s string, v double"


def rows_of(keys, tag):
    return {"k": keys, "s": [f"{tag}{i}" for i in range(len(keys))], "v": [float(i) for i in range(len(keys))]}


def as_df(spark, rows):
    return spark.createDataFrame(list(zip(*rows.values())) if rows["k"] else [], SPARK_SCHEMA)


def collected(df):
    return sorted((tuple(r) for r in df.collect()), key=sort_key)


def assert_same(ours, theirs):
    assert ours.columns == theirs.columns
    assert [f.dataType for f in ours.schema] == [f.dataType for f in theirs.schema]
    assert collected(ours) == collected(theirs)
