"""``bucketkit.write``: a Spark DataFrame into a Hive/Trino-compatible bucketed table, switched in whole.

Resolve the target, reconcile the spec, stage, finalize: only staging needs Spark; the other steps
are in :mod:`bucketkit.writing.steps`. The pipeline (docs/writing.md explains each choice):

1. The spec: Hive types from the DataFrame schema (``bucket_types`` may override, e.g.
   ``varchar(20)``); an existing table's spec must match (:class:`SpecMismatchError` names the
   difference).
2. A bucket-id column from only the key columns (Hive's hash, v1 or v2): in the JVM by bucketkit's
   jar when the session has it, else a Spark SQL expression or a scalar Arrow UDF
   (:mod:`bucketkit.spark.hashcol`).
3. One shuffle so that every (partition, bucket) group lands in exactly one task; for an
   unpartitioned table bucket ``b`` is routed to task ``b mod n`` exactly (see
   :func:`routing_keys`), then a sort by (partition, bucket, sorted_by).
4. Spark's own JVM ORC/Parquet writer writes one file per group into the hidden staging directory
   of the table's next version, a hidden sibling of the table directory (``partitionBy`` on the
   partition columns and the bucket id).
5. The driver names the files (``000003_0_<write id>.orc``), adds empty bucket files if asked, and
   commits them with :class:`bucketkit.writing.commit.Transaction`, which switches the whole directory so
   readers see the old table or the new one, catalog updates included
   (:func:`bucketkit.writing.steps.finalize`).
"""

from __future__ import annotations

import functools
import posixpath
import struct
import warnings
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pyarrow.fs as pafs

from bucketkit.writing.commit import LAYOUT_CONF, Transaction, fault_point, layout_setting
from bucketkit.writing.recovery import recover
from bucketkit.errors import (BucketkitError, CommitError, ConcurrentModificationError, InsideLayoutWarning,
                              InvalidArgumentError, TableExistsError, TableNotFoundError)
from bucketkit.io import FileFormat, check_format, resolve_filesystem, spark_uri
from bucketkit.layout.metadata import Naming, SortKey, TableSpec, spelled_as, spelled_keys
from bucketkit.layout.partitions import parse_partition_path, partition_path
from bucketkit.layout.versions import table_root
from bucketkit.spark import catalog
from bucketkit.spark.driver import check_s3_endpoint, default_parallelism, has_extensions, jar_class, refusal
from bucketkit.spark.hashcol import bucket_id_column, jvm_column_class
from bucketkit.spark.types import column
from bucketkit.writing.steps import (BUCKET_COLUMN, MODES, OVERWRITE_SCOPES, STAGED_DATA, Mode, OverwriteScope,
                               PartitionWrite, WriteOptions, WriteResult, WriteTarget, WrittenFile, aborting, finalize,
                               path_target, reconcile, recovered_partitions)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["write", "WriteResult", "WrittenFile", "PartitionWrite", "MODES", "OVERWRITE_SCOPES"]

MAX_BUCKETS = 99999  # Trino's file names carry 5 bucket digits
STAGED_SOURCE = "io.bucketkit.write.StagedBucketSource"  # the JVM writer of staged bucket files


def _names(value: Sequence[str] | str | None, option: str) -> tuple[str, ...]:
    if value is None:
        return ()
    out = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(v, str) and v for v in out):
        raise InvalidArgumentError(f"{option}={value!r}: expected a column name or a list of column names")
    return out


def build_spec(schema: Any, bucketed_by: Sequence[str], bucket_count: int, *, sorted_by: Sequence[Any] = (),
               partitioned_by: Sequence[str] = (), bucketing_version: int = 2, file_format: str = "orc",
               naming: str = "hive", bucket_types: Sequence[str] | Mapping[str, str] | None = None) -> TableSpec:
    """The :class:`TableSpec` a DataFrame with this Spark ``schema`` is written with.

    Checks what only a write needs (the columns exist, the bucket count fits Trino's names);
    :class:`TableSpec` checks the rest (format, naming, bucketing version, types).
    """
    from bucketkit.hashing.hive import check_bucketable
    from bucketkit.spark.types import hive_type_of_spark

    names = [f.name for f in schema.fields]
    bucketed_by, partitioned_by = spelled_as(bucketed_by, names), spelled_as(partitioned_by, names)
    sorted_by = spelled_keys([SortKey(s) if isinstance(s, str) and spelled_as([s], names)[0] in names else s
                              for s in sorted_by], names)  # a column named "user id" is that column, ascending
    if isinstance(bucket_types, Mapping):
        bucket_types = dict(zip(spelled_as(bucket_types, names), bucket_types.values()))
    used = list(bucketed_by) + list(partitioned_by) + [k.column for k in sorted_by]
    missing = [c for c in used if c not in names]
    if missing:
        raise InvalidArgumentError(f"column(s) {missing} not in the DataFrame's columns {names}")
    if BUCKET_COLUMN in names:
        raise InvalidArgumentError(f"the DataFrame has a column named {BUCKET_COLUMN!r}, which bucketkit reserves")
    if len(partitioned_by) >= len(names):
        raise InvalidArgumentError(f"partitioned_by={list(partitioned_by)} leaves no data columns in {names}")
    types = {f.name: hive_type_of_spark(f) for f in schema.fields}
    types.update(_bucket_type_overrides(bucketed_by, bucket_types))
    for c in bucketed_by:
        types[c] = str(check_bucketable(c, types[c]))
    if not isinstance(bucket_count, int) or isinstance(bucket_count, bool):
        raise InvalidArgumentError(f"bucket_count={bucket_count!r}: expected an int")
    if not 1 <= bucket_count <= MAX_BUCKETS:
        raise InvalidArgumentError(f"bucket_count={bucket_count!r}: expected 1..{MAX_BUCKETS} "
                                   "(Trino-compatible file names carry 5 bucket digits)")
    check_format(file_format)  # the data files bucketkit's writer writes (a TEXTFILE table's: Spark SQL's INSERT)
    return TableSpec(
        tuple(bucketed_by), tuple(types[c] for c in bucketed_by), bucket_count, bucketing_version=bucketing_version,
        sorted_by=tuple(sorted_by), partitioned_by=tuple(partitioned_by),
        partition_types=tuple(types[c] for c in partitioned_by),
        columns=tuple((n, types[n]) for n in names if n not in partitioned_by), file_format=file_format,
        naming=naming)


def _bucket_type_overrides(bucketed_by: Sequence[str], bucket_types: Sequence[str] | Mapping[str, str] | None
                           ) -> dict[str, str]:
    """``bucket_types`` (a mapping, or one type per bucket column) as ``{column: Hive type}``."""
    if bucket_types is None:
        return {}
    if not isinstance(bucket_types, Mapping) and len(bucket_types) != len(bucketed_by):
        raise InvalidArgumentError(f"bucket_types={list(bucket_types)}: expected one Hive type per bucket "
                                   f"column {list(bucketed_by)}")
    given = dict(bucket_types) if isinstance(bucket_types, Mapping) else dict(zip(bucketed_by, bucket_types))
    unknown = [c for c in given if c not in bucketed_by]
    if unknown:
        raise InvalidArgumentError(f"bucket_types names {unknown}, which are not bucket columns {list(bucketed_by)}")
    return given


def write(df: DataFrame, bucketed_by: Sequence[str] | str, bucket_count: int, *, path: str | None = None,
          table: str | None = None, sorted_by: Sequence[Any] | None = None,
          partitioned_by: Sequence[str] | str | None = None, bucketing_version: int | None = None,
          file_format: FileFormat | None = None, mode: Mode = "error", create_empty_bucket_files: bool = False,
          naming: Naming = "hive", compression: str | None = None,
          bucket_types: Sequence[str] | Mapping[str, str] | None = None, overwrite_scope: OverwriteScope = "table",
          num_tasks: int | None = None, filesystem: pafs.FileSystem | None = None, layout: str | None = None) -> WriteResult:
    """Write ``df`` as a Hive/Trino-compatible bucketed table: one file per bucket per partition.

    Args:
        df: the rows to write.
        bucketed_by: bucket column(s), in hash order.
        bucket_count: number of buckets (1..99999).
        path: the table directory (local path or URI). Exactly one of ``path`` / ``table``.
        table: a table name in the Spark session catalog (Hive metastore); created as a Hive
            bucketed table (``CLUSTERED BY ... INTO n BUCKETS``) if missing.
        sorted_by: sort keys inside each file: ``"col"``, ``"col DESC"`` or ``("col", "descending")``.
        partitioned_by: Hive partition column(s) (directory levels ``k=v``).
        bucketing_version: 1 (Hive < 3, Spark) or 2 (Hive 3, Trino's default; the default of a new table).
        file_format: ``"orc"`` (the default of a new table) or ``"parquet"``.

            ``sorted_by``, ``partitioned_by``, ``bucketing_version`` and ``file_format`` not given follow the table
            where it exists (as an ``INSERT`` into it does); given and different, an append, a partition overwrite
            or a catalog table's write is a :class:`SpecMismatchError`.
        mode: ``"error"`` (the table must not exist), ``"append"``, ``"overwrite"``, ``"ignore"``
            (do nothing if the table exists).
        create_empty_bucket_files: give every bucket without rows in this write a valid empty
            file, in each partition written (Hive's behaviour); off: no file (Trino's default).
        naming: ``"hive"`` (``000003_0_<write id>.orc``) or ``"legacy-presto"``
            (``<write id>_bucket-00003.orc``).
        compression: codec (``snappy`` default; ORC: none/snappy/zlib/lz4/zstd; Parquet:
            none/snappy/gzip/lz4/zstd/brotli). Hive before 4 cannot read zstd ORC.
        bucket_types: Hive types of bucket columns when they differ from the DataFrame's (e.g.
            ``{"name": "varchar(20)"}``): the type decides the hash.
        overwrite_scope: with ``mode="overwrite"``: ``"table"`` replaces the whole table,
            ``"partitions"`` only the partitions the data has rows for (Hive's ``INSERT OVERWRITE
            ... PARTITION``, Spark's dynamic partition overwrite).
        num_tasks: Spark tasks that write the files (default: ``spark.sql.shuffle.partitions``, at most 4 per
            core of the session's default parallelism; for an unpartitioned table the largest divisor of
            ``bucket_count`` not above that, so every task writes as many buckets).
        filesystem: a pyarrow filesystem for ``path``.
        layout: where the commit keeps the table's versions (docs/writing.md, "Commit protocol and recovery"):
            ``"auto"`` (on a local disk or HDFS beside the table, switched whole, so an engine reading the
            directory sees one version; where the table's parent may not be written, and on S3, GCS and ADLS,
            inside it, published by a pointer and, for ``table=``, by moving the metastore to the version),
            ``"inside"`` (nothing written outside the table's location) or ``"beside"``; default: the session's
            ``spark.bucketkit.commit.layout`` (which SQL INSERTs follow too), else ``"auto"``.

    Returns:
        A :class:`WriteResult` listing per partition and bucket the files written, rows and bytes.

    Raises:
        InvalidArgumentError: a bad option (the message lists the valid values).
        TableExistsError: ``mode="error"`` and the table exists.
        SpecMismatchError: appending (or overwriting partitions) with a different spec.
        ConcurrentModificationError: the table changed during the write; nothing was committed.
    """
    if (path is None) == (table is None):
        raise InvalidArgumentError(f"give exactly one of path= or table=, got path={path!r}, table={table!r}")
    options = WriteOptions(mode, overwrite_scope, compression, create_empty_bucket_files, num_tasks)
    spark = df.sparkSession
    if table is None and filesystem is None:
        check_s3_endpoint(spark, str(path))
    target = _catalog_target(spark, table) if table is not None else path_target(path, filesystem, options.mode)
    df = _widened(df, target, options)
    given = dict(sorted_by=None if sorted_by is None else tuple(sorted_by), bucketing_version=bucketing_version,
                 partitioned_by=None if partitioned_by is None else _names(partitioned_by, "partitioned_by"),
                 file_format=file_format)
    defaults = _table_defaults(target.existing, df.columns)
    spec = build_spec(df.schema, _names(bucketed_by, "bucketed_by"), bucket_count, naming=naming,
                      bucket_types=bucket_types, **{k: d if given[k] is None else given[k] for k, d in defaults.items()})
    codec = options.codec(spec.file_format)
    recovered = _recover(spark, target)
    if table is not None and target.existing is None and options.mode != "overwrite":
        _refuse_leftovers(target, options.mode)
    if target.existing is not None and options.mode == "ignore":
        return WriteResult(str(target.location), target.existing, options.mode, None, table=table, skipped=True,
                           recovered=recovered)
    spec, order = reconcile(spec, target, options)
    if layout is None:
        layout = layout_setting(spark.conf.get(LAYOUT_CONF, None))
    named = {"catalog": table, "metastore": catalog.qualified_name(spark, table)} if table is not None else {}
    tx = Transaction(target.root, spec, mode=options.commit_mode, filesystem=target.filesystem, extra=named,
                     layout=layout)
    staging = tx.begin()
    with aborting(tx):
        write_staged(df.select(*(column(c).alias(c) for c in order)) if order else df, spec,  # the table's names
                     spark_uri(target.filesystem, posixpath.join(staging, STAGED_DATA), location=target.location),
                     compression=codec, num_tasks=options.num_tasks)
        fault_point("after_task_writes")
    done = (functools.partial(_update_catalog, spark, target, spec, options, tx) if table is not None
            else functools.partial(_publish_by_path, spark, target, tx))
    return finalize(tx, options, target, recovered=recovered, on_committed=done,
                    before_commit=functools.partial(_still_located, spark, target) if table is not None else None)


def _still_located(spark: Any, target: WriteTarget) -> None:
    """The catalog table this write began on is still located at the table it is written into: a ``REPLACE
    TABLE ... AS SELECT`` (or ``ALTER TABLE ... SET LOCATION``, or a DROP) meanwhile moved the name elsewhere, and
    committing would put the rows where the table no longer reads them and its partitions into the new table
    pointing there. Asked just before the commit: the write is rolled back, nothing of it committed."""
    if target.existing is None:
        return
    name = target.table
    if not catalog.table_exists(spark, name):
        raise ConcurrentModificationError(f"table {name} was dropped during this write; nothing of the write was "
                                          "committed")
    now = catalog.table_location(spark, name)
    if table_root(now) != table_root(str(target.location)):
        raise ConcurrentModificationError(
            f"table {name} was replaced during this write (REPLACE TABLE, or ALTER TABLE ... SET LOCATION): it is "
            f"located at {now} now, the write began on {target.location}; nothing of the write was committed: run "
            "it again")


def _publish_by_path(spark: Any, target: WriteTarget, tx: Transaction, partitions: list[dict[str, str]]) -> None:
    """A write by path into a table whose versions are published inside it, and whose pointer names the metastore
    table located at its live version (a write by ``table=`` or a SQL INSERT published it there): that table moves
    to the new version too, as a write by ``table=`` moves it, so Hive, Trino and Spark's own reader of it do not
    stay on the version before. Where this session's catalog has no such table located at one of this table's
    versions (another metastore's, or one dropped or moved since), a warning says who still reads the old version."""
    name = tx.metastore_table if tx.inside else None
    if name is None:
        return
    published = spark_uri(tx.fs, tx.published, location=target.location)
    try:
        here = catalog.table_exists(spark, name) and table_root(
            resolve_filesystem(catalog.table_location(spark, name))[1]) == target.root.rstrip("/")
        if here:
            catalog.publish(spark, name, published)
    except BucketkitError:
        raise
    except Exception as exc:  # py4j's and Connect's errors alike
        raise CommitError(f"{target.location}: write {tx.write_id} is committed (bucketkit.scan of {target.root} reads "
                          f"it), but the metastore table {name}, located at this table's previous version, could not be "
                          f"moved to it ({refusal(exc)}); Hive, Trino and Spark's own reader of {name} see the previous "
                          "version until a bucketkit write publishes a later one") from exc
    if not here:
        warnings.warn(f"{target.location}: this table's versions were published to the metastore table {name}, which "
                      "this session's catalog has not located at them: if another metastore has it, its readers still "
                      f"read the version before write {tx.write_id}; write by table= in a session of that metastore",
                      InsideLayoutWarning, stacklevel=4)


def _widened(df: DataFrame, target: WriteTarget, options: WriteOptions) -> DataFrame:
    """``df`` with each column the existing table holds in a wider type cast to it (``int`` into ``bigint``, ``float``
    into ``double``, a decimal into a wider one: :func:`bucketkit.hivetypes.widens`, Spark's ``Cast.canUpCast``), as
    Spark's and Hive's ``INSERT`` put the rows in, where the write must keep the table's spec (see
    :func:`~bucketkit.writing.steps.reconcile`). The rows are hashed as the table's type, which decides their bucket.
    A narrowing is left to ``reconcile`` to refuse, naming both types."""
    from bucketkit.hivetypes import widens
    from bucketkit.spark.types import hive_type_of_spark

    existing = target.existing
    if existing is None or not (target.table or options.mode == "append" or options.overwrite_scope == "partitions"):
        return df
    table_types = {c.lower(): t for c, t in existing.column_types.items()}
    casts = {f.name: table_types[f.name.lower()] for f in df.schema.fields
             if f.name.lower() in table_types and widens(hive_type_of_spark(f), table_types[f.name.lower()])}
    return df.withColumns({n: column(n).cast(t) for n, t in casts.items()}) if casts else df


def _table_defaults(existing: TableSpec | None, columns: Sequence[str]) -> dict[str, Any]:
    """What a write takes for the options it is not given: from a table that exists, as an INSERT into it does, its
    version and format, and its partition and sort columns where the rows have them (else the spec differs, which an
    append refuses and a whole overwrite of a directory may do); else bucketkit's defaults for a new table."""
    if existing is None or existing.hash_family != "hive":
        return dict(sorted_by=(), partitioned_by=(), bucketing_version=2, file_format="orc")

    def has(names) -> bool:  # Spark's column names are case-insensitive
        return {c.lower() for c in columns}.issuperset(c.lower() for c in names)
    return dict(sorted_by=existing.sorted_by if has(k.column for k in existing.sorted_by) else (),
                partitioned_by=existing.partitioned_by if has(existing.partitioned_by) else (),
                bucketing_version=existing.bucketing_version, file_format=existing.file_format)


def _catalog_target(spark: Any, table: str) -> WriteTarget:
    """The target of a write to a catalog table (warns when Spark's own INSERT mis-bucketed it)."""
    catalog.require_metastore(spark, table)
    location = catalog.table_location(spark, table)
    check_s3_endpoint(spark, location)
    fs, root = resolve_filesystem(location)
    loaded = catalog.load_table(spark, table) if catalog.table_exists(spark, table) else None
    existing = loaded.spec if loaded is not None else None
    if existing is not None and existing.bucketing_version == 2:
        foreign = catalog.spark_written_files(loaded)
        if foreign:
            warnings.warn(f"table {table}: {len(foreign)} file(s) such as {foreign[0]} were written by Spark's "
                          "own INSERT, which places rows by the v1 hash although the table says "
                          "bucketing_version=2; Hive and Trino will miss those rows", stacklevel=3)
    return WriteTarget(location, fs, root, existing, table)


def _refuse_leftovers(target: WriteTarget, mode: str) -> None:
    """A catalog table that does not exist is created at its location: refused where that location holds a table's
    files (``DROP TABLE`` of an EXTERNAL table, as ``bucketkit.write(table=)`` creates, keeps them), which the new
    table would take in as its own rows. Spark's ``saveAsTable`` and Trino's ``CREATE TABLE`` refuse a non-empty
    location alike (``LOCATION_ALREADY_EXISTS``)."""
    from bucketkit.layout.metadata import METADATA_FILE, read_spec
    from bucketkit.layout.versions import visible_files

    held = visible_files(target.filesystem, target.root)[:1]
    if not held:
        try:
            read_spec(target.root, target.filesystem)
            held = [METADATA_FILE]
        except TableNotFoundError:
            return
    raise TableExistsError(
        f"table {target.table} is not in the catalog, but its location {target.location} holds a table's files (such "
        f"as {held[0]}; a DROP TABLE of an EXTERNAL table keeps them): mode={mode!r} would make them rows of the new "
        "table. Remove them, or write with mode='overwrite' to replace them")


def _recover(spark: Any, target: WriteTarget) -> tuple[str, ...]:
    """Finish writes whose writer died before this one starts; what was done, for the result."""
    actions = [a for a in recover(target.root, filesystem=target.filesystem) if a.state != "in progress"]
    missing = recovered_partitions(actions, target.table)
    if missing and catalog.table_exists(spark, target.table):
        catalog.add_partitions(spark, target.table, missing, target.location)
    recovered = tuple(map(str, actions))
    if recovered:
        warnings.warn(f"{target}: finished interrupted earlier writes: {'; '.join(recovered)}", stacklevel=3)
    return recovered


def _update_catalog(spark: Any, target: WriteTarget, spec: TableSpec, options: WriteOptions, tx: Transaction,
                    partitions: list[dict[str, str]]) -> None:
    """:func:`_catalog_steps`, run once the write is committed: a metastore that fails them (unreachable, a
    refusal) is a :class:`CommitError` saying the rows are committed and what the metastore's readers see until
    it is updated, never the driver's raw error."""
    try:
        _catalog_steps(spark, target, spec, options, tx, partitions)
    except BucketkitError:
        raise
    except Exception as exc:  # py4j's and Connect's errors alike
        sees = ("the previous version until a bucketkit write into the table publishes a later one (an append of "
                "no rows will do)" if tx.inside else "no table, if it is new, else the partitions the metastore listed "
                "before this write (`MSCK REPAIR TABLE ... SYNC PARTITIONS` brings them in line)")
        raise CommitError(f"table {target.table}: write {tx.write_id} is committed (bucketkit.scan of "
                          f"{target.root} reads it), but the metastore could not be updated after it "
                          f"({refusal(exc)}); Hive, Trino and Spark's own reader see {sees}") from exc


def _catalog_steps(spark: Any, target: WriteTarget, spec: TableSpec, options: WriteOptions, tx: Transaction,
                   partitions: list[dict[str, str]]) -> None:
    """Create the catalog table or register the partitions written (and drop those a table overwrite removed);
    a version committed inside the table (a store without directory renames) is published: the table and
    its partitions move to it (:func:`bucketkit.spark.catalog.publish`)."""
    table = target.table
    if tx.inside:
        published = spark_uri(tx.fs, tx.published, location=target.location)
        if not catalog.table_exists(spark, table):
            catalog.create_table(spark, table, spec, published)
        catalog.publish(spark, table, published)
        return
    if not catalog.table_exists(spark, table):
        catalog.create_table(spark, table, spec, target.location)
    elif options.replaces_table and spec.partitioned_by:
        old = [parse_partition_path(r.partition) for r in spark.sql(f"SHOW PARTITIONS {table}").collect()]
        new = {partition_path(p) for p in partitions}
        catalog.drop_partitions(spark, table, [p for p in old if partition_path(p) not in new])
    catalog.add_partitions(spark, table, partitions, target.location)
    spark.catalog.refreshTable(table)


# -- the Spark side --------------------------------------------------------------------------------
def routing_keys(num_tasks: int) -> list[int]:
    """For every task ``t < num_tasks`` an int whose Spark hash partition among ``num_tasks`` is ``t``.

    Spark's ``repartition(n, col)`` sends a row to ``pmod(murmur3_x86_32(col, seed 42), n)``, and
    for an int column that hash is the standard Murmur3 of its 4 little-endian bytes. Routing
    bucket ``b`` by ``keys[b % n]`` puts it in task ``b % n`` exactly, so n tasks get equal bucket
    counts (hashing the bucket id itself would pile several buckets into some tasks and none into
    others). The keys are per task, not per bucket, so the routing expression has n literals
    whatever the bucket count (one per bucket made 99999 buckets cost a minute of planning).
    """
    import mmh3

    first: dict[int, int] = {}
    value = 0
    while len(first) < num_tasks:
        first.setdefault(mmh3.hash(struct.pack("<i", value), 42, signed=True) % num_tasks, value)
        value += 1
    return [first[t] for t in range(num_tasks)]


def _largest_divisor(n: int, at_most: int) -> int:
    return max(d for d in range(1, min(n, at_most) + 1) if n % d == 0)


#: Hive key types bucketkit's JVM writer hashes itself from a Spark column of the same simpleString; "string"
#: also stands for varchar(n). Others (float, double: Spark folds -0.0; decimals, timestamps, nested) carry the id.
_WRITER_HASHED = frozenset({"boolean", "tinyint", "smallint", "int", "bigint", "string", "date"})


def _writer_hashed_key(spec: TableSpec, out: Any) -> int | None:
    """The data column the JVM writer computes the bucket id from (one key, its Spark type the Hive
    type's), or None: then the rows carry the id as a column."""
    if len(spec.bucketed_by) != 1:
        return None
    hive = spec.bucket_types[0].lower()
    want = "string" if hive.startswith("varchar(") else hive if hive in _WRITER_HASHED else None
    names = [c.lower() for c, _ in spec.columns]
    ordinal = names.index(spec.bucketed_by[0].lower()) if spec.bucketed_by[0].lower() in names else -1
    if want is None or ordinal < 0 or out.schema.fields[ordinal].dataType.simpleString() != want:
        return None
    return ordinal


def write_staged(df: Any, spec: TableSpec, uri: str, *, compression: str, num_tasks: int | None) -> None:
    """Shuffle, sort and write ``df`` with Spark's own writer: one file per (partition, bucket) at ``uri``."""
    from pyspark.sql import functions as F

    parts = list(spec.partitioned_by)
    # "" and NULL share the __HIVE_DEFAULT_PARTITION__ directory; as two sort groups they would make
    # Spark open that directory's file twice.
    part_cols = [F.when(column(c) == "", None).otherwise(column(c)).alias(c) if t.startswith(("string", "varchar", "char"))
                 else column(c) for c, t in zip(parts, spec.partition_types)]
    bucket = bucket_id_column(spec.bucketed_by, spec.bucket_types, spec.bucketing_version, spec.bucket_count,
                              spark=df.sparkSession)
    jar = jvm_column_class(df.sparkSession) is not None
    if jar and not has_extensions(df.sparkSession):
        # A user's own session has none of bucketkit's planner rules: a strategy packs this write's shuffle
        # (io.bucketkit.rules.PackedShuffle; 10M rows into 64 buckets: see benchmarks/RESULTS.md, plain session).
        jar_class(df.sparkSession, "rules.PackedShuffle").install(df.sparkSession._jsparkSession)
    # With bucketkit's jar the bucket id (the JVM's hash) routes each row and is computed again after the
    # shuffle, never a column of the shuffled rows (4 bytes more a row to write, compress and read back;
    # 10M rows: 228 MB shuffled instead of 191 MB). Without it the id may be an Arrow UDF: computed once.
    out = df.select(*[column(c) for c, _ in spec.columns], *part_cols, *([] if jar else [bucket.alias(BUCKET_COLUMN)]))
    key = bucket if jar else F.col(BUCKET_COLUMN)
    # Spark's shuffle partitions, at most 4 tasks a core: a session left at Spark's default of 200 on 2 cores wrote
    # 10M rows into 64 buckets in 64 tasks 1.5x slower than in 8 (each task one file; the rest overhead)
    default = min(int(df.sparkSession.conf.get("spark.sql.shuffle.partitions")),
                  4 * default_parallelism(df.sparkSession))
    if parts:
        out = out.repartition(num_tasks or default, *[column(c) for c in parts], key)
    else:
        n = num_tasks or _largest_divisor(spec.bucket_count, default)
        keys = F.array(*[F.lit(k) for k in routing_keys(n)])
        out = out.repartition(n, F.element_at(keys, key % n + 1))
    hashed = _writer_hashed_key(spec, out) if jar else None
    if jar and hashed is None:
        out = out.withColumn(BUCKET_COLUMN, bucket)
    order = [column(c) for c in parts] + [bucket if hashed is not None else F.col(BUCKET_COLUMN)]
    order += [column(s.column).asc() if s.ascending else column(s.column).desc() for s in spec.sorted_by]
    sort = bool(parts or spec.sorted_by)
    if not jar:  # no bucketkit jar in this session: Spark's partitionBy writer
        (out.sortWithinPartitions(*order).write.mode("error").format(spec.file_format)
         .option("compression", compression).option("maxRecordsPerFile", 0)
         .partitionBy(*parts, BUCKET_COLUMN).save(uri))
        return
    # The SQL INSERT's writer: one open file per bucket of a task, so only partitioned or sorted
    # tables pay for a sort (docs/writing.md, step 4).
    # One key whose Spark type is its Hive type's: the writer hashes it (no bucket id column to project in).
    key = {} if hashed is None else {"keyOrdinal": str(hashed), "bucketVersion": str(spec.bucketing_version),
                                     "bucketType": spec.bucket_types[0]}
    (out.sortWithinPartitions(*order) if sort else out).write.format(STAGED_SOURCE).mode("append").options(
        staging=uri, format=spec.file_format, compression=compression, buckets=str(spec.bucket_count),
        dataColumns=str(len(spec.columns)), partitionColumns=str(len(parts)), sorted=str(sort).lower(), **key).save()
