"""Hive ACID tables: directory names, the bucket codec and original files' row-id bases.

An ACID (transactional) table or partition directory holds

* ``base_<W>``: everything committed up to write id ``W`` (written by major compaction or
  ``INSERT OVERWRITE``);
* ``delta_<min>_<max>[_<stmt>]``: rows inserted by write ids ``min..max``;
* ``delete_delta_<min>_<max>[_<stmt>]``: row ids deleted by them;
* original files (``000000_0``...) left from before the table became transactional.

Hive 3 adds ``_v<txn>`` (the compactor's visibility transaction) to compacted directory names;
both spellings are read. Inside the directories the data files are ``bucket_NNNNN`` (plus
``_orc_acid_version`` and Hive streaming's ``bucket_NNNNN_flush_length`` side files, which carry
no rows).

Which directories make up a snapshot is :mod:`bucketkit.acid.state`'s job (Hive's
``AcidUtils.getAcidState``); reading one bucket of it is :mod:`bucketkit.acid.read`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from bucketkit.errors import InvalidArgumentError

__all__ = ["AcidDir", "parse_acid_dir", "BucketCodec",
           "decode_bucket_property", "encode_bucket_property", "original_row_id_bases",
           "ACID_VERSION_FILE", "is_acid_side_file"]

ACID_VERSION_FILE = "_orc_acid_version"
_FLUSH_LENGTH = re.compile(r"bucket_\d+(?:_\d+)?_flush_length", re.ASCII)

_BASE = re.compile(r"base_(\d+)(?:_v(\d+))?", re.ASCII)
_DELTA = re.compile(r"(delete_delta|delta)_(\d+)_(\d+)(?:_(\d+))?(?:_v(\d+))?", re.ASCII)


@dataclass(frozen=True, order=True)
class AcidDir:
    """A parsed ACID directory name.

    Attributes:
        kind: ``"base"``, ``"delta"`` or ``"delete_delta"``.
        min_write_id: first write id covered (equals ``max_write_id`` for a base).
        max_write_id: last write id covered (``W`` of ``base_W``).
        statement_id: the ``_stmt`` suffix of a delta written by one statement, else ``None``.
        visibility_txn_id: Hive 3's ``_v<txn>`` suffix of compacted directories, else ``None``.
    """

    kind: str
    min_write_id: int
    max_write_id: int
    statement_id: int | None = None
    visibility_txn_id: int | None = None

    @property
    def name(self) -> str:
        """The directory name Hive 3 writes for this record (Hive's zero padding)."""
        vis = "" if self.visibility_txn_id is None else f"_v{self.visibility_txn_id:07d}"
        if self.kind == "base":
            return f"base_{self.max_write_id:07d}{vis}"
        stmt = "" if self.statement_id is None else f"_{self.statement_id:04d}"
        return f"{self.kind}_{self.min_write_id:07d}_{self.max_write_id:07d}{stmt}{vis}"

    @classmethod
    def base(cls, write_id: int, *, visibility_txn_id: int | None = None) -> "AcidDir":
        return cls("base", write_id, write_id, None, visibility_txn_id)

    @classmethod
    def delta(cls, min_write_id: int, max_write_id: int, statement_id: int | None = None, *,
              delete: bool = False, visibility_txn_id: int | None = None) -> "AcidDir":
        if min_write_id > max_write_id:
            raise InvalidArgumentError(f"delta write ids {min_write_id}..{max_write_id}: min must be <= max")
        return cls("delete_delta" if delete else "delta", min_write_id, max_write_id, statement_id,
                   visibility_txn_id)


def parse_acid_dir(name: str) -> AcidDir | None:
    """``base_0000005`` / ``delta_0000001_0000003_0000`` / ``delete_delta_...`` → :class:`AcidDir`."""
    m = _BASE.fullmatch(name)
    if m is not None:
        vis = int(m.group(2)) if m.group(2) else None
        return AcidDir.base(int(m.group(1)), visibility_txn_id=vis)
    m = _DELTA.fullmatch(name)
    if m is None or int(m.group(2)) > int(m.group(3)):
        return None
    return AcidDir(m.group(1), int(m.group(2)), int(m.group(3)),
                   int(m.group(4)) if m.group(4) else None, int(m.group(5)) if m.group(5) else None)


def is_acid_side_file(name: str) -> bool:
    """Files inside ACID directories that hold no rows (``_orc_acid_version``, ``*_flush_length``)."""
    return name == ACID_VERSION_FILE or _FLUSH_LENGTH.fullmatch(name) is not None


@dataclass(frozen=True)
class BucketCodec:
    """A decoded ACID ``bucket`` row-id field (Hive's ``BucketCodec``).

    V0 is the raw bucket id. V1 packs ``001`` (3 bits), 1 reserved bit, the bucket (writer) id
    (12 bits), 4 reserved bits and the statement id (12 bits): 536936448 is version 1, bucket 1,
    statement 0.
    """

    version: int
    bucket: int
    statement_id: int


def decode_bucket_property(value: int) -> BucketCodec:
    """Decode the ``bucket`` field of an ACID row id.

    Raises:
        InvalidArgumentError: an unknown codec version (top 3 bits neither 000 nor 001).
    """
    value &= 0xFFFFFFFF  # the field is a signed int in ORC; reinterpret as unsigned 32 bits
    version = value >> 29
    if version == 0:
        return BucketCodec(0, value, 0)
    if version == 1:
        return BucketCodec(1, (value >> 16) & 0xFFF, value & 0xFFF)
    raise InvalidArgumentError(f"ACID bucket property {value}: unknown BucketCodec version {version} (expected 0 or 1)")


def encode_bucket_property(bucket: int, statement_id: int = 0, version: int = 1) -> int:
    """Encode a bucket id (and statement id) the way Hive 3 writes it (V1 by default).

    Raises:
        InvalidArgumentError: a value out of the codec's range.
    """
    if version == 0:
        if statement_id:
            raise InvalidArgumentError(f"BucketCodec V0 has no statement id (got {statement_id})")
        if not 0 <= bucket < 1 << 29:
            raise InvalidArgumentError(f"BucketCodec V0: bucket {bucket} out of range 0..{(1 << 29) - 1}")
        return bucket
    if version != 1:
        raise InvalidArgumentError(f"BucketCodec version {version!r}: expected 0 or 1")
    if not 0 <= bucket <= 0xFFF or not 0 <= statement_id <= 0xFFF:
        raise InvalidArgumentError(
            f"BucketCodec V1: bucket {bucket} and statement id {statement_id} must each be in 0..4095")
    return (1 << 29) | (bucket << 16) | statement_id


def original_row_id_bases(files: Sequence[tuple[str, int, int]]) -> dict[str, int]:
    """Row-id base of each original file: rows in earlier original files of its bucket.

    Hive gives rows of pre-ACID files the row id (0, bucket, base + position), where base counts
    the rows of the same bucket's original files that sort before this one by name.

    Args:
        files: ``(name, bucket, row_count)`` of every original file of one table/partition.

    Returns:
        ``{name: base}``.
    """
    bases: dict[str, int] = {}
    seen: dict[int, int] = {}
    for name, bucket, rows in sorted(files):
        bases[name] = seen.get(bucket, 0)
        seen[bucket] = bases[name] + rows
    return bases
