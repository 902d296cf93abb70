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
 * The {@code _bucket} of rows read from files whose bucket is unknown (a table read unbucketed because
 * some file's bucket cannot be vouched for): each row's bucket by the table's hash of its bucket columns,
 * written at {@code target} of the rows (or batches) a reader returns, in place of the NULL the file's
 * unknown bucket gives. A row's {@code _bucket} is then the bucket it belongs in wherever it is read, so a
 * plan that matches rows by it ({@code io.bucketkit.rules.KeyBySeveralColumns}) never loses one.
 */
public final class BucketIdFill implements Serializable {
  private final RowBuckets rows;
  private final int target;
  private final DataType[] schema;  // the reader's row types, for a row that is not an UnsafeRow

  public BucketIdFill(RowBuckets rows, int target, DataType[] schema) {
    this.rows = rows;
    this.target = target;
    this.schema = schema.clone();
  }

  public PartitionReader<InternalRow> rows(PartitionReader<InternalRow> in) {
    return new CheckedReader<>(in) {
      @Override
      public InternalRow get() {
        InternalRow row = in.get();
        int bucket = rows.bucketOf(row);
        if (row instanceof UnsafeRow u) {  // Spark's file readers' rows: the int field written in place
          u.setInt(target, bucket);
          return u;
        }
        Object[] values = new Object[schema.length];
        for (int i = 0; i < values.length; i++) {
          values[i] = i == target ? (Object) bucket : row.isNullAt(i) ? null : row.get(i, schema[i]);
        }
        return new GenericInternalRow(values);
      }
    };
  }

  public PartitionReader<ColumnarBatch> batches(PartitionReader<ColumnarBatch> in) {
    return new CheckedReader<>(in) {
      private OnHeapColumnVector filled;  // reused batch after batch, grown when a batch is larger
      private int capacity;

      @Override
      public ColumnarBatch get() {
        ColumnarBatch batch = in.get();
        int n = batch.numRows();
        if (filled == null || capacity < n) {
          if (filled != null) {
            filled.close();
          }
          capacity = Math.max(n, 1);
          filled = new OnHeapColumnVector(capacity, DataTypes.IntegerType);
        }
        filled.reset();
        ColumnVector[] keys = rows.vectors(batch);
        for (int i = 0; i < n; i++) {
          filled.putInt(i, rows.bucketOf(keys, i));
        }
        ColumnVector[] columns = new ColumnVector[batch.numCols()];
        for (int c = 0; c < columns.length; c++) {
          columns[c] = c == target ? filled : batch.column(c);
        }
        return new ColumnarBatch(columns, n);
      }

      @Override
      public void close() throws java.io.IOException {
        if (filled != null) {
          filled.close();
        }
        super.close();
      }
    };
  }
}
