package io.bucketkit.acid;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.read.BucketReadCheck;
import io.bucketkit.table.HiveBucketedTable;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.catalyst.catalog.BucketSpec;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A Hive ACID table (transactional=true) read in Spark SQL as Hive reads it: its snapshot (base +
 * deltas − delete events, original files with their row ids), by bucketkit's own ACID reader, the
 * one {@code bucketkit.scan} runs. Spark's own reader lists no base_/delta_ directories and
 * returns no rows (or deleted ones).
 *
 * <p>The read is the {@code bucketkit} Python data source's ({@code bucketkit.spark.datasource}),
 * handed this table's catalog metadata as the {@code catalog_table} option: the Python core turns
 * that into the table's spec ({@code catalog.table_from_description}), plans the snapshot and reads
 * each (partition, bucket) unit. One implementation decides the snapshot for SQL and Python. Filters
 * pushed by Spark prune buckets and partitions where the session has
 * {@code spark.sql.python.filterPushdown.enabled} (bucketkit's sessions do).
 *
 * <p>The snapshot is every committed write id in the directory names, unless the query passes
 * Hive's ValidWriteIdList as option {@code write_ids} ({@code SELECT ... FROM t WITH ('write_ids'
 * = 'db.t:5:...')}) or the session holds it in {@link #WRITE_IDS} (Hive's
 * {@code hive.txn.tables.valid.writeids} form, one list per table).
 */
public final class AcidSnapshotTable implements SupportsRead {
  /** The Python data source that reads ACID snapshots. */
  static final String SOURCE = "bucketkit";
  /** Session setting: Hive's ValidTxnWriteIdList ({@code txnid$db.t:hwm:minOpen:open:aborted$...}). */
  static final String WRITE_IDS = "spark.bucketkit.acid.validWriteIds";
  /** How Spark SQL reads such a table ({@code bucketkit.sql_status}). */
  static final String HOW = "a Hive ACID table (transactional=true): Spark SQL reads its snapshot (base and deltas "
      + "minus delete events, as Hive does) with bucketkit's ACID reader; filters on the bucket and partition "
      + "columns read only the matching files";
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final CatalogTable table;
  private final Map<String, String> options = new HashMap<>();
  private final HiveBucketedTable.AcidBucketing bucketing;
  private final String unreadable;  // why no read of the table may run (its scan is refused), or null

  private AcidSnapshotTable(CatalogTable table, Map<String, String> options, HiveBucketedTable.AcidBucketing bucketing,
                            String unreadable) {
    this.table = table;
    this.options.putAll(options);
    this.bucketing = bucketing;
    this.unreadable = unreadable;
  }

  /** The snapshot read of ACID table {@code t}, or an error naming the table and what is missing. */
  /** The metastore's description of the table. */
  public CatalogTable catalogTable() {
    return table;
  }

  public static AcidSnapshotTable load(SparkSession spark, CatalogTable t) {
    return load(spark, t, io.bucketkit.layout.TablePartition.listed(spark, t), null);
  }

  /**
   * {@link #load(SparkSession, CatalogTable)}, whose reads are refused with {@code unreadable} when it is not null
   * (a reason bucketkit's reader would miss rows of the snapshot; commands on the table still run).
   */
  public static AcidSnapshotTable load(SparkSession spark, CatalogTable t,
                                       java.util.List<org.apache.spark.sql.catalyst.catalog.CatalogTablePartition> parts,
                                       String unreadable) {
    String name = t.identifier().unquotedString();
    if (!spark.sessionState().dataSourceManager().dataSourceExists(SOURCE)) {
      throw SparkCompat.failure("bucketkit: Hive ACID table " + name + " is read by bucketkit's Python data "
          + "source '" + SOURCE + "', which this session does not have: install bucketkit into the Python Spark runs "
          + "(spark.pyspark.python / PYSPARK_PYTHON), or call bucketkit.configure(spark)");
    }
    Map<String, String> options = new HashMap<>();
    options.put("catalog_table", description(t, parts).toString());
    String sessionIds = spark.sessionState().conf().getConfString(WRITE_IDS, "");
    if (!sessionIds.isBlank()) {
      options.put("session_write_ids", sessionIds);
    }
    if (Boolean.parseBoolean(spark.sessionState().conf().getConfString("spark.sql.python.filterPushdown.enabled",
        "false"))) {
      options.put("push_filters", "true");  // the pruning reader; Spark refuses it where push-down is off
    }
    options.put("check_buckets", Boolean.toString(Boolean.parseBoolean(
        spark.sessionState().conf().getConfString(BucketReadCheck.ENABLED, "true"))));
    return new AcidSnapshotTable(t, options, HiveBucketedTable.acidBucketing(t), unreadable);
  }

  /**
   * The catalog metadata of {@code t} as the Python core reads it ({@code bucketkit.spark.catalog.
   * describe_catalog_table} gives the same from Python; tests/test_sql_acid.py holds them equal).
   */
  public static String describe(SparkSession spark, CatalogTable t) {
    return description(t, io.bucketkit.layout.TablePartition.listed(spark, t)).toString();
  }

  /**
   * {@link #describe}'s JSON object, given the partitions the metastore lists ({@code parts}: their values,
   * {@code partitions}, null for an unpartitioned table), for callers that add to it
   * ({@link io.bucketkit.spark.DriverCalls#describe}).
   */
  public static ObjectNode description(CatalogTable t,
                                       java.util.List<org.apache.spark.sql.catalyst.catalog.CatalogTablePartition> parts) {
    ObjectNode d = JSON.createObjectNode();
    if (t.partitionColumnNames().isEmpty()) {
      d.putNull("partitions");
    } else {
      com.fasterxml.jackson.databind.node.ArrayNode listed = d.putArray("partitions");
      io.bucketkit.layout.TablePartition.values(t, parts).forEach(row -> row.forEach(listed.addArray()::add));
    }
    d.put("name", t.identifier().unquotedString());
    d.put("provider", t.provider().isDefined() ? t.provider().get() : null);
    d.put("serde", t.storage().serde().isDefined() ? t.storage().serde().get() : null);
    ObjectNode properties = d.putObject("properties");
    CollectionConverters.asJava(t.properties()).forEach(properties::put);
    try {
      d.set("schema", JSON.readTree(t.schema().json()));
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw new IllegalStateException("bucketkit: the schema of " + t.identifier() + " is not JSON", e);
    }
    strings(d, "partition_columns", CollectionConverters.asJava(t.partitionColumnNames()));
    BucketSpec spec = t.bucketSpec().isDefined() ? t.bucketSpec().get() : null;
    strings(d, "bucket_columns", spec == null ? List.of() : CollectionConverters.asJava(spec.bucketColumnNames()));
    if (spec == null) {
      d.putNull("bucket_count");
    } else {
      d.put("bucket_count", spec.numBuckets());
    }
    strings(d, "sort_columns", spec == null ? List.of() : CollectionConverters.asJava(spec.sortColumnNames()));
    d.put("location", t.location().toString());
    return d;
  }

  private static void strings(ObjectNode d, String key, List<String> values) {
    values.forEach(d.putArray(key)::add);
  }

  /** The table's bucket transform, or why its buckets cannot key a scan. */
  public HiveBucketedTable.AcidBucketing bucketing() {
    return bucketing;
  }

  @Override
  public String name() {
    return table.identifier().unquotedString();
  }

  @Override
  public StructType schema() {
    return table.schema();
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public Map<String, String> properties() {
    return CollectionConverters.asJava(table.properties());
  }

  /**
   * The Python source's scan, with this table's options plus the query's ({@code write_ids}), keyed by
   * bucket where the table is bucketed ({@link AcidSnapshotScan}).
   */
  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap query) {
    if (unreadable != null) {
      throw SparkCompat.analysisError(unreadable);
    }
    Map<String, String> merged = new HashMap<>(options);
    merged.putAll(query.asCaseSensitiveMap());
    return new Builder(SparkCompat.pythonScanBuilder(SOURCE, table.schema(), new CaseInsensitiveStringMap(merged)));
  }

  /** What Spark SQL is told of ACID table {@code t} ({@code bucketkit.sql_status}): {"bucketed"|"unbucketed", how}. */
  public static String[] status(CatalogTable t) {
    HiveBucketedTable.AcidBucketing b = HiveBucketedTable.acidBucketing(t);
    if (b.transform() == null) {
      return new String[] {"unbucketed", HOW + "; joins and GROUP BY on it shuffle: " + b.doubt()};
    }
    return new String[] {"bucketed", HOW + "; joins and GROUP BY on " + b.transform().references()[0].describe()
        + " need no Exchange (transform " + b.transform().describe() + ")"};
  }

  /** The Python source's scan builder (filters pushed to it), building an {@link AcidSnapshotScan}. */
  private final class Builder implements SupportsPushDownFilters {
    private final ScanBuilder python;

    Builder(ScanBuilder python) {
      this.python = python;
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
      return ((SupportsPushDownFilters) python).pushFilters(filters);
    }

    @Override
    public Filter[] pushedFilters() {
      return ((SupportsPushDownFilters) python).pushedFilters();
    }

    @Override
    public Scan build() {
      return AcidSnapshotScan.of(name(), python.build(), bucketing.transform(), bucketing.doubt());
    }
  }
}
