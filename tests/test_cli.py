"""The bucketkit command, run in-process (main([...])) and once as `python -m bucketkit.cli`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from bucketkit.cli import main
from bucketkit.hashing.hive import BucketFunction
from bucketkit.layout.metadata import TableSpec, write_spec
from support.engine import engine, needs_engine
from support.sparkown import spark_insert, spark_insert_into_v2

QID = "20190526_072952_00009_fn7s5"
UUID = "9a8b7c6d-1111-2222-3333-444455556666"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def inspect_json(capsys, *argv):
    code, out, err = run(capsys, "inspect", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def orc_file(path: Path, keys: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    orc.write_table(pa.table({"k": pa.array(keys, pa.int32()), "v": pa.array([str(k) for k in keys])}), str(path))


def bucketed_table(root: Path, n: int, rows: range, name=lambda b: f"{b:06d}_0", version=1, metadata=True) -> Path:
    """Files whose rows really belong to their bucket (placed by bucketkit's hash)."""
    fn = BucketFunction(version, ("int",), n)
    for b in range(n):
        orc_file(root / name(b), [k for k in rows if fn.bucket_of([k]) == b])
    if metadata:
        write_spec(str(root), TableSpec.create("k", n, columns={"k": "int", "v": "string"}, bucketing_version=version))
    return root


def test_inspect_trino_names(tmp_path, capsys):
    orc_file(tmp_path / f"000000_0_{UUID}_{QID}", [0, 4])
    orc_file(tmp_path / f"000000_0_{UUID}_20190527_072952_00010_abcde", [8])
    orc_file(tmp_path / f"000002_0_{UUID}_{QID}", [2])
    data = inspect_json(capsys, tmp_path, "--bucket-count", 4)
    part = data["partitions"][0]
    assert (part["scheme"], part["files_per_bucket"], part["rows_per_bucket"], part["empty_buckets"]) == \
        ("hive", [2, 0, 1, 0], [3, 0, 1, 0], [1, 3])
    assert part["skew"] == 3.0 and part["skew_basis"] == "rows"
    code, out, _ = run(capsys, "inspect", tmp_path, "--bucket-count", 4)
    assert code == 0
    assert "(unpartitioned): scheme hive, 3 files" in out and "2 empty bucket(s) [1, 3]" in out
    assert "rows per bucket:  3 0 1 0" in out


def test_inspect_legacy_presto_names_parquet(tmp_path, capsys):
    for b in range(3):
        pq.write_table(pa.table({"k": [b, b + 3]}), str(tmp_path / f"{QID}_bucket-{b:05d}"))
    part = inspect_json(capsys, tmp_path, "--bucket-count", 3)["partitions"][0]
    assert part["scheme"] == "legacy-presto" and part["rows_per_bucket"] == [2, 2, 2]


def test_inspect_original_scheme_and_count_mismatch(tmp_path, capsys):
    for name in ("file0", "file3", "file5"):
        orc_file(tmp_path / name, [1])
    part = inspect_json(capsys, tmp_path, "--bucket-count", 3)["partitions"][0]
    assert part["scheme"] == "original" and part["files_per_bucket"] == [1, 1, 1]
    code, out, err = run(capsys, "inspect", tmp_path, "--bucket-count", 4)
    assert code == 2 and out == ""
    assert err.startswith("bucketkit: error: ") and err.count("\n") == 1
    assert "found 3 file(s), table declares 4 bucket(s)" in err


def test_inspect_acid_tree(tmp_path, capsys):
    orc_file(tmp_path / "p=1/000000_0", [1])  # original, superseded by the base
    orc_file(tmp_path / "p=1/base_0000005/bucket_00000", [2, 4])
    orc_file(tmp_path / "p=1/delta_0000006_0000006_0000/bucket_00001", [1])
    (tmp_path / "p=1/base_0000005/_orc_acid_version").write_text("2")
    data = inspect_json(capsys, tmp_path, "--bucket-count", 2, "--no-rows")
    part = data["partitions"][0]
    assert data["partitioned_by"] == ["p"] and part["scheme"] == "acid" and part["files_per_bucket"] == [1, 1]
    assert [p.rsplit("/", 1)[1] for p in part["obsolete"]] == ["000000_0"]
    assert "rows" not in part and part["skew_basis"] == "bytes"


@needs_engine
def test_inspect_acid_snapshots_of_real_hive_files(capsys):
    # Trino's TestOrcDeletedRows: one delete event, in bucket 0; TestOriginalFilesUtils: bucket 2's
    # third original file starts at row id 8 (its first two files hold 8 rows)
    data = inspect_json(capsys, engine("trino/dummy_id_data_orc"))
    assert data["spec_source"].startswith("Hive ACID")
    acid = data["partitions"][0]["acid"]
    assert acid["delete_deltas"] == ["delete_delta_10000001_10000001_0000"] and len(acid["original_files"]) == 5
    assert {b: (v["original"], v["delete_delta"], v["delete_events"]) for b, v in acid["buckets"].items()} == \
        {"0": (1, 1, 1), "1": (1, 0, 0), "2": (3, 0, 0)}
    assert acid["buckets"]["2"]["rows"] - 4 == 8
    # Trino's TestOrcPageSourceFactory: 25,000 rows, two delete deltas of 1,000 nation rows each
    data = inspect_json(capsys, engine("composed/nation_acid_with_delete_deltas"), "--bucket-count", 1)
    bucket = data["partitions"][0]["acid"]["buckets"]["0"]
    assert (bucket["delta"], bucket["delete_delta"], bucket["rows"], bucket["delete_events"]) == (1, 2, 25000, 2000)
    code, out, _ = run(capsys, "inspect", engine("hive/test_hcube_2.db/tbl1"), "--write-ids",
                       "test_hcube_2.tbl1:3:9223372036854775807::3")
    assert code == 0 and "aborted (not read): delta_0000003_0000003_0000" in out and "unbucketed" in out


def test_inspect_partitions_filter_staging_warning_and_plot(tmp_path, capsys):
    orc_file(tmp_path / "dt=1/000000_0", [2])
    orc_file(tmp_path / "dt=2/000001_0", [1])
    orc_file(tmp_path / ".bucketkit-staging-w1/dt=1/000000_0", [2])
    plot = tmp_path.parent / f"{tmp_path.name}.png"
    data = inspect_json(capsys, tmp_path, "--bucket-count", 2, "--partition", "dt=2", "--plot", plot)
    assert [p["values"] for p in data["partitions"]] == [{"dt": "2"}]
    assert data["warnings"] and ".bucketkit-staging-w1" in data["warnings"][0]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_inspect_reads_spec_from_metadata(tmp_path, capsys):
    bucketed_table(tmp_path, 4, range(40))
    data = inspect_json(capsys, tmp_path)
    assert data["spec_source"] == "bucketkit metadata" and data["spec"]["bucket_count"] == 4
    assert sum(data["partitions"][0]["rows_per_bucket"]) == 40
    code, _, err = run(capsys, "inspect", tmp_path, "--bucket-count", 8)
    assert code == 2 and "bucket_count=8" in err  # flags must agree with the metadata


def test_usage_and_table_errors(tmp_path, capsys):
    code, _, err = run(capsys, "inspect", tmp_path)
    assert code == 2 and "pass --bucket-count" in err
    code, _, err = run(capsys, "inspect", tmp_path / "missing", "--bucket-count", 2)
    assert code == 2 and "does not exist" in err
    (tmp_path / "sub").mkdir()
    orc_file(tmp_path / "000000_0", [1])
    (tmp_path / "sub" / "000001_0").write_bytes(b"")
    code, _, err = run(capsys, "inspect", tmp_path, "--bucket-count", 2)
    assert code == 2 and "visible sub-directory" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", str(tmp_path), "--bucket-count", "two"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("bucketkit: error: bucketkit inspect: argument --bucket-count")


def test_validate_finds_misplaced_rows(tmp_path, capsys):
    bucketed_table(tmp_path, 4, range(100), metadata=False)
    flags = ["--bucket-count", 4, "--bucketed-by", "k", "--bucket-types", "int"]
    code, _, err = run(capsys, "validate", tmp_path, *flags)  # no version: the hash is never guessed
    assert code == 2 and "--bucketing-version 1|2 or --hash-family spark" in err
    flags += ["--bucketing-version", 1]
    code, out, _ = run(capsys, "validate", tmp_path, *flags)
    assert code == 0 and "checked 100 rows in 4 files" in out and "ok: every row" in out
    orc_file(tmp_path / "000001_0_copy_1", [1, 2, 5])  # 2 belongs in bucket 2
    code, out, _ = run(capsys, "validate", tmp_path, *flags, "--json")
    data = json.loads(out)
    assert code == 1 and data["misplaced_rows"] == 1
    assert data["misplaced"] == [{"file": str(tmp_path / "000001_0_copy_1"), "row": 1, "bucket": 1,
                                  "expected_bucket": 2, "key": [2]}]
    code, out, _ = run(capsys, "validate", tmp_path, *flags, "--every", 2)
    assert code == 0 and "checked 54 rows" in out  # rows 0, 2, ... of each file (4 x 13 + 2); bad row 1 skipped
    code, out, _ = run(capsys, "validate", tmp_path, *flags, "--sample", 1.0)
    assert code == 1


def test_validate_of_a_catalog_name_says_how_to_name_the_table(tmp_path, capsys, monkeypatch):
    """README: a table is spelled the same way everywhere, 'db.t' a catalog table; validate reads files without
    Spark, so it says so, and a directory of that name in the working directory is read as './db.t'."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "validate", "db.t", "--bucket-count", 4, "--bucketing-version", 1)
    assert code == 2 and "spelled as a catalog table name" in err and "DESCRIBE FORMATTED db.t" in err
    bucketed_table(tmp_path / "db.t", 4, range(10), metadata=False)
    flags = ["--bucket-count", 4, "--bucketed-by", "k", "--bucket-types", "int", "--bucketing-version", 1]
    code, out, _ = run(capsys, "validate", "./db.t", *flags)
    assert code == 0 and "ok: every row" in out


def test_validate_checks_an_acid_snapshot(tmp_path, capsys):
    from support.acid import misplaced_acid_table

    root, prop = misplaced_acid_table(tmp_path / "acid")
    flags = ["--bucket-count", 4, "--bucketed-by", "k", "--bucket-types", "int", "--bucketing-version", 1, "--json"]
    code, out, _ = run(capsys, "validate", root, *flags, "--write-ids", "db.acid:5:5:5:")
    data = json.loads(out)
    assert code == 1 and data["misplaced"] == [{"file": str(root), "row": 0, "bucket": 1, "expected_bucket": 0,
                                                "key": [12], "row_id": [3, prop, 0]}]
    code, out, _ = run(capsys, "validate", root, *flags)  # every write id committed: write 5's key 20 too
    assert code == 1 and sorted(m["key"] for m in json.loads(out)["misplaced"]) == [[12], [20]]


def test_validate_detects_spark_v1_insert_into_v2_table(spark, tmp_path, capsys):
    spark.sql(f"CREATE TABLE bk_cli_v2 (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path}/v2' TBLPROPERTIES ('bucketing_version'='2')")
    try:
        spark_insert_into_v2(spark, "bk_cli_v2", "INSERT INTO bk_cli_v2 SELECT CAST(id AS INT), 'x' FROM range(100)")
    finally:
        spark.sql("DROP TABLE IF EXISTS bk_cli_v2")
    flags = ["--bucket-count", 4, "--bucketed-by", "k", "--bucket-types", "int"]
    code, out, _ = run(capsys, "validate", tmp_path / "v2", *flags, "--bucketing-version", 2, "--json")
    data = json.loads(out)
    assert code == 1 and data["rows_checked"] == 100 and data["misplaced_rows"] > 50
    code, out, _ = run(capsys, "validate", tmp_path / "v2", *flags, "--bucketing-version", 1)
    assert code == 0, out
    code, out, _ = run(capsys, "inspect", tmp_path / "v2", "--bucket-count", 4, "--json")
    assert json.loads(out)["partitions"][0]["scheme"] == "hive"


def test_plan_join(tmp_path, capsys):
    left = bucketed_table(tmp_path / "left", 4, range(0, 200), version=2)
    right = bucketed_table(tmp_path / "right", 8, range(0, 200, 3), version=2)
    code, out, _ = run(capsys, "plan-join", left, right, "--on", "k", "--json")
    plan = json.loads(out)
    assert code == 0 and plan["strategy"] == "bucketed" and plan["how"] == "inner"
    assert len(plan["groups"]) == 4
    code, out, _ = run(capsys, "plan-join", left, right, "--on", "k=k", "--how", "left")
    assert code == 0 and "strategy: bucketed" in out
    code, _, err = run(capsys, "plan-join", left, tmp_path, "--on", "k")
    assert code == 2 and err.startswith("bucketkit: error: ")


def test_module_entry_point_subprocess(tmp_path):
    orc_file(tmp_path / "000001_0", [1])
    result = subprocess.run([sys.executable, "-m", "bucketkit.cli", "inspect", str(tmp_path), "--bucket-count", "2",
                             "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["partitions"][0]["files_per_bucket"] == [0, 1]
    result = subprocess.run([sys.executable, "-m", "bucketkit.cli", "inspect", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.startswith("bucketkit: error: ")
