"""Hive type strings: parsing, normalising, and mapping from Arrow types.

Bucket functions depend on the *Hive* type of a column, not only on its values: ``varchar`` and
``string`` hash differently in bucketing v1, ``int`` and ``bigint`` differently in v2. A
:class:`HiveType` is the parsed, normalised form of strings such as ``"bigint"``,
``"varchar(15)"`` or ``"map<string,array<int>>"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError

__all__ = ["HiveType", "parse_hive_type", "hive_type_of_arrow", "arrow_type_of_hive", "PRIMITIVES"]

# Hive's primitive type names, with the aliases Hive accepts.
PRIMITIVES = {
    "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
    "varchar", "char", "date", "timestamp", "decimal", "binary",
}
_ALIASES = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint",
            "bool": "boolean", "real": "float"}


@dataclass(frozen=True)
class HiveType:
    """A parsed Hive type.

    Attributes:
        name: ``"int"``, ``"varchar"``, ``"array"``, ``"map"``, ``"struct"``, ...
        params: type parameters (``(15,)`` for ``varchar(15)``, ``(10, 2)`` for ``decimal(10,2)``).
        children: element type (array), key and value types (map), field types (struct).
        field_names: struct field names, in order.
    """

    name: str
    params: tuple[int, ...] = ()
    children: tuple["HiveType", ...] = ()
    field_names: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.name == "array":
            return f"array<{self.children[0]}>"
        if self.name == "map":
            return f"map<{self.children[0]},{self.children[1]}>"
        if self.name == "struct":
            inner = ",".join(f"{n}:{t}" for n, t in zip(self.field_names, self.children))
            return f"struct<{inner}>"
        if self.params:
            return f"{self.name}({','.join(map(str, self.params))})"
        return self.name

    @property
    def is_primitive(self) -> bool:
        return self.name in PRIMITIVES


_TOKEN = re.compile(r"\s*(`[^`]*`|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:]|\S)")


def _tokenize(text: str) -> list[str]:
    tokens = _TOKEN.findall(text)
    bad = [t for t in tokens if len(t) == 1 and not (t.isalnum() or t in "<>(),:_")]
    if bad:
        raise InvalidArgumentError(f"cannot parse Hive type {text!r}: unexpected {bad[0]!r}")
    return tokens


def parse_hive_type(text: str | HiveType) -> HiveType:
    """Parse a Hive type string (case-insensitive) into a :class:`HiveType`.

    Raises:
        InvalidArgumentError: the string is not a Hive type.
    """
    if isinstance(text, HiveType):
        return text
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f"expected a Hive type string such as 'bigint', got {text!r}")
    tokens = _tokenize(text.strip())
    pos = 0

    def expect(tok: str) -> None:
        nonlocal pos
        if pos >= len(tokens) or tokens[pos] != tok:
            found = tokens[pos] if pos < len(tokens) else "end of text"
            raise InvalidArgumentError(f"cannot parse Hive type {text!r}: expected {tok!r}, found {found!r}")
        pos += 1

    def parse() -> HiveType:
        nonlocal pos
        if pos >= len(tokens):
            raise InvalidArgumentError(f"cannot parse Hive type {text!r}: unexpected end")
        name = tokens[pos].lower()
        name = _ALIASES.get(name, name)
        pos += 1
        if name == "array":
            expect("<"); elem = parse(); expect(">")
            return HiveType("array", children=(elem,))
        if name == "map":
            expect("<"); key = parse(); expect(","); value = parse(); expect(">")
            return HiveType("map", children=(key, value))
        if name == "struct":
            expect("<")
            names, types = [], []
            while True:
                names.append(tokens[pos].strip("`")); pos += 1
                expect(":")
                types.append(parse())
                if tokens[pos] == ">":
                    pos += 1
                    break
                expect(",")
            return HiveType("struct", children=tuple(types), field_names=tuple(names))
        if name not in PRIMITIVES:
            raise InvalidArgumentError(f"unknown Hive type {name!r} in {text!r}; expected one of "
                                       f"{sorted(PRIMITIVES | {'array', 'map', 'struct'})}")
        params: list[int] = []
        if pos < len(tokens) and tokens[pos] == "(":
            pos += 1
            while True:
                params.append(int(tokens[pos])); pos += 1
                if tokens[pos] == ")":
                    pos += 1
                    break
                expect(",")
        if name in ("varchar", "char") and len(params) != 1:
            raise InvalidArgumentError(f"Hive type {text!r}: {name} needs a length, e.g. {name}(20)")
        if name == "decimal" and not params:
            params = [10, 0]  # Hive's default precision and scale
        return HiveType(name, params=tuple(params))

    result = parse()
    if pos != len(tokens):
        raise InvalidArgumentError(f"cannot parse Hive type {text!r}: unexpected {tokens[pos]!r}")
    return result


def hive_type_of_arrow(arrow_type: pa.DataType) -> HiveType:
    """The Hive type a column of this Arrow type is stored as (strings become ``string``)."""
    t = arrow_type
    if pa.types.is_boolean(t):
        return HiveType("boolean")
    for check, name in ((pa.types.is_int8, "tinyint"), (pa.types.is_int16, "smallint"),
                        (pa.types.is_int32, "int"), (pa.types.is_int64, "bigint"),
                        (pa.types.is_float32, "float"), (pa.types.is_float64, "double"),
                        (pa.types.is_date32, "date"), (pa.types.is_timestamp, "timestamp")):
        if check(t):
            return HiveType(name)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return HiveType("string")
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return HiveType("binary")
    if pa.types.is_decimal(t):
        return HiveType("decimal", params=(t.precision, t.scale))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return HiveType("array", children=(hive_type_of_arrow(t.value_type),))
    if pa.types.is_map(t):
        return HiveType("map", children=(hive_type_of_arrow(t.key_type), hive_type_of_arrow(t.item_type)))
    if pa.types.is_struct(t):
        return HiveType("struct", children=tuple(hive_type_of_arrow(f.type) for f in t),
                        field_names=tuple(f.name for f in t))
    raise UnsupportedTypeError(f"Arrow type {t} has no Hive equivalent")


def arrow_type_of_hive(hive_type: str | HiveType) -> pa.DataType:
    """The Arrow type bucketkit reads and writes a column of this Hive type as."""
    h = parse_hive_type(hive_type)
    simple = {"boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
              "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
              "string": pa.string(), "varchar": pa.string(), "char": pa.string(), "date": pa.date32(),
              "timestamp": pa.timestamp("us"), "binary": pa.binary()}
    if h.name in simple:
        return simple[h.name]
    if h.name == "decimal":
        return pa.decimal128(*h.params)
    if h.name == "array":
        return pa.list_(arrow_type_of_hive(h.children[0]))
    if h.name == "map":
        return pa.map_(arrow_type_of_hive(h.children[0]), arrow_type_of_hive(h.children[1]))
    return pa.struct([pa.field(n, arrow_type_of_hive(c)) for n, c in zip(h.field_names, h.children)])


#: Digits of the integral types (Spark's ``DecimalType.forType``), in Spark's numeric precedence, then the floats.
_INTEGRAL_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_NUMERIC_ORDER = ("tinyint", "smallint", "int", "bigint", "float", "double")


def widens(source: str | HiveType, target: str | HiveType) -> bool:
    """Whether a value of Hive type ``source`` goes into a column of type ``target`` as Spark's ``INSERT`` puts it
    there with no loss of range (Spark's ``Cast.canUpCast`` for numbers): a later integral or float type in
    ``tinyint < smallint < int < bigint < float < double``, a decimal with room for every integral digit and
    every decimal digit of the source, or an integral type with room for a decimal of scale 0. False for the same
    type, for any narrowing and for every other type (tests hold it equal to Spark's ``Cast.canUpCast`` on
    numbers; Spark also up-casts numbers and dates to strings and dates to timestamps, which bucketkit refuses)."""
    s, t = parse_hive_type(source), parse_hive_type(target)
    if s == t:
        return False
    if s.name in _NUMERIC_ORDER and t.name in _NUMERIC_ORDER:
        return _NUMERIC_ORDER.index(s.name) < _NUMERIC_ORDER.index(t.name)
    if s.name == "decimal" and t.name in _INTEGRAL_DIGITS:  # a whole number of no more digits than the type holds
        return s.params[1] == 0 and s.params[0] < _INTEGRAL_DIGITS[t.name]  # decimal(3,0) may hold 999: no byte
    if t.name != "decimal":
        return False
    precision, scale = t.params
    if s.name in _INTEGRAL_DIGITS:
        return precision - scale >= _INTEGRAL_DIGITS[s.name]
    if s.name == "decimal":
        return scale >= s.params[1] and precision - scale >= s.params[0] - s.params[1]
    return False
