"""SOFTMAX (int8 -> int8 / int16): numpy reference and generated C vs TFLite Micro."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def softmax_model(rng, shape, in_scale, beta=1.0, out="int8", in_zp=None):
    mb = ModelBuilder()
    zp = int(rng.integers(-128, 128)) if in_zp is None else in_zp
    x = mb.tensor("x", shape, "int8", scale=in_scale, zero_point=zp)
    if out == "int8":
        y = mb.tensor("y", shape, "int8", scale=1.0 / 256, zero_point=-128)
    else:
        y = mb.tensor("y", shape, "int16", scale=1.0 / 65536, zero_point=-32768)
    mb.op("SOFTMAX", [x], [y], {"beta": beta}, version=2)
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", range(6))
def test_softmax_random(case):
    rng = np.random.default_rng(400 + case)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 6, rank - 1)) + (int(rng.integers(1, 40)),)
    # input scales from "everything but the max vanishes" to "all taps count"
    scale = float(10 ** rng.uniform(-3, 0))
    check_model(softmax_model(rng, shape, scale, beta=float(rng.choice([1.0, 0.5, 2.0]))))


@pytest.mark.parametrize("scale", [0.17185351, 0.0039, 0.6])
def test_softmax_model_like(scale):
    """Scales seen in the MLPerf Tiny models (0.17) plus extremes of diff_min."""
    rng = np.random.default_rng(int(scale * 1000))
    check_model(softmax_model(rng, (1, 12), scale))


def test_softmax_int16_output():
    """keyword_scrambled_8bit's layer: int8 in, int16 out (scale 1/65536, zero point -32768)."""
    rng = np.random.default_rng(5)
    check_model(softmax_model(rng, (2, 7), 0.06996273, out="int16"))
    check_model(softmax_model(rng, (1, 30), 0.01, out="int16"), compilers=("gcc",))
