"""QUANTIZE (float -> int, int -> int requantize): numpy reference and generated C vs TFLite Micro."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def quantize_model(shape, in_dtype, out_dtype, out_scale, out_zp, in_scale=None, in_zp=0):
    mb = ModelBuilder()
    if in_dtype == "float32":
        x = mb.tensor("x", shape, "float32")
    else:
        x = mb.tensor("x", shape, in_dtype, scale=in_scale, zero_point=in_zp)
    y = mb.tensor("y", shape, out_dtype, scale=out_scale, zero_point=out_zp)
    mb.op("QUANTIZE", [x], [y])
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", range(4))
def test_quantize_float_to_int8(case):
    rng = np.random.default_rng(500 + case)
    shape = (1, int(rng.integers(1, 50)), int(rng.integers(1, 5)))
    check_model(quantize_model(shape, "float32", "int8", float(rng.uniform(0.005, 0.05)),
                               int(rng.integers(-128, 128))))


@pytest.mark.parametrize("scale", [1.0 / 32, 1.0 / 16, 0.25])
def test_quantize_float_rounding_ties(scale):
    """Power-of-two scales: the seeded inputs' 1/64 grid lands on exact .5 ties."""
    check_model(quantize_model((4, 33), "float32", "int8", scale, -3))


def test_quantize_float_to_int16():
    check_model(quantize_model((3, 40), "float32", "int16", 1.0 / 4096, 0))


@pytest.mark.parametrize("in_dtype,out_dtype", [
    ("int8", "int8"), ("int16", "int8"), ("int8", "int16"), ("int16", "int16"), ("int16", "int32"),
    ("int8", "int32"),
])
def test_requantize(in_dtype, out_dtype):
    rng = np.random.default_rng(len(in_dtype) * 7 + len(out_dtype))
    in_zp = int(rng.integers(-100, 100)) if in_dtype == "int8" else 0
    out_zp = {"int8": int(rng.integers(-100, 100)), "int16": 0, "int32": 0}[out_dtype]
    in_scale = float(rng.uniform(0.0005, 0.1))
    for out_scale in (in_scale * float(rng.uniform(0.3, 0.9)), in_scale * float(rng.uniform(1.5, 300))):
        check_model(quantize_model((2, 37), in_dtype, out_dtype, out_scale, out_zp, in_scale, in_zp),
                    compilers=("gcc",))


def test_requantize_keyword_scrambled_layers():
    """The int16 -> int8 input and int16 -> int32 output layers of keyword_scrambled_8bit."""
    check_model(quantize_model((1, 96), "int16", "int8", 0.059208333, -128, 0.000625, 0))
    check_model(quantize_model((1, 2), "int16", "int32", 3.051851e-05, 0, 1.5259022e-05, -32768))


@pytest.mark.parametrize("case", range(6))
def test_requantize_uint8_edges(case):
    """uint8 -> int8 at a model's input and int8 -> uint8 at its output (the converter's _u8io
    models: equal scales, zero points 128 apart; and arbitrary scales), random shapes."""
    rng = np.random.default_rng(1200 + case)
    in_dtype, out_dtype = ("uint8", "int8") if case % 2 == 0 else ("int8", "uint8")
    shape = tuple(int(d) for d in rng.integers(1, 9, size=int(rng.integers(1, 4))))
    in_scale = float(rng.uniform(0.002, 0.2))
    if case < 2:  # the converter's case: same scale, zero point shifted by 128
        in_zp = int(rng.integers(0, 256)) if in_dtype == "uint8" else int(rng.integers(-128, 128))
        out_zp = in_zp - 128 if in_dtype == "uint8" else in_zp + 128
        out_scale = in_scale
    else:
        in_zp = int(rng.integers(0, 256)) if in_dtype == "uint8" else int(rng.integers(-128, 128))
        out_zp = int(rng.integers(0, 256)) if out_dtype == "uint8" else int(rng.integers(-128, 128))
        out_scale = in_scale * float(rng.uniform(0.2, 5.0))
    check_model(quantize_model(shape, in_dtype, out_dtype, out_scale, out_zp, in_scale, in_zp),
                compilers=("gcc", "clang") if case == 0 else ("gcc",))


def test_uint8_model_edges_documented_in_header(tmp_path):
    """uint8 in -> int8 RELU -> uint8 out: exact, and NAME.h states each edge's dtype, shape and
    quantization."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 5, 7), "uint8", scale=0.05, zero_point=128)
    q = mb.tensor("q", (1, 5, 7), "int8", scale=0.05, zero_point=0)
    r = mb.tensor("r", (1, 5, 7), "int8", scale=0.05, zero_point=0)
    y = mb.tensor("y", (1, 5, 7), "uint8", scale=0.05, zero_point=128)
    mb.op("QUANTIZE", [x], [q])
    mb.op("RELU", [q], [r])
    mb.op("QUANTIZE", [r], [y])
    data = mb.finish([x], [y])
    check_model(data, compilers=("gcc",))
    from edgecc.compiler import compile_model
    from edgecc.targets import get_target
    p = tmp_path / "u8.tflite"
    p.write_bytes(data)
    h = compile_model(p, get_target("host"), "u8").files["u8.h"]
    assert " *   input 0:  uint8_t [1, 5, 7] (uint8), scale 0.0500000007, zero point 128" in h
    assert " *   output 0: uint8_t [1, 5, 7] (uint8), scale 0.0500000007, zero point 128" in h
