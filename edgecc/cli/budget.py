"""`edgecc budget MODEL --board B`: RAM and flash of the model on the board (edgecc/budget.py), as a
table or --json; exit 1 when over."""
from __future__ import annotations

import json
from pathlib import Path

from edgecc.budget import budget_model
from edgecc.build.boards import load_board
from edgecc.cli.common import (add_tiling, add_weights_section, nonempty, options_from_args,
                               size)


def add_parser(sub) -> None:
    p = sub.add_parser("budget", help="RAM and flash of the model on a board; exit 1 when over")
    p.add_argument("model")
    p.add_argument("--board", required=True, type=nonempty("--board"),
                   help="board name (boards/) or path to a board file")
    p.add_argument("--ram-limit", type=size("--ram-limit"), metavar="SIZE",
                   help="instead of the board's RAM (bytes, or e.g. 30KiB, 1MiB)")
    p.add_argument("--flash-limit", type=size("--flash-limit"), metavar="SIZE",
                   help="instead of the board's flash (bytes, or e.g. 512KiB, 1MiB)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", type=Path, help="keep the build folder here")
    add_tiling(p)
    add_weights_section(p)
    p.set_defaults(fn=run)


def run(args) -> int:
    rep = budget_model(args.model, load_board(args.board), ram_limit=args.ram_limit,
                       flash_limit=args.flash_limit, keep=args.keep,
                       options=options_from_args(args))
    print(json.dumps(rep.as_json()) if args.json else rep.table())
    return 1 if rep.over else 0
