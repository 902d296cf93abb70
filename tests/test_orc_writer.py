"""bucketkit's ORC files are Spark's: written from rows without Spark's row conversion (OrcRowWriter) for
flat primitive and string columns, or by Spark's own writer for the rest, they hold the same bytes as
Spark's ORC writer makes of the same rows in the same order (its ``df.write.orc``, the golden file)."""

from __future__ import annotations

from pathlib import Path

import pytest

import bucketkit

# More rows than Spark's ORC batch (1,024) and ORC's row index stride (10,000): several batches and
# index entries, and NULLs in every column.
ROWS = 23_456
FLAT = ("CASE WHEN id % 11 = 0 THEN NULL ELSE id % 3 = 0 END AS b",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE CAST(id % 250 - 125 AS TINYINT) END AS t",
        "CASE WHEN id % 17 = 0 THEN NULL ELSE CAST(id * 31 % 64000 - 32000 AS SMALLINT) END AS sm",
        "CAST(id * 7919 % 100003 - 5000 AS INT) AS i",
        "CASE WHEN id % 19 = 0 THEN NULL ELSE id * 2654435761 END AS l",
        "CASE WHEN id % 23 = 0 THEN NULL ELSE CAST(id AS FLOAT) / 7 END AS f",
        "CASE WHEN id % 29 = 0 THEN NULL WHEN id % 31 = 0 THEN double('NaN') ELSE id / 3.0D END AS d",
        "CASE WHEN id % 7 = 0 THEN NULL WHEN id % 5 = 0 THEN '' ELSE concat('ключ-', CAST(id AS STRING), "
        "repeat('x', CAST(id % 40 AS INT))) END AS s",
        "CASE WHEN id % 37 = 0 THEN NULL ELSE unhex(hex(id * 99991)) END AS bin")


def _one_file(root: Path) -> bytes:
    files = [p for p in root.rglob("*.orc") if not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)]
    assert len(files) == 1, files
    return files[0].read_bytes()


@pytest.mark.parametrize("columns", [FLAT, ("CAST(id AS INT) AS i", "DATE'2020-01-01' + CAST(id % 999 AS INT) AS day",
                                             "CAST(id AS DECIMAL(12, 2)) / 8 AS dec", "array(id, id + 1) AS arr")],
                         ids=["flat columns (bucketkit's row writer)", "dates, decimals, arrays (Spark's writer)"])
def test_bucketkit_write_makes_spark_s_orc_bytes(spark, tmp_path, columns):
    rows = spark.range(ROWS).selectExpr(*columns).coalesce(1).cache()
    rows.count()
    try:
        bucketkit.write(rows, "i", 1, path=str(tmp_path / "ours"), num_tasks=1)  # one bucket, rows in order
        rows.write.option("compression", "snappy").orc(str(tmp_path / "spark"))
        ours, spark_s = _one_file(tmp_path / "ours"), _one_file(tmp_path / "spark")
        assert len(ours) == len(spark_s) and ours == spark_s
    finally:
        rows.unpersist()


def test_sql_insert_makes_spark_s_orc_bytes(spark, tmp_path):
    """The SQL path (BucketWrite) writes through the same writer: one bucket, one task, Spark's bytes."""
    rows = spark.range(ROWS).selectExpr(*FLAT).coalesce(1).cache()
    rows.count()
    rows.createOrReplaceTempView("orcw_src")
    columns = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in rows.schema.fields)
    try:
        spark.sql("DROP TABLE IF EXISTS orcw_t")
        spark.sql(f"CREATE TABLE orcw_t ({columns}) CLUSTERED BY (i) INTO 1 BUCKETS STORED AS ORC "
                  f"LOCATION '{tmp_path / 't'}' TBLPROPERTIES ('bucketing_version'='2', 'orc.compress'='SNAPPY')")
        spark.sql("INSERT INTO orcw_t SELECT * FROM orcw_src")
        rows.write.option("compression", "snappy").orc(str(tmp_path / "spark"))
        assert _one_file(tmp_path / "t") == _one_file(tmp_path / "spark")
    finally:
        spark.sql("DROP TABLE IF EXISTS orcw_t")
        rows.unpersist()
