package io.bucketkit.layout;

import java.io.IOException;
import java.time.LocalDate;
import java.util.function.BiConsumer;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.CharType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.VarcharType;

/**
 * Hive partition directories of a write: a partition value as the text Hive stores (the catalog's
 * partition spec) and {@code k=v/...} paths escaped as Hive's {@code FileUtils.escapePathName}
 * (Spark's {@link ExternalCatalogUtils}; bucketkit/layout/partitions.py parses them back, NULL and "" as
 * {@code __HIVE_DEFAULT_PARTITION__}).
 */
public final class PartitionPaths {
  private PartitionPaths() {}

  /** Whether values of this type have one text form Hive, Spark and bucketkit agree on. */
  public static boolean supported(DataType t) {
    return t instanceof StringType || t instanceof CharType || t instanceof VarcharType || t instanceof IntegerType
        || t instanceof LongType || t instanceof ShortType || t instanceof ByteType || t instanceof BooleanType
        || t instanceof DateType;
  }

  /** The text of one Spark internal value of a partition column (null stays null). */
  public static String text(Object value, DataType t) {
    if (value == null) {
      return null;
    }
    if (t instanceof DateType) {
      return LocalDate.ofEpochDay(((Number) value).longValue()).toString();
    }
    return value.toString();  // UTF8String, boxed integers, Boolean ("true"/"false", as Hive)
  }

  /**
   * Every partition directory below {@code dir}: one level {@code k=v} per column of {@code columns}, the
   * column's name matched as Hive and Spark match it (unescaped, case-insensitively; hidden names never
   * match). {@code visit} gets the values (unescaped text, in column order) and the directory.
   *
   * @throws java.io.FileNotFoundException a directory vanished while it was walked (its path the message)
   */
  public static void walk(FileSystem fs, Path dir, String[] columns, BiConsumer<String[], Path> visit)
      throws IOException {
    walk(fs, dir, columns, new String[columns.length], 0, visit);
  }

  private static void walk(FileSystem fs, Path dir, String[] columns, String[] values, int level,
                           BiConsumer<String[], Path> visit) throws IOException {
    if (level == columns.length) {
      visit.accept(values.clone(), dir);
      return;
    }
    FileStatus[] children;
    try {
      children = fs.listStatus(dir);
    } catch (java.io.FileNotFoundException e) {
      throw (java.io.FileNotFoundException) new java.io.FileNotFoundException(dir.toString()).initCause(e);
    }
    for (FileStatus child : children) {
      String n = child.getPath().getName();
      int eq = n.indexOf('=');
      if (child.isDirectory() && eq > 0
          && ExternalCatalogUtils.unescapePathName(n.substring(0, eq)).equalsIgnoreCase(columns[level])) {
        values[level] = ExternalCatalogUtils.unescapePathName(n.substring(eq + 1));
        walk(fs, child.getPath(), columns, values, level + 1, visit);
      }
    }
  }

  /** {@code k1=v1/k2=v2} for the partition values given as text. */
  public static String path(String[] names, String[] values) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < names.length; i++) {
      if (i > 0) {
        out.append('/');
      }
      out.append(ExternalCatalogUtils.getPartitionPathString(names[i], values[i]));
    }
    return out.toString();
  }
}
