"""Argument validation shared by every public function (ptonum._util)."""

import numpy as np
import pytest

from ptonum import UsageError
from ptonum._util import as_bits, check_bool, check_engine
from ptonum.formats import TileDataType, parse_data_type
from ptonum.rounding import RoundingMode, parse_rounding_mode


def test_as_bits_accepts_ints_and_integer_arrays():
    assert as_bits("x", 0xFF, 8) == 0xFF
    a = as_bits("x", np.array([1, 2, 3], dtype=np.int32), 8)
    assert a.dtype == np.uint64 and a.tolist() == [1, 2, 3]
    assert as_bits("x", [0, 0xFFFF], 16).tolist() == [0, 0xFFFF]


@pytest.mark.parametrize(
    "value, width, needle",
    [
        (0x100, 8, "x = 0x100"),
        (np.array([1, 0x1FF], dtype=np.uint16), 8, r"x\[1\] = 0x1ff"),
        (np.array([[0, -1]], dtype=np.int32), 8, r"x\[0, 1\]"),
        (np.array([1.0]), 8, "dtype float64"),
        (True, 8, "boolean"),
        ("12", 8, "dtype <U2"),
    ],
)
def test_as_bits_rejects_with_argument_and_value(value, width, needle):
    with pytest.raises(UsageError, match=needle):
        as_bits("x", value, width)


def test_check_engine_and_bool():
    assert check_engine("fast") == "fast"
    with pytest.raises(UsageError, match="engine = 'slow'"):
        check_engine("slow")
    assert check_bool("sat", 1) is True
    with pytest.raises(UsageError, match="sat = 2"):
        check_bool("sat", 2)


def test_data_type_lookup_by_name_or_code():
    assert parse_data_type("hif8") is TileDataType.HiF8
    assert parse_data_type(14) is TileDataType.HiF4X2
    assert parse_data_type("U4X2") is TileDataType.U4X2
    for bad in (15, 21, 31, "FP8", "int8"):
        with pytest.raises(UsageError, match="data_type"):
            parse_data_type(bad)


def test_rounding_mode_codes_are_bdatr_rmode():
    assert [m.name for m in RoundingMode] == ["NONE", "RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB"]
    assert [int(m) for m in RoundingMode] == list(range(8))
    assert parse_rounding_mode("rdn") is RoundingMode.RTM
    assert parse_rounding_mode(7) is RoundingMode.RHB
    assert RoundingMode.NONE.resolved() is RoundingMode.RNE
    with pytest.raises(UsageError, match="rmode = 8"):
        parse_rounding_mode(8)
    with pytest.raises(UsageError, match="rmode = 'RNX'"):
        parse_rounding_mode("RNX")


def test_digit_text_is_ascii_only() -> None:
    from ptonum._util import int_text, is_digits

    assert [is_digits(t) for t in ("12", "\u0663", "\u00b2", "", "1_2")] == [True, False, False, False, False]
    assert [int_text(t) for t in ("12", "0x1f", "0b101", "0o17", "-3", " 7 ", "010")] == [12, 31, 5, 15, -3, 7, 10]
    assert int_text("+42", decimal_only=True) == 42
    # one rule: no digit separators (Python's int reads 1_000), no other scripts' digits, nothing empty
    for bad in ("\u0663", "0x\u0663", "\uff11", "1_000", "0x_1f", "0x1_f", "", " ", "0x", "1.0", "1e3", "--1",
                "\u00a01"):
        with pytest.raises(ValueError):
            int_text(bad)
    with pytest.raises(ValueError):
        int_text("0x10", decimal_only=True)
    # beyond the 4300 digits Python's int reads from text: exact, compared with the decimal module's parse
    from decimal import Decimal

    for text in ("-" + "7" * 5000, "+" + "0" * 4999 + "12", "9" * 9001):
        assert int_text(text) == int(Decimal(text))


def test_count_text_refuses_negative_counts() -> None:
    from ptonum._util import count_text

    assert [count_text(t) for t in ("0", "+0", "-0", " 4096 ", "010")] == [0, 0, 0, 4096, 10]
    for bad in ("-5", "-1", "0x10", "1_000", "", "lots"):
        with pytest.raises(ValueError):
            count_text(bad)


def test_words_and_codes_refuse_other_scripts_digits(tmp_path) -> None:
    from click.testing import CliRunner

    from ptonum.cli import main

    acc = tmp_path / "acc.npy"
    np.save(acc, np.ones((2, 8), np.int32))
    r = CliRunner().invoke(main, ["postprocess", str(acc), "--mode", "REQ8", "--quant-param", "\u0663",
                                  "--out-dir", str(tmp_path)])
    assert (r.exit_code, r.stderr) == (2, "ptonum postprocess: error: --quant-param = '\u0663': expected an integer "
                                          "word (ASCII decimal digits, or 0x/0o/0b and their digits; no separators)\n")
    r = CliRunner().invoke(main, ["explain", "--row", f"{acc}:\u0663"])
    assert (r.exit_code, r.stderr) == (2, f"ptonum explain: error: --row = '{acc}:\u0663': expected FILE:LINE\n")
