"""Validation of the model's wiring beyond what the frontend's reader checks: one subgraph (plus
the CALL_ONCE init subgraphs the importer ran, frontends/tflite_resources.py), op input
indices that are tensors, or -1 (omitted) only where the op allows an omitted input.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.ops import get_op, is_supported
from edgecc.validate.limits import MAX_LIVE_TENSORS
from edgecc.validate.registry import graph_check, op_check

# Input positions TFLite lets a model omit (index -1), per op; every other position must be a tensor.
_LSTM_OPTIONAL = frozenset({1, 5, 9, 10, 11, 12, 16, 17, 20, 21, 22, 23})
OPTIONAL_INPUTS: dict[str, frozenset[int]] = {
    "CONV_2D": frozenset({2}), "DEPTHWISE_CONV_2D": frozenset({2}),
    "FULLY_CONNECTED": frozenset({2}), "TRANSPOSE_CONV": frozenset({3}), "SVDF": frozenset({3}),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _LSTM_OPTIONAL, "LSTM": _LSTM_OPTIONAL,
}
_CONTROL_FLOW = ("WHILE", "IF")


@graph_check
def one_subgraph(g: Graph) -> object:
    """the model must have one subgraph besides CALL_ONCE init subgraphs (run at import)"""
    count = g.source.get("subgraphs", 1)
    init = set(g.source.get("init_subgraphs", ()))
    return count - len(init) == 1 or any(is_supported(op) for op in _CONTROL_FLOW) \
        or f"it has {count}" + (f", {len(init)} of them CALL_ONCE init subgraphs" if init else "")


def most_alive(g: Graph) -> tuple[int, int]:
    """(most tensors alive at one step in the graph's own order, that step): graph inputs live
    from step 0, a graph output to the last step, any other tensor from its producer to its last
    reader; constants are not counted. One pass over the ops."""
    steps = max(len(g.nodes), 1)
    first: dict[str, int] = dict.fromkeys(g.inputs, 0)
    last: dict[str, int] = dict.fromkeys(g.inputs, 0)
    for i, n in enumerate(g.nodes):
        for v in (*n.inputs, *n.outputs):
            if v is not None and v in g.values and not g.values[v].is_const:
                first.setdefault(v, i)
                last[v] = i
    for v in g.outputs:
        if v in first:
            last[v] = steps - 1
    delta = [0] * (steps + 1)
    for v, f in first.items():
        delta[f] += 1
        delta[last[v] + 1] -= 1
    best, at, run = 0, 0, 0
    for s in range(steps):
        run += delta[s]
        if run > best:
            best, at = run, s
    return best, at


@graph_check
def live_tensors(g: Graph) -> object:
    count, step = most_alive(g)
    return count <= MAX_LIVE_TENSORS or f"{count} are alive at op {step}"


live_tensors.__doc__ = f"at most {MAX_LIVE_TENSORS} tensors may be alive at once (edgecc's limit)"


@op_check()
def input_indices(g: Graph, n: Node) -> object:
    """input indices must name tensors; -1 (omitted) only for an optional input"""
    raw = g.source.get("op_inputs", {}).get(n.index)
    if raw is None:
        return True
    allowed = OPTIONAL_INPUTS.get(n.op, frozenset())
    bad = [(pos, x) for pos, x in enumerate(raw) if x < -1 or (x == -1 and pos not in allowed)]
    return not bad or f"input {bad[0][0]} is {bad[0][1]}"


@op_check()
def has_output(g: Graph, n: Node) -> bool:
    """an op must write at least one tensor (or update a variable, as ASSIGN_VARIABLE does)"""
    return bool(n.outputs) or (is_supported(n.op) and bool(get_op(n.op).updates))
