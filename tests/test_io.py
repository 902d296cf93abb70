"""bucketkit.io without a JVM: formats round-trip through pyarrow's own readers, footers agree with
what pyarrow reads, locations resolve as the standard library spells paths, hidden names."""

from __future__ import annotations

import datetime
import decimal
import os
import pathlib
import re

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bucketkit import io
from bucketkit.errors import InvalidArgumentError

from support.engine import ENGINE_FILES
LOCAL = pafs.LocalFileSystem()

TABLE = pa.table({
    "k": pa.array([1, 2, None, 4], pa.int32()),
    "b": pa.array([10, -20, 30, None], pa.int64()),
    "s": pa.array(["a", None, "ü", ""], pa.string()),
    "d": pa.array([datetime.date(2020, 1, 1), None, datetime.date(1969, 12, 31), datetime.date(2038, 1, 19)]),
    "x": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"), decimal.Decimal("0.00")],
                  pa.decimal128(10, 2)),
    "f": pa.array([True, False, None, True]),
})
WRITERS = {"orc": orc.write_table, "parquet": pq.write_table}
READERS = {"orc": orc.read_table, "parquet": pq.read_table}


def write(tmp_path, fmt, table=TABLE, name="f"):
    path = str(tmp_path / f"{name}.{fmt}")
    WRITERS[fmt](table, path)
    return path


@pytest.mark.parametrize("fmt", io.FILE_FORMATS)
def test_read_file_round_trips(tmp_path, fmt):
    path = write(tmp_path, fmt)
    assert io.read_file(LOCAL, path, fmt).equals(TABLE)
    assert io.read_file(LOCAL, path, fmt, columns=["s", "k"]).equals(TABLE.select(["s", "k"]))
    kept = io.read_file(LOCAL, path, fmt, filter=pc.field("k") > 1)
    assert kept.equals(TABLE.filter(pc.field("k") > 1)) and kept.column("k").to_pylist() == [2, 4]


@pytest.mark.parametrize("fmt", io.FILE_FORMATS)
def test_footer_rows_schema_and_batches(tmp_path, fmt):
    table = pa.table({"k": pa.array(range(2500), pa.int64()), "s": [str(i) for i in range(2500)]})
    path = write(tmp_path, fmt, table)
    assert io.footer_rows(LOCAL, path, fmt) == READERS[fmt](path).num_rows == 2500
    assert io.read_schema(LOCAL, path, fmt) == READERS[fmt](path).schema
    with io.open_data_file(LOCAL, path, fmt) as f:
        batches = list(f.batches(["s"], 1000))
    assert all(b.num_rows <= 1000 and b.schema.names == ["s"] for b in batches)
    assert pa.Table.from_batches(batches).column("s").to_pylist() == table.column("s").to_pylist()


@pytest.mark.parametrize("fmt", io.FILE_FORMATS)
def test_empty_file_has_schema_and_no_rows(tmp_path, fmt):
    path = tmp_path / f"empty.{fmt}"
    path.write_bytes(io.empty_file(TABLE.schema, fmt))
    read = READERS[fmt](str(path))
    assert read.num_rows == 0 and read.schema.equals(TABLE.schema)
    assert io.footer_rows(LOCAL, str(path), fmt) == 0
    assert io.read_file(LOCAL, str(path), fmt).schema.equals(TABLE.schema)


def test_detect_data_file_by_magic_bytes(tmp_path):
    for fmt in io.FILE_FORMATS:
        with io.detect_data_file(LOCAL, write(tmp_path, fmt)) as f:
            assert f.file_format == fmt and f.num_rows == TABLE.num_rows
    text = tmp_path / "000000_0"
    text.write_bytes(b"1,2\n3,4\n")
    assert io.detect_data_file(LOCAL, str(text)) is None
    for call in (io.detect_data_file, lambda fs, p: io.open_data_file(fs, p, "orc")):
        with pytest.raises(FileNotFoundError):
            call(LOCAL, str(tmp_path / "missing"))


def test_unknown_format_is_named():
    with pytest.raises(InvalidArgumentError, match=r"file_format='avro': expected one of \['orc', 'parquet'\]"):
        io.empty_file(TABLE.schema, "avro")


@pytest.mark.skipif(not ENGINE_FILES.exists(), reason="engine files (../shared/data/engine-files) absent")
def test_footer_rows_of_engine_files_match_pyarrow():
    files = [p for p in ENGINE_FILES.rglob("*") if p.is_file() and not io.is_hidden(p.name)
             and p.read_bytes()[:3] == b"ORC"]
    assert len(files) >= 5
    for p in files:
        assert io.footer_rows(LOCAL, str(p), "orc") == orc.read_table(str(p)).num_rows, p
        assert io.read_schema(LOCAL, str(p), "orc") == orc.ORCFile(str(p)).schema, p


# -- names ----------------------------------------------------------------------------------------
def test_hidden_names():
    for name in ("_SUCCESS", ".crc", "_bucketkit_table.json", io.STAGING_DIR, io.STAGING_PREFIX + "w1", "."):
        assert io.is_hidden(name), name
    for name in ("000000_0", "a_b", "part-0.c000.orc", "x.", "dt=1"):
        assert not io.is_hidden(name), name


@given(st.lists(st.text(alphabet="ab_./", min_size=1, max_size=4), min_size=1, max_size=4))
def test_hidden_path_is_any_hidden_part(parts):
    parts = [p.strip("/") or "a" for p in parts]
    rel = "/".join(parts)
    assert io.is_hidden_path(rel) == any(io.is_hidden(p) for p in rel.split("/"))


def test_split_top_level():
    assert io.split_top_level("decimal(10,2), map<string,int>,int") == ["decimal(10,2)", "map<string,int>", "int"]
    assert io.split_top_level("struct<a:int,b:array<decimal(5,1)>>,  ,string") == \
        ["struct<a:int,b:array<decimal(5,1)>>", "string"]
    assert io.split_top_level("") == []


# -- locations ------------------------------------------------------------------------------------
NAME = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\:~"),
               min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))
SHAPED = st.sampled_from(["a b", "50%", "%20", "ü", "日本", "#x", "q?", "[1]", "{a,b}", "x=%2F", "*"])
PART = st.one_of(NAME, SHAPED)


@given(st.lists(PART, min_size=1, max_size=4))
def test_absolute_local_paths_resolve_unchanged(parts):
    path = "/tmp/" + "/".join(parts)
    fs, inside = io.resolve_filesystem(path)
    assert fs.type_name == "local" and inside == path


@given(st.lists(PART, min_size=1, max_size=4))
def test_relative_local_paths_resolve_against_the_working_directory(parts):
    rel = "/".join(parts)
    fs, inside = io.resolve_filesystem(rel)
    assert fs.type_name == "local" and inside == os.path.abspath(rel)


@given(st.lists(PART, min_size=1, max_size=4))
def test_file_uris_resolve_to_their_path(parts):
    path = "/tmp/" + "/".join(parts)
    uri = pathlib.PurePosixPath(path).as_uri()  # RFC 8089, percent-encoded by the standard library
    fs, inside = io.resolve_filesystem(uri)
    assert fs.type_name == "local" and inside == path
    assert io.resolve_filesystem(io.hadoop_to_uri("file:" + uri[len("file://"):]))[1] == path
    assert io.hadoop_to_uri(uri) == uri


def test_hadoop_to_uri():
    assert io.hadoop_to_uri("file:/tmp/t") == "file:///tmp/t"
    assert io.hadoop_to_uri("file:/tmp/%C3%BC%20x") == "file:///tmp/%C3%BC%20x"
    assert io.hadoop_to_uri("file:/tmp/ü日") == "file:///tmp/%C3%BC%E6%97%A5"
    assert io.hadoop_to_uri("hdfs://nn:8020/t") == "hdfs://nn:8020/t"


@given(st.lists(PART, min_size=1, max_size=4))
def test_spark_uri_of_local_paths(parts):
    path = "/tmp/" + "/".join(parts)
    assert io.spark_uri(LOCAL, path) == "file://" + path  # Hadoop's Path takes the path literally
    assert io.spark_uri(LOCAL, path, location="file:///tmp/t") == "file://" + path
    assert io.spark_uri(LOCAL, path, location="relative/t") == "file://" + path
    rel = "/".join(parts)
    assert io.spark_uri(LOCAL, rel) == "file://" + os.path.abspath(rel)


def test_spark_uri_keeps_the_location_scheme_and_authority():
    assert io.spark_uri(LOCAL, "/t/.x/data", location="hdfs://nn:8020/t") == "hdfs://nn:8020/t/.x/data"
    assert io.spark_uri(LOCAL, "bucket/.t.x/data", location="s3://bucket/t") == "s3://bucket/.t.x/data"
    assert io.spark_uri(LOCAL, "b/t/a b", location="gs://b/t") == "gs://b/t/a b"
    s3 = pafs.S3FileSystem(anonymous=True, region="us-east-1")
    assert io.spark_uri(s3, "bucket/t/000000_0") == "s3a://bucket/t/000000_0"
    sub = pafs.SubTreeFileSystem("/tmp", LOCAL)
    assert io.spark_uri(sub, "t/000000_0") == "t/000000_0"


@pytest.mark.parametrize("uri", ["wasbs://c@a.blob.core.windows.net/t", "oss://b/t", "viewfs://cluster/t"])
def test_a_uri_of_a_scheme_pyarrow_lacks_is_an_error_not_a_local_path(uri, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where a relative "wasbs:/..." directory would be made
    with pytest.raises(InvalidArgumentError, match=re.escape(uri) + ".*pass filesystem="):
        io.resolve_filesystem(uri)
    assert list(tmp_path.iterdir()) == []


def test_a_registered_scheme_resolves_through_its_factory(monkeypatch, tmp_path):
    """BUCKETKIT_FILESYSTEMS names a factory for a scheme pyarrow lacks (for the SQL INSERT's commit process,
    which has only the environment); register_filesystem does it in-process; a factory that cannot be loaded
    is an error naming the setting."""
    monkeypatch.setattr(io, "_REGISTERED", {})
    monkeypatch.setenv(io.FILESYSTEMS_ENV, "other=x:y, objtest=support.objectstore:filesystem")
    fs, inside = io.resolve_filesystem(f"objtest://{tmp_path}/t")
    assert fs.type_name == "py::objtest" and inside == f"{tmp_path}/t"
    io.register_filesystem("mine", lambda uri: (LOCAL, "/" + uri.split("://", 1)[1].lstrip("/")))
    assert io.resolve_filesystem("mine:///a/b") == (LOCAL, "/a/b")
    monkeypatch.setenv(io.FILESYSTEMS_ENV, "broken=no.such.module:f")
    with pytest.raises(InvalidArgumentError, match="BUCKETKIT_FILESYSTEMS: 'broken=no.such.module:f'"):
        io.resolve_filesystem("broken://x/y")


def test_resolve_filesystem_keeps_an_explicit_filesystem():
    sub = pafs.SubTreeFileSystem("/tmp", LOCAL)
    assert io.resolve_filesystem("rel/t", sub) == (sub, "rel/t")


@pytest.mark.parametrize("a, b, same", [
    ("http://minio.lake:9000", "minio.lake:9000", True),  # the scheme is not the store
    ("HTTPS://Minio.Lake:9000/", "minio.lake:9000", True),
    ("minio.lake:9000", "minio.lake:9001", False),
    (None, "", True),  # unset either way: AWS's own
    ("s3.eu-west-1.amazonaws.com", None, True),  # an AWS endpoint is AWS's, whichever region names it
    ("https://s3.amazonaws.com", "minio.lake:9000", False),
    (None, "127.0.0.1:9000", False),
])
def test_two_spellings_of_one_s3_endpoint_compare_equal(a, b, same):
    assert (io.endpoint_key(a) == io.endpoint_key(b)) is same


def test_the_s3_endpoint_of_a_uri_is_its_own_else_the_environments_as_pyarrow_resolves_it(monkeypatch):
    for name in io.S3_ENDPOINT_ENV:
        monkeypatch.delenv(name, raising=False)
    assert io.s3_endpoint("s3a://lake/t") is None
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://minio.lake:9000")
    assert io.s3_endpoint("s3a://lake/t") == "http://minio.lake:9000"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://ceph.lake:7480")  # the S3 service's own comes first
    assert io.s3_endpoint("s3://lake/t") == "http://ceph.lake:7480"
    assert io.s3_endpoint("s3://k:s@lake/t?endpoint_override=127.0.0.1:9000&scheme=http") == "127.0.0.1:9000"


DAYS = st.none() | st.integers(-800_000, 30_000)


@given(st.lists(st.tuples(DAYS, st.none() | st.lists(DAYS, max_size=3), st.none() | st.lists(DAYS, max_size=3)),
                min_size=1, max_size=12), st.integers(0, 12))
def test_every_date_of_a_julian_file_is_rebased_at_any_depth(rows, start):
    """io.spark_calendar (an ORC file's dates, read as Spark reads them) rebases each date of a top-level, list, struct
    and map column by julian_to_gregorian_days (held to Spark's RebaseDateTime in test_io_spark.py), slices too."""
    def arrow(rows):
        return pa.table({
            "d": pa.array([d for d, _, _ in rows], pa.int32()).view(pa.date32()),
            "l": pa.array([lst for _, lst, _ in rows], pa.list_(pa.int32())).cast(pa.list_(pa.date32())),
            "s": pa.StructArray.from_arrays([pa.array([d for d, _, _ in rows], pa.int32()).view(pa.date32())],
                                            names=["x"]),
            "m": pa.array([None if m is None else [(str(i), v) for i, v in enumerate(m)] for _, _, m in rows],
                          pa.map_(pa.string(), pa.int32())).cast(pa.map_(pa.string(), pa.date32())),
            "n": pa.array(range(len(rows)))})

    def rebased(d):
        return None if d is None else int(io.julian_to_gregorian_days([d])[0])

    offset = min(start, len(rows) - 1)
    table, rows = arrow(rows).slice(offset), rows[offset:]
    got = io.spark_calendar(table).cast(pa.schema([
        ("d", pa.int32()), ("l", pa.list_(pa.int32())), ("s", pa.struct([("x", pa.int32())])),
        ("m", pa.map_(pa.string(), pa.int32())), ("n", pa.int64())])).to_pylist()
    assert got == [{"d": rebased(d), "l": None if lst is None else [rebased(v) for v in lst], "s": {"x": rebased(d)},
                    "m": None if m is None else [(str(i), rebased(v)) for i, v in enumerate(m)], "n": offset + k}
                   for k, (d, lst, m) in enumerate(rows)]
