package io.bucketkit.rules;

import io.bucketkit.table.BucketScan;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.catalyst.optimizer.BuildLeft$;
import org.apache.spark.sql.catalyst.optimizer.BuildRight$;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.SortExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.execution.exchange.Exchange;
import org.apache.spark.sql.execution.joins.ShuffledHashJoinExec;
import org.apache.spark.sql.execution.joins.SortMergeJoinExec;

import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.SortOrder$;

import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A join of two bucketkit tables read in their buckets (neither side moves) is joined by hash, not by
 * sort-merge, when the smaller side's share of each task is small: each task builds a hash map of its
 * buckets of that side and streams the other side through it, and neither side is sorted. Spark's
 * storage-partitioned join sort-merges, sorting both sides of every bucket, which is most of its CPU
 * (10M x 5M rows, 64 buckets: 2.9 s sort-merge against 2.2 s by hash; Spark's own shuffle join 5.2 s).
 *
 * <p>Applied where adaptive execution prepares a query (Spark's {@code queryStagePrepRules}), after the
 * sorts are placed, and decided on the listed files: the side whose largest task reads fewer file bytes is
 * the build side when those bytes are at most an eighth of {@code spark.bucketkit.hashJoinThreshold}
 * (default 32 MB, so 4 MB of ORC/Parquet: decoded rows take several times their file bytes, and a hash
 * join's map does not spill); {@code 0} turns it off, as it turns off {@link HashJoinIntoBuckets}. A
 * sort-merge join is replaced only where every operator above still gets the order it requires (a second
 * join on the same key may read this one's sorted output without a sort of its own), and only where each
 * side is one bucketkit scan through filters and projections, with no shuffle, broadcast or other join below.
 *
 * <p>A full outer join stays sort-merge: Spark's full outer hash join tracks which build rows matched (a bit per
 * row for unique keys, a hash set of row positions otherwise), and with a whole bucket as its build side that costs
 * more than the sorts it saves (2M x 1M rows, 8 buckets: 4.25 s by hash against 1.10 s sort-merge with 40 and 14
 * rows per key, 0.70 s against 0.49 s with unique keys; Spark's own shuffle join 1.27 s and 1.07 s). A star join's
 * small moved side ({@link HashJoinIntoBuckets}) is still hashed: there the hash join measured as fast or faster.
 */
public final class HashJoinBucketPairs extends Rule<SparkPlan> {
  @Override
  public SparkPlan apply(SparkPlan plan) {
    long threshold = JavaUtils.byteStringAsBytes(conf().getConfString(HashJoinIntoBuckets.THRESHOLD,
        HashJoinIntoBuckets.DEFAULT_THRESHOLD));
    if (threshold <= 0) {
      return plan;
    }
    long limit = threshold / 8;
    // one join at a time, from the top: kept only where every operator still gets the order it needs (a join
    // above on the same key may read this one's sorted output through projections, without a sort of its own)
    SparkPlan out = plan;
    for (SparkPlan node : CollectionConverters.asJava(plan.collect(
        new scala.runtime.AbstractPartialFunction<SparkPlan, SparkPlan>() {
          @Override
          public boolean isDefinedAt(SparkPlan p) {
            return p instanceof SortMergeJoinExec;
          }

          @Override
          public SparkPlan apply(SparkPlan p) {
            return p;
          }
        }))) {
      SparkPlan hashed = hashed((SortMergeJoinExec) node, limit);
      if (hashed == node) {
        continue;
      }
      SparkPlan candidate = PlanEdits.replaced(out, node, hashed);
      if (orderingHolds(candidate)) {
        out = candidate;
      }
    }
    return out;
  }

  /** Whether every operator of {@code plan} gets from each child the order it requires. */
  private static boolean orderingHolds(SparkPlan plan) {
    return !plan.exists(p -> {
      for (int i = 0; i < p.children().size(); i++) {
        Seq<SortOrder> required = p.requiredChildOrdering().apply(i);
        if (!required.isEmpty() && !SortOrder$.MODULE$.orderingSatisfies(p.children().apply(i).outputOrdering(),
            required)) {
          return true;
        }
      }
      return false;
    });
  }

  /** {@code smj} as a shuffled hash join of its unsorted children, or {@code smj} itself. */
  private static SparkPlan hashed(SortMergeJoinExec smj, long limit) {
    if (smj.isSkewJoin() || smj.joinType() == FullOuter$.MODULE$) {
      return smj;  // a full outer hash join tracks every build row it matched: slower than the merge (see above)
    }
    SparkPlan lp = unsorted(smj.left());
    SparkPlan rp = unsorted(smj.right());
    BucketScan ls = lp == null ? null : onlyScan(lp);
    BucketScan rs = rp == null ? null : onlyScan(rp);
    if (ls == null || rs == null) {
      return smj;
    }
    int tasks = lp.outputPartitioning().numPartitions();
    long lBytes = ls.largestGroupBytes(tasks);
    long rBytes = rs.largestGroupBytes(tasks);
    boolean buildRight = rBytes <= limit && HashJoinIntoBuckets.canBuildRight(smj.joinType());
    boolean buildLeft = lBytes <= limit && HashJoinIntoBuckets.canBuildLeft(smj.joinType());
    if (!buildRight && !buildLeft) {
      return smj;
    }
    // the side with the smaller task share, where the join type can build it
    boolean useRight = buildRight && (!buildLeft || rBytes <= lBytes);
    return new ShuffledHashJoinExec(smj.leftKeys(), smj.rightKeys(), smj.joinType(),
        useRight ? BuildRight$.MODULE$ : BuildLeft$.MODULE$, smj.condition(), lp, rp, false);
  }

  /** The child of a local sort (what the sort-merge join needed), or null. */
  private static SparkPlan unsorted(SparkPlan side) {
    return side instanceof SortExec sort && !sort.global() ? sort.child() : null;
  }

  /** The bucketkit scan at the bottom of a chain of one-child operators (no exchange, no sort), reporting its buckets. */
  private static BucketScan onlyScan(SparkPlan side) {
    SparkPlan p = side;
    while (!(p instanceof BatchScanExec)) {
      if (p instanceof Exchange || p instanceof SortExec || p.children().size() != 1) {
        return null;
      }
      p = p.children().head();
    }
    return ((BatchScanExec) p).scan() instanceof BucketScan scan && scan.isKeyed() ? scan : null;
  }
}
