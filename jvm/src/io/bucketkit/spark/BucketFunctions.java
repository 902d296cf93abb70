package io.bucketkit.spark;

import java.util.Map;

import io.bucketkit.hashing.HiveBucketFunction;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The catalog of one directory {@link BucketDirectory} reads in a session whose catalog is not bucketkit's
 * (a session the user built, bucketkit's jar added at first use): Hive's bucket functions, which Spark binds a
 * scan's reported bucket transform through (the relation's catalog; only bucketkit's catalog knows these
 * names, {@link BucketkitCatalog#loadFunction}), and the one table, read-only, for the planner's look-ups of
 * the relation by its catalog and name.
 */
final class BucketFunctions implements FunctionCatalog, TableCatalog {
  private final Identifier ident;
  private final Table table;

  BucketFunctions(Identifier ident, Table table) {
    this.ident = ident;
    this.table = table;
  }

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {}

  @Override
  public String name() {
    return "bucketkit_directory";
  }

  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return new Identifier[0];
  }

  @Override
  public UnboundFunction loadFunction(Identifier function) throws NoSuchFunctionException {
    UnboundFunction named = function.namespace().length == 0 ? HiveBucketFunction.named(function.name()) : null;
    if (named == null) {
      throw new NoSuchFunctionException(function);
    }
    return named;
  }

  @Override
  public Identifier[] listTables(String[] namespace) {
    return new Identifier[] {ident};
  }

  @Override
  public Table loadTable(Identifier name) throws NoSuchTableException {
    if (!name.equals(ident)) {
      throw new NoSuchTableException(name);
    }
    return table;
  }

  /** Read-only: a directory bucketkit reads here is written by bucketkit.write, never through this catalog. */
  public Table createTable(Identifier name, StructType schema, Transform[] partitions, Map<String, String> properties) {
    throw new UnsupportedOperationException("bucketkit: " + name() + " is read-only");
  }

  @Override
  public Table alterTable(Identifier name, TableChange... changes) {
    throw new UnsupportedOperationException("bucketkit: " + name() + " is read-only");
  }

  @Override
  public boolean dropTable(Identifier name) {
    return false;
  }

  @Override
  public void renameTable(Identifier from, Identifier to) {
    throw new UnsupportedOperationException("bucketkit: " + name() + " is read-only");
  }
}
