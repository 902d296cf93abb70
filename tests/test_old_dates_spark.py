"""Dates before 1582-10-15 and timestamps outside pyarrow's nanoseconds, read by bucketkit's Python readers (the join
kernel, the ``bucketkit`` data source, validate) as Spark's readers read the same files. Spark's ORC writer stores
such dates in the hybrid Julian calendar and its reader rebases them; pyarrow reads the stored days. Expected rows:
Spark's own join and reads of the same files."""

from __future__ import annotations

import datetime as dt

import pytest

import bucketkit
from bucketkit.errors import UnsupportedTypeError

#: the Julian calendar's leap day 1500-02-29 (no such Gregorian date), the calendars' last days, a common sentinel
DATES = [dt.date(1, 1, 1), dt.date(1000, 3, 1), dt.date(1500, 3, 1), dt.date(1582, 10, 4), dt.date(1582, 10, 15),
         dt.date(1900, 1, 1), dt.date(2024, 2, 29), None]


@pytest.fixture(scope="module")
def dated(spark, tmp_path_factory):
    """``l_<format>`` (old dates in a key-less column k and in d) and ``r_<format>``, bucketed on i into 4."""
    base = tmp_path_factory.mktemp("old_dates")
    left = spark.createDataFrame([(d, i, dt.date(1200, 1, 1 + i)) for i, d in enumerate(DATES)],
                                 "k date, i int, d date")
    right = spark.createDataFrame([(i, f"r{i}") for i in range(len(DATES))], "i int, s string")
    for fmt in ("orc", "parquet"):
        bucketkit.write(left, "i", 4, path=str(base / f"l_{fmt}"), file_format=fmt)
        bucketkit.write(right, "i", 4, path=str(base / f"r_{fmt}"), file_format=fmt)
    return base


def _rows(df):
    return sorted(map(tuple, df.collect()), key=repr)


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_the_join_and_the_data_source_read_old_dates_as_spark_does(spark, dated, fmt):
    left, right = str(dated / f"l_{fmt}"), str(dated / f"r_{fmt}")
    assert bucketkit.plan_join(left, right, "i").bucketed
    expected = spark.read.format(fmt).load(left).join(spark.read.format(fmt).load(right), "i")
    assert _rows(bucketkit.join(spark, left, right, "i").select(*expected.columns)) == _rows(expected)
    assert _rows(spark.read.format("bucketkit").load(left)) == _rows(spark.read.format(fmt).load(left))


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
@pytest.mark.parametrize("version", [1, 2])
def test_a_table_bucketed_on_old_dates_validates_and_prunes(spark, tmp_path, fmt, version):
    df = spark.createDataFrame([(d, i) for i, d in enumerate(DATES)], "k date, n int")
    path = str(tmp_path / "t")
    bucketkit.write(df, "k", 4, path=path, file_format=fmt, bucketing_version=version)
    assert bucketkit.validate(path).ok
    for d in DATES[:-1]:
        assert [r.k for r in bucketkit.scan(spark, path, filters=[("k", "=", d)]).collect()] == [d]


def test_timestamps_beyond_pyarrows_nanoseconds(spark, tmp_path):
    """Spark's Parquet timestamps (INT96) are read in microseconds: the join returns Spark's rows. pyarrow's ORC reader
    holds nanoseconds only: such a file fails naming itself, where Spark's reader is the way."""
    df = spark.createDataFrame([(1, dt.datetime(1400, 1, 1, 12)), (2, dt.datetime(9999, 12, 31)), (3, None)],
                               "k int, ts timestamp")
    other = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "k int, s string")
    for fmt in ("parquet", "orc"):
        left, right = str(tmp_path / f"l_{fmt}"), str(tmp_path / f"r_{fmt}")
        bucketkit.write(df, "k", 4, path=left, file_format=fmt)
        bucketkit.write(other, "k", 4, path=right, file_format=fmt)
        expected = spark.read.format(fmt).load(left).join(spark.read.format(fmt).load(right), "k")
        joined = bucketkit.join(spark, left, right, "k").select(*expected.columns)
        if fmt == "parquet":
            assert _rows(joined) == _rows(expected)
            continue
        with pytest.raises(Exception, match="outside 1677-09-21..2262-04-11.*Spark's own reader can"):
            joined.collect()
        plan = bucketkit.plan_scan(left)
        with pytest.raises(UnsupportedTypeError, match=r"\.orc: holds a timestamp outside"):
            for unit in plan.units():
                unit.read(plan.table.filesystem, "orc")
