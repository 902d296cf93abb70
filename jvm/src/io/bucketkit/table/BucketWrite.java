package io.bucketkit.table;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.compat.SparkRelease;
import io.bucketkit.layout.PartitionPaths;
import io.bucketkit.layout.TableListing;
import io.bucketkit.write.BucketDataWriter;
import io.bucketkit.write.CommitCoordinator;
import org.apache.spark.sql.catalyst.catalog.BucketSpec;
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.FieldReference;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A SQL INSERT into a Hive bucketed table: Spark clusters the rows by (partition, Hive bucket)
 * with the table's own hash ({@link io.bucketkit.hashing.HiveBucketFunction}, v1 or v2 as its {@code bucketing_version}
 * says), sorted so only for partitioned and SORTED BY tables, and {@link BucketDataWriter} writes
 * one file per (partition, bucket) per task (one per bucket in all, as clustering puts a whole
 * bucket in one task); bucketkit's Python commit ({@link CommitCoordinator}) names the files
 * as Hive does ({@code 000003_0_<write id>.orc}) and switches them in whole, as
 * {@code bucketkit.write} does. The catalog then learns the partitions written.
 */
final class BucketWrite implements RequiresDistributionAndOrdering, BatchWrite {
  /** Open files per task of an unsorted write before they are closed (and later rows start new files). */
  static final String MAX_OPEN_FILES = "spark.bucketkit.write.maxOpenFiles";
  private final HiveBucketedTable table;
  private final LogicalWriteInfo info;
  private final boolean overwrite;
  private final List<String> staticPartitions;
  private CommitCoordinator coordinator;

  BucketWrite(HiveBucketedTable table, LogicalWriteInfo info, boolean overwrite, List<String> staticPartitions) {
    this.table = table;
    this.info = info;
    this.overwrite = overwrite;
    this.staticPartitions = staticPartitions;
  }

  private Expression[] partitionRefs() {
    String[] names = table.partitionSchema.fieldNames();
    Expression[] out = new Expression[names.length];
    for (int i = 0; i < names.length; i++) {
      out[i] = FieldReference.column(names[i]);
    }
    return out;
  }

  /**
   * Rows clustered by (partition, bucket). An unpartitioned table's {@link #requiredNumPartitions} tasks
   * get an equal share of its buckets: bucket b goes to task {@code b % tasks}
   * ({@link io.bucketkit.hashing.HiveBucketFunction#routeTransform}).
   */
  @Override
  public Distribution requiredDistribution() {
    if (table.partitionSchema.isEmpty()) {
      return Distributions.clustered(new Expression[] {table.routeTransform(requiredNumPartitions())});
    }
    List<Expression> keys = new ArrayList<>(List.of(partitionRefs()));
    keys.add(table.writeTransform());
    return Distributions.clustered(keys.toArray(new Expression[0]));
  }

  /**
   * Of an unpartitioned table, {@code min(buckets, 4 x the default parallelism)} tasks, never coalesced by
   * adaptive execution: left to it, a small INSERT (100k rows, 1.5 MB shuffled) became one task writing
   * all 64 files in turn (a file costs ~18 ms to open and close), 1.2 s on one core while the other idled.
   * A partitioned table's (partition, bucket) groups are unbounded: the tasks follow the data's size (0).
   */
  @Override
  public int requiredNumPartitions() {
    if (!table.partitionSchema.isEmpty()) {
      return 0;
    }
    return Math.max(1, Math.min(table.buckets, 4 * SparkSession.active().sparkContext().defaultParallelism()));
  }

  /** Whether the tasks get their rows sorted: a partitioned table (groups unbounded) or SORTED BY files. */
  private boolean sorted() {
    return !table.partitionSchema.isEmpty() || !table.table.bucketSpec().get().sortColumnNames().isEmpty();
  }

  @Override
  public SortOrder[] requiredOrdering() {
    if (!sorted()) {
      return new SortOrder[0];
    }
    List<SortOrder> out = new ArrayList<>();
    for (Expression e : partitionRefs()) {
      out.add(Expressions.sort(e, SortDirection.ASCENDING));
    }
    out.add(Expressions.sort(table.writeTransform(), SortDirection.ASCENDING));
    BucketSpec spec = table.table.bucketSpec().get();
    for (String c : CollectionConverters.asJava(spec.sortColumnNames())) {
      out.add(Expressions.sort(FieldReference.column(c), SortDirection.ASCENDING));
    }
    return out.toArray(new SortOrder[0]);
  }

  @Override
  public String description() {
    return "bucketkit " + (overwrite ? "INSERT OVERWRITE " : "INSERT INTO ") + table.name() + " ("
        + table.buckets + " buckets, Hive bucketing v" + table.version + ", " + table.format + ")";
  }

  private String what() {
    return (overwrite ? "INSERT OVERWRITE " : "INSERT INTO ") + table.name();
  }

  @Override
  public BatchWrite toBatch() {
    CommitCoordinator.warm(SparkSession.active());
    return this;
  }

  /** The write as {@code bucketkit.writing.sqlcommit} takes it: the table's spec in TableSpec's fields. */
  private Map<String, Object> request(SparkSession spark) {
    BucketSpec bucketSpec = table.table.bucketSpec().get();
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("bucketed_by", table.bucketColumns);
    spec.put("bucket_types", table.bucketHiveTypes);
    spec.put("bucket_count", table.buckets);
    spec.put("bucketing_version", table.version);
    List<Map<String, Object>> sorted = new ArrayList<>();
    for (String c : CollectionConverters.asJava(bucketSpec.sortColumnNames())) {
      sorted.add(Map.of("column", c, "ascending", true));
    }
    spec.put("sorted_by", sorted);
    spec.put("partitioned_by", List.of(table.partitionSchema.fieldNames()));
    spec.put("partition_types", hiveTypes(table.partitionSchema));
    List<List<String>> columns = new ArrayList<>();
    List<String> types = hiveTypes(table.dataSchema);
    for (int i = 0; i < types.size(); i++) {
      columns.add(List.of(table.dataSchema.fields()[i].name(), types.get(i)));
    }
    spec.put("columns", columns);
    spec.put("file_format", table.format);
    Map<String, Object> out = new HashMap<>();
    out.put("table", table.name());
    out.put("location", table.table.location().toString());
    out.put("spec", spec);
    out.put("mode", overwrite ? "overwrite" : "append");
    out.put("overwrite_scope", overwrite && table.partitionSchema.isEmpty() ? "table" : "partitions");
    out.put("static_partitions", staticPartitions);
    out.put("layout", spark.conf().get(CommitCoordinator.LAYOUT, "auto"));  // checked by the commit process
    String endpoint = s3aEndpoint(spark, table.table.location());
    if (endpoint != null) {
      out.put("s3a_endpoint", endpoint);  // the commit process refuses a store pyarrow would reach elsewhere
    }
    return out;
  }

  /** Where Spark's tasks reach an S3 location (Hadoop's S3A: the bucket's own endpoint, else fs.s3a.endpoint); null
   * for another store or none set (AWS's own). */
  private static String s3aEndpoint(SparkSession spark, URI location) {
    String scheme = location.getScheme() == null ? "" : location.getScheme().toLowerCase(Locale.ROOT);
    if (!List.of("s3", "s3a", "s3n").contains(scheme) || location.getHost() == null) {
      return null;
    }
    org.apache.hadoop.conf.Configuration conf = spark.sessionState().newHadoopConf();
    String own = conf.getTrimmed("fs.s3a.bucket." + location.getHost() + ".endpoint");
    return own != null && !own.isEmpty() ? own : conf.getTrimmed("fs.s3a.endpoint");
  }

  /** Hive type names as the metastore holds them (char/varchar from Spark's metadata). */
  private static List<String> hiveTypes(StructType schema) {
    List<String> out = new ArrayList<>();
    for (StructField f : schema.fields()) {
      out.add(f.metadata().contains(HiveBucketedTable.CHAR_VARCHAR)
          ? f.metadata().getString(HiveBucketedTable.CHAR_VARCHAR) : f.dataType().catalogString());
    }
    return out;
  }

  /** The codec: the table's {@code orc.compress} / {@code parquet.compression}, else snappy (readable by every Hive);
   * a TEXTFILE table's files are written uncompressed, as Hive writes them by default. */
  private String compression() {
    if (table.format.equals("text")) {
      return "none";
    }
    Map<String, String> props = CollectionConverters.asJava(table.table.properties());
    String key = table.format.equals("orc") ? "orc.compress" : "parquet.compression";
    String value = props.getOrDefault(key, CollectionConverters.asJava(table.table.storage().properties())
        .getOrDefault(key, "snappy"));
    return value.toLowerCase(Locale.ROOT);
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo physical) {
    SparkSession spark = SparkSession.active();
    StructType query = info.schema();
    int dataColumns = table.dataSchema.length();
    StructType dataSchema = new StructType();
    for (int i = 0; i < dataColumns; i++) {
      dataSchema = dataSchema.add(table.dataSchema.fields()[i].name(), query.fields()[i].dataType(),
          query.fields()[i].nullable());
    }
    String[] partNames = table.partitionSchema.fieldNames();
    DataType[] partTypes = new DataType[partNames.length];
    for (int i = 0; i < partNames.length; i++) {
      partTypes[i] = query.fields()[dataColumns + i].dataType();
    }
    int[] keys = bucketIndexes();
    /* Begun here, not in toBatch(): Spark runs the query's shuffle stages (AQE) between the two
       and does not call abort() when they fail; from here on, a failure reaches abort(). */
    coordinator = CommitCoordinator.begin(spark, what(), request(spark));
    try {
      return BucketDataWriter.Factory.create(spark, table.format,
          table.format.equals("text") ? SparkCompat.hiveFileFormat(table.table) : null, compression(),
          coordinator.staging(), dataSchema,
          partNames, partTypes, keys, table.writeFunction(), table.buckets, sorted(),
          Integer.parseInt(spark.conf().get(MAX_OPEN_FILES, "256").trim()));
    } catch (IOException | RuntimeException e) {
      coordinator.abort();
      throw e instanceof IOException ? new UncheckedIOException("bucketkit: preparing " + what() + " failed",
          (IOException) e) : (RuntimeException) e;
    }
  }

  /** The ordinals of the bucket columns among the data columns, in CLUSTERED BY order. */
  private int[] bucketIndexes() {
    List<String> names = java.util.Arrays.stream(table.dataSchema.fieldNames())
        .map(n -> n.toLowerCase(Locale.ROOT)).toList();  // bucketColumns are lower-cased alike
    int[] out = table.bucketColumns.stream().mapToInt(names::indexOf).toArray();
    for (int k = 0; k < out.length; k++) {
      if (out[k] < 0) {
        throw new IllegalStateException("bucketkit: bucket column " + table.bucketColumns.get(k) + " not in "
            + table.dataSchema);
      }
    }
    return out;
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    stillLocated(SparkSession.active());
    Map<String, Object> done = coordinator.commit();
    List<Map<String, String>> parts = new ArrayList<>(CommitCoordinator.partitions(coordinator.begun, "recovered_partitions"));
    parts.addAll(CommitCoordinator.partitions(done, "partitions"));
    SparkSession spark = SparkSession.active();
    SessionCatalog catalog = spark.sessionState().catalog();
    Object published = done.get("published");
    if (published != null) {  // committed inside the table (a store without directory renames): move the metastore
      try {
        io.bucketkit.write.MetastorePublish.publish(spark, table.table.identifier(), (String) published);
      } catch (Exception e) {
        throw SparkCompat.failure("bucketkit: " + what() + " is committed at " + published + ", but moving "
            + table.table.identifier().quotedString() + " there in the metastore failed: " + e.getMessage(), e);
      }
      return;
    }
    if (!parts.isEmpty()) {
      catalog.createPartitions(table.table.identifier(), CollectionConverters.asScala(catalogPartitions(parts)).toList(),
          true);
    }
    catalog.refreshTable(table.table.identifier());
  }

  /**
   * The table this write was planned on is still located where its rows go: a {@code REPLACE TABLE ... AS SELECT}
   * (or {@code ALTER TABLE ... SET LOCATION}, or a DROP) meanwhile moved the name elsewhere, and committing would put
   * the rows where the table no longer reads them and its partitions into the new table pointing there. Asked of
   * the metastore just before the commit (writer.py's {@code _still_located} for {@code bucketkit.write}); Spark
   * then aborts the write, nothing of it committed. A commit inside the table moves the metastore to each version
   * of it: its table directory is what is compared.
   */
  private void stillLocated(SparkSession spark) {
    org.apache.spark.sql.catalyst.TableIdentifier id = table.table.identifier();
    String name = id.quotedString();
    CatalogTable now;
    try {
      now = spark.sharedState().externalCatalog().getTable(id.database().get(), id.table());
    } catch (RuntimeException e) {  // Scala's NoSuchTableException
      throw SparkCompat.failure("bucketkit: " + what() + ": table " + name + " was dropped during the write ("
          + e.getMessage() + "); nothing of the write was committed", e);
    }
    org.apache.hadoop.fs.Path began = TableListing.tableRoot(new org.apache.hadoop.fs.Path(table.table.location()));
    org.apache.hadoop.fs.Path is = TableListing.tableRoot(new org.apache.hadoop.fs.Path(now.location()));
    if (!began.equals(is)) {
      throw SparkCompat.failure("bucketkit: " + what() + ": table " + name + " was replaced during the write "
          + "(REPLACE TABLE, or ALTER TABLE ... SET LOCATION): it is located at " + now.location() + " now, the write "
          + "began on " + table.table.location() + "; nothing of the write was committed: run it again");
    }
  }

  private List<CatalogTablePartition> catalogPartitions(List<Map<String, String>> parts) {
    org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path(table.table.location());
    CatalogStorageFormat storage = table.table.storage();
    String[] names = table.partitionSchema.fieldNames();
    List<CatalogTablePartition> out = new ArrayList<>();
    for (Map<String, String> values : parts) {
      String[] texts = new String[names.length];
      scala.collection.immutable.Map<String, String> spec = scala.collection.immutable.Map$.MODULE$.empty();
      for (int i = 0; i < names.length; i++) {
        texts[i] = values.get(names[i]);
        spec = spec.updated(names[i], texts[i]);
      }
      URI location = new org.apache.hadoop.fs.Path(root, PartitionPaths.path(names, texts)).toUri();
      CatalogStorageFormat at = SparkRelease.storageAt(storage, location);
      out.add(new CatalogTablePartition(spec, at, scala.collection.immutable.Map$.MODULE$.empty(),
          System.currentTimeMillis(), -1L, scala.Option.empty()));
    }
    return out;
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    if (coordinator != null) {
      coordinator.abort();
    }
  }
}
