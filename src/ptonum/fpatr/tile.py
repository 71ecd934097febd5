"""The complete B.FPATR tile operation: preflight, PreQuant/activation, RowMax/GroupMax, atomic commit.

Source: ADR-0085 decisions 175 (reductions read the raw accumulator; PreQuant
and activation convert only D), 176-180 (element semantics, owned by
:mod:`ptonum.fpatr.element`) and 181 (output carriers, S4X2 nibble order, one
atomic publication of D, RowMaxOut, GroupMaxOut and the sticky status).
Executable owners in pto-spec:

* ``CommitMatrixResult``, ``MatrixPostProcessResult``, ``MatrixRowMaxResult``,
  ``MatrixGroupMaxResult`` (``asl/tile/model/execution/postprocess.asl``);
* the preflight ``BundleMatrixPostProcessSourcesLegal``,
  ``TileMatrixAuxiliarySourceSchemaLegal``, ``TileMatrixVectorQuantContentsLegal``,
  ``TileMatrixVectorReluContentsLegal``
  (``asl/tile/model/legality/matrix-postprocess.asl``), with the field,
  B.DATR and accumulator rules of ``asl/block/attributes/B.FPATR.asl`` and the
  scalar-word rules of the B.IOR scalar schema.

Parameter routing (our words): a vector PreQuant mode reads the quantization
word of destination column ``c`` from element ``(0, c)`` of a 1 x N U64 tile; a
scalar mode reads one word from the B.IOR stream; a mode without parameter
passes the word 1 (unused).  ReluMode 3 reads the FP19 activation word of column
``c`` from a second 1 x N U64 tile, ReluMode 2 one scalar word.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

import numpy as np

from .. import engines
from .._util import Engine, as_bits, check_bool, check_engine, count_text, native, scalar_int, unmasked
from ..errors import TileLegalityError, UsageError
from ..flags import StatusRegister, flag_names
from ..formats import TileDataType, parse_data_type
from ..rounding import RoundingMode, parse_rounding_mode
from .attributes import (
    FPATRAttributes,
    check_accumulator_type,
    check_datr_resolved,
    check_fields,
    resolved_control,
)
from .element import ElementConfig, compute_elements, destination_dtype, resolve_element_config
from .params import ParamWord, ParamWordLike, check_quant_param, check_relu_param
from .reduction import combine_partials, fold_groups

__all__ = [
    "PostprocessResult",
    "postprocess",
    "BLOCK_ELEMENTS",
    "TilePlan",
    "TileOutputs",
    "preflight",
    "preflight_shape",
    "accumulator_bits",
    "compute",
    "join_rows",
    "join_columns",
    "commit",
    "typed_view",
    "decode_bits",
    "pack_s4x2",
    "release_output_buffers",
]

#: Target number of accumulator elements per row block of the fast engine.
BLOCK_ELEMENTS = 1 << 20

_ACC_VALUE_DTYPE = {
    TileDataType.FP32: np.dtype(np.float32),
    TileDataType.S32: np.dtype(np.int32),
    TileDataType.U32: np.dtype(np.uint32),
}
_RULE_SCHEMA = "ADR-0085 D181, TileMatrixAuxiliarySourceSchemaLegal"
#: the ADR-0085 decision that makes each optional operand exist (with the ASL source-schema check)
_RULE_SOURCES = {
    "quant_param": "ADR-0085 D177/D179, BundleMatrixPostProcessSourcesLegal",
    "quant_tile": "ADR-0085 D177/D179, BundleMatrixPostProcessSourcesLegal",
    "relu_param": "ADR-0085 D176, BundleMatrixPostProcessSourcesLegal",
    "relu_tile": "ADR-0085 D176, BundleMatrixPostProcessSourcesLegal",
    "row_max_in": "ADR-0085 D175, BundleMatrixPostProcessSourcesLegal",
}


# ---------------------------------------------------------------------------
# Result


#: the carrier dtype of each B.FPATR destination and accumulator type (what typed_view/decode_bits read)
_CARRIER: Dict[TileDataType, Any] = {
    TileDataType.FP32: np.dtype(np.uint32), TileDataType.S32: np.dtype(np.uint32), TileDataType.U32: np.dtype(np.uint32),
    TileDataType.FP16: np.dtype(np.uint16), TileDataType.BF16: np.dtype(np.uint16), TileDataType.S16: np.dtype(np.uint16),
    TileDataType.S8: np.dtype(np.uint8), TileDataType.E4M3: np.dtype(np.uint8), TileDataType.HiF8: np.dtype(np.uint8),
    TileDataType.S4X2: np.dtype(np.uint8),
}


def _carrier_bits(bits: Any, t: Any) -> Tuple[np.ndarray, TileDataType]:
    """``(bits, t)`` checked: ``t`` a B.FPATR destination/accumulator type (member, name or code), ``bits``
    its encodings in the carrier dtype (an array already in it is not copied; an S4X2 element is a nibble)."""
    tt = t if isinstance(t, TileDataType) else parse_data_type(t, "t")
    carrier = _CARRIER.get(tt)
    if carrier is None:
        raise UsageError(f"t = {tt.name}: not a B.FPATR destination or accumulator type (expected one of "
                         f"{', '.join(m.name for m in _CARRIER)}); ptonum.formats.to_float64 decodes every Tile DataType")
    width = 4 if tt is TileDataType.S4X2 else carrier.itemsize * 8
    if type(bits) is np.ndarray and bits.dtype == carrier:
        if width == 4 and bits.size and int(bits.max()) > 0xF:
            as_bits("bits", bits, 4)  # raises naming the first element that is not a nibble
        return bits, tt
    return as_bits("bits", bits, width).astype(carrier), tt


def typed_view(bits: np.ndarray, t: TileDataType) -> np.ndarray:
    """Encodings of Tile DataType ``t`` as numbers: a view as float32/float16/int8/int16/int32/uint32,
    ml_dtypes bfloat16 / float8_e4m3fn; S4X2 (low nibbles) as a new sign-extended read-only int8
    array; HiF8 unchanged (``uint8`` bits: numpy has no HiF8 type, see :func:`decode_bits`).

    ``bits``: the carrier array (uint8/uint16/uint32, any shape; other integer arrays and lists are
    checked and converted); ``t``: a B.FPATR destination or accumulator type (member, name or code).
    Used by :class:`PostprocessResult` and, block by block, by ``ptonum.dask``'s result.  Raises
    :class:`UsageError` for another type or an encoding wider than ``t``.
    Source: ADR-0085 D181 (destination element types).
    """
    bits, t = _carrier_bits(bits, t)
    T = TileDataType
    views: Dict[TileDataType, Any] = {T.FP32: np.float32, T.FP16: np.float16, T.S8: np.int8, T.S16: np.int16,
                                      T.S32: np.int32, T.U32: np.uint32}
    if t in (T.BF16, T.E4M3):  # ml_dtypes only for its types (start-up of a small `ptonum postprocess`)
        import ml_dtypes

        views = {T.BF16: ml_dtypes.bfloat16, T.E4M3: ml_dtypes.float8_e4m3fn}
    if t in views:
        return bits.view(views[t])
    if t is TileDataType.S4X2:
        nib = (bits & np.uint8(0x0F)).astype(np.int8)
        out = np.where(nib >= 8, nib - np.int8(16), nib).astype(np.int8)
        out.flags.writeable = False
        return out
    return bits  # HiF8: no numpy dtype; raw bits (see PostprocessResult.decode)


def decode_bits(bits: np.ndarray, t: TileDataType) -> np.ndarray:
    """Encodings of ``t`` as exact ``float64`` values (±inf/NaN for specials), any shape.

    ``t`` and ``bits`` as for :func:`typed_view` (an unknown type, a type that is not a B.FPATR
    destination or accumulator type, or an encoding wider than ``t`` raises :class:`UsageError`).
    HiF8 goes through :func:`ptonum.formats.to_float64`; every other type converts its
    :func:`typed_view` (exact for all of them).  Source: ADR-0085 D181; the formats' value functions.
    """
    bits, t = _carrier_bits(bits, t)
    if t is TileDataType.HiF8:
        from .. import formats

        to_f64 = getattr(formats, "to_float64")
        return np.asarray(to_f64(TileDataType.HiF8, bits), dtype=np.float64)
    return np.asarray(typed_view(bits, t), dtype=np.float64)


def pack_s4x2(bits: Any) -> Any:
    """Packed S4X2 memory bytes of M x N element nibbles: M x ceil(N/2) ``uint8``.

    Element ``2k`` of a row goes to the low nibble of byte ``k`` and element ``2k+1`` to its
    high nibble; every row starts a new byte; for odd N the last high nibble is 0.  ``bits`` is
    a numpy array, or with an even N any array with numpy's slicing and bit operations (a
    ``dask.array``: the result is one too).

    Source: ADR-0085 D181 with ADR-0033 (nibble order) and ADR-0074 (row restart).
    """
    m, n = bits.shape
    nib = bits & np.uint8(0x0F)
    if n % 2:
        nib = np.concatenate([nib, np.zeros((m, 1), np.uint8)], axis=1)
    return (nib[:, 0::2] | (nib[:, 1::2] << np.uint8(4))).astype(np.uint8)


@dataclass(frozen=True, eq=False)
class PostprocessResult:
    """The atomically published outputs of one B.FPATR tile operation.

    Attributes:
        d_bits: M x N destination encodings at the destination width
            (``uint8`` for S8/S4X2/HiF8/E4M3, ``uint16`` for FP16/BF16/S16,
            ``uint32`` for FP32/S32/U32).  An S4X2 element is its low nibble.
        row_max_bits: M x 1 ``uint32`` RowMaxOut in the accumulator type, or ``None``.
        group_max_bits: M x ceil(N/GroupN) ``uint32`` GroupMaxOut, or ``None``.
        flags: 5-bit OR of every element and reduction step (NV=1 DZ=2 OF=4 UF=8 NX=0x10).
        dst_type: the destination Tile DataType of D.
        acc_type: the accumulator type (type of RowMaxOut/GroupMaxOut).

    Arrays are read-only.  Source: ADR-0085 D181; ``CommitMatrixResult``.
    """

    d_bits: np.ndarray
    row_max_bits: Optional[np.ndarray]
    group_max_bits: Optional[np.ndarray]
    flags: int
    dst_type: TileDataType
    acc_type: TileDataType

    @property
    def d(self) -> np.ndarray:
        """D as numbers: float16/float32/int8/int16/int32/uint32, ml_dtypes bfloat16 /
        float8_e4m3fn; S4X2 as sign-extended int8; HiF8 stays ``uint8`` bits (use :meth:`decode`)."""
        return typed_view(self.d_bits, self.dst_type)

    @property
    def row_max(self) -> Optional[np.ndarray]:
        """RowMaxOut as float32/int32/uint32 (the accumulator type), or ``None``."""
        return None if self.row_max_bits is None else typed_view(self.row_max_bits, self.acc_type)

    @property
    def group_max(self) -> Optional[np.ndarray]:
        """GroupMaxOut as float32/int32/uint32 (the accumulator type), or ``None``."""
        return None if self.group_max_bits is None else typed_view(self.group_max_bits, self.acc_type)

    @property
    def flag_names(self) -> str:
        """``"OF|NX"``-style text of :attr:`flags` (``"-"`` when none)."""
        return flag_names(self.flags)

    def decode(self) -> np.ndarray:
        """D as exact ``float64`` values (±inf/NaN for specials).

        HiF8 goes through :func:`ptonum.formats.to_float64`; every other
        destination converts its typed view :attr:`d` (exact for all of them).
        """
        return decode_bits(self.d_bits, self.dst_type)

    def s4x2_packed(self) -> np.ndarray:
        """Packed S4X2 memory bytes, M x ceil(N/2) ``uint8``.

        Element ``2k`` of a row goes to the low nibble of byte ``k`` and element
        ``2k+1`` to its high nibble; every row starts a new byte; for odd N the
        last high nibble is 0.

        Raises :class:`UsageError` when D is not S4X2.
        Source: ADR-0085 D181 with ADR-0033 (nibble order) and ADR-0074 (row restart).
        """
        if self.dst_type is not TileDataType.S4X2:
            raise UsageError(f"s4x2_packed: the destination is {self.dst_type.name}, not S4X2")
        return np.asarray(pack_s4x2(self.d_bits))


# ---------------------------------------------------------------------------
# Argument normalisation (all before any computation)


#: the named fields ``attributes={...}`` takes (:meth:`FPATRAttributes.from_fields`)
_FIELD_NAMES = ("pre_quant_mode", "relu_mode", "group_n", "group_n_code", "row_max_en", "group_max_en",
                "row_max_init", "max_abs_en", "trans_a", "trans_b")


def _attributes(value: Any) -> FPATRAttributes:
    if isinstance(value, FPATRAttributes):
        return value
    if isinstance(value, Mapping):
        fields = dict(value)
        unknown = sorted(str(k) for k in fields if k not in _FIELD_NAMES)
        if unknown:
            raise UsageError(f"attributes: unknown field {unknown[0]!r}; the fields are {', '.join(_FIELD_NAMES)}")
        return FPATRAttributes.from_fields(**fields)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return FPATRAttributes.from_word(int(value))
    raise UsageError(
        f"attributes = {value!r}: expected an FPATRAttributes, a 32-bit B.FPATR word or a dict of named fields"
    )


def _asarray(name: str, value: Any) -> np.ndarray:
    if isinstance(value, (bool, np.bool_)):
        raise UsageError(f"{name} = {value!r}: expected an array, got a boolean")
    value = unmasked(name, value)
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{name}: cannot be read as an array ({exc})") from None
    return native(arr)


def _int_bits(name: str, arr: np.ndarray, width: int, signed: bool = False) -> np.ndarray:
    """Raw encodings in an integer (or object-int) array -> uint32/uint64, checked, minimal copies.

    With ``signed`` (an S32 accumulator or RowMaxIn), negative values from -2^(width-1) on are
    signed values and become their two's-complement encodings.
    """
    out_dtype = np.uint32 if width == 32 else np.uint64
    if signed and arr.dtype.kind == "i" and arr.size and int(arr.min()) < 0:
        low = -(1 << (width - 1))
        if int(arr.min()) >= low:
            return _int_bits(name, (arr.astype(np.int64) & ((1 << width) - 1)), width)
        pos: Tuple[int, ...] = tuple(int(i) for i in np.argwhere(arr < low)[0])
        where = f"[{', '.join(map(str, pos))}]" if arr.ndim else ""
        raise UsageError(f"{name}{where} = {int(arr[pos])}: below the S{width} minimum {low}")
    if arr.dtype == object:
        flat = arr.ravel()
        vals = []
        for i, v in enumerate(flat):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                idx = np.unravel_index(i, arr.shape) if arr.ndim else ()
                raise UsageError(f"{name}[{', '.join(map(str, idx))}] = {v!r}: expected an integer encoding")
            iv = int(v)
            if iv < 0 or iv >> width:
                idx = np.unravel_index(i, arr.shape) if arr.ndim else ()
                raise UsageError(f"{name}[{', '.join(map(str, idx))}] = {iv:#x}: does not fit in {width} bits")
            vals.append(iv)
        return np.array(vals, dtype=out_dtype).reshape(arr.shape)
    if arr.dtype.kind not in "iu":
        raise UsageError(f"{name}: expected integer encodings (a uint/int array), got dtype {arr.dtype}")
    if arr.size and not (arr.dtype.kind == "u" and arr.dtype.itemsize * 8 <= width):  # narrow unsigned always fits
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >> width:
            if arr.dtype.kind == "i":
                bad = (arr < 0) | ((arr.astype(np.int64) >> min(width, 63)) != 0) if width < 64 else arr < 0
            else:
                bad = (arr.astype(np.uint64) >> np.uint64(width)) != 0
            at: Tuple[int, ...] = tuple(int(i) for i in np.argwhere(bad)[0])
            where = f"[{', '.join(map(str, at))}]" if arr.ndim else ""
            v = int(arr[at])
            if v < 0:
                raise UsageError(f"{name}{where} = {v}: a raw {width}-bit encoding is never negative "
                                 "(signed values are accepted for an S32 accumulator only)")
            raise UsageError(f"{name}{where} = {v:#x}: does not fit in {width} bits")
    if arr.dtype == out_dtype:
        return arr
    return arr.astype(out_dtype)


def _accumulator_type(dtype: np.dtype, acc_type: Any) -> TileDataType:
    """The accumulator type that ``dtype`` data with the given ``acc_type`` argument is (dtype checks only)."""
    given = None if acc_type is None else parse_data_type(acc_type, "acc_type")
    if given is not None and given not in (TileDataType.FP32, TileDataType.S32, TileDataType.U32):
        raise TileLegalityError(f"acc_type = {given.name}: not an accumulator type; B.FPATR accumulators are FP32, "
                                "S32 or U32 (ADR-0085 D179, BundleFPATRAccumulatorTypeLegal)")
    if dtype == np.float32:
        if given is not None and given is not TileDataType.FP32:
            raise UsageError(f"acc: float32 values are an FP32 accumulator, but acc_type = {given.name}")
        return TileDataType.FP32
    if dtype == np.int32:
        if given is not None and given is not TileDataType.S32:
            raise UsageError(f"acc: int32 values are an S32 accumulator, but acc_type = {given.name}")
        return TileDataType.S32
    if dtype.kind not in "iu":  # float64/float16, and bool, complex, text, dates, records: no accumulator
        raise UsageError(
            f"acc: dtype {dtype} is not an accumulator; pass float32 values (FP32), int32 (S32) "
            "or raw 32-bit encodings with acc_type"
        )
    if given is None:
        raise UsageError(
            f"acc: dtype {dtype} holds raw encodings; give acc_type (FP32, S32 or U32) "
            "or pass float32 / int32 values"
            + (" (a list of Python ints is int64: np.asarray(acc, np.int32) makes S32 values)"
               if dtype == np.int64 else "")
        )
    return given


def _check_acc_shape(shape: Tuple[int, ...]) -> Tuple[int, int]:
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        raise UsageError(f"acc: expected a 2-D M x N accumulator with M, N >= 1, got shape {tuple(shape)}")
    return int(shape[0]), int(shape[1])


def _acc_bits(arr: np.ndarray, t: TileDataType) -> np.ndarray:
    """Accumulator data already typed by :func:`_accumulator_type` -> uint32 bits (no copy when possible)."""
    if arr.dtype == np.float32 or arr.dtype == np.int32:
        return arr.view(np.uint32)
    return _int_bits("acc", arr, 32, signed=t is TileDataType.S32)


def accumulator_bits(acc: Any, acc_type: Any = None) -> Tuple[np.ndarray, TileDataType]:
    """The raw ``uint32`` bits and accumulator type of accumulator data.

    ``acc``: ``float32`` values (FP32), ``int32`` values (S32) or raw 32-bit
    encodings in any integer dtype together with ``acc_type``; any shape (the
    tile operation requires 2-D; a chunk of a larger tile is fine here).
    Returns ``(bits, acc_type)``; ``bits`` is a view of ``acc`` when it already
    is ``float32``/``int32``/``uint32``.

    Raises :class:`UsageError` for a non-accumulator dtype, an ``acc_type``
    that contradicts the dtype, a missing ``acc_type`` for raw encodings, or a
    raw element that is not a 32-bit pattern (named by its index in ``acc``).

    Source: ADR-0085 D179/D181 (the accumulator is FP32, S32 or U32); no ASL
    counterpart (argument normalisation).
    """
    arr = _asarray("acc", acc)
    t = _accumulator_type(arr.dtype, acc_type)
    return _acc_bits(arr, t), t


def _row_max_in(value: Any, t: TileDataType, m: int) -> np.ndarray:
    arr = _asarray("row_max_in", value)
    if arr.dtype in (np.dtype(np.float32), np.dtype(np.int32)) or arr.dtype.kind == "f":
        want = _ACC_VALUE_DTYPE[t]
        if arr.dtype != want:
            raise TileLegalityError(
                f"row_max_in: dtype {arr.dtype} values do not have the accumulator type {t.name}; "
                f"RowMaxIn must have the accumulator data type ({_RULE_SCHEMA})"
            )
        bits = arr.view(np.uint32)
    else:
        bits = _int_bits("row_max_in", arr, 32, signed=t is TileDataType.S32)
    if bits.shape not in ((m, 1), (m,)):
        raise TileLegalityError(
            f"row_max_in: shape {bits.shape}, RowMaxIn must be {m} x 1 (one element per accumulator row) "
            f"({_RULE_SCHEMA})"
        )
    return bits.reshape(m, 1)


def _vector_tile(name: str, value: Any, n: int) -> np.ndarray:
    arr = _asarray(name, value)
    bits = _int_bits(name, arr, 64)
    if bits.shape not in ((1, n), (n,)):
        raise TileLegalityError(
            f"{name}: shape {bits.shape}, a vector parameter tile must be 1 x {n} U64 "
            f"(one word per destination column) ({_RULE_SCHEMA})"
        )
    return bits.reshape(1, n)


def _scalar_word(name: str, value: Any) -> int:
    """``value`` (quant_param, relu_param) as a 64-bit parameter word: an int, a numpy integer, or a 0-d
    array holding one (its element, as the other word functions read it; was refused); a
    :class:`UsageError` for a bool, a non-integer, an array with elements, or a word outside 0..2^64-1."""
    item = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)):
        raise UsageError(f"{name} = {value!r}: expected a 64-bit parameter word (an int, a numpy integer "
                         "or a 0-d integer array)")
    iv = int(item)
    if iv < 0:
        raise UsageError(f"{name} = {iv}: a 64-bit parameter word is never negative")
    if iv >> 64:
        raise UsageError(f"{name} = {iv:#x}: a parameter word is 64 bits")
    return iv


def _presence(name: str, given: bool, needed: bool, why_needed: Callable[[], str],
              why_not: Callable[[], str]) -> None:
    if needed and not given:
        raise TileLegalityError(f"{name} is missing: {why_needed()} ({_RULE_SOURCES[name]})")
    if given and not needed:
        raise TileLegalityError(f"{name} was given but is not an operand: {why_not()} ({_RULE_SOURCES[name]})")


def _check_status(status: Any) -> Optional[StatusRegister]:
    if status is not None and not isinstance(status, StatusRegister):
        raise UsageError(f"status = {status!r}: expected a ptonum.StatusRegister or None")
    return status


# ---------------------------------------------------------------------------
# Preflight: every check, before any computation (BundleMatrixPostProcessSourcesLegal)


@dataclass(frozen=True, eq=False)
class TilePlan:
    """A validated B.FPATR tile operation (or one row/column block of it), ready to compute.

    Every field is typed and checked; :func:`compute` reads nothing else and
    checks nothing again.  Made by :func:`preflight` (with the accumulator) or
    :func:`preflight_shape` (shape and dtype only, ``acc_bits`` is ``None``);
    :meth:`block` cuts a sub-block with the matching parameter columns.

    Attributes:
        acc_bits: M x N ``uint32`` raw accumulator encodings, or ``None`` for a
            plan made from the shape only (attach data with :meth:`block`).
        acc_type: FP32, S32 or U32 (also the type of RowMaxOut/GroupMaxOut).
        attributes: the decoded, field-legal :class:`FPATRAttributes`.
        rmode: the rounding mode the element conversion uses (B.DATR RMode
            after NONE -> RNE and the mode's fixed rounding; never NONE).
        sat: the Sat the element conversion uses.
        quant_words: ``uint64`` quantization words: 0-d (the scalar word, or 1
            for a mode without parameter) or 1 x N (one legal word per column).
        relu_words: ``uint64`` activation words: 0-d (the scalar FP19 word, or 0)
            or 1 x N.
        row_max_in: M x 1 ``uint32`` RowMaxIn encodings, or ``None``.
        dst_type: the destination Tile DataType of D.
        engine: ``"fast"`` or ``"reference"``.
        m, n: rows and columns of this block.
        element: the resolved element configuration (:class:`~ptonum.fpatr.element.ElementConfig`;
            its ``rmode``/``sat`` are :attr:`rmode`/:attr:`sat`).
        origin: ``(row, column)`` of this block's first element in the whole tile.
        tile_shape: ``(M, N)`` of the whole tile.
        datr_rmode: B.DATR RMode as given (NONE allowed; :attr:`rmode` is what it resolves to).
        kernel_params: the compiled kernel's derived parameter rows of this plan's words, kept across
            calls (``ptonum.kernels.postprocess.run_tile``'s ``kept_params``), or ``None``: only a plan
            kept by :func:`preflight` for repeated calls has one, whose words (private, read-only
            copies) the kept-plan lookup has already compared, so the kernel compares nothing again.

    Source: ADR-0085 D175-D181; the preflight ``BundleMatrixPostProcessSourcesLegal``.
    """

    acc_bits: Optional[np.ndarray]
    acc_type: TileDataType
    attributes: FPATRAttributes
    rmode: RoundingMode
    sat: bool
    quant_words: np.ndarray
    relu_words: np.ndarray
    row_max_in: Optional[np.ndarray]
    dst_type: TileDataType
    engine: Engine
    m: int
    n: int
    element: ElementConfig
    origin: Tuple[int, int] = (0, 0)
    tile_shape: Tuple[int, int] = (0, 0)
    datr_rmode: RoundingMode = RoundingMode.NONE
    kernel_params: Optional[Dict[Any, Any]] = field(default=None, compare=False, repr=False)

    def record(self, flags: int) -> Dict[str, Any]:
        """:func:`run_record` of this plan's run with result ``flags``."""
        return run_record(self.attributes, acc_type=self.acc_type, dst_type=self.dst_type, rmode=self.datr_rmode,
                          sat=self.sat, flags=flags, engine=self.engine)

    @property
    def group_n(self) -> int:
        """GroupN in columns (:attr:`FPATRAttributes.group_n`; 0 when GroupMax is off)."""
        return self.attributes.group_n

    @property
    def full_width(self) -> bool:
        """True when this block spans every column of the tile (its RowMax is final)."""
        return self.origin[1] == 0 and self.n == self.tile_shape[1]

    @property
    def group_columns(self) -> slice:
        """The GroupMaxOut columns this block contributes to (whole-tile group indices).

        The first and last may be partial groups shared with the neighbouring
        column blocks (combined by :func:`join_columns`).
        """
        g = self.group_n
        c0 = self.origin[1]
        if not g:
            return slice(0, 0)
        return slice(c0 // g, -(-(c0 + self.n) // g))

    def block(self, rows: slice, cols: slice, acc_block: Any = None) -> "TilePlan":
        """The plan of the sub-block ``[rows, cols]`` (slices relative to this plan, step 1).

        The quant/relu tiles keep the block's columns, RowMaxIn its rows.
        ``acc_block`` gives the block's accumulator data (the same dtype as
        the data this plan was made from: ``float32``/``int32`` values or raw
        encodings); it is converted and checked like :func:`preflight`'s
        ``acc`` (an out-of-range raw element raises :class:`UsageError` naming
        its index in the whole tile).  Without it the block is cut from
        :attr:`acc_bits` (``None`` stays ``None``).

        Raises :class:`UsageError` for a slice outside the plan, a step other
        than 1, an empty block, or ``acc_block`` of the wrong shape/dtype.
        """
        r0, r1 = _check_slice("rows", rows, self.m)
        c0, c1 = _check_slice("cols", cols, self.n)
        bits: Optional[np.ndarray]
        if acc_block is not None:
            arr = _asarray("acc", acc_block)
            if arr.shape != (r1 - r0, c1 - c0):
                raise UsageError(f"acc_block: shape {arr.shape}, the block [{r0}:{r1}, {c0}:{c1}] is "
                                 f"{r1 - r0} x {c1 - c0}")
            t = _accumulator_type(arr.dtype, self.acc_type)
            try:
                bits = _acc_bits(arr, t)
            except UsageError as exc:
                raise UsageError(f"{exc} (block at row {self.origin[0] + r0}, column {self.origin[1] + c0})"
                                 ) from None
        else:
            bits = None if self.acc_bits is None else self.acc_bits[r0:r1, c0:c1]
        q = self.quant_words if self.quant_words.ndim == 0 else self.quant_words[:, c0:c1]
        r = self.relu_words if self.relu_words.ndim == 0 else self.relu_words[:, c0:c1]
        init = None if self.row_max_in is None else self.row_max_in[r0:r1]
        return replace(self, acc_bits=bits, quant_words=q, relu_words=r, row_max_in=init,
                       m=r1 - r0, n=c1 - c0, origin=(self.origin[0] + r0, self.origin[1] + c0),
                       kernel_params=None)  # other words (a column block): nothing kept applies


def _check_slice(name: str, s: Any, size: int) -> Tuple[int, int]:
    if not isinstance(s, slice):
        raise UsageError(f"{name} = {s!r}: expected a slice")
    start, stop, step = s.indices(size)
    if step != 1 or stop <= start:
        raise UsageError(f"{name} = {s!r}: expected a non-empty slice with step 1 inside 0..{size}")
    return start, stop


def preflight_shape(
    shape: Tuple[int, ...],
    dtype: Any,
    *,
    acc_type: Any = None,
    attributes: Any,
    rmode: Any = "NONE",
    sat: Any = False,
    quant_param: Optional[ParamWordLike] = None,
    quant_tile: Any = None,
    relu_param: Optional[ParamWordLike] = None,
    relu_tile: Any = None,
    row_max_in: Any = None,
    engine: str = "fast",
) -> TilePlan:
    """Every check of :func:`postprocess` that does not read accumulator values.

    ``shape``/``dtype`` describe the accumulator (as :func:`postprocess`'s
    ``acc`` would have them); the returned plan has ``acc_bits=None``.  A
    layer that holds the accumulator lazily (e.g. chunked) calls this at call
    time, then gives each chunk's data to :meth:`TilePlan.block`, which checks
    the chunk's values (only raw integer encodings can be out of range).
    Arguments and errors are those of :func:`postprocess` (except for values
    of ``acc``).

    Source: ADR-0085 D175-D181; ``BundleMatrixPostProcessSourcesLegal``.
    """
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"dtype = {dtype!r}: not a numpy dtype ({exc})") from None
    dt = dt.newbyteorder("=") if not dt.isnative else dt
    try:
        shp = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise UsageError(f"shape = {shape!r}: expected a tuple of ints") from None
    return _preflight(None, shp, dt, acc_type=acc_type, attributes=attributes, rmode=rmode, sat=sat,
                      quant_param=quant_param, quant_tile=quant_tile, relu_param=relu_param,
                      relu_tile=relu_tile, row_max_in=row_max_in, engine=engine)


def preflight(
    acc: Any,
    *,
    acc_type: Any = None,
    attributes: Any,
    rmode: Any = "NONE",
    sat: Any = False,
    quant_param: Optional[ParamWordLike] = None,
    quant_tile: Any = None,
    relu_param: Optional[ParamWordLike] = None,
    relu_tile: Any = None,
    row_max_in: Any = None,
    engine: str = "fast",
) -> TilePlan:
    """Check every argument of a B.FPATR tile operation and return the typed :class:`TilePlan`.

    Arguments and errors are those of :func:`postprocess` (without ``status``
    and ``progress``); nothing is computed.  Every legality rule of the ASL
    preflight runs here: B.FPATR fields, B.DATR RMode/Sat, the accumulator
    class, parameter and RowMaxIn presence, each parameter word and each
    element of the quant/relu tiles, auxiliary shapes and types.

    Source: ADR-0085 D175-D181; ``BundleMatrixPostProcessSourcesLegal``,
    ``TileMatrixAuxiliarySourceSchemaLegal``, ``TileMatrixVectorQuantContentsLegal``,
    ``TileMatrixVectorReluContentsLegal``.
    """
    arr = _asarray("acc", acc)
    return _preflight(arr, arr.shape, arr.dtype, acc_type=acc_type, attributes=attributes, rmode=rmode,
                      sat=sat, quant_param=quant_param, quant_tile=quant_tile, relu_param=relu_param,
                      relu_tile=relu_tile, row_max_in=row_max_in, engine=engine)


#: plans of recent successful preflights without their accumulator data: key -> (quant/relu tile bytes, plan)
_PLANS: Dict[Tuple[Any, ...], Tuple[bytes, bytes, TilePlan]] = {}
_PLANS_KEEP = 16
_PLANS_MAX_WORDS = 1 << 14  # tiles up to this many words (128 KiB) are kept
_SIMPLE = (str, int, bool, TileDataType, RoundingMode)  # argument types a plan is kept for (exact types)


def _word_key(value: Any) -> Any:
    """A scalar parameter word argument as a plan's key holds it: the int of a :class:`ParamWord`, a numpy
    integer or a 0-d integer array (exact types; what :func:`_scalar_word` reads from each), so that each
    stands for the same kept plan as its Python int; any other value as it is."""
    if type(value) is ParamWord:  # quant_param()'s words
        return int(value)
    if type(value) is np.ndarray and value.ndim == 0 and value.dtype.kind in "iuO":
        value = value[()]  # its element: a numpy integer, or (dtype object) whatever the array holds
    if isinstance(value, np.integer) or type(value) is int:
        return int(value)
    return value


def _rmode_key(value: Any) -> Any:
    """An ``rmode`` argument as a plan's key holds it: a numpy integer or a 0-d integer array (any non-bool
    integer, :func:`ptonum._util.scalar_int`) as its int, which :func:`parse_rounding_mode` reads alike; a
    RoundingMode, str or bool, and anything else, as it is."""
    if type(value) in _SIMPLE:
        return value
    iv = scalar_int(value)
    return value if iv is None else iv


def _sat_key(value: Any) -> Any:
    """A ``sat`` argument as a plan's key holds it: a numpy bool as its bool, a numpy integer as its int (what
    :func:`check_bool` reads from each, refusing the same values); anything else (a 0-d array, which
    check_bool refuses) as it is."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _attributes_key(value: Any) -> Any:
    """The ``attributes`` part of a plan's key: an FPATRAttributes or a word (exact types) as it is, a numpy
    integer word as its int (:func:`_attributes` reads only ``int(value)`` from it, so it stands for the same
    kept plan as that int, as :func:`_word_key` keys the quant/relu words), a mapping of named fields as the
    FPATRAttributes it makes (:func:`_attributes`, run on every call: the plan reads only that descriptor, so
    a dict stands for the same kept plan as its descriptor); None for anything else (a 0-d array, which
    :func:`_attributes` refuses, is not unwrapped), or a mapping :func:`_attributes` refuses (no plan:
    :func:`_check_plan` raises, in its own order)."""
    if isinstance(value, np.integer):  # np.bool_ is not an np.integer; _attributes refuses it
        value = int(value)
    if type(value) is FPATRAttributes or type(value) is int:
        return (type(value), value)
    if isinstance(value, Mapping):
        try:
            attrs = _attributes(value)
        except Exception:  # whatever it is, _check_plan raises it again in its own order of checks
            return None
        return (FPATRAttributes, attrs)
    return None


def _tile_key(value: Any) -> Optional[Tuple[Tuple[Any, ...], bytes]]:
    """(key part, bytes) of a quant/relu tile argument that a kept plan may stand for, or None."""
    if value is None:
        return (None,), b""
    if type(value) is np.ndarray and value.dtype.kind in "iu" and value.size <= _PLANS_MAX_WORDS:
        return (value.dtype.str, value.shape), value.tobytes()
    return None


def _plan_key(shape: Tuple[int, ...], dtype: np.dtype, acc_type: Any, attributes: Any, rmode: Any, sat: Any,
              quant_param: Any, quant_tile: Any, relu_param: Any, relu_tile: Any, row_max_in: Any,
              engine: Any) -> Optional[Tuple[Tuple[Any, ...], bytes, bytes]]:
    """The key of everything :func:`_preflight` checks besides the accumulator's values, when every
    argument is of a plain type (each value tagged with its exact type: ``True`` and ``1`` are different
    arguments; a scalar word as its int, :func:`_word_key`; ``rmode``/``sat`` given as numpy values as the
    plain values they read as, :func:`_rmode_key`/:func:`_sat_key`; attributes given as a dict as their
    descriptor and as a numpy integer word as its int, :func:`_attributes_key`), with the quant/relu tiles'
    bytes; None for anything else (no plan kept)."""
    if row_max_in is not None:  # RowMaxIn values are checked per call
        return None
    parts: List[Any] = [shape, dtype.str]
    for i, v in enumerate((acc_type, rmode, sat, quant_param, relu_param, engine)):
        if i in (3, 4):  # the scalar words: every check reads only the int (as _scalar_word reads it)
            v = _word_key(v)
        elif i == 1:  # rmode: a numpy integer as its int (as parse_rounding_mode reads it)
            v = _rmode_key(v)
        elif i == 2:  # sat: a numpy bool or integer as its bool or int (as check_bool reads it)
            v = _sat_key(v)
        if v is not None and type(v) not in _SIMPLE:
            return None
        parts.append((type(v), v))
    a = _attributes_key(attributes)
    if a is None:
        return None
    parts.append(a)
    q = _tile_key(quant_tile)
    r = _tile_key(relu_tile)
    if q is None or r is None:
        return None
    parts += [q[0], r[0]]
    return tuple(parts), q[1], r[1]


def _private(words: np.ndarray) -> np.ndarray:
    """A read-only copy of a plan's parameter words (a kept plan must not see the caller's later writes)."""
    out = np.array(words, copy=True)
    out.flags.writeable = False
    return out


def _preflight(arr: Optional[np.ndarray], shape: Tuple[int, ...], dtype: np.dtype, *, acc_type: Any,
               attributes: Any, rmode: Any, sat: Any, quant_param: Any, quant_tile: Any, relu_param: Any,
               relu_tile: Any, row_max_in: Any, engine: Any) -> TilePlan:
    """:func:`_check_plan`, or the plan kept from an earlier call with the same arguments (same types,
    values and tile bytes) with this call's accumulator data (checked as :func:`_check_plan` checks it).

    Every check besides the accumulator values is a function of those arguments, so an earlier success
    stands for this call; a failing call keeps nothing and raises every time.  The kept plan holds
    private read-only copies of the parameter words.
    """
    memo = _plan_key(shape, dtype, acc_type, attributes, rmode, sat, quant_param, quant_tile, relu_param,
                     relu_tile, row_max_in, engine)
    if memo is not None:
        hit = _PLANS.get(memo[0])
        if hit is not None and hit[0] == memo[1] and hit[1] == memo[2]:
            kept = hit[2]
            if arr is None:
                return kept
            plan = TilePlan.__new__(TilePlan)  # the kept plan's fields with this call's data (what
            plan.__dict__.update(kept.__dict__)  # dataclasses.replace does, in two C calls)
            object.__setattr__(plan, "acc_bits", _acc_bits(arr, kept.acc_type))
            return plan
    plan = _check_plan(arr, shape, dtype, acc_type=acc_type, attributes=attributes, rmode=rmode, sat=sat,
                       quant_param=quant_param, quant_tile=quant_tile, relu_param=relu_param,
                       relu_tile=relu_tile, row_max_in=row_max_in, engine=engine)
    if memo is not None:
        if len(_PLANS) >= _PLANS_KEEP:
            try:
                del _PLANS[next(iter(_PLANS))]  # the oldest
            except (KeyError, StopIteration, RuntimeError):  # pragma: no cover - another thread got there first
                pass
        _PLANS[memo[0]] = (memo[1], memo[2], replace(plan, acc_bits=None, quant_words=_private(plan.quant_words),
                                                     relu_words=_private(plan.relu_words), kernel_params={}))
    return plan


def _check_plan(arr: Optional[np.ndarray], shape: Tuple[int, ...], dtype: np.dtype, *, acc_type: Any,
                attributes: Any, rmode: Any, sat: Any, quant_param: Any, quant_tile: Any, relu_param: Any,
                relu_tile: Any, row_max_in: Any, engine: Any) -> TilePlan:
    eng = check_engine(engine)
    attrs = _attributes(attributes)
    check_fields(attrs)
    mode = attrs.pre_quant_mode
    info = attrs.mode_info
    rm = parse_rounding_mode(rmode, "rmode")
    st = check_bool("sat", sat)
    check_datr_resolved(int(mode), rm, st)
    t = _accumulator_type(dtype, acc_type)
    bits = None if arr is None else _acc_bits(arr, t)
    m, n = _check_acc_shape(shape)
    check_accumulator_type(mode, t)

    # Parameter presence (B.IOR dense order / Local source order, ADR-0064); the texts are made
    # only for a violation (formatting them on every call was a measurable part of a call)
    relu = int(attrs.relu_mode)

    def no_param() -> str:
        if info.parameter != "none":
            return f"PreQuantMode {int(mode)} ({mode.name}) takes a {info.parameter} parameter"
        return f"PreQuantMode {int(mode)} ({mode.name}) takes no parameter"

    _presence("quant_param", quant_param is not None, info.parameter == "scalar",
              lambda: f"{no_param()} from the B.IOR stream", no_param)
    _presence("quant_tile", quant_tile is not None, info.parameter == "vector",
              lambda: f"{no_param()} tile (1 x {n} U64)", no_param)
    _presence("relu_param", relu_param is not None, relu == 2,
              lambda: "ReluMode=2 (scalar LReLU/PReLU) reads one FP19 word from the B.IOR stream",
              lambda: f"only ReluMode=2 takes a scalar activation word (ReluMode={relu})")
    _presence("relu_tile", relu_tile is not None, relu == 3,
              lambda: f"ReluMode=3 (vector PReLU) reads a 1 x {n} U64 activation tile",
              lambda: f"only ReluMode=3 takes an activation tile (ReluMode={relu})")
    _presence("row_max_in", row_max_in is not None, attrs.row_max_init,
              lambda: f"RowMaxInit=1 reads RowMaxIn, {m} x 1 of the accumulator type",
              lambda: "RowMaxIn is read only when RowMaxEn=1 and RowMaxInit=1")

    qp: np.ndarray
    if info.parameter == "scalar":
        qword = _scalar_word("quant_param", quant_param)
        check_quant_param(mode, qword, "quant_param")
        qp = np.asarray(qword, np.uint64)
    elif info.parameter == "vector":
        qp = _vector_tile("quant_tile", quant_tile, n)
        check_quant_param(mode, qp, "quant_tile")
    else:
        qp = np.asarray(1, np.uint64)  # MatrixPostProcessResult passes 1 when the mode has no parameter
    rp: np.ndarray
    if relu == 2:
        rword = _scalar_word("relu_param", relu_param)
        check_relu_param(rword, "relu_param")
        rp = np.asarray(rword, np.uint64)
    elif relu == 3:
        rp = _vector_tile("relu_tile", relu_tile, n)
        check_relu_param(rp, "relu_tile")
    else:
        rp = np.asarray(0, np.uint64)
    init = _row_max_in(row_max_in, t, m) if row_max_in is not None else None

    cfg = resolve_element_config(mode, attrs.relu_mode, t, rm, st)
    return TilePlan(
        acc_bits=bits, acc_type=t, attributes=attrs, rmode=cfg.rmode, sat=cfg.sat, element=cfg,
        quant_words=qp, relu_words=rp, row_max_in=init, dst_type=cfg.dst, engine=eng,
        m=m, n=n, origin=(0, 0), tile_shape=(m, n), datr_rmode=rm,
    )


def run_record(attributes: FPATRAttributes, *, acc_type: TileDataType, dst_type: TileDataType,
               rmode: RoundingMode, sat: bool, flags: int, engine: str) -> Dict[str, Any]:
    """One B.FPATR tile run as every ptonum record describes it (a JSON-ready dict): ``STEM.flags.json``
    of ``ptonum postprocess`` and the attributes of the Zarr group written by
    :meth:`ptonum.dask.DaskPostprocessResult.to_zarr` hold these keys with these values.

    ``rmode``/``sat`` are B.DATR RMode (NONE allowed) and Sat as given.  Keys:

    * ``flags``: the OR of the sticky flags (int, NV=1 DZ=2 OF=4 UF=8 NX=0x10); ``flag_names``: the
      same as every output prints them and ``ptonum compare --device-flags`` takes them, ``"OF|NX"``
      (``"-"`` for none);
    * ``fpatr_word`` (``"0x0c002023"``) and ``fpatr``: the fields by name, with the codes of the
      enumerated ones (``PreQuantMode``, ``PreQuantModeCode``, ``ReluMode``, ``ReluModeCode``,
      ``GroupNCode``, ``GroupN``, ``RowMaxEn``, ``GroupMaxEn``, ``RowMaxInit``, ``MaxAbsEn``);
    * ``rmode``, ``rmode_code``: the rounding mode the element conversion used (B.DATR RMode after
      NONE -> RNE and the mode's fixed rounding; never NONE); ``sat`` (0/1);
    * ``datr``: B.DATR as given (``{"RMode": "NONE", "RModeCode": 0, "Sat": 0}``), what a rerun passes
      (a fixed-rounding mode requires RMode NONE);
    * ``acc_type``, ``dst_type`` (Tile DataType names), ``engine``, ``producer`` (``"ptonum"``).

    Source: ADR-0085 D178 (``MatrixFPATREffectiveControl``), D181 (``CommitMatrixResult`` flags).
    """
    a = attributes
    used, used_sat = resolved_control(a.pre_quant_mode.info, rmode, sat)  # typed: parsed by the caller
    return {
        "flags": int(flags),
        "flag_names": flag_names(flags),
        "fpatr_word": f"{a.word:#010x}",
        "fpatr": {"PreQuantMode": a.pre_quant_mode.name, "PreQuantModeCode": int(a.pre_quant_mode),
                  "ReluMode": a.relu_mode.name, "ReluModeCode": int(a.relu_mode),
                  "GroupNCode": int(a.group_n_code), "GroupN": int(a.group_n),
                  "RowMaxEn": int(a.row_max_en), "GroupMaxEn": int(a.group_max_en),
                  "RowMaxInit": int(a.row_max_init), "MaxAbsEn": int(a.max_abs_en)},
        "rmode": used.name,
        "rmode_code": int(used),
        "sat": int(bool(used_sat)),
        "datr": {"RMode": rmode.name, "RModeCode": int(rmode), "Sat": int(bool(sat))},
        "acc_type": acc_type.name,
        "dst_type": dst_type.name,
        "engine": engine,
        "producer": "ptonum",
    }


# ---------------------------------------------------------------------------
# Compute: pure, on a plan or any block of it


@dataclass(frozen=True, eq=False)
class TileOutputs:
    """The pre-commit results of :func:`compute` on a plan (or block).

    Attributes:
        d_bits: m x n destination encodings (carrier of :func:`destination_dtype`).
        row_max_bits: m x 1 ``uint32`` RowMax (final when the plan is
            :attr:`~TilePlan.full_width`, else the fold over the block's
            columns without RowMaxIn), or ``None`` when RowMaxEn=0.
        group_max_bits: m x G ``uint32`` GroupMax over the groups of
            :attr:`TilePlan.group_columns` (partial at a cut group), or ``None``.
        flags: OR of the flags of every element and reduction step computed.
    """

    d_bits: np.ndarray
    row_max_bits: Optional[np.ndarray]
    group_max_bits: Optional[np.ndarray]
    flags: int


ProgressFn = Callable[[int, int], None]


# ---------------------------------------------------------------------------
# Output buffers: fresh pages cost as much as the work (recycled once their arrays are gone)

#: outputs of at least this many bytes come from :class:`_OutputBuffers`; smaller ones from ``np.empty``
OUTPUT_POOL_MIN_BYTES = 4 << 20
#: default of ``PTONUM_OUTPUT_POOL_MIB``: MiB of released output buffers kept for reuse (0: none)
DEFAULT_OUTPUT_POOL_MIB = 128
_POOL_GRAIN = 2 << 20  # buffer capacities are multiples of a transparent huge page
_POOL_ALIGN = 64  # every buffer starts on a cache line


def _output_pool_bytes() -> int:
    """``PTONUM_OUTPUT_POOL_MIB`` in bytes (the default when unset or unreadable)."""
    text = os.environ.get("PTONUM_OUTPUT_POOL_MIB", "")
    try:
        return count_text(text) << 20 if text.strip() else DEFAULT_OUTPUT_POOL_MIB << 20
    except ValueError:  # the command line says so (cli: environment_notes)
        return DEFAULT_OUTPUT_POOL_MIB << 20


class _Buffer:
    """A recycled output buffer and its first 64-byte aligned address (compared by identity)."""

    __slots__ = ("raw", "start")

    def __init__(self, raw: np.ndarray) -> None:
        self.raw = raw
        start = raw.ctypes.data
        self.start = start + -start % _POOL_ALIGN


class _Lease:
    """The owner (``base``) of an output array cut from a recycled buffer.

    Every view of the array keeps this object alive; when the last one is gone, Python frees it
    and its buffer goes back to the pool, so a buffer is never handed out while any array still
    refers to its memory.
    """

    __slots__ = ("__array_interface__", "_raw", "_pool")

    def __init__(self, raw: _Buffer, pool: "_OutputBuffers", shape: Tuple[int, ...], dtype: np.dtype) -> None:
        self._raw = raw
        self._pool = pool
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "data": (raw.start, False),
                                    "version": 3}

    def __del__(self) -> None:
        try:
            self._pool.give_back(self._raw)
        except Exception:  # pragma: no cover - interpreter shutdown: the memory is simply freed
            pass


class _OutputBuffers:
    """Large output arrays whose memory is recycled after their arrays are gone.

    A fresh ``np.empty`` of tens of MiB comes from a new ``mmap``: the kernel faults in and zeroes
    every page on the first write, which for an FP32 -> BF16/FP16 tile costs as much CPU time as
    the conversion (glibc keeps freed blocks for reuse only below 32 MiB).  Here a released buffer
    (whose last array has been freed, see :class:`_Lease`) is kept, up to ``PTONUM_OUTPUT_POOL_MIB``
    MiB in all (default :data:`DEFAULT_OUTPUT_POOL_MIB`, the oldest dropped first), and handed to
    the next output of the same capacity.  Contents are never read: every output is fully written.
    List operations are atomic under the GIL; no lock (a lease may be freed by a collection that
    runs inside :meth:`empty`).
    """

    def __init__(self) -> None:
        self._free: List[_Buffer] = []

    def empty(self, shape: Tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised C-contiguous array that starts on a 64-byte line, recycled or not.

        The kernels write whole lines of an output by non-temporal stores (GroupMaxOut of GroupN
        8/16/32 among them) and fall back to ordinary stores, which read each line first, where a
        line is only partly theirs; ``np.empty`` starts 16 bytes into a line (glibc), so a small
        output (GroupMaxOut of GroupN 32 on a 4096 x 4096 tile is 2 MiB) is over-allocated by one
        line and cut at the first line boundary instead.
        """
        dt = np.dtype(dtype)
        nbytes = dt.itemsize
        for d in shape:
            nbytes *= int(d)
        if nbytes < OUTPUT_POOL_MIN_BYTES or _output_pool_bytes() == 0:
            spare = np.empty(nbytes + _POOL_ALIGN, np.uint8)
            start = -spare.ctypes.data % _POOL_ALIGN
            return spare[start:start + nbytes].view(dt).reshape(shape)
        cap = -(-nbytes // _POOL_GRAIN) * _POOL_GRAIN + _POOL_ALIGN
        raw = None
        for cand in list(self._free):
            if cand.raw.size == cap:
                try:
                    self._free.remove(cand)
                except ValueError:  # taken meanwhile by another thread
                    continue
                raw = cand
                break
        if raw is None:
            raw = _Buffer(np.empty(cap, np.uint8))
        return np.asarray(_Lease(raw, self, tuple(int(d) for d in shape), dt))

    def give_back(self, raw: _Buffer) -> None:
        """Keep a released buffer (newest last), dropping the oldest beyond the size limit."""
        limit = _output_pool_bytes()
        if raw.raw.size > limit:
            return
        self._free.append(raw)
        while sum(b.raw.size for b in self._free) > limit:
            try:
                self._free.pop(0)
            except IndexError:  # pragma: no cover - emptied by another thread
                break

    def clear(self) -> None:
        """Drop every kept buffer (their memory returns to the system)."""
        self._free.clear()


_OUTPUTS = _OutputBuffers()


def release_output_buffers() -> None:
    """Return the memory of released output buffers to the system now.

    Large outputs (``d_bits`` and ``group_max_bits`` of :func:`compute`, at least 4 MiB) are cut from buffers that
    are kept after their arrays are gone, up to ``PTONUM_OUTPUT_POOL_MIB`` MiB (default 128;
    0 turns the reuse off), so that the next tile of the same size writes into memory that
    is already mapped instead of paying the page faults and kernel zeroing of fresh pages.
    A buffer is reused only after every array and view of it has been freed.

    Source: no spec counterpart (memory management).
    """
    _OUTPUTS.clear()


#: with ``progress``, row blocks are sized to take about this long (seconds), so the caller's
#: progress display moves several times a second in every engine (the reference engine included)
PROGRESS_BLOCK_SECONDS = 0.2


def _row_blocks(m: int, block: int, *, paced: bool) -> Iterator[Tuple[int, int]]:
    """Row ranges ``(r0, r1)`` covering ``0..m``: blocks of ``block`` rows, or, when ``paced``, blocks
    that start at one row and are resized after each one (at most ``block`` rows, at most 4x growth)
    to take about :data:`PROGRESS_BLOCK_SECONDS`, as timed between the yields (the caller's work on
    the block).  The blocking changes no result: every row is computed on its own."""
    size = 1 if paced else block
    r0 = 0
    while r0 < m:
        r1 = min(m, r0 + size)
        start = time.monotonic()
        yield r0, r1
        if paced:
            took = time.monotonic() - start
            want = int((r1 - r0) * PROGRESS_BLOCK_SECONDS / took) if took > 0 else 4 * size
            size = max(1, min(block, 4 * size, want))
        r0 = r1


def compute(plan: TilePlan, progress: Optional[ProgressFn] = None) -> TileOutputs:
    """Compute D, RowMax and GroupMax of a plan (or block); no argument checks, no side effects.

    The fast engine works in row blocks of about :data:`BLOCK_ELEMENTS`
    elements (one fused compiled pass when the kernels are in use and no
    ``progress`` is asked for); ``progress(rows_done, rows_total)`` is called
    after each row block.  With ``progress``, every engine works in row blocks
    sized to take about :data:`PROGRESS_BLOCK_SECONDS` (from one row up), so
    the progress moves at least every second unless a single row takes longer.  A block whose columns do not start at a group
    boundary folds its first (partial) group from its own first column.

    Raises :class:`UsageError` only for a plan without accumulator data.

    Source: ADR-0085 D175-D181; ``MatrixPostProcessResult``, ``MatrixRowMaxResult``,
    ``MatrixGroupMaxResult``.
    """
    if plan.acc_bits is None:
        raise UsageError("compute: the plan has no accumulator data (give it with TilePlan.block)")
    bits = plan.acc_bits
    m, n = plan.m, plan.n
    attrs = plan.attributes
    t = plan.acc_type
    eng = plan.engine
    group = attrs.group_n
    first_group = group - plan.origin[1] % group if group else 0  # columns of the first (maybe partial) group
    aligned = first_group == group
    init = plan.row_max_in if plan.full_width else None
    d_bits = _OUTPUTS.empty((m, n), destination_dtype(plan.dst_type))
    row_out = np.empty((m, 1), np.uint32) if attrs.row_max_en else None
    n_groups = plan.group_columns.stop - plan.group_columns.start
    # GroupMaxOut from the recycled buffers too (GroupN 8 on a 4096 x 4096 tile: 8 MiB, four fresh huge
    # pages faulted in and zeroed per call otherwise)
    group_out = _OUTPUTS.empty((m, n_groups), np.uint32) if attrs.group_max_en else None
    flags = 0
    block = m if eng == "reference" else max(1, BLOCK_ELEMENTS // n)  # with progress: paced, up to this
    path = engines.select(eng, m * n)  # the reference engine never imports numba
    use_kernel = path == "numba"
    qp = plan.quant_words
    rp = plan.relu_words
    cfg = plan.element
    if use_kernel:  # one fused compiled pass per row block (ptonum.kernels.postprocess)
        kcfg = cfg.kernel
        kernel_groups = group_out is not None and aligned

        def kernel_rows(rows: int, src: Any, d: np.ndarray, r_out: Optional[np.ndarray], ini: Any,
                        g_out: Optional[np.ndarray]) -> int:
            """One kernel call on ``rows`` rows (whole arrays or one row block's slices); GroupMax by
            :func:`fold_groups` when the groups do not start at a column of the tile (not ``aligned``)."""
            f = engines.run_tile(
                np.ascontiguousarray(src).reshape(-1), m=rows, n=n, cfg=kcfg, qp=qp, rp=rp, out=d.reshape(-1),
                red_type=t, max_abs=attrs.max_abs_en, row_out=None if r_out is None else r_out.reshape(-1),
                init=None if ini is None else np.ascontiguousarray(ini).reshape(-1),
                group_n=group if kernel_groups else 0,
                group_out=g_out.reshape(-1) if kernel_groups and g_out is not None else None,
                kept_params=plan.kernel_params,
            )
            if g_out is not None and not kernel_groups:
                gb, gf = fold_groups(src, group, t, attrs.max_abs_en, eng, first=first_group)
                g_out[:] = gb
                f |= _or_all(gf)
            return int(f)

        if progress is None and isinstance(bits, np.ndarray) and bits.flags.c_contiguous:
            # the kernel needs no temporaries: one call, one parallel region, on the whole arrays (the
            # loop below would do the same through row slices: a dozen Python operations, each costing
            # 10-30 us right after a large tile's kernel has flushed the caches)
            flags = kernel_rows(m, bits, d_bits, row_out, init, group_out)
            return TileOutputs(d_bits=d_bits, row_max_bits=row_out, group_max_bits=group_out, flags=flags)
        # any other layout (Fortran order, strided views): row blocks of BLOCK_ELEMENTS, each copied
        # C-contiguous for the kernel, so no accumulator-sized copy exists (docs/performance.md bound)
    for r0, r1 in _row_blocks(m, block, paced=progress is not None):
        if use_kernel:
            flags |= kernel_rows(r1 - r0, bits[r0:r1], d_bits[r0:r1], None if row_out is None else row_out[r0:r1],
                                 None if init is None else init[r0:r1],
                                 None if group_out is None else group_out[r0:r1])
            if progress is not None:
                progress(r1, m)
            continue
        blk = bits[r0:r1]
        db, df = compute_elements(blk, qp, rp, cfg, path)
        d_bits[r0:r1] = np.asarray(db).astype(d_bits.dtype, copy=False)
        flags |= _or_all(df)
        del db, df
        if row_out is not None:
            rb, rf = fold_groups(blk, n, t, attrs.max_abs_en, eng)
            if init is not None:
                rb, f2 = combine_partials(init[r0:r1], rb, t, attrs.max_abs_en, eng)
                flags |= _or_all(f2)
            row_out[r0:r1] = rb
            flags |= _or_all(rf)
        if group_out is not None:
            gb, gf = fold_groups(blk, group, t, attrs.max_abs_en, eng, first=first_group)
            group_out[r0:r1] = gb
            flags |= _or_all(gf)
        if progress is not None:
            progress(r1, m)
    return TileOutputs(d_bits=d_bits, row_max_bits=row_out, group_max_bits=group_out, flags=int(flags))


def join_rows(top: TileOutputs, bottom: TileOutputs) -> TileOutputs:
    """The outputs of two vertically adjacent blocks (same columns) as one block.

    Source: ADR-0085 D181 (rows are independent).
    """
    def cat(a: Optional[np.ndarray], b: Optional[np.ndarray]) -> Optional[np.ndarray]:
        return None if a is None or b is None else np.concatenate([a, b], axis=0)

    return TileOutputs(d_bits=np.concatenate([top.d_bits, bottom.d_bits], axis=0),
                       row_max_bits=cat(top.row_max_bits, bottom.row_max_bits),
                       group_max_bits=cat(top.group_max_bits, bottom.group_max_bits),
                       flags=top.flags | bottom.flags)


def join_columns(left_plan: TilePlan, left: TileOutputs, right_plan: TilePlan, right: TileOutputs
                 ) -> Tuple[TilePlan, TileOutputs]:
    """The plan and outputs of two horizontally adjacent blocks (same rows) as one block.

    ``right_plan`` must start at the column where ``left_plan`` ends.  D is
    concatenated; the RowMax partials combine with one reduction step
    (``current`` = left, ``candidate`` = right: the fold continues in
    increasing column order, :func:`~ptonum.fpatr.reduction.combine_partials`);
    a group cut by the boundary combines the same way.  When the joined block
    spans the whole tile, RowMaxIn is applied (as the last step of the row).

    Raises :class:`UsageError` when the blocks are not adjacent.
    Source: ADR-0085 D181; ``MatrixRowMaxResult``, ``MatrixGroupMaxResult`` (fixed column order).
    """
    (lr, lc), (rr, rc) = left_plan.origin, right_plan.origin
    if lr != rr or left_plan.m != right_plan.m or lc + left_plan.n != rc:
        raise UsageError(f"join_columns: blocks at {left_plan.origin} ({left_plan.m} x {left_plan.n}) and "
                         f"{right_plan.origin} ({right_plan.m} x {right_plan.n}) are not adjacent")
    t, mabs, eng = left_plan.acc_type, left_plan.attributes.max_abs_en, left_plan.engine
    flags = left.flags | right.flags
    row = None
    if left.row_max_bits is not None and right.row_max_bits is not None:
        row, f = combine_partials(left.row_max_bits, right.row_max_bits, t, mabs, eng)
        flags |= _or_all(f)
    grp = None
    if left.group_max_bits is not None and right.group_max_bits is not None:
        lg, rg = left.group_max_bits, right.group_max_bits
        if rc % left_plan.group_n:  # the boundary cuts a group (GroupMax on: group_n > 0): one more step in column order
            mid, f = combine_partials(lg[:, -1:], rg[:, :1], t, mabs, eng)
            flags |= _or_all(f)
            grp = np.concatenate([lg[:, :-1], mid, rg[:, 1:]], axis=1)
        else:
            grp = np.concatenate([lg, rg], axis=1)
    left_init = left_plan.row_max_in
    bits = None
    if left_plan.acc_bits is not None and right_plan.acc_bits is not None:
        bits = np.concatenate([left_plan.acc_bits, right_plan.acc_bits], axis=1)

    def cat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a if a.ndim == 0 else np.concatenate([a, b], axis=1)

    plan = replace(left_plan, acc_bits=bits, n=left_plan.n + right_plan.n,
                   quant_words=cat(left_plan.quant_words, right_plan.quant_words),
                   relu_words=cat(left_plan.relu_words, right_plan.relu_words))
    if plan.full_width and row is not None and left_init is not None:
        row, f = combine_partials(left_init, row, t, mabs, eng)
        flags |= _or_all(f)
    out = TileOutputs(d_bits=np.concatenate([left.d_bits, right.d_bits], axis=1), row_max_bits=row,
                      group_max_bits=grp, flags=int(flags))
    return plan, out


# ---------------------------------------------------------------------------
# Commit: the only step with an effect


def commit(plan: TilePlan, outputs: TileOutputs, status: Optional[StatusRegister] = None) -> PostprocessResult:
    """Publish the outputs of a whole-tile plan: read-only arrays and the sticky status together.

    ``outputs`` must be the result of :func:`compute` on ``plan`` (or of
    joining the blocks of ``plan``).  ``status`` (a :class:`StatusRegister` or
    ``None``) gets the OR of the flags; this is the only function that
    touches it.

    Raises :class:`UsageError` (nothing changed) for a ``status`` of another
    type, or outputs whose shapes are not the plan's whole tile.
    Source: ADR-0085 D181; ``CommitMatrixResult``.
    """
    st = _check_status(status)
    m, n = plan.tile_shape
    if plan.origin != (0, 0) or (plan.m, plan.n) != (m, n) or outputs.d_bits.shape != (m, n):
        raise UsageError(f"commit: outputs of shape {outputs.d_bits.shape} for the block at {plan.origin} "
                         f"are not the whole {m} x {n} tile")
    for a in (outputs.d_bits, outputs.row_max_bits, outputs.group_max_bits):
        if a is not None:
            a.flags.writeable = False
    if st is not None:
        st.record(outputs.flags)
    return PostprocessResult(
        d_bits=outputs.d_bits, row_max_bits=outputs.row_max_bits, group_max_bits=outputs.group_max_bits,
        flags=int(outputs.flags), dst_type=plan.dst_type, acc_type=plan.acc_type,
    )


# ---------------------------------------------------------------------------
# The operation


def postprocess(
    acc: Any,
    *,
    acc_type: Any = None,
    attributes: Any,
    rmode: Any = "NONE",
    sat: Any = False,
    quant_param: Optional[ParamWordLike] = None,
    quant_tile: Any = None,
    relu_param: Optional[ParamWordLike] = None,
    relu_tile: Any = None,
    row_max_in: Any = None,
    status: Optional[StatusRegister] = None,
    engine: str = "fast",
    progress: Optional[ProgressFn] = None,
) -> PostprocessResult:
    """Run one complete B.FPATR post-process of an M x N accumulator tile.

    The operation is :func:`preflight` -> :func:`compute` -> :func:`commit`.

    Arguments:
        acc: the M x N accumulator (M, N >= 1): ``float32`` values (FP32),
            ``int32`` values (S32), or raw 32-bit encodings in any integer
            dtype together with ``acc_type``.
        acc_type: FP32, S32 or U32 (name, code or member); optional for
            ``float32``/``int32`` input, required for raw encodings.
        attributes: an :class:`FPATRAttributes`, the 32-bit B.FPATR word, or a
            dict of named fields for :meth:`FPATRAttributes.from_fields`.
        rmode, sat: B.DATR RMode (name or code 0-7; NONE resolves to RNE) and Sat.
        quant_param: the scalar quantization/shift word (64-bit int, numpy integer or
            0-d integer array) of a scalar mode.
        quant_tile: the 1 x N (or length-N) U64 quantization words of a vector mode.
        relu_param: the scalar FP19 activation word (64-bit int, numpy integer or 0-d
            integer array) for ReluMode 2.
        relu_tile: the 1 x N U64 activation words for ReluMode 3.
        row_max_in: RowMaxIn, M x 1 (or length M) raw encodings or values of
            the accumulator dtype; required exactly when RowMaxInit=1.
        status: a :class:`StatusRegister`; the result flags are OR-ed into it
            after everything is computed.
        engine: ``"fast"`` (numpy, row blocks of about :data:`BLOCK_ELEMENTS`
            elements; one fused compiled numba kernel pass from ``PTONUM_KERNEL_MIN_ELEMENTS``
            elements on, same bits and flags) or ``"reference"`` (element by element).
        progress: optional ``callable(rows_done, rows_total)`` called after each block.

    Returns a :class:`PostprocessResult` (D at the destination width, RowMaxOut
    / GroupMaxOut in the accumulator type when enabled, OR of all flags).

    Raises (all before any computation; ``status`` unchanged):
        IllegalEncodingError: reserved PreQuantMode/ReluMode/GroupNCode or a
            word that does not decode as B.FPATR.
        TileLegalityError: field combinations, B.DATR RMode/Sat the mode
            forbids, wrong accumulator class, an illegal parameter word or
            vector-tile element (named by column), a missing or superfluous
            parameter or RowMaxIn, auxiliary tile shapes or types.
        UsageError: unreadable arguments (dtype, non-2-D or empty acc,
            unknown names, a quant_param/relu_param that is not an integer word,
            words negative or wider than 64 bits, bad status/progress/engine).

    Source: ADR-0085 D175-D181; ``CommitMatrixResult``, ``MatrixPostProcessResult``,
    ``MatrixRowMaxResult``, ``MatrixGroupMaxResult`` and the preflight
    ``BundleMatrixPostProcessSourcesLegal``.
    """
    check_engine(engine)
    _check_status(status)
    if progress is not None and not callable(progress):
        raise UsageError(f"progress = {progress!r}: expected a callable(rows_done, rows_total) or None")
    plan = preflight(acc, acc_type=acc_type, attributes=attributes, rmode=rmode, sat=sat,
                     quant_param=quant_param, quant_tile=quant_tile, relu_param=relu_param,
                     relu_tile=relu_tile, row_max_in=row_max_in, engine=engine)
    return commit(plan, compute(plan, progress), status)


def _or_all(f: Any) -> int:
    arr = np.asarray(f)
    if arr.size == 0:
        return 0
    return int(np.bitwise_or.reduce(arr.astype(np.uint8, copy=False), axis=None)) & 0x1F
