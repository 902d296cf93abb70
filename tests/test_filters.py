"""The filter language without a JVM: terms, the op table, normalize, evaluate and to_pyarrow.

The oracle for :func:`~bucketkit.pruning.filters.evaluate` is pyarrow's compute engine running the
expression :func:`~bucketkit.pruning.filters.to_pyarrow` builds (a NULL result keeps no row, as in a SQL
WHERE), on random arrays with nulls; the pyarrow expression is held to Spark's join results in
``tests/test_join_spark.py``. Negation and mirroring are checked against Python's own comparisons.
"""

from __future__ import annotations

import datetime as dt
import math
import operator

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.pruning import plan as pruning
from bucketkit.pruning.filters import (LIST_OPS, NULL_OPS, OPS, TRUE, UNKNOWN, Term, evaluate, mirrored, normalize,
                               to_pyarrow, to_text)

SPELLINGS = {"=": ["=", "==", " = "], "!=": ["!=", "<>"], "<": ["<"], "<=": ["<="], ">": [">"], ">=": [">="],
             "in": ["in", "IN"], "not in": ["not in", "not_in", "NOT  IN"],
             "is null": ["is null", "is_null", "isnull", "IS NULL"],
             "is not null": ["is not null", "is_not_null", "not null"]}
PYTHON_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
              ">=": operator.ge}

# Column domains: (Arrow type, a strategy of non-null values). Ints stay well inside 2**53, where
# pyarrow's int/float comparison (through double) and Python's exact one agree.
DOMAINS = {
    "int": (pa.int64(), st.integers(-20, 20)),
    "double": (pa.float64(), st.floats(-20, 20, allow_nan=False).map(lambda f: round(f, 1))),
    "string": (pa.string(), st.text(alphabet="ab\u00e9z", max_size=3)),
    "date": (pa.date32(), st.dates(dt.date(1969, 12, 25), dt.date(1970, 1, 5))),
    "boolean": (pa.bool_(), st.booleans()),
}


def test_the_op_table_is_closed_and_matches_the_documented_ops():
    assert OPS == ("=", "!=", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null")
    for op in OPS:
        assert Term("c", op).negated().op in OPS and mirrored(op) in (*OPS, None)
        for spelling in SPELLINGS[op]:
            raw = ("c", spelling) if op in NULL_OPS else ("c", spelling, [1] if op in LIST_OPS else 1)
            assert normalize([raw])[0][0].op == op


def test_terms_are_tuples():
    term = normalize([("k", "==", np.int64(3))])[0][0]
    assert isinstance(term, Term) and term == ("k", "=", 3) and type(term.value) is int
    column, op, value = term
    assert (column, op, value) == (term.column, term.op, term.value)
    with pytest.raises(AttributeError):
        term.op = "<"  # frozen
    assert pruning.normalize_filters is normalize  # the name the docs used stays
    assert TRUE == ((),) and to_text(TRUE) == "TRUE" and to_pyarrow(()) is None


@st.composite
def raw_terms(draw):
    op = draw(st.sampled_from(OPS))
    spelling = draw(st.sampled_from(SPELLINGS[op]))
    column = draw(st.sampled_from(["k", "s", "K"]))
    if op in NULL_OPS:
        return draw(st.sampled_from([(column, spelling), (column, spelling, None), [column, spelling]]))
    values = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=2), st.integers(0, 3).map(np.int32))
    if op in LIST_OPS:
        listed = draw(st.lists(values, max_size=3))
        return (column, spelling, draw(st.sampled_from([list, tuple, np.array]))(listed)
                if all(isinstance(v, (int, np.integer)) for v in listed) else listed)
    return (column, spelling, draw(values))


raw_filters = st.one_of(st.none(), st.lists(raw_terms(), max_size=4),
                        st.lists(st.lists(raw_terms(), max_size=3), min_size=1, max_size=3))


@given(raw_filters)
def test_normalize_is_idempotent_and_canonical(raw):
    dnf = normalize(raw)
    assert normalize(dnf) == dnf
    assert normalize([list(c) for c in dnf] if dnf else None) == dnf
    for conj in dnf:
        for t in conj:
            assert isinstance(t, Term) and t.op in OPS
            values = t.value if t.op in LIST_OPS else (t.value,)
            assert isinstance(values, tuple) and not any(isinstance(v, (list, np.ndarray, np.generic)) for v in values)
            assert t.value is None or t.op not in NULL_OPS


@given(raw_terms())
def test_negating_twice_is_the_identity(raw):
    term = normalize([raw])[0][0]
    assert term.negated().negated() == term
    assert term.negated() != term


@given(st.sampled_from(OPS), st.one_of(st.none(), st.integers(-3, 3)), st.lists(st.integers(-3, 3), max_size=3))
def test_negation_is_sql_not_for_known_values(op, value, listed):
    """NOT flips a true/false term; a NULL operand leaves it unknown, which no filter passes."""
    term = Term("c", op, tuple(listed) if op in LIST_OPS else None if op in NULL_OPS else 1)
    assert evaluate(term.negated(), value) is (not evaluate(term, value)) or (
        value is None and op not in NULL_OPS and evaluate(term, value) is evaluate(term.negated(), value) is False)


@given(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), st.integers(-3, 3), st.integers(-3, 3))
def test_mirror_swaps_the_operands(op, a, b):
    assert evaluate(Term("c", op, b), a) is PYTHON_OPS[op](a, b)
    assert evaluate(Term("c", mirrored(op), a), b) is PYTHON_OPS[op](a, b)  # a op c, c holding b


@st.composite
def columns_and_dnf(draw):
    kinds = {"a": draw(st.sampled_from(sorted(DOMAINS))), "b": "int"}
    n = draw(st.integers(0, 12))
    data = {c: draw(st.lists(st.none() | DOMAINS[k][1], min_size=n, max_size=n)) for c, k in kinds.items()}

    def term():
        column = draw(st.sampled_from(sorted(kinds)))
        op = draw(st.sampled_from(OPS))
        literal = st.none() | DOMAINS[kinds[column]][1] if draw(st.integers(0, 5)) == 0 else DOMAINS[kinds[column]][1]
        if kinds[column] == "int" and op not in LIST_OPS and draw(st.booleans()):
            literal = st.integers(-20, 20).map(lambda i: i + 0.5)  # a float literal against an int column
        if op in NULL_OPS:
            return Term(column, op)
        if op in LIST_OPS:
            return Term(column, op, tuple(draw(st.lists(literal, max_size=3))))
        return Term(column, op, draw(literal))

    dnf = tuple(tuple(term() for _ in range(draw(st.integers(0, 3)))) for _ in range(draw(st.integers(1, 3))))
    return kinds, data, dnf


@settings(max_examples=400)
@given(columns_and_dnf())
def test_evaluate_agrees_with_pyarrow_on_to_pyarrow(case):
    kinds, data, dnf = case
    table = pa.table({"i": pa.array(range(len(data["a"])), pa.int64()),
                      **{c: pa.array(data[c], DOMAINS[k][0]) for c, k in kinds.items()}})
    kept = table.filter(to_pyarrow(dnf)).column("i").to_pylist()
    expected = []
    for i in range(table.num_rows):
        truths = [[evaluate(t, data[t.column][i]) for t in conj] for conj in dnf]
        assert None not in sum(truths, []), (dnf, i)  # one domain, no NaN: evaluate always knows
        if any(all(conj) for conj in truths):
            expected.append(i)
    assert kept == expected, (to_text(dnf), data)


def test_evaluate_cannot_tell_across_types_nan_and_unknown_values():
    assert evaluate(Term("c", "=", 1), UNKNOWN) is None
    assert evaluate(Term("c", "is null"), UNKNOWN) is None
    assert evaluate(Term("c", "=", math.nan), 1.0) is None  # Spark: NaN = NaN, above every number
    assert evaluate(Term("c", "<", "5"), 3) is None  # Spark would cast one side
    assert evaluate(Term("c", "in", (1, "x")), 2) is None
    assert evaluate(Term("c", "in", (2, "x")), 2) is True
    assert evaluate(Term("c", ">=", "2020-02-01"), dt.date(2020, 2, 1)) is True  # ISO text against a date
    assert evaluate(Term("c", "not in", (1, None)), 2) is False  # NOT IN (.., NULL) is never true


@pytest.mark.spark
def test_signed_zeros_are_equal_in_lists_as_in_spark(spark):
    """Found by the property above: pyarrow's isin hashes bits, so -0.0 missed 0.0; Spark's IN (both
    its In and InSet forms) and = treat them as equal."""
    values = [0.0, -0.0, 1.0, None]
    short, long_ = [-0.0], [-0.0] + [float(i) for i in range(1, 12)]  # In, and InSet past 10 items
    df = spark.createDataFrame([(v,) for v in values], "a double")
    for lits in (short, long_, [0.0]):
        sql = f"a IN ({', '.join(repr(v) + 'D' for v in lits)})"
        expected = sorted((r.a for r in df.where(sql).collect()), key=repr)
        got = pa.table({"a": pa.array(values, pa.float64())}).filter(to_pyarrow(((Term("a", "in", tuple(lits)),),)))
        assert sorted(got.column("a").to_pylist(), key=repr) == expected, sql
