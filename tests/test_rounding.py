"""Exact rounding to integers (ptonum.rounding).

Oracles: softfloatpy ``f64_round_to_int`` (IEEE roundToIntegral for RNE, RTZ,
RTM, RTP and RNA = near-max-mag), the ASL test
``tests/asl/arch/profile/matrix-quantization/arch-exec-matrix-intermediate-002.asl``
(tie table), and for RTO/RHB their ADR-0047 definitions written independently
with Python's ``math.floor`` on exact Fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import softfloatpy as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from ptonum.errors import UsageError
from ptonum.rounding import (
    RoundingMode,
    magnitude_rounding_mode,
    round_magnitude,
    round_to_integer,
    round_to_integer_array,
)

R = RoundingMode
IEEE = {R.RNE: sf.RoundingMode.NEAR_EVEN, R.RTZ: sf.RoundingMode.MIN_MAG, R.RTM: sf.RoundingMode.MIN,
        R.RTP: sf.RoundingMode.MAX, R.RNA: sf.RoundingMode.NEAR_MAX_MAG}
ALL = [R.RNE, R.RTZ, R.RTM, R.RTP, R.RNA, R.RTO, R.RHB]


def _softfloat_int(x: float, mode: RoundingMode) -> int:
    r = sf.f64_round_to_int(sf.Float64.from_float(x), IEEE[mode], False).to_float()
    return int(r)


def _rto(v: Fraction) -> int:
    """ADR-0047 RTO: exact -> itself; else the neighbour whose last bit is one."""
    lo = math.floor(v)
    if lo == v:
        return lo
    return lo if lo % 2 else lo + 1


def _rhb(v: Fraction) -> int:
    """ADR-0047 RHB: nearest, exact halfway to the numerically greater integer."""
    return math.floor(v + Fraction(1, 2))


def test_intermediate_002_tie_table() -> None:
    """arch-exec-matrix-intermediate-002.asl: +-0.5 under RNE RNA RTP RTM RTZ."""
    expected = {R.RNE: (0, 0), R.RNA: (1, -1), R.RTP: (1, 0), R.RTM: (0, -1), R.RTZ: (0, 0)}
    for mode, (pos, neg) in expected.items():
        assert round_to_integer(Fraction(1, 2), mode) == pos
        assert round_to_integer(Fraction(-1, 2), mode) == neg
        assert round_to_integer_array(np.array([0.5, -0.5]), mode).tolist() == [pos, neg]


_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2 ** 20), 2 ** 20).map(lambda k: k / 4),  # many exact ties
    st.integers(-(2 ** 60), 2 ** 60).map(lambda k: k / 2.0 ** 7),
    st.sampled_from([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.0 ** 52 + 1, -(2.0 ** 52) - 1, 2.0 ** 52 - 0.5,
                     -(2.0 ** 52) + 0.5, 4503599627370495.5, 0.49999999999999994, 5e-324, -5e-324,
                     1.7976931348623157e308]),
)


@settings(max_examples=300, deadline=None)
@given(x=_FLOATS)
def test_ieee_modes_match_softfloat(x: float) -> None:
    for mode in IEEE:
        expected = _softfloat_int(x, mode)
        assert round_to_integer(Fraction(x), mode) == expected
        got = round_to_integer_array(np.array([x]), mode)[0]
        assert got == expected and got.is_integer()


@settings(max_examples=300, deadline=None)
@given(x=_FLOATS)
def test_rto_rhb_definitions(x: float) -> None:
    v = Fraction(x)
    assert round_to_integer(v, R.RTO) == _rto(v)
    assert round_to_integer(v, R.RHB) == _rhb(v)
    assert round_to_integer_array(np.array([x]), R.RTO)[0] == _rto(v)
    assert round_to_integer_array(np.array([x]), R.RHB)[0] == _rhb(v)


@settings(max_examples=200, deadline=None)
@given(num=st.integers(-(10 ** 30), 10 ** 30), den=st.integers(1, 10 ** 12))
def test_exact_fractions(num: int, den: int) -> None:
    """Rationals that no float can hold: the definitions directly."""
    v = Fraction(num, den)
    lo = math.floor(v)
    half = Fraction(1, 2)
    f = v - lo
    assert round_to_integer(v, R.RTM) == lo
    assert round_to_integer(v, R.RTP) == math.ceil(v)
    assert round_to_integer(v, R.RTZ) == math.trunc(v)
    assert round_to_integer(v, R.RNE) == (lo if f < half else lo + 1 if f > half else lo + (lo % 2))
    assert round_to_integer(v, R.RNA) == (lo if f < half else lo + 1 if f > half else (lo if v < 0 else lo + 1))
    assert round_to_integer(v, R.RTO) == _rto(v)
    assert round_to_integer(v, R.RHB) == _rhb(v)


@settings(max_examples=200, deadline=None)
@given(x=_FLOATS)
def test_round_magnitude_equals_signed_rounding(x: float) -> None:
    """MatrixRoundMagnitude on |v| with the sign equals rounding the signed value."""
    v = Fraction(x)
    for mode in ALL:
        signed = round_to_integer(v, mode)
        assert round_magnitude(abs(v), mode, v < 0) == abs(signed)


def test_round_magnitude_negative_rhb_and_swaps() -> None:
    # negative RHB halfway: the lower magnitude (numerically greater)
    assert round_magnitude(Fraction(5, 2), R.RHB, True) == 2
    assert round_magnitude(Fraction(5, 2), R.RHB, False) == 3
    assert round_magnitude(Fraction(21, 8), R.RHB, True) == 3
    assert magnitude_rounding_mode(R.RTP, True) is R.RTM
    assert magnitude_rounding_mode(R.RTM, True) is R.RTP
    assert magnitude_rounding_mode(R.RTP, False) is R.RTP
    assert round_magnitude(Fraction(9, 4), R.RTP, True) == 2
    assert round_magnitude(Fraction(9, 4), R.RTM, True) == 3


def test_array_shapes_and_large_values() -> None:
    x = np.array([[2.0 ** 60 + 2 ** 8, -(2.0 ** 53)], [1e308, -2.5]])
    for mode in ALL:
        r = round_to_integer_array(x, mode)
        assert r.shape == (2, 2) and r.dtype == np.float64
        assert r[0, 0] == x[0, 0] and r[0, 1] == x[0, 1] and r[1, 0] == 1e308
        want = _softfloat_int(-2.5, mode) if mode in IEEE else (_rto if mode is R.RTO else _rhb)(Fraction(-5, 2))
        assert r[1, 1] == want
    assert round_to_integer_array(np.float64(2.5), R.RNE).shape == ()


def test_none_and_bad_input_rejected() -> None:
    for fn in (lambda m: round_to_integer(1, m), lambda m: round_magnitude(1, m, False),
               lambda m: round_to_integer_array(np.array([1.0]), m), lambda m: magnitude_rounding_mode(m, True)):
        with pytest.raises(UsageError, match="NONE"):
            fn(R.NONE)
        with pytest.raises(UsageError, match="NONE"):
            fn(0)
        with pytest.raises(UsageError, match="rmode"):
            fn("BOGUS")
    with pytest.raises(UsageError, match="finite"):
        round_to_integer(float("nan"), R.RNE)
    with pytest.raises(UsageError, match="boolean"):
        round_to_integer(True, R.RNE)
    with pytest.raises(UsageError, match="exact real"):
        round_to_integer("1", R.RNE)  # type: ignore[arg-type]
    # names and codes are accepted
    assert round_to_integer(Fraction(5, 2), "rhb") == 3
    assert round_to_integer(Fraction(5, 2), 6) == 3
