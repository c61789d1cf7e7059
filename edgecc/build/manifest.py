"""The manifest of an output folder: OUT/name.manifest.json (`edgecc compile` writes it).

Owns: what a firmware's CI can check without parsing C: the model's sha256, edgecc's version, the
target and board, every option of the compile, the arena, the constant data, each input and output
as NAME.h types it (name, dtype, shape, elements, bytes, scale and zero point as numbers, the
quantize rounding), and per layer the op, kernel, MACs and scratch. Deterministic like the C (no times, no absolute paths, sorted keys):
compiling twice gives byte-identical folders.
"""
from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from elftools.elf.elffile import ELFFile

from edgecc.build.cross import STRICT, compile_sources
from edgecc.codegen import write_files
from edgecc.errors import EdgeccError
from edgecc.metrics import node_macs
from edgecc.names import c_ident
from edgecc.numerics.io import quantizable, rounding_of
from edgecc.version import __version__


def flash_of_objects(c, board) -> dict | None:
    """Flash of the model on a bare-metal board: the allocated, read-only bytes (code, weights,
    other constants) of the generated C's objects, built as verify builds them (before linking,
    so a little above what --gc-sections keeps). None without a board or its compiler."""
    if board is None or not board.bare_metal:
        return None
    with tempfile.TemporaryDirectory(prefix="edgecc-manifest-") as tmp:
        gen = Path(tmp) / "gen"
        # the C and its headers (runtime headers keep their sub-folders: dsp/conv_2d.h), not the
        # build files (zephyr/module.yml, CMakeLists.txt)
        write_files({k: v for k, v in c.files.items() if k.endswith((".c", ".h"))}, gen)
        try:
            objs = compile_sources(sorted(gen.glob("*.c")), Path(tmp) / "obj", board, None,
                                   [*STRICT, f"-I{gen}"])
        except EdgeccError:
            return None
        code = const = 0
        for o in objs:
            with open(o, "rb") as f:
                for s in ELFFile(f).iter_sections():
                    flags = s["sh_flags"]
                    if flags & 0x2 and not flags & 0x1 and s["sh_type"] != "SHT_NOBITS":
                        if flags & 0x4:
                            code += s["sh_size"]
                        else:
                            const += s["sh_size"]
    return dict(code_bytes=code, constant_bytes=const, total_bytes=code + const,
                method="sections of the generated C's objects (arm-none-eabi-gcc -O2)")


def io_entry(g, v: str, rounding: str) -> dict:
    """One input or output as NAME.h types it (docs/design.md "Typed I/O"), with numbers: scale,
    zero point and the quantize rounding are null for a tensor that is not quantized."""
    t = g.type(v)
    q = quantizable(t)
    return dict(name=g.value(v).label, dtype=t.dtype.value[0], shape=[int(d) for d in t.shape],
                elements=t.numel, bytes=t.nbytes,
                scale=float(t.q.scale_f32()[0]) if q else None,
                zero_point=int(t.q.zero_point[0]) if q else None,
                rounding=rounding if q else None)


def manifest(c, model: str | Path, target: str, board: str | None, options: dict,
             flash: dict | None = None) -> dict:
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
        arena_bytes=c.plan.arena, lower_bound_bytes=c.plan.model_lower_bound,
        planned_peak_bytes=c.plan.lower_bound,
        weights_bytes=c.weights_bytes, io_external=bool(c.plan.external), flash=flash,
        inputs=[io_entry(g, v, rounding_of(model)) for v in g.inputs],
        outputs=[io_entry(g, v, rounding_of(model)) for v in g.outputs],
        macs=sum(x["macs"] for x in layers), layers=layers)


def manifest_file(c, model: str | Path, target: str, board, options: dict) -> tuple[str, str]:
    """(file name, text) of the manifest in the output folder (board: a Board or None)."""
    text = json.dumps(manifest(c, model, target, board.name if board else None, options,
                               flash_of_objects(c, board)), indent=1, sort_keys=True)
    return f"{c_ident(c.name).lower()}.manifest.json", text + "\n"
