"""The compiled fast engine (ptonum.kernels.postprocess) and its numpy fallback.

Expected values: the ASL conformance vectors (postprocess_element, reduction_step)
and the reference engine (exact Python ints/Fractions following the ASL step by
step, itself checked against every vector in test_fpatr_element.py /
test_fpatr_reduction.py).  Every vector row runs through the kernel path and
through the numpy fallback (``PTONUM_DISABLE_NUMBA=1``), so both fast paths
stay covered whatever the default is.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptonum.encode import encode_fast, encode_reference
from ptonum.errors import UsageError
from ptonum.fpatr.attributes import MODE_TABLE
from ptonum.fpatr.element import postprocess_element
from ptonum.fpatr.tile import postprocess
from ptonum.kernels import NUMBA_AVAILABLE, numba_enabled
from ptonum.rounding import RoundingMode

from test_fpatr_element import legal_config  # noqa: E402
from test_fpatr_reduction import SPECIALS  # noqa: E402
from test_fpatr_tile import _legal_words, _random_acc, _random_config, _relu_words  # noqa: E402


def test_numba_is_installed():
    # numba is a runtime dependency: without it the kernel-path tests below would test nothing,
    # so its absence fails the run instead of skipping them.
    assert NUMBA_AVAILABLE


PATHS = ["kernel", "numpy"]


@pytest.fixture(autouse=True, scope="module")
def _kernels_for_every_size() -> Any:
    """Small calls normally take the numpy path (no compile); here the kernels take every call."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")
        yield


@pytest.fixture(params=PATHS)
def path(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Select the compiled kernels or the numpy fallback of the fast engine."""
    if request.param == "numpy":
        monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
        assert not numba_enabled()
    else:
        monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
        monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")  # every call, however small, takes the kernel
        assert numba_enabled(1)
    return str(request.param)


def _use(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "numpy":
        monkeypatch.setenv("PTONUM_DISABLE_NUMBA", "1")
    else:
        monkeypatch.delenv("PTONUM_DISABLE_NUMBA", raising=False)
        monkeypatch.setenv("PTONUM_KERNEL_MIN_ELEMENTS", "0")


def _hex(r: Dict[str, str], k: str) -> int:
    return int(r[k], 16)


# ------------------------------------------------------------------ ASL vectors


def test_postprocess_element_vectors(vectors: Any, path: str) -> None:
    """Every postprocess_element row (52,032, TileProfileMatrixPostProcessWithFlags) through this path."""
    groups: Dict[Tuple[str, ...], List[Dict[str, str]]] = defaultdict(list)
    for r in vectors("postprocess_element"):
        groups[(r["pre_quant_mode"], r["relu_mode"], r["acc_type"], r["rmode"], r["sat"])].append(r)
    total = 0
    failures = []
    for (mode, relu, acc, rmode, sat), rows in groups.items():
        a = np.array([_hex(r, "acc_bits") for r in rows], np.uint32)
        q = np.array([_hex(r, "quant_param") for r in rows], np.uint64)
        p = np.array([_hex(r, "relu_param") for r in rows], np.uint64)
        b, f = postprocess_element(a, pre_quant_mode=int(mode), relu_mode=int(relu), acc_type=acc,
                                   quant_param=q, relu_param=p, rmode=rmode, sat=sat == "1")
        eb = np.array([_hex(r, "expected_bits") for r in rows])
        ef = np.array([_hex(r, "expected_flags") for r in rows])
        bad = np.flatnonzero((b.astype(np.int64) != eb) | (f.astype(np.int64) != ef))
        failures += [(rows[i], hex(int(b[i])), hex(int(f[i]))) for i in bad[:3]]
        total += len(rows)
    assert total == 52032
    assert not failures, failures[:5]


def test_postprocess_element_vectors_one_word_per_call(vectors: Any, path: str) -> None:
    """Scalar (broadcast) parameter words and 2-D shapes: rows grouped by their word, as a 2-row array."""
    groups: Dict[Tuple[str, ...], List[Dict[str, str]]] = defaultdict(list)
    for r in vectors("postprocess_element"):
        groups[(r["pre_quant_mode"], r["relu_mode"], r["acc_type"], r["rmode"], r["sat"],
                r["quant_param"], r["relu_param"])].append(r)
    checked = 0
    for key, rows in groups.items():
        if len(rows) < 4:
            continue
        rows = rows[: len(rows) // 2 * 2]
        a = np.array([_hex(r, "acc_bits") for r in rows], np.uint32).reshape(2, -1)
        b, f = postprocess_element(a, pre_quant_mode=int(key[0]), relu_mode=int(key[1]), acc_type=key[2],
                                   quant_param=int(key[5], 16), relu_param=int(key[6], 16), rmode=key[3],
                                   sat=key[4] == "1")
        assert b.shape == a.shape
        assert b.ravel().tolist() == [_hex(r, "expected_bits") for r in rows], key
        assert f.ravel().tolist() == [_hex(r, "expected_flags") for r in rows], key
        checked += len(rows)
    assert checked > 4000


def test_reduction_step_vectors_kernel(vectors: Any) -> None:
    """Every reduction_step row (TileProfileMatrixReductionStepWithFlags) through the compiled step."""
    from ptonum.kernels.postprocess import reduction_step_values

    groups: Dict[Tuple[str, str], List[Dict[str, str]]] = defaultdict(list)
    for r in vectors("reduction_step"):
        groups[(r["acc_type"], r["max_abs"])].append(r)
    total = 0
    for (t, ma), rows in groups.items():
        cur = np.array([_hex(r, "current_bits") for r in rows], np.uint32)
        cand = np.array([_hex(r, "candidate_bits") for r in rows], np.uint32)
        b, f = reduction_step_values(cur, cand, t, ma == "1")
        assert b.tolist() == [_hex(r, "expected_bits") for r in rows], (t, ma)
        assert f.tolist() == [_hex(r, "expected_flags") for r in rows], (t, ma)
        total += len(rows)
    assert total == 48000


def test_reduction_step_vectors_as_two_column_tiles(vectors: Any, path: str) -> None:
    """A 1 x 2 tile [candidate-free current, candidate] folds to step(current, candidate) when
    MaxAbs is off (first element, then one step) -- the fused fold against the ASL step vectors."""
    groups: Dict[str, List[Dict[str, str]]] = defaultdict(list)
    for r in vectors("reduction_step"):
        if r["max_abs"] == "0":
            groups[r["acc_type"]].append(r)
    for t, rows in groups.items():
        rows = rows[:3000]
        acc = np.array([[_hex(r, "current_bits"), _hex(r, "candidate_bits")] for r in rows], np.uint32)
        res = postprocess(acc, acc_type=t, attributes=dict(pre_quant_mode=0, row_max_en=1))
        assert res.row_max_bits.ravel().tolist() == [_hex(r, "expected_bits") for r in rows], t
        assert res.flags == int(np.bitwise_or.reduce([_hex(r, "expected_flags") for r in rows])), t
        assert np.array_equal(res.d_bits, acc)  # mode 0 without activation: raw bits


# ------------------------------------------------------------------ differential (reference engine oracle)


@settings(max_examples=250, deadline=None)
@given(legal_config())
def test_kernel_matches_reference_random_configurations(cfg: Dict[str, Any]) -> None:
    assert numba_enabled(1)
    bk, fk = postprocess_element(**cfg, engine="fast")
    br, fr = postprocess_element(**cfg, engine="reference")
    assert bk.dtype == br.dtype
    assert bk.tolist() == br.tolist() and fk.tolist() == fr.tolist()


@settings(max_examples=200, deadline=None)
@given(legal_config(), st.booleans())
def test_kernel_scalar_words_match_reference(cfg: Dict[str, Any], scalar_relu: bool) -> None:
    """One broadcast word per call (the tile's scalar modes and ReluMode 2 shape)."""
    cfg = dict(cfg)
    cfg["quant_param"] = int(cfg["quant_param"][0])
    if scalar_relu:
        cfg["relu_param"] = int(cfg["relu_param"][0])
    bk, fk = postprocess_element(**cfg, engine="fast")
    br, fr = postprocess_element(**cfg, engine="reference")
    assert bk.tolist() == br.tolist() and fk.tolist() == fr.tolist()


_DESTS = ["S4X2", "S8", "S16", "S32", "U32", "FP32", "FP16", "BF16", "E4M3", "HiF8"]
_MODES = [m for m in RoundingMode if m is not RoundingMode.NONE]


def _interesting_values(rng: np.random.Generator, n: int) -> np.ndarray:
    mags = 2.0 ** rng.uniform(-160, 140, n)
    ints = rng.integers(-(1 << 40), 1 << 40, n).astype(np.float64)
    halves = rng.integers(-300000, 300000, n) + 0.5
    edges = np.array([0.0, -0.0, 448.0, 464.0, 480.0, -448.0, 32768.0, 36864.0, -32768.0, 65504.0, 65520.0,
                      2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -133, 2.0 ** -134, 2.0 ** -149,
                      2.0 ** -150, 3 * 2.0 ** -151, 2.0 ** -22, 2.0 ** -23, 1.5 * 2.0 ** -23, 2.0 ** -9,
                      2.0 ** -10, 127.5, -128.5, 2147483647.5, -2147483648.5, 4294967295.5, 2.0 ** 128,
                      3.4028235677973366e38, 3.4028235677973366e38 * (1 + 2.0 ** -30), 7.5, -8.5, 2.0 ** 64])
    v = np.concatenate([mags * rng.choice([-1.0, 1.0], n), ints, halves, ints * 2.0 ** -30, edges, -edges])
    return v


@pytest.mark.parametrize("dst", _DESTS)
def test_encode_fast_kernel_numpy_reference_agree(dst: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """encode_fast through the kernel and through numpy against encode_reference (MatrixEncodeReal)."""
    rng = np.random.default_rng(hash(dst) % 2**32)
    v = _interesting_values(rng, 150)
    for mode in _MODES:
        for sat in (False, True):
            got = {}
            for p in PATHS:
                _use(p, monkeypatch)
                b, f = encode_fast(v, dst, mode, sat)
                got[p] = (b.tolist(), f.tolist())
            ref = [encode_reference(float(x), dst, mode, sat) for x in v]
            exp = ([b for b, _ in ref], [f for _, f in ref])
            assert got["kernel"] == exp, (dst, mode, sat)
            assert got["numpy"] == exp, (dst, mode, sat)


def test_encode_fast_kernel_rejects_nonfinite_with_index(monkeypatch: pytest.MonkeyPatch) -> None:
    _use("kernel", monkeypatch)
    v = np.zeros((3, 40000))
    v[2, 39999] = np.nan
    v[1, 5] = np.inf
    with pytest.raises(UsageError, match=r"values\[1, 5\]"):
        encode_fast(v, "FP16", RoundingMode.RNE, False)


# ------------------------------------------------------------------ tiles: kernel vs numpy vs reference


@pytest.mark.parametrize("mode", sorted(MODE_TABLE))
def test_tile_kernel_numpy_reference_agree(vectors: Any, mode: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random tiles (NaNs, infinities, INT_MIN, -0 among them), every GroupN code, RowMaxInit, MaxAbs."""
    legal, _ = _legal_words(vectors)
    relu_ok, _ = _relu_words(vectors)
    rng = np.random.default_rng(7000 + mode)
    for k in range(5):
        m, n = int(rng.integers(1, 5)), int(rng.integers(1, 150))
        t, attrs, rmode, sat, kw = _random_config(rng, mode, legal, relu_ok, m, n)
        attrs["group_n_code"] = k * 2 + int(rng.integers(0, 2))
        attrs["group_max_en"] = attrs["group_n_code"] != 0
        if not (attrs["row_max_en"] or attrs["group_max_en"]):
            attrs["max_abs_en"] = False
        acc = _random_acc(rng, m, n, t)
        acc[0, 0] = 0x80000000  # INT_MIN / -0
        results = {}
        for p in PATHS:
            _use(p, monkeypatch)
            results[p] = postprocess(acc, acc_type=t, attributes=attrs, rmode=rmode, sat=sat, **kw)
        results["reference"] = postprocess(acc, acc_type=t, attributes=attrs, rmode=rmode, sat=sat,
                                           engine="reference", **kw)
        ref = results["reference"]
        for p in PATHS:
            res = results[p]
            assert np.array_equal(res.d_bits, ref.d_bits), (p, attrs)
            assert res.flags == ref.flags, (p, attrs)
            for a, b in ((res.row_max_bits, ref.row_max_bits), (res.group_max_bits, ref.group_max_bits)):
                assert (a is None and b is None) or np.array_equal(a, b), (p, attrs)


def test_tile_special_rows_fold_like_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """All-NaN rows, sNaN, +-0 mixes, INT_MIN with MaxAbs, single-column groups."""
    rows = [
        [0x7FC00000, 0x7F800001, 0xFFC00000],           # all NaN, one signalling
        [0x80000000, 0x80000000, 0x80000000],           # all -0
        [0x80000000, 0x00000000, 0x7FA00000],           # -0, +0, sNaN
        [0xFF800000, 0x7F800000, 0x80000001],           # infinities
        [0x80000000, 0x7FFFFFFF, 0xFFFFFFFF],           # INT_MIN and friends (as S32/U32)
    ]
    acc = np.array(rows, np.uint32)
    for t in ("FP32", "S32", "U32"):
        for ma in (False, True):
            for code in (0, 1):
                attrs = dict(pre_quant_mode=0, row_max_en=1, group_max_en=code != 0, group_n_code=code,
                             max_abs_en=ma)
                ref = postprocess(acc, acc_type=t, attributes=attrs, engine="reference")
                for p in PATHS:
                    _use(p, monkeypatch)
                    res = postprocess(acc, acc_type=t, attributes=attrs)
                    assert np.array_equal(res.row_max_bits, ref.row_max_bits), (p, t, ma)
                    assert res.flags == ref.flags, (p, t, ma, code)
                    if code:
                        assert np.array_equal(res.group_max_bits, ref.group_max_bits), (p, t, ma)
    assert set(SPECIALS)  # the reduction specials used by _random_acc are non-empty


def test_large_tile_fast_paths_match_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The branch-free BF16 loop, the inline FP32 -> FP16/E4M3/HiF8/FP32 loop and the S32+offset loop
    over a 12 x 96 tile with every special encoding: kernel, numpy fallback and reference engine agree."""
    rng = np.random.default_rng(3)
    m, n = 12, 96
    with np.errstate(over="ignore"):
        x = (rng.standard_normal((m, n)) * 2.0 ** rng.integers(-140, 130, (m, n))).astype(np.float32)
    x = x.view(np.uint32)
    x = x.copy()
    x.ravel()[: len(SPECIALS)] = SPECIALS
    x[1, :16] = [0x7F7F8000, 0x7F7FFFFF, 0xFF7F8000, 0x007F8000, 0x00000001, 0x80008000, 0x3F808000, 0x3F818000,
                 0x7FA00000, 0xFFC00001, 0x7F800000, 0xFF800000, 0x80000000, 0, 0x807FFFFF, 0x43E00000]
    s32 = rng.integers(-(1 << 31), 1 << 31, (m, n), dtype=np.int64).astype(np.uint32)
    s32[0, :3] = [0x80000000, 0x7FFFFFFF, 0]
    cases = [
        (x, "FP32", dict(pre_quant_mode="F322BF16"), {}),
        (x, "FP32", dict(pre_quant_mode="F322BF16", relu_mode=1, row_max_en=1), {}),
        (x, "FP32", dict(pre_quant_mode="F322F16", group_max_en=1, group_n_code=3), {}),
        (x, "FP32", dict(pre_quant_mode="QF322FP8_PRE", relu_mode=2), dict(quant_param=0x3F800000,
                                                                           relu_param=0x1F000)),
        (x, "FP32", dict(pre_quant_mode="QF322HIF8_PRE"), dict(quant_param=0x3E000000)),
        (x, "FP32", dict(pre_quant_mode="QF322F32_PRE", relu_mode=1), dict(quant_param=0x40000000)),
        (s32, "S32", dict(pre_quant_mode="REQ8", relu_mode=1, row_max_en=1, max_abs_en=1),
         dict(quant_param=0x39800000 | (0x1F0 << 37))),
        (s32, "S32", dict(pre_quant_mode="VREQ4", relu_mode=3),
         dict(quant_tile=np.full((1, n), 0x30000000 | (3 << 37), np.uint64),
              relu_tile=np.full((1, n), 0x1F000, np.uint64))),
        (s32, "S32", dict(pre_quant_mode="DEQS16"), dict(quant_param=0x38000000 | (0x10000 << 37))),
    ]
    for acc, t, attrs, kw in cases:
        for sat in (False, True):
            info = MODE_TABLE[int(__import__("ptonum").fpatr.parse_pre_quant_mode(attrs["pre_quant_mode"]))]
            if not info.sat_programmable and sat:
                continue
            rm = "NONE" if info.fixed_rounding is not None else "RTO"
            out = {}
            for p in PATHS:
                _use(p, monkeypatch)
                out[p] = postprocess(acc, acc_type=t, attributes=attrs, rmode=rm, sat=sat, **kw)
            ref = postprocess(acc, acc_type=t, attributes=attrs, rmode=rm, sat=sat, engine="reference", **kw)
            for a in (out["kernel"], out["numpy"]):
                assert np.array_equal(a.d_bits, ref.d_bits) and a.flags == ref.flags, (attrs, sat)
                for u, v in ((a.row_max_bits, ref.row_max_bits), (a.group_max_bits, ref.group_max_bits)):
                    assert (u is None and v is None) or np.array_equal(u, v)


def test_compile_all_reports_time() -> None:
    from ptonum.kernels.postprocess import compile_all

    assert compile_all() >= 0.0
