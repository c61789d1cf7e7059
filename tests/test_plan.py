"""The memory planner: placement strategies, aliasing, in-place, reordering, `edgecc plan`.

Property tests (hypothesis) build random DAGs and check that no strategy ever overlaps live
buffers, every arena is at least the peak of its own order, the order search is consistent with
the buffers it leads to and exact on small graphs. Model tests plan every shared model's imported
graph and compile the models that compile, bit-exact, against the issue's lower bound and TFLM.
"""
from __future__ import annotations

import itertools
import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import shared_model
from edgecc.cli import main
from edgecc.compiler import compile_model
from edgecc.ir import DType, Graph, Node, TensorType, Value
from edgecc.ops import get_op
from edgecc.plan import check_plan, model_lower_bound, plan_arena, plan_model
from edgecc.plan.check import check_graph_plan
from edgecc.plan.liveness import Buffer, aligned_lower_bound, buffers_for, lower_bound
from edgecc.plan.order import OrderModel, apply_order, best_order
from edgecc.plan.place import all_strategies, place
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import verify_model

ALIAS = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
# TFLM arena sizes from ../shared/models/README.md: the figure to beat.
TFLM_ARENA = {"ad01_int8": 4632, "hello_world_int8": 1936, "keyword_scrambled_8bit": 12936,
              "kws_ref_model": 24272, "micro_speech_lstm": 20000, "micro_speech_quantized": 7584,
              "mlzoo_ds_cnn_s_quantized_int16": 42504, "person_detect": 85264,
              "pretrainedResnet_quant": 55984, "str_ww_ref_model": 16640,
              "trained_lstm_int8": 4208, "vww_96_int8": 103672}
# The done list: arena <= LB (model order, as imported) on each, once it compiles.
DONE_LIST = ["ad01_int8", "hello_world_int8", "kws_ref_model", "micro_speech_quantized",
             "person_detect", "pretrainedResnet_quant", "str_ww_ref_model", "vww_96_int8"]
# Compiling models beyond it, also at or below LB. The LSTM models' state (hidden and cell) lives
# in the arena's state region, counted in the LB too; their kernels need no scratch any more.
ALSO_COMPILING = ["keyword_scrambled_8bit", "mlzoo_ds_cnn_s_quantized_int16"]
LSTM = ["micro_speech_lstm", "trained_lstm_int8"]


def imported_structure(path: Path) -> Graph:
    """The imported graph of a model even when some of its ops are not implemented yet: the
    planner only needs shapes, element types and edges, so the op-support check is switched off."""
    import edgecc.frontends.tflite as fe
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fe, "is_supported", lambda name: True)
        mp.setattr(fe, "failed_constraints", lambda g, n: [])
        return fe.load_tflite(path)


@pytest.fixture
def add_inplace():
    """ADD declaring in-place on both inputs (what its module sets once its C is alias-safe)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(get_op("ADD"), "inplace", ((0, 0), (0, 1)))
        yield


# ---- hand-made graphs -----------------------------------------------------------------------

def _graph(inputs: dict[str, int], nodes: list[tuple[str, list[str], dict[str, int]]],
           outputs: list[str]) -> Graph:
    values = {}
    for name, size in inputs.items():
        values[name] = Value(name, TensorType((size,), DType.INT8))
    ns = []
    for k, (op, ins, outs) in enumerate(nodes):
        for name, size in outs.items():
            values[name] = Value(name, TensorType((size,), DType.INT8))
        ns.append(Node(op, list(ins), list(outs), {}, f"n{k}", k))
    return Graph(values, ns, list(inputs), outputs)


def test_chain_meets_lower_bound_and_checks():
    g = _graph({"x": 100}, [("OP", ["x"], {"a": 300}), ("OP", ["a"], {"b": 50}),
                            ("OP", ["b"], {"c": 400}), ("OP", ["c"], {"y": 10})], ["y"])
    p = plan_arena(g, {}, ALIAS)
    assert p.lower_bound == p.model_lower_bound == 450
    assert p.arena == aligned_lower_bound(p.buffers) == 450  # 400 at 0, 50 on top
    check_plan(p.buffers, p.arena)


def test_unaligned_sizes_cost_only_needed_padding():
    # 10 and 20 bytes alive together: 10 at 0, 20 at 16 -> 36; the size order alone gives 42.
    bufs = [Buffer("a", 10, 0, 1), Buffer("b", 20, 0, 1)]
    assert place(bufs)[0] == 36 == aligned_lower_bound(bufs)
    check_plan(bufs, 36)
    # hello_world's shape: 1-byte input and output beside 16-byte activations.
    g = _graph({"x": 1}, [("OP", ["x"], {"a": 16}), ("OP", ["a"], {"b": 16}),
                          ("OP", ["b"], {"y": 1})], ["y"])
    assert plan_arena(g, {}, ALIAS).arena == 32


def test_scratch_fits_in_gaps():
    g = _graph({"x": 64}, [("OP", ["x"], {"a": 256}), ("OP", ["a"], {"b": 32}),
                           ("OP", ["b"], {"y": 32})], ["y"])
    p = plan_arena(g, {1: 32, 2: 64}, ALIAS)  # both fit where x lived
    assert p.arena == p.model_lower_bound == 320
    assert set(p.scratch) == {1, 2}


def test_reshape_aliases_share_offset():
    g = _graph({"x": 64}, [("OP", ["x"], {"a": 128}), ("RESHAPE", ["a"], {"r": 128}),
                           ("OP", ["r"], {"y": 64})], ["y"])
    p = plan_arena(g, {}, ALIAS)
    assert p.offsets["a"] == p.offsets["r"]
    assert p.arena == 192 < p.model_lower_bound == 256
    assert "reshape aliasing" in p.techniques


def test_inplace_add_goes_below_lower_bound(add_inplace):
    g = _graph({"x": 64}, [("OP", ["x"], {"a": 128}), ("OP", ["x"], {"b": 128}),
                           ("ADD", ["a", "b"], {"s": 128}), ("OP", ["s"], {"y": 8})], ["y"])
    p = plan_arena(g, {}, ALIAS)
    assert p.offsets["s"] in (p.offsets["a"], p.offsets["b"])
    assert p.arena == 320 < p.model_lower_bound == 384  # step 1 (x, a, b) is now the peak
    assert p.inplace and any("in-place" in t for t in p.techniques)


def test_inplace_refused_when_input_lives_on(add_inplace):
    # a is read again after the ADD and b is a graph output: nothing may be overwritten.
    g = _graph({"x": 64}, [("OP", ["x"], {"a": 128}), ("OP", ["x"], {"b": 128}),
                           ("ADD", ["a", "b"], {"s": 128}), ("OP", ["a", "s"], {"y": 8})],
               ["y", "b"])
    p = plan_arena(g, {}, ALIAS)
    assert not p.inplace
    assert len({p.offsets[v] for v in ("a", "b", "s")}) == 3


def test_checker_rejects_overlap():
    g = _graph({"x": 64}, [("OP", ["x"], {"a": 64}), ("OP", ["a"], {"y": 64})], ["y"])
    with pytest.raises(AssertionError):
        check_graph_plan(g, {"x": 0, "a": 32, "y": 128}, {}, {}, 192, ALIAS)
    with pytest.raises(AssertionError):  # an in-place overlap the op never declared
        check_graph_plan(g, {"x": 0, "a": 64, "y": 64}, {}, {}, 192, ALIAS)
    with pytest.raises(AssertionError):
        check_plan([Buffer("a", 10, 0, 1, 0), Buffer("b", 10, 1, 2, 8)], 32)


def test_reorder_branches():
    # Two branches from x; the model runs both big producers first, the DP interleaves them.
    g = _graph({"x": 16}, [("OP", ["x"], {"A": 256}), ("OP", ["x"], {"B": 256}),
                           ("OP", ["A"], {"a": 16}), ("OP", ["B"], {"b": 16}),
                           ("OP", ["a", "b"], {"y": 16})], ["y"])
    g2, p = plan_model(g, {}, ALIAS)
    assert p.model_lower_bound == 528
    assert p.arena == p.lower_bound == 288
    assert [n.name for n in g2.nodes] == ["n0", "n2", "n1", "n3", "n4"]
    assert "operator reordering" in p.techniques and p.order_exact


def test_long_chain_alternates_ends_to_reach_the_bound():
    # Sizes that make first fit climb; filling from both ends needs only max(s[k] + s[k+1]).
    sizes = [int(x) * 16 for x in np.random.default_rng(7).integers(1, 300, 120)]
    nodes, prev = [], "x"
    for k, s in enumerate(sizes):
        nodes.append(("OP", [prev], {f"v{k}": s}))
        prev = f"v{k}"
    g = _graph({"x": 64}, nodes, [prev])
    p = plan_arena(g, {}, ALIAS)
    assert p.arena == p.lower_bound


def test_wide_graph_beam_order_is_valid():
    # 30 parallel branches: too many down-sets for the exact DP; the beam still gives an order.
    nodes, ends = [], []
    for b in range(30):
        prev = "x"
        for k in range(3):
            nodes.append(("OP", [prev], {f"b{b}_{k}": 64 * (1 + (b * 7 + k * 3) % 11)}))
            prev = f"b{b}_{k}"
        ends.append(prev)
    nodes.append(("OP", ends, {"y": 16}))
    g = _graph({"x": 32}, nodes, ["y"])
    g2, p = plan_model(g, {}, ALIAS)
    assert not p.order_exact and _topological(g, p.order)
    assert p.lower_bound < p.model_lower_bound and p.arena < p.model_lower_bound


# ---- random DAGs ------------------------------------------------------------------------------

@st.composite
def dags(draw, max_nodes: int = 12) -> tuple[Graph, dict[int, int]]:
    size = st.integers(1, 200)
    n_in = draw(st.integers(1, 2))
    inputs = {f"i{k}": draw(size) for k in range(n_in)}
    avail = list(inputs)
    sizes = dict(inputs)
    nodes = []
    for k in range(draw(st.integers(1, max_nodes))):
        op = draw(st.sampled_from(["OP", "OP", "OP2", "RESHAPE", "ADD"]))
        if op == "ADD":
            a, b = draw(st.sampled_from(avail)), draw(st.sampled_from(avail))
            outs = {f"v{k}": sizes[a]}
            ins = [a, b]
        elif op == "RESHAPE":
            a = draw(st.sampled_from(avail))
            ins, outs = [a], {f"v{k}": sizes[a]}
        else:
            ins = draw(st.lists(st.sampled_from(avail), min_size=1, max_size=3))
            outs = {f"v{k}": draw(size)}
            if op == "OP2":
                outs[f"w{k}"] = draw(size)
        nodes.append((op, ins, outs))
        sizes.update(outs)
        avail.extend(outs)
    outputs = list(nodes[-1][2]) + draw(st.lists(st.sampled_from(avail), max_size=2, unique=True))
    g = _graph(inputs, nodes, list(dict.fromkeys(outputs)))
    scratch = {i: s for i, s in enumerate(draw(st.lists(st.sampled_from([0, 0, 8, 33, 100]),
                                                        min_size=len(nodes),
                                                        max_size=len(nodes)))) if s}
    return g, scratch


def _topological(g: Graph, order: list[int]) -> bool:
    made = set(g.inputs)
    for i in order:
        n = g.nodes[i]
        if any(v not in made for v in n.inputs if v is not None):
            return False
        made.update(n.outputs)
    return True


def _all_orders(g: Graph):
    for perm in itertools.permutations(range(len(g.nodes))):
        if _topological(g, list(perm)):
            yield list(perm)


PROP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROP
@given(dags(), st.booleans())
def test_every_strategy_gives_a_valid_plan(case, inplace):
    g, scratch = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(get_op("ADD"), "inplace", ((0, 0), (0, 1)))
        bufs = buffers_for(g, scratch, ALIAS, inplace=inplace)
        peak = lower_bound(bufs)
        for name, offs in all_strategies(bufs).items():
            for b, o in zip(bufs, offs):
                b.offset = o
            arena = max(b.offset + b.size for b in bufs)
            check_plan(bufs, arena)
            assert arena >= aligned_lower_bound(bufs) >= peak, name
        p = plan_arena(g, scratch, ALIAS, inplace=inplace)
        assert p.arena >= p.lower_bound


@PROP
@given(dags())
def test_reordered_plans_are_valid_and_no_worse(case):
    g, scratch = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(get_op("ADD"), "inplace", ((0, 0), (0, 1)))
        own = plan_arena(g, scratch, ALIAS)
        g2, p = plan_model(g, scratch, ALIAS)
        assert _topological(g, p.order) and sorted(p.order) == list(range(len(g.nodes)))
        assert [id(n) for n in g2.nodes] == [id(g.nodes[i]) for i in p.order]
        pos = {old: new for new, old in enumerate(p.order)}
        s2 = {pos[i]: s for i, s in scratch.items()}
        check_graph_plan(g2, p.offsets, p.scratch, s2, p.arena, ALIAS)
        assert p.arena >= p.lower_bound == lower_bound(
            buffers_for(g2, s2, ALIAS, inplace=bool(p.inplace)))
        assert p.arena <= own.arena


@PROP
@given(dags(max_nodes=7))
def test_order_dp_matches_buffers_and_is_exact(case):
    g, scratch = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(get_op("ADD"), "inplace", ((0, 0), (0, 1)))
        m = OrderModel(g, scratch, ALIAS, inplace=True)
        best = None
        for order in _all_orders(g):
            g2 = apply_order(g, order)
            pos = {old: new for new, old in enumerate(order)}
            real = lower_bound(buffers_for(g2, {pos[i]: s for i, s in scratch.items()}, ALIAS))
            assert m.peak_of(order) == real, order
            best = real if best is None else min(best, real)
        order, peak, exact = best_order(g, scratch, ALIAS)
        assert exact and peak == best


# ---- shared models ------------------------------------------------------------------------------

@pytest.mark.parametrize("model", sorted(TFLM_ARENA))
def test_planner_on_imported_models(model):
    g = imported_structure(shared_model(model))
    g2, p = plan_model(g, {}, ALIAS)
    assert p.arena <= p.model_lower_bound == model_lower_bound(g)
    assert p.arena <= TFLM_ARENA[model]


def test_all_shared_models_listed(models_dir):
    assert {p.stem for p in models_dir.glob("*.tflite")} == set(TFLM_ARENA)


@pytest.mark.parametrize("model", DONE_LIST + ALSO_COMPILING + LSTM)
def test_compiled_models_meet_lower_bound_and_beat_tflm(model):
    c = compile_model(shared_model(model), get_target("host"), "m")
    scratch = sum(b.size for b in c.plan.buffers if b.name.startswith("scratch:"))
    assert c.plan.arena <= TFLM_ARENA[model]
    assert c.plan.arena == max(b.offset + b.size for b in c.plan.buffers)
    if model in LSTM:
        assert c.plan.arena <= c.plan.model_lower_bound + scratch
    else:
        assert c.plan.arena <= c.plan.model_lower_bound
    assert f"#define M_ARENA_SIZE {c.plan.arena}\n" in c.files["m.h"]


@pytest.mark.parametrize("model", DONE_LIST + ALSO_COMPILING + LSTM)
def test_compiled_models_bit_exact(model):
    r = verify_model(shared_model(model), get_target("host"))
    assert r.bit_exact, r.first_bad_layer


# ---- bit-exactness of in-place and reordered code ----------------------------------------------

def _q(rng):
    return dict(scale=float(rng.uniform(0.02, 0.2)), zero_point=int(rng.integers(-20, 20)))


def _fc(mb, rng, x, n_in, n_out, name):
    w = mb.const(f"{name}_w", rng.integers(-127, 128, (n_out, n_in)).astype(np.int8),
                 scale=0.01, zero_point=0)
    y = mb.tensor(name, (1, n_out), "int8", **_q(rng))
    mb.op("FULLY_CONNECTED", [x, w, -1], [y], {"fused_activation_function": 0})
    return y


def branchy_model(seed: int) -> bytes:
    """x -> FC(A), FC(B) (big), then FC(a), FC(b) (small), ADD(a, b) and ADD(s, a2): model order
    keeps A and B alive together; the planner interleaves the branches and adds in place."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 16), "int8", **_q(rng))
    big_a = _fc(mb, rng, x, 16, 256, "A")
    big_b = _fc(mb, rng, x, 16, 256, "B")
    a = _fc(mb, rng, big_a, 256, 48, "a")
    b = _fc(mb, rng, big_b, 256, 48, "b")
    a2 = _fc(mb, rng, a, 48, 48, "a2")
    s = mb.tensor("s", (1, 48), "int8", **_q(rng))
    mb.op("ADD", [a, b], [s], {"fused_activation_function": 0}, version=1)
    y = mb.tensor("y", (1, 48), "int8", **_q(rng))
    mb.op("ADD", [s, a2], [y], {"fused_activation_function": 1}, version=1)
    return mb.finish([x], [y])


def test_reordered_inplace_model_is_bit_exact(add_inplace):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "branchy.tflite"
        path.write_bytes(branchy_model(5))
        c = compile_model(path, get_target("host"), "m")
        assert c.plan.order != sorted(c.plan.order)
        assert c.plan.inplace
        assert c.plan.arena < c.plan.model_lower_bound
        for seed in (0, 1):
            for cc in ("gcc", "clang"):
                r = verify_model(path, get_target("host"), cc=cc, seed=seed)
                assert r.bit_exact, (cc, seed, r.first_bad_layer)


def _single_op(op: str, in_shapes, out_shape, dtype: str, options: dict, version: int,
               out_dtype: str | None = None, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    quant = (lambda: _q(rng)) if dtype != "float32" else (lambda: {})
    mb = ModelBuilder()
    xs = [mb.tensor(f"x{k}", s, dtype, **quant()) for k, s in enumerate(in_shapes)]
    y = mb.tensor("y", out_shape, out_dtype or dtype, **quant())
    mb.op(op, xs, [y], options, version=version)
    return mb.finish(xs, [y])


ACT = {"fused_activation_function": 0}
INPLACE_CASES = {
    "add": ("ADD", [(1, 4, 4, 8), (1, 4, 4, 8)], (1, 4, 4, 8), "int8", ACT, 1, None, "x0"),
    "add-broadcast": ("ADD", [(1, 1, 1, 8), (1, 4, 4, 8)], (1, 4, 4, 8), "int8",
                      {"fused_activation_function": 1}, 1, None, "x1"),
    "mul": ("MUL", [(1, 6, 10), (1, 6, 10)], (1, 6, 10), "int8", ACT, 2, None, "x0"),
    "mul-float": ("MUL", [(4, 1), (4, 7)], (4, 7), "float32", ACT, 1, None, "x1"),
    "sub": ("SUB", [(3, 9), (3, 9)], (3, 9), "int8", {"fused_activation_function": 3}, 2, None,
            "x0"),
    "relu": ("RELU", [(2, 5, 7)], (2, 5, 7), "int8", {}, 1, None, "x0"),
    "relu6-int16": ("RELU6", [(2, 5, 7)], (2, 5, 7), "int16", {}, 1, None, "x0"),
    "requantize": ("QUANTIZE", [(1, 33)], (1, 33), "int8", {}, 2, None, "x0"),
    "requantize-int16": ("QUANTIZE", [(5, 7)], (5, 7), "int16", {}, 2, None, "x0"),
}


@pytest.mark.parametrize("case", sorted(INPLACE_CASES))
def test_inplace_ops_bit_exact(case):
    """Ops whose OpDef declares `inplace` run with the output over their input, bit-exact."""
    op, ins, out, dtype, options, version, out_dtype, over = INPLACE_CASES[case]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{case}.tflite"
        path.write_bytes(_single_op(op, ins, out, dtype, options, version, out_dtype))
        c = compile_model(path, get_target("host"), "m")
        names = {c.graph.value(v).label: v for v in c.graph.values}
        assert c.plan.inplace == [(names["y"], names[over])]
        assert c.plan.offsets[names["y"]] == c.plan.offsets[names[over]]
        for cc, seed in (("gcc", 0), ("clang", 1)):
            r = verify_model(path, get_target("host"), cc=cc, seed=seed)
            assert r.bit_exact, (cc, seed, r.first_bad_layer)


# ---- edgecc plan ----------------------------------------------------------------------------

def test_plan_command_json_and_svg(capsys, tmp_path):
    svg = tmp_path / "plan.svg"
    assert main(["plan", str(shared_model("hello_world_int8")), "--json", "--svg", str(svg)]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["arena_bytes"] <= rep["lower_bound_bytes"]
    assert {r["kind"] for r in rep["buffers"]} >= {"input", "output"}
    root = ET.parse(svg).getroot()
    rects = [e for e in root.iter() if e.tag.endswith("rect")]
    assert len(rects) == len(rep["buffers"]) + 1  # + the frame
    assert main(["plan", str(shared_model("ad01_int8"))]) == 0
    out = capsys.readouterr().out
    assert "arena 768 B" in out and "t0 'input_1'" in out


def test_plan_report_names_scratch_over_the_bound():
    from edgecc.plan_view import format_table, plan_report, plan_svg
    g = _graph({"x": 64}, [("OP", ["x"], {"a": 256}), ("CONV", ["a"], {"y": 32})], ["y"])
    p = plan_arena(g, {1: 100}, ALIAS)
    rep = plan_report(g, p, "m")
    assert rep["scratch_over_lower_bound"] == [dict(step=1, op="CONV", model_op=1, scratch=100,
                                                    live=288, over=68)]
    assert "100 B scratch beside 288 B of tensors, 68 B over the bound" in format_table(rep)
    ET.fromstring(plan_svg(g, p, "<m&>"))  # labels are escaped


def test_plan_command_bad_model(capsys, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    assert main(["plan", str(bad)]) == 2
    assert "edgecc: error:" in capsys.readouterr().err
