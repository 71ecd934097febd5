"""ptonum.errors: the typed errors, and numbers of more than LONG_DIGITS digits shortened in their messages."""

from __future__ import annotations

import pickle

import pytest

from ptonum.errors import LONG_DIGITS, PtonumError, TileLegalityError, UsageError, short_numbers


def test_short_numbers_keeps_the_ends_and_says_how_many_digits():
    assert LONG_DIGITS == 100
    edge = "1" * 100  # at the limit: left whole
    assert short_numbers(f"x = {edge}: bad") == f"x = {edge}: bad"
    n = "1" + "0" * 99 + "2"  # 101 digits
    assert short_numbers(f"x = {n}: bad") == "x = 1" + "0" * 19 + "..." + "0" * 19 + "2 (101 digits): bad"
    assert short_numbers("0x" + "f" * 150 + " and 0b" + "1" * 120 + " and 0o" + "7" * 101) == (
        "0x" + "f" * 20 + "..." + "f" * 20 + " (150 hex digits) and 0b" + "1" * 20 + "..." + "1" * 20
        + " (120 binary digits) and 0o" + "7" * 20 + "..." + "7" * 20 + " (101 octal digits)")
    assert short_numbers("-1." + "5" * 200 + "e3") == "-1." + "5" * 20 + "..." + "5" * 20 + " (200 digits)e3"
    path = "/data/run_20261201_0123456789abcdef0123456789abcdef01234567/acc.npy: missing"  # a hash: short runs
    assert short_numbers(path) == path
    assert short_numbers(short_numbers("9" * 5000)) == short_numbers("9" * 5000)  # once shortened, stays


@pytest.mark.parametrize("cls", [PtonumError, UsageError, TileLegalityError])
def test_typed_error_messages_are_shortened(cls):
    exc = cls("--offset = " + "3" * 5000 + ": does not fit S9")
    assert str(exc) == "--offset = " + "3" * 20 + "..." + "3" * 20 + " (5000 digits): does not fit S9"
    again = pickle.loads(pickle.dumps(exc))  # as a Dask worker sends it back
    assert type(again) is cls and str(again) == str(exc)
    assert str(cls("short 123")) == "short 123" and cls().args == ()
