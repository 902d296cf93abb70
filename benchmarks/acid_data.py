"""The ACID benchmark's data: a bucketed full-ACID table in Hive 3's layout, and the same surviving
rows as a plain ORC table.

N rows (default 10M) of ``key bigint`` (splitmix64 of the row number: unique, spread over the whole
range), ``s string``, ``d double``, routed to 64 buckets by Hive's v2 hash of ``key``
(:mod:`bucketkit.hashing.hive`, as Hive 3's ``INSERT`` into a bucketed table routes them). The table
holds what Hive 3 leaves after one ``INSERT`` and three ``DELETE`` statements:

* ``delta_0000001_0000001_0000/bucket_NNNNN``: each bucket's rows as insert events of write id 1,
  the ACID columns (``operation`` 0, ``originalTransaction`` 1, ``bucket`` = BucketCodec V1 of the
  bucket, ``rowId`` 0.., ``currentTransaction`` 1) and the ``row`` struct;
* ``delete_delta_000000W_000000W_0000/bucket_NNNNN`` for W = 2, 3, 4: delete events (``operation``
  2, the deleted row's identity, ``currentTransaction`` W, ``row`` NULL) of a third of a random
  10% of the rows each, every event in the file of the deleted row's bucket, sorted by identity;
* ``_orc_acid_version`` (``2``) in every directory.

Files are written with pyarrow's ORC writer (ZLIB, Hive's default codec), which cannot set ORC
user metadata, so ``hive.acid.version`` comes from ``_orc_acid_version`` (as Hive itself accepts).
Measured on 1M rows in one file: pyarrow 0.81 s; pyorc's ``writerows`` 0.90 s plus 0.83 s to build
its row tuples (after ``to_pylist``), so over twice as long; the 10M-row table builds in about 21 s.

The plain table (``plain/0000NN_0``, one ORC file per bucket, Hive's names) holds the surviving
rows, computed here from the row numbers deleted: the reference the benchmark checks against.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

from bucketkit.acid.naming import encode_bucket_property
from bucketkit.hashing.hive import bucket_ids

BUCKETS = 64
DELETE_WRITES = (2, 3, 4)
DELETED_SHARE = 0.10
INSERT, DELETE = 0, 2
ROW_TYPE = pa.struct([("key", pa.int64()), ("s", pa.string()), ("d", pa.float64())])
COLUMNS = {"key": "bigint", "s": "string", "d": "double"}


def splitmix64(ids: np.ndarray) -> np.ndarray:
    """A bijective 64-bit mix of the row numbers, as int64 (unique keys, no order to exploit)."""
    with np.errstate(over="ignore"):
        z = ids.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return (z ^ (z >> np.uint64(31))).view(np.int64)


def rows(n: int) -> pa.Table:
    """The table's rows in row-number order."""
    ids = np.arange(n, dtype=np.int64)
    s = pc.binary_join_element_wise("name-", pc.cast(pa.array(ids), pa.string()), "")
    d = np.random.default_rng(7).random(n) * 1000
    return pa.table({"key": splitmix64(ids), "s": s, "d": d})


def _acid_file(path: Path, op: int, write_id: int, bucket: int, row_ids: np.ndarray, current: int,
               row: pa.StructArray) -> None:
    n = len(row_ids)
    table = pa.table({
        "operation": pa.array(np.full(n, op, np.int32)),
        "originalTransaction": pa.array(np.full(n, write_id, np.int64)),
        "bucket": pa.array(np.full(n, encode_bucket_property(bucket), np.int32)),
        "rowId": pa.array(row_ids.astype(np.int64)),
        "currentTransaction": pa.array(np.full(n, current, np.int64)),
        "row": row,
    })
    po.write_table(table, str(path), compression="zlib")


def _acid_dir(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "_orc_acid_version").write_text("2")
    return path


def build(root: Path, n: int, seed: int = 11) -> dict:
    """Write the ACID and the plain table under ``root`` (replacing them); returns the facts the
    benchmark checks: row counts, deleted rows, one surviving key and its bucket."""
    if root.exists():
        shutil.rmtree(root)
    data = rows(n)
    buckets = bucket_ids([data["key"]], ["bigint"], 2, BUCKETS)
    order = np.argsort(buckets, kind="stable")
    starts = np.searchsorted(buckets[order], np.arange(BUCKETS + 1))
    rng = np.random.default_rng(seed)
    deleted = rng.random(n) < DELETED_SHARE
    which = rng.integers(0, len(DELETE_WRITES), n)  # the delete statement that removes a deleted row
    delta = _acid_dir(root / "acid" / "delta_0000001_0000001_0000")
    deletes = {w: _acid_dir(root / "acid" / f"delete_delta_{w:07d}_{w:07d}_0000") for w in DELETE_WRITES}
    plain = root / "plain"
    plain.mkdir(parents=True)
    for b in range(BUCKETS):
        mine = order[starts[b]:starts[b + 1]]  # row numbers of bucket b, in insert order
        part = data.take(mine)
        row = pa.StructArray.from_arrays([c.combine_chunks() for c in part.columns], fields=list(ROW_TYPE))
        _acid_file(delta / f"bucket_{b:05d}", INSERT, 1, b, np.arange(len(mine)), 1, row)
        for i, w in enumerate(DELETE_WRITES):
            hit = np.flatnonzero(deleted[mine] & (which[mine] == i))  # positions = row ids in the bucket
            if len(hit):
                nulls = pa.array([None] * len(hit), ROW_TYPE)
                _acid_file(deletes[w] / f"bucket_{b:05d}", DELETE, 1, b, hit, w, nulls)
        po.write_table(part.filter(pa.array(~deleted[mine])), str(plain / f"{b:06d}_0"), compression="zlib")
    alive = np.flatnonzero(~deleted)
    probe = int(alive[len(alive) // 2])
    return {"rows": n, "surviving": int(len(alive)), "deleted": int(deleted.sum()),
            "probe_key": int(data["key"][probe].as_py()), "probe_bucket": int(buckets[probe])}


def prepare(root: Path, n: int) -> dict:
    """The tables under ``root`` for ``n`` rows, written once (a marker records the facts)."""
    marker = root / "READY.json"
    if marker.exists():
        facts = json.loads(marker.read_text())
        if facts.get("rows") == n:
            return facts
    facts = build(root, n)
    marker.write_text(json.dumps(facts))
    return facts
