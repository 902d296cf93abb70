package io.bucketkit.probe;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.hashing.HiveHash;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.HasPartitionKey;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsReportPartitioning;
import org.apache.spark.sql.connector.read.partitioning.KeyGroupedPartitioning;
import org.apache.spark.sql.connector.read.partitioning.Partitioning;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Test-only: an in-memory catalog whose tables report Hive bucketing through HiveBucketFunction, to
 * check how Spark 4.3 plans them. Table {@code <form>_v<version>_<n>[_<anything>]} holds
 * (k bigint = 0..rows-1, v string) in n buckets; form {@code named} reports
 * {@code hive_v<version>_bucket_<n>(k)}, form {@code bucket} reports {@code bucket(n, k)} and the
 * catalog's {@code bucket} function is v2. Rows: option {@code rows} of the catalog (default 200).
 */
public final class ProbeCatalog implements TableCatalog, FunctionCatalog {
  private static final Pattern TABLE = Pattern.compile("(named|bucket)_v([12])_(\\d+)(_.*)?");
  private static final StructType SCHEMA = new StructType().add("k", DataTypes.LongType).add("v", DataTypes.StringType);
  private String name;
  private int rows = 200;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    this.rows = options.getInt("rows", 200);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Identifier[] listTables(String[] namespace) {
    return new Identifier[0];
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    Matcher m = TABLE.matcher(ident.name());
    if (!m.matches()) {
      throw new NoSuchTableException(ident);
    }
    return new ProbeTable(ident.name(), m.group(1).equals("named"), Integer.parseInt(m.group(2)),
        Integer.parseInt(m.group(3)), rows);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException("probe catalog is read-only");
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return false;
  }

  @Override
  public void renameTable(Identifier from, Identifier to) {
    throw new UnsupportedOperationException("probe catalog is read-only");
  }

  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return new Identifier[0];
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    if (ident.name().equals(HiveBucketFunction.BUCKET)) {
      return new HiveBucketFunction(2);
    }
    HiveBucketFunction f = HiveBucketFunction.forName(ident.name());
    if (f == null) {
      throw new NoSuchFunctionException(ident);
    }
    return f;
  }

  static final class ProbeTable implements SupportsRead {
    final String name;
    final boolean named;
    final int version;
    final int buckets;
    final int rows;

    ProbeTable(String name, boolean named, int version, int buckets, int rows) {
      this.name = name;
      this.named = named;
      this.version = version;
      this.buckets = buckets;
      this.rows = rows;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public StructType schema() {
      return SCHEMA;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return () -> new ProbeScan(this);
    }
  }

  static final class ProbeScan implements Scan, Batch, SupportsReportPartitioning {
    final ProbeTable table;

    ProbeScan(ProbeTable table) {
      this.table = table;
    }

    @Override
    public StructType readSchema() {
      return SCHEMA;
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    @Override
    public Partitioning outputPartitioning() {
      Expression key = table.named
          ? HiveBucketFunction.transform(table.version, "bigint", table.buckets, "k")
          : Expressions.bucket(table.buckets, "k");
      return new KeyGroupedPartitioning(new Expression[] {key}, planInputPartitions().length);
    }

    @Override
    public InputPartition[] planInputPartitions() {
      HiveHash.Type bigint = HiveHash.Type.parse("bigint");
      List<List<Long>> perBucket = new ArrayList<>();
      for (int b = 0; b < table.buckets; b++) perBucket.add(new ArrayList<>());
      for (long k = 0; k < table.rows; k++) {
        perBucket.get(HiveHash.bucketId(HiveHash.hash(k, bigint, table.version), table.buckets)).add(k);
      }
      List<InputPartition> out = new ArrayList<>();
      for (int b = 0; b < table.buckets; b++) {
        if (!perBucket.get(b).isEmpty()) out.add(new Bucket(b, perBucket.get(b)));
      }
      return out.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return partition -> new Reader(((Bucket) partition).keys);
    }
  }

  static final class Reader implements PartitionReader<InternalRow> {
    final List<Long> keys;
    int next = -1;

    Reader(List<Long> keys) {
      this.keys = keys;
    }

    @Override
    public boolean next() {
      return ++next < keys.size();
    }

    @Override
    public InternalRow get() {
      long k = keys.get(next);
      return new GenericInternalRow(new Object[] {k, org.apache.spark.unsafe.types.UTF8String.fromString("v" + k)});
    }

    @Override
    public void close() {}
  }

  static final class Bucket implements HasPartitionKey {
    final int bucket;
    final List<Long> keys;

    Bucket(int bucket, List<Long> keys) {
      this.bucket = bucket;
      this.keys = keys;
    }

    @Override
    public InternalRow partitionKey() {
      return new GenericInternalRow(new Object[] {bucket});
    }
  }
}
