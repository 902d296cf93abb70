package io.bucketkit.layout;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A table's files listed as <em>one version</em> of it, across bucketkit's commit, which switches
 * whole table directories ({@code bucketkit/layout/versions.py}, docs/writing.md "Commit protocol"); the
 * same rules as {@code bucketkit.layout.discovery.discover}:
 *
 * <ul>
 *   <li>The table directory is missing (a two-rename switch is between its renames), or the store
 *       moves directories file by file (neither local nor HDFS): while a commit's journal says
 *       {@code switching}, wait (up to 2 s), then list.
 *   <li>The live version's marker {@code .bucketkit-version-<write id>} is noted before the listing
 *       and must still be there after it; otherwise a commit switched versions meanwhile (a partition
 *       or a file listed from the old version, the rest from the new), and the table is listed again.
 * </ul>
 *
 * <p>Java must know the protocol's names; tests hold {@link #VERSION_PREFIX}, {@link #journalName},
 * {@link #lockName}, {@link #SWITCHING} and {@link #KEPT_VERSIONS} equal to Python's.
 */
public final class TableListing {
  /** versions.VERSION_PREFIX: the live version's marker file, inside the table directory. */
  public static final String VERSION_PREFIX = ".bucketkit-version-";
  /** io.KEPT_VERSIONS: the suffix of the directory beside a table that keeps its versions ({@link KeptVersions}). */
  public static final String KEPT_VERSIONS = ".bucketkit.versions";
  /** versions.POINTER: inside a table on a store without directory renames, the object naming its live version. */
  public static final String POINTER = ".bucketkit.live";
  /**
   * The name's prefix of the directory, inside a table's default location, that holds a table a REPLACE TABLE AS
   * SELECT swapped in ({@code io.bucketkit.spark.CreateAsSelect}): the table is located there, so the old table's
   * readers never list it, and the metastore switches from one to the other in one call.
   */
  public static final String REPLACED_PREFIX = ".bucketkit.table-";
  /** versions.SWITCHING: the journal state of a commit switching its next version into place. */
  public static final String SWITCHING = "switching";
  static final int ATTEMPTS = 20;  // layout._ATTEMPTS
  static final long SWITCH_WAIT_MS = 2000;  // versions.wait_for_switch's timeout
  private static final long POLL_MS = 20;
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private TableListing() {}

  /** One listing of every partition of a table, given the live version's marker name (null: none). */
  @FunctionalInterface
  public interface Lister<T> {
    T list(String marker) throws IOException;
  }

  /**
   * Which of the entries (names) of a table's default location, where each REPLACE TABLE AS SELECT builds the new
   * table in a directory {@link #REPLACED_PREFIX}{@code <millis>}, hold tables that were replaced at least
   * {@code retainMillis} before {@code nowMillis}: those a query that resolved one before its replacement no longer
   * reads (bucketkit's retention period, as for versions). An entry belongs to the table built at the time its name
   * holds, with what commits keep beside that directory; every other entry to the table created there first. A table
   * was replaced when the next one was built. The live table ({@code home}) and the one it replaced ({@code old}:
   * an entry's name; {@code ""} the location itself; null none here) are never among them; an entry whose time does
   * not parse is kept.
   */
  public static List<String> expiredTables(List<String> entries, String home, String old, long nowMillis,
                                           long retainMillis) {
    java.util.TreeSet<Long> built = new java.util.TreeSet<>();
    for (String entry : entries) {
      Long at = builtAt(entry);
      if (at != null && at >= 0) {
        built.add(at);
      }
    }
    Long homeAt = builtAt(home);
    Long oldAt = old == null ? null : old.isEmpty() ? Long.valueOf(-1) : builtAt(old);
    List<String> expired = new ArrayList<>();
    for (String entry : entries) {
      Long at = builtAt(entry);
      Long replaced = at == null ? null : built.higher(at);
      if (at != null && !at.equals(homeAt) && !at.equals(oldAt) && replaced != null
          && nowMillis - replaced >= retainMillis) {
        expired.add(entry);
      }
    }
    return expired;
  }

  /**
   * The directory ({@link #REPLACED_PREFIX}{@code <millis>}) of the table a REPLACE built that {@code path} lies in,
   * or null where it lies in none: two paths naming different ones belong to different tables of one name.
   */
  public static String replacedTable(String path) {
    int at = path.indexOf("/" + REPLACED_PREFIX);
    if (at < 0) {
      return null;
    }
    int end = path.indexOf('/', at + 1);
    return path.substring(at + 1, end < 0 ? path.length() : end);
  }

  /** Whether partition location {@code partition} lies in another table a REPLACE built than {@code location}. */
  public static boolean otherTable(String location, String partition) {
    String theirs = replacedTable(partition);
    return theirs != null && !theirs.equals(replacedTable(location));
  }

  /** When the table entry {@code name} belongs to was built: -1 the first one, null a time that does not parse. */
  private static Long builtAt(String name) {
    String rest = name.startsWith(REPLACED_PREFIX) ? name.substring(REPLACED_PREFIX.length())
        : name.startsWith("." + REPLACED_PREFIX) ? name.substring(REPLACED_PREFIX.length() + 1) : null;
    if (rest == null) {
      return -1L;
    }
    int end = 0;
    while (end < rest.length() && Character.isDigit(rest.charAt(end)) && rest.charAt(end) < 128) {
      end++;
    }
    try {
      return end == 0 || end > 18 ? null : Long.valueOf(rest.substring(0, end));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** versions.TablePaths(root).journal(writeId)'s name: {@code .<table dir>.bucketkit-<write id>.json}. */
  public static String journalName(String tableDir, String writeId) {
    return journalPrefix(tableDir) + writeId + ".json";
  }

  private static String journalPrefix(String tableDir) {
    return besidePrefix(tableDir) + "-";
  }

  /** versions.TablePaths.lock of a table whose commits keep their versions beside it: {@code .<tableDir>.bucketkit.lock}. */
  public static String lockName(String tableDir) {
    return besidePrefix(tableDir) + ".lock";
  }

  /** Where commits keep the versions of table directory {@code root} beside it: {@code .<name>.bucketkit.versions}. */
  public static Path keptBeside(Path root) {
    return new Path(root.getParent(), "." + root.getName() + KEPT_VERSIONS);
  }

  /** What the names of every entry a commit keeps beside table directory {@code tableDir} start with (versions.TablePaths). */
  public static String besidePrefix(String tableDir) {
    return "." + tableDir + ".bucketkit";
  }

  /**
   * {@code lister}'s listing of the table whose directory is {@code root}, made while one version
   * was live (see the class comment).
   *
   * @throws IOException a commit stayed mid-switch for 2 s (its writer may have died: {@code bucketkit
   *     recover} restores the table), or commits kept switching versions during 20 listings in a row
   */
  public static <T> T oneVersion(Configuration conf, String root, String table, Lister<T> lister) throws IOException {
    Path path = new Path(root);
    FileSystem fs = path.getFileSystem(conf);
    boolean renamesAtomic = renamesDirectories(fs);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (waitForSwitch(fs, path, table, renamesAtomic)) {
        continue;
      }
      String marker = marker(fs, path);
      T listed = lister.list(marker);
      if (marker == null || fs.exists(new Path(path, marker))) {
        return listed;
      }
    }
    throw new IOException("bucketkit: table " + table + " (" + root + ") changed under " + ATTEMPTS
        + " listings in a row (concurrent commits); run the query again");
  }

  private static String scheme(FileSystem fs) {
    return String.valueOf(fs.getUri().getScheme()).toLowerCase(java.util.Locale.ROOT);
  }

  /** versions.renames_directories: whether {@code fs} renames a directory in one atomic step (a local disk, HDFS). */
  public static boolean renamesDirectories(FileSystem fs) {
    return scheme(fs).equals("file") || scheme(fs).equals("hdfs");
  }

  /**
   * The directory of the live version a pointer in the table directory {@code root} names
   * (versions.live_root), or null where there is no pointer (the table directory is the table). A
   * published version never changes, so it is read as a directory bucketkit wrote. Any other visible
   * file in {@code root} but those the pointer's commit is deleting ({@code retiring}) was written there
   * by another engine after bucketkit's last commit: the read fails, naming it, as
   * {@code discovery._refuse_foreign} does, instead of dropping its rows.
   */
  public static String published(Configuration conf, String root, String table) throws IOException {
    Path path = new Path(root);
    FileSystem fs = path.getFileSystem(conf);
    JsonNode pointer = readJson(fs, new Path(path, POINTER));
    if (pointer == null || !pointer.path("write_id").isTextual()) {
      return null;
    }
    java.util.Set<String> retiring = new java.util.HashSet<>();
    pointer.path("retiring").forEach(r -> retiring.add(r.asText()));
    List<String> foreign = new ArrayList<>();
    visibleFiles(fs, path, "", foreign);
    foreign.removeIf(retiring::contains);
    Path store = new Path(path, KEPT_VERSIONS);
    if (!foreign.isEmpty()) {
      java.util.Collections.sort(foreign);
      throw new IOException("bucketkit: table " + table + ": " + foreign.size() + " file(s) such as "
          + new Path(path, foreign.get(0)) + " were written into the table directory after bucketkit's last commit, "
          + "whose version " + pointer.path("write_id").asText() + " (in " + store + ") is what bucketkit reads on "
          + "this store; their rows would be missed. The next bucketkit commit (an append of no rows will do) "
          + "takes them into the table");
    }
    return new Path(store, pointer.path("write_id").asText()).toString();
  }

  /**
   * versions.table_root: the table directory of {@code path}, itself or, for a version kept inside a table
   * ({@code <root>/.bucketkit.versions/<write id>}, where the metastore points a table whose commits publish
   * inside it), {@code <root>}.
   */
  public static Path tableRoot(Path path) {
    Path parent = path.getParent();
    return parent != null && KEPT_VERSIONS.equals(parent.getName()) && parent.getParent() != null
        ? parent.getParent() : path;
  }

  /** versions.visible_files: relative paths of the visible files below {@code dir}, hidden names skipped at every level. */
  private static void visibleFiles(FileSystem fs, Path dir, String rel, List<String> out) throws IOException {
    FileStatus[] children = entries(fs, dir);
    if (children == null) {
      return;
    }
    for (FileStatus s : children) {
      String name = s.getPath().getName();
      if (name.startsWith(".") || name.startsWith("_")) {
        continue;
      }
      String at = rel.isEmpty() ? name : rel + "/" + name;
      if (s.isDirectory()) {
        visibleFiles(fs, s.getPath(), at, out);
      } else {
        out.add(at);
      }
    }
  }

  /**
   * The live version's marker name in {@code root}, or null (no marker: a table bucketkit did not
   * write). A local directory's names are read through one open handle and never looked up again:
   * Hadoop's local listing looks every name up by path and drops those a switch took away meanwhile.
   */
  static String marker(FileSystem fs, Path root) throws IOException {
    List<String> names = new ArrayList<>();
    java.nio.file.Path local = BucketFiles.fileOf(fs, root);
    if (local != null) {
      try (DirectoryStream<java.nio.file.Path> entries = Files.newDirectoryStream(local)) {
        entries.forEach(e -> names.add(e.getFileName().toString()));
      } catch (NoSuchFileException | NotDirectoryException e) {
        return null;
      }
    } else {
      try {
        for (FileStatus s : fs.listStatus(root)) {
          names.add(s.getPath().getName());
        }
      } catch (java.io.FileNotFoundException e) {
        return null;
      }
    }
    return names.stream().filter(n -> n.startsWith(VERSION_PREFIX)).max(String::compareTo).orElse(null);
  }

  /**
   * Wait while a commit of the table at {@code root} is mid-switch; whether one was (versions.wait_for_switch):
   * its journal says {@code switching} and the table path is missing (between the two renames), or
   * the store moves directories file by file. A live writer finishes within milliseconds; a switch
   * still under way after 2 s is reported (Java cannot tell whether a Python writer on this host is
   * alive; bucketkit's recover can).
   */
  static boolean waitForSwitch(FileSystem fs, Path root, String table, boolean renamesAtomic) throws IOException {
    long deadline = System.currentTimeMillis() + SWITCH_WAIT_MS;
    for (boolean waited = false; ; waited = true) {
      String journal = renamesAtomic && fs.exists(root) ? null : switching(fs, root);
      if (journal == null) {
        return waited;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("bucketkit: table " + table + ": the commit journaled in " + journal + " has been "
            + "switching a new version into place for over " + SWITCH_WAIT_MS / 1000 + " s, so " + root
            + " is missing or incomplete; if its writer died, run `bucketkit recover " + root + "` (it restores "
            + "the last committed version); then run the query again");
      }
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("bucketkit: interrupted while waiting for a commit of " + table);
      }
    }
  }

  /** The entries of directory {@code dir}, or null where it does not exist (not yet written, or deleted meanwhile). */
  public static FileStatus[] entries(FileSystem fs, Path dir) throws IOException {
    try {
      return fs.listStatus(dir);
    } catch (java.io.FileNotFoundException e) {
      return null;
    }
  }

  /** What commits keep beside table directory {@code root}: its parent's entries named {@link #besidePrefix}. */
  public static List<FileStatus> besideEntries(FileSystem fs, Path root) throws IOException {
    FileStatus[] siblings = root.getParent() == null ? null : entries(fs, root.getParent());
    List<FileStatus> out = new ArrayList<>();
    for (FileStatus s : siblings == null ? new FileStatus[0] : siblings) {
      if (s.getPath().getName().startsWith(besidePrefix(root.getName()))) {
        out.add(s);
      }
    }
    return out;
  }

  /** Whether a commit of table directory {@code root} is under way or in its grace period: a journal (or its next
   * version) of it lies beside it. */
  public static boolean committing(FileSystem fs, Path root) throws IOException {
    String prefix = journalPrefix(root.getName());
    for (FileStatus s : besideEntries(fs, root)) {
      if (s.getPath().getName().startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** The path of a journal beside {@code root} whose state is {@code switching}, or null. */
  static String switching(FileSystem fs, Path root) throws IOException {
    String prefix = journalPrefix(root.getName());
    for (FileStatus s : besideEntries(fs, root)) {
      String name = s.getPath().getName();
      if (!name.startsWith(prefix) || !name.endsWith(".json") || s.isDirectory()) {
        continue;
      }
      JsonNode journal = readJson(fs, s.getPath());  // gone: the commit finished and cleaned up
      if (journal != null && SWITCHING.equals(journal.path("state").asText(null))) {
        return s.getPath().toString();
      }
    }
    return null;
  }

  /**
   * A JSON file of bucketkit's commit protocol (a journal, a version record), or null when it is gone
   * or cut short by a kill before its rename: versions.read_json.
   */
  static JsonNode readJson(FileSystem fs, Path path) throws IOException {
    try (InputStream in = fs.open(path)) {
      return JSON.readTree(in);
    } catch (java.io.FileNotFoundException | com.fasterxml.jackson.core.JacksonException e) {
      return null;
    }
  }

  /**
   * Python-callable, for tests: the partition directories {@code dirs} of the table at {@code root}
   * listed as one version by {@link BucketFiles#list}, as "dir/bucket:name" strings (or "doubt:...").
   *
   * @param conf Hadoop settings over the defaults (a test file system)
   */
  public static String[] describe(String root, List<String> dirs, int bucketCount, int version,
                                  Map<String, String> conf) throws IOException {
    Configuration hadoop = new Configuration();
    conf.forEach(hadoop::set);
    return oneVersion(hadoop, root, root, marker -> {
      List<String> out = new ArrayList<>();
      for (String dir : dirs) {
        BucketFiles.Listing l = BucketFiles.list(hadoop, dir, bucketCount, version);
        if (l.doubt != null) {
          return new String[] {"doubt:" + l.doubt};
        }
        l.files.forEach(f -> out.add(new Path(dir).getName() + "/" + f.bucket + ":" + BucketFiles.name(f)));
      }
      return out.toArray(new String[0]);
    });
  }
}
