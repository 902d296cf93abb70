"""The one exception hierarchy of bucketkit.

Every error bucketkit raises on purpose derives from :class:`BucketkitError`. Errors about bad
arguments also derive from :class:`ValueError` (as pyarrow's ``ArrowInvalid`` does), so callers
that already catch ``ValueError`` keep working. Every message names the file, value or option at
fault and what was expected.
"""

from __future__ import annotations

__all__ = [
    "BucketkitError",
    "InvalidArgumentError",
    "UnsupportedTypeError",
    "LayoutError",
    "CorruptTableError",
    "AcidStateError",
    "BucketCountMismatchError",
    "SpecMismatchError",
    "TableExistsError",
    "TableNotFoundError",
    "ViewError",
    "UnsupportedTableError",
    "CommitError",
    "ConcurrentModificationError",
    "UnfinishedCommitError",
    "VersionNotFoundError",
    "JavaNotFoundError",
    "JvmBuildError",
    "JoinMemoryError",
    "InsideLayoutWarning",
]


class BucketkitError(Exception):
    """Base class of every error bucketkit raises on purpose."""


class InvalidArgumentError(BucketkitError, ValueError):
    """An argument or option has a value bucketkit cannot accept."""


class UnsupportedTypeError(InvalidArgumentError):
    """A column's type cannot be bucketed on (or hashed) the way Hive/Trino do it."""


class LayoutError(BucketkitError):
    """The files of a table or partition do not form a valid bucketed layout."""


class CorruptTableError(LayoutError):
    """A file is present that no valid bucketed layout allows (Trino: "table is corrupt").

    Examples: a bucket number >= the bucket count, a visible sub-directory inside a bucket
    directory, Hive names mixed with Spark ``bucketBy`` names.
    """


class AcidStateError(LayoutError):
    """A Hive ACID table cannot be read as asked: no base usable for the snapshot (not enough
    history), or a data file of an ACID version Hive 3 would refuse (the message names the file)."""


class BucketCountMismatchError(LayoutError):
    """Original (name-less) scheme: the number of files differs from the bucket count."""


class SpecMismatchError(InvalidArgumentError):
    """A table's bucketing spec differs from the one asked for (append, join, scan)."""


class TableExistsError(BucketkitError):
    """``mode="error"`` and the target table already exists."""


class TableNotFoundError(BucketkitError):
    """The table (path or catalog name) does not exist or has no bucketkit metadata."""


class ViewError(InvalidArgumentError):
    """A catalog name that is a view (temporary or not), not a table: it has no files of its own to read, write or
    plan (:func:`bucketkit.scan` reads a view as Spark SQL does)."""


class UnsupportedTableError(BucketkitError):
    """A table of a kind bucketkit recognises but cannot read as its engine does: an Apache Hudi table
    version other than 6, 8 or 9, a Hudi feature its reader (hudi-rs) refuses, or the optional reader
    itself not installed (the message names the table, the version or feature, and what to install)."""


class CommitError(BucketkitError):
    """A write could not be committed; the table is left as it was before the write."""


class ConcurrentModificationError(CommitError):
    """Something changed the table between the start of a write and its commit, or between the
    planning and the reading of a read (a file it planned was overwritten)."""


class UnfinishedCommitError(CommitError):
    """A write died while switching its new version into place; ``recover`` restores the table."""


class VersionNotFoundError(BucketkitError):
    """A table version asked for (time travel) does not exist, or vacuum removed it."""


class JavaNotFoundError(BucketkitError):
    """No Java 17+ runtime (or, to build the catalog, no ``javac``) was found."""


class JvmBuildError(BucketkitError):
    """bucketkit's Java sources could not be compiled into its Spark catalog jar (javac's messages
    included), the jar is missing from an installed package or targets another Spark, or a session
    that should have bucketkit's catalog does not."""


class JoinMemoryError(BucketkitError):
    """A bucket group cannot be joined within the join's memory budget (the message names the
    budget, where it comes from, the group and the remedy)."""


class InsideLayoutWarning(UserWarning):
    """A directory table's commit went inside the table (its parent may not be written): engines that read
    the directory itself, not through bucketkit or a metastore, see none of its files."""
