"""Planning cost: list + map 100k bucket files over 1k partitions with ``bucketkit.discover``.

Goals: <= 2 s on local disk for the whole table (issue 2), and no slower than pyarrow's own
Hive-partitioned dataset discovery of the same tree (``pyarrow.dataset.dataset(...,
partitioning="hive")``), which lists the files and parses partition values but maps no buckets:
ratio <= 1. The two run interleaved (best of 5 each; ``extra`` has the pyarrow time and the ratio
of the medians too), so both see the same load. Also measured: the per-partition walk used when a
partition filter prunes (all partitions kept, and 1% kept).

On a shared machine the wall time inflates with the load; ``extra["cpu_s"]`` (this process's CPU
time, best of 3) is what the wall time would be when the machine is idle, since discover() runs on
one thread.

Run: ``python -m benchmarks.bench_planning [--scale S]`` (scale 1.0 = 100k files; the tree is
created once under ``benchmarks/.data/planning`` and reused).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
import uuid

from benchmarks.common import BenchResult, data_dir, print_results, scaled, timed, times_interleaved

FILES_PER_PARTITION = 100
BUCKETS = 100
QUERY_ID = "20240102_030405_00641_x1y2z"


def make_tree(files: int):
    """``partitions x 100`` empty Trino-named files, one per bucket; reused when already complete."""
    partitions = max(1, files // FILES_PER_PARTITION)
    root = data_dir("planning") / f"t{partitions * FILES_PER_PARTITION}"
    marker = root / "_complete"
    if marker.exists():
        return root, partitions
    shutil.rmtree(root, ignore_errors=True)
    for p in range(partitions):
        part = root / f"dt=2024-{1 + p // 28 % 12:02d}-{1 + p % 28:02d}" / f"shard={p // 336}"
        part.mkdir(parents=True)
        tag = uuid.uuid4()
        for b in range(FILES_PER_PARTITION):
            (part / f"{b:06d}_0_{tag}_{QUERY_ID}").touch()
    marker.touch()
    return root, partitions


def run(scale: float = 1.0) -> list[BenchResult]:
    import pyarrow as pa
    import pyarrow.dataset as ds

    from bucketkit.layout.discovery import discover

    files = scaled(100_000, scale, minimum=1000)
    root, partitions = make_tree(files)
    total = partitions * FILES_PER_PARTITION
    layout = discover(str(root), BUCKETS)
    assert layout.file_count == total and len(layout.partitions) == partitions, "tree and layout disagree"

    schema = pa.schema([("k", pa.int64())])  # given, so pyarrow opens no file (ours opens none either)
    ours_times, pyarrow_times = times_interleaved(
        [lambda: discover(str(root), BUCKETS),
         lambda: ds.dataset(str(root), format="orc", partitioning="hive", schema=schema).files], repeat=5, warmup=1)
    full, baseline = min(ours_times), min(pyarrow_times)
    medians = statistics.median(ours_times), statistics.median(pyarrow_times)
    cpu = timed(lambda: discover(str(root), BUCKETS), warmup=0, clock=time.process_time)
    walk_all = timed(lambda: discover(str(root), BUCKETS, partition_filter=lambda v: True), repeat=3, warmup=1)
    keep = {p["dt"] for p in layout.partitions[:: 100]}
    walk_some = timed(lambda: discover(str(root), BUCKETS, partition_filter=lambda v: v["dt"] in keep),
                      repeat=3, warmup=1)
    notes = f"{total} files, {partitions} partitions (2 levels), {BUCKETS} buckets"
    return [
        BenchResult("discover: list + map whole table", full, baseline, "pyarrow dataset discovery (no bucket map)",
                    f"{notes}; CPU {cpu:.2f} s; median {medians[0]:.3f} s vs pyarrow {medians[1]:.3f} s",
                    extra={"files": total, "files_per_s": round(total / full), "cpu_s": round(cpu, 3),
                           "pyarrow_s": round(baseline, 3), "ratio": round(full / baseline, 3),
                           "median_s": round(medians[0], 3), "pyarrow_median_s": round(medians[1], 3),
                           "median_ratio": round(medians[0] / medians[1], 3)},
                    goal_ratio=1.0, goal_s=2.0 * total / 100_000),
        BenchResult("discover with partition filter (all kept)", walk_all, baseline,
                    "pyarrow dataset discovery (no bucket map)", notes + "; per-partition listing"),
        BenchResult(f"discover with partition filter ({len(keep)} dates kept)", walk_some, baseline,
                    "pyarrow dataset discovery (no bucket map)", notes + "; only kept partitions listed"),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0 = 100k files over 1k partitions")
    print_results(run(parser.parse_args().scale))
