import numpy as np
import pytest

from edgecc.tflite_writer import ModelBuilder
from opmodels import cases
from opcheck import check_model, check_model_litert


def reduce_model(rng, op, shape, axes, keep, dtype, out_dtype=None, same_q=False, idx=np.int32):
    mb = ModelBuilder()
    q = dict(scale=float(rng.uniform(0.01, 0.2)), zero_point=int(rng.integers(-100, 100)))
    if dtype == "int16":
        q["zero_point"] = 0
    qi = q if dtype in ("int8", "int16") else {}
    qo = dict(scale=float(rng.uniform(0.01, 0.2)), zero_point=int(rng.integers(-100, 100)))
    if dtype == "int16":
        qo["zero_point"] = 0
    qo = (qi if same_q else qo) if dtype in ("int8", "int16") else {}
    x = mb.tensor("x", shape, dtype, **qi)
    rank = len(shape)
    res = []
    for a in axes:
        a = a + rank if a < 0 else a
        if a not in res:
            res.append(a)
    if op.startswith("ARG"):
        oshape = [d for i, d in enumerate(shape) if i not in res]
    elif keep:
        oshape = [1 if i in res else d for i, d in enumerate(shape)]
    else:
        oshape = [d for i, d in enumerate(shape) if i not in res]
    y = mb.tensor("y", oshape, out_dtype or dtype, **({} if op.startswith("ARG") else qo))
    ax = mb.const("axis", np.array(axes, idx))
    opts = {"output_type": 2 if (out_dtype or "int32") == "int32" else 4} if op.startswith("ARG") \
        else {"keep_dims": keep}
    mb.op(op, [x, ax], [y], opts, version=2)
    return mb.finish([x], [y])


def _shape_axes(rng, max_axes=2):
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 7, rank)]
    k = int(rng.integers(1, min(rank, max_axes) + 1))
    axes = [int(a) for a in rng.choice(rank, k, replace=False)]
    axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    return shape, axes


@pytest.mark.parametrize("op", ["MEAN", "SUM"])
@pytest.mark.parametrize("case", cases(6, 3))
def test_mean_sum(op, case):
    rng = np.random.default_rng(1400 + case + (50 if op == "SUM" else 0))
    shape, axes = _shape_axes(rng)
    dtype = ["int8", "int8", "int8", "float32", "int16", "int8"][case]
    check_model(reduce_model(rng, op, shape, axes, case % 2 == 0, dtype))


def test_mean_many_axes_vs_litert():
    """TFLite Micro resolves at most 2 reduced axes; LiteRT checks 3 and a duplicate."""
    rng = np.random.default_rng(1490)
    check_model_litert(reduce_model(rng, "MEAN", [2, 3, 4, 5], [0, 2, 3, -1], True, "int8"))


def test_mean_large_count():
    rng = np.random.default_rng(1491)
    check_model(reduce_model(rng, "MEAN", [1, 40, 40, 3], [1, 2], True, "int8"))


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("case", cases(5, 3))
def test_reduce_max_min(op, case):
    rng = np.random.default_rng(1500 + case + (50 if op == "REDUCE_MIN" else 0))
    shape, axes = _shape_axes(rng)
    dtype = ["int8", "float32", "int8", "int16", "int32"][case]
    model = reduce_model(rng, op, shape, axes, case % 2 == 0, dtype, same_q=True)
    # TFLite Micro's reference REDUCE_MAX/MIN take int8 and float32 only
    (check_model if dtype in ("int8", "float32") else check_model_litert)(model)


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("case", cases(4, 3))
def test_arg_max_min(op, case):
    rng = np.random.default_rng(1600 + case + (50 if op == "ARG_MIN" else 0))
    shape, axes = _shape_axes(rng, max_axes=1)
    dtype = ["int8", "float32", "int8", "int32"][case]
    model = reduce_model(rng, op, shape, axes, False, dtype,
                         out_dtype="int64" if case == 2 else "int32")
    # TFLite Micro: int8/float32 in, int32 out only
    (check_model if case < 2 else check_model_litert)(model)
