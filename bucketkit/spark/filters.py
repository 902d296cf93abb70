"""Filters between Spark and bucketkit: Catalyst and pushed-down filters in, Spark SQL and Columns out.

The filter language itself (terms, DNF, ops) is :mod:`bucketkit.pruning.filters`. In: a SQL predicate parsed
by Spark's own parser (:func:`from_catalyst`) and a filter Spark pushes to the ``bucketkit`` data
source (:func:`from_pushed`). Out: Spark SQL text (:func:`to_sql`) and a Column (:func:`to_column`)
with the same SQL meaning. Between them sit Spark's literal rules: an int past the long range is a
decimal literal, and Spark's analyzer folds some comparisons of integral columns to TRUE.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import sys
from typing import TYPE_CHECKING, Any, Union

from bucketkit.pruning.filters import Filters

if TYPE_CHECKING:
    from pyspark.sql import Column

from bucketkit.errors import InvalidArgumentError
from bucketkit.pruning.filters import DNF, LIST_OPS, NULL_OPS, TRUE, Term, mirrored, normalize
from bucketkit.spark.types import column, quoted

__all__ = ["SparkFilters", "from_catalyst", "from_pushed", "to_sql", "to_column", "is_spark_filter", "split", "residual_predicate"]

#: what scan and join accept: (column, op, value) filters, a SQL predicate, or a Spark Column
SparkFilters = Union[Filters, str, "Column", None]

_MAX_CONJUNCTIONS = 256  # DNF expansion bound for SQL predicates; past it, don't prune on them
_CMP = {"EqualTo": "=", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">", "GreaterThanOrEqual": ">="}
_DECIMAL_MAX = 10 ** 38 - 1  # the widest Spark literal, decimal(38,0)
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")


# -- Catalyst (a parsed SQL predicate) -> DNF ---------------------------------------------------------
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


def _and(a: DNF, b: DNF) -> DNF:
    return tuple(x + y for x in a for y in b)


def _comparison(kind: str, kids: list[dict], negate: bool) -> DNF:
    """The DNF of ``column op literal`` or ``literal op column`` (op a comparison or ``<=>``)."""
    op = _CMP.get(kind, "<=>")
    try:
        column, value = _column(kids[0]), _literal(kids[1])
    except _Unknown:
        column, value = _column(kids[1]), _literal(kids[0])
        op = op if op == "<=>" else mirrored(op)
    if op == "<=>":
        if negate:
            raise _Unknown
        return ((Term(column, "is null"),),) if value is None else ((Term(column, "=", value),),)
    term = Term(column, op, value)
    return ((term.negated() if negate else term,),)


def _to_dnf(node: dict, negate: bool = False, lost: list | None = None) -> DNF:
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
            return _comparison(kind, kids, negate)
        if kind == "In":
            term = Term(_column(kids[0]), "in", tuple(_literal(k) for k in kids[1:]))
        elif kind in ("IsNull", "IsNotNull"):
            term = Term(_column(kids[0]), "is null" if kind == "IsNull" else "is not null")
        else:
            raise _Unknown
    except _Unknown:
        lost.append(kind)
        return TRUE  # not understood: constrains nothing for pruning (Spark still applies it)
    return ((term.negated() if negate else term,),)


def from_catalyst(spark: Any, predicate: str) -> tuple[DNF, bool]:
    """The part of a SQL predicate pruning can use, as a DNF, and whether it says all the predicate says.

    The predicate is parsed by Spark's own SQL parser. ``=``, ``<=>``, ``<``, ``<=``, ``>``, ``>=``,
    ``IN``, ``IS [NOT] NULL`` between a column and a literal, under ``AND``/``OR``/``NOT``, are
    understood; anything else becomes TRUE in the DNF (then the flag is False, and the caller must
    still apply the whole predicate).

    Raises:
        InvalidArgumentError: Spark cannot parse the predicate.
    """
    from bucketkit.spark.driver import call, is_connect

    try:
        if is_connect(spark):  # the server's parser, asked through SQL (io.bucketkit.spark.DriverCalls)
            tree = call(spark, "bucketkit_parse", predicate)[0]
        else:
            tree = spark._jsparkSession.sessionState().sqlParser().parseExpression(predicate).toJSON()
    except InvalidArgumentError:  # a server without bucketkit's extensions: that error says so
        raise
    except Exception as exc:  # py4j wraps Spark's ParseException; Connect's is a ServerError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidArgumentError(f"filters={predicate!r}: not a SQL predicate Spark can parse: {first}") from None
    lost: list = []
    dnf = _to_dnf(_tree(json.loads(tree))[0], lost=lost)
    return dnf, not lost


# -- a filter Spark pushes to a Python data source -> term --------------------------------------------
def from_pushed(f: Any) -> Term | None:
    """A filter pushed down to a Python data source (``pyspark.sql.datasource``) as a term, or None
    if pruning cannot use it."""
    from pyspark.sql import datasource as sds

    if isinstance(f, sds.Not):
        inner = from_pushed(f.child)
        return inner.negated() if inner is not None else None
    attribute = getattr(f, "attribute", None)
    if not attribute or len(attribute) != 1:
        return None  # nested fields are never bucket or partition columns
    column = attribute[0]
    compare = {sds.EqualTo: "=", sds.GreaterThan: ">", sds.GreaterThanOrEqual: ">=", sds.LessThan: "<",
               sds.LessThanOrEqual: "<="}
    if isinstance(f, sds.EqualNullSafe):
        return Term(column, "is null") if f.value is None else Term(column, "=", f.value)
    if type(f) in compare:
        return Term(column, compare[type(f)], f.value)
    if isinstance(f, sds.In):
        return Term(column, "in", tuple(f.value))
    if isinstance(f, sds.IsNull):
        return Term(column, "is null")
    if isinstance(f, sds.IsNotNull):
        return Term(column, "is not null")
    return None


# -- Spark's literal rules ----------------------------------------------------------------------------
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _lit_value(v: Any) -> Any:
    """``v`` as ``F.lit`` should get it: an int past the long range is a decimal, as in Spark SQL."""
    return decimal.Decimal(v) if _is_int(v) and not -2 ** 63 <= v < 2 ** 63 else v


def _column_types(spec: Any) -> dict[str, str]:
    """Lower-cased column name -> base type name (``int``, ``decimal``...), partition columns too."""
    pairs = list(spec.columns) + list(zip(spec.partitioned_by, spec.partition_types))
    return {n.lower(): t.split("(")[0].strip().lower() for n, t in pairs}


def _fit_literals(dnf: DNF, types: dict[str, str]) -> DNF:
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

    return tuple(tuple(Term(c, op, tuple(fit(c, x) for x in v) if op in LIST_OPS else fit(c, v))
                       for c, op, v in conj) for conj in dnf)


def _spark_folds(dnf: DNF, spec: Any) -> DNF:
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


# -- DNF -> Spark ---------------------------------------------------------------------------------------
def to_column(dnf: DNF) -> Any:
    """A Spark Column with SQL semantics equal to the DNF (None for no filter)."""
    from functools import reduce

    import pyspark.sql.functions as F

    def term(t: Term) -> Any:
        c, op, v = t
        col = column(c)
        if op == "is null":
            return col.isNull()
        if op == "is not null":
            return col.isNotNull()
        if op in LIST_OPS:
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


def to_sql(dnf: DNF) -> str | None:
    """Spark SQL text with the same meaning as the DNF; None if a literal has no safe SQL spelling.

    One SQL string costs Spark one parse, where a Column built term by term costs a py4j round
    trip per operator: this keeps a point lookup's fixed overhead near the by-hand floor.
    """
    def term(t: Term) -> str:
        c, op, v = t
        col = quoted(c)
        if op in NULL_OPS:
            return f"{col} {op.upper()}"
        if op in LIST_OPS:
            lits = [_sql_literal(x) for x in v if x is not None]
            if any(x is None for x in lits):
                raise _Unknown
            if len(lits) < len(v):  # a NULL member: WHEN, as in to_column (Spark's ORC reader NPEs)
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


# -- what bucketkit.scan does with a filter -------------------------------------------------------------
def is_spark_filter(filters: Any) -> bool:
    """Whether ``filters`` is SQL text or a Spark Column (which only Spark evaluates)."""
    column = getattr(sys.modules.get("pyspark.sql"), "Column", None)  # no Column exists before pyspark loads
    return isinstance(filters, str) or (column is not None and isinstance(filters, column))


def split(spark: Any, filters: Any, spec: Any) -> tuple[DNF, list[Any]]:
    """``filters`` as ``bucketkit.scan`` takes them -> (DNF pruning may use, predicates Spark must apply
    besides the DNF). Tuples and SQL text give a DNF; a Column is applied by Spark only."""
    if filters is None:
        return (), []
    if spark is None:  # no Spark, so no SQL text or Column (the caller checked): pyspark stays unimported
        return _spark_folds(normalize(filters), spec), []
    from pyspark.sql import Column

    if isinstance(filters, str):
        dnf, exact = from_catalyst(spark, filters)
        if exact and any(op in LIST_OPS and None in v for conj in dnf for _, op, v in conj):
            # Said in full by the DNF: apply that (NULL members as WHEN), not the text, whose IN list
            # holding NULL Spark's ORC reader fails on when pushed down (NPE).
            return _spark_folds(dnf, spec), []
        return _spark_folds(dnf, spec), [filters]
    if isinstance(filters, Column):
        return TRUE, [filters]  # not inspected: applied by Spark only
    return _spark_folds(normalize(filters), spec), []


def residual_predicate(dnf: DNF, spec: Any) -> Any:
    """What ``DataFrame.where`` gets for a (non-empty) residual DNF: SQL text where every literal has
    a safe spelling, else a Column."""
    fitted = _fit_literals(dnf, _column_types(spec))
    sql = to_sql(fitted)
    return sql if sql is not None else to_column(fitted)
