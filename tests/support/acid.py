"""Test helper: a bucketed Hive ACID table written the way Hive 3 writes one, with its expected rows.

Rows are routed to buckets by Hive's hash (bucketkit.hashing.hive, itself tested against Hive's classes),
as Hive 3's INSERT into a bucketed transactional table does; each write leaves
``delta_W_W_0000``/``delete_delta_W_W_0000`` directories of ``bucket_N`` ORC files with the exact
ACID schema and footer metadata (written with pyorc: write_acid_file). The expected rows are
kept alongside, from the writes alone: never read back through bucketkit.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pyorc
from hypothesis import strategies as st

from bucketkit.acid.naming import decode_bucket_property, encode_bucket_property
from bucketkit.hashing.hive import BucketFunction, bucket_ids

from support.engine import engine

COLUMNS = {"k": "int", "v": "string"}  # the row struct test_acid_history's writer declares


class AcidTable:
    """A bucketed ACID table under construction: writes, and the rows each snapshot must return."""

    def __init__(self, root: Path, bucket_count: int, version: int = 2) -> None:
        self.root, self.n, self.version = Path(root), bucket_count, version
        self.write_id, self.live, self.open = 0, {}, []  # live: identity -> row dict (committed writes)
        self.next_row = {}  # (write id, bucket) -> next rowId

    def bucket_of(self, k: int | None) -> int:
        return int(bucket_ids([pa.array([k], pa.int32())], ["int"], self.version, self.n)[0])

    def write(self, inserts: list[int | None], deletes: list[int] = (), committed: bool = True) -> None:
        """One write id: delete the live rows whose key is in ``deletes``, insert ``inserts``
        (an update is both in one write). ``committed=False`` leaves it open (invisible)."""
        self.write_id += 1
        w = self.write_id
        gone = sorted(i for i, row in self.live.items() if row["k"] in set(deletes))
        by_bucket: dict[int, list] = {}
        for ident in gone:
            b = self.bucket_of(self.live[ident]["k"])
            by_bucket.setdefault(b, []).append((DELETE, *ident, w, None))
        for b, events in by_bucket.items():
            write_acid_file(self.root / f"delete_delta_{w:07d}_{w:07d}_0000" / f"bucket_{b:05d}", sorted(events))
        added, by_bucket = {}, {}
        for k in inserts:
            b = self.bucket_of(k)
            ident = (w, encode_bucket_property(b), len(by_bucket.setdefault(b, [])))
            row = {"k": k, "v": f"v{k}@{w}"}
            by_bucket[b].append((INSERT, *ident, w, (k, row["v"])))
            added[ident] = row
        (self.root / f"delta_{w:07d}_{w:07d}_0000").mkdir(parents=True)  # an empty write still leaves its directory
        for b, events in by_bucket.items():
            write_acid_file(self.root / f"delta_{w:07d}_{w:07d}_0000" / f"bucket_{b:05d}", events)
        if committed:
            for ident in gone:
                del self.live[ident]
            self.live.update(added)
        else:
            self.open.append(w)

    def write_ids(self) -> str:
        """Hive's ValidWriteIdList of the snapshot the expected rows describe."""
        low = min(self.open, default=2 ** 63 - 1)
        return f"db.acid:{self.write_id}:{low}:{','.join(map(str, self.open))}:"

    def rows(self) -> list[dict]:
        return list(self.live.values())

    def open_table(self):
        from bucketkit.table import open_table

        return open_table(str(self.root), bucketed_by="k", bucket_count=self.n, bucketing_version=self.version,
                          table_columns=COLUMNS)


def misplaced_acid_table(root: Path) -> tuple[Path, int]:
    """A 4-bucket Hive v1 ACID table (int key k belongs in bucket k % 4, Hive's v1 hash of an int
    is the int) with one misplaced row in its snapshot: write 1 inserts 0..39, write 2 deletes 8,
    write 3 puts keys 12 and 16 into bucket 1's file, write 4 deletes 16 again, write 5 (open in
    ``db.acid:5:5:5:``) puts 20 there. Returns the root and bucket 1's encoded bucket property."""
    root.mkdir(parents=True)
    acid = AcidTable(root, 4, version=1)
    acid.write(list(range(40)))
    acid.write([], [8])
    prop = encode_bucket_property(1)
    write_acid_file(root / "delta_0000003_0000003_0000/bucket_00001", [(INSERT, 3, prop, 0, 3, (12, "x")),
                                                                      (INSERT, 3, prop, 1, 3, (16, "y"))])
    write_acid_file(root / "delete_delta_0000004_0000004_0000/bucket_00001", [(DELETE, 3, prop, 1, 4, None)])
    write_acid_file(root / "delta_0000005_0000005_0000/bucket_00001", [(INSERT, 5, prop, 0, 5, (20, "z"))])
    return root, prop


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


def rows(df):
    return sorted(tuple(r) for r in df.collect())


def plain(rel):
    return [tuple(r.values()) for r in po.ORCFile(engine(rel)).read().to_pylist()]


def dummy_rows():
    """Trino's dummy_id_data_orc snapshot: its original files' rows but row 2 of bucket 0 (TestOrcDeletedRows)."""
    originals = [plain(f"trino/dummy_id_data_orc/{n}")
                 for n in ("000000_0", "000001_0", "000002_0", "000002_0_copy_1", "000002_0_copy_2")]
    return sorted(r for i, f in enumerate(originals) for j, r in enumerate(f) if (i, j) != (0, 2))


def nations():
    return plain("trino/fullacidNationTableWithOriginalFiles/000000_0")


def bucketed_acid_table(root):
    """A 4-bucket (Hive v2 hash on int k) full-ACID table: keys 0..39 inserted by write 1, keys
    divisible by 3 deleted by write 2; returns the live keys (the reference)."""
    fn = BucketFunction(2, ["int"], 4)
    by_bucket = {}
    for k in range(40):
        by_bucket.setdefault(fn.bucket_of([k]), []).append(k)
    for b, keys in by_bucket.items():
        prop = encode_bucket_property(b)
        write_acid_file(root / "delta_0000001_0000001_0000" / f"bucket_{b:05d}",
                        [(INSERT, 1, prop, i, 1, (k, f"v{k}")) for i, k in enumerate(keys)])
        write_acid_file(root / "delete_delta_0000002_0000002_0000" / f"bucket_{b:05d}",
                        [(DELETE, 1, prop, i, 2, None) for i, k in enumerate(keys) if k % 3 == 0])
    return fn, [k for k in range(40) if k % 3]
