"""``spark.read.format("bucketkit")`` in a plain session that never imported bucketkit: Spark 4 finds
the top-level ``pyspark_bucketkit`` module's ``DefaultSource`` itself (issue 14, item 4). It reads
every bucket (Spark's default session has Python filter push-down off); ``bucketkit.configure``
then registers the pruning source over it."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from support import background
from support.scan import write_arrow_table
from support.scan import SPEC, rows_for

ROOT = pathlib.Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("plain")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    assert "bucketkit" not in sys.modules  # nothing but Spark's own lookup may bring it in
    df = spark.read.format("bucketkit").load(sys.argv[1])
    print("ROWS", df.count(), sorted(df.columns))
    one = lambda: spark.read.format("bucketkit").load(sys.argv[1]).where("k = 42")
    print("PLAIN", one().count(), one().rdd.getNumPartitions())
    import bucketkit.spark.session
    bucketkit.spark.session.configure(spark)
    print("CONFIGURED", one().count(), one().rdd.getNumPartitions())
    spark.stop()
""")


def _plain_session(tmp_path) -> subprocess.CompletedProcess:
    """The plain session's process over a table written with pyarrow alone."""
    table = write_arrow_table(str(tmp_path / "t"), SPEC.with_(bucketing_version=2), rows_for())
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", SCRIPT, table],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)


def queue_background(names: set[str], tmp_path_factory) -> None:
    """The plain session is a process of its own: run beside the suite (tests/support/background.py)."""
    if "test_plain_session_reads_format_bucketkit" in names:
        background.start("plain_session_format", _plain_session, tmp_path_factory.mktemp("plain"))


@pytest.mark.spark
def test_plain_session_reads_format_bucketkit(tmp_path_factory):
    out = background.result("plain_session_format", _plain_session, tmp_path_factory.mktemp("plain"))
    assert out.returncode == 0, out.stderr[-3000:]
    expected = sorted({*(n for n, _ in SPEC.columns), *SPEC.partitioned_by})
    assert f"ROWS {len(rows_for())} {expected}" in out.stdout, out.stdout
    counts = {line.split()[0]: tuple(map(int, line.split()[1:])) for line in out.stdout.splitlines()
              if line.startswith(("PLAIN", "CONFIGURED"))}
    matching = sum(1 for r in rows_for() if r["k"] == 42)
    assert counts["PLAIN"][0] == counts["CONFIGURED"][0] == matching > 0
    assert counts["CONFIGURED"][1] < counts["PLAIN"][1]  # pruned to k=42's bucket once configured


def test_the_installed_package_is_visible_to_sparks_module_scan(tmp_path):
    """As installed (wheel, or `make`'s compat editable install) and without PYTHONPATH, the module
    scan Spark runs in its worker (pkgutil.iter_modules over sys.path) lists pyspark_bucketkit."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", "import pkgutil; print(sorted(m.name for m in pkgutil.iter_modules() "
                          "if m.name.startswith('pyspark_')))"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert "pyspark_bucketkit" in out.stdout, out.stderr
