package io.bucketkit.spark;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;
import org.apache.spark.sql.classic.SparkSession;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A catalog table's partitions as bucketkit's Python readers see them, asked in one call: the Python
 * API (bucketkit/spark/catalog.py) would otherwise cross py4j about ten times per partition, seconds
 * for a table with thousands of daily partitions. tests/test_catalog.py holds this equal to the
 * Python rule it serves.
 */
public final class CatalogPartitions {
  private CatalogPartitions() {}

  /**
   * The first partition of catalog table {@code t} the metastore keeps outside Hive's default place
   * ({@code <table location>/<k=v path>}, {@link ExternalCatalogUtils#generatePartitionPath}), as
   * {@code {"k=v/...", its location, the expected location, the table's location}}; null when every
   * partition is where bucketkit's readers look (paths compared, and schemes where both have one).
   */
  public static String[] misplaced(SparkSession spark, CatalogTable t) {
    return t.partitionColumnNames().isEmpty() ? null : misplaced(t, io.bucketkit.layout.TablePartition.listed(spark, t));
  }

  /** {@link #misplaced(SparkSession, CatalogTable)} of the partitions {@code parts} the metastore listed. */
  public static String[] misplaced(CatalogTable t, List<CatalogTablePartition> parts) {
    if (t.partitionColumnNames().isEmpty()) {
      return null;
    }
    Path root = new Path(t.location());
    List<String> columns = CollectionConverters.asJava(t.partitionColumnNames());
    for (CatalogTablePartition part : parts) {
      URI expected = ExternalCatalogUtils.generatePartitionPath(part.spec(), t.partitionColumnNames(), root).toUri();
      URI actual = new Path(part.location()).toUri();
      boolean schemes = actual.getScheme() != null && expected.getScheme() != null
          && !actual.getScheme().equals(expected.getScheme());
      if (!strip(actual.getPath()).equals(strip(expected.getPath())) || schemes) {
        java.util.Map<String, String> spec = CollectionConverters.asJava(part.spec());
        List<String> where = new ArrayList<>();
        for (String c : columns) {
          where.add(c + "=" + spec.get(c));
        }
        return new String[] {String.join("/", where), actual.toString(), expected.toString(), root.toString()};
      }
    }
    return null;
  }

  /**
   * Why Hive ACID table {@code name} is refused, {@code misplaced} being {@link #misplaced}'s answer: bucketkit's ACID
   * reader (Python) finds a snapshot's partitions under the table's directory, so it would miss the rows of one kept
   * elsewhere. {@code bucketkit.spark.catalog} says the same of the Python API's read.
   */
  public static String acidRefusal(String name, String[] misplaced) {
    return "bucketkit: Hive ACID table " + name + ": partition " + misplaced[0] + " is kept at " + misplaced[1]
        + ", outside the table's directory (" + misplaced[2] + " expected); bucketkit's ACID reader finds a "
        + "snapshot's partitions as k=v directories under " + misplaced[3] + ", so it would miss its rows (and "
        + "Spark's own reader reads no rows of a Hive ACID table). Move the partition's directory there and point "
        + "the metastore at it (ALTER TABLE ... PARTITION (...) SET LOCATION)";
  }

  private static String strip(String path) {
    int end = path.length();
    while (end > 0 && path.charAt(end - 1) == '/') {
      end--;
    }
    return path.substring(0, end);
  }
}
