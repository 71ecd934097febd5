"""B.FPATR parameter words: quantization scales/offsets, shift codes, activation parameters.

Every parameter is a 64-bit carrier word (a B.IOR scalar or one U64 element
of a 1 x N parameter tile).  Only the bits the mode assigns may be nonzero.

Quantization word (modes with a scale)::

    [12:0]  must be zero
    [31:13] FP19 scale (positive normal)
    [36:32] must be zero
    offset  S5 at [41:37] (REQ4/VREQ4), S9 at [45:37] (REQ8, VREQ8,
            QF322B8_PRE, VQF322B8_PRE), S17 at [53:37] (DEQS16/VDEQS16);
            every bit above the offset (or above bit 31 without one) is zero

Shift word (VSHIFTS322S16/SHIFTS322S16)::

    [31:0] zero, [35:32] shift code c (arithmetic right shift by c + 1), [63:36] zero

Activation word (scalar LReLU/PReLU, vector PReLU)::

    [18:0] FP19 alpha (+0 or positive normal), [63:19] zero

FP19 is 1 sign bit [18], an 8-bit bias-127 exponent [17:10] and a 10-bit
fraction [9:0].

Source: ADR-0085 D177, D179, D180; pto-spec ``asl/block/attributes/B.FPATR.asl``
(``BundleFPATRQuantParameterWordLegal``, ``BundleFPATRReluParameterWordLegal``),
``asl/arch/profile/matrix-quantization.asl`` (``MatrixQuantParameter``,
``MatrixShiftParameter``, ``MatrixQuantOffset``), ``asl/arch/data-types/fp19.asl``.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Any, NamedTuple, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .. import fp19 as fp19mod
from .._util import as_bits, unmasked
from ..errors import TileLegalityError, UsageError, short_numbers
from ..tables import ASSIGNED_PRE_QUANT_CODES, MODE_TABLE, PreQuantMode
from .attributes import parse_pre_quant_mode

__all__ = [
    "ParamWord",
    "ParamWordLike",
    "QuantParamFields",
    "ReluParamFields",
    "quant_param_legal",
    "relu_param_legal",
    "quant_param_violation",
    "relu_param_violation",
    "check_quant_param",
    "check_relu_param",
    "quant_param_word",
    "shift_param_word",
    "relu_param_word",
    "parse_quant_param",
    "parse_relu_param",
    "quant_scale_bits",
    "quant_offset",
    "shift_amount",
    "quant_param",
    "relu_param",
]

#: A scalar parameter word (``quant_param``, ``relu_param``) as the tile operation and the element trace
#: read it: a Python ``int`` (a :class:`ParamWord` included), a numpy integer, or a 0-d integer array
#: holding one.  A type checker cannot tell a 0-d array from others: an array with elements is refused
#: when the call runs (:class:`~ptonum.errors.UsageError`).
ParamWordLike = Union[int, np.integer[Any], npt.NDArray[np.integer[Any]]]


# ---------------------------------------------------------------------------
# FP19 helpers (ptonum.fp19: FP19ValueClass, FP19FiniteValue, FP32ToFP19).

def _fp19_scale_legal(bits19: np.ndarray) -> np.ndarray:
    """``FP19ScaleLegal``: positive normal."""
    return fp19mod.scale_legal(bits19)


def _fp19_activation_legal(bits19: np.ndarray) -> np.ndarray:
    """``FP19ActivationParameterLegal``: +0 or positive normal."""
    return fp19mod.activation_legal(bits19)


def _fp19_class_text(bits19: int) -> str:
    """Words for the FP19ValueClass of one encoding (for messages)."""
    sign = "negative" if bits19 >> 18 else "positive"
    exp = (bits19 >> 10) & 0xFF
    frac = bits19 & 0x3FF
    if exp == 0xFF:
        if frac == 0:
            return f"{sign} infinity"
        return "a quiet NaN" if frac >> 9 else "a signaling NaN"
    if exp == 0:
        return f"{sign} zero" if frac == 0 else f"{sign} subnormal"
    return f"{sign} normal"


def _fp32_to_fp19(bits32: int) -> int:
    """``FP32ToFP19`` of one FP32 encoding (round to nearest even on 13 bits)."""
    return int(fp19mod.from_fp32(bits32))


def _fp19_value(bits19: int) -> float:
    """Exact value of one finite FP19 encoding (``FP19FiniteValue``) as a float."""
    return float(fp19mod.to_float64(bits19))


# ---------------------------------------------------------------------------
# Per-mode masks (index = six-bit PreQuantMode code)

_U64 = (1 << 64) - 1


def _zero_mask(code: int) -> int:
    """Bits of a quantization word that must be zero for a mode."""
    info = MODE_TABLE[code]
    if info.is_shift:
        return 0xFFFFFFFF | (_U64 ^ ((1 << 36) - 1))
    low = 0x1FFF | (0x1F << 32)
    top = {0: 32, 5: 42, 9: 46, 17: 54}[info.offset_width]
    return low | (_U64 ^ ((1 << top) - 1))


_KIND = np.zeros(64, dtype=np.uint8)  # 0 = no parameter / reserved, 1 = shift, 2 = scale
_MASK = np.zeros(64, dtype=np.uint64)
for _code in ASSIGNED_PRE_QUANT_CODES:
    _info = MODE_TABLE[_code]
    if not _info.has_parameter:
        continue
    _KIND[_code] = 1 if _info.is_shift else 2
    _MASK[_code] = np.uint64(_zero_mask(_code))
del _code, _info

_HIGH_RANGE = {0: "[63:32]", 5: "[63:42]", 9: "[63:46]", 17: "[63:54]"}
_OFFSET_FIELD = {5: "S5 offset [41:37]", 9: "S9 offset [45:37]", 17: "S17 offset [53:37]"}


def _mode_codes(pre_quant_mode: Any) -> np.ndarray:
    """Mode codes as an int array; reserved codes stay (they answer False)."""
    if isinstance(pre_quant_mode, (PreQuantMode, str)):
        return np.asarray(int(parse_pre_quant_mode(pre_quant_mode)), dtype=np.int64)
    arr = as_bits("pre_quant_mode", pre_quant_mode, 6)
    return arr.astype(np.int64)


# ---------------------------------------------------------------------------
# Legality predicates


def quant_param_legal(pre_quant_mode: Any, word: Any) -> np.ndarray:
    """``BundleFPATRQuantParameterWordLegal``, vectorized.

    Args:
        pre_quant_mode: a PreQuantMode (member/name/code) or an integer array
            of six-bit codes; broadcasts against ``word``.  Reserved codes and
            modes without a quantization parameter answer False (as the ASL).
        word: 64-bit quantization words (int or integer array).

    Returns a bool array of the broadcast shape (0-d for scalars).  For shift
    modes: bits [31:0] and [63:36] zero.  For scale modes: bits [12:0] and
    [36:32] zero, FP19 scale [31:13] positive normal, and every bit above the
    mode's offset field (or above bit 31) zero.

    Raises :class:`UsageError` for words wider than 64 bits or codes wider than 6.
    Source: ADR-0085 D180; ``BundleFPATRQuantParameterWordLegal``, ``FP19ScaleLegal``.
    """
    modes = _mode_codes(pre_quant_mode)
    w = as_bits("word", word, 64)
    try:
        modes, w = np.broadcast_arrays(modes, w)
    except ValueError:
        raise UsageError(f"pre_quant_mode shape {np.shape(modes)} and word shape {w.shape} do not broadcast") from None
    kind = _KIND[modes]
    mask = _MASK[modes]
    clear = (w & mask) == 0
    fp19 = ((w >> np.uint64(13)) & np.uint64(0x7FFFF)).astype(np.uint32)
    scale_ok = _fp19_scale_legal(fp19)
    return np.asarray(clear & ((kind == 1) | ((kind == 2) & scale_ok)))


def relu_param_legal(word: Any) -> np.ndarray:
    """``BundleFPATRReluParameterWordLegal``, vectorized.

    Bits [63:19] must be zero and the FP19 value in [18:0] must be +0 or
    positive normal.  Returns a bool array of ``word``'s shape.

    Raises :class:`UsageError` for words wider than 64 bits.
    Source: ADR-0085 D180; ``BundleFPATRReluParameterWordLegal``,
    ``FP19ActivationParameterLegal``.
    """
    w = as_bits("word", word, 64)
    low = (w & np.uint64(0x7FFFF)).astype(np.uint32)
    return np.asarray(((w >> np.uint64(19)) == 0) & _fp19_activation_legal(low))


def quant_param_violation(pre_quant_mode: Any, word: int) -> Optional[str]:
    """The first rule a single quantization word breaks for a mode, or None.

    The rules are checked in the ASL's order; the text names the bit range or
    the FP19 class and the ADR/ASL owner.  Raises :class:`UsageError` for an
    unreadable argument; a reserved mode is reported as a violation.

    Source: ADR-0085 D177/D180; ``BundleFPATRQuantParameterWordLegal``, ``FP19ScaleLegal``.
    """
    modes = _mode_codes(pre_quant_mode)
    if modes.ndim:
        raise UsageError("quant_param_violation takes one mode")
    code = int(modes)
    w = int(as_bits("word", word, 64))
    if code not in ASSIGNED_PRE_QUANT_CODES:
        return f"PreQuantMode {code} is reserved"
    info = MODE_TABLE[code]
    tag = f"{info.name} (mode {code})"
    owner = "(ADR-0085 D180, BundleFPATRQuantParameterWordLegal)"
    if not info.has_parameter:
        return f"{tag} takes no quantization parameter {owner}"
    if info.is_shift:
        if w & 0xFFFFFFFF:
            return f"bits [31:0] must be zero for shift mode {tag}; the shift code is [35:32] {owner}"
        if w >> 36:
            return f"bits [63:36] must be zero for shift mode {tag} {owner}"
        return None
    if w & 0x1FFF:
        return f"bits [12:0] must be zero {owner}"
    fp19 = (w >> 13) & 0x7FFFF
    if not bool(_fp19_scale_legal(np.asarray(fp19, dtype=np.uint32))):
        return (f"FP19 scale [31:13] = {fp19:#07x} is {_fp19_class_text(fp19)}; scales must be "
                "positive normal (ADR-0085 D180, FP19ScaleLegal)")
    if (w >> 32) & 0x1F:
        return f"bits [36:32] must be zero {owner}"
    top = {0: 32, 5: 42, 9: 46, 17: 54}[info.offset_width]
    if w >> top:
        where = (f" (the {_OFFSET_FIELD[info.offset_width]} is the only field above bit 31)"
                 if info.offset_width else f" ({tag} has no offset)")
        return f"bits {_HIGH_RANGE[info.offset_width]} must be zero{where} {owner}"
    return None


def relu_param_violation(word: int) -> Optional[str]:
    """The rule a single activation word breaks, or None (see :func:`relu_param_legal`).

    Source: ADR-0085 D176/D180; ``BundleFPATRReluParameterWordLegal``,
    ``FP19ActivationParameterLegal``.
    """
    w = int(as_bits("word", word, 64))
    if w >> 19:
        return "bits [63:19] must be zero (ADR-0085 D180, BundleFPATRReluParameterWordLegal)"
    fp19 = w & 0x7FFFF
    if not bool(_fp19_activation_legal(np.asarray(fp19, dtype=np.uint32))):
        return (f"FP19 activation parameter [18:0] = {fp19:#07x} is {_fp19_class_text(fp19)}; "
                "activation parameters must be +0 or positive normal "
                "(ADR-0085 D180, FP19ActivationParameterLegal)")
    return None


def _quant_words_all_legal(code: int, w: np.ndarray) -> bool:
    """True when every ``uint64`` word of ``w`` is legal for mode ``code``: the same answer as
    ``np.all(quant_param_legal(code, w))`` in a few whole-array operations (no value-class array).

    Scale modes: the mode's must-be-zero bits clear, and the FP19 sign and exponent ``[31:23]``
    in 1..254 (sign 0, exponent neither 0 nor 255: a positive normal, ``FP19ScaleLegal``);
    shift modes: the must-be-zero bits clear.  Source: ``BundleFPATRQuantParameterWordLegal``.
    """
    kind = int(_KIND[code])
    if kind == 0 or w.size == 0:
        return kind != 0
    w = w.reshape(-1)  # array arithmetic: the wraparound below is silent (no scalar overflow warning)
    if np.bitwise_and(w, _MASK[code]).any():
        return False
    if kind == 1:
        return True
    se = np.right_shift(w, np.uint64(23))
    se &= np.uint64(0x1FF)
    se -= np.uint64(1)  # 0 wraps to 2^64 - 1: out of range like 255..511
    return bool((se < np.uint64(254)).all())


def _relu_words_all_legal(w: np.ndarray) -> bool:
    """True when every ``uint64`` word of ``w`` is a legal activation word: the same answer as
    ``np.all(relu_param_legal(w))``: bits ``[63:19]`` clear and the FP19 value +0 or positive
    normal (sign and exponent ``[18:10]`` in 1..254, or the whole word 0).
    Source: ``BundleFPATRReluParameterWordLegal``, ``FP19ActivationParameterLegal``.
    """
    if w.size == 0:
        return True
    w = w.reshape(-1)
    if (w >> np.uint64(19)).any():
        return False
    se = np.right_shift(w, np.uint64(10))
    se -= np.uint64(1)
    return bool(((se < np.uint64(254)) | (w == 0)).all())


def _where(arr: np.ndarray, flat_index: int) -> str:
    if arr.ndim == 0:
        return ""
    idx = np.unravel_index(flat_index, arr.shape)
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def check_quant_param(pre_quant_mode: Any, word: Any, name: str = "quant_param") -> None:
    """Reject any quantization word that is illegal for the mode.

    ``word`` is one word or an array (e.g. the 1 x N vector tile).  Raises
    :class:`TileLegalityError` naming ``name``, the first failing element's
    index and hex value and the exact rule, e.g. ``quant_param[0, 17] =
    0x0000000000002000: FP19 scale [31:13] = 0x00001 is positive subnormal;
    scales must be positive normal (ADR-0085 D180, FP19ScaleLegal)``.  A mode
    without a quantization parameter is rejected the same way.  Raises
    :class:`UsageError` (via ``as_bits``) for values wider than 64 bits.

    Source: ADR-0085 D180; ``BundleFPATRQuantParameterWordLegal``;
    ``TileMatrixVectorQuantContentsLegal`` applies it to every tile element.
    """
    code = int(parse_pre_quant_mode(pre_quant_mode))
    w = word if type(word) is np.ndarray and word.dtype == np.uint64 else as_bits(name, word, 64)
    if _quant_words_all_legal(code, w):  # the common case: a few whole-array operations
        return
    legal = quant_param_legal(code, w)
    if bool(np.all(legal)):
        return
    flat = int(np.flatnonzero(~legal.ravel())[0]) if legal.ndim else 0
    value = int(w.ravel()[flat]) if w.ndim else int(w)
    why = quant_param_violation(code, value)
    raise TileLegalityError(f"{name}{_where(w, flat)} = {value:#018x}: {why}")


def check_relu_param(word: Any, name: str = "relu_param") -> None:
    """Reject any activation word that is illegal (see :func:`relu_param_legal`).

    Raises :class:`TileLegalityError` naming ``name``, the first failing
    element's index and hex value and the rule; :class:`UsageError` for
    values wider than 64 bits.
    Source: ADR-0085 D180; ``BundleFPATRReluParameterWordLegal``.
    """
    w = word if type(word) is np.ndarray and word.dtype == np.uint64 else as_bits(name, word, 64)
    if _relu_words_all_legal(w):
        return
    legal = relu_param_legal(w)
    if bool(np.all(legal)):
        return
    flat = int(np.flatnonzero(~legal.ravel())[0]) if legal.ndim else 0
    value = int(w.ravel()[flat]) if w.ndim else int(w)
    raise TileLegalityError(f"{name}{_where(w, flat)} = {value:#018x}: {relu_param_violation(value)}")


# ---------------------------------------------------------------------------
# Field extraction (vectorized; used by the element post-process)


def quant_scale_bits(word: Any) -> np.ndarray:
    """FP19 scale field [31:13] of quantization words, as uint32 (no legality check).

    Source: ADR-0085 D177; ``MatrixQuantParameter`` (the scale field).
    """
    w = as_bits("quant_param", word, 64)
    return ((w >> np.uint64(13)) & np.uint64(0x7FFFF)).astype(np.uint32)


def quant_offset(word: Any, width: int) -> np.ndarray:
    """``MatrixQuantOffset``: the signed offset at [41:37]/[45:37]/[53:37], int64.

    ``width`` is 0 (offset 0), 5, 9 or 17.  Source: ``MatrixQuantOffset``.
    """
    if width not in (0, 5, 9, 17):
        raise UsageError(f"width = {width!r}: offset widths are 0, 5, 9, 17")
    w = as_bits("quant_param", word, 64)
    if width == 0:
        return np.zeros(w.shape, dtype=np.int64)
    raw = ((w >> np.uint64(37)) & np.uint64((1 << width) - 1)).astype(np.int64)
    return np.where(raw >= (1 << (width - 1)), raw - (1 << width), raw)


def shift_amount(word: Any) -> np.ndarray:
    """Shift distance of a shift word: ``UInt(word[35:32]) + 1`` (1..16), int64.

    Source: ``MatrixPostQuantBaseWithFlags`` (shift modes), ADR-0085 D179.
    """
    w = as_bits("quant_param", word, 64)
    return ((w >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1


class QuantParamFields(NamedTuple):
    """A quantization word taken apart (see :func:`parse_quant_param`)."""

    mode: PreQuantMode
    scale_fp19: Optional[int]  #: FP19 bits of [31:13] (None for shift modes)
    scale: Optional[float]  #: exact FP19 value (None for shift modes or non-finite FP19)
    offset: int  #: signed offset (0 without an offset field)
    shift_code: Optional[int]  #: [35:32] for shift modes
    shift: Optional[int]  #: shift_code + 1
    legal: bool
    problem: Optional[str]


class ReluParamFields(NamedTuple):
    """An activation word taken apart (see :func:`parse_relu_param`)."""

    alpha_fp19: int
    alpha: Optional[float]
    legal: bool
    problem: Optional[str]


def parse_quant_param(word: int, *, mode: Any) -> QuantParamFields:
    """Take one quantization word apart for ``mode`` (no exception for illegal words).

    Raises :class:`UsageError` (unreadable word) or
    :class:`~ptonum.errors.IllegalEncodingError` (reserved mode).
    Source: ``MatrixQuantOffset``, ``MatrixPostQuantBaseWithFlags``.
    """
    m = parse_pre_quant_mode(mode, "mode")
    info = MODE_TABLE[int(m)]
    w = int(as_bits("word", word, 64))
    problem = quant_param_violation(m, w)
    if info.is_shift:
        code = (w >> 32) & 0xF
        return QuantParamFields(m, None, None, 0, code, code + 1, problem is None, problem)
    fp19 = (w >> 13) & 0x7FFFF
    scale = None if ((fp19 >> 10) & 0xFF) == 0xFF else _fp19_value(fp19)
    offset = int(quant_offset(w, info.offset_width))
    return QuantParamFields(m, fp19, scale, offset, None, None, problem is None, problem)


def parse_relu_param(word: int) -> ReluParamFields:
    """Take one activation word apart (no exception for illegal words).

    Source: ADR-0085 D176/D180; ``BundleFPATRReluParameterWordLegal``, ``FP19FiniteValue``.
    """
    w = int(as_bits("word", word, 64))
    fp19 = w & 0x7FFFF
    alpha = None if ((fp19 >> 10) & 0xFF) == 0xFF else _fp19_value(fp19)
    problem = relu_param_violation(w)
    return ReluParamFields(fp19, alpha, problem is None, problem)


# ---------------------------------------------------------------------------
# Builders from raw fields


def _scale_mode(mode: Any) -> PreQuantMode:
    """``mode`` as a PreQuantMode that takes an FP19 scale (not a shift mode, not parameterless)."""
    m = parse_pre_quant_mode(mode, "mode")
    info = MODE_TABLE[int(m)]
    if not info.has_parameter:
        raise UsageError(f"mode = {m.name}: this mode takes no quantization parameter")
    if info.is_shift:
        raise UsageError(f"mode = {m.name}: a shift mode takes a shift code; use shift_param_word")
    return m


def _offset_range(width: int) -> Tuple[int, int]:
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def quant_param_word(scale_fp19: Any, offset: Any = 0, *, mode: Any) -> Any:
    """Assemble quantization words from FP19 scale bits and a signed offset.

    Places ``scale_fp19`` (19-bit encodings) at [31:13] and ``offset`` as a
    two's-complement S5/S9/S17 at [41:37]/[45:37]/[53:37] per the mode.
    The scale bits are not checked for legality (use :func:`quant_param` for
    a checked float scale, or :func:`check_quant_param`), so illegal words
    can be built on purpose.

    Returns an ``int`` for scalar inputs, else a ``uint64`` array of the
    broadcast shape.  Raises :class:`UsageError` when the mode takes no scale
    (modes without a parameter; shift modes: use :func:`shift_param_word`),
    a scale does not fit in 19 bits, or an offset is out of the mode's range
    (a nonzero offset for a mode without one).

    Source: ``MatrixQuantParameter``; ADR-0085 D177/D180.
    """
    m = _scale_mode(mode)
    scalar = np.ndim(scale_fp19) == 0 and np.ndim(offset) == 0
    s = as_bits("scale_fp19", scale_fp19, 19)
    offset = unmasked("offset", offset)
    try:
        off = np.asarray(offset)
    except Exception:  # pragma: no cover
        raise UsageError(f"offset = {offset!r}: expected integers") from None
    if off.dtype.kind == "O" and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                                     for v in off.ravel().tolist()):
        pass  # Python ints beyond 64 bits: out of every offset range, refused below with their value
    elif off.dtype.kind not in "iu":
        raise UsageError(f"offset = {offset!r}: expected signed integers")
    width = MODE_TABLE[int(m)].offset_width
    lo, hi = _offset_range(width) if width else (0, 0)
    # the range check comes before any cast: a uint64 2**64 - 1 cast to int64 first would pass as -1
    if off.dtype.kind == "O":
        bad = np.array([not lo <= int(v) <= hi for v in off.ravel().tolist()], dtype=bool).reshape(off.shape)
    else:
        bad = (off < lo) | (off > hi)
    if np.any(bad):
        flat = int(np.flatnonzero(bad.ravel())[0])
        v = int(off.ravel()[flat])
        rng = f"S{width} range {lo}..{hi}" if width else "no offset field (offset must be 0)"
        raise UsageError(f"offset{_where(off, flat)} = {v}: {m.name} has {rng}")
    off = off.astype(np.int64)
    s, off = np.broadcast_arrays(s, off)
    word = s << np.uint64(13)
    if width:
        field = (off & ((1 << width) - 1)).astype(np.uint64)
        word = word | (field << np.uint64(37))
    if scalar:
        return int(word)
    return word.astype(np.uint64)


def shift_param_word(code: Optional[int] = None, *, shift: Optional[int] = None) -> int:
    """A shift-mode parameter word: code 0..15 at [35:32] (shift distance code + 1).

    Give either ``code`` (0..15) or ``shift`` (1..16).  Raises
    :class:`UsageError` otherwise.  Source: ``MatrixShiftParameter``; ADR-0085 D179.
    """
    if (code is None) == (shift is None):
        raise UsageError("give exactly one of code (0..15) or shift (1..16)")
    if shift is not None:
        if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)) or not 1 <= int(shift) <= 16:
            raise UsageError(f"shift = {shift!r}: the arithmetic right shift is 1..16 bits")
        code = int(shift) - 1
    assert code is not None
    if isinstance(code, bool) or not isinstance(code, (int, np.integer)) or not 0 <= int(code) <= 15:
        raise UsageError(f"code = {code!r}: the shift code is four bits (0..15)")
    return int(code) << 32


def relu_param_word(fp19: Any) -> Any:
    """Activation words from FP19 encodings (placed at [18:0]; no legality check).

    Returns an ``int`` for a scalar, else a ``uint64`` array.  Raises
    :class:`UsageError` when a value does not fit in 19 bits.
    Source: ``BundleFPATRReluParameterWordLegal`` (carrier layout).
    """
    b = as_bits("fp19", fp19, 19)
    return int(b) if b.ndim == 0 else b.astype(np.uint64)


# ---------------------------------------------------------------------------
# Friendly float constructors


class ParamWord(int):
    """A parameter word (an ``int``) that remembers how it was made.

    Attributes: ``fp19`` (the FP19 bits), ``value`` (the exact FP19 value
    encoded), ``requested`` (the float asked for), ``rounding`` (``"exact"``
    or ``"rne"``), ``exact`` (``value == requested``), ``offset`` (signed
    offset, 0 if none), ``how`` (one sentence on the conversion).
    """

    fp19: int
    value: float
    requested: float
    rounding: str
    exact: bool
    offset: int
    how: str

    def __new__(cls, word: int, *, fp19: int, value: float, requested: float,
                rounding: str, offset: int, how: str) -> "ParamWord":
        obj = super().__new__(cls, word)
        obj.fp19 = fp19
        obj.value = value
        obj.requested = requested
        obj.rounding = rounding
        exact_in = getattr(requested, "exact_value", None)  # a decimal given as text: compare exactly
        obj.exact = (math.isfinite(value) and Fraction(value) == exact_in) if exact_in is not None \
            else value == requested  # (a printed form of the value is accepted, but is not exact)
        obj.offset = offset
        obj.how = how
        return obj

    def __repr__(self) -> str:  # a requested decimal of 5000 digits is shown shortened (short_numbers)
        return short_numbers(f"ParamWord({int(self):#018x}, fp19={self.fp19:#07x}, value={self.value!r}, "
                             f"requested={self.requested!r}, exact={self.exact}, offset={self.offset})")


_ROUNDINGS = ("exact", "rne")


class _DecimalText(float):
    """A decimal given as text: the float nearest to it, shown (``repr``) as the text itself, and the
    exact value in ``.exact_value``."""

    text: str
    exact_value: Fraction

    def __new__(cls, text: str, exact: Fraction) -> "_DecimalText":
        try:
            nearest = float(exact)
        except OverflowError:  # beyond binary64: the nearest float is the signed infinity
            nearest = math.inf if exact > 0 else -math.inf
        obj = super().__new__(cls, nearest)
        obj.text = text
        obj.exact_value = exact
        return obj

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _float_to_fp19(x: Any, name: str, rounding: str) -> Tuple[int, float, float, str]:
    """Convert a real number to FP19 bits; returns (fp19, fp19 value, requested, how).

    ``x`` is an int, a float, or a decimal written as text (``"0.1"``, ``"2e-3"``): text is rounded
    once, from its exact decimal value, to FP32 (nearest even), never through a binary64 float.
    """
    if rounding not in _ROUNDINGS:
        raise UsageError(f"rounding = {rounding!r}: expected 'exact' or 'rne'")
    exact_in: Optional[Fraction] = None
    if isinstance(x, decimal.Decimal):  # a decimal number: read exactly, as its text would be
        x = str(x)
    if isinstance(x, str):
        from ..numtext import BINARY_FORMATS, parse_real, round_to_format

        parsed = parse_real(x, name)
        if isinstance(parsed, float) and math.isnan(parsed):
            raise UsageError(f"{name} = nan: a parameter must be a finite number")
        if isinstance(parsed, float) and math.isinf(parsed):
            requested: float = parsed
        else:
            exact_in = Fraction(parsed)
            requested = _DecimalText(x.strip(), exact_in) if not (isinstance(parsed, float)) else parsed
        bits32, fp32_exact = round_to_format(parsed, BINARY_FORMATS["FP32"])
        via_note = "" if fp32_exact else " (rounded once from the decimal to FP32, nearest even)"
    else:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
            raise UsageError(f"{name} = {x!r}: expected a real number (int, float or decimal text)")
        try:
            requested = float(x)
        except OverflowError:  # an int beyond binary64 (10**400): as far out as an infinity for FP32/FP19
            requested = math.inf if x > 0 else -math.inf
        if math.isnan(requested):
            raise UsageError(f"{name} = nan: a parameter must be a finite number")
        with np.errstate(over="ignore"):
            f32 = np.float32(requested)
        bits32 = int(np.asarray(f32).view(np.uint32))
        via_note = "" if float(f32) == requested else " (IEEE round-to-nearest-even from float64)"
    fp19 = _fp32_to_fp19(bits32)
    exp = (fp19 >> 10) & 0xFF
    value = math.copysign(math.inf, requested) if exp == 0xFF else _fp19_value(fp19)
    if exact_in is not None:  # the decimal is the FP19 value, or the way Python prints it
        from ..numtext import names_value

        same = exp != 0xFF and names_value(exact_in, value)
    else:
        same = value == requested
    if rounding == "exact":
        if not same:
            raise UsageError(
                f"{name} = {requested!r} is not exactly representable in FP19 (1 sign, 8 exponent, "
                f"10 fraction bits); the nearest FP19 (FP32ToFP19, round to nearest even) is "
                f"{value!r} (FP19 {fp19:#07x}); pass rounding='rne' to accept it"
            )
        if exact_in is not None and Fraction(value) != exact_in:  # a printed form of the value, accepted
            how = (f"{requested!r} names FP19 {fp19:#07x} = {value!r} (the shortest decimal that reads back "
                   "as that value; the decimal itself is not exactly it)")
        else:
            how = f"{requested!r} is exactly FP19 {fp19:#07x}"
    else:
        how = (f"{requested!r} -> FP32 {bits32:#010x}" + via_note
               + f" -> FP19 {fp19:#07x} = {value!r} (FP32ToFP19: round to nearest even on the"
               " 13 discarded fraction bits)")
    return fp19, value, requested, how


def quant_param(scale: Union[float, str, decimal.Decimal], offset: int = 0, *, mode: Any, rounding: str = "exact") -> ParamWord:
    """A legal quantization word from a real scale and an integer offset.

    The scale becomes FP19 (1 sign, 8-bit bias-127 exponent, 10-bit fraction)
    at [31:13]; the offset becomes the mode's S5/S9/S17 field.

    ``scale`` may be an int, a float, a :class:`decimal.Decimal` or a decimal written as text
    (``"0.1"``); a decimal is rounded once, from its exact value, to FP32 (never through a binary64
    float), and an int beyond binary64 (``10**400``) is as far out as an infinity.

    Rounding of the scale:
      * ``rounding="exact"`` (default): the scale must be exactly an FP19
        value (e.g. 0.5, 3.0, 1.25, 2**-20); anything else is refused.
      * ``rounding="rne"``: the scale is converted to FP32 (exact when it
        already is an FP32 value, such as a numpy float32; a float64 that is
        not is first rounded to FP32 by IEEE round-to-nearest-even) and then
        ``FP32ToFP19`` keeps FP32 bits [31:13] rounding the 13 discarded bits
        to nearest, ties to even (halfway 0x1000), with carry into the
        exponent.  Note: some producers truncate FP32 bits [31:13] instead;
        this helper does not.

    The returned :class:`ParamWord` is the 64-bit word as an ``int`` with
    ``.fp19``, ``.value`` (the scale actually encoded), ``.exact`` and
    ``.how`` (a sentence describing the conversion).

    Raises :class:`UsageError` when the mode takes no scale (modes without a
    parameter; shift modes use :func:`shift_param_word`), the scale is not a
    finite real, the (rounded) scale is not positive normal FP19 (zero,
    negative, below 2**-126, or rounding up to infinity at or above
    2**128 * (1 - 2**-12)), the scale is inexact with ``rounding="exact"``,
    or the offset is not an integer in the mode's S5 (-16..15), S9
    (-256..255) or S17 (-65536..65535) range (modes without an offset need 0).

    Source: ADR-0085 D177/D180; ``FP32ToFP19``, ``MatrixQuantParameter``,
    ``FP19ScaleLegal``.
    """
    m = _scale_mode(mode)
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, np.integer)):
        raise UsageError(f"offset = {offset!r}: expected an integer")
    fp19, value, requested, how = _float_to_fp19(scale, "scale", rounding)
    if not bool(_fp19_scale_legal(np.asarray(fp19, dtype=np.uint32))):
        raise UsageError(
            f"scale = {requested!r}: encodes as FP19 {fp19:#07x}, {_fp19_class_text(fp19)}; "
            "scales must be positive normal FP19 (2**-126 <= scale < 2**128) "
            "(ADR-0085 D180, FP19ScaleLegal)"
        )
    word = quant_param_word(fp19, int(offset), mode=m)
    return ParamWord(word, fp19=fp19, value=value, requested=requested, rounding=rounding,
                     offset=int(offset), how=how)


def relu_param(alpha: Union[float, str, decimal.Decimal], *, rounding: str = "exact") -> ParamWord:
    """A legal LReLU/PReLU activation word from a real alpha.

    ``alpha`` must be +0 or a positive normal FP19 value (it *replaces* the
    quantization scale on the negative path; ADR-0085 D176).  Conversion is
    as in :func:`quant_param`: ``"exact"`` refuses a value that is not FP19;
    ``"rne"`` converts to FP32 (IEEE RNE from float64 when needed) and then
    ``FP32ToFP19`` rounds to nearest even.  The word holds the FP19 bits at
    [18:0].

    Raises :class:`UsageError` for a negative alpha (including -0.0), a
    non-finite value, a value that encodes as FP19 subnormal (nonzero below
    2**-126) or overflows, or an inexact alpha with ``rounding="exact"``.

    Source: ADR-0085 D176/D180; ``FP32ToFP19``, ``FP19ActivationParameterLegal``.
    """
    fp19, value, requested, how = _float_to_fp19(alpha, "alpha", rounding)
    if not bool(_fp19_activation_legal(np.asarray(fp19, dtype=np.uint32))):
        extra = " (-0.0 has the sign bit set)" if fp19 == 0x40000 else ""
        raise UsageError(
            f"alpha = {requested!r}: encodes as FP19 {fp19:#07x}, {_fp19_class_text(fp19)}{extra}; "
            "activation parameters must be +0 or positive normal FP19 "
            "(ADR-0085 D180, FP19ActivationParameterLegal)"
        )
    return ParamWord(fp19, fp19=fp19, value=value, requested=requested, rounding=rounding,
                     offset=0, how=how)
