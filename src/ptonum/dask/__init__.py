"""ptonum on Dask: tiles larger than memory, batches of tiles and exhaustive sweeps across a cluster.

Install with ``pip install 'ptonum[dask]'`` (``dask[array]``, ``distributed``,
``zarr``).  Every function gives the bits and flags of the single-process
model; Dask only decides where the chunks run.

* :func:`postprocess` -- :func:`ptonum.fpatr.postprocess` on a ``dask.array``
  accumulator of any chunking (lazy result; ``.compute()`` /
  ``.to_zarr(path)``).
* :func:`to_e8m0`, :func:`encode`, :func:`decompose` -- the element-wise
  functions on dask arrays.
* :func:`open_tile` -- a Zarr array or a ``.npy`` file as a chunked dask array
  (memory-mapped, read chunk by chunk on the workers).
* :func:`open_client` -- where work runs: an existing scheduler, a local
  cluster of N worker processes (started with ``spawn``), or this process.

Layer: above :mod:`ptonum.conformance` and :mod:`ptonum.fpatr`, below
:mod:`ptonum.cli` (docs/design.md).  See docs/scale-out.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .cluster import WORKER_START_METHOD, default_workers, open_client, require_dask
    from .elementwise import decompose, encode, to_e8m0
    from .io import open_tile, parse_chunks
    from .run import run_tasks
    from .tile import ZARR_ARRAYS, DaskPostprocessResult, postprocess

#: where each public name lives; a submodule is imported on first use of one of its names, so that
#: ``ptonum.dask.io.is_zarr`` (asked by every ``ptonum postprocess``) loads no model module
_HOMES = {
    "WORKER_START_METHOD": "cluster", "default_workers": "cluster", "open_client": "cluster",
    "require_dask": "cluster", "decompose": "elementwise", "encode": "elementwise", "to_e8m0": "elementwise",
    "open_tile": "io", "parse_chunks": "io", "run_tasks": "run", "ZARR_ARRAYS": "tile",
    "DaskPostprocessResult": "tile", "postprocess": "tile",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    """The module's names with the lazily loaded ones (tab completion lists the public API)."""
    return sorted(set(globals()) | set(_HOMES))


__all__ = [
    "postprocess",
    "DaskPostprocessResult",
    "ZARR_ARRAYS",
    "to_e8m0",
    "encode",
    "decompose",
    "open_tile",
    "parse_chunks",
    "open_client",
    "default_workers",
    "require_dask",
    "run_tasks",
    "WORKER_START_METHOD",
]
