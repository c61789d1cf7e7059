"""Compile options as one value: `CompileOptions`, passed CLI -> `edgecc.compile` / `edgecc.run` ->
compiler -> frontends / lower / plan. Nothing below the CLI reads an environment variable; the CLI
may take a default from one (documented in docs/cli.md).

Owns: the option fields, their allowed values, and `check`, which refuses an unknown value in one
line naming the flag.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from edgecc.errors import EdgeccError

SCRATCH_POLICIES = ("fit", "any")
TILING_POLICIES = ("off", "auto")
IO_MODES = ("arena", "external")  # where the graph's inputs and outputs live
# How ONNX DequantizeLinear -> op -> QuantizeLinear groups compute (docs/design.md, Numerics):
#   fused     (default) every group as the integer kernel onnxruntime fuses it into where int8
#             is allowed: onnxruntime on Arm, and on x86 with session.qdqisint8allowed=1
#   x86       onnxruntime's x86 default: int8 Conv/MatMul groups it leaves in float32 reproduced
#             exactly, on integer kernels with the near-tie check
#   x86-float the same semantics as x86, computed in onnxruntime's float32 order throughout
ONNX_NUMERICS = ("fused", "x86", "x86-float")
DEFAULT_ONNX_NUMERICS = "fused"
LEGACY_ONNX_FLOAT = {"fused": "fused", "integer": "x86", "ort": "x86-float"}  # --onnx-float
SECTION_NAME = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$]{0,63}")


@dataclass(frozen=True)
class CompileOptions:
    """Everything that changes the generated C besides the model and the target."""

    scratch: str = "any"            # "fit": optimized kernels only where scratch fits dead bytes
    tiling: str | None = None       # "auto" / "off"; None: only when a board's RAM needs it
    io: str = "arena"               # "external": inputs/outputs in caller buffers
    weights_section: str | None = None
    onnx_numerics: str = DEFAULT_ONNX_NUMERICS
    ort_threads: int | None = None  # onnxruntime's intra-op threads to match (x86-float order)
    ram_budget: int | None = None   # bytes a board has for the arena (tiling when over)

    def check(self) -> "CompileOptions":
        """self, or EdgeccError naming the flag whose value is unknown."""
        _one_of("--scratch", self.scratch, SCRATCH_POLICIES)
        if self.tiling is not None:
            _one_of("--tiling", self.tiling, TILING_POLICIES)
        _one_of("--io", self.io, IO_MODES)
        _one_of("--onnx-numerics", self.onnx_numerics, ONNX_NUMERICS)
        if self.weights_section is not None and not SECTION_NAME.fullmatch(self.weights_section):
            raise EdgeccError(f"--weights-section {self.weights_section!r}: not a linker section "
                              f"name (letters, digits, '.', '_', '$'; not starting with a digit)")
        return self

    def but(self, **changes) -> "CompileOptions":
        """A copy with `changes` applied, checked."""
        return replace(self, **changes).check()


def _one_of(flag: str, value: str, known: tuple[str, ...]) -> None:
    if value not in known:
        raise EdgeccError(f"unknown {flag} value {value!r} (known: {', '.join(known)})")
