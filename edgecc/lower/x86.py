"""The x86 kernel table (AVX2, with AVX-VNNI / AVX-512 paths chosen in the C at build or run time).

Owns: which x86 kernels exist, for which op, in which order they are tried. Each entry's
`applies` / `build` live with the kernel's lowering: vec.py (the convolution and fully connected
kernels x86 shares with NEON), vec_dw.py (depthwise), x86_first.py (few input channels),
x86_fc.py (16-unit fully connected blocks), x86_elt.py (ADD, AVERAGE_POOL_2D); x86_onnx.py gives
the convolution, depthwise and fully connected entries onnxruntime's epilogue for ONNX-numerics
nodes. The C is runtime_c/x86/ (x86/kernels.h: every level, chosen at run time), the calls
templates/avx2/.
"""
from __future__ import annotations

import dataclasses

from edgecc.lower import vec, vec_dw, x86_elt, x86_fc, x86_first
from edgecc.lower.table import Candidate
from edgecc.lower.x86_onnx import onnx_entry
from edgecc.metrics import count_macs, node_macs

ISA = "avx2"

CONV = [
    Candidate("CONV_2D", ISA, "conv-first", x86_first.first_applies,
              x86_first.lower_conv_2d_first),
    onnx_entry(vec.conv_entry(ISA)),
]
AS_CONV, DW = vec_dw.dw_entries(ISA, CONV)

# onnx_entry: the kernel also takes ONNX-numerics nodes, ending in onnxruntime's epilogue
TABLE: list[Candidate] = CONV + [AS_CONV, onnx_entry(DW)] + [
    onnx_entry(Candidate("FULLY_CONNECTED", ISA, "fc16", vec.fc_applies, x86_fc.lower_fc)),
    onnx_entry(vec.fc_entry(ISA)),
    onnx_entry(Candidate("FULLY_CONNECTED", ISA, "fc16-pc", vec.fc_pc_applies,
                         lambda g, n, t: vec.per_channel_kernel(x86_fc.lower_fc(g, n, t)))),
    onnx_entry(vec.fc_pc_entry(ISA)),
    Candidate("ADD", ISA, "add-lin", x86_elt.add_applies, x86_elt.lower_add_lin),
    Candidate("ADD", ISA, "add-exact", x86_elt.add_applies, x86_elt.lower_add_exact),
    Candidate("AVERAGE_POOL_2D", ISA, "avgpool", x86_elt.avgpool_applies, x86_elt.lower_avgpool),
]

# A layer of fewer MACs than this (or none: ADD, pooling) calls its kernel's `_base` entry, the
# build flags' level alone (runtime_c/x86/kernels.h): the level-2 copy of a kernel only a small
# layer runs would cost more flash than its speed is worth (hello_world_int8: 2.1x its AVX2-only
# flash with every level).
DISPATCH_MACS = 8192
# In a model of fewer MACs than this, the convolutions run the build flags' level alone: its
# inference takes a few microseconds at AVX2, and the level-2 copies of the row and block kinds
# it runs (3-7 KB each) would grow its flash by 43% (cv_conv1d, 129K MACs: 11,444 B without
# them, 16,098 with). Not higher: at 1M MACs str_ww_ref_model (826K) and cv_dscnn (652K) saved
# 11 and 19 KB but ran 2.9x and 2.2x LiteRT's latency instead of 0.99x and 0.98x. Fully
# connected layers keep dispatching: their level-2 code is small and ad01_int8 (264K MACs) runs
# 2.3x slower without it.
DISPATCH_MODEL_MACS = 200_000
ROW_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D")


def _row_kinds(g) -> set[tuple[int, int]]:
    """(kind, any-stride kind) of the 512-bit rows of g's dispatched convolutions."""
    kinds = set()
    for m in g.nodes:
        if m.op == "CONV_2D" and (node_macs(g, m) or 0) >= DISPATCH_MACS \
                and vec.conv_applies(g, m, None) is None \
                and x86_first.first_applies(g, m, None) is not None:  # conv-first runs it
            try:
                band, ps = vec.x512_layer(g, m)
            except (ValueError, IndexError, TypeError):
                continue
            kinds.add((vec.x512_kind(band, ps), vec.x512_any_stride(band)))
    return kinds


def _one_copy_per_shape(g, kind: int, band) -> int:
    """A constant-stride row kind (0-6: immediate offsets) where it is its tile shape's only
    stride in the model, else the shape's any-stride kind: a model whose layers run one tile
    shape at two pixel strides carries one copy of it (vww_96_int8: 194.8 -> 171.3 KB)."""
    if kind >= 7:
        return kind
    shape = vec.x512_any_stride(band)
    clash = any(s == shape and k != kind for k, s in _row_kinds(g))
    return shape if clash else kind


def _gated(c: Candidate) -> Candidate:
    def build(g, n, t):
        k = c.build(g, n, t)
        big = (node_macs(g, n) or 0) >= DISPATCH_MACS and (
            n.op not in ROW_OPS or count_macs(g) >= DISPATCH_MODEL_MACS)
        k.params["lvl"] = "" if big else "_base"
        k.params["dispatch"] = [1] if big else []  # a template's run-time level check: 0 or 1
        if "kind" in k.params and k.params["lvl"] == "":
            k.params["kind"] = _one_copy_per_shape(g, k.params["kind"], k.params["band"])
        return k
    return dataclasses.replace(c, build=build)


TABLE = [_gated(c) for c in TABLE]
