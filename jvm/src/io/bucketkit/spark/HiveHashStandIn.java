package io.bucketkit.spark;

import java.nio.ByteBuffer;

import org.apache.hive.common.util.Murmur3;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.unsafe.types.UTF8String;

/** Temporary: Hive v1/v2 hashes of a few types until io.bucketkit.hive.HiveHash lands (branch jvmhash). */
final class HiveHashStandIn {
  private static final int SEED = 104729;

  private HiveHashStandIn() {}

  static boolean supports(DataType t) {
    return t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType || t instanceof LongType
        || t instanceof DateType || (t instanceof StringType && ((StringType) t).isUTF8BinaryCollation());
  }

  static int hash(int version, DataType t, Object v) {
    if (v == null) {
      return 0;
    }
    if (t instanceof StringType) {
      byte[] b = ((UTF8String) v).getBytes();
      if (version == 2) {
        return Murmur3.hash32(b, b.length, SEED);
      }
      int r = 0;
      for (byte x : b) {
        r = 31 * r + x;
      }
      return r;
    }
    if (t instanceof LongType) {
      long l = (Long) v;
      return version == 2 ? murmur(ByteBuffer.allocate(8).putLong(l).array()) : (int) ((l >>> 32) ^ l);
    }
    int i = ((Number) v).intValue();
    if (version == 1 || t instanceof ByteType) {
      return i;
    }
    if (t instanceof ShortType) {
      return murmur(ByteBuffer.allocate(2).putShort((short) i).array());
    }
    return murmur(ByteBuffer.allocate(4).putInt(i).array());
  }

  private static int murmur(byte[] b) {
    return Murmur3.hash32(b, b.length, SEED);
  }

}
