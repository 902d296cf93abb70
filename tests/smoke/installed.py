"""Smoke run of an *installed* bucketkit (a wheel in a fresh virtualenv, no repository on sys.path).

Run by tests/test_wheel.py as ``<fresh venv python> installed.py <workdir>``; prints ``SMOKE OK``.
Checks what a pip user meets first: the session has the catalog, a SQL INSERT into a v1 and a v2
table places every row as Hive would (``validate``; for v1 also rows per bucket equal to Spark's own
Hive INSERT's), a join of two bucketed tables has no Exchange, ``write``/``scan``/``join`` of
directories, the ``bucketkit`` console script, and the ``bucketkit`` data source Spark finds by itself.
"""

import os
import subprocess
import sys
from pathlib import Path

work = Path(sys.argv[1])
import bucketkit  # noqa: E402

repo = Path(__file__).resolve().parents[2]
assert repo not in Path(bucketkit.__file__).resolve().parents, f"bucketkit imported from the repository: {bucketkit.__file__}"
assert all(Path(p or ".").resolve() != repo for p in sys.path), "the repository is on sys.path"

spark = bucketkit.get_session("smoke", warehouse=str(work / "warehouse"), shuffle_partitions=4,
                              conf={"spark.sql.autoBroadcastJoinThreshold": "-1"})  # a sort-merge join, as big tables get
assert spark.conf.get("spark.sql.catalog.spark_catalog") == "io.bucketkit.spark.BucketkitCatalog"
import pyspark  # noqa: E402

jar = [j for j in spark.conf.get("spark.jars").split(",") if "bucketkit-spark" in j]
assert jar and jar[0].endswith(f"bucketkit-spark-{'.'.join(pyspark.__version__.split('.')[:2])}.jar"), jar
spark.range(200).selectExpr("id AS k", "cast(id AS string) AS v").createOrReplaceTempView("src")
for version in (1, 2):
    spark.sql(f"CREATE TABLE t{version} (k bigint, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              f"TBLPROPERTIES ('bucketing_version'='{version}')")
    spark.sql(f"INSERT INTO t{version} SELECT * FROM src")
    result = bucketkit.validate(bucketkit.resolve_table(spark, f"t{version}"))
    assert result.ok and result.rows_checked == 200, result
    assert bucketkit.sql_status(spark, f"t{version}").bucketed
plan = spark.sql("SELECT * FROM t2 a JOIN t2 b ON a.k = b.k")
plan.collect()
text = plan._jdf.queryExecution().executedPlan().toString()
assert "Exchange" not in text, text
assert spark.sql("SELECT count(*) FROM t1 a JOIN t2 b ON a.k = b.k").first()[0] == 200

# the calls whose signatures differ between Spark releases (jvm/release/<x.y>/SparkRelease.java):
# a partitioned INSERT (a partition's storage), a Parquet read, a scan packed by size (a new
# BatchScanExec), a rebucket (the table's metadata copied with another bucket spec)
spark.sql("CREATE TABLE tp (k bigint, v string) PARTITIONED BY (d int) CLUSTERED BY (k) INTO 4 BUCKETS "
          "STORED AS PARQUET TBLPROPERTIES ('bucketing_version'='2')")
spark.sql("INSERT INTO tp PARTITION (d) SELECT k, v, CAST(k % 3 AS INT) AS d FROM src")
result = bucketkit.validate(bucketkit.resolve_table(spark, "tp"))
assert result.ok and result.rows_checked == 200, result
assert spark.sql("SELECT count(*), sum(k) FROM tp WHERE d = 1").first() == (67, sum(k for k in range(200) if k % 3 == 1))
packed = spark.sql("SELECT count(*) FROM t2")
assert packed.collect()[0][0] == 200  # collected: AQE's final plan, where the scan is packed
assert "packed by size" in packed._jdf.queryExecution().executedPlan().toString()
bucketkit.rebucket(spark, "t1", bucket_count=8, bucketing_version=2)
assert bucketkit.validate(bucketkit.resolve_table(spark, "t1")).ok
assert spark.sql("SELECT count(*) FROM t1 a JOIN t2 b ON a.k = b.k").first()[0] == 200

# the last-resort bucket id column (an Arrow UDF; a pandas UDF where pyspark has none), NULLs included
from bucketkit.hashing.hive import BucketFunction  # noqa: E402
from bucketkit.spark.hashcol import arrow_bucket_id_column  # noqa: E402

keys = spark.createDataFrame([(k, f"s{k}") for k in range(-50, 50)] + [(None, None)], "k bigint, s string")
function = BucketFunction(2, ("bigint", "string"), 7)
got = keys.select("k", "s", arrow_bucket_id_column(["k", "s"], function).alias("b")).collect()
assert all(r["b"] == function.bucket_of([r["k"], r["s"]]) for r in got) and len(got) == 101, got[:3]

df = spark.range(100).selectExpr("id AS k", "id * 2 AS v")
bucketkit.write(df, "k", 4, path=str(work / "left"))
bucketkit.write(df, "k", 4, path=str(work / "right"))
assert bucketkit.scan(spark, path=str(work / "left"), filters="k = 7").collect()[0]["v"] == 14
assert bucketkit.join(spark, str(work / "left"), str(work / "right"), on="k").count() == 100
assert spark.read.format("bucketkit").load(str(work / "left")).count() == 100
spark.stop()

script = Path(sys.executable).with_name("bucketkit")
out = subprocess.run([str(script), "inspect", str(work / "left")], capture_output=True, text=True, env=os.environ)
assert out.returncode == 0 and "4 buckets" in out.stdout, out.stdout + out.stderr
import pyspark  # noqa: E402

print(f"SMOKE OK on pyspark {'.'.join(pyspark.__version__.split('.')[:2])}.")
