"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE): the import, the
validator's acceptance of CALL_ONCE init subgraphs, and bit-exactness over consecutive frames
against TFLite Micro, which carries the variable from one invoke() to the next."""
from __future__ import annotations

import numpy as np
import pytest

from edgecc.errors import ModelFormatError, UnsupportedModel
from edgecc.frontends.tflite import load_tflite
from edgecc.interp import run_graph
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import verify_model
from edgecc.verify.reference import run_litert_ref_frames, run_tflm_frames, seeded_frames
from resvar_models import counter, ring_buffer


def _write(tmp_path, data: bytes, name: str = "counter"):
    p = tmp_path / f"{name}.tflite"
    p.write_bytes(data)
    return p


def test_import_makes_one_variable_with_its_initial_value(tmp_path):
    init = np.array([[5, -7, 0, 100]], np.int8)
    g = load_tflite(_write(tmp_path, counter(init=init)))
    assert [n.op for n in g.nodes] == ["READ_VARIABLE", "ADD", "ASSIGN_VARIABLE"]
    assert g.variables() == ["var_acc"]
    var = g.value("var_acc")
    assert var.variable and var.label == "acc"
    np.testing.assert_array_equal(var.data, init)
    assign = g.nodes[2]
    assert assign.outputs == [] and assign.inputs == ["var_acc", "t3", "t2"]  # t2: order-only
    assert g.source["init_subgraphs"] == [1]
    assert any("resource variable 'acc' -> var_acc" in note and "CALL_ONCE" in note
               for note in g.notes)  # shown by `edgecc inspect`


@pytest.mark.parametrize("kw", [{}, {"read_after": True}, {"init_graph": False}],
                         ids=["read_add_assign", "read_after_assign", "no_init_subgraph"])
def test_reference_keeps_the_variable_like_tflm(tmp_path, kw):
    path = _write(tmp_path, counter(**kw))
    g = load_tflite(path)
    frames = seeded_frames(g, 3, 5)
    ref = run_tflm_frames(path, frames, 1)
    state: dict = {}
    outs = [run_graph(g, f, state)[g.outputs[0]] for f in frames]
    for k, (got, (want, _)) in enumerate(zip(outs, ref)):
        np.testing.assert_array_equal(got.ravel(), want[0].ravel(), err_msg=f"frame {k}")
    assert not np.array_equal(outs[0], outs[1])  # the state matters, so this test can fail


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_counter_bit_exact_over_five_frames(tmp_path, target):
    r = verify_model(_write(tmp_path, counter(shape=(1, 3, 5))), get_target(target), frames=5)
    assert r.bit_exact and len(r.frames) == 5 and r.oracle == "tflite-micro", r


@pytest.mark.parametrize("kw", [{"read_after": True}, {"dtype": "float32"}],
                         ids=["read_after_assign", "float32"])
def test_counter_variants_bit_exact_host(tmp_path, kw):
    r = verify_model(_write(tmp_path, counter(**kw)), get_target("host"), frames=5)
    assert r.bit_exact and len(r.frames) == 5, r


@pytest.mark.parametrize("model", [counter, ring_buffer])
def test_litert_reference_agrees_with_tflm(tmp_path, model):
    """The design's second oracle: LiteRT's reference kernels carry the variable the same way."""
    path = _write(tmp_path, model(), model.__name__)
    g = load_tflite(path)
    frames = seeded_frames(g, 1, 4)
    tflm = run_tflm_frames(path, frames, 1)
    litert = run_litert_ref_frames(path, frames, 1)
    for k, ((a, _), b) in enumerate(zip(tflm, litert)):
        np.testing.assert_array_equal(a[0].ravel(), np.asarray(b[0]).ravel(), err_msg=f"frame {k}")


def test_validator_refuses_other_second_subgraphs(tmp_path):
    """A second subgraph that no CALL_ONCE runs is still refused (WHILE/IF bodies)."""
    mb = ModelBuilder(subgraph_copies=2)
    x = mb.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = mb.tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    mb.op("RELU", [x], [y])
    with pytest.raises(ModelFormatError, match="one subgraph"):
        load_tflite(_write(tmp_path, mb.finish([x], [y]), "two"))


def test_init_subgraph_computing_its_value_is_refused(tmp_path):
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    h = mb.tensor("h", (), "resource")
    r = mb.tensor("r", (1, 4), "int8", scale=0.1, zero_point=0)
    mb.op("CALL_ONCE", [], [], {"init_subgraph_index": 1})
    mb.op("VAR_HANDLE", [], [h], {"shared_name": "v"})
    mb.op("READ_VARIABLE", [h], [r])
    mb.end_subgraph([x], [r])
    h0 = mb.tensor("h", (), "resource")
    c = mb.const("c", np.zeros((1, 4), np.int8), scale=0.1, zero_point=0)
    d = mb.tensor("d", (1, 4), "int8", scale=0.1, zero_point=0)
    mb.op("VAR_HANDLE", [], [h0], {"shared_name": "v"})
    mb.op("RELU", [c], [d])
    mb.op("ASSIGN_VARIABLE", [h0, d], [])
    with pytest.raises(UnsupportedModel, match="assign constants only"):
        load_tflite(_write(tmp_path, mb.finish([], []), "computed_init"))


@pytest.mark.parametrize("cmd", ["inspect", "report", "plan", "compile"])
def test_cli_commands_handle_a_node_without_outputs(tmp_path, cmd, capsys):
    """ASSIGN_VARIABLE writes no tensor: every command still works on the model."""
    from edgecc.cli import main
    path = _write(tmp_path, counter(read_after=True))
    extra = {"report": ["-o", str(tmp_path / "r.html")], "compile": ["-o", str(tmp_path / "c")]}
    assert main([cmd, str(path), *extra.get(cmd, [])]) == 0
    assert "internal error" not in capsys.readouterr().err


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_ring_buffer_bit_exact_over_five_frames(tmp_path, target):
    """READ -> CONCATENATION -> STRIDED_SLICE -> ASSIGN with a FULLY_CONNECTED on the window:
    the planner must not let the window's producers or the assignment overtake the read."""
    r = verify_model(_write(tmp_path, ring_buffer(), "ring"), get_target(target), frames=5)
    assert r.bit_exact and len(r.frames) == 5, r


def _two_assigns() -> bytes:
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 4), "int8", **{"scale": 0.1, "zero_point": 0})
    h = mb.tensor("h", (), "resource")
    mb.op("VAR_HANDLE", [], [h], {"shared_name": "v"})
    mb.op("ASSIGN_VARIABLE", [h, x], [])
    mb.op("ASSIGN_VARIABLE", [h, x], [])
    r = mb.tensor("r", (1, 4), "int8", scale=0.1, zero_point=0)
    mb.op("READ_VARIABLE", [h], [r])
    return mb.finish([x], [r])


def _bad_call_once() -> bytes:
    mb = ModelBuilder()
    x = mb.tensor("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = mb.tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    mb.op("CALL_ONCE", [], [], {"init_subgraph_index": 7})
    mb.op("RELU", [x], [y])
    return mb.finish([x], [y])


@pytest.mark.parametrize("make, message", [
    (_two_assigns, "a second time in one run"),
    (_bad_call_once, "CALL_ONCE calls subgraph 7"),
])
def test_refused_resource_models_exit_2(tmp_path, capsys, make, message):
    from edgecc.cli import main
    path = _write(tmp_path, make(), make.__name__)
    assert main(["compile", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "internal" not in err
