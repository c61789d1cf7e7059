"""TFLite Micro's 16-bit LSTM arithmetic in numpy, bit for bit.

Owns: the int16 sigmoid and tanh of TFLite's reference integer kernels (a 256-entry table of
sigmoid(i/24) in Q0.16 with linear interpolation; tanh(x) = 2*sigmoid(2x) - 1 reads the same table),
the saturating int16 add, the element-wise quantized multiply (MulElementwise), and the constants
TFLite Micro's LSTM prepares (gate FC multipliers, inter-gate multipliers, cell-state power of two,
quantized cell clip). The C twins live in `runtime_c/edgecc_lstm.h`; both must stay bit-identical.

Values are int64 numpy arrays holding the C values; every function returns what the C would store.
"""
from __future__ import annotations

import numpy as np

from edgecc.numerics.fixed_point import mbqm, quantize_multiplier, tflite_round

# sigmoid(i / 24) in Q0.16 for i = 0..255 (65535 at the end): TFLite's sigmoid_table_uint16.
# The published table is not plain rounding of the real function at every entry, so it is kept
# verbatim; tests/ops/test_lstm.py checks that the C header carries the same numbers.
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535], dtype=np.int64)

INT16_MIN, INT16_MAX = -32768, 32767
# The gate pre-activations are Q3.12 and gate outputs Q0.15. The input scale is TFLM's float
# literal 0.00024414062f (exactly 2**-12 in float32); the output scale is exactly 2**-15: with the
# literal 0.00003051757f (not 2**-15 in float32) the inter-gate multipliers fall 1 below a power of
# two and the cell state differs by 1 on exact rounding ties, which only shows once the state is
# carried into the next run (tests/test_state.py).
GATE_INPUT_SCALE = float(np.float32(0.00024414062))
GATE_OUTPUT_SCALE = 2.0 ** -15


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def to_int16(x) -> np.ndarray:
    """C's conversion of an int32 to int16_t (two's complement wrap, as gcc and clang do)."""
    return ((_i64(x) + 32768) & 0xFFFF) - 32768


def sat16(x) -> np.ndarray:
    return np.clip(_i64(x), INT16_MIN, INT16_MAX)


def sigmoid16(x) -> np.ndarray:
    """reference_integer_ops::Logistic on int16 with input_multiplier = 0, shift 0 (Q3.12 in).

    The input is scaled by 3 (3/4 of the table's 4x range), split into a table index (>> 9) and a
    9-bit interpolation fraction; the result is Q0.15.
    """
    return sigmoid_lookup16(_i64(x) * 3)


def sigmoid_lookup16(v) -> np.ndarray:
    """The table step of reference_integer_ops::Logistic on an already rescaled input v: index
    |v| >> 9, 9-bit interpolation fraction, mirrored for v < 0; Q0.15 out."""
    v = _i64(v)
    a = np.abs(v)
    uh = a >> 9
    idx = np.minimum(uh, 254)
    ua, ub = SIGMOID_TABLE[idx], SIGMOID_TABLE[idx + 1]
    res = np.where(uh >= 255, 0x7FFF << 10, (ua << 9) + (a & 0x1FF) * (ub - ua))
    res = np.where(v >= 0, res + (1 << 9), (1 << 25) - res + (1 << 9) - 1)
    return to_int16(res >> 10)


def tanh_params(cell_state_scale_power: int) -> tuple[int, int]:
    """(multiplier, right shift) the LSTM hands to the int16 Tanh for a Q(15+p) input.

    TFLM passes left shift (15 + p) - 3; a non-negative one becomes multiplier 3 << shift with no
    shift (the power-of-two case of Tanh), a negative one multiplier 3 and a rounding right shift.
    """
    left = 15 + cell_state_scale_power - 3
    if left >= 0:
        return 3 << left, 0
    return 3, -left


def tanh16(x, multiplier: int, right_shift: int) -> np.ndarray:
    """reference_integer_ops::Tanh on int16 after the LSTM's parameter mapping; Q0.15 out."""
    rnd = (1 << (right_shift - 1)) if right_shift > 0 else 0
    v = (_i64(x) * multiplier + rnd) >> right_shift
    a = np.abs(v)
    uh = a >> 8
    idx = np.minimum(uh, 254)
    ua, ub = SIGMOID_TABLE[idx], SIGMOID_TABLE[idx + 1]
    res = np.where(uh >= 255, 0xFFFF << 8, (ua << 8) + (a & 0xFF) * (ub - ua))
    res = np.where(v >= 0, res - (1 << 23) + (1 << 7), -res + (1 << 23) + (1 << 7) - 1)
    return to_int16(res >> 8)


def mul_elementwise(a, b, mult: int, shift: int, out_zp: int, lo: int, hi: int) -> np.ndarray:
    """reference_integer_ops::MulElementwise with zero input offsets (the gates are symmetric)."""
    return np.clip(out_zp + mbqm(_i64(a) * _i64(b), mult, shift), lo, hi)


def gate_fc_multiplier(in_scale: float, w_scale: float) -> tuple[int, int]:
    """The gate FC's requantization into Q3.12 (GetQuantizedConvolutionMultipler: the
    input*weight product is taken in float32, the division in double)."""
    prod = np.float32(np.float32(in_scale) * np.float32(w_scale))
    return quantize_multiplier(float(prod) / GATE_INPUT_SCALE)


def inter_gate_multiplier(s1: float, s2: float, out_scale: float) -> tuple[int, int]:
    """CreateInterGateMulParams: s1 * s2 / out in double from float32 operands."""
    s1, s2, out = (float(np.float32(s)) for s in (s1, s2, out_scale))
    return quantize_multiplier(s1 * s2 / out)


def checked_log2(scale: float) -> tuple[int, bool]:
    """CheckedLog2 in float32: (rounded log2, whether the scale is a power of two within 1e-3)."""
    x = np.float32(np.log(np.float32(scale))) * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    r = tflite_round(float(x))
    return r, abs(float(x) - r) < 1e-3


def quantized_cell_clip(cell_clip: float, cell_scale: float) -> int:
    """CreateLstmCellStateInfo: clip / scale in double, clamped to int16, truncated toward zero."""
    q = float(np.float32(cell_clip)) / float(np.float32(cell_scale))
    return int(min(max(q, -32768.0), 32767.0))
