"""Hostile board files, derived from the shipped boards (issue 26).

Structure-aware mutations of a board's parsed table, written back as JSON (so any shape can be
expressed): a value replaced by a hostile string (CMake, make, linker-script and shell injection,
path escapes, control and bidi characters, long strings), a value of the wrong type, a boundary
number, a key removed or an unknown one added, a table nested deeply, a list made long; and byte
mutations of the TOML text itself (truncation, bit flips, duplicated or removed chunks).
`board_mutants(seed, count)` yields (name, suffix, bytes).
"""
from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Iterator

import numpy as np

from fuzz.mutate import random_mutation

BOARDS = Path(__file__).resolve().parent.parent.parent / "boards"

HOSTILE_STRINGS = [
    "../../../../x", "/etc/passwd", "a/b", "..", ".", "", " ", "-rf",
    'x" )\nexecute_process(COMMAND touch /tmp/edgecc-pwned)\nset(Y "',
    "x */ /DISCARD/ : { *(*) } /* y", "$(shell touch /tmp/edgecc-pwned)", "`id`", "x;y",
    "${CMAKE_COMMAND}", "x\\", "x\ny", "x\x1b[2Jy\x07", "x\u202ey", "x\u0000y", "é", "\ud800",
    "A" * 10_000, "-O2 -fplugin=/tmp/x.so", '-D"x"', "-Wl,-T,/etc/x", "#", "%", "\x7f",
]
HOSTILE_NUMBERS = [0, -1, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, -(2**63), 1.5,
                   float("inf"), float("nan"), True, False]
HOSTILE_VALUES = HOSTILE_STRINGS + HOSTILE_NUMBERS + [[], {}, [[]], {"a": {}}, ["x"] * 1000,
                                                      [1, "x", None]]


def shipped() -> list[tuple[str, dict, bytes]]:
    return [(p.stem, tomllib.loads(p.read_text()), p.read_bytes())
            for p in sorted(BOARDS.glob("*.toml"))]


def _paths(d, prefix=()) -> list[tuple]:
    """Every key path of a parsed board (tables, list items, leaves)."""
    out = []
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    for k, v in items:
        out.append(prefix + (k,))
        out += _paths(v, prefix + (k,))
    return out


def _set(d, path, value) -> None:
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


def _drop(d, path) -> None:
    for k in path[:-1]:
        d = d[k]
    del d[path[-1]]


DEEP = "@@deep@@"


def _deep(depth: int) -> bytes:
    """JSON text nested `depth` times (written out: json.dumps itself would recurse)."""
    return b'[{"a": ' * (depth // 2) + b"1" + b"}]" * (depth // 2)


def _json(d) -> bytes:
    return json.dumps(d, allow_nan=True, ensure_ascii=False).encode("utf-8", "surrogatepass")


def structured(d: dict, rng: np.random.Generator) -> tuple[str, bytes]:
    d = copy.deepcopy(d)
    paths = _paths(d)
    kind = ["value", "value", "type", "drop", "unknown", "deep", "long"][rng.integers(7)]
    path = paths[rng.integers(len(paths))] if paths else ("name",)
    if kind == "value":
        _set(d, path, HOSTILE_STRINGS[rng.integers(len(HOSTILE_STRINGS))])
    elif kind == "type":
        _set(d, path, HOSTILE_VALUES[rng.integers(len(HOSTILE_VALUES))])
    elif kind == "drop":
        _drop(d, path)
    elif kind == "unknown":
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        if isinstance(parent, dict):
            parent[HOSTILE_STRINGS[rng.integers(len(HOSTILE_STRINGS))] or "k"] = 1
    elif kind == "deep":
        _set(d, path, DEEP)
        return f"deep-{'.'.join(map(str, path))[:40]}", _json(d).replace(
            f'"{DEEP}"'.encode(), _deep(int(rng.integers(50, 5000))))
    else:
        _set(d, path, [copy.deepcopy(d.get("memory", [{}])[0]) if d.get("memory") else "x"]
             * int(rng.integers(65, 2000)))
    return f"{kind}-{'.'.join(map(str, path))[:40]}", _json(d)


def board_mutants(seed: int, count: int) -> Iterator[tuple[str, str, bytes]]:
    """`count` hostile board files: two thirds structured (JSON), one third byte mutants (TOML)."""
    rng = np.random.default_rng(seed)
    boards = shipped()
    for i in range(count):
        name, d, raw = boards[rng.integers(len(boards))]
        if rng.random() < 2 / 3:
            kind, data = structured(d, rng)
            yield f"{i:04d}-{name}-{kind}", ".json", data
        else:
            kind, data = random_mutation(raw, rng)
            yield f"{i:04d}-{name}-{kind}", ".toml", data
