package io.bucketkit.table;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.hashing.HiveHash;
import io.bucketkit.layout.BucketFiles;
import io.bucketkit.layout.FileManifest;
import io.bucketkit.layout.KeptVersions;
import io.bucketkit.layout.PartitionPaths;
import io.bucketkit.layout.TableListing;
import io.bucketkit.layout.TablePartition;
import io.bucketkit.layout.TablePartition.Located;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.BucketSpec;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A Hive bucketed catalog table whose bucketing bucketkit vouches for: bucket columns of types it
 * hashes (one keys Spark's joins and aggregates; several are pruned by, not keyed: Spark's
 * key-grouped partitioning takes one column per expression), {@code bucketing_version} 1 or 2 (missing is 1, as Hive and Trino read it), ORC or
 * Parquet, not transactional ({@link TableVerdict}), and every file's bucket known (see {@link BucketFiles}). {@link #load} returns
 * null with the reason logged for any other table; the catalog then hands Spark its own table.
 *
 * <p>The files are listed once, when the table is loaded for a query, so a query reads one listing.
 */
public final class HiveBucketedTable implements SupportsRead, SupportsWrite,
    org.apache.spark.sql.connector.catalog.SupportsMetadataColumns {
  /**
   * The metadata column of each row's bucket, from its file's name (Trino's {@code $bucket}, named as
   * Spark names its metadata columns): {@code WHERE _bucket = 3} reads bucket 3's files only. Where the
   * table is read unbucketed (its files' buckets are not vouched for), the hash of the row's bucket
   * columns ({@link io.bucketkit.read.BucketIdFill}). Absent when the table has a column of that name.
   */
  public static final String BUCKET_ID = "_bucket";

  /**
   * The metadata column of a table bucketed by several columns holding each row's masked Hive hash of its
   * bucket columns, of which {@code _bucket} is the remainder by the bucket count: what its scan is keyed by
   * ({@link io.bucketkit.hashing.HashModulo}) and {@link io.bucketkit.rules.KeyBySeveralColumns} joins and
   * groups by. Absent on a table of one bucket column, or with a column of that name.
   */
  public static final String BUCKET_HASH = "_bucket_hash";

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HiveBucketedTable.class);
  static final String CHAR_VARCHAR = "__CHAR_VARCHAR_TYPE_STRING";

  final CatalogTable table;
  public final String format;
  public final int version;
  public final int buckets;
  /** The one bucket column, lower case; null for a table bucketed by several ({@link #bucketColumns}). */
  public final String bucketColumn;
  /** The CLUSTERED BY columns, lower case, in their order (Hive hashes a row as {@code h = 31 * h + hash(c)}). */
  public final List<String> bucketColumns;
  final DataType bucketType;  // the one bucket column's (null: several)
  final String bucketHiveType;  // the one bucket column's (null: several)
  final List<DataType> bucketTypes;
  final List<String> bucketHiveTypes;
  private final HiveHash.Type[] hashTypes;
  final HiveBucketFunction.Bound function;  // the one bucket column's (null: several, which Spark's transforms cannot key)
  final StructType dataSchema;
  final StructType partitionSchema;
  private final boolean offersBucketId;  // none of its columns is named _bucket
  private final boolean offersBucketHash;  // several bucket columns, none of its columns named _bucket_hash
  final boolean forRead;  // loaded for a query (its scans list the partitions they read); false: for a write
  private List<Located> catalogParts;  // the metastore's partitions, asked once per query (null: not yet)
  KeptVersions.Found asOf;  // a time-travel read (VERSION / TIMESTAMP AS OF): that kept version's files; null: live
  public String directory;  // partitions and files listed from this directory, not the metastore's (a kept version, BucketDirectory)

  /**
   * The partitions a scan reads, listed as one version ({@link TableListing#oneVersion}), of
   * {@code total} in the table; {@code doubt}: why their files cannot be vouched for (then each file's
   * bucket is -1, the files those Spark's own reader would read), or null; {@code placement}: who vouches
   * for the placement of the partitions' rows, or why some are checked as they are read ({@link FileManifest}).
   */
  public record Selection(List<TablePartition> parts, int total, String doubt, String placement) {}

  /** The Hadoop configuration the table was listed with, reused by its scans' readers (null: a write's). */
  public transient Configuration hadoopConf;

  private HiveBucketedTable(CatalogTable table, String format, int version, List<StructField> bucketFields,
                            boolean forRead) {
    this.table = table;
    this.format = format;
    this.version = version;
    this.buckets = ((BucketSpec) table.bucketSpec().get()).numBuckets();
    this.bucketColumns = bucketFields.stream().map(f -> f.name().toLowerCase(Locale.ROOT)).toList();
    this.bucketTypes = bucketFields.stream().map(StructField::dataType).toList();
    this.bucketHiveTypes = bucketFields.stream().map(HiveBucketedTable::hiveType).toList();
    this.hashTypes = bucketHiveTypes.stream().map(HiveHash.Type::parse).toArray(HiveHash.Type[]::new);
    boolean one = bucketFields.size() == 1;
    this.bucketColumn = one ? bucketColumns.get(0) : null;
    this.bucketType = one ? bucketTypes.get(0) : null;
    this.bucketHiveType = one ? bucketHiveTypes.get(0) : null;
    this.function = one ? bind(version, bucketFields.get(0), buckets) : null;
    this.dataSchema = table.dataSchema();
    this.partitionSchema = table.partitionSchema();
    this.forRead = forRead;
    this.offersBucketId = java.util.Arrays.stream(schema().fieldNames()).noneMatch(BUCKET_ID::equalsIgnoreCase);
    this.offersBucketHash = bucketColumn == null
        && java.util.Arrays.stream(schema().fieldNames()).noneMatch(BUCKET_HASH::equalsIgnoreCase);
  }

  /** What the table's metadata says of its bucketing: the rules Python applies too ({@link TableVerdict}). */
  static TableVerdict verdict(CatalogTable t) {
    return verdict(t, t.dataSchema());
  }

  /** The verdict of {@code t} holding {@code dataSchema} (a CTAS's table has no schema until it runs). */
  public static TableVerdict verdict(CatalogTable t, StructType dataSchema) {
    String provider = t.provider().isDefined() ? t.provider().get() : "hive";
    List<String> columns = t.bucketSpec().isDefined()
        ? CollectionConverters.asJava(t.bucketSpec().get().bucketColumnNames()) : List.of();
    String serde = t.storage().serde().isDefined() ? t.storage().serde().get() : "";
    return TableVerdict.of(provider, columns, CollectionConverters.asJava(t.properties()), serde,
        columns.isEmpty() ? null : bucketField(t, dataSchema));
  }

  /** Why bucketkit cannot plan the table bucketed in Spark SQL, or null (pure: no listing). */
  static String doubt(CatalogTable t) {
    TableVerdict v = verdict(t);
    if (!v.kind().equals(TableVerdict.BUCKETED)) {
      return v.reason();
    }
    if (v.format().equals("text")) {
      String input = t.storage().inputFormat().isDefined() ? t.storage().inputFormat().get() : "";
      if (!input.equals("org.apache.hadoop.mapred.TextInputFormat")) {
        return "serde " + TableVerdict.TEXT_SERDE + " with input format " + (input.isEmpty() ? "(none)" : input)
            + " (bucketkit reads its text files with TextInputFormat only: STORED AS TEXTFILE)";
      }
      for (String key : new String[] {"skip.header.line.count", "skip.footer.line.count"}) {
        if (!property(t, key).isEmpty() && !property(t, key).equals("0")) {
          return "table property " + key + "=" + property(t, key) + " (header or footer lines: read by Spark's own reader)";
        }
      }
    }
    List<StructField> fields = bucketFields(t, t.dataSchema());
    if (fields == null) {
      return "a bucket column of " + t.bucketSpec().get().bucketColumnNames().mkString(", ") + " is not a data column";
    }
    for (StructField field : fields) {
      try {  // what Spark SQL can be told of it (a float key, a collated string: Spark's equality is not Hive's)
        bind(v.version(), field, t.bucketSpec().get().numBuckets());
      } catch (UnsupportedOperationException | IllegalArgumentException e) {
        return "bucket column " + field.name() + ": " + e.getMessage();
      }
    }
    return null;
  }

  /**
   * Why a table bucketed by {@code columns} columns cannot key Spark's plans: its scans read and prune its
   * buckets, but Spark's key-grouped partitioning takes one column per expression.
   */
  static String severalColumns(int columns) {
    return "bucketed by " + columns + " columns; Spark's key-grouped partitioning takes one column per expression "
        + "(bucketkit.join handles multi-column keys)";
  }

  /**
   * Why Spark's own Hive writer would place the rows of {@code t} (holding {@code dataSchema}) in other buckets
   * than Hive and Trino look for them in, or null; whatever the table's format. Of a Hive bucketed table (not
   * ACID): it declares {@code bucketing_version=2} (Spark's writer hashes v1 whatever the table says), or a
   * bucket column is a varchar (Spark's v1 hash takes it for a string, from 0; Hive's and Trino's v1 hash a
   * varchar from 1, Hadoop's {@code Text.hashCode}). The one rule by which both the catalog's INSERT
   * ({@link #forWrite}) and {@link io.bucketkit.spark.SparkWriteGuard} (catalog off, CTAS) refuse.
   */
  public static String sparkMisplaces(CatalogTable t, StructType dataSchema) {
    if (t.bucketSpec().isEmpty() || isAcid(t)) {
      return null;
    }
    if (property(t, "bucketing_version").equals("2")) {
      return "places rows by the bucketing v1 hash, and " + t.identifier().unquotedString()
          + " declares bucketing_version=2";
    }
    List<StructField> fields = bucketFields(t, dataSchema);
    for (StructField f : fields == null ? List.<StructField>of() : fields) {
      if (hiveType(f).contains("varchar")) {
        return "hashes bucket column " + f.name() + " (" + hiveType(f) + ") of " + t.identifier().unquotedString()
            + " as a string, from 0, where Hive's and Trino's bucketing v1 hash a varchar from 1 (Hadoop's "
            + "Text.hashCode)";
      }
    }
    String key = charKey(t, dataSchema);
    return key == null ? null : "hashes bucket column " + key + " of " + t.identifier().unquotedString()
        + " padded with spaces, as a string from 0, where Hive's bucketing v1 hashes a char without its trailing "
        + "spaces, from 1 (HiveCharWritable: Hadoop's Text.hashCode of the stripped value)";
  }

  /** What to do about a table bucketed by a char column, which no SQL write here places as Hive does. */
  public static final String CHAR_ADVICE = "declare the bucket column STRING or VARCHAR(n) (bucketkit writes those "
      + "with Hive's own hash), or write the table with Hive";

  /**
   * The bucket column of {@code t} typed {@code char(n)} (nested in an array or map too), as "name (type)", or
   * null: a key neither Spark's writer (it hashes the padded value) nor bucketkit (which, as Trino, hashes no
   * char) places as Hive does, so no SQL write of such a table is let through.
   */
  public static String charKey(CatalogTable t, StructType dataSchema) {
    List<StructField> fields = t.bucketSpec().isEmpty() ? null : bucketFields(t, dataSchema);
    for (StructField f : fields == null ? List.<StructField>of() : fields) {
      if (hiveType(f).replace("varchar", "").contains("char")) {
        return f.name() + " (" + hiveType(f) + ")";
      }
    }
    return null;
  }

  /** A table property, trimmed ("" when missing). */
  private static String property(CatalogTable t, String key) {
    return CollectionConverters.asJava(t.properties()).getOrDefault(key, "").trim();
  }

  public static boolean isAcid(CatalogTable t) {
    return TableVerdict.isAcid(CollectionConverters.asJava(t.properties()));
  }

  /**
   * The transform a Hive ACID table's buckets are keyed by, or why it has none: the
   * bucketing rules of a plain table ({@link #doubt}) applied to its metadata without the
   * {@code transactional} flag. Hive's ACID writers place rows by the table's own bucketing, as its
   * plain writers do ({@code bucket_N} is that bucket; unbucketed tables number them by writer).
   */
  public static AcidBucketing acidBucketing(CatalogTable t) {
    if (t.bucketSpec().isEmpty()) {
      return new AcidBucketing(null, "an unbucketed Hive ACID table: its bucket_N files are numbered by writer, not by hash");
    }
    java.util.Map<String, String> props = new java.util.HashMap<>(CollectionConverters.asJava(t.properties()));
    props.remove("transactional");
    props.remove("TRANSACTIONAL");
    CatalogTable plain = SparkCompat.withBucketing(t, t.bucketSpec().get(),
        scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(props)));
    String doubt = doubt(plain);
    int columns = t.bucketSpec().get().bucketColumnNames().size();
    if (doubt != null || columns != 1) {  // an ACID scan's buckets key its plan, or nothing
      return new AcidBucketing(null, doubt != null ? doubt : severalColumns(columns));
    }
    StructField field = bucketField(plain);
    return new AcidBucketing(HiveBucketFunction.transform(version(plain), hiveType(field),
        t.bucketSpec().get().numBuckets(), field.name().toLowerCase(Locale.ROOT)), null);
  }

  /** A Hive ACID table's bucket transform, or (null and) why its buckets cannot key a scan. */
  public record AcidBucketing(org.apache.spark.sql.connector.expressions.Transform transform, String doubt) {}

  /** The table's bucketing version, once {@link #doubt} found none. */
  private static int version(CatalogTable t) {
    return verdict(t).version();
  }

  /** The column's Hive type: char/varchar from the metadata Spark keeps them in, else from its Spark type. */
  public static String hiveType(StructField field) {
    return field.metadata().contains(CHAR_VARCHAR) ? field.metadata().getString(CHAR_VARCHAR)
        : HiveHash.Type.fromSpark(field.dataType()).toString();
  }

  /** The bucket function Spark will bind for the table's transform, bound here first (it may refuse the type). */
  public static HiveBucketFunction.Bound bind(int version, StructField field, int buckets) {
    String name = HiveBucketFunction.nameFor(version, hiveType(field), buckets);
    return (HiveBucketFunction.Bound) HiveBucketFunction.forName(name)
        .bind(new StructType().add("_0", field.dataType(), field.nullable()));
  }

  private static String format(CatalogTable t) {
    return TableVerdict.format(t.storage().serde().isDefined() ? t.storage().serde().get() : "");
  }

  private static StructField bucketField(CatalogTable t) {
    return bucketField(t, t.dataSchema());
  }

  private static StructField bucketField(CatalogTable t, StructType dataSchema) {
    return field(dataSchema, t.bucketSpec().get().bucketColumnNames().head());
  }

  /** Each bucket column of {@code t} as a data column of {@code dataSchema}, in order; null if one is not. */
  private static List<StructField> bucketFields(CatalogTable t, StructType dataSchema) {
    List<StructField> out = new ArrayList<>();
    for (String name : CollectionConverters.asJava(t.bucketSpec().get().bucketColumnNames())) {
      StructField f = field(dataSchema, name);
      if (f == null) {
        return null;
      }
      out.add(f);
    }
    return out;
  }

  private static StructField field(StructType schema, String name) {
    for (StructField f : schema.fields()) {
      if (f.name().equalsIgnoreCase(name)) {
        return f;
      }
    }
    return null;
  }

  /**
   * The bucketkit table for {@code t}, or null (reason logged) when Spark should read it its own way:
   * what the metastore and bucketkit's record say. Files are listed by the scans, for the partitions
   * each reads ({@link #select}), as Spark lists only the partitions a query reads.
   */
  public static HiveBucketedTable load(SparkSession spark, CatalogTable t) throws IOException {
    Vouched v = judged(spark, t);
    if (v.doubt() != null) {
      PassThrough.log(LOG, t, v.doubt());
    }
    return v.table();
  }

  /** {@code t} for reading, unlisted, or why the metastore's word or bucketkit's record forbids it. */
  public static Vouched judged(SparkSession spark, CatalogTable t) throws IOException {
    Configuration conf = spark.sessionState().newHadoopConf();
    String doubt = tableDoubt(spark, t, conf);
    if (doubt != null) {
      return new Vouched(null, null, doubt);
    }
    HiveBucketedTable table = new HiveBucketedTable(t, format(t), version(t), bucketFields(t, t.dataSchema()), true);
    table.hadoopConf = conf;  // one per query: its scans' listings and reader factories use the same settings
    return new Vouched(table, null, null);
  }

  /** Why the metastore's word or bucketkit's record keeps {@code t} from being read bucketed, or null. */
  private static String tableDoubt(SparkSession spark, CatalogTable t, Configuration conf) throws IOException {
    String doubt = doubt(t);
    if (doubt == null) {
      doubt = recordDisagreement(t, conf, t.bucketSpec().get().numBuckets(), version(t));
      if (doubt != null) {
        // read by Spark's own relation, which Spark caches with its file listing; but a record that
        // disagrees is mostly a table bucketkit is re-bucketing (its files switched, the metastore not
        // yet edited): a listing cached now would outlive the files it names. Spark lists afresh.
        spark.sessionState().catalog().invalidateCachedTable(t.identifier());
      }
    }
    return doubt;
  }

  /** The metadata file bucketkit's writer keeps at a table's root (Python: metadata.METADATA_FILE). */
  static final String METADATA_FILE = "_bucketkit_table.json";
  private static final com.fasterxml.jackson.databind.json.JsonMapper JSON =
      com.fasterxml.jackson.databind.json.JsonMapper.builder().build();

  /**
   * Why bucketkit's record at the table's root (how it hashed the files it wrote) forbids reading
   * {@code t} bucketed as its catalog says, or null (no record, or the two agree):
   * {@link TableVerdict#recordDisagreement}.
   */
  static String recordDisagreement(CatalogTable t, Configuration conf, int buckets, int version) throws IOException {
    String published = TableListing.published(conf, pathOf(t.location()), t.identifier().unquotedString());
    return recordDisagreement(t, conf, buckets, version,
        new org.apache.hadoop.fs.Path(published != null ? published : pathOf(t.location())));
  }

  /** {@link #recordDisagreement} of the record in {@code dir} (the table's own directory, or a kept version of it). */
  static String recordDisagreement(CatalogTable t, Configuration conf, int buckets, int version,
                                   org.apache.hadoop.fs.Path dir) throws IOException {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(dir, METADATA_FILE);
    com.fasterxml.jackson.databind.JsonNode record;
    org.apache.hadoop.fs.FileSystem fs = path.getFileSystem(conf);
    java.nio.file.Path local = BucketFiles.localPath(fs, path);  // read once per query: no checksum file opened
    try (java.io.InputStream in = local != null ? java.nio.file.Files.newInputStream(local) : fs.open(path)) {
      record = JSON.readTree(in);
    } catch (java.io.FileNotFoundException | java.nio.file.NoSuchFileException e) {
      return null;
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      return "bucketkit's record " + path + " cannot be read (" + e.getOriginalMessage() + "): how its files "
          + "were hashed is unknown";
    }
    List<String> recordColumns = new ArrayList<>();
    record.path("bucketed_by").forEach(c -> recordColumns.add(c.asText()));
    return TableVerdict.recordDisagreement("hive",
        CollectionConverters.asJava(t.bucketSpec().get().bucketColumnNames()), buckets, version,
        record.path("hash_family").asText("hive"), recordColumns, record.path("bucket_count").asInt(-1),
        record.path("bucketing_version").asInt(-1), path.toString());
  }

  /**
   * The bucketkit table for {@code t} with every partition listed, or why its scans cannot read it
   * bucketed (then {@code table} is null): what {@code bucketkit.sql_status} reports of a query
   * reading the whole table.
   */
  public record Vouched(HiveBucketedTable table, Selection listing, String doubt) {}

  public static Vouched vouch(SparkSession spark, CatalogTable t) throws IOException {
    Vouched judged = judged(spark, t);
    if (judged.table() == null) {
      return judged;
    }
    HiveBucketedTable table = judged.table();
    Selection all = table.select(List.of());
    return all.doubt() != null ? new Vouched(null, all, all.doubt()) : new Vouched(table, all, null);
  }

  /**
   * The partitions that may hold rows matching {@code partitionFilters} (bound to the partition
   * schema), their files listed as one version. The metastore is asked once per query: for the
   * partitions the filters keep, as Spark's own plan asks it ({@code listPartitionsByFilter}, pruned
   * by the metastore where {@code spark.sql.hive.metastorePartitionPruning} is on; then the selection's
   * total is unknown, -1), else for every partition; only the partitions kept are listed. Where a kept partition's files cannot be vouched for (a sub-directory,
   * names of no bucket scheme, Spark's v1-hashed INSERT files in a v2 table ...), the selection says
   * why and holds every file Spark's own reader would read there, each of bucket -1: the scan reads
   * them unbucketed, and says so (a query reading only sound partitions stays bucketed).
   */
  Selection select(List<org.apache.spark.sql.catalyst.expressions.Expression> partitionFilters) throws IOException {
    SparkSession spark = SparkSession.active();
    if (directory != null) {
      return selectDirectory(spark, directory, partitionFilters);
    }
    // on a store without directory renames, a pointer in the table directory names the live version
    String published = TableListing.published(hadoopConf, pathOf(table.location()), name());
    if (published != null) {
      return selectDirectory(spark, published, partitionFilters);
    }
    List<Located> candidates;
    int total;
    if (!partitionFilters.isEmpty() && partitionSchema.length() > 0
        && spark.sessionState().conf().metastorePartitionPruning()) {
      candidates = prunedPartitions(spark, table, partitionFilters);
      total = -1;
    } else {
      if (catalogParts == null) {
        catalogParts = catalogPartitions(spark, table);
      }
      candidates = catalogParts;
      total = catalogParts.size();
    }
    if (candidates.stream().anyMatch(c -> TableListing.otherTable(table.location().toString(), c.location()))) {
      // the metastore's partitions are those of a table a REPLACE swapped in since this query resolved the table:
      // read the one it resolved, from its directory (a REPLACE keeps it for the retention period)
      return selectDirectory(spark, pathOf(table.location()), partitionFilters);
    }
    List<Located> kept = matching(candidates, partitionFilters);
    List<TablePartition> parts = new ArrayList<>();
    // bucketkit's record sits in the table directory a commit switches: read with the files, of one version
    // (the table may have been re-bucketed since it was loaded, its files hashed into another count)
    String[] placement = {null};
    String doubt = TableListing.oneVersion(hadoopConf, pathOf(table.location()), name(), marker -> {
      // no pointer here (asked above): the record is the table directory's own
      String disagreement = recordDisagreement(table, hadoopConf, buckets, version,
          new org.apache.hadoop.fs.Path(pathOf(table.location())));
      String found = disagreement != null ? disagreement : listPartitions(hadoopConf, buckets, version, kept, parts);
      if (found == null) {  // read the version listed where it stays after later commits, when it is kept whole
        placement[0] = FileManifest.vouch(hadoopConf, pathOf(table.location()), bucketColumns, bucketHiveTypes, buckets,
            version, parts);
        List<TablePartition> pinned = KeptVersions.pin(hadoopConf, pathOf(table.location()), marker, parts);
        if (pinned != parts) {
          parts.clear();
          parts.addAll(pinned);
        }
      }
      return found;
    });
    if (doubt != null) {
      PassThrough.log(LOG, table, doubt);
      parts.clear();
      parts.addAll(TableListing.oneVersion(hadoopConf, pathOf(table.location()), name(),
          marker -> SparkCompat.leafFiles(spark, hadoopConf, partitionSchema, kept)));
    }
    return new Selection(parts, total, doubt, doubt != null ? null : placement[0]);
  }

  /** This table as of a kept version (SQL's {@code VERSION AS OF} / {@code TIMESTAMP AS OF}). */
  public HiveBucketedTable asOf(KeptVersions.Found found) {
    HiveBucketedTable out = new HiveBucketedTable(table, format, version, bucketFields(table, dataSchema), true);
    out.hadoopConf = hadoopConf;
    out.asOf = found;
    out.directory = found.dir();
    return out;
  }

  /**
   * {@link #select} of a table read from {@link #directory} (a kept version, or a directory bucketkit
   * wrote and {@link io.bucketkit.spark.BucketDirectory} reads): its partitions are the directory's own {@code k=v}
   * directories (the metastore's, if any, are today's), its files that directory's, its record the one
   * it holds; listed as one version ({@link TableListing#oneVersion}: a kept version never changes).
   */
  private Selection selectDirectory(SparkSession spark, String directory,
                                    List<org.apache.spark.sql.catalyst.expressions.Expression> partitionFilters)
      throws IOException {
    org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path(directory);
    String tz = spark.sessionState().conf().sessionLocalTimeZone();
    List<Located> all = new ArrayList<>();
    List<TablePartition> parts = new ArrayList<>();
    String[] placement = {null};
    String doubt = TableListing.oneVersion(hadoopConf, directory, name(), marker -> {
      all.clear();
      partitionsIn(dir.getFileSystem(hadoopConf), dir, tz, all);
      String found = recordDisagreement(table, hadoopConf, buckets, version, dir);
      found = found != null ? found : listPartitions(hadoopConf, buckets, version, matching(all, partitionFilters), parts);
      placement[0] = found != null ? null : FileManifest.vouch(hadoopConf, directory, bucketColumns, bucketHiveTypes,
          buckets, version, parts);
      return found;
    });
    if (doubt != null) {
      PassThrough.log(LOG, table, doubt);
      parts.clear();
      parts.addAll(SparkCompat.leafFiles(spark, hadoopConf, partitionSchema, matching(all, partitionFilters)));
    }
    return new Selection(parts, all.size(), doubt, doubt != null ? null : placement[0]);
  }

  /** The partitions of {@code candidates} that may hold rows matching {@code partitionFilters}. */
  private static List<Located> matching(List<Located> candidates,
                                        List<org.apache.spark.sql.catalyst.expressions.Expression> partitionFilters) {
    return candidates.stream().filter(p -> ScanPredicates.mayMatch(partitionFilters, p.values())).toList();
  }

  /** The partition directories under {@code dir} ({@link PartitionPaths#walk}), with their values as a row. */
  private void partitionsIn(org.apache.hadoop.fs.FileSystem fs, org.apache.hadoop.fs.Path dir, String tz,
                            List<Located> out) throws IOException {
    String[] columns = partitionSchema.fieldNames();
    try {
      PartitionPaths.walk(fs, dir, columns, (values, at) -> {
        java.util.LinkedHashMap<String, String> spec = new java.util.LinkedHashMap<>();
        for (int i = 0; i < columns.length; i++) {
          spec.put(columns[i], values[i]);
        }
        out.add(new Located(spec.isEmpty() ? InternalRow.empty() : new CatalogTablePartition(
            CollectionConverters.asScala(spec).toMap(scala.$less$colon$less$.MODULE$.refl()),
            org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat$.MODULE$.empty(),
            scala.collection.immutable.Map$.MODULE$.empty(), 0L, -1L, scala.Option.empty()).toRow(partitionSchema, tz),
            at.toString()));
      });
    } catch (java.io.FileNotFoundException e) {
      throw new IOException("bucketkit: table " + name() + ": " + e.getMessage() + " is gone" + (asOf == null ? ""
          : " (version " + asOf.number() + ", removed by vacuum while the query was planned)"), e);
    }
  }

  /**
   * The bucketkit table an INSERT writes through, or null when Spark's own INSERT should run (the
   * table is not a Hive bucketed table bucketkit can vouch for, and its rows would be placed by the
   * v1 hash Spark writes anyway). A table bucketkit cannot write and Spark's writer would misplace
   * ({@link #sparkMisplaces}: {@code bucketing_version=2}, or a varchar key) is refused.
   */
  public static HiveBucketedTable forWrite(CatalogTable t) {
    String doubt = doubt(t);
    List<StructField> keys = doubt == null ? bucketFields(t, t.dataSchema()) : null;
    if (keys != null && keys.size() > 1) {
      try {  // the one case of several columns the write's function cannot name (v1 with a varchar key)
        HiveBucketFunction.nameFor(version(t), keys.stream().map(HiveBucketedTable::hiveType).toList(),
            t.bucketSpec().get().numBuckets());
      } catch (UnsupportedOperationException e) {
        doubt = "bucketed by " + keys.size() + " columns: " + e.getMessage();
      }
    }
    if (doubt == null) {
      for (StructField f : t.partitionSchema().fields()) {
        if (!PartitionPaths.supported(f.dataType())) {
          doubt = "partition column " + f.name() + " has type " + f.dataType().catalogString()
              + " (bucketkit's SQL INSERT writes string, integer, boolean and date partitions)";
        }
      }
    }
    if (doubt == null) {
      return new HiveBucketedTable(t, format(t), version(t), bucketFields(t, t.dataSchema()), false);
    }
    String misplaced = sparkMisplaces(t, t.dataSchema());
    if (misplaced != null) {
      throw new UnsupportedOperationException("bucketkit: cannot INSERT into " + t.identifier().unquotedString()
          + ": " + doubt + ". Spark's own INSERT would misplace its rows (its writer " + misplaced + "), which Hive "
          + (charKey(t, t.dataSchema()) != null ? "reads wrong; " + CHAR_ADVICE
          : "and Trino read wrong; write it with bucketkit.write(..., table=...)"));
    }
    return null;
  }

  /** List partitions {@code kept} into {@code parts} (emptied first); why one cannot be vouched for, or null. */
  private static String listPartitions(Configuration conf, int buckets, int version, List<Located> kept,
                                       List<TablePartition> parts) throws IOException {
    parts.clear();
    List<BucketFiles.Listing> listings = BucketFiles.listAll(conf,
        kept.stream().map(Located::location).toList(), buckets, version);
    for (int i = 0; i < listings.size(); i++) {
      if (listings.get(i).doubt != null) {
        return listings.get(i).doubt;
      }
      parts.add(new TablePartition(kept.get(i).values(), kept.get(i).location(), listings.get(i).files));
    }
    return null;
  }

  /**
   * The metastore's partitions of {@code t} (the table itself when unpartitioned). Asked of the
   * external catalog with the table just loaded: the session catalog's {@code listPartitions} would
   * first ask the metastore whether the database and the table exist (two more round trips per query).
   */
  /** The partitions of {@code t} the metastore keeps for {@code bound} (predicates bound to its partition schema). */
  private static List<Located> prunedPartitions(SparkSession spark, CatalogTable t,
                                                List<org.apache.spark.sql.catalyst.expressions.Expression> bound) {
    String tz = spark.sessionState().conf().sessionLocalTimeZone();
    List<org.apache.spark.sql.catalyst.expressions.Expression> named = bound.stream()
        .map(e -> ScanPredicates.named(e, t.partitionSchema())).toList();
    return CollectionConverters.asJava(spark.sessionState().catalog().externalCatalog().listPartitionsByFilter(
        t.identifier().database().get(), t.identifier().table(), CollectionConverters.asScala(named).toList(), tz))
        .stream().map(p -> new Located(p.toRow(t.partitionSchema(), tz), pathOf(p.location()))).toList();
  }

  private static List<Located> catalogPartitions(SparkSession spark, CatalogTable t) {
    if (t.partitionColumnNames().isEmpty()) {
      return List.of(new Located(InternalRow.empty(), pathOf(t.location())));
    }
    String tz = spark.sessionState().conf().sessionLocalTimeZone();
    return CollectionConverters.asJava(spark.sessionState().catalog().externalCatalog().listPartitions(
        t.identifier().database().get(), t.identifier().table(), scala.Option.empty())).stream()
        .map(p -> new Located(p.toRow(t.partitionSchema(), tz), pathOf(p.location()))).toList();
  }

  /**
   * A catalog location as a Hadoop path string. A location is a URI whose raw form escapes '%' and
   * spaces ({@code p=a%252Fb%253Dc} for Hive's directory {@code p=a%2Fb%3Dc}), which
   * {@code new Path(String)} would take literally: a partition of a value with '/' or '=', or a table
   * path with a space, would list as missing and read as empty.
   */
  public static String pathOf(java.net.URI location) {
    return new org.apache.hadoop.fs.Path(location).toString();
  }

  int bucketOf(Object value) {
    return function.bucketOf(value, buckets);
  }

  /** The bucket of a row whose bucket columns hold {@code values} (Spark internal values, in CLUSTERED BY order). */
  int bucketOfRow(Object[] values) {
    return HiveHash.bucketId(HiveHash.hashRow(values, hashTypes, version), buckets);
  }

  /** The bucket columns' Hive types, as the hash reads them. */
  public HiveHash.Type[] hashTypes() {
    return hashTypes.clone();
  }

  /** The partitioning transform of the table's bucketing, {@code hive_v<version>[_varchar]_bucket_<n>(k)}. */
  public org.apache.spark.sql.connector.expressions.Transform bucketTransform() {
    return bucketTransform(buckets);
  }

  /** The transform whose values Spark's hash partitioning into {@code tasks} sends bucket b to task {@code b % tasks}
   * (of a write: over every bucket column). */
  org.apache.spark.sql.connector.expressions.Transform routeTransform(int tasks) {
    return HiveBucketFunction.routeTransform(version, bucketHiveTypes, buckets, tasks, bucketColumns);
  }

  /**
   * The transform a write clusters and sorts a partitioned table's rows by: {@link #bucketTransform()} of one bucket
   * column, Hive's row hash over all of them for several ({@link HiveBucketFunction#transform(int, List, int, List)}).
   */
  org.apache.spark.sql.connector.expressions.Transform writeTransform() {
    return bucketColumn != null ? bucketTransform() : HiveBucketFunction.transform(version, bucketHiveTypes, buckets,
        bucketColumns);
  }

  /** The bucket function a write's tasks place rows by (over every bucket column; {@link #function} for one). */
  HiveBucketFunction.Bound writeFunction() {
    if (function != null) {
      return function;
    }
    StructType args = new StructType();
    for (int i = 0; i < bucketColumns.size(); i++) {
      args = args.add("_" + i, bucketTypes.get(i));
    }
    return (HiveBucketFunction.Bound) HiveBucketFunction.forName(
        HiveBucketFunction.nameFor(version, bucketHiveTypes, buckets)).bind(args);
  }

  /** The transform of the table's hash into {@code count} buckets, a divisor of its own count. */
  org.apache.spark.sql.connector.expressions.Transform bucketTransform(int count) {
    if (bucketColumn == null) {  // described only: no scan of the table reports it (Spark could not key by it)
      // each name as one field, never parsed: Expressions.bucket(n, String...) parses them ("user id" a syntax error)
      return org.apache.spark.sql.connector.expressions.LogicalExpressions.bucket(count, bucketColumns.stream()
          .map(org.apache.spark.sql.connector.expressions.FieldReference::column)
          .toArray(org.apache.spark.sql.connector.expressions.NamedReference[]::new));
    }
    return HiveBucketFunction.transform(version, bucketHiveType, count, bucketColumn);
  }

  @Override
  public String name() {
    return table.identifier().unquotedString();
  }

  /** The metastore's description of the table. */
  public CatalogTable catalogTable() {
    return table;
  }

  /** Whether the table offers the {@link #BUCKET_ID} column (none of its columns has that name). */
  public boolean offersBucketId() {
    return offersBucketId;
  }

  /** Whether the table offers the {@link #BUCKET_HASH} column (several bucket columns, none of its columns so named). */
  public boolean offersBucketHash() {
    return offersBucketHash;
  }

  @Override
  public org.apache.spark.sql.connector.catalog.MetadataColumn[] metadataColumns() {
    List<org.apache.spark.sql.connector.catalog.MetadataColumn> out = new ArrayList<>();
    if (offersBucketId()) {
      out.add(intColumn(BUCKET_ID,
          "the row's bucket, from its file's name (where files' buckets are unknown: the hash of its bucket columns)"));
    }
    if (offersBucketHash()) {
      out.add(intColumn(BUCKET_HASH, "the row's Hive hash of its bucket columns (non-negative), whose remainder by "
          + buckets + " is its bucket"));
    }
    return out.toArray(new org.apache.spark.sql.connector.catalog.MetadataColumn[0]);
  }

  private static org.apache.spark.sql.connector.catalog.MetadataColumn intColumn(String name, String comment) {
    return new org.apache.spark.sql.connector.catalog.MetadataColumn() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public DataType dataType() {
        return org.apache.spark.sql.types.DataTypes.IntegerType;
      }

      @Override
      public String comment() {
        return comment;
      }
    };
  }

  @Override
  public StructType schema() {
    return dataThenPartition(dataSchema, partitionSchema);
  }

  /** Hive's column order: data columns, then partition columns. */
  static StructType dataThenPartition(StructType data, StructType partition) {
    StructType out = data;
    for (StructField f : partition.fields()) {
      out = out.add(f);
    }
    return out;
  }

  @Override
  public org.apache.spark.sql.connector.expressions.Transform[] partitioning() {
    List<org.apache.spark.sql.connector.expressions.Transform> out = new ArrayList<>();
    for (String c : partitionSchema.fieldNames()) {
      out.add(org.apache.spark.sql.connector.expressions.LogicalExpressions.identity(
          org.apache.spark.sql.connector.expressions.FieldReference.column(c)));  // the name as one field, not parsed
    }
    out.add(bucketTransform());
    return out.toArray(new org.apache.spark.sql.connector.expressions.Transform[0]);
  }

  @Override
  public Map<String, String> properties() {
    Map<String, String> out = new java.util.HashMap<>(CollectionConverters.asJava(table.properties()));
    out.put(org.apache.spark.sql.connector.catalog.TableCatalog.PROP_LOCATION, table.location().toString());
    out.put(org.apache.spark.sql.connector.catalog.TableCatalog.PROP_PROVIDER, "hive");
    return out;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return forRead ? EnumSet.of(TableCapability.BATCH_READ) : EnumSet.of(TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE, TableCapability.OVERWRITE_BY_FILTER, TableCapability.OVERWRITE_DYNAMIC);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    if (!forRead) {
      throw new IllegalStateException("bucketkit: " + name() + " was loaded for a write, not listed for reading");
    }
    return new BucketScanBuilder(this, options);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new BucketWriteBuilder(this, info);
  }

  @Override
  public String toString() {
    return "HiveBucketedTable(" + name() + ", " + buckets + " buckets, v" + version + ", " + format + ")";
  }
}
