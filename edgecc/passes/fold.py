"""Constant folding: evaluate at compile time every node whose inputs are all known.

Owns: the `fold` rule. A node folds when every input is a constant, or when it is a SHAPE (its
output depends only on the input's static shape). It is evaluated with the op's numpy reference,
the same bit-exact model of TFLite Micro's arithmetic the tests hold against TFLM, so the folded
constant holds exactly the bytes the kernel would have produced. This covers the SHAPE ->
STRIDED_SLICE -> PACK chains converters emit for Keras Reshape/Flatten, transposes/reshapes/
quantizes of constant weights, and constant arithmetic.

A graph output folded to a constant is written into the arena by the `outputs` pass (outputs.py).
A node is NOT folded when the reference's result does not fit the declared type, or when it reads
recurrent state.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Value
from edgecc.ops import SHAPE_ONLY_OPS, failed_constraints, get_op, is_supported
from edgecc.passes.rewrite import Ctx, Match, Rewrite, Rule, run_rules

MAX_FOLDED_BYTES = 16 << 20  # a folded constant lands in flash; refuse absurd growth
# Ops that update variable tensors (recurrent state). The importer gives a variable its reset value
# as constant data; anything else reading that tensor must not be folded with it.
STATEFUL_OPS = frozenset({"SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM", "BIDIRECTIONAL_SEQUENCE_LSTM",
                          "LSTM", "UNIDIRECTIONAL_SEQUENCE_RNN", "RNN", "ASSIGN_VARIABLE",
                          "READ_VARIABLE", "VAR_HANDLE", "CALL_ONCE"})


def _pattern(ctx: Ctx, n) -> Match | None:
    if not is_supported(n.op) or not n.outputs or n.op in STATEFUL_OPS:
        return None
    if n.op in SHAPE_ONLY_OPS:
        return Match({"node": n})
    ins = [v for v in n.inputs if v is not None]
    if not ins or not all(ctx.g.value(v).is_const for v in ins):
        return None
    return Match({"node": n})


def _evaluate(ctx: Ctx, n) -> list[np.ndarray]:
    return evaluate(ctx.g, n)


def evaluate(g: Graph, n) -> list[np.ndarray]:
    """n's outputs from its op's numpy reference: its inputs are constants, or n is a SHAPE."""
    args = []
    for v in n.inputs:
        if v is None:
            args.append(None)
        elif g.value(v).is_const:
            args.append(g.value(v).data)
        else:  # SHAPE: only the static shape matters; the values are never read
            t = g.type(v)
            args.append(np.zeros(t.shape, dtype=t.dtype.np))
    return get_op(n.op).reference(g, n, args)


def _check(ctx: Ctx, m: Match) -> str | None:
    n = m["node"]
    state = {v for m2 in ctx.g.nodes if m2.op in STATEFUL_OPS for v in m2.inputs if v is not None}
    shared = [v for v in n.inputs if v in state]
    if shared:
        return f"{shared[0]} is recurrent state that a stateful op updates during the run"
    try:  # bound the work before it allocates: what the op says it makes, not what it claims
        big = [t for t in get_op(n.op).infer(ctx.g, n) if t is not None
               and t.numel * t.dtype.size > MAX_FOLDED_BYTES]
    except Exception:  # noqa: BLE001 - an op that cannot infer here is judged by its reference
        big = []
    if big:
        return f"folding it would create {big[0].nbytes} bytes of constants"
    if n.op not in SHAPE_ONLY_OPS:
        # a node the kernels would refuse is not made valid by folding it: its reference may not
        # model what the format means for those inputs (an int32 FULLY_CONNECTED input)
        bad = failed_constraints(ctx.g, n)
        if bad:
            return f"its op refuses these inputs ({bad[0]})"
    try:
        results = _evaluate(ctx, n)
    except Exception as e:  # a reference that cannot run here is a reason, not a crash
        return f"the numpy reference cannot evaluate it ({type(e).__name__}: {e})"
    folded = {}
    for o, r in zip(n.outputs, results):
        t = ctx.g.type(o)
        r = np.asarray(r)
        if r.size != t.numel:
            return f"reference gave {r.size} elements for {o}, declared {list(t.shape)}"
        cast = r.astype(t.dtype.np)
        if not np.array_equal(cast, r):
            return f"reference values for {o} do not fit {t.dtype.value[0]}"
        if t.nbytes > MAX_FOLDED_BYTES:
            return f"folding {o} would create {t.nbytes} bytes of constants"
        folded[o] = np.array(cast.reshape(t.shape), order="C")  # keeps 0-d shapes (scalars)
    m.info["folded"] = folded
    return None


def _rewrite(ctx: Ctx, m: Match) -> Rewrite:
    n = m["node"]
    values = {}
    for o, arr in m.info["folded"].items():
        old = ctx.g.value(o)
        values[o] = Value(o, old.type, arr, label=old.label)
    shapes = ", ".join(f"{o}{list(a.shape)}" for o, a in m.info["folded"].items())
    kind = "its input's static shape" if n.op in SHAPE_ONLY_OPS else "constant inputs"
    return Rewrite(remove=[n], values=values,
                   why=f"{n.name} ({n.op}) evaluated at compile time from {kind} -> {shapes}")


FOLD = Rule("fold_constant", ("*",), _pattern, _check, _rewrite)


def folded_view(g: Graph) -> Graph:
    """g with every foldable node folded: the graph the kernels will see. The frontend checks the
    ops' constraints on this view, so weights computed from constants (a TRANSPOSE or QUANTIZE of
    a constant, Keras' SHAPE -> PACK chains) count as the constants they become."""
    return run_rules(g, [FOLD])[0]
