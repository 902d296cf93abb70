"""Scan plans of Hive ACID tables (no Spark): snapshots per partition, files per bucket, write ids.

Tables are the real Hive 3 / Trino ACID files in ../shared (see tests/test_acidread.py for where
their expected contents come from); which directories a snapshot holds follows from the directory
names and Hive's rules, checked against Hive's own AcidUtils in tests/test_acid_state.py.
"""

from __future__ import annotations

import os
import shutil

import pytest

from bucketkit.acid.plan import FULL, INSERT_ONLY, UNBUCKETED, AcidKind, transactional_kind
from bucketkit.errors import InvalidArgumentError
from bucketkit.layout.metadata import TableSpec
from bucketkit.pruning.plan import plan_scan
from bucketkit.table import open_table
from support.engine import engine, needs_engine


@needs_engine
def test_unbucketed_acid_directory_opens_without_a_spec():
    table = open_table(engine("trino/dummy_id_data_orc"))
    assert table.unbucketed_reason == UNBUCKETED
    assert table.spec.columns == (("id", "int"), ("data", "string"), ("comment", "string"))
    # not bucketed: no bucket columns, no count, nothing that could hash a row (no stand-in spec)
    assert not table.spec.bucketed and table.spec.bucketed_by == () and table.spec.bucket_count == 0
    assert table.spec.bucket_function() is None
    assert TableSpec.from_json(table.spec.to_json()) == table.spec
    plan = plan_scan(table)
    assert isinstance(plan.kind, AcidKind) and plan.kind.kind == FULL and plan.unbucketed == UNBUCKETED
    (part,) = plan.partitions
    assert sorted(part.bucket_files) == [0, 1, 2]  # writer ids found, nothing pruned
    assert part.snapshot.delete_deltas == ("delete_delta_10000001_10000001_0000",)
    text = plan.explain()
    assert "unbucketed" in text and "bucket 2: 3 original, 0 base, 0 delta, 0 delete_delta file(s)" in text


@needs_engine
def test_pruned_lookup_plans_only_the_buckets_files():
    table = open_table(engine("trino/dummy_id_data_orc"), bucketed_by="id", bucket_count=4, bucketing_version=2,
                       bucket_types=["int"])
    plan = plan_scan(table, [("id", "=", 3)])
    (bucket,) = plan.selected_buckets
    (part,) = plan.partitions
    assert list(part.bucket_files) == [bucket]
    names = {os.path.relpath(f, part.path) for f in plan.files}
    everything = {"000000_0", "000001_0", "000002_0", "000002_0_copy_1", "000002_0_copy_2",
                  "delete_delta_10000001_10000001_0000/bucket_00000"}
    assert names < everything
    assert all(f.split("/")[-1].startswith((f"{bucket:06d}_0", f"bucket_{bucket:05d}")) for f in names)


@needs_engine
def test_write_ids_leave_open_and_aborted_writes_out_of_the_plan():
    root = engine("hive/test_hcube_2.db/tbl1")
    everything = plan_scan(root)
    assert everything.kind.write_ids is None and len(everything.files) == 3
    plan = plan_scan(root, write_ids="test_hcube_2.tbl1:3:2:2:")  # write 2 still open
    assert str(plan.kind.write_ids) == "test_hcube_2.tbl1:3:2:2:"
    assert [f.split("/")[-2] for f in plan.files] == ["delta_0000001_0000001_0000", "delta_0000003_0000003_0000"]
    aborted = plan_scan(root, write_ids="test_hcube_2.tbl1:3:9223372036854775807::3")
    assert aborted.partitions[0].snapshot.aborted == ("delta_0000003_0000003_0000",)
    assert "aborted (not read): delta_0000003_0000003_0000" in aborted.explain()


def test_write_ids_on_a_plain_table_are_refused(tmp_path):
    from support.scan import write_arrow_table
    from bucketkit.layout.metadata import TableSpec

    spec = TableSpec.create("k", 2, columns={"k": "bigint"})
    write_arrow_table(str(tmp_path / "t"), spec, [{"k": 1}])
    with pytest.raises(InvalidArgumentError, match="write_ids=.*not a Hive ACID table"):
        plan_scan(str(tmp_path / "t"), write_ids="db.t:1:9223372036854775807::")


@needs_engine
def test_partitioned_acid_table_and_obsolete_directories(tmp_path):
    src = engine("composed/nation_acid_with_delete_deltas")
    for p in ("p=1", "p=2"):
        shutil.copytree(src, tmp_path / "t" / p)
    os.rename(tmp_path / "t/p=2/delta_0000002_0000002_0000", tmp_path / "t/p=2/base_0000002")  # INSERT OVERWRITE
    shutil.copytree(src + "/delta_0000002_0000002_0000", tmp_path / "t/p=2/delta_0000001_0000001_0000")
    plan = plan_scan(str(tmp_path / "t"), partition_types=["int"])
    assert plan.table.spec.partitioned_by == ("p",) and plan.table.spec.partition_types == ("int",)
    one, two = plan.partitions
    assert one.snapshot.base is None and two.snapshot.base == "base_0000002"
    assert two.snapshot.obsolete == ("delta_0000001_0000001_0000",)
    assert "obsolete (not read): delta_0000001_0000001_0000" in plan.explain()
    assert not any("delta_0000001_0000001_0000" in f for f in plan.files)
    assert plan_scan(str(tmp_path / "t"), [("p", "=", 2)], partition_types=["int"]).partitions_selected == 1


def test_transactional_kind_from_table_properties():
    assert transactional_kind({"transactional": "true"}) == FULL
    assert transactional_kind({"transactional": "TRUE", "transactional_properties": "default"}) == FULL
    assert transactional_kind({"transactional": "true", "transactional_properties": "insert_only"}) == INSERT_ONLY
    assert transactional_kind({"transactional": "false"}) is None and transactional_kind({}) is None
