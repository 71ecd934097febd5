"""Element-wise ptonum functions on dask arrays: TCVT to E8M0, the destination encoders, decomposition.

Each function checks its arguments at the call (the same errors as the numpy
function, raised before any task exists), then maps the numpy function over
the chunks; every chunk computes both outputs in one task.  Results are dask
arrays with the input's chunks and exactly the bits of the numpy function.
Element values (an encoding wider than the source, a non-finite value to
encode) can only be checked when their chunk runs: that task raises the same
typed error.

Source: as the wrapped functions -- ADR-0085 D183 ``ReferenceFloatToE8M0``;
``MatrixEncodeReal``; D182 ``TileNumericFiniteDecomposition``.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from .. import encode as _encode_mod
from .._util import check_engine, unmasked
from .. import formats as _formats
from .. import tcvt as _tcvt
from .cluster import require_dask
from .io import named_zarr_reads

__all__ = ["to_e8m0", "encode", "decompose"]


def _as_dask(name: str, x: Any) -> Any:
    """``x`` as a dask array; a numpy masked array with a masked element is refused now, naming
    ``name`` (:func:`ptonum._util.unmasked`), one with nothing masked is its data."""
    import dask.array as da

    if isinstance(x, da.Array):
        return named_zarr_reads(x, name)  # a damaged chunk of a Zarr store: named when computed
    arr = np.asarray(unmasked(name, x))
    return da.from_array(arr, chunks=arr.shape or ())


def _block(name: str, x: Any, block_info: Any) -> Any:
    """A chunk of a dask array of numpy masked arrays: refused naming the masked element by its index
    in the whole array ``name``; its data when nothing is masked."""
    where = block_info.get(0, {}).get("array-location") if isinstance(block_info, dict) else None
    return unmasked(name, x, tuple(lo for lo, _ in where) if where else ())


def _e8m0_block(x: np.ndarray, src_type: Any, rmode: Any, sat: Any, engine: str,
                block_info: Any = None) -> np.ndarray:
    x = _block("src_bits", x, block_info)
    codes, flags = _tcvt.to_e8m0(x, src_type=src_type, rmode=rmode, sat=sat, engine=engine)
    return np.stack([codes, flags])


def _encode_block(x: np.ndarray, dst_type: Any, rmode: Any, sat: Any, engine: str,
                  block_info: Any = None) -> np.ndarray:
    x = _block("values", x, block_info)
    bits, flags = _encode_mod.encode(x, dst_type, rmode=rmode, sat=sat, engine=check_engine(engine))
    return np.stack([bits, flags.astype(bits.dtype)])


def _decompose_block(x: np.ndarray, data_type: Any, lane: int, engine: str, block_info: Any = None) -> np.ndarray:
    x = _block("encoding", x, block_info)
    d = _formats.decompose(data_type, x, lane, engine=engine)
    return np.stack([d.available.astype(np.int64), d.negative.astype(np.int64),
                     d.significand.astype(np.int64), d.exponent.astype(np.int64)])


def _stacked(fn: Any, x: Any, k: int, dtype: Any, *args: Any) -> Any:
    import dask.array as da

    return da.map_blocks(fn, x, *args, dtype=dtype, new_axis=0, chunks=((k,),) + x.chunks,
                         meta=np.empty((0,) * (x.ndim + 1), dtype))


def to_e8m0(src_bits: Any, *, src_type: Any, rmode: Any = "NONE", sat: Any = False,
            engine: str = "fast") -> Tuple[Any, Any]:
    """:func:`ptonum.tcvt.to_e8m0` on a dask array of raw FP16/BF16/FP32 encodings.

    Returns ``(codes, flags)``: two ``uint8`` dask arrays with ``src_bits``' shape and chunks.
    Raises at the call what :func:`ptonum.tcvt.to_e8m0` raises for ``src_type``, ``rmode``,
    ``sat``, ``engine`` or a non-integer dtype; an element wider than the source raises
    :class:`UsageError` when its chunk runs.

    Source: ADR-0085 D183; ``ReferenceFloatToE8M0``.
    """
    require_dask()
    x = _as_dask("src_bits", src_bits)
    _tcvt.to_e8m0(np.zeros(0, x.dtype), src_type=src_type, rmode=rmode, sat=sat, engine=engine)
    s = _stacked(_e8m0_block, x, 2, np.uint8, src_type, rmode, sat, engine)
    return s[0], s[1]


def encode(values: Any, dst_type: Any, *, rmode: Any = "RNE", sat: Any = False,
           engine: str = "fast") -> Tuple[Any, Any]:
    """:func:`ptonum.encode.encode` on a dask array of exact real values (float64).

    Returns ``(bits, flags)`` dask arrays with the input's shape and chunks: bits
    uint8/uint16/uint32 at the destination width, flags of the same dtype (5-bit values).
    Raises at the call what :func:`ptonum.encode.encode` raises for ``dst_type``, ``rmode``,
    ``sat`` or ``engine``; a value it refuses raises when its chunk runs.

    Source: ``MatrixEncodeReal`` and the destination encoders (reference-quantization.asl).
    """
    require_dask()
    x = _as_dask("values", values)
    bits, _ = _encode_mod.encode(np.zeros(0, np.float64), dst_type, rmode=rmode, sat=sat, engine=check_engine(engine))
    s = _stacked(_encode_block, x, 2, bits.dtype, dst_type, rmode, sat, engine)
    return s[0], s[1]


def decompose(data_type: Any, encoding: Any, lane: int = 0, *, engine: str = "fast") -> Any:
    """:func:`ptonum.formats.decompose` on a dask array of encodings.

    Returns a :class:`ptonum.formats.Decomposition` of dask arrays (``available`` and
    ``negative`` bool, ``significand`` uint64, ``exponent`` int64) with the input's chunks.
    Raises at the call what :func:`ptonum.formats.decompose` raises for the type, lane, engine or
    dtype; an encoding wider than the carrier raises when its chunk runs.

    Source: ADR-0085 D182; ``TileNumericFiniteDecomposition``.
    """
    require_dask()
    x = _as_dask("encoding", encoding)
    _formats.decompose(data_type, np.zeros(0, x.dtype), lane, engine=engine)
    s = _stacked(_decompose_block, x, 4, np.int64, data_type, lane, engine)
    return _formats.Decomposition(s[0].astype(bool), s[1].astype(bool), s[2].astype(np.uint64), s[3])
