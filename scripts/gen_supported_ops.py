#!/usr/bin/env python3
"""Write SUPPORTED_OPS.md from edgecc's op registry (README.md links to it).

Usage: python3 scripts/gen_supported_ops.py [--check]
--check exits 1 without writing when the file is out of date.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from edgecc.opsdoc import as_markdown  # noqa: E402


def main(argv: list[str]) -> int:
    check = "--check" in argv
    path, text = ROOT / "SUPPORTED_OPS.md", as_markdown()
    if path.is_file() and path.read_text() == text:
        return 0
    if check:
        print(f"{path.name} is out of date: run python3 scripts/gen_supported_ops.py")
        return 1
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
