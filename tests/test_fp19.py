"""Tests for ptonum.fp19.

Expected values come from the ASL vectors (``fp32_to_fp19.csv.gz``), the pto-spec
ASL tests ``tests/asl/arch/data-types/fp19/*.asl`` (one named test each), and
numpy's float32 decoding of the FP32 pattern that has FP19's sign, exponent and
fraction fields (FP19 is FP32's layout with 13 fewer fraction bits,
``asl/arch/data-types/fp19.asl``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Dict, Tuple

import numpy as np
import pytest

from ptonum import fp19
from ptonum.errors import PtonumError, UsageError
from ptonum.formats import ValueClass

ENGINES = ("fast", "reference")
ALL19 = np.arange(1 << 19, dtype=np.uint32)


def _numpy_value(codes: np.ndarray) -> np.ndarray:
    """Decode FP19 with numpy: place the fields in an FP32 pattern and view it."""
    c = codes.astype(np.uint32)
    pattern = ((c >> 18) << 31) | ((c & 0x3FFFF) << 13)
    with np.errstate(invalid="ignore"):
        return pattern.view(np.float32).astype(np.float64)


def _fp32_vectors(vectors: Any) -> Tuple[np.ndarray, np.ndarray]:
    rows = vectors("fp32_to_fp19")
    src = np.array([int(r["fp32_bits"], 16) for r in rows], np.uint32)
    want = np.array([int(r["expected_fp19"], 16) for r in rows], np.uint32)
    return src, want


@pytest.mark.parametrize("engine", ENGINES)
def test_fp32_to_fp19_vectors_every_row(vectors: Any, engine: str) -> None:
    src, want = _fp32_vectors(vectors)
    assert src.size == 16012
    got = fp19.from_fp32(src, engine=engine)
    assert got.dtype == np.uint32
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, f"{engine}: fp32 {int(src[bad[0]]):#010x} -> {int(got[bad[0]]):#07x}, want {int(want[bad[0]]):#07x}"


def test_from_float_matches_fp32_vectors(vectors: Any) -> None:
    # Each FP32 input is a float64 value exactly; from_float must round it as FP32ToFP19 does.
    src, want = _fp32_vectors(vectors)
    with np.errstate(invalid="ignore"):
        x = src.view(np.float32).astype(np.float64)
    assert np.array_equal(fp19.from_float(x), want)


@pytest.mark.parametrize("engine", ENGINES)
def test_asl_arch_bound_fp19_encoding_001(engine: str) -> None:
    """tests/asl/arch/data-types/fp19/arch-bound-fp19-encoding-001.asl"""
    one = fp19.from_fp32(0x3F800000, engine=engine)
    half = fp19.from_fp32(0x3F000000, engine=engine)
    assert int(one) == 0b0011111110000000000
    assert int(half) == 0b0011111100000000000
    assert fp19.finite_value(one) == 1 and fp19.finite_value(half) == Fraction(1, 2)
    assert bool(fp19.scale_legal(one, engine=engine))
    assert not bool(fp19.scale_legal(0, engine=engine))
    assert not bool(fp19.scale_legal(0b1011111110000000000, engine=engine))
    assert int(fp19.value_class(0b0111111110000000000, engine=engine)) == ValueClass.POSITIVE_INFINITY
    assert int(fp19.value_class(0b0111111111000000000, engine=engine)) == ValueClass.QUIET_NAN


@pytest.mark.parametrize("engine", ENGINES)
def test_asl_arch_bound_fp19_parameter_domain_002(engine: str) -> None:
    """tests/asl/arch/data-types/fp19/arch-bound-fp19-parameter-domain-002.asl"""
    cases = {  # name: (encoding, scale legal, activation legal)
        "positive_zero": (0x0, False, True),
        "minimum_positive_subnormal": (0x1, False, False),
        "minimum_positive_normal": (0x400, True, True),
        "maximum_positive_normal": (0x3FBFF, True, True),
        "negative_zero": (0x40000, False, False),
        "minimum_negative_normal": (0x40400, False, False),
        "positive_infinity": (0x3FC00, False, False),
        "quiet_nan": (0x3FE00, False, False),
        "signaling_nan": (0x3FC01, False, False),
    }
    codes = np.array([c[0] for c in cases.values()], np.uint32)
    assert fp19.scale_legal(codes, engine=engine).tolist() == [c[1] for c in cases.values()]
    assert fp19.activation_legal(codes, engine=engine).tolist() == [c[2] for c in cases.values()]


def test_asl_arch_static_fp19_contract_001() -> None:
    """tests/asl/arch/data-types/fp19/arch-static-fp19-contract-001.asl asserts only that the unit
    compiles; its Python counterpart is that the module's public names resolve and the unit stands on
    its own: the FP32-layout encoding of arch-bound-fp19-encoding-001.asl (1.0 -> 0b0011111110000000000)."""
    for name in fp19.__all__:
        assert hasattr(fp19, name), name
    assert int(fp19.from_fp32(0x3F800000)) == 0b0011111110000000000
    assert fp19.to_float64(0b0011111110000000000) == 1.0


@pytest.mark.parametrize("engine", ENGINES)
def test_every_encoding_classifies_like_numpy(engine: str) -> None:
    cls = fp19.value_class(ALL19, engine=engine)
    lib = _numpy_value(ALL19)
    neg = np.signbit(lib)
    tiny = 2.0 ** -126
    expect = np.select(
        [np.isnan(lib), np.isinf(lib), lib == 0, np.abs(np.nan_to_num(lib)) < tiny],
        [np.uint8(0), np.where(neg, ValueClass.NEGATIVE_INFINITY, ValueClass.POSITIVE_INFINITY),
         np.where(neg, ValueClass.NEGATIVE_ZERO, ValueClass.POSITIVE_ZERO),
         np.where(neg, ValueClass.NEGATIVE_SUBNORMAL, ValueClass.POSITIVE_SUBNORMAL)],
        np.where(neg, ValueClass.NEGATIVE_NORMAL, ValueClass.POSITIVE_NORMAL),
    ).astype(np.uint8)
    nan = np.isnan(lib)
    assert np.array_equal(cls[~nan], expect[~nan])
    # NaNs: quiet exactly when fraction bit 9 is set (FP19ValueClass).
    quiet = (ALL19 & 0x200) != 0
    assert np.array_equal(cls[nan], np.where(quiet[nan], ValueClass.QUIET_NAN, ValueClass.SIGNALING_NAN))
    scale = fp19.scale_legal(ALL19, engine=engine)
    act = fp19.activation_legal(ALL19, engine=engine)
    assert np.array_equal(scale, (lib >= tiny) & np.isfinite(lib))
    assert np.array_equal(act, scale | (ALL19 == 0))


def test_to_float64_is_exact_for_every_encoding() -> None:
    got = fp19.to_float64(ALL19)
    lib = _numpy_value(ALL19)
    assert np.array_equal(np.isnan(got), np.isnan(lib))
    ok = ~np.isnan(lib)
    assert np.array_equal(got[ok].view(np.uint64), lib[ok].view(np.uint64))  # -0.0 included


def test_finite_value() -> None:
    rng = np.random.default_rng(19)
    for code in [0, 1, 0x3FF, 0x400, 0x3FBFF, 0x40001, 0x7FBFF, *rng.integers(0, 1 << 19, 300).tolist()]:
        lib = float(_numpy_value(np.array([code]))[0])
        if np.isfinite(lib):
            assert fp19.finite_value(code) == Fraction(lib)
    assert fp19.finite_value(1) == Fraction(1, 2 ** 136)
    for special in (0x3FC00, 0x7FC00, 0x3FE00):
        with pytest.raises(UsageError, match=r"bits19 = 0x[0-9a-f]+: infinity or NaN"):
            fp19.finite_value(special)


def test_to_fp32_bits_widens_exactly() -> None:
    wide = fp19.to_fp32_bits(ALL19)
    assert wide.dtype == np.uint32
    with np.errstate(invalid="ignore"):
        as_f64 = wide.view(np.float32).astype(np.float64)
    lib = _numpy_value(ALL19)
    ok = ~np.isnan(lib)
    assert np.array_equal(as_f64[ok].view(np.uint64), lib[ok].view(np.uint64))
    # Round trip through FP32ToFP19 (the vectors' function) gives every non-NaN encoding back.
    back = fp19.from_fp32(wide)
    assert np.array_equal(back[ok], ALL19[ok])
    assert (back[~ok] == fp19.CANONICAL_NAN).all()


def test_from_float_rounds_once_from_the_exact_input() -> None:
    # 1 + 2**-11 + 2**-40 is above the FP19 midpoint 1 + 2**-11, so it rounds up to 1 + 2**-10.
    # Rounding to float32 first would land on the tie and go to even (1.0).
    x = 1 + 2.0 ** -11 + 2.0 ** -40
    assert int(fp19.from_float(x)) == 0x1FC01
    assert int(fp19.from_float(1 + 2.0 ** -11)) == 0x1FC00  # tie to even
    assert int(fp19.from_float(1 + 3 * 2.0 ** -11)) == 0x1FC02  # tie to even (up)
    assert int(fp19.from_float(2.0 ** -137)) == 0  # half the smallest subnormal: tie to even 0
    assert int(fp19.from_float(3 * 2.0 ** -137)) == 2
    assert int(fp19.from_float(-0.0)) == 0x40000
    assert int(fp19.from_float(1e300)) == 0x3FC00 and int(fp19.from_float(-np.inf)) == 0x7FC00
    assert int(fp19.from_float(float("nan"))) == fp19.CANONICAL_NAN
    assert int(fp19.from_float(2.0 ** 128 * (1 - 2.0 ** -12))) == 0x3FC00  # rounds up to infinity
    assert int(fp19.from_float(2.0 ** 128 * (1 - 2.0 ** -11) )) == 0x3FBFF  # max finite
    assert fp19.from_float([1.0, 0.5, 3]).tolist() == [0x1FC00, 0x1F800, 0x20200]
    assert fp19.from_float(np.float16(0.25)).shape == ()


def test_from_float_exact_mode() -> None:
    assert fp19.from_float([1.0, 2.0 ** -136, np.inf], rounding="exact").tolist() == [0x1FC00, 1, 0x3FC00]
    with pytest.raises(UsageError, match=r"x\[1\] = 0\.1: not exactly representable in FP19"):
        fp19.from_float([1.0, 0.1], rounding="exact")
    with pytest.raises(UsageError, match=r"x = 1e\+300: not exactly representable"):
        fp19.from_float(1e300, rounding="exact")
    with pytest.raises(UsageError, match=r"not exactly representable"):
        fp19.from_float(2.0 ** -140, rounding="exact")


BAD: Dict[str, Tuple[Any, Dict[str, Any], str]] = {
    "value_class wider than 19 bits": (fp19.value_class, dict(bits19=0x80000), r"bits19 = 0x80000: does not fit in 19 bits"),
    "value_class float dtype": (fp19.value_class, dict(bits19=np.array([1.5])), r"bits19: .*dtype float64"),
    "value_class bad engine": (fp19.value_class, dict(bits19=1, engine="gpu"), r"engine = 'gpu'"),
    "scale_legal array element": (fp19.scale_legal, dict(bits19=[1, 2, 1 << 19]), r"bits19\[2\] = 0x80000"),
    "activation_legal negative": (fp19.activation_legal, dict(bits19=np.array([-1])), r"bits19\[0\] = -1: raw encodings are unsigned"),
    "to_float64 wide": (fp19.to_float64, dict(bits19=1 << 20), r"bits19 = 0x100000"),
    "to_fp32_bits wide": (fp19.to_fp32_bits, dict(bits19=1 << 19), r"bits19 = 0x80000"),
    "finite_value array": (fp19.finite_value, dict(bits19=[1, 2]), r"bits19: finite_value takes one encoding"),
    "from_fp32 wider than 32 bits": (fp19.from_fp32, dict(bits32=1 << 32), r"bits32 = 0x100000000: does not fit in 32 bits"),
    "from_fp32 float dtype": (fp19.from_fp32, dict(bits32=np.float32(1.0)), r"bits32: .*float32"),
    "from_float rounding": (fp19.from_float, dict(x=1.0, rounding="rtz"), r"rounding = 'rtz'"),
    "from_float string": (fp19.from_float, dict(x="1.0"), r"x: expected real numbers"),
    "from_float bool": (fp19.from_float, dict(x=True), r"x = True"),
    "from_float huge int": (fp19.from_float, dict(x=[1, 2 ** 60 + 1]), r"x\[1\] = 1152921504606846977"),
}


@pytest.mark.parametrize("label", list(BAD))
def test_bad_input_raises_usage_error(label: str) -> None:
    func, kwargs, message = BAD[label]
    engines = ENGINES if func in (fp19.value_class, fp19.scale_legal, fp19.activation_legal, fp19.from_fp32) \
        and "engine" not in kwargs else (None,)
    for engine in engines:
        call = dict(kwargs, engine=engine) if engine else kwargs
        with pytest.raises(UsageError, match=message) as info:
            func(**call)
        assert isinstance(info.value, PtonumError)


@pytest.mark.parametrize("engine", ENGINES)
def test_shapes(engine: str) -> None:
    assert fp19.value_class(0x400, engine=engine).shape == ()
    assert fp19.from_fp32(np.zeros((2, 3), np.uint32), engine=engine).shape == (2, 3)
    assert fp19.scale_legal(np.ones((4, 1), np.int64), engine=engine).dtype == np.bool_
    assert fp19.to_float64(np.ones((2, 2), np.uint32)).shape == (2, 2)
