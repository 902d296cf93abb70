"""Scan planning without Spark: filter normalisation, bucket and partition pruning, ScanPlan.

The hash itself is proven against Hive's classes in the hashing tests; here the question is whether
pruning ever drops a bucket a matching row can lie in, checked by brute force over every candidate
row (hypothesis), and whether explicit cases prune as Trino's rules say.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.errors import InvalidArgumentError
from bucketkit.hashing.hive import BucketFunction
from bucketkit.layout.metadata import TableSpec
from bucketkit.pruning.filters import OPS
from bucketkit.pruning.filters import normalize as normalize_filters
from bucketkit.pruning.filters import to_text as format_filters
from bucketkit.pruning.plan import buckets_for, enumeration_bound, partition_predicate


def spec_of(types: dict[str, str], bucketed_by, n=8, version=2, partitions=None) -> TableSpec:
    partitions = partitions or {}
    return TableSpec.create(bucketed_by, n, columns=types, bucketing_version=version,
                            partitioned_by=tuple(partitions), partition_types=tuple(partitions.values()))


# -- normalize_filters -------------------------------------------------------------------------------
def test_normalize_accepts_pyarrow_and_dnf_forms():
    assert normalize_filters(None) == ()
    assert normalize_filters([]) == ()
    assert normalize_filters([("k", "==", 1), ("s", "in", ["a", "b"])]) == ((("k", "=", 1), ("s", "in", ("a", "b"))),)
    assert normalize_filters([[("k", "=", 1)], [("k", "<>", 2), ["s", "not_in", {"x"}]]]) == (
        (("k", "=", 1),), (("k", "!=", 2), ("s", "not in", ("x",))))
    assert normalize_filters([("k", "is_null")]) == ((("k", "is null", None),),)
    assert normalize_filters([("k", "IS NOT NULL", None)]) == ((("k", "is not null", None),),)
    # idempotent: a normalised DNF normalises to itself
    dnf = normalize_filters([[("k", "in", [1, 2])], [("k", "is null")]])
    assert normalize_filters(dnf) == dnf


def test_normalize_converts_numpy_scalars():
    np = pytest.importorskip("numpy")
    assert normalize_filters([("k", "in", np.array([1, 2]))]) == ((("k", "in", (1, 2)),),)
    assert type(normalize_filters([("k", "=", np.int64(3))])[0][0][2]) is int


@pytest.mark.parametrize("bad, fragment", [
    ([("k", "~", 1)], "unknown op '~'"),
    ([("k", "in", 1)], "needs a list"),
    ([("k", "in", "abc")], "needs a list"),
    ([("k", "=", [1, 2])], "use 'in'"),
    ([("k", "=")], "needs a value"),
    ([("k", "is null", 5)], "takes no value"),
    ([("k", "=", 1), [("k", "=", 2)]], "mixes terms"),
    ("k = 1", "SQL predicate strings"),
    ([(1, "=", 1)], "expected (column, op, value)"),
])
def test_normalize_rejects_bad_filters_with_a_useful_message(bad, fragment):
    with pytest.raises(InvalidArgumentError) as info:
        normalize_filters(bad)
    assert fragment in str(info.value)
    if "unknown op" in fragment:
        assert all(op in str(info.value) for op in OPS)


def test_format_filters_reads_like_sql():
    dnf = normalize_filters([[("k", "in", [1, 2]), ("d", ">=", dt.date(2020, 1, 1))], [("k", "is null")]])
    assert format_filters(dnf) == "(k IN (1, 2) AND d >= '2020-01-01') OR (k IS NULL)"


# -- buckets_for: Trino's rules ----------------------------------------------------------------------
def test_equality_and_in_select_the_hashed_buckets():
    spec = spec_of({"k": "bigint", "s": "string"}, ["k"], n=16, version=2)
    fn = BucketFunction(2, ("bigint",), 16)
    selected, reason = buckets_for(spec, normalize_filters([("k", "in", [1, 2, 3]), ("s", "=", "x")]))
    assert selected == {fn.bucket_of([v]) for v in (1, 2, 3)}
    assert "3 value combination(s)" in reason and "v2" in reason


def test_literal_types_follow_the_column_type():
    # 3.0 against an int column is the int 3; 3.5 can never equal an int: no bucket at all.
    spec = spec_of({"k": "int"}, ["k"], n=32, version=2)
    fn = BucketFunction(2, ("int",), 32)
    assert buckets_for(spec, normalize_filters([("k", "=", 3.0)]))[0] == {fn.bucket_of([3])}
    assert buckets_for(spec, normalize_filters([("k", "=", 3.5)]))[0] == frozenset()
    assert buckets_for(spec, normalize_filters([("k", "=", 2 ** 40)]))[0] == frozenset()
    assert buckets_for(spec, normalize_filters([("k", "in", [3.5, 4])]))[0] == {fn.bucket_of([4])}
    # int and bigint hash differently in v2: the column type decides, not the literal's
    big = spec_of({"k": "bigint"}, ["k"], n=32, version=2)
    assert buckets_for(big, normalize_filters([("k", "=", 3)]))[0] == {BucketFunction(2, ("bigint",), 32).bucket_of([3])}


def test_null_selects_the_bucket_of_hash_zero_and_equals_null_selects_nothing():
    spec = spec_of({"k": "string"}, ["k"], n=8, version=1)
    assert buckets_for(spec, normalize_filters([("k", "is null")]))[0] == {0}
    assert buckets_for(spec, normalize_filters([("k", "=", None)]))[0] == frozenset()
    assert buckets_for(spec, normalize_filters([("k", "in", [None])]))[0] == frozenset()


def test_every_bucket_column_must_be_pinned_in_every_conjunction():
    spec = spec_of({"a": "int", "b": "string", "c": "int"}, ["a", "b"], n=8)
    assert buckets_for(spec, normalize_filters([("a", "=", 1)]))[0] is None
    selected, reason = buckets_for(spec, normalize_filters([[("a", "=", 1), ("b", "=", "x")], [("a", "=", 2)]]))
    assert selected is None and "b is not pinned" in reason and "conjunction 2" in reason
    assert buckets_for(spec, normalize_filters([("a", ">", 1), ("b", "=", "x")]))[0] is None
    fn = BucketFunction(2, ("int", "string"), 8)
    both = buckets_for(spec, normalize_filters([("a", "in", [1, 2]), ("b", "in", ["x", "y"]), ("c", ">", 0)]))[0]
    assert both == {fn.bucket_of(list(p)) for p in itertools.product([1, 2], ["x", "y"])}


def test_other_terms_on_a_pinned_column_narrow_the_values():
    spec = spec_of({"k": "int"}, ["k"], n=64)
    fn = BucketFunction(2, ("int",), 64)
    assert buckets_for(spec, normalize_filters([("k", "in", [1, 2, 3]), ("k", "!=", 2), ("k", "<", 3)]))[0] == {
        fn.bucket_of([1])}
    assert buckets_for(spec, normalize_filters([("k", "=", 1), ("k", "=", 2)]))[0] == frozenset()
    assert buckets_for(spec, normalize_filters([("k", "is null"), ("k", "is not null")]))[0] == frozenset()


def test_enumeration_bound_is_trinos():
    assert enumeration_bound(8) == 1000 and enumeration_bound(1000) == 4000
    spec = spec_of({"a": "int", "b": "int"}, ["a", "b"], n=4096)
    ok = buckets_for(spec, normalize_filters([("a", "in", range(64)), ("b", "in", range(64))]))  # 4096 <= 16384
    assert ok[0] is not None
    big = spec_of({"a": "int", "b": "int"}, ["a", "b"], n=8)
    selected, reason = buckets_for(big, normalize_filters([("a", "in", range(40)), ("b", "in", range(30))]))
    assert selected is None and "1200 value combinations exceed the enumeration bound 1000" in reason


def test_ambiguous_literal_types_never_prune():
    spec = spec_of({"s": "string"}, ["s"], n=8)
    selected, reason = buckets_for(spec, normalize_filters([("s", "=", 5)]))  # Spark would cast the column
    assert selected is None and "cannot hash" in reason


def test_signed_zero_reads_both_buckets():
    # SQL says 0.0 = -0.0, but Hive's v2 double hash tells their bit patterns apart.
    spec = spec_of({"d": "double"}, ["d"], n=64, version=2)
    fn = BucketFunction(2, ("double",), 64)
    assert fn.bucket_of([0.0]) != fn.bucket_of([-0.0])
    assert buckets_for(spec, normalize_filters([("d", "=", 0.0)]))[0] == {fn.bucket_of([0.0]), fn.bucket_of([-0.0])}


def test_hitting_every_bucket_reads_all():
    spec = spec_of({"k": "int"}, ["k"], n=2)
    selected, reason = buckets_for(spec, normalize_filters([("k", "in", range(50))]))
    assert selected is None and "hit all 2 buckets" in reason


# -- brute force: no matching row is ever pruned away ------------------------------------------------
DOMAINS = {"int": [None, -3, 0, 1, 2, 7, 300000], "bigint": [None, -1, 0, 5, 2 ** 33],
           "string": [None, "", "a", "b", "\u00e9t\u00e9"], "date": [None, dt.date(1970, 1, 1), dt.date(2024, 2, 29)],
           "boolean": [None, True, False], "double": [None, -0.0, 0.0, 1.5, -2.25]}


def sql_eval(op, value, lit):
    """An independent SQL evaluator for the test (three-valued logic collapsed to 'is true')."""
    if op == "is null":
        return value is None
    if op == "is not null":
        return value is not None
    if value is None:
        return False
    if op == "in":
        return any(x is not None and x == value for x in lit)
    if op == "not in":
        return all(x is not None and x != value for x in lit)
    if lit is None:
        return False
    return {"=": value == lit, "!=": value != lit, "<": value < lit, "<=": value <= lit,
            ">": value > lit, ">=": value >= lit}[op]


@st.composite
def specs_and_filters(draw):
    types = draw(st.lists(st.sampled_from(sorted(DOMAINS)), min_size=1, max_size=3))
    names = [f"c{i}" for i in range(len(types))]
    nb = draw(st.integers(1, len(names)))
    spec = TableSpec.create(names[:nb], draw(st.integers(1, 16)), columns=dict(zip(names, types)),
                            bucketing_version=draw(st.sampled_from([1, 2])))

    def term():
        i = draw(st.integers(0, len(names) - 1))
        dom = DOMAINS[types[i]]
        op = draw(st.sampled_from(["=", "in", "is null", "is not null", "!=", "<", ">=", "not in"]))
        if op in ("is null", "is not null"):
            return (names[i], op)
        if op in ("in", "not in"):
            return (names[i], op, draw(st.lists(st.sampled_from(dom), max_size=3)))
        value = draw(st.sampled_from(dom))
        if op in ("<", ">=") and (value is None or types[i] == "boolean"):
            op = "="
        return (names[i], op, value)

    dnf = [[term() for _ in range(draw(st.integers(1, 4)))] for _ in range(draw(st.integers(1, 3)))]
    return spec, types, dnf


@settings(max_examples=300)
@given(specs_and_filters())
def test_no_matching_row_lies_outside_the_selected_buckets(case):
    spec, types, filters = case
    dnf = normalize_filters(filters)
    selected, reason = buckets_for(spec, dnf)
    if selected is None:
        return
    fn = spec.bucket_function()
    nb = len(spec.bucketed_by)
    for row in itertools.product(*(DOMAINS[t] for t in types)):
        values = dict(zip((n for n, _ in spec.columns), row))
        if any(all(sql_eval(op, values[c], v) for c, op, v in conj) for conj in dnf):
            assert fn.bucket_of(list(row[:nb])) in selected, (row, format_filters(dnf), reason)


# -- partition pruning -------------------------------------------------------------------------------
def test_partition_values_compare_by_column_type():
    spec = spec_of({"k": "int"}, ["k"], partitions={"n": "int", "s": "string", "d": "date"})
    keep = partition_predicate(spec, normalize_filters([("n", ">", 9)]))
    assert keep({"n": "10", "s": "a", "d": "2020-01-01"})  # as ints 10 > 9 (as strings '10' < '9')
    assert not keep({"n": "9", "s": "a", "d": "2020-01-01"})
    assert not keep({"n": "__HIVE_DEFAULT_PARTITION__", "s": "a", "d": "2020-01-01"})  # NULL > 9 is not true
    nulls = partition_predicate(spec, normalize_filters([("s", "is null")]))
    assert nulls({"n": "1", "s": "__HIVE_DEFAULT_PARTITION__", "d": "2020-01-01"})
    assert not nulls({"n": "1", "s": "x", "d": "2020-01-01"})
    dates = partition_predicate(spec, normalize_filters([("d", ">=", "2020-02-01")]))
    assert dates({"n": "1", "s": "x", "d": "2020-02-01"}) and not dates({"n": "1", "s": "x", "d": "2020-01-31"})
    ors = partition_predicate(spec, normalize_filters([[("n", "=", 1), ("k", "=", 5)], [("s", "in", ["x", "y"])]]))
    assert ors({"n": "1", "s": "z", "d": "2020-01-01"}) and ors({"n": "2", "s": "y", "d": "2020-01-01"})
    assert not ors({"n": "2", "s": "z", "d": "2020-01-01"})


def test_partition_pruning_never_guesses_across_types():
    spec = spec_of({"k": "int"}, ["k"], partitions={"s": "string", "t": "timestamp"})
    # Spark would cast the string column for a numeric literal: keep the partition.
    assert partition_predicate(spec, normalize_filters([("s", "=", 1)]))({"s": "01", "t": "x"})
    assert partition_predicate(spec, normalize_filters([("t", "=", "2020-01-01 00:00:00")]))({"s": "a", "t": "2021"})
    assert partition_predicate(spec, normalize_filters([("s", "!=", "a")]))({"s": "b", "t": "x"})
    assert not partition_predicate(spec, normalize_filters([("s", "not in", ["a", None])]))({"s": "b", "t": "x"})


def test_nan_is_not_compared_in_python():
    spec = spec_of({"k": "int"}, ["k"], partitions={"f": "double"})
    assert partition_predicate(spec, normalize_filters([("f", "=", math.nan)]))({"f": "NaN"})


# -- plan_scan on a real directory (files written the way Hive lays them out) ------------------------
def test_plan_scan_selects_partitions_buckets_and_files(tmp_path):
    from bucketkit.pruning.plan import plan_scan
    from support.scan import write_arrow_table

    spec = spec_of({"k": "bigint", "s": "string"}, ["k"], n=4, version=2, partitions={"p": "int"})
    rows = [{"k": i, "s": str(i), "p": i % 3} for i in range(40)]
    root = write_arrow_table(str(tmp_path / "t"), spec, rows)
    fn = BucketFunction(2, ("bigint",), 4)

    whole = plan_scan(root)
    assert not whole.is_pruned and whole.partitions_total == 3 and whole.files_listed == 12
    assert len(whole.files) == sum(1 for p in whole.partitions for fs in p.bucket_files.values() for f in fs
                                   if p.sizes[f] > 0)  # zero-byte empty buckets are never read

    plan = plan_scan(root, [("k", "=", 7), ("p", ">=", 1)])
    assert plan.selected_buckets == {fn.bucket_of([7])}
    assert [p.values for p in plan.partitions] == [{"p": "1"}, {"p": "2"}] and plan.partitions_total == 3
    assert all(set(p.bucket_files) == {fn.bucket_of([7])} for p in plan.partitions)
    assert plan.files_listed == 8 and plan.bytes_selected <= plan.bytes_listed
    assert plan.residual == normalize_filters([("k", "=", 7), ("p", ">=", 1)])
    text = plan.explain()
    assert "partitions: 2 of 3" in text and f"buckets:    1 of 4: [{fn.bucket_of([7])}]" in text
    assert "files:      2 of 8 listed" in text and "p=1:" in text

    # per partition, only the conjunctions that partition can satisfy choose its buckets
    mixed = plan_scan(root, [[("p", "=", 0), ("k", "=", 3)], [("p", "=", 1), ("k", "=", 4)]])
    assert {p.values["p"]: set(p.bucket_files) for p in mixed.partitions} == {
        "0": {fn.bucket_of([3])}, "1": {fn.bucket_of([4])}}

    with pytest.raises(InvalidArgumentError, match="no such column"):
        plan_scan(root, [("K2", "=", 1)])
    assert plan_scan(root, [("K", "=", 7)]).selected_buckets == {fn.bucket_of([7])}  # case-insensitive
