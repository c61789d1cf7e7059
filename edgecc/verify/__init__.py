"""`edgecc verify`: build the generated C, run it, compare every output byte with the reference.

Owns: the verify flow (compile -> harness -> build -> run -> compare) and, on a mismatch, the
trace build that names the first layer whose output differs from TFLite Micro's tensor. With
`frames` > 1 the harness runs N consecutive seeded frames on one arena after one name_reset (one
build, one run), the reference keeps its state over the same frames, every frame is compared, and
the first frame that differs is traced; `profile` (per-layer instructions, edgecc.build.qemu)
counts the first frame's layers; `cache` takes the compiled model from edgecc.compile_cache. The oracle
is TFLite Micro, or LiteRT BUILTIN_REF when TFLM cannot run the model (edgecc.verify.reference).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgecc.build.boards import board_options
from edgecc.build.harness import TRACE_DEFINE, harness_frames_c, parse_frames
from edgecc.build.host import build_host, run_host
from edgecc.build.qemu import run_on_qemu
from edgecc.codegen import write_files
from edgecc.compile_cache import compile_cached
from edgecc.compiler import Compiled, compile_model
from edgecc.errors import EdgeccError
from edgecc.fileio import work_folder
from edgecc.options import CompileOptions
from edgecc.targets import Target
from edgecc.verify.onnx_float import output_steps, within_one_step
from edgecc.verify.onnx_ref import (ORT, lsb_diffs, onnx_first_mismatch, run_onnxruntime,
                                    session_config)
from edgecc.verify.reference import TFLM, run_reference_frames, run_tflm_frames, seeded_frames
from edgecc.verify.tolerance import count_mismatches


@dataclass
class VerifyResult:
    model: str
    target: str
    bit_exact: bool
    mismatched_bytes: int
    total_bytes: int
    arena_bytes: int
    lower_bound_bytes: int
    weights_bytes: int
    first_bad_layer: str | None = None
    oracle: str = TFLM  # "tflite-micro" | "litert-builtin-ref"
    extra: dict = field(default_factory=dict)
    frames: list[dict] = field(default_factory=list)  # per frame: frame, bit_exact, mismatched_bytes
    first_bad_frame: int | None = None

    @property
    def passed(self) -> bool:
        """Bit-exact, or (an ONNX model) every differing value one step from onnxruntime's and
        downstream of an op onnxruntime computes in float (docs/design.md)."""
        return self.bit_exact or bool(self.extra.get("within_one_step"))

    def as_json(self) -> dict:
        d = dict(model=self.model, target=self.target, bit_exact=self.bit_exact, passed=self.passed,
                 mismatched_bytes=self.mismatched_bytes, arena_bytes=self.arena_bytes,
                 lower_bound_bytes=self.lower_bound_bytes, weights_bytes=self.weights_bytes,
                 first_mismatch_layer=self.first_bad_layer, oracle=self.oracle,
                 frames=self.frames, first_mismatch_frame=self.first_bad_frame)
        d.update(self.extra)
        return d


def _build_and_run(c: Compiled, work: Path, inputs, target: Target, cc: str | None,
                   trace: bool, board=None, info: dict | None = None, profile: bool = False,
                   frames: list | None = None, reset_each: bool = False) -> str:
    """Build the harness (one frame `inputs`, or every frame of `frames`) and run it."""
    src = work / "gen"
    write_files(c.files, src)
    h = work / "harness.c"
    h.write_text(harness_frames_c(c.name, frames or [inputs], len(c.graph.outputs),
                                  run_io=bool(c.plan.external), reset_each=reset_each))
    if target.runner == "host":
        exe = build_host(src, h, work / ("prog_trace" if trace else "prog"), target, cc,
                         [TRACE_DEFINE] if trace else [])
        return run_host(exe)
    # cross build + QEMU run (+ counts into info)
    return run_on_qemu(c, src, h, work, board, target.name, cc, trace, info, profile)


def first_mismatch(c: Compiled, traces: dict[int, bytes], ref: dict[int, np.ndarray]) -> str | None:
    for lw in c.lowered:
        for v in lw.node.outputs:
            idx = int(v[1:]) if v[1:].isdigit() else None
            if idx is None or idx not in traces or idx not in ref:
                continue
            r = ref[idx]
            keep = c.graph.value(v).channels  # a tensor whose dead channels were dropped
            if keep is not None:
                r = np.asarray(r)[..., list(keep)]
            if count_mismatches(traces[idx], r):
                n = lw.node
                return f"op {n.index} {n.op} (tensor {idx} '{c.graph.value(v).label}')"
    return None


def _compare(got: dict[int, bytes], ref: list[np.ndarray], onnx_info: dict | None = None,
             steps: list | None = None) -> tuple[int, int]:
    """(mismatched bytes, total bytes) of one frame's outputs. With `onnx_info` (an ONNX model),
    the values that differ, those one quantization step (`steps`, per output) away and the
    outputs that differ are added up there too."""
    bad = total = 0
    for i, r in enumerate(ref):
        rb = np.ascontiguousarray(r).tobytes()
        total += len(rb)
        if len(got[i]) != len(rb):
            raise EdgeccError(f"output {i}: {len(got[i])} bytes, reference has {len(rb)}")
        if onnx_info is not None and not (steps and steps[i] is None and r.dtype == np.float32):
            nb, nv, one = lsb_diffs(got[i], r, steps[i] if steps else 1.0)
            bad += nb
            if nb:
                onnx_info.setdefault("outputs_differing", []).append(i)
            onnx_info["values_differing"] = onnx_info.get("values_differing", 0) + nv
            onnx_info["values_off_by_one"] = onnx_info.get("values_off_by_one", 0) + one
            continue
        bad += count_mismatches(got[i], r)
    return bad, total


def verify_model(model: str | Path, target: Target, cc: str | None = None, seed: int = 0,
                 name: str = "model", keep: Path | None = None, board=None,
                 profile: bool = False, frames: int = 1,
                 options: CompileOptions | None = None, cache: bool = False) -> VerifyResult:
    """Verify `model` on `target`; `cache`: take the compiled model from the compile cache
    (edgecc.compile_cache) when it holds these inputs, as the CLI does unless --no-cache."""
    if profile and target.runner == "host":
        raise EdgeccError("--profile counts instructions under QEMU: give an Arm --target or --board")
    if frames < 1:
        raise EdgeccError(f"--frames must be at least 1 (got {frames})")
    info: dict = {}
    opts = board_options(options, board)
    c = compile_cached(model, target, name, opts) if cache else \
        compile_model(model, target, name, opts)
    info["compile_seconds"] = round(c.seconds, 3)
    # lower_bound_bytes is the live-bytes lower bound (one meaning everywhere, edgecc/plan);
    # the planned buffers' own peak (scratch and overlaps included) is the planned peak
    info["planned_peak_bytes"] = c.plan.lower_bound
    if c.stats.get("tiling"):
        info["tiling"] = c.stats["tiling"]
    ins = seeded_frames(c.graph, seed, frames)
    n_out = len(c.graph.outputs)
    onnx_model = Path(model).suffix.lower() == ".onnx"
    steps = None
    if onnx_model:  # onnxruntime, CPU provider, default session options (stateless per frame)
        numerics = c.options.onnx_numerics
        ref_outs, oracle = [run_onnxruntime(model, f, (), numerics)[0] for f in ins], ORT
        steps = output_steps(c.graph)
        info["onnx_numerics"] = numerics
        info["onnxruntime_session_config"] = session_config(numerics)  # fused: int8 fusion
    else:
        ref_outs, oracle = run_reference_frames(model, ins, n_out)
    with work_folder(keep, "edgecc-verify-") as work:
        text = _build_and_run(c, work, None, target, cc, trace=False, board=board, info=info,
                              profile=profile, frames=ins)
        got, done = parse_frames(text)
        if not done or len(got) != frames or any(len(o) != n_out for o, _ in got):
            raise EdgeccError(f"{Path(model).name}: the program did not finish normally")
        if frames > 1 and "instructions" in info:
            info["instructions"] //= frames  # the counted pass ran every frame
        per_frame, bad, total, first_frame = [], 0, 0, None
        for k, ((outs, _), ref) in enumerate(zip(got, ref_outs)):
            b, t = _compare(outs, ref, info if onnx_model else None, steps)
            per_frame.append(dict(frame=k, bit_exact=b == 0, mismatched_bytes=b))
            bad, total = bad + b, total + t
            if b and first_frame is None:
                first_frame = k
        first = None
        if bad and onnx_model:
            within_one_step(model, info, c.options.onnx_numerics)
            upto = ins[:first_frame + 1]
            ttext = _build_and_run(c, work, None, target, cc, trace=True, board=board,
                                   frames=upto)
            traces = parse_frames(ttext)[0][first_frame][1]
            first = onnx_first_mismatch(c, traces, model, ins[first_frame])
            if frames > 1 and first:
                first = f"frame {first_frame}: {first}"
        elif bad and oracle != TFLM:
            # The layer trace compares against TFLM's preserved tensors; LiteRT has none here.
            info["first_mismatch_note"] = "no layer trace: it needs TFLite Micro's tensors"
        elif bad:
            upto = ins[:first_frame + 1]
            ref_t = run_tflm_frames(model, upto, n_out, preserve=True,
                                    n_tensors=len(c.imported.values))[first_frame][1]
            ttext = _build_and_run(c, work, None, target, cc, trace=True, board=board,
                                   frames=upto)
            traces = parse_frames(ttext)[0][first_frame][1]
            first = first_mismatch(c, traces, ref_t)
            if frames > 1 and first:
                first = f"frame {first_frame}: {first}"
    return VerifyResult(str(model), target.name, bad == 0, bad, total, c.plan.arena,
                        c.plan.model_lower_bound, c.weights_bytes, first, oracle, extra=info,
                        frames=per_frame, first_bad_frame=first_frame)
