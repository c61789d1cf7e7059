"""REVERSE_V2, ZEROS_LIKE, FILL, ADD_N, L2_NORMALIZATION, L2_POOL_2D against TFLite Micro."""
import numpy as np
import pytest

from edgecc.ops import conv_out_size
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model, check_model_litert


@pytest.mark.parametrize("dtype,axes", [("float32", [1]), ("int8", [0]), ("int32", [-1]),
                                        ("int8", [1, 2])])
def test_reverse_v2(dtype, axes):
    """TFLite Micro reverses one axis; several axes against LiteRT's reference kernels."""
    mb = ModelBuilder()
    x = mb.tensor("x", (3, 4, 5), dtype, **({"scale": 0.1, "zero_point": 3} if dtype == "int8" else {}))
    a = mb.const("a", np.array(axes, np.int32))
    y = mb.tensor("y", (3, 4, 5), dtype, **({"scale": 0.1, "zero_point": 3} if dtype == "int8" else {}))
    mb.op("REVERSE_V2", [x, a], [y])
    (check_model if len(axes) == 1 else check_model_litert)(mb.finish([x], [y]))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_zeros_like(dtype):
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 5), dtype)
    y = mb.tensor("y", (2, 5), dtype)
    mb.op("ZEROS_LIKE", [x], [y])
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8"])
def test_fill_runtime_value(dtype):
    mb = ModelBuilder()
    q = {"scale": 0.5, "zero_point": 1} if dtype == "int8" else {}
    d = mb.const("dims", np.array([2, 3, 4], np.int32))
    v = mb.tensor("v", (), dtype, **q)
    y = mb.tensor("y", (2, 3, 4), dtype, **q)
    mb.op("FILL", [d, v], [y])
    check_model(mb.finish([v], [y]))


@pytest.mark.parametrize("dtype,k", [("float32", 3), ("int32", 2), ("int8", 2), ("int8", 5)])
def test_add_n(dtype, k):
    mb = ModelBuilder()
    q = dict(scale=0.07, zero_point=-9) if dtype == "int8" else {}
    xs = [mb.tensor(f"x{i}", (4, 7), dtype, **q) for i in range(k)]
    y = mb.tensor("y", (4, 7), dtype, **(dict(scale=0.2, zero_point=4) if q else {}))
    mb.op("ADD_N", xs, [y])
    # TFLite Micro's ADD_N has no int32 kernel: LiteRT's reference kernels there
    (check_model if dtype != "int32" else check_model_litert)(mb.finish(xs, [y]))


@pytest.mark.parametrize("shape", [(3, 17), (2, 3, 4, 5), (1, 1)])
def test_l2_normalization_float(shape):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "float32")
    y = mb.tensor("y", shape, "float32")
    mb.op("L2_NORMALIZATION", [x], [y])
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("shape", [(3, 17), (2, 3, 4, 5), (1, 1), (2, 300)])
def test_l2_normalization_int8(shape):
    rng = np.random.default_rng(1550)
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int8", scale=float(rng.uniform(0.01, 0.5)),
                  zero_point=int(rng.integers(-30, 30)))
    y = mb.tensor("y", shape, "int8", scale=1 / 128, zero_point=0)
    mb.op("L2_NORMALIZATION", [x], [y])
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("case", range(3))
def test_l2_pool_float(case):
    rng = np.random.default_rng(1500 + case)
    fh, fw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    h, w, c = int(rng.integers(fh, fh + 6)), int(rng.integers(fw, fw + 6)), int(rng.integers(1, 6))
    padding = case % 2
    mb = ModelBuilder()
    x = mb.tensor("x", (1, h, w, c), "float32")
    oh, ow = conv_out_size(padding, h, fh, sh, 1), conv_out_size(padding, w, fw, sw, 1)
    y = mb.tensor("y", (1, oh, ow, c), "float32")
    mb.op("L2_POOL_2D", [x], [y], {"padding": padding, "stride_h": sh, "stride_w": sw,
                                   "filter_height": fh, "filter_width": fw,
                                   "fused_activation_function": case})
    check_model(mb.finish([x], [y]))


@pytest.mark.parametrize("dtype,k", [("float32", 1), ("int8", 2), ("int32", 3)])
def test_gather_nd(dtype, k):
    """Constant indices (seeded run-time indices would fall outside the dimensions)."""
    rng = np.random.default_rng(1600 + k)
    shape = (4, 3, 5)
    mb = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 2} if dtype == "int8" else {}
    x = mb.tensor("x", shape, dtype, **q)
    idx = np.stack([rng.integers(0, shape[d], 6) for d in range(k)], axis=-1).astype(np.int32)
    i = mb.const("i", idx.reshape(2, 3, k))
    y = mb.tensor("y", (2, 3) + shape[k:], dtype, **q)
    mb.op("GATHER_ND", [x, i], [y])
    # TFLite Micro gathers float32 and int8 params; the others against LiteRT's reference kernels
    (check_model if dtype != "int32" else check_model_litert)(mb.finish([x], [y]))


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True),
                                               (True, True)])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_cumsum(dtype, exclusive, reverse):
    mb = ModelBuilder()
    q = dict(scale=0.05, zero_point=11) if dtype == "int8" else {}
    x = mb.tensor("x", (3, 6, 4), dtype, **q)
    a = mb.const("a", np.array(1, np.int32))
    y = mb.tensor("y", (3, 6, 4), dtype, **(dict(scale=0.3, zero_point=-7) if q else {}))
    mb.op("CUMSUM", [x, a], [y], {"exclusive": exclusive, "reverse": reverse})
    check_model(mb.finish([x], [y]))


def test_cumsum_int32_vs_litert():
    """TFLite Micro's CUMSUM has no int32 kernel: LiteRT's reference kernels (wrap-around)."""
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 5, 3), "int32")
    a = mb.const("a", np.array(-1, np.int32))
    y = mb.tensor("y", (2, 5, 3), "int32")
    mb.op("CUMSUM", [x, a], [y], {"exclusive": True})
    check_model_litert(mb.finish([x], [y]))


@pytest.mark.parametrize("kind", ["float32", "int8", "hybrid"])
def test_embedding_lookup(kind):
    rng = np.random.default_rng(1700)
    mb = ModelBuilder()
    ids = mb.const("ids", np.array([3, 0, 2, 2, 5], np.int32))
    if kind == "float32":
        v = mb.const("v", rng.standard_normal((6, 2, 3)).astype(np.float32))
    else:
        q = dict(scale=0.3, zero_point=0 if kind != "int8" else 4)
        v = mb.const("v", rng.integers(-128, 128, (6, 2, 3)).astype(np.int8), **q)
    out = "int8" if kind == "int8" else "float32"
    y = mb.tensor("y", (5, 2, 3), out, **(dict(scale=0.3, zero_point=4) if kind == "int8" else {}))
    # the lookup of a constant table by constant ids folds at compile time; a run-time table:
    x = mb.tensor("x", (6, 2, 3), "float32" if kind == "float32" else "int8",
                  **({} if kind == "float32" else {k: val for k, val in q.items()}))
    t = mb.tensor("t", (6, 2, 3), "float32" if kind == "float32" else "int8",
                  **({} if kind == "float32" else {k: val for k, val in q.items()}))
    mb.op("ADD" if kind == "float32" else "MAXIMUM", [x, v], [t])
    mb.op("EMBEDDING_LOOKUP", [ids, t], [y])
    check_model(mb.finish([x], [y]))


def test_broadcast_args_runtime():
    """Run-time shape vectors kept broadcastable (TFLite Micro crashes on others): s0 in
    [1, c0] per element, s1 all ones (seeded int32 inputs clamped by MINIMUM then MAXIMUM)."""
    mb = ModelBuilder()
    one = mb.const("one", np.array([1], np.int32))

    def vector(name, cap):
        x = mb.tensor(name, (len(cap),), "int32")
        lo = mb.tensor(name + "_lo", (len(cap),), "int32")
        s = mb.tensor(name + "_s", (len(cap),), "int32")
        mb.op("MINIMUM", [x, mb.const(name + "_cap", np.array(cap, np.int32))], [lo])
        mb.op("MAXIMUM", [lo, one], [s])
        return x, s
    x0, s0 = vector("x0", [1, 5, 1, 3])
    x1, s1 = vector("x1", [1, 1])
    y = mb.tensor("y", (4,), "int32")
    mb.op("BROADCAST_ARGS", [s0, s1], [y])
    check_model(mb.finish([x0, x1], [y]), seeds=(0, 1, 2))


def test_broadcast_args_constant_folds():
    """Constant vectors: [2, 1, 3] and [4, 1] broadcast to [2, 4, 3], folded at compile time and
    added to a run-time vector so the model keeps an input."""
    mb = ModelBuilder()
    s = mb.tensor("s", (3,), "int32")
    mb.op("BROADCAST_ARGS", [mb.const("a", np.array([2, 1, 3], np.int32)),
                             mb.const("b", np.array([4, 1], np.int32))], [s])
    x = mb.tensor("x", (3,), "int32")
    y = mb.tensor("y", (3,), "int32")
    mb.op("MINIMUM", [x, s], [y])
    check_model(mb.finish([x], [y]))
