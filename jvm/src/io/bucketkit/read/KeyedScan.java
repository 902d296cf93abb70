package io.bucketkit.read;

import org.apache.spark.sql.connector.read.Scan;

/**
 * A scan that may report its buckets as Spark's key-grouped partitioning ({@link
 * io.bucketkit.table.BucketScan}, {@link io.bucketkit.acid.AcidSnapshotScan}), and its variant that does not,
 * for {@link io.bucketkit.rules.PackUnneededBuckets} to choose where nothing above the scan needs them.
 */
public interface KeyedScan extends Scan {
  /** Whether the scan reports key-grouped partitioning. */
  boolean isKeyed();

  /** Whether it reports a sort order (which something above may rely on). */
  boolean reportsOrdering();

  /** The same rows, read without the partitioning (and ordering) reported. */
  Scan unkeyed();
}
