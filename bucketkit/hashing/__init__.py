"""Hive's bucketing hashes (v1, v2) and Spark's bucketBy hash: scalar, and vectorised over Arrow arrays (docs/hashing.md).

Its modules are imported on first use (``bucketkit.hashing.<module>`` after a bare ``import bucketkit``).
"""

from typing import Any

from bucketkit import _submodule, _submodule_names


def __getattr__(name: str) -> Any:
    return _submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_submodule_names(__path__)))
