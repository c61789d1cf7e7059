"""The generated C builds whatever -O level a firmware uses. The Cortex-M4 DSP kernels' inline
assembly names up to 12 registers, which an unoptimized build cannot free, so -O0 takes their
ACLE-intrinsic twins (runtime_c/dsp/conv_2d.h, dsp/fully_connected_8u.h; the FULLY_CONNECTED
8-unit step needs all 14 registers and borrows r7 itself, so it also builds with a frame
pointer; gcc and clang, bit-exact at -O0 under QEMU). The Helium (Cortex-M55) kernels' assembly takes
its intrinsic / C twins at -O0 (and EC_MVE_MAC2X3 at -Os), and their functions carry the few
-O2 options that let -O1, -Og and a reserved frame pointer allocate the rest (mve/common.h,
EC_MVE_NOSCHED); the twins are bit-exact with TFLite Micro under QEMU. The gather depthwise's
assembler loops keep their pixel steps in a vector register (11 general registers, so r7 may be
the frame pointer). Every compiler run has a bounded timeout, so a compiler that hangs fails the
test instead of blocking CI."""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import SHARED, shared_model
from edgecc.build.boards import load_board
from edgecc.targets import get_target
from edgecc.build import cross
from edgecc.verify import verify_model

REPO = Path(__file__).resolve().parent.parent
M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
M55 = ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"]
OPTS = ["-O0", "-Og", "-O1", "-Os", "-O2", "-O3", "-O2 -fno-omit-frame-pointer"]


def _builds_at_every_opt_level(tmp_path, model, target, cflags, opts=OPTS, cc=None, flags=()):
    """cflags: the core flags for arm-none-eabi-gcc, or with cc the board's own command; flags:
    more `edgecc compile` flags."""
    out = tmp_path / "gen"
    path = model if isinstance(model, Path) else shared_model(model)
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(path),
                        "--target", target, "--name", "m", "-o", str(out), *flags],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr

    def build(job):
        i, (opt, src) = job
        cmd = [*cc, "-std=c99"] if cc else ["arm-none-eabi-gcc", "-std=c99", *cflags]
        try:
            b = subprocess.run([*cmd, *opt.split(), "-I", str(out), "-c", str(src), "-o",
                                str(tmp_path / f"x{i}.o")], capture_output=True, text=True,
                               timeout=120)
        except subprocess.TimeoutExpired:
            return f"{model} {opt} {src.name}: the compiler still runs after 120 s"
        return f"{model} {opt} {src.name}: {b.stderr[-800:]}" if b.returncode else None

    jobs = [(opt, src) for opt in opts for src in sorted(out.glob("*.c"))]
    with ThreadPoolExecutor(max_workers=2) as pool:  # (the machines have 2 cores)
        errors = [e for e in pool.map(build, enumerate(jobs)) if e]
    assert not errors, errors[0]


@pytest.mark.parametrize("model,cc", [("vww_96_int8", "gcc"), ("str_ww_ref_model", "gcc"),
                                      ("ad01_int8", "gcc"), ("hello_world_int8", "gcc"),
                                      ("ad01_int8", "clang"), ("hello_world_int8", "clang")])
def test_cortex_m4_c_builds_at_every_opt_level(tmp_path, model, cc):
    _builds_at_every_opt_level(tmp_path, model, "cortex-m4", M4,
                               cc=cross.compile_command(load_board("mps2-an386"), cc))


@pytest.mark.parametrize("model,numerics", [("tfl_ad01_int8_qdq", "fused"),
                                            ("tfl_ad01_int8_qdq", "x86"),
                                            ("ox_conv1d_qdq_s8", "fused")])
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_cortex_m4_onnx_numerics_c_builds_at_every_opt_level(tmp_path, cc, model, numerics):
    """tfl_ad01_int8_qdq: the FC kernels' onnxruntime epilogue (ec_dsp_onnx_val's VCVTR asm)
    beside the 8-unit step's pinned registers (x86 numerics: the near-tie FC, dsp/fc_near.h);
    ox_conv1d_qdq_s8: the FC entry without the 8-unit step (a small model) and the linear
    constant-row ADD."""
    path = SHARED / "models" / "onnx_models" / f"{model}.onnx"
    if not path.is_file():
        pytest.fail(f"shared model missing: {path}")
    _builds_at_every_opt_level(tmp_path, path, "cortex-m4", M4,
                               cc=cross.compile_command(load_board("mps2-an386"), cc),
                               flags=("--onnx-numerics", numerics))


@pytest.mark.qemu
def test_cortex_m4_unoptimized_build_is_bit_exact(monkeypatch):
    """-O0 runs the C twins (ad01_int8: the FULLY_CONNECTED 8-unit step's), bit-exact under QEMU."""
    real = cross.compile_sources

    def at_o0(*args, **kw):
        return real(*args, **{**kw, "opt": "-O0"})

    monkeypatch.setattr(cross, "compile_sources", at_o0)
    b = load_board("mps2-an386")
    r = verify_model(shared_model("ad01_int8"), get_target(b.target), board=b, frames=2)
    assert r.bit_exact, r.first_bad_layer
    assert r.extra["instructions"] > 2 * 293_202, "not the -O0 build"  # -O2: 293,202


@pytest.mark.parametrize("model", ["vww_96_int8", "pretrainedResnet_quant",
                                   "micro_speech_quantized", "str_ww_ref_model", "kws_ref_model"])
def test_cortex_m55_c_builds_at_every_opt_level(tmp_path, model):
    _builds_at_every_opt_level(tmp_path, model, "cortex-m55", M55)


@pytest.mark.parametrize("model", ["tfl_pretrainedResnet_quant_qdq", "ox_dscnn_qdq_s8"])
def test_cortex_m55_onnx_numerics_c_builds_at_every_opt_level(tmp_path, model):
    """(ox_dscnn's depthwise layers take the gather kernel, whose assembler loops once needed 13
    general registers and failed with -fno-omit-frame-pointer.)"""
    path = SHARED / "models" / "onnx_models" / f"{model}.onnx"
    if not path.is_file():
        pytest.fail(f"shared model missing: {path}")
    _builds_at_every_opt_level(tmp_path, path, "cortex-m55", M55)


@pytest.mark.parametrize("model,opt", [("vww_96_int8", "-O0"), ("pretrainedResnet_quant", "-Os")])
def test_cortex_m55_twins_bit_exact_under_qemu(monkeypatch, tmp_path, model, opt):
    """The generated C built at `opt` (the assembly's twins: the depthwise per-pixel C path at
    -O0, EC_MVE_MAC2X3's intrinsics at both) runs under QEMU bit-exact with TFLite Micro over
    two frames. (An unoptimized build keeps every inlined copy's locals apart: the 1x1
    convolution's frame alone is about 25 KB at -O0, so the board gets a 64 KiB stack.)"""
    from edgecc.build import qemu
    text = (REPO / "boards" / "mps3-an547.toml").read_text()
    assert "stack_size = 16384" in text
    board_file = tmp_path / "mps3-an547-bigstack.toml"
    board_file.write_text(text.replace("stack_size = 16384", "stack_size = 65536"))
    real = qemu.build_program
    seen = []

    def build(*args, gen_flags=(), **kw):
        seen.append(opt)
        return real(*args, gen_flags=[*gen_flags, opt], **kw)  # after the default -O2: wins

    monkeypatch.setattr(qemu, "build_program", build)
    r = verify_model(shared_model(model), get_target("cortex-m55"), board=load_board(board_file),
                     frames=2)
    assert seen and r.bit_exact
