"""Every ```python block in README.md and docs/*.md runs (the docs cannot drift from the code).

Convention for doc authors:
    * The ```python blocks of one file run in order, in one namespace, so a later block may use
      what an earlier one defined. The namespace starts with ``bucketkit`` (imported), ``tmp`` (a
      fresh empty directory, as a str; also the working directory while the blocks run) and, when
      any block of the file mentions ``spark``, ``spark``: the test session (local[2], Hive enabled).
    * A block fenced as ```python no-run is shown but not run (e.g. it needs S3 or a cluster).
    * ```console, ```bash, ```text and other blocks are never run.
A failing block's traceback points at the Markdown file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")


def code_blocks(text: str) -> list[tuple[str, int, str]]:
    """``(info string, line number of the first code line, code)`` for each fenced block."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, info, indent = match["fence"], match["info"].strip(), len(match["indent"])
        body, j = [], i + 1
        while j < len(lines):
            close = FENCE.match(lines[j])
            if close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence) and not close["info"].strip():
                break
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        blocks.append((info, i + 2, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def runnable(info: str) -> bool:
    words = info.lower().split()
    return bool(words) and words[0] in ("python", "py", "python3") and "no-run" not in words


def doc_files() -> list[Path]:
    return [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if p.exists()]


def _params():
    params = []
    for path in doc_files():
        blocks = [b for b in code_blocks(path.read_text(encoding="utf-8")) if runnable(b[0])]
        if not blocks:
            continue
        marks = [pytest.mark.spark] if any(re.search(r"\bspark\b", code) for _, _, code in blocks) else []
        params.append(pytest.param(path, marks=marks, id=str(path.relative_to(ROOT))))
    return params


@pytest.mark.parametrize("path", _params())
def test_doc_code_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request):
    import bucketkit

    blocks = [b for b in code_blocks(path.read_text(encoding="utf-8")) if runnable(b[0])]
    namespace = {"__name__": f"docs_{path.stem}", "bucketkit": bucketkit, "tmp": str(tmp_path)}
    if any(re.search(r"\bspark\b", code) for _, _, code in blocks):
        namespace["spark"] = request.getfixturevalue("spark")
    monkeypatch.chdir(tmp_path)
    for _, line, code in blocks:
        # Pad so that tracebacks report the line in the Markdown file.
        exec(compile("\n" * (line - 1) + code, str(path), "exec"), namespace)


def test_fence_parser_handles_info_strings_and_nesting():
    text = "\n".join([
        "intro", "```python", "x = 1", "```", "```python no-run", "boom()", "```",
        "````markdown", "```python", "not a block of its own", "```", "````", "```console", "$ make demo", "```",
        "  ```py", "  y = 2", "  ```",
    ])
    blocks = code_blocks(text)
    assert [(info, line) for info, line, _ in blocks] == [
        ("python", 3), ("python no-run", 6), ("markdown", 9), ("console", 14), ("py", 17)]
    assert [runnable(info) for info, _, _ in blocks] == [True, False, False, False, True]
    assert blocks[0][2] == "x = 1\n" and blocks[4][2] == "y = 2\n"
    assert "```python" in blocks[2][2]


def test_doc_links_resolve():
    """Relative links between the docs point at files that exist."""
    broken = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)} -> {target}")
    assert not broken, f"links to files that do not exist: {broken}"
