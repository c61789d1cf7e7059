"""`edgecc report MODEL -o report.html`: one self-contained HTML page for a firmware engineer.

Owns: gathering what the other verbs know about one model on one target (compiler.compile_model
for the graph, kernels and plan; inspect for the op counts; plan_view for the buffer table and
the SVG; budget.budget_model for flash/RAM against a board when --board is given and the board's
compiler is installed) and rendering it as ONE HTML file: inline CSS, the SVG inline, no scripts,
no external assets, so it can be mailed or attached to a CI run as is.

Every model string (tensor labels, file name, rewrite messages that quote them) goes through
edgecc.names.xml_text (escaped, control and bidirectional-override characters removed). The page is deterministic: no times, no absolute paths, only the model's file name,
so two runs on the same model and edgecc version give the same bytes.

MACs per layer follow the benchmark definition (../shared/bench/anchors.md): output elements x
kernel volume for CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (edgecc/metrics.py); other
layers show no figure.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from edgecc.build.boards import Board
from edgecc.budget import budget_model
from edgecc.compiler import Compiled, compile_model
from edgecc.errors import EdgeccError
from edgecc.fileio import write_file
from edgecc.inspect import executes, kernel_rows, op_counts
from edgecc.ir import TensorType
from edgecc.metrics import node_macs
from edgecc.names import xml_text
from edgecc.plan_view import plan_report, plan_svg
from edgecc.targets import Target, get_target
from edgecc.version import __version__

LABEL_CHARS = 40  # long TFLite labels (';'-joined op names) are cut in cells, full text in title


# ------------------------------------------------------------------------------ small helpers

def _e(s: object) -> str:
    return xml_text(s)


def _n(x: int | None) -> str:
    return "&ndash;" if x is None else f"{x:,}"


def _shape(t: TensorType) -> str:
    return f"{t.dtype.value[0]}[{', '.join(str(d) for d in t.shape)}]"


def _quant(t: TensorType) -> str:
    q = t.q
    if q is None:
        return "&ndash;"
    if q.per_channel:
        return _e(f"per-channel on axis {q.axis}: {len(q.scale)} scales "
                  f"({min(q.scale):.6g} .. {max(q.scale):.6g}), zp {q.zero_point[0]}")
    return _e(f"scale {q.scale[0]:.6g}, zp {q.zero_point[0]}")


def _label(s: str) -> str:
    if not s:
        return "&ndash;"
    if len(s) <= LABEL_CHARS:
        return f'<span class="lbl">{_e(s)}</span>'
    return f'<span class="lbl" title="{_e(s)}">{_e(s[:LABEL_CHARS - 1])}&hellip;</span>'


def _table(head: list[str] | None, rows: list[list[str]], num: set[int] = frozenset(),
           cls: str = "") -> str:
    """Cells are HTML already (escaped by the caller); `num` = right-aligned column numbers;
    head None = a key/value table without a header row."""
    def cell(tag: str, i: int, v: str) -> str:
        return f'<{tag} class="num">{v}</{tag}>' if i in num else f"<{tag}>{v}</{tag}>"
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if head is not None:
        out.append("<thead><tr>" + "".join(cell("th", i, h) for i, h in enumerate(head))
                   + "</tr></thead>")
    out.append("<tbody>")
    out += ["<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows]
    out.append("</tbody></table>")
    return "\n".join(out)


def _bar(used: int, limit: int | None) -> str:
    if not limit:
        return "&ndash;"
    pct = 100.0 * used / limit
    cls = "bar over" if pct > 100 else "bar"
    return (f'<div class="{cls}"><div style="width:{min(pct, 100):.1f}%"></div></div>'
            f'<span class="pct">{pct:.1f}%</span>')


# ------------------------------------------------------------------------------ the sections

def _pct(used: int, limit: int | None) -> str:
    return f" ({100.0 * used / limit:.1f}%)" if limit else ""


def _summary(c: Compiled, macs: int, figures: dict | None) -> str:
    g = c.graph
    cards = [("arena", f"{c.plan.arena:,} B"), ("lower bound", f"{c.plan.model_lower_bound:,} B"),
             ("weights", f"{c.weights_bytes:,} B"), ("layers executed",
                                                     f"{sum(executes(n) for n in g.nodes)}"),
             ("MACs / inference", f"{macs:,}")]
    if figures is not None:  # the board's own measurement: what a firmware engineer asks first
        fl, ram = figures["flash"], figures["ram"]
        cards += [(f"flash on {_e(figures['board'])}",
                   f"{fl['total']:,} B{_pct(fl['total'], fl['limit'])}"),
                  (f"RAM on {_e(figures['board'])}",
                   f"{ram['total']:,} B{_pct(ram['total'], ram['limit'])}")]
    html = ['<div class="cards">'] + [f'<div class="card"><div class="k">{k}</div>'
                                       f'<div class="v">{v}</div></div>' for k, v in cards]
    html.append("</div>")
    rows = []
    for kind, names in (("input", g.inputs), ("output", g.outputs)):
        for i, v in enumerate(names):
            t = g.type(v)
            rows.append([f"{kind} {i}", _e(v), _label(g.value(v).label), _e(_shape(t)),
                         _n(t.nbytes), _quant(t)])
    html.append(_table(["", "tensor", "name in the model", "type", "bytes", "quantization"],
                       rows, num={4}))
    return "\n".join(html)


def _passes(c: Compiled) -> str:
    before, after = op_counts(c.imported), op_counts(c.graph, executed_only=True)
    ops = sorted(set(before) | set(after))
    rows = [[_e(o), _n(before.get(o, 0)), _n(after.get(o, 0))] for o in ops]
    rows.append(["<b>total</b>", f"<b>{sum(before.values()):,}</b>",
                 f"<b>{sum(after.values()):,}</b>"])
    nodes = len(c.imported.nodes)
    html = [f"<p>{nodes} node{'s' if nodes != 1 else ''} imported, {len(c.graph.nodes)} after the "
            f"passes, {sum(executes(n) for n in c.graph.nodes)} of them run code (reshape-like "
            "ops are aliases: no code; fused activations run inside their producer).</p>",
            _table(["op", "imported", "executed after passes"], rows, num={1, 2}, cls="narrow")]
    applied = [(r.name, a) for r in c.passes for a in r.applied]
    if applied:
        html.append("<p>Rewrites the passes applied:</p><ul>")
        html += [f"<li><b>{_e(p)}</b>: {_e(a)}</li>" for p, a in applied]
        html.append("</ul>")
    else:
        html.append("<p>The passes changed nothing: the model runs as imported.</p>")
    return "\n".join(html)


def _layers(c: Compiled) -> tuple[str, int]:
    g = c.graph
    kernels = {id(lw.node): row for lw, row in zip(c.lowered, kernel_rows(c))}
    rows, total = [], 0
    for step, n in enumerate(g.nodes):
        ins = [_e(_shape(g.type(v))) for v in n.inputs if v is not None and not g.value(v).is_const]
        outs = [_e(_shape(g.type(v))) for v in n.outputs]
        k = kernels.get(id(n))
        if k is None:
            kernel = '<span class="dim">alias: no code, shares its input&rsquo;s bytes</span>'
        else:
            why = _e(k["reason"]) if k["reason"] else "portable C kernel"
            refused = "".join(f'<div class="why">refused {_e(r["kernel"])}: {_e(r["why"])}</div>'
                              for r in k.get("refused", ()))
            kernel = (f'<code>{_e(k["template"])}</code> <b>{_e(k["variant"])}</b>'
                      f'<div class="why">{why}</div>{refused}')
        macs = node_macs(g, n)
        total += macs or 0
        scratch = k["scratch"] if k else 0
        named = (n.outputs or n.inputs)[0]  # ASSIGN_VARIABLE writes no output: its variable
        rows.append([str(step), str(n.index), _e(n.op), _label(g.value(named).label),
                     "<br>".join(ins) or "&ndash;", "<br>".join(outs), kernel, _n(macs),
                     _n(scratch) if scratch else "&ndash;"])
    head = ["step", "model op", "op", "output name", "inputs", "outputs", "kernel and why", "MACs",
            "scratch B"]
    return _table(head, rows, num={0, 1, 7, 8}, cls="layers"), total


def _memory(c: Compiled, model_name: str) -> str:
    rep = plan_report(c.graph, c.plan, model_name)
    facts = [("arena (NAME_ARENA_SIZE)", f"{rep['arena_bytes']:,} B"),
             ("lower bound (model order, every tensor its own bytes, no scratch)",
              f"{rep['lower_bound_bytes']:,} B"),
             ("the same bound after the passes", f"{rep['graph_lower_bound_bytes']:,} B"),
             ("planned peak (the planned buffers' peak: chosen order, aliasing, in-place, "
              "scratch)",
              f"{rep['planned_peak_bytes']:,} B"),
             ("arena / lower bound", f"{rep['ratio']}" if rep["ratio"] is not None else "&ndash;"),
             ("placement strategy", _e(rep["strategy"] or "-")),
             ("operator order", "reordered for a smaller peak" if rep["reordered"]
              else "the model's own")]
    html = [_table(None, [[k, v] for k, v in facts], num={1}, cls="narrow facts")]
    if rep["techniques"]:
        html.append("<p>Techniques: " + "; ".join(_e(t) for t in rep["techniques"]) + ".</p>")
    over = rep["scratch_over_lower_bound"]
    if over:
        html.append("<p>Layers whose kernel scratch lifts their step above the lower bound (a "
                    "leaner kernel there would save RAM; <code>--scratch fit</code> trades "
                    "their speed for it):</p>")
        html.append(_table(["step", "model op", "op", "scratch B", "tensors live B",
                            "over the bound B"],
                           [[str(o["step"]), str(o["model_op"]), _e(o["op"]), _n(o["scratch"]),
                             _n(o["live"]), _n(o["over"])] for o in over],
                           num={0, 1, 3, 4, 5}, cls="narrow"))
    html.append('<div class="svg">' + plan_svg(c.graph, c.plan, model_name) + "</div>")
    html.append('<p class="dim">x: step (layer in execution order); y: arena address. Blue '
                "inputs, green outputs, orange activations, grey kernel scratch; dashed lines: "
                "arena (red) and lower bound (blue).</p>")
    rows = []
    for r in rep["buffers"]:
        names = (_e(r["labels"][0]) if r["kind"] == "scratch" else
                 "<br>".join(f"{_e(t)} {_label(lab)}" for t, lab in zip(r["tensors"], r["labels"])))
        rows.append([_e(r["buffer"]), r["kind"], _n(r["size"]), _n(r["offset"]),
                     f"{r['first']}&ndash;{r['last']}", names])
    html.append(f"<details><summary>All {len(rows)} buffers</summary>")
    html.append(_table(["buffer", "kind", "bytes", "offset", "steps", "tensors"], rows,
                       num={2, 3}))
    html.append("</details>")
    return "\n".join(html)


def budget_figures(model: str | Path, board: Board,
                   options=None) -> tuple[dict | None, str]:
    """(BudgetReport.as_json(), "") or (None, why not): the budget links for the board, so it needs
    the board's cross compiler; without it the report still holds everything else."""
    cc = get_target(board.target).cc
    if shutil.which(cc) is None:
        return None, f"{cc} is not installed: no flash/RAM measurement for {board.name}"
    try:
        return budget_model(model, board, options=options).as_json(), ""
    except EdgeccError as e:
        return None, " ".join(str(e).split())


def _budget(board: Board | None, figures: dict | None, why: str) -> str:
    if board is None:
        return ("<p>No board given. <code>edgecc report MODEL --board BOARD -o FILE</code> adds "
                "the flash and RAM measured from the program linked for that board.</p>")
    if figures is None:
        return f'<p class="warn">Not measured: {_e(why)}</p>'
    fl, ram = figures["flash"], figures["ram"]
    rows = [["flash: model code", _n(fl["code"]), _bar(fl["code"], fl["limit"])],
            ["flash: weights", _n(fl["weights"]), _bar(fl["weights"], fl["limit"])],
            ["flash: other constants", _n(fl["constants"] + fl["data"]),
             _bar(fl["constants"] + fl["data"], fl["limit"])],
            ["<b>flash total</b>", f"<b>{fl['total']:,}</b>", _bar(fl["total"], fl["limit"])],
            ["RAM: arena" + (f" (in {_e(figures['arena_region'])})"
                             if figures["arena_region"] else ""),
             _n(ram["arena"]), _bar(ram["arena"], ram["limit"])],
            ["RAM: static data", _n(ram["static_data"]), _bar(ram["static_data"], ram["limit"])],
            ["RAM: stack of the model (static bound)", _n(ram["stack"]),
             _bar(ram["stack"], ram["limit"])],
            ["<b>RAM total</b>", f"<b>{ram['total']:,}</b>", _bar(ram["total"], ram["limit"])]]
    lim = (f"Board limits: flash {_n(fl['limit'])} B, RAM {_n(ram['limit'])} B. "
           if fl["limit"] or ram["limit"] else "")
    if not figures["fits"]:
        verdict = "".join(f'<p class="warn">OVER: {_e(o["what"])} needs {o["needed"]:,} B, '
                          f'limit {o["limit"]:,} B: over by {o["by"]:,} B.</p>'
                          for o in figures["over"])
    elif fl["limit"] or ram["limit"]:
        verdict = (f'<p class="ok">Fits {_e(board.name)}: flash {fl["total"]:,} B'
                   f'{_pct(fl["total"], fl["limit"])}, RAM {ram["total"]:,} B'
                   f'{_pct(ram["total"], ram["limit"])}.</p>')
    else:  # e.g. a Linux board: nothing to fit into, only the figures
        verdict = (f'<p>{_e(board.name)} declares no memory sizes: flash {fl["total"]:,} B, '
                   f'RAM {ram["total"]:,} B, nothing to compare them with.</p>')
    return "\n".join([verdict, _table(["what", "bytes", "share of the board"], rows, num={1},
                                      cls="narrow budget"),
                      f"<p>{lim}Flash and RAM are read from the linker map of the model's own "
                      "objects in a minimal program linked for the board; the stack is "
                      f"{_e(figures['stack_method'])}.</p>"])


_CSS = """
body{font:14px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d1f21;
 margin:0 auto;max-width:1200px;padding:24px 32px;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:32px 0 10px;padding-bottom:4px;
 border-bottom:2px solid #e3e6ea}
.sub{color:#555;margin:0 0 16px}nav{margin:0 0 8px;font-size:13px}nav a{margin-right:14px;
 color:#0b5cad;text-decoration:none}
table{border-collapse:collapse;width:100%;margin:8px 0;font-size:13px}
th,td{border:1px solid #dfe2e5;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f7;font-weight:600}tbody tr:nth-child(even){background:#fafbfc}
table.narrow{width:auto;min-width:420px}.num{text-align:right;font-variant-numeric:tabular-nums;
 white-space:nowrap}
table.facts td:first-child{color:#444}
table.layers td:nth-child(5),table.layers td:nth-child(6){font-family:monospace;font-size:12px;
 white-space:nowrap}
code{font-family:monospace;font-size:12px;background:#f3f5f7;padding:1px 4px;border-radius:3px}
.why{color:#555;font-size:12px;margin-top:2px}.dim{color:#777}.lbl{font-family:monospace;
 font-size:12px;overflow-wrap:anywhere}
table.layers td:nth-child(4){max-width:220px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}.card{border:1px solid #dfe2e5;
 border-radius:6px;padding:8px 14px;min-width:130px}.card .k{color:#666;font-size:12px}
.card .v{font-size:18px;font-weight:600}
.bar{display:inline-block;width:160px;height:10px;background:#eceff2;border-radius:5px;
 vertical-align:middle;margin-right:8px;overflow:hidden}.bar div{height:100%;background:#4e79a7}
.bar.over div{background:#c0392b}.pct{font-variant-numeric:tabular-nums}
.ok{color:#1e7b34;font-weight:600}.warn{color:#b03a2e;font-weight:600}
.svg{overflow-x:auto;margin:8px 0}summary{cursor:pointer;color:#0b5cad;margin:8px 0}
footer{margin-top:32px;color:#888;font-size:12px}
"""


def render_report(model: str | Path, c: Compiled, target: Target, board: Board | None,
                  budget: tuple[dict | None, str] = (None, "")) -> str:
    name = Path(model).name
    layers, macs = _layers(c)
    on = f"{target.name}" + (f", board {board.name}" if board else "")
    desc = f" ({_e(board.description)})" if board and board.description else ""
    sections = [("summary", "Model", _summary(c, macs, budget[0])),
                ("passes", "Ops before and after the passes", _passes(c)),
                ("layers", "Layers, in execution order", layers),
                ("memory", "Memory plan", _memory(c, name)),
                ("budget", "Flash and RAM on the board", _budget(board, *budget))]
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>edgecc report: {_e(name)} on {_e(on)}</title>", f"<style>{_CSS}</style>",
           "</head>", "<body>", f"<h1>edgecc report: {_e(name)}</h1>",
           f'<p class="sub">target <b>{_e(target.name)}</b>'
           + (f", board <b>{_e(board.name)}</b>{desc}" if board else "")
           + f"; edgecc {_e(__version__)}</p>",
           "<nav>" + "".join(f'<a href="#{sid}">{title}</a>' for sid, title, _ in sections)
           + "</nav>"]
    for sid, title, body in sections:
        out += [f'<section id="{sid}">', f"<h2>{title}</h2>", body, "</section>"]
    out += ["<footer>Generated by edgecc. Numbers are computed at compile time from the model; "
            "flash and RAM on a board are measured from the linked program.</footer>",
            "</body>", "</html>"]
    return "\n".join(out) + "\n"


def write_report(model: str | Path, target: Target, board: Board | None, out: Path,
                 options=None) -> Path:
    """Compile the model for `target` with `options`, measure it on `board` (when given), write
    the page."""
    c = compile_model(model, target, "model", options)
    budget = budget_figures(model, board, options) if board is not None else (None, "")
    html = render_report(model, c, target, board, budget)
    return write_file(out, html, "-o")
