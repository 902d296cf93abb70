"""A real dbt project builds Hive bucketed tables through bucketkit's catalog (docs/sql.md, "CREATE TABLE ... AS
SELECT, and dbt").

dbt-core and dbt-spark (pinned below) live in a virtualenv of their own, made once and cached under
``~/.cache/bucketkit/dbt-<versions>/`` (dbt-core 1.11 would downgrade this .venv's protobuf 7 to 6). It has no
pyspark: pyspark, pyarrow and bucketkit come from this .venv's site-packages, added by a ``zz_bucketkit.pth`` after
the virtualenv's own packages. ``dbt run`` runs twice, each in a process of its own (``method: session``: Spark in
dbt's process), with the profile's ``server_side_parameters`` from ``bucketkit spark-conf --json`` plus a master,
a warehouse and a Derby metastore of the test's own; the second run rebuilds the tables and takes the incremental
model's ``insert_overwrite`` path. A third process (its Spark started during the second run, its golden rows
computed then) opens the same metastore once dbt has exited and checks every model: its rows, read by Spark alone
(catalog off) and through bucketkit's catalog, against what Spark alone computes from the source rows; every
row's bucket with ``bucketkit.validate``; and that a join of two bucketed models on their key plans no Exchange.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from support import background
from support.sparkown import SWITCH

pytestmark = pytest.mark.spark

DBT_CORE = "1.11.16"
DBT_SPARK = "1.11.0"
SCHEMA = "dbt_bk"

# The source rows (model `src`): NULL keys, 500 distinct keys, three partitions.
SOURCE = ("SELECT IF(id % 13 = 0, NULL, CAST((id * 7919) % 500 AS INT)) AS k, CONCAT('v', CAST(id AS STRING)) AS v, "
          "CAST(id % 97 AS BIGINT) AS amount, CAST(id % 3 AS STRING) AS dt FROM range(2000)")

PROJECT = {
    "dbt_project.yml": textwrap.dedent("""\
        name: bucketkit_dbt
        version: "1.0"
        config-version: 2
        profile: bucketkit_dbt
        flags: {send_anonymous_usage_stats: false, use_colors: false}
        models:
          bucketkit_dbt:
            +materialized: table
            src: {+file_format: parquet}
            orders_v1:
              +file_format: hive
              +options: {fileFormat: orc}
              +clustered_by: [k]
              +buckets: 8
            orders_v2: &v2
              +file_format: hive
              +options: {fileFormat: orc}
              +clustered_by: [k]
              +buckets: 8
              +tblproperties: {bucketing_version: "2"}
            customers: *v2
            joined: *v2
            orders_kv:
              +file_format: hive
              +options: {fileFormat: orc}
              +clustered_by: [k, v]
              +buckets: 8
              +tblproperties: {bucketing_version: "2"}
            orders_by_dt:
              +file_format: hive
              +options: {fileFormat: orc}
              +partition_by: [dt]
              +clustered_by: [k]
              +buckets: 4
            orders_inc:
              +materialized: incremental
              +incremental_strategy: insert_overwrite
              +file_format: hive
              +options: {fileFormat: orc}
              +partition_by: [dt]
              +clustered_by: [k]
              +buckets: 4
              +tblproperties: {bucketing_version: "2"}
        """),
    "models/src.sql": SOURCE + "\n",
    "models/orders_v1.sql": "select k, v, amount from {{ ref('src') }}\n",
    "models/orders_v2.sql": "select k, v, amount from {{ ref('src') }}\n",
    "models/orders_kv.sql": "select k, v, amount from {{ ref('src') }}\n",
    "models/customers.sql": ("select k, count(*) as orders, sum(amount) as total from {{ ref('src') }}\n"
                             "where k is not null group by k\n"),
    "models/joined.sql": ("select o.k, o.v, c.total from {{ ref('orders_v2') }} o\n"
                          "join {{ ref('customers') }} c on o.k = c.k\n"),
    "models/orders_by_dt.sql": "select k, v, amount, dt from {{ ref('src') }}\n",
    # the first run builds every partition; the incremental run rewrites partition dt=2 only, its v marked
    "models/orders_inc.sql": textwrap.dedent("""\
        select k, {% if is_incremental() %}concat(v, '-inc'){% else %}v{% endif %} as v, amount, dt
        from {{ ref('src') }}
        {% if is_incremental() %}where dt = '2'{% endif %}
        """),
}

# Each model's rows as Spark computes them from the source rows (a view of SOURCE, catalog off), not from a model.
GOLDEN = {
    "src": "SELECT * FROM source_rows",
    "orders_v1": "SELECT k, v, amount FROM source_rows",
    "orders_v2": "SELECT k, v, amount FROM source_rows",
    "orders_kv": "SELECT k, v, amount FROM source_rows",
    "customers": "SELECT k, count(*), sum(amount) FROM source_rows WHERE k IS NOT NULL GROUP BY k",
    "joined": "SELECT s.k, s.v, t.total FROM source_rows s "
              "JOIN (SELECT k, sum(amount) AS total FROM source_rows GROUP BY k) t ON s.k = t.k",
    "orders_by_dt": "SELECT k, v, amount, dt FROM source_rows",
    "orders_inc": "SELECT k, IF(dt = '2', CONCAT(v, '-inc'), v), amount, dt FROM source_rows",
}
# model -> (buckets, bucketing_version, bucket columns)
BUCKETED = {"orders_v1": (8, "1", "[`k`]"), "orders_v2": (8, "2", "[`k`]"), "customers": (8, "2", "[`k`]"),
            "joined": (8, "2", "[`k`]"), "orders_by_dt": (4, "1", "[`k`]"), "orders_inc": (4, "2", "[`k`]"),
            "orders_kv": (8, "2", "[`k`, `v`]")}  # several bucket columns: bucketkit's SQL INSERT writes them too
JOIN = f"SELECT * FROM {SCHEMA}.orders_v2 o JOIN {SCHEMA}.customers c ON o.k = c.k"

CHECK = textwrap.dedent("""
    import json, os, sys
    import bucketkit
    from bucketkit.spark.catalog import load_table

    spec = json.loads(sys.argv[1])
    spark = bucketkit.get_session("dbt-check", warehouse=spec["warehouse"], shuffle_partitions=4, conf=spec["conf"])

    def rows(sql, catalog=True):
        if not catalog:
            spark.conf.set(spec["switch"], "false")
        try:
            return sorted((list(r) for r in spark.sql(sql).collect()), key=repr)
        finally:
            spark.conf.unset(spec["switch"])

    # while dbt runs: Spark started, the golden rows computed; no table read (Derby admits one process at a time)
    spark.sql(spec["source"]).createOrReplaceTempView("source_rows")
    out = {"golden": {m: rows(sql, catalog=False) for m, sql in spec["golden"].items()}, "models": {}}
    if sys.stdin.readline().strip() != "go":
        sys.exit("dbt did not finish")
    for model in spec["golden"]:
        name = spec["schema"] + "." + model
        info = {"bucketkit_read": rows(f"SELECT * FROM {name}"), "spark_read": rows(f"SELECT * FROM {name}", False)}
        if model in spec["bucketed"]:
            described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE FORMATTED {name}").collect()}
            info["storage"] = {k: described.get(k) for k in ("Provider", "Serde Library", "InputFormat",
                                                             "Num Buckets", "Bucket Columns")}
            info["tblproperties"] = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
            info["validate"] = bucketkit.validate(load_table(spark, name)).to_dict()
            root = described["Location"].removeprefix("file:")
            info["manifest"] = os.path.isfile(os.path.join(root, "_bucketkit_files.json"))
        out["models"][model] = info
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    out["join_plan"] = spark.sql(spec["join"])._jdf.queryExecution().executedPlan().toString()
    out["join_rows"] = spark.sql(spec["join"]).count()
    print("CHECK " + json.dumps(out))
""")


def _cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bucketkit"
    return base / f"dbt-{DBT_CORE}-spark-{DBT_SPARK}"


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def dbt_venv() -> Path:
    """The cached virtualenv with dbt-core and dbt-spark (no pyspark), this .venv's site-packages after its own.

    Made once (``READY`` marks a finished one; a half-made one is made again), under a lock. A fetch that fails
    (offline) skips the test; an install from what was fetched that fails, fails it."""
    venv = _cache_dir()
    python = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "READY").is_file():
            shutil.rmtree(venv, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
            wheels = venv / "wheels"
            pins = [f"dbt-core=={DBT_CORE}", f"dbt-spark=={DBT_SPARK}"]  # no [session] extra: no pyspark
            fetched = _run([str(python), "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d",
                            str(wheels), *pins], timeout=900)
            if fetched.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                pytest.skip(f"could not fetch {' '.join(pins)}: {(fetched.stderr or fetched.stdout).strip()[-400:]}")
            installed = _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index",
                              "--find-links", str(wheels), *pins], timeout=900)
            assert installed.returncode == 0, installed.stdout + installed.stderr
            shutil.rmtree(wheels)
            (venv / "READY").write_text(f"dbt-core {DBT_CORE}, dbt-spark {DBT_SPARK}\n")
        site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    check=True).stdout.strip()
        # addsitedir, not a plain path: this .venv's own .pth files (the editable bucketkit) count too
        pth = f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
        if not Path(site, "zz_bucketkit.pth").is_file() or Path(site, "zz_bucketkit.pth").read_text() != pth:
            Path(site, "zz_bucketkit.pth").write_text(pth)
    return venv


def queue_background(names: set[str], tmp_path_factory) -> None:
    """The dbt runs and the checking process, beside the suite (tests/support/background.py)."""
    background.start("dbt", build, tmp_path_factory.mktemp("dbt"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The project built by two ``dbt run``s, and the checking process's findings (JSON); a skip or failure of the
    build is this fixture's."""
    return background.result("dbt", build, tmp_path_factory.mktemp("dbt"))


def build(base: Path) -> dict:
    """Two ``dbt run``s of the project in ``base``, then the checking process's findings."""
    venv = dbt_venv()
    python = str(venv / "bin" / "python")
    where = _run([python, "-c", "import pyspark, bucketkit, dbt.adapters.spark as a; "
                                "print(pyspark.__file__, bucketkit.__file__, a.__file__, sep='\\n')"], check=True)
    pyspark_at, bucketkit_at, adapter_at = where.stdout.split()
    project, warehouse = base / "project", base / "warehouse"
    for name, text in PROJECT.items():
        Path(project, name).parent.mkdir(parents=True, exist_ok=True)
        Path(project, name).write_text(text)
    metastore = {"spark.hadoop.javax.jdo.option.ConnectionURL":
                 f"jdbc:derby:;databaseName={base / 'metastore_db'};create=true"}
    conf = json.loads(_run([python, "-m", "bucketkit.cli", "spark-conf", "--json"], check=True).stdout)
    params = {**conf, "spark.master": "local[2]", "spark.ui.enabled": "false",
              "spark.sql.warehouse.dir": str(warehouse), **metastore}
    profile = {"bucketkit_dbt": {"target": "local", "outputs": {"local": {
        "type": "spark", "method": "session", "host": "NA", "schema": SCHEMA, "threads": 1,
        "server_side_parameters": params}}}}
    (project / "profiles.yml").write_text(json.dumps(profile, indent=2))  # JSON is YAML
    plain = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    # These JVMs live a minute: without C2 compiles, the test takes 80 s instead of 105 s on 2 cores.
    plain["JDK_JAVA_OPTIONS"] = f"{os.environ.get('JDK_JAVA_OPTIONS', '')} -XX:TieredStopAtLevel=1".strip()
    env = {**plain, "PYSPARK_PYTHON": python, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           "PATH": f"{venv / 'bin'}{os.pathsep}{plain.get('PATH', '')}"}
    spec = {"warehouse": str(warehouse), "conf": metastore, "switch": SWITCH, "schema": SCHEMA, "source": SOURCE,
            "golden": GOLDEN, "bucketed": list(BUCKETED), "join": JOIN}
    runs, checker = [], None
    with open(base / "check.out", "w+") as check_out, open(base / "check.err", "w+") as check_err:
        try:
            for run in range(2):
                if run == 1:  # the checking process starts its Spark meanwhile; it reads the tables when told
                    checker = subprocess.Popen([sys.executable, "-c", CHECK, json.dumps(spec)], cwd=base, text=True,
                                               stdin=subprocess.PIPE, stdout=check_out, stderr=check_err, env=plain)
                out = _run([str(venv / "bin" / "dbt"), "run", "--project-dir", str(project), "--profiles-dir",
                            str(project)], cwd=base, env=env, timeout=900)
                log = project / "logs" / "dbt.log"
                assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:] + (
                    log.read_text(errors="replace")[-6000:] if log.exists() else "")
                results = json.loads((project / "target" / "run_results.json").read_text())["results"]
                runs.append({r["unique_id"].rsplit(".", 1)[-1]: r["status"] for r in results})
            checker.communicate("go\n", timeout=900)
        finally:
            if checker is not None and checker.poll() is None:
                checker.kill()
                checker.wait()
        check_out.seek(0)
        check_err.seek(0)
        stdout, stderr = check_out.read(), check_err.read()
    lines = [line for line in stdout.splitlines() if line.startswith("CHECK ")]
    assert checker.returncode == 0 and lines, stdout[-3000:] + stderr[-6000:]
    inc_sql = (project / "target" / "run" / "bucketkit_dbt" / "models" / "orders_inc.sql").read_text()
    return {"runs": runs, "inc_sql": inc_sql, "where": (pyspark_at, bucketkit_at, adapter_at), "venv": venv,
            **json.loads(lines[-1].removeprefix("CHECK "))}


def test_dbt_runs_in_its_own_venv_on_this_venvs_pyspark_and_bucketkit(built):
    pyspark_at, bucketkit_at, adapter_at = built["where"]
    assert Path(adapter_at).is_relative_to(built["venv"])
    here = Path(sysconfig.get_paths()["purelib"])
    assert Path(pyspark_at).is_relative_to(here), pyspark_at
    assert Path(bucketkit_at).parent == Path(__file__).resolve().parent.parent / "bucketkit"


def test_both_runs_build_every_model_and_the_second_takes_the_incremental_path(built):
    assert built["runs"] == [{m: "success" for m in GOLDEN}] * 2
    sql = " ".join(built["inc_sql"].split())
    assert f"insert overwrite table {SCHEMA}.orders_inc partition (dt)" in sql, built["inc_sql"]


@pytest.mark.parametrize("model", list(GOLDEN))
def test_each_models_rows_are_the_ones_spark_computes_from_the_source_rows(built, model):
    golden, found = built["golden"][model], built["models"][model]
    assert len(golden) == {"customers": 500, "joined": 2000 - 154}.get(model, 2000)  # 154 NULL keys join nothing
    assert found["spark_read"] == golden  # Spark's own read of the files
    assert found["bucketkit_read"] == golden  # through bucketkit's catalog


@pytest.mark.parametrize("model", list(BUCKETED))
def test_each_bucketed_model_is_a_hive_orc_table_every_row_in_its_bucket(built, model):
    buckets, version, columns = BUCKETED[model]
    found = built["models"][model]
    assert found["storage"]["Provider"] == "hive" and "orc" in found["storage"]["Serde Library"].lower()
    assert found["storage"]["Num Buckets"] == str(buckets) and found["storage"]["Bucket Columns"] == columns
    assert found["tblproperties"].get("bucketing_version", "1") == version
    checked = found["validate"]
    assert checked["misplaced_rows"] == 0 and not checked["skipped"], checked
    assert checked["rows_checked"] == len(built["golden"][model]), checked
    assert found["manifest"]  # bucketkit's commit, recorded


def test_a_join_of_two_bucketed_models_on_their_key_moves_no_rows(built):
    plan = built["join_plan"]
    assert "Join" in plan and "Exchange" not in plan, plan
    assert built["join_rows"] == len(built["golden"]["joined"])
