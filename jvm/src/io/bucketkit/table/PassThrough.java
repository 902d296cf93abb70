package io.bucketkit.table;

import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.sql.catalyst.catalog.CatalogTable;

/**
 * Where a SQL user learns why a table passes through to Spark unbucketed. EXPLAIN and DESCRIBE of
 * such a table are Spark's own (the catalog returns Spark's V1 table), so the reason goes to the
 * driver's log, as a WARN once per table and reason when the table is a Hive bucketed table (joins
 * and GROUP BYs on its key will shuffle), and to {@code bucketkit.sql_status}, which asks
 * {@link io.bucketkit.spark.DriverCalls#status}: the same {@link HiveBucketedTable#vouch} the catalog runs,
 * never a second copy of its rules.
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
}
