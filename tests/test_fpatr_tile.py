"""Tests for ptonum.fpatr.tile (the complete B.FPATR tile operation, ADR-0085 D175-D181).

Oracles:
* ``postprocess_element.csv.gz`` rows assembled into 1 x N tiles (one vector-tile element
  per column), expected bits/flags straight from the ASL;
* ``quant_param_legal.csv.gz`` / ``relu_param_legal.csv.gz`` for legal and illegal words;
* pto-spec ``tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-001.asl``
  and the B.FPATR block tests named below;
* composition: ``postprocess_element`` (pinned to the ASL vectors by its own tests) and an
  independent pure-Python fold written from ``MatrixRowMaxResult`` / ``MatrixGroupMaxResult``
  whose step is ``reduction_step(engine="reference")`` (pinned to ``reduction_step.csv.gz``).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import defaultdict
from typing import Any, Dict, List, Tuple

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptonum.fpatr.tile as tile_mod
from ptonum import StatusRegister
from ptonum.errors import IllegalEncodingError, PtonumError, TileLegalityError, UsageError
from ptonum.fpatr.attributes import MODE_TABLE, FPATRAttributes
from ptonum.fpatr.tile import PostprocessResult, postprocess

from test_fpatr_reduction import SPECIALS, oracle_group_max, oracle_row_max  # noqa: E402

GROUP_N = {1: 8, 2: 16, 3: 32, 4: 48, 5: 64, 6: 80, 7: 96, 8: 112, 9: 128}
FULL = os.environ.get("PTONUM_FULL") == "1"
SCALE_ONE = 0x1FC00 << 13  # FP19(1.0) at [31:13] (arch-bound-fp19-encoding-001.asl: 1.0 -> 0x1FC00)
SCALE_TWO = 0x20000 << 13  # FP19(2.0)
ALPHA_HALF = 0x1F800  # FP19(0.5) at [18:0]


def _element():
    from ptonum.fpatr.element import postprocess_element

    return postprocess_element


def _legal_words(vectors) -> Tuple[Dict[int, List[int]], Dict[int, List[int]]]:
    legal: Dict[int, List[int]] = defaultdict(list)
    illegal: Dict[int, List[int]] = defaultdict(list)
    for r in vectors("quant_param_legal"):
        (legal if r["legal"] == "1" else illegal)[int(r["pre_quant_mode"])].append(int(r["word"], 16))
    return legal, illegal


def _relu_words(vectors) -> Tuple[List[int], List[int]]:
    ok, bad = [], []
    for r in vectors("relu_param_legal"):
        (ok if r["legal"] == "1" else bad).append(int(r["word"], 16))
    return ok, bad


def _control_for(mode: int, rng) -> Tuple[str, bool]:
    """A legal B.DATR (RMode, Sat) for the mode, chosen at random."""
    info = MODE_TABLE[mode]
    if mode == 0 or info.is_shift:
        return "NONE", False
    sat = bool(rng.integers(0, 2))
    if info.fixed_rounding is not None:
        return "NONE", sat
    return str(rng.choice(["NONE", "RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB"])), sat


def _resolved(mode: int, rmode: str) -> str:
    info = MODE_TABLE[mode]
    if info.fixed_rounding is not None:
        return info.fixed_rounding.name
    return "RNE" if rmode == "NONE" else rmode


def _or(a: Any) -> int:
    arr = np.asarray(a)
    return int(np.bitwise_or.reduce(arr.astype(np.uint8), axis=None)) if arr.size else 0


# --------------------------------------------------------------- ASL named tests


def test_asl_arch_exec_matrix_postprocess_001():
    """pto-spec tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-001.asl:
    QF322B8_PRE (24) with ReLU, scale FP19(1.0), S9 offset 0: FP32 -2.0 -> S8 0, no flags;
    S32 MAX(3, 7) = 7; S32 MaxAbs of INT_MIN vs INT_MIN = 0x7fffffff with OF (0x04)."""
    for engine in ("fast", "reference"):
        status = StatusRegister()
        res = postprocess(np.array([[0xC0000000]], np.uint32), acc_type="FP32",
                          attributes=dict(pre_quant_mode=24, relu_mode=1), quant_param=SCALE_ONE,
                          status=status, engine=engine)
        assert res.dst_type.name == "S8"
        assert res.d_bits.tolist() == [[0]] and res.flags == 0 and int(status) == 0
        # The reduction half through the tile: RowMax over [3, 7] is 7; MaxAbs over [INT_MIN, INT_MIN].
        res = postprocess(np.array([[3, 7]], np.int32), attributes=dict(row_max_en=1), engine=engine)
        assert res.row_max_bits.tolist() == [[7]] and res.flags == 0
        res = postprocess(np.array([[-2**31, -2**31]], np.int32), attributes=dict(row_max_en=1, max_abs_en=1),
                          status=status, engine=engine)
        assert res.row_max_bits.tolist() == [[0x7FFFFFFF]] and res.flags == 0x04
        # mode 0 without ReLU passes the accumulator through unchanged
        assert res.d_bits.tolist() == [[0x80000000, 0x80000000]]
        assert int(status) == 0x04


def test_asl_block_exec_b_fpatr_quant_002_tile():
    """pto-spec tests/asl/block/attributes/B.FPATR/block-exec-b-fpatr-quant-002.asl: REQ8 (3) scale 2.0
    offset -1: S32 3 -> 5; offset 0: S32 70 -> 0x8c with OF|NX (Sat=0) / 127 (Sat=1);
    SHIFTS322S16 (13) code 0: -33 -> 0xffef, 0x7fffffff -> 0x7fff with OF|NX."""
    off_m1 = (0x1FF & -1) << 37
    res = postprocess(np.array([[3]], np.int32), attributes=dict(pre_quant_mode=3), quant_param=SCALE_TWO | off_m1)
    assert res.d_bits.tolist() == [[5]] and res.flags == 0
    res = postprocess(np.array([[70]], np.int32), attributes=dict(pre_quant_mode=3), quant_param=SCALE_TWO)
    assert res.d_bits.tolist() == [[0x8C]] and res.flags == 0x14 and res.d.tolist() == [[-116]]
    res = postprocess(np.array([[70]], np.int32), attributes=dict(pre_quant_mode=3), quant_param=SCALE_TWO, sat=True)
    assert res.d_bits.tolist() == [[127]] and res.flags == 0x14
    res = postprocess(np.array([[-33, 0x7FFFFFFF]], np.int32), attributes=dict(pre_quant_mode=13), quant_param=0)
    assert res.d_bits.tolist() == [[0xFFEF, 0x7FFF]] and res.flags == 0x14
    assert res.d.dtype == np.int16 and res.d.tolist() == [[-17, 32767]]


def test_asl_block_exec_b_fpatr_formats_003_and_all_modes_007_views():
    """block-exec-b-fpatr-formats-003.asl: FP32 1.5 -> F322F16 0x3e00, F322BF16 0x3fc0, mode 26 E4M3 0x3c,
    mode 25 HiF8 0x0c; block-exec-b-fpatr-all-modes-007.asl: 1.0 -> HiF8 0x08."""
    acc = np.array([[1.5, 1.0]], np.float32)
    r = postprocess(acc, attributes=dict(pre_quant_mode=1))
    assert r.d_bits[0, 0] == 0x3E00 and r.d.dtype == np.float16 and r.d[0, 0] == 1.5
    r = postprocess(acc, attributes=dict(pre_quant_mode=16))
    assert r.d_bits[0, 0] == 0x3FC0 and r.d.dtype == ml_dtypes.bfloat16 and float(r.d[0, 0]) == 1.5
    r = postprocess(acc, attributes=dict(pre_quant_mode=26), quant_param=SCALE_ONE)
    assert r.d_bits[0, 0] == 0x3C and r.d.dtype == ml_dtypes.float8_e4m3fn and float(r.d[0, 0]) == 1.5
    r = postprocess(acc, attributes=dict(pre_quant_mode=25), quant_param=SCALE_ONE)
    assert r.d_bits.tolist() == [[0x0C, 0x08]] and r.d.dtype == np.uint8
    assert r.decode().tolist() == [[1.5, 1.0]]
    assert r.d_bits.dtype == np.uint8 and r.dst_type.name == "HiF8"


def test_asl_block_exec_b_fpatr_operand_routing_001():
    """pto-spec tests/asl/block/attributes/B.FPATR/block-exec-b-fpatr-operand-routing-001.asl: LReLU alone
    (PreQuantMode 0, ReluMode 2) consumes one scalar operand, the alpha; a scalar quant mode (REQ8) with LReLU
    consumes two, the quant word first and the alpha second; RowMax + GroupMax give three destinations.
    ptonum names its operands instead of binding registers (bundle binding, the ordered eight-source stream
    and destination aliasing are bundle dispatch, outside ptonum), so the routing shows as which named
    operands each configuration requires or refuses, and each value acting in its own role."""
    acc_f = np.array([[-4.0, 6.0]], np.float32)
    # LReLU alone: exactly one scalar, the alpha.
    _assert_rejects(TileLegalityError, "relu_param is missing", acc=acc_f, attributes=dict(relu_mode=2))
    _assert_rejects(TileLegalityError, "quant_param was given", acc=acc_f, attributes=dict(relu_mode=2),
                    quant_param=SCALE_ONE, relu_param=ALPHA_HALF)
    postprocess_element = _element()
    r = postprocess(acc_f, attributes=dict(relu_mode=2), relu_param=ALPHA_HALF)
    eb, _ = postprocess_element(acc_f.view(np.uint32), pre_quant_mode=0, relu_mode=2, acc_type="FP32",
                                relu_param=ALPHA_HALF)
    assert r.d_bits.tolist() == eb.tolist() == [[0xC0000000, 0x40C00000]]  # -4 x 0.5, 6 unchanged (exact)
    # Scalar quant + LReLU: two scalars, each in its own role.
    acc_s = np.array([[-4, 6]], np.int32)
    attrs = dict(pre_quant_mode=3, relu_mode=2)
    _assert_rejects(TileLegalityError, "relu_param is missing", acc=acc_s, attributes=attrs, quant_param=SCALE_TWO)
    _assert_rejects(TileLegalityError, "quant_param is missing", acc=acc_s, attributes=attrs, relu_param=ALPHA_HALF)
    # the two values swapped: each is illegal in the other's role, and the error names the role
    _assert_rejects(TileLegalityError, r"quant_param = 0x000000000001f800", acc=acc_s, attributes=attrs,
                    quant_param=ALPHA_HALF, relu_param=SCALE_TWO)
    for engine in ("fast", "reference"):
        r = postprocess(acc_s, attributes=attrs, quant_param=SCALE_TWO, relu_param=ALPHA_HALF, engine=engine)
        eb, ef = postprocess_element(acc_s.view(np.uint32), pre_quant_mode=3, relu_mode=2, acc_type="S32",
                                     quant_param=SCALE_TWO, relu_param=ALPHA_HALF, engine="reference")
        assert r.d_bits.tolist() == eb.tolist() and r.flags == _or(ef)
        # MatrixSelectedMultiplier (asl/arch/profile/matrix-postprocess.asl): a negative source takes the
        # alpha alone (0.5), a positive one the scale (2.0): -4 -> -2, 6 -> 12, so the roles are distinct
        assert r.d.tolist() == [[-2, 12]]
    # RowMax + GroupMax: three separate destinations.
    r = postprocess(acc_s, attributes=dict(row_max_en=1, group_max_en=1, group_n_code=1))
    outs = (r.d_bits, r.row_max_bits, r.group_max_bits)
    assert all(o is not None for o in outs)
    assert not any(np.shares_memory(a, b) for i, a in enumerate(outs) for b in outs[i + 1:])
    assert r.row_max.tolist() == [[6]] and r.group_max.tolist() == [[6]]


# ------------------------------------------------------- tiles from the ASL element vectors


def _vector_groups(vectors):
    groups: Dict[tuple, List[dict]] = defaultdict(list)
    for r in vectors("postprocess_element"):
        mode, relu = int(r["pre_quant_mode"]), int(r["relu_mode"])
        info = MODE_TABLE[mode]
        key = [mode, relu, r["acc_type"], r["rmode"], r["sat"]]
        if info.parameter != "vector":
            key.append(r["quant_param"])
        if relu != 3:
            key.append(r["relu_param"])
        groups[tuple(key)].append(r)
    return groups


def _tile_call_from_rows(rows, engine, **extra):
    r0 = rows[0]
    mode, relu = int(r0["pre_quant_mode"]), int(r0["relu_mode"])
    info = MODE_TABLE[mode]
    acc = np.array([[int(r["acc_bits"], 16) for r in rows]], np.uint32)
    kw: Dict[str, Any] = {}
    if info.parameter == "vector":
        kw["quant_tile"] = np.array([[int(r["quant_param"], 16) for r in rows]], np.uint64)
    elif info.parameter == "scalar":
        kw["quant_param"] = int(r0["quant_param"], 16)
    if relu == 3:
        kw["relu_tile"] = np.array([int(r["relu_param"], 16) for r in rows], np.uint64)
    elif relu == 2:
        kw["relu_param"] = int(r0["relu_param"], 16)
    # Rows of fixed-rounding, shift and NoQuant modes carry the resolved RNE; B.DATR must say NONE.
    rmode = "NONE" if (mode == 0 or info.is_shift or info.fixed_rounding is not None) else r0["rmode"]
    kw.update(extra)
    return acc, postprocess(acc, acc_type=r0["acc_type"], attributes=kw.pop("attributes", dict(
        pre_quant_mode=mode, relu_mode=relu)), rmode=rmode, sat=r0["sat"] == "1", engine=engine, **kw)


def _sampled_groups(vectors, stride):
    """All groups that form real multi-column tiles (8 or more rows); of the tiny groups keyed by a
    scalar word (usually 1-3 rows each) the first of every configuration (mode, ReluMode, accumulator,
    RMode, Sat) and every ``stride``-th one after it (all of them with PTONUM_FULL=1).  Every row is
    checked through postprocess_element in both engines by test_fpatr_element.py; one tile call per
    tiny group is what made this test slow (about 7,000 calls), so the tile check keeps every
    configuration rather than every word."""
    out = []
    seen = set()
    for i, (key, rows) in enumerate(_vector_groups(vectors).items()):
        config = key[:5]
        if FULL or len(rows) >= 8 or config not in seen or i % stride == 0:
            out.append((key, rows))
        seen.add(config)
    return out


def test_tile_equals_asl_element_vectors_fast(vectors):
    groups = _sampled_groups(vectors, 16)
    checked = 0
    for key, rows in groups:
        acc, res = _tile_call_from_rows(rows, "fast")
        exp = [int(r["expected_bits"], 16) for r in rows]
        assert res.d_bits.ravel().tolist() == exp, key
        assert res.flags == _or([int(r["expected_flags"], 16) for r in rows]), key
        checked += len(rows)
    total = len(vectors("postprocess_element"))
    configs = {k[:5] for k in _vector_groups(vectors)}
    assert {k[:5] for k, _ in groups} == configs and len(configs) > 800  # every configuration of the file
    assert checked == total if FULL else checked > 2 * total // 5


def test_tile_equals_asl_element_vectors_reference(vectors):
    """Reference engine: the sampled groups, first 6 columns of each (everything with PTONUM_FULL=1)."""
    for key, rows in _sampled_groups(vectors, 64):
        rows = rows if FULL else rows[:6]
        acc, res = _tile_call_from_rows(rows, "reference")
        assert res.d_bits.ravel().tolist() == [int(r["expected_bits"], 16) for r in rows], key
        assert res.flags == _or([int(r["expected_flags"], 16) for r in rows]), key


def test_tile_vector_groups_with_reductions(vectors):
    """The same ASL tiles with RowMax + GroupMax (+MaxAbs) enabled: D unchanged (D175), reductions per the fold."""
    groups = [g for g in _vector_groups(vectors).items() if len(g[1]) >= 8][::3]
    assert len(groups) >= 20, len(groups)
    for i, (key, rows) in enumerate(groups):
        ma = bool(i % 2)
        code = 1 + i % 9
        attrs = dict(pre_quant_mode=key[0], relu_mode=key[1], row_max_en=1, group_max_en=1,
                     group_n_code=code, max_abs_en=ma)
        acc, res = _tile_call_from_rows(rows, "fast", attributes=attrs)
        assert res.d_bits.ravel().tolist() == [int(r["expected_bits"], 16) for r in rows]
        t = key[2]
        er, rf = oracle_row_max(acc.tolist(), t, ma)
        eg, gf = oracle_group_max(acc.tolist(), t, ma, GROUP_N[code])
        assert res.row_max_bits.tolist() == er and res.group_max_bits.tolist() == eg
        ef = _or([int(r["expected_flags"], 16) for r in rows]) | rf | gf
        assert res.flags == ef


# ------------------------------------------------------------ composition on random tiles


def _random_acc(rng, m, n, t):
    x = rng.integers(0, 2**32, (m, n), dtype=np.uint64)
    if t == "FP32":
        # mostly moderate magnitudes so conversions are interesting, plus specials
        vals = (rng.standard_normal((m, n)) * 50).astype(np.float32).view(np.uint32).astype(np.uint64)
        x = np.where(rng.random((m, n)) < 0.7, vals, x)
    else:
        small = rng.integers(-300, 300, (m, n)).astype(np.int64) & 0xFFFFFFFF
        x = np.where(rng.random((m, n)) < 0.7, small.astype(np.uint64), x)
    mask = rng.random((m, n)) < 0.15
    x[mask] = rng.choice(SPECIALS, int(mask.sum()))
    return x.astype(np.uint32)


def _random_config(rng, mode, legal, relu_ok, m, n):
    info = MODE_TABLE[mode]
    t = str(rng.choice([a.name for a in info.accumulator_types]))
    relu = int(rng.integers(0, 4))
    rmode, sat = _control_for(mode, rng)
    kw: Dict[str, Any] = {}
    if info.parameter == "scalar":
        kw["quant_param"] = int(rng.choice(legal[mode]))
    elif info.parameter == "vector":
        kw["quant_tile"] = rng.choice(np.array(legal[mode], np.uint64), (1, n))
    if relu == 2:
        kw["relu_param"] = int(rng.choice(relu_ok))
    elif relu == 3:
        kw["relu_tile"] = rng.choice(np.array(relu_ok, np.uint64), (1, n))
    row = bool(rng.integers(0, 2))
    code = int(rng.integers(0, 10))
    init = row and bool(rng.integers(0, 2))
    ma = (row or code != 0) and bool(rng.integers(0, 2))
    attrs = dict(pre_quant_mode=mode, relu_mode=relu, row_max_en=row, row_max_init=init,
                 group_max_en=code != 0, group_n_code=code, max_abs_en=ma)
    if init:
        kw["row_max_in"] = _random_acc(rng, m, 1, t)
    return t, attrs, rmode, sat, kw


@pytest.mark.parametrize("mode", sorted(MODE_TABLE))
def test_tile_composition_every_mode(vectors, mode):
    """D = postprocess_element per column parameter; reductions = the ASL fold; flags = OR of all; fast == reference."""
    postprocess_element = _element()
    legal, _ = _legal_words(vectors)
    relu_ok, _ = _relu_words(vectors)
    if MODE_TABLE[mode].parameter != "none":
        assert legal[mode], mode
    rng = np.random.default_rng(1000 + mode)
    for _ in range(4):
        m, n = int(rng.integers(1, 4)), int(rng.integers(1, 40))
        t, attrs, rmode, sat, kw = _random_config(rng, mode, legal, relu_ok, m, n)
        acc = _random_acc(rng, m, n, t)
        status = StatusRegister(0x02)
        res = postprocess(acc, acc_type=t, attributes=attrs, rmode=rmode, sat=sat, status=status, **kw)
        ref = postprocess(acc, acc_type=t, attributes=attrs, rmode=rmode, sat=sat, engine="reference", **kw)
        assert np.array_equal(res.d_bits, ref.d_bits) and res.flags == ref.flags
        for a, b in ((res.row_max_bits, ref.row_max_bits), (res.group_max_bits, ref.group_max_bits)):
            assert (a is None and b is None) or np.array_equal(a, b)
        # element oracle: the column's parameter word for every element
        qp = kw.get("quant_tile", kw.get("quant_param", 1))
        rp = kw.get("relu_tile", kw.get("relu_param", 0))
        eb, ef = postprocess_element(acc, pre_quant_mode=mode, relu_mode=attrs["relu_mode"], acc_type=t,
                                     quant_param=np.broadcast_to(np.asarray(qp, np.uint64), (m, n)),
                                     relu_param=np.broadcast_to(np.asarray(rp, np.uint64), (m, n)),
                                     rmode=_resolved(mode, rmode), sat=sat, engine="reference")
        assert res.d_bits.tolist() == np.asarray(eb).tolist()
        flags = _or(ef)
        ma = attrs["max_abs_en"]
        if attrs["row_max_en"]:
            init = kw.get("row_max_in")
            er, rf = oracle_row_max(acc.tolist(), t, ma, None if init is None else init.tolist())
            assert res.row_max_bits.tolist() == er
            flags |= rf
        else:
            assert res.row_max_bits is None
        if attrs["group_max_en"]:
            eg, gf = oracle_group_max(acc.tolist(), t, ma, GROUP_N[attrs["group_n_code"]])
            assert res.group_max_bits.tolist() == eg
            flags |= gf
        else:
            assert res.group_max_bits is None
        assert res.flags == flags
        assert int(status) == 0x02 | flags


# ----------------------------------------------------------- reductions through the tile


NAN_ROWS = [
    # quiet and signalling NaNs in the first column and later, signed zeros, infinities
    [0x7FC00000, 0x3F800000, 0xBF800000, 0x00000000],
    [0x7F800001, 0x80000000, 0x80000000, 0x80000000],
    [0x80000000, 0xFF800000, 0x7FA00000, 0x80000000],
    [0x80000000, 0x00000000, 0xFFC00001, 0x7FC00000],
    [0xFF800000, 0xFFFFFFFF, 0x7F800000, 0xC0400000],
]


@pytest.mark.parametrize("code", sorted(GROUP_N))
@pytest.mark.parametrize("t", ["FP32", "S32", "U32"])
def test_tile_rowmax_groupmax_every_groupn(t, code):
    gn = GROUP_N[code]
    rng = np.random.default_rng(code * 31 + len(t))
    for n in (gn, 2 * gn + 5, max(1, gn // 2 + 1), 1):
        base = np.array(NAN_ROWS, np.uint64) if t == "FP32" else np.array(
            [[0x80000000, 5, 0xFFFFFFFF, 0x7FFFFFFF], [0xFFFFFFFB, 0x80000000, 3, 0], [1, 2, 3, 4]], np.uint64)
        reps = -(-n // base.shape[1])
        acc = np.tile(base, (1, reps))[:, :n].copy()
        noise = rng.random(acc.shape) < 0.3
        acc[noise] = rng.integers(0, 2**32, int(noise.sum()), dtype=np.uint64)
        acc = acc.astype(np.uint32)
        m = acc.shape[0]
        init = rng.choice(SPECIALS, (m, 1)).astype(np.uint32)
        for ma in (False, True):
            attrs = dict(row_max_en=1, row_max_init=1, group_max_en=1, group_n_code=code, max_abs_en=ma)
            status = StatusRegister()
            res = postprocess(acc, acc_type=t, attributes=attrs, row_max_in=init, status=status)
            er, rf = oracle_row_max(acc.tolist(), t, ma, init.tolist())
            eg, gf = oracle_group_max(acc.tolist(), t, ma, gn)
            assert res.row_max_bits.shape == (m, 1) and res.row_max_bits.tolist() == er
            assert res.group_max_bits.shape == (m, -(-n // gn)) and res.group_max_bits.tolist() == eg
            # mode 0 without activation: D is the raw accumulator, no element flags
            assert np.array_equal(res.d_bits, acc)
            assert res.flags == rf | gf and int(status) == res.flags
            assert res.row_max.dtype == {"FP32": np.float32, "S32": np.int32, "U32": np.uint32}[t]


def test_tile_reduction_explicit_cases():
    # FP32: sNaN in a later column raises NV and is skipped; -0/-0 row stays -0; MaxAbs makes it +0.
    acc = np.array([[0x3F800000, 0x7F800001, 0x3F000000], [0x80000000, 0x80000000, 0x80000000]], np.uint32)
    r = postprocess(acc, acc_type="FP32", attributes=dict(row_max_en=1))
    assert r.row_max_bits.tolist() == [[0x3F800000], [0x80000000]] and r.flags == 0x01 and r.flag_names == "NV"
    r = postprocess(acc, acc_type="FP32", attributes=dict(row_max_en=1, max_abs_en=1))
    assert r.row_max_bits.tolist() == [[0x3F800000], [0]]
    # S32 INT_MIN with MaxAbs saturates with OF; RowMaxIn participates (as current) with MaxAbs.
    acc = np.array([[-5, 3], [-2**31, 1]], np.int32)
    r = postprocess(acc, attributes=dict(row_max_en=1, row_max_init=1, max_abs_en=1),
                    row_max_in=np.array([[-7], [0]], np.int32))
    assert r.row_max.tolist() == [[7], [2**31 - 1]] and r.flags == 0x04
    # GroupMax with N < GroupN: one partial group.
    r = postprocess(np.array([[1, 9, 4]], np.uint32), acc_type="U32", attributes=dict(group_max_en=1, group_n_code=1))
    assert r.group_max_bits.tolist() == [[9]]


def test_reductions_use_raw_accumulator_not_d():
    """ADR-0085 D175: with ReLU + REQ8 the RowMax is still over the raw S32 accumulator."""
    acc = np.array([[-100, 7, 3]], np.int32)
    r = postprocess(acc, attributes=dict(pre_quant_mode=3, relu_mode=1, row_max_en=1, max_abs_en=1),
                    quant_param=SCALE_ONE)
    assert r.row_max.tolist() == [[100]]
    assert r.d.tolist() == [[0, 7, 3]] and r.d_bits.dtype == np.uint8


# ------------------------------------------------------------------ inputs, views, packing


def test_acc_input_forms_agree():
    vals = np.array([[1.5, -2.25], [0.0, -0.0]], np.float32)
    a = postprocess(vals, attributes=dict(pre_quant_mode=1, row_max_en=1))
    b = postprocess(vals.view(np.uint32), acc_type="FP32", attributes=dict(pre_quant_mode=1, row_max_en=1))
    c = postprocess(vals.view(np.uint32).tolist(), acc_type=1, attributes=FPATRAttributes.from_fields(
        pre_quant_mode="F322F16", row_max_en=True).word)
    for x in (b, c):
        assert np.array_equal(a.d_bits, x.d_bits) and np.array_equal(a.row_max_bits, x.row_max_bits)
    assert a.d.dtype == np.float16 and a.d.tolist() == [[1.5, -2.25], [0.0, -0.0]]
    assert a.row_max.dtype == np.float32 and a.row_max.tolist() == [[1.5], [0.0]]
    i = postprocess(np.array([[-3, 4]], np.int32), attributes=0x00002023)
    u = postprocess(np.array([[0xFFFFFFFD, 4]], np.uint32), acc_type="S32", attributes=0x00002023)
    assert i.d_bits.tolist() == u.d_bits.tolist() == [[0xFFFFFFFD, 4]] and i.d.tolist() == [[-3, 4]]
    w = postprocess(np.array([[0xFFFFFFFD, 4]], np.uint32), acc_type="U32", attributes=0x00002023)
    assert w.d.dtype == np.uint32 and w.d.tolist() == [[0xFFFFFFFD, 4]]


def test_s4x2_views_and_packing():
    """REQ4 (17) scale 1.0, offset 0: S32 -8..7 map to themselves (all-modes-007: S32 1 -> S4X2 1);
    packing per ADR-0033/0074: even element low nibble, odd high, each row restarts, odd N pads 0."""
    vals = np.array([[1, -2, 3], [-8, 7, 0]], np.int32)
    r = postprocess(vals, attributes=dict(pre_quant_mode=17), quant_param=SCALE_ONE)
    assert r.d_bits.tolist() == [[0x1, 0xE, 0x3], [0x8, 0x7, 0x0]]
    assert r.d.dtype == np.int8 and r.d.tolist() == vals.tolist()
    assert r.s4x2_packed().tolist() == [[0xE1, 0x03], [0x78, 0x00]]
    r = postprocess(np.array([[5, -1, -3, 2]], np.int32), attributes=dict(pre_quant_mode=17), quant_param=SCALE_ONE)
    assert r.s4x2_packed().tolist() == [[0xF5, 0x2D]]
    with pytest.raises(UsageError, match="not S4X2"):
        postprocess(vals, attributes=dict(row_max_en=1)).s4x2_packed()


def test_result_is_frozen_and_read_only():
    r = postprocess(np.array([[1, 2]], np.int32), attributes=dict(row_max_en=1))
    assert isinstance(r, PostprocessResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.flags = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        r.d_bits[0, 0] = 5


def test_row_blocks_and_progress(monkeypatch):
    rng = np.random.default_rng(5)
    acc = _random_acc(rng, 37, 11, "S32")
    kw = dict(acc_type="S32", attributes=dict(pre_quant_mode=2, relu_mode=1, row_max_en=1, group_max_en=1,
                                               group_n_code=1, max_abs_en=1),
              quant_tile=np.full(11, SCALE_ONE | (3 << 37), np.uint64), rmode="RTO", sat=True)
    whole = postprocess(acc, **kw)
    calls: List[Tuple[int, int]] = []
    monkeypatch.setattr(tile_mod, "BLOCK_ELEMENTS", 50)  # 4 rows per block
    blocked = postprocess(acc, progress=lambda d, t: calls.append((d, t)), **kw)
    done = [d for d, _ in calls]
    assert done == sorted(set(done)) and done[-1] == 37 and {t for _, t in calls} == {37}
    assert max(b - a for a, b in zip([0] + done, done)) <= 4  # paced blocks, never above BLOCK_ELEMENTS
    for a, b in ((whole.d_bits, blocked.d_bits), (whole.row_max_bits, blocked.row_max_bits),
                 (whole.group_max_bits, blocked.group_max_bits)):
        assert np.array_equal(a, b)
    assert whole.flags == blocked.flags


@pytest.mark.parametrize("engine", ["reference", "fast"])
@pytest.mark.parametrize("seconds_per_element", [0.05, 1e-5])
def test_progress_moves_at_least_every_second(monkeypatch, engine, seconds_per_element):
    """Issue 10 item 15: with progress, row blocks are paced in every engine (the reference engine
    once reported only 0/M then M/M).  A virtual clock charges each element a fixed cost (0.8 s per
    row, or a tiny one): progress must come at most 1 s apart, and the bits must not change."""
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    real = tile_mod.compute_elements

    def charged(acc_bits, *args):
        clock[0] += np.asarray(acc_bits).size * seconds_per_element
        return real(acc_bits, *args)

    monkeypatch.setattr(tile_mod, "compute_elements", charged)
    acc = np.arange(-96, 96, dtype=np.int32).reshape(12, 16) * 999
    kw = dict(acc_type="S32", attributes=dict(pre_quant_mode="REQ8", row_max_en=1),
              quant_param=SCALE_ONE, engine=engine)
    times: List[float] = []
    res = postprocess(acc, progress=lambda d, t: times.append(clock[0]), **kw)
    assert len(times) >= 2 and max(b - a for a, b in zip([0.0] + times, times)) <= 1.0, times
    ref = postprocess(acc, **kw)
    assert np.array_equal(res.d_bits, ref.d_bits) and np.array_equal(res.row_max_bits, ref.row_max_bits)
    assert res.flags == ref.flags


# ------------------------------------------------------------------------- rejections


def _assert_rejects(exc, match, status=None, **call):
    status = status if status is not None else StatusRegister(0x10)
    before = int(status)
    out = None
    with pytest.raises(exc, match=match):
        out = postprocess(status=status, **call)
    assert out is None
    assert int(status) == before


ACC_S = np.array([[1, -2, 3]], np.int32)
ACC_F = np.array([[1.0, -2.0, 3.0]], np.float32)


REJECTIONS = [
    # reserved codes (Fault_IllegalInstruction)
    ("reserved PreQuantMode", IllegalEncodingError, r"PreQuantMode\[31:26\] = 6 is reserved",
     dict(acc=ACC_F, attributes=0x00002023 | (6 << 26))),
    ("reserved ReluMode", IllegalEncodingError, r"ReluMode\[25:23\] = 4 is reserved",
     dict(acc=ACC_F, attributes=0x00002023 | (4 << 23))),
    ("reserved GroupNCode", IllegalEncodingError, r"GroupNCode\[22:19\] = 10 is reserved",
     dict(acc=ACC_F, attributes=0x00002023 | (10 << 19) | (1 << 17))),
    ("not a B.FPATR word", IllegalEncodingError, "does not decode as B.FPATR",
     dict(acc=ACC_F, attributes=0)),
    ("reserved mode by field", IllegalEncodingError, "reserved PreQuantMode",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=7))),
    # field combinations (BundleFPATRFieldsLegal)
    ("RowMaxInit without RowMaxEn", TileLegalityError, "RowMaxInit requires RowMaxEn",
     dict(acc=ACC_F, attributes=dict(row_max_init=1), row_max_in=np.zeros((1, 1), np.float32))),
    ("GroupMaxEn with GroupNCode 0", TileLegalityError, "GroupMaxEn requires a nonzero GroupNCode",
     dict(acc=ACC_F, attributes=dict(group_max_en=1))),
    ("GroupNCode without GroupMaxEn", TileLegalityError, "requires GroupMaxEn",
     dict(acc=ACC_F, attributes=dict(group_n_code=3))),
    ("MaxAbsEn alone", TileLegalityError, "MaxAbsEn requires RowMaxEn or GroupMaxEn",
     dict(acc=ACC_F, attributes=dict(max_abs_en=1))),
    # B.DATR RMode / Sat (BundleFPATRDATRFieldsLegal)
    ("mode 0 RMode", TileLegalityError, "NoQuant.*RMode=NONE", dict(acc=ACC_F, attributes={}, rmode="RNE")),
    ("mode 0 Sat", TileLegalityError, "NoQuant.*Sat=0", dict(acc=ACC_F, attributes={}, sat=True)),
    ("shift RMode", TileLegalityError, "shift mode 13.*RMode=NONE",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=13), quant_param=0, rmode=2)),
    ("shift Sat", TileLegalityError, "shift mode 12.*Sat=0",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=12), quant_tile=np.zeros(3, np.uint64), sat=1)),
    ("fixed RMode", TileLegalityError, "fixed-rounding mode 26.*RMode=NONE",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=26), quant_param=SCALE_ONE, rmode="RTZ")),
    ("fixed RHB RMode", TileLegalityError, "fixed-rounding mode 28.*always RHB",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=28), quant_tile=np.full(3, SCALE_ONE, np.uint64), rmode="RHB")),
    ("unknown rmode", UsageError, "rmode", dict(acc=ACC_F, attributes={}, rmode="ROUND")),
    ("bad sat", UsageError, "sat", dict(acc=ACC_F, attributes={}, sat=2)),
    # accumulator class (BundleFPATRAccumulatorTypeLegal)
    ("FP32 acc for S32 mode", TileLegalityError, "acc_type = FP32.*REQ8.*accepts only S32",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=3), quant_param=SCALE_ONE)),
    ("S32 acc for FP32 mode", TileLegalityError, "acc_type = S32.*accepts only FP32",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=24), quant_param=SCALE_ONE)),
    ("U32 acc for nonzero mode", TileLegalityError, "acc_type = U32",
     dict(acc=np.array([[1]], np.uint32), acc_type="U32", attributes=dict(pre_quant_mode=1))),
    ("FP16 accumulator", TileLegalityError, "acc_type = FP16",
     dict(acc=np.array([[1]], np.uint32), acc_type="FP16", attributes={})),
    # parameter presence
    ("scalar param missing", TileLegalityError, "quant_param is missing",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=3))),
    ("scalar param for vector mode", TileLegalityError, "quant_param was given.*vector",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=2), quant_param=SCALE_ONE, quant_tile=np.full(3, SCALE_ONE, np.uint64))),
    ("quant tile missing", TileLegalityError, "quant_tile is missing",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=2))),
    ("quant tile for scalar mode", TileLegalityError, "quant_tile was given",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=3), quant_param=SCALE_ONE, quant_tile=np.full(3, SCALE_ONE, np.uint64))),
    ("param for mode 1", TileLegalityError, "quant_param was given.*takes no parameter",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=1), quant_param=SCALE_ONE)),
    ("relu tile without ReluMode 3", TileLegalityError, "relu_tile was given.*ReluMode=2",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=1, relu_mode=2), relu_param=0, relu_tile=np.zeros(3, np.uint64))),
    ("relu param missing", TileLegalityError, "relu_param is missing",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=1, relu_mode=2))),
    ("relu param with ReLU", TileLegalityError, "relu_param was given.*ReluMode=1",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=1, relu_mode=1), relu_param=0)),
    ("relu tile missing", TileLegalityError, "relu_tile is missing",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=1, relu_mode=3))),
    ("row_max_in without RowMaxInit", TileLegalityError, "row_max_in was given",
     dict(acc=ACC_F, attributes=dict(row_max_en=1), row_max_in=np.zeros((1, 1), np.float32))),
    ("row_max_in missing", TileLegalityError, "row_max_in is missing",
     dict(acc=ACC_F, attributes=dict(row_max_en=1, row_max_init=1))),
    # parameter words
    ("scalar quant word reserved bit", TileLegalityError, r"quant_param = 0x0000001[0-9a-f]{9}.*",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=3), quant_param=SCALE_ONE | (1 << 36))),
    ("scalar scale subnormal", TileLegalityError, r"quant_param = 0x0000000000002000.*positive normal",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=3), quant_param=1 << 13)),
    ("scalar relu negative", TileLegalityError, r"relu_param = 0x0000000000041c00",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=1, relu_mode=2), relu_param=0x41C00)),
    ("vector element bad", TileLegalityError, r"quant_tile\[0, 5\] = 0x0000000000000000",
     dict(acc=np.ones((2, 8), np.int32), attributes=dict(pre_quant_mode=2),
          quant_tile=np.array([SCALE_ONE] * 5 + [0] + [SCALE_ONE] * 2, np.uint64))),
    ("relu vector element bad", TileLegalityError, r"relu_tile\[0, 2\] = 0x0000000000080000",
     dict(acc=np.ones((1, 4), np.float32), attributes=dict(pre_quant_mode=1, relu_mode=3),
          relu_tile=np.array([0, ALPHA_HALF, 1 << 19, 0], np.uint64))),
    ("word wider than 64 bits", UsageError, "64 bits",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=3), quant_param=1 << 64)),
    # shapes and dtypes
    ("quant tile too short", TileLegalityError, r"quant_tile: shape \(1, 2\).*1 x 3",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=2), quant_tile=np.full((1, 2), SCALE_ONE, np.uint64))),
    ("quant tile two rows", TileLegalityError, r"quant_tile: shape \(2, 3\)",
     dict(acc=ACC_S, attributes=dict(pre_quant_mode=2), quant_tile=np.full((2, 3), SCALE_ONE, np.uint64))),
    ("relu tile wrong length", TileLegalityError, r"relu_tile: shape \(4,\)",
     dict(acc=ACC_F, attributes=dict(pre_quant_mode=1, relu_mode=3), relu_tile=np.zeros(4, np.uint64))),
    ("row_max_in wrong rows", TileLegalityError, r"row_max_in: shape \(2, 1\).*1 x 1",
     dict(acc=ACC_F, attributes=dict(row_max_en=1, row_max_init=1), row_max_in=np.zeros((2, 1), np.float32))),
    ("row_max_in wrong type", TileLegalityError, "row_max_in: dtype float32.*S32",
     dict(acc=ACC_S, attributes=dict(row_max_en=1, row_max_init=1), row_max_in=np.zeros((1, 1), np.float32))),
    ("acc 1-D", UsageError, "2-D", dict(acc=np.ones(3, np.float32), attributes={})),
    ("acc empty", UsageError, "2-D", dict(acc=np.ones((0, 3), np.float32), attributes={})),
    ("acc 3-D", UsageError, "2-D", dict(acc=np.ones((1, 2, 3), np.int32), attributes={})),
    ("acc float64", UsageError, "float64", dict(acc=np.ones((1, 2)), attributes={})),
    ("raw acc without type", UsageError, "give acc_type", dict(acc=np.ones((1, 2), np.uint32), attributes={})),
    ("float32 acc as S32", UsageError, "acc_type = S32", dict(acc=ACC_F, acc_type="S32", attributes={})),
    ("acc wider than 32", UsageError, r"acc\[0, 1\] = 0x100000000", dict(acc=[[1, 2**32]], acc_type="U32", attributes={})),
    ("bad attributes", UsageError, "attributes", dict(acc=ACC_F, attributes="REQ8")),
    ("bad engine", UsageError, "engine", dict(acc=ACC_F, attributes={}, engine="gpu")),
]


@pytest.mark.parametrize("name, exc, match, call", REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_rejections(name, exc, match, call):
    _assert_rejects(exc, match, **call)


def test_rejection_bad_status_object():
    with pytest.raises(UsageError, match="StatusRegister"):
        postprocess(ACC_F, attributes={}, status=0)  # type: ignore[arg-type]


def test_illegal_words_from_vectors_reject(vectors):
    """Every illegal quant word of the ASL legality file (a sample per mode) is rejected as a scalar or as
    one bad column of a vector tile, naming that column; legal words pass."""
    legal, illegal = _legal_words(vectors)
    relu_ok, relu_bad = _relu_words(vectors)
    for mode, info in MODE_TABLE.items():
        if info.parameter == "none":
            continue
        t = info.accumulator_types[0].name
        acc = np.zeros((1, 6), np.uint32)
        assert illegal[mode] and legal[mode], mode  # the loops below must not run zero times
        for w in illegal[mode][:25]:
            st_ = StatusRegister(0x08)
            if info.parameter == "scalar":
                with pytest.raises(TileLegalityError, match=rf"quant_param = {w:#018x}"):
                    postprocess(acc, acc_type=t, attributes=dict(pre_quant_mode=mode), quant_param=w, status=st_)
            else:
                tile = np.full(6, legal[mode][0], np.uint64)
                tile[4] = w
                with pytest.raises(TileLegalityError, match=rf"quant_tile\[0, 4\] = {w:#018x}"):
                    postprocess(acc, acc_type=t, attributes=dict(pre_quant_mode=mode), quant_tile=tile, status=st_)
            assert int(st_) == 0x08
        for w in legal[mode][:10]:
            kw = {"quant_param": w} if info.parameter == "scalar" else {"quant_tile": np.full(6, w, np.uint64)}
            postprocess(acc, acc_type=t, attributes=dict(pre_quant_mode=mode), **kw)
    assert len(relu_bad) >= 40 and len(relu_ok) >= 40
    for w in relu_bad[:40]:
        with pytest.raises(TileLegalityError, match=rf"relu_param = {w:#018x}"):
            postprocess(np.zeros((1, 2), np.float32), attributes=dict(pre_quant_mode=1, relu_mode=2), relu_param=w)
    for w in relu_ok[:40]:
        postprocess(np.zeros((1, 2), np.float32), attributes=dict(pre_quant_mode=1, relu_mode=3),
                    relu_tile=np.full(2, w, np.uint64))


# ----------------------------------------------------------------- hypothesis garbage

_ASSIGNED = sorted(MODE_TABLE)
_words = st.one_of(st.none(), st.none(), st.sampled_from([0, 1, SCALE_ONE, SCALE_TWO, ALPHA_HALF, 1 << 36]),
                   st.integers(0, 2**64 - 1), st.integers(-5, 2**70))
_field_word = st.builds(
    lambda pq, rl, gn, f: 0x2023 | (pq << 26) | (rl << 23) | (gn << 19) | (f << 15),
    st.one_of(st.sampled_from(_ASSIGNED), st.integers(0, 63)),
    st.one_of(st.integers(0, 3), st.integers(0, 7)),
    st.one_of(st.just(0), st.integers(0, 15)),
    st.one_of(st.sampled_from([0, 0b0100, 0b1000, 0b1001, 0b1100, 0b1101]), st.integers(0, 15)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), chaos=st.sampled_from([0, 0, 1, 3, 10]))
def test_garbage_configurations_raise_only_ptonum_errors(data, chaos):
    """Configurations from coherent to garbage (each part garbled with probability chaos/10): every call
    either succeeds (status gets exactly the result flags) or raises a PtonumError with status unchanged."""
    def garble() -> bool:
        return data.draw(st.integers(0, 9)) < chaos

    mode = data.draw(st.sampled_from(_ASSIGNED))
    info = MODE_TABLE[mode]
    relu = data.draw(st.integers(0, 3))
    row = data.draw(st.booleans())
    init = row and data.draw(st.booleans())
    code = data.draw(st.integers(0, 9))
    ma = (row or code != 0) and data.draw(st.booleans())
    word = (0x2023 | (mode << 26) | (relu << 23) | (code << 19) | (row << 18) | ((code != 0) << 17)
            | (init << 16) | (ma << 15))
    attributes: Any = word
    if garble():
        attributes = data.draw(st.one_of(_field_word, st.integers(-3, 2**33), st.just("REQ8")))
    elif data.draw(st.booleans()):
        attributes = FPATRAttributes.from_word(word)
    m, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 9))
    if garble():
        m, n = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 5))
    t = data.draw(st.sampled_from([a.name for a in info.accumulator_types]))
    dtype = {"FP32": "float32", "S32": "int32", "U32": "uint32"}[t]
    acc_type: Any = t
    if garble():
        dtype = data.draw(st.sampled_from(["float32", "int32", "uint32", "int64", "float64", "list", "3d"]))
        acc_type = data.draw(st.sampled_from([None, "FP32", "S32", "U32", "FP16", "S8", 99, "nope"]))
    raw = np.random.default_rng(data.draw(st.integers(0, 2**16))).integers(0, 2**32, (m, n), dtype=np.uint64)
    acc: Any
    if dtype == "float32":
        acc = raw.astype(np.uint32).view(np.float32)
    elif dtype == "int32":
        acc = raw.astype(np.uint32).view(np.int32)
    elif dtype == "list":
        acc = raw.tolist()
    elif dtype == "3d":
        acc = raw.reshape(1, m, n)
    else:
        acc = raw.astype(dtype)
    rmode, sat = ("NONE", False) if (mode == 0 or info.is_shift) else (
        "NONE" if info.fixed_rounding is not None else data.draw(st.sampled_from(["NONE", "RNE", "RTO", 7])),
        data.draw(st.booleans()))
    if garble():
        rmode = data.draw(st.one_of(st.integers(-1, 9), st.sampled_from(["RNE", "RHB", "rtz", "bogus", None])))
    if garble():
        sat = data.draw(st.one_of(st.booleans(), st.integers(-1, 2), st.just("yes")))
    good_q = SCALE_ONE if not info.is_shift else 5 << 32
    kw: Dict[str, Any] = {}
    if info.parameter == "scalar":
        kw["quant_param"] = good_q
    elif info.parameter == "vector":
        kw["quant_tile"] = np.full((1, n), good_q, np.uint64)
    if relu == 2:
        kw["relu_param"] = ALPHA_HALF
    elif relu == 3:
        kw["relu_tile"] = np.full(n, ALPHA_HALF, np.uint64)
    if init:
        kw["row_max_in"] = raw[:, :1].astype(np.uint32)
    for key in ("quant_param", "relu_param"):
        if garble():
            kw[key] = data.draw(_words)
    for key in ("quant_tile", "relu_tile"):
        if garble():
            k = data.draw(st.one_of(st.none(), st.integers(0, 6)))
            kw[key] = None if k is None else np.array(data.draw(st.lists(
                st.sampled_from([0, SCALE_ONE, ALPHA_HALF, 1 << 40, 5 << 32]), min_size=k, max_size=k)), np.uint64)
    if garble():
        kw["row_max_in"] = data.draw(st.one_of(st.none(), st.integers(0, 4).map(
            lambda r: np.zeros((r, 1), np.float32)), st.just([[1.5]])))
    status = StatusRegister(0x02)
    try:
        res = postprocess(acc, acc_type=acc_type, attributes=attributes, rmode=rmode, sat=sat, status=status, **kw)
    except PtonumError:
        assert int(status) == 0x02
        return
    assert res.d_bits.shape == (m, n)
    assert int(status) == 0x02 | res.flags


def test_result_is_hashable_and_compares_by_identity() -> None:
    # PostprocessResult holds numpy arrays: == on two results would be ambiguous, so results
    # compare by identity and are hashable; compare contents with np.array_equal on the fields.
    acc = np.array([[1, -2]], dtype=np.int32)
    r1 = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=0x1FC00 << 13)
    r2 = postprocess(acc, attributes={"pre_quant_mode": "REQ8"}, quant_param=0x1FC00 << 13)
    assert r1 == r1 and r1 != r2 and len({r1, r2}) == 2
    assert np.array_equal(r1.d_bits, r2.d_bits) and r1.flags == r2.flags


def test_negative_raw_bits_say_how_to_reinterpret() -> None:
    from ptonum.fpatr import reduction_step

    with pytest.raises(UsageError, match=r"current = -5: raw encodings are unsigned 32-bit.*0xfffffffb"):
        reduction_step(-5, 3, acc_type="S32", max_abs=True)
    with pytest.raises(UsageError, match=r"current\[1\] = -5: .*view\(np.uint32\)"):
        reduction_step(np.array([1, -5], np.int32), 3, acc_type="S32", max_abs=True)


# ------------------------------------------------- preflight / compute / commit in blocks


def _cuts(rng, size: int, k: int) -> List[int]:
    inner = sorted(set(int(c) for c in rng.integers(1, size, k))) if size > 1 else []
    return [0] + inner + [size]


@pytest.mark.parametrize("path", ["numpy", "numba", "reference"])
@pytest.mark.parametrize("t", ["FP32", "S32", "U32"])
def test_blocks_joined_equal_the_whole_tile(t, path, monkeypatch):
    """A tile cut into random row/column blocks (cuts inside GroupMax groups too), each block computed
    from a shape-only plan plus its own chunk, then joined (RowMax/GroupMax partials combined in column
    order, RowMaxIn last) and committed: the same bits and flags as the MatrixRowMaxResult /
    MatrixGroupMaxResult oracles and as postprocess on the whole tile."""
    if path == "numpy":
        monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
    elif path == "numba":
        monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
        monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    engine = "reference" if path == "reference" else "fast"
    rng = np.random.default_rng(len(t) * 7 + len(path))
    m, n = 5, 21
    base = np.array(NAN_ROWS, np.uint64) if t == "FP32" else np.array(
        [[0x80000000, 5, 0xFFFFFFFF, 0x7FFFFFFF], [0xFFFFFFFB, 0x80000000, 3, 0], [1, 2, 3, 4]], np.uint64)
    acc = np.tile(base, (2, 6))[:m, :n].copy()
    noise = rng.random(acc.shape) < 0.4
    acc[noise] = rng.choice(SPECIALS, int(noise.sum()))
    acc = acc.astype(np.uint32)
    init = rng.choice(SPECIALS, (m, 1)).astype(np.uint32)
    if t == "S32":
        mode, extra = 2, dict(quant_tile=np.array(
            [SCALE_ONE | (int(o) << 37) for o in rng.integers(0, 512, n)], np.uint64), rmode="RTO", sat=True)
    elif t == "FP32":
        mode, extra = 1, dict(relu_tile=np.full(n, ALPHA_HALF, np.uint64), sat=True)
    else:
        mode, extra = 0, {}
    relu = 3 if t == "FP32" else 0
    for ma in (False, True):
        attrs = dict(pre_quant_mode=mode, relu_mode=relu, row_max_en=1, row_max_init=1, group_max_en=1,
                     group_n_code=1, max_abs_en=ma)
        kw = dict(acc_type=t, attributes=attrs, row_max_in=init, engine=engine, **extra)
        whole = postprocess(acc, **kw)
        er, rf = oracle_row_max(acc.tolist(), t, ma, init.tolist())
        eg, gf = oracle_group_max(acc.tolist(), t, ma, 8)
        assert whole.row_max_bits.tolist() == er and whole.group_max_bits.tolist() == eg
        plan = tile_mod.preflight_shape(acc.shape, acc.dtype, **kw)
        assert plan.acc_bits is None and plan.tile_shape == (m, n)
        rows_out = None
        rcuts, ccuts = _cuts(rng, m, 2), _cuts(rng, n, 3)
        for r0, r1 in zip(rcuts, rcuts[1:]):
            joined = None
            for c0, c1 in zip(ccuts, ccuts[1:]):
                bp = plan.block(slice(r0, r1), slice(c0, c1), acc[r0:r1, c0:c1])
                assert bp.origin == (r0, c0) and (bp.m, bp.n) == (r1 - r0, c1 - c0)
                out = tile_mod.compute(bp)
                joined = (bp, out) if joined is None else tile_mod.join_columns(*joined, bp, out)
            assert joined is not None and joined[0].full_width
            rows_out = joined[1] if rows_out is None else tile_mod.join_rows(rows_out, joined[1])
        assert rows_out is not None
        status = StatusRegister(0x02)
        full = tile_mod.preflight(acc, **kw)
        res = tile_mod.commit(full, rows_out, status)
        assert res.row_max_bits.tolist() == er and res.group_max_bits.tolist() == eg
        assert np.array_equal(res.d_bits, whole.d_bits)
        assert res.flags == whole.flags and res.flags & (rf | gf) == rf | gf
        assert int(status) == 0x02 | res.flags


def test_plan_is_typed_and_blocks_reject_bad_input():
    kw = dict(attributes=dict(pre_quant_mode=2, row_max_en=1), rmode=2, sat=1,
              quant_tile=np.full(4, SCALE_ONE, np.uint64))
    plan = tile_mod.preflight(np.zeros((3, 4), np.int32), **kw)
    assert plan.rmode.name == "RTZ" and plan.sat is True and plan.dst_type.name == "S8"
    assert plan.acc_type.name == "S32" and plan.quant_words.shape == (1, 4) and plan.relu_words.ndim == 0
    sub = plan.block(slice(1, 3), slice(2, 4))
    assert sub.quant_words.shape == (1, 2) and sub.origin == (1, 2) and not sub.full_width
    with pytest.raises(UsageError, match="acc_block: shape"):
        plan.block(slice(0, 1), slice(0, 2), np.zeros((2, 2), np.int32))
    with pytest.raises(UsageError, match="float32 values are an FP32 accumulator"):
        plan.block(slice(0, 1), slice(0, 2), np.zeros((1, 2), np.float32))
    with pytest.raises(UsageError, match="non-empty slice"):
        plan.block(slice(2, 2), slice(0, 2))
    shape_plan = tile_mod.preflight_shape((3, 4), "uint32", acc_type="S32", **kw)
    with pytest.raises(UsageError, match=r"acc\[0, 1\] = 0x100000000.*row 2, column 0"):
        shape_plan.block(slice(2, 3), slice(0, 2), np.array([[1, 2**32]], np.uint64))
    with pytest.raises(UsageError, match="no accumulator data"):
        tile_mod.compute(shape_plan)
    with pytest.raises(UsageError, match="not the whole 3 x 4 tile"):
        tile_mod.commit(sub, tile_mod.compute(sub))
    status = StatusRegister(0x10)
    with pytest.raises(UsageError, match="status"):
        tile_mod.commit(plan, tile_mod.compute(plan), status=0x10)  # type: ignore[arg-type]
    assert int(status) == 0x10


# ---------------------------------------------------------------------------
# Recycled output buffers (tile._OutputBuffers)


def test_output_buffer_is_reused_only_after_every_view_is_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tile_mod, "OUTPUT_POOL_MIN_BYTES", 1)
    tile_mod.release_output_buffers()
    acc = np.arange(-2048, 2048, dtype=np.int32).reshape(64, 64)
    kw = dict(attributes=dict(pre_quant_mode="F322F16"), acc_type="FP32")
    first = postprocess(acc.astype(np.float32), **kw)
    addr = first.d_bits.ctypes.data
    assert addr % 64 == 0
    kept = first.d[3:5]  # a view keeps the whole buffer
    want = np.array(kept)
    del first
    second = postprocess(-acc.astype(np.float32), **kw)
    assert second.d_bits.ctypes.data != addr and np.array_equal(kept, want)
    del kept, second  # both buffers released, the newest last
    third = postprocess(acc.astype(np.float32), **kw)
    assert third.d_bits.ctypes.data == addr  # the oldest released buffer first
    assert np.array_equal(third.d, acc.astype(np.float16)) and not third.d_bits.flags.writeable
    monkeypatch.setenv("PTONUM_OUTPUT_POOL_MIB", "0")  # reuse off: a plain numpy array
    assert type(postprocess(acc.astype(np.float32), **kw).d_bits.base) is not tile_mod._Lease
    tile_mod.release_output_buffers()


def test_every_output_starts_on_a_64_byte_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """h-s32 (stop 38): GroupMaxOut below the pool's 4 MiB (GroupN 32 on a 4096 x 4096 tile: 2 MiB) came from
    ``np.empty``, 16 bytes into a line, so the kernel's whole-line non-temporal stores never applied and every
    line was read before being written.  Every output now starts on a line, recycled or not, pool on or off."""
    tile_mod.release_output_buffers()
    for pool in ("128", "0"):
        monkeypatch.setenv("PTONUM_OUTPUT_POOL_MIB", pool)
        empty = tile_mod._OUTPUTS.empty((0, 4), np.uint32)  # no bytes: no line to start on
        assert (empty.shape, empty.dtype, empty.flags.c_contiguous) == ((0, 4), np.dtype(np.uint32), True)
        for shape, dt in (((1,), np.uint8), ((3, 5), np.uint16), ((4096, 128), np.uint32),
                          ((2049, 1031), np.uint16), ((1, 7), np.float64)):
            for _ in range(3):  # malloc's placement varies with what was freed before
                a = tile_mod._OUTPUTS.empty(shape, dt)
                assert (a.ctypes.data % 64, a.shape, a.dtype, a.flags.c_contiguous, a.flags.writeable) == (
                    0, shape, np.dtype(dt), True, True), (pool, shape, dt)
                a[...] = 1  # the whole array is writable memory of its own
                del a
    from ptonum.fpatr.params import quant_param

    acc = (np.arange(64 * 96, dtype=np.int32).reshape(64, 96) - 3000) * 7
    kw = dict(attributes=dict(pre_quant_mode="REQ8", row_max_en=1, group_max_en=1, group_n_code=3), acc_type="S32",
              quant_param=int(quant_param(0.5, mode="REQ8")))
    res = postprocess(acc, **kw)
    assert res.group_max_bits.shape == (64, 3) and res.group_max_bits.ctypes.data % 64 == 0
    assert np.array_equal(res.group_max_bits, postprocess(acc, engine="reference", **kw).group_max_bits)
    tile_mod.release_output_buffers()


def test_recycled_group_max_is_not_overwritten_by_the_next_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """GroupMaxOut comes from the recycled output buffers too (at GroupN 8 a 4096 x 4096 tile's is 8 MiB):
    a result the caller still holds keeps its buffer, so a second call on other data writes elsewhere and
    the first result stays as computed; once released, the buffer is handed out again.  Expected values:
    the plain-Python fold (oracle_group_max) of each call's accumulator."""
    monkeypatch.setattr(tile_mod, "OUTPUT_POOL_MIN_BYTES", 1)
    monkeypatch.setattr(tile_mod, "_POOL_GRAIN", 4096)  # D (64 KiB) and GroupMaxOut (32 KiB): other capacities
    tile_mod.release_output_buffers()
    rng = np.random.default_rng(13)
    m, n, gn = 256, 256, 8  # 65536 elements: the compiled kernel when numba is installed
    kw = dict(attributes=dict(pre_quant_mode="QF322FP8_PRE", row_max_en=1, group_max_en=1, group_n_code=1),
              acc_type="FP32", quant_param=SCALE_ONE)
    acc1 = (rng.standard_normal((m, n)) * 50).astype(np.float32)
    acc2 = (rng.standard_normal((m, n)) * 50 - 400).astype(np.float32)  # other maxima in every group
    want1, _ = oracle_group_max(acc1.view(np.uint32).tolist(), "FP32", False, gn)
    want2, _ = oracle_group_max(acc2.view(np.uint32).tolist(), "FP32", False, gn)
    assert want1 != want2
    first = postprocess(acc1, **kw)
    held = first.group_max_bits  # the caller keeps only GroupMaxOut
    addr = held.ctypes.data
    assert type(held.base) is tile_mod._Lease and held.tolist() == want1
    del first  # D (and RowMaxOut) released
    second = postprocess(acc2, **kw)
    assert second.group_max_bits.ctypes.data != addr
    assert held.tolist() == want1 and second.group_max_bits.tolist() == want2
    del held  # now the first GroupMaxOut buffer is free: the next call of that size reuses it
    third = postprocess(acc1, **kw)
    assert third.group_max_bits.ctypes.data == addr and third.group_max_bits.tolist() == want1
    assert second.group_max_bits.tolist() == want2
    tile_mod.release_output_buffers()


def test_kept_plan_carries_the_kernel_parameter_rows(monkeypatch) -> None:
    """A repeated call with the same vector words compares them once (the kept-plan lookup): the compiled
    kernel reuses the parameter rows kept on that plan and looks nothing up itself; words changed in place
    make a new plan whose rows give the new result (expected values: the reference engine)."""
    from ptonum import engines, fpatr
    from ptonum.kernels import numba_enabled

    if not numba_enabled():  # numba missing, or PTONUM_DISABLE_NUMBA=1 (the numpy run of the suite)
        pytest.skip("no compiled kernels in this run: no kernel to keep rows for")  # the numpy path keeps none
    import ptonum.kernels.postprocess as kpost

    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")  # the compiled kernel for this small tile
    n = 8
    words = np.array([[int(fpatr.quant_param(2.0 ** -k, k, mode="VREQ8", rounding="rne")) for k in range(n)]],
                     np.uint64)
    attrs = FPATRAttributes.from_fields(pre_quant_mode="VREQ8", relu_mode="RELU", row_max_en=True)
    acc = (np.arange(4 * n, dtype=np.int32).reshape(4, n) - 16) * 1000
    kw: Dict[str, Any] = dict(acc_type="S32", attributes=attrs, quant_tile=words, sat=True)
    looked_up = []
    derive = kpost._tile_params
    monkeypatch.setattr(kpost, "_tile_params", lambda *a: looked_up.append(1) or derive(*a))
    tile_mod._PLANS.clear()
    results = [postprocess(acc + i, **kw) for i in range(3)]
    assert engines.select("fast", acc.size) == "numba" and len(looked_up) == 1  # the first call only
    for i, res in enumerate(results):
        want = postprocess(acc + i, engine="reference", **kw)
        assert np.array_equal(res.d_bits, want.d_bits) and np.array_equal(res.row_max_bits, want.row_max_bits)
    words[0, 2] = words[0, 5]  # changed in place: another plan, other rows
    res = postprocess(acc, **kw)
    assert np.array_equal(res.d_bits, postprocess(acc, engine="reference", **kw).d_bits)
    assert not np.array_equal(res.d_bits, results[0].d_bits)


def test_preflight_kept_plan_stands_only_for_the_same_arguments() -> None:
    """A successful preflight is kept for the next call with the same arguments (same plan, fresh
    accumulator data); a tile changed in place to an illegal word, a bool where an int was, and an
    accumulator of other values are each checked again: rejected, or planned with their own data."""
    from ptonum import fpatr

    n = 8
    words = np.array([int(fpatr.quant_param(2.0 ** -k, k, mode="VREQ8", rounding="rne")) for k in range(n)],
                     np.uint64)
    attrs = FPATRAttributes.from_fields(pre_quant_mode="VREQ8", relu_mode="RELU", row_max_en=True)
    acc = np.arange(2 * n, dtype=np.int32).reshape(2, n)
    kw: Dict[str, Any] = dict(acc_type="S32", attributes=attrs, quant_tile=words, rmode=1, sat=True)
    first = tile_mod.preflight(acc, **kw)
    again = tile_mod.preflight(acc + 1, **kw)
    assert np.array_equal(again.acc_bits, (acc + 1).view(np.uint32))  # this call's data, not the kept plan's
    assert np.array_equal(again.quant_words, first.quant_words) and again.element == first.element
    kept = first.quant_words.copy()
    words[3] = 0  # FP19 scale 0: not a positive normal
    with pytest.raises(TileLegalityError, match=r"quant_tile\[0, 3\]"):
        tile_mod.preflight(acc, **kw)
    words[3] = kept[0, 3]
    assert np.array_equal(tile_mod.preflight(acc, **kw).quant_words, kept)
    with pytest.raises(UsageError, match="rmode = True"):
        tile_mod.preflight(acc, **dict(kw, rmode=True))  # equal to 1 and hashed alike, yet not a legal RMode
    raw = np.zeros((2, n), np.int64)  # raw S32 encodings: their values are checked on every call
    tile_mod.preflight(raw, **kw)
    raw[1, 5] = 1 << 33
    with pytest.raises(UsageError, match=r"acc\[1, 5\].*does not fit in 32 bits"):
        tile_mod.preflight(raw, **kw)


def test_preflight_keeps_the_plan_of_a_quant_param_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """A word from fpatr.quant_param (a ParamWord, an int subclass) is kept like the same int: the second
    call with it (or with its plain int) is not checked again; another word is, and an illegal one fails."""
    from ptonum import fpatr

    checked = []
    check = tile_mod._check_plan
    monkeypatch.setattr(tile_mod, "_check_plan", lambda *a, **k: checked.append(1) or check(*a, **k))
    tile_mod._PLANS.clear()
    attrs = FPATRAttributes.from_fields(pre_quant_mode="QF322FP8_PRE")
    acc = np.ones((2, 4), np.float32)
    qp = fpatr.quant_param(0.5, mode="QF322FP8_PRE")
    assert type(qp) is not int
    first = tile_mod.preflight(acc, attributes=attrs, quant_param=qp)
    tile_mod.preflight(acc, attributes=attrs, quant_param=qp)
    again = tile_mod.preflight(acc, attributes=attrs, quant_param=int(qp))
    assert len(checked) == 1 and np.array_equal(again.quant_words, first.quant_words)
    tile_mod.preflight(acc, attributes=attrs, quant_param=fpatr.quant_param(0.25, mode="QF322FP8_PRE"))
    assert len(checked) == 2
    with pytest.raises(TileLegalityError, match=r"quant_param = .*bits \[12:0\] must be zero"):
        tile_mod.preflight(acc, attributes=attrs, quant_param=int(qp) & ~0x7FFFF | 0x7FFFF)


def test_preflight_keeps_one_plan_for_a_word_as_int_numpy_integer_or_0d_array(monkeypatch: pytest.MonkeyPatch) -> None:
    """quant_param/relu_param given as a numpy integer or a 0-d integer array (which the call reads as the
    same word) use the plan kept for the Python int: was planned again on every call (the plan key took
    only plain ints and ParamWords: 5 calls with one 0-d word made 5 plans).  Another word is planned, and
    an illegal one or a 0-d bool is refused on every call (nothing kept)."""
    from ptonum import fpatr

    checked = []
    check = tile_mod._check_plan
    monkeypatch.setattr(tile_mod, "_check_plan", lambda *a, **k: checked.append(1) or check(*a, **k))
    tile_mod._PLANS.clear()
    attrs = FPATRAttributes.from_fields(pre_quant_mode="REQ8", relu_mode=2, row_max_en=True)
    w, r = int(fpatr.quant_param(0.5, 3, mode="REQ8")), int(fpatr.relu_param(0.25))
    want = postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, sat=True, quant_param=w, relu_param=r)
    for make in (np.uint64, lambda v: np.array(v, np.uint64), lambda v: np.array(v, np.int64),
                 lambda v: np.array(v, object), int):
        for _ in range(2):
            got = postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, sat=True, quant_param=make(w),
                              relu_param=make(r))
            assert np.array_equal(got.d_bits, want.d_bits) and got.flags == want.flags
    assert len(checked) == 1  # the int's plan, for all eleven calls
    other = np.array(int(fpatr.quant_param(0.25, 3, mode="REQ8")), np.uint64)
    postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, sat=True, quant_param=other, relu_param=np.uint64(r))
    postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, sat=True, quant_param=other, relu_param=r)
    assert len(checked) == 2
    for _ in range(2):
        with pytest.raises(TileLegalityError, match=r"relu_param = 0x000000000007f800: .* is negative normal"):
            postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, quant_param=w,
                        relu_param=np.array(0x7F800, np.uint64))
        with pytest.raises(UsageError, match=r"relu_param = array\(True\)"):
            postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, quant_param=w, relu_param=np.array(True))
    assert len(checked) == 6


# a REQ8 S32 tile that saturates, rounds and meets LReLU's negative side (flags OF and NX)
_REQ8_ACC = np.array([[-1001, -3, 0, 1, 3, 255, 300, 2**31 - 1], [-2**31, 7, -8, 101, 253, -255, 17, 5]], np.int32)
_REQ8_LRELU = dict(pre_quant_mode="REQ8", relu_mode=2, row_max_en=1)


@pytest.mark.parametrize("as_given", [np.uint64, lambda w: np.array(w, np.uint64), lambda w: np.array(w, np.int64),
                                      lambda w: np.array(w, object)],
                         ids=["np.uint64", "0-d uint64", "0-d int64", "0-d object int"])
def test_scalar_words_as_0d_integer_arrays_are_their_element(as_given) -> None:
    """A new user's report: quant_param accepted an np.uint64 but refused the 0-d array holding the same
    word ("expected a 64-bit parameter word (an int)"), while the word functions (quant_param_legal,
    parse_quant_param) read a 0-d array as its element.  quant_param and relu_param given as 0-d integer
    arrays now give the bits and flags of the same Python int."""
    from ptonum import fpatr

    w, r = int(fpatr.quant_param(0.5, 3, mode="REQ8")), int(fpatr.relu_param(0.25))
    want = postprocess(_REQ8_ACC, acc_type="S32", attributes=_REQ8_LRELU, sat=True, quant_param=w, relu_param=r)
    assert want.flags == 0x14  # OF | NX: the comparison covers flags that are set
    for kw in (dict(quant_param=as_given(w), relu_param=r), dict(quant_param=w, relu_param=as_given(r)),
               dict(quant_param=as_given(w), relu_param=as_given(r))):
        got = postprocess(_REQ8_ACC, acc_type="S32", attributes=_REQ8_LRELU, sat=True, **kw)
        assert got.d_bits.dtype == want.d_bits.dtype and np.array_equal(got.d_bits, want.d_bits), kw
        assert np.array_equal(got.row_max_bits, want.row_max_bits) and got.flags == want.flags, kw
        plan = tile_mod.preflight_shape(_REQ8_ACC.shape, np.int32, attributes=_REQ8_LRELU, sat=True, **kw)
        assert (int(plan.quant_words), int(plan.relu_words)) == (w, r)


def _hint_admits(hint: Any, value: Any) -> bool:
    """Whether ``value`` is of the annotated type ``hint`` (a Union/Optional of classes, numpy scalar types and
    ``numpy.typing.NDArray[dtype]``), read as a type checker reads it."""
    import typing

    arms = typing.get_args(hint) if typing.get_origin(hint) is typing.Union else (hint,)
    for arm in arms:
        origin = typing.get_origin(arm) or arm
        if origin is np.ndarray:
            scalar = typing.get_args(typing.get_args(arm)[1])[0]  # NDArray[X] is ndarray[shape, dtype[X]]
            if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, typing.get_origin(scalar) or scalar):
                return True
        elif isinstance(origin, type) and isinstance(value, origin):
            return True
    return False


def test_scalar_word_annotations_admit_what_the_calls_accept() -> None:
    """The public calls that take a scalar quant_param/relu_param read an int, a numpy integer or a 0-d integer
    array as the word (test_scalar_words_as_0d_integer_arrays_are_their_element), but were annotated
    ``Optional[int]`` (``int`` for the element trace and explain_postprocess): mypy refused a caller's 0-d array
    or np.uint64.  Each annotation (fpatr.ParamWordLike) now admits all three, and each call gives the same
    result for them."""
    import typing

    from ptonum import dask as pdask
    from ptonum.conformance import explain
    from ptonum.dask import sweep as dsweep
    from ptonum.dask import tile as dtile
    from ptonum.fpatr import element, params
    from ptonum.tables import PreQuantMode

    w, r = int(params.quant_param(0.5, 3, mode="REQ8")), int(params.relu_param(0.25))
    given = {"int": int, "np.uint64": np.uint64, "0-d uint64": lambda v: np.array(v, np.uint64),
             "0-d int64": lambda v: np.array(v, np.int64)}
    for f in (tile_mod.postprocess, tile_mod.preflight, tile_mod.preflight_shape, element.postprocess_element_trace,
              dtile.postprocess, dsweep.postprocess_sweep, explain.explain_postprocess):
        hints = typing.get_type_hints(f, localns=vars(params))  # names imported for type checking only
        for name in ("quant_param", "relu_param"):
            for how, make in given.items():
                assert _hint_admits(hints[name], make(w)), (f.__module__, f.__name__, name, how, hints[name])
            assert not _hint_admits(hints[name], 0.5) and not _hint_admits(hints[name], np.array(0.5))

    attrs = dict(pre_quant_mode="REQ8", relu_mode=2, row_max_en=1)
    element_kw = dict(pre_quant_mode=int(PreQuantMode.REQ8), relu_mode=2, acc_type="S32", sat=True)
    want_tile = postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, sat=True, quant_param=w, relu_param=r)
    want_trace = element.postprocess_element_trace(0xFFFFFC17, quant_param=w, relu_param=r, **element_kw)
    want_text = explain.render(explain.explain_postprocess(0xFFFFFC17, quant_param=w, relu_param=r, **element_kw))
    want_sweep = dsweep.postprocess_sweep(quant_param=w, relu_param=r, lo=0, hi=16, **element_kw).config
    for how, make in given.items():
        got = postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, sat=True, quant_param=make(w),
                          relu_param=make(r))
        assert np.array_equal(got.d_bits, want_tile.d_bits) and got.flags == want_tile.flags, how
        got_chunked = pdask.postprocess(_REQ8_ACC, acc_type="S32", attributes=attrs, sat=True,
                                        quant_param=make(w), relu_param=make(r)).compute()
        assert np.array_equal(got_chunked.d_bits, want_tile.d_bits) and got_chunked.flags == want_tile.flags, how
        assert element.postprocess_element_trace(0xFFFFFC17, quant_param=make(w), relu_param=make(r),
                                                 **element_kw)[:2] == want_trace[:2], how
        assert explain.render(explain.explain_postprocess(0xFFFFFC17, quant_param=make(w), relu_param=make(r),
                                                          **element_kw)) == want_text, how
        assert dsweep.postprocess_sweep(quant_param=make(w), relu_param=make(r), lo=0, hi=16,
                                        **element_kw).config == want_sweep, how


@pytest.mark.parametrize("name", ["quant_param", "relu_param"])
@pytest.mark.parametrize("value, message", [
    (np.array(1.5), "{name} = array(1.5): expected a 64-bit parameter word (an int, a numpy integer or a 0-d "
                    "integer array)"),
    (np.array(True), "{name} = array(True): expected a 64-bit parameter word (an int, a numpy integer or a 0-d "
                     "integer array)"),
    (np.array([0x1F800], np.uint64), "{name} = array([129024], dtype=uint64): expected a 64-bit parameter word "
                                     "(an int, a numpy integer or a 0-d integer array)"),
    (np.array(-1), "{name} = -1: a 64-bit parameter word is never negative"),
    (-1, "{name} = -1: a 64-bit parameter word is never negative"),  # was '= -0x1: a parameter word is 64 bits'
    (np.array(1 << 64, object), "{name} = 0x10000000000000000: a parameter word is 64 bits"),
], ids=["0-d float", "0-d bool", "1-element 1-D", "0-d negative", "negative int", "0-d 2**64"])
def test_scalar_words_that_are_not_64_bit_integers_are_refused(name, value, message) -> None:
    from ptonum import fpatr

    kw = dict(quant_param=int(fpatr.quant_param(0.5, 3, mode="REQ8")), relu_param=int(fpatr.relu_param(0.25)))
    kw[name] = value
    with pytest.raises(UsageError) as err:
        postprocess(_REQ8_ACC, acc_type="S32", attributes=_REQ8_LRELU, **kw)
    assert str(err.value) == message.format(name=name)


def test_api_messages_for_a_newcomers_first_calls() -> None:
    """probe13 #22: a list of ints, None, acc_type S64 and a misspelt field said something else (or raised
    a bare TypeError)."""
    with pytest.raises(UsageError, match=r"dtype int64 holds raw encodings.*np\.asarray\(acc, np\.int32\)"):
        postprocess([[1, 2]], attributes={"pre_quant_mode": "F322F16"})
    with pytest.raises(UsageError, match="acc: dtype object is not an accumulator"):
        postprocess(None, attributes={"pre_quant_mode": "F322F16"})
    with pytest.raises(TileLegalityError, match="acc_type = S64: not an accumulator type"):
        postprocess(np.ones((1, 2), np.int32), acc_type="S64", attributes={"pre_quant_mode": "F322F16"})
    with pytest.raises(UsageError, match="attributes: unknown field 'bogus'; the fields are pre_quant_mode, "):
        postprocess(np.ones((1, 2), np.float32), attributes={"pre_quant_mode": "F322F16", "bogus": 1})


@pytest.mark.parametrize("t,code,value", [("FP32", 0x3F800000, 1.0), ("fp16", 0xC000, -2.0), ("BF16", 0x3F80, 1.0),
                                          ("E4M3", 0x38, 1.0), ("S8", 0xFF, -1.0), ("S16", 0x8000, -32768.0),
                                          ("S32", 0xFFFFFFFE, -2.0), ("U32", 0xFFFFFFFF, 4294967295.0),
                                          ("S4X2", 0x0F, -1.0), (17, 0x7FFFFFFF, 2147483647.0)])
def test_decode_bits_takes_a_type_by_member_name_or_code(t, code, value):
    """Values from the formats' definitions (IEEE binary32/16, bfloat16, OCP E4M3, two's complement)."""
    got = tile_mod.decode_bits(np.array([code], np.uint64), t)
    assert got.dtype == np.float64 and got.tolist() == [value]
    assert tile_mod.decode_bits([code], t).tolist() == [value]


@pytest.mark.parametrize("t,match", [("XX", r"t = 'XX': unknown Tile DataType"),
                                     ("E5M2", r"t = E5M2: not a B\.FPATR destination or accumulator type"),
                                     (15, r"t = 15: not an assigned Tile DataType code"),
                                     (None, r"t = None: expected a Tile DataType")])
def test_decode_bits_and_typed_view_refuse_an_unknown_or_unsupported_type(t, match):
    """Was: decode_bits(bits, 'XX') returned the codes themselves as floats (FP32 0x3f800000 as 1065353216.0)."""
    for fn in (tile_mod.decode_bits, tile_mod.typed_view):
        with pytest.raises(UsageError, match=match):
            fn(np.array([0x3F800000], np.uint32), t)


def test_decode_bits_refuses_codes_wider_than_the_type_or_not_integers():
    with pytest.raises(UsageError, match=r"bits\[1\] = 0x10000: does not fit in 16 bits"):
        tile_mod.decode_bits(np.array([0x3C00, 0x10000], np.uint32), "FP16")
    with pytest.raises(UsageError, match="bits: expected integer encodings"):
        tile_mod.decode_bits(np.array([1.0]), "FP32")


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "QF322HIF8_PRE", "F322F16", "F322BF16"])
def test_fp32_rows_group_max_rows_at_any_line_offset(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """The FP32 row loops' GroupMaxOut finish (the compiled kernel, forced by PTONUM_KERNEL_MIN_ELEMENTS=0)
    on rows whose GroupMaxOut starts at every 4-byte offset of a 64-byte line (37 or 5 groups a row, not
    a multiple of 16), a partial last group, and rows with an sNaN, a qNaN or only NaNs in some groups
    (their entries rewritten after the row's other entries are stored).  Expected: the plain-Python folds
    (oracle_group_max / oracle_row_max) and the reference engine for D and the flags."""
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    rng = np.random.default_rng(2026)
    kw = dict(quant_param=SCALE_ONE) if mode.startswith("QF32") else {}
    for code in (1, 2, 3, 9):
        gn = GROUP_N[code]
        for ng, m in ((37, 17), (5, 3)):
            n = gn * ng - 3
            acc = (rng.standard_normal((m, n)) * 50).astype(np.float32).view(np.uint32).copy()
            acc[1, gn * min(17, ng - 2) + 2] = 0x7F800001  # sNaN inside a group (G 17: in a whole line)
            acc[2, 1] = 0x7FC00000  # qNaN in the row's first group
            acc[2, gn * (ng - 1):] = 0xFFA00000  # the partial last group: sNaNs only
            acc[m - 1, gn * 3:gn * 4] = 0x7FC00000  # a group of qNaNs only
            for ma in (False, True):
                attrs = dict(pre_quant_mode=mode, row_max_en=1, group_max_en=1, group_n_code=code, max_abs_en=ma)
                res = postprocess(acc, acc_type="FP32", attributes=attrs, **kw)
                ref = postprocess(acc, acc_type="FP32", attributes=attrs, engine="reference", **kw)
                eg, gf = oracle_group_max(acc.tolist(), "FP32", ma, gn)
                er, rf = oracle_row_max(acc.tolist(), "FP32", ma)
                assert res.group_max_bits.tolist() == eg, (mode, gn, ng, ma)
                assert res.row_max_bits.tolist() == er, (mode, gn, ng, ma)
                assert np.array_equal(res.d_bits, ref.d_bits) and res.flags == ref.flags, (mode, gn, ng, ma)
                assert ref.group_max_bits.tolist() == eg and ref.row_max_bits.tolist() == er


def test_preflight_keeps_one_plan_for_dict_attributes_and_numpy_rmode_or_sat(monkeypatch: pytest.MonkeyPatch) -> None:
    """attributes given as a dict of named fields, and rmode/sat given as numpy values (np.bool_, numpy
    integers, a 0-d integer array for rmode), which the call reads as the same descriptor and the same
    RMode/Sat, use the plan kept for the plain values: each was planned again on every call (the plan key
    took only FPATRAttributes/int attributes and plain rmode/sat).  Illegal values are still refused on
    every call (nothing kept)."""
    from ptonum import fpatr
    from ptonum.errors import IllegalEncodingError

    checked = []
    check = tile_mod._check_plan
    monkeypatch.setattr(tile_mod, "_check_plan", lambda *a, **k: checked.append(1) or check(*a, **k))
    tile_mod._PLANS.clear()
    fields = dict(pre_quant_mode="REQ8", relu_mode=2, row_max_en=True)
    attrs = FPATRAttributes.from_fields(**fields)
    w, r = int(fpatr.quant_param(0.5, 3, mode="REQ8")), int(fpatr.relu_param(0.25))
    kw: Dict[str, Any] = dict(acc_type="S32", quant_param=w, relu_param=r)
    want = postprocess(_REQ8_ACC, attributes=attrs, rmode=3, sat=True, **kw)
    assert len(checked) == 1

    def same(**args: Any) -> None:
        got = postprocess(_REQ8_ACC, **kw, **args)
        assert np.array_equal(got.d_bits, want.d_bits) and got.flags == want.flags
        assert np.array_equal(got.row_max_bits, want.row_max_bits)

    for attributes in (attrs, fields, dict(pre_quant_mode=3, relu_mode="LRELU", row_max_en=1), attrs.word):
        for rmode in (3, np.int64(3), np.uint8(3), np.array(3, np.int32), "RTM"):
            for sat in (True, np.bool_(True)):
                same(attributes=attributes, rmode=rmode, sat=sat)
    # one plan for each plain kind, as before: the descriptor or its word, times the code 3 or "RTM"
    assert len(checked) == 4
    for sat in (1, np.int64(1), np.uint8(1)):  # an int Sat: the plain 1's plan
        same(attributes=fields, rmode=np.int16(3), sat=sat)
    assert len(checked) == 5

    refused = [
        (UsageError, r"sat = .*expected a boolean", dict(attributes=fields, rmode=3, sat=np.int64(2))),
        (UsageError, r"sat = .*expected a boolean", dict(attributes=fields, rmode=3, sat=np.array(True))),
        (UsageError, r"rmode = 8: B\.DATR RMode codes are 0-7", dict(attributes=fields, rmode=np.int64(8), sat=True)),
        (UsageError, r"rmode = .*expected a rounding mode", dict(attributes=fields, rmode=np.bool_(True), sat=True)),
        (TileLegalityError, r"RowMaxInit requires RowMaxEn",
         dict(attributes=dict(fields, row_max_en=False, row_max_init=True), rmode=3, sat=True)),
        (IllegalEncodingError, r"reserved PreQuantMode code", dict(attributes=dict(fields, pre_quant_mode=6),
                                                                    rmode=3, sat=True)),
        (UsageError, r"unknown field 'relu'", dict(attributes=dict(fields, relu=1), rmode=3, sat=True)),
        (TileLegalityError, r"B\.DATR RMode=RTM",
         dict(attributes=dict(pre_quant_mode="SHIFTS322S16"), rmode=np.int64(3), sat=np.bool_(False))),
    ]
    for exc, match, args in refused:
        for _ in range(2):
            before = len(checked)
            with pytest.raises(exc, match=match):
                postprocess(_REQ8_ACC, acc_type="S32", quant_param=w, relu_param=r, **args)
            assert len(checked) == before + 1, match


def test_preflight_keeps_one_plan_for_numpy_integer_attributes_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """A B.FPATR attributes word given as a numpy integer (np.uint32, np.uint64, np.int64), which the call
    reads as int(word), uses the plan kept for that plain int: it was planned again on every call (the plan
    key took only FPATRAttributes/int/dict attributes).  Illegal words, and a 0-d array (which the call
    refuses), are still refused on every call (nothing kept)."""
    from ptonum import fpatr

    checked = []
    check = tile_mod._check_plan
    monkeypatch.setattr(tile_mod, "_check_plan", lambda *a, **k: checked.append(1) or check(*a, **k))
    tile_mod._PLANS.clear()
    attrs = FPATRAttributes.from_fields(pre_quant_mode="REQ8", relu_mode=2, row_max_en=True)
    word = attrs.word
    w, r = int(fpatr.quant_param(0.5, 3, mode="REQ8")), int(fpatr.relu_param(0.25))
    kw: Dict[str, Any] = dict(acc_type="S32", quant_param=w, relu_param=r, rmode=3, sat=True)
    want = postprocess(_REQ8_ACC, attributes=word, **kw)
    assert len(checked) == 1
    for attributes in (np.uint32(word), np.uint64(word), np.int64(word), word, np.uint32(word)):
        got = postprocess(_REQ8_ACC, attributes=attributes, **kw)
        assert np.array_equal(got.d_bits, want.d_bits) and got.flags == want.flags
        assert np.array_equal(got.row_max_bits, want.row_max_bits)
    assert len(checked) == 1  # the int word's plan, for every numpy integer spelling of it

    refused = [
        # Reserved[10:9] nonzero (B.FPATR decode)
        (IllegalEncodingError, r"Reserved\[10:9\] = 1", np.uint32(word | (1 << 9))),
        # RowMaxInit (bit 16) without RowMaxEn (bit 18)
        (TileLegalityError, r"RowMaxInit requires RowMaxEn", np.uint32((word & ~(1 << 18)) | (1 << 16))),
        # wider than 32 bits
        (UsageError, r"a B\.FPATR encoding is 32 bits", np.uint64(word | (1 << 32))),
        # a 0-d array is not an attributes argument
        (UsageError, r"attributes = .*expected an FPATRAttributes", np.array(word, np.uint32)),
        (UsageError, r"attributes = .*expected an FPATRAttributes", np.bool_(True)),
    ]
    for exc, match, attributes in refused:
        for _ in range(2):
            before = len(checked)
            with pytest.raises(exc, match=match):
                postprocess(_REQ8_ACC, attributes=attributes, **kw)
            assert len(checked) == before + 1, match
