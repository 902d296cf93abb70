"""Filter literals against bucket-column types: can ``column = literal`` ever be true?

Bucket pruning hashes a filter's literal as a value of the column's Hive type. That is sound only
if the literal converts to that type *exactly*: ``3.0`` on an int column is the value 3, but
``3.5``, ``2**40`` or ``"abc"`` can never equal an int, and ``0.1`` can never equal a float column
(no float32 is exactly 0.1). Equality is numeric equality, as in SQL, with Spark's one exception
that NaN equals NaN. Literals whose meaning would depend on an engine's implicit casts (a number
against a string column, an int against a date column) are rejected with an error rather than
guessed, so a caller can fall back to not pruning.
"""

from __future__ import annotations

import datetime
import decimal
import math
import numbers
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hivetypes import HiveType, parse_hive_type

__all__ = ["coerce_literal"]

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
        if isinstance(value, (bool, np.bool_)):
            return True, bool(value)
        if isinstance(value, (int, np.integer)):
            return (True, bool(value)) if value in (0, 1) else _NEVER
        if isinstance(value, str):
            text = value.strip().lower()
            return (True, text == "true") if text in ("true", "false") else _NEVER
        raise InvalidArgumentError(f"literal {value!r} cannot be compared with a boolean column: expected a bool")
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

    Args:
        value: the literal (``int``, ``float``, ``Decimal``, ``bool``, ``str``, ``datetime.date``,
            ``list``/``dict`` for array/map columns, ``None``).
        hive_type: the column's Hive type.

    Returns:
        ``(False, None)`` when no value of the column can equal the literal (``3.5`` or ``2**40``
        or ``"abc"`` for ``int``, ``0.1`` for ``float``, a 6-character string for
        ``varchar(5)``); otherwise ``(True, canonical)`` with the literal as the Python value
        :func:`bucketkit.hashing.hive_hash` expects (``3.0`` -> ``3`` for int, ``"2020-01-01"``
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
