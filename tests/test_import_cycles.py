"""The package's import graph has no cycles, and every module says what it owns.

One concern per module: a module's size is not a rule (splitting one concern in two to meet a
line count hides it), but a module over ~600 lines is a smell this test reports (printed under
`pytest -s` / in the captured output; it does not fail) so that a reviewer asks whether it holds
more than one concern.

The graph is read with `ast` (no import runs): every `import edgecc.x` / `from edgecc.x import y`
anywhere in a module (module level or inside a function) is an edge to edgecc.x, or to
edgecc.x.y when y is a module. A package's __init__ is the package's own node. Imports under
`if TYPE_CHECKING:` are skipped (they never run).
"""
from __future__ import annotations

import ast
from pathlib import Path

import edgecc

ROOT = Path(edgecc.__file__).parent
SMELL_LINES = 600  # reported, not failed: see the module docstring


def _modules() -> dict[str, Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_lines(tree)
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[:len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            for t in targets:
                while t and t not in mods and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in mods and t != name:
                    graph[name].add(t)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_module_says_what_it_owns_and_long_ones_are_reported():
    """Each module with code opens with a docstring (what it owns); those over SMELL_LINES
    lines are printed as a smell to look at, one concern per module being the rule."""
    undocumented, long = [], {}
    for p in sorted(ROOT.rglob("*.py")):
        text = p.read_text()
        name = str(p.relative_to(ROOT.parent))
        if text.strip() and ast.get_docstring(ast.parse(text, name)) is None:
            undocumented.append(name)
        if (n := len(text.splitlines())) > SMELL_LINES:
            long[name] = n
    for name, n in sorted(long.items(), key=lambda kv: -kv[1]):
        print(f"smell: {name} has {n} lines (over {SMELL_LINES}): one concern?")
    assert not undocumented, f"modules without a docstring saying what they own: {undocumented}"
