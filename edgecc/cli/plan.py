"""`edgecc plan MODEL [--json] [--svg FILE]`: the arena plan `edgecc compile` would emit, as a
table, a JSON object or an SVG picture (edgecc/plan_view.py)."""
from __future__ import annotations

import json
from pathlib import Path

from edgecc.build.boards import board_options
from edgecc.cli.common import add_target, options_from_args, resolve_target
from edgecc.compiler import compile_model
from edgecc.fileio import write_file
from edgecc.plan_view import format_table, plan_report, plan_svg


def add_parser(sub) -> None:
    p = sub.add_parser("plan", help="the arena plan: buffers, offsets, lower bound, SVG")
    p.add_argument("model")
    add_target(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--svg", type=Path, help="write the plan picture (SVG) here")
    p.set_defaults(fn=run)


def run(args) -> int:
    """The plan `edgecc compile` would emit (with a --board: under the board's RAM budget)."""
    target, board = resolve_target(args)
    c = compile_model(args.model, target, "model", board_options(options_from_args(args), board))
    rep = plan_report(c.graph, c.plan, Path(args.model).name)
    rep["target"] = target.name
    rep["tiling"] = c.stats.get("tiling")
    if args.svg:
        write_file(args.svg, plan_svg(c.graph, c.plan, Path(args.model).name), "--svg")
        rep["svg"] = str(args.svg)
    print(json.dumps(rep) if args.json else format_table(rep))
    return 0
