"""Compare a device dump with the model's tile operation (``ptonum compare``).

Also holds the small option parsers shared by the ``explain`` and ``compare``
commands (integers in hex or decimal, PreQuantMode and ReluMode by code or name).
"""

from __future__ import annotations

from typing import Any

from ..errors import UsageError

__all__ = ["parse_int", "parse_mode", "parse_relu"]


def parse_int(text: Any, name: str) -> int:
    """``0x..`` hex, ``0b..`` binary or decimal text to a non-negative int."""
    if isinstance(text, int):
        return text
    try:
        v = int(str(text).strip(), 0)
    except ValueError:
        raise UsageError(f"{name} = {text!r}: expected an integer (0x... hex or decimal)") from None
    if v < 0:
        raise UsageError(f"{name} = {text!r}: expected a non-negative encoding")
    return v


def parse_mode(text: Any, name: str = "--mode") -> int:
    """PreQuantMode by code or ADR-0085 D179 name."""
    from ..fpatr import parse_pre_quant_mode

    return int(parse_pre_quant_mode(_code_or_name(text), name))


def parse_relu(text: Any, name: str = "--relu") -> int:
    """ReluMode by code (0-3) or name (NONE, RELU, LRELU, PRELU)."""
    from ..fpatr import parse_relu_mode

    return int(parse_relu_mode(_code_or_name(text), name))


def _code_or_name(text: Any) -> Any:
    """An option value as an int when it reads as one (``12``, ``0x0c``), else the stripped text."""
    s = str(text).strip()
    try:
        return int(s, 0)
    except ValueError:
        return s


# --------------------------------------------------------------------------
# Comparing a device dump with the model
# --------------------------------------------------------------------------

import numpy as np  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Dict, List, Optional, Tuple  # noqa: E402

from ..formats import TileDataType  # noqa: E402

__all__ += ["as_device_bits", "is_nan", "distance", "Mismatch", "CompareReport", "compare_arrays", "histogram"]

_WIDTH = {
    TileDataType.FP32: 32, TileDataType.S32: 32, TileDataType.U32: 32, TileDataType.FP16: 16,
    TileDataType.BF16: 16, TileDataType.S16: 16, TileDataType.S8: 8, TileDataType.E4M3: 8,
    TileDataType.HiF8: 8, TileDataType.S4X2: 4,
}


def _shape_text(shape: Tuple[int, ...]) -> str:
    return "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"


def as_device_bits(name: str, arr: np.ndarray, dst: TileDataType, shape: Tuple[int, ...],
                   output: str = "") -> np.ndarray:
    """Device values or raw encodings -> uint64 encodings at the destination width.

    ``arr`` must have exactly the model's ``shape`` (a transposed, flattened or
    padded dump is refused, never reshaped).  Typed arrays are reinterpreted bit
    for bit when their item size is the destination's (float16/bfloat16/float32/
    int8/int16/int32 ...); an S4X2 element keeps its low nibble.  Raises
    :class:`UsageError` on a shape or size mismatch, e.g. ``--device-d: shape
    48x64 does not match the model's D 64x48``.
    """
    a = np.asarray(arr)
    if a.shape != tuple(shape):
        what = f"{output} " if output else ""
        raise UsageError(f"{name}: shape {_shape_text(a.shape)} does not match the model's {what}"
                         f"{_shape_text(tuple(shape))}")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    width = _WIDTH[dst]
    nbytes = max(1, width // 8)
    mask = (1 << width) - 1
    if a.dtype.kind in "iu":
        if a.dtype.kind == "i":  # signed values: two's complement at the destination width
            bits = (a.astype(np.int64) & mask).astype(np.uint64)
        else:
            bits = a.astype(np.uint64)
            if dst is TileDataType.S4X2:
                bits = bits & np.uint64(mask)
            over = (bits >> np.uint64(width)) != 0
            if np.any(over):
                i = tuple(int(x) for x in np.argwhere(over)[0])
                raise UsageError(f"{name}{list(i)} = {int(bits[i]):#x}: does not fit the {width}-bit {dst.name} element")
        return bits
    if a.dtype.itemsize != nbytes or dst.is_integer:
        raise UsageError(f"{name}: dtype {a.dtype} is not a {dst.name} element (give raw bits or {dst.name} values)")
    return a.view(np.dtype(f"u{nbytes}")).astype(np.uint64)


def _signed(bits: np.ndarray, width: int) -> np.ndarray:
    b = bits.astype(np.int64)
    return np.where(b >= (1 << (width - 1)), b - (1 << width), b)


_RANK_CACHE: Dict[TileDataType, Tuple[np.ndarray, np.ndarray]] = {}


def _float_rank(dst: TileDataType, bits: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(rank, special) of floating encodings: rank orders finite values (±0 share a rank);
    ``special`` marks NaN/Inf (class compared separately)."""
    from ..formats import to_float64

    if dst is TileDataType.FP32:
        b = bits.astype(np.int64)
        mag = b & 0x7FFFFFFF
        special = mag >= 0x7F800000
        return np.where(b >> 31 == 1, -mag, mag), special
    if dst not in _RANK_CACHE:
        codes = np.arange(1 << _WIDTH[dst], dtype=np.uint64)
        vals = np.asarray(to_float64(dst, codes), dtype=np.float64)
        finite = np.isfinite(vals)
        uniq = np.unique(vals[finite])
        rank = np.zeros(codes.size, dtype=np.int64)
        rank[finite] = np.searchsorted(uniq, vals[finite])
        _RANK_CACHE[dst] = (rank, ~finite)
    rank, special = _RANK_CACHE[dst]
    idx = bits.astype(np.int64)
    return rank[idx], special[idx]


def is_nan(dst: TileDataType, bits: np.ndarray) -> np.ndarray:
    """True where the encodings are NaN in ``dst`` (False for integer types)."""
    b = np.asarray(bits).astype(np.uint64)
    if dst.is_integer:
        return np.zeros(b.shape, bool)
    if dst is TileDataType.FP32:
        return (b & np.uint64(0x7FFFFFFF)) > np.uint64(0x7F800000)
    from ..formats import to_float64

    return np.isnan(np.asarray(to_float64(dst, b), dtype=np.float64))


def distance(dst: TileDataType, model_bits: np.ndarray, device_bits: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(distance, class_mismatch): |integer difference| for integer destinations,
    ulps in the destination format for floating ones; ``class_mismatch`` marks
    differing elements where either side is NaN or infinite (no distance) --
    including two NaNs with different payloads (see :func:`is_nan` to tell them apart)."""
    width = _WIDTH[dst]
    if dst.is_integer:
        if dst is TileDataType.U32:
            d = np.abs(model_bits.astype(np.int64) - device_bits.astype(np.int64))
        else:
            d = np.abs(_signed(model_bits, width) - _signed(device_bits, width))
        return d, np.zeros(d.shape, bool)
    ra, sa = _float_rank(dst, model_bits)
    rb, sb = _float_rank(dst, device_bits)
    cls = (sa | sb) & (model_bits != device_bits)
    return np.where(cls, 0, np.abs(ra - rb)), cls


def histogram(d: np.ndarray) -> List[Tuple[str, int]]:
    """Counts of distances in bins 1, 2, 3-4, 5-8, ..., by powers of two."""
    out: List[Tuple[str, int]] = []
    if d.size == 0:
        return out
    lo = 1
    hi = 1
    dmax = int(d.max())
    while lo <= dmax:
        n = int(np.count_nonzero((d >= lo) & (d <= hi)))
        if n:
            out.append((str(lo) if lo == hi else f"{lo}-{hi}", n))
        lo, hi = hi + 1, hi * 2
    return out


@dataclass
class Mismatch:
    output: str  #: "D", "RowMaxOut" or "GroupMaxOut"
    position: Tuple[int, ...]
    model: int
    device: int
    distance: Optional[int]  #: None for a class (NaN/Inf) mismatch or a NaN payload difference
    nan_payload: bool = False  #: both are NaN, with different encodings

    @property
    def description(self) -> str:
        if self.nan_payload:
            return "NaN payload differs (both NaN)"
        if self.distance is None:
            return "class mismatch (NaN/Inf vs other)"
        return f"distance {self.distance}"


@dataclass
class CompareReport:
    """Result of comparing one output of the model with the device."""

    output: str
    dst_type: TileDataType
    elements: int
    mismatches: int
    class_mismatches: int  #: NaN/Inf against another class (NaN payload differences not included)
    first: List[Mismatch] = field(default_factory=list)
    hist: List[Tuple[str, int]] = field(default_factory=list)
    nan_payload_mismatches: int = 0  #: both NaN, different encodings

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


def compare_arrays(output: str, dst: TileDataType, model_bits: np.ndarray, device_bits: np.ndarray,
                   max_report: int = 10) -> CompareReport:
    """Compare two arrays of encodings (same shape) of one output."""
    mb = np.asarray(model_bits).astype(np.uint64)
    db = np.asarray(device_bits).astype(np.uint64)
    if mb.shape != db.shape:
        raise UsageError(f"{output}: device shape {db.shape} differs from the model's {mb.shape}")
    diff = mb != db
    d, cls = distance(dst, mb, db)
    payload = diff & is_nan(dst, mb) & is_nan(dst, db)
    cls = cls & ~payload
    pos = np.argwhere(diff)
    first = []
    for p in pos[:max_report]:
        t = tuple(int(x) for x in p)
        first.append(Mismatch(output, t, int(mb[t]), int(db[t]), None if (cls[t] or payload[t]) else int(d[t]),
                              bool(payload[t])))
    return CompareReport(output, dst, int(mb.size), int(np.count_nonzero(diff)), int(np.count_nonzero(cls)), first,
                         histogram(d[diff & ~cls & ~payload]), int(np.count_nonzero(payload)))
