import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from opmodels import cases, binary_model, broadcast_shapes, qparams

CMP = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]


@pytest.mark.parametrize("op", CMP)
@pytest.mark.parametrize("dtype", ["int8", "float32", pytest.param("int32", marks=pytest.mark.slow)])
def test_comparison(op, dtype):
    rng = np.random.default_rng(1900 + CMP.index(op) + 10 * ["int8", "float32", "int32"].index(dtype))
    out, ins = broadcast_shapes(rng, max_rank=4)
    if dtype == "int8":  # nearby scales so real values collide and equality is exercised
        s = float(rng.uniform(0.02, 0.1))
        q0 = dict(scale=s, zero_point=int(rng.integers(-10, 10)))
        q1 = dict(scale=s * 2, zero_point=int(rng.integers(-10, 10)))
        mb = ModelBuilder()
        a, b = mb.tensor("a", ins[0], "int8", **q0), mb.tensor("b", ins[1], "int8", **q1)
        y = mb.tensor("y", out, "bool")
        mb.op(op, [a, b], [y], version=2)
        model = mb.finish([a, b], [y])
    else:
        model = binary_model(rng, op, dtype, ins, out, out_dtype="bool", out_q={}, version=2)
    check_model(model)


def test_equal_many_pairs_int8():
    rng = np.random.default_rng(1950)
    check_model(binary_model(rng, "EQUAL", "int8", [(256, 1), (1, 256)], (256, 256),
                             out_dtype="bool", out_q={}, version=2))


@pytest.mark.parametrize("case", cases(4, 2))
def test_select_v2(case):
    rng = np.random.default_rng(1960 + case)
    out, ins = broadcast_shapes(rng, n_inputs=3, max_rank=4)
    dtype = ["int8", "float32", "int16", "int8"][case]  # TFLM: no int32 SELECT_V2
    mb = ModelBuilder()
    q = qparams(rng, dtype)
    c = mb.tensor("c", ins[0], "bool")
    a = mb.tensor("a", ins[1], dtype, **q)
    b = mb.tensor("b", ins[2], dtype, **q)
    y = mb.tensor("y", out, dtype, **q)
    mb.op("SELECT_V2", [c, a, b], [y], version=1)
    check_model(mb.finish([c, a, b], [y]))
