package io.bucketkit.layout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A query planned on a version of a table bucketkit writes reads that version, after later commits
 * too: every commit keeps its version whole (hard links) in {@code <parent>/.<name>.bucketkit.versions/<write id>/}
 * ({@code bucketkit/layout/versions.py}), and a listing of the table whose every file is that
 * version's own (same name, size and modification time: a hard link of it) reads its files there.
 * The same rule as {@code bucketkit.layout.discovery.pin}; tests/test_versions_spark.py holds the two
 * verdicts equal. A table whose files changed since (a writer outside bucketkit), or whose kept
 * version is missing or a copy, is read in place.
 */
public final class KeptVersions {
  private KeptVersions() {}

  /**
   * {@code parts} (listed from the table directory {@code root} while the version of {@code marker} was
   * live) with their files in that version's kept copy, or {@code parts} itself where any file is not
   * that version's own, a partition's kept directory holds a file it lacks (removed since by a writer outside
   * bucketkit: an engine's TRUNCATE), or a partition lies outside {@code root}.
   */
  public static List<TablePartition> pin(Configuration conf, String root, String marker,
                                                    List<TablePartition> parts) throws IOException {
    Path rootPath = new Path(root);
    FileSystem fs = rootPath.getFileSystem(conf);
    // elsewhere than on a local filesystem kept versions are copies: never the same files
    if (marker == null || rootPath.getParent() == null || BucketFiles.localPath(fs, rootPath) == null) {
      return parts;
    }
    Path kept = new Path(store(fs, rootPath), marker.substring(TableListing.VERSION_PREFIX.length()));
    String top = fs.makeQualified(rootPath).toString();
    List<String> dirs = new ArrayList<>();
    for (TablePartition p : parts) {
      String at = fs.makeQualified(new Path(p.location)).toString();
      String rel = at.equals(top) ? "" : at.startsWith(top + "/") ? at.substring(top.length() + 1) : null;
      if (rel == null) {
        return parts;
      }
      dirs.add((rel.isEmpty() ? kept : new Path(kept, rel)).toString());
    }
    List<List<BucketFiles.Entry>> listed = BucketFiles.eachDir(dirs, dir -> BucketFiles.entries(fs, new Path(dir)));
    List<TablePartition> out = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      TablePartition p = parts.get(i);
      if (listed.get(i) == null) {
        return parts;
      }
      Map<String, BucketFiles.Entry> byName = new HashMap<>();
      listed.get(i).forEach(e -> byName.put(e.name(), e));
      List<BucketFiles.BucketFile> files = new ArrayList<>();
      for (BucketFiles.BucketFile f : p.files) {
        BucketFiles.Entry same = byName.get(BucketFiles.name(f));
        if (same == null || same.directory() || same.size() != f.size || same.modificationTime() != f.modificationTime) {
          return parts;
        }
        files.add(BucketFiles.placed(same, f.bucket));
      }
      java.util.Set<String> names = new java.util.HashSet<>();
      p.files.forEach(f -> names.add(BucketFiles.name(f)));
      for (BucketFiles.Entry e : listed.get(i)) {  // a file the live partition lacks: removed since (a TRUNCATE)
        if (!e.directory() && !BucketFiles.isHidden(e.name()) && !names.contains(e.name())) {
          return parts;
        }
      }
      TablePartition same = new TablePartition(p.values, dirs.get(i), files, true);
      same.vouched = p.vouched;  // the same files (hard links): the same verdict
      out.add(same);
    }
    return out;
  }

  /**
   * The number of the version {@code parts} were pinned to ({@link #pin}: every partition read from one kept
   * version, which holds no other visible file), or null where they are read in place (or there are none, or the
   * version holds partitions {@code parts} lack): what {@code bucketkit.scan} of a
   * catalog table reads with {@code VERSION AS OF n}, so that its DataFrame reads that version whatever is
   * committed later.
   */
  public static Integer pinnedNumber(Configuration conf, String root, List<TablePartition> parts)
      throws IOException {
    if (parts.isEmpty() || parts.stream().anyMatch(p -> !p.kept)) {
      return null;
    }
    Path rootPath = new Path(root);
    FileSystem fs = rootPath.getFileSystem(conf);
    String store = fs.makeQualified(store(fs, rootPath)).toString() + "/";
    String at = fs.makeQualified(new Path(parts.get(0).location)).toString();
    if (!at.startsWith(store)) {
      return null;
    }
    String writeId = at.substring(store.length()).split("/", 2)[0];
    // the version read whole (VERSION AS OF) must be what was pinned: not where it holds a partition the metastore
    // no longer lists (dropped since by a writer outside bucketkit); each pinned partition holds its files only (pin).
    // Its partition directories are listed level by level, down to the partitions' depth (no file is listed)
    Path kept = new Path(store(fs, rootPath), writeId);
    java.util.Set<String> pinned = new java.util.HashSet<>();
    parts.forEach(p -> pinned.add(fs.makeQualified(new Path(p.location)).toString()));
    String first = FileManifest.relative(fs, kept, parts.get(0).location);  // "dt=1/h=2": the partitions' depth
    int depth = first == null || first.isEmpty() ? 0 : first.split("/").length;
    List<Path> level = List.of(kept);
    for (int i = 0; i < depth; i++) {
      List<Path> next = new ArrayList<>();
      for (Path dir : level) {
        FileStatus[] entries = TableListing.entries(fs, dir);
        for (FileStatus s : entries == null ? new FileStatus[0] : entries) {
          if (s.isDirectory() && !BucketFiles.isHidden(s.getPath().getName())) {
            next.add(s.getPath());
          }
        }
      }
      level = next;
    }
    if (depth > 0 && level.stream().anyMatch(dir -> !pinned.contains(fs.makeQualified(dir).toString()))) {
      return null;
    }
    return history(fs, rootPath).stream().filter(v -> v.writeId().equals(writeId) && v.removed() == null)
        .map(Version::number).findFirst().orElse(null);
  }

  /** A committed version of a table, as its record in the store beside the table says (versions.Version). */
  record Version(int number, String writeId, double committed, Double removed) {}

  /** The version a time-travel query names, kept in {@code dir}. */
  public record Found(int number, String writeId, String dir) {}

  /**
   * Where the table at {@code root} keeps its versions (a reader's versions.TablePaths.at(...).store): inside
   * it, {@code <root>/.bucketkit.versions}, where a pointer names its live version; beside it,
   * {@code <parent>/.<name>.bucketkit.versions}, where versions are kept there; else inside it where that
   * store exists or the store cannot rename directories, else beside it.
   */
  public static Path store(FileSystem fs, Path root) throws IOException {
    root = TableListing.tableRoot(root);
    Path inside = new Path(root, TableListing.KEPT_VERSIONS);
    if (fs.exists(new Path(root, TableListing.POINTER))) {
      return inside;
    }
    Path beside = TableListing.keptBeside(root);
    if (fs.exists(beside)) {
      return beside;
    }
    return !TableListing.renamesDirectories(fs) || fs.exists(inside) ? inside : beside;
  }

  /** Every committed version the store records, oldest first (versions.history). */
  public static List<Version> history(FileSystem fs, Path root) throws IOException {
    List<Version> out = new ArrayList<>();
    FileStatus[] records = TableListing.entries(fs, store(fs, root));
    if (records == null) {
      return out;
    }
    for (FileStatus s : records) {
      String name = s.getPath().getName();
      if (!name.endsWith(".json") || name.startsWith(".") || s.isDirectory()) {
        continue;
      }
      JsonNode r = TableListing.readJson(fs, s.getPath());
      if (r == null || !r.path("committed").isNumber()) {
        continue;
      }
      out.add(new Version(r.path("version").asInt(), r.path("write_id").asText(), r.path("committed").asDouble(),
          r.path("removed").isNumber() ? r.path("removed").asDouble() : null));
    }
    out.sort(java.util.Comparator.comparingInt(Version::number));
    return out;
  }

  /**
   * The version {@code version} (a number, SQL's {@code VERSION AS OF}) or {@code micros} (SQL's
   * {@code TIMESTAMP AS OF}: the version live then) names, by the rule of Python's
   * {@code versions.find_version}; tests/test_versions_spark.py holds the two equal.
   *
   * @throws IllegalArgumentException no such version, a time before the first, a version vacuum
   *     removed, or a version that is not a number; the message names the table and its versions
   */
  public static Found find(Configuration conf, String root, String table, String version, Long micros) throws IOException {
    Path rootPath = new Path(root);
    FileSystem fs = rootPath.getFileSystem(conf);
    List<Version> versions = history(fs, rootPath);
    String known = versions.isEmpty() ? "no version recorded (written before versions were kept)"
        : "versions " + versions.get(0).number() + ".." + versions.get(versions.size() - 1).number() + ", committed "
        + iso(versions.get(0).committed()) + " to " + iso(versions.get(versions.size() - 1).committed());
    Version found = null;
    if (version != null) {
      int number;
      try {
        number = Integer.parseInt(version.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("bucketkit: table " + table + ": VERSION AS OF '" + version
            + "' is not a version number (bucketkit.history lists them: " + known + ")");
      }
      found = versions.stream().filter(v -> v.number() == number).findFirst().orElse(null);
      if (found == null) {
        throw new IllegalArgumentException("bucketkit: table " + table + ": no version " + version.trim() + " (" + known + ")");
      }
    } else {
      double ts = micros / 1e6;
      for (Version v : versions) {
        if (v.committed() <= ts + 1e-6) {
          found = v;
        }
      }
      if (found == null) {
        throw new IllegalArgumentException("bucketkit: table " + table + ": no version was live at "
            + java.time.Instant.EPOCH.plus(micros, java.time.temporal.ChronoUnit.MICROS) + " (" + known + ")");
      }
    }
    Path dir = new Path(store(fs, rootPath), found.writeId());
    if (found.removed() != null || !fs.exists(dir)) {
      throw new IllegalArgumentException("bucketkit: table " + table + ": version " + found.number() + " (committed "
          + iso(found.committed()) + ") was removed" + (found.removed() != null ? " at " + iso(found.removed()) : "")
          + " by vacuum or the retention period (BUCKETKIT_RETENTION); " + known);
    }
    return new Found(found.number(), found.writeId(), dir.toString());
  }

  /** versions.RETENTION: seconds a version stays readable after a later one replaced it, by default (7 days). */
  public static final double RETENTION = 7 * 24 * 3600.0;
  private static final java.util.regex.Pattern SECONDS = java.util.regex.Pattern.compile("[0-9]+(\\.[0-9]*)?|\\.[0-9]+");

  /**
   * versions.retention: the retention period in seconds, {@code raw} (the value of {@code BUCKETKIT_RETENTION}) if
   * not null, else {@link #RETENTION}; the same rule as Python's, which a differential test holds equal.
   *
   * @throws IllegalArgumentException {@code raw} is not seconds &gt;= 0 (digits, optionally with a fraction)
   */
  public static double retention(String raw) {
    if (raw == null) {
      return RETENTION;
    }
    if (!SECONDS.matcher(raw).matches()) {
      throw new IllegalArgumentException("BUCKETKIT_RETENTION='" + raw + "': expected seconds >= 0");
    }
    return Double.parseDouble(raw);
  }

  /** The retention period in the driver's environment ({@code BUCKETKIT_RETENTION}, which commits read too). */
  public static double retention() {
    return retention(System.getenv("BUCKETKIT_RETENTION"));
  }

  /** Python-callable, for tests: the write id {@link #find} names, or "error: <message>". */
  public static String findForTest(String root, String version, long micros, boolean byTime) throws IOException {
    try {
      return find(new Configuration(), root, root, byTime ? null : version, byTime ? micros : null).writeId();
    } catch (IllegalArgumentException e) {
      return "error: " + e.getMessage();
    }
  }

  /** Seconds since the epoch as versions._iso writes them: {@code 2026-11-26T08:12:14+00:00}. */
  private static String iso(double seconds) {
    return java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'+00:00'")
        .withZone(java.time.ZoneOffset.UTC).format(java.time.Instant.ofEpochSecond((long) Math.floor(seconds)));
  }
}
