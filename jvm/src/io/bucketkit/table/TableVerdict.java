package io.bucketkit.table;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.types.StructField;

/**
 * What a catalog table's metadata says of its bucketing, by the rules Python applies too
 * ({@code bucketkit.trust.catalog_verdict}; a hypothesis test holds the two equal over generated
 * tables): Spark's own {@code bucketBy} table, a Hive ACID table, a Hive bucketed table with its
 * hash version and format, or a table to read unbucketed and why. Pure: no listing, no Spark session.
 *
 * <p>The rules are Hive's and Trino's: a missing {@code bucketing_version} is version 1
 * ({@code Utilities.getBucketingVersion}, {@code HiveBucketing.getBucketingVersion}); any value but
 * 1 or 2 leaves the hash unknown; {@code transactional} (or {@code TRANSACTIONAL}) equal to
 * {@code true} in any case makes a table ACID ({@code AcidUtils.isTransactionalTable}).
 */
public record TableVerdict(String kind, int version, String format, String reason) {
  public static final String SPARK = "spark";
  public static final String HUDI = "hudi";
  /** Python's {@code trust.HUDI_REASON}. */
  public static final String HUDI_REASON = "an Apache Hudi table: its rows are placed by Hudi's bucket index, not by "
      + "Hive's or Spark's hash, whatever CLUSTERED BY its Hive sync declared; bucketkit reads it from its location "
      + "(bucketkit.scan, docs/hudi.md)";
  public static final String ACID = "acid";
  public static final String NOT_BUCKETED = "not-bucketed";
  public static final String UNBUCKETED = "unbucketed";
  public static final String BUCKETED = "bucketed";

  /**
   * @param provider the table's provider, lower or upper case ("hive" for a Hive serde table)
   * @param bucketColumns the CLUSTERED BY columns (empty: not bucketed)
   * @param properties the table properties
   * @param serde the storage serde class ("" when none)
   * @param bucketField the first bucket column as a data column, or null when it is not one
   */
  public static TableVerdict of(String provider, List<String> bucketColumns, Map<String, String> properties,
                                String serde, StructField bucketField) {
    String p = provider == null ? "hive" : provider.toLowerCase(Locale.ROOT);
    if (isHudi(p, properties)) {
      return new TableVerdict(HUDI, 0, "parquet", HUDI_REASON);
    }
    if (!p.equals("hive")) {
      return new TableVerdict(SPARK, 1, p, "provider " + p + " (Spark plans its own bucketBy tables)");
    }
    int version = version(properties);
    String badVersion = badVersion(properties);
    if (isAcid(properties)) {
      return new TableVerdict(ACID, version, format(serde),
          version == 0 ? badVersion : "a Hive ACID table (transactional=true)");
    }
    if (bucketColumns.isEmpty()) {
      return new TableVerdict(NOT_BUCKETED, 0, format(serde), "not bucketed");
    }
    if (version == 0) {
      return unbucketed(badVersion);
    }
    String format = format(serde);
    if (format == null) {
      return unbucketed("serde " + (serde.isEmpty() ? "(none)" : serde) + " is not ORC, Parquet or Hive's text serde");
    }
    if (bucketField == null) {
      return unbucketed("bucket column " + bucketColumns.get(0) + " is not a data column");
    }
    if (bucketColumns.size() == 1) {  // a type Hive and Trino bucket on (Python: hashing.check_bucketable)
      try {
        io.bucketkit.hashing.HiveHash.Type.parse(HiveBucketedTable.hiveType(bucketField));
      } catch (UnsupportedOperationException | IllegalArgumentException e) {
        return unbucketed("bucket column " + bucketField.name() + ": " + e.getMessage());
      }
    }
    return new TableVerdict(BUCKETED, version, format, null);
  }

  /** The table's Hive bucketing version: the property, missing is 1 (Hive's and Trino's rule); 0: unknown. */
  public static int version(Map<String, String> properties) {
    String declared = properties.get("bucketing_version");
    String v = declared == null ? "1" : declared.trim();
    return v.equals("1") || v.equals("2") ? Integer.parseInt(v) : 0;
  }

  /** Why {@link #version} is 0: the value the property holds, and what was expected. */
  public static String badVersion(Map<String, String> properties) {
    return "table property bucketing_version='" + properties.get("bucketing_version") + "', expected '1' or '2' "
        + "(missing is 1, as Hive and Trino read it); any other value leaves the hash unknown";
  }

  private static TableVerdict unbucketed(String reason) {
    return new TableVerdict(UNBUCKETED, 0, null, reason);
  }

  /** Python's {@code trust.is_hudi_catalog_table}: provider hudi, or what Hudi's Hive sync leaves in the properties. */
  static boolean isHudi(String provider, Map<String, String> properties) {
    String synced = properties.get("spark.sql.sources.provider");
    if (provider.equals("hudi") || (synced != null && synced.toLowerCase(Locale.ROOT).equals("hudi"))) {
      return true;
    }
    for (String key : properties.keySet()) {
      if (key.equals("last_commit_time_sync") || key.startsWith("hoodie.")) {
        return true;
      }
    }
    return false;
  }

  /** Hive's {@code AcidUtils.isTransactionalTable}. */
  public static boolean isAcid(Map<String, String> properties) {
    String value = properties.get("transactional");
    if (value == null) {
      value = properties.get("TRANSACTIONAL");
    }
    return value != null && value.trim().equalsIgnoreCase("true");
  }

  /** Hive's TEXTFILE serde (with {@code TextInputFormat}: {@code STORED AS TEXTFILE}, Hive's default). */
  static final String TEXT_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe";

  /** "orc", "parquet", "text" (Hive's LazySimpleSerDe) or null, from a serde class name. */
  static String format(String serde) {
    String s = serde == null ? "" : serde.toLowerCase(Locale.ROOT);
    return s.contains("orc") ? "orc" : s.contains("parquet") ? "parquet"
        : TEXT_SERDE.equalsIgnoreCase(s.trim()) ? "text" : null;
  }

  /** Python-callable (the differential test): {kind, version, format, reason}. */
  public static String[] describe(String provider, List<String> bucketColumns, Map<String, String> properties,
                                  String serde, StructField bucketField) {
    TableVerdict v = of(provider, bucketColumns, properties, serde, bucketField);
    return new String[] {v.kind, Integer.toString(v.version), v.format, v.reason};
  }

  /**
   * Why a table declaring ({@code family}, {@code columns}, {@code count}, {@code version}) in the
   * catalog cannot be read bucketed when bucketkit's record at {@code where} says how it hashed its
   * files otherwise, or null: Python's {@code trust.record_disagreement}, word for word (a hypothesis
   * test holds the two equal). A record's missing hash family is {@code hive}.
   */
  public static String recordDisagreement(String family, List<String> columns, int count, int version,
                                          String recordFamily, List<String> recordColumns, int recordCount,
                                          int recordVersion, String where) {
    List<String> diffs = new java.util.ArrayList<>();
    String recorded = recordFamily == null || recordFamily.isEmpty() ? "hive" : recordFamily;
    String declared = family == null || family.isEmpty() ? "hive" : family;
    if (!recorded.equals(declared)) {
      diffs.add("hash_family " + recorded + " where the catalog says " + declared);
    }
    List<String> rc = recordColumns.stream().map(c -> c.toLowerCase(Locale.ROOT)).toList();
    List<String> dc = columns.stream().map(c -> c.toLowerCase(Locale.ROOT)).toList();
    if (!rc.equals(dc)) {
      diffs.add("bucketed_by (" + String.join(", ", rc) + ") where the catalog says (" + String.join(", ", dc) + ")");
    }
    if (recordCount != count) {
      diffs.add("bucket_count " + recordCount + " where the catalog says " + count);
    }
    if (recordVersion != version) {
      diffs.add("bucketing_version " + recordVersion + " where the catalog says " + version);
    }
    if (diffs.isEmpty()) {
      return null;
    }
    return "bucketkit's record " + where + " says its files were written with " + String.join(", ", diffs)
        + ": pruning or joining by the catalog's layout would miss rows. Set the table back (ALTER TABLE ... "
        + "SET TBLPROPERTIES / CLUSTERED BY as recorded), or rewrite it in the new layout";
  }
}
