package io.bucketkit.write;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.compat.SparkRelease;
import io.bucketkit.layout.PartitionPaths;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.execution.datasources.PartitioningUtils;
import org.apache.spark.sql.classic.SparkSession;

import scala.jdk.javaapi.CollectionConverters;

/**
 * The last step of a commit on a store without directory renames, for a metastore table: the commit
 * built the new version in a directory inside the table and published it with a pointer
 * ({@code bucketkit/layout/versions.py}); Hive, Trino and Spark read a metastore table where its
 * locations say, so those move to the new version ({@code ALTER TABLE ... [PARTITION ...] SET LOCATION},
 * partitions in one call). A SQL INSERT's write ({@code BucketWrite}) and {@code bucketkit.write}
 * (through {@code bucketkit_publish}) both end here.
 */
public final class MetastorePublish {
  private MetastorePublish() {}

  /**
   * Point table {@code name} and its partitions at a version a commit built in {@code location}
   * (inside the table, on a store without directory renames: {@code bucketkit/layout/versions.py}), so
   * that every metastore reader (Hive, Trino, Spark) reads the old version or the new one. The version's
   * directory is the truth: each partition the metastore lists is moved to its directory there, in one
   * {@code alterPartitions} call, or dropped where the version has none (a table overwrite removed it);
   * then the version's partitions the metastore lacks (those the write added) are registered; then the
   * table's own location moves (what an unpartitioned table's readers follow, and where the next commit
   * finds its table). A reader between these calls may see the moved partitions and not yet one the write
   * added or dropped, as during Hive's own dynamic-partition INSERT.
   */
  public static void publish(SparkSession spark, String name, String location) throws Exception {
    publish(spark, io.bucketkit.compat.SparkCompat.sessionTable(spark, name), location);
  }

  /** {@link #publish(SparkSession, String, String)} of the table {@code id}. */
  public static void publish(SparkSession spark, TableIdentifier id, String location) throws Exception {
    ManagedDrop.watch(spark);  // a managed table located at a version: its DROP deletes the table directory
    org.apache.spark.sql.catalyst.catalog.SessionCatalog catalog = spark.sessionState().catalog();
    CatalogTable t = catalog.getTableMetadata(id);
    Path root = new Path(location);
    FileSystem fs = root.getFileSystem(spark.sessionState().newHadoopConf());
    String[] columns = CollectionConverters.asJava(t.partitionColumnNames()).toArray(new String[0]);
    if (columns.length > 0) {
      Map<String, Path> dirs = new TreeMap<>();  // k=v/... (Hive's escaping) -> the version's directory
      PartitionPaths.walk(fs, root, columns, (values, dir) -> dirs.put(PartitionPaths.path(columns, values), dir));
      List<CatalogTablePartition> moved = new ArrayList<>();
      List<scala.collection.immutable.Map<String, String>> gone = new ArrayList<>();
      for (CatalogTablePartition p : CollectionConverters.asJava(catalog.listPartitions(id, scala.Option.empty()))) {
        String[] values = new String[columns.length];
        for (int i = 0; i < columns.length; i++) {
          values[i] = p.spec().get(columns[i]).getOrElse(() -> null);
        }
        Path dir = dirs.remove(PartitionPaths.path(columns, values));
        if (dir != null) {
          moved.add(SparkCompat.relocated(p, dir.toUri()));
        } else {
          gone.add(p.spec());
        }
      }
      if (!moved.isEmpty()) {
        catalog.alterPartitions(id, CollectionConverters.asScala(moved).toList());  // one metastore call
      }
      List<CatalogTablePartition> added = new ArrayList<>();
      for (Map.Entry<String, Path> e : dirs.entrySet()) {
        added.add(new CatalogTablePartition(PartitioningUtils.parsePathFragment(e.getKey()),
            SparkRelease.storageAt(t.storage(), e.getValue().toUri()),
            scala.collection.immutable.Map$.MODULE$.empty(), System.currentTimeMillis(), -1L, scala.Option.empty()));
      }
      if (!added.isEmpty()) {
        catalog.createPartitions(id, CollectionConverters.asScala(added).toList(), true);
      }
      if (!gone.isEmpty()) {
        catalog.dropPartitions(id, CollectionConverters.asScala(gone).toList(), true, false, true);
      }
    }
    catalog.alterTable(SparkCompat.relocated(t, root.toUri()));
    catalog.refreshTable(id);
  }
}
