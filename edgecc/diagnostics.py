"""What the user sees when something goes wrong: one clean line on stderr, and the exit status.

Owns: the error line's form (control characters stripped, whitespace folded, a length cap, so no
model string can paint the terminal or flood it), the `{"error": ...}` JSON object of `--json`,
and telling a bug in edgecc (exit 3, `edgecc: internal error: ... (op N, OPNAME)`) from bad input
(exit 2). The op of an internal error is the innermost `Node` the failing code was working on.
"""
from __future__ import annotations

import json
import sys
import traceback

from edgecc.errors import InternalError
from edgecc.ir import Node
from edgecc.names import visible_text

MAX_LINE = 600  # characters of one error line, prefix included (a 10 kB tensor name stays short)
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


def clean_line(message: str, limit: int = MAX_LINE) -> str:
    """`message` as one printable line: ANSI escape sequences removed, control characters (ESC,
    BEL, DEL, C1, newlines) spaces, bidirectional overrides and other format characters removed
    (edgecc.names.visible_text), runs of whitespace one space, and a line longer than `limit`
    ends in '...'."""
    text = " ".join(visible_text(message).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _op_of(exc: BaseException) -> tuple[int, str] | None:
    """(index, op name) of the innermost IR node any frame of exc's traceback held as `n`/`node`."""
    found = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        for key in ("n", "node"):
            v = frame.f_locals.get(key)
            if isinstance(v, Node):
                found = (v.index, v.op)
    return found


def internal_message(exc: BaseException) -> str:
    """The text after `edgecc: internal error: `: what was raised, then `(op N, OPNAME)`."""
    root = exc.__cause__ if isinstance(exc, InternalError) and exc.__cause__ else exc
    text = str(exc) if isinstance(exc, InternalError) else f"{type(exc).__name__}: {exc}"
    where = None
    if isinstance(exc, InternalError) and exc.op_index is not None:
        where = (exc.op_index, exc.op_name)
    where = where or _op_of(root)
    suffix = f" (op {where[0]}, {where[1]})" if where else ""
    return clean_line(text, MAX_LINE - 80) + suffix


def report(kind: str, message: str, as_json: bool) -> None:
    """Print the one error line on stderr (kind 'error' or 'internal error'); with --json also
    `{"error": ...}` (and `"internal": true` for a bug) on stdout."""
    line = clean_line(f"edgecc: {kind}: {message}")
    print(line, file=sys.stderr)
    if as_json:
        obj = {"error": line[len(f"edgecc: {kind}: "):]}
        if kind != "error":
            obj["internal"] = True
        print(json.dumps(obj))
