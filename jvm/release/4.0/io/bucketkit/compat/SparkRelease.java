package io.bucketkit.compat;

import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScan;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The calls whose signatures differ between Spark releases, in Spark 4.0 ({@link SparkCompat} holds the rest).
 * {@code bucketkit/jvmbuild.py} compiles {@code jvm/src} with the newest {@code jvm/release/<x.y>}
 * not newer than the targeted pyspark.
 */
public final class SparkRelease {
  private SparkRelease() {}

  /** Spark's own Parquet scan of {@code readData} + {@code readPartition}, with {@code filters} pushed. */
  static ParquetScan parquetScan(SparkSession spark, org.apache.hadoop.conf.Configuration conf,
                                 PartitioningAwareFileIndex noFiles, StructType dataSchema, StructType readData,
                                 StructType readPartition, Filter[] filters, CaseInsensitiveStringMap options,
                                 scala.collection.immutable.Seq<Expression> none) {
    return new ParquetScan(spark, conf, noFiles, dataSchema, readData, readPartition, filters, options,
        scala.Option.empty(), none, none);
  }

  /** A table's storage format placed at {@code location} (a partition's), every other field as it was. */
  public static CatalogStorageFormat storageAt(CatalogStorageFormat storage, java.net.URI location) {
    return storage.copy(scala.Option.apply(location), storage.inputFormat(), storage.outputFormat(), storage.serde(),
        storage.compressed(), storage.properties());
  }

  /** {@code storage} with other properties. */
  static CatalogStorageFormat storageWith(CatalogStorageFormat storage,
                                           scala.collection.immutable.Map<String, String> properties) {
    return storage.copy(storage.locationUri(), storage.inputFormat(), storage.outputFormat(), storage.serde(),
        storage.compressed(), properties);
  }

  /** {@code t} with another schema, bucket spec and properties, every other field as it was. */
  static CatalogTable reshaped(CatalogTable t, StructType schema,
                               scala.Option<org.apache.spark.sql.catalyst.catalog.BucketSpec> spec,
                               scala.collection.immutable.Map<String, String> properties) {
    return t.copy(t.copy$default$1(), t.copy$default$2(), t.copy$default$3(), schema, t.copy$default$5(),
        t.copy$default$6(), spec, t.copy$default$8(), t.copy$default$9(),
        t.copy$default$10(), t.copy$default$11(), properties, t.copy$default$13(), t.copy$default$14(),
        t.copy$default$15(), t.copy$default$16(), t.copy$default$17(), t.copy$default$18(),
        t.copy$default$19(), t.copy$default$20(), t.copy$default$21());
  }

  /** {@code t} under another name with another storage, every other field as it was. */
  static CatalogTable renamed(CatalogTable t, org.apache.spark.sql.catalyst.TableIdentifier id,
                              CatalogStorageFormat storage) {
    return renamed(t, id, t.tableType(), storage);
  }

  /** {@code t} under another name, of another type (managed, external), with another storage; every other field as it was. */
  static CatalogTable renamed(CatalogTable t, org.apache.spark.sql.catalyst.TableIdentifier id,
                              org.apache.spark.sql.catalyst.catalog.CatalogTableType type, CatalogStorageFormat storage) {
    return t.copy(id, type, storage, t.copy$default$4(), t.copy$default$5(), t.copy$default$6(),
        t.copy$default$7(), t.copy$default$8(), t.copy$default$9(), t.copy$default$10(), t.copy$default$11(),
        t.copy$default$12(), t.copy$default$13(), t.copy$default$14(), t.copy$default$15(), t.copy$default$16(),
        t.copy$default$17(), t.copy$default$18(), t.copy$default$19(), t.copy$default$20(), t.copy$default$21());
  }

  /** {@code exec} reading {@code scan} instead, reporting no ordering and no key-grouped partitioning. */
  static BatchScanExec batchScan(BatchScanExec exec, Scan scan) {
    return new BatchScanExec(exec.output(), scan, exec.runtimeFilters(), scala.Option.empty(), exec.table(),
        new org.apache.spark.sql.execution.datasources.v2.StoragePartitionJoinParams(scala.Option.empty(),
        scala.Option.empty(), scala.Option.empty(), scala.Option.empty(), false, false));
  }

  /**
   * The metadata of an external Hive table at {@code location}, made up for a directory bucketkit wrote
   * ({@link io.bucketkit.spark.BucketDirectory}).
   */
  public static CatalogTable directoryTable(org.apache.spark.sql.catalyst.TableIdentifier id, java.net.URI location, String serde,
                                     StructType schema, scala.collection.immutable.Seq<String> partitionColumns,
                                     org.apache.spark.sql.catalyst.catalog.BucketSpec spec,
                                     scala.collection.immutable.Map<String, String> properties) {
    org.apache.spark.sql.catalyst.catalog.CatalogTable$ T = org.apache.spark.sql.catalyst.catalog.CatalogTable$.MODULE$;
    CatalogStorageFormat storage = new CatalogStorageFormat(scala.Option.apply(location), scala.Option.empty(),
        scala.Option.empty(), scala.Option.apply(serde), false, scala.collection.immutable.Map$.MODULE$.empty());
    return T.apply(id, org.apache.spark.sql.catalyst.catalog.CatalogTableType$.MODULE$.EXTERNAL(), storage, schema,
        scala.Option.apply("hive"), partitionColumns, scala.Option.apply(spec), T.apply$default$8(), T.apply$default$9(),
        T.apply$default$10(), T.apply$default$11(), properties, T.apply$default$13(), T.apply$default$14(), T.apply$default$15(), T.apply$default$16(), T.apply$default$17(), T.apply$default$18(), T.apply$default$19(), T.apply$default$20(), T.apply$default$21());
  }

  /** The table an {@code INSERT INTO t REPLACE WHERE cond} writes, as parsed, or null: until Spark 4.2 it parses to an
   * {@code OverwriteByExpression}, as {@code writeTo(t).overwrite(cond)} does ({@link SparkCompat#replaceWhereTarget}). */
  static LogicalPlan replaceWhereTable(LogicalPlan plan) {
    return null;
  }
}
