"""The x86 kernels' ONNX epilogue (runtime_c/x86/common.h: ec_x86_onnx8; edgecc/lower/x86/onnx.py).

The epilogue alone against edgecc/numerics/qlinear.py's onnx_requantize on accumulators chosen to hit
its corners (ties of the rounding, the float clamp, int32 extremes, out_zp and activation
clamps), on the plain AVX2 build and the AVX-512 one; then ONNX models whose convolution,
depthwise and fully connected layers take the x86 kernels, bit-exact with onnxruntime on each
run-time level (forced AVX2, forced AVX-VNNI, this CPU's best).
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import SHARED
from edgecc.compiler import compile_model
from edgecc.numerics.qlinear import onnx_requantize
from edgecc.options import CompileOptions
from edgecc.resources import data_dir
from edgecc.targets import get_target
from edgecc.verify import verify_model
from edgecc.build.host import cpu_flags
from test_x86 import _paths

RT = data_dir("runtime_c")
ONNX_MODELS = SHARED / "models" / "onnx_models"

HARNESS = """#include <stdio.h>
#include "x86/common.h"
static const int32_t acc[%(n)d] = { %(acc)s };
static const float scale[8] = { %(scale)s };
int main(void) {
    static const int32_t z[8] = { 0 };
    const ec_x86_rq q = { z, z, z, 0, 0, 0, %(zp)d, %(lo)d, %(hi)d, scale };
    int i;
    for (i = 0; i < %(n)d; i += 8) {
        int8_t y[8];
        ec_x86_out8(y, _mm256_loadu_si256((const __m256i *)(const void *)(acc + i)), &q, 0, 8);
        fwrite(y, 1, 8, stdout);
    }
    return 0;
}
"""


def _accumulators(scale: np.ndarray) -> np.ndarray:
    """Per lane: values whose product with the lane's scale lands on or next to x.5 ties, on the
    float clamp, far outside it, and the int32 extremes."""
    rng = np.random.default_rng(7)
    out = [np.full(8, v, np.int64) for v in (0, 1, -1, 2**31 - 1, -2**31, 2**24 + 1)]
    for k in range(-300, 300, 7):  # acc = (k + 0.5) / scale, and its neighbours
        base = np.round((k + 0.5) / scale.astype(np.float64)).astype(np.int64)
        out += [base - 1, base, base + 1]
    out += [rng.integers(-2**31, 2**31, 8) for _ in range(64)]
    return np.clip(np.concatenate(out), -2**31, 2**31 - 1).astype(np.int32)


@pytest.mark.parametrize("zp,act", [(0, (-128, 127)), (-17, (-128, 127)), (100, (0, 127)),
                                    (-128, (-128, 50))])
def test_onnx_epilogue_equals_onnxruntime_formula(zp, act, tmp_path):
    if "avx2" not in cpu_flags():
        pytest.skip("this CPU has no AVX2")
    scale = np.array([0.5, 0.25, 1 / 3, 0.0078125, 1e-4, 2.5, 0.1, 123.0], np.float32)
    acc = _accumulators(scale)
    want = onnx_requantize(acc.reshape(-1, 8), scale, zp, *act, np.int8).ravel()
    src = tmp_path / "h.c"
    src.write_text(HARNESS % dict(n=len(acc), acc=", ".join(f"{int(a)}" for a in acc),
                                  scale=", ".join(f"{float(s)!r}f" for s in scale), zp=zp,
                                  lo=act[0], hi=act[1]))
    targets = [get_target("x86-avx2")]
    if get_target("x86-avx512").host_cpu <= cpu_flags():
        targets.append(get_target("x86-avx512"))
    for t in targets:
        for cc in ("gcc", "clang"):
            exe = tmp_path / f"h_{t.name}_{cc}"
            subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *t.cflags,
                            "-ffp-contract=off", f"-I{RT}", str(src), "-o", str(exe)],
                           check=True, timeout=300)
            got = np.frombuffer(subprocess.run([str(exe)], capture_output=True, check=True,
                                               timeout=60).stdout, np.int8)
            bad = np.nonzero(got != want)[0]
            assert not len(bad), (t.name, cc, bad[:5], acc[bad[:5]], got[bad[:5]], want[bad[:5]])


# conv + depthwise + per-tensor fully connected (kws), fully connected only (ad01), uint8 QDQ with
# per-channel fully connected (se_mbv2 u8), QOperator int8 per-channel (se_mbv2 s8): models whose
# every output byte onnxruntime's integer kernels make (exact on the host target too)
MODELS = ["tfl_kws_ref_model_qdq", "tfl_ad01_int8_qdq", "ox_se_mbv2_qdq_u8",
          pytest.param("ox_se_mbv2_qop_s8", marks=pytest.mark.slow)]


@pytest.mark.parametrize("model", MODELS)
def test_onnx_models_on_x86_kernels(model):
    path = ONNX_MODELS / f"{model}.onnx"
    assert path.is_file(), path
    x86 = CompileOptions(onnx_numerics="x86")
    c = compile_model(path, get_target("x86-avx2"), "m", x86)
    mac = [lw for lw in c.lowered
           if lw.node.op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")]
    # (x86 numerics: the QDQ groups onnxruntime runs in float32, in tfl_kws/ad01, on the
    # portable near-tie kernel, edgecc/ops/_ort_near.py; every other MAC layer an AVX2 kernel)
    assert mac and all(lw.kernel.variant == "portable-ort-near"
                       if lw.node.numerics.float_group else
                       lw.kernel.variant.startswith("x86-") and "ONNX numerics" in
                       lw.kernel.reason for lw in mac), \
        [(lw.node.op, lw.kernel.variant, lw.kernel.reason) for lw in mac]
    assert any(lw.kernel.variant.startswith("x86-") for lw in mac)
    for name, target in _paths():
        if name in ("avx512-vnni", "x86-avx512"):
            continue  # the same epilogue code as the levels above; run time keeps this short
        r = verify_model(path, target, cc="gcc", frames=2, options=x86)
        assert r.bit_exact, (name, r.mismatched_bytes, r.first_bad_layer)
