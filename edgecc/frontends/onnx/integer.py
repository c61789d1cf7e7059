"""Building the IR of ONNX layers whose weights have a non-zero zero point, or whose output is
the int32 accumulator (ConvInteger, MatMulInteger).

Owns: the choice (`wide`) and the nodes: CONV_INTEGER (edgecc/ops/conv_integer.py) for
convolutions, BATCH_MATMUL with ONNX numerics or an int32 output (edgecc/ops/batch_matmul.py) for
MatMul-like layers; both subtract the weight zero point exactly in the int32 accumulator. The
CONV_2D / FULLY_CONNECTED kernels (portable and SIMD) are for zero-point-0 weights only, so the
kernel tables never see such a layer. emit.py calls here; the ONNX handlers are integer_ops.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.frontends.onnx.builder import Builder, Rec
from edgecc.ir import DType, QParams
from edgecc.numerics import QLINEAR


def wide(wq: QParams, yq: QParams | None) -> bool:
    """Whether a layer takes the integer ops: weights with a non-zero zero point, or an int32
    output (yq None)."""
    return yq is None or any(z != 0 for z in wq.zero_point)


def conv_node(b: Builder, xv: str, w: np.ndarray, wq: QParams, bias: str | None, attrs: dict,
              yq: QParams | None) -> str:
    """CONV_INTEGER over NHWC `xv`; w in ONNX's [M, C/g, kh, kw]."""
    a = {k: v for k, v in attrs.items() if k not in ("numerics", "clamp")} if yq is None else attrs
    wv = b.const(w.transpose(0, 2, 3, 1), DType.INT8, QParams(wq.scale, wq.zero_point, 0),
                 label="filter")
    dtype = DType.INT32 if yq is None else DType.INT8
    return b.add_inferred("CONV_INTEGER", [xv, wv, bias], dtype, yq, a)


def matmul_node(b: Builder, info: dict, w: np.ndarray, wq: QParams, yq: QParams | None) -> Rec:
    """BATCH_MATMUL of the activation (ONNX layout) by constant w [..., K, N] with zero points:
    int32 out, or int8 with ONNX numerics."""
    x = b.plain(info["x"])
    if info.get("trans_b"):
        if w.ndim != 2:
            raise b.unsupported("transposed weights must be 2-D")
        w = w.T
    if len(wq.scale) > 1 or len(set(wq.zero_point)) > 1:
        raise b.unsupported("weights with a non-zero zero point need one scale and zero point "
                            "per tensor (per-column ones are not supported)")
    if info.get("bias") is not None or info.get("clips"):
        raise b.unsupported("a bias or fused Relu/Clip on a MatMul whose weights have a "
                            "non-zero zero point is not supported")
    wv = b.const(w, DType.INT8, QParams(wq.scale[:1], wq.zero_point[:1]), label="weights")
    if yq is None:
        y = b.add_inferred("BATCH_MATMUL", [x.value, wv], DType.INT32, None)
    else:
        y = b.add_inferred("BATCH_MATMUL", [x.value, wv], DType.INT8, yq,
                           dict(numerics=QLINEAR))
    return Rec("act", y, perm=tuple(range(len(b.type(y).shape))))
