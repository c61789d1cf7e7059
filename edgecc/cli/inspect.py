"""`edgecc inspect MODEL`: the graph as imported and after every pass (edgecc/inspect.py)."""
from __future__ import annotations

from pathlib import Path

from edgecc.cli.common import add_target, options_from_args, resolve_target
from edgecc.inspect import inspect_model


def add_parser(sub) -> None:
    p = sub.add_parser("inspect", help="the graph before and after each pass")
    p.add_argument("model")
    p.add_argument("--json", action="store_true")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--dump-ir", type=Path)
    add_target(p)
    p.set_defaults(fn=run)


def run(args) -> int:
    target, board = resolve_target(args)
    return inspect_model(args, target, board.name if board else None, options_from_args(args))
