"""PACK of activations: generated C and the numpy reference against TFLite Micro, and the constant
case still folded away at compile time."""
import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from opmodels import random_data


def pack_model(rng, n_inputs: int, shape, axis: int, dtype: str = "int8", const_index=None) -> bytes:
    mb = ModelBuilder()
    q = {}
    if dtype == "int8":  # TFLM copies int8 without requantizing: the converter gives all one scale
        q = dict(scale=float(rng.uniform(0.01, 0.5)), zero_point=int(rng.integers(-128, 128)))
    elif dtype == "int16":
        q = dict(scale=0.01, zero_point=0)
    ins = []
    for k in range(n_inputs):
        if k == const_index:
            ins.append(mb.const(f"c{k}", random_data(rng, dtype, shape), **q))
        else:
            ins.append(mb.tensor(f"x{k}", shape, dtype, **q))
    out = list(shape)
    out.insert(axis if axis >= 0 else axis + len(shape) + 1, n_inputs)
    y = mb.tensor("y", out, dtype, **q)
    mb.op("PACK", ins, [y], {"values_count": n_inputs, "axis": axis}, version=2)
    return mb.finish([t for k, t in enumerate(ins) if k != const_index], [y])


def _configs():
    """Every (rank, axis) for ranks 1-4, negative axes on every other case, dtypes rotating."""
    dtypes = ["int8", "int32", "float32", "int8", "int16", "int64", "int8"]
    out, case = [], 0
    for rank in range(1, 5):
        for axis in range(rank + 1):
            neg = case % 2 == 1
            out.append((case, rank, axis - rank - 1 if neg else axis, dtypes[case % len(dtypes)]))
            case += 1
    return out


@pytest.mark.parametrize("case,rank,axis,dtype", _configs())
def test_pack_random(case, rank, axis, dtype):
    rng = np.random.default_rng(900 + case)
    shape = tuple(int(d) for d in rng.integers(1, 5, rank))
    check_model(pack_model(rng, int(rng.integers(2, 5)), shape, axis, dtype), seeds=(0,))


def test_pack_with_a_constant_input():
    rng = np.random.default_rng(950)
    check_model(pack_model(rng, 3, (2, 3), 1, "int8", const_index=1), seeds=(0,))


def test_constant_pack_is_still_folded():
    from edgecc.passes import optimize
    from passes_util import load
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 6), "int8", scale=0.1, zero_point=0)
    dims = [mb.const(f"d{i}", np.array(v, np.int32)) for i, v in enumerate((2, 3))]
    packed = mb.tensor("packed", (2,), "int32")
    mb.op("PACK", dims, [packed], {"values_count": 2, "axis": 0})
    y = mb.tensor("y", (2, 3), "int8", scale=0.1, zero_point=0)
    mb.op("RESHAPE", [x, packed], [y])
    g2, _ = optimize(load(mb.finish([x], [y])))
    assert [n.op for n in g2.nodes] == ["RESHAPE"]
    assert np.array_equal(g2.value(g2.nodes[0].inputs[1]).data, [2, 3])
