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

import numpy as np

from edgecc.lower import vec, vec_dw, x86_elt, x86_fc, x86_first
from edgecc.lower.table import Candidate
from edgecc.lower.x86_onnx import onnx_entry
from edgecc.metrics import const_bytes, count_macs, node_macs

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
# Nor in a model of fewer constant bytes than this: the level-2 code of its convolutions (the
# 512-bit band driver, output stage and a tile, the few-channel first layer: about 4.5 KB) would
# outweigh the weights it serves. cv_autoenc (6.1M MACs on 3.5 KB of weights): 22,982 B of
# x86-avx2 flash with it, 16,758 without (1.28 and 0.94 times its AVX2-only build before the
# dispatch work); cv_dscnn (6.6 KB) keeps dispatching.
DISPATCH_MODEL_BYTES = 4608
# An ADD of at least this many output elements dispatches too: pretrainedResnet_quant's three
# (16K, 8K, 4K elements; 7.6% of its time at AVX2) run 3.8% faster overall at level 2 for
# 1.1 KB, which keeps it under LiteRT's latency with its 512-bit convolutions' shared code.
DISPATCH_ADD = 8192


def _p8_tiles(g) -> bool:
    """Whether a dispatched convolution of g runs the 512-bit tiles of 8 pixels x 32 channels."""
    for m in g.nodes:
        if m.op == "CONV_2D" and (node_macs(g, m) or 0) >= DISPATCH_MACS \
                and vec.conv_applies(g, m, None) is None \
                and x86_first.first_applies(g, m, None) is not None:  # conv-first runs it
            try:
                if vec.x512_layer(g, m)[0][0] == 8:
                    return True
            except (ValueError, IndexError, TypeError):
                continue
    return False


def _few_tiles(g, n, k) -> None:
    """A layer of 4-pixel x 64-channel tiles runs 8 x 32 ones where the model has those anyway:
    one tile's code, not two (pretrainedResnet_quant: -0.9 KB, as fast)."""
    band = k.params.get("band")
    if band and band[0] == 4 and _p8_tiles(g):
        band = vec.x512_layer(g, n, p8=True)[0]
        if band[0]:
            k.params["band"] = band


def _gated(c: Candidate) -> Candidate:
    def build(g, n, t):
        k = c.build(g, n, t)
        big = (node_macs(g, n) or 0) >= DISPATCH_MACS and (
            n.op not in ROW_OPS or count_macs(g) >= DISPATCH_MODEL_MACS
            and const_bytes(g) >= DISPATCH_MODEL_BYTES) or (
            n.op == "ADD" and int(np.prod(g.type(n.outputs[0]).shape)) >= DISPATCH_ADD)
        k.params["lvl"] = "" if big else "_base"
        k.params["dispatch"] = [1] if big else []  # a template's run-time level check: 0 or 1
        # the form of the requantization initializer (templates/avx2/_rq.j2)
        k.derived["rq"] = ("onnx" if k.params.get("onnx") else
                           "fast" if k.params.get("fast") else "exact")
        if "kind" in k.params:  # the band, and the epilogue (ONNX's is not the fast one), final
            if big:
                _few_tiles(g, n, k)
            k.params["kind"] = vec.x512_kind(k.params["band"], k.params["geom"].ocp,
                                             k.params.get("fast", 0))
        return k
    return dataclasses.replace(c, build=build)


TABLE = [_gated(c) for c in TABLE]
