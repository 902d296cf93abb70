package io.bucketkit.hashing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.Reducer;
import org.apache.spark.sql.connector.catalog.functions.ReducibleFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.FieldReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.StructType;

/**
 * The partitioning transform of a table bucketed by several columns: {@code hash_mod_<n>(_bucket_hash)}, the
 * remainder by {@code n} of a row's masked Hive hash ({@code (h & MAX) % n}, Hive's bucket id among n). Spark's
 * key-grouped partitioning takes one column per expression, so such a table's scan reports this transform of its
 * {@code _bucket_hash} column, which holds each row's hash of all its bucket columns.
 *
 * <p>A join that matches {@code l._bucket_hash = r._bucket_hash} needs no bucket count alike: rows of equal hash
 * have equal remainders by any n, so Spark reduces a side of kN to N ({@link Bound#reducer}, as
 * {@link HiveBucketFunction} does for one column) and a scan may report a divisor of its table's count (several
 * buckets per task). The value is the hash itself, so which family computed it does not matter here: the planner
 * rule that adds such an equality adds it only between tables whose rows of equal keys hash alike.
 */
public final class HashModulo implements UnboundFunction {
  private static final Pattern NAMED = Pattern.compile("hash_mod_([1-9][0-9]{0,8})");
  private final int divisor;

  private HashModulo(int divisor) {
    this.divisor = divisor;
  }

  /** The function a name from {@link #transform} stands for, or null when the name is not one. */
  public static HashModulo forName(String name) {
    Matcher m = NAMED.matcher(name);
    return m.matches() ? new HashModulo(Integer.parseInt(m.group(1))) : null;
  }

  /** The transform a scan reports: {@code hash_mod_<divisor>(column)}. */
  public static Transform transform(int divisor, String column) {
    HiveHash.bucketId(0, divisor);  // validates the count
    return Expressions.apply("hash_mod_" + divisor, FieldReference.column(column));
  }

  /** The masked hash of a row's combined Hive hash {@code h}: what {@code _bucket_hash} holds. */
  public static int masked(int hash) {
    return hash & Integer.MAX_VALUE;
  }

  @Override
  public String name() {
    return "hash_mod_" + divisor;
  }

  @Override
  public String description() {
    return name() + "(hash): a non-negative Hive hash's remainder by " + divisor + ", its bucket among " + divisor;
  }

  @Override
  public BoundFunction bind(StructType inputType) {
    if (inputType.length() != 1 || !(inputType.fields()[0].dataType() instanceof IntegerType)) {
      throw new UnsupportedOperationException(name() + " takes (int hash), got " + inputType.simpleString());
    }
    return new Bound(divisor);
  }

  /** The remainder of one int by the divisor. */
  public static final class Bound implements ScalarFunction<Integer>, ReducibleFunction<Integer, Integer> {
    private static final long serialVersionUID = 1L;
    private final int divisor;

    Bound(int divisor) {
      this.divisor = divisor;
    }

    @Override
    public DataType[] inputTypes() {
      return new DataType[] {DataTypes.IntegerType};
    }

    @Override
    public DataType resultType() {
      return DataTypes.IntegerType;
    }

    @Override
    public boolean isResultNullable() {
      return false;
    }

    @Override
    public String name() {
      return "hash_mod_" + divisor;
    }

    /** Spark compares partitionings by this name: equal divisors are the same partitioning. */
    @Override
    public String canonicalName() {
      return "bucketkit.hash_mod[" + divisor + "]";
    }

    @Override
    public String toString() {
      return canonicalName();
    }

    @Override
    public Integer produceResult(InternalRow row) {
      return row.isNullAt(0) ? 0 : masked(row.getInt(0)) % divisor;
    }

    @Override
    public Reducer<Integer, Integer> reducer(int thisNumBuckets, ReducibleFunction<?, ?> other, int otherNumBuckets) {
      return reducer(other);
    }

    /* (h mod kN) mod N == h mod N: a side of kN reduces to N. */
    @Override
    public Reducer<Integer, Integer> reducer(ReducibleFunction<?, ?> other) {
      if (!(other instanceof Bound o) || divisor <= o.divisor || divisor % o.divisor != 0) {
        return null;
      }
      return new HiveBucketFunction.Modulo(o.divisor);
    }
  }
}
