package io.bucketkit.compat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.bucketkit.layout.BucketFiles;
import io.bucketkit.layout.TablePartition;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.FilePartition$;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.execution.datasources.v2.python.PythonTable;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import scala.jdk.javaapi.CollectionConverters;

/**
 * The calls into Spark internals whose Java signatures are not public API (Spark's file packing, an
 * {@code AnalysisException}, the ORC reader factory, a Python data source's classes), in one place.
 * Those whose signatures differ between the Spark releases bucketkit supports (a {@code BatchScanExec}'s
 * constructor, the Parquet scan's, {@code CatalogTable.copy} and {@code CatalogStorageFormat.copy})
 * are {@link SparkRelease}'s, one small file per release line under {@code jvm/release/} (see
 * {@code bucketkit/jvmbuild.py}); everything else compiles unchanged against every supported release.
 */
public final class SparkCompat {
  private SparkCompat() {}

  /**
   * Table {@code name} of the session catalog: {@code t}, {@code db.t}, or {@code spark_catalog.db.t} (the session
   * catalog's own name, as Spark SQL's messages and catalog-qualified tools spell it); backticks as Spark SQL takes
   * them.
   *
   * @throws org.apache.spark.sql.AnalysisException a name that does not parse, or a table of another catalog
   */
  public static org.apache.spark.sql.catalyst.TableIdentifier sessionTable(SparkSession spark, String name)
      throws org.apache.spark.sql.AnalysisException {
    List<String> parts = new ArrayList<>(CollectionConverters.asJava(
        spark.sessionState().sqlParser().parseMultipartIdentifier(name)));
    if (parts.size() == 3 && parts.get(0).equalsIgnoreCase(
        org.apache.spark.sql.connector.catalog.CatalogManager.SESSION_CATALOG_NAME())) {
      parts.remove(0);
    }
    if (parts.size() == 1) {
      return org.apache.spark.sql.catalyst.TableIdentifier.apply(parts.get(0));
    }
    if (parts.size() == 2) {
      return new org.apache.spark.sql.catalyst.TableIdentifier(parts.get(1), scala.Option.apply(parts.get(0)));
    }
    throw analysisError("bucketkit: table " + name + ": expected t, db.t or "
        + org.apache.spark.sql.connector.catalog.CatalogManager.SESSION_CATALOG_NAME()
        + ".db.t: bucketkit reads and writes the tables of the session catalog");
  }

  /**
   * Every file Spark's own reader would read in each partition of {@code parts} (locations qualified with
   * {@code conf}, the table's listing configuration; of a table with
   * partition columns {@code partitionSchema}, empty when it has none), each of bucket -1 (none vouched
   * for): what Spark's {@code InMemoryFileIndex} lists there, as Spark's own relation of the table asks
   * it — a partitioned table's partitions as given (CatalogFileIndex: the files directly in each
   * location), an unpartitioned table's directory with its files (hidden names skipped, a missing
   * location empty).
   */
  public static List<TablePartition> leafFiles(SparkSession spark, org.apache.hadoop.conf.Configuration conf,
                                                         StructType partitionSchema,
                                                         List<TablePartition.Located> parts)
      throws java.io.IOException {
    List<org.apache.hadoop.fs.Path> roots = new ArrayList<>();
    List<org.apache.spark.sql.execution.datasources.PartitionPath> given = new ArrayList<>();
    java.util.Map<InternalRow, Integer> partOf = new java.util.IdentityHashMap<>();
    for (TablePartition.Located p : parts) {
      org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path(p.location());
      root = root.getFileSystem(conf).makeQualified(root);
      partOf.put(p.values(), roots.size());
      roots.add(root);
      given.add(new org.apache.spark.sql.execution.datasources.PartitionPath(p.values(), root));
    }
    scala.Option<org.apache.spark.sql.execution.datasources.PartitionSpec> spec = partitionSchema.isEmpty()
        ? scala.Option.empty() : scala.Option.apply(new org.apache.spark.sql.execution.datasources.PartitionSpec(
            partitionSchema, CollectionConverters.asScala(given).toList()));
    org.apache.spark.sql.execution.datasources.InMemoryFileIndex index =
        new org.apache.spark.sql.execution.datasources.InMemoryFileIndex(spark,
            CollectionConverters.asScala(roots).toList(), scala.collection.immutable.Map$.MODULE$.empty(),
            scala.Option.empty(), org.apache.spark.sql.execution.datasources.NoopCache$.MODULE$, spec,
            scala.Option.empty());
    List<List<BucketFiles.BucketFile>> files = new ArrayList<>();
    roots.forEach(r -> files.add(new ArrayList<>()));
    scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Expression> none =
        scala.collection.immutable.List$.MODULE$.empty();
    for (org.apache.spark.sql.execution.datasources.PartitionDirectory d
        : CollectionConverters.asJava(index.listFiles(none, none))) {
      Integer owner = partitionSchema.isEmpty() ? Integer.valueOf(0) : partOf.get(d.values());
      for (org.apache.spark.sql.execution.datasources.FileStatusWithMetadata f : CollectionConverters.asJava(d.files())) {
        org.apache.hadoop.fs.FileStatus s = f.fileStatus();
        files.get(owner).add(new BucketFiles.BucketFile(s.getPath().toString(), s.getLen(), s.getModificationTime(), -1));
      }
    }
    List<TablePartition> out = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      files.get(i).sort(java.util.Comparator.comparing(b -> b.path));
      out.add(new TablePartition(parts.get(i).values(), parts.get(i).location(), files.get(i)));
    }
    return out;
  }

  /**
   * Files split and packed into tasks as Spark's own file scans pack them
   * ({@code FilePartition.maxSplitBytes} and {@code getFilePartitions}): splits of at most
   * {@code spark.sql.files.maxPartitionBytes}, smaller when the read is small so every core gets work,
   * each file costing {@code spark.sql.files.openCostInBytes} more.
   */
  public static InputPartition[] packFiles(SparkSession spark, List<PartitionedFile> files, boolean split) {
    SQLConf conf = spark.sessionState().conf();
    long openCost = conf.filesOpenCostInBytes();
    long total = 0;
    for (PartitionedFile f : files) {
      total += f.length() + openCost;
    }
    int minPartitions = minPartitions(spark);
    long maxSplit = Math.min(conf.filesMaxPartitionBytes(), Math.max(openCost, total / Math.max(1, minPartitions)));
    List<PartitionedFile> splits = new ArrayList<>();
    for (PartitionedFile f : files) {
      long step = split ? maxSplit : Math.max(1, f.length());  // text files whole: a compressed one has no splits
      for (long start = f.start(); start < f.start() + f.length(); start += step) {
        long length = Math.min(step, f.start() + f.length() - start);
        splits.add(new PartitionedFile(f.partitionValues(), f.filePath(), start, length,
            f.locations(), f.modificationTime(), f.fileSize(), f.otherConstantMetadataColumnValues()));
      }
    }
    splits.sort(Comparator.comparingLong(PartitionedFile::length).reversed());
    return CollectionConverters.asJava(FilePartition$.MODULE$.getFilePartitions(spark,
        CollectionConverters.asScala(splits).toList(), maxSplit)).toArray(new FilePartition[0]);
  }

  /**
   * The scan builder of Python data source {@code source} (registered in the session) over
   * {@code schema}, with {@code options} handed to the source: Spark's own {@code PythonTable}.
   */
  public static ScanBuilder pythonScanBuilder(String source, StructType schema, CaseInsensitiveStringMap options) {
    PythonDataSourceV2 provider = new PythonDataSourceV2();
    provider.setShortName(source);
    return new PythonTable(provider, source, schema).newScanBuilder(options);
  }

  /**
   * What a Python data source's input partition pickled itself as, when that is a plain object (a
   * dict of its state: Pyrolite's {@code ClassDict}), else null. Spark's Python data sources hand the
   * JVM their partitions pickled ({@code PythonInputPartition.pickedPartition}).
   */
  public static java.util.Map<?, ?> pythonPartitionState(InputPartition p) {
    if (!(p instanceof org.apache.spark.sql.execution.datasources.v2.python.PythonInputPartition python)) {
      return null;
    }
    try {
      Object state = new net.razorvine.pickle.Unpickler().loads(python.pickedPartition());
      return state instanceof java.util.Map<?, ?> m ? m : null;
    } catch (net.razorvine.pickle.PickleException | java.io.IOException e) {
      return null;
    }
  }

  /**
   * Spark's own ORC or Parquet reader factory ({@code OrcScan}/{@code ParquetScan}, whose constructors
   * change between releases) for {@code readData} + {@code readPartition} of files holding
   * {@code dataSchema}, with {@code filters} pushed to the reader.
   */
  public static org.apache.spark.sql.connector.read.PartitionReaderFactory fileReaderFactory(
      SparkSession spark, String format, org.apache.hadoop.conf.Configuration conf,
      org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex noFiles, StructType dataSchema,
      StructType readData, StructType readPartition, CaseInsensitiveStringMap options,
      org.apache.spark.sql.sources.Filter[] filters, String table) {
    scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Expression> none =
        CollectionConverters.asScala(new ArrayList<org.apache.spark.sql.catalyst.expressions.Expression>()).toList();
    if (format.equals("orc")) {
      // OrcScan.createReaderFactory's own steps, with the configuration's broadcast shared by every
      // query that reads the same columns with the same configuration (ConfBroadcasts) instead of one per
      // query: the reader writes the schema it reads into that configuration (per file: a file of Hive's
      // _col0 names gets the table's whole schema), so one table, one set of columns
      SQLConf sql = spark.sessionState().conf();
      String scope = "orc " + table + " " + dataSchema.json() + " " + readData.json() + " " + readPartition.json();
      return new org.apache.spark.sql.execution.datasources.v2.orc.OrcPartitionReaderFactory(sql,
          ConfBroadcasts.of(spark.sparkContext(), conf, scope), dataSchema, readData, readPartition, filters,
          scala.Option.empty(), new org.apache.spark.sql.execution.datasources.orc.OrcOptions(
              CollectionConverters.asScala(options.asCaseSensitiveMap()).toMap(scala.$less$colon$less$.MODULE$.refl()),
              sql),
          sql.offHeapColumnVectorEnabled() ? org.apache.spark.memory.MemoryMode.OFF_HEAP
              : org.apache.spark.memory.MemoryMode.ON_HEAP);
    }
    // ParquetScan.createReaderFactory writes the schema it reads into the configuration it is given, then broadcasts
    // that object: in local mode every task reads the broadcast's one object, so two scans of one table sharing the
    // table's configuration (a self join reading other columns on each side) read with the schema of whichever
    // planned last -- a column read as another's values, rows lost. Each scan writes into a copy of its own.
    return SparkRelease.parquetScan(spark, new org.apache.hadoop.conf.Configuration(conf), noFiles, dataSchema,
        readData, readPartition, filters, options, none).createReaderFactory();
  }

  /** {@code TRY_CAST(e AS type)}: NULL where the value does not fit, in ANSI mode too. */
  public static org.apache.spark.sql.catalyst.expressions.Expression tryCast(
      org.apache.spark.sql.catalyst.expressions.Expression e, org.apache.spark.sql.types.DataType type) {
    return new org.apache.spark.sql.catalyst.expressions.Cast(e, type, scala.Option.empty(),
        org.apache.spark.sql.catalyst.expressions.EvalMode$.MODULE$.TRY());
  }

  /** Python data source partition {@code p} with other pickled bytes (the same index). */
  public static InputPartition pythonPartition(InputPartition p, byte[] pickled) {
    return new org.apache.spark.sql.execution.datasources.v2.python.PythonInputPartition(
        ((org.apache.spark.sql.execution.datasources.v2.python.PythonInputPartition) p).index(), pickled);
  }

  /**
   * Store a new bucket spec for table {@code db.name} in the metastore, with the properties
   * {@code properties} makes of its stored ones. Through the Hive client, on the table as stored
   * (with the properties Spark keeps there): the session catalog's {@code alterTable} keeps the bucket
   * spec a table had.
   */
  public static void alterBucketing(SparkSession spark, String db, String name,
                             org.apache.spark.sql.catalyst.catalog.BucketSpec spec,
                             java.util.function.UnaryOperator<java.util.Map<String, String>> properties) {
    org.apache.spark.sql.hive.client.HiveClient client = hiveClient(spark);
    if (client == null) {
      throw new UnsupportedOperationException("bucketkit: changing " + db + "." + name + "'s bucketing needs a Hive "
          + "metastore (this session's catalog is " + spark.sharedState().externalCatalog().unwrapped().getClass()
          .getName() + ")");
    }
    org.apache.spark.sql.catalyst.catalog.CatalogTable raw = client.getTable(db, name);
    java.util.Map<String, String> props = properties.apply(CollectionConverters.asJava(raw.properties()));
    client.alterTable(withBucketing(raw, spec, scala.collection.immutable.Map$.MODULE$.from(
        CollectionConverters.asScala(props))));
  }

  /** The Hive client of {@code spark}'s metastore, or null when the session's catalog is not Hive's. */
  public static org.apache.spark.sql.hive.client.HiveClient hiveClient(SparkSession spark) {
    org.apache.spark.sql.catalyst.catalog.ExternalCatalog external = spark.sharedState().externalCatalog().unwrapped();
    return external instanceof org.apache.spark.sql.hive.HiveExternalCatalog hive ? hive.client() : null;
  }

  /**
   * Whether the Hive metastore will refuse table {@code next}'s columns in place of {@code now}'s, by its own rule
   * ({@code MetaStoreUtils.throwExceptionIfIncompatibleColTypeChange}: a column whose type changes other than to a
   * wider or string type, where {@code hive.metastore.disallow.incompatible.col.type.changes} is on), asked before the
   * ALTER so that the metastore logs no error for a refusal the caller expects. False where Hive's rule cannot be
   * reached (the ALTER then decides).
   */
  public static boolean refusesColumns(org.apache.spark.sql.hive.client.HiveClient client,
                                       org.apache.spark.sql.catalyst.catalog.CatalogTable now,
                                       org.apache.spark.sql.catalyst.catalog.CatalogTable next) {
    if (!Boolean.parseBoolean(client.getConf("hive.metastore.disallow.incompatible.col.type.changes", "true"))) {
      return false;
    }
    try {
      // by name: the jars some Spark releases compile against lack Thrift, which Hive's metastore classes extend
      java.lang.reflect.Method rule = Class.forName("org.apache.hadoop.hive.metastore.MetaStoreUtils").getDeclaredMethod(
          "throwExceptionIfIncompatibleColTypeChange", java.util.List.class, java.util.List.class);
      rule.setAccessible(true);  // package-private in Hive 2.3
      rule.invoke(null, org.apache.spark.sql.hive.client.HiveClientImpl.toHiveTable(now, scala.Option.empty()).getCols(),
          org.apache.spark.sql.hive.client.HiveClientImpl.toHiveTable(next, scala.Option.empty()).getCols());
      return false;
    } catch (java.lang.reflect.InvocationTargetException refused) {
      return refused.getCause() != null && refused.getCause().getClass().getName()
          .equals("org.apache.hadoop.hive.metastore.api.InvalidOperationException");
    } catch (ReflectiveOperationException | RuntimeException unreachable) {
      return false;
    }
  }

  /**
   * Store {@code raw} (a table as the Hive client gives it, with the properties Spark keeps there) as table
   * {@code id}'s whole definition, of type {@code type}: schema, storage and location, bucketing, properties — one
   * {@code alter_table} of the metastore, so each reader resolves the table as it was or as it is now. The session
   * catalog's {@code alterTable} would keep the schema and bucket spec the table had.
   */
  public static void redefine(org.apache.spark.sql.hive.client.HiveClient client,
                              org.apache.spark.sql.catalyst.catalog.CatalogTable raw,
                              org.apache.spark.sql.catalyst.TableIdentifier id,
                              org.apache.spark.sql.catalyst.catalog.CatalogTableType type) {
    client.alterTable(SparkRelease.renamed(raw, id, type, raw.storage()));
  }

  /**
   * A Hive table's metadata as its serde is initialised with it (columns, types, delimiters,
   * escapes, NULL format), the way Spark's own Hive table scan gets it: {@code HiveClientImpl.toHiveTable}
   * then Hive's {@code Table.getMetadata}.
   */
  public static java.util.Properties hiveTableProperties(org.apache.spark.sql.catalyst.catalog.CatalogTable t) {
    return org.apache.spark.sql.hive.client.HiveClientImpl.toHiveTable(t, scala.Option.empty()).getMetadata();
  }

  /** Spark's least number of tasks for a file scan: one per core, or {@code spark.sql.files.minPartitionNum}. */
  public static int minPartitions(SparkSession spark) {
    SQLConf conf = spark.sessionState().conf();
    return conf.filesMinPartitionNum().isDefined()
        ? (Integer) conf.filesMinPartitionNum().get() : spark.leafNodeDefaultParallelism();
  }

  /** {@code scan} in place of {@code exec}'s scan, reporting no key-grouped partitioning and no ordering. */
  public static BatchScanExec withScan(BatchScanExec exec, Scan scan) {
    BatchScanExec out = SparkRelease.batchScan(exec, scan);
    if (exec.logicalLink().isDefined()) {
      out.setLogicalLink(exec.logicalLink().get());
    }
    return out;
  }

  /** {@code t} with another bucket spec and properties, every other field as it was. */
  public static org.apache.spark.sql.catalyst.catalog.CatalogTable withBucketing(org.apache.spark.sql.catalyst.catalog.CatalogTable t, org.apache.spark.sql.catalyst.catalog.BucketSpec spec,
                                          scala.collection.immutable.Map<String, String> properties) {
    return SparkRelease.reshaped(t, t.schema(), scala.Option.apply(spec), properties);
  }

  /** {@code t} located at {@code location}; every other field as it was. */
  public static org.apache.spark.sql.catalyst.catalog.CatalogTable relocated(org.apache.spark.sql.catalyst.catalog.CatalogTable t,
                                                                            java.net.URI location) {
    return SparkRelease.renamed(t, t.identifier(), SparkRelease.storageAt(t.storage(), location));
  }

  /** {@code p} located at {@code location}; every other field as it was. */
  public static org.apache.spark.sql.catalyst.catalog.CatalogTablePartition relocated(
      org.apache.spark.sql.catalyst.catalog.CatalogTablePartition p, java.net.URI location) {
    return new org.apache.spark.sql.catalyst.catalog.CatalogTablePartition(p.spec(),
        SparkRelease.storageAt(p.storage(), location), p.parameters(), p.createTime(), p.lastAccessTime(), p.stats());
  }

  /** {@code t} under the name {@code id}, with these storage properties; every other field as it was. */
  public static org.apache.spark.sql.catalyst.catalog.CatalogTable renamed(org.apache.spark.sql.catalyst.catalog.CatalogTable t,
      org.apache.spark.sql.catalyst.TableIdentifier id, scala.collection.immutable.Map<String, String> storageProperties) {
    return SparkRelease.renamed(t, id, SparkRelease.storageWith(t.storage(), storageProperties));
  }

  /** {@code t} with another schema and bucket spec (a CTAS's table once its query's columns are known). */
  public static org.apache.spark.sql.catalyst.catalog.CatalogTable withSchema(org.apache.spark.sql.catalyst.catalog.CatalogTable t, org.apache.spark.sql.types.StructType schema,
                                        scala.Option<org.apache.spark.sql.catalyst.catalog.BucketSpec> spec) {
    return SparkRelease.reshaped(t, schema, spec, t.properties());
  }

  /**
   * Throws an {@code AnalysisException} with a plain message (its constructors change between
   * releases), which Python sees as {@code pyspark.errors.AnalysisException}. Scala code throws it
   * unchecked; so does this.
   */
  public static RuntimeException analysisError(String message) {
    return SparkCompat.<RuntimeException>unchecked(new org.apache.spark.sql.AnalysisException(message,
        scala.Option.empty(), scala.Option.empty(), scala.Option.empty(), scala.Option.empty(),
        scala.collection.immutable.Map$.MODULE$.empty(), new org.apache.spark.QueryContext[0]));
  }

  /**
   * The error of a read or write that must stop, saying {@code message}: Spark's own {@code SparkRuntimeException} of
   * {@code raise_error} ({@code USER_RAISED_EXCEPTION}), which PySpark raises as {@code
   * pyspark.errors.SparkRuntimeException} with the message (an {@code IllegalStateException} reached a Python user
   * as a raw {@code Py4JJavaError}).
   */
  public static RuntimeException failure(String message, Throwable cause) {
    return new org.apache.spark.SparkRuntimeException("USER_RAISED_EXCEPTION",
        new scala.collection.immutable.Map.Map1<>("errorMessage", message), cause,
        new org.apache.spark.QueryContext[0], "");
  }

  public static RuntimeException failure(String message) {
    return failure(message, null);
  }

  /** Spark's own {@code INVALID_PARTITION_SPEC} error, saying {@code details}, as its v1 commands throw it. */
  public static RuntimeException invalidPartitionSpec(String details) {
    return SparkCompat.<RuntimeException>unchecked(
        org.apache.spark.sql.errors.QueryCompilationErrors.invalidPartitionSpecError(details));
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException unchecked(Throwable t) throws T {
    throw (T) t;
  }

  /**
   * Registers {@code key} as a static SQL setting (once per JVM): Spark then refuses to change it after
   * the application starts — {@code SET} in SQL, the Thrift server and Spark Connect, and
   * {@code spark.conf.set} — with its own "cannot modify a static config" error.
   */
  public static synchronized void registerStatic(String key, String doc) {
    if (!org.apache.spark.sql.internal.SQLConf$.MODULE$.isStaticConfigKey(key)) {
      org.apache.spark.sql.internal.SQLConf$.MODULE$.buildStaticConf(key).doc(doc).version("bucketkit")
          .stringConf().createOptional();
    }
  }

  /**
   * The table an {@code INSERT INTO t REPLACE WHERE cond} or {@code DataFrameWriterV2.overwrite(cond)} writes, as
   * parsed (before its relation is resolved), or null for any other plan: the statement parses differently from
   * one Spark release to the next.
   */
  public static org.apache.spark.sql.catalyst.plans.logical.LogicalPlan replaceWhereTarget(
      org.apache.spark.sql.catalyst.plans.logical.LogicalPlan plan) {
    if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.OverwriteByExpression o
        && !(o.deleteExpr() instanceof org.apache.spark.sql.catalyst.expressions.Literal l
            && Boolean.TRUE.equals(l.value()))) {
      return (org.apache.spark.sql.catalyst.plans.logical.LogicalPlan) o.table();
    }
    return SparkRelease.replaceWhereTable(plan);
  }

  /**
   * Spark's own Hive writer of {@code t}'s files: its serde and output format (a TEXTFILE table's
   * {@code LazySimpleSerDe} and {@code HiveIgnoreKeyTextOutputFormat}), uncompressed, as Spark's
   * {@code InsertIntoHiveTable} sets it up.
   */
  public static org.apache.spark.sql.execution.datasources.FileFormat hiveFileFormat(
      org.apache.spark.sql.catalyst.catalog.CatalogTable t) {
    org.apache.hadoop.hive.ql.metadata.Table hive = org.apache.spark.sql.hive.client.HiveClientImpl.toHiveTable(t,
        scala.Option.empty());
    org.apache.hadoop.hive.ql.plan.TableDesc desc = new org.apache.hadoop.hive.ql.plan.TableDesc(
        hive.getInputFormatClass(), hive.getOutputFormatClass(), hive.getMetadata());
    return new org.apache.spark.sql.hive.execution.HiveFileFormat(new org.apache.hadoop.hive.ql.plan.FileSinkDesc(
        new org.apache.hadoop.fs.Path(t.location()), desc, false));
  }
}
