"""The Hadoop configuration's broadcast shared by queries that read with an equal one (ConfBroadcasts).

Spark's file scans broadcast the configuration once per query; the catalog's ORC scans reuse the
broadcast of an equal configuration. A changed setting must reach the readers: a new broadcast.
"""

import pytest

pytestmark = pytest.mark.spark


def _conf(spark, **settings):
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    for k, v in settings.items():
        conf.set(k, v)
    return conf


def test_an_equal_configuration_shares_one_broadcast_and_a_changed_one_gets_its_own(spark):
    cb = spark._jvm.io.bucketkit.compat.ConfBroadcasts
    sc = spark._jsparkSession.sparkContext()
    first = cb.of(sc, _conf(spark, **{"bucketkit.test.setting": "a"}), "t")
    again = cb.of(sc, _conf(spark, **{"bucketkit.test.setting": "a"}), "t")
    changed = cb.of(sc, _conf(spark, **{"bucketkit.test.setting": "b"}), "t")
    assert first.id() == again.id()
    assert changed.id() != first.id()
    assert changed.value().value().get("bucketkit.test.setting") == "b"
    assert first.value().value().get("bucketkit.test.setting") == "a"


def test_a_broadcast_is_shared_only_within_its_scope(spark):
    """Spark's ORC reader writes the schema it reads into the broadcast configuration it is handed, and in
    local mode every task shares that object: two scans of different columns sharing one broadcast read with
    each other's schema now and then (a column read as NULL, "Index 2 out of bounds for length 2", both seen
    in this suite). A broadcast is shared only within one scope (the catalog's ORC scans: one table, the same
    columns read)."""
    cb = spark._jvm.io.bucketkit.compat.ConfBroadcasts
    sc = spark._jsparkSession.sparkContext()
    conf = _conf(spark)
    a, b, again = cb.of(sc, conf, "orc t k,j,v"), cb.of(sc, conf, "orc t k,j"), cb.of(sc, conf, "orc t k,j,v")
    assert a.id() == again.id() and a.id() != b.id()
    assert not a.value().value().equals(b.value().value())  # two Configuration objects (Object.equals)


def test_a_configuration_changed_after_its_broadcast_does_not_change_the_broadcast(spark):
    cb = spark._jvm.io.bucketkit.compat.ConfBroadcasts
    sc = spark._jsparkSession.sparkContext()
    conf = _conf(spark, **{"bucketkit.test.later": "before"})
    b = cb.of(sc, conf, "t")
    conf.set("bucketkit.test.later", "after")
    assert b.value().value().get("bucketkit.test.later") == "before"
    assert cb.of(sc, conf, "t").value().value().get("bucketkit.test.later") == "after"


def test_a_session_setting_changed_between_queries_reaches_the_orc_reader(spark, tmp_path):
    """orc.force.positional.evolution (a Hadoop setting, copied from the session's settings) maps an ORC
    file's columns by position: a table whose columns are named otherwise than its files' reads NULLs by
    name and values by position. The catalog's scan must follow the setting from query to query."""
    import bucketkit

    path = str(tmp_path / "t")
    bucketkit.write(spark.range(40).selectExpr("id AS k", "id * 10 AS x"), "k", 4, path=path)
    spark.sql("DROP TABLE IF EXISTS cbc_renamed")
    spark.sql(f"CREATE EXTERNAL TABLE cbc_renamed (k BIGINT, y BIGINT) CLUSTERED BY (k) INTO 4 BUCKETS "
              f"STORED AS ORC LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='2')")
    try:
        def total():
            return spark.sql("SELECT sum(y) FROM cbc_renamed").first()[0]

        def spark_total():
            spark.conf.set("spark.bucketkit.catalog.enabled", "false")
            try:
                return total()
            finally:
                spark.conf.unset("spark.bucketkit.catalog.enabled")

        by_name = total()
        assert by_name == spark_total()
        spark.conf.set("orc.force.positional.evolution", "true")
        try:
            by_position = total()
            assert by_position == spark_total()
        finally:
            spark.conf.unset("orc.force.positional.evolution")
        assert by_position == sum(i * 10 for i in range(40)) and by_name is None
        assert total() is None
    finally:
        spark.sql("DROP TABLE IF EXISTS cbc_renamed")


def test_a_configuration_missing_a_setting_is_not_equal_to_one_having_it(spark):
    cb = spark._jvm.io.bucketkit.compat.ConfBroadcasts
    sc = spark._jsparkSession.sparkContext()
    having = _conf(spark, **{"bucketkit.test.present": "x"})
    missing = _conf(spark)
    missing.unset("bucketkit.test.present")
    assert cb.of(sc, having, "t").id() != cb.of(sc, missing, "t").id()
    assert cb.of(sc, missing, "t").value().value().get("bucketkit.test.present") is None
    assert cb.of(sc, having, "t").id() == cb.of(sc, _conf(spark, **{"bucketkit.test.present": "x"}), "t").id()
