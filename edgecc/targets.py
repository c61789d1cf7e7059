"""Targets: what a generated C file may assume about the core it runs on.

Owns: the table of targets, each with its template search path (most specialised ISA first, then
the portable `c` templates), and the core flags a build needs (docs/toolchains.md). Boards (boards/)
name a target; the target never names a board.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from edgecc.errors import EdgeccError


@dataclass(frozen=True)
class Target:
    name: str
    isa_path: tuple[str, ...]
    cflags: tuple[str, ...] = ()
    cc: str = "gcc"
    runner: str = "host"  # host | qemu-system | qemu-user
    qemu_machine: str = ""
    features: frozenset[str] = field(default_factory=frozenset)
    # Bytes of arena that are dead at the node being lowered (None: unconstrained). Lowering sets it
    # per node so a kernel can size its scratch (chunking) to fit without growing the arena.
    scratch_budget: int | None = None
    # /proc/cpuinfo flags a host must have to run this target's code (host-run targets only)
    host_cpu: frozenset[str] = field(default_factory=frozenset)


# Every build of generated C: no fused multiply-add, so float kernels round each product and sum
# as TFLite Micro's build does (docs/design.md, numerics). gcc in ISO C mode already does this.
FP_FLAGS = ("-ffp-contract=off",)
# The optimization level verify, budget and report build the generated C at, and the one the
# generated build files apply when a firmware sets none.
DEFAULT_OPT = "-O2"

TARGETS: dict[str, Target] = {
    "host": Target("host", ("c",)),
    "x86-avx2": Target("x86-avx2", ("x86", "c"), ("-mavx2", "-mfma"), features=frozenset({"avx2"}),
                       host_cpu=frozenset({"avx2", "fma"})),
    # The same templates and generated C as x86-avx2; its flags enable the kernels' 512-bit paths
    # (runtime_c/x86/common.h: EC_X86_512). Runs only on a CPU with AVX-512 VNNI.
    "x86-avx512": Target("x86-avx512", ("x86", "c"),
                         ("-mavx2", "-mfma", "-mavx512f", "-mavx512bw", "-mavx512vl",
                          "-mavx512vnni"), features=frozenset({"avx2", "avx512"}),
                         host_cpu=frozenset({"avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                                             "avx512_vnni"})),
    # No DSP and no FPU (soft float): the portable kernels. Armv7-M has SMULL for the
    # requantization's 64-bit product; Armv6-M has none (gcc calls libgcc's __aeabi_lmul) and
    # faults on unaligned word loads. Both run on QEMU mps2-an385 (a Cortex-M3: Armv6-M code runs
    # unchanged there).
    "cortex-m3": Target("cortex-m3", ("c",), ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"),
                        "arm-none-eabi-gcc", "qemu-system", "mps2-an385"),
    "cortex-m0plus": Target("cortex-m0plus", ("c",),
                            ("-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"),
                            "arm-none-eabi-gcc", "qemu-system", "mps2-an385"),
    "cortex-m4": Target("cortex-m4", ("dsp", "c"),
                        ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"),
                        "arm-none-eabi-gcc", "qemu-system", "mps2-an386", frozenset({"dsp"})),
    "cortex-m7": Target("cortex-m7", ("dsp", "c"),
                        ("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"),
                        "arm-none-eabi-gcc", "qemu-system", "mps2-an500", frozenset({"dsp"})),
    "cortex-m33": Target("cortex-m33", ("dsp", "c"),
                         ("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"),
                         "arm-none-eabi-gcc", "qemu-system", "mps2-an505", frozenset({"dsp"})),
    "cortex-m55": Target("cortex-m55", ("mve", "dsp", "c"),
                         ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
                         "arm-none-eabi-gcc", "qemu-system", "mps3-an547", frozenset({"dsp", "mve"})),
    "aarch64": Target("aarch64", ("neon", "c"), ("-march=armv8.2-a+dotprod",),
                      "aarch64-linux-gnu-gcc", "qemu-user", "", frozenset({"neon", "dotprod"})),
}


def get_target(name: str) -> Target:
    if name not in TARGETS:
        raise EdgeccError(f"unknown target {name!r} (known: {', '.join(TARGETS)})")
    return TARGETS[name]
