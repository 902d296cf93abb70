package io.bucketkit.write;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

import io.bucketkit.layout.TableListing;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTableType;
import org.apache.spark.sql.catalyst.catalog.DropTableEvent;
import org.apache.spark.sql.catalyst.catalog.DropTablePreEvent;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogEvent;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogEventListener;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogWithListener;
import org.apache.spark.sql.catalyst.plans.logical.DropTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.command.DropTableCommand;

/**
 * {@code DROP TABLE} of a managed table whose commits publish inside it ({@link MetastorePublish}): the
 * metastore locates the table at its live version, {@code <table>/.bucketkit.versions/<write id>}, and
 * deletes only that directory, as it deletes a managed table's location. The table directory would stay,
 * with the kept versions, the pointer and the records, and a table created again under the same name
 * would find its default location taken. This listener, on the session's external catalog (every DROP
 * passes there: SQL, the catalog API, a Thrift or Connect session of the same driver), notes such a
 * table before the drop and deletes its table directory after the drop succeeded. A table a REPLACE
 * swapped in ({@code io.bucketkit.spark.CreateAsSelect}) is located in a directory inside its default
 * location, beside the files of the table it replaced: its DROP deletes that default location whole. An
 * external table keeps its files, as Hive and Spark keep them.
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
   * {@code DROP TABLE}: before it runs, and without creating the external catalog earlier than Spark does.
   * A commit that publishes in the metastore ({@link MetastorePublish}) starts it too.
   */
  public static final class OnDrop extends scala.runtime.AbstractFunction1<LogicalPlan, scala.runtime.BoxedUnit> {
    private final SparkSession spark;

    public OnDrop(SparkSession spark) {
      this.spark = spark;
    }

    @Override
    public scala.runtime.BoxedUnit apply(LogicalPlan plan) {
      if (plan instanceof DropTable || plan instanceof DropTableCommand && !((DropTableCommand) plan).isView()) {
        watch(spark);
      }
      return scala.runtime.BoxedUnit.UNIT;
    }
  }

  @Override
  public void onEvent(ExternalCatalogEvent event) {
    if (event instanceof DropTablePreEvent pre) {
      Path root = publishedRoot(pre.database(), pre.name());
      String key = pre.database() + "." + pre.name();
      if (root != null) {
        dropping.put(key, root);
      } else {
        dropping.remove(key);  // an earlier DROP of this name that failed noted a directory: not this table's
      }
    } else if (event instanceof DropTableEvent done) {
      Path root = dropping.remove(done.database() + "." + done.name());
      if (root != null) {
        try {
          root.getFileSystem(conf).delete(root, true);
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException("bucketkit: table " + done.database() + "." + done.name()
              + " was dropped; its directory " + root + " (kept versions) could not be deleted", e);
        }
      }
    }
  }

  /**
   * The table directory of a managed table located at one of its versions kept inside it, or at the directory a
   * REPLACE built it in inside its default location ({@code io.bucketkit.spark.CreateAsSelect}); else null.
   */
  private Path publishedRoot(String database, String name) {
    CatalogTable table;
    try {
      table = catalog.getTable(database, name);
    } catch (Exception e) {
      return null;  // no such table: the drop itself says so
    }
    if (!table.tableType().equals(CatalogTableType.MANAGED()) || table.storage().locationUri().isEmpty()) {
      return null;
    }
    Path location = new Path(table.storage().locationUri().get());
    if (location.getName().startsWith(TableListing.REPLACED_PREFIX)) {
      // the table's default location, all of it the table's; not for the REPLACE's own staging table, built there too
      Path home = location.getParent();
      Path db = new Path(catalog.getDatabase(database).locationUri());
      return home != null && home.getName().equals(name) && db.toUri().getPath().replaceAll("/+$", "")
          .equals(home.getParent().toUri().getPath()) ? home : null;
    }
    Path root = TableListing.tableRoot(location);
    return root.equals(location) ? null : root;
  }
}
