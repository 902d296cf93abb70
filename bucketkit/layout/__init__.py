"""A bucketed table's files: bucket file names, Hive partition paths, the table's versions, its spec and discovery (docs/naming.md).

Its modules are imported on first use (``bucketkit.layout.<module>`` after a bare ``import bucketkit``).
"""

from typing import Any

from bucketkit import _submodule, _submodule_names


def __getattr__(name: str) -> Any:
    return _submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_submodule_names(__path__)))
