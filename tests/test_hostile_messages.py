"""Issue 26's attacker trial on what edgecc prints and reads: one line always (onnxruntime's own
coloured log line silenced), no control or bidirectional-override character in an error line,
SVG and HTML that stay valid XML with a hostile tensor name, and --inputs files checked from
their headers (a .npy claiming 2^40 elements, a FIFO) before anything is loaded."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest

from edgecc.diagnostics import clean_line
from edgecc.names import visible_text, xml_text
from edgecc.tflite_writer import ModelBuilder
from test_cli_hardening import _one_line
from test_internal_errors import EXAMPLE, run_cli

REPO = Path(__file__).resolve().parent.parent
HOSTILE = "evil\x1b[2J\x07\u202eeman\u2066x\x9b\u200b"


def _relu(tmp_path, name: str, zero_point: int = 0) -> Path:
    mb = ModelBuilder()
    x = mb.tensor(name, (1, 8), "int8", scale=0.05, zero_point=zero_point)
    y = mb.tensor(name + "_out", (1, 8), "int8", scale=0.05, zero_point=0)
    mb.op("RELU", [x], [y])
    p = tmp_path / "relu.tflite"
    p.write_bytes(mb.finish([x], [y]))
    return p


def test_clean_line_removes_bidi_and_ansi():
    line = clean_line("a\x1b[1;31mred\x1b[m \u202eright-to-left\u202c \u2067iso\u2069 z\u200bw")
    assert line == "ared right-to-left iso zw"


def test_error_line_has_no_bidi_override(tmp_path, capsys):
    """Case 10: error lines kept U+202E (right-to-left override)."""
    model = _relu(tmp_path, HOSTILE, zero_point=200)  # zero point out of int8: refused
    code, _, err = run_cli(["compile", model, "-o", tmp_path / "o"], capsys)
    line = _one_line(code, err)
    assert "evil" in line and visible_text(line) == line, repr(line)


def test_plan_svg_and_report_stay_valid_with_a_hostile_name(tmp_path, capsys):
    """Case 10: ESC/BEL in a tensor name made `plan --svg` write invalid XML and reached the
    HTML report raw."""
    model = _relu(tmp_path, HOSTILE)
    svg, html = tmp_path / "p.svg", tmp_path / "r.html"
    code, _, err = run_cli(["plan", model, "--svg", svg], capsys)
    assert code == 0, err
    ET.fromstring(svg.read_text())  # well-formed XML 1.0
    assert "evil" in svg.read_text()
    code, _, err = run_cli(["report", model, "-o", html], capsys)
    assert code == 0, err
    text = html.read_text()
    assert "evil" in text and visible_text(text.replace("\n", " ")) == text.replace("\n", " ")


def test_xml_text_is_xml():
    ET.fromstring(f"<a t=\"{xml_text(HOSTILE + '<&>')}\">{xml_text(HOSTILE)}</a>")


def test_onnxruntime_logs_nothing_when_it_rejects_a_model(tmp_path, capfd):
    """Case 10: on a model onnxruntime rejects, verify printed onnxruntime's coloured log line
    before its own: the reference's session must log nothing."""
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from edgecc.errors import EdgeccError
    from edgecc.verify.onnx_ref import run_onnxruntime
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    idx = helper.make_tensor("i", TensorProto.INT64, [2], [0, 9])  # index 9 of 4: a run error
    g = helper.make_graph([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], "g", [x], [y],
                          [idx])
    p = tmp_path / "gather.onnx"
    p.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
                  .SerializeToString())
    capfd.readouterr()
    with pytest.raises(EdgeccError, match="onnxruntime cannot run"):
        run_onnxruntime(p, [np.zeros((1, 4), np.float32)], (), "fused")
    out, err = capfd.readouterr()
    assert err == "" and out == "", repr(err)


# ---- --inputs files


def _npy_claiming(path: Path, shape) -> Path:
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "|i1", "fortran_order": False,
                                                 "shape": shape})
        f.write(b"\0" * 64)
    return path


def test_npy_header_claiming_2_40_elements_is_refused(tmp_path, capsys):
    """Case 8: an .npy header claiming 2^40 elements ended in a MemoryError."""
    f = _npy_claiming(tmp_path / "x.npy", (2**40,))
    code, _, err = run_cli(["verify", EXAMPLE, "--inputs", f], capsys)
    assert "the header claims" in _one_line(code, err)


def test_npz_member_claiming_more_than_it_holds_is_refused(tmp_path, capsys):
    member = _npy_claiming(tmp_path / "m.npy", (2**36, 4))
    z = tmp_path / "x.npz"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(member, "input.npy")
    code, _, err = run_cli(["verify", EXAMPLE, "--inputs", z], capsys)
    assert "the header claims" in _one_line(code, err)


def test_fifo_as_inputs_is_refused(tmp_path):
    """Case 8: `verify --inputs FIFO` hung."""
    fifo = tmp_path / "x.npy"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "edgecc", "verify", str(EXAMPLE), "--inputs",
                        str(fifo)], capture_output=True, text=True, timeout=120, env=env)
    assert "not a regular file" in _one_line(r.returncode, r.stderr)
