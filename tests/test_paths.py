"""Every entry point taking a table path gives a bucketkit error naming it, never a raw OS error.

A file where a table directory is expected, a missing path, and (when not running as root) a path
whose parent cannot be read: open_table, read_spec, discover, plan_scan, plan_join, the CLI
(inspect, validate, plan-join), the data source's option parsing, and, with Spark, bucketkit.scan,
bucketkit.join and ``spark.read.format("bucketkit")``.
"""

from __future__ import annotations

import os

import pytest

from bucketkit.cli import main
from bucketkit.errors import BucketkitError, TableNotFoundError
from bucketkit.joins.plan import plan_join
from bucketkit.layout.discovery import discover
from bucketkit.layout.metadata import TableSpec, read_spec, write_spec
from bucketkit.pruning.plan import plan_scan
from bucketkit.table import open_table

FOREIGN = dict(bucketed_by=["k"], bucket_count=4, bucket_types=["int"])


@pytest.fixture
def bad_paths(tmp_path):
    """name -> (path, what the message must say)."""
    a_file = tmp_path / "000000_0"
    a_file.write_bytes(b"not a table")
    out = {"file": (str(a_file), "is a file"), "missing": (str(tmp_path / "nope" / "t"), "does not exist")}
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        (locked / "t").mkdir(parents=True)
        locked.chmod(0)
        out["unreadable"] = (str(locked / "t"), "cannot be read")
        yield out
        locked.chmod(0o755)
    else:
        yield out  # root reads everything: the permission case cannot be made here


@pytest.fixture
def good_table(tmp_path):
    root = tmp_path / "good"
    write_spec(str(root), TableSpec.create(["k"], 4, columns={"k": "int"}))
    return str(root)


def check(exc_info, path, what):
    text = str(exc_info.value)
    assert path in text and what in text, text


def test_python_entry_points(bad_paths, good_table):
    for path, what in bad_paths.values():
        calls = [lambda: open_table(path), lambda: open_table(path, **FOREIGN), lambda: read_spec(path),
                 lambda: discover(path, 4), lambda: plan_scan(path, [("k", "=", 1)]),
                 lambda: plan_scan(path, **FOREIGN), lambda: plan_join(path, good_table, "k"),
                 lambda: plan_join(good_table, path, "k")]
        for call in calls:
            with pytest.raises(TableNotFoundError) as exc_info:
                call()
            check(exc_info, path, what)
            if "file" in what or "does not exist" in what:
                assert "expected a table directory" in str(exc_info.value)


def test_data_source_options():
    pytest.importorskip("pyspark")
    from bucketkit.spark.datasource import table_from_options

    with pytest.raises(TableNotFoundError, match="expected a table directory"):
        table_from_options({"path": "/nonexistent/bucketkit/t", "bucketed_by": "k", "bucket_count": "4",
                            "bucket_types": "int"})


def test_cli(bad_paths, good_table, capsys):
    for path, what in bad_paths.values():
        for argv in (["inspect", path], ["inspect", path, "--bucket-count", "4"], ["validate", path],
                     ["plan-join", path, good_table, "--on", "k"], ["plan-join", good_table, path, "--on", "k"]):
            assert main(argv) != 0, argv
            err = capsys.readouterr().err
            assert err.startswith("bucketkit: error:") and path in err and what in err, (argv, err)


def test_spark_entry_points(spark, bad_paths, good_table):
    import bucketkit

    for path, what in bad_paths.values():
        for call in (lambda: bucketkit.scan(spark, path), lambda: bucketkit.scan(spark, path, **FOREIGN),
                     lambda: bucketkit.join(spark, path, good_table, "k")):
            with pytest.raises(TableNotFoundError) as exc_info:
                call()
            check(exc_info, path, what)
        # The data source runs in Spark's Python worker; Spark re-raises with our message inside.
        with pytest.raises(Exception) as exc_info:
            spark.read.format("bucketkit").load(path).collect()
        assert not isinstance(exc_info.value, (OSError, BucketkitError)) or isinstance(exc_info.value, TableNotFoundError)
        assert path in str(exc_info.value) and "TableNotFoundError" in str(exc_info.value)
