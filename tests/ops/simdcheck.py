"""Shared by the SIMD kernel tests (tests/ops/test_simd_*.py): run a single-op model on a Cortex-M
target under QEMU, bit-exact against TFLite Micro, and say which kernel variant each layer got.

Nothing is mocked: arm-none-eabi-gcc builds the generated C, qemu-system-arm runs it.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from edgecc.compiler import compile_model
from edgecc.targets import get_target
from edgecc.verify import verify_model


def variants(model: bytes | Path, target: str) -> list[str]:
    """The kernel variant of every lowered layer of `model` on `target`."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(model) if isinstance(model, bytes) else p.write_bytes(Path(model).read_bytes())
        c = compile_model(p, get_target(target), "m")
    return [lw.kernel.variant for lw in c.lowered]


def scratches(model: bytes, target: str) -> list[int]:
    """The arena scratch bytes every lowered layer of `model` asks for on `target`."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(model)
        c = compile_model(p, get_target(target), "m")
    return [lw.kernel.scratch for lw in c.lowered]


def check_on_target(model: bytes, target: str, variant_prefix: str | None = None,
                    seeds=(0,)) -> None:
    """Bit-exact vs TFLite Micro on `target` (QEMU); when given, every layer's kernel variant must
    start with `variant_prefix` (so the test really exercises the SIMD kernel)."""
    if variant_prefix is not None:
        got = variants(model, target)
        assert got and all(v.startswith(variant_prefix) for v in got), got
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "m.tflite"
        p.write_bytes(model)
        for seed in seeds:
            r = verify_model(p, get_target(target), seed=seed)
            assert r.bit_exact, (r.mismatched_bytes, r.first_bad_layer)
