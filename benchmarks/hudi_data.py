"""Hudi bucket-index tables laid out as Hudi's writer lays them out, for benchmarks and tests.

No Hudi writer runs here, so a table is built from a real Hudi table written by Spark + Hudi (the template:
its ``.hoodie/`` timeline and its base file's schema are kept): its rows are replaced by generated ones, one
per key, each in the file group of its bucket (``bucket_of(key)``: the tests compute it with Java's own
``List.hashCode`` through the JVM, the benchmarks with bucketkit's), in files named as Hudi's bucket index names
them (``00000005-<uuid>-0_<token>_<instant>.parquet``, the instant of the template's latest commit).
"""

from __future__ import annotations

import glob
import os
import shutil
import uuid
import zipfile
from typing import Callable, Sequence

__all__ = ["unzip", "bucket_index_table"]


def unzip(hudi_files: str, rel: str, into: str) -> str:
    """Unzip hudi-rs's test table ``<hudi_files>/<rel>.zip`` into a directory of its own under ``into`` (once)
    and return the table's base path (each zip holds one folder, named as the zip)."""
    target = os.path.join(into, rel.replace("/", "_"))
    if not os.path.isdir(target):
        with zipfile.ZipFile(os.path.join(hudi_files, rel + ".zip")) as z:
            z.extractall(target)
    return os.path.join(target, os.path.basename(rel))


def bucket_index_table(template: str, target: str, ids: Sequence[int], bucket_of: Callable[[int], int]) -> str:
    """A copy-on-write bucket-index table at ``target`` holding one row per id (``name`` = ``n<id>``; the other
    columns repeat the template's rows), keyed by the template's record key ``id``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if os.path.exists(target):
        shutil.rmtree(target)
    shutil.copytree(template, target)
    originals = sorted(glob.glob(os.path.join(target, "*.parquet")))
    sample = pq.read_table(originals[-1])
    instant = os.path.basename(originals[-1]).rsplit("_", 1)[-1].split(".")[0]
    for f in originals:
        os.remove(f)
    groups: dict[int, list[int]] = {}
    for k in ids:
        groups.setdefault(bucket_of(k), []).append(k)
    for b, keys in sorted(groups.items()):
        m = len(keys)
        file_id = f"{b:08d}{str(uuid.uuid4())[8:]}-0"
        name = f"{file_id}_0-1-1_{instant}.parquet"
        rows = sample.take(pa.array([i % sample.num_rows for i in range(m)]))
        replace = {"_hoodie_commit_time": [instant] * m, "_hoodie_commit_seqno": [f"{instant}_{b}_{i}" for i in range(m)],
                   "_hoodie_record_key": [str(k) for k in keys], "_hoodie_file_name": [name] * m, "id": keys,
                   "name": [f"n{k}" for k in keys]}
        for col, values in replace.items():
            i = rows.schema.get_field_index(col)
            rows = rows.set_column(i, rows.schema.field(i), pa.array(values).cast(rows.schema.field(i).type))
        pq.write_table(rows, os.path.join(target, name))
    return target
