"""edgecc benchmarks: instructions, memory and latency of the generated C beside TFLite Micro
(+ CMSIS-NN) and LiteRT (+ XNNPACK), on the shared models.

Run `python3 -m benchmarks.run --help` from the repository root. Modules: anchors.py (the TFLite
Micro + CMSIS-NN figures of ../shared/bench/anchors.md), metrics.py (MACs from the IR, TFLite
Micro's smallest arena, flash of a host build), x86.py (exact x86 instruction counts under
qemu-x86_64, the C timing harness, LiteRT timing), table.py (the markdown report), run.py (the
command).
"""
