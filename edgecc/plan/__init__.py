"""Memory planning: every activation and every kernel's scratch gets an offset in ONE arena.

Owns: the `Plan` record and the two entry points. `plan_arena` plans a graph in its own node
order; `plan_model` first picks the operator order with the smallest peak (order.py), applies it to
the graph, and plans that. The parts:

- liveness.py: alias groups (reshape-like ops share their input's storage), in-place merges
  (elementwise ops that declare `OpDef.inplace` write over an input that dies at that node),
  streaming pairs, lifetimes, and the lower bounds (the issue's model-order LB and the peak of
  the planned buffers);
- stream.py: window ops whose kernel declares its pass order (`Kernel.streams`) put their output
  partly over the input they consume, shifted by a bound computed from the geometry;
- tiling.py: patch-based execution of the memory-heavy first stages (a graph transformation run
  before lowering, opt-in: `--tiling auto`);
- place.py: offsets: several strategies, the best kept, exact search for small buffer sets;
- order.py: the topological order with the smallest peak (DP over down-sets, beam beyond);
- check.py: the checkers that prove no two live buffers overlap (run on every plan);
- state.py: the state region (variable tensors, kept across runs), after everything planned.

What `edgecc plan` and `edgecc report` show of a plan (table, JSON, SVG) is app code:
edgecc/plan_view.py.

One "lower bound" is reported everywhere (compile, verify, plan, report, the manifest, every
--json: `lower_bound_bytes`): `model_lower_bound`, the live-bytes lower bound, the peak of the
bytes alive at once in the model's own order (as imported, before passes), every non-constant
tensor its own bytes, no scratch: what arena / lower bound measures the planner against, below 1
when passes, aliasing, in-place, streaming or reordering win bytes no placement alone could.
`graph_lower_bound` is the same measure on the graph after the passes. The field `lower_bound`
is shown as the "planned peak" (`planned_peak_bytes`): the peak of the buffers actually placed
(chosen order, aliasing, in-place, scratch); no placement of them can be smaller, so arena ==
planned peak means the placement is optimal.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from edgecc.errors import EdgeccError
from edgecc.ir import Graph
from edgecc.plan.check import PlanError, check_buffers, check_graph_plan
from edgecc.plan.liveness import (Buffer, buffers_for, inplace_pairs, lower_bound,
                                  model_lower_bound, static_groups)
from edgecc.plan.order import apply_order, best_order
from edgecc.plan.place import place

ALIGN = 16

__all__ = ["ALIGN", "Buffer", "Plan", "PlanError", "check_plan", "plan_arena", "plan_model",
           "lower_bound", "model_lower_bound", "buffers_for"]


@dataclass
class Plan:
    buffers: list[Buffer]
    arena: int
    lower_bound: int
    offsets: dict[str, int]  # value name -> byte offset in the arena
    scratch: dict[int, int]  # node index (in the planned graph's order) -> scratch offset
    model_lower_bound: int = 0   # the LB (model order, no aliasing, no scratch)
    graph_lower_bound: int = 0   # the same LB of the planned graph before reordering (after passes)
    strategy: str = ""           # placement strategy that won
    order: list[int] = field(default_factory=list)  # planned order, as positions in the input
    order_exact: bool = True     # the order's peak is proven minimal
    inplace: list[tuple[str, str]] = field(default_factory=list)  # (output, input) in place
    techniques: list[str] = field(default_factory=list)
    # streaming pairs placed overlapping: (output, input, shift = offset(out) - offset(in), d_max)
    streaming: list[tuple[str, str, int, int]] = field(default_factory=list)
    state: list[str] = field(default_factory=list)  # variable tensors in the state region
    # --io external: value -> ("in" | "out", index) of the caller buffer that holds its bytes
    external: dict[str, tuple[str, int]] = field(default_factory=dict)
    state_bytes: int = 0  # the state region's size (at the arena's start, in every bound)


def check_plan(bufs: list[Buffer], arena: int) -> None:
    """Prove the plan: every buffer inside the arena, aligned, and no live pair overlapping."""
    check_buffers(bufs, arena)


def _streaming(bufs: list[Buffer]) -> list[tuple[str, str, int, int]]:
    by_name = {b.name: b for b in bufs}
    out = []
    for b in bufs:
        for x, d in b.shifts.items():
            a = by_name[x]
            if a.offset < b.offset + b.size and b.offset < a.offset + a.size:
                out.append((b.values[0], a.values[0], b.offset - a.offset, d))
    return out


def external_values(g: Graph, alias_ops: set[str]) -> dict[str, tuple[str, int]]:
    """--io external: every value stored in a graph input's or output's bytes (its alias group),
    mapped to that caller buffer. A group holding two of them (an output that is an input's or
    another output's bytes) would need a copy: refused."""
    sg = static_groups(g, alias_ops)
    out: dict[str, tuple[str, int]] = {}
    owner: dict[str, tuple[str, int]] = {}
    for kind, vals in (("in", g.inputs), ("out", g.outputs)):
        for k, v in enumerate(vals):
            r = sg.root.get(v, v)
            if r in owner:
                raise EdgeccError(f"--io external: graph {kind}put {k} ({v}) shares its bytes "
                                  f"with graph {owner[r][0]}put {owner[r][1]}; compile without "
                                  f"--io external")
            owner[r] = (kind, k)
            for m in sg.members.get(r, [v]):
                out[m] = (kind, k)
    return out


def _plan_once(g: Graph, scratch_sizes: dict[int, int], alias_ops: set[str], inplace: bool,
               align: int, exact: bool, streams: dict[int, tuple] | None,
               external_io: bool = False) -> Plan:
    ext = external_values(g, alias_ops) if external_io else {}
    bufs = buffers_for(g, scratch_sizes, alias_ops, inplace=inplace, align=align,
                       streams=streams, external=frozenset(ext))
    arena, strategy = place(bufs, exact=exact)
    check_buffers(bufs, arena)
    offsets = {v: b.offset for b in bufs for v in b.values}
    scratch = {int(b.name.split(":")[1]): b.offset for b in bufs if b.name.startswith("scratch:")}
    check_graph_plan(g, offsets, scratch, scratch_sizes, arena, alias_ops, streams,
                     external=frozenset(ext))
    return Plan(bufs, max(arena, 1), lower_bound(bufs), offsets, scratch, strategy=strategy,
                order=list(range(len(g.nodes))),
                inplace=inplace_pairs(bufs, g, alias_ops) if inplace else [],
                streaming=_streaming(bufs), external=ext)


def plan_arena(g: Graph, scratch_sizes: dict[int, int], alias_ops: set[str],
               inplace: bool = True, align: int = ALIGN, exact: bool = True,
               streams: dict[int, tuple] | None = None, external_io: bool = False) -> Plan:
    """Plan `g` in its own node order (scratch_sizes: node position -> bytes; streams: node
    position -> the kernel's declared pass order, Kernel.streams; external_io: the graph's
    inputs and outputs live in caller buffers, not in the arena)."""
    # In-place merges never raise the peak but constrain placement, so both are tried; on a tie
    # the in-place plan wins (every test of a flagged op then runs its kernel in place).
    plan = _plan_once(g, scratch_sizes, alias_ops, False, align, exact, streams, external_io)
    if inplace:
        with_inplace = _plan_once(g, scratch_sizes, alias_ops, True, align, exact, streams,
                                  external_io)
        if with_inplace.arena <= plan.arena:
            plan = with_inplace
    plan.model_lower_bound = plan.graph_lower_bound = model_lower_bound(g)
    plan.techniques = _techniques(g, plan, alias_ops, reordered=False)
    return plan


def plan_model(g: Graph, scratch_sizes: dict[int, int], alias_ops: set[str],
               reorder: bool = True, inplace: bool = True, align: int = ALIGN,
               exact: bool = True, reference: Graph | None = None,
               streams: dict[int, tuple] | None = None,
               external_io: bool = False) -> tuple[Graph, Plan]:
    """Choose the node order with the smallest peak, apply it, plan it: (graph to emit, plan).

    The returned graph holds the same Node objects in the chosen order; `plan.scratch` is keyed by
    positions in that graph, `plan.order` maps them back to positions in `g`. The model's own order
    is kept unless another order gives a strictly smaller arena. `reference` is the model as
    imported (before passes): its LB is the `model_lower_bound` reported (default: g's)."""
    best = plan_arena(g, scratch_sizes, alias_ops, inplace, align, exact, streams, external_io)
    out = g
    if reorder and len(g.nodes) > 1:
        order, _, exact_order = best_order(g, scratch_sizes, alias_ops, inplace, streams=streams)
        best.order_exact = exact_order
        if order != list(range(len(g.nodes))):
            g2 = apply_order(g, order)
            pos = {old: new for new, old in enumerate(order)}
            cand = plan_arena(g2, {pos[i]: s for i, s in scratch_sizes.items()}, alias_ops,
                              inplace, align, exact,
                              {pos[i]: d for i, d in (streams or {}).items()}, external_io)
            if cand.arena < best.arena:
                cand.order, cand.order_exact = order, exact_order
                best, out = cand, g2
    best.graph_lower_bound = model_lower_bound(g)
    best.model_lower_bound = (best.graph_lower_bound if reference is None
                              else model_lower_bound(reference))
    best.techniques = _techniques(out, best, alias_ops, reordered=out is not g)
    return out, best


def _techniques(g: Graph, plan: Plan, alias_ops: set[str], reordered: bool) -> list[str]:
    used = [f"placement: {plan.strategy}"]
    if any(n.op in alias_ops and n.outputs and plan.offsets.get(n.outputs[0]) is not None
           and n.inputs and plan.offsets.get(n.outputs[0]) == plan.offsets.get(n.inputs[0])
           for n in g.nodes):
        used.append("reshape aliasing")
    if plan.inplace:
        used.append(f"in-place ({len(plan.inplace)} ops)")
    if plan.streaming:
        used.append(f"streaming overlap ({len(plan.streaming)} ops)")
    if reordered:
        used.append("operator reordering")
    return used
