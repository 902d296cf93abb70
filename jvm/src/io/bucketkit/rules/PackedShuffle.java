package io.bucketkit.rules;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.hashing.HiveHash;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.ApplyFunctionExpression;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.plans.physical.CoalescedHashPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.unsafe.Platform;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A write's shuffle that moves its rows packed: each map task appends the rows bound for one reduce
 * task to a buffer of up to 1 MB (its {@code UnsafeRow} bytes behind an 8-byte size), and Spark's
 * shuffle moves those buffers, one record each; the reduce side points its rows into them in place.
 * The same rows reach the same tasks ({@code HashPartitioning.partitionIdExpression} of the write's own
 * clustering picks each row's buffer, and the buffer travels under an int Spark's hash sends to that
 * task), but the shuffle's per-row work — a record's size read from a synchronized stream, its checksum,
 * metrics and boxed partition id — is paid per megabyte: a 10M-row SQL {@code INSERT} in 3.0 s instead of
 * 3.9 s (docs/writing.md, step 3).
 *
 * <p>{@link WriteFromAlikeBuckets} (the rule that owns a write's shuffle) applies it to a shuffle that
 * clusters by a bucket id, the shuffle of a bucketkit write ({@link #clustersByBucket}). Memory: at most
 * {@link #BUDGET} bytes of buffers per map task, so a task of many reduce tasks packs smaller buffers,
 * and a shuffle into more than 2,048 tasks stays Spark's plain one.
 * Off with {@code spark.bucketkit.packedWriteShuffle=false}.
 */
public final class PackedShuffle {
  static final String ENABLED = "spark.bucketkit.packedWriteShuffle";
  /** The largest buffer (a shuffle record) and what a map task's buffers may hold together. */
  static final int LARGEST = (1 << 20) - (4 << 10);  // a record and its size within one 1 MB page of the shuffle
  static final int BUDGET = 32 << 20;
  /** The first size of a buffer, and the smallest worth packing (more reduce tasks: Spark's plain shuffle). */
  private static final int FIRST = 64 << 10;
  private static final int SMALLEST = 16 << 10;
  /** An UnsafeRow of (route int, blob binary): null bits, two fixed slots; the blob follows. */
  private static final int HEADER = 24;

  private PackedShuffle() {}

  /** Whether the session packs write shuffles ({@link #ENABLED}). */
  static boolean enabled(org.apache.spark.sql.internal.SQLConf conf) {
    return Boolean.parseBoolean(conf.getConfString(ENABLED, "true"));
  }

  /**
   * {@code exchange} with its rows moved packed where it clusters by a bucket id ({@link #clustersByBucket})
   * and the session packs, else {@code exchange}.
   */
  static SparkPlan of(ShuffleExchangeExec exchange, org.apache.spark.sql.internal.SQLConf conf) {
    if (!enabled(conf) || !clustersByBucket(exchange.outputPartitioning())
        || !(exchange.outputPartitioning() instanceof HashPartitioning hash) || hash.numPartitions() < 1
        || hash.numPartitions() > BUDGET / SMALLEST || !hash.deterministic()) {
      // buffers too small to pay, or a nondeterministic clustering (computed once a row by Spark's shuffle)
      return exchange;
    }
    AttributeReference route = attribute("route", DataTypes.IntegerType);
    AttributeReference blob = attribute("blob", DataTypes.BinaryType);
    PackRowsExec pack = new PackRowsExec(exchange.child(), hash, route, blob);
    Object[] args = CollectionConverters.asJava(exchange.productIterator().toList()).toArray();
    args[0] = new HashPartitioning(seq(route), hash.numPartitions());
    args[1] = pack;
    ShuffleExchangeExec moved = (ShuffleExchangeExec) exchange.makeCopy(args);
    UnpackRowsExec unpack = new UnpackRowsExec(moved, exchange.child().output(), hash);
    if (exchange.logicalLink().isDefined()) {
      moved.setLogicalLink(exchange.logicalLink().get());
      unpack.setLogicalLink(exchange.logicalLink().get());
    }
    return unpack;
  }

  /**
   * Whether {@code partitioning} (an exchange's, a repartition's) clusters by a bucket id: a bucketkit bucket function (the SQL write's
   * clustering) or Hive's bucket id as {@link io.bucketkit.hashing.HiveBucketColumn} computes it (the routed SQL write,
   * {@code bucketkit.write}).
   */
  private static boolean clustersByBucket(Partitioning partitioning) {
    return partitioning instanceof HashPartitioning hash
        && hash.exists(new scala.runtime.AbstractFunction1<Expression, Object>() {
          @Override
          public Object apply(Expression e) {
            return e instanceof ApplyFunctionExpression call && call.function() instanceof HiveBucketFunction.Bound
                || e instanceof StaticInvoke invoke && invoke.staticObject() == HiveHash.class
                   && invoke.functionName().equals("bucketId");
          }
        });
  }

  private static AttributeReference attribute(String name, org.apache.spark.sql.types.DataType type) {
    return new AttributeReference(name, type, false, Metadata.empty(),
        org.apache.spark.sql.catalyst.expressions.NamedExpression$.MODULE$.newExprId(),
        CollectionConverters.asScala(new ArrayList<String>()).toSeq());
  }

  private static <T> scala.collection.immutable.Seq<T> seq(T item) {
    return CollectionConverters.asScala(List.of(item)).toSeq();
  }

  @SuppressWarnings("unchecked")
  private static scala.collection.immutable.Seq<Expression> asExpressions(scala.collection.immutable.Seq<Attribute> attributes) {
    return (scala.collection.immutable.Seq<Expression>) (scala.collection.immutable.Seq<?>) attributes;
  }

  /**
   * {@link #of} in a session without bucketkit's extensions (a user's own {@code SparkSession}): a planner strategy,
   * added to the session's {@code experimental().extraStrategies} by {@link #install}, that plans a repartition
   * clustering by a bucket id ({@code bucketkit.write}'s shuffle) as Spark does, then packs it. Any other plan is
   * left to Spark's strategies.
   */
  public static final class PlainSessionStrategy extends org.apache.spark.sql.execution.SparkStrategy {
    @Override
    public scala.collection.immutable.Seq<SparkPlan> apply(org.apache.spark.sql.catalyst.plans.logical.LogicalPlan plan) {
      if (!(plan instanceof org.apache.spark.sql.catalyst.plans.logical.RepartitionByExpression repartition)
          || !clustersByBucket(repartition.partitioning())) {  // any other repartition: Spark's strategies alone
        return CollectionConverters.asScala(new ArrayList<SparkPlan>()).toList();
      }
      org.apache.spark.sql.classic.SparkSession spark = org.apache.spark.sql.classic.SparkSession.active();
      scala.collection.immutable.Seq<SparkPlan> planned = spark.sessionState().planner().BasicOperators().apply(plan);
      if (planned.size() == 1 && planned.head() instanceof ShuffleExchangeExec exchange) {
        SparkPlan packed = of(exchange, spark.sessionState().conf());
        if (packed != exchange) {
          return seq(packed);
        }
      }
      return CollectionConverters.asScala(new ArrayList<SparkPlan>()).toList();
    }
  }

  /** Adds {@link PlainSessionStrategy} to {@code spark}'s extra strategies, once; returns whether it is there now. */
  public static synchronized boolean install(org.apache.spark.sql.classic.SparkSession spark) {
    org.apache.spark.sql.ExperimentalMethods experimental = spark.experimental();
    List<org.apache.spark.sql.execution.SparkStrategy> strategies =
        new ArrayList<>(CollectionConverters.asJava(experimental.extraStrategies()));
    if (strategies.stream().noneMatch(s -> s instanceof PlainSessionStrategy)) {
      strategies.add(new PlainSessionStrategy());
      experimental.extraStrategies_$eq(CollectionConverters.asScala(strategies).toList());
    }
    return true;
  }

  /** A buffer's size for {@code tasks} reduce tasks: 1 MB, less where that many would pass the budget. */
  static int largest(int tasks) {
    return Math.min(LARGEST, BUDGET / Math.max(1, tasks));
  }

  /** The map side: the child's rows as (route, blob) records, one per full buffer and one per task at the end. */
  public static final class PackRowsExec extends PlanNode {
    private final SparkPlan child;
    private final HashPartitioning clustering;
    private final AttributeReference route;
    private final AttributeReference blob;

    public PackRowsExec(SparkPlan child, HashPartitioning clustering, AttributeReference route, AttributeReference blob) {
      this.child = child;
      this.clustering = clustering;
      this.route = route;
      this.blob = blob;
    }

    @Override
    public scala.collection.immutable.Seq<Attribute> output() {
      return CollectionConverters.asScala(List.<Attribute>of(route, blob)).toSeq();
    }

    @Override
    Object[] args() {
      return new Object[] {child, clustering, route, blob};
    }

    @Override
    scala.collection.immutable.Seq<Attribute> made() {
      return output();
    }

    @Override
    SparkPlan withChild(SparkPlan newChild) {
      return new PackRowsExec(newChild, clustering, route, blob);
    }

    @Override
    String describe() {
      return "PackRows " + clustering + " [buffers of " + (largest(clustering.numPartitions()) >> 10) + " KB]";
    }

    @Override
    public RDD<InternalRow> doExecute() {
      int tasks = clustering.numPartitions();
      Expression partitionId = clustering.partitionIdExpression();
      scala.collection.immutable.Seq<Attribute> input = child.output();
      int[] routes = HiveBucketFunction.Bound.routingKeys(tasks);
      int largest = largest(tasks);
      return child.execute().toJavaRDD().mapPartitions((FlatMapFunction<Iterator<InternalRow>, InternalRow>) rows ->
          new Packer(rows, UnsafeProjection.create(seq(partitionId), input), input, routes, largest)).rdd();
    }
  }

  /** The reduce side: the rows of the blobs, each pointed into its blob in place. */
  public static final class UnpackRowsExec extends PlanNode {
    private final SparkPlan child;
    private final scala.collection.immutable.Seq<Attribute> rows;
    private final HashPartitioning clustering;

    public UnpackRowsExec(SparkPlan child, scala.collection.immutable.Seq<Attribute> rows, HashPartitioning clustering) {
      this.child = child;
      this.rows = rows;
      this.clustering = clustering;
    }

    @Override
    public scala.collection.immutable.Seq<Attribute> output() {
      return rows;
    }

    /**
     * The clustering the packed shuffle replaced, as its read reports it: whole, or coalesced by adaptive
     * execution into the same boundaries; any other read (split, local) of unknown partitioning.
     */
    @Override
    public Partitioning outputPartitioning() {
      Partitioning moved = child.outputPartitioning();
      if (moved instanceof HashPartitioning h && byRoute(h)) {
        return clustering;
      }
      if (moved instanceof CoalescedHashPartitioning c && byRoute(c.from())) {
        return new CoalescedHashPartitioning(clustering, c.partitions());
      }
      return new UnknownPartitioning(moved.numPartitions());
    }

    private boolean byRoute(HashPartitioning moved) {
      return moved.numPartitions() == clustering.numPartitions() && moved.expressions().size() == 1
          && moved.expressions().head() instanceof Attribute a
          && a.exprId().equals(child.output().head().exprId());
    }

    @Override
    Object[] args() {
      return new Object[] {child, rows, clustering};
    }

    @Override
    scala.collection.immutable.Seq<Attribute> made() {
      return rows;
    }

    @Override
    SparkPlan withChild(SparkPlan newChild) {
      return new UnpackRowsExec(newChild, rows, clustering);
    }

    @Override
    String describe() {
      return "UnpackRows " + rows.mkString("[", ", ", "]");
    }

    @Override
    public RDD<InternalRow> doExecute() {
      int fields = rows.size();
      return child.execute().toJavaRDD().mapPartitions(
          (FlatMapFunction<Iterator<InternalRow>, InternalRow>) blobs -> new Unpacker(blobs, fields)).rdd();
    }
  }

  /**
   * Adaptive execution coalesces a shuffle by its bytes, but a write's cost follows its files: 100k rows
   * into 4 partitions of 64 buckets were read by one task that wrote all 256 files in turn (4.4-4.9 s,
   * against Spark's own INSERT's 3.3-3.7 s, whose input tasks write in parallel). Where a packed
   * shuffle's read was coalesced into fewer tasks than the session's default parallelism, this rule (a
   * query stage optimizer rule, after Spark's coalescing) reads it again in
   * {@code min(reducers, parallelism)} tasks of contiguous reducers, equal in count: the same
   * partitioning, coalesced less.
   */
  public static final class SpreadTasks extends org.apache.spark.sql.catalyst.rules.Rule<SparkPlan> {
    @Override
    public SparkPlan apply(SparkPlan plan) {
      if (!enabled(conf())) {
        return plan;
      }
      int parallelism = plan.session().sparkContext().defaultParallelism();
      return plan.transformUp(new scala.runtime.AbstractPartialFunction<SparkPlan, SparkPlan>() {
        @Override
        public boolean isDefinedAt(SparkPlan p) {
          return p instanceof UnpackRowsExec;
        }

        @Override
        public SparkPlan apply(SparkPlan p) {
          UnpackRowsExec u = (UnpackRowsExec) p;
          SparkPlan read = spread(u, parallelism);
          return read == null ? u : u.withChild(read);
        }
      });
    }

    /** The read of {@code unpack}'s shuffle in more tasks, or null where it is not coalesced below {@code parallelism}. */
    private static SparkPlan spread(UnpackRowsExec unpack, int parallelism) {
      if (!(unpack.child() instanceof org.apache.spark.sql.execution.adaptive.AQEShuffleReadExec read)
          || !(read.child() instanceof org.apache.spark.sql.execution.adaptive.ShuffleQueryStageExec stage)
          || stage.mapStats().isEmpty()) {
        return null;
      }
      List<org.apache.spark.sql.execution.ShufflePartitionSpec> specs = CollectionConverters.asJava(read.partitionSpecs());
      long[] bytes = stage.mapStats().get().bytesByPartitionId();
      int tasks = Math.min(bytes.length, parallelism);
      if (specs.size() >= tasks || !specs.stream().allMatch(
          spec -> spec instanceof org.apache.spark.sql.execution.CoalescedPartitionSpec)) {
        return null;
      }
      List<org.apache.spark.sql.execution.ShufflePartitionSpec> spread = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        int start = (int) ((long) t * bytes.length / tasks);
        int end = (int) ((long) (t + 1) * bytes.length / tasks);
        long size = 0;
        for (int r = start; r < end; r++) {
          size += bytes[r];
        }
        spread.add(new org.apache.spark.sql.execution.CoalescedPartitionSpec(start, end, scala.Option.apply(size)));
      }
      return new org.apache.spark.sql.execution.adaptive.AQEShuffleReadExec(stage,
          CollectionConverters.asScala(spread).toSeq());
    }
  }

  /** Rows into per-task buffers; a full buffer (or, at the end, each non-empty one) out as a (route, blob) row. */
  private static final class Packer implements Iterator<InternalRow> {
    private final Iterator<InternalRow> in;
    private final UnsafeProjection partitionId;
    private final scala.collection.immutable.Seq<Attribute> input;
    private UnsafeProjection unsafe;  // for rows that are not UnsafeRows, made when the first comes
    private final int[] routes;
    private final int largest;
    private final byte[][] buffers;
    private final int[] used;
    private final UnsafeRow out = new UnsafeRow(2);
    private UnsafeRow ready;
    private int handedOut = -1;  // the buffer `out` points into: emptied once the consumer asks for more
    private UnsafeRow waiting;  // a row that found its buffer full, appended once that buffer is out
    private int waitingTask;
    private int flushed;

    Packer(Iterator<InternalRow> in, UnsafeProjection partitionId, scala.collection.immutable.Seq<Attribute> input,
           int[] routes, int largest) {
      this.in = in;
      this.partitionId = partitionId;
      this.input = input;
      this.routes = routes;
      this.largest = largest;
      this.buffers = new byte[routes.length][];
      this.used = new int[routes.length];
    }

    @Override
    public boolean hasNext() {
      if (ready == null) {
        ready = advance();
      }
      return ready != null;
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      UnsafeRow r = ready;
      ready = null;
      return r;
    }

    private UnsafeRow advance() {
      if (handedOut >= 0) {
        used[handedOut] = HEADER;
        if (buffers[handedOut].length > largest) {
          buffers[handedOut] = null;  // grown for a row larger than a buffer: not kept at that size
        }
        handedOut = -1;
      }
      if (waiting != null) {
        append(waitingTask, waiting);
        waiting = null;
      }
      while (in.hasNext()) {
        InternalRow next = in.next();
        UnsafeRow row = next instanceof UnsafeRow u ? u : unsafe(next);
        int task = partitionId.apply(row).getInt(0);
        if (used[task] > HEADER && used[task] + 8L + row.getSizeInBytes() > largest) {
          waiting = row;
          waitingTask = task;
          return handOut(task);
        }
        append(task, row);
      }
      while (flushed < buffers.length) {
        int task = flushed++;
        if (used[task] > HEADER) {
          return handOut(task);
        }
      }
      return null;
    }

    private UnsafeRow unsafe(InternalRow row) {
      if (unsafe == null) {
        unsafe = UnsafeProjection.create(asExpressions(input), input);
      }
      return unsafe.apply(row);
    }

    private void append(int task, UnsafeRow row) {
      int size = row.getSizeInBytes();
      byte[] buffer = buffers[task];
      if (buffer == null) {
        used[task] = HEADER;  // a task's first row, or the first after a large row's buffer
      }
      long need = used[task] + 8L + size;
      if (buffer == null || need > buffer.length) {
        if (need > Integer.MAX_VALUE - 16) {
          throw new IllegalStateException("a row of " + size + " bytes does not fit a shuffle record");
        }
        long grown = Math.max(need, Math.min(largest, buffer == null ? FIRST : 2L * buffer.length));
        byte[] larger = new byte[(int) grown];
        if (buffer != null) {
          System.arraycopy(buffer, 0, larger, 0, used[task]);
        }
        buffers[task] = buffer = larger;
      }
      long at = Platform.BYTE_ARRAY_OFFSET + used[task];
      Platform.putLong(buffer, at, size);
      row.writeToMemory(buffer, at + 8);
      used[task] += 8 + size;
    }

    private UnsafeRow handOut(int task) {
      byte[] buffer = buffers[task];
      long base = Platform.BYTE_ARRAY_OFFSET;
      Platform.putLong(buffer, base, 0L);  // no nulls
      Platform.putLong(buffer, base + 8, 0L);
      Platform.putInt(buffer, base + 8, routes[task]);
      Platform.putLong(buffer, base + 16, ((long) HEADER << 32) | (used[task] - HEADER));
      out.pointTo(buffer, used[task]);  // every entry is a multiple of 8 bytes: so is the row
      handedOut = task;
      return out;
    }
  }

  /** The rows of each (route, blob) record, pointed into it in place (valid until the next row is asked for). */
  private static final class Unpacker implements Iterator<InternalRow> {
    private final Iterator<InternalRow> blobs;
    private final UnsafeRow row;
    private Object base;
    private long at;
    private long end;

    Unpacker(Iterator<InternalRow> blobs, int fields) {
      this.blobs = blobs;
      this.row = new UnsafeRow(fields);
    }

    @Override
    public boolean hasNext() {
      while (at >= end && blobs.hasNext()) {
        InternalRow record = blobs.next();
        if (record instanceof UnsafeRow packed) {
          long offsetAndSize = packed.getLong(1);
          base = packed.getBaseObject();
          at = packed.getBaseOffset() + (offsetAndSize >>> 32);
          end = at + (int) offsetAndSize;
        } else {
          byte[] bytes = record.getBinary(1);
          base = bytes;
          at = Platform.BYTE_ARRAY_OFFSET;
          end = at + bytes.length;
        }
      }
      return at < end;
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      int size = (int) Platform.getLong(base, at);
      row.pointTo(base, at + 8, size);
      at += 8 + size;
      return row;
    }
  }

  /**
   * A one-child physical node written in Java: Spark's tree operations ({@code withNewChildren},
   * {@code makeCopy} from the product, equality) over its constructor's arguments ({@link #args}, the
   * child first); the attributes it makes ({@link #made}) are not missing input.
   */
  public abstract static class PlanNode extends SparkPlan {
    abstract Object[] args();

    abstract SparkPlan withChild(SparkPlan newChild);

    abstract String describe();

    abstract scala.collection.immutable.Seq<Attribute> made();

    SparkPlan child() {
      return (SparkPlan) args()[0];
    }

    @Override
    public org.apache.spark.sql.catalyst.expressions.AttributeSet producedAttributes() {
      return org.apache.spark.sql.catalyst.expressions.AttributeSet$.MODULE$.apply(
          (scala.collection.Iterable<Expression>) (scala.collection.Iterable<?>) made());
    }

    @Override
    public scala.collection.immutable.Seq<SparkPlan> children() {
      return seq(child());
    }

    @Override
    public SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> newChildren) {
      return withChild(newChildren.head());
    }

    @Override
    public String simpleString(int maxFields) {
      return describe();
    }

    @Override
    public int productArity() {
      return args().length;
    }

    @Override
    public Object productElement(int n) {
      return args()[n];
    }

    @Override
    public boolean canEqual(Object other) {
      return other != null && other.getClass() == getClass();
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof PlanNode p && canEqual(p) && java.util.Arrays.equals(args(), p.args());
    }

    @Override
    public int hashCode() {
      return java.util.Arrays.hashCode(args());
    }
  }
}
