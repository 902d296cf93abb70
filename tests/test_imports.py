"""Every module path the docs name resolves after a bare ``import bucketkit``; pyspark stays unimported.

Each check runs in a fresh interpreter, since this test process has long imported everything.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOT_MODULE_PATHS = {"bucketkit.managed", "bucketkit.zip"}  # a table property and an archive name in the docs


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def documented_paths() -> list[str]:
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = {m for p in texts for m in re.findall(r"(?<![\w.])bucketkit(?:\.[A-Za-z_]\w*)+", p.read_text())}
    return sorted(found - NOT_MODULE_PATHS)


def test_submodules_are_reachable_without_importing_pyspark():
    result = run("import sys, bucketkit\n"
                 "assert callable(bucketkit.layout.naming.bucket_of)\n"
                 "bucketkit.spark\n"
                 "assert 'pyspark' not in sys.modules, 'import bucketkit / bucketkit.spark imported pyspark'\n"
                 "assert callable(bucketkit.spark.catalog.load_table)\n"
                 "assert callable(bucketkit.spark.writer.write)\n"
                 "assert 'layout' in dir(bucketkit) and 'naming' in dir(bucketkit.layout) and 'catalog' in dir(bucketkit.spark)\n"
                 "for missing in ('bucketkit.nope', 'bucketkit.spark.nope'):\n"
                 "    try:\n"
                 "        eval(missing)\n"
                 "    except AttributeError as exc:\n"
                 "        assert 'nope' in str(exc)\n"
                 "    else:\n"
                 "        raise AssertionError(missing)\n")
    assert result.returncode == 0, result.stderr


def test_every_module_path_the_docs_name_resolves():
    paths = documented_paths()
    assert "bucketkit.layout.naming.bucket_of" in paths and "bucketkit.spark.catalog.load_table" in paths
    code = ("import functools, bucketkit\n"
            f"for path in {paths!r}:\n"
            "    functools.reduce(getattr, path.split('.')[1:], bucketkit)\n")
    result = run(code)
    assert result.returncode == 0, result.stderr


def test_static_exports_match_the_lazy_ones():
    """IDEs and type checkers read the TYPE_CHECKING imports; run time reads _EXPORTS: one list."""
    import ast

    import bucketkit

    tree = ast.parse((ROOT / "bucketkit" / "__init__.py").read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    static = {a.name: n.module for n in guarded.body for a in n.names}
    assert static == bucketkit._EXPORTS
    assert (ROOT / "bucketkit" / "py.typed").exists()
