"""Resource variables of stateful Keras models at import: VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE and CALL_ONCE turned into edgecc's variable tensors.

Owns: finding each variable's initial value by running the CALL_ONCE init subgraphs once at
import (TFLite Micro runs them at the first invoke; the converter's init subgraph assigns
constants, which is what is supported here; a variable never assigned holds what TFLite Micro
fills a variable tensor with), and rewriting subgraph 0: each shared name becomes
one `var_<name>` Value with `variable=True` (its `data` the initial value, which `name_reset()`
writes); VAR_HANDLE and CALL_ONCE disappear; READ_VARIABLE stays a node that copies the state into
a new tensor (it cannot alias the state: a later ASSIGN overwrites it); ASSIGN_VARIABLE becomes a
node without outputs that writes the state slot (OpDef.updates), taking the variable's earlier
READ outputs as order-only inputs so the planner cannot move it before them. A READ after an
ASSIGN of the same variable reads the assigned tensor (an EDGECC_COPY of it), which orders it
after the value is computed.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from edgecc.errors import ModelFormatError, UnsupportedModel
from edgecc.ir import Node, TensorType, Value

RESOURCE = 13  # tflite.TensorType.RESOURCE
RESOURCE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")


def _name(opts: dict, key: str) -> str:
    raw = opts.get(key) or b""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def _handle_names(nodes: list[Node], path: Path, where: str) -> dict[str, str]:
    """Resource tensor -> shared name, from the VAR_HANDLE ops of one subgraph."""
    out = {}
    for n in nodes:
        if n.op == "VAR_HANDLE":
            if len(n.outputs) != 1:
                raise ModelFormatError(f"{path}: {where} op {n.index} (VAR_HANDLE) must have one "
                                       f"output")
            container, shared = _name(n.attrs, "container"), _name(n.attrs, "shared_name")
            out[n.outputs[0]] = f"{container}/{shared}" if container else shared
    return out


def _init_values(subgraphs: dict[int, tuple[list[Node], dict[str, np.ndarray | None]]],
                 path: Path) -> dict[str, np.ndarray]:
    """Shared name -> initial value, from running each init subgraph (constant assignments)."""
    init: dict[str, np.ndarray] = {}
    for idx, (nodes, consts) in sorted(subgraphs.items()):
        handles = _handle_names(nodes, path, f"subgraph {idx}")
        for n in nodes:
            if n.op == "VAR_HANDLE":
                continue
            if n.op != "ASSIGN_VARIABLE":
                raise UnsupportedModel(f"{path}: the CALL_ONCE init subgraph {idx} runs {n.op} "
                                       f"(op {n.index}): edgecc runs init subgraphs that assign "
                                       f"constants only")
            h, v = (n.inputs + [None, None])[:2]
            if h not in handles or v is None or consts.get(v) is None:
                raise UnsupportedModel(f"{path}: the CALL_ONCE init subgraph {idx} assigns a value "
                                       f"that is not a constant (op {n.index})")
            init[handles[h]] = consts[v]
    return init


def _c_name(shared: str, taken: set[str]) -> str:
    base = "var_" + (re.sub(r"[^0-9A-Za-z_]", "_", shared.strip("/")) or "v")
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def resolve_resources(values: dict[str, Value], nodes: list[Node], init_graphs: dict,
                      path: Path, unassigned) -> tuple[list[Node], list[int], list[str]]:
    """Rewrite subgraph 0's resource ops in place of `nodes` (new list returned) and add the
    `var_<name>` values; also the init subgraph indices CALL_ONCE ran and notes for inspect. `init_graphs` maps a
    subgraph index to (nodes, {tensor: constant data or None}), read by the caller;
    `unassigned(shape, dtype, q)` is what a variable holds before any assignment (TFLite Micro
    fills its buffer as a variable tensor's: the zero point of the first assigned value)."""
    if not any(n.op in RESOURCE_OPS for n in nodes):
        return nodes, [], []
    calls = [n for n in nodes if n.op == "CALL_ONCE"]
    called = sorted({int(n.attrs.get("init_subgraph_index", -1)) for n in calls})
    missing = [i for i in called if i not in init_graphs]
    if missing:
        raise ModelFormatError(f"{path}: CALL_ONCE calls subgraph {missing[0]}, which the model "
                               f"does not have (or is subgraph 0)")
    init = _init_values({i: init_graphs[i] for i in called}, path)
    handles = _handle_names(nodes, path, "subgraph 0")
    first_q = {}  # shared name -> quantization of the first value assigned in subgraph 0
    for n in nodes:
        if n.op == "ASSIGN_VARIABLE" and len(n.inputs) == 2 and n.inputs[0] in handles \
                and n.inputs[1] in values:
            first_q.setdefault(handles[n.inputs[0]], values[n.inputs[1]].type.q)
    var_of: dict[str, str] = {}   # shared name -> var value name
    reads: dict[str, list[str]] = {}   # var -> READ outputs since its last ASSIGN
    assigned: dict[str, str] = {}  # var -> tensor last assigned to it in this run
    taken = set(values)
    out: list[Node] = []

    def var(n: Node, ty: TensorType) -> str:
        h = n.inputs[0] if n.inputs else None
        if h not in handles:
            raise ModelFormatError(f"{path}: op {n.index} ({n.op}) takes a resource that no "
                                   f"VAR_HANDLE of subgraph 0 makes")
        shared = handles[h]
        if shared not in var_of:
            var_of[shared] = v = _c_name(shared, taken)
            data = init.get(shared)
            if data is None:
                data = unassigned(ty.shape, ty.dtype, first_q.get(shared, ty.q))
            elif data.dtype != ty.dtype.np or data.size != ty.numel:
                raise UnsupportedModel(f"{path}: variable '{shared}' is initialized as "
                                       f"{data.dtype}{list(data.shape)} but used as {ty}")
            values[v] = Value(v, ty, data.reshape(ty.shape).copy(), label=shared, variable=True)
        v = var_of[shared]
        if values[v].type.shape != ty.shape or values[v].type.dtype != ty.dtype:
            raise UnsupportedModel(f"{path}: op {n.index} ({n.op}) uses variable '{shared}' as "
                                   f"{ty}, elsewhere it is {values[v].type}")
        return v

    for n in nodes:
        if n.op in ("VAR_HANDLE", "CALL_ONCE"):
            continue
        if n.op == "READ_VARIABLE":
            v = var(n, values[n.outputs[0]].type)
            if v in assigned:
                out.append(Node("EDGECC_COPY", [assigned[v]], list(n.outputs),
                                {"version": 1, "source_op": n.op}, name=n.name, index=n.index))
            else:
                out.append(Node(n.op, [v], list(n.outputs), dict(n.attrs), name=n.name,
                                index=n.index, numerics=n.numerics))
                reads.setdefault(v, []).append(n.outputs[0])
        elif n.op == "ASSIGN_VARIABLE":
            if len(n.inputs) != 2 or n.inputs[1] is None:
                raise ModelFormatError(f"{path}: op {n.index} (ASSIGN_VARIABLE) needs a resource "
                                       f"and a value")
            v = var(n, values[n.inputs[1]].type)
            if v in assigned:
                raise UnsupportedModel(f"{path}: op {n.index} assigns variable "
                                       f"'{values[v].label}' a second time in one run")
            out.append(Node(n.op, [v, n.inputs[1], *reads.pop(v, [])], [], dict(n.attrs),
                            name=n.name, index=n.index, numerics=n.numerics))
            assigned[v] = n.inputs[1]
        else:
            if any(x in handles for x in n.inputs):
                raise UnsupportedModel(f"{path}: op {n.index} ({n.op}) takes a resource handle")
            out.append(n)
    notes = [f"resource variable '{values[v].label}' -> {v} {values[v].type}, initial value "
             + ("from the CALL_ONCE init subgraph" if shared in init else "unassigned (filled as "
                "TFLite Micro fills it)") for shared, v in var_of.items()]
    return out, called, notes
