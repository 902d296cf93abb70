"""Integer literals beyond a column's type (or beyond Spark's long/decimal literals) in bucketkit.scan.

The oracle is Spark SQL on the same table: for every tuple filter the rows must be those of
``spark.table(name).where(<the same predicate as SQL text>)``, Spark's quirks included (it folds
``int_col > d`` for a decimal ``d`` below the long range to TRUE, keeping NULL rows). Literals with
more than 38 digits have no Spark SQL spelling (Spark rejects them); Spark's answer for an integral
column depends only on which side of the long range a literal lies, so their oracle is Spark SQL
with the widest literal of the same sign, +-(10**38 - 1).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.errors import InvalidArgumentError
from bucketkit.layout.metadata import TableSpec
from bucketkit.spark.scan import plan_scan, scan
from support.scan import write_spark_hive_table

INT_TYPES = ("tinyint", "smallint", "int", "bigint")
BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
COLUMNS = {f"c_{t}": t for t in INT_TYPES}


def bounds(t: str) -> tuple[int, int]:
    return -(1 << (BITS[t] - 1)), (1 << (BITS[t] - 1)) - 1


def edge_values(t: str) -> list:
    lo, hi = bounds(t)
    return [None, lo, lo + 1, -1, 0, 1, hi - 1, hi]


# Literals around and beyond every type's bounds, Spark's long range and its decimal(38,0) literals.
LITERALS = sorted({s * (v + d) for t in INT_TYPES for v in (1 << (BITS[t] - 1),) for d in (-2, -1, 0, 1) for s in (1, -1)}
                  | {0, 2 ** 70, -(2 ** 70), 10 ** 38 - 1, -(10 ** 38 - 1)})
HUGE = [10 ** 38, -(10 ** 38), 10 ** 40, -(10 ** 40)]


def table_spec(bucket_type: str, partition_type: str) -> TableSpec:
    return TableSpec.create([f"c_{bucket_type}"], 4, columns=COLUMNS, partitioned_by=("p",),
                            partition_types=(partition_type,), bucketing_version=1)


@pytest.fixture(scope="module")
def tables(spark):
    """One Spark-Hive-written table bucketed by each integer type, partitioned by another one."""
    out = {}
    for i, bt in enumerate(INT_TYPES):
        pt = INT_TYPES[(i + 1) % 4]
        rows = []
        for j in range(24):
            row = {c: edge_values(t)[(j * (3 + k)) % 8] for k, (c, t) in enumerate(COLUMNS.items())}
            row["p"] = [bounds(pt)[0], 0, bounds(pt)[1], None][j % 4]
            rows.append(row)
        name = f"lit_{bt}"
        write_spark_hive_table(spark, name, table_spec(bt, pt), rows)
        out[bt] = name
    return out


def sql_of(column: str, op: str, value) -> str:
    if op in ("in", "not in"):
        return f"`{column}` {op.upper()} ({', '.join(str(v) for v in value)})"
    return f"`{column}` {'<>' if op == '!=' else op} {value}"


def rows(df):
    return sorted((tuple(r) for r in df.collect()), key=repr)


@settings(max_examples=40)
@given(data=st.data())
def test_out_of_range_literals_give_spark_sqls_rows(spark, tables, data):
    bucket_type = data.draw(st.sampled_from(INT_TYPES))
    name = tables[bucket_type]
    column = data.draw(st.sampled_from([*COLUMNS, "p"]))
    op = data.draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">=", "in", "not in"]))
    literal = st.sampled_from(LITERALS)
    value = tuple(data.draw(st.lists(literal, min_size=1, max_size=3))) if op.endswith("in") else data.draw(literal)
    got = scan(spark, table=name, filters=[(column, op, value)])
    assert rows(got) == rows(spark.table(name).where(sql_of(column, op, value))), (name, column, op, value)


@settings(max_examples=15)
@given(data=st.data())
def test_literals_wider_than_spark_decimals_compare_as_spark_does(spark, tables, data):
    name = tables[data.draw(st.sampled_from(INT_TYPES))]
    column = data.draw(st.sampled_from([*COLUMNS, "p"]))
    op = data.draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">=", "in", "not in"]))
    value = (data.draw(st.sampled_from(HUGE)), 0) if op.endswith("in") else data.draw(st.sampled_from(HUGE))
    got = scan(spark, table=name, filters=[(column, op, value)])
    widest = (lambda v: v if abs(v) < 10 ** 38 else (10 ** 38 - 1) * (1 if v > 0 else -1))
    same_side = tuple(map(widest, value)) if op.endswith("in") else widest(value)
    assert rows(got) == rows(spark.table(name).where(sql_of(column, op, same_side))), (name, column, op, value)


def test_bigint_key_equal_to_2_pow_70_selects_no_bucket_and_no_row(spark, tables):
    name = tables["bigint"]
    assert plan_scan(name, spark=spark, filters=[("c_bigint", "=", 2 ** 70)]).selected_buckets == frozenset()
    assert scan(spark, table=name, filters=[("c_bigint", "=", 2 ** 70)]).count() == 0
    assert scan(spark, table=name, filters="c_bigint = 1180591620717411303424").count() == 0
    for predicate in ("p > -1180591620717411303424", "p < 1180591620717411303424 AND c_int IS NULL"):
        assert rows(scan(spark, table=name, filters=predicate)) == rows(spark.table(name).where(predicate))


def test_huge_literal_on_a_non_integral_column_is_a_clear_error(spark, tmp_path):
    from support.scan import write_arrow_table

    spec = TableSpec.create(["k"], 2, columns={"k": "int", "x": "double"}, bucketing_version=2)
    root = write_arrow_table(str(tmp_path / "t"), spec, [{"k": 1, "x": 1e40}])
    with pytest.raises(InvalidArgumentError, match="at most 38"):
        scan(spark, root, filters=[("x", "=", 10 ** 40)]).collect()
