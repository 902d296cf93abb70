package io.bucketkit.read;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.serde2.Deserializer;
import org.apache.hadoop.hive.serde2.SerDeException;
import org.apache.hadoop.hive.serde2.SerDeUtils;
import org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapred.FileSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RecordReader;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.TextInputFormat;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.hive.HadoopTableReader;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Reads a Hive TEXTFILE table's files ({@code LazySimpleSerDe} over {@code TextInputFormat}) as
 * Spark's own Hive reader does: Hadoop's {@code TextInputFormat} gives the lines, the table's own
 * serde (initialised with the table's metadata, as Spark's {@code HiveTableScanExec} gets it)
 * deserialises them, and Spark's {@code HadoopTableReader.fillObject} turns Hive's objects into
 * Spark's rows. So delimiters, escapes, {@code \N} NULLs, malformed values (NULL) and every type
 * read exactly as Spark reads the table without bucketkit; only which files a task reads differs.
 *
 * <p>Files are read whole (a split of a compressed file would be read twice), in the order the task
 * lists them. The rows are the read data columns then the partition columns, as unsafe rows. While a
 * file is read it is the task's current file, as Spark's own file readers name it
 * ({@code InputFileBlockHolder}): {@code input_file_name()} and the check of each row's bucket
 * ({@link BucketReadCheck}) find it there.
 */
public final class HiveTextReaderFactory implements PartitionReaderFactory {
  private final Broadcast<SerializableConfiguration> conf;
  private final Properties tableProperties;
  private final StructType readData;
  private final StructType readPartition;

  public HiveTextReaderFactory(Broadcast<SerializableConfiguration> conf, Properties tableProperties, StructType readData,
                        StructType readPartition) {
    this.conf = conf;
    this.tableProperties = tableProperties;
    this.readData = readData;
    this.readPartition = readPartition;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    return new Reader(List.of(((FilePartition) partition).files()));
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return false;
  }

  private static StructType concat(StructType a, StructType b) {
    StructType out = a;
    for (StructField f : b.fields()) {
      out = out.add(f);
    }
    return out;
  }

  /** The data columns read, each with its position in the reader's row (the serde finds it by name). */
  private scala.collection.immutable.Seq<Tuple2<Attribute, Object>> attributes() {
    List<Tuple2<Attribute, Object>> out = new ArrayList<>();
    StructField[] fields = readData.fields();
    for (int i = 0; i < fields.length; i++) {
      Attribute a = new AttributeReference(fields[i].name(), fields[i].dataType(), true, fields[i].metadata(),
          NamedExpression$.MODULE$.newExprId(), CollectionConverters.asScala(new ArrayList<String>()).toList());
      out.add(new Tuple2<>(a, i));
    }
    return CollectionConverters.asScala(out).toList();
  }

  private final class Reader implements PartitionReader<InternalRow> {
    private final java.util.Iterator<PartitionedFile> files;
    private final JobConf job = new JobConf(conf.value().value());
    private final Deserializer serde;
    private final scala.collection.immutable.Seq<Tuple2<Attribute, Object>> attributes = attributes();
    private final InternalRow mutable = new SpecificInternalRow(readData);
    private final UnsafeProjection project = UnsafeProjection.create(concat(readData, readPartition));
    private final JoinedRow joined = new JoinedRow();
    private RecordReader<LongWritable, Text> lines;
    private scala.collection.Iterator<InternalRow> rows;
    private InternalRow partitionValues;
    private InternalRow current;

    Reader(List<PartitionedFile> files) {
      this.files = files.iterator();
      try {
        serde = new LazySimpleSerDe();
        SerDeUtils.initializeSerDe(serde, job, tableProperties, null);
      } catch (SerDeException e) {
        throw new IllegalStateException("bucketkit: the table's serde cannot be set up: " + e.getMessage(), e);
      }
    }

    @Override
    public boolean next() throws IOException {
      while (rows == null || !rows.hasNext()) {
        closeFile();
        if (!files.hasNext()) {
          return false;
        }
        open(files.next());
      }
      current = project.apply(joined.apply(rows.next(), partitionValues));
      return true;
    }

    private void open(PartitionedFile f) throws IOException {
      Path path = f.toPath();
      long length = path.getFileSystem(job).getFileStatus(path).getLen();
      TextInputFormat format = new TextInputFormat();
      format.configure(job);
      lines = format.getRecordReader(new FileSplit(path, 0, length, new String[0]), job, Reporter.NULL);
      InputFileBlockHolder.set(f.urlEncodedPath(), 0, length);
      partitionValues = f.partitionValues();
      RecordReader<LongWritable, Text> in = lines;
      LongWritable key = in.createKey();
      scala.collection.Iterator<Writable> values = new scala.collection.AbstractIterator<Writable>() {
        private Text value = in.createValue();
        private boolean ready;
        private boolean done;

        @Override
        public boolean hasNext() {
          if (!ready && !done) {
            try {
              done = !in.next(key, value);
            } catch (IOException e) {
              throw new UncheckedIOException("bucketkit: reading " + path + " failed", e);
            }
            ready = !done;
          }
          return ready;
        }

        @Override
        public Writable next() {
          if (!hasNext()) {
            throw new java.util.NoSuchElementException();
          }
          ready = false;
          return value;
        }
      };
      rows = HadoopTableReader.fillObject(values, serde, attributes, mutable, serde);
    }

    private void closeFile() throws IOException {
      if (lines != null) {
        lines.close();
        lines = null;
        InputFileBlockHolder.unset();
      }
      rows = null;
    }

    @Override
    public InternalRow get() {
      return current;
    }

    @Override
    public void close() throws IOException {
      closeFile();
    }
  }
}
