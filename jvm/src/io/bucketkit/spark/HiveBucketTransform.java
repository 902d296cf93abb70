package io.bucketkit.spark;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.Reducer;
import org.apache.spark.sql.connector.catalog.functions.ReducibleFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The partitioning transform a bucketkit scan reports: {@code bucketkit_hive_v<version>_<count>(col)}.
 *
 * <p>Why not {@code bucket(n, col)}: Spark binds a transform's function from its name and its
 * argument types only (V2ExpressionUtils.loadV2FunctionOpt), so {@code bucket} cannot know a
 * table's bucketing_version, and a v1 table would join a v2 table bucket by bucket — wrong rows.
 * A one-argument transform whose name carries version and count binds to exactly one hash; Spark
 * accepts it as key-grouped partitioning (KeyedPartitioning.supportsExpressions: one child, a
 * column), and two scans are co-partitioned only when the canonical names (family, version, type,
 * count) are equal, or, with allowCompatibleTransforms, when one count divides the other
 * ({@link ReducibleFunction}: bucket mod the smaller count).
 */
public final class HiveBucketTransform implements UnboundFunction {
  static final String PREFIX = "bucketkit_hive_v";
  private static final Pattern NAME = Pattern.compile("bucketkit_hive_v([12])_([1-9][0-9]{0,8})");

  private final int version;
  private final int buckets;

  HiveBucketTransform(int version, int buckets) {
    this.version = version;
    this.buckets = buckets;
  }

  /** The function for a transform name, or null for another name. */
  static HiveBucketTransform forName(String name) {
    Matcher m = NAME.matcher(name);
    return m.matches() ? new HiveBucketTransform(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))) : null;
  }

  static Transform transform(int version, int buckets, String column) {
    return Expressions.apply(PREFIX + version + "_" + buckets, Expressions.column(column));
  }

  /** Hive's bucket of one value (Spark's internal representation; null is bucket of hash 0). */
  static int bucketOf(int version, DataType type, Object value, int buckets) {
    return (HiveHashStandIn.hash(version, type, value) & Integer.MAX_VALUE) % buckets;
  }

  static boolean hashable(DataType type) {
    return HiveHashStandIn.supports(type);
  }

  @Override
  public String name() {
    return PREFIX + version + "_" + buckets;
  }

  @Override
  public String description() {
    return name() + "(col): Hive's bucket id (bucketing_version " + version + ") of col among " + buckets
        + " buckets";
  }

  @Override
  public BoundFunction bind(StructType inputType) {
    if (inputType.fields().length != 1 || !hashable(inputType.fields()[0].dataType())) {
      throw new UnsupportedOperationException(name() + " takes one column of a type bucketkit hashes, got "
          + inputType.simpleString());
    }
    return new Bound(version, buckets, inputType.fields()[0].dataType());
  }

  /** The bound transform: one (version, type, count). */
  public static final class Bound implements ScalarFunction<Integer>, ReducibleFunction<Integer, Integer> {
    private final int version;
    private final int buckets;
    private final DataType type;

    Bound(int version, int buckets, DataType type) {
      this.version = version;
      this.buckets = buckets;
      this.type = type;
    }

    @Override
    public DataType[] inputTypes() {
      return new DataType[] {type};
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
      return PREFIX + version + "_" + buckets;
    }

    @Override
    public String canonicalName() {
      return "bucketkit.hive.v" + version + "." + type.catalogString() + ".buckets" + buckets;
    }

    @Override
    public Integer produceResult(InternalRow input) {
      return bucketOf(version, type, input.isNullAt(0) ? null : input.get(0, type), buckets);
    }

    @Override
    public Reducer<Integer, Integer> reducer(ReducibleFunction<?, ?> other) {
      if (!(other instanceof Bound)) {
        return null;
      }
      Bound o = (Bound) other;
      if (o.version != version || !o.type.equals(type) || o.buckets >= buckets || buckets % o.buckets != 0) {
        return null;
      }
      return new ModReducer(o.buckets);  // Hive: (h & MAX) % n, and n | m, so bucket_n = bucket_m % n
    }

    @Override
    public Reducer<Integer, Integer> reducer(int thisBuckets, ReducibleFunction<?, ?> other, int otherBuckets) {
      return reducer(other);
    }
  }

  /** A bucket id among m buckets -> its bucket among n (n divides m). */
  static final class ModReducer implements Reducer<Integer, Integer>, java.io.Serializable {
    private final int target;

    ModReducer(int target) {
      this.target = target;
    }

    @Override
    public Integer reduce(Integer bucket) {
      return bucket % target;
    }

    @Override
    public DataType resultType() {
      return DataTypes.IntegerType;
    }

    @Override
    public String displayName() {
      return "mod" + target;
    }
  }
}
