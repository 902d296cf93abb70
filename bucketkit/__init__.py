"""bucketkit: Hive/Trino-compatible bucketed tables and shuffle-free bucket joins for PySpark.

The core (naming, hashing, layout, metadata, pruning, join planning) is pure Python + pyarrow;
only ``bucketkit.spark`` imports pyspark. Public names and submodules (``bucketkit.layout.naming``,
``bucketkit.spark.catalog``) are imported lazily on first use, so that ``import bucketkit`` stays
cheap and needs no JVM.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from typing import TYPE_CHECKING, Any

from bucketkit.errors import *  # noqa: F401,F403  (the one exception hierarchy)
from bucketkit.errors import __all__ as _error_names

__version__ = "0.1.0"

_EXPORTS = {
    # core, no JVM
    "TableSpec": "bucketkit.layout.metadata",
    "SortKey": "bucketkit.layout.metadata",
    "read_spec": "bucketkit.layout.metadata",
    "BucketedTable": "bucketkit.table",
    "open_table": "bucketkit.table",
    "discover": "bucketkit.layout.discovery",
    "TableLayout": "bucketkit.layout.discovery",
    "hive_hash": "bucketkit.hashing.hive",
    "bucket_number": "bucketkit.hashing.hive",
    "bucket_ids": "bucketkit.hashing.hive",
    "BucketFunction": "bucketkit.hashing.hive",
    "reference_kind": "bucketkit.table",
    "ScanPlan": "bucketkit.pruning.plan",
    "JoinPlan": "bucketkit.joins.plan",
    "validate": "bucketkit.validation",
    "ValidationResult": "bucketkit.validation",
    # plans: no JVM unless a catalog name or SQL filter needs Spark
    "plan_scan": "bucketkit.spark.scan",
    "plan_join": "bucketkit.spark.join",
    "resolve_table": "bucketkit.spark.catalog",
    # Spark layer
    "get_session": "bucketkit.spark.session",
    "write": "bucketkit.spark.writer",
    "rebucket": "bucketkit.spark.rebucket",
    "WriteResult": "bucketkit.writing.steps",
    "scan": "bucketkit.spark.scan",
    "join": "bucketkit.spark.join",
    "sql_status": "bucketkit.spark.sqlstatus",
    "history": "bucketkit.spark.versions",
    "vacuum": "bucketkit.spark.versions",
}

__all__ = sorted([*_EXPORTS, *_error_names])

if TYPE_CHECKING:  # what static tools and IDEs see; at run time __getattr__ imports on first use
    from bucketkit.hashing.hive import BucketFunction, bucket_ids, bucket_number, hive_hash
    from bucketkit.joins.plan import JoinPlan
    from bucketkit.layout.discovery import TableLayout, discover
    from bucketkit.layout.metadata import SortKey, TableSpec, read_spec
    from bucketkit.pruning.plan import ScanPlan
    from bucketkit.spark.catalog import resolve_table
    from bucketkit.spark.join import join, plan_join
    from bucketkit.spark.scan import plan_scan, scan
    from bucketkit.spark.session import get_session
    from bucketkit.spark.sqlstatus import sql_status
    from bucketkit.spark.versions import history, vacuum
    from bucketkit.spark.rebucket import rebucket
    from bucketkit.spark.writer import write
    from bucketkit.table import BucketedTable, open_table, reference_kind
    from bucketkit.validation import ValidationResult, validate
    from bucketkit.writing.steps import WriteResult


def _submodule(package: str, name: str) -> Any:
    """``package.name`` imported on first use (``bucketkit.layout.naming`` after a bare ``import bucketkit``)."""
    if name.startswith("__") or importlib.util.find_spec(f"{package}.{name}") is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return importlib.import_module(f"{package}.{name}")


def _submodule_names(path: Any) -> list[str]:
    return [m.name for m in pkgutil.iter_modules(path)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        return _submodule(__name__, name)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | set(_submodule_names(__path__)))
