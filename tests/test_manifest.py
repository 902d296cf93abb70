"""The file manifest (bucketkit/layout/manifest.py): every commit records its version's files, and a scan
plan vouches for exactly the partitions whose files are those, or says why it checks them (no Spark).

Golden values come from the operating system (``os.stat``: sizes and modification times) and from what the
tests do to the files (touch, add, remove), never from the code under test."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import hypothesis.strategies as st
import pyarrow.fs as pafs
from hypothesis import given

from bucketkit.layout.manifest import MANIFEST_FILE, Manifest, layout_of, read_manifest, record_manifest
from bucketkit.pruning.plan import plan_scan
from tests.support.commit import SPEC, commit_rows

ROWS = {"p=a": [(1, "x"), (2, "y"), (7, "z")], "p=b": [(3, "u"), (4, "v")]}


def _visible(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
        for n in names:
            if not n.startswith((".", "_")):
                st_ = os.stat(os.path.join(dirpath, n))
                out[os.path.relpath(os.path.join(dirpath, n), root)] = (st_.st_size, st_.st_mtime_ns // 1_000_000)
    return out


def test_every_commit_records_each_visible_file_with_its_size_and_mtime(tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    commit_rows(root, {"p=c": [(5, "w")]})  # an append: the kept files (hard links) are recorded too
    data = json.loads((root / MANIFEST_FILE).read_text())
    assert {p: tuple(v) for p, v in data["files"].items()} == _visible(root)
    assert len(data["files"]) == 6 and data["by"].startswith("commit ")
    assert data["layout"] == {"hash_family": "hive", "bucketed_by": ["k"], "bucket_types": ["bigint"],
                              "bucket_count": 4, "bucketing_version": 2}


def _placement(root, **kw):
    plan = plan_scan(str(root), [("k", "=", 1)], **kw)
    return plan.placement, {p.values["p"]: p.vouched for p in plan.partitions}


def test_a_table_as_committed_is_vouched_and_the_plan_says_so(tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    placement, parts = _placement(root)
    assert parts == {"a": True, "b": True} and not placement.checked
    assert "placement:  vouched: every file read is one commit" in plan_scan(str(root), [("k", "=", 1)]).explain()


def test_a_file_rewritten_in_place_is_checked_naming_it(tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    victim = sorted((root / "p=a").glob("0*"))[0]
    st_ = os.stat(victim)
    os.utime(victim, ns=(st_.st_atime_ns, st_.st_mtime_ns + 5_000_000_000))  # another engine rewrote it
    placement, parts = _placement(root)
    assert parts == {"a": False, "b": True}
    assert f"p=a/{victim.name} changed since commit" in placement.reason
    assert "checked row by row in 1 of 2 partitions" in str(placement)


def test_a_foreign_file_or_a_missing_one_is_checked(tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    (root / "p=b" / "000001_0_copy_1").write_bytes((root / "p=b").joinpath(
        sorted(os.listdir(root / "p=b"))[0]).read_bytes())  # Hive's INSERT INTO adds a _copy_1
    placement, parts = _placement(root)
    assert parts == {"a": True, "b": False} and "p=b/000001_0_copy_1 is not among the files" in placement.reason
    os.remove(root / "p=b" / "000001_0_copy_1")
    os.remove(sorted((root / "p=a").glob("0*"))[0])
    placement, parts = _placement(root)
    assert parts == {"a": False, "b": True} and "1 file(s) commit" in placement.reason and "gone" in placement.reason


def test_a_read_with_another_layout_or_without_a_manifest_is_checked(tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    data = json.loads((root / MANIFEST_FILE).read_text())
    (root / MANIFEST_FILE).write_text(json.dumps({**data, "layout": {**data["layout"], "bucketing_version": 1}}))
    placement, parts = _placement(root)  # files hashed with v1 by the record, read as v2 by the metadata
    assert parts == {"a": False, "b": False}
    assert "bucketing_version 1 where the read hashes with 2" in placement.reason
    for kept in [root, *tmp_path.glob(".t.bucketkit.versions/*")]:  # the live version and its kept copy
        if (kept / MANIFEST_FILE).exists():
            os.remove(kept / MANIFEST_FILE)
    placement, parts = _placement(root)
    assert parts == {"a": False, "b": False} and f"no {MANIFEST_FILE}" in placement.reason


def test_a_kept_version_read_by_time_travel_is_vouched_by_its_own_manifest(tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    commit_rows(root, {"p=a": [(9, "q")]}, mode="overwrite", replace=["p=a"])
    plan = plan_scan(str(root), [("k", "=", 1)], as_of=0)
    assert plan.version.version == 0 and all(p.vouched for p in plan.partitions)
    assert {p.values["p"] for p in plan.partitions} == {"a", "b"}


def test_a_manifest_that_is_not_one_vouches_for_nothing(tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    for text in ("{", json.dumps({"bucketkit_manifest_version": 99, "by": "x", "layout": {}, "files": {}}),
                 json.dumps({"bucketkit_manifest_version": 1, "by": "x", "layout": {}, "files": {"a": [1]}})):
        (root / MANIFEST_FILE).write_text(text)
        assert read_manifest(pafs.LocalFileSystem(), str(root)) is None
        assert _placement(root)[1] == {"a": False, "b": False}


names = st.text("abc01_", min_size=1, max_size=4).map(lambda s: "0" + s)
entries = st.dictionaries(names, st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=6)


@given(recorded=entries, listed=entries, elsewhere=entries)
def test_a_partition_is_vouched_exactly_when_its_files_equal_the_recorded_ones(recorded, listed, elsewhere):
    """The rule as sets: vouched iff the directory's (name, size, mtime) set is the manifest's for that
    directory; files recorded in other directories never count."""
    files = {**{f"p=x/{n}": v for n, v in recorded.items()}, **{f"p=y/{n}": v for n, v in elsewhere.items()}}
    manifest = Manifest("commit w", layout_of(SPEC), files)
    doubt = manifest.partition_doubt("p=x", [(n, s, m) for n, (s, m) in listed.items()])
    assert (doubt is None) == (listed == recorded), doubt


def test_record_manifest_lists_what_is_there_and_round_trips(tmp_path):
    fs = pafs.LocalFileSystem()
    (tmp_path / "d=1").mkdir()
    (tmp_path / "d=1" / "000000_0").write_bytes(b"abc")
    (tmp_path / "_hidden").write_bytes(b"x")
    (tmp_path / ".staging").mkdir()
    (tmp_path / ".staging" / "000001_0").write_bytes(b"x")
    spec = dataclasses.replace(SPEC, partitioned_by=("d",))
    made = record_manifest(fs, str(tmp_path), spec, "validate")
    assert dict(made.files) == _visible(tmp_path) == {"d=1/000000_0": (3, os.stat(tmp_path / "d=1" / "000000_0")
                                                                       .st_mtime_ns // 1_000_000)}
    assert read_manifest(fs, str(tmp_path)) == made
