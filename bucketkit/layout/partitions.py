"""Hive partition directory names: ``k1=v1/k2=v2`` with Hive's path escaping.

Hive (``FileUtils.escapePathName``) and Spark (``ExternalCatalogUtils.escapePathName``) write a
partition value into a directory name by replacing the control characters U+0000..U+001F and
``"#%'*/:=?\\{[]^`` and U+007F with ``%XX`` (upper-case hex); a NULL or empty value becomes
``__HIVE_DEFAULT_PARTITION__``. Unescaping turns every ``%`` followed by two characters that Java's
``Integer.parseInt(s, 16)`` accepts back into that character, and leaves any other ``%`` alone.
The tests compare both functions with Hive's own on generated text. (Spark 4.3's copy differs in one
character: it leaves U+0000 unescaped; bucketkit writes Hive's form.)
"""

from __future__ import annotations

import unicodedata
from typing import Mapping

from bucketkit.errors import InvalidArgumentError
from bucketkit.io import HIVE_DEFAULT_PARTITION

__all__ = ["DEFAULT_PARTITION", "escape_path_name", "unescape_path_name", "partition_path",
           "parse_partition_path", "parse_partition_dir"]

DEFAULT_PARTITION = HIVE_DEFAULT_PARTITION  # this module's public name for it

_ESCAPED = frozenset([chr(c) for c in range(0, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))


def escape_path_name(value: str | None) -> str:
    """Hive's ``FileUtils.escapePathName``: ``None`` or ``""`` → ``__HIVE_DEFAULT_PARTITION__``."""
    if value is None or value == "":
        return DEFAULT_PARTITION
    if not any(c in _ESCAPED for c in value):
        return value
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def _java_hex_digit(c: str) -> int:
    # Java's Character.digit(c, 16): any Unicode decimal digit, ASCII and full-width a-f/A-F.
    if "a" <= c.lower() <= "f" and c.isascii():
        return ord(c.lower()) - ord("a") + 10
    if "\uff21" <= c <= "\uff26":
        return ord(c) - 0xFF21 + 10
    if "\uff41" <= c <= "\uff46":
        return ord(c) - 0xFF41 + 10
    return unicodedata.decimal(c, -1)


def _java_parse_hex2(text: str) -> int:
    """``Integer.parseInt(text, 16)`` for a 2-character string, or -1 where Java throws."""
    sign, digits = 1, text
    if text[0] in "+-":
        sign, digits = (-1 if text[0] == "-" else 1), text[1:]
    value = 0
    for c in digits:
        d = _java_hex_digit(c)
        if d < 0:
            return -1
        value = value * 16 + d
    return sign * value


def unescape_path_name(name: str) -> str:
    """Hive's ``FileUtils.unescapePathName`` (the inverse of :func:`escape_path_name`)."""
    if "%" not in name:
        return name
    out, i, n = [], 0, len(name)
    while i < n:
        c = name[i]
        if c == "%" and i + 2 < n:
            code = _java_parse_hex2(name[i + 1:i + 3])
            if code >= 0:
                out.append(chr(code))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def partition_path(values: Mapping[str, str | None]) -> str:
    """``{"dt": "2019-03-01", "country": "a/b"}`` → ``"dt=2019-03-01/country=a%2Fb"``.

    Keys and values are escaped; ``None`` and ``""`` values become ``__HIVE_DEFAULT_PARTITION__``.
    Keys keep their case (Hive's metastore stores them lower-case; pass them so).

    Raises:
        InvalidArgumentError: an empty key.
    """
    parts = []
    for key, value in values.items():
        if not key:
            raise InvalidArgumentError(f"partition values {dict(values)!r}: partition column names must be non-empty")
        parts.append(f"{escape_path_name(key)}={escape_path_name(None if value is None else str(value))}")
    return "/".join(parts)


def parse_partition_dir(name: str) -> tuple[str, str] | None:
    """One directory name ``k=v`` → ``(key, value)`` unescaped, or ``None`` if it is not ``k=v``."""
    key, sep, value = name.partition("=")
    if not sep or not key:
        return None
    return unescape_path_name(key), unescape_path_name(value)


def parse_partition_path(relpath: str) -> dict[str, str]:
    """``"dt=2019-03-01/country=a%2Fb"`` → ``{"dt": "2019-03-01", "country": "a/b"}``.

    ``__HIVE_DEFAULT_PARTITION__`` is returned as that string (it stands for NULL).

    Raises:
        InvalidArgumentError: a path component is not ``key=value``, or a key repeats.
    """
    out: dict[str, str] = {}
    for part in relpath.strip("/").split("/") if relpath.strip("/") else []:
        parsed = parse_partition_dir(part)
        if parsed is None:
            raise InvalidArgumentError(f"partition path {relpath!r}: component {part!r} is not key=value")
        key, value = parsed
        if key in out:
            raise InvalidArgumentError(f"partition path {relpath!r}: key {key!r} appears twice")
        out[key] = value
    return out
