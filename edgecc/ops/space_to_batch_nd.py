"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (3-D [N, H, C] or 4-D NHWC); any element type, raw copy.

SPACE_TO_BATCH_ND (TFLite reference): output batch ob = (sh * bw + sw) * N + n reads input pixel
(oh * bh + sh - pad_top, ow * bw + sw - pad_left) of batch n, or the pad value where that falls in
the padding; the pad bytes are memset to the output zero point (its low byte, as TFLite's memset).
BATCH_TO_SPACE_ND: input batch ib = (sh * bw + sw) * N + n goes to output pixel
(ih * bh + sh - crop_top, iw * bw + sw - crop_left), skipped where that is cropped away.
Per block offset (sh, sw) the valid pixels form a box, so each op is bh * bw strided copies.
A 3-D input is treated as [N, H, 1, C] with a block width of 1, as TFLite does.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._copy import CopyPlan, box, const_ints, copy_kernel, same_dtype


def _geometry(g: Graph, n: Node) -> tuple[list[int], list[int], list[int]]:
    """(input shape as NHWC, block [bh, bw], pads/crops [top, bottom, left, right])."""
    s = list(in_type(g, n).shape)
    block = const_ints(g, n, 1)
    pc = const_ints(g, n, 2)
    if len(s) == 3:
        return [s[0], s[1], 1, s[2]], [block[0], 1], [pc[0], pc[1], 0, 0]
    return s, block, pc


def constant_block_and_pads(g: Graph, n: Node) -> bool:
    """input must be 3-D or 4-D; block_shape and paddings/crops must be constants that fit the input"""
    s = in_type(g, n).shape
    block, pc = const_ints(g, n, 1), const_ints(g, n, 2)
    sp = len(s) - 2
    if len(s) not in (3, 4) or block is None or pc is None or len(block) != sp or len(pc) != 2 * sp:
        return False
    if any(b < 1 for b in block) or any(p < 0 for p in pc):
        return False
    (nb, h, w, _), (bh, bw), (t, bo, lf, r) = _geometry(g, n)
    if n.op == "SPACE_TO_BATCH_ND":
        return (h + t + bo) % bh == 0 and (w + lf + r) % bw == 0
    return nb % (bh * bw) == 0 and h * bh - t - bo > 0 and w * bw - lf - r > 0


def _out_nhwc(g: Graph, n: Node) -> list[int]:
    (nb, h, w, c), (bh, bw), (t, bo, lf, r) = _geometry(g, n)
    if n.op == "SPACE_TO_BATCH_ND":
        return [nb * bh * bw, (h + t + bo) // bh, (w + lf + r) // bw, c]
    return [nb // (bh * bw), h * bh - t - bo, w * bw - lf - r, c]


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    o = _out_nhwc(g, n)
    shape = (o[0], o[1], o[3]) if len(in_type(g, n).shape) == 3 else tuple(o)
    return [TensorType(shape, out_type(g, n).dtype)]


def _pad_byte(g: Graph, n: Node) -> int:
    q = out_type(g, n).q
    return (int(q.zero_point[0]) if q is not None else 0) & 0xFF


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    (nb, h, w, c), (bh, bw), (t, bo, lf, r) = _geometry(g, n)
    x = ins[0].reshape(nb, h, w, c)
    o = _out_nhwc(g, n)
    if n.op == "SPACE_TO_BATCH_ND":
        # memset semantics: every byte of a padded element is the pad byte
        pad = np.frombuffer(bytes([_pad_byte(g, n)]) * x.itemsize, x.dtype)[0]
        y = np.empty(o, x.dtype)
        full = np.full((nb, o[1] * bh, o[2] * bw, c), pad, x.dtype)
        full[:, t:t + h, lf:lf + w, :] = x
        for sh in range(bh):
            for sw in range(bw):
                k = sh * bw + sw
                y[k * nb:(k + 1) * nb] = full[:, sh::bh, sw::bw, :]
    else:
        y = np.empty(o, x.dtype)
        full = np.empty((o[0], h * bh, w * bw, c), x.dtype)
        for sh in range(bh):
            for sw in range(bw):
                k = sh * bw + sw
                full[:, sh::bh, sw::bw, :] = x[k * o[0]:(k + 1) * o[0]]
        y[...] = full[:, t:t + o[1], lf:lf + o[2], :]
    return [y.reshape(out_type(g, n).shape)]


def _range(count: int, block: int, shift: int, start: int, limit: int) -> tuple[int, int]:
    """Indices i in [0, count) with 0 <= i * block + shift - start < limit: (first, how many)."""
    first = max(0, -(-(start - shift) // block))
    last = min(count - 1, (limit + start - shift - 1) // block)
    return first, max(0, last - first + 1)


def lower(g: Graph, n: Node, target) -> Kernel:
    (nb, h, w, c), (bh, bw), (t, bo, lf, r) = _geometry(g, n)
    o = _out_nhwc(g, n)
    plan = CopyPlan()
    for sh in range(bh):
        for sw in range(bw):
            k = sh * bw + sw
            if n.op == "SPACE_TO_BATCH_ND":
                y0, ny = _range(o[1], bh, sh, t, h)
                x0, nx = _range(o[2], bw, sw, lf, w)
                src_off = ((y0 * bh + sh - t) * w + (x0 * bw + sw - lf)) * c
                dst_off = ((k * nb * o[1] + y0) * o[2] + x0) * c
                plan.segments.append(box([nb, ny, nx, c], [h * w * c, bh * w * c, bw * c, 1],
                                         [o[1] * o[2] * c, o[2] * c, c, 1], src_off, dst_off,
                                         note=f"block offset ({sh}, {sw})"))
            else:
                y0, ny = _range(h, bh, sh, t, o[1])
                x0, nx = _range(w, bw, sw, lf, o[2])
                src_off = ((k * o[0] * h + y0) * w + x0) * c
                dst_off = ((y0 * bh + sh - t) * o[2] + (x0 * bw + sw - lf)) * c
                plan.segments.append(box([o[0], ny, nx, c], [h * w * c, w * c, c, 1],
                                         [o[1] * o[2] * c, bh * o[2] * c, bw * c, 1], src_off,
                                         dst_off, note=f"block offset ({sh}, {sw})"))
    if n.op == "SPACE_TO_BATCH_ND":
        plan.fill = _pad_byte(g, n)
    return copy_kernel("space_to_batch_nd.c.j2", plan, in_type(g, n).dtype.size,
                       out_bytes=out_type(g, n).nbytes)


register(OpDef("SPACE_TO_BATCH_ND", infer, reference, lower, [constant_block_and_pads, same_dtype],
               dtypes="any (raw copy)",
               reference_oracle="TFLite Micro; padding values: LiteRT BUILTIN_REF (TFLM leaves "
                                "its pad value uninitialized)"))
register(OpDef("BATCH_TO_SPACE_ND", infer, reference, lower, [constant_block_and_pads, same_dtype],
               dtypes="any (raw copy)"))
