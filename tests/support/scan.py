"""Test tables for the scan and data source tests, written without bucketkit.write.

``write_arrow_table`` places rows the way Hive does (bucket ids from bucketkit.hashing.hive, whose hash
is checked against Hive's own classes in the hashing tests; names from bucketkit.layout.naming), one ORC
file per bucket, zero-byte files for empty buckets as Hive writes them, and optionally Hive's
``_col0.._colN`` column names. ``write_spark_hive_table`` uses Spark's own Hive writer (bucketing v1).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.orc as orc
import pytest
from hypothesis import strategies as st

from bucketkit.hivetypes import arrow_type_of_hive
from bucketkit.layout.metadata import TableSpec, write_spec
from bucketkit.layout.naming import HIVE
from bucketkit.layout.partitions import partition_path
from support.sparkown import spark_insert


def write_arrow_table(root: str, spec: TableSpec, rows: Sequence[dict[str, Any]], *, hive_names: bool = False,
                      empty_files: bool = True, metadata: bool = True) -> str:
    """Write ``rows`` (dicts over data + partition columns) as a Hive-bucketed ORC table at ``root``."""
    os.makedirs(root, exist_ok=True)
    fn = spec.bucket_function()
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[c] for c in spec.partitioned_by), []).append(row)
    if not spec.partitioned_by:
        groups.setdefault((), [])
    schema = pa.schema([(f"_col{i}" if hive_names else n, arrow_type_of_hive(t)) for i, (n, t) in enumerate(spec.columns)])
    for values, group in groups.items():
        directory = os.path.join(root, partition_path(dict(zip(spec.partitioned_by, [None if v is None else str(v) for v in values])))) if values else root
        os.makedirs(directory, exist_ok=True)
        data = pa.table([pa.array([r[n] for r in group], arrow_type_of_hive(t)) for n, t in spec.columns], schema=schema)
        names = [n for n, _ in spec.columns]
        keys = [data.column(names.index(c)) for c in spec.bucketed_by]
        ids = fn.bucket_ids(keys) if len(data) else []
        for b in range(spec.bucket_count):
            part = data.filter(pa.array([int(i) == b for i in ids], pa.bool_())) if len(data) else data
            path = os.path.join(directory, HIVE.format(b))
            if len(part) == 0:
                if empty_files:
                    open(path, "wb").close()
                continue
            orc.write_table(part, path)
    if metadata:
        write_spec(root, spec)
    return root


def write_spark_hive_table(spark: Any, name: str, spec: TableSpec, rows: Sequence[dict[str, Any]]) -> str:
    """CREATE TABLE ... CLUSTERED BY ... STORED AS ORC + INSERT with Spark's Hive writer; returns the location."""
    cols = ", ".join(f"`{n}` {t}" for n, t in spec.columns)
    parts = ", ".join(f"`{n}` {t}" for n, t in zip(spec.partitioned_by, spec.partition_types))
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} ({cols}) {f'PARTITIONED BY ({parts})' if parts else ''} "
              f"CLUSTERED BY ({', '.join(spec.bucketed_by)}) INTO {spec.bucket_count} BUCKETS STORED AS ORC")
    names = [n for n, _ in spec.columns] + list(spec.partitioned_by)
    from pyspark.sql.types import _parse_datatype_string

    schema = _parse_datatype_string(", ".join(f"`{n}` {t}" for n, t in list(spec.columns) +
                                              list(zip(spec.partitioned_by, spec.partition_types))))
    df = spark.createDataFrame([tuple(r[n] for n in names) for r in rows], schema)
    df.createOrReplaceTempView(f"{name}_src")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    partition = f"PARTITION ({', '.join(spec.partitioned_by)})" if spec.partitioned_by else ""
    spark_insert(spark, f"INSERT INTO {name} {partition} SELECT {', '.join(f'`{n}`' for n in names)} FROM {name}_src")
    location = spark.sql(f"DESCRIBE FORMATTED {name}").where("col_name = 'Location'").collect()[0].data_type
    return location.replace("file:", "", 1) if location.startswith("file:") else location


KEYS = [None, -7, 0, 1, 2, 3, 42, 300000, 2 ** 33]


STRS = [None, "", "a", "b", "\u00e9t\u00e9", "zz"]


def rows_for(n: int = 60, partitioned: bool = True) -> list[dict]:
    rows = []
    for i in range(n):
        row = {"k": KEYS[i % len(KEYS)], "s": STRS[(i * 7) % len(STRS)], "x": (i % 5) * 0.5 if i % 11 else None}
        if partitioned:
            row["p"] = [1, 2, None][i % 3]
        rows.append(row)
    return rows


SPEC = TableSpec.create(["k"], 8, columns={"k": "bigint", "s": "string", "x": "double"},
                        partitioned_by=("p",), partition_types=("int",), bucketing_version=1)


@pytest.fixture(scope="module")
def hive_table(spark):
    """A partitioned table written by Spark's own Hive writer (bucketing v1)."""
    location = write_spark_hive_table(spark, "scan_hive_t", SPEC, rows_for())
    return "scan_hive_t", location


def sorted_rows(df):
    return sorted((tuple(r) for r in df.collect()), key=repr)


def full_read(spark, root, spec):
    ddl = ", ".join(f"`{n}` {t}" for n, t in list(spec.columns) + list(zip(spec.partitioned_by, spec.partition_types)))
    reader = spark.read.format("orc").schema(ddl)
    if spec.partitioned_by:
        reader = reader.option("basePath", root)
    return reader.load(root)


COLUMN_VALUES = {"k": KEYS + [5, 3.5], "s": STRS, "x": [None, 0.0, 0.5, 1.0, 1.5], "p": [None, 1, 2, 3]}


def sql_literal(v):
    return "NULL" if v is None else f"'{v}'" if isinstance(v, str) else repr(v)


@st.composite
def filters(draw, columns):
    def term():
        c = draw(st.sampled_from(columns))
        op = draw(st.sampled_from(["=", "in", "is null", "is not null", "<", ">=", "!="]))
        if op in ("is null", "is not null"):
            return (c, op, None), f"{c} {op.upper()}"
        if op == "in":
            vs = draw(st.lists(st.sampled_from(COLUMN_VALUES[c]), min_size=1, max_size=4))
            return (c, "in", vs), f"{c} IN ({', '.join(sql_literal(v) for v in vs)})"
        v = draw(st.sampled_from([x for x in COLUMN_VALUES[c] if x is not None]))
        return (c, op, v), f"{c} {op} {sql_literal(v)}"

    conjs = [[term() for _ in range(draw(st.integers(1, 3)))] for _ in range(draw(st.integers(1, 2)))]
    dnf = [[t for t, _ in conj] for conj in conjs]
    sql = " OR ".join("(" + " AND ".join(s for _, s in conj) + ")" for conj in conjs)
    return dnf, sql
