"""Writing a table: bucketkit.write's steps and the commit that switches a new version in whole (docs/writing.md).

Its modules are imported on first use (``bucketkit.writing.<module>`` after a bare ``import bucketkit``).
"""

from typing import Any

from bucketkit import _submodule, _submodule_names


def __getattr__(name: str) -> Any:
    return _submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_submodule_names(__path__)))
