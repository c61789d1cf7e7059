"""The new builtins' C on the cross targets (arm-none-eabi-gcc / aarch64 gcc, QEMU): one model
chaining int8 DIV, L2_NORMALIZATION, ADD_N, CUMSUM and float32 EXP, LOG, SQRT, ROUND, FLOOR_MOD,
L2_POOL_2D, verified against TFLite Micro (runtime_c/edgecc_math.h's functions and the
fixed-point helpers under each target's compiler)."""
import numpy as np
import pytest

from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import verify_model

pytestmark = pytest.mark.qemu


def chain_model() -> bytes:
    rng = np.random.default_rng(1800)
    mb = ModelBuilder()
    q = dict(scale=0.05, zero_point=3)
    x = mb.tensor("x", (2, 12), "int8", **q)
    d = rng.integers(-128, 128, (2, 12))
    d = np.where(d == -5, -4, d).astype(np.int8)
    dv = mb.tensor("dv", (2, 12), "int8", scale=0.08, zero_point=-2)
    mb.op("DIV", [x, mb.const("d", d, scale=0.1, zero_point=-5)], [dv])
    ln = mb.tensor("ln", (2, 12), "int8", scale=1 / 128, zero_point=0)
    mb.op("L2_NORMALIZATION", [dv], [ln])
    an = mb.tensor("an", (2, 12), "int8", scale=0.03, zero_point=1)
    mb.op("ADD_N", [ln, ln, ln], [an])
    cs = mb.tensor("cs", (2, 12), "int8", scale=0.2, zero_point=0)
    mb.op("CUMSUM", [an, mb.const("ax", np.array(1, np.int32))], [cs])
    f = mb.tensor("f", (2, 12), "float32")
    mb.op("DEQUANTIZE", [cs], [f])
    e = mb.tensor("e", (2, 12), "float32")
    mb.op("EXP", [f], [e])
    lg = mb.tensor("lg", (2, 12), "float32")
    mb.op("LOG", [e], [lg])
    sq = mb.tensor("sq", (2, 12), "float32")
    mb.op("SQRT", [e], [sq])
    rd = mb.tensor("rd", (2, 12), "float32")
    mb.op("ROUND", [lg], [rd])
    fm = mb.tensor("fm", (2, 12), "float32")
    mb.op("FLOOR_MOD", [sq, mb.const("m", np.array([0.7], np.float32))], [fm])
    r4 = mb.tensor("r4", (1, 2, 12, 1), "float32")
    mb.op("RESHAPE", [fm, mb.const("shape", np.array([1, 2, 12, 1], np.int32))], [r4])
    lp = mb.tensor("lp", (1, 1, 6, 1), "float32")
    mb.op("L2_POOL_2D", [r4], [lp], {"padding": 1, "stride_h": 2, "stride_w": 2,
                                     "filter_height": 2, "filter_width": 2})
    return mb.finish([x], [rd, lp])


@pytest.mark.parametrize("target", ["host", "cortex-m4", "aarch64"])
def test_new_ops_chain(tmp_path, target):
    path = tmp_path / "m.tflite"
    path.write_bytes(chain_model())
    r = verify_model(path, get_target(target))
    assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
