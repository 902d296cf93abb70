"""Bucket ids computed by Spark SQL expressions (``bucketkit.spark.hashexpr``) against Hive's code.

The golden values come from Hive's own classes through py4j (``ObjectInspectorUtils`` for v1,
``Murmur3.hash32`` over Java's big-endian bytes for v2; see test_hashing_hive.py), and from
Spark's files: a table Spark's Hive writer bucketed must re-bucket identically.
"""

from __future__ import annotations

import datetime
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.hashing.murmur3 import SEED
from bucketkit.spark.hashexpr import (HIVE_SEED_PREIMAGE, NATIVE_TYPES, native_bucket_id_column,
                                      spark_hash_seed_preimage)
from support.hive_oracle import PRIMITIVE_VALUES, HiveOracle
from support.sparkown import spark_insert

BUCKETS = 61  # prime: every hash bit matters

EDGES = {
    "boolean": [True, False],
    "tinyint": [0, 1, -1, 127, -128],
    "smallint": [0, 1, -1, 2**15 - 1, -(2**15), 255, 256],
    "int": [0, 1, -1, 300000, 2**31 - 1, -(2**31), 0x80, 0x8000, 0x800000, -0x81],
    "bigint": [0, 1, -1, 2**63 - 1, -(2**63), 2**32, -(2**32) - 1, 2**31, -(0x7F << 56) - 1, 123456789012345],
    "date": [datetime.date(1970, 1, 1), datetime.date(1969, 12, 31), datetime.date(2024, 2, 29),
             datetime.date(9999, 12, 31), datetime.date(1900, 1, 1)],
}


def _random_values(hive_type: str, n: int, rng: random.Random) -> list:
    if hive_type == "boolean":
        return [rng.random() < 0.5 for _ in range(n)]
    if hive_type == "date":
        return [datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-200000, 2900000)) for _ in range(n)]
    bits = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}[hive_type]
    return [rng.randint(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) for _ in range(n)]


@pytest.fixture(scope="module")
def oracle(spark):
    return HiveOracle(spark)


def _spark_buckets(spark, rows, types, version):
    schema = ", ".join(f"c{i} {t}" for i, t in enumerate(types))  # Spark's DDL names equal Hive's here
    df = spark.createDataFrame(rows, schema)
    column = native_bucket_id_column([f"c{i}" for i in range(len(types))], types, version, BUCKETS)
    assert column is not None
    return [r[0] for r in df.select(column).collect()]


def _hive_buckets(oracle, rows, types, version):
    out = []
    for row in rows:
        if version == 1:
            out.append(oracle.v1_bucket(list(row), types, BUCKETS))
        else:
            out.append((oracle.v2(list(row), types) & 0x7FFFFFFF) % BUCKETS)
    return out


def test_seed_preimage_makes_spark_hash_use_hive_seed(spark):
    assert spark_hash_seed_preimage(SEED) == HIVE_SEED_PREIMAGE
    got = spark.sql(f"SELECT hash({HIVE_SEED_PREIMAGE})").collect()[0][0]
    assert got == SEED
    other = spark_hash_seed_preimage(-123456789)
    assert spark.sql(f"SELECT hash({other})").collect()[0][0] == -123456789


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("hive_type", ["boolean", "tinyint", "smallint", "int", "bigint", "date"])
def test_one_column_equals_hive(spark, oracle, hive_type, version):
    if hive_type not in NATIVE_TYPES[version]:
        assert native_bucket_id_column(["c0"], [hive_type], version, BUCKETS) is None
        return
    rng = random.Random(f"{hive_type}-{version}")
    values = EDGES[hive_type] + _random_values(hive_type, 150, rng) + [None]
    rows = [(v,) for v in values]
    assert _spark_buckets(spark, rows, [hive_type], version) == _hive_buckets(oracle, rows, [hive_type], version)


@st.composite
def _tables(draw, version):
    types = draw(st.lists(st.sampled_from(sorted(NATIVE_TYPES[version])), min_size=1, max_size=3))
    rows = draw(st.lists(st.tuples(*[st.none() | PRIMITIVE_VALUES[t] for t in types]), min_size=1, max_size=25))
    return types, rows


@pytest.mark.parametrize("version", [1, 2])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_several_columns_equal_hive(spark, oracle, version, data):
    types, rows = data.draw(_tables(version))
    assert _spark_buckets(spark, rows, types, version) == _hive_buckets(oracle, rows, types, version)


def test_uncovered_types_fall_back():
    assert native_bucket_id_column(["a"], ["string"], 1, 4) is None
    assert native_bucket_id_column(["a", "b"], ["int", "double"], 2, 4) is None
    assert native_bucket_id_column(["a"], ["varchar(3)"], 2, 4) is None
    assert native_bucket_id_column(["a"], ["smallint"], 2, 4) is None
    assert native_bucket_id_column(["a"], ["int"], 3, 4) is None


def test_spark_hive_writer_files_rebucket_identically(spark, tmp_path):
    """Rows Spark's own Hive writer put in bucket file N get bucket id N from the expression."""
    from pyspark.sql import functions as F

    spark.sql("DROP TABLE IF EXISTS hashexpr_t")
    spark.sql(f"CREATE TABLE hashexpr_t (a int, b bigint, d date) CLUSTERED BY (a, b, d) INTO {BUCKETS} BUCKETS "
              f"STORED AS ORC LOCATION '{tmp_path.as_uri()}'")
    rng = random.Random(5)
    rows = [(rng.randint(-(2**31), 2**31 - 1), rng.randint(-(2**63), 2**63 - 1),
             datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-100000, 100000))) for _ in range(2000)]
    rows += [(None, None, None), (1, None, None), (None, -1, datetime.date(2000, 1, 1))]
    spark.createDataFrame(rows, "a int, b bigint, d date").createOrReplaceTempView("hashexpr_src")
    spark_insert(spark, "INSERT INTO hashexpr_t SELECT * FROM hashexpr_src")
    df = spark.read.orc(str(tmp_path)).withColumn("file", F.input_file_name())
    bucket = native_bucket_id_column(["a", "b", "d"], ["int", "bigint", "date"], 1, BUCKETS)
    got = df.select(F.regexp_extract(F.element_at(F.split("file", "/"), -1), r"^(\d+)_", 1).cast("int").alias("f"),
                    bucket.alias("ours")).collect()
    assert len(got) == len(rows)
    assert all(r.f == r.ours for r in got), [r for r in got if r.f != r.ours][:5]


@pytest.mark.parametrize("ansi", ["false", "true"])
def test_same_buckets_with_and_without_ansi_mode(spark, oracle, ansi):
    """Overflowing int arithmetic is an error under ANSI mode and wraps without it: neither may matter."""
    rows = [(v, w) for v, w in zip(EDGES["int"], reversed(EDGES["bigint"]))]
    previous = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        for version in (1, 2):
            got = _spark_buckets(spark, rows, ["int", "bigint"], version)
            assert got == _hive_buckets(oracle, rows, ["int", "bigint"], version)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", previous)
