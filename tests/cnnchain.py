"""Random small CNN chains (CONV_2D, DEPTHWISE_CONV_2D, AVERAGE/MAX_POOL_2D) as TFLite models,
and helpers to compile, run and compare them with TFLite Micro under a given plan.

Used by tests/test_streaming.py and tests/test_tiling.py.
"""
from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from edgecc.codegen import render
from edgecc.compiler import Compiled
from edgecc.ops import conv_out_size
from edgecc.targets import get_target
from edgecc.tflite_writer import ModelBuilder
from edgecc.verify import _build_and_run
from edgecc.build.harness import parse_output
from edgecc.verify.reference import run_tflm, seeded_inputs


def chain_model(rng, h: int, w: int, c: int, layers: list[dict], dtype: str = "int8") -> bytes:
    """input [1, h, w, c] -> layers -> output. A layer: op ("conv", "dw", "avg", "max"), k (kh,
    kw), stride (sh, sw), padding (0 SAME, 1 VALID), oc (conv) / mult (dw), dil (dh, dw), act."""
    mb = ModelBuilder()
    scale = float(rng.uniform(0.01, 0.05))
    zp = int(rng.integers(-100, 100))
    x = first = mb.tensor("x", (1, h, w, c), dtype, scale=scale, zero_point=zp)
    for li, L in enumerate(layers):
        kh, kw = L.get("k", (3, 3))
        sh, sw = L.get("stride", (1, 1))
        dh, dw = L.get("dil", (1, 1))
        pad = L.get("padding", 0)
        act = L.get("act", 0)
        op = L["op"]
        if pad == 1 and (h < (kh - 1) * dh + 1 or w < (kw - 1) * dw + 1):
            pad = 0  # VALID would leave no output pixel: SAME always leaves one
        if op in ("avg", "max"):
            oh, ow = conv_out_size(pad, h, kh, sh, 1), conv_out_size(pad, w, kw, sw, 1)
            y = mb.tensor(f"y{li}", (1, oh, ow, c), dtype, scale=scale, zero_point=zp)
            mb.op("AVERAGE_POOL_2D" if op == "avg" else "MAX_POOL_2D", [x], [y],
                  {"padding": pad, "stride_h": sh, "stride_w": sw, "filter_height": kh,
                   "filter_width": kw, "fused_activation_function": act})
        else:
            oc = L.get("oc", c) if op == "conv" else c * L.get("mult", 1)
            ws = rng.uniform(0.002, 0.02, oc)
            taps = kh * kw * (c if op == "conv" else 1)
            # an output scale that spreads the accumulator over about +-60 steps
            out_scale = scale * float(np.mean(ws)) * 5400 * np.sqrt(taps) / 60
            out_zp = int(rng.integers(-20, 20))
            if op == "conv":
                wt = mb.const(f"w{li}", rng.integers(-127, 128, (oc, kh, kw, c)).astype(np.int8),
                              scale=list(ws), zero_point=[0] * oc, axis=0)
            else:
                wt = mb.const(f"w{li}", rng.integers(-127, 128, (1, kh, kw, oc)).astype(np.int8),
                              scale=list(ws), zero_point=[0] * oc, axis=3)
            b = mb.const(f"b{li}", rng.integers(-5000, 5000, (oc,)).astype(np.int32),
                         scale=[scale * s for s in ws], zero_point=[0] * oc)
            oh, ow = conv_out_size(pad, h, kh, sh, dh), conv_out_size(pad, w, kw, sw, dw)
            y = mb.tensor(f"y{li}", (1, oh, ow, oc), dtype, scale=out_scale, zero_point=out_zp)
            opts = {"padding": pad, "stride_h": sh, "stride_w": sw, "dilation_h_factor": dh,
                    "dilation_w_factor": dw, "fused_activation_function": act}
            if op == "dw":
                opts["depth_multiplier"] = L.get("mult", 1)
            mb.op("CONV_2D" if op == "conv" else "DEPTHWISE_CONV_2D", [x, wt, b], [y], opts,
                  version=3)
            c, scale, zp = oc, out_scale, out_zp
        x, h, w = y, oh, ow
    return mb.finish([first], [x])


def random_layers(rng, n: int) -> list[dict]:
    """n random window layers (small, so that the C builds stay fast)."""
    out = []
    for _ in range(n):
        op = str(rng.choice(["conv", "conv", "dw", "dw", "avg", "max"]))
        k = int(rng.choice([1, 2, 3, 3, 5])) if op != "avg" else int(rng.choice([2, 3]))
        L = dict(op=op, k=(k, int(rng.choice([k, max(1, k - 1)]))),
                 stride=(int(rng.choice([1, 1, 2])), int(rng.choice([1, 1, 2]))),
                 padding=int(rng.integers(0, 2)), act=int(rng.choice([0, 1, 3])))
        if op == "conv":
            L["oc"] = int(rng.integers(1, 9))
        if op == "dw":
            L["mult"] = int(rng.choice([1, 1, 2]))
            if rng.random() < 0.2:
                L["dil"] = (2, 2)
        if op in ("avg", "max"):
            L["act"] = 0
        out.append(L)
    return out


def run_compiled(c: Compiled, path: Path, seed: int, cc: str, target: str = "host",
                 trace: bool = False) -> tuple[list[bytes], dict[int, bytes]]:
    """Build and run a Compiled (its files as they are): (outputs, traced tensors)."""
    inputs = seeded_inputs(c.graph, seed)
    with tempfile.TemporaryDirectory() as tmp:
        text = _build_and_run(c, Path(tmp), inputs, get_target(target), cc, trace=trace)
    outs, traces, done = parse_output(text)
    assert done
    return [outs[i] for i in range(len(outs))], traces


def tflm_outputs(path: Path, c: Compiled, seed: int) -> list[bytes]:
    ref, _ = run_tflm(path, seeded_inputs(c.graph, seed), len(c.graph.outputs))
    return [np.ascontiguousarray(r).tobytes() for r in ref]


def tflm_tensors(path: Path, c: Compiled, seed: int) -> dict[int, np.ndarray]:
    _, ref = run_tflm(path, seeded_inputs(c.graph, seed), len(c.graph.outputs), preserve=True,
                      n_tensors=len(c.imported.values))
    return ref


def with_offsets(c: Compiled, offsets: dict[str, int], arena: int,
                 scratch: dict[int, int] | None = None) -> Compiled:
    """The same compiled model rendered with other offsets (for hand-made overlapping plans)."""
    plan = replace(c.plan, offsets=dict(offsets), arena=arena,
                   scratch=dict(c.plan.scratch if scratch is None else scratch))
    return replace(c, plan=plan, files=render(c.graph, c.lowered, plan, c.name))


def overlapped(c: Compiled, shift: int):
    """c rendered with its output `shift` bytes above its input (scratch after both)."""
    (node,) = [lw.node for lw in c.lowered]
    x, y = node.inputs[0], node.outputs[0]
    base = max(0, -shift)
    nx, ny = c.graph.type(x).nbytes, c.graph.type(y).nbytes
    end = -(-max(base + nx, base + shift + ny) // 16) * 16
    scratch = {0: end} if c.plan.scratch else {}
    arena = end + sum(lw.kernel.scratch for lw in c.lowered)
    return with_offsets(c, {x: base, y: base + shift}, arena, scratch), x, y, base
