"""Shapes from the ops, not from the file (edgecc/frontends/shapes.py): placeholder shapes as
TensorFlow's converter writes them (Keras UpSampling2D, dilated Conv1D) are overridden by what each
op computes, SHAPE -> STRIDED_SLICE -> CONCATENATION/PACK/MUL chains fold at import, and RESHAPE,
TILE, BROADCAST_TO, RESIZE_NEAREST_NEIGHBOR, EXPAND_DIMS accept operands computed that way; each
model is bit-exact with its oracle (LiteRT BUILTIN_REF where TFLite Micro lacks an op or refuses
the placeholder, TFLite Micro otherwise)."""
from __future__ import annotations

import numpy as np
import pytest

from edgecc.errors import ModelFormatError
from edgecc.frontends.tflite import load_tflite
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model, check_model_litert
from opmodels import cases

Q = dict(scale=0.05, zero_point=-3)


def _shape_of(mb: ModelBuilder, x: int, rank: int, first: int, last: int) -> int:
    """STRIDED_SLICE(SHAPE(x))[first:last]: a piece of x's shape computed by ops."""
    s = mb.tensor(f"shape{len(mb.tensors)}", (rank,), "int32")
    mb.op("SHAPE", [x], [s], {"out_type": 2})
    piece = mb.tensor(f"piece{len(mb.tensors)}", (last - first,), "int32")
    idx = [mb.const(f"i{len(mb.tensors)}", np.array([v], np.int32)) for v in (first, last, 1)]
    mb.op("STRIDED_SLICE", [s, *idx], [piece])
    return piece


def _concat_ints(mb: ModelBuilder, parts: list[int], n: int) -> int:
    out = mb.tensor(f"cat{len(mb.tensors)}", (n,), "int32")
    mb.op("CONCATENATION", parts, [out], {"axis": 0})
    return out


def upsample_model(rng, wrong: bool = True) -> bytes:
    """Keras UpSampling2D(2) + Concatenate as the converter writes them: EXPAND_DIMS -> TILE ->
    RESHAPE whose shape SHAPE -> STRIDED_SLICE -> CONCATENATION computes, the RESHAPE's output
    declared as the placeholder [1, 1, W, C] (shape_signature [-1, -1, W, C])."""
    h, w, c, c2 = (int(v) for v in rng.integers(1, 5, 4))
    mb = ModelBuilder()
    x = mb.tensor("x", (1, h, w, c), "int8", **Q)
    e = mb.tensor("e", (1, h, 1, w, c), "int8", **Q)
    mb.op("EXPAND_DIMS", [x, mb.const("axis", np.array(2, np.int32))], [e])
    t = mb.tensor("t", (1, h, 2, w, c), "int8", **Q)
    mb.op("TILE", [e, mb.const("m", np.array([1, 1, 2, 1, 1], np.int32))], [t], version=3)
    batch = _shape_of(mb, x, 4, 0, 1)
    shape = _concat_ints(mb, [batch, mb.const("hw", np.array([2 * h, w], np.int32)),
                              mb.const("c", np.array([c], np.int32))], 4)
    r = mb.tensor("r", (1, 1 if wrong else 2 * h, w, c), "int8", **Q)
    mb.op("RESHAPE", [t, shape], [r])
    y = mb.tensor("y", (1, 2 * h, w, c2), "int8", **Q)
    out = mb.tensor("out", (1, 2 * h, w, c + c2), "int8", **Q)
    mb.op("CONCATENATION", [r, y], [out], {"axis": 3})
    return mb.finish([x, y], [out])


@pytest.mark.parametrize("case", cases(3, 2))
def test_upsampling_placeholder_shapes_are_computed(case):
    rng = np.random.default_rng(3100 + case)
    data = upsample_model(rng)
    check_model_litert(data, compilers=("gcc",) if case else ("gcc", "clang"))


def test_inspect_notes_say_where_the_file_was_wrong(tmp_path):
    p = tmp_path / "up.tflite"
    p.write_bytes(upsample_model(np.random.default_rng(1)))
    g = load_tflite(p)
    assert [n.op for n in g.nodes] == ["EXPAND_DIMS", "TILE", "RESHAPE", "CONCATENATION"]
    wrong = [s for s in g.notes if "the file says" in s]
    assert len(wrong) == 1 and wrong[0].startswith("op 5 (RESHAPE)")
    assert sum("folded at import" in s for s in g.notes) == 3  # SHAPE, STRIDED_SLICE, CONCAT
    p.write_bytes(upsample_model(np.random.default_rng(1), wrong=False))
    assert not [s for s in load_tflite(p).notes if "the file says" in s]


@pytest.mark.parametrize("case", cases(4, 2))
def test_tile_with_computed_multiples(case):
    """multiples = MUL(CONCATENATION(SHAPE(x)[0:1], k), f): no TypeError, bit-exact."""
    rng = np.random.default_rng(3200 + case)
    shape = [1, *(int(v) for v in rng.integers(1, 4, 3))]
    k = [int(v) for v in rng.integers(1, 3, 3)]
    f = [1, *(int(v) for v in rng.integers(1, 3, 3))]
    mult = [a * b for a, b in zip([1, *k], f)]
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int8", **Q)
    cat = _concat_ints(mb, [_shape_of(mb, x, 4, 0, 1), mb.const("k", np.array(k, np.int32))], 4)
    m = mb.tensor("mult", (4,), "int32")
    mb.op("MUL", [cat, mb.const("f", np.array(f, np.int32))], [m])
    y = mb.tensor("y", [1, 1, 1, 1] if case % 2 else [d * t for d, t in zip(shape, mult)],
                  "int8", **Q)
    mb.op("TILE", [x, m], [y], version=3)
    check_model_litert(mb.finish([x], [y]), compilers=("gcc",))


@pytest.mark.parametrize("op", ["BROADCAST_TO", "RESIZE_NEAREST_NEIGHBOR"])
def test_computed_shape_operands(op):
    """BROADCAST_TO's shape and RESIZE_NEAREST_NEIGHBOR's size computed from SHAPE, the outputs
    declared as placeholders."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 3, 1, 4), "int8", **Q)
    if op == "BROADCAST_TO":
        s = _concat_ints(mb, [_shape_of(mb, x, 4, 0, 2), mb.const("k", np.array([5], np.int32)),
                              _shape_of(mb, x, 4, 3, 4)], 4)
    else:
        s = mb.tensor("size", (2,), "int32")
        mb.op("MUL", [_shape_of(mb, x, 4, 1, 3), mb.const("k", np.array([2, 3], np.int32))], [s])
    y = mb.tensor("y", (1, 1, 1, 4), "int8", **Q)
    mb.op(op, [x, s], [y], version=2 if op == "BROADCAST_TO" else 1)
    check_model_litert(mb.finish([x], [y]), compilers=("gcc",))


def test_symbolic_input_dims(tmp_path):
    """An input declared [4, 6, 3] with shape_signature [-1, -1, 3]: batch 1, the other symbolic
    dim kept at the file's 6, both noted; everything after it sized from the ops."""
    mb = ModelBuilder()
    x = mb.tensor("x", (4, 6, 3), "int8", signature=(-1, -1, 3), **Q)
    y = mb.tensor("y", (4, 6, 3), "int8", signature=(-1, -1, 3), **Q)
    mb.op("RELU", [x], [y])
    p = tmp_path / "sym.tflite"
    p.write_bytes(mb.finish([x], [y]))
    g = load_tflite(p)
    assert g.type(g.inputs[0]).shape == (1, 6, 3) and g.type(g.outputs[0]).shape == (1, 6, 3)
    assert any("symbolic batch resolved with batch 1" in s for s in g.notes)
    assert any("symbolic dims [1]" in s and "[6]" in s for s in g.notes)
    assert any(s.startswith("op 0 (RELU)") and "the file says [4, 6, 3]" in s for s in g.notes)


def test_reshape_to_a_gathered_shape():
    """RESHAPE(x, GATHER(SHAPE(x), [0, 2, 1, 3])) declared [1, 1, 1, C]: the shape gathered at
    import, the placeholder overridden, the RELU after it sized by the computed shape."""
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 3, 5, 2), "int8", **Q)
    s = mb.tensor("s", (4,), "int32")
    mb.op("SHAPE", [x], [s], {"out_type": 2})
    perm = mb.tensor("perm", (4,), "int32")
    mb.op("GATHER", [s, mb.const("idx", np.array([0, 2, 1, 3], np.int32))], [perm], {"axis": 0})
    r = mb.tensor("r", (1, 1, 1, 2), "int8", **Q)
    mb.op("RESHAPE", [x, perm], [r])
    y = mb.tensor("y", (1, 1, 1, 2), "int8", **Q)
    mb.op("RELU", [r], [y])
    data = mb.finish([x], [y])
    check_model_litert(data, compilers=("gcc",))


def dilated_conv1d_model(rng, same: bool, placeholders: bool = True) -> bytes:
    """A Keras Conv1D(dilation_rate=d) as the converter writes it: SPACE_TO_BATCH_ND ->
    EXPAND_DIMS -> CONV_2D -> RESHAPE(-1, ...) -> BATCH_TO_SPACE_ND on 3-D tensors, every tensor
    after the SPACE_TO_BATCH_ND declared with the placeholder batch 1 (really d)."""
    d, k = int(rng.integers(2, 4)), 3
    length = d * int(rng.integers(3, 7))
    c, oc = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    pad = d * (k - 1) // 2 if same else 0
    extra = (-(length + 2 * pad)) % d
    mid = (length + 2 * pad + extra) // d
    out_len = d * (mid - k + 1) - extra
    b = 1 if placeholders else d
    mb = ModelBuilder()
    x = mb.tensor("x", (1, length, c), "int8", **Q)
    s2b = mb.tensor("s2b", (b, mid, c), "int8", **Q)
    block = mb.const("block", np.array([d], np.int32))
    mb.op("SPACE_TO_BATCH_ND", [x, block, mb.const("pads", np.array([[pad, pad + extra]], np.int32))],
          [s2b], version=2)
    e = mb.tensor("e", (b, 1, mid, c), "int8", **Q)
    mb.op("EXPAND_DIMS", [s2b, mb.const("axis", np.array(-3, np.int32))], [e])
    w = mb.const("w", rng.integers(-127, 128, (oc, 1, k, c)).astype(np.int8),
                 scale=list(rng.uniform(0.002, 0.02, oc)), axis=0)
    bias = mb.const("b", rng.integers(-300, 300, oc).astype(np.int32),
                    scale=[0.05 * 0.01] * oc, axis=0)
    conv = mb.tensor("conv", (b, 1, mid - k + 1, oc), "int8", scale=0.08, zero_point=5)
    mb.op("CONV_2D", [e, w, bias], [conv], {"padding": 1, "stride_w": 1, "stride_h": 1,
                                             "fused_activation_function": 0}, version=3)
    r = mb.tensor("r", (b, mid - k + 1, oc), "int8", scale=0.08, zero_point=5)
    mb.op("RESHAPE", [conv, mb.const("new", np.array([-1, mid - k + 1, oc], np.int32))], [r])
    y = mb.tensor("y", (1, out_len, oc), "int8", scale=0.08, zero_point=5)
    mb.op("BATCH_TO_SPACE_ND", [r, block, mb.const("crops", np.array([[0, extra]], np.int32))],
          [y], version=2)
    return mb.finish([x], [y])


@pytest.mark.parametrize("case", cases(4, 2))
def test_dilated_conv1d_3d_batch_space(case):
    """3-D SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND around a convolution with the converter's
    placeholder batch. padding='valid': bit-exact with TFLite Micro. padding='same': TFLite Micro
    fills the padding with a value it never initializes (SpaceToBatchParams.output_offset), which
    the convolution reads, so LiteRT BUILTIN_REF (the zero point, as TFLite) is the oracle."""
    rng = np.random.default_rng(3300 + case)
    same, placeholders = case % 2 == 1, case < 2
    data = dilated_conv1d_model(rng, same, placeholders)
    (check_model_litert if same or placeholders else check_model)(data, compilers=("gcc",))


def test_tflm_is_not_the_oracle_of_placeholder_shapes(tmp_path):
    """TFLite Micro computes a placeholder-shaped model on the file's shapes (only batch 0 of the
    SPACE_TO_BATCH_ND output here): its results are not the model's, so verify uses LiteRT."""
    from edgecc.verify.reference import LITERT_REF, TFLM, TFLMCannotRun, run_reference, run_tflm
    p = tmp_path / "conv1d.tflite"
    p.write_bytes(dilated_conv1d_model(np.random.default_rng(5), same=False))
    g = load_tflite(p)
    x = [np.random.default_rng(0).integers(-128, 128, g.type(g.inputs[0]).shape).astype(np.int8)]
    with pytest.raises(TFLMCannotRun, match="placeholder shapes"):
        run_tflm(p, x, 1)
    assert run_reference(p, x, 1)[1] == LITERT_REF
    p.write_bytes(dilated_conv1d_model(np.random.default_rng(5), same=True, placeholders=False))
    with pytest.raises(TFLMCannotRun, match="padding of SPACE_TO_BATCH_ND .op 0. uninitialized"):
        run_tflm(p, x, 1)
    p.write_bytes(dilated_conv1d_model(np.random.default_rng(5), same=False, placeholders=False))
    assert run_reference(p, x, 1)[1] == TFLM


def test_internal_error_after_reading_is_not_a_malformed_model(tmp_path, monkeypatch):
    """An exception inside edgecc once the file is read is edgecc's bug: it propagates (the CLI
    makes it an internal error, exit 3) instead of blaming the model as malformed."""
    from edgecc.ops import get_op
    p = tmp_path / "up.tflite"
    p.write_bytes(upsample_model(np.random.default_rng(2)))

    def broken(g, n):
        raise TypeError("a bug")
    monkeypatch.setattr(get_op("CONCATENATION"), "infer", broken)
    with pytest.raises(TypeError):
        try:
            load_tflite(p)
        except ModelFormatError as e:
            pytest.fail(f"an internal error was blamed on the model: {e}")
