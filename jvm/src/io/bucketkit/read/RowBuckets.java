package io.bucketkit.read;

import java.io.Serializable;

import io.bucketkit.hashing.HashModulo;
import io.bucketkit.hashing.HiveHash;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;

/**
 * The bucket each row read belongs in by the table's hash: Hive's {@code h = 31 * h + hash(c)} over the
 * bucket columns at {@code ordinals} of the rows a reader returns, row by row or straight from a batch's
 * vectors (int, bigint and string keys without boxing). What {@link BucketReadCheck} compares with each
 * file's bucket, and {@link BucketIdFill} writes as {@code _bucket} where a file's bucket is unknown (and as
 * {@code _bucket_hash}, the masked hash whose remainder the bucket is, wherever that column is read).
 */
public final class RowBuckets implements Serializable {
  private final int[] ordinals;  // the bucket columns in the rows read, in CLUSTERED BY order
  private final DataType[] dataTypes;
  private final HiveHash.Type[] types;
  private final int version;
  final int buckets;
  private final int[] fast;  // HiveHash.Type.unboxed(): INT, BIGINT, STRING, VARCHAR read straight from the vector

  public RowBuckets(int[] ordinals, DataType[] dataTypes, HiveHash.Type[] types, int version, int buckets) {
    this.ordinals = ordinals.clone();
    this.dataTypes = dataTypes.clone();
    this.types = types.clone();
    this.version = version;
    this.buckets = buckets;
    this.fast = java.util.Arrays.stream(types).mapToInt(HiveHash.Type::unboxed).toArray();
  }

  /** The hash's name in messages: "Hive bucketing v1". */
  String hash() {
    return "Hive bucketing v" + version;
  }

  /** The bucket columns' values of {@code row} (Spark internal values, NULL as null). */
  Object[] values(InternalRow row) {
    Object[] values = new Object[ordinals.length];
    for (int c = 0; c < ordinals.length; c++) {
      values[c] = row.isNullAt(ordinals[c]) ? null : row.get(ordinals[c], dataTypes[c]);
    }
    return values;
  }

  /** The bucket of {@code row} (no value boxed where its type is read unboxed: {@link HiveHash#hashAt}). */
  int bucketOf(InternalRow row) {
    return hashOf(row) % buckets;
  }

  /** The masked hash of {@code row}'s bucket columns, of which its bucket is the remainder ({@code _bucket_hash}). */
  int hashOf(InternalRow row) {
    return HashModulo.masked(HiveHash.hashRowAt(row, ordinals, types, fast, dataTypes, version));
  }

  /** The batch's bucket-column vectors, for {@link #bucketOf(ColumnVector[], int)}. */
  ColumnVector[] vectors(ColumnarBatch batch) {
    ColumnVector[] out = new ColumnVector[ordinals.length];
    for (int c = 0; c < ordinals.length; c++) {
      out[c] = batch.column(ordinals[c]);
    }
    return out;
  }

  /** The bucket of row {@code i} of a batch whose bucket-column vectors are {@code vectors}. */
  int bucketOf(ColumnVector[] vectors, int i) {
    return hashOf(vectors, i) % buckets;
  }

  /** The masked hash of row {@code i} of a batch whose bucket-column vectors are {@code vectors}. */
  int hashOf(ColumnVector[] vectors, int i) {
    if (vectors.length == 1) {  // the common table: one key, no combining
      return HashModulo.masked(hashAt(vectors[0], i, 0));
    }
    int hash = 0;
    for (int c = 0; c < vectors.length; c++) {
      hash = HiveHash.combine(hash, hashAt(vectors[c], i, c));
    }
    return HashModulo.masked(hash);
  }

  private int hashAt(ColumnVector v, int i, int c) {
    if (v.isNullAt(i)) {
      return 0;
    }
    return switch (fast[c]) {
      case HiveHash.INT -> HiveHash.hashInt(v.getInt(i), version);
      case HiveHash.BIGINT -> HiveHash.hashLong(v.getLong(i), version);
      case HiveHash.STRING -> HiveHash.hashString(v.getUTF8String(i), version, false);
      case HiveHash.VARCHAR -> HiveHash.hashString(v.getUTF8String(i), version, true);
      default -> HiveHash.hash(generic(v, i, c), types[c], version);
    };
  }

  private Object generic(ColumnVector v, int i, int c) {
    ColumnarBatchRow row = new ColumnarBatchRow(new ColumnVector[] {v});
    row.rowId = i;
    return row.get(0, dataTypes[c]);
  }
}
