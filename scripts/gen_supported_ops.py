#!/usr/bin/env python3
"""Write SUPPORTED_OPS.md (and the README's generated ops block) from edgecc's op registry.

Usage: python3 scripts/gen_supported_ops.py [--check]
--check exits 1 without writing when either file is out of date.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from edgecc.opsdoc import as_markdown, readme_block  # noqa: E402

BEGIN = "<!-- BEGIN GENERATED: supported ops (do not edit by hand; generated from edgecc/ops/) -->"
END = "<!-- END GENERATED: supported ops -->"


def readme_text(current: str) -> str:
    pat = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pat.search(current):
        return current
    return pat.sub(lambda _: f"{BEGIN}\n{readme_block()}\n{END}", current)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    targets = {ROOT / "SUPPORTED_OPS.md": as_markdown()}
    readme = ROOT / "README.md"
    if readme.is_file():
        targets[readme] = readme_text(readme.read_text())
    stale = [p for p, text in targets.items() if not p.is_file() or p.read_text() != text]
    if check:
        for p in stale:
            print(f"{p.name} is out of date: run python3 scripts/gen_supported_ops.py")
        return 1 if stale else 0
    for p in stale:
        p.write_text(targets[p])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
