"""The catalog's listing across bucketkit's directory switch (io.bucketkit.layout.TableListing).

A commit switches whole table directories (docs/writing.md "Commit protocol"): one exchange, or
two renames with the table path missing in between. The catalog must list one version, as
bucketkit.layout.discovery.discover does. The directory states a switch passes through are built here with
bucketkit's own commit (Transaction) and renames, and the race of a listing with a switch is made
deterministic by a test file system (tests/jvm SwitchingFileSystem) that switches mid-listing.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from support.commit import FLAT, SPEC, commit_rows
from support.jvm import probe  # noqa: F401 (fixture: compiles and adds tests/jvm)

from bucketkit.io import KEPT_VERSIONS
from bucketkit.layout.versions import POINTER, SWITCHING, VERSION_PREFIX, TablePaths, table_root, write_json
from bucketkit.io import resolve_filesystem

SWITCHING_FS = {"fs.file.impl": "io.bucketkit.probe.SwitchingFileSystem", "fs.file.impl.disable.cache": "true"}
OLD = {"": [(k, "old") for k in range(12)]}
NEW = {"": [(k, "new") for k in range(5, 20)]}


def listing(spark, root, dirs, conf=None):
    jvm = spark._jvm
    return sorted(jvm.io.bucketkit.layout.TableListing.describe(
        str(root), [str(d) for d in dirs], 4, 1, conf or {}))


def version(spark, root, dirs):
    """The listing of a table at rest (no commit under way): what one whole version lists."""
    return listing(spark, root, dirs)


def two_versions(tmp_path, old, new, spec):
    """The live table t (version `old`) and a complete next version (`new`) built beside it, as a
    commit leaves them just before its switch: (table root, next version's path, write id)."""
    root, staged = tmp_path / "t", tmp_path / "u"
    commit_rows(root, old, mode="overwrite", spec=spec)
    commit_rows(staged, new, mode="overwrite", spec=spec)
    write_id = next(n for n in os.listdir(staged) if n.startswith(VERSION_PREFIX))[len(VERSION_PREFIX):]
    nxt = Path(TablePaths(str(root)).next(write_id))
    staged.rename(nxt)
    return root, nxt, write_id


def test_java_knows_the_commit_protocols_names(spark):
    java = spark._jvm.io.bucketkit.layout.TableListing
    assert java.VERSION_PREFIX == VERSION_PREFIX
    assert java.SWITCHING == SWITCHING
    assert java.KEPT_VERSIONS == KEPT_VERSIONS and TablePaths("/data/t").store == "/data/.t" + KEPT_VERSIONS
    assert java.journalName("t", "w1") == os.path.basename(TablePaths("/data/t").journal("w1"))
    assert java.lockName("t") == os.path.basename(TablePaths("/data/t").lock)
    assert java.POINTER == POINTER and TablePaths("/data/t", inside=True).pointer == "/data/t/" + POINTER
    path = spark._jvm.org.apache.hadoop.fs.Path
    for where in ("/data/t", "/data/t/.bucketkit.versions/w1", "/data/.bucketkit.versions", "/.bucketkit.versions/w1",
                  "/data/t/.bucketkit.versions/w1/p=1"):  # where a metastore may locate a table: one table root
        assert java.tableRoot(path(where)).toString() == table_root(where), where


@pytest.mark.parametrize("spec, rows, listed_dir", [(FLAT, (OLD, NEW), ""),
                                                     (SPEC, ({"p=0": OLD[""], "p=1": OLD[""]},
                                                             {"p=0": NEW[""], "p=1": NEW[""]}), "p=1")])
def test_a_switch_landing_mid_listing_is_listed_again(probe, tmp_path, spec, rows, listed_dir):  # noqa: F811
    """The names are read from the old version and looked up in the new one (Hadoop's local listing
    then drops them all), or one partition is listed from each version: the marker says so."""
    root, nxt, write_id = two_versions(tmp_path, *rows, spec)
    dirs = [root] if spec is FLAT else [root / "p=0", root / "p=1"]
    before = version(probe, root, dirs)
    aside = TablePaths(str(root)).aside(write_id)
    probe._jvm.io.bucketkit.probe.SwitchingFileSystem.switchDuringListing(
        str(root / listed_dir).rstrip("/"), [str(root), aside, str(nxt), str(root)])
    raced = listing(probe, root, dirs, SWITCHING_FS)
    assert probe._jvm.io.bucketkit.probe.SwitchingFileSystem.fired()
    after = version(probe, root, dirs)
    assert after != before and len(after) == 4 * len(dirs)
    assert raced == after


def journal(root, write_id):
    fs, _ = resolve_filesystem(str(root), None)
    write_json(fs, TablePaths(str(root)).journal(write_id), {"write_id": write_id, "state": SWITCHING,
                                                           "host": "elsewhere", "pid": 1, "started": 0})


def test_a_listing_between_the_two_renames_waits_for_the_second(spark, tmp_path):
    root, nxt, write_id = two_versions(tmp_path, OLD, NEW, FLAT)
    journal(root, write_id)
    root.rename(TablePaths(str(root)).aside(write_id))  # the first rename: the table path is missing
    finish = threading.Timer(0.3, lambda: nxt.rename(root))
    finish.start()
    try:
        listed = listing(spark, root, [root])
    finally:
        finish.join()
    assert listed == version(spark, root, [root]) and listed
    assert all(write_id in name for name in listed)


def test_a_writer_that_died_between_the_two_renames_is_reported(spark, tmp_path):
    root, nxt, write_id = two_versions(tmp_path, OLD, NEW, FLAT)
    journal(root, write_id)
    root.rename(TablePaths(str(root)).aside(write_id))
    with pytest.raises(Exception, match=f"bucketkit recover {root}"):
        listing(spark, root, [root])


def test_a_sql_query_between_the_two_renames_reads_the_new_version(spark, tmp_path):
    """Through the catalog (HiveBucketedTable.load): the table path is missing when the query is
    planned; the query waits for the second rename and reads the new version, not an empty table."""
    import bucketkit

    spark.sql("DROP TABLE IF EXISTS sqlcl_switch")
    rows = spark.range(40).selectExpr("CAST(id AS INT) AS k", "'old' AS v")
    bucketkit.write(rows, "k", 4, table="sqlcl_switch", bucketing_version=1)
    root = Path(spark.sql("DESCRIBE FORMATTED sqlcl_switch").where("col_name = 'Location'").collect()[0][1]
                .removeprefix("file:"))
    staged = tmp_path / "next"
    bucketkit.write(spark.range(20, 70).selectExpr("CAST(id AS INT) AS k", "'new' AS v"), "k", 4, path=str(staged),
                    bucketing_version=1)
    golden = sorted(tuple(r) for r in spark.read.orc(str(staged)).collect())  # Spark's own read of the new version
    write_id = next(n for n in os.listdir(staged) if n.startswith(VERSION_PREFIX))[len(VERSION_PREFIX):]
    nxt = Path(TablePaths(str(root)).next(write_id))
    staged.rename(nxt)
    journal(root, write_id)
    root.rename(TablePaths(str(root)).aside(write_id))
    finish = threading.Timer(0.5, lambda: nxt.rename(root))
    finish.start()
    try:
        df = spark.sql("SELECT k, v FROM sqlcl_switch")
        read = sorted(tuple(r) for r in df.collect())
    finally:
        finish.join()
    assert "bucketkit" in df._jdf.queryExecution().executedPlan().toString()
    assert read == golden and len(read) == 50
