"""Snapshot directory selection (Hive's AcidUtils.getAcidState) and Hive's write-id/txn lists.

The cases and their expected directories are Hive's ``TestAcidUtils`` and Trino's
``TestAcidTables`` (same layouts, same expectations); the listing is given as relative paths.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.acid.state import acid_state, file_bucket
from bucketkit.errors import AcidStateError, CorruptTableError, InvalidArgumentError
from bucketkit.acid.writeids import ALL, MAX_ID, NONE, SOME, ValidTxnList, ValidWriteIdList

ALL_100 = f"tbl:100:{MAX_ID}:"


def state(paths, write_ids=ALL_100, txns=None, metadata=None):
    return acid_state([(p, 500) for p in paths], write_ids, txns, metadata=metadata)


# -- ValidWriteIdList / ValidTxnList -------------------------------------------------------------
def test_write_id_list_strings_from_a_real_metastore():
    # repl.valid.writeid.list / repl.valid.txnid.list of Hive's data/files/repl_dump (an HDP cluster)
    w = ValidWriteIdList.parse("test_hcube_2.tbl1:3:9223372036854775807::")
    assert (w.table, w.high_watermark, w.min_open, w.exceptions) == ("test_hcube_2.tbl1", 3, MAX_ID, ())
    assert [w.is_valid(i) for i in (1, 3, 4)] == [True, True, False]
    t = ValidTxnList.parse("1915:9223372036854775807::1899,1907")
    assert t.aborted_ids == (1899, 1907) and t.is_aborted(1907) and not t.is_valid(1899) and t.is_valid(1900)
    assert str(t) == "1915:9223372036854775807::1899,1907"
    assert str(w) == "test_hcube_2.tbl1:3:9223372036854775807::"


def test_write_id_list_ranges_follow_hive():
    w = ValidWriteIdList.parse("tbl:10:4:4,6:8")
    assert w.open_ids == (4, 6) and w.aborted_ids == (8,) and str(w) == "tbl:10:4:4,6:8"
    assert w.range_valid(1, 3) == ALL and w.range_valid(4, 4) == NONE and w.range_valid(3, 5) == SOME
    assert w.range_valid(11, 20) == NONE and w.range_valid(9, 12) == SOME
    assert w.range_aborted(8, 8) == ALL and w.range_aborted(7, 9) == SOME and w.range_aborted(4, 6) == NONE
    assert w.is_valid_base(3) and not w.is_valid_base(4)
    assert ValidWriteIdList.parse("null:5:9223372036854775807::").table is None
    with pytest.raises(InvalidArgumentError, match="'tbl:x': expected db.table:<high watermark>"):
        ValidWriteIdList.parse("tbl:x")


# -- TestAcidUtils / TestAcidTables ---------------------------------------------------------------
def test_original():
    s = state(["000000_0", "000000_0_copy_1", "000000_0_copy_2", "000001_1", "000002_0", "random", "_done",
               "_tmp/000000_0", "_tmp/abc/000000_0", "subdir/000000_0"])
    assert s.base is None and s.deltas == () and s.obsolete == ()
    assert s.original_files == ("000000_0", "000000_0_copy_1", "000000_0_copy_2", "000001_1", "000002_0",
                                "random", "subdir/000000_0")


def test_original_deltas():
    s = state(["000000_0", "000001_1", "000002_0", "random", "_done", "_tmp/000000_0",
               "_tmp/delta_025_025/000000_0", "subdir/000000_0", "delta_025_025/bucket_0", "delta_029_029/bucket_0",
               "delta_025_030/bucket_0", "delta_050_100/bucket_0", "delta_101_101/bucket_0"])
    assert s.base is None
    assert s.obsolete == ("delta_025_025", "delta_029_029")
    assert s.original_files == ("000000_0", "000001_1", "000002_0", "random", "subdir/000000_0")
    assert s.deltas == ("delta_025_030", "delta_050_100")
    assert s.files["delta_025_030"] == ("delta_025_030/bucket_0",)


def test_base_deltas():
    s = state(["_tmp/bucket_0", "_tmp/base_5/bucket_0", "base_5/bucket_0", "base_10/bucket_0", "base_49/bucket_0",
               "delta_025_025/bucket_0", "delta_029_029/bucket_0", "delta_025_030/bucket_0",
               "delta_050_105/bucket_0", "delta_90_120/bucket_0"])
    assert s.base == "base_49" and s.original_files == ()
    assert set(s.obsolete) == {"base_5", "base_10", "delta_025_030", "delta_025_025", "delta_029_029"}
    assert s.deltas == ("delta_050_105",)


def test_obsolete_originals():
    s = state(["base_10/bucket_0", "base_5/bucket_0", "000000_0", "000001_1"], f"tbl:150:{MAX_ID}:")
    assert s.base == "base_10" and s.original_files == ()
    assert s.obsolete == ("000000_0", "000001_1", "base_5")


def test_overlapping_delta():
    s = state(["delta_0000063_63/bucket_0", "delta_000062_62/bucket_0", "delta_00061_61/bucket_0",
               "delta_40_60/bucket_0", "delta_0060_60/bucket_0", "delta_052_55/bucket_0", "base_50/bucket_0"])
    assert s.base == "base_50"
    assert s.obsolete == ("delta_0060_60", "delta_052_55")
    assert s.deltas == ("delta_40_60", "delta_00061_61", "delta_000062_62", "delta_0000063_63")


def test_overlapping_delta_with_statement_ids():
    s = state(["delta_0000063_63_0/bucket_0", "delta_000062_62_0/bucket_0", "delta_000062_62_3/bucket_0",
               "delta_00061_61_0/bucket_0", "delta_40_60/bucket_0", "delta_0060_60_1/bucket_0",
               "delta_0060_60_4/bucket_0", "delta_0060_60_7/bucket_0", "delta_052_55/bucket_0",
               "delta_058_58/bucket_0", "base_50/bucket_0"])
    assert s.base == "base_50"
    assert set(s.obsolete) == {"delta_052_55", "delta_058_58", "delta_0060_60_1", "delta_0060_60_4", "delta_0060_60_7"}
    assert s.deltas == ("delta_40_60", "delta_00061_61_0", "delta_000062_62_0", "delta_000062_62_3",
                        "delta_0000063_63_0")


def test_deltas_with_open_txn_in_read():
    assert state(["delta_1_1/bucket_0", "delta_2_5/bucket_0"], "tbl:100:4:4").deltas == ("delta_1_1", "delta_2_5")
    s = state(["delta_1_1/bucket_0", "delta_2_5/bucket_0", "delta_4_4_1/bucket_0", "delta_4_4_3/bucket_0",
               "delta_101_101_1/bucket_0"], "tbl:100:4:4")
    assert s.deltas == ("delta_1_1", "delta_2_5")


def test_base_with_delete_deltas():
    s = state(["base_5/bucket_0", "base_10/bucket_0", "base_49/bucket_0", "delta_025_025/bucket_0",
               "delta_029_029/bucket_0", "delete_delta_029_029/bucket_0", "delta_025_030/bucket_0",
               "delete_delta_025_030/bucket_0", "delta_050_105/bucket_0", "delete_delta_050_105/bucket_0",
               "delete_delta_110_110/bucket_0"])
    assert s.base == "base_49" and s.original_files == ()
    assert set(s.obsolete) == {"base_5", "base_10", "delete_delta_025_030", "delta_025_030", "delta_025_025",
                               "delete_delta_029_029", "delta_029_029"}
    assert s.delete_deltas == ("delete_delta_050_105",) and s.deltas == ("delta_050_105",)


def test_overlapping_delta_and_delete_delta():
    s = state(["delta_0000063_63/bucket_0", "delta_000062_62/bucket_0", "delta_00061_61/bucket_0",
               "delete_delta_00064_64/bucket_0", "delta_40_60/bucket_0", "delete_delta_40_60/bucket_0",
               "delta_0060_60/bucket_0", "delta_052_55/bucket_0", "delete_delta_052_55/bucket_0", "base_50/bucket_0"])
    assert s.base == "base_50"
    assert s.obsolete == ("delete_delta_052_55", "delta_0060_60", "delta_052_55")
    assert s.deltas == ("delta_40_60", "delta_00061_61", "delta_000062_62", "delta_0000063_63")
    assert s.delete_deltas == ("delete_delta_40_60", "delete_delta_00064_64")


def test_minor_compacted_delta_makes_in_between_delete_delta_obsolete():
    s = state(["delta_40_60/bucket_0", "delete_delta_50_50/bucket_0"])
    assert s.deltas == ("delta_40_60",) and s.delete_deltas == () and s.obsolete == ("delete_delta_50_50",)


def test_delete_deltas_with_open_txn_in_read():
    s = state(["delta_1_1/bucket_0", "delta_2_5/bucket_0", "delete_delta_2_5/bucket_0", "delete_delta_3_3/bucket_0",
               "delta_4_4_1/bucket_0", "delta_4_4_3/bucket_0", "delta_101_101_1/bucket_0"], "tbl:100:4:4")
    assert s.deltas == ("delta_1_1", "delta_2_5") and s.delete_deltas == ("delete_delta_2_5",)


# -- the rest of getAcidState: aborted writes, visibility, compacted bases, metadata ---------------
def test_aborted_and_open_writes_are_left_out():
    s = state(["delta_1_1_0/bucket_0", "delta_2_2_0/bucket_0", "delete_delta_2_2_0/bucket_0",
               "delta_3_3_0/bucket_0", "delta_4_4_0/bucket_0"], "tbl:4:3:3:2")
    assert s.deltas == ("delta_1_1_0", "delta_4_4_0") and s.delete_deltas == ()
    assert s.aborted == ("delete_delta_2_2_0", "delta_2_2_0")


def test_compacted_base_needs_every_write_id_below_it_resolved():
    files = ["base_5_v100/bucket_0", "delta_6_6_0/bucket_0"]
    assert state(files, "tbl:6:9223372036854775807::").base == "base_5_v100"
    with pytest.raises(AcidStateError, match="not enough history.*lowest invalid write id 3.*base_5_v100"):
        state(files, "tbl:6:3:3:")
    # an INSERT OVERWRITE base (no _v, no _metadata_acid) only needs its own write id committed
    assert state(["base_5/bucket_0", "delta_1_1_0/bucket_0"], "tbl:6:3:3:").base == "base_5"
    with pytest.raises(AcidStateError):
        state(["base_5/bucket_0"], "tbl:6:3:3:", metadata={"base_5": '{"thisFileVersion":"0","dataFormat":"compacted"}'})


def test_aborted_insert_overwrite_base_is_skipped_and_compactor_base_wins_a_tie():
    s = state(["base_3/bucket_0", "base_5/bucket_0", "delta_4_4_0/bucket_0"], "tbl:5:9223372036854775807::5")
    assert s.base == "base_3" and s.aborted == ("base_5",) and s.deltas == ("delta_4_4_0",)
    s = state(["base_5/bucket_0", "base_5_v9/bucket_0"], "tbl:5:9223372036854775807::")
    assert s.base == "base_5_v9" and s.obsolete == ("base_5",)


def test_visibility_transaction_must_be_committed():
    files = ["delta_1_1_0/bucket_0", "delta_2_2_0/bucket_0", "delta_1_2_v50/bucket_0"]
    assert state(files, "tbl:2:9223372036854775807::").deltas == ("delta_1_2_v50",)
    s = state(files, "tbl:2:9223372036854775807::", "60:50:50:")  # the compactor's txn 50 still open
    assert s.deltas == ("delta_1_1_0", "delta_2_2_0") and s.aborted == ()
    s = state(files, "tbl:2:9223372036854775807::", "60:9223372036854775807::50")
    assert s.deltas == ("delta_1_1_0", "delta_2_2_0") and s.aborted == ("delta_1_2_v50",)


def test_metadata_file_and_side_files():
    s = state(["base_5/bucket_00000", "base_5/_metadata_acid", "base_5/_orc_acid_version",
               "delta_6_7/bucket_00000", "delta_6_7/bucket_00000_flush_length"],
              metadata={"base_5": '{"thisFileVersion":"0","dataFormat":"compacted"}'})
    assert s.files == {"base_5": ("base_5/bucket_00000",), "delta_6_7": ("delta_6_7/bucket_00000",)}
    with pytest.raises(CorruptTableError, match="base_5/_metadata_acid: thisFileVersion='1'"):
        state(["base_5/bucket_0"], metadata={"base_5": '{"thisFileVersion":"1","dataFormat":"compacted"}'})
    with pytest.raises(CorruptTableError, match="delta_x_1: looks like a Hive ACID directory"):
        state(["delta_x_1/bucket_0"])


def test_empty_base_directory_still_counts_and_empty_originals_are_ignored():
    s = acid_state([("base_7", None), ("delta_3_3_0/bucket_00000", 10), ("000000_0", 0), ("000001_0", 5)])
    assert s.base == "base_7" and s.files == {"base_7": ()} and s.obsolete == ("000001_0", "delta_3_3_0")
    s = acid_state([("base_7", 10), ("delta_3_3_0/bucket_00000", 10)])  # a *file* named base_7 is an original
    assert s.base is None and s.original_files == ("base_7",) and s.deltas == ("delta_3_3_0",)


def test_file_bucket():
    assert [file_bucket(n) for n in ("bucket_00003", "bucket_00003_7", "d/000012_0_copy_2", "x")] == [3, 3, 12, None]


# -- differential against Hive's own AcidUtils.getAcidState, with open and aborted writes ---------
def _unique_name(d):
    return _name(*d)


def _name(kind, lo, span, stmt):
    if kind == "base":
        return f"base_{lo:07d}"
    return f"{kind}_{lo:07d}_{lo + span:07d}" + ("" if stmt is None else f"_{stmt:04d}")


_dirs = st.lists(st.tuples(st.sampled_from(["base", "delta", "delta", "delete_delta"]), st.integers(1, 8),
                           st.integers(0, 3), st.none() | st.integers(0, 2)),
                 min_size=1, max_size=8, unique_by=_unique_name)
_snapshots = st.tuples(st.integers(1, 10), st.sets(st.integers(1, 10), max_size=3),
                       st.sets(st.integers(1, 10), max_size=3))


@settings(max_examples=60)
@given(dirs=_dirs, snapshot=_snapshots)
def test_selection_agrees_with_hive_under_open_and_aborted_writes(spark, tmp_path_factory, dirs, snapshot):
    """Hive 2.3's getAcidState (in pyspark's jars) takes transaction ids where Hive 3 has write ids;
    its bases are all compactor bases, so ours carry a ``_metadata_acid`` saying so."""
    # A metastore lists open and aborted ids at or below the high watermark only (anything above it is
    # invisible anyway); Hive 2.3 counts an id above it twice in isTxnRangeAborted, a state no snapshot has.
    hwm = snapshot[0]
    open_ids = sorted(i for i in snapshot[1] if i <= hwm)
    aborted = sorted(i for i in snapshot[2] - snapshot[1] if i <= hwm)
    root = tmp_path_factory.mktemp("acid")
    names = [_name(*d) for d in dirs]
    for name in names:
        (root / name).mkdir()
        (root / name / "bucket_00000").write_bytes(b"x")
    (root / "000000_0").write_bytes(b"x")
    min_open = open_ids[0] if open_ids else MAX_ID
    text = f"{hwm}:{min_open}:{','.join(map(str, open_ids))}:{','.join(map(str, aborted))}"
    jvm = spark.sparkContext._jvm
    txn_list = jvm.org.apache.hadoop.hive.common.ValidReadTxnList
    if not txn_list().writeToString().endswith("::"):  # storage-api before aborted ids: hwm:minOpen:ex1:ex2...
        text_for_hive = ":".join(map(str, [hwm, min_open, *sorted(open_ids + aborted)]))
    else:
        text_for_hive = text
    compacted = '{"thisFileVersion":"0","dataFormat":"compacted"}'
    try:
        ours = acid_state([(n + "/bucket_00000", 1) for n in names] + [("000000_0", 1)], f"t:{text}",
                          metadata={n: compacted for n in names if n.startswith("base_")})
    except AcidStateError:
        ours = None
    try:
        hive = jvm.org.apache.hadoop.hive.ql.io.AcidUtils.getAcidState(
            jvm.org.apache.hadoop.fs.Path(str(root)), jvm.org.apache.hadoop.conf.Configuration(),
            txn_list(text_for_hive))
    except Exception as e:  # py4j wraps Hive's IOException("Not enough history ...")
        assert "history" in str(e) and ours is None
        return
    assert ours is not None
    base = hive.getBaseDirectory()
    assert ours.base == (None if base is None else base.getName())
    assert [d.getPath().getName() for d in hive.getCurrentDirectories()] == sorted(
        ours.deltas + ours.delete_deltas, key=_hive_order)
    obsolete = {s.getPath().getName() for s in hive.getObsolete()}
    assert set(ours.obsolete) == obsolete
    assert list(ours.original_files) == [f.getFileStatus().getPath().getName() for f in hive.getOriginalFiles()]


def _hive_order(name):
    from bucketkit.acid.naming import parse_acid_dir
    a = parse_acid_dir(name)
    return a.min_write_id, -a.max_write_id, -1 if a.statement_id is None else a.statement_id, name
