package io.bucketkit.read;

import java.io.Serializable;
import java.util.Map;

import io.bucketkit.compat.SparkCompat;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;


/**
 * Trust, but verify: every row read from a bucket file is hashed and checked against the file's bucket
 * (Trino's {@code hive.validate-bucketing}, on by default there too). Files named as buckets whose rows
 * were never hashed — Hive 1.x without {@code hive.enforce.bucketing}, a copy, any tool that writes
 * {@code 000000_0} … by hand — fail the query with the file, the row's bucket and the file's, instead
 * of a pruned read or a bucket-by-bucket join returning wrong rows silently.
 *
 * <p>Rows are checked where the scan reads the bucket columns (a query that prunes or joins by them
 * always does); the current file is the one Spark's file reader names ({@code input_file_name()}).
 * {@code spark.bucketkit.checkBuckets=false} skips the check.
 */
public final class BucketReadCheck implements Serializable {
  public static final String ENABLED = "spark.bucketkit.checkBuckets";

  private final RowBuckets rows;
  private final String table;
  private final String[] columns;
  private final Map<String, Integer> bucketOfFile;  // Spark's url-encoded path -> bucket

  public BucketReadCheck(RowBuckets rows, String table, String[] columns, Map<String, Integer> bucketOfFile) {
    this.rows = rows;
    this.table = table;
    this.columns = columns.clone();
    this.bucketOfFile = bucketOfFile;
  }

  private int expected() {
    Integer b = bucketOfFile.get(InputFileBlockHolder.getInputFilePath().toString());
    return b == null ? -1 : b;
  }

  private void check(InternalRow row, int expected) {
    int bucket = rows.bucketOf(row);
    if (bucket != expected) {
      Object[] values = rows.values(row);
      StringBuilder key = new StringBuilder();
      for (int c = 0; c < columns.length; c++) {
        key.append(c == 0 ? "" : ", ").append(columns[c]).append(" = ").append(values[c]);
      }
      throw SparkCompat.failure("bucketkit: " + InputFileBlockHolder.getInputFilePath() + " (table " + table
          + ", bucket " + expected + " of " + rows.buckets + " by its name) holds a row whose " + key
          + " belongs in bucket " + bucket + " (" + rows.hash() + "): the "
          + "files are not placed as the table's metadata says, so pruning and bucket joins would return wrong "
          + "rows. Check it with `bucketkit validate`; read it as Spark does (unbucketed) with SET "
          // BucketkitCatalog.ENABLED, spelled out: the catalog sits above the readers (docs/architecture.md)
          + "spark.bucketkit.catalog.enabled=false");
    }
  }

  /** The first row of {@code batch} whose bucket is not {@code expected}, or -1. */
  private int firstWrong(ColumnarBatch batch, int n, int expected) {
    ColumnVector[] vectors = rows.vectors(batch);
    for (int i = 0; i < n; i++) {
      if (rows.bucketOf(vectors, i) != expected) {
        return i;
      }
    }
    return -1;
  }

  public PartitionReader<InternalRow> rows(PartitionReader<InternalRow> in) {
    return new CheckedReader<>(in) {
      @Override
      public InternalRow get() {
        InternalRow row = in.get();
        int expected = expected();
        if (expected >= 0) {
          check(row, expected);
        }
        return row;
      }
    };
  }

  public PartitionReader<ColumnarBatch> batches(PartitionReader<ColumnarBatch> in) {
    return new CheckedReader<>(in) {
      @Override
      public ColumnarBatch get() {
        ColumnarBatch batch = in.get();
        int expected = expected();
        if (expected >= 0 && batch.numRows() > 0) {
          int wrong = firstWrong(batch, batch.numRows(), expected);
          if (wrong >= 0) {
            ColumnarBatchRow row = CheckedReader.rowView(batch);
            row.rowId = wrong;
            check(row, expected);
          }
        }
        return batch;
      }
    };
  }
}
