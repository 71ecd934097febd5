"""The compiled fast engine (ptonum.kernels.postprocess) and its numpy fallback.

Expected values: the ASL conformance vectors (postprocess_element, reduction_step)
and the reference engine (exact Python ints/Fractions following the ASL step by
step, itself checked against every vector in test_fpatr_element.py /
test_fpatr_reduction.py).  Every vector row runs through the kernel path and
through the numpy fallback (``PTONUM_DISABLE_NUMBA=1``), so both fast paths
stay covered whatever the default is.
"""

from __future__ import annotations

import functools
import operator
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


def test_tile_parameter_rows_follow_the_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's parameter rows are kept per configuration and words (kernels.postprocess._tile_params):
    a quant tile changed in place, another scalar word, or a tile that differs in one column each give
    their own result (the reference engine's), never the kept rows of an earlier call."""
    _use("kernel", monkeypatch)
    from ptonum import fpatr

    rng = np.random.default_rng(17)
    m, n = 3, 40
    acc = rng.integers(-(1 << 20), 1 << 20, (m, n), dtype=np.int32)
    words = np.array([int(fpatr.quant_param(float(s), int(o), mode="VREQ8", rounding="rne"))
                      for s, o in zip(rng.uniform(0.5, 2.0, n) * 2.0 ** -12, rng.integers(-20, 20, n))], np.uint64)
    vreq8 = dict(pre_quant_mode="VREQ8", relu_mode="RELU", row_max_en=True)
    req8 = dict(pre_quant_mode="REQ8")
    rq = [int(fpatr.quant_param(2.0 ** -12, 3, mode="REQ8")), int(fpatr.quant_param(2.0 ** -11, -2, mode="REQ8"))]
    calls: List[Tuple[Dict[str, Any], Dict[str, Any]]] = [(vreq8, dict(quant_tile=words))]
    seen = []
    for step in range(4):
        if step == 1:
            words[7] = int(fpatr.quant_param(2.0 ** -9, 5, mode="VREQ8", rounding="rne"))  # in place
        if step == 2:
            calls = [(vreq8, dict(quant_tile=words.copy()[::-1].copy())), (req8, dict(quant_param=rq[0]))]
        if step == 3:
            calls = [(req8, dict(quant_param=rq[1]))]
        for attrs, kw in calls:
            got = postprocess(acc, acc_type="S32", attributes=attrs, sat=True, **kw)
            ref = postprocess(acc, acc_type="S32", attributes=attrs, sat=True, engine="reference", **kw)
            assert np.array_equal(got.d_bits, ref.d_bits) and got.flags == ref.flags, (step, attrs)
            assert (got.row_max_bits is None) == (ref.row_max_bits is None)
            assert got.row_max_bits is None or np.array_equal(got.row_max_bits, ref.row_max_bits)
            seen.append(got.d_bits)
    assert not np.array_equal(seen[0], seen[1])  # the in-place change reached the kernel
    assert not np.array_equal(seen[3], seen[4])  # two scalar words, two results


@pytest.mark.parametrize("block_elements", [1, 150])
def test_tile_rows_split_in_blocks_like_reference(block_elements: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tile kernel's threads take blocks of rows from a shared counter: with blocks of one row, and of
    three rows with a partial last block (37 x 50 tile), every row, RowMax, GroupMax and the flags are
    the reference engine's (S32 and FP32 row loops, and the general loop)."""
    _use("kernel", monkeypatch)
    from ptonum.kernels import postprocess as kp

    monkeypatch.setattr(kp, "TILE_BLOCK_ELEMENTS", block_elements)
    rng = np.random.default_rng(23)
    m, n = 37, 50
    s32 = rng.integers(-(1 << 24), 1 << 24, (m, n), dtype=np.int32)
    x = (rng.standard_normal((m, n)) * 50).astype(np.float32)
    folds = dict(row_max_en=1, group_max_en=1, group_n_code=1)
    cases = [
        (s32, "S32", dict(pre_quant_mode="REQ8", relu_mode=1, **folds), dict(quant_param=0x39800000 | (0x1F0 << 37))),
        (x, "FP32", dict(pre_quant_mode="F322BF16", **folds), {}),
        (x, "FP32", dict(pre_quant_mode="QF322FP8_PRE", **folds), dict(quant_param=0x3F800000)),
        (x, "FP32", dict(pre_quant_mode="QF322F32_PRE", relu_mode=1, row_max_en=1), dict(quant_param=0x40000000)),
    ]
    for acc, t, attrs, kw in cases:
        got = postprocess(acc, acc_type=t, attributes=attrs, sat=True, **kw)
        ref = postprocess(acc, acc_type=t, attributes=attrs, sat=True, engine="reference", **kw)
        assert np.array_equal(got.d_bits, ref.d_bits) and got.flags == ref.flags, attrs
        for u, v in ((got.row_max_bits, ref.row_max_bits), (got.group_max_bits, ref.group_max_bits)):
            assert (u is None and v is None) or np.array_equal(u, v), attrs


def test_compile_all_reports_time() -> None:
    from ptonum.kernels.postprocess import compile_all

    assert compile_all() >= 0.0


# ------------------------------------------------------------------ the S32 offset loop (REQ8/VREQ8, REQ4/VREQ4, DEQS16)
#
# The vectorized S32 row loop raises NX/OF from row-wide ORs and fuses the S5/S9/S17 clamp, the
# offset and the destination clamp into one clamp to per-column bounds.  Each element that can
# raise a flag is run alone in a row of exact, in-range zeros, so the tile's flags are that
# element's; expected bits and flags come from the reference engine.

_S32_OFFSET_MODES = {"VREQ8": (9, -128, 127), "VREQ4": (5, -8, 7), "VDEQS16": (17, -32768, 32767)}


def _scale_word(scale: float, off: int, offw: int) -> int:
    """A quantization word: FP19 scale (the FP32 bits, [31:13]) and the two's complement offset at [37 + offw - 1:37]."""
    bits = int(np.array(scale, np.float32).view(np.uint32))
    assert bits & 0x1FFF == 0 and float(np.float32(scale)) == scale, scale  # exactly an FP19 value
    return bits | ((off & ((1 << offw) - 1)) << 37)


def _s32_offset_cases(offw: int, dlo: int, dhi: int) -> List[Tuple[int, float, int]]:
    """(accumulator value, scale, offset) triples at the loop's decisions: ties and near-ties of every
    rounding, the S5/S9/S17 limits, the destination limits through the offset, huge and tiny products."""
    lim = 1 << (offw - 1)
    e = 0.125  # products acc/8: a tie at every acc = 4 mod 8
    cases = [(0, e, 0), (4, e, 0), (-4, e, 0), (12, e, 0), (-12, e, 0), (3, e, 0), (-5, e, 0), (20, e, 1),
             ((lim - 1) * 8, e, 0), ((lim - 1) * 8 + 4, e, 0), ((lim - 1) * 8 + 3, e, 0),
             (-lim * 8, e, 0), (-lim * 8 - 4, e, 0), (-lim * 8 - 5, e, 0), (-lim * 8 - 1, e, 0),
             ((dhi - 3 + 1) * 8, e, 3), ((dhi - 3) * 8 + 4, e, 3), ((dlo + 2 - 1) * 8, e, -2),
             ((dlo + 2) * 8 - 4, e, -2), ((lim - 1) * 8, e, -lim), (-lim * 8, e, lim - 1),
             (2**31 - 1, 2.0**20, 0), (-(2**31), 2.0**30, 0), (2**31 - 1, 2.0**100, 1), (-(2**31) + 1, 2.0**-40, 0),
             (-1, 2.0**-100, 0), (1, 2.0**-100, 0), (-1, 2.0**-1, 0), (0x7654321, 1.0 + 2.0**-10, 0),
             (-0x1234567, 2.0**-20 * (1.0 + 2.0**-10), 0),
             # the 32-bit lane (RNE, |scale| < 1): the NX mask of each scale class -- k >= 32 (only 0 exact),
             # k = 31 with INT_MIN (exact), a subnormal FP19 scale, scale 0 and -0, negative scales (ReLU keeps
             # a positive source's negative product), the largest scale below 1 at both S32 ends
             (2**31 - 1, 2.0**-33, 0), (-(2**31), 2.0**-31, 0), (-(2**31), -(2.0**-31), 1), (2**30, 2.0**-30, 0),
             (1 << 12, 2.0**-12 * (1.0 + 2.0**-10), 0), (-(3 << 20), 2.0**-130, 0), (0x7FFFFFF, 2.0**-130, 0),
             (123456, 0.0, -3), (-123456, -0.0, 2), (37, -0.375, 1), (-37, -0.375, 1), (20, -0.125, 0),
             (2**31 - 1, 1.0 - 2.0**-11, 0), (-(2**31), 1.0 - 2.0**-11, -lim), (-(2**31), -(1.0 - 2.0**-11), lim - 1),
             ((lim - 1) * 4 + 2, 0.25, 1), (-lim * 4 - 2, 0.25, -1), ((lim - 1) * 4 + 1, -0.25, 0)]
    return [(a, s, max(min(o, lim - 1), -lim)) for a, s, o in cases]


@pytest.mark.parametrize("mode", sorted(_S32_OFFSET_MODES))
def test_s32_offset_loop_each_element_like_reference(mode: str) -> None:
    """Row k holds case k on the diagonal (a vector body of 8 columns, then a scalar remainder) and
    exact zeros elsewhere; one word per element (``per_element``), so each row's flags are that case's."""
    offw, dlo, dhi = _S32_OFFSET_MODES[mode]
    # all cases (a scale >= 1 sends the call to the float64 loop), then the RNE/NONE-RELU cases alone with
    # every scale below 1: the 32-bit lane
    _s32_offset_diagonal(mode, _s32_offset_cases(offw, dlo, dhi), offw, ("RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB"),
                         (0, 1, 2) if mode == "VREQ8" else (0, 3))
    _s32_offset_diagonal(mode, [c for c in _s32_offset_cases(offw, dlo, dhi) if abs(c[1]) < 1.0], offw, ("RNE",),
                         (0, 1))


def _s32_offset_diagonal(mode: str, cases: List[Tuple[int, float, int]], offw: int, rmodes: Tuple[str, ...],
                         relus: Tuple[int, ...]) -> None:
    from ptonum.fpatr.element import element_config
    from ptonum.kernels.postprocess import run_tile
    from ptonum.tables import DESTINATIONS, TileDataType

    n = len(cases)
    acc = np.zeros((n, n), np.int64)
    acc[np.arange(n), np.arange(n)] = [a for a, _, _ in cases]
    bits = (acc & 0xFFFFFFFF).astype(np.uint32)
    words = np.full((n, n), _scale_word(0.125, 0, offw), np.uint64)
    words[np.arange(n), np.arange(n)] = [_scale_word(s, o, offw) for _, s, o in cases]
    alpha = np.full((n, n), int(np.array(0.5, np.float32).view(np.uint32)) >> 13, np.uint64)
    for relu in relus:
        for rmode in rmodes:
            for sat in (False, True):
                cfg = element_config(mode, relu, "S32", rmode, sat)
                out = np.empty(n * n, DESTINATIONS[cfg.dst].carrier)
                row_flags = np.zeros(n, np.uint8)
                run_tile(bits.ravel(), m=n, n=n, cfg=cfg.kernel, qp=words, rp=alpha, out=out, per_element=True,
                         red_type=TileDataType.S32, row_flags=row_flags)
                rb, rf = postprocess_element(np.diag(bits), pre_quant_mode=mode, relu_mode=relu, acc_type="S32",
                                             quant_param=np.diag(words), relu_param=np.diag(alpha), rmode=rmode,
                                             sat=sat, engine="reference")
                zb, zf = postprocess_element(0, pre_quant_mode=mode, acc_type="S32", quant_param=int(words[0, 1]),
                                             rmode=rmode, sat=sat, engine="reference")
                assert int(zb) == 0 and int(zf) == 0
                expected = np.zeros((n, n), out.dtype)
                expected[np.arange(n), np.arange(n)] = rb
                for k, (a, s, o) in enumerate(cases):
                    where = (mode, relu, rmode, sat, a, s, o)
                    assert out.reshape(n, n)[k].tolist() == expected[k].tolist(), where
                    assert int(row_flags[k]) == int(rf[k]), where


@pytest.mark.parametrize("mode", ["REQ8", "REQ4", "DEQS16"])
def test_s32_rne_lane_scalar_word_like_reference(mode: str) -> None:
    """One word for the call (its values held in registers by the 32-bit lane): each case with a scale
    below 1 in a row of its own, in the vector body and in the remainder, zeros elsewhere; bits and the
    row's flags against the reference engine, ReluMode NONE/RELU, Sat on and off."""
    from ptonum.fpatr.element import element_config
    from ptonum.kernels.postprocess import run_tile
    from ptonum.tables import DESTINATIONS, TileDataType

    offw, dlo, dhi = _S32_OFFSET_MODES["V" + mode]
    for a, scale, off in [c for c in _s32_offset_cases(offw, dlo, dhi) if abs(c[1]) < 1.0]:
        word = _scale_word(scale, off, offw)
        acc = np.zeros(9, np.int64)
        acc[[3, 8]] = a
        bits = (acc & 0xFFFFFFFF).astype(np.uint32)
        for relu in (0, 1):
            for sat in (False, True):
                cfg = element_config(mode, relu, "S32", "RNE", sat)
                out = np.empty(9, DESTINATIONS[cfg.dst].carrier)
                row_flags = np.zeros(1, np.uint8)
                run_tile(bits, m=1, n=9, cfg=cfg.kernel, qp=np.uint64(word), rp=np.uint64(0), out=out,
                         red_type=TileDataType.S32, row_flags=row_flags)
                rb, rf = postprocess_element(bits, pre_quant_mode=mode, relu_mode=relu, acc_type="S32",
                                             quant_param=word, rmode="RNE", sat=sat, engine="reference")
                where = (mode, relu, sat, a, scale, off)
                assert out.tolist() == rb.tolist(), where
                assert int(row_flags[0]) == int(np.bitwise_or.reduce(rf)), where


@pytest.mark.parametrize("n", [1, 7, 8, 9, 133])
def test_s32_offset_loop_rows_and_folds_like_reference(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole rows of every width class (inside one vector, exactly one, body + remainder), every
    RMode, Sat and ReluMode, with RowMax/GroupMax folded in the same pass (MaxAbs, INT_MIN in a later group,
    all-negative rows, RowMaxIn): kernel and numpy fallback against the reference engine."""
    rng = np.random.default_rng(n)
    m = 4
    for mode, (offw, dlo, dhi) in _S32_OFFSET_MODES.items():
        cases = [c for c in _s32_offset_cases(offw, dlo, dhi) if c[1] >= 2.0**-126]  # tile scales: positive normal
        pick = rng.integers(0, len(cases), (m, n))
        acc = np.array([[cases[c][0] for c in row] for row in pick], np.int64)
        acc[1] = -np.abs(acc[1]) - 1  # an all-negative row
        acc[2, -1] = -(2**31)  # INT_MIN in the last group (MaxAbs: OF)
        words = np.array([_scale_word(cases[c][1], cases[c][2], offw) for c in pick[0]], np.uint64)[None, :]
        alpha = rng.choice([0, 0x1F800, 0x20000, 0x1FC00], (1, n)).astype(np.uint64)
        bits = (acc & 0xFFFFFFFF).astype(np.uint32)
        for rmode in ("RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB"):
            relu = int(rng.integers(0, 4))
            sat = bool(rng.integers(0, 2))
            code = int(rng.integers(1, 10))
            row = rmode in ("RNE", "RTO", "RHB")  # GroupMax alone (with MaxAbs: OF from the groups only) otherwise
            attrs = dict(pre_quant_mode=mode, relu_mode=relu, row_max_en=row, row_max_init=rmode == "RTO",
                         group_max_en=1, group_n_code=code, max_abs_en=bool(rng.integers(0, 2)))
            kw: Dict[str, Any] = dict(quant_tile=words)
            if relu == 2:
                kw["relu_param"] = int(alpha[0, 0])
            elif relu == 3:
                kw["relu_tile"] = alpha
            if rmode == "RTO":
                kw["row_max_in"] = np.array([[5], [0xFFFFFFF0], [0x80000000], [0x7FFFFFFF]], np.uint32)
            ref = postprocess(bits, acc_type="S32", attributes=attrs, rmode=rmode, sat=sat, engine="reference", **kw)
            for p in PATHS:
                _use(p, monkeypatch)
                res = postprocess(bits, acc_type="S32", attributes=attrs, rmode=rmode, sat=sat, **kw)
                where = (p, mode, rmode, sat, attrs)
                assert np.array_equal(res.d_bits, ref.d_bits), where
                assert res.flags == ref.flags, where
                assert (res.row_max_bits is None and ref.row_max_bits is None
                        or np.array_equal(res.row_max_bits, ref.row_max_bits)), where
                assert np.array_equal(res.group_max_bits, ref.group_max_bits), where



@pytest.mark.parametrize("n", [13, 300])
def test_s32_rne_lane_group_fold_like_reference(n: int) -> None:
    """GroupMax folded into the 32-bit lane's pass (RNE, ReluMode NONE/RELU, every scale below 1): every
    GroupN (groups of a multiple of 8 columns, a shorter last group, a group wider than the row), MaxAbs
    on and off, RowMaxInit, INT_MIN and INT_MAX in inner groups, an all-negative row; per-column words
    (VREQ8, VDEQS16) and one word (REQ8, REQ4) against the reference engine."""
    rng = np.random.default_rng(n + 7)
    m = 4
    for mode, (offw, dlo, dhi) in _S32_OFFSET_MODES.items():
        cases = [c for c in _s32_offset_cases(offw, dlo, dhi) if 2.0**-126 <= c[1] < 1.0]
        pick = rng.integers(0, len(cases), (m, n))
        acc = np.array([[cases[c][0] for c in row] for row in pick], np.int64)
        acc[1] = -np.abs(acc[1]) - 1  # an all-negative row
        acc[2, min(9, n - 1)] = -(2**31)  # INT_MIN in the second group of GroupN 8 (MaxAbs: OF)
        acc[3, n // 2] = 2**31 - 1
        acc[0, n - 1] = -(2**31) + 1  # |INT_MIN + 1| = INT_MAX in the last (shorter) group
        bits = (acc & 0xFFFFFFFF).astype(np.uint32)
        words = np.array([_scale_word(cases[c][1], cases[c][2], offw) for c in pick[0]], np.uint64)[None, :]
        for code in range(1, 10):
            relu = code % 2
            sat = code % 3 != 0
            init = code % 4 == 0
            attrs = dict(pre_quant_mode=mode, relu_mode=relu, row_max_en=code != 5, row_max_init=init and code != 5,
                         group_max_en=1, group_n_code=code, max_abs_en=(code + n) % 2 == 1)
            one = mode[1:] if code % 2 == 0 else mode  # REQ8/REQ4/DEQS16: one word, its values in registers
            kw: Dict[str, Any] = dict(quant_param=int(words[0, code])) if one != mode else dict(quant_tile=words)
            if init:
                kw["row_max_in"] = np.array([[5], [0xFFFFFFF0], [0x80000000], [0x7FFFFFFF]], np.uint32)
            attrs["pre_quant_mode"] = one
            ref = postprocess(bits, acc_type="S32", attributes=attrs, rmode="RNE", sat=sat, engine="reference", **kw)
            res = postprocess(bits, acc_type="S32", attributes=attrs, rmode="RNE", sat=sat, **kw)
            where = (one, code, sat, attrs)
            assert np.array_equal(res.d_bits, ref.d_bits), where
            assert res.flags == ref.flags, where
            assert (res.row_max_bits is None and ref.row_max_bits is None
                    or np.array_equal(res.row_max_bits, ref.row_max_bits)), where
            assert np.array_equal(res.group_max_bits, ref.group_max_bits), where


@pytest.mark.parametrize("mode", ["VREQ8", "REQ8"])
def test_s32_rows_group_blocks_like_reference(mode: str) -> None:
    """GroupN 8/16/32 of the S32 RNE rows, sixteen groups at a time (_s32_gmax16 after each block of
    the 16-lane pass, the row's maximum from the blocks' results): rows of 1300 columns (per-column words:
    a 1024-column segment of whole blocks, then 276 columns -- two whole GroupN-8 blocks, one GroupN-16
    block, no GroupN-32 block --, single groups and a scalar tail of 4; one word: the same split of the
    whole row), and their first 1024 columns alone with scales near 2**-40 (whole blocks only, no element
    OF); all-negative groups, INT_MIN alone in a group and among others (in a row's third GroupN-8 block
    and in the blocks after the first 1024 columns), INT_MAX, -INT_MAX, MaxAbs on and off, RowMaxInit,
    GroupMax without RowMax, ReluMode NONE/RELU, Sat on and off, against the reference engine
    (GroupMaxOut, its OF flag, RowMaxOut)."""
    rng = np.random.default_rng(1100)
    m, n = 7, 1300
    acc = rng.integers(-(1 << 20), 1 << 20, (m, n)).astype(np.int64)
    acc[1] = -rng.integers(1, 1 << 31, n)  # all negative
    acc[2] = rng.integers(-(1 << 31), 1 << 31, n)  # full range: saturating
    acc[2, [5, 300, 1090]] = -(2**31)  # INT_MIN in a block and in the blocks after column 1024
    acc[3] = -rng.integers(1, 9, n)  # small negatives: every group all negative
    acc[3, [17, 700]] = -(2**31) + 1  # -INT_MAX: magnitude INT_MAX, no OF
    acc[4] = -(2**31)  # INT_MIN everywhere ...
    acc[4, [0, 511, 1099]] = 2**31 - 1  # ... but INT_MAX
    acc[5] = -rng.integers(1, 1 << 20, n)
    acc[5, 1030:] = rng.integers(0, 5, n - 1030)  # non-negative after the first segment only
    acc[6] = rng.integers(-3, 3, n)
    acc[6, 1160] = -(2**31)  # INT_MIN in the second GroupN-8 block after column 1024 only
    bits = (acc & 0xFFFFFFFF).astype(np.uint32)
    scales = rng.uniform(0.5, 2.0, n) * 2.0 ** -12
    offs = rng.integers(-20, 20, n)
    scales = np.ldexp(np.round(np.ldexp(scales, 22)), -22)  # at most 11 significant bits: FP19 values
    words = np.array([_scale_word(float(s), int(o), 9) for s, o in zip(scales, offs)], np.uint64)[None, :]
    kw: Dict[str, Any] = dict(quant_tile=words) if mode == "VREQ8" else dict(quant_param=int(words[0, 3]))
    # scales near 2**-40: no element overflows, so OF comes only from the folds (MaxAbs of INT_MIN)
    tiny = np.array([_scale_word(float(s) * 2.0 ** -28, int(o), 9) for s, o in zip(scales, offs)], np.uint64)[None, :]
    kw_tiny: Dict[str, Any] = (dict(quant_tile=tiny[:, :1024]) if mode == "VREQ8"
                               else dict(quant_param=int(tiny[0, 3])))
    init = np.array([[5], [0xFFFFFFF0], [0x80000000], [0x7FFFFFFF], [0], [7], [0x80000001]], np.uint32)
    k = 0
    for gn in (8, 16, 32):
        for max_abs in (False, True):
            for relu in (0, 1):
                k += 1
                row = not (max_abs and relu == 1)  # GroupMax alone: OF of INT_MIN from the groups only
                attrs = dict(pre_quant_mode=mode, relu_mode=relu, row_max_en=row, row_max_init=row and k % 3 == 0,
                             group_max_en=True, group_n=gn, max_abs_en=max_abs)
                kk = dict(kw, row_max_in=init) if row and k % 3 == 0 else kw
                sat = k % 2 == 0
                for w in (n, 1024):  # 1024: whole blocks only (the flags of INT_MIN from _s32_gmax16 alone)
                    if w < n:
                        kk = dict(kk, **kw_tiny)
                    b = np.ascontiguousarray(bits[:, :w])
                    ref = postprocess(b, acc_type="S32", attributes=attrs, rmode="RNE", sat=sat, engine="reference",
                                      **kk)
                    res = postprocess(b, acc_type="S32", attributes=attrs, rmode="RNE", sat=sat, **kk)
                    where = (mode, w, gn, max_abs, relu, sat)
                    assert np.array_equal(res.d_bits, ref.d_bits), where
                    assert res.flags == ref.flags, where
                    assert (res.row_max_bits is None and ref.row_max_bits is None
                            or np.array_equal(res.row_max_bits, ref.row_max_bits)), where
                    assert np.array_equal(res.group_max_bits, ref.group_max_bits), where


# ------------------------------------------------------------------ FP32 -> float row loops (vectorized)


def _f32(values: Any) -> np.ndarray:
    return np.asarray(values, np.float32).view(np.uint32)


def _boundary_sources() -> np.ndarray:
    """FP32 sources at the rounding boundaries of FP16/BF16/E4M3: ties (even and odd kept bit) at
    each precision, one ulp either side, subnormal and overflow edges, +-0, NaN/Inf."""
    base = []
    for m_bits in (11, 8, 4):  # FP16, BF16, E4M3 precisions (tie at half a unit of the last kept bit)
        for e in (-30, -24, -15, -14, -10, -7, -6, -3, 0, 5, 8, 15):
            for k in (1, 2, 3, 6, 7):
                base.append(np.ldexp(1.0 + k * 2.0 ** -(m_bits - 1) + 2.0 ** -m_bits, e))  # a tie
    ties = np.array(base, np.float32)
    bits = np.concatenate([_f32(ties), _f32(ties) + 1, _f32(ties) - 1])
    edges = _f32([65504.0, 65519.996, 65520.0, 65536.0, 448.0, 464.0, 449.0, 480.0, 2.0 ** -14, 2.0 ** -24,
                  2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11, 2.0 ** -6, 1.5 * 2.0 ** -126,
                  3.3895314e38, 1.0, 0.0])
    special = np.array([0x80000000, 0x00000001, 0x007FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x7F7FFFFF, 0x7F800000,
                        0x7FC00000, 0x7FA00000], np.uint32)
    x = np.concatenate([bits, edges, special])
    return np.concatenate([x, x | np.uint32(0x80000000)])


@pytest.mark.parametrize("mode,lib", [("F322F16", "numpy"), ("F322BF16", "ml_dtypes"),
                                      ("QF322FP8_PRE", "ml_dtypes")])
def test_fp32_float_loops_match_independent_conversion(mode: str, lib: str) -> None:
    """The vectorized FP32 -> FP16/BF16/E4M3 loops (scale 1, ReLU off, Sat off), one element per
    call so that the flags are per element, against numpy's IEEE float16 / ml_dtypes' bfloat16 and
    float8_e4m3fn conversions (the ASL's rules where they differ: E4M3 overflows above 448, and a
    negative value that rounds to zero gives +0); NaN/Inf sources against the reference engine."""
    import ml_dtypes

    from ptonum.flags import NX, OF, UF

    dt = {"F322F16": np.float16, "F322BF16": ml_dtypes.bfloat16, "QF322FP8_PRE": ml_dtypes.float8_e4m3fn}[mode]
    tiny = {"F322F16": 2.0 ** -14, "F322BF16": 2.0 ** -126, "QF322FP8_PRE": 2.0 ** -6}[mode]
    kw = {"quant_param": 0x3F800000} if mode == "QF322FP8_PRE" else {}
    x = _boundary_sources()
    row = np.tile(x[:, None], (1, 13))  # 13 columns: not a multiple of the vector width
    for i, src in enumerate(x):
        res = postprocess(row[i:i + 1], acc_type="FP32", attributes=dict(pre_quant_mode=mode), **kw)
        got = res.d_bits[0]
        assert (got == got[0]).all()
        v = float(np.array(src, np.uint32).view(np.float32))
        if not np.isfinite(v):
            ref = postprocess(row[i:i + 1, :1], acc_type="FP32", attributes=dict(pre_quant_mode=mode),
                              engine="reference", **kw)
            assert (int(got[0]), res.flags) == (int(ref.d_bits[0, 0]), ref.flags), hex(int(src))
            continue
        with np.errstate(over="ignore"):
            conv = np.array(v, np.float32).astype(dt)
        back = float(conv.astype(np.float64))
        if mode == "QF322FP8_PRE" and abs(v) > 448.0:
            want, flags = 0x7F, OF | NX
        else:
            want = int(conv.view(np.uint8 if mode == "QF322FP8_PRE" else np.uint16))
            if mode == "QF322FP8_PRE" and back == 0.0 and v != 0.0:
                want = 0  # only a -0 source keeps the sign (the signed-zero rule)
            flags = 0
            if np.isinf(back):
                flags = OF | NX
            elif back != v:
                flags = NX | (UF if abs(v) < tiny else 0)
        assert (int(got[0]), res.flags) == (want, flags), (hex(int(src)), v)


def _e4m3_product_cases() -> Tuple[List[Tuple[int, float]], Dict[str, int]]:
    """(FP32 source bits, FP19 scale) pairs whose exact product lands at the E4M3 loop's decisions: each
    binade's first codes, last codes and carries, the midpoints between codes (ties), 2^-10 (half the
    smallest subnormal), 2^-6 (tiny) and 448 (overflow), hit exactly, from either side within one
    float32 ulp (the product's float32 rounding lands *on* the decision while the exact value does not:
    the round-to-odd sticky cases) and a few ulps off; products that underflow or overflow float32.
    Also returns how many cases of each sticky kind the set holds (so the test knows it has them)."""
    import ml_dtypes

    codes = [0, 1, 2, 7, 8, 9, 15, 16, 17, 0x37, 0x38, 0x3F, 0x40, 0x41, 0x77, 0x78, 0x7D, 0x7E]
    vals = np.arange(0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    targets = sorted({float(vals[c]) for c in codes} | {float(vals[c] + vals[c + 1]) / 2 for c in codes if c < 0x7E}
                     | {2.0 ** -10, 2.0 ** -6, 448.0, 456.0, 464.0})
    cases: List[Tuple[int, float]] = []
    kinds = {"above": 0, "below": 0}
    for t in targets:
        for sc in (1.0 + 2.0 ** -10, 3.0, 0.75 * 2.0 ** -20, 0.125):
            x0 = int(np.array(t / sc, np.float32).view(np.uint32))
            for x in range(max(x0 - 1, 0), x0 + 2):
                exact = float(np.array(x, np.uint32).view(np.float32)) * sc  # exact in float64 (35 bits)
                if float(np.float32(exact)) == t and exact != t:
                    kinds["above" if exact > t else "below"] += 1
                cases.append((x, sc))
    cases += [(0x00000001, 2.0 ** -126), (0x00000001, 0.5), (0x00400000, 2.0 ** -126 * 1.5), (0x00000000, 2.0 ** -126),
              (0x7F7FFFFF, 2.0 ** 100), (0x7F7FFFFF, 1.0), (0x43E00001, 1.0), (0x43E00000, 1.0)]
    return cases + [(x | 0x80000000, sc) for x, sc in cases], kinds


def test_e4m3_loop_each_decision_like_reference() -> None:
    """The E4M3 row loop on every decision of :func:`_e4m3_product_cases`, one case per row of 13
    columns (one vector body and a scalar remainder; a word per element, so each row's flags are its
    case's), every ReluMode (alpha 0.375 and 0) and Sat: codes and row flags equal the reference
    engine's.  Rows that also hold a NaN/Inf/-0 source (redone apart) keep their other lanes' flags
    and get none of the special lane's garbage."""
    from ptonum.fpatr.element import element_config
    from ptonum.kernels.postprocess import run_tile
    from ptonum.tables import DESTINATIONS

    cases, kinds = _e4m3_product_cases()
    assert kinds["above"] >= 20 and kinds["below"] >= 20, kinds  # the sticky cases are really there
    specials = [0x7FC00000, 0x7FA00000, 0x7F800000, 0xFF800000, 0x80000000]
    comp = [c for c in cases[::17]][:len(specials) * 4]
    src = np.array([x for x, _ in cases] + [x for x, _ in comp], np.uint32)
    scales = [s for _, s in cases] + [s for _, s in comp]
    m, n = src.size, 13
    bits = np.repeat(src[:, None], n, axis=1)
    special_rows = np.arange(len(cases), m)
    bits[special_rows, 3] = [specials[k % len(specials)] for k in range(special_rows.size)]
    words = np.repeat(np.array([_scale_word(s, 0, 1) for s in scales], np.uint64)[:, None], n, axis=1)
    alpha = np.where(np.arange(m) % 3 == 0, 0, int(np.array(0.375, np.float32).view(np.uint32)) >> 13)
    alpha = np.repeat(alpha.astype(np.uint64)[:, None], n, axis=1)
    for relu in range(4):
        for sat in (False, True):
            cfg = element_config("QF322FP8_PRE", relu, "FP32", "NONE", sat)
            out = np.empty(m * n, DESTINATIONS[cfg.dst].carrier)
            row_flags = np.zeros(m, np.uint8)
            run_tile(bits.ravel(), m=m, n=n, cfg=cfg.kernel, qp=words, rp=alpha, out=out, per_element=True,
                     row_flags=row_flags)
            kw = dict(pre_quant_mode="QF322FP8_PRE", relu_mode=relu, acc_type="FP32", sat=sat, engine="reference")
            rb, rf = postprocess_element(bits[:, 0], quant_param=words[:, 0], relu_param=alpha[:, 0], **kw)
            sb, sf = postprocess_element(bits[special_rows, 3], quant_param=words[special_rows, 3],
                                         relu_param=alpha[special_rows, 3], **kw)
            want = np.repeat(rb[:, None], n, axis=1)
            want[special_rows, 3] = sb
            want_flags = rf.copy()
            want_flags[special_rows] |= sf
            got = out.reshape(m, n)
            for k in range(m):
                where = (relu, sat, hex(int(bits[k, 0])), hex(int(bits[k, 3])), scales[k])
                assert got[k].tolist() == want[k].tolist(), where
                assert int(row_flags[k]) == int(want_flags[k]), where


@pytest.mark.parametrize("sat", [False, True])
def test_hif8_key_table_against_en_dtypes(sat: bool) -> None:
    """The key table of the FP32 -> HiF8 loop (``hif8_key_table``): entry u is the HiF8 encoding
    under RHB of the float32 value of bits u << 16, checked against en_dtypes (an independent
    HiF8 implementation: round to nearest, ties away from zero, which is RHB on positive values
    and on every value that is not a tie).  Every key of a finite value up to 32768: the code, NX
    when en_dtypes' decoded code differs from the value, UF|NX when it also lies below 2^-15;
    every finite HiF8 value's key gives its own code with no flag; above 32768 the overflow code
    (``tables.DESTINATIONS``) with OF|NX; a NaN/Inf key the rare mark."""
    import en_dtypes

    from ptonum import tables
    from ptonum.kernels import postprocess as kp

    hif8 = tables.DESTINATIONS[tables.TileDataType.HiF8]
    nx, uf, of = (int(f) << kp.HIF8_KEY_FLAGS for f in (tables.NX, tables.UF, tables.OF))
    t = kp.hif8_key_table(sat).astype(np.int64)
    assert t.size == 1 << 16
    u = np.arange(1 << 16, dtype=np.uint32)
    v = (u << np.uint32(16)).view(np.float32)
    mag = u & 0x7FFF
    rare = mag >= 0x7F80
    assert (t[rare] == kp.HIF8_KEY_RARE).all()
    with np.errstate(invalid="ignore"):
        big = ~rare & (np.abs(v) > np.float32(32768.0))
    ovf = np.array([hif8.overflow_code(sat, neg) for neg in (False, True)], np.int64)[(u[big] >> 15).astype(np.int64)]
    assert (t[big] == (ovf | of | nx)).all()
    fin = ~rare & ~big
    # a tie of two HiF8 values has at most 5 significant bits: an odd key (bit 0 set) is never one
    lib = v[fin].astype(en_dtypes.hifloat8)
    code = lib.view(np.uint8).astype(np.int64)
    exact = lib.astype(np.float32) == v[fin]
    flags = np.where(exact, 0, np.where(np.abs(v[fin]) < np.float32(2.0 ** -15), uf | nx, nx))
    code = np.where(code == 0x80, 0, code)  # no -0 code: a value rounding to zero gives 0
    tie_free = (u[fin] & 1 == 1) | (u[fin] < 0x8000) | exact
    got = t[fin]
    assert ((got & 0xFF) == code)[tie_free].all()
    assert ((got >> 8) << 8 == flags).all()
    # every finite HiF8 code: the key of its value gives it back, exactly
    codes = np.arange(256, dtype=np.uint8)
    vals = codes.view(en_dtypes.hifloat8).astype(np.float32)
    ok = np.isfinite(vals) & (codes != 0x80)
    keys = vals[ok].view(np.uint32)
    assert (keys & 0xFFFF == 0).all()
    assert (t[keys >> 16] == np.where(vals[ok] == 0, 0, codes[ok])).all()


def _hif8_decision_sources(scale: float) -> np.ndarray:
    """FP32 sources whose product with ``scale`` lands on every HiF8 RHB decision: in every binade
    2^-23..2^15 each value and each midpoint to the next (ties, carries into the next binade at the
    top), one float32 either side of every midpoint, the denormal binades, below 2^-22, and the
    overflow edge above 2^15; both signs.  With scale != 1 the products are inexact (35 bits)."""
    from ptonum import tables

    vals = [0.0, 2.0 ** 15, 40960.0, 3.0e38, 2.0 ** -30, 2.0 ** -126, 2.0 ** -149]
    for e in range(tables.HIF8_TABLE_EMIN, 16):
        i = e - tables.HIF8_TABLE_EMIN
        mb = int(tables.HIF8_MBITS[i])
        q = 2.0 ** (max(e, tables.HIF8_DML_EMIN) - mb)  # the quantum (below 2^-22: 0 or 2^-22)
        for k in range(1 << mb):
            v = 2.0 ** e + k * q if e >= tables.HIF8_DML_EMIN else 0.0
            vals += [v, v + q / 2]
    t = np.array(vals, np.float64) / scale
    b = np.array(t, np.float32).view(np.uint32)
    b = np.concatenate([b, b + 1, b[b > 0] - 1, np.array([0x7F7FFFFF, 0x47000001], np.uint32)])
    return np.concatenate([b, b | np.uint32(0x80000000)])


@pytest.mark.parametrize("mode", ["F322BF16", "F322F16"])
def test_bf16_f16_rows_with_nan_keep_finite_flags_like_reference(mode: str) -> None:
    """The BF16/FP16 vector loops decide their flags once per row, and a NaN/Inf source spoils its
    lane's: a row with one takes the finite lanes' flags again.  Rows of 11 (a vector body of 8,
    then the scalar remainder): one NaN/Inf source at column k and one flag-raising source
    (overflow, tiny and inexact, inexact, exact) at column j, every other source exact; each row's
    flags and codes equal the reference engine's (flags ORed over the row), ReluMode NONE/RELU, Sat
    on/off."""
    from ptonum.fpatr.element import element_config
    from ptonum.kernels.postprocess import run_tile

    n = 11
    rare = [0x7FC00000, 0xFF800001, 0x7F800000, 0xFF800000]
    raising = [int(_f32(-70000.0)), 0x7F7FFFFF, int(_f32(3.0e-6)), 0x80000001, int(_f32(1.0 + 2.0 ** -20)),
               int(_f32(2.0))]
    rows = []
    for k in (0, 5, 9):
        for j in (2, 7, 10):
            for r in rare:
                for v in raising:
                    row = [int(_f32(1.5))] * n
                    row[k], row[j] = r, v
                    rows.append(row)
    bits = np.array(rows, np.uint32)
    m = bits.shape[0]
    for relu in (0, 1):
        for sat in (False, True):
            cfg = element_config(mode, relu, "FP32", "NONE", sat)
            out = np.empty(m * n, np.uint16)
            row_flags = np.zeros(m, np.uint8)
            run_tile(bits.ravel(), m=m, n=n, cfg=cfg.kernel, qp=np.uint64(0), rp=np.uint64(0), out=out,
                     row_flags=row_flags)
            rb, rf = postprocess_element(bits.ravel(), pre_quant_mode=mode, relu_mode=relu, acc_type="FP32", sat=sat,
                                         engine="reference")
            assert np.array_equal(out, rb), (relu, sat)
            assert np.array_equal(row_flags, np.bitwise_or.reduce(rf.reshape(m, n), axis=1)), (relu, sat)


@pytest.mark.parametrize("scale", [1.0, 3.0, 1.0 + 2.0 ** -10])
def test_hif8_loop_each_decision_like_reference(scale: float) -> None:
    """The vectorized FP32 -> HiF8 loop (RHB) on every rounding decision (:func:`_hif8_decision_sources`):
    row k holds source k in 9 columns (a vector body of 8, then the scalar remainder), so each
    row's flags are that element's; bits and flags equal the reference engine's for every ReluMode
    (LReLU alpha 0.375) and Sat on/off."""
    from ptonum.fpatr.element import element_config
    from ptonum.kernels.postprocess import run_tile

    src = _hif8_decision_sources(scale)
    m, n = src.size, 9
    bits = np.repeat(src, n)
    word = int(_f32(scale)) >> 13 << 13
    alpha = int(_f32(0.375)) >> 13
    for relu in (0, 1, 2):
        for sat in (False, True):
            cfg = element_config("QF322HIF8_PRE", relu, "FP32", "NONE", sat)
            out = np.empty(m * n, np.uint8)
            row_flags = np.zeros(m, np.uint8)
            run_tile(bits, m=m, n=n, cfg=cfg.kernel, qp=np.uint64(word), rp=np.uint64(alpha), out=out,
                     row_flags=row_flags)
            rb, rf = postprocess_element(src, pre_quant_mode="QF322HIF8_PRE", relu_mode=relu, acc_type="FP32",
                                         quant_param=word, relu_param=alpha, sat=sat, engine="reference")
            got = out.reshape(m, n)
            assert (got == got[:, :1]).all(), (relu, sat)
            bad = np.nonzero((got[:, 0] != rb) | (row_flags != rf))[0]
            assert bad.size == 0, [(hex(int(src[k])), hex(int(got[k, 0])), hex(int(rb[k])), int(row_flags[k]),
                                    int(rf[k])) for k in bad[:8]]


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "QF322HIF8_PRE"])
def test_fp8_scalar_multipliers_each_decision_like_reference(mode: str) -> None:
    """The FP32 -> E4M3/HiF8 rows with one scalar QuantParam (the multiplier rows constant and
    shared by every row: the general lanes take the multipliers as splatted scalars, and with
    ReluMode NONE (multiplier of a negative source = scale) without the blend by the source's
    sign) on every rounding decision (:func:`_e4m3_product_cases`, :func:`_hif8_decision_sources`):
    row k holds source k in 293 columns (one E4M3 chunk of 256 / nine HiF8 steps of 32, then the
    remainder), so each row's flags are that element's; codes and row flags equal the reference
    engine's for ReluMode NONE, RELU, LReLU (scalar alpha 0.375: the two multipliers differ) and
    PReLU (a per-column alpha row: the multiplier rows stay rows), Sat on/off."""
    from ptonum.fpatr.element import element_config
    from ptonum.kernels.postprocess import run_tile

    if mode == "QF322FP8_PRE":
        by_scale: Dict[float, List[int]] = defaultdict(list)
        for x, sc in _e4m3_product_cases()[0]:
            by_scale[sc].append(x)
        tiles = [(sc, np.array(xs, np.uint32)) for sc, xs in sorted(by_scale.items())]
    else:
        tiles = [(sc, _hif8_decision_sources(sc)) for sc in (1.625, 3.0, 1.0 + 2.0 ** -10)]
    n = 293
    alpha = int(_f32(0.375)) >> 13
    palpha = (_f32(np.linspace(0.125, 1.875, n)) >> np.uint32(13)).astype(np.uint64)
    for sc, src in tiles:
        m = src.size
        bits = np.repeat(src, n)
        word = _scale_word(sc, 0, 1)
        for relu in range(4):
            rp: Any = palpha if relu == 3 else np.uint64(alpha)
            for sat in (False, True):
                cfg = element_config(mode, relu, "FP32", "NONE", sat)
                out = np.empty(m * n, np.uint8)
                row_flags = np.zeros(m, np.uint8)
                run_tile(bits, m=m, n=n, cfg=cfg.kernel, qp=np.uint64(word), rp=rp, out=out, row_flags=row_flags)
                kw = dict(pre_quant_mode=mode, relu_mode=relu, acc_type="FP32", sat=sat, engine="reference")
                if relu == 3:  # a multiplier per column: every element
                    rb, rf = postprocess_element(np.repeat(src[:, None], n, axis=1), quant_param=word,
                                                 relu_param=np.broadcast_to(rp, (m, n)), **kw)
                else:  # row k is source k in every column: its element once, repeated
                    rb, rf = postprocess_element(src, quant_param=word, relu_param=alpha, **kw)
                    rb, rf = np.repeat(np.asarray(rb), n), np.repeat(np.asarray(rf), n)
                want_flags = np.bitwise_or.reduce(np.asarray(rf).reshape(m, n), axis=1)
                got = out.reshape(m, n)
                bad = np.nonzero((got != np.asarray(rb).reshape(m, n)).any(axis=1) | (row_flags != want_flags))[0]
                assert bad.size == 0, (sc, relu, sat, [(hex(int(src[k])), int(row_flags[k]), int(want_flags[k]))
                                                       for k in bad[:8]])


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "VQF322HIF8_PRE", "QF322HIF8_PRE", "F322BF16", "F322F16"])
def test_fp32_float_loops_scales_relu_sat_folds_match_reference(mode: str) -> None:
    """The vectorized loops with arbitrary FP19 scales (products of up to 35 bits, rounded to odd on
    float32 lanes), products below 2^-100 and above the largest finite value, ties, every ReluMode,
    Sat on/off, RowMax and GroupMax folded into the pass (with NaNs, MaxAbs): bits, flags and folds
    equal the reference engine's, on rows of 37 (not a multiple of the vector width)."""
    rng = np.random.default_rng(sum(map(ord, mode)))
    m, n = 3, 37
    e = rng.integers(-60, 30, size=(m, n))
    mant = rng.integers(0, 1 << 12, size=(m, n)) << rng.integers(0, 12, size=(m, n))
    acc = (((e + 127) << 23) | (mant & 0x7FFFFF)).astype(np.uint32) | (rng.integers(0, 2, (m, n)).astype(np.uint32) << 31)
    acc[0, :6] = [0x80000000, 0x7FC00000, 0xFF800000, 0x7FA00001, 0, 0x00000001]
    acc[1, :4] = _f32([448.0, 464.0, 32768.0, 40960.0])
    for relu in range(4):
        for sat in (False, True):
            for k in range(2):
                attrs = dict(pre_quant_mode=mode, relu_mode=relu, row_max_en=k == 0, group_max_en=True,
                             group_n_code=int(rng.integers(1, 10)), max_abs_en=bool(k))
                kw: Dict[str, Any] = {}
                scales = [float(np.float32(s)) for s in 2.0 ** rng.uniform(-70, 12, n)]
                scales[:3] = [1.0 + 2.0 ** -10, 2.0 ** -120, 3.0]
                if mode.startswith("VQ"):
                    kw["quant_tile"] = (_f32(scales).astype(np.uint64) >> np.uint64(13) << np.uint64(13))[None, :]
                elif mode.startswith("Q"):
                    kw["quant_param"] = int(_f32(scales[k]) >> np.uint32(13)) << 13
                if relu == 2:
                    kw["relu_param"] = int(_f32(0.375) >> np.uint32(13))
                elif relu == 3:
                    kw["relu_tile"] = (_f32(rng.uniform(0, 2, n)) >> np.uint32(13)).astype(np.uint64)[None, :]
                got = postprocess(acc, acc_type="FP32", attributes=attrs, sat=sat, **kw)
                ref = postprocess(acc, acc_type="FP32", attributes=attrs, sat=sat, engine="reference", **kw)
                assert np.array_equal(got.d_bits, ref.d_bits), (relu, sat, attrs)
                assert got.flags == ref.flags, (relu, sat, attrs)
                for a, b in ((got.row_max_bits, ref.row_max_bits), (got.group_max_bits, ref.group_max_bits)):
                    assert (a is None and b is None) or np.array_equal(a, b), (relu, sat, attrs)


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "QF322HIF8_PRE", "F322BF16", "F322F16"])
def test_fp32_loops_fold_sign_mixes_like_reference(mode: str) -> None:
    """RowMax/GroupMax folded into the FP32 loops' pass on rows without a NaN/Inf (the vector fold's
    result is used, not redone): spans all negative (with and without -0), only +0/-0, one positive
    among negatives at either end, the smallest and largest finite magnitudes; GroupN 8, 16, 48 and
    the row (RowMax alone), MaxAbs on/off, rows of 37: RowMaxOut, GroupMaxOut and flags equal the
    reference engine's."""
    rng = np.random.default_rng(13)
    n = 37
    neg = _f32(-rng.uniform(0.5, 100.0, n))
    rows = [neg.copy() for _ in range(6)]
    rows[1][::5] = 0x80000000  # -0 among negatives: the largest of them
    rows[2][:] = np.where(rng.integers(0, 2, n) == 1, 0x80000000, 0).astype(np.uint32)  # +0 / -0
    rows[2][:9] = 0x80000000  # a first group of -0 only
    rows[3][0] = int(_f32(3.0))  # one positive at a group's start
    rows[3][15] = int(_f32(2.0 ** -140))  # a positive subnormal at a group's end
    rows[4][[7, 30]] = [0x00800000, 0x80000001]  # smallest normal, -smallest subnormal
    rows[5][[3, 20]] = [0x7F7FFFFF, 0xFF7FFFFF]  # +-largest finite
    acc = np.stack(rows).astype(np.uint32)
    kw: Dict[str, Any] = {"quant_param": int(_f32(1.0)) >> 13 << 13} if mode.startswith("Q") else {}
    for code in (1, 2, 4, 0):
        for max_abs in (False, True):
            attrs = dict(pre_quant_mode=mode, row_max_en=True, group_max_en=code != 0, group_n_code=code,
                         max_abs_en=max_abs)
            got = postprocess(acc, acc_type="FP32", attributes=attrs, sat=True, **kw)
            ref = postprocess(acc, acc_type="FP32", attributes=attrs, sat=True, engine="reference", **kw)
            assert np.array_equal(got.d_bits, ref.d_bits) and got.flags == ref.flags, (code, max_abs)
            for a, b in ((got.row_max_bits, ref.row_max_bits), (got.group_max_bits, ref.group_max_bits)):
                assert (a is None and b is None) or np.array_equal(a, b), (code, max_abs, a, b)


def _assert_folds_like_reference(acc: np.ndarray, mode: str, kw: Dict[str, Any], group_ns: Tuple[int, ...]) -> None:
    """RowMaxOut and GroupMaxOut of the tile operation on FP32 ``acc`` equal the reference engine's
    fold (:func:`ptonum.fpatr.reduction.row_max` / ``group_max``) for each GroupN and MaxAbs on/off."""
    from ptonum.fpatr.reduction import group_max, row_max

    for gn in group_ns:
        for max_abs in (False, True):
            attrs = dict(pre_quant_mode=mode, row_max_en=True, group_max_en=True, group_n=gn, max_abs_en=max_abs)
            got = postprocess(acc, acc_type="FP32", attributes=attrs, **kw)
            rb, _ = row_max(acc, acc_type="FP32", max_abs=max_abs, engine="reference")
            gb, _ = group_max(acc, acc_type="FP32", max_abs=max_abs, group_n=gn, engine="reference")
            assert np.array_equal(got.row_max_bits, rb), (gn, max_abs)
            assert np.array_equal(got.group_max_bits, gb), (gn, max_abs)


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "F322BF16"])
def test_fp32_fold_pass_every_position_like_reference(mode: str) -> None:
    """The FP32 rows' fold pass (its 4 x 8-lane vector body, its 4-lane remainder and its scalar
    tail): row k of 61 holds one maximum at column k, among negatives (the int32 maximum) and,
    negated, one smallest magnitude among negatives (the all-negative pass); GroupN 48 (32 + 16,
    then 12 + 1) and 128 (the row: 32 + 28 + 1), MaxAbs on/off: RowMaxOut and GroupMaxOut equal the
    reference engine's fold (:func:`ptonum.fpatr.reduction.row_max`/``group_max``)."""
    n = 61
    mags = _f32(np.linspace(2.0, 3.0, n))
    big = np.tile(mags | np.uint32(0x80000000), (n, 1))
    big[np.arange(n), np.arange(n)] = _f32(1.5)  # the one positive: each row's maximum
    small = np.tile(mags | np.uint32(0x80000000), (n, 1))
    small[np.arange(n), np.arange(n)] = _f32(-1.0)  # the one smallest magnitude: each all-negative group's maximum
    acc = np.concatenate([big, small]).astype(np.uint32)
    kw: Dict[str, Any] = {"quant_param": int(_f32(1.0)) >> 13 << 13} if mode.startswith("Q") else {}
    _assert_folds_like_reference(acc, mode, kw, (48, 128))


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "QF322HIF8_PRE"])
def test_fp32_fold_pass_sixteen_groups_like_reference(mode: str) -> None:
    """The fold pass's blocks of sixteen GroupN-128 groups (rows of 4200: two blocks of 2048, then
    one group of 104 by the per-group loop): rows whose groups alternate one positive at a moving
    column and all negative (the smallest magnitude at a moving column), rows also with groups holding
    a -0 among negatives and groups of +0/-0 only (the rare-source redo), and rows of N(0, 1) x 50; GroupN 128, 64, every other multiple of 16 (sixteen groups at a time by
    the FP8 rows' ``_foldb_seg``) and 8, MaxAbs on/off: RowMaxOut and
    GroupMaxOut equal the reference engine's fold (:func:`ptonum.fpatr.reduction.row_max` /
    ``group_max``)."""
    rng = np.random.default_rng(29)
    n, rows = 4200, 20
    acc = _f32(-rng.uniform(0.5, 100.0, (rows, n))).astype(np.uint32)
    for r in range(16):
        for q in range((n + 127) // 128):
            lo = q * 128
            kind = (q + r) % (2 if r < 12 else 4)  # a -0 source sends its row to the rare redo
            if kind == 0:  # one positive
                acc[r, min(lo + (r * 7 + q * 5) % 128, n - 1)] = _f32(rng.uniform(0.5, 2.0))
            elif kind == 1:  # all negative: one smallest magnitude
                acc[r, min(lo + (r * 11 + q) % 128, n - 1)] = _f32(-0.25)
            elif kind == 2:  # all negative with a -0
                acc[r, min(lo + (r * 3 + q * 13) % 128, n - 1)] = 0x80000000
            elif r % 2 == 0:  # +0 / -0 only
                acc[r, lo:lo + 128] = np.where(rng.integers(0, 2, min(128, n - lo)) == 1, 0x80000000, 0)
    acc[16:] = _f32(rng.standard_normal((rows - 16, n)) * 50.0)
    kw: Dict[str, Any] = {"quant_param": int(_f32(1.0)) >> 13 << 13}
    _assert_folds_like_reference(acc, mode, kw, (128, 64, 16, 32, 48, 80, 96, 112, 8))


def _group_patterns(acc: np.ndarray, r: int, gsz: int, rng: np.random.Generator) -> None:
    """Row ``r`` of an FP32 tile (bits, negative fill) cut into groups of ``gsz``: each group one of six
    fold edge cases, in turn by group: one positive at a moving column; all negative with one smallest
    magnitude; all negative with a -0; +0/-0 only; -0 only; small positives and one large negative (the
    MaxAbs maximum)."""
    n = acc.shape[1]
    for q in range((n + gsz - 1) // gsz):
        lo = q * gsz
        w = min(gsz, n - lo)
        at = lo + (r * 5 + q * 3) % w
        kind = (q * 7 + r) % 6
        if kind == 0:
            acc[r, at] = _f32(rng.uniform(0.5, 2.0))
        elif kind == 1:
            acc[r, at] = _f32(-0.25)
        elif kind == 2:
            acc[r, at] = 0x80000000
        elif kind == 3:
            acc[r, lo:lo + w] = np.where(rng.integers(0, 2, w) == 1, 0x80000000, 0)
        elif kind == 4:
            acc[r, lo:lo + w] = 0x80000000
        else:
            acc[r, lo:lo + w] = _f32(rng.uniform(0.5, 2.0, w))
            acc[r, at] = _f32(-500.0)


@pytest.mark.parametrize("mode", ["F322BF16", "F322F16"])
def test_bf16_f16_group8_blocks_fold_like_reference(mode: str) -> None:
    """The BF16/FP16 rows' GroupN-8 fold in blocks of sixteen groups (``_fp16x_fold_groups``: rows of
    4200 are four chunks of 1024, eight blocks each, then 104 sources by the loop per group; rows of
    1000 one chunk of seven blocks and thirteen groups): groups with one positive at a moving column,
    all negative with the smallest magnitude at a moving column (the int32 minimum redo), all negative
    with a -0, +0/-0 only, -0 only, and the largest magnitude negative among small positives (MaxAbs
    picks it), rows of N(0, 1) x 50; MaxAbs on/off: RowMaxOut and GroupMaxOut equal the reference
    engine's fold."""
    rng = np.random.default_rng(31)
    for n in (4200, 1000):
        rows = 24
        acc = _f32(-rng.uniform(0.5, 100.0, (rows, n))).astype(np.uint32)
        for r in range(18):
            _group_patterns(acc, r, 8, rng)
        acc[18:] = _f32(rng.standard_normal((rows - 18, n)) * 50.0)
        _assert_folds_like_reference(acc, mode, {}, (8,))


@pytest.mark.parametrize("mode", ["F322BF16", "F322F16"])
def test_bf16_f16_fused_blocks_like_reference(mode: str) -> None:
    """The BF16/FP16 rows' pass and fold from one loop at GroupN 8 and 16 (``_fp16x_fused``; GroupN 32 takes the
    chunked path; blocks of sixteen groups converted and folded from the same loads, ``_fp16x_blk``, then the
    last groups by the fold and the pass of the chunked path): rows of 4104 (blocks, then 8 / 264 / 520
    elements: one group, a partial one) and of 4096 (whole blocks); groups with one positive at a moving column,
    all negative with the smallest magnitude moving (the placeholder keys redone), -0 among negatives, +0/-0
    only, -0 only, a large negative among small positives (MaxAbs picks it), subnormals, values that overflow
    (OF, Sat), N(0, 1) x 50, and rows with a NaN, an sNaN, +Inf and -Inf (the rare redo); MaxAbs on/off,
    ReluMode NONE/RELU, Sat on/off: codes, flags, RowMaxOut and GroupMaxOut equal the reference engine's whole
    tile operation, and the folds the reference fold's."""
    rng = np.random.default_rng(43)
    for n in (4104, 4096):
        rows = 14
        acc = _f32(-rng.uniform(0.5, 100.0, (rows, n))).astype(np.uint32)
        for r in range(6):
            _group_patterns(acc, r, (8, 16, 32)[r % 3], rng)
        acc[6:8] = _f32(rng.standard_normal((2, n)) * 50.0)
        acc[8] = _f32(np.exp2(rng.uniform(-149, 127.9, n)) * rng.choice([-1.0, 1.0], n))  # subnormals, overflow
        acc[9] = _f32(rng.choice([-1.0, 1.0], n) * rng.uniform(60000.0, 70000.0, n))  # FP16 overflow and Sat
        acc[10] = _f32(np.exp2(rng.uniform(-30, -10, n)) * rng.choice([-1.0, 1.0], n))  # FP16 tiny, UF
        acc[11] = _f32(rng.standard_normal(n) * 50.0)
        acc[11, rng.integers(0, n, 4)] = [0x7FC00000, 0x7F800001, 0x7F800000, 0xFF800000]
        acc[12] = _f32(rng.standard_normal(n) * 50.0)
        acc[12, n - 3] = 0xFF800000  # -Inf in the last groups
        acc[13] = _f32(-rng.uniform(0.5, 100.0, n))  # the whole row negative
        _assert_folds_like_reference(acc, mode, {}, (8, 16, 32))
        for gn in (8, 16, 32):
            for max_abs, relu, sat in ((False, "NONE", False), (True, "RELU", True), (False, "RELU", True),
                                       (True, "NONE", False)):
                attrs = dict(pre_quant_mode=mode, row_max_en=True, group_max_en=True, group_n=gn,
                             max_abs_en=max_abs, relu_mode=relu)
                # the reference once per row (rows are independent, ADR-0085 D181: the whole tile's
                # reference is its rows' outputs stacked and their flags OR-ed; computing it again doubled
                # this test's time, ~60 s of the element-by-element reference per mode)
                refs = [postprocess(acc[r:r + 1], acc_type="FP32", attributes=attrs, sat=sat, engine="reference")
                        for r in range(rows)]
                got = postprocess(acc, acc_type="FP32", attributes=attrs, sat=sat)
                assert np.array_equal(got.d_bits, np.vstack([x.d_bits for x in refs])), (n, gn, max_abs, relu, sat)
                assert got.flags == functools.reduce(operator.or_, (x.flags for x in refs)), (n, gn, max_abs, relu, sat)
                assert np.array_equal(got.row_max_bits, np.vstack([x.row_max_bits for x in refs])), (n, gn, max_abs)
                assert np.array_equal(got.group_max_bits, np.vstack([x.group_max_bits for x in refs])), (n, gn, max_abs)
                for r, ref1 in enumerate(refs):  # each row's flags: a row's pass and its rare redo
                    one = postprocess(acc[r:r + 1], acc_type="FP32", attributes=attrs, sat=sat)
                    assert one.flags == ref1.flags and np.array_equal(one.d_bits, ref1.d_bits), (n, gn, r)


@pytest.mark.parametrize("mode", ["F322BF16", "F322F16"])
def test_bf16_f16_fused_forms_flags_and_maxima_like_reference(mode: str) -> None:
    """The one-loop BF16/FP16 path's four compiled forms per lane and GroupN (``_fp16x_blk`` with ReluMode
    NONE/RELU and MaxAbsEn off/on as constants: the magnitude maxima behind OF and the NaN/Inf check taken
    per vector or from the groups' maxima once a block): rows of 4096 (whole blocks of GroupN 8 and 16)
    whose flags depend on which maximum a form keeps: small positives with overflowing negatives in a few
    groups (OF without ReLU only, MaxAbs picks them), negatives with one overflowing positive (OF in every
    form), all negative (with ReLU no magnitude at all), values below the tiny bound of both signs (UF),
    N(0, 1) x 50, and N(0, 1) x 50 with one -Inf, one negative NaN or one NaN (the whole-row redo must be
    seen through the magnitude, not the signed value); each row's flags alone, the whole tile's codes,
    flags, RowMaxOut and GroupMaxOut equal the reference engine's."""
    rng = np.random.default_rng(47)
    n, rows = 4096, 8
    big = 3.4e38 if mode == "F322BF16" else 70000.0  # rounds past the largest finite value
    tiny = (-140.0, -128.0) if mode == "F322BF16" else (-30.0, -16.0)
    acc = _f32(rng.uniform(0.5, 2.0, (rows, n)))
    acc[0, 37::517] = _f32(-big)
    acc[1] = _f32(-rng.uniform(0.5, 2.0, n))
    acc[1, 2777] = _f32(big)
    acc[2] = _f32(-rng.uniform(0.5, 100.0, n))
    acc[3] = _f32(np.exp2(rng.uniform(*tiny, n)) * rng.choice([-1.0, 1.0], n))
    acc[4:8] = _f32(rng.standard_normal((4, n)) * 50.0)
    acc[5, 1500] = 0xFF800000  # -Inf
    acc[6, 2100] = 0xFFC00000  # a NaN with the sign bit set
    acc[7, 900] = 0x7FC00000
    for gn in (8, 16):
        for relu in ("NONE", "RELU"):
            for max_abs in (False, True):
                sat = relu == "RELU"
                attrs = dict(pre_quant_mode=mode, row_max_en=True, group_max_en=True, group_n=gn,
                             max_abs_en=max_abs, relu_mode=relu)
                got = postprocess(acc, acc_type="FP32", attributes=attrs, sat=sat)
                ref = postprocess(acc, acc_type="FP32", attributes=attrs, sat=sat, engine="reference")
                assert np.array_equal(got.d_bits, ref.d_bits), (gn, relu, max_abs)
                assert got.flags == ref.flags, (gn, relu, max_abs)
                assert np.array_equal(got.row_max_bits, ref.row_max_bits), (gn, relu, max_abs)
                assert np.array_equal(got.group_max_bits, ref.group_max_bits), (gn, relu, max_abs)
                for r in range(rows):
                    one = postprocess(acc[r:r + 1], acc_type="FP32", attributes=attrs, sat=sat)
                    ref1 = postprocess(acc[r:r + 1], acc_type="FP32", attributes=attrs, sat=sat, engine="reference")
                    assert one.flags == ref1.flags, (gn, relu, max_abs, r)


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "QF322HIF8_PRE"])
@pytest.mark.parametrize("scale", [1.0, 1.625])
def test_fp8_fold_blocks_small_groupn_and_maxabs_like_reference(mode: str, scale: float) -> None:
    """The E4M3/HiF8 rows' fold after the pass in whole blocks (``_fp8_fold_groups``: 32 groups of 8 or
    16 groups of 16 .. 128 reduced together, MaxAbs's masked form) and, for rows of 2048 and GroupN 64
    and 128, the maxima fused into the pass with MaxAbs's mask: rows of 2120 (blocks, then the last
    groups and a partial one by the loop per group) and of 2048; rows all negative but for sparse
    positives (the all-negative rescan), small positives with sparse large negative magnitudes (the
    maximum magnitude under MaxAbs), N(0, 1) x 50, magnitudes 2^-149 .. 2^127 with random signs
    (subnormals), negatives with a -0, +0/-0 only, and sparse NaN/Inf (the rare redo); GroupN 8 .. 128,
    MaxAbs on/off, unit and general lanes: RowMaxOut and GroupMaxOut equal the reference engine's fold
    (:func:`ptonum.fpatr.reduction.row_max` / ``group_max``), and for GroupN 8 and 64 the codes, flags
    and folds equal the reference engine's whole tile operation."""
    rng = np.random.default_rng(37)
    for n in (2120, 2048):
        rows = 15
        acc = _f32(-rng.uniform(0.5, 100.0, (rows, n))).astype(np.uint32)
        acc[0:4] = np.where(rng.random((4, n)) < 0.05, _f32(rng.uniform(0.5, 2.0, (4, n))), acc[0:4])
        acc[4:8] = np.where(rng.random((4, n)) < 0.05, _f32(-rng.uniform(500.0, 1000.0, (4, n))),
                            _f32(rng.uniform(0.5, 1.0, (4, n))))
        acc[8:10] = _f32(rng.standard_normal((2, n)) * 50.0)
        acc[10:12] = _f32(np.exp2(rng.uniform(-149, 127.9, (2, n))) * rng.choice([-1.0, 1.0], (2, n)))
        acc[12, rng.integers(0, n, 5)] = 0x80000000
        acc[13] = np.where(rng.integers(0, 2, n) == 1, 0x80000000, 0)
        acc[14] = _f32(rng.standard_normal(n) * 50.0)
        acc[14, rng.integers(0, n, 4)] = [0x7FC00000, 0xFF800000, 0x7F800001, 0x7F800000]
        kw: Dict[str, Any] = {"quant_param": int(_f32(scale)) >> 13 << 13}
        _assert_folds_like_reference(acc, mode, kw, (8, 16, 32, 48, 64, 128))
        for gn in (8, 64):
            for max_abs in (False, True):
                attrs = dict(pre_quant_mode=mode, row_max_en=True, group_max_en=True, group_n=gn,
                             max_abs_en=max_abs)
                got = postprocess(acc[:3], acc_type="FP32", attributes=attrs, **kw)
                ref = postprocess(acc[:3], acc_type="FP32", attributes=attrs, engine="reference", **kw)
                assert np.array_equal(got.d_bits, ref.d_bits) and got.flags == ref.flags, (n, gn, max_abs)
                assert np.array_equal(got.row_max_bits, ref.row_max_bits), (n, gn, max_abs)
                assert np.array_equal(got.group_max_bits, ref.group_max_bits), (n, gn, max_abs)


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "QF322HIF8_PRE"])
@pytest.mark.parametrize("scale", [1.0, 1.625])
def test_fp32_fold_fused_into_fp8_pass_like_reference(mode: str, scale: float) -> None:
    """RowMax/GroupMax taken inside the E4M3/HiF8 passes (rows of 1024: GroupN 64 and 128 and the row
    are whole groups of a multiple of 64, the fused maxima; GroupN 32 and 96 take the separate fold
    pass), for the unit lanes (scale 1) and the general ones (scale 1.625): rows whose groups
    alternate one positive at a moving column and all negative (the smallest magnitude at a moving
    column: the rescan for the smallest int32), a row all negative (RowMax negative too), rows with
    groups of +0/-0 or a -0 among negatives (the rare redo), rows of N(0, 1) x 50 and of magnitudes
    from 2^-140 to 2^120; MaxAbs on/off.  Codes, flags, RowMaxOut and GroupMaxOut equal the reference
    engine's; RowMaxOut and GroupMaxOut also the reference fold's
    (:func:`ptonum.fpatr.reduction.row_max` / ``group_max``)."""
    rng = np.random.default_rng(31)
    n, rows = 1024, 14
    acc = _f32(-rng.uniform(0.5, 100.0, (rows, n))).astype(np.uint32)
    for r in range(9):
        for q in range(n // 64):
            lo = q * 64
            kind = (q + r) % (2 if r < 6 else 3)
            if r == 8:
                kind = 1  # the whole row negative
            if kind == 0:  # one positive (below the largest: the int32 maximum is not the last lane)
                acc[r, lo + (r * 7 + q * 5) % 64] = _f32(rng.uniform(0.5, 2.0))
            elif kind == 1:  # all negative: one smallest magnitude
                acc[r, lo + (r * 11 + q) % 64] = _f32(-0.25 - q / 1024.0)
            elif r % 2 == 0:  # a -0 among negatives (the row is redone)
                acc[r, lo + (r * 3 + q * 13) % 64] = 0x80000000
            else:  # +0 / -0 only
                acc[r, lo:lo + 64] = np.where(rng.integers(0, 2, 64) == 1, 0x80000000, 0)
    acc[9:12] = _f32(rng.standard_normal((3, n)) * 50.0)
    acc[12:] = _f32(np.exp2(rng.uniform(-140, 120, (rows - 12, n))) * rng.choice([-1.0, 1.0], (rows - 12, n)))
    kw: Dict[str, Any] = {"quant_param": int(_f32(scale)) >> 13 << 13}
    for gn in (0, 32, 64, 96, 128):
        for max_abs in (False, True):
            attrs = dict(pre_quant_mode=mode, row_max_en=True, group_max_en=gn != 0, max_abs_en=max_abs,
                         **({"group_n": gn} if gn else {}))
            got = postprocess(acc, acc_type="FP32", attributes=attrs, **kw)
            ref = postprocess(acc, acc_type="FP32", attributes=attrs, engine="reference", **kw)
            assert np.array_equal(got.d_bits, ref.d_bits) and got.flags == ref.flags, (gn, max_abs)
            for a, b in ((got.row_max_bits, ref.row_max_bits), (got.group_max_bits, ref.group_max_bits)):
                assert (a is None and b is None) or np.array_equal(a, b), (gn, max_abs)
    _assert_folds_like_reference(acc, mode, kw, (64, 128))


@pytest.mark.parametrize("mode", ["QF322FP8_PRE", "QF322HIF8_PRE"])
@pytest.mark.parametrize("scale", [1.0, 1.625])
def test_fp8_small_groupn_maxima_in_the_pass_like_reference(mode: str, scale: float) -> None:
    """GroupN 8, 16 and 32 reduced inside the E4M3/HiF8 passes (``_fp8_pass_fold``: one 16-lane vector
    of partial maxima per 64 elements, then ``_fold_small``: sixteen groups at a time, the last groups
    one by one from their lanes), for rows a multiple of 64 wide: 2048 (whole blocks of sixteen groups;
    GroupN 8, and HiF8 GroupN 16, take the keys themselves in the pass: ``_fp8_pass_keys8`` /
    ``_fp8_pass_keys16``, then ``_fp8_neg_fix``) and 1088 (GroupN 8: 136 groups, GroupN 16: 68, GroupN 32:
    34: eight, four and two groups after the last block); rows of 1000 (not a multiple of 64) take the
    fold after the pass.  Rows all negative
    but for distinct positives at random columns (a lane given to the wrong group shows), all negative
    with the smallest magnitude at a moving column (the rescan for the smallest int32), small positives
    with distinct large negative magnitudes (MaxAbs's maximum), N(0, 1) x 50, magnitudes 2^-149 ..
    2^127 with random signs; MaxAbs on/off; unit (scale 1) and general lanes: RowMaxOut and GroupMaxOut
    equal the reference engine's fold, and for every GroupN the codes, flags and folds equal the
    reference engine's whole tile operation (ReluMode NONE, and RELU: two multipliers)."""
    rng = np.random.default_rng(41)
    for n in (2048, 1088, 1000):
        rows = 11
        acc = _f32(-rng.uniform(0.5, 100.0, (rows, n))).astype(np.uint32)
        pos = rng.random((3, n)) < 0.07
        acc[0:3] = np.where(pos, _f32(rng.permutation(np.linspace(0.5, 2.0, 3 * n)).reshape(3, n)), acc[0:3])
        for r in (3, 4):
            for q in range(n // 8):
                acc[r, q * 8 + (r * 5 + q * 3) % 8] = _f32(-0.25 - q / 4096.0)
        neg = rng.random((2, n)) < 0.07
        acc[5:7] = np.where(neg, _f32(-rng.permutation(np.linspace(500.0, 1000.0, 2 * n)).reshape(2, n)),
                            _f32(rng.uniform(0.5, 1.0, (2, n))))
        acc[7:9] = _f32(rng.standard_normal((2, n)) * 50.0)
        acc[9:11] = _f32(np.exp2(rng.uniform(-149, 127.9, (2, n))) * rng.choice([-1.0, 1.0], (2, n)))
        kw: Dict[str, Any] = {"quant_param": int(_f32(scale)) >> 13 << 13}
        _assert_folds_like_reference(acc, mode, kw, (8, 16, 32))
        for gn in (8, 16, 32):
            for max_abs in (False, True):
                for relu in ("NONE", "RELU"):
                    attrs = dict(pre_quant_mode=mode, relu_mode=relu, row_max_en=True, group_max_en=True,
                                 group_n=gn, max_abs_en=max_abs)
                    got = postprocess(acc, acc_type="FP32", attributes=attrs, **kw)
                    ref = postprocess(acc, acc_type="FP32", attributes=attrs, engine="reference", **kw)
                    assert np.array_equal(got.d_bits, ref.d_bits) and got.flags == ref.flags, (n, gn, max_abs)
                    assert np.array_equal(got.row_max_bits, ref.row_max_bits), (n, gn, max_abs, relu)
                    assert np.array_equal(got.group_max_bits, ref.group_max_bits), (n, gn, max_abs, relu)


def test_compile_all_covers_every_mode_s_tile_kernel_types(vectors: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ptonum compile`` (:func:`compile_all`) compiles the tile kernel for the argument types every
    PreQuantMode's tile call launches it with (ReLU modes, vector parameters, RowMax/GroupMax, RowMaxInit,
    flags), so no first call after it compiles again.  Before the fix, a HiF8 call passed its read-only key
    table where the other modes passed a writable placeholder: another numba type, a fourth multi-minute
    compile that `ptonum compile` did not do (break stop 23).  Only the types are compared: the kernel is
    not run (launch recorded, nothing computed)."""
    import numba

    from ptonum.kernels import postprocess as pp

    seen: List[Tuple[Any, ...]] = []

    def record(kernel: Any, *args: Any) -> None:
        assert kernel is pp._tile_kernel
        seen.append(tuple(numba.typeof(a) for a in args))

    monkeypatch.setattr(pp, "launch_ready", record)
    monkeypatch.setattr(pp, "_s32_param_kernel", lambda *a: None)
    monkeypatch.setattr(pp, "encode_values", lambda *a: None)
    monkeypatch.setattr(pp, "reduction_step_values", lambda *a: None)
    pp.compile_all()
    compiled = set(seen)
    assert len(compiled) == 3  # 8-, 16- and 32-bit destinations
    legal, _ = _legal_words(vectors)
    relu_ok, _ = _relu_words(vectors)
    launched: Dict[Tuple[Any, ...], str] = {}
    for mode in sorted(MODE_TABLE):
        rng = np.random.default_rng(7000 + mode)
        for _ in range(12):
            seen.clear()
            m, n = int(rng.integers(1, 4)), int(rng.integers(1, 40))
            t, attrs, rmode, sat, kw = _random_config(rng, mode, legal, relu_ok, m, n)
            try:
                postprocess(_random_acc(rng, m, n, t), acc_type=t, attributes=attrs, rmode=rmode, sat=sat, **kw)
            except Exception:  # the recorded launch computed nothing: what follows it may fail
                pass
            assert seen, (MODE_TABLE[mode].name, attrs)
            launched.setdefault(seen[0], f"{MODE_TABLE[mode].name} {attrs} sat={sat}")
    extra = {v: [str(a) for a in k] for k, v in launched.items() if k not in compiled}
    assert not extra, extra


#: Run in a subprocess for NUMBA_CPU_NAME=haswell (AVX2): the tile kernel's three specializations (the
#: argument types ``ptonum compile`` launches) compiled for that target, not run.
_AVX2_TARGET_SCRIPT = r"""
import numba, numpy as np
from ptonum.kernels import postprocess as pp
seen = []
pp.launch_ready = lambda kernel, *args: seen.append(tuple(numba.typeof(a) for a in args))
pp._s32_param_kernel = pp.encode_values = pp.reduction_step_values = lambda *a: None
pp.compile_all()
assert len(seen) == 3, seen
for sig in seen:
    pp._tile_kernel.compile(sig)
print("HIF8_V32", pp.HIF8_V32, "FP16X_ACC_BARRIER", pp.FP16X_ACC_BARRIER)
"""


def test_tile_kernel_compiles_for_avx2(tmp_path: Any) -> None:
    """The tile kernel compiles for a CPU without AVX-512.  On such a host every kernel test of this run
    compiles and runs that form (the AVX-512 passes are the never-called stub there); on an AVX-512 host
    its three specializations are compiled for ``haswell`` in a subprocess with its own cache (a few
    minutes).  Before the fix the fused FP8 passes' AVX-512 intrinsics reached LLVM for an AVX2 target
    (numba compiles every function a kernel names, dead call or not) and LLVM aborted the process ("Do
    not know how to split the result of this operator") at the first 8-bit-destination kernel call on an
    AVX2 Zen 3, after every test had passed on AVX-512 machines; this subprocess aborted the same way."""
    import os
    import subprocess
    import sys

    import llvmlite.binding as llvm

    from ptonum.kernels import postprocess as pp

    if "+avx512bw" not in llvm.get_host_cpu_features().flatten().split(","):
        assert not pp.HIF8_V32 and not pp.FP16X_ACC_BARRIER
        for name in ("_fp8_pass_fold", "_fp8_pass_keys8", "_fp8_pass_keys16"):
            assert getattr(pp, name) is pp._fp8_avx512_only, name
        a = np.arange(1 << 17, dtype=np.int32).reshape(64, -1)  # one kernel call of the 8-bit form, here
        r = postprocess(a, attributes={"pre_quant_mode": "REQ8", "group_max_en": True, "group_n": 8},
                        quant_param=0x3F800000)
        assert r.group_max_bits is not None and int(r.group_max_bits[0, 0]) == 7
        return
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"), PTONUM_CACHE_DIR=str(tmp_path / "pc"),
               NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES="")
    res = subprocess.run([sys.executable, "-c", _AVX2_TARGET_SCRIPT], env=env, capture_output=True, text=True,
                         timeout=1800)
    assert res.returncode == 0, (res.returncode, res.stderr[-3000:])
    assert "HIF8_V32 False FP16X_ACC_BARRIER False" in res.stdout, res.stdout


#: Run in a subprocess for NUMBA_CPU_NAME=generic (no AVX, no F16C): the S32 rows' eight-lane OR accumulator
#: (``_sacc_or``, the form every AVX2-less target takes) and the binary16 conversions (``_f32_f16``,
#: ``_f16_f32``: calls of ptonum.kernels.HALF_LIBCALLS there) compiled and run, the conversions against numpy.
_GENERIC_TARGET_SCRIPT = r"""
import numba, numpy as np
from ptonum import kernels
from ptonum.kernels import postprocess as pp
@numba.njit
def f(a):
    acc = pp._v8_splat(0)
    for j in range(0, a.size, 16):
        acc = pp._sacc_or(acc, pp._v16_load(a, j))
    return pp._v8_hor(acc)
@numba.njit
def half(b, h, back):
    for i in range(b.size):
        h[i] = pp._f32_f16(pp._u32_f32(b[i]))
        back[i] = pp._f32_bits(pp._f16_f32(h[i]))
a = (np.int32(1) << (np.arange(64) % 31)).astype(np.int32)
print("S32_ACC8", pp.S32_ACC8, "S32_OR_BARRIER", pp.S32_OR_BARRIER, "OR", int(f(a)), "HALF_READY", kernels.HALF_READY)
if not kernels.HALF_READY:  # no library provides the binary16 routines: the kernels stay off, nothing to run
    raise SystemExit(0)
b = np.random.default_rng(7).integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
b[:8] = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x33000001, 0x477FF000, 0x477FEFFF, 0x38800000]
h = np.empty(b.size, np.uint16)
back = np.empty(b.size, np.uint32)
half(b, h, back)
with np.errstate(over="ignore"):
    ref = b.view(np.float32).astype(np.float16)
nan = np.isnan(ref)
bad = np.count_nonzero((h != ref.view(np.uint16)) & ~nan) + np.count_nonzero(((h & 0x7C00) != 0x7C00) & nan) \
    + np.count_nonzero((back != ref.astype(np.float32).view(np.uint32)) & ~nan)
print("HALF_MISMATCHES", int(bad))
"""


@pytest.mark.skipif(not NUMBA_AVAILABLE, reason="numba not installed: no kernel to compile")
def test_kernels_compile_without_avx_and_f16c(tmp_path: Any) -> None:
    """The S32 rows' OR accumulator and the binary16 conversions compile and run for a target without AVX
    and F16C (``NUMBA_CPU_NAME=generic``, numba's setting for a cache shared by different CPUs, or an
    old CPU).  Before the fix the accumulator's value barrier asked LLVM for eight int32 lanes in one
    ``x`` register, which such a target does not have ("couldn't allocate output register for
    constraint 'x'"), and the conversions called ``__extendhfsf2``, which numba's JIT did not resolve
    ("Symbol not found"): LLVM ended the process at the first kernel compile.  Where no library
    provides those routines :data:`ptonum.kernels.HALF_READY` is False and the kernels stay off
    (tests/test_kernels.py).  A subprocess with its own cache (seconds: two small functions)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"), PTONUM_CACHE_DIR=str(tmp_path / "pc"),
               NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="")
    res = subprocess.run([sys.executable, "-c", _GENERIC_TARGET_SCRIPT], env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, (res.returncode, res.stderr[-3000:])
    want = int(np.bitwise_or.reduce((np.int32(1) << (np.arange(64) % 31)).astype(np.int32)))
    words = res.stdout.split()
    assert words[:6] == ["S32_ACC8", "True", "S32_OR_BARRIER", "False", "OR", str(want)], res.stdout
    if words[6:] == ["HALF_READY", "False"]:
        pytest.skip("no library here provides the binary16 routines: the kernels stay off on such a target")
    assert words[6:] == ["HALF_READY", "True", "HALF_MISMATCHES", "0"], res.stdout


@pytest.mark.parametrize("mode", ["F322F16", "F322BF16"])
@pytest.mark.parametrize("group_n", [8, 16, 32])
def test_fp16x_groups_all_negative_match_numpy_max(mode: str, group_n: int) -> None:
    """FP32 -> FP16/BF16 rows of sixteen groups or more take the fused loop of the kernels, whose groups with a
    negative maximum are redone from their block's minima (``_fixneg16_*``): on data mostly negative (many such
    groups, in most blocks) GroupMaxOut and RowMaxOut must be the FP32 bits of numpy's maximum of each group
    and row (finite, non-zero sources: no NaN or signed-zero rule involved)."""
    rng = np.random.default_rng(group_n)
    m, n = 6, 4096 + 3 * group_n
    x = -np.abs(rng.standard_normal((m, n)) * 50).astype(np.float32)
    x[rng.random((m, n)) < 0.02] *= -1
    from ptonum.fpatr.attributes import FPATRAttributes
    attrs = FPATRAttributes.from_fields(pre_quant_mode=mode, row_max_en=True, group_max_en=True, group_n=group_n)
    r = postprocess(x.view(np.uint32), acc_type="FP32", attributes=attrs)
    want_g = x.reshape(m, n // group_n, group_n).max(axis=2).view(np.uint32)
    want_r = x.max(axis=1).view(np.uint32).reshape(m, 1)
    assert (want_g.view(np.float32) < 0).any()  # the data has such groups
    assert np.array_equal(np.asarray(r.group_max_bits).reshape(m, -1), want_g)
    assert np.array_equal(np.asarray(r.row_max_bits).reshape(m, 1), want_r)
