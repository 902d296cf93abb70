"""The bucket-id column bucketkit.write adds, computed in the JVM (``io.bucketkit.hashing.HiveBucketColumn``
over the jar's ``HiveHash``), held to Hive's own classes (``hive_oracle``) and to ``bucketkit.hashing.hive``,
v1 and v2, over hypothesis values of every bucketable type and multi-column keys; the fallbacks
(Spark SQL expression, Arrow UDF) in sessions without the jar; writes through it that validate()
accepts."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest
from support import background
from support.hive_oracle import EDGES, TYPES, HiveOracle, values_of
from hypothesis import given, settings
from hypothesis import strategies as st

import bucketkit
from bucketkit.hashing.hive import bucket_number, hive_hash
from bucketkit.spark import hashcol
from bucketkit.spark.hashcol import bucket_id_column, jvm_column_class

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def oracle(spark):
    return HiveOracle(spark)


def spark_ddl(hive_type: str) -> str:
    """The Spark column type holding a Hive type's values (a varchar's are Spark strings)."""
    return re.sub(r"varchar\(\d+\)", "string", hive_type)


def buckets_by_spark(spark, types, rows, n, *, expect_jvm=True):
    """Each row's bucket as Spark computes bucket_id_column, v1 and v2 in one query: [(b1, b2)]."""
    schema = ", ".join(["i INT", *(f"c{j} {spark_ddl(t)}" for j, t in enumerate(types))])
    df = spark.createDataFrame([(i, *row) for i, row in enumerate(rows)], schema)
    keys = [f"c{j}" for j in range(len(types))]
    out = df.select("i", *(bucket_id_column(keys, types, v, n, spark=spark).alias(f"b{v}") for v in (1, 2)))
    plan = out._jdf.queryExecution().executedPlan().toString()
    assert ("io.bucketkit.hashing.HiveHash.bucketId" in plan) == expect_jvm, plan
    return [(r.b1, r.b2) for r in out.orderBy("i").collect()]


def expected_buckets(oracle, types, rows, n):
    """[(v1, v2)] per row from Hive's classes, asserted equal to bucketkit.hashing.hive's on the way."""
    out = []
    for row in rows:
        hive = (oracle.v1_bucket(row, types, n), bucket_number(oracle.v2(row, types), n))
        assert hive == tuple(bucket_number(hive_hash(row, types, v), n) for v in (1, 2)), row
        out.append(hive)
    return out


def test_sessions_with_the_jar_use_the_jvm_column(spark):
    assert jvm_column_class(spark) is not None
    assert jvm_column_class(spark) is jvm_column_class(spark)  # looked up once, then cached


@pytest.mark.parametrize("hive_type", TYPES)
@settings(max_examples=4, deadline=None)
@given(data=st.data(), n=st.integers(1, 300))
def test_jvm_column_equals_hive_and_python(spark, oracle, hive_type, data, n):
    rows = [[v] for v in data.draw(st.lists(values_of(hive_type), min_size=1, max_size=12))]
    assert buckets_by_spark(spark, [hive_type], rows, n) == expected_buckets(oracle, [hive_type], rows, n)


@settings(max_examples=15, deadline=None)
@given(types=st.lists(st.sampled_from(TYPES), min_size=2, max_size=3), data=st.data(), n=st.integers(1, 300))
def test_jvm_column_multi_column_keys(spark, oracle, types, data, n):
    """Hive's h = 31 * h + hash(column) over 2-3 key columns of any types, NULLs included."""
    rows = [[data.draw(values_of(t)) for t in types] for _ in range(data.draw(st.integers(1, 6)))]
    assert buckets_by_spark(spark, types, rows, n) == expected_buckets(oracle, types, rows, n)


def test_jvm_column_edge_values(spark, oracle):
    """NaN, -0.0, dates before 1970, extreme integers, trailing spaces, 4-byte UTF-8, NULL."""
    for hive_type, values in sorted(EDGES.items()):
        rows = [[v] for v in [*values, None]]
        assert buckets_by_spark(spark, [hive_type], rows, 64) == expected_buckets(oracle, [hive_type], rows, 64), \
            hive_type


def test_key_columns_of_another_spark_type_are_cast_to_the_declared_type(spark, oracle):
    """An int column declared bigint (bucket_types) hashes as the bigint Hive would store."""
    df = spark.createDataFrame([(i - 5,) for i in range(10)], "k INT")
    got = [r.b for r in df.select(bucket_id_column(["k"], ["bigint"], 2, 16, spark=spark).alias("b")).collect()]
    assert got == [bucket_number(oracle.v2([i - 5], ["bigint"]), 16) for i in range(10)]


@pytest.mark.parametrize("types, expect_plan", [(["bigint", "date"], "HiveHash"),  # no jar: hashexpr
                                                (["string", "int"], "ArrowEvalPython")])
def test_without_the_jar_the_fallbacks_give_the_same_ids(spark, oracle, monkeypatch, types, expect_plan):
    rows = [[1, 7], [None, -3], [2**40, None]] if types[0] == "bigint" else [["a", 7], ["héllo", None], [None, 0]]
    if types[1] == "date":
        import datetime
        rows = [[k, None if d is None else datetime.date(1970, 1, 1) + datetime.timedelta(days=d)] for k, d in rows]
    with_jar = buckets_by_spark(spark, types, rows, 32)
    monkeypatch.setattr(hashcol, "jvm_column_class", lambda session: None)  # as a session without bucketkit's jar
    without = buckets_by_spark(spark, types, rows, 32, expect_jvm=False)
    assert with_jar == without == expected_buckets(oracle, types, rows, 32)
    df = spark.createDataFrame(rows, ", ".join(f"c{j} {t}" for j, t in enumerate(types)))
    plan = df.select(bucket_id_column(["c0", "c1"], types, 2, 32, spark=spark))._jdf.queryExecution() \
        .executedPlan().toString()
    assert (expect_plan == "ArrowEvalPython") == ("ArrowEvalPython" in plan), plan


@pytest.mark.parametrize("bucketed_by, version", [(["s", "dt", "k"], 2), (["f"], 1), (["s", "k"], 1)])
def test_write_through_the_jvm_column_validates(spark, tmp_path, bucketed_by, version):
    """bucketkit.write with multi-column, string and float keys: every row in the file of its bucket."""
    df = spark.range(400).selectExpr(
        "id % 97 - 40 AS k", "IF(id % 13 = 0, NULL, concat('ké', cast(id % 31 AS string))) AS s",
        "date_add(DATE'1969-12-01', CAST(id % 50 AS INT)) AS dt", "CAST(id AS FLOAT) / 4 - 20 AS f")
    root = str(tmp_path / "t")
    result = bucketkit.write(df, bucketed_by, 16, path=root, bucketing_version=version)
    assert result.rows == 400
    check = bucketkit.validate(root)
    assert check.ok and check.rows_checked == 400, check


SCRIPT = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession

    import bucketkit
    from bucketkit.spark.hashcol import jvm_column_class

    spark = (SparkSession.builder.master("local[1]").appName("no-bucketkit-jar")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.bucketkit.addJar", "false").getOrCreate())  # a platform that keeps jars out
    print("JVM_CLASS", jvm_column_class(spark))
    df = spark.range(300).selectExpr("concat('u', cast(id AS string)) AS s", "id AS v")
    bucketkit.write(df, "s", 8, path=sys.argv[1])
    print("VALID", bucketkit.validate(sys.argv[1]).ok)
""")


@pytest.mark.spark  # starts its own Spark: run it under the Spark lock with the others
def _without_the_jar(tmp_path) -> subprocess.CompletedProcess:
    """The user's own session (a process of its own) writing without bucketkit's jar."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "t")],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)


def queue_background(names: set[str], tmp_path_factory) -> None:
    """The session without the jar is a process of its own: run beside the suite (tests/support/background.py)."""
    if "test_a_session_without_the_jar_writes_through_the_fallback" in names:
        background.start("without_the_jar", _without_the_jar, tmp_path_factory.mktemp("nojar"))


def test_a_session_without_the_jar_writes_through_the_fallback(tmp_path_factory):
    """A user's own session whose jar bucketkit may not add (spark.bucketkit.addJar=false): no JVM column, the
    Arrow UDF places the rows, and one warning says why and what it costs."""
    out = background.result("without_the_jar", _without_the_jar, tmp_path_factory.mktemp("nojar"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "JVM_CLASS None" in out.stdout and "VALID True" in out.stdout, out.stdout
    assert out.stderr.count("bucketkit: could not add its jar to this Spark session (spark.bucketkit.addJar=false)") == 1
