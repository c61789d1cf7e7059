import numpy as np
import pytest

from opcheck import check_model, check_model_litert
from opmodels import cases, unary_model


def test_neg_float_vs_tflm():
    rng = np.random.default_rng(600)
    check_model(unary_model(rng, "NEG", "float32", (2, 9, 3)))


@pytest.mark.parametrize("dtype", ["int8", "int32"])
def test_neg_int_vs_litert(dtype):
    rng = np.random.default_rng(610)
    check_model_litert(unary_model(rng, "NEG", dtype, (3, 256)))


@pytest.mark.parametrize("case", cases(5, 2))
def test_rsqrt_int8(case):
    """Inputs at or above the zero point only: TFLite rejects negative values at run time."""
    rng = np.random.default_rng(620 + case)
    shape = (4, 64) if case == 0 else tuple(int(d) for d in rng.integers(1, 9, 3))
    in_q = dict(scale=float(rng.uniform(0.001, 0.5)), zero_point=-128)
    out_q = dict(scale=float(rng.uniform(0.005, 0.5)), zero_point=int(rng.integers(-128, 0)))
    check_model(unary_model(rng, "RSQRT", "int8", shape, version=2, in_q=in_q, out_q=out_q))
