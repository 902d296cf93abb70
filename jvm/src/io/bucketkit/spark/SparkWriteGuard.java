package io.bucketkit.spark;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.table.HiveBucketedTable;
import io.bucketkit.table.TableVerdict;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.datasources.CreateTable;
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand;
import org.apache.spark.sql.hive.execution.CreateHiveTableAsSelectCommand;
import org.apache.spark.sql.hive.execution.InsertIntoHiveTable;
import org.apache.spark.sql.types.StructType;

import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Refuses the writes Spark's own Hive writer would get wrong, whether or not bucketkit's catalog plans
 * the session's queries ({@code spark.bucketkit.catalog.enabled=false} switches off read planning,
 * never write safety): a check rule on every analyzed plan.
 *
 * <ul>
 *   <li>An {@code INSERT}, {@code insertInto} or CTAS into a Hive bucketed table declaring
 *   {@code bucketing_version=2}: Spark's writer places rows by the v1 hash whatever the table says,
 *   so Hive's bucket joins and Trino's bucketed reads would return wrong rows. bucketkit's catalog
 *   writes INSERTs and CTAS into such tables itself ({@link CreateAsSelect}); writes with the catalog off
 *   are refused, saying what to run instead. Likewise a {@code bucketing_version=1} table bucketed by a
 *   varchar, which Spark's v1 hash takes for a string ({@link HiveBucketedTable#sparkMisplaces}), and one
 *   bucketed by a char, which Spark hashes padded (refused with the catalog on too: bucketkit hashes no char).</li>
 *   <li>Any write into a Hive ACID table ({@code transactional=true}): Spark writes plain files
 *   outside any transaction, which Hive ignores or reads wrongly once a base exists.</li>
 * </ul>
 */
final class SparkWriteGuard extends AbstractFunction1<LogicalPlan, BoxedUnit> {
  @Override
  public BoxedUnit apply(LogicalPlan plan) {
    plan.foreach(new AbstractFunction1<LogicalPlan, BoxedUnit>() {
      @Override
      public BoxedUnit apply(LogicalPlan node) {
        if (node instanceof CreateTable create && create.query().isDefined()) {  // a CTAS before planning
          check(create.tableDesc(), create.query().get().schema(), true);
        } else if (node instanceof CreateHiveTableAsSelectCommand ctas) {
          check(ctas.tableDesc(), ctas.query().schema(), true);
        } else if (node instanceof InsertIntoHiveTable insert) {
          check(insert.table(), insert.table().dataSchema(), false);
        } else if (node instanceof InsertIntoHadoopFsRelationCommand insert && insert.catalogTable().isDefined()) {
          check(insert.catalogTable().get(), insert.catalogTable().get().dataSchema(), false);
        }
        return BoxedUnit.UNIT;
      }
    });
    return BoxedUnit.UNIT;
  }

  private static void check(CatalogTable t, StructType dataSchema, boolean ctas) {
    String refusal = refusal(t, dataSchema, ctas);
    if (refusal != null) {
      throw SparkCompat.analysisError(refusal);
    }
  }

  /** Why Spark's own writer must not write {@code t} (holding {@code dataSchema}), or null. */
  static String refusal(CatalogTable t, StructType dataSchema, boolean ctas) {
    TableVerdict v = HiveBucketedTable.verdict(t, dataSchema);
    String name = t.identifier().unquotedString();
    if (v.kind().equals(TableVerdict.ACID)) {
      return "bucketkit: Spark cannot write Hive ACID table " + name + " (transactional=true): its writer adds "
          + "plain files outside any transaction, which Hive ignores or reads wrongly. Write it with Hive or "
          + "Trino";
    }
    String misplaced = HiveBucketedTable.sparkMisplaces(t, dataSchema);  // any format: Avro, SequenceFile too
    if (misplaced == null) {
      return null;
    }
    boolean charKey = HiveBucketedTable.charKey(t, dataSchema) != null;  // bucketkit's catalog does not write it either
    String why = "Spark's own Hive writer " + misplaced + ": its rows would land in the wrong buckets, and Hive's "
        + (charKey ? "bucket pruning and bucket joins would miss them." : "bucket joins and Trino's bucketed reads would "
        + "return wrong rows.");
    if (charKey) {
      return "bucketkit: " + (ctas ? "CREATE TABLE ... AS SELECT into " : "INSERT into ") + name + ": " + why
          + " bucketkit's catalog does not hash a char either (as Trino, which reads such a table unbucketed): "
          + HiveBucketedTable.CHAR_ADVICE;
    }
    if (ctas) {
      return "bucketkit: CREATE TABLE ... AS SELECT into a Hive bucketed table: " + why + " Run it with "
          + BucketkitCatalog.ENABLED + "=true (bucketkit writes the table's own hash), or create the table first "
          + "(CREATE TABLE " + name + " (...) CLUSTERED BY (...) INTO n BUCKETS ...), then INSERT INTO " + name
          + " SELECT ... in a session with bucketkit's catalog; or bucketkit.write(df, ..., table='" + name + "')";
    }
    return "bucketkit: INSERT into " + name + " with Spark's own writer (" + BucketkitCatalog.ENABLED
        + "=false, or a table bucketkit's catalog passes through): " + why + " Run the INSERT with "
        + BucketkitCatalog.ENABLED + "=true (bucketkit writes the table's own hash), or bucketkit.write(df, ..., "
        + "table='" + name + "')";
  }
}
