"""No-op and redundant-op elimination rules.

Owns the rules that remove work without changing a single output byte:
- merge_aliases: RESHAPE/SQUEEZE/EXPAND_DIMS of a RESHAPE/SQUEEZE/EXPAND_DIMS reads the first
  one's input directly (aliases stay aliases: same bytes, no code).
- drop_identity_alias: an alias whose output shape equals its input shape vanishes.
- transpose_to_reshape: a TRANSPOSE that only moves unit axes keeps every byte in place: it becomes
  a RESHAPE (an alias, no code).
- merge_transposes: TRANSPOSE(TRANSPOSE(x, p1), p2) is TRANSPOSE(x, p1[p2]); nothing when that is
  the identity.
- dequantize_quantize: DEQUANTIZE then QUANTIZE back to the same parameters vanishes (identity on
  every input value, checked exhaustively).
- quantize_dequantize: QUANTIZE then DEQUANTIZE vanishes only when the float input provably lies
  on the quantization grid (it comes from a DEQUANTIZE whose every value survives the round trip,
  checked exhaustively); otherwise the pair rounds and saturates and must stay.
- requantize_identity: QUANTIZE int->int with identical parameters vanishes (checked exhaustively).
- slice_used_outputs: a SPLIT / SPLIT_V / UNPACK with unused outputs becomes one STRIDED_SLICE per
  used output, so unused pieces are neither copied nor given arena space (raw copies: exact).

Graph inputs and outputs are never renamed: a rewrite that would remove the producer of a graph
output is refused and says so.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Node, TensorType, Value, same_quant
from edgecc.ops import const, failed_constraints, get_op, is_supported
from edgecc.ops.transpose import is_identity, perm_of
from edgecc.passes.exhaustive import all_values, eval_elementwise
from edgecc.passes.rewrite import Ctx, Match, Rewrite, Rule


def _is_alias(op: str) -> bool:
    return is_supported(op) and get_op(op).alias


def _producer_of(ctx: Ctx, n: Node, ops) -> Node | None:
    src = n.inputs[0] if n.inputs else None
    p = ctx.producer.get(src) if src is not None else None
    return p if p is not None and (p.op in ops if not callable(ops) else ops(p.op)) else None


def _vanish(ctx: Ctx, n: Node, keep: str, why: str) -> Rewrite:
    """Remove n; its output's readers read `keep` instead."""
    return Rewrite(remove=[n], replace_uses={n.outputs[0]: keep}, why=why)


def _graph_output_reason(ctx: Ctx, value: str) -> str | None:
    if value in ctx.g.outputs:
        return f"{value} is a graph output (its name and buffer must stay)"
    return None


# ---- aliases ------------------------------------------------------------------------------

ALIAS_OPS = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")


def _reshape_node(name: str, src: str, out: str, shape, index: int) -> Node:
    return Node("RESHAPE", [src], [out], {"new_shape": [int(s) for s in shape], "version": 1},
                name=name, index=index)


def _merge_aliases_pattern(ctx: Ctx, n: Node) -> Match | None:
    p = _producer_of(ctx, n, _is_alias)
    if p is None or not _is_alias(n.op):
        return None
    return Match({"node": n, "first": p})


def _merge_aliases_check(ctx: Ctx, m: Match) -> str | None:
    src, out = m["first"].inputs[0], m["node"].outputs[0]
    if not same_quant(ctx.g.type(src), ctx.g.type(out)):
        return f"{src} and {out} differ in type or quantization"
    return None


def _merge_aliases_rewrite(ctx: Ctx, m: Match) -> Rewrite:
    n, first = m["node"], m["first"]
    shape = ctx.g.type(n.outputs[0]).shape
    new = _reshape_node(n.name, first.inputs[0], n.outputs[0], shape, n.index)
    return Rewrite(remove=[n], add=[new],
                   why=f"{first.name} ({first.op}) -> {n.name} ({n.op}) is one RESHAPE of "
                       f"{first.inputs[0]} to {list(shape)} (aliases: same bytes)")


MERGE_ALIASES = Rule("merge_aliases", ALIAS_OPS, _merge_aliases_pattern, _merge_aliases_check,
                     _merge_aliases_rewrite)


def _identity_alias_pattern(ctx: Ctx, n: Node) -> Match | None:
    if not n.inputs or n.inputs[0] is None:
        return None
    a, b = ctx.g.type(n.inputs[0]), ctx.g.type(n.outputs[0])
    return Match({"node": n}) if tuple(a.shape) == tuple(b.shape) else None


def _identity_alias_check(ctx: Ctx, m: Match) -> str | None:
    n = m["node"]
    if not same_quant(ctx.g.type(n.inputs[0]), ctx.g.type(n.outputs[0])):
        return "input and output differ in type or quantization"
    return _graph_output_reason(ctx, n.outputs[0])


DROP_IDENTITY_ALIAS = Rule(
    "drop_identity_alias", ALIAS_OPS, _identity_alias_pattern, _identity_alias_check,
    lambda ctx, m: _vanish(ctx, m["node"], m["node"].inputs[0],
                           f"{m['node'].name} ({m['node'].op}) keeps shape "
                           f"{list(ctx.g.type(m['node'].inputs[0]).shape)}: removed"))


# ---- transposes ---------------------------------------------------------------------------

def _transpose_pattern(ctx: Ctx, n: Node) -> Match | None:
    return Match({"node": n}) if const(ctx.g, n, 1) is not None else None


def _transpose_to_reshape_check(ctx: Ctx, m: Match) -> str | None:
    n = m["node"]
    shape, perm = ctx.g.type(n.inputs[0]).shape, perm_of(ctx.g, n)
    if not is_identity(shape, perm):
        return f"perm {perm} moves bytes of {list(shape)} (not a reshape)"
    return None


def _transpose_to_reshape_rewrite(ctx: Ctx, m: Match) -> Rewrite:
    n = m["node"]
    shape = ctx.g.type(n.outputs[0]).shape
    perm = perm_of(ctx.g, n)
    return Rewrite(remove=[n], add=[_reshape_node(n.name, n.inputs[0], n.outputs[0], shape,
                                                  n.index)],
                   why=f"{n.name} TRANSPOSE perm {perm} of {list(ctx.g.type(n.inputs[0]).shape)} "
                       f"only moves unit axes: a RESHAPE (alias, no code)")


TRANSPOSE_TO_RESHAPE = Rule("transpose_to_reshape", ("TRANSPOSE",), _transpose_pattern,
                            _transpose_to_reshape_check, _transpose_to_reshape_rewrite)


def _merge_transposes_pattern(ctx: Ctx, n: Node) -> Match | None:
    p = _producer_of(ctx, n, ("TRANSPOSE",))
    if p is None or const(ctx.g, n, 1) is None or const(ctx.g, p, 1) is None:
        return None
    return Match({"node": n, "first": p})


def _composed(ctx: Ctx, m: Match) -> list[int]:
    p1, p2 = perm_of(ctx.g, m["first"]), perm_of(ctx.g, m["node"])
    return [p1[a] for a in p2]


def _merge_transposes_check(ctx: Ctx, m: Match) -> str | None:
    n, first = m["node"], m["first"]
    perm = _composed(ctx, m)
    if perm == list(range(len(perm))):
        return _graph_output_reason(ctx, n.outputs[0])
    if len(ctx.consumers.get(first.outputs[0], [])) > 1 or first.outputs[0] in ctx.g.outputs:
        return (f"{first.name}'s output is also used elsewhere: merging would keep both "
                f"transposes")
    return None


def _merge_transposes_rewrite(ctx: Ctx, m: Match) -> Rewrite:
    n, first = m["node"], m["first"]
    perm = _composed(ctx, m)
    src = first.inputs[0]
    if perm == list(range(len(perm))):
        return _vanish(ctx, n, src, f"{first.name} and {n.name} TRANSPOSEs cancel "
                                    f"({perm_of(ctx.g, first)} then {perm_of(ctx.g, n)})")
    pname = f"{n.outputs[0]}_perm"
    perm_val = Value(pname, TensorType((len(perm),), DType.INT32),
                     np.array(perm, dtype=np.int32))
    new = Node("TRANSPOSE", [src, pname], list(n.outputs), {"version": 1},
               name=f"{first.name}+{n.name}", index=n.index)
    return Rewrite(remove=[first, n], add=[new], values={pname: perm_val},
                   why=f"{first.name} and {n.name} TRANSPOSEs compose to one with perm {perm}")


MERGE_TRANSPOSES = Rule("merge_transposes", ("TRANSPOSE",), _merge_transposes_pattern,
                        _merge_transposes_check, _merge_transposes_rewrite)


# ---- quantize / dequantize ----------------------------------------------------------------

def _identity_on_all_values(ctx: Ctx, chain: list[Node]) -> str | None:
    """None if running the chain's references on every input value returns that value."""
    first = chain[0]
    xs = all_values(ctx.g.type(first.inputs[0]))
    if xs is None:
        return f"{ctx.g.type(first.inputs[0]).dtype.value[0]} inputs cannot be enumerated"
    y = xs
    for node in chain:
        y = eval_elementwise(ctx.g, node, y)
    bad = np.flatnonzero(y.astype(np.float64) != xs.astype(np.float64))
    if bad.size:
        return (f"not the identity: input {xs[bad[0]]} comes back as {y[bad[0]]} "
                f"({bad.size} of {xs.size} values differ)")
    return None


def _dq_q_pattern(ctx: Ctx, n: Node) -> Match | None:
    p = _producer_of(ctx, n, ("DEQUANTIZE",))
    return Match({"node": n, "first": p}) if p is not None else None


def _dq_q_check(ctx: Ctx, m: Match) -> str | None:
    n, first = m["node"], m["first"]
    src, out = ctx.g.type(first.inputs[0]), ctx.g.type(n.outputs[0])
    if not same_quant(src, out):
        return f"DEQUANTIZE from {src} but QUANTIZE to {out}: a requantization, not a no-op"
    return _graph_output_reason(ctx, n.outputs[0]) or _identity_on_all_values(ctx, [first, n])


DEQUANTIZE_QUANTIZE = Rule(
    "dequantize_quantize", ("QUANTIZE",), _dq_q_pattern, _dq_q_check,
    lambda ctx, m: _vanish(ctx, m["node"], m["first"].inputs[0],
                           f"{m['first'].name} DEQUANTIZE -> {m['node'].name} QUANTIZE with equal "
                           f"parameters returns every one of the "
                           f"{all_values(ctx.g.type(m['first'].inputs[0])).size} input values "
                           f"unchanged"))


def _q_dq_pattern(ctx: Ctx, n: Node) -> Match | None:
    p = _producer_of(ctx, n, ("QUANTIZE",))
    if p is None or ctx.g.type(p.inputs[0]).dtype != DType.FLOAT32:
        return None
    return Match({"node": n, "first": p})


def _q_dq_check(ctx: Ctx, m: Match) -> str | None:
    n, first = m["node"], m["first"]
    src = ctx.producer.get(first.inputs[0])
    reason = _graph_output_reason(ctx, n.outputs[0])
    if reason:
        return reason
    if src is None or src.op != "DEQUANTIZE":
        return ("the float input is not known to lie on the quantization grid: QUANTIZE rounds "
                "and saturates it, so removing the pair would change values")
    # The float input is DEQUANTIZE(k) for every k of src's type: the pair is a no-op iff
    # DEQUANTIZE(QUANTIZE(DEQUANTIZE(k))) == DEQUANTIZE(k) for all k.
    xs = all_values(ctx.g.type(src.inputs[0]))
    if xs is None:
        return "the grid's integer type cannot be enumerated"
    f = eval_elementwise(ctx.g, src, xs)
    back = eval_elementwise(ctx.g, n, eval_elementwise(ctx.g, first, f))
    bad = np.flatnonzero(back != f)
    if bad.size:
        return (f"{bad.size} of {xs.size} grid values change in the round trip (first: "
                f"{f[bad[0]]} -> {back[bad[0]]})")
    return None


QUANTIZE_DEQUANTIZE = Rule(
    "quantize_dequantize", ("DEQUANTIZE",), _q_dq_pattern, _q_dq_check,
    lambda ctx, m: _vanish(ctx, m["node"], m["first"].inputs[0],
                           f"{m['first'].name} QUANTIZE -> {m['node'].name} DEQUANTIZE returns "
                           f"every value of its input grid unchanged"))


def _requant_pattern(ctx: Ctx, n: Node) -> Match | None:
    if not n.inputs or ctx.g.type(n.inputs[0]).dtype == DType.FLOAT32:
        return None
    return Match({"node": n})


def _requant_check(ctx: Ctx, m: Match) -> str | None:
    n = m["node"]
    a, b = ctx.g.type(n.inputs[0]), ctx.g.type(n.outputs[0])
    if not same_quant(a, b):
        return f"requantizes {a} -> {b}"
    return _graph_output_reason(ctx, n.outputs[0]) or _identity_on_all_values(ctx, [n])


REQUANTIZE_IDENTITY = Rule(
    "requantize_identity", ("QUANTIZE",), _requant_pattern, _requant_check,
    lambda ctx, m: _vanish(ctx, m["node"], m["node"].inputs[0],
                           f"{m['node'].name} QUANTIZE {ctx.g.type(m['node'].inputs[0]).dtype.value[0]}"
                           f" -> same type and parameters is the identity on every input value"))


# ---- multi-output ops with unused outputs ---------------------------------------------------

SPLIT_OPS = ("SPLIT", "SPLIT_V", "UNPACK")


def _split_pattern(ctx: Ctx, n: Node) -> Match | None:
    unused = [o for o in n.outputs if not ctx.consumers.get(o) and o not in ctx.g.outputs]
    return Match({"node": n}, {"unused": unused}) if unused else None


def _split_geometry(ctx: Ctx, n: Node) -> tuple[str, int, list[tuple[int, int]]]:
    """(data input, axis, [(start, size) along the axis] per output)."""
    g = ctx.g
    if n.op == "UNPACK":
        src = n.inputs[0]
        rank = len(g.type(src).shape)
        axis = int(n.attrs.get("axis", 0))
        axis = axis + rank if axis < 0 else axis
        return src, axis, [(k, 1) for k in range(len(n.outputs))]
    src = n.inputs[1] if n.op == "SPLIT" else n.inputs[0]
    rank = len(g.type(src).shape)
    axis = int(const(g, n, 0 if n.op == "SPLIT" else 2).ravel()[0])
    axis = axis + rank if axis < 0 else axis
    pieces, start = [], 0
    for o in n.outputs:
        size = g.type(o).shape[axis]
        pieces.append((start, size))
        start += size
    return src, axis, pieces


def _slice_nodes(ctx: Ctx, m: Match) -> tuple[list[Node], dict[str, Value]]:
    n = m["node"]
    src, axis, pieces = _split_geometry(ctx, m["node"])
    shape = ctx.g.type(src).shape
    nodes, values = [], {}
    for k, (o, (start, size)) in enumerate(zip(n.outputs, pieces)):
        if o in m.info["unused"]:
            continue
        begin = [0] * len(shape)
        end = list(shape)
        begin[axis], end[axis] = start, start + size
        names = []
        for key, vec in (("begin", begin), ("end", end), ("strides", [1] * len(shape))):
            vname = f"{o}_{key}"
            values[vname] = Value(vname, TensorType((len(shape),), DType.INT32),
                                  np.array(vec, dtype=np.int32))
            names.append(vname)
        attrs = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
                 "shrink_axis_mask": (1 << axis) if n.op == "UNPACK" else 0, "offset": False,
                 "version": 1}
        nodes.append(Node("STRIDED_SLICE", [src, *names], [o], attrs, name=f"{n.name}_out{k}",
                          index=n.index))
    return nodes, values


def _split_check(ctx: Ctx, m: Match) -> str | None:
    nodes, values = _slice_nodes(ctx, m)
    view = ctx.g.copy()
    view.values.update(values)
    for s in nodes:
        bad = failed_constraints(view, s)
        if bad:
            return f"the replacing STRIDED_SLICE would break its constraints: {'; '.join(bad)}"
    m.info["nodes"], m.info["values"] = nodes, values
    return None


def _split_rewrite(ctx: Ctx, m: Match) -> Rewrite:
    n = m["node"]
    kept = len(m.info["nodes"])
    return Rewrite(remove=[n], add=m.info["nodes"], values=m.info["values"],
                   why=f"{n.name} ({n.op}): {len(m.info['unused'])} of {len(n.outputs)} outputs "
                       f"unused; the {kept} used ones become STRIDED_SLICE copies")


SLICE_USED_OUTPUTS = Rule("slice_used_outputs", SPLIT_OPS, _split_pattern, _split_check,
                          _split_rewrite)


RULES = [MERGE_ALIASES, DROP_IDENTITY_ALIAS, TRANSPOSE_TO_RESHAPE, MERGE_TRANSPOSES,
         DEQUANTIZE_QUANTIZE, QUANTIZE_DEQUANTIZE, REQUANTIZE_IDENTITY, SLICE_USED_OUTPUTS]
