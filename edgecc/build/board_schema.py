"""The board file's schema: every key a board file may have, declared once in one table (BOARD).

Owns: which keys exist (an unknown key is refused, naming the keys that exist there), which are
required, each value's kind (its type, its range, and the characters it may hold), and the
checking of a parsed board file against the table. A board file is input like a model: its
strings reach file names (`board/NAME.ld`), CMake (the toolchain file, CMakeLists.txt), make,
linker scripts and C comments, so each kind admits only characters that are inert in all of them
(no quote, `$`, `;`, `#`, `*`, `/` in a name, `(`, backslash, space in a flag, newline or other
control character) instead of escaping per language: a value that would need escaping is refused
in one line naming the file and the key.

To add a key: one `Key(...)` line in the table it belongs to (a new section: a `Table(...)` entry
of BOARD); boards.py reads the checked values. The semantic checks that relate keys to each other
(regions overlapping, placement naming a region, a QEMU machine of the board's core) stay in
boards.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from edgecc.errors import EdgeccError

MAX_BOARD_FILE_BYTES = 1 << 20   # a board file is a page of text
MAX_LIST = 64                    # entries of any list (flags, regions, arena candidates)
MAX_TEXT = 200                   # characters of a description
ADDRESS_LIMIT = 1 << 32          # bare-metal boards are 32-bit parts

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")        # board names: file names, CMake
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")            # region names: linker script
WORD = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")                 # targets, QEMU machines
FLAG = re.compile(r"-[A-Za-z0-9_=+,.:/-]{1,127}")             # compiler flags
SIZE = re.compile(r"\s*(0x[0-9a-fA-F]+|\d+)\s*([KkMm]i?B?|B)?\s*")
KiB, MiB = 1 << 10, 1 << 20


def _string(v, where: str, pattern: re.Pattern, what: str) -> str:
    if not isinstance(v, str):
        raise EdgeccError(f"{where}: expected {what}, got {type(v).__name__}")
    if not pattern.fullmatch(v):
        raise EdgeccError(f"{where}: {_shown(v)} is not {what}")
    return v


def _shown(v: str) -> str:
    """A hostile value, shown without its control characters and cut short."""
    text = "".join(c if c.isprintable() and c.isascii() else "?" for c in v)
    return repr(text[:40] + ("..." if len(text) > 40 else ""))


def name(v, where: str) -> str:
    return _string(v, where, NAME, "a board name (letters, digits, '.', '_', '-'; at most 64, "
                   "starting with a letter or digit)")


def ident(v, where: str) -> str:
    return _string(v, where, IDENT, "a C-style identifier (letters, digits, '_'; at most 64)")


def word(v, where: str) -> str:
    return _string(v, where, WORD, "a lower-case name (letters, digits, '-')")


def text(v, where: str) -> str:
    if not isinstance(v, str):
        raise EdgeccError(f"{where}: expected text, got {type(v).__name__}")
    if len(v) > MAX_TEXT or not all(c.isprintable() for c in v):
        raise EdgeccError(f"{where}: must be one line of at most {MAX_TEXT} printable characters")
    return v


def flags(v, where: str) -> list[str]:
    if not isinstance(v, list) or len(v) > MAX_LIST:
        raise EdgeccError(f"{where}: expected a list of at most {MAX_LIST} compiler flags")
    for i, f in enumerate(v):
        _string(f, f"{where}[{i}]", FLAG, "a compiler flag ('-' then letters, digits, "
                "'_=+,.:/-'; no spaces, quotes or '$')")
    return v


def _number(v, where: str, limit: int) -> int:
    if isinstance(v, bool):
        raise EdgeccError(f"{where}: expected a size, got {v!r}")
    if isinstance(v, int):
        n = v
    elif isinstance(v, str):
        m = SIZE.fullmatch(v[:64])
        if not m or len(v) > 64:
            raise EdgeccError(f"{where}: cannot read size {_shown(v)} (use bytes, or e.g. "
                              f"\"256 KiB\")")
        n = int(m.group(1), 0)
        n *= {"K": KiB, "M": MiB}.get((m.group(2) or "").upper()[:1], 1)
    else:
        raise EdgeccError(f"{where}: expected a size, got {type(v).__name__}")
    if not 0 <= n < limit:
        raise EdgeccError(f"{where}: {n} is out of range [0, {limit:#x})")
    return n


def size(v, where: str) -> int:
    """Bytes: an int, or a string like "256 KiB", "1M", "0x40000"; below 4 GiB."""
    return _number(v, where, ADDRESS_LIMIT)


def address(v, where: str) -> int:
    """An address on a 32-bit part."""
    return _number(v, where, ADDRESS_LIMIT)


def idents(v, where: str) -> list[str]:
    """One region name, or a list of them."""
    items = [v] if isinstance(v, str) else v
    if not isinstance(items, list) or not items or len(items) > MAX_LIST:
        raise EdgeccError(f"{where}: expected a region name or a list of them")
    return [ident(x, f"{where}[{i}]") for i, x in enumerate(items)]


def choice(*options: str) -> Callable:
    def check(v, where: str) -> str:
        if v not in options:
            raise EdgeccError(f"{where}: must be one of {', '.join(options)}, not "
                              f"{_shown(str(v))}")
        return v
    check.__name__ = "one of " + "/".join(options)
    return check


@dataclass(frozen=True)
class Key:
    """One key: its kind (a checker above), whether it must be present."""
    kind: Callable
    required: bool = False


@dataclass(frozen=True)
class Table:
    """A `[section]` (many=False) or a `[[section]]` list of tables (many=True)."""
    keys: dict
    many: bool = False
    required: bool = False


# The whole board file. Keys here and only here; boards.py reads them.
BOARD: dict = {
    "name": Key(name),
    "description": Key(text),
    "target": Key(word, required=True),
    "cflags": Key(flags),
    "stack_size": Key(size),
    "heap_size": Key(size),
    "qemu": Table({
        "machine": Key(word),
    }),
    "memory": Table({
        "name": Key(ident, required=True),
        "kind": Key(choice("flash", "ram"), required=True),
        "origin": Key(address, required=True),
        "size": Key(size, required=True),
        "qemu_origin": Key(address),
    }, many=True),
    "placement": Table({
        "code": Key(ident),
        "data": Key(ident),
        "arena": Key(idents),
        "weights": Key(ident),
    }),
}


def check_table(d, keys: dict, where: str, path: str = "") -> None:
    """Check one table (at key path `path` of the file `where`) against its declared keys,
    recursing into sub-tables."""
    here = f"{where}: {path}" if path else where
    if not isinstance(d, dict):
        raise EdgeccError(f"{here}: expected a table")
    extra = sorted(str(k) for k in d if k not in keys)
    if extra:
        raise EdgeccError(f"{here}: unknown key {_shown(extra[0])} (known: "
                          f"{', '.join(sorted(keys))})")
    for k, spec in keys.items():
        kp = f"{path}.{k}" if path else k
        w = f"{where}: {kp}"
        if k not in d:
            if spec.required:
                raise EdgeccError(f"{w}: required")
            continue
        v = d[k]
        if isinstance(spec, Table):
            if spec.many:
                if not isinstance(v, list) or len(v) > MAX_LIST:
                    raise EdgeccError(f"{w}: expected a list of at most {MAX_LIST} "
                                      f"[[{k}]] tables")
                for i, item in enumerate(v):
                    check_table(item, spec.keys, where, f"{kp}[{i}]")
            else:
                check_table(v, spec.keys, where, kp)
        else:
            spec.kind(v, w)


def check_board_strings(board) -> None:
    """The strings of a Board value (from a file, or built in Python and given to the API) that
    reach build files, checked again where they are rendered: name, flags, region names."""
    name(board.name, f"board {board.name!r}: name")
    flags(list(board.cflags), f"board {board.name}: cflags")
    for r in board.regions:
        ident(r.name, f"board {board.name}: region name")


def check_board(d, path) -> None:
    """A parsed board file against BOARD: one EdgeccError line naming the file and the key."""
    check_table(d, BOARD, f"board file {path}")
