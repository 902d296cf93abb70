package io.bucketkit.write;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.layout.PartitionPaths;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.ProjectingInternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.SerializableConfiguration;

/**
 * One write task of a SQL INSERT: rows arrive clustered by (partition, bucket) (the distribution
 * {@link io.bucketkit.table.BucketWrite} requires), and each (partition, bucket) group becomes one file written by
 * Spark's own ORC/Parquet {@link OutputWriter}: sorted by (partition, bucket, SORTED BY columns)
 * for partitioned or sorted tables, one file open at a time; unsorted for the others, one file
 * open per bucket the task holds (sorting would cost more than the open files).
 *
 * <p>The layout is the one {@code bucketkit.writing.steps.finalize} names and commits, the same as
 * {@code bucketkit.write}'s Spark stage: {@code <staging>/<k=v/...>/bucketkit_bucket=<b>/part-*}.
 * A task attempt writes below a hidden {@code _attempt-*} directory (never listed by finalize)
 * and moves its files into place only when Spark's commit coordinator lets it commit, so a failed
 * or speculative attempt leaves no rows behind.
 */
public final class BucketDataWriter implements DataWriter<InternalRow> {
  static final String BUCKET_DIR = "bucketkit_bucket=";  // bucketkit.writing.steps.BUCKET_COLUMN

  /** What a committed task wrote: staged paths relative to the staging directory, and rows. */
  static final class Committed implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    final List<String> files;
    final long rows;

    Committed(List<String> files, long rows) {
      this.files = files;
      this.rows = rows;
    }
  }

  /** Serialized to the executors: everything a task needs to write its files. */
  public static final class Factory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;
    final SerializableConfiguration conf;
    final OutputWriterFactory writers;
    final String staging;
    final StructType dataSchema;
    final String[] partitionNames;
    final DataType[] partitionTypes;
    final int[] keyOrdinals;  // the bucket columns, in CLUSTERED BY order
    final HiveBucketFunction.Bound function;  // null: the int column at keyOrdinals[0] holds the bucket
    final int buckets;
    final String jobTracker;
    final boolean sorted;  // rows arrive sorted by (partition, bucket): one file open at a time
    final int maxOpenFiles;
    final int orcBatchSize;  // > 0: ORC files of flat primitive columns, written by OrcRowWriter

    private Factory(Configuration conf, OutputWriterFactory writers, int orcBatchSize, String staging,
            StructType dataSchema, String[] partitionNames, DataType[] partitionTypes, int[] keyOrdinals,
            HiveBucketFunction.Bound function, int buckets, String jobTracker, boolean sorted, int maxOpenFiles) {
      this.conf = new SerializableConfiguration(conf);
      this.writers = writers;
      this.orcBatchSize = orcBatchSize;
      this.staging = staging;
      this.dataSchema = dataSchema;
      this.partitionNames = partitionNames;
      this.partitionTypes = partitionTypes;
      this.keyOrdinals = keyOrdinals;
      this.function = function;
      this.buckets = buckets;
      this.jobTracker = jobTracker;
      this.sorted = sorted;
      this.maxOpenFiles = maxOpenFiles;
    }

    /**
     * A factory whose files Spark's own ORC/Parquet writer ({@code FileFormat.prepareWrite}) writes,
     * or, for ORC files of flat primitive and string columns, {@link OrcRowWriter} (the same bytes); a
     * TEXTFILE table's ({@code format} "text") Spark's own Hive writer with the table's serde, {@code hiveFormat}.
     */
    public static Factory create(org.apache.spark.sql.classic.SparkSession spark, String format,
                          org.apache.spark.sql.execution.datasources.FileFormat hiveFormat, String compression,
                          String staging, StructType dataSchema, String[] partitionNames, DataType[] partitionTypes,
                          int[] keyOrdinals, HiveBucketFunction.Bound function, int buckets,
                          boolean sorted, int maxOpenFiles) throws IOException {
      org.apache.hadoop.mapreduce.Job job = org.apache.hadoop.mapreduce.Job.getInstance(
          spark.sessionState().newHadoopConf());
      if ("text".equals(format) && hiveFormat == null) {
        throw new IllegalArgumentException("bucketkit: a TEXTFILE table's files need its Hive serde to write them");
      }
      org.apache.spark.sql.execution.datasources.FileFormat fileFormat = "text".equals(format) ? hiveFormat
          : "orc".equals(format) ? new org.apache.spark.sql.execution.datasources.orc.OrcFileFormat()
          : new org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat();
      scala.collection.immutable.Map<String, String> options = scala.collection.immutable.Map$.MODULE$
          .<String, String>empty().updated("compression", compression);
      OutputWriterFactory writers = fileFormat.prepareWrite(spark, job, options, dataSchema);
      int orcBatchSize = "orc".equals(format) && OrcRowWriter.supports(dataSchema)
          ? spark.sessionState().conf().orcVectorizedWriterBatchSize() : 0;
      return new Factory(job.getConfiguration(), writers, orcBatchSize, staging, dataSchema, partitionNames, partitionTypes,
          keyOrdinals, function, buckets, "bucketkit" + System.currentTimeMillis(), sorted, maxOpenFiles);
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new BucketDataWriter(this, partitionId, taskId);
    }
  }

  private final Factory f;
  private final String prefix;
  private final Path attemptDir;
  private final TaskAttemptContext context;
  private final String extension;
  private final ProjectingInternalRow dataRow;  // the data columns of a row that has more (partition, bucket id)
  private final Object[] lastValues;
  private String partition = "";
  private int bucket = -1;
  private OutputWriter current;
  private final OutputWriter[] byBucket;  // unsorted input: the open file of each bucket (else null)
  private int open;
  private final List<String> files = new ArrayList<>();
  private long rows;

  private BucketDataWriter(Factory f, int partitionId, long taskId) {
    this.f = f;
    int attempt = TaskContext.get() == null ? 0 : TaskContext.get().attemptNumber();
    this.prefix = String.format("part-%05d-%d", partitionId, taskId);
    this.attemptDir = new Path(f.staging, "_attempt-" + partitionId + "-" + taskId + "-" + attempt);
    Configuration conf = new Configuration(f.conf.value());
    TaskAttemptID id = new TaskAttemptID(new TaskID(new JobID(f.jobTracker, 0), TaskType.MAP, partitionId), attempt);
    conf.set("mapreduce.job.id", id.getJobID().toString());
    conf.set("mapreduce.task.id", id.getTaskID().toString());
    conf.set("mapreduce.task.attempt.id", id.toString());
    conf.setBoolean("mapreduce.task.ismap", true);
    conf.setInt("mapreduce.task.partition", 0);
    this.context = new TaskAttemptContextImpl(conf, id);
    this.extension = f.writers.getFileExtension(context);
    this.lastValues = new Object[f.partitionNames.length];
    this.byBucket = f.sorted ? null : new OutputWriter[f.buckets];
    if (f.partitionNames.length > 0 || f.function == null) {  // rows carry more than the file's columns
      List<Object> ordinals = new ArrayList<>();
      for (int i = 0; i < f.dataSchema.length(); i++) {
        ordinals.add(i);  // Hive's order: the data columns first, the partition columns last
      }
      this.dataRow = new ProjectingInternalRow(f.dataSchema,
          scala.jdk.javaapi.CollectionConverters.asScala(ordinals).toIndexedSeq());
    } else {
      this.dataRow = null;
    }
  }

  @Override
  public void write(InternalRow row) throws IOException {
    boolean moved = f.partitionNames.length > 0 && partitionChanged(row);
    int b;
    if (f.function == null) {  // the bucket id is a column (bucketkit.write's staged rows)
      b = row.getInt(f.keyOrdinals[0]);
    } else {
      b = f.function.bucketOf(row, f.keyOrdinals, f.buckets);
    }
    if (byBucket != null) {
      current = byBucket[b] != null ? byBucket[b] : openUnsorted(b);
    } else if (current == null || moved || b != bucket) {
      open(b);
    }
    if (dataRow != null) {
      dataRow.project(row);
      current.write(dataRow);
    } else {
      current.write(row);
    }
    rows++;
  }

  /** Whether this row's partition differs from the previous row's (then {@link #partition} is its path). */
  private boolean partitionChanged(InternalRow row) {
    int base = f.dataSchema.length();
    boolean changed = current == null;
    for (int i = 0; i < lastValues.length; i++) {
      Object v = row.isNullAt(base + i) ? null : row.get(base + i, f.partitionTypes[i]);
      if (!Objects.equals(v, lastValues[i])) {
        lastValues[i] = v instanceof UTF8String ? ((UTF8String) v).clone() : v;  // rows reuse their buffers
        changed = true;
      }
    }
    if (changed) {
      String[] texts = new String[lastValues.length];
      for (int i = 0; i < texts.length; i++) {
        texts[i] = PartitionPaths.text(lastValues[i], f.partitionTypes[i]);
      }
      partition = PartitionPaths.path(f.partitionNames, texts) + "/";
    }
    return changed;
  }

  private void open(int b) throws IOException {
    closeCurrent();
    bucket = b;
    current = newFile(b);
  }

  private OutputWriter newFile(int b) {
    String rel = partition + BUCKET_DIR + b + "/" + prefix + "-" + files.size() + extension;
    files.add(rel);
    String path = new Path(attemptDir, rel).toString();
    return f.orcBatchSize > 0 ? new OrcRowWriter(path, f.dataSchema, context, f.orcBatchSize)
        : f.writers.newInstance(path, f.dataSchema, context);
  }

  /**
   * Unsorted rows of an unpartitioned table: one open file per bucket the task meets. Past
   * {@link Factory#maxOpenFiles} open files, all are closed and later rows of those buckets go to
   * new files (more files, all valid: Hive's {@code _copy_N} names), which bounds the memory.
   */
  private OutputWriter openUnsorted(int b) {
    if (open == f.maxOpenFiles) {
      closeAll();
    }
    open++;
    return byBucket[b] = newFile(b);
  }

  private void closeAll() {
    current = null;
    if (byBucket != null) {
      for (int i = 0; i < byBucket.length; i++) {
        if (byBucket[i] != null) {
          OutputWriter w = byBucket[i];
          byBucket[i] = null;
          w.close();
        }
      }
      open = 0;
    }
  }

  private void closeCurrent() {
    if (byBucket != null) {
      closeAll();
    } else if (current != null) {
      OutputWriter w = current;
      current = null;
      w.close();
    }
  }

  @Override
  public WriterCommitMessage commit() throws IOException {
    closeCurrent();
    FileSystem fs = attemptDir.getFileSystem(context.getConfiguration());
    Path staging = new Path(f.staging);
    for (String rel : files) {
      Path target = new Path(staging, rel);
      fs.mkdirs(target.getParent());
      if (!fs.rename(new Path(attemptDir, rel), target)) {
        throw new IOException("bucketkit: could not move staged file " + new Path(attemptDir, rel) + " to " + target);
      }
    }
    fs.delete(attemptDir, true);
    return new Committed(files, rows);
  }

  @Override
  public void abort() throws IOException {
    try {
      closeCurrent();
    } finally {
      attemptDir.getFileSystem(context.getConfiguration()).delete(attemptDir, true);
    }
  }

  @Override
  public void close() {
    closeCurrent();
  }
}
