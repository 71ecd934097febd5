"""Compare a device dump with the model's tile operation (``ptonum compare``).

Also holds the small option parsers shared by the ``explain`` and ``compare``
commands (integers in hex or decimal, PreQuantMode and ReluMode by code or name).
"""

from __future__ import annotations

import enum
from typing import Any

from .._util import int_text, shape_text
from ..errors import UsageError

__all__ = ["parse_int", "parse_mode", "parse_relu"]


def parse_int(text: Any, name: str) -> int:
    """``0x..`` hex, ``0b..`` binary or decimal text to a non-negative int."""
    if isinstance(text, int):
        return text
    try:
        v = int_text(str(text).strip())
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
    """An option value as an int when it reads as one (``12``, ``0x0c``), else the stripped text.

    An enum member (a :class:`~ptonum.tables.PreQuantMode` or ReluMode, or any :class:`enum.Enum`) is taken
    by its value when that is an int or a str (a PreQuantMode by its code), else by its name: ``str()`` of a
    member is not its code or name (``"PreQuantMode.REQ8"`` for an IntEnum on Python 3.10, ``"M.REQ8"`` for
    a plain Enum on every version)."""
    if isinstance(text, enum.Enum):
        value = text.value
        text = value if isinstance(value, (int, str)) and not isinstance(value, bool) else text.name
        if isinstance(text, int):
            return int(text)
    s = str(text).strip()
    try:
        return int_text(s)
    except ValueError:
        return s


# --------------------------------------------------------------------------
# Comparing a device dump with the model
# --------------------------------------------------------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Dict, List, Optional, Tuple  # noqa: E402

from ..formats import TileDataType  # noqa: E402
from ..tables import DESTINATIONS  # noqa: E402

__all__ += ["as_device_bits", "unpack_s4x2", "parse_flags", "decoded_text", "is_nan", "distance", "Mismatch",
            "CompareReport", "compare_arrays", "histogram"]

_WIDTH = {
    TileDataType.FP32: 32, TileDataType.S32: 32, TileDataType.U32: 32, TileDataType.FP16: 16,
    TileDataType.BF16: 16, TileDataType.S16: 16, TileDataType.S8: 8, TileDataType.E4M3: 8,
    TileDataType.HiF8: 8, TileDataType.S4X2: 4,
}


_CARRIER = {8: np.uint8, 16: np.uint16, 32: np.uint32, 4: np.uint8}


def _signed_range(dst: TileDataType, width: int) -> Tuple[int, int]:
    """The values a signed dump element may hold for ``dst``: the signed range of a signed integer
    destination, otherwise the encodings ``0 .. 2**width - 1``."""
    if dst.is_integer and dst is not TileDataType.U32:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def as_device_bits(name: str, arr: np.ndarray, dst: TileDataType, shape: Tuple[int, ...],
                   output: str = "") -> np.ndarray:
    """Device values or raw encodings -> encodings at the destination width, in its carrier dtype
    (uint8 for S8/S4X2/E4M3/HiF8, uint16 for FP16/BF16/S16, uint32 for FP32/S32/U32).

    ``arr`` must have exactly the model's ``shape`` (a transposed, flattened or
    padded dump is refused, never reshaped).  Typed arrays are reinterpreted bit
    for bit when their item size is the destination's (float16/bfloat16/float32/
    int8/int16/int32 ...).  A signed integer array of another width holds values
    for an integer destination: each must fit it (S8 -128..127, S4X2 -8..7, U32
    0 .. 2**32 - 1) -- an int32 dump holding -1000 for S8 is refused, never wrapped;
    for a floating destination it holds encodings 0 .. 2**width - 1 (the refusal
    says so: floating values go in a floating array).  An unsigned array holds encodings, which
    must fit the destination width (an S4X2 element: its nibble 0x0 .. 0xf, or a negative nibble
    sign-extended to the dump's width, e.g. 0xf8 .. 0xff in ``uint8``; the low nibble is kept).
    Raises :class:`UsageError` on a shape, size or range mismatch, e.g.
    ``--device-d: shape 48x64 does not match the model's D 64x48``.
    """
    a = np.asarray(arr)
    if a.shape != tuple(shape):
        what = f"{output} " if output else ""
        raise UsageError(f"{name}: shape {shape_text(a.shape)} does not match the model's {what}"
                         f"{shape_text(tuple(shape))}")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    width = _WIDTH[dst]
    carrier = _CARRIER[width]
    nbytes = max(1, width // 8)
    mask = (1 << width) - 1
    if a.dtype.kind in "iu":
        if a.dtype.kind == "i" and a.dtype.itemsize * 8 == width:  # the same width: a bit-for-bit view
            return a.view(carrier)
        if a.dtype.kind == "i":  # values: they must fit the destination
            lo, hi = _signed_range(dst, width)
            if a.size and (int(a.min()) < lo or int(a.max()) > hi):
                i = tuple(int(x) for x in np.argwhere((a < lo) | (a > hi))[0])
                if not dst.is_integer:  # a floating destination's integer dump holds its encodings, not values
                    raise UsageError(
                        f"{name}{list(i)} = {int(a[i])}: not an encoding of the {width}-bit {dst.name} element "
                        f"({lo} .. {hi}); for a floating destination an integer dump holds raw encodings (a "
                        f"{width}-bit signed one is read bit for bit), not values: give values as a floating "
                        f"array of the same width")
                raise UsageError(f"{name}{list(i)} = {int(a[i])}: does not fit the {width}-bit {dst.name} element "
                                 f"({lo} .. {hi}); a signed dump holds values, an unsigned one raw encodings")
            return (a & mask).astype(carrier) if a.dtype.itemsize * 8 > width else a.astype(carrier)
        if dst is TileDataType.S4X2:
            # a nibble 0x0..0xF, or a negative one sign-extended to the dump's width (0xF8..0xFF in uint8,
            # 0xFFF8..0xFFFF in uint16, ...): anything else has bits that are not the element's
            top = int(np.iinfo(a.dtype).max)
            bad = (a > a.dtype.type(mask)) & (a < a.dtype.type(top - 7))
            if a.size and bool(bad.any()):
                i = tuple(int(x) for x in np.argwhere(bad)[0])
                raise UsageError(f"{name}{list(i)} = {int(a[i]):#x}: does not fit the 4-bit S4X2 element "
                                 f"(0x0 .. 0xf, or a negative one sign-extended: {top - 7:#x} .. {top:#x})")
            a = a & a.dtype.type(mask)
        elif a.size and int(a.max()) > mask:
            i = tuple(int(x) for x in np.argwhere(a > mask)[0])
            raise UsageError(f"{name}{list(i)} = {int(a[i]):#x}: does not fit the {width}-bit {dst.name} element")
        return a.astype(carrier, copy=False)
    if a.dtype.itemsize != nbytes or dst.is_integer:
        raise UsageError(f"{name}: dtype {a.dtype} is not a {dst.name} element (give raw bits or {dst.name} values)")
    return a.view(carrier)


def unpack_s4x2(name: str, packed: np.ndarray, shape: Tuple[int, int]) -> np.ndarray:
    """Packed S4X2 bytes (M x ceil(N/2) ``uint8``, element 2k in the low nibble of byte k, element
    2k+1 in its high nibble, each row starting a new byte) -> M x N ``uint8`` nibbles.

    Raises :class:`UsageError` when ``packed`` is not M x ceil(N/2) bytes or, for odd N, a row's
    last high nibble (padding) is not zero.
    Source: ADR-0085 D181 with ADR-0033 (nibble order) and ADR-0074 (row restart).
    """
    m, n = shape
    half = (n + 1) // 2
    b = np.asarray(packed)
    if b.dtype.kind not in "iu" or b.dtype.itemsize != 1 or b.shape != (m, half):
        raise UsageError(f"{name}: a packed S4X2 dump is {m} x {half} bytes (two elements a byte) for D "
                         f"{m}x{n}; got {shape_text(b.shape)} {b.dtype}")
    b = b.view(np.uint8)
    out = np.empty((m, 2 * half), dtype=np.uint8)
    out[:, 0::2] = b & np.uint8(0x0F)
    out[:, 1::2] = b >> np.uint8(4)
    if n % 2 and np.any(out[:, n]):
        r = int(np.flatnonzero(out[:, n])[0])
        raise UsageError(f"{name}: row {r} of the packed S4X2 dump has a nonzero padding nibble (high nibble of "
                         f"its last byte, N = {n} is odd)")
    return out[:, :n]


def parse_flags(text: Any, name: str = "--device-flags") -> int:
    """Sticky flags as a word (``0x14``, ``20``) or by names as ptonum prints them (``OF|NX``,
    ``OF,NX``, ``-`` or ``none`` for no flag).  Raises :class:`UsageError` naming ``name``."""
    from ..flags import NumericFlags

    s = str(text).strip()
    try:
        v = int_text(s)
    except ValueError:
        v = -1
    if v >= 0:
        if v >> 5:
            raise UsageError(f"{name} = {text}: does not fit in 5 bits (NV=0x01 DZ=0x02 OF=0x04 UF=0x08 NX=0x10)")
        return v
    if s.lower() in ("-", "none", ""):
        return 0
    word = 0
    for part in s.replace(",", "|").replace("+", "|").split("|"):
        p = part.strip().upper()
        if p not in NumericFlags.__members__:
            raise UsageError(f"{name} = {text!r}: {part.strip()!r} is not a flag; expected names NV, DZ, OF, UF, "
                             "NX joined by | (e.g. OF|NX), '-' for none, or a word such as 0x14")
        word |= int(NumericFlags[p])
    return word


def _signed(bits: np.ndarray, width: int) -> np.ndarray:
    b = bits.astype(np.int64)
    return np.where(b >= (1 << (width - 1)), b - (1 << width), b)


_RANK_CACHE: Dict[TileDataType, Tuple[np.ndarray, np.ndarray]] = {}
_FP32_INF = DESTINATIONS[TileDataType.FP32].overflow_code(False, False)  # +Inf: FP32 codes above it are NaN


def _float_rank(dst: TileDataType, bits: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(rank, special) of floating encodings: rank orders finite values (±0 share a rank);
    ``special`` marks NaN/Inf (class compared separately)."""
    from ..formats import to_float64

    if dst is TileDataType.FP32:
        b = bits.astype(np.int64)
        mag = b & 0x7FFFFFFF
        special = mag >= _FP32_INF
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
        return (b & np.uint64(0x7FFFFFFF)) > np.uint64(_FP32_INF)
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


def decoded_text(dst: TileDataType, bits: int) -> str:
    """An encoding's value for a mismatch line: an integer for integer types, otherwise the exact
    value to 9 significant digits (enough to tell any two FP32 values apart), inf or NaN."""
    from ..formats import to_float64

    v = float(np.asarray(to_float64(dst, np.asarray(bits, dtype=_CARRIER[_WIDTH[dst]]))))
    if dst.is_integer:
        return str(int(v))
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return format(v, ".9g")


@dataclass
class Mismatch:
    output: str  #: "D", "RowMaxOut" or "GroupMaxOut"
    position: Tuple[int, ...]
    model: int
    device: int
    distance: Optional[int]  #: None for a class (NaN/Inf) mismatch, a NaN payload or a signed-zero difference
    nan_payload: bool = False  #: both are NaN, with different encodings
    model_value: str = ""  #: the model's encoding decoded (see :func:`decoded_text`)
    device_value: str = ""  #: the device's encoding decoded
    signed_zero: bool = False  #: +0 against -0 (equal values, different encodings)

    @property
    def description(self) -> str:
        if self.nan_payload:
            return "NaN payload differs (both NaN)"
        if self.signed_zero:
            signs = ["-0" if v.startswith("-") else "+0" for v in (self.model_value, self.device_value)]
            return f"sign of zero differs ({signs[0]} vs {signs[1]})"
        if self.distance is None:
            return "class mismatch (NaN/Inf vs other)"
        return f"distance {self.distance}"


@dataclass
class CompareReport:
    """Result of comparing one output of the model with the device.

    ``positions`` (K x ndim int64) and ``distances`` (K int64; -1 where there is no distance: a
    NaN/Inf class mismatch, a NaN payload difference or +0 against -0) list every mismatch in row-major
    order;
    ``max_abs_error``/``max_rel_error`` are the largest |device - model| and
    |device - model| / |model| in values over the mismatches with finite values on both sides
    (relative error only where the model value is nonzero), with their positions.
    """

    output: str
    dst_type: TileDataType
    elements: int
    mismatches: int
    class_mismatches: int  #: NaN/Inf against another class (NaN payload differences not included)
    first: List[Mismatch] = field(default_factory=list)
    hist: List[Tuple[str, int]] = field(default_factory=list)
    nan_payload_mismatches: int = 0  #: both NaN, different encodings
    shape: Tuple[int, ...] = ()
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    distances: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    max_abs_error: Optional[float] = None
    max_abs_position: Optional[Tuple[int, ...]] = None
    max_rel_error: Optional[float] = None
    max_rel_position: Optional[Tuple[int, ...]] = None
    signed_zero_mismatches: int = 0  #: +0 against -0: equal values, a different encoding (no distance)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


def compare_arrays(output: str, dst: TileDataType, model_bits: np.ndarray, device_bits: np.ndarray,
                   max_report: int = 10) -> CompareReport:
    """Compare two arrays of encodings (same shape) of one output.

    Memory: one boolean array of the tile's shape plus work proportional to the number of
    mismatches (distances and values are computed only where the encodings differ).
    Raises :class:`UsageError` when the shapes differ.
    """
    from ..formats import to_float64

    mb = np.asarray(model_bits)
    db = np.asarray(device_bits)
    if mb.shape != db.shape:
        raise UsageError(f"{output}: device shape {db.shape} differs from the model's {mb.shape}")
    idx = np.flatnonzero(mb != db)
    mbm = mb.reshape(-1)[idx].astype(np.uint64)
    dbm = db.reshape(-1)[idx].astype(np.uint64)
    d, cls = distance(dst, mbm, dbm)
    payload = is_nan(dst, mbm) & is_nan(dst, dbm)
    cls = cls & ~payload
    carrier = _CARRIER[_WIDTH[dst]]
    mv = np.asarray(to_float64(dst, mbm.astype(carrier)), dtype=np.float64)
    dv = np.asarray(to_float64(dst, dbm.astype(carrier)), dtype=np.float64)
    zero = (mv == 0) & (dv == 0) if not dst.is_integer else np.zeros(idx.shape, bool)  # codes differ: ±0
    no_distance = cls | payload | zero
    positions = np.stack(np.unravel_index(idx, mb.shape), axis=1).astype(np.int64) if mb.ndim else \
        np.zeros((idx.size, 0), np.int64)
    rep = CompareReport(output, dst, int(mb.size), int(idx.size), int(np.count_nonzero(cls)), [],
                        histogram(d[~no_distance]), int(np.count_nonzero(payload)), tuple(mb.shape), positions,
                        np.where(no_distance, -1, d).astype(np.int64))
    rep.signed_zero_mismatches = int(np.count_nonzero(zero))
    finite = np.isfinite(mv) & np.isfinite(dv)
    if np.any(finite):
        err = np.where(finite, np.abs(dv - mv), -1.0)
        k = int(np.argmax(err))
        rep.max_abs_error, rep.max_abs_position = float(err[k]), tuple(int(x) for x in positions[k])
        relok = finite & (mv != 0)
        if np.any(relok):
            rel = np.where(relok, np.abs(dv - mv) / np.where(relok, np.abs(mv), 1.0), -1.0)
            k = int(np.argmax(rel))
            rep.max_rel_error, rep.max_rel_position = float(rel[k]), tuple(int(x) for x in positions[k])
    for k in range(min(max_report, idx.size)):
        t = tuple(int(x) for x in positions[k])
        rep.first.append(Mismatch(output, t, int(mbm[k]), int(dbm[k]), None if no_distance[k] else int(d[k]),
                                  bool(payload[k]), decoded_text(dst, int(mbm[k])), decoded_text(dst, int(dbm[k])),
                                  bool(zero[k])))
    return rep
