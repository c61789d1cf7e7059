"""DEQUANTIZE (int8/int16 -> float32): numpy reference and generated C vs TFLite Micro, bit for bit."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def dequantize_model(shape, in_dtype, scale, zp):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, in_dtype, scale=scale, zero_point=zp)
    y = mb.tensor("y", shape, "float32")
    mb.op("DEQUANTIZE", [x], [y])
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", range(4))
def test_dequantize_int8(case):
    rng = np.random.default_rng(600 + case)
    check_model(dequantize_model((1, int(rng.integers(1, 300))), "int8",
                                 float(rng.uniform(1e-4, 0.5)), int(rng.integers(-128, 128))))


def test_dequantize_int16():
    check_model(dequantize_model((3, 50), "int16", 0.00012345, 0))


def test_quantize_dequantize_roundtrip():
    """float -> int8 -> float through two layers: float input and float output of one model."""
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 20), "float32")
    q = mb.tensor("q", (2, 20), "int8", scale=0.0173, zero_point=5)
    y = mb.tensor("y", (2, 20), "float32")
    mb.op("QUANTIZE", [x], [q])
    mb.op("DEQUANTIZE", [q], [y])
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("case", range(3))
def test_dequantize_uint8(case):
    rng = np.random.default_rng(650 + case)
    shape = tuple(int(d) for d in rng.integers(1, 12, size=int(rng.integers(1, 4))))
    check_model(dequantize_model(shape, "uint8", float(rng.uniform(1e-4, 0.5)),
                                 int(rng.integers(0, 256))))
