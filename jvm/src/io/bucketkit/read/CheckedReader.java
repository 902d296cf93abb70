package io.bucketkit.read;

import java.io.IOException;

import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;

/**
 * A partition reader passing another's rows or batches through, its {@code get} checking each
 * ({@link BucketReadCheck}, {@link SortedReadCheck}).
 */
public abstract class CheckedReader<T> implements PartitionReader<T> {
  protected final PartitionReader<T> in;

  public CheckedReader(PartitionReader<T> in) {
    this.in = in;
  }

  @Override
  public boolean next() throws IOException {
    return in.next();
  }

  @Override
  public void close() throws IOException {
    in.close();
  }

  /** A row view over every column of {@code batch}, at row 0 (set {@code rowId} to move it; no copy). */
  static ColumnarBatchRow rowView(ColumnarBatch batch) {
    ColumnVector[] vectors = new ColumnVector[batch.numCols()];
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = batch.column(i);
    }
    return new ColumnarBatchRow(vectors);
  }
}
