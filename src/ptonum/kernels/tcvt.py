"""Compiled kernel of the fast engine for TCVT to E8M0 (FP16/BF16/FP32 sources).

Source: ADR-0085 decision 183; ASL ``ReferenceFloatToE8M0`` /
``ReferenceE8M0RoundExponent`` (``asl/arch/profile/e8m0-conversion.asl``).  The
rule itself is not restated here: the tables below are filled by evaluating the
owning module's vectorized rule (``ptonum.tcvt._fast_rule``), and the kernel only
selects among its precomputed outcomes.

Why a table on the sign+exponent field works.  For a source with ``fb``
fraction bits, write an encoding as ``key = bits >> fb`` (sign and exponent
field) and ``f = bits & (2^fb - 1)``.  Except for the positive zero/subnormal
key (``key == 0``), the result for a fixed key takes at most three values:

* ``f == 0``: the exact power of two (or +Inf / -0 / -Inf),
* ``0 < f < thr[key]``: the candidate ``F`` (or NaN / negative), and
* ``f >= thr[key]``: the candidate ``F + 1`` -- the nearest modes switch at the
  sqrt(2) midpoint; directed modes and every non-finite key have no switch
  (``thr = 2^fb``, never reached).

So the kernel computes ``row = key * 4 + (f != 0) + (f >= thr[key])`` and reads one
packed ``code | flags << 8`` entry: branch-free and independent of the data
(mixed signs, positive values and exact powers of two all cost the same).
Positive subnormals (``key == 0``) have a floor exponent that depends on the
highest set bit ``h`` of ``f``; they use a second small table with one row per
``h`` (row 0 is the zero) and the same three-way choice
(``f == 2^h`` / below / at-or-above the row's threshold).

Every table is checked when it is built: each row is a step function with at
most one step, verified against the rule at the row's ends, around the step and
at sampled interior points (exhaustively for the 16-bit sources).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Tuple

import numpy as np

from . import launch, njit, prange

__all__ = ["e8m0_tables", "to_e8m0_kernel"]

Rule = Callable[[np.ndarray, Any, Any, bool], Tuple[np.ndarray, np.ndarray]]
Tables = Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _packed(rule: Rule, bits: np.ndarray, layout: Any, mode: Any, sat: bool) -> np.ndarray:
    c, f = rule(bits.astype(np.int64), layout, mode, sat)
    return c.astype(np.int64) | (f.astype(np.int64) << 8)


def _step_rows(rule: Rule, layout: Any, mode: Any, sat: bool, base: np.ndarray,
               start: np.ndarray, stop: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows of encodings ``base + f`` with ``f`` in ``[start, stop]`` (start <= stop),
    return ``(below, above, thr)``: the result at ``start``, at ``stop``, and the first
    ``f`` giving ``above`` (``stop + 1`` when the row is constant).  Bisection on the rule."""
    below = _packed(rule, base + start, layout, mode, sat)
    above = _packed(rule, base + stop, layout, mode, sat)
    step = below != above
    lo = start.copy()  # result == below at lo
    hi = stop.copy()  # result == above at hi (for stepping rows)
    while True:
        live = step & (hi - lo > 1)
        if not np.any(live):
            break
        mid = (lo + hi) // 2
        same = _packed(rule, base + mid, layout, mode, sat) == below
        lo = np.where(live & same, mid, lo)
        hi = np.where(live & ~same, mid, hi)
    thr = np.where(step, hi, stop + 1)
    return below, above, thr


def _check_rows(rule: Rule, layout: Any, mode: Any, sat: bool, base: np.ndarray, exact_f: np.ndarray,
                start: np.ndarray, stop: np.ndarray, exact: np.ndarray, below: np.ndarray,
                above: np.ndarray, thr: np.ndarray, samples: int) -> None:
    """Assert the three-way table reproduces the rule on probes of every row."""
    rng = np.random.default_rng(183)
    span = stop - start
    probes = [start, stop, thr - 1, thr, thr + 1, exact_f, exact_f + 1, (start + stop) // 2]
    for _ in range(samples):
        probes.append(start + (rng.random(start.size) * (span + 1)).astype(np.int64))
    for f in probes:
        f = np.clip(f, start, stop)
        got = np.where(f == exact_f, exact, np.where(f >= thr, above, below))
        want = _packed(rule, base + f, layout, mode, sat)
        if not np.array_equal(got, want):  # pragma: no cover - a broken one-step assumption
            raise AssertionError("TCVT E8M0 kernel table does not reproduce the rule")


@functools.lru_cache(maxsize=None)
def _tables_cached(layout: Any, mode: Any, sat: bool, rule: Rule) -> Tables:
    fb = layout.fraction_bits
    fmax = (1 << fb) - 1
    nkeys = 1 << (layout.width - fb)
    keys = np.arange(nkeys, dtype=np.int64)
    base = keys << fb
    one = np.ones(nkeys, np.int64)
    exact = _packed(rule, base, layout, mode, sat)
    below, above, thr = _step_rows(rule, layout, mode, sat, base, one, np.full(nkeys, fmax, np.int64))
    samples = 8 if fb > 16 else 0
    k = slice(1, None)  # key 0 (positive zero/subnormals) has its own table below
    _check_rows(rule, layout, mode, sat, base[k], np.zeros(nkeys - 1, np.int64), np.zeros(nkeys - 1, np.int64),
                np.full(nkeys - 1, fmax, np.int64), exact[k], below[k], above[k], thr[k], samples)
    # Positive zero / subnormals: row h+1 holds f in [2^h, 2^(h+1)); row 0 is f == 0.
    h = np.arange(fb, dtype=np.int64)
    s_start, s_stop = np.int64(1) << h, (np.int64(2) << h) - 1
    s_exact = _packed(rule, s_start, layout, mode, sat)
    inner = np.minimum(s_start + 1, s_stop)
    s_below, s_above, s_thr = _step_rows(rule, layout, mode, sat, np.zeros(fb, np.int64), inner, s_stop)
    # a one-element row (h == 0) has only its exact point
    s_thr = np.where(s_start == s_stop, s_stop + 1, s_thr)
    s_below = np.where(s_start == s_stop, s_exact, s_below)
    _check_rows(rule, layout, mode, sat, np.zeros(fb, np.int64), s_start, s_start, s_stop,
                s_exact, s_below, s_above, s_thr, samples)
    zero = _packed(rule, np.zeros(1, np.int64), layout, mode, sat)[0]
    main = np.empty(nkeys * 4, np.uint16)
    main[0::4], main[1::4], main[2::4], main[3::4] = exact, below, above, above
    sub = np.empty((fb + 1) * 4, np.uint16)
    sub[0:4] = zero
    sub[4::4], sub[5::4], sub[6::4], sub[7::4] = s_exact, s_below, s_above, s_above
    thr_main = np.minimum(thr, fmax + 1).astype(np.uint32)
    thr_sub = np.concatenate([[1], np.minimum(s_thr, fmax + 1)]).astype(np.uint32)
    if fb <= 16:  # exhaustive check of the whole table for 16-bit sources
        allbits = np.arange(1 << layout.width, dtype=np.int64)
        c, fl = np.empty(allbits.size, np.uint8), np.empty(allbits.size, np.uint8)
        launch(_kernel, allbits.astype(np.uint16), fb, main, thr_main, sub, thr_sub, c, fl)
        got = c.astype(np.int64) | (fl.astype(np.int64) << 8)
        if not np.array_equal(got, _packed(rule, allbits, layout, mode, sat)):  # pragma: no cover
            raise AssertionError("TCVT E8M0 kernel disagrees with the rule on a 16-bit source")
    out = (main, thr_main, sub, thr_sub)
    for a in out:
        a.setflags(write=False)
    return out


def e8m0_tables(layout: Any, mode: Any, sat: bool, rule: Rule) -> Tables:
    """Kernel tables ``(main, thr_main, sub, thr_sub)`` for one (source, RMode, Sat).

    ``layout`` is the source's bit layout (``width``, ``fraction_bits``),
    ``rule(bits int64, layout, mode, sat) -> (codes, flags)`` the vectorized rule.
    Built once and cached; raises AssertionError if the rule ever broke the
    one-step-per-row property the kernel relies on.

    Source: ADR-0085 D183; ``ReferenceFloatToE8M0`` (the rule the tables tabulate).
    """
    return _tables_cached(layout, mode, bool(sat), rule)


@njit(parallel=True, fastmath=False)
def _kernel(src: np.ndarray, fb: int, main: np.ndarray, thr_main: np.ndarray, sub: np.ndarray,
            thr_sub: np.ndarray, codes: np.ndarray, flags: np.ndarray) -> None:  # pragma: no cover - compiled
    mask = (1 << fb) - 1
    for i in prange(src.shape[0]):
        u = np.int64(src[i])
        key = u >> fb
        f = u & mask
        if key != 0:
            row = key * 4 + np.int64(f != 0) + np.int64(f >= thr_main[key])
            p = main[row]
        else:
            if f == 0:
                r = 0
            else:
                r = math.frexp(np.float64(f))[1]  # h + 1 for 2^h <= f < 2^(h+1)
            row = r * 4 + np.int64(f != (np.int64(1) << r) >> 1) + np.int64(f >= thr_sub[r])
            p = sub[row]
        codes[i] = np.uint8(p & 0xFF)
        flags[i] = np.uint8(p >> 8)


def to_e8m0_kernel(bits: np.ndarray, layout: Any, mode: Any, sat: bool,
                   rule: Rule) -> Tuple[np.ndarray, np.ndarray]:
    """TCVT to E8M0 of raw encodings ``bits`` (unsigned integer array, values fit ``layout.width``).

    Returns ``(codes, flags)``, two ``uint8`` arrays with the shape of ``bits``,
    bit-identical to the numpy path of :mod:`ptonum.tcvt`.  Runs on all numba
    threads (``prange`` over elements).

    Source: ADR-0085 D183; ``ReferenceFloatToE8M0``.
    """
    main, thr_main, sub, thr_sub = e8m0_tables(layout, mode, sat, rule)
    carrier = np.uint32 if layout.width == 32 else np.uint16
    flat = np.ascontiguousarray(bits).reshape(-1)
    if flat.dtype != carrier and not (flat.dtype == np.uint8 and layout.width == 16):
        flat = flat.astype(carrier)
    codes = np.empty(flat.size, np.uint8)
    flags = np.empty(flat.size, np.uint8)
    launch(_kernel, flat, layout.fraction_bits, main, thr_main, sub, thr_sub, codes, flags)
    return codes.reshape(bits.shape), flags.reshape(bits.shape)
