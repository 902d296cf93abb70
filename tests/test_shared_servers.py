"""A shared server's SQL users (issue 28): through the Thrift server as BI tools and beeline reach it, and
through Spark Connect as its clients do (a client process of its own).

Spark's own Thrift server (``HiveThriftServer2``, in pyspark's jars) is started in the tests'
session and driven through Hive's own JDBC driver (``hive-jdbc``, also in pyspark's jars), so each
statement runs in a Thrift session of its own user, as on a real server:

- ``SET spark.bucketkit.python=<program>`` is refused, and the program never runs on an INSERT;
- ``SET spark.bucketkit.catalog.enabled=false`` then ``INSERT`` into a ``bucketing_version=2`` table
  is refused (Spark's own writer would place its rows by the v1 hash), and the table is unchanged;
- an INSERT with the catalog on is bucketkit's: ``validate`` finds every row in its bucket;
- dbt-spark's CTAS of a Hive-format bucketed model (``USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY``)
  and its re-run as ``CREATE OR REPLACE TABLE ... AS SELECT`` build the table, every row in its bucket,
  the replaced rows gone (through Connect too).

The same through a Spark Connect client (``pyspark[connect]``, in a process of its own: a Connect session
switches pyspark's API to Connect mode for its whole process) of a Connect server started over the tests'
session: each client gets a session of its own, with bucketkit's catalog and rules.
"""

from __future__ import annotations

import time

import pytest

import bucketkit
from bucketkit.spark.catalog import load_table

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def jdbc(spark):
    """A JDBC connection factory to a Thrift server over the tests' session (stopped after the module)."""
    jvm = spark.sparkContext._jvm
    spark.conf.set("hive.server2.thrift.port", "0")  # any free port
    spark.conf.set("hive.server2.thrift.bind.host", "127.0.0.1")
    spark.conf.set("hive.server2.transport.mode", "binary")
    server = jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext(
        spark._jsparkSession.sqlContext())
    jvm.java.lang.Class.forName("org.apache.hive.jdbc.HiveDriver")
    services = [s for s in server.getServices() if s.getClass().getName().endswith("ThriftBinaryCLIService")]
    assert services, [s.getClass().getName() for s in server.getServices()]
    deadline = time.time() + 60
    while True:
        port = services[0].getPortNumber()  # the port it bound (0 asked for a free one)
        try:
            jvm.java.sql.DriverManager.getConnection(f"jdbc:hive2://127.0.0.1:{port}/default", "probe", "").close()
            break
        except Exception:
            if time.time() > deadline:
                raise AssertionError(f"the Thrift server did not answer on port {port}: state "
                                     f"{server.getServiceState()}, {services[0].getServiceState()}") from None
            time.sleep(0.5)
    url = f"jdbc:hive2://127.0.0.1:{port}/default"

    def connect(user: str):
        return jvm.java.sql.DriverManager.getConnection(url, user, "")

    yield connect
    server.stop()
    for key in ("hive.server2.thrift.port", "hive.server2.thrift.bind.host", "hive.server2.transport.mode"):
        spark.conf.unset(key)


def _execute(conn, sql: str) -> None:
    stmt = conn.createStatement()
    try:
        stmt.execute(sql)
    finally:
        stmt.close()


def _error(conn, sql: str) -> str:
    from py4j.protocol import Py4JJavaError

    with pytest.raises(Py4JJavaError) as info:
        _execute(conn, sql)
    return info.value.java_exception.getMessage()


def _count(conn, sql: str) -> int:
    stmt = conn.createStatement()
    try:
        rs = stmt.executeQuery(sql)
        rs.next()
        return rs.getLong(1)
    finally:
        stmt.close()


def test_a_thrift_user_cannot_choose_the_commit_program(spark, jdbc, tmp_path):
    marker, ran = tmp_path / "marker.sh", tmp_path / "ran"
    marker.write_text(f"#!/bin/sh\ntouch {ran}\n")
    marker.chmod(0o755)
    conn = jdbc("mallory")
    try:
        assert "spark.bucketkit.python" in _error(conn, f"SET spark.bucketkit.python={marker}")
        _execute(conn, f"CREATE TABLE thrift_v2 (k int, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
                       f"LOCATION '{tmp_path / 'thrift_v2'}' TBLPROPERTIES ('bucketing_version'='2')")
        _execute(conn, "INSERT INTO thrift_v2 SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(300)")
        assert not ran.exists()
        assert _count(conn, "SELECT count(*) FROM thrift_v2") == 300
        result = bucketkit.validate(load_table(spark, "thrift_v2"))
        assert result.ok and result.rows_checked == 300
    finally:
        _execute(conn, "DROP TABLE IF EXISTS thrift_v2")
        conn.close()


def test_a_thrift_user_switching_the_catalog_off_cannot_misplace_rows(spark, jdbc, tmp_path):
    conn = jdbc("mallory")
    try:
        _execute(conn, f"CREATE TABLE thrift_off (k int, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
                       f"LOCATION '{tmp_path / 'thrift_off'}' TBLPROPERTIES ('bucketing_version'='2')")
        _execute(conn, "INSERT INTO thrift_off SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(100)")
        before = sorted(p.name for p in (tmp_path / "thrift_off").iterdir())
        _execute(conn, "SET spark.bucketkit.catalog.enabled=false")
        message = _error(conn, "INSERT INTO thrift_off SELECT CAST(id AS INT), 'x' FROM range(100)")
        assert "bucketing_version" in message or "v2" in message, message
        assert sorted(p.name for p in (tmp_path / "thrift_off").iterdir()) == before
        assert bucketkit.validate(load_table(spark, "thrift_off")).ok
        # the switch was this Thrift session's alone: the tests' own session still has the catalog on
        assert spark.conf.get("spark.bucketkit.catalog.enabled", "true") == "true"
    finally:
        _execute(conn, "DROP TABLE IF EXISTS thrift_off")
        conn.close()


def _text(conn, sql: str) -> str:
    stmt = conn.createStatement()
    try:
        rs = stmt.executeQuery(sql)
        out = []
        while rs.next():
            out.append(rs.getString(1))
        return "\n".join(out)
    finally:
        stmt.close()


def test_a_thrift_client_joins_bucketed_tables_without_an_exchange(spark, jdbc, tmp_path):
    """A BI tool's path (JDBC to the Thrift server): DDL, INSERTs through the catalog, then a join and
    GROUP BY on the bucket key with no Exchange below the final aggregate; counts equal Spark's own."""
    conn = jdbc("analyst")
    try:
        for name, n in (("thrift_a", 400), ("thrift_b", 250)):
            _execute(conn, f"CREATE TABLE {name} (k int, v string) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
                           f"LOCATION '{tmp_path / name}' TBLPROPERTIES ('bucketing_version'='2')")
            _execute(conn, f"INSERT INTO {name} SELECT CAST(id % 200 AS INT), CAST(id AS STRING) FROM range({n})")
        _execute(conn, "SET spark.sql.autoBroadcastJoinThreshold=-1")
        join = "SELECT count(*) FROM thrift_a a JOIN thrift_b b ON a.k = b.k"
        plan = _text(conn, f"EXPLAIN {join}")
        assert "Join" in plan and "hashpartitioning" not in plan and "Exchange keyed" not in plan, plan
        expected = spark.sql("SELECT count(*) FROM (SELECT id % 200 AS k FROM range(400)) a "
                             "JOIN (SELECT id % 200 AS k FROM range(250)) b ON a.k = b.k").first()[0]
        assert _count(conn, join) == expected > 0
        group = "SELECT count(*) FROM (SELECT k, count(*) FROM thrift_a GROUP BY k)"
        assert "hashpartitioning" not in _text(conn, f"EXPLAIN {group}")
        assert _count(conn, group) == 200
    finally:
        for name in ("thrift_a", "thrift_b"):
            _execute(conn, f"DROP TABLE IF EXISTS {name}")
        conn.close()


#: dbt-spark's statement for a Hive-format bucketed model (issue 47), then its re-run as REPLACE: both through a
#: shared server's own session. {name}, {n}, {verb}: the table, the rows, CREATE or CREATE OR REPLACE.
CTAS = ("{verb} TABLE {name} USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY (k) INTO 4 BUCKETS "
        "TBLPROPERTIES ('bucketing_version'='2') AS SELECT CAST(id AS INT) AS k, CAST(id AS STRING) AS v FROM range({n})")


def _check_ctas_then_rtas(spark, run, count, name: str) -> None:
    """CTAS then RTAS of ``name`` through ``run``: each time the rows counted through the server, every row in
    its Hive bucket (validate), the replaced table's rows gone."""
    run(CTAS.format(verb="CREATE", name=name, n=300))
    assert count(f"SELECT count(*) FROM {name}") == 300
    first = bucketkit.validate(load_table(spark, name))
    assert first.ok and first.rows_checked == 300
    run(CTAS.format(verb="CREATE OR REPLACE", name=name, n=120))
    assert count(f"SELECT count(*) FROM {name}") == 120
    assert count(f"SELECT count(*) FROM {name} WHERE k >= 120") == 0
    second = bucketkit.validate(load_table(spark, name))
    assert second.ok and second.rows_checked == 120


def test_a_thrift_client_builds_a_bucketed_table_as_dbt_does(spark, jdbc):
    conn = jdbc("dbt")
    try:
        _check_ctas_then_rtas(spark, lambda sql: _execute(conn, sql), lambda sql: _count(conn, sql), "thrift_ctas")
    finally:
        _execute(conn, "DROP TABLE IF EXISTS thrift_ctas")
        conn.close()


CONNECT_CLIENT = """
import json, sys
from pyspark.sql import SparkSession

port, marker, location = sys.argv[1:4]
remote = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").create()
out = {}

def error(fn):
    try:
        fn()
    except Exception as exc:  # the server's refusal, as a client sees it
        return str(exc)
    return None

out["set"] = error(lambda: remote.sql(f"SET spark.bucketkit.python={marker}").collect())
out["conf_set"] = error(lambda: remote.conf.set("spark.bucketkit.python", marker))
remote.sql(f"CREATE TABLE connect_v2 (k int, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
           f"LOCATION '{location}' TBLPROPERTIES ('bucketing_version'='2')")
remote.sql("INSERT INTO connect_v2 SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(300)").collect()
out["count"] = remote.sql("SELECT count(*) FROM connect_v2").first()[0]
print(json.dumps({"inserted": True}), flush=True)
sys.stdin.readline()  # the test lists the table's files, then lets the client go on
remote.sql("SET spark.bucketkit.catalog.enabled=false").collect()
out["off_insert"] = error(lambda: remote.sql("INSERT INTO connect_v2 SELECT CAST(id AS INT), 'x' FROM range(100)").collect())
remote.sql("SET spark.bucketkit.catalog.enabled=true").collect()
out["lookup"] = remote.sql("SELECT v FROM connect_v2 WHERE k = 7").first()[0]
out["plan"] = remote.sql("EXPLAIN SELECT * FROM connect_v2 WHERE k = 7").first()[0]
print(json.dumps({"checked": True}), flush=True)
for line in sys.stdin:  # statements the test sends (CTAS, RTAS, counts): one answer each
    sql = line.strip()
    try:
        rows = remote.sql(sql).collect()
        print(json.dumps({"rows": [list(r) for r in rows]}), flush=True)
    except Exception as exc:
        print(json.dumps({"error": str(exc)}), flush=True)
remote.stop()
print(json.dumps(out), flush=True)
"""


def test_a_connect_client_cannot_choose_the_commit_program_nor_misplace_rows(spark, connect_port, tmp_path):
    import json
    import subprocess
    import sys

    marker, ran, location = tmp_path / "marker.sh", tmp_path / "ran", tmp_path / "connect_v2"
    marker.write_text(f"#!/bin/sh\ntouch {ran}\n")
    marker.chmod(0o755)
    spark.sql("DROP TABLE IF EXISTS connect_v2")
    client = subprocess.Popen([sys.executable, "-c", CONNECT_CLIENT, str(connect_port), str(marker), str(location)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = client.stdout.readline()
        assert json.loads(first or "{}").get("inserted"), client.stderr.read()[-4000:]
        before = sorted(p.name for p in location.iterdir())
        client.stdin.write("\n")
        client.stdin.flush()
        assert json.loads(client.stdout.readline() or "{}").get("checked"), client.stderr.read()[-4000:]

        def run(sql: str) -> list:
            client.stdin.write(sql + "\n")
            client.stdin.flush()
            answer = json.loads(client.stdout.readline() or '{"error": "no answer"}')
            assert "error" not in answer, (sql, answer)
            return answer["rows"]

        spark.sql("DROP TABLE IF EXISTS connect_ctas")
        _check_ctas_then_rtas(spark, run, lambda sql: run(sql)[0][0], "connect_ctas")
        out, err = client.communicate(timeout=300)  # closes its input: the client's loop ends
        result = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        assert result, err[-4000:]
        assert "CANNOT_MODIFY_STATIC_CONFIG" in result["set"] and "spark.bucketkit.python" in result["set"]
        assert "spark.bucketkit.python" in result["conf_set"]
        assert not ran.exists() and result["count"] == 300
        check = bucketkit.validate(load_table(spark, "connect_v2"))
        assert check.ok and check.rows_checked == 300
        assert "bucketing_version=2" in result["off_insert"], result["off_insert"]
        assert sorted(p.name for p in location.iterdir()) == before  # nothing written by the refused INSERT
        assert spark.conf.get("spark.bucketkit.catalog.enabled", "true") == "true"  # that client's session only
        assert result["lookup"] == "7"
        assert "bucketkit" in result["plan"] and "buckets=1 of 4" in result["plan"], result["plan"]
    finally:
        if client.poll() is None:
            client.kill()
        spark.sql("DROP TABLE IF EXISTS connect_v2")
        spark.sql("DROP TABLE IF EXISTS connect_ctas")
