"""bucketkit's hashes against Hive's own code (Hive 2.3.10 classes in pyspark's jars, via py4j);
the oracle and the value strategies are in ``hive_oracle``."""

from __future__ import annotations

import datetime
import math

import pyarrow as pa
import pytest
from support.hive_oracle import EPOCH, HiveOracle, hive_types, rows, values_of
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.hashing.hive import bucket_ids, bucket_number, hash_arrays, hive_hash
from bucketkit.hivetypes import arrow_type_of_hive


@pytest.fixture(scope="module")
def oracle(spark):
    return HiveOracle(spark)


# --------------------------------------------------------------------------- v1 against Hive

@pytest.mark.parametrize("hive_type, values", [
    ("int", [0, 1, -1, 300000, 2**31 - 1, -(2**31)]),
    ("bigint", [0, -1, 5, 2**32, -(2**32) - 7, 2**63 - 1, -(2**63)]),
    ("smallint", [0, -1, 2**15 - 1, -(2**15)]),
    ("tinyint", [0, -1, 127, -128]),
    ("boolean", [True, False]),
    ("string", ["", "a", "hello world", "é", "日本語", "😀", "\x7f\x80"]),
    ("varchar(10)", ["", "a", "hello", "é😀"]),
    ("date", [EPOCH, datetime.date(1, 1, 1), datetime.date(9999, 12, 31), datetime.date(2020, 2, 29)]),
    ("float", [0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, 3.4028234663852886e38, 1e-45]),
    ("double", [0.0, -0.0, 0.1, math.inf, -math.inf, math.nan, 1.7976931348623157e308, 5e-324]),
])
def test_v1_edge_values_equal_hive(oracle, hive_type, values):
    for v in [*values, None]:
        assert hive_hash([v], [hive_type], 1) == oracle.v1([v], [hive_type]), (hive_type, v)


@settings(max_examples=150)
@given(rows())
def test_v1_equals_hive_get_bucket_hash_code(oracle, row):
    types, values = row
    assert hive_hash(values, types, 1) == oracle.v1(values, types)


@settings(max_examples=40)
@given(rows(max_columns=2), st.integers(1, 300))
def test_v1_bucket_number_equals_hive(oracle, row, n):
    types, values = row
    assert bucket_number(hive_hash(values, types, 1), n) == oracle.v1_bucket(values, types, n)


# --------------------------------------------------------------------------- v2 against Hive's Murmur3

@settings(max_examples=150)
@given(st.binary(max_size=40))
def test_murmur3_primitive_equals_hive(oracle, data):
    from bucketkit.hashing.murmur3 import hive_murmur3_32

    assert hive_murmur3_32(data) == oracle.murmur3(data)


def test_v2_reference_values(oracle):
    assert oracle.v2([300000], ["int"]) == hive_hash([300000], ["int"], 2) == -678663480
    assert oracle.v2([""], ["string"]) == hive_hash([""], ["varchar(3)"], 2) == -965378730


@settings(max_examples=150)
@given(rows())
def test_v2_equals_hive_murmur3_composition(oracle, row):
    types, values = row
    assert hive_hash(values, types, 2) == oracle.v2(values, types)


# --------------------------------------------------------------------------- vectorised path too

@settings(max_examples=40)
@given(st.data())
def test_vectorised_equals_hive(oracle, data):
    types = data.draw(st.lists(hive_types, min_size=1, max_size=2))
    n_rows = data.draw(st.integers(1, 6))
    rows_ = [[data.draw(values_of(t)) for t in types] for _ in range(n_rows)]
    arrays = [pa.array([r[i] for r in rows_], arrow_type_of_hive(t)) for i, t in enumerate(types)]
    v1 = hash_arrays(arrays, types, 1)
    v2 = hash_arrays(arrays, types, 2)
    assert list(v1) == [oracle.v1(r, types) for r in rows_]
    assert list(v2) == [oracle.v2(r, types) for r in rows_]
    assert list(bucket_ids(arrays, types, 1, 7)) == [oracle.v1_bucket(r, types, 7) for r in rows_]
