"""The pipeline end to end: model file -> IR -> passes -> lowering -> plan -> C files.

Owns: choosing the frontend by file type and chaining the stages; nothing else. Each stage lives
in its own module (frontends/, passes/, lower/, plan/, codegen.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgecc.codegen import render
from edgecc.errors import EdgeccError, UnsupportedModel
from edgecc.frontends.tflite import check_ops, read_tflite
from edgecc.ir import Graph
from edgecc.numerics.io import rounding_of
from edgecc.lower import Lowered, alias_ops, lower_graph, prefer_streaming
from edgecc.options import CompileOptions
from edgecc.passes import PassResult, optimize
from edgecc.plan import Plan, model_lower_bound, plan_model
from edgecc.plan.liveness import buffers_for
from edgecc.plan.state import add_state_region
from edgecc.plan.tiling import apply_tiling, choose
from edgecc.targets import Target
from edgecc.validate import validate_graph
from edgecc.validate.limits import MAX_ARENA_BYTES, check_model_file


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
    weights_section: str | None = None  # linker section of every constant array (--weights-section)
    options: CompileOptions = field(default_factory=CompileOptions)  # what it was compiled with

    @property
    def weights_bytes(self) -> int:
        """Bytes of constant data, each distinct array once (as codegen emits them)."""
        seen = {(a.dtype.str, a.size, a.tobytes()): int(a.nbytes) for lw in self.lowered
                for a in map(np.asarray, lw.kernel.consts.values())}
        return sum(seen.values())


def load_model(path: str | Path, options: CompileOptions | None = None) -> Graph:
    """The model as imported and validated; `options` carries what the importers need (the
    ONNX numerics and the onnxruntime thread count its float groups follow)."""
    options = (options or CompileOptions()).check()
    path = Path(path)
    check_model_file(path)  # a regular file under the size limit, before anything reads it
    if path.suffix.lower() == ".onnx":
        # the onnx package takes ~2 s to import: loaded only for an ONNX model
        from edgecc.frontends.onnx import load_onnx
        g = load_onnx(path, options.onnx_numerics, options.ort_threads)
        validate_graph(g)  # the same checks on what the ONNX frontend built
        return g
    g = read_tflite(path)
    validate_graph(g)  # edgecc/validate: before any op's code looks at the graph
    return check_ops(g, path)


def scratch_budget(g: Graph) -> dict[int, int]:
    """Bytes at each step that the activations' own peak leaves dead (kernel scratch can go there
    without growing the arena)."""
    bufs = buffers_for(g, {}, alias_ops())
    live = [sum(b.size for b in bufs if b.first <= i <= b.last) for i in range(len(g.nodes))]
    peak = max(live, default=0)
    return {i: peak - x for i, x in enumerate(live)}




MEMORY_FIRST_GAIN = 0.05  # portable streaming kernels must shrink the arena by 5% (or fit)


def _plan(g: Graph, lowered: list[Lowered], imported: Graph,
          external_io: bool = False) -> tuple[Graph, list[Lowered], Plan]:
    pos = {id(n): i for i, n in enumerate(g.nodes)}
    sizes = {pos[id(lw.node)]: lw.kernel.scratch for lw in lowered if lw.kernel.scratch}
    streams = {pos[id(lw.node)]: lw.kernel.streams for lw in lowered if lw.kernel.streams}
    # The planner may pick another topological order (smaller peak); emit the layers in it.
    g, plan = plan_model(g, sizes, alias_ops(), reference=imported, streams=streams,
                         external_io=external_io)
    add_state_region(g, plan)
    position = {id(n): i for i, n in enumerate(g.nodes)}
    lowered = sorted(lowered, key=lambda lw: position[id(lw.node)])
    return g, lowered, plan


def _lower_and_plan(g: Graph, target: Target, scratch: str, imported: Graph,
                    memory_first: bool = False, budget: int | None = None,
                    external_io: bool = False) -> tuple[Graph, list[Lowered], Plan]:
    """Kernels and plan of g. memory_first: also try portable kernels where their streaming is
    what lowers the peak (edgecc/lower prefer_streaming), kept when they shrink the arena by
    MEMORY_FIRST_GAIN or make it fit `budget` (they are slower than the optimized ones)."""
    for n in g.nodes:  # options can make a window op's output empty once the passes re-infer it
        for v in n.outputs:
            if v is not None and any(d <= 0 for d in g.type(v).shape):
                raise UnsupportedModel(f"{imported.name}: op {n.index} ({n.op}) computes a tensor "
                                       f"with no elements (shape {list(g.type(v).shape)})")
    lowered = lower_graph(g, target, scratch_budget(g) if scratch == "fit" else None)
    best = _plan(g, lowered, imported, external_io)
    if memory_first:
        swapped = prefer_streaming(g, lowered, target, alias_ops())
        if any(a is not b for a, b in zip(swapped, lowered)):
            alt = _plan(g, swapped, imported, external_io)
            arena = best[2].arena
            if alt[2].arena < (1 - MEMORY_FIRST_GAIN) * arena or (
                    budget is not None and arena > budget >= alt[2].arena):
                best = alt
    return best


def _tile(g: Graph, lowered: list[Lowered], plan: Plan, target: Target, scratch: str,
          imported: Graph, budget: int | None, external_io: bool = False):
    """The tiled (graph, kernels, plan, TilePlan) that beats `plan` (and fits `budget` when one
    is given, if any does), or None: the best candidates of plan/tiling.py, planned for real."""
    pos = {id(n): i for i, n in enumerate(g.nodes)}
    traits = {pos[id(lw.node)]: (lw.kernel.streams, lw.kernel.scratch) for lw in lowered}
    best = None
    for tp in choose(g, traits, alias_ops(), budget):
        gt, low, pl = _lower_and_plan(apply_tiling(g, tp.stage), target, scratch, imported,
                                      memory_first=True, budget=budget,
                                      external_io=external_io)
        if pl.arena < (best[2].arena if best else plan.arena):
            best = (gt, low, pl, tp)
        if best and (budget is None or best[2].arena <= budget):
            break
    return best


def compile_model(path: str | Path, target: Target, name: str,
                  options: CompileOptions | None = None) -> Compiled:
    """The model compiled for target with `options` (edgecc/options.py): options.scratch="fit":
    optimized kernels only where their scratch fits in bytes dead at their step (the arena stays
    at the activations' peak); "any": always the fastest kernel, arena may grow.
    options.tiling="auto": patch-based execution of the memory-heavy first stage where it pays
    (edgecc/plan/tiling.py); "off": never; None: only when the arena would exceed
    options.ram_budget (the bytes a board has for it). options.io="external": the graph's
    inputs and outputs live in caller buffers (NAME_run_io), not in the arena."""
    t0 = time.perf_counter()
    options = (options or CompileOptions()).check()
    scratch, tiling, ram_budget = options.scratch, options.tiling, options.ram_budget
    weights_section = options.weights_section
    ext = options.io == "external"
    imported = load_model(path, options)
    g0, results = optimize(imported)
    g, lowered, plan = _lower_and_plan(g0, target, scratch, imported, external_io=ext)
    stats: dict = {}
    if tiling == "auto" or (tiling is None and ram_budget is not None and plan.arena > ram_budget):
        # memory first: streaming kernels where they set the peak, then tiling where it pays
        g, lowered, plan = _lower_and_plan(g0, target, scratch, imported, memory_first=True,
                                           budget=ram_budget, external_io=ext)
        fits = tiling is None and plan.arena <= ram_budget
        tiled = None if fits else _tile(g0, lowered, plan, target, scratch, imported, ram_budget,
                                        ext)
        if tiled is not None:
            untiled = plan.arena
            g, lowered, plan, tp = tiled
            # of the graph before tiling (+ the state region, as in every bound)
            plan.graph_lower_bound = model_lower_bound(g0) + plan.state_bytes
            plan.techniques.append(tp.describe())
            stats["tiling"] = dict(tp.as_json(), arena=plan.arena, untiled_arena=untiled)
        swapped = sum("cannot stream" in lw.kernel.reason for lw in lowered)
        if swapped:
            plan.techniques.append(f"portable streaming kernels ({swapped} ops)")
    if plan.arena > MAX_ARENA_BYTES:  # activations were checked; kernel scratch can add more
        raise UnsupportedModel(f"{imported.name}: the arena would be {plan.arena:,} bytes, over "
                               f"edgecc's limit of {MAX_ARENA_BYTES:,} (int32 offsets)")
    files = render(g, lowered, plan, name, weights_section, rounding_of(path))
    return Compiled(imported, g, results, lowered, plan, files, name,
                    seconds=time.perf_counter() - t0, stats=stats,
                    weights_section=weights_section, options=options)
