import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opmodels import cases
from opcheck import check_model


def _q(dtype):
    return dict(scale=0.05, zero_point=-7) if dtype in ("int8", "int16") else {}


def split_model(rng, shape, axis, parts, dtype, v=False, sizes=None, neg_axis=False):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, dtype, **_q(dtype))
    ax = mb.const("axis", np.array([axis - len(shape) if neg_axis else axis], np.int32))
    if v:
        real = [s if s >= 0 else shape[axis] - (sum(sizes) + 1) for s in sizes]
    else:
        real = [shape[axis] // parts] * parts
    outs = []
    for k, s in enumerate(real):
        o = list(shape)
        o[axis] = s
        outs.append(mb.tensor(f"y{k}", o, dtype, **_q(dtype)))
    if v:
        ss = mb.const("sizes", np.array(sizes, np.int32))
        mb.op("SPLIT_V", [x, ss, ax], outs, {"num_splits": len(sizes)}, version=2)
    else:
        mb.op("SPLIT", [ax, x], outs, {"num_splits": parts}, version=3)
    return mb.finish([x], outs)


@pytest.mark.parametrize("case", cases(6, 3))
def test_split_random(case):
    rng = np.random.default_rng(800 + case)
    rank = int(rng.integers(1, 5))
    axis = int(rng.integers(0, rank))
    parts = int(rng.integers(1, 4))
    shape = [int(d) for d in rng.integers(1, 5, rank)]
    shape[axis] = parts * int(rng.integers(1, 3))
    dtype = ["int8", "float32", "int16", "int32", "int8", "int8"][case]
    check_model(split_model(rng, shape, axis, parts, dtype, neg_axis=case == 5))


@pytest.mark.parametrize("case", cases(5, 3))
def test_split_v_random(case):
    rng = np.random.default_rng(820 + case)
    rank = int(rng.integers(1, 5))
    axis = int(rng.integers(0, rank))
    shape = [int(d) for d in rng.integers(1, 5, rank)]
    sizes = [int(s) for s in rng.integers(1, 4, int(rng.integers(1, 4)))]
    if case % 2:
        sizes[int(rng.integers(0, len(sizes)))] = -1
        shape[axis] = sum(s for s in sizes if s >= 0) + int(rng.integers(1, 3))
    else:
        shape[axis] = max(sum(sizes), 1)
        sizes[-1] += shape[axis] - sum(sizes)
    check_model(split_model(rng, shape, axis, 0, "int8" if case < 4 else "float32", v=True,
                            sizes=sizes))


@pytest.mark.parametrize("case", cases(5, 3))
def test_unpack_random(case):
    rng = np.random.default_rng(840 + case)
    rank = int(rng.integers(1, 5))
    axis = int(rng.integers(0, rank))
    shape = [int(d) for d in rng.integers(1, 5, rank)]
    dtype = ["int8", "float32", "int32", "int8", "int16"][case]
    mb = ModelBuilder()
    x = mb.tensor("x", shape, dtype, **_q(dtype))
    oshape = [d for i, d in enumerate(shape) if i != axis]
    outs = [mb.tensor(f"y{k}", oshape, dtype, **_q(dtype)) for k in range(shape[axis])]
    mb.op("UNPACK", [x], outs, {"num": shape[axis], "axis": axis - (rank if case == 3 else 0)},
          version=2)
    check_model(mb.finish([x], outs))
