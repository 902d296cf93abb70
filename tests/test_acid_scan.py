"""Hive ACID tables through bucketkit.scan, the ``bucketkit`` data source and catalog tables.

Expected rows come from the files' owning tests, as in tests/test_acidread.py: Trino's
``TestOrcPageSourceFactory`` (the 25k-row nation delta, each TPC-H nation 1000 times; its two
delete deltas remove nation keys 5 and 19; the original-file table loses key 24),
``TestOrcDeletedRows`` (the original-file delete event hits row 2 of bucket 0),
``TestOriginalFilesUtils`` (bucket 2's third original file starts at row id 8) and Hive's
``repl_load_old_version.q.out`` for the HDP managed tables. Tables built here (pruning, histories)
are checked against a reference merge written in the test.
"""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pyarrow.orc as po
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bucketkit
from bucketkit.acid.naming import encode_bucket_property
from bucketkit.acid.plan import UNBUCKETED
from bucketkit.errors import AcidStateError, InvalidArgumentError
from bucketkit.hashing.hive import BucketFunction
from bucketkit.spark.datasource import register_data_sources
from bucketkit.spark.scan import plan_scan, read_plan, scan
from support.engine import engine, needs_engine
from support.sparkown import catalog_off
from support.acid import (DELETE, INSERT, bucketed_acid_table, dummy_rows, nations, plain, replay, rows,
                          write_acid_file, writes)


@needs_engine
def test_delta_with_two_delete_deltas_through_scan_and_the_data_source(spark):
    expected = sorted(n for n in nations() for _ in range(1000) if n[0] not in (5, 19))
    assert rows(scan(spark, path=engine("composed/nation_acid_with_delete_deltas"))) == expected
    register_data_sources(spark)
    df = spark.read.format("bucketkit").load(engine("composed/nation_acid_with_delete_deltas"))
    assert rows(df.where("n_nationkey IN (5, 6)")) == [n for n in expected if n[0] == 6]


@needs_engine
def test_hdp_managed_tables_match_hive_q_out(spark):
    got = {t: rows(scan(spark, path=engine(f"hive/test_hcube_2.db/{t}"))) for t in ("tbl1", "tbl2", "tbl3")}
    assert got == {"tbl1": [(1,)] * 3, "tbl2": [(1,)] * 2, "tbl3": [(1,)]}


@needs_engine
def test_write_ids_exclude_open_and_aborted_writes(spark):
    tbl1 = engine("hive/test_hcube_2.db/tbl1")
    assert scan(spark, path=tbl1, write_ids="test_hcube_2.tbl1:3:2:2:").count() == 2  # write 2 open
    assert scan(spark, path=tbl1, write_ids="test_hcube_2.tbl1:3:9223372036854775807::3").count() == 2  # 3 aborted
    nation = engine("composed/nation_acid_with_delete_deltas")
    keys = scan(spark, path=nation, write_ids="default.nation:4:3:3:").select("n_nationkey").distinct()
    assert sorted(r[0] for r in keys.collect()) == [k for k in range(25) if k != 19]  # delete 3 open, 4 committed
    register_data_sources(spark)
    df = spark.read.format("bucketkit").option("write_ids", "default.nation:2:9223372036854775807::").load(nation)
    assert df.count() == 25000


@needs_engine
def test_row_id_gives_hives_identities_of_original_files(spark):
    df = scan(spark, path=engine("trino/dummy_id_data_orc"), row_id=True)
    assert df.schema["row__id"].dataType.simpleString() == "struct<writeid:bigint,bucketid:int,rowid:bigint>"
    got = {r["id"]: r["row__id"].asDict() for r in df.collect()}
    assert rows(df.drop("row__id")) == dummy_rows()
    ids = scan(spark, path=engine("trino/dummy_id_data_orc"), columns=["row__id", "id"], row_id=True)
    assert sorted((r["id"], r["row__id"].asDict()) for r in ids.collect()) == sorted(got.items())
    copy2_first = plain("trino/dummy_id_data_orc/000002_0_copy_2")[0][0]
    assert got[copy2_first] == {"writeid": 0, "bucketid": 537001984, "rowid": 8}  # TestOriginalFilesUtils
    bucket0 = plain("trino/dummy_id_data_orc/000000_0")
    assert bucket0[2][0] not in got  # TestOrcDeletedRows: the delete event hits row 2 of bucket 0
    assert [got[r[0]]["rowid"] for r in (bucket0[0], bucket0[1], bucket0[3])] == [0, 1, 3]
    register_data_sources(spark)
    ds = spark.read.format("bucketkit").option("row_id", "true").load(engine("trino/dummy_id_data_orc"))
    assert sorted((r["id"], tuple(r["row__id"])) for r in ds.collect()) == \
        sorted((k, tuple(v.values())) for k, v in got.items())


@needs_engine
def test_acid_v1_file_fails_with_acid_state_error_naming_it(spark, tmp_path):
    hive3 = engine("trino/acid_version_validation/acid_version_hive_3/00000_0")
    v1 = engine("trino/acid_version_validation/no_orc_acid_version_in_metadata/00000_0")
    for name, src in (("delta_0000001_0000001_0000/bucket_00000", hive3), ("delta_0000002_0000002_0000/bucket_00001", v1)):
        (tmp_path / name).parent.mkdir()
        shutil.copy(src, tmp_path / name)
    with pytest.raises(AcidStateError, match=r"Expected `hive.acid.version` in ORC metadata in "
                       r".*delta_0000002_0000002_0000/bucket_00001 to be >=2 but was <empty>"):
        scan(spark, path=str(tmp_path))
    register_data_sources(spark)
    with pytest.raises(Exception, match="delta_0000002_0000002_0000/bucket_00001 to be >=2"):
        spark.read.format("bucketkit").load(str(tmp_path)).collect()


@needs_engine
def test_partitioned_table_with_typed_partition_column(spark, tmp_path):
    src = engine("composed/nation_acid_with_delete_deltas")
    for p in ("p=1", "p=2"):
        shutil.copytree(src, tmp_path / p)
    # p=2: the delta became an INSERT OVERWRITE base; an older delta under it is obsolete
    os.rename(tmp_path / "p=2/delta_0000002_0000002_0000", tmp_path / "p=2/base_0000002")
    shutil.copytree(src + "/delta_0000002_0000002_0000", tmp_path / "p=2/delta_0000001_0000001_0000")
    expected = sorted(n for n in nations() for _ in range(1000) if n[0] not in (5, 19))
    df = scan(spark, path=str(tmp_path), filters="p = 2 AND n_regionkey = 1", partition_types=["int"])
    assert df.schema["p"].dataType.simpleString() == "int"
    assert rows(df) == [n + (2,) for n in expected if n[2] == 1]
    assert scan(spark, path=str(tmp_path), partition_types=["int"]).count() == 2 * len(expected)


def test_insert_only_table(spark, tmp_path):
    def put(rel, values):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        po.write_table(pa.table({"x": pa.array(values, pa.int64())}), str(tmp_path / rel))

    put("000000_0", [1])  # original, superseded by base_2
    put("base_0000002/000000_0", [10])
    put("base_0000002/000001_0", [11])
    put("delta_0000003_0000003_0000/000000_0", [30])
    put("delta_0000004_0000004_0000/000001_0", [40])  # aborted in the snapshot below
    put("delta_0000005_0000005_0000/HIVE_UNION_SUBDIR_1/000000_0", [50])
    ids = "db.t:5:9223372036854775807::4"
    assert plan_scan(path=str(tmp_path), write_ids=ids).kind.kind == "insert_only"
    assert rows(scan(spark, path=str(tmp_path), write_ids=ids)) == [(10,), (11,), (30,), (50,)]
    with pytest.raises(InvalidArgumentError, match="insert-only"):
        scan(spark, path=str(tmp_path), row_id=True)


def test_pruned_lookup_reads_only_the_buckets_files(spark, tmp_path):
    fn, _ = bucketed_acid_table(tmp_path)
    opts = dict(bucketed_by="k", bucket_count=4, bucketing_version=2, bucket_types=["int"])
    plan = plan_scan(path=str(tmp_path), filters=[("k", "in", [7, 9])], **opts)
    assert plan.selected_buckets == {fn.bucket_of([7]), fn.bucket_of([9])}
    planned = set(plan.files)
    assert {os.path.basename(f) for f in planned} == {f"bucket_{b:05d}" for b in plan.selected_buckets}
    for path in tmp_path.rglob("bucket_*"):  # any other file opened would fail the read
        if str(path) not in planned:
            path.write_bytes(b"not an ORC file")
    assert rows(read_plan(spark, plan)) == [(7, "v7")]  # 9 was deleted


def test_full_read_of_a_bucketed_table_matches_the_reference(spark, tmp_path):
    _, live = bucketed_acid_table(tmp_path)
    opts = dict(bucketed_by="k", bucket_count=4, bucketing_version=2, bucket_types=["int"])
    assert rows(scan(spark, path=str(tmp_path), **opts)) == [(k, f"v{k}") for k in live]
    assert rows(scan(spark, path=str(tmp_path), filters="k > 30", columns=["k"], **opts)) == \
        [(k,) for k in live if k > 30]


@needs_engine
def test_catalog_table_with_transactional_property(spark, tmp_path):
    spark.sql("DROP TABLE IF EXISTS acid_dummy")
    spark.sql("CREATE TABLE acid_dummy (id int, data string, comment string) CLUSTERED BY (id) INTO 4 BUCKETS "
              "STORED AS ORC TBLPROPERTIES ('transactional'='true', 'bucketing_version'='2')")
    try:
        location = spark.sql("DESCRIBE TABLE EXTENDED acid_dummy").where("col_name = 'Location'").first()[1]
        target = location.removeprefix("file:")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(engine("trino/dummy_id_data_orc"), target)  # a tmp copy in the test warehouse
        table = bucketkit.resolve_table(spark, "acid_dummy")
        assert table.transactional == "full"
        expected = dummy_rows()
        assert rows(scan(spark, "acid_dummy")) == expected
        from bucketkit.spark.datasource import read_table

        register_data_sources(spark)
        assert rows(read_table(spark, "acid_dummy")) == expected
        # Spark SQL's own reader skips delete_delta_/base_/delta_ directories: here it returns the deleted row
        # too (elsewhere no rows at all); with the catalog, the snapshot (tests/test_sql_acid.py)
        with catalog_off(spark):
            assert spark.sql("SELECT count(*) FROM acid_dummy").first()[0] == len(expected) + 1
        assert spark.sql("SELECT count(*) FROM acid_dummy").first()[0] == len(expected)
        assert bucketkit.sql_status(spark, "acid_dummy").bucketed  # joins by bucket re-hash its rows: test_sql_acid
    finally:
        spark.sql("DROP TABLE IF EXISTS acid_dummy")


@needs_engine
def test_unbucketed_catalog_table_is_read_unbucketed(spark, tmp_path, monkeypatch):
    # Hive 2.3's metastore (Spark's) refuses transactional=true without CLUSTERED BY, so the table is
    # created plain and the catalog's description, with the property, stands in for Hive 3's
    import bucketkit.spark.catalog as catalog
    import bucketkit.spark.scan as scan_module

    shutil.copytree(engine("trino/dummy_id_data_orc"), tmp_path / "t")
    spark.sql("DROP TABLE IF EXISTS acid_unbucketed")
    spark.sql(f"CREATE TABLE acid_unbucketed (id int, data string, comment string) STORED AS ORC "
              f"LOCATION '{tmp_path / 't'}'")
    describe = catalog.describe_catalog_table

    def as_acid(spark, name):
        d = describe(spark, name)
        return {**d, "properties": {**d["properties"], "transactional": "true"}}

    for module in (catalog, scan_module):
        monkeypatch.setattr(module, "describe_catalog_table", as_acid)
    try:
        plan = plan_scan("acid_unbucketed", spark=spark)
        assert plan.kind.name == "Hive ACID full" and plan.unbucketed == UNBUCKETED and sorted(plan.partitions[0].bucket_files) == [0, 1, 2]
        assert not plan.table.spec.bucketed and plan.table.spec.bucket_function() is None
        expected = dummy_rows()
        assert rows(scan(spark, "acid_unbucketed")) == expected
    finally:
        spark.sql("DROP TABLE IF EXISTS acid_unbucketed")


no_aborted_compactor = st.lists(st.one_of(writes, st.tuples(st.just("compact"), st.booleans(), st.just(False))),
                                min_size=1, max_size=8)


@settings(max_examples=6)
@given(history=no_aborted_compactor)
def test_scan_matches_the_reference_merge(spark, tmp_path_factory, history):
    root = tmp_path_factory.mktemp("acidscan")
    h = replay(root, history)
    if not any(root.rglob("bucket_*")):
        return  # nothing written: not a table bucketkit can open without a spec
    df = scan(spark, path=str(root), write_ids=h.write_ids(), row_id=True)
    got = sorted((tuple(r["row__id"]), r["k"], r["v"]) for r in df.collect())
    assert got == sorted((i, row["k"], row["v"]) for i, row in h.live.items())
