package io.bucketkit.read;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The {@code _bucket} and {@code _bucket_hash} of the rows a reader returns, computed from each row's bucket
 * columns by the table's hash and written at their ordinals of the rows (or batches), in place of the NULL the
 * reader gives:
 * <ul>
 *   <li>{@code _bucket} where the files' buckets are unknown (a table read unbucketed because some file's bucket
 *       cannot be vouched for): the bucket the row belongs in wherever it is read, so a plan that matches rows
 *       by it never loses one;</li>
 *   <li>{@code _bucket_hash} wherever it is read: the masked hash of which the bucket is the remainder, what a
 *       table bucketed by several columns is keyed and joined by ({@code io.bucketkit.rules.KeyBySeveralColumns}).</li>
 * </ul>
 */
public final class BucketIdFill implements Serializable {
  private final RowBuckets rows;
  private final int bucketTarget;  // -1: _bucket not filled
  private final int hashTarget;  // -1: _bucket_hash not read
  private final DataType[] schema;  // the reader's row types, for a row that is not an UnsafeRow

  public BucketIdFill(RowBuckets rows, int bucketTarget, int hashTarget, DataType[] schema) {
    this.rows = rows;
    this.bucketTarget = bucketTarget;
    this.hashTarget = hashTarget;
    this.schema = schema.clone();
  }

  public PartitionReader<InternalRow> rows(PartitionReader<InternalRow> in) {
    return new CheckedReader<>(in) {
      @Override
      public InternalRow get() {
        InternalRow row = in.get();
        int hash = rows.hashOf(row);
        if (row instanceof UnsafeRow u) {  // Spark's file readers' rows: the int fields written in place
          if (bucketTarget >= 0) {
            u.setInt(bucketTarget, hash % rows.buckets);
          }
          if (hashTarget >= 0) {
            u.setInt(hashTarget, hash);
          }
          return u;
        }
        Object[] values = new Object[schema.length];
        for (int i = 0; i < values.length; i++) {
          values[i] = i == bucketTarget ? (Object) (hash % rows.buckets) : i == hashTarget ? (Object) hash
              : row.isNullAt(i) ? null : row.get(i, schema[i]);
        }
        return new GenericInternalRow(values);
      }
    };
  }

  public PartitionReader<ColumnarBatch> batches(PartitionReader<ColumnarBatch> in) {
    return new CheckedReader<>(in) {
      private OnHeapColumnVector bucketsOut;  // reused batch after batch, grown when a batch is larger
      private OnHeapColumnVector hashesOut;
      private int capacity;

      @Override
      public ColumnarBatch get() {
        ColumnarBatch batch = in.get();
        int n = batch.numRows();
        if (capacity < n || capacity == 0) {
          close(bucketsOut);
          close(hashesOut);
          capacity = Math.max(n, 1);
          bucketsOut = bucketTarget >= 0 ? new OnHeapColumnVector(capacity, DataTypes.IntegerType) : null;
          hashesOut = hashTarget >= 0 ? new OnHeapColumnVector(capacity, DataTypes.IntegerType) : null;
        }
        ColumnVector[] keys = rows.vectors(batch);
        if (bucketsOut != null) {
          bucketsOut.reset();
        }
        if (hashesOut != null) {
          hashesOut.reset();
        }
        for (int i = 0; i < n; i++) {
          int hash = rows.hashOf(keys, i);
          if (bucketsOut != null) {
            bucketsOut.putInt(i, hash % rows.buckets);
          }
          if (hashesOut != null) {
            hashesOut.putInt(i, hash);
          }
        }
        ColumnVector[] columns = new ColumnVector[batch.numCols()];
        for (int c = 0; c < columns.length; c++) {
          columns[c] = c == bucketTarget ? bucketsOut : c == hashTarget ? hashesOut : batch.column(c);
        }
        return new ColumnarBatch(columns, n);
      }

      private void close(OnHeapColumnVector v) {
        if (v != null) {
          v.close();
        }
      }

      @Override
      public void close() throws java.io.IOException {
        close(bucketsOut);
        close(hashesOut);
        super.close();
      }
    };
  }
}
