"""Every public function from a Spark Connect client (issue 23), against catalog tables and directories.

A Connect client has no py4j: what the Python API asks of the driver's JVM in a classic session it asks
through SQL, as bucketkit's table functions (``io.bucketkit.spark.DriverCalls``, bucketkit/spark/driver.py).
The client runs in a process of its own (a Connect session switches pyspark's API to Connect mode for its
whole process) against a Connect server over the tests' session (``connect_port``, tests/conftest.py); its
rows are compared with what the classic session returns for the same calls, and with Spark's own answers
where Spark has one (SQL with the catalog off).

In process, the Connect path of each driver call (``is_connect`` forced on, the table functions asked
through ``spark.sql``) is held equal to the classic path (py4j), table by table: one verdict per table,
whichever client asks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bucketkit
from bucketkit.errors import InvalidArgumentError, LayoutError
from bucketkit.spark import catalog as catalog_module
from bucketkit.spark import driver
from tests.support import hudi
from tests.support.hudi import needs_hudi, needs_hudi_rs
from support.servers import free_port, wait_for_port
from support import background  # the module conftest queues jobs in (not tests.support's copy)

pytestmark = pytest.mark.spark

SRC = "SELECT CAST(id - 300 AS INT) AS k, CAST(id % 13 AS STRING) AS v, CAST(id % 3 AS STRING) AS d FROM range(900)"
REPEATED = "SELECT CAST(id % 30 AS INT) AS k, id AS w FROM range(900)"  # 30 rows per key: 15 output rows per row read


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("connect")
    for name in ("cn_a", "cn_b", "cn_p", "cn_new", "cn_app", "cn_r", "cn_spark", "cn_plain", "cn_moved", "cn_rep"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql("DROP DATABASE IF EXISTS cn_db CASCADE")
    src = spark.sql(SRC)
    bucketkit.write(src.select("k", "v"), "k", 4, table="cn_a", bucketing_version=2)
    bucketkit.write(src.select("k", "d"), "k", 8, table="cn_b", bucketing_version=2)
    bucketkit.write(src, "k", 4, table="cn_p", partitioned_by=["d"], bucketing_version=1)
    bucketkit.write(src.select("k", "v"), "k", 4, table="cn_app", bucketing_version=2)
    bucketkit.write(src.select("k", "v"), "k", 4, table="cn_r", bucketing_version=2)
    bucketkit.write(src.select("k", "v"), "k", 4, path=str(base / "dir_a"), bucketing_version=2)
    bucketkit.write(spark.sql(REPEATED), "k", 4, table="cn_rep", bucketing_version=2)
    src.write.bucketBy(4, "k").format("parquet").saveAsTable("cn_spark")
    src.write.format("parquet").saveAsTable("cn_plain")
    bucketkit.write(src, "k", 4, table="cn_moved", partitioned_by=["d"], bucketing_version=2)
    elsewhere = base / "elsewhere"
    spark.sql(f"ALTER TABLE cn_moved PARTITION (d='1') SET LOCATION '{elsewhere}'")
    if HUDI_READABLE:  # hudi-rs's own tables, a copy on write and a merge on read one (base + log files)
        for name, rel in HUDI_TABLES.items():
            shutil.move(hudi.unzip(rel, str(base / "hudi_unzipped" / name)), str(base / name))
    return base


HUDI_TABLES = {"hudi_cow": "sample_table/cow/v8_nonpartitioned",
               "hudi_mor": "sample_table/mor/parquet/v6_nonpartitioned_rollback"}
HUDI_READABLE = os.path.isdir(hudi.HUDI) and hudi.HAVE_HUDI


def rows(df, columns=None):
    return sorted(tuple(r) for r in (df.select(*columns) if columns else df).collect())


CLIENT = r"""
import json, os, sys
from pyspark.sql import SparkSession
import bucketkit
from bucketkit.spark.join import _jvm_side, _joined, _probe_room

port, base = sys.argv[1:3]
s = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").create()
out = {}

def rows(df):
    return sorted([list(r) for r in df.collect()])

def error(fn):
    try:
        fn()
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return None

out["connect"] = type(s).__module__
out["scan"] = rows(bucketkit.scan(s, "cn_a"))
out["scan_filtered"] = rows(bucketkit.scan(s, "cn_p", filters="d = '1' AND k IN (-7, 7, 8)"))
out["scan_dir"] = rows(bucketkit.scan(s, base + "/dir_a", filters="k = 5"))
for name in ("hudi_cow", "hudi_mor"):
    if os.path.isdir(base + "/" + name):
        out[name] = rows(bucketkit.scan(s, base + "/" + name).select("id", "name", "isActive"))
plan = bucketkit.plan_scan("cn_a", spark=s, filters="k = 7")
out["plan_scan"] = [sorted(plan.selected_buckets), plan.files_selected]
out["join"] = rows(bucketkit.join(s, "cn_a", "cn_b", "k", columns=["k", "v", "d"]))
jp = bucketkit.plan_join("cn_a", "cn_b", "k", spark=s)
out["plan_join"] = [jp.strategy, jp.bucketed]
out["join_dir"] = rows(bucketkit.join(s, "cn_a", base + "/dir_a", "k", how="left").select("k"))
rp = bucketkit.plan_join("cn_rep", "cn_rep", "k", spark=s)
out["plan_repeated"] = [rp.strategy, rp.reason]
out["join_repeated"] = bucketkit.join(s, "cn_rep", "cn_rep", "k").selectExpr("count(*)", "sum(k)").collect()[0][:]
plain = s.sql("SELECT CAST(id * 7 - 300 AS INT) AS k, id AS w FROM range(200)")
out["join_df"] = rows(bucketkit.join(s, "cn_a", plain, "k").select("k", "v", "w"))
left = _jvm_side(s, jp.left, None, None)
right = _jvm_side(s, jp.right, None, None)
jvm = _joined(left, right, jp, ["k", "v", "d"])
out["jvm_join"] = rows(jvm)
out["room"] = list(_probe_room(s))
import io, contextlib
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    jvm.explain()
out["jvm_plan"] = buf.getvalue()

src = s.sql("SELECT CAST(id - 50 AS INT) AS k, CAST(id AS STRING) AS v FROM range(400)")
w = bucketkit.write(src, "k", 4, table="cn_new", bucketing_version=2)
out["write"] = [w.rows, w.files]
bucketkit.write(src, "k", 4, table="cn_app", mode="append")
bucketkit.write(src, "k", 4, path=base + "/dir_new", bucketing_version=1)
v = bucketkit.validate(bucketkit.resolve_table(s, "cn_new"))
out["validate"] = [v.ok, v.rows_checked]
st = bucketkit.sql_status(s, "cn_a")
out["status"] = [st.bucketed, st.detail]
out["status_spark"] = [bucketkit.sql_status(s, "cn_spark").bucketed]
out["history"] = [h.operation for h in bucketkit.history("cn_app", spark=s)]
out["vacuum"] = [v.version for v in bucketkit.vacuum("cn_app", spark=s, dry_run=True).kept]
out["rebucket"] = bucketkit.rebucket(s, "cn_r", bucket_count=8).spec.bucket_count
out["after_rebucket"] = s.sql("DESCRIBE TABLE EXTENDED cn_r").where("col_name = 'Num Buckets'").collect()[0][1]
s.sql("CREATE DATABASE IF NOT EXISTS cn_db").collect()
s.sql("USE cn_db").collect()  # the client's own session: its current database names the tables below
bucketkit.write(src, "k", 4, table="cn_in_db", bucketing_version=2)
out["in_db"] = [bucketkit.scan(s, "cn_in_db").count(), bucketkit.resolve_table(s, "cn_in_db").location,
                bucketkit.sql_status(s, "cn_in_db").bucketed]
s.sql("USE default").collect()
out["missing"] = error(lambda: bucketkit.scan(s, "cn_nope"))
out["bad_filter"] = error(lambda: bucketkit.scan(s, "cn_a", filters="k = = 7"))
out["moved"] = error(lambda: bucketkit.scan(s, "cn_moved"))
out["not_bucketed"] = error(lambda: bucketkit.scan(s, "cn_plain"))
s.sql("CREATE OR REPLACE TEMP VIEW cn_view AS SELECT k, v FROM cn_a WHERE k > 0").collect()
out["view_scan"] = rows(bucketkit.scan(s, "cn_view", filters="k IN (7, 8, -7)"))
out["view_plan"] = error(lambda: bucketkit.plan_scan("cn_view", spark=s))
out["view_write"] = error(lambda: bucketkit.write(src, "k", 4, table="cn_view", mode="append"))
out["no_database"] = error(lambda: bucketkit.write(src, "k", 4, table="cn_no_db.t"))
s.stop()
print(json.dumps(out, default=str), flush=True)
"""


@pytest.fixture(scope="module")
def client(spark, tables, connect_port):
    """What the Connect client got from each call (run once, in a process of its own)."""
    proc = subprocess.run([sys.executable, "-c", CLIENT, str(connect_port), str(tables)],
                          capture_output=True, text=True, timeout=600)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stderr[-6000:]
    return json.loads(lines[-1])


def listed(values):
    return sorted(tuple(v) for v in values)


def test_the_client_is_a_connect_session(client):
    assert client["connect"].startswith("pyspark.sql.connect")


def test_scans_return_the_classic_sessions_rows(spark, tables, client):
    assert listed(client["scan"]) == rows(bucketkit.scan(spark, "cn_a")) == rows(spark.table("cn_a"))
    golden = rows(spark.sql("SELECT * FROM cn_p WHERE d = '1' AND k IN (-7, 7, 8)"))
    assert listed(client["scan_filtered"]) == golden and golden
    assert listed(client["scan_dir"]) == rows(bucketkit.scan(spark, str(tables / "dir_a"), filters="k = 5"))


@needs_hudi
@needs_hudi_rs
@pytest.mark.parametrize("name", list(HUDI_TABLES))
def test_hudi_tables_read_as_in_the_classic_session(spark, tables, client, name):
    """A Hudi table's snapshot (hudi-rs plans it in the client's Python) reads the rows of the classic session,
    which are hudi-rs's tests' own (tests/test_hudi.py)."""
    classic = rows(bucketkit.scan(spark, str(tables / name)), ["id", "name", "isActive"])
    assert listed(client[name]) == classic and classic


def test_plans_are_the_classic_sessions(spark, tables, client):
    plan = bucketkit.plan_scan("cn_a", spark=spark, filters="k = 7")
    assert client["plan_scan"] == [sorted(plan.selected_buckets), plan.files_selected] and len(plan.selected_buckets) == 1
    classic = bucketkit.plan_join("cn_a", "cn_b", "k", spark=spark)
    assert client["plan_join"] == [classic.strategy, classic.bucketed] and classic.bucketed
    # keys that repeat: the client reads the server's grouping of buckets from its settings, the classic session
    # asks its JVM (bucketkit.spark.join._groups_buckets); one strategy
    repeated = bucketkit.plan_join("cn_rep", "cn_rep", "k", spark=spark)
    assert client["plan_repeated"][0] == repeated.strategy == "jvm", client["plan_repeated"]


def test_joins_return_sparks_rows(spark, client):
    golden = rows(spark.sql("SELECT a.k, a.v, b.d FROM cn_a a JOIN cn_b b ON a.k = b.k"))
    assert listed(client["join"]) == golden and golden
    assert listed(client["jvm_join"]) == golden
    from bucketkit.spark.join import _probe_room

    assert client["room"] == list(_probe_room(spark))  # the workers' room, asked without RDDs (no cap here)
    assert "hashpartitioning" not in client["jvm_plan"] and "bucketkit cn_a" in client["jvm_plan"], client["jvm_plan"]
    assert listed(client["join_dir"]) == rows(spark.table("cn_a").select("k"))
    golden_rep = spark.sql("SELECT count(*), sum(a.k) FROM cn_rep a JOIN cn_rep b ON a.k = b.k").collect()[0]
    assert list(client["join_repeated"]) == list(golden_rep) and golden_rep[0] == 27_000
    plain = spark.sql("SELECT CAST(id * 7 - 300 AS INT) AS k, id AS w FROM range(200)")
    golden_df = rows(spark.table("cn_a").join(plain, "k").select("k", "v", "w"))
    assert listed(client["join_df"]) == golden_df and golden_df


def test_writes_land_as_the_classic_session_writes_them(spark, tables, client):
    assert client["write"][0] == 400
    assert client["validate"] == [True, 400]
    src = rows(spark.sql("SELECT CAST(id - 50 AS INT) AS k, CAST(id AS STRING) AS v FROM range(400)"))
    assert rows(spark.table("cn_new")) == src
    assert bucketkit.validate(bucketkit.resolve_table(spark, "cn_app")).ok
    assert spark.table("cn_app").count() == 900 + 400
    check = bucketkit.validate(bucketkit.open_table(str(tables / "dir_new")))
    assert check.ok and check.rows_checked == 400
    assert client["history"] == [h.operation for h in bucketkit.history("cn_app", spark=spark)]
    assert client["vacuum"] == [v.version for v in bucketkit.vacuum("cn_app", spark=spark, dry_run=True).kept]


def test_status_and_rebucket_reach_the_server(spark, client):
    status = bucketkit.sql_status(spark, "cn_a")
    assert client["status"] == [status.bucketed, status.detail] and status.bucketed
    assert client["status_spark"] == [bucketkit.sql_status(spark, "cn_spark").bucketed]
    assert client["rebucket"] == 8 and client["after_rebucket"] == "8"
    assert bucketkit.validate(bucketkit.resolve_table(spark, "cn_r")).ok


def test_the_functions_run_in_the_clients_own_session(spark, client):
    """The table functions answer in the client's session (its current database), not the server's."""
    assert client["in_db"][0] == 400 and client["in_db"][2]
    assert "cn_db.db" in client["in_db"][1], client["in_db"]
    assert spark.catalog.currentDatabase() == "default"
    assert spark.table("cn_db.cn_in_db").count() == 400


def test_errors_are_bucketkits_not_the_servers(client):
    assert client["missing"][0] == "TableNotFoundError" and "cn_nope" in client["missing"][1]
    assert client["bad_filter"][0] == "InvalidArgumentError" and "k = = 7" in client["bad_filter"][1]
    assert client["moved"][0] == "LayoutError" and "d=1" in client["moved"][1], client["moved"]
    assert client["not_bucketed"][0] == "InvalidArgumentError" and "not bucketed" in client["not_bucketed"][1]
    assert client["view_plan"][0] == client["view_write"][0] == "ViewError", (client["view_plan"], client["view_write"])
    assert "'cn_view' is a temporary view, not a table" in client["view_plan"][1]
    assert client["no_database"][0] == "TableNotFoundError" and "database 'cn_no_db' does not exist" in \
        client["no_database"][1]


def test_a_view_is_read_as_spark_sql_reads_it(spark, client):
    """The client's own temporary view, read by bucketkit.scan as Spark SQL reads it (the classic session's rows
    of the same query: the golden values)."""
    assert client["view_scan"] == [list(r) for r in rows(spark.sql("SELECT k, v FROM cn_a WHERE k > 0 AND k IN (7, 8, -7)"))]


# -- in process: the Connect path of each driver call equals the classic path --------------------------
@pytest.fixture
def as_connect(monkeypatch):
    """``is_connect`` forced on: each driver call goes through bucketkit's table functions (spark.sql)."""
    for module in (driver, catalog_module):
        monkeypatch.setattr(module, "is_connect", lambda spark: True)


def outcome(fn):
    try:
        return ("ok", fn())
    except Exception as exc:  # the error a caller sees, compared as type and message
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("name", ["cn_a", "cn_p", "cn_spark", "cn_plain", "cn_moved", "default.cn_b"])
def test_a_tables_description_is_the_same_through_sql(spark, tables, monkeypatch, name):
    classic = outcome(lambda: catalog_module.describe_with_py4j(spark, name))
    for module in (driver, catalog_module):
        monkeypatch.setattr(module, "is_connect", lambda spark: True)
    through_sql = outcome(lambda: catalog_module.describe_catalog_table(spark, name))
    assert through_sql == classic
    assert (classic[0] == "LayoutError") == (name == "cn_moved"), classic


@pytest.mark.parametrize("name", ["cn_a", "cn_not_there", "default.cn_not_there"])
def test_a_tables_location_is_the_same_through_sql(spark, tables, monkeypatch, name):
    classic = catalog_module.table_location(spark, name)
    monkeypatch.setattr(catalog_module, "is_connect", lambda spark: True)
    assert catalog_module.table_location(spark, name) == classic


@pytest.mark.parametrize("predicate", ["k = 7", "k IN (1, 2) AND v > 'a'", "NOT (k <=> 3) OR v IS NULL", "k = = 7"])
def test_a_predicate_parses_the_same_through_sql(spark, monkeypatch, predicate):
    from bucketkit.spark import filters

    classic = outcome(lambda: filters.from_catalyst(spark, predicate))
    monkeypatch.setattr(driver, "is_connect", lambda spark: True)
    through_sql = outcome(lambda: filters.from_catalyst(spark, predicate))
    assert through_sql[0] == classic[0]
    if classic[0] == "ok":
        assert through_sql == classic
    else:
        assert "k = = 7" in through_sql[1]


def test_a_server_without_bucketkits_extensions_is_named(spark):
    with pytest.raises(InvalidArgumentError, match="bucketkit's extensions.*spark-conf"):
        driver.call(spark, "bucketkit_no_such_function", "x")


def test_the_sessions_parallelism_and_master_are_the_same_through_sql(spark):
    row = driver.call(spark, "bucketkit_session")
    assert (int(row[0]), row[1]) == (spark.sparkContext.defaultParallelism, spark.sparkContext.master)


def test_a_misplaced_partition_is_refused_either_way(spark, tables, as_connect):
    with pytest.raises(LayoutError, match="partition d=1 is kept"):
        catalog_module.describe_catalog_table(spark, "cn_moved")


SERVER_CLIENT = r"""
import json, sys
from pyspark.sql import SparkSession
import bucketkit

port, base = sys.argv[1:3]
s = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").create()
src = s.sql("SELECT CAST(id - 40 AS INT) AS k, CAST(id AS STRING) AS v FROM range(300)")
bucketkit.write(src, "k", 4, table="srv_a", bucketing_version=2)
bucketkit.write(src, "k", 8, table="srv_b", bucketing_version=2)
s.sql("SET spark.sql.autoBroadcastJoinThreshold=-1").collect()
query = "SELECT count(*) FROM srv_a a JOIN srv_b b ON a.k = b.k"
out = {"count": s.sql(query).first()[0], "plan": s.sql("EXPLAIN " + query).first()[0],
       "scan": bucketkit.scan(s, "srv_a", filters="k = 7").collect()[0]["v"],
       "join": bucketkit.join(s, "srv_a", "srv_b", "k").count(),
       "location": bucketkit.resolve_table(s, "srv_a").location}
s.stop()
print(json.dumps(out), flush=True)
"""


def queue_background(names: set[str], tmp_path_factory) -> None:
    """The Connect server of the printed settings and its client: processes of their own, beside the suite
    (tests/support/background.py)."""
    if "test_a_connect_server_started_with_the_printed_settings_serves_every_call" in names:
        background.start("connect_server", _serve, tmp_path_factory.mktemp("connect_server"))


def _serve(tmp_path) -> dict:
    """Start the server with the printed flags, run the client, stop the server: the client's answers."""
    import os

    import pyspark

    from tests.test_spark_sql_shell import spark_conf_flags

    port = free_port()
    home = os.path.dirname(pyspark.__file__)
    args = [os.path.join(home, "sbin", "start-connect-server.sh"), "--wait", "--master", "local[2]",
            *spark_conf_flags()]
    for k, v in {"spark.connect.grpc.binding.port": str(port), "spark.ui.enabled": "false",
                 "spark.sql.catalogImplementation": "hive", "spark.sql.warehouse.dir": str(tmp_path / "wh"),
                 "spark.sql.shuffle.partitions": "2"}.items():
        args += ["--conf", f"{k}={v}"]
    # Connect runs Python UDFs with PYSPARK_PYTHON (not spark.pyspark.python): a Python with bucketkit
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_HOME": home, "SPARK_LOG_DIR": str(tmp_path / "logs"),
           "SPARK_PID_DIR": str(tmp_path), "SPARK_IDENT_STRING": "bucketkit-test"}
    log = tmp_path / "server.log"  # a file, not a pipe: a full pipe would stop the server
    # its own process group: spark-daemon.sh runs the server's JVM as a child, which must stop with it
    server = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        wait_for_port(port, server, log, 180, poll=1)
        client = subprocess.run([sys.executable, "-c", SERVER_CLIENT, str(port), str(tmp_path)],
                                capture_output=True, text=True, timeout=600)
        lines = client.stdout.strip().splitlines()
        assert client.returncode == 0 and lines, client.stderr[-6000:]
        out = {**json.loads(lines[-1]), "base": str(tmp_path)}
    finally:
        import signal

        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    return out


def test_a_connect_server_started_with_the_printed_settings_serves_every_call(tmp_path_factory):
    """pyspark's own ``sbin/start-connect-server.sh --wait`` with the flags ``bucketkit spark-conf`` prints
    (docs/sql.md, Spark Connect): a client writes catalog tables, reads and joins them from Python, and SQL
    joins them without an Exchange. (Server and client run beside the suite, queued when it starts.)"""
    tmp_path = tmp_path_factory.mktemp("connect_server")
    out = background.result("connect_server", _serve, tmp_path)
    tmp_path = Path(out["base"])
    assert out["count"] == 300 and out["join"] == 300 and out["scan"] == "47"
    assert "hashpartitioning" not in out["plan"] and "default.srv_a (Hive bucketing v2" in out["plan"], out["plan"]
    assert out["location"].startswith(str(tmp_path / "wh"))
    for name, rows in (("srv_a", 300), ("srv_b", 300)):
        check = bucketkit.validate(bucketkit.open_table(str(tmp_path / "wh" / name)))
        assert check.ok and check.rows_checked == rows


def test_a_connect_write_hashes_in_the_jvm_as_the_classic_session_does(spark):
    """``bucketkit_hive_bucket`` (the SQL function a Connect client's write hashes with) gives the ids of
    Hive's own ObjectInspectorUtils (tests/test_hashcol_jvm.py holds the py4j column to them) for every type
    the JVM column takes, several keys included."""
    from bucketkit.spark.hashcol import bucket_id_column

    df = spark.sql("SELECT CAST(id - 40 AS INT) AS i, CAST(id * 7919 - 1000 AS BIGINT) AS b, "
                   "CONCAT('k', CAST(id AS STRING), CASE WHEN id % 5 = 0 THEN 'é' ELSE '' END) AS s, "
                   "CAST(id / 7.0 AS DOUBLE) AS d, DATE_ADD(DATE'2020-01-01', CAST(id AS INT)) AS dt FROM range(300)")
    for version in (1, 2):
        for columns, types in ((["i"], ["int"]), (["b"], ["bigint"]), (["s"], ["string"]), (["s"], ["varchar(3)"]),
                               (["d"], ["double"]), (["dt"], ["date"]), (["i", "s"], ["int", "string"])):
            keys = ", ".join(columns)
            quoted = ", ".join(f"'{t}'" for t in types)
            through_sql = df.selectExpr(f"bucketkit_hive_bucket({version}, 13, array({quoted}), {keys}) AS id")
            classic = df.select(bucket_id_column(columns, types, version, 13, spark=spark).alias("id"))
            assert [r.id for r in through_sql.collect()] == [r.id for r in classic.collect()], (version, columns, types)
