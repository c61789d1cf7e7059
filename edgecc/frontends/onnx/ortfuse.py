"""Which QDQ groups onnxruntime's graph optimizer (x86 CPU provider, default session options)
turns into a QOperator kernel, where that changes the arithmetic.

Owns: the rule for Softmax and AveragePool. onnxruntime runs DequantizeLinear -> op ->
QuantizeLinear either in float (MLAS, then QuantizeLinear) or, when its QDQ transformer fuses the
group, as QLinearSoftmax (a float32 exp table, edgecc/ops/_onnx_softmax.py) or
QLinearAveragePool (edgecc/ops/_onnx_pool.py): they differ by a step on some values. Measured
on onnxruntime 1.32 with small graphs: the group is fused when the DequantizeLinear's input
and the QuantizeLinear's output end up of one element type. Before the fusion, the x86 build
rewrites every int8 QuantizeLinear whose output only DequantizeLinears read (and is no graph
output) as uint8 (QDQS8ToU8); an int8 graph input or output stays int8. So an int8 softmax
between two such pairs runs as a uint8 QLinearSoftmax, one next to a graph edge of the other
kind stays in float (the MLPerf Tiny models converted by tf2onnx end so).

With int8 allowed (the fused ONNX numerics, the default: onnxruntime on Arm, or on x86 with the
session option session.qdqisint8allowed = 1) there is no such rewrite: every tensor runs in its
declared element type, and a group whose types agree is fused, int8 Conv / MatMul included
(measured: every group of the three tfl_* and the ox_*_qdq_s8 models becomes a QOperator kernel in
int8).
"""
from __future__ import annotations

import numpy as np
import onnx


def _elem(name: str, producer: dict, consumers: dict, outputs: set, consts: dict,
          dtypes: dict, s8_to_u8: bool = True) -> str | None:
    """"u8" / "s8": the element type onnxruntime runs a quantized tensor in, None if unknown
    (s8_to_u8: x86's default rewrite of int8 QuantizeLinears only DequantizeLinears read)."""
    node = producer.get(name)
    if node is None:  # a graph input
        return {2: "u8", 3: "s8"}.get(dtypes.get(name, 0))
    if node.op_type != "QuantizeLinear":
        return None
    zp = consts.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    if zp is None or np.asarray(zp).dtype == np.uint8:
        return "u8"
    if np.asarray(zp).dtype != np.int8:
        return None
    if not s8_to_u8:
        return "s8"
    only_dq = all(c.op_type == "DequantizeLinear" for c in consumers.get(name, []))
    return "u8" if only_dq and name not in outputs and consumers.get(name) else "s8"


FUSED_OPS = ("Softmax", "AveragePool")


def _edges(g: onnx.GraphProto) -> tuple[dict, dict, set]:
    """(tensor -> its producing node, tensor -> the nodes reading it, graph output names)."""
    producer = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list] = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    return producer, consumers, {o.name for o in g.output}


def fused_groups(g: onnx.GraphProto, consts: dict, dtypes: dict,
                 int8_allowed: bool = False) -> dict[int, str]:
    """Node index of each Softmax / AveragePool onnxruntime runs as its QLinear kernel -> the
    element type it runs in ("s8" or "u8"); int8_allowed: as in the fused numerics."""
    producer, consumers, outputs = _edges(g)
    out = {}
    for i, n in enumerate(g.node):
        if n.op_type not in FUSED_OPS or n.output[0] in outputs:
            continue
        dq = producer.get(n.input[0])
        users = consumers.get(n.output[0], [])
        # a DequantizeLinear other nodes read too does not stop the fusion where int8 is
        # allowed: onnxruntime first gives each node unit its own copy (EnsureUniqueDQForNodeUnit;
        # measured: a Gemm's output read by a graph output and a Softmax, QLinearSoftmax)
        shared = len(consumers.get(dq.output[0], [])) != 1 if dq is not None else True
        if dq is None or dq.op_type != "DequantizeLinear" or len(users) != 1 or \
                users[0].op_type != "QuantizeLinear" or (shared and not int8_allowed):
            continue
        args = (producer, consumers, outputs, consts, dtypes, not int8_allowed)
        a, b = _elem(dq.input[0], *args), _elem(users[0].output[0], *args)
        if a is not None and a == b:
            out[i] = a
    return out


def _elem_strict(name: str, producer: dict, consumers: dict, outputs: set, consts: dict,
                 dtypes: dict) -> str | None:
    """As _elem, with QDQS8ToU8's one-edge rule: an int8 QuantizeLinear becomes uint8 only when
    one DequantizeLinear reads it and one node reads that DequantizeLinear."""
    node = producer.get(name)
    if node is not None and node.op_type in _MOVES and node.input:  # keeps the element type
        return _elem_strict(node.input[0], producer, consumers, outputs, consts, dtypes)
    elem = _elem(name, producer, consumers, outputs, consts, dtypes)
    if elem != "u8" or node is None or node.op_type != "QuantizeLinear":
        return elem
    zp = consts.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    if zp is None or np.asarray(zp).dtype == np.uint8:
        return elem
    users = consumers.get(name, [])
    one = len(users) == 1 and len(consumers.get(users[0].output[0], [])) == 1 and \
        users[0].output[0] not in outputs
    return "u8" if one else "s8"


_MOVES = ("Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")
# a Gemm node of mixed element types was seen fused all the same (QGemm in ox_se_mbv2_qdq_s8),
# so only MatMul (its bias Add after it; onnxruntime makes the pair a float Gemm) is listed
FLOAT_OPS = ("Conv", "MatMul", "Add", "AveragePool")
_PASS = ("Relu", "Clip")  # removed into the QuantizeLinear's clamp by onnxruntime


def _group_q(n, consumers: dict, outputs: set):
    """The QuantizeLinear closing the QDQ group opened by n (through a bias Add of a MatMul and
    a Relu / Clip), or None."""
    cur = n
    for _ in range(3):
        users = consumers.get(cur.output[0], [])
        if cur.output[0] in outputs or len(users) != 1:
            return None
        nxt = users[0]
        if nxt.op_type == "QuantizeLinear":
            return nxt
        if nxt.op_type not in _PASS and not (cur.op_type == "MatMul" and nxt.op_type == "Add"):
            return None
        cur = nxt
    return None


def float_groups(g: onnx.GraphProto, consts: dict, dtypes: dict,
                 int8_allowed: bool = False) -> set[int]:
    """Node indices of the Conv / MatMul / Add / AveragePool that onnxruntime runs in
    float32 between DequantizeLinear and QuantizeLinear (element types in and out differ);
    int8_allowed (the fused numerics): only where the declared element types differ."""
    producer, consumers, outputs = _edges(g)
    args = (producer, consumers, outputs, consts, dtypes)
    elem = (lambda t: _elem(t, *args, False)) if int8_allowed else \
        (lambda t: _elem_strict(t, *args))
    out = set()
    for i, n in enumerate(g.node):
        if n.op_type not in FLOAT_OPS:
            continue
        q = _group_q(n, consumers, outputs)
        ins = [producer.get(x) for x in n.input if x and x not in consts]
        if q is None or any(d is None or d.op_type != "DequantizeLinear" for d in ins):
            continue
        acts = [d for d in ins if d.input[0] not in consts]  # not the weights / bias
        if not acts:
            continue
        kinds = {elem(d.input[0]) for d in acts}
        kinds.add(elem(q.output[0]))
        # x86 onnxruntime fuses int8 activations only into QLinearAdd-like kernels, never into
        # QLinearConv / QGemm (QDQIsInt8Allowed: its u8s8 kernels are the fast ones)
        s8_weighted = kinds == {"s8"} and n.op_type in ("Conv", "MatMul") and not int8_allowed
        if None not in kinds and (len(kinds) > 1 or s8_weighted):
            out.add(i)
    return out
