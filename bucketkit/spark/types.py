"""Spark SQL types <-> Hive type strings.

The Hive type of a bucket column decides its hash (``varchar`` vs ``string`` in v1, ``int`` vs
``bigint`` in v2), so it must come from what the table declares, not from how Spark happens to
hold the values. Spark reads a ``VARCHAR(10)`` column as ``StringType`` and keeps the declared
type in the field's ``__CHAR_VARCHAR_TYPE_STRING`` metadata; :func:`hive_type_of_spark` honours
that metadata when given a ``StructField``.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import types as T

from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hivetypes import HiveType, parse_hive_type

__all__ = ["arrow_schema", "hive_type_of_spark", "spark_type_of_hive", "CHAR_VARCHAR_METADATA_KEY", "column",
           "quoted"]

# The field-metadata key under which Spark keeps a column's declared char/varchar type.
CHAR_VARCHAR_METADATA_KEY = "__CHAR_VARCHAR_TYPE_STRING"

_SIMPLE = [
    (T.BooleanType, "boolean"), (T.ByteType, "tinyint"), (T.ShortType, "smallint"), (T.IntegerType, "int"),
    (T.LongType, "bigint"), (T.FloatType, "float"), (T.DoubleType, "double"), (T.DateType, "date"),
    (T.TimestampType, "timestamp"), (T.TimestampNTZType, "timestamp"), (T.BinaryType, "binary"),
]


def _of_type(data_type: Any) -> str:
    if isinstance(data_type, T.VarcharType):
        return f"varchar({data_type.length})"
    if isinstance(data_type, T.CharType):
        return f"char({data_type.length})"
    if isinstance(data_type, T.StringType):
        return "string"
    for cls, name in _SIMPLE:
        if isinstance(data_type, cls):
            return name
    if isinstance(data_type, T.DecimalType):
        return f"decimal({data_type.precision},{data_type.scale})"
    if isinstance(data_type, T.ArrayType):
        return f"array<{_of_type(data_type.elementType)}>"
    if isinstance(data_type, T.MapType):
        return f"map<{_of_type(data_type.keyType)},{_of_type(data_type.valueType)}>"
    if isinstance(data_type, T.StructType):
        return "struct<" + ",".join(f"{f.name}:{hive_type_of_spark(f)}" for f in data_type.fields) + ">"
    raise UnsupportedTypeError(f"Spark type {data_type.simpleString()} has no Hive equivalent")


def hive_type_of_spark(field_or_type: Any) -> str:
    """The Hive type string of a Spark ``StructField`` or ``DataType``.

    ``IntegerType`` -> ``"int"``, ``LongType`` -> ``"bigint"``, ``StringType`` -> ``"string"``
    (``"varchar(n)"`` / ``"char(n)"`` when a field's metadata says the column was declared so),
    ``ArrayType(IntegerType())`` -> ``"array<int>"``, ``DecimalType(10, 2)`` ->
    ``"decimal(10,2)"``, ``StructType`` -> ``"struct<a:int,...>"``. Types Hive cannot bucket on
    are still mapped (a table has other columns too); :func:`bucketkit.hashing.hive.check_bucketable`
    decides about bucketing.

    Raises:
        UnsupportedTypeError: a Spark type Hive has no type for (intervals, variant, null).
    """
    if isinstance(field_or_type, T.StructField):
        declared = (field_or_type.metadata or {}).get(CHAR_VARCHAR_METADATA_KEY)
        if declared:
            try:
                return str(parse_hive_type(declared))
            except InvalidArgumentError:
                pass  # an engine-specific spelling: the data type is still right up to char/varchar
        return _of_type(field_or_type.dataType)
    if isinstance(field_or_type, T.DataType):
        return _of_type(field_or_type)
    raise InvalidArgumentError(f"expected a pyspark StructField or DataType, got {field_or_type!r}")


def spark_type_of_hive(hive_type: str | HiveType) -> Any:
    """The Spark ``DataType`` bucketkit reads and writes a Hive type as (char/varchar as strings).

    Raises:
        InvalidArgumentError: not a Hive type string.
    """
    h = parse_hive_type(hive_type)
    for cls, name in _SIMPLE:
        if h.name == name:
            return cls()
    if h.name in ("string", "varchar", "char"):
        return T.StringType()
    if h.name == "decimal":
        return T.DecimalType(*h.params)
    if h.name == "array":
        return T.ArrayType(spark_type_of_hive(h.children[0]))
    if h.name == "map":
        return T.MapType(spark_type_of_hive(h.children[0]), spark_type_of_hive(h.children[1]))
    return T.StructType([T.StructField(n, spark_type_of_hive(c)) for n, c in zip(h.field_names, h.children)])


def arrow_schema(schema: T.StructType) -> Any:
    """The Arrow schema Spark hands a Python worker for ``schema``, timestamps in UTC (pyspark's own
    ``to_arrow_schema``: ``timezone="UTC"`` in newer releases, ``timestamp_utc=True`` in 4.0)."""
    import inspect

    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema, timestamp_utc=True)


def quoted(name: str) -> str:
    """``name`` as a Spark SQL identifier: in backticks, its own backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def column(name: str) -> Any:
    """The Spark Column named exactly ``name``: a column called ``user id`` or ``a.b`` (not field ``b`` of
    ``a``), as Hive tables and DataFrames read from files name them."""
    from pyspark.sql import functions as F

    return F.col(quoted(name))
