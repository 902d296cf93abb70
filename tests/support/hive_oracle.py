"""Hive's own bucketing code as an oracle (Hive 2.3.10 classes in pyspark's jars, via py4j), and
hypothesis strategies for values of every bucketable Hive type: shared by the tests that hold
bucketkit's Python and Java hashes to Hive's.

v1: ``ObjectInspectorUtils.getBucketHashCode`` / ``getBucketNumber`` with Hive's standard writable
inspectors, the very code Hive's bucketed writer runs. v2: Hive 2.3.10 predates
``hashCodeMurmur`` (Hive 3), so the v2 oracle is composed from Hive's ``Murmur3.hash32(byte[],
len, 104729)`` over the bytes Java itself produces (``ByteBuffer.putShort/putInt/putLong``,
``Float.floatToIntBits`` + Java's int->float conversion, ``Text.copyBytes`` for UTF-8), following
Hive 3's ``hashCodeMurmur`` rules; nested values combine as in that function, map values with
Hive's v1 ``ObjectInspectorUtils.hashCode``.
"""

from __future__ import annotations

import datetime
import math

from hypothesis import strategies as st
from py4j.java_collections import ListConverter

from bucketkit.hivetypes import HiveType, parse_hive_type

EPOCH = datetime.date(1970, 1, 1)

class HiveOracle:
    """Hive's bucketing code, one row per call (JVM round trips kept to a few per value)."""

    def __init__(self, spark):
        self.gateway = spark.sparkContext._gateway
        self.jvm = spark.sparkContext._jvm
        hive = self.jvm.org.apache.hadoop.hive
        self.hive = hive
        self.io = self.jvm.org.apache.hadoop.io
        self.utils = hive.serde2.objectinspector.ObjectInspectorUtils
        self.murmur = self.jvm.org.apache.hive.common.util.Murmur3
        self._inspectors: dict[str, object] = {}

    def inspector(self, t: HiveType):
        key = str(t)
        if key not in self._inspectors:
            info = self.hive.serde2.typeinfo.TypeInfoUtils.getTypeInfoFromTypeString(key)
            self._inspectors[key] = (self.hive.serde2.typeinfo.TypeInfoUtils
                                     .getStandardWritableObjectInspectorFromTypeInfo(info))
        return self._inspectors[key]

    def java(self, value, t: HiveType):
        """A Python value as the Writable Hive's writer would hold."""
        if value is None:
            return None
        io, hio = self.io, self.hive.serde2.io
        n = t.name
        if n == "array":
            return ListConverter().convert([self.java(v, t.children[0]) for v in value],
                                           self.gateway._gateway_client)
        if n == "map":
            m = self.jvm.java.util.HashMap()
            for k, v in value.items():
                m.put(self.java(k, t.children[0]), self.java(v, t.children[1]))
            return m
        if n == "varchar":
            return hio.HiveVarcharWritable(self.hive.common.type.HiveVarchar(value, -1))
        if n == "char":  # v1 only: Hive's writer holds the value padded to its length
            return hio.HiveCharWritable(self.hive.common.type.HiveChar(value, t.params[0]))
        if n == "date":
            return hio.DateWritable((value - EPOCH).days)
        maker = {"boolean": io.BooleanWritable, "tinyint": hio.ByteWritable, "smallint": hio.ShortWritable,
                 "int": io.IntWritable, "bigint": io.LongWritable, "float": io.FloatWritable,
                 "double": hio.DoubleWritable, "string": io.Text}[n]
        return maker(value)

    def _arrays(self, values, types):
        objs = self.gateway.new_array(self.jvm.java.lang.Object, len(types))
        ois = self.gateway.new_array(self.hive.serde2.objectinspector.ObjectInspector, len(types))
        for i, (v, t) in enumerate(zip(values, types)):
            objs[i] = self.java(v, t)
            ois[i] = self.inspector(t)
        return objs, ois

    def v1(self, values, types) -> int:
        types = [parse_hive_type(t) for t in types]
        return self.utils.getBucketHashCode(*self._arrays(values, types))

    def v1_bucket(self, values, types, n: int) -> int:
        types = [parse_hive_type(t) for t in types]
        return self.utils.getBucketNumber(*self._arrays(values, types), n)

    def murmur3(self, data: bytes) -> int:
        return self.murmur.hash32(bytearray(data), len(data), 104729)

    def _v2_value(self, value, t: HiveType) -> int:
        if value is None:
            return 0
        n, jl, bb = t.name, self.jvm.java.lang, self.jvm.java.nio.ByteBuffer
        if n == "boolean":
            return 1 if value else 0
        if n == "tinyint":
            return value
        if n == "array":
            r = 0
            for v in value:
                r = _i32(31 * r + self._v2_value(v, t.children[0]))
            return r
        if n == "map":
            r = 0
            for k, v in value.items():
                v1 = self.utils.hashCode(self.java(v, t.children[1]), self.inspector(t.children[1]))
                r = _i32(r + (self._v2_value(k, t.children[0]) ^ v1))
            return r
        if n == "smallint":
            data = bb.allocate(2).putShort(value).array()
        elif n in ("int", "date"):
            data = bb.allocate(4).putInt(value if n == "int" else (value - EPOCH).days).array()
        elif n == "bigint":
            data = bb.allocate(8).putLong(value).array()
        elif n == "float":
            bits = jl.Float.floatToIntBits(value)
            data = bb.allocate(4).putFloat(jl.Float.parseFloat(str(bits))).array()  # (float) bits
        elif n == "double":
            bits = jl.Double.doubleToLongBits(value)
            data = bb.allocate(8).putDouble(jl.Double.parseDouble(str(bits))).array()  # (double) bits
        else:
            data = self.io.Text(value).copyBytes()
        return self.murmur3(bytes(data))

    def v2(self, values, types) -> int:
        r = 0
        for v, t in zip(values, types):
            r = _i32(31 * r + self._v2_value(v, parse_hive_type(t)))
        return r


def _i32(x: int) -> int:
    return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000


# --------------------------------------------------------------------------- strategies

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
PRIMITIVE_VALUES = {
    "boolean": st.booleans(),
    "tinyint": st.integers(-(2**7), 2**7 - 1),
    "smallint": st.integers(-(2**15), 2**15 - 1),
    "int": st.integers(-(2**31), 2**31 - 1),
    "bigint": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(width=32),
    "double": st.floats(),
    "string": _text,
    "varchar(12)": st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
    "date": st.dates(),
}
# Every bucketable type, nested ones included, for properties that run once per type.
TYPES = [*sorted(PRIMITIVE_VALUES), "array<int>", "array<varchar(12)>", "map<string,double>",
         "map<date,array<bigint>>"]

# Values where hashes go wrong first: NaN, -0.0 apart from 0.0, dates before 1970 (negative days),
# extreme integers, trailing spaces, 4-byte UTF-8.
EDGES = {
    "float": [0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1e-45, -1e-45, 3.4028234663852886e38, 1.5],
    "double": [0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308, 0.1, -2.5],
    "date": [EPOCH, datetime.date(1969, 12, 31), datetime.date(1, 1, 1), datetime.date(1582, 10, 4),
             datetime.date(9999, 12, 31)],
    "bigint": [0, -1, 2**63 - 1, -(2**63), 2**32, -(2**32)],
    "tinyint": [-128, 127, -1],
    "string": ["", "a", "é", "日本語", "😀", "\x7f\x80", "abc ", "ab\x00"],
    "varchar(4)": ["", "ab  ", "😀", "é"],
}

primitive_types = st.sampled_from(sorted(PRIMITIVE_VALUES))
hive_types = st.recursive(
    primitive_types,
    lambda inner: st.one_of(inner.map(lambda t: f"array<{t}>"),
                            st.tuples(primitive_types, inner).map(lambda kv: f"map<{kv[0]},{kv[1]}>")),
    max_leaves=3,
)


def values_of(t: str | HiveType):
    t = parse_hive_type(t)
    if t.name == "array":
        inner = st.lists(values_of(t.children[0]), max_size=4)
    elif t.name == "map":
        inner = st.dictionaries(values_of(t.children[0]).filter(lambda k: k is not None),
                                values_of(t.children[1]), max_size=3)
    else:
        inner = PRIMITIVE_VALUES[str(t)]
    return st.none() | inner


@st.composite
def rows(draw, max_columns=3):
    types = draw(st.lists(hive_types, min_size=1, max_size=max_columns))
    values = [draw(values_of(t)) for t in types]
    return types, values
