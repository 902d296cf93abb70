"""bucketkit in the session a user already has: ``SparkSession.builder.enableHiveSupport().getOrCreate()``
with nothing of bucketkit's configured. Its jar is added at first use (as ``ADD JAR`` adds one), so write,
scan and join run its JVM parts there too; a pruned read of files bucketkit committed is vouched (no row
re-hashed), one of files that lie fails naming the file, from any Python thread.

A session of its own needs a process of its own (one JVM per process): the test runs tests/support/plain.py
in a fresh interpreter and checks what it reports. Golden values: Spark's own reads of the same files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import background

pytestmark = pytest.mark.spark  # a JVM of its own, in a child process

SCRIPT = Path(__file__).resolve().parent / "support" / "plain.py"


def _child(out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": str(SCRIPT.parents[2])}
    return subprocess.run([sys.executable, str(SCRIPT), str(out)], env=env, capture_output=True, text=True,
                          timeout=600)


def queue_background(names: set[str], tmp_path_factory) -> None:
    """The plain session's child process, beside the suite (tests/support/background.py)."""
    out = tmp_path_factory.mktemp("plain")
    background.start("plain-session", _child, out)


@pytest.fixture(scope="module")
def report(tmp_path_factory, spark):  # after the suite's session exists: the jar is built by then
    out = tmp_path_factory.mktemp("plain")
    done = background.result("plain-session", _child, out)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads((Path(done.args[2]) / "report.json").read_text())


def test_the_jar_is_added_to_a_plain_session_at_first_use(report):
    assert report["before"] is False  # the user's session had no bucketkit class
    assert report["after"] is True
    assert report["warnings"] == []


def test_the_jar_s_first_use_leaves_the_hive_client_unstarted(report):
    """Spark's own resource loader of a Hive session adds a jar to the Hive client too, starting the client (a
    metastore connection: ~3 s of the first scan of a path table). bucketkit's jar is added as ADD JAR adds one
    to Spark, and reads and writes by path never start the client."""
    assert report["metastore_started"] is False


def test_write_hashes_in_the_jvm_and_the_lookup_is_vouched_with_sparks_rows(report):
    assert "hive_v2_hash(bigint)" in report["write_hash"], report["write_hash"]
    assert report["lookup_rows"] == report["spark_rows"] and len(report["lookup_rows"]) == 1
    assert report["lookup_checked"] is False and "placement:  vouched" in report["explain"]


def test_the_writes_shuffle_moves_its_rows_packed_without_bucketkits_extensions(report):
    """The session has none of bucketkit's planner rules: a strategy added at first use packs the write's shuffle
    (PackRows, an Exchange of buffers, UnpackRows), as the extensions' rule does in get_session()'s session."""
    packed = [p for p in report["write_plans"] if "PackRows" in p]
    assert len(packed) == 1, report["write_plans"]
    assert "UnpackRows" in packed[0] and "hashpartitioning(route" in packed[0]


def test_a_lying_file_fails_the_pruned_read_in_the_jvm_from_any_thread(report):
    for key in ("lying_main", "lying_thread"):
        assert "holds a row whose k belongs in bucket" in report[key] and "000000_0" in report[key], report[key]
    assert report["lying_checked"] is True


def test_a_bucket_join_of_capped_workers_runs_in_the_jvm_without_an_exchange_and_sparks_rows(report):
    """Workers capped at 500m have no room for a join task: the buckets are joined in the JVM, which binds the
    bucket function without bucketkit's catalog (BucketFunctions), so no Exchange; rows as Spark's join."""
    assert report["join_strategy"] == "jvm"
    assert report["join_exchange"] is False
    assert report["join_rows"] == report["join_spark_rows"] == 20000


def test_a_jvm_bucket_join_of_sides_of_different_sizes_or_counts_in_a_plain_session(report):
    """Spark's default session does not reduce one bucketed scan's grouping to another's
    (spark.sql.sources.v2.bucketing.allowCompatibleTransforms.enabled off): scans there report one task per bucket,
    so a large and a small side still join without an Exchange; 8 x 16 buckets, which only that setting joins
    without a shuffle, are joined by Spark's shuffle, the plan saying why. Rows as Spark's join."""
    assert report["sized_exchange"] is False
    assert report["sized_rows"] == report["sized_spark_rows"] == 2000
    assert report["counts_strategy"] == "shuffle"
    assert "8 and 16 buckets" in report["counts_reason"] and "allowCompatibleTransforms" in report["counts_reason"]
    assert report["counts_rows"] == 20000


def test_sparks_own_writer_hashes_a_varchar_key_as_a_string_unlike_hive(report):
    """A Spark deviation, pinned so a change shows up (and the reason bucketkit's sessions refuse this write,
    tests/test_sql_write_guard.py): Hive's v1 hash of a varchar starts from 1 (HiveVarcharWritable.hashCode,
    checked against Hive's classes in test_hashing_hive.py), Spark's writer hashes a VARCHAR column as a STRING.
    Written in the plain session, which has no bucketkit extensions to refuse it."""
    import pyarrow.orc as orc

    from bucketkit.hashing.hive import bucket_number, hive_hash
    from bucketkit.layout.naming import bucket_of

    files = [p for p in sorted(Path(report["varchar_location"]).iterdir()) if p.is_file() and p.name[0].isdigit()]
    placed = {k: bucket_of(p.name) for p in files for k in orc.read_table(str(p)).column("k").to_pylist()}
    assert len(placed) == 44
    assert all(bucket_number(hive_hash([k], ["string"], 1), 8) == b for k, b in placed.items())
    assert any(bucket_number(hive_hash([k], ["varchar(10)"], 1), 8) != b for k, b in placed.items())


def test_sparks_own_writer_hashes_a_char_key_padded_unlike_hive(report, spark):
    """The same for a CHAR(6) key: Spark's writer hashes the value padded to 6 as a STRING; Hive's own v1 function
    (ObjectInspectorUtils over a HiveCharWritable, Hive's classes in pyspark's jars) hashes it without the padding,
    from 1. The reason bucketkit's sessions refuse SQL writes of such tables (tests/test_sql_write_guard.py)."""
    import pyarrow.orc as orc

    from bucketkit.hashing.hive import bucket_number, hive_hash
    from bucketkit.layout.naming import bucket_of
    from support.hive_oracle import HiveOracle

    files = [p for p in sorted(Path(report["char_location"]).iterdir()) if p.is_file() and p.name[0].isdigit()]
    placed = {k: bucket_of(p.name) for p in files for k in orc.read_table(str(p)).column("k").to_pylist()}
    assert len(placed) == 43 and all(len(k) == 6 for k in placed)  # stored padded
    assert all(bucket_number(hive_hash([k], ["string"], 1), 8) == b for k, b in placed.items())
    hive = HiveOracle(spark)
    assert sum(hive.v1_bucket([k], ["char(6)"], 8) != b for k, b in placed.items()) > len(placed) // 2
