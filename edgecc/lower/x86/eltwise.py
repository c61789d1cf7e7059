"""TFLite's int8 ADD on x86 AVX2 / AVX-512 (runtime_c/x86/add.h, templates/x86/add_*.c.j2).

Owns: the compile-time proof that a layer's ADD equals a single linear form
    y = clamp(sat8(sat16((a*A + b*B + C) >> k) + D))     (int32 wrap-around, as the C computes)
on all 256 x 256 input pairs, the search for A, B, C, k, D, a numpy model of exactly what the C
computes, and the pick between that kernel (ec_x86_add_lin_s8) and TFLite's own arithmetic in
vector form (ec_x86_add_exact_s8) when no linear form is proven.

Why a linear form usually exists: TFLite's result is round(a*alpha + b*beta + gamma) up to the
two inner roundings, which move the sum by about 2^-20 of an output step; a real (A, B, C) that
puts every pair strictly inside its output level exists whenever no pair falls that close to a
level boundary in the wrong order. Integers at scale 2^k then exist for k around 20. The search
runs per k: for a fixed A the feasible (B, C) is an exact polygon (constraints grouped by b), its
width in B is a concave function of A, so a ternary search finds the best A; the result is then
checked by brute force (`emulate_lin` on all pairs), which is what makes it a proof.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.layout import record
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, in_type
from edgecc.ops.add import add_quant
from edgecc.numerics.fixed_point import INT32_MAX, INT32_MIN, mbqm_smaller_than_one

X86AddLinGeom = record("ec_x86_add_lin_geom", "n A B C k D lo hi")
X86AddExactGeom = record("ec_x86_add_exact_geom", "n off1 m1 e1 off2 m2 e2 mo eo zp lo hi")

K_MIN, K_MAX = 6, 24  # scales tried for the linear form
XS = np.arange(-128, 128, dtype=np.int64)


def add_grid(q: dict) -> np.ndarray:
    """TFLite's int8 ADD on every input pair: [a + 128, b + 128] -> y (edgecc/ops/add.py's
    reference arithmetic, tabulated)."""
    ta = mbqm_smaller_than_one((XS + q["in1_off"]) * q["left_mult"], q["m1"], q["s1"])
    tb = mbqm_smaller_than_one((XS + q["in2_off"]) * q["left_mult"], q["m2"], q["s2"])
    y = mbqm_smaller_than_one(ta[:, None] + tb[None, :], q["mo"], q["so"]) + q["out_zp"]
    return np.clip(y, q["act_min"], q["act_max"])


def _wrap(x: np.ndarray, bits: int) -> np.ndarray:
    h = 1 << (bits - 1)
    return ((np.asarray(x, np.int64) + h) % (2 * h)) - h


def emulate_lin(A: int, B: int, C: int, k: int, D: int, lo: int, hi: int) -> np.ndarray:
    """What ec_x86_add_lin_s8 computes on every pair [a + 128, b + 128]: VPMULLD/VPADDD wrap in
    int32, VPSRAD, VPACKSSDW saturates to int16, VPADDW wraps, VPACKSSWB saturates, clamp."""
    a, b = XS[:, None], XS[None, :]
    v = _wrap(_wrap(a * A, 32) + _wrap(_wrap(b * B, 32) + C, 32), 32)
    t = np.clip(v >> k, -(1 << 15), (1 << 15) - 1)
    t = np.clip(_wrap(t + D, 16), -128, 127)
    return np.clip(t, lo, hi)


BIG = 1e30  # stands for an absent bound: finite, so differences never make NaN
_I1, _I2 = np.triu_indices(256, 1)  # b value pairs b1 < b2
_DEN = (_I2 - _I1).astype(np.float64)


def _width(A: int, k: int, y: np.ndarray, lmask: np.ndarray, umask: np.ndarray) \
        -> tuple[float, float, float]:
    """For a fixed A at scale 2^k: (concave width, Bmin, Bmax) of the B range for which some C
    puts every pair in its level (L <= b*B + C <= U): for b1 < b2,
    L(b2) - U(b1) <= (b2 - b1) * B <= U(b2) - L(b1)."""
    base = ((y << k) - XS[:, None] * A).astype(np.float64)
    L = np.where(lmask, base, -BIG).max(axis=0)                 # per b value
    U = np.where(umask, base + ((1 << k) - 1), BIG).min(axis=0)
    bmin = float(((L[_I2] - U[_I1]) / _DEN).max())
    bmax = float(((U[_I2] - L[_I1]) / _DEN).min())
    return min(bmax - bmin, float((U - L).min())), bmin, bmax


def _c_range(A: int, B: int, k: int, y, lmask, umask) -> tuple[int, int] | None:
    v = XS[:, None] * A + XS[None, :] * B
    base = (y << k) - v
    c_lo = int(base[lmask].max()) if lmask.any() else INT32_MIN
    c_hi = int((base + (1 << k) - 1)[umask].min()) if umask.any() else INT32_MAX
    return (c_lo, c_hi) if c_lo <= c_hi else None


def _centre(A: int, B: int, C: int, k: int) -> tuple[int, int]:
    """C' and D with floor((v + C') / 2^k) + D == floor((v + C) / 2^k) and v + C' centred on 0,
    so the sums of pairs far outside the activation range still fit int32."""
    v = XS[:, None] * A + XS[None, :] * B + C
    D = int(round((int(v.min()) + int(v.max())) / 2 / (1 << k)))
    return C - D * (1 << k), D


@lru_cache(maxsize=256)
def find_linear(qkey: tuple) -> tuple[tuple[int, int, int, int, int] | None, str]:
    """(A, B, C, k, D) proven equal to TFLite on every pair, or (None, why not)."""
    q = dict(qkey)
    lo, hi = q["act_min"], q["act_max"]
    y = add_grid(q)
    if (y == y[0, 0]).all():  # a constant layer: D alone prints it
        return (0, 0, 0, 0, int(y[0, 0])), ""
    lmask = y > lo if lo < hi else np.zeros_like(y, bool)
    lmask |= y == hi
    umask = (y < hi) | (y == lo)
    # slopes of the real function, to centre the search for A
    step = q["left_mult"] * q["mo"] * 2.0 ** (q["so"] - 31)
    alpha = q["m1"] * 2.0 ** (q["s1"] - 31) * step
    def attempt(k: int) -> tuple[int, int, int, int, int] | None:
        memo: dict[int, tuple[float, float, float]] = {}

        def width(A_: int) -> tuple[float, float, float]:
            if A_ not in memo:
                memo[A_] = _width(A_, k, y, lmask, umask)
            return memo[A_]

        # alpha is the real slope up to the multipliers' 2^-30 and the inner roundings
        est = int(round(alpha * (1 << k)))
        lo_a, hi_a = est - 64 - abs(est) // 2048, est + 64 + abs(est) // 2048
        while hi_a - lo_a > 2:  # ternary search: the width is concave in A
            m1, m2 = lo_a + (hi_a - lo_a) // 3, hi_a - (hi_a - lo_a) // 3
            if width(m1)[0] < width(m2)[0]:
                lo_a = m1 + 1
            else:
                hi_a = m2
        best = max(range(lo_a, hi_a + 1), key=lambda A_: width(A_)[0])
        if width(best)[0] < 0:
            return None
        for A in sorted(range(best - 8, best + 9), key=lambda A_: abs(A_ - best)):
            w, bmin, bmax = width(A)
            if w < 0 or max(abs(bmin), abs(bmax)) > 2.0 ** 40:
                continue
            for B in range(int(np.ceil(bmin)), int(np.floor(bmax)) + 1)[:4]:
                cr = _c_range(A, B, k, y, lmask, umask)
                if cr is None:
                    continue
                C, D = _centre(A, B, (cr[0] + cr[1]) // 2, k)
                if not all(INT32_MIN <= v <= INT32_MAX for v in (A, B, C)) or \
                        not -(1 << 15) <= D < (1 << 15):
                    continue
                if np.array_equal(emulate_lin(A, B, C, k, D, lo, hi), y):
                    return A, B, C, k, D
        return None

    # Feasibility grows with k (A, B, C doubled at k + 1 give the same quotients): bisect for
    # the smallest k, whose sums span the fewest bits.
    lo_k, hi_k, found = K_MIN, K_MAX, None
    while lo_k <= hi_k:
        k = (lo_k + hi_k) // 2
        sol = attempt(k)
        if sol is not None:
            found, hi_k = sol, k - 1
        else:
            lo_k = k + 1
    if found is not None:
        return found, ""
    return None, f"no linear form proven exact for k <= {K_MAX}"


def _linear(q: dict) -> tuple[tuple[int, int, int, int, int] | None, str]:
    return find_linear(tuple(sorted(q.items())))


def lower_add_lin(g: Graph, n: Node, target) -> Kernel:
    """ec_x86_add_lin: a linear form proven equal to TFLite's ADD, or Refused."""
    q = add_quant(g, n)
    lin, why = _linear(q)
    if lin is None:
        raise Refused(why)
    A, B, C, k, D = lin
    return Kernel("x86/add_lin.c.j2",
                  params=dict(geom=X86AddLinGeom(in_type(g, n, 0).numel, A, B, C, k, D,
                                                q["act_min"], q["act_max"])),
                  variant="x86-add-lin",
                  reason=f"TFLite's ADD proven equal to ((a*{A} + b*{B} + C) >> {k}) + {D} "
                         f"on all 65536 input pairs: 32 (YMM) / 64 (ZMM) per step")


def lower_add_exact(g: Graph, n: Node, target) -> Kernel:
    """ec_x86_add_exact: TFLite's three roundings in vector form."""
    q = add_quant(g, n)
    geom = X86AddExactGeom(in_type(g, n, 0).numel, q["in1_off"], q["m1"], -q["s1"], q["in2_off"], q["m2"],
            -q["s2"], q["mo"], -q["so"], q["out_zp"], q["act_min"], q["act_max"])
    why = _linear(q)[1]
    return Kernel("x86/add_exact.c.j2", params=dict(geom=geom),
                  variant="x86-add-exact",
                  reason=f"{why}: TFLite's three roundings in vector form, 8 per step")
