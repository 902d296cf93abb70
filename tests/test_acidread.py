"""Reading Hive ACID snapshots bucket by bucket, against real Hive 3 files.

Expected rows come from the files' owning tests: Trino's ``TestOrcPageSourceFactory`` (the 25k-row
nation delta: each TPC-H nation 1000 times, sorted on nation key; its two delete deltas remove
nation keys 5 and 19; the original-file table loses UNITED STATES, key 24), ``TestOrcDeletedRows``
(delete events (2, 536870912, 0) and (6, 536870912, 0); the original-file delete event hits row 2 of
bucket 0), ``TestOriginalFilesUtils`` (bucket 2's third original file starts at row id 8) and the
version check's message; Hive's ``repl_load_old_version.q.out`` for the HDP managed tables.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as po
import pytest

from bucketkit.acid.read import bucket_files, read_bucket, read_snapshot, snapshot
from bucketkit.errors import AcidStateError

from support.engine import ENGINE, needs_engine

pytestmark = needs_engine
FS = pafs.LocalFileSystem()


def read(rel, write_ids=None, row_id=False):
    root = os.path.join(ENGINE, rel)
    return read_snapshot(FS, root, snapshot(FS, root, write_ids), write_ids=write_ids, row_id=row_id)


def nations():
    """TPC-H nation as Hive wrote it into the plain original file of Trino's test table."""
    return po.ORCFile(os.path.join(ENGINE, "trino/fullacidNationTableWithOriginalFiles/000000_0")).read().to_pylist()


def test_delta_with_two_delete_deltas_matches_trino():
    table = read("composed/nation_acid_with_delete_deltas")
    expected = [n for n in nations() for _ in range(1000) if n["n_nationkey"] not in (5, 19)]
    assert table.num_rows == 23000
    assert table.to_pylist() == expected


def test_snapshot_before_the_deletes_sees_every_row():
    # write ids 3 and 4 (the two delete deltas) are not yet committed in this snapshot
    table = read("composed/nation_acid_with_delete_deltas", "default.nation:2:9223372036854775807::")
    assert table.num_rows == 25000
    table = read("composed/nation_acid_with_delete_deltas", "default.nation:4:3:3:")
    assert sorted(set(table["n_nationkey"].to_pylist())) == [k for k in range(25) if k != 19]


def test_original_file_with_a_delete_event_on_its_synthetic_row_id():
    table = read("trino/fullacidNationTableWithOriginalFiles", row_id=True)
    assert table.drop_columns(["row__id"]).to_pylist() == [n for n in nations() if n["n_nationkey"] != 24]
    assert table["row__id"][0].as_py() == {"writeid": 0, "bucketid": 536870912, "rowid": 0}


def test_original_files_of_three_buckets_and_their_row_ids():
    root = os.path.join(ENGINE, "trino/dummy_id_data_orc")
    state = snapshot(FS, root)
    assert bucket_files(state, 2).originals == ("000002_0", "000002_0_copy_1", "000002_0_copy_2")
    bucket2 = read_bucket(FS, root, state, 2, row_id=True)
    assert [r["rowid"] for r in bucket2["row__id"].to_pylist()][8] == 8  # TestOriginalFilesUtils: copy_2 starts at 8
    assert {r["bucketid"] for r in bucket2["row__id"].to_pylist()} == {536870912 | 2 << 16}
    bucket0 = read_bucket(FS, root, state, 0, row_id=True)
    plain = po.ORCFile(os.path.join(root, "000000_0")).read().to_pylist()
    assert bucket0.drop_columns(["row__id"]).to_pylist() == [plain[i] for i in (0, 1, 3)]
    assert read_bucket(FS, root, state, 1).num_rows == 4  # the delete event is bucket 0's


def test_delete_deltas_with_and_without_statement_ids():
    root = os.path.join(ENGINE, "trino/fullacid_delete_delta_test")
    state = snapshot(FS, root)
    # delete_delta_4_4 (a minor compaction's name) supersedes the per-statement delete_delta_4_4_0
    assert state.delete_deltas == ("delete_delta_0000004_0000004", "delete_delta_0000007_0000007_0000")
    assert state.obsolete == ("delete_delta_0000004_0000004_0000",)
    events = [po.ORCFile(os.path.join(root, d, "bucket_00000")).read(columns=["originalTransaction", "bucket", "rowId"])
              .to_pylist()[0] for d in state.delete_deltas]
    assert {tuple(e.values()) for e in events} == {(2, 536870912, 0), (6, 536870912, 0)}


def test_hdp_managed_tables_match_hive_q_out():
    base = "hive/test_hcube_2.db"
    assert read(f"{base}/tbl1")["fld"].to_pylist() == [1, 1, 1]
    assert read(f"{base}/tbl2")["fld"].to_pylist() == [1, 1]
    for t in ("tbl3", "tbl4", "tbl5", "tbl6"):
        assert read(f"{base}/{t}")["fld"].to_pylist() == [1]
    # the metastore's snapshot of tbl1 when it was dumped (repl.valid.writeid.list)
    assert read(f"{base}/tbl1", "test_hcube_2.tbl1:3:9223372036854775807::").num_rows == 3
    assert read(f"{base}/tbl1", "test_hcube_2.tbl1:3:2:2:").num_rows == 2


def test_acid_version_validation(tmp_path):
    hive3 = os.path.join(ENGINE, "trino/acid_version_validation/acid_version_hive_3")
    (tmp_path / "delta_0000001_0000001_0000").mkdir()
    (tmp_path / "delta_0000001_0000001_0000/bucket_00000").write_bytes(open(os.path.join(hive3, "00000_0"), "rb").read())
    assert read_snapshot(FS, str(tmp_path), snapshot(FS, str(tmp_path))).num_rows == 1
    plain = os.path.join(ENGINE, "trino/acid_version_validation/no_orc_acid_version_in_metadata/00000_0")
    bad = tmp_path / "delta_0000002_0000002_0000"
    bad.mkdir()
    (bad / "bucket_00001").write_bytes(open(plain, "rb").read())
    with pytest.raises(AcidStateError, match=r"Hive transactional tables are supported since Hive 3\.0\. Expected "
                       r"`hive.acid.version` in ORC metadata in .*delta_0000002_0000002_0000/bucket_00001 to be >=2 "
                       r"but was <empty>\. If you have upgraded from an older version of Hive, make sure a major "
                       r"compaction has been run at least once after the upgrade\."):
        read_bucket(FS, str(tmp_path), snapshot(FS, str(tmp_path)), 1)
    (bad / "_orc_acid_version").write_text("2")  # the directory vouches for the file: Trino reads on
    with pytest.raises(AcidStateError, match="bucket_00001: columns .* a Hive 3 full-ACID file has"):
        read_bucket(FS, str(tmp_path), snapshot(FS, str(tmp_path)), 1)


def test_bucket_pruning_reads_only_that_buckets_files():
    root = os.path.join(ENGINE, "trino/dummy_id_data_orc")
    files = bucket_files(snapshot(FS, root), 1)
    assert (files.inserts, files.deletes, files.originals) == ((), (), ("000001_0",))
    files = bucket_files(snapshot(FS, root), 0)
    assert files.deletes == ("delete_delta_10000001_10000001_0000/bucket_00000",)


def test_empty_state_reads_nothing(tmp_path):
    assert read_snapshot(FS, str(tmp_path), snapshot(FS, str(tmp_path))) == pa.table({})


def test_insert_only_table_reads_plain_files_of_the_snapshot(tmp_path):
    from bucketkit.acid.read import read_insert_only

    def put(rel, values):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        po.write_table(pa.table({"x": values}), str(tmp_path / rel))

    put("000000_0", [1])                         # original, superseded by base_2
    put("base_0000002/000000_0", [10])
    put("base_0000002/000001_0", [11])
    put("delta_0000003_0000003_0000/000000_0", [30])
    put("delta_0000004_0000004_0000/000001_0", [40])  # aborted
    put("delta_0000005_0000005_0000/HIVE_UNION_SUBDIR_1/000000_0", [50])  # union all writes a sub-directory
    state = snapshot(FS, str(tmp_path), "db.t:5:9223372036854775807::4")
    assert state.aborted == ("delta_0000004_0000004_0000",)
    assert sorted(read_insert_only(FS, str(tmp_path), state)["x"].to_pylist()) == [10, 11, 30, 50]
    assert sorted(read_insert_only(FS, str(tmp_path), state, bucket=1)["x"].to_pylist()) == [11]
