package io.bucketkit.read;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import io.bucketkit.compat.SparkCompat;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.InterpretedOrdering;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;

import scala.jdk.javaapi.CollectionConverters;

/**
 * Trust, but verify: a bucket file whose table declares {@code SORTED BY} is read with its order
 * checked, row by row, when the scan reports that order to Spark (a sort-merge join, a window or an
 * aggregate then skips its sort). A file that is not sorted — Hive 1.x without
 * {@code hive.enforce.sorting}, a copy, any writer that does not sort — fails the task with the file
 * named, instead of a merge over unsorted rows returning wrong rows silently (Spark's own plan sorts).
 *
 * <p>Columnar batches are compared in place (two row views over the batch's vectors, one copied row
 * across batches); row readers copy each row.
 */
public final class SortedReadCheck implements Serializable {
  public static final String REPORT = "spark.bucketkit.reportSortOrder";
  /** Off: the order is reported unchecked (a table known to be sorted: bucketkit validate passed). */
  public static final String ENABLED = "spark.bucketkit.checkSortOrder";

  private final int[] ordinals;
  private final DataType[] types;
  private final String table;
  private final String columns;
  private final boolean fastFirst;  // the first sort column is int, date or bigint: compared from the vector

  /** A check of the columns at {@code ordinals} of the reader's output (ascending, NULLs first). */
  public SortedReadCheck(int[] ordinals, DataType[] types, String table, String columns) {
    this.ordinals = ordinals;
    this.types = types;
    this.table = table;
    this.columns = columns;
    this.fastFirst = types[0] instanceof org.apache.spark.sql.types.IntegerType
        || types[0] instanceof org.apache.spark.sql.types.DateType
        || types[0] instanceof org.apache.spark.sql.types.LongType;
  }

  private InterpretedOrdering ordering() {
    List<SortOrder> orders = new ArrayList<>();
    for (int i = 0; i < ordinals.length; i++) {
      orders.add(new SortOrder(new BoundReference(ordinals[i], types[i], true), Ascending$.MODULE$,
          NullsFirst$.MODULE$, CollectionConverters.asScala(new ArrayList<org.apache.spark.sql.catalyst.expressions
              .Expression>()).toList()));
    }
    return new InterpretedOrdering(CollectionConverters.asScala(orders).toList());
  }

  private RuntimeException unsorted(String file, long row) {
    return SparkCompat.failure("bucketkit: " + file + " (table " + table + ", which declares SORTED BY ("
        + columns + ")) is not sorted: row " + row + " sorts before the row above it. Spark would merge it as "
        + "sorted (a join, window or aggregate without a sort) and return wrong rows. Check the table with "
        + "`bucketkit validate`, rewrite it sorted (INSERT OVERWRITE through bucketkit's catalog), or read it "
        + "without its order: SET " + REPORT + "=false");
  }

  /**
   * Rows {@code i} and {@code j} by the first sort column (ascending, NULLs first) when it is int, date
   * or bigint: negative, positive, or 0 when equal (or of another type: the full ordering decides).
   */
  private int compareFirst(ColumnVector v, int i, int j) {
    if (!fastFirst) {
      return 0;
    }
    boolean ni = v.isNullAt(i);
    boolean nj = v.isNullAt(j);
    if (ni || nj) {
      return ni && nj ? 0 : ni ? -1 : 1;
    }
    return types[0] instanceof org.apache.spark.sql.types.LongType ? Long.compare(v.getLong(i), v.getLong(j))
        : Integer.compare(v.getInt(i), v.getInt(j));
  }

  public PartitionReader<InternalRow> rows(PartitionReader<InternalRow> in, String file) {
    InterpretedOrdering ordering = ordering();
    return new CheckedReader<>(in) {
      private InternalRow previous;
      private long row;

      @Override
      public InternalRow get() {
        InternalRow current = in.get();
        if (previous != null && ordering.compare(previous, current) > 0) {
          throw unsorted(file, row);
        }
        previous = current.copy();
        row++;
        return current;
      }

    };
  }

  public PartitionReader<ColumnarBatch> batches(PartitionReader<ColumnarBatch> in, String file) {
    InterpretedOrdering ordering = ordering();
    return new CheckedReader<>(in) {
      private InternalRow last;  // the previous batch's last row, copied
      private long row;

      @Override
      public ColumnarBatch get() {
        ColumnarBatch batch = in.get();
        int n = batch.numRows();
        if (n > 0) {
          ColumnarBatchRow a = CheckedReader.rowView(batch);
          ColumnarBatchRow b = CheckedReader.rowView(batch);
          if (last != null && ordering.compare(last, b) > 0) {
            throw unsorted(file, row);
          }
          ColumnVector first = batch.column(ordinals[0]);
          for (int i = 1; i < n; i++) {
            int c = compareFirst(first, i - 1, i);  // the first sort column straight from the vector
            if (c < 0 || (c == 0 && ordinals.length == 1 && fastFirst)) {
              continue;
            }
            a.rowId = i - 1;
            b.rowId = i;
            if (c > 0 || ordering.compare(a, b) > 0) {
              throw unsorted(file, row + i);
            }
          }
          b.rowId = n - 1;
          last = b.copy();
          row += n;
        }
        return batch;
      }

    };
  }
}
