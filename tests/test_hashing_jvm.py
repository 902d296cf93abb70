"""One source of truth for hashing across Python and the JVM: bucketkit's Java ``HiveHash`` and the
catalog's bucket function (``HiveBucketFunction``, through ``produceResult`` as Spark calls it) equal
``bucketkit.hashing.hive``'s scalar hash and Hive's own classes (``hive_oracle``), v1 and v2, over
hypothesis values of every bucketable type. Values travel to the JVM as one JSON array per batch
(``io.bucketkit.hashing.JsonValues``), so a property costs a few py4j calls, not one per value."""

from __future__ import annotations

from contextlib import contextmanager
import json
import math

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.errors import UnsupportedTypeError
from bucketkit.hashing.hive import bucket_number, check_bucketable, hash_arrays, hive_hash
from bucketkit.hivetypes import arrow_type_of_hive, parse_hive_type

from support.hive_oracle import EDGES, EPOCH, PRIMITIVE_VALUES, TYPES, HiveOracle, values_of
from support.jvm import probe  # noqa: F401 (a fixture)

# Spark equates 0.0 and -0.0 in joins and groups, Hive hashes them apart: no bucket function on them.
FUNCTION_TYPES = [t for t in TYPES if "float" not in t and "double" not in t]


@pytest.fixture(scope="module")
def oracle(spark):
    return HiveOracle(spark)


@pytest.fixture(scope="module")
def jvm(spark):
    return spark.sparkContext._jvm


def _plain(value, t):
    """A Python value in JsonValues' encoding: dates as days, maps as [key, value] pairs."""
    if value is None:
        return None
    if t.name == "date":
        return (value - EPOCH).days
    if t.name == "array":
        return [_plain(v, t.children[0]) for v in value]
    if t.name == "map":
        return [[_plain(k, t.children[0]), _plain(v, t.children[1])] for k, v in value.items()]
    return value


def to_json(values, hive_type: str) -> str:
    t = parse_hive_type(hive_type)
    return json.dumps([_plain(v, t) for v in values])


def java_hashes(jvm, hive_type, version, values) -> list[int]:
    return list(jvm.io.bucketkit.hashing.JsonValues.hash(hive_type, version, to_json(values, hive_type)))


def hive_hashes(oracle, hive_type, version, values) -> list[int]:
    of = oracle.v1 if version == 1 else oracle.v2
    return [of([v], [hive_type]) for v in values]


def struct_of(jvm, *types):
    """Spark's bind input: a StructType of the given Spark types, as V2ExpressionUtils builds it."""
    s = jvm.org.apache.spark.sql.types.StructType()
    for i, dt in enumerate(types):
        s = s.add(f"_{i}", dt)
    return s


def spark_type(jvm, hive_type):
    return jvm.io.bucketkit.hashing.HiveHash.Type.parse(hive_type).sparkType()


def bound_named(jvm, version, hive_type, n):
    """The per-table form: hive_v<version>[_varchar]_bucket_<n>(col), bound as Spark binds it."""
    fn = jvm.io.bucketkit.hashing.HiveBucketFunction
    unbound = fn.forName(fn.nameFor(version, hive_type, n))
    return unbound.bind(struct_of(jvm, spark_type(jvm, hive_type)))


def bound_bucket(jvm, version, hive_type):
    """The bucket(n, col) form: (int numBuckets, column)."""
    unbound = jvm.io.bucketkit.hashing.HiveBucketFunction(version)
    return unbound.bind(struct_of(jvm, jvm.org.apache.spark.sql.types.DataTypes.IntegerType,
                                  spark_type(jvm, hive_type)))


# --------------------------------------------------------------------------- HiveHash

@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("hive_type", TYPES)
@settings(max_examples=6)
@given(data=st.data())
def test_java_hash_equals_python_and_hive(jvm, oracle, hive_type, version, data):
    values = data.draw(st.lists(values_of(hive_type), min_size=1, max_size=12))
    python = [hive_hash(v, hive_type, version) for v in values]
    assert java_hashes(jvm, hive_type, version, values) == python
    assert hive_hashes(oracle, hive_type, version, values) == python


@pytest.mark.parametrize("version", [1, 2])
@settings(max_examples=10)
@given(st.lists(st.sampled_from(sorted(PRIMITIVE_VALUES)), min_size=2, max_size=3), st.data())
def test_java_multi_column_hash_equals_python_and_hive(jvm, oracle, version, types, data):
    rows = [[data.draw(values_of(t)) for t in types] for _ in range(data.draw(st.integers(1, 4)))]
    encoded = json.dumps([[_plain(v, parse_hive_type(t)) for v, t in zip(row, types)] for row in rows])
    python = [hive_hash(row, types, version) for row in rows]
    assert list(jvm.io.bucketkit.hashing.JsonValues.hashRows(types, version, encoded)) == python
    assert [(oracle.v1 if version == 1 else oracle.v2)(row, types) for row in rows] == python


# --------------------------------------------------------------------------- the bucket function

@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("hive_type", FUNCTION_TYPES)
@settings(max_examples=5)
@given(data=st.data(), n=st.integers(1, 300))
def test_bucket_function_equals_python_and_hive(jvm, oracle, hive_type, version, data, n):
    values = data.draw(st.lists(values_of(hive_type), min_size=1, max_size=12))
    python = [bucket_number(hive_hash(v, hive_type, version), n) for v in values]
    hive = [bucket_number(h, n) for h in hive_hashes(oracle, hive_type, version, values)]
    if version == 1:
        hive = [oracle.v1_bucket([v], [hive_type], n) for v in values]
    encoded = to_json(values, hive_type)
    produce = jvm.io.bucketkit.hashing.JsonValues.produceResult
    if version == 1 and "varchar" in hive_type and not hive_type.startswith("varchar"):
        with pytest.raises(Exception, match="varchar inside an array or map"):
            bound_named(jvm, version, hive_type, n)
        return
    assert list(produce(bound_named(jvm, version, hive_type, n), None, hive_type, encoded)) == python == hive
    if version == 2 or "varchar" not in hive_type:  # bucket(n, col) sees a string column: see below
        assert list(produce(bound_bucket(jvm, version, hive_type), n, hive_type, encoded)) == python


def test_bucket_transform_cannot_tell_varchar_from_string_in_v1(jvm):
    """Spark hands bucket(n, col) a StringType for a varchar column; v1 hashes the two apart, so
    varchar tables need the named form (hive_v1_varchar_bucket_<n>)."""
    produce = jvm.io.bucketkit.hashing.JsonValues.produceResult
    values = ["a", "hello"]
    as_bucket = list(produce(bound_bucket(jvm, 1, "varchar(10)"), 1000, "string", json.dumps(values)))
    named = list(produce(bound_named(jvm, 1, "varchar(10)", 1000), None, "string", json.dumps(values)))
    assert as_bucket == [bucket_number(hive_hash(v, "string", 1), 1000) for v in values]
    assert named == [bucket_number(hive_hash(v, "varchar(10)", 1), 1000) for v in values] != as_bucket


def test_function_names_and_canonical_names(jvm):
    fn = jvm.io.bucketkit.hashing.HiveBucketFunction
    assert fn.nameFor(2, "bigint", 8) == "hive_v2_bucket_8"
    assert fn.nameFor(1, "varchar(5)", 16) == "hive_v1_varchar_bucket_16"
    assert fn.nameFor(2, "varchar(5)", 16) == "hive_v2_bucket_16"  # v2 hashes varchar as string
    assert fn.forName("bucket") is None and fn.forName("hive_v3_bucket_8") is None
    assert fn.forName("hive_v2_bucket_0") is None
    assert str(fn.transform(2, "int", 8, "user_id")) == "hive_v2_bucket_8(user_id)"

    def canonical(version, hive_type, n=8):
        return bound_named(jvm, version, hive_type, n).canonicalName()

    assert canonical(2, "bigint") == "bucketkit.hive_v2(bigint)[8]"
    assert canonical(1, "bigint") != canonical(2, "bigint")
    assert canonical(2, "int") != canonical(2, "bigint")
    assert canonical(2, "bigint", 8) != canonical(2, "bigint", 16)
    assert canonical(1, "tinyint") == canonical(1, "int")  # v1 hashes both as the value
    assert canonical(1, "varchar(3)") != canonical(1, "string")
    assert canonical(2, "varchar(3)") == canonical(2, "string")
    assert bound_bucket(jvm, 2, "date").canonicalName() == "bucketkit.hive_v2(date)"


@pytest.mark.parametrize("hive_type", ["float", "double", "array<double>"])
def test_bucket_function_refuses_floating_point_keys(jvm, hive_type):
    with pytest.raises(Exception, match="Hive hashes them into different buckets"):
        bound_named(jvm, 2, hive_type, 8)


def test_bucket_function_refuses_wrong_arguments(jvm):
    types = jvm.org.apache.spark.sql.types.DataTypes
    with pytest.raises(Exception, match=r"takes \(int numBuckets, column\)"):
        jvm.io.bucketkit.hashing.HiveBucketFunction(2).bind(struct_of(jvm, types.LongType))
    with pytest.raises(Exception, match="cannot hash a Spark timestamp"):
        jvm.io.bucketkit.hashing.HiveBucketFunction.forName("hive_v2_bucket_8").bind(
            struct_of(jvm, types.TimestampType))


@settings(max_examples=10)
@given(st.lists(values_of("bigint"), min_size=1, max_size=20), st.sampled_from([1, 2]),
       st.integers(1, 40), st.integers(2, 5))
def test_reducer_maps_kn_buckets_onto_n(jvm, values, version, n, k):
    """Bucket b of kN buckets reduces to b % N, the bucket of N the same rows hash to."""
    small, large = bound_named(jvm, version, "bigint", n), bound_named(jvm, version, "bigint", k * n)
    reducer = large.reducer(small)
    assert small.reducer(large) is None  # only the larger count reduces
    encoded = to_json(values, "bigint")
    produce = jvm.io.bucketkit.hashing.JsonValues.produceResult
    of_large = list(produce(large, None, "bigint", encoded))
    assert [reducer.reduce(b) for b in of_large] == list(produce(small, None, "bigint", encoded))


def test_reducer_only_between_equal_hashes(jvm):
    v2_16 = bound_named(jvm, 2, "bigint", 16)
    assert v2_16.reducer(bound_named(jvm, 1, "bigint", 8)) is None
    assert v2_16.reducer(bound_named(jvm, 2, "int", 8)) is None
    assert v2_16.reducer(bound_named(jvm, 2, "bigint", 12)) is None
    bucket = bound_bucket(jvm, 2, "bigint")
    assert bucket.reducer(16, bound_bucket(jvm, 2, "bigint"), 8).reduce(13) == 5
    assert bucket.reducer(8, bound_bucket(jvm, 2, "bigint"), 16) is None
    assert bucket.reducer(16, bound_bucket(jvm, 1, "bigint"), 8) is None


# --------------------------------------------------------------------------- edge cases, all paths


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("hive_type", sorted(EDGES))
def test_edge_values_agree_everywhere(jvm, oracle, hive_type, version):
    """NaN (one canonical NaN), -0.0 apart from 0.0, dates before 1970 (negative days), extreme
    integers, strings with trailing spaces (no padding: varchar keeps them, hashing.py too) and
    4-byte UTF-8: Java, Python's scalar and vectorised paths and Hive agree."""
    values = EDGES[hive_type] + [None]
    python = [hive_hash(v, hive_type, version) for v in values]
    arrow = pa.array(values, arrow_type_of_hive(hive_type), from_pandas=False)
    assert list(hash_arrays([arrow], [hive_type], version)) == python
    assert java_hashes(jvm, hive_type, version, values) == python
    assert hive_hashes(oracle, hive_type, version, values) == python


@pytest.mark.parametrize("hive_type", ["decimal(10,2)", "char(3)", "timestamp", "binary", "struct<a:int>",
                                       "array<timestamp>"])
def test_unbucketable_types_refused_by_both(jvm, hive_type):
    """bucketkit (as Trino) does not hash these for Hive bucketing (Hive does; such tables are read unbucketed): Python
    and Java agree."""
    with pytest.raises(UnsupportedTypeError):
        check_bucketable("k", hive_type)
    with pytest.raises(Exception, match=r"bucketkit \(as Trino\) cannot hash"):
        jvm.io.bucketkit.hashing.HiveHash.Type.parse(hive_type)


# --------------------------------------------------------------------------- through Spark SQL


@contextmanager
def spark_settings(spark, conf):
    """Set Spark settings for a block and put back what was there (the shared session's
    allowCompatibleTransforms=true must survive: other test files rely on it)."""
    before = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def executed(spark, query):
    df = spark.sql(query)
    rows = df.collect()
    return rows, df._jdf.queryExecution().executedPlan().toString()


@pytest.mark.parametrize("left, right, compatible, shuffles", [
    ("named_v2_8", "named_v2_8_b", False, False),   # same function: storage-partitioned join
    ("named_v1_8", "named_v1_8_b", False, False),
    ("named_v2_8", "named_v1_8", False, True),      # v2 vs v1: never co-partitioned
    ("named_v2_8", "named_v2_16", False, True),     # 8 vs 16 without compatible transforms
    ("named_v2_8", "named_v2_16", True, False),     # reduced by b % 8
    ("named_v2_16", "named_v2_8", True, False),
    ("named_v1_4", "named_v1_12", True, False),
    ("named_v2_8", "named_v2_12", True, True),      # 12 is no multiple of 8
    ("bucket_v2_8", "bucket_v2_8_b", False, False),  # Spark's bucket(n, col) form (one version per catalog)
])
def test_joins_planned_by_spark(probe, left, right, compatible, shuffles):
    compatible_conf = {"spark.sql.sources.v2.bucketing.allowCompatibleTransforms.enabled": str(compatible).lower()}
    with spark_settings(probe, compatible_conf):
        rows, plan = executed(probe, f"SELECT a.k, a.v, b.v FROM probe.{left} a JOIN probe.{right} b USING (k)")
    assert sorted(r.k for r in rows) == list(range(200))  # every key meets its match, shuffled or not
    assert ("Exchange" in plan) == shuffles, plan


def test_group_by_bucket_key_needs_no_exchange(probe):
    rows, plan = executed(probe, "SELECT k, count(*) AS c FROM probe.named_v1_8 GROUP BY k")
    assert "Exchange" not in plan, plan
    assert sorted((r.k, r.c) for r in rows) == [(k, 1) for k in range(200)]


@pytest.mark.parametrize("hive_type, sql_type", [("int", "INT"), ("bigint", "BIGINT"), ("string", "STRING"),
                                                 ("date", "DATE"), ("smallint", "SMALLINT"),
                                                 ("boolean", "BOOLEAN"), ("array<int>", "ARRAY<INT>")])
@settings(max_examples=2)
@given(data=st.data(), n=st.integers(1, 64))
def test_sql_calls_equal_python_and_hive(probe, oracle, hive_type, sql_type, data, n):
    """The catalog's functions called from SQL, as Spark evaluates them (and as it shuffles the other
    side of a join with spark.sql.sources.v2.bucketing.shuffle.enabled); one query for v1 and v2."""
    values = data.draw(st.lists(values_of(hive_type), min_size=1, max_size=10))
    df = probe.createDataFrame(list(enumerate(values)), f"i INT, c {sql_type}")
    rows = df.selectExpr("i", f"probe.hive_v1_bucket_{n}(c) AS b1", f"probe.hive_v2_bucket_{n}(c) AS b2") \
        .orderBy("i").collect()
    for version in (1, 2):
        got = [r[f"b{version}"] for r in rows]
        assert got == [bucket_number(hive_hash(v, hive_type, version), n) for v in values]
        assert got == [bucket_number(h, n) for h in hive_hashes(oracle, hive_type, version, values)]


@settings(max_examples=5, deadline=None)
@given(n=st.integers(1, 300), tasks=st.integers(1, 40))
def test_routed_form_sends_each_bucket_to_task_bucket_mod_tasks(probe, n, tasks):
    """An unpartitioned INSERT clusters by hive_v<v>_bucket_<n>_route_<tasks>: Spark's own hash
    partitioning of its value (pmod(hash(value), tasks), Spark's `hash` being HashPartitioning's murmur3
    with seed 42) is the bucket modulo the task count, so every task writes an equal share of buckets."""
    df = probe.range(500).selectExpr("CAST(id * 7919 - 250 AS BIGINT) AS c")
    rows = df.selectExpr(f"pmod(hash(probe.hive_v2_bucket_{n}_route_{tasks}(c)), {tasks}) AS task",
                         f"probe.hive_v2_bucket_{n}(c) % {tasks} AS want").collect()
    assert [r.task for r in rows] == [r.want for r in rows]


@pytest.mark.parametrize("version", [1, 2])
def test_nan_payloads_hash_as_the_canonical_nan(oracle, version):
    """Java's floatToIntBits/doubleToLongBits (Hive's, and HiveHash's) fold every NaN bit pattern into
    one; both Python paths must too (JSON and py4j carry only the canonical NaN, so Java is held to
    Hive above on that one)."""
    import numpy as np

    floats = np.array([0x7FC00001, 0xFFC00000, 0x7F800001, 0xFFFFFFFF], np.uint32).view(np.float32)
    doubles = np.array([0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001], np.uint64).view(np.float64)
    for hive_type, values in (("float", floats), ("double", doubles)):
        canonical = oracle.v1([math.nan], [hive_type]) if version == 1 else oracle.v2([math.nan], [hive_type])
        assert list(hash_arrays([pa.array(values)], [hive_type], version)) == [canonical] * len(values)
        assert [hive_hash(float(v), hive_type, version) for v in values] == [canonical] * len(values)


@pytest.mark.parametrize("table", ["named_v1_8", "named_v2_16"])
def test_join_with_unbucketed_side_shuffles_it_by_our_function(probe, table):
    """With spark.sql.sources.v2.bucketing.shuffle.enabled Spark shuffles only the other side, placing
    its rows by HiveBucketFunction (evaluated in tasks): every key must still meet its match."""
    probe.range(-20, 220).selectExpr("id AS k", "id * 2 AS w").createOrReplaceTempView("other_side")
    with spark_settings(probe, {"spark.sql.sources.v2.bucketing.shuffle.enabled": "true",
                                "spark.sql.autoBroadcastJoinThreshold": "-1"}):
        rows, plan = executed(probe, f"SELECT a.k, o.w FROM probe.{table} a JOIN other_side o USING (k)")
    assert sorted((r.k, r.w) for r in rows) == [(k, 2 * k) for k in range(200)]
    final = plan.split("== Initial Plan ==")[0]
    assert final.count("Exchange") == 1, plan  # the other side only, placed by our function
    assert f"bucketkit.hive_v{table[7]}(bigint)[{table.rsplit('_', 1)[1]}]" in final.split("Exchange", 1)[1], plan
