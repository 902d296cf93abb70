"""Shuffle-free joins of bucketed tables: sides, memory, the plan, reading, spilling and the join kernels (docs/joins.md).

Its modules are imported on first use (``bucketkit.joins.<module>`` after a bare ``import bucketkit``).
"""

from typing import Any

from bucketkit import _submodule, _submodule_names


def __getattr__(name: str) -> Any:
    return _submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_submodule_names(__path__)))
