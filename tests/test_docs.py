"""The documents stay findable and short: README.md within its ~200 lines, every relative link of
README.md and docs/ resolving to a file (and a heading, for a `#anchor`), and every document the
code cites present in the repository (docs/design.md, docs/toolchains.md, ...), never the old
copies outside it."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "boards" / "README.md",
         REPO / "examples" / "firmware" / "README.md"]
CODE_DIRS = ("edgecc", "runtime_c", "templates", "tests", "benchmarks", "scripts", ".ci", "boards")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CITED = re.compile(r"(?<![\w./])docs/[\w.-]+\.md")
OLD = re.compile(r"DESIGN\.md|shared/docs/")


def _slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", page.read_text(), re.M)}


def test_readme_is_short():
    n = len((REPO / "README.md").read_text().splitlines())
    assert n <= 200, f"README.md has {n} lines: move detail into docs/ and link it"


def test_relative_links_resolve():
    bad = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                bad.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not bad, "\n".join(bad)


def _code_files():
    for d in CODE_DIRS:
        for p in sorted((REPO / d).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".tflite",
                                                                                 ".onnx", ".npy"):
                yield p


def test_cited_documents_are_in_the_repository():
    missing, old = [], []
    for p in _code_files():
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        rel = p.relative_to(REPO)
        missing += [f"{rel}: {c}" for c in CITED.findall(text) if not (REPO / c).is_file()]
        if p != Path(__file__) and OLD.search(text):
            old.append(str(rel))
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)
    assert not old, ("cite docs/design.md and docs/toolchains.md, not DESIGN.md or "
                     "../shared/docs/: " + ", ".join(old))
