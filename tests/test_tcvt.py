"""TCVT to E8M0 (ADR-0085 D183, ASL ``ReferenceFloatToE8M0``).

Expected values come from the ASL vectors (``tcvt_e8m0.csv.gz``), the pto-spec
ASL tests named in each test, ml_dtypes (``float8_e8m0fnu``) and en_dtypes
(``float8_e8m0``).  The reference engine runs over every vector row (well under a second).
"""

from __future__ import annotations

from typing import Tuple

import en_dtypes
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TcvtGroups
from ptonum import tcvt
from ptonum.errors import UnsupportedConversionError, UsageError
from ptonum.formats import TileDataType
from ptonum.rounding import RoundingMode

MODES = ("RNE", "RTM", "RTP", "RTZ", "RNA", "RTO", "RHB")

# --------------------------------------------------------------------------- vectors


Groups = TcvtGroups


@pytest.fixture(scope="module")
def groups(tcvt_vector_groups: Groups) -> Groups:
    """The vector file split by (src_type, rmode, sat) -> (src_bits, expected_bits, expected_flags)."""
    out = tcvt_vector_groups
    assert {k[0] for k in out} == {"FP16", "BF16", "FP32"}
    assert {k[1] for k in out} == set(MODES)
    return out


def _mismatch(codes: np.ndarray, flags: np.ndarray, eb: np.ndarray, ef: np.ndarray) -> int:
    return int(np.count_nonzero((codes != eb) | (flags != ef)))


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_vectors_every_row(groups: Groups, engine: str) -> None:
    bad = {}
    for (s, m, sv), (bits, eb, ef) in groups.items():
        codes, flags = tcvt.to_e8m0(bits, src_type=s, rmode=m, sat=sv, engine=engine)
        assert codes.dtype == np.uint8 and flags.dtype == np.uint8 and codes.shape == bits.shape
        n = _mismatch(codes, flags, eb, ef)
        if n:
            bad[(s, m, sv)] = n
    assert bad == {}


def test_vectors_fp32_both_fast_paths(groups: Groups) -> None:
    """FP32 through the vectorized rule, the high-half tables, and the public call above the table cutoff."""
    for (s, m, sv), (bits, eb, ef) in groups.items():
        if s != "FP32":
            continue
        mode = RoundingMode[m]
        c, f = tcvt._fast_rule(bits, tcvt._LAYOUTS[TileDataType.FP32], mode, bool(sv))
        assert _mismatch(c, f, eb, ef) == 0, (m, sv)
        c, f = tcvt._fast32_tables(bits.astype(np.uint32), mode, bool(sv))
        assert _mismatch(c, f, eb, ef) == 0, (m, sv)
        reps = tcvt._FP32_TABLE_MIN // len(bits) + 1
        big = np.tile(bits.astype(np.uint32), reps).reshape(reps, -1)
        c, f = tcvt.to_e8m0(big, src_type="FP32", rmode=m, sat=sv)
        assert c.shape == big.shape
        assert _mismatch(c, f, np.tile(eb, (reps, 1)), np.tile(ef, (reps, 1))) == 0, (m, sv)


def test_vectors_fp32_dense_undecided_path(groups: Groups) -> None:
    """Vector rows whose high half does not decide the result (exact powers, sqrt(2) midpoints,
    subnormal edges), repeated past the table cutoff so the dense settle path runs."""
    for (s, m, sv), (bits, eb, ef) in groups.items():
        if s != "FP32":
            continue
        low_t = tcvt._table32(RoundingMode[m], bool(sv))[0]
        sel = low_t[(bits >> np.uint64(16)).astype(np.int64)] >= tcvt._AMBIGUOUS
        assert np.count_nonzero(sel) >= 40, (m, sv)  # the vectors do probe these buckets
        reps = tcvt._FP32_TABLE_MIN // int(np.count_nonzero(sel)) + 1
        c, f = tcvt.to_e8m0(np.tile(bits[sel].astype(np.uint32), reps), src_type="FP32", rmode=m, sat=sv)
        assert _mismatch(c, f, np.tile(eb[sel], reps), np.tile(ef[sel], reps)) == 0, (m, sv)


def test_vectors_nearest_modes_identical(groups: Groups) -> None:
    """Exact ties in the exponent domain cannot occur, so RNE/RNA/RHB rows agree (vector fact)."""
    for s in ("FP16", "BF16"):
        for sv in (0, 1):
            ref = groups[(s, "RNE", sv)]
            for m in ("RNA", "RHB"):
                other = groups[(s, m, sv)]
                assert np.array_equal(ref[0], other[0])
                assert np.array_equal(ref[1], other[1]) and np.array_equal(ref[2], other[2])


# --------------------------------------------------------------------------- pto-spec ASL tests

ENGINES = ["fast", "reference"]


@pytest.mark.parametrize("engine", ENGINES)
def test_asl_tile_bound_tcvt_e8m0_rounding_003(engine: str) -> None:
    """tests/asl/tile/elementwise-tile-tile/format-conversion/TCVT/tile-bound-tcvt-e8m0-rounding-003.asl"""
    expect_15 = {"RNE": 128, "RTM": 127, "RTP": 128, "RTZ": 127, "RNA": 128, "RTO": 128, "RHB": 128}
    for mode, code in expect_15.items():
        c, f = tcvt.to_e8m0(0x3FC0, src_type="BF16", rmode=mode, sat=False, engine=engine)
        assert (int(c), int(f)) == (code, 0x10), mode
    for mode, code in {"RTM": 126, "RTP": 127, "RTZ": 127}.items():
        c, f = tcvt.to_e8m0(0x3F40, src_type="BF16", rmode=mode, sat=False, engine=engine)
        assert (int(c), int(f)) == (code, 0x10), mode


@pytest.mark.parametrize("engine", ENGINES)
def test_asl_tile_exec_tcvt_e8m0_finite_002(engine: str) -> None:
    """tests/asl/tile/elementwise-tile-tile/format-conversion/TCVT/tile-exec-tcvt-e8m0-finite-002.asl

    DefaultNumericExecutionControl is RNE, Sat=0; our default RMode NONE resolves to RNE.
    """
    src = np.array([0x3F80, 0x4000, 0x3F00, 0x3FC0], dtype=np.uint16)
    keep = src.copy()
    c, f = tcvt.to_e8m0(src, src_type="BF16", engine=engine)
    assert c.tolist() == [127, 128, 126, 128]
    assert int(np.bitwise_or.reduce(f)) == 0x10  # the sticky status after the tile op
    assert np.array_equal(src, keep)  # the source tile is unchanged


def test_asl_tile_fault_tcvt_e8m0_pairs_005() -> None:
    """tests/asl/tile/elementwise-tile-tile/format-conversion/TCVT/tile-fault-tcvt-e8m0-pairs-005.asl"""
    for ok in ("FP16", "BF16", "FP32"):
        c, f = tcvt.to_e8m0(1, src_type=ok)
        assert c.shape == ()
    for bad in ("FP64", "E4M3", "S32", "E8M0"):
        for engine in ENGINES:
            with pytest.raises(UnsupportedConversionError, match=bad):
                tcvt.to_e8m0(1, src_type=bad, engine=engine)
    with pytest.raises(UnsupportedConversionError):
        tcvt.to_e8m0(0x3FF0000000000000, src_type=TileDataType.FP64)


ASL_SPECIAL_004 = [
    # (source bits, type, sat, expected code, expected flags)
    (0x0000, "BF16", False, 0xFF, 0x01),
    (0xBF80, "BF16", True, 0xFF, 0x01),
    (0x7FC0, "BF16", False, 0xFF, 0x01),
    (0x7F80, "BF16", False, 0xFF, 0x14),
    (0x7F80, "BF16", True, 0xFE, 0x14),
    (0x00400000, "FP32", False, 0x00, 0x00),
    (0x00200000, "FP32", False, 0xFF, 0x18),
    (0x00200000, "FP32", True, 0x00, 0x18),
    (0x7F000000, "FP32", False, 0xFE, 0x00),
    (0x7F7FFFFF, "FP32", False, 0xFF, 0x14),
    (0x7F7FFFFF, "FP32", True, 0xFE, 0x14),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("bits,src,sat,code,flags", ASL_SPECIAL_004)
def test_asl_tile_state_tcvt_e8m0_special_004(engine: str, bits: int, src: str, sat: bool, code: int,
                                               flags: int) -> None:
    """tests/asl/tile/elementwise-tile-tile/format-conversion/TCVT/tile-state-tcvt-e8m0-special-004.asl (RNE)"""
    c, f = tcvt.to_e8m0(bits, src_type=src, rmode="RNE", sat=sat, engine=engine)
    assert (int(c), int(f)) == (code, flags)


def test_asl_arch_profile_source_types() -> None:
    """asl/arch/profile/e8m0-conversion.asl HardwareTCVTE8M0SourceTypeSupported over every type
    (tests/asl/arch/profile/e8m0-conversion/arch-static-e8m0-conversion-contract-001.asl only compiles the unit)."""
    for dt in TileDataType:
        if dt in (TileDataType.FP16, TileDataType.BF16, TileDataType.FP32):
            tcvt.to_e8m0(0, src_type=dt)
        else:
            with pytest.raises(UnsupportedConversionError):
                tcvt.to_e8m0(0, src_type=dt)


# --------------------------------------------------------------------------- trace


def test_trace_matches_engine_and_records_steps() -> None:
    code, flags, steps = tcvt.to_e8m0_trace(0x3FC0, src_type="BF16", rmode="NONE", sat=False)
    assert (code, flags) == (128, 0x10)  # tile-bound-tcvt-e8m0-rounding-003.asl
    names = [s.step for s in steps]
    for want in ("value class", "decomposition", "floor exponent", "exact power", "range", "rounding", "result"):
        assert want in names
    rounding = next(s for s in steps if s.step == "rounding")
    assert rounding.asl == "ReferenceE8M0RoundExponent"
    assert "F=0" in rounding.text and "F+1=1" in rounding.text
    assert "sig^2 = 36864" in rounding.text and "2^15 = 32768" in rounding.text  # 192^2 vs 2^(2*7+1)
    assert rounding.flags == 0x10
    code, flags, steps = tcvt.to_e8m0_trace(0x7F7FFFFF, src_type="FP32", rmode="RTM", sat=True)
    assert (code, flags) == (0xFE, 0x14)
    assert steps[-1].step == "range" and steps[-1].flags == 0x14
    code, flags, steps = tcvt.to_e8m0_trace(0x8000, src_type="FP16", rmode="RNE", sat=False)
    assert (code, flags) == (0xFF, 0x01) and "NegativeZero" in steps[1].text
    with pytest.raises(UsageError):
        tcvt.to_e8m0_trace(np.array([1, 2], np.uint16), src_type="FP16")  # type: ignore[arg-type]
    with pytest.raises(UnsupportedConversionError):
        tcvt.to_e8m0_trace(1, src_type="FP64")


# --------------------------------------------------------------------------- ml_dtypes / en_dtypes


def _all16(name: str) -> Tuple[np.ndarray, np.ndarray]:
    u = np.arange(1 << 16, dtype=np.uint16)
    dt = np.float16 if name == "FP16" else ml_dtypes.bfloat16
    with np.errstate(invalid="ignore"):
        return u, u.view(dt).astype(np.float64)


#: the installed ml_dtypes release as (major, minor): its E8M0 cast changed in 0.7 (the binade 2^-127)
ML_DTYPES_VERSION = tuple(int(p) for p in ml_dtypes.__version__.split(".")[:2])


def _expected_ml_difference(x: np.ndarray, sat: bool) -> np.ndarray:
    """Where ml_dtypes' cast must differ from the spec (RNE), computed from the values alone.

    x is float64 (exact for FP16/BF16).  See docs/tcvt-e8m0.md.
    """
    pos = np.isfinite(x) & (x > 0)
    mant, e = np.frexp(np.where(pos, x, 1.0))
    floor_e = e.astype(np.int64) - 1
    r = mant * 2.0  # x / 2^F in [1, 2), exact
    inexact = pos & (r != 1.0)
    # ml_dtypes 0.5/0.6 treat the binade [2^-127, 2^-126) apart (every inexact value up to 0x01);
    # 0.7 rounds it by the same linear midpoint as the others (BF16 0x0041-0x005F, see docs/tcvt-e8m0.md)
    low_apart = ML_DTYPES_VERSION < (0, 7)
    in_range = (floor_e >= (-126 if low_apart else -127)) & (floor_e <= 126)
    # linear midpoint 1.5 vs geometric midpoint sqrt(2): r*r is exact (<= 11-bit significands)
    midpoint = pos & in_range & inexact & (r * r > 2.0) & (r < 1.5)
    # binade [2^-127, 2^-126) before ml_dtypes 0.7: every inexact value rounded up to 0x01
    low_binade = pos & (floor_e == -127) & inexact & (r * r < 2.0) & low_apart
    underflow = pos & (floor_e < -127) & (not sat)  # ml gives 0x00, spec 0xFF unless Sat
    top = pos & (floor_e == 127) & inexact
    overflow = top & ((r < 1.5) if not sat else (r >= 1.5))  # ml: <1.5*2^127 -> 0xFE else 0xFF
    pos_inf = np.isposinf(x) & sat
    return midpoint | low_binade | underflow | overflow | pos_inf


@pytest.mark.parametrize("sat", [False, True])
@pytest.mark.parametrize("name", ["FP16", "BF16"])
def test_ml_dtypes_agrees_except_documented_inputs(name: str, sat: bool) -> None:
    u, x = _all16(name)
    with np.errstate(invalid="ignore"):
        ml = u.view(np.float16 if name == "FP16" else ml_dtypes.bfloat16).astype(ml_dtypes.float8_e8m0fnu)
    ml = ml.view(np.uint8)
    codes, _ = tcvt.to_e8m0(u, src_type=name, rmode="RNE", sat=sat)
    differs = _expected_ml_difference(x, sat)
    assert np.array_equal(codes[~differs], ml[~differs])  # agreement must be bit-exact
    assert np.all(codes[differs] != ml[differs])  # and every predicted difference is real
    # the differences lie in the directions the document states
    f = np.frexp(np.where(differs & np.isfinite(x), x, 1.0))[1] - 1 + 127
    mid = differs & np.isfinite(x) & (f <= 253) & (f >= 1)
    assert np.all(codes[mid] == ml[mid] + 1)
    assert int(np.count_nonzero(differs)) > 2000


def test_ml_dtypes_examples_in_doc() -> None:
    x = np.array([1.45, 1.5, 0.72, 3.0], dtype=np.float16)
    ml = x.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)
    codes, flags = tcvt.to_e8m0_values(x)
    assert ml.tolist() == [127, 128, 126, 129]
    assert codes.tolist() == [128, 128, 127, 129]
    assert flags.tolist() == [0x10] * 4


@pytest.mark.parametrize("sat", [False, True])
@pytest.mark.parametrize("name", ["FP16", "BF16"])
def test_en_dtypes_truncation_equals_rtm_in_range(name: str, sat: bool) -> None:
    """en_dtypes float8_e8m0 is floor(log2 x): equal to RTM except underflow/overflow/+Inf."""
    u, x = _all16(name)
    with np.errstate(invalid="ignore"):
        en = x.astype(np.float32).astype(en_dtypes.float8_e8m0).view(np.uint8)
    codes, _ = tcvt.to_e8m0(u, src_type=name, rmode="RTM", sat=sat)
    pos = np.isfinite(x) & (x > 0)
    floor_e = np.frexp(np.where(pos, x, 1.0))[1] - 1
    exact_top = x == 2.0**127
    edge = (pos & (floor_e < -127)) | (pos & (floor_e == 127) & ~exact_top) | np.isposinf(x)
    assert np.array_equal(codes[~edge], en[~edge])
    assert np.count_nonzero(~edge) > 60000


# --------------------------------------------------------------------------- hypothesis


@settings(max_examples=60, deadline=None)
@given(
    bits=st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=64),
    mode=st.sampled_from(("NONE",) + MODES),
    sat=st.booleans(),
)
def test_engines_agree_random_fp32(bits: list, mode: str, sat: bool) -> None:
    arr = np.array(bits, dtype=np.uint32)
    rc, rf = tcvt.to_e8m0(arr, src_type="FP32", rmode=mode, sat=sat, engine="reference")
    fc, ff = tcvt.to_e8m0(arr, src_type="FP32", rmode=mode, sat=sat, engine="fast")
    m = RoundingMode[mode].resolved()
    tc, tf = tcvt._fast32_tables(arr, m, sat)
    assert np.array_equal(rc, fc) and np.array_equal(rf, ff)
    assert np.array_equal(rc, tc) and np.array_equal(rf, tf)


@settings(max_examples=40, deadline=None)
@given(
    exp=st.integers(0, 255),
    mant=st.one_of(st.integers(0, 0x7FFFFF), st.sampled_from([0, 1, 0x3504F3, 0x3504F4, 0x400000, 0x5A8279,
                                                               0x5A827A, 0x7FFFFF])),
    mode=st.sampled_from(MODES),
    sat=st.booleans(),
)
def test_engines_agree_fp32_boundaries(exp: int, mant: int, mode: str, sat: bool) -> None:
    b = np.array([exp << 23 | mant, 0x80000000 | exp << 23 | mant], dtype=np.uint32)
    rc, rf = tcvt.to_e8m0(b, src_type="FP32", rmode=mode, sat=sat, engine="reference")
    tc, tf = tcvt._fast32_tables(b, RoundingMode[mode], sat)
    fc, ff = tcvt._fast_rule(b, tcvt._LAYOUTS[TileDataType.FP32], RoundingMode[mode], sat)
    assert rc.tolist() == tc.tolist() == fc.tolist() and rf.tolist() == tf.tolist() == ff.tolist()


@pytest.mark.parametrize("name", ["FP16", "BF16"])
def test_engines_agree_every_16_bit_encoding(name: str) -> None:
    """Every FP16/BF16 encoding x every RMode code (NONE included) x Sat: the reference engine
    (the ASL steps array-at-a-time) and the fast engine (tables from a separate vectorized
    rule) give the same codes and flags; both are tied to the ASL by the vector rows above."""
    u = np.arange(1 << 16, dtype=np.uint16)
    for mode in ("NONE",) + MODES:
        for sat in (False, True):
            rc, rf = tcvt.to_e8m0(u, src_type=name, rmode=mode, sat=sat, engine="reference")
            fc, ff = tcvt.to_e8m0(u, src_type=name, rmode=mode, sat=sat, engine="fast")
            assert np.array_equal(rc, fc) and np.array_equal(rf, ff), (mode, sat)


@pytest.mark.parametrize("name", ["FP16", "BF16"])
def test_reference_one_element_at_a_time_agrees(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small calls run the same ASL steps on one Python int at a time: every third FP16/BF16
    encoding under RNE (every value class, exponent field and highest set bit of a subnormal),
    and every 61st (plus the range ends) under every RMode code x Sat, give the fast engine's
    codes and flags."""
    monkeypatch.setattr(tcvt, "_REFERENCE_ARRAY_MIN", 1 << 17)  # the whole input one element at a time
    every = np.arange(1 << 16, dtype=np.uint16)
    some = np.unique(np.concatenate([every[::61], [0x0001, 0x03FF, 0x0400, 0x007F, 0x0080, 0x7BFF, 0x7C00,
                                                   0x7F7F, 0x7F80, 0x7C01, 0x7E00, 0x7FC0, 0x3DA8, 0x3FB5]]))
    runs = [(every[::3], "RNE", False)] + [(some, mode, sat) for mode in ("NONE",) + MODES for sat in (False, True)]
    for u, mode, sat in runs:
        rc, rf = tcvt.to_e8m0(u, src_type=name, rmode=mode, sat=sat, engine="reference")
        fc, ff = tcvt.to_e8m0(u, src_type=name, rmode=mode, sat=sat, engine="fast")
        assert rc.dtype == rf.dtype == np.uint8 and rc.flags.c_contiguous
        assert np.array_equal(rc, fc) and np.array_equal(rf, ff), (mode, sat)


def test_reference_small_call_shapes() -> None:
    """The per-element path keeps the input's shape (0-d for an int, 2-D arrays) and dtypes."""
    c, f = tcvt.to_e8m0(0x3FB504F4, src_type="FP32", engine="reference")  # just above sqrt(2), the midpoint
    assert c.shape == f.shape == () and c.dtype == f.dtype == np.uint8 and (int(c), int(f)) == (128, 0x10)
    c, f = tcvt.to_e8m0(np.array([[0x3C00, 0x8000], [0x7C00, 0x0001]], np.uint16), src_type="FP16", sat=True,
                        engine="reference")
    assert c.tolist() == [[127, 0xFF], [0xFE, 103]] and f.tolist() == [[0, 0x01], [0x14, 0]]


def test_reference_highest_set_bit_every_position() -> None:
    """``ReferenceE8M0HighestSetBit`` step over every bit position of a 32-bit significand, with
    lower bits set or clear, on an array and on each int (expected: Python's int.bit_length)."""
    sig = [1 << p for p in range(32)] + [(1 << p) | ((1 << p) - 1) for p in range(32)] + [0x5A827A, 3, 0xC0]
    got = tcvt._highest_set_bit(np.array(sig, dtype=np.int64))
    assert got.tolist() == [s.bit_length() - 1 for s in sig]
    assert [tcvt._highest_set_bit(s) for s in sig] == [s.bit_length() - 1 for s in sig]


# --------------------------------------------------------------------------- API


def test_shapes_and_dtypes() -> None:
    c, f = tcvt.to_e8m0(0x3F800000, src_type="FP32")
    assert c.shape == () and f.shape == () and int(c) == 127 and int(f) == 0
    c, f = tcvt.to_e8m0([[0x3C00, 0x4000]], src_type="FP16", engine="reference")
    assert c.shape == (1, 2) and c.tolist() == [[127, 128]]
    c, f = tcvt.to_e8m0(np.array([0x3F80], dtype=np.int32), src_type=5, rmode=1)
    assert c.tolist() == [127]
    c, f = tcvt.to_e8m0(np.zeros((0, 3), np.uint32), src_type="FP32")
    assert c.shape == (0, 3)


def test_to_e8m0_values_dtypes_and_views() -> None:
    for dt in (np.float16, ml_dtypes.bfloat16, np.float32):
        v = np.array([1.0, 2.0, 0.5, 1.5, 0.75, -1.0, 0.0], dtype=dt)
        c, f = tcvt.to_e8m0_values(v, rmode="RTM")
        assert c.tolist() == [127, 128, 126, 127, 126, 255, 255]  # tile-bound-...-003 for 1.5/0.75 RTM
        assert f.tolist() == [0, 0, 0, 0x10, 0x10, 0x01, 0x01]
    e, _ = tcvt.to_e8m0_values(np.array([4.0, 0.25], np.float32), out="e8m0")
    assert e.dtype == ml_dtypes.float8_e8m0fnu
    assert e.astype(np.float32).tolist() == [4.0, 0.25]  # ml_dtypes decodes our codes
    assert tcvt.e8m0_scale(np.array([0, 127, 254, 255], np.uint8)).tolist()[:3] == [2.0**-127, 1.0, 2.0**127]
    assert np.isnan(tcvt.e8m0_scale(255))


def test_flag_summary() -> None:
    _, f = tcvt.to_e8m0(np.array([0x3C00, 0x3E00, 0x0000, 0x7C00, 0x3E00], np.uint16), src_type="FP16")
    assert tcvt.flag_summary(f) == {"NV": 1, "DZ": 0, "OF": 1, "UF": 0, "NX": 3}
    with pytest.raises(UsageError):
        tcvt.flag_summary([0x20])


# --------------------------------------------------------------------------- bad input


def test_bad_input_raises_before_any_result() -> None:
    with pytest.raises(UnsupportedConversionError, match=r"FP64.*D183.*HardwareTCVTE8M0SourceTypeSupported"):
        tcvt.to_e8m0(np.array([1, 2], np.uint64), src_type="FP64")
    with pytest.raises(UsageError, match="src_type"):
        tcvt.to_e8m0(1, src_type="FP8")
    with pytest.raises(UsageError, match=r"src_bits\[1\] = 0x10000"):
        tcvt.to_e8m0(np.array([1, 0x10000], np.uint32), src_type="FP16")
    with pytest.raises(UsageError, match=r"src_bits = 0x100000000"):
        tcvt.to_e8m0(1 << 32, src_type="FP32", engine="reference")
    with pytest.raises(UsageError):
        tcvt.to_e8m0(-1, src_type="FP32")
    with pytest.raises(UsageError):
        tcvt.to_e8m0(np.array([1.5], np.float32), src_type="FP32")
    with pytest.raises(UsageError, match="rmode"):
        tcvt.to_e8m0(1, src_type="FP32", rmode="RNX")
    with pytest.raises(UsageError, match="rmode"):
        tcvt.to_e8m0(1, src_type="FP32", rmode=8)
    with pytest.raises(UsageError, match="sat"):
        tcvt.to_e8m0(1, src_type="FP32", sat=2)
    with pytest.raises(UsageError, match="engine"):
        tcvt.to_e8m0(1, src_type="FP32", engine="slow")
    with pytest.raises(UnsupportedConversionError, match="float64"):
        tcvt.to_e8m0_values(np.array([1.0]))
    with pytest.raises(UnsupportedConversionError):
        tcvt.to_e8m0_values(np.array([1], np.int32))
    with pytest.raises(UsageError):
        tcvt.to_e8m0_values(np.array(["a"]))
    with pytest.raises(UsageError, match="out"):
        tcvt.to_e8m0_values(np.array([1.0], np.float32), out="f8")


def test_parsed_arguments_remembered_per_spelling() -> None:
    """src_type and rmode parses are remembered: a rejected spelling still raises every time,
    and RMode code 1 (RNE) does not make True (a boolean, rejected) valid."""
    for _ in range(2):
        with pytest.raises(UnsupportedConversionError, match="FP64"):
            tcvt.to_e8m0(1, src_type="FP64", engine="reference")
        assert int(tcvt.to_e8m0(0x3FC00000, src_type="FP32", rmode=1, engine="reference")[0]) == 128  # 1.5 > 2^0.5
        with pytest.raises(UsageError, match="rmode"):
            tcvt.to_e8m0(1, src_type="FP32", rmode=True, engine="reference")
    assert int(tcvt.to_e8m0(0x3FC0, src_type=np.array(5), engine="reference")[0]) == 128  # BF16 1.5; an unhashable 0-d code


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_scalar_input_gives_0d_arrays_in_both_engines(engine: str) -> None:
    # FP16 1.0 (0x3c00) is 2^0: E8M0 code 0x7f (bias 127, ADR-0085 D183), exact, no flag
    for codes, flags in (tcvt.to_e8m0(0x3c00, src_type="FP16", engine=engine),
                         tcvt.to_e8m0(np.uint16(0x3c00), src_type="FP16", engine=engine),
                         tcvt.to_e8m0_values(np.float16(1.0), engine=engine),
                         tcvt.to_e8m0_values(np.array(np.float16(1.0)), engine=engine)):
        assert type(codes) is np.ndarray and type(flags) is np.ndarray
        assert (codes.shape, codes.dtype, int(codes)) == ((), np.uint8, 0x7F)
        assert (flags.shape, flags.dtype, int(flags)) == ((), np.uint8, 0)
    codes, flags = tcvt.to_e8m0([0x3c00], src_type="FP16", engine=engine)
    assert codes.shape == flags.shape == (1,)
