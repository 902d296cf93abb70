"""Bucket file names: which bucket a data file belongs to, and the names bucketkit writes.

One small, immutable, picklable object per naming scheme, each with ``parse(name)`` (a
:class:`BucketName`, or ``None`` for a name of another scheme) and, for the schemes bucketkit
writes, ``format(...)``:

========================  ===============================================  ==========================
object                    whole-name pattern                               written by
========================  ===============================================  ==========================
:data:`LEGACY_PRESTO`     ``\\d{8}_\\d{6}_\\d{5}_[a-z0-9]{5}_bucket-(\\d+)``   Presto before 2019
                          ``(?:[-_.].*)?``
:data:`HIVE`              ``(\\d+)_\\d+.*``                                   Hive, Trino, Spark's Hive
                                                                           writer
:data:`ACID`              ``bucket_(\\d+)(_\\d+)?``                           Hive ACID (inside
                                                                           base/delta directories)
:data:`SPARK`             ``.*_(\\d+)(?:\\..*)?``                              Spark ``bucketBy``
:data:`ORIGINAL`          none: the i-th file in name order is bucket i    old Hive, hand-made tables
========================  ===============================================  ==========================

:func:`parse_bucket_name` and :func:`bucket_of` try legacy Presto, Hive and ACID in that order
(Trino's order: the Hive pattern would read ``20190526_072952_00009_fn7s5_bucket-00234`` as
bucket 20190526). Spark ``bucketBy`` names are never guessed by them: Spark's pattern reads Hive's
``000003_0_copy_2`` as bucket 2, and Spark tables hash rows differently anyway.

Bucket ids are plain ints. A Hive-pattern name whose number does not fit 31 bits (Hive's
``Integer.parseInt`` throws on it) still parses, with its real value, so that the layout reports
it as a bucket id beyond the bucket count (a corrupt table) instead of silently falling back to
the original scheme.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Iterable, Sequence

from bucketkit.errors import BucketCountMismatchError, InvalidArgumentError

__all__ = [
    "BucketName", "NamingScheme", "HIVE", "LEGACY_PRESTO", "ACID", "SPARK", "ORIGINAL",
    "TRINO_ORDER", "naming_scheme", "parse_bucket_name", "bucket_of", "bucket_and_scheme",
    "buckets_of_names", "is_spark_hive_insert",
]

# Python refuses int() of more than 4300 digits; no file system allows names that long anyway.
_MAX_DIGITS = 4000
# Java's "." (Hive and Trino use java.util.regex) stops at every line terminator, not only "\n";
# and \d is ASCII-only there, hence re.ASCII below.
_ANY = "[^\n\r\u0085\u2028\u2029]"


def _to_int(digits: str) -> int | None:
    return int(digits) if len(digits) <= _MAX_DIGITS else None


@dataclass(frozen=True)
class BucketName:
    """A file name parsed by one naming scheme.

    Attributes:
        name: the whole file name.
        scheme: ``"hive"``, ``"legacy-presto"``, ``"acid"`` or ``"spark"``.
        bucket: the bucket id (may exceed the bucket count: the layout checks that).
        attempt: Hive: the task attempt number after the bucket id; ACID: the optional attempt id.
        copy: Hive: ``N`` of a ``_copy_N`` suffix (files appended by ``INSERT INTO``).
        tail: Hive: what follows the id, attempt and copy (Trino's ``<uuid>_<queryid>``, Spark's
            ``part-...``), without its leading ``_``; legacy Presto: everything after the id.
        query_id: legacy Presto: the ``yyyymmdd_hhmmss_nnnnn_xxxxx`` query id.
        task: Spark: the task number of ``part-NNNNN-...``.
        job_id: Spark: the job UUID of ``part-NNNNN-<job_id>_BBBBB...``.
        extension: Spark: the suffix after the bucket id (``.c000.snappy.parquet``).
    """

    name: str
    scheme: str
    bucket: int
    attempt: int | None = None
    copy: int | None = None
    tail: str | None = None
    query_id: str | None = None
    task: int | None = None
    job_id: str | None = None
    extension: str | None = None


class NamingScheme:
    """Base of the naming scheme objects; each scheme is a singleton compared by name."""

    name: ClassVar[str] = ""

    def parse(self, name: str) -> BucketName | None:  # pragma: no cover - overridden
        raise NotImplementedError

    def matches(self, name: str) -> bool:
        """Whether ``name`` is a bucket file name of this scheme."""
        return self.parse(name) is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamingScheme) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("bucketkit.layout.naming", self.name))

    def __reduce__(self):
        # Unpickle to the module's singleton, so executors compare schemes by identity too.
        return naming_scheme, (self.name,)

    def __repr__(self) -> str:
        return f"naming_scheme({self.name!r})"


def _check_bucket(bucket: int, scheme: str) -> None:
    if not isinstance(bucket, int) or isinstance(bucket, bool) or bucket < 0:
        raise InvalidArgumentError(f"{scheme} file name: bucket={bucket!r}, expected an int >= 0")


class HiveNaming(NamingScheme):
    """Hive's ``<bucket>_<attempt>[_copy_<n>][_<tail>]``, also written by Trino and Spark.

    Trino drops Hive's need for a leading ``0`` (``234_99`` is bucket 234, as in Hive 2.3).
    """

    name = "hive"
    _PATTERN = re.compile(r"(\d+)_(\d+)(?:_copy_(\d+)(?=\Z|[_.]))?(" + _ANY + "*)", re.ASCII)
    _COPY_TAIL = re.compile(r"copy_\d+(?:\Z|[_.])", re.ASCII)

    def parse(self, name: str) -> BucketName | None:
        m = self._PATTERN.fullmatch(name)
        if m is None:
            return None
        bucket, attempt = _to_int(m.group(1)), _to_int(m.group(2))
        if bucket is None or attempt is None:
            return None
        rest = m.group(4)
        tail = (rest[1:] if rest.startswith("_") else rest) or None
        copy = int(m.group(3)) if m.group(3) is not None and len(m.group(3)) <= _MAX_DIGITS else None
        return BucketName(name, self.name, bucket, attempt=attempt, copy=copy, tail=tail)

    def format(self, bucket: int, *, attempt: int = 0, copy: int | None = None, tail: str | None = None) -> str:
        """``%06d_%d`` (+ ``_copy_N``) (+ ``_`` + tail; a tail starting with ``.`` is appended as is).

        Raises:
            InvalidArgumentError: a negative number, or a tail that would read back as a copy number.
        """
        _check_bucket(bucket, self.name)
        if not isinstance(attempt, int) or attempt < 0:
            raise InvalidArgumentError(f"hive file name: attempt={attempt!r}, expected an int >= 0")
        out = f"{bucket:06d}_{attempt}"
        if copy is not None:
            if not isinstance(copy, int) or copy < 0:
                raise InvalidArgumentError(f"hive file name: copy={copy!r}, expected an int >= 0 or None")
            out += f"_copy_{copy}"
        if tail:
            if copy is None and self._COPY_TAIL.match(tail):
                raise InvalidArgumentError(f"hive file name: tail={tail!r} would read back as a copy number")
            out += tail if tail.startswith(".") else "_" + tail
        return out


class LegacyPrestoNaming(NamingScheme):
    """Presto's pre-2019 ``<query id>_bucket-<bucket>[tail]``; tried before the Hive pattern."""

    name = "legacy-presto"
    _PATTERN = re.compile(r"(\d{8}_\d{6}_\d{5}_[a-z0-9]{5})_bucket-(\d+)((?:[-_.]" + _ANY + "*)?)", re.ASCII)
    _QUERY_ID = re.compile(r"\d{8}_\d{6}_\d{5}_[a-z0-9]{5}", re.ASCII)

    def parse(self, name: str) -> BucketName | None:
        m = self._PATTERN.fullmatch(name)
        if m is None or (bucket := _to_int(m.group(2))) is None:
            return None
        return BucketName(name, self.name, bucket, query_id=m.group(1), tail=m.group(3))

    def format(self, bucket: int, *, query_id: str, tail: str = "") -> str:
        """``f"{query_id}_bucket-{bucket:05d}{tail}"``.

        Raises:
            InvalidArgumentError: ``query_id`` is not ``yyyymmdd_hhmmss_nnnnn_xxxxx`` or ``tail``
                does not start with ``-``, ``_`` or ``.``.
        """
        _check_bucket(bucket, self.name)
        if not isinstance(query_id, str) or not self._QUERY_ID.fullmatch(query_id):
            raise InvalidArgumentError(
                f"legacy-presto file name: query_id={query_id!r}, expected yyyymmdd_hhmmss_nnnnn_xxxxx "
                f"(e.g. 20190526_072952_00009_fn7s5)")
        if tail and tail[0] not in "-_.":
            raise InvalidArgumentError(f"legacy-presto file name: tail={tail!r} must start with '-', '_' or '.'")
        return f"{query_id}_bucket-{bucket:05d}{tail}"


class AcidNaming(NamingScheme):
    """Hive ACID ``bucket_<bucket>[_<attempt>]`` inside ``base_``/``delta_`` directories."""

    name = "acid"
    _PATTERN = re.compile(r"bucket_(\d+)(?:_(\d+))?", re.ASCII)

    def parse(self, name: str) -> BucketName | None:
        m = self._PATTERN.fullmatch(name)
        if m is None or (bucket := _to_int(m.group(1))) is None:
            return None
        attempt = _to_int(m.group(2)) if m.group(2) is not None else None
        return BucketName(name, self.name, bucket, attempt=attempt)

    def format(self, bucket: int, *, attempt: int | None = None) -> str:
        """``bucket_%05d`` (+ ``_<attempt>``)."""
        _check_bucket(bucket, self.name)
        if attempt is None:
            return f"bucket_{bucket:05d}"
        if not isinstance(attempt, int) or attempt < 0:
            raise InvalidArgumentError(f"acid file name: attempt={attempt!r}, expected an int >= 0 or None")
        return f"bucket_{bucket:05d}_{attempt}"


class SparkNaming(NamingScheme):
    """Spark ``bucketBy``: the last ``_<digits>`` before the end or a ``.`` (Spark's BucketingUtils)."""

    name = "spark"
    _PATTERN = re.compile(_ANY + r"*_(\d+)(?:\." + _ANY + "*)?", re.ASCII)
    _WRITER = re.compile(r"part-(\d+)-(" + _ANY + r"+)_(\d+)(\." + _ANY + "*)?", re.ASCII)

    def parse(self, name: str) -> BucketName | None:
        m = self._PATTERN.fullmatch(name)
        if m is None or (bucket := _to_int(m.group(1))) is None:
            return None
        w = self._WRITER.fullmatch(name)
        if w is not None and w.group(3) == m.group(1):
            return BucketName(name, self.name, bucket, task=_to_int(w.group(1)), job_id=w.group(2),
                              extension=w.group(4) or "")
        return BucketName(name, self.name, bucket)

    def format(self, bucket: int, *, task: int = 0, job_id: str, extension: str = ".c000.snappy.parquet") -> str:
        """``f"part-{task:05d}-{job_id}_{bucket:05d}{extension}"`` (what Spark's writer produces)."""
        _check_bucket(bucket, self.name)
        if not isinstance(task, int) or task < 0:
            raise InvalidArgumentError(f"spark file name: task={task!r}, expected an int >= 0")
        if not job_id or "/" in job_id:
            raise InvalidArgumentError(f"spark file name: job_id={job_id!r}, expected a non-empty id such as a UUID")
        if extension and not extension.startswith("."):
            raise InvalidArgumentError(f"spark file name: extension={extension!r} must start with '.'")
        return f"part-{task:05d}-{job_id}_{bucket:05d}{extension}"


class OriginalNaming(NamingScheme):
    """No name pattern: sorted by name, the i-th of exactly ``bucket_count`` files is bucket i."""

    name = "original"

    def parse(self, name: str) -> None:
        """Always ``None``: a single name says nothing in this scheme (see :meth:`assign`)."""
        return None

    def assign(self, names: Iterable[str], bucket_count: int, *, directory: str = "") -> list[tuple[int, str]]:
        """``[(bucket, name), ...]`` in name order.

        Raises:
            BucketCountMismatchError: the number of names is not ``bucket_count`` (zero-byte files
                count too: they are empty buckets).
        """
        ordered = sorted(names)
        if len(ordered) != bucket_count:
            raise BucketCountMismatchError(
                f"{directory or 'directory'}: {len(ordered)} file(s) do not follow a bucket naming scheme, so "
                f"the original scheme applies and needs exactly one file per bucket: found {len(ordered)} "
                f"file(s), table declares {bucket_count} bucket(s)")
        return list(enumerate(ordered))


HIVE = HiveNaming()
LEGACY_PRESTO = LegacyPrestoNaming()
ACID = AcidNaming()
SPARK = SparkNaming()
ORIGINAL = OriginalNaming()

#: The schemes a file name is tried against, in Trino's order.
TRINO_ORDER: tuple[NamingScheme, ...] = (LEGACY_PRESTO, HIVE, ACID)

_BY_NAME = {s.name: s for s in (HIVE, LEGACY_PRESTO, ACID, SPARK, ORIGINAL)}
_ALIASES = {"legacy_presto": "legacy-presto", "presto": "legacy-presto", "trino": "hive", "bucketby": "spark"}


def naming_scheme(flavor: str | NamingScheme) -> NamingScheme:
    """The scheme object for ``"hive"``, ``"legacy-presto"``, ``"acid"``, ``"spark"`` or ``"original"``.

    Raises:
        InvalidArgumentError: an unknown flavor (the message lists the valid ones).
    """
    if isinstance(flavor, NamingScheme):
        return flavor
    key = str(flavor).strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return _BY_NAME[key]
    except KeyError:
        raise InvalidArgumentError(f"naming scheme {flavor!r}: expected one of {sorted(_BY_NAME)}") from None


def parse_bucket_name(name: str, schemes: Sequence[NamingScheme] = TRINO_ORDER) -> BucketName | None:
    """Parse ``name`` with the first matching scheme (legacy Presto, Hive, ACID by default)."""
    for scheme in schemes:
        parsed = scheme.parse(name)
        if parsed is not None:
            return parsed
    return None


# One alternation in Trino's order: the first alternative that matches the whole name wins, exactly
# as trying the schemes one after the other, at the cost of a single regex call (100k names).
_TRINO_ALTERNATION = re.compile("|".join(f"(?:{s._PATTERN.pattern})" for s in TRINO_ORDER), re.ASCII)
_BUCKET_GROUPS = ((2, "legacy-presto"), (4, "hive"), (8, "acid"))


def bucket_and_scheme(name: str) -> tuple[int, str] | None:
    """``(bucket id, scheme name)`` in Trino's order, or ``None``; same answer as :func:`parse_bucket_name`."""
    m = _TRINO_ALTERNATION.fullmatch(name)
    if m is None:
        return None
    for group, scheme in _BUCKET_GROUPS:
        digits = m.group(group)
        if digits is not None:
            if len(digits) > _MAX_DIGITS or (group == 4 and len(m.group(5)) > _MAX_DIGITS):
                return None
            return int(digits), scheme
    return None  # pragma: no cover - one alternative always holds the bucket group


# Each pattern matches the start of a name of its scheme, as far as that decides the scheme and the
# bucket, in the names of a directory joined after a "/" each ("/" is in no file name, so a match
# starts where a name starts). What follows a match may be anything but a line terminator (checked once
# for all the names), so findall finds as many matches as names exactly when every name is of that
# scheme. Digits are capped as bucket_and_scheme caps them (a longer run declines).
_DIGITS = rf"(\d{{1,{_MAX_DIGITS}}})"
_ONE_SCHEME = {
    LEGACY_PRESTO.name: re.compile(rf"/\d{{8}}_\d{{6}}_\d{{5}}_[a-z0-9]{{5}}_bucket-{_DIGITS}(?![^-_./])", re.ASCII),
    HIVE.name: re.compile(rf"/{_DIGITS}_\d{{1,{_MAX_DIGITS}}}(?!\d)", re.ASCII),
    ACID.name: re.compile(rf"/bucket_{_DIGITS}(?:_\d+)?(?![^/])", re.ASCII),
}
_LINE_ENDS = tuple(_ANY[2:-1])  # what _ANY never matches: a name holding one is of no scheme


def buckets_of_names(names: Sequence[str]) -> tuple[str, list[int]] | None:
    """``(scheme name, bucket ids)`` of ``names`` when all are of one scheme, or ``None``.

    The answer :func:`bucket_and_scheme` gives name by name, in one regex pass over all names: the
    files of one directory of a bucketed table are named by one scheme, and a table has 100k+ of
    them. ``None`` when the names are of several schemes or of none, or when a name is one the one-pass
    patterns leave to :func:`bucket_and_scheme` (a ``/``, a line terminator, a number over 4,000 digits,
    Hive names with ``_bucket-`` in them, which may be legacy Presto ones, read first in Trino's order):
    ask :func:`bucket_and_scheme` for each name then.
    """
    if not names:
        return None
    first = bucket_and_scheme(names[0])
    if first is None:
        return None
    joined = "/" + "/".join(names)
    if joined.count("/") != len(names) or any(end in joined for end in _LINE_ENDS):
        return None
    if first[1] == HIVE.name and "_bucket-" in joined:
        return None
    found = _ONE_SCHEME[first[1]].findall(joined)
    if len(found) != len(names):
        return None
    return first[1], list(map(int, found))


def bucket_of(name: str) -> int | None:
    """The bucket id of a file name in Trino's order (legacy Presto, Hive, ACID), or ``None``.

    >>> bucket_of("000234_0_copy_1"), bucket_of("20190526_072952_00009_fn7s5_bucket-00234")
    (234, 234)
    """
    found = bucket_and_scheme(name)
    return None if found is None else found[0]


# Spark's Hive-compatible bucketed INSERT: "%05d_0_part-%05d-<job uuid>_%05d.c000[.<codec>].<format>".
_SPARK_HIVE_INSERT = re.compile(r"\d+_\d+_part-\d{5}-[0-9a-f-]{36}_\d{5}\.c\d{3}" + _ANY + "*", re.ASCII)


def is_spark_hive_insert(name: str) -> bool:
    """Whether a file name is one Spark's own ``INSERT`` into a Hive bucketed table writes.

    Such files follow the Hive scheme (their bucket parses as usual) but Spark always places their
    rows by the Hive v1 hash, whatever the table's ``bucketing_version`` says.
    """
    return _SPARK_HIVE_INSERT.fullmatch(name) is not None
