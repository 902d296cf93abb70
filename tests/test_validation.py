"""bucketkit.validate through the Python API, without a JVM.

Expected buckets come from engines, not from bucketkit: Hive's v1 hash of an int is the int itself
(``ObjectInspectorUtils.hashCode``), so a non-negative key ``k`` belongs in bucket ``k % n``; the
Spark ``bucketBy`` table is Spark's own output (Trino's ``spark_bucketed_nation`` test resource), whose
file names carry the bucket Spark's hash chose for every row in them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pytest

import bucketkit
from bucketkit.errors import InvalidArgumentError, TableNotFoundError
from bucketkit.layout.metadata import TableSpec, write_spec
from bucketkit.table import open_table
from bucketkit.validation import MisplacedRow, ValidationResult

from support.engine import ENGINE_FILES

SPARK_NATION = ENGINE_FILES / "trino" / "spark_bucketed_nation"
FOREIGN_V1 = dict(bucket_count=4, bucketed_by="k", bucket_types=["int"], bucketing_version=1)


def orc_file(path: Path, keys: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    orc.write_table(pa.table({"k": pa.array(keys, pa.int32()), "v": [str(k) for k in keys]}), str(path))


def hive_v1_table(root: Path, n: int = 4, rows: range = range(100)) -> Path:
    """Hive's layout of an int-keyed v1 table: file ``00000b_0`` holds the keys ``k % n == b``."""
    for b in range(n):
        orc_file(root / f"{b:06d}_0", [k for k in rows if k % n == b])
    return root


def test_a_well_bucketed_table_is_ok(tmp_path):
    result = bucketkit.validate(str(hive_v1_table(tmp_path)), **FOREIGN_V1)
    assert isinstance(result, ValidationResult) and result.ok
    assert (result.files_checked, result.rows_checked, result.misplaced, result.skipped) == (4, 100, (), ())
    assert result.spec_source == "arguments" and result.bucket_function.startswith("Hive bucketing v1")
    assert str(result).endswith("ok: every row is in its bucket")


def test_a_misplaced_row_names_its_file_row_and_buckets(tmp_path):
    hive_v1_table(tmp_path)
    orc_file(tmp_path / "000001_0_copy_1", [1, 2, 5])  # 2 % 4 == 2: row 1 of a bucket-1 file is misplaced
    result = bucketkit.validate(str(tmp_path), **FOREIGN_V1)
    assert not result.ok and result.rows_checked == 103
    assert result.misplaced == (MisplacedRow(str(tmp_path / "000001_0_copy_1"), 1, 1, 2, (2,)),)
    assert result.to_dict()["misplaced"] == [{"file": str(tmp_path / "000001_0_copy_1"), "row": 1, "bucket": 1,
                                              "expected_bucket": 2, "key": [2]}]
    assert "key [2] is in bucket 1, belongs in bucket 2" in str(result) and "1 misplaced row(s)" in str(result)
    assert bucketkit.validate(str(tmp_path), every=2, **FOREIGN_V1).ok  # rows 0 and 2 of that file only
    assert not bucketkit.validate(str(tmp_path), sample=1.0, **FOREIGN_V1).ok


def test_the_spec_from_metadata_or_a_table_object(tmp_path):
    hive_v1_table(tmp_path)
    write_spec(str(tmp_path), TableSpec.create("k", 4, columns={"k": "int", "v": "string"}, bucketing_version=1))
    result = bucketkit.validate(str(tmp_path))
    assert result.ok and result.spec_source == "bucketkit metadata" and result.rows_checked == 100
    result = bucketkit.validate(open_table(str(tmp_path)))
    assert result.ok and result.spec_source == "table"
    with pytest.raises(InvalidArgumentError, match="bucket_count=8"):  # arguments must agree with the metadata
        bucketkit.validate(str(tmp_path), bucket_count=8)


def test_partition_filter_checks_only_the_partitions_it_accepts(tmp_path):
    hive_v1_table(tmp_path / "dt=1")
    orc_file(tmp_path / "dt=2" / "000000_0", [1])  # misplaced, but not asked for
    result = bucketkit.validate(str(tmp_path), partition_filter=lambda v: v["dt"] == "1", **FOREIGN_V1)
    assert result.ok and result.rows_checked == 100
    assert not bucketkit.validate(str(tmp_path), **FOREIGN_V1).ok


def test_an_unknown_hash_is_refused_never_guessed(tmp_path):
    hive_v1_table(tmp_path)
    with pytest.raises(InvalidArgumentError, match="cannot validate, the hash is unknown") as info:
        bucketkit.validate(str(tmp_path), bucket_count=4, bucketed_by="k", bucket_types=["int"])
    assert "bucketing_version=1" in str(info.value) and "hash_family='spark'" in str(info.value)
    with pytest.raises(TableNotFoundError, match="does not exist"):
        bucketkit.validate(str(tmp_path / "missing"), **FOREIGN_V1)
    with pytest.raises(InvalidArgumentError, match="not both"):
        bucketkit.validate(str(tmp_path), sample=0.5, every=2, **FOREIGN_V1)
    with pytest.raises(InvalidArgumentError, match="every=0"):
        bucketkit.validate(str(tmp_path), every=0, **FOREIGN_V1)


@pytest.mark.skipif(not SPARK_NATION.is_dir(), reason=f"engine files not found at {SPARK_NATION}")
def test_a_spark_bucketby_table_is_rehashed_with_sparks_hash(tmp_path):
    # Trino's TestHiveFileFormats: nationkey int, 3 buckets, written by Spark's bucketBy (25 nations).
    spec = dict(bucket_count=3, bucketed_by="nationkey", bucket_types=["int"])
    result = bucketkit.validate(str(SPARK_NATION), hash_family="spark", **spec)
    assert result.ok and (result.files_checked, result.rows_checked, result.skipped) == (3, 25, ())
    assert "Spark" in result.bucket_function
    # Declared Hive-hashed, the Spark file names contradict it: skipped with the reason, not judged.
    hive = bucketkit.validate(str(SPARK_NATION), bucketing_version=1, **spec)
    assert hive.rows_checked == 0 and len(hive.skipped) == 1 and "spark file names" in hive.skipped[0]
    # A file renamed to another bucket: each of its rows belongs in the bucket Spark wrote it for.
    copy = tmp_path / "nation"
    shutil.copytree(SPARK_NATION, copy)
    victim = sorted(p for p in os.listdir(copy) if p.endswith("_00001.c000.snappy.orc"))[0]
    os.rename(copy / victim, copy / victim.replace("_00001.", "_00002."))
    moved = bucketkit.validate(str(copy), hash_family="spark", **spec)
    assert moved.misplaced_rows == 5 and {(m.bucket, m.expected_bucket) for m in moved.misplaced} == {(2, 1)}


def test_an_acid_table_is_checked_on_its_snapshot_rows(tmp_path):
    """Hive v1 puts int key k in bucket k % n; a misplaced row counts only while the snapshot has it."""
    from support.acid import misplaced_acid_table

    root, prop = misplaced_acid_table(tmp_path / "acid")
    result = bucketkit.validate(str(root), **FOREIGN_V1, write_ids="db.acid:5:5:5:")
    assert [(m.key, m.bucket, m.expected_bucket, m.row_id) for m in result.misplaced] == [((12,), 1, 0, (3, prop, 0))]
    assert result.rows_checked == 40 - 1 + 1 and result.files_checked == 5
    assert "row__id (writeid, bucketid, rowid) (3, 536936448, 0)" in str(result.misplaced[0])
    assert result.to_dict()["misplaced"][0]["row_id"] == [3, prop, 0]
    everything = bucketkit.validate(str(root), **FOREIGN_V1)  # no snapshot given: write 5 counts as committed
    assert sorted(m.key for m in everything.misplaced) == [(12,), (20,)]


def test_an_insert_only_acid_table_is_checked_file_by_file_on_its_snapshot(tmp_path):
    """Insert-only ACID buckets are plain files: each current file is checked and named; files of an
    obsolete original, or of an aborted write, are not what readers see and are not judged."""
    def put(rel: str, keys: list[int]) -> None:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        orc.write_table(pa.table({"x": pa.array(keys, pa.int64())}), str(tmp_path / rel))

    put("000000_0", [1])  # original, superseded by base_2: misplaced, but no reader sees it
    put("base_0000002/000000_0", [10])
    put("base_0000002/000001_0", [11])
    put("delta_0000003_0000003_0000/000000_0", [20, 31])  # 31 hashes to bucket 1 (Hive v1: a bigint's low word)
    put("delta_0000004_0000004_0000/000001_0", [40])  # misplaced, but write 4 aborted in the snapshot below
    spec = dict(bucket_count=2, bucketed_by="x", bucket_types=["bigint"], bucketing_version=1)
    result = bucketkit.validate(str(tmp_path), write_ids="db.t:5:9223372036854775807::4", **spec)
    assert [(m.file.rsplit("/", 2)[-2:], m.row, m.bucket, m.expected_bucket, m.key, m.row_id)
            for m in result.misplaced] == [(["delta_0000003_0000003_0000", "000000_0"], 1, 0, 1, (31,), None)]
    assert (result.files_checked, result.rows_checked) == (3, 4)
    # with every write id committed, write 4's file is read and its misplaced row found
    assert sorted(m.key for m in bucketkit.validate(str(tmp_path), **spec).misplaced) == [(31,), (40,)]
