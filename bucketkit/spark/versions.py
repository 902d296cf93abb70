"""``bucketkit.history`` and ``bucketkit.vacuum``: the versions bucketkit keeps of a table it writes.

Every commit keeps the version it makes whole in the table's store (``.<name>.bucketkit.versions``
beside the table; hard links, so a file unchanged between versions is stored once): a read planned on
a version reads it there after later commits, and ``as_of=`` reads an older one. A version replaced
more than the retention period ago (7 days; ``BUCKETKIT_RETENTION`` seconds) is removed at the next
commit, or by :func:`vacuum`. Paths need no Spark; catalog names resolve through ``spark``.
"""

from __future__ import annotations

from typing import Any

from bucketkit.layout.versions import TablePaths, Version
from bucketkit.layout.versions import history as _history
from bucketkit.table import BucketedTable, TableRef, open_table, reference_kind
from bucketkit.writing.retention import VacuumResult
from bucketkit.writing.retention import vacuum as _vacuum

__all__ = ["history", "vacuum"]


def _table(table: TableRef, spark: Any) -> BucketedTable:
    if reference_kind(table) == "catalog":
        from bucketkit.spark.catalog import resolve_table

        return resolve_table(spark, table, reads_files=False)  # a TEXTFILE table's versions too
    return table if isinstance(table, BucketedTable) else open_table(table)


def history(table: TableRef, *, spark: Any = None) -> list[Version]:
    """The table's versions, oldest first: number, commit time, operation, files, bytes, rows written,
    and when a removed one was removed (empty for a table no bucketkit commit has written since
    versions are kept). ``bucketkit history <table>`` prints them."""
    bt = _table(table, spark)
    return _history(bt.filesystem, TablePaths.at(bt.filesystem, bt.location))


def vacuum(table: TableRef, *, retain: float | None = None, spark: Any = None, dry_run: bool = False) -> VacuumResult:
    """Remove the table's kept versions replaced more than ``retain`` seconds ago (default: the
    retention period, 7 days; ``0``: all but the live version) and report what was freed. Time travel to
    a removed version, or a read planned on it, then fails with
    :class:`~bucketkit.errors.VersionNotFoundError`. ``dry_run`` only reports."""
    bt = _table(table, spark)
    return _vacuum(bt.location, retain=retain, filesystem=bt.filesystem, dry_run=dry_run)
