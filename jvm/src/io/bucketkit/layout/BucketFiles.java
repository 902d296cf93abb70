package io.bucketkit.layout;

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

    // the listing's own Path of it, where the listing built one (a scan reads through it, not a new parse)
    public transient Path hadoopPath;

    public BucketFile(String path, long size, long modificationTime, int bucket) {
      this.path = path;
      this.size = size;
      this.modificationTime = modificationTime;
      this.bucket = bucket;
    }

    /**
     * The file's path as Spark's file scans carry it ({@code new Path(path).toUri().toString()}, the
     * string of a {@code SparkPath}). A path of plain characters ({@link #isPlainUri}) is that string
     * already: a scan of 480 files spent ~5 ms parsing a {@code Path} per file to print it again.
     */
    public String urlString() {
      if (hadoopPath != null) {
        return hadoopPath.toUri().toString();
      }
      return isPlainUri(path) ? path : new Path(path).toUri().toString();
    }
  }

  /**
   * Whether {@code s} is a qualified path that Hadoop's {@code Path} and Java's {@code URI} would print back
   * unchanged: {@code scheme:/path} or {@code scheme://authority/path}, with only letters, digits and
   * {@code - . _ ~ = +} in its path (nothing a URI escapes), no empty, {@code .} or {@code ..} segment
   * (nothing a URI normalises) and no trailing slash.
   */
  public static boolean isPlainUri(String s) {
    int colon = s.indexOf(':');
    if (colon < 1 || s.charAt(0) < 'a' || s.charAt(0) > 'z' || s.length() < colon + 3 || s.charAt(colon + 1) != '/') {
      return false;
    }
    for (int i = 1; i < colon; i++) {
      char c = s.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
        return false;
      }
    }
    int start = colon + 1;
    if (s.charAt(colon + 2) == '/') {  // an authority (host[:port]), then the path
      int slash = s.indexOf('/', colon + 3);
      if (slash <= colon + 3) {
        return false;
      }
      for (int i = colon + 3; i < slash; i++) {
        char c = s.charAt(i);
        if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
            || c == ':' || c == '_')) {
          return false;
        }
      }
      start = slash;
    }
    int segment = start + 1;  // where the current segment began
    for (int i = start + 1; i <= s.length(); i++) {
      char c = i < s.length() ? s.charAt(i) : '/';
      if (c == '/') {
        int len = i - segment;
        if (len == 0 || len == 1 && s.charAt(segment) == '.'
            || len == 2 && s.charAt(segment) == '.' && s.charAt(segment + 1) == '.') {
          return false;  // empty (a doubled or trailing slash), "." or ".."
        }
        segment = i + 1;
      } else if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
          || c == '_' || c == '~' || c == '=' || c == '+')) {
        return false;
      }
    }
    return true;
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

  /** A name Hive, Trino and Spark skip in a listing: {@code _} or {@code .} first (io.is_hidden). */
  public static boolean isHidden(String name) {
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
    List<Entry> entries = entries(fs, path);
    if (entries == null) {
      return new Listing(new ArrayList<>(), null);
    }
    List<Entry> visible = new ArrayList<>();
    for (Entry s : entries) {
      if (isHidden(s.name)) {
        continue;
      }
      if (s.directory) {
        return new Listing(null, s.path() + ": a sub-directory in a bucketed partition (Hive ACID base_/delta_ "
            + "directories or an unknown layout); bucketkit's catalog reads only plain bucket files");
      }
      visible.add(s);
    }
    visible.sort(Comparator.comparing(s -> s.name));
    List<BucketFile> out = new ArrayList<>();
    List<Entry> unnamed = new ArrayList<>();
    for (Entry s : visible) {
      String name = s.name;
      String bucket = bucketOf(name);
      if (bucket == null) {
        unnamed.add(s);
        continue;
      }
      if (version == 2 && isSparkHiveInsert(name)) {
        return new Listing(null, s.path() + " was written by Spark's own INSERT, which places rows by the Hive "
            + "v1 hash, into a bucketing_version=2 table");
      }
      BigInteger id = new BigInteger(bucket);
      if (id.compareTo(BigInteger.valueOf(bucketCount)) >= 0) {
        return new Listing(null, s.path() + ": bucket " + id + " is beyond the table's " + bucketCount
            + " buckets");
      }
      out.add(placed(s, id.intValue()));
    }
    if (unnamed.isEmpty()) {
      return new Listing(out, null);
    }
    if (!out.isEmpty()) {
      return new Listing(null, unnamed.get(0).path() + ": a file outside every bucket naming scheme beside "
          + "bucket-named files");
    }
    if (unnamed.stream().allMatch(s -> SPARK.matcher(s.name).matches())) {
      return new Listing(null, unnamed.get(0).path() + ": Spark bucketBy file names in a Hive bucketed table; "
          + "bucketBy places rows by Spark's Murmur3 hash, not Hive's");
    }
    if (unnamed.size() != bucketCount) {
      return new Listing(null, dir + ": " + unnamed.size() + " file(s) follow no bucket naming scheme, so the "
          + "original scheme applies and needs exactly one file per bucket; the table declares " + bucketCount);
    }
    for (int i = 0; i < unnamed.size(); i++) {
      Entry s = unnamed.get(i);
      out.add(placed(s, i));
    }
    return new Listing(out, null);
  }

  /**
   * One entry of a directory: its name, full path (as Hadoop's {@code Path.toString()} gives it), Hadoop's Path of
   * it where the listing had one (null: built from {@code path} where a file is read), whether a directory, its
   * size and modification time.
   */
  record Entry(String name, String path, Path hadoopPath, boolean directory, long size, long modificationTime) {}

  static BucketFile placed(Entry s, int bucket) {
    BucketFile f = new BucketFile(s.path(), s.size, s.modificationTime, bucket);
    f.hadoopPath = s.hadoopPath;
    return f;
  }

  /** A listed file's name, the last element of its path (Hadoop's {@code Path.getName()}, without parsing a Path). */
  public static String name(BucketFile f) {
    return f.path.substring(f.path.lastIndexOf('/') + 1);
  }

  // Hadoop's own local file systems, and Hive's proxy of them (what a Hive-enabled session serves
  // file: paths with): a local directory is read through java.nio. A file system configured in their
  // place (a test's, a cache's) is always asked through Hadoop.
  private static final java.util.Set<String> LOCAL = java.util.Set.of("org.apache.hadoop.fs.LocalFileSystem",
      "org.apache.hadoop.fs.RawLocalFileSystem", "org.apache.hadoop.hive.ql.io.ProxyLocalFileSystem");

  /** {@code path} as a java.nio path when {@code fs} is Hadoop's local file system and the path a file: one, else null. */
  public static java.nio.file.Path localPath(FileSystem fs, Path path) {
    return LOCAL.contains(fs.getClass().getName()) ? fileOf(fs, path) : null;
  }

  /**
   * The local file of a file: {@code path}, or null for another scheme: Hadoop's own rule
   * ({@code RawLocalFileSystem.pathToFile}: the URI's decoded path), which names a directory called
   * {@code café} or {@code a%20b} as Hadoop does ({@code Paths.get(URI)} refuses the first).
   */
  static java.nio.file.Path fileOf(FileSystem fs, Path path) {
    java.net.URI uri = fs.makeQualified(path).toUri();
    return "file".equals(uri.getScheme()) ? new java.io.File(uri.getPath()).toPath() : null;
  }

  /**
   * The entries of directory {@code dir}, or null when it does not exist. A local directory
   * ({@link #localPath}) is read
   * with one {@code stat} per entry through java.nio; Hadoop's local file system spends three on each
   * (length, time, kind), most of a small query's listing. Entries gone meanwhile are left out, as
   * Hadoop's listing leaves them out; paths are built as Hadoop builds its listing's.
   */
  static List<Entry> entries(FileSystem fs, Path dir) throws IOException {
    List<Entry> out = new ArrayList<>();
    java.nio.file.Path local = localPath(fs, dir);
    if (local != null) {
      // each child's path as Hadoop's Path(qualified, name).toString() gives it, without building that Path: a
      // Path per file (a URI parsed and resolved) was most of a 480-file listing's time; a scan builds one for
      // each file it reads
      String qualified = fs.makeQualified(dir).toString();
      String prefix = qualified.endsWith("/") ? qualified : qualified + "/";
      try (java.nio.file.DirectoryStream<java.nio.file.Path> names = java.nio.file.Files.newDirectoryStream(local)) {
        for (java.nio.file.Path child : names) {
          java.nio.file.attribute.BasicFileAttributes a;
          try {
            a = java.nio.file.Files.readAttributes(child, java.nio.file.attribute.BasicFileAttributes.class);
          } catch (java.nio.file.NoSuchFileException e) {
            continue;
          }
          String name = child.getFileName().toString();
          out.add(new Entry(name, prefix + name, null, a.isDirectory(), a.isDirectory() ? 0 : a.size(),
              a.lastModifiedTime().toMillis()));
        }
        return out;
      } catch (java.nio.file.NoSuchFileException e) {
        return null;
      } catch (java.nio.file.NotDirectoryException e) {
        out.clear();  // a file, which Hadoop lists as itself
      }
    }
    FileStatus[] statuses = TableListing.entries(fs, dir);
    if (statuses == null) {
      return null;
    }
    for (FileStatus s : statuses) {
      out.add(new Entry(s.getPath().getName(), s.getPath().toString(), s.getPath(), s.isDirectory(), s.getLen(),
          s.getModificationTime()));
    }
    return out;
  }

  // Listing is I/O (a LIST request per directory on HDFS and object stores, a stat per file locally):
  // a table's partitions are listed by a few threads at once, as Hadoop's list-status threads and
  // Spark's parallel partition discovery do. Daemon threads, idle ones let go after a minute.
  static final int LISTING_THREADS = 16;
  private static final java.util.concurrent.ThreadPoolExecutor LISTERS = new java.util.concurrent.ThreadPoolExecutor(
      LISTING_THREADS, LISTING_THREADS, 60, java.util.concurrent.TimeUnit.SECONDS,
      new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
        Thread t = new Thread(r, "bucketkit-listing");
        t.setDaemon(true);
        return t;
      });

  static {
    LISTERS.allowCoreThreadTimeOut(true);
  }

  /**
   * {@link #list} of each of {@code dirs}, in their order, listed by up to {@link #LISTING_THREADS}
   * threads; one directory is listed on the calling thread.
   */
  public static List<Listing> listAll(Configuration conf, List<String> dirs, int bucketCount, int version)
      throws IOException {
    return eachDir(dirs, dir -> list(conf, dir, bucketCount, version));
  }

  /** Listing one directory (I/O). */
  @FunctionalInterface
  interface DirLister<T> {
    T list(String dir) throws IOException;
  }

  /** {@code lister} of each of {@code dirs}, in their order, by up to {@link #LISTING_THREADS} threads. */
  static <T> List<T> eachDir(List<String> dirs, DirLister<T> lister) throws IOException {
    if (dirs.size() <= 1) {
      List<T> out = new ArrayList<>();
      for (String dir : dirs) {
        out.add(lister.list(dir));
      }
      return out;
    }
    List<java.util.concurrent.Future<T>> pending = new ArrayList<>();
    for (String dir : dirs) {
      pending.add(LISTERS.submit(() -> lister.list(dir)));
    }
    List<T> out = new ArrayList<>();
    try {
      for (java.util.concurrent.Future<T> f : pending) {
        out.add(f.get());
      }
    } catch (InterruptedException e) {
      pending.forEach(f -> f.cancel(true));
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("bucketkit: interrupted while listing " + dirs.get(0) + " and "
          + (dirs.size() - 1) + " more");
    } catch (java.util.concurrent.ExecutionException e) {
      pending.forEach(f -> f.cancel(true));
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IOException(e.getCause());
    }
    return out;
  }

  /** Python-callable: the buckets {@link #list} assigns, as "bucket:name" strings, or the doubt. */
  public static String[] describe(String dir, int bucketCount, int version) throws IOException {
    Listing l = list(new Configuration(), dir, bucketCount, version);
    if (l.doubt != null) {
      return new String[] {"doubt:" + l.doubt};
    }
    return l.files.stream().map(f -> f.bucket + ":" + BucketFiles.name(f)).toArray(String[]::new);
  }
}
