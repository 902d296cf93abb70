"""Hive bucketed tables in the Spark session catalog: read their spec, create them, add partitions.

A table created here is a plain Hive bucketed table (``CLUSTERED BY ... [SORTED BY ...] INTO n
BUCKETS STORED AS ORC|PARQUET LOCATION ...`` with ``TBLPROPERTIES ('bucketing_version'=...)``), so
Spark SQL, Hive and Trino sharing the metastore all see it. It is external (its files belong to
bucketkit's commit protocol, which must be able to stage and move them) and carries the property
``bucketkit.managed=true``.

Spark's own ``INSERT`` into a Hive bucketed table always places rows by the v1 hash, whatever
``bucketing_version`` says. :func:`spark_written_files` finds the files such inserts leave (named
``<bucket>_0_part-<task>-<uuid>_<bucket>.c000...``), so writers and readers can refuse or warn.
"""

from __future__ import annotations

import dataclasses

import json
import posixpath
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from bucketkit.acid.plan import UNBUCKETED, transactional_kind
from bucketkit.errors import BucketkitError, InvalidArgumentError, LayoutError, TableNotFoundError, ViewError
from bucketkit.io import FILE_FORMATS, hadoop_to_uri, resolve_filesystem
from bucketkit.layout.metadata import METADATA_FILE, TableSpec, read_spec, spelled_as
from bucketkit.layout.naming import is_spark_hive_insert
from bucketkit.layout.partitions import DEFAULT_PARTITION, partition_path
from bucketkit.spark.driver import ServerError, call, check_s3_endpoint, is_connect, jar_class
from bucketkit.spark.types import quoted
from bucketkit.table import BucketedTable, TableRef, open_table, reference_kind, spec_options_given
from bucketkit.trust import LAYOUT_FIELDS, catalog_verdict, record_disagreement

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["describe_with_py4j", "resolve_table", "load_table", "describe_catalog_table", "table_from_description", "create_table", "add_partitions", "drop_partitions", "table_exists",
           "table_location", "require_metastore", "spark_written_files", "MANAGED_PROPERTY"]

MANAGED_PROPERTY = "bucketkit.managed"


SESSION_CATALOG = "spark_catalog"  # the session catalog's own name, as a table name's first part may give it


def name_parts(name: str) -> list[str]:
    """``db.t`` -> ``["db", "t"]`` as Spark SQL splits a table name: dots inside backticks are the name's own, a
    doubled backtick is one; a leading ``spark_catalog`` (the session catalog, :data:`SESSION_CATALOG`) is dropped."""
    parts, current, quoting, i = [], [], False, 0
    while i < len(name):
        ch = name[i]
        if ch == "`" and quoting and name[i + 1:i + 2] == "`":
            current.append("`")
            i += 1
        elif ch == "`":
            quoting = not quoting
        elif ch == "." and not quoting:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts[1:] if len(parts) == 3 and parts[0].lower() == SESSION_CATALOG else parts


def _quote_name(name: str) -> str:
    """``db.t`` -> ```db`.`t```; each part quoted so odd names survive."""
    return ".".join(quoted(p) for p in name_parts(name))


def qualified_name(spark: Any, name: str) -> str:
    """``t`` -> ```db`.`t``` (the session's current database), ``db.t`` -> ```db`.`t```: a name that names the same
    table in every session of the metastore."""
    parts = name_parts(name)
    return ".".join(quoted(p) for p in ([spark.catalog.currentDatabase()] if len(parts) == 1 else []) + parts)


def _literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _catalog_table(spark: Any, name: str) -> Any:
    jvm = spark.sparkContext._jvm
    parts = name_parts(name)
    ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier.apply(parts[-1]) if len(parts) == 1 else \
        jvm.org.apache.spark.sql.catalyst.TableIdentifier(parts[-1], jvm.scala.Some(parts[-2]))
    return spark._jsparkSession.sessionState().catalog().getTableMetadata(ident)


def table_properties(spark: Any, catalog_table: Any) -> dict[str, str]:
    """A catalog table's properties (``TBLPROPERTIES``), from its JVM ``CatalogTable``."""
    return dict(spark.sparkContext._jvm.scala.jdk.javaapi.CollectionConverters.asJava(catalog_table.properties()))


def table_exists(spark: Any, name: str) -> bool:
    """Whether ``name`` (``table`` or ``db.table``) is in the session catalog."""
    return bool(spark.catalog.tableExists(name))


def _seq(scala_seq: Any) -> list[str]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def require_metastore(spark: Any, name: str) -> None:
    """Refuse, before anything is written, to create table ``name`` in a session without a Hive metastore: Spark's
    in-memory catalog cannot hold a Hive bucketed table (Spark refuses ``CREATE Hive TABLE`` there), so the rows
    would be committed under its warehouse with no table to read them by.

    Raises:
        InvalidArgumentError: the table does not exist and the session's catalog is not Hive's.
    """
    impl = spark.conf.get("spark.sql.catalogImplementation", "in-memory")
    if impl != "hive" and not table_exists(spark, name):
        raise InvalidArgumentError(
            f"table {name}: not in the session catalog, and this session cannot create it as a Hive bucketed table "
            f"(spark.sql.catalogImplementation={impl!r}; Spark creates Hive tables with 'hive' only): start the "
            "session with SparkSession.builder.enableHiveSupport() or bucketkit.get_session(), or write by path=")


def view_error(spark: Any, name: str) -> ViewError | None:
    """The error for a catalog name that is a view (Spark's ``tableExists`` is true of views, temporary or not,
    which have no files): asked where the catalog's answer about a table failed, so a table costs nothing more."""
    try:
        kind = spark.catalog.getTable(name).tableType
    except Exception:  # noqa: BLE001 - not in the catalog at all: the caller's own error says so
        return None
    if kind not in ("VIEW", "TEMPORARY"):
        return None
    return ViewError(f"{name!r} is a {'temporary ' if kind == 'TEMPORARY' else ''}view, not a table: it has no files "
                     "of its own for bucketkit to plan, read or write; bucketkit.scan reads it as Spark SQL does, "
                     f"spark.table({name!r}) too")


def _refusing_views(spark: Any, name: str, fn: Any) -> Any:
    """``fn()``, whose failure on a view is :func:`view_error`'s; bucketkit's own errors pass as they are, but for
    a Connect server's refusal (:class:`~bucketkit.spark.driver.ServerError`)."""
    try:
        return fn()
    except Exception as exc:  # py4j's and Connect's errors, as pyspark converts them
        if isinstance(exc, BucketkitError) and not isinstance(exc, ServerError):
            raise
        view = view_error(spark, name)
        if view is not None:
            raise view from None
        raise


def _existing_database(spark: Any, name: str) -> str:
    """The database table ``name`` is of (the session's current one for a bare name), refused where it does not
    exist (Spark's error would be its AnalysisException)."""
    parts = name_parts(name)
    db = parts[-2] if len(parts) > 1 else spark.catalog.currentDatabase()
    if not spark.catalog.databaseExists(db):
        raise TableNotFoundError(f"table {name}: database {db!r} does not exist; create it first (CREATE DATABASE "
                                 f"{quoted(db)}), or name a table of a database that does")
    return db


def table_location(spark: Any, name: str) -> str:
    """Where the catalog keeps (or would keep) ``name``'s files, as a URI.

    Raises:
        ViewError: ``name`` is a view; TableNotFoundError: its database does not exist.
    """
    exists = table_exists(spark, name)
    db = None if exists else _existing_database(spark, name)
    if is_connect(spark):
        return hadoop_to_uri(_refusing_views(spark, name, lambda: call(spark, "bucketkit_table_path", name)[0]))
    if exists:
        return hadoop_to_uri(_refusing_views(spark, name, lambda: _catalog_table(spark, name).location().toString()))
    jvm = spark.sparkContext._jvm
    ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier(name_parts(name)[-1], jvm.scala.Some(db))
    return hadoop_to_uri(spark._jsparkSession.sessionState().catalog().defaultTablePath(ident).toString())


def resolve_table(spark: SparkSession | None, ref: TableRef, *, reads_files: bool = True,
                  **spec_options: Any) -> BucketedTable:
    """The one resolver of a table reference: a BucketedTable, a directory or a catalog table name.

    Which one is read off the reference (:func:`bucketkit.table.reference_kind`), never guessed
    from the local disk. ``spec_options`` (``bucketed_by=``, ``bucketing_version=``, ...) describe
    a directory without bucketkit metadata (see :func:`bucketkit.table.open_table`); a catalog
    table's spec comes from the catalog, and a BucketedTable's from itself.

    ``reads_files=False`` (history, vacuum: the caller reads no data file) also resolves a catalog TEXTFILE
    table, whose files only Spark SQL reads.

    Raises:
        InvalidArgumentError: an unreadable reference, or spec options for a catalog table or a
            BucketedTable; TableNotFoundError: no such directory or catalog table.
    """
    kind = reference_kind(ref)
    given = spec_options_given(spec_options)
    if kind == "path":
        if spark is not None:
            check_s3_endpoint(spark, str(ref))
        return open_table(ref, **given)
    if given:
        what = "catalog table" if kind == "catalog" else "BucketedTable"
        raise InvalidArgumentError(f"table {str(ref)!r} is a {what}, which carries its own spec; "
                                   f"{', '.join(sorted(given))} apply only to a directory")
    if kind == "table":
        return ref  # type: ignore[return-value]
    if spark is None:
        raise InvalidArgumentError(f"table {ref!r} is a catalog table name, which needs a SparkSession "
                                   f"(pass spark=); for a directory write './{ref}'")
    try:
        return load_table(spark, ref, reads_files=reads_files)  # type: ignore[arg-type]
    except TableNotFoundError as exc:
        raise TableNotFoundError(f"{exc}; for a directory of that name write './{ref}'") from None


def _check_partition_locations(spark: Any, ct: Any, name: str, *, acid: bool = False, parts: Any = None) -> None:
    """Refuse a partitioned table the catalog keeps a partition of outside Hive's default place.

    bucketkit's readers and writers find a table's partitions as ``k=v`` directories under its location
    (Hive's default layout, what bucketkit, Hive and Spark write). A partition the catalog keeps elsewhere
    (``ALTER TABLE ... ADD PARTITION ... LOCATION``) would be missed by a read (a partial result where
    Spark SQL returns its rows) and written beside by a write; Spark SQL (with bucketkit's catalog) reads
    such a table whole.

    Raises:
        LayoutError: a partition's location is not ``<table location>/<k=v path>``, naming both.
    """
    _refuse_misplaced(name, misplaced_partition(spark, ct, parts=parts), acid=acid)


def _is_acid(description: Mapping[str, Any]) -> bool:
    return transactional_kind(dict(description["properties"])) is not None


def _refuse_misplaced(name: str, misplaced: Any, *, acid: bool = False) -> None:
    """Raise :func:`_check_partition_locations`'s error for :func:`misplaced_partition`'s answer, if any (of a Hive
    ACID table: the words Spark SQL refuses it with, ``CatalogPartitions.acidRefusal``: no reader of bucketkit's
    finds that partition's snapshot)."""
    if misplaced is not None and acid:
        where, actual, expected, root = misplaced
        raise LayoutError(
            f"bucketkit: Hive ACID table {name}: partition {where} is kept at {actual}, outside the table's directory "
            f"({expected} expected); bucketkit's ACID reader finds a snapshot's partitions as k=v directories under "
            f"{root}, so it would miss its rows (and Spark's own reader reads no rows of a Hive ACID table). Move the "
            f"partition's directory there and point the metastore at it (ALTER TABLE ... PARTITION (...) SET LOCATION)")
    if misplaced is not None:
        where, actual, expected, root = misplaced
        raise LayoutError(
            f"table {name!r}: partition {where} is kept "
            f"at {actual}, outside the table's directory ({expected} expected); bucketkit's "
            f"Python readers and writers find partitions as k=v directories under {root}, so they "
            f"would miss its rows. Read the table with Spark SQL (bucketkit's catalog reads every partition "
            f"where the metastore keeps it), or move the partition under the table's directory")


def _metastore_partitions(spark: Any, ct: Any) -> Any:
    """The partitions the metastore lists of catalog table ``ct`` (a Scala ``Seq[CatalogTablePartition]``), asked
    once over py4j (the JVM's ``TablePartition.listed``)."""
    ident = ct.identifier()
    return spark._jsparkSession.sessionState().catalog().externalCatalog().listPartitions(
        ident.database().get(), ident.table(), spark.sparkContext._jvm.scala.Option.empty())


def misplaced_partition(spark: Any, ct: Any, *, jar: bool = True, parts: Any = None) -> tuple[str, str, str, str] | None:
    """The first partition of catalog table ``ct`` kept outside ``<location>/<k=v path>``: (``k=v/...``,
    its location, the expected location, the table's location), or None. One call into bucketkit's jar
    (``io.bucketkit.spark.CatalogPartitions``) where the session has it; else the same rule here, about
    ten py4j calls a partition (``jar=False``: this rule, which tests hold equal to the jar's; ``parts``: over the
    partitions :func:`_metastore_partitions` listed already)."""
    if ct.partitionColumnNames().isEmpty():
        return None
    jvm = spark.sparkContext._jvm
    jar_rule = jar_class(spark, "spark.CatalogPartitions") if jar and parts is None else None
    if jar_rule is not None:
        found = jar_rule.misplaced(spark._jsparkSession, ct)
        return None if found is None else tuple(found)
    parts = _metastore_partitions(spark, ct) if parts is None else parts
    root = jvm.org.apache.hadoop.fs.Path(ct.location())
    utils = jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
    for i in range(parts.size()):
        part = parts.apply(i)
        expected = utils.generatePartitionPath(part.spec(), ct.partitionColumnNames(), root).toUri()
        actual = jvm.org.apache.hadoop.fs.Path(part.location()).toUri()
        if actual.getPath().rstrip("/") != expected.getPath().rstrip("/") or (
                actual.getScheme() and expected.getScheme() and actual.getScheme() != expected.getScheme()):
            spec = dict(jvm.scala.jdk.javaapi.CollectionConverters.asJava(part.spec()))
            where = "/".join(f"{c}={spec.get(c)}" for c in _seq(ct.partitionColumnNames()))
            return where, actual.toString(), expected.toString(), root.toString()
    return None


def describe_catalog_table(spark: SparkSession, name: str) -> dict[str, Any]:
    """A session catalog table's metadata as plain data (:func:`table_from_description` reads it).

    The JVM catalog sends the same description of a Hive ACID table to the ``bucketkit`` data source
    (``io.bucketkit.acid.AcidSnapshotTable.describe``); tests/test_sql_acid.py holds the two equal.

    Raises:
        TableNotFoundError: no such table; ViewError: a view.
        LayoutError: a partition kept outside the table's directory (bucketkit's Python readers would miss it).
    """
    if is_connect(spark):  # the JVM's description (AcidSnapshotTable.describe), held equal to this one by tests
        if not table_exists(spark, name):
            raise TableNotFoundError(f"table {name!r} is not in the session catalog")
        d = json.loads(_refusing_views(spark, name, lambda: call(spark, "bucketkit_describe", name)[0]))
        _refuse_misplaced(name, d.pop("misplaced_partition"), acid=_is_acid(d))
        return d
    calls = jar_class(spark, "spark.DriverCalls")
    if calls is not None:  # bucketkit's jar on the driver: the JVM's description in one py4j call, not ~200
        try:
            d = json.loads(_refusing_views(spark, name, lambda: calls.describe(spark._jsparkSession, name)))
        except ViewError:
            raise
        except Exception:  # py4j's error, as pyspark converts it: a missing table is bucketkit's error
            if not table_exists(spark, name):
                raise TableNotFoundError(f"table {name!r} is not in the session catalog") from None
            raise
        _refuse_misplaced(name, d.pop("misplaced_partition"), acid=_is_acid(d))
        return d
    return _refusing_views(spark, name, lambda: describe_with_py4j(spark, name))


def describe_with_py4j(spark: SparkSession, name: str) -> dict[str, Any]:
    """:func:`describe_catalog_table` built in Python from the JVM's ``CatalogTable`` over py4j, for a driver
    without bucketkit's jar (tests hold it equal to the JVM's ``DriverCalls.describe``)."""
    if not table_exists(spark, name):
        raise TableNotFoundError(f"table {name!r} is not in the session catalog")
    ct = _catalog_table(spark, name)
    properties = table_properties(spark, ct)
    parts = None if ct.partitionColumnNames().isEmpty() else _metastore_partitions(spark, ct)
    _check_partition_locations(spark, ct, name, acid=transactional_kind(properties) is not None, parts=parts)
    spec = ct.bucketSpec().get() if ct.bucketSpec().isDefined() else None
    return {
        "name": name,
        "provider": ct.provider().get() if ct.provider().isDefined() else None,
        "serde": ct.storage().serde().get() if ct.storage().serde().isDefined() else None,
        "properties": properties,
        "schema": json.loads(ct.schema().json()),
        "partition_columns": _seq(ct.partitionColumnNames()),
        "bucket_columns": _seq(spec.bucketColumnNames()) if spec is not None else [],
        "bucket_count": int(spec.numBuckets()) if spec is not None else None,
        "sort_columns": _seq(spec.sortColumnNames()) if spec is not None else [],
        "location": ct.location().toString(),
        "partitions": _partition_values(spark, ct, parts),
    }


def _partition_values(spark: Any, ct: Any, parts: Any) -> list[list[str]] | None:
    """The values of each of ``parts`` (:func:`_metastore_partitions` of ``ct``), in its partition column order
    (the JVM's ``TablePartition.values``), or None for an unpartitioned table."""
    columns = _seq(ct.partitionColumnNames())
    if not columns:
        return None
    convert = spark.sparkContext._jvm.scala.jdk.javaapi.CollectionConverters
    out = []
    for i in range(parts.size()):
        spec = dict(convert.asJava(parts.apply(i).spec()))
        out.append([spec.get(c) for c in columns])
    return out


def load_table(spark: SparkSession, name: str, *, reads_files: bool = True) -> BucketedTable:
    """Resolve a Hive bucketed table of the session catalog into a :class:`BucketedTable`
    (:func:`table_from_description` of :func:`describe_catalog_table`).

    Raises:
        TableNotFoundError: no such table.
        InvalidArgumentError: the table is not bucketed or not stored as ORC/Parquet (nor TEXTFILE, with
            ``reads_files=False``).
    """
    described = describe_catalog_table(spark, name)
    check_s3_endpoint(spark, hadoop_to_uri(described["location"]))
    return table_from_description(described, reads_files=reads_files)


def table_from_description(d: Mapping[str, Any], *, reads_files: bool = True) -> BucketedTable:
    """The :class:`BucketedTable` a catalog table's description (:func:`describe_catalog_table`) names.

    The spec comes from the catalog: bucket columns and count, sort columns, partition columns,
    every column's Hive type (``varchar(n)``/``char(n)`` kept). The hash family from the provider:
    a Hive table (``provider=hive``) is placed by Hive's hash with its ``bucketing_version``
    property (missing -> 1, Trino's rule) and its format comes from the serde; a data source table
    (``USING parquet/orc``, Spark's ``bucketBy``) is placed by Spark's own hash (``hash_family="spark"``).
    A Hive ACID table (``transactional=true``; ``transactional_properties=insert_only``) is read
    from its snapshots (:attr:`BucketedTable.transactional`); without ``CLUSTERED BY`` (Hive 3's
    default managed table) it is read unbucketed, its ``bucket_N`` files being writer ids.

    Raises:
        InvalidArgumentError: the table is not bucketed or not stored as ORC/Parquet.
    """
    from pyspark.sql.types import StructType

    from bucketkit.spark.types import hive_type_of_spark

    name, props = d["name"], dict(d["properties"])
    schema = StructType.fromJson(d["schema"])
    types = {f.name: hive_type_of_spark(f) for f in schema.fields}
    partitioned_by = list(d["partition_columns"])
    declared = list(d["bucket_columns"])
    columns = [f.name for f in schema.fields if f.name not in partitioned_by]
    named = spelled_as(declared, columns)  # the metastore's CLUSTERED BY is lower case, the schema as the DDL spelled
    verdict = catalog_verdict(d["provider"], declared, props, d["serde"], [types[c] if c in columns else None
                                                                          for c in named])
    acid = transactional_kind(props)
    if verdict.kind == "hudi":  # Hudi's table, whatever CLUSTERED BY its sync declared: read as Hudi reads it
        return dataclasses.replace(open_table(hadoop_to_uri(d["location"])), name=name)
    if verdict.kind == "not-bucketed" or (not declared and acid is None):  # a data source table without bucketBy too
        raise InvalidArgumentError(f"table {name!r} is not bucketed (no CLUSTERED BY ... INTO n BUCKETS)")
    fmt = verdict.format if verdict.format in FILE_FORMATS else None
    if verdict.kind == "spark":  # a data source table: Spark's bucketBy placed its rows, with Spark's own hash
        where, family, version = f"provider {verdict.format!r}", "spark", 1
    else:  # Hive's own bucketing: the version from the table property (missing -> 1, Hive's and Trino's rule)
        serde = d["serde"] or ""
        fmt = fmt or next((f for f in FILE_FORMATS if f in serde.lower()), None)
        where, family, version = f"serde {serde!r}", "hive", verdict.version or 1  # 0: unknown, read unbucketed
    if verdict.format == "text" and not reads_files:
        fmt = "text"  # its versions and commits are bucketkit's as any table's; its files are Spark SQL's to read
    elif verdict.format == "text":
        raise InvalidArgumentError(f"table {name!r} is a Hive TEXTFILE table: Spark SQL reads and writes it through "
                                   f"bucketkit's catalog (bucketed, its own serde); read it with bucketkit.scan(spark, "
                                   f"{name!r}) or SQL (joins of it: in SQL, without an Exchange), write it with SQL "
                                   f"(INSERT INTO {name} SELECT ..., or df.write.insertInto({name!r}))")
    if fmt is None:
        raise InvalidArgumentError(f"table {name!r} is stored with {where}; bucketkit reads ORC and Parquet")
    if declared:
        bucketed_by, count = named, int(d["bucket_count"])
        sorted_by = tuple(d["sort_columns"])
        unbucketed = verdict.reason if verdict.kind == "unbucketed" or verdict.version == 0 else None
    else:  # an unbucketed ACID table: bucket_N are writer ids; a spec without bucketing, never hashed
        bucketed_by, count, sorted_by, unbucketed = [], 0, (), UNBUCKETED
    spec = TableSpec(
        bucketed_by=tuple(bucketed_by), bucket_types=tuple(types[c] for c in bucketed_by),
        bucket_count=count, bucketing_version=version, hash_family=family,
        sorted_by=sorted_by, partitioned_by=tuple(partitioned_by),
        partition_types=tuple(types[c] for c in partitioned_by),
        columns=tuple((c, types[c]) for c in columns),
        file_format=fmt)
    fs, root = resolve_filesystem(hadoop_to_uri(d["location"]))
    if unbucketed is None and acid is None:
        unbucketed = _record_disagreement(spec, root, fs)
    listed = d.get("partitions")
    # a null partition value is Hive's default partition directory, whichever way the metastore spells it
    registered = None if listed is None or not partitioned_by else tuple(
        tuple(DEFAULT_PARTITION if v is None or v == "" else v for v in values) for values in listed)
    return BucketedTable(root, spec, fs, name, unbucketed_reason=unbucketed, transactional=acid, registered=registered)


def _record_disagreement(spec: TableSpec, root: str, fs: Any) -> str | None:
    """Why bucketkit's own record in ``root`` (how it hashed the files it wrote) forbids reading the
    table bucketed by ``spec`` (the catalog's), or None: :func:`bucketkit.trust.record_disagreement`."""
    try:
        record = read_spec(root, fs)
    except TableNotFoundError:  # no record: a table Hive, Trino or Spark wrote
        return None
    return record_disagreement({k: getattr(spec, k) for k in LAYOUT_FIELDS},
                               {k: getattr(record, k) for k in LAYOUT_FIELDS}, posixpath.join(root, METADATA_FILE))


def create_table(spark: Any, name: str, spec: TableSpec, location: str, *,
                 properties: Mapping[str, str] | None = None) -> None:
    """``CREATE TABLE`` a Hive bucketed table for ``spec`` at ``location`` (external).

    Raises:
        InvalidArgumentError: a descending sort key (the Hive metastore could hold it, but Spark's
            DDL accepts only ascending ``SORTED BY``).
    """
    if any(not s.ascending for s in spec.sorted_by):
        raise InvalidArgumentError(
            f"table {name!r}: sorted_by {[str(s) for s in spec.sorted_by]} has a descending key; Spark's catalog "
            "accepts only ascending SORTED BY columns (use a path table for descending sorts)")
    cols = ", ".join(f"{quoted(c)} {t}" for c, t in spec.columns)
    parts = ", ".join(f"{quoted(c)} {t}" for c, t in zip(spec.partitioned_by, spec.partition_types))
    props = {"bucketing_version": str(spec.bucketing_version), MANAGED_PROPERTY: "true", **(properties or {})}
    sql = [f"CREATE TABLE {_quote_name(name)} ({cols})"]
    if parts:
        sql.append(f"PARTITIONED BY ({parts})")
    sql.append(f"CLUSTERED BY ({', '.join(map(quoted, spec.bucketed_by))})")
    if spec.sorted_by:
        sql.append(f"SORTED BY ({', '.join(quoted(s.column) + ' ASC' for s in spec.sorted_by)})")
    sql.append(f"INTO {spec.bucket_count} BUCKETS STORED AS {spec.file_format.upper()}")
    sql.append(f"LOCATION {_literal(location)}")
    sql.append("TBLPROPERTIES (" + ", ".join(f"{_literal(k)}={_literal(v)}" for k, v in props.items()) + ")")
    spark.sql(" ".join(sql))


def _partition_clause(values: Mapping[str, str | None]) -> str:
    items = []
    for key, value in values.items():
        null = value is None or value == "" or value == DEFAULT_PARTITION
        items.append(f"{quoted(key)}={'NULL' if null else _literal(str(value))}")
    return f"PARTITION ({', '.join(items)})"


def add_partitions(spark: Any, name: str, partitions: Iterable[Mapping[str, str | None]], location: str) -> None:
    """Register partitions (``ALTER TABLE ... ADD IF NOT EXISTS PARTITION ... LOCATION``), in one statement.

    Args:
        partitions: partition values (``None``/``__HIVE_DEFAULT_PARTITION__`` = NULL).
        location: the table's root; each partition lives at ``location/<k=v/...>``.
    """
    clauses = [f"{_partition_clause(v)} LOCATION {_literal(location.rstrip('/') + '/' + partition_path(v))}"
               for v in partitions if v]
    if clauses:
        spark.sql(f"ALTER TABLE {_quote_name(name)} ADD IF NOT EXISTS " + " ".join(clauses))


def publish(spark: Any, name: str, location: str) -> None:
    """Point table ``name`` and its partitions at a version committed in ``location`` (a directory inside
    the table, on a store without directory renames; the metastore's partitions become the version's):
    ``io.bucketkit.write.MetastorePublish``, the step a SQL INSERT's commit ends with too, through py4j or
    (Spark Connect) the SQL function ``bucketkit_publish``.

    Raises:
        CommitError: bucketkit's jar is not in this session, so the metastore cannot be moved (the
            version is committed; the message says so).
    """
    from bucketkit.errors import CommitError
    from bucketkit.spark.driver import call, is_connect, jar_class

    if is_connect(spark):
        call(spark, "bucketkit_publish", name, location)
        return
    publisher = jar_class(spark, "write.MetastorePublish")
    if publisher is None:
        raise CommitError(f"table {name}: the new version is committed at {location}, but this session has no "
                          "bucketkit jar to move the metastore there (start it with bucketkit.get_session() or "
                          "`bucketkit spark-conf`); until then Hive, Trino and Spark read the previous version")
    publisher.publish(spark._jsparkSession, name, location)


def drop_partitions(spark: Any, name: str, partitions: Iterable[Mapping[str, str | None]]) -> None:
    """Unregister partitions (their files are handled by the commit protocol, not by the catalog)."""
    clauses = [_partition_clause(v) for v in partitions if v]
    if clauses:
        spark.sql(f"ALTER TABLE {_quote_name(name)} DROP IF EXISTS " + ", ".join(clauses))


def spark_written_files(table: BucketedTable) -> list[str]:
    """Files of ``table`` written by Spark's own Hive-bucketed ``INSERT`` (always v1 hashes).

    In a ``bucketing_version=2`` table each of them holds rows Hive and Trino will look for in
    other buckets; in a v1 table they are harmless.
    """
    from bucketkit.layout.versions import live_root, visible_files

    return [f for f in visible_files(table.filesystem, live_root(table.filesystem, table.location))
            if is_spark_hive_insert(f.rsplit("/", 1)[-1])]
