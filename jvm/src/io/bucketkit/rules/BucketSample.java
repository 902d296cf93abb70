package io.bucketkit.rules;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.bucketkit.acid.AcidSnapshotTable;
import io.bucketkit.compat.SparkCompat;
import io.bucketkit.hashing.HiveBucketColumn;
import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.table.HiveBucketedTable;
import io.bucketkit.table.TableVerdict;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.HiveTableRelation;
import org.apache.spark.sql.catalyst.expressions.ApplyFunctionExpression;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Sample;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.Origin;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Hive's {@code TABLESAMPLE (BUCKET x OUT OF y)} on a Hive bucketed table: the rows whose bucket
 * hash, taken into {@code y} buckets, is {@code x - 1} — Hive's sample predicate
 * ({@code (hash(bucket columns) & Integer.MAX_VALUE) % y = x - 1}, the hash of the table's
 * {@code bucketing_version}), so the same rows every time and the ones Hive returns. Spark parses the
 * clause into a random sample of fraction x/y ({@code Sample}); this resolution rule finds such a
 * sample by the SQL text it was parsed from (the node's origin) and puts Hive's predicate in its
 * place. On a table the catalog reads bucketed, the predicate is the table's own bucket function of
 * {@code y} buckets, which its scan prunes by ({@code ScanPredicates}): {@code y} dividing the bucket
 * count reads buckets {@code x-1, x-1+y, ...}; a multiple of it reads bucket {@code (x-1) mod n}. On a
 * table bucketed by several columns, the same buckets, by a predicate on its {@code _bucket} column.
 *
 * <p>Other tables keep Spark's meaning: tables not bucketed, Spark's {@code bucketBy} tables and Hudi
 * tables (Hive would refuse the clause or hash otherwise), a sample of a subquery, and the
 * DataFrame API's {@code sample}. A Hive bucketed table whose hash cannot be computed (an unknown
 * {@code bucketing_version}, a bucket type Hive cannot hash) fails the query with the reason: Spark's
 * random rows are not Hive's. {@code ON col} is refused by Spark's own parser.
 */
public final class BucketSample extends Rule<LogicalPlan> {
  private static final Pattern CLAUSE = Pattern.compile(
      "(?is)TABLESAMPLE\\s*\\(\\s*BUCKET\\s+([0-9]{1,9})\\s+OUT\\s+OF\\s+([0-9]{1,9})\\s*\\)");

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return plan.transformUp(new scala.runtime.AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
      @Override
      public boolean isDefinedAt(LogicalPlan p) {
        return p instanceof Sample s && !s.withReplacement() && s.childrenResolved() && clause(s) != null
            && hiveBucketed(catalogTable(leaf(s.child())));
      }

      @Override
      public LogicalPlan apply(LogicalPlan p) {
        return rewrite((Sample) p);
      }
    });
  }

  /** {x, y} of the {@code TABLESAMPLE (BUCKET x OUT OF y)} clause {@code s} was parsed from, or null. */
  static int[] clause(Sample s) {
    Origin o = s.origin();
    if (o.sqlText().isEmpty() || o.startIndex().isEmpty() || o.stopIndex().isEmpty()) {
      return null;
    }
    String text = o.sqlText().get();
    int start = (Integer) o.startIndex().get(), stop = (Integer) o.stopIndex().get();
    if (start < 0 || stop >= text.length() || start > stop) {
      return null;
    }
    Matcher m = CLAUSE.matcher(text.substring(start, stop + 1));
    return m.matches() ? new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))} : null;
  }

  private static LogicalPlan leaf(LogicalPlan p) {
    while (p instanceof SubqueryAlias a) {
      p = a.child();
    }
    return p;
  }

  /** The catalog table a relation reads, or null. */
  private static CatalogTable catalogTable(LogicalPlan relation) {
    if (relation instanceof DataSourceV2Relation r) {
      return r.table() instanceof HiveBucketedTable t ? t.catalogTable()
          : r.table() instanceof AcidSnapshotTable a ? a.catalogTable() : null;
    }
    if (relation instanceof HiveTableRelation h) {
      return h.tableMeta();
    }
    if (relation instanceof LogicalRelation l && l.catalogTable().isDefined()) {
      return l.catalogTable().get();
    }
    return null;
  }

  /** Whether {@code t} declares Hive's bucketing (not Spark's bucketBy, not Hudi's bucket index). */
  private static boolean hiveBucketed(CatalogTable t) {
    if (t == null || t.bucketSpec().isEmpty()) {
      return false;
    }
    String kind = HiveBucketedTable.verdict(t, t.dataSchema()).kind();
    return !kind.equals(TableVerdict.SPARK) && !kind.equals(TableVerdict.HUDI) && !kind.equals(TableVerdict.NOT_BUCKETED);
  }

  private static LogicalPlan rewrite(Sample s) {
    int[] xy = clause(s);
    int x = xy[0], y = xy[1];
    LogicalPlan relation = leaf(s.child());
    CatalogTable t = catalogTable(relation);
    String what = "TABLESAMPLE (BUCKET " + x + " OUT OF " + y + ") on " + t.identifier().unquotedString();
    if (x < 1 || x > y) {
      throw SparkCompat.analysisError(what + ": x must be 1 to " + y + " (Hive's rule)");
    }
    java.util.Map<String, String> properties = CollectionConverters.asJava(t.properties());
    int version = TableVerdict.version(properties);
    if (version == 0) {  // Hive's sample is the rows of one hash value
      throw SparkCompat.analysisError(what + ": " + TableVerdict.badVersion(properties));
    }
    List<String> columns = CollectionConverters.asJava(t.bucketSpec().get().bucketColumnNames());
    List<Expression> keys = new ArrayList<>();
    List<StructField> fields = new ArrayList<>();
    for (String c : columns) {
      Attribute a = attribute(s.child(), c);
      StructField f = field(t, c);
      if (a == null || f == null) {
        throw SparkCompat.analysisError(what + ": bucket column " + c + " is not a data column of the table");
      }
      keys.add(a);
      fields.add(f);
    }
    Expression bucket;
    try {
      bucket = bucketOf(relation, keys, fields, version, y);
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      throw SparkCompat.analysisError(what + ": Hive's bucket of its rows cannot be computed here: " + e.getMessage());
    }
    Expression predicate = new EqualTo(bucket, Literal.create(x - 1, DataTypes.IntegerType));
    Expression files = bucketsOfSample(relation, x - 1, y);
    return new Filter(files == null ? predicate : new org.apache.spark.sql.catalyst.expressions.And(files, predicate),
        s.child());
  }

  /**
   * On a table the catalog reads bucketed by several columns (whose hash is no function its scan prunes
   * by), the buckets holding the sample's rows as a predicate on {@code _bucket}, which its scan prunes by
   * ({@code _bucket} is each row's bucket, its hash's where its file's is unknown):
   * {@link HiveBucketFunction#sampledBuckets}. Else null.
   */
  private static Expression bucketsOfSample(LogicalPlan relation, int b, int y) {
    if (!(relation instanceof DataSourceV2Relation r) || !(r.table() instanceof HiveBucketedTable t)
        || t.bucketColumn != null || !t.offersBucketId()) {
      return null;
    }
    java.util.BitSet buckets = HiveBucketFunction.sampledBuckets(b, y, t.buckets);
    if (buckets == null) {
      return null;
    }
    List<Expression> ids = buckets.stream().mapToObj(i -> (Expression) Literal.create(i, DataTypes.IntegerType))
        .toList();
    // resolved by Spark's analyzer as the relation's metadata column
    return new org.apache.spark.sql.catalyst.expressions.In(
        org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute$.MODULE$.apply(HiveBucketedTable.BUCKET_ID),
        CollectionConverters.asScala(ids).toList());
  }

  /**
   * The bucket among {@code y} of each row: on a table the catalog reads bucketed, its own bucket
   * function (a predicate its scan prunes by); else Hive's hash as a Catalyst expression.
   */
  private static Expression bucketOf(LogicalPlan relation, List<Expression> keys, List<StructField> fields,
                                     int version, int y) {
    if (relation instanceof DataSourceV2Relation r && r.table() instanceof HiveBucketedTable && keys.size() == 1) {
      ScalarFunction<?> f = HiveBucketedTable.bind(version, fields.get(0), y);
      return new ApplyFunctionExpression(f, CollectionConverters.asScala(keys).toSeq());
    }
    String[] types = fields.stream().map(HiveBucketedTable::hiveType).toArray(String[]::new);
    return HiveBucketColumn.expression(keys.toArray(new Expression[0]), types, version, y);
  }

  private static Attribute attribute(LogicalPlan p, String column) {
    for (Attribute a : CollectionConverters.asJava(p.output())) {
      if (a.name().toLowerCase(Locale.ROOT).equals(column.toLowerCase(Locale.ROOT))) {
        return a;
      }
    }
    return null;
  }

  private static StructField field(CatalogTable t, String column) {
    for (StructField f : t.dataSchema().fields()) {
      if (f.name().toLowerCase(Locale.ROOT).equals(column.toLowerCase(Locale.ROOT))) {
        return f;
      }
    }
    return null;
  }
}
