"""The Cortex-M DSP and Helium pools (runtime_c/dsp/pool_2d.h, runtime_c/mve/pool_2d.h;
templates/{dsp,mve}/pool_2d.c.j2).

Owns: when the int8 AVERAGE_POOL_2D / MAX_POOL_2D kernels apply, their geometry record (one C
struct, ec_dsp_pool_geom, for both ISAs) and the Kernel of either ISA: DSP SXTAB16 sums of 8
channels / SSUB8+SEL maxima of 4; Helium 16 channels per vector.
"""
from __future__ import annotations

from edgecc.ir import DType, Graph, Node
from edgecc.lower.layout import record
from edgecc.ops import Kernel, in_type
from edgecc.ops._conv_common import act_range
from edgecc.ops.pool_2d import pool_geometry

PoolGeom = record("ec_dsp_pool_geom",
                  "batches in_h in_w c out_h out_w fh fw s_h s_w pad_h pad_w lo hi")


def pool_applies(g: Graph, n: Node, target) -> str | None:
    """int8; averages over windows of at most 256 taps, whose int16 sums cannot overflow."""
    if in_type(g, n).dtype != DType.INT8:
        return "int16: portable kernel"
    d = pool_geometry(g, n)
    if n.op == "AVERAGE_POOL_2D" and d["fh"] * d["fw"] > 256:
        return "windows over 256 taps: portable kernel"
    return None


def pool_kernel(g: Graph, n: Node, isa: str) -> Kernel:
    """The DSP (SXTAB16 sums of 8 channels / SSUB8+SEL maxima of 4) or Helium (16 channels per
    vector) pool kernel."""
    d = pool_geometry(g, n)
    average = n.op == "AVERAGE_POOL_2D"
    lo, hi = act_range(g, n)
    kind = "avgpool" if average else "maxpool"
    geom = PoolGeom(d["batches"], d["in_h"], d["in_w"], d["depth"], d["out_h"], d["out_w"], d["fh"],
            d["fw"], d["stride_h"], d["stride_w"], d["pad_h"], d["pad_w"], lo, hi)
    how = ("int16 sums of 16 channels per vector" if isa == "mve" else
           "SXTAB16 int16 sums, 8 channels at a time") if average else \
        ("VMAX.S8 on 16 channels" if isa == "mve" else "SSUB8 + SEL on 4 channels")
    return Kernel(f"{isa}/pool_2d.c.j2",
                  params=dict(geom=geom, fn=f"ec_{isa}_pool_2d_{kind[:3]}_s8"),
                  variant=f"{isa}-{kind}",
                  reason=f"{'Helium' if isa == 'mve' else 'Cortex-M DSP'}: {how}")


def lower_pool(g: Graph, n: Node, target) -> Kernel:
    """The DSP pool kernel of n (AVERAGE_POOL_2D or MAX_POOL_2D)."""
    return pool_kernel(g, n, "dsp")
