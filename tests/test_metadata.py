"""TableSpec validation, serialisation, the metadata file, and open_table."""

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bucketkit.errors import BucketkitError, InvalidArgumentError, TableNotFoundError
from bucketkit.layout.metadata import (METADATA_FILE, SortKey, TableSpec, bucketing_version_from_properties,
                                read_spec, spelled_as, write_spec)
from bucketkit.table import open_table


def spec(**kw):
    base = dict(bucketed_by=("user_id",), bucket_types=("bigint",), bucket_count=16,
                columns=(("user_id", "bigint"), ("url", "string"), ("ts", "bigint")))
    base.update(kw)
    return TableSpec(**base)


def test_json_round_trip_and_hidden_file(tmp_path):
    s = spec(sorted_by=("ts DESC", "user_id"), partitioned_by=("dt",), partition_types=("date",),
             bucketing_version=1, file_format="parquet", properties={"owner": "me"}.items())
    write_spec(str(tmp_path), s)
    assert METADATA_FILE.startswith("_")  # hidden from Hive, Trino and Spark
    assert read_spec(str(tmp_path)) == s
    assert [f for f in os.listdir(tmp_path)] == [METADATA_FILE]  # no temporary file left behind
    assert json.loads((tmp_path / METADATA_FILE).read_text())["sorted_by"][0] == {"column": "ts", "ascending": False}


@pytest.mark.parametrize("change, words", [
    (dict(bucketed_by=()), "bucketed_by"),
    (dict(bucketed_by=(), bucket_types=(), bucket_count=3), "bucketed_by"),
    (dict(bucketed_by=(), bucket_types=(), bucket_count=-1), "bucketed_by"),
    (dict(bucket_types=("bigint", "int")), "bucket_types"),
    (dict(bucket_count=0), "bucket_count=0"),
    (dict(bucket_count=True), "bucket_count=True"),
    (dict(bucketing_version=3), "bucketing_version=3"),
    (dict(file_format="csv"), "file_format='csv'"),
    (dict(naming="spark"), "naming='spark'"),
    (dict(partitioned_by=("user_id",)), "both partition and bucket"),
    (dict(sorted_by=("nope",)), "['nope']"),
    (dict(bucket_types=("bogus",)), "bogus"),
])
def test_invalid_specs_name_the_option(change, words):
    with pytest.raises(InvalidArgumentError) as info:
        spec(**change)
    assert words in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, BucketkitError)


def test_a_spec_without_bucketing_has_no_bucket_function():
    """Hive 3's unbucketed ACID tables: no bucket columns, 0 buckets, nothing that hashes a row."""
    s = spec(bucketed_by=(), bucket_types=(), bucket_count=0, sorted_by=())
    assert not s.bucketed and s.bucket_function() is None
    assert TableSpec.from_json(s.to_json()) == s
    assert spec().bucketed and spec().bucket_function() is not None


def test_differences_name_each_field():
    diffs = spec().differences(spec(bucket_count=32, bucketing_version=1))
    assert diffs == ["bucket_count: table has 16, write has 32", "bucketing_version: table has 2, write has 1"]


@pytest.mark.parametrize("props, version", [({}, 1), (None, 1), ({"bucketing_version": "1"}, 1),
                                            ({"bucketing_version": "2"}, 2)])
def test_bucketing_version_rule(props, version):
    assert bucketing_version_from_properties(props) == version


def test_bucketing_version_rejects_others():
    with pytest.raises(InvalidArgumentError, match="'3'"):
        bucketing_version_from_properties({"bucketing_version": "3"})


def test_sort_key_forms():
    assert SortKey.of("a") == SortKey("a") and SortKey.of("a desc") == SortKey("a", False)
    assert SortKey.of(("a", "descending")) == SortKey("a", False)
    with pytest.raises(InvalidArgumentError, match="sideways"):
        SortKey.of("a sideways")


def test_read_spec_missing_says_what_to_pass(tmp_path):
    with pytest.raises(TableNotFoundError, match="bucketed_by, bucket_count"):
        read_spec(str(tmp_path))


def test_read_spec_corrupt_names_the_file(tmp_path):
    (tmp_path / METADATA_FILE).write_text("{not json")
    with pytest.raises(InvalidArgumentError, match=METADATA_FILE):
        read_spec(str(tmp_path))


def test_open_table_foreign_needs_the_spec(tmp_path):
    with pytest.raises(TableNotFoundError):
        open_table(str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="Hive type"):
        open_table(str(tmp_path), bucketed_by="k", bucket_count=4)
    t = open_table(str(tmp_path), bucketed_by="k", bucket_count=4, bucket_types=["int"])
    assert t.spec.bucketing_version == 1  # Trino's rule for a table without the property
    assert t.spec.bucket_types == ("int",) and t.spec.bucket_count == 4


def test_open_table_arguments_must_agree_with_metadata(tmp_path):
    write_spec(str(tmp_path), spec())
    assert open_table(str(tmp_path), bucket_count=16).spec == spec()
    with pytest.raises(InvalidArgumentError, match="bucket_count=8"):
        open_table(str(tmp_path), bucket_count=8)


# -- column names are case-insensitive (Hive, Trino, Spark) ------------------------------------------------------------
_NAME = st.text(alphabet="abcXYZ_", min_size=1, max_size=6)


@given(st.lists(_NAME, min_size=1, max_size=6, unique_by=str.lower), st.data())
def test_a_name_is_found_in_any_case_and_given_as_the_columns_spell_it(names, data):
    picked = data.draw(st.lists(st.sampled_from(names), max_size=4))
    recased = [data.draw(st.sampled_from([n, n.lower(), n.upper(), n.swapcase()])) for n in picked]
    assert spelled_as(recased, names) == picked
    assert spelled_as(["not a column"], names) == ["not a column"]  # left for the caller to report


def test_an_exact_name_wins_and_names_alike_but_for_case_are_not_guessed():
    assert spelled_as(["a", "B", "b"], ["A", "a", "B"]) == ["a", "B", "B"]  # 'a' exact; 'b' is 'B' alone
    assert spelled_as(["x"], ["X", "x "]) == ["X"]
    assert spelled_as(["ab"], ["AB", "Ab"]) == ["ab"]  # two candidates: not guessed


def test_a_spec_spells_bucket_and_sort_columns_as_its_columns_and_compares_names_without_case():
    # what a metastore gives: CLUSTERED BY / SORTED BY lower case, the schema as the DDL spelled it
    spec = TableSpec(("userid",), ("int",), 4, sorted_by=("val DESC",), columns=(("UserId", "int"), ("Val", "string")))
    assert spec.bucketed_by == ("UserId",) and spec.sorted_by == (SortKey("Val", False),)
    lower = TableSpec(("userid",), ("int",), 4, sorted_by=("val DESC",), columns=(("userid", "int"), ("val", "string")))
    assert spec.differences(lower) == []
    assert spec.differences(lower.with_(sorted_by=("val",))) == ["sorted_by: table has ['Val DESC'], write has "
                                                                 "['val ASC']"]
    with pytest.raises(InvalidArgumentError, match=r"\['nope'\] are not among the table's columns"):
        TableSpec(("nope",), ("int",), 4, columns=(("UserId", "int"),))
