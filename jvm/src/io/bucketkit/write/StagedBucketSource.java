package io.bucketkit.write;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.hashing.HiveHash;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code bucketkit.write}'s staging step in the JVM: {@code df.write.format(<this class>)} with rows
 * {@code (data columns..., partition columns..., bucket id)} already routed so that each
 * (partition, bucket) group lies in one task, written by {@link BucketDataWriter} -- the writer of
 * SQL INSERTs -- as one file per group below the option {@code staging}
 * ({@code <k=v/...>/bucketkit_bucket=<b>/part-*}, which {@code bucketkit.writing.steps.finalize} names and
 * commits). Options: {@code staging}, {@code format} (orc|parquet), {@code compression},
 * {@code buckets}, {@code dataColumns} (how many leading columns go into the files), {@code partitionColumns}
 * (how many follow), {@code sorted} (rows arrive sorted by partition and bucket), and
 * {@code maxOpenFiles}. With {@code keyOrdinal}, {@code bucketVersion} and {@code bucketType} (one
 * bucket column, of the Hive type whose Spark type it has) the rows carry no bucket id: the writer
 * computes it from that data column with {@link HiveBucketFunction} (10M rows: one projection of
 * every row fewer). The job commit is bucketkit's (Python), so Spark's is empty here.
 */
public final class StagedBucketSource implements TableProvider {
  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    throw new UnsupportedOperationException("bucketkit's staged writer takes the DataFrame's schema");
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new Staged(schema, new CaseInsensitiveStringMap(properties));
  }

  private static final class Staged implements SupportsWrite, Write, BatchWrite {
    private final StructType schema;
    private final CaseInsensitiveStringMap options;

    Staged(StructType schema, CaseInsensitiveStringMap options) {
      this.schema = schema;
      this.options = options;
    }

    @Override
    public String name() {
      return "bucketkit staged write to " + options.get("staging");
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_WRITE);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      return new WriteBuilder() {
        @Override
        public Write build() {
          return Staged.this;
        }
      };
    }

    @Override
    public BatchWrite toBatch() {
      return this;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      SparkSession spark = SparkSession.active();
      int data = options.getInt("dataColumns", -1);
      int parts = options.getInt("partitionColumns", 0);
      int key = options.getInt("keyOrdinal", -1);
      StructField[] fields = schema.fields();
      if (data < 1 || data + parts + (key < 0 ? 1 : 0) != fields.length || key >= data) {
        throw new IllegalArgumentException("bucketkit: staged write of " + schema.simpleString() + ": dataColumns="
            + data + ", partitionColumns=" + parts + " do not leave exactly one bucket column");
      }
      StructType dataSchema = new StructType(java.util.Arrays.copyOfRange(fields, 0, data));
      String[] partNames = new String[parts];
      DataType[] partTypes = new DataType[parts];
      for (int i = 0; i < parts; i++) {
        partNames[i] = fields[data + i].name();
        partTypes[i] = fields[data + i].dataType();
      }
      try {
        return BucketDataWriter.Factory.create(spark, options.get("format"), null, options.getOrDefault("compression", "snappy"),
            options.get("staging"), dataSchema, partNames, partTypes, new int[] {key < 0 ? fields.length - 1 : key},
            key < 0 ? null : function(fields[key], options.getInt("bucketVersion", 0), options.get("bucketType"),
                options.getInt("buckets", 0)),
            options.getInt("buckets", 0), options.getBoolean("sorted", true),
            options.getInt("maxOpenFiles", 256));
      } catch (IOException e) {
        throw new UncheckedIOException("bucketkit: preparing the staged write to " + options.get("staging"), e);
      }
    }

    /** Hive's bucket function of {@code column}, whose Spark type must be the one of {@code hiveType}. */
    private static HiveBucketFunction.Bound function(StructField column, int version, String hiveType, int buckets) {
      DataType declared = HiveHash.Type.parse(hiveType).sparkType();
      if (!declared.sameType(column.dataType())) {
        throw new IllegalArgumentException("bucketkit: staged write: bucket column " + column.name() + " is "
            + column.dataType().simpleString() + ", not " + declared.simpleString() + " as its Hive type " + hiveType);
      }
      return (HiveBucketFunction.Bound) HiveBucketFunction.forName(HiveBucketFunction.nameFor(version, hiveType, buckets))
          .bind(new StructType(new StructField[] {column}));
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      // bucketkit.writing.steps.finalize names and commits the staged files
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      // bucketkit's Transaction removes the staging directory
    }
  }
}
