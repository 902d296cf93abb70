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

from bucketkit.writing.commit import Transaction, new_write_id, settle, visible_files
from bucketkit.writing.recovery import recover
from bucketkit.errors import CommitError, ConcurrentModificationError
from bucketkit.io import STAGING_DIR
from bucketkit.layout.metadata import METADATA_FILE, TableSpec, read_spec
from bucketkit.layout.versions import VERSION_PREFIX, TablePaths

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


def write(root: Path, files: dict[str, str], *, mode="append", replace=None, spec=SPEC, switch="auto"):
    tx = Transaction(str(root), spec, mode=mode, switch=switch)
    tx.begin()
    return tx.commit(stage(tx, files), replace=replace)


def contents(root: Path) -> dict[str, str]:
    return {f: (root / f).read_text() for f in visible_files(pafs.LocalFileSystem(), str(root))}


def leftovers(root: Path) -> list[str]:
    """Unfinished commits beside the table (the lock file is permanent) and hidden staging inside it."""
    settle()  # switched-out versions are deleted after a grace period
    siblings = [p.name for p in root.parent.iterdir() if p.name.startswith(TablePaths(str(root)).prefix)]
    inside = [p.name for p in root.iterdir() if p.name == STAGING_DIR] if root.exists() else []
    return sorted(siblings + inside)


def test_write_id_is_unique_and_a_valid_presto_query_id():
    ids = {new_write_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"\d{8}_\d{6}_\d{5}_[a-z0-9]{5}", i) for i in ids)


def test_visible_files_skip_hidden_names_at_every_level(tmp_path):
    for rel in ["a", "p=1/b", "_SUCCESS", ".x/c", "p=1/.hidden", "p=1/_tmp/d", "_dir/e"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert visible_files(pafs.LocalFileSystem(), str(tmp_path)) == ["a", "p=1/b"]


@pytest.fixture
def table(tmp_path) -> Path:
    return tmp_path / "t"


def test_append_moves_files_writes_metadata_and_cleans_up(table):
    write(table, {"p=1/000000_0_a": "one", "p=2/000003_0_a": "two"})
    write(table, {"p=1/000000_0_b": "three"})
    assert contents(table) == {"p=1/000000_0_a": "one", "p=2/000003_0_a": "two", "p=1/000000_0_b": "three"}
    assert read_spec(str(table)) == SPEC
    assert leftovers(table) == []


def test_overwrite_whole_table_replaces_everything_and_drops_old_partitions(table):
    write(table, {"p=1/000000_0_a": "old1", "p=2/000000_0_a": "old2"})
    write(table, {"p=3/000001_0_b": "new"}, mode="overwrite")
    assert contents(table) == {"p=3/000001_0_b": "new"}
    assert not (table / "p=1").exists() and not (table / "p=2").exists()
    assert leftovers(table) == []


def test_overwrite_partitions_replaces_only_the_partitions_written(table):
    write(table, {"p=1/000000_0_a": "old1", "p=2/000000_0_a": "old2"})
    write(table, {"p=1/000002_0_b": "new1"}, mode="overwrite", replace=["p=1"])
    assert contents(table) == {"p=1/000002_0_b": "new1", "p=2/000000_0_a": "old2"}


def test_overwrite_detects_a_concurrent_commit_into_its_partitions(table):
    write(table, {"p=1/000000_0_a": "old"})
    tx = Transaction(str(table), SPEC, mode="overwrite")
    tx.begin()
    staged = stage(tx, {"p=1/000000_0_new": "new"})
    write(table, {"p=1/000001_0_c": "concurrent"})  # another writer's append lands first
    with pytest.raises(ConcurrentModificationError, match="p=1/000001_0_c"):
        tx.commit(staged, replace=["p=1"])
    assert contents(table) == {"p=1/000000_0_a": "old", "p=1/000001_0_c": "concurrent"}
    assert leftovers(table) == []


def test_overwrite_of_other_partitions_does_not_conflict(table):
    write(table, {"p=1/000000_0_a": "old"})
    tx = Transaction(str(table), SPEC, mode="overwrite")
    tx.begin()
    staged = stage(tx, {"p=1/000000_0_new": "new"})
    write(table, {"p=2/000001_0_c": "other partition"})
    tx.commit(staged, replace=["p=1"])
    assert contents(table) == {"p=1/000000_0_new": "new", "p=2/000001_0_c": "other partition"}


@pytest.mark.parametrize("replace", [["p=1"], None], ids=["its partitions", "the table"])
def test_an_overwrite_of_a_table_another_writer_created_meanwhile(table, replace):
    """Two jobs overwriting partitions of a new table side by side (a backfill): both land, as in Hive, and the
    second's record says what it did. A whole-table overwrite would drop the other's rows unseen: it fails."""
    import bucketkit

    tx = Transaction(str(table), SPEC, mode="overwrite")
    tx.begin()
    staged = stage(tx, {"p=1/000000_0_new": "new"})
    write(table, {"p=2/000001_0_c": "other partition"})  # the other job creates the table first
    if replace is None:
        with pytest.raises(ConcurrentModificationError, match="p=2/000001_0_c"):
            tx.commit(staged, replace=replace)
        assert contents(table) == {"p=2/000001_0_c": "other partition"}
    else:
        tx.commit(staged, replace=replace)
        assert contents(table) == {"p=1/000000_0_new": "new", "p=2/000001_0_c": "other partition"}
        assert [v.operation for v in bucketkit.history(str(table))] == ["create", "overwrite partitions"]
    assert leftovers(table) == []


@pytest.mark.parametrize("change", ["respec", "drop"])
def test_spec_change_or_drop_underneath_is_detected(table, change):
    write(table, {"p=1/000000_0_a": "old"})
    tx = Transaction(str(table), SPEC, mode="append")
    tx.begin()
    staged = stage(tx, {"p=1/000000_0_b": "new"})
    meta = table / METADATA_FILE
    if change == "drop":
        meta.unlink()
    else:
        meta.write_text(SPEC.with_(bucket_count=8).to_json())
    with pytest.raises(ConcurrentModificationError, match="dropped" if change == "drop" else "changed"):
        tx.commit(staged)
    assert "p=1/000000_0_b" not in contents(table)


def test_two_concurrent_appends_both_land(table):
    barrier = threading.Barrier(2)
    errors = []

    def run(tag):
        try:
            tx = Transaction(str(table), SPEC, mode="append")
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
    assert len(contents(table)) == 8


def test_a_failing_link_rolls_everything_back(table, monkeypatch):
    write(table, {"p=1/000000_0_a": "old1", "p=2/000000_0_a": "old2"})
    before = contents(table)
    tx = Transaction(str(table), SPEC, mode="append")
    tx.begin()
    staged = stage(tx, {"p=1/000001_0_b": "n1"})
    calls = []

    def flaky(fs, src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the second kept file cannot be linked
            raise OSError("disk full")
        os.link(src, dst)

    monkeypatch.setattr("bucketkit.writing.commit.link_or_copy", flaky)
    with pytest.raises(CommitError, match="rolled back: disk full"):
        tx.commit(staged)
    assert contents(table) == before
    assert leftovers(table) == []


@pytest.mark.parametrize("how", ["exchange", "rename"])
def test_each_commit_switches_in_a_new_version_with_its_marker(table, how):
    first = write(table, {"p=1/000000_0_a": "one"}, switch=how)
    assert first.switch == "created"
    second = write(table, {"p=1/000000_0_b": "two"}, switch=how)
    assert second.switch == how
    assert sorted(p.name for p in table.iterdir() if p.name.startswith(VERSION_PREFIX)) == \
        [VERSION_PREFIX + second.write_id]
    assert leftovers(table) == []
    # the switched-out directory's link is gone with it; the two kept versions link the file too
    assert os.stat(table / "p=1/000000_0_a").st_nlink == 3


def test_a_foreign_file_added_during_the_commit_is_moved_over(table, monkeypatch):
    """A writer that ignores bucketkit's lock drops a file into the live version while bucketkit
    builds the next one: the commit moves it into the new version rather than lose it."""
    write(table, {"p=1/000000_0_a": "old"})
    real = __import__("bucketkit.writing.commit", fromlist=["switch"]).switch

    def late_arrival(fs, live, *args, **kwargs):
        (Path(live) / "p=1" / "000001_0_foreign").write_text("foreign")
        return real(fs, live, *args, **kwargs)

    monkeypatch.setattr("bucketkit.writing.commit.switch", late_arrival)
    summary = write(table, {"p=2/000000_0_b": "new"})
    assert summary.swept == ("p=1/000001_0_foreign",)
    assert contents(table) == {"p=1/000000_0_a": "old", "p=1/000001_0_foreign": "foreign", "p=2/000000_0_b": "new"}


def test_recover_leaves_a_running_writer_alone(table):
    tx = Transaction(str(table), SPEC, mode="append")
    tx.begin()
    assert [a.state for a in recover(str(table))] == ["in progress"]
    assert Path(tx.staging).exists()


def test_recover_rolls_back_a_writer_that_died_before_committing(table):
    write(table, {"p=1/000000_0_a": "old"})
    tx = Transaction(str(table), SPEC, mode="append")
    tx.begin()
    stage(tx, {"p=1/000000_0_b": "new"})
    journal = Path(tx.paths.journal(tx.write_id))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    journal.write_text(json.dumps({**json.loads(journal.read_text()), "pid": int(dead.stdout)}))
    assert [a.state for a in recover(str(table))] == ["rolled back"]
    assert leftovers(table) == [] and contents(table) == {"p=1/000000_0_a": "old"}


class _CountingStore:
    """An object store (support.objectstore) whose copies (and moves: a copy, then a delete; and with ``reads``,
    opening a file) take a round trip each: counts those in flight together, and fails the ``fail_at``-th one."""

    def __new__(cls, fail_at: int | None = None, reads: bool = False):
        from support.objectstore import ObjectStoreHandler

        class Handler(ObjectStoreHandler):
            type_name = "objtest-counting"

            def __init__(self) -> None:
                super().__init__()
                self.lock, self.now, self.peak, self.copies = threading.Lock(), 0, 0, 0

            def _request(self, do, src, dest):
                with self.lock:
                    self.copies += 1
                    nth, self.now = self.copies, self.now + 1
                    self.peak = max(self.peak, self.now)
                try:
                    threading.Event().wait(0.02)  # the request's round trip
                    if nth == fail_at:
                        raise OSError("SlowDown: please reduce your request rate")
                    do(src, dest)
                finally:
                    with self.lock:
                        self.now -= 1

            def copy_file(self, src, dest):
                self._request(super().copy_file, src, dest)

            def move(self, src, dest):  # a copy, then a delete
                self._request(super().move, src, dest)

            def open_input_stream(self, path):
                if not reads:
                    return super().open_input_stream(path)
                out = []
                self._request(lambda p, _: out.append(super(Handler, self).open_input_stream(p)), path, None)
                return out[0]

        handler = Handler()
        return pafs.PyFileSystem(handler), handler


def test_an_object_stores_copies_are_requests_in_flight_together_and_one_failing_rolls_all_back(tmp_path):
    """On a store without directory renames the next version is built by copies, each a request: a partition
    overwrite of a 4 x 4-file table copies 12 kept files and 4 staged ones. They are kept in flight together (one
    after the other, a table of a thousand files on S3 took a thousand round trips). One copy failing fails the
    commit, rolled back whole: the table reads as before, and a later commit goes through."""
    fs, store = _CountingStore()
    root = tmp_path / "t"
    files = {f"p={p}/00000{b}_0_a": f"{p}-{b}" for p in range(1, 5) for b in range(4)}

    def commit(files: dict[str, str], replace=None, filesystem=fs, write_id=None):
        tx = Transaction(str(root), SPEC, mode="overwrite", filesystem=filesystem, write_id=write_id)
        tx.begin()
        return tx.commit(stage(tx, files), replace=replace)

    assert commit(files).switch == "pointer"  # this store's layout: inside the table, published by a pointer
    store.copies = store.peak = 0
    commit({f"p=1/00000{b}_0_b": f"new-{b}" for b in range(4)}, replace=["p=1"])
    assert store.copies == 16
    assert store.peak >= 4, f"at most {store.peak} copy in flight at once"
    expected = {**{k: v for k, v in files.items() if not k.startswith("p=1/")},
                **{f"p=1/00000{b}_0_b": f"new-{b}" for b in range(4)}}
    assert _published(fs, root) == expected

    failing, _ = _CountingStore(fail_at=7)
    with pytest.raises(CommitError, match="rolled back: .*SlowDown"):
        commit({f"p=2/00000{b}_0_c": "lost" for b in range(4)}, replace=["p=2"], filesystem=failing,
               write_id="20261128_150000_00001_faild")
    assert _published(fs, root) == expected
    assert not [n for n in os.listdir(root / ".bucketkit.versions") if "faild" in n]  # its version removed
    commit({f"p=2/00000{b}_0_d": "kept" for b in range(4)}, replace=["p=2"])
    assert _published(fs, root) == {**{k: v for k, v in expected.items() if not k.startswith("p=2/")},
                                    **{f"p=2/00000{b}_0_d": "kept" for b in range(4)}}


def _published(fs, root: Path) -> dict[str, str]:
    """The files of the version the table's pointer names, as bucketkit's readers find it."""
    from bucketkit.layout.versions import live_root

    live = live_root(fs, str(root))
    return {f: Path(live, f).read_text() for f in visible_files(fs, live)}


def test_the_versions_an_object_store_records_are_read_with_their_requests_in_flight_together(tmp_path):
    """A table keeps a record of every commit, which each commit reads (the next version's number, what expires):
    on an object store one request after the other, a table of a thousand commits made every commit wait a thousand
    round trips. History reads them together, and in order."""
    from bucketkit.layout.versions import history

    fs, store = _CountingStore(reads=True)
    for n in range(8):
        tx = Transaction(str(tmp_path / "t"), SPEC, mode="append", filesystem=fs)
        tx.begin()
        tx.commit(stage(tx, {f"p=1/00000{n % 4}_0_{n}": str(n)}))
    store.copies = store.peak = 0
    versions = history(fs, TablePaths.at(fs, str(tmp_path / "t")))
    assert [v.version for v in versions] == list(range(8)) and [v.operation for v in versions[:2]] == ["create", "append"]
    assert store.copies == 8 and store.peak >= 4, f"{store.copies} records read, at most {store.peak} at once"


def test_a_commit_keeps_the_live_versions_partition_directories_that_hold_no_file(table):
    """A partition a metastore registers with an empty directory (TRUNCATE ... PARTITION, ADD PARTITION, an INSERT
    OVERWRITE ... PARTITION of no rows) keeps its directory through later commits: the next version was built from
    the live version's files only, so the directory vanished, and Spark's own Hive text reader then failed with
    "Input path does not exist" (as Trino fails on a registered partition whose location is gone). A whole-table
    overwrite still drops every old partition (test above)."""
    write(table, {"p=1/000000_0_a": "one", "p=2/000003_0_a": "two", "p=4/000001_0_a": "four"})
    (table / "p=1" / "000000_0_a").unlink()  # TRUNCATE TABLE t PARTITION (p=1)
    (table / "p=3").mkdir()  # ALTER TABLE t ADD PARTITION (p=3)
    write(table, {"p=2/000000_0_b": "more"})
    write(table, {"p=4/000002_0_c": "again"}, mode="overwrite", replace=["p=4"])
    write(table, {}, mode="overwrite", replace=["p=2"])  # INSERT OVERWRITE ... PARTITION (p=2) of no rows
    assert contents(table) == {"p=4/000002_0_c": "again"}
    assert all((table / p).is_dir() for p in ("p=1", "p=2", "p=3", "p=4"))
    assert leftovers(table) == []
