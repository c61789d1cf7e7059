"""Arithmetic ranges: requantization shifts inside what TFLite's int32 arithmetic (and
runtime_c/edgecc_rt.h) defines, or a clear refusal naming the op; the C helpers UB-free for every
shift; extreme scales and dilations either refused in one line or compiled to UBSan-clean C."""
from __future__ import annotations

import subprocess

import pytest

from edgecc.numerics.fixed_point import ScaleRangeError, quantize_multiplier
from fuzz import hostile
from fuzz.harness import SANITIZE, STRICT, compile_case, run_c
from conftest import REPO


@pytest.mark.parametrize("m", [2.0**30, 3e38, 1e30, float("inf"), float("nan")])
def test_quantize_multiplier_refuses_what_int32_cannot_hold(m):
    with pytest.raises(ScaleRangeError, match="out of range"):
        quantize_multiplier(m)


@pytest.mark.parametrize("m,expect", [(1e-45, (0, 0)), (1e-30, (0, 0)), (0.5, (1 << 30, 0)),
                                      (2.0**29, (1 << 30, 30))])
def test_quantize_multiplier_keeps_tflite_values(m, expect):
    assert quantize_multiplier(m) == expect


def test_mbqm_helpers_are_ub_free_for_any_shift(tmp_path):
    """`(uint32_t)x << left` with left >= 32 was undefined behaviour in ec_mbqm / ec_mbqm_pos."""
    c = tmp_path / "t.c"
    c.write_text('#include <stdio.h>\n#include "edgecc_rt.h"\nint main(void) {\n'
                 '  volatile int s; uint32_t acc = 0;\n'
                 '  for (s = -31; s <= 63; ++s) acc += (uint32_t)ec_mbqm(-123456, 1 << 30, s) +\n'
                 '      (uint32_t)ec_mbqm_pos(987654, 1518500250, s);\n'
                 '  printf("%u\\n", (unsigned)acc);\n  return 0;\n}\n')
    exe = tmp_path / "t"
    subprocess.run(["gcc", *STRICT, *SANITIZE, "-I", str(REPO / "runtime_c"), str(c), "-o",
                    str(exe)], check=True, capture_output=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr


EXTREME = [(b, m) for b in ("fc", "conv", "relu", "relu6", "logistic", "tanh", "softmax", "svdf")
           for m in ("scale_3e38", "scale_1e30", "scale_1e-30", "scale_1e-45", "out_scale_3e38",
                     "out_scale_1e-45", "w_scale_1e30", "bias_scale_3e38")] + \
    [("conv", "opt_dilation_h_factor_2147483647"), ("dwconv", "opt_dilation_w_factor_0"),
     ("conv", "opt_stride_w_2147483647"), ("fc", "out_zp_-9223372036854775808")]


@pytest.mark.parametrize("base,mutation", EXTREME, ids=lambda x: str(x))
def test_extreme_scales_refused_or_ub_clean(base, mutation, tmp_path):
    fn = next(b for b in hostile.BASES if b.__name__ == base)
    data = hostile.build(fn, hostile.MUTATIONS[mutation])
    if data is None:
        pytest.skip("the mutation does not apply to this base")
    model = tmp_path / "m.tflite"
    model.write_bytes(data)
    outcome, code, err = compile_case(model, tmp_path / "out")
    assert outcome in ("refused", "compiled"), (outcome, err)
    if outcome == "refused":
        assert "out of range" in err or "invalid model" in err or "unsupported" in err, err
        if "scale ratio" in err:
            assert " at op " in err, err
    else:
        result, log = run_c(tmp_path / "out")
        assert result == "ok", log
