"""EDGECC_PATCH_READ and EDGECC_PATCH_WRITE: the internal ops of patch-based (tiled) execution.

Owns the two data-movement ops edgecc/plan/tiling.py inserts; no model file contains them.

- EDGECC_PATCH_READ(x) -> p: the box attrs["region"] = (y0, y1, x0, x1) of an NHWC tensor (a
  patch with its receptive-field halo), copied row by row into its own small tensor.
- EDGECC_PATCH_WRITE(o_prev | None, p) -> o: o is o_prev with the box attrs["region"] replaced by
  p; attrs["full_shape"] is o's shape. Declared in place on (o, o_prev): the kernel never reads
  o_prev, it only writes the box, so the planner threads one full buffer through every patch.
  When a plan does not share them, the kernel first copies o_prev whole (both plans are right).
  Without o_prev (the first patch) the bytes outside the box are undefined until later patches
  write them; the numpy reference fills them with 0. The patches of a stage cover its output.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register


def _region(n: Node) -> tuple[int, int, int, int]:
    y0, y1, x0, x1 = (int(v) for v in n.attrs["region"])
    return y0, y1, x0, x1


def nhwc_region_inside(g: Graph, n: Node) -> bool:
    """the region must be a non-empty box inside a 4-D NHWC tensor"""
    full = (in_type(g, n).shape if n.op == "EDGECC_PATCH_READ"
            else tuple(n.attrs["full_shape"]))
    y0, y1, x0, x1 = _region(n)
    return len(full) == 4 and 0 <= y0 < y1 <= full[1] and 0 <= x0 < x1 <= full[2]


def infer_read(g: Graph, n: Node) -> list[TensorType | None]:
    x = in_type(g, n)
    y0, y1, x0, x1 = _region(n)
    return [TensorType((x.shape[0], y1 - y0, x1 - x0, x.shape[3]), x.dtype, x.q)]


def infer_write(g: Graph, n: Node) -> list[TensorType | None]:
    p = in_type(g, n, 1)
    return [TensorType(tuple(int(v) for v in n.attrs["full_shape"]), p.dtype, p.q)]


def reference_read(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    y0, y1, x0, x1 = _region(n)
    return [np.ascontiguousarray(ins[0][:, y0:y1, x0:x1, :])]


def reference_write(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    t = out_type(g, n)
    out = np.zeros(t.shape, t.dtype.np) if ins[0] is None else np.array(ins[0], copy=True)
    y0, y1, x0, x1 = _region(n)
    out[:, y0:y1, x0:x1, :] = ins[1]
    return [out]


def _box_params(full: tuple[int, ...], region: tuple[int, int, int, int], esize: int) -> dict:
    """Byte geometry of a box of an NHWC tensor: rows of `run` contiguous bytes."""
    b, h, w, c = full
    y0, y1, x0, x1 = region
    px = c * esize
    rows, run = y1 - y0, (x1 - x0) * px
    whole_rows = x0 == 0 and x1 == w
    return dict(batches=b, rows=1 if whole_rows else rows, run=run * rows if whole_rows else run,
                full_img=h * w * px, full_row=w * px, box_img=rows * run,
                start=(y0 * w + x0) * px)


def lower_read(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    return Kernel("edgecc_patch_read.c.j2", params=_box_params(x.shape, _region(n), x.dtype.size),
                  variant="copy")


def lower_write(g: Graph, n: Node, target) -> Kernel:
    o = out_type(g, n)
    p = _box_params(o.shape, _region(n), o.dtype.size)
    p.update(has_prev=n.inputs[0] is not None, nbytes=o.nbytes)
    # the template's copy of the previous tensor: once when there is one (a list of 0 or 1)
    return Kernel("edgecc_patch_write.c.j2", params=p, variant="copy",
                  derived=dict(copy_prev=[1] if p["has_prev"] else []))


READ = register(OpDef("EDGECC_PATCH_READ", infer_read, reference_read, lower_read,
                      [nhwc_region_inside], dtypes="any (internal: patch-based execution)",
                      reference_oracle="edgecc (internal op)"))
WRITE = register(OpDef("EDGECC_PATCH_WRITE", infer_write, reference_write, lower_write,
                       [nhwc_region_inside], dtypes="any (internal: patch-based execution)",
                       inplace=((0, 0),), reference_oracle="edgecc (internal op)"))
