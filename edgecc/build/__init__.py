"""The build layer: everything that runs a compiler or an emulator, or reads what they produce.

Owns nothing itself; its modules are: boards.py (board files, the RAM a board has for the arena),
cross.py (cross compile and link for a board, the generated linker script, the startup code and
the minimal application), host.py (host gcc/clang builds and runs), harness.py (the C `main` that
runs a model and prints its outputs, and reading them back), qemu.py (running under QEMU with
exact instruction counts, faults, a harness run on a board, per-layer profiles, the painted
stack), measure.py (flash and RAM of a linked program from the ELF, the map and gcc's call
graph), regions.py (each memory region's use), runner.py (cached programs behind edgecc.run),
firmware.py (`--emit` build files) and manifest.py (the output folder's manifest).

Layer rule (tests/test_layers.py): build imports only the core (the compiler and what it is made
of), never an app (cli, api, verify, budget, report, inspect).
"""
