package io.bucketkit.rules;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.read.KeyedScan;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.BroadcastDistribution;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;
import org.apache.spark.sql.catalyst.plans.physical.UnspecifiedDistribution$;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;

import scala.jdk.javaapi.CollectionConverters;

/**
 * Bucketed scans only where the plan uses the bucketing: Spark's own rule for its V1 bucketed scans
 * ({@code DisableUnnecessaryBucketedScan}, {@code spark.sql.sources.bucketing.autoBucketedScan.enabled}),
 * for bucketkit's {@link KeyedScan}s (a plain bucketed table's {@link io.bucketkit.table.BucketScan}, an ACID table's
 * {@link io.bucketkit.acid.AcidSnapshotScan}).
 *
 * <p>A scan keeps one task per bucket when an operator above it needs its partitioning (a join, an
 * aggregate, a window on the bucket key; a global aggregate over one bucket: any required distribution
 * but a broadcast, or a required ordering) with no shuffle in between. Every other scan — a full scan,
 * a filter on another column, a global aggregate over several buckets (a shuffle to one partition
 * sits between), a broadcast join's sides, a side a shuffle re-partitions anyway, a top-n or a collected
 * limit (which gather their rows into one partition themselves) — is {@link KeyedScan#unkeyed}
 * ({@link io.bucketkit.table.BucketScan#packed}):
 * its files split and packed into tasks by size, as Spark packs them, instead of one task per bucket.
 * Bucket pruning stays. A scan that reports a sort order is packed only when nothing between it and
 * the next shuffle (or the root) but projections, filters, sorts and partial aggregates could have
 * relied on that order.
 *
 * <p>It runs where Spark applies columnar rules (before columnar transitions), on the whole plan
 * without adaptive execution, and on each query stage with it.
 */
public final class PackUnneededBuckets extends Rule<SparkPlan> {
  static final String ENABLED = "spark.bucketkit.packUnneededBuckets";

  @Override
  public SparkPlan apply(SparkPlan plan) {
    if (!Boolean.parseBoolean(conf().getConfString(ENABLED, "true")) || !plan.exists(
        new scala.runtime.AbstractFunction1<SparkPlan, Object>() {
          @Override
          public Object apply(SparkPlan p) {
            return p instanceof BatchScanExec && ((BatchScanExec) p).scan() instanceof KeyedScan;
          }
        })) {
      return plan;
    }
    return visit(plan, false, false, true);
  }

  private static SparkPlan visit(SparkPlan plan, boolean needed, boolean shuffled, boolean allowed) {
    if (needsPartitioning(plan)) {
      return children(plan, true, false, true);
    }
    if (plan instanceof ShuffleExchangeLike || gathers(plan)) {
      return children(plan, needed, true, allowed);
    }
    if (plan instanceof BatchScanExec && ((BatchScanExec) plan).scan() instanceof KeyedScan) {
      BatchScanExec exec = (BatchScanExec) plan;
      KeyedScan scan = (KeyedScan) exec.scan();
      boolean unneeded = !needed || (shuffled && allowed);
      if (!scan.isKeyed() || !unneeded || (scan.reportsOrdering() && !allowed)) {
        return plan;
      }
      org.apache.spark.sql.connector.read.Scan unkeyed = scan.unkeyed();
      return unkeyed == scan ? plan : SparkCompat.withScan(exec, unkeyed);
    }
    return children(plan, needed, shuffled, allowed && passesThrough(plan));
  }

  private static SparkPlan children(SparkPlan plan, boolean needed, boolean shuffled, boolean allowed) {
    return (SparkPlan) plan.mapChildren(new scala.runtime.AbstractFunction1<SparkPlan, SparkPlan>() {
      @Override
      public SparkPlan apply(SparkPlan child) {
        return visit(child, needed, shuffled, allowed);
      }
    });
  }

  /**
   * An operator that relies on its child's partitioning or order (Spark's "interesting partition"):
   * any required distribution but none or a broadcast — a clustered one (join, aggregate, window),
   * and {@code AllTuples} too (a global aggregate or limit over a scan of one bucket, which
   * {@code EnsureRequirements} left without an exchange because one bucket is one partition).
   */
  private static boolean needsPartitioning(SparkPlan plan) {
    for (Distribution d : CollectionConverters.asJava(plan.requiredChildDistribution())) {
      if (!(d instanceof UnspecifiedDistribution$) && !(d instanceof BroadcastDistribution)) {
        return true;
      }
    }
    for (scala.collection.immutable.Seq<SortOrder> o : CollectionConverters.asJava(plan.requiredChildOrdering())) {
      if (!o.isEmpty()) {
        return true;
      }
    }
    return false;
  }

  /**
   * An operator that gathers its child's rows into one partition itself ({@code ORDER BY ... LIMIT n}, a
   * {@code LIMIT} or {@code tail} collected to the driver): whatever needs its output's partitioning (a window
   * without PARTITION BY over a top-n) gets that one partition, never the scan's. A shuffle, for this rule.
   */
  private static boolean gathers(SparkPlan plan) {
    return plan instanceof org.apache.spark.sql.execution.TakeOrderedAndProjectExec
        || plan instanceof org.apache.spark.sql.execution.CollectLimitExec
        || plan instanceof org.apache.spark.sql.execution.CollectTailExec;
  }

  /** A unary operator that keeps rows where they are: it does not use their partitioning itself. */
  private static boolean passesThrough(SparkPlan plan) {
    return plan instanceof SortExec || plan instanceof ProjectExec || plan instanceof FilterExec
        || (plan instanceof BaseAggregateExec
            && ((BaseAggregateExec) plan).requiredChildDistributionExpressions().isEmpty());
  }
}
