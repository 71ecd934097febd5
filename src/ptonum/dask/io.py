"""Chunked inputs: a Zarr array or a ``.npy`` file as a ``dask.array``, read chunk by chunk.

A ``.npy`` file is opened memory-mapped inside each chunk task (only the path
travels to the workers, never the data), so a file larger than memory is read
one chunk at a time.  Zarr is Dask's native chunked format: ``dask.array.from_zarr``.

No spec counterpart (file access only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Tuple

import numpy as np

from .._util import int_text
from ..errors import UsageError
from ..npyfile import check_numpy_file, numpy_read_error
from .cluster import require_dask

__all__ = ["NpyTile", "open_tile", "parse_chunks", "is_zarr"]


def parse_chunks(text: Any, option: str = "--chunks") -> Tuple[int, int]:
    """``"1024x4096"`` (or ``1024,4096``) -> ``(1024, 4096)``; both positive.

    Raises :class:`UsageError` naming ``option`` otherwise.
    """
    if isinstance(text, tuple) and len(text) == 2 and all(isinstance(v, int) for v in text):
        parts = [str(v) for v in text]
    else:
        parts = [p.strip() for p in str(text).lower().replace("x", ",").split(",")]
    try:
        r, c = (int_text(p, decimal_only=True) for p in parts)
    except ValueError:
        raise UsageError(f"{option} = {text!r}: expected ROWSxCOLUMNS, e.g. 1024x4096") from None
    if r < 1 or c < 1:
        raise UsageError(f"{option} = {text!r}: chunk rows and columns must be positive")
    return r, c


class NpyTile:
    """A ``.npy`` file as a lazily read array (``shape``, ``dtype``, ``ndim``, ``__getitem__``).

    Each ``__getitem__`` memory-maps the file and copies out the requested block in native byte
    order; pickling keeps only the path and header (for Dask workers).
    Raises :class:`UsageError` when the file is not a readable numeric ``.npy``, or holds more or fewer
    bytes than its header's shape and dtype (:func:`ptonum.npyfile.check_numpy_file`, the check and
    message of the command line's inputs).
    """

    def __init__(self, path: Any) -> None:
        self.path = str(path)
        check_numpy_file("ACC", Path(self.path))
        try:
            mm = np.load(self.path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise numpy_read_error("ACC", Path(self.path), exc) from None
        self.shape: Tuple[int, ...] = tuple(int(s) for s in mm.shape)
        self.dtype = mm.dtype.newbyteorder("=") if not mm.dtype.isnative else mm.dtype
        self.ndim = len(self.shape)
        del mm

    def __getitem__(self, key: Any) -> np.ndarray:
        mm = np.load(self.path, mmap_mode="r", allow_pickle=False)
        return np.array(mm[key], dtype=self.dtype)


def is_zarr(path: Any) -> bool:
    """True for a directory holding a Zarr array or group (v2 or v3 metadata), or a ``*.zarr`` name."""
    p = Path(path)
    if p.suffix.lower() == ".zarr":
        return True
    return p.is_dir() and any((p / f).exists() for f in ("zarr.json", ".zarray", ".zgroup"))


def open_tile(path: Any, chunks: Optional[Tuple[int, int]] = None, *, key: Optional[str] = None) -> Any:
    """Open a Zarr array/group or a ``.npy`` file as a dask array (nothing is read yet).

    ``chunks``: ``(rows, columns)``; default: the Zarr array's own chunks, or Dask's automatic
    chunking (about 128 MiB) for ``.npy``.  A Zarr *group* needs ``key`` unless it holds exactly
    one array (or one named ``acc``).

    Raises :class:`UsageError` for a missing path, an unknown suffix, a group without a unique
    array, or a file that is not a numeric ``.npy``.
    """
    require_dask()
    import dask.array as da

    p = Path(path)
    if not p.exists():
        raise UsageError(f"ACC: no such file or directory: {path}")
    if is_zarr(p):
        import zarr

        try:
            node = zarr.open(str(p), mode="r")
        except Exception as exc:  # zarr raises several types for a damaged store
            raise UsageError(f"ACC: {path}: not a readable Zarr store ({exc})") from None
        if isinstance(node, zarr.Group):
            names = sorted(name for name, _ in node.arrays())
            if key is None:
                if len(names) == 1:
                    key = names[0]
                elif "acc" in names:
                    key = "acc"
                else:
                    raise UsageError(f"ACC: {path} is a Zarr group with arrays {', '.join(names) or '(none)'}; "
                                     "choose one with --key")
            if key not in names:
                raise UsageError(f"ACC: {path} has no array {key!r} (it has {', '.join(names) or 'none'})")
            arr = node[key]
            if not isinstance(arr, zarr.Array):
                raise UsageError(f"ACC: {path}: {key!r} is a Zarr group, not an array")
        else:
            if key is not None:
                raise UsageError(f"ACC: {path} is a Zarr array; --key applies to a Zarr group")
            arr = node
        return da.from_zarr(arr, chunks=chunks if chunks is not None else arr.chunks)
    if p.suffix.lower() == ".npy":
        if key is not None:
            raise UsageError(f"ACC: {path} is a .npy file; --key applies to .npz and Zarr groups")
        tile = NpyTile(p)
        return da.from_array(tile, chunks=chunks if chunks is not None else "auto", asarray=True, fancy=False,
                             name=f"npy-{abs(hash((tile.path, p.stat().st_mtime_ns))):x}")
    raise UsageError(f"ACC: {path}: chunked input must be a Zarr store or a .npy file")
