"""Geometry records: the C structs the SIMD kernels read, as named tuples in the structs' order.

Owns: one record per kernel geometry struct in runtime_c/ (`record(c_struct, fields)`: a
namedtuple whose `c_struct` names the C typedef and whose fields are the struct's, in order).
A lowering builds its geometry as a record (a wrong field count fails there), the template
prints it as the struct's initializer (`{{ p.geom | join(", ") }}`), and
tests/test_geom_records.py checks every record against its struct in the C headers, so the
order is stated once and checked. Records of one table only may live beside it (neon.AddGeom).
"""
from __future__ import annotations

import re
from collections import namedtuple


def record(c_struct: str, fields: str) -> type:
    """A namedtuple class for C struct `c_struct` with these space-separated fields."""
    name = "".join(p.capitalize() for p in c_struct.removeprefix("ec_").split("_"))
    cls = namedtuple(name, fields)
    cls.c_struct = c_struct
    return cls


# C struct: its fields in order. in runtime_c/x86/, neon/, vec/, dsp/, mve/.
STRUCTS = """
ec_vec_conv_geom: pixels in_h in_w in_c out_h out_w out_c k_h k_w stride_h stride_w dil_h dil_w
    pad_t pad_l segs seg_len seg_p kp ocp in_zp batches mode
ec_x512_band: P NC chunk row cols slide
ec_x86_first_geom: batches in_h in_w in_c out_h out_w out_c k_h k_w stride_h stride_w dil_h dil_w
    pad_t pad_l seg kpp nb16 tail8 row_cols row_b band in_zp
ec_avx2_dw_geom: batches in_h in_w chans out_h out_w k_h k_w stride_h stride_w dil_h dil_w pad_t
    pad_l pairs
ec_neon_dw_geom: batches in_h in_w chans out_h out_w k_h k_w stride_h stride_w dil_h dil_w pad_t
    pad_l pairs pair_sum
ec_avx2_dw3_geom: batches in_h in_w chans out_h out_w stride_h stride_w pad_t pad_l d4 x_lo x_hi
ec_avx2_add_lin_geom: n A B C k D lo hi
ec_avx2_add_exact_geom: n off1 m1 e1 off2 m2 e2 mo eo zp lo hi
ec_avx2_pool_geom: batches in_h in_w c out_h out_w fh fw s_h s_w pad_h pad_w lo hi
ec_dsp_conv_geom: pixels in_h in_w in_c out_h out_w out_c k_h k_w s_h s_w d_h d_w pad_t pad_l kp
    direct pad_val lo hi
ec_dsp_dw_geom: batches in_h in_w in_c out_h out_w out_c dm k_h k_w s_h s_w pad_t pad_l wp wpr
    kind pad_val lo hi
ec_dsp_fc_geom: batches depth dp units up m n e lo hi cp
ec_dsp_add_geom: n m nn e lo hi
ec_dsp_pool_geom: batches in_h in_w c out_h out_w fh fw s_h s_w pad_h pad_w lo hi
ec_mve_conv_geom: pixels in_h in_w in_c out_h out_w out_c k_h k_w s_h s_w d_h d_w pad_t pad_l kp
    mode rowp pad_val lo hi y0 y1 x0 x1
ec_mve_dw_geom: batches in_h in_w in_c out_h out_w out_c dm k_h s_h s_w pad_t pad_l wp pad_val
    lo hi
ec_mve_fc_geom: batches depth kp units lo hi
"""
RECORDS: dict[str, type] = {
    c.strip(): record(c.strip(), " ".join(f.split()))
    for c, f in (e.split(":") for e in re.split(r"\n(?=\S)", STRUCTS.strip()))}

(VecConvGeom, X512Band, X86FirstGeom, Avx2DwGeom, NeonDwGeom, Avx2Dw3Geom, Avx2AddLinGeom,
 Avx2AddExactGeom, Avx2PoolGeom, DspConvGeom, DspDwGeom, DspFcGeom, DspAddGeom, PoolGeom,
 MveConvGeom, MveDwGeom, MveFcGeom) = RECORDS.values()
