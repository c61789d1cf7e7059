"""Typed I/O of the generated C (docs/design.md "Typed I/O"): NAME.h's per-tensor macros equal the
model's own values, read from the file by other code (the `tflite` flatbuffer API, the `onnx`
package), for every shared model; the quantize/dequantize helpers compute TFLite's QUANTIZE and
ONNX's QuantizeLinear bit for bit (the numpy rule, edgecc/numerics/io.py, against TFLite Micro
and onnxruntime; the C helpers against the numpy rule on ties, saturation, infinities and NaN).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from c_contract import check_c_api_contract, typed_io
from conftest import MODELS
from edgecc.compiler import compile_model
from edgecc.ir import DType, QParams, TensorType
from edgecc.build.manifest import manifest
from edgecc.codegen import write_files
from edgecc.numerics.io import HALF_AWAY, HALF_EVEN, dequantize, quantize
from edgecc.targets import get_target

SHARED = MODELS.parent
ALL = sorted([*SHARED.glob("tflite/*.tflite"), *SHARED.glob("converter/*.tflite"),
              *SHARED.glob("onnx_models/*.onnx")])
TFL_TYPES = {0: "EDGECC_FLOAT32", 2: "EDGECC_INT32", 3: "EDGECC_UINT8", 4: "EDGECC_INT64",
             6: "EDGECC_BOOL", 7: "EDGECC_INT16", 9: "EDGECC_INT8"}
ONNX_TYPES = {1: "EDGECC_FLOAT32", 2: "EDGECC_UINT8", 3: "EDGECC_INT8", 5: "EDGECC_INT16",
              6: "EDGECC_INT32", 7: "EDGECC_INT64", 9: "EDGECC_BOOL"}


LAYOUT = {"Transpose", "Reshape", "Identity", "Squeeze", "Unsqueeze", "Flatten"}


def _sanitized(s: str) -> str:
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_.:/-") else "_" for ch in s)


def _tflite_io(path: Path) -> dict[str, dict]:
    import tflite
    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    out = {}
    for kind, idx in (("INPUT", sg.InputsAsNumpy()), ("OUTPUT", sg.OutputsAsNumpy())):
        for i, ti in enumerate(idx):
            t = sg.Tensors(int(ti))
            q = t.Quantization()
            scale = zp = None
            if q is not None and q.ScaleLength() == 1:
                scale, zp = float(np.float32(q.Scale(0))), int(q.ZeroPoint(0))
            out[f"{kind}{i}"] = dict(name=_sanitized((t.Name() or b"").decode()),
                                     dtype=TFL_TYPES[t.Type()], dims=list(t.ShapeAsNumpy()),
                                     scale=scale, zero_point=zp)
    return out


def _onnx_io(path: Path) -> dict[str, dict]:
    import onnx
    from onnx import numpy_helper
    m = onnx.load(str(path))
    g = m.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}

    def qparams(name: str, op: str, pos: int):
        """The scale and zero point of the DequantizeLinear reading `name` (input) or of the
        QuantizeLinear writing it (output), as the model states them, through layout-only ops
        (Transpose, Reshape, ...) between them."""
        for n in g.node:
            if (n.input[0] if pos == 0 else n.output[0]) != name:
                continue
            if n.op_type == op:
                zp = inits[n.input[2]] if len(n.input) > 2 and n.input[2] else np.zeros(1)
                return float(np.float32(inits[n.input[1]])), int(np.asarray(zp).ravel()[0])
            if n.op_type in LAYOUT:
                return qparams(n.output[0] if pos == 0 else n.input[0], op, pos)
        return None, None

    out = {}
    real_inputs = [v for v in g.input if v.name not in inits]
    for kind, vals, op, pos in (("INPUT", real_inputs, "DequantizeLinear", 0),
                                ("OUTPUT", list(g.output), "QuantizeLinear", 1)):
        for i, v in enumerate(vals):
            tt = v.type.tensor_type
            dtype = ONNX_TYPES[tt.elem_type]
            scale, zp = qparams(v.name, op, pos) if dtype != "EDGECC_FLOAT32" else (None, None)
            out[f"{kind}{i}"] = dict(name=_sanitized(v.name), dtype=dtype,
                                     dims=[d.dim_value or 1 for d in tt.shape.dim],
                                     scale=scale, zero_point=zp)
    return out


@pytest.mark.parametrize("model", ALL, ids=[p.name for p in ALL])
def test_header_macros_are_the_models_values(model, tmp_path):
    c = compile_model(model, get_target("host"), "m")
    write_files(c.files, tmp_path / "out")
    got = typed_io(tmp_path / "out" / "m.h", "m")
    want = _onnx_io(model) if model.suffix == ".onnx" else _tflite_io(model)
    assert sorted(got) == sorted(want)
    man = manifest(c, model, "host", None, {})
    rounding = "half-even" if model.suffix == ".onnx" else "half-away"
    for key, w in want.items():
        g = got[key]
        # the manifest carries the same, as numbers
        kind, i = ("inputs", int(key[5:])) if key.startswith("INPUT") else ("outputs",
                                                                            int(key[6:]))
        e = man[kind][i]
        assert (_sanitized(e["name"]), e["shape"], e["elements"], e["bytes"]) == \
            (w["name"], g["dims"] if g["rank"] else [], g["elements"], g["size"]), (key, e)
        assert f"EDGECC_{e['dtype'].upper()}" == w["dtype"], (key, e)
        assert (e["scale"], e["zero_point"]) == (g["scale"] and float(np.float32(g["scale"])),
                                                 g["zero_point"]), (key, e)
        assert e["rounding"] == (rounding if w["scale"] is not None else None), (key, e)
        if w["scale"] is not None and w["dtype"] != "EDGECC_INT32":  # the helper's rule too
            h = (tmp_path / "out" / "m.h").read_text()
            call = re.search(rf"m_{key.lower()}_quantize\(float x\) {{\n.*?, (\d)\);", h, re.S)
            assert call and call.group(1) == ("1" if model.suffix == ".onnx" else "0"), key
        assert g["name"] == w["name"], (key, g["name"], w["name"])
        assert g["dtype"] == w["dtype"], key
        assert g["dims"] == [int(d) for d in w["dims"]] and g["rank"] == len(w["dims"]), (key, g)
        assert g["elements"] == int(np.prod(w["dims"])), key
        if w["scale"] is None:
            assert g["scale"] is None, key
        else:  # the literal reads back to the model's float32 scale
            assert np.float32(g["scale"]) == np.float32(w["scale"]), (key, g["scale"], w["scale"])
            assert g["zero_point"] == w["zero_point"], key


def test_header_keeps_the_contract_with_typed_io(tmp_path):
    """A model with uint8 input and output: the checker's typed-I/O part, helpers included."""
    out = tmp_path / "out"
    write_files(compile_model(SHARED / "converter" / "cv_resnet8_u8io.tflite",
                              get_target("host"), "r8").files, out)
    check_c_api_contract(out, "r8", tmp_path)
    assert "static inline uint8_t r8_input0_quantize(float x)" in (out / "r8.h").read_text()


# ---- the rounding rules ----------------------------------------------------------------------

SCALE, ZP = 0.0625, -3  # ties are exact: x / 0.0625 = k + 0.5 for x = (k + 0.5) / 16
# (past +-2^31 steps TFLite's cast to int32 overflows, undefined behaviour: -1e9 here gives 127 in
# TFLite Micro on x86; edgecc saturates, so the comparison with the references stays inside)
TIES = np.array([(k + 0.5) / 16 for k in range(-140, 140)] + [1e7, -1e7, 7.99, -8.1, 0.0, -0.0,
                                                              0.03124, -0.03126], np.float32)


def _t(dtype: str, scale=SCALE, zp=ZP) -> TensorType:
    return TensorType((1, 1), DType[dtype.upper()], QParams((scale,), (zp,)))


def test_half_away_is_tflite_quantize(tmp_path):
    """The numpy rule HALF_AWAY == TFLite Micro's QUANTIZE float32 -> int8 on ties and beyond."""
    from edgecc.tflite_writer import ModelBuilder
    from edgecc.verify.reference import run_tflm
    mb = ModelBuilder()
    x = mb.tensor("x", (1, TIES.size), "float32")
    y = mb.tensor("y", (1, TIES.size), "int8", scale=SCALE, zero_point=ZP)
    mb.op("QUANTIZE", [x], [y])
    p = tmp_path / "q.tflite"
    p.write_bytes(mb.finish([x], [y]))
    (ref,), _ = run_tflm(p, [TIES.reshape(1, -1)], 1)
    got = quantize(TIES, _t("int8"), HALF_AWAY)
    assert np.array_equal(got, ref.ravel()), np.flatnonzero(got != ref.ravel())
    assert not np.array_equal(got, quantize(TIES, _t("int8"), HALF_EVEN))  # ties do differ


def test_half_even_is_onnx_quantizelinear():
    """The numpy rule HALF_EVEN == onnxruntime's QuantizeLinear float32 -> int8 and uint8."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
    for dtype, zp, tp in (("int8", ZP, TensorProto.INT8), ("uint8", 130, TensorProto.UINT8)):
        g = helper.make_graph(
            [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], "q",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [TIES.size])],
            [helper.make_tensor_value_info("y", tp, [TIES.size])],
            [helper.make_tensor("s", TensorProto.FLOAT, [], [SCALE]),
             helper.make_tensor("z", tp, [], [zp])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        (ref,) = s.run(None, {"x": TIES})
        assert np.array_equal(quantize(TIES, _t(dtype, zp=zp), HALF_EVEN), ref), dtype


C_PROG = r"""#include <stdio.h>
#include <string.h>
#include "edgecc_io.h"
int main(void) {
    float x; unsigned int bits;
    while (scanf("%x", &bits) == 1) {
        memcpy(&x, &bits, 4);
        printf("%d %d %d %d %d %d\n",
               (int)ec_io_quantize(x, %SCALE%, %ZP%, -128, 127, 0),
               (int)ec_io_quantize(x, %SCALE%, %ZP%, -128, 127, 1),
               (int)ec_io_quantize(x, %SCALE%, 130, 0, 255, 0),
               (int)ec_io_quantize(x, %SCALE%, 130, 0, 255, 1),
               (int)ec_io_quantize(x, %SCALE%, %ZP%, -32768, 32767, 0),
               (int)ec_io_quantize(x, %SCALE%, %ZP%, -32768, 32767, 1));
    }
    for (int q = -128; q < 128; ++q) {
        float d = ec_io_dequantize(q, %SCALE%, %ZP%);
        memcpy(&bits, &d, 4);
        printf("d %08x\n", bits);
    }
    return 0;
}
"""


@pytest.mark.parametrize("scale", [SCALE, 0.0173])
def test_c_helpers_equal_the_numpy_rules(scale, tmp_path):
    """runtime_c/edgecc_io.h == edgecc/numerics/io.py for int8, uint8 and int16, both rules, on
    ties, random values, saturation, +-inf and NaN; dequantize too."""
    from edgecc.resources import data_dir
    rng = np.random.default_rng(7)
    xs = np.concatenate([TIES, rng.uniform(-3, 3, 2000).astype(np.float32) * 1.7,
                         np.array([np.inf, -np.inf, np.nan, 1e38, -1e38, 1e9, -1e9], np.float32)])
    src = tmp_path / "q.c"
    src.write_text(C_PROG.replace("%SCALE%", f"{np.float32(scale)!s}f").replace("%ZP%", str(ZP)))
    exe = tmp_path / "q"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-ffp-contract=off", "-I",
                    str(data_dir("runtime_c")), str(src), "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], input="\n".join(f"{int(b):x}" for b in xs.view(np.uint32)),
                       capture_output=True, text=True, check=True)
    lines = r.stdout.splitlines()
    got = np.array([list(map(int, ln.split())) for ln in lines[:xs.size]])
    cols = [("int8", ZP, HALF_AWAY), ("int8", ZP, HALF_EVEN), ("uint8", 130, HALF_AWAY),
            ("uint8", 130, HALF_EVEN), ("int16", ZP, HALF_AWAY), ("int16", ZP, HALF_EVEN)]
    for k, (dtype, zp, rule) in enumerate(cols):
        want = quantize(xs, _t(dtype, scale, zp), rule).astype(np.int64)
        bad = np.flatnonzero(got[:, k] != want)
        assert not bad.size, (dtype, rule, xs[bad[:5]], got[bad[:5], k], want[bad[:5]])
    deq = np.array([int(ln.split()[1], 16) for ln in lines[xs.size:]], np.uint32).view(np.float32)
    want = dequantize(np.arange(-128, 128), _t("int8", scale))
    assert np.array_equal(deq, want)
