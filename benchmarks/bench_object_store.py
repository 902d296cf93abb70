"""A commit on an object store (issue 48): where each file a commit places is a request, what keeping the requests
in flight together saves. Pure Python, no Spark: ``python -m benchmarks.bench_object_store [--scale S]``.

The store is moto's S3 server on 127.0.0.1, started here, with a fixed delay added to every request it serves
(``--latency-ms``, default 0 and 20: moto on this machine answers in about a millisecond, S3 in tens). The
delays are simulated, not S3's: the figures show how the commit's requests queue, not what S3 takes. ``P``: 1 and 4 x ``--scale``.

Cases, each a :class:`bucketkit.writing.commit.Transaction` on S3 (the ``inside`` layout S3 gets):

* **overwrite**: ``P`` partitions x 64 buckets of small Parquet files staged, then committed (each staged file
  copied to its final name);
* **overwrite of one partition** (Hive's ``INSERT OVERWRITE ... PARTITION``, a dbt ``insert_overwrite`` run): 64
  files staged for one of ``P`` partitions; the other partitions' files are copied into the new version, as the
  inside layout does on a store without directory renames.

Timed: ``commit()`` alone, with the requests one after the other (``bucketkit.io.REQUEST_THREADS = 1``, the
commit before this change) and in flight together (the default); baseline: ``pyarrow.fs.copy_files`` of the same
objects with its own threads, the copy floor. Best of interleaved rounds; peak RSS of this process.
"""

from __future__ import annotations

import argparse
import posixpath
import socket
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import BenchResult, peak_rss_mb, print_results, times_interleaved

BUCKETS = 64


def _serve(port: int, latency_ms: float) -> None:
    """moto's S3 app on 127.0.0.1:``port``, every request held ``latency_ms`` first (threaded: delays overlap)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import run_simple

    app = DomainDispatcherApplication(create_backend_app)

    def delayed(environ: Any, start_response: Any) -> Any:
        time.sleep(latency_ms / 1000)
        return app(environ, start_response)

    run_simple("127.0.0.1", port, delayed, threaded=True, use_reloader=False)


def _server(latency_ms: float) -> tuple[subprocess.Popen, Any]:
    import pyarrow.fs as pafs

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_object_store", "--serve", str(port),
                               "--latency-ms", str(latency_ms)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"moto server on port {port} did not start")
        time.sleep(0.1)
    fs = pafs.S3FileSystem(endpoint_override=f"127.0.0.1:{port}", scheme="http", access_key="bench",
                           secret_key="bench", region="us-east-1", allow_bucket_creation=True)
    fs.create_dir("bench")
    return server, fs


def _stage(fs: Any, tx: Any, partitions: int, tag: str) -> dict[str, str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    staging, files = tx.begin(), {}
    table = pa.table({"k": list(range(100)), "tag": [tag] * 100})
    for p in range(partitions):
        for b in range(BUCKETS):
            staged = posixpath.join(staging, f"p{p}-{b}.parquet")
            pq.write_table(table, staged, filesystem=fs)
            files[f"p={p}/{b:06d}_0_{tx.write_id}.parquet"] = staged
    return files


def _case(fs: Any, root: str, mode: str, partitions: int) -> list[BenchResult]:
    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    import bucketkit.io as bio
    from bucketkit.layout.metadata import TableSpec
    from bucketkit.writing.commit import Transaction

    spec = TableSpec(("k",), ("bigint",), BUCKETS, partitioned_by=("p",), partition_types=("string",),
                     columns=(("k", "bigint"), ("tag", "string")), file_format="parquet")
    default, rounds = bio.REQUEST_THREADS, iter(range(10**6))
    one = mode == "overwrite of one partition"
    copies = partitions * BUCKETS  # staged files placed, plus (one partition) the other partitions' files kept
    times: dict[str, list[float]] = {"sequential": [], "parallel": [], "floor": []}

    def commit(name: str, threads: int) -> Any:
        table = f"{root}/{name}"

        def run() -> None:  # staging is not timed: commit() alone is
            if one and fs.get_file_info(table).type == pafs.FileType.NotFound:
                first = Transaction(table, spec, mode="overwrite", filesystem=fs, layout="inside", grace=0)
                first.commit(_stage(fs, first, partitions, "base"))
            tx = Transaction(table, spec, mode="overwrite", filesystem=fs, layout="inside", grace=0)
            files = _stage(fs, tx, 1 if one else partitions, str(next(rounds)))
            bio.REQUEST_THREADS = threads
            try:
                start = time.perf_counter()
                tx.commit(files, replace=["p=0"] if one else None)
                times[name].append(time.perf_counter() - start)
            finally:
                bio.REQUEST_THREADS = default
        return run

    def floor() -> None:  # pyarrow's own threaded copy of as many objects of the same size
        source = f"{root}/floor-source"
        if fs.get_file_info(source).type == pafs.FileType.NotFound:
            data = pa.table({"k": list(range(100)), "tag": ["x"] * 100})
            for i in range(copies):
                pq.write_table(data, f"{source}/{i}.parquet", filesystem=fs)
        start = time.perf_counter()
        pafs.copy_files(source, f"{root}/floor-{next(rounds)}", source_filesystem=fs, destination_filesystem=fs,
                        use_threads=True)
        times["floor"].append(time.perf_counter() - start)

    times_interleaved([commit("sequential", 1), commit("parallel", default), floor], repeat=3, warmup=1)
    best = {name: min(values[1:]) for name, values in times.items()}  # the warm-up round's dropped
    what = f"{mode} of a table of {partitions} partition(s) x {BUCKETS} buckets: {copies} files copied" + (
        f" ({copies - BUCKETS} kept)" if one else "")
    return [BenchResult(f"{what}, {default} requests in flight", best["parallel"], best["sequential"],
                        "the same commit, one request after the other",
                        extra={"files": copies, "pyarrow_copy_files_s": round(best["floor"], 3),
                               "over_pyarrow_copy_files": round(best["parallel"] / best["floor"], 2)})]


def run(scale: float = 1.0, latencies: tuple[float, ...] = (0.0, 20.0)) -> list[BenchResult]:
    results = []
    for latency in latencies:
        server, fs = _server(latency)
        try:
            for partitions in sorted({1, max(1, round(4 * scale))}):
                for mode in ("overwrite", "overwrite of one partition"):
                    for r in _case(fs, f"bench/{mode}-{partitions}-{latency:g}", mode, partitions):
                        r.name += f", {latency:g} ms a request"
                        r.extra["peak_rss_mb"] = round(peak_rss_mb(), 1)
                        results.append(r)
        finally:
            server.terminate()
            server.wait()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="partitions: 4 x scale (and 1)")
    parser.add_argument("--latency-ms", type=float, action="append", help="delay per request (repeatable)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve, (args.latency_ms or [0.0])[0])
        return
    results = run(args.scale, tuple(args.latency_ms or (0.0, 20.0)))
    print_results(results)
    for r in results:
        print(f"- {r.name}: " + ", ".join(f"{k}={v}" for k, v in r.extra.items()))


if __name__ == "__main__":
    main()
