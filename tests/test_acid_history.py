"""Property test: random ACID histories written as Hive 3 files, read back, against a reference.

Each history is a sequence of writes (insert, delete, update = delete + insert in one write id),
each committed, aborted or still open, with major and minor compactions in between (some of them
by an aborted compactor transaction). Every write leaves its directories the way Hive 3 does
(``delta_W_W_0000``/``delete_delta_W_W_0000`` with ``bucket_N`` ORC files of the exact ACID schema
and footer metadata, written with pyorc); compactions add ``base_W_vT`` or ``delta_lo_hi_vT`` next
to what they compacted (the cleaner has not run). The reference is the obvious one: the set of
live rows after applying, in order, only the writes the snapshot sees.
"""

from __future__ import annotations

import pyarrow.fs as pafs
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.acid.read import read_bucket, read_snapshot, snapshot

from support.acid import BUCKETS, replay, writes


steps = st.lists(st.one_of(writes, st.tuples(st.just("compact"), st.booleans(), st.booleans())),
                 min_size=1, max_size=12)


@settings(max_examples=60)
@given(history=steps)
def test_reader_matches_the_reference_merge(tmp_path_factory, history):
    root = tmp_path_factory.mktemp("acid")
    h = replay(root, history)
    fs = pafs.LocalFileSystem()
    state = snapshot(fs, str(root), h.write_ids(), h.txns())
    table = read_snapshot(fs, str(root), state, write_ids=h.write_ids(), row_id=True)
    got = sorted(((r["row__id"]["writeid"], r["row__id"]["bucketid"], r["row__id"]["rowid"]), r["k"], r["v"])
                 for r in table.to_pylist())
    want = sorted((i, row["k"], row["v"]) for i, row in h.live.items())
    assert got == want


@settings(max_examples=25)
@given(history=steps, upper=st.booleans())
def test_reading_some_columns_gives_those_columns_of_the_same_rows(tmp_path_factory, history, upper):
    root = tmp_path_factory.mktemp("acid")
    h = replay(root, history)
    fs = pafs.LocalFileSystem()
    state = snapshot(fs, str(root), h.write_ids(), h.txns())
    name = "V" if upper else "v"  # Hive's column names are case-insensitive; the caller's spelling is kept
    got = sorted(v for b in range(BUCKETS)
                 for v in read_bucket(fs, str(root), state, b, write_ids=h.write_ids(), columns=[name])
                 .to_pydict().get(name, []))
    assert got == sorted(row["v"] for row in h.live.values())
