"""Single-op model builders shared by the elementwise / data-movement op tests (tests/ops/test_*.py).

Random shapes and quantization from a numpy Generator, so every test case is reproducible by seed.
"""
from __future__ import annotations

import numpy as np

from edgecc.tflite_writer import ModelBuilder


def qparams(rng, dtype: str) -> dict:
    if dtype == "int8":
        return dict(scale=float(rng.uniform(0.005, 0.5)), zero_point=int(rng.integers(-128, 128)))
    if dtype == "int16":
        return dict(scale=float(rng.uniform(1e-4, 1e-2)), zero_point=0)
    return {}


def broadcast_shapes(rng, n_inputs: int = 2, max_rank: int = 5, max_dim: int = 5):
    """An output shape and n input shapes that broadcast to it (numpy rules)."""
    rank = int(rng.integers(1, max_rank + 1))
    out = tuple(int(d) for d in rng.integers(1, max_dim + 1, rank))
    ins = []
    for _ in range(n_inputs):
        drop = int(rng.integers(0, rank + 1)) if rng.random() < 0.3 else 0
        s = [1 if rng.random() < 0.35 else d for d in out[drop:]]
        ins.append(tuple(s))
    # at least one input carries each output dim, else the output would be smaller
    full = list(ins[0])
    full = [1] * (rank - len(full)) + full
    ins[0] = tuple(o if rng.random() < 0.5 or f == o else f for f, o in zip(full, out))
    fixed = []
    for d in range(rank):
        if all((len(s) < rank - d) or s[d - rank + len(s)] == 1 for s in ins) and out[d] != 1:
            fixed.append(d)
    if fixed:
        s = list(ins[0])
        for d in fixed:
            s[d - rank + len(s)] = out[d]
        ins[0] = tuple(s)
    return out, ins


# Output scales near the result's spread (|q - zp| ~ 128 per input), so that most outputs land
# inside int8 instead of saturating and rounding differences stay visible.
_SPREAD = {
    "SUB": lambda s: 2 * max(s) * 128 / 100,
    "MUL": lambda s: s[0] * s[1] * 128 * 128 / 100,
    "SQUARED_DIFFERENCE": lambda s: (2 * max(s) * 128) ** 2 / 4 / 100,
}


def binary_model(rng, op: str, dtype: str, shapes, out_shape, options=None, version=1,
                 const_second: bool = False, out_dtype: str | None = None, out_q=None) -> bytes:
    mb = ModelBuilder()
    ins = []
    in_scales = []
    for k, s in enumerate(shapes):
        q = qparams(rng, dtype)
        in_scales.append(q.get("scale", 1.0))
        if const_second and k == 1:
            data = random_data(rng, dtype, s)
            ins.append(mb.const(f"x{k}", data, **q))
        else:
            ins.append(mb.tensor(f"x{k}", s, dtype, **q))
    od = out_dtype or dtype
    if out_q is None and od == "int8" and op in _SPREAD:
        out_q = dict(scale=_SPREAD[op](in_scales) * float(rng.uniform(0.5, 2.0)),
                     zero_point=int(rng.integers(-60, 60)))
    y = mb.tensor("y", out_shape, od, **(qparams(rng, od) if out_q is None else out_q))
    mb.op(op, ins, [y], options or {}, version=version)
    inputs = [t for k, t in enumerate(ins) if not (const_second and k == 1)]
    return mb.finish(inputs, [y])


def unary_model(rng, op: str, dtype: str, shape, options=None, version=1,
                out_dtype: str | None = None, in_q=None, out_q=None) -> bytes:
    mb = ModelBuilder()
    x = mb.tensor("x", shape, dtype, **(qparams(rng, dtype) if in_q is None else in_q))
    od = out_dtype or dtype
    y = mb.tensor("y", shape, od, **(qparams(rng, od) if out_q is None else out_q))
    mb.op(op, [x], [y], options or {}, version=version)
    return mb.finish([x], [y])


def random_data(rng, dtype: str, shape) -> np.ndarray:
    if dtype == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    if dtype in ("int8", "uint8", "int16"):
        lo, hi = info.min, info.max
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def cases(total: int, fast: int) -> list:
    """range(total) as pytest params, the ones from `fast` on marked slow (CI runs them all;
    `-m "not slow"` keeps a few random configurations per op)."""
    import pytest
    return [pytest.param(i, marks=pytest.mark.slow) if i >= fast else i for i in range(total)]
