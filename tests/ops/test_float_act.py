"""float32 SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH, ELU, ADD, DIV against TFLite Micro (edgecc/ops/_float_act.py).

The numpy reference must equal TFLM bit for bit; the generated C within 1e-5 relative
(edgecc/verify/tolerance.py: its exp/log/tanh are runtime_c/edgecc_math.h, not the host libm).
"""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from opmodels import binary_model, broadcast_shapes, cases, unary_model


def _shape(rng, max_rank=4):
    return tuple(int(d) for d in rng.integers(1, 7, int(rng.integers(1, max_rank + 1))))


@pytest.mark.parametrize("case", cases(4, 2))
def test_softmax_float(case):
    rng = np.random.default_rng(1200 + case)
    beta = float(rng.choice([1.0, 0.5, 2.5]))
    check_model(unary_model(rng, "SOFTMAX", "float32", _shape(rng), options=dict(beta=beta)))


@pytest.mark.parametrize("case", cases(4, 2))
def test_log_softmax_float(case):
    rng = np.random.default_rng(1210 + case)
    check_model(unary_model(rng, "LOG_SOFTMAX", "float32", _shape(rng)))


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH", "ELU", "RELU", "RELU6", "HARD_SWISH", "RSQRT"])
def test_float_activation(op):
    """Normal inputs times 4 (tails past RELU6's 6, HARD_SWISH's -3..3, LOGISTIC's cutoffs)."""
    rng = np.random.default_rng(1220)
    mb = ModelBuilder()
    x = mb.tensor("x", (3, 5, 17), "float32")
    k = mb.const("k", np.array([4.0], np.float32))
    t = mb.tensor("t", (3, 5, 17), "float32")
    y = mb.tensor("y", (3, 5, 17), "float32")
    mb.op("MUL", [x, k], [t])
    mb.op(op, [t], [y])
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_float_minmax_broadcast(op):
    rng = np.random.default_rng(1225)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, op, "float32", ins, out))


@pytest.mark.parametrize("case", cases(6, 2))
@pytest.mark.parametrize("op", ["ADD", "DIV"])
def test_float_add_div_broadcast(op, case):
    rng = np.random.default_rng(1230 + case)
    out, ins = broadcast_shapes(rng, max_rank=4)
    act = int(rng.choice([0, 1, 2, 3]))
    check_model(binary_model(rng, op, "float32", ins, out,
                             options=dict(fused_activation_function=act)))


@pytest.mark.parametrize("case", cases(4, 2))
def test_div_int8_constant_divisor(case):
    """int8 DIV against a constant divisor without zero (TFLite leaves b == zp undefined)."""
    rng = np.random.default_rng(1240 + case)
    out, ins = broadcast_shapes(rng, max_rank=4)
    mb = ModelBuilder()
    q = [dict(scale=float(rng.uniform(0.01, 0.2)), zero_point=int(rng.integers(-20, 20)))
         for _ in range(3)]
    x = mb.tensor("x", ins[0], "int8", **q[0])
    d = rng.integers(-128, 128, ins[1])
    d = np.where(d == q[1]["zero_point"], q[1]["zero_point"] + 1, d).astype(np.int8)
    c = mb.const("d", d, **q[1])
    y = mb.tensor("y", out, "int8", **q[2])
    mb.op("DIV", [x, c], [y], {"fused_activation_function": int(rng.choice([0, 1]))})
    check_model(mb.finish([x], [y]))


def test_div_int32_broadcast():
    rng = np.random.default_rng(1250)
    out, ins = broadcast_shapes(rng, max_rank=3)
    check_model(binary_model(rng, "DIV", "int32", ins, out))


@pytest.mark.parametrize("op", ["MUL", "SUB", "ADD", "DIV"])
def test_float_overflow_clamps_to_flt_max(op):
    """Activation NONE still clamps to [lowest, max] in TFLite Micro: an overflow to +-inf comes
    out as +-FLT_MAX."""
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 8), "float32")
    t = mb.tensor("t", (2, 8), "float32")
    mb.op("MUL", [x, mb.const("big", np.array([3e38], np.float32))], [t])
    k = {"MUL": 3e38, "SUB": -3e38, "ADD": 3e38, "DIV": 1e-30}[op]
    y = mb.tensor("y", (2, 8), "float32")
    mb.op(op, [t, mb.const("k", np.array([k], np.float32))], [y])
    check_model(mb.finish([x], [y]))
