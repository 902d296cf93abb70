"""Apache Hudi tables: a directory with a ``.hoodie/`` timeline, read through hudi-rs (the optional
``hudi`` package) file slice by file slice; Hudi's bucket index is a hash family of its own
(:mod:`bucketkit.hashing.hudi`) (docs/hudi.md).

Its modules are imported on first use (``bucketkit.hudi.<module>`` after a bare ``import bucketkit``).
"""

from typing import Any

from bucketkit import _submodule, _submodule_names


def __getattr__(name: str) -> Any:
    return _submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_submodule_names(__path__)))
