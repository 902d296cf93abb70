"""One verdict on placement: the SQL catalog (io.bucketkit.layout.FileManifest) and Python
(bucketkit.layout.manifest) vouch for the same partitions of the same files, and both skip the read-time
check exactly there; where they check, a lying file still fails the read.

Golden values: what the tests did to the files (touch, add, remove, rewrite the record), Spark's own reads
with the catalog off, and the rows Spark's own writer placed by round-robin (never hashed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import hypothesis.strategies as st
import pyarrow.fs as pafs
import pytest
from hypothesis import HealthCheck, given, settings

import bucketkit
from bucketkit.layout.discovery import discover
from bucketkit.layout.manifest import MANIFEST_FILE, placement
from tests.support.commit import SPEC, commit_rows

pytestmark = pytest.mark.spark

ROWS = {"p=a": [(1, "x"), (2, "y"), (7, "z")], "p=b": [(3, "u"), (4, "v")], "p=c": [(8, "w")]}
MUTATIONS = ("none", "touch", "foreign", "remove", "grow")


def _mutate(root: Path, part: str, how: str) -> None:
    files = sorted(p for p in (root / part).iterdir() if not p.name.startswith((".", "_")))
    if how == "touch":
        st_ = os.stat(files[0])
        os.utime(files[0], ns=(st_.st_atime_ns, st_.st_mtime_ns + 3_000_000_000))
    elif how == "foreign":
        (root / part / "000003_0_copy_1").write_bytes(files[0].read_bytes())
    elif how == "remove":
        os.remove(files[0])
    elif how == "grow":  # rewritten with other bytes, its time kept (a copy tool preserving times)
        st_ = os.stat(files[0])
        files[0].write_bytes(files[0].read_bytes() + b"\0")
        os.utime(files[0], ns=(st_.st_atime_ns, st_.st_mtime_ns))


def _python(root: Path) -> dict[str, bool]:
    layout = discover(str(root), 4, partitioned_by=("p",))
    verdict = placement(pafs.LocalFileSystem(), str(root), SPEC, layout.partition_layouts)
    return {p.relpath: p.relpath in verdict.vouched for p in layout.partition_layouts}


def _jvm(spark, root: Path, hive_type: str = "bigint", version: int = 2) -> dict[str, bool]:
    dirs = sorted(str(p) for p in root.iterdir() if p.name.startswith("p="))
    got = spark._jvm.io.bucketkit.layout.FileManifest.describe(str(root), dirs, "k", hive_type, 4, version)
    return {Path(d).name: v == "vouched" for d, v in zip(dirs, got)}


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.fixed_dictionaries({p: st.sampled_from(MUTATIONS) for p in ROWS}),
       record=st.sampled_from(("kept", "layout", "gone", "garbage")))
def test_the_catalog_and_python_vouch_for_the_same_partitions(spark, tmp_path_factory, changes, record):
    root = tmp_path_factory.mktemp("manifest") / "t"
    commit_rows(root, ROWS)
    for part, how in changes.items():
        _mutate(root, part, how)
    manifest = root / MANIFEST_FILE
    data = json.loads(manifest.read_text())
    os.remove(manifest)  # a new file: the kept version's link of the record stays as it was
    if record == "layout":
        manifest.write_text(json.dumps({**data, "layout": {**data["layout"], "bucket_types": ["int"]}}))
    elif record == "garbage":
        manifest.write_text("{\"bucketkit_manifest_version\": 1")
    elif record == "kept":
        manifest.write_text(json.dumps(data))
    python, jvm = _python(root), _jvm(spark, root)
    assert python == jvm
    expected = {p: record == "kept" and how == "none" for p, how in changes.items()}
    assert python == expected


def test_a_bucket_type_other_than_recorded_is_checked_by_both(spark, tmp_path):
    root = tmp_path / "t"
    commit_rows(root, ROWS)
    assert _jvm(spark, root) == _python(root) == {"p=a": True, "p=b": True, "p=c": True}
    assert _jvm(spark, root, hive_type="int") == {"p=a": False, "p=b": False, "p=c": False}  # int hashes otherwise
    assert _jvm(spark, root, version=1) == {"p=a": False, "p=b": False, "p=c": False}


def _scan_plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_a_table_bucketkit_wrote_is_read_without_the_check_and_a_changed_one_with_it(spark, tmp_path):
    from pyspark.sql import functions as F

    root = str(tmp_path / "t")
    df = spark.range(4000).select((F.col("id") * 3).alias("k"), F.col("id").cast("string").alias("s"))
    bucketkit.write(df, "k", 8, path=root)
    scan = bucketkit.scan(spark, root, filters=[("k", "=", 30)])
    assert "FileBucketCheck" not in _scan_plan(scan) and scan.collect()[0].s == "10"
    assert "placement:  vouched" in bucketkit.plan_scan(root, [("k", "=", 30)]).explain()
    # Hive's INSERT INTO adds a file: every row of that partition is checked again, and right rows come back
    live = sorted(f for f in os.listdir(root) if f.startswith("0"))
    os.link(os.path.join(root, live[1]), os.path.join(root, live[1].split("_")[0] + "_0_copy_1"))
    plan = bucketkit.plan_scan(root, [("k", "=", 30)])
    assert "placement:  checked row by row: " in plan.explain() and "_copy_1 is not among the files" in plan.explain()


@pytest.mark.parametrize("k, fmt", [("k", "orc"), ("user.id x", "orc"), ("user `id`", "parquet")])
def test_a_lying_file_added_to_a_vouched_table_fails_the_pruned_read(spark, tmp_path, k, fmt):
    """A file of unhashed rows named as a bucket of a table bucketkit wrote: the manifest does not list it, so
    the pruned read checks the partition's rows and fails naming the file (never a silent miss), as PySpark's
    SparkRuntimeException (a raw Py4JJavaError before), as the check bucketkit runs in Python raises it. The
    check's key is the column of that exact name, one that needs quoting too (a backtick in it: in Parquet, as
    Spark's own ORC reader cuts a file's column name at a backtick)."""
    from pyspark.errors import SparkRuntimeException
    from pyspark.sql import functions as F

    root = tmp_path / "t"
    bucketkit.write(spark.range(400).select(F.col("id").cast("int").alias(k)), k, 4, path=str(root), file_format=fmt)
    raw = tmp_path / "raw"
    spark.range(400, 800).select(F.col("id").cast("int").alias(k)).repartition(1).write.format(fmt).save(str(raw))
    (part,) = [p for p in os.listdir(raw) if p.startswith("part-")]
    bucket = bucketkit.plan_scan(str(root), [(k, "=", 401)]).selected_buckets
    (b,) = bucket
    os.rename(raw / part, root / f"{b:06d}_0_copy_1")
    with pytest.raises(SparkRuntimeException, match=r"bucketkit: \S+_copy_1 \(table .*, bucket \d of 4 by its name\) "
                                                    r"holds a row whose .*id.* belongs in bucket \d" if k != "k" else
                                                    r"holds a row whose k belongs in bucket \d"):
        bucketkit.scan(spark, str(root), filters=[(k, "=", 401)]).collect()


def test_validate_vouch_records_a_table_whose_rows_are_in_place_and_only_that(spark, tmp_path):
    """Files placed by a writer that records nothing (bucketkit's files with every record removed stand for
    Hive's or Trino's): ``validate --vouch`` re-hashes every row, finds them in place, and records them, so the
    pruned read is vouched. Files of unhashed rows are not recorded: their read stays checked."""
    from pyspark.sql import functions as F

    from bucketkit.validation import validate

    root = tmp_path / "t"
    bucketkit.write(spark.range(2000).select(F.col("id").alias("k")), "k", 4, path=str(root))
    for record in [root, *tmp_path.glob(".t.bucketkit.versions/*")]:
        if (record / MANIFEST_FILE).exists():
            os.remove(record / MANIFEST_FILE)
    assert "placement:  checked row by row: no " in bucketkit.plan_scan(str(root), [("k", "=", 5)]).explain()
    assert validate(str(root), sample=0.5, vouch=True).vouched == (
        "not vouched: not every row was checked (sample, every or a partition filter)")
    result = validate(str(root), vouch=True)
    assert result.ok and result.vouched == f"vouched: 4 file(s) recorded in {root}/{MANIFEST_FILE}"
    assert "placement:  vouched: every file read is one validate recorded" in bucketkit.plan_scan(
        str(root), [("k", "=", 5)]).explain()

    lying = tmp_path / "lying"
    spark.range(400).select(F.col("id").alias("k")).repartition(4).write.orc(str(tmp_path / "raw"))
    lying.mkdir()
    for i, name in enumerate(sorted(p for p in os.listdir(tmp_path / "raw") if p.startswith("part-"))):
        os.rename(tmp_path / "raw" / name, lying / f"{i:06d}_0")
    opts = dict(bucketed_by="k", bucket_count=4, bucketing_version=2, table_columns={"k": "bigint"})
    result = validate(str(lying), vouch=True, **opts)
    assert not result.ok and result.vouched == "not vouched: misplaced rows were found"
    assert not (lying / MANIFEST_FILE).exists()


def test_the_catalog_explains_a_vouched_read_and_a_checked_one(spark):
    from pyspark.sql import functions as F

    spark.sql("DROP TABLE IF EXISTS manifest_sql")
    bucketkit.write(spark.range(1000).select(F.col("id").alias("k"), F.col("id").cast("string").alias("s")),
                    "k", 4, table="manifest_sql")
    spark.sql("INSERT INTO manifest_sql SELECT id + 1000, 'more' FROM range(10)")  # bucketkit's own commit
    text = spark.sql("EXPLAIN SELECT * FROM manifest_sql WHERE k = 7").collect()[0][0]
    assert "placement vouched (every file read is one commit" in text, text
    location = spark.sql("DESCRIBE FORMATTED manifest_sql").where("col_name = 'Location'").collect()[0].data_type
    root = location.replace("file:", "")
    victim = sorted(f for f in os.listdir(root) if f.startswith("0"))[0]
    st_ = os.stat(os.path.join(root, victim))
    os.utime(os.path.join(root, victim), ns=(st_.st_atime_ns, st_.st_mtime_ns + 2_000_000_000))
    spark.catalog.refreshTable("manifest_sql")
    text = spark.sql("EXPLAIN SELECT * FROM manifest_sql WHERE k = 7").collect()[0][0]
    assert "rows' buckets checked (" in text and f"{victim} changed since commit" in text, text
    assert spark.sql("SELECT s FROM manifest_sql WHERE k = 7").collect()[0].s == "7"
    spark.sql("DROP TABLE manifest_sql")


def test_a_manifest_validate_rewrites_is_the_one_the_next_query_reads(spark):
    """The catalog keeps the manifests it parsed (a partitioned table's planning parsed its manifest on every query),
    by the file's length and modification time: a file another writer adds makes the next read checked, and once
    ``validate --vouch`` records it, with the same version live, the next query in the same session is vouched again."""
    import shutil

    from pyspark.sql import functions as F

    from bucketkit.validation import validate

    spark.sql("DROP TABLE IF EXISTS manifest_again")
    bucketkit.write(spark.range(1000).select(F.col("id").alias("k"), F.col("id").cast("string").alias("s")),
                    "k", 4, table="manifest_again")
    plan = lambda: spark.sql("EXPLAIN SELECT * FROM manifest_again WHERE k = 7").collect()[0][0]  # noqa: E731
    assert "placement vouched (every file read is one commit" in plan()
    root = spark.sql("DESCRIBE FORMATTED manifest_again").where(
        "col_name = 'Location'").collect()[0].data_type.replace("file:", "")
    bucket = bucketkit.plan_scan("manifest_again", [("k", "=", 7)], spark=spark).files[0].rsplit("/", 1)[-1]
    shutil.copy(os.path.join(root, bucket), os.path.join(root, bucket.split("_")[0] + "_0_copy_1"))  # a Hive append
    assert "rows' buckets checked (" in plan() and "_0_copy_1 is not among the files" in plan()
    result = validate(root, vouch=True)
    assert result.ok and result.vouched.startswith("vouched: 5 file(s) recorded")
    assert "placement vouched (every file read is one validate recorded" in plan(), plan()
    assert spark.sql("SELECT count(*) FROM manifest_again WHERE k = 7").collect()[0][0] == 2
    spark.sql("DROP TABLE manifest_again")
