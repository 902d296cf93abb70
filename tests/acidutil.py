"""Test helper: a bucketed Hive ACID table written the way Hive 3 writes one, with its expected rows.

Rows are routed to buckets by Hive's hash (bucketkit.hashing, itself tested against Hive's classes),
as Hive 3's INSERT into a bucketed transactional table does; each write leaves
``delta_W_W_0000``/``delete_delta_W_W_0000`` directories of ``bucket_N`` ORC files with the exact
ACID schema and footer metadata (written with pyorc, see test_acid_history). The expected rows are
kept alongside, from the writes alone: never read back through bucketkit.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from bucketkit.acid import encode_bucket_property
from bucketkit.hashing import bucket_ids

from test_acid_history import DELETE, INSERT, write_acid_file

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
