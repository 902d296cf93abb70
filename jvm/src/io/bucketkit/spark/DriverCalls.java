package io.bucketkit.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.bucketkit.acid.AcidSnapshotTable;
import io.bucketkit.compat.SparkCompat;
import io.bucketkit.hashing.HiveBucketColumn;
import io.bucketkit.layout.KeptVersions;
import io.bucketkit.layout.TablePartition;
import io.bucketkit.table.HiveBucketedTable;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.jdk.javaapi.CollectionConverters;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What bucketkit's Python API asks of the driver's JVM, as SQL table functions of bucketkit's
 * extensions, so that a Spark Connect client (no py4j) asks the same as a classic session does:
 * {@code SELECT * FROM bucketkit_describe('db.t')}. Each is evaluated once, on the driver, when the
 * query is analyzed, in the session that runs it (a Connect client's own session on the server), and
 * returns its answer as rows. The calls are the ones the classic path makes over py4j, never a second
 * copy of their rules (tests/test_connect.py holds the two paths equal):
 *
 * <ul>
 *   <li>{@code bucketkit_describe(name)}: the catalog table's metadata as JSON ({@link
 *       AcidSnapshotTable#describe}), with {@code misplaced_partition} ({@link CatalogPartitions#misplaced});
 *   <li>{@code bucketkit_table_path(name)}: where the catalog keeps, or would keep, the table's files;
 *   <li>{@code bucketkit_status(name)}: how Spark SQL plans the table ({@link #status});
 *   <li>{@code bucketkit_held(name)}: whether {@code bucketkit.scan} reads the table through the catalog, and
 *       which version it holds ({@link #held});
 *   <li>{@code bucketkit_parse(predicate)}: a SQL predicate parsed by the session's parser, as Catalyst's JSON;
 *   <li>{@code bucketkit_session()}: the session's default parallelism and master;
 *   <li>{@code bucketkit_set_bucketing(name, columns, buckets, sort_columns, version)}: {@link CatalogEdit#setBucketing};
 *   <li>{@code bucketkit_directory(directory, name, schema_json, partition_columns, bucket_column, buckets,
 *       version, format)}: a directory read bucketed ({@link BucketDirectory#read}).
 * </ul>
 */
public final class DriverCalls {
  private DriverCalls() {}

  /** The function descriptions {@link BucketkitExtensions} injects. */
  static List<scala.Tuple3<FunctionIdentifier, ExpressionInfo,
      scala.Function1<scala.collection.immutable.Seq<Expression>, LogicalPlan>>> functions() {
    List<scala.Tuple3<FunctionIdentifier, ExpressionInfo,
        scala.Function1<scala.collection.immutable.Seq<Expression>, LogicalPlan>>> out = new ArrayList<>();
    out.add(function("bucketkit_describe", 1, a -> rows(new String[] {"description"},
        describe(SparkSession.active(), string(a, 0)))));
    out.add(function("bucketkit_table_path", 1, a -> rows(new String[] {"location"},
        tablePath(SparkSession.active(), string(a, 0)))));
    out.add(function("bucketkit_held", 1, a -> rows(new String[] {"held"}, held(SparkSession.active(), string(a, 0)))));
    out.add(function("bucketkit_status", 1, a -> {
      try {
        String[] status = status(SparkSession.active(), string(a, 0));
        return rows(new String[] {"state", "detail"}, status[0], status[1]);
      } catch (java.io.IOException e) {
        throw SparkCompat.failure("bucketkit: listing table " + string(a, 0) + " failed: " + e.getMessage(), e);
      }
    }));
    out.add(function("bucketkit_parse", 1, a -> rows(new String[] {"tree"},
        SparkSession.active().sessionState().sqlParser().parseExpression(string(a, 0)).toJSON())));
    out.add(function("bucketkit_session", 0, a -> {
      SparkSession spark = SparkSession.active();
      return rows(new String[] {"default_parallelism", "master"},
          Integer.toString(spark.sparkContext().defaultParallelism()), spark.sparkContext().master());
    }));
    out.add(function("bucketkit_set_bucketing", 5, a -> {
      CatalogEdit.setBucketing(SparkSession.active(), string(a, 0), strings(a, 1), integer(a, 2), strings(a, 3),
          integer(a, 4));
      return rows(new String[] {"table"}, string(a, 0));
    }));
    out.add(function("bucketkit_publish", 2, a -> {
      try {
        io.bucketkit.write.MetastorePublish.publish(SparkSession.active(), string(a, 0), string(a, 1));
      } catch (Exception e) {
        throw SparkCompat.failure("bucketkit: publishing table " + string(a, 0) + " at " + string(a, 1)
            + " in the metastore failed: " + e.getMessage(), e);
      }
      return rows(new String[] {"table"}, string(a, 0));
    }));
    out.add(function("bucketkit_directory", 8, a -> {
      try {
        return BucketDirectory.read(SparkSession.active(), string(a, 0), string(a, 1), string(a, 2),
            Arrays.asList(strings(a, 3)), string(a, 4), integer(a, 5), integer(a, 6), string(a, 7)).logicalPlan();
      } catch (java.io.IOException e) {
        throw SparkCompat.failure("bucketkit: listing directory " + string(a, 0) + " failed: " + e.getMessage(), e);
      }
    }));
    return out;
  }

  /**
   * The SQL function {@code bucketkit_hive_bucket(version, buckets, array(hive types), key, ...)} of
   * bucketkit's extensions: {@link HiveBucketColumn#of}'s expression, for a client that has no py4j (Spark
   * Connect).
   */
  static scala.Tuple3<org.apache.spark.sql.catalyst.FunctionIdentifier,
      org.apache.spark.sql.catalyst.expressions.ExpressionInfo,
      scala.Function1<scala.collection.immutable.Seq<Expression>, Expression>> hiveBucketFunction() {
    String name = "bucketkit_hive_bucket";
    return new scala.Tuple3<>(org.apache.spark.sql.catalyst.FunctionIdentifier.apply(name),
        new org.apache.spark.sql.catalyst.expressions.ExpressionInfo(HiveBucketColumn.class.getName(), name),
        new scala.runtime.AbstractFunction1<>() {
          @Override
          public Expression apply(scala.collection.immutable.Seq<Expression> seq) {
            List<Expression> args = CollectionConverters.asJava(seq);
            if (args.size() < 4 || !args.get(0).foldable() || !args.get(1).foldable() || !args.get(2).foldable()) {
              throw new IllegalArgumentException("bucketkit: " + name + "(version, buckets, array(hive types), key, "
                  + "...) takes constant version, bucket count and types, then the key columns");
            }
            return HiveBucketColumn.expression(args.subList(3, args.size()).toArray(Expression[]::new),
                strings(args, 2), integer(args, 0), integer(args, 1));
          }
        });
  }

  /**
   * Python-callable: whether the catalog plans table {@code name} bucketed, as {"bucketed", what
   * Spark SQL is told} or {"unbucketed", why not}; it lists the table's files, as a query would.
   *
   * @throws org.apache.spark.sql.AnalysisException no such table, namespace, or a name that does not parse
   */
  public static String[] status(SparkSession spark, String name)
      throws java.io.IOException, org.apache.spark.sql.AnalysisException {
    TableIdentifier id = io.bucketkit.compat.SparkCompat.sessionTable(spark, name);
    CatalogTable t = spark.sessionState().catalog().getTableMetadata(id);
    if (HiveBucketedTable.isAcid(t)) {
      String[] misplaced = CatalogPartitions.misplaced(spark, t);  // as BucketkitCatalog.loadTable decides
      return misplaced == null ? AcidSnapshotTable.status(t) : new String[] {"unbucketed", "every read is refused: "
          + CatalogPartitions.acidRefusal(t.identifier().unquotedString(), misplaced)};
    }
    HiveBucketedTable.Vouched v = HiveBucketedTable.vouch(spark, t);
    if (v.table() == null) {
      return new String[] {"unbucketed", v.doubt()};
    }
    HiveBucketedTable b = v.table();
    List<TablePartition> parts = v.listing().parts();
    int files = parts.stream().mapToInt(p -> p.files.size()).sum();
    return new String[] {"bucketed", "Hive bucketing v" + b.version + ", " + b.buckets + " buckets on " + String.join(", ", b.bucketColumns)
        + (b.bucketColumn != null ? " (transform " + b.bucketTransform().describe() + "), "
            : " (keyed by _bucket_hash: Spark's key-grouped partitioning takes one column per expression), ") + b.format + ", " + parts.size()
        + " partition(s), " + files + " file(s)"};
  }

  /**
   * The JSON {@code bucketkit_describe} answers: the table's description, the values of the partitions the metastore
   * lists ({@code partitions}, null for an unpartitioned table) and its misplaced partition.
   */
  public static String describe(SparkSession spark, String name) {
    try {
      TableIdentifier id = io.bucketkit.compat.SparkCompat.sessionTable(spark, name);
      CatalogTable t = spark.sessionState().catalog().getTableMetadata(id);
      List<org.apache.spark.sql.catalyst.catalog.CatalogTablePartition> parts = io.bucketkit.layout.TablePartition.listed(spark, t);
      for (int again = 0; again < 3 && io.bucketkit.layout.TablePartition.ofAnotherTable(t, parts); again++) {
        t = spark.sessionState().catalog().getTableMetadata(id);  // a REPLACE swapped the table in between: again
        parts = io.bucketkit.layout.TablePartition.listed(spark, t);
      }
      ObjectNode d = AcidSnapshotTable.description(t, parts);
      d.put("name", name);
      String[] misplaced = CatalogPartitions.misplaced(t, parts);
      if (misplaced == null) {
        d.putNull("misplaced_partition");
      } else {
        Arrays.stream(misplaced).forEach(d.putArray("misplaced_partition")::add);
      }
      return d.toString();
    } catch (org.apache.spark.sql.AnalysisException e) {
      throw new IllegalArgumentException("bucketkit: table " + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * The JSON {@code bucketkit_held} answers: how {@code bucketkit.scan} reads catalog table {@code name}
   * through the catalog. {@code bucketed}: whether the catalog reads it bucketed ({@link HiveBucketedTable#vouch},
   * the verdict of every query; else {@code detail} says why and bucketkit.scan reads it itself); {@code version}:
   * the number of the version live now, where its files are that kept version's own ({@link KeptVersions#pinnedNumber}:
   * read with {@code VERSION AS OF} it, whatever is committed later), else null (read in place); {@code table}:
   * the table's name quoted with its catalog and database, what to read. A Hive
   * transactional table is never held here (its snapshots are Hive's write ids).
   */
  public static String held(SparkSession spark, String name) throws java.io.IOException {
    try {
      TableIdentifier id = io.bucketkit.compat.SparkCompat.sessionTable(spark, name);
      CatalogTable t = spark.sessionState().catalog().getTableMetadata(id);
      ObjectNode out = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
      // the table's own name, catalog and database quoted: a temporary view of the same name never shadows it
      out.put("table", t.identifier().quotedString());
      if (HiveBucketedTable.isAcid(t)) {
        return out.put("bucketed", false).putNull("version").put("detail", "a Hive transactional table").toString();
      }
      HiveBucketedTable.Vouched v = HiveBucketedTable.vouch(spark, t);
      out.put("bucketed", v.table() != null);
      Integer number = v.table() == null ? null
          : KeptVersions.pinnedNumber(v.table().hadoopConf, HiveBucketedTable.pathOf(t.location()), v.listing().parts());
      if (number == null) {
        out.putNull("version");
      } else {
        out.put("version", number);
      }
      return out.put("detail", v.doubt()).toString();
    } catch (org.apache.spark.sql.AnalysisException e) {
      throw new IllegalArgumentException("bucketkit: table " + name + ": " + e.getMessage(), e);
    }
  }

  /** Where the catalog keeps table {@code name}'s files, or would keep them if it were created now. */
  public static String tablePath(SparkSession spark, String name) {
    try {
      TableIdentifier id = io.bucketkit.compat.SparkCompat.sessionTable(spark, name);
      if (spark.sessionState().catalog().tableExists(id)) {
        return spark.sessionState().catalog().getTableMetadata(id).location().toString();
      }
      TableIdentifier qualified = new TableIdentifier(id.table(), scala.Option.apply(
          id.database().isDefined() ? id.database().get() : spark.sessionState().catalog().getCurrentDatabase()));
      return spark.sessionState().catalog().defaultTablePath(qualified).toString();
    } catch (org.apache.spark.sql.AnalysisException e) {
      throw new IllegalArgumentException("bucketkit: table " + name + ": " + e.getMessage(), e);
    }
  }

  @FunctionalInterface
  private interface Call {
    LogicalPlan apply(List<Expression> args) throws Exception;
  }

  private static scala.Tuple3<FunctionIdentifier, ExpressionInfo,
      scala.Function1<scala.collection.immutable.Seq<Expression>, LogicalPlan>> function(String name, int arity,
                                                                                        Call call) {
    scala.Function1<scala.collection.immutable.Seq<Expression>, LogicalPlan> builder =
        new scala.runtime.AbstractFunction1<>() {
          @Override
          public LogicalPlan apply(scala.collection.immutable.Seq<Expression> seq) {
            List<Expression> args = CollectionConverters.asJava(seq);
            if (args.size() != arity) {
              throw new IllegalArgumentException("bucketkit: " + name + " takes " + arity + " argument(s), got "
                  + args.size());
            }
            for (Expression e : args) {
              if (!e.foldable()) {
                throw new IllegalArgumentException("bucketkit: " + name + "'s arguments must be constants, got "
                    + e.sql());
              }
            }
            try {
              return call.apply(args);
            } catch (RuntimeException e) {
              throw e;
            } catch (Exception e) {
              throw new IllegalArgumentException("bucketkit: " + name + ": " + e.getMessage(), e);
            }
          }
        };
    return new scala.Tuple3<>(FunctionIdentifier.apply(name),
        new ExpressionInfo(DriverCalls.class.getName(), name), builder);
  }

  /** One row of string columns. */
  private static LogicalPlan rows(String[] names, String... values) {
    List<StructField> fields = new ArrayList<>();
    for (String n : names) {
      fields.add(DataTypes.createStructField(n, DataTypes.StringType, true));
    }
    List<Attribute> output = new ArrayList<>(CollectionConverters.asJava(
        org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(new StructType(fields.toArray(StructField[]::new)))));
    Row row = RowFactory.create((Object[]) values);
    return LocalRelation.fromExternalRows(CollectionConverters.asScala(output).toSeq(),
        CollectionConverters.asScala(List.of(row)).toSeq());
  }

  /** The constant argument {@code i} of a function call: evaluated, as a string, an integer, a string array. */
  static Object value(List<Expression> args, int i) {
    return args.get(i).eval(null);
  }

  static String string(List<Expression> args, int i) {
    Object v = value(args, i);
    return v == null ? null : v.toString();
  }

  static int integer(List<Expression> args, int i) {
    Object v = value(args, i);
    if (!(v instanceof Number n)) {
      throw new IllegalArgumentException("bucketkit: argument " + (i + 1) + " must be an integer, got " + v);
    }
    return n.intValue();
  }

  static String[] strings(List<Expression> args, int i) {
    Object v = value(args, i);
    if (!(v instanceof ArrayData a)) {
      throw new IllegalArgumentException("bucketkit: argument " + (i + 1) + " must be an array of strings, got " + v);
    }
    String[] out = new String[a.numElements()];
    for (int j = 0; j < out.length; j++) {
      out[j] = a.getUTF8String(j).toString();
    }
    return out;
  }
}
