"""ONNX -> edgecc IR: QDQ and QOperator models, int8 and uint8, in NHWC.

Owns: the import driver. read.py checks and shape-infers the file; nodes.py and qop.py say what
each ONNX node makes of its inputs; emit.py writes the IR ops; builder.py keeps the state. Every
unsupported node is listed at once (op type, name, index) before anything is converted. The IR's
graph inputs and outputs keep the model's dtypes and declared layout: float32 edges go through
QUANTIZE / DEQUANTIZE (onnxruntime's rounding), and an output whose IR layout differs from its
ONNX one gets a TRANSPOSE back.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import onnx

from edgecc.errors import ModelFormatError, UnsupportedModel
from edgecc.frontends.onnx import floats
from edgecc.frontends.onnx import nodes as nd
from edgecc.frontends.onnx import emit, integer_ops, qdq, qop
from edgecc.frontends.onnx.builder import Builder, Rec
from edgecc.frontends.onnx.ortfuse import float_groups, fused_groups
from edgecc.frontends.onnx.read import ELEM_TYPES, read_model, where
from edgecc.ir import DType, Graph, IRError, TensorType, verify
from edgecc.numerics import FLOAT, NEAR, OrtFloatGroup
from edgecc.numerics.ort_order import default_threads
from edgecc.ops import failed_constraints
from edgecc.options import DEFAULT_ONNX_NUMERICS
from edgecc.passes.fold import folded_view

HANDLERS = {
    "QuantizeLinear": nd.quantize, "DequantizeLinear": nd.dequantize,
    "Conv": nd.conv, "MatMul": nd.matmul, "Gemm": nd.matmul,
    "Add": nd.add_mul, "Mul": nd.add_mul, "Relu": nd.relu_clip, "Clip": nd.relu_clip,
    "AveragePool": nd.pool, "GlobalAveragePool": nd.pool, "MaxPool": nd.pool,
    "Softmax": nd.softmax, "Sigmoid": nd.sigmoid, "GlobalMaxPool": nd.pool,
    "QLinearSigmoid": qop.qlinear_sigmoid,
    "QLinearConv": qop.qlinear_conv, "QGemm": qop.qgemm, "QLinearMatMul": qop.qlinear_matmul,
    "QLinearAdd": qop.qlinear_binary, "QLinearMul": qop.qlinear_binary,
    "QLinearAveragePool": qop.qlinear_pool, "QLinearGlobalAveragePool": qop.qlinear_pool,
    "QLinearSoftmax": qop.qlinear_softmax, "QLinearConcat": qop.qlinear_concat,
    "Concat": nd.concat, "Tile": qop.tile,
    "Transpose": qop.transpose, "Reshape": qop.reshape_like, "Flatten": qop.reshape_like,
    "Squeeze": qop.reshape_like, "Unsqueeze": qop.reshape_like, "Identity": qop.identity,
    "Constant": qop.constant, "ConvInteger": integer_ops.conv_integer,
    "MatMulInteger": integer_ops.matmul_integer,
    "DynamicQuantizeLinear": integer_ops.dynamic_quantize,
    "ConvTranspose": floats.conv_transpose, "Resize": floats.resize,
    **qdq.HANDLERS,  # QDQ around data movement and elementwise tables
}
emit.EMIT.update(qdq.EMIT)  # the pending groups qdq.py opens (it imports nodes, which imports emit)
_DOMAINS = ("", "ai.onnx", "com.microsoft")
_DTYPES = {"float32": DType.FLOAT32, "uint8": DType.UINT8, "int8": DType.INT8,
           "int16": DType.INT16, "int32": DType.INT32, "int64": DType.INT64, "bool": DType.BOOL}


def _unsupported_nodes(g: onnx.GraphProto) -> list[str]:
    return [f"{n.op_type} '{n.name}' at node {i}" if n.name else f"{n.op_type} at node {i}"
            for i, n in enumerate(g.node)
            if n.domain not in _DOMAINS or n.op_type not in HANDLERS]


def _input_quantization(b: Builder, inputs: list[str]) -> None:
    """An integer graph input that only reshapes or transposes read, into values that carry a
    DequantizeLinear's scale and zero point, takes them too: its real values are theirs
    (NAME_INPUTi_SCALE, float data given to edgecc.run), as for an input a DequantizeLinear
    reads directly."""
    for v in inputs:
        t = b.values[v].type
        readers = [n for n in b.nodes if v in n.inputs]
        qs = {b.values[n.outputs[0]].type.q for n in readers
              if b.values[n.outputs[0]].type.dtype == t.dtype}
        if (t.q is None and t.dtype.np.kind in "iu" and readers and len(qs) == 1
                and None not in qs and all(n.op in ("RESHAPE", "TRANSPOSE") for n in readers)):
            b.values[v] = replace(b.values[v], type=replace(t, q=qs.pop()))


def _output(b: Builder, name: str, want: DType | None) -> str:
    r = b.rec(name)
    if r.kind in ("const", "qconst"):
        raise UnsupportedModel(f"{b.path}: graph output '{name}' is a constant (edgecc only "
                               "returns computed outputs)")
    if r.kind == "pend":
        raise UnsupportedModel(f"{b.path}: graph output '{name}' is a float result of a "
                               "quantized op without a QuantizeLinear")
    p = b.plain(r, label=name)
    b.values[p.value].label = name  # the graph output's own name (NAME_OUTPUTi_NAME, manifest)
    b.index, b.where = -1, f"output '{name}'"
    t = b.type(p.value)
    if r.kind == "dq":
        return b.add("DEQUANTIZE", [p.value], TensorType(t.shape, DType.FLOAT32), label=name)
    if want == DType.UINT8 and t.dtype == DType.INT8:  # zero point + 128, the bytes xor 0x80
        uq = replace(t.q, zero_point=tuple(z + 128 for z in t.q.zero_point))
        return b.add("QUANTIZE", [p.value], TensorType(t.shape, DType.UINT8, uq), label=name)
    if want is not None and want != t.dtype:
        raise UnsupportedModel(f"{b.path}: graph output '{name}' is declared "
                               f"{want.value[0]} but computed as {t.dtype.value[0]}")
    return p.value


def _check_constraints(g: Graph, path: Path) -> None:
    view = folded_view(g)
    problems = [f"{n.op} from node {n.index}: {msg}" for n in view.nodes
                for msg in failed_constraints(view, n)]
    if problems:
        raise UnsupportedModel(f"{path}: unsupported parameters: " + "; ".join(problems))


def load_onnx(path: str | Path, numerics: str = DEFAULT_ONNX_NUMERICS, threads: int | None = None) -> Graph:
    """The ONNX model as edgecc IR. numerics (CompileOptions.onnx_numerics): 'fused', every QDQ
    group as the integer kernel onnxruntime fuses it into where int8 is allowed; 'x86' / 'x86-float':
    onnxruntime's x86 default, whose unfused int8 groups run in float32, reproduced on integer
    kernels with the near-tie check / in its float order throughout, following the conv order of
    `threads` intra-op threads (default: this machine's cores)."""
    m = read_model(path)
    path = m.path
    bad = _unsupported_nodes(m.graph)
    if bad:
        raise UnsupportedModel(f"{path}: unsupported ONNX nodes: " + "; ".join(bad))
    b = Builder(path, m.shapes)
    b.opset = m.opset
    int8 = numerics == "fused"  # int8 groups fused as onnxruntime does on Arm
    # the dialect of the groups onnxruntime computes in float32 (x86 numerics): on the integer
    # kernels with the near-tie check (x86) or in its float order throughout (x86-float), in
    # the conv order of `threads`; their lowering picks the kernels (ops/_ort_float.py,
    # _ort_near.py)
    b.float_group = OrtFloatGroup(NEAR if numerics == "x86" else FLOAT,
                                  threads or default_threads())
    b.ort_fused = fused_groups(m.graph, m.consts, m.dtypes, int8)
    # the groups onnxruntime computes in float32, exact with it in the x86 numerics
    b.ort_float = float_groups(m.graph, m.consts, m.dtypes, int8)
    for name, data in m.consts.items():
        b.recs[name] = Rec("const", data=data)
    inputs = []
    for vi in m.graph.input:
        if vi.name in m.consts:
            continue
        dtype = _DTYPES[ELEM_TYPES[vi.type.tensor_type.elem_type]]
        shape = m.shapes.get(vi.name)
        if shape is None:
            raise ModelFormatError(f"{path}: graph input '{vi.name}' has no shape")
        v = b.new_value(TensorType(shape, dtype), label=vi.name)
        b.recs[vi.name] = Rec("act", v, perm=tuple(range(len(shape))))
        inputs.append(v)
    for i, n in enumerate(m.graph.node):
        b.index, b.where = i, where(i, n)
        try:
            outs = HANDLERS[n.op_type](b, n, nd.attrs_of(n))
        except (IndexError, ValueError, TypeError) as e:  # inputs or attributes the op lacks
            # (onnx.checker does not check contrib ops' arity), or values of the wrong kind
            raise ModelFormatError(f"{path}: {b.where}: malformed node ({type(e).__name__}: "
                                   f"{' '.join(str(e).split())[:200]})") from None
        for name, r in zip(n.output, outs):
            b.recs[name] = r
            if r.kind == "act" and r.value not in b.trace:
                b.trace[r.value] = (name, r.perm)
    outputs = [_output(b, o.name, _DTYPES.get(ELEM_TYPES.get(m.dtypes.get(o.name, 0), "")))
               for o in m.graph.output]
    _input_quantization(b, inputs)
    g = Graph(b.values, b.nodes, inputs, outputs, name=path.stem)
    g.onnx_tensors = b.trace  # IR value -> (ONNX tensor, perm): verify's layer trace
    _check_constraints(g, path)
    try:
        verify(g)
    except IRError as e:
        raise ModelFormatError(f"{path}: inconsistent model: {e}") from None
    return g
