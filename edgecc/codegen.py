"""Rendering the generated C: NAME.h, NAME.c, NAME_weights.c and the runtime headers they use.

Owns: the Jinja2 environment (StrictUndefined, no autoescape), the C spelling of every number and
array, symbol naming (always through edgecc.names), and the file set: only the runtime_c/ headers
the chosen kernels name (Kernel.headers) and what those include (`closure`: the C is the one
source of truth for what a header depends on), in
their runtime_c/ sub-folders. Constant arrays with
identical contents are emitted once (later layers use the first symbol). Templates only loop over
what this module prepared; every number is computed in Python. Output is deterministic: the same
model and options give byte-identical files.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2
import numpy as np
from jinja2 import meta

from edgecc.fileio import write_folder
from edgecc.ir import Graph
from edgecc.lower import Lowered
from edgecc.names import c_comment, c_ident, c_string_text
from edgecc.numerics.io import HALF_AWAY, HALF_EVEN, RULES, quantizable
from edgecc.plan import Plan
from edgecc.resources import data_dir


# Every output includes the portable requantization helpers (ec_clamp, ec_mbqm, ...).
BASE = ("edgecc_rt.h",)
# NAME.h includes the typed I/O codes and quantize/dequantize arithmetic (docs/design.md)
IO_HEADER = "edgecc_io.h"
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def includes_of(header: str) -> list[str]:
    """The runtime_c/ headers `header` includes with `#include "..."`, as runtime_c/ paths (an
    output keeps runtime_c/'s sub-folders, so the relative includes work unchanged there)."""
    text = (data_dir("runtime_c") / header).read_text()
    here = posixpath.dirname(header)
    return [posixpath.normpath(posixpath.join(here, inc)) for inc in _INCLUDE.findall(text)]


def closure(headers) -> list[str]:
    """`headers` plus everything they include, transitively; sorted (deterministic output)."""
    seen: set[str] = set()
    todo = list(headers)
    while todo:
        h = todo.pop()
        if h in seen:
            continue
        if h.startswith("../") or not (data_dir("runtime_c") / h).is_file():
            raise FileNotFoundError(f"runtime header {h} not found under runtime_c/")
        seen.add(h)
        todo.extend(includes_of(h))
    return sorted(seen)


def model_headers(kernel_headers) -> list[str]:
    """The headers NAME.c includes: BASE first, then the kernels' own ones in sorted order."""
    extra = sorted(set(kernel_headers) - set(BASE))
    return [*BASE, *extra]


def template_env() -> jinja2.Environment:
    """The one Jinja2 environment over templates/ (the generated C, the build files of
    edgecc/build/: linker scripts, startup, firmware files)."""
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


def describe_io(g: Graph, v: str) -> str:
    """An input's or output's dtype, shape and quantization, for the comment in NAME.h."""
    t = g.type(v)
    text = f"{t.dtype.c} {list(t.shape)} ({t.dtype.value[0]})"
    if t.q is not None and not t.q.per_channel:
        s, zp = float(np.float32(t.q.scale[0])), t.q.zero_point[0]
        text += f", scale {s:.9g}, zero point {zp}"
    elif t.q is not None:
        text += f", per-channel quantization on axis {t.q.axis}"
    elif t.dtype.value[0] == "float32":
        text += ", not quantized"
    return c_comment(text, 200)


def _c_float_short(x: float) -> str:
    """A finite float32 as its shortest C literal that reads back to the same bits (0.05f)."""
    text = str(np.float32(x))
    return text + ("f" if ("." in text or "e" in text) else ".0f")


def _dims(shape: tuple[int, ...]) -> str:
    """A shape as a C initializer; a scalar (rank 0) as {1}, since C has no empty initializer."""
    return "{" + ", ".join(str(int(d)) for d in (shape or (1,))) + "}"


def io_record(g: Graph, v: str, kind: str, index: int, rounding: str) -> dict:
    """What NAME.h says of one input or output (docs/design.md "Typed I/O"): its name, dtype,
    shape, element count, and for a quantized tensor its scale, zero point and the helpers'
    arguments (quantize for 8- and 16-bit types, by the format's rounding rule)."""
    t = g.type(v)
    quant = []
    if quantizable(t):
        info = np.iinfo(t.dtype.np)
        zp = int(t.q.zero_point[0])
        small = t.dtype.size <= 2
        quant.append(dict(
            scale=_c_float_short(float(t.q.scale[0])), zero_point=f"({zp})" if zp < 0 else str(zp),
            quantize=[dict(qmin=int(info.min), qmax=int(info.max),
                           half_even=int(rounding == HALF_EVEN), rule=RULES[rounding])]
            if small else [],
            dequantize="ec_io_dequantize" if small else "ec_io_dequantize_wide"))
    return dict(KIND=f"{kind.upper()}{index}", kind=f"{kind}{index}",
                name=c_string_text(g.value(v).label), dtype=f"EDGECC_{t.dtype.name}",
                ctype=t.dtype.c, rank=len(t.shape), dims=_dims(t.shape), elements=t.numel,
                quant=quant)


def _state_resets(g: Graph, plan: Plan, ident: str, consts: list[ConstArray]) -> list[dict]:
    """What `name_reset()` writes into each variable tensor of the state region: one byte value
    repeated (memset) when its reset value is that, else a const array copied in (added to
    `consts`)."""
    out = []
    for k, v in enumerate(plan.state):
        data = np.ascontiguousarray(g.value(v).data, dtype=g.type(v).dtype.np)
        raw = np.frombuffer(data.tobytes(), np.uint8)
        item = dict(offset=plan.offsets[v], size=int(raw.size), desc=describe_value(g, v))
        if raw.size and np.all(raw == raw[0]):
            item["fill"] = int(raw[0])
        else:
            sym = f"{ident}_state{k}_reset"
            consts.append(ConstArray(sym, "uint8_t", max(raw.size, 1), c_literal_list(raw) or "0"))
            item["source"] = sym  # not "copy": Jinja would find dict.copy
        out.append(item)
    return out


def _unclaimed_const_inputs(env: jinja2.Environment, lw: Lowered, g: Graph) -> dict:
    """Constant inputs the template reads as `in{i}` that the kernel did not emit (e.g. a data
    input that is a constant): emitted as they are, so the template always has its pointer."""
    src = env.loader.get_source(env, lw.template_path)[0]
    used = meta.find_undeclared_variables(env.parse(src))
    return {f"in{i}": g.value(v).data for i, v in enumerate(lw.node.inputs)
            if v is not None and g.value(v).is_const and not g.value(v).variable
            and f"in{i}" in used
            and f"in{i}" not in lw.kernel.consts}


IO_PARAMS = ", const void *const ec_in[], void *const ec_out[]"


def value_address(plan: Plan, v: str) -> str:
    """C expression of the bytes of value v: in the arena, or (--io external) in the caller's
    input or output buffer that holds it."""
    ext = plan.external.get(v)
    if ext is None:
        return f"(arena + {plan.offsets[v]})"
    return f"((uint8_t *)(uintptr_t)ec_{ext[0]}[{ext[1]}])"


def render(g: Graph, lowered: list[Lowered], plan: Plan, name: str,
           weights_section: str | None = None, rounding: str = HALF_AWAY) -> dict[str, str]:
    """The generated files: NAME.h/.c/_weights.c and the runtime headers they use. `rounding`
    is the model format's quantization rule (edgecc/numerics/io.py), NAME.h's helpers follow it."""
    env = template_env()
    external = bool(plan.external)
    ident = c_ident(name)
    consts: list[ConstArray] = []
    emitted: dict[tuple[str, int, str], str] = {}  # (C type, count, literal) -> first symbol
    layers = []
    for li, lw in enumerate(lowered):
        n, k = lw.node, lw.kernel
        fn = f"{ident}_layer{li}_{c_ident(n.op.lower())}"
        csyms = {}
        for key, arr in {**k.consts, **_unclaimed_const_inputs(env, lw, g)}.items():
            sym = f"{ident}_l{li}_{c_ident(key)}"
            arr = np.asarray(arr)
            const = ConstArray(sym, _ctype(arr), max(arr.size, 1), c_literal_list(arr) or "0")
            # identical arrays (the clones of a tiled layer, equal tables) are emitted once
            same = emitted.setdefault((const.ctype, const.count, const.body), sym)
            if same == sym:
                consts.append(const)
            csyms[key] = same
        ctx = {"p": {**k.params, **k.derived}, "c": csyms}
        for i, v in enumerate(n.inputs):
            if v is not None and g.value(v).variable:  # state region: read and updated in place
                ctx[f"in{i}"] = f"(({g.type(v).dtype.c} *)(arena + {plan.offsets[v]}))"
            elif v is not None and not g.value(v).is_const:
                t = g.type(v).dtype.c
                ctx[f"in{i}"] = f"((const {t} *){value_address(plan, v)})"
            elif v is not None and f"in{i}" in csyms:  # a constant input the kernel emitted
                ctx[f"in{i}"] = f"((const {g.type(v).dtype.c} *){csyms[f'in{i}']})"
        ctx["ins"] = [ctx.get(f"in{i}") for i in range(len(n.inputs))]
        ctx["outs"] = [f"(({g.type(v).dtype.c} *){value_address(plan, v)})" for v in n.outputs]
        for i, v in enumerate(n.outputs):
            ctx[f"out{i}"] = ctx["outs"][i]
        if k.scratch:
            ctx["scratch"] = f"(arena + {plan.scratch[g.nodes.index(n)]})"
        body = env.get_template(lw.template_path).render(**ctx)
        if external:  # a layer may touch only the arena, or only the caller's buffers
            body = "    (void)arena;\n    (void)ec_in;\n    (void)ec_out;\n" + body
        traces = [(int(v[1:]), plan.offsets.get(v, -1), g.type(v).nbytes) for v in n.outputs
                  if v[1:].isdigit()]
        io_traces = [(int(v[1:]), value_address(plan, v), g.type(v).nbytes) for v in n.outputs
                     if v[1:].isdigit()]
        layers.append(dict(
            fn=fn, body=body, op=n.op, index=n.index, variant=k.variant,
            template=lw.template_path,
            inputs=[describe_value(g, v) for v in n.inputs if v is not None],
            outputs=[describe_value(g, v) for v in n.outputs],
            params=c_comment(", ".join(f"{a}={b}" for a, b in k.params.items()
                                       if not isinstance(b, (list, tuple))), 300),
            traces=traces, io_traces=io_traces))
    ios = dict(
        inputs=[dict(offset=plan.offsets.get(v, -1), size=g.type(v).nbytes,
                     desc=describe_value(g, v), api=describe_io(g, v)) for v in g.inputs],
        outputs=[dict(offset=plan.offsets.get(v, -1), size=g.type(v).nbytes,
                      desc=describe_value(g, v), api=describe_io(g, v)) for v in g.outputs],
        io=[*(io_record(g, v, "input", i, rounding) for i, v in enumerate(g.inputs)),
            *(io_record(g, v, "output", i, rounding) for i, v in enumerate(g.outputs))])
    common = dict(NAME=ident.upper(), name=ident.lower(), model=c_comment(g.name, 60),
                  arena=plan.arena, lower_bound=plan.model_lower_bound, layers=layers,
                  consts=consts,
                  runtime=model_headers(h for lw in lowered for h in lw.kernel.headers),
                  state=_state_resets(g, plan, ident, consts),
                  io_external=external, io_params=IO_PARAMS if external else "",
                  section_attr=(f'__attribute__((section("{weights_section}"))) '
                                if weights_section else ""), **ios,
                  # onnxruntime's float requantization must not be contracted into FMAs
                  fp_contract_off=any(lw.node.numerics.exact_float_steps for lw in lowered))
    files = {
        f"{ident.lower()}.h": env.get_template("model/model.h.j2").render(**common),
        f"{ident.lower()}.c": env.get_template("model/model.c.j2").render(**common),
        f"{ident.lower()}_weights.c": env.get_template("model/weights.c.j2").render(**common),
    }
    rt = data_dir("runtime_c")
    for f in closure([*common["runtime"], IO_HEADER]):  # NAME.c's and NAME.h's, with their own
        files[f] = (rt / f).read_text()
    return files


def write_files(files: dict[str, str], out: Path) -> list[Path]:
    """Write the output folder through the output layer (edgecc/fileio.py): staged, committed
    old-or-new, never through a link, every path inside `out`."""
    return write_folder(files, out, "-o")
