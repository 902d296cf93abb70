package io.bucketkit.rules;

import org.apache.spark.sql.execution.SparkPlan;

/** Edits of physical plans that bucketkit's query-stage rules share. */
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
}
