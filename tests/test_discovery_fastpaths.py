"""discover()'s fast paths against the general code they stand in for, on generated input.

Implemented twice, so held equal here: the bucket ids of a directory's names in one regex pass
(``naming.buckets_of_names``) against ``bucket_and_scheme`` name by name, and the local listing that
builds the tree straight from open directory handles (``discovery._list_local``) against the flat
pinned listing (``atomic.list_pinned``) made into a tree by the general code (``discovery._tree``).
"""

from __future__ import annotations

import os
import tempfile

import pyarrow.fs as pafs
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.layout.discovery import _entries, _list_local, _tree
from bucketkit.layout.naming import ACID, HIVE, LEGACY_PRESTO, bucket_and_scheme, buckets_of_names

QID = "20190526_072952_00009_fn7s5"
query_ids = st.from_regex(r"[0-9]{8}_[0-9]{6}_[0-9]{5}_[a-z0-9]{5}", fullmatch=True)
# Pieces that sit on the patterns' edges: digit runs, separators, the ACID and legacy Presto words,
# a query id, "/" (in no file name, but in a string), line terminators and a non-ASCII digit.
pieces = st.sampled_from(["0", "7", "000001", "12345678", "_", "-", ".", "bucket", "bucket_", "_bucket-",
                          "copy_", QID, "x", "/", "\n", "\r", "\u0085", "\u2028", "\u0663", "orc"])
edgy_names = st.lists(pieces, min_size=1, max_size=7).map("".join)
tails = st.text(st.characters(blacklist_characters="/\n\r\u0085\u2028\u2029", blacklist_categories=("Cs",)),
                min_size=1, max_size=20)
hive_names = st.builds(lambda b, a, t: HIVE.format(b, attempt=a, tail=t), st.integers(0, 10**6 - 1),
                       st.integers(0, 10**4), st.none() | tails.filter(lambda t: not HIVE._COPY_TAIL.match(t))
                       .filter(lambda t: "_bucket-" not in t))  # such names are left to the name-by-name path
legacy_names = st.builds(lambda b, q, t: LEGACY_PRESTO.format(b, query_id=q, tail=t), st.integers(0, 10**7),
                         query_ids, st.just("") | st.builds(lambda c, t: c + t, st.sampled_from("-_."), tails))
acid_names = st.builds(lambda b, a: ACID.format(b, attempt=a), st.integers(0, 10**7), st.none() | st.integers(0, 99))
any_names = st.one_of(edgy_names, hive_names, legacy_names, acid_names, st.text(max_size=12))


def name_by_name(names: list[str]) -> list[tuple[int, str] | None]:
    return [bucket_and_scheme(n) for n in names]


one_scheme = st.sampled_from([hive_names, legacy_names, acid_names]).flatmap(
    lambda names: st.lists(names, min_size=1, max_size=8))
# A directory of one scheme but for one name: the odd one must make the one pass decline, or agree.
one_odd = st.builds(lambda names, odd, at: names[:at] + [odd] + names[at:], one_scheme, any_names, st.integers(1, 8))


@settings(max_examples=300)
@given(st.lists(any_names, max_size=6) | one_odd)
def test_one_pass_agrees_with_name_by_name(names):
    one = buckets_of_names(names)
    if one is not None:
        scheme, ids = one
        assert name_by_name(names) == [(b, scheme) for b in ids]


@given(one_scheme)
def test_one_pass_answers_for_names_of_one_scheme(names):
    """It must not decline the directories it exists for (the general path would hide that)."""
    each = name_by_name(names)
    assert buckets_of_names(names) == (each[0][1], [b for b, _ in each])


def test_one_pass_examples():
    assert buckets_of_names(["000002_0", "000000_0_copy_1", "7_3.orc"]) == ("hive", [2, 0, 7])
    assert buckets_of_names([f"{QID}_bucket-00234.orc", f"{QID}_bucket-1"]) == ("legacy-presto", [234, 1])
    assert buckets_of_names(["bucket_00003", "bucket_00001_2"]) == ("acid", [3, 1])
    assert buckets_of_names([]) is None
    assert buckets_of_names(["000001_0", f"{QID}_bucket-00002"]) is None  # two schemes: name by name
    assert buckets_of_names(["000001_0", "notes.txt"]) is None
    assert buckets_of_names([f"{QID}_bucket-1", f"{QID}_bucket-12x"]) is None  # the second is Hive's 20190526
    assert buckets_of_names(["bucket_1", "bucket_1_2_3"]) is None and buckets_of_names(["1_0", "1_"]) is None
    assert buckets_of_names(["000001_0", "000002_0\nx"]) is None  # Java's "." stops at a line terminator
    assert buckets_of_names(["000001_0/000002_0", "x"]) is None  # one name, not two


# A tree: relative paths of up to three parts, each a file (size) or, ending in "/", a directory;
# hidden names, staging directories, version markers and names merely holding those prefixes.
parts = st.sampled_from(["a", "k=1", "k=2", "000001_0", "_h", ".h", ".bucketkit-staging-1",
                         ".bucketkit-version-7", "_t.bucketkit-staging-2", "x.bucketkit-staging-3"])
entries = st.tuples(st.lists(parts, min_size=1, max_size=3).map("/".join), st.booleans(), st.integers(0, 3))


def build(root: str, spec: list[tuple[str, bool, int]], dangling: bool) -> None:
    for rel, is_dir, size in spec:
        path = os.path.join(root, rel)
        try:
            os.makedirs(path if is_dir else os.path.dirname(path), exist_ok=True)
            if not is_dir and not os.path.exists(path):
                with open(path, "wb") as f:
                    f.write(b"x" * size)
        except (FileExistsError, NotADirectoryError):
            pass  # a file where a directory was asked for, or the other way round: keep the first
    if dangling:
        os.symlink("nowhere", os.path.join(root, "a-link"))  # not a file: left out (as pyarrow does)


@settings(max_examples=60, deadline=None)
@given(st.lists(entries, max_size=12), st.booleans())
def test_local_listing_agrees_with_flat_pinned_listing(spec, dangling):
    with tempfile.TemporaryDirectory() as root:
        build(root, spec, dangling)
        for base, prefix in [(root, ""), (os.path.join(root, "k=1"), "k=1")]:
            if not os.path.isdir(base):
                continue
            for recursive in (True, False):
                fast, general = set(), set()
                tree = _list_local(base, recursive, fast, prefix)
                assert tree == _tree(_entries(pafs.LocalFileSystem(), base, recursive), base, general, prefix)
                assert fast == general
