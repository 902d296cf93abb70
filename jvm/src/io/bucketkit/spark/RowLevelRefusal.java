package io.bucketkit.spark;

import io.bucketkit.compat.SparkCompat;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code DELETE FROM}, {@code UPDATE} and {@code MERGE INTO} a Hive bucketed table the catalog writes: refused as
 * Spark's and Hive's own writers refuse them on a table that is not transactional, in a message that says so and
 * names what does the job. Without this rule the statement reached Spark's capability check with the catalog's write
 * table, which is not readable, and failed with "does not support batch scan", a message about something else.
 *
 * <p>Likewise {@code INSERT INTO t REPLACE WHERE cond} and {@code df.writeTo(t).overwrite(cond)} with a condition
 * other than {@code true} (Spark's own Hive tables refuse both): the write's overwrite replaces whole partitions, the
 * ones the query writes, so a condition that is not a partition spec would have deleted rows it does not name.
 */
public final class RowLevelRefusal extends Rule<LogicalPlan> {
  private final SparkSession session;

  public RowLevelRefusal(org.apache.spark.sql.SparkSession session) {
    this.session = (SparkSession) session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    String statement;
    LogicalPlan target;
    if (plan instanceof DeleteFromTable delete) {
      statement = "DELETE FROM";
      target = delete.table();
    } else if (plan instanceof UpdateTable update) {
      statement = "UPDATE";
      target = update.table();
    } else if (plan instanceof MergeIntoTable merge) {
      statement = "MERGE INTO";
      target = merge.targetTable();
    } else if ((target = SparkCompat.replaceWhereTarget(plan)) != null) {
      statement = "INSERT INTO ... REPLACE WHERE";
    } else {
      return plan;
    }
    while (target instanceof SubqueryAlias alias) {  // DELETE FROM t AS x, MERGE INTO t x
      target = alias.child();
    }
    if (!(target instanceof UnresolvedRelation relation)) {
      return plan;
    }
    CatalogTable table = BucketkitCatalog.writtenTable(session, relation, true);
    if (table == null) {
      return plan;  // not a table the catalog writes: Spark answers as it does
    }
    String name = table.identifier().unquotedString();
    if (statement.endsWith("REPLACE WHERE")) {
      throw SparkCompat.analysisError("bucketkit: INSERT INTO " + name + " REPLACE WHERE ... (or DataFrameWriterV2's "
          + "overwrite(condition)): the table does not support overwriting the rows a condition names (Spark refuses "
          + "it on Hive tables too). Replace whole partitions with INSERT OVERWRITE " + name + " PARTITION (...) "
          + "SELECT ..., or the table with INSERT OVERWRITE " + name + " SELECT ... (its rows that should remain "
          + "included)");
    }
    String dropPartitions = table.partitionColumnNames().isEmpty() ? ""
        : "remove whole partitions with ALTER TABLE " + name + " DROP PARTITION (...), or ";
    throw SparkCompat.analysisError("bucketkit: " + statement + " " + name + ": the table does not support "
        + statement + ". It is a Hive bucketed table that is not transactional, which takes no row-level change "
        + "(Spark and Hive refuse the statement on it too): " + dropPartitions + "write the rows that should remain "
        + "with INSERT OVERWRITE " + name + " SELECT ... FROM " + name + " WHERE ...");
  }
}
