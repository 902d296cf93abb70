"""Versions kept by every commit: reads planned on a version read it after later commits, time travel
(``as_of``), history, vacuum and the retention period -- without Spark (Spark's readers: test_versions_spark)."""

from __future__ import annotations

import datetime as dt
import os
import time
from collections import Counter

import pyarrow.fs as pafs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bucketkit
from bucketkit.errors import InvalidArgumentError, VersionNotFoundError
from bucketkit.layout.versions import TablePaths, live_root
from bucketkit.writing.commit import RETIRE_GRACE, Transaction, settle
from bucketkit.pruning.plan import plan_scan
from support.commit import SPEC, as_counter, commit_rows, read_bucketkit, read_plain, read_plan, stage_rows

ONE = {"p=1": [(k, "one") for k in range(6)], "p=2": [(k, "one") for k in range(6, 9)]}
TWO = {"p=1": [(k, "two") for k in range(20, 25)]}
THREE = {"p=3": [(k, "three") for k in range(30, 33)]}
#: beside the table (this disk's own), and inside it with a pointer (object stores'), forced on this disk
LAYOUTS = ["auto", "inside"]


def live(table) -> str:
    """The directory of the table's live version: itself, or (inside) the version its pointer names."""
    return live_root(pafs.LocalFileSystem(), str(table))


def files_on_disk(root) -> tuple[int, int]:
    """Visible data files and their bytes under ``root``, by the filesystem itself."""
    found = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if not f.startswith((".", "_"))]
    return len(found), sum(os.path.getsize(f) for f in found)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_plan_reads_its_version_after_later_commits(tmp_path, layout):
    table = tmp_path / "t"
    commit_rows(table, ONE, layout=layout)
    plan = plan_scan(str(table))  # planned now, read after three overwrites
    assert plan.root != str(table) and "the version listed, kept there" in plan.explain()
    for rows in (TWO, THREE, TWO):
        commit_rows(table, rows, mode="overwrite", layout=layout)
    # what Hive, Trino and Spark read at the path: the live table (inside: its files are all hidden, in the store)
    assert read_plain(live(table)) == as_counter(TWO)
    assert read_plan(plan) == as_counter(ONE)
    assert read_bucketkit(table) == as_counter(TWO)


def test_a_foreign_file_in_the_table_is_read_where_it_lies(tmp_path):
    """A writer that does not commit through bucketkit (Hive's INSERT) changes the live directory: the
    kept version no longer matches it, so the plan reads the directory itself, foreign file included."""
    table = tmp_path / "t"
    commit_rows(table, ONE)
    foreign = table / "p=2" / "000003_0_copy_1.parquet"
    os.link(next((table / "p=1").glob("000003_0_*")), foreign)  # bucket 3's file of p=1, now also in p=2
    plan = plan_scan(str(table))
    assert plan.root == str(table)
    extra = Counter(("2", k, tag) for (_, k, tag) in read_plain(table / "p=1").elements() if k % 4 == 3)
    assert read_plan(plan) == as_counter(ONE) + extra


@pytest.mark.parametrize("layout", LAYOUTS)
def test_history_lists_every_commit_with_its_files(tmp_path, layout):
    table = tmp_path / "t"
    on_disk = []
    for rows, mode, replace in ((ONE, "append", None), (TWO, "append", None), (THREE, "overwrite", ["p=3"]),
                                (TWO, "overwrite", None)):
        commit_rows(table, rows, mode=mode, replace=replace, layout=layout)
        on_disk.append(files_on_disk(live(table)))
    versions = bucketkit.history(str(table))
    assert [v.version for v in versions] == [0, 1, 2, 3]
    assert [v.operation for v in versions] == ["create", "append", "overwrite partitions", "overwrite"]
    assert versions[2].partitions == ("p=3",)
    assert [(v.files, v.bytes) for v in versions] == on_disk
    assert all(a.committed < b.committed for a, b in zip(versions, versions[1:]))
    assert "version 3" in str(versions[3]) and versions[3].to_dict()["committed_at"].endswith("+00:00")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_time_travel_by_version_number_and_by_time(tmp_path, layout):
    table = tmp_path / "t"
    commit_rows(table, ONE, layout=layout)
    commit_rows(table, TWO, layout=layout)  # append
    commit_rows(table, THREE, mode="overwrite", layout=layout)
    v = bucketkit.history(str(table))
    expected = [as_counter(ONE), as_counter(ONE) + as_counter(TWO), as_counter(THREE)]
    for number, rows in enumerate(expected):
        assert read_plan(plan_scan(str(table), as_of=number)) == rows
        assert f"version:    version {number}" in plan_scan(str(table), as_of=number).explain()
    between = dt.datetime.fromtimestamp((v[1].committed + v[2].committed) / 2, dt.timezone.utc)
    assert read_plan(plan_scan(str(table), as_of=between)) == expected[1]
    assert read_plan(plan_scan(str(table), as_of=between.isoformat())) == expected[1]
    naive = between.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat()  # a naive time is UTC
    assert read_plan(plan_scan(str(table), as_of=naive)) == expected[1]
    with pytest.raises(VersionNotFoundError, match=r"no version 7 \(versions 0\.\.2"):
        plan_scan(str(table), as_of=7)
    with pytest.raises(VersionNotFoundError, match="no version was live at 2001-"):
        plan_scan(str(table), as_of="2001-01-01T00:00:00Z")
    with pytest.raises(InvalidArgumentError, match="not an ISO timestamp"):
        plan_scan(str(table), as_of="yesterday")
    with pytest.raises(InvalidArgumentError, match="expected a version number"):
        plan_scan(str(table), as_of=1.5)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_vacuum_frees_what_only_old_versions_hold_and_time_travel_says_so(tmp_path, layout):
    table = tmp_path / "t"
    commit_rows(table, ONE, layout=layout)
    commit_rows(table, TWO, layout=layout)  # append: version 1 shares version 0's files (hard links)
    commit_rows(table, THREE, mode="overwrite", layout=layout)  # shares nothing
    settle()  # the switched-out directory (links too) goes after its grace period
    only_old = files_on_disk(TablePaths.at(pafs.LocalFileSystem(), str(table)).version(bucketkit.history(str(table))[1].write_id))[1]
    assert bucketkit.vacuum(str(table), dry_run=True).removed == ()  # all within the 7-day retention
    dry = bucketkit.vacuum(str(table), retain=0, dry_run=True)
    assert [v.version for v in dry.removed] == [0, 1] and dry.freed_bytes == 0
    result = bucketkit.vacuum(str(table), retain=0)
    assert [v.version for v in result.removed] == [0, 1] and [v.version for v in result.kept] == [2]
    assert only_old <= result.freed_bytes < only_old + 4096  # the data files, plus metadata and markers
    with pytest.raises(VersionNotFoundError, match=r"version 1 \(committed .*\) was removed at .* retention period"):
        plan_scan(str(table), as_of=1)
    assert [v.removed is not None for v in bucketkit.history(str(table))] == [True, True, False]
    assert read_plan(plan_scan(str(table), as_of=2)) == read_bucketkit(table) == as_counter(THREE)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_commit_removes_versions_replaced_longer_ago_than_the_retention(tmp_path, layout, monkeypatch):
    table = tmp_path / "t"
    commit_rows(table, ONE, layout=layout)
    plan = plan_scan(str(table))
    commit_rows(table, TWO, mode="overwrite", layout=layout)
    assert read_plan(plan) == as_counter(ONE)  # within the retention period
    monkeypatch.setenv("BUCKETKIT_RETENTION", "0")
    time.sleep(RETIRE_GRACE + 0.05)  # a commit leaves the version it replaces for the retire grace at least
    commit_rows(table, THREE, mode="overwrite", layout=layout)
    assert [v.removed is None for v in bucketkit.history(str(table))] == [False, True, True]
    time.sleep(RETIRE_GRACE + 0.05)
    commit_rows(table, TWO, mode="overwrite", layout=layout)
    assert [v.removed is None for v in bucketkit.history(str(table))] == [False, False, True, True]
    with pytest.raises(VersionNotFoundError, match=r"the version this read was planned on was removed by vacuum"):
        read_plan(plan)
    monkeypatch.setenv("BUCKETKIT_RETENTION", "soon")
    with pytest.raises(InvalidArgumentError, match="BUCKETKIT_RETENTION='soon'"):
        bucketkit.vacuum(str(table))


def test_with_no_retention_the_version_a_metastore_still_names_is_not_removed_under_its_readers(tmp_path, monkeypatch):
    """Inside a table (object stores), a metastore table is located at its live version and is moved to the next
    one after the commit point. With BUCKETKIT_RETENTION=0 the commit removed the version it replaced before the
    metastore was moved, under Hive's, Trino's and Spark's readers (Spark reads a missing location as empty); and a
    version a failed publish left the metastore naming went at the next commit or vacuum, before the metastore
    moved. Now a commit leaves the version it replaces for the retire grace, and a commit or vacuum through the
    metastore's location (the version it names) leaves that version."""
    table = tmp_path / "t"
    monkeypatch.setenv("BUCKETKIT_RETENTION", "0")
    commit_rows(table, ONE, layout="inside")
    named = live(table)  # where a metastore published the table
    seen = []
    tx = Transaction(named, SPEC, mode="overwrite")
    tx.begin()
    tx.commit(stage_rows(tx, TWO), on_committed=lambda: seen.append(read_plain(named)))
    assert seen == [as_counter(ONE)], "the metastore's readers lost the version it names before it moved"
    time.sleep(RETIRE_GRACE + 0.05)
    # the publish of TWO failed: the metastore still names ONE's version; a later commit through it keeps that one
    tx = Transaction(named, SPEC, mode="append")
    tx.begin()
    tx.commit(stage_rows(tx, THREE))
    assert read_plain(named) == as_counter(ONE)
    assert [v.removed is None for v in bucketkit.history(str(table))] == [True, True, True]  # TWO: the grace
    # a vacuum through the metastore's location too: TWO goes, ONE stays
    assert [v.version for v in bucketkit.vacuum(named, retain=0).removed] == [1]
    assert read_plain(named) == as_counter(ONE)
    assert [v.version for v in bucketkit.vacuum(str(table), retain=0).removed] == [0]  # through the path: it goes
    assert read_bucketkit(table) == as_counter(TWO) + as_counter(THREE)


def test_cli_history_and_vacuum(tmp_path, capsys):
    import json

    from bucketkit.cli import main

    table = tmp_path / "t"
    commit_rows(table, ONE)
    commit_rows(table, TWO, mode="overwrite")
    assert main(["history", str(table), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["versions"]
    assert [(v["version"], v["operation"]) for v in listed] == [(0, "create"), (1, "overwrite")]
    assert main(["vacuum", str(table), "--retain", "0"]) == 0
    assert capsys.readouterr().out.startswith("removed 1 version(s) (0), freed ")
    assert main(["history", str(table)]) == 0
    assert "(removed " in capsys.readouterr().out.splitlines()[0]
    assert pafs.LocalFileSystem().get_file_info(TablePaths(str(table)).version(listed[0]["write_id"])).type \
        == pafs.FileType.NotFound


_NAMES = ["a", "p=1", "p=2", "_b", ".c", "d.orc", ".bucketkit.versions", "_SUCCESS"]


@settings(max_examples=150)
@given(st.lists(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=4), max_size=12), st.booleans())
def test_visible_files_of_a_remote_store_are_the_local_disks(tmp_path_factory, trees, under):
    """visible_files lists a local disk level by level and a store whose listings are requests (S3) by whole
    trees: the two must find the same files, hidden names dropped at every level."""
    from bucketkit.layout.versions import visible_files
    from support.localfs import LocalHandler

    root = tmp_path_factory.mktemp("tree")
    for parts in trees:
        path = root.joinpath(*parts)
        if any(p.is_file() for p in path.parents if root in p.parents) or path.is_dir():
            continue  # a name already taken as a file, or a directory
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    start = "a" if under and not (root / "a").is_file() else ""
    remote = pafs.PyFileSystem(LocalHandler())
    assert visible_files(remote, str(root), start) == visible_files(pafs.LocalFileSystem(), str(root), start)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="process start times are read from Linux's /proc")
def test_a_writer_whose_pid_another_process_took_is_not_alive():
    """A journal's writer on this host is alive while its pid names a process that started before the write. A
    process that took the pid later (pids wrap: Linux's default pid_max is 32768) is another one: the dead writer's
    journal is recovered, not left "in progress" (found when a suite's killed writer's pid was reused within the hour:
    recover reported it in progress). Golden: the kernel's own start time of this process and of a child."""
    import socket
    import subprocess
    import sys

    from bucketkit.layout.versions import owner_alive, process_started

    here = {"host": socket.gethostname(), "pid": os.getpid()}
    assert owner_alive({**here, "started": time.time()}, 60.0)  # this process began before now
    began = process_started(os.getpid())
    assert began is not None and began <= time.time()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        journal = {**here, "pid": child.pid, "started": time.time() - 600}  # a write that began before the child
        assert not owner_alive(journal, 60.0)
        assert owner_alive({**journal, "started": time.time() + 1}, 60.0)
    finally:
        child.kill()
        child.wait()
    assert not owner_alive({**here, "pid": child.pid, "started": time.time()}, 60.0)  # gone
