"""Tests for ptonum.fpatr.reduction (RowMax / GroupMax, ADR-0085 D175/D181).

Oracles:
* ``reduction_step.csv.gz`` (ASL ``TileProfileMatrixReductionStepWithFlags``), every row, both engines;
* pto-spec ``tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-001.asl``;
* for tiles: an independent pure-Python fold written here from ``MatrixRowMaxResult`` /
  ``MatrixGroupMaxResult`` (asl/tile/model/execution/postprocess.asl) whose step is
  ``reduction_step(engine="reference")`` -- itself pinned to the ASL vectors above.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptonum.errors import PtonumError, UsageError
from ptonum.fpatr.reduction import (
    group_max,
    reduction_step,
    reduction_trace,
    row_max,
)

TYPES = ("FP32", "S32", "U32")
GROUP_N = {1: 8, 2: 16, 3: 32, 4: 48, 5: 64, 6: 80, 7: 96, 8: 112, 9: 128}  # BundleFPATRGroupN

QNAN = 0x7FC00000
QNAN_PAYLOAD = 0xFFC12345
SNAN = 0x7F800001
NSNAN = 0xFFA00000
NEG0 = 0x80000000
INT_MIN = 0x80000000
SPECIALS = np.array(
    [0, NEG0, QNAN, QNAN_PAYLOAD, SNAN, NSNAN, 0x7F800000, 0xFF800000, 0x7FFFFFFF, 1,
     0x80000001, 0x3F800000, 0xBF800000, 0x00000001, 0x807FFFFF, 0xFFFFFFFF],
    dtype=np.uint64,
)


# ---------------------------------------------------------------- step vectors


def _vector_arrays(vectors, acc_type, max_abs):
    rows = [r for r in vectors("reduction_step") if r["acc_type"] == acc_type and r["max_abs"] == max_abs]
    assert rows, (acc_type, max_abs)
    cur = np.array([int(r["current_bits"], 16) for r in rows], np.uint64)
    cand = np.array([int(r["candidate_bits"], 16) for r in rows], np.uint64)
    eb = np.array([int(r["expected_bits"], 16) for r in rows], np.uint64)
    ef = np.array([int(r["expected_flags"], 16) for r in rows], np.uint64)
    return cur, cand, eb, ef


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("max_abs", ["0", "1"])
@pytest.mark.parametrize("acc_type", TYPES)
def test_reduction_step_vectors_every_row(vectors, acc_type, max_abs, engine):
    cur, cand, eb, ef = _vector_arrays(vectors, acc_type, max_abs)
    bits, flags = reduction_step(cur, cand, acc_type=acc_type, max_abs=max_abs == "1", engine=engine)
    assert bits.dtype == np.uint32 and flags.dtype == np.uint8
    bad = np.nonzero((bits != eb) | (flags != ef))[0]
    assert bad.size == 0, [(hex(int(cur[i])), hex(int(cand[i])), hex(int(bits[i])), int(flags[i]),
                            hex(int(eb[i])), int(ef[i])) for i in bad[:5]]


def test_reduction_trace_matches_vectors(vectors):
    rows = vectors("reduction_step")[::97]
    for r in rows:
        bits, flags, steps = reduction_trace(int(r["current_bits"], 16), int(r["candidate_bits"], 16),
                                             acc_type=r["acc_type"], max_abs=r["max_abs"] == "1")
        assert bits == int(r["expected_bits"], 16) and flags == int(r["expected_flags"], 16)
        assert steps[-1].name == "max"
        assert len(steps) == (3 if r["max_abs"] == "1" else 1)
        fl = 0
        for s in steps:
            fl |= s.flags
            assert s.asl and s.text
        assert fl == flags


def test_asl_arch_exec_matrix_postprocess_001_reduction():
    """pto-spec tests/asl/arch/profile/matrix-postprocess/arch-exec-matrix-postprocess-001.asl
    (the reduction half; the element half is in test_fpatr_tile.py)."""
    for engine in ("fast", "reference"):
        b, f = reduction_step(3, 7, acc_type="S32", max_abs=False, engine=engine)
        assert int(b) == 7 and int(f) == 0
        # The ASL passes the sign-extended 64-bit word 0xffffffff80000000; only bits [31:0] participate.
        b, f = reduction_step(0x80000000, 0x80000000, acc_type="S32", max_abs=True, engine=engine)
        assert int(b) == 0x7FFFFFFF and int(f) == 0x04
    b, f, steps = reduction_trace(0x80000000, 0x80000000, acc_type="S32", max_abs=True)
    assert (b, f) == (0x7FFFFFFF, 0x04)


def test_step_broadcast_and_scalar_shapes():
    b, f = reduction_step(5, [1, 9], acc_type="U32", max_abs=False)
    assert b.tolist() == [5, 9] and f.tolist() == [0, 0]
    b, f = reduction_step(5, 9, acc_type="U32", max_abs=False)
    assert b.shape == () and f.shape == ()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(acc_type="FP16", max_abs=False), "FP32, S32 or U32"),
        (dict(acc_type="S32", max_abs=2), "max_abs"),
        (dict(acc_type="S32", max_abs=False, engine="slow"), "engine"),
    ],
)
def test_step_rejects(kwargs, match):
    with pytest.raises(UsageError, match=match):
        reduction_step(1, 2, **kwargs)


def test_step_rejects_wide_word():
    with pytest.raises(UsageError, match="candidate.*32 bits"):
        reduction_step(1, 1 << 32, acc_type="U32", max_abs=False)


# ------------------------------------------------- independent fold (test oracle)


def _step(cur: int, cand: int, t: str, ma: bool):
    b, f = reduction_step(cur, cand, acc_type=t, max_abs=ma, engine="reference")
    return int(b), int(f)


def oracle_row_max(x, t, ma, init=None):
    """MatrixRowMaxResult, written out in plain Python."""
    out, flags = [], 0
    for r, row in enumerate(x):
        value = int(row[0])
        if ma:
            value, f = _step(value, value, t, True)
            flags |= f
        for c in range(1, len(row)):
            value, f = _step(value, int(row[c]), t, ma)
            flags |= f
        if init is not None:
            value, f = _step(int(init[r][0]), value, t, ma)
            flags |= f
        out.append([value])
    return out, flags


def oracle_group_max(x, t, ma, gn):
    """MatrixGroupMaxResult, written out in plain Python."""
    n = len(x[0])
    groups = -(-n // gn)
    out, flags = [], 0
    for row in x:
        orow = []
        for g in range(groups):
            first = g * gn
            value = int(row[first])
            if ma:
                value, f = _step(value, value, t, True)
                flags |= f
            for off in range(1, gn):
                col = first + off
                if col < n:
                    value, f = _step(value, int(row[col]), t, ma)
                    flags |= f
            orow.append(value)
        out.append(orow)
    return out, flags


def _or(a) -> int:
    return int(np.bitwise_or.reduce(np.asarray(a, np.uint8), axis=None))


# ------------------------------------------------------------ fold: explicit cases


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_row_max_nan_rules(engine):
    # Single column, no MaxAbs: no step runs -> the raw NaN bits, no NV even for an sNaN.
    b, f = row_max([[SNAN]], acc_type="FP32", max_abs=False, engine=engine)
    assert b.tolist() == [[SNAN]] and f.tolist() == [[0]]
    b, f = row_max([[QNAN_PAYLOAD]], acc_type="FP32", max_abs=False, engine=engine)
    assert b.tolist() == [[QNAN_PAYLOAD]]
    # Single column with MaxAbs: the self-step of two NaNs gives the canonical NaN; sNaN raises NV.
    b, f = row_max([[NSNAN]], acc_type="FP32", max_abs=True, engine=engine)
    assert b.tolist() == [[QNAN]] and f.tolist() == [[1]]
    # NaN first, numbers later: NaN is skipped.
    b, f = row_max([[SNAN, 0xBF800000, 0xC0000000]], acc_type="FP32", max_abs=False, engine=engine)
    assert b.tolist() == [[0xBF800000]] and f.tolist() == [[1]]
    # NaN later in the row: skipped, quiet NaN raises nothing.
    b, f = row_max([[0x3F800000, QNAN_PAYLOAD, 0x3F000000]], acc_type="FP32", max_abs=False, engine=engine)
    assert b.tolist() == [[0x3F800000]] and f.tolist() == [[0]]
    # All NaN, two columns: canonical NaN.
    b, f = row_max([[QNAN_PAYLOAD, 0x7FC00001]], acc_type="FP32", max_abs=False, engine=engine)
    assert b.tolist() == [[QNAN]] and f.tolist() == [[0]]
    # Signed zeros: -0 with -0 stays -0, mixed gives +0; MaxAbs turns -0 into +0.
    b, _ = row_max([[NEG0, NEG0], [NEG0, 0]], acc_type="FP32", max_abs=False, engine=engine)
    assert b.tolist() == [[NEG0], [0]]
    b, _ = row_max([[NEG0, NEG0]], acc_type="FP32", max_abs=True, engine=engine)
    assert b.tolist() == [[0]]
    # MaxAbs: -3 beats 2; S32 INT_MIN saturates with OF only.
    b, f = row_max([[0xC0400000, 0x40000000]], acc_type="FP32", max_abs=True, engine=engine)
    assert b.tolist() == [[0x40400000]] and f.tolist() == [[0]]
    b, f = row_max([[5, INT_MIN, 0xFFFFFFFF]], acc_type="S32", max_abs=True, engine=engine)
    assert b.tolist() == [[0x7FFFFFFF]] and f.tolist() == [[4]]
    b, f = row_max([[5, 0xFFFFFFFF]], acc_type="S32", max_abs=False, engine=engine)
    assert b.tolist() == [[5]]
    b, f = row_max([[5, 0xFFFFFFFF]], acc_type="U32", max_abs=True, engine=engine)
    assert b.tolist() == [[0xFFFFFFFF]] and f.tolist() == [[0]]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_row_max_init_is_last_step_with_rowmaxin_as_current(engine):
    # RowMaxIn NaN, row result a number -> the number (one NaN); sNaN RowMaxIn raises NV.
    b, f = row_max([[0x3F800000, 0x40000000]], acc_type="FP32", max_abs=False, row_max_in=[[SNAN]], engine=engine)
    assert b.tolist() == [[0x40000000]] and f.tolist() == [[1]]
    # RowMaxIn -0 vs row -0: stays -0; RowMaxIn wins a larger value.
    b, _ = row_max([[NEG0]], acc_type="FP32", max_abs=False, row_max_in=[[NEG0]], engine=engine)
    assert b.tolist() == [[NEG0]]
    b, _ = row_max([[1, 2]], acc_type="S32", max_abs=False, row_max_in=[9], engine=engine)
    assert b.tolist() == [[9]]
    # MaxAbs applies to RowMaxIn too: INT_MIN RowMaxIn -> 0x7fffffff with OF.
    b, f = row_max([[1, 2]], acc_type="S32", max_abs=True, row_max_in=[[INT_MIN]], engine=engine)
    assert b.tolist() == [[0x7FFFFFFF]] and f.tolist() == [[4]]
    # Single-column sNaN row: the init step is the first step to see it.
    b, f = row_max([[SNAN]], acc_type="FP32", max_abs=False, row_max_in=[[0x3F800000]], engine=engine)
    assert b.tolist() == [[0x3F800000]] and f.tolist() == [[1]]


def _random_tile(rng, m, n, t):
    x = rng.integers(0, 2**32, (m, n), dtype=np.uint64)
    mask = rng.random((m, n)) < 0.5
    x[mask] = rng.choice(SPECIALS, int(mask.sum()))
    if t != "FP32" and rng.random() < 0.5:
        x &= np.uint64(0x8000000F)  # many ties, INT_MIN and small negatives
    return x


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("t", TYPES)
def test_row_max_matches_oracle_random(t, engine):
    rng = np.random.default_rng(7 + TYPES.index(t))
    for _ in range(150):
        m, n = int(rng.integers(1, 4)), int(rng.integers(1, 12))
        x = _random_tile(rng, m, n, t)
        init = rng.choice(SPECIALS, (m, 1)) if rng.random() < 0.5 else None
        for ma in (False, True):
            bits, fl = row_max(x, acc_type=t, max_abs=ma, row_max_in=init, engine=engine)
            exp, ef = oracle_row_max(x.tolist(), t, ma, None if init is None else init.tolist())
            assert bits.shape == (m, 1) and bits.dtype == np.uint32
            assert bits.tolist() == exp, (x, ma, init)
            assert _or(fl) == ef


@pytest.mark.parametrize("code", sorted(GROUP_N))
@pytest.mark.parametrize("t", TYPES)
def test_group_max_every_groupn_code(t, code):
    gn = GROUP_N[code]
    rng = np.random.default_rng(100 * code + TYPES.index(t))
    # N a multiple, N not a multiple (partial last group), N < GroupN, N == 1.
    for n in (2 * gn, 2 * gn + 3, max(1, gn - 5), 1):
        x = _random_tile(rng, 2, n, t)
        for ma in (False, True):
            exp, ef = oracle_group_max(x.tolist(), t, ma, gn)
            for engine in ("fast", "reference"):
                bits, fl = group_max(x, acc_type=t, max_abs=ma, group_n=gn, engine=engine)
                assert bits.shape == (2, -(-n // gn))
                assert bits.tolist() == exp, (n, ma, engine)
                assert _or(fl) == ef


def test_group_max_partial_group_nan_rules():
    # Last group of one element (N = 9, GroupN 8): no step -> raw sNaN, no NV; with MaxAbs canonical + NV.
    x = np.array([[0x3F800000] * 8 + [SNAN]], np.uint64)
    for engine in ("fast", "reference"):
        b, f = group_max(x, acc_type="FP32", max_abs=False, group_n=8, engine=engine)
        assert b.tolist() == [[0x3F800000, SNAN]] and _or(f) == 0
        b, f = group_max(x, acc_type="FP32", max_abs=True, group_n=8, engine=engine)
        assert b.tolist() == [[0x3F800000, QNAN]] and _or(f) == 1


@settings(max_examples=60, deadline=None)
@given(
    t=st.sampled_from(TYPES),
    ma=st.booleans(),
    gn=st.integers(1, 10),
    data=st.lists(st.lists(st.sampled_from([int(v) for v in SPECIALS]) | st.integers(0, 2**32 - 1),
                           min_size=1, max_size=12), min_size=1, max_size=3),
)
def test_fast_equals_reference_hypothesis(t, ma, gn, data):
    n = min(len(r) for r in data)
    x = np.array([r[:n] for r in data], np.uint64)
    a = group_max(x, acc_type=t, max_abs=ma, group_n=gn, engine="fast")
    b = group_max(x, acc_type=t, max_abs=ma, group_n=gn, engine="reference")
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    a = row_max(x, acc_type=t, max_abs=ma, row_max_in=x[:, :1], engine="fast")
    b = row_max(x, acc_type=t, max_abs=ma, row_max_in=x[:, :1], engine="reference")
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: row_max([1, 2], acc_type="S32", max_abs=False), "2-D"),
        (lambda: row_max(np.zeros((2, 0), np.uint32), acc_type="S32", max_abs=False), "2-D"),
        (lambda: row_max([[1, 2]], acc_type="S32", max_abs=False, row_max_in=[[1], [2]]), r"row_max_in.*\(1, 1\)"),
        (lambda: group_max([[1, 2]], acc_type="S32", max_abs=False, group_n=0), "group_n"),
        (lambda: group_max([[1, 2]], acc_type="S8", max_abs=False, group_n=8), "FP32, S32 or U32"),
        (lambda: row_max([[1.5]], acc_type="FP32", max_abs=False), "integer encodings"),
    ],
)
def test_fold_rejects(call, match):
    with pytest.raises(PtonumError, match=match):
        call()


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_scalar_step_gives_0d_arrays_in_both_engines(engine: str) -> None:
    # S32 max(1, 2) = 2, no flag
    bits, flags = reduction_step(1, 2, acc_type="S32", max_abs=False, engine=engine)
    assert type(bits) is np.ndarray and type(flags) is np.ndarray
    assert (bits.shape, bits.dtype, int(bits), flags.shape, flags.dtype, int(flags)) == \
        ((), np.uint32, 2, (), np.uint8, 0)
