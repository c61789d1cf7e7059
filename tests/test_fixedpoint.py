"""edgecc/numerics/gemmlowp.py vs its C twin runtime_c/edgecc_fixedpoint.h (bit for bit), and both vs
the real functions they approximate."""
import subprocess

import numpy as np
import pytest

from edgecc.numerics import gemmlowp as fp
from edgecc.resources import data_dir
from edgecc.build.host import STRICT

RNG = np.random.default_rng(1234)
N = 3000


def _inputs() -> dict[str, np.ndarray]:
    neg = np.concatenate([-RNG.integers(0, 1 << 31, N), [0, -1, -(1 << 31), -(1 << 24)]])
    unit = np.concatenate([RNG.integers(0, 1 << 31, N), [0, 1, (1 << 31) - 1, 1 << 30]])
    pos = np.concatenate([RNG.integers(1, 1 << 31, N), [1, 2, (1 << 31) - 1, 1 << 19]])
    anyv = np.concatenate([RNG.integers(-(1 << 31), 1 << 31, N), [-(1 << 31), (1 << 31) - 1, 0]])
    return dict(neg=neg, unit=unit, pos=pos, anyv=anyv)


def _c_array(name: str, a: np.ndarray) -> str:
    body = ", ".join(f"{int(v)}" if v != -(1 << 31) else "INT32_MIN" for v in a)
    return f"static const int32_t {name}[{a.size}] = {{{body}}};"


@pytest.fixture(scope="module")
def c_results(tmp_path_factory) -> dict[str, np.ndarray]:
    ins = _inputs()
    src = "\n".join([
        "#include <stdio.h>", '#include "edgecc_fixedpoint.h"',
        *(_c_array(k, v) for k, v in ins.items()),
        "int main(void) {", "    int i, b, bits;",
        "    for (b = 1; b <= 9; b += 2) for (i = 0; i < (int)(sizeof neg / sizeof neg[0]); ++i)",
        '        printf("exp%d %ld\\n", b, (long)ec_exp_on_negative_values(neg[i], b));',
        "    for (i = 0; i < (int)(sizeof unit / sizeof unit[0]); ++i)",
        '        printf("inv %ld\\n", (long)ec_one_over_one_plus_x(unit[i]));',
        "    for (i = 0; i < (int)(sizeof pos / sizeof pos[0]); ++i) {",
        "        const int32_t r = ec_get_reciprocal(pos[i], 12, &bits);",
        '        printf("rec %ld %d\\n", (long)r, bits);', "    }",
        "    for (b = 0; b <= 5; ++b) for (i = 0; i < (int)(sizeof anyv / sizeof anyv[0]); ++i)",
        '        printf("shl%d %ld\\n", b, (long)ec_sat_shl(anyv[i], b));',
        "    for (i = 0; i + 1 < (int)(sizeof anyv / sizeof anyv[0]); ++i)",
        '        printf("hs %ld\\n", (long)ec_rounding_half_sum(anyv[i], anyv[i + 1]));',
        "    return 0;", "}", ""])
    d = tmp_path_factory.mktemp("fp")
    (d / "t.c").write_text(src)
    exe = d / "t"
    subprocess.run(["gcc", *STRICT, "-O2", f"-I{data_dir('runtime_c')}", str(d / "t.c"), "-o",
                    str(exe)], check=True, capture_output=True, text=True)
    out: dict[str, list] = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        key, *vals = line.split()
        out.setdefault(key, []).append([int(v) for v in vals])
    return {k: np.array(v, dtype=np.int64) for k, v in out.items()} | {"_in": ins}


@pytest.mark.parametrize("bits", [1, 3, 5, 7, 9])
def test_exp_on_negative_values_matches_c(c_results, bits):
    got = fp.exp_on_negative_values(c_results["_in"]["neg"], bits)
    np.testing.assert_array_equal(got, c_results[f"exp{bits}"][:, 0])


def test_one_over_one_plus_x_matches_c(c_results):
    np.testing.assert_array_equal(fp.one_over_one_plus_x_for_x_in_0_1(c_results["_in"]["unit"]),
                                  c_results["inv"][:, 0])


def test_get_reciprocal_matches_c(c_results):
    r, bits = fp.get_reciprocal(c_results["_in"]["pos"], 12)
    np.testing.assert_array_equal(r, c_results["rec"][:, 0])
    np.testing.assert_array_equal(bits, c_results["rec"][:, 1])


@pytest.mark.parametrize("e", range(6))
def test_sat_shl_matches_c(c_results, e):
    np.testing.assert_array_equal(fp.sat_shl(c_results["_in"]["anyv"], e), c_results[f"shl{e}"][:, 0])


def test_rounding_half_sum_matches_c(c_results):
    a = c_results["_in"]["anyv"]
    np.testing.assert_array_equal(fp.rounding_half_sum(a[:-1], a[1:]), c_results["hs"][:, 0])


def test_functions_approximate_the_real_ones():
    x = -RNG.integers(0, 1 << 31, 2000)
    np.testing.assert_allclose(fp.exp_on_negative_values(x, 5) / 2.0 ** 31,
                               np.exp(x / 2.0 ** 26), atol=2e-6)
    u = RNG.integers(0, 1 << 31, 2000)
    np.testing.assert_allclose(fp.one_over_one_plus_x_for_x_in_0_1(u) / 2.0 ** 31,
                               1.0 / (1.0 + u / 2.0 ** 31), atol=2e-8)
    s = RNG.integers(1 << 19, 1 << 31, 2000)
    r, bits = fp.get_reciprocal(s, 12)
    np.testing.assert_allclose(r / 2.0 ** 31 / 2.0 ** bits, 1.0 / (s / 2.0 ** 19), rtol=1e-7)


def test_softmax_constants():
    # beta * scale = 0.17185351 (pretrainedResnet's softmax): multiplier in Q5.26 terms
    m, shift = fp.preprocess_softmax_scaling(1.0, float(np.float32(0.17185351)))
    assert 1 << 30 <= m < 1 << 31 and shift == 24
    assert fp.calculate_input_radius(5, shift) == (31 << 26) >> 24
