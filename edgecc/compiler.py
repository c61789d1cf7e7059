"""The pipeline end to end: model file -> IR -> passes -> lowering -> plan -> C files.

Owns: choosing the frontend by file type and chaining the stages; nothing else. Each stage lives
in its own module (frontends/, passes/, lower/, plan/, codegen.py).
"""
from __future__ import annotations

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


def compile_model(path: str | Path, target: Target, name: str) -> Compiled:
    t0 = time.perf_counter()
    imported = load_model(path)
    g, results = optimize(imported)
    lowered = lower_graph(g, target)
    scratch = {g.nodes.index(lw.node): lw.kernel.scratch for lw in lowered if lw.kernel.scratch}
    # The planner may pick another topological order (smaller peak); emit the layers in it.
    g, plan = plan_model(g, scratch, alias_ops(), reference=imported)
    position = {id(n): i for i, n in enumerate(g.nodes)}
    lowered.sort(key=lambda lw: position[id(lw.node)])
    files = render(g, lowered, plan, name)
    return Compiled(imported, g, results, lowered, plan, files, name,
                    seconds=time.perf_counter() - t0)
