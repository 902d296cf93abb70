"""discover(): every naming scheme, the original fallback, ACID trees, partitions and every error."""

from __future__ import annotations

import gc
import os

import pickle
import re
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from bucketkit import discover
from bucketkit.errors import BucketCountMismatchError, BucketkitError, CorruptTableError, TableNotFoundError
from bucketkit.layout.discovery import BucketFile

QID = "20190526_072952_00009_fn7s5"
UUID = "9a8b7c6d-1111-2222-3333-444455556666"


def make(root: Path, files: dict[str, int]) -> Path:
    """Create files (path -> size in bytes); a path ending in '/' creates an empty directory."""
    for rel, size in files.items():
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"x" * size)
    return root


def names(layout, partition=None):
    return {b: [p.rsplit("/", 1)[1] for p in paths] for b, paths in layout.files_by_bucket(partition).items()}


def test_hive_names_any_number_of_files_per_bucket(tmp_path):
    make(tmp_path, {"000000_0": 1, "000000_0_copy_1": 2, "000000_0_copy_2": 3, "000001_0": 4,
                    "000001_0_copy_1": 5, "000003_0": 6, "_SUCCESS": 0, ".000000_0.crc": 1})
    layout = discover(str(tmp_path), 4)
    assert layout.partitions == [{}]
    assert names(layout) == {0: ["000000_0", "000000_0_copy_1", "000000_0_copy_2"],
                             1: ["000001_0", "000001_0_copy_1"], 2: [], 3: ["000003_0"]}
    part = layout.partition_layouts[0]
    assert part.scheme == "hive" and part.empty_buckets == [2]
    assert layout.bucket_bytes() == {0: 6, 1: 9, 2: 0, 3: 6}
    assert layout.files_by_bucket()[3] == [str(tmp_path / "000003_0")]
    listed = part.buckets[3][0]
    assert listed == BucketFile(str(tmp_path / "000003_0"), "000003_0", 3, 6, "data", "hive", listed.mtime,
                                listed.mtime_ms)
    assert listed.mtime == os.stat(tmp_path / "000003_0").st_mtime_ns  # as listed: what pins a version's files


def test_trino_and_legacy_presto_names(tmp_path):
    make(tmp_path, {f"000002_0_{UUID}_{QID}": 1, f"{QID}_bucket-00000": 1, f"{QID}_bucket-00001.orc": 1})
    layout = discover(str(tmp_path), 3)
    assert names(layout) == {0: [f"{QID}_bucket-00000"], 1: [f"{QID}_bucket-00001.orc"], 2: [f"000002_0_{UUID}_{QID}"]}
    assert layout.partition_layouts[0].scheme == "legacy-presto+hive"


def test_acid_names_outside_acid_dirs(tmp_path):
    make(tmp_path, {"bucket_00000": 1, "bucket_00001_3": 1})
    layout = discover(str(tmp_path), 2)
    assert names(layout) == {0: ["bucket_00000"], 1: ["bucket_00001_3"]}


def test_spark_bucketby_scheme(tmp_path):
    make(tmp_path, {f"part-00000-{UUID}_00000.c000.snappy.parquet": 1,
                    f"part-00001-{UUID}_00000.c000.snappy.parquet": 1, f"part-00001-{UUID}_00002.c000.snappy.parquet": 1})
    layout = discover(str(tmp_path), 3)
    assert layout.partition_layouts[0].scheme == "spark"
    assert [len(v) for v in layout.files_by_bucket().values()] == [2, 0, 1]


@pytest.mark.parametrize("files", [["00000_0", "00001_0", "00002_0x"], ["file0", "file3", "file5"],
                                   ["bucketA", "bucketB", "bucketD"]])
def test_original_scheme_fallback(tmp_path, files):
    make(tmp_path, {n: 0 for n in files})  # zero-byte files still count as (empty) buckets
    layout = discover(str(tmp_path), 3)
    assert layout.partition_layouts[0].scheme == ("hive" if files[0] == "00000_0" else "original")
    assert names(layout) == {i: [n] for i, n in enumerate(files)}


def test_original_scheme_count_mismatch_names_directory_and_counts(tmp_path):
    make(tmp_path, {"dt=1/file0": 1, "dt=1/file1": 1, "dt=1/file2": 1})
    with pytest.raises(BucketCountMismatchError, match=r"dt=1: .*found 3 file\(s\), table declares 4 bucket"):
        discover(str(tmp_path), 4)


@pytest.mark.parametrize("files", [["file0", "000000_0", "000001_0", "000003_0"], ["file0", "file1", "000000_0"]],
                         ids=["as many files as buckets", "fewer"])
def test_a_file_no_scheme_names_beside_named_files_is_placed_by_no_guess(tmp_path, files):
    """Files named by a bucket scheme and one that is not (LOAD DATA, a copy by hand): no bucket is guessed for any of
    them. Ordering them by name (the original scheme) would put 000003_0 in bucket 2 here."""
    make(tmp_path, {f"dt=1/{f}": 1 for f in files})
    with pytest.raises(CorruptTableError, match=r"dt=1/file0: a file outside every bucket naming scheme beside "
                                                r"bucket-named files \(such as 000000_0\)"):
        discover(str(tmp_path), 4)


def test_bucket_beyond_count_is_corrupt(tmp_path):
    make(tmp_path, {"000000_0": 1, "000004_0": 1})
    with pytest.raises(CorruptTableError, match=r"000004_0: bucket 4 .* bucket count 4 \(table is corrupt\)"):
        discover(str(tmp_path), 4)
    make(tmp_path / "big", {"2147483648_0": 1})  # beyond 31 bits: still a Hive name, so still corrupt
    with pytest.raises(CorruptTableError, match="2147483648_0: bucket 2147483648"):
        discover(str(tmp_path / "big"), 4)


def test_subdirectory_in_bucket_directory_is_corrupt(tmp_path):
    make(tmp_path, {"000000_0": 1, "nested/000001_0": 1, "_hidden/whatever": 1, ".staging/x": 1})
    with pytest.raises(CorruptTableError, match=r"nested: visible sub-directory inside bucket directory"):
        discover(str(tmp_path), 2)


def test_hive_and_spark_names_mixed_is_corrupt(tmp_path):
    spark_name = f"part-00000-{UUID}_00001.c000.snappy.parquet"
    make(tmp_path, {"000000_0": 1, spark_name: 1})
    with pytest.raises(CorruptTableError, match=f"{spark_name}: Spark bucketBy file name mixed with Hive"):
        discover(str(tmp_path), 2)


def test_hidden_files_and_dirs_and_staging_dirs(tmp_path):
    make(tmp_path, {"000000_0": 1, "_SUCCESS": 0, ".hive-staging_hive_2019/-ext-10000/000001_0": 1,
                    "_temporary/0/task/000000_0": 1, ".bucketkit-staging-abc/dt=1/000000_0": 1,
                    "_bucketkit_table.json": 1})
    layout = discover(str(tmp_path), 2)
    assert names(layout) == {0: ["000000_0"], 1: []}
    assert layout.staging_dirs == (".bucketkit-staging-abc",)


def test_partitions_nested_default_and_escaped(tmp_path):
    make(tmp_path, {"dt=2019-03-01/country=FR/000000_0": 1, "dt=2019-03-01/country=a%2Fb%3Dc/000001_0": 1,
                    "dt=2019-03-01/country=__HIVE_DEFAULT_PARTITION__/000000_0": 1,
                    "dt=2019-03-02/country=FR/": 0, "dt=2019-03-02/_SUCCESS": 0})
    layout = discover(str(tmp_path), 2)
    assert layout.partitioned_by == ("dt", "country")
    assert layout.partitions == [{"dt": "2019-03-01", "country": "FR"},
                                 {"dt": "2019-03-01", "country": "__HIVE_DEFAULT_PARTITION__"},
                                 {"dt": "2019-03-01", "country": "a/b=c"},
                                 {"dt": "2019-03-02", "country": "FR"}]
    assert names(layout, {"dt": "2019-03-01", "country": "a/b=c"}) == {0: [], 1: ["000001_0"]}
    assert layout.partition("dt=2019-03-02/country=FR").scheme == "empty"
    assert names(layout) == {0: ["000000_0", "000000_0"], 1: ["000001_0"]}
    same = discover(str(tmp_path), 2, partitioned_by=["dt", "country"])
    assert same.partitions == layout.partitions


def test_partition_filter_runs_before_listing_files(tmp_path):
    make(tmp_path, {"dt=1/000000_0": 1, "dt=2/000000_0": 1, "dt=2/not-a-bucket-dir/x": 1})
    seen = []
    layout = discover(str(tmp_path), 1, partition_filter=lambda v: seen.append(v) or v["dt"] == "1")
    assert layout.partitions == [{"dt": "1"}] and seen == [{"dt": "1"}, {"dt": "2"}]
    # dt=2 is corrupt, but was never listed; without the filter it is found.
    with pytest.raises(CorruptTableError, match="dt=2/not-a-bucket-dir"):
        discover(str(tmp_path), 1)


def test_partition_level_errors(tmp_path):
    make(tmp_path, {"dt=1/000000_0": 1, "stray_file": 1})
    with pytest.raises(CorruptTableError, match=r"stray_file: a file where partition directories dt=<value> are expected"):
        discover(str(tmp_path), 1)
    with pytest.raises(CorruptTableError, match=r"stray_file: a file where partition directories dt=<value> are expected"):
        discover(str(tmp_path), 1, partition_filter=lambda v: True)


def test_wrong_partition_key_order(tmp_path):
    make(tmp_path, {"country=FR/dt=1/000000_0": 1})
    with pytest.raises(CorruptTableError, match=r"country=FR: expected a partition directory dt=<value> .*key 'country'"):
        discover(str(tmp_path), 1, partitioned_by=["dt", "country"])
    with pytest.raises(CorruptTableError, match=r"country=FR: expected a partition directory dt=<value>"):
        discover(str(tmp_path), 1, partitioned_by=["dt", "country"], partition_filter=lambda v: True)


def test_non_partition_directory_in_partitioned_table(tmp_path):
    make(tmp_path, {"dt=1/000000_0": 1, "backup/000000_0": 1})
    with pytest.raises(CorruptTableError, match="backup: expected a partition directory dt=<value>.*not key=value"):
        discover(str(tmp_path), 1, partitioned_by=["dt"])


def test_file_at_wrong_depth_with_inferred_keys(tmp_path):
    make(tmp_path, {"dt=1/country=FR/000000_0": 1, "dt=2/000000_0": 1})
    with pytest.raises(CorruptTableError, match=r"dt=2/000000_0: a file where partition directories country=<value> are expected"):
        discover(str(tmp_path), 1)


def test_missing_table_and_bad_bucket_count(tmp_path):
    with pytest.raises(TableNotFoundError, match="does not exist"):
        discover(str(tmp_path / "nope"), 2)
    make(tmp_path, {"f": 1})
    with pytest.raises(TableNotFoundError, match="is a file"):
        discover(str(tmp_path / "f"), 2)
    with pytest.raises(ValueError, match="bucket_count=0"):
        discover(str(tmp_path), 0)


ACID_TREE = {
    "000000_0": 10, "000001_0_copy_1": 10,  # originals, superseded by the base
    "base_0000005/bucket_00000": 5, "base_0000005/bucket_00001": 5, "base_0000005/_orc_acid_version": 1,
    "base_0000002/bucket_00000": 5,  # older base: obsolete
    "delta_0000003_0000003_0000/bucket_00000": 1,  # covered by base_5: obsolete
    "delta_0000006_0000006_0000/bucket_00001": 2, "delta_0000006_0000006_0000/bucket_00001_flush_length": 8,
    "delete_delta_0000007_0000007_0000/bucket_00000": 3,
}


def test_acid_tree(tmp_path):
    make(tmp_path, ACID_TREE)
    layout = discover(str(tmp_path), 2)
    part = layout.partition_layouts[0]
    assert part.scheme == "acid"
    got = {b: [(f.kind, f.path[len(str(tmp_path)) + 1:]) for f in files] for b, files in part.buckets.items()}
    assert got == {0: [("base", "base_0000005/bucket_00000"), ("delete_delta", "delete_delta_0000007_0000007_0000/bucket_00000")],
                   1: [("base", "base_0000005/bucket_00001"), ("delta", "delta_0000006_0000006_0000/bucket_00001")]}
    assert sorted(p.rsplit("/", 1)[1] for p in part.obsolete) == [
        "000000_0", "000001_0_copy_1", "base_0000002", "delta_0000003_0000003_0000"]
    assert layout.files_by_bucket(kinds=["base"]) == {0: [str(tmp_path / "base_0000005/bucket_00000")],
                                                      1: [str(tmp_path / "base_0000005/bucket_00001")]}


@pytest.mark.parametrize("files, why", [
    ({"p=1/000000_0": 1, "p=1/nested/000001_0": 1, "p=1/.x": 1}, "nested: visible sub-directory"),
    ({"p=1/000000_0": 1, "p=1/000004_0": 2}, "000004_0: bucket 4"),
    ({"p=1/a.orc": 1, "p=1/b.orc": 2}, "original scheme applies"),
    ({"p=1/000000_0": 1, "p=1/notes.orc": 2}, "notes.orc: a file outside every bucket naming scheme beside bucket-named"),
])
def test_unvouched_partitions_are_kept_with_why_when_asked(tmp_path, files, why):
    """A scan reads a plain partition no bucket layout allows unbucketed, as Spark SQL's catalog does: asked
    to, discover keeps it with the reason and its visible files (the files directly in it, as Spark's reader
    reads them), and keeps raising for everything else; other partitions are mapped as always."""
    make(tmp_path, {**files, "p=0/000001_0": 3})
    with pytest.raises((CorruptTableError, BucketCountMismatchError)):
        discover(str(tmp_path), 4)
    sound, odd = discover(str(tmp_path), 4, unvouched=True).partition_layouts
    assert sound.doubt is None and [f.name for f in sound.buckets[1]] == ["000001_0"]
    assert odd.scheme == "unvouched" and re.search(why, odd.doubt) and not odd.files
    assert sorted(f.name for f in odd.unplaced) == sorted(n.split("/")[1] for n in files if n.count("/") == 1
                                                          and not n.split("/")[1].startswith("."))
    make(tmp_path / "acid", {"p=1/delta_0000001_0000001_0000/bucket_00000": 1, "p=1/nested/x": 1})
    with pytest.raises(CorruptTableError, match="nested: visible sub-directory"):  # an ACID partition: never
        discover(str(tmp_path / "acid"), 1, unvouched=True)


def test_acid_tree_with_current_originals_and_partitions(tmp_path):
    make(tmp_path, {"p=1/000000_0": 1, "p=1/000000_0_copy_1": 1, "p=1/delta_0000001_0000001_0000/bucket_00000": 1})
    part = discover(str(tmp_path), 1).partition_layouts[0]
    assert [(f.kind, f.name) for f in part.buckets[0]] == [
        ("original", "000000_0"), ("original", "000000_0_copy_1"), ("delta", "bucket_00000")]


def test_acid_errors(tmp_path):
    make(tmp_path, {"delta_0000001_0000001_0000/junk.txt": 1})
    with pytest.raises(CorruptTableError, match="junk.txt: not a bucket file name .* inside Hive ACID directory"):
        discover(str(tmp_path), 1)
    make(tmp_path / "b", {"base_0000001/sub/bucket_00000": 1})
    with pytest.raises(CorruptTableError, match="base_0000001/sub: visible sub-directory inside Hive ACID directory"):
        discover(str(tmp_path / "b"), 1)
    make(tmp_path / "c", {"base_0000001/bucket_00003": 1})
    with pytest.raises(CorruptTableError, match="bucket_00003: bucket 3"):
        discover(str(tmp_path / "c"), 2)


def test_errors_are_bucketkit_errors_and_layout_is_plain_data(tmp_path):
    assert issubclass(CorruptTableError, BucketkitError) and issubclass(BucketCountMismatchError, BucketkitError)
    make(tmp_path, {"000000_0": 3})
    layout = discover(str(tmp_path), 1)
    assert layout.summary()["partitions"][0] == {
        "values": {}, "path": str(tmp_path), "scheme": "hive", "files": 1, "bytes": 3, "files_per_bucket": [1],
        "bytes_per_bucket": [3], "empty_buckets": [], "obsolete": []}
    file = layout.partition_layouts[0].buckets[0][0]
    assert pickle.loads(pickle.dumps(file)) == file


def test_mtime_ms_is_the_listed_mtime_in_whole_milliseconds(tmp_path):
    """mtime_ms is what Hadoop's FileStatus.getModificationTime() gives for the file: its mtime in ns
    floored to ms, whichever way the table is listed; None (and mtime 0) where the store gives none."""
    make(tmp_path, {"dt=1/000000_0": 1})
    file = tmp_path / "dt=1/000000_0"
    os.utime(file, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_999_999))
    expected = os.stat(file).st_mtime_ns // 1_000_000
    assert expected == 1_700_000_000_123  # the file system kept at least ms
    local = discover(str(tmp_path), 1).partition_layouts[0].buckets[0][0]
    filtered = discover(str(tmp_path), 1, partition_filter=lambda v: True).partition_layouts[0].buckets[0][0]
    sub = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())  # listed by pyarrow, not by handles
    store = discover("", 1, filesystem=sub).partition_layouts[0].buckets[0][0]
    assert local.mtime_ms == filtered.mtime_ms == store.mtime_ms == expected
    assert local.mtime == store.mtime == os.stat(file).st_mtime_ns

    def no_mtime(infos):
        return [pafs.FileInfo(i.path, i.type, size=i.size) for i in infos]

    calls = {"get_type_name": lambda self: "no-mtime", "normalize_path": lambda self, path: path,
             "get_file_info": lambda self, paths: no_mtime(sub.get_file_info(paths)),
             "get_file_info_selector": lambda self, selector: no_mtime(sub.get_file_info(selector))}
    refuse = {m: lambda self, *a, **k: pytest.fail("discover only lists")
              for m in pafs.FileSystemHandler.__abstractmethods__}
    handler = type("NoMtime", (pafs.FileSystemHandler,), {**refuse, **calls})()
    unknown = discover("", 1, filesystem=pafs.PyFileSystem(handler)).partition_layouts[0].buckets[0][0]
    assert (unknown.name, unknown.size, unknown.mtime, unknown.mtime_ms) == ("000000_0", 1, 0, None)


def test_hidden_name_holding_the_staging_prefix_is_no_staging_dir(tmp_path):
    """Only a hidden name that starts with the staging prefix is a staging directory (the listing used to
    stop with StopIteration on these)."""
    make(tmp_path, {"dt=1/000000_0": 1, "dt=1/_tmp.bucketkit-staging-1": 1, "_x.bucketkit-staging-2/": 0,
                    "dt=1/.bucketkit-staging-3/000000_0": 1})
    for layout in (discover(str(tmp_path), 1), discover(str(tmp_path), 1, partition_filter=lambda v: True)):
        assert layout.staging_dirs == ("dt=1/.bucketkit-staging-3",) and names(layout) == {0: ["000000_0"]}


def test_listing_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    """discover pauses the cyclic collector while it lists: on again after, off if it was off, and a
    program's frozen objects (kept out of collections before forking) still frozen."""
    make(tmp_path, {"000000_0": 1, "bad/000001_0": 1})
    discover(str(tmp_path / "bad"), 2)
    assert gc.isenabled()
    with pytest.raises(CorruptTableError):
        discover(str(tmp_path), 2)
    assert gc.isenabled()
    gc.disable()
    try:
        discover(str(tmp_path / "bad"), 2)
        assert not gc.isenabled()
    finally:
        gc.enable()
    gc.freeze()
    try:
        assert gc.get_freeze_count() > 0
        discover(str(tmp_path / "bad"), 2)
        # still frozen: unfreezing would empty the permanent generation (the count may drop by a few
        # objects other threads free meanwhile, so it is not compared exactly)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_uri_and_explicit_filesystem(tmp_path):
    make(tmp_path, {"dt=1/000000_0": 1})
    by_uri = discover(tmp_path.as_uri(), 1)
    assert by_uri.files_by_bucket() == {0: [str(tmp_path / "dt=1/000000_0")]}
    sub = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    assert discover("", 1, filesystem=sub).files_by_bucket() == {0: ["dt=1/000000_0"]}
