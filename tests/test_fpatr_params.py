"""Tests for ptonum.fpatr.params: parameter words, their legality and the friendly constructors.

Expected values come from the ASL vectors ``quant_param_legal`` /
``relu_param_legal`` / ``fp32_to_fp19`` and from the bit layouts of
``BundleFPATRQuantParameterWordLegal`` / ``MatrixQuantParameter``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_vectors
from ptonum.errors import PtonumError, TileLegalityError, UsageError
from ptonum.fpatr.attributes import MODE_TABLE
from ptonum.fpatr.params import (
    check_quant_param,
    check_relu_param,
    parse_quant_param,
    parse_relu_param,
    quant_offset,
    quant_param,
    quant_param_legal,
    quant_param_word,
    relu_param,
    relu_param_legal,
    relu_param_word,
    shift_amount,
    shift_param_word,
)

ONE = 0x1FC00  # FP19 of 1.0 (arch-bound-fp19-encoding-001.asl)
HALF = 0x1F800  # FP19 of 0.5 (same test)


def test_quant_param_legal_vectors() -> None:
    rows = load_vectors("quant_param_legal")
    modes = np.array([int(r["pre_quant_mode"]) for r in rows])
    words = np.array([int(r["word"], 16) for r in rows], dtype=np.uint64)
    expected = np.array([r["legal"] == "1" for r in rows])
    got = quant_param_legal(modes, words)
    assert got.dtype == bool and got.shape == expected.shape
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, [rows[i] for i in bad[:5]]
    # per-row check agrees, and check_quant_param raises exactly on illegal rows (every row, about 2 s)
    for r, ok in zip(rows, expected):
        mode = int(r["pre_quant_mode"])
        if mode not in MODE_TABLE:
            continue
        if ok:
            check_quant_param(mode, int(r["word"], 16))
        else:
            with pytest.raises(TileLegalityError):
                check_quant_param(mode, int(r["word"], 16))


def test_check_on_word_arrays_agrees_with_vectors() -> None:
    """The whole-array check (what preflight runs on a 1 x N tile): every mode's legal vector words
    together pass; each illegal word put among them is found and named by its column."""
    rows = load_vectors("quant_param_legal")
    by_mode: dict = {}
    for r in rows:
        by_mode.setdefault(int(r["pre_quant_mode"]), ([], []))[r["legal"] != "1"].append(int(r["word"], 16))
    for mode, (good, bad) in by_mode.items():
        if mode not in MODE_TABLE:
            continue
        if good:
            check_quant_param(mode, np.array([good], dtype=np.uint64), "quant_tile")
        for w in bad:
            tile = np.array([(good or [w]) + [w]], dtype=np.uint64)
            with pytest.raises(TileLegalityError, match=rf"quant_tile\[0, {tile.shape[1] - 1 if good else 0}\]"):
                check_quant_param(mode, tile, "quant_tile")
    relu = load_vectors("relu_param_legal")
    good_r = [int(r["word"], 16) for r in relu if r["legal"] == "1"]
    check_relu_param(np.array([good_r], dtype=np.uint64), "relu_tile")
    for r in relu:
        if r["legal"] != "1":
            tile = np.array([good_r + [int(r["word"], 16)]], dtype=np.uint64)
            with pytest.raises(TileLegalityError, match=rf"relu_tile\[0, {len(good_r)}\]"):
                check_relu_param(tile, "relu_tile")


def test_relu_param_legal_vectors() -> None:
    rows = load_vectors("relu_param_legal")
    words = np.array([int(r["word"], 16) for r in rows], dtype=np.uint64)
    expected = np.array([r["legal"] == "1" for r in rows])
    assert np.array_equal(relu_param_legal(words), expected)
    for r, ok in zip(rows, expected):
        if ok:
            check_relu_param(int(r["word"], 16))
        else:
            with pytest.raises(TileLegalityError):
                check_relu_param(int(r["word"], 16))


def test_legal_parameter_words_round_trip_through_parse_and_build() -> None:
    rows = [r for r in load_vectors("quant_param_legal") if r["legal"] == "1"]
    for r in rows[:2000]:
        mode, word = int(r["pre_quant_mode"]), int(r["word"], 16)
        f = parse_quant_param(word, mode=mode)
        assert f.legal
        if MODE_TABLE[mode].is_shift:
            assert shift_param_word(f.shift_code) == word
        else:
            assert quant_param_word(f.scale_fp19, f.offset, mode=mode) == word


def test_modes_without_parameter_are_never_legal() -> None:
    for mode in (0, 1, 16):
        assert not quant_param_legal(mode, 0) and not quant_param_legal(mode, ONE << 13)
        with pytest.raises(TileLegalityError, match="takes no quantization parameter"):
            check_quant_param(mode, ONE << 13)
    assert not quant_param_legal(np.array([6, 63]), ONE << 13).any()  # reserved codes


# ------------------------------------------------- one rejection test per rule


@pytest.mark.parametrize("mode,word,rule", [
    (13, 1, r"bits \[31:0\] must be zero for shift mode"),
    (12, 1 << 36, r"bits \[63:36\] must be zero for shift mode"),
    (3, (ONE << 13) | 1, r"bits \[12:0\] must be zero"),
    (3, 0, r"FP19 scale \[31:13\] = 0x00000 is positive zero; scales must be positive normal .*FP19ScaleLegal"),
    (3, 1 << 13, r"is positive subnormal; scales must be positive normal \(ADR-0085 D180, FP19ScaleLegal\)"),
    (5, (ONE | 1 << 18) << 13, r"is negative normal"),
    (27, 0x3FC00 << 13, r"is positive infinity"),
    (27, 0x3FF00 << 13, r"is a quiet NaN"),
    (27, 0x3FC01 << 13, r"is a signaling NaN"),
    (24, (ONE << 13) | (1 << 36), r"bits \[36:32\] must be zero"),
    (17, (ONE << 13) | (1 << 42), r"bits \[63:42\] must be zero .*S5 offset \[41:37\]"),
    (2, (ONE << 13) | (1 << 46), r"bits \[63:46\] must be zero .*S9 offset \[45:37\]"),
    (20, (ONE << 13) | (1 << 54), r"bits \[63:54\] must be zero .*S17 offset \[53:37\]"),
    (4, (ONE << 13) | (1 << 37), r"bits \[63:32\] must be zero .*has no offset"),
])
def test_check_quant_param_rules(mode: int, word: int, rule: str) -> None:
    assert not quant_param_legal(mode, word)
    with pytest.raises(TileLegalityError, match=rule):
        check_quant_param(mode, word)


def test_check_quant_param_names_first_failing_element() -> None:
    tile = np.full((1, 40), ONE << 13, dtype=np.uint64)
    tile[0, 17] = 1 << 13
    tile[0, 30] = 0
    with pytest.raises(TileLegalityError) as info:
        check_quant_param("VREQ8", tile, "quant_tile")
    msg = str(info.value)
    assert msg.startswith("quant_tile[0, 17] = 0x0000000000002000: FP19 scale")
    assert "subnormal" in msg and "D180" in msg
    check_quant_param("VREQ8", np.full((1, 4), ONE << 13, dtype=np.uint64))


@pytest.mark.parametrize("word,rule", [
    (1 << 19, r"bits \[63:19\] must be zero"),
    (1 << 63, r"bits \[63:19\] must be zero"),
    (0x40000, r"is negative zero; activation parameters must be \+0 or positive normal"),
    (0x00001, r"is positive subnormal"),
    (0x3FC00, r"is positive infinity"),
    (0x3FF00, r"quiet NaN"),
    (HALF | 1 << 18, r"negative normal"),
])
def test_check_relu_param_rules(word: int, rule: str) -> None:
    assert not relu_param_legal(word)
    with pytest.raises(TileLegalityError, match=rule):
        check_relu_param(np.array([0, HALF, word], dtype=np.uint64), "prelu_tile")
    with pytest.raises(TileLegalityError, match=r"prelu_tile\[2\]"):
        check_relu_param(np.array([0, HALF, word], dtype=np.uint64), "prelu_tile")


def test_relu_zero_and_normal_are_legal() -> None:
    assert relu_param_legal(np.array([0, HALF, ONE, 0x3FBFF], dtype=np.uint64)).all()


def test_wider_than_64_bits_is_usage_error() -> None:
    with pytest.raises(UsageError):
        quant_param_legal(3, 1 << 64)
    with pytest.raises(UsageError):
        check_relu_param([1 << 64])
    with pytest.raises(UsageError):
        quant_param_legal(64, 0)


# ------------------------------------------------------------------ builders


def test_quant_param_word_layout() -> None:
    # MatrixQuantParameter: FP19 at [31:13], S5/S9/S17 at [41:37]/[45:37]/[53:37]
    assert quant_param_word(ONE, 0, mode="QF322F32_PRE") == ONE << 13
    assert quant_param_word(ONE, -1, mode="REQ8") == (ONE << 13) | (0x1FF << 37)
    assert quant_param_word(ONE, -16, mode="REQ4") == (ONE << 13) | (0x10 << 37)
    assert quant_param_word(ONE, 65535, mode="DEQS16") == (ONE << 13) | (0xFFFF << 37)
    arr = quant_param_word(np.array([ONE, HALF]), np.array([1, -2]), mode="VREQ8")
    assert arr.dtype == np.uint64 and list(arr) == [(ONE << 13) | (1 << 37), (HALF << 13) | (0x1FE << 37)]
    assert quant_offset(arr, 9).tolist() == [1, -2]


@pytest.mark.parametrize("kwargs", [
    dict(scale_fp19=ONE, offset=256, mode="REQ8"),
    dict(scale_fp19=ONE, offset=-257, mode="REQ8"),
    dict(scale_fp19=ONE, offset=16, mode="REQ4"),
    dict(scale_fp19=ONE, offset=-65537, mode="DEQS16"),
    dict(scale_fp19=ONE, offset=1, mode="DEQF16"),
    dict(scale_fp19=1 << 19, offset=0, mode="DEQF16"),
    dict(scale_fp19=ONE, offset=0, mode="F322F16"),
    dict(scale_fp19=ONE, offset=0, mode="SHIFTS322S16"),
])
def test_quant_param_word_refusals(kwargs: dict) -> None:
    with pytest.raises(UsageError):
        quant_param_word(**kwargs)


def test_shift_param_word() -> None:
    assert shift_param_word(0) == 0
    assert shift_param_word(15) == 15 << 32
    assert shift_param_word(shift=16) == 15 << 32
    assert shift_param_word(shift=1) == 0
    assert int(shift_amount(shift_param_word(7))) == 8
    for bad in (dict(code=16), dict(code=-1), dict(shift=0), dict(shift=17), dict(), dict(code=1, shift=2)):
        with pytest.raises(UsageError):
            shift_param_word(**bad)  # type: ignore[arg-type]
    assert quant_param_legal(13, shift_param_word(15))


def test_relu_param_word() -> None:
    assert relu_param_word(HALF) == HALF
    assert parse_relu_param(HALF).alpha == 0.5
    with pytest.raises(UsageError):
        relu_param_word(1 << 19)


# ------------------------------------------------------- friendly constructors


def test_quant_param_exact_scales() -> None:
    w = quant_param(1.0, mode="QF322F16_PRE")
    assert int(w) == ONE << 13 and w.fp19 == ONE and w.exact and w.value == 1.0
    w = quant_param(0.5, -3, mode="REQ8")
    assert int(w) == (HALF << 13) | ((-3 & 0x1FF) << 37)
    assert w.offset == -3 and quant_param_legal("REQ8", w)
    assert quant_param(16.0, mode=5).fp19 == 0x20C00  # FP19 16.0
    assert quant_param(2.0 ** -126, mode=5).fp19 == 0x00400  # smallest normal


def test_quant_param_rne_matches_fp32_to_fp19_vectors() -> None:
    rows = load_vectors("fp32_to_fp19")
    checked = 0
    for r in rows[::7]:
        b32 = int(r["fp32_bits"], 16)
        expected = int(r["expected_fp19"], 16)
        exp19 = (expected >> 10) & 0xFF
        if b32 >> 31 or exp19 in (0, 0xFF):
            continue  # only results that are legal scales
        x = np.array(b32, dtype=np.uint32).view(np.float32)[()]
        w = quant_param(x, mode="QF322F32_PRE", rounding="rne")
        assert w.fp19 == expected and int(w) == expected << 13
        assert "FP32ToFP19" in w.how
        checked += 1
    assert checked > 500


@pytest.mark.parametrize("scale,rounding,match", [
    (0.1, "exact", "not exactly representable in FP19.*rounding='rne'"),
    (0.0, "exact", "positive zero; scales must be positive normal"),
    (-1.0, "exact", "negative normal"),
    (2.0 ** -130, "exact", "positive subnormal"),
    (2.0 ** -130, "rne", "positive subnormal"),
    (1e300, "rne", "positive infinity"),
    (float("inf"), "exact", "positive infinity"),
    (float("nan"), "rne", "finite"),
    (1.0, "truncate", "rounding"),
    ("1.o", "exact", "not a decimal number"),
    ([1.0], "exact", "real number"),
])
def test_quant_param_refusals(scale: object, rounding: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        quant_param(scale, mode="DEQF16", rounding=rounding)  # type: ignore[arg-type]


def test_quant_param_offset_and_mode_refusals() -> None:
    with pytest.raises(UsageError, match="S9 range -256..255"):
        quant_param(1.0, 300, mode="REQ8")
    with pytest.raises(UsageError, match="S5 range"):
        quant_param(1.0, -17, mode="VREQ4")
    with pytest.raises(UsageError, match="no offset"):
        quant_param(1.0, 1, mode="DEQF16")
    with pytest.raises(UsageError, match="shift_param_word"):
        quant_param(1.0, mode="VSHIFTS322S16")
    with pytest.raises(UsageError, match="no quantization parameter"):
        quant_param(1.0, mode="F322BF16")
    with pytest.raises(UsageError):
        quant_param(1.0, 1.5, mode="REQ8")  # type: ignore[arg-type]


@pytest.mark.parametrize("offset", [2**64 - 1, np.uint64(2**64 - 1), 2**63, -2**63 - 1, 10**30, -10**30])
def test_quant_param_offset_beyond_64_bits_is_refused_not_wrapped(offset: int) -> None:
    # 2**64 - 1 once became uint64, was cast to int64 (-1) and passed the S9 check: a silent wrong word
    with pytest.raises(UsageError, match=f"offset = {int(offset)}: REQ8 has S9 range -256..255"):
        quant_param(0.5, offset, mode="REQ8")
    with pytest.raises(UsageError, match=f"offset\\[1\\] = {int(offset)}: VREQ8 has S9 range"):
        quant_param_word(0x1F800, np.array([0, offset], dtype=np.asarray(offset).dtype), mode="VREQ8")
    with pytest.raises(UsageError, match="expected signed integers"):
        quant_param_word(0x1F800, np.array([0, "x"], dtype=object), mode="VREQ8")


def test_quant_param_rne_inexact_is_reported() -> None:
    w = quant_param(0.1, mode="DEQF16", rounding="rne")
    assert not w.exact and w.fp19 == 0x1EE66 and w.value == 0.0999755859375
    assert quant_param_legal("DEQF16", w)


def test_relu_param_friendly() -> None:
    w = relu_param(0.5)
    assert int(w) == HALF and w.exact
    assert int(relu_param(0.0)) == 0
    for bad in (-0.0, -0.5, 2.0 ** -140, float("inf")):
        with pytest.raises(UsageError):
            relu_param(bad)
    with pytest.raises(UsageError, match="not exactly representable"):
        relu_param(0.3)
    assert relu_param_legal(relu_param(0.3, rounding="rne"))


# ------------------------------------------------------------------ hypothesis


# Uniform 64-bit words are almost never legal; mix in words laid out like MatrixQuantParameter /
# MatrixShiftParameter (any FP19 at [31:13], any offset field at [53:37], any shift code at [36:32]).
_QUANT_WORDS = st.one_of(
    st.integers(0, (1 << 64) - 1),
    st.builds(lambda s19, off: (s19 << 13) | (off << 37), st.integers(0, (1 << 19) - 1), st.integers(0, (1 << 17) - 1)),
    st.builds(lambda s19, off: (s19 << 13) | (off << 37), st.integers(0x400, 0x3FBFF), st.integers(0, 0x1FF)),
    st.integers(0, 31).map(lambda c: c << 32),
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 63), _QUANT_WORDS)
def test_garbage_quant_words_give_bool_or_ptonum_error(mode: int, word: int) -> None:
    legal = bool(quant_param_legal(mode, word))
    try:
        check_quant_param(mode, word)
        assert legal
    except PtonumError:
        assert not legal
    try:
        parse_quant_param(word, mode=mode)
    except PtonumError:
        assert mode not in MODE_TABLE


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << 64) - 1))
def test_garbage_relu_words_give_bool_or_ptonum_error(word: int) -> None:
    legal = bool(relu_param_legal(word))
    try:
        check_relu_param(word)
        assert legal
    except TileLegalityError:
        assert not legal
    assert parse_relu_param(word).legal == legal


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(-70000, 70000),
       st.sampled_from(["REQ8", "REQ4", "DEQS16", "DEQF16", "QF322FP8_PRE"]),
       st.sampled_from(["exact", "rne"]))
def test_friendly_constructor_legal_or_usage_error(scale: float, offset: int, mode: str, rounding: str) -> None:
    try:
        w = quant_param(scale, offset, mode=mode, rounding=rounding)
    except UsageError:
        return
    assert quant_param_legal(mode, w)
    f = parse_quant_param(w, mode=mode)
    assert f.scale == w.value and f.offset == offset


def test_quant_param_from_text_rounds_the_decimal_once() -> None:
    """Issue 10 item 14: a decimal given as text goes to FP32 once (nearest even) and then FP32ToFP19.

    FP32 0x3f801000 = 1 + 2**-11 lies exactly halfway between FP19 1.0 (0x1fc00, even) and 1 + 2**-10
    (0x1fc01).  The decimal below is just above the FP32 midpoint of 0x3f801000 and 0x3f801001; read
    once it is FP32 0x3f801001 (above the FP19 tie: up to 0x1fc01); read through a binary64 float it
    becomes the FP32 tie itself, which goes to the even 0x3f801000 and then down to FP19 0x1fc00."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 100
        text = str(Decimal(1) + Decimal(2) ** -11 + Decimal(2) ** -24 + Decimal("1e-40"))
    w = quant_param(text, mode="DEQF16", rounding="rne")
    assert w.fp19 == 0x1FC01 and int(w) == 0x1FC01 << 13
    assert quant_param(float(text), mode="DEQF16", rounding="rne").fp19 == 0x1FC00  # the double rounding
    assert not w.exact and "rounded once from the decimal" in w.how
    exact = quant_param("0.0078125", 3, mode="REQ8")
    assert int(exact) == (0x1E000 << 13) | (3 << 37) and exact.exact
    with pytest.raises(UsageError, match=r"scale = 0\.1 is not exactly representable"):
        quant_param("0.1", mode="REQ8")
    assert relu_param("0.25").fp19 == (125 << 10)
    # the way Python prints an FP19 value names it (0.0011072158813476562 is 0.00110721588134765625 printed)
    assert quant_param(repr(0.00110721588134765625), mode="REQ8").fp19 == 0x1D489
    # ... accepted, but neither reported as exact nor described as exact (said "is exactly FP19" until
    # 2026-12-03, beside exact=False); the decimal that is the value exactly is both
    printed = quant_param("1.1754943508222875e-38", mode="REQ8")  # 2**-126 as Python prints it
    assert printed.fp19 == 0x00400 and not printed.exact
    assert "is exactly" not in printed.how and "names FP19 0x00400" in printed.how
    with localcontext() as ctx:
        ctx.prec = 200
        whole_text = str(Decimal(2) ** -126)  # all 89 significant digits
    whole = quant_param(whole_text, mode="REQ8")
    assert whole.fp19 == 0x00400 and whole.exact and "is exactly FP19 0x00400" in whole.how


def test_huge_ints_and_decimals_as_parameters() -> None:
    """An int beyond binary64 is refused as an infinity would be (was a bare OverflowError), and a
    decimal.Decimal is read exactly, as its text."""
    from decimal import Decimal

    from ptonum import fpatr

    with pytest.raises(UsageError, match="positive infinity"):
        fpatr.quant_param(10**400, 0, mode="REQ8")
    with pytest.raises(UsageError, match="negative infinity"):
        fpatr.quant_param(-(10**400), 0, mode="REQ8", rounding="rne")
    with pytest.raises(UsageError, match="positive infinity"):
        fpatr.relu_param(10**400)
    assert fpatr.quant_param(Decimal("0.25"), 3, mode="REQ8") == fpatr.quant_param("0.25", 3, mode="REQ8")
    assert fpatr.quant_param(Decimal("0.25"), 3, mode="REQ8").fp19 == 0x1F400  # 2^-2: exponent 125, fraction 0
    with pytest.raises(UsageError, match="not exactly representable"):
        fpatr.quant_param(Decimal("0.1"), 0, mode="REQ8")
    assert fpatr.relu_param(Decimal("0.1"), rounding="rne").fp19 == fpatr.relu_param("0.1", rounding="rne").fp19


def test_a_huge_decimal_is_shortened_in_repr_and_messages():
    """A requested decimal of 5000 digits is read exactly (try14 #6) but shown shortened: ParamWord's repr
    and a refusal keep the first and last 20 digits and say how many there are."""
    from ptonum.errors import UsageError

    w = quant_param("1." + "0" * 5000, 0, mode="REQ8")
    assert (int(w), w.exact) == (0x3F800000, True)
    assert repr(w) == ("ParamWord(0x000000003f800000, fp19=0x1fc00, value=1.0, requested=1." + "0" * 20 + "..."
                       + "0" * 20 + " (5000 digits), exact=True, offset=0)")
    with pytest.raises(UsageError) as info:
        quant_param("1" + "7" * 5000, 0, mode="REQ8")
    assert str(info.value).startswith("scale = 1" + "7" * 19 + "..." + "7" * 20 + " (5001 digits) is not exactly "), \
        str(info.value)[:200]
    assert len(str(info.value)) < 400
