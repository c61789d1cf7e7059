"""A small TFLite model writer (flatbuffers builder from the `tflite` package; no TensorFlow).

Owns: building single-op and small multi-op .tflite models with chosen shapes, quantization and
builtin options, for the tests and for examples/. Options are given as a dict of snake_case field
names (as the frontend reads them back), e.g. {"padding": 1, "stride_w": 2}; list values become
vectors (ReshapeOptions.new_shape). A custom op is named "CUSTOM:<custom code>" (e.g.
"CUSTOM:SignalWindow"); its options dict is written as the flexbuffer map TFLite Micro's custom
kernels read (keys sorted, values in key order).

    mb = ModelBuilder()
    x = mb.tensor("x", (1, 8, 8, 3), "int8", scale=0.05, zero_point=-3)
    w = mb.const("w", weights_int8, scale=[0.01] * 4, zero_point=[0] * 4, axis=0)
    b = mb.const("b", bias_int32, scale=[0.0005] * 4, zero_point=[0] * 4)
    y = mb.tensor("y", (1, 8, 8, 4), "int8", scale=0.1, zero_point=0)
    mb.op("CONV_2D", [x, w, b], [y], {"padding": 0, "stride_w": 1, "stride_h": 1}, version=3)
    data = mb.finish(inputs=[x], outputs=[y])
"""
from __future__ import annotations

from dataclasses import dataclass, field

import flatbuffers
import flatbuffers.flexbuffers as flexbuffers
import numpy as np
import tflite

_DTYPE_CODE = {"float32": 0, "float16": 1, "int32": 2, "uint8": 3, "int64": 4, "bool": 6, "int16": 7,
               "int8": 9, "float64": 10, "uint64": 12, "resource": 13, "uint32": 15, "uint16": 16}
_OPCODE = {v: k for k, v in tflite.BUILTIN_OPCODE2NAME.items()}
_OPTION_OVERRIDES = {
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions", "L2_POOL_2D": "Pool2DOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions", "SVDF": "SVDFOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions", "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "LEAKY_RELU": "LeakyReluOptions", "MIRROR_PAD": "MirrorPadOptions", "SPLIT_V": "SplitVOptions",
    "BATCH_MATMUL": "BatchMatMulOptions", "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
    "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions", "SELECT_V2": "SelectV2Options",
    "ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions", "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions", "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions", "PADV2": "PadV2Options", "GELU": "GeluOptions",
    "LOG_SOFTMAX": "LogSoftmaxOptions", "HARD_SWISH": "HardSwishOptions",
}
_OPTION_TYPES = {k: v for k, v in vars(tflite.BuiltinOptions).items() if isinstance(v, int)}


def options_class_name(op: str) -> str | None:
    name = _OPTION_OVERRIDES.get(op) or "".join(p.capitalize() for p in op.split("_")) + "Options"
    return name if name in _OPTION_TYPES else None


def _camel(snake: str) -> str:
    return "".join(p.capitalize() for p in snake.split("_"))


@dataclass
class _Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    buffer: int
    scale: list[float] | None
    zero_point: list[int] | None
    axis: int
    variable: bool = False  # TFLite is_variable: recurrent state the op reads and updates
    signature: tuple[int, ...] | None = None  # shape_signature (-1: a symbolic dim), if any


@dataclass
class _Op:
    name: str
    inputs: list[int]
    outputs: list[int]
    options: dict
    version: int
    options_class: str | None = None  # another op's options table (hostile-model tests)


@dataclass
class ModelBuilder:
    tensors: list[_Tensor] = field(default_factory=list)
    buffers: list[bytes] = field(default_factory=lambda: [b""])  # buffer 0: the empty sentinel
    ops: list[_Op] = field(default_factory=list)
    subgraph_copies: int = 1  # >1 repeats the subgraph (models with several subgraphs, for tests)
    # subgraphs closed by end_subgraph(): (tensors, ops, inputs, outputs), written before the
    # current one (so the first subgraph built is subgraph 0)
    done: list[tuple[list[_Tensor], list[_Op], list[int], list[int]]] = field(default_factory=list)

    def end_subgraph(self, inputs: list[int], outputs: list[int]) -> int:
        """Close the subgraph built so far (its index is returned) and start a new one: tensor
        indices restart at 0; buffers are shared by the whole model. For multi-subgraph models
        (a CALL_ONCE init subgraph: `mb.op("CALL_ONCE", [], [], {"init_subgraph_index": 1})`)."""
        self.done.append((self.tensors, self.ops, list(inputs), list(outputs)))
        self.tensors, self.ops = [], []
        return len(self.done) - 1

    def tensor(self, name: str, shape, dtype: str = "int8", scale=None, zero_point=None,
               axis: int = 0, variable: bool = False, signature=None) -> int:
        sc = None if scale is None else [float(s) for s in np.atleast_1d(scale)]
        zp = None if zero_point is None else [int(z) for z in np.atleast_1d(zero_point)]
        if sc is not None and zp is None:
            zp = [0] * len(sc)
        self.buffers.append(b"")
        self.tensors.append(_Tensor(name, tuple(int(s) for s in shape), dtype,
                                    len(self.buffers) - 1, sc, zp, axis, variable,
                                    None if signature is None else tuple(signature)))
        return len(self.tensors) - 1

    def const(self, name: str, data: np.ndarray, scale=None, zero_point=None, axis: int = 0) -> int:
        data = np.asarray(data)
        idx = self.tensor(name, data.shape, str(data.dtype), scale, zero_point, axis)
        self.buffers[self.tensors[idx].buffer] = np.ascontiguousarray(data).tobytes()
        return idx

    def op(self, name: str, inputs: list[int], outputs: list[int], options: dict | None = None,
           version: int = 1, options_class: str | None = None) -> None:
        self.ops.append(_Op(name, list(inputs), list(outputs), dict(options or {}), version,
                            options_class))

    # ---- serialization ----------------------------------------------------------------------
    def _options(self, b: flatbuffers.Builder, op: _Op) -> tuple[int, int]:
        if op.name.startswith("CUSTOM:"):
            return 0, 0
        cls = op.options_class or options_class_name(op.name)
        if cls is None:
            if op.options:
                raise ValueError(f"{op.name} takes no builtin options")
            return 0, 0
        vectors = {}
        for k, v in op.options.items():
            if isinstance(v, str):  # VarHandleOptions.shared_name / container
                vectors[k] = b.CreateString(v)
            elif isinstance(v, (list, tuple)):
                start = getattr(tflite, f"{cls}Start{_camel(k)}Vector")
                start(b, len(v))
                for x in reversed(v):
                    b.PrependInt32(int(x))
                vectors[k] = b.EndVector()
        getattr(tflite, f"{cls}Start")(b)
        for k, v in op.options.items():
            add = getattr(tflite, f"{cls}Add{_camel(k)}")
            add(b, vectors[k] if k in vectors else v)
        return _OPTION_TYPES[cls], getattr(tflite, f"{cls}End")(b)

    @staticmethod
    def _int_vector(b: flatbuffers.Builder, values, prepend) -> int:
        b.StartVector(4, len(values), 4)
        for x in reversed(list(values)):
            prepend(x)
        return b.EndVector()

    def _tensor(self, b: flatbuffers.Builder, t: _Tensor) -> int:
        name = b.CreateString(t.name)
        shape = self._int_vector(b, t.shape, b.PrependInt32)
        sig = None if t.signature is None else self._int_vector(b, t.signature, b.PrependInt32)
        q = None
        if t.scale is not None:
            sc = self._int_vector(b, t.scale, b.PrependFloat32)
            b.StartVector(8, len(t.zero_point), 8)
            for z in reversed(t.zero_point):
                b.PrependInt64(z)
            zp = b.EndVector()
            tflite.QuantizationParametersStart(b)
            tflite.QuantizationParametersAddScale(b, sc)
            tflite.QuantizationParametersAddZeroPoint(b, zp)
            tflite.QuantizationParametersAddQuantizedDimension(b, t.axis)
            q = tflite.QuantizationParametersEnd(b)
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        if sig is not None:
            tflite.TensorAddShapeSignature(b, sig)
        tflite.TensorAddType(b, _DTYPE_CODE[t.dtype])
        tflite.TensorAddBuffer(b, t.buffer)
        tflite.TensorAddName(b, name)
        if t.variable:
            tflite.TensorAddIsVariable(b, True)
        if q is not None:
            tflite.TensorAddQuantization(b, q)
        return tflite.TensorEnd(b)

    @staticmethod
    def _vec(b: flatbuffers.Builder, offs: list[int]) -> int:
        b.StartVector(4, len(offs), 4)
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    def _subgraph(self, b: flatbuffers.Builder, tensors, ops, inputs, outputs, codes) -> int:
        t_offs = [self._tensor(b, t) for t in tensors]
        op_offs = []
        for op in ops:
            ins = self._int_vector(b, op.inputs, b.PrependInt32)
            outs = self._int_vector(b, op.outputs, b.PrependInt32)
            otype, opts = self._options(b, op)
            custom = (b.CreateByteVector(bytes(flexbuffers.Dumps(op.options)))
                      if op.name.startswith("CUSTOM:") and op.options else None)
            tflite.OperatorStart(b)
            tflite.OperatorAddOpcodeIndex(b, codes.index((op.name, op.version)))
            tflite.OperatorAddInputs(b, ins)
            tflite.OperatorAddOutputs(b, outs)
            if otype:
                tflite.OperatorAddBuiltinOptionsType(b, otype)
                tflite.OperatorAddBuiltinOptions(b, opts)
            if custom is not None:
                tflite.OperatorAddCustomOptions(b, custom)
            op_offs.append(tflite.OperatorEnd(b))
        tensors_v, ops_v = self._vec(b, t_offs), self._vec(b, op_offs)
        in_v = self._int_vector(b, inputs, b.PrependInt32)
        out_v = self._int_vector(b, outputs, b.PrependInt32)
        sg_name = b.CreateString("main")
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, tensors_v)
        tflite.SubGraphAddOperators(b, ops_v)
        tflite.SubGraphAddInputs(b, in_v)
        tflite.SubGraphAddOutputs(b, out_v)
        tflite.SubGraphAddName(b, sg_name)
        return tflite.SubGraphEnd(b)

    def finish(self, inputs: list[int], outputs: list[int]) -> bytes:
        b = flatbuffers.Builder(1024)
        buf_offs = []
        for data in self.buffers:
            vec = b.CreateByteVector(data) if data else None
            tflite.BufferStart(b)
            if vec is not None:
                tflite.BufferAddData(b, vec)
            buf_offs.append(tflite.BufferEnd(b))
        graphs = [*self.done, (self.tensors, self.ops, list(inputs), list(outputs))]
        codes: list[tuple[str, int]] = []
        for op in (op for _, ops, _, _ in graphs for op in ops):
            if (op.name, op.version) not in codes:
                codes.append((op.name, op.version))
        code_offs = []
        for name, version in codes:
            custom = name.startswith("CUSTOM:")
            code = 32 if custom else _OPCODE[name]  # BuiltinOperator.CUSTOM
            custom_code = b.CreateString(name[len("CUSTOM:"):]) if custom else None
            tflite.OperatorCodeStart(b)
            if custom_code is not None:
                tflite.OperatorCodeAddCustomCode(b, custom_code)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            tflite.OperatorCodeAddBuiltinCode(b, code)
            tflite.OperatorCodeAddVersion(b, version)
            code_offs.append(tflite.OperatorCodeEnd(b))
        sgs = [self._subgraph(b, *gr, codes) for gr in graphs]
        if len(graphs) == 1:
            sgs = sgs * self.subgraph_copies
        subgraphs_v = self._vec(b, sgs)
        codes_v, buffers_v = self._vec(b, code_offs), self._vec(b, buf_offs)
        desc = b.CreateString("edgecc tflite_writer")
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        tflite.ModelAddOperatorCodes(b, codes_v)
        tflite.ModelAddSubgraphs(b, subgraphs_v)
        tflite.ModelAddDescription(b, desc)
        tflite.ModelAddBuffers(b, buffers_v)
        b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

