"""The layer rule of docs/architecture.md, checked on the code: a module imports only modules on its
line of the diagram or above it, lazy imports inside functions included (imports for type checkers
only, under ``if TYPE_CHECKING:``, are not dependencies), and never another module's private names.
Every module of the package is on the diagram."""

from __future__ import annotations

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bucketkit"


def diagram() -> dict[str, int]:
    """Module -> layer (its line in the diagram's code block; 0 is the top)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("```", 2)[1]
    layers: dict[str, int] = {}
    # a layer starts at the line's first column; indented lines continue its description
    for number, line in enumerate(l for l in block.splitlines() if l.strip() and not l[0].isspace()):
        head = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        for name in re.findall(r"[\w/]+", head):
            layers[name.replace("/", ".")] = number
    return layers


def modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        if rel.name == "__init__":
            continue
        out[".".join(rel.parts)] = path
    return out


def imports(path: pathlib.Path, name: str, typing_too: bool = False) -> list[tuple[str, list[str], int]]:
    """(bucketkit module imported, names taken from it, line) for every import in the file (with
    ``typing_too``, those for type checkers as well)."""
    package = name.rsplit(".", 1)[0] if "." in name else ""
    found = []
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for guard in ast.walk(tree) if isinstance(guard, ast.If)
                   and getattr(guard.test, "id", "") == "TYPE_CHECKING" for stmt in guard.body for n in ast.walk(stmt)
                   if not typing_too}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name.removeprefix("bucketkit."), [], node.lineno) for a in node.names
                      if a.name.startswith("bucketkit.")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = node.module
            if node.level:  # relative: from . import x / from .x import y
                base = "bucketkit" + ("." + package if package else "")
                module = base + ("." + module if module else "")
            if module == "bucketkit" or module == "bucketkit.spark":
                prefix = "" if module == "bucketkit" else "spark."
                found += [(prefix + a.name, [], node.lineno) for a in node.names]
            elif module.startswith("bucketkit."):
                target = module.removeprefix("bucketkit.")
                # from bucketkit.<package> import <module>: that module is what is imported
                subs = [a.name for a in node.names if (PACKAGE / target.replace(".", "/") / f"{a.name}.py").is_file()]
                found += [(f"{target}.{sub}", [], node.lineno) for sub in subs]
                others = [a.name for a in node.names if a.name not in subs]
                if others:
                    found.append((target, others, node.lineno))
    return found


def test_every_module_is_on_the_diagram():
    layers = diagram()
    missing = [m for m in modules() if m not in layers]
    assert not missing, f"docs/architecture.md does not place {missing}"


def test_modules_import_only_their_layer_and_above():
    layers, mods = diagram(), modules()
    wrong = []
    for name, path in mods.items():
        for target, _, line in imports(path, name):
            if target in mods and target in layers and name in layers and layers[target] > layers[name]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target} (below it)")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_not_even_for_type_checkers():
    """A module a reader opens to follow a type never leads back to the one they came from."""
    mods = modules()
    graph = {name: {t for t, _, _ in imports(path, name, typing_too=True) if t in mods and t != name}
             for name, path in mods.items()}
    done: set[str] = set()

    def cycle_from(name: str, trail: list[str]) -> list[str] | None:
        if name in trail:
            return trail[trail.index(name):] + [name]
        if name in done:
            return None
        for target in sorted(graph[name]):
            found = cycle_from(target, trail + [name])
            if found:
                return found
        done.add(name)
        return None

    cycles = [c for c in (cycle_from(name, []) for name in sorted(graph)) if c]
    assert not cycles, " -> ".join(cycles[0])


def test_no_module_takes_another_modules_private_names():
    mods = modules()
    wrong = []
    for name, path in mods.items():
        for target, names, line in imports(path, name):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                wrong.append(f"{path.relative_to(ROOT)}:{line} takes {private} from {target}")
    assert not wrong, "\n".join(wrong)


def test_tests_take_helpers_from_support_not_from_other_test_modules():
    """Shared test helpers live in tests/support (or conftest.py): a test module imports no other."""
    wrong = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            wrong += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                      if n.split(".")[0].startswith("test_")]
    for path in sorted((ROOT / "tests").rglob("*.py")):  # and code handed to subprocesses, as text
        wrong += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}"
                  for m in re.finditer(r"^\s*from test_\w+ import .*$", path.read_text(), re.M)]
    assert not wrong, "\n".join(wrong)
