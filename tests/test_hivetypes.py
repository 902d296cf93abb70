"""Hive type strings: parsing, normalisation, Arrow mapping."""

import pyarrow as pa
import pytest
from hypothesis import given, strategies as st

from bucketkit.errors import InvalidArgumentError
from bucketkit.hivetypes import HiveType, arrow_type_of_hive, hive_type_of_arrow, parse_hive_type


@pytest.mark.parametrize("text, expected", [
    ("bigint", "bigint"), ("INT", "int"), ("integer", "int"), ("Varchar(15)", "varchar(15)"),
    ("decimal", "decimal(10,0)"), ("decimal(38, 18)", "decimal(38,18)"),
    ("array<int>", "array<int>"), ("map<string, array<bigint>>", "map<string,array<bigint>>"),
    ("struct<a:int, b:map<string,date>>", "struct<a:int,b:map<string,date>>"),
])
def test_parse_normalises(text, expected):
    assert str(parse_hive_type(text)) == expected


@pytest.mark.parametrize("bad", ["", "int64", "array<int", "map<int>", "varchar", "bigint bigint",
                                 "array<>", "struct<a int>", None, 5])
def test_parse_rejects_with_the_text(bad):
    with pytest.raises(InvalidArgumentError) as info:
        parse_hive_type(bad)
    assert repr(bad) in str(info.value) or str(bad) in str(info.value)


_prim = st.sampled_from(["boolean", "tinyint", "smallint", "int", "bigint", "float", "double",
                         "string", "date", "varchar(7)", "char(3)", "decimal(12,3)", "binary", "timestamp"])
_types = st.recursive(_prim, lambda inner: st.one_of(
    inner.map(lambda t: f"array<{t}>"),
    st.tuples(_prim, inner).map(lambda kv: f"map<{kv[0]},{kv[1]}>")), max_leaves=6)


@given(_types)
def test_round_trip_through_str(text):
    parsed = parse_hive_type(text)
    assert parse_hive_type(str(parsed)) == parsed
    assert str(parsed) == text


@pytest.mark.parametrize("arrow, hive", [
    (pa.int8(), "tinyint"), (pa.int16(), "smallint"), (pa.int32(), "int"), (pa.int64(), "bigint"),
    (pa.float32(), "float"), (pa.float64(), "double"), (pa.string(), "string"), (pa.large_string(), "string"),
    (pa.date32(), "date"), (pa.bool_(), "boolean"), (pa.list_(pa.int64()), "array<bigint>"),
    (pa.map_(pa.string(), pa.int32()), "map<string,int>"), (pa.decimal128(9, 2), "decimal(9,2)"),
])
def test_arrow_to_hive(arrow, hive):
    assert str(hive_type_of_arrow(arrow)) == hive
    assert hive_type_of_arrow(arrow_type_of_hive(hive)) == parse_hive_type(hive)


def test_struct_fields_keep_names():
    t = parse_hive_type("struct<`x`:int,y:string>")
    assert t.field_names == ("x", "y") and t.children == (HiveType("int"), HiveType("string"))
