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

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Tuple

import numpy as np

from .._util import check_bool, check_engine
from ..errors import TileLegalityError, UsageError
from ..flags import StatusRegister, flag_names
from ..formats import TileDataType, parse_data_type
from ..rounding import parse_rounding_mode
from .attributes import (
    FPATRAttributes,
    check_accumulator_type,
    check_datr,
    check_fields,
    effective_control,
    output_type,
)
from .element import _config, destination_dtype, postprocess_element
from .params import check_quant_param, check_relu_param
from .reduction import fold_groups, reduction_step

__all__ = ["PostprocessResult", "postprocess", "BLOCK_ELEMENTS"]

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


def _typed_view(bits: np.ndarray, t: TileDataType) -> np.ndarray:
    import ml_dtypes

    T = TileDataType
    views = {T.FP32: np.float32, T.FP16: np.float16, T.BF16: ml_dtypes.bfloat16,
             T.E4M3: ml_dtypes.float8_e4m3fn, T.S8: np.int8, T.S16: np.int16, T.S32: np.int32,
             T.U32: np.uint32}
    if t in views:
        return bits.view(views[t])
    if t is TileDataType.S4X2:
        nib = (bits & np.uint8(0x0F)).astype(np.int8)
        out = np.where(nib >= 8, nib - np.int8(16), nib).astype(np.int8)
        out.flags.writeable = False
        return out
    return bits  # HiF8: no numpy dtype; raw bits (see PostprocessResult.decode)


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
        return _typed_view(self.d_bits, self.dst_type)

    @property
    def row_max(self) -> Optional[np.ndarray]:
        """RowMaxOut as float32/int32/uint32 (the accumulator type), or ``None``."""
        return None if self.row_max_bits is None else _typed_view(self.row_max_bits, self.acc_type)

    @property
    def group_max(self) -> Optional[np.ndarray]:
        """GroupMaxOut as float32/int32/uint32 (the accumulator type), or ``None``."""
        return None if self.group_max_bits is None else _typed_view(self.group_max_bits, self.acc_type)

    @property
    def flag_names(self) -> str:
        """``"OF|NX"``-style text of :attr:`flags` (``"-"`` when none)."""
        return flag_names(self.flags)

    def decode(self) -> np.ndarray:
        """D as exact ``float64`` values (±inf/NaN for specials).

        HiF8 goes through :func:`ptonum.formats.to_float64`; every other
        destination converts its typed view :attr:`d` (exact for all of them).
        """
        if self.dst_type is TileDataType.HiF8:
            from .. import formats

            to_f64 = getattr(formats, "to_float64")
            return np.asarray(to_f64(TileDataType.HiF8, self.d_bits), dtype=np.float64)
        return np.asarray(self.d, dtype=np.float64)

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
        m, n = self.d_bits.shape
        nib = self.d_bits & np.uint8(0x0F)
        if n % 2:
            nib = np.concatenate([nib, np.zeros((m, 1), np.uint8)], axis=1)
        return (nib[:, 0::2] | (nib[:, 1::2] << np.uint8(4))).astype(np.uint8)


# ---------------------------------------------------------------------------
# Argument normalisation (all before any computation)


def _attributes(value: Any) -> FPATRAttributes:
    if isinstance(value, FPATRAttributes):
        return value
    if isinstance(value, Mapping):
        try:
            return FPATRAttributes.from_fields(**dict(value))
        except TypeError as exc:
            raise UsageError(f"attributes: {exc}") from None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return FPATRAttributes.from_word(int(value))
    raise UsageError(
        f"attributes = {value!r}: expected an FPATRAttributes, a 32-bit B.FPATR word or a dict of named fields"
    )


def _asarray(name: str, value: Any) -> np.ndarray:
    if isinstance(value, (bool, np.bool_)):
        raise UsageError(f"{name} = {value!r}: expected an array, got a boolean")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{name}: cannot be read as an array ({exc})") from None
    return arr


def _int_bits(name: str, arr: np.ndarray, width: int) -> np.ndarray:
    """Raw encodings in an integer (or object-int) array -> uint32/uint64, checked, minimal copies."""
    out_dtype = np.uint32 if width == 32 else np.uint64
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
            pos: Tuple[int, ...] = tuple(int(i) for i in np.argwhere(bad)[0])
            where = f"[{', '.join(map(str, pos))}]" if arr.ndim else ""
            v = int(arr[pos])
            what = f"{v}" if v < 0 else f"{v:#x}"
            raise UsageError(f"{name}{where} = {what}: does not fit in {width} bits")
    if arr.dtype == out_dtype:
        return arr
    return arr.astype(out_dtype)


def _accumulator(acc: Any, acc_type: Any) -> Tuple[np.ndarray, TileDataType]:
    arr = _asarray("acc", acc)
    given = None if acc_type is None else parse_data_type(acc_type, "acc_type")
    if arr.dtype == np.float32:
        if given is not None and given is not TileDataType.FP32:
            raise UsageError(f"acc: float32 values are an FP32 accumulator, but acc_type = {given.name}")
        bits, t = arr.view(np.uint32), TileDataType.FP32
    elif arr.dtype == np.int32:
        if given is not None and given is not TileDataType.S32:
            raise UsageError(f"acc: int32 values are an S32 accumulator, but acc_type = {given.name}")
        bits, t = arr.view(np.uint32), TileDataType.S32
    elif arr.dtype.kind == "f":
        raise UsageError(
            f"acc: dtype {arr.dtype} is not an accumulator; pass float32 values (FP32), int32 (S32) "
            "or raw 32-bit encodings with acc_type"
        )
    else:
        if given is None:
            raise UsageError(
                f"acc: dtype {arr.dtype} holds raw encodings; give acc_type (FP32, S32 or U32) "
                "or pass float32 / int32 values"
            )
        bits, t = _int_bits("acc", arr, 32), given
    if bits.ndim != 2 or bits.shape[0] < 1 or bits.shape[1] < 1:
        raise UsageError(f"acc: expected a 2-D M x N accumulator with M, N >= 1, got shape {bits.shape}")
    return bits, t


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
        bits = _int_bits("row_max_in", arr, 32)
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
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise UsageError(f"{name} = {value!r}: expected a 64-bit parameter word (an int)")
    iv = int(value)
    if iv < 0 or iv >> 64:
        raise UsageError(f"{name} = {iv:#x}: a parameter word is 64 bits")
    return iv


def _presence(name: str, given: bool, needed: bool, why_needed: str, why_not: str) -> None:
    if needed and not given:
        raise TileLegalityError(f"{name} is missing: {why_needed} ({_RULE_SOURCES[name]})")
    if given and not needed:
        raise TileLegalityError(f"{name} was given but is not an operand: {why_not} ({_RULE_SOURCES[name]})")


# ---------------------------------------------------------------------------
# The operation


ProgressFn = Callable[[int, int], None]


def postprocess(
    acc: Any,
    *,
    acc_type: Any = None,
    attributes: Any,
    rmode: Any = "NONE",
    sat: Any = False,
    quant_param: Optional[int] = None,
    quant_tile: Any = None,
    relu_param: Optional[int] = None,
    relu_tile: Any = None,
    row_max_in: Any = None,
    status: Optional[StatusRegister] = None,
    engine: str = "fast",
    progress: Optional[ProgressFn] = None,
) -> PostprocessResult:
    """Run one complete B.FPATR post-process of an M x N accumulator tile.

    Arguments:
        acc: the M x N accumulator (M, N >= 1): ``float32`` values (FP32),
            ``int32`` values (S32), or raw 32-bit encodings in any integer
            dtype together with ``acc_type``.
        acc_type: FP32, S32 or U32 (name, code or member); optional for
            ``float32``/``int32`` input, required for raw encodings.
        attributes: an :class:`FPATRAttributes`, the 32-bit B.FPATR word, or a
            dict of named fields for :meth:`FPATRAttributes.from_fields`.
        rmode, sat: B.DATR RMode (name or code 0-7; NONE resolves to RNE) and Sat.
        quant_param: the scalar quantization/shift word (64-bit int) of a scalar mode.
        quant_tile: the 1 x N (or length-N) U64 quantization words of a vector mode.
        relu_param: the scalar FP19 activation word (64-bit int) for ReluMode 2.
        relu_tile: the 1 x N U64 activation words for ReluMode 3.
        row_max_in: RowMaxIn, M x 1 (or length M) raw encodings or values of
            the accumulator dtype; required exactly when RowMaxInit=1.
        status: a :class:`StatusRegister`; the result flags are OR-ed into it
            after everything is computed.
        engine: ``"fast"`` (numpy, row blocks of about :data:`BLOCK_ELEMENTS`
            elements) or ``"reference"`` (element by element).
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
            unknown names, words wider than 64 bits, bad status/progress/engine).

    Source: ADR-0085 D175-D181; ``CommitMatrixResult``, ``MatrixPostProcessResult``,
    ``MatrixRowMaxResult``, ``MatrixGroupMaxResult`` and the preflight
    ``BundleMatrixPostProcessSourcesLegal``.
    """
    # ---------------- preflight: nothing below this block may fail
    eng = check_engine(engine)
    if status is not None and not isinstance(status, StatusRegister):
        raise UsageError(f"status = {status!r}: expected a ptonum.StatusRegister or None")
    if progress is not None and not callable(progress):
        raise UsageError(f"progress = {progress!r}: expected a callable(rows_done, rows_total) or None")
    attrs = _attributes(attributes)
    check_fields(attrs)
    mode = attrs.pre_quant_mode
    info = attrs.mode_info
    rm = parse_rounding_mode(rmode, "rmode")
    st = check_bool("sat", sat)
    check_datr(mode, rm, st)
    bits, t = _accumulator(acc, acc_type)
    check_accumulator_type(mode, t)
    m, n = bits.shape

    # Parameter presence (B.IOR dense order / Local source order, ADR-0064).
    mode_desc = f"PreQuantMode {int(mode)} ({mode.name}) takes a {info.parameter} parameter"
    _presence("quant_param", quant_param is not None, info.parameter == "scalar",
              f"{mode_desc} from the B.IOR stream",
              mode_desc if info.parameter != "none" else f"PreQuantMode {int(mode)} ({mode.name}) takes no parameter")
    _presence("quant_tile", quant_tile is not None, info.parameter == "vector",
              f"{mode_desc} tile (1 x {n} U64)",
              mode_desc if info.parameter != "none" else f"PreQuantMode {int(mode)} ({mode.name}) takes no parameter")
    relu = int(attrs.relu_mode)
    _presence("relu_param", relu_param is not None, relu == 2,
              "ReluMode=2 (scalar LReLU/PReLU) reads one FP19 word from the B.IOR stream",
              f"only ReluMode=2 takes a scalar activation word (ReluMode={relu})")
    _presence("relu_tile", relu_tile is not None, relu == 3,
              f"ReluMode=3 (vector PReLU) reads a 1 x {n} U64 activation tile",
              f"only ReluMode=3 takes an activation tile (ReluMode={relu})")
    _presence("row_max_in", row_max_in is not None, attrs.row_max_init,
              f"RowMaxInit=1 reads RowMaxIn, {m} x 1 of the accumulator type",
              "RowMaxIn is read only when RowMaxEn=1 and RowMaxInit=1")

    qp: Any
    if info.parameter == "scalar":
        qword = _scalar_word("quant_param", quant_param)
        check_quant_param(mode, qword, "quant_param")
        qp = np.uint64(qword)
    elif info.parameter == "vector":
        qtile = _vector_tile("quant_tile", quant_tile, n)
        check_quant_param(mode, qtile, "quant_tile")
        qp = qtile
    else:
        qp = np.uint64(1)  # MatrixPostProcessResult passes 1 when the mode has no parameter
    rp: Any
    if relu == 2:
        rword = _scalar_word("relu_param", relu_param)
        check_relu_param(rword, "relu_param")
        rp = np.uint64(rword)
    elif relu == 3:
        rtile = _vector_tile("relu_tile", relu_tile, n)
        check_relu_param(rtile, "relu_tile")
        rp = rtile
    else:
        rp = np.uint64(0)
    init = _row_max_in(row_max_in, t, m) if row_max_in is not None else None

    dst = output_type(mode, t)
    eff_rmode, eff_sat = effective_control(mode, rm, st)
    carrier = destination_dtype(dst)
    group = attrs.group_n

    # ---------------- compute (pre-commit state only)
    d_bits = np.empty((m, n), carrier)
    row_out = np.empty((m, 1), np.uint32) if attrs.row_max_en else None
    group_out = np.empty((m, -(-n // group)), np.uint32) if attrs.group_max_en else None
    flags = 0
    block = m if eng == "reference" else max(1, BLOCK_ELEMENTS // n)
    from ..kernels import numba_enabled

    use_kernel = eng == "fast" and numba_enabled(m * n)
    if use_kernel:  # one fused compiled pass per row block (ptonum.kernels.postprocess)
        from ..kernels.postprocess import run_tile

        kcfg = _config(mode, attrs.relu_mode, t, eff_rmode, eff_sat)
        if progress is None:
            block = m  # the kernel needs no temporaries: one call, one parallel region
    for r0 in range(0, m, block):
        r1 = min(m, r0 + block)
        if use_kernel:
            flags |= run_tile(
                np.ascontiguousarray(bits[r0:r1]).reshape(-1), m=r1 - r0, n=n, cfg=kcfg, qp=qp, rp=rp,
                out=d_bits[r0:r1].reshape(-1), red_type=t, max_abs=attrs.max_abs_en,
                row_out=None if row_out is None else row_out[r0:r1].reshape(-1),
                init=None if init is None else np.ascontiguousarray(init[r0:r1]).reshape(-1),
                group_n=group if group_out is not None else 0,
                group_out=None if group_out is None else group_out[r0:r1].reshape(-1),
            )
            if progress is not None:
                progress(r1, m)
            continue
        blk = bits[r0:r1]
        db, df = postprocess_element(
            blk, pre_quant_mode=mode, relu_mode=attrs.relu_mode, acc_type=t,
            quant_param=qp, relu_param=rp, rmode=eff_rmode, sat=eff_sat, engine=eng,
        )
        d_bits[r0:r1] = np.asarray(db).astype(carrier, copy=False)
        flags |= _or_all(df)
        del db, df
        if row_out is not None:
            rb, rf = fold_groups(blk, n, t, attrs.max_abs_en, eng)
            if init is not None:
                rb, f2 = reduction_step(init[r0:r1], rb, acc_type=t, max_abs=attrs.max_abs_en, engine=eng)
                flags |= _or_all(f2)
            row_out[r0:r1] = rb
            flags |= _or_all(rf)
        if group_out is not None:
            gb, gf = fold_groups(blk, group, t, attrs.max_abs_en, eng)
            group_out[r0:r1] = gb
            flags |= _or_all(gf)
        if progress is not None:
            progress(r1, m)
    for a in (d_bits, row_out, group_out):
        if a is not None:
            a.flags.writeable = False

    # ---------------- commit: outputs and sticky status together
    if status is not None:
        status.record(flags)
    return PostprocessResult(
        d_bits=d_bits, row_max_bits=row_out, group_max_bits=group_out,
        flags=int(flags), dst_type=dst, acc_type=t,
    )


def _or_all(f: Any) -> int:
    arr = np.asarray(f)
    if arr.size == 0:
        return 0
    return int(np.bitwise_or.reduce(arr.astype(np.uint8, copy=False), axis=None)) & 0x1F
