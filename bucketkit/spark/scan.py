"""``bucketkit.scan``: read a bucketed table with Spark, touching only the files a filter can hit.

Planning is :func:`bucketkit.pruning.plan.plan_scan` (pure Python); this module adds what needs Spark:
SQL predicate strings (parsed by Spark's own parser into the same DNF form, see
:mod:`bucketkit.spark.filters`), catalog tables, and execution with Spark's *native* ORC/Parquet
reader on exactly the selected files. Reading the files natively, rather than through Python, keeps
a full scan at Spark's own speed and a point lookup as fast as reading the matching bucket files by
hand. The whole filter is applied again to the rows
read, since pruning works at file granularity.

Spark has no reader for tables whose partitions are snapshots of several files (a plan with a
:class:`~bucketkit.units.TableKind`; Hive ACID: base + deltas − delete events, original files with
synthetic row ids), so each read unit of such a plan (:class:`bucketkit.units.ReadUnit` with a
source, e.g. :class:`~bucketkit.acid.plan.AcidBucket`) is read with pyarrow inside a Spark task
(:func:`unit_reader`): ``mapInArrow`` over a ``spark.range``, units packed into a few tasks
(:func:`read_units`). Files the kind's engine would refuse (Hive 3: ACID v1) are refused on the
driver, before any task runs (``TableKind.check``; :class:`~bucketkit.errors.AcidStateError`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from bucketkit.acid import plan as acidplan

from bucketkit.pruning import plan as pruning
from bucketkit.errors import ConcurrentModificationError, InvalidArgumentError, TableNotFoundError, ViewError
from bucketkit.pruning.filters import TRUE, normalize
from bucketkit.io import positional_names, spark_uri
from bucketkit.pruning.plan import ScanPlan
from bucketkit.spark import filters as spark_filters
from bucketkit.spark.tasks import SCAN_TASK_BYTES, pack, run_packs, task_count
from bucketkit.spark.types import arrow_schema, column, quoted
from bucketkit.spark.filters import SparkFilters
from bucketkit.spark.catalog import describe_catalog_table, resolve_table, table_from_description
from bucketkit.spark.driver import default_parallelism
from bucketkit.spark.sqlstatus import held
from bucketkit.table import BucketedTable, TableRef, open_table, reference_kind, spec_options_given
from bucketkit.trust import format_of_serde
from bucketkit.units import ReadUnit, conform

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["scan", "plan_scan", "read_plan", "spark_schema", "spark_ddl", "with_columns_from_files", "read_units",
           "unit_schema", "unit_reader", "ROW_ID_DDL"]


# -- schema -------------------------------------------------------------------------------------------
def _ddl_type(hive_type: str) -> str:
    # Spark reads char/varchar columns of files as strings; the length is a write-time constraint.
    return re.sub(r"\b(?:var)?char\s*\(\s*\d+\s*\)", "string", hive_type)


def spark_ddl(table: BucketedTable) -> str:
    """The table's schema as Spark DDL (``"`k` bigint, `s` string, `p` int"``); needs no JVM."""
    spec = table.spec
    if not spec.columns:
        raise InvalidArgumentError(f"{table}: the table's columns are unknown; pass columns={{name: hive_type}}")
    cols = list(spec.columns) + list(zip(spec.partitioned_by, spec.partition_types))
    return ", ".join(f"{quoted(n)} {_ddl_type(t)}" for n, t in cols)


def spark_schema(table: BucketedTable) -> Any:
    """The table's Spark schema: data columns (file order), then partition columns."""
    from pyspark.sql.types import StructType, _parse_datatype_string

    schema = _parse_datatype_string(spark_ddl(table))
    return schema if isinstance(schema, StructType) else StructType([schema])


def with_columns_from_files(table: BucketedTable, plan_files: Sequence[str]) -> BucketedTable:
    """A foreign table opened without ``table_columns=``: its columns taken from a data file's schema."""
    if table.spec.columns:
        return table
    from bucketkit.hivetypes import hive_type_of_arrow

    for f in plan_files:
        schema = acidplan.data_schema(table.filesystem, f, table.spec.file_format)
        names = [fld.name for fld in schema if fld.name not in table.spec.partitioned_by]
        if positional_names(names):
            raise InvalidArgumentError(
                f"{table}: file {f} names its columns {names[:3]}...; pass columns={{name: hive_type}}")
        cols = tuple((fld.name, str(hive_type_of_arrow(fld.type))) for fld in schema if fld.name in names)
        return dataclasses.replace(table, spec=table.spec.with_(columns=cols))
    raise InvalidArgumentError(f"{table}: no data file to take the columns from; pass columns={{name: hive_type}}")


# -- entry points -------------------------------------------------------------------------------------
def plan_and_predicates(spark: Any, table: Any, path: Any, filters: Any, columns: Sequence[str] | None,
          spec_options: dict, write_ids: Any = None, as_of: Any = None,
          **hudi_options: Any) -> tuple[ScanPlan, list[Any]]:
    """(the scan's plan, predicates Spark applies besides it)."""
    if (path is None) == (table is None):
        raise InvalidArgumentError(f"pass exactly one of table= (a table reference) or path= (a directory); "
                                   f"got table={table!r}, path={path!r}")
    bt = open_table(path, **spec_options_given(spec_options)) if path is not None \
        else resolve_table(spark, table, **spec_options)
    if spark is None and spark_filters.is_spark_filter(filters):
        raise InvalidArgumentError(f"filters={filters!r}: a SQL predicate or Column needs Spark; pass spark=")
    dnf, predicates = spark_filters.split(spark, filters, bt.spec)
    plan = pruning.plan_scan(bt, [list(c) for c in dnf] if dnf else None, columns=columns, write_ids=write_ids,
                             as_of=as_of, **hudi_options)
    return plan, predicates


def plan_scan(table: TableRef | None = None, filters: SparkFilters = None, *, columns: Sequence[str] | None = None,
              spark: SparkSession | None = None, path: str | None = None, write_ids: str | None = None,
              as_of: Any = None, query_type: str | None = None, begin: Any = None, end: Any = None,
              **spec_options: Any) -> ScanPlan:
    """What :func:`scan` reads, without reading: partitions, buckets and files, and why.

    Arguments as for :func:`scan`; ``spark`` is needed only for a catalog table name or a SQL
    predicate / Column filter. Returns plain data (print ``.explain()``); only directories are listed.
    """
    return plan_and_predicates(spark, table, path, filters, columns, spec_options, write_ids, as_of,
                               query_type=query_type, begin=begin, end=end)[0]


def scan(spark: SparkSession, table: TableRef | None = None, *, path: str | None = None,
         filters: SparkFilters = None, columns: Sequence[str] | None = None, write_ids: str | None = None,
         row_id: bool = False, as_of: Any = None, query_type: str | None = None, begin: Any = None,
         end: Any = None, **spec_options: Any) -> DataFrame:
    """Read a bucketed table as a Spark DataFrame, reading only the files ``filters`` can hit.

    Args:
        spark: the SparkSession.
        table: a table reference: a directory (``"/data/t"``, ``"./t"``, ``"s3://b/t"``), a
            catalog table name (``"db.t"``) or a BucketedTable (see :func:`bucketkit.table.reference_kind`).
        path: instead of ``table``: a directory, whatever its spelling.
        filters: pyarrow/deltalake-style filters (``[("k", "in", [1, 2])]``, or a list of such
            lists OR-ed together), a SQL predicate string (``"k = 5 AND dt >= '2024-01-01'"``), or
            a Spark Column (applied, never used for pruning).
        columns: columns to return (default: all, data columns then partition columns).
        spec_options: ``bucketed_by``, ``bucket_count``, ``bucketing_version``, ``bucket_types``,
            ``partitioned_by``, ``partition_types``, ``table_columns``, ``file_format``,
            ``hash_family``, ``filesystem``: the spec of a directory without bucketkit metadata
            (see :func:`bucketkit.table.open_table`). Give ``bucketing_version`` (or
            ``hash_family="spark"`` for a Spark ``bucketBy`` table): without it the table is read
            unbucketed, never guessed. A Hive ACID directory needs none of them when unbucketed.
        write_ids: for a Hive ACID table, the snapshot to read: Hive's ValidWriteIdList string
            (``db.table:<high watermark>:<min open>:<open ids>:<aborted ids>``); default: every
            write id found in the directory names is committed.
        row_id: for a full-ACID table, add Hive's ``row__id`` struct<writeid:bigint,bucketid:int,rowid:bigint>.
        as_of: time travel on a table bucketkit writes: a version number, or a time (``datetime``, or an
            ISO string; naive = UTC) -- the version live then (see :func:`bucketkit.history`). Without
            it the live version is read, from where its files stay after later commits: a DataFrame
            planned now reads these rows when it runs, whatever was committed since (for the
            retention period, 7 days by default). On an Apache Hudi table: an instant
            (``"20240418173550988"``), the snapshot Hudi's time travel reads.
        query_type: on an Apache Hudi table (a directory with a ``.hoodie/`` timeline, read with the
            ``bucketkit[hudi]`` extra): ``"snapshot"`` (default: base files merged with their log files),
            ``"read_optimized"`` (base files only) or ``"incremental"`` (the rows the commits after
            ``begin`` up to ``end``, inclusive, wrote; ``end`` None: up to the latest; completion times on
            table versions 8 and 9, as Hudi 1.x reads them). See docs/hudi.md.

    Returns:
        A DataFrame with exactly the rows of the table matching ``filters`` (of a Hive ACID table:
        exactly the rows of its snapshot, as Hive returns them).

    Raises:
        AcidStateError: a Hive ACID file Hive 3 would refuse (ACID v1; the message names it), or
            no base usable for the snapshot.
    """
    if path is None and isinstance(table, str) and reference_kind(table) == "catalog" and spark is not None:
        try:
            described = _described(spark, table)  # None: not in the catalog (resolve_table below says so)
        except ViewError:  # a view is read as Spark SQL reads it: one reader, so one behaviour
            _refuse_options(table, "a view", write_ids, row_id, as_of, query_type, spec_options)
            return _read_through_sql(spark, table, None, filters, columns)
        if described is not None and format_of_serde(described["serde"]) == "text":
            _refuse_options(table, "a Hive TEXTFILE catalog table", write_ids, row_id, as_of, query_type, spec_options)
            return _read_through_sql(spark, table, None, filters, columns)
        if described is not None and not spec_options_given(spec_options):
            name, table = table, table_from_description(described)  # the catalog asked once, as load_table would
            plain = write_ids is None and not row_id and as_of is None and query_type is None and begin is None \
                and end is None
            hold = held(spark, name) if plain else None
            if hold is not None:  # the catalog reads it bucketed: one reader, and GROUP BY / joins on it shuffle-free
                return _read_through_sql(spark, hold.table, table.spec, filters, columns, hold.version)
    for attempt in range(_PLANS):
        plan, predicates = plan_and_predicates(spark, table, path, filters, columns, spec_options, write_ids, as_of,
                                               query_type=query_type, begin=begin, end=end)
        try:
            return read_plan(spark, plan, predicates, row_id=row_id)
        except _FilesVanished:
            if attempt == _PLANS - 1:
                raise
            # vacuum removed the kept version the plan read from between its listing and Spark's: plan again (a
            # live read gets the version live now; as_of= the VersionNotFoundError naming the removal)
    raise AssertionError("unreachable")


#: How many times :func:`scan` plans a read whose version vacuum removed before Spark listed it.
_PLANS = 3


class _FilesVanished(ConcurrentModificationError):
    """Spark's listing of a plan's files found fewer than the plan: something removed them in between."""


def _load(reader: Any, plan: ScanPlan, paths: list[str]) -> DataFrame:
    """``reader.load(paths)``, held to the plan's files: Spark's listing (at load) treats a path it is given that is
    gone as empty (a directory: ``HadoopFSUtils`` ignores a missing root path), so a version vacuum removed between
    the plan's listing and Spark's would read as an empty or partial table, silently. Fewer files listed than the
    plan holds, or a given path gone, raise :class:`_FilesVanished` (a
    :class:`~bucketkit.errors.ConcurrentModificationError`) naming what is gone. A file removed after this is
    Spark's ``FAILED_READ_FILE.FILE_NOT_EXIST`` when the query runs: never a silent part."""
    try:
        df = reader.load(paths)
    except Exception as e:  # noqa: BLE001 - a path gone (PATH_NOT_FOUND; basePath "not found") is this read's to say
        gone = _vanished(plan)
        if gone is None:
            raise
        raise gone from e
    if len(plan.files) > _listed_count(df):  # Spark lists at least the plan's non-empty files unless some vanished
        raise _vanished(plan) or _FilesVanished(
            f"table {plan.table}: files of the plan were gone when Spark listed them: the table was overwritten "
            "while it was read; run the read again")
    return df


def _listed_count(df: DataFrame) -> int:
    """How many files Spark's listing of ``df``'s paths found (the JVM's count; a Connect client's list)."""
    jdf = getattr(df, "_jdf", None)
    return len(jdf.inputFiles()) if jdf is not None else len(df.inputFiles())


def _vanished(plan: ScanPlan) -> _FilesVanished | None:
    """The error for a plan whose kept version (the directory its files were listed in) is gone, or None."""
    from bucketkit.layout.versions import exists

    if plan.root and plan.root != plan.table.location and not exists(plan.table.filesystem, plan.root):
        return _FilesVanished(f"table {plan.table}: the version this read was planned on ({plan.root}) was removed "
                              "by vacuum or the retention period before Spark listed its files; plan the read again")
    return None


def _described(spark: Any, name: str) -> dict | None:
    """:func:`~bucketkit.spark.catalog.describe_catalog_table`, or None when ``name`` is not in the catalog."""
    try:
        return describe_catalog_table(spark, name)
    except TableNotFoundError:
        return None


def _refuse_options(table: str, what: str, write_ids: Any, row_id: bool, as_of: Any, query_type: Any,
                    spec_options: dict) -> None:
    """Refuse the options of bucketkit's own reads for a catalog name read through Spark SQL (``what`` it is)."""
    if as_of is not None:
        raise InvalidArgumentError(f"as_of={as_of!r}: {table!r} is {what}, read through Spark SQL; bucketkit keeps "
                                   "no versions of it")
    given = {k: v for k, v in (("write_ids", write_ids), ("row_id", row_id or None), ("query_type", query_type))
             if v is not None}
    given.update(spec_options_given(spec_options))
    if given:
        raise InvalidArgumentError(f"table {table!r} is {what} (not ACID, not Hudi, its spec from the catalog): "
                                   f"{', '.join(sorted(given))} do not apply")


def _read_through_sql(spark: Any, table: str, spec: Any, filters: Any, columns: Sequence[str] | None,
                      version: int | None = None) -> DataFrame:
    """A catalog table read as Spark SQL reads it, through bucketkit's catalog: one reader for SQL and
    :func:`scan`, so one behaviour. A Hive TEXTFILE table's files are read by its own serde; a table the
    catalog reads bucketed reports its buckets to Spark (a ``groupBy`` or join on the bucket columns
    does not shuffle) and is pruned by ``filters`` (docs/sql.md). ``version``: the kept version read
    (``VERSION AS OF``), so that the DataFrame reads the rows of now whatever is committed later."""
    reader = spark.read if version is None else spark.read.option("versionAsOf", str(version))
    df = reader.table(table)
    if spec is None:  # a TEXTFILE table (no bucketkit spec): SQL text or a Column as given, tuples as they are
        condition = filters if filters is None or spark_filters.is_spark_filter(filters) \
            else spark_filters.to_column(normalize(filters))
        predicates = [] if condition is None else [condition]
    else:  # SQL text or a Column as given; tuples with literals fitted to the column types, as a bucketkit read does
        dnf, predicates = spark_filters.split(spark, filters, spec)
        if dnf and dnf != TRUE and not predicates:
            predicates = [spark_filters.residual_predicate(dnf, spec)]
    for predicate in predicates:
        df = df.where(predicate)
    return df.select(*columns) if columns is not None else df


def read_plan(spark: SparkSession, plan: ScanPlan, predicates: Sequence[Any] = (), *,
              row_id: bool = False) -> DataFrame:
    """Execute a :class:`~bucketkit.pruning.plan.ScanPlan` with Spark's native reader (a plan of a table
    kind, e.g. Hive ACID: its units packed into a task per core, see :func:`read_units`).

    ``plan.residual`` and every extra predicate (SQL string or Column) are applied to the rows read.
    """
    if "row__id" in (plan.columns or ()) and not row_id:
        raise InvalidArgumentError(f"columns={list(plan.columns)}: row__id is Hive's ACID row identity; pass row_id=True "
                                   f"(full-ACID tables only)")
    refused = row_id and plan.row_id_refused()
    if refused:
        raise InvalidArgumentError(f"row_id=True: {refused}")
    bt = with_columns_from_files(plan.table, plan.files)
    spec = bt.spec
    if plan.kind is not None:
        df = read_units(spark, plan, bt, row_id=row_id)
    elif not plan.files:
        df = spark.createDataFrame([], spark_schema(bt))
    else:
        reader = spark.read.format(spec.file_format).schema(spark_ddl(bt))
        if spec.partitioned_by:
            reader = reader.option("basePath", spark_uri(bt.filesystem, plan.root or bt.location))
        df = _rows_checked(spark, _load(reader, plan, _paths(plan)), plan, bt)
    if plan.residual:
        df = df.where(spark_filters.residual_predicate(plan.residual, spec))
    for predicate in predicates:
        df = df.where(predicate)
    if plan.columns is not None:
        df = df.select(*[column(c) for c in plan.columns])
    return df


def _rows_checked(spark: SparkSession, df: DataFrame, plan: ScanPlan, bt: BucketedTable) -> DataFrame:
    """``df`` (a pruned read of Hive-bucketed files) with every row's bucket checked against its file's, as the
    SQL catalog checks it (``io.bucketkit.read.BucketReadCheck``; Trino's ``hive.validate-bucketing``): files
    named as buckets whose rows were never hashed fail the read naming the file, never a pruned read missing
    rows silently. Partitions whose files a bucketkit commit recorded (``plan.placement``, vouched) are not
    checked. Files are told by name (a name two partitions give different buckets is not checked)."""
    from pyspark.sql import functions as F

    from bucketkit.spark.driver import jar_class
    from bucketkit.spark.hashcol import bucket_id_column

    spec = bt.spec
    if not plan.is_pruned or plan.unbucketed or plan.placement is None or not plan.placement.checked:
        return df  # nothing selected by the hash, or every file read is one bucketkit placed
    by_name: dict[str, int | None] = {}
    for part in plan.partitions:
        for bucket, files in ([] if part.vouched else part.bucket_files.items()):
            for f in files:
                name = f.rsplit("/", 1)[-1]
                by_name[name] = bucket if by_name.get(name, bucket) == bucket else None
    checked = {name: b for name, b in sorted(by_name.items()) if b is not None}
    if not checked:
        return df
    cls = jar_class(spark, "read.FileBucketCheck")
    if cls is not None:  # the file's bucket looked up once per file, in the JVM (a row: its hash and a comparison);
        # one py4j call: lists as JSON (a list handed to py4j is a round trip an element)
        from pyspark.sql.classic.dataframe import DataFrame

        return DataFrame(cls.where(df._jdf, json.dumps(list(spec.bucketed_by)), json.dumps(list(spec.bucket_types)),
                                   spec.bucketing_version, spec.bucket_count, json.dumps(list(checked)),
                                   json.dumps(list(checked.values())), str(bt)), spark)
    keys = [column(c) for c in spec.bucketed_by]
    row_bucket = bucket_id_column(keys, spec.bucket_types, spec.bucketing_version, spec.bucket_count, spark=spark)
    # the file name: substring_index is linear; a regex anchored at the end (([^/]*)$) backtracks over the
    # whole path at every start position, which cost 20 us a row (a 156k-row bucket: 3 s of a 0.1 s read)
    name = F.substring_index(F.input_file_name(), "/", -1)
    buckets = set(checked.values())
    if len(buckets) == 1 and len(checked) == len(by_name) and not any(p.vouched for p in plan.partitions):
        file_bucket = F.lit(buckets.pop())  # every file read is checked, all of one bucket: no lookup a row
    else:
        file_bucket = F.element_at(F.create_map(*[x for n, b in checked.items() for x in (F.lit(n), F.lit(b))]), name)
    message = F.concat(
        F.lit("bucketkit: "), F.input_file_name(), F.lit(f" (table {bt}, bucket "), file_bucket.cast("string"),
        F.lit(f" of {spec.bucket_count} by its name) holds a row whose key belongs in bucket "),
        row_bucket.cast("string"), F.lit(f" (Hive bucketing v{spec.bucketing_version}): the files are not placed "
                                         "as the table's metadata says, so a pruned read would miss rows. Check it "
                                         "with `bucketkit validate`"))
    return df.where(F.when(file_bucket.isNotNull() & (row_bucket != file_bucket), F.raise_error(message))
                    .otherwise(F.lit(True)))


def _paths(plan: ScanPlan) -> list[str]:
    """What to hand Spark's reader: a directory wherever every bucket is read (Spark's own native
    listing, which skips zero-byte ORC files itself) and the directory holds no file the plan lacks, else the
    selected non-empty files."""
    bt, n = plan.table, plan.table.spec.bucket_count
    unplaced = any(-1 in p.bucket_files for p in plan.partitions)  # files of no bucket: named one by one
    if not plan.is_pruned and not unplaced and plan.exact:
        return [spark_uri(bt.filesystem, plan.root or bt.location)]
    paths = []
    for p in plan.partitions:
        whole = len(p.bucket_files) == n
        paths.extend([spark_uri(bt.filesystem, f) for f in ([p.path] if whole else p.files)])
    return paths


# -- Hive ACID plans: (partition, bucket) units read in a few Spark tasks -----------------------------------
#: Hive's ``ROW__ID`` as Spark sees it (``row__id``, the name Hive's Spark integrations use).
ROW_ID_DDL = "struct<writeid:bigint,bucketid:int,rowid:bigint>"
def unit_schema(table: BucketedTable, row_id: bool) -> Any:
    """The Spark schema of a read of units: the table's columns, then ``row__id`` on request."""
    from pyspark.sql.types import StructField, _parse_datatype_string

    schema = spark_schema(table)
    if row_id:
        schema = schema.add(StructField("row__id", _parse_datatype_string(ROW_ID_DDL), True))
    return schema


def unit_reader(table: BucketedTable, target: Any, row_id: bool = False) -> Any:
    """``read(unit) -> Iterator[pa.RecordBatch]``: a picklable reader of one read unit
    (:class:`bucketkit.units.ReadUnit`) as ``target`` (an Arrow schema: the table's columns, then
    ``row__id`` on request); what both ``scan`` and the ``bucketkit`` data source run in their tasks."""
    fs, spec = table.filesystem, table.spec
    names = [n for n, _ in spec.columns]
    fmt = spec.file_format

    def read(unit: ReadUnit) -> Iterator[Any]:
        if unit.empty:
            return
        try:
            data = unit.read(fs, fmt, row_id=row_id, table=str(table))
        except FileNotFoundError:
            raise unit.vanished(str(table)) from None
        yield from conform(data, target, names, spec.partitioned_by, unit.values).to_batches(65536)

    return read


def _typed_otherwise(table: BucketedTable, path: str, target: Any) -> bool:
    """Whether a column of data file ``path`` has another type than the table's schema ``target`` gives it: a Hudi
    table's partition field kept as a number in its files and typed string by Hudi's schema (a timestamp-based key
    generator), which Spark's Parquet reader refuses (``PARQUET_COLUMN_DATA_TYPE_MISMATCH``) and bucketkit's unit
    reader converts as hudi-rs reads it."""
    from bucketkit.io import read_schema

    found = read_schema(table.filesystem, path, table.spec.file_format)
    want = {f.name.lower(): f.type for f in target}
    return any(f.name.lower() in want and not _same_kind(f.type, want[f.name.lower()]) for f in found)


def _same_kind(found: Any, want: Any) -> bool:
    """Whether Spark reads a file column of Arrow type ``found`` as ``want`` (strings and timestamps by family:
    large/view strings and timestamp units are one Spark type)."""
    import pyarrow.types as pt

    if pt.is_string(want) or pt.is_large_string(want):
        return pt.is_string(found) or pt.is_large_string(found) or pt.is_string_view(found) or pt.is_dictionary(found)
    if pt.is_timestamp(want):
        return pt.is_timestamp(found) or pt.is_integer(found)  # INT96 / legacy units: Spark reads them
    if pt.is_integer(want) or pt.is_floating(want) or pt.is_boolean(want) or pt.is_date(want):
        return found == want or (pt.is_integer(found) and pt.is_integer(want) and found.bit_width <= want.bit_width)
    return True  # nested and decimal columns: as Spark's reader decides


def read_units(spark: SparkSession, plan: ScanPlan, table: BucketedTable, *, row_id: bool = False) -> DataFrame:
    """The rows of a plan's units (a table kind's snapshot) as a DataFrame (filters are the caller's to apply;
    ``row_id`` is the caller's to have checked: :meth:`~bucketkit.pruning.plan.ScanPlan.row_id_refused`)."""
    plan.kind.check(table.filesystem, plan)
    schema = unit_schema(table, row_id)
    units = plan.units()
    if not units:
        return spark.createDataFrame([], schema)
    target = arrow_schema(schema)
    read = unit_reader(table, target, row_id)
    plain, merged = [], []  # units that are one file as written (a Hudi slice without log files), the others
    for u in units:
        path = None if row_id else u.plain_file
        if path is not None:
            plain.append(path)
        else:
            merged.append(u)
    if plain and _typed_otherwise(table, plain[0], target):  # Spark's reader would refuse the file's own types
        plain, merged = [], units
    frames = []
    if plain:  # Spark's own reader
        frames.append(spark.read.format(table.spec.file_format).schema(spark_ddl(table))
                      .load([spark_uri(table.filesystem, f) for f in plain]))
    if merged:
        tasks = task_count(len(merged), sum(u.size for u in merged), default_parallelism(spark), SCAN_TASK_BYTES)
        frames.append(run_packs(spark, pack(merged, [1] * len(merged), tasks), read, schema))
    return frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
