package io.bucketkit.layout;

import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;

/** One table partition (the whole table when unpartitioned): its values and bucket files. */
public final class TablePartition {
  /** A table partition the metastore knows of (the table itself when unpartitioned): its values and location. */
  public record Located(InternalRow values, String location) {}

  public final InternalRow values;
  final String location;
  public final List<BucketFiles.BucketFile> files;
  public final boolean kept;  // its files are read from the kept version of the table (KeptVersions)
  public boolean vouched;  // its files are those the table's manifest records: rows not re-hashed (FileManifest)

  public TablePartition(InternalRow values, String location, List<BucketFiles.BucketFile> files) {
    this(values, location, files, false);
  }

  public TablePartition(InternalRow values, String location, List<BucketFiles.BucketFile> files, boolean kept) {
    this.values = values;
    this.location = location;
    this.files = files;
    this.kept = kept;
  }
}
