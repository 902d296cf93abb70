package bucketkit.testfs;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Test code (tests/support/objectstore.py): the local disk under the scheme {@code objtest}, renaming as
 * S3A does. A file rename is a copy then a delete; a directory rename copies the directory's files one by
 * one, pausing between them ({@code objtest.pause.ms}), then deletes the source, and is logged to the
 * file the environment's {@code BUCKETKIT_OBJTEST_LOG} names, so that a test fails on any directory
 * rename a commit relies on.
 */
public class ObjectStoreFileSystem extends RawLocalFileSystem {
  private static final URI NAME = URI.create("objtest:///");

  @Override
  public URI getUri() {
    return NAME;
  }

  @Override
  public String getScheme() {
    return "objtest";
  }

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    super.initialize(uri, conf);
    setConf(conf);
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    FileStatus status;
    try {
      status = getFileStatus(src);
    } catch (FileNotFoundException e) {
      return false;
    }
    if (!status.isDirectory()) {
      return FileUtil.copy(this, src, this, dst, true, getConf());
    }
    log("jvm: rename of directory " + src + " -> " + dst);
    long pause = getConf() == null ? 0 : getConf().getLong("objtest.pause.ms", 5);
    copyTree(src, dst, pause);
    return delete(src, true);
  }

  private void copyTree(Path src, Path dst, long pause) throws IOException {
    mkdirs(dst);
    for (FileStatus s : listStatus(src)) {
      Path to = new Path(dst, s.getPath().getName());
      if (s.isDirectory()) {
        copyTree(s.getPath(), to, pause);
      } else {
        FileUtil.copy(this, s.getPath(), this, to, false, getConf());
        try {
          Thread.sleep(pause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("objtest: interrupted");
        }
      }
    }
  }

  private static synchronized void log(String line) throws IOException {
    String file = System.getenv("BUCKETKIT_OBJTEST_LOG");
    if (file != null && !file.isEmpty()) {
      try (Writer w = Files.newBufferedWriter(Paths.get(file), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND)) {
        w.write(line + "\n");
      }
    }
  }
}
