"""The numpy twins of the numba hash kernels (bucketkit.hashing.npkernels), used where numba's LLVM does not load
(a Python worker under spark.executor.pyspark.memory): each twin equals its numba kernel on raw arrays, and with
the twins in use the Hive and Spark hashes of Arrow columns equal the scalar path (held to Hive's and Spark's own
classes in test_hashing_hive.py and test_sparkhash.py). Pure Python, no JVM."""

from __future__ import annotations

import contextlib
import datetime
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.hive_oracle import hive_types, values_of

from bucketkit.hashing import kernels as numba_kernels
from bucketkit.hashing import npkernels
from bucketkit.hashing.hive import bucket_ids, bucket_number, bucket_numbers, hash_arrays, hive_hash
from bucketkit.hashing.spark import spark_hash, spark_hash_arrays
from bucketkit.hivetypes import arrow_type_of_hive


@contextlib.contextmanager
def _numpy_kernels():
    """The vectorised hashes run on the numpy twins within the block (as where numba cannot load)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(npkernels, "chosen", lambda: npkernels)
        yield


def _ints(bits):
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return st.lists(st.integers(low, high) | st.sampled_from([low, high, 0, -1, 1]), max_size=40)


def _both(name, *args):
    """(numba's result, the numpy twin's), the twin run whole and in passes of 3 values (its CHUNK)."""
    theirs = getattr(numba_kernels, name)(*args).tolist()
    ours = getattr(npkernels, name)(*args).tolist()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(npkernels, "CHUNK", 3)
        assert getattr(npkernels, name)(*args).tolist() == ours, f"{name} in passes of 3 values"
    return ours, theirs


@settings(max_examples=100)
@given(_ints(16), _ints(32), _ints(64))
def test_fixed_width_murmur3_equals_numbas(v16, v32, v64):
    for name, values, dtype in (("murmur3_int16_be", v16, np.int16), ("murmur3_int32_be", v32, np.int32),
                                ("murmur3_int64_be", v64, np.int64)):
        ours, theirs = _both(name, np.array(values, dtype))
        assert ours == theirs, name


@st.composite
def byte_strings(draw):
    """Strings of every tail length and byte value (sign extension), and a window of them (a sliced array's
    offsets do not start at 0)."""
    strings = draw(st.lists(st.binary(max_size=23), min_size=1, max_size=30))
    offsets = np.zeros(len(strings) + 1, np.int32)
    offsets[1:] = np.cumsum([len(s) for s in strings])
    data = np.frombuffer(b"".join(strings), np.uint8) if offsets[-1] else np.zeros(0, np.uint8)
    start = draw(st.integers(0, len(strings)))
    stop = draw(st.integers(start, len(strings)))
    return offsets[start:stop + 1], data


@settings(max_examples=150)
@given(byte_strings(), st.lists(st.integers(0, (1 << 32) - 1), min_size=31, max_size=31))
def test_byte_string_kernels_equal_numbas(strings, seeds):
    offsets, data = strings
    row_seeds = np.array(seeds[:len(offsets) - 1], np.int64)
    ours, theirs = _both("murmur3_bytes", offsets, data)
    assert ours == theirs
    for initial in (0, 1):  # v1 strings (0) and varchar (1): Java's hash over signed bytes
        ours, theirs = _both("java_list_hash", offsets, data.view(np.int8), initial)
        assert ours == theirs, initial
    ours, theirs = _both("spark_murmur3_bytes", offsets, data, row_seeds)
    assert ours == theirs


@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(-(1 << 31), (1 << 31) - 1), st.integers(-(1 << 31), (1 << 31) - 1)),
                max_size=40), st.data())
def test_list_map_and_combine_kernels_equal_numbas(pairs, data):
    keys = np.array([k for k, _ in pairs], np.int32)
    values = np.array([v for _, v in pairs], np.int32)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(pairs)), min_size=1, max_size=8)))
    offsets = np.array(cuts, np.int64)
    for name, args in (("java_list_hash", (offsets, values, 0)), ("map_hash", (offsets, keys, values))):
        ours, theirs = _both(name, *args)
        assert ours == theirs, name
    for count in (0, 1, 7, 64, data.draw(st.integers(1, (1 << 31) - 1))):
        for first in (True, False):
            ours, theirs = _both("combine_bucket", keys, values, count, first)
            assert ours == theirs, (count, first)


@settings(max_examples=100)
@given(_ints(64), st.data())
def test_spark_long_kernel_equals_numbas(values, data):
    seeds = np.array(data.draw(st.lists(st.integers(0, (1 << 32) - 1), min_size=len(values), max_size=len(values))),
                     np.int64)
    for is_long in (True, False):
        ours, theirs = _both("spark_murmur3_long", np.array(values, np.int64), seeds, is_long)
        assert ours == theirs, is_long


@st.composite
def tables(draw):
    types = draw(st.lists(hive_types, min_size=1, max_size=3))
    rows = [[draw(values_of(t)) for t in types] for _ in range(draw(st.integers(0, 12)))]
    return types, rows


@settings(max_examples=200)
@given(tables(), st.sampled_from([1, 2]), st.integers(1, 100))
def test_hive_hashes_of_columns_on_the_numpy_kernels_equal_the_scalar_path(table, version, count):
    types, rows = table
    arrays = [pa.array([r[i] for r in rows], arrow_type_of_hive(t)) for i, t in enumerate(types)]
    scalar = [hive_hash(r, types, version) for r in rows]
    buckets = [bucket_number(h, count) for h in scalar]
    with _numpy_kernels():
        assert hash_arrays(arrays, types, version).tolist() == scalar
        assert bucket_ids(arrays, types, version, count).tolist() == buckets
        assert bucket_numbers(np.array(scalar, np.int32), count).tolist() == buckets


SPARK_VALUES = {"int": st.integers(-(1 << 31), (1 << 31) - 1), "bigint": st.integers(-(1 << 63), (1 << 63) - 1),
                "double": st.floats() | st.sampled_from([0.0, -0.0, float("nan")]), "string": st.text(max_size=11),
                "binary": st.binary(max_size=11), "date": st.dates(min_value=datetime.date(1, 1, 1))}


@settings(max_examples=100)
@given(st.data())
def test_spark_hashes_of_columns_on_the_numpy_kernels_equal_the_scalar_path(data):
    types = data.draw(st.lists(st.sampled_from(sorted(SPARK_VALUES)), min_size=1, max_size=3))
    rows = data.draw(st.lists(st.tuples(*[st.none() | SPARK_VALUES[t] for t in types]), min_size=1, max_size=20))
    arrays = [pa.array([r[i] for r in rows], arrow_type_of_hive(t)) for i, t in enumerate(types)]
    with _numpy_kernels():
        assert spark_hash_arrays(arrays, types).tolist() == [spark_hash(list(r), types) for r in rows]


def test_a_process_under_an_address_space_cap_hashes_on_the_numpy_kernels():
    """The rule (npkernels.numba_module): under RLIMIT_AS (a Python worker's spark.executor.pyspark.memory) numba is
    not loaded unless it is already; a cap near numba's needs fails its load or aborts the process. 4 GiB is room
    enough for numba: the rule, not the room, decides. The hashes equal this (uncapped) process's."""
    columns = [pa.array([1, None, -7, 2 ** 40], pa.int64()), pa.array(["a", "", None, "été"])]
    expected = bucket_ids(columns, ["bigint", "string"], 2, 12).tolist()
    script = textwrap.dedent("""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
        import pyarrow as pa
        from bucketkit.hashing import hive, npkernels
        from bucketkit.joins import execute
        columns = [pa.array([1, None, -7, 2 ** 40], pa.int64()), pa.array(["a", "", None, "été"])]
        print(npkernels.chosen().__name__, execute._kernels(), "numba" in sys.modules)
        print(hive.bucket_ids(columns, ["bigint", "string"], 2, 12).tolist())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    chosen, buckets = out.stdout.strip().splitlines()
    assert chosen == "bucketkit.hashing.npkernels None False"
    assert buckets == str(expected)


def test_numba_that_fails_to_load_leaves_the_numpy_kernels(monkeypatch):
    monkeypatch.setitem(sys.modules, "bucketkit.hashing.kernels", None)  # its import now raises ImportError
    assert npkernels.numba_module("bucketkit.hashing.kernels") is None
    npkernels.chosen.cache_clear()
    try:
        assert npkernels.chosen() is npkernels
    finally:
        npkernels.chosen.cache_clear()
