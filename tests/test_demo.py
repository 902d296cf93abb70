"""The demo's claims hold (at a small size): pruning reads fewer buckets, Spark's v1 files re-hash
into their own buckets, the bucketed join has no Exchange and returns Spark's result."""

from __future__ import annotations

import pytest

from bucketkit import demo
from bucketkit.errors import InvalidArgumentError


def test_demo_claims_hold(spark, tmp_path, capsys):
    workdir = tmp_path / "demo"
    report = demo.run(["--rows", "20000", "--workdir", str(workdir)])
    out = capsys.readouterr().out

    assert report.rows == 20000 and report.users == 2000
    # Spark's own Hive writer (v1): every row sits in the file of the bucket bucketkit computes.
    assert report.spark_table_rows == report.users
    assert report.spark_table_misplaced == 0
    assert report.spark_lookup_buckets_read == 1 and report.spark_lookup_equal
    # The lookup reads one bucket of 16 and finds exactly the rows Spark's full read finds.
    assert (report.lookup_buckets_read, report.lookup_buckets_total) == (1, 16)
    assert report.lookup_files_read < report.lookup_files_total
    assert report.lookup_rows == report.lookup_rows_spark > 0
    # The join runs bucket by bucket without a shuffle; Spark's shuffles; same aggregates.
    assert report.join_strategy == "bucketed"
    assert not report.join_exchange_ours
    assert report.join_exchange_spark
    assert report.join_result_ours == report.join_result_spark
    assert sum(views for _, views, _, _ in report.join_result_ours) == report.rows
    assert report.join_s > 0 and report.spark_join_s > 0
    for heading in ("== 1. write", "== 2. a table written by Spark", "== 3. a pruned lookup",
                    "== 4. a bucketed join", "== summary"):
        assert heading in out
    assert "no Exchange: no shuffle" in out
    assert not workdir.exists()  # removed without --keep
    assert not spark.catalog.tableExists(demo.SPARK_TABLE)


def test_demo_refuses_a_workdir_it_did_not_create(tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    with pytest.raises(InvalidArgumentError, match="not created by the demo"):
        demo.run(["--workdir", str(precious)])
    assert (precious / "thesis.tex").read_text() == "years of work"


def test_demo_rejects_tiny_row_counts(capsys):
    with pytest.raises(SystemExit):
        demo.parse_args(["--rows", "10"])
    assert "--rows 10" in capsys.readouterr().err
