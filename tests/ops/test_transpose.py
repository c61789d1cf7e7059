"""TRANSPOSE vs TFLite Micro (numpy reference and generated C), and the permutation simplifier."""
import numpy as np
import pytest

from edgecc.ops.transpose import is_identity, simplify
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model


def transpose_model(shape, perm, dtype="int8"):
    mb = ModelBuilder()
    q = dict(scale=0.05, zero_point=3) if dtype in ("int8", "int16") else {}
    if dtype == "int16":
        q["zero_point"] = 0
    x = mb.tensor("x", shape, dtype, **q)
    p = mb.const("perm", np.array(perm, dtype=np.int32))
    y = mb.tensor("y", tuple(shape[a] for a in perm), dtype, **q)
    mb.op("TRANSPOSE", [x, p], [y])
    return mb.finish([x], [y])


@pytest.mark.parametrize("shape,perm,dtype", [
    ((1, 4, 5, 3), (0, 3, 1, 2), "int8"),     # NHWC -> NCHW
    ((2, 3, 4), (2, 0, 1), "int8"),
    ((3, 7), (1, 0), "int16"),
    ((2, 3, 2, 2, 3), (4, 2, 0, 3, 1), "int8"),
    ((5, 1, 4), (1, 2, 0), "float32"),
    ((2, 2, 3, 2, 3), (4, 3, 2, 1, 0), "int8"),
])
def test_transpose_vs_tflm(shape, perm, dtype):
    check_model(transpose_model(shape, perm, dtype), seeds=(0,), compilers=("gcc",))


def test_transpose_clang():
    check_model(transpose_model((2, 3, 4, 5), (3, 1, 0, 2)), seeds=(1,), compilers=("clang",))


def test_simplify_merges_and_drops_axes():
    assert simplify((1, 8, 8, 16), (0, 3, 1, 2)) == ([64, 16], [1, 0])
    assert simplify((4, 1, 5), (1, 0, 2)) == ([20], [0])
    assert is_identity((4, 1, 5), (1, 0, 2))          # moves only a unit axis: a reshape
    assert not is_identity((4, 2, 5), (1, 0, 2))
    rng = np.random.default_rng(0)
    for _ in range(50):  # the simplified transpose moves the same bytes as the original
        rank = int(rng.integers(1, 6))
        shape = tuple(int(s) for s in rng.integers(1, 4, size=rank))
        perm = tuple(int(a) for a in rng.permutation(rank))
        x = rng.integers(0, 100, size=shape)
        s2, p2 = simplify(shape, perm)
        want = np.transpose(x, perm).ravel()
        got = np.transpose(x.reshape(s2), p2).ravel() if s2 else x.ravel()
        assert np.array_equal(want, got), (shape, perm)


def test_rank6_is_refused_with_the_constraint_message(tmp_path):
    from edgecc.errors import UnsupportedModel
    from edgecc.frontends.tflite import load_tflite
    p = tmp_path / "t.tflite"
    p.write_bytes(transpose_model((2, 1, 2, 1, 2, 2), (5, 4, 3, 2, 1, 0)))
    with pytest.raises(UnsupportedModel, match="rank must be at most 5"):
        load_tflite(p)
