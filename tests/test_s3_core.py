"""bucketkit's pure-Python core on an S3 server (issue 48): moto's server on 127.0.0.1, reached through
pyarrow's S3FileSystem (``filesystem=``) and through ``s3://`` URIs; no Spark.

Each table is written once on the local disk with pyarrow alone (Hive's names and placement:
support.scan.write_arrow_table; Hive v1's hash of a non-negative int is the int itself, as in
test_validation; bucketkit's own commit: support.commit) and copied byte for byte to the server. The
golden answers are the local disk's and the rows pyarrow itself reads from the files: discover, plan_scan
(pruned to one bucket), validate, ``bucketkit inspect``, history, time travel and vacuum must say on
S3 what they say on disk, with only the table's root changed in the paths.

Commits onto S3 use the layout of stores that cannot rename a directory (bucketkit.layout.versions:
versions built in place inside the table, published by the pointer ``.bucketkit.live``): they must
write nothing outside the table's prefix, keep versions that time travel reads and vacuum removes,
take the files another engine wrote into the table, and show a reader looping during overwrites one
whole version each time; a writer killed at each step leaves a table that reads whole after recover.
"""

from __future__ import annotations

import json
import os
import posixpath
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

import bucketkit
from bucketkit.cli import main
from bucketkit.errors import (CommitError, ConcurrentModificationError, CorruptTableError, UnfinishedCommitError,
                              VersionNotFoundError)
from bucketkit.layout.discovery import discover
from bucketkit.pruning.plan import plan_scan
from bucketkit.table import open_table
from bucketkit.validation import MisplacedRow
from bucketkit.writing.commit import Transaction, settle
from bucketkit.writing.recovery import recover
from support.commit import SPEC as COMMITTED, as_counter, commit_rows, version_id, version_rows
from support.files import data_files
from support.s3 import s3, s3_server  # noqa: F401 (fixtures)
from support.scan import SPEC as HIVE_V1, rows_for, write_arrow_table

ROWS = rows_for()  # 60 rows over partitions p = 1, 2, NULL; HIVE_V1: 8 buckets by k bigint, ORC
KEY = 42  # in 6 of the rows; k = 42 is one bucket of 8
FOREIGN_V1 = dict(bucketed_by="k", bucket_count=4, bucket_types=["int"], bucketing_version=1)
ONE = {"p=1": [(k, "one") for k in range(6)], "p=2": [(k, "one") for k in range(6, 9)]}
TWO = {"p=1": [(k, "two") for k in range(20, 25)]}
THREE = {"p=3": [(k, "three") for k in range(30, 33)]}

# -- tables and readers -------------------------------------------------------------------------------
@pytest.fixture
def orc_table(tmp_path, s3) -> tuple[str, str]:
    """(local root, S3 root) of one partitioned ORC table with bucketkit metadata, Hive's names, empty files."""
    local = write_arrow_table(str(tmp_path / "t"), HIVE_V1, ROWS)
    return local, s3.upload(local, "t")


def foreign_parquet_table(root: Path) -> str:
    """A table without metadata, as Hive v1 places an int key (bucket ``k % 4``), in Parquet, plus
    ``000001_0_copy_1`` whose row 1 (key 2) belongs in bucket 2."""
    root.mkdir(parents=True)
    for name, keys in [*((f"{b:06d}_0", [k for k in range(40) if k % 4 == b]) for b in range(4)),
                       ("000001_0_copy_1", [1, 2, 5])]:
        pq.write_table(pa.table({"k": pa.array(keys, pa.int32()), "v": [str(k) for k in keys]}), str(root / name))
    return str(root)


def at(data, root: str):
    """Plain data with the table's root written ``<root>``: what must agree between the disk and S3."""
    return json.loads(json.dumps(data, default=str).replace(root, "<root>"))


def read_file(fs, path: str, file_format: str) -> pa.Table:
    """One data file read by pyarrow itself (no bucketkit code)."""
    with fs.open_input_file(path) as f:
        return orc.ORCFile(f).read() if file_format == "orc" else pq.ParquetFile(f).read()


def hive_rows(fs, root: str, paths) -> Counter:
    """(partition directory, k, s, x) of every row of ``paths`` (non-empty files below ``root``)."""
    out: Counter = Counter()
    for path in paths:
        table = read_file(fs, path, "orc")
        where = posixpath.dirname(path[len(root) + 1:])
        out.update((where, *row) for row in zip(*(table.column(c).to_pylist() for c in ("k", "s", "x"))))
    return out


def plan_rows(plan) -> Counter:
    """(p, k, tag) of every file a plan of a committed table selects, read by pyarrow from the plan's filesystem."""
    out: Counter = Counter()
    for part in plan.partitions:
        for path in part.files:
            table = read_file(plan.table.filesystem, path, "parquet")
            out.update((part.values.get("p"), k, tag) for k, tag in zip(*table.to_pydict().values()))
    return out


def commit_to(s3, rows: dict[str, list[tuple[int, str]]], *, mode: str = "append", write_id: str | None = None):
    """bucketkit's own commit (:class:`Transaction`, the lowest commit without Spark) of ``rows`` into the
    table ``t`` on S3, staged there as Parquet files of bucket ``k % 4``, as support.commit stages them on disk."""
    tx = Transaction(s3.path("t"), COMMITTED, mode=mode, filesystem=s3.filesystem, write_id=write_id)
    return tx.commit(stage_to(s3, tx, rows))


def stage_to(s3, tx: Transaction, rows: dict[str, list[tuple[int, str]]]) -> dict[str, str]:
    """:meth:`Transaction.begin`, then ``rows`` staged as :func:`commit_to` stages them: final -> staged path."""
    staging, files = tx.begin(), {}
    for part, items in rows.items():
        for b in sorted({k % 4 for k, _ in items}):
            staged = posixpath.join(staging, f"{part}-{b}.parquet")
            mine = [item for item in items if item[0] % 4 == b]
            pq.write_table(pa.table({"k": [k for k, _ in mine], "tag": [t for _, t in mine]}), staged,
                           filesystem=tx.fs)  # the store's filesystem as the commit opened it
            files[f"{part}/{b:06d}_0_{tx.write_id}.parquet"] = staged
    return files


# -- reads ---------------------------------------------------------------------------------------------
def test_discover_maps_the_same_files_to_the_same_buckets(orc_table, s3):
    local, remote = orc_table

    def mapped(layout):
        files = [(f.path, f.bucket, f.size, f.kind, f.scheme) for p in layout.partition_layouts for f in p.files]
        return {"summary": layout.summary(), "files": files, "version": layout.version}

    on_disk = at(mapped(discover(local, HIVE_V1.bucket_count)), local)
    by_filesystem = discover(remote, HIVE_V1.bucket_count, filesystem=s3.filesystem)
    assert at(mapped(by_filesystem), remote) == on_disk
    by_uri = discover(s3.uri("t"), HIVE_V1.bucket_count)
    assert by_uri.root == remote and at(mapped(by_uri), remote) == on_disk
    # the files themselves, by the server's listing and the local disk's: every visible one mapped, none twice
    visible = {rel: size for rel, size in s3.files("t").items() if not rel.startswith(("_", "."))}
    assert visible == {str(p.relative_to(local)): p.stat().st_size for p in data_files(local)}
    assert sorted(f[0][len(remote) + 1:] for f in mapped(by_filesystem)["files"]) == sorted(visible)
    assert by_filesystem.partitioned_by == ("p",) and len(by_filesystem.partition_layouts) == 3


def test_plan_scan_prunes_to_one_bucket_and_reads_the_matching_rows(orc_table, s3):
    local, remote = orc_table
    on_disk = plan_scan(local, [("k", "=", KEY)])
    plans = [plan_scan(remote, [("k", "=", KEY)], filesystem=s3.filesystem),
             bucketkit.plan_scan(s3.uri("t"), [("k", "=", KEY)])]  # the public entry point, by URI
    for plan in plans:
        assert plan.selected_buckets == on_disk.selected_buckets and len(plan.selected_buckets) == 1
        assert plan.explain().replace(remote, "<root>") == on_disk.explain().replace(local, "<root>")
        assert [f[len(remote):] for f in plan.files] == [f[len(local):] for f in on_disk.files]
        assert (plan.files_selected, plan.files_listed, plan.bytes_listed) == (
            on_disk.files_selected, on_disk.files_listed, on_disk.bytes_listed)
    # golden: pyarrow's own read of every file on disk, filtered; then the planned files on S3, filtered
    everything = hive_rows(pafs.LocalFileSystem(), local, [str(p) for p in data_files(local) if p.stat().st_size])
    wanted = Counter({row: n for row, n in everything.items() if row[1] == KEY})
    assert sum(wanted.values()) == sum(r["k"] == KEY for r in ROWS) == 6
    read = hive_rows(s3.filesystem, remote, plans[0].files)
    assert Counter({row: n for row, n in read.items() if row[1] == KEY}) == wanted
    assert sum(read.values()) < sum(everything.values())  # one bucket per partition was read, not the table


def test_hadoops_s3a_uri_is_the_same_table(orc_table, s3):
    """``s3a://`` (how Spark and the metastore name an S3 location, what a SQL INSERT's commit is handed) is
    pyarrow's ``s3://``: the same plan, not a local directory named ``s3a:``."""
    local, remote = orc_table
    by_s3 = plan_scan(s3.uri("t"), [("k", "=", KEY)])
    by_s3a = plan_scan(s3.uri("t").replace("s3://", "s3a://", 1), [("k", "=", KEY)])
    assert by_s3a.table.filesystem.type_name == "s3"
    assert [p.files for p in by_s3a.partitions] == [p.files for p in by_s3.partitions]
    assert sum(len(p.files) for p in by_s3.partitions) > 0


def test_validate_finds_the_same_misplaced_row(tmp_path, s3):
    local = foreign_parquet_table(tmp_path / "foreign")
    remote = s3.upload(local, "foreign")
    on_disk = bucketkit.validate(local, **FOREIGN_V1)
    for result in (bucketkit.validate(remote, filesystem=s3.filesystem, **FOREIGN_V1),
                   bucketkit.validate(s3.uri("foreign"), **FOREIGN_V1)):
        assert at(result.to_dict(), remote) == at(on_disk.to_dict(), local)
        assert result.misplaced == (MisplacedRow(f"{remote}/000001_0_copy_1", 1, 1, 2, (2,)),)  # Hive v1: 2 % 4
        rows = sum(pq.ParquetFile(s3.filesystem.open_input_file(f"{remote}/{name}")).metadata.num_rows
                   for name in s3.files("foreign"))
        assert (result.files_checked, result.rows_checked) == (5, rows) == (5, 43)


def test_validate_vouches_for_a_table_on_s3_as_on_disk(orc_table, s3):
    """A table whose every row is in place is vouched for (its manifest written through the S3 filesystem),
    and the next plan reads its partitions without re-hashing rows, on S3 as on disk."""
    local, remote = orc_table
    on_disk = bucketkit.validate(local, vouch=True)
    result = bucketkit.validate(remote, filesystem=s3.filesystem, vouch=True)
    assert result.ok and result.rows_checked == len(ROWS)
    assert at(result.to_dict(), remote) == at(on_disk.to_dict(), local)
    assert result.vouched.startswith(f"vouched: {len(data_files(local))} file(s) recorded")
    plan, disk_plan = plan_scan(remote, filesystem=s3.filesystem), plan_scan(local)
    assert [p.vouched for p in plan.partitions] == [p.vouched for p in disk_plan.partitions] == [True] * 3
    assert str(plan.placement) == str(disk_plan.placement)


def test_inspect_reports_the_same_files_rows_and_bytes(orc_table, s3, capsys):
    local, remote = orc_table
    assert main(["inspect", local, "--json"]) == 0
    on_disk = json.loads(capsys.readouterr().out)
    assert main(["inspect", s3.uri("t"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["root"] == remote and at(report, remote) == at(on_disk, local)
    # golden rows per bucket: each Hive-named file's row count by pyarrow (no file or an empty one: 0)
    for part in report["partitions"]:
        directory = part["path"][len(remote):].lstrip("/")
        counts = [orc.ORCFile(path).nrows if os.path.getsize(path) else 0 for path in
                  (os.path.join(local, directory, f"{b:06d}_0") for b in range(HIVE_V1.bucket_count))]
        assert part["rows_per_bucket"] == counts and part["rows"] == sum(counts) > 0
    assert sum(p["rows"] for p in report["partitions"]) == len(ROWS) and report["warnings"] == []


# -- versions ------------------------------------------------------------------------------------------
def test_history_time_travel_and_vacuum_of_a_table_copied_to_s3(tmp_path, s3):
    """Three commits on disk, copied to S3 with the versions kept beside the table: the versions, reads of
    each of them, and vacuum, as on disk (no commit reaches S3 today: see the xfails below)."""
    local = tmp_path / "w" / "t"
    commit_rows(local, ONE)
    commit_rows(local, TWO)
    commit_rows(local, THREE, mode="overwrite")
    settle()
    s3.upload(str(tmp_path / "w"))
    table = open_table(s3.path("t"), filesystem=s3.filesystem)
    versions = bucketkit.history(table)
    assert versions == bucketkit.history(str(local))
    assert [(v.version, v.operation) for v in versions] == [(0, "create"), (1, "append"), (2, "overwrite")]
    assert plan_rows(plan_scan(table)) == as_counter(THREE)
    for number, rows in enumerate([as_counter(ONE), as_counter(ONE) + as_counter(TWO), as_counter(THREE)]):
        assert plan_rows(plan_scan(table, as_of=number)) == rows == plan_rows(plan_scan(str(local), as_of=number))
    # kept versions on S3 are copies, not hard links: vacuum frees every byte of each one it removes
    store = ".t.bucketkit.versions"
    kept = {v.write_id: sum(s3.files(store, v.write_id).values()) for v in versions}
    assert bucketkit.vacuum(table, retain=0, dry_run=True).removed == tuple(versions[:2])
    result = bucketkit.vacuum(table, retain=0)
    assert result.removed == tuple(versions[:2]) == bucketkit.vacuum(str(local), retain=0).removed
    assert result.freed_bytes == kept[versions[0].write_id] + kept[versions[1].write_id] > 0
    assert [s3.files(store, v.write_id) == {} for v in versions] == [True, True, False]
    assert [v.removed is not None for v in bucketkit.history(table)] == [True, True, False]
    with pytest.raises(VersionNotFoundError, match="version 0 .* was removed"):
        plan_scan(table, as_of=0)
    assert plan_rows(plan_scan(table)) == plan_rows(plan_scan(table, as_of=2)) == as_counter(THREE)


def test_commits_onto_s3_keep_versions_that_vacuum_removes_and_write_nothing_outside_the_table(s3):
    commit_to(s3, ONE)
    commit_to(s3, TWO)
    commit_to(s3, THREE, mode="overwrite")
    settle()
    table = open_table(s3.path("t"), filesystem=s3.filesystem)
    versions = bucketkit.history(table)
    assert [(v.version, v.operation) for v in versions] == [(0, "create"), (1, "append"), (2, "overwrite")]
    assert plan_rows(plan_scan(table)) == as_counter(THREE)
    assert plan_rows(plan_scan(table, as_of=0)) == as_counter(ONE)
    assert plan_rows(plan_scan(table, as_of=1)) == as_counter(ONE) + as_counter(TWO)
    objects = s3.files()
    assert objects and all(key.startswith("t/") for key in objects), sorted(objects)  # nothing beside the table
    # every object is hidden from a plain reader: the versions, their records, the pointer
    assert {key.split("/")[1] for key in objects} == {".bucketkit.versions", ".bucketkit.live"}, sorted(objects)
    assert len(bucketkit.vacuum(table, retain=0).removed) == 2
    assert plan_rows(plan_scan(table)) == as_counter(THREE)
    assert {key.split("/")[1] for key in s3.files("t") if key.startswith(".bucketkit.versions/")} == {
        versions[2].write_id, *(v.write_id + ".json" for v in versions)}
    with pytest.raises(VersionNotFoundError, match="version 0 .* was removed"):
        plan_scan(table, as_of=0)


def test_a_commit_published_during_another_fails_the_later_one_and_loses_nothing(s3, monkeypatch):
    """No lock across writers on S3. Two appends staged at once both land when one commits after the other (each
    builds its version from the live one when it commits). One published while the other builds its version
    would be hidden under the other's pointer; the other fails instead (ConcurrentModificationError, its version
    removed), and the same rows appended again land beside the first one's."""
    commit_to(s3, ONE)
    first = Transaction(s3.path("t"), COMMITTED, mode="append", filesystem=s3.filesystem)
    second = Transaction(s3.path("t"), COMMITTED, mode="append", filesystem=s3.filesystem)
    staged_first, staged_second = stage_to(s3, first, TWO), stage_to(s3, second, THREE)
    first.commit(staged_first)
    second.commit(staged_second)
    table = lambda: open_table(s3.path("t"), filesystem=s3.filesystem)  # noqa: E731
    both = as_counter(ONE) + as_counter(TWO) + as_counter(THREE)
    assert plan_rows(plan_scan(table())) == both

    late = Transaction(s3.path("t"), COMMITTED, mode="append", filesystem=s3.filesystem)
    early = Transaction(s3.path("t"), COMMITTED, mode="append", filesystem=s3.filesystem)
    staged_late, staged_early = stage_to(s3, late, {"p=4": [(40, "late")]}), stage_to(s3, early, {"p=5": [(50, "early")]})
    keep = Transaction._keep

    def early_publishes_meanwhile(self, *args):  # late has built its version; early publishes before late's pointer
        if self is late:
            early.commit(staged_early)
        return keep(self, *args)

    monkeypatch.setattr(Transaction, "_keep", early_publishes_meanwhile)
    with pytest.raises(ConcurrentModificationError, match=f"write {early.write_id} was committed during write "
                                                          f"{late.write_id}.*nothing of this write was committed"):
        late.commit(staged_late)
    monkeypatch.undo()
    settle()
    with_early = both + Counter({("5", 50, "early"): 1})
    assert plan_rows(plan_scan(table())) == with_early
    assert not [k for k in s3.files("t") if late.write_id in k]  # its version and journal are gone
    commit_to(s3, {"p=4": [(40, "late")]})
    assert plan_rows(plan_scan(table())) == with_early + Counter({("4", 40, "late"): 1})


def test_a_table_another_engine_wrote_on_s3_is_taken_into_the_first_commit(s3):
    """Files at the table's top (Hive's or Trino's) are the table until bucketkit's first commit, which takes
    them into its version and deletes them once published; a file another engine writes there after a commit
    is refused by readers, naming it, until the next commit takes it in (rows never dropped silently)."""
    def put(rel: str, rows: list[tuple[int, str]]) -> None:
        pq.write_table(pa.table({"k": [k for k, _ in rows], "tag": [t for _, t in rows]}), s3.path("t", rel),
                       filesystem=s3.filesystem)

    hive_rows = {"p=1": [(1, "hive"), (5, "hive")], "p=2": [(6, "hive")]}
    for part, items in hive_rows.items():  # Hive's names: one file per bucket, k % 4 (Hive v1's hash of a small bigint)
        for b in range(4):
            put(f"{part}/{b:06d}_0", [item for item in items if item[0] % 4 == b])
    hive = Counter({("1", 1, "hive"): 1, ("1", 5, "hive"): 1, ("2", 6, "hive"): 1})
    table = lambda: open_table(s3.path("t"), filesystem=s3.filesystem, bucketed_by=["k"], bucket_count=4,  # noqa: E731
                               bucketing_version=1, bucket_types=["bigint"], partitioned_by=["p"], file_format="parquet")
    assert plan_rows(plan_scan(table())) == hive
    commit_to(s3, TWO)  # an append: Hive's rows stay
    settle()
    assert plan_rows(plan_scan(open_table(s3.path("t"), filesystem=s3.filesystem))) == hive + as_counter(TWO)
    assert sorted(k for k in s3.files("t") if not k.startswith(".")) == []  # Hive's copies at the top are gone
    put("p=1/000003_0_copy_1", [(3, "trino")])
    with pytest.raises(CorruptTableError, match=r"1 file\(s\) such as .*/t/p=1/000003_0_copy_1 were written into the table"):
        plan_scan(open_table(s3.path("t"), filesystem=s3.filesystem))
    commit_to(s3, {})  # an append of no rows takes it in
    settle()
    assert plan_rows(plan_scan(open_table(s3.path("t"), filesystem=s3.filesystem))) == (
        hive + as_counter(TWO) + Counter({("1", 3, "trino"): 1}))


@pytest.mark.parametrize("point", ["during_build:2", "before_switch", "after_switch"])
def test_a_writer_killed_on_s3_leaves_a_table_that_recover_restores(s3, point):
    """A writer process SIGKILLed at each step of its commit onto S3: readers see the last committed version
    (before the pointer) or the new one (after it), never a part; recover removes the dead write's version
    (rolled back) or its journal (rolled forward); the next commit succeeds."""
    commit_to(s3, ONE)
    settle()
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import pyarrow.fs as pafs
import test_s3_core
from support.s3 import S3Place
fs = pafs.S3FileSystem(access_key="testing", secret_key="testing", endpoint_override={s3.endpoint!r}, scheme="http",
                       region="us-east-1")
test_s3_core.commit_to(S3Place(fs, {s3.root!r}, {s3.endpoint!r}), test_s3_core.TWO)
"""
    env = {**os.environ, "BUCKETKIT_FAULT": point, "PYTHONPATH": str(Path(__file__).parent.parent)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    table = open_table(s3.path("t"), filesystem=s3.filesystem)
    forward = point == "after_switch"
    assert done.returncode == -signal.SIGKILL, done.stderr
    expected = as_counter(ONE) + (as_counter(TWO) if forward else Counter())
    assert plan_rows(plan_scan(table)) == expected
    actions = recover(s3.path("t"), filesystem=s3.filesystem, stale_after=0)
    assert [a.state for a in actions] == ["rolled forward" if forward else "rolled back"]
    assert plan_rows(plan_scan(table)) == expected
    assert not [k for k in s3.files("t") if k.startswith(".bucketkit-")]  # no journal left
    commit_to(s3, THREE)
    settle()
    assert plan_rows(plan_scan(open_table(s3.path("t"), filesystem=s3.filesystem))) == expected + as_counter(THREE)


def whole_version(rows: Counter) -> int:
    """The overwrite a read saw; fails on a mix of versions or a part of one."""
    tags = sorted({tag for _, _, tag in rows})
    assert tags, "an empty read: no row of any version"
    assert len(tags) == 1, f"a mix of versions {tags}"
    v = int(tags[0][1:])
    assert rows == as_counter(version_rows(v, False)), f"a part of version {v}: {sum(rows.values())} rows"
    return v


def test_a_commit_on_s3_writes_each_object_in_one_request_and_no_directory_markers(s3):
    """What an overwrite commit asks of S3, read from the server's own access log. The table is named by its
    URI, so bucketkit opens the filesystem itself.

    - Each small object (journal, spec, marker, manifest, record, pointer) is one PUT, not a multipart upload's
      three requests.
    - No empty marker object is written for a directory of the version (an object store has none): pyarrow
      writes one only for the parent of an object it deletes.
    - The staged files are copied to their final names and deleted together, not one by one.

    An overwrite of a version of 12 files (3 partitions x 4 buckets), with its 12 staged files, took 175
    requests before these (75 after; 66 once the live version was listed as one tree and a commit stopped asking
    whether the pointer is there before reading it, and the version's files were counted from its manifest)."""
    commit_to(s3, version_rows(0, False), write_id=version_id(0))
    before = len(s3.requests())
    tx = Transaction(s3.uri("t"), COMMITTED, mode="overwrite", write_id=version_id(1))
    files = stage_to(s3, tx, version_rows(1, False))
    tx.commit(files)
    asked = s3.requests()[before:]
    assert not [r for r in asked if "?uploads" in r], asked  # a multipart upload begun
    # no marker for a directory a file is then written into (pyarrow itself writes one for the parent of what
    # it deletes, the journal's and the staging directory's)
    markers = [r.split("?")[0] for r in asked if r.startswith("PUT ") and r.split("?")[0].endswith("/")]
    assert not [m for m in markers if "/p=" in m or m.endswith("/.bucketkit-staging/")], markers
    assert len(markers) <= 2, markers
    assert not [r for r in asked if r.startswith("DELETE ") and "/.bucketkit-staging/" in r
                and not r.split("?")[0].endswith("/.bucketkit-staging/")], asked
    assert sum(r.startswith("POST ") and "?delete" in r for r in asked) >= 1, asked
    assert len(asked) <= 70, f"{len(asked)} requests: {asked}"
    assert whole_version(plan_rows(plan_scan(open_table(s3.path("t"), filesystem=s3.filesystem)))) == 1


def test_a_commit_on_s3_lists_the_live_version_whole_not_partition_by_partition(s3):
    """A commit lists the live version it builds on (every file an append keeps). On S3 one listing returns
    1,000 keys whatever their depth; listed directory by directory, a table of 12 partitions took 13 listings of
    the live version, one after the other, and a table of 1,000 a thousand. The append's rows all land."""
    base = {f"p={p}": [(p * 10 + k, "base") for k in range(2)] for p in range(12)}
    commit_to(s3, base, write_id=version_id(0))
    before = len(s3.requests())
    commit_to(s3, TWO, write_id=version_id(1))
    asked = s3.requests()[before:]
    live = f"prefix={s3.root.split('/', 1)[1]}/t/.bucketkit.versions/{version_id(0)}/"
    listings = [r for r in asked if "list-type=2" in r and live in r]
    assert 1 <= len(listings) <= 2, listings
    rows = plan_rows(plan_scan(open_table(s3.path("t"), filesystem=s3.filesystem)))
    assert rows == Counter((part[2:], k, tag) for part, items in {**base, "p=1": base["p=1"] + TWO["p=1"]}.items()
                           for k, tag in items)


def test_a_reader_sees_whole_versions_while_overwrites_commit_on_s3(s3):
    """A reader plans and reads the table in a loop while 12 overwrites commit: each read is one whole version."""
    commit_to(s3, version_rows(0, False), write_id=version_id(0))
    table = open_table(s3.path("t"), filesystem=s3.filesystem)
    seen: list[int] = []  # the version of each read
    refused: Counter = Counter()  # reads refused cleanly, which show nothing: the table changed under them
    wrong: list[str] = []  # a part or a mix of versions, or an error no reader should raise
    stop = threading.Event()

    def read_loop() -> None:
        while not stop.is_set():
            try:
                seen.append(whole_version(plan_rows(plan_scan(table))))
            except (ConcurrentModificationError, UnfinishedCommitError) as exc:
                refused[type(exc).__name__] += 1
            except Exception as exc:  # noqa: BLE001 - kept: an exception in a thread is lost otherwise
                if isinstance(exc, FileNotFoundError) or isinstance(exc, OSError) and "NOT_FOUND" in str(exc):
                    refused["a planned file gone"] += 1  # deleted since planned (S3: a 404 between HEAD and GET)
                    continue
                wrong.append(f"{type(exc).__name__}: {exc}")
                stop.set()

    reader = threading.Thread(target=read_loop, name="s3-reader", daemon=True)
    reader.start()
    failed = None
    try:
        for v in range(1, 13):
            try:
                commit_to(s3, version_rows(v, False), mode="overwrite", write_id=version_id(v))
            except CommitError as exc:
                failed = f"the commit of version {v}: {exc}"
                break
    finally:
        stop.set()
        reader.join(timeout=60)
        settle()
    reads = f"the reader saw versions {sorted(set(seen))} in {len(seen)} reads, refused {dict(refused)}"
    assert not wrong, f"{wrong[0]} ({reads})"
    assert failed is None, f"{failed} ({reads})"
    assert whole_version(plan_rows(plan_scan(table))) == 12 and len(set(seen)) >= 3, reads
