"""Spark SQL through bucketkit's catalog on a store with an object store's semantics (issue 48): the scheme
``objtest://`` of tests/support/objectstore.py, a Hadoop filesystem that renames a directory as S3A does (file
by file, with pauses) and a Python filesystem that cannot rename one; each logs a directory rename.

A driver of its own (the Hadoop filesystem must be on its class path from the start) creates a partitioned
bucketed table there, INSERTs, then INSERT OVERWRITEs it 8 times while two readers loop: one through
bucketkit's catalog, one through Spark's own plan (catalog off: the metastore's locations, as Hive and Trino
read). Every read must be one whole version (all rows of one overwrite, none of another); then rebucket.
A second driver whose commit process is killed before its commit point (``BUCKETKIT_FAULT``) must leave
the version before it, whole, to both readers. No commit may rename a directory (the log stays empty), and
nothing is written outside the table's location."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import background
from support.objectstore import JAVA_CLASS, LOG_ENV, SCHEME, build_jar

pytestmark = pytest.mark.spark
TESTS = Path(__file__).resolve().parent

DRIVER = r"""
import json, os, sys, threading, time
from bucketkit.spark.session import get_session

jar, base, mode = sys.argv[1:4]
spark = get_session("objtest", warehouse=os.path.join(base, "warehouse"), shuffle_partitions=4, conf={
    "spark.driver.extraClassPath": jar, "spark.hadoop.fs.objtest.impl": "JAVA_CLASS"})
location = "SCHEME://" + os.path.join(base, "lake", "t")
out = {}

def overwrite(i, n):
    spark.sql(f"INSERT OVERWRITE TABLE obj_t PARTITION (p) SELECT CAST(id AS INT), 'v{i}', CAST(id % 3 AS STRING) "
              f"FROM range({n})")

def versions(session):
    return sorted((r[0], r[1]) for r in session.sql("SELECT v, count(*) FROM obj_t GROUP BY v").collect())

plain = spark.newSession()
plain.conf.set("spark.bucketkit.catalog.enabled", "false")
if mode == "loop":
    spark.sql(f"CREATE TABLE obj_t (k INT, v STRING) PARTITIONED BY (p STRING) CLUSTERED BY (k) INTO 4 BUCKETS "
              f"STORED AS ORC LOCATION '{location}' TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("INSERT INTO obj_t PARTITION (p) SELECT CAST(id AS INT), 'v0', CAST(id % 3 AS STRING) FROM range(300)")
    out["first"] = [versions(spark), versions(plain)]
    out["location"] = spark.sql("DESCRIBE TABLE EXTENDED obj_t").where("col_name = 'Location'").first()[1]
    seen, stop = {"bucketkit": [], "spark": []}, threading.Event()
    def read(name, session):
        while not stop.is_set():
            try:
                seen[name].append(versions(session))
            except Exception as exc:
                seen[name].append(f"{type(exc).__name__}: {str(exc)[:300]}")
    readers = [threading.Thread(target=read, args=(n, s), daemon=True) for n, s in (("bucketkit", spark), ("spark", plain))]
    for r in readers:
        r.start()
    for i in range(1, 9):
        overwrite(i, 300 + i)
    stop.set()
    for r in readers:
        r.join(120)
    out["seen"] = seen
    out["last"] = [versions(spark), versions(plain)]
    import bucketkit
    bucketkit.rebucket(spark, "obj_t", bucket_count=8)
    out["rebucketed"] = [versions(spark), versions(plain),
                         spark.sql("DESCRIBE TABLE EXTENDED obj_t").where("col_name = 'Num Buckets'").first()[1]]
    out["valid"] = bucketkit.validate(bucketkit.spark.catalog.load_table(spark, "obj_t")).ok
    # a managed table: the metastore locates it at its live version; DROP TABLE deletes the whole table directory
    spark.sql("CREATE DATABASE objdb LOCATION 'SCHEME://" + os.path.join(base, "objdb") + "'")
    for round in range(2):  # created, dropped, created again under the same name
        spark.sql("CREATE TABLE objdb.m (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
        spark.sql("INSERT INTO objdb.m SELECT CAST(id AS INT), 'a' FROM range(20)")
        spark.sql(f"INSERT OVERWRITE TABLE objdb.m SELECT CAST(id AS INT), 'b{round}' FROM range(30)")
        out[f"managed{round}"] = [r[0] for r in spark.sql("SELECT DISTINCT v FROM objdb.m").collect()] + [
            spark.sql("SELECT count(*) FROM objdb.m").first()[0], sorted(os.listdir(os.path.join(base, "objdb")))]
        spark.sql("DROP TABLE objdb.m")
        out[f"dropped{round}"] = sorted(os.listdir(os.path.join(base, "objdb")))
else:  # the table the loop left (the same metastore); this driver's commit process dies before its commit point
    out["before"] = [versions(spark)]
    try:
        overwrite(99, 50)
        out["killed"] = None
    except Exception as exc:
        out["killed"] = str(exc)[:500]
    out["after"] = [versions(spark), versions(plain)]
print("RESULT " + json.dumps(out), flush=True)
""".replace("JAVA_CLASS", JAVA_CLASS).replace("SCHEME", SCHEME)


def _run(base: Path, mode: str, **env: str) -> dict:
    jar = build_jar(base / "jar") if not (base / "jar" / "objtest.jar").exists() else base / "jar" / "objtest.jar"
    environment = {**os.environ, "BUCKETKIT_FILESYSTEMS": f"{SCHEME}=support.objectstore:filesystem",
                   LOG_ENV: str(base / "renames.log"), "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)]),
                   **env}
    if "BUCKETKIT_FAULT" not in env:
        environment.pop("BUCKETKIT_FAULT", None)
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(jar), str(base), mode], env=environment,
                          capture_output=True, text=True, timeout=900)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"the driver failed ({proc.returncode}): {proc.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def _both_runs(base: Path) -> tuple[dict, dict, list[str], list[str]]:
    loop = _run(base, "loop")
    lake = sorted(p.name for p in (base / "lake").iterdir())
    killed = _run(base, "killed", BUCKETKIT_FAULT="before_switch")
    log = base / "renames.log"
    return loop, killed, lake, (log.read_text().splitlines() if log.exists() else [])


def queue_background(names, tmp_path_factory) -> None:
    if names:
        background.start("object_store_sql", _both_runs, tmp_path_factory.mktemp("objtest"))


def whole(version: list, expected: dict[str, int]) -> str:
    """The overwrite a read saw (``[[tag, count]]``); fails on a mix, a part, or an error."""
    assert isinstance(version, list), version  # an error's text
    assert len(version) == 1, f"a mix of versions: {version}"
    tag, count = version[0]
    assert expected.get(tag) == count, f"a part of version {tag}: {count} rows"
    return tag


def test_sql_on_object_store_semantics_reads_whole_versions_and_renames_no_directory(tmp_path_factory):
    loop, killed, lake, renames = background.result("object_store_sql", _both_runs, tmp_path_factory.mktemp("objtest"))
    expected = {f"v{i}": 300 + i for i in range(9)}
    assert renames == []  # no commit relied on a directory rename, in the JVM or in Python
    assert lake == ["t"]  # nothing beside the table
    assert loop["location"].startswith(f"{SCHEME}:") and "/t/.bucketkit.versions/" in loop["location"]
    assert loop["first"] == [[["v0", 300]], [["v0", 300]]]
    for reader in ("bucketkit", "spark"):
        tags = [whole(v, expected) for v in loop["seen"][reader]]
        assert len(tags) >= 3, (reader, loop["seen"][reader])
    assert loop["last"] == [[["v8", 308]], [["v8", 308]]]
    assert loop["rebucketed"] == [[["v8", 308]], [["v8", 308]], "8"] and loop["valid"]
    assert killed["killed"] and "v99" not in json.dumps(killed["after"]), killed
    assert killed["after"] == [[["v8", 308]], [["v8", 308]]] == [killed["before"][0]] * 2
    # a managed table's DROP deletes its table directory (kept versions too), and the name can be used again
    assert loop["managed0"] == ["b0", 30, ["m"]] and loop["managed1"] == ["b1", 30, ["m"]]
    assert loop["dropped0"] == [] == loop["dropped1"]
