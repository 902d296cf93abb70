package io.bucketkit.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
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
final class KeptVersions {
  private KeptVersions() {}

  /**
   * {@code parts} (listed from the table directory {@code root} while the version of {@code marker} was
   * live) with their files in that version's kept copy, or {@code parts} itself where any file is not
   * that version's own (or a partition lies outside {@code root}).
   */
  static List<HiveBucketedTable.TablePartition> pin(Configuration conf, String root, String marker,
                                                    List<HiveBucketedTable.TablePartition> parts) throws IOException {
    Path rootPath = new Path(root);
    FileSystem fs = rootPath.getFileSystem(conf);
    // elsewhere than on a local filesystem kept versions are copies: never the same files
    if (marker == null || rootPath.getParent() == null || BucketFiles.localPath(fs, rootPath) == null) {
      return parts;
    }
    Path kept = new Path(new Path(rootPath.getParent(), "." + rootPath.getName() + TableListing.KEPT_VERSIONS),
        marker.substring(TableListing.VERSION_PREFIX.length()));
    String top = fs.makeQualified(rootPath).toString();
    List<String> dirs = new ArrayList<>();
    for (HiveBucketedTable.TablePartition p : parts) {
      String at = fs.makeQualified(new Path(p.location)).toString();
      String rel = at.equals(top) ? "" : at.startsWith(top + "/") ? at.substring(top.length() + 1) : null;
      if (rel == null) {
        return parts;
      }
      dirs.add((rel.isEmpty() ? kept : new Path(kept, rel)).toString());
    }
    List<List<BucketFiles.Entry>> listed = BucketFiles.eachDir(dirs, dir -> BucketFiles.entries(fs, new Path(dir)));
    List<HiveBucketedTable.TablePartition> out = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      HiveBucketedTable.TablePartition p = parts.get(i);
      if (listed.get(i) == null) {
        return parts;
      }
      Map<String, BucketFiles.Entry> byName = new HashMap<>();
      listed.get(i).forEach(e -> byName.put(e.name(), e));
      List<BucketFiles.BucketFile> files = new ArrayList<>();
      for (BucketFiles.BucketFile f : p.files) {
        Path at = f.hadoopPath != null ? f.hadoopPath : new Path(f.path);
        BucketFiles.Entry same = byName.get(at.getName());
        if (same == null || same.directory() || same.size() != f.size || same.modificationTime() != f.modificationTime) {
          return parts;
        }
        files.add(BucketFiles.placed(same, f.bucket));
      }
      out.add(new HiveBucketedTable.TablePartition(p.values, dirs.get(i), files, true));
    }
    return out;
  }
}
