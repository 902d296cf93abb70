package io.bucketkit.read;

import java.io.Serializable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bucketkit.compat.SparkCompat;
import io.bucketkit.hashing.HiveBucketColumn;
import org.apache.spark.paths.SparkPath;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.catalyst.util.QuotingUtils;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.ObjectType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The read-time check of {@code bucketkit.scan}'s pruned reads of files Spark's own reader reads
 * ({@code bucketkit/spark/scan.py}): every row's Hive bucket ({@link HiveBucketColumn}) against the
 * bucket its file is named for, failing the read on the first row in another bucket, as the catalog's
 * {@link BucketReadCheck} does for SQL. A boolean column that is always true (or throws), for a filter.
 *
 * <p>Why not Spark SQL's own functions: {@code input_file_name()} makes a string a row, and a lookup of
 * it in a literal map scans the map's keys a row; here the file's bucket is looked up once per file (the
 * reader's current file, {@link InputFileBlockHolder}, changes identity only when the file does), so a
 * row costs its hash and one comparison. Nondeterministic, so Spark keeps it where the file is read.
 */
public final class FileBucketCheck implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Map<String, Integer> bucketOfName;  // file name -> its bucket (names two partitions give
                                                    // different buckets are left out: not checked)
  private final String table;
  private final int buckets;
  private final int version;
  private final String columns;
  private transient UTF8String current;
  private transient int expected = -1;

  private FileBucketCheck(Map<String, Integer> bucketOfName, String table, int buckets, int version, String columns) {
    this.bucketOfName = bucketOfName;
    this.table = table;
    this.buckets = buckets;
    this.version = version;
    this.columns = columns;
  }

  /**
   * The check as a column.
   *
   * @param keys the bucket columns, in bucketing order; {@code hiveTypes} their Hive types
   * @param names the file names checked; {@code fileBuckets} the bucket each is named for
   * @param table the table's name in the message
   */
  private static Column of(Column[] keys, String[] hiveTypes, int version, int numBuckets, List<String> names,
                          List<Integer> fileBuckets, String table) {
    Map<String, Integer> byName = new HashMap<>();
    for (int i = 0; i < names.size(); i++) {
      byName.put(names.get(i), fileBuckets.get(i));
    }
    FileBucketCheck check = new FileBucketCheck(byName, table, numBuckets, version, String.join(", ",
        java.util.Arrays.stream(keys).map(Column::toString).toList()));
    Expression bucket = ExpressionUtils.expression(HiveBucketColumn.of(keys, hiveTypes, version, numBuckets));
    Expression target = Literal.create(check, new ObjectType(FileBucketCheck.class));
    return ExpressionUtils.column(new Invoke(target, "check", DataTypes.BooleanType,
        CollectionConverters.asScala(List.of(bucket)).toSeq(),
        CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(), false, false, false));
  }

  /**
   * {@code df} (a read of the table's files) with the check applied, in one call: what Python's {@code
   * bucketkit.scan} asks. Each py4j call is a round trip, and the arrays and lists {@link #of} takes cost one
   * a column or file name, so the keys (by column name), their Hive types, the file names and their buckets
   * come as JSON arrays; a 1-file lookup asked {@code of} ~20 round trips (~20 ms of a 150-200 ms read).
   */
  public static Dataset<Row> where(Dataset<Row> df, String columnsJson, String hiveTypesJson, int version,
                                   int numBuckets, String namesJson, String bucketsJson, String table) {
    String[] columns = parse(columnsJson, String[].class);
    Column[] keys = new Column[columns.length];
    for (int i = 0; i < columns.length; i++) {
      keys[i] = functions.col(QuotingUtils.quoteIdentifier(columns[i]));  // the column named exactly so
    }
    List<String> names = java.util.Arrays.asList(parse(namesJson, String[].class));
    List<Integer> buckets = java.util.Arrays.stream(parse(bucketsJson, int[].class)).boxed().toList();
    return df.where(of(keys, parse(hiveTypesJson, String[].class), version, numBuckets, names, buckets, table));
  }

  private static <T> T parse(String json, Class<T> type) {
    try {
      return JSON.readValue(json, type);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("bucketkit: not a JSON array of " + type.getComponentType() + ": " + json, e);
    }
  }

  /** True, or the error naming the file, the row's bucket and the file's. */
  public boolean check(int bucket) {
    UTF8String path = InputFileBlockHolder.getInputFilePath();
    if (path != current) {
      current = path;
      Integer b = bucketOfName.get(name(path));
      expected = b == null ? -1 : b;
    }
    if (expected >= 0 && bucket != expected) {
      throw SparkCompat.failure("bucketkit: " + SparkPath.fromUrlString(path.toString()).toPath() + " (table "
          + table + ", bucket " + expected + " of " + buckets + " by its name) holds a row whose " + columns
          + " belongs in bucket " + bucket + " (Hive bucketing v" + version + "): the files are not placed as the "
          + "table's metadata says, so a pruned read would miss rows. Check it with `bucketkit validate`");
    }
    return true;
  }

  private static String name(UTF8String path) {
    return path == null || path.numBytes() == 0 ? "" : SparkPath.fromUrlString(path.toString()).toPath().getName();
  }
}
