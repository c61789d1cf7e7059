"""TFLite flatbuffer -> edgecc IR, through the `tflite` package's generated readers.

Owns: reading subgraph 0 (tensors, constant buffers including those stored after the flatbuffer by
offset/size, per-tensor and per-channel quantization, builtin options as snake_case attrs, op
versions), and rejecting a model with every unsupported op listed at once. Value names are `t<i>`
for TFLite tensor i so layers can be matched with TFLite Micro's tensors; the model's own names are
kept as labels (never used as C identifiers).
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

import flatbuffers
import flatbuffers.flexbuffers as flexbuffers
import numpy as np
import tflite

from edgecc.errors import ModelFormatError, UnsupportedModel
from edgecc.frontends.shapes import settle_shapes
from edgecc.frontends.tflite_resources import RESOURCE, resolve_resources
from edgecc.ir import DType, Graph, IRError, Node, QParams, TensorType, Value, verify
from edgecc.numerics import FIXED_POINT
from edgecc.ops import failed_constraints, get_op, is_supported
from edgecc.passes.fold import folded_view
from edgecc.validate import validate_graph
from edgecc.validate.limits import check_alloc, read_model_file

_TFL_DTYPES = {0: DType.FLOAT32, 2: DType.INT32, 3: DType.UINT8, 4: DType.INT64, 6: DType.BOOL,
               7: DType.INT16, 9: DType.INT8, 12: DType.UINT64, 15: DType.UINT32,
               16: DType.UINT16}
_OPTION_CLASS = {v: k for k, v in vars(tflite.BuiltinOptions).items() if isinstance(v, int)}
_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if isinstance(v, int)}


def type_name(code: int) -> str:
    """A TFLite TensorType's schema name (UINT32, FLOAT16, ...), or `type <n>` for a number the
    schema does not define."""
    return _TYPE_NAMES.get(code, f"type {code}")


def _unsupported_types(path: Path, bad: list[tuple[int, str, int]], nodes: list[Node]) -> str:
    """One line naming the first tensor of a type edgecc lacks (its index, name, type in words and
    the op that uses it) and how many more there are."""
    i, label, code = bad[0]
    users = [f"op {n.index} ({n.op})" for n in nodes if f"t{i}" in (*n.inputs, *n.outputs)]
    named = f" ('{label}')" if label else ""
    used = f", used by {users[0]}" if users else ""
    more = f"; {len(bad) - 1} more tensors of types it lacks" if len(bad) > 1 else ""
    known = ", ".join(_TYPE_NAMES[c] for c in sorted(_TFL_DTYPES))
    return (f"{path}: tensor {i}{named} has type {type_name(code)}{used}, which edgecc does not "
            f"support (it supports {known}){more}")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _options_dict(op, opts_type: int) -> dict:
    """Every scalar field of the op's builtin options table, by snake_case name (defaults filled)."""
    if opts_type == 0:
        return {}
    cls_name = _OPTION_CLASS.get(opts_type)
    cls = getattr(tflite, cls_name, None) if cls_name else None
    if cls is None:
        return {}
    obj = cls()
    table = op.BuiltinOptions()
    if table is None:  # options omitted: build an empty table so accessors return schema defaults
        b = flatbuffers.Builder(16)
        getattr(tflite, f"{cls_name}Start")(b)
        b.Finish(getattr(tflite, f"{cls_name}End")(b))
        buf = b.Output()
        obj.Init(buf, flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0))
    else:
        obj.Init(table.Bytes, table.Pos)
    out = {}
    for m in dir(cls):
        if m.startswith("_") or m in ("Init",) or m.startswith("GetRootAs") or m.endswith(
                "BufferHasIdentifier") or m.endswith("Length") or m.endswith("IsNone"):
            continue
        fn = getattr(obj, m)
        if m.endswith("AsNumpy"):
            val = fn()
            out[_snake(m[:-len("AsNumpy")])] = [] if isinstance(val, int) else val.tolist()
            continue
        if hasattr(cls, m + "AsNumpy"):
            continue
        try:
            out[_snake(m)] = fn()
        except TypeError:
            continue
    return out


def _read_buffer(model, raw: bytes, idx: int) -> bytes | None:
    buf = model.Buffers(idx)
    if buf is None:
        return None
    off, size = buf.Offset(), buf.Size()
    if off > 1 and size > 0:  # stored after the flatbuffer (models > 2 GB style)
        if off + size > len(raw):
            raise ModelFormatError(f"buffer {idx} points past the end of the file")
        return raw[off:off + size]
    if buf.DataLength() == 0:
        return None
    return buf.DataAsNumpy().tobytes()


def _qparams(t) -> QParams | None:
    q = t.Quantization()
    if q is None or q.ScaleLength() == 0:
        return None
    scales = tuple(float(s) for s in q.ScaleAsNumpy())
    zps = tuple(int(z) for z in q.ZeroPointAsNumpy()) if q.ZeroPointLength() else (0,) * len(scales)
    if len(zps) == 1 and len(scales) > 1:
        zps = zps * len(scales)
    return QParams(scales, zps, int(q.QuantizedDimension()))


def _variable_reset_value(shape: tuple[int, ...], dtype: DType, q: QParams | None) -> np.ndarray:
    """A variable tensor (recurrent state: LSTM hidden/cell, SVDF activation state) as the constant
    it holds at the start of a run: TFLite Micro's ResetVariableTensors fills int8 ones with their
    zero point and all others with 0, whatever the buffer holds. The value is marked `variable`:
    the generated code keeps it in the arena across runs and `name_reset()` writes this value.
    """
    fill = q.zero_point[0] if (dtype == DType.INT8 and q is not None) else 0
    return np.full(shape, fill, dtype=dtype.np)


def load_tflite(path: str | Path) -> Graph:
    """read_tflite, the validation stage (edgecc/validate) and the op checks: the import that
    compiler.load_model runs, for callers that want a TFLite graph alone."""
    return check_ops(validate_graph(read_tflite(path)), Path(path))


def read_tflite(path: str | Path) -> Graph:
    """The file as IR, its wiring checked (`_check_structure`), no op code run yet: any error
    while decoding is the file's fault (ModelFormatError), never an internal one."""
    path = Path(path)
    raw = read_model_file(path)  # a regular file under the limit, read without blocking
    if len(raw) < 8 or raw[4:8] != b"TFL3":
        raise ModelFormatError(f"{path}: not a TFLite flatbuffer (no 'TFL3' identifier)")
    try:
        g, unsupported = _build(raw, path)
    except (ModelFormatError, UnsupportedModel):
        raise
    except struct.error:  # an offset read past the end of the buffer
        raise ModelFormatError(f"{path}: malformed TFLite model (truncated or corrupt: an offset "
                               f"points outside the {len(raw)}-byte file)") from None
    except Exception as e:  # flatbuffers raises assorted errors on truncated/corrupt input
        raise ModelFormatError(f"{path}: malformed TFLite model ({type(e).__name__}: {e})") from None
    # The file is read: from here on an exception is edgecc's bug, never a malformed model.
    if unsupported:
        raise UnsupportedModel(f"{path}: unsupported ops: " + "; ".join(unsupported))
    return g


def settled_graph(path: str | Path) -> Graph | None:
    """The file as IR with every shape settled from the ops (frontends/shapes.py; its notes say
    where the file's shapes are wrong), the ops' constraints unchecked; None for a file that cannot
    be read. For choosing an oracle: TFLite Micro computes with the file's declared shapes."""
    try:
        g, _ = _build(Path(path).read_bytes(), Path(path))
    except Exception:  # noqa: BLE001 - unreadable: load_tflite says why, TFLM decides alone
        return None
    return settle_shapes(g)


def _input_shape(t, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A subgraph input's shape: symbolic dims (-1 in shape_signature) resolved with batch 1."""
    sig = [int(s) for s in t.ShapeSignatureAsNumpy()] if t.ShapeSignatureLength() else []
    if len(sig) != len(shape) or not shape or sig[0] >= 0:
        return shape
    return (1, *shape[1:])


def _build(raw: bytes, path: Path) -> tuple[Graph, list[str]]:
    model = tflite.Model.GetRootAsModel(raw, 0)
    if model.SubgraphsLength() < 1:
        raise ModelFormatError(f"{path}: model has no subgraph")
    sg = model.Subgraphs(0)
    source: dict = {"format": "tflite", "subgraphs": model.SubgraphsLength(), "dims": {},
                    "op_inputs": {}, "op_options": {}}
    values: dict[str, Value] = {}
    bad_types: list[tuple[int, str, int]] = []
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        ttype = t.Type()
        if ttype == RESOURCE:  # a variable's handle: tflite_resources replaces its uses
            continue
        if ttype not in _TFL_DTYPES:
            bad_types.append((i, (t.Name() or b"").decode("utf-8", "replace"), ttype))
            continue
        dtype = _TFL_DTYPES[ttype]
        shape = tuple(int(s) for s in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        source["dims"][f"t{i}"] = shape
        shape = tuple(max(s, 1) if s < 0 else s for s in shape)  # dynamic dims: fixed at 1
        data = _read_buffer(model, raw, t.Buffer())
        arr = None
        if data is not None:
            arr = np.frombuffer(data, dtype=dtype.np).copy()
            if arr.size != int(np.prod(shape, dtype=np.int64)):
                raise ModelFormatError(f"{path}: tensor {i} has {arr.size} elements of data for "
                                       f"shape {list(shape)}")
            arr = arr.reshape(shape)
        if t.IsVariable():
            check_alloc(f"{path}: tensor {i}", shape, dtype.size)
            arr = _variable_reset_value(shape, dtype, _qparams(t))
        label = (t.Name() or b"").decode("utf-8", "replace")
        values[f"t{i}"] = Value(f"t{i}", TensorType(shape, dtype, _qparams(t)), arr, label=label,
                                variable=bool(t.IsVariable()))

    nodes = _read_ops(model, sg, source)
    if bad_types:
        raise UnsupportedModel(_unsupported_types(path, bad_types, nodes))
    nodes = _add_op_state(values, nodes, path)
    init_graphs = {}
    if any(n.op == "CALL_ONCE" for n in nodes):  # the subgraphs it may call, to run at import
        for k in range(1, model.SubgraphsLength()):
            other = model.Subgraphs(k)
            init_graphs[k] = (_read_ops(model, other, None), _consts(model, raw, other))
    nodes, source["init_subgraphs"], notes = resolve_resources(values, nodes, init_graphs, path,
                                                                  _variable_reset_value)
    unsupported = [f"{n.op} v{n.attrs['version']} at op {n.index}" for n in nodes
                   if not is_supported(n.op)]

    inputs = [f"t{x}" for x in sg.InputsAsNumpy()] if sg.InputsLength() else []
    outputs = [f"t{x}" for x in sg.OutputsAsNumpy()] if sg.OutputsLength() else []
    _check_structure(values, nodes, inputs, outputs, path)
    for v in inputs:
        old = values[v].type
        t = sg.Tensors(int(v[1:]))
        shape = _input_shape(t, old.shape)
        if shape != old.shape:
            notes.append(f"input {v}: symbolic batch resolved with batch 1: the file says "
                         f"{list(old.shape)}, edgecc uses {list(shape)}")
            values[v] = Value(v, TensorType(shape, old.dtype, old.q), label=values[v].label)
        sig = t.ShapeSignatureAsNumpy().tolist() if t.ShapeSignatureLength() else []
        free = [d for d, s in enumerate(sig) if s < 0 and d > 0 and d < len(shape)]
        if free:
            notes.append(f"input {v}: symbolic dims {free} (shape_signature {sig}) fixed at the "
                         f"file's {[shape[d] for d in free]}")
    return Graph(values, nodes, inputs, outputs, name=path.stem, notes=notes,
                 source=source), unsupported


def _read_ops(model, sg, source: dict | None) -> list[Node]:
    """The operators of one subgraph as nodes (names `t<i>` for its tensor i); `source` (subgraph
    0 only) collects the raw input indices and option table types for edgecc/validate."""
    nodes: list[Node] = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin == 32:
            name = "CUSTOM:" + (code.CustomCode() or b"").decode("utf-8", "replace")
        else:
            name = tflite.BUILTIN_OPCODE2NAME.get(builtin, f"BUILTIN_{builtin}")
        raw_ins = [int(x) for x in (op.InputsAsNumpy() if op.InputsLength() else [])]
        ins = [None if x < 0 else f"t{x}" for x in raw_ins]
        outs = [f"t{x}" for x in (op.OutputsAsNumpy() if op.OutputsLength() else [])]
        if source is not None:
            source["op_inputs"][i] = raw_ins
            source["op_options"][i] = op.BuiltinOptionsType()
        attrs = _options_dict(op, op.BuiltinOptionsType()) if builtin != 32 else _custom(op)
        attrs["version"] = code.Version()
        # every TFLite op follows TFLite's fixed-point arithmetic (edgecc/numerics)
        nodes.append(Node(name, ins, outs, attrs, name=f"{i}_{name.lower()}", index=i,
                          numerics=FIXED_POINT))
    return nodes


def _custom(op) -> dict:
    """A custom op's options: the flexbuffer map TFLite Micro's custom kernels read, as a dict
    (empty when the op has none or they are not a map)."""
    if op.CustomOptionsLength() == 0:
        return {}
    opts = flexbuffers.Loads(op.CustomOptionsAsNumpy().tobytes())
    return dict(opts) if isinstance(opts, dict) else {}


def _add_op_state(values: dict[str, Value], nodes: list[Node], path: Path) -> list[Node]:
    """Each op that keeps hidden state between runs (OpDef.state: TFLite Micro's signal ops)
    gets it as a variable input after its own, named state_<op index>, zeros after a reset; the
    op's `updates` write it back each run (edgecc/plan/state.py)."""
    out = []
    for n in nodes:
        spec = get_op(n.op).state if is_supported(n.op) else None
        found = spec(n.attrs, [values[v].type for v in n.inputs if v in values]) if spec else None
        if found is not None:
            shape, np_dtype = found
            dtype = next(d for d in DType if d.np == np.dtype(np_dtype))
            check_alloc(f"{path}: op {n.index} ({n.op}) state", shape, dtype.size)
            v = f"state_{n.index}"
            values[v] = Value(v, TensorType(tuple(shape), dtype), np.zeros(shape, dtype.np),
                              label=f"{n.op} state", variable=True)
            n = Node(n.op, [*n.inputs, v], n.outputs, n.attrs, name=n.name, index=n.index,
                     numerics=n.numerics)
        out.append(n)
    return out


def _consts(model, raw: bytes, sg) -> dict[str, np.ndarray | None]:
    """The constant tensors of a (CALL_ONCE init) subgraph, by `t<i>` name."""
    out: dict[str, np.ndarray | None] = {}
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        data = _read_buffer(model, raw, t.Buffer()) if t.Type() in _TFL_DTYPES else None
        if data is not None:
            shape = tuple(int(s) for s in t.ShapeAsNumpy()) if t.ShapeLength() else ()
            out[f"t{i}"] = np.frombuffer(data, dtype=_TFL_DTYPES[t.Type()].np).copy().reshape(shape)
    return out


def check_ops(g: Graph, path: Path) -> Graph:
    """Shapes settled from the ops (frontends/shapes.py), then each op's constraints on the
    validated graph and its declared shapes against inference. Runs after edgecc/validate, so an
    exception here is a bug in edgecc (exit 3), not the file's."""
    g = settle_shapes(g)
    for n in g.nodes:  # a shape computed from the ops may be empty where the file's was not
        for v in n.outputs:
            if v is not None and any(d <= 0 for d in g.value(v).type.shape):
                raise UnsupportedModel(f"{path}: op {n.index} ({n.op}) computes tensor "
                                       f"{v[1:]} with no elements (shape "
                                       f"{list(g.value(v).type.shape)})")
    problems = []
    # Constraints describe what the kernels will see: the graph after constant folding (weights
    # computed from constants are constants by then; folded nodes need no kernel).
    view = folded_view(g)
    for n in view.nodes:
        for msg in failed_constraints(view, n):
            problems.append(f"{n.op} at op {n.index} ({n.outputs[0] if n.outputs else '?'}): {msg}")
    if problems:
        raise UnsupportedModel(f"{path}: unsupported parameters: " + "; ".join(problems))
    try:  # declared shapes/types must match what each op computes (e.g. FC depth vs weights)
        verify(g)
    except IRError as e:
        raise ModelFormatError(f"{path}: inconsistent model: {e}") from None
    return g


def _check_structure(values: dict[str, Value], nodes: list[Node], inputs: list[str],
                     outputs: list[str], path: Path) -> None:
    """The subgraph's wiring, in TFLite's terms (tensor and op indices), before any op looks at it:
    indices in range, operators in execution order (each reads only graph inputs, constants and
    tensors written by an earlier op), one writer per tensor, every output computed."""
    def where(v: str) -> str:
        label = values[v].label if v in values else ""
        return f"tensor {v[1:]}" + (f" '{label}'" if label else "")

    n_tensors = len(values)
    for kind, lst in (("input", inputs), ("output", outputs)):
        for v in lst:
            if v not in values:
                raise ModelFormatError(f"{path}: subgraph {kind} refers to tensor {v[1:]}, but the "
                                       f"model has {n_tensors} tensors")
    if not inputs or not outputs:
        raise ModelFormatError(f"{path}: the subgraph has no {'inputs' if not inputs else 'outputs'}")
    for v in inputs:
        if values[v].is_const:
            raise ModelFormatError(f"{path}: subgraph input {where(v)} holds constant data")
    for v in outputs:
        if values[v].is_const:
            raise UnsupportedModel(f"{path}: subgraph output {where(v)} is a constant (edgecc "
                                   f"only returns computed outputs)")
    used = set(inputs) | set(outputs) | {v for n in nodes for v in (*n.inputs, *n.outputs) if v}
    for v in sorted(used & set(values), key=lambda v: (0, int(v[1:])) if v[1:].isdigit()
                    else (1, v)):  # TFLite tensors by index, then the resource variables
        if 0 in values[v].type.shape:
            raise UnsupportedModel(f"{path}: {where(v)} has no elements (shape "
                                   f"{list(values[v].type.shape)})")
    written = set(inputs) | {v for v, val in values.items() if val.is_const}
    for n in nodes:
        for pos, v in enumerate(n.inputs):
            if v is None:
                continue
            if v not in values:
                raise ModelFormatError(f"{path}: op {n.index} ({n.op}) input {pos} refers to "
                                       f"tensor {v[1:]}, but the model has {n_tensors} tensors")
            if v not in written:
                raise ModelFormatError(f"{path}: op {n.index} ({n.op}) reads {where(v)} before any "
                                       f"earlier op writes it")
        for pos, v in enumerate(n.outputs):
            if v not in values:
                raise ModelFormatError(f"{path}: op {n.index} ({n.op}) output {pos} refers to "
                                       f"tensor {v[1:]}, but the model has {n_tensors} tensors")
            if v in written:
                raise ModelFormatError(f"{path}: op {n.index} ({n.op}) writes {where(v)}, which is "
                                       f"a constant, a subgraph input or written by an earlier op")
            written.add(v)
    for v in outputs:
        if v not in written:
            raise ModelFormatError(f"{path}: subgraph output {where(v)} is not computed by any op")
