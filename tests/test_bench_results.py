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


def test_a_run_keeps_the_sections_written_by_hand_where_they_stand(tmp_path):
    results, history = tmp_path / "RESULTS.md", tmp_path / "HISTORY.md"
    for topic in ("scan", "sql"):
        run = TopicRun(topic, [BenchResult("q", 0.5, 1.0, "Spark", "notes", {}, goal_ratio=1.0)], 1.0)
        write_results([run], INFO, f"python -m benchmarks.run --only {topic}", 1.0, path=results,
                      history_path=history)
    text = results.read_text()
    hand = "### joins whose keys repeat (by hand)\n\nA note measured by hand.\n\n"
    results.write_text(text.replace("### sql\n", hand + "### sql\n"))
    run = TopicRun("scan", [BenchResult("q", 0.25, 1.0, "Spark", "notes", {}, goal_ratio=1.0)], 1.0)
    write_results([run], INFO, "python -m benchmarks.run --only scan", 1.0, path=results, history_path=history)
    text = results.read_text()
    assert text.count(hand) == 1 and text.index("### scan\n") < text.index(hand) < text.index("### sql\n")
    assert "kept from an earlier run" not in text.split(hand)[0].split("### scan\n")[1]  # scan ran: its new figure
    assert "| scan | q | 250.0 ms | 0.25x" in text and "| sql | q | 500.0 ms | 0.50x" in text
    assert "joins whose keys repeat" not in text.split("## Summary", 1)[1].split("\n### ", 1)[0]
