"""The op registry: one `OpDef` per operator, each defined in its own module `edgecc/ops/<op>.py`.

Owns: the `OpDef`/`Kernel` records, registration, lookup, and the constraint check that reports
every unsupported node of a graph at once. An op module holds everything about its op: the
constraints (small functions whose docstring is the user-facing message), shape/type inference, the
numpy reference with TFLite's exact integer arithmetic, and the lowering (template + constants).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from edgecc.ir import Graph, Node, TensorType, set_op_lookup

Constraint = Callable[[Graph, Node], bool]


@dataclass
class Kernel:
    """What the lowering of one node hands to codegen.

    template: file name under templates/<isa>/ (searched along the target's path).
    params:   numbers and lists the template prints (Python computed all of them).
    derived:  what the template prints that Python derived from params for it alone (products,
              offsets, index expressions, the C text or macro name of a variant): the template
              sees them in `p` beside params; the layer's comment in NAME.c lists params only.
    consts:   arrays emitted as `const` data in NAME_weights.c; the template sees their C symbols.
    scratch:  bytes of arena scratch the kernel needs while it runs.
    streams:  the pass order of a window kernel (edgecc/plan/stream.py), or None: (rows, cols)
              = it writes its output in passes over blocks of rows x cols output pixels (cols 0 =
              whole rows) in raster order, each pass reading only input inside its own pixels'
              filter windows; (rows,) = whole rows per pass; (0, n) = blocks of n pixels in
              flat order; a third element 1 = each pass reads all before it writes (stream.py
              has the details). The planner then may start the
              output below the end of the input it consumes. Set it ONLY after deriving the
              template's access order, with a bit-exact test of the overlapped plan.
    headers:  runtime_c/ headers the template's C calls into (paths relative to runtime_c/, e.g.
              "dsp/conv_2d.h"); empty = an ISA kernel's table entry's, a portable kernel's from
              edgecc/lower/portable.py. Codegen adds what those headers `#include "..."` and
              copies exactly that set into OUT.
    """

    template: str
    params: dict[str, Any] = field(default_factory=dict)
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    scratch: int = 0
    variant: str = "portable"
    reason: str = ""
    streams: tuple[int, ...] | None = None
    headers: tuple[str, ...] = ()
    derived: dict[str, Any] = field(default_factory=dict)


def operand(is_const: bool) -> str:
    """The templates/c/_operand.j2 macro that prints an input the kernel may have emitted as a
    constant array: that array's symbol, or the tensor's pointer."""
    return "const_array" if is_const else "tensor"


@dataclass
class OpDef:
    name: str
    infer: Callable[[Graph, Node], list[TensorType | None]]
    reference: Callable[[Graph, Node, list[np.ndarray | None]], list[np.ndarray]]
    lower: Callable[[Graph, Node, Any], Kernel] | None
    constraints: list[Constraint] = field(default_factory=list)
    alias: bool = False  # output is the input's bytes reinterpreted (no code, shared storage)
    dtypes: str = "int8"
    # (output index, input index) pairs the planner may give the same bytes when that input dies
    # at this node: set ONLY when the C reads element i of the input before writing element i of
    # the output (same element count and size), and test it bit-exact with the buffers shared.
    inplace: tuple[tuple[int, int], ...] = ()
    reference_oracle: str = "TFLite Micro"
    # input indices of variable tensors (Value.variable) the op writes back every run, as TFLM
    # updates them in place: `reference` returns the outputs followed by their new values, in
    # this order; the kernel writes them into the state region of the arena.
    updates: tuple[int, ...] = ()
    # ops that keep hidden state from one run to the next (TFLite Micro's signal ops keep it in
    # their persistent buffers): (attrs, input types) -> the state's (shape, numpy dtype), or None
    # for none. The importer adds it, zeros after a reset, as a variable input after the op's own
    # (`updates` names it).
    state: Callable[[dict, list[TensorType]], tuple[tuple[int, ...], np.dtype] | None] | None = None


REGISTRY: dict[str, OpDef] = {}
# ops whose output depends only on their input's static shape, never on its values: known at
# compile time even when the input is an activation (folding, shape inference, `known_at_...`)
SHAPE_ONLY_OPS = frozenset({"SHAPE"})
_loaded = False


def register(op: OpDef) -> OpDef:
    REGISTRY[op.name] = op
    return op


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")


def get_op(name: str) -> OpDef:
    _load_all()
    if name not in REGISTRY:
        raise KeyError(name)
    return REGISTRY[name]


set_op_lookup(get_op)  # ir.verify re-infers types through the registry


def all_ops() -> dict[str, OpDef]:
    _load_all()
    return dict(sorted(REGISTRY.items()))


def is_supported(name: str) -> bool:
    _load_all()
    return name in REGISTRY


def failed_constraints(g: Graph, n: Node) -> list[str]:
    """Messages (constraint docstrings) of every constraint node `n` breaks."""
    op = get_op(n.op)
    out = []
    for c in op.constraints:
        try:
            ok = c(g, n)
        except Exception as e:  # a constraint that cannot even evaluate is a failure to report
            ok = False
            out.append(f"{(c.__doc__ or c.__name__).strip()} ({e})")
            continue
        if not ok:
            out.append((c.__doc__ or c.__name__).strip())
    return out


# ---- helpers shared by op modules ----------------------------------------------------------

def quantized_io(g: Graph, n: Node) -> bool:
    """integer inputs and outputs must carry quantization parameters (scale and zero point)"""
    names = [v for v in (n.inputs[:1] + n.outputs) if v is not None]
    return all(g.type(v).q is not None for v in names
               if g.type(v).dtype.value[0] in ("int8", "int16", "uint8"))


def in_type(g: Graph, n: Node, i: int = 0) -> TensorType:
    return g.type(n.inputs[i])  # type: ignore[arg-type]


def out_type(g: Graph, n: Node, i: int = 0) -> TensorType:
    return g.type(n.outputs[i])


def const(g: Graph, n: Node, i: int) -> np.ndarray | None:
    name = n.inputs[i] if i < len(n.inputs) else None
    if name is None:
        return None
    return g.value(name).data


def dtype_limits(t: TensorType) -> tuple[int, int]:
    info = np.iinfo(t.dtype.np)
    return int(info.min), int(info.max)


def conv_out_size(padding: int, size: int, k: int, stride: int, dilation: int) -> int:
    """TFLite ComputeOutSize: padding 0 = SAME, 1 = VALID."""
    eff = (k - 1) * dilation + 1
    if padding == 0:
        return (size + stride - 1) // stride
    return (size + stride - eff) // stride


def conv_pad(padding: int, size: int, k: int, stride: int, dilation: int, out: int) -> int:
    """TFLite ComputePaddingHeightWidth's leading pad for one dimension."""
    eff = (k - 1) * dilation + 1
    total = ((out - 1) * stride + eff - size)
    return max(total // 2, 0) if padding == 0 else 0


def c_array(a: np.ndarray) -> str:
    return ", ".join(str(int(x)) for x in np.asarray(a).ravel())
