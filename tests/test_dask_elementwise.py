"""ptonum.dask.to_e8m0 / encode / decompose: element-wise on dask arrays, bits of the numpy functions.

Expected values: the ASL vectors (tcvt_e8m0, decomposition) run chunked, and ml_dtypes'
float8_e4m3fn for E4M3 encoding (RNE, Sat, in range, where the ASL and OCP agree).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conftest import hex_column, read_vector_tokens
from ptonum import dask as pdask
from ptonum.errors import UnsupportedConversionError, UsageError

da = pytest.importorskip("dask.array")


def _col(tok: np.ndarray, header: bytes, name: str) -> np.ndarray:
    return tok[:, header.decode().split(",").index(name)]


def test_to_e8m0_asl_vectors_chunked(monkeypatch) -> None:
    monkeypatch.setenv("PTONUM_DASK_SCHEDULER", "sync")
    header, tok = read_vector_tokens("tcvt_e8m0", 6)
    for src in (b"FP16", b"BF16", b"FP32"):
        for rmode in (b"RNE", b"RTZ", b"RHB"):
            for sat in (b"0", b"1"):
                sel = (_col(tok, header, "src_type") == src) & (_col(tok, header, "rmode") == rmode) & (
                    _col(tok, header, "sat") == sat)
                sel = np.flatnonzero(sel)[:3000]  # a bounded sample of the rows (the whole file runs elsewhere)
                bits = hex_column(_col(tok, header, "src_bits")[sel])
                assert bits.size > 10
                x = da.from_array(bits.astype(np.uint32), chunks=max(1, bits.size // 3))
                codes, flags = pdask.to_e8m0(x, src_type=src.decode(), rmode=rmode.decode(), sat=sat == b"1")
                np.testing.assert_array_equal(codes.compute(), hex_column(_col(tok, header, "expected_bits")[sel]))
                np.testing.assert_array_equal(flags.compute(), hex_column(_col(tok, header, "expected_flags")[sel]))


def test_decompose_asl_vectors_chunked(monkeypatch) -> None:
    monkeypatch.setenv("PTONUM_DASK_SCHEDULER", "sync")
    header, tok = read_vector_tokens("decomposition", 6)
    sel = _col(tok, header, "data_type") == b"E4M3"
    enc = hex_column(_col(tok, header, "encoding")[sel]).astype(np.uint8)
    d = pdask.decompose("E4M3", da.from_array(enc, chunks=7))
    np.testing.assert_array_equal(d.available.compute(), _col(tok, header, "available")[sel] == b"1")
    np.testing.assert_array_equal(d.negative.compute(), _col(tok, header, "negative")[sel] == b"1")
    assert d.significand.dtype == np.uint64 and d.exponent.dtype == np.int64
    avail = _col(tok, header, "available")[sel] == b"1"
    sig = np.array([int(v, 0) for v in _col(tok, header, "significand")[sel].astype(str)], dtype=object)
    got = d.significand.compute()
    assert [int(v) for v in got[avail]] == list(sig[avail])


def test_encode_e4m3_against_ml_dtypes() -> None:
    rng = np.random.default_rng(5)
    v = (rng.standard_normal(5000) * 50).astype(np.float32).astype(np.float64)
    v = v[np.abs(v) < 448]
    bits, flags = pdask.encode(da.from_array(v, chunks=333), "E4M3", rmode="RNE", sat=True)
    np.testing.assert_array_equal(bits.compute(), v.astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    assert bits.chunks == flags.chunks and bits.chunks[0][0] == 333


def test_arguments_checked_at_the_call() -> None:
    x = da.zeros(10, dtype=np.uint16, chunks=5)
    with pytest.raises(UnsupportedConversionError):
        pdask.to_e8m0(x, src_type="E4M3")
    with pytest.raises(UsageError):
        pdask.to_e8m0(x, src_type="FP16", rmode="RXX")
    with pytest.raises(UsageError):
        pdask.to_e8m0(da.zeros(4, dtype=np.float32, chunks=2), src_type="FP32")
    with pytest.raises(UsageError):
        pdask.encode(da.zeros(4, chunks=2), "E9M9")
    with pytest.raises(UsageError):
        pdask.decompose("E4M3", x, lane=3)
    wide = da.from_array(np.array([1, 2, 1 << 17], np.uint32), chunks=2)
    codes, _ = pdask.to_e8m0(wide, src_type="FP16")
    with pytest.raises(UsageError, match="16"):
        codes.compute(scheduler="sync")
