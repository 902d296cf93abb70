package io.bucketkit.probe;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Test-only: Hadoop's local file system, listing a directory as it does (the names, then each name
 * looked up by path, dropping names gone meanwhile), with a commit's directory switch landing between
 * the two steps of one chosen listing: the race bucketkit's catalog must survive, made deterministic.
 */
public class SwitchingFileSystem extends RawLocalFileSystem {
  private static String armedDir;
  private static String[] armedRenames;

  /** The next listing of {@code dir} renames {@code renames[0] -> renames[1]}, {@code [2] -> [3]}, ... mid-way. */
  public static synchronized void switchDuringListing(String dir, List<String> renames) {
    armedDir = dir;
    armedRenames = renames.toArray(new String[0]);
  }

  private static synchronized String[] fire(String dir) {
    if (!dir.equals(armedDir)) {
      return null;
    }
    armedDir = null;
    return armedRenames;
  }

  /** Whether the armed switch has happened. */
  public static synchronized boolean fired() {
    return armedDir == null;
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    File dir = pathToFile(f);
    String[] renames = fire(dir.getPath());
    if (renames == null) {
      return super.listStatus(f);
    }
    String[] names = dir.list();
    if (names == null) {
      throw new FileNotFoundException(f + " does not exist");
    }
    for (int i = 0; i < renames.length; i += 2) {
      Files.move(Paths.get(renames[i]), Paths.get(renames[i + 1]));
    }
    List<FileStatus> out = new ArrayList<>();
    for (String name : names) {
      try {
        out.add(getFileStatus(new Path(f, name)));
      } catch (FileNotFoundException gone) {
        // Hadoop's local listing drops it too
      }
    }
    return out.toArray(new FileStatus[0]);
  }
}
