package io.bucketkit.layout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A table's file manifest, {@code _bucketkit_files.json}: the files a bucketkit commit (or {@code bucketkit
 * validate --vouch}) recorded with the layout their rows were hashed by, so a read of exactly those files
 * needs no {@link io.bucketkit.read.BucketReadCheck}. The rules of {@code bucketkit/layout/manifest.py}, which
 * writes it (tests/test_manifest_jvm.py holds the two verdicts equal): a partition is vouched when its files are
 * exactly those the manifest lists for its directory, each with the recorded size and modification time
 * (ms), and the manifest's layout is the read's; anything else is checked.
 */
public final class FileManifest {
  static final String FILE = "_bucketkit_files.json";
  private static final int FORMAT = 1;
  /** Python's NO_MANIFEST, shortened. */
  static final String NONE = "no " + FILE + " (a table bucketkit did not commit, or committed before it kept one; "
      + "`bucketkit validate --vouch` records one for a table whose every row it finds in place)";

  final String by;
  private final JsonNode layout;
  private final Map<String, long[]> files = new HashMap<>();
  private final Map<String, Integer> perDir = new HashMap<>();

  private FileManifest(String by, JsonNode layout, JsonNode files) {
    this.by = by;
    this.layout = layout;
    files.fields().forEachRemaining(e -> {
      this.files.put(e.getKey(), new long[] {e.getValue().get(0).asLong(), e.getValue().get(1).asLong()});
      int slash = e.getKey().lastIndexOf('/');
      perDir.merge(slash < 0 ? "" : e.getKey().substring(0, slash), 1, Integer::sum);
    });
  }

  /**
   * Manifests read lately (8, of up to 20,000 files each), by their file's store, path, length and modification
   * time: every query of a table reads its manifest, and parsing one of a few hundred files was a seventh of a
   * partitioned table's scan planning. A manifest rewritten in place (bucketkit validate --vouch) has another length
   * or time; one that somehow kept both can only vouch for files exactly as it recorded them, which its commit
   * placed.
   */
  private static final Map<String, FileManifest> RECENT = java.util.Collections.synchronizedMap(
      new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, FileManifest> eldest) {
          return size() > 8;
        }
      });

  /** The manifest at {@code root}, or null: none, or not readable as one (then rows are checked). */
  static FileManifest read(FileSystem fs, Path root) throws IOException {
    Path path = new Path(root, FILE);
    org.apache.hadoop.fs.FileStatus status;
    try {
      status = fs.getFileStatus(path);
    } catch (java.io.FileNotFoundException e) {
      return null;
    }
    String key = fs.getUri() + "|" + path + "|" + status.getLen() + "|" + status.getModificationTime();
    FileManifest seen = RECENT.get(key);
    if (seen != null) {
      return seen;
    }
    JsonNode json = TableListing.readJson(fs, path);
    if (json == null || json.path("bucketkit_manifest_version").asInt(-1) != FORMAT || !json.path("files").isObject()
        || !json.path("layout").isObject()) {
      return null;
    }
    try {
      FileManifest read = new FileManifest(json.path("by").asText("?"), json.get("layout"), json.get("files"));
      if (read.files.size() <= 20_000) {  // the driver's memory: 8 x 20k entries at most; a larger table's listing
        RECENT.put(key, read);            // costs far more than parsing its manifest
      }
      return read;
    } catch (RuntimeException e) {  // a malformed entry: trust nothing of it
      return null;
    }
  }

  /** Why this manifest cannot vouch for a read hashing with this layout, or null (Manifest.layout_doubt). */
  String layoutDoubt(String family, List<String> columns, List<String> types, int buckets, int version) {
    List<String> diffs = new ArrayList<>();
    compare(diffs, "hash_family", layout.path("hash_family").asText(""), family);
    compare(diffs, "bucketed_by", strings(layout.path("bucketed_by")), lower(columns));
    compare(diffs, "bucket_types", strings(layout.path("bucket_types")), lower(types));
    compare(diffs, "bucket_count", layout.path("bucket_count").asInt(-1), buckets);
    compare(diffs, "bucketing_version", layout.path("bucketing_version").asInt(-1), version);
    return diffs.isEmpty() ? null : "its manifest (" + by + ") records " + String.join(", ", diffs);
  }

  private static void compare(List<String> diffs, String name, Object mine, Object read) {
    if (!mine.equals(read)) {
      diffs.add(name + " " + mine + " where the read hashes with " + read);
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static List<String> lower(List<String> items) {
    return items.stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
  }

  /**
   * Why the files of the partition directory {@code relDir} ("" for the table root) are not exactly the
   * manifest's, or null: vouched (Manifest.partition_doubt).
   */
  String partitionDoubt(String relDir, List<BucketFiles.BucketFile> listed) {
    String prefix = relDir.isEmpty() ? "" : relDir + "/";
    for (BucketFiles.BucketFile f : listed) {
      String rel = prefix + BucketFiles.name(f);
      long[] recorded = files.get(rel);
      if (recorded == null) {
        return rel + " is not among the files " + by + " recorded";
      }
      if (recorded[0] != f.size || recorded[1] != f.modificationTime) {
        return rel + " changed since " + by + " recorded it (size " + f.size + ", modified " + f.modificationTime
            + " ms; recorded " + recorded[0] + ", " + recorded[1] + " ms)";
      }
    }
    int expected = perDir.getOrDefault(relDir, 0);
    if (expected != listed.size()) {
      return (expected - listed.size()) + " file(s) " + by + " recorded in " + (relDir.isEmpty() ? "the table root"
          : relDir) + " are gone";
    }
    return null;
  }

  /** {@code dir} relative to {@code root} ("" for the root itself), or null when it is not under it. */
  public static String relative(FileSystem fs, Path root, String dir) {
    String top = fs.makeQualified(root).toUri().getPath().replaceAll("/+$", "");
    String at = fs.makeQualified(new Path(dir)).toUri().getPath().replaceAll("/+$", "");
    return at.equals(top) ? "" : at.startsWith(top + "/") ? at.substring(top.length() + 1) : null;
  }

  /** Why {@code manifest} (null: none) vouches for no partition of a read with this layout, or null. */
  private static String doubtOf(FileManifest manifest, List<String> columns, List<String> hiveTypes, int buckets,
                                int version) {
    return manifest == null ? NONE : manifest.layoutDoubt("hive", columns, hiveTypes, buckets, version);
  }

  /** Why the partition directory {@code dir} with {@code files} is checked (the table's {@code doubt} first), or null. */
  private static String partitionVerdict(FileSystem fs, Path root, FileManifest manifest, String doubt, String dir,
                                         List<BucketFiles.BucketFile> files) {
    if (doubt != null) {
      return doubt;
    }
    String rel = relative(fs, root, dir);
    return rel == null ? dir + " lies outside the table's directory" : manifest.partitionDoubt(rel, files);
  }

  /**
   * Mark each of {@code parts} (listed under {@code root}, of a table bucketed by {@code columns} of Hive types
   * {@code hiveTypes} into {@code buckets} with hash {@code version}) vouched or not; the first reason one is
   * checked, or who vouches for all of them.
   */
  public static String vouch(Configuration conf, String root, List<String> columns, List<String> hiveTypes, int buckets,
                             int version, List<TablePartition> parts) throws IOException {
    Path rootPath = new Path(root);
    FileSystem fs = rootPath.getFileSystem(conf);
    FileManifest manifest = read(fs, rootPath);
    String doubt = doubtOf(manifest, columns, hiveTypes, buckets, version);
    String first = null;
    for (TablePartition p : parts) {
      String why = partitionVerdict(fs, rootPath, manifest, doubt, p.location, p.files);
      p.vouched = why == null;
      first = first == null ? why : first;
    }
    // no partition read (a filter kept none): the table's own verdict
    return first != null ? first : doubt != null ? doubt : "every file read is one " + manifest.by + " recorded";
  }

  /**
   * Python-callable, for tests: the verdict of each partition directory {@code dirs} of the table at
   * {@code root}, read with this layout: "vouched" or "checked: reason", as Python's placement gives them.
   */
  public static String[] describe(String root, List<String> dirs, String column, String hiveType, int buckets,
                                  int version) throws IOException {
    Configuration conf = new Configuration();
    Path rootPath = new Path(root);
    FileSystem fs = rootPath.getFileSystem(conf);
    FileManifest manifest = read(fs, rootPath);
    String doubt = doubtOf(manifest, List.of(column), List.of(hiveType), buckets, version);
    List<String> out = new ArrayList<>();
    for (String dir : dirs) {
      BucketFiles.Listing l = BucketFiles.list(conf, dir, buckets, version);
      String why = doubt != null ? doubt : l.doubt != null ? l.doubt
          : partitionVerdict(fs, rootPath, manifest, null, dir, l.files);
      out.add(why == null ? "vouched" : "checked: " + why);
    }
    return out.toArray(new String[0]);
  }
}
