package io.bucketkit.spark;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.classic.SparkSession;

/**
 * Where a SQL user learns why a table passes through to Spark unbucketed. EXPLAIN and DESCRIBE of
 * such a table are Spark's own (the catalog returns Spark's V1 table), so the reason goes to the
 * driver's log, as a WARN once per table and reason when the table is a Hive bucketed table (joins
 * and GROUP BYs on its key will shuffle), and to {@code bucketkit.sql_status}, which asks
 * {@link #status}: the same {@link HiveBucketedTable#vouch} the catalog runs, never a second copy of
 * its rules.
 */
public final class PassThrough {
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

  private PassThrough() {}

  static void log(org.slf4j.Logger log, CatalogTable t, String doubt) {
    String provider = t.provider().isDefined() ? t.provider().get().toLowerCase(Locale.ROOT) : "hive";
    String name = t.identifier().unquotedString();
    if (!provider.equals("hive") || t.bucketSpec().isEmpty()) {
      log.debug("bucketkit: {} is read by Spark as an unbucketed table: {}", name, doubt);
    } else if (WARNED.add(name + "\n" + doubt)) {
      log.warn("bucketkit: Spark SQL reads Hive bucketed table {} as unbucketed (joins, GROUP BY and filters on its "
          + "bucket column shuffle or read every file): {}", name, doubt);
    }
  }

  /** Tables and reasons warned about in this JVM, as "table: reason" (tests). */
  public static String[] warned() {
    return WARNED.stream().map(w -> w.replace("\n", ": ")).sorted().toArray(String[]::new);
  }

  /**
   * Python-callable: whether the catalog plans table {@code name} bucketed, as {"bucketed", what
   * Spark SQL is told} or {"unbucketed", why not}; it lists the table's files, as a query would.
   *
   * @throws org.apache.spark.sql.AnalysisException no such table, namespace, or a name that does not parse
   */
  public static String[] status(SparkSession spark, String name)
      throws IOException, org.apache.spark.sql.AnalysisException {
    TableIdentifier id = spark.sessionState().sqlParser().parseTableIdentifier(name);
    CatalogTable t = spark.sessionState().catalog().getTableMetadata(id);
    if (HiveBucketedTable.isAcid(t)) {
      return AcidSnapshotTable.status(t);
    }
    HiveBucketedTable.Vouched v = HiveBucketedTable.vouch(spark, t);
    if (v.table() == null) {
      return new String[] {"unbucketed", v.doubt()};
    }
    HiveBucketedTable b = v.table();
    List<HiveBucketedTable.TablePartition> parts = v.listing().parts();
    int files = parts.stream().mapToInt(p -> p.files.size()).sum();
    return new String[] {"bucketed", "Hive bucketing v" + b.version + ", " + b.buckets + " buckets on " + b.bucketColumn
        + " (transform " + b.bucketTransform().describe() + "), " + b.format + ", " + parts.size()
        + " partition(s), " + files + " file(s)"};
  }
}
