"""Shared fixtures: one Hive-enabled SparkSession for the whole run, created on first use.

Tests that need Spark take the ``spark`` fixture and carry ``@pytest.mark.spark`` (the fixture adds
the marker itself for any test that uses it), so ``pytest -m 'not spark'`` runs the pure-Python
suite in seconds without a JVM.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# The JVMs the tests start in child processes (plain sessions, the wheel's smoke runs, the spark-sql shell, the
# Connect and dbt servers: each a Spark driver of its own, spark-submit reads SPARK_SUBMIT_OPTS) live for seconds:
# C2's compiles cost them ~40% of their CPU and pay back nothing (measured on tests/support/plain.py: 54 s of CPU
# in 32 s, C1 only: 34 s in 29 s), CPU the suite's own session, on a 2-core runner, needs. The suite's own JVM
# compiles with both compilers (the ``spark`` fixture starts it without this option; C2 thresholds below).
#
# Every JVM of the suite collects garbage with the Parallel collector unless SPARK_SUBMIT_OPTS selects one (two make
# the JVM refuse to start): G1's concurrent threads cost a 2-core runner CPU the tests need (test_sql_catalog,
# test_sql_ddl and test_sql_shapes alone, 168 tests: 299-302 s and 530-539 s of CPU with G1, 260 s and 458 s with the
# Parallel collector, 280 s with the Serial one). A test JVM's collector changes no result.
#
# The suite's own JVM compiles with C2 only what is hot ten times longer than the JVM's default thresholds: the suite
# runs thousands of short queries, each with classes of generated code of its own, and C2 compiled them all: 62 s of
# the JVM's ~165 s of CPU in test_sql_catalog + test_sql_ddl + test_sql_shapes (per-thread CPU from /proc). The same
# three modules on one core (`taskset -c 0`, as the 2-core runner is when children share it): 198 s with the JVM's
# thresholds, 162 s with these, 178 s with C1 only; test_packed_shuffle + test_join_spark + test_acid_scan (larger
# data): 125 s, 107 s, 104 s. The JVM's Tier4 defaults: 5000, 600, 15000 and 40000. Thresholds change when code is
# compiled, never a result.
_OWN_SUBMIT_OPTS = os.environ.get("SPARK_SUBMIT_OPTS")  # what the caller's environment gave


def _unless_given(pattern: str, options: str) -> str:
    """``options``, unless the caller's SPARK_SUBMIT_OPTS already choose what they choose (the JVM takes an option's
    last value, or refuses two collectors): a caller's own wins."""
    return "" if re.search(pattern, _OWN_SUBMIT_OPTS or "") else options


_COLLECTOR = _unless_given(r"-XX:\+Use\w+GC\b", "-XX:+UseParallelGC")
_HOT = _unless_given(r"-XX:(Tier4|TieredStopAtLevel|-TieredCompilation)",
                     "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000 "
                     "-XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=400000")  # 10x the JVM's defaults
_SUITE_SUBMIT_OPTS = f"{_OWN_SUBMIT_OPTS or ''} {_COLLECTOR} {_HOT}".strip()  # what the suite's own JVM starts with
os.environ["SPARK_SUBMIT_OPTS"] = f"{_SUITE_SUBMIT_OPTS} -XX:TieredStopAtLevel=1".strip()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) or "hive" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session", autouse=True)
def background_work(request, tmp_path_factory):
    """Child-process work of selected tests queued now, to run beside the suite (tests/support/background.py)."""
    selected: dict = {}
    for item in request.session.items:
        module = getattr(item, "module", None)  # a test function's; other kinds of items have none
        if hasattr(module, "queue_background"):
            selected.setdefault(module, set()).add(getattr(item, "originalname", item.name))
    for module, names in selected.items():  # in the order the suite reaches them
        module.queue_background(names, tmp_path_factory)
    yield
    from support import background

    background.stop()


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from bucketkit.spark.session import get_session

    base = tmp_path_factory.mktemp("spark")
    children = os.environ["SPARK_SUBMIT_OPTS"]
    if _SUITE_SUBMIT_OPTS:  # a child started meanwhile only compiles more
        os.environ["SPARK_SUBMIT_OPTS"] = _SUITE_SUBMIT_OPTS
    else:
        del os.environ["SPARK_SUBMIT_OPTS"]
    try:
        session = get_session("bucketkit-tests", warehouse=str(base / "warehouse"), shuffle_partitions=4)
    finally:
        os.environ["SPARK_SUBMIT_OPTS"] = children
    yield session
    session.stop()


@pytest.fixture(scope="session")
def hive(spark):
    """Hive 2.3.10's own classes from pyspark's jars, through py4j: the compatibility oracle."""
    return spark.sparkContext._jvm.org.apache.hadoop.hive


@pytest.fixture(scope="session")
def connect_port(spark):
    """The port of a Spark Connect server over the tests' session's context, started once (its clients run in a
    process of their own: a Connect session switches pyspark's API to Connect mode for the whole process)."""
    jvm = spark.sparkContext._jvm
    spark.sparkContext._jsc.sc().conf().set("spark.connect.grpc.binding.port", "0")  # any free port
    jvm.org.apache.spark.sql.connect.service.SparkConnectService.start(spark.sparkContext._jsc.sc())
    service = getattr(getattr(jvm.org.apache.spark.sql.connect.service, "SparkConnectService$"), "MODULE$")
    yield service.localPort()
    jvm.org.apache.spark.sql.connect.service.SparkConnectService.stop(
        jvm.scala.Option.empty(), jvm.scala.Option.empty())
