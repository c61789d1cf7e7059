"""What `edgecc plan` shows: the buffer table, the JSON object and the SVG picture of a plan.

Owns: turning a (graph, plan) pair into a report dict, a short human table, and a self-contained
SVG (time = node steps on the x axis, arena address on the y axis, one rectangle per buffer, the
lower bounds as lines) that `edgecc report` can embed as is. Model strings (tensor labels) reach
the SVG only through edgecc.names.xml_text (escaped, control characters removed). App code
(docs/design.md "Layers"): the planner (plan/) shows nothing; the verb itself is
edgecc/cli/plan.py.
"""
from __future__ import annotations


from edgecc.ir import Graph
from edgecc.names import xml_text
from edgecc.plan import Plan


def _union_bytes(spans: list[tuple[int, int]]) -> int:
    """Bytes covered by [lo, hi) spans (a streaming pair's overlap counted once)."""
    total, end = 0, None
    for lo, hi in sorted(spans):
        if end is None or lo >= end:
            total, end = total + hi - lo, hi
        elif hi > end:
            total, end = total + hi - end, hi
    return total


def plan_report(g: Graph, plan: Plan, model: str = "") -> dict:
    inputs, outputs = set(g.inputs), set(g.outputs)
    rows = []
    for b in sorted(plan.buffers, key=lambda b: (b.first, b.offset, b.name)):
        if b.name.startswith("scratch:"):
            step = int(b.name.split(":")[1])
            kind, tensors, labels = "scratch", [], [f"scratch of {g.nodes[step].op}"]
        else:
            kind = ("state" if b.name.startswith("state:") else
                    "input" if inputs & set(b.values) else
                    "output" if outputs & set(b.values) else "activation")
            tensors, labels = list(b.values), [g.value(v).label for v in b.values]
        rows.append(dict(buffer=b.name, tensors=tensors, labels=labels, kind=kind, size=b.size,
                         first=b.first, last=b.last, offset=b.offset))
    lb = plan.model_lower_bound
    # Kernel scratch that lifts its step above the lower bound: what a leaner kernel would save.
    over = []
    for r in rows:
        if r["kind"] == "scratch":
            step = r["first"]
            live = _union_bytes([(b.offset, b.offset + b.size) for b in plan.buffers
                                 if not b.name.startswith("scratch:") and b.first <= step <= b.last])
            if live + r["size"] > lb:
                over.append(dict(step=step, op=g.nodes[step].op, model_op=g.nodes[step].index,
                                 scratch=r["size"], live=live, over=live + r["size"] - lb))
    return dict(model=model, arena_bytes=plan.arena, lower_bound_bytes=lb,
                graph_lower_bound_bytes=plan.graph_lower_bound,
                planned_peak_bytes=plan.lower_bound,
                ratio=round(plan.arena / lb, 4) if lb else None,
                strategy=plan.strategy, techniques=list(plan.techniques),
                order=list(plan.order), order_exact=plan.order_exact,
                reordered=plan.order != sorted(plan.order),
                inplace=[list(p) for p in plan.inplace],
                streaming=[dict(output=o, input=i, shift=d, d_max=m)
                           for o, i, d, m in plan.streaming],
                scratch_over_lower_bound=over,
                steps=[dict(step=i, op=n.op, model_op=n.index) for i, n in enumerate(g.nodes)],
                buffers=rows)


def format_table(rep: dict) -> str:
    lines = [f"{rep['model']}: arena {rep['arena_bytes']} B, lower bound "
             f"{rep['lower_bound_bytes']} B (model order, no aliasing; "
             f"{rep['graph_lower_bound_bytes']} B after passes), planned peak "
             f"{rep['planned_peak_bytes']} B, ratio {rep['ratio']}",
             "techniques: " + "; ".join(rep["techniques"])]
    if rep["reordered"]:
        lines.append("node order: " + " ".join(str(i) for i in rep["order"]))
    for o in rep["scratch_over_lower_bound"]:
        lines.append(f"step {o['step']} {o['op']} (model op {o['model_op']}): {o['scratch']} B "
                     f"scratch beside {o['live']} B of tensors, {o['over']} B over the bound")
    head = (f"{'buffer':<14} {'kind':<10} {'bytes':>8} {'first':>5} {'last':>5} {'offset':>8}"
            "  tensors")
    lines += ["", head, "-" * len(head)]
    for r in rep["buffers"]:
        names = ", ".join(f"{t} '{lab}'" if lab else t for t, lab in zip(r["tensors"], r["labels"]))
        if r["kind"] == "scratch":
            names = r["labels"][0]
        lines.append(f"{r['buffer']:<14} {r['kind']:<10} {r['size']:>8} {r['first']:>5} "
                     f"{r['last']:>5} {r['offset']:>8}  {names[:70]}")
    return "\n".join(lines)


_COLORS = {"input": "#4e79a7", "output": "#59a14f", "activation": "#f28e2b", "scratch": "#9c9c9c",
           "state": "#b07aa1"}


def plan_svg(g: Graph, plan: Plan, title: str = "", width: int = 900, height: int = 480) -> str:
    """The plan as SVG: x = step (one column per node), y = address (0 at the bottom)."""
    rep = plan_report(g, plan, title)
    steps = max(len(g.nodes), 1)
    left, right, top, bottom = 78, 20, 34, 46
    pw, ph = width - left - right, height - top - bottom
    ymax = max(plan.arena, plan.model_lower_bound, 1)
    sx = pw / steps

    def y(addr: float) -> float:
        return top + ph - addr / ymax * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="18" font-size="13">{xml_text(title)} arena {plan.arena} B, '
           f'lower bound {plan.model_lower_bound} B, planned peak {plan.lower_bound} B</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>']
    for r in rep["buffers"]:
        x0, x1 = left + r["first"] * sx, left + (r["last"] + 1) * sx
        y0, y1 = y(r["offset"] + r["size"]), y(r["offset"])
        tip = (r["labels"][0] if r["kind"] == "scratch" else
               ", ".join(f"{t} {lab}".strip() for t, lab in zip(r["tensors"], r["labels"])))
        out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{max(x1 - x0 - 1, 1):.1f}" '
                   f'height="{max(y1 - y0, 0.5):.1f}" fill="{_COLORS[r["kind"]]}" '
                   f'fill-opacity="0.8" stroke="#222" stroke-width="0.5"><title>'
                   f'{xml_text(tip)}: {r["size"]} B at {r["offset"]}, steps {r["first"]}-{r["last"]}'
                   f'</title></rect>')
    for val, colour, label in ((plan.arena, "#c00", "arena"),
                               (plan.model_lower_bound, "#06c", "lower bound")):
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(val):.1f}" y2="{y(val):.1f}" '
                   f'stroke="{colour}" stroke-dasharray="5,3"/>')
        out.append(f'<text x="{left - 4}" y="{y(val) + 4:.1f}" text-anchor="end" '
                   f'fill="{colour}">{val}</text>')
    out.append(f'<text x="{left - 4}" y="{top + ph + 4}" text-anchor="end">0</text>')
    every = max(1, steps // 30)
    for i, n in enumerate(g.nodes):
        if i % every == 0:
            out.append(f'<text x="{left + (i + 0.5) * sx:.1f}" y="{top + ph + 14}" '
                       f'text-anchor="middle">{i}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 10}" text-anchor="middle">step (node in '
               f'execution order)</text>')
    out.append(f'<text x="14" y="{top + ph / 2}" transform="rotate(-90 14 {top + ph / 2})" '
               f'text-anchor="middle">arena address (bytes)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
