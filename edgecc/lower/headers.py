"""Which runtime_c/ headers a kernel's C needs, and the closure codegen copies into OUT.

Owns: the table template -> runtime headers (until each lowering table entry states
`Kernel.headers` itself), the portable base every output includes, and following the
`#include "..."` lines of the headers themselves to the full set of files an output needs (the C is
the one source of truth for what a header depends on). Header names are paths relative to
runtime_c/ ("dsp/conv_2d.h"); an output keeps the same sub-folders, so the relative includes in the
headers work unchanged there.
"""
from __future__ import annotations

import posixpath
import re

from edgecc.resources import data_dir

# Every output includes the portable requantization helpers (ec_clamp, ec_mbqm, ...).
BASE = ("edgecc_rt.h",)

# template path (relative to templates/) -> the headers its C calls into, beyond BASE
TEMPLATE_HEADERS: dict[str, tuple[str, ...]] = {
    "c/softmax.c.j2": ("edgecc_fixedpoint.h",),
    "c/softmax_s16.c.j2": ("edgecc_fixedpoint.h",),
    "c/log_softmax.c.j2": ("edgecc_fixedpoint.h", "edgecc_log.h"),
    "c/logistic_s16.c.j2": ("edgecc_lstm.h",),
    "c/tanh_s16.c.j2": ("edgecc_lstm.h",),
    "c/unidirectional_sequence_lstm.c.j2": ("edgecc_lstm.h",),
    "c/svdf.c.j2": ("edgecc_lstm.h",),
    "c/add_n.c.j2": ("edgecc_fixedpoint.h",),
    "c/cumsum.c.j2": ("edgecc_fixedpoint.h",),
    "c/div_s8.c.j2": ("edgecc_fixedpoint.h",),
    "c/l2_normalization.c.j2": ("edgecc_math.h",),
    "c/l2_normalization_s8.c.j2": ("edgecc_math.h",),
    "c/pool_2d_float.c.j2": ("edgecc_math.h",),
    "c/softmax_float.c.j2": ("edgecc_math.h",),
    "c/conv_2d_ortf_near.c.j2": ("edgecc_ort_near.h",),
    "c/fully_connected_ortf_near.c.j2": ("edgecc_ort_near.h",),
    "c/fully_connected_ortf_near_small.c.j2": ("edgecc_ort_near.h",),
    "dsp/add_lut.c.j2": ("dsp/add.h",),
    "dsp/add_lin2.c.j2": ("dsp/add.h",),
    "dsp/add_onnx_fma.c.j2": ("dsp/add.h",),
    "dsp/add_lut_row.c.j2": ("dsp/add.h",),
    "dsp/add_lin_row.c.j2": ("dsp/add.h",),
    "dsp/mul_onnx_row.c.j2": ("dsp/mul.h",),
    "dsp/conv_2d_4px.c.j2": ("dsp/conv_2d.h",),
    "dsp/conv_2d_4px_near.c.j2": ("dsp/conv_2d_near.h",),
    "dsp/fc_near.c.j2": ("dsp/fc_near.h",),
    "dsp/depthwise_conv_2d_planes.c.j2": ("dsp/depthwise_conv_2d.h",),
    "dsp/depthwise_conv_2d_direct.c.j2": ("dsp/depthwise_conv_2d_direct.h",),
    "dsp/depthwise_conv_2d_one.c.j2": ("dsp/depthwise_conv_2d_direct.h",),
    "dsp/fully_connected_4u.c.j2": ("dsp/fully_connected.h",),
    "dsp/fully_connected_4u_pc.c.j2": ("dsp/fully_connected.h",),
    "dsp/fully_connected_4u_rd.c.j2": ("dsp/fully_connected_rd.h",),
    "dsp/fully_connected_4u_rd_onnx.c.j2": ("dsp/fully_connected_rd.h",),
    "dsp/fully_connected_4u_ub_onnx.c.j2": ("dsp/fully_connected.h",),
    "dsp/pool_2d.c.j2": ("dsp/pool_2d.h",),
    "mve/add_lut.c.j2": ("mve/add.h",),
    "mve/add_fma_onnx.c.j2": ("mve/add.h",),
    "mve/conv_2d_4ch.c.j2": ("mve/conv_2d.h",),
    "mve/conv_2d_2ch3px.c.j2": ("mve/conv_2d.h",),
    "mve/conv_2d_ring.c.j2": ("mve/conv_2d_ring.h",),
    "mve/depthwise_conv_2d_gather.c.j2": ("mve/depthwise_conv_2d.h",),
    "mve/fully_connected_4u.c.j2": ("mve/fully_connected.h",),
    "mve/fully_connected_4u_pc.c.j2": ("mve/fully_connected.h",),
    "mve/pool_2d.c.j2": ("mve/pool_2d.h",),
    "neon/conv_2d_4px.c.j2": ("neon/conv_2d.h",),
    "neon/depthwise_conv_2d_taps.c.j2": ("neon/depthwise_conv_2d.h",),
    "neon/fully_connected_quads.c.j2": ("neon/fully_connected.h",),
    # every x86 layer: the kernels at each instruction-set level and the run-time choice
    "avx2/add_lin.c.j2": ("x86/kernels.h",),
    "avx2/add_exact.c.j2": ("x86/kernels.h",),
    "avx2/pool_2d_avg.c.j2": ("x86/kernels.h",),
    "avx2/conv_2d_4px.c.j2": ("x86/kernels.h",),
    "avx2/conv_2d_first.c.j2": ("x86/kernels.h",),
    "avx2/depthwise_conv_2d_3x3.c.j2": ("x86/kernels.h",),
    "avx2/depthwise_conv_2d_taps.c.j2": ("x86/kernels.h",),
    "avx2/fully_connected_quads.c.j2": ("x86/kernels.h",),
    "avx2/fully_connected_stream.c.j2": ("x86/kernels.h",),
    "neon/add_exact.c.j2": ("neon/add.h",),
    "neon/add_fma.c.j2": ("neon/add.h",),
    "neon/mul_rows.c.j2": ("neon/mul.h",),
}

# Templates whose C expression comes from Python (params["expr"], e.g. "ec_expf(v)"): the float
# functions it may call are edgecc_math.h's, needed only when the expression names one.
EXPR_TEMPLATES = ("c/float_unary.c.j2", "c/binary_expr.c.j2", "c/cast.c.j2")
_EC_CALL = re.compile(r"\bec_\w+\s*\(")

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def headers_for(template_path: str, params: dict | None = None) -> tuple[str, ...]:
    """The headers the template at `template_path` (e.g. "dsp/conv_2d_4px.c.j2") names, with
    `params` its kernel's parameters (an expression template's C expression)."""
    if template_path in EXPR_TEMPLATES and _EC_CALL.search(str((params or {}).get("expr", ""))):
        return ("edgecc_math.h",)
    return TEMPLATE_HEADERS.get(template_path, ())


def includes_of(header: str) -> list[str]:
    """The runtime_c/ headers `header` includes with `#include "..."`, as runtime_c/ paths."""
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
