"""PTONUM_DISABLE_NUMBA is read as an on/off word in one place (ptonum.tables.numba_disabled).

Before: any value other than "" or "0" disabled numba, so ``=false`` / ``=no`` / ``=maybe`` ran the numpy
path without a word.  Expected values are the documented spelling table (1/true/yes/on: numpy;
0/false/no/off/empty/unset: kernels; anything else: kernels and one note from the command line).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ptonum.cli import main

ON = ["1", "true", "TRUE", "Yes", "on", " on "]
OFF = ["", "0", "false", "False", "no", "NO", "off", " 0 "]
GARBAGE = ["maybe", "2", "enable", "y"]


@pytest.mark.parametrize("value", ON + OFF + GARBAGE)
def test_disable_numba_spellings(monkeypatch, value):
    from ptonum import tables

    monkeypatch.setenv("PTONUM_DISABLE_NUMBA", value)
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    assert tables.kernel_size(1 << 20) is (value not in ON), value
    kernels = pytest.importorskip("ptonum.kernels")
    if kernels.NUMBA_AVAILABLE:
        assert kernels.numba_enabled(1 << 20) is (value not in ON), value


def test_disable_numba_unset_keeps_kernels(monkeypatch):
    from ptonum import tables

    monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    assert tables.kernel_size(1 << 20) is True


@pytest.mark.parametrize("value", GARBAGE)
def test_unreadable_disable_numba_is_noted_once(value):
    r = CliRunner(env={"PTONUM_DISABLE_NUMBA": value}).invoke(main, ["formats", "E4M3"])
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"ptonum: note: PTONUM_DISABLE_NUMBA = {value!r} is not an on/off word "
                        "(1/true/yes/on or 0/false/no/off, any case); the default is used "
                        "(the compiled kernels, numba on)\n")


@pytest.mark.parametrize("value", ON + OFF)
def test_readable_disable_numba_is_silent(value):
    r = CliRunner(env={"PTONUM_DISABLE_NUMBA": value}).invoke(main, ["formats", "E4M3"])
    assert r.exit_code == 0 and r.stderr == "", r.output
