"""The pure half of bucketkit.write without a JVM: options, reconciling specs, and finalize (names, empty
bucket files, commit) over a staging directory laid out as Spark's ``partitionBy`` writes it.

Expected names are Hive's and Trino's conventions, written out here (Trino's HiveBucketing patterns), not
taken from bucketkit.layout.naming; expected row counts and schemas are what pyarrow reads from the files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from bucketkit.writing.commit import Transaction, visible_files
from bucketkit.errors import CorruptTableError, InvalidArgumentError, SpecMismatchError, TableExistsError
from bucketkit.layout.metadata import TableSpec, read_spec
from bucketkit.writing.steps import WriteOptions, WriteTarget, finalize, path_target, reconcile

# Trino's HiveBucketing.BUCKET_PATTERNS: Hive's "000003_0..." and legacy Presto's "<query id>_bucket-00003...".
HIVE_NAME = re.compile(r"(0\d+)_\d+.*")
LEGACY_PRESTO_NAME = re.compile(r"\d{8}_\d{6}_\d{5}_[a-z0-9]{5}_bucket-(\d+)(?:[-_.].*)?")
SCHEMA = pa.schema([("k", pa.int32()), ("s", pa.string())])


def spec(**kw) -> TableSpec:
    return TableSpec.create("k", 4, columns={"k": "int", "s": "string"}, **kw)


def stage(tx: Transaction, relpath: str, keys: list[int], fmt: str = "orc") -> None:
    """A file where Spark's partitionBy(..., bucketkit_bucket) puts it, below ``<staging>/data``."""
    path = Path(tx.staging) / "data" / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"k": pa.array(keys, pa.int32()), "s": [str(k) for k in keys]})
    (orc.write_table if fmt == "orc" else pq.write_table)(table, str(path))


def begin(root: Path, table_spec: TableSpec, mode: str = "error") -> Transaction:
    tx = Transaction(str(root), table_spec, mode=mode, grace=0)
    tx.begin()
    return tx


def rows_of(path: str) -> list[int]:
    reader = orc.read_table if path.endswith(".orc") else pq.read_table
    return reader(path).column("k").to_pylist()


def test_hive_names_one_file_per_bucket_and_hidden_staged_files_skipped(tmp_path):
    root = tmp_path / "t"
    tx = begin(root, spec(partitioned_by=["p"]))
    stage(tx, "p=a/bucketkit_bucket=1/part-00000-x.c000.orc", [1, 5])
    stage(tx, "p=a/bucketkit_bucket=3/part-00001-x.c000.orc", [3])
    stage(tx, "p=__HIVE_DEFAULT_PARTITION__/bucketkit_bucket=0/part-00002-x.c000.orc", [4, 8, 12])
    (Path(tx.staging) / "data" / "_SUCCESS").write_bytes(b"")
    (Path(tx.staging) / "data" / "p=a" / "bucketkit_bucket=1" / ".part-00000-x.c000.orc.crc").write_bytes(b"x")
    committed = []
    result = finalize(tx, WriteOptions(), path_target(str(root), None, "error"), on_committed=committed.append)

    expected = {f"p=a/000001_0_{tx.write_id}.orc": [1, 5], f"p=a/000003_0_{tx.write_id}.orc": [3],
                f"p=__HIVE_DEFAULT_PARTITION__/000000_0_{tx.write_id}.orc": [4, 8, 12]}
    assert visible_files(tx.fs, str(root)) == sorted(expected)
    for rel, keys in expected.items():
        assert rows_of(str(root / rel)) == keys
    assert {(f.path, f.bucket, f.rows) for f in result.files} == {
        (str(root / rel), int(HIVE_NAME.fullmatch(rel.rsplit("/", 1)[1]).group(1)), len(keys))
        for rel, keys in expected.items()}
    assert [p.values for p in result.partitions] == [{"p": "__HIVE_DEFAULT_PARTITION__"}, {"p": "a"}]
    assert committed == [[{"p": "__HIVE_DEFAULT_PARTITION__"}, {"p": "a"}]]
    assert read_spec(str(root)) == tx.spec and result.rows == 6 and result.write_id == tx.write_id


def test_legacy_presto_names_and_copies_of_a_split_group(tmp_path):
    root = tmp_path / "t"
    tx = begin(root, spec(naming="legacy-presto", file_format="parquet"))
    stage(tx, "bucketkit_bucket=2/part-00000-x.c000.parquet", [2], "parquet")
    stage(tx, "bucketkit_bucket=2/part-00000-x.c001.parquet", [6], "parquet")  # Spark split the group's file
    finalize(tx, WriteOptions(), path_target(str(root), None, "error"))
    names = visible_files(tx.fs, str(root))
    assert names == [f"{tx.write_id}_bucket-00002.parquet", f"{tx.write_id}_bucket-00002_1.parquet"]
    assert all(int(LEGACY_PRESTO_NAME.fullmatch(n).group(1)) == 2 for n in names)
    assert [rows_of(str(root / n)) for n in names] == [[2], [6]]


def test_a_split_group_gets_hives_copy_names(tmp_path):
    root = tmp_path / "t"
    tx = begin(root, spec())
    stage(tx, "bucketkit_bucket=0/part-00000-x.c000.orc", [0])
    stage(tx, "bucketkit_bucket=0/part-00000-x.c001.orc", [4])
    finalize(tx, WriteOptions(), path_target(str(root), None, "error"))
    assert visible_files(tx.fs, str(root)) == [f"000000_0_{tx.write_id}.orc", f"000000_0_copy_1_{tx.write_id}.orc"]


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_empty_bucket_files_in_each_partition_written(tmp_path, fmt):
    root = tmp_path / "t"
    tx = begin(root, spec(partitioned_by=["p"], file_format=fmt))
    stage(tx, f"p=x/bucketkit_bucket=1/part-0.{fmt}", [1, 5], fmt)
    stage(tx, f"p=y/bucketkit_bucket=3/part-1.{fmt}", [3], fmt)
    result = finalize(tx, WriteOptions(create_empty_bucket_files=True), path_target(str(root), None, "error"))
    assert len(result.files) == 8 and len(visible_files(tx.fs, str(root))) == 8  # 4 buckets x 2 partitions
    empties = [f for f in result.files if f.rows == 0]
    assert sorted((f.path.split("/")[-2], f.bucket) for f in empties) == [
        ("p=x", 0), ("p=x", 2), ("p=x", 3), ("p=y", 0), ("p=y", 1), ("p=y", 2)]
    for f in empties:  # a real file with the table's schema, not zero bytes (pyarrow cannot read those)
        assert f.bytes > 0 and (orc.ORCFile(f.path).schema if fmt == "orc" else pq.read_schema(f.path)) == SCHEMA
        assert rows_of(f.path) == []


def test_an_empty_write_with_empty_bucket_files_has_one_per_bucket_at_the_root(tmp_path):
    root = tmp_path / "t"
    tx = begin(root, spec())
    result = finalize(tx, WriteOptions(create_empty_bucket_files=True), path_target(str(root), None, "error"))
    assert visible_files(tx.fs, str(root)) == [f"00000{b}_0_{tx.write_id}.orc" for b in range(4)]
    assert [f.bucket for f in result.files] == [0, 1, 2, 3] and result.rows == 0
    assert orc.ORCFile(result.files[0].path).schema == SCHEMA


def test_overwriting_partitions_replaces_only_those_written(tmp_path):
    root = tmp_path / "t"
    first = begin(root, spec(partitioned_by=["p"]))
    stage(first, "p=x/bucketkit_bucket=0/part-0.orc", [0])
    stage(first, "p=y/bucketkit_bucket=0/part-1.orc", [4])
    finalize(first, WriteOptions(), path_target(str(root), None, "error"))
    options = WriteOptions(mode="overwrite", overwrite_scope="partitions")
    second = begin(root, spec(partitioned_by=["p"]), mode="overwrite")
    stage(second, "p=y/bucketkit_bucket=1/part-0.orc", [1])
    result = finalize(second, options, path_target(str(root), None, "overwrite"))
    assert result.replaced_files == 1
    assert visible_files(second.fs, str(root)) == [f"p=x/000000_0_{first.write_id}.orc",
                                                  f"p=y/000001_0_{second.write_id}.orc"]


def test_a_failing_finalize_aborts_and_leaves_the_table_as_it_was(tmp_path):
    root = tmp_path / "t"
    tx = begin(root, spec())
    bad = Path(tx.staging) / "data" / "bucketkit_bucket=0" / "part-0.orc"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not an orc file")
    with pytest.raises(CorruptTableError, match=r"part-0\.orc: not a readable ORC file"):
        finalize(tx, WriteOptions(), path_target(str(root), None, "error"))
    assert not Path(tx.next).exists() and not root.exists()


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="upsert"), "mode='upsert': expected one of ['error', 'append', 'overwrite', 'ignore']"),
    (dict(overwrite_scope="rows"), "overwrite_scope='rows'"),
    (dict(num_tasks=0), "num_tasks=0"),
])
def test_options_are_checked_when_built(kwargs, message):
    with pytest.raises(InvalidArgumentError, match=re.escape(message)):
        WriteOptions(**kwargs)


def test_codec_is_checked_against_the_format():
    assert WriteOptions().codec("orc") == "snappy" and WriteOptions(compression="ZSTD").codec("parquet") == "zstd"
    with pytest.raises(InvalidArgumentError, match=re.escape("compression (for orc)='gzip'")):
        WriteOptions(compression="gzip").codec("orc")


def test_reconcile_with_an_existing_table(tmp_path):
    table = spec(partitioned_by=["p"])
    target = WriteTarget(str(tmp_path), None, str(tmp_path), table)
    reordered = TableSpec.create("k", 4, columns={"s": "string", "k": "int"}, partitioned_by=["p"])
    ok, order = reconcile(reordered, target, WriteOptions(mode="append"))
    assert ok == table and order == ("k", "s", "p")  # the table's column order
    with pytest.raises(TableExistsError, match="mode='error'"):
        reconcile(table, target, WriteOptions())
    with pytest.raises(SpecMismatchError, match="bucket_count: table has 4, write has 8"):
        reconcile(table.with_(bucket_count=8), target, WriteOptions(mode="append"))
    assert reconcile(table.with_(bucket_count=8), target, WriteOptions(mode="overwrite"))[0].bucket_count == 8
