"""Validation of ops' builtin options: the table's type matches the op, and the option values
the kernels size loops and tables by are in range (axes inside the rank, split counts equal to
the outputs, strides and dilations positive and small enough for int32 offsets)."""
from __future__ import annotations

import numpy as np
import tflite

from edgecc.ir import Graph, Node
from edgecc.tflite_writer import options_class_name
from edgecc.validate.limits import MAX_TENSOR_BYTES
from edgecc.validate.registry import op_check

_OPTION_TYPES = {k: v for k, v in vars(tflite.BuiltinOptions).items() if isinstance(v, int)}
_OPTION_NAMES = {v: k for k, v in _OPTION_TYPES.items()}


@op_check()
def options_type(g: Graph, n: Node) -> object:
    """the builtin options table must be the op's own type"""
    got = g.source.get("op_options", {}).get(n.index, 0)
    if got == 0 or n.op.startswith("CUSTOM:"):
        return True
    want = options_class_name(n.attrs.get("source_op", n.op))  # the file's op, if rewritten
    return (want is not None and _OPTION_TYPES.get(want) == got) or (
        f"the table is {_OPTION_NAMES.get(got, f'type {got}')}, expected {want or 'none'}")


@op_check("SPLIT")
def split_count(g: Graph, n: Node) -> object:
    """num_splits must equal the number of outputs"""
    k = n.attrs.get("num_splits", len(n.outputs))
    return k == len(n.outputs) or f"num_splits {k}, {len(n.outputs)} outputs"


@op_check("SQUEEZE")
def squeeze_dims(g: Graph, n: Node) -> object:
    """squeeze_dims must be inside the input's rank and name dimensions of size 1"""
    shape = g.type(n.inputs[0]).shape if n.inputs and n.inputs[0] else ()
    bad = [d for d in n.attrs.get("squeeze_dims", []) or []
           if not -len(shape) <= d < len(shape) or shape[d] != 1]
    return not bad or f"dimension {bad[0]} of shape {list(shape)}"


@op_check("EXPAND_DIMS")
def expand_axis(g: Graph, n: Node) -> object:
    """the axis must be a constant inside [-rank-1, rank]"""
    if len(n.inputs) < 2 or n.inputs[0] is None or n.inputs[1] is None:
        return "it needs (input, axis)"
    a = g.value(n.inputs[1]).data
    rank = len(g.type(n.inputs[0]).shape)
    if a is None or a.size != 1:
        return False
    return -rank - 1 <= int(a.ravel()[0]) <= rank or f"axis {int(a.ravel()[0])}"


_WINDOW_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D",
               "TRANSPOSE_CONV")


@op_check(*_WINDOW_OPS)
def strides_and_dilations(g: Graph, n: Node) -> object:
    """(filter - 1) * dilation + output * stride + input size must stay below 2^31 (int32
    offsets in the generated loops)"""
    a = n.attrs  # values below 1 are the op constraints' to refuse, with their own message
    w = g.value(n.inputs[1]).type.shape if n.op in ("CONV_2D", "DEPTHWISE_CONV_2D") and \
        len(n.inputs) > 1 and n.inputs[1] else None
    kh, kw = (w[1], w[2]) if w is not None and len(w) == 4 else (
        a.get("filter_height", 1), a.get("filter_width", 1))
    span = max((int(kh) - 1) * int(a.get("dilation_h_factor", 1)),
               (int(kw) - 1) * int(a.get("dilation_w_factor", 1)))
    out = g.type(n.outputs[0]).shape if n.outputs else ()
    reach = max(out, default=1) * max(int(a.get("stride_w", 1)), int(a.get("stride_h", 1)))
    size = max(g.type(n.inputs[0]).shape, default=1) if n.inputs and n.inputs[0] else 1
    # the C forms iy0 + (fy - 1) * dilation with iy0 = oy * stride - pad: all three must fit
    return span + reach + size < 2**31 - 1 or f"filter span {span}, output reach {reach}"


@op_check("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def resize_size(g: Graph, n: Node) -> object:
    """the size must be two positive constants whose output stays under 2^31 bytes"""
    if len(n.inputs) < 2 or n.inputs[1] is None or n.inputs[0] is None:
        return "it needs (input, size)"
    size = g.value(n.inputs[1]).data
    if size is None:
        return True  # op constraints refuse a computed size
    size = np.asarray(size).ravel()
    x = g.type(n.inputs[0])
    if size.size != 2 or len(x.shape) != 4 or np.any(size < 1):
        return f"size {size.tolist()}"
    total = int(size[0]) * int(size[1]) * x.shape[0] * x.shape[3] * x.dtype.size
    return total <= MAX_TENSOR_BYTES or f"size {size.tolist()} is {total:,} bytes"
