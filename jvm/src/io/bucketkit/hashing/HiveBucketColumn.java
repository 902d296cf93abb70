package io.bucketkit.hashing;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.ObjectType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Hive's bucket id of a row as a Spark {@link Column}, for bucketkit.write's bucket-id column
 * ({@code bucketkit/spark/hashcol.py}): {@code bucketId(31 * h + hash(k_i) ...)} over any number of
 * key columns of any bucketable type, hashed by {@link HiveHash}.
 *
 * <p>Why an expression tree of {@link Invoke} and {@link StaticInvoke} rather than a UDF or the
 * catalog's {@link HiveBucketFunction}: both are Spark's own code-generated expressions calling a
 * Java method on Spark's internal values (a {@code UTF8String}, a {@code long}), so the column runs
 * inside whole-stage code generation with no conversion to Java's {@code String}/boxed values (a
 * Java UDF's cost) and no per-row {@code InternalRow} (a DSv2 {@code produceResult}, which Spark also
 * evaluates outside generated code). It needs no catalog, so it works in any session whose classpath
 * holds bucketkit's jar, and it takes several key columns, which the catalog's one-column functions
 * cannot. Each key is cast to the Spark type of its Hive type first; a NULL key hashes to 0, as in
 * Hive ({@code propagateNull} then {@code coalesce(..., 0)}).
 */
public final class HiveBucketColumn {
  private HiveBucketColumn() {}

  /**
   * The bucket id column (int, never NULL).
   *
   * @param keys the key columns, in bucketing order
   * @param hiveTypes their Hive types as the table declares them ({@code "varchar(20)"}, {@code "array<int>"})
   * @param version Hive bucketing version, 1 or 2
   * @param numBuckets the bucket count
   * @throws IllegalArgumentException a bad version or count, or not one type per key
   * @throws UnsupportedOperationException a type bucketkit (as Trino) cannot hash for Hive bucketing
   */
  public static Column of(Column[] keys, String[] hiveTypes, int version, int numBuckets) {
    Expression[] expressions = new Expression[keys.length];
    for (int i = 0; i < keys.length; i++) {
      expressions[i] = ExpressionUtils.expression(keys[i]);
    }
    return ExpressionUtils.column(expression(expressions, hiveTypes, version, numBuckets));
  }

  /** {@link #of}'s expression over Catalyst expressions (also the SQL function {@code bucketkit_hive_bucket}'s). */
  public static Expression expression(Expression[] keys, String[] hiveTypes, int version, int numBuckets) {
    HiveHash.checkVersion(version);
    HiveHash.bucketId(0, numBuckets);  // validates the count
    if (keys.length != hiveTypes.length || keys.length == 0) {
      throw new IllegalArgumentException("got " + keys.length + " key columns for " + hiveTypes.length + " Hive types");
    }
    Expression h = Literal.create(0, DataTypes.IntegerType);
    for (int i = 0; i < keys.length; i++) {
      HiveHash.Type type = HiveHash.Type.parse(hiveTypes[i]);
      Expression key = new Cast(keys[i], type.sparkType(), Option.empty());  // as Column.cast: the session's eval mode
      Expression hash = new Coalesce(seq(invoke(new KeyHash(type, version), key), Literal.create(0, DataTypes.IntegerType)));
      h = staticInvoke("combine", h, hash);
    }
    return staticInvoke("bucketId", h, Literal.create(numBuckets, DataTypes.IntegerType));
  }

  /** {@link HiveBucketFunction#route}{@code (bucket id of the keys, tasks)}, in generated code. */
  static Expression routed(Expression[] keys, HiveHash.Type[] types, int version, int numBuckets, int tasks) {
    String[] hiveTypes = java.util.Arrays.stream(types).map(HiveHash.Type::toString).toArray(String[]::new);
    Expression bucket = expression(keys, hiveTypes, version, numBuckets);
    return new StaticInvoke(HiveBucketFunction.class, DataTypes.IntegerType, "route",
        seq(bucket, Literal.create(tasks, DataTypes.IntegerType)),
        CollectionConverters.asScala(new ArrayList<AbstractDataType>()).toSeq(), false, false, true, Option.empty());
  }

  private static Expression invoke(KeyHash target, Expression key) {
    Expression object = Literal.create(target, new ObjectType(KeyHash.class));
    // propagateNull: a NULL key yields NULL (coalesced to Hive's 0) instead of reaching hash()
    return new Invoke(object, "hash", DataTypes.IntegerType, seq(key), CollectionConverters.asScala(new ArrayList<AbstractDataType>()).toSeq(),
        true, true, true);
  }

  private static Expression staticInvoke(String method, Expression a, Expression b) {
    return new StaticInvoke(HiveHash.class, DataTypes.IntegerType, method, seq(a, b),
        CollectionConverters.asScala(new ArrayList<AbstractDataType>()).toSeq(), false, false, true, Option.empty());
  }

  private static scala.collection.immutable.Seq<Expression> seq(Expression... items) {
    return CollectionConverters.asScala(List.of(items)).toSeq();
  }

  /**
   * One key column's Hive hash, one overload per Spark internal value class (Spark's {@link Invoke}
   * picks it by the column's type): each hands the value to {@link HiveHash} unchanged.
   */
  public static final class KeyHash implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final HiveHash.Type type;
    private final int version;
    private final boolean varchar;

    KeyHash(HiveHash.Type type, int version) {
      this.type = type;
      this.version = version;
      this.varchar = type.name.equals("varchar");
    }

    public int hash(boolean v) {
      return HiveHash.hash(v, type, version);  // Boolean.valueOf: a cached box
    }

    public int hash(byte v) {
      return HiveHash.hash(v, type, version);  // Byte.valueOf: a cached box
    }

    public int hash(short v) {
      return HiveHash.hashShort(v, version);
    }

    /** int, and date (days since 1970-01-01). */
    public int hash(int v) {
      return HiveHash.hashInt(v, version);
    }

    public int hash(long v) {
      return HiveHash.hashLong(v, version);
    }

    public int hash(float v) {
      return HiveHash.hashFloat(v, version);
    }

    public int hash(double v) {
      return HiveHash.hashDouble(v, version);
    }

    public int hash(UTF8String v) {
      return HiveHash.hashString(v, version, varchar);
    }

    public int hash(ArrayData v) {
      return HiveHash.hashArray(v, type.children[0], version);
    }

    public int hash(MapData v) {
      return HiveHash.hashMap(v, type.children[0], type.children[1], version);
    }

    @Override
    public String toString() {
      return "hive_v" + version + "_hash(" + type + ")";
    }
  }
}
