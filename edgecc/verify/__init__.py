"""`edgecc verify`: build the generated C, run it, compare every output byte with the reference.

Owns: the verify flow (compile -> harness -> build -> run -> compare) and, on a mismatch, the
trace build that names the first layer whose output differs from TFLite Micro's tensor. The oracle
is TFLite Micro, or LiteRT BUILTIN_REF when TFLM cannot run the model (edgecc.verify.reference).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgecc.codegen import write_files
from edgecc.compiler import Compiled, compile_model
from edgecc.errors import EdgeccError
from edgecc.targets import Target
from edgecc.verify.harness import TRACE_DEFINE, harness_c, parse_output
from edgecc.verify.reference import TFLM, run_reference, run_tflm, seeded_inputs


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

    def as_json(self) -> dict:
        d = dict(model=self.model, target=self.target, bit_exact=self.bit_exact,
                 mismatched_bytes=self.mismatched_bytes, arena_bytes=self.arena_bytes,
                 lower_bound_bytes=self.lower_bound_bytes, weights_bytes=self.weights_bytes,
                 first_mismatch_layer=self.first_bad_layer, oracle=self.oracle)
        d.update(self.extra)
        return d


def _build_and_run(c: Compiled, work: Path, inputs, target: Target, cc: str | None,
                   trace: bool, board=None, info: dict | None = None, profile: bool = False,
                   samples: list | None = None) -> str:
    from edgecc.verify.host import build_host, run_host
    src = work / "gen"
    write_files(c.files, src)
    h = work / "harness.c"
    h.write_text(harness_c(c.name, inputs, len(c.graph.outputs), run_io=bool(c.plan.external),
                           samples=samples))
    if target.runner == "host":
        exe = build_host(src, h, work / ("prog_trace" if trace else "prog"), target, cc,
                         [TRACE_DEFINE] if trace else [])
        return run_host(exe)
    from edgecc.verify.qemu import run_on_qemu  # cross build + QEMU run (+ counts into info)
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
            if traces[idx] != np.ascontiguousarray(r).tobytes():
                n = lw.node
                return f"op {n.index} {n.op} (tensor {idx} '{c.graph.value(v).label}')"
    return None


def verify_model(model: str | Path, target: Target, cc: str | None = None, seed: int = 0,
                 name: str = "model", keep: Path | None = None, board=None,
                 profile: bool = False, io: str = "arena",
                 weights_section: str | None = None) -> VerifyResult:
    if profile and target.runner == "host":
        raise EdgeccError("--profile counts instructions under QEMU: give an Arm --target or --board")
    info: dict = {}
    from edgecc.budget import arena_room
    c = compile_model(model, target, name,
                      ram_budget=arena_room(board) if board is not None else None, io=io,
                      weights_section=weights_section)
    if c.stats.get("tiling"):
        info["tiling"] = c.stats["tiling"]
    inputs = seeded_inputs(c.graph, seed)
    ref_outs, oracle = run_reference(model, inputs, len(c.graph.outputs))
    with tempfile.TemporaryDirectory(prefix="edgecc-verify-") as tmp:
        work = Path(keep) if keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        text = _build_and_run(c, work, inputs, target, cc, trace=False, board=board, info=info,
                              profile=profile)
        outs, _, done = parse_output(text)
        if not done or len(outs) != len(ref_outs):
            raise EdgeccError(f"{Path(model).name}: the program did not finish normally")
        bad = total = 0
        for i, r in enumerate(ref_outs):
            rb = np.ascontiguousarray(r).tobytes()
            got = outs[i]
            total += len(rb)
            if len(got) != len(rb):
                raise EdgeccError(f"output {i}: {len(got)} bytes, reference has {len(rb)}")
            bad += sum(a != b for a, b in zip(got, rb))
        first = None
        if bad and oracle != TFLM:
            # The layer trace compares against TFLM's preserved tensors; LiteRT has none here.
            info["first_mismatch_note"] = "no layer trace: it needs TFLite Micro's tensors"
        elif bad:
            _, ref_t = run_tflm(model, inputs, len(c.graph.outputs), preserve=True,
                                n_tensors=len(c.imported.values))
            ttext = _build_and_run(c, work, inputs, target, cc, trace=True, board=board)
            _, traces, _ = parse_output(ttext)
            first = first_mismatch(c, traces, ref_t)
    return VerifyResult(str(model), target.name, bad == 0, bad, total, c.plan.arena,
                        c.plan.lower_bound, c.weights_bytes, first, oracle, extra=info)
