"""Compiled (numba) kernels of the fast engine: the fused B.FPATR element pipeline,
the destination encoders and the RowMax/GroupMax folds.

Every kernel mirrors a numpy implementation that stays in its owning module as
the fallback (:func:`ptonum.kernels.numba_enabled` chooses):

* :func:`_encode_value` mirrors ``ptonum.encode`` (``_binary_fast``,
  ``_hif8_fast``, ``_integer_fast``) one element at a time, on the binary64 bit
  pattern of the exact value, with the same integer rounding decisions;
* :func:`_element` mirrors ``ptonum.fpatr.element._fast`` (source decode,
  negativity, multiplier selection, special values, exact float64 product,
  the -0 rule, S5/S9/S17 intermediate + offset + final integer encoding);
* :func:`_fold_group` uses the order-free formulation documented in
  ``ptonum.fpatr.reduction`` (NaNs skipped, key maximum, canonical NaN when
  every element is NaN and a step ran, NV for an sNaN in a stepped group);
  :func:`_step` mirrors one ``TileProfileMatrixReductionStepWithFlags``.

The tile kernel runs one pass per accumulator row (``prange`` over rows, the
reductions on the row while it is cache-resident) and writes straight into
caller-allocated outputs, so no tile-sized temporary exists.  Configuration
(mode class, destination, rounding, Sat, ReLU) is passed as integers, so
only one specialization per destination carrier width (uint8/uint16/uint32)
is compiled.

The four throughput-critical conversions (FP32 -> BF16/FP16/E4M3/HiF8 with a
per-column or scalar scale and no offset) have branch-light row loops over a block's rows
(:func:`_fp16x_rows`, :func:`_fp8_rows`: vector lanes, RowMax/GroupMax keys folded from the source as it
is read, each row's RowMaxOut/GroupMaxOut finished right after its pass) with the same rules as
:func:`_element`.  The S32 offset modes
(REQ8/VREQ8, REQ4/VREQ4, DEQS16/VDEQS16) without per-element flags run
:func:`_row_s32_int`: one select-only pass per row for every RMode, flags as row-wide ORs, RowMax
folded into the same pass; RNE with ReluMode NONE/RELU runs in 16 x 32-bit lanes over row blocks
(:func:`_s32_rows_seg`, GroupMax of GroupN 8/16/32 sixteen groups at a time by :func:`_s32_gmax16`).

Nothing here has a spec counterpart; the kernels are checked against the ASL
vectors and against the reference engine (tests/test_kernels_postprocess.py).
Source of the rules mirrored: ADR-0085 D175-D181; ``MatrixPostQuantBaseWithFlags``,
``MatrixEncodeReal``, ``MatrixRoundAndSaturateSigned``,
``ReferenceMatrixIntegerEncoding``, ``TileProfileMatrixReductionStepWithFlags``.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import tables
from ..tables import KIND_GENERAL, KIND_PASS, KIND_SHIFT
from . import MAX_THREADS, NUMBA_AVAILABLE, host_l1d_bytes, kernel_array, launch, launch_ready, njit, numba_enabled, \
    prange, target_has_feature

__all__ = [
    "numba_enabled",
    "DST_CODE",
    "encode_values",
    "run_tile",
    "hif8_key_table",
    "reduction_step_values",
    "compile_all",
]

# ---------------------------------------------------------------------------
# Integer codes (kernel arguments), from ptonum.tables

T_ = tables.TileDataType
D_S4X2, D_S8, D_S16, D_S32, D_U32, D_FP32, D_FP16, D_BF16, D_E4M3, D_HIF8 = (
    tables.KERNEL_DST[t] for t in (T_.S4X2, T_.S8, T_.S16, T_.S32, T_.U32, T_.FP32, T_.FP16, T_.BF16, T_.E4M3,
                                   T_.HiF8))
SRC_FP32, SRC_S32, SRC_U32 = (tables.KERNEL_ACC[t] for t in (T_.FP32, T_.S32, T_.U32))
#: the resolved rounding modes as their B.DATR codes (ptonum.rounding.RoundingMode, via tables)
R_RNE, R_RTZ, R_RTM, R_RTP, R_RNA, R_RTO, R_RHB = (
    int(tables.RoundingMode[m]) for m in ("RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB"))

#: TileDataType name -> kernel destination code.
DST_CODE: Dict[str, int] = {t.name: code for t, code in tables.KERNEL_DST.items()}

_NX = tables.NX
_UF_NX = tables.UF | tables.NX
_OF_NX = tables.OF | tables.NX
_NV = tables.NV
_OF = tables.OF
_ALL_FLAGS = tables.NV | tables.DZ | tables.OF | tables.UF | tables.NX

# ---------------------------------------------------------------------------
# Destination facts (ptonum.tables.DESTINATIONS), module-level ints that numba freezes into
# the kernels as constants (the kernel cache stamp includes tables.kernel_facts_stamp()).


def _f64_bits_of(value: Any) -> int:
    """The binary64 bit pattern of an exactly representable value, as an int."""
    return int(np.array(float(value), np.float64).view(np.int64))


def _f32_bits_of(value: Any) -> int:
    """The binary32 bit pattern of an exactly representable value, as an int."""
    return int(np.array(float(value), np.float32).view(np.uint32))


def _facts(t: Any) -> Tuple[int, int, int, int, int]:
    """(precision, emin, width, +largest code, +overflow code without Sat: +infinity, E4M3: NaN)."""
    d = tables.DESTINATIONS[t]
    return d.precision, d.emin, d.width, d.largest[0], d.overflow_code(False, False)


BIN_FP32, BIN_FP16, BIN_BF16, BIN_E4M3 = (_facts(t) for t in (T_.FP32, T_.FP16, T_.BF16, T_.E4M3))
_FP32 = tables.DESTINATIONS[T_.FP32]
FP32_INF = _FP32.overflow_code(False, False)  #: also the mask of FP32's exponent field
FP32_NEG_ZERO = _FP32.sign  #: -0, also the sign bit
FP32_QNAN = int(_FP32.canonical_nan or 0)
FP32_QUIET = FP32_QNAN & ~FP32_INF  #: the quiet bit of an FP32 NaN
FP32_MANT = (1 << (_FP32.precision - 1)) - 1
_FP16 = tables.DESTINATIONS[T_.FP16]
_BF16 = tables.DESTINATIONS[T_.BF16]
FP16_NEG_ZERO = int(_FP16.negative_zero or 0)
BF16_NEG_ZERO = int(_BF16.negative_zero or 0)
#: FP32 -> FP16 without a multiplier: the FP32 bits of FP16's smallest normal 2^-14
F16_TINY = (_FP16.emin - _FP32.emin + 1) << (_FP32.precision - 1)
#: FP32 -> BF16: the smallest FP32 magnitude that rounds (RNE) to BF16's infinity
BF16_BIG = (BIN_BF16[4] << (_FP32.width - _BF16.width)) - (1 << (_FP32.width - _BF16.width - 1))
_E4M3 = tables.DESTINATIONS[T_.E4M3]
E4M3_P, E4M3_EMIN_B = _E4M3.precision, _E4M3.emin + 1023  # binary64-biased emin
E4M3_SIGN = _E4M3.sign
E4M3_MASK = _E4M3.mask
E4M3_OVF_BITS = _f64_bits_of(_E4M3.largest_value)  #: |v| above the largest finite (448) overflows
#: overflow codes without Sat (E4M3: the NaN) and with Sat (the largest finite), + and -
E4M3_OVF_POS, E4M3_OVF_NEG, E4M3_SAT_POS, E4M3_SAT_NEG = (
    _E4M3.overflow_code(s, n) for s in (False, True) for n in (False, True))
_HIF8 = tables.DESTINATIONS[T_.HiF8]
HIF8_EMIN_B = _HIF8.emin + 1023
HIF8_SIGN = _HIF8.sign
HIF8_MASK = _HIF8.mask
HIF8_OVF_BITS = _f64_bits_of(_HIF8.largest_value)  #: |v| above the largest finite (32768) overflows
HIF8_OVF_POS, HIF8_OVF_NEG, HIF8_SAT_POS, HIF8_SAT_NEG = (
    _HIF8.overflow_code(s, n) for s in (False, True) for n in (False, True))
HIF8_ZERO = int(_HIF8.negative_zero_result or 0)  #: the code of a -0 result (HiF8 has one zero)
# the HiF8 lane sets the sign bit on the positive overflow code (Inf or, with Sat, 32768)
assert HIF8_OVF_NEG == HIF8_OVF_POS | HIF8_SIGN and HIF8_SAT_NEG == HIF8_SAT_POS | HIF8_SIGN

# The float32-lane row loops (FP32 -> BF16/FP16/E4M3/HiF8; see :func:`_fp16x_rows`, :func:`_fp8_rows`)
FP32_BIAS = 1 - _FP32.emin
#: FP32 bits of BF16's smallest normal (2^-126: below it a result is tiny) and its largest code
BF16_TINY = (_BF16.emin - _FP32.emin + 1) << (_FP32.precision - 1)
BF16_LARGEST = _BF16.largest[0]
#: FP32 -> FP16: the smallest FP32 magnitude that rounds (RNE) to FP16's infinity (65520), the
#: largest finite code
F16_BIG = _f32_bits_of(_FP16.largest_value) + (1 << (_FP32.precision - _FP16.precision - 1))
FP16_LARGEST = _FP16.largest[0]
F16_INF = _FP16.overflow_code(False, False)  #: +Inf's code
# Sat on an overflow: the lanes subtract one from Inf's code (either sign) to get the largest finite
assert FP16_LARGEST == F16_INF - 1 and BF16_LARGEST == (FP32_INF >> 16) - 1
#: E4M3/HiF8 on float32 lanes: largest finite values (|v| above overflows), E4M3's biased
#: emin and the shift from a binade's exponent to the exponent of its rounding constant
#: M = 2^(23 - (p - 1)) u, HiF8's exponent range and the exponent below which it is tiny
E4M3_MAX_F = float(_E4M3.largest_value)
E4M3_EMIN_F32 = _E4M3.emin + FP32_BIAS
E4M3_MAGIC = _FP32.precision - _E4M3.precision
#: E4M3 loop (:func:`_e4m3_lane`): FP32 bits of 2^emin (below it a result is tiny); the offset that puts
#: the code of a binade's first value, (q - emin_b) << 3, into the low mantissa bits of its rounding
#: constant M; |v| at or below half the smallest subnormal (2^-10) rounds to 0 (a tie goes to even 0);
#: the FP32 bits of the largest finite E4M3 (448: above it overflows); the largest finite FP32 bits
#: (a product above them comes from a NaN/Inf source)
E4M3_EMIN_BITS = E4M3_EMIN_F32 << (_FP32.precision - 1)
E4M3_TINY_BITS = E4M3_EMIN_BITS
E4M3_M_OFF = (E4M3_MAGIC << (_FP32.precision - 1)) - (E4M3_EMIN_F32 << (E4M3_P - 1))
E4M3_ZERO_F = 2.0 ** (_E4M3.emin - E4M3_P)
E4M3_MAX_BITS = _f32_bits_of(_E4M3.largest_value)
E4M3_NEG_ZERO_BITS = _f32_bits_of(-E4M3_ZERO_F)  #: FP32 bits above these: a source below -2^-10
FP32_FINITE_MAX = FP32_INF - 1
HIF8_E_LO = tables.HIF8_DML_EMIN  #: HiF8's smallest value is 2^HIF8_E_LO (ptonum.tables)
def _range(t: Any) -> Tuple[float, float, int]:
    d = tables.DESTINATIONS[t]
    return float(d.minimum), float(d.maximum), d.mask


RANGE_S4X2, RANGE_S8, RANGE_S16, RANGE_S32, RANGE_U32 = (_range(t) for t in tables.INTEGER_DESTINATIONS)
_S16 = tables.DESTINATIONS[T_.S16]
S16_MIN, S16_MAX, S16_MIN_CODE, S16_MAX_CODE, S16_MASK = (
    _S16.minimum, _S16.maximum, _S16.minimum_code, _S16.maximum_code, _S16.mask)
_S32 = tables.DESTINATIONS[T_.S32]
S32_MIN_CODE, S32_MAX_CODE, U32_MASK = _S32.minimum_code, _S32.maximum_code, _S32.mask
S32_MIN, S32_MAX = _S32.minimum, _S32.maximum
S4_MASK = tables.DESTINATIONS[T_.S4X2].mask

_MANT = (1 << 52) - 1
_HIDDEN = 1 << 52
_ABS = (1 << 63) - 1

# HiF8 per-binade tables (indexed by exponent - tables.HIF8_TABLE_EMIN): ptonum.tables',
# as int64 so that every kernel quantity stays in signed 64-bit arithmetic.
HIF8_MBITS = tables.HIF8_MBITS.astype(np.int64)
HIF8_BASE = tables.HIF8_BASE.astype(np.int64)
HIF8_PARFLIP = tables.HIF8_PARFLIP.astype(np.int64)
HIF8_T_EMIN = tables.HIF8_TABLE_EMIN
HIF8_T_EMAX = tables.HIF8_TABLE_EMIN + len(tables.HIF8_BASE) - 1


# ---------------------------------------------------------------------------
# Bit casts

if NUMBA_AVAILABLE:  # pragma: no branch
    from llvmlite import ir as _ir
    from numba.core import types as _types
    from numba.extending import intrinsic as _intrinsic

    @_intrinsic
    def _f64_bits_i(typingctx: Any, x: Any) -> Any:
        """float64 -> its IEEE bit pattern as int64."""
        sig = _types.int64(_types.float64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], _ir.IntType(64))

        return sig, codegen

    @_intrinsic
    def _u32_f32_i(typingctx: Any, x: Any) -> Any:
        """uint32 bit pattern -> float32."""
        sig = _types.float32(_types.uint32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], _ir.FloatType())

        return sig, codegen
    @_intrinsic
    def _rint_i(typingctx: Any, x: Any) -> Any:
        """float64 rounded to an integer, ties to even (``llvm.rint``: the default IEEE
        rounding, exact; unlike a libm call it vectorizes)."""
        sig = _types.float64(_types.float64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            fn = builder.module.declare_intrinsic("llvm.rint", [_ir.DoubleType()])
            return builder.call(fn, [args[0]])

        return sig, codegen
    @_intrinsic
    def _f32_f16_i(typingctx: Any, x: Any) -> Any:
        """float32 -> the IEEE binary16 bits of its round-to-nearest-even conversion (``fptrunc``
        to half: one packed ``vcvtps2ph`` per 8 lanes on an F16C host; overflow gives Inf, NaN a
        quiet NaN, tiny results the correctly rounded subnormal)."""
        sig = _types.uint16(_types.float32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(builder.fptrunc(args[0], _ir.HalfType()), _ir.IntType(16))

        return sig, codegen

    @_intrinsic
    def _f16_f32_i(typingctx: Any, x: Any) -> Any:
        """binary16 bits -> float32 (exact)."""
        sig = _types.float32(_types.uint16)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.fpext(builder.bitcast(args[0], _ir.HalfType()), _ir.FloatType())

        return sig, codegen

    @_intrinsic
    def _f32_bits_i(typingctx: Any, x: Any) -> Any:
        """float32 -> its IEEE bit pattern as uint32."""
        sig = _types.uint32(_types.float32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.bitcast(args[0], _ir.IntType(32))

        return sig, codegen

    @_intrinsic
    def _fma32_i(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
        """float32 a * b + c with one rounding (``llvm.fma``; packed ``vfmadd`` on an FMA host)."""
        sig = _types.float32(_types.float32, _types.float32, _types.float32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            f32 = _ir.FloatType()
            fn = builder.module.declare_intrinsic("llvm.fma", [f32], _ir.FunctionType(f32, [f32, f32, f32]))
            return builder.call(fn, list(args))

        return sig, codegen

    def _shift32(op: str, signed: bool) -> Any:
        """A 32-bit lane shift (``lshr``/``shl``/``ashr`` on i32): numba types a shift of 32-bit
        integers as 64-bit, which LLVM cannot narrow back (vpsrlvq on 4 lanes instead of vpsrlvd
        on 8).  The shift count must be below 32."""
        t = _types.int32 if signed else _types.uint32

        @_intrinsic
        def shift(typingctx: Any, a: Any, b: Any) -> Any:
            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return getattr(builder, op)(args[0], args[1])

            return t(t, t), codegen

        return shift

    @_intrinsic
    def _fma64_i(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
        """float64 a * b + c with one rounding (``llvm.fma``; packed ``vfmadd`` on an FMA host)."""
        sig = _types.float64(_types.float64, _types.float64, _types.float64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            f64 = _ir.DoubleType()
            fn = builder.module.declare_intrinsic("llvm.fma", [f64], _ir.FunctionType(f64, [f64, f64, f64]))
            return builder.call(fn, list(args))

        return sig, codegen

    @_intrinsic
    def _ctz64_i(typingctx: Any, x: Any) -> Any:
        """The number of trailing zero bits of an int64 (``llvm.cttz``; 64 for 0)."""
        sig = _types.int64(_types.int64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            i64 = _ir.IntType(64)
            fn = builder.module.declare_intrinsic("llvm.cttz", [i64],
                                                  _ir.FunctionType(i64, [i64, _ir.IntType(1)]))
            return builder.call(fn, [args[0], _ir.Constant(_ir.IntType(1), 0)])

        return sig, codegen

    def _int32_op(op: str) -> Any:
        """A wrapping 32-bit lane operation (``add``/``and_``/``or_``/``xor`` on i32): numba types
        arithmetic and bitwise operations of 32-bit integers as 64-bit, which keeps LLVM on 4 lanes
        where 8 would do."""
        t = _types.int32

        @_intrinsic
        def op32(typingctx: Any, a: Any, b: Any) -> Any:
            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return getattr(builder, op)(args[0], args[1])

            return t(t, t), codegen

        return op32

    _add32: Any = _int32_op("add")
    _and32: Any = _int32_op("and_")
    _or32: Any = _int32_op("or_")
    _xor32: Any = _int32_op("xor")
    _fma64: Any = _fma64_i
    _ctz64: Any = _ctz64_i

    _shr32: Any = _shift32("lshr", False)
    _shl32: Any = _shift32("shl", False)
    _sar32: Any = _shift32("ashr", True)
    _f64_bits: Any = _f64_bits_i
    _fma32: Any = _fma32_i
    _u32_f32: Any = _u32_f32_i
    _rint: Any = _rint_i
    _f32_f16: Any = _f32_f16_i
    _f16_f32: Any = _f16_f32_i
    _f32_bits: Any = _f32_bits_i
else:  # pragma: no cover - kernels are not used without numba
    def _f64_bits(x: float) -> int:
        return int(np.array(x, np.float64).view(np.int64))

    def _u32_f32(x: int) -> float:
        return float(np.array(x, np.uint32).view(np.float32))

    def _rint(x: float) -> float:
        return float(np.rint(x))

    def _f32_f16(x: float) -> int:
        return int(np.array(x, np.float32).astype(np.float16).view(np.uint16))

    def _f16_f32(x: int) -> float:
        return float(np.array(x, np.uint16).view(np.float16).astype(np.float32))

    def _f32_bits(x: float) -> int:
        return int(np.array(x, np.float32).view(np.uint32))


    def _fma64(a: float, b: float, c: float) -> float:
        return float(np.float64(a) * np.float64(b) + np.float64(c))  # exact product only (see its users)

    def _ctz64(x: int) -> int:
        x = int(x) & 0xFFFFFFFFFFFFFFFF
        return 64 if x == 0 else (x & -x).bit_length() - 1

    def _add32(a: int, b: int) -> int:
        return ((int(a) + int(b) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)

    def _and32(a: int, b: int) -> int:
        return int(a) & int(b)

    def _or32(a: int, b: int) -> int:
        return int(a) | int(b)

    def _xor32(a: int, b: int) -> int:
        return int(a) ^ int(b)

    def _fma32(a: float, b: float, c: float) -> float:
        return float(np.float32(float(np.float32(a)) * float(np.float32(b)) + float(np.float32(c))))

    def _shr32(a: int, b: int) -> int:
        return (int(a) & 0xFFFFFFFF) >> int(b)

    def _shl32(a: int, b: int) -> int:
        return (int(a) << int(b)) & 0xFFFFFFFF

    def _sar32(a: int, b: int) -> int:
        return int(np.int32(a)) >> int(b)


# ---------------------------------------------------------------------------
# Scalar helpers (all integer work in int64; every quantity here is < 2^63)


@njit
def _round_up(mode: int, rem: int, half: int, neg: bool, lowpar: int) -> bool:
    """Whether a magnitude rounds up from its lower candidate (ptonum.encode._round_up)."""
    if mode == R_RNE:
        return rem > half or (rem == half and lowpar != 0)
    if mode == R_RTZ:
        return False
    if mode == R_RNA:
        return rem >= half
    if mode == R_RHB:
        return rem > half or (rem == half and not neg)
    if mode == R_RTP:
        return rem != 0 and not neg
    if mode == R_RTM:
        return rem != 0 and neg
    return rem != 0 and lowpar == 0  # RTO


@njit(inline="always")
def _multiplier(neg: bool, sc: float, al: float, relu: int) -> float:
    """MatrixSelectedMultiplier: the scale, unless the source is negative and ReluMode != 0
    (ReLU: 0; LReLU/PReLU: the alpha, replacing the scale).  Select form, so loops vectorize."""
    alt = 0.0 if relu == 1 else al
    return alt if (neg and relu != 0) else sc


@njit(inline="always")
def _fp32_special_or_negzero(x: int) -> bool:
    """An FP32 NaN/Inf or -0 source: the row loops leave these to :func:`_element`."""
    return (x & FP32_INF) == FP32_INF or x == FP32_NEG_ZERO


@njit
def _round_int(v: float, mode: int) -> float:
    """Round a finite float64 to an integer-valued float64 (FloatingToInteger, exact)."""
    lower = np.floor(v)
    frac = v - lower
    if mode == R_RTM or frac == 0.0:
        return lower
    if mode == R_RTP:
        return lower + 1.0
    if mode == R_RTZ:
        return lower if v > 0 else lower + 1.0
    if mode == R_RNE:
        if frac > 0.5:
            return lower + 1.0
        if frac < 0.5:
            return lower
        return lower if lower * 0.5 == np.floor(lower * 0.5) else lower + 1.0
    if mode == R_RNA:
        if frac > 0.5 or (frac == 0.5 and v > 0):
            return lower + 1.0
        return lower
    if mode == R_RHB:
        return lower + 1.0 if frac >= 0.5 else lower
    # RTO: inexact -> the odd neighbour
    return lower + 1.0 if lower * 0.5 == np.floor(lower * 0.5) else lower


@njit
def _encode_binary(v: float, dst: int, mode: int, sat: bool) -> Tuple[int, int]:
    """FP32/FP16/BF16/E4M3 encoding of an exact float64 value (ptonum.encode._binary_fast)."""
    if dst == D_FP32:
        p, emin, width, maxc, infc = BIN_FP32
    elif dst == D_FP16:
        p, emin, width, maxc, infc = BIN_FP16
    elif dst == D_BF16:
        p, emin, width, maxc, infc = BIN_BF16
    else:  # E4M3 (its overflow is judged on the value, below)
        p, emin, width, maxc, infc = BIN_E4M3
    b = _f64_bits(v)
    a = b & _ABS
    neg = b < 0
    big_e = a >> 52
    emin_b = emin + 1023
    s0 = 53 - p
    extra = emin_b - max(big_e, 1)
    if extra < 0:
        extra = 0
    if extra > 55 - s0:
        extra = 55 - s0
    shift = extra + s0
    sig = (a & _MANT) | (_HIDDEN if big_e > 0 else 0)
    k = sig >> shift
    rem = sig & ((1 << shift) - 1)
    half = (1 << shift) >> 1
    n = k + (1 if _round_up(mode, rem, half, neg, k & 1) else 0)
    code = ((max(big_e, emin_b) - emin_b) << (p - 1)) + n
    flags = 0
    if rem != 0:
        flags = _UF_NX if big_e < emin_b else _NX
    if dst == D_E4M3:
        if a > E4M3_OVF_BITS:  # |v| > 448
            if sat:
                return (E4M3_SAT_NEG if neg else E4M3_SAT_POS), _OF_NX
            return (E4M3_OVF_NEG if neg else E4M3_OVF_POS), _OF_NX
        return (code & E4M3_MASK) | (E4M3_SIGN if (neg and n != 0) else 0), flags
    sign = (1 << (width - 1)) if (neg and a != 0) else 0
    if code >= infc:
        return sign | (maxc if sat else infc), _OF_NX
    return code | sign, flags


@njit
def _encode_hif8(v: float, mode: int, sat: bool) -> Tuple[int, int]:
    """HiF8 encoding of an exact float64 value (ptonum.encode._hif8_fast)."""
    b = _f64_bits(v)
    a = b & _ABS
    neg = b < 0
    if a > HIF8_OVF_BITS:  # |v| > 32768
        if sat:
            return (HIF8_SAT_NEG if neg else HIF8_SAT_POS), _OF_NX
        return (HIF8_OVF_NEG if neg else HIF8_OVF_POS), _OF_NX
    big_e = a >> 52
    ecl = min(max(big_e - 1023, HIF8_T_EMIN), HIF8_T_EMAX - 1)
    idx = ecl - HIF8_T_EMIN
    mb = HIF8_MBITS[idx]
    lsb_e = max(big_e, 1) - 1075
    e0 = max(ecl, HIF8_E_LO)
    shift = min(max(e0 - mb - lsb_e, 0), 55)
    sig = (a & _MANT) | (_HIDDEN if big_e > 0 else 0)
    k = sig >> shift
    rem = sig & ((1 << shift) - 1)
    half = (1 << shift) >> 1
    n = k + (1 if _round_up(mode, rem, half, neg, (k ^ HIF8_PARFLIP[idx]) & 1) else 0)
    flags = 0
    if rem != 0:
        flags = _UF_NX if big_e < HIF8_EMIN_B else _NX
    if n == 0:
        return 0, flags
    carry = n >> (mb + 1)
    t = min(max(e0 + carry - HIF8_T_EMIN, 0), HIF8_T_EMAX - HIF8_T_EMIN)
    body = (HIF8_BASE[t] + (n & ((1 << mb) - 1))) & HIF8_MASK
    return body | (HIF8_SIGN if neg else 0), flags


@njit
def _int_range(dst: int) -> Tuple[float, float, int]:
    """(minimum, maximum, mask) of an integer destination (ptonum.tables)."""
    if dst == D_S4X2:
        return RANGE_S4X2
    if dst == D_S8:
        return RANGE_S8
    if dst == D_S16:
        return RANGE_S16
    if dst == D_S32:
        return RANGE_S32
    return RANGE_U32


@njit
def _encode_integer(v: float, dst: int, mode: int, sat: bool) -> Tuple[int, int]:
    """Integer destination (ptonum.encode._integer_fast): round, OF|NX, clamp or wrap."""
    lo, hi, mask = _int_range(dst)
    r = _round_int(v, mode)
    if r < lo or r > hi:
        if sat:
            r = lo if r < lo else hi
        else:
            r = r - 4294967296.0 * np.trunc(r * (1.0 / 4294967296.0))  # exact fmod
        return np.int64(r) & mask, _OF_NX
    return np.int64(r) & mask, (_NX if r != v else 0)


@njit
def _encode_value(v: float, dst: int, mode: int, sat: bool) -> Tuple[int, int]:
    """MatrixEncodeReal of an exact finite float64 value -> (bits, flags)."""
    if dst >= D_FP32:
        if dst == D_HIF8:
            return _encode_hif8(v, mode, sat)
        return _encode_binary(v, dst, mode, sat)
    return _encode_integer(v, dst, mode, sat)


@njit
def _element(a: int, sc: float, al: float, off: int, src: int, relu: int, offw: int,
             dst: int, mode: int, sat: bool, spec: Any, negzero: int) -> Tuple[int, int]:
    """One element after PreQuant/activation selection (MatrixPostQuantBaseWithFlags).

    ``a``: accumulator bits (0..2^32-1); ``sc``/``al``: scale and alpha values;
    ``off``: the signed offset; ``spec``: int64[8] fixed results (bits, flags)
    for qNaN, sNaN, +Inf, -Inf; ``negzero``: the destination -0 bits or -1.
    """
    if src == SRC_FP32:
        ex = (a >> 23) & 0xFF
        neg = a >= 0x80000000
        if ex == 0xFF:
            mant = a & 0x7FFFFF
            if mant != 0:  # NaN: never negative
                if mant >= FP32_QUIET:
                    return spec[0], spec[1]
                return spec[2], spec[3]
            if not neg:
                return spec[4], spec[5]
            mult = _multiplier(True, sc, al, relu)
            if mult != 0.0:
                return spec[6], spec[7]
            value = 0.0  # -Inf with a zero multiplier is taken as 0
        else:
            value = np.float64(_u32_f32(np.uint32(a)))
            mult = _multiplier(neg, sc, al, relu)
            if a == 0x80000000 and negzero >= 0 and mult != 0.0 and off == 0:
                return negzero, 0
    elif src == SRC_S32:
        neg = a >= 0x80000000
        value = np.float64(a - 4294967296 if neg else a)
        mult = _multiplier(neg, sc, al, relu)
    else:
        value = np.float64(a)
        mult = sc
    product = value * mult + 0.0
    if offw == 0:
        return _encode_value(product, dst, mode, sat)
    # S5/S9/S17 intermediate, offset, exact final integer encoding
    lim = float(1 << (offw - 1))
    r = _round_int(product, mode)
    f1 = 0
    if r < -lim or r > lim - 1.0:
        f1 = _OF_NX
        r = -lim if r < -lim else lim - 1.0
    elif r != product:
        f1 = _NX
    final = np.int64(r) + off
    lo, hi, mask = _int_range(dst)
    if final < lo or final > hi:
        f1 |= _OF_NX
        if sat:
            final = np.int64(lo) if final < lo else np.int64(hi)
    return final & mask, f1


# ---------------------------------------------------------------------------
# Reductions


@njit
def _abs_red(v: int, t: int) -> Tuple[int, int]:
    if t == SRC_U32:
        return v, 0
    if t == SRC_S32:
        if v < S32_MIN_CODE:
            return v, 0
        if v == S32_MIN_CODE:
            return S32_MAX_CODE, _OF
        return (0x100000000 - v) & U32_MASK, 0
    return v & 0x7FFFFFFF, 0


@njit
def _is_nan32(v: int) -> bool:
    return (v & FP32_INF) == FP32_INF and (v & FP32_MANT) != 0


@njit
def _key32(v: int) -> int:
    return (~v) & 0xFFFFFFFF if v >= 0x80000000 else v ^ 0x80000000


@njit
def _unkey32(k: int) -> int:
    return k ^ 0x80000000 if k >= 0x80000000 else (~k) & 0xFFFFFFFF


@njit
def _step(cur: int, cand: int, t: int, max_abs: bool) -> Tuple[int, int]:
    """TileProfileMatrixReductionStepWithFlags on 32-bit encodings (as int64)."""
    flags = 0
    if max_abs:
        cur, f1 = _abs_red(cur, t)
        cand, f2 = _abs_red(cand, t)
        flags = f1 | f2
    if t == SRC_U32:
        return (cur if cur >= cand else cand), flags
    if t == SRC_S32:
        cs = cur - 0x100000000 if cur >= 0x80000000 else cur
        ks = cand - 0x100000000 if cand >= 0x80000000 else cand
        return (cur if cs >= ks else cand), flags
    ln = _is_nan32(cur)
    rn = _is_nan32(cand)
    if (ln and (cur & FP32_QUIET) == 0) or (rn and (cand & FP32_QUIET) == 0):
        flags |= _NV
    if ln and rn:
        return FP32_QNAN, flags
    if ln:
        return cand, flags
    if rn:
        return cur, flags
    if (cur & 0x7FFFFFFF) == 0 and (cand & 0x7FFFFFFF) == 0:
        if cur == FP32_NEG_ZERO and cand == FP32_NEG_ZERO:
            return cur, flags
        return 0, flags
    return (cur if _key32(cur) >= _key32(cand) else cand), flags


@njit(inline="always")
def _sel(c: Any, a: Any, b: Any) -> Any:
    """Branch-free select on uint32 values: ``a`` where ``c`` (0/1) else ``b``."""
    m = np.uint32(np.uint32(0) - c)  # all ones when c == 1 (numba widens; truncate back)
    return np.uint32((a & m) | (b & ~m))


@njit
def _fold_group(acc: Any, start: int, stop: int, t: int, max_abs: bool) -> Tuple[int, int]:
    """MatrixGroupMaxResult of acc[start:stop] (order-free formulation, see reduction.py)."""
    seg = acc[start:stop]
    stepped = (stop - start) >= 2 or max_abs
    flags = 0
    if t == SRC_FP32:
        # Select-only (the loop vectorizes): a NaN gets key 0, which no number has (the
        # smallest number, -Inf, keys to 0x007FFFFF), so "some number" is kmax > 0.
        kmax = np.uint32(0)
        snan = np.uint32(0)
        absm = np.uint32(0x7FFFFFFF) if max_abs else np.uint32(0xFFFFFFFF)
        for c in range(seg.size):
            v = np.uint32(seg[c] & absm)
            nan = np.uint32((v & np.uint32(0x7FFFFFFF)) > np.uint32(FP32_INF))
            snan |= nan & np.uint32((v & np.uint32(FP32_QUIET)) == np.uint32(0))
            k = _sel(np.uint32(v >> np.uint32(31)), np.uint32(~v), np.uint32(v ^ np.uint32(0x80000000)))
            k = _sel(nan, np.uint32(0), k)
            kmax = max(kmax, k)
        if snan != np.uint32(0) and stepped:
            flags = _NV
        if kmax > np.uint32(0):
            return _unkey32(np.int64(kmax)), flags
        if stepped:
            return FP32_QNAN, flags
        return np.int64(seg[0]), flags
    if t == SRC_S32:
        best = np.int32(-2147483648)
        for c in range(seg.size):
            v = np.int32(seg[c])
            if max_abs:
                if v == np.int32(-2147483648):
                    flags = _OF
                    v = np.int32(2147483647)
                elif v < np.int32(0):
                    v = np.int32(-v)
            best = max(best, v)
        return np.int64(best) & 0xFFFFFFFF, flags
    best_u = np.uint32(0)
    for c in range(seg.size):
        best_u = max(best_u, seg[c])
    return np.int64(best_u), flags


# ---------------------------------------------------------------------------
# Row loops


@njit
def _row_general(acc: Any, base: int, cnt: int, out: Any, fl: Any, want_flags: bool, i: int,
                 kind: int, src: int, relu: int, offw: int, dst: int, mode: int, sat: bool,
                 scale: Any, alpha: Any, offs: Any, shifts: Any, qrow: int, qcol: int,
                 rrow: int, rcol: int, spec: Any, negzero: int) -> int:
    f_or = 0
    a_ = acc[base:base + cnt]
    o_ = out[base:base + cnt]
    f_ = fl[base:base + cnt] if want_flags else fl[0:0]
    qb = i * qrow
    rb = i * rrow
    sc_ = scale[qb:qb + cnt]
    of_ = offs[qb:qb + cnt]
    sh_ = shifts[qb:qb + cnt]
    al_ = alpha[rb:rb + cnt]
    for j in range(cnt):
        a = np.int64(a_[j])
        if kind == KIND_PASS:
            b = a
            f = 0
        elif kind == KIND_SHIFT:
            sv = a - 4294967296 if a >= 0x80000000 else a
            s = sv >> sh_[j]
            if s > S16_MAX:
                b, f = S16_MAX_CODE, _OF_NX
            elif s < S16_MIN:
                b, f = S16_MIN_CODE, _OF_NX
            else:
                b, f = s & S16_MASK, 0
        else:
            b, f = _element(a, sc_[j], al_[j] if relu >= 2 else 0.0, of_[j], src, relu, offw,
                            dst, mode, sat, spec, negzero)
        o_[j] = b
        if want_flags:
            f_[j] = f
        f_or |= f
    return f_or


# The four FP32 -> floating-destination row loops (F322BF16, F322F16, QF322FP8_PRE/VQF322FP8_PRE,
# QF322HIF8_PRE/VQF322HIF8_PRE) work on one accumulator row and are select-only so that LLVM
# vectorizes them (AVX2: 8 x 32-bit lanes); each returns the OR of the flags.  NaN/Inf sources (and,
# for E4M3/HiF8, -0) are rare: the vector loop only notes that one occurred, and a second pass over
# the row redoes exactly those elements with the exact scalar :func:`_element` and, with ``fold``,
# the RowMax/GroupMax keys with the fold's NaN rules (:func:`_redo_rare`).  A row without a rare
# source takes its fold keys from a load-only pass of their own (:func:`_fp32_fold_groups`): a fold
# inside the conversion loop costs that loop its register allocation once it is split per group
# (docs/performance.md, "Float GroupMax folds").


@njit(inline="always")
def _fp32_key(x: Any, absm: Any) -> Tuple[Any, Any]:
    """The FP32 fold of :func:`_fold_group` for one element, select-only: its order key
    (0 for a NaN, which no number has) and 1 for a signalling NaN (after MaxAbs' mask)."""
    v = np.uint32(x & absm)
    nan = np.uint32((v & np.uint32(0x7FFFFFFF)) > np.uint32(FP32_INF))
    sn = nan & np.uint32((v & np.uint32(0x400000)) == np.uint32(0))
    k = _sel(np.uint32(v >> np.uint32(31)), np.uint32(~v), np.uint32(v ^ np.uint32(0x80000000)))
    return _sel(nan, np.uint32(0), k), sn


@njit
def _fold_finish(kmax: Any, snan: Any, size: int, first: int, max_abs: bool) -> Tuple[int, int]:
    """MatrixGroupMaxResult from a segment's key maximum and sNaN bit (as :func:`_fold_group`)."""
    stepped = size >= 2 or max_abs
    flags = _NV if (snan != np.uint32(0) and stepped) else 0
    if kmax > np.uint32(0):
        return _unkey32(np.int64(kmax)), flags
    if stepped:
        return FP32_QNAN, flags
    return first, flags


@njit(inline="always")
def _smallest_i32(a_: Any, t: Any, e: Any) -> Any:
    """The smallest of ``a_[t .. e - 1]`` as int32 (the maximum of a group whose FP32 sources are all
    negative: -0 = INT_MIN is the largest of them, larger magnitudes have larger bits)."""
    lo = np.int32(2147483647)
    for j in range(t, e):
        lo = min(lo, np.int32(a_[j]))
    return lo


@njit
def _fp32_fold_groups(a_: Any, absm: Any, seg: int, gk: Any) -> None:
    """The RowMax/GroupMax fold keys of a row without a NaN (the caller redoes a row with a NaN/Inf
    source by :func:`_redo_rare`): gk[g] = the order key (:func:`_fp32_key`) of the maximum of
    the ``seg``-element group g (one group, the row, for RowMax alone), in a load-only pass of
    its own, so the row's conversion loop keeps its own register allocation.

    The maximum is taken on the bits as int32 (one lane operation): their largest is the result
    when it is >= 0 (some source has its sign clear: +0 and positives order as their bits, and
    +0 beats -0); a group whose sources are all negative takes a second pass for the smallest
    int32 (-0 = INT_MIN is the largest of them, larger magnitudes have larger bits).  With MaxAbs
    (``absm`` 0x7FFFFFFF) every masked source is >= 0.  Without MaxAbs, full groups of 128 (GroupN
    128) go sixteen at a time through ``_fold16_128`` (the sixteen maxima reduced together, one lane
    per group; blocks from the row's end); the rest, other GroupN, a longer ``seg`` (RowMax alone) or
    MaxAbs, by a loop per group (in the BF16/FP16 rows' fold-first chunks, blocks at other GroupN were
    slower than this loop: Zen 5, 2 threads, GroupN 32 -1% -> +21..+30%; the FP8 rows' fold after the
    pass is :func:`_fp8_fold_groups`).  Indices are unsigned: no negative-index wraparound code in the loops."""
    n = np.uint64(a_.size)
    useg = np.uint64(seg)
    s = np.uint64(0)
    g0 = 0
    if absm == np.uint32(0xFFFFFFFF) and seg == 128:
        nb = min(np.uint64(gk.size), n // useg) // np.uint64(16)
        for bb in range(nb):  # last block first: the row's end is the part the conversion left in L1
            bk = nb - np.uint64(1) - np.uint64(bb)
            s = bk * (useg * np.uint64(16))
            gb = bk * np.uint64(16)
            neg = _fold16_128(a_, s, gk, gb)
            if neg != 0:  # some group all negative
                for q in range(16):
                    if (neg >> q) & 1:
                        t = s + np.uint64(q) * useg
                        gk[gb + np.uint64(q)] = np.uint32(~np.uint32(_smallest_i32(a_, t, t + useg)))
        g0 = np.int64(nb) * 16
        s = np.uint64(g0) * useg
    for g in range(g0, gk.size):
        e = min(s + useg, n)
        hi = np.int32(-2147483648)
        if absm == np.uint32(0xFFFFFFFF):
            for j in range(s, e):
                hi = max(hi, np.int32(a_[j]))
        else:
            for j in range(s, e):
                hi = max(hi, np.int32(a_[j] & absm))
        b = np.uint32(hi)
        if hi < np.int32(0):  # every source negative
            b = np.uint32(_smallest_i32(a_, s, e))
        gk[g] = np.uint32(b ^ np.uint32(0x80000000)) if b < np.uint32(0x80000000) else np.uint32(~b)
        s = e


@njit
def _fp8_fold_groups(a_: Any, absm: Any, seg: int, gk: Any) -> None:
    """The fold keys of an E4M3/HiF8 row without a NaN, after its pass: the same keys as
    :func:`_fp32_fold_groups` (gk[g] = the order key of the int32 maximum of group g's FP32 bits, each
    ANDed with ``absm``; an all-negative group, possible only without MaxAbs, takes its smallest int32),
    with whole blocks of groups reduced together by :func:`_foldb_seg` for GroupN 8 (32 groups a block)
    and every multiple of 16 up to 128 (16 groups), MaxAbs too (the masked form); blocks from the row's
    end (the part the pass left in L1); the rest, and a longer ``seg`` (RowMax alone), by a loop per
    group.  Zen 5, one thread, a row of 4096 in L1, against the loop per group: GroupN 8 0.236 -> 0.044
    ns/elem (the HiF8 unit pass itself takes about 0.17), MaxAbs at GroupN 128 0.027 -> 0.022; the
    multiples of 16 before them were measured in blocks of sixteen too (c29c901).  GroupN 8 without
    MaxAbs takes :func:`_foldb_8` inlined (no call a block), a block's all-negative groups by
    :func:`_fp8_neg_block` (only the set bits of its mask): Zen 3, one thread, 8 rows of 4096 in L1,
    GroupN 8 0.10 -> 0.08 ns/elem, the other GroupN unchanged (GroupN 16 inlined too measured slower).
    Indices unsigned."""
    n = np.uint64(a_.size)
    useg = np.uint64(seg)
    masked = absm != np.uint32(0xFFFFFFFF)
    s = np.uint64(0)
    g0 = 0
    if seg == 8 or (seg % 16 == 0 and 16 <= seg <= 128):
        bg = np.uint64(32) if seg == 8 else np.uint64(16)  # groups in one block
        nb = min(np.uint64(gk.size), n // useg) // bg
        for bb in range(nb):
            bk = nb - np.uint64(1) - np.uint64(bb)
            s = bk * (useg * bg)
            gb = bk * bg
            if seg == 8 and not masked:  # inlined: no call per 256 elements
                neg = _foldb_8(a_, s, gk, gb)
            else:
                neg = _foldb_seg(a_, s, gk, gb, seg, masked)
            if neg != 0:  # some group all negative (not with MaxAbs): those groups only
                _fp8_neg_block(a_, gk, neg, np.int64(s), np.int64(gb), seg)
        g0 = np.int64(nb * bg)
        s = np.uint64(g0) * useg
    for g in range(g0, gk.size):
        e = min(s + useg, n)
        hi = np.int32(-2147483648)
        if not masked:
            for j in range(s, e):
                hi = max(hi, np.int32(a_[j]))
        else:
            for j in range(s, e):
                hi = max(hi, np.int32(a_[j] & absm))
        b = np.uint32(hi)
        if hi < np.int32(0):  # every source negative
            b = np.uint32(_smallest_i32(a_, s, e))
        gk[g] = np.uint32(b ^ np.uint32(0x80000000)) if b < np.uint32(0x80000000) else np.uint32(~b)
        s = e


@njit
def _fp8_neg_block(a_: Any, gk: Any, neg: int, s: int, g: int, seg: int) -> None:
    """The groups of one :func:`_foldb_seg` block whose maximum is negative (bit q of ``neg``: group ``g +
    q``, its sources from ``s + q seg``): their key from the smallest int32 of their sources, as
    :func:`_fp8_fold_groups` does; not inlined (a rare path: every source of the group negative)."""
    while neg != 0:
        q = _ctz64(neg)
        neg &= neg - 1
        t = s + q * seg
        gk[g + q] = np.uint32(~np.uint32(_smallest_i32(a_, t, t + seg)))


@njit(inline="always")
def _foldb_block(a_: Any, c0: int, gk: Any, g: int, seg: int, masked: bool) -> int:
    """One :func:`_foldb_seg` block of :func:`_fp8_blocks_loops`: GroupN 8 and 16 without MaxAbs (the
    blocks of 256 elements) by their intrinsics inlined into the pass's loop, a run-time branch a block
    (no call per 256 elements: its argument pushes, the pass's registers saved around it and reloaded
    after it, about 65 instructions a block; callgrind, a row of 4096, the E4M3 unit pass with GroupN 8 or
    16 keys 0.10 instructions an element fewer); other GroupN (blocks of 512 elements or more) and MaxAbs
    through the call."""
    if not masked and seg == 8:
        return _foldb_8(a_, c0, gk, g)
    if not masked and seg == 16:
        return _foldb_16(a_, c0, gk, g)
    return _foldb_seg(a_, c0, gk, g, seg, masked)


@njit(inline="always")
def _fp8_blocks_loops(unit: bool, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any, seg: int,
                      gk: Any, masked: bool) -> Any:
    """The loops of :func:`_fp8_pass_blocks` (``unit`` a constant at the call)."""
    n = a_.size
    blk = 256 if seg == 8 else 16 * seg  # the elements of one _foldb_seg block
    gpb = blk // seg  # its groups (32 or 16)
    # unsigned lane indices (no negative-index wraparound code: the lane loop vectorizes), the block's
    # fold after its last chunk (t counts the block's chunks down)
    cpb = blk // E4M3_CHUNK
    kmin = np.uint32(0xFFFFFFFF)
    kmax = np.uint32(0)
    t = cpb
    g = 0
    if unit:  # (two loops: with the lane's choice inside the loop LLVM does not vectorize it)
        for c in range(0, n - n % blk, E4M3_CHUNK):
            for q in range(0, E4M3_CHUNK, 16):
                _prefetch(a_, c + q + PF_AHEAD)
            for j in range(np.uint64(c), np.uint64(c + E4M3_CHUNK)):
                code, ab, key = _e4m3_unit_lane(a_[j], ovf_pos, ovf_neg)
                o_[j] = np.uint8(code)
                kmin = min(kmin, key)
                kmax = max(kmax, ab)
            t -= 1
            if t == 0:
                t = cpb
                c0 = c + E4M3_CHUNK - blk
                neg = _foldb_block(a_, c0, gk, g, seg, masked)
                if neg != 0:
                    _fp8_neg_block(a_, gk, neg, c0, g, seg)
                g += gpb
    else:
        for c in range(0, n - n % blk, E4M3_CHUNK):
            for q in range(0, E4M3_CHUNK, 16):
                _prefetch(a_, c + q + PF_AHEAD)
            for j in range(np.uint64(c), np.uint64(c + E4M3_CHUNK)):
                code, ab, key = _e4m3_lane(a_[j], _mult_at(mp_, j), _mult_at(mn_, j, mp_), ovf_pos, ovf_neg)
                o_[j] = np.uint8(code)
                kmin = min(kmin, key)
                kmax = max(kmax, ab)
            t -= 1
            if t == 0:
                t = cpb
                c0 = c + E4M3_CHUNK - blk
                neg = _foldb_block(a_, c0, gk, g, seg, masked)
                if neg != 0:
                    _fp8_neg_block(a_, gk, neg, c0, g, seg)
                g += gpb
    return _e4m3_word(kmin, kmax)


@njit
def _fp8_pass_blocks(unit: bool, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any, seg: int, gk: Any,
                     masked: bool) -> Any:
    """The E4M3 row's pass without AVX-512 (:func:`_e4m3_pass`, :func:`_e4m3_pass_unit` for ``unit``) with its
    GroupMax fold keys taken block by block on the way: after each block of ``seg``-element groups (GroupN
    ``seg`` 8: 32 groups, 256 elements; a multiple of 16 up to 128: 16 groups; :func:`_fp8_rows` calls it for
    GroupN 8 and 16 only, where it takes less time than the pass then the fold) is converted, its keys by
    :func:`_foldb_seg` (MaxAbs's masked form with ``masked``; GroupN 8 and 16 without MaxAbs inlined,
    :func:`_foldb_block`) from the block's sources just loaded (L1), to ``gk[..]`` as :func:`_fp8_fold_groups`
    writes them, an all-negative group by :func:`_fp8_neg_block`.  The same codes, flag word and keys as the
    pass then :func:`_fp8_fold_groups`; the fold's work sits between the pass's prefetches (the memory stream
    keeps going) instead of in a pass of its own after the row.  ``a_.size`` a multiple of the block; a row
    with a rare source (the flag word's rare bit) is redone by the caller (its keys too).  Not HiF8: its pass
    then :func:`_fp8_fold_groups` takes fewer instructions at every GroupN (callgrind, a row of 4096, unit
    lane, both with ``_foldb_make``'s 8-lane form: GroupN 8 2.85 against 3.11 an element, 16 2.56 / 2.79, 32
    2.35 / 2.57, 128 2.20 / 2.40; the HiF8 loop keeps its registers only without a call or fold inside it)."""
    if unit:
        return _fp8_blocks_loops(True, a_, o_, mp_, mn_, ovf_pos, ovf_neg, seg, gk, masked)
    return _fp8_blocks_loops(False, a_, o_, mp_, mn_, ovf_pos, ovf_neg, seg, gk, masked)


@njit(inline="always")
def _e4m3_groups_loop(a_: Any, o_: Any, mp_: Any, mn_: Any, gk: Any, gsz: int, unit: bool, sat: bool, absm: Any,
                      per: int) -> Any:
    """The loop of :func:`_e4m3_pass_groups` over :func:`_e4m3_grp`'s steps (``8 gsz`` elements, eight groups or,
    ``per`` > 1, eight subgroups of ``per``-subgroup groups a step), ``gsz``, ``unit`` and ``sat`` literals at
    the call, ``absm`` False and ``per`` 1 literals too, or (``gsz`` 32) both at run time: the accumulators."""
    acc = _e4m3_acc8_0()
    g = 0
    for j in range(0, a_.size, 8 * gsz):
        for q in range(0, 8 * gsz, 16):
            _prefetch(a_, j + q + PF_AHEAD)
        acc = _e4m3_grp(a_, mp_, mn_, j, o_, acc, gk, g, gsz, unit, sat, absm, per)
        g += 8 // per
    return acc


@njit(inline="always")
def _e4m3_groups_sat(a_: Any, o_: Any, mp_: Any, mn_: Any, gk: Any, gsz: int, unit: bool, sat: bool) -> Any:
    """:func:`_e4m3_groups_loop` with ``sat`` as a literal (``gsz`` and ``unit`` literals at the call; no mask,
    one group a step's subgroup)."""
    if sat:
        return _e4m3_groups_loop(a_, o_, mp_, mn_, gk, gsz, unit, True, False, 1)
    return _e4m3_groups_loop(a_, o_, mp_, mn_, gk, gsz, unit, False, False, 1)


@njit(inline="always")
def _e4m3_groups_unit(a_: Any, o_: Any, mp_: Any, mn_: Any, gk: Any, gsz: int, unit: bool, sat: bool) -> Any:
    """:func:`_e4m3_groups_sat` with ``unit`` as a literal (``gsz`` a literal at the call)."""
    if unit:
        return _e4m3_groups_sat(a_, o_, mp_, mn_, gk, gsz, True, sat)
    return _e4m3_groups_sat(a_, o_, mp_, mn_, gk, gsz, False, sat)


@njit
def _e4m3_pass_groups(a_: Any, o_: Any, mp_: Any, mn_: Any, gk: Any, seg: int, unit: bool, sat: bool) -> Any:
    """:func:`_e4m3_pass` (``unit``: :func:`_e4m3_pass_unit`) and :func:`_fp8_fold_groups` (GroupN ``seg`` 8, 16
    or 32, no MaxAbs) in one loop, without AVX-512: eight groups a step by :func:`_e4m3_grp`
    (:func:`_e4m3_lane8_ir`, the lane of :func:`_e4m3_v8_row` too; the group maxima from the step's sources,
    a step whose maxima include a negative one redoing those groups' keys itself).  ``a_.size`` a multiple of
    ``8 seg``.  The same codes and flag word as the pass then :func:`_fp8_fold_groups`; ``gk`` gets the groups'
    maxima as bits (their GroupMaxOut bits, :data:`_GMO_BITS`) where :func:`_fp8_fold_groups` gives order keys.
    The unit lane's GroupN 64 / 128 and MaxAbs: :func:`_e4m3_pass_groups_unit`.  Against the blocks
    form (:func:`_fp8_pass_blocks`: LLVM's vectorized lane, then each block's :func:`_foldb_seg` from L1) and
    the pass then :func:`_fp8_fold_groups` (scale 1.625, GroupN 32), callgrind, one thread, 64 rows of 4096
    (the pass alone, LLVM's lane: 6.38 instructions an element with scale 1.625, 4.64 with scale 1): scale
    1.625 GroupN 8 7.35 -> 6.13, 16 7.04 -> 5.72, 32 6.77 -> 5.65; scale 1 GroupN 8 5.57 -> 4.80, 16 5.27 ->
    4.38, 32 5.17 -> 4.25 (LLVM's own vectorization of :func:`_e4m3_lane` spills more: its loop interleaves
    four vectors' lanes).  With :func:`_e4m3_v8_row`'s lane (the sign in the rounding constant, the codes
    packed by ``vpackus``) and the all-negative groups redone inside the step (the fix-up loop after the
    row, removed, cost ~0.25 instructions an element at GroupN 8 on typical data, ~16 groups a row), callgrind, one
    thread, 64 rows of 4096, the pass alone: scale 1.625 GroupN 8 6.15 -> 5.60, 16 5.75 -> 5.48, 32 5.66 -> 5.36
    (the plain pass, :func:`_e4m3_v8_row`, 5.22 -> 5.03); scale 1 GroupN 8 4.83 -> 4.40, 16 4.37 -> 4.24, 32
    4.30 -> 4.12 (h-grp)."""
    # one step intrinsic (_e4m3_grp) with GroupN, unit and Sat as literals: one compiled loop each
    if seg == 8:
        acc = _e4m3_groups_unit(a_, o_, mp_, mn_, gk, 8, unit, sat)
    elif seg == 16:
        acc = _e4m3_groups_unit(a_, o_, mp_, mn_, gk, 16, unit, sat)
    else:
        acc = _e4m3_groups_unit(a_, o_, mp_, mn_, gk, 32, unit, sat)
    return _e4m3_word(_e4m3_acc8_min(acc), _e4m3_acc8_max(acc))


@njit
def _e4m3_pass_groups_unit(a_: Any, o_: Any, mp_: Any, mn_: Any, gk: Any, seg: int, sat: bool, masked: bool) -> Any:
    """:func:`_e4m3_pass_groups` for the unit lane (every multiplier 1; ``mp_``/``mn_`` not read) at GroupN ``seg``
    32, 64 or 128, with MaxAbs (``masked``: the maxima of the magnitudes' bits) or without: eight 32-element
    subgroups a step (:func:`_e4m3_grp` with ``gsz`` 32, the mask and the subgroups a group, ``seg / 32``, at
    run time: two compiled loops, Sat on / off), GroupN 64 / 128's subgroup maxima combined pairwise in the
    step.  ``a_.size`` a multiple of 256 and of ``seg``.  The same codes and flag word as
    :func:`_e4m3_pass_unit` then :func:`_fp8_fold_groups`; ``gk`` the groups' GroupMaxOut bits
    (:data:`_GMO_BITS`).  Zen 3, one thread, 64 rows of 4096 from L2/L3, ns an element, against the pass then
    :func:`_fp8_fold_groups`: GroupN 128 0.403 -> 0.348, 64 0.406 -> 0.341; with MaxAbs 128 0.406 -> 0.356, 64
    0.410 -> 0.351, 32 0.417 -> 0.345; the public call on a 4096 x 4096 tile, two threads, median cost of
    RowMax+GroupMax over 31 paired rounds, two runs: GroupN 128 +14/+14% -> -2/-2%, with MaxAbs +15/+14% ->
    -0/-1%, GroupN 64 +17/+18% -> -1/+1%.  The general lane (a multiplier other than 1) keeps the pass then
    :func:`_fp8_fold_groups` there: through these steps its RowMax+GroupMax cost rose by 3-5 points (GroupN 32
    too, in the run-time form: the mask's register), its kernel alone from L2 measured the same either way."""
    absm = np.uint32(0x7FFFFFFF) if masked else np.uint32(0xFFFFFFFF)
    if sat:
        acc = _e4m3_groups_loop(a_, o_, mp_, mn_, gk, 32, True, True, absm, seg // 32)
    else:
        acc = _e4m3_groups_loop(a_, o_, mp_, mn_, gk, 32, True, False, absm, seg // 32)
    return _e4m3_word(_e4m3_acc8_min(acc), _e4m3_acc8_max(acc))


@njit
def _redo_rare(a_: Any, o_: Any, sc_: Any, al_: Any, relu: int, dst: int, mode: int, sat: bool,
               spec: Any, negzero: int, neg_zero_too: bool, fold: bool, absm: Any, seg: int, gk: Any,
               gs: Any) -> int:
    """Second pass of the FP32 row loops over a row that held a rare source: every NaN/Inf
    source (and -0 with ``neg_zero_too``) again through :func:`_element` (returns the OR of
    their flags); with ``fold`` every ``seg``-element group's key maximum and sNaN bit again,
    with the NaN rules (:func:`_fp32_key`)."""
    f_or = 0
    for j in range(a_.size):
        x = np.int64(a_[j])
        if (x & FP32_INF) == FP32_INF or (neg_zero_too and x == FP32_NEG_ZERO):
            b, f = _element(x, sc_[j], al_[j], 0, SRC_FP32, relu, 0, dst, mode, sat, spec, negzero)
            o_[j] = b
            f_or |= f
    if fold:
        for g in range(gk.size):
            part = a_[g * seg:min(g * seg + seg, a_.size)]
            kmax = np.uint32(0)
            snan = np.uint32(0)
            for j in range(part.size):
                k, sn = _fp32_key(part[j], absm)
                kmax = max(kmax, k)
                snan = np.uint32(snan | sn)
            gk[g] = kmax
            gs[g] = snan
    return f_or


#: bit of a row loop's flag word marking a source the vector loop leaves to the exact scalar code
_RARE = 0x100

#: :func:`_tile_rows`' mark in a row's first sNaN-bit entry (``gs``) before its pass: never a value of
#: :func:`_redo_rare` (0 or 1), which writes all of a row's entries, so a row that keeps it has none to read
_GS_CLEAN = np.uint32(0xFFFFFFFF)

#: bit of a row's word in :func:`_tile_rows`' ``rowflags`` (uint8: above the five flags, never a flag itself) set by an FP8
#: rows loop (:func:`_fp8_rows`) when the row's pass wrote each group's finished GroupMaxOut bits (the bits of
#: the group's maximum source, not its order key) to the row's ``gk`` entries: a row without a rare source whose
#: groups all hold a number (every group full), so no NaN rule applies and ``gs`` is untouched; :func:`_tile_rows`
#: then stores those bits as they are, and with RowMax takes the row's maximum bits :func:`_fp8_rows` left in
#: ``row_out`` (no key to bits a group, no sNaN or empty-group check).  A pass that leaves keys (any other form, and every row :func:`_redo_rare` redid) does not set
#: it.  Per row, not per kernel kind: a rare row of the same tile goes the keys' way.  Set for HiF8 GroupN 8/16/32
#: (:func:`_hif8_pass_groups`) and E4M3 GroupN 8/16/32 (:func:`_e4m3_pass_groups`; the unit lane's 64/128 and
#: MaxAbs too, :func:`_e4m3_pass_groups_unit`) without AVX-512.
_GMO_BITS = 0x80


@njit(inline="always")
def _relu_bits(x: Any, relum: Any) -> Any:
    """ReLU on FP32 bits with a multiplier of one: a negative source (sign set) becomes +0 when
    ``relum`` is all ones (ReluMode RELU), else unchanged (NaNs are redone apart)."""
    return np.uint32(x & ~(np.uint32(np.int32(x) >> np.int32(31)) & relum))


@njit(inline="always")
def _mask(c: Any) -> Any:
    """A lane condition as a uint32 mask (all ones when true): a sign extension, no instruction."""
    return np.uint32(np.uint32(0) - np.uint32(c))


@njit(inline="always")
def _bf16_lane(x: Any, relum: Any, satm: Any) -> Tuple[Any, Any, Any, Any]:
    """One F322BF16 element of a source that is not NaN/Inf: (code, inexact bits, tiny mask,
    magnitude): NX when the inexact bits [15:0] are nonzero, UF|NX when also under the tiny mask
    (below 2^-126), OF|NX when the magnitude (after ReLU) is at least :data:`BF16_BIG`.  RNE on
    the FP32 bits (add 0x7FFF plus the kept lsb, drop 16 bits): a carry out of the largest binade
    is the overflow to Inf, or with Sat (``satm`` all ones) Inf's code minus one, the largest
    finite; BF16 has FP32's exponent range, so subnormals need no care."""
    xr = _relu_bits(x, relum)
    ax = np.uint32(xr & np.uint32(0x7FFFFFFF))
    lsb = np.uint32((xr >> np.uint32(16)) & np.uint32(1))
    r = np.uint32(np.uint32(np.uint32(xr + np.uint32(0x7FFF)) + lsb) >> np.uint32(16))  # 32-bit lanes
    code = np.uint32(r + (_mask(np.int32(ax) >= np.int32(BF16_BIG)) & satm))
    return code, xr, _mask(np.int32(ax) < np.int32(BF16_TINY)), ax


@njit(inline="always")
def _f16_lane(x: Any, relum: Any, satm: Any) -> Tuple[Any, Any, Any, Any]:
    """One F322F16 element of a source that is not NaN/Inf: (code, inexact mask, tiny mask,
    magnitude), as :func:`_bf16_lane` (OF|NX from :data:`F16_BIG`, 65520).  FP32 -> FP16 under
    RNE is the hardware conversion (``fptrunc``; F16C ``vcvtps2ph``, 8 lanes): correctly rounded,
    subnormal results included, Inf on overflow, the sign kept; with Sat (``satm`` all ones) Inf's
    code minus one, the largest finite (16-bit lanes).  Inexact: the result converted back differs
    from the source; tiny: below 2^-14."""
    xr = _relu_bits(x, relum)
    ax = np.uint32(xr & np.uint32(0x7FFFFFFF))
    xf = _u32_f32(xr)
    h = _f32_f16(xf)
    back = _f16_f32(h)
    infm = np.uint16(np.uint16(0) - np.uint16((h & np.uint16(0x7FFF)) == np.uint16(F16_INF)))  # the overflows
    return (np.uint16(h + (infm & np.uint16(satm))), _mask((back < xf) | (back > xf)),
            _mask(np.int32(ax) < np.int32(F16_TINY)), ax)


@njit(inline="always")
def _e4m3_lane(x: Any, mp: Any, mn: Any, ovf_pos: Any, ovf_neg: Any) -> Tuple[Any, Any, Any]:
    """One E4M3 element under RNE, 8 float32 lanes: (code, the exact product's magnitude rounded to
    odd onto float32 as bits ab, the flag key: ab if inexact, else all ones).  The pass keeps the
    least key and the largest ab | rare mark (:func:`_e4m3_word`).

    ``mp``/``mn``: the multiplier of a positive / negative source (MatrixSelectedMultiplier:
    the FP19 scale, or 0 (ReLU) or alpha (LReLU/PReLU) for a negative source), chosen by the
    source's sign bit (one blend); ``ovf_mag``: the code of an overflow without its sign (0x7F, the
    NaN, or with Sat 0x7E, 448).

    1. The product p = x m rounded to nearest on float32 and its exact remainder by a fused
       multiply-add; the remainder's sign against p's says whether the exact magnitude lies below
       |p| (then one ulp down: the truncation), and an inexact product gets its last bit set: p
       rounded *to odd* onto 24 bits.  Rounding that once more onto E4M3 (4 bits) equals one
       rounding of the exact value and keeps every comparison with 2^-10, 2^-6 and 448 (no float32
       value between those and a neighbour of theirs is odd).
    2. With q = max(binade of a = |p|, emin) and quantum u = 2^(q-127-3), a + M for
       M = 2^23 u rounds a to a multiple of u, ties to even, in one hardware addition.  M also
       carries ((q - emin) << 3), a multiple of 8 (so "even" is unchanged), in its low mantissa
       bits, so the low byte of bits(a + M) is the E4M3 code of |v| (a carry into the next binade
       is the next code): no integer rounding at all.  Inexact: a + M - M differs from a.
    3. |v| <= 2^-10 rounds to 0: code 0 (+0 also for a negative value), inexact unless the exact
       product is 0, i.e. unless x or m is 0 (a product that underflowed float32 is inexact);
       |v| > 448 overflows (``ovf_mag``); the sign is set on a nonzero code.
    4. A NaN/Inf source gives ab above the largest finite float32 (a finite product that overflowed
       float32 is rounded to odd onto the largest finite value); a -0 source (whose code may be the
       signed zero) is marked by all ones in the returned ab: those lanes' codes and flags are
       garbage and the row is redone (:func:`_row_e4m3_rne`).
    """
    ones = np.uint32(0xFFFFFFFF)
    one = np.uint32(ovf_pos >> np.uint32(6))  # 1, opaque to LLVM: min(y, 1) stays one vpminud
    m = mn if np.int32(x) < np.int32(0) else mp
    xf = _u32_f32(x)
    ax = _u32_f32(np.uint32(x & np.uint32(0x7FFFFFFF)))
    am = _u32_f32(np.uint32(_f32_bits(m) & np.uint32(0x7FFFFFFF)))
    p = ax * am
    pb = _f32_bits(p)
    err = _fma32(ax, am, -p)  # the exact |v| - |p|: +0 when the product is exact (never -0)
    eb = _f32_bits(err)
    # |v| lies below |p| (a float compare: the NaN remainder of an Inf source does not count, so that
    # source's |p| stays above the largest finite float32)
    down = ones if err < np.float32(0.0) else np.uint32(0)
    ab = np.uint32(np.uint32(pb + down) | min(eb, one))  # |v| rounded to odd onto float32
    a = _u32_f32(ab)
    # the binade from |p| (rounding to odd moves |p| below a power of two at most: the same rounding)
    e = np.uint32(max(np.uint32(pb & np.uint32(FP32_INF)), np.uint32(E4M3_EMIN_BITS)))
    mb = np.uint32(np.uint32(e + np.uint32(e >> np.uint32(E4M3_MAGIC))) + np.uint32(E4M3_M_OFF))
    mf = _u32_f32(mb)
    t = a + mf
    # the sign on a nonzero code: v below -2^-10 (the sign of v + 2^-10, one rounding: a blend selector)
    neg = np.int32(_f32_bits(_fma32(xf, m, np.float32(E4M3_ZERO_F)))) < np.int32(0)
    code = np.uint32(_f32_bits(t) | np.uint32(E4M3_SIGN)) if neg else _f32_bits(t)  # low byte: the code
    if np.int32(ab) > np.int32(E4M3_MAX_BITS):
        code = ovf_neg if neg else ovf_pos
    # a product that underflowed float32 (x, m nonzero, |v| <= 2^-150) counts as 2^-149: inexact, tiny
    ak = max(ab, min(_f32_bits(ax), _f32_bits(am), one))
    key = np.uint32(ak | (ones if _f32_bits(t - mf) == ak else np.uint32(0)))
    mark = ones if x == np.uint32(FP32_NEG_ZERO) else ab
    return code, mark, key


@njit(inline="always")
def _e4m3_unit_lane(x: Any, ovf_pos: Any, ovf_neg: Any) -> Tuple[Any, Any, Any]:
    """:func:`_e4m3_lane` when both multipliers are 1 (QF322FP8_PRE with scale 1, ReluMode NONE):
    the same (code, mark, key) for every source.  The product is the source itself, exact: ab =
    |x|, no fused multiply-add; |x| rounded to E4M3 by the same hardware addition of M; the sign
    on a nonzero code when x < -2^-10, which for FP32 bits is one unsigned compare (a negative's bits
    grow with its magnitude)."""
    ones = np.uint32(0xFFFFFFFF)
    ax = np.uint32(x & np.uint32(0x7FFFFFFF))
    a = _u32_f32(ax)
    e = np.uint32(max(np.uint32(ax & np.uint32(FP32_INF)), np.uint32(E4M3_EMIN_BITS)))
    mb = np.uint32(np.uint32(e + np.uint32(e >> np.uint32(E4M3_MAGIC))) + np.uint32(E4M3_M_OFF))
    mf = _u32_f32(mb)
    t = a + mf
    neg = x > np.uint32(E4M3_NEG_ZERO_BITS)  # x < -2^-10 (a NaN's lane is redone)
    code = np.uint32(_f32_bits(t) | np.uint32(E4M3_SIGN)) if neg else _f32_bits(t)  # low byte: the code
    if np.int32(ax) > np.int32(E4M3_MAX_BITS):
        code = ovf_neg if neg else ovf_pos
    key = np.uint32(ax | (ones if _f32_bits(t - mf) == ax else np.uint32(0)))
    mark = ones if x == np.uint32(FP32_NEG_ZERO) else ax
    return code, mark, key


@njit
def _e4m3_word(kmin: Any, kmax: Any) -> Any:
    """The flag word of :func:`_e4m3_lane`'s least key and largest marked magnitude over a row (NX,
    UF|NX, OF|NX, the rare bit).  Not inlined: with these four tests inlined after the loop LLVM no
    longer vectorizes the pass (measured)."""
    return np.uint32((np.uint32(_NX) if kmin != np.uint32(0xFFFFFFFF) else np.uint32(0))
                     | (np.uint32(_UF_NX) if kmin < np.uint32(E4M3_TINY_BITS) else np.uint32(0))
                     | (np.uint32(_OF_NX) if kmax > np.uint32(E4M3_MAX_BITS) else np.uint32(0))
                     | (np.uint32(_RARE) if kmax > np.uint32(FP32_FINITE_MAX) else np.uint32(0)))


@njit(inline="always")
def _hif8_product(x: Any, mp: Any, mn: Any) -> Tuple[Any, Any, Any, Any]:
    """The exact product source x multiplier (MatrixSelectedMultiplier) for HiF8: (ab, its
    magnitude rounded to float32 *to odd*, as bits; pb, the float32 product's bits; ap = |pb|;
    apt = ap + tie, where tie is -1 when a tie of |p| must round down (see below), else 0).
    ``mp``/``mn``: the multiplier of a positive / negative source
    (the scale, or for a negative source 0 (ReLU) or alpha (LReLU/PReLU); :func:`run_tile` lays
    them out), chosen by the sign bit.

    A float32 product p and its exact remainder twice by fused multiply-adds: err = x m - p and
    -(x m) + p.  The two are each other's negatives, so their signs differ exactly when the
    remainder is not zero -- also when it underflows to a signed zero (a product below 2^-149
    rounds to 0 with err -0 or -err -0); an exact remainder is +0 in both.  So the product is
    inexact when the sign bits of the two differ; its exact magnitude is below |p| when err and p
    have opposite signs (``tie`` for an inexact product; for an exact one the sign of p, which is
    RHB's direction for a negative tie).  The truncation is |p| or the float one ulp below; an
    inexact product sets the last bit: ab = apt | 1 for an inexact product (one blend), else |p|,
    so that an inexact product's ab is odd.  Rounding to odd onto 24 bits and then once more to at most
    4 significant bits (HiF8) equals rounding the exact value once, and keeps every threshold
    (powers of two, their midpoints, 2^15).  A NaN/Inf source gives a magnitude above the largest
    finite float32 (its remainders are the same default NaN: no adjustment); a finite product that
    overflows (remainders -+Inf) is rounded to odd onto the largest finite."""
    m = mn if np.int32(x) < np.int32(0) else mp  # one blend on the sign bit
    xf = _u32_f32(x)
    p = xf * m
    err = _fma32(xf, m, -p)
    nerr = _fma32(-xf, m, p)
    pb = _f32_bits(p)
    ap = np.uint32(pb & np.uint32(0x7FFFFFFF))
    tie = np.uint32(_sar32(_xor32(np.int32(_f32_bits(err)), np.int32(pb)), np.int32(31)))
    apt = np.uint32(ap + tie)
    inexact = np.int32(_xor32(np.int32(_f32_bits(err)), np.int32(_f32_bits(nerr)))) < np.int32(0)
    ab = np.uint32(apt | np.uint32(1)) if inexact else ap
    return ab, pb, ap, apt


#: The HiF8 key table (:func:`hif8_key_table`): one entry for each of the 2^16 keys (:func:`_hif8_key`),
#: read one uint16 at a time (:func:`_hif8_look32`).  An entry is the HiF8 code (low byte) | the flags << HIF8_KEY_FLAGS, or HIF8_KEY_RARE for a key of a
#: NaN/Inf magnitude (exponent field all ones: a NaN/Inf source, whose lane the row redoes).
HIF8_KEYS = 1 << 16
HIF8_KEY_FLAGS = 8
HIF8_KEY_RARE = 0x8000
HIF8_KEY_INF = FP32_INF >> 16  #: a key magnitude at or above this is a NaN/Inf's
assert (_ALL_FLAGS << HIF8_KEY_FLAGS) < HIF8_KEY_RARE
HIF8_KEY_MAX = _f32_bits_of(_HIF8.largest_value) >> 16  #: the key of HiF8's largest value (exact)
#: How many elements ahead of the loop the row loops that stream the source from DRAM prefetch it
#: (:func:`_hif8_pass`, :func:`_e4m3_pass`, the S32 GroupMax loop of :func:`_s32_rne_groups`; the S32 RNE rows
#: of :func:`_s32_rows_seg` prefetch :data:`_S32_SEG_AHEAD` segments ahead): 16 KiB; past the row's end that is the tile's next row, and a prefetch never
#: faults.  The hardware prefetchers alone leave the DRAM stream's latency exposed (Zen 5, one thread,
#: 4096 x 4096: HiF8 0.43 ns/elem without, 0.28 with, as from L3; 8 and 32 KiB measured about the same).
PF_AHEAD = 4096
HIF8_KEY_OVF = HIF8_KEY_MAX + 1  #: a key above the largest value (its entry: the overflow code and flags)
#: :func:`_e4m3_pass` prefetches the source :data:`PF_AHEAD` elements ahead,
#: the lines of each :data:`E4M3_CHUNK`-element chunk before its vector loop (Zen 5, one thread, 4096 x
#: 4096 from DRAM: 0.39 -> 0.23 ns/elem).  A chunk of 256: the loop's min/max reductions once per chunk
#: (32 elements: +45% on an L3 tile) and 16 prefetches at a time (512: 32, too many in flight, no gain).
E4M3_CHUNK = 256


def _hif8_v32_tables() -> Tuple[Tuple[int, ...], ...]:
    """The four 64-entry uint16 tables of :func:`_hif8_v32` (from ``ptonum.tables``' HiF8 binades),
    indexed by the clamped key exponent ``i = clamp(E - HIF8_V32_EB, 0, 39)`` (E the key's biased
    float32 exponent; binade ``e = i - 24``; i = 0 stands for every e <= -24): (half | sh << 8: the
    rounding increment and the mantissa shift of the binade; mask: the key bits below HiF8's
    quantum, all of them for e <= -23, which round to 0 or 2^-22 as a whole; the code of 2^e, 0 for
    e <= -23; the flags of an inexact key << HIF8_KEY_FLAGS: UF|NX below 2^HIF8_EMIN, else NX)."""
    hs, mask, base, fl = [0] * 64, [0] * 64, [0] * 64, [0] * 64
    for i in range(HIF8_V32_NI):
        e = i - 24
        if e <= HIF8_E_LO - 1:
            sh, half = 15, (1 if e < HIF8_E_LO - 1 else 128)
        else:
            sh = 7 - int(HIF8_MBITS[e - HIF8_T_EMIN])
            half = 1 << (sh - 1)
            base[i] = int(HIF8_BASE[e - HIF8_T_EMIN]) & HIF8_MASK
        hs[i], mask[i] = half | sh << 8, (1 << sh) - 1
        fl[i] = (_UF_NX if e + 1023 < HIF8_EMIN_B else _NX) << HIF8_KEY_FLAGS
    return tuple(hs), tuple(mask), tuple(base), tuple(fl)


HIF8_V32_EB, HIF8_V32_NI = 127 + HIF8_E_LO - 2, 40  #: the biased exponent of table index 0; indices used
assert HIF8_E_LO - 2 == -24 and HIF8_KEY_MAX >> 7 == HIF8_V32_EB + HIF8_V32_NI - 1


@njit(inline="always")
def _hif8_key(x: Any, mp: Any, mn: Any) -> Any:
    """The HiF8 table key of source x times its multiplier (:func:`_hif8_product`): the exact
    product rounded to odd onto 16 bits, as bits (the sign, the float32 exponent and the top 7
    fraction bits; a bfloat16-shaped value): u = sign << 15 | ab >> 16 | [ab & 0xFFFF != 0].

    ab, the product rounded to odd onto float32, rounded to odd once more: the key's value is the
    exact product rounded to odd onto 8 significant bits.  HiF8 keeps at most 4, so rounding the
    key to HiF8 (any round-to-nearest, RHB's ties included) equals rounding the exact product once
    (Boldo-Melquiond: rounding to odd onto p + 2 or more bits is innocuous), and the key keeps
    the side of every threshold with few significant bits (2^-15 for UF, 2^15 for OF: the exact
    product is below / above such a T exactly when the key is below / above T's key, which is
    exact); NX when the exact product is not a HiF8 value, which the key is not either (an
    inexact key has bit 0 set, below any HiF8 quantum).  So the code and flags are a function of
    the key: :func:`hif8_key_table`.  A NaN/Inf source gives a key of exponent 255; a finite
    product above float32's range the key of the largest finite float32 rounded to odd."""
    ab, pb, ap, apt = _hif8_product(x, mp, mn)
    sticky = np.uint32(np.uint32(ab & np.uint32(0xFFFF)) + np.uint32(0xFFFF))  # bit 16: [ab & 0xFFFF != 0]
    return np.uint32(_shr32(np.uint32(ab | sticky | np.uint32(pb ^ ap)), np.uint32(16)))


@njit
def _hif8_fill_keys(t: Any, sat: bool) -> None:
    """Fill ``t`` (uint16[HIF8_KEYS]) with the HiF8 key table: entry u is the exact HiF8 encoding
    under RHB (:func:`_encode_hif8`, ``sat``: the overflow code) of the float32 value of bits u << 16."""
    for u in range(1 << 16):
        if (u & 0x7FFF) >= HIF8_KEY_INF:
            t[u] = HIF8_KEY_RARE
        else:
            code, f = _encode_hif8(np.float64(_u32_f32(np.uint32(u << 16))), R_RHB, sat)
            t[u] = code | (f << HIF8_KEY_FLAGS)


@njit
def _hif8_word(w: Any) -> Any:
    """The flag word (NX, UF|NX, OF|NX, the rare bit) of the OR ``w`` of a row's key-table entries
    (:func:`hif8_key_table`; bits above the entry's 16 are not read)."""
    return np.uint32((np.uint32(w >> np.uint32(HIF8_KEY_FLAGS)) & np.uint32(_ALL_FLAGS))
                     | (np.uint32(_RARE) if (w & np.uint32(HIF8_KEY_RARE)) != np.uint32(0) else np.uint32(0)))


# The float32-lane row loops share one template: :func:`_fp32_row` (flags, rare sources redone) over
# :func:`_fp32_span` (the vector loop).  Both are inlined (``inline="always"``) with ``lane`` (one of
# the LANE_* codes) as a constant, so numba's dead-branch pruning keeps one lane before type
# inference: each destination
# compiles only its own loop, and no function is passed as an argument (which numba 0.68.1's cache
# would never serve).  The lane codes are the ``fast`` codes of :func:`run_tile`.
LANE_BF16, LANE_E4M3, LANE_HIF8, LANE_FP16 = 1, 4, 5, 6


@njit(inline="always")
def _fp32_span(lane: int, a: Any, o: Any, p: Any) -> Any:
    """The vector loop of a float32-lane row (arrays indexed from 0: no negative-index
    wraparound): its flag word (NX, UF|NX, OF|NX and :data:`_RARE` for a NaN/Inf source, whose
    lanes' flags and codes are garbage: :func:`_fp32_row` redoes them).  Each flag is a
    row-wide OR of the lanes' masks (one lane operation each), decided once after the loop.
    ``lane`` must be a constant at the call (see above).  ``p``: the lane's own parameters."""
    nx = np.uint32(0)
    uf = np.uint32(0)
    amax = np.uint32(0)  # of the magnitudes after ReLU: the overflow
    smax = np.uint32(0)  # of the sources' magnitudes: a NaN/Inf source
    for j in range(a.size):
        x = a[j]
        # a lane added here must be called with its own arity (numba binds the arguments of every
        # branch when it inlines, before pruning); E4M3 and HiF8 keep their own passes for now
        if lane == LANE_BF16:
            code, nxb, tinym, ax = _bf16_lane(x, p[0], p[1])
        else:
            code, nxb, tinym, ax = _f16_lane(x, p[0], p[1])
        o[j] = code  # the carrier's low 16 bits
        nx = np.uint32(nx | nxb)
        uf = np.uint32(uf | (nxb & tinym))
        amax = max(amax, ax)
        smax = max(smax, np.uint32(x & np.uint32(0x7FFFFFFF)))
    kept = np.uint32(0xFFFF) if lane == LANE_BF16 else np.uint32(0xFFFFFFFF)  # BF16: bits [15:0] are dropped
    big = np.uint32(BF16_BIG) if lane == LANE_BF16 else np.uint32(F16_BIG)
    return np.uint32((np.uint32(_NX) if (nx & kept) != np.uint32(0) else np.uint32(0))
                     | (np.uint32(_UF_NX) if (uf & kept) != np.uint32(0) else np.uint32(0))
                     | (np.uint32(_OF_NX) if amax >= big else np.uint32(0))
                     | (np.uint32(_RARE) if smax >= np.uint32(FP32_INF) else np.uint32(0)))


@njit
def _bf16_pass(a_: Any, o_: Any, p: Any) -> Any:
    """:func:`_fp32_span` for BF16 (a function of its own: its parameters stay opaque to LLVM)."""
    return _fp32_span(LANE_BF16, a_, o_, p)


@njit
def _f16_pass(a_: Any, o_: Any, p: Any) -> Any:
    """:func:`_fp32_span` for FP16."""
    return _fp32_span(LANE_FP16, a_, o_, p)


@njit(inline="always")
def _fp32_row(lane: int, a_: Any, o_: Any, sc_: Any, al_: Any, sc32_: Any, al32_: Any, relu: int, sat: bool,
              spec: Any, fold: bool, absm: Any, seg: int, gk: Any, gs: Any, p: Any, dst: int, mode: int,
              negzero: int, neg_zero_too: bool) -> int:
    """One float32-lane row (``lane`` a constant): its pass, then the flags; the rare sources
    (NaN/Inf; with ``neg_zero_too`` also -0) and, with ``fold``, the groups' fold keys redone
    exactly by :func:`_redo_rare` (``dst``, ``mode``, ``negzero``: :func:`_element`'s); without
    a rare source the fold keys by :func:`_fp32_fold_groups`."""
    if lane == LANE_BF16:
        acc = _bf16_pass(a_, o_, p)
    else:
        acc = _f16_pass(a_, o_, p)
    res = np.int64(acc) & _ALL_FLAGS
    if (acc & np.uint32(_RARE)) != np.uint32(0):
        # the flags of the lanes with a finite source: the pass again over each run between NaN/Inf
        # sources (a rare path, as :func:`_fp8_finite_flags`)
        res = 0
        start = 0
        for j in range(a_.size + 1):
            if j == a_.size or (np.int64(a_[j]) & FP32_INF) == FP32_INF:
                if j > start:
                    if lane == LANE_BF16:
                        w = _bf16_pass(a_[start:j], o_[start:j], p)
                    else:
                        w = _f16_pass(a_[start:j], o_[start:j], p)
                    res |= np.int64(w) & _ALL_FLAGS
                start = j + 1
        res |= _redo_rare(a_, o_, sc_, al_, relu, dst, mode, sat, spec, negzero, neg_zero_too, fold, absm, seg,
                          gk, gs)
    elif fold:
        _fp32_fold_groups(a_, absm, seg, gk)
    return res


@njit
def _row_bf16(a_: Any, o_: Any, sc_: Any, al_: Any, sc32_: Any, al32_: Any, relu: int, sat: bool, spec: Any,
              fold: bool, absm: Any, seg: int, gk: Any, gs: Any) -> int:
    """FP32 -> BF16, RNE, scale 1, ReluMode NONE/RELU (mode F322BF16): the rules of _element.

    RNE on the FP32 bits (:func:`_bf16_lane`), NX when bits [15:0] are nonzero, UF|NX when the
    source is also below 2^-126; a carry into the Inf exponent is the overflow (Inf, or with Sat
    the largest finite, OF|NX); a -0 source keeps its sign (0x8000, the signed-zero rule); ReLU
    sends a negative source to +0 with no flag.  NaN/Inf sources are redone by :func:`_element`.
    """
    p = (np.uint32(0xFFFFFFFF) if relu == 1 else np.uint32(0), np.uint32(0xFFFFFFFF) if sat else np.uint32(0))
    return _fp32_row(LANE_BF16, a_, o_, sc_, al_, sc32_, al32_, relu, sat, spec, fold, absm, seg, gk, gs, p,
                     D_BF16, R_RNE, BF16_NEG_ZERO, False)


@njit
def _row_f16(a_: Any, o_: Any, sc_: Any, al_: Any, sc32_: Any, al32_: Any, relu: int, sat: bool, spec: Any,
             fold: bool, absm: Any, seg: int, gk: Any, gs: Any) -> int:
    """FP32 -> FP16, RNE, scale 1, ReluMode NONE/RELU (mode F322F16): the rules of _element.

    With a multiplier of one the product is the FP32 source itself, converted by the hardware
    (:func:`_f16_lane`): a tiny negative that rounds to zero is -0 (the encoder keeps the
    sign), a -0 source gives 0x8000 (the signed-zero rule), |x| >= 65520 overflows (Inf, or
    with Sat the largest finite, OF|NX).  ReLU sends a negative source to +0 with no flag.
    NaN/Inf sources are redone by :func:`_element`.
    """
    p = (np.uint32(0xFFFFFFFF) if relu == 1 else np.uint32(0), np.uint32(0xFFFFFFFF) if sat else np.uint32(0))
    return _fp32_row(LANE_FP16, a_, o_, sc_, al_, sc32_, al32_, relu, sat, spec, fold, absm, seg, gk, gs, p,
                     D_FP16, R_RNE, FP16_NEG_ZERO, False)


def _mult_at(m: Any, j: int, same: Any = None) -> Any:
    """Multiplier ``j`` of a pass's ``mp_``/``mn_``: ``m[j]`` of a row (float32 array), or ``m`` itself
    when the row is one float32 for every column (:func:`_const_mults`: the vector steps splat it
    once instead of loading a row); ``m`` None: ``same``'s (an ``mn_`` of None is ``mp_``: the vector
    steps then skip the blend by the source's sign).  A numba overload picks the form by type (no
    runtime test)."""
    if m is None:
        m = same
    return m[j] if isinstance(m, np.ndarray) else m


@njit
def _e4m3_pass(a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any) -> Any:
    """The vector loop of the E4M3 row: the flag word (:func:`_e4m3_word`).  :data:`E4M3_CHUNK` elements
    at a time after a software prefetch of their source :data:`PF_AHEAD` elements ahead (past the
    row's end: the tile's next row; a prefetch never faults), the last ``size % E4M3_CHUNK`` alone.
    Where the CPU has AVX-512 (:data:`E4M3_V32`) the chunks go 32 elements per step through
    :func:`_e4m3_v32` (the product rounded to odd by embedded rounding: Zen 5, one thread, scale
    1.625, 0.208 -> 0.170 ns/elem on an L3-resident tile); else with AVX2 and FMA (:data:`E4M3_V8`) the
    row's first ``size - size % 32`` elements through :func:`_e4m3_v8_row` (one loop in LLVM IR), else
    through :func:`_e4m3_lane` as LLVM vectorizes it; the same codes and flag word."""
    n = a_.size
    j0 = n - n % E4M3_CHUNK
    kmin = np.uint32(0xFFFFFFFF)
    kmax = np.uint32(0)
    if E4M3_V32:
        acc = _e4m3_acc0()
        for c in range(0, j0, E4M3_CHUNK):
            for q in range(0, E4M3_CHUNK, 16):
                _prefetch(a_, c + q + PF_AHEAD)
            for j in range(c, c + E4M3_CHUNK, 32):
                acc = _e4m3_v32(a_, mp_, mn_, j, o_, acc, ovf_pos, ovf_neg)
        kmin = _e4m3_acc_min(acc)
        kmax = _e4m3_acc_max(acc)
    elif E4M3_V8:
        j0 = n - n % 32
        km = _e4m3_v8_row(a_, mp_, mn_, o_, j0, ovf_pos, ovf_neg)
        kmin = np.uint32(km & np.uint64(0xFFFFFFFF))
        kmax = np.uint32(km >> np.uint64(32))
    else:
        for c in range(0, j0, E4M3_CHUNK):
            for q in range(0, E4M3_CHUNK, 16):
                _prefetch(a_, c + q + PF_AHEAD)  # the source lines PF_AHEAD elements ahead
            for j in range(c, c + E4M3_CHUNK):
                code, ab, key = _e4m3_lane(a_[j], _mult_at(mp_, j), _mult_at(mn_, j, mp_), ovf_pos, ovf_neg)
                o_[j] = np.uint8(code)
                kmin = min(kmin, key)
                kmax = max(kmax, ab)
    for j in range(j0, n):
        code, ab, key = _e4m3_lane(a_[j], _mult_at(mp_, j), _mult_at(mn_, j, mp_), ovf_pos, ovf_neg)
        o_[j] = np.uint8(code)
        kmin = min(kmin, key)
        kmax = max(kmax, ab)
    return _e4m3_word(kmin, kmax)


@njit
def _e4m3_pass_unit(a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any) -> Any:
    """:func:`_e4m3_pass` for a row whose multipliers are all 1 (:func:`_unit_mults`): the chunks
    (``mp_``/``mn_`` not read) 32 elements per step through :func:`_e4m3_v32u` where the CPU has
    AVX-512 (:data:`E4M3_V32`; Zen 5, one thread, 4096 x 4096 tile, the pass 0.122 -> 0.114 ns/elem
    as measured by h-fuse), else by :func:`_e4m3_unit_lane` as LLVM vectorizes it; the last
    ``size % E4M3_CHUNK`` by the general lane; the same codes and flag word."""
    n = a_.size
    j0 = n - n % E4M3_CHUNK
    kmin = np.uint32(0xFFFFFFFF)
    kmax = np.uint32(0)
    if E4M3_V32:
        acc = _e4m3_acc0()
        for c in range(0, j0, E4M3_CHUNK):
            for q in range(0, E4M3_CHUNK, 16):
                _prefetch(a_, c + q + PF_AHEAD)
            for j in range(c, c + E4M3_CHUNK, 32):
                acc = _e4m3_v32u(a_, mp_, mn_, j, o_, acc, ovf_pos, ovf_neg)
        kmin = _e4m3_acc_min(acc)
        kmax = _e4m3_acc_max(acc)
    else:
        for c in range(0, j0, E4M3_CHUNK):
            for q in range(0, E4M3_CHUNK, 16):
                _prefetch(a_, c + q + PF_AHEAD)
            for j in range(c, c + E4M3_CHUNK):
                code, ab, key = _e4m3_unit_lane(a_[j], ovf_pos, ovf_neg)
                o_[j] = np.uint8(code)
                kmin = min(kmin, key)
                kmax = max(kmax, ab)
    for j in range(j0, n):
        code, ab, key = _e4m3_lane(a_[j], _mult_at(mp_, j), _mult_at(mn_, j, mp_), ovf_pos, ovf_neg)
        o_[j] = np.uint8(code)
        kmin = min(kmin, key)
        kmax = max(kmax, ab)
    return _e4m3_word(kmin, kmax)


@njit
def _row_e4m3_rne(a_: Any, o_: Any, sc_: Any, al_: Any, sc32_: Any, al32_: Any, relu: int, sat: bool, spec: Any,
                  fold: bool, absm: Any, seg: int, gk: Any, gs: Any) -> int:
    """FP32 -> E4M3 under RNE (modes 26/37): :func:`_e4m3_lane` on float32 lanes, ``sc32_``/``al32_``
    the multipliers of a positive / negative source (:func:`run_tile`).  A row with a NaN/Inf or
    -0 source: the flags of the other lanes again (:func:`_fp8_finite_flags`), then those
    sources (and the fold's NaN rules) by :func:`_redo_rare`."""
    ovf_pos = np.uint32(E4M3_SAT_POS) if sat else np.uint32(E4M3_OVF_POS)
    ovf_neg = np.uint32(E4M3_SAT_NEG) if sat else np.uint32(E4M3_OVF_NEG)
    acc = _e4m3_pass(a_, o_, sc32_, al32_, ovf_pos, ovf_neg)
    res = np.int64(acc) & _ALL_FLAGS
    if (acc & np.uint32(_RARE)) != np.uint32(0):
        res = _fp8_finite_flags(False, a_, o_, sc32_, al32_, ovf_pos, ovf_neg, _UNUSED_U16)
        res |= _redo_rare(a_, o_, sc_, al_, relu, D_E4M3, R_RNE, sat, spec, E4M3_SIGN, True, fold, absm, seg,
                          gk, gs)
    elif fold:
        _fp32_fold_groups(a_, absm, seg, gk)
    return res


@njit
def _hif8_pass(a_: Any, o_: Any, mp_: Any, mn_: Any, keys: Any, unit: bool = False) -> Any:
    """The vector loop of the HIF8 row: each element's key (:func:`_hif8_key`) looked up in
    ``keys`` (:func:`hif8_key_table`), the code stored, the entries ORed into the flag word
    (:func:`_hif8_word`).  32 elements at a time by :func:`_hif8_v32` (no lookup in memory)
    where the CPU has AVX-512 BW (:data:`HIF8_V32`), else by :func:`_hif8_look32` (the keys in
    vectors, one scalar load of the entry an element; :func:`_hif8_look32u` for ``unit``), the
    source prefetched :data:`PF_AHEAD` elements ahead either way; then eight at a time by
    :func:`_hif8_look8`, the last ``size % 8`` (and every element without numba) one by one: the
    same entries.  ``unit``: every multiplier is 1 (:func:`_unit_mults`): the 32-element steps by
    :func:`_hif8_v32u` / :func:`_hif8_look32u`, whose keys are the sources' own bits rounded to odd
    (no product; ``mp_``/``mn_`` not read there)."""
    n = a_.size
    j0 = 0
    w = np.uint32(0)
    if NUMBA_AVAILABLE:
        j32 = n - n % 32
        # 32 elements (two source lines) an iteration, the source prefetched PF_AHEAD elements ahead (the
        # hardware prefetchers alone leave the DRAM stream's latency exposed)
        if HIF8_V32:
            acc = _v8_splat(0)
            ovf = np.uint32(keys[HIF8_KEY_OVF])
            if unit:  # every multiplier 1: the keys from the sources' bits (the multipliers not read)
                for j in range(0, j32, 32):
                    _prefetch(a_, j + PF_AHEAD)
                    _prefetch(a_, j + PF_AHEAD + 16)
                    acc = _v8_or(acc, _hif8_v32u(a_, mp_, mn_, j, o_, ovf))
            else:
                for j in range(0, j32, 32):
                    _prefetch(a_, j + PF_AHEAD)
                    _prefetch(a_, j + PF_AHEAD + 16)
                    acc = _v8_or(acc, _hif8_v32(a_, mp_, mn_, j, o_, ovf))
            w = np.uint32(_v8_hor(acc))
        elif unit:
            for j in range(0, j32, 32):
                _prefetch(a_, j + PF_AHEAD)
                _prefetch(a_, j + PF_AHEAD + 16)
                w = np.uint32(w | _hif8_look32u(a_, mp_, mn_, j, o_, keys))
        else:
            for j in range(0, j32, 32):
                _prefetch(a_, j + PF_AHEAD)
                _prefetch(a_, j + PF_AHEAD + 16)
                w = np.uint32(w | _hif8_look32(a_, mp_, mn_, j, o_, keys))
        j0 = n - n % 8
        for j in range(j32, j0, 8):
            w = np.uint32(w | _hif8_look8(a_, mp_, mn_, j, o_, keys))
    for j in range(j0, n):
        t = np.uint32(keys[_hif8_key(a_[j], _mult_at(mp_, j), _mult_at(mn_, j, mp_))])
        o_[j] = np.uint8(t)
        w = np.uint32(w | t)
    return _hif8_word(w)


@njit(inline="always")
def _hif8_lookg(a_: Any, mp_: Any, mn_: Any, j: int, o_: Any, keys: Any, gk: Any, g: int, seg: int,
                unit: bool, rh: Any, rl: Any) -> Tuple[Any, Any, Any]:
    """One step of :func:`_hif8_groups_loop`: ``_hif8_look8g`` / ``_hif8_look16g`` / ``_hif8_look32g`` (``unit``:
    ``_hif8_look8gu`` / ``_hif8_look16gu`` / ``_hif8_look32gu``) by GroupN ``seg``; ``seg`` and ``unit`` literals at the call (the
    intrinsic chosen at compile time); ``rh``/``rl`` the row's running group maxima, returned updated with the word."""
    if seg == 8:
        if unit:
            return _hif8_look8gu(a_, mp_, mn_, j, o_, keys, gk, g, rh, rl)
        return _hif8_look8g(a_, mp_, mn_, j, o_, keys, gk, g, rh, rl)
    if seg == 16:
        if unit:
            return _hif8_look16gu(a_, mp_, mn_, j, o_, keys, gk, g, rh, rl)
        return _hif8_look16g(a_, mp_, mn_, j, o_, keys, gk, g, rh, rl)
    if unit:
        return _hif8_look32gu(a_, mp_, mn_, j, o_, keys, gk, g, rh, rl)
    return _hif8_look32g(a_, mp_, mn_, j, o_, keys, gk, g, rh, rl)


@njit
def _hif8_groups_loop(a_: Any, o_: Any, mp_: Any, mn_: Any, keys: Any, gk: Any, seg: int,
                      unit: bool) -> Tuple[Any, Any]:
    """The loop of :func:`_hif8_pass_groups`, ``seg`` and ``unit`` literals at the call (one compiled form each:
    the step ``8 seg``, its prefetches and the intrinsic of :func:`_hif8_lookg` constants).  Returns the flag
    word and the row's maximum as bits (its RowMax before RowInit: the groups' largest int32 when one is >= 0,
    else the smallest; every source is then negative), from the steps' running maxima in registers."""
    nb = a_.size // (8 * seg)
    w = np.uint32(0)
    rh = _v8_splat(-2147483648)
    rl = _v8_splat(2147483647)
    for k in range(nb):  # (one induction variable: fewer registers live through the lookups than j and k)
        j = k * (8 * seg)
        for q in range(0, 8 * seg, 16):
            _prefetch(a_, j + q + PF_AHEAD)
        wk, rh, rl = _hif8_lookg(a_, mp_, mn_, j, o_, keys, gk, k * 8, seg, unit, rh, rl)
        w = np.uint32(w | wk)
    hi = np.int32(_v8_hmax(rh))
    if hi < np.int32(0):  # every group's maximum negative
        hi = np.int32(_v8_hmin(rl))
    return _hif8_word(w), np.uint32(hi)


@njit(inline="always")
def _hif8_pass_groups(a_: Any, o_: Any, mp_: Any, mn_: Any, keys: Any, gk: Any, seg: int,
                      unit: bool) -> Tuple[Any, Any]:
    """:func:`_hif8_pass` and :func:`_fp8_fold_groups` (GroupN ``seg`` 8, 16 or 32; no MaxAbs) in one
    loop, on the AVX2 lookup form (no AVX-512 BW): eight groups an iteration by ``_hif8_look8g`` /
    ``_hif8_look16g`` / ``_hif8_look32g`` (``unit``: ``_hif8_look8gu`` / ``_hif8_look16gu`` / ``_hif8_look32gu``),
    their maxima from
    the sources just converted (in L1) instead of a second pass over the row; the groups whose maximum is
    negative (every source negative) fixed inside the step, on a cold branch.  ``a_.size`` a multiple of
    ``8 seg``.  The same
    codes, flag word and keys as the two passes.  One loop (:func:`_hif8_groups_loop`) for every variant,
    ``seg`` and ``unit`` passed to it as literals.  GroupN 32 in the general lane too since its keys come from the
    float32 product alone (:func:`_hif8_keys8_ir`; before, its remainders and the maxima of 32 vectors spilled):
    Zen 3, one thread, 64 rows of 4096, scale 1.625, against the pass alone, +11% (the pass then
    :func:`_fp8_fold_groups`) -> +4%.
    ``gk`` gets the groups' maxima as bits (their GroupMaxOut bits, :data:`_GMO_BITS`), not order keys.  Returns the
    flag word and the row's maximum bits (:func:`_hif8_groups_loop`)."""
    if seg == 8:
        if unit:
            return _hif8_groups_loop(a_, o_, mp_, mn_, keys, gk, 8, True)
        return _hif8_groups_loop(a_, o_, mp_, mn_, keys, gk, 8, False)
    if seg == 16:
        if unit:
            return _hif8_groups_loop(a_, o_, mp_, mn_, keys, gk, 16, True)
        return _hif8_groups_loop(a_, o_, mp_, mn_, keys, gk, 16, False)
    assert seg == 32
    if unit:
        return _hif8_groups_loop(a_, o_, mp_, mn_, keys, gk, 32, True)
    return _hif8_groups_loop(a_, o_, mp_, mn_, keys, gk, 32, False)


@njit(inline="always")
def _v16_red32(a: Any, j: int, am: Any, gsz: int) -> Any:
    """The step's GroupN-``gsz`` reduction (``_v16_red32_make``); ``gsz`` a constant at the call."""
    if gsz == 8:
        return _v16_red32_8(a, j, am)
    if gsz == 16:
        return _v16_red32_16(a, j, am)
    return _v16_red32_32(a, j, am)


@njit(inline="always")
def _v16_pair(x: Any, y: Any, gsz: int) -> Any:
    """Two steps' GroupN-``gsz`` vectors to the stored one (``_v16_pair_make``); ``gsz`` a constant."""
    if gsz == 8:
        return _v16_pair_8(x, y)
    if gsz == 16:
        return _v16_pair_16(x, y)
    return _v16_pair_32(x, y)


@njit(inline="always")
def _hif8_hor16(hacc: Any) -> Any:
    """The OR of the HiF8 entries ORed into ``hacc`` (16 int32 lanes of two 16-bit entries each, from
    ``_hif8_v32f`` / ``_hif8_v32uf``) in the low 16 bits of a uint32, for :func:`_hif8_word`."""
    w = np.uint32(_v16_hor(hacc))
    return np.uint32(w | (w >> np.uint32(16)))


@njit(inline="always")
def _fp8_max(m: Any, a_: Any, j: int, am: Any, gsz: int) -> Any:
    """The maxima of one 32-element step ``a_[j .. j + 31]`` of a 64-element iteration of
    :func:`_fp8_pass_loops` (``gsz`` a constant at the call): GroupN 8/16/32 the step's own reduction
    (:func:`_v16_red32`; the two steps' vectors paired by :func:`_fp8_max_end`), else the running group
    maxima ``m`` (for the second step: the first step's result) with the step's elements
    (:func:`_v16_max32`)."""
    if gsz == 0:
        return _v16_max32(m, a_, j, am)
    return _v16_red32(a_, j, am, gsz)


@njit(inline="always")
def _fp8_max_end(m: Any, wa: Any, wb: Any, gm: Any, gi: int, t: int, sp2: int, gsz: int) -> Tuple[Any, int, int]:
    """The end of a 64-element iteration of :func:`_fp8_pass_loops`: GroupN 8/16/32 the two steps'
    vectors paired (:func:`_v16_pair`) and stored to ``gm[gi ..]``; else ``wb`` kept as the running
    maxima and stored (then restarted) when the group's ``sp2`` iterations are done (``t`` counts them
    down).  Returns the running maxima, ``gi`` and ``t``."""
    if gsz == 0:
        t -= 1
        if t == 0:  # the group's last 64 elements
            _v16_store(gm, gi, wb)
            return _v16_splat(-2147483648), gi + 16, sp2
        return wb, gi, t
    _v16_store(gm, gi, _v16_pair(wa, wb, gsz))
    return m, gi + 16, t


@njit(inline="always")
def _fp8_pass_loops(hif8: bool, unit: bool, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any,
                    keys: Any, gm: Any, am: Any, gsz: int, sp2: int) -> Any:
    """The four loops of :func:`_fp8_pass_fold` (HiF8 or E4M3, unit or general lanes), once for every
    GroupN: per 64-element iteration two 32-element conversion steps (:func:`_hif8_v32u` /
    :func:`_hif8_v32`, :func:`_e4m3_v32u` / :func:`_e4m3_v32`), each just after its maxima on the same
    source load (:func:`_fp8_max`), and the iteration's maxima stored by
    :func:`_fp8_max_end`.  ``gsz`` (a constant at the call): 8, 16 or 32, one 16-lane vector of the
    iteration's groups' partial maxima per iteration (the lanes of ``_small_plan``; no group-end test);
    0, groups of ``64 sp2`` elements, one 16-lane vector of maxima per group."""
    n = a_.size
    m = _v16_splat(-2147483648)
    t = sp2
    gi = 0
    if hif8:
        ovf = np.uint32(keys[HIF8_KEY_OVF])
        hacc = _v16_splat(0)
        if unit:
            for j in range(0, n, 64):
                _prefetch(a_, j + PF_AHEAD)
                _prefetch(a_, j + PF_AHEAD + 16)
                wa = _fp8_max(m, a_, j, am, gsz)
                h = _hif8_v32uf(a_, mp_, mn_, j, o_, ovf)
                _prefetch(a_, j + PF_AHEAD + 32)
                _prefetch(a_, j + PF_AHEAD + 48)
                wb = _fp8_max(wa, a_, j + 32, am, gsz)
                hacc = _v16_or(hacc, _v16_or(h, _hif8_v32uf(a_, mp_, mn_, j + 32, o_, ovf)))
                m, gi, t = _fp8_max_end(m, wa, wb, gm, gi, t, sp2, gsz)
        else:
            for j in range(0, n, 64):
                _prefetch(a_, j + PF_AHEAD)
                _prefetch(a_, j + PF_AHEAD + 16)
                wa = _fp8_max(m, a_, j, am, gsz)
                h = _hif8_v32f(a_, mp_, mn_, j, o_, ovf)
                _prefetch(a_, j + PF_AHEAD + 32)
                _prefetch(a_, j + PF_AHEAD + 48)
                wb = _fp8_max(wa, a_, j + 32, am, gsz)
                hacc = _v16_or(hacc, _v16_or(h, _hif8_v32f(a_, mp_, mn_, j + 32, o_, ovf)))
                m, gi, t = _fp8_max_end(m, wa, wb, gm, gi, t, sp2, gsz)
        return _hif8_word(_hif8_hor16(hacc))
    acc = _e4m3_acc0()
    if unit:
        for j in range(0, n, 64):
            _prefetch(a_, j + PF_AHEAD)
            _prefetch(a_, j + PF_AHEAD + 16)
            wa = _fp8_max(m, a_, j, am, gsz)
            acc = _e4m3_v32u(a_, mp_, mn_, j, o_, acc, ovf_pos, ovf_neg)
            _prefetch(a_, j + PF_AHEAD + 32)
            _prefetch(a_, j + PF_AHEAD + 48)
            wb = _fp8_max(wa, a_, j + 32, am, gsz)
            acc = _e4m3_v32u(a_, mp_, mn_, j + 32, o_, acc, ovf_pos, ovf_neg)
            m, gi, t = _fp8_max_end(m, wa, wb, gm, gi, t, sp2, gsz)
    else:
        for j in range(0, n, 64):
            _prefetch(a_, j + PF_AHEAD)
            _prefetch(a_, j + PF_AHEAD + 16)
            wa = _fp8_max(m, a_, j, am, gsz)
            acc = _e4m3_v32(a_, mp_, mn_, j, o_, acc, ovf_pos, ovf_neg)
            _prefetch(a_, j + PF_AHEAD + 32)
            _prefetch(a_, j + PF_AHEAD + 48)
            wb = _fp8_max(wa, a_, j + 32, am, gsz)
            acc = _e4m3_v32(a_, mp_, mn_, j + 32, o_, acc, ovf_pos, ovf_neg)
            m, gi, t = _fp8_max_end(m, wa, wb, gm, gi, t, sp2, gsz)
    return _e4m3_word(_e4m3_acc_min(acc), _e4m3_acc_max(acc))


@njit
def _fp8_pass_fold(hif8: bool, unit: bool, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any,
                   keys: Any, seg: int, gm: Any, am: Any = None) -> Any:
    """The row's pass (:func:`_hif8_pass` if ``hif8``, else :func:`_e4m3_pass`; ``unit``: every
    multiplier 1, :func:`_hif8_v32u` / :func:`_e4m3_v32u`) with its RowMax/GroupMax maxima taken on the
    way: the same codes and flag word, and for each ``seg``-element group g the int32 maxima of its
    FP32 source bits in 16 lanes (lane l the largest of the group's elements l mod 16) to
    ``gm[16 g .. 16 g + 15]`` (uint32, at least 16 ``a_.size / seg`` entries) for
    :func:`_fold_from_maxima`.  Two ``vpmaxsd`` per 32 elements on the source the step loads anyway
    (:func:`_v16_max32`), instead of a pass of their own over a row the conversion has pushed out of
    L1 (:func:`_fp32_fold_groups`).  One flat loop over the row, 64 elements (two steps) per
    iteration, the group's end tested once per iteration: a loop per group, or the test after every
    32-element step, leaves LLVM's loop one step at a time (not unrolled; Zen 5, one thread, the HiF8
    unit lane +17% to +25% instead of +4%).  GroupN 8, 16 and 32 (``seg``) take
    instead per 64 elements one vector of their groups' partial maxima in ``gm`` (the lanes of
    ``_small_plan``, reduced in registers from the steps' own source loads by :func:`_v16_red32` and
    :func:`_v16_pair`: GroupN 8 and 16 three shuffle rounds of two ``vshufps`` and a ``vpmaxsd`` per
    64 elements, GroupN 32 one round and two maxima; no group-end test), for :func:`_fold_from_maxima`
    too.  The loops: :func:`_fp8_pass_loops`, one inlined copy per GroupN form.  Only with AVX-512 BW (:data:`HIF8_V32`), ``seg`` a multiple of 64
    dividing ``a_.size``, or 8/16/32 with ``a_.size`` a multiple of 64; a row with a rare source (the flag word's rare bit) is redone
    by the caller, its maxima unused.  ``am``: None, or MaxAbs's mask 0x7FFFFFFF ANDed into every source
    before its maximum (a uint32; its own compiled form, :func:`_v16_max32`)."""
    if seg == 8:
        return _fp8_pass_loops(hif8, unit, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, gm, am, 8, 0)
    if seg == 16:
        return _fp8_pass_loops(hif8, unit, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, gm, am, 16, 0)
    if seg == 32:
        return _fp8_pass_loops(hif8, unit, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, gm, am, 32, 0)
    return _fp8_pass_loops(hif8, unit, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, gm, am, 0, seg // 64)


@njit(inline="always")
def _fp8_h64(unit: bool, gsz: int, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf: Any, j: int, am: Any,
             hacc: Any) -> Tuple[Any, Any]:
    """64 elements ``a_[j .. j + 63]`` of a HiF8 loop of :func:`_fp8_pass_keys8` /
    :func:`_fp8_pass_keys16` (``unit``, ``gsz`` 8 or 16: constants at the call): two 32-element steps
    (``_hif8_v32uf`` if ``unit``, else ``_hif8_v32f``: the entries of :func:`_hif8_v32u` /
    :func:`_hif8_v32` unreduced), each just after its GroupN-``gsz`` partial maxima (:func:`_v16_red32`)
    on the same source load, the source prefetched :data:`PF_AHEAD` elements ahead.  Returns the 64
    elements' vector of partial maxima (:func:`_v16_pair`) and ``hacc`` (16 lanes, :func:`_hif8_hor16`)
    with the steps' entries ORed in."""
    _prefetch(a_, j + PF_AHEAD)
    _prefetch(a_, j + PF_AHEAD + 16)
    wa = _v16_red32(a_, j, am, gsz)
    h = _hif8_v32uf(a_, mp_, mn_, j, o_, ovf) if unit else _hif8_v32f(a_, mp_, mn_, j, o_, ovf)
    _prefetch(a_, j + PF_AHEAD + 32)
    _prefetch(a_, j + PF_AHEAD + 48)
    wb = _v16_red32(a_, j + 32, am, gsz)
    h2 = _hif8_v32uf(a_, mp_, mn_, j + 32, o_, ovf) if unit else _hif8_v32f(a_, mp_, mn_, j + 32, o_, ovf)
    return _v16_pair(wa, wb, gsz), _v16_or(hacc, _v16_or(h, h2))


@njit(inline="always")
def _fp8_e64(unit: bool, gsz: int, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any, j: int,
             am: Any, acc: Any) -> Tuple[Any, Any]:
    """:func:`_fp8_h64` for E4M3: the steps :func:`_e4m3_v32u` / :func:`_e4m3_v32`, their overflow
    codes ``ovf_pos`` / ``ovf_neg``, the flag accumulator ``acc`` (:func:`_e4m3_acc0`) returned updated."""
    _prefetch(a_, j + PF_AHEAD)
    _prefetch(a_, j + PF_AHEAD + 16)
    wa = _v16_red32(a_, j, am, gsz)
    if unit:
        acc = _e4m3_v32u(a_, mp_, mn_, j, o_, acc, ovf_pos, ovf_neg)
    else:
        acc = _e4m3_v32(a_, mp_, mn_, j, o_, acc, ovf_pos, ovf_neg)
    _prefetch(a_, j + PF_AHEAD + 32)
    _prefetch(a_, j + PF_AHEAD + 48)
    wb = _v16_red32(a_, j + 32, am, gsz)
    if unit:
        acc = _e4m3_v32u(a_, mp_, mn_, j + 32, o_, acc, ovf_pos, ovf_neg)
    else:
        acc = _e4m3_v32(a_, mp_, mn_, j + 32, o_, acc, ovf_pos, ovf_neg)
    return _v16_pair(wa, wb, gsz), acc


@njit
def _fp8_pass_keys8(hif8: bool, unit: bool, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any,
                    keys: Any, gk: Any, negs: Any, am: Any = None) -> Any:
    """:func:`_fp8_pass_fold` at GroupN 8 on a row a multiple of 128 elements wide, with the fold keys
    taken in the pass: per 128-element iteration the two 64-element halves' vectors of partial maxima
    (:func:`_fp8_h64` / :func:`_fp8_e64`: ``_v16_red32_8``, ``_v16_pair_8``, as :func:`_fp8_pass_loops`)
    reduced in registers to the keys of the iteration's sixteen groups (``_fkeys_8``: :func:`_fold_small`'s
    last round and keys), stored to ``gk[16 b .. 16 b + 15]`` (``gk``: uint32, ``a_.size / 8`` entries),
    and the mask of the groups whose maximum is negative to ``negs[b]`` (uint32, at least ``a_.size / 128``
    entries) for :func:`_fp8_neg_fix`; no stored row of maxima and no fold pass over it.  The same codes,
    flag word and keys as :func:`_fp8_pass_fold` then :func:`_fold_from_maxima` (``am`` as there)."""
    n = a_.size
    if hif8:
        ovf = np.uint32(keys[HIF8_KEY_OVF])
        hacc = _v16_splat(0)
        if unit:
            for j in range(0, n, 128):
                p0, hacc = _fp8_h64(True, 8, a_, o_, mp_, mn_, ovf, j, am, hacc)
                p1, hacc = _fp8_h64(True, 8, a_, o_, mp_, mn_, ovf, j + 64, am, hacc)
                negs[j >> 7] = np.uint32(_fkeys_8((p0, p1), gk, j >> 3))
        else:
            for j in range(0, n, 128):
                p0, hacc = _fp8_h64(False, 8, a_, o_, mp_, mn_, ovf, j, am, hacc)
                p1, hacc = _fp8_h64(False, 8, a_, o_, mp_, mn_, ovf, j + 64, am, hacc)
                negs[j >> 7] = np.uint32(_fkeys_8((p0, p1), gk, j >> 3))
        return _hif8_word(_hif8_hor16(hacc))
    acc = _e4m3_acc0()
    if unit:
        for j in range(0, n, 128):
            p0, acc = _fp8_e64(True, 8, a_, o_, mp_, mn_, ovf_pos, ovf_neg, j, am, acc)
            p1, acc = _fp8_e64(True, 8, a_, o_, mp_, mn_, ovf_pos, ovf_neg, j + 64, am, acc)
            negs[j >> 7] = np.uint32(_fkeys_8((p0, p1), gk, j >> 3))
    else:
        for j in range(0, n, 128):
            p0, acc = _fp8_e64(False, 8, a_, o_, mp_, mn_, ovf_pos, ovf_neg, j, am, acc)
            p1, acc = _fp8_e64(False, 8, a_, o_, mp_, mn_, ovf_pos, ovf_neg, j + 64, am, acc)
            negs[j >> 7] = np.uint32(_fkeys_8((p0, p1), gk, j >> 3))
    return _e4m3_word(_e4m3_acc_min(acc), _e4m3_acc_max(acc))


@njit
def _fp8_pass_keys16(unit: bool, a_: Any, o_: Any, mp_: Any, mn_: Any, keys: Any, gk: Any, negs: Any,
                     am: Any = None) -> Any:
    """:func:`_fp8_pass_keys8` at GroupN 16, HiF8 only, on a row a multiple of 256 elements wide: per
    256-element iteration four 64-element vectors of partial maxima (:func:`_fp8_h64`) reduced in registers
    to the sixteen groups' keys (``_fkeys_16``) to ``gk[16 b ..]`` (``a_.size / 16`` entries), the negative
    groups' mask to ``negs[b]`` (at least ``a_.size / 256`` entries) for :func:`_fp8_neg_fix`.  The same
    codes, flag word and keys as :func:`_fp8_pass_fold` then :func:`_fold_from_maxima`.  Not E4M3: its
    GroupN-16 fold is cheap already (all-negative groups of 16 are rare), kernel level it gained nothing
    (h-fp8g, stop 22)."""
    n = a_.size
    ovf = np.uint32(keys[HIF8_KEY_OVF])
    hacc = _v16_splat(0)
    if unit:
        for j in range(0, n, 256):
            p0, hacc = _fp8_h64(True, 16, a_, o_, mp_, mn_, ovf, j, am, hacc)
            p1, hacc = _fp8_h64(True, 16, a_, o_, mp_, mn_, ovf, j + 64, am, hacc)
            p2, hacc = _fp8_h64(True, 16, a_, o_, mp_, mn_, ovf, j + 128, am, hacc)
            p3, hacc = _fp8_h64(True, 16, a_, o_, mp_, mn_, ovf, j + 192, am, hacc)
            negs[j >> 8] = np.uint32(_fkeys_16((p0, p1, p2, p3), gk, j >> 4))
    else:
        for j in range(0, n, 256):
            p0, hacc = _fp8_h64(False, 16, a_, o_, mp_, mn_, ovf, j, am, hacc)
            p1, hacc = _fp8_h64(False, 16, a_, o_, mp_, mn_, ovf, j + 64, am, hacc)
            p2, hacc = _fp8_h64(False, 16, a_, o_, mp_, mn_, ovf, j + 128, am, hacc)
            p3, hacc = _fp8_h64(False, 16, a_, o_, mp_, mn_, ovf, j + 192, am, hacc)
            negs[j >> 8] = np.uint32(_fkeys_16((p0, p1, p2, p3), gk, j >> 4))
    return _hif8_word(_hif8_hor16(hacc))


@njit(inline="always")
def _fp8_neg_fix_g(a_: Any, negs: Any, gk: Any, gsz: int) -> None:
    """:func:`_fp8_neg_fix` for ``gsz`` a constant at the call."""
    for b in range(gk.size >> 4):
        nm = np.int64(negs[b])
        while nm != 0:
            g = b * 16 + _ctz64(nm)
            nm &= nm - 1
            t = g * gsz
            gk[g] = np.uint32(~np.uint32(_smallest_i32(a_, t, t + gsz)))


@njit
def _fp8_neg_fix(a_: Any, negs: Any, gk: Any, seg: int) -> None:
    """The GroupN-``seg`` (8 or 16) groups of :func:`_fp8_pass_keys8` / :func:`_fp8_pass_keys16` whose
    maximum is negative (every source negative; never with MaxAbs): their key from the smallest int32 of
    their ``seg`` sources, as :func:`_fold_small`; the set bits of each ``negs[b]`` (sixteen groups)
    found by trailing-zero counts (no test per group)."""
    if seg == 8:
        _fp8_neg_fix_g(a_, negs, gk, 8)
    else:
        _fp8_neg_fix_g(a_, negs, gk, 16)


@njit(inline="always")
def _fold_small(a_: Any, gm: Any, gk: Any, gsz: int) -> None:
    """:func:`_fold_from_maxima` for the GroupN-``gsz`` (8, 16, 32; a constant at the call) partial maxima
    of :func:`_fp8_pass_fold`: sixteen groups at a time by ``_foldm_<gsz>`` (``16 gsz / 64`` stored
    vectors), the last ``gk.size % 16`` groups from their lanes (``_SMALL_OWN<gsz>``) one by one; a group
    whose maximum is negative takes the smallest int32 of its sources (never with MaxAbs)."""
    ng = np.uint64(gk.size)
    useg = np.uint64(gsz)
    per = np.uint64(64 // gsz)  # groups in one stored vector
    nb = ng // np.uint64(16)
    for b in range(nb):
        gb = np.uint64(b) * np.uint64(16)
        if gsz == 8:
            neg = _foldm_8(gm, gb * np.uint64(16) // per, gk, gb)
        elif gsz == 16:
            neg = _foldm_16(gm, gb * np.uint64(16) // per, gk, gb)
        else:
            neg = _foldm_32(gm, gb * np.uint64(16) // per, gk, gb)
        if neg != 0:  # some group all negative
            for q in range(16):
                if (neg >> q) & 1:
                    t = (gb + np.uint64(q)) * useg
                    gk[gb + np.uint64(q)] = np.uint32(~np.uint32(_smallest_i32(a_, t, t + useg)))
    for g in range(nb * np.uint64(16), ng):
        v = (g // per) * np.uint64(16)
        q = np.int64(g % per)
        hi = np.int32(-2147483648)
        for lane in range(16):
            if gsz == 8:
                own = _SMALL_OWN8[lane]
            elif gsz == 16:
                own = _SMALL_OWN16[lane]
            else:
                own = _SMALL_OWN32[lane]
            if own == q:
                hi = max(hi, np.int32(gm[v + np.uint64(lane)]))
        b = np.uint32(hi)
        if hi < np.int32(0):  # every source negative
            t = g * useg
            b = np.uint32(_smallest_i32(a_, t, t + useg))
        gk[g] = np.uint32(b ^ np.uint32(0x80000000)) if b < np.uint32(0x80000000) else np.uint32(~b)


@njit
def _fold_from_maxima(a_: Any, gm: Any, seg: int, gk: Any) -> None:
    """The fold keys of :func:`_fp32_fold_groups` (a row without a NaN) from the 16-lane group maxima
    of :func:`_fp8_pass_fold` (with MaxAbs of the masked sources: every maximum >= 0): gk[g] = the order key of the largest int32 of
    ``gm[16 g .. 16 g + 15]``, sixteen groups at a time by ``_fold16_16`` (the transposed reduction of
    :func:`_fold16_make`, one lane per group), the last ``gk.size % 16`` one by one.  A group whose
    maximum is negative (every source negative) takes the smallest int32 of its ``seg`` sources in
    ``a_`` instead, as :func:`_fp32_fold_groups` does.  GroupN 8, 16, 32: the partial maxima of
    :func:`_fp8_pass_fold`, by :func:`_fold_small`."""
    if seg == 8:
        _fold_small(a_, gm, gk, 8)
        return
    if seg == 16:
        _fold_small(a_, gm, gk, 16)
        return
    if seg == 32:
        _fold_small(a_, gm, gk, 32)
        return
    ng = np.uint64(gk.size)
    useg = np.uint64(seg)
    nb = ng // np.uint64(16)
    for b in range(nb):
        gb = np.uint64(b) * np.uint64(16)
        neg = _fold16_16(gm, gb * np.uint64(16), gk, gb)
        if neg != 0:  # some group all negative
            for q in range(16):
                if (neg >> q) & 1:
                    t = (gb + np.uint64(q)) * useg
                    gk[gb + np.uint64(q)] = np.uint32(~np.uint32(_smallest_i32(a_, t, t + useg)))
    for g in range(nb * np.uint64(16), ng):
        hi = np.int32(-2147483648)
        for k in range(np.uint64(16) * g, np.uint64(16) * g + np.uint64(16)):
            hi = max(hi, np.int32(gm[k]))
        b = np.uint32(hi)
        if hi < np.int32(0):  # every source negative
            t = g * useg
            b = np.uint32(_smallest_i32(a_, t, t + useg))
        gk[g] = np.uint32(b ^ np.uint32(0x80000000)) if b < np.uint32(0x80000000) else np.uint32(~b)


@njit
def _fp8_finite_flags(hif8: bool, a_: Any, o_: Any, mp_: Any, mn_: Any, ovf_pos: Any, ovf_neg: Any,
                      keys: Any) -> int:
    """The flags of an E4M3 or HiF8 row's lanes whose source is finite (for E4M3 also not -0): the
    row's pass (:func:`_hif8_pass` if ``hif8``, else :func:`_e4m3_pass`) again over each run between
    NaN/Inf sources (and E4M3's -0 sources), whose lanes' flags are garbage (E4M3's -0 lanes raise
    none).  A rare path: only rows with such a source."""
    f_or = 0
    start = 0
    for j in range(a_.size + 1):
        if j == a_.size or (np.int64(a_[j]) & FP32_INF) == FP32_INF or (not hif8 and a_[j] == FP32_NEG_ZERO):
            if j > start:
                if hif8:
                    w = _hif8_pass(a_[start:j], o_[start:j], mp_[start:j], mn_[start:j], keys)
                else:
                    w = _e4m3_pass(a_[start:j], o_[start:j], mp_[start:j], mn_[start:j], ovf_pos, ovf_neg)
                f_or |= np.int64(w) & _ALL_FLAGS
            start = j + 1
    return f_or


#: elements of a BF16/FP16 row folded and then converted at a time (:func:`_fp16x_rows`)
FOLD_CHUNK = 1024


@njit(inline="always")
def _fp16x_blocks(a_: Any, gk: Any, nb: Any, seg: int, max_abs: bool) -> None:
    """The first ``nb`` blocks of sixteen ``seg``-element groups of :func:`_fp16x_fold_groups`, first to
    last, by ``_fold16_fp16x``; ``seg`` and ``max_abs`` constants at the call (the block's intrinsic
    chosen at run time inside the loop costs GroupN 8 a factor of 8: Zen 5, one chunk in L1)."""
    useg = np.uint64(seg)
    for b in range(nb):
        s = np.uint64(b) * (useg * np.uint64(16))
        gb = np.uint64(b) * np.uint64(16)
        neg = _fold16_fp16x(a_, s, gk, gb, seg, max_abs)
        if neg != 0:  # some group all negative (never with MaxAbs)
            for q in range(16):
                if (neg >> q) & 1:
                    t = s + np.uint64(q) * useg
                    gk[gb + np.uint64(q)] = np.uint32(~np.uint32(_smallest_i32(a_, t, t + useg)))


@njit
def _fp16x_fold_groups(a_: Any, absm: Any, seg: int, gk: Any) -> None:
    """The fold keys of :func:`_fp32_fold_groups` (same arguments, same keys) for a chunk of a BF16/FP16
    row with GroupN 8, taken before its conversion (:func:`_fp16x_rows`): the full blocks of sixteen
    groups (128 sources) first to last through ``_fold16_fp16x`` (the transposed reduction of
    :func:`_fold16_make` with two groups per vector, one lane per group at the end: ~35 instructions per
    sixteen groups against ~20 per group for the loop per group), with or without MaxAbs (``absm``
    0x7FFFFFFF: the sign bits cleared in the block), a group whose maximum is negative redone by its
    smallest int32 (:func:`_smallest_i32`); the rest of the chunk, and any other GroupN, by
    :func:`_fp32_fold_groups`.  In load order: here the fold is what brings the chunk in from memory."""
    n = np.uint64(a_.size)
    useg = np.uint64(seg)
    nb = min(np.uint64(gk.size), n // useg) // np.uint64(16)
    g0 = nb * np.uint64(16)
    if seg != 8:
        g0 = np.uint64(0)
    elif absm != np.uint32(0xFFFFFFFF):
        _fp16x_blocks(a_, gk, nb, 8, True)
    else:
        _fp16x_blocks(a_, gk, nb, 8, False)
    if g0 < np.uint64(gk.size):
        _fp32_fold_groups(_borrow(a_, g0 * useg, n), absm, seg, _borrow(gk, g0, gk.size))


@njit(inline="always")
def _fp16x_fused_loop(lane: int, gsz: int, relu: int, mabs: int, a_: Any, o_: Any, gk: Any, p: Any,
                      absm: Any) -> Any:
    """The body of :func:`_fp16x_fused` for constant ``lane``, ``gsz``, ``relu`` (1: ``p[0]`` not 0, 0:
    ReluMode NONE, 2: the ReLU and MaxAbs masks ``p[0]`` / ``absm`` read at run time) and ``mabs`` (1:
    ``absm`` 0x7FFFFFFF; 0 with ``relu`` 2) (the block's intrinsic is compiled for them: a choice at
    run time inside the loop would cost the loop, h-bfg).  The blocks leave Sat to this loop: with Sat on
    (``p[1]``) and a magnitude at BIG (``amv``) the blocks' codes are redone by the lane."""
    n = np.uint64(a_.size)
    useg = np.uint64(gsz)
    gpb = np.uint64(16)  # groups a block
    bs = useg * gpb
    nb = n // bs
    nxv = _v16_splat(0)
    ufv = nxv
    amv = nxv
    smv = nxv
    negb = np.uint64(0)  # bit b % 64: block b has a group whose maximum is negative
    for b in range(nb):  # no branch in this loop: LLVM sinks work past one and spills (Zen 5)
        nxv, ufv, amv, smv, neg = _fp16x_blk(a_, o_, np.uint64(b) * bs, gk, np.uint64(b) * gpb,
                                             nxv, ufv, amv, smv, p[0], p[1], absm, lane, gsz, relu, mabs)
        negb |= np.uint64(neg != 0) << np.uint64(b & 63)
    if negb != np.uint64(0):  # such a group (never with MaxAbs) has a placeholder key below 0x80000000
        for b in range(nb):  # (a bit shared by blocks b and b + 64: the fix keeps every key that is no placeholder)
            if (negb >> np.uint64(b & 63)) & np.uint64(1):
                if gsz == 8:
                    _fixneg16_8(a_, np.uint64(b) * bs, gk, np.uint64(b) * gpb)
                elif gsz == 16:
                    _fixneg16_16(a_, np.uint64(b) * bs, gk, np.uint64(b) * gpb)
                else:
                    _fixneg16_32(a_, np.uint64(b) * bs, gk, np.uint64(b) * gpb)
    nx = np.uint32(_v16_hor(nxv))
    uf = np.uint32(_v16_hor(ufv))
    amax = np.uint32(_v16_humax(amv))
    smax = np.uint32(_v16_humax(smv))
    kept = np.uint32(0xFFFF) if lane == LANE_BF16 else np.uint32(0xFFFFFFFF)  # as _fp32_span
    big = np.uint32(BF16_BIG) if lane == LANE_BF16 else np.uint32(F16_BIG)
    if p[1] != np.uint32(0) and amax >= big:
        # Sat and a magnitude (after ReLU) that rounds to Inf: the blocks left its code at Inf's; the blocks' codes
        # again by the lane (rare: typical data never gets here; a NaN/Inf source's row is redone whole anyway)
        for j in range(nb * bs):
            if lane == LANE_BF16:
                o_[j] = _bf16_lane(a_[j], p[0], p[1])[0]
            else:
                o_[j] = _f16_lane(a_[j], p[0], p[1])[0]
    w = np.uint32((np.uint32(_NX) if (nx & kept) != np.uint32(0) else np.uint32(0))
                  | (np.uint32(_UF_NX) if (uf & kept) != np.uint32(0) else np.uint32(0))
                  | (np.uint32(_OF_NX) if amax >= big else np.uint32(0))
                  | (np.uint32(_RARE) if smax >= np.uint32(FP32_INF) else np.uint32(0)))
    e = nb * bs
    if e < n:  # the last groups (less than a block), by the fold and the pass of the chunked path
        _fp32_fold_groups(_borrow(a_, e, n), absm, gsz, _borrow(gk, nb * gpb, gk.size))
        if lane == LANE_BF16:
            w = np.uint32(w | _bf16_pass(_borrow(a_, e, n), _borrow(o_, e, n), p))
        else:
            w = np.uint32(w | _f16_pass(_borrow(a_, e, n), _borrow(o_, e, n), p))
    return w


@njit
def _fp16x_fused(lane: int, gsz: int, a_: Any, o_: Any, gk: Any, p: Any, absm: Any) -> Any:
    """A BF16 (``lane`` :data:`LANE_BF16`) or FP16 row's pass and its RowMax+GroupMax fold keys from one
    loop over the row, GroupN ``gsz`` 8, 16 or 32 (GroupN 32 went back to the chunked path at stop 18, when this
    loop spilled; since its flag accumulators pass a value barrier it does not, h-fp16g2, docs/performance.md):
    blocks of sixteen groups
    converted and folded from the same loads (:func:`_fp16x_blk`: no load-only fold pass before the conversion, as
    :func:`_fp16x_fold_groups` / :func:`_fp32_fold_groups` are in the chunked path), a group whose maximum
    is negative redone after the loop from its block's minima (``_fixneg16_*``, :func:`_fold16_make`), the last
    groups (less than a block) by
    :func:`_fp32_fold_groups` and the pass.  Zen 5, 4096 x 4096, two threads, against the pass alone:
    GroupN 16 +30..+78% -> -6..+15%, 8 -3..+46% -> -11..+35% (h-bf16s's harness; docs/performance.md).
    Returns the pass's flag word (:func:`_fp32_span`: the same bits, :data:`_RARE` for a NaN/Inf source,
    whose row the caller redoes whole, its keys too); ``gk``: the row's keys, as
    :func:`_fp32_fold_groups` gives them (``absm`` 0x7FFFFFFF with MaxAbs, else all ones).

    Forms: BF16 has one loop per ReluMode NONE/RELU and MaxAbsEn off/on (:func:`_fp16x_blk` with those
    as constants: BF16 GroupN 8 +18..+20% -> +11..+13% through the public call, h-bf16t/h-bf16u,
    docs/performance.md); FP16 has its own forms for ReluMode NONE without and with MaxAbs (the bench's settings:
    18.1 / 19.9 instructions per 16 elements at GroupN 8 / 16 against 25.5 / 27.0 with the masks read at
    run time, h-fp16g; MaxAbs since GroupN 64-128 come here through GroupN 32, h-fp16) and the run-time-mask
    form for the others (each form adds ~1.5 s of compile time), each
    at GroupN 8, 16 and 32."""
    if lane == LANE_FP16:  # ReluMode NONE its own forms, else the masks at run time (docstring)
        if p[0] == np.uint32(0) and absm == np.uint32(0xFFFFFFFF):
            if gsz == 8:
                return _fp16x_fused_loop(LANE_FP16, 8, 0, 0, a_, o_, gk, p, absm)
            if gsz == 16:
                return _fp16x_fused_loop(LANE_FP16, 16, 0, 0, a_, o_, gk, p, absm)
            return _fp16x_fused_loop(LANE_FP16, 32, 0, 0, a_, o_, gk, p, absm)
        if p[0] == np.uint32(0):  # MaxAbs
            if gsz == 8:
                return _fp16x_fused_loop(LANE_FP16, 8, 0, 1, a_, o_, gk, p, absm)
            if gsz == 16:
                return _fp16x_fused_loop(LANE_FP16, 16, 0, 1, a_, o_, gk, p, absm)
            return _fp16x_fused_loop(LANE_FP16, 32, 0, 1, a_, o_, gk, p, absm)
        if gsz == 8:
            return _fp16x_fused_loop(LANE_FP16, 8, 2, 0, a_, o_, gk, p, absm)
        if gsz == 16:
            return _fp16x_fused_loop(LANE_FP16, 16, 2, 0, a_, o_, gk, p, absm)
        return _fp16x_fused_loop(LANE_FP16, 32, 2, 0, a_, o_, gk, p, absm)
    if p[0] == np.uint32(0):  # ReluMode NONE
        if absm == np.uint32(0xFFFFFFFF):
            if gsz == 8:
                return _fp16x_fused_loop(LANE_BF16, 8, 0, 0, a_, o_, gk, p, absm)
            if gsz == 16:
                return _fp16x_fused_loop(LANE_BF16, 16, 0, 0, a_, o_, gk, p, absm)
            return _fp16x_fused_loop(LANE_BF16, 32, 0, 0, a_, o_, gk, p, absm)
        if gsz == 8:
            return _fp16x_fused_loop(LANE_BF16, 8, 0, 1, a_, o_, gk, p, absm)
        if gsz == 16:
            return _fp16x_fused_loop(LANE_BF16, 16, 0, 1, a_, o_, gk, p, absm)
        return _fp16x_fused_loop(LANE_BF16, 32, 0, 1, a_, o_, gk, p, absm)
    if absm == np.uint32(0xFFFFFFFF):
        if gsz == 8:
            return _fp16x_fused_loop(LANE_BF16, 8, 1, 0, a_, o_, gk, p, absm)
        if gsz == 16:
            return _fp16x_fused_loop(LANE_BF16, 16, 1, 0, a_, o_, gk, p, absm)
        return _fp16x_fused_loop(LANE_BF16, 32, 1, 0, a_, o_, gk, p, absm)
    if gsz == 8:
        return _fp16x_fused_loop(LANE_BF16, 8, 1, 1, a_, o_, gk, p, absm)
    if gsz == 16:
        return _fp16x_fused_loop(LANE_BF16, 16, 1, 1, a_, o_, gk, p, absm)
    return _fp16x_fused_loop(LANE_BF16, 32, 1, 1, a_, o_, gk, p, absm)


def _fp16x_rows(i0: int, i1: int, acc: Any, n: int, total: int, out: Any, scale: Any, alpha: Any, scale32: Any,
                alpha32: Any, qrow: int, rrow: int, relu: int, sat: bool, spec: Any, absm: Any, fold: bool,
                group_n: int, ngs: int, gk: Any, gs: Any, fast: int, rowflags: Any, row_en: bool, row_out: Any,
                group_out: Any, has_init: bool, init: Any, red_t: int, max_abs: bool) -> bool:
    """Rows ``i0 .. i1 - 1`` of an FP32 -> BF16 (``fast`` :data:`LANE_BF16`) or FP16 tile (compiled gate:
    uint16 carriers only), as :func:`_fp8_rows`: each row's pass (:func:`_bf16_pass` /
    :func:`_f16_pass`) from this one loop, with ``fold`` its groups' fold keys
    (:func:`_fp32_fold_groups`, taken before the pass, :data:`FOLD_CHUNK` elements at a time; GroupN 8,
    16 and 32 on rows of at least sixteen groups from the pass's own loads, :func:`_fp16x_fused`; a larger
    multiple of 16 (GroupN 48-128, RowMax alone) through that loop at GroupN 32 or 16, each group's key the
    maximum of its parts' keys) to
    ``gk[0 ..]`` (one row's at a time: ``gk`` and ``gs`` hold ``ngs`` entries); a row with a NaN/Inf source done
    again whole by :func:`_row_bf16` / :func:`_row_f16` (its ``gs`` entries too); with ``fold`` each row's
    RowMaxOut / GroupMaxOut right after its pass (:func:`_fold_row_finish`); each row's flags to
    ``rowflags[i]``.  The same codes, keys and flags as one such call a row.  Returns whether a GroupMaxOut
    line was stored non-temporally (the caller fences)."""
    raise NotImplementedError  # pragma: no cover - only called from compiled code


def _fp16x_rows_u16(i0: int, i1: int, acc: Any, n: int, total: int, out: Any, scale: Any, alpha: Any,
                    scale32: Any, alpha32: Any, qrow: int, rrow: int, relu: int, sat: bool, spec: Any, absm: Any,
                    fold: bool, group_n: int, ngs: int, gk: Any, gs: Any, fast: int,
                    rowflags: Any, row_en: bool, row_out: Any, group_out: Any, has_init: bool, init: Any, red_t: int,
                    max_abs: bool) -> bool:
    p = (np.uint32(0xFFFFFFFF) if relu == 1 else np.uint32(0), np.uint32(0xFFFFFFFF) if sat else np.uint32(0))
    nt_any = False  # a GroupMaxOut line stored non-temporally (_fold_row_finish; the caller's _sfence)
    tk = np.empty(1, np.uint32)
    # the keys of a row's GroupN-32 (or 16) parts when its GroupN is a larger multiple of them (below)
    kp = np.empty((n + 15) // 16 if fold else 1, np.uint32)
    for i in range(i0, i1):
        base = i * n
        cnt = min(n, total - base)
        qb = i * qrow
        rb0 = i * rrow
        # borrowed views (no reference count updated per row or chunk: _borrow, as _fp8_rows)
        a_ = _borrow(acc, base, base + cnt)
        o_ = _borrow(out, base, base + cnt)
        seg = group_n if (fold and group_n > 0) else max(cnt, 1)
        ng = max((cnt + seg - 1) // seg if fold else 1, 1)
        # one row's keys and sNaN bits at a time, finished right after its pass: the same lines of gk and gs
        # for every row, in L1 (a row of them per row of the block cost FP16 GroupN 8 more the more rows a block
        # had: one thread, +21% at one row, +52% at 32; docs/performance.md, stop 42)
        g0 = 0
        if fold:
            gs[0] = _GS_CLEAN  # no entry written yet (a row with a rare source writes them all)
            # the fold keys first, a chunk of about FOLD_CHUNK elements at a time, then the chunk's
            # conversion (a row with a NaN/Inf source has its keys all redone below): the load-only fold
            # brings the chunk in from memory at full speed, the conversion then runs from L1, and the
            # next chunk's loads start while it runs (docs/performance.md, h-nt).  A group longer than a
            # chunk (RowMax alone: the row) takes the maximum of its chunks' keys (keys order as values).
            w = np.uint32(0)
            c = 0
            part = 32 if seg % 32 == 0 else 16  # a larger GroupN (RowMax alone too): through its parts' keys
            if (seg == 8 or seg == 16 or seg == 32) and cnt >= 16 * seg:  # sixteen groups or more: _fp16x_fused
                w = _fp16x_fused(fast, seg, a_, o_, _borrow(gk, g0, g0 + ng), p, absm)
                c = cnt
            elif seg % 16 == 0 and seg > part and cnt >= 16 * part:
                # GroupN 48-128 (or the row): the fused loop at GroupN 32 (or 16), then each group's key the
                # maximum of its parts' keys (exact: keys order as the values, _fp16x_fused redoes a part whose
                # sources are all negative, and a row with a NaN/Inf source is redone whole below).  The chunked
                # fold-first path's loop per group cost GroupN 128 +24..+33% on AVX2 (Zen 3)
                npt = (cnt + part - 1) // part
                w = _fp16x_fused(fast, part, a_, o_, _borrow(kp, 0, npt), p, absm)
                r = seg // part
                # the groups whose r parts all exist: GroupN 128 / 64 (r 4 / 2) without an inner loop (its set-up per
                # group cost FP16/BF16 GroupN 128 ~90 instructions a group, 0.7 an element on AVX2); the others (and
                # a shorter last group) part by part; unsigned selects, no branch
                nf = min(ng, npt // r)
                if r == 4:
                    for g in range(nf):
                        ka = kp[4 * g]
                        kb = kp[4 * g + 1]
                        kc = kp[4 * g + 2]
                        kd = kp[4 * g + 3]
                        ka = kb if kb > ka else ka
                        kc = kd if kd > kc else kc
                        gk[g0 + g] = kc if kc > ka else ka
                elif r == 2:
                    for g in range(nf):
                        ka = kp[2 * g]
                        kb = kp[2 * g + 1]
                        gk[g0 + g] = kb if kb > ka else ka
                else:
                    nf = 0
                for g in range(nf, ng):
                    q0 = g * r
                    k = kp[q0]
                    for q in range(q0 + 1, min(q0 + r, npt)):
                        kq = kp[q]
                        k = kq if kq > k else k
                    gk[g0 + g] = k
                c = cnt
            while c < cnt:
                if seg <= FOLD_CHUNK:
                    e = min(c + (FOLD_CHUNK // seg) * seg, cnt)
                    if seg == 8:  # sixteen groups at a time (GroupN 16-64 keep the loop: slower on two threads)
                        _fp16x_fold_groups(_borrow(a_, c, e), absm, seg,
                                           _borrow(gk, g0 + c // seg, g0 + (e + seg - 1) // seg))
                    else:
                        _fp32_fold_groups(_borrow(a_, c, e), absm, seg,
                                          _borrow(gk, g0 + c // seg, g0 + (e + seg - 1) // seg))
                else:
                    e = min(c + FOLD_CHUNK, (c // seg + 1) * seg, cnt)  # inside one group
                    _fp32_fold_groups(_borrow(a_, c, e), absm, e - c, tk)
                    g = g0 + c // seg
                    gk[g] = tk[0] if c % seg == 0 else max(gk[g], tk[0])
                if fast == LANE_BF16:
                    w = np.uint32(w | _bf16_pass(_borrow(a_, c, e), _borrow(o_, c, e), p))
                else:
                    w = np.uint32(w | _f16_pass(_borrow(a_, c, e), _borrow(o_, c, e), p))
                c = e
        elif fast == LANE_BF16:
            w = _bf16_pass(a_, o_, p)
        else:
            w = _f16_pass(a_, o_, p)
        res = np.int64(w) & _ALL_FLAGS
        if (w & np.uint32(_RARE)) != np.uint32(0):
            if fast == LANE_BF16:
                res = _row_bf16(a_, o_, scale[qb:qb + cnt], alpha[rb0:rb0 + cnt], scale32[qb:qb + cnt],
                                alpha32[rb0:rb0 + cnt], relu, sat, spec, fold, absm, seg, gk[g0:g0 + ng],
                                gs[g0:g0 + ng])
            else:
                res = _row_f16(a_, o_, scale[qb:qb + cnt], alpha[rb0:rb0 + cnt], scale32[qb:qb + cnt],
                               alpha32[rb0:rb0 + cnt], relu, sat, spec, fold, absm, seg, gk[g0:g0 + ng],
                               gs[g0:g0 + ng])
        if fold:  # RowMax / GroupMax now, the row's keys still in L1 (_fold_row_finish)
            res, nt_any = _fold_row_finish(i, base, cnt, res, _borrow(gk, g0, g0 + ng), _borrow(gs, g0, g0 + ng), ng,
                                           seg, group_n, acc, group_out, row_en, row_out, has_init, init, red_t,
                                           max_abs, nt_any)
        rowflags[i] = res
    return nt_any


def _fp16x_rows_none(i0: int, i1: int, acc: Any, n: int, total: int, out: Any, scale: Any, alpha: Any,
                     scale32: Any, alpha32: Any, qrow: int, rrow: int, relu: int, sat: bool, spec: Any, absm: Any,
                     fold: bool, group_n: int, ngs: int, gk: Any, gs: Any, fast: int,
                     rowflags: Any, row_en: bool, row_out: Any, group_out: Any, has_init: bool, init: Any, red_t: int,
                     max_abs: bool) -> bool:
    return False  # never called: BF16/FP16 write uint16


@njit
def _row_hif8_rhb(a_: Any, o_: Any, sc_: Any, al_: Any, sc32_: Any, al32_: Any, relu: int, sat: bool, spec: Any,
                  fold: bool, absm: Any, seg: int, gk: Any, gs: Any, keys: Any) -> int:
    """FP32 -> HiF8 under RHB (modes 25/28): each product's key (:func:`_hif8_key`) looked up in
    ``keys`` (:func:`hif8_key_table` for ``sat``), ``sc32_``/``al32_`` the multipliers of a
    positive / negative source (:func:`run_tile`).  A row with a NaN/Inf source: the flags of the
    finite lanes again (:func:`_fp8_finite_flags`), then those sources (and the fold's NaN rules)
    by :func:`_redo_rare`."""
    acc = _hif8_pass(a_, o_, sc32_, al32_, keys)
    res = np.int64(acc) & _ALL_FLAGS
    if (acc & np.uint32(_RARE)) != np.uint32(0):
        res = _fp8_finite_flags(True, a_, o_, sc32_, al32_, np.uint32(0), np.uint32(0), keys)
        res |= _redo_rare(a_, o_, sc_, al_, relu, D_HIF8, R_RHB, sat, spec, HIF8_ZERO, False, fold, absm, seg,
                          gk, gs)
    elif fold:
        _fp32_fold_groups(a_, absm, seg, gk)
    return res


@njit
def _unit_mults(mp_: Any, mn_: Any) -> bool:
    """Whether every multiplier of a positive and of a negative source is exactly 1 (float32 bits
    0x3F800000): QF322FP8_PRE / QF322HIF8_PRE with scale 1 and ReluMode NONE, whose passes then take
    the product to be the source itself (:func:`_e4m3_pass_unit`, :func:`_hif8_pass` ``unit``)."""
    d = np.uint32(0)
    for j in range(mp_.size):
        d = np.uint32(d | (_f32_bits(mp_[j]) ^ np.uint32(0x3F800000)))
    for j in range(mn_.size):
        d = np.uint32(d | (_f32_bits(mn_[j]) ^ np.uint32(0x3F800000)))
    return d == np.uint32(0)


@njit
def _const_mults(m_: Any) -> bool:
    """Whether every element of a multiplier row (float32) has the bits of its first: a scalar scale
    (and alpha) copied across the columns by :func:`run_tile`, which :func:`_fp8_rows` then hands to
    the passes as one float32 (:func:`_mult_at`) instead of the row."""
    if m_.size == 0:
        return False
    b = _f32_bits(m_[0])
    d = np.uint32(0)
    for j in range(m_.size):
        d = np.uint32(d | (_f32_bits(m_[j]) ^ b))
    return d == np.uint32(0)


@njit(inline="always")
def _gmo_rowmax(gk: Any, g0: int, g1: int) -> Any:
    """The maximum bits of the groups ``g0 .. g1 - 1`` (at least one) from their GroupMaxOut bits ``gk`` (uint32;
    every group a number): the largest int32 when some group's is >= 0, else (every source negative) the smallest.
    Indices, not a slice: a slice is an array object made per call (in :func:`_gmo_combine`, one per group: HiF8
    GroupN 128 +17..+19% instead of +13% over the plain call, stop 47)."""
    hi = np.int32(-2147483648)
    for g in range(g0, g1):
        hi = max(hi, np.int32(gk[g]))
    if hi < np.int32(0):  # (rare) every group's maximum negative
        for g in range(g0, g1):
            hi = min(hi, np.int32(gk[g]))
    return np.uint32(hi)


@njit(inline="always")
def _gmo_combine(sub: Any, gk: Any, per: int) -> None:
    """The GroupMaxOut bits ``gk`` of groups of ``per`` subgroups from the subgroups' (``sub``, ``per * gk.size`` of
    them, as :func:`_hif8_pass_groups` leaves them): each group's by :func:`_gmo_rowmax` over its subgroups' bits
    (their largest int32, or when every one is negative their smallest)."""
    for g in range(gk.size):
        gk[g] = _gmo_rowmax(sub, g * per, g * per + per)


def _fp8_rows(fast: int, i0: int, i1: int, acc: Any, n: int, total: int, out: Any, scale: Any, alpha: Any,
              scale32: Any, alpha32: Any, qrow: int, rrow: int, relu: int, sat: bool, spec: Any, absm: Any,
              fold: bool, group_n: int, ngs: int, gk: Any, gs: Any, keys: Any, rowflags: Any, row_en: bool,
              row_out: Any, group_out: Any, has_init: bool, init: Any, red_t: int, max_abs: bool) -> bool:
    """Rows ``i0 .. i1 - 1`` of an FP32 -> E4M3 (``fast`` :data:`LANE_E4M3`) or HiF8 tile (compiled
    gate: uint8 carriers only): each row's pass (:func:`_e4m3_pass` / :func:`_e4m3_pass_unit`,
    :func:`_hif8_pass`) called from this one loop, with ``fold`` its groups' fold keys
    (:func:`_fp8_fold_groups`, groups of ``group_n`` or the whole row) to ``gk[0 ..]`` (one row's at a time),
    or, where the CPU has AVX-512 BW and the groups are a multiple of 64 elements that divides the
    row, from group maxima the pass takes itself (:func:`_fp8_pass_fold`, with MaxAbs of the masked
    sources, then :func:`_fold_from_maxima`; GroupN 8 on a row a multiple of 128 wide: the keys themselves in the
    pass, :func:`_fp8_pass_keys8` then :func:`_fp8_neg_fix`; HiF8 GroupN 16 on a row a multiple of 256 wide
    likewise, :func:`_fp8_pass_keys16`); without AVX-512 BW (this AVX2 Zen 3), E4M3 at GroupN 8, 16 or 32 without
    MaxAbs on a row of whole 8-group steps, and the unit lane's GroupN 32, 64 and 128 with MaxAbs or not, with
    AVX2 and FMA (:data:`E4M3_GRP`), the conversion and the keys in one loop (:func:`_e4m3_pass_groups`,
    :func:`_e4m3_pass_groups_unit`), else E4M3 at GroupN 8 or 16 on a row a whole number of fold blocks
    wide (256 elements), the keys block by block inside the pass (:func:`_fp8_pass_blocks`: each block's
    :func:`_foldb_seg` just after its conversion, no :func:`_fp8_fold_groups` after the row); HiF8 at GroupN 8/16 (unit multipliers: and 32)
    likewise in its lookup loop (:func:`_hif8_pass_groups`); a row with a NaN/Inf (E4M3: or -0) source done again
    whole by :func:`_row_e4m3_rne` /
    :func:`_row_hif8_rhb` (its ``gs`` entries too); each row's flags to ``rowflags[i]``.  The same
    codes, keys and flags as one :func:`_row_e4m3_rne` / :func:`_row_hif8_rhb` call a row, without
    its cost per call (about 100 ns a row on Zen 5: the pass inlined into a loop over rows instead of
    a call per row).  With ``fold``, each row's RowMaxOut / GroupMaxOut right after its pass
    (:func:`_fold_row_finish`); returns whether a GroupMaxOut line was stored non-temporally (the caller
    fences).  Rows whose multipliers are all 1 (:func:`_unit_mults`, once for the block when
    the multipliers are one row for all rows) take the passes' unit lanes.  A row whose pass wrote its groups'
    GroupMaxOut bits (:data:`_GMO_BITS` in ``rowflags[i]``) gets, with ``row_en``, its maximum bits before RowInit in
    ``row_out[i]`` too (HiF8: from the pass's registers, :func:`_hif8_groups_loop`; E4M3: from those bits)."""
    raise NotImplementedError  # pragma: no cover - only called from compiled code


def _fp8_rows_u8(fast: int, i0: int, i1: int, acc: Any, n: int, total: int, out: Any, scale: Any, alpha: Any,
                 scale32: Any, alpha32: Any, qrow: int, rrow: int, relu: int, sat: bool, spec: Any, absm: Any,
                 fold: bool, group_n: int, ngs: int, gk: Any, gs: Any, keys: Any, rowflags: Any, row_en: bool,
                 row_out: Any, group_out: Any, has_init: bool, init: Any, red_t: int, max_abs: bool) -> bool:
    ovf_pos = np.uint32(E4M3_SAT_POS) if sat else np.uint32(E4M3_OVF_POS)
    ovf_neg = np.uint32(E4M3_SAT_NEG) if sat else np.uint32(E4M3_OVF_NEG)
    shared = qrow == 0 and rrow == 0  # one multiplier row for every row of the tile
    unit = shared and _unit_mults(scale32[0:min(n, total)], alpha32[0:min(n, total)])
    # one constant multiplier row for all rows (a scalar QuantParam, no vector alpha): the general
    # lanes splat the two multipliers instead of loading two float32 rows beside the source, and
    # when both have the same bits (ReluMode NONE) take no blend by the source's sign (mn None)
    w0 = min(n, total)
    splat = shared and not unit and _const_mults(scale32[0:w0]) and _const_mults(alpha32[0:w0])
    mps = scale32[0] if splat else np.float32(0)
    mns = alpha32[0] if splat else np.float32(0)
    same = splat and _f32_bits(mps) == _f32_bits(mns)
    # the fused fold's 16-lane group maxima of one row (_fp8_pass_fold); without AVX-512, the GroupN-32 subgroups'
    # bits of one row (HiF8's unit lane at GroupN 64/128, _gmo_combine)
    gm = np.empty(16 * max(n // 32, 1) if fold else 16, np.uint32)
    nt_any = False  # a GroupMaxOut line stored non-temporally (_fold_row_finish; the caller's _sfence)
    for i in range(i0, i1):
        base = i * n
        cnt = min(n, total - base)
        qb = i * qrow
        rb0 = i * rrow
        # borrowed views (no reference count updated per row: _borrow)
        a_ = _borrow(acc, base, base + cnt)
        o_ = _borrow(out, base, base + cnt)
        mp_ = _borrow(scale32, qb, qb + cnt)
        mn_ = _borrow(alpha32, rb0, rb0 + cnt)
        seg = group_n if (fold and group_n > 0) else max(cnt, 1)
        ng = max((cnt + seg - 1) // seg if fold else 1, 1)
        g0 = 0  # one row's keys and sNaN bits at a time, as _fp16x_rows
        if fold:
            gs[0] = _GS_CLEAN  # no entry written yet (a row with a rare source writes them all)
        u = unit if shared else _unit_mults(mp_, mn_)
        # the maxima fused into the pass: AVX-512, whole groups of a multiple of 64, or GroupN 8/16/32 on
        # a row a multiple of 64 wide
        fz = fold and HIF8_V32 and cnt > 0 and (seg % 64 == 0 or seg == 8 or seg == 16 or seg == 32) and \
            cnt % seg == 0 and cnt % 64 == 0
        # GroupN 8 on a row a multiple of 128 wide: the keys themselves taken in the pass (_fp8_pass_keys8;
        # gm holds the negative groups' masks); HiF8 GroupN 16 on a row a multiple of 256 wide too
        # (_fp8_pass_keys16)
        k8 = fz and seg == 8 and cnt % 128 == 0
        k16 = fz and fast != LANE_E4M3 and seg == 16 and cnt % 256 == 0
        # without AVX-512, E4M3: GroupN 8 or 16 on a row of whole fold blocks, the keys taken block by block
        # inside the pass (_fp8_pass_blocks; HiF8: its pass then _fp8_fold_groups).  From GroupN 32 on the pass
        # then _fp8_fold_groups takes less time: the general lane (a multiplier other than 1; Zen 3, one thread,
        # 4096 x 4096, scale 1.625, GroupN 128 10.54 -> 10.29 ms, GroupN 32 10.72 -> 10.58 ms) and, stop 44, the
        # unit lane (Zen 3, one thread, 64 rows of 4096 from L2/L3, ns an element: GroupN 128 0.422 -> 0.401,
        # 64 0.429 -> 0.404, 32 0.452 -> 0.414; with MaxAbs 0.412 -> 0.398, 0.414 -> 0.405, 0.521 -> 0.520;
        # the pass alone 0.365)
        fb = fold and not HIF8_V32 and fast == LANE_E4M3 and cnt > 0 and (seg == 8 or seg == 16) and \
            cnt % 256 == 0
        masked = absm != np.uint32(0xFFFFFFFF)
        # without AVX-512, HiF8 GroupN 8/16/32 (no MaxAbs) on a row of whole 8-group blocks: the keys taken in
        # the lookup loop (_hif8_pass_groups); the unit lane's GroupN 64/128 (no MaxAbs) too, as GroupN-32
        # subgroups combined after the row's pass (_gmo_combine; docs/performance.md, stop 46)
        hg = fold and not HIF8_V32 and fast != LANE_E4M3 and not masked and cnt > 0 and \
            (((seg == 8 or seg == 16 or seg == 32) and cnt % (8 * seg) == 0)
             or (u and (seg == 64 or seg == 128) and cnt % 256 == 0 and cnt % seg == 0))
        # without AVX-512 (with AVX2 and FMA: E4M3_GRP), E4M3 GroupN 8/16/32 (no MaxAbs) on a row of whole 8-group
        # steps, and the unit lane's GroupN 32/64/128 with MaxAbs or not on a row of whole 256-element steps: the
        # conversion and the groups' maxima (GroupMaxOut bits, _GMO_BITS) in one loop (_e4m3_pass_groups,
        # _e4m3_pass_groups_unit); before the blocks form
        eg = fold and E4M3_GRP and fast == LANE_E4M3 and cnt > 0 and \
            (((seg == 8 or seg == 16 or seg == 32) and not masked and cnt % (8 * seg) == 0)
             or (u and (seg == 32 or seg == 64 or seg == 128) and cnt % 256 == 0 and cnt % seg == 0))
        gkr = _borrow(gk, g0, g0 + ng)
        rmb = np.uint32(0)  # (hg: the row's maximum bits from the pass)
        if eg:
            if same:
                w = _e4m3_pass_groups(a_, o_, mps, None, gkr, seg, False, sat)
            elif splat:
                w = _e4m3_pass_groups(a_, o_, mps, mns, gkr, seg, False, sat)
            elif u and (masked or seg > 32):
                w = _e4m3_pass_groups_unit(a_, o_, mp_, mn_, gkr, seg, sat, masked)
            else:
                w = _e4m3_pass_groups(a_, o_, mp_, mn_, gkr, seg, u, sat)
        elif hg:
            if seg > 32:  # the unit lane's GroupN 64/128: GroupN-32 subgroups' bits in gm, then combined
                sub = gm[0:cnt // 32]
                w, rmb = _hif8_pass_groups(a_, o_, mp_, mn_, keys, sub, 32, True)
                _gmo_combine(sub, gkr, seg // 32)
            elif same:
                w, rmb = _hif8_pass_groups(a_, o_, mps, None, keys, gkr, seg, False)
            else:
                w, rmb = _hif8_pass_groups(a_, o_, mp_, mn_, keys, gkr, seg, u)
        elif k16 and absm != np.uint32(0xFFFFFFFF):
            if same:
                w = _fp8_pass_keys16(False, a_, o_, mps, None, keys, gkr, gm, absm)
            elif splat:
                w = _fp8_pass_keys16(False, a_, o_, mps, mns, keys, gkr, gm, absm)
            else:
                w = _fp8_pass_keys16(u, a_, o_, mp_, mn_, keys, gkr, gm, absm)
        elif k16:
            if same:
                w = _fp8_pass_keys16(False, a_, o_, mps, None, keys, gkr, gm)
            elif splat:
                w = _fp8_pass_keys16(False, a_, o_, mps, mns, keys, gkr, gm)
            else:
                w = _fp8_pass_keys16(u, a_, o_, mp_, mn_, keys, gkr, gm)
        elif k8 and absm != np.uint32(0xFFFFFFFF):
            if same:
                w = _fp8_pass_keys8(fast != LANE_E4M3, False, a_, o_, mps, None, ovf_pos, ovf_neg, keys, gkr, gm,
                                    absm)
            elif splat:
                w = _fp8_pass_keys8(fast != LANE_E4M3, False, a_, o_, mps, mns, ovf_pos, ovf_neg, keys, gkr, gm,
                                    absm)
            else:
                w = _fp8_pass_keys8(fast != LANE_E4M3, u, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, gkr, gm, absm)
        elif k8:
            if same:
                w = _fp8_pass_keys8(fast != LANE_E4M3, False, a_, o_, mps, None, ovf_pos, ovf_neg, keys, gkr, gm)
            elif splat:
                w = _fp8_pass_keys8(fast != LANE_E4M3, False, a_, o_, mps, mns, ovf_pos, ovf_neg, keys, gkr, gm)
            else:
                w = _fp8_pass_keys8(fast != LANE_E4M3, u, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, gkr, gm)
        elif fz and absm != np.uint32(0xFFFFFFFF):  # MaxAbs: the sources' magnitudes (masked maxima)
            if same:
                w = _fp8_pass_fold(fast != LANE_E4M3, False, a_, o_, mps, None, ovf_pos, ovf_neg, keys, seg, gm,
                                   absm)
            elif splat:
                w = _fp8_pass_fold(fast != LANE_E4M3, False, a_, o_, mps, mns, ovf_pos, ovf_neg, keys, seg, gm,
                                   absm)
            else:
                w = _fp8_pass_fold(fast != LANE_E4M3, u, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, seg, gm, absm)
        elif fz:
            if same:
                w = _fp8_pass_fold(fast != LANE_E4M3, False, a_, o_, mps, None, ovf_pos, ovf_neg, keys, seg, gm)
            elif splat:
                w = _fp8_pass_fold(fast != LANE_E4M3, False, a_, o_, mps, mns, ovf_pos, ovf_neg, keys, seg, gm)
            else:
                w = _fp8_pass_fold(fast != LANE_E4M3, u, a_, o_, mp_, mn_, ovf_pos, ovf_neg, keys, seg, gm)
        elif fb:  # E4M3 only
            if same:
                w = _fp8_pass_blocks(False, a_, o_, mps, None, ovf_pos, ovf_neg, seg, gkr, masked)
            elif splat:
                w = _fp8_pass_blocks(False, a_, o_, mps, mns, ovf_pos, ovf_neg, seg, gkr, masked)
            else:
                w = _fp8_pass_blocks(u, a_, o_, mp_, mn_, ovf_pos, ovf_neg, seg, gkr, masked)
        elif fast == LANE_E4M3:
            if u:
                w = _e4m3_pass_unit(a_, o_, mp_, mn_, ovf_pos, ovf_neg)
            elif same:
                w = _e4m3_pass(a_, o_, mps, None, ovf_pos, ovf_neg)
            elif splat:
                w = _e4m3_pass(a_, o_, mps, mns, ovf_pos, ovf_neg)
            else:
                w = _e4m3_pass(a_, o_, mp_, mn_, ovf_pos, ovf_neg)
        elif same:
            w = _hif8_pass(a_, o_, mps, None, keys, False)
        elif splat:
            w = _hif8_pass(a_, o_, mps, mns, keys, False)
        else:
            w = _hif8_pass(a_, o_, mp_, mn_, keys, u)
        res = np.int64(w) & _ALL_FLAGS
        if (w & np.uint32(_RARE)) != np.uint32(0):
            if fast == LANE_E4M3:
                res = _row_e4m3_rne(a_, o_, scale[qb:qb + cnt], alpha[rb0:rb0 + cnt], mp_, mn_, relu, sat, spec,
                                    fold, absm, seg, gk[g0:g0 + ng], gs[g0:g0 + ng])
            else:
                res = _row_hif8_rhb(a_, o_, scale[qb:qb + cnt], alpha[rb0:rb0 + cnt], mp_, mn_, relu, sat, spec,
                                    fold, absm, seg, gk[g0:g0 + ng], gs[g0:g0 + ng], keys)
        elif hg or eg:
            # gkr holds the groups' GroupMaxOut bits (_hif8_pass_groups / _e4m3_pass_groups), every group a number
            res |= _GMO_BITS
            if row_en:  # the row's maximum bits (before RowInit) for _tile_rows
                row_out[i] = rmb if hg else _gmo_rowmax(gkr, 0, gkr.size)
        elif k8 or k16:
            _fp8_neg_fix(a_, gm, gkr, seg)
        elif fz:
            _fold_from_maxima(a_, gm, seg, gkr)
        elif fold and not fb and not hg and not eg:
            _fp8_fold_groups(a_, absm, seg, gkr)
        if fold:  # RowMax / GroupMax now, the row's keys still in L1 (_fold_row_finish)
            res, nt_any = _fold_row_finish(i, base, cnt, res, gkr, _borrow(gs, g0, g0 + ng), ng, seg, group_n, acc,
                                           group_out, row_en, row_out, has_init, init, red_t, max_abs, nt_any)
        rowflags[i] = res
    return nt_any


def _fp8_rows_none(fast: int, i0: int, i1: int, acc: Any, n: int, total: int, out: Any, scale: Any, alpha: Any,
                   scale32: Any, alpha32: Any, qrow: int, rrow: int, relu: int, sat: bool, spec: Any, absm: Any,
                   fold: bool, group_n: int, ngs: int, gk: Any, gs: Any, keys: Any, rowflags: Any, row_en: bool,
                   row_out: Any, group_out: Any, has_init: bool, init: Any, red_t: int, max_abs: bool) -> bool:
    return False  # never called: E4M3/HiF8 write uint8


# Each compiled tile-kernel specialization writes one output carrier (uint8, uint16 or uint32) and
# needs only the row loops that write it: BF16/FP16 and the S16 offset modes write uint16, E4M3/HiF8
# and S8/S4X2 uint8, nothing fast writes uint32.  The row-loop calls of :func:`_tile_kernel` go through
# the gates below (numba overloads chosen by the carrier at type inference), so a specialization
# never compiles loops it cannot run: cold compile time, not speed (the ``fast`` codes stay runtime).


def _s32_rows(fast: int, acc: Any, base: int, cnt: int, out: Any, fl: Any, want_flags: bool, pb: int, relu: int,
              offw: int, dst: int, mode: int, sat: bool, scale: Any, alpha: Any, offs: Any, offs_f: Any, blo: Any,
              bhi: Any, s32p: Any, s32rne: int, max_abs: bool, group_n: int, group_out: Any, gbase: int, gscr: Any
              ) -> Tuple[int, int, int]:
    """The S32 offset row loops (compiled gate): ``fast`` 7 :func:`_row_s32_int`, else
    :func:`_row_s32_offset` (returns its flags, 0, 0)."""
    raise NotImplementedError  # pragma: no cover - only called from compiled code


def _s32_rows_narrow(fast: int, acc: Any, base: int, cnt: int, out: Any, fl: Any, want_flags: bool, pb: int,
                     relu: int, offw: int, dst: int, mode: int, sat: bool, scale: Any, alpha: Any, offs: Any,
                     offs_f: Any, blo: Any, bhi: Any, s32p: Any, s32rne: int, max_abs: bool, group_n: int,
                     group_out: Any, gbase: int, gscr: Any
                     ) -> Tuple[int, int, int]:
    if fast == 7:
        return _row_s32_int(acc, base, cnt, out, pb, relu, offw, dst, mode, sat, scale, alpha, offs_f, blo, bhi,
                            s32p, s32rne, max_abs, group_n, group_out, gbase, gscr)
    return _row_s32_offset(acc, base, cnt, out, fl, want_flags, pb, relu, offw, dst, mode, sat, scale, alpha,
                           offs), 0, 0


def _s32_rows_none(fast: int, acc: Any, base: int, cnt: int, out: Any, fl: Any, want_flags: bool, pb: int,
                   relu: int, offw: int, dst: int, mode: int, sat: bool, scale: Any, alpha: Any, offs: Any,
                   offs_f: Any, blo: Any, bhi: Any, s32p: Any, s32rne: int, max_abs: bool, group_n: int,
                   group_out: Any, gbase: int, gscr: Any
                   ) -> Tuple[int, int, int]:
    return 0, 0, 0  # never called: the S32 offset modes write 8- or 16-bit carriers


if NUMBA_AVAILABLE:  # pragma: no branch
    from numba.extending import overload as _overload

    def _gate(stub: Any, choose: Any, impl: Any) -> None:
        """Register ``choose`` (output carrier bits -> implementation) as the numba overload of ``stub``;
        numba wants the typing function's parameters, annotations included, to be the implementation's."""
        out_arg = "o_" if "o_" in inspect.signature(impl).parameters else "out"

        def typing(*args: Any) -> Any:
            return choose(args[list(inspect.signature(impl).parameters).index(out_arg)].dtype.bitwidth)

        typing.__signature__ = inspect.signature(impl)  # type: ignore[attr-defined]
        _overload(stub)(typing)

    @_overload(_mult_at)
    def _mult_at_ol(m: Any, j: Any, same: Any = None) -> Any:
        def row(m: Any, j: Any, same: Any = None) -> Any:
            return m[j]

        def one(m: Any, j: Any, same: Any = None) -> Any:
            return m

        def same_row(m: Any, j: Any, same: Any = None) -> Any:
            return same[j]

        def same_one(m: Any, j: Any, same: Any = None) -> Any:
            return same

        if isinstance(m, _types.NoneType):
            return same_row if isinstance(same, _types.Array) else same_one
        return row if isinstance(m, _types.Array) else one

    _gate(_s32_rows, lambda bits: _s32_rows_narrow if bits in (8, 16) else _s32_rows_none, _s32_rows_narrow)
    _gate(_fp8_rows, lambda bits: _fp8_rows_u8 if bits == 8 else _fp8_rows_none, _fp8_rows_u8)
    _gate(_fp16x_rows, lambda bits: _fp16x_rows_u16 if bits == 16 else _fp16x_rows_none, _fp16x_rows_u16)


@njit
def _row_s32_offset(acc: Any, base: int, cnt: int, out: Any, fl: Any, want_flags: bool, pb: int,
                    relu: int, offw: int, dst: int, mode: int, sat: bool,
                    scale: Any, alpha: Any, offs: Any) -> int:
    """S32 source with an offset (S8/S4X2/S16 destinations): product, S5/S9/S17 intermediate
    (RNE via rint, other modes via _round_int), offset, Sat clamp or wrap -- as _element."""
    lim = np.float64(1 << (offw - 1))
    lo, hi, mask = _int_range(dst)
    ilo = np.int64(lo)
    ihi = np.int64(hi)
    f_or = 0
    a_ = acc[base:base + cnt]
    o_ = out[base:base + cnt]
    f_ = fl[base:base + cnt] if want_flags else fl[0:0]
    sc_ = scale[pb:pb + cnt]
    of_ = offs[pb:pb + cnt]
    al_ = alpha[pb:pb + cnt] if relu >= 2 else alpha[0:0]
    for j in range(cnt):
        sv = np.float64(np.int32(a_[j]))
        mult = sc_[j]
        if sv < 0.0:
            if relu == 1:
                mult = 0.0
            elif relu >= 2:
                mult = al_[j]
        p = sv * mult
        if mode == R_RNE:
            r = np.rint(p)
        else:
            r = _round_int(p, mode)
        f = _NX if r != p else 0
        if r > lim - 1.0:
            r = lim - 1.0
            f = _OF_NX
        if r < -lim:
            r = -lim
            f = _OF_NX
        final = np.int64(r) + of_[j]
        if final > ihi or final < ilo:
            f = _OF_NX
            if sat:
                final = ihi if final > ihi else ilo
        o_[j] = final & mask
        if want_flags:
            f_[j] = f
        f_or |= f
    return f_or


@njit(inline="always")
def _round_mode(p: float, mode: int) -> float:
    """FloatingToInteger of a finite float64 under ``mode``, select-only (vectorizes): the
    rules of :func:`_round_int` written as ``floor(p) + up``.  ``p - floor(p)`` is exact
    except for a negative ``p`` of tiny magnitude, where it rounds to at most 1.0 and
    every decision below is unchanged."""
    lower = np.floor(p)
    frac = p - lower
    hl = lower * 0.5
    odd = hl != np.floor(hl)
    gt = frac > 0.5
    eq = frac == 0.5
    nz = frac != 0.0
    if mode == R_RNE:
        up = gt | (eq & odd)
    elif mode == R_RNA:
        up = gt | (eq & (p > 0.0))
    elif mode == R_RHB:
        up = gt | eq
    elif mode == R_RTP:
        up = nz
    elif mode == R_RTZ:
        up = nz & (p < 0.0)
    elif mode == R_RTO:
        up = nz & (~odd)
    else:  # RTM
        up = frac > 1.0
    return lower + (1.0 if up else 0.0)


#: 1.5 * 2**52: ``p + _RNE_MAGIC`` (|p| < 2**51) is rounded by the hardware to the integer nearest
#: ``p`` (ties to even, as 2**52 + 2**51 is even), and that integer sits in the low bits of its encoding
_RNE_MAGIC = 6755399441055744.0


# ---------------------------------------------------------------------------
# Eight int32 lanes as one value (one AVX2 register): the S32 rows' GroupMax fold
#
# LLVM vectorizes a whole-row loop by itself, but a loop restarted per GroupN group pays a
# vector preamble, runtime alias checks and four horizontal reductions per group (about as
# much as the group pass it would replace).  Written with these explicit lanes, the group loop
# keeps its NX/OF accumulators as vectors across groups and reduces only each group's maximum
# and minimum (``llvm.vector.reduce``).

if NUMBA_AVAILABLE:  # pragma: no branch
    from numba.core import cgutils as _cgutils
    from numba.extending import models as _models
    from numba.extending import register_model as _register_model

    def _llvm_fn(builder: Any, name: str, ret: Any, args: Any) -> Any:
        return _cgutils.get_or_insert_function(builder.module, _ir.FunctionType(ret, args), name)

    def _lane_ptr(context: Any, builder: Any, aty: Any, arr: Any, j: Any, vt: Any) -> Any:
        """Pointer to element ``j`` of a 1-D contiguous array, as a ``vt`` pointer (no bounds check)."""
        data = context.make_array(aty)(context, builder, arr).data
        return builder.bitcast(builder.gep(data, [j]), vt.as_pointer())

    def _i32_lanes(n: int) -> Tuple[Any, ...]:
        """The type of ``n`` int32 lanes as one value (LLVM ``<n x i32>``, only inside compiled code)
        and its intrinsics: ``(type, llvm vector type, splat(builder, x, vt), load, store, splat,
        binary(op), reduce(op), rne)``.  ``load(arr, j)``: elements ``j .. j + n - 1`` of a contiguous
        1-D int32/uint32 array; ``store(arr, j, v)``: the low 8/16 bits of each lane to elements ``j ..
        j + n - 1`` of a contiguous 1-D 8- or 16-bit array (the narrowing store of a scalar ``o_[j] =
        v``), the whole lanes to a 32-bit one; ``splat(x)``: one integer of any width, truncated to 32 bits, in every lane;
        ``binary(op)``: lane-wise ``smax``/``smin`` (signed), ``umax``/``umin`` (unsigned), ``and``,
        ``or``, ``xor``, ``add`` (wrapping); ``reduce(op)``: the ``smax``/``smin``/``umax``/``umin``/``or``
        of the lanes as an int32; ``rne(x, sc)``: per lane the low 32 bits of the encoding of ``fma(x,
        sc, 1.5 * 2**52)`` in float64 (see :func:`_s32_rne_lane`), ``sc`` one float64 multiplier or
        ``n`` multipliers as float32 bits.  No bounds checks."""
        class _Lanes(_types.Type):
            def __init__(self) -> None:
                super().__init__(name=f"I32x{n}")

        lanes = _Lanes()
        vt = _ir.VectorType(_ir.IntType(32), n)

        @_register_model(_Lanes)
        class _LanesModel(_models.PrimitiveModel):
            def __init__(self, dmm: Any, fe_type: Any) -> None:
                super().__init__(dmm, fe_type, vt)

        def splat_ir(builder: Any, x: Any, t: Any) -> Any:
            v = builder.insert_element(_ir.Constant(t, _ir.Undefined), x, _ir.Constant(_ir.IntType(32), 0))
            return builder.shuffle_vector(v, _ir.Constant(t, _ir.Undefined), _ir.Constant(vt, [0] * n))

        @_intrinsic
        def load(typingctx: Any, arr: Any, j: Any) -> Any:
            if not (isinstance(arr, _types.Array) and arr.ndim == 1 and arr.layout == "C"
                    and arr.dtype in (_types.int32, _types.uint32) and isinstance(j, _types.Integer)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return builder.load(_lane_ptr(context, builder, signature.args[0], args[0], args[1], vt), align=4)

            return lanes(arr, j), codegen

        @_intrinsic
        def store(typingctx: Any, arr: Any, j: Any, v: Any) -> Any:
            if not (isinstance(arr, _types.Array) and arr.ndim == 1 and arr.layout == "C"
                    and str(arr.dtype) in ("int8", "uint8", "int16", "uint16", "int32", "uint32") and v == lanes):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                bits = signature.args[0].dtype.bitwidth
                nt = _ir.VectorType(_ir.IntType(bits), n)
                builder.store(args[2] if bits == 32 else builder.trunc(args[2], nt),
                              _lane_ptr(context, builder, signature.args[0], args[0], args[1], nt), align=bits // 8)
                return context.get_dummy_value()

            return _types.none(arr, j, v), codegen

        @_intrinsic
        def splat(typingctx: Any, x: Any) -> Any:
            if not isinstance(x, _types.Integer):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                i32 = _ir.IntType(32)
                w = args[0].type.width
                s = args[0] if w == 32 else (builder.trunc(args[0], i32) if w > 32 else builder.sext(args[0], i32))
                return splat_ir(builder, s, vt)

            return lanes(x), codegen

        def binary(op: str) -> Any:
            @_intrinsic
            def apply(typingctx: Any, a: Any, b: Any) -> Any:
                if a != lanes or b != lanes:
                    return None

                def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                    if op in ("smax", "smin", "umax", "umin"):
                        return builder.call(_llvm_fn(builder, f"llvm.{op}.v{n}i32", vt, [vt, vt]), list(args))
                    return {"and": builder.and_, "or": builder.or_, "xor": builder.xor, "add": builder.add}[op](*args)

                return lanes(a, b), codegen
            return apply

        def reduce(op: str) -> Any:
            @_intrinsic
            def apply(typingctx: Any, a: Any) -> Any:
                if a != lanes:
                    return None

                def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                    return builder.call(_llvm_fn(builder, f"llvm.vector.reduce.{op}.v{n}i32", _ir.IntType(32), [vt]),
                                        [args[0]])

                return _types.int32(a), codegen
            return apply

        @_intrinsic
        def rne(typingctx: Any, x: Any, sc: Any) -> Any:
            if x != lanes or not (sc == lanes or sc == _types.float64):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                dn = _ir.VectorType(_ir.DoubleType(), n)
                xd = builder.sitofp(args[0], dn)
                if signature.args[1] == lanes:
                    sd = builder.fpext(builder.bitcast(args[1], _ir.VectorType(_ir.FloatType(), n)), dn)
                else:
                    sd = splat_ir(builder, args[1], dn)
                p = builder.call(_llvm_fn(builder, f"llvm.fma.v{n}f64", dn, [dn, dn, dn]),
                                 [xd, sd, _ir.Constant(dn, [_RNE_MAGIC] * n)])
                return builder.trunc(builder.bitcast(p, _ir.VectorType(_ir.IntType(64), n)), vt)

            return lanes(x, sc), codegen

        return lanes, vt, splat_ir, load, store, splat, binary, reduce, rne

    (_I32X8, _V8, _splat, _v8_load_i, _v8_store_i, _v8_splat_i, _v8_binary, _v8_reduce,
     _v8_rne_i) = _i32_lanes(8)

    @_intrinsic
    def _v8_no_runtime_unroll_i(typingctx: Any) -> Any:
        """An empty ``convergent`` marker (emits no instruction): LLVM does not runtime-unroll a loop
        that holds one.  Numba cannot set the ``llvm.loop.unroll.runtime.disable`` metadata that
        LLVM's own vectorizer gives the loops it vectorizes; unrolled by 2, the one-word S32 loop
        runs out of the 16 AVX2 registers (spills and register copies, 34 instead of 28 vector
        instructions per 8 elements)."""
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            call = builder.call(_ir.InlineAsm(_ir.FunctionType(_ir.VoidType(), []), "", "", side_effect=False), [])
            call.attributes.add("convergent")
            return context.get_dummy_value()

        return _types.none(), codegen

    @_intrinsic
    def _prefetch_i(typingctx: Any, arr: Any, j: Any) -> Any:
        """A software prefetch (``llvm.prefetch``, read, locality 2: ``prefetcht1``) of the cache line of
        element ``j`` of a contiguous 1-D array; no bounds check needed (a prefetch never faults)."""
        if not (isinstance(arr, _types.Array) and arr.ndim == 1 and arr.layout == "C" and isinstance(j, _types.Integer)):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            i8p = _ir.IntType(8).as_pointer()
            i32 = _ir.IntType(32)
            ptr = builder.bitcast(builder.gep(data, [args[1]]), i8p)
            builder.call(_llvm_fn(builder, "llvm.prefetch.p0i8", _ir.VoidType(), [i8p, i32, i32, i32]),
                         [ptr, _ir.Constant(i32, 0), _ir.Constant(i32, 2), _ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return _types.none(arr, j), codegen

    @_intrinsic
    def _store_nt16_i(typingctx: Any, dst: Any, j: Any, src: Any, k: Any) -> Any:
        """``dst[j:j + 16] = src[k:k + 16]`` (uint32 arrays, contiguous) as one 64-byte non-temporal
        vector store (``vmovntdq``; two 32-byte ones without AVX-512): the line is written without
        being read for ownership first.  ``dst``'s element ``j`` must be 64-byte aligned, and both
        ranges in bounds (neither checked).  Weakly ordered: :func:`_sfence` before an ordinary store
        to the same lines or before another thread may read them."""
        if not (isinstance(dst, _types.Array) and dst.ndim == 1 and dst.layout == "C"
                and isinstance(src, _types.Array) and src.ndim == 1 and src.layout == "C"
                and isinstance(j, _types.Integer) and isinstance(k, _types.Integer)):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            vt = _ir.VectorType(_ir.IntType(32), 16)
            sp = _lane_ptr(context, builder, signature.args[2], args[2], args[3], vt)
            dp = _lane_ptr(context, builder, signature.args[0], args[0], args[1], vt)
            v = builder.load(sp)
            v.align = 4
            st = builder.store(v, dp)
            st.align = 64
            st.set_metadata("nontemporal", builder.module.add_metadata([_ir.Constant(_ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return _types.none(dst, j, src, k), codegen

    @_intrinsic
    def _sfence_i(typingctx: Any) -> Any:
        """``sfence``: every earlier non-temporal store (:func:`_store_nt16`) is ordered before any later
        store of this thread (x86-64)."""
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            builder.call(_llvm_fn(builder, "llvm.x86.sse.sfence", _ir.VoidType(), []), [])
            return context.get_dummy_value()

        return _types.none(), codegen

    @_intrinsic
    def _addr_i(typingctx: Any, arr: Any) -> Any:
        """The address of element 0 of a 1-D array, as an integer (for alignment only)."""
        if not (isinstance(arr, _types.Array) and arr.ndim == 1):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            return builder.ptrtoint(data, context.get_value_type(_types.intp))

        return _types.intp(arr), codegen

    @_intrinsic
    def _borrow_i(typingctx: Any, arr: Any, lo: Any, hi: Any) -> Any:
        """``arr[lo:hi]`` of a contiguous 1-D array as a borrowed view: the same data, no reference to
        the array's memory (meminfo NULL), so creating it, passing it and dropping it take no
        reference-count operation (numba's NRT_incref/decref skip a NULL meminfo; a slice's are atomic
        updates of the array's one counter, which every row of both threads shares).  ``0 <= lo <=
        hi <= arr.size`` (not checked); the view must not outlive the call that holds ``arr``."""
        if not (isinstance(arr, _types.Array) and arr.ndim == 1 and arr.layout == "C"
                and isinstance(lo, _types.Integer) and isinstance(hi, _types.Integer)):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            from numba.np.arrayobj import populate_array
            aty = signature.args[0]
            src = context.make_array(aty)(context, builder, args[0])
            intp = context.get_value_type(_types.intp)
            lo_ = context.cast(builder, args[1], signature.args[1], _types.intp)
            hi_ = context.cast(builder, args[2], signature.args[2], _types.intp)
            dst = context.make_array(aty)(context, builder)
            item = context.get_abi_sizeof(context.get_data_type(aty.dtype))
            populate_array(dst, data=builder.gep(src.data, [lo_]), shape=[builder.sub(hi_, lo_)],
                           strides=[_ir.Constant(intp, item)], itemsize=_ir.Constant(intp, item), meminfo=None)
            return dst._getvalue()

        return arr(arr, lo, hi), codegen

    def _fold16_make(nv: int, max_abs: bool = False, lanes: int = 16, fixneg: bool = False) -> Any:
        """The intrinsic ``_fold16_<16 nv>(a, s, gk, g)``: the int32 maxima of ``a[s + q seg ..
        s + q seg + seg]`` (``seg`` = 16 ``nv``) for the sixteen groups q = 0 .. 15, each group
        reduced to 16 lanes by vertical maxima of its ``nv`` vectors, then the sixteen vectors to one
        by four rounds of pairwise shuffles and maxima (the lanes of two groups halved into one
        vector per round), so no group pays a horizontal reduction of its own.  ``gk[g + q]`` gets
        the order key of maximum q when it is >= 0 (``b ^ 0x80000000``), else ``~b`` (a placeholder:
        the caller redoes that group with its minimum); returns the mask of those groups (bit q).
        No bounds check: ``s + 256 nv <= a.size``, ``g + 16 <= gk.size``; uint32 arrays.
        ``lanes`` 8 (with ``nv`` 1): GroupN 8, ``seg`` = 8, eight vectors of two groups each and three
        rounds (``s + 128 <= a.size``).  ``max_abs``: every source's sign bit cleared first (MaxAbs's
        mask 0x7FFFFFFF: every maximum >= 0, the mask returned 0).  ``fixneg``: the sixteen groups' int32
        minima instead (the same tree, ``smin``), and ``gk[g + q]`` only where it holds a placeholder (below
        0x80000000: a group whose maximum is negative) replaced by ``~minimum`` (its key, as
        :func:`_smallest_i32` redoes it), the other keys kept; returns 0.  From contiguous loads: LLVM
        vectorized the loop per group of :func:`_smallest_i32` into gathers (Zen 4, FP16 GroupN 8 on
        standard normal data: 7-11% of :func:`_fp16x_fused`'s time)."""
        @_intrinsic
        def fold16(typingctx: Any, arr: Any, s: Any, gk: Any, g: Any) -> Any:
            for a in (arr, gk):
                if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C"
                        and a.dtype in (_types.int32, _types.uint32)):
                    return None
            if not all(isinstance(t, _types.Integer) for t in (s, g)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                i32 = _ir.IntType(32)
                v16 = _ir.VectorType(i32, 16)
                smax = _llvm_fn(builder, "llvm.smin.v16i32" if fixneg else "llvm.smax.v16i32", v16, [v16, v16])
                data = context.make_array(signature.args[0])(context, builder, args[0]).data
                s_ = context.cast(builder, args[1], signature.args[1], _types.intp)
                base = builder.bitcast(builder.gep(data, [s_]), v16.as_pointer())
                r = maxima_body(builder, base, smax, v16)
                if fixneg:  # the minima's keys where the old key is a placeholder
                    gdata = context.make_array(signature.args[2])(context, builder, args[2]).data
                    g_ = context.cast(builder, args[3], signature.args[3], _types.intp)
                    gp = builder.bitcast(builder.gep(gdata, [g_]), v16.as_pointer())
                    old = builder.load(gp, align=4)
                    ph = builder.icmp_unsigned("<", old, _ir.Constant(v16, [-2147483648] * 16))
                    builder.store(builder.select(ph, builder.xor(r, _ir.Constant(v16, [-1] * 16)), old), gp,
                                  align=4)
                    return _ir.Constant(i32, 0)
                neg = builder.icmp_signed("<", r, _ir.Constant(v16, [0] * 16))
                key = builder.select(neg, builder.xor(r, _ir.Constant(v16, [-1] * 16)),
                                     builder.xor(r, _ir.Constant(v16, [-2147483648] * 16)))
                gdata = context.make_array(signature.args[2])(context, builder, args[2]).data
                g_ = context.cast(builder, args[3], signature.args[3], _types.intp)
                builder.store(key, builder.bitcast(builder.gep(gdata, [g_]), v16.as_pointer()), align=4)
                return builder.zext(builder.bitcast(neg, _ir.IntType(16)), i32)

            def maxima_body(builder: Any, base: Any, smax: Any, v16: Any) -> Any:
                vecs = []
                owners = []

                def load(k: int) -> Any:
                    x = builder.load(builder.gep(base, [_ir.Constant(_ir.IntType(64), k)]), align=4)
                    return builder.and_(x, _ir.Constant(v16, [0x7FFFFFFF] * 16)) if max_abs else x

                if lanes == 8:  # vector k: groups 2k (lanes 0-7) and 2k + 1 (lanes 8-15)
                    for k in range(8):
                        vecs.append(load(k))
                        owners.append([2 * k] * 8 + [2 * k + 1] * 8)
                for q in range(16 if lanes == 16 else 0):
                    xs = [load(q * nv + c) for c in range(nv)]
                    while len(xs) > 1:
                        xs = [builder.call(smax, [xs[k], xs[k + 1]]) for k in range(0, len(xs) - 1, 2)] + \
                             ([xs[-1]] if len(xs) % 2 else [])
                    vecs.append(xs[0])
                    owners.append([q] * 16)
                h = lanes // 2
                while len(vecs) > 1:
                    nvecs, nown = [], []
                    for k in range(0, len(vecs), 2):
                        x, y, ox, oy = vecs[k], vecs[k + 1], owners[k], owners[k + 1]
                        lo, hi, own = [], [], []
                        for blk in range(0, 16, 2 * h):
                            lo += [blk + i for i in range(h)] + [16 + blk + i for i in range(h)]
                            hi += [blk + h + i for i in range(h)] + [16 + blk + h + i for i in range(h)]
                            own += [ox[blk]] * h + [oy[blk]] * h
                        a1 = builder.shuffle_vector(x, y, _ir.Constant(v16, lo))
                        a2 = builder.shuffle_vector(x, y, _ir.Constant(v16, hi))
                        nvecs.append(builder.call(smax, [a1, a2]))
                        nown.append(own)
                    vecs, owners = nvecs, nown
                    h //= 2
                return builder.shuffle_vector(vecs[0], _ir.Constant(v16, None),
                                              _ir.Constant(v16, [owners[0].index(q) for q in range(16)]))

            return _types.int32(arr, s, gk, g), codegen
        return fold16

    #: the sixteen GroupN-128 maxima at once (Zen 5, one row in L1: 15 instructions per 128
    #: elements against ~50 for a vectorized loop per group)
    _fold16_128: Any = _fold16_make(8)

    #: :func:`_tr8_ir`'s three rounds: (lo, hi) lane picks from the pair (x, y) of 8-lane vectors; a pair's
    #: two picked lanes have one owner (checked there on the owners)
    _TR8_ROUNDS = [([0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]),
                   ([0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]),
                   ([0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15])]

    class _Tr8Pairs:
        """Eight groups' 8-lane int32 vectors reduced each to one lane by the binary LLVM function ``op`` (a
        maximum or minimum) as they arrive, the eight results in one vector in group order: :meth:`feed` takes a
        step's ``t``-th vector (``nv`` consecutive vectors a group, reduced vertically by ``op``), a group's
        vector goes to :func:`_tr8_ir`'s rounds as soon as the group completes and a pair of them as soon as
        both halves are there (at most a few vectors live); :meth:`reduced` the eight in group order.  One
        form for the E4M3 GroupN steps (:func:`_e4m3_grp`) and HiF8's all-negative groups
        (:func:`_hif8_lookg_make`)."""

        def __init__(self, builder: Any, op: Any, nv: int) -> None:
            self.builder, self.op, self.nv = builder, op, nv
            self.stack: List[Any] = []  # (round, vector, owners)
            self.cur: Any = None

        def feed(self, t: int, x: Any) -> None:
            nv = self.nv
            self.cur = x if t % nv == 0 else self.builder.call(self.op, [self.cur, x])
            if t % nv == nv - 1:
                self.push(self.cur, t // nv)

        def push(self, v: Any, q: int) -> None:
            stack = self.stack
            stack.append((0, v, [q] * 8))
            while len(stack) >= 2 and stack[-1][0] == stack[-2][0]:
                (lv, x, ox), (_, y, oy) = stack[-2], stack[-1]
                del stack[-2:]
                lo_, hi_ = _TR8_ROUNDS[lv]
                cat = ox + oy
                own = [cat[i] for i in lo_]
                assert own == [cat[i] for i in hi_]  # a pair's two lanes: one group
                a1 = self.builder.shuffle_vector(x, y, _ir.Constant(_V8, lo_))
                a2 = self.builder.shuffle_vector(x, y, _ir.Constant(_V8, hi_))
                stack.append((lv + 1, self.builder.call(self.op, [a1, a2]), own))

        def reduced(self) -> Any:
            assert len(self.stack) == 1 and self.stack[0][2] == list(range(8))  # the eight in group order
            return self.stack.pop()[1]

    def _tr8_ir(builder: Any, vecs: List[Any], op: Any) -> Any:
        """Eight 8-lane int32 vectors reduced each to one lane by the binary LLVM function ``op`` (a maximum),
        the eight results in one vector in their order: the vectors transposed by three rounds of pairwise
        shuffles and ``op`` (``vpunpck[lh]dq``, ``vpunpck[lh]qdq``, ``vperm2i128``: 21 instructions for the
        eight instead of seven each)."""
        owners = [[q] * 8 for q in range(8)]
        for lo_, hi_ in _TR8_ROUNDS:
            nvecs, nown = [], []
            for k in range(0, len(vecs), 2):
                cat = owners[k] + owners[k + 1]
                own = [cat[i] for i in lo_]
                assert own == [cat[i] for i in hi_]  # a pair's two lanes: one group
                a1 = builder.shuffle_vector(vecs[k], vecs[k + 1], _ir.Constant(_V8, lo_))
                a2 = builder.shuffle_vector(vecs[k], vecs[k + 1], _ir.Constant(_V8, hi_))
                nvecs.append(builder.call(op, [a1, a2]))
                nown.append(own)
            vecs, owners = nvecs, nown
        assert owners[0] == list(range(8))  # the results in the vectors' order
        return vecs[0]

    def _foldb_make(gsz: int, masked: bool) -> Any:
        """The intrinsic ``foldb(a, s, gk, g)`` of the FP8 rows' fold (:func:`_fp8_fold_groups`,
        :func:`_fp8_pass_blocks`): the int32 maxima of the ``gsz``-element groups of one block of ``a``
        from ``s`` (GroupN ``gsz`` 8 or a multiple of 16 up to 128; a block is 32 groups for GroupN 8, else
        16), eight groups at a time in 8-lane vectors (one AVX2 register): each group's elements reduced
        vertically to eight lanes (GroupN 8: its one vector; else its ``gsz / 16`` 16-lane vectors by
        vertical maxima, then their two halves), each element ANDed with 0x7FFFFFFF first when ``masked``
        (MaxAbs: the magnitude's bits; every masked value is >= 0); then the eight groups' vectors
        transposed by three rounds of pairwise shuffles and maxima (``vpunpck[lh]dq``, ``vpunpck[lh]qdq``,
        ``vperm2i128``: 21 instructions for eight groups), which leave the eight maxima in group order.
        ``gk[g + q]`` gets group q's order key when its maximum is >= 0 (``b ^ 0x80000000``), else ``~b``
        (a placeholder: the caller redoes that group with its smallest int32); returns the mask of those
        groups (bit q, int64).  No bounds check: the block within ``a``, ``g + 16`` (GroupN 8: ``g +
        32``) <= ``gk.size``; uint32 arrays.  (Until 2026-12-02 evening sixteen 16-lane vectors and four
        rounds, tuned on AVX-512: on this AVX2 Zen 3 each 16-lane shuffle is two or more, about twice the
        instructions of this form; h-fp8, issue 13.)"""
        nv = max(gsz // 16, 1)  # 16-lane vectors of one group (GroupN >= 16)
        ngb = 32 if gsz == 8 else 16  # groups in one block
        assert gsz == 8 or (gsz % 16 == 0 and 16 <= gsz <= 128)

        @_intrinsic
        def foldb(typingctx: Any, arr: Any, s: Any, gk: Any, g: Any) -> Any:
            for a in (arr, gk):
                if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C"
                        and a.dtype in (_types.int32, _types.uint32)):
                    return None
            if not all(isinstance(t, _types.Integer) for t in (s, g)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                i32 = _ir.IntType(32)
                i64 = _ir.IntType(64)
                v8 = _ir.VectorType(i32, 8)
                v16 = _ir.VectorType(i32, 16)
                smax8 = _llvm_fn(builder, "llvm.smax.v8i32", v8, [v8, v8])
                smax16 = _llvm_fn(builder, "llvm.smax.v16i32", v16, [v16, v16])
                data = context.make_array(signature.args[0])(context, builder, args[0]).data
                s_ = context.cast(builder, args[1], signature.args[1], _types.intp)
                gdata = context.make_array(signature.args[2])(context, builder, args[2]).data
                g_ = context.cast(builder, args[3], signature.args[3], _types.intp)
                res = _ir.Constant(i64, 0)
                for sb in range(ngb // 8):  # eight groups at a time
                    e0 = builder.add(s_, _ir.Constant(s_.type, 8 * gsz * sb))
                    vecs: List[Any] = []
                    for q in range(8):
                        if gsz == 8:
                            base8 = builder.bitcast(builder.gep(data, [e0]), v8.as_pointer())
                            x = builder.load(builder.gep(base8, [_ir.Constant(i64, q)]), align=4)
                            if masked:
                                x = builder.and_(x, _ir.Constant(v8, [0x7FFFFFFF] * 8))
                            vecs.append(x)
                            continue
                        base16 = builder.bitcast(builder.gep(data, [e0]), v16.as_pointer())
                        xs = []
                        for c in range(nv):
                            x = builder.load(builder.gep(base16, [_ir.Constant(i64, q * nv + c)]), align=4)
                            if masked:
                                x = builder.and_(x, _ir.Constant(v16, [0x7FFFFFFF] * 16))
                            xs.append(x)
                        while len(xs) > 1:
                            xs = [builder.call(smax16, [xs[k], xs[k + 1]]) for k in range(0, len(xs) - 1, 2)] + \
                                 ([xs[-1]] if len(xs) % 2 else [])
                        lo = builder.shuffle_vector(xs[0], xs[0], _ir.Constant(v8, list(range(8))))
                        hi = builder.shuffle_vector(xs[0], xs[0], _ir.Constant(v8, list(range(8, 16))))
                        vecs.append(builder.call(smax8, [lo, hi]))
                    r = _tr8_ir(builder, vecs, smax8)
                    neg = builder.icmp_signed("<", r, _ir.Constant(v8, [0] * 8))
                    key = builder.select(neg, builder.xor(r, _ir.Constant(v8, [-1] * 8)),
                                         builder.xor(r, _ir.Constant(v8, [-2147483648] * 8)))
                    gp = builder.gep(gdata, [builder.add(g_, _ir.Constant(g_.type, 8 * sb))])
                    builder.store(key, builder.bitcast(gp, v8.as_pointer()), align=4)
                    bits = builder.zext(builder.bitcast(neg, _ir.IntType(8)), i64)
                    res = builder.or_(res, builder.shl(bits, _ir.Constant(i64, 8 * sb)))
                return res

            return _types.int64(arr, s, gk, g), codegen
        return foldb

    _FOLDB = {(w, mk): _foldb_make(w, mk) for w in (8, 16, 32, 48, 64, 80, 96, 112, 128) for mk in (False, True)}
    _foldb_8, _foldb_8a = _FOLDB[8, False], _FOLDB[8, True]
    _foldb_16, _foldb_16a = _FOLDB[16, False], _FOLDB[16, True]
    _foldb_32, _foldb_32a = _FOLDB[32, False], _FOLDB[32, True]
    _foldb_48, _foldb_48a = _FOLDB[48, False], _FOLDB[48, True]
    _foldb_64, _foldb_64a = _FOLDB[64, False], _FOLDB[64, True]
    _foldb_80, _foldb_80a = _FOLDB[80, False], _FOLDB[80, True]
    _foldb_96, _foldb_96a = _FOLDB[96, False], _FOLDB[96, True]
    _foldb_112, _foldb_112a = _FOLDB[112, False], _FOLDB[112, True]
    _foldb_128, _foldb_128a = _FOLDB[128, False], _FOLDB[128, True]

    @njit
    def _foldb_seg(arr: Any, s: int, gk: Any, g: int, seg: int, masked: bool) -> int:
        """The block intrinsic of :func:`_foldb_make` for GroupN ``seg`` (8, or a multiple of 16 from
        16 to 128), MaxAbs's masked form with ``masked``: one block's keys from ``arr[s ..]`` to ``gk[g
        ..]``, the mask of the all-negative groups returned."""
        if masked:
            if seg == 128:
                return _foldb_128a(arr, s, gk, g)
            if seg == 64:
                return _foldb_64a(arr, s, gk, g)
            if seg == 32:
                return _foldb_32a(arr, s, gk, g)
            if seg == 16:
                return _foldb_16a(arr, s, gk, g)
            if seg == 8:
                return _foldb_8a(arr, s, gk, g)
            if seg == 48:
                return _foldb_48a(arr, s, gk, g)
            if seg == 96:
                return _foldb_96a(arr, s, gk, g)
            if seg == 80:
                return _foldb_80a(arr, s, gk, g)
            return _foldb_112a(arr, s, gk, g)
        if seg == 128:
            return _foldb_128(arr, s, gk, g)
        if seg == 64:
            return _foldb_64(arr, s, gk, g)
        if seg == 32:
            return _foldb_32(arr, s, gk, g)
        if seg == 16:
            return _foldb_16(arr, s, gk, g)
        if seg == 8:
            return _foldb_8(arr, s, gk, g)
        if seg == 48:
            return _foldb_48(arr, s, gk, g)
        if seg == 96:
            return _foldb_96(arr, s, gk, g)
        if seg == 80:
            return _foldb_80(arr, s, gk, g)
        return _foldb_112(arr, s, gk, g)

    _borrow: Any = _borrow_i
    _prefetch: Any = _prefetch_i
    _store_nt16: Any = _store_nt16_i
    _sfence: Any = _sfence_i
    _addr: Any = _addr_i
    _v8_no_runtime_unroll: Any = _v8_no_runtime_unroll_i
    _v8_load: Any = _v8_load_i
    _v8_store: Any = _v8_store_i
    _v8_splat: Any = _v8_splat_i
    _v8_rne: Any = _v8_rne_i
    _v8_max: Any = _v8_binary("smax")
    _v8_min: Any = _v8_binary("smin")
    _v8_and: Any = _v8_binary("and")
    _v8_or: Any = _v8_binary("or")
    _v8_xor: Any = _v8_binary("xor")
    _v8_add: Any = _v8_binary("add")
    _v8_hmax: Any = _v8_reduce("smax")
    _v8_hmin: Any = _v8_reduce("smin")
    _v8_hor: Any = _v8_reduce("or")

    def _v8_const(values: Any, bits: int = 32) -> Any:
        return _ir.Constant(_ir.VectorType(_ir.IntType(bits), len(values)), [int(v) & ((1 << bits) - 1) for v in values])

    def _mults_ok(mp: Any, mn: Any) -> bool:
        """Whether ``mp``/``mn`` type as a vector lane's multipliers: two contiguous float32 rows, two
        float32 scalars (one multiplier for every column: :func:`_mult_at`), or one float32 scalar
        and None (the same multiplier for either sign)."""
        if mp == _types.float32:
            return mn == mp or mn == _types.none
        return mn == mp and isinstance(mp, _types.Array) and mp.layout == "C" and mp.dtype == _types.float32

    def _mults_ir(context: Any, builder: Any, mty: Any, mpv: Any, mnv: Any, jv: Any, n: int,
                  same: bool = False) -> Tuple[Any, Any]:
        """The multipliers of ``n`` lanes from ``j`` (``<n x float>`` each): loaded from the rows, or
        the two scalars splatted (loop-invariant: LLVM hoists the broadcasts out of the pass's loop);
        ``same`` (``mn`` typed None): (mp splatted, None), one multiplier for every sign."""
        fk = _ir.VectorType(_ir.FloatType(), n)
        if isinstance(mty, _types.Array):
            return (builder.load(_lane_ptr(context, builder, mty, mpv, jv, fk), align=4),
                    builder.load(_lane_ptr(context, builder, mty, mnv, jv, fk), align=4))
        i32 = _ir.IntType(32)
        zero = _ir.Constant(_ir.VectorType(i32, n), [0] * n)

        def splat(v: Any) -> Any:
            e = builder.insert_element(_ir.Constant(fk, _ir.Undefined), v, _ir.Constant(i32, 0))
            return builder.shuffle_vector(e, _ir.Constant(fk, _ir.Undefined), zero)

        return splat(mpv), (None if same else splat(mnv))

    def _product_rz_ir(builder: Any, x: Any, mpf: Any, mnf: Any, n: int) -> Tuple[Any, Any]:
        """The exact product of ``n`` FP32 sources (bits ``x``, ``<n x i32>``, n a multiple of 16) and
        their multipliers (``mpf``/``mnf``, ``<n x float>``, of a positive / negative source; one blend
        on the sign bit), AVX-512 only: (pb, the bits of the product rounded toward zero onto float32,
        its sign included; eb, the bits of the remainder x m - p by a fused multiply-add rounded
        upward).  16 lanes at a time (embedded rounding, no exceptions, the MXCSR untouched).

        eb is 0 exactly when p is the exact product: a zero remainder is an exact zero sum, +0 in that
        mode; a nonzero one stays nonzero even where it underflows (a positive one rounds up to 2^-149
        or more, a negative one to a negative value or -0).  So pb | [eb != 0] is the exact product
        rounded *to odd* onto float32 (sign-magnitude), the value :func:`_hif8_product` and
        :func:`_e4m3_lane` get from a product rounded to nearest and two fused multiply-adds or a sign
        test of the remainder.  A product below 2^-149 gives pb = +-0 and eb != 0 (the odd neighbour
        2^-149); one above float32's range pb = +-the largest finite float32, eb != 0 (rounded to odd:
        the largest finite, which is odd); a NaN/Inf source a NaN/Inf pb (Inf times 0 the default NaN)."""
        fn = _ir.VectorType(_ir.FloatType(), n)
        vn = _ir.VectorType(_ir.IntType(32), n)
        i32 = _ir.IntType(32)
        f16 = _ir.VectorType(_ir.FloatType(), 16)
        neg = builder.icmp_signed("<", x, _ir.Constant(vn, [0] * n))
        m = mpf if mnf is None else builder.select(neg, mnf, mpf)  # mnf None: one multiplier, no blend
        xf = builder.bitcast(x, fn)
        mul = _llvm_fn(builder, "llvm.x86.avx512.mul.ps.512", f16, [f16, f16, i32])
        fma16 = _llvm_fn(builder, "llvm.x86.avx512.vfmadd.ps.512", f16, [f16, f16, f16, i32])
        ps, es = [], []
        for h in range(n // 16):
            sel = _ir.Constant(_ir.VectorType(i32, 16), list(range(16 * h, 16 * h + 16)))
            xh = builder.shuffle_vector(xf, xf, sel)
            mh = builder.shuffle_vector(m, m, sel)
            ph = builder.call(mul, [xh, mh, _ir.Constant(i32, 11)])  # toward zero, no exceptions
            ps.append(ph)
            es.append(builder.call(fma16, [xh, mh, builder.fneg(ph), _ir.Constant(i32, 10)]))  # upward
        while len(ps) > 1:  # the halves back into n lanes
            w = 2 * n // len(ps)
            ps = [builder.shuffle_vector(ps[i], ps[i + 1], _ir.Constant(_ir.VectorType(i32, w), list(range(w))))
                  for i in range(0, len(ps), 2)]
            es = [builder.shuffle_vector(es[i], es[i + 1], _ir.Constant(_ir.VectorType(i32, w), list(range(w))))
                  for i in range(0, len(es), 2)]
        return builder.bitcast(ps[0], vn), builder.bitcast(es[0], vn)

    def _hif8_key_ir(builder: Any, x: Any, mpf: Any, mnf: Any, n: int, high: bool = False,
                     unit: bool = False, rz: bool = False) -> Any:
        """The keys (:func:`_hif8_key`) of ``n`` lanes: FP32 bits ``x`` (``<n x i32>``) times the
        multipliers ``mpf``/``mnf`` (``<n x float>``) of a positive / negative source, as ``<n x i32>``
        (``high``: in the high 16 bits of each lane, the low 16 bits garbage).  ``rz`` (AVX-512, n a
        multiple of 16): the product by :func:`_product_rz_ir`, truncated once more onto 16 bits with
        the sticky bit of its low bits and remainder (rounding to odd twice is rounding to odd once);
        else as :func:`_hif8_product` (two fused multiply-adds).  ``unit``: both
        multipliers are 1 (``mpf``/``mnf`` not read): the product is the source itself, exact, so
        the key is x's own bits rounded to odd onto 16 bits, (x | sticky) >> 16 (a NaN/Inf source
        keeps a key of exponent 255)."""
        fn = _ir.VectorType(_ir.FloatType(), n)
        vn = _ir.VectorType(_ir.IntType(32), n)

        def k(v: int) -> Any:
            return _ir.Constant(vn, [v & 0xFFFFFFFF] * n)

        if unit:
            hk = builder.or_(x, builder.add(builder.and_(x, k(0xFFFF)), k(0xFFFF)))
            return hk if high else builder.lshr(hk, k(16))
        if rz:
            # p truncated (its bits pb), and whether it is inexact: the key is pb truncated to 16
            # bits, with bit 16 set when pb's low 16 bits or the remainder are not zero
            pb, eb = _product_rz_ir(builder, x, mpf, mnf, n)
            low = builder.or_(builder.and_(pb, k(0xFFFF)), eb)
            hk = builder.or_(pb, builder.select(builder.icmp_unsigned("!=", low, k(0)), k(0x10000), k(0)))
            return hk if high else builder.lshr(hk, k(16))
        m = mpf if mnf is None else builder.select(builder.icmp_signed("<", x, k(0)), mnf, mpf)
        xf = builder.bitcast(x, fn)
        # the product rounded to odd (as _hif8_product)
        p = builder.fmul(xf, m)
        fma = _llvm_fn(builder, f"llvm.fma.v{n}f32", fn, [fn, fn, fn])
        err = builder.call(fma, [xf, m, builder.fneg(p)])
        nerr = builder.call(fma, [builder.fneg(xf), m, p])
        pb = builder.bitcast(p, vn)
        eb = builder.bitcast(err, vn)
        ap = builder.and_(pb, k(0x7FFFFFFF))
        apt = builder.add(ap, builder.ashr(builder.xor(eb, pb), k(31)))
        inexact = builder.icmp_signed("<", builder.xor(eb, builder.bitcast(nerr, vn)), k(0))
        ab = builder.select(inexact, builder.or_(apt, k(1)), ap)
        # the key (as _hif8_key)
        sticky = builder.add(builder.and_(ab, k(0xFFFF)), k(0xFFFF))
        hk = builder.or_(builder.or_(ab, sticky), builder.xor(pb, ap))
        return hk if high else builder.lshr(hk, k(16))

    def _hif8_keys8_ir(context: Any, builder: Any, aty: Any, mty: Any, av: Any, mpv: Any, mnv: Any, jv: Any,
                       offsets: Any, same: bool, unit: bool) -> Tuple[Any, Any]:
        """The high-form keys (:func:`_hif8_key_ir`, ``<8 x i32>``, the key in each lane's high 16 bits) of the
        eight-lane vectors at ``j + s`` for ``s`` in ``offsets``, and those vectors' FP32 source bits: ``(xs, keys)``.
        ``same``: ``mn`` typed None (one multiplier for either sign); ``unit``: every multiplier 1 (not read).

        The general lanes (a multiplier read) first try the float32 product p = RN(x m) alone.  Where p's low 16
        bits are not all zero, the key is ``pb | 0x10000`` (high half (pb >> 16) | 1): the exact product rounded
        to odd onto 16 bits, with no remainder computed.  Why: p is not a power of two (its fraction is not zero),
        so |x m|, within half an ulp of |p|, lies in p's binade, where the float32 bit patterns are a uniform grid;
        |p| is at least one ulp above the start of its cell of 2^16 ulps and one below its end (the low half is
        neither 0 nor past 0xFFFF), so |x m| lies strictly inside the same cell: its truncation onto 16 bits is
        p's, and it is not on the 16-bit grid (sticky bit 1).  The subnormals continue the same grid.  An exact
        zero product (a source or multiplier +-0, such as ReLU's multiplier of a negative source) takes p's own
        bits, +-0 with no sticky bit.  A NaN/Inf source keeps a key of exponent 255.  Any other lane whose p has
        a zero low half sends the group of vectors down a cold branch that computes every key as before (two
        fused multiply-adds each, :func:`_hif8_key_ir`; the sources and multipliers loaded again there, so that
        nothing of the hot block stays live for it).  Such a lane is an exact or near-exact product, p = 0 from a
        product below 2^-150, or an overflow to Inf: about one lane in 2^16 on typical data, nearly every step for
        small integers times a short scale.  The same keys either way, so the same codes and flags.  Zen 3 (AVX2),
        one thread, 64 rows of 4096 in L2, the general pass, ns an element: N(0, 50) data times 1.625 0.575 ->
        0.485, with ReLU 0.579 -> 0.522, with LReLU 0.580 -> 0.526; wide-range data 0.604 -> 0.520; integers in
        [-300, 300) times 1.625 (every step down the branch) 0.576 -> 0.663."""
        fn = _ir.VectorType(_ir.FloatType(), 8)
        i32 = _ir.IntType(32)

        def k(v: int) -> Any:
            return _ir.Constant(_V8, [v & 0xFFFFFFFF] * 8)

        xs, ms = [], []
        for s in offsets:
            js = builder.add(jv, _ir.Constant(jv.type, s))
            xs.append(builder.load(_lane_ptr(context, builder, aty, av, js, _V8), align=4))
            ms.append((None, None) if unit else _mults_ir(context, builder, mty, mpv, mnv, js, 8, same))
        if unit:  # the key from the source's own bits, no product
            return xs, [_hif8_key_ir(builder, x, None, None, 8, high=True, unit=True) for x in xs]
        zero = _ir.Constant(fn, [0.0] * 8)
        need = None  # the lanes that need the remainder
        fast = []
        for x, (mpf, mnf) in zip(xs, ms):
            m = mpf if mnf is None else builder.select(builder.icmp_signed("<", x, k(0)), mnf, mpf)
            xf = builder.bitcast(x, fn)
            pb = builder.bitcast(builder.fmul(xf, m), _V8)
            # an exact zero product (a source or multiplier +-0): its key is p's own, +-0 with no sticky bit
            ez = builder.or_(builder.fcmp_ordered("==", xf, zero), builder.fcmp_ordered("==", m, zero))
            lane = builder.icmp_unsigned("==", builder.or_(builder.shl(pb, k(16)), builder.sext(ez, _V8)), k(0))
            need = lane if need is None else builder.or_(need, lane)
            fast.append(builder.or_(pb, builder.select(ez, k(0), k(0x10000))))
        some = builder.icmp_unsigned("!=", builder.bitcast(need, _ir.IntType(8)), _ir.Constant(_ir.IntType(8), 0))
        b0 = builder.block
        bslow = builder.append_basic_block("hif8_keys_exact")
        bend = builder.append_basic_block("hif8_keys")
        builder.cbranch(some, bslow, bend).set_weights([1, 1000])
        # every key of the group from the remainder, as before; the sources and multipliers loaded again through an
        # opaque pointer, so that no product or multiplier of the hot block stays live (spilled) for this cold one
        builder.position_at_end(bslow)
        ajv = builder.asm(_ir.FunctionType(jv.type, [jv.type]), "", "=r,0", [jv], False)
        slow = []
        for s in offsets:
            js = builder.add(ajv, _ir.Constant(jv.type, s))
            x = builder.load(_lane_ptr(context, builder, aty, av, js, _V8), align=4)
            mpf, mnf = _mults_ir(context, builder, mty, mpv, mnv, js, 8, same)
            slow.append(_hif8_key_ir(builder, x, mpf, mnf, 8, high=True))
        b1 = builder.block
        builder.branch(bend)
        builder.position_at_end(bend)
        keys = []
        for f, sl in zip(fast, slow):
            ph = builder.phi(_V8)
            ph.add_incoming(f, b0)
            ph.add_incoming(sl, b1)
            keys.append(ph)
        return xs, keys

    def _hif8_look_make(n: int, unit: bool) -> Any:
        """:func:`_hif8_look32` (``n`` 32), :func:`_hif8_look8` (``n`` 8) or :func:`_hif8_look32u` (``unit``:
        every multiplier 1, ``mp``/``mn`` not read, the key from the source's own bits rounded to odd as
        ``_hif8_key_ir``'s unit form, the key of :func:`_hif8_v32u`; no product)."""
        @_intrinsic
        def _hif8_look_i(typingctx: Any, a: Any, mp: Any, mn: Any, j: Any, o: Any, keys: Any) -> Any:
            """``n`` FP32 -> HiF8 elements under RHB at ``j .. j + n - 1`` of ``a`` (FP32 bits) with the
            multipliers ``mp``/``mn`` of a positive / negative source (float32): each element's entry of
            the key table ``keys`` (:func:`hif8_key_table`: the code in the low byte, the flags above
            it), the code stored to ``o[j + l]`` (uint8); returned the OR of the ``n`` entries (uint32).

            Every bit as :func:`_hif8_key` and a scalar lookup: the keys (the exact product rounded to odd
            onto 16 bits, the sign on top) in eight-lane vectors by :func:`_hif8_keys8_ir` (for most products
            from the float32 product alone), the key in the high half of each 32-bit lane; then per element the key's 16 bits moved to a general register (``vpextrw``), its
            uint16 entry loaded, the low byte stored and the entry ORed into the flag word.  One load an
            element instead of a ``vpgatherdd`` of eight: on Zen 3 (AVX2) the gather cost about 0.37 ns an
            element (the same loop with the gather left out), more than the eight extracts, loads, stores
            and ORs; the gather's uint32 form (no entry across a cache line) measured the same.  One
            thread, 4096 x 4096 from DRAM: scale 1.625 0.75 -> 0.59 ns/elem, scale 1 0.53 -> 0.45 (more
            instructions: callgrind counts a gather as one).  Source: ADR-0085 D177/D178
            (QF322HIF8_PRE); ASL ``MatrixSelectedMultiplier``, ``MatrixEncodeReal`` /
            ``ReferenceMatrixFloatingEncoding`` (HiF8 with RHB)."""
            if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == _types.uint32
                    and _mults_ok(mp, mn) and isinstance(j, _types.Integer) and isinstance(o, _types.Array)
                    and o.ndim == 1 and o.layout == "C" and o.dtype == _types.uint8
                    and isinstance(keys, _types.Array) and keys.ndim == 1 and keys.layout == "C"
                    and keys.dtype == _types.uint16):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                aty, mty, _, _, oty, kty = signature.args
                av, mpv, mnv, jv, ov, kv = args
                i8, i16, i32, i64 = _ir.IntType(8), _ir.IntType(16), _ir.IntType(32), _ir.IntType(64)
                kdata = context.make_array(kty)(context, builder, kv).data
                odata = context.make_array(oty)(context, builder, ov).data
                # every key first: the vector work of all n ahead of the lookups
                _, ks = _hif8_keys8_ir(context, builder, aty, mty, av, mpv, mnv, jv, range(0, n, 8),
                                       signature.args[2] == _types.none, unit)
                hks = [builder.bitcast(hk, _ir.VectorType(i16, 16)) for hk in ks]
                w = _ir.Constant(i32, 0)
                for s, hk in enumerate(hks):
                    for lane in range(8):
                        key = builder.zext(builder.extract_element(hk, _ir.Constant(i32, 2 * lane + 1)), i64)
                        ent = builder.load(builder.gep(kdata, [key]), align=2)
                        jl = builder.add(jv, _ir.Constant(jv.type, 8 * s + lane))
                        builder.store(builder.trunc(ent, i8), builder.gep(odata, [jl]), align=1)
                        w = builder.or_(w, builder.zext(ent, i32))
                return w

            return _types.uint32(a, mp, mn, j, o, keys), codegen
        return _hif8_look_i

    _hif8_look32: Any = _hif8_look_make(32, False)
    _hif8_look32u: Any = _hif8_look_make(32, True)
    _hif8_look8: Any = _hif8_look_make(8, False)

    def _hif8_lookg_make(gsz: int, unit: bool) -> Any:
        """``look(a, mp, mn, j, o, keys, gk, g)``: :func:`_hif8_look32` (``unit``: :func:`_hif8_look32u`) over the
        ``8 gsz`` elements from ``j`` (GroupN ``gsz`` 8, 16 or 32: eight whole groups), with those eight groups'
        maxima (the int32 maximum of the FP32 bits, as :func:`_fp8_fold_groups` without MaxAbs, but the bits
        themselves: their GroupMaxOut bits, :data:`_GMO_BITS`, not the order keys) stored to ``gk[g .. g + 7]``: the unit
        lanes reduce the four source vectors their keys load, before the lookups (at most two reduced vectors live
        through them: GroupN 8 337 -> 328 instructions per 64 elements, llvm-mca znver3 87 -> 76 cycles); the general
        lanes load each 32-element step's four source vectors again after its lookups (the stores to ``o`` between
        keep LLVM from reusing the first loads: reduced early, or held, their vectors spill the general lanes'
        registers, GroupN 8 456 -> 481 instructions); either way reduced as soon as a group completes (GroupN 16 / 32: its two / four vectors by
        vertical maxima) by :func:`_tr8_ir`'s rounds, pairwise as the pairs complete (at most a few vectors
        live); the step's OR of entries behind an empty asm (LLVM otherwise reassociates the 64 or 128 ORs
        into one tree and spills its leaves).  A group whose maximum is negative (every source negative) gets
        the key of its smallest int32 (as :func:`_fp8_fold_groups`), the eight groups' minima by the same rounds
        on a branch taken only then (at GroupN 8 on N(0, 1) data about one step in 32; the mask of such groups
        once went back to the caller, which redid them after the loop: 0.12 instructions an element).  Returns
        the OR of the entries and the row's running group maxima (8 int32 lanes): ``rh`` with the eight groups'
        maxima ORed in by a signed maximum, and ``rl`` with them by a signed minimum only on the cold branch (the
        row's least group maximum matters only when every group is negative, when every step takes that branch).  No bounds check: ``j + 8 gsz``
        <= ``a.size``, ``g + 8`` <= ``gk.size``.  Zen 3, one thread, 4096 x 4096 from DRAM, RowMax-free
        scratch copy (h-fp8 stop 32): GroupN 8 over the pass alone +26% -> +12% (scale 1), +22% -> +14%
        (1.625); GroupN 16 +21% -> +3%, +17% -> +5%."""
        n = 8 * gsz
        nv = gsz // 8  # 8-lane vectors of a group

        @_intrinsic
        def _hif8_lookg_i(typingctx: Any, a: Any, mp: Any, mn: Any, j: Any, o: Any, keys: Any, gk: Any,
                          g: Any, rh: Any, rl: Any) -> Any:
            if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == _types.uint32
                    and _mults_ok(mp, mn) and isinstance(j, _types.Integer) and isinstance(o, _types.Array)
                    and o.ndim == 1 and o.layout == "C" and o.dtype == _types.uint8
                    and isinstance(keys, _types.Array) and keys.ndim == 1 and keys.layout == "C"
                    and keys.dtype == _types.uint16 and isinstance(gk, _types.Array) and gk.ndim == 1
                    and gk.layout == "C" and gk.dtype == _types.uint32 and isinstance(g, _types.Integer)
                    and rh == _I32X8 and rl == _I32X8):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                aty, mty, _, _, oty, kty, gty, gsig, _, _ = signature.args
                av, mpv, mnv, jv, ov, kv, gv, g_, rhv, rlv = args
                i8, i16, i32, i64 = _ir.IntType(8), _ir.IntType(16), _ir.IntType(32), _ir.IntType(64)
                smax8 = _llvm_fn(builder, "llvm.smax.v8i32", _V8, [_V8, _V8])
                kdata = context.make_array(kty)(context, builder, kv).data
                odata = context.make_array(oty)(context, builder, ov).data
                gdata = context.make_array(gty)(context, builder, gv).data
                mx = _Tr8Pairs(builder, smax8, nv)  # the eight group maxima, pairwise as the groups complete
                w = _ir.Constant(i32, 0)
                for c in range(0, n, 32):
                    xs, ks = _hif8_keys8_ir(context, builder, aty, mty, av, mpv, mnv, jv, range(c, c + 32, 8),
                                            signature.args[2] == _types.none, unit)
                    if unit:  # the maxima from the key's own load, reduced before the lookups
                        for s, x in zip(range(c, c + 32, 8), xs):
                            mx.feed(s // 8, x)
                    hks = [builder.bitcast(hk, _ir.VectorType(i16, 16)) for hk in ks]
                    for s, hk in enumerate(hks):
                        for lane in range(8):
                            key = builder.zext(builder.extract_element(hk, _ir.Constant(i32, 2 * lane + 1)), i64)
                            ent = builder.load(builder.gep(kdata, [key]), align=2)
                            jl = builder.add(jv, _ir.Constant(jv.type, c + 8 * s + lane))
                            builder.store(builder.trunc(ent, i8), builder.gep(odata, [jl]), align=1)
                            w = builder.or_(w, builder.zext(ent, i32))
                    if not unit:  # the general lanes: the step's sources again, after its stores
                        for s in range(c, c + 32, 8):
                            js = builder.add(jv, _ir.Constant(jv.type, s))
                            mx.feed(s // 8, builder.load(_lane_ptr(context, builder, aty, av, js, _V8), align=4))
                    w = builder.asm(_ir.FunctionType(i32, [i32]), "", "=r,0", [w], False)
                r = mx.reduced()
                neg = builder.icmp_signed("<", r, _ir.Constant(_V8, [0] * 8))
                # a group whose maximum is negative (every source negative): its maximum is its smallest int32, the
                # eight groups' minima taken on a cold branch (the sources again, the same rounds with smin)
                b0 = builder.block
                bfix = builder.append_basic_block("hif8_negfix")
                bend = builder.append_basic_block("hif8_negfix_end")
                br = builder.cbranch(builder.icmp_unsigned("!=", builder.bitcast(neg, i8), _ir.Constant(i8, 0)),
                                     bfix, bend)
                br.set_weights([1, 1000])
                builder.position_at_end(bfix)
                smin8 = _llvm_fn(builder, "llvm.smin.v8i32", _V8, [_V8, _V8])
                st2 = _Tr8Pairs(builder, smin8, nv)
                for s in range(0, n, 8):
                    js = builder.add(jv, _ir.Constant(jv.type, s))
                    st2.feed(s // 8, builder.load(_lane_ptr(context, builder, aty, av, js, _V8), align=4))
                rfix = builder.select(neg, st2.reduced(), r)
                rlfix = builder.call(smin8, [rlv, rfix])  # the row's least group maximum, only on this branch
                b1 = builder.block
                builder.branch(bend)
                builder.position_at_end(bend)
                rm = builder.phi(_V8)
                rm.add_incoming(r, b0)
                rm.add_incoming(rfix, b1)
                rl2 = builder.phi(_V8)
                rl2.add_incoming(rlv, b0)
                rl2.add_incoming(rlfix, b1)
                # the groups' maxima themselves (their GroupMaxOut bits, _GMO_BITS), not their order keys
                gi = context.cast(builder, g_, gsig, _types.intp)
                builder.store(rm, builder.bitcast(builder.gep(gdata, [gi]), _V8.as_pointer()), align=4)
                return context.make_tuple(builder, signature.return_type, [w, builder.call(smax8, [rhv, rm]), rl2])

            return _types.Tuple((_types.uint32, _I32X8, _I32X8))(a, mp, mn, j, o, keys, gk, g, rh, rl), codegen
        return _hif8_lookg_i

    _hif8_look8g: Any = _hif8_lookg_make(8, False)
    _hif8_look8gu: Any = _hif8_lookg_make(8, True)
    _hif8_look16g: Any = _hif8_lookg_make(16, False)
    _hif8_look16gu: Any = _hif8_lookg_make(16, True)
    _hif8_look32g: Any = _hif8_lookg_make(32, False)
    _hif8_look32gu: Any = _hif8_lookg_make(32, True)

    def _e4m3_acc_make(n: int, name: str) -> Tuple[Any, Any, Any, Any]:
        """The flag accumulators of an E4M3 step of ``n`` lanes: ``n`` uint32 lanes of the least flag key, then
        ``n`` of the largest mark (LLVM ``<2n x i32>``, only inside compiled code), as ``(type, fresh, least
        key, largest mark)``: the type (numba name ``name``), an intrinsic giving fresh accumulators (keys all
        ones, marks 0) and the two intrinsics reducing their halves to one uint32 each."""
        vn = _ir.VectorType(_ir.IntType(32), n)
        v2n = _ir.VectorType(_ir.IntType(32), 2 * n)
        acc_type = type(name + "Type", (_types.Type,), {"__init__": lambda self: _types.Type.__init__(self, name=name)})
        acc_t = acc_type()

        @_register_model(acc_type)
        class _AccModel(_models.PrimitiveModel):
            def __init__(self, dmm: Any, fe_type: Any) -> None:
                super().__init__(dmm, fe_type, v2n)

        @_intrinsic
        def fresh(typingctx: Any) -> Any:
            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return _ir.Constant(v2n, [0xFFFFFFFF] * n + [0] * n)

            return acc_t(), codegen

        def reduce(op: str, lo: int) -> Any:
            @_intrinsic
            def half_reduce(typingctx: Any, acc: Any) -> Any:
                if acc != acc_t:
                    return None

                def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                    half = builder.shuffle_vector(args[0], args[0], _ir.Constant(vn, list(range(lo, lo + n))))
                    return builder.call(_llvm_fn(builder, f"llvm.vector.reduce.{op}.v{n}i32", _ir.IntType(32), [vn]),
                                        [half])

                return _types.uint32(acc), codegen
            return half_reduce

        return acc_t, fresh, reduce("umin", 0), reduce("umax", n)

    #: :func:`_e4m3_pass_groups`'s accumulators (:func:`_e4m3_grp`): 8 + 8 lanes, two AVX2 registers
    _ACC_E4M3X8, _e4m3_acc8_0, _e4m3_acc8_min, _e4m3_acc8_max = _e4m3_acc_make(8, "AccE4M3x8")
    _V16I = _ir.VectorType(_ir.IntType(32), 16)

    def _e4m3_lane8_ir(builder: Any, x: Any, mpf: Any, mnf: Any, ovp: Any, ovn: Any,
                       unit: bool, nz: Any = None) -> Tuple[Any, Any, Any]:
        """:func:`_e4m3_lane` (``unit``: :func:`_e4m3_unit_lane`) on eight lanes written out in LLVM IR, the lane
        of :func:`_e4m3_v8_row` and :func:`_e4m3_grp`'s steps (AVX2 and FMA): (code, key, mark) as ``<8 x
        i32>``, the code in the low byte (the other bits 0: :func:`_e4m3_pack32_ir` packs four).  ``x`` the FP32
        bits, ``mpf``/``mnf`` the multipliers (``<8 x float>``; ``mnf`` None: one for either sign; neither read
        with ``unit``), ``ovp``/``ovn`` the overflow codes splatted, ``nz`` -0's bits splatted (None: the
        constant; an opaque register lets LLVM take the magnitude's mask from it by ``vpandn``).

        :func:`_e4m3_lane`'s steps with fewer instructions than LLVM's vectorization of it (which keeps ~14
        loop-invariant vectors in the 16 ``ymm`` registers and spills): the sign of a nonzero code (v below
        -2^-10: the sign of fma(x, m, 2^-10); unit: the source below -2^-10) put into the rounding constant M's low
        byte (``E4M3_M_OFF`` or ``E4M3_M_OFF + 0x80``, one blend: M carries 128 quanta more, an even count
        below M's binade's end, so a + M rounds the same and its low byte is the code | 0x80) instead of an OR
        and a blend on the code; the remainder's sign (a product rounded up) by an arithmetic shift instead of
        a compare with 0 (they differ only on a remainder -0, one that underflowed: a product below 2^-100,
        whose code 0 and flags UF|NX no rounding of a below 2^-126 changes); the key through an empty asm (no
        instruction: LLVM does not merge it into the accumulators' tree)."""
        fn = _ir.VectorType(_ir.FloatType(), 8)

        def k(v: int) -> Any:
            return _ir.Constant(_V8, [v & 0xFFFFFFFF] * 8)

        umin = _llvm_fn(builder, "llvm.umin.v8i32", _V8, [_V8, _V8])
        umax = _llvm_fn(builder, "llvm.umax.v8i32", _V8, [_V8, _V8])
        fma = _llvm_fn(builder, "llvm.fma.v8f32", fn, [fn, fn, fn])
        nz = k(FP32_NEG_ZERO) if nz is None else nz
        if unit:  # the product is the source itself, exact
            ab = builder.and_(x, builder.xor(nz, k(-1)))
            neg = builder.icmp_unsigned(">", x, k(E4M3_NEG_ZERO_BITS))
            pb = ab
        else:
            m = mpf if mnf is None else builder.select(builder.icmp_signed("<", x, k(0)), mnf, mpf)
            amb = builder.and_(builder.bitcast(m, _V8), k(0x7FFFFFFF))
            one = builder.call(umin, [amb, k(1)])  # 1, 0 for a zero multiplier
            axb = builder.and_(x, builder.xor(nz, k(-1)))
            ax, am = builder.bitcast(axb, fn), builder.bitcast(amb, fn)
            p = builder.fmul(ax, am)
            pb = builder.bitcast(p, _V8)
            err = builder.call(fma, [ax, am, builder.fneg(p)])
            down = builder.ashr(builder.bitcast(err, _V8), k(31))  # -1: the product rounded up
            ab = builder.or_(builder.add(pb, down), builder.call(umin, [builder.bitcast(err, _V8), one]))
            # a product that underflowed float32 (x, m nonzero) counts as 2^-149: inexact, tiny
            ab = builder.call(umax, [ab, builder.call(umin, [axb, one])])
            sel = builder.call(fma, [builder.bitcast(x, fn), m, _ir.Constant(fn, [E4M3_ZERO_F] * 8)])
            neg = builder.icmp_signed("<", builder.bitcast(sel, _V8), k(0))
        e = builder.call(umax, [builder.and_(pb, k(FP32_INF)), k(E4M3_EMIN_BITS)])
        moff = builder.select(neg, k(E4M3_M_OFF + E4M3_SIGN), k(E4M3_M_OFF))
        mf = builder.bitcast(builder.add(builder.add(e, builder.lshr(e, k(E4M3_MAGIC))), moff), fn)
        t = builder.fadd(builder.bitcast(ab, fn), mf)
        back = builder.bitcast(builder.fsub(t, mf), _V8)
        key = _e4m3_fence(builder, builder.or_(ab, builder.sext(builder.icmp_unsigned("==", back, ab), _V8)))
        mark = builder.or_(ab, builder.sext(builder.icmp_unsigned("==", x, nz), _V8))
        code = builder.select(builder.icmp_signed(">", ab, k(E4M3_MAX_BITS)), builder.select(neg, ovn, ovp),
                              builder.bitcast(t, _V8))
        return builder.and_(code, k(0xFF)), key, mark

    def _e4m3_fence(builder: Any, v: Any) -> Any:
        """``v`` (``<8 x i32>``) through an empty asm statement (no instruction; a ``ymm`` register, AVX2 targets
        only: elsewhere ``v`` itself): its value unknown to LLVM, which then neither merges nor reorders
        across it."""
        return builder.asm(_ir.FunctionType(_V8, [_V8]), "", "=x,0", [v], False) if E4M3_GRP else v

    def _e4m3_pack32_ir(builder: Any, codes: List[Any]) -> Any:
        """Four ``<8 x i32>`` of byte codes (:func:`_e4m3_lane8_ir`) as the 32 bytes in order (``<8 x i32>``):
        two ``vpackusdw``, one ``vpackuswb``, one ``vpermd`` (LLVM's truncation took five instructions per 8);
        without AVX2 (:data:`E4M3_GRP` off: the form compiled, never run) the truncation."""
        w16 = _ir.VectorType(_ir.IntType(16), 16)
        b32 = _ir.VectorType(_ir.IntType(8), 32)
        if not E4M3_GRP:
            c01 = builder.shuffle_vector(codes[0], codes[1], _ir.Constant(_V16I, list(range(16))))
            c23 = builder.shuffle_vector(codes[2], codes[3], _ir.Constant(_V16I, list(range(16))))
            c32 = builder.shuffle_vector(c01, c23, _ir.Constant(_ir.VectorType(_ir.IntType(32), 32), list(range(32))))
            return builder.bitcast(builder.trunc(c32, b32), _V8)
        pus = _llvm_fn(builder, "llvm.x86.avx2.packusdw", w16, [_V8, _V8])
        pub = _llvm_fn(builder, "llvm.x86.avx2.packuswb", b32, [w16, w16])
        w = builder.bitcast(builder.call(pub, [builder.call(pus, codes[0:2]), builder.call(pus, codes[2:4])]), _V8)
        return builder.shuffle_vector(w, w, _ir.Constant(_V8, [0, 4, 1, 5, 2, 6, 3, 7]))

    def _e4m3_splat8(builder: Any, v: Any, vt: Any = _V8) -> Any:
        """A scalar as eight lanes of the vector type ``vt``: an integer as ``<8 x i32>`` (truncated or
        zero-extended to 32 bits), a float32 as ``<8 x float>`` (``vt`` that type)."""
        i32 = _ir.IntType(32)
        if isinstance(v.type, _ir.IntType):
            w = v.type.width
            v = v if w == 32 else (builder.trunc(v, i32) if w > 32 else builder.zext(v, i32))
        e = builder.insert_element(_ir.Constant(vt, _ir.Undefined), v, _ir.Constant(i32, 0))
        return builder.shuffle_vector(e, _ir.Constant(vt, _ir.Undefined), _ir.Constant(_V8, [0] * 8))

    @_intrinsic
    def _e4m3_grp_i(typingctx: Any, a: Any, mp: Any, mn: Any, j: Any, o: Any, acc: Any, gk: Any, g: Any, gsz: Any,
                    unit: Any, sat: Any, absm: Any, per: Any) -> Any:
        """``acc = _e4m3_grp(a, mp, mn, j, o, acc, gk, g, gsz, unit, sat, absm, per)``, ``gsz`` (8, 16 or 32),
        ``unit`` and ``sat`` literals at the call (one compiled form each, :func:`_e4m3_grp_cg`), ``absm``
        False and ``per`` 1 as literals; or, ``gsz`` 32 only, both at run time (:func:`_e4m3_pass_groups_unit`):
        the MaxAbs mask (0x7FFFFFFF, else all ones) and the subgroups of 32 a group (1, 2 or 4: GroupN 32, 64,
        128).  The ``8
        gsz`` FP32 -> E4M3 elements from ``j`` (eight whole (sub)groups, ``8 / per`` groups) by
        :func:`_e4m3_lane8_ir` (``unit``: the
        multipliers all 1, ``mp``/``mn`` not read), 32 codes a store, the overflow codes constants (``sat``:
        ``E4M3_SAT_POS``/``E4M3_SAT_NEG``, else ``E4M3_OVF_POS``/``E4M3_OVF_NEG``, one code for either sign: no
        blend by the sign; llvm-mca znver3, scale 1.625 without Sat, the loop
        alone: GroupN 8 / 16 / 32 5.53 / 5.30 / 5.29 -> 5.41 / 5.19 / 5.08 instructions an element, FP pipe
        uops 4.23 / 4.12 / 4.06 -> 4.11 / 3.99 / 3.93 against the plain pass's 4.91 and 3.91), ``acc`` (:data:`_ACC_E4M3X8`) updated with
        each lane's least key and largest mark, and the step's groups' maxima (the int32 maximum of the FP32 bits,
        with the MaxAbs mask of the bits ANDed with 0x7FFFFFFF, as :func:`_fp8_fold_groups`, but the bits
        themselves: their GroupMaxOut bits, :data:`_GMO_BITS`, not the order keys) to ``gk[g .. g + 8 / per -
        1]``: each (sub)group's sources reduced vertically (``gsz`` 8: the vectors
        just converted, in registers; 16 and 32: loaded again after the step's conversions, fewer spills; the
        mask's AND only on a branch taken with MaxAbs), the
        eight by :func:`_tr8_ir`'s rounds pairwise as they complete (:class:`_Tr8Pairs`), GroupN 64 / 128's
        subgroups then by one / two rounds of even-odd lane pairs (4 / 2 lanes stored; one step of eight whole
        GroupN 128 groups, its code four times as long, measured 0.417 ns an element against 0.341, Zen 3, unit
        lane); a group whose
        maximum is negative (every source negative; ~1/256 of GroupN 8's on typical data; never with the mask)
        takes its smallest int32 instead, the
        step's groups reduced again by ``smin`` in a branch taken only then.  The accumulators and each
        vector's code pass an empty asm (:func:`_e4m3_fence`; the next vector's address depends on them): LLVM
        neither defers the 8 to 32 maxima and minima into one tree at the end (spilling their leaves) nor
        interleaves the vectors' lanes.  No bounds check: ``j + 8 gsz <= a.size``, ``g + 8 / per <=
        gk.size``."""
        rt = isinstance(absm, _types.Integer)  # absm and per at run time (gsz 32 only)
        if not (isinstance(gsz, _types.IntegerLiteral) and gsz.literal_value in (8, 16, 32)
                and isinstance(unit, _types.BooleanLiteral) and isinstance(sat, _types.BooleanLiteral)
                and (gsz.literal_value == 32 and isinstance(per, _types.Integer) if rt else
                     (isinstance(absm, _types.BooleanLiteral) and not absm.literal_value
                      and isinstance(per, _types.IntegerLiteral) and per.literal_value == 1))
                and isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == _types.uint32
                and _mults_ok(mp, mn) and isinstance(j, _types.Integer) and isinstance(o, _types.Array)
                and o.ndim == 1 and o.layout == "C" and o.dtype == _types.uint8 and acc == _ACC_E4M3X8
                and isinstance(gk, _types.Array) and gk.ndim == 1 and gk.layout == "C"
                and gk.dtype == _types.uint32 and isinstance(g, _types.Integer)):
            return None
        return (_ACC_E4M3X8(a, mp, mn, j, o, acc, gk, g, gsz, unit, sat, absm, per),
                _e4m3_grp_cg(gsz.literal_value, unit.literal_value, sat.literal_value, rt))

    def _e4m3_grp_cg(gsz: int, unit: bool, sat: bool, rt: bool = False) -> Any:
        """The codegen of :func:`_e4m3_grp` for GroupN ``gsz``, ``unit`` and ``sat``; ``rt``: ``absm`` and
        ``per`` given at run time (else no mask, one group a subgroup)."""
        n = 8 * gsz
        nv = gsz // 8  # 8-lane vectors of a (sub)group
        again = gsz > 8  # the maxima from the sources loaded again after the step's conversions

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            aty, mty, _, _, oty, _, gty, gsig = signature.args[:8]
            av, mpv, mnv, jv, ov, accv, gv, g_ = args[:8]
            absv = _e4m3_splat8(builder, args[11]) if rt else None  # the MaxAbs mask, eight lanes
            perv: Any = context.cast(builder, args[12], signature.args[12], _types.intp) if rt else None
            smax8 = _llvm_fn(builder, "llvm.smax.v8i32", _V8, [_V8, _V8])
            umin = _llvm_fn(builder, "llvm.umin.v8i32", _V8, [_V8, _V8])
            umax = _llvm_fn(builder, "llvm.umax.v8i32", _V8, [_V8, _V8])
            gdata = context.make_array(gty)(context, builder, gv).data
            # the overflow codes as constants (``sat``): without Sat one code for either sign (no blend), with
            # Sat a constant-pool operand
            opb = _ir.Constant(_V8, [E4M3_SAT_POS if sat else E4M3_OVF_POS] * 8)
            onb = _ir.Constant(_V8, [E4M3_SAT_NEG if sat else E4M3_OVF_NEG] * 8)
            # -0's bits (FP32_NEG_ZERO), unit steps: through an empty asm (opaque to LLVM), one register for
            # the magnitude's mask (vpandn) and the -0 mark's compare instead of two constants
            # (callgrind, scale 1, pass only: GroupN 8 4.38 -> 4.36, 16 4.22 -> 4.10, 32 4.09 -> 4.01 an
            # element; the general lane takes more with it: scale 1.625 GroupN 8 5.58 -> 5.70)
            nz = _e4m3_fence(builder, _ir.Constant(_V8, [FP32_NEG_ZERO] * 8)) if unit else \
                _ir.Constant(_V8, [FP32_NEG_ZERO] * 8)
            kmin = builder.shuffle_vector(accv, accv, _ir.Constant(_V8, list(range(8))))
            kmax = builder.shuffle_vector(accv, accv, _ir.Constant(_V8, list(range(8, 16))))
            mx = _Tr8Pairs(builder, smax8, nv)  # the eight group maxima

            def source(s: Any, jd: Any) -> Any:  # the 8 sources from j + s
                js = builder.add(jd, _ir.Constant(jv.type, s))
                return builder.load(_lane_ptr(context, builder, aty, av, js, _V8), align=4)

            def halved(v: Any, op: str) -> Any:  # lanes 2i and 2i + 1 of v by op: half as many lanes
                w = v.type.count // 2
                vt = _ir.VectorType(_ir.IntType(32), w)
                f = _llvm_fn(builder, f"llvm.{op}.v{w}i32", vt, [vt, vt])
                ev = builder.shuffle_vector(v, v, _ir.Constant(vt, list(range(0, 2 * w, 2))))
                od = builder.shuffle_vector(v, v, _ir.Constant(vt, list(range(1, 2 * w, 2))))
                return builder.call(f, [ev, od])

            jd = jv
            for c in range(0, n, 32):
                codes = []
                for s in range(c, c + 32, 8):
                    x = source(s, jd)
                    mpf = mnf = None
                    if not unit:
                        js = builder.add(jd, _ir.Constant(jv.type, s))
                        mpf, mnf = _mults_ir(context, builder, mty, mpv, mnv, js, 8,
                                             signature.args[2] == _types.none)
                    code, key, mark = _e4m3_lane8_ir(builder, x, mpf, mnf, opb, onb, unit, nz)
                    kmin = _e4m3_fence(builder, builder.call(umin, [kmin, key]))
                    kmax = _e4m3_fence(builder, builder.call(umax, [kmax, mark]))
                    codes.append(code)
                    if not again:
                        mx.feed(s // 8, x)
                    if E4M3_GRP:
                        jd = builder.asm(_ir.FunctionType(jv.type, [jv.type, _V8, _V8, _V8]), "", "=r,0,x,x,x",
                                         [jd, code, kmin, kmax], False)
                jc = builder.add(jv, _ir.Constant(jv.type, c))
                builder.store(_e4m3_pack32_ir(builder, codes), _lane_ptr(context, builder, oty, ov, jc, _V8),
                              align=1)
            gi = context.cast(builder, g_, gsig, _types.intp)

            def stored(r: Any, k: int) -> None:  # the step's 8 / k groups' maxima (k subgroups a group)
                ng = 8 // k
                vg = _ir.VectorType(_ir.IntType(32), ng)
                gp = builder.bitcast(builder.gep(gdata, [gi]), vg.as_pointer())
                builder.store(r, gp, align=4)  # the maxima's bits: their GroupMaxOut bits (_GMO_BITS), no key
                neg = builder.icmp_signed("<", r, _ir.Constant(vg, [0] * ng))  # never with MaxAbs's mask
                ib = _ir.IntType(ng)
                with builder.if_then(builder.icmp_unsigned("!=", builder.bitcast(neg, ib), _ir.Constant(ib, 0)),
                                     likely=False):
                    mn8 = _Tr8Pairs(builder, _llvm_fn(builder, "llvm.smin.v8i32", _V8, [_V8, _V8]), nv)
                    for s in range(0, n, 8):
                        mn8.feed(s // 8, source(s, jv))
                    rl = mn8.reduced()
                    for _ in range(k.bit_length() - 1):
                        rl = halved(rl, "smin")
                    builder.store(builder.select(neg, rl, r), gp, align=4)

            def reduced(masked: bool) -> None:  # the maxima (``masked``: of absm & the sources) stored
                m = mx
                if again:
                    m = _Tr8Pairs(builder, smax8, nv)
                    for s in range(0, n, 8):
                        x = source(s, jv)
                        m.feed(s // 8, builder.and_(x, absv) if masked else x)
                r8 = m.reduced()
                if not rt:
                    stored(r8, 1)
                    return
                # per 1, 2 or 4 (GroupN 32, 64, 128): the subgroups' maxima combined pairwise
                r4 = halved(r8, "smax")
                with builder.if_else(builder.icmp_signed("==", perv, _ir.Constant(perv.type, 1))) as (p1, pn):
                    with p1:
                        stored(r8, 1)
                    with pn:
                        with builder.if_else(builder.icmp_signed("==", perv, _ir.Constant(perv.type, 2))) as (p2, p4):
                            with p2:
                                stored(r4, 2)
                            with p4:
                                stored(halved(r4, "smax"), 4)

            if rt:  # MaxAbs or not: a branch a step (the mask's AND only where it is one)
                ones = builder.icmp_unsigned("==", args[11], _ir.Constant(args[11].type, 0xFFFFFFFF))
                with builder.if_else(ones) as (plain, masked_):
                    with plain:
                        reduced(False)
                    with masked_:
                        reduced(True)
            else:
                reduced(False)
            return builder.shuffle_vector(kmin, kmax, _ir.Constant(_V16I, list(range(16))))

        return codegen

    _e4m3_grp: Any = _e4m3_grp_i

    #: E4M3 GroupN 8/16/32 without AVX-512 takes :func:`_e4m3_pass_groups` where the CPU has AVX2 and FMA (its
    #: steps' lane then one instruction per step of :func:`_e4m3_lane`), else the blocks form
    #: (:func:`_fp8_pass_blocks`); the same codes, flags and keys either way
    E4M3_GRP: bool = not target_has_feature("avx512bw") and target_has_feature("avx2") and target_has_feature("fma")

    #: The HiF8 pass takes 32 elements per step by :func:`_hif8_v32` (no gather) when the target CPU
    #: has AVX-512 BW, else by :func:`_hif8_look32` (a scalar lookup an element); the same entries either way.
    HIF8_V32: bool = target_has_feature("avx512bw")
    #: The E4M3 pass takes 32 elements per step by :func:`_e4m3_v32` (AVX-512: embedded rounding) on
    #: the same CPUs, else :func:`_e4m3_lane` vectorized by LLVM; the same codes and flags either way.
    E4M3_V32: bool = HIF8_V32

    def _hif8_v32_make(unit: bool, rz: bool = True, full: bool = False) -> Any:
        @_intrinsic
        def _hif8_v32_i(typingctx: Any, a: Any, mp: Any, mn: Any, j: Any, o: Any, ovf: Any) -> Any:
            """32 FP32 -> HiF8 elements under RHB at ``j .. j + 31`` of ``a`` (FP32 bits) with the
            multipliers ``mp``/``mn`` of a positive / negative source (float32): the codes stored to
            ``o[j .. j + 31]`` (uint8), and returned the OR of the 32 key-table entries (eight int32
            lanes, the OR in each lane's low 16 bits; the entries of :func:`hif8_key_table`, computed
            without a lookup in memory); a uint16 ``o`` receives the whole entries (for checks).
            ``ovf``: the entry of a positive key above the largest value (``keys[HIF8_KEY_OVF]``: the
            overflow code of the Sat setting and OF|NX).  AVX-512 BW only (:data:`HIF8_V32`).

            The key as :func:`_hif8_key` (8 significant bits, rounded to odd; 32-bit lanes, two ``zmm``;
            the product rounded toward zero and its remainder's sign by :func:`_product_rz_ir`, or with
            ``rz`` False by :func:`_hif8_product`'s two fused multiply-adds, kept for comparisons),
            narrowed to 16-bit lanes (one ``zmm``), then its entry by
            arithmetic and four in-register lookups (``vpermi2w``, 64 words each) of the key's clamped
            exponent (:func:`_hif8_v32_tables`): the magnitude k (15 bits) rounded to the binade's
            quantum as a float is, r = k + half - sign (RHB: a tie rounds down only for a negative
            value; the key's odd bit makes a tie exact) -- a carry moves r into the next binade with
            mantissa 0 -- code = base(exponent of r) + ((r & 0x7F) >> sh), the sign bit ORed into a
            nonzero code (HiF8 has one zero); NX when k has a bit below the quantum, with UF below
            2^-15; a key above the largest value the overflow entry, a NaN/Inf key HIF8_KEY_RARE: every
            entry equal to the table's.
            Checked against the table on all 2^16 keys and all 2^32 sources.  Source: ADR-0085
            D177/D178 (QF322HIF8_PRE); ASL ``MatrixSelectedMultiplier``, ``MatrixEncodeReal`` /
            ``ReferenceMatrixFloatingEncoding`` (HiF8 with RHB)."""
            if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == _types.uint32
                    and _mults_ok(mp, mn) and isinstance(j, _types.Integer) and isinstance(o, _types.Array)
                    and o.ndim == 1 and o.layout == "C" and o.dtype in (_types.uint8, _types.uint16)
                    and isinstance(ovf, _types.Integer)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                aty, mty, _, _, oty, _ = signature.args
                av, mpv, mnv, jv, ov, fv = args
                n = 32
                i16 = _ir.IntType(16)
                vk = _ir.VectorType(_ir.IntType(32), n)
                vw = _ir.VectorType(i16, n)
                w32 = _ir.VectorType(i16, 32)

                def k(v: int) -> Any:
                    return _ir.Constant(vw, [v & 0xFFFF] * n)

                def clamp_idx(v: Any) -> Any:  # clamp((v >> 7) - EB, 0, NI - 1)
                    t = builder.sub(builder.lshr(v, k(7)), k(HIF8_V32_EB))
                    t = builder.call(_llvm_fn(builder, f"llvm.smax.v{n}i16", vw, [vw, vw]), [t, k(0)])
                    return builder.call(_llvm_fn(builder, f"llvm.umin.v{n}i16", vw, [vw, vw]), [t, k(HIF8_V32_NI - 1)])

                perm = _llvm_fn(builder, "llvm.x86.avx512.vpermi2var.hi.512", w32, [w32, w32, w32])

                def look(idx: Any, table: Any) -> Any:  # table[idx] per lane (one vpermi2w)
                    return builder.call(perm, [_ir.Constant(w32, list(table[:32])), idx, _ir.Constant(w32, list(table[32:]))])

                t_hs, t_mask, t_base, t_fl = _hif8_v32_tables()
                x = builder.load(_lane_ptr(context, builder, aty, av, jv, vk), align=4)
                mpf = mnf = None
                if not unit:  # the multipliers (none read by the unit lanes: both are 1)
                    mpf, mnf = _mults_ir(context, builder, mty, mpv, mnv, jv, n, signature.args[2] == _types.none)
                # the keys' 16-bit halves picked straight into 16-bit lanes (one vpermt2w): no shift or
                # narrowing per 32-bit lane
                hk = builder.bitcast(_hif8_key_ir(builder, x, mpf, mnf, n, True, unit, rz), _ir.VectorType(i16, 2 * n))
                key = builder.shuffle_vector(hk, hk, _ir.Constant(vk, list(range(1, 2 * n, 2))))
                mag = builder.and_(key, k(0x7FFF))
                sb = builder.and_(builder.lshr(key, k(8)), k(HIF8_SIGN))
                idx = clamp_idx(mag)
                hs = look(idx, t_hs)
                r = builder.sub(builder.add(mag, builder.and_(hs, k(0xFF))), builder.lshr(key, k(15)))
                code = builder.add(look(clamp_idx(r), t_base), builder.lshr(builder.and_(r, k(0x7F)), builder.lshr(hs, k(8))))
                code = builder.select(builder.icmp_unsigned("!=", code, k(0)), builder.or_(code, sb), code)
                inexact = builder.icmp_unsigned("!=", builder.and_(mag, look(idx, t_mask)), k(0))
                ent = builder.or_(code, builder.select(inexact, look(idx, t_fl), k(0)))
                fw = builder.trunc(fv, i16)
                ovfv = builder.shuffle_vector(builder.insert_element(_ir.Constant(vw, _ir.Undefined), fw,
                                                                     _ir.Constant(_ir.IntType(32), 0)),
                                              _ir.Constant(vw, _ir.Undefined), _ir.Constant(vk, [0] * n))
                ent = builder.select(builder.icmp_unsigned(">", mag, k(HIF8_KEY_MAX)), builder.or_(ovfv, sb), ent)
                ent = builder.select(builder.icmp_unsigned(">=", mag, k(HIF8_KEY_INF)), k(HIF8_KEY_RARE), ent)
                if oty.dtype == _types.uint8:
                    bn = _ir.VectorType(_ir.IntType(8), n)
                    builder.store(builder.trunc(ent, bn), _lane_ptr(context, builder, oty, ov, jv, bn), align=1)
                else:
                    builder.store(ent, _lane_ptr(context, builder, oty, ov, jv, vw), align=2)
                if full:  # the 32 entries as they are, for an accumulator ORed once a step
                    return builder.bitcast(ent, _V16)
                m = n // 2
                e32 = builder.bitcast(ent, _ir.VectorType(_ir.IntType(32), m))
                while m > 8:
                    m //= 2
                    vh = _ir.VectorType(_ir.IntType(32), m)
                    e32 = builder.or_(builder.shuffle_vector(e32, e32, _ir.Constant(vh, list(range(m)))),
                                      builder.shuffle_vector(e32, e32, _ir.Constant(vh, list(range(m, 2 * m)))))
                return builder.or_(e32, builder.lshr(e32, _v8_const([16] * 8)))

            return (_I32X16 if full else _I32X8)(a, mp, mn, j, o, ovf), codegen

        return _hif8_v32_i

    #: :func:`_e4m3_v32`'s accumulators: 32 + 32 lanes
    _ACC_E4M3, _e4m3_acc0, _e4m3_acc_min, _e4m3_acc_max = _e4m3_acc_make(32, "AccE4M3")

    def _e4m3_v32_make(unit: bool) -> Any:
        @_intrinsic
        def _e4m3_v32_i(typingctx: Any, a: Any, mp: Any, mn: Any, j: Any, o: Any, acc: Any, ovf_pos: Any,
                        ovf_neg: Any) -> Any:
            """32 FP32 -> E4M3 elements under RNE at ``j .. j + 31`` of ``a`` (FP32 bits) with the
            multipliers ``mp``/``mn`` of a positive / negative source (float32): the codes stored to
            ``o[j .. j + 31]`` (uint8), returned ``acc`` with each lane's least flag key and largest mark
            (as :func:`_e4m3_lane`'s (code, mark, key), every bit the same).  AVX-512 only
            (:data:`HIF8_V32`).

            The exact product rounded to odd onto float32 with its sign, q = pb | [eb != 0]
            (:func:`_product_rz_ir`: one multiplication rounded toward zero and one fused multiply-add
            rounded upward), then :func:`_e4m3_unit_lane`'s steps on q as the source: ab = |q|, the code
            by the hardware addition of M, the sign on a nonzero code when q < -2^-10 (rounding to odd
            keeps the side of 2^-10: one unsigned compare of the bits), the overflow code above 448; the
            key ab, all ones when ab is an E4M3 value (a product that underflowed float32 is 2^-149 here,
            inexact and tiny as in :func:`_e4m3_lane`); the mark ab, all ones for a -0 source (the row is
            then redone).  Source: ADR-0085 (QF322FP8_PRE); ASL ``MatrixSelectedMultiplier``,
            ``MatrixEncodeReal`` / ``ReferenceMatrixFloatingEncoding`` (E4M3 with RNE).

            ``unit`` (:func:`_e4m3_v32u`): both multipliers are 1 (``mp``/``mn`` not read), q = x:
            :func:`_e4m3_unit_lane`'s (code, mark, key), every bit the same."""
            if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == _types.uint32
                    and _mults_ok(mp, mn) and isinstance(j, _types.Integer) and isinstance(o, _types.Array)
                    and o.ndim == 1 and o.layout == "C" and o.dtype == _types.uint8 and acc == _ACC_E4M3
                    and isinstance(ovf_pos, _types.Integer) and isinstance(ovf_neg, _types.Integer)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                aty, mty, _, _, oty, _, _, _ = signature.args
                av, mpv, mnv, jv, ov, accv, opv, onv = args
                n = 32
                i32 = _ir.IntType(32)
                vn = _ir.VectorType(i32, n)
                fn = _ir.VectorType(_ir.FloatType(), n)

                def k(v: int) -> Any:
                    return _ir.Constant(vn, [v & 0xFFFFFFFF] * n)

                def splat(v: Any) -> Any:
                    w = v.type.width
                    v = v if w == 32 else (builder.trunc(v, i32) if w > 32 else builder.zext(v, i32))
                    e = builder.insert_element(_ir.Constant(vn, _ir.Undefined), v, _ir.Constant(i32, 0))
                    return builder.shuffle_vector(e, _ir.Constant(vn, _ir.Undefined), _ir.Constant(vn, [0] * n))

                x = builder.load(_lane_ptr(context, builder, aty, av, jv, vn), align=4)
                if unit:  # both multipliers 1 (not read): the product is the source, exact
                    q = x
                else:
                    mpf, mnf = _mults_ir(context, builder, mty, mpv, mnv, jv, n, signature.args[2] == _types.none)
                    pb, eb = _product_rz_ir(builder, x, mpf, mnf, n)
                    q = builder.select(builder.icmp_unsigned("!=", eb, k(0)), builder.or_(pb, k(1)), pb)
                ab = builder.and_(q, k(0x7FFFFFFF))
                e = builder.call(_llvm_fn(builder, "llvm.umax.v32i32", vn, [vn, vn]),
                                 [builder.and_(ab, k(FP32_INF)), k(E4M3_EMIN_BITS)])
                mb = builder.add(builder.add(e, builder.lshr(e, k(E4M3_MAGIC))), k(E4M3_M_OFF))
                mf = builder.bitcast(mb, fn)
                t = builder.fadd(builder.bitcast(ab, fn), mf)
                tb = builder.bitcast(t, vn)
                neg = builder.icmp_unsigned(">", q, k(E4M3_NEG_ZERO_BITS))
                code = builder.select(neg, builder.or_(tb, k(E4M3_SIGN)), tb)
                code = builder.select(builder.icmp_signed(">", ab, k(E4M3_MAX_BITS)),
                                      builder.select(neg, splat(onv), splat(opv)), code)
                back = builder.bitcast(builder.fsub(t, mf), vn)
                key = builder.or_(ab, builder.select(builder.icmp_unsigned("==", back, ab), k(-1), k(0)))
                mark = builder.select(builder.icmp_unsigned("==", x, k(FP32_NEG_ZERO)), k(-1), ab)
                bn = _ir.VectorType(_ir.IntType(8), n)
                builder.store(builder.trunc(code, bn), _lane_ptr(context, builder, oty, ov, jv, bn), align=1)
                kmin = builder.shuffle_vector(accv, accv, _ir.Constant(vn, list(range(32))))
                kmax = builder.shuffle_vector(accv, accv, _ir.Constant(vn, list(range(32, 64))))
                kmin = builder.call(_llvm_fn(builder, "llvm.umin.v32i32", vn, [vn, vn]), [kmin, key])
                kmax = builder.call(_llvm_fn(builder, "llvm.umax.v32i32", vn, [vn, vn]), [kmax, mark])
                return builder.shuffle_vector(kmin, kmax, _ir.Constant(_ir.VectorType(i32, 64), list(range(64))))

            return _ACC_E4M3(a, mp, mn, j, o, acc, ovf_pos, ovf_neg), codegen
        return _e4m3_v32_i

    _e4m3_v32: Any = _e4m3_v32_make(False)
    #: :func:`_e4m3_v32` for multipliers that are all 1 (``mp``/``mn`` not read; the fused fold's unit
    #: rows, :func:`_fp8_pass_fold`)
    _e4m3_v32u: Any = _e4m3_v32_make(True)

    #: The E4M3 pass without AVX-512 runs :func:`_e4m3_v8_row` where the CPU has AVX2 and FMA (else
    #: :func:`_e4m3_lane` as LLVM vectorizes it); the same codes and flag word either way.  The condition of
    #: :data:`E4M3_GRP` (the same eight-lane IR lane, :func:`_e4m3_lane8_ir`), not a second test of the features.
    E4M3_V8: bool = E4M3_GRP

    @_intrinsic
    def _e4m3_v8_row_i(typingctx: Any, a: Any, mp: Any, mn: Any, o: Any, n: Any, ovf_pos: Any, ovf_neg: Any) -> Any:
        """Elements ``0 .. n - 1`` of ``a`` (FP32 bits; ``n`` a multiple of 32) to E4M3 under RNE with the
        multipliers ``mp``/``mn`` of a positive / negative source (as :func:`_e4m3_v32`), the codes stored
        to ``o`` (uint8): one loop of its own in LLVM IR, 32 elements (four 8-lane vectors of
        :func:`_e4m3_lane8_ir`, AVX2) a step, the codes packed by :func:`_e4m3_pack32_ir`, the source
        prefetched :data:`PF_AHEAD` elements ahead; returns the least flag key | the largest mark << 32
        (:func:`_e4m3_lane`'s, every bit the same; :func:`_e4m3_word` makes the flag word).  Each 8-lane
        vector's key and mark reach the accumulators through empty asm statements (no instruction) that the
        next vector's load address depends on: LLVM neither interleaves the four vectors (16 registers are
        too few for two) nor turns the accumulators into a tree at the loop's end.  Zen 3, one thread, scale
        1.625, a 32768-element row block in L2: 0.56 -> 0.48 ns/elem (h-e4p)."""
        if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == _types.uint32
                and _mults_ok(mp, mn) and isinstance(o, _types.Array) and o.ndim == 1 and o.layout == "C"
                and o.dtype == _types.uint8 and isinstance(n, _types.Integer)
                and isinstance(ovf_pos, _types.Integer) and isinstance(ovf_neg, _types.Integer)):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            aty, mty, mnty, oty, _, _, _ = signature.args
            av, mpv, mnv, ov, nv, opv, onv = args
            i32, i64 = _ir.IntType(32), _ir.IntType(64)
            v8, f8 = _V8, _ir.VectorType(_ir.FloatType(), 8)
            umin = _llvm_fn(builder, "llvm.umin.v8i32", v8, [v8, v8])
            umax = _llvm_fn(builder, "llvm.umax.v8i32", v8, [v8, v8])

            def k(v: int) -> Any:
                return _ir.Constant(v8, [v & 0xFFFFFFFF] * 8)

            ap = context.make_array(aty)(context, builder, av).data
            opp = context.make_array(oty)(context, builder, ov).data
            rows = isinstance(mty, _types.Array)
            if rows:
                mpp = context.make_array(mty)(context, builder, mpv).data
                mnp = context.make_array(mty)(context, builder, mnv).data
            else:
                mps = _e4m3_splat8(builder, mpv, f8)
                mns = None if mnty == _types.none else _e4m3_splat8(builder, mnv, f8)
            n64 = builder.sext(nv, i64) if nv.type.width < 64 else nv
            ovp, ovn = _e4m3_splat8(builder, opv), _e4m3_splat8(builder, onv)
            pre = builder.block
            loop = builder.append_basic_block("e4m3v8.loop")
            done = builder.append_basic_block("e4m3v8.done")
            builder.cbranch(builder.icmp_signed(">", n64, _ir.Constant(i64, 0)), loop, done)
            builder.position_at_end(loop)
            j = builder.phi(i64)
            kmin0 = builder.phi(v8)
            kmax0 = builder.phi(v8)
            j.add_incoming(_ir.Constant(i64, 0), pre)
            kmin0.add_incoming(k(-1), pre)
            kmax0.add_incoming(k(0), pre)
            i8p = _ir.IntType(8).as_pointer()
            for q in (0, 16):  # the step's two source lines, PF_AHEAD elements ahead
                pf = builder.bitcast(builder.gep(ap, [builder.add(j, _ir.Constant(i64, q + PF_AHEAD))]), i8p)
                builder.call(_llvm_fn(builder, "llvm.prefetch.p0i8", _ir.VoidType(), [i8p, i32, i32, i32]),
                             [pf, _ir.Constant(i32, 0), _ir.Constant(i32, 2), _ir.Constant(i32, 1)])
            codes = []
            kmin, kmax, jd = kmin0, kmax0, j
            for h in range(4):
                js = builder.add(jd, _ir.Constant(i64, 8 * h))
                x = builder.load(builder.bitcast(builder.gep(ap, [js]), v8.as_pointer()), align=4)
                if rows:
                    mpf = builder.load(builder.bitcast(builder.gep(mpp, [js]), f8.as_pointer()), align=4)
                    mnf = builder.load(builder.bitcast(builder.gep(mnp, [js]), f8.as_pointer()), align=4)
                else:
                    mpf, mnf = mps, mns
                code, key, mark = _e4m3_lane8_ir(builder, x, mpf, mnf, ovp, ovn, False)
                kmin = _e4m3_fence(builder, builder.call(umin, [kmin, key]))
                kmax = _e4m3_fence(builder, builder.call(umax, [kmax, mark]))
                codes.append(code)
                if E4M3_GRP:
                    jd = builder.asm(_ir.FunctionType(i64, [i64, v8, v8, v8]), "", "=r,0,x,x,x",
                                     [jd, codes[-1], kmin, kmax], False)
            builder.store(_e4m3_pack32_ir(builder, codes), builder.bitcast(builder.gep(opp, [j]), v8.as_pointer()),
                          align=1)
            jn = builder.add(j, _ir.Constant(i64, 32))
            end = builder.block
            j.add_incoming(jn, end)
            kmin0.add_incoming(kmin, end)
            kmax0.add_incoming(kmax, end)
            builder.cbranch(builder.icmp_signed("<", jn, n64), loop, done)
            builder.position_at_end(done)
            fmin = builder.phi(v8)
            fmax = builder.phi(v8)
            fmin.add_incoming(k(-1), pre)
            fmax.add_incoming(k(0), pre)
            fmin.add_incoming(kmin, end)
            fmax.add_incoming(kmax, end)
            rmin = builder.call(_llvm_fn(builder, "llvm.vector.reduce.umin.v8i32", i32, [v8]), [fmin])
            rmax = builder.call(_llvm_fn(builder, "llvm.vector.reduce.umax.v8i32", i32, [v8]), [fmax])
            return builder.or_(builder.zext(rmin, i64), builder.shl(builder.zext(rmax, i64), _ir.Constant(i64, 32)))

        return _types.uint64(a, mp, mn, o, n, ovf_pos, ovf_neg), codegen

    _e4m3_v8_row: Any = _e4m3_v8_row_i

    #: the product rounded to odd by embedded rounding (:func:`_product_rz_ir`; Zen 5, one thread,
    #: scale 1.625, the pass 0.265 -> 0.226 ns/elem, 84 -> 64 instructions per 32 elements)
    _hif8_v32: Any = _hif8_v32_make(False)
    #: :func:`_hif8_v32` for multipliers that are all 1 (``mp``/``mn`` not read): the same entries,
    #: the key from the source's bits (one and, one add, one or per lane instead of the product
    #: rounded to odd: Zen 5, one thread, the pass 0.28 -> 0.16 ns/elem)
    _hif8_v32u: Any = _hif8_v32_make(True)
    #: :func:`_hif8_v32` / :func:`_hif8_v32u` returning the 32 entries themselves (16 int32 lanes, two
    #: 16-bit entries each) instead of their OR in eight lanes: the RowMax/GroupMax passes
    #: (:func:`_fp8_pass_keys8`, :func:`_fp8_pass_keys16`, :func:`_fp8_pass_loops`) OR them into one
    #: 16-lane accumulator per step, reduced once a row by :func:`_hif8_hor16` (no halving and shift per
    #: step; Zen 5, one thread, HiF8 GroupN 8 unit lanes +18..+26% -> +4..+10% over the plain pass)
    _hif8_v32f: Any = _hif8_v32_make(False, full=True)
    _hif8_v32uf: Any = _hif8_v32_make(True, full=True)
else:  # pragma: no cover - kernels are not used without numba; the same lanes as int32 numpy arrays
    def _v8_no_runtime_unroll() -> None:
        pass

    def _prefetch(arr: Any, j: int) -> None:
        pass

    def _store_nt16(dst: Any, j: int, src: Any, k: int) -> None:
        dst[j:j + 16] = src[k:k + 16]

    def _sfence() -> None:
        pass

    def _addr(arr: Any) -> int:
        return int(arr.ctypes.data)

    def _borrow(arr: Any, lo: int, hi: int) -> Any:
        return arr[lo:hi]

    def _fold16_np(arr: Any, s: int, gk: Any, g: int, seg: int) -> int:
        x = np.asarray(arr[s:s + 16 * seg], np.uint32).view(np.int32).reshape(16, seg).max(axis=1)
        b = x.view(np.uint32)
        gk[g:g + 16] = np.where(x < 0, ~b, b ^ np.uint32(0x80000000))
        return int(((x < 0) << np.arange(16)).sum())

    def _fold16_128(arr: Any, s: int, gk: Any, g: int) -> int:
        return _fold16_np(arr, s, gk, g, 128)

    def _foldb_8(arr: Any, s: int, gk: Any, g: int) -> int:
        return _foldb_seg(arr, s, gk, g, 8, False)

    def _foldb_16(arr: Any, s: int, gk: Any, g: int) -> int:
        return _foldb_seg(arr, s, gk, g, 16, False)

    def _foldb_seg(arr: Any, s: int, gk: Any, g: int, seg: int, masked: bool) -> int:
        ng = 32 if seg == 8 else 16
        x = np.asarray(arr[s:s + ng * seg], np.uint32)
        if masked:
            x = x & np.uint32(0x7FFFFFFF)
        m = x.view(np.int32).reshape(ng, seg).max(axis=1)
        b = m.view(np.uint32)
        gk[g:g + ng] = np.where(m < 0, ~b, b ^ np.uint32(0x80000000))
        return int(((m < 0).astype(np.int64) << np.arange(ng)).sum())

    def _v8_load(arr: Any, j: int) -> Any:
        return np.asarray(arr[j:j + 8]).view(np.int32).copy()

    def _v8_store(arr: Any, j: int, v: Any) -> None:
        arr[j:j + 8] = v.astype(arr.dtype)

    def _v8_splat(x: int) -> Any:
        return np.full(8, x, np.int64).astype(np.int32)

    def _v8_rne(x: Any, sc: Any) -> Any:
        s = np.asarray(sc, np.int32).view(np.float32).astype(np.float64) if np.ndim(sc) else np.float64(sc)
        return np.rint(x.astype(np.float64) * s).astype(np.int64).astype(np.int32)

    def _v8_max(a: Any, b: Any) -> Any:
        return np.maximum(a, b)

    def _v8_min(a: Any, b: Any) -> Any:
        return np.minimum(a, b)

    def _v8_and(a: Any, b: Any) -> Any:
        return a & b

    def _v8_or(a: Any, b: Any) -> Any:
        return a | b

    def _v8_xor(a: Any, b: Any) -> Any:
        return a ^ b

    def _v8_add(a: Any, b: Any) -> Any:
        return a + b  # int32 arrays wrap

    def _v8_hmax(a: Any) -> Any:
        return np.int32(a.max())

    def _v8_hmin(a: Any) -> Any:
        return np.int32(a.min())

    def _v8_hor(a: Any) -> Any:
        return np.int32(np.bitwise_or.reduce(a))

    def _hif8_look32(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any) -> Any:
        raise NotImplementedError  # the pass looks up one element at a time without numba

    def _hif8_look32u(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any) -> Any:
        raise NotImplementedError  # the pass looks up one element at a time without numba

    def _hif8_look8(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any) -> Any:
        raise NotImplementedError  # the pass looks up one element at a time without numba

    def _hif8_look8g(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any, gk: Any, g: int, rh: Any, rl: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused pass calls it (numba)

    def _hif8_look8gu(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any, gk: Any, g: int, rh: Any, rl: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused pass calls it (numba)

    def _hif8_look16g(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any, gk: Any, g: int, rh: Any, rl: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused pass calls it (numba)

    def _hif8_look16gu(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any, gk: Any, g: int, rh: Any,
                      rl: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused pass calls it (numba)

    def _hif8_look32g(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any, gk: Any, g: int, rh: Any,
                      rl: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused pass calls it (numba)

    def _hif8_look32gu(a: Any, mp: Any, mn: Any, j: int, o: Any, keys: Any, gk: Any, g: int, rh: Any,
                      rl: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused pass calls it (numba)

    E4M3_GRP = False

    def _e4m3_acc8_0() -> Any:
        raise NotImplementedError  # only the AVX2 fused E4M3 pass calls it (numba)

    def _e4m3_acc8_min(acc: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused E4M3 pass calls it (numba)

    def _e4m3_acc8_max(acc: Any) -> Any:
        raise NotImplementedError  # only the AVX2 fused E4M3 pass calls it (numba)

    def _e4m3_grp(a: Any, mp: Any, mn: Any, j: int, o: Any, acc: Any, gk: Any, g: int, gsz: int, unit: bool,
                  sat: bool, absm: Any, per: int) -> Any:
        raise NotImplementedError  # only the AVX2 fused E4M3 pass calls it (numba)

    HIF8_V32 = False
    E4M3_V32 = False
    E4M3_V8 = False

    def _e4m3_v8_row(a: Any, mp: Any, mn: Any, o: Any, n: int, ovf_pos: Any, ovf_neg: Any) -> Any:
        raise NotImplementedError  # the E4M3 pass runs its scalar lane without numba

    def _hif8_v32(a: Any, mp: Any, mn: Any, j: int, o: Any, ovf: int) -> Any:
        raise NotImplementedError  # the pass looks up one element at a time without numba

    def _hif8_v32u(a: Any, mp: Any, mn: Any, j: int, o: Any, ovf: int) -> Any:
        raise NotImplementedError  # the pass looks up one element at a time without numba

    def _hif8_v32f(a: Any, mp: Any, mn: Any, j: int, o: Any, ovf: int) -> Any:
        raise NotImplementedError  # the pass looks up one element at a time without numba

    def _hif8_v32uf(a: Any, mp: Any, mn: Any, j: int, o: Any, ovf: int) -> Any:
        raise NotImplementedError  # the pass looks up one element at a time without numba

    def _e4m3_acc0() -> Any:
        raise NotImplementedError  # the E4M3 pass runs its scalar lane without numba

    def _e4m3_acc_min(acc: Any) -> Any:
        raise NotImplementedError

    def _e4m3_acc_max(acc: Any) -> Any:
        raise NotImplementedError

    def _e4m3_v32(a: Any, mp: Any, mn: Any, j: int, o: Any, acc: Any, ovf_pos: Any, ovf_neg: Any) -> Any:
        raise NotImplementedError

    def _e4m3_v32u(a: Any, mp: Any, mn: Any, j: int, o: Any, acc: Any, ovf_pos: Any, ovf_neg: Any) -> Any:
        raise NotImplementedError


if NUMBA_AVAILABLE and not HIF8_V32:
    # The fused FP8 passes (:func:`_fp8_pass_fold`, :func:`_fp8_pass_keys8`, :func:`_fp8_pass_keys16`) are
    # built from the 32-element AVX-512 steps (embedded rounding, vpermi2w) and the row dispatch calls them
    # only when :data:`HIF8_V32` holds.  numba still compiles every function a kernel names, dead call or not,
    # and LLVM aborts the process on an AVX-512 intrinsic for a CPU without it ("Do not know how to split
    # the result of this operator": an AVX2 Zen 3, or NUMBA_CPU_NAME=haswell).  Elsewhere these names are
    # one never-called stub; the dispatch's other branches (:func:`_e4m3_pass`, :func:`_hif8_pass`, then
    # :func:`_fold_from_maxima`) do the work.
    @njit
    def _fp8_avx512_only(*args: Any) -> Any:
        # always true (args[2] is an array in all three signatures), but not foldable by numba: the
        # stub's return type stays the passes' uint32 flag word
        if args[2].size >= 0:
            raise AssertionError("an AVX-512 BW pass called on a CPU without it")
        return np.uint32(0)

    _fp8_pass_fold = _fp8_pass_keys8 = _fp8_pass_keys16 = _fp8_avx512_only  # noqa: F811


# ---------------------------------------------------------------------------
# Sixteen int32 lanes as one value (one AVX-512 register; two AVX2 registers elsewhere): the S32 RNE
# row loops (:func:`_s32_seg_rows`).  Written with explicit lanes, a loop keeps its NX/OF/maximum/minimum
# accumulators as vectors for a whole row segment and issues one source prefetch per 16 elements; the
# loop LLVM vectorizes by itself had to be restarted every 128 columns for the prefetches,
# paying a preamble, alias checks and four horizontal reductions each time (Zen 5, one thread, L2-resident
# row: 0.20 instead of 0.13 ns/element).

if NUMBA_AVAILABLE:  # pragma: no branch
    (_I32X16, _V16, _splat16, _v16_load_i, _v16_store_i, _v16_splat_i, _v16_binary, _v16_reduce,
     _v16_rne_i) = _i32_lanes(16)

    _v16_load: Any = _v16_load_i
    _v16_store: Any = _v16_store_i
    _v16_splat: Any = _v16_splat_i
    _v16_rne: Any = _v16_rne_i
    _v16_max: Any = _v16_binary("smax")
    _v16_min: Any = _v16_binary("smin")
    _v16_and: Any = _v16_binary("and")
    _v16_or: Any = _v16_binary("or")
    _v16_xor: Any = _v16_binary("xor")
    _v16_add: Any = _v16_binary("add")
    _v16_hmax: Any = _v16_reduce("smax")
    _v16_hmin: Any = _v16_reduce("smin")
    _v16_hor: Any = _v16_reduce("or")
    _v16_humax: Any = _v16_reduce("umax")
    _v16_umax: Any = _v16_binary("umax")
    _v16_umin: Any = _v16_binary("umin")
    _v16_humin: Any = _v16_reduce("umin")

    @_intrinsic
    def _v16_store_nt_i(typingctx: Any, arr: Any, j: Any, v: Any) -> Any:
        """``arr[j:j + 16] = v`` (a contiguous 1-D uint32 array, sixteen lanes) as one 64-byte non-temporal
        store straight from the register (``vmovntdq``; two 32-byte ones without AVX-512), no read for
        ownership.  Element ``j`` must be 64-byte aligned and in bounds (neither checked); weakly ordered,
        as :func:`_store_nt16`."""
        if not (isinstance(arr, _types.Array) and arr.ndim == 1 and arr.layout == "C"
                and arr.dtype in (_types.int32, _types.uint32) and isinstance(j, _types.Integer) and v == _I32X16):
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            st = builder.store(args[2], _lane_ptr(context, builder, signature.args[0], args[0], args[1], _V16))
            st.align = 64
            st.set_metadata("nontemporal", builder.module.add_metadata([_ir.Constant(_ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return _types.none(arr, j, v), codegen

    _v16_store_nt: Any = _v16_store_nt_i

    @_intrinsic
    def _v16_max32_i(typingctx: Any, m: Any, a: Any, j: Any, am: Any) -> Any:
        """The int32 maxima of ``m`` (16 lanes) and of the 32 elements ``a[j .. j + 31]`` (a contiguous
        1-D uint32 array of FP32 bits) taken lane-wise: lane l the largest of m[l], a[j + l] and
        a[j + 16 + l] (two ``vpmaxsd``).  The 32 elements are loaded as one ``<32 x i32>``, the load
        of :func:`_e4m3_v32` / :func:`_hif8_v32` at the same ``j``: called just before them (no store
        in between), LLVM keeps one load for both.  ``am`` None, or an integer ANDed into the 32 elements
        first (MaxAbs: 0x7FFFFFFF; two ``vpandd`` more); a form compiled for each.  No bounds check."""
        if not (m == _I32X16 and isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C"
                and a.dtype == _types.uint32 and isinstance(j, _types.Integer)
                and (isinstance(am, _types.Integer) or am == _types.none)):
            return None
        masked = isinstance(am, _types.Integer)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            i32 = _ir.IntType(32)
            x = builder.load(_lane_ptr(context, builder, signature.args[1], args[1], args[2],
                                       _ir.VectorType(i32, 32)), align=4)
            lo = builder.shuffle_vector(x, x, _ir.Constant(_V16, list(range(16))))
            hi = builder.shuffle_vector(x, x, _ir.Constant(_V16, list(range(16, 32))))
            if masked:
                mk = _splat16(builder, builder.trunc(context.cast(builder, args[3], signature.args[3], _types.int64),
                                                     i32), _V16)
                lo = builder.and_(lo, mk)
                hi = builder.and_(hi, mk)
            smax = _llvm_fn(builder, "llvm.smax.v16i32", _V16, [_V16, _V16])
            return builder.call(smax, [args[0], builder.call(smax, [lo, hi])])

        return _I32X16(m, a, j, am), codegen

    _v16_max32: Any = _v16_max32_i
    #: sixteen 16-lane maxima of the fused fold (:func:`_fp8_pass_fold`) to their keys at once
    _fold16_16: Any = _fold16_make(1)
    #: the BF16/FP16 rows' fold-first blocks of sixteen GroupN-8 groups (:func:`_fp16x_fold_groups`)
    _fold16_8: Any = _fold16_make(1, lanes=8)
    _fold16_8a: Any = _fold16_make(1, True, 8)
    #: :func:`_fp16x_fused_loop`'s blocks with a group whose maximum is negative: the placeholders' keys from the
    #: sixteen groups' minima (GroupN 8, 16, 32)
    _fixneg16_8: Any = _fold16_make(1, lanes=8, fixneg=True)
    _fixneg16_16: Any = _fold16_make(1, fixneg=True)
    _fixneg16_32: Any = _fold16_make(2, fixneg=True)

    #: :func:`_fp16x_blk`'s flag accumulators pass through a value barrier after each vector (AVX-512 targets:
    #: FP16 GroupN 16 from 19.9 to 17.0 instructions per 16 elements and 51 stack accesses per block to none,
    #: GroupN 32 from 19.5 to 15.5 and 155 to none; h-fp16g2, docs/performance.md)
    FP16X_ACC_BARRIER: bool = target_has_feature("avx512bw")
    #: AVX2 targets (AVX, no AVX-512 BW): :func:`_fp16x_blk` keeps its flag accumulators in eight lanes (one ``ymm``
    #: each; a vector's two halves taken in one after the other, each through a value barrier), the inexact mask's
    #: halves through a barrier too (else LLVM packed the block's masks to bytes and spilled), converts FP16 eight
    #: lanes at a time and takes the tree's last round as ``vshufps`` does (Zen 3, FP16 GroupN 8: 406 -> 300
    #: instructions a block of 128 elements; h-f16)
    FP16X_AVX2: bool = not FP16X_ACC_BARRIER and target_has_feature("avx")

    def _fp16x_blk_i(typingctx: Any, a: Any, o: Any, s: Any, gk: Any, g: Any, nxv: Any, ufv: Any, amv: Any,
                     smv: Any, relum: Any, satm: Any, absm: Any, lane: Any, gsz: Any, relu: Any,
                     mabs: Any) -> Any:
        """One block of sixteen ``gsz``-element groups of a BF16/FP16 row (``lane`` :data:`LANE_BF16` or
        :data:`LANE_FP16`, ``gsz`` 8, 16 or 32, ``relu`` 1 for ReluMode RELU, 0 for NONE, 2 for the ReLU mask
        ``relum`` and the MaxAbs mask ``absm`` (0x7FFFFFFF with MaxAbs, else all ones) at run time,
        ``mabs`` 1 for MaxAbsEn else 0 (0 with ``relu`` 2): all four integer literals, one compiled form
        each), converted and folded from the same
        loads: for each 16-lane vector of the block ``a[s ..]`` (uint32 FP32 bits) the codes of
        :func:`_bf16_lane` / :func:`_f16_lane` without Sat (``satm`` not read: an overflow's code is Inf's;
        :func:`_fp16x_fused_loop` redoes the codes of a row whose magnitudes reached BIG when Sat is on -- the
        Sat step cost three lane operations a vector and two registers: Zen 3, BF16 GroupN 8 from 414 to 318
        instructions a block of 128 elements, h-f16) to the same elements of ``o`` (uint16),
        the lane-wise flag accumulators of :func:`_fp32_span` taken in (``nxv`` OR of the inexact
        bits/masks, ``ufv`` OR of those under the tiny mask, ``amv``/``smv`` unsigned maxima of the
        magnitudes after ReLU / of the sources), and the int32 maximum of each group's sources (with
        ``mabs`` their magnitudes) reduced all the block's groups at once by the shuffle tree of
        :func:`_fold16_make`, built as the vectors come (at most five partial vectors live; GroupN 32: a group's
        two vectors' maximum first; the flag accumulators through :data:`FP16X_ACC_BARRIER`).  What the
        literals 0/1 save per vector (``relu`` 2 keeps both maxima and both masks every vector): without ReLU the magnitude after ReLU is the source's (``smv`` comes
        back equal to ``amv``: one maximum, not two); with ReLU ``max(x, 0)`` (one operation); the
        accumulator that equals the groups' maxima (``amv`` without ReLU with MaxAbs, ``smv`` with both,
        ``max(amv, 0)`` with ReLU alone: its lanes are the signed maxima, clipped at 0) is taken from the
        tree's sixteen results once a block.  ``gk[g + q]`` gets group q's order
        key (``b ^ 0x80000000``), or ``~b`` when its maximum is negative (a placeholder: the caller redoes
        that group with its smallest int32).  Returns ``(nxv, ufv, amv, smv, mask of those groups)``.
        A source NaN/Inf gives garbage codes and flags (the row is redone: ``smv`` shows it).  No bounds
        check: the block within ``a`` and ``o``, its groups' keys within ``gk``."""
        if not (all(isinstance(t, _types.IntegerLiteral) for t in (lane, gsz, relu, mabs))
                and lane.literal_value in (LANE_BF16, LANE_FP16) and gsz.literal_value in (8, 16, 32)
                and relu.literal_value in (0, 1, 2) and mabs.literal_value in (0, 1)
                and not (relu.literal_value == 2 and mabs.literal_value == 1)):
            return None
        if not (all(v == _I32X16 for v in (nxv, ufv, amv, smv))
                and all(isinstance(t, _types.Integer) for t in (s, g, relum, satm, absm))):
            return None
        for arr, dt in ((a, _types.uint32), (o, _types.uint16), (gk, _types.uint32)):
            if not (isinstance(arr, _types.Array) and arr.ndim == 1 and arr.layout == "C" and arr.dtype == dt):
                return None
        bf16 = lane.literal_value == LANE_BF16
        gs = gsz.literal_value
        gen = relu.literal_value == 2  # the ReLU and MaxAbs masks at run time
        rl = relu.literal_value == 1
        ma = mabs.literal_value == 1
        ret = _types.Tuple((_I32X16, _I32X16, _I32X16, _I32X16, _types.int32))

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            i16, i32, i64 = _ir.IntType(16), _ir.IntType(32), _ir.IntType(64)
            v16 = _V16
            h16 = _ir.VectorType(i16, 16)
            f16 = _ir.VectorType(_ir.FloatType(), 16)
            hv = _ir.VectorType(_ir.HalfType(), 16)
            v8 = _ir.VectorType(i32, 8)

            def c(x: int, t: Any = v16) -> Any:
                return _ir.Constant(t, [x] * 16)

            def sp(k: int) -> Any:
                return _splat16(builder, builder.trunc(context.cast(builder, args[k], signature.args[k], _types.int64),
                                                       i32), v16)

            smax = _llvm_fn(builder, "llvm.smax.v16i32", v16, [v16, v16])
            umax = _llvm_fn(builder, "llvm.umax.v16i32", v16, [v16, v16])

            def acc(v: Any) -> Any:
                # an accumulator's new value through an empty asm (a value barrier, no instruction): without it
                # LLVM takes the block's maxima and ORs as reductions, evaluated as trees at the block's end with
                # every vector's operand kept live (spilled) until then (AVX-512 only: one register holds it)
                if not FP16X_ACC_BARRIER:
                    return v
                return builder.asm(_ir.FunctionType(v16, [v16]), "", "=v,0", [v], False)

            relum, satm, absm = sp(9), sp(10), sp(11)
            s_ = context.cast(builder, args[2], signature.args[2], _types.intp)
            adata = context.make_array(signature.args[0])(context, builder, args[0]).data
            odata = context.make_array(signature.args[1])(context, builder, args[1]).data
            abase = builder.bitcast(builder.gep(adata, [s_]), v16.as_pointer())
            obase = builder.bitcast(builder.gep(odata, [s_]), h16.as_pointer())
            nxv, ufv, amv, smv = args[5], args[6], args[7], args[8]
            a8 = FP16X_AVX2  # eight-lane accumulators (FP16X_AVX2): each vector's two halves taken in
            umax8 = _llvm_fn(builder, "llvm.umax.v8i32", v8, [v8, v8])
            smax8 = _llvm_fn(builder, "llvm.smax.v8i32", v8, [v8, v8])

            def half(v: Any, k: int) -> Any:
                return builder.shuffle_vector(v, v, _ir.Constant(v8, list(range(8 * k, 8 * k + 8))))

            def bar8(v: Any) -> Any:  # a value barrier on eight lanes (one ymm; no instruction)
                return builder.asm(_ir.FunctionType(v8, [v8]), "", "=x,0", [v], False)

            def op8(name: str, x: Any, y: Any) -> Any:
                if name == "or":
                    return builder.or_(x, y)
                return builder.call(umax8 if name == "umax" else smax8, [x, y])

            def upd(a: Any, v: Any, name: str, last: bool = False) -> Any:
                # the accumulator a with the sixteen lanes of v taken in by the op (a8: a has eight lanes, v's halves
                # taken in one after the other)
                if a8:
                    r8 = op8(name, bar8(op8(name, a, half(v, 0))), half(v, 1))
                    return r8 if last else bar8(r8)
                r16 = builder.or_(a, v) if name == "or" else builder.call(umax if name == "umax" else smax, [a, v])
                return r16 if last else acc(r16)

            if a8:  # the sixteen lanes given to eight (amv/smv: every lane >= 0 as int32, umax and smax agree)
                nxv = op8("or", half(nxv, 0), half(nxv, 1))
                ufv = op8("or", half(ufv, 0), half(ufv, 1))
                amv = op8("umax", half(amv, 0), half(amv, 1))
                smv = op8("umax", half(smv, 0), half(smv, 1))

            def merge(x: Any, y: Any, ox: List[int], oy: List[int], h: int) -> Tuple[Any, List[int]]:
                # one round of the tree: the h-lane halves of two vectors' groups packed into one
                lo, hi, own = [], [], []
                if h == 1 and FP16X_AVX2:  # four-lane chunks as vshufps takes them: [x0 x2 y0 y2], [x1 x3 y1 y3]
                    for c4 in range(0, 16, 4):
                        lo += [c4, c4 + 2, 16 + c4, 16 + c4 + 2]
                        hi += [c4 + 1, c4 + 3, 16 + c4 + 1, 16 + c4 + 3]
                        own += [ox[c4], ox[c4 + 2], oy[c4], oy[c4 + 2]]
                elif FP16X_ACC_BARRIER:  # AVX-512: the round of :func:`_sr_plan` (vshufps, then vshufi64x2; no
                    # vpermt2q/vpermt2d and their register copies: Zen 4)
                    u, own = _sr_plan(ox, oy)
                    return _sr_round(builder, x, y, u), own
                else:
                    for blk in range(0, 16, 2 * h):
                        lo += [blk + i for i in range(h)] + [16 + blk + i for i in range(h)]
                        hi += [blk + h + i for i in range(h)] + [16 + blk + h + i for i in range(h)]
                        own += [ox[blk]] * h + [oy[blk]] * h
                a1 = builder.shuffle_vector(x, y, _ir.Constant(v16, lo))
                a2 = builder.shuffle_vector(x, y, _ir.Constant(v16, hi))
                return builder.call(smax, [a1, a2]), own

            # the tree built as the vectors come (a stack of partial results: at most five live vectors); GroupN 8 on
            # AVX2 (t8): each vector's first round at once, from a reload of its elements 4-11 (one ymm a vector, not
            # two: BF16 kept tree values on the stack), then two rounds of eight lanes
            t8 = gs == 8 and a8
            stack: List[Tuple[Any, List[int], int]] = []
            col: List[Any] = []
            h0 = 4 if gs == 8 else 8
            for k in range(gs):
                x = builder.load(builder.gep(abase, [_ir.Constant(i64, k)]), align=4)
                if gen:  # both maxima every vector, the masks as given
                    xm = builder.and_(x, absm)
                    xr = builder.and_(x, builder.xor(builder.and_(builder.ashr(x, c(31)), relum), c(-1)))
                    ax = builder.and_(xr, c(0x7FFFFFFF))
                    smv = upd(smv, builder.and_(x, c(0x7FFFFFFF)), "umax")
                    amv = upd(amv, ax, "umax")
                else:
                    xa = builder.and_(x, c(0x7FFFFFFF))
                    xm = xa if ma else x
                    xr = builder.call(smax, [x, c(0)]) if rl else x  # ReLU: a negative source (-0 too) is +0
                    ax = xr if rl else xa
                    if rl and not ma:
                        smv = upd(smv, xa, "umax")
                    if rl or not ma:
                        amv = upd(amv, ax, "umax")
                if bf16:
                    lsb = builder.and_(builder.lshr(xr, c(16)), c(1))
                    r = builder.lshr(builder.add(builder.add(xr, c(0x7FFF)), lsb), c(16))
                    code = builder.trunc(r, h16)  # (no Sat step: below 2**16, packed without masking)
                    nxb = xr
                    tiny = builder.sext(builder.icmp_signed("<", ax, c(BF16_TINY)), v16)
                else:
                    xf = builder.bitcast(xr, f16)
                    if FP16X_AVX2:  # two 8-lane conversions (no 16-lane half vector put together and split again)
                        f8 = _ir.VectorType(_ir.FloatType(), 8)
                        hv8 = _ir.VectorType(_ir.HalfType(), 8)
                        xfl = builder.shuffle_vector(xf, xf, _ir.Constant(v8, list(range(8))))
                        xfh = builder.shuffle_vector(xf, xf, _ir.Constant(v8, list(range(8, 16))))
                        hl = builder.fptrunc(xfl, hv8)
                        hh = builder.fptrunc(xfh, hv8)
                        nl = builder.fcmp_ordered("!=", builder.fpext(hl, f8), xfl)
                        nh = builder.fcmp_ordered("!=", builder.fpext(hh, f8), xfh)
                        nxb = builder.sext(builder.shuffle_vector(nl, nh, _ir.Constant(v16, list(range(16)))), v16)
                        hb = builder.bitcast(builder.shuffle_vector(hl, hh, _ir.Constant(v16, list(range(16)))), h16)
                    else:
                        h = builder.fptrunc(xf, hv)
                        hb = builder.bitcast(h, h16)
                        if FP16X_ACC_BARRIER:  # AVX-512: the codes through a value barrier, so one vcvtps2ph feeds both
                            # the store and the way back (else LLVM converts twice, once into the store: Zen 4, two of ~14
                            # instructions a vector; a target without AVX has no register for the 'v' constraint)
                            hb = builder.asm(_ir.FunctionType(h16, [h16]), "", "=v,0", [hb], False)
                        back = builder.fpext(builder.bitcast(hb, hv), f16)
                        nxb = builder.sext(builder.fcmp_ordered("!=", back, xf), v16)
                    code = hb  # (no Sat step)
                    tiny = builder.sext(builder.icmp_signed("<", ax, c(F16_TINY)), v16)
                if a8:  # the inexact mask's halves through a value barrier: no i1 logic packed to bytes
                    nlo, nhi = bar8(half(nxb, 0)), bar8(half(nxb, 1))
                    nxv = bar8(builder.or_(bar8(builder.or_(nxv, nlo)), nhi))
                    ufv = bar8(builder.or_(bar8(builder.or_(ufv, builder.and_(nlo, half(tiny, 0)))),
                                           builder.and_(nhi, half(tiny, 1))))
                else:
                    nxv = upd(nxv, nxb, "or")
                    ufv = upd(ufv, builder.and_(nxb, tiny), "or")
                builder.store(code, builder.gep(obase, [_ir.Constant(i64, k)]), align=2)
                if t8:  # vector k: groups 2k and 2k + 1 to four lanes each in one ymm (as _s32_gmax8_ir)
                    up = builder.gep(builder.bitcast(abase, i32.as_pointer()), [_ir.Constant(i64, 16 * k + 4)])
                    u = builder.load(builder.bitcast(up, v8.as_pointer()), align=4)  # elements 4-11
                    if gen:
                        u = builder.and_(u, half(absm, 0))
                    elif ma:
                        u = builder.and_(u, _ir.Constant(v8, [0x7FFFFFFF] * 8))
                    w = builder.shuffle_vector(half(xm, 0), half(xm, 1), _ir.Constant(v8, [0, 1, 2, 3, 12, 13, 14, 15]))
                    item = (builder.call(smax8, [u, w]), [2 * k] * 4 + [2 * k + 1] * 4, 0)
                elif gs == 8:  # vector k: groups 2k (lanes 0-7) and 2k + 1 (lanes 8-15)
                    item = (xm, [2 * k] * 8 + [2 * k + 1] * 8, 0)
                else:  # group k // nv: its nv vectors' vertical maximum
                    col.append(xm)
                    if len(col) < gs // 16:
                        continue
                    while len(col) > 1:
                        col = [builder.call(smax, [col[i], col[i + 1]]) for i in range(0, len(col), 2)]
                    item = (col[0], [k // (gs // 16)] * 16, 0)
                    col = []
                while stack and stack[-1][2] == item[2] and not (t8 and item[2] == 2):
                    px, po, lv = stack.pop()
                    if t8:  # vpunpck[lh]qdq, then vshufps (as _s32_gmax8_ir)
                        lo8, hi8 = (([0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]) if lv == 0 else
                                    ([0, 2, 8, 10, 4, 6, 12, 14], [1, 3, 9, 11, 5, 7, 13, 15]))
                        a1 = builder.shuffle_vector(px, item[0], _ir.Constant(v8, lo8))
                        a2 = builder.shuffle_vector(px, item[0], _ir.Constant(v8, hi8))
                        mv, mo = builder.call(smax8, [a1, a2]), [(po + item[1])[i] for i in lo8]
                    else:
                        mv, mo = merge(px, item[0], po, item[1], h0 >> lv)
                    item = (mv, mo, lv + 1)
                stack.append(item)
            if t8:  # groups 0-7 and 8-15, each put in order by one permutation (operands through a barrier)
                vs = [bar8(stack[q][0]) for q in range(2)]
                rs = [builder.shuffle_vector(vs[q], vs[q], _ir.Constant(v8, [stack[q][1].index(8 * q + j)
                                                                             for j in range(8)])) for q in range(2)]
                r = builder.shuffle_vector(rs[0], rs[1], _ir.Constant(v16, list(range(16))))
            else:
                v, own = stack[0][0], stack[0][1]
                r = builder.shuffle_vector(v, _ir.Constant(v16, None),
                                           _ir.Constant(v16, [own.index(q) for q in range(16)]))
            if gen:
                pass
            elif ma and rl:
                smv = upd(smv, r, "umax", True)
            elif ma:
                amv = upd(amv, r, "umax", True)
            elif rl:
                amv = upd(amv, r, "smax", True)
            if not (rl or gen):
                smv = amv
            neg = builder.icmp_signed("<", r, c(0))
            key = builder.select(neg, builder.xor(r, c(-1)), builder.xor(r, c(-2147483648)))
            gdata = context.make_array(signature.args[3])(context, builder, args[3]).data
            g_ = context.cast(builder, args[4], signature.args[4], _types.intp)
            gp = builder.gep(gdata, [g_])
            negm = builder.zext(builder.bitcast(neg, i16), i32)
            builder.store(key, builder.bitcast(gp, v16.as_pointer()), align=4)
            if a8:  # back to sixteen lanes, the upper eight 0 (neutral for the ORs and unsigned maxima)
                z8 = _ir.Constant(v8, [0] * 8)
                nxv, ufv, amv, smv = (builder.shuffle_vector(t, z8, _ir.Constant(v16, list(range(16))))
                                      for t in (nxv, ufv, amv, smv))
            return context.make_tuple(builder, signature.return_type, [nxv, ufv, amv, smv, negm])

        return ret(a, o, s, gk, g, nxv, ufv, amv, smv, relum, satm, absm, lane, gsz, relu, mabs), codegen

    _fp16x_blk: Any = _intrinsic(_fp16x_blk_i)

    # The FP8 passes' GroupN 8/16/32 maxima reduced in the 32-element step (h-fp8s): the step's two
    # 16-lane halves (elements 0-15, 16-31) and the two steps of one 64-element iteration are paired by
    # the shuffle rounds of :func:`_foldb_make` (a lane pair of one group -> one lane), so that one
    # 16-lane vector a 64-element iteration holds every group's partial maxima (GroupN 8: two lanes a
    # group, 16: four, 32: eight); :func:`_fold_small` reduces sixteen groups' of those vectors at once.
    _SR_LO = {1: [x for c in range(4) for x in (4 * c, 4 * c + 2, 16 + 4 * c, 16 + 4 * c + 2)],
              4: [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27],
              8: list(range(8)) + list(range(16, 24))}
    _SR_HI = {1: [i + 1 for i in _SR_LO[1]], 4: [i + 4 for i in _SR_LO[4]], 8: [i + 8 for i in _SR_LO[8]]}

    def _sr_plan(ox: List[int], oy: List[int]) -> Tuple[int, List[int]]:
        """The round pairing vectors x, y (lane owners ``ox``, ``oy``): the first unit u (1: adjacent
        lanes, ``vshufps``; 4: adjacent 128-bit blocks; 8: 256-bit halves) whose two picked lanes have one
        owner, and the result's owners."""
        cat = ox + oy
        for u in (1, 4, 8):
            if [cat[i] for i in _SR_LO[u]] == [cat[i] for i in _SR_HI[u]]:
                return u, [cat[i] for i in _SR_LO[u]]
        raise AssertionError("no round pairs these lanes")

    def _sr_round(builder: Any, x: Any, y: Any, u: int) -> Any:
        smax = _llvm_fn(builder, "llvm.smax.v16i32", _V16, [_V16, _V16])
        a1 = builder.shuffle_vector(x, y, _ir.Constant(_V16, _SR_LO[u]))
        a2 = builder.shuffle_vector(x, y, _ir.Constant(_V16, _SR_HI[u]))
        return builder.call(smax, [a1, a2])

    def _small_plan(gsz: int) -> Tuple[Any, int, List[int]]:
        """GroupN ``gsz`` (8, 16, 32): the step's round unit (None: the halves are one group, a plain
        maximum), the pairing round's unit, and the owners of the stored vector's lanes (groups 0 ..
        64 / gsz - 1 of its 64 elements)."""
        lo = [lane // gsz for lane in range(16)]
        hi = [(16 + lane) // gsz for lane in range(16)]
        su, so = (None, lo) if gsz == 32 else _sr_plan(lo, hi)
        pu, po = _sr_plan(so, [o + 32 // gsz for o in so])
        return su, pu, po

    def _v16_red32_make(gsz: int) -> Any:
        """The intrinsic ``red(a, j, am)``: the 32 elements ``a[j .. j + 31]`` (FP32 bits, uint32, loaded
        as the conversion's ``<32 x i32>``, CSE'd with it as in :func:`_v16_max32`), each ANDed with
        ``am`` first unless None, reduced by one round to 16 lanes (GroupN 32: one maximum)."""
        su = _small_plan(gsz)[0]

        @_intrinsic
        def red(typingctx: Any, a: Any, j: Any, am: Any) -> Any:
            if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == _types.uint32
                    and isinstance(j, _types.Integer) and (isinstance(am, _types.Integer) or am == _types.none)):
                return None
            masked = isinstance(am, _types.Integer)

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                i32 = _ir.IntType(32)
                x = builder.load(_lane_ptr(context, builder, signature.args[0], args[0], args[1],
                                           _ir.VectorType(i32, 32)), align=4)
                lo = builder.shuffle_vector(x, x, _ir.Constant(_V16, list(range(16))))
                hi = builder.shuffle_vector(x, x, _ir.Constant(_V16, list(range(16, 32))))
                if masked:
                    mk = _splat16(builder, builder.trunc(context.cast(builder, args[2], signature.args[2],
                                                                      _types.int64), i32), _V16)
                    lo = builder.and_(lo, mk)
                    hi = builder.and_(hi, mk)
                if su is None:
                    return builder.call(_llvm_fn(builder, "llvm.smax.v16i32", _V16, [_V16, _V16]), [lo, hi])
                return _sr_round(builder, lo, hi, su)

            return _I32X16(a, j, am), codegen
        return red

    def _v16_pair_make(gsz: int) -> Any:
        """The intrinsic ``pair(x, y)``: two steps' vectors of ``red`` (elements 0-31, 32-63) to the
        one 16-lane vector the pass stores per 64 elements (one round)."""
        pu = _small_plan(gsz)[1]

        @_intrinsic
        def pair(typingctx: Any, x: Any, y: Any) -> Any:
            if not (x == _I32X16 and y == _I32X16):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return _sr_round(builder, args[0], args[1], pu)

            return _I32X16(x, y), codegen
        return pair

    def _group_keys_ir(context: Any, builder: Any, vecs: List[Any], gsz: int, gk_type: Any, gk: Any, g_type: Any,
                       g: Any) -> Any:
        """The IR shared by :func:`_foldm_make` and :func:`_fkeys_make`: the ``16 gsz / 64`` vectors ``vecs``
        of partial maxima in ``pair``'s layout reduced by rounds of :func:`_sr_plan` to one lane a group,
        the lanes put in group order, the keys (:func:`_foldb_make`'s) stored to ``gk[g .. g + 15]``;
        returns the i64 mask of the groups whose maximum is negative (bit q)."""
        po = _small_plan(gsz)[2]
        per = 64 // gsz  # groups in one vector
        owners = [[per * q + o for o in po] for q in range(len(vecs))]
        while len(vecs) > 1:
            nv, no = [], []
            for k in range(0, len(vecs), 2):
                u, own = _sr_plan(owners[k], owners[k + 1])
                nv.append(_sr_round(builder, vecs[k], vecs[k + 1], u))
                no.append(own)
            vecs, owners = nv, no
        assert sorted(owners[0]) == list(range(16))
        r = builder.shuffle_vector(vecs[0], _ir.Constant(_V16, None),
                                   _ir.Constant(_V16, [owners[0].index(q) for q in range(16)]))
        neg = builder.icmp_signed("<", r, _ir.Constant(_V16, [0] * 16))
        key = builder.select(neg, builder.xor(r, _ir.Constant(_V16, [-1] * 16)),
                             builder.xor(r, _ir.Constant(_V16, [-2147483648] * 16)))
        gdata = context.make_array(gk_type)(context, builder, gk).data
        g_ = context.cast(builder, g, g_type, _types.intp)
        builder.store(key, builder.bitcast(builder.gep(gdata, [g_]), _V16.as_pointer()), align=4)
        return builder.zext(builder.bitcast(neg, _ir.IntType(16)), _ir.IntType(64))

    def _foldm_make(gsz: int) -> Any:
        """The intrinsic ``foldm(gm, s, gk, g)``: the keys of sixteen GroupN-``gsz`` groups from their
        ``16 gsz / 64`` stored vectors ``gm[s ..]`` (the layout of ``pair``), reduced by rounds of
        :func:`_sr_plan` to one lane a group, to ``gk[g .. g + 15]`` as :func:`_foldb_make` writes them;
        returns the mask of the groups whose maximum is negative (bit q).  No bounds check."""
        nvec = gsz // 4  # 16 groups of gsz lanes in vectors of 64 // gsz groups

        @_intrinsic
        def foldm(typingctx: Any, arr: Any, s: Any, gk: Any, g: Any) -> Any:
            for a in (arr, gk):
                if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C"
                        and a.dtype in (_types.int32, _types.uint32)):
                    return None
            if not all(isinstance(t, _types.Integer) for t in (s, g)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                i64 = _ir.IntType(64)
                data = context.make_array(signature.args[0])(context, builder, args[0]).data
                s_ = context.cast(builder, args[1], signature.args[1], _types.intp)
                base = builder.bitcast(builder.gep(data, [s_]), _V16.as_pointer())
                vecs = [builder.load(builder.gep(base, [_ir.Constant(i64, q)]), align=4) for q in range(nvec)]
                return _group_keys_ir(context, builder, vecs, gsz, signature.args[2], args[2], signature.args[3],
                                      args[3])

            return _types.int64(arr, s, gk, g), codegen
        return foldm

    def _fkeys_make(gsz: int) -> Any:
        """The intrinsic ``fkeys(vs, gk, g)``: :func:`_foldm_make`'s keys of sixteen GroupN-``gsz`` groups
        from the tuple ``vs`` of their ``16 gsz / 64`` vectors of ``pair``'s layout (GroupN 8: two, the
        groups 0-7 and 8-15; GroupN 16: four) taken from registers instead of a stored row of maxima: the
        rounds left, the lanes to group order, the keys to ``gk[g .. g + 15]``; returns the mask of the
        groups whose maximum is negative (bit q).  No bounds check."""
        nvec = gsz // 4  # 16 groups of gsz lanes in vectors of 64 // gsz groups

        @_intrinsic
        def fkeys(typingctx: Any, vs: Any, gk: Any, g: Any) -> Any:
            if not (isinstance(vs, _types.UniTuple) and vs.count == nvec and vs.dtype == _I32X16
                    and isinstance(gk, _types.Array) and gk.ndim == 1 and gk.layout == "C"
                    and gk.dtype in (_types.int32, _types.uint32) and isinstance(g, _types.Integer)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                vecs = [builder.extract_value(args[0], k) for k in range(nvec)]
                return _group_keys_ir(context, builder, vecs, gsz, signature.args[1], args[1], signature.args[2],
                                      args[2])

            return _types.int64(vs, gk, g), codegen
        return fkeys

    _v16_red32_8, _v16_red32_16, _v16_red32_32 = (_v16_red32_make(8), _v16_red32_make(16), _v16_red32_make(32))
    _v16_pair_8, _v16_pair_16, _v16_pair_32 = (_v16_pair_make(8), _v16_pair_make(16), _v16_pair_make(32))
    _foldm_8, _foldm_16, _foldm_32 = _foldm_make(8), _foldm_make(16), _foldm_make(32)
    _fkeys_8, _fkeys_16 = _fkeys_make(8), _fkeys_make(16)
    #: the stored vector's lane owners per GroupN (for the groups after the last whole block of sixteen)
    _SMALL_OWN8, _SMALL_OWN16, _SMALL_OWN32 = (np.array(_small_plan(g)[2], np.int64) for g in (8, 16, 32))

    @njit(inline="always")
    def _fold16_fp16x(arr: Any, s: int, gk: Any, g: int, seg: int, max_abs: bool) -> int:
        """The sixteen GroupN-8 groups' keys from ``arr[s .. s + 127]`` to ``gk[g .. g + 15]`` (as
        ``_fold16_128``), with ``max_abs`` the sources' sign bits cleared first (mask 0 returned);
        ``seg`` must be 8.  Inlined, the intrinsics called directly: a call per block (its arrays passed
        on the stack, the reference-count calls) costs more than the block's fold."""
        if max_abs:
            return _fold16_8a(arr, s, gk, g)
        return _fold16_8(arr, s, gk, g)

    def _gmax_line_store_ir(builder: Any, r: Any, gp: Any) -> None:
        """Sixteen int32 GroupMax results ``r`` to GroupMaxOut at ``gp`` (a pointer to sixteen lanes): where
        ``gp`` starts a 64-byte line, the whole line by one non-temporal store (no read for ownership; weakly
        ordered: the caller's :func:`_sfence` before another thread reads the line or it is stored to again),
        else by an ordinary store.  The store of :func:`_s32_gmax16_make`, :func:`_s32_gmax8_ir` and
        :func:`_s32_gmax8g_ir`."""
        i64 = _ir.IntType(64)
        line = builder.icmp_unsigned("==", builder.and_(builder.ptrtoint(gp, i64), _ir.Constant(i64, 63)),
                                     _ir.Constant(i64, 0))
        with builder.if_else(line) as (whole, part):
            with whole:
                st = builder.store(r, gp)
                st.align = 64
                st.set_metadata("nontemporal", builder.module.add_metadata([_ir.Constant(_ir.IntType(32), 1)]))
            with part:
                builder.store(r, gp, align=4)

    def _s32_gmax16_make(gsz: int, max_abs: bool) -> Any:
        """The intrinsic ``_s32_gmax16_<gsz>[a](a, s, go, g)``: the GroupMax bits of the sixteen S32 groups
        ``a[s + q gsz .. s + q gsz + gsz]`` (q = 0 .. 15, ``gsz`` 8, 16 or 32) to ``go[g .. g +
        15]``, as :func:`_s32_fold_bits` gives them from each group's signed maximum and minimum: the
        maximum's bits, or with ``max_abs`` the largest magnitude (``llvm.abs`` of every lane, unsigned
        maxima: ``|INT32_MIN|`` is 2**31, the largest) limited to ``0x7FFFFFFF``.  Each group reduced
        to 16 lanes by vertical maxima of its ``gsz / 16`` vectors (GroupN 8: two groups a vector), then
        to one lane by rounds of pairwise shuffles and maxima that pack two groups' halves into one vector
        (the tree of :func:`_fold16_make`), so no group pays a horizontal reduction of its own.  Returns
        ``acc`` (sixteen lanes) with the sixteen results taken in: their signed maxima, with ``max_abs``
        the unsigned maxima of the magnitudes before the limit (a lane above ``0x7FFFFFFF``: a group held
        ``INT32_MIN``, whose bits are ``0x7FFFFFFF`` with OF).  On AVX2 (:data:`S32_ACC8`) in eight-lane
        vectors instead: GroupN 8 without MaxAbs :func:`_s32_gmax8_ir`, GroupN 16/32 :func:`_s32_gmax8g_ir`.
        The sixteen results go out by
        one non-temporal 64-byte store when ``go[g]`` starts a cache line (weakly ordered: the caller's
        :func:`_sfence` before another thread reads ``go`` or it stores to those lines again), by an ordinary
        store otherwise.  No bounds check: ``s + 16 gsz <= a.size``, ``g + 16 <= go.size``;
        int32/uint32 arrays."""
        assert gsz in (8, 16, 32), gsz  # (GroupMaxOut 8/4/2 MiB on a 4096 x 4096 tile: every line non-temporal)

        @_intrinsic
        def gmax16(typingctx: Any, arr: Any, s: Any, go: Any, g: Any, acc: Any) -> Any:
            if acc != _I32X16:
                return None
            for a in (arr, go):
                if not (isinstance(a, _types.Array) and a.ndim == 1 and a.layout == "C"
                        and a.dtype in (_types.int32, _types.uint32)):
                    return None
            if not all(isinstance(t, _types.Integer) for t in (s, g)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                i32 = _ir.IntType(32)
                v16 = _ir.VectorType(i32, 16)
                red = _llvm_fn(builder, "llvm.umax.v16i32" if max_abs else "llvm.smax.v16i32", v16, [v16, v16])
                data = context.make_array(signature.args[0])(context, builder, args[0]).data
                s_ = context.cast(builder, args[1], signature.args[1], _types.intp)
                base = builder.bitcast(builder.gep(data, [s_]), v16.as_pointer())
                absf = _llvm_fn(builder, "llvm.abs.v16i32", v16, [v16, _ir.IntType(1)])

                def load(k: int) -> Any:
                    x = builder.load(builder.gep(base, [_ir.Constant(_ir.IntType(64), k)]), align=4)
                    return builder.call(absf, [x, _ir.Constant(_ir.IntType(1), 0)]) if max_abs else x

                vecs, owners = [], []
                if gsz == 8 and not max_abs and S32_ACC8:
                    return _s32_gmax8_ir(context, builder, signature, args)
                if gsz > 8 and S32_ACC8:
                    return _s32_gmax8g_ir(context, builder, signature, args, gsz, max_abs)
                if gsz == 8:  # two groups a vector: the first round of the tree is already done
                    for k in range(8):
                        vecs.append(load(k))
                        owners.append([2 * k] * 8 + [2 * k + 1] * 8)
                    h = 4
                else:
                    nv = gsz // 16
                    for q in range(16):
                        xs = [load(q * nv + c) for c in range(nv)]
                        while len(xs) > 1:
                            xs = [builder.call(red, [xs[k], xs[k + 1]]) for k in range(0, len(xs) - 1, 2)] + \
                                 ([xs[-1]] if len(xs) % 2 else [])
                        vecs.append(xs[0])
                        owners.append([q] * 16)
                    h = 8
                while len(vecs) > 1:
                    nvecs, nown = [], []
                    for k in range(0, len(vecs), 2):
                        x, y, ox, oy = vecs[k], vecs[k + 1], owners[k], owners[k + 1]
                        lo, hi, own = [], [], []
                        for blk in range(0, 16, 2 * h):
                            lo += [blk + i for i in range(h)] + [16 + blk + i for i in range(h)]
                            hi += [blk + h + i for i in range(h)] + [16 + blk + h + i for i in range(h)]
                            own += [ox[blk]] * h + [oy[blk]] * h
                        a1 = builder.shuffle_vector(x, y, _ir.Constant(v16, lo))
                        a2 = builder.shuffle_vector(x, y, _ir.Constant(v16, hi))
                        nvecs.append(builder.call(red, [a1, a2]))
                        nown.append(own)
                    vecs, owners = nvecs, nown
                    h //= 2
                r = builder.shuffle_vector(vecs[0], _ir.Constant(v16, None),
                                           _ir.Constant(v16, [owners[0].index(q) for q in range(16)]))
                accv = builder.call(red, [args[4], r])
                if max_abs:
                    r = builder.call(_llvm_fn(builder, "llvm.umin.v16i32", v16, [v16, v16]),
                                     [r, _ir.Constant(v16, [0x7FFFFFFF] * 16)])
                gdata = context.make_array(signature.args[2])(context, builder, args[2]).data
                g_ = context.cast(builder, args[3], signature.args[3], _types.intp)
                gp = builder.bitcast(builder.gep(gdata, [g_]), v16.as_pointer())
                _gmax_line_store_ir(builder, r, gp)
                return accv

            return _I32X16(arr, s, go, g, acc), codegen
        return gmax16

    def _s32_gmax8_ir(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        """:func:`_s32_gmax16_make`'s GroupN 8 form without MaxAbs on targets without AVX-512 (:data:`S32_ACC8`):
        eight-lane vectors, one group each.  The first round from memory: groups 2j and 2j + 1 (elements
        16j .. 16j + 15) give ``max(a[16j + 4 ..], blend(a[16j ..], a[16j + 8 ..]))`` (an unaligned load and a
        blend against the other halves: three instructions, two folded loads, for the two permutations, loads
        and maximum of the sixteen-lane tree), lanes 0-3 group 2j's, 4-7 group 2j + 1's; then two rounds of
        in-lane shuffles (``vpunpck[lh]qdq``, ``vshufps``) and maxima, each result's lanes put in order by one
        permutation (``vpermd``; its operands through a value barrier where eight lanes fit one register, else
        LLVM merged it with the last round into five shuffles).  Zen 3, a block of sixteen groups: 77 -> 53
        instructions (h-f16).  The same results, store and return value."""
        i32, i64 = _ir.IntType(32), _ir.IntType(64)
        v16 = _ir.VectorType(i32, 16)
        smax8 = _llvm_fn(builder, "llvm.smax.v8i32", _V8, [_V8, _V8])
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        base = builder.gep(data, [context.cast(builder, args[1], signature.args[1], _types.intp)])

        def ld(k: int) -> Any:
            return builder.load(builder.bitcast(builder.gep(base, [_ir.Constant(i64, k)]), _V8.as_pointer()), align=4)

        vecs, owners = [], []
        for j in range(8):
            w = builder.shuffle_vector(ld(16 * j), ld(16 * j + 8), _ir.Constant(_V8, [0, 1, 2, 3, 12, 13, 14, 15]))
            vecs.append(builder.call(smax8, [ld(16 * j + 4), w]))
            owners.append([2 * j] * 4 + [2 * j + 1] * 4)
        for lo, hi in (([0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]),  # vpunpck[lh]qdq
                       ([0, 2, 8, 10, 4, 6, 12, 14], [1, 3, 9, 11, 5, 7, 13, 15])):  # vshufps 0x88 / 0xDD
            nv, no = [], []
            for k in range(0, len(vecs), 2):
                own = owners[k] + owners[k + 1]
                a1 = builder.shuffle_vector(vecs[k], vecs[k + 1], _ir.Constant(_V8, lo))
                a2 = builder.shuffle_vector(vecs[k], vecs[k + 1], _ir.Constant(_V8, hi))
                nv.append(builder.call(smax8, [a1, a2]))
                no.append([own[i] for i in lo])
            vecs, owners = nv, no
        if S32_OR_BARRIER:
            vecs = [builder.asm(_ir.FunctionType(_V8, [_V8]), "", "=x,0", [v], False) for v in vecs]
        rs = [builder.shuffle_vector(vecs[k], vecs[k], _ir.Constant(_V8, [owners[k].index(8 * k + q) for q in range(8)]))
              for k in range(2)]
        r = builder.shuffle_vector(rs[0], rs[1], _ir.Constant(v16, list(range(16))))
        accv = builder.call(_llvm_fn(builder, "llvm.smax.v16i32", v16, [v16, v16]), [args[4], r])
        gdata = context.make_array(signature.args[2])(context, builder, args[2]).data
        gp = builder.bitcast(builder.gep(gdata, [context.cast(builder, args[3], signature.args[3], _types.intp)]),
                             v16.as_pointer())
        _gmax_line_store_ir(builder, r, gp)
        return accv

    def _s32_gmax8g_ir(context: Any, builder: Any, signature: Any, args: Any, gsz: int, max_abs: bool) -> Any:
        """:func:`_s32_gmax16_make`'s GroupN 16/32 form on targets without AVX-512 (:data:`S32_ACC8`): eight-lane
        vectors.  Each group to one eight-lane vector by vertical maxima of its ``gsz / 8`` loads (folded into
        the maxima; MaxAbs: ``llvm.abs`` of each, unsigned maxima), then the sixteen vectors to two by three
        rounds of a pair's two shuffles and one maximum: ``vpunpck[lh]dq`` (two groups a vector, two lanes each
        per 128-bit half), ``vpunpck[lh]qdq`` (four groups, one lane each per half) and the halves across
        (``vperm2i128``): lanes in group order, no permutation.  Zen 3, a block of sixteen groups: GroupN 16
        96 -> 85 instructions, GroupN 32 146 -> 117 (the sixteen-lane tree's halves cost a ``vperm2i128`` more
        per pair).  The same results, store and return value."""
        i32, i64 = _ir.IntType(32), _ir.IntType(64)
        v16 = _ir.VectorType(i32, 16)
        mx8 = _llvm_fn(builder, "llvm.umax.v8i32" if max_abs else "llvm.smax.v8i32", _V8, [_V8, _V8])
        abs8 = _llvm_fn(builder, "llvm.abs.v8i32", _V8, [_V8, _ir.IntType(1)])
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        base = builder.gep(data, [context.cast(builder, args[1], signature.args[1], _types.intp)])

        def ld(k: int) -> Any:
            x = builder.load(builder.bitcast(builder.gep(base, [_ir.Constant(i64, k)]), _V8.as_pointer()), align=4)
            return builder.call(abs8, [x, _ir.Constant(_ir.IntType(1), 0)]) if max_abs else x

        vecs = []
        for q in range(16):
            v = ld(gsz * q)
            for c in range(8, gsz, 8):
                v = builder.call(mx8, [v, ld(gsz * q + c)])
            vecs.append(v)
        for lo, hi in (([0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]),  # vpunpck[lh]dq
                       ([0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]),  # vpunpck[lh]qdq
                       ([0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15])):  # vperm2i128 0x20 / 0x31
            vecs = [builder.call(mx8, [builder.shuffle_vector(vecs[k], vecs[k + 1], _ir.Constant(_V8, lo)),
                                       builder.shuffle_vector(vecs[k], vecs[k + 1], _ir.Constant(_V8, hi))])
                    for k in range(0, len(vecs), 2)]
        r = builder.shuffle_vector(vecs[0], vecs[1], _ir.Constant(v16, list(range(16))))
        red = _llvm_fn(builder, "llvm.umax.v16i32" if max_abs else "llvm.smax.v16i32", v16, [v16, v16])
        accv = builder.call(red, [args[4], r])
        if max_abs:
            r = builder.call(_llvm_fn(builder, "llvm.umin.v16i32", v16, [v16, v16]),
                             [r, _ir.Constant(v16, [0x7FFFFFFF] * 16)])
        gdata = context.make_array(signature.args[2])(context, builder, args[2]).data
        gp = builder.bitcast(builder.gep(gdata, [context.cast(builder, args[3], signature.args[3], _types.intp)]),
                             v16.as_pointer())
        _gmax_line_store_ir(builder, r, gp)
        return accv

    def _v16_fold8_make(op: str) -> Any:
        """The intrinsic ``(acc, v)``: ``op(acc, op(low(v), high(v)))``, ``acc`` eight int32 lanes, ``v``
        sixteen (its lanes 0-7 and 8-15), ``op`` ``smax``, ``smin`` or ``or`` (or ``uabs``: ``umax`` of the
        lanes' magnitudes, ``|INT32_MIN|`` = 2**31 the largest; or ``smaxs``: ``smax(smax(acc, low(v)), high(v))``,
        the same lanes, two instructions with both loads folded in where ``v`` comes from memory, against three
        for ``smax``'s pair first): a sixteen-lane step taken
        into an eight-lane accumulator with the instructions of a sixteen-lane one (two per step).  An OR's new
        value passes an empty asm (a value barrier, no instruction; on targets with AVX, :data:`S32_OR_BARRIER`),
        as :func:`_fp16x_blk`'s accumulators do:
        without it LLVM took an unrolled loop's ORs as a reduction tree at the loop body's end, each step's
        operands kept live (spilled) until then."""
        @_intrinsic
        def fold8(typingctx: Any, acc: Any, v: Any) -> Any:
            if acc != _I32X8 or v != _I32X16:
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                lo = builder.shuffle_vector(args[1], args[1], _ir.Constant(_V8, list(range(8))))
                hi = builder.shuffle_vector(args[1], args[1], _ir.Constant(_V8, list(range(8, 16))))
                if op == "or":
                    r = builder.or_(args[0], builder.or_(lo, hi))
                elif op == "smaxs":  # one chain: each half taken in by one maximum
                    f = _llvm_fn(builder, "llvm.smax.v8i32", _V8, [_V8, _V8])
                    r = builder.call(f, [builder.call(f, [args[0], lo]), hi])
                elif op == "uabs":  # the unsigned maximum of the magnitudes (|INT32_MIN| = 2**31)
                    absf = _llvm_fn(builder, "llvm.abs.v8i32", _V8, [_V8, _ir.IntType(1)])
                    f = _llvm_fn(builder, "llvm.umax.v8i32", _V8, [_V8, _V8])
                    no = _ir.Constant(_ir.IntType(1), 0)
                    r = builder.call(f, [args[0], builder.call(f, [builder.call(absf, [lo, no]),
                                                                   builder.call(absf, [hi, no])])])
                else:
                    f = _llvm_fn(builder, f"llvm.{op}.v8i32", _V8, [_V8, _V8])
                    r = builder.call(f, [args[0], builder.call(f, [lo, hi])])
                if op != "or" or not S32_OR_BARRIER:  # (the maxima: loops of their own, reductions LLVM may unroll)
                    return r
                return builder.asm(_ir.FunctionType(_V8, [_V8]), "", "=x,0", [r], False)

            return _I32X8(acc, v), codegen
        return fold8

    def _s32_tr8_make(op: str) -> Any:
        """The intrinsic ``(a0, .., a7)``: eight lanes, lane ``k`` the ``op`` (``smax`` or ``umax``) of the lanes
        of ``ak`` (eight int32 lanes each, or sixteen: first taken to eight by ``op`` of their halves), the
        eight reductions together (:func:`_tr8_ir`)."""
        @_intrinsic
        def tr8(typingctx: Any, a0: Any, a1: Any, a2: Any, a3: Any, a4: Any, a5: Any, a6: Any, a7: Any) -> Any:
            xs = (a0, a1, a2, a3, a4, a5, a6, a7)
            if not (all(x == _I32X8 for x in xs) or all(x == _I32X16 for x in xs)):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                f = _llvm_fn(builder, f"llvm.{op}.v8i32", _V8, [_V8, _V8])
                v = list(args)
                if signature.args[0] == _I32X16:
                    v = [builder.call(f, [builder.shuffle_vector(x, x, _ir.Constant(_V8, list(range(8)))),
                                          builder.shuffle_vector(x, x, _ir.Constant(_V8, list(range(8, 16))))])
                         for x in v]
                return _tr8_ir(builder, v, f)

            return _I32X8(*xs), codegen
        return tr8

    #: :func:`_s32_seg_rows`' loop-carried accumulators (NX and OF masks, signed maximum and minimum): sixteen
    #: lanes in one register on AVX-512 targets; elsewhere (AVX2: sixteen lanes are two registers of the
    #: sixteen) eight, each step's two halves taken in by :func:`_v16_fold8_make` -- the same instruction count,
    #: half the registers (the loop spilled its accumulators to the stack on a Zen 3).  ORs, maxima and minima
    #: of the same lanes: the same results.
    S32_ACC8: bool = not target_has_feature("avx512bw")
    #: Whether :func:`_v16_fold8_make`'s OR passes its value barrier: only where eight int32 lanes fit one
    #: register (``ymm``: AVX).  A target without AVX (``NUMBA_CPU_NAME=generic``, an SSE-only CPU) holds them
    #: in two ``xmm`` registers, which an ``x`` constraint cannot name (LLVM: "couldn't allocate output register
    #: for constraint 'x'"): there the OR goes without it -- the same result.
    S32_OR_BARRIER: bool = target_has_feature("avx")
    if S32_ACC8:
        _sacc_splat: Any = _v8_splat
        _sacc_max: Any = _v16_fold8_make("smax")
        _sacc_maxs: Any = _v16_fold8_make("smaxs")  # (the same lanes as _sacc_max: _s32_span_maxima's loads)
        _sacc_min: Any = _v16_fold8_make("smin")
        _sacc_or: Any = _v16_fold8_make("or")
        _sacc_uabs: Any = _v16_fold8_make("uabs")
        _sacc_hmax: Any = _v8_hmax
        _sacc_hmin: Any = _v8_hmin
        _sacc_hor: Any = _v8_hor
        _sacc_humax: Any = _v8_reduce("umax")
    else:
        _sacc_splat = _v16_splat
        _sacc_max = _v16_max
        _sacc_maxs = _v16_max
        _sacc_min = _v16_min
        _sacc_or = _v16_or
        _sacc_uabs = _v16_fold8_make("uabs")  # (never called: S32_ACC8 only)
        _sacc_hmax = _v16_hmax
        _sacc_hmin = _v16_hmin
        _sacc_hor = _v16_hor
        _sacc_humax = _v16_humax

    _s32_gmax16_8: Any = _s32_gmax16_make(8, False)
    _s32_gmax16_8a: Any = _s32_gmax16_make(8, True)
    _s32_gmax16_16: Any = _s32_gmax16_make(16, False)
    _s32_gmax16_16a: Any = _s32_gmax16_make(16, True)
    _s32_gmax16_32: Any = _s32_gmax16_make(32, False)
    _s32_gmax16_32a: Any = _s32_gmax16_make(32, True)
    _s32_tr8_smax: Any = _s32_tr8_make("smax")
    _s32_tr8_umax: Any = _s32_tr8_make("umax")
    _v8_umin: Any = _v8_binary("umin")

    @njit(inline="always")
    def _s32_gmax16(arr: Any, s: int, go: Any, g: int, gsz: int, max_abs: bool, acc: Any) -> Any:
        """``_s32_gmax16_<gsz>[a]`` (:func:`_s32_gmax16_make`) for GroupN ``gsz`` 8, 16 or 32 (anything
        else: 32)."""
        if max_abs:
            if gsz == 8:
                return _s32_gmax16_8a(arr, s, go, g, acc)
            if gsz == 16:
                return _s32_gmax16_16a(arr, s, go, g, acc)
            return _s32_gmax16_32a(arr, s, go, g, acc)
        if gsz == 8:
            return _s32_gmax16_8(arr, s, go, g, acc)
        if gsz == 16:
            return _s32_gmax16_16(arr, s, go, g, acc)
        return _s32_gmax16_32(arr, s, go, g, acc)
else:  # pragma: no cover - kernels are not used without numba; the same lanes as int32 numpy arrays
    def _v16_load(arr: Any, j: int) -> Any:
        return np.asarray(arr[j:j + 16]).view(np.int32).copy()

    def _v16_store(arr: Any, j: int, v: Any) -> None:
        arr[j:j + 16] = v.astype(arr.dtype)

    def _v16_splat(x: int) -> Any:
        return np.full(16, x, np.int64).astype(np.int32)

    _v16_rne = _v8_rne
    _v16_max = _v8_max
    _v16_min = _v8_min
    _v16_and = _v8_and
    _v16_or = _v8_or
    _v16_xor = _v8_xor
    _v16_add = _v8_add
    _v16_hmax = _v8_hmax
    _v16_hmin = _v8_hmin
    _v16_hor = _v8_hor

    def _v16_max32(m: Any, a: Any, j: int, am: Any) -> Any:
        x = np.asarray(a[j:j + 32]).view(np.int32)
        if am is not None:
            x = x & np.int32(np.uint32(am).view(np.int32))
        return np.maximum(m, np.maximum(x[:16], x[16:]))

    def _fold16_16(arr: Any, s: int, gk: Any, g: int) -> int:
        return _fold16_np(arr, s, gk, g, 16)

    def _fixneg16_np(arr: Any, s: int, gk: Any, g: int, seg: int) -> int:
        x = np.asarray(arr[s:s + 16 * seg], np.uint32).view(np.int32).reshape(16, seg).min(axis=1)
        old = gk[g:g + 16]
        gk[g:g + 16] = np.where(old < np.uint32(0x80000000), ~x.view(np.uint32), old)
        return 0

    def _fixneg16_8(arr: Any, s: int, gk: Any, g: int) -> int:
        return _fixneg16_np(arr, s, gk, g, 8)

    def _fixneg16_16(arr: Any, s: int, gk: Any, g: int) -> int:
        return _fixneg16_np(arr, s, gk, g, 16)

    def _fixneg16_32(arr: Any, s: int, gk: Any, g: int) -> int:
        return _fixneg16_np(arr, s, gk, g, 32)

    def _fp16x_blk(a: Any, o: Any, s: int, gk: Any, g: int, nxv: Any, ufv: Any, amv: Any, smv: Any, relum: Any,
                   satm: Any, absm: Any, lane: int, gsz: int, relu: int, mabs: int) -> Any:
        raise NotImplementedError

    def _fold16_fp16x(arr: Any, s: int, gk: Any, g: int, seg: int, max_abs: bool) -> int:
        src = np.asarray(arr[s:s + 16 * seg], np.uint32)
        return _fold16_np(src & np.uint32(0x7FFFFFFF) if max_abs else src, 0, gk, g, seg)

    def _s32_gmax16(arr: Any, s: int, go: Any, g: int, gsz: int, max_abs: bool, acc: Any) -> Any:
        x = np.asarray(arr[s:s + 16 * gsz]).view(np.int32).astype(np.int64).reshape(16, gsz)
        if max_abs:
            r = np.abs(x).max(axis=1)
            go[g:g + 16] = np.minimum(r, 0x7FFFFFFF)
            return np.maximum(acc.view(np.uint32), r.astype(np.uint32)).view(np.int32)
        go[g:g + 16] = x.max(axis=1) & 0xFFFFFFFF
        return np.maximum(acc, x.max(axis=1).astype(np.int32))

    def _v16_humax(a: Any) -> Any:
        return np.uint32(a.view(np.uint32).max()).view(np.int32)

    def _v16_umax(a: Any, b: Any) -> Any:
        return np.maximum(a.view(np.uint32), b.view(np.uint32)).view(np.int32)

    def _v16_umin(a: Any, b: Any) -> Any:
        return np.minimum(a.view(np.uint32), b.view(np.uint32)).view(np.int32)

    def _v16_humin(a: Any) -> Any:
        return np.uint32(a.view(np.uint32).min()).view(np.int32)

    def _v16_store_nt(arr: Any, j: int, v: Any) -> None:
        arr[j:j + 16] = v.view(np.uint32).astype(arr.dtype)

    S32_ACC8 = False
    _sacc_splat = _v16_splat
    _sacc_max = _v16_max
    _sacc_maxs = _v16_max
    _sacc_min = _v16_min
    _sacc_or = _v16_or
    _sacc_hmax = _v16_hmax
    _sacc_hmin = _v16_hmin
    _sacc_hor = _v16_hor
    _sacc_humax = _v16_humax

    def _sacc_uabs(acc: Any, v: Any) -> Any:
        m = np.abs(v.astype(np.int64)).astype(np.uint32)
        return np.maximum(acc.view(np.uint32), m).view(np.int32)

    def _s32_tr8_smax(*xs: Any) -> Any:
        return np.array([x.max() for x in xs], np.int32)

    def _s32_tr8_umax(*xs: Any) -> Any:
        return np.array([x.view(np.uint32).max() for x in xs], np.uint32).view(np.int32)

    def _v8_umin(a: Any, b: Any) -> Any:
        return np.minimum(a.view(np.uint32), b.view(np.uint32)).view(np.int32)


@njit(inline="always")
def _s32_rne_lane(x: Any, xlo: Any, nxm: Any, sc: Any, off: Any, blo: Any, bhi: Any, sat: bool,
                  lim_lo: Any, lim_hi: Any) -> Tuple[Any, Any, Any]:
    """One S32 element with an offset, RNE, ReluMode NONE/RELU, a multiplier ``|sc| < 1``, in 32-bit
    integer lanes except for one float64 fused multiply-add (the rules of :func:`_element`).

    ``xlo``: 0 for ReLU (a negative source gets the multiplier 0, i.e. the source 0), S32_MIN for NONE.
    ``x * sc`` is exact in float64 (at most 42 significant bits) and below 2**31 in magnitude, so
    ``fma(x, sc, 1.5 * 2**52)`` holds ``RNE(x * sc)`` in the low 32 bits of its encoding (one
    rounding, ties to even).  Inexact (NX) iff the source has a set bit under ``nxm``: the
    multiplier is ``m * 2**-k`` with ``m`` odd, so ``x * sc`` is an integer iff ``2**k`` divides
    ``x`` (``nxm`` = ``2**k - 1``, all ones for k >= 32, 0 for k <= 0).  ``blo``/``bhi``: the
    per-column bounds of ``r + off`` (S5/S9/S17 saturation, offset and destination clamp fused,
    as in :func:`_s32_int_span`); OF|NX iff the clamp moves it.  Sat=0: ``clamp(r, lim) + off``,
    wrapped by the store.  Returns (value, NX bits, OF bits).

    Source: ``MatrixSelectedMultiplier``, ``MatrixRoundAndSaturateSigned``,
    ``ReferenceMatrixIntegerEncoding``."""
    xr = x if x > xlo else xlo
    r = np.int32(_f64_bits(_fma64(np.float64(xr), sc, _RNE_MAGIC)))
    t = _add32(r, off)
    fc = t if t > blo else blo
    fc = fc if fc < bhi else bhi
    if sat:
        v = fc
    else:
        ri = r if r > lim_lo else lim_lo
        ri = ri if ri < lim_hi else lim_hi
        v = _add32(ri, off)
    return v, _and32(xr, nxm), _xor32(t, fc)


@njit
def _s32_param_kernel(scale: Any, offs: Any, half: int, dmin: int, dmax: int, p: Any) -> bool:
    """Fill the parameter rows of :func:`_s32_rne_lane` for the multipliers ``scale`` (float64, FP19
    values) and offsets ``offs`` (int64): ``p[0]`` the NX mask ``2**k - 1`` (``|s| = m * 2**-k``
    with ``m`` odd: ``x * s`` is an integer iff the low ``k`` bits of ``x`` are 0; all ones for
    ``k >= 32``, where only ``x = 0`` qualifies; 0 for ``k <= 0`` and for ``s = 0``), ``p[1]``
    the offset, ``p[2]``/``p[3]`` the bounds of ``r + offset`` (``max(offset - half, dmin)``,
    ``min(offset + half - 1, dmax)``), ``p[4]`` the multiplier's float32 bits.  Returns whether
    every ``|s| < 1`` (the lane's condition; otherwise ``p`` is not to be used)."""
    ok = True
    for j in range(scale.size):
        s = scale[j]
        if not abs(s) < 1.0:
            ok = False
        b = np.int64(_f32_bits(np.float32(s)))
        e8 = (b >> 23) & 0xFF
        sig = (b & 0x7FFFFF) | ((1 << 23) if e8 > 0 else 0)
        k = 150 - max(e8, 1) - _ctz64(sig)  # |s| = sig * 2**(max(e8, 1) - 150), and m = sig >> ctz odd
        mask = -1 if k >= 32 else ((1 << k) - 1 if k > 0 else 0)
        mask = mask if sig != 0 else 0
        o = offs[j]
        p[0, j] = np.int32(mask)
        p[1, j] = np.int32(o)
        p[2, j] = np.int32(max(o - half, dmin))
        p[3, j] = np.int32(min(o + half - 1, dmax))
        p[4, j] = np.int32(b)
    return ok


@njit(inline="always")
def _s32_rne_vec(x: Any, xlo: Any, nxm: Any, sc: Any, off: Any, blo: Any, bhi: Any, sat: bool,
                 lim_lo: Any, lim_hi: Any) -> Tuple[Any, Any, Any]:
    """:func:`_s32_rne_lane` on eight lanes (every argument but ``sc`` and ``sat`` eight int32 lanes;
    ``sc`` a float64 multiplier, or eight as float32 bits): the same steps, the same results.

    Source: ``MatrixSelectedMultiplier``, ``MatrixRoundAndSaturateSigned``,
    ``ReferenceMatrixIntegerEncoding``."""
    xr = _v8_max(x, xlo)
    r = _v8_rne(xr, sc)
    t = _v8_add(r, off)
    fc = _v8_min(_v8_max(t, blo), bhi)
    if sat:
        v = fc
    else:
        v = _v8_add(_v8_min(_v8_max(r, lim_lo), lim_hi), off)
    return v, _v8_and(xr, nxm), _v8_xor(t, fc)


@njit(inline="always")
def _s32_rne_chunk(a_: Any, o_: Any, j: int, cols: bool, nxm_: Any, off_: Any, blo_: Any, bhi_: Any, sc_: Any,
                   xlo: Any, nxm: Any, sc: Any, off: Any, blo: Any, bhi: Any, sat: bool, lim_lo: Any, lim_hi: Any
                   ) -> Tuple[Any, Any, Any]:
    """Columns ``j .. j + 7`` through :func:`_s32_rne_vec`, stored; ``cols``: the parameters from the
    rows ``nxm_`` .. ``sc_`` (else the eight-lane values ``nxm`` .. ``bhi`` and the float64 ``sc``).
    Returns (the sources, NX lanes, OF lanes)."""
    x = _v8_load(a_, j)
    if cols:
        v, n, o = _s32_rne_vec(x, xlo, _v8_load(nxm_, j), _v8_load(sc_, j), _v8_load(off_, j), _v8_load(blo_, j),
                               _v8_load(bhi_, j), sat, lim_lo, lim_hi)
    else:
        v, n, o = _s32_rne_vec(x, xlo, nxm, sc, off, blo, bhi, sat, lim_lo, lim_hi)
        _v8_no_runtime_unroll()  # the parameters in registers: unrolled, the loop would spill
    _v8_store(o_, j, v)
    return x, n, o


@njit(inline="always")
def _s32_rne_groups(a_: Any, o_: Any, cols: bool, nxm_: Any, off_: Any, blo_: Any, bhi_: Any, sc_: Any,
                    nxm: Any, off: Any, blo: Any, bhi: Any, sc: Any, xlo: Any, sat: bool, lim_lo: Any, lim_hi: Any,
                    group_n: int, max_abs: bool, group_out: Any, gbase: int, gscr: Any, pf: Any, pfb: int
                    ) -> Tuple[Any, Any, Any, Any, int]:
    """A span of one S32 row through :func:`_s32_rne_lane` (``cols`` True: the parameter rows ``nxm_`` ..
    ``sc_``, multipliers as float32 bits; False: one word's scalars ``nxm`` .. ``sc``) with GroupMax folded in:
    one pass over the row, group by group (``group_n`` columns, the last group may be shorter),
    eight lanes at a time (:func:`_s32_rne_chunk`; a group's last ``size % 8`` columns one at a
    time).  Each group's signed maximum and minimum come from the lanes already loaded (kept in
    ``gscr``, int32, at least ``2 * ceil(size / group_n)``) and give ``group_out[gbase + g]``
    (:func:`_s32_fold_bits`); the NX/OF lanes carry across groups.  Returns (NX bits, OF bits,
    signed maximum and minimum of the row -- RowMax --, GroupMax flags).

    Source: ``MatrixGroupMaxResult``, ``MatrixRowMaxResult``, ``TileProfileMatrixReductionStepWithFlags``
    and the steps of :func:`_s32_rne_lane`."""
    cnt = a_.size
    vxlo = _v8_splat(xlo)
    vlo = _v8_splat(lim_lo)
    vhi = _v8_splat(lim_hi)
    vnxm = _v8_splat(nxm)
    voff = _v8_splat(off)
    vblo = _v8_splat(blo)
    vbhi = _v8_splat(bhi)
    nxv = _v8_splat(0)
    ovv = _v8_splat(0)
    ng = (cnt + group_n - 1) // group_n
    # whole groups of a multiple of 8 columns: nothing but the vector loop; the minimum only for
    # MaxAbs (one register fewer: the one-word Sat=0 loop has none to spare)
    full = cnt // group_n if group_n % 8 == 0 else 0
    if max_abs:
        for g in range(full):
            hv = _v8_splat(np.int32(S32_MIN))
            lv = _v8_splat(np.int32(S32_MAX))
            for j in range(g * group_n, g * group_n + group_n, 8):
                if cols:
                    _prefetch(pf, pfb + j)  # the source PF_AHEAD elements ahead
                x, n, o = _s32_rne_chunk(a_, o_, j, cols, nxm_, off_, blo_, bhi_, sc_, vxlo, vnxm, sc, voff, vblo,
                                         vbhi, sat, vlo, vhi)
                hv = _v8_max(hv, x)
                lv = _v8_min(lv, x)
                nxv = _v8_or(nxv, n)
                ovv = _v8_or(ovv, o)
            gscr[2 * g] = _v8_hmax(hv)
            gscr[2 * g + 1] = _v8_hmin(lv)
    else:
        for g in range(full):
            hv = _v8_splat(np.int32(S32_MIN))
            for j in range(g * group_n, g * group_n + group_n, 8):
                if cols:
                    _prefetch(pf, pfb + j)  # the source PF_AHEAD elements ahead
                x, n, o = _s32_rne_chunk(a_, o_, j, cols, nxm_, off_, blo_, bhi_, sc_, vxlo, vnxm, sc, voff, vblo,
                                         vbhi, sat, vlo, vhi)
                hv = _v8_max(hv, x)
                nxv = _v8_or(nxv, n)
                ovv = _v8_or(ovv, o)
            gscr[2 * g] = _v8_hmax(hv)
            gscr[2 * g + 1] = np.int32(S32_MAX)  # not used without MaxAbs
    # the rest (a shorter last group; every group when GroupN is not a multiple of 8)
    nx = np.int32(0)
    ov = np.int32(0)
    for g in range(full, ng):
        s = g * group_n
        e = min(s + group_n, cnt)
        e8 = s + ((e - s) & ~7)
        hv = _v8_splat(np.int32(S32_MIN))
        lv = _v8_splat(np.int32(S32_MAX))
        for j in range(s, e8, 8):
            x, n, o = _s32_rne_chunk(a_, o_, j, cols, nxm_, off_, blo_, bhi_, sc_, vxlo, vnxm, sc, voff, vblo, vbhi,
                                     sat, vlo, vhi)
            hv = _v8_max(hv, x)
            lv = _v8_min(lv, x)
            nxv = _v8_or(nxv, n)
            ovv = _v8_or(ovv, o)
        hi = _v8_hmax(hv)
        lo = _v8_hmin(lv)
        for j in range(e8, e):
            x1 = np.int32(a_[j])
            hi = x1 if x1 > hi else hi
            lo = x1 if x1 < lo else lo
            if cols:
                v1, n1, o1 = _s32_rne_lane(x1, xlo, nxm_[j], np.float64(_u32_f32(np.uint32(sc_[j]))), off_[j],
                                           blo_[j], bhi_[j], sat, lim_lo, lim_hi)
            else:
                v1, n1, o1 = _s32_rne_lane(x1, xlo, nxm, sc, off, blo, bhi, sat, lim_lo, lim_hi)
            nx = _or32(nx, n1)
            ov = _or32(ov, o1)
            o_[j] = v1
        gscr[2 * g] = hi
        gscr[2 * g + 1] = lo
    # the groups' results and the row's maximum and minimum
    flags = 0
    rmax = np.int32(S32_MIN)
    rmin = np.int32(S32_MAX)
    for g in range(ng):
        hi = gscr[2 * g]
        lo = gscr[2 * g + 1]
        gb, gf = _s32_fold_bits(hi, lo, max_abs)
        group_out[gbase + g] = gb
        flags |= gf
        rmax = hi if hi > rmax else rmax
        rmin = lo if lo < rmin else rmin
    return _or32(nx, _v8_hor(nxv)), _or32(ov, _v8_hor(ovv)), rmax, rmin, flags


@njit(inline="always")
def _s32_int_span(a_: Any, o_: Any, sc_: Any, al_: Any, of_: Any, blo_: Any, bhi_: Any,
                  relu: int, rne: bool, sat: bool, mode: int, lim_lo: float, lim_hi: float,
                  relu_zero: bool, relu_al: bool) -> Tuple[int, int, Any, Any]:
    """A span of one S32 row with an offset in float64 lanes, for what :func:`_s32_rne_lane` does not
    take: the RModes other than RNE, LReLU/PReLU and multipliers of magnitude 1 or more (every
    array is that span's slice, indexed from 0 so that no index can be negative).

    Returns the OR of the bits of ``r - p`` (nonzero iff some element is inexact), the OR
    of the bits of ``(r + off) - clamp(r + off)`` (nonzero iff some element overflows the
    S5/S9/S17 intermediate or the destination) and the largest and smallest S32 value.
    :func:`_row_s32_int` calls it once, with ``relu`` = -1 and ``rne`` = False as literals: it
    decides by selects on ``relu_zero``/``relu_al``, ``sat`` and ``mode``.  (The literal
    ReluMode branches are kept: with this body LLVM emits 67 vector instructions per 4 elements,
    with the select-only body alone 87.)"""
    nxb = 0
    ovb = 0
    smax = np.int32(S32_MIN)
    smin = np.int32(S32_MAX)
    for j in range(a_.size):
        xs = np.int32(a_[j])
        # RowMax/GroupMax: the signed maximum and minimum (the largest |value| is one of them)
        smax = xs if xs > smax else smax
        smin = xs if xs < smin else smin
        sv = np.float64(xs)
        # MatrixSelectedMultiplier, exact float64 product (S32 x FP19 has at most 42 bits)
        ps = sv * sc_[j]
        if relu == 0:
            p = ps
        elif relu == 1:
            p = ps if sv > 0.0 else 0.0
        elif relu >= 2:
            pa = sv * al_[j]
            p = pa if sv < 0.0 else ps
        else:  # relu not literal (the generic copy): selects only
            pa = sv * al_[j]
            pn = pa if relu_al else (0.0 if relu_zero else ps)
            p = pn if sv < 0.0 else ps
        r = _rint(p) if rne else _round_mode(p, mode)
        nxb |= _f64_bits(r - p)
        off = of_[j]
        t = r + off
        # clamp(clamp(r, S5/S9/S17) + off, destination) == clamp(r + off, per-column bounds):
        # OF|NX exactly when r + off is outside them
        fc = t if t > blo_[j] else blo_[j]
        fc = fc if fc < bhi_[j] else bhi_[j]
        ovb |= _f64_bits(t - fc)
        ri = r if r > lim_lo else lim_lo
        ri = ri if ri < lim_hi else lim_hi
        v = fc if sat else ri + off
        o_[j] = np.int32(v)  # the store keeps the carrier's low 8/16 bits (S4X2: masked by the caller)
    return nxb, ovb, smax, smin


#: :func:`_s32_rows_seg`: columns per segment of the per-column (VREQ8) rows, 0 for whole rows.  In segments a
#: row block's rows are done segment by segment (every row's first segment, then every row's second...), so
#: that a segment's per-column parameter rows (five int32 rows, 20 B a column: 20 KiB here, 80 KiB for a
#: whole 4096-column row) stay in a 48 KiB L1 while they serve the block's rows; read from L2 on every row,
#: they left the source's DRAM stream slower than from L3 (Zen 5, one thread, 4096 x 4096 VREQ8: 0.32
#: ns/elem from DRAM, 0.18 from L3, whatever the prefetch).  With a smaller L1 the parameter rows do not stay
#: beside the stream, and the segments only break it: Zen 4 (32 KiB L1d), two threads, 4096 x 4096 VREQ8 +
#: ReLU + RowMax by a direct harness of :func:`_s32_seg_rows` (6 alternating processes): whole rows 0.78-1.04
#: of the memory floor (median 1.00), 1024-column segments 0.77-0.90 (0.80), 2048 0.74-0.92 (5 processes);
#: one thread the same either way.  The host's L1d size (:func:`host_l1d_bytes`, read at import) chooses; no result depends
#: on it.
_S32_SEG = 1024 if host_l1d_bytes() >= 48 * 1024 else 0
#: :func:`_s32_seg_rows` with per-column words in whole rows (``_S32_SEG`` 0), GroupN 8/16/32: the columns whose
#: steps go before their blocks of sixteen groups (:func:`_s32_gmax16`) read the chunk's source again (4 KiB,
#: from L1; after a whole row's steps the parameter rows' 80 KiB had pushed the row's source out to L2).  Zen 4,
#: 4096 x 4096 VREQ8 + ReLU, two threads: the blocks after whole rows cost GroupN 8/16/32 +17..+28% / +18..+22%
#: / +16..+21% against the plain call, at the same times as with 1024-column segments.
_S32_BLK_CHUNK = 1024
#: :func:`_s32_rows_seg` prefetches the source this many segments ahead of the one it works on (2048 elements:
#: 4096 measured the same, one segment ahead less)
_S32_SEG_AHEAD = 2


@njit(inline="always")
def _s32_rne_v16(x: Any, xlo: Any, nxm: Any, sc: Any, off: Any, blo: Any, bhi: Any, sat: bool,
                 lim_lo: Any, lim_hi: Any) -> Tuple[Any, Any, Any]:
    """:func:`_s32_rne_lane` on sixteen lanes (every argument but ``sc`` and ``sat`` sixteen int32 lanes;
    ``sc`` a float64 multiplier, or sixteen as float32 bits): the same steps, the same results, as
    :func:`_s32_rne_vec`.

    Source: ``MatrixSelectedMultiplier``, ``MatrixRoundAndSaturateSigned``,
    ``ReferenceMatrixIntegerEncoding``."""
    xr = _v16_max(x, xlo)
    r = _v16_rne(xr, sc)
    t = _v16_add(r, off)
    fc = _v16_min(_v16_max(t, blo), bhi)
    if sat:
        v = fc
    else:
        v = _v16_add(_v16_min(_v16_max(r, lim_lo), lim_hi), off)
    return v, _v16_and(xr, nxm), _v16_xor(t, fc)


def _s32_rows_seg(fast: int, i0: int, i1: int, acc: Any, n: int, total: int, out: Any, qrow: int, relu: int,
                  offw: int, sat: bool, ip: Any, rne: int, group_n: int, max_abs: bool, group_out: Any, res: Any
                  ) -> None:
    """The S32 RNE rows of a block (compiled gate): :func:`_s32_rows_seg_narrow` for 8- and 16-bit
    carriers, nothing else."""
    raise NotImplementedError  # pragma: no cover - only called from compiled code


def _s32_rows_seg_narrow(fast: int, i0: int, i1: int, acc: Any, n: int, total: int, out: Any, qrow: int,
                         relu: int, offw: int, sat: bool, ip: Any, rne: int, group_n: int, max_abs: bool,
                         group_out: Any, res: Any) -> None:
    # one compiled copy per (per-column words, Sat, MaxAbs): no branch in the loop; ``group_n`` -1: neither
    # RowMax nor GroupMax (no maxima taken)
    gn = max(group_n, 0)
    mx = group_n >= 0
    if max_abs and rne == 1 and sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, True, True, ip, gn, True, group_out,
                      res, mx)
    elif max_abs and rne == 1 and not sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, True, False, ip, gn, True, group_out,
                      res, mx)
    elif max_abs and rne != 1 and sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, False, True, ip, gn, True, group_out,
                      res, mx)
    elif max_abs and rne != 1 and not sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, False, False, ip, gn, True, group_out,
                      res, mx)
    elif not max_abs and rne == 1 and sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, True, True, ip, gn, False, group_out,
                      res, mx)
    elif not max_abs and rne == 1 and not sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, True, False, ip, gn, False, group_out,
                      res, mx)
    elif not max_abs and rne != 1 and sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, False, True, ip, gn, False, group_out,
                      res, mx)
    elif not max_abs and rne != 1 and not sat:
        _s32_seg_rows(i0, i1, acc, n, total, out, qrow, relu, offw, False, False, ip, gn, False, group_out,
                      res, mx)


@njit(inline="always")
def _sacc_gstep(acc: Any, v: Any, max_abs: bool) -> Any:
    """One step of :func:`_s32_span_maxima`'s accumulators: MaxAbs the unsigned maxima of the magnitudes
    (:func:`_sacc_uabs`), else the signed maxima (``_sacc_maxs``: two instructions a step, both loads folded
    in; :func:`_sacc_max` paid three); ``max_abs`` a literal at the call."""
    if max_abs:
        return _sacc_uabs(acc, v)
    return _sacc_maxs(acc, v)


@njit(inline="always")
def _s32_mag_pair(u: Any) -> Tuple[Any, Any]:
    """The MaxAbs finish of :func:`_s32_span_maxima` and :func:`_s32_span_rowmax`: a span's largest magnitude
    ``u`` (unsigned maxima of ``llvm.abs``, its bits as int32) as the signed maximum and minimum that
    :func:`_s32_fold_bits` takes -- ``(u, -u)`` (max(u, u) = u), or for 2**31 (``u`` negative as int32: INT32_MIN
    in the span) ``(INT32_MIN, INT32_MIN)`` (0x7FFFFFFF with OF)."""
    if u < 0:  # 2**31: INT32_MIN in the span
        return np.int32(S32_MIN), np.int32(S32_MIN)
    return u, np.int32(-u)


@njit(inline="always")
def _s32_span_maxima(a_: Any, qsz: int, go: Any, max_abs: bool) -> Tuple[Any, Any, int]:
    """The maxima of :func:`_s32_seg_rows`' AVX2 (S32_ACC8) span after its steps (:func:`_s32_span_maxima_q`):
    GroupN 128 (``qsz`` 128, the common size) in a copy of its own with the size a literal -- the eight groups'
    steps unrolled (no loop, no address arithmetic: 25 -> 16 instructions per 128 elements without MaxAbs) and
    no division --, any other size in the general one.  Inlined (a call cost ~60 instructions: its prologue,
    the views' NRT calls; VREQ8 GroupN 128 -0.065 instructions an element, REQ8 GroupN 128 + MaxAbsEn -0.13);
    VREQ8 with MaxAbs calls :func:`_s32_span_maxima_c` (inlined there it cost +0.045)."""
    if qsz == 128:
        return _s32_span_maxima_q(a_, 128, go, max_abs)
    return _s32_span_maxima_q(a_, qsz, go, max_abs)


@njit
def _s32_span_maxima_c(a_: Any, qsz: int, go: Any, max_abs: bool) -> Tuple[Any, Any, int]:
    """:func:`_s32_span_maxima` as a call: MaxAbs's, whose eight accumulators and reductions inlined into
    :func:`_s32_seg_rows` (with the per-column parameter rows' pointers live) cost VREQ8 GroupN 128 + MaxAbsEn
    ~0.045 instructions an element more than the call (~60 a call)."""
    return _s32_span_maxima(a_, qsz, go, max_abs)


@njit(inline="always")
def _s32_span_maxima_q(a_: Any, qsz: int, go: Any, max_abs: bool) -> Tuple[Any, Any, int]:
    """The maxima of :func:`_s32_seg_rows`' AVX2 (S32_ACC8) span after its steps: the sources ``a_`` (a
    multiple of 16 long, in L1) in groups of ``qsz`` (a multiple of 16; the last may be shorter), one load and
    operation per eight lanes; the first ``go.size`` groups' GroupMax bits (:func:`_s32_fold_bits`) to ``go``.
    MaxAbs: each group's largest magnitude (llvm.abs, unsigned maxima: ``|INT32_MIN|`` = 2**31 the largest,
    as _s32_gmax16), taken as the maximum u and minimum -u (:func:`_s32_fold_bits`: max(u, u) = u) or, for
    2**31, INT32_MIN (its OF).  Returns the span's signed maximum and minimum so taken (without MaxAbs the
    minimum is INT32_MAX: not read) and the OR of the groups' flags.
    Whole groups eight at a time: eight accumulators side by side (one loop for the eight), their eight
    reductions together (:func:`_s32_tr8_make`) and their bits stored at once (the first ``8 * (size //
    qsz // 8)`` groups are whole and below ``go.size``); one group at a time, a loop each, LLVM's loop set-up
    and a horizontal reduction cost ~95 instructions a GroupN-128 group (REQ8, ~40 so).  The rest (fewer
    than eight groups, the last maybe partial) one at a time."""
    n = a_.size
    rmax = np.int32(S32_MIN)
    rmin = np.int32(S32_MAX)
    gflags = 0
    n8 = (n // qsz) & ~7  # the groups taken eight at a time
    if n8 > 0:
        racc = _v8_splat(np.int32(S32_MIN))
        oacc = _v8_splat(0)
        for b in range(0, n8, 8):
            s0 = b * qsz
            # one loop for both: ``max_abs`` is a literal at the call, the op chosen at compile time
            x0 = _sacc_splat(0) if max_abs else _sacc_splat(np.int32(S32_MIN))
            x1 = x0
            x2 = x0
            x3 = x0
            x4 = x0
            x5 = x0
            x6 = x0
            x7 = x0
            for c in range(s0, s0 + qsz, 16):
                x0 = _sacc_gstep(x0, _v16_load(a_, c), max_abs)
                x1 = _sacc_gstep(x1, _v16_load(a_, c + qsz), max_abs)
                x2 = _sacc_gstep(x2, _v16_load(a_, c + 2 * qsz), max_abs)
                x3 = _sacc_gstep(x3, _v16_load(a_, c + 3 * qsz), max_abs)
                x4 = _sacc_gstep(x4, _v16_load(a_, c + 4 * qsz), max_abs)
                x5 = _sacc_gstep(x5, _v16_load(a_, c + 5 * qsz), max_abs)
                x6 = _sacc_gstep(x6, _v16_load(a_, c + 6 * qsz), max_abs)
                x7 = _sacc_gstep(x7, _v16_load(a_, c + 7 * qsz), max_abs)
            if max_abs:
                r = _s32_tr8_umax(x0, x1, x2, x3, x4, x5, x6, x7)
                _v8_store(go, b, _v8_umin(r, _v8_splat(S32_MAX_CODE)))
                oacc = _v8_or(oacc, r)
            else:
                r = _s32_tr8_smax(x0, x1, x2, x3, x4, x5, x6, x7)
                _v8_store(go, b, r)
            racc = _v8_max(racc, r)
        hb = _v8_hmax(racc)  # the groups' signed maxima; MaxAbs: their magnitudes, 2**31 as INT32_MIN
        rmax = hb
        if max_abs:
            if _v8_hor(oacc) < 0:  # a magnitude of 2**31: INT32_MIN in a group
                gflags = _OF
                rmin = np.int32(S32_MIN)
            else:
                rmin = np.int32(-hb)
    q = n8
    for q0 in range(n8 * qsz, n, qsz):
        q1 = min(q0 + qsz, n)
        if max_abs:
            av = _sacc_splat(0)
            for j in range(q0, q1, 16):
                av = _sacc_uabs(av, _v16_load(a_, j))
            qhi, qlo = _s32_mag_pair(_sacc_humax(av))
        else:
            qv = _sacc_splat(np.int32(S32_MIN))
            for j in range(q0, q1, 16):
                qv = _sacc_max(qv, _v16_load(a_, j))
            qhi = _sacc_hmax(qv)
            qlo = np.int32(S32_MAX)
        if q < go.size:
            gb, gf = _s32_fold_bits(qhi, qlo, max_abs)
            go[q] = gb
            gflags |= gf
        q += 1
        rmax = qhi if qhi > rmax else rmax
        rmin = qlo if qlo < rmin else rmin
    return rmax, rmin, gflags


@njit
def _s32_span_rowmax(a_: Any, max_abs: bool) -> Tuple[Any, Any]:
    """RowMax without GroupMax: :func:`_s32_span_maxima`'s maximum and minimum of the span ``a_`` (a multiple
    of 16 long, in L1) as one group -- without its group bookkeeping (~180 instructions a call, VREQ8's
    1024-column segments: ~0.18 an element), two accumulators side by side, 32 elements a step."""
    n = a_.size
    x0 = _sacc_splat(0) if max_abs else _sacc_splat(np.int32(S32_MIN))
    x1 = x0
    n32 = n & ~31
    for j in range(0, n32, 32):
        x0 = _sacc_gstep(x0, _v16_load(a_, j), max_abs)
        x1 = _sacc_gstep(x1, _v16_load(a_, j + 16), max_abs)
    for j in range(n32, n, 16):
        x0 = _sacc_gstep(x0, _v16_load(a_, j), max_abs)
    if max_abs:
        u0 = np.uint32(_sacc_humax(x0))
        u1 = np.uint32(_sacc_humax(x1))
        return _s32_mag_pair(np.int32(u0 if u0 > u1 else u1))
    h0 = _sacc_hmax(x0)
    h1 = _sacc_hmax(x1)
    return (h0 if h0 > h1 else h1), np.int32(S32_MAX)


@njit
def _s32_seg_rows(i0: int, i1: int, acc: Any, n: int, total: int, out: Any, qrow: int, relu: int, offw: int,
                  cols: bool, sat: bool, ip: Any, group_n: int, max_abs: bool, group_out: Any, res: Any,
                  maxima: bool) -> None:
    """Rows ``i0 .. i1 - 1`` (``n`` columns; the tile's last row may be partial: ``total`` elements) of an
    S32 source with an offset, RNE, ReluMode NONE/RELU and every ``|multiplier| < 1`` (``cols`` True: the
    per-column parameter rows ``ip`` of :func:`_s32_param_kernel`, the row's at ``i * qrow``; False: one
    word), GroupMax off, ``group_n`` 8 or a multiple of 16: the steps and results of :func:`_row_s32_int`
    (:func:`_s32_rne_lane`), in sixteen-lane steps (:func:`_s32_rne_v16`; a segment's last ``size % 16``
    elements one at a time), segment by segment over the block's rows (:data:`_S32_SEG` columns, a
    multiple of ``group_n``), each step first prefetching the source :data:`_S32_SEG_AHEAD` segments
    ahead.  The loop takes whole arrays and offsets, no slices and no inlined call with array arguments:
    each is a new reference, an atomic add on the array's count (shared by the threads) and, with the
    call, a ``vzeroupper`` -- per segment that cost ~0.05 ns/element.
    Per row ``i`` writes ``res[5 * (i - i0) ..]``: NX bits, OF bits, signed maximum and minimum (``maxima``
    False, GroupMax off and no RowMax: not taken on AVX2 (S32_ACC8), left meaningless), GroupMax
    flags; the GroupMax bits (:func:`_s32_fold_bits`) to ``group_out`` (row ``i``'s first group at
    ``i * ceil(cnt / group_n)``; GroupN 8/16/32: whole lines by :func:`_s32_gmax16`'s non-temporal stores, one
    :func:`_sfence` at the block's end).

    Source: ``MatrixPostQuantBaseWithFlags``, ``MatrixRoundAndSaturateSigned``,
    ``ReferenceMatrixIntegerEncoding``, ``MatrixRowMaxResult``, ``MatrixGroupMaxResult``."""
    xlo = np.int32(0) if relu == 1 else np.int32(S32_MIN)
    lim_lo = np.int32(-(1 << (offw - 1)))
    lim_hi = np.int32((1 << (offw - 1)) - 1)
    nxm, off, blo, bhi = ip[0, 0], ip[1, 0], ip[2, 0], ip[3, 0]
    sc = np.float64(_u32_f32(np.uint32(ip[4, 0])))
    nxm_, off_, blo_, bhi_, sc_ = ip[0], ip[1], ip[2], ip[3], ip[4]  # row views once (no slice per segment)
    vxlo = _v16_splat(xlo)
    vlo = _v16_splat(lim_lo)
    vhi = _v16_splat(lim_hi)
    vnxm = _v16_splat(nxm)
    voff = _v16_splat(off)
    vblo = _v16_splat(blo)
    vbhi = _v16_splat(bhi)
    last = acc.size - 1
    # per-column words: _S32_SEG columns a segment (0: whole rows); one word: whole rows (the rows one after the
    # other; from DRAM, 0.215 ns/elem in 1024-column segments against 0.15 for whole rows); GroupMax: whole groups
    segs = cols and _S32_SEG > 0
    seg = _S32_SEG if segs else max(n, 1)
    blk = group_n == 8 or group_n == 16 or group_n == 32  # GroupMax sixteen groups at a time (_s32_gmax16)
    # AVX2 (S32_ACC8), GroupN 8: each block of sixteen groups taken right after its two 64-element iterations,
    # inside the steps' loop, instead of the chunk's blocks after the chunk's steps.  Zen 3, 4096 x 4096 VREQ8
    # + ReLU, two threads, three alternating processes of 31 paired rounds: RowMax+GroupMax GroupN 8 +15.9 /
    # +15.1 / +14.4% -> +13.7 / +13.7 / +12.7% over the plain call (one thread, L3-resident: +17.4..+19.1% ->
    # +15.6..+16.4%).  The block's source was read by the steps just before: after a whole chunk a part of it
    # had left L1 (the chunk's five parameter rows share its L1 sets: all six streams advance 4 KiB a chunk).
    fuse8 = S32_ACC8 and group_n == 8
    if group_n > 0:
        seg = (max(1, _S32_SEG // group_n) if segs else (n + group_n - 1) // group_n) * group_n
    nr = i1 - i0
    nseg = max(1, (n + seg - 1) // seg)
    tot = nr * nseg
    # GroupMax: the groups of a whole row and of a whole segment (``seg`` a multiple of ``group_n``), once here:
    # each floor division a segment paid ~20 instructions (zero and sign checks)
    ngr = (n + group_n - 1) // group_n if group_n > 0 else 0
    spg = seg // group_n if group_n > 0 else 0
    for r in range(nr):
        res[5 * r] = 0
        res[5 * r + 1] = 0
        res[5 * r + 2] = S32_MIN
        res[5 * r + 3] = S32_MAX
        res[5 * r + 4] = 0
    for s in range(tot):
        c = s // nr
        r = s - c * nr
        i = i0 + r
        base = i * n
        rcnt = min(n, total - base)
        c0 = c * seg
        cnt = min(c0 + seg, rcnt) - c0
        if cnt <= 0:
            continue
        s2 = s + _S32_SEG_AHEAD  # prefetch: the segment that comes _S32_SEG_AHEAD after this one
        if s2 < tot:
            pfb = (i0 + s2 % nr) * n + (s2 // nr) * seg
        else:
            pfb = (i1 + s2 - tot) * n  # past the block: the rows after it
        if group_n > 0:  # row i's first group, plus the segment's first (c0 // group_n = c * spg)
            gbase = i * (ngr if rcnt == n else (rcnt + group_n - 1) // group_n) + c * spg
        else:
            gbase = 0
        ab = base + c0
        pb = i * qrow + c0 if cols else 0
        nxv = _sacc_splat(0)  # the accumulators: eight lanes on AVX2 (S32_ACC8), else sixteen
        ovv = _sacc_splat(0)
        # GroupN 8/16/32: blocks of sixteen groups, their bits from the source (in L1) by _s32_gmax16 after
        # the block's steps; other GroupN: one group at a time, its maxima from the steps' lanes
        # (blk: one chunk of the segment's whole blocks -- VREQ8 1024 columns, REQ8 the row --, so that the chunk's
        # fixed work, its maxima's reductions and branches, is paid once per segment: 512-column chunks cost
        # VREQ8 GroupN 8 0.11 instructions an element, REQ8 0.26; the source is read again from L1 (a 4096-column
        # row: 16 KiB))
        bsz = 16 * group_n  # blk: the columns of sixteen groups
        c16 = cnt & ~15
        # (per-column words in whole rows, _S32_SEG 0: chunks of _S32_BLK_CHUNK columns, so that the blocks read
        # the chunk's source again from L1 -- over a whole row the parameter rows' stream had evicted it)
        wc = min(c16, _S32_BLK_CHUNK) if (cols and not segs) else c16
        gsz = (max(bsz, wc & -bsz) if blk else group_n) if group_n > 0 else cnt  # (blk: bsz a power of 2)
        gq = gbase  # blk: the first group of the next block of sixteen
        rmax = np.int32(S32_MIN)
        rmin = np.int32(S32_MAX)
        gflags = 0
        gdone = 0  # blk: the groups before this column have their bits
        gv = _v16_splat(0 if max_abs else np.int32(S32_MIN))  # blk: the blocks' results (_s32_gmax16)
        # AVX2 (S32_ACC8), other GroupN: the steps in one pass over the segment, then each group's maxima from
        # its source (in L1), group by group (a pass of steps per group paid ~160 instructions a group of
        # loop set-up, LLVM's pointers of the parameter rows spilled and reloaded)
        stp = cnt if (S32_ACC8 and not blk) else gsz
        for g0 in range(0, max(c16, 1), max(stp, 1)):  # one group (all of the vector part without GroupMax)
            g1 = min(g0 + stp, c16)
            hv = _sacc_splat(np.int32(S32_MIN))
            lv = _sacc_splat(np.int32(S32_MAX))
            # 64 elements (a source line's four prefetches first, then four 16-lane steps) while they last, then
            # 16 at a time: from DRAM on two threads ~5-8% less time than one prefetch and step at a time
            # (h-vreq8b, kernel-level harness; the same steps in the same order of results)
            g4 = g0 + ((g1 - g0) & ~63)
            # The steps without maxima (blk: the row's maximum from the blocks' results; AVX2, S32_ACC8: the
            # group's maxima from its source again after its steps, below), else (AVX-512 only) with them.  On
            # AVX2 (Zen 3) the maxima in the steps left too few registers: LLVM kept values of the 64-element
            # body on the stack (46 stack accesses per 64 elements, 54 with MaxAbs's minimum)
            if S32_ACC8 or blk:
                for j0 in range(g0, g4, 64):
                    for k in range(4):
                        _prefetch(acc, min(pfb + j0 + 16 * k, last))
                    for k in range(4):
                        j = j0 + 16 * k
                        x = _v16_load(acc, ab + j)
                        if cols:
                            v, nv, ov = _s32_rne_v16(x, vxlo, _v16_load(nxm_, pb + j), _v16_load(sc_, pb + j),
                                                     _v16_load(off_, pb + j), _v16_load(blo_, pb + j),
                                                     _v16_load(bhi_, pb + j), sat, vlo, vhi)
                        else:
                            v, nv, ov = _s32_rne_v16(x, vxlo, vnxm, sc, voff, vblo, vbhi, sat, vlo, vhi)
                        _v16_store(out, ab + j, v)
                        nxv = _sacc_or(nxv, nv)
                        ovv = _sacc_or(ovv, ov)
                    if fuse8 and ((j0 - g0) & 127) == 64:  # a block of sixteen groups complete (fuse8 above)
                        gv = _s32_gmax16(acc, ab + j0 - 64, group_out, gq + ((j0 - 64 - g0) >> 3), 8, max_abs, gv)
                for j in range(g4, g1, 16):
                    _prefetch(acc, min(pfb + j, last))
                    x = _v16_load(acc, ab + j)
                    if cols:
                        v, nv, ov = _s32_rne_v16(x, vxlo, _v16_load(nxm_, pb + j), _v16_load(sc_, pb + j),
                                                 _v16_load(off_, pb + j), _v16_load(blo_, pb + j),
                                                 _v16_load(bhi_, pb + j), sat, vlo, vhi)
                    else:
                        v, nv, ov = _s32_rne_v16(x, vxlo, vnxm, sc, voff, vblo, vbhi, sat, vlo, vhi)
                    _v16_store(out, ab + j, v)
                    nxv = _sacc_or(nxv, nv)
                    ovv = _sacc_or(ovv, ov)
            else:
                for j0 in range(g0, g4, 64):
                    for k in range(4):
                        _prefetch(acc, min(pfb + j0 + 16 * k, last))
                    for k in range(4):
                        j = j0 + 16 * k
                        x = _v16_load(acc, ab + j)
                        if cols:
                            v, nv, ov = _s32_rne_v16(x, vxlo, _v16_load(nxm_, pb + j), _v16_load(sc_, pb + j),
                                                     _v16_load(off_, pb + j), _v16_load(blo_, pb + j),
                                                     _v16_load(bhi_, pb + j), sat, vlo, vhi)
                        else:
                            v, nv, ov = _s32_rne_v16(x, vxlo, vnxm, sc, voff, vblo, vbhi, sat, vlo, vhi)
                        _v16_store(out, ab + j, v)
                        hv = _sacc_max(hv, x)
                        if max_abs:  # the minimum only for MaxAbs (_s32_fold_bits reads it only then)
                            lv = _sacc_min(lv, x)
                        nxv = _sacc_or(nxv, nv)
                        ovv = _sacc_or(ovv, ov)
                for j in range(g4, g1, 16):
                    _prefetch(acc, min(pfb + j, last))
                    x = _v16_load(acc, ab + j)
                    if cols:
                        v, nv, ov = _s32_rne_v16(x, vxlo, _v16_load(nxm_, pb + j), _v16_load(sc_, pb + j),
                                                 _v16_load(off_, pb + j), _v16_load(blo_, pb + j),
                                                 _v16_load(bhi_, pb + j), sat, vlo, vhi)
                    else:
                        v, nv, ov = _s32_rne_v16(x, vxlo, vnxm, sc, voff, vblo, vbhi, sat, vlo, vhi)
                    _v16_store(out, ab + j, v)
                    hv = _sacc_max(hv, x)
                    if max_abs:  # the minimum only for MaxAbs (_s32_fold_bits reads it only then)
                        lv = _sacc_min(lv, x)
                    nxv = _sacc_or(nxv, nv)
                    ovv = _sacc_or(ovv, ov)
            if S32_ACC8 and not blk and not maxima:  # neither RowMax nor GroupMax: no maxima
                hi = np.int32(S32_MIN)
                lo = np.int32(S32_MAX)
            elif S32_ACC8 and not blk:
                # each group's (without GroupMax: the span's) maxima from its source again, in L1 since the
                # steps (_s32_span_maxima: a call per segment, whose loop per group keeps its registers; inline
                # here it paid ~75 scalar instructions a group of spills and loop set-up, REQ8 GroupN 128)
                # (one pass here: ``stp`` is ``cnt``, so ``g0`` is 0 and the span the segment's vector part)
                qsz = group_n
                # the groups written: the whole ones, and a last partial one if the row ends with the span (a
                # whole segment: its ``spg`` groups, no division)
                nq = 0
                if group_n > 0:
                    if g1 == seg:
                        nq = spg
                    else:
                        nq = g1 // qsz
                        if g1 == cnt and g1 % qsz != 0:
                            nq += 1
                gi = gbase
                if group_n == 0:  # RowMax alone: no group bookkeeping
                    if max_abs:
                        qhi, qlo = _s32_span_rowmax(_borrow(acc, ab + g0, ab + g1), True)
                    else:
                        qhi, qlo = _s32_span_rowmax(_borrow(acc, ab + g0, ab + g1), False)
                    gf = 0
                elif max_abs and cols:  # (a literal flag: one compiled form of its loop each; VREQ8: a call)
                    qhi, qlo, gf = _s32_span_maxima_c(_borrow(acc, ab + g0, ab + g1), qsz,
                                                      _borrow(group_out, gi, gi + nq), True)
                elif max_abs:
                    qhi, qlo, gf = _s32_span_maxima(_borrow(acc, ab + g0, ab + g1), qsz,
                                                    _borrow(group_out, gi, gi + nq), True)
                else:
                    qhi, qlo, gf = _s32_span_maxima(_borrow(acc, ab + g0, ab + g1), qsz,
                                                    _borrow(group_out, gi, gi + nq), False)
                gflags |= gf
                rmax = qhi if qhi > rmax else rmax
                rmin = qlo if qlo < rmin else rmin
                hi = np.int32(S32_MIN)  # (taken in above)
                lo = np.int32(S32_MAX)
            else:
                hi = _sacc_hmax(hv)
                lo = _sacc_hmin(lv) if max_abs else np.int32(S32_MAX)
            if blk:
                # blocks of sixteen whole groups (all of the chunk but at a row's end), GroupN a literal in each
                # loop: no division and no choice of the block's form per block (g1 - g0 >= 0: shifts)
                if group_n == 8:
                    nb = (g1 - g0) >> 7  # (fuse8: these blocks were taken in the steps' loop, the last whole
                    if not fuse8:        # 128 columns of g0 .. g4 being those of g0 .. g1)
                        for q in range(nb):
                            gv = _s32_gmax16(acc, ab + g0 + q * 128, group_out, gq + 16 * q, 8, max_abs, gv)
                elif group_n == 16:
                    nb = (g1 - g0) >> 8
                    for q in range(nb):
                        gv = _s32_gmax16(acc, ab + g0 + q * 256, group_out, gq + 16 * q, 16, max_abs, gv)
                else:  # 32
                    nb = (g1 - g0) >> 9
                    for q in range(nb):
                        gv = _s32_gmax16(acc, ab + g0 + q * 512, group_out, gq + 16 * q, 32, max_abs, gv)
                gq += 16 * nb
                if nb > 0:
                    gdone = g0 + nb * bsz
            elif group_n > 0 and not S32_ACC8:
                if g1 - g0 == group_n or g1 == cnt:  # a whole group (else the group ends in the scalar tail)
                    gb, gf = _s32_fold_bits(hi, lo, max_abs)
                    group_out[gbase + g0 // group_n] = gb
                    gflags |= gf
            rmax = hi if hi > rmax else rmax
            rmin = lo if lo < rmin else rmin
        nx = _sacc_hor(nxv)
        ovb = _sacc_hor(ovv)
        if blk:  # the groups after the last block of sixteen (a row's end): from the source, one at a time
            if gdone < cnt:  # (a range with a runtime step: its trip count a division, here only when taken)
                for q in range(gdone, cnt, group_n):
                    q1 = min(q + group_n, cnt)
                    ghi = np.int32(S32_MIN)
                    glo = np.int32(S32_MAX)
                    for j in range(q, q1):
                        x1 = np.int32(acc[ab + j])
                        ghi = x1 if x1 > ghi else ghi
                        glo = x1 if x1 < glo else glo
                    gb, gf = _s32_fold_bits(ghi, glo, max_abs)
                    group_out[gbase + q // group_n] = gb
                    gflags |= gf
                    rmax = ghi if ghi > rmax else rmax
                    rmin = glo if glo < rmin else rmin
            if gdone > 0:  # the blocks' maxima: the signed one, or (MaxAbs) the largest magnitude
                if max_abs:
                    u = _v16_humax(gv)
                    if u < 0:  # a magnitude of 2**31: INT32_MIN in a group (OF) and in the row
                        gflags |= _OF
                        rmin = np.int32(S32_MIN)
                    else:  # max(rmax, -rmin) of _s32_fold_bits is the largest magnitude u
                        nu = np.int32(-np.int64(u))
                        rmax = u if u > rmax else rmax
                        rmin = nu if nu < rmin else rmin
                else:
                    hb = _v16_hmax(gv)
                    rmax = hb if hb > rmax else rmax
        if c16 < cnt:  # the scalar tail (with GroupMax: the rest of the last group, started at a multiple of 16)
            gs = c16 - (c16 % gsz) if (group_n > 0 and not blk) else c16  # where the tail's group starts
            ghi = np.int32(S32_MIN)
            glo = np.int32(S32_MAX)
            if group_n > 0 and not blk:
                for j in range(gs, c16):  # the group's vector part, already stored: its source again
                    x1 = np.int32(acc[ab + j])
                    ghi = x1 if x1 > ghi else ghi
                    glo = x1 if x1 < glo else glo
            for j in range(c16, cnt):
                x1 = np.int32(acc[ab + j])
                ghi = x1 if x1 > ghi else ghi
                glo = x1 if x1 < glo else glo
                if cols:
                    v1, n1, o1 = _s32_rne_lane(x1, xlo, nxm_[pb + j], np.float64(_u32_f32(np.uint32(sc_[pb + j]))),
                                               off_[pb + j], blo_[pb + j], bhi_[pb + j], sat, lim_lo, lim_hi)
                else:
                    v1, n1, o1 = _s32_rne_lane(x1, xlo, nxm, sc, off, blo, bhi, sat, lim_lo, lim_hi)
                nx = _or32(nx, n1)
                ovb = _or32(ovb, o1)
                out[ab + j] = v1  # the store keeps the carrier's low 8/16 bits (S4X2: masked by the caller)
            if group_n > 0 and not blk:
                gb, gf = _s32_fold_bits(ghi, glo, max_abs)
                group_out[gbase + gs // group_n] = gb
                gflags |= gf
            rmax = ghi if ghi > rmax else rmax
            rmin = glo if glo < rmin else rmin
        res[5 * r] |= nx
        res[5 * r + 1] |= ovb
        res[5 * r + 2] = max(res[5 * r + 2], rmax)
        res[5 * r + 3] = min(res[5 * r + 3], rmin)
        res[5 * r + 4] |= gflags
    if blk:
        _sfence()  # _s32_gmax16's non-temporal GroupMaxOut stores (GroupN 8/16/32) before the block's end


def _s32_rows_seg_none(fast: int, i0: int, i1: int, acc: Any, n: int, total: int, out: Any, qrow: int,
                       relu: int, offw: int, sat: bool, ip: Any, rne: int, group_n: int, max_abs: bool,
                       group_out: Any, res: Any) -> None:
    return None  # never called: the S32 offset modes write 8- or 16-bit carriers


if NUMBA_AVAILABLE:  # pragma: no branch
    _gate(_s32_rows_seg, lambda bits: _s32_rows_seg_narrow if bits in (8, 16) else _s32_rows_seg_none,
          _s32_rows_seg_narrow)


@njit(inline="always")
def _s32_seg_finish(o_: Any, cnt: int, dst: int, nxb: Any, ovb: Any, rmax: Any, rmin: Any,
                    max_abs: bool) -> Tuple[int, int, int]:
    """The end of a row of :func:`_s32_rows_seg`: S4X2 codes kept as their two's complement nibble,
    the row's flags from the lanes' NX / overflow masks, and its RowMax bits (:func:`_s32_fold_bits`)."""
    if dst == D_S4X2:  # wrapped or clamped to S4, kept as its two's complement nibble
        for j in range(cnt):
            o_[j] = o_[j] & np.uint8(S4_MASK)
    flags = 0
    if (nxb & _ABS) != 0:
        flags |= _NX
    if (ovb & _ABS) != 0:
        flags |= _OF_NX
    rb, rf = _s32_fold_bits(rmax, rmin, max_abs)
    return flags, rb, rf


@njit
def _row_s32_int(acc: Any, base: int, cnt: int, out: Any, pb: int, relu: int, offw: int, dst: int, mode: int,
                 sat: bool, scale: Any, alpha: Any, offs: Any, blo: Any, bhi: Any, ip: Any, rne: int,
                 max_abs: bool, group_n: int, group_out: Any, gbase: int, gscr: Any) -> Tuple[int, int, int]:
    """S32 source with an offset (REQ8/VREQ8, REQ4/VREQ4, DEQS16/VDEQS16), no per-element
    flags: the rules of :func:`_row_s32_offset` (and so of :func:`_element`) in one
    select-only pass over the row that vectorizes, RowMax folded in.

    ``rne`` (chosen per call by :func:`run_tile`): 1 or 2 for RNE with ReluMode NONE/RELU and
    every multiplier of magnitude below 1 -- only with a GroupN other than 8 or a multiple of 16
    (a direct :func:`run_tile` call; every other such row runs :func:`_s32_rows_seg`):
    :func:`_s32_rne_lane` in 8 x 32-bit lanes (:func:`_s32_rne_groups`),
    reading the int32 parameter rows ``ip`` of :func:`_s32_param_kernel` per column (1) or one
    word's values held in registers (2); 0 for everything else -- :func:`_s32_int_span` in
    4 x float64 lanes: the exact float64 product (ReLU: 0 for a negative source; LReLU/PReLU:
    a select of two products), rounded by :func:`_round_mode`; NX when the rounded value
    differs.  Both fuse the S5/S9/S17 saturation, the offset and the destination clamp into
    one clamp of ``r + offset`` to per-column bounds (OF|NX when it moves); with Sat=0 the
    value is wrapped instead.  The flags are ORs over the row, so no element branches.  RowMax comes from the row's
    signed maximum and minimum, taken in the same pass; GroupMax (``group_n`` > 0, written
    to ``group_out[gbase + g]``) too in the 32-bit lanes (:func:`_s32_rne_groups`: the same
    pass, group by group, in explicit 8-lane vectors), and for the float64 loop from a
    load-only pass over the row while it is in L1.
    Returns (element and GroupMax flags, RowMax bits of the row, RowMax flags).

    Source: ``MatrixPostQuantBaseWithFlags``, ``MatrixRoundAndSaturateSigned``,
    ``ReferenceMatrixIntegerEncoding``, ``MatrixGroupMaxResult``."""
    lim_lo = -np.float64(1 << (offw - 1))
    lim_hi = np.float64((1 << (offw - 1)) - 1)
    a_ = acc[base:base + cnt]
    o_ = out[base:base + cnt]
    sc_ = scale[pb:pb + cnt]
    flags = 0
    if rne == 0:  # other RModes, LReLU/PReLU, a multiplier of magnitude >= 1: the select-only float64 loop
        of_ = offs[pb:pb + cnt]
        bl_ = blo[pb:pb + cnt]
        bh_ = bhi[pb:pb + cnt]
        al_ = alpha[pb:pb + cnt] if relu >= 2 else scale[pb:pb + cnt]
        nxb, ovb, rmax, rmin = _s32_int_span(a_, o_, sc_, al_, of_, bl_, bh_, -1, False, sat, mode, lim_lo, lim_hi,
                                             relu == 1, relu >= 2)
    else:  # RNE, ReluMode NONE/RELU, |multiplier| < 1: 32-bit lanes (_s32_rne_lane)
        xlo = np.int32(0) if relu == 1 else np.int32(S32_MIN)
        ilo = np.int32(lim_lo)
        ihi = np.int32(lim_hi)
        # always with GroupMax here: _tile_rows sends the RNE rows without GroupMax (and with GroupN 8 or
        # a multiple of 16, every GroupN of the attributes) to _s32_rows_seg; what reaches this branch is a
        # run_tile call with another GroupN.  GroupMax folded into the pass (explicit 8-lane loop):
        k = 0 if rne == 2 else pb
        kc = 1 if rne == 2 else cnt
        nxm_ = ip[0, k:k + kc]
        off_ = ip[1, k:k + kc]
        bl_ = ip[2, k:k + kc]
        bh_ = ip[3, k:k + kc]
        sc_ = ip[4, k:k + kc]
        nxm, off, bl, bh = nxm_[0], off_[0], bl_[0], bh_[0]
        sc = np.float64(_u32_f32(np.uint32(sc_[0])))
        cols = rne != 2
        if cols and sat:
            nxb, ovb, rmax, rmin, gflags = _s32_rne_groups(a_, o_, True, nxm_, off_, bl_, bh_, sc_, nxm, off, bl,
                                                           bh, sc, xlo, True, ilo, ihi, group_n, max_abs,
                                                           group_out, gbase, gscr, acc, base + PF_AHEAD)
        elif cols:
            nxb, ovb, rmax, rmin, gflags = _s32_rne_groups(a_, o_, True, nxm_, off_, bl_, bh_, sc_, nxm, off, bl,
                                                           bh, sc, xlo, False, ilo, ihi, group_n, max_abs,
                                                           group_out, gbase, gscr, acc, base + PF_AHEAD)
        elif sat:
            nxb, ovb, rmax, rmin, gflags = _s32_rne_groups(a_, o_, False, nxm_, off_, bl_, bh_, sc_, nxm, off, bl,
                                                           bh, sc, xlo, True, ilo, ihi, group_n, max_abs,
                                                           group_out, gbase, gscr, acc, base + PF_AHEAD)
        else:
            nxb, ovb, rmax, rmin, gflags = _s32_rne_groups(a_, o_, False, nxm_, off_, bl_, bh_, sc_, nxm, off, bl,
                                                           bh, sc, xlo, False, ilo, ihi, group_n, max_abs,
                                                           group_out, gbase, gscr, acc, base + PF_AHEAD)
        flags |= gflags
        group_n = 0  # done: no group pass below
    if group_n > 0:  # GroupMax of the float64 loop (rne 0): a load-only pass over the row, still in L1
        g = 0
        for s in range(0, cnt, group_n):
            seg = a_[s:min(s + group_n, cnt)]
            hi = np.int32(S32_MIN)
            lo = np.int32(S32_MAX)
            if max_abs:
                for j in range(seg.size):
                    xs = np.int32(seg[j])
                    hi = xs if xs > hi else hi
                    lo = xs if xs < lo else lo
            else:  # the maximum alone
                for j in range(seg.size):
                    xs = np.int32(seg[j])
                    hi = xs if xs > hi else hi
            gb, gf = _s32_fold_bits(hi, lo, max_abs)
            group_out[gbase + g] = gb
            flags |= gf
            g += 1
    if dst == D_S4X2:  # wrapped or clamped to S4, kept as its two's complement nibble
        for j in range(cnt):
            o_[j] = o_[j] & np.uint8(S4_MASK)
    if (nxb & _ABS) != 0:
        flags |= _NX
    if (ovb & _ABS) != 0:
        flags |= _OF_NX
    rb, rf = _s32_fold_bits(rmax, rmin, max_abs)
    return flags, rb, rf


@njit(inline="always")
def _s32_fold_bits(smax: Any, smin: Any, max_abs: bool) -> Tuple[int, int]:
    """MatrixGroupMaxResult of an S32 span from its signed maximum and minimum: the maximum,
    or with MaxAbs the larger magnitude of the two (|INT_MIN| saturates to INT_MAX with OF,
    as :func:`_abs_red`).  Returns (S32 bits, flags)."""
    if max_abs:
        if smin == np.int32(S32_MIN):
            return S32_MAX_CODE, _OF
        return max(np.int64(smax), -np.int64(smin)), 0
    return np.int64(smax) & U32_MASK, 0


@njit
def _row_float(acc: Any, base: int, cnt: int, out: Any, i: int, relu: int, dst: int, mode: int,
               sat: bool, scale: Any, alpha: Any, qrow: int, rrow: int,
               spec: Any, negzero: int) -> int:
    """FP32 source, floating destination, no offset: specials and -0 through _element,
    everything else multiplied and encoded inline (same rules)."""
    f_or = 0
    a_ = acc[base:base + cnt]
    o_ = out[base:base + cnt]
    sc_ = scale[i * qrow:i * qrow + cnt]
    al_ = alpha[i * rrow:i * rrow + cnt]
    for j in range(cnt):
        a = np.int64(a_[j])
        if _fp32_special_or_negzero(a):
            b, f = _element(a, sc_[j], al_[j], 0, SRC_FP32, relu, 0, dst, mode, sat, spec, negzero)
        else:
            v = np.float64(_u32_f32(np.uint32(a))) * _multiplier(a >= 0x80000000, sc_[j], al_[j], relu) + 0.0
            if dst == D_HIF8:
                b, f = _encode_hif8(v, mode, sat)
            else:
                b, f = _encode_binary(v, dst, mode, sat)
        o_[j] = b
        f_or |= f
    return f_or


# ---------------------------------------------------------------------------
# The tile kernel


if NUMBA_AVAILABLE:  # pragma: no branch
    @_intrinsic
    def _fetch_add_i(typingctx: Any, counter: Any, inc: Any) -> Any:
        """Atomically add ``inc`` to ``counter[0]`` (an int64 array) and return its previous value."""
        if not (isinstance(counter, _types.Array) and counter.dtype == _types.int64):
            return None
        sig = _types.int64(counter, _types.int64)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            arr = context.make_array(signature.args[0])(context, builder, args[0])
            inc64 = context.cast(builder, args[1], signature.args[1], _types.int64)
            return builder.atomic_rmw("add", arr.data, inc64, "monotonic")

        return sig, codegen

    _fetch_add: Any = _fetch_add_i
else:  # pragma: no cover - kernels are not used without numba
    def _fetch_add(counter: Any, inc: int) -> int:
        old = int(counter[0])
        counter[0] = old + inc
        return old


#: elements of accumulator rows a thread of :func:`_tile_kernel` takes at a time
TILE_BLOCK_ELEMENTS = 1 << 15


@njit(parallel=True)
def _tile_kernel(acc: Any, m: int, n: int, total: int, out: Any, fl: Any, want_flags: bool,
                 kind: int, fast: int, src: int, relu: int, offw: int, dst: int, mode: int, sat: bool,
                 scale: Any, alpha: Any, offs: Any, shifts: Any, qrow: int, qcol: int,
                 rrow: int, rcol: int, spec: Any, negzero: int, scale32: Any, alpha32: Any,
                 red_t: int, max_abs: bool, row_en: bool, row_out: Any, has_init: bool, init: Any,
                 group_n: int, group_out: Any, rowflags: Any, offs_f: Any, blo: Any, bhi: Any,
                 s32p: Any, s32rne: int, hif8k: Any, threads: int, block: int, ticket: Any) -> None:
    """Process rows of ``n`` elements of a flat accumulator (``total`` elements, ``m`` rows).

    ``threads`` workers (at least the launch's thread count: :data:`ptonum.kernels.MAX_THREADS`) are
    split over the threads; each takes the next ``block`` rows from the shared counter ``ticket``
    (int64[1], zero) until none is left, so a thread slowed by other load on its core does fewer
    blocks instead of the others waiting for its fixed half (a thread's later workers find nothing
    left).  Rows are independent: the split changes no result."""
    nblocks = (m + block - 1) // block
    for _w in prange(max(1, min(threads, nblocks))):
        while True:
            k = _fetch_add(ticket, 1)
            if k >= nblocks:
                break
            _tile_rows(k * block, min(m, k * block + block), acc, m, n, total, out, fl, want_flags, kind, fast,
                       src, relu, offw, dst, mode, sat, scale, alpha, offs, shifts, qrow, qcol, rrow, rcol, spec,
                       negzero, scale32, alpha32, red_t, max_abs, row_en, row_out, has_init, init, group_n,
                       group_out, rowflags, offs_f, blo, bhi, s32p, s32rne, hif8k)


@njit(inline="always")
def _nt_lines(dst: Any, ng: int) -> Tuple[int, int]:
    """Where the whole 64-byte lines of ``dst[0 .. ng - 1]`` (uint32) lie: ``(h, g1)`` with ``dst[h .. g1 - 1]``
    whole lines (``g1 - h`` a multiple of 16) and ``dst[0 .. h - 1]``, ``dst[g1 .. ng - 1]`` the partial head and
    tail lines (a row not 4-byte aligned, never the case: ``h`` is ``ng``, no whole line)."""
    ad = _addr(dst)
    h = min(ng, ((-ad) & 63) >> 2) if (ad & 3) == 0 else ng
    return h, h + ((ng - h) & ~15)


@njit(inline="always")
def _key_bits(kg: Any) -> Any:
    """The bits of the FP32 number whose fold key (:func:`_fp32_key`, uint32) is ``kg``, the key's order-preserving
    map undone: a key with its top bit set is a number of sign 0 and loses that bit, any other is the complement
    of a negative number's bits.  (Select-free: it vectorizes.)"""
    return np.uint32(kg ^ np.uint32(np.uint32(~np.uint32(np.int32(kg) >> np.int32(31))) | np.uint32(0x80000000)))


@njit(inline="always")
def _store_lines_nt(dst: Any, src: Any, ng: int) -> bool:
    """``dst[0 .. ng - 1] = src[0 .. ng - 1]`` (uint32, one row's GroupMaxOut): the whole 64-byte lines of ``dst`` by
    non-temporal stores (no read for ownership; :func:`_store_nt16`), the partial head and tail lines by
    ordinary ones.  True when a non-temporal store was made (the caller fences with :func:`_sfence` before
    ordinary stores to the same lines and before the kernel ends)."""
    h, g1 = _nt_lines(dst, ng)
    for g in range(h):
        dst[g] = src[g]
    for g in range(h, g1, 16):
        _store_nt16(dst, g, src, g)
    for g in range(g1, ng):
        dst[g] = src[g]
    return g1 > h


@njit(inline="always")
def _gmo_bits_nt(dst: Any, gk: Any, ng: int) -> Tuple[Any, Any, bool]:
    """One row's GroupMaxOut at GroupN 8/16 from its fold keys ``gk[0 .. ng - 1]`` (uint32, as
    :func:`_fp32_fold_groups` gives them): each group's bits (the key's order-preserving map undone: a key
    with its top bit set is a number of sign 0 and loses that bit, any other is the complement of a
    negative number's bits) to ``dst[0 .. ng - 1]``, sixteen groups at a time from the vector register by
    non-temporal stores (:func:`_v16_store_nt`) into the whole 64-byte lines of ``dst``, the partial head and
    tail lines by ordinary stores.  Returns the keys' unsigned maximum and minimum (RowMax and the caller's
    test for a group with no number) and whether a non-temporal store was made (the caller's
    :func:`_sfence`, as :func:`_store_lines_nt`).

    The conversion and the store go together: the same bits computed into a row buffer first and then
    stored by :func:`_store_lines_nt` cost FP16 GroupN 8 about 0.5 ns a group more on a Zen 4 (one thread,
    4096 x 4096, the buffer's lines written back from L2 each row; docs/performance.md, stop 42)."""
    kr = np.uint32(0)
    kmin = np.uint32(0xFFFFFFFF)
    h, g1 = _nt_lines(dst, ng)
    for g in range(h):
        kg = gk[g]
        dst[g] = _key_bits(kg)
        kr = max(kr, kg)
        kmin = min(kmin, kg)
    if g1 > h:
        vr = _v16_splat(0)
        vn = _v16_splat(-1)
        ones = _v16_splat(-1)
        zero = _v16_splat(0)
        top = _v16_splat(np.uint32(0x80000000))
        for q in range(h, g1, 16):
            v = _v16_load(gk, q)
            sm = _v16_min(_v16_max(v, ones), zero)  # all ones where the key's top bit is set, else 0
            _v16_store_nt(dst, q, _v16_xor(v, _v16_or(_v16_xor(sm, ones), top)))
            vr = _v16_umax(vr, v)
            vn = _v16_umin(vn, v)
        kr = max(kr, np.uint32(_v16_humax(vr)))
        kmin = min(kmin, np.uint32(_v16_humin(vn)))
    for g in range(g1, ng):
        kg = gk[g]
        dst[g] = _key_bits(kg)
        kr = max(kr, kg)
        kmin = min(kmin, kg)
    return kr, kmin, g1 > h


@njit(inline="always")
def _fold_row_finish(i: int, base: int, cnt: int, f_or: Any, gk: Any, gs: Any, ng: int, seg: int, group_n: int,
                     acc: Any, group_out: Any, row_en: bool, row_out: Any, has_init: bool, init: Any, red_t: int,
                     max_abs: bool, nt_any: bool) -> Tuple[Any, bool]:
    """Row ``i``'s RowMaxOut and GroupMaxOut (``ng`` groups of ``seg`` elements; ``group_n`` 0: RowMax alone) from
    the fold keys ``gk`` and sNaN bits ``gs`` its pass left (:func:`_fp32_fold_groups`; or, with
    :data:`_GMO_BITS` in the row's flag word ``f_or``, the GroupMaxOut bits themselves), RowMaxIn by
    :func:`_step` with ``has_init``; the groups with an sNaN or no number by the NaN rules
    (:func:`_fold_finish`).  Returns the row's flag word and whether a non-temporal store was made
    (``nt_any`` in, the caller's :func:`_sfence`).  Called by the FP32 row loops for each row right after its
    pass (:func:`_fp16x_rows`, :func:`_fp8_rows`), while its keys are in L1: finishing a block of rows
    after all its passes cost FP16 GroupN 8 +20..+33% against +3..+9% (Zen 4, one thread, 4096 x 4096,
    blocks of 8-32 rows; docs/performance.md, stop 42)."""
    if (f_or & _GMO_BITS) != 0:
        # the row's pass wrote each group's GroupMaxOut bits to gk (no rare source, every group a
        # number: _GMO_BITS): stored as they are; the row's maximum bits in row_out[i] already (_fp8_rows)
        f_or ^= _GMO_BITS
        gb_ = _borrow(group_out, i * ng, i * ng + ng)
        if 0 < group_n <= 16:  # whole 64-byte lines non-temporal, as below
            nt_any = _store_lines_nt(gb_, gk, ng) or nt_any
        else:
            for g in range(ng):
                gb_[g] = gk[g]
        if row_en:
            rb = np.int64(row_out[i])
            if has_init:
                rb, f2 = _step(np.int64(init[i]), rb, red_t, max_abs)
                f_or |= f2
            row_out[i] = rb
    else:
        # every group's bits from its key maximum (select-only: the loop vectorizes), then the
        # NaN rules for the groups that saw an sNaN or no number (only after a rare source)
        kr = np.uint32(0)
        kmin = np.uint32(0xFFFFFFFF)
        sr = np.uint32(0)
        rare = gs[0] != _GS_CLEAN  # the row's gs entries written (_redo_rare), else none read
        if rare:
            for g in range(ng):
                sr = np.uint32(sr | gs[g])
        gb_ = _borrow(group_out, i * ng, i * ng + ng) if group_n > 0 else _borrow(group_out, 0, 0)
        if 0 < group_n <= 16:
            # GroupN 8/16 (GroupMaxOut 8/4 MiB on a 4096 x 4096 tile): GroupMaxOut's whole 64-byte lines
            # by non-temporal stores (no read for ownership) as each sixteen groups' bits are made, the
            # partial head and tail lines as usual (_gmo_bits_nt).  GroupN 32 and more: ordinary stores
            # (the non-temporal form measured no better there, ab.py)
            kr, kmin, made = _gmo_bits_nt(gb_, gk, ng)
            nt_any = made or nt_any
        else:
            for g in range(ng):
                kg = gk[g]
                if group_n > 0:
                    gb_[g] = _key_bits(kg)
                kr = max(kr, kg)
                kmin = min(kmin, kg)
        if sr != np.uint32(0) or kmin == np.uint32(0):
            if nt_any:
                _sfence()  # the non-temporal stores above before the ordinary ones below (same lines)
            for g in range(ng):
                sg = gs[g] if rare else np.uint32(0)
                if sg != np.uint32(0) or gk[g] == np.uint32(0):
                    if group_n > 0:
                        s0 = g * seg
                        gb, gf = _fold_finish(gk[g], sg, min(s0 + seg, cnt) - s0,
                                              np.int64(acc[base + s0]), max_abs)
                        gb_[g] = gb
                        f_or |= gf
        if row_en:
            rb, rf = _fold_finish(kr, sr, cnt, np.int64(acc[base]), max_abs)
            if has_init:
                rb, f2 = _step(np.int64(init[i]), rb, red_t, max_abs)
                rf |= f2
            row_out[i] = rb
            f_or |= rf
    return f_or, nt_any


@njit
def _tile_rows(i0: int, i1: int, acc: Any, m: int, n: int, total: int, out: Any, fl: Any, want_flags: bool,
               kind: int, fast: int, src: int, relu: int, offw: int, dst: int, mode: int, sat: bool,
               scale: Any, alpha: Any, offs: Any, shifts: Any, qrow: int, qcol: int,
               rrow: int, rcol: int, spec: Any, negzero: int, scale32: Any, alpha32: Any,
               red_t: int, max_abs: bool, row_en: bool, row_out: Any, has_init: bool, init: Any,
               group_n: int, group_out: Any, rowflags: Any, offs_f: Any, blo: Any, bhi: Any, s32p: Any,
               s32rne: int, hif8k: Any) -> None:
    """Rows ``i0 .. i1 - 1`` of :func:`_tile_kernel`."""
    fuse = red_t == SRC_FP32  # RowMax/GroupMax of the FP32 row loops: their own fold pass
    absm = np.uint32(0x7FFFFFFF) if max_abs else np.uint32(0xFFFFFFFF)
    # the FP32 row loops' fold buffers, once for the block's rows (not two allocations a row): one row's
    # per-group key maxima and sNaN bits, reused row after row (each row finished right after its pass)
    ng_max = (n + group_n - 1) // group_n if group_n > 0 else 1
    ngs = max(ng_max, 1)
    fp8 = fast == 4 or fast == 5
    gk_b = np.empty(ngs, np.uint32)
    # the groups' sNaN bits (0/1): written whole only for a row with a rare source (_redo_rare), so not cleared:
    # the first entry holds _GS_CLEAN before each row's pass, and a row that still has it read none of them
    # (a cleared buffer cost FP16 GroupN 8 ~0.5 instructions an element of memset, and the keys loop a load a group)
    gs_b = np.empty(ngs, np.uint32)
    gs_b[0] = _GS_CLEAN
    # the S32 rows' GroupMax: each group's signed maximum and minimum (_s32_rne_groups)
    s32g_b = np.empty(2 * ng_max if (fast == 7 and group_n > 0) else 2, np.int32)
    # the S32 RNE rows (per-column or one word, GroupMax off or GroupN a multiple of 16): the block's rows
    # segment by segment (_s32_rows_seg), each row finished in the loop below from its entries of s32r
    s32seg = fast == 7 and s32rne > 0 and (group_n <= 0 or group_n % 16 == 0 or group_n == 8)
    s32r = np.empty(5 * (i1 - i0) if s32seg else 5, np.int64)
    if s32seg:
        _s32_rows_seg(fast, i0, i1, acc, n, total, out, qrow, relu, offw, sat, s32p, s32rne,
                      group_n if group_n > 0 else (0 if row_en else -1), max_abs, group_out, s32r)
    if fp8:
        # FP32 -> E4M3/HiF8: the rows' passes (and fold keys) from one loop (no call per row); with RowMax /
        # GroupMax each row finished there too, right after its pass (_fold_row_finish)
        fold5 = fuse and (row_en or group_n > 0)
        if _fp8_rows(fast, i0, i1, acc, n, total, out, scale, alpha, scale32, alpha32, qrow, rrow, relu, sat, spec,
                     absm, fold5, group_n, ngs, gk_b, gs_b, hif8k, rowflags, row_en, row_out, group_out, has_init,
                     init, red_t, max_abs):
            _sfence()  # GroupMaxOut's non-temporal stores ordered before the kernel's end (other threads read it)
        return
    if fast == LANE_BF16 or fast == LANE_FP16:
        # FP32 -> BF16/FP16: the same, by _fp16x_rows
        fold16 = fuse and (row_en or group_n > 0)
        if _fp16x_rows(i0, i1, acc, n, total, out, scale, alpha, scale32, alpha32, qrow, rrow, relu, sat, spec, absm,
                       fold16, group_n, ngs, gk_b, gs_b, fast, rowflags, row_en, row_out, group_out, has_init, init,
                       red_t, max_abs):
            _sfence()  # as above
        return
    for i in range(i0, i1):
        base = i * n
        cnt = min(n, total - base)
        if fast == 7:  # S32 offset modes: RowMax and GroupMax folded into the element pass
            if s32seg:
                r5 = 5 * (i - i0)
                f_or, rb, rf = _s32_seg_finish(_borrow(out, base, base + cnt), cnt, dst, s32r[r5], s32r[r5 + 1],
                                               np.int32(s32r[r5 + 2]), np.int32(s32r[r5 + 3]), max_abs)
                f_or |= s32r[r5 + 4]
            else:
                gn = group_n if group_n > 0 else 0
                f_or, rb, rf = _s32_rows(fast, acc, base, cnt, out, fl, want_flags, i * qrow, relu, offw, dst, mode,
                                         sat, scale, alpha, offs, offs_f, blo, bhi, s32p, s32rne, max_abs, gn,
                                         group_out, i * ((cnt + group_n - 1) // group_n) if group_n > 0 else 0,
                                         s32g_b)
            if row_en:
                f_or |= rf
                if has_init:
                    rb, f2 = _step(np.int64(init[i]), rb, red_t, max_abs)
                    f_or |= f2
                row_out[i] = rb
            rowflags[i] = f_or
            continue
        if fast == 3:
            f_or, _, _ = _s32_rows(fast, acc, base, cnt, out, fl, want_flags, i * qrow, relu, offw, dst, mode, sat,
                                   scale, alpha, offs, offs_f, blo, bhi, s32p, s32rne, max_abs, 0, group_out, 0, s32g_b)
        elif fast == 2:
            f_or = _row_float(acc, base, cnt, out, i, relu, dst, mode, sat, scale, alpha,
                              qrow, rrow, spec, negzero)
        else:
            f_or = _row_general(acc, base, cnt, out, fl, want_flags, i, kind, src, relu, offw, dst,
                                mode, sat, scale, alpha, offs, shifts, qrow, qcol, rrow, rcol, spec,
                                negzero)
        if row_en:
            rb, rf = _fold_group(acc, base, base + cnt, red_t, max_abs)
            if has_init:
                rb, f2 = _step(np.int64(init[i]), rb, red_t, max_abs)
                rf |= f2
            row_out[i] = rb
            f_or |= rf
        if group_n > 0:
            g = 0
            for s in range(0, cnt, group_n):
                gb, gf = _fold_group(acc, base + s, base + min(s + group_n, cnt), red_t, max_abs)
                group_out[i * ((cnt + group_n - 1) // group_n) + g] = gb
                f_or |= gf
                g += 1
        rowflags[i] = f_or


@njit(parallel=True)
def _encode_kernel(v: Any, dst: int, mode: int, sat: bool, out: Any, fl: Any, chunk: int) -> int:
    """encode_fast over a flat float64 array; returns the first non-finite index or -1."""
    total = v.size
    nchunks = (total + chunk - 1) // chunk
    bad = np.full(max(nchunks, 1), -1, np.int64)
    for c in prange(nchunks):
        start = c * chunk
        stop = min(total, start + chunk)
        for k in range(start, stop):
            x = v[k]
            if not math.isfinite(x):
                if bad[c] < 0:
                    bad[c] = k
                out[k] = 0
                fl[k] = 0
                continue
            b, f = _encode_value(x, dst, mode, sat)
            out[k] = b
            fl[k] = f
    for c in range(nchunks):
        if bad[c] >= 0:
            return bad[c]
    return -1


@njit
def _step_kernel(cur: Any, cand: Any, t: int, max_abs: bool, out: Any, fl: Any) -> None:
    for k in range(cur.size):
        b, f = _step(np.int64(cur[k]), np.int64(cand[k]), t, max_abs)
        out[k] = b
        fl[k] = f


# ---------------------------------------------------------------------------
# Python drivers


_EMPTY_F64 = np.zeros(1, np.float64)
_EMPTY_F32 = np.zeros(1, np.float32)
_EMPTY_I64 = np.zeros(1, np.int64)
# stand-ins for the optional outputs/inputs a call does not have (the kernel never touches them then)
_UNUSED_U8 = np.zeros(1, np.uint8)
_UNUSED_U32 = np.zeros(1, np.uint32)
_UNUSED_U16 = np.zeros(1, np.uint16)
#: the ``hif8k`` argument of :func:`_tile_kernel` for every mode but HiF8: read only like the HiF8 key table
#: (:func:`hif8_key_table`), so that it has the same numba type and a HiF8 call shares the compiled
#: specialization of the other 8-bit destinations (the one :func:`compile_all` compiles)
_NO_HIF8_KEYS = np.zeros(1, np.uint16)
_NO_HIF8_KEYS.setflags(write=False)
_UNUSED_I32 = np.zeros((5, 1), np.int32)

_HIF8_KEY_TABLES: Dict[bool, np.ndarray] = {}


def hif8_key_table(sat: bool) -> np.ndarray:
    """The HiF8 key table of the FP32 -> HiF8 tile loop (QF322HIF8_PRE/VQF322HIF8_PRE, RHB):
    uint16[2^16], entry u (a key of :func:`_hif8_key`: a product rounded to odd onto 16 bits)
    the HiF8 code of the float32 value of bits u << 16 (low byte) | its flags (NX, UF, OF) << 8,
    from the exact encoder :func:`_encode_hif8` (``sat``: +-Inf or +-32768 on overflow); 0x8000 for
    a NaN/Inf key.  Built once per ``sat`` (a few ms compiled) and kept; read only.

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal`` / ``ReferenceMatrixFloatingEncoding`` (HiF8, RHB).
    """
    t = _HIF8_KEY_TABLES.get(sat)
    if t is None:
        t = np.empty(HIF8_KEYS, np.uint16)
        _hif8_fill_keys(t, sat)
        t.setflags(write=False)
        t = _HIF8_KEY_TABLES.setdefault(sat, t)
    return t
_SPECIALS: Dict[Tuple[int, ...], np.ndarray] = {}  # cfg.special -> int64 array (read-only use)


def _fp19_f64(words: np.ndarray, shift: int) -> np.ndarray:
    """The FP19 field ``[shift+18:shift]`` of each word as float64 (exact).

    FP19 is the top 19 bits of FP32 (same sign, 8-bit exponent with bias 127,
    10 fraction bits; ADR-0085 D180), so widening by 13 zero bits gives the
    FP32 encoding of the same value (``ptonum.fp19.to_fp32_bits``).
    """
    f32 = (((words >> np.uint64(shift)) & np.uint64(0x7FFFF)) << np.uint64(13)).astype(np.uint32)
    return f32.view(np.float32).astype(np.float64).reshape(-1)


_CONSTANT_ROWS: Dict[Tuple[int, str, bytes], np.ndarray] = {}


def _constant_row(n: int, one: np.ndarray) -> np.ndarray:
    """``n`` copies of the one element of ``one``, kept for the next call with the same ``n`` and value
    (a handful of rows: a call's scalar parameters).  The kernel only reads parameter rows."""
    key = (n, one.dtype.char, one.tobytes())
    row = _CONSTANT_ROWS.get(key)
    if row is None:
        if len(_CONSTANT_ROWS) >= 64:
            _CONSTANT_ROWS.clear()
        row = _CONSTANT_ROWS.setdefault(key, np.full(n, one[0]))
    return row


def _aligned_rows(k: int, size: int) -> Tuple[np.ndarray, ...]:
    """``k`` uninitialised float64 arrays of ``size`` elements cut from one buffer, each starting on a
    64-byte boundary (numpy guarantees 16): the S32 loop reads them with 32-byte vector loads, and an
    aligned row never has a load straddle two cache lines."""
    stride = -(-size // 8) * 8  # elements per row, a multiple of 64 bytes
    buf = np.empty(k * stride + 8, np.float64)
    start = (-buf.ctypes.data % 64) // 8
    return tuple(buf[start + i * stride:start + i * stride + size] for i in range(k))


def _aligned_int32_rows(k: int, size: int) -> np.ndarray:
    """An uninitialised C-contiguous int32 array of ``k`` rows of at least ``size`` (a multiple of 16), each
    row starting on a 64-byte boundary."""
    stride = -(-size // 16) * 16
    buf = np.empty(k * stride + 16, np.int32)
    start = (-buf.ctypes.data % 64) // 4
    return buf[start:start + k * stride].reshape(k, stride)  # C-contiguous; only [:, :size] is used


def _param_layout(words: np.ndarray, m: int, n: int, per_element: bool) -> Tuple[np.ndarray, int, int]:
    """Flatten a parameter-word array and give its (row stride, column stride)."""
    flat = np.ascontiguousarray(words, dtype=np.uint64).reshape(-1)
    if flat.size == 1:
        return flat, 0, 0
    if per_element:
        return flat, n, 1
    return flat, 0, 1


def _derive_params(cfg: tables.TileKernelConfig, q: np.ndarray, r: np.ndarray, m: int, n: int, per_element: bool,
                   want_flags: bool, red_type: Optional[Any]) -> Tuple[Any, ...]:
    """The configuration and parameter arguments of :func:`_tile_kernel` (``kind`` .. ``red_t``, and
    ``offs_f, blo, bhi, s32p, s32rne, hif8k``), derived from the kernel config and the parameter words
    ``q``/``r``."""
    dst = cfg.dst_code
    src = cfg.src_code
    relu = cfg.relu
    mode = cfg.rmode
    sat = cfg.sat
    scale: Any
    alpha: Any
    offs: Any
    shifts: Any
    scale, alpha, offs, shifts = _EMPTY_F64, _EMPTY_F64, _EMPTY_I64, _EMPTY_I64
    qrow = qcol = rrow = rcol = 0
    offw = cfg.offset_width
    kind = cfg.kind
    if kind == KIND_SHIFT:
        qf, qrow, qcol = _param_layout(q, m, n, per_element)
        shifts = ((qf >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1
    elif kind == KIND_GENERAL:
        if cfg.has_parameter:
            qf, qrow, qcol = _param_layout(q, m, n, per_element)
            scale = _fp19_f64(qf, 13)
            if offw:
                raw = ((qf >> np.uint64(37)) & np.uint64((1 << offw) - 1)).astype(np.int64)
                offs = np.where(raw >= (1 << (offw - 1)), raw - (1 << offw), raw).astype(np.int64)
            else:
                offs = np.zeros(scale.shape, np.int64)
        else:
            scale = np.ones(1, np.float64)
            offs = np.zeros(1, np.int64)
        if relu >= 2:
            rf, rrow, rcol = _param_layout(r, m, n, per_element)
            alpha = _fp19_f64(rf, 0)
    spec = _SPECIALS.get(cfg.special)
    if spec is None:
        spec = _SPECIALS.setdefault(cfg.special, np.array(cfg.special, np.int64))
    negzero = cfg.negative_zero
    fast = 0
    if kind == KIND_GENERAL and src == SRC_FP32 and offw == 0 and not want_flags \
            and dst in (D_FP32, D_FP16, D_BF16, D_E4M3, D_HIF8):
        fast = 2
        if dst == D_BF16 and mode == R_RNE and relu in (0, 1) and np.all(scale == 1.0):
            fast = 1
        elif dst == D_FP16 and mode == R_RNE and relu in (0, 1) and np.all(scale == 1.0):
            fast = 6
        elif dst == D_E4M3 and mode == R_RNE:
            fast = 4
        elif dst == D_HIF8 and mode == R_RHB:
            fast = 5
    if kind == KIND_GENERAL and src == SRC_S32 and offw > 0 and (relu < 2 or rrow == qrow):
        fast = 3
        if not want_flags and (red_type is None or tables.KERNEL_ACC[red_type] == SRC_S32):
            fast = 7
    offs_f, blo, bhi = _EMPTY_F64, _EMPTY_F64, _EMPTY_F64
    s32p, s32rne = _UNUSED_I32, 0
    if fast == 7 and mode == R_RNE and relu < 2:
        # 32-bit lanes (_s32_rne_lane) when every |multiplier| < 1: five int32 rows, 64-byte aligned
        # (the NX mask of each multiplier, the offset, the fused bounds of r + offset and the multiplier
        # as float32 bits: no 64-bit load in the loop, so LLVM vectorizes it 8 lanes wide)
        dfacts = tables.DESTINATIONS[cfg.dst]
        s32p = _aligned_int32_rows(5, scale.size)
        if _s32_param_kernel(scale, offs, 1 << (offw - 1), int(dfacts.minimum), int(dfacts.maximum), s32p):
            s32rne = 2 if scale.size == 1 else 1
        else:
            s32p = _UNUSED_I32
    if fast == 7 and s32rne == 0:
        # the S32 loop reads scale, alpha and the per-column bounds of r + offset
        # (clamp(clamp(r, S5/S9/S17) + offset, destination)) with 32-byte vector loads: one
        # cache-line-aligned buffer, each array written in place (a scalar word: one fill)
        dfacts = tables.DESTINATIONS[cfg.dst]
        lo, hi = float(dfacts.minimum), float(dfacts.maximum)
        half = float(1 << (offw - 1))
        size = max(n, scale.size, alpha.size)
        sc_a, al_a, offs_f, blo, bhi = _aligned_rows(5, size)
        for dst_a, src_a in ((sc_a, scale), (al_a, alpha)):
            if src_a.size == 1:
                dst_a.fill(src_a[0])
            else:
                dst_a[...] = src_a
        scale, alpha = sc_a, al_a
        if offs.size == 1:
            o = float(offs[0])
            offs_f.fill(o)
            blo.fill(max(o - half, lo))
            bhi.fill(min(o + (half - 1.0), hi))
        else:
            offs_f[...] = offs
            np.maximum(np.subtract(offs_f, half, out=blo), lo, out=blo)
            np.minimum(np.add(offs_f, half - 1.0, out=bhi), hi, out=bhi)
    # every parameter array indexed [row stride * i + j]: one scalar word becomes a row of copies
    scale, offs, shifts, alpha = (_constant_row(n, arr) if arr.size == 1 else arr
                                  for arr in (scale, offs, shifts, alpha))
    red_t = tables.KERNEL_ACC[red_type] if red_type is not None else 0
    # FP19 multipliers are exact in float32: the FP32 -> E4M3/HiF8 loops work on 8 float32 lanes
    scale32 = scale.astype(np.float32) if fast in (4, 5) else _EMPTY_F32
    alpha32 = alpha.astype(np.float32) if fast in (4, 5) else _EMPTY_F32
    if fast in (4, 5) and relu < 2:
        # the E4M3/HiF8 loops read the multiplier of a negative source as an array laid out like the
        # scale: the scale itself (ReluMode NONE) or 0 (RELU); alpha is not read then
        alpha, rrow, rcol = scale, qrow, qcol
        alpha32 = scale32 if relu == 0 else np.zeros_like(scale32)
    return ((kind, fast, src, relu, offw, dst, mode, sat, scale, alpha, offs, shifts, qrow, qcol, rrow, rcol, spec,
             negzero, scale32, alpha32, red_t),
            (offs_f, blo, bhi, s32p, s32rne, hif8_key_table(bool(sat)) if fast == 5 else _NO_HIF8_KEYS))


#: derived kernel parameters of recent calls: (config, words...) -> (vector words' bytes, parameters)
_PARAMS: Dict[Tuple[Any, ...], Tuple[bytes, bytes, Tuple[Any, ...]]] = {}
_PARAMS_KEEP = 16  # entries kept (a handful of configurations and parameter tiles in use at a time)
_PARAMS_MAX_WORDS = 1 << 16  # vector parameter tiles up to this many words are kept (a few MiB at most)


def _tile_params(cfg: tables.TileKernelConfig, q: np.ndarray, r: np.ndarray, m: int, n: int, per_element: bool,
                 want_flags: bool, red_type: Optional[Any]) -> Tuple[Any, ...]:
    """:func:`_derive_params`, kept for the next call with the same configuration and words.

    A tile call's parameter rows (FP19 scale/alpha as float64/float32, offsets, the S32 loop's
    aligned bound rows) depend only on the configuration and the parameter words, so a repeated
    call (same scalar word, or a vector tile with the same words, compared byte for byte) reuses
    them instead of re-deriving up to ten arrays of ``n`` elements.  The kernel only reads them.
    Per-element words (``per_element``, whose rows depend on ``m``) and very wide vector tiles are not kept.
    """
    if per_element or q.size > _PARAMS_MAX_WORDS or r.size > _PARAMS_MAX_WORDS:
        return _derive_params(cfg, q, r, m, n, per_element, want_flags, red_type)
    qs = int(q.reshape(-1)[0]) if q.size == 1 else -1
    rs = int(r.reshape(-1)[0]) if r.size == 1 else -1
    key = (cfg, n, want_flags, red_type, q.size, qs, r.size, rs)
    qb = q.tobytes() if qs < 0 else b""
    rb = r.tobytes() if rs < 0 else b""
    hit = _PARAMS.get(key)
    if hit is not None and hit[0] == qb and hit[1] == rb:
        return hit[2]
    params = _derive_params(cfg, q, r, m, n, per_element, want_flags, red_type)
    if len(_PARAMS) >= _PARAMS_KEEP:
        try:
            del _PARAMS[next(iter(_PARAMS))]  # the oldest
        except (KeyError, StopIteration, RuntimeError):  # pragma: no cover - another thread got there first
            pass
    _PARAMS[key] = (qb, rb, params)
    return params


def run_tile(acc: np.ndarray, *, m: int, n: int, cfg: tables.TileKernelConfig, qp: Any, rp: Any, out: np.ndarray,
             flags_out: Optional[np.ndarray] = None, per_element: bool = False,
             red_type: Optional[Any] = None, max_abs: bool = False,
             row_out: Optional[np.ndarray] = None, init: Optional[np.ndarray] = None,
             group_n: int = 0, group_out: Optional[np.ndarray] = None,
             row_flags: Optional[np.ndarray] = None, kept_params: Optional[Dict[Any, Any]] = None) -> int:
    """Run the fused element pipeline (and folds) over ``acc``; returns the OR of all flags.

    ``acc``: flat C-contiguous uint32 accumulator bits, ``m`` rows of ``n``
    (the last row may be partial).  ``cfg``: a :class:`ptonum.tables.TileKernelConfig`.
    ``qp``/``rp``: uint64 parameter words, one word (scalar), ``n`` words (one per
    column) or, with ``per_element``, one per element.  ``out``: flat output bits
    (uint8/uint16/uint32), ``flags_out``: flat uint8 per-element flags or None.
    Reductions (tile only): ``red_type`` (accumulator TileDataType), ``row_out``
    uint32[m], ``init`` uint32[m] or None, ``group_n`` and ``group_out``
    uint32[m * ceil(n / group_n)].  ``row_flags``: optional uint8[m] that receives each row's OR of
    flags (element and reduction flags).  ``kept_params``: a dict the caller keeps with words it guarantees unchanged across calls
    (a kept tile plan's private words): the derived parameter rows are kept there, and nothing is
    compared; without it they are kept in a module table after comparing the words' bytes.
    Validation is the caller's job.

    Source: ADR-0085 D175-D181; ``TileProfileMatrixPostProcessWithFlags``, ``MatrixRowMaxResult``,
    ``MatrixGroupMaxResult``.
    """
    q = np.asarray(qp, dtype=np.uint64)
    r = np.asarray(rp, dtype=np.uint64)
    want_flags = flags_out is not None
    if kept_params is not None and not per_element:
        key = (cfg, n, want_flags, red_type)
        kept = kept_params.get(key)
        if kept is None:
            kept = kept_params[key] = _derive_params(cfg, q, r, m, n, per_element, want_flags, red_type)
        head, bounds = kept
    else:
        head, bounds = _tile_params(cfg, q, r, m, n, per_element, want_flags, red_type)
    # the caller's arrays in kernel form (the parameter rows above are made here and already are)
    acc, out = kernel_array(acc), kernel_array(out)
    fl = kernel_array(flags_out) if flags_out is not None else _UNUSED_U8
    ro = kernel_array(row_out) if row_out is not None else _UNUSED_U32
    ini = kernel_array(init) if init is not None else _UNUSED_U32
    go = kernel_array(group_out) if group_out is not None else _UNUSED_U32
    rowflags = kernel_array(row_flags) if row_flags is not None else np.zeros(max(m, 1), np.uint8)
    launch_ready(_tile_kernel, acc, m, n, acc.size, out, fl, want_flags, *head, bool(max_abs), row_out is not None,
                 ro, init is not None, ini, int(group_n) if group_out is not None else 0, go, rowflags, *bounds,
                 MAX_THREADS, max(1, TILE_BLOCK_ELEMENTS // max(n, 1)), np.zeros(1, np.int64))
    return int(np.bitwise_or.reduce(rowflags)) & _ALL_FLAGS


def encode_values(v: np.ndarray, dst: Any, mode: int, sat: bool) -> Tuple[np.ndarray, np.ndarray, int]:
    """Kernel form of ``ptonum.encode.encode_fast`` on a float64 array.

    ``dst``: the destination TileDataType.  Returns ``(bits, flags, bad)`` flat
    arrays (bits uint8/uint16/uint32, flags uint8) and the flat index of the
    first non-finite element (-1 if none).

    Source: ADR-0085 D177/D178; ``MatrixEncodeReal``.
    """
    flat = np.ascontiguousarray(v, dtype=np.float64).reshape(-1)
    out = np.empty(flat.size, tables.DESTINATIONS[dst].carrier)
    fl = np.empty(flat.size, np.uint8)
    bad = int(launch(_encode_kernel, flat, tables.KERNEL_DST[dst], int(mode), bool(sat), out, fl, 1 << 14))
    return out, fl, bad


def reduction_step_values(cur: np.ndarray, cand: np.ndarray, acc_type: Any, max_abs: bool
                          ) -> Tuple[np.ndarray, np.ndarray]:
    """Kernel form of one reduction step over flat uint32 arrays (same length); ``acc_type`` a TileDataType
    (or its name).

    Source: ADR-0085 D175; ``TileProfileMatrixReductionStepWithFlags``.
    """
    t = tables.KERNEL_ACC[tables.TileDataType[acc_type] if isinstance(acc_type, str) else acc_type]
    c = np.ascontiguousarray(cur, dtype=np.uint32).reshape(-1)
    d = np.ascontiguousarray(cand, dtype=np.uint32).reshape(-1)
    out = np.empty(c.size, np.uint32)
    fl = np.empty(c.size, np.uint8)
    launch(_step_kernel, c, d, t, bool(max_abs), out, fl)
    return out, fl


def compile_all() -> float:
    """Compile (or load from cache) every kernel specialization; returns seconds taken.

    Source: no spec counterpart (compilation helper).
    """
    import time

    T = tables.TileDataType
    t0 = time.perf_counter()
    acc = np.zeros(4, np.uint32)
    for dst, src, dt in ((T.S8, T.S32, np.uint8), (T.FP16, T.FP32, np.uint16), (T.FP32, T.FP32, np.uint32)):
        cfg = tables.TileKernelConfig(
            kind=KIND_GENERAL, dst=dst, dst_code=tables.KERNEL_DST[dst], src_code=tables.KERNEL_ACC[src],
            relu=0, rmode=R_RNE, sat=False, offset_width=0, has_parameter=True, special=(0,) * 8,
            negative_zero=-1)
        run_tile(acc, m=1, n=4, cfg=cfg, qp=np.uint64(0x3F800000), rp=np.uint64(0),
                 out=np.empty(4, dt), flags_out=np.empty(4, np.uint8), red_type=T.FP32,
                 row_out=np.empty(1, np.uint32))
    _s32_param_kernel(np.ones(1), np.zeros(1, np.int64), 256, -128, 127, _aligned_int32_rows(5, 1))
    encode_values(np.zeros(2), T.S8, 1, False)
    encode_values(np.zeros(2), T.FP16, 1, False)
    encode_values(np.zeros(2), T.FP32, 1, False)
    reduction_step_values(acc, acc, T.FP32, False)
    return time.perf_counter() - t0
