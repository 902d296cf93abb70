"""Shared fixtures: one Hive-enabled SparkSession for the whole run, created on first use.

Tests that need Spark take the ``spark`` fixture and carry ``@pytest.mark.spark`` (the fixture adds
the marker itself for any test that uses it), so ``pytest -m 'not spark'`` runs the pure-Python
suite in seconds without a JVM.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) or "hive" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from bucketkit.spark.session import get_session

    base = tmp_path_factory.mktemp("spark")
    session = get_session("bucketkit-tests", warehouse=str(base / "warehouse"), shuffle_partitions=4)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def hive(spark):
    """Hive 2.3.10's own classes from pyspark's jars, through py4j: the compatibility oracle."""
    return spark.sparkContext._jvm.org.apache.hadoop.hive
