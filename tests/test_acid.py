"""Hive ACID directory names, current-directory selection and the bucket codec."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.acid.naming import (AcidDir, BucketCodec, decode_bucket_property, encode_bucket_property,
                            is_acid_side_file, original_row_id_bases, parse_acid_dir)
from bucketkit.acid.state import select_current
from bucketkit.errors import InvalidArgumentError


def test_parse_directory_names():
    assert parse_acid_dir("base_0000005") == AcidDir("base", 5, 5)
    assert parse_acid_dir("base_0000005_v0000123") == AcidDir("base", 5, 5, None, 123)
    assert parse_acid_dir("delta_0000001_0000003") == AcidDir("delta", 1, 3)
    assert parse_acid_dir("delta_0000004_0000004_0002") == AcidDir("delta", 4, 4, 2)
    assert parse_acid_dir("delete_delta_0000004_0000004_0000") == AcidDir("delete_delta", 4, 4, 0)
    assert parse_acid_dir("delta_0000001_0000009_v0000100") == AcidDir("delta", 1, 9, None, 100)
    for foreign in ("base", "base_x", "delta_1", "delta_5_3", "dt=1", "bucket_00000", "delta_1_2_3_4"):
        assert parse_acid_dir(foreign) is None, foreign


@given(kind=st.sampled_from(["base", "delta", "delete_delta"]), lo=st.integers(0, 10**9),
       span=st.integers(0, 10**3), stmt=st.none() | st.integers(0, 9999), vis=st.none() | st.integers(0, 10**9))
def test_directory_name_round_trip(kind, lo, span, stmt, vis):
    acid = (AcidDir.base(lo, visibility_txn_id=vis) if kind == "base"
            else AcidDir.delta(lo, lo + span, stmt, delete=kind == "delete_delta", visibility_txn_id=vis))
    assert parse_acid_dir(acid.name) == acid


def test_side_files():
    assert is_acid_side_file("_orc_acid_version")
    assert is_acid_side_file("bucket_00001_flush_length")
    assert not is_acid_side_file("bucket_00001")


def test_select_current_hive_rules():
    state = select_current([
        "base_0000005", "base_0000010", "delta_0000001_0000001_0000", "delta_0000011_0000011_0000",
        "delete_delta_0000011_0000011_0000", "delta_0000012_0000012_0000", "delta_0000012_0000012_0001",
        "delta_0000010_0000010_0000"])
    assert state.base == "base_0000010"
    assert state.deltas == ("delta_0000011_0000011_0000", "delta_0000012_0000012_0000", "delta_0000012_0000012_0001")
    assert state.delete_deltas == ("delete_delta_0000011_0000011_0000",)
    assert state.obsolete == ("base_0000005", "delta_0000001_0000001_0000", "delta_0000010_0000010_0000")
    assert not state.originals_current


def test_select_current_minor_compaction_supersedes_narrow_deltas():
    state = select_current(["delta_0000001_0000001_0000", "delta_0000001_0000003", "delta_0000002_0000002_0000",
                            "delete_delta_0000001_0000003", "delete_delta_0000002_0000002_0000",
                            "delta_0000004_0000004_0000"])
    assert state.base is None and state.originals_current
    assert state.deltas == ("delta_0000001_0000003", "delta_0000004_0000004_0000")
    assert state.delete_deltas == ("delete_delta_0000001_0000003",)
    assert set(state.obsolete) == {"delta_0000001_0000001_0000", "delta_0000002_0000002_0000",
                                   "delete_delta_0000002_0000002_0000"}
    with pytest.raises(InvalidArgumentError, match="'dt=1' is not an ACID directory"):
        select_current(["dt=1"])


def test_bucket_codec_reference_values():
    assert decode_bucket_property(536936448) == BucketCodec(1, 1, 0)
    assert decode_bucket_property(536870912) == BucketCodec(1, 0, 0)
    assert decode_bucket_property(7) == BucketCodec(0, 7, 0)
    assert encode_bucket_property(1) == 536936448
    with pytest.raises(InvalidArgumentError, match="unknown BucketCodec version 2"):
        decode_bucket_property(2 << 29)
    with pytest.raises(InvalidArgumentError, match="0..4095"):
        encode_bucket_property(4096)


@given(bucket=st.integers(0, 4095), stmt=st.integers(0, 4095))
def test_bucket_codec_round_trip(bucket, stmt):
    value = encode_bucket_property(bucket, stmt)
    assert decode_bucket_property(value) == BucketCodec(1, bucket, stmt)
    assert decode_bucket_property(value - 2**32) == BucketCodec(1, bucket, stmt)  # as a signed int


def test_original_row_id_bases_count_earlier_files_of_the_same_bucket():
    files = [("000001_0", 1, 5), ("000000_0_copy_1", 0, 7), ("000000_0", 0, 10), ("000000_0_copy_2", 0, 1)]
    assert original_row_id_bases(files) == {"000000_0": 0, "000000_0_copy_1": 10, "000000_0_copy_2": 17,
                                            "000001_0": 0}


# -- differential against Hive's own AcidUtils.getAcidState (every transaction committed) ----------
acid_dirs = st.lists(st.builds(
    lambda kind, lo, span, stmt: AcidDir.base(lo) if kind == "base" else AcidDir.delta(
        lo, lo + span, stmt, delete=kind == "delete_delta"),
    st.sampled_from(["base", "delta", "delta", "delete_delta"]), st.integers(1, 8), st.integers(0, 3),
    st.none() | st.integers(0, 2)), min_size=1, max_size=8, unique_by=lambda a: a.name)


@settings(max_examples=40)
@given(dirs=acid_dirs)
def test_select_current_agrees_with_hive(spark, tmp_path_factory, dirs):
    root = tmp_path_factory.mktemp("acid")
    for acid in dirs:
        (root / acid.name).mkdir()
        (root / acid.name / "bucket_00000").write_bytes(b"x")
    (root / "000000_0").write_bytes(b"x")
    jvm = spark.sparkContext._jvm
    txns = jvm.org.apache.hadoop.hive.common.ValidReadTxnList(
        spark.sparkContext._gateway.new_array(jvm.long, 0), 2**63 - 1)
    hive_state = jvm.org.apache.hadoop.hive.ql.io.AcidUtils.getAcidState(
        jvm.org.apache.hadoop.fs.Path(str(root)), jvm.org.apache.hadoop.conf.Configuration(), txns)
    base = hive_state.getBaseDirectory()
    current = {d.getPath().getName() for d in hive_state.getCurrentDirectories()}
    obsolete = {s.getPath().getName() for s in hive_state.getObsolete()}
    originals = [f.getFileStatus().getPath().getName() for f in hive_state.getOriginalFiles()]

    ours = select_current(a.name for a in dirs)
    assert ours.base == (None if base is None else base.getName())
    assert set(ours.deltas) | set(ours.delete_deltas) == current
    assert set(ours.obsolete) | ({"000000_0"} if not ours.originals_current else set()) == obsolete
    assert ours.originals_current == (originals == ["000000_0"])
