"""Bucket file names: examples, round trips, cross-scheme properties, and Hive's own parser.

Expected bucket ids in the example table come from the engines: the Hive column is what
``org.apache.hadoop.hive.ql.exec.Utilities.getBucketIdFromFile`` (hive-exec 2.3.10 in pyspark's
jars) returns, checked live in ``test_examples_agree_with_hive``.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.errors import BucketCountMismatchError, InvalidArgumentError
from bucketkit.layout.naming import (ACID, HIVE, LEGACY_PRESTO, ORIGINAL, SPARK, BucketName, bucket_of,
                              naming_scheme, parse_bucket_name)

# (name, our scheme, our bucket) -- Trino's order; None = not a bucket name.
EXAMPLES = [
    ("000234_0", "hive", 234),
    ("0234_99", "hive", 234),
    ("0234_0_copy_1", "hive", 234),
    ("234_99", "hive", 234),
    ("000234_0_20180102_030405_00641_x1y2z", "hive", 234),
    ("001234_0_1f0e6a3c-0000-4000-8000-000000000000_20180102_030405_00641_x1y2z", "hive", 1234),
    ("00001_0_part-00000-9a8b7c6d-1111-2222-3333-444455556666_00001.c000.zstd.orc", "hive", 1),
    ("000001_0.orc", "hive", 1),
    ("20190526_072952_00009_fn7s5_bucket-00234", "legacy-presto", 234),
    ("20190526_072952_00009_fn7s5_bucket-00234.txt", "legacy-presto", 234),
    ("20190526_072952_00009_fn7s5_bucket-00234_copy_1", "legacy-presto", 234),
    ("bucket_01234", "acid", 1234),
    ("bucket_00000_10", "acid", 0),
    ("0234.txt", None, None),
    ("file0", None, None),
    ("bucketA", None, None),
    ("part-00000-9a8b7c6d-1111-2222-3333-444455556666_00003.c000.snappy.parquet", None, None),
    ("000001_", None, None),
    ("\u0663_0", None, None),  # ARABIC-INDIC DIGIT THREE: Java's \d is ASCII only
    ("000001_0\nx", None, None),  # Java's "." stops at line terminators
]

# Where Hive 2.3's getBucketIdFromFile differs from Trino's order (documented in docs/naming.md).
HIVE_DIFFERS = {
    "20190526_072952_00009_fn7s5_bucket-00234": 20190526,
    "20190526_072952_00009_fn7s5_bucket-00234.txt": 20190526,
    "20190526_072952_00009_fn7s5_bucket-00234_copy_1": 20190526,
    "bucket_00000_10": -1,  # Hive 2.3's ACID pattern has no attempt suffix
}

LINE_TERMINATORS = "\n\r\u0085\u2028\u2029"
safe_text = st.text(st.characters(blacklist_characters=LINE_TERMINATORS, blacklist_categories=("Cs",)),
                    max_size=30)
digits = st.text("0123456789", min_size=1, max_size=12)
query_ids = st.from_regex(r"[0-9]{8}_[0-9]{6}_[0-9]{5}_[a-z0-9]{5}", fullmatch=True)


@pytest.mark.parametrize("name,scheme,bucket", EXAMPLES)
def test_examples(name, scheme, bucket):
    parsed = parse_bucket_name(name)
    assert bucket_of(name) == bucket
    assert (parsed.scheme if parsed else None) == scheme


def test_examples_agree_with_hive(hive):
    get = hive.ql.exec.Utilities.getBucketIdFromFile
    for name, _, bucket in EXAMPLES:
        expected = HIVE_DIFFERS.get(name, -1 if bucket is None else bucket)
        assert get(name) == expected, name


def test_spark_scheme_examples():
    assert SPARK.parse("part-00000-abc_00003.c000.snappy.parquet") == BucketName(
        "part-00000-abc_00003.c000.snappy.parquet", "spark", 3, task=0, job_id="abc",
        extension=".c000.snappy.parquet")
    # Spark's own regex would misread Hive names, which is why it is never tried by bucket_of.
    assert SPARK.parse("000003_0_copy_2").bucket == 2
    assert HIVE.parse("000003_0_copy_2").bucket == 3
    assert SPARK.parse("0234.txt") is None


def test_huge_bucket_numbers_parse_so_layout_can_reject_them(hive):
    # Hive throws NumberFormatException; we keep the value so the layout reports "bucket >= count".
    with pytest.raises(Exception, match="NumberFormatException|For input string"):
        hive.ql.exec.Utilities.getBucketIdFromFile("2147483648_0")
    assert bucket_of("2147483648_0") == 2147483648
    assert bucket_of("9" * 5000 + "_0") is None  # beyond any file system's name length


def test_scheme_objects_are_singletons_equal_and_picklable():
    for scheme in (HIVE, LEGACY_PRESTO, ACID, SPARK, ORIGINAL):
        clone = pickle.loads(pickle.dumps(scheme))
        assert clone is scheme and clone == scheme and hash(clone) == hash(scheme)
        assert naming_scheme(scheme.name) is scheme
        assert repr(scheme) == f"naming_scheme({scheme.name!r})"
    assert HIVE != ACID
    assert naming_scheme("Legacy_Presto") is LEGACY_PRESTO
    with pytest.raises(InvalidArgumentError, match="expected one of"):
        naming_scheme("iceberg")


def test_original_scheme_assigns_sorted_names_and_checks_count():
    assert ORIGINAL.parse("file0") is None
    assert ORIGINAL.assign(["file5", "file0", "file3"], 3) == [(0, "file0"), (1, "file3"), (2, "file5")]
    with pytest.raises(BucketCountMismatchError, match=r"/t/p: .*found 2 file\(s\), table declares 3"):
        ORIGINAL.assign(["a", "b"], 3, directory="/t/p")


def test_format_rejects_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="bucket=-1"):
        HIVE.format(-1)
    with pytest.raises(InvalidArgumentError, match="copy number"):
        HIVE.format(1, tail="copy_3")
    with pytest.raises(InvalidArgumentError, match="query_id"):
        LEGACY_PRESTO.format(1, query_id="not-a-query")
    with pytest.raises(InvalidArgumentError, match="tail"):
        LEGACY_PRESTO.format(1, query_id="20190526_072952_00009_fn7s5", tail="x")
    with pytest.raises(InvalidArgumentError, match="extension"):
        SPARK.format(1, job_id="abc", extension="c000")
    assert HIVE.format(7) == "000007_0"
    assert HIVE.format(7, copy=2) == "000007_0_copy_2"
    assert HIVE.format(7, tail="uuid_q") == "000007_0_uuid_q"
    assert LEGACY_PRESTO.format(7, query_id="20190526_072952_00009_fn7s5") == "20190526_072952_00009_fn7s5_bucket-00007"
    assert ACID.format(7) == "bucket_00007" and ACID.format(7, attempt=3) == "bucket_00007_3"
    assert SPARK.format(7, task=1, job_id="j") == "part-00001-j_00007.c000.snappy.parquet"


# -- round trips --------------------------------------------------------------------------------
hive_tails = st.none() | safe_text.filter(lambda t: t != "").filter(lambda t: not HIVE._COPY_TAIL.match(t))


@given(bucket=st.integers(0, 10**7), attempt=st.integers(0, 10**4),
       copy=st.none() | st.integers(0, 10**4), tail=hive_tails)
def test_hive_round_trip(bucket, attempt, copy, tail):
    name = HIVE.format(bucket, attempt=attempt, copy=copy, tail=tail)
    parsed = HIVE.parse(name)
    assert (parsed.bucket, parsed.attempt, parsed.copy, parsed.tail) == (bucket, attempt, copy, tail)
    assert parse_bucket_name(name) == parsed  # the Hive scheme, not another one, claims it
    assert LEGACY_PRESTO.parse(name) is None and ACID.parse(name) is None


presto_tails = st.just("") | st.builds(lambda c, t: c + t, st.sampled_from("-_."), safe_text)


@given(bucket=st.integers(0, 10**7), query_id=query_ids, tail=presto_tails)
def test_legacy_presto_round_trip_and_never_read_as_hive(bucket, query_id, tail):
    name = LEGACY_PRESTO.format(bucket, query_id=query_id, tail=tail)
    parsed = parse_bucket_name(name)
    assert parsed.scheme == "legacy-presto"
    assert (parsed.bucket, parsed.query_id, parsed.tail) == (bucket, query_id, tail)
    assert HIVE.parse(name).bucket == int(query_id[:8])  # why the order matters


@given(bucket=st.integers(0, 10**7), attempt=st.none() | st.integers(0, 10**4))
def test_acid_round_trip(bucket, attempt):
    name = ACID.format(bucket, attempt=attempt)
    parsed = parse_bucket_name(name)
    assert (parsed.scheme, parsed.bucket, parsed.attempt) == ("acid", bucket, attempt)


extensions = st.from_regex(r"(\.[a-z0-9]{1,8}){0,4}", fullmatch=True)


@given(bucket=st.integers(0, 10**6), task=st.integers(0, 10**6), job=st.uuids(), extension=extensions)
def test_spark_round_trip_and_never_read_by_trino_order(bucket, task, job, extension):
    name = SPARK.format(bucket, task=task, job_id=str(job), extension=extension)
    parsed = SPARK.parse(name)
    assert (parsed.bucket, parsed.task, parsed.job_id, parsed.extension) == (bucket, task, str(job), extension)
    assert bucket_of(name) is None


foreign = st.one_of(
    st.from_regex(r"part-[0-9]{5}-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}(\.c000)?\.(snappy\.)?parquet", fullmatch=True),
    st.from_regex(r"[0-9]{1,6}(\.[a-z]{1,4})?", fullmatch=True),
    st.from_regex(r"[a-zA-Z][a-zA-Z0-9-]{0,12}", fullmatch=True),
    st.from_regex(r"bucket-?[0-9]{1,5}[a-z.]{0,4}", fullmatch=True),
)


@given(foreign)
def test_foreign_names_are_rejected(name):
    assert bucket_of(name) is None
    assert HIVE.parse(name) is None and LEGACY_PRESTO.parse(name) is None and ACID.parse(name) is None


@given(st.text())
def test_parsing_never_raises(name):
    for scheme in (HIVE, LEGACY_PRESTO, ACID, SPARK, ORIGINAL):
        parsed = scheme.parse(name)
        assert parsed is None or (parsed.bucket >= 0 and parsed.name == name)
    result = bucket_of(name)
    assert result is None or result >= 0


# -- differential against Hive's own parser ------------------------------------------------------
@settings(max_examples=150)
@given(bucket=st.integers(0, 2**31 - 1), attempt=st.integers(0, 10**4),
       copy=st.none() | st.integers(0, 10**3), tail=hive_tails, pad=st.integers(0, 6))
def test_hive_names_agree_with_hive(hive, bucket, attempt, copy, tail, pad):
    name = "0" * pad + HIVE.format(bucket, attempt=attempt, copy=copy, tail=tail)
    assert hive.ql.exec.Utilities.getBucketIdFromFile(name) == HIVE.parse(name).bucket == bucket_of(name)


@settings(max_examples=200)
@given(st.text(st.sampled_from("0123456789_xb.-\n\u0663") | st.characters(blacklist_categories=("Cs",)), max_size=16)
       .filter(lambda n: not n.startswith("bucket_")))
def test_arbitrary_names_agree_with_hive(hive, name):
    ours = HIVE.parse(name)
    if ours is not None and ours.bucket >= 2**31:
        return  # Hive throws NumberFormatException (see the test above)
    assert hive.ql.exec.Utilities.getBucketIdFromFile(name) == (-1 if ours is None else ours.bucket)


@given(st.uuids())
def test_spark_hive_compatible_names_parse_as_hive(job):
    name = f"00003_0_part-00007-{job}_00003.c000.zstd.orc"
    assert parse_bucket_name(name).scheme == "hive" and bucket_of(name) == 3


any_names = st.one_of(st.text(max_size=40), foreign, st.builds(HIVE.format, st.integers(0, 10**6), tail=hive_tails),
                      st.builds(lambda b, q, t: LEGACY_PRESTO.format(b, query_id=q, tail=t), st.integers(0, 10**6),
                                query_ids, presto_tails),
                      st.builds(ACID.format, st.integers(0, 10**6), attempt=st.none() | st.integers(0, 99)))


@given(any_names)
def test_fast_path_agrees_with_parse(name):
    from bucketkit.layout.naming import bucket_and_scheme

    parsed = parse_bucket_name(name)
    assert bucket_and_scheme(name) == (None if parsed is None else (parsed.bucket, parsed.scheme))
