"""A plain SparkSession (nothing of bucketkit's configured) driving bucketkit.write, scan and join; run by
tests/test_plain_session.py in a process of its own, which reads the JSON report written to argv[1]."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import warnings

os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402


def main(out: str) -> None:
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "4")
             # Python workers capped as a platform may cap them: too little room for a join task, so
             # bucketkit.join joins the buckets in the JVM (issue 22's case), here without bucketkit's catalog
             .config("spark.executor.pyspark.memory", "500m")
             .config("spark.sql.warehouse.dir", os.path.join(out, "warehouse"))
             .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={out}").enableHiveSupport().getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    import bucketkit
    from bucketkit.spark.driver import jar_class

    report = {"before": spark._jvm.io.bucketkit.hashing.HiveBucketColumn.__class__.__name__ == "JavaClass"}
    base = tempfile.mkdtemp(dir=out)
    df = spark.range(20000).select((F.col("id") * 3).alias("k"), F.col("id").cast("string").alias("s"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report["after"] = jar_class(spark, "hashing.HiveBucketColumn") is not None
        bucketkit.write(df, "k", 8, path=f"{base}/t")
        executions = spark._jsparkSession.sharedState().statusStore().executionsList()
        report["write_plans"] = [executions.apply(i).physicalPlanDescription() for i in range(executions.size())]
        bucketkit.write(df.withColumn("s", F.upper("s")), "k", 8, path=f"{base}/u")
        report["warnings"] = [str(w.message) for w in caught if "bucketkit" in str(w.message)]
    from bucketkit.spark.hashcol import bucket_id_column

    # the bucket id write routes rows by: bucketkit's JVM hash (HiveBucketColumn.KeyHash prints hive_v2_hash)
    report["write_hash"] = str(df.select(bucket_id_column(["k"], ["bigint"], 2, 8, spark=spark))._jdf.queryExecution().analyzed().toString())
    lookup = bucketkit.scan(spark, f"{base}/t", filters=[("k", "=", 300)])
    # nothing above asked for a table: the jar's first use must not have started the Hive client (its Derby
    # metastore, created under derby.system.home at its first connection)
    report["metastore_started"] = os.path.exists(os.path.join(out, "metastore_db"))
    report["lookup_checked"] = "FileBucketCheck" in lookup._jdf.queryExecution().executedPlan().toString()
    report["lookup_rows"] = sorted(map(tuple, lookup.collect()))
    report["spark_rows"] = sorted(map(tuple, spark.read.orc(f"{base}/t").where("k = 300").collect()))
    report["explain"] = bucketkit.plan_scan(f"{base}/t", [("k", "=", 300)]).explain()

    raw, lying = f"{base}/raw", f"{base}/lying"
    spark.range(400).selectExpr("CAST(id AS INT) AS k").repartition(4).write.orc(raw)
    os.mkdir(lying)
    for i, name in enumerate(sorted(p for p in os.listdir(raw) if p.startswith("part-"))):
        os.rename(f"{raw}/{name}", f"{lying}/{i:06d}_0")
    opts = dict(bucketed_by="k", bucket_count=4, bucketing_version=2, table_columns={"k": "int"})
    key = next(k for k in range(400) if bucketkit.plan_scan(path=lying, filters=[("k", "=", k)], **opts)
               .selected_buckets == {0})

    def lying_read(slot: str) -> None:
        try:
            report[slot] = str(bucketkit.scan(spark, path=lying, filters=[("k", "=", key)], **opts).collect())
        except Exception as exc:  # noqa: BLE001 - the task's error, wrapped by Spark
            report[slot] = next((ln for ln in str(exc).splitlines() if "bucketkit: " in ln), str(exc)[:500])

    lying_read("lying_main")
    other = threading.Thread(target=lying_read, args=("lying_thread",))
    other.start()
    other.join()
    report["lying_checked"] = "FileBucketCheck" in bucketkit.scan(
        spark, path=lying, filters=[("k", "=", key)], **opts)._jdf.queryExecution().executedPlan().toString()

    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    report["join_strategy"] = bucketkit.plan_join(f"{base}/t", f"{base}/u", "k", spark=spark).strategy
    joined = bucketkit.join(spark, f"{base}/t", f"{base}/u", "k")
    report["join_exchange"] = "Exchange" in joined._jdf.queryExecution().executedPlan().toString()
    report["join_rows"] = joined.count()
    report["join_spark_rows"] = spark.read.orc(f"{base}/t").join(spark.read.orc(f"{base}/u"), "k").count()
    # sides of different sizes: a scan grouping its buckets by its own size (here 8 and 2 tasks) would not match
    # the other's in a session that does not reduce groupings (Spark's default), and the join would shuffle both
    bucketkit.write(df.where("k % 10 = 0"), "k", 8, path=f"{base}/v")
    spark.conf.set("spark.bucketkit.groupBuckets.bytesPerTask", "8k")
    sized = bucketkit.join(spark, f"{base}/t", f"{base}/v", "k")
    report["sized_exchange"] = "Exchange" in sized._jdf.queryExecution().executedPlan().toString()
    report["sized_rows"] = sized.count()
    report["sized_spark_rows"] = spark.read.orc(f"{base}/t").join(spark.read.orc(f"{base}/v"), "k").count()
    spark.conf.unset("spark.bucketkit.groupBuckets.bytesPerTask")
    bucketkit.write(df, "k", 16, path=f"{base}/w")  # 8 x 16 buckets: Spark reduces 16 to 8 only when told to
    counts = bucketkit.plan_join(f"{base}/t", f"{base}/w", "k", spark=spark)
    report["counts_strategy"], report["counts_reason"] = counts.strategy, counts.reason
    report["counts_rows"] = bucketkit.join(spark, f"{base}/t", f"{base}/w", "k").count()
    # Spark's own Hive writer in a session without bucketkit's extensions (its guard refuses this write there):
    # where it places a VARCHAR key's rows (the test reads the files; it used to run in the suite's own session)
    spark.sql("CREATE TABLE spark_varchar (k VARCHAR(10), rid INT) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC")
    spark.createDataFrame([(v, i) for i, v in enumerate(["", "abc", "h\u00e9llo", "x" * 10, *(f"v{i}" for i in range(40))])],
                          "k STRING, rid INT").createOrReplaceTempView("spark_varchar_src")
    spark.sql("INSERT INTO spark_varchar SELECT * FROM spark_varchar_src")
    report["varchar_location"] = spark.sql("DESCRIBE FORMATTED spark_varchar").where(
        "col_name = 'Location'").collect()[0].data_type.removeprefix("file:")
    # and a CHAR key's (padded by Spark before it hashes)
    spark.sql("CREATE TABLE spark_char (k CHAR(6), rid INT) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC")
    spark.sql("INSERT INTO spark_char SELECT * FROM spark_varchar_src WHERE length(k) <= 6")
    report["char_location"] = spark.sql("DESCRIBE FORMATTED spark_char").where(
        "col_name = 'Location'").collect()[0].data_type.removeprefix("file:")
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, default=str)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
