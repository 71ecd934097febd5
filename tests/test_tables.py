"""ptonum.tables: every derived destination fact against an independent library.

Expected values come from ml_dtypes / en_dtypes / numpy (finfo and the bit
patterns of their values), never from ptonum itself.
"""

from __future__ import annotations

from typing import Any, Dict

import en_dtypes
import ml_dtypes
import numpy as np
import pytest

from ptonum import tables
from ptonum.datatypes import TileDataType as T
from ptonum.tables import DESTINATIONS

LIBRARY: Dict[T, Any] = {
    T.FP32: np.float32, T.FP16: np.float16, T.BF16: ml_dtypes.bfloat16,
    T.E4M3: ml_dtypes.float8_e4m3fn, T.HiF8: en_dtypes.hifloat8,
}
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}


def _bits(t: T, value: float) -> int:
    d = DESTINATIONS[t]
    return int(np.array(value, LIBRARY[t]).view(UINT[d.width]))


@pytest.mark.parametrize("t", list(LIBRARY), ids=lambda t: t.name)
def test_floating_destination_facts_match_the_library(t: T) -> None:
    d = DESTINATIONS[t]
    lib = LIBRARY[t]
    fi = (en_dtypes.finfo if t is T.HiF8 else ml_dtypes.finfo)(lib)
    assert d.width == np.dtype(lib).itemsize * 8 and np.dtype(d.carrier) == np.dtype(UINT[d.width])
    assert d.largest == (_bits(t, float(fi.max)), _bits(t, -float(fi.max)))
    assert d.emax == int(np.log2(float(fi.max)))
    assert 2.0 ** d.emin == float(fi.smallest_normal)
    if t is not T.HiF8:  # HiF8's precision tapers; 4 is its widest (exponent 0)
        assert d.precision == fi.nmant + 1
    else:
        assert d.precision == 4 and np.array(1 + 2.0 ** -3, lib) == 1 + 2.0 ** -3
    if t is T.E4M3:
        assert d.infinity is None and d.overflow_code(False, True) == d.canonical_nan
    else:
        assert d.infinity == (_bits(t, np.inf), _bits(t, -np.inf))
    assert np.isnan(np.array(d.canonical_nan, UINT[d.width]).view(lib).astype(np.float64))
    if d.negative_zero is not None:
        assert d.negative_zero == _bits(t, -0.0) and d.negative_zero_result == d.negative_zero
    else:  # HiF8 has one zero
        assert _bits(t, -0.0) == 0 and d.negative_zero_result == 0


@pytest.mark.parametrize("t", tables.INTEGER_DESTINATIONS, ids=lambda t: t.name)
def test_integer_destination_facts(t: T) -> None:
    d = DESTINATIONS[t]
    if t is T.S4X2:
        assert (d.minimum, d.maximum, d.width, d.minimum_code, d.maximum_code) == (-8, 7, 4, 0x8, 0x7)
        return
    info = np.iinfo({T.S8: np.int8, T.S16: np.int16, T.S32: np.int32, T.U32: np.uint32}[t])
    assert (d.minimum, d.maximum, d.width) == (info.min, info.max, info.bits)
    assert d.minimum_code == int(np.array(info.min, info.dtype).view(UINT[info.bits]))
    assert d.carrier == np.dtype(UINT[info.bits])


def test_hif8_binade_tables_match_the_library() -> None:
    """HIF8_BASE[e + 23] is the code of 2^e and HIF8_MBITS the mantissa bits of that binade."""
    for i, e in enumerate(range(-23, 18)):
        if -22 <= e <= 15:
            assert tables.HIF8_BASE[i] == _bits(T.HiF8, 2.0 ** e), e
        if -15 <= e <= 14:  # the next code up is 2^e (1 + 2^-mbits) (2^15 is the largest finite)
            step = float(np.array(tables.HIF8_BASE[i] + 1, np.uint8).view(en_dtypes.hifloat8).astype(np.float64))
            assert step == 2.0 ** e * (1 + 2.0 ** -int(tables.HIF8_MBITS[i])), e


def test_kernel_codes_cover_every_destination_once() -> None:
    assert set(tables.KERNEL_DST) == set(DESTINATIONS)
    assert sorted(tables.KERNEL_DST.values()) == list(range(len(DESTINATIONS)))
    assert set(tables.KERNEL_ACC) == set(tables.ACCUMULATOR_TYPES)


@pytest.mark.parametrize("t", list(LIBRARY) + [T.E8M0], ids=lambda t: t.name)
def test_largest_value_and_sign_match_the_library(t: T) -> None:
    """``largest_value`` (the overflow threshold of E4M3/HiF8) is the library's finfo.max, and the
    value of the ``largest`` code; ``sign`` is the bit that negates a value."""
    d = tables.E8M0 if t is T.E8M0 else DESTINATIONS[t]
    lib = ml_dtypes.float8_e8m0fnu if t is T.E8M0 else LIBRARY[t]
    fi = (en_dtypes.finfo if t is T.HiF8 else ml_dtypes.finfo)(lib)
    assert float(d.largest_value) == float(fi.max)
    assert float(np.array(d.largest[0], UINT[d.width]).view(lib).astype(np.float64)) == float(fi.max)
    if t is T.E8M0:  # unsigned; 2^-127 is its smallest value (no subnormals, no zero); NaN 0xFF
        assert d.sign == 0 and 2.0 ** d.emin == float(fi.smallest_normal) and d.canonical_nan == 0xFF
        assert d.overflow_code(True, False) == d.largest[0] and d.overflow_code(False, False) == d.canonical_nan
    else:
        assert d.sign == _bits(t, -1.0) ^ _bits(t, 1.0)


# PTONUM_DISABLE_NUMBA is read as an on/off word in one place (tables.numba_disabled). Before: any value
# other than "" or "0" disabled numba, so =false / =no / =maybe ran the numpy path without a word. Expected
# values are the documented spelling table (1/true/yes/on: numpy; 0/false/no/off/empty/unset: kernels;
# anything else: kernels and one note from the command line).
DISABLE_ON = ["1", "true", "TRUE", "Yes", "on", " on "]
DISABLE_OFF = ["", "0", "false", "False", "no", "NO", "off", " 0 "]
DISABLE_GARBAGE = ["maybe", "2", "enable", "y"]


@pytest.mark.parametrize("value", DISABLE_ON + DISABLE_OFF + DISABLE_GARBAGE)
def test_disable_numba_spellings(monkeypatch, value):
    monkeypatch.setenv("PTONUM_DISABLE_NUMBA", value)
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    assert tables.kernel_size(1 << 20) is (value not in DISABLE_ON), value
    kernels = pytest.importorskip("ptonum.kernels")
    if kernels.NUMBA_AVAILABLE:
        assert kernels.numba_enabled(1 << 20) is (value not in DISABLE_ON), value


def test_disable_numba_unset_keeps_kernels(monkeypatch):
    monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    assert tables.kernel_size(1 << 20) is True
