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
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Hive's bucket id as a Spark function: {@code (hash & Integer.MAX_VALUE) % n} with Hive bucketing
 * v1 or v2 ({@link HiveHash}), for tables that report {@code KeyGroupedPartitioning}.
 *
 * <p>How Spark 4.3 finds it (read in V2ExpressionUtils.toCatalystTransformOpt and
 * KeyedPartitioning.supportsExpressions of the pinned jars): a partitioning transform is turned into
 * a TransformExpression by {@code catalog.loadFunction(Identifier.of([], name)).bind(inputType)},
 * where the catalog is the one that loaded the table. For {@code Expressions.bucket(n, col)} the name
 * is always {@code "bucket"} and the input type is {@code (IntegerType numBuckets, column type)}:
 * extra transform arguments are dropped, the column's type has lost char/varchar (Spark resolves
 * them to StringType) and nothing names the table. So a {@code bucket} transform cannot tell Hive
 * v1 from v2, nor v1 varchar (Text.hashCode, from 1) from string (from 0). Any other transform is
 * looked up under its own name with its own arguments, and is kept for storage-partitioned joins
 * when it has exactly one argument, a column ({@code KeyedPartitioning.supportsExpressions}); a
 * second argument such as a bucket-count literal makes Spark drop the partitioning silently.
 *
 * <p>Hence two forms of this function:
 * <ul>
 *   <li>named, per table (the one to report): {@link #transform} builds
 *       {@code Expressions.apply("hive_v2_bucket_8", column)}; the name carries the version, the
 *       bucket count and (v1 only) whether the column is a varchar, {@link #forName} parses it back
 *       in the catalog's {@code loadFunction}. Spark then compares partitionings by
 *       {@link Bound#canonicalName()} alone and reduces N vs kN buckets with the one-argument
 *       {@code reducer(other)};</li>
 *   <li>{@code bucket(n, col)} with one version for the whole catalog ({@link #HiveBucketFunction(int)}),
 *       for callers that can only use Spark's bucket transform.</li>
 * </ul>
 * A named form also binds to several columns, Hive's row hash {@code 31 * h + hash(column)} over them: a
 * write's distribution and ordering into a table bucketed on several columns ({@link #transform(int,
 * java.util.List, int, java.util.List)}), never a scan's reported partitioning (Spark keeps one-argument
 * transforms only; such scans are keyed by {@code _bucket_hash} instead).
 *
 * <p>Both bind to a {@link Bound} whose canonical name encodes family, version and hash class of the
 * column type ({@code bucketkit.hive_v2(bigint)}), so tables hashed differently never look
 * co-partitioned. Float and double keys are refused at bind time: Spark joins and groups 0.0 with
 * -0.0 but Hive hashes them into different buckets (bind's UnsupportedOperationException makes
 * Spark read such a table without a reported partitioning, which stays correct).
 */
public final class HiveBucketFunction implements UnboundFunction {
  /** The name Spark looks up for {@code Expressions.bucket(n, col)}. */
  public static final String BUCKET = "bucket";
  private static final Pattern NAMED = Pattern.compile(
      "hive_v([12])_(varchar_)?bucket_([1-9][0-9]{0,8})(?:_route_([1-9][0-9]{0,4}))?");

  private final String name;
  private final int version;
  private final boolean varchar;
  private final int numBuckets;  // -1: the count is the first argument (bucket(n, col))
  private final int route;  // > 0: the routed form ({@link #routeTransform}): the tasks it routes to

  /** The {@code bucket(numBuckets, col)} form, hashing with {@code version} for every table. */
  public HiveBucketFunction(int version) {
    this(BUCKET, version, false, -1, 0);
  }

  private HiveBucketFunction(String name, int version, boolean varchar, int numBuckets, int route) {
    HiveHash.checkVersion(version);
    this.name = name;
    this.version = version;
    this.varchar = varchar;
    this.numBuckets = numBuckets;
    this.route = route;
  }

  /**
   * The function of one of bucketkit's transform names, for a catalog's {@code loadFunction}: a Hive bucket
   * function ({@link #nameFor}) or {@link HashModulo}; null when the name is neither.
   */
  public static UnboundFunction named(String name) {
    UnboundFunction f = forName(name);
    return f != null ? f : HashModulo.forName(name);
  }

  /** The function a name from {@link #nameFor} stands for, or null when the name is not one of ours. */
  public static HiveBucketFunction forName(String name) {
    Matcher m = NAMED.matcher(name);
    if (!m.matches()) {
      return null;
    }
    return new HiveBucketFunction(name, Integer.parseInt(m.group(1)), m.group(2) != null, Integer.parseInt(m.group(3)),
        m.group(4) == null ? 0 : Integer.parseInt(m.group(4)));
  }

  /**
   * The function name for a table's bucketing: {@code hive_v<version>[_varchar]_bucket_<n>}
   * ({@code _varchar} only for v1, the one version that hashes varchar and string differently).
   *
   * @throws UnsupportedOperationException v1 with a varchar nested in an array or map (not expressible)
   */
  public static String nameFor(int version, String hiveType, int numBuckets) {
    HiveHash.checkVersion(version);
    HiveHash.bucketId(0, numBuckets);  // validates the count
    HiveHash.Type type = HiveHash.Type.parse(hiveType);
    boolean varchar = version == 1 && type.name.equals("varchar");
    if (version == 1 && !varchar && type.toString().contains("varchar")) {
      throw new UnsupportedOperationException("Hive type " + hiveType + ": bucketing v1 hashes a varchar inside an "
          + "array or map unlike a string, and Spark's column type no longer says which it is");
    }
    return "hive_v" + version + (varchar ? "_varchar" : "") + "_bucket_" + numBuckets;
  }

  /**
   * The function name for a table bucketed by several columns of {@code hiveTypes}: {@code hive_v<version>_bucket_<n>},
   * bound to as many arguments ({@link #bind}); Hive's row hash {@code 31 * h + hash(column)} over them.
   *
   * @throws UnsupportedOperationException v1 with a varchar key (the name cannot say which of the columns it is)
   */
  public static String nameFor(int version, java.util.List<String> hiveTypes, int numBuckets) {
    if (hiveTypes.size() == 1) {
      return nameFor(version, hiveTypes.get(0), numBuckets);
    }
    for (String t : hiveTypes) {  // each type validated (and the version and count) as one key's would be
      if (nameFor(version, t, numBuckets).contains("_varchar_")) {
        throw new UnsupportedOperationException("Hive type " + t + ": bucketing v1 hashes a varchar unlike a string, and "
            + "Spark's column types no longer say which of several bucket columns is one");
      }
    }
    return "hive_v" + version + "_bucket_" + numBuckets;
  }

  /** The transform a table reports in its KeyGroupedPartitioning (and a partitioned table's write distribution). */
  public static Transform transform(int version, String hiveType, int numBuckets, String column) {
    return Expressions.apply(nameFor(version, hiveType, numBuckets), FieldReference.column(column));
  }

  /**
   * The bucket id of a row bucketed by several columns, as a transform of a write's distribution and ordering
   * (never reported as a scan's partitioning: Spark keys a scan by one-argument transforms only).
   */
  public static Transform transform(int version, java.util.List<String> hiveTypes, int numBuckets,
                                    java.util.List<String> columns) {
    return Expressions.apply(nameFor(version, hiveTypes, numBuckets), references(columns));
  }

  private static FieldReference[] references(java.util.List<String> columns) {
    return columns.stream().map(FieldReference::column).toArray(FieldReference[]::new);
  }

  /**
   * The write distribution of an unpartitioned table written by {@code tasks} tasks: a transform
   * whose value Spark's hash partitioning ({@code pmod(murmur3(value, 42), tasks)}, how it clusters
   * a write) sends to task {@code bucket % tasks}, so each task gets an equal share of the buckets.
   * Clustered by the bucket id itself, Spark's hash put 64 buckets into 8 tasks as 5 to 12 each:
   * the write lasted as long as its largest task. Named {@code <nameFor>_route_<tasks>}.
   */
  public static Transform routeTransform(int version, String hiveType, int numBuckets, int tasks, String column) {
    return routeTransform(version, java.util.List.of(hiveType), numBuckets, tasks, java.util.List.of(column));
  }

  /** {@link #routeTransform} of a row bucketed by one or several columns. */
  public static Transform routeTransform(int version, java.util.List<String> hiveTypes, int numBuckets, int tasks,
                                         java.util.List<String> columns) {
    if (tasks < 1 || tasks > 99_999) {
      throw new IllegalArgumentException("bucketkit: a write's task count must be 1 to 99999, got " + tasks);
    }
    return Expressions.apply(nameFor(version, hiveTypes, numBuckets) + "_route_" + tasks, references(columns));
  }

  @Override
  public String name() {
    return name;
  }

  /** The bucket count a named form carries ({@code hive_v2_bucket_8}: 8), or -1 for {@code bucket(n, col)}. */
  public int numBuckets() {
    return numBuckets;
  }

  @Override
  public String description() {
    return name + (numBuckets < 0 ? "(numBuckets, col)" : "(col)") + ": Hive bucketing v" + version
        + " bucket id, (hash & Integer.MAX_VALUE) % numBuckets, as Hive and Trino place rows"
        + (route > 0 ? "; routed: an int that Spark's hash partitioning into " + route + " sends to bucket % " + route : "");
  }

  /**
   * Binds to a column type, or, for a named form, to the types of several bucket columns (in CLUSTERED BY order).
   *
   * @throws UnsupportedOperationException the arguments are not ({@code int}, column) for
   *     {@code bucket} or (column, ...) for a named form, or a column cannot be bucketed on here
   */
  @Override
  public BoundFunction bind(StructType inputType) {
    StructField[] fields = inputType.fields();
    boolean several = numBuckets >= 0 && fields.length > 1 && !varchar;
    int expected = numBuckets < 0 ? 2 : several ? fields.length : 1;
    if (fields.length != expected || (numBuckets < 0 && !(fields[0].dataType() instanceof IntegerType))) {
      throw new UnsupportedOperationException(name + " takes " + (numBuckets < 0 ? "(int numBuckets, column)"
          : varchar ? "(column)" : "(column, ...)") + ", got " + inputType.simpleString());
    }
    int first = numBuckets < 0 ? 1 : 0;
    HiveHash.Type[] types = new HiveHash.Type[fields.length - first];
    for (int i = first; i < fields.length; i++) {
      DataType column = fields[i].dataType();
      HiveHash.Type type = HiveHash.Type.fromSpark(column);
      if (varchar && type.name.equals("string")) {
        type = HiveHash.Type.parse("varchar");
      } else if (varchar) {
        throw new UnsupportedOperationException(name + " hashes a varchar column, got " + column.simpleString());
      }
      if (type.hasFloatingPoint()) {
        throw new UnsupportedOperationException(name + " on a " + column.simpleString() + " column: Spark treats 0.0 "
            + "and -0.0 as one key but Hive hashes them into different buckets, so the bucketing cannot be reported");
      }
      types[i - first] = type;
    }
    DataType[] inputs = new DataType[fields.length];
    for (int i = 0; i < fields.length; i++) {
      inputs[i] = fields[i].dataType();
    }
    return new Bound(name, version, types, numBuckets, inputs, route);
  }

  /** Hive's bucket id for one column type (or a row of several bucket columns' types) and version. */
  public static final class Bound implements ScalarFunction<Integer>, ReducibleFunction<Integer, Integer> {
    private static final long serialVersionUID = 1L;
    private final String name;
    private final int version;
    private final HiveHash.Type type;  // the first (for one bucket column, the only) column's
    private final HiveHash.Type[] types;  // every bucket column's, in CLUSTERED BY order
    private final DataType valueType;
    private final DataType[] valueTypes;
    private final int numBuckets;
    private final DataType[] inputs;
    private final int fast;  // HiveHash.Type.unboxed(): the common key types read unboxed
    private final int[] fasts;
    private final int[] routes;  // the routed form: routes[t] goes to task t of routes.length (else null)
    private final int[] arguments;  // several bucket columns: their ordinals among the arguments (0, 1, ...)

    Bound(String name, int version, HiveHash.Type[] types, int numBuckets, DataType[] inputs, int route) {
      this.name = name;
      this.version = version;
      this.types = types;
      this.type = types[0];
      this.valueTypes = java.util.Arrays.stream(types).map(HiveHash.Type::sparkType).toArray(DataType[]::new);
      this.valueType = valueTypes[0];
      this.numBuckets = numBuckets;
      this.inputs = inputs;
      this.fasts = java.util.Arrays.stream(types).mapToInt(HiveHash.Type::unboxed).toArray();
      this.fast = fasts[0];
      this.routes = route > 0 ? routingKeys(route) : null;
      this.arguments = java.util.stream.IntStream.range(0, types.length).toArray();
    }

    /**
     * For each task {@code t < tasks} the first int whose Spark hash partition among {@code tasks} is
     * {@code t}: {@code pmod(Murmur3_x86_32.hashInt(v, 42), tasks)}, what Spark's {@code HashPartitioning}
     * computes for an int (bucketkit.spark.writer.routing_keys does the same for bucketkit.write).
     */
    public static int[] routingKeys(int tasks) {
      return ROUTES.computeIfAbsent(tasks, Bound::findRoutingKeys);
    }

    private static final java.util.concurrent.ConcurrentHashMap<Integer, int[]> ROUTES =
        new java.util.concurrent.ConcurrentHashMap<>();

    private static int[] findRoutingKeys(int tasks) {
      int[] out = new int[tasks];
      java.util.Arrays.fill(out, -1);
      int found = 0;
      for (int v = 0; found < tasks; v++) {
        int t = Math.floorMod(org.apache.spark.unsafe.hash.Murmur3_x86_32.hashInt(v, 42), tasks);
        if (out[t] < 0) {
          out[t] = v;
          found++;
        }
      }
      return out;
    }

    @Override
    public DataType[] inputTypes() {
      return inputs;
    }

    @Override
    public DataType resultType() {
      return DataTypes.IntegerType;
    }

    @Override
    public boolean isResultNullable() {
      return false;  // NULL hashes to 0 as in Hive: its rows sit in bucket 0
    }

    @Override
    public String name() {
      return name;
    }

    /**
     * {@code bucketkit.hive_v<version>(<hash class>)}, plus {@code [n]} in the named form (Spark
     * compares only this name there; for {@code bucket(n, col)} it compares n itself).
     */
    @Override
    public String canonicalName() {
      return "bucketkit.hive_v" + version + "(" + hashClasses() + ")" + (numBuckets < 0 ? "" : "[" + numBuckets + "]")
          + (routes == null ? "" : " routed to " + routes.length + " tasks");
    }

    /** What EXPLAIN shows for the transform, e.g. {@code bucketkit.hive_v2(bigint)[8]}. */
    @Override
    public String toString() {
      return canonicalName();
    }

    private String hashClasses() {
      return String.join(",", java.util.Arrays.stream(types).map(t -> t.hashClass(version)).toList());
    }

    /* No magic invoke(...) methods: Spark calls them with primitive arguments, where a NULL key
       cannot be told from 0, and Hive's v2 hash of 0 is not NULL's 0. */
    @Override
    public Integer produceResult(InternalRow row) {
      int b = types.length > 1 ? bucketOf(row, arguments, numBuckets)
          : bucketOf(row, numBuckets < 0 ? 1 : 0, numBuckets < 0 ? row.getInt(0) : numBuckets);
      return routes == null ? b : routes[b % routes.length];
    }

    /** The bucket among {@code n} of the value at {@code v} of {@code row} (a null is NULL); one bucket column. */
    public int bucketOf(InternalRow row, int v, int n) {
      // Spark evaluates this for every row a shuffle moves into the table's buckets
      return HiveHash.bucketId(HiveHash.hashAt(row, v, type, fast, valueType, version), n);
    }

    /**
     * The bucket among {@code n} of the row whose bucket columns sit at {@code ordinals} of {@code row}, in CLUSTERED
     * BY order (Hive's {@code 31 * h + hash(column)} over several; a null is NULL).
     */
    public int bucketOf(InternalRow row, int[] ordinals, int n) {
      return HiveHash.bucketId(HiveHash.hashRowAt(row, ordinals, types, fasts, valueTypes, version), n);
    }

    /** Whether {@code other} hashes every value as this function does (its bucket count aside). */
    public boolean hashesAs(Bound other) {
      return version == other.version && hashClasses().equals(other.hashClasses());
    }

    /** The bucket count (negative: the count is the function's first argument). */
    public int numBuckets() {
      return numBuckets;
    }

    /**
     * The routed form as an expression Spark generates code for ({@link HiveBucketColumn}'s bucket id,
     * then {@link #route}), or null for the plain form. Spark evaluates a V2 function without a
     * magic method row by row, boxing each key; a write's shuffle runs this once a row.
     */
    public org.apache.spark.sql.catalyst.expressions.Expression routedExpression(
        org.apache.spark.sql.catalyst.expressions.Expression... keys) {
      if (routes == null || numBuckets < 1 || keys.length != types.length) {
        return null;
      }
      return HiveBucketColumn.routed(keys, types, version, numBuckets, routes.length);
    }

    /** The bucket of one Spark internal value (a null is NULL). */
    public int bucketOf(Object value, int n) {
      return HiveHash.bucketId(HiveHash.hash(value, type, version), n);
    }

    @Override
    public Reducer<Integer, Integer> reducer(int thisNumBuckets, ReducibleFunction<?, ?> other, int otherNumBuckets) {
      return reduceTo(thisNumBuckets, other, otherNumBuckets);
    }

    @Override
    public Reducer<Integer, Integer> reducer(ReducibleFunction<?, ?> other) {
      return other instanceof Bound ? reduceTo(numBuckets, other, ((Bound) other).numBuckets) : null;
    }

    /* Bucket b of kN buckets holds hashes with (h & MAX) % kN == b, so (h & MAX) % N == b % N:
       valid because Hive's bucket id is a non-negative modulus of the same masked hash. */
    private Reducer<Integer, Integer> reduceTo(int thisNumBuckets, ReducibleFunction<?, ?> other, int otherNumBuckets) {
      if (!(other instanceof Bound) || !sameHash((Bound) other) || thisNumBuckets <= otherNumBuckets
          || otherNumBuckets < 1 || thisNumBuckets % otherNumBuckets != 0) {
        return null;
      }
      return new Modulo(otherNumBuckets);
    }

    private boolean sameHash(Bound other) {  // bucket ids both ways: routed values do not reduce
      return routes == null && other.routes == null && hashesAs(other);
    }
  }

  /**
   * The buckets among {@code n} that hold the rows whose hash taken into {@code y} buckets is {@code b}
   * (Hive's {@code TABLESAMPLE (BUCKET b+1 OUT OF y)}), or null where they are not whole buckets. A row of
   * hash h is in bucket {@code h mod n}: {@code h mod y = b} puts it in a bucket {@code b mod y} of the n
   * when y divides n, and in bucket {@code b mod n} when n divides y. None when no hash value is b.
   */
  public static java.util.BitSet sampledBuckets(int b, int y, int n) {
    java.util.BitSet out = new java.util.BitSet();
    if (b < 0 || b >= y) {
      return out;
    }
    if (n % y == 0) {
      for (int i = b; i < n; i += y) {
        out.set(i);
      }
      return out;
    }
    if (y % n == 0) {
      out.set(b % n);
      return out;
    }
    return null;
  }

  /** The int Spark's hash partitioning into {@code tasks} sends to task {@code bucket % tasks} (generated code calls it). */
  public static int route(int bucket, int tasks) {
    return Bound.routingKeys(tasks)[bucket % tasks];
  }

  /** Reduces a bucket id of kN buckets to the bucket of N that holds the same hashes. */
  public static final class Modulo implements Reducer<Integer, Integer>, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final int divisor;

    Modulo(int divisor) {
      this.divisor = divisor;
    }

    @Override
    public Integer reduce(Integer bucket) {
      return bucket % divisor;
    }

    // Reducer's resultType and displayName are in Spark 4.3's interface, not in 4.0's: not marked
    // @Override, so that the class compiles against both (in 4.0 they are plain methods).
    public DataType resultType() {
      return DataTypes.IntegerType;
    }

    public String displayName() {
      return "bucket % " + divisor;
    }
  }
}
