"""The Helium fully connected kernels (runtime_c/mve/fully_connected.h,
templates/mve/fully_connected_4u*.c.j2).

Owns: their constants and geometry record: 4 units per pass, VMLADAVA on 16-byte chunks;
per-tensor weights one requantization record for every block, per-channel weights (and ONNX
numerics, a scale per unit) every block's own. When they apply is the DSP kernels' test
(edgecc/lower/dsp/fc.py fc_applies, fc_pc_applies).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.layout import record
from edgecc.lower.mve import onnx as mo
from edgecc.lower.mve.blocks import mve_blocks
from edgecc.ops import Kernel, const
from edgecc.ops.fully_connected import fc_dims

MveFcGeom = record("ec_mve_fc_geom", "batches depth kp units lo hi")


def _fc_kernel(g: Graph, n: Node, per_channel: bool) -> Kernel:
    """4 units per pass, VMLADAVA on 16-byte chunks (mve/fully_connected.h): per-tensor weights
    one requantization record for every block, per-channel weights every block's own record."""
    batches, units, depth = fc_dims(g, n)
    per_channel = per_channel or n.numerics.qlinear  # (ONNX numerics: a scale per unit)
    w = const(g, n, 1).astype(np.int64)
    rq = mo.fc_rq(g, n, w, per_channel)
    fr = rq.fr
    mb = mve_blocks(w, rq.folded, fr)
    geom = MveFcGeom(batches, depth, mb.kp, units, fr.lo, fr.hi)
    scratch = 0 if depth == mb.kp or mb.kp <= 64 else mb.kp  # (short rows: a stack copy)
    if per_channel:
        return Kernel("mve/fully_connected_4u_pc.c.j2",
                      params=dict(geom=geom, fn=mo.entry("ec_mve_fully_connected_4u_pc_s8", n)),
                      consts=dict(w=mb.w, bias=mb.bias, rq=mb.rq), scratch=scratch,
                      variant=mo.tag("mve-fc-4u-pc", n),
                      reason="Helium: 4 units per pass, VMLADAVA on 16-byte chunks, per-channel "
                             "weights: each 4 units' own requantization record")
    rec = mb.rq[:12]  # per-tensor: one requantization record for every block
    return Kernel("mve/fully_connected_4u.c.j2", params=dict(geom=geom),
                  consts=dict(w=mb.w, bias=mb.bias, rq=rec), scratch=scratch, variant="mve-fc-4u",
                  reason="Helium: 4 units per pass, VMLADAVA on 16-byte chunks, vector "
                         "requantization")


def lower_fc(g: Graph, n: Node, target) -> Kernel:
    """FULLY_CONNECTED with per-tensor weights: one requantization record for every block."""
    return _fc_kernel(g, n, per_channel=False)


def lower_fc_pc(g: Graph, n: Node, target) -> Kernel:
    """FULLY_CONNECTED with per-channel weights (ec_mve_fully_connected_4u_pc_s8): every 4 units'
    own requantization record, the per-channel epilogue of the Helium convolutions."""
    return _fc_kernel(g, n, per_channel=True)
