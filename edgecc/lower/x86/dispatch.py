"""Which x86 layers call the run-time choice of instruction-set level (runtime_c/x86/kernels.h).

Owns: the thresholds (a layer's MACs, a model's MACs and constant bytes, an ADD's elements)
under which a layer calls its kernel's `_base` entry, the build flags' level alone, so the
level-2 copies of kernels only small layers run cost no flash; and the 512-bit tile a
dispatched convolution takes where the model has a smaller one anyway. `gated` applies both to
every entry of the x86 table.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from edgecc.lower.table import Candidate
from edgecc.lower.vec.conv import conv_applies, x512_kind, x512_layer
from edgecc.lower.x86.conv import first_applies
from edgecc.metrics import const_bytes, count_macs, node_macs

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
                and conv_applies(g, m, None) is None \
                and first_applies(g, m, None) is not None:  # conv-first runs it
            try:
                if x512_layer(g, m)[0][0] == 8:
                    return True
            except (ValueError, IndexError, TypeError):
                continue
    return False


def _few_tiles(g, n, k) -> None:
    """A layer of 4-pixel x 64-channel tiles runs 8 x 32 ones where the model has those anyway:
    one tile's code, not two (pretrainedResnet_quant: -0.9 KB, as fast)."""
    band = k.params.get("band")
    if band and band[0] == 4 and _p8_tiles(g):
        band = x512_layer(g, n, p8=True)[0]
        if band[0]:
            k.params["band"] = band


def gated(c: Candidate) -> Candidate:
    """c, its Kernel told whether the layer calls the run-time level choice (`lvl`,
    `dispatch`) and, with its band final, the kind of its 512-bit rows."""
    def build(g, n, t):
        k = c.build(g, n, t)
        big = (node_macs(g, n) or 0) >= DISPATCH_MACS and (
            n.op not in ROW_OPS or count_macs(g) >= DISPATCH_MODEL_MACS
            and const_bytes(g) >= DISPATCH_MODEL_BYTES) or (
            n.op == "ADD" and int(np.prod(g.type(n.outputs[0]).shape)) >= DISPATCH_ADD)
        k.params["lvl"] = "" if big else "_base"
        k.params["dispatch"] = [1] if big else []  # a template's run-time level check: 0 or 1
        # the form of the requantization initializer (templates/x86/_rq.j2)
        k.derived["rq"] = ("onnx" if k.params.get("onnx") else
                           "fast" if k.params.get("fast") else "exact")
        if "kind" in k.params:  # the band, and the epilogue (ONNX's is not the fast one), final
            if big:
                _few_tiles(g, n, k)
            k.params["kind"] = x512_kind(k.params["band"], k.params["geom"].ocp,
                                         k.params.get("fast", 0))
        return k
    return dataclasses.replace(c, build=build)

