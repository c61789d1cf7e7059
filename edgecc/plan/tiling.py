"""Patch-based (tiled) execution of the memory-heavy first stages of a CNN (as in MCUNetV2).

Owns: which chains of window ops can run on patches, the receptive-field box of every patch
through such a stage, the graph transformation, the cost of a (stage, grid) pair, and the choice.

Transformation. A stage is a chain of window ops (CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D,
MAX_POOL_2D; each intermediate read only by the next op). Its output is cut into an R x C grid of
patches. For each patch, in raster order: EDGECC_PATCH_READ copies the box of the stage input
that the patch depends on (its receptive field, clipped to the image) into a small tensor; every
stage op is cloned with the patch's shapes and explicit padding: the op's own padding where the
patch touches the image border, none inside (the halo rows and columns come from the neighbours'
pixels instead); EDGECC_PATCH_WRITE stores the patch's output box into the full stage output,
which the planner keeps as one buffer through all patches (an in-place chain). Each clone output
pixel reads exactly the input pixels (and skips exactly the padded taps) the whole-tensor op
does, with the same arithmetic, so the result is bit-exact; the clones share the weights (codegen
emits identical constant arrays once). The price is the halo: pixels next to a patch border are
computed by both neighbours (`extra_macs`).

Why it saves RAM: the intermediate tensors of the stage exist only patch-sized; only the stage
input and output exist whole, with one patch's buffers beside them.

Cost and choice. For a (stage, grid), the peak is estimated from the buffers: outside the stage,
the untiled plan's per-step live bytes (streaming overlaps counted); during it, what lives across
the stage + the stage input + the stage output + the largest step of one patch's chain (its two
buffers, less a streaming overlap, plus the kernel's scratch). `choose` keeps the stages that
contain the untiled peak step; `rank` orders them: with a RAM budget, the fewest extra MACs among
those that fit it; without one, the smallest peak / untiled peak + extra MACs / model MACs (RAM
and compute traded share for share). The compiler then plans the best candidates for
real and keeps tiling only when the arena shrinks (and, with a budget, fits it).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from edgecc.ir import Graph, Node, TensorType, Value
from edgecc.plan.liveness import buffers_for, stream_savings
from edgecc.plan.stream import Geometry, aligned, d_max, geometry, saving

MAX_STAGE = 10       # ops in one stage
MAX_GRID = 6         # patches along one axis
ALIGN = 16

Box = tuple[int, int, int, int]  # (y0, y1, x0, x1)


@dataclass(frozen=True)
class Stage:
    first: int  # position of the first op in g.nodes
    last: int   # position of the last op (inclusive); the ops in between form a chain
    rows: int   # grid over the stage output
    cols: int


@dataclass
class TilePlan:
    stage: Stage
    peak: int         # estimated arena peak of the tiled graph
    macs: int         # MACs of the stage's ops on whole tensors
    extra_macs: int   # MACs the halos add
    copied: int       # bytes the patch reads and writes move
    ops: tuple[str, ...] = ()

    @property
    def patches(self) -> int:
        return self.stage.rows * self.stage.cols

    def describe(self) -> str:
        s = self.stage
        pct = 100.0 * self.extra_macs / max(self.macs, 1)
        return (f"tiling: ops {s.first}-{s.last} ({len(self.ops)} layers) on "
                f"{s.rows}x{s.cols} patches, +{self.extra_macs} MACs ({pct:.1f}%)")

    def as_json(self) -> dict:
        s = self.stage
        return dict(first=s.first, last=s.last, rows=s.rows, cols=s.cols, ops=list(self.ops),
                    patches=self.patches, estimated_peak=self.peak, macs=self.macs,
                    extra_macs=self.extra_macs, copied_bytes=self.copied)


# ---- stages and patch boxes -----------------------------------------------------------------

def _tileable(g: Graph, n: Node) -> Geometry | None:
    geo = geometry(g, n)
    if geo is None or len(n.outputs) != 1:
        return None
    if any(v is not None and not g.value(v).is_const for v in n.inputs[1:]):
        return None
    return geo


def stage_ok(g: Graph, first: int, last: int) -> bool:
    """Nodes first..last form a chain of window ops whose intermediates nobody else reads."""
    if not 0 <= first <= last < len(g.nodes):
        return False
    cons = g.consumers()
    for i in range(first, last + 1):
        n = g.nodes[i]
        if _tileable(g, n) is None or g.value(n.inputs[0]).is_const:
            return False
        if i < last:
            o = n.outputs[0]
            if o in g.outputs or [id(c) for c in cons.get(o, [])] != [id(g.nodes[i + 1])] \
                    or g.nodes[i + 1].inputs[0] != o:
                return False
    return True


def splits(size: int, parts: int) -> list[tuple[int, int]]:
    """[a, b) ranges cutting `size` into `parts` nearly equal pieces."""
    cuts = [size * k // parts for k in range(parts + 1)]
    return [(cuts[k], cuts[k + 1]) for k in range(parts)]


def _back(a: int, b: int, stride: int, pad: int, k: int, dil: int, size: int
          ) -> tuple[int, int, int, int] | None:
    """Input range [ia, ib) that outputs [a, b) read, and the clone's (lead, trail) padding."""
    start = a * stride - pad
    ia = max(0, start)
    ib = min(size, (b - 1) * stride - pad + (k - 1) * dil + 1)
    if ib <= ia:
        return None
    lead = ia - start
    trail = max(0, (b - a - 1) * stride + (k - 1) * dil + 1 - lead - (ib - ia))
    return ia, ib, lead, trail


def patch_boxes(geos: list[Geometry], out: Box) -> list[tuple[Box, tuple[int, int, int, int], Box]]:
    """Per stage op (first to last): (input box, explicit padding (t, b, l, r), output box) of
    the patch whose stage-output box is `out`; empty when some window reads no pixel."""
    res = []
    y0, y1, x0, x1 = out
    for geo in reversed(geos):
        ry = _back(y0, y1, geo.stride_h, geo.pad_t, geo.k_h, geo.dil_h, geo.in_h)
        rx = _back(x0, x1, geo.stride_w, geo.pad_l, geo.k_w, geo.dil_w, geo.in_w)
        if ry is None or rx is None:
            return []
        res.append(((ry[0], ry[1], rx[0], rx[1]), (ry[2], ry[3], rx[2], rx[3]), (y0, y1, x0, x1)))
        y0, y1, x0, x1 = ry[0], ry[1], rx[0], rx[1]
    return res[::-1]


def _grid(geo: Geometry, rows: int, cols: int) -> list[Box]:
    return [(a, b, c, d) for a, b in splits(geo.out_h, rows) for c, d in splits(geo.out_w, cols)]


def _macs_per_pixel(g: Graph, n: Node, geo: Geometry) -> int:
    if n.op == "CONV_2D":
        return geo.out_c * geo.k_h * geo.k_w * g.type(n.inputs[1]).shape[3]
    return geo.out_c * geo.k_h * geo.k_w  # depthwise: one input channel per output; pools


# ---- the transformation ---------------------------------------------------------------------

def apply_tiling(g: Graph, st: Stage) -> Graph:
    """The graph with stage `st` replaced by its patches (same Node objects elsewhere)."""
    if not stage_ok(g, st.first, st.last):
        raise ValueError(f"ops {st.first}-{st.last} are not a tileable chain")
    ops = g.nodes[st.first:st.last + 1]
    geos = [geometry(g, n) for n in ops]
    x, o = ops[0].inputs[0], ops[-1].outputs[0]
    values = dict(g.values)
    for n in ops[:-1]:
        del values[n.outputs[0]]
    tx, to = g.type(x), g.type(o)
    nodes: list[Node] = []
    prev: str | None = None
    grid = _grid(geos[-1], st.rows, st.cols)
    for k, box in enumerate(grid):
        boxes = patch_boxes(geos, box)
        if not boxes:
            raise ValueError(f"patch {k} of ops {st.first}-{st.last} reads no input pixel")
        (iy0, iy1, ix0, ix1), _, _ = boxes[0]
        cur = f"{x}.p{k}"
        values[cur] = Value(cur, TensorType((tx.shape[0], iy1 - iy0, ix1 - ix0, tx.shape[3]),
                                            tx.dtype, tx.q),
                            label=f"patch {k} of {g.value(x).label or x}")
        nodes.append(Node("EDGECC_PATCH_READ", [x], [cur], {"region": (iy0, iy1, ix0, ix1)},
                          f"patch{k}/read", ops[0].index))
        for n, (_, pads, (oy0, oy1, ox0, ox1)) in zip(ops, boxes):
            t = g.type(n.outputs[0])
            name = f"{n.outputs[0]}.p{k}"
            values[name] = Value(name, TensorType((t.shape[0], oy1 - oy0, ox1 - ox0, t.shape[3]),
                                                  t.dtype, t.q),
                                 label=f"patch {k} of {g.value(n.outputs[0]).label}")
            attrs = dict(n.attrs, explicit_padding=pads)
            nodes.append(Node(n.op, [cur, *n.inputs[1:]], [name], attrs,
                              f"{n.name}/patch{k}", n.index, n.numerics))
            cur = name
        out = o if k == len(grid) - 1 else f"{o}.w{k}"
        if out != o:
            values[out] = Value(out, to, label=f"{g.value(o).label} after patch {k}")
        nodes.append(Node("EDGECC_PATCH_WRITE", [prev, cur], [out],
                          {"region": box, "full_shape": tuple(to.shape)},
                          f"patch{k}/write", ops[-1].index))
        prev = out
    return Graph(values, [*g.nodes[:st.first], *nodes, *g.nodes[st.last + 1:]],
                 list(g.inputs), list(g.outputs), g.name)


# ---- cost -----------------------------------------------------------------------------------

def _up(x: int) -> int:
    return -(-x // ALIGN) * ALIGN


@lru_cache(maxsize=4096)
def _pair_saving(geo: Geometry, streams: tuple | None, size_in: int, size_out: int) -> int:
    if not streams:
        return 0
    return saving(size_in, size_out, aligned(d_max(geo, streams), ALIGN))


class Coster:
    """Estimates the peak and the extra MACs of tiling a stage of `g` with a grid.

    traits: node position -> (Kernel.streams, scratch bytes) of the untiled lowering; clones are
    assumed to get the same kernel kind and at most the same scratch."""

    def __init__(self, g: Graph, traits: dict[int, tuple], alias_ops: set[str]):
        self.g = g
        self.traits = traits
        streams = {i: s for i, (s, _) in traits.items() if s}
        scratch = {i: sc for i, (_, sc) in traits.items() if sc}
        self.bufs = buffers_for(g, scratch, alias_ops, inplace=True, streams=streams)
        steps = len(g.nodes)
        save = stream_savings(self.bufs)
        self.live = [sum(b.size for b in self.bufs if b.first <= s <= b.last) - save.get(s, 0)
                     for s in range(steps)]
        self.where = {v: b for b in self.bufs for v in b.values}

    def peak_step(self) -> int:
        return max(range(len(self.live)), key=lambda s: self.live[s]) if self.live else 0

    def cost(self, st: Stage) -> TilePlan | None:
        g = self.g
        ops = g.nodes[st.first:st.last + 1]
        geos = [geometry(g, n) for n in ops]
        x, o = ops[0].inputs[0], ops[-1].outputs[0]
        bx, bo = self.where.get(x), self.where.get(o)
        if bx is None or bo is None:
            return None
        inside = {id(self.where[n.outputs[0]]) for n in ops[:-1]}
        # buffers alive across the whole stage, besides its input (kept whole) and output
        across = sum(b.size for b in self.bufs
                     if b.first <= st.first and b.last >= st.last and b is not bx
                     and b is not bo and id(b) not in inside and not b.name.startswith("scratch"))
        outside = max([v for s, v in enumerate(self.live) if not st.first <= s <= st.last],
                      default=0)
        esz = [g.type(n.outputs[0]).dtype.size for n in ops]
        in_px = g.type(x).shape[3] * g.type(x).dtype.size
        batches = g.type(x).shape[0]
        worst = 0
        macs = sum(batches * geo.out_h * geo.out_w * _macs_per_pixel(g, n, geo)
                   for n, geo in zip(ops, geos))
        patch_macs = copied = 0
        for k, box in enumerate(_grid(geos[-1], st.rows, st.cols)):
            boxes = patch_boxes(geos, box)
            if not boxes:
                return None
            (iy0, iy1, ix0, ix1), _, _ = boxes[0]
            sizes = [batches * (iy1 - iy0) * (ix1 - ix0) * in_px]
            steps = []
            for j, (n, geo, (ib, pads, ob)) in enumerate(zip(ops, geos, boxes)):
                oh, ow = ob[1] - ob[0], ob[3] - ob[2]
                sizes.append(batches * oh * ow * geo.out_c * esz[j])
                clone = geo.with_(in_h=ib[1] - ib[0], in_w=ib[3] - ib[2], out_h=oh, out_w=ow,
                                  pad_t=pads[0], pad_l=pads[2])
                streams, scratch = self.traits.get(st.first + j, (None, 0))
                sv = _pair_saving(clone, tuple(streams) if streams else None,
                                  sizes[j], sizes[j + 1])
                steps.append(_up(sizes[j]) + _up(sizes[j + 1]) - sv + _up(scratch))
                patch_macs += batches * oh * ow * _macs_per_pixel(g, n, geo)
            copied += sizes[0] + sizes[-1]
            o_live = bo.size if k > 0 else 0  # the full output exists from the first write on
            worst = max(worst, _up(sizes[0]) + o_live, max(steps) + o_live,
                        _up(sizes[-1]) + bo.size)
        peak = max(outside, across + _up(bx.size) + worst)
        return TilePlan(st, peak, macs, patch_macs - macs, copied, tuple(n.op for n in ops))


def candidates(g: Graph, c: Coster) -> list[TilePlan]:
    """Every stage containing the untiled peak step, with every grid (at most MAX_GRID per axis,
    at least two patches), costed."""
    if not g.nodes:
        return []
    p = c.peak_step()
    out = []
    for first in range(max(0, p - MAX_STAGE + 1), p + 1):
        for last in range(p, min(len(g.nodes), first + MAX_STAGE)):
            if not stage_ok(g, first, last):
                continue
            geo = geometry(g, g.nodes[last])
            for rows in range(1, min(MAX_GRID, geo.out_h) + 1):
                for cols in range(1, min(MAX_GRID, geo.out_w) + 1):
                    if rows * cols < 2:
                        continue
                    tp = c.cost(Stage(first, last, rows, cols))
                    if tp is not None:
                        out.append(tp)
    return out


def model_macs(g: Graph) -> int:
    """Multiply-accumulates of the window ops and fully connected layers of `g`."""
    total = 0
    for n in g.nodes:
        geo = geometry(g, n)
        if geo is not None:
            total += geo.batches * geo.out_h * geo.out_w * _macs_per_pixel(g, n, geo)
        elif n.op == "FULLY_CONNECTED" and len(n.inputs) > 1 and n.inputs[1] is not None:
            w = g.type(n.inputs[1])
            total += g.type(n.outputs[0]).numel // max(w.shape[0], 1) * w.numel
    return total


def rank(cands: list[TilePlan], untiled: int, macs: int,
         budget: int | None = None) -> list[TilePlan]:
    """Candidates that beat the untiled peak, best first. With a budget: the fewest extra MACs
    among those that fit it. Otherwise (or when none fits) the smallest relative RAM + relative
    compute, peak / untiled peak + extra MACs / model MACs, below the 1.0 of not tiling: a halo
    is worth its MACs when it saves at least the same share of RAM as it adds of compute."""
    cands = [t for t in cands if t.peak < untiled]
    if budget is not None:
        fit = sorted((t for t in cands if t.peak <= budget),
                     key=lambda t: (t.extra_macs, t.peak, t.patches))
        if fit:
            return fit
    def score(t: TilePlan) -> float:
        return t.peak / max(untiled, 1) + t.extra_macs / max(macs, 1)

    # not tiling scores 1.0
    return sorted((t for t in cands if score(t) < 1.0), key=lambda t: (score(t), t.patches))


def choose(g: Graph, traits: dict[int, tuple], alias_ops: set[str], budget: int | None = None,
           keep: int = 3) -> list[TilePlan]:
    """The `keep` best (stage, grid) candidates of `g` (see rank); traits as for Coster."""
    c = Coster(g, traits, alias_ops)
    return rank(candidates(g, c), max(c.live, default=0), model_macs(g), budget)[:keep]
