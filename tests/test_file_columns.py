"""One rule for which file column holds which table column (bucketkit.io.file_columns).

Joins, ACID reads, the data source and validation each read data files themselves; scans of plain
tables use Spark's ORC reader. Hive's old ORC writer named columns ``_col0, _col1, ...`` and Spark
maps those by position (``OrcUtils.requestedColumnIds``); a file may spell a column in upper case,
which Hive and Spark match case-insensitively. The join's reader used to match names exactly: on
such files it read NULLs where a scan read the values, and joined nothing.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.orc as po
import pytest
from hypothesis import given, strategies as st

import bucketkit
from bucketkit.io import file_columns


def test_positional_files_map_by_position_and_others_by_name_case_insensitively():
    assert file_columns(["_col0", "_col1"], ["k", "v"]) == {"k": "_col0", "v": "_col1"}
    assert file_columns(["_col0"], ["k", "v"]) == {"k": "_col0"}  # a column added after the file was written
    assert file_columns(["K", "v"], ["k", "v"]) == {"k": "K", "v": "v"}
    assert file_columns(["v", "k"], ["k", "v"]) == {"k": "k", "v": "v"}
    assert file_columns(["k"], ["k", "v"]) == {"k": "k"}
    assert file_columns(["_col0", "_col1", "_col2"], ["k", "v"]) == {}  # more than the table: not Hive's


@given(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), min_size=1, max_size=6, unique=True),
       st.randoms())
def test_named_files_map_every_column_they_have_whatever_the_order_or_case(names, rnd):
    shuffled = names[:]
    rnd.shuffle(shuffled)
    kept = shuffled[: rnd.randint(1, len(shuffled))]
    cased = [n.upper() if rnd.random() < 0.5 else n for n in kept]
    assert file_columns(cased, names) == {n: c for n, c in zip(kept, cased)}


def _rename_files(path, rename):
    """Rewrite every ORC data file under ``path`` with its columns renamed by ``rename`` (new files)."""
    count = 0
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for name in files:
            if name.startswith((".", "_")) or name.endswith(".crc"):
                continue
            full = os.path.join(root, name)
            table = po.read_table(full)
            table = table.rename_columns([rename(i, n) for i, n in enumerate(table.column_names)])
            po.write_table(table, full + ".tmp")
            os.replace(full + ".tmp", full)  # a new file, not a write through a link another version shares
            count += 1
    assert count


@pytest.mark.spark
@pytest.mark.parametrize("style", ["positional", "upper"])
def test_join_scan_and_validate_read_the_values_spark_reads(spark, tmp_path, style):
    rename = (lambda i, n: f"_col{i}") if style == "positional" else (lambda i, n: n.upper())
    left, right = str(tmp_path / "left"), str(tmp_path / "right")
    bucketkit.write(spark.range(60).selectExpr("id AS k", "id * 10 AS v"), "k", 4, path=left)
    bucketkit.write(spark.range(0, 60, 2).selectExpr("id AS k", "id * 100 AS w"), "k", 4, path=right)
    _rename_files(left, rename)
    _rename_files(right, rename)
    # Spark's own ORC reader, told the table's columns: positional files by position, names case-insensitively
    spark.read.schema("k bigint, v bigint").orc(left).createOrReplaceTempView("fc_left")
    spark.read.schema("k bigint, w bigint").orc(right).createOrReplaceTempView("fc_right")
    expected = sorted(tuple(r) for r in spark.sql(
        "SELECT l.k, l.v, r.w FROM fc_left l JOIN fc_right r ON l.k = r.k").collect())
    assert len(expected) == 30 and all(v is not None for row in expected for v in row)
    joined = bucketkit.join(spark, left, right, on="k", columns=[("left", "k"), ("left", "v"), ("right", "w")])
    assert sorted(tuple(r) for r in joined.collect()) == expected
    scanned = sorted(tuple(r) for r in bucketkit.scan(spark, path=left).select("k", "v").collect())
    assert scanned == sorted(tuple(r) for r in spark.table("fc_left").collect())
    assert bucketkit.validate(bucketkit.open_table(left)).ok
