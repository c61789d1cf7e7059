"""runtime_c/ headers: an output holds exactly the headers its kernels use (the table entries'
headers, edgecc/lower/<isa>/table.py; the portable kernels', edgecc/lower/portable.py; the
include closure, edgecc/codegen.py), and every header is self-contained, short, and made of
short functions.

Each header must compile on its own (`#include` of just that file) with its ISA's compiler and flags
at -std=c99 -Wall -Wextra -Werror, so a header's `#include "..."` lines really are all it needs
(codegen follows them to decide which files to copy).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from edgecc.codegen import closure
from edgecc.compiler import compile_model
from edgecc.lower.portable import TEMPLATE_HEADERS
from edgecc.resources import data_dir
from edgecc.targets import TARGETS, get_target
from conftest import shared_model

RT = data_dir("runtime_c")
PORTABLE = {"edgecc_rt.h", "edgecc_fixedpoint.h", "edgecc_lstm.h", "edgecc_log.h", "edgecc_io.h"}
STRICT = ("-std=c99", "-Wall", "-Wextra", "-Werror")
MAX_HEADER_LINES = 400
MAX_FUNCTION_LINES = 150


def _compilers(target_names):
    return [(get_target(t).cc, get_target(t).cflags) for t in target_names]


# the runtime_c/ folder -> targets whose flags switch its code on
ISA_TARGETS = {
    "dsp": ("cortex-m4", "cortex-m55"), "mve": ("cortex-m55",), "neon": ("aarch64",),
    "x86": ("x86-avx2", "x86-avx512"), "vec": ("x86-avx2", "aarch64"),
}
# paths no target's flags select: NEON without the dot-product extension, 256-bit AVX-VNNI
EXTRA_CONFIGS = {
    "neon": [("aarch64-linux-gnu-gcc", ("-march=armv8-a",))],
    "x86": [("gcc", ("-mavx2", "-mfma", "-mavxvnni"))],
}


def isa_of(header: str) -> str | None:
    """The ISA a runtime_c/ header belongs to (its folder), None for the portable ones."""
    return header.split("/", 1)[0] if "/" in header else None


def all_headers() -> list[str]:
    return sorted(p.relative_to(RT).as_posix() for p in RT.rglob("*.h"))


def _files(model: str, target: str) -> dict[str, str]:
    return compile_model(shared_model(model), get_target(target), "m").files


def _included(c_text: str) -> list[str]:
    return re.findall(r'^#include "([^"]+)"', c_text, re.M)


def test_host_output_has_no_isa_header():
    files = _files("kws_ref_model", "host")
    headers = {f for f in files if f.endswith(".h") and f != "m.h"}
    assert headers and headers <= PORTABLE, sorted(headers)
    assert not any("/" in f for f in files), sorted(files)


def test_cortex_m4_output_has_only_the_dsp_headers_it_uses():
    files = _files("kws_ref_model", "cortex-m4")
    headers = {f for f in files if f.endswith(".h") and f != "m.h"}
    isas = {isa_of(h) for h in headers} - {None}
    assert isas == {"dsp"}, sorted(headers)
    # NAME.c names each kernel header, NAME.h the typed I/O one, and the copied set is exactly
    # their closure
    named = [h for h in _included(files["m.c"]) if h != "m.h"]
    assert set(closure([*named, *_included(files["m.h"])])) == headers
    assert named[0] == "edgecc_rt.h"


# The headers of onnxruntime's x86 float groups (edgecc/ops/_ort_near.py): only the kernels of
# such groups include them
ORT_NEAR_HEADERS = {"edgecc_ort_near.h", "dsp/near.h", "dsp/conv_2d_near.h", "dsp/fc_near.h"}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_tflite_output_has_no_onnx_numerics_header(target):
    """A TFLite model's convolutions, depthwise and fully connected layers and ADDs ship none of
    the near-tie headers (nor edgecc_math.h, which they pulled in) on any target."""
    for model in ("kws_ref_model", "pretrainedResnet_quant"):
        files = _files(model, target)
        assert not (ORT_NEAR_HEADERS | {"edgecc_math.h"}) & set(files), (model, sorted(files))


def test_onnx_float_groups_ship_the_near_headers():
    """The other side: the same layers from an ONNX model in x86 numerics (float groups on the
    near-tie kernels) do ship them, so the set above names real headers; the default (fused)
    numerics ship none of them."""
    from conftest import MODELS
    from edgecc.options import CompileOptions
    shipped, fused = set(), set()
    for name in ("tfl_pretrainedResnet_quant_qdq", "tfl_ad01_int8_qdq"):  # convs; large FCs
        path = MODELS.parent / "onnx_models" / f"{name}.onnx"
        shipped |= set(compile_model(path, get_target("cortex-m4"), "m",
                                     CompileOptions(onnx_numerics="x86")).files)
        fused |= set(compile_model(path, get_target("cortex-m4"), "m").files)
    assert ORT_NEAR_HEADERS <= shipped, sorted(shipped)
    assert not ORT_NEAR_HEADERS & fused, sorted(fused)


def _tables() -> dict:
    import importlib
    return importlib.import_module("edgecc.lower.choose").TABLES


def test_entries_and_portable_templates_name_existing_headers():
    templates = data_dir("templates")
    for tpl, headers in TEMPLATE_HEADERS.items():
        assert (templates / "c" / tpl).is_file(), tpl
        closure(headers)  # raises on a missing file or a missing include
    for isa, table in _tables().items():
        for c in table:
            assert c.headers and all(h.startswith(f"{isa}/") for h in c.headers), (isa, c.name)
            closure(c.headers)


def _kernel_calls(text: str) -> set[str]:
    return {m for m in re.findall(r"\b(ec_[a-z0-9_]+)\s*\(", text)}


def _defined(headers) -> str:
    return "\n".join((RT / h).read_text() for h in closure(("edgecc_rt.h", *headers)))


def test_each_template_calls_only_what_its_headers_define():
    """The ec_* functions a template calls are all defined in the closure of its headers: a
    portable template's (edgecc/lower/portable.py), an ISA template's the union of its ISA
    table's entries' headers."""
    templates = data_dir("templates")
    for tpl, headers in TEMPLATE_HEADERS.items():
        text = (templates / "c" / tpl).read_text()
        defined = _defined(headers)
        for fn in sorted(_kernel_calls(text)):
            assert re.search(rf"\b{fn}\s*\(", defined), (tpl, fn)
    for isa, table in _tables().items():
        defined = _defined({h for c in table for h in c.headers})
        found = sorted((templates / isa).glob("*.c.j2"))
        assert found, isa
        for p in found:
            for fn in sorted(_kernel_calls(p.read_text())):
                assert re.search(rf"\b{fn}\s*\(", defined), (p.name, fn)


def _configs(header: str):
    isa = isa_of(header)
    if isa is None:
        return [("gcc", ())]
    return _compilers(ISA_TARGETS[isa]) + EXTRA_CONFIGS.get(isa, [])


@pytest.mark.parametrize("header", all_headers())
def test_header_compiles_on_its_own(header, tmp_path):
    src = tmp_path / "one.c"
    src.write_text(f'#include "{header}"\nint ec_probe(void);\nint ec_probe(void) {{ return 0; }}\n')
    for cc, flags in _configs(header):
        if shutil.which(cc) is None:
            pytest.fail(f"{cc} is not installed (needed to check {header})")
        r = subprocess.run([cc, *STRICT, *flags, "-O1", f"-I{RT}", "-c", str(src), "-o",
                            str(tmp_path / "one.o")], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (header, cc, flags, r.stderr[-3000:])


def _function_lengths(text: str):
    """(name, lines) of each function definition at file scope: a brace scan over the text with
    comments and preprocessor lines blanked; a definition is a top-level `{` after a `)`."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    lines = text.split("\n")
    code, cont = [], False
    for ln in lines:  # a macro (with its continuation lines) is not code
        is_pp = cont or ln.lstrip().startswith("#")
        cont = is_pp and ln.rstrip().endswith("\\")
        code.append("" if is_pp else ln)
    depth, start, name = 0, 0, ""
    for i, ln in enumerate(code):
        for j, ch in enumerate(ln):
            if ch == "{":
                if depth == 0:
                    head = " ".join(code[max(0, i - 6):i] + [ln[:j]])
                    m = re.search(r"(\w+)\s*\([^;{}]*\)\s*$", head)
                    start, name = i, (m.group(1) if m else "")
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and name:
                    yield name, i - start + 1
                    name = ""


def test_headers_are_short():
    long = {h: n for h in all_headers()
            if (n := len((RT / h).read_text().splitlines())) > MAX_HEADER_LINES}
    assert not long, long


def test_functions_are_short():
    long = {(h, fn): n for h in all_headers() for fn, n in _function_lengths((RT / h).read_text())
            if n > MAX_FUNCTION_LINES}
    assert not long, long


def test_function_scan_sees_definitions():
    text = "static int f(int a,\n  int b) {\n  if (a) { return b; }\n  return 0;\n}\n" \
           "#define X(a) { a }\ntypedef struct { int a; } s;\n"
    assert list(_function_lengths(text)) == [("f", 4)]


def test_closure_follows_relative_includes():
    # (dsp/add.h includes ../edgecc_rt.h for its ONNX epilogue)
    assert closure(["mve/add.h"]) == ["dsp/add.h", "dsp/common.h", "edgecc_rt.h", "mve/add.h",
                                      "mve/common.h"]
    assert closure(["edgecc_log.h"]) == ["edgecc_fixedpoint.h", "edgecc_log.h", "edgecc_rt.h"]
    with pytest.raises(FileNotFoundError):
        closure(["dsp/no_such_op.h"])


def test_kernel_headers_win_over_the_table(monkeypatch):
    """A portable kernel that names its headers keeps them; one that does not gets
    edgecc/lower/portable.py's."""
    from types import SimpleNamespace

    from edgecc import lower
    import importlib
    choose = importlib.import_module("edgecc.lower.choose")  # the chooser calls the op's lower
    from edgecc.ops import Kernel

    named = Kernel("softmax.c.j2", headers=("dsp/add.h",))
    for kernel, want in ((named, ("dsp/add.h",)), (Kernel("softmax.c.j2"), ("edgecc_fixedpoint.h",))):
        op = SimpleNamespace(lower=lambda g, n, t, k=kernel: k)
        monkeypatch.setattr(choose, "get_op", lambda name, op=op: op)
        lw = lower.lower_node(None, SimpleNamespace(index=0, op="SOFTMAX"), get_target("host"))
        assert lw.template_path == "c/softmax.c.j2" and lw.kernel.headers == want


def test_a_chosen_kernel_carries_its_entrys_headers(monkeypatch):
    """try_candidates hands the Kernel its entry's headers unless the build named its own."""
    from types import SimpleNamespace

    from edgecc.lower import table
    from edgecc.lower.table import Candidate, try_candidates
    from edgecc.ops import Kernel

    monkeypatch.setattr(table, "refused_by_all", lambda *a: None)  # (no graph here)
    n = SimpleNamespace(op="ADD", attrs={}, inputs=[])
    for built, want in ((Kernel("dsp/add_lut.c.j2"), ("dsp/add.h",)),
                        (Kernel("dsp/add_lut.c.j2", headers=("dsp/mul.h",)), ("dsp/mul.h",))):
        c = Candidate("ADD", "dsp", "t", lambda g, n, t: None, lambda g, n, t, k=built: k,
                      ("dsp/add.h",))
        k = try_candidates([c], None, n, None, [])
        assert k.headers == want
