"""Where the real engine-written files of ../shared live, for tests that read them (skipped when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# the one place that knows: ../shared beside the checkout (tests/support/engine.py -> parents[3]), or
# the workplace's copy for a clone elsewhere (CI's clean clone)
ENGINE = str(Path(__file__).resolve().parents[3] / "shared" / "data" / "engine-files")
if not os.path.isdir(ENGINE):
    ENGINE = "/work/shared/data/engine-files"
ENGINE_FILES = Path(ENGINE)
needs_engine = pytest.mark.skipif(not os.path.isdir(ENGINE), reason="../shared/data/engine-files is absent "
                                  "(real Hive 3 / Trino ACID files live outside the repository)")


def engine(rel: str) -> str:
    """The path of ``rel`` inside the engine files."""
    return os.path.join(ENGINE, rel)
