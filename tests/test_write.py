"""bucketkit.write with Spark: round trips checked against Spark's reader, Hive's hash and Spark's own writer."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

import bucketkit
from bucketkit.errors import InvalidArgumentError, SpecMismatchError, TableExistsError
from bucketkit.hashing.hive import bucket_number, hive_hash
from bucketkit.layout.metadata import read_spec
from bucketkit.layout.naming import bucket_of
from bucketkit.spark.writer import routing_keys
from support.files import data_files
from support.sparkown import last_plan, spark_insert

N = 600


@pytest.fixture(scope="module")
def source(spark):
    """Keys with repeats, strings, doubles, a partition column with NULLs and empty strings."""
    return spark.range(N).selectExpr(
        "id * 7919 % 1000 - 300 as k", "concat('s', cast(id % 37 as string)) as s", "cast(id as double) / 3 as d",
        "case when id % 5 = 0 then null when id % 5 = 1 then '' else cast(id % 3 as string) end as p").cache()


def read_back(spark, root: str, fmt: str):
    """Every visible row with the file it came from, through Spark's plain file reader."""
    from pyspark.sql import functions as F

    return spark.read.format(fmt).load(root).withColumn("file", F.input_file_name()).collect()


def read_file(path: Path, fmt: str):
    return (orc.read_table(path) if fmt == "orc" else pq.read_table(path)).to_pylist()


@pytest.mark.parametrize("version, fmt, partitioned, naming", [
    (2, "orc", False, "hive"),
    (1, "orc", True, "hive"),
    (2, "parquet", True, "legacy-presto"),
    (1, "parquet", False, "hive"),
])
def test_round_trip_every_row_in_the_file_of_its_bucket(spark, source, tmp_path, version, fmt, partitioned, naming):
    root = str(tmp_path / "t")
    result = bucketkit.write(source, "k", 8, path=root, bucketing_version=version, file_format=fmt,
                             partitioned_by="p" if partitioned else None, sorted_by=["d DESC"], naming=naming)
    rows = read_back(spark, root, fmt)
    # the reader infers partition values' types ("1" -> 1); compare as the strings written
    key = lambda r: (r["k"], r["s"], r["d"], None if not partitioned or r["p"] is None else str(r["p"]))  # noqa: E731
    expected = [(r.k, r.s, r.d, (r.p or None) if partitioned else None) for r in source.collect()]
    assert sorted(map(key, rows), key=repr) == sorted(expected, key=repr)
    assert result.rows == N
    for r in rows:
        name = r["file"].rsplit("/", 1)[-1]
        assert bucket_of(name) == bucket_number(hive_hash([r["k"]], ["bigint"], version), 8), name
    # one file per bucket per partition, each sorted by d descending
    files = data_files(root)
    per_dir = {}
    for f in files:
        per_dir.setdefault(f.parent, []).append(bucket_of(f.name))
        ds = [r["d"] for r in read_file(f, fmt)]
        assert ds == sorted(ds, reverse=True)
    assert all(len(b) == len(set(b)) for b in per_dir.values())
    if partitioned:
        assert {p.name for p in per_dir} == {"p=0", "p=1", "p=2", "p=__HIVE_DEFAULT_PARTITION__"}
    assert read_spec(root).bucketing_version == version


def test_v1_placement_matches_hives_own_hash(spark, hive, source, tmp_path):
    root = str(tmp_path / "t")
    bucketkit.write(source, "k", 16, path=root, bucketing_version=1)
    oi = hive.serde2.objectinspector
    factory = oi.primitive.PrimitiveObjectInspectorFactory
    gateway = spark.sparkContext._gateway
    inspectors = gateway.new_array(spark.sparkContext._jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector, 1)
    inspectors[0] = factory.writableLongObjectInspector  # a LongWritable stays a Java object through py4j
    seen = {}
    for r in read_back(spark, root, "orc"):
        seen[r["k"]] = bucket_of(r["file"].rsplit("/", 1)[-1])
    for k, bucket in seen.items():
        values = gateway.new_array(spark.sparkContext._jvm.java.lang.Object, 1)
        values[0] = spark.sparkContext._jvm.org.apache.hadoop.io.LongWritable(k)
        assert oi.ObjectInspectorUtils.getBucketNumber(values, inspectors, 16) == bucket, k


def test_v1_placement_matches_sparks_own_hive_bucketed_insert(spark, source, tmp_path):
    spark.sql(f"CREATE TABLE spark_v1 (k bigint, s string, d double, p string) CLUSTERED BY (k) INTO 8 BUCKETS "
              f"STORED AS ORC LOCATION '{tmp_path / 'spark'}'")
    source.createOrReplaceTempView("src")
    spark_insert(spark, "INSERT INTO spark_v1 SELECT * FROM src")
    theirs = {r["k"]: bucket_of(r["file"].rsplit("/", 1)[-1]) for r in read_back(spark, str(tmp_path / "spark"), "orc")}
    bucketkit.write(source, "k", 8, path=str(tmp_path / "ours"), bucketing_version=1)
    ours = {r["k"]: bucket_of(r["file"].rsplit("/", 1)[-1]) for r in read_back(spark, str(tmp_path / "ours"), "orc")}
    assert ours == theirs


def test_unpartitioned_buckets_are_routed_to_exactly_their_task(spark):
    from pyspark.sql import functions as F

    for buckets, tasks in [(8, 4), (64, 8), (12, 12), (99999, 123)]:
        keys = F.array(*[F.lit(v) for v in routing_keys(tasks)])
        df = spark.range(buckets).select(F.col("id").cast("int").alias("b"))
        got = (df.repartition(tasks, F.element_at(keys, F.col("b") % tasks + 1))
               .select("b", F.spark_partition_id().alias("task")).collect())
        assert {r.b: r.task for r in got} == {b: b % tasks for b in range(buckets)}


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_empty_bucket_files_on_and_off(spark, tmp_path, fmt):
    df = spark.createDataFrame([(1, "a", "x"), (2, "b", "x"), (3, "c", "y")], "k int, s string, p string")
    on = bucketkit.write(df, "k", 16, path=str(tmp_path / "on"), partitioned_by="p", file_format=fmt,
                         create_empty_bucket_files=True)
    off = bucketkit.write(df, "k", 16, path=str(tmp_path / "off"), partitioned_by="p", file_format=fmt)
    assert len(on.files) == 32 and len(data_files(tmp_path / "on")) == 32
    assert len(off.files) == 3 and len(data_files(tmp_path / "off")) == 3
    empties = [f for f in on.files if f.rows == 0]
    assert len(empties) == 29 and all(f.bytes > 0 for f in empties)
    for f in empties[:3]:  # valid files with the table's schema, readable by pyarrow and Spark
        assert read_file(Path(f.path), fmt) == []
        assert spark.read.format(fmt).load(f.path).schema.simpleString() == "struct<k:int,s:string>"
    assert sorted(r.k for r in spark.read.format(fmt).load(str(tmp_path / "on")).collect()) == [1, 2, 3]


def test_empty_dataframe_with_empty_bucket_files_writes_one_empty_file_per_bucket(spark, tmp_path):
    df = spark.createDataFrame([], "k bigint, v string")
    result = bucketkit.write(df, "k", 4, path=str(tmp_path / "t"), create_empty_bucket_files=True)
    assert [f.bucket for f in result.files] == [0, 1, 2, 3] and result.rows == 0
    assert spark.read.orc(str(tmp_path / "t")).count() == 0


def test_modes(spark, source, tmp_path):
    root = str(tmp_path / "t")
    first = bucketkit.write(source, "k", 4, path=root, partitioned_by="p")
    with pytest.raises(TableExistsError, match="mode='error'"):
        bucketkit.write(source, "k", 4, path=root, partitioned_by="p")
    assert bucketkit.write(source, "k", 4, path=root, partitioned_by="p", mode="ignore").skipped
    second = bucketkit.write(source, "k", 4, path=root, partitioned_by="p", mode="append")
    assert not {f.path for f in first.files} & {f.path for f in second.files}
    assert spark.read.orc(root).count() == 2 * N
    # printed, each says what it did (a created table's line once read "error <n> rows", the mode's name)
    assert str(first).startswith(f"{root}: created with {N} rows") and str(second).startswith(f"{root}: appended {N}")
    one = source.where("p = '1'")
    bucketkit.write(one, "k", 4, path=root, partitioned_by="p", mode="overwrite", overwrite_scope="partitions")
    counts = {r.p: r["count"] for r in spark.read.orc(root).groupBy("p").count().collect()}
    assert counts[1] == one.count() and counts[2] == 2 * source.where("p = '2'").count()
    result = bucketkit.write(one, "k", 4, path=root, partitioned_by="p", mode="overwrite")
    assert result.replaced_files > 0 and str(result).startswith(f"{root}: overwrote with {one.count()} rows")
    assert spark.read.orc(root).count() == one.count()
    assert sorted(p.name for p in Path(root).iterdir() if not p.name.startswith(("_", "."))) == ["p=1"]


def test_append_with_a_different_spec_is_refused_naming_the_difference(spark, source, tmp_path):
    root = str(tmp_path / "t")
    bucketkit.write(source, "k", 4, path=root)
    with pytest.raises(SpecMismatchError, match="bucket_count: table has 4, write has 8"):
        bucketkit.write(source, "k", 8, path=root, mode="append")
    with pytest.raises(SpecMismatchError, match="bucketing_version"):
        bucketkit.write(source, "k", 4, path=root, mode="append", bucketing_version=1)
    with pytest.raises(SpecMismatchError, match="bucket_types"):
        bucketkit.write(source, "s", 4, path=root, mode="append")
    # overwriting the whole table may change its spec
    bucketkit.write(source, "k", 8, path=root, mode="overwrite")
    assert read_spec(root).bucket_count == 8
    # options not given follow the table where the rows have its columns: a partitioned table overwritten whole by
    # rows without the partition column is written unpartitioned, as before
    bucketkit.write(source, "k", 4, path=root + "p", partitioned_by="p", sorted_by=["s"])
    bucketkit.write(source.drop("p"), "k", 4, path=root + "p", mode="overwrite")
    assert (read_spec(root + "p").partitioned_by, [k.column for k in read_spec(root + "p").sorted_by]) == ((), ["s"])


def test_columns_in_another_order_append_in_table_order(spark, source, tmp_path):
    root = str(tmp_path / "t")
    bucketkit.write(source, "k", 4, path=root)
    bucketkit.write(source.select("d", "p", "s", "k"), "k", 4, path=root, mode="append")
    assert [f.name for f in orc.ORCFile(data_files(root)[-1]).schema] == ["k", "s", "d", "p"]
    assert spark.read.orc(root).where("k is not null and s like 's%'").count() == 2 * N


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="upsert"), "mode='upsert': expected one of ['error', 'append', 'overwrite', 'ignore']"),
    (dict(file_format="csv"), "file_format='csv': expected one of ['orc', 'parquet']"),
    (dict(file_format="text"), "file_format='text': a Hive TEXTFILE table's files are read and written by Spark SQL"),
    (dict(naming="spark"), "naming='spark'"),
    (dict(compression="lzma"), "compression (for orc)='lzma'"),
    (dict(overwrite_scope="rows"), "overwrite_scope='rows'"),
    (dict(table="x"), "exactly one of path= or table="),
    (dict(bucketing_version=3), "bucketing_version=3"),
    (dict(partitioned_by="nope"), "column(s) ['nope'] not in the DataFrame"),
    (dict(bucket_types=["int", "int"]), "one Hive type per bucket column"),
])
def test_options_are_validated_up_front(spark, source, tmp_path, kwargs, message):
    with pytest.raises(InvalidArgumentError, match=re.escape(message)):
        bucketkit.write(source, "k", 4, path=str(tmp_path / "t"), **kwargs)
    assert not (tmp_path / "t").exists() or not list((tmp_path / "t").iterdir())


def test_a_table_in_a_session_without_a_metastore_is_refused_before_anything_is_written(spark, source, monkeypatch):
    """``SparkSession.builder.getOrCreate()`` without Hive support: Spark's in-memory catalog refuses to create a Hive
    table, which the write found after committing its rows under the warehouse (a CommitError, rows kept where no
    table reads them). Now the write is refused up front. The suite's session is a Hive one: its catalog setting is
    read as a session without Hive support reads it."""
    from bucketkit.spark import catalog

    where = catalog.table_location(spark, "no_metastore_t")
    real = spark.conf.get
    monkeypatch.setattr(spark.conf, "get", lambda key, *default: "in-memory" if key == "spark.sql.catalogImplementation"
                        else real(key, *default))
    with pytest.raises(InvalidArgumentError, match=re.escape(
            "table no_metastore_t: not in the session catalog, and this session cannot create it as a Hive bucketed "
            "table (spark.sql.catalogImplementation='in-memory'")):
        bucketkit.write(source, "k", 4, table="no_metastore_t")
    assert not os.path.exists(where.removeprefix("file:")), "rows were written for a table that cannot exist"


def test_bucket_types_override_changes_the_hash(spark, tmp_path):
    df = spark.createDataFrame([(f"name{i}", i) for i in range(40)], "name string, v int")
    result = bucketkit.write(df, "name", 8, path=str(tmp_path / "t"), bucketing_version=1,
                             bucket_types={"name": "varchar(20)"})
    assert read_spec(str(tmp_path / "t")).bucket_types == ("varchar(20)",)
    for f in result.files:
        for row in read_file(Path(f.path), "orc"):
            assert bucket_number(hive_hash([row["name"]], ["varchar(20)"], 1), 8) == f.bucket


def _staged_write_plan(spark) -> str:
    """The physical plan of the session's last staged write (bucketkit.write's Spark job)."""
    return last_plan(spark, "bucketkit staged write")


@pytest.mark.parametrize("keys, types, hashed_by_writer", [
    (["k"], None, True),  # bigint: the JVM writer hashes the key itself
    (["s"], {"s": "varchar(20)"}, True),  # v1 hashes varchar unlike string: the writer must know
    (["i"], {"i": "bigint"}, False),  # an int declared bigint: the id column casts and hashes as bigint
    (["d"], None, False),  # double
    (["k", "s"], None, False),  # two keys
])
@pytest.mark.parametrize("version", [1, 2])
def test_bucket_ids_from_the_writer_or_a_column_place_rows_as_hive(spark, tmp_path, keys, types, hashed_by_writer,
                                                                  version):
    df = spark.range(300).selectExpr("id * 7919 % 1000 - 300 AS k", "concat('s', CAST(id % 37 AS STRING)) AS s",
                                     "CAST(id % 50 AS INT) AS i", "CAST(id AS DOUBLE) / 3 AS d")
    root = str(tmp_path / "t")
    result = bucketkit.write(df, keys, 8, path=root, bucketing_version=version, bucket_types=types)
    plan = _staged_write_plan(spark)
    assert ("bucketkit_bucket" not in plan) == hashed_by_writer, plan
    hive_types = read_spec(root).bucket_types
    placed = 0
    for f in result.files:
        for row in read_file(Path(f.path), "orc"):
            assert bucket_number(hive_hash([row[c] for c in keys], list(hive_types), version), 8) == f.bucket, row
            placed += 1
    assert placed == 300


def test_two_concurrent_appends_both_land(spark, source, tmp_path):
    root = str(tmp_path / "t")
    bucketkit.write(source.limit(0), "k", 4, path=root)
    errors = []

    def append():
        try:
            bucketkit.write(source, "k", 4, path=root, mode="append")
        except Exception as exc:  # pragma: no cover - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=append) for _ in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    assert spark.read.orc(root).count() == 2 * N
    listed = [n for n in os.listdir(root) if not n.startswith(".bucketkit-version-")]  # the live version's marker
    # the metadata, the manifest of the version's files (layout/manifest) and the data files: nothing else
    assert sorted(listed) == sorted(["_bucketkit_table.json", "_bucketkit_files.json"] + [p.name for p in data_files(root)])


def test_cost_follows_rows_not_bucket_count(spark, tmp_path):
    """10 rows into 99999 buckets: placed where Spark's own Hive insert puts them, in seconds (was 60 s:
    the routing expression held one literal per bucket)."""
    import time

    df = spark.createDataFrame([(k * 7919, f"s{k}") for k in range(10)], "k bigint, s string")
    spark.sql(f"CREATE TABLE wide_v1 (k bigint, s string) CLUSTERED BY (k) INTO 99999 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path / 'spark'}'")
    df.createOrReplaceTempView("wide_src")
    spark_insert(spark, "INSERT INTO wide_v1 SELECT * FROM wide_src")
    theirs = {r["k"]: bucket_of(r["file"].rsplit("/", 1)[-1]) for r in read_back(spark, str(tmp_path / "spark"), "orc")}
    start = time.perf_counter()
    result = bucketkit.write(df, "k", 99999, path=str(tmp_path / "ours"), bucketing_version=1)
    elapsed = time.perf_counter() - start
    ours = {r["k"]: bucket_of(r["file"].rsplit("/", 1)[-1]) for r in read_back(spark, str(tmp_path / "ours"), "orc")}
    assert ours == theirs and len(ours) == 10 and len(result.files) == 10
    assert elapsed < 30, f"10 rows into 99999 buckets took {elapsed:.1f} s"


def test_column_names_in_another_case_name_the_dataframes_and_tables_columns(spark, source, tmp_path):
    """Spark resolves column names without their case (spark.sql.caseSensitive is off by default), and so do Hive and
    Trino: bucketed_by, sorted_by, partitioned_by, bucket_types and a join's keys are found in any case and written as
    the rows spell them. Failed before: "column(s) ['key'] not in the DataFrame's columns"."""
    root, other = str(tmp_path / "t"), str(tmp_path / "u")
    spelled = source.selectExpr("k AS Key", "s AS Val", "p AS Part")
    bucketkit.write(spelled, "key", 8, path=root, sorted_by=["VAL desc"], partitioned_by="part", bucketing_version=1)
    spec = read_spec(root)
    assert spec.bucketed_by == ("Key",) and [str(s) for s in spec.sorted_by] == ["Val DESC"]
    assert spec.partitioned_by == ("Part",)
    bucketkit.write(spelled, "KEY", 8, path=root, mode="append")  # the table's own options, found without their case
    bucketkit.write(spelled.select("Key", "Val"), "kEY", 4, path=other, bucket_types={"key": "bigint"},
                    bucketing_version=1)
    joined = bucketkit.join(spark, root, other, "key")
    expected = spelled.unionAll(spelled).join(spelled.select("Key", "Val"), "Key")
    assert joined.count() == expected.count() > 0
    assert "Exchange" not in joined._jdf.queryExecution().executedPlan().toString()
    assert sorted(r.Key for r in bucketkit.scan(spark, root, filters=[("KEY", "=", 3)]).collect()) == sorted(
        r.Key for r in spelled.unionAll(spelled).collect() if r.Key == 3)


def test_columns_named_with_dots_and_spaces_are_columns_not_fields(spark, source, tmp_path):
    """A column ``a.b`` is a column of that name, not field ``b`` of ``a`` (CSV headers and Hive's quoted
    identifiers make such names). Failed before: every write of a DataFrame with one raised Spark's raw
    UNRESOLVED_COLUMN, whatever the bucket column."""
    root, other = str(tmp_path / "t"), str(tmp_path / "u")
    odd = source.selectExpr("k AS `a.b`", "s AS `user id`", "p AS `p q`")
    bucketkit.write(odd, "a.b", 8, path=root, sorted_by=["user id"], partitioned_by="p q")
    bucketkit.write(odd, "a.b", 8, path=root, mode="append")
    bucketkit.write(odd.select("`a.b`", "`user id`"), "a.b", 4, path=other)
    checked = bucketkit.validate(root)
    assert checked.ok and checked.rows_checked == 2 * N
    assert sorted(r["user id"] for r in bucketkit.scan(spark, root, filters=[("a.b", "=", 3)]).collect()) == sorted(
        r["user id"] for r in odd.unionAll(odd).collect() if r["a.b"] == 3)
    joined = bucketkit.join(spark, root, other, "a.b")
    left, right = odd.unionAll(odd), odd.select(odd["`a.b`"].alias("key"))
    assert joined.count() == left.join(right, left["`a.b`"] == right["key"]).count() > 0
    assert "Exchange" not in joined._jdf.queryExecution().executedPlan().toString()
