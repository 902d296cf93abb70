"""bucketkit's v1 hash against the files Spark's own Hive-bucketed writer produces, and the
Spark-side ``with_bucket_id``.

Spark's ``INSERT`` into a ``CLUSTERED BY ... INTO n BUCKETS`` Hive table places every row by
Hive's v1 hash and names each file after its bucket (``00003_0_part-...``); every row read back
from bucket file N must hash to N with bucketkit, through the scalar and the vectorised path.
"""

from __future__ import annotations

import datetime
import math
import re
from pathlib import Path

import pyarrow.orc as orc
import pytest

from bucketkit.hashing.hive import bucket_ids, bucket_number, hive_hash
from bucketkit.spark.hashcol import with_bucket_id
from support.sparkown import spark_insert

N_BUCKETS = 7
_FILE = re.compile(r"^(\d+)_\d+_part-")


def _rows(values):
    return list(values) + [None, None]


CASES = {
    "int": ("k INT", [0, 1, -1, 2**31 - 1, -(2**31), *range(-300, 300, 7)]),
    "bigint": ("k BIGINT", [0, -1, 2**63 - 1, -(2**63), 2**32, -(2**32) - 1, *range(-(10**12), 10**12, 3 * 10**10)]),
    "smallint": ("k SMALLINT", [0, -1, 2**15 - 1, -(2**15), *range(-500, 500, 13)]),
    "tinyint": ("k TINYINT", list(range(-128, 128, 5))),
    "boolean": ("k BOOLEAN", [True, False]),
    "string": ("k STRING", ["", "a", "é", "日本語", "😀x", "\x7f\x80", *(f"user-{i:07d}" for i in range(0, 10**6, 9973))]),
    # No dates before 1582: Spark's ORC writer stores them rebased to the hybrid Julian calendar,
    # so pyarrow reads back a different day number than the one Spark hashed.
    "date": ("k DATE", [datetime.date(1970, 1, 1), datetime.date(1600, 1, 1), datetime.date(9999, 12, 31),
                        *(datetime.date(1900, 1, 1) + datetime.timedelta(days=d) for d in range(0, 60000, 997))]),
    "double": ("k DOUBLE", [0.0, 1.5, -2.25, math.inf, -math.inf, math.nan, 1e300, 5e-324, *(i / 7 for i in range(-40, 40))]),
    "float": ("k FLOAT", [0.0, 1.5, -2.25, math.inf, math.nan, *(float(i) / 8 for i in range(-40, 40))]),
    "array<int>": ("k ARRAY<INT>", [[], [1, 2], [None, 3], [2**31 - 1], *([i, -i, i * i] for i in range(30))]),
}


def _write_spark_hive_table(spark, name: str, columns_ddl: str, rows: list[tuple]) -> Path:
    # Build the source from a DDL string: reading the target table first (spark.table) makes
    # Spark's later INSERT write unbucketed files (observed with Spark 4.3).
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    keys = ", ".join(c.split()[0] for c in columns_ddl.split(", ") if c.split()[0] != "rid")
    spark.sql(f"CREATE TABLE {name} ({columns_ddl}) CLUSTERED BY ({keys}) INTO {N_BUCKETS} BUCKETS STORED AS ORC")
    spark.createDataFrame(rows, columns_ddl.replace("VARCHAR(10)", "STRING")).createOrReplaceTempView(f"{name}_src")
    spark_insert(spark, f"INSERT INTO {name} SELECT * FROM {name}_src")
    location = spark.sql(f"DESCRIBE FORMATTED {name}").where("col_name = 'Location'").collect()[0].data_type
    return Path(location.removeprefix("file:"))


def _bucket_files(location: Path):
    files = [(int(_FILE.match(p.name).group(1)), p) for p in sorted(location.iterdir()) if _FILE.match(p.name)]
    assert files, f"Spark wrote no Hive-bucketed files in {location}: {sorted(p.name for p in location.iterdir())}"
    return files


def _check_files(location: Path, hive_types: list[str], n_keys: int) -> dict[int, int]:
    """Assert every row of every bucket file hashes to that file's bucket; return rid -> bucket."""
    seen = {}
    for bucket, path in _bucket_files(location):
        table = orc.read_table(str(path))
        keys = [table.column(i) for i in range(n_keys)]
        assert bucket_ids(keys, hive_types, 1, N_BUCKETS).tolist() == [bucket] * table.num_rows, path.name
        for row in zip(*(k.to_pylist() for k in keys)):
            assert bucket_number(hive_hash(list(row), hive_types, 1), N_BUCKETS) == bucket, (row, path.name)
        for rid in table.column(n_keys).to_pylist():
            seen[rid] = bucket
    return seen


@pytest.mark.parametrize("hive_type", sorted(CASES))
def test_spark_hive_writer_buckets_equal_ours(spark, hive_type):
    ddl, values = CASES[hive_type]
    rows = [(v, i) for i, v in enumerate(_rows(values))]
    name = "hashing_w_" + re.sub(r"\W", "_", hive_type)
    seen = _check_files(_write_spark_hive_table(spark, name, f"{ddl}, rid INT", rows), [hive_type], 1)
    assert sorted(seen) == list(range(len(rows)))  # every row accounted for
    # The Spark-side column agrees with the writer's placement, row by row.
    src = spark.table(f"{name}_src")
    got = {r.rid: r._bucket_id for r in with_bucket_id(src, ["k"], [hive_type], 1, N_BUCKETS).collect()}
    assert got == seen


def test_spark_hive_writer_multi_column(spark):
    rows = [(i * 37 - 500, f"s{i % 11}é", datetime.date(2000, 1, 1) + datetime.timedelta(days=i), i) for i in range(150)]
    rows.append((None, None, None, 150))
    location = _write_spark_hive_table(spark, "hashing_w_multi", "a INT, b STRING, c DATE, rid INT", rows)
    seen = _check_files(location, ["int", "string", "date"], 3)
    assert sorted(seen) == list(range(151))


def test_with_bucket_id_v2_and_derived_types(spark):
    df = spark.createDataFrame([(i - 50, f"k{i}", None if i % 9 == 0 else [i, -i]) for i in range(100)],
                               "a BIGINT, b STRING, c ARRAY<INT>")
    out = with_bucket_id(df, ["a", "b", "c"], None, 2, 16, name="bucket").collect()
    assert out[0].asDict().keys() == {"a", "b", "c", "bucket"}
    for r in out:
        expected = bucket_number(hive_hash([r.a, r.b, r.c], ["bigint", "string", "array<int>"], 2), 16)
        assert r.bucket == expected


def test_with_bucket_id_argument_errors(spark):
    from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError

    df = spark.createDataFrame([(1, datetime.datetime(2020, 1, 1))], "a INT, t TIMESTAMP")
    with pytest.raises(InvalidArgumentError, match="'zz' is not a column"):
        with_bucket_id(df, ["zz"], None, 1, 4)
    with pytest.raises(UnsupportedTypeError, match="column 't' has Hive type timestamp"):
        with_bucket_id(df, ["t"], None, 1, 4)
    with pytest.raises(InvalidArgumentError, match="already has a column named 'a'"):
        with_bucket_id(df, ["a"], ["int"], 1, 4, name="a")
