"""Numba kernels of the fast engine: TCVT to E8M0 and ``formats.decompose``.

Every row of ``tcvt_e8m0.csv.gz`` and ``decomposition.csv.gz`` (ASL vectors) runs
through the kernel path and through the numpy fallback (``PTONUM_DISABLE_NUMBA=1``);
a spy proves which path ran.  Hypothesis compares the kernels with the
``reference`` engine (the ASL step by step) on random encodings, modes and shapes.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TcvtGroups, read_vector_tokens
from ptonum import formats, tcvt
from ptonum.errors import UsageError
from ptonum.formats import TileDataType
from ptonum.kernels import NUMBA_AVAILABLE
from ptonum.kernels import decompose as kdec
from ptonum.kernels import tcvt as ktcvt
from ptonum.rounding import RoundingMode


def test_numba_is_installed() -> None:
    """numba is a runtime dependency: without it every kernel test below must fail, not skip."""
    assert NUMBA_AVAILABLE


MODES = ("RNE", "RTM", "RTP", "RTZ", "RNA", "RTO", "RHB")
LUT_TYPES = [t for t in TileDataType if t.is_floating and formats.carrier_bits(t) <= 16]


# --------------------------------------------------------------------------- vector files


def _ints(col: np.ndarray) -> np.ndarray:
    """Parse decimal or 0x-hex tokens (vectorized through Python ints once per distinct token)."""
    uniq, inv = np.unique(col, return_inverse=True)
    vals = np.array([int(u.decode(), 0) for u in uniq], dtype=object)
    return vals[inv]


DecGroups = Dict[str, Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


@pytest.fixture(scope="module")
def tcvt_groups(tcvt_vector_groups: TcvtGroups) -> TcvtGroups:
    assert len(tcvt_vector_groups) == 3 * 7 * 2
    return tcvt_vector_groups


@pytest.fixture(scope="module")
def dec_groups() -> DecGroups:
    header, tok = read_vector_tokens("decomposition", 6)
    assert header == b"data_type,encoding,available,negative,significand,exponent"
    assert len(tok) == 236720
    out: DecGroups = {}
    for name in np.unique(tok[:, 0]):
        rows = tok[tok[:, 0] == name]
        out[name.decode()] = (
            _ints(rows[:, 1]).astype(np.uint64),
            rows[:, 2] == b"1",
            rows[:, 3] == b"1",
            _ints(rows[:, 4]).astype(np.uint64),
            _ints(rows[:, 5]).astype(np.int64),
        )
    assert {t.name for t in LUT_TYPES} <= set(out)
    return out


# --------------------------------------------------------------------------- path spies


class _Spy:
    def __init__(self) -> None:
        self.calls = 0


@pytest.fixture
def kernel_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Spy]:
    """Numba enabled; counts kernel calls so a test can prove the kernel ran."""
    monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")  # kernels for every size (vector groups are small)
    spy = _Spy()
    real_t, real_d = ktcvt.to_e8m0_kernel, kdec.decompose_codes

    def t(*a: Any, **k: Any) -> Any:
        spy.calls += 1
        return real_t(*a, **k)

    def d(*a: Any, **k: Any) -> Any:
        spy.calls += 1
        return real_d(*a, **k)

    monkeypatch.setattr(ktcvt, "to_e8m0_kernel", t)
    monkeypatch.setattr(kdec, "decompose_codes", d)
    yield spy


@pytest.fixture
def numpy_path(kernel_path: _Spy, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Spy]:
    """``PTONUM_DISABLE_NUMBA=1``: the same spy must stay at zero calls."""
    monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
    yield kernel_path


PATHS = ["kernel_path", "numpy_path"]


def _expect_path(request: pytest.FixtureRequest, spy: _Spy) -> None:
    if request.node.callspec.params["path"] == "kernel_path":
        assert spy.calls > 0, "the numba kernel did not run"
    else:
        assert spy.calls == 0, "the numba kernel ran although PTONUM_DISABLE_NUMBA=1"


# --------------------------------------------------------------------------- TCVT vectors


@pytest.mark.parametrize("path", PATHS)
def test_tcvt_vectors_every_row(tcvt_groups: TcvtGroups, path: str, request: pytest.FixtureRequest) -> None:
    spy = request.getfixturevalue(path)
    bad = {}
    for (s, m, sv), (bits, eb, ef) in tcvt_groups.items():
        codes, flags = tcvt.to_e8m0(bits, src_type=s, rmode=m, sat=sv)
        assert codes.dtype == np.uint8 and flags.dtype == np.uint8 and codes.shape == bits.shape
        n = int(np.count_nonzero((codes != eb) | (flags != ef)))
        if n:
            bad[(s, m, sv)] = n
    assert bad == {}
    _expect_path(request, spy)


@pytest.mark.parametrize("path", PATHS)
def test_tcvt_vectors_as_values_2d_and_strided(tcvt_groups: TcvtGroups, path: str,
                                               request: pytest.FixtureRequest) -> None:
    """The value-level call on float arrays (2-D, and a non-contiguous view) gives the vector bits."""
    import ml_dtypes

    spy = request.getfixturevalue(path)
    dtypes = {"FP16": np.float16, "BF16": ml_dtypes.bfloat16, "FP32": np.float32}
    carriers = {"FP16": np.uint16, "BF16": np.uint16, "FP32": np.uint32}
    for (s, m, sv), (bits, eb, ef) in tcvt_groups.items():
        k = len(bits) // 2 * 2
        vals = bits[:k].astype(carriers[s]).view(dtypes[s]).reshape(2, -1)
        codes, flags = tcvt.to_e8m0_values(vals, rmode=m, sat=sv)
        assert codes.shape == vals.shape
        assert np.array_equal(codes.ravel(), eb[:k]) and np.array_equal(flags.ravel(), ef[:k]), (s, m, sv)
        # every other element through a strided bit view (to_e8m0 accepts any layout)
        view = bits[:k].astype(carriers[s])[::2]
        codes, flags = tcvt.to_e8m0(view, src_type=s, rmode=m, sat=sv)
        assert np.array_equal(codes, eb[:k:2]) and np.array_equal(flags, ef[:k:2]), (s, m, sv)
    _expect_path(request, spy)


@pytest.mark.parametrize("path", PATHS)
def test_tcvt_fp32_vectors_large_inputs(tcvt_groups: TcvtGroups, path: str, request: pytest.FixtureRequest) -> None:
    """FP32 rows tiled past the numpy path's table cutoff (its table and dense-settle paths)."""
    spy = request.getfixturevalue(path)
    for m in ("RNE", "RTZ", "RTO"):
        for sv in (0, 1):
            bits, eb, ef = tcvt_groups[("FP32", m, sv)]
            reps = max(1, (1 << 16) // len(bits) + 1)
            big = np.tile(bits.astype(np.uint32), reps)
            codes, flags = tcvt.to_e8m0(big, src_type="FP32", rmode=m, sat=sv)
            assert np.array_equal(codes, np.tile(eb, reps)) and np.array_equal(flags, np.tile(ef, reps)), (m, sv)
            # only rows whose high half leaves the result open (exact powers, sqrt(2) midpoints,
            # subnormal edges): the numpy path's dense-settle case, the kernel's threshold compare
            low_t = tcvt._table32(RoundingMode[m], bool(sv))[0]
            sel = low_t[(bits >> np.uint64(16)).astype(np.int64)] >= tcvt._AMBIGUOUS
            assert np.count_nonzero(sel) >= 40
            reps = (1 << 16) // int(np.count_nonzero(sel)) + 1
            codes, flags = tcvt.to_e8m0(np.tile(bits[sel].astype(np.uint32), reps), src_type="FP32", rmode=m, sat=sv)
            assert np.array_equal(codes, np.tile(eb[sel], reps)) and np.array_equal(flags, np.tile(ef[sel], reps))
    _expect_path(request, spy)


# --------------------------------------------------------------------------- decomposition vectors


@pytest.mark.parametrize("path", PATHS)
def test_decomposition_vectors_every_row(dec_groups: DecGroups, path: str, request: pytest.FixtureRequest) -> None:
    spy = request.getfixturevalue(path)
    for name, (enc, avail, neg, sig, exp) in dec_groups.items():
        for codes in (enc, enc.astype(np.uint16 if formats.carrier_bits(name) <= 16 else np.uint64)):
            d = formats.decompose(name, codes)
            assert [a.dtype for a in d] == [np.dtype(bool), np.dtype(bool), np.dtype(np.uint64), np.dtype(np.int64)]
            for field, got, want in zip(d._fields, d, (avail, neg, sig, exp)):
                assert got.shape == enc.shape
                bad = np.nonzero(got != want)[0]
                assert bad.size == 0, (
                    f"{name} {field} {path}: encoding {int(enc[bad[0]]):#x} got {got[bad[0]]} want {want[bad[0]]}"
                )
    _expect_path(request, spy)


@pytest.mark.parametrize("path", PATHS)
def test_decomposition_vectors_shapes(dec_groups: DecGroups, path: str, request: pytest.FixtureRequest) -> None:
    """2-D, strided and 0-d inputs of the table-decoded types give the vector rows."""
    spy = request.getfixturevalue(path)
    for t in LUT_TYPES:
        enc, avail, neg, sig, exp = dec_groups[t.name]
        carrier = np.uint8 if formats.carrier_bits(t) == 8 else np.uint16
        k = len(enc) // 4 * 4
        grid = enc[:k].astype(carrier).reshape(4, -1)
        d = formats.decompose(t, grid)
        for got, want in zip(d, (avail, neg, sig, exp)):
            assert got.shape == grid.shape and np.array_equal(got.ravel(), want[:k])
        d = formats.decompose(t, enc.astype(carrier)[1::3])
        for got, want in zip(d, (avail, neg, sig, exp)):
            assert np.array_equal(got, want[1::3])
        i = len(enc) - 1
        d = formats.decompose(t, np.asarray(enc[i], carrier))
        assert all(a.shape == () for a in d)
        assert (bool(d.available), bool(d.negative), int(d.significand), int(d.exponent)) == (
            bool(avail[i]), bool(neg[i]), int(sig[i]), int(exp[i]))
        d = formats.decompose(t, np.zeros((0, 3), carrier))
        assert all(a.shape == (0, 3) for a in d)
    _expect_path(request, spy)


def test_x2_high_lane_kernel_equals_reference(kernel_path: _Spy) -> None:
    """The vectors decode the low nibble of X2 types; lane 1 is checked against the reference engine."""
    codes = np.arange(256, dtype=np.uint8)
    for t in LUT_TYPES:
        if formats.lanes_per_carrier(t) != 2:
            continue
        got = formats.decompose(t, codes, lane=1)
        want = formats.decompose(t, codes, lane=1, engine="reference")
        for g, w in zip(got, want):
            assert np.array_equal(g, w), t
    assert kernel_path.calls > 0


def test_packed_table_round_trips_every_lut_type() -> None:
    for t in LUT_TYPES:
        for lane in range(formats.lanes_per_carrier(t)):
            lut = formats._lut(t, lane)
            packed = kdec.packed_table((("test", t), lane), lut.se[:, 0], lut.se[:, 1], lut.flags[:, 0], lut.flags[:, 1])
            assert packed.dtype == np.int32 and packed.size == 1 << formats.carrier_bits(t)


def test_arithmetic_kernel_only_where_it_reproduces_the_table() -> None:
    """FP16/BF16 use the branch-free arithmetic kernel; a table it does not reproduce is refused,
    and the 8-bit and X2 formats stay on the table kernel."""
    for t in LUT_TYPES:
        lut = formats._lut(t, 0)
        cols = (lut.se[:, 0], lut.se[:, 1], lut.flags[:, 0], lut.flags[:, 1])
        got = kdec._ieee_params((("probe", t), 0), formats.descriptor(t), *cols)
        assert (got is not None) == (t in (TileDataType.FP16, TileDataType.BF16)), t
    lut = formats._lut(TileDataType.FP16, 0)
    bad_exp = lut.se[:, 1].copy()
    bad_exp[0x3C00] += 1  # 1.0 decoded with a wrong exponent
    assert kdec._ieee_params((("bad", 1), 0), formats.descriptor("FP16"), lut.se[:, 0], bad_exp,
                             lut.flags[:, 0], lut.flags[:, 1]) is None


def test_packed_table_rejects_fields_that_do_not_fit() -> None:
    one = np.ones(1, bool)
    with pytest.raises(ValueError):
        kdec.packed_table(("too-wide", 0), np.array([1 << 16], np.uint64), np.zeros(1, np.int64), one, one)
    with pytest.raises(ValueError):
        kdec.packed_table(("too-low", 0), np.ones(1, np.uint64), np.array([-(1 << 13) - 1]), one, one)


# --------------------------------------------------------------------------- kernel vs reference (hypothesis)


@settings(max_examples=150, deadline=None)
@given(src=st.sampled_from(["FP16", "BF16", "FP32"]), mode=st.sampled_from(MODES), sat=st.booleans(),
       data=st.data())
def test_tcvt_kernel_equals_reference(src: str, mode: str, sat: bool, data: st.DataObject) -> None:
    width = 32 if src == "FP32" else 16
    fb = {"FP16": 10, "BF16": 7, "FP32": 23}[src]
    # bias toward the interesting places: exact powers, subnormals, near the sqrt(2) midpoint, extremes
    sig = st.one_of(st.integers(0, (1 << fb) - 1), st.sampled_from([0, 1, 2, (1 << fb) - 1, 1 << (fb - 1)]),
                    st.integers(int(0.41421356 * (1 << fb)) - 3, int(0.41421356 * (1 << fb)) + 3))
    enc = st.builds(lambda s, e, f: (s << (width - 1)) | (e << fb) | f,
                    st.integers(0, 1), st.integers(0, (1 << (width - 1 - fb)) - 1), sig)
    values: List[int] = data.draw(st.lists(st.one_of(enc, st.integers(0, (1 << width) - 1)), min_size=1, max_size=64))
    bits = np.array(values, np.uint32 if width == 32 else np.uint16)
    got = ktcvt.to_e8m0_kernel(bits, tcvt._LAYOUTS[TileDataType[src]], RoundingMode[mode], sat, tcvt._fast_rule)
    want = tcvt.to_e8m0(bits, src_type=src, rmode=mode, sat=sat, engine="reference")
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@settings(max_examples=100, deadline=None)
@given(t=st.sampled_from(LUT_TYPES), data=st.data())
def test_decompose_kernel_equals_reference(t: TileDataType, data: st.DataObject) -> None:
    lane = data.draw(st.integers(0, formats.lanes_per_carrier(t) - 1))
    width = formats.carrier_bits(t)
    values = data.draw(st.lists(st.integers(0, (1 << width) - 1), min_size=1, max_size=64))
    codes = np.array(values, np.uint8 if width == 8 else np.uint16)
    lut = formats._lut(t, lane)
    table = kdec.packed_table((t, lane), lut.se[:, 0], lut.se[:, 1], lut.flags[:, 0], lut.flags[:, 1])
    got = kdec.decompose_kernel(codes, table)
    want = formats.decompose(t, codes, lane=lane, engine="reference")
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def test_tcvt_16bit_kernel_exhaustive_equals_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """All 65536 FP16/BF16 encodings, every mode and Sat: kernel == numpy fallback table.

    (The fallback table itself is checked row by row against the ASL vectors in
    tests/test_tcvt.py, and the vectors hold every 16-bit encoding.)"""
    allbits = np.arange(1 << 16, dtype=np.uint16)
    monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
    for src in ("FP16", "BF16"):
        for mode in MODES:
            for sat in (False, True):
                monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "0")
                k = tcvt.to_e8m0(allbits, src_type=src, rmode=mode, sat=sat)
                monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
                n = tcvt.to_e8m0(allbits, src_type=src, rmode=mode, sat=sat)
                assert np.array_equal(k[0], n[0]) and np.array_equal(k[1], n[1]), (src, mode, sat)


def test_tcvt_kernel_input_dtypes_and_shapes(tcvt_groups: TcvtGroups, kernel_path: _Spy) -> None:
    """Wide unsigned arrays, Python lists, 0-d and empty inputs reach the kernel and give the vector bits."""
    bits, eb, ef = tcvt_groups[("FP32", "RNE", 0)]
    for dt in (np.uint32, np.uint64):
        codes, flags = tcvt.to_e8m0(bits.astype(dt), src_type="FP32", rmode="RNE")
        assert np.array_equal(codes, eb) and np.array_equal(flags, ef), dt
    # An integer array narrower than the source carrier is almost always FP16/BF16 data given as FP32:
    # refused before any result (a Python list of ints is fine: its values are checked instead).
    small = bits < np.uint64(1 << 16)
    assert np.count_nonzero(small) >= 1
    with pytest.raises(UsageError, match="uint16 array cannot hold 32-bit source encodings"):
        tcvt.to_e8m0(bits[small].astype(np.uint16), src_type="FP32", rmode="RNE")
    codes, flags = tcvt.to_e8m0([int(b) for b in bits[:50]], src_type="FP32", rmode="RNE")
    assert np.array_equal(codes, eb[:50]) and np.array_equal(flags, ef[:50])
    codes, flags = tcvt.to_e8m0(int(bits[7]), src_type="FP32", rmode="RNE")
    assert codes.shape == () and (int(codes), int(flags)) == (int(eb[7]), int(ef[7]))
    b16, e16, f16 = tcvt_groups[("BF16", "RTO", 1)]
    lo = b16 < np.uint64(256)
    with pytest.raises(UsageError, match="uint8 array cannot hold 16-bit source encodings"):
        tcvt.to_e8m0(b16[lo].astype(np.uint8), src_type="BF16", rmode="RTO", sat=True)
    codes, flags = tcvt.to_e8m0(b16[lo].astype(np.uint16), src_type="BF16", rmode="RTO", sat=True)
    assert np.array_equal(codes, e16[lo]) and np.array_equal(flags, f16[lo])
    codes, flags = tcvt.to_e8m0(np.zeros((3, 0), np.uint32), src_type="FP32")
    assert codes.shape == flags.shape == (3, 0)
    assert kernel_path.calls > 0
