"""Integer FLOOR_DIV and FLOOR_MOD (int8, int16, int32; FLOOR_MOD also int64), as LiteRT's reference
kernels compute them (TFLite Micro has float32 kernels only, so LiteRT BUILTIN_REF is the oracle).

Owns the integer path both ops join to their float32 one (edgecc/ops/_float.py `twin`): raw values,
quantization ignored, numpy broadcasting (rank <= 5), no fused activation.
  FLOOR_DIV:  floor(double(a) / double(b)) converted back to the type; exact for these widths,
              i.e. the floored quotient (INT32_MIN / -1 wraps to INT32_MIN, as the conversion does
              on the hosts LiteRT runs on; int8 -128 / -1 likewise to -128).
  FLOOR_MOD:  t = a % b (C's truncated remainder); t != 0 and sign(t) != sign(b) ? t + b : t.
A zero divisor, which LiteRT refuses at run time ("Division by zero"), gives 0; so does a % -1.
The C is runtime_c/edgecc_math.h's ec_floor_div_s32 / ec_floor_mod_s32 / ec_floor_mod_s64.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, OpDef
from edgecc.ops import _arith as ew
from edgecc.ops._loops import loop_text

DIV_TYPES = (DType.INT8, DType.INT16, DType.INT32)
MOD_TYPES = (*DIV_TYPES, DType.INT64)


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w = np.int64
    a64, b64 = a.astype(w), b.astype(w)
    q = np.floor_divide(a64, np.where(b64 == 0, 1, b64))
    return np.where(b64 == 0, 0, q).astype(a.dtype)  # int64 -> narrower wraps, as the C cast


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    safe = np.where((b == 0) | (b == -1), 1, b).astype(a.dtype)
    r = np.remainder(a, safe)  # numpy's remainder takes the divisor's sign: FloorMod
    return np.where((b == 0) | (b == -1), 0, r).astype(a.dtype)


def int_floor_op(name: str, types: tuple[DType, ...], fn, c_fn: dict[DType, str]) -> OpDef:
    """The OpDef of FLOOR_DIV / FLOOR_MOD on the integer `types`; `c_fn` the C function per
    type (int8/int16 go through the 32-bit one)."""
    words = ", ".join(t.value[0] for t in types)

    def same_int_type(g: Graph, n: Node) -> bool:
        return len({g.type(v).dtype for v in [*n.inputs, *n.outputs] if v is not None}) == 1 \
            and g.type(n.outputs[0]).dtype in types
    same_int_type.__doc__ = (f"inputs and output must all have one type: float32 or {words}")

    def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
        dt = g.type(n.outputs[0]).dtype.np
        with np.errstate(all="ignore"):
            return [fn(np.asarray(ins[0], dt), np.asarray(ins[1], dt))]

    def lower(g: Graph, n: Node, target) -> Kernel:
        dt = g.type(n.outputs[0]).dtype
        params = dict(ew.loop_params(g, n), ctype=dt.c, out_ctype=dt.c,
                      expr=f"({dt.c}){c_fn[dt]}(va, vb)")
        return Kernel("binary_expr.c.j2", params=params, consts=ew.const_inputs(g, n),
                      variant=dt.value[0], derived=dict(loop_text(params), store="store"))
    return OpDef(name, ew.infer_broadcast, reference, lower,
                 [same_int_type, ew.shapes_broadcast, ew.rank_at_most_5], dtypes=words,
                 inplace=((0, 0), (0, 1)),  # y[i] is written after a[i], b[i] are read
                 reference_oracle="TFLite Micro (float32); LiteRT BUILTIN_REF (integer)")


_S32 = {t: "ec_floor_div_s32" for t in DIV_TYPES}
FLOOR_DIV = dict(types=DIV_TYPES, fn=_floor_div, c_fn=_S32)
FLOOR_MOD = dict(types=MOD_TYPES, fn=_floor_mod,
                 c_fn={**{t: "ec_floor_mod_s32" for t in DIV_TYPES},
                       DType.INT64: "ec_floor_mod_s64"})
