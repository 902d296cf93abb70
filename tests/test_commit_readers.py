"""Readers looping while another process commits: every read is exactly one whole committed version.

The writer runs in a subprocess and commits >= 20 versions (overwrites: version v replaces the
table with rows tagged v; appends: version v adds rows tagged v). The reader reads in a loop, with a
plain directory reader (pyarrow's dataset: list the directory, read its files, as Spark/Hive/Trino
do) and with bucketkit's reader (plan_scan, then the data source's per-file read), and checks each
read against the versions the writer committed: an overwrite read is one version exactly, an append
read is versions 1..m exactly. Allowed besides: a plain reader whose listed file was replaced fails
(FileNotFoundError), bucketkit raises ConcurrentModificationError naming the table; a plain read
whose listing the switch emptied (pyarrow stats each listed name by path and drops the names the
switch took away) is counted apart. Never a part, never a mix, never a raw error from bucketkit.
A third reader, bucketkit's listing alone (discover, no data read), runs hundreds of times per loop,
so some listings straddle a switch: each must be exactly one version's files.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import time
from collections import Counter
from functools import partial

import pytest

from bucketkit.errors import ConcurrentModificationError
from support import background
from support.commit import (FLAT, REPO, SPEC, ListingRaced, commit_rows, listed_files, read_bucketkit, read_plain,
                            version_id, version_rows)

VERSIONS = 24
WRITER = textwrap.dedent("""
    import os, sys, time
    from support.commit import FLAT, SPEC, commit_rows, version_id, version_rows
    root, mode, flat, how = sys.argv[1], sys.argv[2], sys.argv[3] == "flat", sys.argv[4]
    progress = sys.argv[6]
    for v in range(1, int(sys.argv[5]) + 1):
        commit_rows(root, version_rows(v, flat), mode=mode, spec=FLAT if flat else SPEC, switch=how,
                    write_id=version_id(v))
        # pace the writer to the reader (a loaded machine starves it), so it sees most versions
        reads, deadline = os.path.getsize(progress), time.monotonic() + 5
        while os.path.getsize(progress) < reads + 2 and time.monotonic() < deadline:
            time.sleep(0.005)
""")


def expected(v: int, flat: bool) -> Counter:
    return Counter((None if flat else part.split("=")[1], k, tag)
                   for part, rows in version_rows(v, flat).items() for k, tag in rows)


def classify(rows: Counter, mode: str, flat: bool) -> int:
    """The version a read saw (overwrite: v; append: the last of 1..m); fails on a part or a mix."""
    tags = sorted({int(tag[1:]) for _, _, tag in rows})
    if mode == "overwrite":
        assert len(tags) == 1, f"a mix of versions {tags}"
        assert rows == expected(tags[0], flat), f"a part of version {tags[0]}: {sum(rows.values())} rows"
        return tags[0]
    assert tags == list(range(tags[0], tags[-1] + 1)) and tags[0] in (0, 1), f"not a prefix of appends: {tags}"
    want = sum((expected(v, flat) for v in tags), Counter())
    assert rows == want, f"a part of appends {tags}: {sum(rows.values())} of {sum(want.values())} rows"
    return tags[-1]


def files_of(v: int, flat: bool) -> set[str]:
    return {f"{part}/{k % 4:06d}_0_{version_id(v)}.parquet".lstrip("/")
            for part, rows in version_rows(v, flat).items() for k, _ in rows}


def classify_files(files: list[str], mode: str, flat: bool) -> int:
    """The version a listing saw: exactly the files of one version (overwrite) or of 0..m (append)."""
    versions = sorted({int(f.rsplit("_", 2)[1]) for f in files})
    assert versions, "an empty listing"
    want = set().union(*(files_of(v, flat) for v in (versions if mode == "overwrite" else range(versions[-1] + 1))))
    assert len(versions) == 1 or mode == "append", f"a mix of versions {versions}"
    assert set(files) == want and len(files) == len(want), \
        f"not one whole version: {len(files)} files of versions {versions}, missing {sorted(want - set(files))[:4]}"
    return versions[-1]


def loop(table, mode: str, flat: bool, how: str, readers: dict, writer: str = WRITER, check=classify) -> dict:
    commit_rows(table, version_rows(0, flat), spec=FLAT if flat else SPEC, write_id=version_id(0))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    progress = pathlib.Path(f"{table}.reads")  # grows a byte per read: the writer paces itself to it
    progress.write_bytes(b"")
    proc = subprocess.Popen([sys.executable, "-c", writer, str(table), mode, "flat" if flat else "parts", how,
                             str(VERSIONS), str(progress)], env=env, stderr=subprocess.PIPE, text=True)
    stats = {name: Counter() for name in readers}
    seen = {name: set() for name in readers}
    deadline = time.monotonic() + 300
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            for name, read in readers.items():
                try:
                    seen[name].add(check(read(table), mode, flat))
                    stats[name]["reads"] += 1
                    with progress.open("ab") as f:
                        f.write(b".")
                except FileNotFoundError:
                    assert name == "plain", "bucketkit let a raw FileNotFoundError escape"
                    stats[name]["replaced under it"] += 1
                except ListingRaced:
                    assert name == "plain"
                    stats[name]["listing emptied by a switch"] += 1
                except ConcurrentModificationError as exc:
                    assert name != "plain" and str(table) in str(exc)
                    stats[name]["replaced under it"] += 1
    except BaseException:
        proc.kill()  # the reader failed: do not leave the writer pacing itself to it
        raise
    assert proc.wait(timeout=10) == 0, proc.stderr.read()[-2000:]
    final = VERSIONS
    for name, read in readers.items():
        assert check(read(table), mode, flat) == final
        stats[name]["versions"] = len(seen[name])
        assert stats[name]["reads"] >= 20 and len(seen[name]) >= 5, (name, stats[name])
    print(mode, "flat" if flat else "partitioned", how, {k: dict(v) for k, v in stats.items()})
    return stats


BOTH = {"plain": read_plain, "bucketkit": read_bucketkit}


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_readers_of_a_directory_see_whole_versions(tmp_path, mode):
    loop(tmp_path / "t", mode, True, "auto", BOTH)


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_bucketkit_reads_whole_versions_of_a_partitioned_table(tmp_path, mode):
    """A partitioned table is listed directory by directory: bucketkit checks the version marker
    after listing and lists again if a commit switched versions meanwhile."""
    loop(tmp_path / "t", mode, False, "auto", {"bucketkit": read_bucketkit})


SPARK_WRITER = textwrap.dedent("""
    import sys, tempfile
    from pyspark.sql import functions as F
    import bucketkit
    from bucketkit.spark.session import get_session
    from support.commit import version_rows
    spark = get_session("loop", master="local[1]", hive=False, shuffle_partitions=2,
                        warehouse=tempfile.mkdtemp() + "/wh")
    for v in range(1, int(sys.argv[5]) + 1):
        rows = version_rows(v, True)[""]
        df = spark.range(len(rows)).select((F.col("id") + v * 10_000).alias("k"), F.lit(f"v{v}").alias("tag"))
        bucketkit.write(df, "k", 4, path=sys.argv[1], mode=sys.argv[2], file_format="parquet")
""")


def _spark_writer_loop(base: pathlib.Path) -> dict:
    return loop(base / "t", "overwrite", True, "auto", BOTH, writer=SPARK_WRITER)


def queue_background(names, tmp_path_factory) -> None:
    """The loop against a Spark writer spends a minute in its writer's process: it runs beside the suite."""
    if "test_readers_see_whole_versions_while_bucketkit_write_overwrites" in names:
        background.start("commit_readers_spark_writer", _spark_writer_loop, tmp_path_factory.mktemp("readers"))


@pytest.mark.spark
def test_readers_see_whole_versions_while_bucketkit_write_overwrites(tmp_path_factory):
    """The same loop with the writer being ``bucketkit.write`` itself (Spark in the subprocess)."""
    background.result("commit_readers_spark_writer", _spark_writer_loop, tmp_path_factory.mktemp("readers"))


@pytest.mark.parametrize("flat", [True, False], ids=["flat", "partitioned"])
@pytest.mark.parametrize("how", ["auto", "rename"])
def test_listings_that_straddle_a_switch_see_one_whole_version(tmp_path, how, flat):
    """bucketkit's listing in a tight loop, both ways it lists (a fraction of a millisecond; hundreds
    per loop, some straddling a switch). A listing that reads names in one version and looks them
    up by path in the next must not return a part of a version, nor nothing."""
    readers = {"listing": listed_files, "recursive listing": partial(listed_files, recursive=True)}
    stats = loop(tmp_path / "t", "overwrite", flat, how, readers, check=classify_files)
    assert min(s["reads"] for s in stats.values()) >= 100


def test_bucketkit_waits_out_the_switch_of_the_rename_fallback(tmp_path):
    """Without an exchange the table path is missing for a moment: bucketkit waits, never fails."""
    stats = loop(tmp_path / "t", "overwrite", False, "rename", {"bucketkit": read_bucketkit})
    assert stats["bucketkit"]["reads"] >= 20


def test_a_switch_between_listing_the_root_and_its_partitions_makes_bucketkit_list_again(tmp_path):
    """Deterministic form of the race above: the overwrite lands after the root was listed (the
    partition filter runs between the two), so the partitions come from the next version."""
    from bucketkit.layout.discovery import discover

    table = tmp_path / "t"
    commit_rows(table, version_rows(1, False))
    calls = []

    def overwrite_once(values):
        if not calls:
            commit_rows(table, version_rows(2, False), mode="overwrite")
        calls.append(dict(values))
        return True

    layout = discover(str(table), 4, partitioned_by=("p",), partition_filter=overwrite_once)
    writes = {f.name.split("_0_", 1)[1] for p in layout.partition_layouts for f in p.files}
    assert len(writes) == 1  # the files of one write, not of two
    assert len(calls) > len(layout.partition_layouts)  # it listed twice
    assert read_bucketkit(table) == expected(2, False)


def test_a_file_gone_between_planning_and_reading_is_a_clear_error(tmp_path):
    """A plan reads the version kept for it after an overwrite; a file gone from where a read expected it
    (read in place: no version kept, or the kept version vacuumed) is a clear bucketkit error."""
    from bucketkit.pruning.plan import plan_scan
    import pyarrow as pa

    import bucketkit
    from bucketkit.errors import VersionNotFoundError
    from bucketkit.spark.scan import unit_reader
    from bucketkit.units import ReadUnit
    from support.commit import as_counter, read_plan

    table = tmp_path / "t"
    commit_rows(table, version_rows(1, True), spec=FLAT)
    plan = plan_scan(str(table))
    commit_rows(table, version_rows(2, True), mode="overwrite", spec=FLAT)
    assert read_plan(plan) == as_counter(version_rows(1, True))
    in_place = os.path.join(str(table), os.path.relpath(plan.files[0], plan.root))
    with pytest.raises(ConcurrentModificationError, match=f"{table}.*{in_place}.*overwritten while it was read"):
        list(unit_reader(plan.table, pa.schema([]))(ReadUnit(in_place, 1, 0)))
    bucketkit.vacuum(str(table), retain=0)
    with pytest.raises(VersionNotFoundError, match=f"{table}.*planned on was removed by vacuum"):
        read_plan(plan)


APPENDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from bucketkit.writing.commit import Transaction
    from support.commit import SPEC, stage_rows
    root, me, rounds, gate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    for r in range(rounds):
        tx = Transaction(root, SPEC, mode="append")
        tx.begin()
        rows = {f"p={me}": [(me * 1000 + r * 10 + i, f"w{me}r{r}") for i in range(6)],
                "p=9": [(me * 1000 + r * 10 + 9, f"w{me}r{r}")]}
        staged = stage_rows(tx, rows)
        (gate / f"{me}.{r}").touch()
        while len(list(gate.glob(f"*.{r}"))) < int(sys.argv[5]):  # every process staged round r
            time.sleep(0.001)
        tx.commit(staged)
""")


def test_concurrent_appends_from_several_processes_all_land_once(tmp_path):
    table, gate = tmp_path / "t", tmp_path / "gate"
    gate.mkdir()
    commit_rows(table, {"p=0": [(0, "seed")]})
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'tests'}"}
    writers, rounds = 3, 4
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(table), str(me), str(rounds), str(gate),
                               str(writers)], env=env, stderr=subprocess.PIPE, text=True)
             for me in range(1, writers + 1)]
    deadline = time.monotonic() + 60
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        failed = [p for p in procs if p.poll()]
        if failed:  # the others would wait for it at the gate
            [p.kill() for p in procs]
            pytest.fail(failed[0].stderr.read()[-2000:])
        time.sleep(0.01)
    assert [p.poll() for p in procs] == [0] * writers
    want = Counter({("0", 0, "seed"): 1})
    for me in range(1, writers + 1):
        for r in range(rounds):
            want.update([(str(me), me * 1000 + r * 10 + i, f"w{me}r{r}") for i in range(6)])
            want.update([("9", me * 1000 + r * 10 + 9, f"w{me}r{r}")])
    assert read_plain(table) == want  # nothing lost, nothing twice
    assert read_bucketkit(table) == want
