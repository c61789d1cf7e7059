"""`edgecc ops [--json]`: the supported ops, read from the op registry (edgecc/opsdoc.py)."""
from __future__ import annotations

from edgecc.opsdoc import as_json, as_text


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="the supported ops: types, constraints, reference oracle")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=run)


def run(args) -> int:
    print(as_json() if args.json else as_text())
    return 0
