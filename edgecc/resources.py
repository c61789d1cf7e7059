"""Where the shipped data lives: templates/, runtime_c/ and boards/.

Owns: finding those folders both in an installed wheel (mapped into the package as
`edgecc/_data/<name>`) and in a source checkout (the repository's top-level folders).
"""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    for cand in (_PKG / "_data" / name, _PKG.parent / name):
        if cand.is_dir():
            return cand
    raise FileNotFoundError(f"edgecc data folder {name!r} not found (broken install?)")
