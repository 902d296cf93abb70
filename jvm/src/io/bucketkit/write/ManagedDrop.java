package io.bucketkit.write;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

import io.bucketkit.compat.SparkCompat;
import io.bucketkit.layout.TableListing;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.CatalogTableType;
import org.apache.spark.sql.catalyst.catalog.DropDatabaseEvent;
import org.apache.spark.sql.catalyst.catalog.DropDatabasePreEvent;
import org.apache.spark.sql.catalyst.catalog.DropTableEvent;
import org.apache.spark.sql.catalyst.catalog.DropTablePreEvent;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogEvent;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogEventListener;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogWithListener;
import org.apache.spark.sql.catalyst.catalog.RenameTableEvent;
import org.apache.spark.sql.catalyst.plans.logical.DropNamespace;
import org.apache.spark.sql.catalyst.plans.logical.DropTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.RenameTable;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.command.AlterTableRenameCommand;
import org.apache.spark.sql.execution.command.DropDatabaseCommand;
import org.apache.spark.sql.execution.command.DropTableCommand;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code DROP TABLE} of a managed table whose commits publish inside it ({@link MetastorePublish}): the
 * metastore locates the table at its live version, {@code <table>/.bucketkit.versions/<write id>}, and
 * deletes only that directory, as it deletes a managed table's location. The table directory would stay,
 * with the kept versions, the pointer and the records, and a table created again under the same name
 * would find its default location taken; a table whose commits switch its directory keeps its history beside it
 * ({@code .<table>.bucketkit.versions}), which the metastore knows nothing of. This listener, on the session's external catalog (every DROP
 * passes there: SQL, the catalog API, a Thrift or Connect session of the same driver), notes such a
 * managed table before the drop and deletes its table directory and what its commits kept beside it after the
 * drop succeeded. A table a REPLACE
 * swapped in ({@code io.bucketkit.spark.CreateAsSelect}) is located in a directory inside its default
 * location, beside the files of the table it replaced: its DROP deletes that default location whole, and
 * its RENAME moves that directory with the name, as it moves a managed table whose versions are kept inside its
 * directory ({@link #followRename}). An external table keeps its files,
 * as Hive and Spark keep them.
 */
public final class ManagedDrop implements ExternalCatalogEventListener {
  /** The catalogs watched in this JVM: one listener each. */
  private static final Set<ExternalCatalogWithListener> WATCHED = Collections.newSetFromMap(new WeakHashMap<>());

  private final ExternalCatalogWithListener catalog;
  private final Configuration conf;
  private final Map<String, Path> dropping = new ConcurrentHashMap<>();

  private ManagedDrop(ExternalCatalogWithListener catalog, Configuration conf) {
    this.catalog = catalog;
    this.conf = conf;
  }

  /** Watch the drops of {@code spark}'s external catalog (once per catalog; idempotent). */
  public static void watch(SparkSession spark) {
    ExternalCatalogWithListener catalog = spark.sharedState().externalCatalog();
    synchronized (WATCHED) {
      if (WATCHED.add(catalog)) {
        catalog.addListener(new ManagedDrop(catalog, spark.sparkContext().hadoopConfiguration()));
      }
    }
  }

  /**
   * The check rule ({@code BucketkitExtensions}) that starts the watch when a session analyses a
   * {@code DROP TABLE} or {@code ALTER TABLE ... RENAME}: before it runs, and without creating the external catalog earlier than Spark does.
   * A commit that publishes in the metastore ({@link MetastorePublish}) starts it too.
   */
  public static final class OnDrop extends scala.runtime.AbstractFunction1<LogicalPlan, scala.runtime.BoxedUnit> {
    private final SparkSession spark;

    public OnDrop(SparkSession spark) {
      this.spark = spark;
    }

    @Override
    public scala.runtime.BoxedUnit apply(LogicalPlan plan) {
      if (plan instanceof DropTable || plan instanceof DropTableCommand && !((DropTableCommand) plan).isView()
          || plan instanceof RenameTable || plan instanceof AlterTableRenameCommand r && !r.isView()
          || plan instanceof DropNamespace || plan instanceof DropDatabaseCommand) {
        watch(spark);
      }
      return scala.runtime.BoxedUnit.UNIT;
    }
  }

  @Override
  public void onEvent(ExternalCatalogEvent event) {
    if (event instanceof DropTablePreEvent pre) {
      Path root = ownedRoot(pre.database(), pre.name());
      String key = pre.database() + "." + pre.name();
      if (root != null) {
        dropping.put(key, root);
      } else {
        dropping.remove(key);  // an earlier DROP of this name that failed noted a directory: not this table's
      }
    } else if (event instanceof DropDatabasePreEvent pre) {
      noteDatabase(pre.database());
    } else if (event instanceof DropDatabaseEvent done) {
      for (String key : List.copyOf(dropping.keySet())) {
        if (key.startsWith(done.database() + ".")) {
          deleteOwned(key, dropping.remove(key));
        }
      }
    } else if (event instanceof RenameTableEvent renamed) {
      followRename(renamed.database(), renamed.name(), renamed.newName());
    } else if (event instanceof DropTableEvent done) {
      String key = done.database() + "." + done.name();
      deleteOwned(key, dropping.remove(key));
    }
  }

  /** After table {@code key}'s drop: its directory {@code root} (null: none noted) and what commits kept beside it. */
  private void deleteOwned(String key, Path root) {
    if (root == null) {
      return;
    }
    try {
      FileSystem fs = root.getFileSystem(conf);
      fs.delete(root, true);  // where the metastore deleted only a version, or nothing of it (a REPLACE's)
      deleteBeside(fs, root);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("bucketkit: table " + key + " was dropped; its directory " + root
          + " (kept versions) could not be deleted", e);
    }
  }

  /**
   * Before {@code DROP DATABASE ... CASCADE}: the metastore deletes the database directory whole, and with it every
   * table directory and what commits kept beside them there, but of a managed table located elsewhere ({@code SET
   * LOCATION}) only its location, and it posts no drop of each table. Such tables are noted here as a {@code DROP
   * TABLE} notes one, read in one metastore call, and deleted once the database is dropped; a drop that fails
   * (a database with tables, without CASCADE) deletes nothing.
   */
  private void noteDatabase(String database) {
    dropping.keySet().removeIf(key -> key.startsWith(database + "."));
    try {
      Path db = new Path(catalog.getDatabase(database).locationUri());
      for (CatalogTable table : CollectionConverters.asJava(
          catalog.getTablesByName(database, catalog.listTables(database)))) {
        Path root = ownedRoot(database, table);
        if (root != null && below(db, root.toUri()) == null) {
          dropping.put(database + "." + table.identifier().table(), root);
        }
      }
    } catch (RuntimeException e) {
      // no such database, or the metastore cannot list it: the drop itself says so
    }
  }

  /**
   * After {@code ALTER TABLE old RENAME TO name}: a managed table located inside its old name's default directory
   * ({@code <database>/<old>/...}: a table a REPLACE built there, {@code .bucketkit.table-<time>}, or one whose
   * commits keep their versions inside it, {@code .bucketkit.versions/<write id>}) moves with its name, as the
   * metastore moves a managed table located at its default path (it moves none located below it): that directory
   * becomes {@code <database>/<name>}, and the table and each of its partitions located in it are located at the same
   * place there. Else the old name's directory would keep the table's files, history and pointer, and a table created
   * under the old name would find its default location taken. Where the new name's directory exists, the metastore
   * refuses the same move of its own tables; this leaves the table where it is.
   */
  private void followRename(String database, String old, String name) {
    CatalogTable table;
    try {
      table = catalog.getTable(database, name);
    } catch (Exception e) {
      return;
    }
    if (!table.tableType().equals(CatalogTableType.MANAGED()) || table.storage().locationUri().isEmpty()) {
      return;
    }
    Path db = new Path(catalog.getDatabase(database).locationUri());
    Path dir = new Path(db, old);
    Path moved = new Path(db, name);
    try {
      FileSystem fs = db.getFileSystem(conf);
      String rest = below(dir, table.storage().locationUri().get());
      if (rest != null) {
        if (fs.exists(moved) || !fs.rename(dir, moved)) {
          return;
        }
        try {
          relocate(database, name, table, dir, moved, rest);
        } catch (RuntimeException e) {  // the metastore refused: the table stays where it still says
          fs.rename(moved, dir);
          throw e;
        }
      }
      if (fs.exists(moved) && !fs.exists(dir)) {  // the table's directory moved
        moveVersions(fs, dir, name);
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("bucketkit: table " + database + "." + old + " was renamed to " + name
          + "; its directory, or what bucketkit's commits kept beside it, could not be moved with it", e);
    }
  }

  /** Table {@code name} and each of its partitions located below {@code dir} located at the same place in {@code moved}. */
  private void relocate(String database, String name, CatalogTable table, Path dir, Path moved, String rest) {
    if (!table.partitionColumnNames().isEmpty()) {
      List<CatalogTablePartition> partitions = new ArrayList<>();
      for (CatalogTablePartition p : CollectionConverters.asJava(
          catalog.listPartitions(database, name, scala.Option.empty()))) {
        String at = p.storage().locationUri().isEmpty() ? null : below(dir, p.storage().locationUri().get());
        if (at != null) {
          partitions.add(SparkCompat.relocated(p, new Path(moved, at).toUri()));
        }
      }
      if (!partitions.isEmpty()) {
        catalog.alterPartitions(database, name, CollectionConverters.asScala(partitions).toList());
      }
    }
    catalog.alterTable(SparkCompat.relocated(table, new Path(moved, rest).toUri()));
  }

  /**
   * The path of {@code location} below directory {@code dir} ({@code a/b} for {@code <dir>/a/b}), or null where it is
   * not below it (the directory itself included: the metastore moves a table located there). Compared by path, as
   * the metastore gives a table's location and its database's with or without the scheme.
   */
  private static String below(Path dir, java.net.URI location) {
    String top = dir.toUri().getPath().replaceAll("/+$", "") + "/";
    String path = location.getPath();
    return path != null && path.startsWith(top) && path.length() > top.length()
        ? path.substring(top.length()).replaceAll("/+$", "") : null;
  }

  /**
   * The versions commits kept beside table directory {@code root} ({@code .<old>.bucketkit.versions}) renamed for the
   * table's new name, once its directory moved to {@code name}: its history (history, time travel, reads pinned to a
   * version) follows it, and a table created later under the old name starts none of it. The lock follows too, where
   * no commit of the old name is in its grace period (a journal {@code .<old>.bucketkit-<id>.json} names one: it
   * deletes what it retires by those names), so the database directory lists nothing under the old name. Where the
   * new name has versions there already (left by a table of that name dropped without bucketkit), nothing moves.
   */
  private static void moveVersions(FileSystem fs, Path root, String name) throws java.io.IOException {
    Path versions = TableListing.keptBeside(root);
    Path renamed = new Path(root.getParent(), name);
    Path target = TableListing.keptBeside(renamed);
    if (fs.exists(versions) && !fs.exists(target)) {
      fs.rename(versions, target);
    }
    Path lock = new Path(root.getParent(), TableListing.lockName(root.getName()));
    Path newLock = new Path(root.getParent(), TableListing.lockName(name));
    if (!TableListing.committing(fs, root) && fs.exists(lock) && !fs.exists(newLock)) {
      fs.rename(lock, newLock);
    }
  }

  /**
   * The default location of table {@code name} where {@code location} is the directory a REPLACE built a table in
   * there ({@code <database>/<name>/.bucketkit.table-<time>}), all of it the table's; else null (the REPLACE's own
   * staging table, built there too, is not located in its own name's directory).
   */
  private Path replacedIn(String database, String name, Path location) {
    Path home = new Path(new Path(catalog.getDatabase(database).locationUri()), name);
    return location.getName().startsWith(TableListing.REPLACED_PREFIX)
        && location.getName().equals(below(home, location.toUri())) ? location.getParent() : null;
  }

  /**
   * The table directory of a managed table: its location, or, where it is located at one of its versions kept
   * inside it, that table directory, or, where a REPLACE built it inside its default location
   * ({@code io.bucketkit.spark.CreateAsSelect}; located at one of its versions there or not), that default location;
   * null for an external table.
   */
  private Path ownedRoot(String database, String name) {
    CatalogTable table;
    try {
      table = catalog.getTable(database, name);
    } catch (Exception e) {
      return null;  // no such table: the drop itself says so
    }
    return ownedRoot(database, table);
  }

  /** {@link #ownedRoot(String, String)} of table {@code table}, read already. */
  private Path ownedRoot(String database, CatalogTable table) {
    String name = table.identifier().table();
    if (!table.tableType().equals(CatalogTableType.MANAGED()) || table.storage().locationUri().isEmpty()) {
      return null;
    }
    Path root = TableListing.tableRoot(new Path(table.storage().locationUri().get()));
    if (root.getName().startsWith(TableListing.REPLACED_PREFIX)) {  // its commits may publish inside it too
      Path replaced = replacedIn(database, name, root);
      return replaced != null ? replaced : root;
    }
    return root;
  }

  /**
   * What bucketkit's commits kept beside table directory {@code root}, in its parent ({@code .<name>.bucketkit.versions},
   * the lock, the journals of a local disk's or HDFS's commits): the table's history, which its DROP deletes with
   * its files, as the metastore deletes a managed table's files; else the database directory would list them for
   * good.
   */
  private static void deleteBeside(FileSystem fs, Path root) throws java.io.IOException {
    for (FileStatus entry : TableListing.besideEntries(fs, root)) {
      fs.delete(entry.getPath(), true);
    }
  }
}
