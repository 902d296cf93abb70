"""Spark Python data sources of bucketkit (``bucketkit`` format). Filled in by the scan/join work."""

from __future__ import annotations

from typing import Any


def register_data_sources(spark: Any) -> None:
    """Register bucketkit's Python data sources with ``spark`` (idempotent)."""
