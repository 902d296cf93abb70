"""The filter language: ``(column, op, value)`` terms, their DNF, and what each op means.

Filters come in the form pyarrow and deltalake users know: a list of ``(column, op, value)``
tuples AND-ed together, or a list of such lists OR-ed together (disjunctive normal form, DNF).
:func:`normalize` turns either into a DNF of :class:`Term` (plain tuples too: ``c, op, v = t``
works and a term equals the tuple it was written as). One operator table holds every op's
spellings, negation and mirror; the readings of a DNF live beside it: SQL-like text
(:func:`to_text`), truth for one known value (:func:`evaluate`, used by partition pruning) and a
pyarrow expression with SQL semantics (:func:`to_pyarrow`, used by the join's readers).
:func:`coerce_literal` says whether a literal can equal a value of a column's Hive type at all,
and as what value (bucket pruning hashes that). The Spark conversions (Catalyst, pushed filters,
Spark SQL text, Columns) are in :mod:`bucketkit.spark.filters`.
"""

from __future__ import annotations

import datetime
import decimal
import math
import numbers
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hivetypes import HiveType, parse_hive_type

__all__ = ["Term", "DNF", "Filters", "TRUE", "OPS", "LIST_OPS", "NULL_OPS", "mirrored", "normalize", "to_text",
           "coerce_literal", "evaluate", "UNKNOWN", "to_pyarrow"]


class _Op(NamedTuple):
    spellings: tuple[str, ...]  # accepted (case-insensitive, "_" and spaces interchangeable)
    negation: str  # NOT (c op v) == (c negation v), in SQL's three-valued logic too
    mirror: str | None  # (v op c) == (c mirror v); None: the op has no literal-first form


_OPS = {
    "=": _Op(("=", "=="), "!=", "="),
    "!=": _Op(("!=", "<>"), "=", "!="),
    "<": _Op(("<",), ">=", ">"),
    "<=": _Op(("<=",), ">", ">="),
    ">": _Op((">",), "<=", "<"),
    ">=": _Op((">=",), "<", "<="),
    "in": _Op(("in",), "not in", None),
    "not in": _Op(("not in", "not_in"), "in", None),
    "is null": _Op(("is null", "is_null", "isnull"), "is not null", None),
    "is not null": _Op(("is not null", "is_not_null", "not null"), "is null", None),
}
OPS = tuple(_OPS)
LIST_OPS = ("in", "not in")
NULL_OPS = ("is null", "is not null")
_OP_OF = {spelling: op for op, entry in _OPS.items() for spelling in entry.spellings}


class Term(NamedTuple):
    """One comparison of a column with a literal, op canonical (one of :data:`OPS`).

    ``value`` is a tuple for ``in``/``not in`` and None for ``is null``/``is not null``.
    """

    column: str
    op: str
    value: Any = None

    def negated(self) -> Term:
        """``NOT self`` as a term (``k = 5`` -> ``k != 5``, ``k in (..)`` -> ``k not in (..)``)."""
        return Term(self.column, _OPS[self.op].negation, self.value)


def mirrored(op: str) -> str | None:
    """The op of ``column op' literal`` for ``literal op column`` (``<`` -> ``>``), None if it has none."""
    return _OPS[op].mirror


DNF = tuple  # tuple[tuple[Term, ...], ...]: OR of ANDs; () = no filter, an empty conjunction = TRUE
#: pyarrow/deltalake-style filters as users write them: ``[("k", "in", [1, 2])]`` (AND of terms) or a
#: list of such lists (OR of ANDs); ``("k", "is null")`` takes no value.
Filters = Union[Sequence[Sequence[Any]], Sequence[Sequence[Sequence[Any]]]]
TRUE: DNF = ((),)  # a DNF that constrains nothing


# -- normalising user filters -------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """numpy / pyarrow scalars -> Python values."""
    if hasattr(value, "as_py"):
        return value.as_py()
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _term(raw: Any) -> Term:
    if not isinstance(raw, (tuple, list)) or len(raw) not in (2, 3) or not isinstance(raw[0], str):
        raise InvalidArgumentError(
            f"filter term {raw!r}: expected (column, op, value) or (column, 'is null'), e.g. ('k', '=', 1)")
    column, op = raw[0], raw[1]
    canon = _OP_OF.get(" ".join(str(op).lower().replace("_", " ").split())) if isinstance(op, str) else None
    if canon is None:
        raise InvalidArgumentError(f"filter term {tuple(raw)!r}: unknown op {op!r}; expected one of {list(OPS)}")
    if canon in NULL_OPS:
        if len(raw) == 3 and raw[2] not in (None, True):
            raise InvalidArgumentError(f"filter term {tuple(raw)!r}: {canon!r} takes no value")
        return Term(column, canon, None)
    if len(raw) != 3:
        raise InvalidArgumentError(f"filter term {tuple(raw)!r}: op {canon!r} needs a value")
    value = raw[2]
    if canon in LIST_OPS:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise InvalidArgumentError(
                f"filter term {tuple(raw)!r}: {canon!r} needs a list of values, e.g. ('k', 'in', [1, 2])")
        return Term(column, canon, tuple(_plain(v) for v in value))
    if isinstance(value, (list, tuple, set, frozenset)):
        raise InvalidArgumentError(f"filter term {tuple(raw)!r}: {canon!r} compares with one value; use 'in'")
    return Term(column, canon, _plain(value))


def normalize(filters: Any) -> DNF:
    """Normalise pyarrow/deltalake-style filters into a DNF: a tuple of conjunctions of :class:`Term`.

    Accepted: ``None`` (no filter), a list of terms (AND), a list of lists of terms (OR of ANDs),
    or an already normalised DNF. A term is ``(column, op, value)`` with op one of :data:`OPS`
    (``"=="``, ``"<>"``, ``"not_in"``, ``"is_null"``... are accepted spellings), or
    ``(column, "is null")`` / ``(column, "is not null")``. Comparisons follow SQL: a ``None`` value
    in ``=``/``in`` matches no row, use ``"is null"``.

    Raises:
        InvalidArgumentError: a malformed term or an unknown op (the message lists the valid ones).
    """
    if filters is None:
        return ()
    if isinstance(filters, (str, bytes)) or not isinstance(filters, (list, tuple)):
        raise InvalidArgumentError(
            f"filters={filters!r}: expected a list of (column, op, value) tuples or a list of such lists "
            f"(SQL predicate strings are accepted by bucketkit.scan)")
    items = list(filters)
    if not items:
        return ()
    if all(isinstance(i, (list, tuple)) and (not i or isinstance(i[0], (list, tuple))) for i in items):
        return tuple(tuple(_term(t) for t in conj) for conj in items)
    if any(isinstance(i, (list, tuple)) and i and isinstance(i[0], (list, tuple)) for i in items):
        raise InvalidArgumentError(f"filters={filters!r}: mixes terms and lists of terms; use either "
                                   f"[term, ...] (AND) or [[term, ...], ...] (OR of ANDs)")
    return (tuple(_term(t) for t in items),)


def to_text(dnf: DNF) -> str:
    """SQL-like text of a DNF, for explanations (``(k IN (1, 2) AND d >= '2020-01-01') OR (k IS NULL)``)."""
    def lit(v: Any) -> str:
        return "NULL" if v is None else repr(v.isoformat()) if isinstance(v, datetime.date) else repr(v)

    def term(t: Term) -> str:
        c, op, v = t
        if op in NULL_OPS:
            return f"{c} {op.upper()}"
        if op in LIST_OPS:
            return f"{c} {op.upper()} ({', '.join(lit(x) for x in v)})"
        return f"{c} {op} {lit(v)}"

    if not dnf:
        return "(none)"
    parts = [" AND ".join(term(t) for t in conj) or "TRUE" for conj in dnf]
    return parts[0] if len(parts) == 1 else " OR ".join(f"({p})" for p in parts)


# -- literals against a column's Hive type ------------------------------------------------------------
# Sound only if the literal converts to the type *exactly*: 3.0 on an int column is the value 3,
# but 3.5, 2**40 or "abc" can never equal an int, and 0.1 can never equal a float column. Literals
# whose meaning would depend on an engine's implicit casts (a number against a string column) are
# rejected with an error rather than guessed, so a caller can fall back to not pruning.
_INT_RANGES = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_NEVER = (False, None)


def _number(value: Any) -> int | float | decimal.Decimal | None:
    """A numeric literal as an exact Python number (None if it is not one)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            d = decimal.Decimal(text)
        except decimal.InvalidOperation:
            return None
        return float(d) if not d.is_finite() else d
    return None


def _coerce_integer(n: Any, bits: int) -> tuple[bool, Any]:
    if isinstance(n, float):
        if not math.isfinite(n) or not n.is_integer():
            return _NEVER
        n = int(n)
    elif isinstance(n, decimal.Decimal):
        if n != n.to_integral_value():
            return _NEVER
        n = int(n)
    if -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        return True, n
    return _NEVER


def _coerce_real(n: Any, name: str) -> tuple[bool, Any]:
    # Integers convert to the column type the way Spark widens them (int -> float for float
    # columns); fractional literals compare as doubles, so a float column needs an exact float32.
    if isinstance(n, float) and math.isnan(n):
        return True, n  # Spark: NaN = NaN is true
    try:
        f = float(n)
    except OverflowError:
        return _NEVER
    if name == "double":
        return True, f
    try:
        f32 = struct.unpack(">f", struct.pack(">f", f))[0]
    except OverflowError:
        return _NEVER
    if isinstance(n, int) or f32 == f:
        return True, f32
    return _NEVER


def _coerce_date(value: Any, t: HiveType) -> tuple[bool, Any]:
    if isinstance(value, datetime.datetime):
        if value.time() != datetime.time(0) or value.tzinfo is not None:
            return _NEVER
        return True, value.date()
    if isinstance(value, datetime.date):
        return True, value
    if isinstance(value, str):
        try:
            return True, datetime.date.fromisoformat(value.strip())
        except ValueError:
            return _NEVER
    raise InvalidArgumentError(f"literal {value!r} cannot be compared with a {t} column: expected a "
                               f"datetime.date or an ISO date string such as '2020-01-31'")


def _coerce_boolean(value: Any) -> tuple[bool, Any]:
    if isinstance(value, (bool, np.bool_)):
        return True, bool(value)
    if isinstance(value, (int, np.integer)):
        return (True, bool(value)) if value in (0, 1) else _NEVER
    if isinstance(value, str):
        text = value.strip().lower()
        return (True, text == "true") if text in ("true", "false") else _NEVER
    raise InvalidArgumentError(f"literal {value!r} cannot be compared with a boolean column: expected a bool")


def _coerce(value: Any, t: HiveType) -> tuple[bool, Any]:
    if value is None:
        return True, None
    name = t.name
    if name in ("array", "map"):
        return _coerce_nested(value, t)
    if isinstance(value, (list, tuple, dict, set)):
        raise InvalidArgumentError(f"literal {value!r} cannot be compared with a {t} column: expected a "
                                   f"single value")
    if name in _INT_RANGES or name in ("float", "double"):
        n = _number(value)
        if n is None:
            if isinstance(value, str):
                return _NEVER  # "abc" is no number
            raise InvalidArgumentError(f"literal {value!r} cannot be compared with a {t} column: expected "
                                       f"a number")
        return _coerce_integer(n, _INT_RANGES[name]) if name in _INT_RANGES else _coerce_real(n, name)
    if name == "boolean":
        return _coerce_boolean(value)
    if name in ("string", "varchar"):
        if not isinstance(value, str):
            raise InvalidArgumentError(f"literal {value!r} cannot be compared with a {t} column: expected a "
                                       f"str (comparing other types depends on an engine's implicit casts)")
        if name == "varchar" and len(value) > t.params[0]:
            return _NEVER  # longer than any value the column can hold
        return True, value
    if name == "date":
        return _coerce_date(value, t)
    raise UnsupportedTypeError(f"cannot compare literal {value!r} with a {t} column: bucketkit does not "
                               f"hash {t.name}")


def _coerce_nested(value: Any, t: HiveType) -> tuple[bool, Any]:
    if t.name == "array":
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
            raise InvalidArgumentError(f"literal {value!r} cannot be compared with a {t} column: expected a list")
        out = []
        for element in value:
            ok, canonical = _coerce(element, t.children[0])
            if not ok:
                return _NEVER
            out.append(canonical)
        return True, out
    if not isinstance(value, Mapping):
        raise InvalidArgumentError(f"literal {value!r} cannot be compared with a {t} column: expected a dict")
    result = {}
    for key, item in value.items():
        ok_key, key = _coerce(key, t.children[0])
        ok_item, item = _coerce(item, t.children[1])
        if not (ok_key and ok_item):
            return _NEVER
        result[key] = item
    return True, result


def coerce_literal(value: Any, hive_type: str | HiveType) -> tuple[bool, Any]:
    """Whether a filter literal can equal a value of a column of this Hive type, and as what.

    Equality is numeric equality, as in SQL, with Spark's one exception that NaN equals NaN.

    Args:
        value: the literal (``int``, ``float``, ``Decimal``, ``bool``, ``str``, ``datetime.date``,
            ``list``/``dict`` for array/map columns, ``None``).
        hive_type: the column's Hive type.

    Returns:
        ``(False, None)`` when no value of the column can equal the literal (``3.5`` or ``2**40``
        or ``"abc"`` for ``int``, ``0.1`` for ``float``, a 6-character string for
        ``varchar(5)``); otherwise ``(True, canonical)`` with the literal as the Python value
        :func:`bucketkit.hashing.hive.hive_hash` expects (``3.0`` -> ``3`` for int, ``"2020-01-01"``
        -> ``datetime.date(2020, 1, 1)`` for date). ``None`` stays ``None`` (IS NULL hashes to 0).

    Raises:
        InvalidArgumentError: comparing this literal with this column type has no single meaning
            (a number against a string column, a list against an int column).
        UnsupportedTypeError: the column type is not one bucketkit hashes.

    Example:
        >>> coerce_literal(3.0, "int"), coerce_literal(3.5, "int")
        ((True, 3), (False, None))
    """
    return _coerce(value, parse_hive_type(hive_type))


# -- a term's truth for one known value ---------------------------------------------------------------
UNKNOWN = object()  # a column value that cannot be known (evaluate answers None: can't tell)


def _comparable(a: Any, b: Any) -> tuple[Any, Any] | None:
    """Both values in one Python-comparable domain, or None when Spark might compare them otherwise."""
    num = (int, float, decimal.Decimal)
    if isinstance(a, bool) or isinstance(b, bool):
        return (a, b) if isinstance(a, bool) and isinstance(b, bool) else None
    if isinstance(a, num) and isinstance(b, num):
        if any(isinstance(x, float) and math.isnan(x) for x in (a, b)):
            return None  # Spark orders NaN above everything and NaN = NaN; don't mimic, just keep
        if isinstance(a, decimal.Decimal) != isinstance(b, decimal.Decimal):
            a, b = decimal.Decimal(a) if isinstance(a, float) else a, decimal.Decimal(b) if isinstance(b, float) else b
        return a, b
    if isinstance(a, str) and isinstance(b, str):
        return a, b
    if isinstance(a, datetime.date) and not isinstance(a, datetime.datetime):
        if isinstance(b, str):
            try:
                b = datetime.date.fromisoformat(b.strip())
            except ValueError:
                return None
        if isinstance(b, datetime.date) and not isinstance(b, datetime.datetime):
            return a, b
    return None


def evaluate(term: Term, value: Any) -> bool | None:
    """Whether a row whose column holds ``value`` passes ``term`` under SQL: True, False, or None
    (can't tell: a comparison across types Spark would cast, NaN, or ``value`` is :data:`UNKNOWN`).

    A comparison with NULL is not true, so it gives False (the row does not pass), as a filter has it.
    """
    _, op, lit = term
    if value is UNKNOWN:
        return None
    if op == "is null":
        return value is None
    if op == "is not null":
        return value is not None
    if value is None:
        return False  # NULL compared with anything is not true
    if op in LIST_OPS:
        results = [evaluate(Term("", "=", x), value) for x in lit]
        if op == "in":
            return True if True in results else (None if None in results else False)
        if any(x is None for x in lit) or True in results:
            return False  # x NOT IN (..., NULL) is never true
        return None if None in results else True
    if lit is None:
        return False
    pair = _comparable(value, lit)
    if pair is None:
        return None
    a, b = pair
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


# -- a DNF as a pyarrow expression --------------------------------------------------------------------
_ARROW_COMPARE = {"=": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater",
                  ">=": "greater_equal"}


def _arrow_term(column: str, op: str, value: Any) -> Any:
    import pyarrow.compute as pc

    field_ = pc.field(column)
    if op == "is null":
        return field_.is_null()
    if op == "is not null":
        return field_.is_valid()
    if op in LIST_OPS:
        # SQL, not pyarrow's isin: a NULL row never passes, and NOT IN (.., NULL) is never true.
        values = [v for v in value if v is not None]
        has_null = len(values) < len(value)
        if any(isinstance(v, float) and v == 0 for v in values):
            values += [0.0, -0.0]  # isin hashes bits, so -0.0 misses 0.0; in SQL 0.0 = -0.0
        hit = field_.isin(values) if values else pc.scalar(False)
        if op == "in":
            return hit & field_.is_valid()
        return pc.scalar(False) if has_null else ~hit & field_.is_valid()
    return getattr(pc, _ARROW_COMPARE[op])(field_, pc.scalar(value))


def to_pyarrow(dnf: DNF) -> Any:
    """A pyarrow expression with SQL semantics for a normalised DNF (None when there is no filter).

    Written out rather than taken from ``pyarrow.parquet.filters_to_expression``, which lacks the
    null tests and lets NULL rows through ``not in`` (SQL drops them, and Spark's join must agree).
    """
    import pyarrow.compute as pc

    if not dnf:
        return None
    ors = None
    for conj in dnf:
        ands = pc.scalar(True)
        for column, op, value in conj:
            ands = ands & _arrow_term(column, op, value)
        ors = ands if ors is None else ors | ands
    return ors
