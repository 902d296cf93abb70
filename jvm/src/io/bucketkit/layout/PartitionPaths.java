package io.bucketkit.layout;

import java.time.LocalDate;

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
