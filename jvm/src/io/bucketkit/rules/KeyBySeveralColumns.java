package io.bucketkit.rules;

import java.util.ArrayList;
import java.util.List;

import io.bucketkit.hashing.HiveHash;
import io.bucketkit.table.HiveBucketedTable;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;

import scala.jdk.javaapi.CollectionConverters;

/**
 * Joins and GROUP BYs on every bucket column of a table bucketed by several columns, without an
 * {@code Exchange}. Spark's key-grouped partitioning takes one column per expression, so such a table's
 * scan is keyed by its {@code _bucket_hash} column, each row's Hive hash of its bucket columns, reported as
 * {@code hash_mod_<n>(_bucket_hash)} ({@link io.bucketkit.table.BucketScan}); this rule makes the plan ask
 * for it:
 *
 * <ul>
 *   <li>a join whose equalities pair each bucket column of one side with the same-position bucket column
 *       of the other, both tables hashing alike (version and per-column hash; the bucket counts may
 *       differ), gets {@code l._bucket_hash = r._bucket_hash} added to its condition: rows of equal keys
 *       have equal hashes, so the condition removes no row (outer joins keep theirs), and Spark joins bucket
 *       by bucket (a table of kN buckets reduced to N: {@link io.bucketkit.hashing.HashModulo});</li>
 *   <li>an aggregate grouping by every bucket column of one table groups by its {@code _bucket_hash} too: a
 *       function of those columns, so the groups are the same.</li>
 * </ul>
 *
 * A row's {@code _bucket_hash} is computed from its bucket columns as it is read
 * ({@link io.bucketkit.read.BucketIdFill}); a keyed scan's rows sit in the bucket its file is named for,
 * checked ({@link io.bucketkit.read.BucketReadCheck}) or vouched for. Each side reaches its table through
 * projections and filters only. {@code spark.bucketkit.keyBySeveralColumns=false} turns the rule off.
 */
public final class KeyBySeveralColumns extends Rule<LogicalPlan> {
  static final String ENABLED = "spark.bucketkit.keyBySeveralColumns";

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return PlanEdits.rewriteUp(ENABLED, plan, p -> (p instanceof Join j && j.condition().isDefined())
        || p instanceof Aggregate, p -> p instanceof Join j ? join(j) : aggregate((Aggregate) p));
  }

  /** A table bucketed by several columns under a plan: its bucket columns' attributes, and its _bucket_hash's if output. */
  private record Keyed(HiveBucketedTable table, List<Attribute> columns, Attribute hash) {}

  private static Keyed keyed(LogicalPlan plan) {
    LogicalPlan p = plan;
    while (p instanceof Project || p instanceof Filter) {
      p = p.children().head();
    }
    if (!(p instanceof DataSourceV2Relation r) || !(r.table() instanceof HiveBucketedTable t)
        || t.bucketColumn != null || !t.offersBucketHash()) {
      return null;
    }
    List<Attribute> columns = new ArrayList<>();
    for (String c : t.bucketColumns) {
      Attribute a = named(r.output(), c);
      if (a == null || !plan.outputSet().contains(a)) {
        return null;  // a bucket column projected away or renamed above the table
      }
      columns.add(a);
    }
    Attribute id = named(r.output(), HiveBucketedTable.BUCKET_HASH);
    return new Keyed(t, columns, id != null && plan.outputSet().contains(id) ? id : null);
  }

  private static Attribute named(scala.collection.immutable.Seq<? extends Attribute> output, String name) {
    for (Attribute a : CollectionConverters.asJava(output)) {
      if (a.name().equalsIgnoreCase(name)) {
        return a;
      }
    }
    return null;
  }

  /** Whether the two tables give rows of equal keys equal hashes (their bucket counts aside). */
  private static boolean alike(HiveBucketedTable a, HiveBucketedTable b) {
    if (a.version != b.version || a.bucketColumns.size() != b.bucketColumns.size()) {
      return false;
    }
    HiveHash.Type[] ta = a.hashTypes(), tb = b.hashTypes();
    for (int i = 0; i < ta.length; i++) {
      if (!ta[i].hashClass(a.version).equals(tb[i].hashClass(b.version))) {
        return false;
      }
    }
    return true;
  }

  private static LogicalPlan join(Join join) {
    Keyed l = keyed(join.left()), r = keyed(join.right());
    if (l == null || r == null || !alike(l.table(), r.table())) {
      return join;
    }
    List<Expression> conjuncts = new ArrayList<>();
    PlanEdits.conjuncts(join.condition().get(), conjuncts);
    if (l.hash() != null && r.hash() != null && conjuncts.stream().anyMatch(
        e -> pairs(e, l.hash(), r.hash()))) {
      return join;  // keyed already (the optimizer runs its rules until nothing changes)
    }
    for (int i = 0; i < l.columns().size(); i++) {
      Attribute a = l.columns().get(i), b = r.columns().get(i);
      if (conjuncts.stream().noneMatch(e -> pairs(e, a, b))) {
        return join;  // a bucket column not joined to its counterpart: Spark's shuffle, as Hive's
      }
    }
    WithId left = withBucketHash(join.left()), right = withBucketHash(join.right());
    if (left == null || right == null) {
      return join;
    }
    Expression condition = new And(join.condition().get(), new EqualTo(left.id(), right.id()));
    Join keyed = join.copy(left.plan(), right.plan(), join.joinType(), scala.Option.apply(condition), join.hint());
    return new Project(seq(CollectionConverters.asJava(join.output())), keyed);
  }

  private static LogicalPlan aggregate(Aggregate agg) {
    Keyed k = keyed(agg.child());
    if (k == null) {
      return agg;
    }
    List<Expression> grouping = new ArrayList<>(CollectionConverters.asJava(agg.groupingExpressions()));
    if (k.hash() != null && grouping.stream().anyMatch(e -> e.semanticEquals(k.hash()))) {
      return agg;
    }
    for (Attribute c : k.columns()) {
      if (grouping.stream().noneMatch(e -> e.semanticEquals(c))) {
        return agg;
      }
    }
    WithId child = withBucketHash(agg.child());
    if (child == null) {
      return agg;
    }
    grouping.add(child.id());
    return agg.copy(CollectionConverters.asScala(grouping).toList(), agg.aggregateExpressions(), child.plan(),
        agg.hint());
  }

  /** Whether {@code e} is {@code a = b} or {@code a <=> b}, either way round. */
  private static boolean pairs(Expression e, Attribute a, Attribute b) {
    if (!(e instanceof EqualTo || e instanceof EqualNullSafe)) {
      return false;
    }
    BinaryComparison c = (BinaryComparison) e;
    return (c.left().semanticEquals(a) && c.right().semanticEquals(b))
        || (c.left().semanticEquals(b) && c.right().semanticEquals(a));
  }

  /** {@code plan} with its table's {@code _bucket_hash} column added to its output up to the top, and that column. */
  private record WithId(LogicalPlan plan, Attribute id) {}

  private static WithId withBucketHash(LogicalPlan plan) {
    if (plan instanceof DataSourceV2Relation r) {
      DataSourceV2Relation with = named(r.output(), HiveBucketedTable.BUCKET_HASH) != null ? r : r.withMetadataColumns();
      Attribute id = named(with.output(), HiveBucketedTable.BUCKET_HASH);
      return id == null ? null : new WithId(with, id);
    }
    if (plan instanceof Filter f) {
      WithId child = withBucketHash(f.child());
      return child == null ? null : new WithId(new Filter(f.condition(), child.plan()), child.id());
    }
    if (plan instanceof Project p) {
      WithId child = withBucketHash(p.child());
      if (child == null) {
        return null;
      }
      List<NamedExpression> list = new ArrayList<>(CollectionConverters.asJava(p.projectList()));
      if (list.stream().noneMatch(e -> e.exprId().equals(child.id().exprId()))) {
        list.add(child.id());
      }
      return new WithId(new Project(seq(list), child.plan()), child.id());
    }
    return null;
  }

  private static scala.collection.immutable.Seq<NamedExpression> seq(List<? extends NamedExpression> columns) {
    return CollectionConverters.asScala(new ArrayList<NamedExpression>(columns)).toList();
  }
}
