"""Which directories and files of a Hive ACID partition make up a snapshot (``getAcidState``).

A port of Hive's ``AcidUtils.getAcidState`` (with ``processBaseDir``, ``processDeltaDir`` and
``findBestWorkingDeltas``), cross-checked with Trino's ``AcidTables.getAcidState``:

* A directory whose ``_v<txn>`` visibility transaction is not committed (per the optional
  :class:`~bucketkit.acid.writeids.ValidTxnList`) is ignored; an aborted one is listed as aborted.
* **Base**: the valid ``base_W`` with the highest ``W`` wins and earlier bases become obsolete. A
  base written by the compactor (``_v<txn>`` suffix, or a ``_metadata_acid`` file saying
  ``"dataFormat": "compacted"``) erases history, so it is valid only if every write id <= W is
  committed or aborted (``W < minOpenWriteId``); a base written by ``INSERT OVERWRITE`` is valid
  when its write id is, and skipped when aborted. For one write id, the compactor's base beats
  the ``INSERT OVERWRITE`` one. If bases exist but none is valid and the oldest was compacted, the
  snapshot cannot be built (Hive's "not enough history").
* **Deltas** (``delta_`` and ``delete_delta_``): those whose write ids are all aborted are
  aborted, those with no valid write id are skipped; the rest are sorted by min write id, wider
  ranges first, then statement id (none first), then name, and kept only if they add write ids
  past what is already read: this drops deltas covered by the base or by a minor compaction,
  keeps every statement of a multi-statement transaction and each ``delete_delta`` twin of a
  kept ``delta``.
* **Original files** (from before the table became transactional): every visible file at the
  partition root or in a non-ACID sub-directory, sorted by path; obsolete once a base exists.

Hidden names (``_``/``.`` prefix) are skipped at every level, as Trino does. Rows are not read
here: :mod:`bucketkit.acid.read` reads one bucket of a state.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from bucketkit.acid.naming import AcidDir, is_acid_side_file, parse_acid_dir
from bucketkit.errors import AcidStateError, CorruptTableError, InvalidArgumentError
from bucketkit.io import is_hidden_path
from bucketkit.acid.writeids import NONE, ValidTxnList, ValidWriteIdList

__all__ = ["AcidState", "acid_state", "select_current", "METADATA_FILE", "file_bucket"]

METADATA_FILE = "_metadata_acid"
_ACID_PREFIXES = ("base_", "delta_", "delete_delta_")
_BUCKET_FILE = re.compile(r"bucket_(\d+)(?:_\d+)?", re.ASCII)
_ORIGINAL_FILE = re.compile(r"(\d+)_\d+(?:_copy_\d+)?", re.ASCII)


@dataclass(frozen=True)
class AcidState:
    """The directories and files of one ACID table/partition that a snapshot reads.

    Paths are relative to the partition directory.

    Attributes:
        base: the chosen ``base_`` directory, or ``None``.
        deltas: chosen ``delta_`` directories, in Hive's read order.
        delete_deltas: chosen ``delete_delta_`` directories, in Hive's read order.
        obsolete: directories and original files superseded by a base or a compaction.
        aborted: directories written only by aborted writes (or an aborted ``_v`` transaction).
        original_files: original (pre-ACID) data files read, sorted by path (Hive's row-id order).
        files: chosen directory → its data files (side files and hidden names left out).
    """

    base: str | None
    deltas: tuple[str, ...]
    delete_deltas: tuple[str, ...]
    obsolete: tuple[str, ...]
    aborted: tuple[str, ...] = ()
    original_files: tuple[str, ...] = ()
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def originals_current(self) -> bool:
        """Whether original files are read (no base exists)."""
        return self.base is None


def file_bucket(path: str) -> int | None:
    """Hive's bucket id of an ACID or original file name (``bucket_00003``, ``000003_0_copy_1``)."""
    name = posixpath.basename(path)
    m = _BUCKET_FILE.fullmatch(name) or _ORIGINAL_FILE.fullmatch(name)
    return int(m.group(1)) if m else None


@dataclass
class _Listing:
    dirs: dict[str, AcidDir] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    originals: list[str] = field(default_factory=list)
    original_dirs: set[str] = field(default_factory=set)


def _parse_top(name: str) -> AcidDir | None:
    if not name.startswith(_ACID_PREFIXES):
        return None
    acid = parse_acid_dir(name)
    if acid is None:
        raise CorruptTableError(f"{name}: looks like a Hive ACID directory but is not base_W[_vT], "
                                f"delta_min_max[_stmt][_vT] or delete_delta_min_max[_stmt][_vT]")
    return acid


def _group(entries: Iterable[tuple[str, int | None]]) -> _Listing:
    out = _Listing()
    for rel, size in entries:
        rel = rel.strip("/")
        if is_hidden_path(rel):
            continue
        parts = rel.split("/")
        acid = _parse_top(parts[0]) if size is None or len(parts) > 1 else None  # a file is never a base/delta
        if acid is not None:
            out.dirs[parts[0]] = acid
            if len(parts) > 1 and size is not None and not is_acid_side_file(parts[-1]):
                out.files.setdefault(parts[0], []).append(rel)
        elif size is None:
            out.original_dirs.add(parts[0])
        elif size > 0:  # Hive ignores empty files (ignoreEmptyFiles); they hold no rows
            out.originals.append(rel)
            if len(parts) > 1:
                out.original_dirs.add(parts[0])
    return out


def _is_compacted(name: str, acid: AcidDir, metadata: Mapping[str, str]) -> bool:
    if (acid.visibility_txn_id or 0) > 0:
        return True
    text = metadata.get(name)
    if text is None:
        return False
    try:
        meta = json.loads(text)
        version, fmt = meta.get("thisFileVersion"), str(meta.get("dataFormat")).lower()
    except (ValueError, AttributeError):
        raise CorruptTableError(f"{name}/{METADATA_FILE}: not a JSON object") from None
    if version != "0" or fmt not in ("compacted", "truncated"):
        raise CorruptTableError(f"{name}/{METADATA_FILE}: thisFileVersion={version!r}, dataFormat={fmt!r}; "
                                f"expected version \"0\" and dataFormat \"compacted\" or \"truncated\"")
    return fmt == "compacted"


@dataclass
class _Choice:
    base: tuple[str, AcidDir, bool] | None = None  # name, parsed, compacted
    oldest: tuple[str, AcidDir, bool] | None = None
    obsolete: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    working: list[tuple[str, AcidDir]] = field(default_factory=list)


def _usable(name: str, acid: AcidDir, txns: ValidTxnList, choice: _Choice) -> bool:
    vis = acid.visibility_txn_id or 0
    if txns.is_valid(vis):
        return True
    if txns.is_aborted(vis):
        choice.aborted.append(name)
    return False


def _valid_base(acid: AcidDir, compacted: bool, write_ids: ValidWriteIdList) -> bool:
    if compacted:
        return write_ids.is_valid_base(acid.max_write_id)
    return write_ids.is_valid(acid.max_write_id)  # INSERT OVERWRITE: logically a delta


def _process_base(name: str, acid: AcidDir, compacted: bool, write_ids: ValidWriteIdList,
                  txns: ValidTxnList, choice: _Choice) -> None:
    w = acid.max_write_id
    if choice.oldest is None or choice.oldest[1].max_write_id > w:
        choice.oldest = (name, acid, compacted)
    if write_ids.is_aborted(w) and not compacted:
        choice.aborted.append(name)
        return
    best = choice.base
    if (best is None or best[1].max_write_id < w
            or best[1].max_write_id == w and compacted and txns.is_valid(acid.visibility_txn_id or 0)):
        if _valid_base(acid, compacted, write_ids):
            if best is not None:
                choice.obsolete.append(best[0])
            choice.base = (name, acid, compacted)
    else:
        choice.obsolete.append(name)


def _process_delta(name: str, acid: AcidDir, write_ids: ValidWriteIdList, choice: _Choice) -> None:
    if write_ids.range_aborted(acid.min_write_id, acid.max_write_id) == "ALL":
        choice.aborted.append(name)
    elif write_ids.range_valid(acid.min_write_id, acid.max_write_id) != NONE:
        choice.working.append((name, acid))


def _stmt(acid: AcidDir) -> int:
    return -1 if acid.statement_id is None else acid.statement_id


def _best_deltas(choice: _Choice, write_ids: ValidWriteIdList) -> list[tuple[str, AcidDir]]:
    """Hive's ``findBestWorkingDeltas``: one pass over the deltas in ``ParsedDelta`` order."""
    working = sorted(choice.working, key=lambda na: (na[1].min_write_id, -na[1].max_write_id, _stmt(na[1]), na[0]))
    current = choice.base[1].max_write_id if choice.base else 0
    last_stmt, prev, chosen = -1, None, []
    for name, acid in working:
        if acid.max_write_id > current:
            if write_ids.range_valid(current + 1, acid.max_write_id) != NONE:
                chosen.append((name, acid))
                current, last_stmt, prev = acid.max_write_id, _stmt(acid), acid
        elif acid.max_write_id == current and last_stmt >= 0:
            chosen.append((name, acid))  # every statement of a multi-statement transaction
            prev = acid
        elif prev is not None and (acid.min_write_id, acid.max_write_id, _stmt(acid)) == (
                prev.min_write_id, prev.max_write_id, _stmt(prev)):
            chosen.append((name, acid))  # the delete_delta twin of a chosen delta (or vice versa)
            prev = acid
        else:
            choice.obsolete.append(name)
    return chosen


def _not_enough_history(choice: _Choice, write_ids: ValidWriteIdList) -> AcidStateError:
    exc = write_ids.exceptions
    return AcidStateError(
        f"not enough history for the snapshot (high watermark {write_ids.high_watermark}, lowest invalid "
        f"write id {exc[0] if exc else 'x'}): the oldest base, {choice.oldest[0]}, was written by a "
        f"compaction that includes write ids still open in this snapshot, and no older base or deltas exist")


def acid_state(entries: Iterable[tuple[str, int | None]], write_ids: ValidWriteIdList | str | None = None,
               txns: ValidTxnList | str | None = None, *,
               metadata: Mapping[str, str] | None = None) -> AcidState:
    """Choose the base, deltas and original files of one partition for a snapshot (Hive's rules).

    Args:
        entries: ``(relative path, size)`` of everything under the partition directory; size
            ``None`` for a directory (an empty ACID directory still counts).
        write_ids: the snapshot (Hive's string or a :class:`ValidWriteIdList`); ``None``: every
            write id found is committed.
        txns: committed transactions for ``_v<txn>`` suffixes; ``None``: all committed.
        metadata: ``base_``/``delta_`` directory name → text of its ``_metadata_acid`` file.

    Raises:
        AcidStateError: bases exist but none is usable for this snapshot (not enough history).
        CorruptTableError: a ``base_``/``delta_`` name Hive cannot parse, or a bad ``_metadata_acid``.
    """
    write_ids = _coerce(write_ids, ValidWriteIdList)
    txns = _coerce(txns, ValidTxnList)
    listing, choice = _group(entries), _Choice()
    for name in sorted(listing.dirs):
        acid = listing.dirs[name]
        if not _usable(name, acid, txns, choice):
            continue
        if acid.kind == "base":
            _process_base(name, acid, _is_compacted(name, acid, metadata or {}), write_ids, txns, choice)
        else:
            _process_delta(name, acid, write_ids, choice)
    chosen = _best_deltas(choice, write_ids)
    if choice.base is None and choice.oldest is not None and choice.oldest[2]:
        raise _not_enough_history(choice, write_ids)
    originals = sorted(listing.originals)
    if choice.base is not None:
        choice.obsolete += originals + sorted(listing.original_dirs)
        originals = []
    base = choice.base[0] if choice.base else None
    read = ([base] if base else []) + [n for n, _ in chosen]
    return AcidState(base=base,
                     deltas=tuple(n for n, a in chosen if a.kind == "delta"),
                     delete_deltas=tuple(n for n, a in chosen if a.kind == "delete_delta"),
                     obsolete=tuple(sorted(choice.obsolete)), aborted=tuple(sorted(choice.aborted)),
                     original_files=tuple(originals),
                     files={n: tuple(sorted(listing.files.get(n, ()))) for n in read})


def _coerce(value, cls):
    if value is None or isinstance(value, str):
        return cls.parse(value or "")
    if not isinstance(value, cls):
        raise InvalidArgumentError(f"{value!r}: expected a {cls.__name__} or Hive's string form of one")
    return value


def select_current(dir_names: Iterable[str]) -> AcidState:
    """Hive's choice of current ACID directories among ``dir_names``, every write id committed.

    Raises:
        InvalidArgumentError: a name is not an ACID directory name.
    """
    names = list(dir_names)
    for name in names:
        if parse_acid_dir(name) is None:
            raise InvalidArgumentError(
                f"{name!r} is not an ACID directory name (base_W, delta_min_max, delete_delta_min_max)")
    return acid_state((n, None) for n in names)
