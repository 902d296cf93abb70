"""A commit where only the table's own location may be written (issue 48): on a shared warehouse, permissions are
often granted per table location (HDFS ACLs, Ranger or Lake Formation policies), so the directory beside a table
may not be written. On a store that renames directories (a local disk, HDFS), a commit switches the table's
directory with one beside it; where that is refused, it keeps the table's versions inside it, published by a
pointer, and writes nothing outside the table's location. The store here is the local disk, through a filesystem
that refuses every write outside one directory with the error the local disk gives (EACCES), as a user who is
not root meets it (the tests run as root, whom the disk's own permissions do not stop)."""

from __future__ import annotations

import os
import warnings

import pyarrow.fs as pafs
import pytest

from bucketkit.errors import CommitError, InsideLayoutWarning
from bucketkit.layout.versions import TablePaths, history, live_pointer
from bucketkit.writing.commit import Transaction, settle
from bucketkit.writing.recovery import recover
from bucketkit.writing.retention import vacuum
from support.commit import FLAT, as_counter, read_bucketkit, stage_rows
from support import background
from support.localfs import WRITABLE_ENV, ConfinedHandler

ONE = {"": [(k, "one") for k in range(8)]}
TWO = {"": [(k, "two") for k in range(20, 26)]}


def confined(root) -> pafs.FileSystem:
    return pafs.PyFileSystem(ConfinedHandler(str(root)))


def commit(root, rows, *, mode="append", fs=None, catalog=None):
    tx = Transaction(str(root), FLAT, mode=mode, filesystem=fs or confined(root), extra={"catalog": catalog})
    tx.begin()
    summary = tx.commit(stage_rows(tx, rows))
    settle()
    return tx, summary


def test_a_table_whose_parent_may_not_be_written_commits_inside_it_and_reads_whole(tmp_path):
    root = tmp_path / "db" / "t"
    root.mkdir(parents=True)
    before = sorted(os.listdir(tmp_path / "db"))
    with pytest.warns(InsideLayoutWarning, match=r"parent directory may not be written .*Permission denied.*an engine "
                                         r"reading the directory itself .* sees none of its files"):
        tx, _ = commit(root, ONE)
    assert tx.inside and live_pointer(pafs.LocalFileSystem(), str(root))["write_id"] == tx.write_id
    assert read_bucketkit(root) == as_counter(ONE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the table now keeps its versions inside: no second warning
        tx2, _ = commit(root, TWO)
        tx3, _ = commit(root, TWO, mode="overwrite")
    assert tx2.inside and tx3.inside
    assert read_bucketkit(root) == as_counter(TWO)
    assert sorted(os.listdir(tmp_path / "db")) == before == ["t"]  # nothing beside the table, ever
    fs = confined(root)
    paths = TablePaths.at(fs, str(root))
    assert paths.inside and [v.write_id for v in history(fs, paths)] == [tx.write_id, tx2.write_id, tx3.write_id]
    assert recover(str(root), filesystem=fs) == []
    removed = vacuum(str(root), retain=0, filesystem=fs).removed  # every version but the live one
    assert [v.write_id for v in removed] == [tx.write_id, tx2.write_id]
    assert not os.path.exists(paths.version(tx.write_id)) and os.path.isdir(paths.version(tx3.write_id))
    assert read_bucketkit(root) == as_counter(TWO)


def test_a_new_table_whose_parent_may_not_be_written_is_created_inside_itself(tmp_path):
    """The first write of a table whose directory does not exist yet: the commit creates the table's own
    directory (the one place it may write) and commits inside it."""
    root = tmp_path / "db" / "t"
    root.parent.mkdir()
    with pytest.warns(InsideLayoutWarning):
        tx, _ = commit(root, ONE)
    assert tx.inside and read_bucketkit(root) == as_counter(ONE)
    assert sorted(os.listdir(tmp_path / "db")) == ["t"]


def test_a_metastore_tables_commit_goes_inside_without_a_warning(tmp_path):
    root = tmp_path / "db" / "t"
    root.mkdir(parents=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the caller publishes the version in the metastore: nothing to warn of
        tx, _ = commit(root, ONE, catalog="db.t")
    assert tx.inside and tx.published == TablePaths(str(root), True).version(tx.write_id)
    assert sorted(os.listdir(tmp_path / "db")) == ["t"]


def test_a_table_that_keeps_versions_beside_it_fails_clearly_and_changes_nothing(tmp_path):
    root = tmp_path / "db" / "t"
    commit(root, ONE, fs=pafs.LocalFileSystem())  # committed while the parent could be written: beside it
    store = TablePaths(str(root)).store
    assert os.path.isdir(store)
    with pytest.raises(CommitError, match=r"journal .* may not be written .*keeps its versions beside it, in "
                                          + store.replace(".", r"\.")):
        commit(root, TWO, mode="overwrite")
    assert read_bucketkit(root) == as_counter(ONE)
    assert not os.path.exists(os.path.join(root, ".bucketkit.live"))


def test_the_layout_follows_what_the_store_holds(tmp_path):
    """TablePaths.at decides by evidence: a first commit inside that died before its pointer leaves a store
    inside and no pointer; the table is still read and recovered in that layout."""
    fs = pafs.LocalFileSystem()
    root = tmp_path / "t"
    root.mkdir()
    assert not TablePaths.at(fs, str(root)).inside  # a local disk: beside, by default
    (root / ".bucketkit.versions").mkdir()
    assert TablePaths.at(fs, str(root)).inside


DRIVER = r"""
import json, os, sys
import bucketkit
from bucketkit.spark.catalog import load_table
from bucketkit.spark.session import get_session

warehouse = sys.argv[1]
spark = get_session("confined", warehouse=warehouse, shuffle_partitions=4)
plain = spark.newSession()
plain.conf.set("spark.bucketkit.catalog.enabled", "false")  # Spark's own reader: the metastore's locations

def rows(session):
    return sorted(list(r) for r in session.sql("SELECT v, p, count(*) FROM ct GROUP BY v, p").collect())

out = {}
spark.sql("CREATE TABLE ct (k INT, v STRING) PARTITIONED BY (p STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
          "TBLPROPERTIES ('bucketing_version'='2')")
spark.sql("INSERT INTO ct PARTITION (p) SELECT CAST(id AS INT), 'a', CAST(id % 2 AS STRING) FROM range(40)")
out["first"] = [rows(spark), rows(plain)]
spark.sql("INSERT OVERWRITE TABLE ct PARTITION (p) SELECT CAST(id AS INT), 'b', CAST(id % 3 AS STRING) FROM range(30)")
out["second"] = [rows(spark), rows(plain)]
out["location"] = spark.sql("DESCRIBE TABLE EXTENDED ct").where("col_name = 'Location'").first()[1]
out["warehouse"] = sorted(os.listdir(warehouse))
out["valid"] = bucketkit.validate(load_table(spark, "ct")).ok
spark.sql("DROP TABLE ct")
out["dropped"] = sorted(os.listdir(warehouse))
# a table Spark's own Hive writer wrote (v1), rebucketed: bucketkit's first commit of it goes inside, published
import warnings
from bucketkit.errors import InsideLayoutWarning
plain.sql("CREATE TABLE hv (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC")
plain.sql("INSERT INTO hv SELECT CAST(id AS INT), 'h' FROM range(50)")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    bucketkit.rebucket(spark, "hv", bucket_count=8)
out["rebucket_warnings"] = [str(w.message) for w in caught if issubclass(w.category, InsideLayoutWarning)]
out["hv"] = [spark.table("hv").count(), plain.table("hv").count(),
             spark.sql("DESCRIBE TABLE EXTENDED hv").where("col_name = 'Location'").first()[1],
             bucketkit.validate(load_table(spark, "hv")).ok, sorted(os.listdir(warehouse))]
print("RESULT " + json.dumps(out), flush=True)
"""


def _sql_driver(base) -> dict:
    """A driver whose Python may write only inside table ``ct``'s directory (a SQL INSERT's commit process too)."""
    import json
    import subprocess
    import sys

    from support.commit import REPO

    warehouse = base / "warehouse"
    env = {**os.environ, "BUCKETKIT_FILESYSTEMS": "file=support.localfs:confined_filesystem",
           WRITABLE_ENV: os.pathsep.join([str(warehouse / "ct"), str(warehouse / "hv")]), "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(warehouse)], env=env, capture_output=True, text=True,
                          timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"the driver failed ({proc.returncode}): {proc.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def queue_background(names, tmp_path_factory) -> None:
    if "test_sql_inserts_into_a_table_whose_parent_may_not_be_written_publish_inside_it" in names:
        background.start("confined_sql", _sql_driver, tmp_path_factory.mktemp("confined"))


@pytest.mark.spark
def test_sql_inserts_into_a_table_whose_parent_may_not_be_written_publish_inside_it(tmp_path_factory):
    """A managed table in a warehouse whose Python may write only in the table's directory: the INSERT's commit
    goes inside it and moves the metastore there; Spark's own reader (the metastore's locations, as Hive and
    Trino read) and bucketkit's read the same rows; nothing is written beside the table; DROP TABLE removes it.
    A table Spark's own Hive writer wrote, rebucketed there: bucketkit's first commit of it goes inside too,
    published, with no directory-table warning."""
    out = background.result("confined_sql", _sql_driver, tmp_path_factory.mktemp("confined"))
    first = [["a", "0", 20], ["a", "1", 20]]
    second = [["b", "0", 10], ["b", "1", 10], ["b", "2", 10]]
    assert out["first"] == [first, first] and out["second"] == [second, second]
    assert "/warehouse/ct/.bucketkit.versions/" in out["location"] and out["valid"]
    assert out["warehouse"] == ["ct"] and out["dropped"] == []
    # rebucket of a table Spark's own writer wrote: its first bucketkit commit, inside and published, no warning
    count, plain_count, location, valid, listed = out["hv"]
    assert count == plain_count == 50 and valid and listed == ["hv"], out["hv"]
    assert "/warehouse/hv/.bucketkit.versions/" in location and out["rebucket_warnings"] == []
