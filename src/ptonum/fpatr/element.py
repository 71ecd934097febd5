"""The per-element B.FPATR post-process: PreQuant, activation and destination conversion.

One accumulator element (FP32, S32 or U32 bits), its quantization word and
its activation word go in; the destination element and the five-bit numeric
flags come out.  The steps, in the ASL's order:

1. effective control: B.DATR RMode NONE -> RNE; modes 25/28 force RHB, the
   other fixed-rounding modes force RNE; Sat passes through;
2. PreQuantMode 0 without activation: the raw accumulator bits, no flags;
3. shift modes 12/13: arithmetic right shift by ``code + 1`` and S16
   saturation (OF|NX on saturation);
4. source type (mode 0: the accumulator type; S32 modes: S32; else FP32)
   and negativity (S32 sign; FP32 negative classes including -0, never NaN;
   U32 never);
5. scale: the FP19 value of [31:13] for modes with a parameter, else 1;
6. multiplier: the scale unless the source is negative and ReluMode != 0
   (ReLU: 0; LReLU/PReLU: the FP19 alpha, replacing the scale);
7. FP32 NaN/Inf give fixed results, except -Inf with a zero multiplier,
   which is taken as the value 0;
8. the exact product source x multiplier;
9. -0 source, nonzero multiplier, zero offset and a floating destination:
   the destination's -0 (HiF8: 0x00);
10. modes with an offset: round and saturate the product to S5/S9/S17,
    add the offset, then the final integer encoding (Sat clamps, else wraps);
    other modes: encode the product in the destination type.

Two engines give identical bits and flags: ``reference`` (exact Python ``int``
arithmetic -- a real as a ``(num, den)`` pair -- one element at a time, following
the ASL step by step on a configuration resolved once per call; it also drives
:func:`postprocess_element_trace`) and ``fast`` (numpy on float64:
FP32 x FP19 and S32 x FP19 products are exact in binary64, so one multiply
followed by the exact encoders reproduces the single rounding; calls of
``PTONUM_KERNEL_MIN_ELEMENTS`` elements or more run the same computation as compiled numba kernels).

Source: ADR-0085 D174-D180; pto-spec ``asl/arch/profile/matrix-postprocess.asl``
(``TileProfileMatrixPostProcessWithFlags``, ``MatrixPostQuantBaseWithFlags``,
``MatrixFPATREffectiveControl``, ``MatrixSelectedMultiplier``,
``MatrixPostQuantSpecialValue``, ``MatrixFloatingSignedZero``/``Infinity``/
``LargestFinite``, ``MatrixValueClassNegative``) and
``asl/arch/profile/matrix-quantization.asl`` (``MatrixQuantizedAffine``,
``MatrixRoundAndSaturateSigned``, ``MatrixShiftS32ToS16``,
``ReferenceMatrixIntegerEncoding``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from .. import engines
from .._util import as_bits, check_bool, check_engine, remembered
from ..encode import encode_ratio, round_and_saturate_signed_ratio
from ..errors import TileLegalityError, UsageError
from ..flags import flag_names
from ..formats import TileDataType, parse_data_type
from ..fp19 import finite_value as fp19_finite_value
from ..fp19 import to_float64 as fp19_to_float64
from ..rounding import RoundingMode, parse_rounding_mode
from ..tables import (
    DESTINATIONS,
    KERNEL_ACC,
    KERNEL_DST,
    KIND_GENERAL,
    KIND_PASS,
    KIND_SHIFT,
    MODE_TABLE,
    NX,
    OF,
    ModeInfo,
    PreQuantMode,
    TileKernelConfig,
)
from .attributes import (
    ReluMode,
    check_accumulator_type,
    resolved_control,
    parse_pre_quant_mode,
    parse_relu_mode,
)
from .params import ParamWordLike

__all__ = [
    "postprocess_element",
    "postprocess_element_trace",
    "TraceStep",
    "destination_dtype",
    "special_value_result",
    "ElementConfig",
    "element_config",
    "resolve_element_config",
    "compute_elements",
]

T = TileDataType

# ---------------------------------------------------------------------------
# Destination facts (MatrixFloatingSignedZero / Infinity / LargestFinite, the
# canonical NaNs, TileIntegerMinimum/Maximum): read from ptonum.tables, at the
# destination element's own width.

_DTYPE: Dict[TileDataType, Any] = {t: d.carrier.type for t, d in DESTINATIONS.items()}
_NEG_ZERO: Dict[TileDataType, int] = {t: d.negative_zero_result for t, d in DESTINATIONS.items()
                                      if d.negative_zero_result is not None}
_INT_MIN_MAX = {t: (d.minimum_code, d.maximum_code) for t, d in DESTINATIONS.items() if d.integer}
_WIDTH_MASK = {t: d.mask for t, d in DESTINATIONS.items()}
_S16_RANGE = (DESTINATIONS[T.S16].minimum, DESTINATIONS[T.S16].maximum)
# the FP32 source: (+Inf, -Inf) (+Inf is also the exponent-field mask), -0, the quiet bit of a NaN
_FP32_INF: Tuple[int, int] = DESTINATIONS[T.FP32].infinity or (0, 0)
_FP32_NEG_ZERO = DESTINATIONS[T.FP32].sign
_FP32_QUIET = (DESTINATIONS[T.FP32].canonical_nan or 0) & ~_FP32_INF[0]

# FP32 value classes used here
_QNAN, _SNAN, _PINF, _NINF = "QuietNaN", "SignalingNaN", "PositiveInfinity", "NegativeInfinity"

# Enum members used per element by the reference engine, as module constants (an Enum
# class-attribute lookup costs more than most reference steps on Python 3.11).
_T_FP32, _T_S32, _T_U32, _T_HiF8 = T.FP32, T.S32, T.U32, T.HiF8
_RELU_NONE, _RELU_RELU = ReluMode.NONE, ReluMode.RELU


def destination_dtype(dst_type: Any) -> Any:
    """numpy dtype of destination bits: uint8 (S8, S4X2 nibble, E4M3, HiF8),
    uint16 (FP16, BF16, S16) or uint32 (FP32, S32, U32).

    Source: ADR-0085 D179/D181; ``BundleFPATROutputType`` and ``TileElementBits`` (the carrier
    that holds one destination element).
    """
    dt = parse_data_type(dst_type, "dst_type")
    if dt not in _DTYPE:
        raise UsageError(f"dst_type = {dt.name}: not a B.FPATR destination type; destinations are "
                         f"{', '.join(t.name for t in _DTYPE)} (ADR-0085 D179, BundleFPATROutputType)")
    return _DTYPE[dt]


def special_value_result(value_class: str, dst: TileDataType, sat: bool) -> Tuple[int, int]:
    """Fixed ``(bits, flags)`` of an FP32 NaN/Inf source for destination ``dst``: the rule is
    written once, in :meth:`ptonum.tables.Destination.special_value_result`.

    Source: ADR-0085 D180; ``MatrixPostQuantSpecialValue``.
    """
    return DESTINATIONS[dst].special_value_result(value_class, sat)


# ---------------------------------------------------------------------------
# Decoders from ptonum.formats (FP32 class, exact value) and ptonum.fp19.


# Exact reals travel as ``(num, den)`` pairs of Python ints, value ``num / den`` with
# ``den > 0`` (a power of two: FP32 and FP19 values are dyadic), as in ptonum.encode.
Ratio = Tuple[int, int]
_RATIO_ZERO: Ratio = (0, 1)
_RATIO_ONE: Ratio = (1, 1)
#: FP32 value-class labels by (sign, class of the exponent/fraction fields).
_FP32_FINITE_CLASS = (("PositiveZero", "PositiveSubnormal", "PositiveNormal"),
                      ("NegativeZero", "NegativeSubnormal", "NegativeNormal"))
_NEGATIVE_CLASSES = frozenset(("NegativeNormal", "NegativeSubnormal", "NegativeInfinity", "NegativeZero"))


def _fp32_class(bits: int) -> str:
    """``ClassifyFP32`` of one FP32 encoding (``TileNumericValueClass``), as its CamelCase
    label: exponent field all ones is an infinity (fraction 0) or a NaN (quiet when the
    fraction's top bit is set); exponent field 0 is a zero or a subnormal; else normal."""
    negative = bits >> 31
    exponent = (bits >> 23) & 0xFF
    fraction = bits & 0x7FFFFF
    if exponent == 0xFF:
        if fraction == 0:
            return _NINF if negative else _PINF
        return _QNAN if fraction >> 22 else _SNAN
    kind = 2 if exponent else (1 if fraction else 0)
    return _FP32_FINITE_CLASS[negative][kind]


def _value_class_negative(cls: str) -> bool:
    """``MatrixValueClassNegative``: a negative normal, subnormal, infinity or zero (never a NaN)."""
    return cls in _NEGATIVE_CLASSES


def _fp32_finite_value(bits: int) -> Ratio:
    """``ReferenceFP32FiniteValue`` of one finite FP32 encoding (``FP32FiniteDecomposition``:
    significand ``fraction`` with exponent -149 for subnormals, ``2^23 + fraction`` with
    exponent ``field - 150`` for normals), as an exact ``(num, den)`` pair."""
    exponent = (bits >> 23) & 0xFF
    fraction = bits & 0x7FFFFF
    if exponent == 0:
        significand, power = fraction, -149
    else:
        significand, power = fraction | 0x800000, exponent - 150
    if bits >> 31:
        significand = -significand
    return (significand << power, 1) if power >= 0 else (significand, 1 << -power)


@functools.lru_cache(maxsize=1 << 16)
def _fp19_value(bits19: int) -> Ratio:
    """``FP19FiniteValue`` of one FP19 word as a ``(num, den)`` pair, decoded once per distinct
    word (a tile's scale and alpha words repeat along every row; the decoder validates its
    argument as an array)."""
    v = fp19_finite_value(bits19)
    return v.numerator, v.denominator


def _reject_nonfinite_fp19(words: np.ndarray, shift: int, name: str, field: str) -> None:
    """Raise TileLegalityError when an FP19 field (at bit ``shift`` of the uint64 ``words``) has the
    all-ones exponent field (infinite or NaN), naming the first such word."""
    if words.size == 1 and (int(words.reshape(-1)[0]) >> (shift + 10)) & 0xFF != 0xFF:
        return  # one finite word (the usual scalar parameter), read as an int
    bits19 = ((words >> np.uint64(shift)) & np.uint64(0x7FFFF)).astype(np.uint32)
    bad = ((bits19 >> np.uint32(10)) & np.uint32(0xFF)) == 0xFF
    if np.any(bad):
        flat = int(np.flatnonzero(bad.ravel())[0])
        where = ""
        if bits19.ndim:
            where = "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, bits19.shape)) + "]"
        v = int(bits19.ravel()[flat])
        raise TileLegalityError(
            f"{name}{where}: FP19 {field} = {v:#07x} is infinite or NaN; the post-process takes "
            "its finite value (FP19FiniteValue) and B.FPATR rejects such words before effects "
            "(ADR-0085 D180)"
        )


# ---------------------------------------------------------------------------
# Arguments


@dataclass(frozen=True)
class ElementConfig:
    """A resolved, checked element configuration (typed; the functions below take it as is).

    ``mode``/``info``: the PreQuantMode and its mode-table row; ``relu``: the
    ReluMode; ``acc_type``: FP32/S32/U32; ``dst``: the destination type;
    ``source``: the element source type (mode 0: the accumulator type; S32
    modes: S32; else FP32); ``rmode``/``sat``: the effective control (never NONE).

    Source: ADR-0085 D176-D180; ``MatrixFPATREffectiveControl``, ``BundleFPATROutputType``.
    """

    mode: PreQuantMode
    info: ModeInfo
    relu: ReluMode
    acc_type: TileDataType
    dst: TileDataType
    source: TileDataType
    rmode: RoundingMode
    sat: bool

    @functools.cached_property
    def kernel(self) -> TileKernelConfig:
        """The same configuration as plain data for the compiled kernel (:class:`ptonum.tables.TileKernelConfig`).

        Made once per configuration (:func:`resolve_element_config` hands out one shared instance
        per configuration, and the value is kept on it)."""
        if int(self.mode) == 0 and self.relu == ReluMode.NONE:
            kind = KIND_PASS
        elif self.info.is_shift:
            kind = KIND_SHIFT
        else:
            kind = KIND_GENERAL
        special: Tuple[int, ...] = (0,) * 8
        if kind == KIND_GENERAL and self.source is T.FP32:
            special = tuple(x for cls in _SPECIAL_CLASSES
                            for x in DESTINATIONS[self.dst].special_value_result(cls, self.sat))
        nz = DESTINATIONS[self.dst].negative_zero_result
        return TileKernelConfig(
            kind=kind, dst=self.dst, dst_code=KERNEL_DST[self.dst], src_code=KERNEL_ACC[self.source],
            relu=int(self.relu), rmode=int(self.rmode), sat=bool(self.sat),
            offset_width=int(self.info.offset_width), has_parameter=bool(self.info.has_parameter),
            special=special, negative_zero=-1 if nz is None else nz,
        )


def element_config(pre_quant_mode: Any, relu_mode: Any, acc_type: Any, rmode: Any, sat: Any) -> ElementConfig:
    """Parse and check an element configuration once (the typed value every inner function takes).

    Raises :class:`IllegalEncodingError` (reserved PreQuantMode/ReluMode),
    :class:`TileLegalityError` (accumulator class) or :class:`UsageError`.
    Source: ADR-0085 D176-D180; ``MatrixFPATREffectiveControl``, ``BundleFPATRAccumulatorTypeLegal``.
    """
    mode = parse_pre_quant_mode(pre_quant_mode)
    relu = parse_relu_mode(relu_mode)
    acc = parse_data_type(acc_type, "acc_type")
    if acc not in (T.FP32, T.S32, T.U32):
        raise UsageError(f"acc_type = {acc.name}: matrix accumulators are FP32, S32 or U32")
    check_accumulator_type(mode, acc)
    s = check_bool("sat", sat)
    return resolve_element_config(mode, relu, acc, parse_rounding_mode(rmode, "rmode"), s)


@functools.lru_cache(maxsize=256, typed=True)
def resolve_element_config(mode: PreQuantMode, relu: ReluMode, acc: TileDataType, rmode: RoundingMode,
                           sat: bool) -> ElementConfig:
    """:func:`element_config` on typed, already-checked values (B.DATR ``rmode`` may be NONE); no parsing.

    One shared (immutable) instance per configuration, so what is derived from it
    (:attr:`ElementConfig.kernel`) is made once, not on every tile call.

    Source: ADR-0085 D176-D180; ``MatrixFPATREffectiveControl``, ``BundleFPATROutputType``.
    """
    info = MODE_TABLE[int(mode)]
    r, s = resolved_control(info, rmode, sat)
    dst: TileDataType
    source: TileDataType
    if int(mode) == 0:
        dst = acc
        source = acc
    else:
        assert info.destination is not None
        dst = info.destination
        source = T.S32 if info.uses_s32_accumulator else T.FP32
    return ElementConfig(mode, info, relu, acc, dst, source, r, s)


_Config = ElementConfig
# A one-element call (explain, element-wise golden loops) cost more in parsing its five
# configuration arguments than in the element itself: the checked configuration is remembered per
# spelling of the arguments (``typed``: ``1`` and ``True`` are separate entries; a rejected
# configuration is never stored, so it raises every time; unhashable arguments are parsed every time).
_config = remembered(element_config, 256)


_SPECIAL_CLASSES = ("QuietNaN", "SignalingNaN", "PositiveInfinity", "NegativeInfinity")


def _bits_u32(name: str, value: Any) -> np.ndarray:
    """32-bit encodings as uint32 without copying an already-uint32 array."""
    if type(value) is np.ndarray and value.dtype == np.uint32:
        return value
    if type(value) is int and 0 <= value and not value >> 32:  # one encoding (the common small call)
        return np.array(value, dtype=np.uint32)
    return as_bits(name, value, 32).astype(np.uint32)


def _prepare(acc_bits: Any, pre_quant_mode: Any, relu_mode: Any, acc_type: Any, quant_param: Any,
             relu_param: Any, rmode: Any, sat: Any
             ) -> Tuple[_Config, np.ndarray, np.ndarray, np.ndarray, Tuple[int, ...]]:
    """Validate every argument (before any work) and resolve the configuration."""
    cfg = _config(pre_quant_mode, relu_mode, acc_type, rmode, sat)
    acc = _bits_u32("acc_bits", acc_bits)
    qp = as_bits("quant_param", quant_param, 64)
    rp = as_bits("relu_param", relu_param, 64)
    if not qp.ndim and not rp.ndim:  # one word each (the usual case): the accumulators' shape
        shape = acc.shape
    else:
        try:
            shape = np.broadcast_shapes(acc.shape, qp.shape, rp.shape)
        except ValueError:
            raise UsageError(
                f"acc_bits {acc.shape}, quant_param {qp.shape} and relu_param {rp.shape} do not broadcast"
            ) from None
    passthrough = int(cfg.mode) == 0 and cfg.relu == ReluMode.NONE
    if cfg.info.has_parameter and not cfg.info.is_shift:
        _reject_nonfinite_fp19(qp, 13, "quant_param", "scale [31:13]")
    if cfg.relu in (ReluMode.LRELU, ReluMode.PRELU) and not cfg.info.is_shift and not passthrough:
        _reject_nonfinite_fp19(rp, 0, "relu_param", "alpha [18:0]")
    return cfg, acc, qp, rp, shape


# ---------------------------------------------------------------------------
# Public entry points


def postprocess_element(
    acc_bits: Any,
    *,
    pre_quant_mode: Any,
    relu_mode: Any = 0,
    acc_type: Any,
    quant_param: Any = 1,
    relu_param: Any = 0,
    rmode: Any = "NONE",
    sat: Any = False,
    engine: str = "fast",
) -> Tuple[np.ndarray, np.ndarray]:
    """Post-process accumulator elements exactly as the B.FPATR matrix unit.

    Args:
        acc_bits: 32-bit accumulator encodings (int or integer array, any shape).
        pre_quant_mode: PreQuantMode member, code or name.
        relu_mode: ReluMode member, code (0-3) or name.
        acc_type: ``FP32``, ``S32`` or ``U32`` (name or code); it must be the
            mode's accumulator class.
        quant_param: 64-bit quantization words, broadcast against
            ``acc_bits`` (e.g. shape ``(1, N)`` for a per-column tile).  Modes
            without a parameter ignore it (the tile model passes 1).
        relu_param: 64-bit activation words (FP19 in [18:0]), broadcast;
            used by ReluMode 2/3.
        rmode: B.DATR RMode (name or code 0-7); NONE means RNE.  Any RMode is
            accepted for any mode here, as the ASL element function does
            (legality belongs to :func:`~ptonum.fpatr.attributes.check_datr`);
            fixed-rounding modes override it.
        sat: B.DATR Sat (clamp) versus wrap/infinity.
        engine: ``"fast"`` (numpy, vectorized; compiled numba kernels from
            ``PTONUM_KERNEL_MIN_ELEMENTS`` elements on, same bits and flags) or ``"reference"`` (exact,
            per element).

    Returns:
        ``(dst_bits, flags)`` with the broadcast shape of the three inputs:
        ``dst_bits`` at the destination's width -- uint8 for S8, S4X2 (the low
        nibble), E4M3 and HiF8; uint16 for FP16, BF16, S16; uint32 for FP32,
        S32, U32 -- and ``flags`` uint8 (NV=0x01 OF=0x04 UF=0x08 NX=0x10).

    The parameter words are not checked for legality (see
    :func:`~ptonum.fpatr.params.check_quant_param`); an illegal but finite
    FP19 scale or alpha is used as the ASL would use it.

    Raises:
        UsageError: unreadable arguments, a value wider than its field, a
            non-accumulator ``acc_type``, an unknown engine.
        IllegalEncodingError: a reserved PreQuantMode or ReluMode code.
        TileLegalityError: ``acc_type`` is not the mode's accumulator class,
            or a used FP19 scale/alpha is infinite or NaN (the ASL's
            ``FP19FiniteValue`` has no value for it; such words are rejected
            by B.FPATR preflight).

    Source: ADR-0085 D176-D180; ``TileProfileMatrixPostProcessWithFlags``
    (``asl/arch/profile/matrix-postprocess.asl``).
    """
    eng = check_engine(engine)
    cfg, acc, qp, rp, shape = _prepare(acc_bits, pre_quant_mode, relu_mode, acc_type,
                                       quant_param, relu_param, rmode, sat)
    return _compute(acc, qp, rp, shape, cfg, engines.select(eng, math.prod(shape)))


def compute_elements(acc_bits: np.ndarray, quant_words: np.ndarray, relu_words: np.ndarray,
                     cfg: ElementConfig, path: engines.Path) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`postprocess_element` on already-checked typed values (no parsing, no checks).

    ``acc_bits``: ``uint32`` encodings; ``quant_words``/``relu_words``: ``uint64``
    words broadcast against them; ``cfg`` from :func:`element_config`;
    ``path`` from :func:`ptonum.engines.select`.  Returns ``(dst_bits, flags)``
    of the broadcast shape, as :func:`postprocess_element`.

    Source: ADR-0085 D176-D180; ``TileProfileMatrixPostProcessWithFlags``.
    """
    shape = np.broadcast_shapes(acc_bits.shape, quant_words.shape, relu_words.shape)
    return _compute(acc_bits, quant_words, relu_words, shape, cfg, path)


def _compute(acc: np.ndarray, qp: np.ndarray, rp: np.ndarray, shape: Tuple[int, ...], cfg: ElementConfig,
             path: engines.Path) -> Tuple[np.ndarray, np.ndarray]:
    if path == "numba":
        return _fast_kernel(acc, qp, rp, shape, cfg)
    if path == "numpy":
        return _fast(acc, qp, rp, shape, cfg)
    return _reference(acc, qp, rp, shape, cfg)


# ---------------------------------------------------------------------------
# Fast engine, compiled (ptonum.kernels.postprocess); _fast below is the numpy fallback

#: Row length the compiled kernel uses for flattened element arrays.
_KERNEL_ROW = 4096


def _fast_kernel(acc: np.ndarray, qp: np.ndarray, rp: np.ndarray, shape: Tuple[int, ...],
                 cfg: _Config) -> Tuple[np.ndarray, np.ndarray]:
    """The fused numba kernel on the broadcast, flattened inputs (same bits and flags as _fast)."""
    a = np.ascontiguousarray(np.broadcast_to(acc, shape), dtype=np.uint32).reshape(-1)
    total = a.size
    per_element = False
    if qp.size != 1 or rp.size != 1:
        per_element = True
        qp = np.broadcast_to(qp, shape).reshape(-1) if qp.size != 1 else qp.reshape(-1)
        rp = np.broadcast_to(rp, shape).reshape(-1) if rp.size != 1 else rp.reshape(-1)
    bits = np.empty(total, dtype=_DTYPE[cfg.dst])
    flags = np.empty(total, dtype=np.uint8)
    if total:
        row = min(_KERNEL_ROW, total)
        engines.run_tile(a, m=-(-total // row), n=row, cfg=cfg.kernel, qp=qp, rp=rp, out=bits, flags_out=flags,
                         per_element=per_element)
    return bits.reshape(shape), flags.reshape(shape)


# ---------------------------------------------------------------------------
# Fast engine


def _fast(acc: np.ndarray, qp: np.ndarray, rp: np.ndarray, shape: Tuple[int, ...],
          cfg: _Config) -> Tuple[np.ndarray, np.ndarray]:
    from ..encode import encode_array, round_and_saturate_signed_array

    if shape == ():  # work on one-element arrays; give 0-d results back
        b0, f0 = _fast(acc.reshape(1), qp.reshape(1), rp.reshape(1), (1,), cfg)
        return b0.reshape(()), f0.reshape(())
    info = cfg.info
    dst = cfg.dst
    out_dtype = _DTYPE[dst]

    # Step 2: no PreQuant and no activation: raw bits.
    if int(cfg.mode) == 0 and cfg.relu == ReluMode.NONE:
        return (np.array(np.broadcast_to(acc, shape), dtype=np.uint32),
                np.zeros(shape, dtype=np.uint8))

    # Step 3: shift modes.
    if info.is_shift:
        sh = ((qp >> np.uint64(32)) & np.uint64(0xF)).astype(np.int32) + 1
        if sh.ndim == 0:
            shifted = acc.view(np.int32) >> np.int32(int(sh))
        else:
            shifted = acc.view(np.int32) >> sh
        shifted = np.broadcast_to(shifted, shape)
        lo, hi = _S16_RANGE
        over = (shifted > hi) | (shifted < lo)
        res = np.clip(shifted, lo, hi).astype(np.int16).view(np.uint16)
        flags = np.where(over, np.uint8(OF | NX), np.uint8(0))
        return np.ascontiguousarray(res), flags.astype(np.uint8)

    # Step 4: source value and negativity.
    fp32 = cfg.source is T.FP32
    special_any = False
    if fp32:
        fsrc = acc.view(np.float32)
        finite = np.isfinite(fsrc)
        special_any = not bool(finite.all())
        neg = (acc >= np.uint32(_FP32_NEG_ZERO)) & (acc <= np.uint32(_FP32_INF[1]))
        with np.errstate(invalid="ignore"):
            value = fsrc.astype(np.float64)
        if special_any:
            value = np.where(finite, value, 0.0)
    elif cfg.source is T.S32:
        value = acc.view(np.int32).astype(np.float64)
        neg = acc >= np.uint32(0x80000000)
    else:  # U32, mode 0 only
        value = acc.astype(np.float64)
        neg = np.zeros(acc.shape, dtype=bool)

    # Steps 5-6: scale and selected multiplier (decoded once per parameter word).
    if info.has_parameter:
        scale: Any = fp19_to_float64(((qp >> np.uint64(13)) & np.uint64(0x7FFFF)).astype(np.uint32))
    else:
        scale = np.float64(1.0)
    if cfg.relu == ReluMode.NONE:
        mult: Any = scale
    elif cfg.relu == ReluMode.RELU:
        mult = np.where(neg, 0.0, scale)
    else:
        alpha = fp19_to_float64((rp & np.uint64(0x7FFFF)).astype(np.uint32))
        mult = np.where(neg, alpha, scale)

    # Step 8: the exact product (+0.0 turns an exact zero into +0 as the reals do).
    if np.shape(value) == shape and value is not acc:
        product = np.multiply(value, mult, out=value)  # value is a fresh float64 array
    else:
        product = np.broadcast_to(value * mult, shape)

    offset_width = info.offset_width
    if offset_width:
        offset = (((qp >> np.uint64(37)) & np.uint64((1 << offset_width) - 1)).astype(np.int64))
        offset = np.where(offset >= (1 << (offset_width - 1)), offset - (1 << offset_width), offset)
        inter, f1 = round_and_saturate_signed_array(np.ascontiguousarray(product), offset_width, cfg.rmode)
        final = np.asarray(inter).astype(np.int32) + offset.astype(np.int32)
        bits, f2 = _encode_exact_integer(final.reshape(shape), dst, cfg.sat)
        flags = np.asarray(f1).reshape(shape) | f2
    else:
        bits, flags = encode_array(product + 0.0, dst, cfg.rmode, cfg.sat)
    bits = np.asarray(bits).astype(out_dtype, copy=False).reshape(shape)
    flags = np.asarray(flags).astype(np.uint8, copy=False).reshape(shape)

    if fp32:
        # Step 9: -0 source with a nonzero multiplier to a floating destination.
        if dst.is_floating:
            negzero = acc == np.uint32(_FP32_NEG_ZERO)
            if negzero.any():
                m = np.broadcast_to(mult, shape) if np.ndim(mult) else np.full(shape, float(mult))
                hit = np.broadcast_to(negzero, shape) & (m != 0.0)
                if offset_width:
                    hit = hit & (np.broadcast_to(offset, shape) == 0)
                bits[hit] = _NEG_ZERO[dst]
                flags[hit] = 0
        # Step 7: NaN / Inf (except -Inf with a zero multiplier, which was taken as 0).
        if special_any:
            a = np.broadcast_to(acc, shape)
            m = np.broadcast_to(mult, shape) if np.ndim(mult) else np.full(shape, float(mult))
            exp_all = (a & np.uint32(_FP32_INF[0])) == np.uint32(_FP32_INF[0])
            mant = a & np.uint32(0x7FFFFF)
            ninf = a == np.uint32(_FP32_INF[1])
            classes = (
                (_QNAN, exp_all & (mant >= np.uint32(_FP32_QUIET))),
                (_SNAN, exp_all & (mant != 0) & (mant < np.uint32(_FP32_QUIET))),
                (_PINF, a == np.uint32(_FP32_INF[0])),
                (_NINF, ninf & (m != 0.0)),
            )
            for cls, mask in classes:
                if mask.any():
                    b, f = special_value_result(cls, dst, cfg.sat)
                    bits[mask] = b
                    flags[mask] = f
    return bits, flags


def _encode_exact_integer(values: np.ndarray, dst: TileDataType, sat: bool
                          ) -> Tuple[np.ndarray, np.ndarray]:
    """``ReferenceMatrixIntegerEncoding`` of values that are already integers.

    After the S5/S9/S17 intermediate plus offset the value is an integer, so
    rounding is the identity and no NX arises except with overflow: OF|NX when
    outside the destination range, then Sat clamps and otherwise the low N
    bits are kept (two's-complement wrap).  int32 arithmetic; bits at the
    destination width.
    """
    width = {T.S4X2: 4, T.S8: 8, T.S16: 16}[dst]
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    over = (values < lo) | (values > hi)
    flags = over.astype(np.uint8) * np.uint8(OF | NX)
    if sat:
        values = np.clip(values, lo, hi)
    bits = (values & ((1 << width) - 1)).astype(_DTYPE[dst])
    return bits, flags


# ---------------------------------------------------------------------------
# Reference engine (and trace)


@dataclass(frozen=True)
class TraceStep:
    """One step of :func:`postprocess_element_trace`.

    ``name`` is a short step name, ``asl`` the ASL function the step mirrors,
    ``text`` a human explanation with the exact numbers, ``flags`` the flags
    raised at this step (5-bit value).
    """

    name: str
    asl: str
    text: str
    flags: int = 0

    def __str__(self) -> str:
        f = f"  [flags {flag_names(self.flags)}]" if self.flags else ""
        return f"{self.name} ({self.asl}): {self.text}{f}"


def _frac_text(v: Ratio) -> str:
    num, den = v
    if num % den == 0:
        return str(num // den)
    g = math.gcd(num, den)  # in lowest terms (den > 0), as Fraction would give
    n, d = num // g, den // g
    k = d.bit_length() - 1
    den_text = f"2^{k}" if d == 1 << k else str(d)
    return f"{n}/{den_text} (= {n / d!r})"  # int / int is correctly rounded, as float(Fraction)


def _hexw(bits: int, dst: TileDataType) -> str:
    digits = {0xF: 1, 0xFF: 2, 0xFFFF: 4, 0xFFFFFFFF: 8}[_WIDTH_MASK[dst]]
    return f"0x{bits:0{digits}x}"


class _Plan(NamedTuple):
    """What every element of one call shares, resolved once from the :class:`ElementConfig`
    (plain values: the per-element steps do no parsing and no descriptor lookups)."""

    cfg: ElementConfig
    pass_through: bool  # PreQuantMode 0 without activation
    is_shift: bool  # BundleFPATRModeIsShift
    source: TileDataType  # FP32, S32 or U32
    has_parameter: bool  # BundleFPATRModeUses{Scalar,Vector}Parameter
    relu: ReluMode
    offset_width: int  # BundleFPATRModeOffsetWidth: 0, 5, 9 or 17
    dst: TileDataType
    floating: bool  # TileDataTypeIsFloating(dst)
    mask: int  # all bits of one destination element
    rmode: RoundingMode  # the effective control
    sat: bool
    special: Dict[str, Tuple[int, int]]  # MatrixPostQuantSpecialValue per NaN/Inf class
    negative_zero: int  # MatrixFloatingSignedZero(dst, TRUE); -1 for integers
    control_text: str  # the trace's first step (MatrixFPATREffectiveControl), the same for every element


@functools.lru_cache(maxsize=256)
def _plan(cfg: ElementConfig) -> _Plan:
    """The plan of ``cfg``, made once per configuration (a call of one element costs a few
    microseconds; resolving the plan cost as much)."""
    dst = cfg.dst
    info = cfg.info
    nz = _NEG_ZERO.get(dst)
    control_text = (f"PreQuantMode {int(cfg.mode)} ({cfg.mode.name}), ReluMode {cfg.relu.name}, "
                    f"{cfg.acc_type.name} accumulator -> {dst.name}; rounding {cfg.rmode.name}"
                    + (" (fixed by the mode)" if info.fixed_rounding is not None else "")
                    + f", Sat={int(cfg.sat)}")
    return _Plan(cfg, int(cfg.mode) == 0 and cfg.relu == _RELU_NONE, info.is_shift, cfg.source,
                 info.has_parameter, cfg.relu, info.offset_width, dst, dst.is_floating, _WIDTH_MASK[dst],
                 cfg.rmode, cfg.sat, {c: special_value_result(c, dst, cfg.sat) for c in _SPECIAL_CLASSES},
                 -1 if nz is None else nz, control_text)


def _shift_s32_to_s16(acc: int, code: int) -> Tuple[int, int, int]:
    """``MatrixShiftS32ToS16``: the S32 ``acc`` shifted right (arithmetic) by ``code + 1``,
    saturated to S16 with OF|NX.  Returns ``(shifted value, S16 bits, flags)``."""
    value = acc - (1 << 32) if acc >> 31 else acc
    shifted = value >> (code + 1)
    if shifted > 32767:
        return shifted, 0x7FFF, OF | NX
    if shifted < -32768:
        return shifted, 0x8000, OF | NX
    return shifted, shifted & 0xFFFF, 0


def _selected_multiplier(negative: bool, relu: ReluMode, scale: Ratio, rp: int) -> Ratio:
    """``MatrixSelectedMultiplier``: the scale, unless the source is negative and an
    activation is on -- then 0 (ReLU) or the FP19 alpha in ``relu_param[18:0]``
    (LReLU/PReLU), which replaces the scale."""
    if not negative or relu is _RELU_NONE:
        return scale
    if relu is _RELU_RELU:
        return _RATIO_ZERO
    return _fp19_value(rp & 0x7FFFF)


def _quant_offset(qp: int, width: int) -> int:
    """``MatrixQuantOffset``: the signed ``width``-bit offset at ``quant_param[37 + width - 1 : 37]``
    (0 when the mode has none)."""
    if not width:
        return 0
    raw = (qp >> 37) & ((1 << width) - 1)
    return raw - (1 << width) if raw >> (width - 1) else raw


def _one(acc: int, qp: int, rp: int, p: _Plan,
         trace: Optional[List[TraceStep]] = None) -> Tuple[int, int]:
    """One element, step by step (``MatrixPostQuantBaseWithFlags``; the effective control
    ``MatrixFPATREffectiveControl`` was resolved once, in ``p``)."""
    # The explanation texts are built only when tracing: the numbers they show are
    # formatted (Fractions as text) at a cost far above the element's own arithmetic.
    tracing = trace is not None

    def note(name: str, asl: str, text: str, flags: int = 0) -> None:
        assert trace is not None
        trace.append(TraceStep(name, asl, text, flags))

    dst = p.dst
    if tracing:
        note("control", "MatrixFPATREffectiveControl", p.control_text)

    if p.pass_through:
        if tracing:
            note("pass-through", "MatrixPostQuantBaseWithFlags",
                 f"no PreQuant and no activation: the raw accumulator bits 0x{acc:08x} are the result")
        return acc, 0

    if p.is_shift:
        code = (qp >> 32) & 0xF
        shifted, res, f = _shift_s32_to_s16(acc, code)
        if tracing:
            sv = acc - (1 << 32) if acc >> 31 else acc
            if f:
                note("shift", "MatrixShiftS32ToS16",
                     f"S32 {sv} >> {code + 1} (code {code}) = {shifted}, outside S16: saturates to "
                     f"{_hexw(res, dst)}", f)
            else:
                note("shift", "MatrixShiftS32ToS16",
                     f"S32 {sv} >> {code + 1} (code {code}, arithmetic) = {shifted} -> S16 {_hexw(res, dst)}")
        return res, f

    # Source type, class and negativity.
    src = p.source
    if src is _T_FP32:
        cls = _fp32_class(acc)
        negative = _value_class_negative(cls)
        if tracing:
            note("source", "MatrixValueClassNegative",
                 f"FP32 0x{acc:08x} is {cls}; negative = {negative}"
                 + (" (NaN is never negative)" if "NaN" in cls else ""))
    elif src is _T_S32:
        cls = "PositiveNormal"
        negative = acc >> 31 == 1  # SInt(value) < 0
        if tracing:
            note("source", "MatrixPostQuantBaseWithFlags",
                 f"S32 0x{acc:08x} = {acc - (1 << 32) if negative else acc}; negative = {negative}")
    else:
        cls = "PositiveNormal"
        negative = False
        if tracing:
            note("source", "MatrixPostQuantBaseWithFlags", f"U32 0x{acc:08x} = {acc}; never negative")

    # Scale (FP19 in quant_param[31:13]) and the selected multiplier.
    scale = _fp19_value((qp >> 13) & 0x7FFFF) if p.has_parameter else _RATIO_ONE
    relu = p.relu
    mult = _selected_multiplier(negative, relu, scale, rp)
    if tracing:
        scale_text = (f"FP19 {(qp >> 13) & 0x7FFFF:#07x} = {_frac_text(scale)}" if p.has_parameter
                      else "1 (the mode has no scale)")
        if not negative or relu is _RELU_NONE:
            why = f"scale {scale_text}"
        elif relu is _RELU_RELU:
            why = "0 (ReLU on a negative source)"
        else:
            why = (f"alpha FP19 {rp & 0x7FFFF:#07x} = {_frac_text(mult)} "
                   f"({relu.name} on a negative source; replaces the scale {scale_text})")
        note("multiplier", "MatrixSelectedMultiplier", f"multiplier = {why}")

    # MatrixPostQuantSpecialValue: FP32 NaN/Inf give fixed results, except -Inf with a zero multiplier.
    if src is _T_FP32 and cls in p.special:
        if cls == _NINF and mult[0] == 0:
            if tracing:
                note("special", "MatrixPostQuantBaseWithFlags",
                     "-Inf with a zero multiplier is taken as the source value 0")
        else:
            b, f = p.special[cls]
            if tracing:
                note("special", "MatrixPostQuantSpecialValue",
                     f"{cls} -> fixed {dst.name} result {_hexw(b, dst)} (Sat={int(p.sat)})", f)
            return b, f

    # The source value and MatrixActivationWithFlags: the exact product.
    if src is _T_S32:
        source: Ratio = (acc - (1 << 32) if negative else acc, 1)
    elif src is _T_U32:
        source = (acc, 1)
    elif cls == _NINF:
        source = _RATIO_ZERO
    else:
        source = _fp32_finite_value(acc)
    num = source[0] * mult[0]
    den = source[1] * mult[1]
    if tracing:
        note("product", "MatrixActivationWithFlags",
             f"{_frac_text(source)} x {_frac_text(mult)} = {_frac_text((num, den))} (exact)")

    width = p.offset_width
    offset = _quant_offset(qp, width)
    if cls == "NegativeZero" and mult[0] != 0 and offset == 0 and p.floating:
        b = p.negative_zero
        if tracing:
            note("signed zero", "MatrixFloatingSignedZero",
                 f"-0 source with a nonzero multiplier: {dst.name} -0 encoding {_hexw(b, dst)}"
                 + (" (HiF8 has no -0)" if dst is _T_HiF8 else ""))
        return b, 0

    rmode, sat, mask = p.rmode, p.sat, p.mask
    if width:
        # MatrixQuantizedAffine: round and saturate to S5/S9/S17, add the offset, encode.
        inter, f1 = round_and_saturate_signed_ratio(num, den, width, rmode)
        if tracing:
            lo_c = num // den
            hi_c = lo_c if num % den == 0 else lo_c + 1
            rng = (-(1 << (width - 1)), (1 << (width - 1)) - 1)
            sat_text = (f"; outside S{width} {rng[0]}..{rng[1]}, saturated to {inter}" if f1 & OF
                        else "")
            note("intermediate", "MatrixRoundAndSaturateSigned",
                 f"round {_frac_text((num, den))} with {rmode.name}: candidates {lo_c} / {hi_c}"
                 f"{sat_text}; S{width} intermediate = {inter}", f1)
        final = inter + offset
        if tracing:
            note("offset", "MatrixQuantizedAffine", f"{inter} + offset {offset} = {final}")
        bits, f2 = encode_ratio(final, 1, dst, rmode, sat)
        bits &= mask
        if tracing:
            note("encode", "ReferenceMatrixIntegerEncoding",
                 f"{final} -> {dst.name} {_hexw(bits, dst)}"
                 + (f" (out of range; {'clamped' if sat else 'wrapped modulo 2^N'})" if f2 & OF else ""),
                 f2)
        return bits, f1 | f2

    # MatrixEncodeReal of the product plus the offset (0 here: the offset modes took the branch above).
    bits, f2 = encode_ratio(num, den, dst, rmode, sat)
    bits &= mask
    if tracing:
        if dst in _INT_MIN_MAX:
            lo_c = num // den
            hi_c = lo_c if num % den == 0 else lo_c + 1
            cand = f"candidates {lo_c} / {hi_c}"
        else:
            down, _ = encode_ratio(num, den, dst, RoundingMode.RTM, True)
            up, _ = encode_ratio(num, den, dst, RoundingMode.RTP, True)
            cand = f"candidates {_hexw(down & mask, dst)} (down) / {_hexw(up & mask, dst)} (up)"
        note("encode", "MatrixEncodeReal",
             f"{_frac_text((num, den))} -> {dst.name} with {rmode.name}, Sat={int(sat)}: "
             f"{cand}; result {_hexw(bits, dst)}", f2)
    return bits, f2


def _reference(acc: np.ndarray, qp: np.ndarray, rp: np.ndarray, shape: Tuple[int, ...],
               cfg: _Config) -> Tuple[np.ndarray, np.ndarray]:
    plan = _plan(cfg)
    dtype = _DTYPE[cfg.dst]
    if not shape:  # one element, three 0-d arrays: no lists
        b, f = _one(int(acc), int(qp), int(rp), plan)
        return np.array(b, dtype=dtype), np.array(f, dtype=np.uint8)
    n = math.prod(shape)
    a = (acc if acc.shape == shape else np.broadcast_to(acc, shape)).ravel().tolist()
    # a parameter word shared by every element is passed as one int, not expanded
    q = repeat(int(qp.reshape(-1)[0]), n) if qp.size == 1 else np.broadcast_to(qp, shape).ravel().tolist()
    r = repeat(int(rp.reshape(-1)[0]), n) if rp.size == 1 else np.broadcast_to(rp, shape).ravel().tolist()
    results = list(map(_one, a, q, r, repeat(plan, n)))
    if not results:
        return np.empty(shape, dtype=dtype), np.empty(shape, dtype=np.uint8)
    bits, flags = zip(*results)
    return np.array(bits, dtype=dtype).reshape(shape), np.array(flags, dtype=np.uint8).reshape(shape)


def postprocess_element_trace(
    acc_bits: int,
    *,
    pre_quant_mode: Any,
    relu_mode: Any = 0,
    acc_type: Any,
    quant_param: ParamWordLike = 1,
    relu_param: ParamWordLike = 0,
    rmode: Any = "NONE",
    sat: Any = False,
) -> Tuple[int, int, List[TraceStep]]:
    """Post-process one element with the reference engine and explain every step.

    Arguments as :func:`postprocess_element` but scalars only.  Returns
    ``(dst_bits, flags, steps)``: the destination bits (int, at the
    destination width), the flags (int) and a list of :class:`TraceStep`
    records -- effective control, source class and negativity, selected
    multiplier, exact product, intermediate rounding (both candidates and any
    saturation), offset, final encoding with its candidates -- each with the
    flags it raised.

    Raises as :func:`postprocess_element`; :class:`UsageError` for array
    arguments.  Source: ``TileProfileMatrixPostProcessWithFlags``.
    """
    if any(type(x) is not int and np.ndim(x) for x in (acc_bits, quant_param, relu_param)):
        raise UsageError("postprocess_element_trace explains one element: pass scalars")
    cfg, a, q, r, _ = _prepare(acc_bits, pre_quant_mode, relu_mode, acc_type,
                               quant_param, relu_param, rmode, sat)
    steps: List[TraceStep] = []
    bits, flags = _one(int(a), int(q), int(r), _plan(cfg), steps)
    steps.append(TraceStep("result", "TileProfileMatrixPostProcessWithFlags",
                           f"{cfg.dst.name} {_hexw(bits, cfg.dst)}, flags {flag_names(flags)}", 0))
    return bits, flags, steps
