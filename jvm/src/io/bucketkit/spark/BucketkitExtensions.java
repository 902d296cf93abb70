package io.bucketkit.spark;

import io.bucketkit.rules.AggregateInBuckets;
import io.bucketkit.rules.BucketSample;
import io.bucketkit.rules.HashJoinBucketPairs;
import io.bucketkit.rules.HashJoinIntoBuckets;
import io.bucketkit.rules.JoinInBucketType;
import io.bucketkit.rules.KeyBySeveralColumns;
import io.bucketkit.rules.PackUnneededBuckets;
import io.bucketkit.rules.PackedShuffle;
import io.bucketkit.rules.WriteFromAlikeBuckets;
import io.bucketkit.write.CommitCoordinator;
import io.bucketkit.write.ManagedDrop;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;

import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * bucketkit's planner rules, configured as {@code spark.sql.extensions=io.bucketkit.spark.BucketkitExtensions}
 * beside the catalog: {@link PackUnneededBuckets} (bucketed scans only where the plan uses them),
 * {@link JoinInBucketType} (a wider key joined with an integer bucket column moves only its own side),
 * {@link KeyBySeveralColumns} (joins and GROUP BYs on every bucket column of tables bucketed by several, by their _bucket_hash),
 * {@link HashJoinIntoBuckets} (a join that moved only the plain side hashes it, leaving the bucketed side unsorted),
 * {@link HashJoinBucketPairs} (two tables joined bucket by bucket hash the smaller side's small buckets, unsorted),
 * {@link WriteFromAlikeBuckets} (a write from a table bucketed alike moves no rows; a write's shuffle moves its
 * rows packed, {@link PackedShuffle}, read in no fewer tasks than the session's parallelism) and
 * {@link SparkWriteGuard} (no write Spark's own Hive writer would place wrongly, catalog on or off);
 * {@link ManagedDrop.OnDrop} (a DROP TABLE of a managed table located at a version inside it deletes the table directory);
 * {@link CreateAsSelect} ({@code USING hive ... CLUSTERED BY} accepted; a Hive bucketed CTAS written by bucketkit);
 * {@link InsertPartitionSpec} and {@link RowLevelRefusal} (an INSERT's static partition spec as Spark's
 * Hive INSERT reads it: Hive's meaning of {@code IF NOT EXISTS}, an empty value refused; a clear refusal of
 * DELETE, UPDATE and MERGE); and
 * {@link DriverCalls}, the table functions through which the Python API asks the driver what it asks
 * over py4j in a classic session (a Spark Connect client has no py4j).
 */
public final class BucketkitExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    CommitCoordinator.registerStaticSettings();
    DriverCalls.functions().forEach(extensions::injectTableFunction);
    extensions.injectFunction(DriverCalls.hiveBucketFunction());
    extensions.injectColumnar(new AbstractFunction1<SparkSession, ColumnarRule>() {
      @Override
      public ColumnarRule apply(SparkSession session) {
        return new ColumnarRule() {
          @Override
          public Rule<SparkPlan> preColumnarTransitions() {
            return new PackUnneededBuckets();
          }
        };
      }
    });
    extensions.injectQueryStagePrepRule(new AbstractFunction1<SparkSession, Rule<SparkPlan>>() {
      @Override
      public Rule<SparkPlan> apply(SparkSession session) {
        return new WriteFromAlikeBuckets();
      }
    });
    extensions.injectQueryStageOptimizerRule(new AbstractFunction1<SparkSession, Rule<SparkPlan>>() {
      @Override
      public Rule<SparkPlan> apply(SparkSession session) {
        return new PackedShuffle.SpreadTasks();
      }
    });
    extensions.injectOptimizerRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new JoinInBucketType();
      }
    });
    extensions.injectOptimizerRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new KeyBySeveralColumns();
      }
    });
    extensions.injectQueryStagePrepRule(new AbstractFunction1<SparkSession, Rule<SparkPlan>>() {
      @Override
      public Rule<SparkPlan> apply(SparkSession session) {
        return new HashJoinBucketPairs();
      }
    });
    extensions.injectQueryStagePrepRule(new AbstractFunction1<SparkSession, Rule<SparkPlan>>() {
      @Override
      public Rule<SparkPlan> apply(SparkSession session) {
        return new AggregateInBuckets();
      }
    });
    extensions.injectRuntimeOptimizerRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new HashJoinIntoBuckets();
      }
    });
    // before Spark's resolution (DataFrameWriter.saveAsTable plans a v1 CreateTable), and after its
    // conversion of SQL's CREATE TABLE to one
    AbstractFunction1<SparkSession, Rule<LogicalPlan>> hiveStorage = new AbstractFunction1<>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new CreateAsSelect.HiveStorage(session);
      }
    };
    extensions.injectResolutionRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new BucketSample();
      }
    });
    extensions.injectHintResolutionRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new CreateAsSelect.Replace();
      }
    });
    extensions.injectHintResolutionRule(hiveStorage);
    extensions.injectHintResolutionRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new InsertPartitionSpec(session);  // before the batch that resolves the DSv2 insert
      }
    });
    extensions.injectHintResolutionRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new RowLevelRefusal(session);  // before the batch that resolves the target as a write
      }
    });
    extensions.injectResolutionRule(hiveStorage);
    extensions.injectPostHocResolutionRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new CreateAsSelect.Rewrite();
      }
    });
    extensions.injectCheckRule(new AbstractFunction1<SparkSession, scala.Function1<LogicalPlan, BoxedUnit>>() {
      @Override
      public scala.Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
        return new SparkWriteGuard();
      }
    });
    extensions.injectCheckRule(new AbstractFunction1<SparkSession, scala.Function1<LogicalPlan, BoxedUnit>>() {
      @Override
      public scala.Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
        return new ManagedDrop.OnDrop((org.apache.spark.sql.classic.SparkSession) session);
      }
    });
    return BoxedUnit.UNIT;
  }
}
