"""Compiled kernel of the fast engine for ``ptonum.formats.decompose`` (8/16-bit carriers).

Source: ADR-0085 decision 182; ASL ``TileNumericFiniteDecomposition`` and the
``<Format>FiniteDecomposition`` functions.  The decomposition itself is not
restated here: the per-code table is packed from the owning module's lookup
table (``ptonum.formats._lut``, built by its vectorized numpy decoder), and the
kernel only unpacks it.

FP16 and BF16 skip the table: their fields are decoded with branch-free integer
arithmetic (``_kernel_ieee``), which runs at store bandwidth (a 256 KiB table gather
does not), after a one-time exhaustive check that it reproduces the table.

Memory layout.  A decomposition is four arrays (bool, bool, uint64, int64), 18
bytes written per element, against 1-2 bytes read.  The kernel makes one pass
over the encodings and writes all four outputs from a compact ``int32`` entry
per code (256 entries = 1 KiB for 8-bit carriers, 65536 entries = 256 KiB for
16-bit ones, so the table stays in L1/L2 cache):

    bits  0-15  significand (every 8/16-bit format's significand is < 2^12)
    bit   16    available
    bit   17    negative
    bits 18-31  exponent, two's complement (every exponent is within +-2^13)

No temporaries: the outputs are allocated once and filled in place, in parallel
over elements (``prange``).  Each output buffer is 64-byte aligned and starts at
its own offset within a page (see ``_aligned_empty``): with numpy's default
16-byte alignment the vectorized stores split cache lines and the four streams
alias each other, which cost 2.5x on the kernel pass.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional, Tuple

import numpy as np

from . import launch, njit, prange

__all__ = ["packed_table", "decompose_kernel", "decompose_codes"]

_TABLES: Dict[Tuple[object, int], np.ndarray] = {}
_LOCK = threading.Lock()


def packed_table(key: Tuple[object, int], significand: np.ndarray, exponent: np.ndarray,
                 available: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Pack one decoded lookup table (one row per carrier code) into ``int32`` entries.

    ``key`` identifies the (type, lane) for the cache.  Raises ``ValueError``
    when a field does not fit the packing (never for the Tile DataTypes; the
    round trip is checked here).

    Source: ADR-0085 D182; ``TileNumericFiniteDecomposition`` (the table it packs).
    """
    table = _TABLES.get(key)
    if table is not None:
        return table
    sig = np.asarray(significand, np.uint64)
    exp = np.asarray(exponent, np.int64)
    if sig.max(initial=0) >= 1 << 16 or exp.min(initial=0) < -(1 << 13) or exp.max(initial=0) >= 1 << 13:
        raise ValueError("decomposition table does not fit the packed int32 layout")
    packed = (sig.astype(np.int64) | (np.asarray(available, np.int64) << 16)
              | (np.asarray(negative, np.int64) << 17) | (exp << 18))
    table = packed.astype(np.int32)
    a, n, s, e = _unpack(table)
    if not (np.array_equal(a, available) and np.array_equal(n, negative)
            and np.array_equal(s, sig) and np.array_equal(e, exp)):  # pragma: no cover
        raise ValueError("decomposition table packing does not round-trip")
    table.setflags(write=False)
    with _LOCK:
        _TABLES.setdefault(key, table)
    return _TABLES[key]


def _unpack(table: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    t = table.astype(np.int64)
    return ((t >> 16) & 1).astype(bool), ((t >> 17) & 1).astype(bool), (t & 0xFFFF).astype(np.uint64), t >> 18


@njit(parallel=True)
def _kernel(codes: np.ndarray, table: np.ndarray, available: np.ndarray, negative: np.ndarray,
            significand: np.ndarray, exponent: np.ndarray) -> None:  # pragma: no cover - compiled
    for i in prange(codes.shape[0]):
        p = table[codes[i]]
        significand[i] = np.uint64(p & 0xFFFF)
        exponent[i] = np.int64(p >> 18)
        available[i] = (p & 0x10000) != 0
        negative[i] = (p & 0x20000) != 0


@njit(parallel=True)
def _kernel_ieee(codes: np.ndarray, fb: int, eb: int, bias: int, available: np.ndarray, negative: np.ndarray,
                 significand: np.ndarray, exponent: np.ndarray) -> None:  # pragma: no cover - compiled
    # Sign | exponent field (eb bits) | fraction (fb bits); the all-ones exponent field is
    # Inf/NaN (unavailable); field 0 is zero/subnormal.  Selected only after it reproduced
    # the owning module's table for every code (``_ieee_params``).
    emax = (1 << eb) - 1
    fmask = (1 << fb) - 1
    hidden = 1 << fb
    for i in prange(codes.shape[0]):
        c = np.int64(codes[i])
        ef = (c >> fb) & emax
        f = c & fmask
        av = ef != emax
        nz = ef != 0
        sg = f | (hidden if nz else 0)
        ex = (ef if nz else 1) - (bias + fb)
        significand[i] = np.uint64(sg if av else 0)
        exponent[i] = ex if (av and sg != 0) else 0
        available[i] = av
        negative[i] = av and (c >> (fb + eb)) != 0


_IEEE: Dict[Tuple[object, int], Optional[Tuple[int, int, int]]] = {}


def _ieee_params(key: Tuple[object, int], descriptor: Any, significand: np.ndarray, exponent: np.ndarray,
                 available: np.ndarray, negative: np.ndarray) -> Optional[Tuple[int, int, int]]:
    """``(fraction bits, exponent bits, bias)`` when the arithmetic kernel may replace the table.

    Only for single-lane 16-bit fixed-binary formats with IEEE specials (FP16, BF16),
    and only if the arithmetic reproduces the owning module's table for every code
    (checked once per key, exhaustively); otherwise None (the table kernel is used).
    """
    if key in _IEEE:
        return _IEEE[key]
    params: Optional[Tuple[int, int, int]] = None
    d = descriptor
    if (getattr(d, "kind", None) is not None and int(d.kind) == 1 and d.carrier_bits == 16
            and d.lanes_per_carrier == 1 and d.has_infinity and not d.required_low_zero_bits
            and not d.required_high_zero_bits and d.exponent_bits_min == d.exponent_bits_max
            and d.sign_bit == d.exponent_bits_min + d.fraction_bits_min and d.exponent_bias_available):
        cand = (int(d.fraction_bits_min), int(d.exponent_bits_min), int(d.exponent_bias))
        allc = np.arange(1 << 16, dtype=np.uint16)
        outs = (np.empty(allc.size, bool), np.empty(allc.size, bool), np.empty(allc.size, np.uint64),
                np.empty(allc.size, np.int64))
        launch(_kernel_ieee, allc, *cand, *outs)
        want = (np.asarray(available, bool), np.asarray(negative, bool), np.asarray(significand, np.uint64),
                np.asarray(exponent, np.int64))
        if all(np.array_equal(o, w) for o, w in zip(outs, want)):
            params = cand
    with _LOCK:
        _IEEE.setdefault(key, params)
    return _IEEE[key]


def decompose_codes(codes: np.ndarray, key: Tuple[object, int], descriptor: Any, significand: np.ndarray,
                    exponent: np.ndarray, available: np.ndarray, negative: np.ndarray
                    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Decompose validated carrier codes of one (type, lane) ``key`` with the fastest exact kernel.

    ``significand``/``exponent``/``available``/``negative`` are the owning module's
    per-code table columns (one row per carrier code) and ``descriptor`` the format
    descriptor.  FP16/BF16 use branch-free field arithmetic (verified against the
    table once); every other 8/16-bit format unpacks the packed table.  Returns
    four fresh C-contiguous arrays with the shape of ``codes``.

    Source: ADR-0085 D182; ``TileNumericFiniteDecomposition``.
    """
    ieee = _ieee_params(key, descriptor, significand, exponent, available, negative)
    if ieee is None:
        return decompose_kernel(codes, packed_table(key, significand, exponent, available, negative))
    flat = np.ascontiguousarray(codes).reshape(-1)
    if flat.dtype not in (np.uint8, np.uint16):
        flat = flat.astype(np.uint16)
    a, ng, sg, ex = _outputs(flat.size)
    launch(_kernel_ieee, flat, ieee[0], ieee[1], ieee[2], a, ng, sg, ex)
    shape = codes.shape
    return a.reshape(shape), ng.reshape(shape), sg.reshape(shape), ex.reshape(shape)


def _outputs(n: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (_aligned_empty(n, np.dtype(bool), 512), _aligned_empty(n, np.dtype(bool), 2560),
            _aligned_empty(n, np.dtype(np.uint64), 1536), _aligned_empty(n, np.dtype(np.int64), 3584))


def _aligned_empty(n: int, dtype: np.dtype, page_offset: int) -> np.ndarray:
    """An uninitialised C-contiguous 1-D array whose data starts at ``page_offset`` (mod 4096).

    Large numpy buffers start 16 bytes past a page boundary, so the kernel's 64-byte
    vector stores would straddle cache lines; and four output streams at the same
    offset within a page collide in the store/load address checks (4K aliasing).
    Each output gets its own buffer (independent lifetimes), 64-byte aligned at a
    distinct page offset: about 2.5x faster kernel pass (measured, docs/performance.md).
    """
    if n * dtype.itemsize < 1 << 16:
        return np.empty(n, dtype)
    buf = np.empty(n * dtype.itemsize + 4096, np.uint8)
    off = (page_offset - buf.ctypes.data) % 4096
    return buf[off:off + n * dtype.itemsize].view(dtype)


def decompose_kernel(codes: np.ndarray, table: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Decompose validated carrier codes (integer array, every value < ``table.size``).

    Returns ``(available bool, negative bool, significand uint64, exponent int64)``,
    each a fresh C-contiguous array with the shape of ``codes``.

    Source: ADR-0085 D182; ``TileNumericFiniteDecomposition``.
    """
    flat = np.ascontiguousarray(codes).reshape(-1)
    if flat.dtype not in (np.uint8, np.uint16):
        flat = flat.astype(np.uint8 if table.size <= 256 else np.uint16)
    available, negative, significand, exponent = _outputs(flat.size)
    launch(_kernel, flat, table, available, negative, significand, exponent)
    shape = codes.shape
    return available.reshape(shape), negative.reshape(shape), significand.reshape(shape), exponent.reshape(shape)
