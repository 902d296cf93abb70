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


def test_the_summary_dates_a_topic_whose_measured_line_carries_a_note_written_by_hand():
    from benchmarks.run import render_summary

    section = ("### scan\n\n_Measured 2026-11-28T09:49+00:00, commit 628200e+changes (nine rounds for the lookup), "
               "scale 1._\n\n| benchmark | bucketkit | baseline | baseline time | ratio | goal | notes |\n"
               "|---|---|---|---|---|---|---|\n| q | 1.00 s | Spark | 2.00 s | 0.50x | <= 1x met | n |\n")
    assert "| scan | q | 1.00 s | 0.50x | <= 1x met | 2026-11-28 628200e+changes |" in render_summary(section)


def test_the_summary_takes_a_topic_s_first_table_and_not_the_earlier_one_kept_below_it():
    from benchmarks.run import render_summary

    table = ("| benchmark | bucketkit | baseline | baseline time | ratio | goal | notes |\n|---|---|---|---|---|---|---|\n"
             "| q | {t} | Spark | 2.00 s | {r} | - | n |\n")
    section = ("### scan\n\n_Measured 2026-12-07T06:55:53+00:00, commit 1398810, scale 1._\n\n"
               + table.format(t="1.00 s", r="0.50x") + "\nAn earlier run, kept by hand:\n\n"
               + table.format(t="3.00 s", r="1.50x"))
    summary = render_summary(section)
    assert "| scan | q | 1.00 s | 0.50x |" in summary and "3.00 s" not in summary
