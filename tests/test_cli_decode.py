"""``ptonum decode``: the ``negative`` row of values without a finite decomposition."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main


def _rows(*args):
    r = CliRunner().invoke(main, ["decode", *args])
    assert r.exit_code == 0, r.output
    return {ln.split(None, 1)[0]: ln.split(None, 1)[1] for ln in r.stdout.splitlines() if ln.startswith("  ")}


@pytest.mark.parametrize("code", [0xFF800000, 0x7F800000, 0xFFC00001, 0x7FC00000, 0xFF800001])
def test_fp32_inf_and_nan_show_the_sign_bit(code):
    # numpy reads the same FP32 encoding: its sign bit is the expected answer
    negative = bool(np.signbit(np.array([code], np.uint32).view(np.float32)[0]))
    rows = _rows("FP32", hex(code))
    assert rows["available"] == "no"
    assert rows["negative"] == f"{'yes' if negative else 'no'} (sign bit; no finite decomposition)"


def test_e8m0_nan_has_no_sign_bit():
    assert _rows("E8M0", "0xff")["negative"] == "no (E8M0 has no sign bit; no finite decomposition)"


def test_finite_values_keep_the_decomposition_sign():
    # FP32 0xbf800000 is -1.0 (numpy)
    assert np.array([0xBF800000], np.uint32).view(np.float32)[0] == -1.0
    assert _rows("FP32", "0xbf800000")["negative"] == "yes"


def test_integer_types_say_the_integer_sign():
    assert _rows("S32", "0xffffffff")["negative"].startswith("yes (integer value")
    assert _rows("U32", "0xffffffff")["negative"].startswith("no (integer value")


@pytest.mark.parametrize("args, integer, negative", [
    # decode S64/U64 CODE was refused ('64-bit integers are not exact in float64'); numpy gives the values
    (("S64", "0xffffffffffffffff"), int(np.array([2**64 - 1], np.uint64).view(np.int64)[0]), "yes"),
    (("S64", "0x8000000000000001"), int(np.array([2**63 + 1], np.uint64).view(np.int64)[0]), "yes"),
    (("U64", "0xffffffffffffffff"), 2**64 - 1, "no"),
    (("S32", "0x80000000"), int(np.array([2**31], np.uint32).view(np.int32)[0]), "yes"),
    (("S4X2", "0x9f", "--lane", "1"), -7, "yes"),
    (("U4X2", "0x9f", "--lane", "1"), 9, "no"),
])
def test_integer_codes_give_their_exact_integer(args, integer, negative):
    rows = _rows(*args)
    assert rows["integer"] == str(integer)
    assert rows["negative"] == f"{negative} (integer value; no floating decomposition)"


def test_decode_value_rounds_the_decimal_once() -> None:
    # 1.0039063 is just above the BF16 midpoint 1.00390625 of 0x3f80/0x3f81 (a binary64 read, then float32,
    # lands on the midpoint and ties to 0x3f80)
    r = CliRunner().invoke(main, ["decode", "BF16", "--value", "1.0039063", "--value", "1.5"])
    assert r.exit_code == 0, r.output
    assert "BF16 0x3f81 (--value 1.0039063)" in r.output
    assert "BF16 0x3fc0 (--value 1.5)" in r.output
    r = CliRunner().invoke(main, ["decode", "E5M2", "--value", "1"])
    assert r.exit_code == 2 and "E5M2 takes codes; decimals are encoded in FP64 or a B.FPATR destination" in r.output


@pytest.mark.parametrize("args, line", [
    (["FP16", "--value", "\u0663"], "--value = '\u0663': not a decimal number: write ASCII digits 0-9 with an optional "
                                    "sign, point and exponent, no digit separators (e.g. 1.5, -2e-3, .25, 1000), or "
                                    "inf/nan"),
    (["FP16", "--value", "1_000"], "--value = '1_000': not a decimal number: write ASCII digits 0-9 with an optional "
                                   "sign, point and exponent, no digit separators (e.g. 1.5, -2e-3, .25, 1000), or "
                                   "inf/nan"),
    (["\u0663", "0x1"], "TYPE = '\u0663': unknown Tile DataType; expected one of FP64, FP32, TF32, HF32, FP16, BF16, "
                        "HiF8, E4M3, E5M2, E3M2, E2M3, E2M1X2, E1M2X2, E8M0, HiF4X2, S64, S32, S16, S8, S4X2, U64, U32, "
                        "U16, U8, U4X2"),
])
def test_decode_refuses_numbers_outside_the_ascii_grammar(args, line) -> None:
    r = CliRunner().invoke(main, ["decode", *args])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"ptonum decode: error: {line}\n")


def test_a_too_wide_code_is_echoed_as_written():
    """A CODE written in decimal or binary that does not fit was echoed only as its hex conversion (a
    5000-digit decimal became 4153 hex digits): now as written, with the hex in brackets, shortened."""
    from click.testing import CliRunner

    from ptonum.cli import main

    for code, shown in [("65536", "65536 (0x10000)"), ("0x10000", "0x10000"),
                        ("0b10000000000000000", "0b10000000000000000 (0x10000)"),
                        ("7" * 5000, "7" * 20 + "..." + "7" * 20 + " (5000 digits) (0x26cc3f1d3b877ef67d38...")]:
        r = CliRunner().invoke(main, ["decode", "FP16", "0x3c00", code])
        assert r.exit_code == 2 and r.stdout == "" and len(r.stderr) < 300, r.output[:300]
        assert r.stderr.startswith(f"ptonum decode: error: CODE {shown}"), r.stderr
        assert r.stderr.endswith(": does not fit in 16 bits (the FP16 carrier is 16 bits)\n"), r.stderr


# ---------------------------------------------------------------------------
# --value shows the rounding used and the conversion's flags.  Expected bits and flags come from
# independent libraries: softfloatpy (Berkeley SoftFloat, IEEE flags, tininess before rounding) for
# FP16/FP32/FP64 on decimals exact in binary64, ml_dtypes (float8_e4m3fn: NaN on overflow; its finfo
# max for Sat) and en_dtypes (hifloat8), and the spec's overflow rule (E4M3 overflows above 448 before
# rounding; HiF8 above 32768) where the libraries saturate.


def _value_rows(*args):
    r = CliRunner().invoke(main, ["decode", *args])
    assert r.exit_code == 0, r.output
    head = r.stdout.splitlines()[0]
    return int(head.split()[1], 16), _rows(*args)


def _softfloat(value: float, dst: str, mode: str):
    import softfloatpy as sf

    modes = {"RNE": sf.RoundingMode.NEAR_EVEN, "RTZ": sf.RoundingMode.MIN_MAG, "RTM": sf.RoundingMode.MIN,
             "RTP": sf.RoundingMode.MAX, "RNA": sf.RoundingMode.NEAR_MAX_MAG}
    sf.set_rounding_mode(modes[mode])
    sf.set_tininess_mode(sf.TininessMode.BEFORE_ROUNDING)
    sf.set_exception_flags(0)
    try:
        x = sf.Float64.from_float(value)
        r = {"FP16": sf.f64_to_f16, "FP32": sf.f64_to_f32, "FP64": lambda v: v}[dst](x)
        bits = int.from_bytes(r.to_bytes(), "big")
        fl = sf.get_exception_flags()
    finally:
        sf.set_rounding_mode(sf.RoundingMode.NEAR_EVEN)
    names = [n for n, bit in (("OF", 4), ("UF", 2), ("NX", 1)) if fl & bit]
    return bits, "|".join(names) or "-"


@pytest.mark.parametrize("text, dst, mode", [
    ("1e10", "FP16", "RNE"), ("-1e10", "FP16", "RNE"), ("65520", "FP16", "RNE"), ("65519", "FP16", "RNE"),
    ("65519", "FP16", "RTP"), ("1e-8", "FP16", "RNE"), ("1e-8", "FP16", "RTP"), ("5.9604644775390625e-08", "FP16",
    "RNE"), ("6.1e-5", "FP16", "RNE"), ("1.5", "FP16", "RTZ"), ("0.1", "FP32", "RTM"), ("1e39", "FP32", "RNE"),
    ("1e-45", "FP32", "RNA"),
])
def test_decode_value_shows_flags_and_rounding_like_softfloat(text, dst, mode) -> None:
    bits, rows = _value_rows(dst, "--value", text, "--rmode", mode)
    want_bits, want_flags = _softfloat(float(text), dst, mode)  # every decimal here is exact in binary64
    assert bits == want_bits
    assert rows["flags"].split()[0] == want_flags
    assert rows["rounding"].startswith(f"{mode}, Sat=0")


def test_decode_value_fp64_flags() -> None:
    # 1e400 overflows, 1e-320 is tiny and inexact, 0.1 inexact: Python's float() (correctly rounded, nearest
    # even) gives the bits; the flags are IEEE's (tininess before rounding)
    import struct

    for text, flags in (("1e400", "OF|NX"), ("1e-320", "UF|NX"), ("0.1", "NX"), ("0.5", "-")):
        bits, rows = _value_rows("FP64", "--value", text)
        assert bits == struct.unpack("<Q", struct.pack("<d", float(text)))[0]
        assert rows["flags"].split()[0] == flags
        assert rows["rounding"].startswith("RNE")
    r = CliRunner().invoke(main, ["decode", "FP64", "--value", "1", "--rmode", "RTZ"])
    assert r.exit_code == 2 and "FP64 is not a B.FPATR destination" in r.stderr


def test_decode_value_fp8_saturating_or_not() -> None:
    import ml_dtypes

    e4m3 = ml_dtypes.float8_e4m3fn
    nan_code = int(np.array(np.nan, dtype=e4m3).view(np.uint8)) & 0x7F
    max_code = int(np.array(ml_dtypes.finfo(e4m3).max, dtype=e4m3).view(np.uint8))
    assert int(np.array(1e10, dtype=e4m3).view(np.uint8)) & 0x7F == nan_code  # ml_dtypes: overflow is NaN
    bits, rows = _value_rows("E4M3", "--value", "1e10")
    assert (bits, rows["flags"].split()[0], rows["rounding"][:12]) == (nan_code, "OF|NX", "RNE, Sat=0 (")
    bits, rows = _value_rows("E4M3", "--value", "1e10", "--sat")
    assert (bits, rows["flags"].split()[0], rows["rounding"][:12]) == (max_code, "OF|NX", "RNE, Sat=1 (")
    bits, rows = _value_rows("E4M3", "--value", "-1e10", "--sat")
    assert (bits, rows["flags"].split()[0]) == (max_code | 0x80, "OF|NX")
    # in range: ml_dtypes' RNE bits, NX; a tiny value: UF|NX
    bits, rows = _value_rows("E4M3", "--value", "0.3")
    assert (bits, rows["flags"].split()[0]) == (int(np.array(0.3, dtype=e4m3).view(np.uint8)), "NX")
    bits, rows = _value_rows("E4M3", "--value", "0.0009765625")  # 2^-10: below E4M3's minimum normal 2^-6
    assert (bits, rows["flags"].split()[0]) == (int(np.array(2.0 ** -10, dtype=e4m3).view(np.uint8)), "UF|NX")


def test_decode_value_hif8() -> None:
    import en_dtypes

    hif8 = en_dtypes.hifloat8
    bits, rows = _value_rows("HiF8", "--value", "1.5")
    assert (bits, rows["flags"].split()[0]) == (int(np.array(1.5, dtype=hif8).view(np.uint8)), "-")
    bits, rows = _value_rows("HiF8", "--value", "1e10")  # above 32768: HiF8's infinity (en_dtypes' inf code)
    assert (bits, rows["flags"].split()[0]) == (int(np.array(np.inf, dtype=hif8).view(np.uint8)), "OF|NX")
    bits, rows = _value_rows("HiF8", "--value", "1e10", "--sat")
    assert (bits, rows["flags"].split()[0]) == (int(np.array(32768.0, dtype=hif8).view(np.uint8)), "OF|NX")


def test_decode_value_specials_and_e8m0() -> None:
    # FP16 infinity and NaN codes as numpy has them; converting an infinity or a quiet NaN raises no flag
    for text, want in (("inf", np.float16(np.inf)), ("-inf", np.float16(-np.inf)), ("nan", np.float16(np.nan)),
                       ("-0", np.float16(-0.0))):
        bits, rows = _value_rows("FP16", "--value", text)
        assert bits == int(np.array(want).view(np.uint16)) and rows["flags"].split()[0] == "-", text
    bits, rows = _value_rows("FP16", "--value", "inf", "--sat")  # Sat: the largest finite, OF|NX
    assert (bits, rows["flags"].split()[0]) == (int(np.array(np.finfo(np.float16).max).view(np.uint16)), "OF|NX")
    r = CliRunner().invoke(main, ["decode", "E8M0", "--value", "1"])
    assert r.exit_code == 2 and "E8M0 takes codes" in r.stderr and "ptonum tcvt --to E8M0" in r.stderr
    r = CliRunner().invoke(main, ["decode", "FP16", "0x3c00", "--sat"])
    assert r.exit_code == 2 and "--rmode and --sat apply to --value only" in r.stderr
