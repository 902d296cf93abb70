"""The ``spark-sql`` shell (no Python in the client): pyspark's own ``bin/spark-sql`` started with
bucketkit's jar and settings as ``bucketkit spark-conf`` prints them (docs/sql.md), runs DDL, an ``INSERT`` through the catalog and a
join on the bucket key without an ``Exchange``; the files it wrote are where Hive v2 puts each row
(``bucketkit.validate``) and read back by Spark's own reader."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import bucketkit
from support import background


pytestmark = pytest.mark.spark


def spark_conf_flags() -> list[str]:
    """The flags ``bucketkit spark-conf`` prints, as a shell would split them."""
    import shlex

    proc = subprocess.run([sys.executable, "-c", "import sys; from bucketkit.cli import main; sys.exit(main())",
                           "spark-conf"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return shlex.split(proc.stdout)

SQL = """
CREATE TABLE shell_a (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC
  LOCATION '{a}' TBLPROPERTIES ('bucketing_version'='2');
CREATE TABLE shell_b (k INT, w STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC
  LOCATION '{b}' TBLPROPERTIES ('bucketing_version'='2');
INSERT INTO shell_a SELECT CAST(id % 50 AS INT), CAST(id AS STRING) FROM range(300);
INSERT INTO shell_b SELECT CAST(id AS INT) - 10, CAST(id AS STRING) FROM range(40);
SET spark.sql.autoBroadcastJoinThreshold=-1;
EXPLAIN SELECT count(*) FROM shell_a a JOIN shell_b b ON a.k = b.k;
SELECT 'RESULT', count(*) FROM shell_a a JOIN shell_b b ON a.k = b.k;
"""


def _run_shell(tmp_path):
    """The shell's run (a JVM of its own, beside the suite): its process and the two tables' directories."""
    import pyspark

    shell = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-sql")
    args = [shell, "--master", "local[2]", *spark_conf_flags()]
    for k, v in {"spark.ui.enabled": "false", "spark.sql.warehouse.dir": str(tmp_path / "wh"),
                 "spark.sql.shuffle.partitions": "2"}.items():
        args += ["--conf", f"{k}={v}"]
    a, b = tmp_path / "a", tmp_path / "b"
    proc = subprocess.run(args + ["-e", SQL.format(a=a, b=b)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "SPARK_HOME": os.path.dirname(pyspark.__file__)})
    return proc, a, b


def queue_background(names, tmp_path_factory) -> None:
    if "test_the_spark_sql_shell_writes_and_joins_through_the_catalog" in names:
        background.start("spark_sql_shell", _run_shell, tmp_path_factory.mktemp("shell"))


def test_the_spark_sql_shell_writes_and_joins_through_the_catalog(tmp_path_factory):
    proc, a, b = background.result("spark_sql_shell", _run_shell, tmp_path_factory.mktemp("shell"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    plan = out[out.index("== Physical Plan =="):out.index("RESULT")]
    assert "Join" in plan and "hashpartitioning" not in plan and "Exchange keyed" not in plan, plan
    # k 0..49 six times each on the left; the right holds k -10..29 once: 30 keys match, 6 rows each
    assert [line.split("\t") for line in out.splitlines() if line.startswith("RESULT")] == [["RESULT", "180"]]
    for path, rows in ((a, 300), (b, 40)):
        result = bucketkit.validate(str(path))
        assert result.ok and result.rows_checked == rows, result
