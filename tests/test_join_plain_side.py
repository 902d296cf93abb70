"""bucketkit.join with one plain side (a DataFrame, or a catalog table without buckets): only that side
moves, hashed into the bucketed side's buckets with that table's own bucket function — by Spark SQL's
storage-partitioned join where the catalog plans the table bucketed, else written once into the
table's layout and joined bucket by bucket. Rows and columns are compared with Spark's own join of the
same two DataFrames (issue 26)."""

from __future__ import annotations

import pytest

import bucketkit
from bucketkit.errors import InvalidArgumentError

from support.joins import sort_key

HOWS = ["inner", "left", "right", "full", "left_semi", "left_anti"]


def collected(df):
    return sorted((tuple(r) for r in df.collect()), key=sort_key)


@pytest.fixture(scope="module")
def tables(spark):
    for name in ("jp_fact_v1", "jp_fact_v2", "jp_dim"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    fact = spark.range(-400, 2600).selectExpr("id AS k", "CAST(id % 7 AS INT) AS v")
    bucketkit.write(fact, "k", 8, table="jp_fact_v1", bucketing_version=1)  # v1: negative BIGINTs hash apart
    bucketkit.write(fact, "k", 8, table="jp_fact_v2", bucketing_version=2)
    dim = spark.range(-700, 700, 3).selectExpr("id AS k", "CONCAT('n', CAST(id AS STRING)) AS name")
    dim.write.format("parquet").saveAsTable("jp_dim")
    yield dim
    for name in ("jp_fact_v1", "jp_fact_v2", "jp_dim"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.fixture(scope="module")
def directory(spark, tmp_path_factory):
    """The v1 fact as a directory table (no catalog): its plain partner is written into its buckets."""
    root = str(tmp_path_factory.mktemp("jp") / "fact")
    bucketkit.write(spark.range(-400, 2600).selectExpr("id AS k", "CAST(id % 7 AS INT) AS v"), "k", 8, path=root,
                    bucketing_version=1)
    return root


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("fact", ["jp_fact_v1", "jp_fact_v2", "directory"])
def test_a_dataframe_side_moves_into_the_tables_buckets(spark, tables, directory, fact, how):
    dim = tables
    fact = directory if fact == "directory" else fact
    fact_df = bucketkit.scan(spark, fact) if fact == directory else spark.table(fact)
    ours = bucketkit.join(spark, fact, dim, "k", how)
    theirs = fact_df.join(dim, ["k"], how)
    assert ours.columns == theirs.columns and collected(ours) == collected(theirs)
    if fact == directory:
        return
    # and the other way round, the plain side a catalog table on the left
    ours = bucketkit.join(spark, "jp_dim", fact, "k", how)
    theirs = spark.table("jp_dim").join(spark.table(fact), ["k"], how)
    assert ours.columns == theirs.columns and collected(ours) == collected(theirs)


def test_the_plan_says_which_side_moves_and_how(spark, tables, directory):
    plan = bucketkit.plan_join("jp_fact_v2", tables, "k", spark=spark)
    assert plan.strategy == "move-right" and plan.plain_side == "right"
    assert "hashed into jp_fact_v2's 8 buckets with Hive bucketing v2" in plan.reason
    assert "storage-partitioned join" in plan.reason  # a catalog table the catalog plans bucketed
    assert "a DataFrame, not bucketed; written into 8 buckets" in plan.explain()
    assert bucketkit.plan_join("jp_dim", "jp_fact_v1", "k", spark=spark).strategy == "move-left"
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:  # only the DataFrame moves: one Exchange, on its side
        df = bucketkit.join(spark, "jp_fact_v2", tables, "k")
        df.collect()
        assert df._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0].count("Exchange") == 1
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    written = bucketkit.plan_join(directory, tables, "k", spark=spark)
    assert written.strategy == "move-right" and "join() writes it once" in written.reason


def test_a_key_of_another_type_is_joined_by_spark(spark, tables):
    narrow = tables.selectExpr("CAST(k AS INT) AS k", "name")
    plan = bucketkit.plan_join("jp_fact_v1", narrow, "k", spark=spark)
    assert plan.strategy == "shuffle" and "is int where jp_fact_v1's bucket column k is bigint" in plan.reason
    ours = bucketkit.join(spark, "jp_fact_v1", narrow, "k", "full", columns=["k", "name"])
    theirs = spark.table("jp_fact_v1").join(narrow, ["k"], "full").select("k", "name")
    assert collected(ours) == collected(theirs)


def test_pairs_filters_and_columns(spark, tables):
    dim = tables.withColumnRenamed("k", "dk")
    ours = bucketkit.join(spark, "jp_fact_v2", dim, [("k", "dk")], "left", right_filters="name LIKE 'n1%'",
                          columns=[("left", "k"), ("right", "name")])
    fact = spark.table("jp_fact_v2")
    theirs = fact.join(dim.where("name LIKE 'n1%'"), fact.k == dim.dk, "left").select("k", "name")
    assert collected(ours) == collected(theirs)
    with pytest.raises(InvalidArgumentError, match=r"right_filters=.*the right side is a DataFrame; filter it"):
        bucketkit.join(spark, "jp_fact_v2", dim, [("k", "dk")], right_filters=[("dk", "=", 3)])


def test_two_plain_sides_are_a_clear_error(spark, tables):
    with pytest.raises(InvalidArgumentError, match="neither side is a bucketed table"):
        bucketkit.join(spark, tables, "jp_dim", "k")


def test_the_moved_side_is_written_where_the_setting_says(spark, tables, directory, tmp_path):
    spark.conf.set("spark.bucketkit.join.tempDir", str(tmp_path))
    try:
        bucketkit.join(spark, directory, tables, "k").count()
    finally:
        spark.conf.unset("spark.bucketkit.join.tempDir")
    (moved,) = [p for p in tmp_path.iterdir() if p.name.startswith("bucketkit-join-")]
    assert len([f for f in (moved / "t").iterdir() if f.name.endswith(".parquet")]) <= 8


def test_each_catalog_side_is_described_once(spark, tables, monkeypatch):
    import bucketkit.spark.join as join_module

    asked = []
    real = join_module.describe_catalog_table
    monkeypatch.setattr(join_module, "describe_catalog_table", lambda s, name: asked.append(name) or real(s, name))
    bucketkit.join(spark, "jp_fact_v1", "jp_fact_v2", "k").count()
    assert sorted(asked) == ["jp_fact_v1", "jp_fact_v2"]
