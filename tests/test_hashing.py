"""Pure-Python tests of bucketkit.hashing.hive: API contracts, errors, literals, the value object.

Hash values themselves are proven against Hive in test_hashing_hive.py; the few constants below
are the ones Hive's classes return there (int 300000 -> v2 -678663480, "" -> v2 -965378730).
"""

from __future__ import annotations

import datetime
import math
import pickle
from decimal import Decimal

import numpy as np
import pytest

from bucketkit import BucketFunction, bucket_number, hive_hash
from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.pruning.filters import coerce_literal
from bucketkit.hashing.hive import bucket_numbers, check_bucketable, check_version


def test_single_type_form_equals_list_form():
    assert hive_hash(300000, "int", 2) == hive_hash([300000], ["int"], 2) == -678663480
    assert hive_hash([1, 2], "array<int>", 1) == 31 * 1 + 2


def test_multi_column_combines_31h_plus_x():
    h1, h2 = hive_hash(7, "int", 1), hive_hash("ab", "string", 1)
    assert hive_hash([7, "ab"], ["int", "string"], 1) == 31 * h1 + h2


@pytest.mark.parametrize("hive_type", ["timestamp", "decimal(10,2)", "char(3)", "binary", "struct<a:int>",
                                       "array<timestamp>", "map<string,binary>"])
def test_unbucketable_types_name_column_and_type(hive_type):
    refused = r"column 'ts'.*cannot hash \w+( \(inside [^)]*\))? for Hive bucketing"
    with pytest.raises(UnsupportedTypeError, match=refused):
        check_bucketable("ts", hive_type)
    with pytest.raises(UnsupportedTypeError):
        hive_hash([None], [hive_type], 1)


@pytest.mark.parametrize("value, hive_type", [(2**31, "int"), (128, "tinyint"), ("1", "int"), (1.0, "int"),
                                              (True, "int"), (1, "boolean"), (5, "string"), (3, "array<int>"),
                                              (datetime.datetime(2020, 1, 1), "date"), (1e39, "float")])
def test_values_that_do_not_fit_their_type_raise(value, hive_type):
    with pytest.raises(InvalidArgumentError, match="cannot hash"):
        hive_hash([value], [hive_type], 1)


def test_bad_version_count_and_arity():
    for bad in (0, 3, "v2", None, True):
        with pytest.raises(InvalidArgumentError, match="version"):
            check_version(bad)
    assert check_version("2") == 2
    with pytest.raises(InvalidArgumentError, match="bucket_count"):
        bucket_number(5, 0)
    with pytest.raises(InvalidArgumentError, match="2 values"):
        hive_hash([1, 2], ["int"], 1)


def test_bucket_number_masks_sign_and_vector_twin_agrees():
    hashes = np.array([0, 1, -1, -(2**31), 2**31 - 1, -678663480], dtype=np.int32)
    for n in (1, 2, 7, 64, 1000):
        assert list(bucket_numbers(hashes, n)) == [bucket_number(int(h), n) for h in hashes]
    assert bucket_number(-1, 10) == (2**31 - 1) % 10


def test_bucket_function_is_a_value():
    f = BucketFunction(2, ["INTEGER", "varchar(5)"], 8)
    assert f.hive_types == ("int", "varchar(5)") and f.version == 2
    assert pickle.loads(pickle.dumps(f)) == f
    assert hash(f) == hash(BucketFunction("2", ("int", "varchar(5)"), 8))
    assert f != BucketFunction(1, ("int", "varchar(5)"), 8)
    assert "v2" in str(f) and "8 buckets" in str(f)
    assert eval(repr(f), {"BucketFunction": BucketFunction}) == f
    assert f.bucket_of([300000, "x"]) == bucket_number(hive_hash([300000, "x"], f.hive_types, 2), 8)
    with pytest.raises(UnsupportedTypeError, match="timestamp"):
        BucketFunction(1, ["timestamp"], 4)
    with pytest.raises(InvalidArgumentError):
        BucketFunction(1, ["int"], 0)


@pytest.mark.parametrize("left, right, reason", [
    ((2, ["bigint"], 8), (2, ["int"], 8), "column 1: left hashes bigint with v2, right int: v2 hashes differ"),
    ((1, ["bigint"], 8), (1, ["int"], 8), "v1 hashes differ"),
    ((1, ["int"], 8), (2, ["int"], 8), "left uses bucketing v1, right v2"),
    ((1, ["string"], 8), (1, ["varchar(3)"], 8), "column 1"),
    ((1, ["int"], 8), (1, ["int", "int"], 8), "1 bucket columns"),
    ((1, ["int"], 8), (1, ["int"], 12), "neither divides"),
    ((2, ["tinyint"], 8), (2, ["smallint"], 8), "v2 hashes differ"),
    ((2, ["map<int,string>"], 8), (2, ["map<int,varchar(3)>"], 8), "v2 hashes differ"),
])
def test_incompatibility_reasons(left, right, reason):
    assert reason in BucketFunction(*left).incompatibility(BucketFunction(*right))


@pytest.mark.parametrize("left, right", [
    ((1, ["int"], 8), (1, ["int"], 32)),
    ((1, ["smallint"], 4), (1, ["int"], 4)),
    ((2, ["string"], 4), (2, ["varchar(9)"], 4)),
    ((2, ["map<varchar(2),int>"], 4), (2, ["map<string,int>"], 4)),
])
def test_compatible_functions(left, right):
    a, b = BucketFunction(*left), BucketFunction(*right)
    assert a.incompatibility(b) is None and b.incompatibility(a) is None


def test_compatible_types_really_hash_alike():
    # The claims behind _hash_class, checked on values rather than trusted.
    for v in (0, 1, -1, 127, -128):
        assert hive_hash(v, "tinyint", 1) == hive_hash(v, "smallint", 1) == hive_hash(v, "int", 1)
    for s in ("", "ab", "é😀"):
        assert hive_hash(s, "string", 2) == hive_hash(s, "varchar(9)", 2)
        assert hive_hash(s, "string", 1) != hive_hash(s, "varchar(9)", 1)
    assert hive_hash(-1, "int", 1) != hive_hash(-1, "bigint", 1)
    assert hive_hash(5, "tinyint", 2) != hive_hash(5, "smallint", 2)


@pytest.mark.parametrize("value, hive_type, expected", [
    (3, "int", (True, 3)), (3.0, "int", (True, 3)), (Decimal("3.00"), "int", (True, 3)), ("3", "int", (True, 3)),
    (3.5, "int", (False, None)), ("abc", "int", (False, None)), (2**40, "int", (False, None)),
    (2**40, "bigint", (True, 2**40)), (128, "tinyint", (False, None)), (math.inf, "bigint", (False, None)),
    (0.1, "float", (False, None)), (0.5, "float", (True, 0.5)), (0.1, "double", (True, 0.1)),
    ("0.1", "double", (True, 0.1)), (1e39, "float", (False, None)), (16777217, "float", (True, 16777216.0)),
    (True, "boolean", (True, True)), ("false", "boolean", (True, False)), (2, "boolean", (False, None)),
    ("abc", "string", (True, "abc")), ("abcdef", "varchar(5)", (False, None)), ("abcde", "varchar(5)", (True, "abcde")),
    ("2020-01-31", "date", (True, datetime.date(2020, 1, 31))), ("2020-13-01", "date", (False, None)),
    (datetime.datetime(2020, 1, 1), "date", (True, datetime.date(2020, 1, 1))),
    (datetime.datetime(2020, 1, 1, 0, 0, 1), "date", (False, None)),
    (None, "int", (True, None)), ([1.0, None], "array<int>", (True, [1, None])), ([1.5], "array<int>", (False, None)),
    ({"a": 2.0}, "map<string,bigint>", (True, {"a": 2})),
])
def test_coerce_literal(value, hive_type, expected):
    assert coerce_literal(value, hive_type) == expected


def test_coerce_literal_nan_and_ambiguous_literals():
    ok, v = coerce_literal(math.nan, "double")
    assert ok and math.isnan(v)
    for value, hive_type in ((5, "string"), (18000, "date"), ([1], "int")):
        with pytest.raises(InvalidArgumentError, match="cannot be compared"):
            coerce_literal(value, hive_type)


def test_coerced_literals_are_hashable():
    cases = ((3.0, "int", 3), ("2020-01-31", "date", datetime.date(2020, 1, 31)), ("7", "bigint", 7),
             (0.5, "float", 0.5))
    for value, hive_type, same in cases:
        ok, canonical = coerce_literal(value, hive_type)
        assert ok and hive_hash(canonical, hive_type, 2) == hive_hash(same, hive_type, 2)


# -- every hash family, through the one interface BucketFunction uses --------------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402

import pyarrow as pa  # noqa: E402

from bucketkit.hashing.hive import HASH_FAMILIES, HashFamily, hash_family  # noqa: E402

FAMILY_CASES = [(name, version) for name in HASH_FAMILIES for version in ((1, 2) if name == "hive" else (2,))]
_ARROW = {"int": pa.int32(), "bigint": pa.int64(), "string": pa.string()}
_VALUES = {"int": st.integers(-2**31, 2**31 - 1), "bigint": st.integers(-2**63, 2**63 - 1),
           "string": st.text(max_size=12)}


@pytest.mark.parametrize("name, version", FAMILY_CASES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_family_places_a_column_of_rows_as_it_places_each_row(name, version, data):
    """A family's vectorised bucket ids equal its scalar bucket_of, NULLs included, for any count:
    a family added to HASH_FAMILIES is held to this without a test of its own. A value a family refuses
    to hash (Hudi's: a null, an empty string, one holding ',' or ':') is refused by both paths alike."""
    types = data.draw(st.lists(st.sampled_from(sorted(_ARROW)), min_size=1, max_size=3))
    count = data.draw(st.integers(1, 300))
    rows = data.draw(st.lists(st.tuples(*[st.none() | _VALUES[t] for t in types]), min_size=1, max_size=30))
    f = BucketFunction(version, tuple(types), count, family=name)
    assert isinstance(f.scheme, HashFamily) and f.scheme == hash_family(name, version) and f.scheme.name == name

    def scalar(row):
        try:
            return f.bucket_of(list(row))
        except InvalidArgumentError:
            return None

    expected = [scalar(r) for r in rows]
    hashable = [r for r, b in zip(rows, expected) if b is not None]
    if len(hashable) < len(rows):
        refused = [r for r, b in zip(rows, expected) if b is None]
        with pytest.raises(InvalidArgumentError):
            f.bucket_ids([pa.array([r[i] for r in refused], _ARROW[t]) for i, t in enumerate(types)])
    if not hashable:
        return
    arrays = [pa.array([r[i] for r in hashable], _ARROW[t]) for i, t in enumerate(types)]
    ids = f.bucket_ids(arrays)
    assert [int(b) for b in ids] == [b for b in expected if b is not None]
    assert all(0 <= int(b) < count for b in ids)


def test_an_unknown_family_is_refused_naming_the_families():
    with pytest.raises(InvalidArgumentError, match=r"hash family 'murmur': expected one of \['hive', 'spark', 'hudi'\]"):
        BucketFunction(2, ("string",), 4, family="murmur")
