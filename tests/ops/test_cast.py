import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model, check_model_litert

PAIRS = [("int8", "int32"), ("int32", "int8"), ("float32", "int32"), ("int32", "float32"),
         ("int8", "float32"), ("float32", "int8"), ("int16", "int32"), ("int8", "int16"),
]


def cast_model(src, dst, shape=(3, 5, 7)):
    mb = ModelBuilder()
    q = lambda t: dict(scale=1.0, zero_point=0) if t in ("int8", "uint8", "int16") else {}  # noqa: E731
    x = mb.tensor("x", shape, src, **q(src))
    y = mb.tensor("y", shape, dst, **q(dst))
    mb.op("CAST", [x], [y], version=2)
    return mb.finish([x], [y])


@pytest.mark.parametrize("src,dst", PAIRS)
def test_cast_vs_tflm(src, dst):
    check_model(cast_model(src, dst))


@pytest.mark.parametrize("src,dst", [("bool", "int32"), ("int32", "bool"), ("float32", "bool"),
                                     ("uint8", "int8"), ("int8", "uint8"),
                                     ("int64", "int32"), ("int32", "int64"), ("float32", "int64"),
                                     ("int32", "uint32"), ("uint32", "int32"), ("float32", "uint32"),
                                     ("uint32", "float32"), ("int32", "uint16"), ("uint8", "uint16"),
                                     ("float32", "uint16")])
def test_cast_vs_litert(src, dst):
    check_model_litert(cast_model(src, dst))


@pytest.mark.parametrize("dst,gain", [("uint8", 1000.0), ("int64", 1e19), ("uint8", 1.0)])
def test_cast_float_saturates_as_litert(dst, gain):
    """float32 -> uint8 / int64 (only LiteRT runs them) saturate below and above the range, as
    LiteRT's reference kernel does; x * gain puts most values outside it."""
    from opcheck import check_frames
    mb = ModelBuilder()
    x = mb.tensor("x", (4, 9), "float32")
    k = mb.const("k", np.array([gain], np.float32))
    s = mb.tensor("s", (4, 9), "float32")
    y = mb.tensor("y", (4, 9), dst, **({"scale": 1.0, "zero_point": 0} if dst == "uint8" else {}))
    mb.op("MUL", [x, k], [s])
    mb.op("CAST", [s], [y], version=2)
    check_frames(mb.finish([x], [y]), "litert-builtin-ref")


@pytest.mark.parametrize("dst", ["int32", "float32", "uint8", "int8"])
def test_cast_from_uint16(dst):
    """uint16 -> dst (LiteRT's Python API cannot feed a uint16 input: int32 -> uint16 first)."""
    from opcheck import check_frames
    mb = ModelBuilder()
    x = mb.tensor("x", (5, 7), "int32")
    u = mb.tensor("u", (5, 7), "uint16")
    y = mb.tensor("y", (5, 7), dst, **({"scale": 1.0, "zero_point": 0} if "int8" in dst else {}))
    mb.op("CAST", [x], [u], version=2)
    mb.op("CAST", [u], [y], version=2)
    check_frames(mb.finish([x], [y]), "litert-builtin-ref")
