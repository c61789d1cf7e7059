"""Property tests (hypothesis) of the helpers the elementwise and data-movement ops share, and
of numpy references against TFLite Micro over many random configurations (no C build: the
parametrized per-op tests build the C)."""
import itertools
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from edgecc.ops._broadcast import broadcast_loops, broadcast_shape
from edgecc.ops._copy import Segment
from opcheck import check_reference
from opmodels import binary_model
from test_reduce import reduce_model

dims = st.integers(1, 4)


@st.composite
def broadcastable(draw):
    rank = draw(st.integers(0, 5))
    out = tuple(draw(dims) for _ in range(rank))
    shapes = []
    for _ in range(draw(st.integers(1, 3))):
        drop = draw(st.integers(0, rank))
        shapes.append(tuple(1 if draw(st.booleans()) else d for d in out[drop:]))
    return shapes


def _walk(dims_, strides):
    for idx in itertools.product(*[range(d) for d in dims_]):
        yield tuple(sum(i * s for i, s in zip(idx, st_)) for st_ in strides)


@given(broadcastable())
@settings(max_examples=200, deadline=None)
def test_broadcast_loops_match_numpy(shapes):
    out = broadcast_shape(*shapes)
    arrays = [np.arange(int(np.prod(s)), dtype=np.int64).reshape(s) for s in shapes]
    expect = [np.broadcast_to(a, out).ravel() for a in arrays]
    loops = broadcast_loops(shapes, out)
    assert len(loops.dims) <= max(len(out), 1)
    for pos, offs in enumerate(_walk(loops.dims, [loops.out_strides, *loops.strides])):
        assert offs[0] == pos  # the output is written in order
        for k, a in enumerate(arrays):
            assert a.ravel()[offs[k + 1]] == expect[k][pos]


@given(st.lists(st.tuples(st.integers(1, 4), st.integers(-6, 6), st.integers(-6, 6)),
                min_size=0, max_size=5), st.integers(0, 50), st.integers(0, 50))
@settings(max_examples=300, deadline=None)
def test_segment_simplification_keeps_every_copy(axes, src_off, dst_off):
    seg = Segment([a[0] for a in axes], [a[1] for a in axes], [a[2] for a in axes], src_off, dst_off)
    simple = seg.simplified()
    before = list(_walk(seg.dims, [seg.src_strides, seg.dst_strides]))
    after = list(_walk(simple.dims, [simple.src_strides, simple.dst_strides]))
    assert before == after  # same pairs, same order (order matters for in-place mirror copies)
    assert simple.src_offset == src_off and simple.dst_offset == dst_off


@given(st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_sub_mul_references_match_tflm(seed):
    rng = np.random.default_rng(seed)
    from opmodels import broadcast_shapes
    out, ins = broadcast_shapes(rng, max_rank=4)
    op = "SUB" if seed % 2 else "MUL"
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(binary_model(rng, op, "int8", ins, out,
                                   {"fused_activation_function": seed % 4}, version=2))
        check_reference(p, seed % 3)


@given(st.integers(0, 10_000))
@settings(max_examples=25, deadline=None)
def test_mean_reference_matches_tflm(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 7, rank)]
    axes = [int(a) for a in rng.choice(rank, int(rng.integers(1, min(rank, 2) + 1)), replace=False)]
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(reduce_model(rng, "MEAN", shape, axes, bool(seed % 2), "int8"))
        check_reference(p, seed % 3)
