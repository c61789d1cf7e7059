"""The validation checks' registry: graph-, tensor- and op-level checks, run in that order.

A check returns True (fine), False (its docstring is the message) or a string (the docstring
followed by that detail). Graph checks run first and stop the run when one fails, since tensor and
op checks rely on the wiring they guard.
"""
from __future__ import annotations

from typing import Callable

from edgecc.ir import Graph, Node, Value

GRAPH_CHECKS: list[Callable[[Graph], object]] = []
TENSOR_CHECKS: list[Callable[[Graph, Value], object]] = []
OP_CHECKS: list[tuple[Callable[[Graph, Node], object], frozenset[str] | None]] = []


def graph_check(fn):
    GRAPH_CHECKS.append(fn)
    return fn


def tensor_check(fn):
    TENSOR_CHECKS.append(fn)
    return fn


def op_check(*ops: str):
    """Register an op-level check for the named ops (every op when none is named)."""
    def deco(fn):
        OP_CHECKS.append((fn, frozenset(ops) or None))
        return fn
    return deco


def _message(fn, result) -> str | None:
    if result is True or result is None:
        return None
    doc = (fn.__doc__ or fn.__name__).strip()
    return doc if result is False else f"{doc} ({result})"


def tensor_where(v: Value) -> str:
    label = f" '{v.label}'" if v.label else ""
    return f"tensor {v.name[1:] if v.name[1:].isdigit() else v.name}{label} ({v.type})"


def failures(g: Graph) -> list[str]:
    out = []
    for fn in GRAPH_CHECKS:
        msg = _message(fn, fn(g))
        if msg:
            return [msg]
    used = dict.fromkeys([*g.inputs, *g.outputs,
                          *(v for n in g.nodes for v in (*n.inputs, *n.outputs) if v)])
    for name in used:
        v = g.values[name]
        for fn in TENSOR_CHECKS:
            msg = _message(fn, fn(g, v))
            if msg:
                out.append(f"{tensor_where(v)}: {msg}")
                break  # later checks of a tensor assume the earlier ones passed
    if out:
        return out
    for n in g.nodes:
        for fn, ops in OP_CHECKS:
            if ops is None or n.op in ops:
                msg = _message(fn, fn(g, n))
                if msg:
                    out.append(f"{n.op} at op {n.index}: {msg}")
                    break
    return out
