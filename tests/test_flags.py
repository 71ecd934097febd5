"""NumericFlags bit order and the sticky StatusRegister (ADR-0038 decision 1,
pto-spec asl/arch/state/numeric-status.asl RecordNumericStatusFlags)."""

import numpy as np
import pytest

import ptonum
from ptonum.errors import UsageError
from ptonum.flags import NumericFlags, StatusRegister, flag_names


def test_bit_order_matches_core_state_36_32():
    # ADR-0038: CORE_STATE[36:32] holds NV, DZ, OF, UF, NX from low to high.
    assert [int(NumericFlags[n]) for n in ("NV", "DZ", "OF", "UF", "NX")] == [1, 2, 4, 8, 16]


def test_top_level_exports():
    assert ptonum.NumericFlags is NumericFlags
    assert ptonum.StatusRegister is StatusRegister
    assert issubclass(ptonum.PtonumError, ValueError)
    for cls in (ptonum.IllegalEncodingError, ptonum.TileLegalityError, ptonum.UsageError,
                ptonum.UnsupportedConversionError):
        assert issubclass(cls, ptonum.PtonumError)


def test_flag_names():
    assert flag_names(0x14) == "OF|NX"
    assert flag_names(0x18) == "UF|NX"
    assert flag_names(0) == "-"
    assert str(NumericFlags(0x01)) == "NV"
    assert flag_names(np.uint8(0x1F)) == "NV|DZ|OF|UF|NX" and flag_names(NumericFlags.OF) == "OF"


@pytest.mark.parametrize("bad", [0x20, 0x100, 0x114, -1, -0x20, 2**70])
def test_flag_names_refuses_bits_outside_the_five_flags(bad):
    """Was: 0x100 shown as '-' and -1 as all five flags (the other bits dropped silently)."""
    with pytest.raises(UsageError, match=r"flags = .*: numeric flags are 5 bits \(0\.\.0x1f"):
        flag_names(bad)


@pytest.mark.parametrize("bad", [True, 1.0, "0x14", None])
def test_flag_names_refuses_what_is_not_an_integer(bad):
    with pytest.raises(UsageError, match="flags = "):
        flag_names(bad)


def test_status_register_is_sticky_and_resets_explicitly():
    s = StatusRegister()
    assert int(s) == 0
    s.record(0x10)
    s.record(NumericFlags.OF)
    s.record(0)  # recording nothing never clears
    assert int(s) == 0x14
    s.record(np.array([[0x01, 0x00], [0x08, 0x00]], dtype=np.uint8))
    assert int(s) == 0x1D
    assert s.flags == NumericFlags.NV | NumericFlags.OF | NumericFlags.UF | NumericFlags.NX
    s.reset()
    assert int(s) == 0


def test_status_register_rejects_wide_initial_value():
    with pytest.raises(ptonum.UsageError, match="initial"):
        StatusRegister(0x20)


@pytest.mark.parametrize("bad", ["x", 1.5, None, True])
def test_status_register_rejects_non_integer_initial_value(bad):
    with pytest.raises(ptonum.UsageError, match="initial"):
        StatusRegister(bad)


@pytest.mark.parametrize("bad", [0x20, -1, np.array([0x40]), np.array([0.5]), True])
def test_record_rejects_values_that_are_not_flags_and_changes_nothing(bad):
    s = StatusRegister(0x10)
    with pytest.raises(ptonum.UsageError, match="flags"):
        s.record(bad)
    assert int(s) == 0x10


def test_submodules_reachable_after_plain_import():
    import importlib

    fresh = importlib.import_module("ptonum")
    for name in ("formats", "fp19", "rounding", "encode", "tcvt", "fpatr"):
        assert getattr(fresh, name).__name__ == f"ptonum.{name}"
    with pytest.raises(AttributeError):
        fresh.no_such_module
