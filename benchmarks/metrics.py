"""Model-side figures for the benchmark: MACs from the IR, TFLite Micro's smallest arena, and the
flash of a host (x86) build of the generated C.

Owns: the bisection for the smallest `arena_size` with which tflite_micro's interpreter allocates
and runs a model, and code/weight bytes of host objects (there is no linker map to read for the
host, so the allocated sections of the generated C's own objects are summed). The MAC count is
edgecc/metrics.py's, re-exported here.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from edgecc.metrics import count_macs  # noqa: F401  (re-exported: run.py and tests use it here)


def _runs(model: Path, arena: int, inputs: list[np.ndarray]) -> bool:
    from tflite_micro.python.tflite_micro import runtime
    try:
        it = runtime.Interpreter.from_file(str(model), arena_size=arena)
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
        return True
    except RuntimeError:
        return False


def tflm_arena(model: Path, inputs: list[np.ndarray] = (), hi: int = 16 << 20) -> int | None:
    """Smallest arena_size (bytes) with which TFLite Micro (64-bit host build of the `tflite-micro`
    package) allocates and runs the model: a bisection, since allocation either fits or fails
    (input values do not change it). None when the model does not run even with `hi` bytes."""
    from edgecc.verify.reference import StderrToNull
    with StderrToNull():  # failed allocations print to C stderr
        if not _runs(model, hi, inputs):
            return None
        lo = 0  # invariant: lo fails (or is 0), hi runs
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _runs(model, mid, inputs):
                hi = mid
            else:
                lo = mid
    return hi


def object_sizes(objects: list[Path]) -> dict[str, int]:
    """code / weights / other constant bytes of relocatable objects: SHF_ALLOC sections summed,
    executable ones as code, read-only data of *_weights.o as weights."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.constants import SH_FLAGS
    out = dict(code=0, weights=0, constants=0, data=0)
    for o in objects:
        with open(o, "rb") as f:
            for s in ELFFile(f).iter_sections():
                fl = s["sh_flags"]
                if not fl & SH_FLAGS.SHF_ALLOC or s.name.startswith(".eh_frame"):
                    continue
                if fl & SH_FLAGS.SHF_EXECINSTR:
                    out["code"] += s["sh_size"]
                elif fl & SH_FLAGS.SHF_WRITE:
                    out["data"] += s["sh_size"]
                elif o.stem.endswith("_weights"):
                    out["weights"] += s["sh_size"]
                else:
                    out["constants"] += s["sh_size"]
    return out


def host_flash(gen_dir: Path, objdir: Path, cflags: list[str], cc: str = "gcc") -> dict[str, int]:
    """Build the generated C to objects (one section per function/array) and measure them."""
    objdir.mkdir(parents=True, exist_ok=True)
    objs = []
    for src in sorted(gen_dir.glob("*.c")):
        obj = objdir / (src.stem + ".o")
        subprocess.run([cc, "-std=c99", *cflags, "-ffunction-sections", "-fdata-sections",
                        f"-I{gen_dir}", "-c", str(src), "-o", str(obj)], check=True,
                       capture_output=True, timeout=600)
        objs.append(obj)
    return object_sizes(objs)
