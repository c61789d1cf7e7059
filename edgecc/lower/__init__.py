"""Lowering: pick a kernel for every node that executes, for one target.

Owns: asking the chooser (edgecc/lower/choose.py: the per-ISA kernel tables
edgecc/lower/<isa>/table.py in the target's order, then the op's portable kernel) for each
node's kernel, resolving its template along the target's ISA search path (a portable kernel's
runtime headers: edgecc/lower/portable.py), recording which variant was chosen, why, and why
every other candidate was refused; the `--scratch fit` fallback to the
portable kernel, and memory first (`prefer_streaming`): portable streaming kernels where
they lower the peak. Alias ops (reshape-like) produce no kernel.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from edgecc.errors import EdgeccError, InternalError
from edgecc.ir import Graph, Node
from edgecc.lower.choose import choose
from edgecc.lower.portable import headers_for
from edgecc.ops import Kernel, all_ops, get_op
from edgecc.lower.table import ONNX_PORTABLE  # noqa: F401 (the reason inspect shows)
from edgecc.plan.liveness import buffers_for, lower_bound, stream_savings
from edgecc.plan.stream import STREAM_OPS
from edgecc.numerics.fixed_point import ScaleRangeError
from edgecc.resources import data_dir
from edgecc.targets import Target


@dataclass
class Lowered:
    node: Node
    kernel: Kernel
    template_path: str  # relative to templates/, e.g. "c/fully_connected.c.j2"
    refused: list[tuple[str, str]] = field(default_factory=list)  # (candidate, why not)


def resolve_template(target: Target, template: str) -> str:
    """An optimized kernel names its template by path ("dsp/conv_2d_6px.c.j2": one per ISA and
    variant); a portable one by file name, searched along the target's ISA path."""
    root = data_dir("templates")
    if "/" in template:
        if (root / template).is_file():
            return template
        raise FileNotFoundError(f"no template {template}")
    for isa in target.isa_path:
        if (root / isa / template).is_file():
            return f"{isa}/{template}"
    raise FileNotFoundError(f"no template {template} for target {target.name}")


def lower_node(g: Graph, n: Node, target: Target) -> Lowered:
    try:
        choice = choose(g, n, target)
        k = choice.kernel
        path = resolve_template(target, k.template)
    except ScaleRangeError as e:
        raise ScaleRangeError(f"{e} at op {n.index} ({n.op})") from None
    except EdgeccError:
        raise
    except Exception as e:  # a bug, but the user still gets one line naming the layer
        raise InternalError(f"lowering for {target.name}: {type(e).__name__}: {e}",
                            n.index, n.op) from e
    if not k.headers:
        k = replace(k, headers=headers_for(path, k.params))
    return Lowered(n, k, path, choice.refused)


def lower_graph(g: Graph, target: Target, scratch_budget: dict[int, int] | None = None
                ) -> list[Lowered]:
    """One kernel per executing node. With `scratch_budget` (node position -> bytes dead at that
    step), an optimized kernel whose scratch would not fit there (with what its streaming
    overlap frees, stream_saving) gives way to the portable kernel of the same op: speed never
    costs RAM beyond the activations' own peak."""
    portable = replace(target, isa_path=("c",), features=frozenset())
    out = []
    for i, n in enumerate(g.nodes):
        if get_op(n.op).alias:
            continue
        free = None if scratch_budget is None else scratch_budget.get(i, 0)
        lw = lower_node(g, n, replace(target, scratch_budget=free))
        if free is not None and lw.kernel.streams:  # its output may overlap its input
            free += stream_saving(g, i, lw.kernel.streams)
        if free is not None and lw.kernel.scratch > free and not lw.template_path.startswith("c/"):
            alt = lower_node(g, n, replace(portable, scratch_budget=free))
            if alt.kernel.scratch < lw.kernel.scratch:
                alt.kernel.reason = (f"{lw.kernel.variant} needs {lw.kernel.scratch} B scratch, "
                                     f"{free} B are dead at this step: portable kernel")
                alt.refused = lw.refused + [(lw.kernel.variant, alt.kernel.reason)]
                lw = alt
        out.append(lw)
    return out


def stream_saving(g: Graph, i: int, streams) -> int:
    """Bytes the streaming declaration of node i's kernel frees at its step (0 when its input
    lives on or the pair cannot overlap): scratch fits there without growing the peak."""
    return stream_savings(buffers_for(g, {}, alias_ops(), streams={i: streams})).get(i, 0)


def alias_ops() -> set[str]:
    return {name for name, op in all_ops().items() if op.alias}


def prefer_streaming(g: Graph, lowered: list, target, alias_ops: set[str]) -> list:
    """Memory first: where an optimized window kernel cannot stream but the portable kernel of
    the same node can, and its step holds more bytes than the peak every such node reaches when
    streaming (so this step would set the arena), take the portable kernel. `lowered` (one
    edgecc.lower.Lowered per executing node, in g's order) is returned with those swapped."""
    portable = replace(target, isa_path=("c",), features=frozenset())
    pos = {id(n): i for i, n in enumerate(g.nodes)}
    alts = {}
    for k, lw in enumerate(lowered):
        if lw.kernel.streams or lw.node.op not in STREAM_OPS or lw.template_path.startswith("c/"):
            continue
        alt = lower_node(g, lw.node, portable)
        if alt.kernel.streams:
            alts[k] = alt
    if not alts:
        return lowered
    best = [alts.get(k, lw) for k, lw in enumerate(lowered)]
    sizes = {pos[id(lw.node)]: lw.kernel.scratch for lw in best if lw.kernel.scratch}
    streams = {pos[id(lw.node)]: lw.kernel.streams for lw in best if lw.kernel.streams}
    peak = lower_bound(buffers_for(g, sizes, alias_ops, streams=streams))
    plain = buffers_for(g, {}, alias_ops)
    out = list(lowered)
    for k, alt in alts.items():
        step = pos[id(lowered[k].node)]
        live = sum(b.size for b in plain if b.first <= step <= b.last) + lowered[k].kernel.scratch
        if live > peak:
            alt.kernel.reason = (f"{lowered[k].kernel.variant} cannot stream; the portable kernel "
                                 f"writes over its input, {live} B -> peak {peak} B at this step")
            out[k] = alt
    return out
