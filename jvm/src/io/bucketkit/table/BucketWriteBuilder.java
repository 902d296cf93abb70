package io.bucketkit.table;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.bucketkit.layout.PartitionPaths;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwriteV2;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;

/**
 * How an INSERT into a {@link HiveBucketedTable} replaces data, with Hive's semantics for Hive tables.
 *
 * <ul>
 *   <li>{@code INSERT INTO}: append.</li>
 *   <li>{@code INSERT OVERWRITE} of an unpartitioned table: the whole table.</li>
 *   <li>{@code INSERT OVERWRITE} of a partitioned table: the partitions the query writes, plus the
 *       partition named by a full static spec ({@code PARTITION (p='x')}, emptied even when the
 *       query returns no rows), never the others. This is what Hive and Spark's own Hive INSERT do
 *       whatever {@code spark.sql.sources.partitionOverwriteMode} says; a V2 table in Spark's
 *       static mode would otherwise be truncated whole.</li>
 * </ul>
 */
final class BucketWriteBuilder implements SupportsOverwriteV2, SupportsDynamicOverwrite {
  private final HiveBucketedTable table;
  private final LogicalWriteInfo info;
  private boolean overwrite;
  private final List<String> staticPartitions = new ArrayList<>();

  BucketWriteBuilder(HiveBucketedTable table, LogicalWriteInfo info) {
    this.table = table;
    this.info = info;
  }

  /** Only {@code true} and equalities of partition columns with literals (Spark's static partition spec, {@code p <=> 'x'}). */
  @Override
  public boolean canOverwrite(Predicate[] predicates) {
    return Arrays.stream(predicates).allMatch(p -> p.name().equals("ALWAYS_TRUE") || staticValue(p) != null);
  }

  @Override
  public WriteBuilder overwrite(Predicate[] predicates) {
    overwrite = true;
    Map<String, String> values = new HashMap<>();
    for (Predicate p : predicates) {
      String[] kv = staticValue(p);
      if (kv != null) {
        values.put(kv[0], kv[1]);
      }
    }
    String[] names = table.partitionSchema.fieldNames();
    if (names.length > 0 && values.keySet().containsAll(Arrays.asList(names))) {
      String[] texts = new String[names.length];
      for (int i = 0; i < names.length; i++) {
        texts[i] = values.get(names[i]);
      }
      staticPartitions.add(PartitionPaths.path(names, texts));
    }
    return this;
  }

  /** {@code [column, value text]} of {@code partition_column = literal}, else null. */
  private String[] staticValue(Predicate p) {
    if (!(p.name().equals("=") || p.name().equals("<=>")) || p.children().length != 2 || !(p.children()[0] instanceof NamedReference)
        || !(p.children()[1] instanceof Literal)) {
      return null;
    }
    String[] ref = ((NamedReference) p.children()[0]).fieldNames();
    Literal<?> value = (Literal<?>) p.children()[1];
    for (org.apache.spark.sql.types.StructField f : table.partitionSchema.fields()) {
      if (ref.length == 1 && f.name().equalsIgnoreCase(ref[0])) {
        return new String[] {f.name().toLowerCase(Locale.ROOT), PartitionPaths.text(value.value(), f.dataType())};
      }
    }
    return null;
  }

  @Override
  public WriteBuilder truncate() {
    overwrite = true;
    return this;
  }

  @Override
  public WriteBuilder overwriteDynamicPartitions() {
    overwrite = true;
    return this;
  }

  @Override
  public Write build() {
    return new BucketWrite(table, info, overwrite, staticPartitions);
  }
}
