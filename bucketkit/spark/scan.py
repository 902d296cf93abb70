"""``bucketkit.scan``: read a bucketed table with Spark, touching only the files a filter can hit.

Planning is :func:`bucketkit.pruning.plan_scan` (pure Python); this module adds what needs Spark:
SQL predicate strings (parsed by Spark's own parser into the same DNF form), catalog tables, and
execution with Spark's *native* ORC/Parquet reader on exactly the selected files. Reading the files
natively, rather than through Python, keeps a full scan at Spark's own speed and a point lookup as
fast as reading the matching bucket files by hand. The whole filter is applied again to the rows
read, since pruning works at file granularity.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import json
import re
import sys
from typing import Any, Sequence

from bucketkit import pruning
from bucketkit.errors import InvalidArgumentError
from bucketkit.io import positional_names, read_schema, spark_uri
from bucketkit.pruning import ScanPlan, normalize_filters
from bucketkit.spark.catalog import resolve_table
from bucketkit.table import BucketedTable, TableRef, open_table, spec_options_given

__all__ = ["scan", "plan_scan", "is_spark_filter", "read_plan", "sql_to_dnf", "dnf_to_column", "dnf_to_sql", "spark_schema", "spark_ddl"]

_MAX_CONJUNCTIONS = 256  # DNF expansion bound for SQL predicates; past it, don't prune on them
_CMP = {"EqualTo": "=", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">", "GreaterThanOrEqual": ">="}
_MIRROR = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATE = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<", "in": "not in", "not in": "in",
           "is null": "is not null", "is not null": "is null"}
TRUE: tuple = ((),)  # a DNF that constrains nothing
_DECIMAL_MAX = 10 ** 38 - 1  # the widest Spark literal, decimal(38,0)
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")


# -- SQL predicate -> DNF -----------------------------------------------------------------------------
def _tree(nodes: list[dict], pos: int = 0) -> tuple[dict, int]:
    """Rebuild a catalyst expression from ``TreeNode.toJSON`` (pre-order, children inline)."""
    node = dict(nodes[pos])
    pos += 1
    children = []
    for _ in range(node.get("num-children", 0)):
        child, pos = _tree(nodes, pos)
        children.append(child)
    node["children"] = children
    return node, pos


class _Unknown(Exception):
    pass


def _literal(node: dict) -> Any:
    kind = node["class"].rsplit(".", 1)[-1]
    if kind != "Literal":
        raise _Unknown
    value, dtype = node.get("value"), node.get("dataType")
    if value is None:
        return None
    if dtype in ("integer", "long", "short", "byte"):
        return int(value)
    if dtype in ("double", "float"):
        return float(value)
    if dtype and dtype.startswith("decimal"):
        return decimal.Decimal(value)
    if dtype == "string":
        return value
    if dtype == "boolean":
        return value == "true"
    if dtype == "date":
        return _dt.date.fromisoformat(value)
    raise _Unknown  # timestamps, intervals, binary...: leave to Spark


def _column(node: dict) -> str:
    if not node["class"].endswith("UnresolvedAttribute"):
        raise _Unknown
    parts = node.get("nameParts", "")
    inner = parts[1:-1] if parts.startswith("[") and parts.endswith("]") else parts
    if not inner or "," in inner or "`" in inner:
        raise _Unknown  # qualified (t.k) or odd names: leave to Spark
    return inner


def _and(a: tuple, b: tuple) -> tuple:
    return tuple(x + y for x in a for y in b)


def _to_dnf(node: dict, negate: bool = False, lost: list | None = None) -> tuple:
    """The DNF of a parsed predicate; each part not understood becomes TRUE and is noted in ``lost``."""
    lost = [] if lost is None else lost
    kind = node["class"].rsplit(".", 1)[-1]
    kids = node["children"]
    if kind == "Not":
        return _to_dnf(kids[0], not negate, lost)
    if kind in ("And", "Or"):
        left, right = _to_dnf(kids[0], negate, lost), _to_dnf(kids[1], negate, lost)
        # De Morgan holds in SQL's three-valued logic too.
        out = _and(left, right) if (kind == "And") != negate else left + right
        if len(out) > _MAX_CONJUNCTIONS:
            lost.append(kind)
            return TRUE
        return out
    try:
        if kind in _CMP or kind == "EqualNullSafe":
            try:
                column, value, op = _column(kids[0]), _literal(kids[1]), _CMP.get(kind, "<=>")
            except _Unknown:
                column, value, op = _column(kids[1]), _literal(kids[0]), _MIRROR.get(_CMP.get(kind), "<=>")
            if op == "<=>":
                if negate:
                    raise _Unknown
                return (((column, "is null", None),),) if value is None else (((column, "=", value),),)
            term = (column, op, value)
        elif kind == "In":
            term = (_column(kids[0]), "in", tuple(_literal(k) for k in kids[1:]))
        elif kind in ("IsNull", "IsNotNull"):
            term = (_column(kids[0]), "is null" if kind == "IsNull" else "is not null", None)
        else:
            raise _Unknown
    except _Unknown:
        lost.append(kind)
        return TRUE  # not understood: constrains nothing for pruning (Spark still applies it)
    if negate:
        term = (term[0], _NEGATE[term[1]], term[2])
    return ((term,),)


def sql_to_dnf(spark: Any, predicate: str) -> tuple:
    """The part of a SQL predicate pruning can use, as a DNF (see :func:`bucketkit.pruning.normalize_filters`).

    The predicate is parsed by Spark's own SQL parser. ``=``, ``<=>``, ``<``, ``<=``, ``>``, ``>=``,
    ``IN``, ``IS [NOT] NULL`` between a column and a literal, under ``AND``/``OR``/``NOT``, are
    understood; anything else becomes TRUE here (the caller still applies the whole predicate).

    Raises:
        InvalidArgumentError: Spark cannot parse the predicate.
    """
    return _sql_dnf(spark, predicate)[0]


def _sql_dnf(spark: Any, predicate: str) -> tuple[tuple, bool]:
    """(DNF, whether it says all the predicate says) for parsed SQL text."""
    try:
        parsed = spark._jsparkSession.sessionState().sqlParser().parseExpression(predicate)
    except Exception as exc:  # py4j wraps Spark's ParseException
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidArgumentError(f"filters={predicate!r}: not a SQL predicate Spark can parse: {first}") from None
    lost: list = []
    dnf = _to_dnf(_tree(json.loads(parsed.toJSON()))[0], lost=lost)
    return dnf, not lost


def _split_filters(spark: Any, filters: Any, spec: Any) -> tuple[tuple, list[Any]]:
    """(DNF pruning may use, predicates Spark must apply besides the DNF)."""
    if filters is None:
        return (), []
    if spark is None:  # no Spark, so no SQL text or Column (the caller checked): pyspark stays unimported
        return _spark_folds(normalize_filters(filters), spec), []
    from pyspark.sql import Column

    if isinstance(filters, str):
        dnf, exact = _sql_dnf(spark, filters)
        if exact and any(op in ("in", "not in") and None in v for conj in dnf for _, op, v in conj):
            # Said in full by the DNF: apply that (NULL members as WHEN), not the text, whose IN list
            # holding NULL Spark's ORC reader fails on when pushed down (NPE).
            return _spark_folds(dnf, spec), []
        return _spark_folds(dnf, spec), [filters]
    if isinstance(filters, Column):
        return TRUE, [filters]  # not inspected: applied by Spark only
    return _spark_folds(normalize_filters(filters), spec), []


# -- DNF -> Spark Column ------------------------------------------------------------------------------
def dnf_to_column(dnf: tuple) -> Any:
    """A Spark Column with SQL semantics equal to the DNF (None for no filter)."""
    from functools import reduce

    import pyspark.sql.functions as F

    def term(t: tuple) -> Any:
        c, op, v = t
        col = F.col(f"`{c}`")
        if op == "is null":
            return col.isNull()
        if op == "is not null":
            return col.isNotNull()
        if op in ("in", "not in"):
            rest = [F.lit(_lit_value(x)) for x in v if x is not None]
            expr = col.isin(rest) if rest else F.lit(False)
            if len(rest) < len(v):
                # A NULL member makes a non-match NULL, never false. Spark's ORC reader fails (NPE) on an
                # IN filter holding a NULL literal, so the NULL is expressed with WHEN instead.
                return F.when(expr, op == "in")
            return ~expr if op == "not in" else expr
        lit = F.lit(_lit_value(v))
        return {"=": col == lit, "!=": col != lit, "<": col < lit, "<=": col <= lit, ">": col > lit,
                ">=": col >= lit}[op]

    if not dnf:
        return None
    conjs = [reduce(lambda a, b: a & b, map(term, conj)) if conj else F.lit(True) for conj in dnf]
    return reduce(lambda a, b: a | b, conjs)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _lit_value(v: Any) -> Any:
    """``v`` as ``F.lit`` should get it: an int past the long range is a decimal, as in Spark SQL."""
    return decimal.Decimal(v) if _is_int(v) and not -2 ** 63 <= v < 2 ** 63 else v


def _fit_literals(dnf: tuple, types: dict[str, str]) -> tuple:
    """The DNF with int literals wider than Spark's widest literal (decimal(38,0)) made expressible.

    Against an integral column such a literal compares like the widest decimal of its sign, since
    every value of the column lies between the two; against another column there is no exact
    rewrite, and Spark SQL itself rejects the literal.
    """
    def fit(c: str, v: Any) -> Any:
        if not _is_int(v) or abs(v) <= _DECIMAL_MAX:
            return v
        if types.get(c.lower()) in _INTEGRAL:
            return _DECIMAL_MAX if v > 0 else -_DECIMAL_MAX
        raise InvalidArgumentError(f"filter on {c!r}: literal {v} has {len(str(abs(v)))} digits; Spark literals "
                                   f"have at most 38 (decimal(38,0)), expected a smaller value for a "
                                   f"{types.get(c.lower(), 'non-integral')} column")

    return tuple(tuple((c, op, tuple(fit(c, x) for x in v) if op in ("in", "not in") else fit(c, v))
                       for c, op, v in conj) for conj in dnf)


def _column_types(spec: Any) -> dict[str, str]:
    """Lower-cased column name -> base type name (``int``, ``decimal``...), partition columns too."""
    pairs = list(spec.columns) + list(zip(spec.partitioned_by, spec.partition_types))
    return {n.lower(): t.split("(")[0].strip().lower() for n, t in pairs}


def _spark_folds(dnf: tuple, spec: Any) -> tuple:
    """The DNF without the terms Spark's analyzer replaces by TRUE.

    Spark rewrites ``int_col > d`` for a decimal literal ``d`` below the long range (and ``<`` past
    its top, with ``>=``/``<=`` alike) to the literal TRUE, so such a term keeps every row, NULLs
    included (Spark's DecimalPrecision rule). Pruning must agree, or it would drop the NULL partition.
    """
    types = _column_types(spec)

    def spark_true(c: str, op: str, v: Any) -> bool:
        if types.get(c.lower()) not in _INTEGRAL or not isinstance(v, (int, decimal.Decimal)) or isinstance(v, bool):
            return False
        return (op in (">", ">=") and v < -2 ** 63) or (op in ("<", "<=") and v > 2 ** 63 - 1)

    return tuple(tuple(t for t in conj if not spark_true(*t)) for conj in dnf)


def _sql_literal(v: Any) -> str | None:
    """Spark SQL text of a literal with the type ``F.lit(v)`` would give it, or None if unsure."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):  # past the long range Spark parses it as a decimal, like _lit_value
        return str(v) if abs(v) <= _DECIMAL_MAX else None
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return f"CAST('{'NaN' if v != v else 'Infinity' if v > 0 else '-Infinity'}' AS DOUBLE)"
        return f"CAST({v!r} AS DOUBLE)" if v < 0 else f"{v!r}D"
    if isinstance(v, decimal.Decimal):
        return f"{v}BD" if v.is_finite() and v >= 0 and "E" not in str(v) else None
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return f"DATE '{v.isoformat()}'"
    return None


def dnf_to_sql(dnf: tuple) -> str | None:
    """Spark SQL text with the same meaning as the DNF; None if a literal has no safe SQL spelling.

    One SQL string costs Spark one parse, where a Column built term by term costs a py4j round
    trip per operator: this keeps a point lookup's fixed overhead near the by-hand floor.
    """
    def term(t: tuple) -> str:
        c, op, v = t
        col = "`" + c.replace("`", "``") + "`"
        if op in ("is null", "is not null"):
            return f"{col} {op.upper()}"
        if op in ("in", "not in"):
            lits = [_sql_literal(x) for x in v if x is not None]
            if any(x is None for x in lits):
                raise _Unknown
            if len(lits) < len(v):  # a NULL member: WHEN, as in dnf_to_column (Spark's ORC reader NPEs)
                return f"CASE WHEN {col} IN ({', '.join(lits)}) THEN {op == 'in'} END" if lits else "CAST(NULL AS BOOLEAN)"
            return f"{col} {op.upper()} ({', '.join(lits)})" if lits else ("FALSE" if op == "in" else "TRUE")
        lit = _sql_literal(v)
        if lit is None:
            raise _Unknown
        return f"{col} {'<>' if op == '!=' else op} {lit}"

    try:
        return " OR ".join("(" + (" AND ".join(term(t) for t in conj) or "TRUE") + ")" for conj in dnf)
    except _Unknown:
        return None


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
    return ", ".join(f"`{n}` {_ddl_type(t)}" for n, t in cols)


def spark_schema(table: BucketedTable) -> Any:
    """The table's Spark schema: data columns (file order), then partition columns."""
    from pyspark.sql.types import StructType, _parse_datatype_string

    schema = _parse_datatype_string(spark_ddl(table))
    return schema if isinstance(schema, StructType) else StructType([schema])


def _with_columns_from_files(table: BucketedTable, plan_files: Sequence[str]) -> BucketedTable:
    """A foreign table opened without ``columns=``: take them from a data file's schema."""
    if table.spec.columns:
        return table
    from bucketkit.hivetypes import hive_type_of_arrow

    for f in plan_files:
        schema = read_schema(table.filesystem, f, table.spec.file_format)
        names = [fld.name for fld in schema if fld.name not in table.spec.partitioned_by]
        if positional_names(names):
            raise InvalidArgumentError(
                f"{table}: file {f} names its columns {names[:3]}...; pass columns={{name: hive_type}}")
        cols = tuple((fld.name, str(hive_type_of_arrow(fld.type))) for fld in schema if fld.name in names)
        return dataclasses.replace(table, spec=table.spec.with_(columns=cols))
    raise InvalidArgumentError(f"{table}: no data file to take the columns from; pass columns={{name: hive_type}}")


# -- entry points -------------------------------------------------------------------------------------
def is_spark_filter(filters: Any) -> bool:
    """Whether ``filters`` is SQL text or a Spark Column (which only Spark evaluates)."""
    column = getattr(sys.modules.get("pyspark.sql"), "Column", None)  # no Column exists before pyspark loads
    return isinstance(filters, str) or (column is not None and isinstance(filters, column))


def _plan(spark: Any, table: Any, path: Any, filters: Any, columns: Sequence[str] | None,
          spec_options: dict) -> tuple[ScanPlan, list[Any]]:
    """(the scan's plan, predicates Spark applies besides it)."""
    if (path is None) == (table is None):
        raise InvalidArgumentError(f"pass exactly one of table= (a table reference) or path= (a directory); "
                                   f"got table={table!r}, path={path!r}")
    bt = open_table(path, **spec_options_given(spec_options)) if path is not None \
        else resolve_table(spark, table, **spec_options)
    if spark is None and is_spark_filter(filters):
        raise InvalidArgumentError(f"filters={filters!r}: a SQL predicate or Column needs Spark; pass spark=")
    dnf, predicates = _split_filters(spark, filters, bt.spec)
    return pruning.plan_scan(bt, [list(c) for c in dnf] if dnf else None, columns=columns), predicates


def plan_scan(table: TableRef | None = None, filters: Any = None, *, columns: Sequence[str] | None = None,
              spark: Any = None, path: str | None = None, **spec_options: Any) -> ScanPlan:
    """What :func:`scan` reads, without reading: partitions, buckets and files, and why.

    Arguments as for :func:`scan`; ``spark`` is needed only for a catalog table name or a SQL
    predicate / Column filter. Returns plain data (print ``.explain()``); only directories are listed.
    """
    return _plan(spark, table, path, filters, columns, spec_options)[0]


def scan(spark: Any, table: TableRef | None = None, *, path: str | None = None, filters: Any = None,
         columns: Sequence[str] | None = None, **spec_options: Any) -> Any:
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
            unbucketed, never guessed.

    Returns:
        A DataFrame with exactly the rows of the table matching ``filters``.
    """
    plan, predicates = _plan(spark, table, path, filters, columns, spec_options)
    return read_plan(spark, plan, predicates)


def read_plan(spark: Any, plan: ScanPlan, predicates: Sequence[Any] = ()) -> Any:
    """Execute a :class:`~bucketkit.pruning.ScanPlan` with Spark's native reader.

    ``plan.residual`` and every extra predicate (SQL string or Column) are applied to the rows read.
    """
    if plan.acid:
        raise InvalidArgumentError(f"{plan.table}: a Hive ACID table (base_/delta_ directories); its rows need "
                                   f"ACID merging, which bucketkit.scan does not do: read it with Hive or Trino")
    bt = _with_columns_from_files(plan.table, plan.files)
    spec = bt.spec
    if not plan.files:
        df = spark.createDataFrame([], spark_schema(bt))
    else:
        reader = spark.read.format(spec.file_format).schema(spark_ddl(bt))
        if spec.partitioned_by:
            reader = reader.option("basePath", spark_uri(bt.filesystem, bt.location))
        df = reader.load(_paths(plan))
    if plan.residual:
        residual = _fit_literals(plan.residual, _column_types(spec))
        sql = dnf_to_sql(residual)
        df = df.where(sql if sql is not None else dnf_to_column(residual))
    for predicate in predicates:
        df = df.where(predicate)
    if plan.columns is not None:
        df = df.select(*[f"`{c}`" for c in plan.columns])
    return df


def _paths(plan: ScanPlan) -> list[str]:
    """What to hand Spark's reader: a directory wherever every bucket is read (Spark's own native
    listing, which skips zero-byte ORC files itself), else the selected non-empty files."""
    bt, n = plan.table, plan.table.spec.bucket_count
    if not plan.is_pruned:
        return [spark_uri(bt.filesystem, bt.location)]
    paths = []
    for p in plan.partitions:
        whole = len(p.bucket_files) == n
        paths.extend([spark_uri(bt.filesystem, f) for f in ([p.path] if whole else p.files)])
    return paths
