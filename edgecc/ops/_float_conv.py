"""The float32 paths of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D and MAX_POOL_2D.

TFLite's reference float kernels (reference_ops::Conv, DepthwiseConv, FullyConnected,
AveragePool, MaxPool), whose order of float operations the numpy references and the C
templates (templates/c/*_float.c.j2) both follow, so that the results are bit-identical with
TFLite Micro when no multiply-add is fused (-ffp-contract=off):
  CONV_2D:   per output value, total = 0.0f; for filter row, filter column (taps outside the
             input skipped), input channel of its group: total += x * w; y = act(total + bias)
             (bias 0.0f when absent).
  DEPTHWISE: the same over the filter rows and columns of output channel ic*M + m, reading
             input channel ic.
  FC:        total = 0.0f; total += x[d] * w[u, d] over d; y = act(total + bias[u]).
  AVERAGE:   total of the window's taps inside the input, in row-major order, / their count.
  MAX:       max = lowest float; max = max < x ? x : max over the window's taps inside the input.
  L2_POOL:   sqrt(total of the taps' squares / their count) (edgecc/ops/l2_pool_2d.py).
act is ActivationFunctionWithMinMax over CalculateActivationRange<float> (edgecc/ops/_float.py).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._arith import c_float
from edgecc.ops._conv_common import conv_window, pool_geometry
from edgecc.ops._float import F32, LOWEST, FloatPath, act_params, activate, seq_sum


def float_filter_and_bias(g: Graph, n: Node) -> bool:
    """float32: input and output must be float32, the weights and the bias (when present)
    constant float32"""
    io = [in_type(g, n), out_type(g, n)]
    consts = [g.value(v) for v in n.inputs[1:] if v is not None]
    return (all(t.dtype == DType.FLOAT32 for t in io)
            and all(v.is_const and v.type.dtype == DType.FLOAT32 for v in consts))


def float_io(g: Graph, n: Node) -> bool:
    """float32: input and output must both be float32"""
    return in_type(g, n).dtype == DType.FLOAT32 and out_type(g, n).dtype == DType.FLOAT32


def _bias(g: Graph, n: Node, channels: int) -> np.ndarray:
    b = const(g, n, 2)
    return np.zeros(channels, F32) if b is None else np.asarray(b, F32).ravel()


def _finish(total: np.ndarray, g: Graph, n: Node, channels: int) -> np.ndarray:
    return activate((total + _bias(g, n, channels)).astype(F32), n)


def _window_params(g: Graph, n: Node) -> dict:
    win = conv_window(g, n)
    x = in_type(g, n)
    return dict(batches=x.shape[0], in_h=win.in_h, in_w=win.in_w, in_c=x.shape[3],
                out_h=win.out_h, out_w=win.out_w, k_h=win.k_h, k_w=win.k_w,
                stride_h=win.stride_h, stride_w=win.stride_w, dil_h=win.dil_h, dil_w=win.dil_w,
                pad_t=win.pad_t, pad_l=win.pad_l, **act_params(n))


def _bias_term(has_bias: bool) -> dict:
    """The templates' bias term (templates/c/_float.j2): the bias array, or 0.0f."""
    return dict(bias_term="bias_array" if has_bias else "bias_none")


def _conv_kernel(template: str, g: Graph, n: Node, channels: int, **params) -> Kernel:
    consts = dict(w=np.ascontiguousarray(const(g, n, 1), F32))
    has_bias = const(g, n, 2) is not None
    if has_bias:
        consts["bias"] = _bias(g, n, channels)
    return Kernel(template, params=dict(_window_params(g, n), out_c=channels, bias=has_bias,
                                        **params), consts=consts, variant="float32",
                  derived=_bias_term(has_bias))


# ---- CONV_2D ---------------------------------------------------------------------------------

def conv_reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    win = conv_window(g, n)
    w = np.asarray(const(g, n, 1), F32)  # [oc, kh, kw, fic]
    oc, fic = w.shape[0], w.shape[3]
    groups = in_type(g, n).shape[3] // fic
    per_group = oc // groups
    # taps in (fy, fx) order, each [B, oh, ow, C]; padded taps read 0.0, which adds +-0 to a
    # total that is never -0: the same as TFLite skipping them
    taps = np.stack([p for _, _, p in win.taps(np.asarray(ins[0], F32))], axis=3)
    out = np.empty(taps.shape[:3] + (oc,), F32)
    for c in range(oc):
        gi = c // per_group
        field = taps[..., gi * fic:(gi + 1) * fic].reshape(taps.shape[:3] + (-1,))
        out[..., c] = seq_sum((field * w[c].reshape(-1)).astype(F32))
    return [_finish(out, g, n, oc)]


def conv_lower(g: Graph, n: Node, target) -> Kernel:
    oc, _, _, fic = in_type(g, n, 1).shape
    groups = in_type(g, n).shape[3] // fic
    return _conv_kernel("conv_2d_float.c.j2", g, n, oc, fic=fic, per_group=oc // groups)


CONV_2D = FloatPath(conv_reference, conv_lower, [float_filter_and_bias])


# ---- DEPTHWISE_CONV_2D -----------------------------------------------------------------------

def depthwise_reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    win = conv_window(g, n)
    w = np.asarray(const(g, n, 1), F32)[0]  # [kh, kw, oc]
    oc = w.shape[2]
    x = np.repeat(np.asarray(ins[0], F32), oc // in_type(g, n).shape[3], axis=3)
    prods = np.stack([(p * w[fy, fx]).astype(F32) for fy, fx, p in win.taps(x)], axis=-1)
    return [_finish(seq_sum(prods), g, n, oc)]


def depthwise_lower(g: Graph, n: Node, target) -> Kernel:
    oc = in_type(g, n, 1).shape[3]
    return _conv_kernel("depthwise_conv_2d_float.c.j2", g, n, oc,
                        mult=oc // in_type(g, n).shape[3])


DEPTHWISE_CONV_2D = FloatPath(depthwise_reference, depthwise_lower,
                              [float_filter_and_bias])


# ---- FULLY_CONNECTED -------------------------------------------------------------------------

def fc_reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    w = np.asarray(const(g, n, 1), F32)  # [units, depth]
    units, depth = w.shape
    x = np.asarray(ins[0], F32).reshape(-1, depth)
    total = seq_sum((x[:, None, :] * w[None, :, :]).astype(F32))
    return [_finish(total, g, n, units).reshape(out_type(g, n).shape)]


def fc_lower(g: Graph, n: Node, target) -> Kernel:
    units, depth = in_type(g, n, 1).shape
    consts = dict(w=np.ascontiguousarray(const(g, n, 1), F32))
    if const(g, n, 2) is not None:
        consts["bias"] = _bias(g, n, units)
    return Kernel("fully_connected_float.c.j2",
                  params=dict(batches=in_type(g, n).numel // depth, units=units, depth=depth,
                              bias=const(g, n, 2) is not None, **act_params(n)),
                  consts=consts, variant="float32", derived=_bias_term(const(g, n, 2) is not None))


def rank2_weights(g: Graph, n: Node) -> bool:
    """float32: weights must have rank 2 and the input a multiple of their depth"""
    w = in_type(g, n, 1)
    return len(w.shape) == 2 and w.shape[1] > 0 and in_type(g, n).numel % w.shape[1] == 0


FULLY_CONNECTED = FloatPath(fc_reference, fc_lower, [float_filter_and_bias, rank2_weights])


# ---- AVERAGE_POOL_2D / MAX_POOL_2D -----------------------------------------------------------

def _windows(d: dict):
    """(oy, ox, ys, xs): each output pixel's window clipped to the input."""
    for oy in range(d["out_h"]):
        y0 = oy * d["stride_h"] - d["pad_h"]
        for ox in range(d["out_w"]):
            x0 = ox * d["stride_w"] - d["pad_w"]
            yield (oy, ox, slice(max(y0, 0), min(y0 + d["fh"], d["in_h"])),
                   slice(max(x0, 0), min(x0 + d["fw"], d["in_w"])))


def pool_reference(g: Graph, n: Node, ins: list, kind: str) -> list[np.ndarray]:
    """kind: "avg", "max" or "l2" (sqrt of the mean of the squares)."""
    d = pool_geometry(g, n)
    x = np.asarray(ins[0], F32)
    out = np.empty((d["batches"], d["out_h"], d["out_w"], d["depth"]), F32)
    for oy, ox, ys, xs in _windows(d):
        win = x[:, ys, xs, :]
        taps = win.reshape(win.shape[0], -1, win.shape[3])  # row-major tap order
        if kind == "max":
            out[:, oy, ox, :] = np.maximum(F32(LOWEST), taps.max(axis=1))
        elif kind == "avg":
            out[:, oy, ox, :] = seq_sum(taps, axis=1) / F32(taps.shape[1])
        else:
            out[:, oy, ox, :] = np.sqrt(seq_sum((taps * taps).astype(F32), axis=1)
                                        / F32(taps.shape[1]))
    return [activate(out, n)]


# the mean (avg, l2) divides by the taps inside the input; l2 then takes the square root
_POOL_MEAN = "v / (float)((fy1 - fy0) * (fx1 - fx0))"
_POOL_FINISH = {"avg": [f"v = {_POOL_MEAN};"], "l2": [f"v = ec_sqrtf({_POOL_MEAN});"], "max": []}


def _pool_steps(kind: str) -> dict:
    """pool_2d_float.c.j2's variant: the start value, the tap macro (templates/c/_float.j2) and
    the lines that finish a window."""
    return dict(start=c_float(LOWEST) if kind == "max" else "0.0f", tap=f"pool_{kind}_tap",
                finish=_POOL_FINISH[kind])


def pool_lower(g: Graph, n: Node, target, kind: str) -> Kernel:
    return Kernel("pool_2d_float.c.j2",
                  params=dict(pool_geometry(g, n), kind=kind, lowest=c_float(LOWEST),
                              **act_params(n)), variant="float32", derived=_pool_steps(kind))


def pool_path(kind: str) -> FloatPath:
    return FloatPath(lambda g, n, ins: pool_reference(g, n, ins, kind),
                     lambda g, n, t: pool_lower(g, n, t, kind), [float_io])


AVERAGE_POOL_2D = pool_path("avg")
MAX_POOL_2D = pool_path("max")
