package io.bucketkit.rules;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete$;
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.Final$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Partial$;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.apache.spark.sql.execution.aggregate.HashAggregateExec;
import org.apache.spark.sql.execution.aggregate.ObjectHashAggregateExec;
import org.apache.spark.sql.execution.aggregate.SortAggregateExec;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A {@code GROUP BY} on the bucket columns aggregates each bucket once: where no shuffle separates
 * Spark's partial aggregate from its final one (the rows of a key are already in one task, as bucketkit's
 * scan reports them), the pair becomes one aggregate, which hashes each row once instead of building a
 * partial map and merging it into a second. 10M rows, 2.5M keys, 64 buckets: the partial map reduces little,
 * and it was a third of the query's time.
 *
 * <p>Of a hash aggregate whose functions are all declarative ({@code count}, {@code sum}, {@code min} ...),
 * the one aggregate is Spark's partial one, and a {@code Project} above it evaluates each function's result
 * from its buffer, as the final aggregate would have after merging each key's one buffer with nothing. Spark
 * gives only partial aggregates its generated fast hash map ({@code
 * spark.sql.codegen.aggregate.map.twolevel.partialOnly}): the size curve's {@code GROUP BY k} (10M rows,
 * 4.3M keys) took 0.9-1.05 s this way against 1.2-1.35 s as one {@code Complete} aggregate. Object and sort
 * aggregates become one aggregate of {@code Complete} mode.
 *
 * <p>Spark 4.3's own {@code CombineAdjacentAggregation} does this for adjacent aggregates; Spark 4.2+
 * places its {@code GroupPartitionsExec} (the grouping of a storage-partitioned scan's partitions by key)
 * between the two, so Spark's rule never sees them adjacent. Here the partial aggregate's input goes
 * under that grouping, and the combined aggregate keeps the final one's required distribution, so a
 * later rule that breaks it (AQE's skew splitting) is still refused by Spark's validation.
 * Only a pair of one kind (hash, object hash or sort aggregate) of plain {@code Partial} / {@code Final}
 * modes (no DISTINCT, no merge phase) grouped by columns, with at most a partition grouping and the final
 * sort aggregate's sort between them, is combined; of a sort aggregate, the partial one's sort goes too
 * (one sort, not two).
 */
public final class AggregateInBuckets extends Rule<SparkPlan> {
  static final String SETTING = "spark.bucketkit.aggregateInBuckets";

  @Override
  public SparkPlan apply(SparkPlan plan) {
    if (!Boolean.parseBoolean(conf().getConfString(SETTING, "true").trim())) {
      return plan;
    }
    return plan.transformUp(new scala.runtime.AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        return p instanceof BaseAggregateExec agg && combined(agg) != null;
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        return combined((BaseAggregateExec) p);
      }
    });
  }

  /** {@code fin} and the partial aggregate below it as one aggregate, or null. */
  static SparkPlan combined(BaseAggregateExec fin) {
    if (fin.groupingExpressions().isEmpty() || fin.requiredChildDistributionExpressions().isEmpty()
        || !allModes(fin, Final$.MODULE$)) {
      return null;
    }
    // between the two: the partition grouping, and the sort a final sort aggregate needs (nothing else)
    List<SparkPlan> between = new ArrayList<>();
    SparkPlan below = fin.child();
    while (between.size() < 2 && (isPartitionGrouping(below) || below instanceof SortExec sort && !sort.global())) {
      between.add(below);
      below = below.children().head();
    }
    if (!(below instanceof BaseAggregateExec part) || part.getClass() != fin.getClass()
        || !allModes(part, Partial$.MODULE$) || part.requiredChildDistributionExpressions().isDefined()
        || part.groupingExpressions().size() != fin.groupingExpressions().size()) {
      return null;
    }
    // grouped by columns (a partial aggregate's output keys are then its input's own attributes, which the
    // partition grouping and the sort may name), the final aggregate's keys those very attributes, its
    // functions the same
    for (int i = 0; i < part.groupingExpressions().size(); i++) {
      if (!(part.groupingExpressions().apply(i) instanceof Attribute key)
          || !key.exprId().equals(fin.groupingExpressions().apply(i).exprId())) {
        return null;
      }
    }
    if (!resultIds(part).equals(resultIds(fin))) {
      return null;
    }
    // the partial sort aggregate's own sort goes: the final one's sort, above the grouping, orders the input
    SparkPlan input = part.child();
    if (part instanceof SortAggregateExec && input instanceof SortExec sort && !sort.global()) {
      input = sort.child();
    }
    for (int i = between.size() - 1; i >= 0; i--) {
      input = between.get(i).withNewChildren(CollectionConverters.asScala(List.of(input)).toSeq());
    }
    if (fin instanceof HashAggregateExec && CollectionConverters.asJava(part.aggregateExpressions()).stream()
        .allMatch(e -> e.aggregateFunction() instanceof DeclarativeAggregate)) {
      return evaluated(fin, new HashAggregateExec(fin.requiredChildDistributionExpressions(), fin.isStreaming(),
          fin.numShufflePartitions(), part.groupingExpressions(), part.aggregateExpressions(), part.aggregateAttributes(),
          0, part.resultExpressions(), input));
    }
    List<AggregateExpression> complete = new ArrayList<>();
    for (AggregateExpression e : CollectionConverters.asJava(part.aggregateExpressions())) {
      complete.add(e.copy(e.aggregateFunction(), Complete$.MODULE$, e.isDistinct(), e.filter(), e.resultId()));
    }
    scala.collection.immutable.Seq<AggregateExpression> functions = CollectionConverters.asScala(complete).toSeq();
    if (fin instanceof HashAggregateExec) {
      return new HashAggregateExec(fin.requiredChildDistributionExpressions(), fin.isStreaming(),
          fin.numShufflePartitions(), part.groupingExpressions(), functions, fin.aggregateAttributes(), 0,
          fin.resultExpressions(), input);
    }
    if (fin instanceof ObjectHashAggregateExec) {
      return new ObjectHashAggregateExec(fin.requiredChildDistributionExpressions(), fin.isStreaming(),
          fin.numShufflePartitions(), part.groupingExpressions(), functions, fin.aggregateAttributes(), 0,
          fin.resultExpressions(), input);
    }
    if (fin instanceof SortAggregateExec) {
      return new SortAggregateExec(fin.requiredChildDistributionExpressions(), fin.isStreaming(),
          fin.numShufflePartitions(), part.groupingExpressions(), functions, fin.aggregateAttributes(), 0,
          fin.resultExpressions(), input);
    }
    return null;
  }

  /**
   * The final aggregate's results over {@code partial}, an aggregate of every row of its keys: each function's
   * result is its {@code evaluateExpression} over the partial aggregate's buffer columns, what the final
   * aggregate would compute after merging each key's one buffer with nothing.
   */
  private static SparkPlan evaluated(BaseAggregateExec fin, HashAggregateExec partial) {
    java.util.Map<ExprId, Expression> results = new java.util.HashMap<>();
    for (AggregateExpression e : CollectionConverters.asJava(partial.aggregateExpressions())) {
      DeclarativeAggregate f = (DeclarativeAggregate) e.aggregateFunction();
      java.util.Map<ExprId, Expression> buffer = new java.util.HashMap<>();
      List<AttributeReference> own = CollectionConverters.asJava(f.aggBufferAttributes());
      List<AttributeReference> input = CollectionConverters.asJava(f.inputAggBufferAttributes());
      for (int i = 0; i < own.size(); i++) {
        buffer.put(own.get(i).exprId(), input.get(i));
      }
      results.put(e.resultId(), replace(f.evaluateExpression(), buffer));
    }
    List<NamedExpression> project = new ArrayList<>();
    for (NamedExpression r : CollectionConverters.asJava(fin.resultExpressions())) {
      if (r instanceof Attribute a && results.containsKey(a.exprId())) {
        project.add(new Alias(results.get(a.exprId()), a.name(), a.exprId(), a.qualifier(), scala.Option.empty(),
            scala.collection.immutable.Seq$.MODULE$.<String>empty()));
      } else {
        project.add((NamedExpression) replace((Expression) r, results));
      }
    }
    return new ProjectExec(CollectionConverters.asScala(project).toSeq(), partial);
  }

  /** {@code e} with each attribute whose id is a key of {@code by} replaced by its value. */
  private static Expression replace(Expression e, java.util.Map<ExprId, Expression> by) {
    return e.transform(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof Attribute a && by.containsKey(a.exprId());
      }

      @Override
      public Expression apply(Expression x) {
        return by.get(((Attribute) x).exprId());
      }
    });
  }

  /** Spark's grouping of a storage-partitioned scan's input partitions by key ({@code GroupPartitionsExec}, 4.2+). */
  private static boolean isPartitionGrouping(SparkPlan p) {
    return p.getClass().getSimpleName().equals("GroupPartitionsExec") && p.children().size() == 1;
  }

  private static boolean allModes(BaseAggregateExec agg, Object mode) {
    return CollectionConverters.asJava(agg.aggregateExpressions()).stream()
        .allMatch(e -> e.mode() == mode && !e.isDistinct());
  }

  private static Set<ExprId> resultIds(BaseAggregateExec agg) {
    Set<ExprId> out = new HashSet<>();
    CollectionConverters.asJava(agg.aggregateExpressions()).forEach(e -> out.add(e.resultId()));
    return out;
  }
}
