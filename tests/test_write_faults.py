"""A Spark writer process SIGKILLed mid-write: before recovery Spark's own reader and bucketkit.scan
read the last committed version or the new one, whole; the next write recovers first."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bucketkit
from bucketkit.writing.commit import settle
from bucketkit.writing.recovery import recover
from bucketkit.layout.versions import TablePaths
from support import background

REPO = Path(__file__).resolve().parents[1]
WRITER = textwrap.dedent("""
    import os, sys, tempfile
    from bucketkit.spark.session import get_session
    import bucketkit
    spark = get_session("fault", master="local[1]", hive=False, shuffle_partitions=2,
                        warehouse=tempfile.mkdtemp() + "/wh")
    bucketkit.write(spark.range(0, 100).selectExpr("id as k", "cast(id as string) as v"), "k", 4, path=sys.argv[1])
    os.environ["BUCKETKIT_FAULT"] = sys.argv[3]  # the second write dies there
    df = spark.range(200, 300).selectExpr("id as k", "cast(id as string) as v")
    bucketkit.write(df, "k", 4, path=sys.argv[1], mode=sys.argv[2])
""")
CASES = [
    ("append", "after_task_writes", False),
    ("append", "during_build:6", False),  # 4 new files placed, 2 of the 4 old ones linked
    ("overwrite", "before_switch", False),
    ("overwrite", "after_switch", True),
]


def _killed_writer(base: Path, mode: str, fault: str) -> tuple[str, subprocess.CompletedProcess]:
    """A table of rows 0..99 written, then a second write SIGKILLed at ``fault`` (a process of its own)."""
    root = str(base / "t")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("BUCKETKIT_FAULT", None)
    return root, subprocess.run([sys.executable, "-c", WRITER, root, mode, fault], env=env, capture_output=True,
                                text=True, timeout=300)


def queue_background(names, tmp_path_factory) -> None:
    """The writers' processes run beside the suite; each test reads what its writer left."""
    if "test_killed_writer_reads_whole_versions_then_recovers" in names:
        for mode, fault, _ in CASES:
            background.start(f"write_faults_{mode}_{fault}", _killed_writer, tmp_path_factory.mktemp("fault"),
                             mode, fault)


@pytest.mark.parametrize("mode, fault, committed", CASES)
def test_killed_writer_reads_whole_versions_then_recovers(spark, tmp_path_factory, mode, fault, committed):
    root, proc = background.result(f"write_faults_{mode}_{fault}", _killed_writer, tmp_path_factory.mktemp("fault"),
                                   mode, fault)
    tmp_path = Path(root).parent
    assert proc.returncode == -9, proc.stderr[-2000:]
    new = (list(range(0, 100)) if mode == "append" else []) + list(range(200, 300))
    before = new if committed else list(range(0, 100))
    assert sorted(r.k for r in spark.read.orc(root).collect()) == before  # read before recovery
    assert sorted(r.k for r in bucketkit.scan(spark, root).collect()) == before
    assert [a.state for a in recover(root, dry_run=True)] == [f"would roll {'forward' if committed else 'back'}"]
    # the next write finishes or undoes the dead one first, then appends its own rows
    with pytest.warns(UserWarning, match="rolled " + ("forward" if committed else "back")):
        bucketkit.write(spark.range(1000, 1010).selectExpr("id as k", "cast(id as string) as v"), "k", 4,
                        path=root, mode="append")
    keys = sorted(r.k for r in spark.read.orc(root).collect())
    assert keys == before + list(range(1000, 1010))
    settle()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(TablePaths(root).prefix)]
