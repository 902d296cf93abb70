package io.bucketkit.table;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;

import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Pushed predicates select buckets and table partitions (and reach the ORC/Parquet reader as
 * row-group filters); Spark still evaluates every predicate after the scan, so a predicate only
 * ever narrows what is read, never what is returned. Required columns narrow the read schema.
 */
final class BucketScanBuilder implements SupportsPushDownV2Filters, SupportsPushDownRequiredColumns {
  private final HiveBucketedTable table;
  private final CaseInsensitiveStringMap options;
  private Predicate[] pushed = new Predicate[0];
  private StructType required;

  BucketScanBuilder(HiveBucketedTable table, CaseInsensitiveStringMap options) {
    this.table = table;
    this.options = options;
    this.required = table.schema();
  }

  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    pushed = predicates;
    return predicates;  // all of them stay post-scan filters
  }

  @Override
  public Predicate[] pushedPredicates() {
    List<Predicate> used = new ArrayList<>();
    for (Predicate p : pushed) {
      if (ScanPredicates.buckets(new Predicate[] {p}, table) != null
          || ScanPredicates.onlyReferences(p, table.partitionSchema)) {
        used.add(p);
      }
    }
    return used.toArray(new Predicate[0]);
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    required = requiredSchema;
  }

  @Override
  public Scan build() {
    BitSet buckets = ScanPredicates.buckets(pushed, table);
    List<org.apache.spark.sql.catalyst.expressions.Expression> partitionFilters = new ArrayList<>();
    List<Filter> dataFilters = new ArrayList<>();
    for (Predicate p : pushed) {
      if (table.partitionSchema.length() > 0 && ScanPredicates.onlyReferences(p, table.partitionSchema)) {
        org.apache.spark.sql.catalyst.expressions.Expression bound = ScanPredicates.bind(p, table.partitionSchema);
        if (bound != null) {
          partitionFilters.add(bound);
        }
      } else if (ScanPredicates.onlyReferences(p, table.dataSchema)) {
        Filter f = ScanPredicates.readerFilter(p);
        if (f != null) {
          dataFilters.add(f);
        }
      }
    }
    HiveBucketedTable.Selection listing;
    try {
      listing = table.select(partitionFilters);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("bucketkit: listing " + table.name() + " failed", e);
    }
    List<String> wanted = new ArrayList<>(ScanPredicates.fieldNames(required));
    StructType readPartition = readPart(table.partitionSchema, wanted);
    boolean bucketId = table.offersBucketId() && wanted.contains(HiveBucketedTable.BUCKET_ID);
    boolean bucketHash = table.offersBucketHash() && wanted.contains(HiveBucketedTable.BUCKET_HASH);
    if (bucketId) {
      readPartition = readPartition.add(HiveBucketedTable.BUCKET_ID, org.apache.spark.sql.types.DataTypes.IntegerType);
    }
    if (bucketHash) {
      readPartition = readPartition.add(HiveBucketedTable.BUCKET_HASH, org.apache.spark.sql.types.DataTypes.IntegerType);
    }
    if (bucketId || bucketHash) {
      // the bucket columns too: _bucket_hash is their hash, and so is _bucket where a file's bucket is unknown
      // (BucketIdFill)
      wanted.addAll(table.bucketColumns);
    }
    return new BucketScan(table, listing, readPart(table.dataSchema, wanted), readPartition, buckets,
        partitionFilters, dataFilters.toArray(new Filter[0]), options);
  }

  // The fields of `part` named in `wanted` (lower case), in the table's order.
  private static StructType readPart(StructType part, List<String> wanted) {
    StructType out = new StructType();
    for (StructField f : part.fields()) {
      if (wanted.contains(f.name().toLowerCase(Locale.ROOT))) {
        out = out.add(f);
      }
    }
    return out;
  }
}
