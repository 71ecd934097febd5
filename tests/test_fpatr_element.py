"""Tests for ptonum.fpatr.element: the per-element B.FPATR post-process.

Expected values: the ASL vectors ``postprocess_element`` (every row, both
engines), the pto-spec ASL tests (each named below; ASL results are 64-bit
words, compared here at the destination width), and independent libraries
(numpy float16, ml_dtypes bfloat16) for the plain conversion modes.

The reference engine runs over every vector row (about 10-15 s).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, Tuple

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_vectors
from ptonum.errors import IllegalEncodingError, PtonumError, TileLegalityError, UsageError
from ptonum.formats import TileDataType as T
from ptonum.fp19 import from_fp32
from ptonum.fpatr.attributes import MODE_TABLE
from ptonum.fpatr.element import postprocess_element, postprocess_element_trace

ENGINES = ("fast", "reference")
DST_DTYPE = {T.S8: np.uint8, T.S4X2: np.uint8, T.E4M3: np.uint8, T.HiF8: np.uint8, T.FP16: np.uint16,
             T.BF16: np.uint16, T.S16: np.uint16, T.FP32: np.uint32, T.S32: np.uint32, T.U32: np.uint32}
MASK = {T.S4X2: 0xF, T.S8: 0xFF, T.E4M3: 0xFF, T.HiF8: 0xFF, T.FP16: 0xFFFF, T.BF16: 0xFFFF,
        T.S16: 0xFFFF, T.FP32: 0xFFFFFFFF, T.S32: 0xFFFFFFFF, T.U32: 0xFFFFFFFF}


def fp19(fp32_bits: int) -> int:
    """FP32ToFP19 (ptonum.fp19, checked against the fp32_to_fp19 ASL vectors)."""
    return int(from_fp32(fp32_bits))


def mqp(scale19: int, offset: int, width: int) -> int:
    """MatrixQuantParameter: FP19 at [31:13], offset field at [36+width:37]."""
    word = scale19 << 13
    if width:
        word |= (offset & ((1 << width) - 1)) << 37
    return word


def shift(code: int) -> int:
    """MatrixShiftParameter."""
    return code << 32


def run(acc: int, mode: int, relu: int, dst: T, qp: int, rp: int, rmode: str = "RNE",
        sat: bool = False, acc_type: Any = None) -> List[Tuple[int, int]]:
    """Both engines on one element; returns [(bits, flags)] per engine."""
    info = MODE_TABLE[mode]
    if acc_type is None:
        acc_type = info.accumulator_types[0] if mode else T.FP32
    out = []
    for eng in ENGINES:
        b, f = postprocess_element(acc, pre_quant_mode=mode, relu_mode=relu, acc_type=acc_type,
                                   quant_param=qp, relu_param=rp, rmode=rmode, sat=sat, engine=eng)
        assert b.shape == () and f.shape == ()
        out.append((int(b), int(f)))
    return out


def check(acc: int, mode: int, relu: int, dst: T, qp: int, rp: int, expected: int, flags: int,
          **kw: Any) -> None:
    want = (expected & MASK[dst], flags)
    for got in run(acc, mode, relu, dst, qp, rp, **kw):
        assert got == want, f"acc={acc:#x} mode={mode} got {got[0]:#x}/{got[1]:#x} want {want[0]:#x}/{want[1]:#x}"
    b, f, steps = postprocess_element_trace(acc & 0xFFFFFFFF, pre_quant_mode=mode, relu_mode=relu,
                                            acc_type=MODE_TABLE[mode].accumulator_types[0] if mode else kw.get("acc_type", T.FP32),
                                            quant_param=qp, relu_param=rp, rmode=kw.get("rmode", "RNE"),
                                            sat=kw.get("sat", False))
    assert (b, f) == want and steps[-1].name == "result"


def one19() -> int:
    return fp19(0x3F800000)


# ------------------------------------------------------------------ vectors


def _vector_groups() -> Dict[Tuple[Any, ...], List[Dict[str, str]]]:
    groups: Dict[Tuple[Any, ...], List[Dict[str, str]]] = defaultdict(list)
    for r in load_vectors("postprocess_element"):
        key = (int(r["pre_quant_mode"]), int(r["relu_mode"]), r["acc_type"], r["dst_type"], r["rmode"], int(r["sat"]))
        groups[key].append(r)
    return groups


@pytest.fixture(scope="module")
def groups() -> Dict[Tuple[Any, ...], List[Dict[str, str]]]:
    return _vector_groups()


@pytest.mark.parametrize("engine", ENGINES)
def test_postprocess_element_vectors(groups: Dict[Tuple[Any, ...], List[Dict[str, str]]], engine: str) -> None:
    total = 0
    failures = []
    for (mode, relu, acc, dst, rmode, sat), rows in groups.items():
        a = np.array([int(r["acc_bits"], 16) for r in rows], dtype=np.uint32)
        q = np.array([int(r["quant_param"], 16) for r in rows], dtype=np.uint64)
        p = np.array([int(r["relu_param"], 16) for r in rows], dtype=np.uint64)
        eb = np.array([int(r["expected_bits"], 16) for r in rows], dtype=np.int64)
        ef = np.array([int(r["expected_flags"], 16) for r in rows], dtype=np.int64)
        b, f = postprocess_element(a, pre_quant_mode=mode, relu_mode=relu, acc_type=acc, quant_param=q,
                                   relu_param=p, rmode=rmode, sat=sat, engine=engine)
        assert b.dtype == DST_DTYPE[T[dst]] and f.dtype == np.uint8
        ok = (b.astype(np.int64) == eb) & (f.astype(np.int64) == ef)
        total += len(rows)
        for i in np.flatnonzero(~ok)[:3]:
            failures.append((rows[i], hex(int(b[i])), hex(int(f[i]))))
    assert total == 52032
    assert not failures, failures[:10]


def test_destination_dtypes() -> None:
    expected = {T.S8: np.uint8, T.S4X2: np.uint8, T.E4M3: np.uint8, T.HiF8: np.uint8,
                T.FP16: np.uint16, T.BF16: np.uint16, T.S16: np.uint16, T.FP32: np.uint32}
    for code, info in MODE_TABLE.items():
        if code == 0:
            continue
        qp = shift(0) if info.is_shift else mqp(one19(), 0, info.offset_width)
        for eng in ENGINES:
            b, f = postprocess_element([[1, 2]], pre_quant_mode=code, acc_type=info.accumulator_types[0],
                                       quant_param=qp, engine=eng)
            assert b.dtype == expected[info.destination] and b.shape == (1, 2) and f.dtype == np.uint8
    for acc in (T.FP32, T.S32, T.U32):
        b, _ = postprocess_element(5, pre_quant_mode=0, relu_mode=1, acc_type=acc)
        assert b.dtype == np.uint32


# ----------------------------------------------------------- pto-spec ASL tests


def test_asl_block_exec_b_fpatr_activation_004() -> None:
    scale_one = mqp(one19(), 0, 9)
    alpha_half = fp19(0x3F000000)
    check(0xC0000000, 24, 1, T.S8, scale_one, 0, 0, 0)
    check(0xC0800000, 24, 2, T.S8, scale_one, alpha_half, 0xFFFFFFFFFFFFFFFE, 0)
    check(0xC0800000, 24, 3, T.S8, scale_one, alpha_half, 0xFFFFFFFFFFFFFFFE, 0)


def test_asl_block_exec_b_fpatr_all_modes_007() -> None:
    one, s1, s2 = 0x3F800000, 1, 2
    scale = one19()
    p0, p5, p9, p17 = (mqp(scale, 0, w) for w in (0, 5, 9, 17))
    cases = [
        (0, one, T.FP32, 0, one), (1, one, T.FP16, 0, 0x3C00), (2, s1, T.S8, p9, 1),
        (3, s1, T.S8, p9, 1), (4, s1, T.FP16, p0, 0x3C00), (5, s1, T.FP16, p0, 0x3C00),
        (12, s2, T.S16, shift(0), 1), (13, s2, T.S16, shift(0), 1), (16, one, T.BF16, 0, 0x3F80),
        (17, s1, T.S4X2, p5, 1), (18, s1, T.S4X2, p5, 1), (19, s1, T.S16, p17, 1),
        (20, s1, T.S16, p17, 1), (23, one, T.S8, p9, 1), (24, one, T.S8, p9, 1),
        (25, one, T.HiF8, p0, 0x08), (26, one, T.E4M3, p0, 0x38), (27, one, T.FP32, p0, one),
        (28, one, T.HiF8, p0, 0x08), (32, one, T.FP16, p0, 0x3C00), (33, one, T.FP16, p0, 0x3C00),
        (34, one, T.BF16, p0, 0x3F80), (35, s1, T.BF16, p0, 0x3F80), (36, one, T.BF16, p0, 0x3F80),
        (37, one, T.E4M3, p0, 0x38), (38, one, T.FP32, p0, one), (39, s1, T.BF16, p0, 0x3F80),
    ]
    assert len(cases) == 27
    for mode, src, dst, param, expected in cases:
        check(src, mode, 0, dst, param, 0, expected, 0)


def test_asl_block_exec_b_fpatr_commit_006_elements() -> None:
    # The element conversions of the commit test: scale 2.0, QF322B8_PRE, S8.
    # (The atomic commit and sticky status are the tile operation's.)
    param = mqp(fp19(0x40000000), 0, 9)
    check(0x3FC00000, 24, 0, T.S8, param, 0, 3, 0)
    check(0x428C0000, 24, 0, T.S8, param, 0, 0xFFFFFFFFFFFFFF8C, 0x14)


def test_asl_block_exec_b_fpatr_formats_003() -> None:
    x = 0x3FC00000
    scale_one = mqp(one19(), 0, 0)
    check(x, 1, 0, T.FP16, 0, 0, 0x3E00, 0)
    check(x, 16, 0, T.BF16, 0, 0, 0x3FC0, 0)
    check(x, 26, 0, T.E4M3, scale_one, 0, 0x3C, 0)
    check(x, 25, 0, T.HiF8, scale_one, 0, 0x0C, 0)
    check(x, 27, 0, T.FP32, mqp(fp19(0x3F000000), 0, 0), 0, 0x3F400000, 0)


def test_asl_block_exec_b_fpatr_quant_002() -> None:
    scale_two = fp19(0x40000000)
    req8 = mqp(scale_two, 0x1FF, 9)
    check(3, 3, 0, T.S8, req8, 0, 5, 0)
    check(70, 3, 0, T.S8, mqp(scale_two, 0, 9), 0, 0xFFFFFFFFFFFFFF8C, 0x14)
    check(70, 3, 0, T.S8, mqp(scale_two, 0, 9), 0, 127, 0x14, sat=True)
    check(0xFFFFFFDF, 13, 0, T.S16, shift(0), 0, 0xFFFFFFFFFFFFFFEF, 0)
    check(0x7FFFFFFF, 13, 0, T.S16, shift(0), 0, 0x7FFF, 0x14, sat=True)


def test_asl_block_exec_b_fpatr_rounding_008() -> None:
    one = one19()
    check(300, 3, 0, T.S8, mqp(one, 1, 9), 0, 0, 0x14)
    check(20, 17, 0, T.S4X2, mqp(one, 1, 5), 0, 0, 0x14)
    check(70000, 19, 0, T.S16, mqp(one, 1, 17), 0, 0, 0x14)
    check(0x7FFFFFFF, 13, 0, T.S16, shift(0), 0, 0x7FFF, 0x14)


def test_asl_block_exec_b_fpatr_special_005() -> None:
    s9 = mqp(one19(), 0, 9)
    p0 = mqp(one19(), 0, 0)
    check(0x7FC00000, 24, 0, T.S8, s9, 0, 0xFFFFFFFFFFFFFF80, 1)
    check(0x7F800000, 24, 0, T.S8, s9, 0, 0xFFFFFFFFFFFFFF80, 1)
    check(0xFF800000, 24, 0, T.S8, s9, 0, 0xFFFFFFFFFFFFFF80, 1)
    check(0x7FC00000, 24, 0, T.S8, s9, 0, 0, 1, sat=True)
    check(0x7F800000, 24, 0, T.S8, s9, 0, 127, 0x14, sat=True)
    check(0x7FC00000, 26, 0, T.E4M3, p0, 0, 0x7F, 0)
    check(0x7FC00000, 32, 0, T.FP16, p0, 0, 0, 0, sat=True)
    check(0x7F800001, 32, 0, T.FP16, p0, 0, 0, 1, sat=True)
    check(0x7F800000, 32, 0, T.FP16, p0, 0, 0x7BFF, 0x14, sat=True)
    check(0x7FC00000, 32, 0, T.FP16, p0, 0, 0x7E00, 0)
    check(0x7FC00000, 25, 0, T.HiF8, p0, 0, 0x80, 0)


def test_asl_block_exec_b_fpatr_zero_affine_009() -> None:
    one = one19()
    check(0, 24, 0, T.S8, mqp(one, 5, 9), 0, 5, 0)
    check(0x80000000, 24, 0, T.S8, mqp(one, 5, 9), 0, 5, 0)
    check(0, 24, 0, T.S8, mqp(one, 0x1FB, 9), 0, 0xFFFFFFFFFFFFFFFB, 0)
    check(0x80000000, 24, 0, T.S8, mqp(one, 0, 9), 0, 0, 0)


def test_asl_block_fault_b_fpatr_controls_010_elements() -> None:
    # The element function applies the fixed rounding whatever RMode it is given.
    p0 = mqp(one19(), 0, 0)
    check(0x3F801000, 32, 0, T.FP16, p0, 0, 0x3C00, 0x10, rmode="RTP")
    check(0x3F880000, 26, 0, T.E4M3, p0, 0, 0x38, 0x10, rmode="RNA")
    check(0x3F880000, 25, 0, T.HiF8, p0, 0, 0x09, 0x10, rmode="RNE")


def test_asl_arch_exec_matrix_postprocess_001_element() -> None:
    # (The reduction-step half of this test belongs to fpatr.reduction.)
    check(0xC0000000, 24, 1, T.S8, mqp(one19(), 0, 9), 0, 0, 0)


def test_asl_arch_exec_matrix_postprocess_pipeline_002() -> None:
    alpha = fp19(0x3F400000)
    check(0xBF000BB0, 32, 2, T.FP16, mqp(one19(), 0, 0), alpha, 0xB601, 0x10)


def test_asl_arch_static_matrix_postprocess_contract_001() -> None:
    """tests/asl/arch/profile/matrix-postprocess/arch-static-matrix-postprocess-contract-001.asl asserts only
    that asl/arch/profile/matrix-postprocess.asl compiles as an independent unit; its Python counterpart is
    that ptonum.fpatr.element's public names resolve and the element function runs the ASL's own example
    (arch-exec-matrix-postprocess-001.asl: QF322B8_PRE + ReLU, FP32 -2.0 -> S8 0, no flags)."""
    import ptonum.fpatr.element as element_mod

    for name in element_mod.__all__:
        assert callable(getattr(element_mod, name)), name
    check(0xC0000000, 24, 1, T.S8, mqp(one19(), 0, 9), 0, 0, 0)


# ----------------------------------------------------------- specific rules


def test_mode0_without_relu_passes_raw_bits_including_nan_payloads() -> None:
    acc = np.array([0x7F800001, 0xFFC01234, 0x80000000, 0x12345678], dtype=np.uint32)
    for eng in ENGINES:
        for t in ("FP32", "S32", "U32"):
            b, f = postprocess_element(acc, pre_quant_mode=0, acc_type=t, rmode="RTZ", sat=True, engine=eng)
            assert b.tolist() == acc.tolist() and not f.any()


def test_negative_zero_rule() -> None:
    p0 = mqp(one19(), 0, 0)
    neg0 = 0x80000000
    assert run(neg0, 32, 0, T.FP16, p0, 0) == [(0x8000, 0)] * 2
    assert run(neg0, 27, 0, T.FP32, p0, 0) == [(0x80000000, 0)] * 2
    assert run(neg0, 26, 0, T.E4M3, p0, 0) == [(0x80, 0)] * 2
    assert run(neg0, 25, 0, T.HiF8, p0, 0) == [(0x00, 0)] * 2
    assert run(neg0, 32, 1, T.FP16, p0, 0) == [(0x0000, 0)] * 2  # ReLU: multiplier 0 -> +0
    assert run(neg0, 32, 2, T.FP16, p0, 0) == [(0x0000, 0)] * 2  # alpha +0 -> +0
    assert run(neg0, 32, 2, T.FP16, p0, fp19(0x3F000000)) == [(0x8000, 0)] * 2


def test_negative_infinity_with_zero_multiplier_is_zero() -> None:
    p9 = mqp(one19(), 3, 9)
    assert run(0xFF800000, 24, 1, T.S8, p9, 0) == [(3, 0)] * 2  # -Inf x 0 = 0, + offset 3
    assert run(0xFF800000, 32, 2, T.FP16, mqp(one19(), 0, 0), 0) == [(0, 0)] * 2
    # with a nonzero alpha it stays a special value
    assert run(0xFF800000, 32, 2, T.FP16, mqp(one19(), 0, 0), fp19(0x3F000000)) == [(0xFC00, 0)] * 2
    # +Inf is never negative: ReLU does not touch it
    assert run(0x7F800000, 32, 1, T.FP16, mqp(one19(), 0, 0), 0) == [(0x7C00, 0)] * 2


def test_shift_modes_ignore_relu_and_saturate() -> None:
    acc = np.array([0x80000000, 0x7FFFFFFF, 0xFFFFFFFF, 100], dtype=np.uint32)
    codes = np.array([[0], [15]], dtype=np.uint64) << np.uint64(32)
    for eng in ENGINES:
        b, f = postprocess_element(acc, pre_quant_mode=12, relu_mode=1, acc_type="S32", quant_param=codes, engine=eng)
        # shift 1: -2^30 -> -32768 saturated; 2^30-1 -> 32767 saturated; -1 >> 1 = -1; 100 >> 1 = 50
        assert b[0].tolist() == [0x8000, 0x7FFF, 0xFFFF, 50] and f[0].tolist() == [0x14, 0x14, 0, 0]
        # shift 16: -32768, 32767, -1, 0
        assert b[1].tolist() == [0x8000, 0x7FFF, 0xFFFF, 0] and f[1].tolist() == [0, 0, 0, 0]


def test_per_column_parameters_broadcast() -> None:
    one, half = one19(), fp19(0x3F000000)
    qp = np.array([[mqp(one, 0, 9), mqp(half, -1, 9)]], dtype=np.uint64)
    acc = np.array([[10, 10], [-3 & 0xFFFFFFFF, 7]], dtype=np.uint32)
    for eng in ENGINES:
        b, f = postprocess_element(acc, pre_quant_mode="VREQ8", acc_type="S32", quant_param=qp, engine=eng)
        # 10*1 = 10; 10*0.5-1 = 4; -3; 7*0.5 = 3.5 -> RNE 4, -1 = 3 (NX)
        assert b.tolist() == [[10, 4], [0xFD, 3]] and f.tolist() == [[0, 0], [0, 0x10]]


def test_plain_f322f16_matches_numpy_float16() -> None:
    rng = np.random.default_rng(7)
    acc = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
    f32 = acc.view(np.float32)
    finite = np.isfinite(f32)
    for eng, n in (("fast", 20000), ("reference", 1500)):
        b, _ = postprocess_element(acc[:n], pre_quant_mode="F322F16", acc_type="FP32", engine=eng)
        with np.errstate(over="ignore"):
            want = f32[:n].astype(np.float16).view(np.uint16)
        sel = finite[:n]
        assert np.array_equal(b[sel], want[sel])


def test_plain_f322bf16_matches_ml_dtypes_bfloat16() -> None:
    rng = np.random.default_rng(8)
    acc = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
    f32 = acc.view(np.float32)
    b, _ = postprocess_element(acc, pre_quant_mode="F322BF16", acc_type="FP32")
    with np.errstate(invalid="ignore", over="ignore"):
        want = f32.astype(ml_dtypes.bfloat16).view(np.uint16)
    sel = np.isfinite(f32) & (np.abs(f32) < np.float32(3.38e38))  # ASL overflow is pre-rounding
    assert np.array_equal(b[sel], want[sel])


# --------------------------------------------------------------- rejections


def test_rejections() -> None:
    with pytest.raises(TileLegalityError, match="BundleFPATRAccumulatorTypeLegal"):
        postprocess_element(1, pre_quant_mode="REQ8", acc_type="FP32", quant_param=mqp(one19(), 0, 9))
    with pytest.raises(UsageError, match="FP32, S32 or U32"):
        postprocess_element(1, pre_quant_mode=0, acc_type="FP16")
    with pytest.raises(IllegalEncodingError):
        postprocess_element(1, pre_quant_mode=6, acc_type="FP32")
    with pytest.raises(IllegalEncodingError):
        postprocess_element(1, pre_quant_mode=0, relu_mode=5, acc_type="FP32")
    with pytest.raises(TileLegalityError, match=r"quant_param\[1\]: FP19 scale .* infinite or NaN"):
        postprocess_element([1, 2], pre_quant_mode="VDEQF16", acc_type="S32",
                            quant_param=np.array([one19() << 13, 0x3FC00 << 13], dtype=np.uint64))
    for _ in range(2):  # the parsed configuration is remembered; a rejection is not
        with pytest.raises(TileLegalityError, match="relu_param: FP19 alpha"):
            postprocess_element(1, pre_quant_mode=0, relu_mode=2, acc_type="S32", relu_param=0x3FF00)
        with pytest.raises(TileLegalityError, match=r"quant_param: FP19 scale .* infinite or NaN"):
            postprocess_element(1, pre_quant_mode="REQ8", acc_type="S32", quant_param=0x3FC00 << 13,
                                engine="reference")
        with pytest.raises(UsageError, match="sat"):
            postprocess_element(1, pre_quant_mode=0, acc_type="FP32", sat=2, engine="reference")
    with pytest.raises(UsageError, match="do not broadcast"):
        postprocess_element([1, 2, 3], pre_quant_mode=5, acc_type="S32", quant_param=[one19() << 13] * 2)
    with pytest.raises(UsageError):
        postprocess_element(1 << 32, pre_quant_mode=0, acc_type="FP32")
    with pytest.raises(UsageError):
        postprocess_element(1, pre_quant_mode=0, acc_type="FP32", engine="slow")
    with pytest.raises(UsageError):
        postprocess_element_trace([1, 2], pre_quant_mode=0, acc_type="FP32")


# ------------------------------------------------------------------- trace


def test_trace_explains_every_step() -> None:
    qp = mqp(one19(), 1, 9)
    bits, flags, steps = postprocess_element_trace(300, pre_quant_mode="REQ8", acc_type="S32", quant_param=qp)
    assert (bits, flags) == (0, 0x14)  # rounding-008: 300 -> S9 255, +1 = 256 wraps to 0
    names = [s.name for s in steps]
    assert names == ["control", "source", "multiplier", "product", "intermediate", "offset", "encode", "result"]
    inter = steps[names.index("intermediate")]
    assert inter.asl == "MatrixRoundAndSaturateSigned" and inter.flags == 0x14 and "255" in inter.text
    enc = steps[names.index("encode")]
    assert enc.flags == 0x14 and "wrapped" in enc.text
    bits, flags, steps = postprocess_element_trace(0xBF000BB0, pre_quant_mode=32, relu_mode=2, acc_type="FP32",
                                                   quant_param=mqp(one19(), 0, 0), relu_param=fp19(0x3F400000))
    assert (bits, flags) == (0xB601, 0x10)
    text = "\n".join(str(s) for s in steps)
    assert "alpha FP19" in text and "candidates" in text and "MatrixSelectedMultiplier" in text


# -------------------------------------------------------------- hypothesis

_ACC_SPECIALS = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
                 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7FFFFFFF, 0x80000001, 0xFFFFFFFF]


@st.composite
def legal_config(draw: Any) -> Dict[str, Any]:
    code = draw(st.sampled_from(sorted(MODE_TABLE)))
    info = MODE_TABLE[code]
    acc_type = draw(st.sampled_from(info.accumulator_types))
    relu = draw(st.integers(0, 3))
    n = 12
    normal19 = st.integers(1, 254).flatmap(lambda e: st.integers(0, 1023).map(lambda f: (e << 10) | f))
    if info.is_shift:
        qp = [shift(draw(st.integers(0, 15))) for _ in range(n)]
    elif info.has_parameter:
        w = info.offset_width
        off = st.integers(-(1 << (w - 1)), (1 << (w - 1)) - 1) if w else st.just(0)
        qp = [mqp(draw(normal19), draw(off), w) for _ in range(n)]
    else:
        qp = [draw(st.sampled_from([0, 1]))] * n
    rp = [draw(st.one_of(st.just(0), normal19)) for _ in range(n)]
    acc = [draw(st.one_of(st.sampled_from(_ACC_SPECIALS), st.integers(0, 0xFFFFFFFF))) for _ in range(n)]
    return dict(acc_bits=np.array(acc, dtype=np.uint32), pre_quant_mode=code, relu_mode=relu,
                acc_type=acc_type, quant_param=np.array(qp, dtype=np.uint64),
                relu_param=np.array(rp, dtype=np.uint64),
                rmode=draw(st.sampled_from(["NONE", "RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB"])),
                sat=draw(st.booleans()))


@settings(max_examples=300, deadline=None)
@given(legal_config())
def test_engines_agree_on_random_legal_configurations(cfg: Dict[str, Any]) -> None:
    bf, ff = postprocess_element(**cfg, engine="fast")
    br, fr = postprocess_element(**cfg, engine="reference")
    assert bf.dtype == br.dtype
    assert bf.tolist() == br.tolist() and ff.tolist() == fr.tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 63), st.integers(0, 7), st.sampled_from(["FP32", "S32", "U32", "FP16"]),
       st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1), st.integers(0, 0xFFFFFFFF),
       st.integers(0, 7), st.booleans())
def test_garbage_arguments_succeed_or_raise_ptonum_error(mode: int, relu: int, acc: str, qp: int, rp: int,
                                                         a: int, rmode: int, sat: bool) -> None:
    results = []
    for eng in ENGINES:
        try:
            results.append(postprocess_element(a, pre_quant_mode=mode, relu_mode=relu, acc_type=acc,
                                               quant_param=qp, relu_param=rp, rmode=rmode, sat=sat,
                                               engine=eng))
        except PtonumError as exc:
            results.append(type(exc))  # type: ignore[arg-type]
    if isinstance(results[0], tuple) and isinstance(results[1], tuple):
        assert [int(x) for x in results[0]] == [int(x) for x in results[1]]
    else:
        assert results[0] == results[1]


def test_fast_element_path_parses_rmode_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``postprocess_element`` parses rmode once (``element_config``); the fast path below it calls
    the typed encoder entries (no ``encode_fast``/``check_resolved_mode``).  F322F16 of FP32 1.5
    (0x3fc00000) is FP16 0x3e00 (IEEE 754 binary16), exact."""
    import ptonum.encode as enc
    import ptonum.fpatr.element as el

    calls: List[str] = []
    real_parse = el.parse_rounding_mode
    monkeypatch.setattr(el, "parse_rounding_mode", lambda *a, **k: (calls.append("parse"), real_parse(*a, **k))[1])
    for name in ("encode_fast", "check_resolved_mode", "round_and_saturate_signed_fast"):
        monkeypatch.setattr(enc, name, lambda *a, _n=name, **k: pytest.fail(f"{_n} called below the edge"))
    bits, flags = postprocess_element(np.array([0x3FC00000] * 4, np.uint32), pre_quant_mode="F322F16",
                                      relu_mode="NONE", acc_type="FP32", rmode="NONE", sat=False, engine="fast")
    assert bits.tolist() == [0x3E00] * 4 and flags.tolist() == [0] * 4
    assert calls == ["parse"]
