package io.bucketkit.hashing;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.CharType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.VarcharType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Hive's bucketing hash, versions 1 and 2, over Spark's internal values: the JVM twin of
 * {@code bucketkit/hashing/hive.py} (scalar path) and {@code bucketkit/hashing/murmur3.py}, held equal to both
 * and to Hive's own classes by {@code tests/test_hashing_jvm.py}.
 *
 * <p>v1 is Hive's {@code ObjectInspectorUtils.hashCode}, v2 its {@code hashCodeMurmur}: Murmur3
 * (seed 104729, sign-extended tail bytes) of the value's serialised bytes. Values are Spark's
 * internal ones: Boolean, Byte, Short, Integer (int and date: days since 1970-01-01), Long, Float,
 * Double, UTF8String, ArrayData, MapData; {@code null} is NULL and hashes to 0. Bucketable types are
 * those of hashing.py: boolean, tinyint, smallint, int, bigint, float, double, string, varchar,
 * date, and array/map of them. bucketkit (as Trino) does not hash timestamp, decimal, char, binary or
 * struct for Hive bucketing (Hive does; such tables are read unbucketed), so {@link Type#parse} refuses them.
 */
public final class HiveHash {
  private HiveHash() {}

  public static final int SEED = 104729;
  private static final int C1 = 0xcc9e2d51;
  private static final int C2 = 0x1b873593;
  private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder().equals(ByteOrder.BIG_ENDIAN);

  /** A bucketable Hive type: a primitive name, or array/map with their children. */
  /** {@link Type#unboxed()}: how a hot loop reads a key (its per-type hash is {@code hashInt}, ...). */
  public static final int BOXED = 0;
  public static final int INT = 1;
  public static final int BIGINT = 2;
  public static final int STRING = 3;
  public static final int VARCHAR = 4;

  public static final class Type implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private static final List<String> PRIMITIVES = List.of(
        "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "varchar", "date");
    private static final Map<String, String> ALIASES = Map.of(
        "integer", "int", "long", "bigint", "short", "smallint", "byte", "tinyint", "bool", "boolean",
        "real", "float");

    public final String name;
    public final String params;  // "(12)" for varchar(12), "" otherwise
    public final Type[] children;

    private Type(String name, String params, Type... children) {
      this.name = name;
      this.params = params;
      this.children = children;
    }

    /**
     * Parses a Hive type string ({@code "bigint"}, {@code "varchar(12)"}, {@code "map<string,array<int>>"}).
     *
     * @throws UnsupportedOperationException the type (or one nested in it) cannot be bucketed on
     * @throws IllegalArgumentException the string is not a Hive type
     */
    public static Type parse(String text) {
      String s = text.trim().toLowerCase(Locale.ROOT);
      int lt = s.indexOf('<');
      if (lt >= 0) {
        if (!s.endsWith(">")) {
          throw new IllegalArgumentException("Hive type " + text + ": expected a closing '>'");
        }
        String head = s.substring(0, lt).trim();
        List<String> args = splitTopLevel(s.substring(lt + 1, s.length() - 1), text);
        if (head.equals("array") && args.size() == 1) {
          return new Type("array", "", parse(args.get(0)));
        }
        if (head.equals("map") && args.size() == 2) {
          return new Type("map", "", parse(args.get(0)), parse(args.get(1)));
        }
        throw unsupported(text, head);
      }
      int paren = s.indexOf('(');
      String head = (paren >= 0 ? s.substring(0, paren) : s).trim();
      head = ALIASES.getOrDefault(head, head);
      String params = paren >= 0 ? s.substring(paren).replace(" ", "") : "";
      if (!PRIMITIVES.contains(head)) {
        throw unsupported(text, head);
      }
      if (!params.isEmpty() && !(head.equals("varchar") && params.matches("\\(\\d+\\)"))) {
        throw new IllegalArgumentException("Hive type " + text + ": only varchar takes a length, as varchar(n)");
      }
      return new Type(head, params);
    }

    /**
     * The Hive type a Spark column type stands for: StringType is {@code string} (Spark keeps
     * no varchar in a resolved column's type; see HiveBucketFunction), VarcharType {@code varchar}.
     *
     * @throws UnsupportedOperationException no bucketable Hive type holds this Spark type
     */
    public static Type fromSpark(DataType t) {
      if (t instanceof BooleanType) return new Type("boolean", "");
      if (t instanceof ByteType) return new Type("tinyint", "");
      if (t instanceof ShortType) return new Type("smallint", "");
      if (t instanceof IntegerType) return new Type("int", "");
      if (t instanceof LongType) return new Type("bigint", "");
      if (t instanceof FloatType) return new Type("float", "");
      if (t instanceof DoubleType) return new Type("double", "");
      if (t instanceof DateType) return new Type("date", "");
      if (t instanceof VarcharType) return new Type("varchar", "(" + ((VarcharType) t).length() + ")");
      if (t instanceof StringType && !(t instanceof CharType)) {
        if (!((StringType) t).supportsBinaryEquality()) {
          throw new UnsupportedOperationException("Hive bucketing hashes a string's UTF-8 bytes; a column with collation "
              + ((StringType) t).collationName() + " compares unequal bytes as equal, so equal keys could sit in different buckets");
        }
        return new Type("string", "");
      }
      if (t instanceof ArrayType) return new Type("array", "", fromSpark(((ArrayType) t).elementType()));
      if (t instanceof MapType) {
        return new Type("map", "", fromSpark(((MapType) t).keyType()), fromSpark(((MapType) t).valueType()));
      }
      throw new UnsupportedOperationException("bucketkit (as Trino) cannot hash a Spark " + t.simpleString()
          + " column for Hive bucketing (a table Hive bucketed on one is read unbucketed); bucketable types are " + String.join(", ", PRIMITIVES) + ", array and map of them");
    }

    /**
     * How a hot loop reads this type's values without boxing them: {@link #INT} (int, date),
     * {@link #BIGINT}, {@link #STRING}, {@link #VARCHAR}; any other type {@link #BOXED}, through
     * {@link HiveHash#hash(Object, Type, int)}.
     */
    public int unboxed() {
      return switch (name) {
        case "int", "date" -> INT;
        case "bigint" -> BIGINT;
        case "string" -> STRING;
        case "varchar" -> VARCHAR;
        default -> BOXED;
      };
    }

    /** The Spark type of this Hive type's internal values. */
    public DataType sparkType() {
      switch (name) {
        case "boolean": return DataTypes.BooleanType;
        case "tinyint": return DataTypes.ByteType;
        case "smallint": return DataTypes.ShortType;
        case "int": return DataTypes.IntegerType;
        case "bigint": return DataTypes.LongType;
        case "float": return DataTypes.FloatType;
        case "double": return DataTypes.DoubleType;
        case "date": return DataTypes.DateType;
        case "array": return DataTypes.createArrayType(children[0].sparkType());
        case "map": return DataTypes.createMapType(children[0].sparkType(), children[1].sparkType());
        default: return DataTypes.StringType;  // string, varchar
      }
    }

    /**
     * A key equal for two types exactly when equal values of them always hash the same (hashing.py's
     * {@code _hash_class}): v1 hashes tinyint and smallint as int, v2 hashes varchar as string.
     */
    public String hashClass(int version) {
      switch (name) {
        case "array": return "array<" + children[0].hashClass(version) + ">";
        case "map": return "map<" + children[0].hashClass(version) + "," + children[1].hashClass(1) + ">";
        case "tinyint": case "smallint": return version == 1 ? "int" : name;
        case "varchar": return version == 2 ? "string" : name;
        default: return name;
      }
    }

    /** Whether a float or double sits anywhere in this type (Spark equates 0.0 and -0.0; Hive hashes them apart). */
    public boolean hasFloatingPoint() {
      if (name.equals("float") || name.equals("double")) return true;
      for (Type c : children) {
        if (c.hasFloatingPoint()) return true;
      }
      return false;
    }

    @Override
    public String toString() {
      if (name.equals("array")) return "array<" + children[0] + ">";
      if (name.equals("map")) return "map<" + children[0] + "," + children[1] + ">";
      return name + params;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Type && o.toString().equals(toString());
    }

    @Override
    public int hashCode() {
      return toString().hashCode();
    }

    private static UnsupportedOperationException unsupported(String text, String head) {
      return new UnsupportedOperationException("Hive type " + text + ": bucketkit (as Trino) cannot hash " + head
          + " for Hive bucketing (a table Hive bucketed on it is read unbucketed); bucketable types are " + String.join(", ", PRIMITIVES) + ", array<...> and map<...> of them");
    }

    private static List<String> splitTopLevel(String inner, String text) {
      List<String> parts = new ArrayList<>();
      int depth = 0;
      int start = 0;
      for (int i = 0; i < inner.length(); i++) {
        char c = inner.charAt(i);
        if (c == '<' || c == '(') depth++;
        else if (c == '>' || c == ')') depth--;
        else if (c == ',' && depth == 0) {
          parts.add(inner.substring(start, i));
          start = i + 1;
        }
      }
      parts.add(inner.substring(start));
      if (depth != 0) {
        throw new IllegalArgumentException("Hive type " + text + ": unbalanced '<' or '('");
      }
      return parts;
    }
  }

  // ------------------------------------------------------------------ rows and buckets

  /** The bucket a hash falls into: {@code (hash & Integer.MAX_VALUE) % n}, never negative. */
  public static int bucketId(int hash, int numBuckets) {
    if (numBuckets < 1) {
      throw new IllegalArgumentException("bucket count must be a positive int, got " + numBuckets);
    }
    return (hash & Integer.MAX_VALUE) % numBuckets;
  }

  /** A row's hash over several bucket columns, Hive's {@code h = 31 * h + hash(column)} from 0. */
  public static int hashRow(Object[] values, Type[] types, int version) {
    if (values.length != types.length) {
      throw new IllegalArgumentException("got " + values.length + " values for " + types.length + " bucket column types");
    }
    int h = 0;
    for (int i = 0; i < values.length; i++) {
      h = combine(h, hash(values[i], types[i], version));
    }
    return h;
  }

  /**
   * The hash of the bucket columns at {@code ordinals} of {@code row}, in CLUSTERED BY order, each read as
   * {@link #hashAt} reads it: Hive's {@code h = 31 * h + hash(column)} from 0. What a write places each row by, and
   * what a read checks each row against.
   */
  public static int hashRowAt(org.apache.spark.sql.catalyst.InternalRow row, int[] ordinals, Type[] types, int[] fast,
                              DataType[] dataTypes, int version) {
    int h = 0;
    for (int c = 0; c < ordinals.length; c++) {
      h = combine(h, hashAt(row, ordinals[c], types[c], fast[c], dataTypes[c], version));
    }
    return h;
  }

  /** One step of a row's hash: the hash so far ({@code 0} before the first column) and the next column's. */
  public static int combine(int rowHash, int columnHash) {
    return 31 * rowHash + columnHash;
  }

  /**
   * One value's hash (Spark internal value, {@code null} = NULL hashes to 0).
   *
   * @throws IllegalArgumentException the version is not 1 or 2, or the value is not of the type
   */
  public static int hash(Object value, Type t, int version) {
    checkVersion(version);
    if (value == null) {
      return 0;
    }
    try {
      switch (t.name) {
        case "boolean": return ((Boolean) value) ? 1 : 0;
        case "tinyint": return (Byte) value;
        case "smallint": return hashShort((Short) value, version);
        case "int": case "date": return hashInt((Integer) value, version);
        case "bigint": return hashLong((Long) value, version);
        case "float": return hashFloat((Float) value, version);
        case "double": return hashDouble((Double) value, version);
        case "string": return hashString((UTF8String) value, version, false);
        case "varchar": return hashString((UTF8String) value, version, true);
        case "array": return hashArray((ArrayData) value, t.children[0], version);
        case "map": return hashMap((MapData) value, t.children[0], t.children[1], version);
        default: throw new UnsupportedOperationException("cannot hash Hive type " + t);
      }
    } catch (ClassCastException e) {
      throw new IllegalArgumentException("cannot hash a " + value.getClass().getName() + " as Hive " + t
          + ": expected Spark's internal value for " + t.sparkType().simpleString());
    }
  }

  /**
   * The hash of the value at {@code ordinal} of {@code row} (NULL hashes to 0), of type {@code t} read as
   * {@code dataType}; {@code fast} is {@code t.unboxed()}: the common key types skip boxing and the type
   * dispatch of {@link #hash} (same hashes, see the per-type methods). What runs for every row a write
   * moves into buckets, and for every row a read checks.
   */
  public static int hashAt(org.apache.spark.sql.catalyst.InternalRow row, int ordinal, Type t, int fast,
                           DataType dataType, int version) {
    if (row.isNullAt(ordinal)) {
      return 0;
    }
    return switch (fast) {
      case INT -> hashInt(row.getInt(ordinal), version);
      case BIGINT -> hashLong(row.getLong(ordinal), version);
      case STRING -> hashString(row.getUTF8String(ordinal), version, false);
      case VARCHAR -> hashString(row.getUTF8String(ordinal), version, true);
      default -> hash(row.get(ordinal, dataType), t, version);
    };
  }

  public static void checkVersion(int version) {
    if (version != 1 && version != 2) {
      throw new IllegalArgumentException("bucketing version must be 1 or 2, got " + version);
    }
  }

  // ------------------------------------------------------------------ per type

  public static int hashShort(short v, int version) {
    return version == 1 ? v : murmur3(new byte[] {(byte) (v >> 8), (byte) v});
  }

  public static int hashInt(int v, int version) {
    return version == 1 ? v : murmur3Int(v);
  }

  public static int hashLong(long v, int version) {
    return version == 1 ? (int) (v >>> 32 ^ v) : murmur3Long(v);
  }

  public static int hashFloat(float f, int version) {
    int bits = Float.floatToIntBits(f);
    // Hive quirk (v2): the int bits are converted numerically to a float, whose bytes are hashed.
    return version == 1 ? bits : murmur3Int(Float.floatToIntBits((float) bits));
  }

  public static int hashDouble(double d, int version) {
    long bits = Double.doubleToLongBits(d);
    return version == 1 ? (int) (bits >>> 32 ^ bits) : murmur3Long(Double.doubleToLongBits((double) bits));
  }

  /**
   * v1: {@code r = 31 * r + b} over the signed UTF-8 bytes, from 0 (string) or 1 (varchar: Text.hashCode).
   * Reads the bytes where the string lies (no copy: this runs once per row in bucketkit.write's column).
   */
  public static int hashString(UTF8String s, int version, boolean varchar) {
    Object base = s.getBaseObject();
    long offset = s.getBaseOffset();
    int length = s.numBytes();
    if (version == 2) {
      return murmur3(base, offset, length);
    }
    int r = varchar ? 1 : 0;
    for (int i = 0; i < length; i++) {
      r = 31 * r + Platform.getByte(base, offset + i);
    }
    return r;
  }

  public static int hashArray(ArrayData a, Type element, int version) {
    DataType dt = element.sparkType();
    int r = 0;
    for (int i = 0; i < a.numElements(); i++) {
      r = 31 * r + hash(a.isNullAt(i) ? null : a.get(i, dt), element, version);
    }
    return r;
  }

  /** Sum of {@code hash(key) ^ v1(value)}: Hive's hashCodeMurmur hashes map values with v1 even in v2. */
  public static int hashMap(MapData m, Type key, Type value, int version) {
    ArrayData keys = m.keyArray();
    ArrayData values = m.valueArray();
    DataType kt = key.sparkType();
    DataType vt = value.sparkType();
    int r = 0;
    for (int i = 0; i < m.numElements(); i++) {
      r += hash(keys.isNullAt(i) ? null : keys.get(i, kt), key, version)
          ^ hash(values.isNullAt(i) ? null : values.get(i, vt), value, 1);
    }
    return r;
  }

  // ------------------------------------------------------------------ Hive's Murmur3

  /** Hive's {@code Murmur3.hash32(data, data.length, 104729)}: tail bytes read as signed Java bytes. */
  public static int murmur3(byte[] data) {
    return murmur3(data, Platform.BYTE_ARRAY_OFFSET, data.length);
  }

  /** {@link #murmur3(byte[])} of the {@code length} bytes at {@code offset} of {@code base} (Spark's memory addressing). */
  public static int murmur3(Object base, long offset, int length) {
    int nblocks = length >> 2;
    int h = SEED;
    for (int i = 0; i < nblocks; i++) {
      int k = Platform.getInt(base, offset + (i << 2));  // the 4 bytes as a little-endian int, as Hive reads them
      h = mixBlock(h, BIG_ENDIAN ? Integer.reverseBytes(k) : k);
    }
    int tail = nblocks << 2;
    int k1 = 0;
    switch (length - tail) {
      case 3:
        k1 ^= Platform.getByte(base, offset + tail + 2) << 16;
        // fall through
      case 2:
        k1 ^= Platform.getByte(base, offset + tail + 1) << 8;
        // fall through
      case 1:
        k1 ^= Platform.getByte(base, offset + tail);
        h ^= scramble(k1);
        break;
      default:
        break;
    }
    return finish(h, length);
  }

  /* Hive hashes an int's or a long's big-endian bytes: read back little-endian, as murmur3 reads its
     blocks, they are the byte-reversed value (no byte[] per row: bucketkit.write hashes every row). */

  /** {@link #murmur3(byte[])} of {@code v}'s 4 big-endian bytes. */
  public static int murmur3Int(int v) {
    return finish(mixBlock(SEED, Integer.reverseBytes(v)), 4);
  }

  /** {@link #murmur3(byte[])} of {@code v}'s 8 big-endian bytes. */
  public static int murmur3Long(long v) {
    return finish(mixBlock(mixBlock(SEED, Integer.reverseBytes((int) (v >>> 32))), Integer.reverseBytes((int) v)), 8);
  }

  private static int mixBlock(int h, int k) {
    return Integer.rotateLeft(h ^ scramble(k), 13) * 5 + 0xe6546b64;
  }

  private static int finish(int h, int length) {
    h ^= length;
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
  }

  private static int scramble(int k) {
    return Integer.rotateLeft(k * C1, 15) * C2;
  }
}
