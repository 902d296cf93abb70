package io.bucketkit.spark;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Which bucket each data file of one Hive partition directory holds, by the rules of
 * {@code bucketkit/layout/naming.py} and {@code bucketkit/layout/discovery.py} (tests hold the two equal).
 *
 * <p>Names are tried in Trino's order: legacy Presto {@code <query id>_bucket-N}, Hive
 * {@code 000005_0[_copy_N][...]}, ACID {@code bucket_N}. A directory whose files all miss those
 * patterns follows Hive's original scheme (exactly one file per bucket, the i-th by name is
 * bucket i), unless every name is a Spark {@code bucketBy} name (Spark's hash placed those rows).
 * {@link #list} returns {@code null} with a reason whenever the layout cannot be vouched for; the
 * catalog then passes the table through to Spark unbucketed, never mis-described.
 */
public final class BucketFiles {
  // Java's "." already stops at every line terminator and \d is ASCII: naming.py's _ANY and re.ASCII.
  private static final Pattern LEGACY_PRESTO =
      Pattern.compile("(\\d{8}_\\d{6}_\\d{5}_[a-z0-9]{5})_bucket-(\\d+)((?:[-_.].*)?)");
  private static final Pattern HIVE = Pattern.compile("(\\d+)_(\\d+)(?:_copy_(\\d+)(?=\\z|[_.]))?(.*)");
  private static final Pattern ACID = Pattern.compile("bucket_(\\d+)(?:_(\\d+))?");
  private static final Pattern SPARK = Pattern.compile(".*_(\\d+)(?:\\..*)?");
  private static final Pattern SPARK_HIVE_INSERT =
      Pattern.compile("\\d+_\\d+_part-\\d{5}-[0-9a-f-]{36}_\\d{5}\\.c\\d{3}.*");
  private static final Pattern[] TRINO_ORDER = {LEGACY_PRESTO, HIVE, ACID};
  private static final int[] BUCKET_GROUP = {2, 1, 1};

  private BucketFiles() {}

  /** One data file of a bucket. */
  public static final class BucketFile implements java.io.Serializable {
    public final String path;
    public final long size;
    public final long modificationTime;
    public final int bucket;

    BucketFile(String path, long size, long modificationTime, int bucket) {
      this.path = path;
      this.size = size;
      this.modificationTime = modificationTime;
      this.bucket = bucket;
    }
  }

  /** The files of one directory by bucket, or why they cannot be. */
  public static final class Listing {
    public final List<BucketFile> files;
    public final String doubt;

    Listing(List<BucketFile> files, String doubt) {
      this.files = files;
      this.doubt = doubt;
    }
  }

  /**
   * The bucket id of a file name in Trino's order, as a decimal string (it may exceed 31 bits), or
   * null; the same answer as {@code bucketkit.layout.naming.bucket_of}.
   */
  public static String bucketOf(String name) {
    for (int i = 0; i < TRINO_ORDER.length; i++) {
      Matcher m = TRINO_ORDER[i].matcher(name);
      if (m.matches()) {
        return new BigInteger(m.group(BUCKET_GROUP[i])).toString();
      }
    }
    return null;
  }

  /** Whether Spark's own Hive INSERT (always the v1 hash) wrote this file: naming.is_spark_hive_insert. */
  public static boolean isSparkHiveInsert(String name) {
    return SPARK_HIVE_INSERT.matcher(name).matches();
  }

  static boolean isHidden(String name) {
    return name.startsWith("_") || name.startsWith(".");
  }

  /**
   * List one partition directory (a missing directory is an empty partition).
   *
   * @param version the table's bucketing_version: Spark-INSERT files contradict version 2
   */
  public static Listing list(Configuration conf, String dir, int bucketCount, int version) throws IOException {
    Path path = new Path(dir);
    FileSystem fs = path.getFileSystem(conf);
    FileStatus[] statuses;
    try {
      statuses = fs.listStatus(path);
    } catch (java.io.FileNotFoundException e) {
      return new Listing(new ArrayList<>(), null);
    }
    List<FileStatus> visible = new ArrayList<>();
    for (FileStatus s : statuses) {
      String name = s.getPath().getName();
      if (isHidden(name)) {
        continue;
      }
      if (s.isDirectory()) {
        return new Listing(null, s.getPath() + ": a sub-directory in a bucketed partition (Hive ACID base_/delta_ "
            + "directories or an unknown layout); bucketkit's catalog reads only plain bucket files");
      }
      visible.add(s);
    }
    visible.sort(Comparator.comparing(s -> s.getPath().getName()));
    List<BucketFile> out = new ArrayList<>();
    List<FileStatus> unnamed = new ArrayList<>();
    for (FileStatus s : visible) {
      String name = s.getPath().getName();
      String bucket = bucketOf(name);
      if (bucket == null) {
        unnamed.add(s);
        continue;
      }
      if (version == 2 && isSparkHiveInsert(name)) {
        return new Listing(null, s.getPath() + " was written by Spark's own INSERT, which places rows by the Hive "
            + "v1 hash, into a bucketing_version=2 table");
      }
      BigInteger id = new BigInteger(bucket);
      if (id.compareTo(BigInteger.valueOf(bucketCount)) >= 0) {
        return new Listing(null, s.getPath() + ": bucket " + id + " is beyond the table's " + bucketCount
            + " buckets");
      }
      out.add(new BucketFile(s.getPath().toString(), s.getLen(), s.getModificationTime(), id.intValue()));
    }
    if (unnamed.isEmpty()) {
      return new Listing(out, null);
    }
    if (!out.isEmpty()) {
      return new Listing(null, unnamed.get(0).getPath() + ": a file outside every bucket naming scheme beside "
          + "bucket-named files");
    }
    if (unnamed.stream().allMatch(s -> SPARK.matcher(s.getPath().getName()).matches())) {
      return new Listing(null, unnamed.get(0).getPath() + ": Spark bucketBy file names in a Hive bucketed table; "
          + "bucketBy places rows by Spark's Murmur3 hash, not Hive's");
    }
    if (unnamed.size() != bucketCount) {
      return new Listing(null, dir + ": " + unnamed.size() + " file(s) follow no bucket naming scheme, so the "
          + "original scheme applies and needs exactly one file per bucket; the table declares " + bucketCount);
    }
    for (int i = 0; i < unnamed.size(); i++) {
      FileStatus s = unnamed.get(i);
      out.add(new BucketFile(s.getPath().toString(), s.getLen(), s.getModificationTime(), i));
    }
    return new Listing(out, null);
  }

  /** Python-callable: the buckets {@link #list} assigns, as "bucket:name" strings, or the doubt. */
  public static String[] describe(String dir, int bucketCount, int version) throws IOException {
    Listing l = list(new Configuration(), dir, bucketCount, version);
    if (l.doubt != null) {
      return new String[] {"doubt:" + l.doubt};
    }
    return l.files.stream().map(f -> f.bucket + ":" + new Path(f.path).getName()).toArray(String[]::new);
  }
}
