"""`edgecc report MODEL -o report.html`: the one-page HTML report (edgecc/report.py)."""
from __future__ import annotations

from pathlib import Path

from edgecc.cli.common import add_target, nonempty, options_from_args, resolve_target
from edgecc.report import write_report


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="one self-contained HTML page: model, layers, kernels, "
                                      "memory plan, board budget")
    p.add_argument("model")
    add_target(p)
    p.add_argument("-o", "--output", required=True, type=nonempty("-o"),
                   help="the HTML file to write")
    p.set_defaults(fn=run)


def run(args) -> int:
    target, board = resolve_target(args)
    out = write_report(args.model, target, board, Path(args.output), options_from_args(args))
    print(f"wrote {out}")
    return 0
