"""The Java side of docs/architecture.md's layer rule, checked on the code: every Java package under
``io.bucketkit`` is on the "JVM packages" diagram, and a file imports (or names fully qualified in its
code) only packages on the lines above its own; every package has a ``package-info.java`` and at most
15 files. Names of Java classes written in the Python code, the tests and the docs name classes that
exist (a moved class leaves no stale name behind)."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
JVM = ROOT / "jvm"
MAX_FILES = 15


def diagram() -> list[str]:
    """The Java packages, lowest first: the first code block after the "JVM packages" heading."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("### JVM packages", 1)[1].split("```", 2)[1]
    return [line.split()[0].removeprefix("io.bucketkit.") for line in block.splitlines()
            if line.strip() and not line[0].isspace()]


def java_files() -> list[pathlib.Path]:
    """Every Java source of the jar: jvm/src and each release's jvm/release/<x.y>."""
    return sorted((JVM / "src").rglob("*.java")) + sorted((JVM / "release").rglob("*.java"))


def code(source: str) -> str:
    """The source without comments and string or char literals (which may name anything)."""
    return re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", " ", source, flags=re.S)


def package_of(source: str) -> str:
    match = re.search(r"^package io\.bucketkit\.(\w+);", code(source), re.M)
    assert match, "no package io.bucketkit.<name>; line"
    return match.group(1)


def references(source: str) -> list[tuple[str, int]]:
    """(bucketkit package, line) for each import of io.bucketkit.<package>... and each fully qualified
    use of one in the code; the file's own package line is not one."""
    text = code(source)
    found = []
    for match in re.finditer(r"\bio\.bucketkit\.(\w+)\b", text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if text[line_start:match.start()].strip() == "package":
            continue
        found.append((match.group(1), text.count("\n", 0, match.start()) + 1))
    return found


def test_every_package_is_on_the_diagram():
    order = diagram()
    assert len(order) == len(set(order)), f"a package is on the diagram twice: {order}"
    packages = {package_of(f.read_text()) for f in java_files()}
    assert packages - set(order) == set(), f"docs/architecture.md does not place {sorted(packages - set(order))}"
    assert set(order) - packages == set(), f"the diagram names packages with no code: {sorted(set(order) - packages)}"


def test_files_sit_in_their_packages_directory():
    wrong = [str(f.relative_to(ROOT)) for f in java_files() if f.parent.name != package_of(f.read_text())]
    assert not wrong, f"package line and directory disagree: {wrong}"


def test_packages_import_only_packages_above_them():
    order = diagram()
    rank = {p: i for i, p in enumerate(order)}
    wrong = []
    for path in java_files():
        source = path.read_text()
        own = package_of(source)
        for target, line in references(source):
            if target not in rank:
                wrong.append(f"{path.relative_to(ROOT)}:{line} names io.bucketkit.{target}, on no line of the diagram")
            elif rank[target] > rank[own]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({own}) uses io.bucketkit.{target} (below it)")
    assert not wrong, "\n".join(wrong)


def test_every_package_has_its_package_info_and_at_most_15_files():
    wrong = []
    for package in diagram():
        directory = JVM / "src" / "io" / "bucketkit" / package
        if not (directory / "package-info.java").is_file():
            wrong.append(f"{directory.relative_to(ROOT)} has no package-info.java")
        common = len(list(directory.glob("*.java")))
        per_release = [len(list(r.glob(f"io/bucketkit/{package}/*.java"))) for r in (JVM / "release").iterdir()]
        files = common + max(per_release, default=0)  # a build adds one release's files
        if files > MAX_FILES:
            wrong.append(f"io.bucketkit.{package} has {files} files (at most {MAX_FILES})")
    assert not wrong, "\n".join(wrong)


def _class_exists(package: str, name: str) -> bool:
    roots = [JVM / "src", *(JVM / "release").iterdir(), ROOT / "tests" / "jvm"]
    return any((root / "io" / "bucketkit" / package / f"{name}.java").is_file() for root in roots)


def test_java_class_names_in_python_tests_and_docs_exist():
    """io.bucketkit.<package>.<Class> written anywhere in Python or Markdown, and the names handed to
    bucketkit.spark.driver.jar_class ("<package>.<Class>"), name a Java file that exists."""
    texts = [*ROOT.glob("bucketkit/**/*.py"), *ROOT.glob("bucketkit/**/*.properties"), *ROOT.glob("tests/**/*.py"),
             *ROOT.glob("benchmarks/**/*.py"), *ROOT.glob("buildtools/**/*.py"), *ROOT.glob("docs/*.md"),
             ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    wrong = []
    for path in texts:
        if not path.is_file():
            continue
        text = path.read_text()
        names = re.findall(r"\bio\.bucketkit\.(\w+)\.([A-Z]\w*)", text)
        names += re.findall(r"\bjar_class\(\s*\w+\s*,\s*\"(\w+)\.(\w+)\"", text)
        wrong += [f"{path.relative_to(ROOT)}: io.bucketkit.{p}.{c}" for p, c in names if not _class_exists(p, c)]
    assert not wrong, "no such Java class:\n" + "\n".join(sorted(set(wrong)))


def test_the_names_users_configure_are_the_classes_themselves():
    """spark.sql.catalog.spark_catalog and spark.sql.extensions name io.bucketkit.spark classes (what
    deployments carry, docs/sql.md), and Python configures those names."""
    for name in ("BucketkitCatalog", "BucketkitExtensions"):
        source = (JVM / "src" / "io" / "bucketkit" / "spark" / f"{name}.java").read_text()
        assert re.search(rf"^public (final )?class {name}\b", source, re.M), name
    assert '"io.bucketkit.spark.BucketkitCatalog"' in (ROOT / "bucketkit" / "spark" / "sqlstatus.py").read_text()
    assert '"io.bucketkit.spark.BucketkitExtensions"' in (ROOT / "bucketkit" / "spark" / "session.py").read_text()
