"""The portable choice's runtime headers: which runtime_c/ headers a portable kernel's C needs.

Owns: the map from portable template (templates/c/, the op's own kernel: ops/<op>.py `lower`)
to the headers its C calls into beyond edgecc_rt.h, which every output includes; an expression
template's (params["expr"], e.g. "ec_expf(v)") are edgecc_math.h's float functions, needed only
when the expression names one. The optimized kernels' headers are their table entries'
(edgecc/lower/<isa>/table.py). Header names are paths relative to runtime_c/.
"""
from __future__ import annotations

import re

# template file under templates/c/ -> the headers its C calls into, beyond edgecc_rt.h
TEMPLATE_HEADERS: dict[str, tuple[str, ...]] = {
    "softmax.c.j2": ("edgecc_fixedpoint.h",),
    "softmax_s16.c.j2": ("edgecc_fixedpoint.h",),
    "log_softmax.c.j2": ("edgecc_fixedpoint.h", "edgecc_log.h"),
    "logistic_s16.c.j2": ("edgecc_lstm.h",),
    "tanh_s16.c.j2": ("edgecc_lstm.h",),
    "unidirectional_sequence_lstm.c.j2": ("edgecc_lstm.h",),
    "svdf.c.j2": ("edgecc_lstm.h",),
    "signal_rfft.c.j2": ("edgecc_signal.h",),
    "signal_filter_bank_square_root.c.j2": ("edgecc_signal.h",),
    "signal_filter_bank_log.c.j2": ("edgecc_signal.h",),
    "signal_pcan.c.j2": ("edgecc_signal.h",),
    "add_n.c.j2": ("edgecc_fixedpoint.h",),
    "cumsum.c.j2": ("edgecc_fixedpoint.h",),
    "div_s8.c.j2": ("edgecc_fixedpoint.h",),
    "l2_normalization.c.j2": ("edgecc_math.h",),
    "l2_normalization_s8.c.j2": ("edgecc_math.h",),
    "pool_2d_float.c.j2": ("edgecc_math.h",),
    "softmax_float.c.j2": ("edgecc_math.h",),
    "conv_2d_ortf_near.c.j2": ("edgecc_ort_near.h",),
    "fully_connected_ortf_near.c.j2": ("edgecc_ort_near.h",),
    "fully_connected_ortf_near_small.c.j2": ("edgecc_ort_near.h",),
}

# Templates whose C expression comes from Python: the float functions it may call
EXPR_TEMPLATES = ("float_unary.c.j2", "binary_expr.c.j2", "cast.c.j2")
_EC_CALL = re.compile(r"\bec_\w+\s*\(")


def headers_for(template_path: str, params: dict | None = None) -> tuple[str, ...]:
    """The headers the portable template at `template_path` (e.g. "c/softmax.c.j2") names, with
    `params` its kernel's parameters (an expression template's C expression); () for a template
    outside templates/c/."""
    folder, _, name = template_path.rpartition("/")
    if folder != "c":
        return ()
    if name in EXPR_TEMPLATES and _EC_CALL.search(str((params or {}).get("expr", ""))):
        return ("edgecc_math.h",)
    return TEMPLATE_HEADERS.get(name, ())
