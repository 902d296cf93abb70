"""Where the real engine-written files of ../shared live, for tests that read them (skipped when absent)."""

from __future__ import annotations

import os

import pytest

ENGINE = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "engine-files")
if not os.path.isdir(ENGINE):
    ENGINE = "/work/shared/data/engine-files"
needs_engine = pytest.mark.skipif(not os.path.isdir(ENGINE), reason="../shared/data/engine-files is absent "
                                  "(real Hive 3 / Trino ACID files live outside the repository)")


def engine(rel: str) -> str:
    """The path of ``rel`` inside the engine files."""
    return os.path.join(ENGINE, rel)
