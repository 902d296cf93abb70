package io.bucketkit.spark;

import java.io.IOException;
import java.io.UncheckedIOException;

import io.bucketkit.acid.AcidSnapshotTable;
import io.bucketkit.compat.SparkCompat;
import io.bucketkit.hashing.HiveBucketFunction;
import io.bucketkit.layout.KeptVersions;
import io.bucketkit.table.HiveBucketedTable;
import io.bucketkit.write.CommitCoordinator;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.DelegatingCatalogExtension;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableWritePrivilege;
import org.apache.spark.sql.connector.catalog.V1Table;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Spark's session catalog, with Hive bucketed tables bucketkit can vouch for read as
 * {@link HiveBucketedTable}s: their scans report Hive bucketing, so Spark SQL joins, aggregates
 * and filters on the bucket column without an Exchange and reads only the matching buckets.
 *
 * <p>Configure as {@code spark.sql.catalog.spark_catalog=io.bucketkit.spark.BucketkitCatalog}. An
 * INSERT INTO / OVERWRITE of such a table writes through {@link io.bucketkit.table.BucketWrite} (the table's own hash,
 * one file per bucket, bucketkit's commit); {@code VERSION AS OF} / {@code TIMESTAMP AS OF} read
 * its kept versions; a CTAS of such a table is its CREATE then that INSERT ({@link CreateAsSelect}). Every other
 * table and DDL see Spark's own table. Set
 * {@code spark.bucketkit.catalog.enabled=false} in a session to turn the wrapping off at run time.
 */
public class BucketkitCatalog extends DelegatingCatalogExtension {
  static final String ENABLED = "spark.bucketkit.catalog.enabled";
  private int bucketVersion = 2;
  private static final String RELATION_RESOLUTION = "org.apache.spark.sql.catalyst.analysis.RelationResolution";

  /**
   * A query's relation, resolved by the analyzer (see {@link #resolvingQueryRelation}) without time
   * travel (Spark loads that through {@code loadTable(ident, version)} / {@code (ident, timestamp)}):
   * a bucketed table where bucketkit vouches for it. Commands get Spark's own table
   * and behave as without this catalog. Every Spark 4 release resolves a read through this overload
   * (4.3's {@code loadTable(ident, TableContext, options)} forwards here by default).
   */
  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    Table table = super.loadTable(ident);
    SparkSession spark = enabledFor(table);
    if (spark == null) {
      return table;
    }
    if (HiveBucketedTable.isAcid(((V1Table) table).v1Table())) {  // Spark's own reader would return no rows
      CatalogTable acid = ((V1Table) table).v1Table();
      java.util.List<org.apache.spark.sql.catalyst.catalog.CatalogTablePartition> parts = io.bucketkit.layout.TablePartition.listed(spark, acid);
      String[] misplaced = CatalogPartitions.misplaced(acid, parts);  // the Python ACID reader lists partitions
      return AcidSnapshotTable.load(spark, acid, parts, misplaced == null ? null  // under the table's directory: never a part
          : CatalogPartitions.acidRefusal(acid.identifier().unquotedString(), misplaced));
    }
    try {
      HiveBucketedTable bucketed = HiveBucketedTable.load(spark, ((V1Table) table).v1Table());
      return bucketed == null ? table : bucketed;
    } catch (IOException e) {
      throw new UncheckedIOException("bucketkit: listing " + ident + " failed", e);
    }
  }

  /** SQL's {@code VERSION AS OF n}: the table's version {@code n}, kept by bucketkit's commits ({@link KeptVersions}). */
  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return asOf(ident, version, null);
  }

  /** SQL's {@code TIMESTAMP AS OF t} ({@code micros} since the epoch): the version that was live at {@code t}. */
  @Override
  public Table loadTable(Identifier ident, long micros) throws NoSuchTableException {
    return asOf(ident, null, micros);
  }

  /**
   * A time-travel read of a table the catalog reads bucketed: its kept version (what {@code
   * bucketkit.scan(..., as_of=)} reads). Any other table gets Spark's answer (Spark's own tables have
   * no versions: its "does not support time travel" error).
   */
  private Table asOf(Identifier ident, String version, Long micros) throws NoSuchTableException {
    Table table = super.loadTable(ident);
    SparkSession spark = enabledFor(table);
    if (spark == null) {
      return sparksTimeTravel(ident, version, micros);
    }
    org.apache.spark.sql.catalyst.catalog.CatalogTable t = ((V1Table) table).v1Table();
    String name = t.identifier().unquotedString();
    if (HiveBucketedTable.isAcid(t)) {
      throw SparkCompat.analysisError("bucketkit: table " + name + " is a Hive transactional table: its versions "
          + "are Hive's write ids, and bucketkit reads only its current snapshot (no time travel)");
    }
    try {
      HiveBucketedTable bucketed = HiveBucketedTable.load(spark, t);
      org.apache.hadoop.conf.Configuration conf = bucketed != null ? bucketed.hadoopConf : spark.sessionState().newHadoopConf();
      org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path(HiveBucketedTable.pathOf(t.location()));
      if (bucketed == null && KeptVersions.history(root.getFileSystem(conf), root).isEmpty()) {
        return sparksTimeTravel(ident, version, micros);
      }
      if (bucketed == null) {
        throw SparkCompat.analysisError("bucketkit: table " + name + ": its versions are kept, but bucketkit does "
            + "not read it bucketed (bucketkit.sql_status says why), so no version of it is read by this catalog");
      }
      return bucketed.asOf(KeptVersions.find(conf, root.toString(), name, version, micros));
    } catch (IllegalArgumentException e) {
      throw SparkCompat.analysisError(e.getMessage());
    } catch (IOException e) {
      throw new UncheckedIOException("bucketkit: listing the versions of " + ident + " failed", e);
    }
  }

  /** Spark's own answer to a time-travel read (its tables have none: "does not support time travel"). */
  private Table sparksTimeTravel(Identifier ident, String version, Long micros) throws NoSuchTableException {
    return version != null ? super.loadTable(ident, version) : super.loadTable(ident, (long) micros);
  }

  /** An INSERT's target (write privileges asked): hashed with the table's own version. */
  @Override
  public Table loadTable(Identifier ident, java.util.Set<TableWritePrivilege> writePrivileges)
      throws NoSuchTableException {
    if (writePrivileges.isEmpty()) {
      return loadTable(ident);
    }
    Table table = super.loadTable(ident);
    if (enabledFor(table) == null) {
      return table;
    }
    HiveBucketedTable target = HiveBucketedTable.forWrite(((V1Table) table).v1Table());
    return target == null ? table : target;
  }

  /** The active session when {@code table} may be taken over: a V1 table, a query's relation, the catalog enabled. */
  private static SparkSession enabledFor(Table table) {
    if (!(table instanceof V1Table) || !resolvingQueryRelation()) {
      return null;
    }
    SparkSession spark = SparkSession.active();
    return enabled(spark) ? spark : null;
  }

  /** Whether the catalog takes bucketed tables over in {@code spark} ({@link #ENABLED}, a runtime setting). */
  static boolean enabled(SparkSession spark) {
    return Boolean.parseBoolean(spark.sessionState().conf().getConfString(ENABLED, "true"));
  }

  /**
   * The session catalog's table {@code relation} names when the catalog is enabled and writes it (a Hive bucketed
   * table bucketkit's INSERT takes, as {@link #loadTable(Identifier, java.util.Set)} gives it), else null: another
   * catalog's table, a view, a name that does not parse, a table Spark's own writer takes. For the rules that must
   * decide before Spark resolves a statement's target ({@link InsertPartitionSpec}, {@link RowLevelRefusal}). A table
   * bucketkit refuses to INSERT into ({@link HiveBucketedTable#forWrite} throws) counts as written when
   * {@code refusedToo}, else its refusal is thrown.
   */
  static CatalogTable writtenTable(SparkSession session, UnresolvedRelation relation, boolean refusedToo) {
    if (!enabled(session)) {
      return null;
    }
    CatalogTable table;
    try {
      SessionCatalog catalog = session.sessionState().catalog();
      TableIdentifier id = SparkCompat.sessionTable(session, relation.tableName());
      if (!catalog.tableExists(id)) {
        return null;
      }
      table = catalog.getTableMetadata(id);
    } catch (Exception e) {  // another catalog's table, a view, a name that does not parse: Spark decides
      return null;
    }
    try {
      return HiveBucketedTable.forWrite(table) == null ? null : table;
    } catch (UnsupportedOperationException e) {
      if (refusedToo) {
        return table;
      }
      throw e;
    }
  }

  /**
   * Whether Spark is resolving a relation a query reads. Commands resolve their table by the same
   * catalog call (DESCRIBE, SHOW PARTITIONS, ALTER TABLE ... PARTITION, ANALYZE, ...), and Spark runs
   * many of them only on its own V1 tables (ResolveSessionCatalog matches V1Table); they must keep
   * getting Spark's table. Only the analyzer's relation resolution (RelationResolution.resolveRelation
   * in the pinned Spark) gets a bucketed one; tests hold both sides of this line.
   */
  static boolean resolvingQueryRelation() {
    return StackWalker.getInstance().walk(frames -> frames.anyMatch(f ->
        f.getClassName().equals(RELATION_RESOLUTION) && f.getMethodName().startsWith("resolveRelation")));
  }

  /** Catalog option {@code bucketing-version}: the hash of {@code bucket(n, col)} (default 2, Hive 3 and Trino's). */
  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    super.initialize(name, options);
    CommitCoordinator.registerStaticSettings();
    bucketVersion = Integer.parseInt(options.getOrDefault("bucketing-version", "2").trim());
    io.bucketkit.hashing.HiveHash.checkVersion(bucketVersion);
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    if (ident.namespace().length == 0) {
      if (ident.name().equalsIgnoreCase(HiveBucketFunction.BUCKET)) {
        return new HiveBucketFunction(bucketVersion);
      }
      UnboundFunction named = HiveBucketFunction.named(ident.name());
      if (named != null) {
        return named;
      }
    }
    return super.loadFunction(ident);
  }
}
