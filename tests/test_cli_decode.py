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
    assert "BF16 0x3f81 (--value 1.0039063: rounded once from the decimal, nearest even)" in r.output
    assert "BF16 0x3fc0 (--value 1.5: exact)" in r.output
    r = CliRunner().invoke(main, ["decode", "E4M3", "--value", "1"])
    assert r.exit_code == 2 and "decimals are rounded to FP64, FP32, FP16 or BF16 only" in r.output


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
