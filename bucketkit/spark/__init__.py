"""The thin Spark layer: the only part of bucketkit that imports pyspark.

Its modules are imported on first use (``bucketkit.spark.catalog.load_table`` after a bare
``import bucketkit``), so reaching ``bucketkit.spark`` alone does not start importing pyspark.
"""

from typing import Any

from bucketkit import _submodule, _submodule_names


def __getattr__(name: str) -> Any:
    return _submodule(__name__, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_submodule_names(__path__)))
