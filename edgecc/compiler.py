"""The pipeline end to end: model file -> IR -> passes -> lowering -> plan -> C files.

Owns: choosing the frontend by file type and chaining the stages; nothing else. Each stage lives
in its own module (frontends/, passes/, lower/, plan/, codegen.py).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from edgecc.codegen import render
from edgecc.errors import EdgeccError
from edgecc.ir import Graph
from edgecc.lower import Lowered, alias_ops, lower_graph
from edgecc.passes import PassResult, optimize
from edgecc.plan import Plan, plan_model
from edgecc.targets import Target


@dataclass
class Compiled:
    imported: Graph
    graph: Graph
    passes: list[PassResult]
    lowered: list[Lowered]
    plan: Plan
    files: dict[str, str]
    name: str
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)

    @property
    def weights_bytes(self) -> int:
        return sum(int(a.nbytes) for lw in self.lowered for a in lw.kernel.consts.values())


def load_model(path: str | Path) -> Graph:
    path = Path(path)
    if not path.exists():
        raise EdgeccError(f"{path}: no such file")
    if path.suffix.lower() == ".onnx":
        raise EdgeccError(f"{path}: ONNX import is not implemented yet")
    from edgecc.frontends.tflite import load_tflite
    return load_tflite(path)


def scratch_budget(g: Graph) -> dict[int, int]:
    """Bytes at each step that the activations' own peak leaves dead (kernel scratch can go there
    without growing the arena)."""
    from edgecc.plan.liveness import buffers_for
    bufs = buffers_for(g, {}, alias_ops())
    live = [sum(b.size for b in bufs if b.first <= i <= b.last) for i in range(len(g.nodes))]
    peak = max(live, default=0)
    return {i: peak - x for i, x in enumerate(live)}


SCRATCH_POLICIES = ("fit", "any")


def compile_model(path: str | Path, target: Target, name: str, scratch: str | None = None
                  ) -> Compiled:
    """scratch="fit": optimized kernels only where their scratch fits in bytes dead at their step
    (the arena stays at the activations' peak); "any": always the fastest kernel, arena may grow."""
    t0 = time.perf_counter()
    scratch = scratch or os.environ.get("EDGECC_SCRATCH", "any")
    if scratch not in SCRATCH_POLICIES:
        raise EdgeccError(f"unknown scratch policy {scratch!r} (known: {', '.join(SCRATCH_POLICIES)})")
    imported = load_model(path)
    g, results = optimize(imported)
    lowered = lower_graph(g, target, scratch_budget(g) if scratch == "fit" else None)
    scratch = {g.nodes.index(lw.node): lw.kernel.scratch for lw in lowered if lw.kernel.scratch}
    streams = {g.nodes.index(lw.node): lw.kernel.streams for lw in lowered if lw.kernel.streams}
    # The planner may pick another topological order (smaller peak); emit the layers in it.
    g, plan = plan_model(g, scratch, alias_ops(), reference=imported, streams=streams)
    position = {id(n): i for i, n in enumerate(g.nodes)}
    lowered.sort(key=lambda lw: position[id(lw.node)])
    files = render(g, lowered, plan, name)
    return Compiled(imported, g, results, lowered, plan, files, name,
                    seconds=time.perf_counter() - t0)
