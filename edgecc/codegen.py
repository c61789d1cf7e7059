"""Rendering the generated C: NAME.h, NAME.c, NAME_weights.c and the runtime headers they use.

Owns: the Jinja2 environment (StrictUndefined, no autoescape), the C spelling of every number and
array, symbol naming (always through edgecc.names), and the file set: only the runtime_c/ headers
the chosen kernels name (Kernel.headers) and what those include (edgecc/lower/headers.py), in
their runtime_c/ sub-folders. Constant arrays with
identical contents are emitted once (later layers use the first symbol). Templates only loop over
what this module prepared; every number is computed in Python. Output is deterministic: the same
model and options give byte-identical files.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import jinja2
import numpy as np

from edgecc.ir import Graph
from edgecc.lower import Lowered
from edgecc.lower.headers import closure, model_headers
from edgecc.names import c_comment, c_ident
from edgecc.plan import Plan
from edgecc.resources import data_dir


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True, autoescape=False)


def _c_float(x: float) -> str:
    """A float32 as a C literal that reads back to the same bits (inf/nan as expressions)."""
    if np.isnan(x):
        return "(0.0f / 0.0f)"
    if np.isinf(x):
        return "(1.0f / 0.0f)" if x > 0 else "(-1.0f / 0.0f)"
    text = f"{float(np.float32(x)):.9g}"
    return text + ("f" if ("." in text or "e" in text) else ".0f")


def c_literal_list(a: np.ndarray, per_line: int = 24) -> str:
    arr = np.asarray(a)
    flat = arr.ravel().tolist()
    fmt = _c_float if arr.dtype.kind == "f" else (lambda x: str(int(x)))
    lines = [", ".join(fmt(x) for x in flat[i:i + per_line]) for i in range(0, len(flat), per_line)]
    return ",\n    ".join(lines)


@dataclass
class ConstArray:
    symbol: str
    ctype: str
    count: int
    body: str


def _ctype(a: np.ndarray) -> str:
    return {np.dtype("int8"): "int8_t", np.dtype("uint8"): "uint8_t", np.dtype("int16"): "int16_t",
            np.dtype("uint16"): "uint16_t",
            np.dtype("int32"): "int32_t", np.dtype("uint32"): "uint32_t",
            np.dtype("int64"): "int64_t", np.dtype("float32"): "float",
            np.dtype("bool"): "uint8_t"}[np.asarray(a).dtype]


def describe_value(g: Graph, v: str) -> str:
    val = g.value(v)
    label = f" '{c_comment(val.label, 60)}'" if val.label else ""
    return f"{v}{label} {c_comment(str(val.type), 100)}"


def render(g: Graph, lowered: list[Lowered], plan: Plan, name: str) -> dict[str, str]:
    env = _env()
    ident = c_ident(name)
    consts: list[ConstArray] = []
    emitted: dict[tuple[str, int, str], str] = {}  # (C type, count, literal) -> first symbol
    layers = []
    for li, lw in enumerate(lowered):
        n, k = lw.node, lw.kernel
        fn = f"{ident}_layer{li}_{c_ident(n.op.lower())}"
        csyms = {}
        for key, arr in k.consts.items():
            sym = f"{ident}_l{li}_{c_ident(key)}"
            arr = np.asarray(arr)
            const = ConstArray(sym, _ctype(arr), max(arr.size, 1), c_literal_list(arr) or "0")
            # identical arrays (the clones of a tiled layer, equal tables) are emitted once
            same = emitted.setdefault((const.ctype, const.count, const.body), sym)
            if same == sym:
                consts.append(const)
            csyms[key] = same
        ctx = {"p": k.params, "c": csyms}
        for i, v in enumerate(n.inputs):
            if v is not None and not g.value(v).is_const:
                t = g.type(v).dtype.c
                ctx[f"in{i}"] = f"((const {t} *)(arena + {plan.offsets[v]}))"
            elif v is not None and f"in{i}" in csyms:  # a constant input the kernel emitted
                ctx[f"in{i}"] = f"((const {g.type(v).dtype.c} *){csyms[f'in{i}']})"
        ctx["ins"] = [ctx.get(f"in{i}") for i in range(len(n.inputs))]
        ctx["outs"] = [f"(({g.type(v).dtype.c} *)(arena + {plan.offsets[v]}))" for v in n.outputs]
        for i, v in enumerate(n.outputs):
            ctx[f"out{i}"] = f"(({g.type(v).dtype.c} *)(arena + {plan.offsets[v]}))"
        if k.scratch:
            ctx["scratch"] = f"(arena + {plan.scratch[g.nodes.index(n)]})"
        body = env.get_template(lw.template_path).render(**ctx)
        traces = [(int(v[1:]), plan.offsets[v], g.type(v).nbytes) for v in n.outputs
                  if v[1:].isdigit()]
        layers.append(dict(
            fn=fn, body=body, op=n.op, index=n.index, variant=k.variant,
            template=lw.template_path,
            inputs=[describe_value(g, v) for v in n.inputs if v is not None],
            outputs=[describe_value(g, v) for v in n.outputs],
            params=c_comment(", ".join(f"{a}={b}" for a, b in k.params.items()
                                       if not isinstance(b, (list, tuple))), 300),
            traces=traces))
    ios = dict(
        inputs=[dict(offset=plan.offsets[v], size=g.type(v).nbytes, desc=describe_value(g, v))
                for v in g.inputs],
        outputs=[dict(offset=plan.offsets[v], size=g.type(v).nbytes, desc=describe_value(g, v))
                 for v in g.outputs])
    common = dict(NAME=ident.upper(), name=ident.lower(), model=c_comment(g.name, 60),
                  arena=plan.arena, lower_bound=plan.lower_bound, layers=layers, consts=consts,
                  runtime=model_headers(h for lw in lowered for h in lw.kernel.headers), **ios)
    files = {
        f"{ident.lower()}.h": env.get_template("model/model.h.j2").render(**common),
        f"{ident.lower()}.c": env.get_template("model/model.c.j2").render(**common),
        f"{ident.lower()}_weights.c": env.get_template("model/weights.c.j2").render(**common),
    }
    rt = data_dir("runtime_c")
    for f in closure(common["runtime"]):  # the headers NAME.c names and what they include
        files[f] = (rt / f).read_text()
    return files


def write_files(files: dict[str, str], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fname, text in sorted(files.items()):
        p = out / fname  # runtime headers keep their runtime_c/ sub-folder ("dsp/conv_2d.h")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        paths.append(p)
    return paths
