import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opmodels import cases
from opcheck import check_model, check_model_litert


def _q(dtype):
    return dict(scale=0.05, zero_point=-7) if dtype in ("int8", "int16") else {}


def one_op(op, shape, out_shape, dtype, consts, options=None, version=1):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, dtype, **_q(dtype))
    cs = [mb.const(f"c{k}", c) for k, c in enumerate(consts)]
    y = mb.tensor("y", out_shape, dtype, **_q(dtype))
    mb.op(op, [x, *cs], [y], options or {}, version=version)
    return mb.finish([x], [y])


def rand_shape(rng, max_rank=4, lo=1, hi=6):
    return [int(d) for d in rng.integers(lo, hi, int(rng.integers(1, max_rank + 1)))]


@pytest.mark.parametrize("case", cases(6, 3))
def test_slice_random(case):
    rng = np.random.default_rng(900 + case)
    shape = rand_shape(rng, max_rank=5 if case == 5 else 4)
    begin = [int(rng.integers(0, d)) for d in shape]
    size = [int(rng.integers(1, d - b + 1)) for d, b in zip(shape, begin)]
    if case % 2:
        size[0] = -1
    out = [d - b if s == -1 else s for d, b, s in zip(shape, begin, size)]
    dtype = ["int8", "int8", "float32", "int32", "int16", "int8"][case]
    idx = np.int64 if case == 3 else np.int32
    check_model(one_op("SLICE", shape, out, dtype,
                       [np.array(begin, idx), np.array(size, idx)], version=5))


@pytest.mark.parametrize("case", cases(4, 2))
def test_tile_vs_litert(case):
    rng = np.random.default_rng(920 + case)
    shape = rand_shape(rng, hi=4)
    mult = [int(m) for m in rng.integers(1, 4, len(shape))]
    dtype = ["int8", "float32", "int32", "bool"][case]
    out = [d * m for d, m in zip(shape, mult)]
    check_model_litert(one_op("TILE", shape, out, dtype, [np.array(mult, np.int32)]))


@pytest.mark.parametrize("case", cases(5, 2))
def test_broadcast_to_random(case):
    rng = np.random.default_rng(940 + case)
    out = rand_shape(rng, max_rank=5 if case == 4 else 4, hi=5)
    drop = int(rng.integers(0, len(out)))
    shape = [1 if rng.random() < 0.5 else d for d in out[drop:]] or [1]
    dtype = ["int8", "float32", "int32", "int16", "int8"][case]
    check_model(one_op("BROADCAST_TO", shape, out, dtype, [np.array(out, np.int32)], version=2))
