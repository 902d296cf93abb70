"""The vectorised path (Arrow arrays, numba kernels) agrees with the scalar path on every value.

Pure Python, no JVM: both paths are proven against Hive in test_hashing_hive.py, so agreement here
extends that proof to layouts the oracle test does not build (slices, chunks, dictionaries, large
types, long strings).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.hive_oracle import hive_types, values_of

from bucketkit import BucketFunction
from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hashing.hive import bucket_ids, bucket_number, bucket_numbers, hash_arrays, hive_hash
from bucketkit.hivetypes import arrow_type_of_hive


@st.composite
def tables(draw, max_rows=12):
    types = draw(st.lists(hive_types, min_size=1, max_size=3))
    n = draw(st.integers(0, max_rows))
    rows = [[draw(values_of(t)) for t in types] for _ in range(n)]
    return types, rows


def _scalar(rows, types, version):
    return [hive_hash(r, types, version) for r in rows]


@settings(max_examples=300)
@given(tables(), st.sampled_from([1, 2]))
def test_vectorised_equals_scalar(table, version):
    types, rows = table
    arrays = [pa.array([r[i] for r in rows], arrow_type_of_hive(t)) for i, t in enumerate(types)]
    assert hash_arrays(arrays, types, version).tolist() == _scalar(rows, types, version)


@settings(max_examples=150)
@given(tables(max_rows=20), st.sampled_from([1, 2]), st.data())
def test_slices_and_chunks(table, version, data):
    types, rows = table
    arrays = [pa.array([r[i] for r in rows], arrow_type_of_hive(t)) for i, t in enumerate(types)]
    start = data.draw(st.integers(0, len(rows)))
    stop = data.draw(st.integers(start, len(rows)))
    sliced = [a.slice(start, stop - start) for a in arrays]
    assert hash_arrays(sliced, types, version).tolist() == _scalar(rows[start:stop], types, version)
    chunked = [pa.chunked_array([a.slice(0, start), a.slice(start)], a.type) for a in arrays]
    expected = _scalar(rows, types, version)
    assert hash_arrays(chunked, types, version).tolist() == expected
    n = data.draw(st.integers(1, 64))
    assert bucket_ids(chunked, types, version, n).tolist() == [bucket_number(h, n) for h in expected]


@settings(max_examples=100)
@given(st.lists(st.none() | st.text(max_size=30), max_size=30), st.sampled_from(["string", "varchar(30)"]),
       st.sampled_from([1, 2]))
def test_dictionary_and_large_strings(values, hive_type, version):
    expected = _scalar([[v] for v in values], [hive_type], version)
    for arr in (pa.array(values, pa.large_string()), pa.array(values, pa.string()).dictionary_encode()):
        assert hash_arrays([arr], [hive_type], version).tolist() == expected


def test_long_strings_and_all_tail_bytes():
    values = ["x" * n for n in range(70)] + [bytes([b] * 3).decode("latin-1") for b in range(256)]
    for version in (1, 2):
        for t in ("string", "varchar(300)"):
            assert hash_arrays([pa.array(values)], [t], version).tolist() == _scalar([[v] for v in values], [t], version)


def test_extremes_of_every_width():
    for t, dtype in (("tinyint", np.int8), ("smallint", np.int16), ("int", np.int32), ("bigint", np.int64)):
        info = np.iinfo(dtype)
        values = [int(info.min), -1, 0, 1, int(info.max), int(info.min) + 1, int(info.max) - 1]
        for version in (1, 2):
            assert hash_arrays(pa.array(values, pa.from_numpy_dtype(dtype)), t, version).tolist() == \
                _scalar([[v] for v in values], [t], version)


def test_accepts_tables_and_exact_casts():
    table = pa.table({"a": pa.array([1, 2, None], pa.int64()), "b": ["x", "y", "z"]})
    # int64 values that fit are accepted for an int column (cast exactly), overflow is not.
    expected = _scalar([[1, "x"], [2, "y"], [None, "z"]], ["int", "string"], 2)
    assert hash_arrays(table, ["int", "string"], 2).tolist() == expected
    with pytest.raises(UnsupportedTypeError, match="as Hive int"):
        hash_arrays([pa.array([2**40])], ["int"], 2)
    with pytest.raises(UnsupportedTypeError, match="as Hive int"):
        hash_arrays([pa.array(["1"])], ["int"], 2)
    with pytest.raises(InvalidArgumentError, match="differ in length"):
        hash_arrays([pa.array([1]), pa.array([1, 2])], ["int", "int"], 1)
    with pytest.raises(InvalidArgumentError, match="2 arrays for 1"):
        hash_arrays([pa.array([1]), pa.array([1])], ["int"], 1)


def test_bucket_function_vector_path_and_bucket_numbers():
    f = BucketFunction(1, ["bigint"], 13)
    arr = pa.array(range(-50, 50), pa.int64())
    assert f.bucket_ids([arr]).tolist() == [f.bucket_of([v]) for v in range(-50, 50)]
    hashes = hash_arrays([arr], ["bigint"], 1)
    assert bucket_numbers(hashes, 13).tolist() == f.bucket_ids([arr]).tolist()


@settings(max_examples=300)
@given(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=50),
       st.integers(1, 2**31 - 1) | st.sampled_from([1, 2, 3, 46341, 65536, 2**31 - 2, 2**31 - 1]))
def test_vector_bucket_numbers_equal_scalar(hashes, n):
    # The kernel divides by multiplying with 1/n and corrects; compare with the exact scalar rule.
    extremes = [0, -1, 2**31 - 1, -(2**31), n - 1, n, n + 1, -n, 2 * n - 1]
    values = np.array([v for v in hashes + extremes if -(2**31) <= v < 2**31], dtype=np.int32)
    assert bucket_numbers(values, n).tolist() == [bucket_number(int(v), n) for v in values]
