"""`edgecc inspect MODEL`: the graph as imported and after every pass.

Owns: the text form of a graph (one line per node; --verbose adds every tensor's shape, dtype and
quantization, and the kernel lowering chose for every executing node on the target, with why),
the op-count tables, the --json object, and --dump-ir (one text file per stage).

--json prints ONE object:
  model, nodes_before, nodes_after,
  ops_before  {TFLite op name: count} over the imported graph (every node),
  ops_after   {TFLite op name: count} over the nodes the generated code executes: a fused
              CONV_2D+RELU counts as one CONV_2D, an alias (RESHAPE, SQUEEZE, EXPAND_DIMS) as
              nothing,
  passes      [{name, changed, removed, added, applied, refused, nodes_after, seconds}],
  seconds     time spent in the passes,
  target, board  the target the kernels are for (--target / --board; default host), board or null,
  kernels     [{op, index, name, template, variant, reason, scratch, refused: [{kernel, why}]}] per executing node in the
              emitted order (compiler.compile_model): index = the op's index in the model, template
              = the template path resolved along the target's ISA path, scratch in bytes,
  kernels_error  null, or the one-line message when lowering the model for the target failed
              (the graph part of inspect still holds),
  import_notes  [str] what the importer fixed in the file: each placeholder shape the ops
              computed otherwise, each shape computation folded at import, each symbolic batch
              resolved (edgecc/frontends/shapes.py).
Model strings (tensor labels) are printed as data, never interpreted.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from edgecc.compiler import Compiled, compile_model, load_model
from edgecc.errors import EdgeccError
from edgecc.fileio import write_folder
from edgecc.ir import Graph, Node
from edgecc.ops import get_op
from edgecc.passes import PassResult, optimize
from edgecc.numerics.fixed_point import ACTIVATION_NAMES
from edgecc.targets import Target, get_target


def executes(n: Node) -> bool:
    """True when the generated code runs a kernel for this node (aliases are free)."""
    return not get_op(n.op).alias


def op_counts(g: Graph, executed_only: bool = False) -> dict[str, int]:
    c = Counter(n.op for n in g.nodes if not executed_only or executes(n))
    return dict(sorted(c.items()))


def _attrs_text(n: Node) -> str:
    a = n.attrs
    parts = []
    act = a.get("fused_activation_function")
    if act:
        parts.append(f"act={ACTIVATION_NAMES.get(int(act), act)}")
    if a.get("explicit_padding") is not None:
        parts.append(f"explicit_padding={list(a['explicit_padding'])}")
    elif "padding" in a and n.op not in ("PAD", "PADV2"):
        parts.append("padding=" + {0: "SAME", 1: "VALID"}.get(int(a["padding"]), str(a["padding"])))
    for k in ("stride_h", "stride_w", "depth_multiplier", "axis", "shrink_axis_mask"):
        if k in a and a[k] not in (None, 0, 1, []):
            parts.append(f"{k}={a[k]}")
    return " ".join(parts)


def _value_text(g: Graph, v: str | None, verbose: bool) -> str:
    if v is None:
        return "-"
    if not verbose:
        return v
    val = g.value(v)
    kind = "const " if val.is_const else ""
    label = f" {val.label!r}" if val.label else ""
    return f"{v}{label}: {kind}{val.type}"


def format_graph(g: Graph, title: str, verbose: bool = False) -> str:
    ex = sum(executes(n) for n in g.nodes)
    lines = [f"# {title}: {len(g.nodes)} nodes, {ex} executed"]
    lines.append("inputs:  " + ", ".join(_value_text(g, v, True) for v in g.inputs))
    lines.append("outputs: " + ", ".join(_value_text(g, v, True) for v in g.outputs))
    for i, n in enumerate(g.nodes):
        tag = "" if executes(n) else "  (alias, no code)"
        extra = _attrs_text(n)
        head = f"{i:3d} {n.name} {n.op}{' ' + extra if extra else ''}{tag}"
        if verbose:
            lines.append(head)
            for v in n.inputs:
                lines.append(f"      in  {_value_text(g, v, True)}")
            for v in n.outputs:
                lines.append(f"      out {_value_text(g, v, True)}")
        else:
            ins = ", ".join(_value_text(g, v, False) for v in n.inputs if v is not None
                            and not g.value(v).is_const)
            lines.append(f"{head}: {ins} -> {', '.join(n.outputs)}")
    return "\n".join(lines) + "\n"


def _counts_table(before: dict[str, int], after: dict[str, int]) -> list[str]:
    ops = sorted(set(before) | set(after))
    w = max([len(o) for o in ops] + [2])
    out = [f"  {'op':<{w}}  before  executed after"]
    for o in ops:
        out.append(f"  {o:<{w}}  {before.get(o, 0):6d}  {after.get(o, 0):6d}")
    return out


def _dump(stages: list[tuple[str, Graph]], out: Path) -> list[Path]:
    # a dump is for reading: full detail
    files = {f"{i:02d}_{name}.txt": format_graph(g, name, verbose=True)
             for i, (name, g) in enumerate(stages)}
    try:
        return write_folder(files, out, "--dump-ir")
    except OSError as e:
        raise EdgeccError(f"--dump-ir {out}: {e.strerror or e}") from None


def inspect_graph(path: str | Path, options=None) -> tuple[Graph, Graph, list[PassResult],
                                                          list[tuple[str, Graph]], float]:
    imported = load_model(path, options)
    stages: list[tuple[str, Graph]] = [("imported", imported)]
    t0 = time.perf_counter()
    g, results = optimize(imported, stages=stages)
    return imported, g, results, stages, time.perf_counter() - t0


def kernel_rows(c: Compiled) -> list[dict]:
    """The kernel of every executing node, in the order the generated code runs them."""
    return [dict(op=lw.node.op, index=lw.node.index, name=lw.node.name,
                 template=lw.template_path, variant=lw.kernel.variant, reason=lw.kernel.reason,
                 scratch=int(lw.kernel.scratch),
                 refused=[dict(kernel=k, why=why) for k, why in lw.refused])
            for lw in c.lowered]


def kernel_text(row: dict) -> str:
    """`CONV_2D op 3 -> dsp/conv_2d_6px.c.j2 (dsp-conv-6px: Cortex-M DSP: ...)`."""
    why = f"{row['variant']}: {row['reason']}" if row["reason"] else row["variant"]
    scratch = f", scratch {row['scratch']} B" if row["scratch"] else ""
    refused = "".join(f"\n      refused {r['kernel']}: {r['why']}" for r in row.get("refused", ()))
    return f"{row['op']} op {row['index']} -> {row['template']} ({why}){scratch}{refused}"


def _kernels(model: str | Path, target: Target,
             options=None) -> tuple[list[dict] | None, str | None]:
    """(rows, None), or (None, message) when the model does not lower for this target: inspect
    exists to look at models that do not compile yet, so that is reported, not raised."""
    try:
        return kernel_rows(compile_model(model, target, "model", options)), None
    except EdgeccError as e:
        return None, " ".join(str(e).split())


def inspect_model(args, target: Target | None = None, board: str | None = None,
                  options=None) -> int:
    target = target or get_target("host")
    imported, g, results, stages, seconds = inspect_graph(args.model, options)
    dumped = _dump(stages, Path(args.dump_ir)) if args.dump_ir else []
    before, after = op_counts(imported), op_counts(g, executed_only=True)
    kernels, kernels_error = (_kernels(args.model, target, options) if args.json or args.verbose
                              else (None, None))
    if args.json:
        print(json.dumps(dict(
            model=str(args.model), nodes_before=len(imported.nodes), nodes_after=len(g.nodes),
            executed_before=sum(executes(n) for n in imported.nodes),
            executed_after=sum(executes(n) for n in g.nodes),
            ops_before=before, ops_after=after, passes=[r.as_json() for r in results],
            seconds=round(seconds, 6), dump_ir=[str(p) for p in dumped],
            target=target.name, board=board, kernels=kernels, kernels_error=kernels_error,
            import_notes=list(imported.notes))))
        return 0
    lines = [f"{Path(args.model).name}: {len(imported.nodes)} nodes imported, {len(g.nodes)} after "
             f"passes ({sum(executes(n) for n in g.nodes)} executed), {seconds * 1000:.1f} ms"]
    if imported.notes:
        lines.append(f"  import: {len(imported.notes)} notes (shapes come from the ops, not the file)")
        lines.extend(f"      * {note}" for note in imported.notes)
    lines.append(f"  {'pass':<10} {'nodes':>5}  changes")
    for r in results:
        lines.append(f"  {r.name:<10} {r.nodes_after:5d}  "
                     f"{len(r.applied)} rewrites, {len(r.refused)} refused, "
                     f"-{len(r.removed)} +{len(r.added)} nodes")
        for a in r.applied:
            lines.append(f"      + {a}")
        if args.verbose:
            for a in r.refused:
                lines.append(f"      - {a}")
    lines.extend(_counts_table(before, after))
    if args.verbose:
        on = f"{target.name}{f' (board {board})' if board else ''}"
        lines.append("")
        if kernels is None:
            lines.append(f"# kernels for {on}: not lowered: {kernels_error}")
        else:
            lines.append(f"# kernels for {on}: {len(kernels)} executed, in emitted order")
            lines.extend("  " + kernel_text(k) for k in kernels)
        for name, sg in stages:
            lines.append("")
            lines.append(format_graph(sg, name, verbose=True).rstrip("\n"))
    if dumped:
        lines.append(f"wrote {len(dumped)} stages to {args.dump_ir}")
    print("\n".join(lines))
    return 0
