"""The edgecc intermediate representation.

Owns: DType, QParams, TensorType, the arithmetic dialect values (Numerics), Value, Node, Graph
and `verify`. A graph is a list of nodes in topological order over named values; constants carry
their numpy data. All mutation of a graph goes through `Graph` methods (`add_node`,
`replace_nodes`, `set_outputs`) so that passes stay small and `verify` can check the invariants
after each one.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np


class DType(enum.Enum):
    """Element types the IR knows, with their numpy and C spellings."""

    INT8 = ("int8", "int8_t", 1)
    UINT8 = ("uint8", "uint8_t", 1)
    INT16 = ("int16", "int16_t", 2)
    UINT16 = ("uint16", "uint16_t", 2)
    UINT32 = ("uint32", "uint32_t", 4)
    INT32 = ("int32", "int32_t", 4)
    INT64 = ("int64", "int64_t", 8)
    UINT64 = ("uint64", "uint64_t", 8)
    FLOAT32 = ("float32", "float", 4)
    BOOL = ("bool", "uint8_t", 1)

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.value[0])

    @property
    def c(self) -> str:
        return self.value[1]

    @property
    def size(self) -> int:
        return self.value[2]


@dataclass(frozen=True)
class QParams:
    """Affine quantization: real = scale * (q - zero_point); per-tensor or per-channel on `axis`."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1

    def scale_f32(self) -> np.ndarray:
        return np.asarray(self.scale, dtype=np.float32)

    def __str__(self) -> str:
        if self.per_channel:
            return f"scale[{len(self.scale)}] axis={self.axis} zp={self.zero_point[0]}"
        return f"scale={self.scale[0]:.6g} zp={self.zero_point[0]}"


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: DType
    q: QParams | None = None

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.size

    def __str__(self) -> str:
        s = f"{self.dtype.value[0]}{list(self.shape)}"
        return f"{s} ({self.q})" if self.q else s


def same_quant(a: TensorType, b: TensorType) -> bool:
    """Identical dtype and quantization (scales compared exactly, as stored in the model)."""
    if a.dtype != b.dtype:
        return False
    if a.q is None or b.q is None:
        return a.q is None and b.q is None
    return (tuple(np.float32(a.q.scale)) == tuple(np.float32(b.q.scale))
            and tuple(a.q.zero_point) == tuple(b.q.zero_point))


@dataclass
class Value:
    """A named tensor: an activation (data is None) or a constant (data holds its numpy array)."""

    name: str
    type: TensorType
    data: np.ndarray | None = None
    label: str = ""  # the model's own name for the tensor: for humans, never a C identifier
    # the source tensor's channels (last axis) this value holds, when a pass dropped dead ones
    # (edgecc/passes/channels.py); None: all of them
    channels: tuple[int, ...] | None = None
    # a variable tensor (LSTM/SVDF state, resource variables): `data` holds its RESET value, so
    # constraints and folding see it as known at the start; the generated code keeps it in the
    # arena's state region, `name_reset()` writes `data` there, and the ops listed in
    # `OpDef.updates` write it back on every run (edgecc/plan/state.py, interp.run_graph).
    variable: bool = False

    @property
    def is_const(self) -> bool:
        return self.data is not None


# A node's arithmetic dialect (edgecc/numerics/ holds each one's arithmetic): a small frozen value
# the frontend sets once on every node and passes carry when they copy one; ops and kernel tables
# ask its properties, never a string.
@dataclass(frozen=True)
class Numerics:
    """How a node turns its exact integer (or float) intermediate into its output values."""

    label: ClassVar[str] = ""
    # onnxruntime's QLinear arithmetic: float32 scales, round half to even
    # (edgecc/numerics/qlinear.py)
    qlinear: ClassVar[bool] = False
    # a group onnxruntime's x86 CPU provider computes in float32 (edgecc/ops/_ort_float.py)
    float_group: ClassVar[bool] = False
    # onnxruntime's arithmetic, either of the two above: outputs requantized through float32
    onnxruntime: ClassVar[bool] = False
    # float32 steps that must round one by one: the C must not contract them into fused
    # multiply-adds (the generated code says so, codegen)
    exact_float_steps: ClassVar[bool] = False

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True)
class FixedPoint(Numerics):
    """TFLite's two-step fixed-point requantization (and TFLite Micro's integer kernels)."""

    label: ClassVar[str] = "tflite fixed point"


@dataclass(frozen=True)
class QLinear(Numerics):
    """onnxruntime's integer QLinear epilogue: round_half_even(float32(acc) x scale) + zp,
    saturated; its float32 steps must not be contracted into fused multiply-adds."""

    label: ClassVar[str] = "onnx qlinear"
    qlinear: ClassVar[bool] = True
    onnxruntime: ClassVar[bool] = True
    exact_float_steps: ClassVar[bool] = True


NEAR = "near"    # the exact integer accumulator, onnxruntime's float order near a rounding tie
FLOAT = "float"  # onnxruntime's float order throughout (portable float kernels)


@dataclass(frozen=True)
class OrtFloatGroup(Numerics):
    """A QDQ group onnxruntime's x86 CPU provider runs in float32. `order`: NEAR (integer
    kernels with the near-tie check, edgecc/numerics/ort_near.py) or FLOAT (its float32 order
    throughout); `threads`: the intra-op thread count whose conv summation order
    (edgecc/numerics/ort_order.py conv_segments) the result must match."""

    order: str = NEAR
    threads: int = 1
    label: ClassVar[str] = "onnxruntime x86 float group"
    float_group: ClassVar[bool] = True
    onnxruntime: ClassVar[bool] = True
    exact_float_steps: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.order not in (NEAR, FLOAT) or self.threads < 1:
            raise ValueError(f"OrtFloatGroup({self.order!r}, {self.threads})")

    @property
    def near_checked(self) -> bool:
        """Whether integer kernels with the near-tie check may compute it."""
        return self.order == NEAR


FIXED_POINT = FixedPoint()
QLINEAR = QLinear()


@dataclass
class Node:
    """One operation. `inputs` may contain None for an omitted optional input (e.g. no bias)."""

    op: str
    inputs: list[str | None]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    index: int = -1  # the op's index in the source model, for error messages
    # the arithmetic dialect, set once by the frontend and carried by every pass that copies the
    # node; ops ask it, never an attribute string
    numerics: Numerics = FIXED_POINT


class IRError(Exception):
    pass


@dataclass
class Graph:
    values: dict[str, Value]
    nodes: list[Node]
    inputs: list[str]
    outputs: list[str]
    name: str = "model"
    # what the importer found and fixed in the file (placeholder shapes, shape chains folded at
    # import: edgecc/frontends/shapes.py); shown by `edgecc inspect`
    notes: list[str] = field(default_factory=list)
    # facts of the source file the IR cannot hold (raw dims and indices, option table types,
    # subgraph count), for edgecc/validate; filled by the frontend, empty on derived graphs
    source: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> Value:
        return self.values[name]

    def type(self, name: str) -> TensorType:
        return self.values[name].type

    def producer(self) -> dict[str, Node]:
        return {o: n for n in self.nodes for o in n.outputs}

    def consumers(self) -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i is not None:
                    out.setdefault(i, []).append(n)
        return out

    def copy(self) -> "Graph":
        return Graph(dict(self.values),
                     [Node(n.op, list(n.inputs), list(n.outputs), dict(n.attrs), n.name, n.index,
                           n.numerics)
                      for n in self.nodes],
                     list(self.inputs), list(self.outputs), self.name, list(self.notes))

    def variables(self) -> list[str]:
        """Variable tensors some node reads, in first-appearance order (the state region)."""
        seen: dict[str, None] = {}
        for n in self.nodes:
            for v in n.inputs:
                if v is not None and self.values[v].variable:
                    seen[v] = None
        return list(seen)

    def activations(self) -> list[str]:
        """Non-constant values that are used, in first-appearance order."""
        seen: dict[str, None] = {}
        for name in self.inputs:
            seen[name] = None
        for n in self.nodes:
            for v in [*n.inputs, *n.outputs]:
                if v is not None and not self.values[v].is_const:
                    seen[v] = None
        return list(seen)


# The op registry (edgecc/ops/__init__.py) installs its lookup here when it is imported, so that
# verify can re-infer types without ir importing ops (which imports ir).
_op_lookup: Callable[[str], Any] | None = None


def set_op_lookup(lookup: Callable[[str], Any]) -> None:
    global _op_lookup
    _op_lookup = lookup


def verify(g: Graph) -> None:
    """Check the graph's invariants; raise IRError naming the first broken one."""
    if _op_lookup is None:
        raise IRError("no op registry: import edgecc.ops before verifying a graph")
    get_op = _op_lookup

    defined = set(g.inputs) | {k for k, v in g.values.items() if v.is_const}
    producers: set[str] = set()
    for name in g.inputs:
        if name not in g.values:
            raise IRError(f"graph input {name!r} has no value")
    for n in g.nodes:
        for i in n.inputs:
            if i is None:
                continue
            if i not in g.values:
                raise IRError(f"node {n.name} ({n.op}) reads unknown value {i!r}")
            if i not in defined:
                raise IRError(f"node {n.name} ({n.op}) reads {i!r} before it is produced")
        for o in n.outputs:
            if o in producers or o in g.inputs or g.values[o].is_const:
                raise IRError(f"value {o!r} has more than one producer")
            producers.add(o)
            defined.add(o)
        op = get_op(n.op)
        inferred = op.infer(g, n)
        for o, t in zip(n.outputs, inferred):
            have = g.values[o].type
            if t is not None and (tuple(t.shape) != tuple(have.shape) or t.dtype != have.dtype):
                raise IRError(f"node {n.name} ({n.op}): output {o!r} is {have}, inferred {t}")
    for o in g.outputs:
        if o not in defined:
            raise IRError(f"graph output {o!r} is never produced")
