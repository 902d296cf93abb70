package io.bucketkit.spark;

import java.util.List;
import java.util.Locale;

import io.bucketkit.compat.SparkRelease;
import io.bucketkit.table.HiveBucketedTable;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.BucketSpec;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A directory bucketkit wrote (no metastore entry) read in the JVM as the catalog reads a table: a
 * {@link HiveBucketedTable} whose scans report its bucketing, so Spark joins two such directories, or
 * one with a catalog table, bucket by bucket without an {@code Exchange}. {@code bucketkit.join} runs
 * its join here when a bucket group cannot be joined in a Python worker's memory
 * ({@code bucketkit/spark/join.py}). The table's metadata is made up from bucketkit's record (the
 * caller passes it); the relation's catalog, whose functions bind the bucket transform, is the
 * session's where it is bucketkit's, else {@link BucketFunctions} (a session the user built).
 */
public final class BucketDirectory {
  private BucketDirectory() {}

  /**
   * The rows of the table whose files are in {@code directory} (its own or a kept version's), read bucketed.
   *
   * @param name the table's name in plans and messages
   * @param schemaJson the table's columns, data then partition columns (Spark's JSON of a StructType)
   * @throws IllegalArgumentException the metadata names a bucketing bucketkit cannot vouch for (the reason)
   */
  public static Dataset<Row> read(SparkSession spark, String directory, String name, String schemaJson,
                                  List<String> partitionColumns, String bucketColumn, int buckets, int version,
                                  String format) throws java.io.IOException {
    StructType schema = (StructType) DataType.fromJson(schemaJson);
    String serde = format.toLowerCase(Locale.ROOT).equals("parquet")
        ? "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe" : "org.apache.hadoop.hive.ql.io.orc.OrcSerde";
    CatalogTable t = SparkRelease.directoryTable(new TableIdentifier(name),
        new org.apache.hadoop.fs.Path(directory).toUri(), serde, schema,
        CollectionConverters.asScala(partitionColumns).toSeq(),
        new BucketSpec(buckets, CollectionConverters.asScala(List.of(bucketColumn)).toSeq(),
            CollectionConverters.asScala(List.<String>of()).toSeq()),
        scala.collection.immutable.Map$.MODULE$.<String, String>empty().updated("bucketing_version",
            Integer.toString(version)));
    HiveBucketedTable.Vouched judged = HiveBucketedTable.judged(spark, t);
    if (judged.table() == null) {
      throw new IllegalArgumentException("bucketkit: " + name + " cannot be read bucketed in the JVM: " + judged.doubt());
    }
    HiveBucketedTable table = judged.table();
    table.directory = directory;
    Identifier ident = Identifier.of(new String[0], name);
    CatalogPlugin catalog = spark.sessionState().catalogManager().v2SessionCatalog();
    if (!(catalog instanceof BucketkitCatalog)) {  // a session the user built: Hive's bucket functions bind
      catalog = new BucketFunctions(ident, table);
    }
    return Dataset.ofRows(spark, DataSourceV2Relation.create(table, scala.Option.apply(catalog),
        scala.Option.apply(ident)));
  }
}
