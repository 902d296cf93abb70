"""A table directory's data files, as every engine lists them: hidden names (``.``, ``_``) skipped."""

from __future__ import annotations

from pathlib import Path


def data_files(root) -> list[Path]:
    """The data files under ``root``, sorted; none under or named with a leading ``.`` or ``_`` (staging,
    kept versions, ``_SUCCESS``, ``.crc``)."""
    root = Path(root)
    return sorted(p for p in root.rglob("*") if p.is_file() and not any(
        part.startswith((".", "_")) for part in p.relative_to(root).parts))
