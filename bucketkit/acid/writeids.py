"""Which writes a Hive ACID reader may see: Hive's ``ValidWriteIdList`` and ``ValidTxnList``.

A transactional read in Hive (and Trino) gets, from the metastore, one string per table::

    db.table:<high watermark>:<min open write id>:<open ids, comma separated>:<aborted ids>

for example ``test_hcube_2.tbl1:3:9223372036854775807::`` (write ids 1..3 committed, none open) or
``tbl:100:4:4:`` (write id 4 still open). A write id is visible when it is <= the high watermark
and neither open nor aborted. Directory names carry write ids; Hive 3's compactor adds ``_v<txn>``,
a *transaction* id that must be committed too, checked against the transaction list
(``<high watermark>:<min open txn>:<open>:<aborted>``, no table name).

Both classes follow ``org.apache.hadoop.hive.common.ValidReaderWriteIdList`` and
``ValidReadTxnList`` (Hive's storage-api): same string format, same answers, including the
ALL/SOME/NONE answers for ranges that the directory selection of :mod:`bucketkit.acid.state` uses.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from bucketkit.errors import InvalidArgumentError

__all__ = ["ValidWriteIdList", "ValidTxnList", "ALL", "SOME", "NONE", "MAX_ID", "for_table"]

MAX_ID = 2**63 - 1  # Java's Long.MAX_VALUE: "no high watermark" / "nothing open"
ALL, SOME, NONE = "ALL", "SOME", "NONE"


@dataclass(frozen=True)
class _IdList:
    """Shared logic: a high watermark and sorted exceptions (open or aborted ids)."""

    high_watermark: int = MAX_ID
    min_open: int = MAX_ID
    open_ids: tuple[int, ...] = ()
    aborted_ids: tuple[int, ...] = ()

    _HAS_TABLE = False

    @classmethod
    def parse(cls, text: str):
        """Read Hive's string form (``[db.table:]hwm:minOpen:open:aborted``); empty: all committed.

        Raises:
            InvalidArgumentError: not in Hive's format.
        """
        if not text:
            return cls()
        table, fields = (text.partition(":")[::2]) if cls._HAS_TABLE else (None, text)
        hwm, min_open, open_ids, aborted = _parse_fields(text, fields.split(":"), cls.__name__)
        extra = {"table": None if table.lower() == "null" else table} if cls._HAS_TABLE else {}
        return cls(hwm, min_open, open_ids, aborted, **extra)

    @property
    def exceptions(self) -> tuple[int, ...]:
        return tuple(sorted(self.open_ids + self.aborted_ids))

    def is_valid(self, id_: int) -> bool:
        """Committed and visible: <= the high watermark, neither open nor aborted."""
        return id_ <= self.high_watermark and id_ not in self._exception_set

    def is_aborted(self, id_: int) -> bool:
        return id_ in self._aborted_set

    def range_valid(self, lo: int, hi: int) -> str:
        """``ALL``, ``SOME`` or ``NONE`` of ``lo..hi`` valid (Hive's ``isWriteIdRangeValid``)."""
        exc = self.exceptions
        if lo > self.high_watermark:
            return NONE
        if exc and exc[0] > hi or not exc and hi <= self.high_watermark:
            return ALL
        count = max(0, hi - self.high_watermark) + _count_between(exc, lo, hi)
        return ALL if count == 0 else NONE if count == hi - lo + 1 else SOME

    def range_aborted(self, lo: int, hi: int) -> str:
        """``ALL``, ``SOME`` or ``NONE`` of ``lo..hi`` aborted (Hive's ``isWriteIdRangeAborted``)."""
        if self.high_watermark < lo:
            return NONE
        count = _count_between(tuple(sorted(self.aborted_ids)), lo, hi)
        return NONE if count == 0 else ALL if count == hi - lo + 1 else SOME

    @property
    def _exception_set(self) -> frozenset[int]:
        return frozenset(self.open_ids) | frozenset(self.aborted_ids)

    @property
    def _aborted_set(self) -> frozenset[int]:
        return frozenset(self.aborted_ids)

    def _fields_string(self) -> str:
        join = lambda ids: ",".join(str(i) for i in sorted(ids))  # noqa: E731
        return f"{self.high_watermark}:{self.min_open}:{join(self.open_ids)}:{join(self.aborted_ids)}"


def _count_between(sorted_ids: tuple[int, ...], lo: int, hi: int) -> int:
    return bisect.bisect_right(sorted_ids, hi) - bisect.bisect_left(sorted_ids, lo)


def _parse_fields(text: str, values: list[str], what: str) -> tuple[int, int, tuple[int, ...], tuple[int, ...]]:
    try:
        hwm, min_open = int(values[0]), int(values[1])
        open_ids = tuple(int(v) for v in values[2].split(",") if v) if len(values) > 2 else ()
        aborted = tuple(int(v) for v in values[3].split(",") if v) if len(values) > 3 else ()
    except (ValueError, IndexError):
        raise InvalidArgumentError(
            f"{what} {text!r}: expected {'db.table:' if what == 'ValidWriteIdList' else ''}"
            "<high watermark>:<min open id>:<open ids>:<aborted ids> with comma-separated integers") from None
    return hwm, min_open, open_ids, aborted


@dataclass(frozen=True)
class ValidWriteIdList(_IdList):
    """A table's snapshot of write ids (Hive's ``ValidReaderWriteIdList``).

    Attributes:
        table: ``db.table`` (``None`` when Hive wrote ``null``).
        high_watermark: the highest write id allocated when the snapshot was taken.
        min_open: the lowest open write id (``MAX_ID`` when none is open).
        open_ids: write ids still open (invisible).
        aborted_ids: write ids aborted (invisible; their directories may still exist).
    """

    table: str | None = None

    _HAS_TABLE = True

    def is_valid_base(self, write_id: int) -> bool:
        """A compacted ``base_W`` holds no history, so it needs every id <= W committed or aborted."""
        return write_id < self.min_open and write_id <= self.high_watermark

    def __str__(self) -> str:
        return f"{self.table or 'null'}:{self._fields_string()}"


@dataclass(frozen=True)
class ValidTxnList(_IdList):
    """The committed transactions of a snapshot (Hive's ``ValidReadTxnList``), for ``_v<txn>``."""

    def __str__(self) -> str:
        return self._fields_string()


def for_table(text: str, table: str) -> str | None:
    """The ValidWriteIdList of ``table`` (``db.table``, or ``catalog.db.table``) in ``text``, or None.

    ``text`` is what Hive keeps under ``hive.txn.tables.valid.writeids`` (``ValidTxnWriteIdList``:
    ``<txn id>$<db.t1 list>$<db.t2 list>...``), or ``$``-separated ValidWriteIdList strings alone.
    Names compare case-insensitively (the metastore lower-cases them); a name without a database
    matches no list.

    Raises:
        InvalidArgumentError: a list that is not in Hive's format.
    """
    wanted = ".".join(table.lower().split(".")[-2:])
    for item in (part.strip() for part in text.split("$")):
        if ":" not in item:
            continue  # the leading transaction id of Hive's form
        if item.partition(":")[0].strip("`").lower() == wanted:
            ValidWriteIdList.parse(item)  # a malformed list fails here, naming itself
            return item
    return None
