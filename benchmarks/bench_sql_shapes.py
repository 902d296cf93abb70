"""Queries that do not use the bucketing, through bucketkit's catalog vs Spark's own plan (issue 26).

Turning the catalog on must make no query slower. Each query runs as SQL with the catalog on and with
it off (``spark.bucketkit.catalog.enabled=false``: Spark's own plan over the same files), interleaved,
rows checked equal first. The figure is the median of 15 interleaved runs for queries under a second (5
above); the notes give the best-of ratio too. On 2 shared cores a 100 ms query varies by 10-20% from run
to run, and best-of picks each side's luckiest run: two runs of unchanged code gave 0.87-1.00x and
1.12-1.17x at 1M rows by best-of, while their medians stay within a few percent. Tables (ORC, Hive bucketing v2, written once by bucketkit.write
under ``benchmarks/.data``):

    t:    k bigint (uniform in [0, n/4)), v int (id % 100000), s string; n rows, 64 buckets (8, 64, 256 at 8M)
    fact: the same rows partitioned by d (30 values) and bucketed into 16; dim: 4 rows per d (DPP); fact
          filtered to one d (static partition pruning)
    star: t (64 buckets) joined with a plain (unbucketed) table of n/2 rows on k, no broadcast
    star, INT fact: the same rows with k INT (64 buckets) joined with that BIGINT-keyed plain table
    skewed star (8M): t's rows with one key holding 10% of them (64 buckets), joined with the plain table
    Python API star: bucketkit.join(spark, t, plain DataFrame, "k") vs the same join in Spark SQL, catalog off
    keys: 6 keys of t, 3 named 'pick': t joined with it on k, filtered, broadcast (runtime bucket pruning)
    many: 600 partitions x 4 buckets (2.4M rows), filtered to one partition, and to one partition and key;
          3 of its partitions joined to themselves on the key
    first INSERT: a session's first INSERT OVERWRITE of 100k and 500k rows, a fresh driver per run

at several sizes (``--scale`` multiplies them): small tables matter as much as large ones. Also the
cost of checking a ``SORTED BY`` table's order (:func:`sort_check`) and every row's bucket while reading.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from benchmarks.common import (CATALOG_SWITCH, BenchResult, bench_session, catalog_rows, data_dir, print_results,
                               scaled, times_interleaved, with_spark_memory)

SIZES = (1_000_000, 8_000_000, 20_000_000)
BUCKET_COUNTS = {8_000_000: (8, 64, 256)}  # other sizes: 64 buckets
SHAPES = {
    "count(*)": "SELECT count(*) FROM {t}",
    "WHERE v = 123": "SELECT * FROM {t} WHERE v = 123",
    "count, max WHERE v < 1000": "SELECT count(*), max(s) FROM {t} WHERE v < 1000",
    "count DISTINCT substr": "SELECT count(DISTINCT substr(s, 1, 3)) FROM {t}",
    "ORDER BY v LIMIT 5": "SELECT k, v, s FROM {t} ORDER BY v DESC, k LIMIT 5",
    "GROUP BY k": "SELECT count(*), sum(n) FROM (SELECT k, count(*) AS n FROM {t} GROUP BY k)",
    "WHERE k = v": "SELECT * FROM {t} WHERE k = 4242",
    # a window over a non-bucket column: Spark plans row_number() <= 2 as a top-n under the window
    "row_number() OVER (ORDER BY v) top 2":
        "SELECT * FROM (SELECT k, v, row_number() OVER (ORDER BY v, k) AS rn FROM {t}) WHERE rn <= 2",
    "range on the bucket key": "SELECT count(*), max(s) FROM {t} WHERE k BETWEEN 1000 AND 60000",
}


def _rows(spark: Any, n: int) -> Any:
    return spark.range(n).selectExpr(
        f"CAST(hash(id, 7) % {max(1, n // 4)} AS BIGINT) AS k", "CAST(id % 100000 AS INT) AS v",
        "concat('s', CAST(hash(id) % 5000 AS STRING)) AS s", "CAST(id % 30 AS INT) AS d")


def _table(spark: Any, name: str, path: str, columns: str, buckets: int | None, partitioned: bool = False) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    bucketing = f"CLUSTERED BY (k) INTO {buckets} BUCKETS " if buckets else ""
    spark.sql(f"CREATE EXTERNAL TABLE {name} ({columns}) {'PARTITIONED BY (d INT) ' if partitioned else ''}"
              f"{bucketing}STORED AS ORC LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='2')")
    if partitioned:
        spark.sql(f"MSCK REPAIR TABLE {name}")


def prepare(spark: Any, n: int, counts: tuple[int, ...]) -> dict[Any, str]:
    """Write the tables of one size once (later runs reuse them) and register them."""
    import bucketkit

    root = data_dir(f"sql-shapes-{n}-{'-'.join(map(str, counts))}")
    paths = {b: str(root / f"t{b}") for b in counts}
    paths.update(fact=str(root / "fact"), dim=str(root / "dim"), plain=str(root / "plain"))
    if not (root / "READY").exists():
        rows = _rows(spark, n).cache()
        for b in counts:
            bucketkit.write(rows.drop("d"), "k", b, path=paths[b], mode="overwrite")
        bucketkit.write(rows, "k", 16, path=paths["fact"], partitioned_by="d", mode="overwrite")
        rows.unpersist()
        spark.range(120).selectExpr("CAST(id % 30 AS INT) AS d", "CAST(id AS INT) AS dk",
                                    "IF(id = 7, 'pick', 'other') AS name").write.mode("overwrite").orc(paths["dim"])
        _rows(spark, n // 2).selectExpr("k", "v AS w").write.mode("overwrite").orc(paths["plain"])
        (root / "READY").write_text(str(n))
    paths["int"] = str(root / "tint")
    if not (root / "READY-int").exists():  # the INT-keyed fact, added later: written on its own
        bucketkit.write(_rows(spark, n).selectExpr("CAST(k AS INT) AS k", "v", "s"), "k", 64, path=paths["int"],
                        mode="overwrite")
        (root / "READY-int").write_text(str(n))
    names = {b: f"bench_shapes_t{b}_{n}" for b in counts}
    for b in counts:
        _table(spark, names[b], paths[b], "k BIGINT, v INT, s STRING", b)
    names.update(fact=f"bench_shapes_fact_{n}", dim=f"bench_shapes_dim_{n}", plain=f"bench_shapes_plain_{n}")
    _table(spark, names["fact"], paths["fact"], "k BIGINT, v INT, s STRING", 16, partitioned=True)
    _table(spark, names["dim"], paths["dim"], "d INT, dk INT, name STRING", None)
    _table(spark, names["plain"], paths["plain"], "k BIGINT, w INT", None)
    names["int"] = f"bench_shapes_tint_{n}"
    _table(spark, names["int"], paths["int"], "k INT, v INT, s STRING", 64)
    return names


def skewed(spark: Any, n: int) -> str:
    """t's rows with key 42 on every tenth row (10% of the rows in one bucket), 64 buckets, written once."""
    import bucketkit

    root = data_dir(f"sql-shapes-skew-{n}")
    if not (root / "READY").exists():
        bucketkit.write(_rows(spark, n).selectExpr("IF(hash(v, 3) % 10 = 0, CAST(42 AS BIGINT), k) AS k", "v", "s"),
                        "k", 64, path=str(root / "t"), mode="overwrite")
        (root / "READY").write_text(str(n))
    name = f"bench_shapes_skew_{n}"
    _table(spark, name, str(root / "t"), "k BIGINT, v INT, s STRING", 64)
    return name


def _python_star(spark: Any, fact: str, plain: str, n: int) -> BenchResult:
    """bucketkit.join of the bucketed table with a plain DataFrame (only the DataFrame moves) vs Spark's SQL join."""
    import bucketkit

    def ours() -> list:
        return bucketkit.join(spark, fact, spark.table(plain), "k", columns=[("right", "w")]) \
            .selectExpr("count(*)", "sum(w)").collect()

    def theirs() -> list:
        return catalog_rows(spark, f"SELECT count(*), sum(p.w) FROM {fact} f JOIN {plain} p ON f.k = p.k", False)

    assert [tuple(r) for r in ours()] == [tuple(r) for r in theirs()]
    return _medians(f"bucketkit.join, table x plain DataFrame ({n:,} x {n // 2:,} rows, 64 buckets)", ours, theirs, 5,
                    "Spark's own plan (catalog off), same files",
                    f"{n:,} x {n // 2:,} rows, Python API, only the DataFrame moves, 2 cores", n)


def _keys(spark: Any, n: int) -> str:
    """A plain 6-row table of keys of the n-row tables, 3 of them named 'pick' (runtime bucket pruning)."""
    name, path = f"bench_shapes_keys_{n}", str(data_dir(f"sql-shapes-keys-{n}") / "keys")
    spark.range(6).selectExpr(f"CAST(id * {max(1, n // 24)} + 7 AS BIGINT) AS k",
                              "IF(id % 2 = 0, 'pick', 'other') AS name").write.mode("overwrite").orc(path)
    _table(spark, name, path, "k BIGINT, name STRING", None)
    return name


def _repeats(seconds: float) -> int:
    """15 interleaved runs of a query under a second, 5 of longer ones (their noise is a smaller share)."""
    return 15 if seconds < 1.0 else 5


def _medians(name: str, ours: Any, theirs: Any, runs: int, baseline: str, notes: str, n: int,
             goal: float = 1.0) -> BenchResult:
    """``ours`` against ``theirs``, interleaved ``runs`` times: medians, and the best-of ratio in the notes."""
    t_ours, t_theirs = times_interleaved([ours, theirs], repeat=runs)
    best = min(t_ours) / min(t_theirs)
    return BenchResult(name, statistics.median(t_ours), statistics.median(t_theirs), baseline,
                       f"{notes}; median of {runs} interleaved runs, best-of ratio {best:.2f}x",
                       {"rows": n, "runs": runs, "best_ratio": round(best, 3)}, goal_ratio=goal)


def _compare(spark: Any, name: str, text: str, notes: str, n: int) -> BenchResult:
    start = time.perf_counter()
    ours = catalog_rows(spark, text, True)
    first = time.perf_counter() - start
    theirs = catalog_rows(spark, text, False)
    assert sorted(map(repr, ours)) == sorted(map(repr, theirs)), (text, ours[:5], theirs[:5])
    return _medians(name, lambda: catalog_rows(spark, text, True), lambda: catalog_rows(spark, text, False),
                    _repeats(first), "Spark's own plan (catalog off), same files", notes, n)


PARTS = 600


def many_partitions(spark: Any, scale: float) -> list[BenchResult]:
    """A table of 600 partitions x 4 buckets: a filter on the partition column reads one partition's
    files, and with the bucket key one bucket's; the catalog asks the metastore for the kept partitions
    as Spark does (listPartitionsByFilter), instead of listing all 600."""
    name, n, parts = _parts_table(spark, scale), scaled(2_400_000, scale), PARTS
    notes = f"{n:,} rows, {parts} partitions x 4 buckets, 2 cores"
    three = "IN (3, 4, 5)"
    return [_compare(spark, f"partition filter p = 3, {parts} partitions ({n:,} rows, 4 buckets)",
                     f"SELECT count(*), max(v) FROM {name} WHERE p = 3", notes, n),
            _compare(spark, f"partition and key p = 3 AND k = 12, {parts} partitions ({n:,} rows, 4 buckets)",
                     f"SELECT * FROM {name} WHERE p = 3 AND k = 12", notes, n),
            _compare(spark, f"self join of 3 of {parts} partitions on the key ({n:,} rows, 4 buckets)",
                     f"SELECT count(*), sum(a.v + b.v) FROM {name} a JOIN {name} b ON a.k = b.k AND a.p = b.p "
                     f"WHERE a.p {three} AND b.p {three}", notes, n)]


def _parts_table(spark: Any, scale: float) -> str:
    """The 600-partition table of :func:`many_partitions`, written once and registered: its name."""
    import bucketkit

    parts, n = PARTS, scaled(2_400_000, scale)
    root, name = data_dir(f"sql-shapes-parts-{n}"), f"bench_shapes_parts_{n}"
    if not (root / "READY").exists():
        bucketkit.write(spark.range(n).selectExpr(f"id % {n // 4} AS k", "CAST(id AS INT) AS v",
                                                  f"CAST(id % {parts} AS INT) AS p"),
                        "k", 4, path=str(root / "t"), partitioned_by="p", mode="overwrite")
        (root / "READY").write_text(str(n))
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE EXTERNAL TABLE {name} (k BIGINT, v INT) PARTITIONED BY (p INT) CLUSTERED BY (k) INTO 4 BUCKETS "
              f"STORED AS ORC LOCATION '{root / 't'}' TBLPROPERTIES ('bucketing_version'='2')")
    spark.conf.set(CATALOG_SWITCH, "false")
    try:
        spark.sql(f"MSCK REPAIR TABLE {name}")
    finally:
        spark.conf.unset(CATALOG_SWITCH)
    return name


FIRST_INSERT = """
import sys, time
from benchmarks.common import CATALOG_SWITCH, bench_session, data_dir
spark = bench_session(warehouse=str(data_dir("first-insert") / "warehouse"))  # its own Derby: the caller's is locked
if sys.argv[2] == "off":
    spark.conf.set(CATALOG_SWITCH, "false")
spark.sql("DROP TABLE IF EXISTS bench_first_insert")
spark.sql("CREATE TABLE bench_first_insert (k BIGINT, v INT, s STRING) CLUSTERED BY (k) INTO 64 BUCKETS "
          "STORED AS ORC TBLPROPERTIES ('bucketing_version'='1')")
spark.range(10).count()  # the session is up, as in a notebook before its first write
start = time.perf_counter()
spark.sql("INSERT OVERWRITE TABLE bench_first_insert SELECT id % 100000, CAST(id % 1000 AS INT), "
          f"CONCAT('s', CAST(id AS STRING)) FROM range({int(sys.argv[1])})")
print("SECONDS", time.perf_counter() - start)
"""


def first_insert(n: int, rounds: int = 3) -> BenchResult:
    """The first ``INSERT OVERWRITE`` of a session (a fresh driver each time, as a job or a dbt run starts): a v1
    table (Spark's own writer can write it), catalog on against off, interleaved, each in its own process."""
    import subprocess
    import sys

    from benchmarks.common import BENCH_ROOT

    def once(mode: str) -> float:
        out = subprocess.run([sys.executable, "-c", FIRST_INSERT, str(n), mode], cwd=BENCH_ROOT.parent.parent,
                             capture_output=True, text=True, check=True).stdout
        return float(next(line for line in out.splitlines() if line.startswith("SECONDS")).split()[1])

    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(once("on"))
        theirs.append(once("off"))
    return BenchResult(f"a session's first INSERT OVERWRITE ({n:,} rows, 64 buckets, v1)", statistics.median(ours),
                       statistics.median(theirs), "Spark's own Hive INSERT (catalog off), a fresh driver each",
                       f"median of {rounds} fresh drivers each, interleaved; best-of ratio "
                       f"{min(ours) / min(theirs):.2f}x", {"rows": n, "runs": rounds})


def sort_check(spark: Any, n: int) -> BenchResult:
    """The cost of checking a SORTED BY table's order while reading it (SortedReadCheck): GROUP BY k over a
    64-bucket table sorted by k, reading only k (the check is most of the per-row work), one task per bucket,
    with the order checked vs reported unchecked (spark.bucketkit.checkSortOrder=false): the same plan."""
    import bucketkit

    path = str(data_dir(f"sql-shapes-sorted-{n}") / "t")
    if not (data_dir(f"sql-shapes-sorted-{n}") / "READY").exists():
        src = spark.range(n).selectExpr(f"CAST(hash(id, 3) % {max(1, n // 4)} AS BIGINT) AS k",
                                        "CAST(id % 1000 AS INT) AS v")
        bucketkit.write(src, "k", 64, path=path, sorted_by="k", mode="overwrite")
        (data_dir(f"sql-shapes-sorted-{n}") / "READY").write_text(str(n))
    name = f"bench_shapes_sorted_{n}"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE EXTERNAL TABLE {name} (k BIGINT, v INT) CLUSTERED BY (k) SORTED BY (k) INTO 64 BUCKETS "
              f"STORED AS ORC LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='2')")
    return _check_cost(spark, f"SORTED BY order checked while read ({n:,} rows, 64 buckets)", name,
                       "spark.bucketkit.checkSortOrder", "same query, order reported unchecked", n)


def _check_cost(spark: Any, label: str, table: str, setting: str, baseline: str, n: int) -> BenchResult:
    """``GROUP BY k`` over ``table`` reading only ``k``, one task per bucket, with ``setting`` true vs false."""
    text = f"SELECT count(*), sum(c) FROM (SELECT k, count(*) AS c FROM {table} GROUP BY k)"

    def query(value: str) -> list:
        spark.conf.set(setting, value)
        spark.conf.set("spark.bucketkit.groupBuckets", "false")
        try:
            return spark.sql(text).collect()
        finally:
            spark.conf.unset(setting)
            spark.conf.unset("spark.bucketkit.groupBuckets")

    return _medians(label, lambda: query("true"), lambda: query("false"), 9, baseline, "GROUP BY k reading only k",
                    n, goal=1.05)


MULTI_SHAPES = {
    "WHERE on both bucket columns": "SELECT * FROM {t} WHERE k = {k} AND v = {v}",
    "WHERE k IN (3 keys) AND v = x": "SELECT * FROM {t} WHERE k IN ({k}, {k2}, {k3}) AND v = {v}",
    "GROUP BY both bucket columns": "SELECT count(*), sum(n) FROM (SELECT k, v, count(*) AS n FROM {t} GROUP BY k, v)",
    "WHERE on one bucket column": "SELECT count(*), max(s) FROM {t} WHERE k = {k}",
    "self join on both bucket columns":
        "SELECT count(*), max(b.s) FROM {t} a JOIN {t} b ON a.k = b.k AND a.v = b.v WHERE a.s < 's3'",
    "join of 64 and 32 buckets on both columns":
        "SELECT count(*), max(b.s) FROM {t} a JOIN {t32} b ON a.k = b.k AND a.v = b.v WHERE a.s < 's3'",
}


def multi_column(spark: Any, scale: float) -> list[BenchResult]:
    """A table bucketed on (k, v), 64 buckets, v2: a WHERE pinning both columns reads their buckets only; a
    GROUP BY and a join on both run in buckets, keyed by _bucket_hash (rules.KeyBySeveralColumns), also with a
    copy of 32 buckets; a WHERE on one column reads every bucket. Broadcasts off: the join's sides are tables too
    big to broadcast."""
    import bucketkit

    results = []
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    for size in (1_000_000, 8_000_000):
        n = scaled(size, scale)
        root = data_dir(f"sql-shapes-multi-{n}")
        path = str(root / "t")
        if not (root / "READY32").exists():
            if not (root / "READY").exists():
                bucketkit.write(_rows(spark, n).drop("d"), ["k", "v"], 64, path=path, mode="overwrite")
                (root / "READY").write_text(str(n))
            bucketkit.write(_rows(spark, n).drop("d"), ["k", "v"], 32, path=str(root / "t32"), mode="overwrite")
            (root / "READY32").write_text(str(n))
        name = f"bench_shapes_multi_{n}"
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE EXTERNAL TABLE {name} (k BIGINT, v INT, s STRING) CLUSTERED BY (k, v) INTO 64 BUCKETS "
                  f"STORED AS ORC LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='2')")
        spark.sql(f"DROP TABLE IF EXISTS {name}_32")
        spark.sql(f"CREATE EXTERNAL TABLE {name}_32 (k BIGINT, v INT, s STRING) CLUSTERED BY (k, v) INTO 32 BUCKETS "
                  f"STORED AS ORC LOCATION '{root / 't32'}' TBLPROPERTIES ('bucketing_version'='2')")
        k, v = spark.sql(f"SELECT k, v FROM {name} LIMIT 1").collect()[0]
        keys = dict(t=name, t32=f"{name}_32", k=k, v=v, k2=k + 1, k3=k + 2)
        notes = f"{n:,} rows, ORC, v2, 64 buckets on (k, v), 2 cores"
        for shape, text in MULTI_SHAPES.items():
            results.append(_compare(spark, f"multi-column: {shape} ({n:,} rows, 64 buckets)", text.format(**keys),
                                    notes, n))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)
    return results


def run(scale: float = 1.0) -> list[BenchResult]:
    spark = bench_session()
    saved = {k: spark.conf.get(k) for k in ("spark.sql.autoBroadcastJoinThreshold",
                                            "spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly")}
    results, tables = [], {}
    try:
        for size in SIZES:
            n = scaled(size, scale)
            counts = BUCKET_COUNTS.get(size, (64,))
            t = tables[size] = prepare(spark, n, counts)
            for buckets in counts:
                notes = f"{n:,} rows, ORC, v2, {buckets} buckets, 2 cores"
                for shape, text in SHAPES.items():
                    results.append(_compare(spark, f"{shape} ({n:,} rows, {buckets} buckets)",
                                            text.format(t=t[buckets]), notes, n))
            # dynamic partition pruning: a small dimension filtered to one d, broadcast as Spark would
            spark.conf.set("spark.sql.autoBroadcastJoinThreshold", saved["spark.sql.autoBroadcastJoinThreshold"])
            spark.conf.set("spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly", "false")
            results.append(_compare(
                spark, f"DPP fact x dim ({n:,} rows, 30 partitions x 16 buckets)",
                f"SELECT count(*), max(f.s) FROM {t['fact']} f JOIN {t['dim']} d ON f.d = d.d WHERE d.name = 'pick'",
                f"{n:,} rows, 30 partitions x 16 buckets, 2 cores", n))
            # a static partition filter: only the kept partition is listed (Spark lists only it too)
            results.append(_compare(
                spark, f"partition filter d = 7 ({n:,} rows, 30 partitions x 16 buckets)",
                f"SELECT count(*), max(s) FROM {t['fact']} WHERE d = 7",
                f"{n:,} rows, 30 partitions x 16 buckets, 1 partition read, 2 cores", n))
            # beyond Spark: a runtime filter on the bucket column (a dimension of 3 keys, filtered, broadcast)
            # prunes the fact's buckets; Spark's own plan reads every file
            results.append(_compare(
                spark, f"runtime bucket pruning, 3 keys ({n:,} rows, 64 buckets)",
                f"SELECT count(*), max(f.s) FROM {t[64]} f JOIN {_keys(spark, n)} d ON f.k = d.k WHERE d.name = 'pick'",
                f"{n:,} rows, 64 buckets, a 6-row dimension filtered to 3 keys, 2 cores", n))
            # a star join with a plain table too big to broadcast: only the plain side shuffles
            spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
            results.append(_compare(
                spark, f"star join with a plain table ({n:,} x {n // 2:,} rows, 64 buckets)",
                f"SELECT count(*), sum(p.w) FROM {t[64]} f JOIN {t['plain']} p ON f.k = p.k",
                f"{n:,} x {n // 2:,} rows, 64 buckets vs plain, 2 cores", n))
            results.append(_python_star(spark, t[64], t["plain"], n))
            # the usual star join: an INT bucket column, a BIGINT dimension key (JoinInBucketType)
            results.append(_compare(
                spark, f"star join, INT fact x BIGINT plain ({n:,} x {n // 2:,} rows, 64 buckets)",
                f"SELECT count(*), sum(p.w) FROM {t['int']} f JOIN {t['plain']} p ON f.k = p.k",
                f"{n:,} x {n // 2:,} rows, 64 buckets (INT) vs plain (BIGINT), 2 cores", n))
            if size == 8_000_000:  # one key holds 10% of the fact's rows: its bucket is one task (2 cores)
                results.append(_compare(
                    spark, f"skewed star join, 10% on one key ({n:,} x {n // 2:,} rows, 64 buckets)",
                    f"SELECT count(*), sum(p.w) FROM {skewed(spark, n)} f JOIN {t['plain']} p ON f.k = p.k",
                    f"{n:,} x {n // 2:,} rows, 64 buckets vs plain, 10% of the fact on key 42, 2 cores", n))
            for k, v in saved.items():
                spark.conf.set(k, v)
        results.extend(many_partitions(spark, scale))
        results.extend(outer_joins(spark, scale))
        results.extend(multi_column(spark, scale))
        results.append(sort_check(spark, scaled(8_000_000, scale)))
        results.extend(first_insert(scaled(m, scale)) for m in (100_000, 500_000))
        n = scaled(8_000_000, scale)  # every row's bucket checked against its file's (BucketReadCheck)
        results.append(_check_cost(spark, f"rows' buckets checked while read ({n:,} rows, 64 buckets)",
                                   tables[8_000_000][64], "spark.bucketkit.checkBuckets",
                                   "same query, buckets not checked", n))
    finally:
        for k, v in saved.items():
            spark.conf.set(k, v)
    return with_spark_memory(spark, results)


OUTER_KEYS = {"40 x 14 rows per key": ("id % {a}", "id % {b}"), "unique keys": ("id", "id * 2")}


def outer_joins(spark: Any, scale: float) -> list[BenchResult]:
    """Two tables bucketed alike, joined FULL OUTER (sort-merge bucket by bucket: Spark's full outer hash join,
    tracking matched build rows, measured slower) and INNER (by hash, HashJoinBucketPairs), keys repeated or
    unique."""
    import bucketkit

    n = scaled(2_000_000, scale)
    root = data_dir(f"sql-outer-{n}")
    results = []
    saved = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        for label, (left, right) in OUTER_KEYS.items():
            names = []
            for side, key, rows in (("l", left, n), ("r", right, n // 2)):
                path, name = root / f"{label.split()[0]}-{side}", f"bench_outer_{label.split()[0]}_{side}_{n}"
                if not (path / "_READY").exists():
                    df = spark.range(rows).selectExpr(f"CAST({key.format(a=n // 40, b=n // 28)} AS BIGINT) AS k",
                                                      "CAST(id AS DOUBLE) AS w")
                    bucketkit.write(df, "k", 8, path=str(path), mode="overwrite")
                    (path / "_READY").write_text(str(rows))
                _table(spark, name, str(path), "k BIGINT, w DOUBLE", 8)
                names.append(name)
            for how in ("FULL OUTER", "INNER"):
                results.append(_compare(
                    spark, f"{how} JOIN of two bucketed tables, {label} ({n:,} x {n // 2:,} rows, 8 buckets)",
                    f"SELECT count(*), count(l.k), count(r.k) FROM {names[0]} l {how} JOIN {names[1]} r ON l.k = r.k",
                    f"{n:,} x {n // 2:,} rows, 8 buckets, {label}, 2 cores", n))
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", saved)
    return results


def _planned(spark: Any, text: str, catalog: bool) -> None:
    """Plan ``text`` to its executed plan (nothing run) with the catalog on or off."""
    spark.conf.set(CATALOG_SWITCH, str(catalog).lower())
    try:
        spark.sql(text)._jdf.queryExecution().executedPlan()
    finally:
        spark.conf.unset(CATALOG_SWITCH)


def planning(scale: float = 1.0) -> list[BenchResult]:
    """A query's planning alone (analysis to the executed plan, nothing run), catalog on against off: the catalog's
    per-query cost (loading the table, listing and vouching for its files) where queries are short. The DPP query
    over 30 partitions x 16 files, a point lookup in one partition, and the self join of 3 of 600 partitions."""
    spark = bench_session()
    n = scaled(8_000_000, scale)
    t = prepare(spark, n, (64,))
    parts = _parts_table(spark, scale)
    queries = {
        "DPP fact x dim, 30 partitions x 16 files":
            f"SELECT count(*), max(f.s) FROM {t['fact']} f JOIN {t['dim']} d ON f.d = d.d WHERE d.name = 'pick'",
        "partition filter d = 7, 30 partitions x 16 files": f"SELECT count(*), max(s) FROM {t['fact']} WHERE d = 7",
        "self join of 3 of 600 partitions": f"SELECT count(*), sum(a.v + b.v) FROM {parts} a JOIN {parts} b "
                                            f"ON a.k = b.k AND a.p = b.p WHERE a.p IN (3, 4, 5) AND b.p IN (3, 4, 5)",
    }
    spark.conf.set("spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly", "false")
    try:
        return [_medians(f"planning: {name}", lambda q=q: _planned(spark, q, True), lambda q=q: _planned(spark, q, False),
                         21, "Spark's own planning (catalog off)", "analysis to executed plan, nothing run, 2 cores", n)
                for name, q in queries.items()]
    finally:
        spark.conf.unset("spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly")


def issue_shapes(scale: float = 1.0) -> list[BenchResult]:
    """Only the shapes issue 47 named (8M rows, 64 buckets): the window top-2, the key range, dynamic partition
    pruning, the self join of 3 of 600 partitions, and a session's first INSERT at 100k and 500k rows."""
    spark = bench_session()
    n = scaled(8_000_000, scale)
    t = prepare(spark, n, (64,))
    notes = f"{n:,} rows, ORC, v2, 64 buckets, 2 cores"
    results = [_compare(spark, f"{shape} ({n:,} rows, 64 buckets)", SHAPES[shape].format(t=t[64]), notes, n)
               for shape in ("row_number() OVER (ORDER BY v) top 2", "range on the bucket key")]
    spark.conf.set("spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly", "false")  # as run() measures it
    try:
        results.append(_compare(
            spark, f"DPP fact x dim ({n:,} rows, 30 partitions x 16 buckets)",
            f"SELECT count(*), max(f.s) FROM {t['fact']} f JOIN {t['dim']} d ON f.d = d.d WHERE d.name = 'pick'",
            f"{n:,} rows, 30 partitions x 16 buckets, 2 cores", n))
    finally:
        spark.conf.unset("spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly")
    results.append(many_partitions(spark, scale)[-1])
    results.extend(first_insert(scaled(m, scale)) for m in (100_000, 500_000))
    return with_spark_memory(spark, results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the sizes (1M, 8M, 20M rows)")
    parser.add_argument("--issue-shapes", action="store_true", help="only the shapes issue 47 named")
    parser.add_argument("--planning", action="store_true", help="only the planning of three queries, catalog on vs off")
    parser.add_argument("--multi-column", action="store_true", help="only the table bucketed on two columns")
    parser.add_argument("--outer-joins", action="store_true", help="only full outer and inner joins of two tables")
    args = parser.parse_args()
    if args.outer_joins:
        print_results(with_spark_memory(bench_session(), outer_joins(bench_session(), args.scale)))
    elif args.multi_column:
        print_results(with_spark_memory(bench_session(), multi_column(bench_session(), args.scale)))
    elif args.planning:
        print_results(planning(args.scale))
    else:
        print_results(issue_shapes(args.scale) if args.issue_shapes else run(args.scale))
