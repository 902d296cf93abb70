package io.bucketkit.table;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeMap;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.layout.BucketFiles;
import io.bucketkit.layout.TablePartition;
import io.bucketkit.read.BucketReadCheck;
import io.bucketkit.read.CheckedReader;
import io.bucketkit.read.HiveTextReaderFactory;
import io.bucketkit.read.KeyedScan;
import io.bucketkit.read.SortedReadCheck;
import org.apache.hadoop.fs.Path;
import org.apache.spark.paths.SparkPath;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.HasPartitionKey;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.FieldReference;
import org.apache.spark.sql.connector.expressions.NullOrdering;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportOrdering;
import org.apache.spark.sql.connector.read.SupportsReportPartitioning;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.connector.read.SupportsRuntimeV2Filtering;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.partitioning.KeyGroupedPartitioning;
import org.apache.spark.sql.connector.read.partitioning.Partitioning;
import org.apache.spark.sql.connector.read.partitioning.UnknownPartitioning;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;
import org.apache.spark.sql.execution.datasources.NoopCache$;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.AtomicType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import scala.jdk.javaapi.CollectionConverters;

/**
 * One input partition per bucket, holding that bucket's files in every selected table partition,
 * keyed by the bucket id and reported as key-grouped by the table's {@link HiveBucketFunction} transform: Spark then
 * joins and aggregates on the bucket column without an Exchange. Spark's own ORC/Parquet reader
 * factory (vectorised, column pruning, row-group filters) reads each bucket's files.
 *
 * <p>A table declared {@code SORTED BY} reports its sort order when every bucket the scan reads is
 * one file (Spark's own rule for bucketed V1 scans): files are sorted each, so a bucket of two files
 * is not, and Spark sorts it again.
 *
 * <p>A query that does not need the bucketing gets the scan {@link #packed}: the same files, split
 * and packed into tasks by size as Spark's own file scans do, with no partitioning reported
 * ({@link io.bucketkit.rules.PackUnneededBuckets} decides). Runtime filters (dynamic partition pruning, and on
 * the bucket column a runtime bucket pruning) narrow either kind before it runs.
 */
public final class BucketScan implements SupportsReportPartitioning, SupportsReportOrdering, SupportsReportStatistics,
    SupportsRuntimeV2Filtering, Batch, KeyedScan {
  static final String GROUP_BUCKETS = "spark.bucketkit.groupBuckets";
  static final String GROUP_BYTES = "spark.bucketkit.groupBuckets.bytesPerTask";
  static final String COMPATIBLE_TRANSFORMS = "spark.sql.sources.v2.bucketing.allowCompatibleTransforms.enabled";
  // The file index Spark's OrcScan/ParquetScan want and never read here (the scan hands them its own
  // files): one empty index per session, not one per query (each builds a Hadoop configuration).
  private static final java.util.Map<SparkSession, InMemoryFileIndex> NO_FILES =
      java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());
  private final HiveBucketedTable table;
  private final HiveBucketedTable.Selection listing;  // the partitions this scan reads (its doubt: read unbucketed)
  private final StructType readData;
  private final StructType readPartition;
  private final Filter[] dataFilters;
  private final CaseInsensitiveStringMap options;
  private final boolean packed;
  private BitSet buckets;  // null: all
  private final List<org.apache.spark.sql.catalyst.expressions.Expression> partitionFilters;
  private final List<BucketPartition> partitions = new ArrayList<>();
  private String selection;
  private SortOrder[] ordering;
  private long bytes;
  private int files;
  private PartitionReaderFactory readerFactory;
  private int group;  // the bucket count the scan reports: a divisor of the table's, several buckets per task
  private boolean pinned;  // kept keyed for a write ({@link #forWrite})

  BucketScan(HiveBucketedTable table, HiveBucketedTable.Selection listing, StructType readData,
             StructType readPartition, BitSet buckets,
             List<org.apache.spark.sql.catalyst.expressions.Expression> partitionFilters, Filter[] dataFilters,
             CaseInsensitiveStringMap options) {
    this(table, listing, readData, readPartition, buckets, partitionFilters, dataFilters, options, false);
  }

  private BucketScan(HiveBucketedTable table, HiveBucketedTable.Selection listing, StructType readData,
                     StructType readPartition, BitSet buckets,
                     List<org.apache.spark.sql.catalyst.expressions.Expression> partitionFilters, Filter[] dataFilters,
                     CaseInsensitiveStringMap options, boolean packed) {
    this.table = table;
    this.listing = listing;
    this.readData = readData;
    this.readPartition = readPartition;
    this.dataFilters = dataFilters;
    this.options = options;
    // files not vouched for: read unbucketed, no bucket selected by its hash, no partitioning reported;
    // a table bucketed by several columns: keyed by its _bucket_hash column where read (Spark's partitioning
    // takes one column: io.bucketkit.rules.KeyBySeveralColumns joins and groups by it), else pruned only
    this.packed = packed || listing.doubt() != null
        || (table.bucketColumn == null && metaIndex(readPartition, HiveBucketedTable.BUCKET_HASH) < 0);
    this.buckets = buckets == null || listing.doubt() != null ? null : (BitSet) buckets.clone();
    this.partitionFilters = new ArrayList<>(partitionFilters);
    plan();
  }

  /** Whether a scan reading {@code readPartition} reads the {@code _bucket} column. */
  private boolean readsBucketId(StructType readPartition) {
    return metaIndex(readPartition, HiveBucketedTable.BUCKET_ID) >= 0;
  }

  /**
   * Where {@code readPartition} holds the metadata column {@code name} ({@code _bucket}, {@code _bucket_hash}:
   * after the partition columns; a table with a column of that name offers none), or -1.
   */
  private int metaIndex(StructType readPartition, String name) {
    if (!(name.equals(HiveBucketedTable.BUCKET_ID) ? table.offersBucketId() : table.offersBucketHash())) {
      return -1;
    }
    for (int i = readPartition.length() - 1; i >= 0 && i >= readPartition.length() - 2; i--) {
      if (readPartition.fields()[i].name().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  /** The same read, packed into tasks by size, reporting no partitioning or order. */
  BucketScan packed() {
    BucketScan out = new BucketScan(table, listing, readData, readPartition, buckets, partitionFilters, dataFilters,
        options, true);
    out.readerFactory = readerFactory;  // reads the same files the same way
    return out;
  }

  @Override
  public boolean isKeyed() {
    return !packed;
  }

  /**
   * Two scans are equal when they read the same files the same way: the same table and listing (a scan and the
   * copies {@link #packed} makes of it), columns, buckets, filters and tasks. Spark reuses an exchange or a
   * broadcast only between equal plans ({@code BatchScanExec} compares its scans, then the runtime filters):
   * with identity, the broadcast a dynamic-partition-pruning subquery needs was planned and run a second time
   * (3 of 600 partitions joined to themselves: 1.6x Spark's plan). The hash leaves out what runtime filtering
   * narrows later (buckets, partition filters), so it stays put.
   */
  @Override
  public boolean equals(Object other) {
    return other instanceof BucketScan o && o.table == table && o.listing == listing && o.packed == packed
        && o.pinned == pinned && o.group == group && o.readData.equals(readData) && o.readPartition.equals(readPartition)
        && java.util.Objects.equals(o.buckets, buckets) && o.partitionFilters.equals(partitionFilters)
        && java.util.Arrays.equals(o.dataFilters, dataFilters) && o.options.equals(options);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(System.identityHashCode(table), System.identityHashCode(listing), packed, group,
        readData, readPartition);
  }

  @Override
  public boolean reportsOrdering() {
    return outputOrdering().length > 0;
  }

  @Override
  public Scan unkeyed() {
    return pinned || packed ? this : packed();
  }

  /**
   * This read as the input of a write into {@code n} buckets of the same hash
   * ({@link io.bucketkit.rules.WriteFromAlikeBuckets}), or null: each task holding whole target buckets, so
   * the write needs no shuffle. The scan's own grouping of buckets into tasks ({@link #groupCount}:
   * {@code hash % d} per task) is kept when {@code d}
   * divides {@code n}, its files merged into one input partition per group (Spark groups them only for
   * an operator that asks); else one task per bucket when the table's count divides {@code n}. The
   * scan stays keyed whether or not anything above asks for it ({@link #unkeyed} is itself).
   */
  public BucketScan forWrite(int n) {
    int d = n % group == 0 ? group : n % table.buckets == 0 ? table.buckets : 0;
    if (packed || d == 0) {
      return null;
    }
    BucketScan out = new BucketScan(table, listing, readData, readPartition, buckets, partitionFilters, dataFilters,
        options, false);
    out.pinned = true;
    out.readerFactory = out.newReaderFactory();  // rows checked against their own bucket, before the merge
    if (d < table.buckets) {
      TreeMap<Integer, List<PartitionedFile>> byKey = new TreeMap<>();
      for (BucketPartition p : out.partitions) {
        byKey.computeIfAbsent(p.bucket % d, k -> new ArrayList<>()).addAll(java.util.Arrays.asList(p.files));
      }
      out.partitions.clear();
      byKey.forEach((k, fs) -> out.partitions.add(new BucketPartition(k, fs.toArray(new PartitionedFile[0]))));
    }
    return out;
  }

  /** The table's bucket function; a task of the scan holds one bucket of it, unless Spark groups them. */
  public HiveBucketFunction.Bound function() {
    return table.function;
  }

  public String bucketColumn() {
    return table.bucketColumn;
  }

  /** The bucket count the scan reports (several buckets per task where the table is small). */
  int reportedBuckets() {
    return group;
  }

  /** The most file bytes one task reads when a join groups the scan's buckets into {@code keys} partitions. */
  public long largestGroupBytes(int keys) {
    java.util.Map<Integer, Long> byKey = new java.util.HashMap<>();
    for (BucketPartition p : partitions) {
      long size = 0;
      for (PartitionedFile f : p.files) {
        size += f.length();
      }
      byKey.merge(p.bucket % Math.max(1, keys), size, Long::sum);
    }
    return byKey.values().stream().mapToLong(Long::longValue).max().orElse(0L);
  }

  /** The files to read by bucket, from the table's listing, the selected buckets and partition filters. */
  private void plan() {
    partitions.clear();
    bytes = 0;
    files = 0;
    int[] projection = new int[readPartition.length()];
    List<String> all = ScanPredicates.fieldNames(table.partitionSchema);
    for (int i = 0; i < projection.length; i++) {
      projection[i] = all.indexOf(readPartition.fields()[i].name().toLowerCase(java.util.Locale.ROOT));
    }
    // the _bucket column, after the partition values where read: each file's bucket (_bucket_hash: filled per row)
    int bucketIdAt = metaIndex(readPartition, HiveBucketedTable.BUCKET_ID);
    if (bucketIdAt >= 0) {
      projection[bucketIdAt] = BUCKET_VALUE;
    }
    boolean readsBucketId = bucketIdAt >= 0;
    TreeMap<Integer, List<PartitionedFile>> byBucket = new TreeMap<>();
    int selectedParts = 0;
    for (TablePartition part : listing.parts()) {
      if (!ScanPredicates.mayMatch(partitionFilters, part.values)) {
        continue;
      }
      selectedParts++;
      InternalRow values = project(part.values, projection, table.partitionSchema, null);
      for (BucketFiles.BucketFile f : part.files) {
        if (buckets != null && !buckets.get(f.bucket)) {
          continue;
        }
        InternalRow fileValues = readsBucketId ? project(part.values, projection, table.partitionSchema,
            f.bucket < 0 ? null : f.bucket) : values;
        byBucket.computeIfAbsent(f.bucket, b -> new ArrayList<>()).add(new PartitionedFile(fileValues,
            SparkPath.fromUrlString(f.urlString()), 0L, f.size, new String[0], f.modificationTime, f.size,
            scala.collection.immutable.Map$.MODULE$.empty()));
        bytes += f.size;
        files++;
      }
    }
    byBucket.forEach((b, fs) -> partitions.add(new BucketPartition(b, fs.toArray(new PartitionedFile[0]))));
    this.ordering = packed ? new SortOrder[0] : sortOrder(table, readData, partitions);
    if (group == 0) {  // chosen once, from the first listing: runtime filters only narrow the keys
      // a task of several buckets would read several sorted files: a scan that can report an order keeps it
      group = packed || ordering.length > 0 ? table.buckets : groupCount(bytes);
    }
    partitions.forEach(p -> p.key = p.bucket % group);
    String perTask = group < table.buckets ? ", " + table.buckets / group + " buckets per task (as " + group + " buckets)" : "";
    this.selection = "buckets=" + (buckets == null ? "all " + table.buckets : buckets.cardinality() + " of "
        + table.buckets + " " + buckets) + ", partitions=" + selectedParts
        + (listing.total() >= 0 ? " of " + listing.total() : " (pruned by the metastore)")
        + ", files=" + files
        + (!listing.parts().isEmpty() && listing.parts().get(0).kept ? " (from the kept version)" : "")
        + (table.asOf != null ? " (version " + table.asOf.number() + ")" : "")
        + (ordering.length == 0 ? "" : ", sorted by " + java.util.Arrays.stream(ordering)
        .map(o -> o.expression().toString()).toList())
        + (dataFilters.length == 0 ? "" : ", PushedFilters: " + java.util.Arrays.toString(dataFilters))
        + (listing.doubt() != null ? ", packed by size" : table.bucketColumn == null ? (packed
            ? ", packed by size (bucketed by " + String.join(", ", table.bucketColumns) + ": keyed only by _bucket_hash)"
            : ", keyed by _bucket_hash (bucketed by " + String.join(", ", table.bucketColumns) + ")" + perTask)
            : packed ? ", packed by size (bucketing not needed)" : perTask)
        + (listing.placement() == null ? "" : listing.parts().stream().allMatch(p -> p.vouched)
            ? ", placement vouched (" + listing.placement() + ")" : ", rows' buckets checked (" + listing.placement() + ")");
  }

  /**
   * The bucket count to report: the smallest divisor {@code d} of the table's count that still gives
   * every core a task and no task more than {@code spark.bucketkit.groupBuckets.bytesPerTask} of files
   * ({@link #minTasks}), so a small table is not read and joined as 64 tiny tasks. Hive's bucket
   * {@code (hash & MAX) % n} taken modulo {@code d} is the bucket {@code (hash & MAX) % d}: the scan
   * reports {@code hive_v<v>_bucket_<d>(k)}, and Spark groups the buckets of one key into one task.
   * {@code spark.bucketkit.groupBuckets=false} keeps one task per bucket, and so does a session where Spark
   * does not reduce one grouping to another ({@code spark.sql.sources.v2.bucketing.allowCompatibleTransforms
   * .enabled} off, Spark's default: a session the user built): there two scans grouped by their own sizes
   * (4 and 2 of 8 buckets) would not match, and a join of them would shuffle both.
   */
  private int groupCount(long bytes) {
    SparkSession spark = SparkSession.active();
    if (!groupsBuckets(spark)) {
      return table.buckets;
    }
    int minTasks = minTasks(spark, bytes);
    for (int d = 1; d < table.buckets; d++) {
      if (table.buckets % d == 0 && d >= minTasks) {
        return d;
      }
    }
    return table.buckets;
  }

  /**
   * Whether {@code spark}'s bucketed scans group buckets into tasks by size ({@link #groupCount}), or run one
   * task per bucket. Python asks this too (bucketkit.spark.join: one task per bucket costs a join of few rows
   * per bucket more than Python's tasks save).
   */
  public static boolean groupsBuckets(SparkSession spark) {
    org.apache.spark.sql.internal.SQLConf conf = spark.sessionState().conf();
    return Boolean.parseBoolean(conf.getConfString(GROUP_BUCKETS, "true"))
        && Boolean.parseBoolean(conf.getConfString(COMPATIBLE_TRANSFORMS, "false"));
  }

  /**
   * How many tasks a bucketed scan of {@code bytes} wants: at least one per core, and none reading more
   * than {@code spark.bucketkit.groupBuckets.bytesPerTask} of files (default 4 MB). A bucketed scan
   * feeds a join or an aggregate, whose hash maps and sorts per task are what cost, not the reading:
   * Spark's file-scan sizing (128 MB a task) made the star join's hash maps (8M x 4M rows, 64 buckets,
   * 4 tasks) miss the CPU caches, 1.74 s against 2.0 s with 16 tasks; a small table still gets few tasks
   * (1M rows: 4 tasks, 0.44 s against 0.78 s with 64).
   */
  private static int minTasks(SparkSession spark, long bytes) {
    long target = Math.max(1, org.apache.spark.network.util.JavaUtils.byteStringAsBytes(
        spark.sessionState().conf().getConfString(GROUP_BYTES, "4m")));
    return (int) Math.max(SparkCompat.minPartitions(spark), (bytes + target - 1) / target);
  }

  @Override
  public NamedReference[] filterAttributes() {
    // Partition columns and the bucket column, where the scan reads them (Spark resolves these
    // against the scan's output).
    List<NamedReference> out = new ArrayList<>();
    for (StructField f : readPartition.fields()) {
      if (!(f.name().equals(HiveBucketedTable.BUCKET_ID) && table.offersBucketId())
          && !(f.name().equals(HiveBucketedTable.BUCKET_HASH) && table.offersBucketHash())) {
        out.add(FieldReference.column(f.name()));
      }
    }
    for (StructField f : listing.doubt() != null ? new StructField[0] : readData.fields()) {
      if (f.name().toLowerCase(java.util.Locale.ROOT).equals(table.bucketColumn)) {
        out.add(FieldReference.column(f.name()));
      }
    }
    return out.toArray(new NamedReference[0]);
  }

  @Override
  public void filter(Predicate[] predicates) {
    for (Predicate p : predicates) {
      if (table.partitionSchema.length() > 0 && ScanPredicates.onlyReferences(p, table.partitionSchema)) {
        org.apache.spark.sql.catalyst.expressions.Expression bound = ScanPredicates.bind(p, table.partitionSchema);
        if (bound != null) {
          partitionFilters.add(bound);
        }
      }
      BitSet b = listing.doubt() != null ? null : ScanPredicates.buckets(new Predicate[] {p}, table);
      if (b != null) {
        if (buckets == null) {
          buckets = b;
        } else {
          buckets.and(b);
        }
      }
    }
    plan();
    checkPackedTasks();
  }

  /**
   * The table's {@code SORTED BY} columns the scan reads, in order up to the first it does not read
   * or cannot vouch for, when each bucket is one file; else none. Spark's catalog keeps SORTED BY
   * only when every column is ascending, and bucketkit and Spark sort ascending with nulls first.
   */
  static SortOrder[] sortOrder(HiveBucketedTable table, StructType readData, List<BucketPartition> partitions) {
    List<SortOrder> out = new ArrayList<>();
    if (partitions.stream().anyMatch(p -> p.files.length != 1) || !Boolean.parseBoolean(
        SparkSession.active().sessionState().conf().getConfString(SortedReadCheck.REPORT, "true"))) {
      return new SortOrder[0];
    }
    List<String> read = ScanPredicates.fieldNames(readData);
    for (String column : CollectionConverters.asJava(
        ((org.apache.spark.sql.catalyst.catalog.BucketSpec) table.table.bucketSpec().get()).sortColumnNames())) {
      int i = read.indexOf(column.toLowerCase(java.util.Locale.ROOT));
      if (i < 0 || !sortsAlike(readData.fields()[i])) {
        break;
      }
      out.add(Expressions.sort(FieldReference.column(readData.fields()[i].name()), SortDirection.ASCENDING,
          NullOrdering.NULLS_FIRST));
    }
    return out.toArray(new SortOrder[0]);
  }

  // Whether any writer's ascending order of the column is an ascending order for Spark too: atomic
  // types compare alike everywhere (Hive's -0.0 < 0.0 is non-decreasing for Spark, which takes them
  // as equal); a collated string or a CHAR (compared padded or not) may not.
  private static boolean sortsAlike(StructField field) {
    DataType type = field.dataType();
    if (field.metadata().contains(HiveBucketedTable.CHAR_VARCHAR)
        && field.metadata().getString(HiveBucketedTable.CHAR_VARCHAR).toLowerCase(java.util.Locale.ROOT)
        .startsWith("char")) {
      return false;
    }
    if (type instanceof StringType) {
      return ((StringType) type).isUTF8BinaryCollation() && !((StringType) type).usesTrimCollation();
    }
    return type instanceof AtomicType;
  }

  @Override
  public SortOrder[] outputOrdering() {
    return ordering.clone();
  }

  // A projection's index of _bucket (each file's bucket) among the partition values read.
  private static final int BUCKET_VALUE = -2;

  /**
   * The partition values read, {@code bucketId} at {@code _bucket} ({@link #BUCKET_VALUE}); NULL at
   * {@code _bucket_hash}, which a {@link io.bucketkit.read.BucketIdFill} writes row by row.
   */
  private static InternalRow project(InternalRow row, int[] projection, StructType schema, Integer bucketId) {
    Object[] values = new Object[projection.length];
    for (int i = 0; i < projection.length; i++) {
      int j = projection[i];
      values[i] = j == BUCKET_VALUE ? bucketId : j < 0 || row.isNullAt(j) ? null : row.get(j, schema.fields()[j].dataType());
    }
    return new GenericInternalRow(values);
  }

  @Override
  public StructType readSchema() {
    return HiveBucketedTable.dataThenPartition(readData, readPartition);
  }

  @Override
  public String description() {
    return "bucketkit " + table.name() + (listing.doubt() != null ? " read unbucketed (" + listing.doubt() + ", "
        + table.format + ") " : " (Hive bucketing v" + table.version + ", " + table.format + ") ") + selection;
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public Partitioning outputPartitioning() {
    // The key must be a column of the scan's output, or Spark cannot resolve the transform.
    int keys = (int) partitions.stream().mapToInt(p -> p.key).distinct().count();
    if (!packed && table.bucketColumn == null) {  // several bucket columns: keyed by each row's hash of them
      return new KeyGroupedPartitioning(new org.apache.spark.sql.connector.expressions.Expression[] {
          io.bucketkit.hashing.HashModulo.transform(group, HiveBucketedTable.BUCKET_HASH)}, keys);
    }
    if (packed || !ScanPredicates.fieldNames(readData).contains(table.bucketColumn)) {
      return new UnknownPartitioning(0);
    }
    return new KeyGroupedPartitioning(new org.apache.spark.sql.connector.expressions.Expression[] {
        table.bucketTransform(group)}, keys);
  }

  @Override
  public Statistics estimateStatistics() {
    // As Spark's FileScan: file bytes, scaled by the share of the columns read.
    double share = (double) readSchema().defaultSize() / Math.max(1, table.schema().defaultSize());
    return ofSize((long) (bytes * Math.min(1.0, share)));
  }

  /** Statistics saying only a size in bytes (at least 1: Spark reads 0 as "no rows"). */
  public static Statistics ofSize(long size) {
    return new Statistics() {
      @Override
      public OptionalLong sizeInBytes() {
        return OptionalLong.of(Math.max(1L, size));
      }

      @Override
      public OptionalLong numRows() {
        return OptionalLong.empty();
      }
    };
  }

  @Override
  public InputPartition[] planInputPartitions() {
    if (!packed) {
      return partitions.toArray(new InputPartition[0]);
    }
    return SparkCompat.packFiles(SparkSession.active(),
        partitions.stream().flatMap(p -> java.util.Arrays.stream(p.files)).toList(), !table.format.equals("text"));
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    // Once per scan: Spark asks again for every copy of the plan node (columnar checks, AQE), and each
    // factory broadcasts the Hadoop configuration (~10 ms of a small query's planning)
    if (readerFactory == null) {
      readerFactory = newReaderFactory();
    }
    checkPackedTasks();
    return readerFactory;
  }

  /** Tell the reader factory whether this scan's packed tasks need their rows' buckets checked. */
  private void checkPackedTasks() {
    if (readerFactory instanceof BucketReaderFactory f) {
      // _bucket read: a join or grouping may match rows by it (KeyBySeveralColumns), so it must be true
      f.checkPackedTasks(packed && (buckets != null || readsBucketId(readPartition)));
    }
  }

  private PartitionReaderFactory newReaderFactory() {
    SparkSession spark = SparkSession.active();
    InMemoryFileIndex noFiles = NO_FILES.computeIfAbsent(spark, s -> new InMemoryFileIndex(s,
        CollectionConverters.asScala(new ArrayList<Path>()).toList(), scala.collection.immutable.Map$.MODULE$.empty(),
        scala.Option.empty(), NoopCache$.MODULE$, scala.Option.empty(), scala.Option.empty()));
    // the configuration the table was listed with (this query's session settings; listing is over, and
    // one reader factory per scan uses it): a new one costs ~1 ms of planning
    org.apache.hadoop.conf.Configuration conf = table.hadoopConf != null
        ? table.hadoopConf : spark.sessionState().newHadoopConf();
    PartitionReaderFactory delegate = table.format.equals("text")
        ? new HiveTextReaderFactory(spark.sparkContext().broadcast(new org.apache.spark.util.SerializableConfiguration(conf),
            scala.reflect.ClassTag$.MODULE$.apply(org.apache.spark.util.SerializableConfiguration.class)),
            SparkCompat.hiveTableProperties(table.table), readData, readPartition)
        : SparkCompat.fileReaderFactory(spark, table.format, conf, noFiles, table.dataSchema, readData, readPartition,
            options, dataFilters,
            table.name() + (table.directory != null ? " at " + table.directory : ""));
    io.bucketkit.read.RowBuckets rows = rowBuckets();
    return new BucketReaderFactory(delegate, sortedReadCheck(spark), bucketReadCheck(spark, rows),
        bucketIdFill(rows), table.name());
  }

  /** Each row's bucket by the table's hash of its bucket columns, where the scan reads them all, or null. */
  private io.bucketkit.read.RowBuckets rowBuckets() {
    List<String> read = ScanPredicates.fieldNames(readData);
    int[] ordinals = table.bucketColumns.stream().mapToInt(read::indexOf).toArray();
    if (java.util.Arrays.stream(ordinals).anyMatch(o -> o < 0)) {
      return null;
    }
    return new io.bucketkit.read.RowBuckets(ordinals, java.util.Arrays.stream(ordinals)
        .mapToObj(o -> readData.fields()[o].dataType()).toArray(DataType[]::new), table.hashTypes(), table.version,
        table.buckets);
  }

  /**
   * Where the scan reads {@code _bucket} of files whose buckets are unknown (read unbucketed), or reads
   * {@code _bucket_hash}: each row's bucket and hash by the table's hash {@code rows}, in place of NULL
   * ({@link io.bucketkit.read.BucketIdFill}), or null.
   */
  private io.bucketkit.read.BucketIdFill bucketIdFill(io.bucketkit.read.RowBuckets rows) {
    int id = listing.doubt() != null ? metaIndex(readPartition, HiveBucketedTable.BUCKET_ID) : -1;
    int hash = metaIndex(readPartition, HiveBucketedTable.BUCKET_HASH);
    if ((id < 0 && hash < 0) || rows == null) {
      return null;
    }
    StructType out = readSchema();
    return new io.bucketkit.read.BucketIdFill(rows, id < 0 ? -1 : readData.length() + id,
        hash < 0 ? -1 : readData.length() + hash,
        java.util.Arrays.stream(out.fields()).map(StructField::dataType).toArray(DataType[]::new));
  }

  /** The check of every row's bucket ({@code rows}) against its file's, where the scan reads the bucket columns, or null. */
  private BucketReadCheck bucketReadCheck(SparkSession spark, io.bucketkit.read.RowBuckets rows) {
    if (rows == null || listing.doubt() != null
        || !Boolean.parseBoolean(spark.sessionState().conf().getConfString(BucketReadCheck.ENABLED, "true"))) {
      return null;
    }
    java.util.Set<String> vouched = new java.util.HashSet<>();  // files whose placement the manifest vouches for
    for (TablePartition part : listing.parts()) {
      if (part.vouched) {
        part.files.forEach(f -> vouched.add(f.path));
      }
    }
    java.util.Map<String, Integer> bucketOfFile = new java.util.HashMap<>();
    for (BucketPartition p : partitions) {
      for (PartitionedFile f : p.files) {
        if (!vouched.contains(f.toPath().toString())) {
          bucketOfFile.put(f.urlEncodedPath(), p.bucket);
        }
      }
    }
    if (bucketOfFile.isEmpty()) {
      return null;
    }
    return new BucketReadCheck(rows, table.name(), table.bucketColumns.toArray(new String[0]), bucketOfFile);
  }

  /** The check of the order the scan reports, over the reader's output (data columns first), or null. */
  private SortedReadCheck sortedReadCheck(SparkSession spark) {
    if (ordering.length == 0 || !Boolean.parseBoolean(
        spark.sessionState().conf().getConfString(SortedReadCheck.ENABLED, "true"))) {
      return null;
    }
    List<String> read = ScanPredicates.fieldNames(readData);
    int[] ordinals = new int[ordering.length];
    org.apache.spark.sql.types.DataType[] types = new org.apache.spark.sql.types.DataType[ordering.length];
    List<String> names = new ArrayList<>();
    for (int i = 0; i < ordering.length; i++) {
      String name = ((NamedReference) ordering[i].expression()).fieldNames()[0];
      ordinals[i] = read.indexOf(name.toLowerCase(java.util.Locale.ROOT));
      types[i] = readData.fields()[ordinals[i]].dataType();
      names.add(name);
    }
    return new SortedReadCheck(ordinals, types, table.name(), String.join(", ", names));
  }

  /** One bucket's files. */
  static final class BucketPartition implements HasPartitionKey {
    final int bucket;
    int key;  // the bucket in the count the scan reports
    final PartitionedFile[] files;

    BucketPartition(int bucket, PartitionedFile[] files) {
      this.bucket = bucket;
      this.key = bucket;
      this.files = files;
    }

    @Override
    public InternalRow partitionKey() {
      return new GenericInternalRow(new Object[] {key});
    }

    FilePartition asFilePartition() {
      return new FilePartition(bucket, files);
    }

    @Override
    public String[] preferredLocations() {
      return new String[0];
    }
  }

  /**
   * A reader whose file is gone when opened — the table was overwritten (INSERT OVERWRITE,
   * {@code bucketkit.write}, {@code bucketkit.rebucket}) after this query listed it — failing with
   * that said, as bucketkit's Python readers say it ({@code versions.vanished}), instead of Spark's
   * bare {@code FileNotFoundException} deep in an ORC or Parquet reader. Never a partial read.
   */
  static final class Gone<T> extends CheckedReader<T> {
    private final String table;

    Gone(PartitionReader<T> in, String table) {
      super(in);
      this.table = table;
    }

    @Override
    public boolean next() throws java.io.IOException {
      try {
        return in.next();
      } catch (Exception e) {  // Spark's FAILED_READ_FILE.FILE_NOT_EXIST is a checked SparkException
        for (Throwable c = e; c != null; c = c.getCause()) {
          String message = String.valueOf(c.getMessage());  // a FileNotFoundException may have none
          // gone before opening (FileNotFoundException), or between opening and reading a stripe (the ORC
          // reader's NoSuchFileException from java.nio, under Spark's FAILED_READ_FILE.NO_HINT)
          if (c instanceof java.io.FileNotFoundException || c instanceof java.nio.file.NoSuchFileException
              || message.contains("FAILED_READ_FILE.FILE_NOT_EXIST")) {
            throw SparkCompat.failure("bucketkit: table " + table + ": a file it listed is gone ("
                + message.lines().findFirst().orElse("") + "): the table was overwritten while it was read; "
                + "run the read again", e);
          }
        }
        throw e;
      }
    }

    @Override
    public T get() {
      return in.get();
    }
  }

  /** Spark's reader factory over one bucket's files. */
  static final class BucketReaderFactory implements PartitionReaderFactory {
    private final PartitionReaderFactory delegate;
    private final SortedReadCheck sorted;  // null: the scan reports no order
    private final BucketReadCheck placed;  // null: rows' buckets not checked
    private final io.bucketkit.read.BucketIdFill fill;  // null: _bucket not read, or each file's bucket known
    // Whether a packed scan's tasks (Spark's FilePartitions) are checked too: only when the scan reads
    // some buckets, not all (a bucket filter, static or at run time), or reads _bucket. A packed read of
    // every bucket without _bucket returns the same rows wherever they sit, and reports no bucketing for
    // anything to rely on.
    // Set by the scan when it plans and after runtime filters, before the factory goes to the tasks.
    private volatile boolean checkPacked;

    private final String table;

    BucketReaderFactory(PartitionReaderFactory delegate, SortedReadCheck sorted, BucketReadCheck placed,
                        io.bucketkit.read.BucketIdFill fill, String table) {
      this.delegate = delegate;
      this.sorted = sorted;
      this.placed = placed;
      this.fill = fill;
      this.table = table;
    }

    void checkPackedTasks(boolean check) {
      checkPacked = check;
    }

    private boolean checked(InputPartition p) {
      return placed != null && (p instanceof BucketPartition || checkPacked);
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition p) {
      PartitionReader<InternalRow> in = new Gone<>(delegate.createReader(files(p)), table);
      in = fill != null ? fill.rows(in) : in;
      in = checked(p) ? placed.rows(in) : in;
      return sorted == null || !(p instanceof BucketPartition) ? in : sorted.rows(in, file(p));
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition p) {
      PartitionReader<ColumnarBatch> in = new Gone<>(delegate.createColumnarReader(files(p)), table);
      in = fill != null ? fill.batches(in) : in;
      in = checked(p) ? placed.batches(in) : in;
      return sorted == null || !(p instanceof BucketPartition) ? in : sorted.batches(in, file(p));
    }

    // A bucket whose order is reported is one file (BucketScan.sortOrder).
    private static String file(InputPartition p) {
      return ((BucketPartition) p).files[0].filePath().toString();
    }

    @Override
    public boolean supportColumnarReads(InputPartition p) {
      return delegate.supportColumnarReads(files(p));
    }

    // A bucket's files, or a packed scan's task (already Spark's FilePartition).
    private static InputPartition files(InputPartition p) {
      return p instanceof BucketPartition ? ((BucketPartition) p).asFilePartition() : p;
    }
  }
}
