"""LOGICAL_AND / OR / NOT (bool) and float32 FLOOR_DIV, FLOOR_MOD against TFLite Micro; integer
FLOOR_DIV, FLOOR_MOD against LiteRT's reference kernels (TFLite Micro has float32 ones only)."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_frames, check_model
from opmodels import binary_model, broadcast_shapes, unary_model


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
def test_logical_binary_broadcast(op):
    rng = np.random.default_rng(1400)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, op, "bool", ins, out))


def test_logical_not():
    rng = np.random.default_rng(1410)
    check_model(unary_model(rng, "LOGICAL_NOT", "bool", (3, 11)))


def test_floor_div_float_broadcast():
    rng = np.random.default_rng(1420)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, "FLOOR_DIV", "float32", ins, out))


def test_floor_mod_float_broadcast():
    rng = np.random.default_rng(1430)
    out, ins = broadcast_shapes(rng, max_rank=4)
    check_model(binary_model(rng, "FLOOR_MOD", "float32", ins, out))


def _int_model(op, dtype, a_shape, b, out_shape) -> bytes:
    """a (an input) op b: b an input of shape `b` (a tuple) or a constant divisor (an array)."""
    mb = ModelBuilder()
    x = mb.tensor("a", a_shape, dtype)
    y = mb.const("b", b) if isinstance(b, np.ndarray) else mb.tensor("b", b, dtype)
    z = mb.tensor("y", out_shape, dtype)
    mb.op(op, [x, y], [z])
    return mb.finish([x] if isinstance(b, np.ndarray) else [x, y], [z])


@pytest.mark.parametrize("op", ["FLOOR_DIV", "FLOOR_MOD"])
def test_floor_int32_two_inputs(op):
    """Full-range int32 operands: signs differ in half the pairs, so floor and truncation do."""
    check_frames(_int_model(op, "int32", (2, 3, 4), (3, 1), (2, 3, 4)), "litert-builtin-ref")


@pytest.mark.parametrize("op,dtype", [("FLOOR_DIV", "int32"), ("FLOOR_MOD", "int32"),
                                      ("FLOOR_DIV", "int16"), ("FLOOR_MOD", "int8"),
                                      ("FLOOR_MOD", "int64")])
def test_floor_int_const_divisor(op, dtype):
    """Small divisors of both signs (a pose model's post-processing: index // width, % width)."""
    b = np.array([-7, -3, -1, 1, 2, 5, 9, 17], dtype)
    check_frames(_int_model(op, dtype, (3, 8), b, (3, 8)), "litert-builtin-ref",
                 targets=("host", "cortex-m4") if dtype == "int32" else ("host",))


def test_floor_int_refuses_mixed_types():
    import tempfile
    from pathlib import Path
    from edgecc.errors import UnsupportedModel
    from edgecc.frontends.tflite import load_tflite
    mb = ModelBuilder()
    x, y, z = mb.tensor("a", (4,), "int32"), mb.tensor("b", (4,), "int16"), mb.tensor("y", (4,), "int32")
    mb.op("FLOOR_DIV", [x, y], [z])
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(mb.finish([x, y], [z]))
        with pytest.raises(UnsupportedModel, match="one type: float32 or int8, int16, int32"):
            load_tflite(p)
