package io.bucketkit.hashing;

import java.util.List;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;

/**
 * Values sent from Python as one JSON array (one py4j call per batch instead of one per value),
 * turned into Spark's internal values and hashed: how tests hold {@link HiveHash} and
 * {@link HiveBucketFunction} to bucketkit's Python hashing and to Hive's classes.
 *
 * <p>Encoding (Python's {@code json.dumps}): numbers for integral types and floats ({@code NaN},
 * {@code Infinity} allowed), days since 1970-01-01 for dates, strings, lists for arrays, lists of
 * {@code [key, value]} pairs for maps, {@code null} for NULL.
 */
public final class JsonValues {
  private JsonValues() {}

  private static final JsonMapper JSON = JsonMapper.builder()
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
      .build();

  /** Parses a JSON array of values of Hive type {@code hiveType} into Spark internal values. */
  public static Object[] parse(String hiveType, String json) throws java.io.IOException {
    HiveHash.Type t = HiveHash.Type.parse(hiveType);
    List<?> values = JSON.readValue(json, List.class);
    Object[] out = new Object[values.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = toSpark(values.get(i), t);
    }
    return out;
  }

  /** {@link HiveHash#hash} of every value. */
  public static int[] hash(String hiveType, int version, String json) throws java.io.IOException {
    HiveHash.Type t = HiveHash.Type.parse(hiveType);
    Object[] values = parse(hiveType, json);
    int[] out = new int[values.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = HiveHash.hash(values[i], t, version);
    }
    return out;
  }

  /** {@link HiveHash#hashRow} of every row: {@code rowsJson} is a JSON array of rows, each one value per type. */
  public static int[] hashRows(List<String> hiveTypes, int version, String rowsJson) throws java.io.IOException {
    HiveHash.Type[] types = new HiveHash.Type[hiveTypes.size()];
    for (int i = 0; i < types.length; i++) {
      types[i] = HiveHash.Type.parse(hiveTypes.get(i));
    }
    List<?> rows = JSON.readValue(rowsJson, List.class);
    int[] out = new int[rows.size()];
    for (int r = 0; r < out.length; r++) {
      List<?> row = (List<?>) rows.get(r);
      Object[] values = new Object[row.size()];
      for (int i = 0; i < values.length && i < types.length; i++) {
        values[i] = toSpark(row.get(i), types[i]);
      }
      out[r] = HiveHash.hashRow(values, types, version);
    }
    return out;
  }

  /**
   * A bound bucket function's {@code produceResult} on a row per value: {@code (numBuckets, value)}
   * when {@code numBuckets} is given (the {@code bucket(n, col)} form), else {@code (value)}.
   */
  public static int[] produceResult(ScalarFunction<Integer> f, Integer numBuckets, String hiveType, String json)
      throws java.io.IOException {
    Object[] values = parse(hiveType, json);
    int[] out = new int[values.length];
    for (int i = 0; i < out.length; i++) {
      Object[] row = numBuckets == null ? new Object[] {values[i]} : new Object[] {numBuckets, values[i]};
      out[i] = f.produceResult(new GenericInternalRow(row));
    }
    return out;
  }

  private static Object toSpark(Object v, HiveHash.Type t) {
    if (v == null) return null;
    switch (t.name) {
      case "boolean": return (Boolean) v;
      case "tinyint": return ((Number) v).byteValue();
      case "smallint": return ((Number) v).shortValue();
      case "int": case "date": return ((Number) v).intValue();
      case "bigint": return ((Number) v).longValue();
      case "float": return ((Number) v).floatValue();
      case "double": return ((Number) v).doubleValue();
      case "string": case "varchar": return org.apache.spark.unsafe.types.UTF8String.fromString((String) v);
      case "array": {
        List<?> list = (List<?>) v;
        Object[] out = new Object[list.size()];
        for (int i = 0; i < out.length; i++) out[i] = toSpark(list.get(i), t.children[0]);
        return new GenericArrayData(out);
      }
      case "map": {
        List<?> pairs = (List<?>) v;
        Object[] keys = new Object[pairs.size()];
        Object[] vals = new Object[pairs.size()];
        for (int i = 0; i < keys.length; i++) {
          List<?> kv = (List<?>) pairs.get(i);
          keys[i] = toSpark(kv.get(0), t.children[0]);
          vals[i] = toSpark(kv.get(1), t.children[1]);
        }
        return new ArrayBasedMapData(new GenericArrayData(keys), new GenericArrayData(vals));
      }
      default: throw new UnsupportedOperationException("cannot hash Hive type " + t);
    }
  }
}
