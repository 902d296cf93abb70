"""The read unit (bucketkit.units): one reader for every kind of unit, one column conformer.

Expected rows come from pyarrow's own reads of the files written here; a unit's kind is never asked
by the readers, so the same calls read a plain data file and an ACID bucket.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as orc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.errors import ConcurrentModificationError, InvalidArgumentError
from bucketkit.io import HIVE_DEFAULT_PARTITION
from bucketkit.pruning.plan import plan_scan
from bucketkit.units import ReadUnit, conform

LOCAL = pafs.LocalFileSystem()
TARGET = pa.schema([("k", pa.int64()), ("s", pa.string()), ("x", pa.float64())])


def _file(tmp_path, names=("k", "s"), n=10, name="000000_0"):
    path = str(tmp_path / name)
    orc.write_table(pa.table({names[0]: pa.array(range(n), pa.int64()),
                              names[1]: pa.array([f"s{i}" for i in range(n)])}), path)
    return path


def test_a_data_file_unit_reads_the_table_columns_it_has_by_name_or_hive_position(tmp_path):
    for names in (("k", "s"), ("K", "S"), ("_col0", "_col1")):
        path = _file(tmp_path, names, name=f"000000_0_{names[0]}")
        unit = ReadUnit(path, 1, 0)
        got = pa.Table.from_batches(list(unit.batches(LOCAL, ["s", "k", "x"], TARGET, "orc", batch_rows=4)))
        assert got.column_names == ["s", "k"]  # x is in no file: left to conform
        assert got.column("k").to_pylist() == orc.read_table(path).column(0).to_pylist()
        assert got.num_rows == unit.count_rows(LOCAL, "orc") == 10
        assert unit.schema(LOCAL, "orc").names == list(names)
        assert unit.data_files == (path,) and unit.delete_files == ()


def test_an_empty_unit_is_never_opened_and_a_vanished_one_is_a_concurrent_modification(tmp_path):
    assert ReadUnit(str(tmp_path / "no such file"), 0, 3).empty
    assert list(ReadUnit(str(tmp_path / "no such file"), 0, 3).batches(LOCAL, ["k"], TARGET, "orc")) == []
    gone = ReadUnit(str(tmp_path / "gone"), 10, 3)
    with pytest.raises(FileNotFoundError):
        list(gone.batches(LOCAL, ["k"], TARGET, "orc"))
    error = gone.vanished("db.t")
    assert isinstance(error, ConcurrentModificationError)
    assert str(error).startswith(f"table db.t: data file {gone.path} is gone: the table was overwritten while it was")
    with pytest.raises(InvalidArgumentError, match="row__id"):
        ReadUnit(_file(tmp_path), 1, 0).read(LOCAL, "orc", row_id=True)


def test_the_units_of_a_plan_cover_its_files_once(tmp_path):
    from support.scan import write_arrow_table

    from bucketkit.layout.metadata import TableSpec

    spec = TableSpec.create("k", 4, columns={"k": "bigint", "s": "string"}, partitioned_by=("p",),
                            partition_types=("string",), bucketing_version=2)
    root = str(tmp_path / "t")
    write_arrow_table(root, spec, [{"k": i, "s": f"s{i}", "p": str(i % 3)} for i in range(40)])
    plan = plan_scan(root)
    units = plan.units()
    assert sorted(u.path for u in units) == sorted(f for p in plan.partitions for fs in p.bucket_files.values()
                                                   for f in fs)
    assert all(u.source is None and u.values == {"p": u.path.split("p=")[1].split("/")[0]} for u in units)


@settings(max_examples=60, deadline=None)
@given(raw=st.one_of(st.none(), st.just(HIVE_DEFAULT_PARTITION), st.integers(-10**6, 10**6).map(str)),
       upper=st.booleans(), rows=st.integers(0, 5))
def test_conform_gives_the_target_columns_typed_with_partition_constants_and_nulls(raw, upper, rows):
    data = pa.table({("K" if upper else "k"): pa.array(range(rows), pa.int32())})
    target = pa.schema([("p", pa.int64()), ("k", pa.int64()), ("x", pa.string())])
    out = conform(data, target, ["k", "x"], ["p"], {"p": raw} if raw is not None else {})
    assert out.schema == target and out.num_rows == rows
    assert out.column("k").to_pylist() == list(range(rows))
    assert out.column("x").null_count == rows
    value = None if raw in (None, HIVE_DEFAULT_PARTITION) else int(raw)
    assert out.column("p").to_pylist() == [value] * rows
    batch = conform(data.to_batches()[0], target, ["k", "x"], ["p"], {"p": raw}) if rows else out
    assert batch.equals(out)


def test_a_misplaced_row_whose_key_python_cannot_hold_is_named_in_the_error():
    """A date before year 1 (Arrow holds it, Python's date does not): the check still fails naming the file and
    the key, as Arrow writes it, never an OverflowError."""
    from bucketkit.errors import CorruptTableError
    from bucketkit.hashing.hive import BucketFunction
    from bucketkit.layout.metadata import TableSpec
    from bucketkit.units import check_placement

    spec = TableSpec(bucketed_by=("k",), bucket_count=4, bucketing_version=2, bucket_types=("date",))
    days = pa.array([-1000000], pa.int32()).view(pa.date32())
    bucket = int(BucketFunction(2, ["date"], 4).bucket_ids([days])[0])
    batch = pa.RecordBatch.from_arrays([days], names=["k"])
    assert check_placement(batch, ReadUnit("/t/000000_0", 1, bucket), spec) is batch
    with pytest.raises(CorruptTableError, match=r"/t/00000\d_0: a row with k = '-0768-02-04' is in bucket"):
        check_placement(batch, ReadUnit("/t/000001_0", 1, (bucket + 1) % 4), spec)
