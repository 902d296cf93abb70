"""A committing process SIGKILLed at every fault point: before recovery every reader sees the old
version or the new one (or, between the two renames of a switch without exchange, a missing table
and a clear bucketkit error); recovery leaves the last committed version and no leftovers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pyarrow.fs as pafs
import pytest

from bucketkit.writing.commit import settle
from bucketkit.writing.recovery import recover
from bucketkit.errors import UnfinishedCommitError
from bucketkit.layout.metadata import read_spec
from bucketkit.layout.versions import TablePaths, history
from support.commit import REPO, SPEC, as_counter, commit_rows, read_bucketkit, read_plain

OLD = {"p=1": [(k, "old") for k in range(8)], "p=2": [(k, "old") for k in range(8, 12)]}
NEW = {"p=1": [(k, "new") for k in range(100, 106)], "p=3": [(k, "new") for k in range(200, 202)]}
CRASHER = textwrap.dedent("""
    import json, sys
    from support.commit import commit_rows
    mode, replace, switch = sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
    layout, switch = ("inside", "auto") if switch == "inside" else ("auto", switch)
    commit_rows(sys.argv[1], json.loads(sys.argv[5]), mode=mode, replace=replace, switch=switch, layout=layout)
""")
# (mode, replace): append; overwrite of the table; overwrite of partition p=1 (and new p=3)
WRITES = {"append": ("append", None), "overwrite": ("overwrite", None), "partitions": ("overwrite", ["p=1", "p=3"])}


def expected_new(write: str) -> dict:
    if write == "append":
        return {**{p: OLD[p] + NEW.get(p, []) for p in OLD}, "p=3": NEW["p=3"]}
    if write == "overwrite":
        return NEW
    return {"p=1": NEW["p=1"], "p=2": OLD["p=2"], "p=3": NEW["p=3"]}


# NEW makes 6 staged files (4 in p=1, 2 in p=3); an append then links the 6 old files.
FAULTS = [("during_build:1", "old"), ("during_build:6", "old"), ("during_build:9", "old"),
          ("before_switch", "old"), ("during_switch", "missing"), ("after_switch", "new")]
CASES = [(w, how, f, e) for w in WRITES for how in ("exchange", "rename") for f, e in FAULTS
         if not (f == "during_switch" and how == "exchange")  # one step: nothing in between
         and not (f == "during_build:9" and w != "append")]  # only an append links that many files
# the layout of stores without directory renames (versions inside the table, a pointer), forced on this disk:
# nothing between two renames; plain readers of the directory see no file of it (all hidden), so only
# bucketkit's reader is asked
CASES += [(w, "inside", f, e) for w in WRITES for f, e in FAULTS
          if f != "during_switch" and not (f == "during_build:9" and w != "append")]


@pytest.mark.parametrize("write, how, fault, state", CASES)
def test_killed_commit_reads_old_or_new_before_recovery(tmp_path, write, how, fault, state):
    table = tmp_path / "t"
    commit_rows(table, OLD, layout="inside" if how == "inside" else "auto")
    mode, replace = WRITES[write]
    env = {**os.environ, "BUCKETKIT_FAULT": fault, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    proc = subprocess.run([sys.executable, "-c", CRASHER, str(table), mode, json.dumps(replace), how,
                           json.dumps(NEW)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, f"the fault point was not reached: {proc.stderr[-2000:]}"

    new = as_counter(expected_new(write))
    if state == "missing":  # between the renames: plain readers fail, bucketkit names the remedy
        with pytest.raises(FileNotFoundError):
            read_plain(table)
        with pytest.raises(UnfinishedCommitError, match=r"recover\(.*t'\)"):
            read_bucketkit(table)
    else:
        want = as_counter(OLD) if state == "old" else new
        assert how == "inside" or read_plain(table) == want
        assert read_bucketkit(table) == want

    forward = state != "old"
    assert [a.state for a in recover(str(table), dry_run=True)] == [f"would roll {'forward' if forward else 'back'}"]
    assert [a.state for a in recover(str(table))] == [f"rolled {'forward' if forward else 'back'}"]
    assert read_bucketkit(table) == (new if forward else as_counter(OLD))
    assert how == "inside" or read_plain(table) == read_bucketkit(table)
    assert read_spec(str(table)) == SPEC
    settle()
    paths = TablePaths.at(pafs.LocalFileSystem(), str(table))
    assert paths.inside == (how == "inside")
    assert [p.name for p in paths_dir(paths).iterdir() if p.name.startswith(paths.prefix)] == []
    if how == "inside":  # nothing beside the table
        assert [p.name for p in tmp_path.iterdir()] == ["t"]
    # the store keeps exactly the committed versions: the killed write's too when it rolled forward
    kept = [v.write_id for v in history(pafs.LocalFileSystem(), paths)]
    assert sorted(p for p in os.listdir(paths.store) if not p.endswith(".json")) == sorted(kept)
    assert len(kept) == (2 if forward else 1) and all(v.committed for v in history(pafs.LocalFileSystem(), paths))


def paths_dir(paths: TablePaths):
    """The directory that holds a table's journals: beside it, or inside it."""
    from pathlib import Path

    return Path(paths.parent)


def test_recovering_a_metastore_tables_commit_killed_after_its_pointer_says_what_the_metastore_reads(tmp_path):
    """Inside a table (object stores) the metastore is moved to a version after the pointer names it: a writer killed
    in between leaves the metastore at the version before. ``bucketkit recover`` (no Spark, no metastore) rolls the
    write forward and says so, and what publishes it."""
    table = tmp_path / "t"
    commit_rows(table, OLD, layout="inside")
    crasher = textwrap.dedent("""
        import json, sys
        from bucketkit.writing.commit import Transaction
        from support.commit import SPEC, stage_rows
        tx = Transaction(sys.argv[1], SPEC, mode="append", extra={"catalog": "lake.page_views"}, layout="inside")
        tx.begin()
        tx.commit(stage_rows(tx, json.loads(sys.argv[2])))
    """)
    env = {**os.environ, "BUCKETKIT_FAULT": "after_switch", "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    proc = subprocess.run([sys.executable, "-c", crasher, str(table), json.dumps(NEW)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == -9, f"the fault point was not reached: {proc.stderr[-2000:]}"
    [action] = recover(str(table))
    assert action.state == "rolled forward"
    assert ("the metastore may still locate table lake.page_views at the version before it (Hive, Trino and Spark's "
            "own reader read that one) until a bucketkit write into the table publishes a later one") in str(action)
    assert read_bucketkit(table) == as_counter(expected_new("append"))
