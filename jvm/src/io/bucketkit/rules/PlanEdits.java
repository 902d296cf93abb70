package io.bucketkit.rules;

import java.util.List;

import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;

/** Edits of plans that bucketkit's rules share. */
final class PlanEdits {
  private PlanEdits() {
  }

  /** {@code plan} with the operator {@code node} (that very object) replaced by {@code with}. */
  static SparkPlan replaced(SparkPlan plan, SparkPlan node, SparkPlan with) {
    return plan.transformUp(new scala.runtime.AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        return p == node;
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        return with;
      }
    });
  }

  /** {@code e} split at its top-level ANDs into {@code out}. */
  static void conjuncts(Expression e, List<Expression> out) {
    if (e instanceof And and) {
      conjuncts(and.left(), out);
      conjuncts(and.right(), out);
    } else {
      out.add(e);
    }
  }

  /**
   * {@code plan} rewritten bottom-up by {@code rewrite} where {@code applies}, or {@code plan} itself when the
   * boolean setting {@code enabled} (default true) is false.
   */
  static LogicalPlan rewriteUp(String enabled, LogicalPlan plan, java.util.function.Predicate<LogicalPlan> applies,
                               java.util.function.UnaryOperator<LogicalPlan> rewrite) {
    if (!Boolean.parseBoolean(org.apache.spark.sql.internal.SQLConf.get().getConfString(enabled, "true"))) {
      return plan;
    }
    return plan.transformUp(new scala.runtime.AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
      @Override
      public boolean isDefinedAt(LogicalPlan p) {
        return applies.test(p);
      }

      @Override
      public LogicalPlan apply(LogicalPlan p) {
        return rewrite.apply(p);
      }
    });
  }
}
