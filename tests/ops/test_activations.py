import numpy as np
import pytest

from opcheck import check_model, check_model_litert
from opmodels import cases, unary_model

SHAPE = (2, 256)  # covers (almost) every int8 value with the seeded inputs


@pytest.mark.parametrize("case", cases(4, 2))
def test_logistic_int8(case):
    rng = np.random.default_rng(1700 + case)
    in_q = dict(scale=float(rng.uniform(0.005, 0.3)), zero_point=int(rng.integers(-128, 128)))
    check_model(unary_model(rng, "LOGISTIC", "int8", SHAPE, version=2, in_q=in_q,
                            out_q=dict(scale=1 / 256, zero_point=-128)))


@pytest.mark.parametrize("case", cases(4, 2))
def test_tanh_int8(case):
    rng = np.random.default_rng(1720 + case)
    in_q = dict(scale=float(rng.uniform(0.005, 0.3)), zero_point=int(rng.integers(-128, 128)))
    check_model(unary_model(rng, "TANH", "int8", SHAPE, version=2, in_q=in_q,
                            out_q=dict(scale=1 / 128, zero_point=0)))


def _q(rng):
    return dict(scale=float(rng.uniform(0.005, 0.3)), zero_point=int(rng.integers(-128, 128)))


@pytest.mark.parametrize("case", cases(4, 2))
def test_leaky_relu_int8(case):
    rng = np.random.default_rng(1740 + case)
    alpha = [0.2, 0.01, -0.5, 1.7][case]
    check_model(unary_model(rng, "LEAKY_RELU", "int8", SHAPE, {"alpha": alpha}, version=2,
                            in_q=_q(rng), out_q=_q(rng)))


def test_leaky_relu_float():
    rng = np.random.default_rng(1745)
    check_model(unary_model(rng, "LEAKY_RELU", "float32", (3, 17), {"alpha": 0.3}))


@pytest.mark.parametrize("case", cases(5, 2))
def test_hard_swish_int8(case):
    rng = np.random.default_rng(1760 + case)
    in_q = _q(rng)
    if case == 4:  # large input range: the reluish multiplier left-shifts and saturates
        in_q["scale"] = 0.9
    out_q = dict(scale=float(rng.uniform(in_q["scale"] / 100, 0.3)),
                 zero_point=int(rng.integers(-128, 128)))
    check_model(unary_model(rng, "HARD_SWISH", "int8", SHAPE, in_q=in_q, out_q=out_q))


@pytest.mark.parametrize("case", cases(4, 2))
def test_elu_int8(case):
    rng = np.random.default_rng(1780 + case)
    check_model(unary_model(rng, "ELU", "int8", SHAPE, in_q=_q(rng), out_q=_q(rng)))


@pytest.mark.parametrize("case", cases(6, 2))
def test_gelu_int8_vs_litert(case):
    rng = np.random.default_rng(1800 + case)
    check_model_litert(unary_model(rng, "GELU", "int8", SHAPE, {"approximate": case % 2 == 1},
                                   in_q=_q(rng), out_q=_q(rng)))


@pytest.mark.parametrize("case", cases(5, 3))
def test_log_softmax_int8(case):
    rng = np.random.default_rng(1850 + case)
    shape = [(2, 256), (3, 5, 7), (1, 40), (4, 1), (2, 3, 64)][case]
    in_q = dict(scale=float(rng.uniform(0.01, 0.3)), zero_point=int(rng.integers(-50, 50)))
    check_model(unary_model(rng, "LOG_SOFTMAX", "int8", shape, in_q=in_q,
                            out_q=dict(scale=16 / 256, zero_point=127)))
