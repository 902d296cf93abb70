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
import pyorc
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.acid import decode_bucket_property, encode_bucket_property
from bucketkit.acidread import read_bucket, read_snapshot, snapshot

BUCKETS = 2
SCHEMA = ("struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,currentTransaction:bigint,"
          "row:struct<k:int,v:string>>")
INSERT, DELETE = 0, 2


def write_acid_file(path, events):
    """events: (operation, otid, bucket property, rowId, current write id, row or None), sorted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        writer = pyorc.Writer(f, SCHEMA)
        writer.set_user_metadata(**{"hive.acid.version": b"2"})
        writer.writerows(events)
        writer.close()
    (path.parent / "_orc_acid_version").write_text("2")


class History:
    """Hive's directories for a sequence of writes, and the rows a snapshot must return."""

    def __init__(self, root):
        self.root, self.write_id, self.txn = root, 0, 1000
        self.live = {}  # identity -> row, as committed writes left it
        self.inserted, self.deleted = {}, {}  # write id -> identities it inserted / deleted
        self.open, self.aborted, self.base, self.compacted = [], [], 0, set()
        self.rows_of = {}  # identity -> row (every row ever written)

    def write(self, status, kind, keys, picks):
        self.write_id += 1
        w = self.write_id
        deletes = self._pick(picks) if kind in ("delete", "update") else []
        inserts = keys if kind in ("insert", "update") else []
        self._write_deletes(f"delete_delta_{w:07d}_{w:07d}_0000", w, deletes)
        ids = self._write_inserts(f"delta_{w:07d}_{w:07d}_0000", w, inserts)
        self.inserted[w], self.deleted[w] = ids, deletes
        if status == "committed":
            for i in deletes:
                self.live.pop(i, None)
            self.live.update((i, self.rows_of[i]) for i in ids)
        else:
            (self.open if status == "open" else self.aborted).append(w)

    def _pick(self, picks):
        ids = sorted(self.live)
        return sorted({ids[p % len(ids)] for p in picks}) if ids else []

    def _write_inserts(self, name, w, keys):
        ids = []
        for b in range(BUCKETS):
            rows = [k for k in keys if k % BUCKETS == b]
            prop = encode_bucket_property(b)
            events = [(INSERT, w, prop, i, w, (k, f"v{k}@{w}")) for i, k in enumerate(rows)]
            for e in events:
                self.rows_of[e[1:4]] = {"k": e[5][0], "v": e[5][1]}
                ids.append(e[1:4])
            if events:
                write_acid_file(self.root / name / f"bucket_{b:05d}", events)
        return ids

    def _write_deletes(self, name, w, ids):
        for b in range(BUCKETS):
            mine = [i for i in ids if decode_bucket_property(i[1]).bucket == b]
            if mine:
                write_acid_file(self.root / name / f"bucket_{b:05d}", [(DELETE, *i, w, None) for i in mine])

    def compact(self, major, aborted_compactor):
        """Compact everything below the lowest open write id (what Hive's compactor may see)."""
        hi = min(self.open + [self.write_id + 1]) - 1
        lo = self.base + 1
        if hi < lo or (major, lo, hi) in self.compacted:
            return  # Hive's initiator compacts only when there is something new to compact
        if not aborted_compactor:
            self.compacted.add((major, lo, hi))
        self.txn += 1
        if aborted_compactor:
            self.aborted_txns = getattr(self, "aborted_txns", []) + [self.txn]
        committed = [w for w in range(lo, hi + 1) if w not in self.aborted]
        if major:
            self._write_rows(f"base_{hi:07d}_v{self.txn:07d}", sorted(i for i in self.live if i[0] <= hi))
            if not aborted_compactor:
                self.base = hi
        else:
            inserted = sorted(i for w in committed for i in self.inserted[w])
            self._write_rows(f"delta_{lo:07d}_{hi:07d}_v{self.txn:07d}", inserted)
            deleted = sorted((i, w) for w in committed for i in self.deleted[w])
            for b in range(BUCKETS):
                mine = [(DELETE, *i, w, None) for i, w in deleted if decode_bucket_property(i[1]).bucket == b]
                if mine:
                    write_acid_file(self.root / f"delete_delta_{lo:07d}_{hi:07d}_v{self.txn:07d}" /
                                    f"bucket_{b:05d}", mine)

    def _write_rows(self, name, ids):
        (self.root / name).mkdir()
        for b in range(BUCKETS):
            mine = [i for i in ids if decode_bucket_property(i[1]).bucket == b]
            if mine:
                rows = [(INSERT, *i, i[0], (self.rows_of[i]["k"], self.rows_of[i]["v"])) for i in mine]
                write_acid_file(self.root / name / f"bucket_{b:05d}", rows)

    def write_ids(self):
        return (f"db.t:{self.write_id}:{min(self.open, default=2**63 - 1)}:"
                f"{','.join(map(str, self.open))}:{','.join(map(str, self.aborted))}")

    def txns(self):
        aborted = getattr(self, "aborted_txns", [])
        return f"{self.txn}:{2**63 - 1}::{','.join(map(str, aborted))}"


def replay(root, history):
    """The :class:`History` of ``history``'s steps (writes and compactions), written under ``root``."""
    h = History(root)
    for step in history:
        if step[0] == "compact":
            h.compact(step[1], step[2])
        else:
            h.write(*step)
    return h


writes = st.tuples(st.sampled_from(["committed"] * 4 + ["aborted", "open"]),
                   st.sampled_from(["insert", "insert", "delete", "update"]),
                   st.lists(st.integers(0, 50), max_size=6), st.lists(st.integers(0, 100), max_size=4))
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
