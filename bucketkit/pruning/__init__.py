"""Scans: the filter language and filters projected onto buckets and partitions, the scan plan (docs/pruning.md).

Its modules are imported on first use (``bucketkit.pruning.<module>`` after a bare ``import bucketkit``).
"""

from typing import Any

from bucketkit import _submodule, _submodule_names


def __getattr__(name: str) -> Any:
    return _submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_submodule_names(__path__)))
