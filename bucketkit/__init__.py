"""bucketkit: Hive/Trino-compatible bucketed tables and shuffle-free bucket joins for PySpark.

The core (naming, hashing, layout, metadata, pruning, join planning) is pure Python + pyarrow;
only ``bucketkit.spark`` imports pyspark. Public names are imported lazily so that
``import bucketkit`` stays cheap and needs no JVM.
"""

from __future__ import annotations

import importlib
from typing import Any

from bucketkit.errors import *  # noqa: F401,F403  (the one exception hierarchy)
from bucketkit.errors import __all__ as _error_names

__version__ = "0.1.0"

_EXPORTS = {
    # core, no JVM
    "TableSpec": "bucketkit.metadata",
    "SortKey": "bucketkit.metadata",
    "read_spec": "bucketkit.metadata",
    "BucketedTable": "bucketkit.table",
    "open_table": "bucketkit.table",
    "discover": "bucketkit.layout",
    "TableLayout": "bucketkit.layout",
    "hive_hash": "bucketkit.hashing",
    "bucket_number": "bucketkit.hashing",
    "bucket_ids": "bucketkit.hashing",
    "BucketFunction": "bucketkit.hashing",
    "plan_scan": "bucketkit.pruning",
    "ScanPlan": "bucketkit.pruning",
    "plan_join": "bucketkit.joinplan",
    "JoinPlan": "bucketkit.joinplan",
    # Spark layer
    "get_session": "bucketkit.spark.session",
    "write": "bucketkit.spark.writer",
    "WriteResult": "bucketkit.spark.writer",
    "scan": "bucketkit.spark.scan",
    "join": "bucketkit.spark.join",
}

__all__ = sorted([*_EXPORTS, *_error_names])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bucketkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
