package io.bucketkit.acid;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.read.KeyedScan;
import io.bucketkit.table.BucketScan;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.HasPartitionKey;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportPartitioning;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.connector.read.partitioning.KeyGroupedPartitioning;
import org.apache.spark.sql.connector.read.partitioning.Partitioning;
import org.apache.spark.sql.connector.read.partitioning.UnknownPartitioning;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The read of a Hive ACID table's snapshot ({@link AcidSnapshotTable}) by the {@code bucketkit} Python
 * data source, keyed by bucket where the table is bucketed: each of the Python source's input
 * partitions (one bucket of one table partition's snapshot) says which bucket it reads, and the scan
 * reports them key-grouped by the table's {@link io.bucketkit.hashing.HiveBucketFunction} transform, as
 * {@link BucketScan} reports a plain table's buckets. Spark then joins a bucketed ACID table with a table
 * bucketed alike, and aggregates on its bucket column, without an Exchange.
 *
 * <p>A partition's bucket is read from its pickled form ({@code AcidPartition.__getstate__} in
 * {@code bucketkit.spark.datasource}: a plain dict) with Spark's own unpickler. The Python reader's
 * own verdict counts too: a table it reads unbucketed (bucket -1, with its reason) is reported
 * unkeyed here, so the buckets key a join only where both sides of bucketkit vouch for them. Where the
 * read relies on the buckets (keyed, or pruned to some), every row is re-hashed and checked against
 * its bucket as it is read ({@code spark.bucketkit.checkBuckets}), as {@link io.bucketkit.read.BucketReadCheck}
 * does for plain tables; a full read nothing keys reads the partitions pickled without the check.
 *
 * <p>A query that does not need the buckets gets the {@link #unkeyed} scan
 * ({@link io.bucketkit.rules.PackUnneededBuckets}).
 */
final class AcidSnapshotScan implements Scan, SupportsReportPartitioning, SupportsReportStatistics, Batch,
    KeyedScan {
  private final String name;
  private final Scan python;
  private final Batch batch;
  private final InputPartition[] partitions;  // the Python source's
  private final int[] buckets;  // each partition's bucket; null: not keyed
  private final Transform transform;
  private final String unkeyed;  // why the scan is not keyed, or null
  private final long bytes;

  private AcidSnapshotScan(String name, Scan python, Batch batch, InputPartition[] partitions, int[] buckets,
                           Transform transform, String unkeyed, long bytes) {
    this.name = name;
    this.python = python;
    this.batch = batch;
    this.partitions = partitions;
    this.buckets = buckets;
    this.transform = transform;
    this.unkeyed = unkeyed;
    this.bytes = bytes;
  }

  /**
   * The snapshot read of table {@code name} by Python scan {@code python}, keyed by {@code transform}
   * (null: the table's buckets cannot key it, for reason {@code doubt}).
   */
  static AcidSnapshotScan of(String name, Scan python, Transform transform, String doubt) {
    Batch batch = python.toBatch();
    InputPartition[] all = batch.planInputPartitions();
    List<InputPartition> checked = new ArrayList<>();
    List<InputPartition> unchecked = new ArrayList<>();
    List<Integer> buckets = new ArrayList<>();
    long bytes = 0;
    boolean pruned = false;
    String unkeyed = transform == null ? doubt : null;
    for (InputPartition p : all) {
      Map<?, ?> state = SparkCompat.pythonPartitionState(p);
      if (state == null) {  // not one of the source's AcidPartitions: read every partition as Python gave them
        return new AcidSnapshotScan(name, python, batch, all, null, null,
            "the Python source's partition " + p + " does not say its bucket", 0);
      }
      if (!state.containsKey("payload")) {  // the source's placeholder for an empty read: nothing to read
        continue;
      }
      bytes += ((Number) state.get("bytes")).longValue();
      pruned |= Boolean.TRUE.equals(state.get("pruned"));
      int bucket = ((Number) state.get("bucket")).intValue();
      if (bucket < 0 && unkeyed == null) {
        unkeyed = String.valueOf(state.get("unbucketed"));
      }
      checked.add(p);
      unchecked.add(state.get("unchecked") instanceof byte[] b ? SparkCompat.pythonPartition(p, b) : p);
      buckets.add(bucket);
    }
    // Rows are checked where something relies on their buckets: a keyed read, a pruned one (as for plain tables)
    InputPartition[] plain = (pruned ? checked : unchecked).toArray(new InputPartition[0]);
    if (unkeyed != null) {
      return new AcidSnapshotScan(name, python, batch, plain, null, null, unkeyed, bytes);
    }
    InputPartition[] keyed = new InputPartition[checked.size()];
    for (int i = 0; i < keyed.length; i++) {
      keyed[i] = new Keyed(checked.get(i), plain[i], buckets.get(i));
    }
    return new AcidSnapshotScan(name, python, batch, keyed, buckets.stream().mapToInt(Integer::intValue).toArray(),
        transform, null, bytes);
  }

  @Override
  public boolean isKeyed() {
    return buckets != null;
  }

  @Override
  public boolean reportsOrdering() {
    return false;
  }

  /** The same read, each unit a task of its own, reporting no partitioning. */
  @Override
  public AcidSnapshotScan unkeyed() {
    if (buckets == null) {
      return this;
    }
    InputPartition[] plain = Arrays.stream(partitions).map(p -> ((Keyed) p).unkeyed).toArray(InputPartition[]::new);
    return new AcidSnapshotScan(name, python, batch, plain, null, null, "the query does not need its buckets", bytes);
  }

  @Override
  public StructType readSchema() {
    return python.readSchema();
  }

  @Override
  public String description() {
    return "bucketkit " + name + " (Hive ACID snapshot, " + (buckets == null ? "unkeyed: " + unkeyed
        : "keyed by " + transform.describe()) + ") " + python.description();
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    return partitions.clone();
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    PartitionReaderFactory factory = batch.createReaderFactory();
    return buckets == null ? factory : new Unwrapping(factory);
  }

  @Override
  public Partitioning outputPartitioning() {
    if (buckets == null) {
      return new UnknownPartitioning(0);
    }
    return new KeyGroupedPartitioning(new org.apache.spark.sql.connector.expressions.Expression[] {transform},
        (int) Arrays.stream(buckets).distinct().count());
  }

  @Override
  public Statistics estimateStatistics() {
    return BucketScan.ofSize(bytes);  // the snapshot's files: delete deltas and obsolete rows make it a bound
  }

  @Override
  public org.apache.spark.sql.connector.metric.CustomMetric[] supportedCustomMetrics() {
    return python.supportedCustomMetrics();
  }

  /** One of the Python source's partitions, keyed by its bucket. */
  static final class Keyed implements HasPartitionKey {
    final InputPartition python;
    final transient InputPartition unkeyed;  // what an unkeyed read of the same rows reads
    final int bucket;

    Keyed(InputPartition python, InputPartition unkeyed, int bucket) {
      this.python = python;
      this.unkeyed = unkeyed;
      this.bucket = bucket;
    }

    @Override
    public InternalRow partitionKey() {
      return new GenericInternalRow(new Object[] {bucket});
    }
  }

  /** The Python source's reader factory, handed its own partitions. */
  static final class Unwrapping implements PartitionReaderFactory {
    private final PartitionReaderFactory python;

    Unwrapping(PartitionReaderFactory python) {
      this.python = python;
    }

    private static InputPartition unwrap(InputPartition p) {
      return p instanceof Keyed k ? k.python : p;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition p) {
      return python.createReader(unwrap(p));
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition p) {
      return python.createColumnarReader(unwrap(p));
    }

    @Override
    public boolean supportColumnarReads(InputPartition p) {
      return python.supportColumnarReads(unwrap(p));
    }
  }
}
