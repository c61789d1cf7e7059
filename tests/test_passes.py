"""Graph passes: every rule applies where exact (same numbers, and bit-exact C vs TFLite Micro for
whole small models) and refuses where not, saying why; the engine's invariants; DCE."""
import numpy as np
import pytest

from edgecc.ir import DType, Graph, Node, TensorType, Value
from edgecc.passes import eliminate, fold, optimize
from edgecc.passes.dce import dead_code
from edgecc.passes.rewrite import Match, Rewrite, Rule, RuleError, run_rules
from edgecc.tflite_writer import ModelBuilder
from opcheck import check_model
from passes_util import Q, apply, assert_same_numbers, check_c, fc_weights, load, ops


# ---- constant folding ------------------------------------------------------------------------

def folded_weights_model():
    """FC whose weights are TRANSPOSE(const) and whose bias is RESHAPE(const)."""
    rng = np.random.default_rng(1)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8), "int8", **Q)
    wt = mb.const("w_t", rng.integers(-127, 128, (8, 4)).astype(np.int8), scale=0.01)
    perm = mb.const("perm", np.array([1, 0], np.int32))
    w = mb.tensor("w", (4, 8), "int8", scale=0.01)
    mb.op("TRANSPOSE", [wt, perm], [w])
    b2 = mb.const("b2", rng.integers(-500, 500, (2, 2)).astype(np.int32), scale=0.0005)
    b = mb.tensor("b", (4,), "int32", scale=0.0005)
    mb.op("RESHAPE", [b2], [b], {"new_shape": [4]})
    y = mb.tensor("y", (1, 4), "int8", scale=0.1, zero_point=2)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], {"fused_activation_function": 0}, version=4)
    return mb.finish([x], [y])


def test_fold_constant_weights_applies_and_is_bit_exact():
    data = folded_weights_model()
    g = load(data)
    g2, rep = apply(g, fold.FOLD)
    assert ops(g2) == ["FULLY_CONNECTED"]
    assert len(rep.applied) == 2 and "TRANSPOSE" in rep.applied[0]
    assert g2.value(g2.nodes[0].inputs[1]).is_const
    assert_same_numbers(g, g2)
    check_c(data)  # the FC reference needs constant weights: TFLM vs the compiled C only


def test_fold_of_a_graph_output_is_copied_into_the_arena():
    """A graph output folds to a constant; the `outputs` pass writes it with EDGECC_COPY."""
    from edgecc.passes import optimize
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 3), "int8", **Q)
    s = mb.tensor("s", (2,), "int32")
    mb.op("SHAPE", [x], [s], {"out_type": 2})
    data = mb.finish([x], [s])
    g = load(data)
    g2, rep = apply(g, fold.FOLD)
    assert ops(g2) == [] and g2.value(g2.outputs[0]).is_const
    g3, _ = optimize(g)
    assert ops(g3) == ["EDGECC_COPY"] and not g3.value(g3.outputs[0]).is_const
    check_c(data)


def keras_reshape_model(shape=(1, 4, 6, 2), target=(-1, 48), units=5):
    """What converters emit for keras Reshape(target) + Dense: SHAPE -> STRIDED_SLICE -> PACK ->
    RESHAPE -> FULLY_CONNECTED."""
    rng = np.random.default_rng(7)
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int8", **Q)
    s = mb.tensor("shape", (len(shape),), "int32")
    mb.op("SHAPE", [x], [s], {"out_type": 2})
    idx = [mb.const(k, np.array(v, np.int32)) for k, v in (("b", [0]), ("e", [1]), ("st", [1]))]
    batch = mb.tensor("batch", (), "int32")
    mb.op("STRIDED_SLICE", [s, *idx], [batch], {"shrink_axis_mask": 1})
    tail = [mb.const(f"d{i}", np.array(v, np.int32)) for i, v in enumerate(target)]
    packed = mb.tensor("packed", (1 + len(target),), "int32")
    mb.op("PACK", [batch, *tail], [packed], {"values_count": 1 + len(target), "axis": 0})
    depth = int(np.prod(shape[1:]))
    r = mb.tensor("reshaped", (shape[0], depth // target[-1], target[-1]), "int8", **Q)
    mb.op("RESHAPE", [x, packed], [r])
    w, b = fc_weights(mb, rng, units, target[-1])
    y = mb.tensor("y", (depth // target[-1], units), "int8", scale=0.2, zero_point=1)
    mb.op("FULLY_CONNECTED", [r, w, b], [y], {"fused_activation_function": 1}, version=4)
    return mb.finish([x], [y])


def test_keras_reshape_chain_folds_away_and_verifies():
    data = keras_reshape_model()
    g = load(data)
    # the shape chain is folded at import (edgecc/frontends/shapes.py), the inspect notes say so
    assert ops(g) == ["RESHAPE", "FULLY_CONNECTED"]
    assert [s.split(" folded")[0] for s in g.notes] == ["op 0 (SHAPE)", "op 1 (STRIDED_SLICE)",
                                                        "op 2 (PACK)"]
    assert np.array_equal(g.value(g.nodes[0].inputs[1]).data, [1, -1, 48])
    g2, results = optimize(g, debug=True)
    assert ops(g2) == ["RESHAPE", "FULLY_CONNECTED"]  # the RESHAPE is an alias: no code
    assert_same_numbers(g, g2)
    check_c(data, cc="gcc")
    check_c(data, seeds=(2,), cc="clang")


def test_fold_refuses_recurrent_state():
    """A node reading a variable tensor that a stateful op also reads is not folded."""
    vals = {
        "x": Value("x", TensorType((1, 4), DType.INT8)),
        "state": Value("state", TensorType((1, 4), DType.INT8), np.zeros((1, 4), np.int8)),
        "r": Value("r", TensorType((4,), DType.INT8)),
        "y": Value("y", TensorType((1, 4), DType.INT8)),
        "z": Value("z", TensorType((4,), DType.INT8)),
    }
    nodes = [Node("RESHAPE", ["state"], ["r"], {}, "0_reshape"),
             Node("SVDF", ["x", "state"], ["y"], {}, "1_svdf"),
             Node("RESHAPE", ["r"], ["z"], {}, "2_reshape")]
    g = Graph(vals, nodes, ["x"], ["y", "z"])
    _, rep = run_rules(g, [fold.FOLD])
    assert any("recurrent state" in r for r in rep.refused)


# ---- dead code ---------------------------------------------------------------------------------

def test_dead_code_reports_removed_nodes_and_values():
    rng = np.random.default_rng(2)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 6), "int8", **Q)
    w, b = fc_weights(mb, rng, 3, 6)
    y = mb.tensor("y", (1, 3), "int8", **Q)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], version=4)
    dead = mb.tensor("dead", (1, 6), "int8", **Q)
    mb.op("RELU", [x], [dead])
    g = load(mb.finish([x], [y]))
    g2, notes = dead_code(g)
    assert ops(g2) == ["FULLY_CONNECTED"]
    assert any("removed 1_relu" in n and "no graph output" in n for n in notes)
    assert "t5" not in g2.values  # the dead RELU's output tensor went too
    assert_same_numbers(g, g2)


def test_dead_code_keeps_everything_that_reaches_an_output():
    g = load(folded_weights_model())
    g2, notes = dead_code(g)
    assert ops(g2) == ops(g) and not any(n.startswith("removed") for n in notes)


# ---- aliases -----------------------------------------------------------------------------------

def alias_chain():
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 2, 6), "int8", **Q)
    mid = mb.tensor("mid", (1, 12), "int8", **Q)
    mb.op("RESHAPE", [x], [mid], {"new_shape": [1, 12]})
    out = mb.tensor("out", (12,), "int8", **Q)
    mb.op("SQUEEZE", [mid], [out], {"squeeze_dims": [0]})
    y = mb.tensor("y", (12,), "int8", **Q)
    mb.op("RELU", [out], [y])
    return mb.finish([x], [y])


def test_merge_aliases_applies():
    data = alias_chain()
    g = load(data)
    g2, rep = apply(g, eliminate.MERGE_ALIASES)
    g2, _ = dead_code(g2)
    assert ops(g2) == ["RESHAPE", "RELU"] and g2.nodes[0].inputs[0] == g.inputs[0]
    assert "one RESHAPE" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_model(data, seeds=(0,), compilers=("gcc",))


def test_merge_aliases_refuses_when_quantization_differs():
    """x (q1) -> RESHAPE -> mid (no q) -> RESHAPE -> out (q2): one RESHAPE x -> out would alias
    tensors with different parameters. (The frontend refuses such models; IR built directly.)"""
    from edgecc.ir import QParams
    q1, q2 = QParams((0.05,), (-3,)), QParams((0.07,), (1,))
    vals = {"x": Value("x", TensorType((1, 2, 6), DType.INT8, q1)),
            "mid": Value("mid", TensorType((1, 12), DType.INT8)),
            "out": Value("out", TensorType((12,), DType.INT8, q2)),
            "y": Value("y", TensorType((12,), DType.INT8, q2))}
    nodes = [Node("RESHAPE", ["x"], ["mid"], {}, "0_reshape"),
             Node("RESHAPE", ["mid"], ["out"], {}, "1_reshape"),
             Node("RELU", ["out"], ["y"], {}, "2_relu")]
    g = Graph(vals, nodes, ["x"], ["y"])
    g2, rep = apply(g, eliminate.MERGE_ALIASES)
    assert ops(g2) == ops(g)
    assert "differ in type or quantization" in rep.refused[0]


def test_drop_identity_alias_applies_and_refuses_at_graph_output():
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 3), "int8", **Q)
    a = mb.tensor("a", (2, 3), "int8", **Q)
    mb.op("RESHAPE", [x], [a], {"new_shape": [2, 3]})
    y = mb.tensor("y", (2, 3), "int8", **Q)
    mb.op("RELU", [a], [y])
    z = mb.tensor("z", (2, 3), "int8", **Q)
    mb.op("RESHAPE", [y], [z], {"new_shape": [2, 3]})
    g = load(mb.finish([x], [z]))
    g2, rep = apply(g, eliminate.DROP_IDENTITY_ALIAS)
    assert ops(g2) == ["RELU", "RESHAPE"] and g2.nodes[0].inputs == [g.inputs[0]]
    assert "keeps shape" in rep.applied[0]
    assert len(rep.refused) == 1 and "graph output" in rep.refused[0]
    assert g2.outputs == g.outputs
    assert_same_numbers(g, g2)


# ---- transposes --------------------------------------------------------------------------------

def transpose_chain(shape, perms, out_is_last=True):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int8", **Q)
    cur, cur_shape = x, tuple(shape)
    outs = []
    for i, p in enumerate(perms):
        cur_shape = tuple(cur_shape[a] for a in p)
        t = mb.tensor(f"t{i}", cur_shape, "int8", **Q)
        mb.op("TRANSPOSE", [cur, mb.const(f"p{i}", np.array(p, np.int32))], [t])
        outs.append(t)
        cur = t
    y = mb.tensor("y", cur_shape, "int8", **Q)
    mb.op("RELU", [cur], [y])
    final = [y] if out_is_last else [y, outs[0]]
    return mb.finish([x], final)


def test_transpose_to_reshape_applies():
    data = transpose_chain((1, 4, 1, 3), [(0, 2, 1, 3)])
    g = load(data)
    g2, rep = apply(g, eliminate.TRANSPOSE_TO_RESHAPE)
    assert ops(g2) == ["RESHAPE", "RELU"] and "only moves unit axes" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_model(data, seeds=(0,), compilers=("gcc",))


def test_transpose_to_reshape_refuses_a_real_transpose():
    g = load(transpose_chain((1, 2, 3, 4), [(0, 3, 1, 2)]))
    g2, rep = apply(g, eliminate.TRANSPOSE_TO_RESHAPE)
    assert ops(g2) == ["TRANSPOSE", "RELU"] and "moves bytes" in rep.refused[0]


def test_transposes_that_cancel_vanish():
    data = transpose_chain((1, 2, 3, 4), [(0, 3, 1, 2), (0, 2, 3, 1)])
    g = load(data)
    g2, rep = apply(g, eliminate.MERGE_TRANSPOSES)
    g2, _ = dead_code(g2)
    assert ops(g2) == ["RELU"] and "cancel" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_model(data, seeds=(0,), compilers=("gcc",))


def test_transposes_compose_into_one():
    data = transpose_chain((2, 3, 4), [(1, 0, 2), (2, 0, 1)])
    g = load(data)
    g2, rep = apply(g, eliminate.MERGE_TRANSPOSES)
    assert ops(g2) == ["TRANSPOSE", "RELU"] and "compose" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_model(data, seeds=(0,), compilers=("gcc",))


def test_merge_transposes_refuses_when_first_is_also_a_graph_output():
    g = load(transpose_chain((2, 3, 4), [(1, 0, 2), (2, 0, 1)], out_is_last=False))
    g2, rep = apply(g, eliminate.MERGE_TRANSPOSES)
    assert ops(g2) == ops(g) and "used elsewhere" in rep.refused[0]


def test_cancelling_transposes_refuse_to_rename_a_graph_output():
    mb = ModelBuilder()
    x = mb.tensor("x", (2, 3), "int8", **Q)
    a = mb.tensor("a", (3, 2), "int8", **Q)
    mb.op("TRANSPOSE", [x, mb.const("p", np.array([1, 0], np.int32))], [a])
    y = mb.tensor("y", (2, 3), "int8", **Q)
    mb.op("TRANSPOSE", [a, mb.const("q", np.array([1, 0], np.int32))], [y])
    g = load(mb.finish([x], [y]))
    g2, rep = apply(g, eliminate.MERGE_TRANSPOSES)
    assert ops(g2) == ops(g) and "graph output" in rep.refused[0]


# ---- quantize / dequantize -----------------------------------------------------------------------

def dq_q_model(q_back=Q, float_in=False):
    mb = ModelBuilder()
    if float_in:
        x = mb.tensor("x", (2, 5), "float32")
        src = x
    else:
        x = mb.tensor("x", (2, 5), "int8", **Q)
        src = mb.tensor("f", (2, 5), "float32")
        mb.op("DEQUANTIZE", [x], [src])
    q = mb.tensor("q", (2, 5), "int8", **q_back)
    mb.op("QUANTIZE", [src], [q])
    y = mb.tensor("y", (2, 5), "int8", **q_back)
    mb.op("RELU", [q], [y])
    return mb.finish([x], [y])


def test_dequantize_quantize_vanishes_with_equal_params():
    data = dq_q_model()
    g = load(data)
    g2, rep = apply(g, eliminate.DEQUANTIZE_QUANTIZE)
    g2, _ = dead_code(g2)
    assert ops(g2) == ["RELU"] and "256 input values unchanged" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_model(data, seeds=(0,), compilers=("gcc",))


def test_dequantize_quantize_refuses_a_requantization():
    g = load(dq_q_model(q_back=dict(scale=0.07, zero_point=-3)))
    g2, rep = apply(g, eliminate.DEQUANTIZE_QUANTIZE)
    assert ops(g2) == ops(g) and "requantization" in rep.refused[0]


def q_dq_model(float_in=False):
    """x -> [DEQUANTIZE] -> QUANTIZE -> DEQUANTIZE -> QUANTIZE -> y (all int8 params equal)."""
    mb = ModelBuilder()
    if float_in:
        x = mb.tensor("x", (3, 4), "float32")
        f = x
    else:
        x = mb.tensor("x", (3, 4), "int8", **Q)
        f = mb.tensor("f", (3, 4), "float32")
        mb.op("DEQUANTIZE", [x], [f])
    q = mb.tensor("q", (3, 4), "int8", **Q)
    mb.op("QUANTIZE", [f], [q])
    f2 = mb.tensor("f2", (3, 4), "float32")
    mb.op("DEQUANTIZE", [q], [f2])
    y = mb.tensor("y", (3, 4), "int8", **Q)
    mb.op("QUANTIZE", [f2], [y])
    return mb.finish([x], [y])


def test_quantize_dequantize_vanishes_on_a_grid_input():
    data = q_dq_model()
    g = load(data)
    g2, rep = apply(g, eliminate.QUANTIZE_DEQUANTIZE)
    g2, _ = dead_code(g2)
    assert ops(g2) == ["DEQUANTIZE", "QUANTIZE"] and "grid unchanged" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_model(data, seeds=(0,), compilers=("gcc",))


def test_quantize_dequantize_refuses_an_arbitrary_float():
    g = load(q_dq_model(float_in=True))
    g2, rep = apply(g, eliminate.QUANTIZE_DEQUANTIZE)
    assert ops(g2) == ops(g) and "rounds and saturates" in rep.refused[0]


def requant_model(out_q):
    mb = ModelBuilder()
    x = mb.tensor("x", (4, 4), "int8", **Q)
    q = mb.tensor("q", (4, 4), "int8", **out_q)
    mb.op("QUANTIZE", [x], [q])
    y = mb.tensor("y", (4, 4), "int8", **out_q)
    mb.op("RELU", [q], [y])
    return mb.finish([x], [y])


def test_requantize_identity_vanishes():
    data = requant_model(Q)
    g = load(data)
    g2, rep = apply(g, eliminate.REQUANTIZE_IDENTITY)
    assert ops(g2) == ["RELU"] and "identity on every input value" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_model(data, seeds=(0,), compilers=("gcc",))


def test_requantize_identity_refuses_other_params():
    g = load(requant_model(dict(scale=0.05, zero_point=4)))
    g2, rep = apply(g, eliminate.REQUANTIZE_IDENTITY)
    assert ops(g2) == ops(g) and "requantizes" in rep.refused[0]


# ---- the engine ------------------------------------------------------------------------------

def _bad_rule(rewrite) -> Rule:
    return Rule("bad", ("RELU",), lambda ctx, n: Match({"node": n}), lambda ctx, m: None, rewrite)


def test_engine_names_a_rule_that_breaks_the_graph():
    g = load(requant_model(Q))

    def wrong_shape(ctx, m):  # replaces RELU with one writing a tensor of another shape
        n = m["node"]
        v = Value("bogus", TensorType((3,), DType.INT8, ctx.g.type(n.outputs[0]).q))
        return Rewrite(remove=[n], add=[Node("RELU", list(n.inputs), ["bogus"], {}, "x")],
                       values={"bogus": v})
    with pytest.raises(RuleError, match="bad"):
        run_rules(g, [_bad_rule(wrong_shape)], debug=True)


def test_engine_stops_a_rule_that_never_converges():
    g = load(requant_model(Q))

    def same_again(ctx, m):
        n = m["node"]
        return Rewrite(remove=[n], add=[Node(n.op, list(n.inputs), list(n.outputs), dict(n.attrs),
                                             n.name, n.index)])
    with pytest.raises(RuleError, match="did not converge"):
        run_rules(g, [_bad_rule(same_again)])


def test_engine_never_redirects_graph_outputs():
    g = load(requant_model(Q))
    out = g.outputs[0]
    with pytest.raises(RuleError, match="graph input/output"):
        run_rules(g, [_bad_rule(lambda ctx, m: Rewrite(remove=[m["node"]],
                                                       replace_uses={out: g.inputs[0]}))])


def test_passes_do_not_modify_their_input_graph():
    g = load(keras_reshape_model())
    before = [(n.op, list(n.inputs), list(n.outputs)) for n in g.nodes]
    optimize(g, debug=True)
    assert [(n.op, list(n.inputs), list(n.outputs)) for n in g.nodes] == before


# ---- unused outputs ----------------------------------------------------------------------------

def split_model(op, shape, axis, n_out, used, sizes=None):
    mb = ModelBuilder()
    x = mb.tensor("x", shape, "int8", **Q)
    outs = []
    for k in range(n_out):
        s = list(shape)
        if op == "UNPACK":
            s.pop(axis)
        else:
            s[axis] = sizes[k] if sizes else shape[axis] // n_out
        outs.append(mb.tensor(f"o{k}", tuple(s), "int8", **Q))
    if op == "SPLIT":
        mb.op("SPLIT", [mb.const("axis", np.array(axis, np.int32).reshape(())), x], outs,
              {"num_splits": n_out})
    elif op == "SPLIT_V":
        mb.op("SPLIT_V", [x, mb.const("sizes", np.array(sizes, np.int32)),
                          mb.const("axis", np.array(axis, np.int32).reshape(()))], outs,
              {"num_splits": n_out})
    else:
        mb.op("UNPACK", [x], outs, {"num": n_out, "axis": axis})
    ys = []
    for k in used:
        y = mb.tensor(f"y{k}", mb.tensors[outs[k]].shape, "int8", **Q)
        mb.op("RELU", [outs[k]], [y])
        ys.append(y)
    return mb.finish([x], ys)


@pytest.mark.parametrize("op,shape,axis,n_out,used,sizes", [
    ("SPLIT", (2, 6, 4), 1, 3, [1], None),
    ("SPLIT_V", (5, 7), 1, 3, [0, 2], [2, 1, 4]),
    ("UNPACK", (3, 4, 2), 0, 3, [2], None),
])
def test_unused_split_outputs_become_slices(op, shape, axis, n_out, used, sizes):
    data = split_model(op, shape, axis, n_out, used, sizes)
    g = load(data)
    g2, rep = apply(g, eliminate.SLICE_USED_OUTPUTS)
    assert ops(g2).count("STRIDED_SLICE") == len(used) and op not in ops(g2)
    assert f"{n_out - len(used)} of {n_out} outputs unused" in rep.applied[0]
    assert_same_numbers(g, g2)
    check_c(data, seeds=(0,))


def test_unused_split_outputs_refused_when_slices_cannot_do_it():
    g = load(split_model("SPLIT", (2, 2, 1, 2, 4), 4, 2, [0]))
    g2, rep = apply(g, eliminate.SLICE_USED_OUTPUTS)
    assert ops(g2)[0] == "SPLIT" and "rank must be at most 4" in rep.refused[0]


def test_fold_quantize_of_float_weights_and_constant_arithmetic():
    """Weights = QUANTIZE(float32 const), bias = MUL(int32 const, int32 const): both folded, and
    the FC then compiles and matches TFLite Micro (which runs them at every invoke)."""
    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 10), "int8", **Q)
    wf = mb.const("w_float", rng.uniform(-1.2, 1.2, (3, 10)).astype(np.float32))
    w = mb.tensor("w", (3, 10), "int8", scale=0.01, zero_point=0)
    mb.op("QUANTIZE", [wf], [w])
    b1 = mb.const("b1", rng.integers(-50, 50, (3,)).astype(np.int32))
    b2 = mb.const("b2", np.array([3, -7, 11], np.int32))
    b = mb.tensor("b", (3,), "int32", scale=0.0005)
    mb.op("MUL", [b1, b2], [b], {"fused_activation_function": 0})
    y = mb.tensor("y", (1, 3), "int8", scale=0.08, zero_point=-4)
    mb.op("FULLY_CONNECTED", [x, w, b], [y], version=4)
    data = mb.finish([x], [y])
    g = load(data)
    g2, results = optimize(g, debug=True)
    assert ops(g2) == ["FULLY_CONNECTED"]
    w_data = g2.value(g2.nodes[0].inputs[1]).data
    assert w_data.dtype == np.int8 and np.abs(w_data).max() > 100
    check_c(data)
