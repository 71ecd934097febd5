"""The B.FPATR tile operation on a ``dask.array`` accumulator (any chunking, the single-process bits).

How a chunked run gives exactly the bits of :func:`ptonum.fpatr.postprocess`
(our words; the tile operation's own plan/compute/join functions do the work):

* the whole call is checked first by :func:`ptonum.fpatr.tile.preflight_shape`
  (every rule of the tile operation's preflight: attributes, RMode/Sat, the
  accumulator class, each parameter word and each element of a quant/relu
  tile, RowMaxIn, shapes and dtypes); a rejection raises before any task
  exists;
* each chunk ``[rows, cols]`` is one task: :meth:`TilePlan.block` cuts the
  plan (the quant/relu tiles keep the chunk's columns, RowMaxIn its rows) and
  :func:`ptonum.fpatr.tile.compute` runs the fast (or reference) engine on it,
  folding RowMax over the chunk's columns and GroupMax over the groups the
  chunk touches (a group cut by the chunk's left edge is folded from the
  chunk's first column);
* one task per row block joins the chunks' partial folds left to right with
  :func:`ptonum.fpatr.tile.join_columns`: one reduction step
  (``TileProfileMatrixReductionStepWithFlags``) with the left partial as
  ``current`` and the right one as ``candidate``, i.e. the ASL's increasing
  column order; RowMaxIn is folded once, as the last step of the row, when
  the joined block spans the tile;
* the flags are the OR of every chunk's and every joining step's flags; they
  reach ``status`` (with :func:`ptonum.fpatr.tile.commit`) only after every
  task has finished.

Source: ADR-0085 D175-D181; ``CommitMatrixResult``, ``MatrixPostProcessResult``,
``MatrixRowMaxResult``, ``MatrixGroupMaxResult`` and the preflight
``BundleMatrixPostProcessSourcesLegal`` (via :mod:`ptonum.fpatr.tile`).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from functools import partial
from operator import getitem
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._util import unmasked
from ..errors import UsageError
from ..flags import StatusRegister, flag_names
from ..formats import TileDataType
from ..fpatr.element import destination_dtype
from ..fpatr.params import ParamWordLike
from ..fpatr.tile import (PostprocessResult, TileOutputs, TilePlan, commit, compute, decode_bits, join_columns,
                          pack_s4x2, preflight_shape, typed_view)
from .cluster import require_dask
from .io import named_zarr_reads
from .run import ProgressFn, run_tasks

__all__ = ["DaskPostprocessResult", "postprocess", "ZARR_ARRAYS"]

#: names of the arrays of a result Zarr group (those enabled are written)
ZARR_ARRAYS = ("d", "row_max", "group_max")


# ---------------------------------------------------------------------------
# Task functions (run on the workers; module-level so they pickle by name)


def _block_outputs(plan: TilePlan, acc_block: Any, target: Optional[Tuple[str, Tuple[int, int]]]
                   ) -> Tuple[Optional[np.ndarray], TileOutputs]:
    """Compute one chunk; return ``(D or None, the chunk's reductions and flags without D)``.

    With ``target = (zarr group path, (row, column))`` the chunk's D is written there instead of
    returned (the chunk is one Zarr chunk of array ``d``, so no two tasks write the same chunk).
    """
    # a chunk of numpy masked arrays: refused naming the masked element's index in the whole tile
    block = plan.block(slice(0, plan.m), slice(0, plan.n), np.asarray(unmasked("acc", acc_block, plan.origin)))
    out = compute(block)
    d: Optional[np.ndarray] = out.d_bits
    if target is not None:
        import zarr

        path, (r0, c0) = target
        arr = zarr.open_array(os.path.join(path, "d"), mode="r+")
        arr[r0:r0 + plan.m, c0:c0 + plan.n] = out.d_bits
        d = None
    reductions = TileOutputs(d_bits=np.empty((plan.m, 0), out.d_bits.dtype), row_max_bits=out.row_max_bits,
                             group_max_bits=out.group_max_bits, flags=out.flags)
    return d, reductions


def _join_row_block(plans: Sequence[TilePlan], parts: Sequence[TileOutputs],
                    target: Optional[Tuple[str, int]]) -> TileOutputs:
    """Join the partial folds of one row block's chunks in increasing column order.

    With ``target = (zarr group path, first row)`` RowMaxOut/GroupMaxOut of these rows are
    written to arrays ``row_max``/``group_max`` and dropped from the result.
    """
    plan, out = plans[0], parts[0]
    for p, o in zip(plans[1:], parts[1:]):
        plan, out = join_columns(plan, out, p, o)
    if target is not None:
        import zarr

        path, r0 = target
        for name, arr in (("row_max", out.row_max_bits), ("group_max", out.group_max_bits)):
            if arr is not None:
                z = zarr.open_array(os.path.join(path, name), mode="r+")
                z[r0:r0 + arr.shape[0], :] = arr
        out = TileOutputs(d_bits=out.d_bits, row_max_bits=None, group_max_bits=None, flags=out.flags)
    return out


def _or_flags(*flags: int) -> int:
    acc = 0
    for f in flags:
        acc |= int(f)
    return acc


# ---------------------------------------------------------------------------
# The lazy result


@dataclass(frozen=True, eq=False)
class _Graph:
    """The task graph of one chunked run (built once per result and shared by every output).

    One task per chunk (``chunk``: returns ``(D or None, reductions)``), a ``d`` and a
    ``red`` getitem per chunk, one ``join`` task per row block, a ``row_max`` / ``group_max``
    attribute task per row block and one ``flags`` task; ``dsk`` also holds the accumulator's tasks.
    """

    dsk: Dict[Any, Any]
    names: Dict[str, str]
    row_chunks: Tuple[int, ...]
    col_chunks: Tuple[int, ...]

    def keys(self, kind: str) -> List[Any]:
        name = self.names[kind]
        if kind in ("chunk", "d", "red"):
            return [(name, i, j) for i in range(len(self.row_chunks)) for j in range(len(self.col_chunks))]
        if kind == "flags":
            return [name]
        return [(name, i) if kind == "join" else (name, i, 0) for i in range(len(self.row_chunks))]


def _offsets(chunks: Sequence[int]) -> List[int]:
    out = [0]
    for c in chunks:
        out.append(out[-1] + int(c))
    return out


def _flags_of(*outs: TileOutputs) -> int:
    return _or_flags(*(o.flags for o in outs))


def _build(plan: TilePlan, acc: Any, zarr_path: Optional[str]) -> _Graph:
    """The task graph (a plain dict, legacy tuple tasks) of a chunked run over ``acc``."""
    rows, cols = acc.chunks
    r_off, c_off = _offsets(rows), _offsets(cols)
    acc_keys = acc.__dask_keys__()
    token = uuid.uuid4().hex[:16]
    names = {k: f"ptonum-{k}-{token}" for k in ("chunk", "d", "red", "join", "row_max", "group_max", "flags")}
    dsk: Dict[Any, Any] = dict(acc.__dask_graph__())
    joins = []
    for i in range(len(rows)):
        row_plans: List[TilePlan] = []
        for j in range(len(cols)):
            sub = plan.block(slice(r_off[i], r_off[i + 1]), slice(c_off[j], c_off[j + 1]))
            row_plans.append(sub)
            target = None if zarr_path is None else (zarr_path, (r_off[i], c_off[j]))
            ck = (names["chunk"], i, j)
            dsk[ck] = (partial(_block_outputs, sub, target=target), acc_keys[i][j])
            dsk[(names["d"], i, j)] = (getitem, ck, 0)
            dsk[(names["red"], i, j)] = (getitem, ck, 1)
        jt = None if zarr_path is None else (zarr_path, r_off[i])
        jk = (names["join"], i)
        dsk[jk] = (partial(_join_row_block, row_plans, target=jt), [(names["red"], i, j) for j in range(len(cols))])
        dsk[(names["row_max"], i, 0)] = (getattr, jk, "row_max_bits")
        dsk[(names["group_max"], i, 0)] = (getattr, jk, "group_max_bits")
        joins.append(jk)
    dsk[names["flags"]] = (_flags_of, *joins)
    return _Graph(dsk=dsk, names=names, row_chunks=tuple(int(r) for r in rows),
                  col_chunks=tuple(int(c) for c in cols))


class DaskPostprocessResult:
    """The lazy result of :func:`postprocess` on a dask array.

    Attributes (all lazy; nothing runs until :meth:`compute`, :meth:`to_zarr` or a
    ``.compute()`` of one of them):
        d_bits: M x N ``dask.array`` of destination encodings (carrier of the destination:
            uint8 / uint16 / uint32), chunked like the accumulator.
        row_max_bits: M x 1 ``uint32`` dask array (RowMaxOut), or ``None`` when RowMaxEn=0.
        group_max_bits: M x ceil(N/GroupN) ``uint32`` dask array (GroupMaxOut), or ``None``.
        flags: a ``dask.delayed`` int, the OR of every element's and reduction step's flags.
        flag_names: a ``dask.delayed`` str, :attr:`flags` as ``"OF|NX"`` (``"-"`` when none).
        d, row_max, group_max: the typed views of the in-memory result, lazily (dask arrays:
            D as float16/float32/int8/..., ml_dtypes bfloat16/float8_e4m3fn, S4X2 as sign-extended
            int8, HiF8 as its uint8 bits; RowMaxOut/GroupMaxOut as float32/int32/uint32, or None).
        dst_type, acc_type: the destination and accumulator Tile DataTypes.
        plan: the whole-tile :class:`ptonum.fpatr.tile.TilePlan` the preflight returned.

    The same names as :class:`ptonum.fpatr.PostprocessResult` (plus :meth:`decode` and
    :meth:`s4x2_packed`), each lazy; ``.compute()`` of one gives what the in-memory result holds.

    Computing one attribute alone does not touch ``status``; :meth:`compute` and
    :meth:`to_zarr` OR the flags into it once everything has finished.
    """

    def __init__(self, plan: TilePlan, acc: Any, status: Optional[StatusRegister]) -> None:
        self.plan = plan
        self.acc = acc
        self.status = status
        self.dst_type: TileDataType = plan.dst_type
        self.acc_type: TileDataType = plan.acc_type
        self._graph: Optional[_Graph] = None

    # -- lazy arrays
    def _g(self) -> _Graph:
        if self._graph is None:
            self._graph = _build(self.plan, self.acc, None)
        return self._graph

    @property
    def d_bits(self) -> Any:
        import dask.array as da

        g = self._g()
        return da.Array(g.dsk, g.names["d"], (g.row_chunks, g.col_chunks), dtype=destination_dtype(self.dst_type))

    def _reduction(self, kind: str, width: int) -> Any:
        import dask.array as da

        g = self._g()
        return da.Array(g.dsk, g.names[kind], (g.row_chunks, (width,)), dtype=np.uint32)

    @property
    def row_max_bits(self) -> Any:
        return self._reduction("row_max", 1) if self.plan.attributes.row_max_en else None

    @property
    def group_max_bits(self) -> Any:
        a = self.plan.attributes
        return self._reduction("group_max", -(-self.plan.n // a.group_n)) if a.group_max_en else None

    @property
    def flags(self) -> Any:
        from dask.delayed import Delayed

        g = self._g()
        return Delayed(g.names["flags"], g.dsk)

    @property
    def flag_names(self) -> Any:
        from dask import delayed

        return delayed(flag_names, pure=True)(self.flags)

    @staticmethod
    def _typed(bits: Any, t: TileDataType) -> Any:
        dtype = typed_view(np.zeros(0, bits.dtype), t).dtype
        return bits.map_blocks(typed_view, t, dtype=dtype)

    @property
    def d(self) -> Any:
        return self._typed(self.d_bits, self.dst_type)

    @property
    def row_max(self) -> Any:
        bits = self.row_max_bits
        return None if bits is None else self._typed(bits, self.acc_type)

    @property
    def group_max(self) -> Any:
        bits = self.group_max_bits
        return None if bits is None else self._typed(bits, self.acc_type)

    def decode(self) -> Any:
        """D as exact ``float64`` values (±inf/NaN for specials), a dask array chunked like D
        (:meth:`ptonum.fpatr.PostprocessResult.decode` block by block)."""
        return self.d_bits.map_blocks(decode_bits, self.dst_type, dtype=np.float64)

    def s4x2_packed(self) -> Any:
        """Packed S4X2 memory bytes, M x ceil(N/2) ``uint8``, a dask array
        (:meth:`ptonum.fpatr.PostprocessResult.s4x2_packed`).

        Raises :class:`UsageError` when D is not S4X2.
        Source: ADR-0085 D181 with ADR-0033 (nibble order) and ADR-0074 (row restart).
        """
        import dask.array as da

        if self.dst_type is not TileDataType.S4X2:
            raise UsageError(f"s4x2_packed: the destination is {self.dst_type.name}, not S4X2")
        bits = self.d_bits
        if bits.shape[1] % 2:  # a zero nibble after the last element of each row
            pad = da.zeros((bits.shape[0], 1), dtype=np.uint8, chunks=(bits.chunks[0], (1,)))
            bits = da.concatenate([bits, pad], axis=1)
        return pack_s4x2(bits)

    # -- running
    def compute(self, client: Any = None, progress: Optional[ProgressFn] = None) -> PostprocessResult:
        """Run every chunk and return the :class:`~ptonum.fpatr.PostprocessResult` (bits equal to
        :func:`ptonum.fpatr.postprocess` on the whole tile); then OR the flags into ``status``.

        ``client``: a ``distributed.Client`` (``None``: this process, Dask's default scheduler).
        ``progress(done, total)`` is called as chunk and join tasks finish.
        Raises whatever a task raised (e.g. :class:`UsageError` for a raw accumulator element
        wider than 32 bits, named by its index); ``status`` is then unchanged.
        """
        g = self._g()
        flat = g.keys("d")
        results = run_tasks(_fused(g.dsk, flat + g.keys("join")), flat + g.keys("join"), client=client,
                            progress=progress)
        ds, joins = results[:len(flat)], results[len(flat):]
        J = len(g.col_chunks)
        d = np.block([[ds[i * J + j] for j in range(J)] for i in range(len(g.row_chunks))])
        row = None if not self.plan.attributes.row_max_en else np.concatenate([j.row_max_bits for j in joins], axis=0)
        grp = None if not self.plan.attributes.group_max_en else np.concatenate(
            [j.group_max_bits for j in joins], axis=0)
        outputs = TileOutputs(d_bits=d, row_max_bits=row, group_max_bits=grp, flags=_or_flags(*(j.flags for j in joins)))
        return commit(self.plan, outputs, self.status)

    def to_zarr(self, path: Any, *, client: Any = None, progress: Optional[ProgressFn] = None,
                overwrite: bool = False, attrs: Optional[Dict[str, Any]] = None, remove: Sequence[Any] = ()) -> int:
        """Write the result as a Zarr group at ``path``, all or nothing; return the flags.

        The group holds the arrays ``d`` (M x N destination encodings, chunked like the
        accumulator; an irregular chunking is first made regular), ``row_max`` (M x 1) and
        ``group_max`` (M x ceil(N/GroupN)) when enabled, all ``uint32`` but ``d``; its attributes
        are :func:`ptonum.fpatr.tile.run_record` (flags as an integer and as ``"OF|NX"``, the
        B.FPATR word and fields, the rounding mode the conversion used, Sat, B.DATR as given, the
        types, the engine: the keys and values of ``ptonum postprocess``'s ``STEM.flags.json``)
        and any ``attrs`` given.  Every chunk task writes its own Zarr chunk of
        ``d`` directly (nothing of D passes through this process).  The group is built in a
        temporary directory beside ``path`` and renamed into place only when every task
        succeeded; after a failed task, a lost worker or Ctrl-C nothing exists at ``path``
        (an existing ``path`` is replaced only with ``overwrite=True``).  The files or directories
        in ``remove`` (e.g. an earlier run's outputs of the same name) are taken away in the same
        commit (:meth:`ptonum.publish.Publication.remove`).  ``status`` gets the flags after the rename.

        Raises :class:`ptonum.publish.PublishError` (a :class:`UsageError`) when ``path``
        cannot be written, or whatever a task raised.
        """
        import zarr

        from ..publish import Publication

        acc = self.acc
        regular = tuple(max(c) for c in acc.chunks)
        if any(len(set(c[:-1])) > 1 or (len(c) > 1 and c[-1] > c[0]) for c in acc.chunks):
            acc = acc.rechunk(regular)
        m, n = self.plan.tile_shape
        a = self.plan.attributes
        with Publication() as pub:
            with pub.directory(Path(path), replace=overwrite) as tmp:
                group = zarr.open_group(str(tmp), mode="w")
                rc, cc = acc.chunks[0][0], acc.chunks[1][0]
                _create(group, "d", (m, n), (rc, cc), destination_dtype(self.dst_type))
                if a.row_max_en:
                    _create(group, "row_max", (m, 1), (rc, 1), np.uint32)
                if a.group_max_en:
                    ng = -(-n // a.group_n)
                    _create(group, "group_max", (m, ng), (rc, ng), np.uint32)
                g = _build(self.plan, acc, str(tmp))
                flat = g.keys("chunk")  # the chunk tasks write their D to Zarr
                keys = flat + g.keys("join")
                results = run_tasks(_fused(g.dsk, keys), keys, client=client, progress=progress)
                flags = _or_flags(*(j.flags for j in results[len(flat):]))
                group.attrs.update(_zarr_attributes(self.plan, flags, attrs))
            for stale in remove:
                pub.remove(stale)
        if self.status is not None:
            self.status.record(flags)
        return flags


def _fused(dsk: Dict[Any, Any], keys: List[Any]) -> Dict[Any, Any]:
    """The graph with each input chunk's read (a Zarr/.npy getter) inlined into its chunk task
    (``dask.array.optimization.optimize``): a chunk is read by the worker that computes it, never
    moved between workers.  The requested ``keys`` stay in the graph."""
    from dask.array.optimization import optimize

    out = dict(optimize(dsk, keys))
    return out if all(k in out for k in keys) else dsk


def _create(group: Any, name: str, shape: Tuple[int, int], chunks: Tuple[int, int], dtype: Any) -> None:
    """An empty array in a Zarr group (zarr 3 ``create_array``, zarr 2 ``create_dataset``)."""
    make = getattr(group, "create_array", None) or group.create_dataset
    make(name, shape=shape, chunks=chunks, dtype=dtype)


def _zarr_attributes(plan: TilePlan, flags: int, extra: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The group's attributes: :func:`ptonum.fpatr.tile.run_record` (the same keys and values as
    ``ptonum postprocess``'s ``STEM.flags.json``) and ``extra``."""
    doc = plan.record(flags)
    if extra:
        doc.update(extra)
    return doc


# ---------------------------------------------------------------------------
# The entry point


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
    allow_missing_chunks: bool = False,
) -> DaskPostprocessResult:
    """B.FPATR post-processing of a chunked M x N accumulator: :func:`ptonum.fpatr.postprocess` on Dask.

    Arguments are those of :func:`ptonum.fpatr.postprocess`, except ``acc``: a
    ``dask.array.Array`` (any chunking; a numpy array is wrapped in one chunk) of
    ``float32`` (FP32), ``int32`` (S32) or raw encodings with ``acc_type``.  The
    quant/relu tiles and RowMaxIn are numpy-sized (1 x N, M x 1) and are split
    with the chunks.

    Returns a :class:`DaskPostprocessResult`: lazy ``d_bits``, ``row_max_bits``,
    ``group_max_bits`` and ``flags``; ``.compute(client=...)`` gives a
    :class:`~ptonum.fpatr.PostprocessResult` equal bit for bit (D, RowMaxOut,
    GroupMaxOut, flags) to the single-process operation for every chunking;
    ``.to_zarr(path)`` writes the Zarr group.

    Raises, at the call and before any task is built (``status`` unchanged),
    everything :func:`ptonum.fpatr.postprocess`'s preflight raises
    (:class:`IllegalEncodingError`, :class:`TileLegalityError`,
    :class:`UsageError`), plus :class:`UsageError` for an accumulator with unknown
    chunk sizes or a missing Dask installation, and, unless ``allow_missing_chunks``, for an ``acc``
    whose graph reads a ``zarr.Array`` (``da.from_zarr``, inlined or not, or anything derived from it)
    with a chunk missing from its store (Zarr would read it as the fill value: a store copied in part
    would be a silent wrong tile): the whole array is checked (zarr's ``nchunks_initialized``, keys
    listed, nothing read), also when ``acc`` reads only part of it, and the message names the store and,
    for a directory store, the missing chunks' rows and columns (:func:`ptonum.dask.io.refuse_missing_chunks`).
    Not seen: a Zarr array behind another wrapper (``da.from_array(z[...])``, or a custom getter).
    ``allow_missing_chunks=True`` (a writer that leaves out chunks of fill value on purpose: zarr 3's
    default ``write_empty_chunks=False``) reads them as the fill value.  A raw (non-``float32``/``int32``)
    accumulator element that is not a 32-bit pattern can only be seen when its
    chunk runs: that task raises :class:`UsageError` and nothing is committed.

    Source: ADR-0085 D175-D181; ``CommitMatrixResult`` and the preflight
    ``BundleMatrixPostProcessSourcesLegal`` (through :mod:`ptonum.fpatr.tile`).
    """
    require_dask()
    import dask.array as da

    if status is not None and not isinstance(status, StatusRegister):
        raise UsageError(f"status = {status!r}: expected a ptonum.StatusRegister or None")
    if not isinstance(acc, da.Array):
        arr = np.asarray(unmasked("acc", acc))  # a masked element is refused now, naming acc[i, j]
        acc = da.from_array(arr, chunks=arr.shape or -1)
    # a Zarr array the caller opened (da.from_zarr): a missing chunk file refused now, a damaged chunk named when
    # computed
    acc = named_zarr_reads(acc, "acc", allow_missing_chunks=allow_missing_chunks)
    if any(np.isnan(c) for dim in acc.chunks for c in dim):
        raise UsageError("acc: the dask array has unknown chunk sizes; call acc.compute_chunk_sizes() first")
    plan = preflight_shape(tuple(int(s) for s in acc.shape), acc.dtype, acc_type=acc_type, attributes=attributes,
                           rmode=rmode, sat=sat, quant_param=quant_param, quant_tile=quant_tile,
                           relu_param=relu_param, relu_tile=relu_tile, row_max_in=row_max_in, engine=engine)
    return DaskPostprocessResult(plan, acc, status)
