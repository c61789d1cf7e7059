"""Progress bars for long work (multi-model `verify`, `verify --inputs`, the benchmark sweep).

Owns: the one rule for when a bar shows: on a terminal only (both stdout and stderr are TTYs),
never under --json, never when EDGECC_NO_PROGRESS is set; the bar (tqdm) goes to stderr and
disappears when done, so nothing extra is left in any output. Log lines printed while a bar runs
go through `say` so they do not tear the bar.
"""
from __future__ import annotations

import os
import sys
from typing import Iterable, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def wanted(json_mode: bool = False, stream=None) -> bool:
    stream = stream if stream is not None else sys.stderr
    if json_mode or os.environ.get("EDGECC_NO_PROGRESS"):
        return False
    out_tty = stream is not sys.stderr or sys.stdout.isatty()
    return bool(getattr(stream, "isatty", lambda: False)()) and out_tty


def progress(items: Iterable[T], total: int | None = None, desc: str = "",
             json_mode: bool = False, stream=None, unit: str = "it") -> Iterable[T]:
    """`items` with a bar on a terminal; `items` itself otherwise."""
    stream = stream if stream is not None else sys.stderr
    if not wanted(json_mode, stream):
        return items
    return tqdm(items, total=total, desc=desc, file=stream, leave=False, unit=unit,
                dynamic_ncols=True)


def say(text: str, file=None) -> None:
    """Print a line without breaking a running bar (tqdm.write clears and redraws the bars)."""
    file = file if file is not None else sys.stderr
    tqdm.write(text, file=file)
    file.flush()
