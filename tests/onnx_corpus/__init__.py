"""The ONNX corpus of issue 25: models as other quantizers write them (mixed float/int graphs,
QDQ around data movement and float-computed ops, shape subgraphs, onnxruntime.quantization's
formats and options, int4 weights), built here from onnx.helper and onnxruntime.quantization
with fixed seeds; nothing is downloaded.

One module per family (`mixed.py`, `qdq.py`, ...); each defines `CASES`, a list of `Case`.
`all_cases()` collects every module's cases, so adding a family never edits a shared list.
`tests/test_onnx_corpus.py` compiles and verifies every case on the targets of the issue.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

# how a case's outputs are compared with onnxruntime's
EXACT = "exact"    # every byte equal (integer paths under the default numerics)
FLOAT = "float"    # float outputs within 1e-5 relative of onnxruntime's
LSB = "lsb"        # float-computed QDQ ops: within 1 LSB, the count of differing values reported


@dataclass(frozen=True)
class Case:
    name: str                          # unique across the corpus; the test id
    build: Callable[[Path], Path]      # writes the model into a folder, returns its path
    check: str = EXACT
    slow: bool = False                 # a long build/run: only under the slow marker on the host


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(mod, "CASES", []))
    names = [c.name for c in cases]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"duplicate corpus case names: {dup}")
    return cases
