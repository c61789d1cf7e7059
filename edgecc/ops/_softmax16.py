"""SOFTMAX int16 -> int16, as TFLite Micro computes it: two interpolated 513-entry tables.

Owns: TFLite's gen_lut (the exp and 1/(1+x) tables built in float32 with the host libm's expf,
exactly as TFLM's SoftmaxPrepare builds them), the int16 interpolating table lookup, the numpy
reference of reference_ops::SoftmaxInt16 and the softmax_s16 kernel. The C twin of the lookup is
ec_lut16 in runtime_c/edgecc_fixedpoint.h; the tables themselves are emitted as const data, so
the C and this reference read the very same numbers.

Per row (TFLM SoftmaxInt16): diff = x - max(row) in [-65535, 0];
MultiplyByQuantizedMultiplier(diff, m, shift) with (m, shift) = QuantizeMultiplier(input_scale *
beta / (10 / 65535)) maps [-10, 0] onto [-65535, 0]; + 32767, saturated to int16, looks up exp
(Q0.15). The sum of exps (int32) is normalised by its leading zeros h: ((sum << (h - 1)) + 2**13)
>> 14, recentred by -(2**15 + 2**16), saturated, looks up 1/(1+x). Each output is
(exp * reciprocal + 2**(30 - h)) >> (31 - h), clamped to [0, 32767].
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from edgecc.numerics.gemmlowp import count_leading_zeros32
from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, in_type
from edgecc.ops._lut import libm, roundf
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier, wrap32

LUT_STEPS = 512  # int16-input tables: 512 intervals + 1 value for the last slope
MAX_DEPTH = 65536  # the int32 sum of up to this many exps (each <= 32767) keeps h >= 1


def gen_lut(func: Callable[[np.float32], np.float32], input_min: float, input_max: float,
            output_min: float, output_max: float) -> np.ndarray:
    """TFLite gen_lut<float, int16_t, int16_t>: every step in float32, rounding with roundf.

    Each entry is func sampled at the interval start, biased by half the error that linear
    interpolation makes at the interval's midpoint.
    """
    f32 = np.float32
    lo, hi = f32(input_min), f32(input_max)
    step = f32((hi - lo) / f32(LUT_STEPS))
    half_step = f32(step / f32(2))
    scale = f32(f32(65536) / f32(f32(output_max) - f32(output_min)))
    tmin, tmax = f32(-32768), f32(32767)
    lut = np.empty(LUT_STEPS + 1, np.int16)
    for i in range(LUT_STEPS):
        x = f32(lo + f32(f32(i) * step))
        val = f32(func(x))
        val_mid = f32(func(f32(x + half_step)))
        val_next = f32(func(f32(lo + f32(f32(i + 1) * step))))
        sample = roundf(f32(val * scale))
        interp = roundf(f32(f32(f32(val_next * scale) + roundf(f32(val * scale))) / f32(2)))
        err = f32(interp - roundf(f32(val_mid * scale)))
        bias = roundf(f32(err / f32(2)))
        lut[i] = int(min(max(f32(sample - bias), tmin), tmax))
    lut[LUT_STEPS] = int(min(max(roundf(f32(f32(func(hi)) * scale)), tmin), tmax))
    return lut


def _expf(x: np.float32) -> np.float32:
    return np.float32(libm().expf(float(x)))


def _one_over_one_plus_x(x: np.float32) -> np.float32:
    return np.float32(np.float32(1) / np.float32(np.float32(1) + x))


@lru_cache(maxsize=None)
def _exp_lut() -> np.ndarray:
    return gen_lut(_expf, -10.0, 0.0, -1.0, 1.0)


@lru_cache(maxsize=None)
def _recip_lut() -> np.ndarray:
    return gen_lut(_one_over_one_plus_x, 0.0, 1.0, -1.0, 1.0)


def exp_lut() -> np.ndarray:
    """exp on [-10, 0] (exp(-10) counts as nothing), values in [-1, 1] as Q0.15."""
    return _exp_lut().copy()


def one_over_one_plus_x_lut() -> np.ndarray:
    """1 / (1 + x) on [0, 1], values in [-1, 1] as Q0.15."""
    return _recip_lut().copy()


def _int16(x) -> np.ndarray:
    return ((np.asarray(x, dtype=np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def lut_lookup(value, lut: np.ndarray) -> np.ndarray:
    """TFLite's int16 table lookup: entry 256 + (v >> 7), interpolated by the low 7 bits."""
    v = np.asarray(value, dtype=np.int64)
    table = lut.astype(np.int64)
    index = 256 + (v >> 7)
    base = table[index]
    slope = _int16(table[index + 1] - base)  # held in an int16 by TFLite
    return _int16(base + ((slope * (v & 0x7F) + 64) >> 7))


def input_multiplier(beta: float, input_scale: float) -> tuple[int, int]:
    """QuantizeMultiplier(scale * beta / (10 / 65535)), all in double from float32 inputs."""
    real = float(np.float32(input_scale)) * float(np.float32(beta)) / (10.0 / 65535.0)
    return quantize_multiplier(real)


def softmax_rows(x: np.ndarray, mult: int, shift: int, exp_tab: np.ndarray,
                 recip_tab: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.int64)
    diff = x - x.max(axis=1, keepdims=True)
    scaled = mbqm(diff, mult, shift)
    exps = lut_lookup(np.clip(scaled + 32767, -32768, 32767), exp_tab)
    total = exps.sum(axis=1, keepdims=True)  # int32 in TFLM; MAX_DEPTH keeps it from wrapping
    h = count_leading_zeros32(total)
    shifted = ((total << (h - 1)) + (1 << 13)) >> 14
    recip = lut_lookup(np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767), recip_tab)
    right = 31 - h
    out = wrap32((exps * recip + (np.int64(1) << (right - 1))) >> right)
    return np.clip(out, 0, 32767).astype(np.int16)


def _beta(n: Node) -> float:
    return float(np.float32(n.attrs.get("beta", 1.0)))


def params(g: Graph, n: Node) -> dict:
    mult, shift = input_multiplier(_beta(n), in_type(g, n).q.scale[0])
    depth = int(in_type(g, n).shape[-1])
    return dict(mult=mult, shift=shift, depth=depth, rows=in_type(g, n).numel // depth)


def multiplier_in_range(g: Graph, n: Node) -> bool:
    real = float(np.float32(in_type(g, n).q.scale[0])) * _beta(n) / (10.0 / 65535.0)
    return 0.0 < real < float(1 << 30)  # a positive multiplier, a left shift of at most 30


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    p = params(g, n)
    x = np.asarray(ins[0]).reshape(p["rows"], p["depth"])
    y = softmax_rows(x, p["mult"], p["shift"], exp_lut(), one_over_one_plus_x_lut())
    return [y.reshape(in_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("softmax_s16.c.j2", params=params(g, n),
                  consts=dict(exp_lut=exp_lut(), recip_lut=one_over_one_plus_x_lut()),
                  variant="s16-lut")
