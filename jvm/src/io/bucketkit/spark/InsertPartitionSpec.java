package io.bucketkit.spark;

import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

import io.bucketkit.compat.SparkCompat;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.InsertIntoStatement;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The static partition spec of an {@code INSERT [OVERWRITE] t PARTITION (...)} into a table bucketkit's catalog
 * writes, given the meaning Spark's and Hive's own INSERT give it. Spark's DSv2 insert (the catalog's path) differs
 * from its Hive INSERT in two ways, both decided here before the analyzer batch that resolves the table (a hint
 * resolution rule):
 * <ul>
 *   <li>{@code PARTITION (p='')}: an empty static value. Spark's Hive INSERT refuses it ({@code INVALID_PARTITION_SPEC},
 *   as Hive does); the DSv2 insert would write the rows into the NULL partition, and {@code INSERT OVERWRITE} would
 *   replace that partition. Refused here with Spark's own error.</li>
 *   <li>{@code INSERT OVERWRITE t PARTITION (p='x') IF NOT EXISTS SELECT ...}, Hive's meaning: nothing is written when
 *   the partition exists, else the rows are, as without {@code IF NOT EXISTS}. The DSv2 insert refuses the clause
 *   ({@code UNSUPPORTED_FEATURE.INSERT_PARTITION_SPEC_IF_NOT_EXISTS}); here it is decided on the session catalog's
 *   partitions: a statement whose partition exists becomes an empty relation, any other loses the clause.</li>
 * </ul>
 */
public final class InsertPartitionSpec extends Rule<LogicalPlan> {
  private final SparkSession session;

  public InsertPartitionSpec(org.apache.spark.sql.SparkSession session) {
    this.session = (SparkSession) session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (!(plan instanceof InsertIntoStatement insert) || !(insert.table() instanceof UnresolvedRelation relation)) {
      return plan;
    }
    boolean empty = hasEmptyValue(insert);
    if (!empty && !insert.ifPartitionNotExists()) {
      return plan;
    }
    CatalogTable table = BucketkitCatalog.writtenTable(session, relation, false);
    if (table == null) {
      return plan;  // Spark's own Hive INSERT writes it, and decides both itself
    }
    if (empty) {  // Spark's words (PartitioningUtils' check of a v1 INSERT's spec)
      StringJoiner spec = new StringJoiner(", ", "[", "]");
      CollectionConverters.asJava(insert.partitionSpec()).forEach((k, v) -> spec.add(k + "=" + v));
      throw SparkCompat.invalidPartitionSpec("The spec (" + spec + ") contains an empty partition column value");
    }
    SessionCatalog catalog = session.sessionState().catalog();
    Map<String, String> spec = new LinkedHashMap<>();
    for (Map.Entry<String, scala.Option<String>> e : CollectionConverters.asJava(insert.partitionSpec()).entrySet()) {
      if (e.getValue().isEmpty()) {
        return plan;  // a dynamic partition (Spark's parser refuses IF NOT EXISTS with one)
      }
      String column = CollectionConverters.asJava(table.partitionColumnNames()).stream()
          .filter(c -> c.equalsIgnoreCase(e.getKey())).findFirst().orElse(e.getKey());
      spec.put(column, e.getValue().get());
    }
    if (exists(catalog, table, spec)) {
      return LocalRelation$.MODULE$.apply(CollectionConverters.asScala(new ArrayList<Attribute>()).toList());
    }
    return withoutIfNotExists(insert);
  }

  /** Whether a static value of {@code insert}'s partition spec is the empty string ({@code PARTITION (p='')}). */
  private static boolean hasEmptyValue(InsertIntoStatement insert) {
    for (scala.Option<String> value : CollectionConverters.asJava(insert.partitionSpec()).values()) {
      if (value.isDefined() && value.get() != null && value.get().isEmpty()) {
        return true;
      }
    }
    return false;
  }

  private static boolean exists(SessionCatalog catalog, CatalogTable table, Map<String, String> spec) {
    try {
      catalog.getPartition(table.identifier(), scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(spec)));
      return true;
    } catch (Exception e) {  // Scala's methods declare nothing: NoSuchPartitionException arrives undeclared
      if (e instanceof org.apache.spark.sql.AnalysisException) {  // no such partition (or a spec Spark refuses later)
        return false;
      }
      throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
    }
  }

  /** The statement as written, without {@code IF NOT EXISTS} (its fields vary by Spark release: rebuilt by name). */
  private static LogicalPlan withoutIfNotExists(InsertIntoStatement insert) {
    Object[] fields = new Object[insert.productArity()];
    for (int i = 0; i < fields.length; i++) {
      fields[i] = "ifPartitionNotExists".equals(insert.productElementName(i)) ? Boolean.FALSE
          : insert.productElement(i);
    }
    for (Constructor<?> c : InsertIntoStatement.class.getConstructors()) {
      if (c.getParameterCount() == fields.length) {
        try {
          LogicalPlan out = (LogicalPlan) c.newInstance(fields);
          out.copyTagsFrom(insert);
          return out;
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException("bucketkit: cannot rebuild " + insert.nodeName() + ": " + e, e);
        }
      }
    }
    throw new IllegalStateException("bucketkit: no constructor of " + insert.nodeName() + " takes its "
        + fields.length + " fields");
  }
}
