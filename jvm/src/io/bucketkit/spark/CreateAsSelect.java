package io.bucketkit.spark;

import java.util.ArrayList;
import java.util.List;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.layout.FileManifest;
import io.bucketkit.layout.KeptVersions;
import io.bucketkit.layout.TableListing;
import io.bucketkit.table.HiveBucketedTable;
import io.bucketkit.table.TableVerdict;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.BucketSpec;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTableType;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.CreateTableAsSelect;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.ReplaceTableAsSelect;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.plans.logical.TableSpecBase;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.TreePattern;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.command.LeafRunnableCommand;
import org.apache.spark.sql.execution.datasources.CreateTable;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.hive.ResolveHiveSerdeTable;
import org.apache.spark.sql.hive.client.HiveClient;
import org.apache.spark.sql.hive.execution.CreateHiveTableAsSelectCommand;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code CREATE TABLE ... CLUSTERED BY ... [AS SELECT]} into Hive bucketed tables, as teams write them
 * (dbt-spark, notebooks): two rules and the command the second plans.
 *
 * <ul>
 *   <li>{@link HiveStorage}, a resolution rule: {@code USING hive OPTIONS (fileFormat 'orc') CLUSTERED BY}
 *   (dbt-spark's Hive models, {@code DataFrameWriter.format("hive").bucketBy}) gets the serde and formats
 *   {@code STORED AS ORC} gives it, by Spark's own rule ({@code ResolveHiveSerdeTable}), which refuses a bucketed
 *   table whose serde is still to be chosen ("Creating bucketed Hive serde table is not supported yet").</li>
 *   <li>{@link Rewrite}, a post-hoc resolution rule: Spark's Hive CTAS ({@code CreateHiveTableAsSelectCommand}) of
 *   a bucketed table bucketkit's SQL INSERT writes becomes {@link Command}: create the table, then INSERT its rows
 *   through the catalog (the table's own hash, v1 or v2, one file per bucket, committed whole and recorded), and
 *   drop the table again if the INSERT fails, as Spark's CTAS does.</li>
 * </ul>
 * With the catalog off ({@code spark.bucketkit.catalog.enabled=false}), or a v1 table bucketkit's INSERT does not
 * write (a multi-column key), Spark's own CTAS runs, guarded by {@link SparkWriteGuard}; a v2 table bucketkit's INSERT does not
 * write is refused, saying why.
 *
 * <p>{@link Replace}, a hint-resolution rule (it must run before Spark's {@code ResolveSessionCatalog}, which refuses
 * REPLACE TABLE AS SELECT for every session-catalog table of a non-v2 provider): {@code [CREATE OR] REPLACE TABLE ...
 * USING hive ... CLUSTERED BY ... AS SELECT} and {@code DataFrameWriterV2.replace()/createOrReplace()} of a Hive
 * bucketed table become that CTAS, marked; {@link Command} then writes the new table under a staging name first, and
 * only once its rows are committed swaps it in: in one metastore call where both tables are unpartitioned, else by
 * dropping the old table and renaming the new one into its place. A query that fails leaves the old table as it was
 * (Spark's own non-atomic REPLACE drops it first).
 */
public final class CreateAsSelect {
  private CreateAsSelect() {}

  /** {@code USING hive OPTIONS (fileFormat ...)} with {@code CLUSTERED BY}: the storage Spark gives the unbucketed table. */
  public static final class HiveStorage extends Rule<LogicalPlan> {
    private final org.apache.spark.sql.SparkSession session;

    public HiveStorage(org.apache.spark.sql.SparkSession session) {
      this.session = session;
    }

    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (!(plan instanceof CreateTable create) || create.tableDesc().bucketSpec().isEmpty()
          || create.tableDesc().storage().serde().isDefined() || !isHive(create.tableDesc())) {
        return plan;
      }
      CatalogTable t = create.tableDesc();
      CreateTable unbucketed = new CreateTable(SparkCompat.withSchema(t, t.schema(), scala.Option.empty()),
          create.mode(), create.query());
      LogicalPlan resolved = new ResolveHiveSerdeTable(session).apply(unbucketed);
      if (!(resolved instanceof CreateTable stored) || stored.tableDesc().storage().serde().isEmpty()) {
        return plan;
      }
      CatalogTable s = stored.tableDesc();
      return new CreateTable(SparkCompat.withSchema(s, s.schema(), t.bucketSpec()), stored.mode(), stored.query());
    }
  }

  /**
   * The write option (then storage property) by which {@link Replace} marks a CTAS as a REPLACE: {@code "replace"} or
   * {@code "create-or-replace"}; {@link Rewrite} takes it off the table again.
   */
  static final String REPLACE = "__bucketkit_replace";

  /** REPLACE TABLE AS SELECT of a Hive bucketed table, as the CTAS {@link Rewrite} plans with replace semantics. */
  public static final class Replace extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (!(plan instanceof ReplaceTableAsSelect r) || !hive(r.tableSpec())
          || !CollectionConverters.asJava(r.partitioning()).stream().anyMatch(t -> t.name().equals("bucket"))
          || !Boolean.parseBoolean(conf().getConfString(BucketkitCatalog.ENABLED, "true"))) {
        return plan;
      }
      return new CreateTableAsSelect(r.name(), r.partitioning(), r.query(), r.tableSpec(),
          r.writeOptions().updated(REPLACE, r.orCreate() ? "create-or-replace" : "replace"), false, r.isAnalyzed());
    }

    /** {@code USING hive}, or {@code STORED AS} (a serde and no provider). */
    private static boolean hive(TableSpecBase spec) {
      return spec.provider().isDefined() ? spec.provider().get().equalsIgnoreCase("hive") : spec.serde().isDefined();
    }
  }

  /** Spark's Hive CTAS of a table bucketkit's catalog writes, planned as {@link Command}. */
  public static final class Rewrite extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (!(plan instanceof CreateHiveTableAsSelectCommand ctas) || ctas.tableDesc().bucketSpec().isEmpty()
          || !Boolean.parseBoolean(conf().getConfString(BucketkitCatalog.ENABLED, "true"))) {
        return plan;
      }
      CatalogTable table = SparkCompat.withSchema(ctas.tableDesc(), schema(ctas.query(), ctas.outputColumnNames()),
          ctas.tableDesc().bucketSpec());
      scala.Option<String> replace = table.storage().properties().get(REPLACE);
      if (replace.isDefined()) {
        table = SparkCompat.renamed(table, table.identifier(), table.storage().properties().removed(REPLACE));
      }
      String statement = (replace.isDefined() ? "REPLACE TABLE " : "CREATE TABLE ") + table.identifier().unquotedString()
          + " AS SELECT: ";
      try {
        if (HiveBucketedTable.forWrite(table) == null) {
          if (replace.isDefined()) {
            throw SparkCompat.analysisError("bucketkit: " + statement + "bucketkit's catalog does not write this table "
                + "(its format or bucketing), and Spark refuses REPLACE for Hive tables: DROP TABLE, then CREATE TABLE AS SELECT");
          }
          return plan;  // not a table bucketkit's INSERT writes: Spark's CTAS, guarded
        }
      } catch (UnsupportedOperationException e) {  // a v2 table bucketkit cannot write (Spark's writer would hash v1)
        throw SparkCompat.analysisError("bucketkit: " + statement + e.getMessage().replaceFirst("^bucketkit: ", ""));
      }
      return new Command(table, ctas.query(), ctas.mode(), replace.isDefined() ? replace.get() : null);
    }
  }

  /** The CTAS's columns: the query's types under the names the statement gives them. */
  private static StructType schema(LogicalPlan query, scala.collection.immutable.Seq<String> names) {
    List<String> named = CollectionConverters.asJava(names);
    StructField[] fields = query.schema().fields();
    StructField[] out = new StructField[fields.length];
    for (int i = 0; i < fields.length; i++) {
      StructField f = fields[i];
      out[i] = new StructField(i < named.size() ? named.get(i) : f.name(), f.dataType(), true, f.metadata());
    }
    return new StructType(out);
  }

  static boolean isHive(CatalogTable t) {
    return t.provider().isDefined() && t.provider().get().equalsIgnoreCase("hive");
  }

  /**
   * Create {@code table}, then INSERT {@code query}'s rows into it through bucketkit's catalog; on failure the
   * table is dropped again, so a failed CTAS leaves no table (Spark's CTAS contract). A REPLACE ({@code replace}
   * not null) of an existing table writes the new one under a staging name, then swaps it in.
   */
  public static final class Command extends LogicalPlan implements LeafRunnableCommand {
    private final CatalogTable table;
    private final LogicalPlan query;
    private final SaveMode mode;
    private final String replace;  // null, "replace" or "create-or-replace"

    public Command(CatalogTable table, LogicalPlan query, SaveMode mode, String replace) {
      this.table = table;
      this.query = query;
      this.mode = mode;
      this.replace = replace;
    }

    @Override
    public scala.collection.immutable.Seq<Row> run(org.apache.spark.sql.SparkSession session) {
      SparkSession spark = (SparkSession) session;
      SessionCatalog catalog = spark.sessionState().catalog();
      TableIdentifier id = catalog.qualifyIdentifier(table.identifier());
      String name = id.quotedString();
      if (replace != null) {
        if (table.storage().locationUri().isDefined()) {
          throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT with a LOCATION: bucketkit "
              + "replaces managed tables (INSERT OVERWRITE replaces the rows of a table where it is)");
        }
        if (catalog.tableExists(id)) {
          replaceExisting(spark, catalog, id);
          return empty();
        }
        if (replace.equals("replace")) {
          throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: no such table "
              + "(CREATE OR REPLACE TABLE creates it)");
        }
      }
      if (catalog.tableExists(id)) {
        if (mode == SaveMode.Ignore) {
          return empty();
        }
        throw SparkCompat.analysisError("bucketkit: CREATE TABLE " + name + " AS SELECT: the table already exists "
            + "(CREATE TABLE IF NOT EXISTS leaves it as it is; INSERT OVERWRITE replaces its rows)");
      }
      createAndInsert(spark, catalog, table, id);
      return empty();
    }

    /** Create {@code t} as {@code id}, INSERT the query's rows; drop it again if they fail. */
    private void createAndInsert(SparkSession spark, SessionCatalog catalog, CatalogTable t, TableIdentifier id) {
      catalog.createTable(t, false, true);
      try {
        Dataset.ofRows(spark, query).write().mode(SaveMode.Append).insertInto(id.quotedString());
      } catch (RuntimeException | Error e) {
        dropAfter(catalog, id, false, e);
        throw e;
      }
    }

    /** Drop table {@code id} that {@code failure} leaves unwanted; a drop that fails too is added to it. */
    private static void dropAfter(SessionCatalog catalog, TableIdentifier id, boolean purge, Throwable failure) {
      try {
        catalog.dropTable(id, true, purge);
      } catch (RuntimeException dropFailed) {
        failure.addSuppressed(dropFailed);
      }
    }

    /**
     * The new table written whole under a staging name, in a hidden directory inside the table's default location
     * ({@link TableListing#REPLACED_PREFIX}), which the old table's readers never list; then swapped in. Where old and
     * new table are unpartitioned, the swap is one metastore call: the table's whole definition replaced by the new
     * one's, located there; readers see the old table, then the new one. Where the metastore refuses that call (a
     * column whose type changes in a way Hive refuses in place), or a partitioned table needs its partitions swapped
     * too, the old table is dropped (its files kept: they hold the new table's) and the new one renamed into its
     * place: readers see, for the moment between those two calls, no table. Either way the old table's files stay
     * for the retention period (or until the DROP), for the queries that resolved it before the swap. A query that
     * fails leaves the old table untouched. (No Hive client, or a transactional old table: {@link #replaceByRename}.)
     */
    private void replaceExisting(SparkSession spark, SessionCatalog catalog, TableIdentifier id) {
      String name = id.quotedString();
      CatalogTable old;
      try {
        old = catalog.getTableMetadata(id);
      } catch (org.apache.spark.sql.AnalysisException e) {  // dropped since tableExists: say so as Spark would
        throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: " + e.getMessage());
      }
      if (old.tableType().equals(CatalogTableType.VIEW())) {
        throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: " + name + " is a view");
      }
      TableIdentifier staging = TableIdentifier.apply(id.table() + "__bucketkit_replacing", id.database());
      if (catalog.tableExists(staging)) {
        throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: the table " + staging.quotedString()
            + " is left by a REPLACE of it that did not finish; it holds that REPLACE's rows: drop it (or rename it to "
            + name + "), then run the statement again");
      }
      io.bucketkit.write.ManagedDrop.watch(spark);  // a later DROP of the table deletes what a REPLACE leaves
      HiveClient client = SparkCompat.hiveClient(spark);
      if (client == null || TableVerdict.isAcid(CollectionConverters.asJava(old.properties()))) {
        replaceByRename(spark, catalog, id, staging);  // Hive refuses to make a transactional table external
        return;
      }
      Path root = new Path(catalog.defaultTablePath(id));
      Path home = new Path(root, TableListing.REPLACED_PREFIX + System.currentTimeMillis());
      createAndInsert(spark, catalog, SparkCompat.relocated(
          SparkCompat.renamed(table, staging, table.storage().properties()), home.toUri()), staging);
      String db = id.database().get();
      try {  // from here on, no DROP of the staging name deletes the new table's files
        SparkCompat.redefine(client, client.getTable(db, staging.table()), staging, CatalogTableType.EXTERNAL());
      } catch (Exception e) {  // Hive refuses every ALTER of a table whose CLUSTERED BY has capitals
        dropAfter(catalog, staging, true, e);
        throw refusedAlter(name, e);
      }
      TableIdentifier target = TableIdentifier.apply(id.table(), id.database());
      uncache(spark, name);
      Exception refused = null;
      if (old.partitionColumnNames().isEmpty() && table.partitionColumnNames().isEmpty()) {
        CatalogTable next = client.getTable(db, staging.table());
        try {
          if (SparkCompat.refusesColumns(client, client.getTable(db, id.table()), next)) {
            throw new IllegalArgumentException("the metastore changes no column's type to one it calls incompatible "
                + "in place (hive.metastore.disallow.incompatible.col.type.changes)");
          }
          SparkCompat.redefine(client, next, target, CatalogTableType.MANAGED());
        } catch (Exception e) {  // Hive's checked exceptions, thrown through Scala, too
          refused = e;
        }
        if (refused == null) {
          catalog.dropTable(staging, true, false);  // external: the files it names are the table's now
        }
      } else {  // a partitioned table's partitions are no part of its definition: one call cannot swap them
        refused = new IllegalArgumentException("a partitioned table's partitions cannot be swapped with its definition");
      }
      if (refused != null) {
        swapByRename(spark, catalog, client, old, staging, target, home, refused);
      }
      catalog.refreshTable(id);
      deleteReplaced(spark, old, root, home);
    }

    /**
     * The swap where one metastore call cannot redefine the table ({@code refused} says why): the old table made
     * external (a DROP then keeps its files, under which the new table's lie) and dropped, the new one renamed into
     * its place and made managed again.
     */
    private static void swapByRename(SparkSession spark, SessionCatalog catalog, HiveClient client, CatalogTable old,
                                     TableIdentifier staging, TableIdentifier target, Path home, Exception refused) {
      String name = target.quotedString();
      String db = target.database().get();
      try {
        if (old.tableType().equals(CatalogTableType.MANAGED())) {
          SparkCompat.redefine(client, client.getTable(db, target.table()), target, CatalogTableType.EXTERNAL());
        }
      } catch (Exception e) {
        e.addSuppressed(refused);
        dropAfter(catalog, staging, true, e);  // external: its files are deleted below
        deleteQuietly(spark, home, e);
        throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: the metastore refuses to "
            + "replace the table's definition (" + refused.getMessage() + ") and to let its files outlive a DROP ("
            + e.getMessage() + "); " + name + " is left as it was. DROP TABLE, then CREATE TABLE AS SELECT");
      }
      spark.sql("DROP TABLE " + name);  // as Spark's DROP: its cached data goes too
      try {
        catalog.renameTable(staging, target);
        SparkCompat.redefine(client, client.getTable(db, target.table()), target, CatalogTableType.MANAGED());
      } catch (Exception e) {  // Scala's AnalysisException too
        throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: the old table is dropped and "
            + "the new one, committed whole as " + staging.quotedString() + ", could not be renamed into its place ("
            + e.getMessage() + "): ALTER TABLE " + staging.quotedString() + " RENAME TO " + name);
      }
    }

    /**
     * The files of the tables before the old one that were replaced longer ago than the retention period
     * ({@code BUCKETKIT_RETENTION}, 7 days by default, as for versions), once the new table replaced the old one: in
     * the table's default location {@code root} (which the table owns: a later DROP deletes it whole,
     * {@code ManagedDrop}), {@link TableListing#expiredTables}. The old table's files, and those of every table
     * replaced within the retention period, stay (or until the DROP), so a query that resolved one of them before its
     * replacement reads it whole, however many REPLACEs run meanwhile.
     * An external old table keeps its files, as a DROP keeps them; a managed one located elsewhere loses its
     * location now, as Spark's {@code DROP TABLE ... PURGE} deletes it.
     */
    private static void deleteReplaced(SparkSession spark, CatalogTable old, Path root, Path home) {
      try {
        FileSystem fs = root.getFileSystem(spark.sessionState().newHadoopConf());
        Path in = fs.makeQualified(root);
        boolean managed = old.tableType().equals(CatalogTableType.MANAGED()) && old.storage().locationUri().isDefined();
        Path was = managed ? new Path(old.storage().locationUri().get()) : null;
        String wasIn = managed ? FileManifest.relative(fs, in, was.toString()) : null;  // null: elsewhere
        if (managed && wasIn == null && FileManifest.relative(fs, was, home.toString()) == null) {
          fs.delete(was, true);
        }
        String oldEntry = wasIn == null ? null : wasIn.split("/", 2)[0];  // "": the old table was the directory itself
        List<String> entries = new ArrayList<>();
        for (FileStatus s : fs.listStatus(in)) {
          entries.add(s.getPath().getName());
        }
        long retain = (long) Math.min(KeptVersions.retention() * 1000, Long.MAX_VALUE / 2);
        for (String entry : TableListing.expiredTables(entries, home.getName(), oldEntry, System.currentTimeMillis(),
            retain)) {
          fs.delete(new Path(in, entry), true);
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException("bucketkit: REPLACE TABLE " + old.identifier().quotedString()
            + " AS SELECT: the new table is in place; the files of the tables it replaced, in " + root
            + ", could not all be deleted", e);
      }
    }

    private static void deleteQuietly(SparkSession spark, Path dir, Throwable failure) {
      try {
        dir.getFileSystem(spark.sessionState().newHadoopConf()).delete(dir, true);
      } catch (java.io.IOException | RuntimeException e) {
        failure.addSuppressed(e);
      }
    }

    /** Spark's cached data of table {@code name} dropped, as a DROP or Spark's own REPLACE drops it. */
    private static void uncache(SparkSession spark, String name) {
      if (spark.catalog().isCached(name)) {
        spark.catalog().uncacheTable(name);
      }
    }

    private static RuntimeException refusedAlter(String name, Exception e) {
      return SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: the metastore refuses to "
          + "alter the new table (" + e.getMessage() + "), so it could not be renamed into the old one's place; "
          + name + " is left as it was. Give the bucket columns lower-case names, or DROP TABLE, "
          + "then CREATE TABLE AS SELECT");
    }

    /**
     * REPLACE of a transactional table (which Hive does not let become external), or where the session has no Hive
     * metastore client: the new table written whole under a staging name beside the old one, the old one dropped
     * with its files, the new one renamed into its place.
     */
    private void replaceByRename(SparkSession spark, SessionCatalog catalog, TableIdentifier id, TableIdentifier staging) {
      String name = id.quotedString();
      createAndInsert(spark, catalog, SparkCompat.renamed(table, staging, table.storage().properties()), staging);
      try {  // the rename below is an ALTER TABLE: one the metastore refuses must fail here, with the old table whole
        catalog.alterTable(catalog.getTableMetadata(staging));
      } catch (Exception e) {  // Hive refuses every ALTER of a table whose CLUSTERED BY has capitals
        dropAfter(catalog, staging, true, e);
        throw refusedAlter(name, e);
      }
      spark.sql("DROP TABLE " + name + " PURGE");  // as Spark's DROP: its cached data goes too
      TableIdentifier target = TableIdentifier.apply(id.table(), id.database());
      try {
        catalog.renameTable(staging, target);
        catalog.refreshTable(id);
      } catch (Exception e) {  // Scala's AnalysisException too
        throw SparkCompat.analysisError("bucketkit: REPLACE TABLE " + name + " AS SELECT: the old table is dropped and "
            + "the new one, committed whole as " + staging.quotedString() + ", could not be renamed into its place ("
            + e.getMessage() + "): ALTER TABLE " + staging.quotedString() + " RENAME TO " + target.quotedString());
      }
    }

    private static scala.collection.immutable.Seq<Row> empty() {
      return CollectionConverters.asScala(new ArrayList<Row>()).toList();
    }

    @Override
    public String simpleString(int maxFields) {
      return "bucketkit CreateAsSelect " + table.identifier().unquotedString() + (replace != null
          ? " (" + replace + ": the new table written whole under a staging name, then swapped in)"
          : " (create, then INSERT through bucketkit's catalog; dropped if the INSERT fails)");
    }

    @Override
    public scala.collection.immutable.Seq<LogicalPlan> children() {
      return CollectionConverters.asScala(new ArrayList<LogicalPlan>()).toList();
    }

    @Override
    public LogicalPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<LogicalPlan> newChildren) {
      return this;
    }

    @Override
    public scala.collection.immutable.Seq<Attribute> output() {
      return CollectionConverters.asScala(new ArrayList<Attribute>()).toList();
    }

    @Override
    public org.apache.spark.sql.catalyst.expressions.AttributeSet producedAttributes() {
      return outputSet();
    }

    @Override
    public Statistics stats() {
      return org.apache.spark.sql.catalyst.plans.logical.Statistics$.MODULE$.DUMMY();
    }

    @Override
    public scala.collection.immutable.Map<String, SQLMetric> metrics() {
      return scala.collection.immutable.Map$.MODULE$.empty();
    }

    @Override
    public scala.collection.immutable.Seq<scala.Enumeration.Value> nodePatterns() {
      return CollectionConverters.asScala(List.of(TreePattern.COMMAND())).toList();
    }

    @Override
    public void org$apache$spark$sql$catalyst$plans$logical$Command$_setter_$nodePatterns_$eq(
        scala.collection.immutable.Seq<scala.Enumeration.Value> patterns) {}

    @Override
    public int productArity() {
      return 4;
    }

    @Override
    public Object productElement(int n) {
      return switch (n) {
        case 0 -> table;
        case 1 -> query;
        case 2 -> mode;
        case 3 -> replace;
        default -> throw new IndexOutOfBoundsException(n);
      };
    }

    @Override
    public boolean canEqual(Object other) {
      return other instanceof Command;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Command c && c.table.equals(table) && c.query.equals(query) && c.mode == mode
          && java.util.Objects.equals(c.replace, replace);
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hash(table, query, mode, replace);
    }
  }
}
