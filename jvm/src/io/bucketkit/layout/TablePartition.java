package io.bucketkit.layout;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import scala.jdk.javaapi.CollectionConverters;

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

  /** Every partition of catalog table {@code t} the metastore lists (none of an unpartitioned table). */
  public static List<CatalogTablePartition> listed(org.apache.spark.sql.classic.SparkSession spark, CatalogTable t) {
    if (t.partitionColumnNames().isEmpty()) {
      return List.of();
    }
    return CollectionConverters.asJava(spark.sessionState().catalog().externalCatalog().listPartitions(
        t.identifier().database().get(), t.identifier().table(), scala.Option.empty()));
  }

  /** Whether any of {@code parts} lies in another table a REPLACE built than {@code t} ({@link TableListing#otherTable}). */
  public static boolean ofAnotherTable(CatalogTable t, List<CatalogTablePartition> parts) {
    return parts.stream().anyMatch(p -> TableListing.otherTable(t.location().toString(), p.location().toString()));
  }

  /**
   * The values of each partition in {@code parts} (the metastore's, {@link #listed}), in {@code t}'s partition column
   * order, as the metastore spells them ({@code __HIVE_DEFAULT_PARTITION__} for null): the partitions Hive, Trino and
   * Spark SQL read, which {@code bucketkit.scan} of the table reads too (a directory the metastore does not list,
   * such as an external table's dropped partition, is no part of the table).
   */
  public static List<List<String>> values(CatalogTable t, List<CatalogTablePartition> parts) {
    List<String> columns = CollectionConverters.asJava(t.partitionColumnNames());
    List<List<String>> out = new ArrayList<>();
    for (CatalogTablePartition part : parts) {
      java.util.Map<String, String> spec = CollectionConverters.asJava(part.spec());
      List<String> row = new ArrayList<>();
      for (String c : columns) {
        row.add(spec.get(c));
      }
      out.add(row);
    }
    return out;
  }
}
