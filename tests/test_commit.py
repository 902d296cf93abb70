"""The commit protocol without Spark: staging, journal, overwrite with restore, recovery, faults."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from bucketkit.commit import (JOURNAL_FILE, STAGING_PREFIX, TRASH_PREFIX, Transaction, new_write_id, recover,
                              visible_files)
from bucketkit.errors import CommitError, ConcurrentModificationError
from bucketkit.metadata import METADATA_FILE, TableSpec, read_spec

SPEC = TableSpec(("k",), ("bigint",), 4, columns=(("k", "bigint"), ("v", "string")), partitioned_by=("p",))
REPO = Path(__file__).resolve().parents[1]


def stage(tx: Transaction, files: dict[str, str]) -> dict[str, str]:
    """Write each final relative path's content into the staging dir; return final -> staged."""
    out = {}
    for i, (rel, content) in enumerate(files.items()):
        staged = Path(tx.staging) / f"f{i}"
        staged.write_text(content)
        out[rel] = str(staged)
    return out


def write(root: Path, files: dict[str, str], *, mode="append", replace=None, spec=SPEC) -> Transaction:
    tx = Transaction(str(root), spec, mode=mode)
    tx.begin()
    tx.commit(stage(tx, files), replace=replace)
    return tx


def contents(root: Path) -> dict[str, str]:
    return {f: (root / f).read_text() for f in visible_files(pafs.LocalFileSystem(), str(root))}


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith((STAGING_PREFIX, TRASH_PREFIX)))


def test_write_id_is_unique_and_a_valid_presto_query_id():
    ids = {new_write_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"\d{8}_\d{6}_\d{5}_[a-z0-9]{5}", i) for i in ids)


def test_visible_files_skip_hidden_names_at_every_level(tmp_path):
    for rel in ["a", "p=1/b", "_SUCCESS", ".x/c", "p=1/.hidden", "p=1/_tmp/d", "_dir/e"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert visible_files(pafs.LocalFileSystem(), str(tmp_path)) == ["a", "p=1/b"]


def test_append_moves_files_writes_metadata_and_cleans_up(tmp_path):
    write(tmp_path, {"p=1/000000_0_a": "one", "p=2/000003_0_a": "two"})
    write(tmp_path, {"p=1/000000_0_b": "three"})
    assert contents(tmp_path) == {"p=1/000000_0_a": "one", "p=2/000003_0_a": "two", "p=1/000000_0_b": "three"}
    assert read_spec(str(tmp_path)) == SPEC
    assert leftovers(tmp_path) == []


def test_overwrite_whole_table_replaces_everything_and_drops_old_partitions(tmp_path):
    write(tmp_path, {"p=1/000000_0_a": "old1", "p=2/000000_0_a": "old2"})
    write(tmp_path, {"p=3/000001_0_b": "new"}, mode="overwrite")
    assert contents(tmp_path) == {"p=3/000001_0_b": "new"}
    assert not (tmp_path / "p=1").exists() and not (tmp_path / "p=2").exists()
    assert leftovers(tmp_path) == []


def test_overwrite_partitions_replaces_only_the_partitions_written(tmp_path):
    write(tmp_path, {"p=1/000000_0_a": "old1", "p=2/000000_0_a": "old2"})
    write(tmp_path, {"p=1/000002_0_b": "new1"}, mode="overwrite", replace=["p=1"])
    assert contents(tmp_path) == {"p=1/000002_0_b": "new1", "p=2/000000_0_a": "old2"}


def test_overwrite_detects_a_concurrent_commit_into_its_partitions(tmp_path):
    write(tmp_path, {"p=1/000000_0_a": "old"})
    tx = Transaction(str(tmp_path), SPEC, mode="overwrite")
    tx.begin()
    staged = stage(tx, {"p=1/000000_0_new": "new"})
    write(tmp_path, {"p=1/000001_0_c": "concurrent"})  # another writer's append lands first
    with pytest.raises(ConcurrentModificationError, match="p=1/000001_0_c"):
        tx.commit(staged, replace=["p=1"])
    assert contents(tmp_path) == {"p=1/000000_0_a": "old", "p=1/000001_0_c": "concurrent"}
    assert leftovers(tmp_path) == []


def test_overwrite_of_other_partitions_does_not_conflict(tmp_path):
    write(tmp_path, {"p=1/000000_0_a": "old"})
    tx = Transaction(str(tmp_path), SPEC, mode="overwrite")
    tx.begin()
    staged = stage(tx, {"p=1/000000_0_new": "new"})
    write(tmp_path, {"p=2/000001_0_c": "other partition"})
    tx.commit(staged, replace=["p=1"])
    assert contents(tmp_path) == {"p=1/000000_0_new": "new", "p=2/000001_0_c": "other partition"}


@pytest.mark.parametrize("change", ["respec", "drop"])
def test_spec_change_or_drop_underneath_is_detected(tmp_path, change):
    write(tmp_path, {"p=1/000000_0_a": "old"})
    tx = Transaction(str(tmp_path), SPEC, mode="append")
    tx.begin()
    staged = stage(tx, {"p=1/000000_0_b": "new"})
    meta = tmp_path / METADATA_FILE
    if change == "drop":
        meta.unlink()
    else:
        meta.write_text(SPEC.with_(bucket_count=8).to_json())
    with pytest.raises(ConcurrentModificationError, match="dropped" if change == "drop" else "changed"):
        tx.commit(staged)
    assert "p=1/000000_0_b" not in contents(tmp_path)


def test_two_concurrent_appends_both_land(tmp_path):
    barrier = threading.Barrier(2)
    errors = []

    def run(tag):
        try:
            tx = Transaction(str(tmp_path), SPEC, mode="append")
            tx.begin()
            staged = stage(tx, {f"p=1/00000{b}_0_{tag}": f"{tag}{b}" for b in range(4)})
            barrier.wait()
            tx.commit(staged)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in "xy"]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    assert len(contents(tmp_path)) == 8


def test_a_failing_move_rolls_everything_back(tmp_path, monkeypatch):
    write(tmp_path, {"p=1/000000_0_a": "old1", "p=2/000000_0_a": "old2"})
    before = contents(tmp_path)
    tx = Transaction(str(tmp_path), SPEC, mode="overwrite")
    tx.begin()
    staged = stage(tx, {"p=1/000001_0_b": "n1", "p=1/000002_0_b": "n2", "p=1/000003_0_b": "n3"})
    real_move, calls = tx._move, []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 4:  # 2 trash moves, then the 2nd data move fails
            raise OSError("disk full")
        real_move(src, dst)

    monkeypatch.setattr(tx, "_move", flaky)
    with pytest.raises(CommitError, match="rolled back: disk full"):
        tx.commit(staged)
    assert contents(tmp_path) == before
    assert leftovers(tmp_path) == []


# -- crashes: a real process SIGKILLed at each fault point, then recover() -------------------------
CRASHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from bucketkit.commit import Transaction
    from bucketkit.metadata import TableSpec
    spec = TableSpec.from_json(Path(sys.argv[2]).read_text())
    tx = Transaction(sys.argv[1], spec, mode=sys.argv[3])
    tx.begin()
    files = {}
    for i, rel in enumerate(["p=1/000000_0_new", "p=1/000001_0_new", "p=1/000002_0_new"]):
        staged = Path(tx.staging) / f"f{i}"
        staged.write_text("new")
        files[rel] = str(staged)
    tx.commit(files, replace=None)
""")


@pytest.mark.parametrize("mode, fault, expect", [
    ("append", "during_moves:2", "new"),
    ("append", "after_moves_before_metadata", "new"),
    ("overwrite", "during_overwrite_trash:1", "old"),
    ("overwrite", "during_overwrite_trash:2", "old"),
    ("overwrite", "during_moves:1", "new"),
    ("overwrite", "after_moves_before_metadata", "new"),
])
def test_killed_commit_recovers_to_a_committed_state(tmp_path, mode, fault, expect):
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(SPEC.to_json())
    table = tmp_path / "t"
    write(table, {"p=1/000000_0_old": "old", "p=2/000000_0_old": "old"})
    old = contents(table)
    env = {**os.environ, "BUCKETKIT_FAULT": fault, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", CRASHER, str(table), str(spec_file), mode], env=env)
    assert proc.returncode == -9, "the fault point was not reached"
    pending = recover(str(table), dry_run=True)
    assert [a.state for a in pending] == [f"would roll {'forward' if expect == 'new' else 'back'}"]
    assert leftovers(table), "dry run must not clean up"
    actions = recover(str(table))
    assert [a.state for a in actions] == [f"rolled {'forward' if expect == 'new' else 'back'}"]
    new = {f"p=1/00000{b}_0_new": "new" for b in range(3)}
    if expect == "old":
        assert contents(table) == old
    elif mode == "append":
        assert contents(table) == {**old, **new}
    else:
        assert contents(table) == new
    assert leftovers(table) == []
    assert read_spec(str(table)) == SPEC


def test_recover_leaves_a_running_writer_alone(tmp_path):
    tx = Transaction(str(tmp_path), SPEC, mode="append")
    tx.begin()
    assert [a.state for a in recover(str(tmp_path))] == ["in progress"]
    assert Path(tx.staging).exists()


def test_recover_rolls_back_a_writer_that_died_before_committing(tmp_path):
    tx = Transaction(str(tmp_path), SPEC, mode="append")
    tx.begin()
    owner = Path(tx.staging) / "_writer.json"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    owner.write_text(json.dumps({**json.loads(owner.read_text()), "pid": int(dead.stdout)}))
    assert [a.state for a in recover(str(tmp_path))] == ["rolled back"]
    assert leftovers(tmp_path) == [] and not (Path(tx.staging) / JOURNAL_FILE).exists()
