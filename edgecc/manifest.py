"""The manifest of an output folder: OUT/name.manifest.json (`edgecc compile` writes it).

Owns: what a firmware's CI can check without parsing C: the model's sha256, edgecc's version, the
target and board, every option of the compile, the arena, the constant data, and per layer the
op, kernel, MACs and scratch. Deterministic like the C (no times, no absolute paths, sorted keys):
compiling twice gives byte-identical folders.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from edgecc.version import __version__
from edgecc.metrics import node_macs
from edgecc.names import c_ident


def manifest(c, model: str | Path, target: str, board: str | None, options: dict) -> dict:
    """The manifest of Compiled `c` (edgecc.compiler) as a dict."""
    layers = []
    for step, lw in enumerate(c.lowered):
        n, k = lw.node, lw.kernel
        layers.append(dict(step=step, model_op=n.index, op=n.op, kernel=lw.template_path,
                           variant=k.variant, macs=node_macs(c.graph, n) or 0,
                           scratch_bytes=int(k.scratch or 0)))
    g = c.graph
    return dict(
        edgecc_version=__version__, model=Path(model).name,
        model_sha256=hashlib.sha256(Path(model).read_bytes()).hexdigest(),
        name=c_ident(c.name).lower(), target=target, board=board, options=options,
        arena_bytes=c.plan.arena, lower_bound_bytes=c.plan.lower_bound,
        weights_bytes=c.weights_bytes, io_external=bool(c.plan.external),
        inputs=[dict(name=g.value(v).label or v, type=str(g.type(v)), bytes=g.type(v).nbytes)
                for v in g.inputs],
        outputs=[dict(name=g.value(v).label or v, type=str(g.type(v)), bytes=g.type(v).nbytes)
                 for v in g.outputs],
        macs=sum(x["macs"] for x in layers), layers=layers)


def manifest_file(c, model: str | Path, target: str, board: str | None,
                  options: dict) -> tuple[str, str]:
    """(file name, text) of the manifest in the output folder."""
    text = json.dumps(manifest(c, model, target, board, options), indent=1, sort_keys=True)
    return f"{c_ident(c.name).lower()}.manifest.json", text + "\n"
