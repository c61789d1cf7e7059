"""x86 AVX2 / AVX-512 int8 ADD and AVERAGE_POOL_2D (runtime_c/x86/add.h, pool_2d.h,
edgecc/lower/x86/eltwise.py, x86/pool.py).

Three levels: the kernels themselves on all 65,536 input pairs on every x86 path this CPU has
(gcc and clang), including partial last blocks; ADD models on random shapes, zero points, scales
and activations, bit-exact with TFLite Micro (check_x86); and the compile-time proof, which
must reject a linear form that is wrong for a single pair and must fail (falling back to
TFLite's arithmetic in vector form) for a layer whose real function has no margin.
AVERAGE_POOL_2D: models against TFLite Micro (clipped windows, 256-tap windows, batches), the
fallbacks, and the division proof.
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.lower.x86 import eltwise as x86_elt, pool as x86_pool
from edgecc.numerics.fixed_point import quantize_multiplier
from edgecc.tflite_writer import ModelBuilder
from test_x86 import _compile, _paths, check_x86

RUNTIME = Path(__file__).resolve().parents[2] / "runtime_c"

# (s1, z1, s2, z2, s_out, z_out): pretrainedResnet_quant's first ADD-like scales; extreme zero
# points; very unequal input scales; a tiny output scale (most pairs clamp); NO_MARGIN: a real
# layer function with no margin between two output levels, so no linear form exists.
NO_MARGIN = (0.1913258284330368, 8, 0.2111506164073944, -49, 0.1612422913312912, -92)
SCALES = [
    (0.05, -128, 0.11, 4, 0.17, -128),
    (0.2, 127, 0.01, -128, 0.05, 127),
    (0.003, 0, 0.3, -7, 0.25, 3),
    (0.1, -20, 0.12, 30, 0.004, 0),
    NO_MARGIN,
]


def _q(s1, z1, s2, z2, so, zo, act=(-128, 127)) -> dict:
    """edgecc/ops/add.py's _quant for these quantization parameters (float32 scales)."""
    s1, s2 = np.float32(s1), np.float32(s2)
    twice = 2.0 * float(max(s1, s2))
    r = (float(s1) / twice, float(s2) / twice, twice / ((1 << 20) * float(np.float32(so))))
    (m1, e1), (m2, e2), (mo, eo) = (quantize_multiplier(x) for x in r)
    return dict(in1_off=-z1, in2_off=-z2, out_zp=zo, left_mult=1 << 20, m1=m1, s1=e1, m2=m2,
                s2=e2, mo=mo, so=eo, act_min=act[0], act_max=act[1])


def _run_kernel(q: dict, n: int, flags: tuple, cc: str) -> tuple[np.ndarray, str]:
    """The kernel the compiler picks for q, run by a C harness on pairs i -> (i / 256, i % 256)
    for i < n; returns its outputs and the variant."""
    lin, _ = x86_elt.find_linear(tuple(sorted(q.items())))
    if lin is not None:
        A, B, C, k, D = lin
        st, fn, geom = "ec_x86_add_lin_geom", "ec_x86_add_lin_s8", \
            [n, A, B, C, k, D, q["act_min"], q["act_max"]]
    else:
        st, fn = "ec_x86_add_exact_geom", "ec_x86_add_exact_s8"
        geom = [n, q["in1_off"], q["m1"], -q["s1"], q["in2_off"], q["m2"], -q["s2"], q["mo"],
                -q["so"], q["out_zp"], q["act_min"], q["act_max"]]
    src = f"""#include <stdio.h>
#include <stdint.h>
#include "x86/kernels.h"
static int8_t a[65536], b[65536], y[65536];
int main(void) {{
    static const {st} g = {{ {", ".join(map(str, geom))} }};
    int i;
    for (i = 0; i < 65536; ++i) {{ a[i] = (int8_t)(i / 256 - 128); b[i] = (int8_t)(i % 256 - 128); y[i] = 99; }}
    {fn}(&g, a, b, y);
    fwrite(y, 1, 65536, stdout);
    return 0;
}}
"""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "h.c").write_text(src)
        subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic",
                        *flags, f"-I{RUNTIME}", "h.c", "-o", "h"], cwd=tmp, check=True,
                       timeout=120)
        out = subprocess.run([str(Path(tmp) / "h")], capture_output=True, check=True,
                             timeout=60).stdout
    return np.frombuffer(out, np.int8).astype(np.int64), "lin" if lin is not None else "exact"


@pytest.mark.parametrize("case", range(len(SCALES)))
def test_x86_add_kernel_all_pairs(case):
    """Every input pair, every x86 path (gcc; clang too on the YMM and ZMM paths): equal to
    TFLite's arithmetic; the bytes past n are left alone (a partial last block)."""
    act = [(-128, 127), (-128, 127), (-100, 90), (0, 127), (-128, 127)][case]
    q = _q(*SCALES[case], act=act)
    want = x86_elt.add_grid(q).ravel()
    n = 65536 - 37
    kinds = set()
    for name, target in _paths():
        for cc in ("gcc", "clang") if name in ("avx2", "dispatch", "x86-avx512") else ("gcc",):
            got, kind = _run_kernel(q, n, target.cflags, cc)
            kinds.add(kind)
            bad = np.nonzero(got[:n] != want[:n])[0]
            assert not len(bad), (name, cc, kind, bad[:5])
            assert (got[n:] == 99).all(), (name, cc, "wrote past n")
    assert kinds == {"exact" if SCALES[case] is NO_MARGIN else "lin"}


def test_x86_add_proof_rejects_a_near_miss():
    """The brute-force check is what makes the linear form exact: moving C by one step of the
    output (or A by a few units) breaks some pair and is rejected."""
    q = _q(*SCALES[0])
    y = x86_elt.add_grid(q)
    (A, B, C, k, D), _ = x86_elt.find_linear(tuple(sorted(q.items())))
    assert np.array_equal(x86_elt.emulate_lin(A, B, C, k, D, -128, 127), y)
    assert not np.array_equal(x86_elt.emulate_lin(A, B, C + (1 << k), k, D, -128, 127), y)
    assert not np.array_equal(x86_elt.emulate_lin(A + (1 << k) // 64, B, C, k, D, -128, 127), y)


def _add_model(shape, s1, z1, s2, z2, so, zo, act: int, shape_b=None, const_b=False,
               dtype: str = "int8") -> bytes:
    rng = np.random.default_rng(len(shape) + sum(shape))
    mb = ModelBuilder()
    a = mb.tensor("a", shape, dtype, scale=s1, zero_point=z1)
    shape_b = shape_b or shape
    if const_b:
        b = mb.const("b", rng.integers(-128, 128, shape_b).astype(np.int8), scale=s2,
                     zero_point=z2)
    else:
        b = mb.tensor("b", shape_b, dtype, scale=s2, zero_point=z2)
    y = mb.tensor("y", tuple(np.broadcast_shapes(shape, shape_b)), dtype, scale=so,
                  zero_point=zo)
    mb.op("ADD", [a, b], [y], {"fused_activation_function": act}, version=2)
    return mb.finish([a] if const_b else [a, b], [y])


# lengths: 1, under 32, not a multiple of 32 or 64, exactly 64, several ZMM blocks and a tail
SHAPES = [(1, 1, 1, 1), (1, 3, 5, 2), (1, 5, 7, 3), (1, 4, 4, 4), (1, 8, 8, 17), (2, 9, 33)]


@pytest.mark.parametrize("case", range(len(SHAPES)))
def test_x86_add_models(case):
    """Random-shape ADD models against TFLite Micro on every x86 path (RELU, RELU_N1_TO_1 and
    RELU6 included), each taking the AVX2 kernel; the NO_MARGIN scales take the exact one."""
    rng = np.random.default_rng(7100 + case)
    params = SCALES[case % len(SCALES)]
    if case == 5:
        params = tuple(float(rng.uniform(0.01, 0.3)) if i % 2 == 0 else int(rng.integers(-128, 128))
                       for i in range(6))
    data = _add_model(SHAPES[case], *params, act=case % 4)
    check_x86(data, expect="x86-add-exact" if params is NO_MARGIN else "x86-add-lin")


@pytest.mark.parametrize("kw,why", [
    (dict(shape_b=(1, 1, 1, 7)), "broadcast"),
    (dict(const_b=True), "constant"),
    (dict(dtype="int16", z1=0, z2=0, zo=0), "int16"),
])
def test_x86_add_falls_back_with_reason(kw, why):
    """Broadcast, a constant operand, int16: the portable kernel, saying why (still bit-exact)."""
    args = dict(shape=(1, 3, 4, 7), s1=0.05, z1=3, s2=0.08, z2=-9, so=0.1, zo=2, act=0)
    args.update(kw)
    data = _add_model(**args)
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "portable" and why in k.reason, (k.variant, k.reason)
    check_x86(data, expect=None)


# ---------------------------------------------------------------------------- AVERAGE_POOL_2D

# (n, h, w, c, fh, fw, sh, sw, padding, act): kws's global pool (64 channels, 125 taps); SAME
# padding with clipped windows of many counts and 16 channels; 64 + 16 channels with batches;
# 256-tap windows (the int16 sums' limit); strides.
POOL_CASES = [
    (1, 25, 5, 64, 25, 5, 1, 1, 1, 0),
    (1, 7, 6, 16, 3, 3, 1, 1, 0, 1),
    (2, 5, 5, 80, 2, 3, 2, 1, 0, 3),
    (1, 16, 18, 32, 16, 16, 1, 2, 1, 2),
    (1, 6, 9, 48, 3, 2, 2, 3, 0, 0),
]


@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_x86_average_pool(case):
    from test_pool_2d import pool_model
    rng = np.random.default_rng(7300 + case)
    n, h, w, c, fh, fw, sh, sw, padding, act = POOL_CASES[case]
    check_x86(pool_model(rng, "AVERAGE_POOL_2D", n, h, w, c, fh, fw, sh, sw, padding, act),
               expect="x86-avgpool")


@pytest.mark.parametrize("shape,why", [((17, 16, 16, 17, 16), "256 taps"),
                                       ((5, 5, 20, 3, 3), "multiple of 16")])
def test_x86_average_pool_falls_back_with_reason(shape, why):
    """Windows over 256 taps (the int16 sums could overflow) or channels not a multiple of 16:
    the portable kernel, saying why."""
    from test_pool_2d import pool_model
    h, w, c, fh, fw = shape
    data = pool_model(np.random.default_rng(7350), "AVERAGE_POOL_2D", 1, h, w, c, fh, fw, 1, 1,
                      1, 0)
    k, = [lw.kernel for lw in _compile(data).lowered]
    assert k.variant == "portable" and why in k.reason, k.reason
    check_x86(data, expect=None)


def test_x86_pool_division_proof():
    """The multiply-shift division is exact for every count a 256-tap window can have, and the
    check does reject counts where 24 bits are too few."""
    assert all(x86_pool.division_exact(c) for c in range(1, 257))
    assert not x86_pool.division_exact(400)
    d = dict(out_h=3, stride_h=2, pad_h=1, fh=3, in_h=5, out_w=1, stride_w=1, pad_w=0, fw=4,
             in_w=4)
    assert x86_pool.window_counts(d) == {2 * 4, 3 * 4}
