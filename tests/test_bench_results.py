"""benchmarks/run.py's files: RESULTS.md opens with the summary, HISTORY.md grows by one block a run."""

from __future__ import annotations

from benchmarks.common import BenchResult
from benchmarks.run import HISTORY_HEAD, TopicRun, write_results

INFO = {"date": "2026-11-25T10:00:00+00:00", "commit": "abc1234", "cpu": "cpu", "cores": 2, "cores_usable": 2,
        "memory_gb": 1.0, "os": "os", "python": "3.11", "pyspark": "4.3.0", "pyarrow": "x", "numpy": "x",
        "numba": "x", "java": "x"}


def test_two_runs_leave_one_history_head_and_both_blocks_and_a_summary(tmp_path):
    results, history = tmp_path / "RESULTS.md", tmp_path / "HISTORY.md"
    for ours in (0.5, 0.25):
        run = TopicRun("sql", [BenchResult("q", ours, 1.0, "Spark", "notes", {}, goal_ratio=1.0)], 1.0)
        write_results([run], INFO, "python -m benchmarks.run --only sql", 1.0, path=results, history_path=history)
    text = history.read_text()
    assert text.startswith(HISTORY_HEAD) and text.count("Every run of") == 1
    assert text.count("### 2026-11-25T10:00:00+00:00") == 2 and text.index("0.50x") < text.index("0.25x")
    summary = results.read_text().split("## Summary", 1)[1].split("\n### ", 1)[0]
    assert "| sql | q | 250.0 ms | 0.25x" in summary and "abc1234" in summary
