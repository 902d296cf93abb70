package io.bucketkit.rules;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import io.bucketkit.acid.AcidSnapshotTable;
import io.bucketkit.compat.SparkCompat;
import io.bucketkit.table.HiveBucketedTable;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Alias$;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.ByteType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.ShortType$;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A join of a bucketed table's integer bucket column with a wider integer key of the other side
 * ({@code fact.k INT = dim.k BIGINT}, the usual star join) joined in the bucket column's own type, so
 * that only the other side moves. Spark widens the bucket side ({@code CAST(fact.k AS BIGINT) = dim.k}),
 * and a join key that is not the scan's bucket column cannot use its partitioning: both sides shuffle.
 * This rule writes the conjunct as {@code fact.k = TRY_CAST(dim.k AS INT)}; Spark then moves only the
 * dimension, hashed into the fact's buckets by the fact's own bucket function of an INT (Hive v1 hashes
 * an INT and a BIGINT differently for negative values: hashing the INT is what the fact's files hold).
 * The cast key is a column the dimension's side projects ({@code bucketkit_join_key}, dropped above the
 * join): a join key that is an attribute lets AQE re-plan the join as {@link HashJoinIntoBuckets} asks.
 *
 * <p>The two conditions hold for the same pairs of rows: a value of {@code dim.k} inside INT's range
 * casts exactly; one outside it can equal no INT, and {@code TRY_CAST} makes it NULL, which matches
 * nothing. Only top-level {@code =} conjuncts of a join condition are rewritten (never {@code <=>},
 * nor a comparison under {@code NOT} or {@code OR}, where NULL and false differ).
 *
 * <p>A key the other side computes in the bucket column's own type — Spark's widening of a narrower
 * dimension key ({@code fact.k BIGINT = CAST(dim.k AS BIGINT)}), or an expression of the query's — is
 * projected the same way, unchanged: the fact's bucket function hashes that value as the fact's files do.
 */
public final class JoinInBucketType extends Rule<LogicalPlan> {
  static final String ENABLED = "spark.bucketkit.joinInBucketType";

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return PlanEdits.rewriteUp(ENABLED, plan, p -> p instanceof Join j && j.condition().isDefined(),
        p -> rewrite((Join) p));
  }

  private static LogicalPlan rewrite(Join join) {
    Set<ExprId> bucketColumns = bucketColumns(join.left());
    bucketColumns.addAll(bucketColumns(join.right()));
    if (bucketColumns.isEmpty()) {
      return join;
    }
    List<Expression> conjuncts = new ArrayList<>();
    PlanEdits.conjuncts(join.condition().get(), conjuncts);
    List<NamedExpression> leftKeys = new ArrayList<>();
    List<NamedExpression> rightKeys = new ArrayList<>();
    for (int i = 0; i < conjuncts.size(); i++) {
      EqualTo narrowed = keyed(conjuncts.get(i), bucketColumns, join);
      if (narrowed == null) {
        continue;
      }
      // the other side's key (cast, or any expression of that side) as a column of that side: the join's
      // key is then an attribute, whose partitioning Spark can match with the bucketed side's (an
      // expression key it cannot: AQE would keep the sort-merge join where HashJoinIntoBuckets asks for
      // a hash join)
      Expression computed = narrowed.right();
      Alias key = Alias$.MODULE$.apply(computed, "bucketkit_join_key", NamedExpression$.MODULE$.newExprId(),
          scala.collection.immutable.Seq$.MODULE$.<String>empty(), scala.Option.empty(),
          scala.collection.immutable.Seq$.MODULE$.<String>empty());
      (computed.references().subsetOf(join.left().outputSet()) ? leftKeys : rightKeys).add(key);
      conjuncts.set(i, new EqualTo(narrowed.left(), key.toAttribute()));
    }
    if (leftKeys.isEmpty() && rightKeys.isEmpty()) {
      return join;
    }
    Expression condition = conjuncts.get(0);
    for (int i = 1; i < conjuncts.size(); i++) {
      condition = new And(condition, conjuncts.get(i));
    }
    Join joined = join.copy(withKeys(join.left(), leftKeys), withKeys(join.right(), rightKeys), join.joinType(),
        scala.Option.apply(condition), join.hint());
    return new Project(named(CollectionConverters.asJava(join.output())), joined);
  }

  /** {@code plan} with the columns {@code keys} added (itself when there are none). */
  private static LogicalPlan withKeys(LogicalPlan plan, List<NamedExpression> keys) {
    if (keys.isEmpty()) {
      return plan;
    }
    List<NamedExpression> out = new ArrayList<>(CollectionConverters.asJava(plan.output()));
    out.addAll(keys);
    return new Project(named(out), plan);
  }

  private static scala.collection.immutable.Seq<NamedExpression> named(List<? extends NamedExpression> columns) {
    return CollectionConverters.asScala(new ArrayList<NamedExpression>(columns)).toSeq();
  }

  /**
   * The conjunct {@code e} as {@code bucket = key}, {@code key} an expression of the other side's columns
   * to compute as a column of that side, or null. Two forms (either way round):
   * {@code CAST(bucket AS wider) = other} becomes {@code bucket = TRY_CAST(other AS type)}; and
   * {@code bucket = expr}, a deterministic expression of the bucket column's own type — Spark's widening of
   * a narrower key ({@code fact.k BIGINT = CAST(dim.k AS BIGINT)}) or the query's own — stays as it is.
   */
  private static EqualTo keyed(Expression e, Set<ExprId> bucketColumns, Join join) {
    if (!(e instanceof EqualTo eq)) {
      return null;
    }
    for (int side = 0; side < 2; side++) {
      Expression bucket = side == 0 ? eq.left() : eq.right();
      Expression other = side == 0 ? eq.right() : eq.left();
      if (bucket instanceof Cast cast && cast.child() instanceof AttributeReference column
          && bucketColumns.contains(column.exprId()) && widens(column.dataType(), cast.dataType())
          && other.dataType().equals(cast.dataType()) && onOtherSide(column, other, join)) {
        return new EqualTo(column, SparkCompat.tryCast(other, column.dataType()));
      }
      if (bucket instanceof AttributeReference column && bucketColumns.contains(column.exprId())
          && !(other instanceof Attribute) && other.deterministic() && other.dataType().equals(column.dataType())
          && onOtherSide(column, other, join)) {
        return new EqualTo(column, other);
      }
    }
    return null;
  }

  /** Whether the attribute and the expression come one from each side of the join. */
  private static boolean onOtherSide(Attribute column, Expression other, Join join) {
    boolean columnLeft = join.left().outputSet().contains(column);
    LogicalPlan otherSide = columnLeft ? join.right() : join.left();
    return (columnLeft || join.right().outputSet().contains(column)) && !other.references().isEmpty()
        && other.references().subsetOf(otherSide.outputSet());
  }

  private static int rank(DataType t) {
    return t.equals(ByteType$.MODULE$) ? 1 : t.equals(ShortType$.MODULE$) ? 2 : t.equals(IntegerType$.MODULE$) ? 3
        : t.equals(LongType$.MODULE$) ? 4 : 0;
  }

  private static boolean widens(DataType from, DataType to) {
    return rank(from) > 0 && rank(to) > rank(from);
  }

  /** The output attributes of {@code plan}'s bucketkit tables that are their bucket column. */
  private static Set<ExprId> bucketColumns(LogicalPlan plan) {
    Set<ExprId> out = new HashSet<>();
    for (LogicalPlan leaf : CollectionConverters.asJava(plan.collectLeaves())) {
      if (!(leaf instanceof DataSourceV2Relation relation)) {
        continue;
      }
      String column = bucketColumn(relation.table());
      for (AttributeReference a : CollectionConverters.asJava(relation.output())) {
        if (a.name().toLowerCase(Locale.ROOT).equals(column)) {
          out.add(a.exprId());
        }
      }
    }
    return out;
  }

  /** The bucket column a bucketkit table reports its partitioning by, lower case, or null. */
  static String bucketColumn(Table table) {
    if (table instanceof HiveBucketedTable t) {
      return t.bucketColumn;
    }
    if (table instanceof AcidSnapshotTable t && t.bucketing().transform() != null) {
      return t.bucketing().transform().references()[0].describe().toLowerCase(Locale.ROOT);
    }
    return null;
  }
}
