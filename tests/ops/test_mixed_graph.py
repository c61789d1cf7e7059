"""Small graphs mixing the elementwise / data-movement ops with int32, bool and several outputs:
the planner and codegen must carry non-int8 intermediates and multi-output nodes."""
import numpy as np

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def test_split_argmax_gather_select():
    """x -> SPLIT(2) -> (ARG_MAX: int32 indices at run time) -> GATHER of the other half;
    GREATER of the halves (bool) -> SELECT_V2; CONCATENATION of both results."""
    rng = np.random.default_rng(2400)
    q = dict(scale=0.05, zero_point=3)
    mb = ModelBuilder()
    x = mb.tensor("x", (4, 8), "int8", **q)
    a = mb.tensor("a", (4, 4), "int8", **q)
    b = mb.tensor("b", (4, 4), "int8", **q)
    mb.op("SPLIT", [mb.const("axis", np.array([1], np.int32)), x], [a, b], {"num_splits": 2},
          version=3)
    idx = mb.tensor("idx", (4,), "int32")
    mb.op("ARG_MAX", [a, mb.const("ax1", np.array([1], np.int32))], [idx], {"output_type": 2},
          version=2)
    gathered = mb.tensor("gathered", (4, 4), "int8", **q)  # rows of b picked by a's argmax
    mb.op("GATHER", [b, idx], [gathered], {"axis": 0, "batch_dims": 0}, version=2)
    gt = mb.tensor("gt", (4, 4), "bool")
    mb.op("GREATER", [a, b], [gt], version=2)
    sel = mb.tensor("sel", (4, 4), "int8", **q)
    mb.op("SELECT_V2", [gt, a, b], [sel], version=1)
    y = mb.tensor("y", (8, 4), "int8", **q)
    mb.op("CONCATENATION", [gathered, sel], [y], {"axis": 0, "fused_activation_function": 0},
          version=3)
    check_model(mb.finish([x], [y, idx]))
    del rng


def test_unpack_mul_mean_outputs():
    """UNPACK into 3 graph outputs plus a MUL/MEAN chain on two of them."""
    mb = ModelBuilder()
    q = dict(scale=0.1, zero_point=-5)
    x = mb.tensor("x", (3, 2, 6), "int8", **q)
    parts = [mb.tensor(f"p{k}", (2, 6), "int8", **q) for k in range(3)]
    mb.op("UNPACK", [x], parts, {"num": 3, "axis": 0}, version=2)
    prod = mb.tensor("prod", (2, 6), "int8", scale=0.5, zero_point=0)
    mb.op("MUL", [parts[0], parts[1]], [prod], {"fused_activation_function": 0}, version=2)
    mean = mb.tensor("mean", (2, 1), "int8", scale=0.3, zero_point=1)
    mb.op("MEAN", [prod, mb.const("ax", np.array([1], np.int32))], [mean], {"keep_dims": True},
          version=2)
    check_model(mb.finish([x], [parts[2], mean, parts[0]]))
