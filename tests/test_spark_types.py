"""Spark SQL types <-> Hive type strings, including what a real Hive table's schema carries."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from pyspark.sql import types as T

from bucketkit.errors import UnsupportedTypeError
from bucketkit.hivetypes import widens
from bucketkit.spark.types import hive_type_of_spark, spark_type_of_hive


@pytest.mark.parametrize("spark_type, hive", [
    (T.BooleanType(), "boolean"), (T.ByteType(), "tinyint"), (T.ShortType(), "smallint"),
    (T.IntegerType(), "int"), (T.LongType(), "bigint"), (T.FloatType(), "float"), (T.DoubleType(), "double"),
    (T.StringType(), "string"), (T.VarcharType(7), "varchar(7)"), (T.CharType(3), "char(3)"),
    (T.DateType(), "date"), (T.TimestampType(), "timestamp"), (T.BinaryType(), "binary"),
    (T.DecimalType(12, 3), "decimal(12,3)"), (T.ArrayType(T.IntegerType()), "array<int>"),
    (T.MapType(T.StringType(), T.ArrayType(T.LongType())), "map<string,array<bigint>>"),
    (T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.StringType())]), "struct<a:int,b:string>"),
])
def test_hive_type_of_spark(spark_type, hive):
    assert hive_type_of_spark(spark_type) == hive
    assert hive_type_of_spark(T.StructField("c", spark_type)) == hive


def test_round_trip_for_types_spark_holds_natively():
    for hive in ("int", "bigint", "array<date>", "map<string,double>", "decimal(5,1)", "struct<x:smallint>"):
        assert hive_type_of_spark(spark_type_of_hive(hive)) == hive
    assert spark_type_of_hive("varchar(5)") == T.StringType()


def test_char_varchar_metadata_decides():
    field = T.StructField("k", T.StringType(), metadata={"__CHAR_VARCHAR_TYPE_STRING": "varchar(10)"})
    assert hive_type_of_spark(field) == "varchar(10)"
    nested = T.StructField("k", T.ArrayType(T.StringType()),
                           metadata={"__CHAR_VARCHAR_TYPE_STRING": "array<varchar(4)>"})
    assert hive_type_of_spark(nested) == "array<varchar(4)>"


def test_types_without_hive_equivalent():
    with pytest.raises(UnsupportedTypeError, match="no Hive equivalent"):
        hive_type_of_spark(T.DayTimeIntervalType())


def test_real_hive_table_schema_keeps_varchar(spark):
    spark.sql("CREATE TABLE types_probe (a INT, b VARCHAR(12), c CHAR(2), d ARRAY<VARCHAR(3)>, e STRING, "
              "f DECIMAL(9,2), g MAP<STRING,BIGINT>) STORED AS ORC")
    try:
        schema = spark.table("types_probe").schema
        assert [hive_type_of_spark(f) for f in schema.fields] == [
            "int", "varchar(12)", "char(2)", "array<varchar(3)>", "string", "decimal(9,2)", "map<string,bigint>"]
    finally:
        spark.sql("DROP TABLE types_probe")


_NUMBERS = ["tinyint", "smallint", "int", "bigint", "float", "double"]
_TYPES = st.one_of(st.sampled_from(_NUMBERS + ["string", "date", "timestamp", "boolean", "varchar(10)"]),
                   st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: f"decimal({p},{s})")))


@pytest.mark.spark
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=_TYPES, target=_TYPES)
def test_a_write_widens_a_column_exactly_where_sparks_cast_can_up_cast(spark, source, target):
    """bucketkit.write casts a number column into an existing table's wider number type (int into bigint) where Spark's
    own INSERT would: bucketkit.hivetypes.widens against Spark's Cast.canUpCast, through the JVM (the golden value).
    Other types (a number into a string column, a date into a timestamp one) are not cast: refused, naming both."""
    jvm = spark._jvm
    parse = jvm.org.apache.spark.sql.types.DataType.fromDDL
    expected = source != target and jvm.org.apache.spark.sql.catalyst.expressions.Cast.canUpCast(parse(source),
                                                                                                  parse(target))
    if not all(t in _NUMBERS or t.startswith("decimal") for t in (source, target)):
        expected = False  # bucketkit widens numbers only: a number into a string column is refused, naming both
    assert widens(source, target) == expected, (source, target)
