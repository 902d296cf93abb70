package io.bucketkit.spark;

import java.util.Arrays;

import io.bucketkit.compat.SparkCompat;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.BucketSpec;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.classic.SparkSession;

import scala.jdk.javaapi.CollectionConverters;

/**
 * Metastore edits Spark SQL has no statement for: a Hive table's {@code CLUSTERED BY ... INTO n
 * BUCKETS} and {@code bucketing_version}, changed by {@code bucketkit.rebucket} once the table's files
 * have been rewritten in the new layout (Spark refuses {@code ALTER TABLE ... CLUSTERED BY}, and its
 * catalog's {@code alterTable} keeps a table's bucket spec as it was).
 */
public final class CatalogEdit {
  private CatalogEdit() {}

  /**
   * Set table {@code name}'s bucketing in the metastore: bucket columns, count, sort columns and the
   * {@code bucketing_version} property. The table's files must already be laid out so.
   */
  public static void setBucketing(SparkSession spark, String name, String[] columns, int buckets,
                                  String[] sortColumns, int version) throws org.apache.spark.sql.AnalysisException {
    TableIdentifier id = io.bucketkit.compat.SparkCompat.sessionTable(spark, name);
    CatalogTable t = spark.sessionState().catalog().getTableMetadata(id);
    BucketSpec spec = new BucketSpec(buckets, CollectionConverters.asScala(Arrays.asList(columns)).toList(),
        CollectionConverters.asScala(Arrays.asList(sortColumns)).toList());
    SparkCompat.alterBucketing(spark, t.identifier().database().get(), t.identifier().table(), spec,
        raw -> withSparkBucketing(raw, spec, version));
    spark.sessionState().catalog().refreshTable(id);
  }

  private static final String SPEC = "spark.sql.sources.schema.";

  /**
   * The metastore properties with the new bucketing: {@code bucketing_version}, and the copy of the
   * bucket spec Spark keeps in {@code spark.sql.sources.schema.*} for the tables it created (Spark
   * reads the spec from there, Hive and Trino from the table's own bucket fields; both change).
   */
  static java.util.Map<String, String> withSparkBucketing(java.util.Map<String, String> raw, BucketSpec spec,
                                                          int version) {
    java.util.Map<String, String> out = new java.util.TreeMap<>(raw);
    out.put("bucketing_version", Integer.toString(version));
    if (out.containsKey(SPEC + "numBuckets")) {
      out.keySet().removeIf(k -> k.startsWith(SPEC + "bucketCol.") || k.startsWith(SPEC + "sortCol."));
      out.put(SPEC + "numBuckets", Integer.toString(spec.numBuckets()));
      putColumns(out, "numBucketCols", "bucketCol.", CollectionConverters.asJava(spec.bucketColumnNames()));
      putColumns(out, "numSortCols", "sortCol.", CollectionConverters.asJava(spec.sortColumnNames()));
    }
    return out;
  }

  /** Spark's form of a column list: its size under {@code count}, each column under {@code <each><i>}. */
  private static void putColumns(java.util.Map<String, String> out, String count, String each,
                                 java.util.List<String> columns) {
    out.put(SPEC + count, Integer.toString(columns.size()));
    for (int i = 0; i < columns.size(); i++) {
      out.put(SPEC + each + i, columns.get(i));
    }
  }
}
