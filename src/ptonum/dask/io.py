"""Chunked inputs: a Zarr array or a ``.npy`` file as a ``dask.array``, read chunk by chunk.

A ``.npy`` file is opened memory-mapped inside each chunk task (only the path
travels to the workers, never the data), so a file larger than memory is read
one chunk at a time.  A Zarr array is read through :class:`ZarrTile`, which names the store and chunk when a
chunk cannot be decoded.

No spec counterpart (file access only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._util import int_text
from ..errors import PtonumError, UsageError
from ..npyfile import check_numpy_file, numpy_read_error
from .cluster import require_dask

__all__ = ["NpyTile", "ZarrTile", "open_tile", "parse_chunks", "is_zarr", "named_zarr_reads", "missing_chunks",
           "missing_chunks_text", "refuse_missing_chunks"]


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


class ZarrTile:
    """A Zarr array read through ``__getitem__`` (``shape``, ``dtype``, ``ndim``), naming the store
    when a chunk cannot be read.

    ``path`` is the store as given (named in the error), ``array`` the ``zarr.Array``, ``what`` the
    name the error starts with (``ACC`` for the command line's input, the argument's name otherwise).
    Raises :class:`UsageError` naming ``what``, the store, the rows and columns asked for and the Zarr chunks
    they lie in, when zarr or its codecs fail on them (a chunk file cut short or garbled:
    e.g. numcodecs' ``RuntimeError: Zstd decompression error``), instead of that raw error.  A chunk
    file that is missing reads as the fill value (Zarr's definition) here; :func:`open_tile` refuses
    such a store unless told otherwise (:func:`missing_chunks`).
    """

    def __init__(self, path: Any, array: Any, what: str = "ACC") -> None:
        self.path = str(path)
        self.array = array
        self.what = what
        self.shape: Tuple[int, ...] = tuple(int(s) for s in array.shape)
        self.dtype = array.dtype
        self.ndim = len(self.shape)
        self.chunks: Tuple[int, ...] = tuple(int(c) for c in array.chunks)

    def _where(self, key: Any) -> str:
        keys = key if isinstance(key, tuple) else (key,)
        parts, grid = [], []
        for axis, (k, size, chunk) in enumerate(zip(keys, self.shape, self.chunks)):
            if not isinstance(k, slice):
                return f"block {key!r}"
            lo, hi, _ = k.indices(size)
            parts.append(f"{('rows', 'columns')[axis] if axis < 2 else f'axis {axis}'} {lo}:{hi}")
            first, last = lo // chunk, max(lo, hi - 1) // chunk
            grid.append(str(first) if first == last else f"{first}..{last}")
        return f"{', '.join(parts)}, Zarr chunk ({', '.join(grid)})"

    def __getitem__(self, key: Any) -> np.ndarray:
        try:
            return np.asarray(self.array[key])
        except (PtonumError, MemoryError):
            raise
        except Exception as exc:  # zarr/numcodecs raise several types for a damaged chunk
            raise UsageError(f"{self.what}: {self.path}: a chunk cannot be read ({self._where(key)}: "
                             f"{type(exc).__name__}: {exc}); a chunk file of the store is damaged or cut short"
                             ) from None


def _store_text(array: Any) -> str:
    """The store (and the array's path inside it) of a ``zarr.Array``, as text for a message."""
    store = getattr(array, "store", None)
    root = getattr(store, "root", None) or getattr(store, "path", None)
    text = str(root) if root else str(store)
    inner = str(getattr(array, "path", "") or "").strip("/")
    return f"{text.rstrip('/')}/{inner}" if inner else text


#: the end of a missing-chunk refusal ({how}: the option or argument that reads them as the fill value); the
#: commonest cause first: zarr-python 3 writes no chunk that holds only the fill value unless told to
MISSING_CHUNKS_HINT = ("zarr-python 3 leaves out chunks that hold only the fill value by default "
                       "(write_empty_chunks=False): for a store written so, give {how}; otherwise a chunk file was "
                       "lost (a store copied in part?)")


def refuse_missing_chunks(array: Any, what: str, store: Optional[str] = None) -> None:
    """Raise :class:`UsageError` naming ``what`` and the store when the ``zarr.Array`` ``array`` has fewer
    chunks stored than it has (zarr's public ``nchunks_initialized`` against ``nchunks``: the store's keys
    are listed, no chunk is read; any store, directory or not).  A directory store names the missing
    chunks with their rows and columns (:func:`missing_chunks`), another store their count.  A store
    that cannot list its keys is not judged.

    Zarr reads a missing chunk as the array's fill value (writers leave out chunks that hold only it), so
    a store copied in part would be a different tile without an error.

    Source: no spec counterpart (file access only).
    """
    try:
        total, stored = int(array.nchunks), int(array.nchunks_initialized)
    except Exception:  # a store that cannot list its keys: nothing can be said
        return
    if stored >= total:
        return
    text = store if store is not None else _store_text(array)
    listed = missing_chunks(text) if Path(text).is_dir() else (0, [], None)
    if listed[1]:
        detail = missing_chunks_text(text, *listed)
    else:
        n = total - stored
        detail = (f"{text}: {n} of {total} chunk{'s' if total != 1 else ''} {'is' if n == 1 else 'are'} missing; "
                  f"Zarr reads a missing chunk as the fill value ({getattr(array, 'fill_value', None)})")
    raise UsageError(f"{what}: {detail}: {MISSING_CHUNKS_HINT.format(how='allow_missing_chunks=True')}")


def named_zarr_reads(x: Any, what: str, *, allow_missing_chunks: bool = True) -> Any:
    """``x`` (a dask array) with every ``zarr.Array`` its graph reads from (``da.from_zarr``, inlined
    or not, and whatever was derived from it, also inside the subgraph of a task ``dask.optimize``
    or dask's ``Blockwise`` fused, :func:`_subgraph`) read through :class:`ZarrTile`, so that a chunk zarr
    cannot decode raises :class:`UsageError` naming ``what``, the store and the Zarr chunk when
    computed.  The same chunks and values; ``x`` itself when its graph reads no Zarr array (a getter
    over another wrapper, e.g. ``da.from_array(z[...])``, is not seen) or when the installed dask has
    no public task-spec module ``dask.task_spec`` (releases before 2025.1; then zarr's own error
    stands).  The keys that read through a wrapper, and those depending on them, are renamed (a suffix
    from ``what``): a key never stands for two different tasks on one scheduler.  Without
    ``allow_missing_chunks``, each Zarr array found is checked first (:func:`refuse_missing_chunks`: the
    whole array, also when ``x`` reads only part of it), raising :class:`UsageError` now.

    One scan of the high-level graph's layers (:func:`_zarr_layers`) finds the layers holding a Zarr
    array; a graph whose Zarr reads and their dependants the layer-level rewrite can take
    (:func:`_wrapped_by_layers`) is never materialized; any other graph is rewritten task by task
    (:func:`_wrapped_task_by_task`).  Public dask API only (``dask.task_spec``, ``dask.blockwise``,
    ``dask.highlevelgraph``, ``dask.base``); a graph value of another shape than those classes
    disables the naming, never the computation."""
    try:
        import zarr
        from dask.task_spec import DataNode, Task
    except ImportError:  # pragma: no cover - zarr not installed, or a dask without the public task spec
        return x
    from dask.base import tokenize

    def reads_zarr(value: Any) -> bool:
        return isinstance(value, DataNode) and isinstance(value.value, zarr.Array)

    def reads_in(value: Any) -> bool:
        """A task-spec value reading a Zarr array itself, in one of its (top-level) arguments or in a
        task of the subgraph it runs (a task ``dask.optimize`` fused, :func:`_subgraph`)."""
        if reads_zarr(value) or (isinstance(value, Task) and any(reads_zarr(a) for a in value.args)):
            return True
        inner = _subgraph(value)
        return inner is not None and any(reads_in(v) for v in inner.values())

    scan = _zarr_layers(x.__dask_graph__(), zarr.Array, reads_in)
    if scan is None:
        return x  # no graph layer holds a Zarr array: nothing materialized (a 200k-chunk graph costs seconds)
    seeds, layer_level = scan
    tiles: dict = {}  # one ZarrTile per zarr.Array (an inlined array sits in every chunk's task)

    def tile_of(array: Any) -> ZarrTile:
        tile = tiles.get(id(array))
        if tile is None or tile.array is not array:
            if not allow_missing_chunks:
                refuse_missing_chunks(array, what)
            tile = tiles[id(array)] = ZarrTile(_store_text(array), array, what)
        return tile

    seed = tokenize("named_zarr_reads", what)
    if layer_level:
        fast = _wrapped_by_layers(x, seeds, zarr.Array, tile_of, seed)
        if fast is not None:
            return fast
    return _wrapped_task_by_task(x, zarr.Array, tile_of, "-ptonum-" + seed[:12])


def _zarr_layers(graph: Any, array_type: type, reads: Any) -> Optional[Tuple[set, bool]]:
    """The one scan of a high-level ``graph``'s layers for Zarr reads, shared by both rewrites of
    :func:`named_zarr_reads`: ``None`` when no layer can hold an ``array_type`` (a ``Blockwise`` layer
    without one among its arguments, a materialized layer without one among its values, as such or
    read by a task -- ``reads``); else ``(seeds, layer_level)``: the names of the layers holding the
    array as the layer-level rewrite takes it (a ``Blockwise`` argument; a materialized layer of arrays
    only), and whether every Zarr read is of that kind (False: a materialized layer with a task reading
    one, or mixing arrays with other values; a layer of another kind; a graph without layers --
    rewritten task by task)."""
    from dask.blockwise import Blockwise
    from dask.highlevelgraph import MaterializedLayer

    layers = getattr(graph, "layers", None)
    if layers is None:
        return set(), False
    seeds: set = set()
    layer_level, may_read = True, False
    for name, layer in layers.items():
        if isinstance(layer, Blockwise):
            if any(isinstance(arg, array_type) for arg, _ in layer.indices):
                seeds.add(name)
                may_read = True
        elif isinstance(layer, MaterializedLayer):
            values = layer.mapping.values()
            arrays = sum(1 for v in values if isinstance(v, array_type))
            if arrays and arrays == len(layer.mapping):
                seeds.add(name)
                may_read = True
            elif arrays or any(reads(v) for v in values):
                layer_level = False
                may_read = True
        else:
            layer_level = False
            may_read = True
    return (seeds, layer_level) if may_read else None


def _wrapped_by_layers(x: Any, seeds: set, array_type: type, wrap: Any, seed: str) -> Any:
    """:func:`named_zarr_reads` on the high-level graph, without materializing it: the layers ``seeds``
    found by :func:`_zarr_layers` (``Blockwise`` layers with the array among their arguments --
    ``from_zarr``, inlined -- or materialized layers holding only arrays -- ``from_zarr``'s ``original-``
    layer) when the layers depending on them are all ``Blockwise`` (element-wise steps, ``map_blocks``,
    ``astype``...).  The arrays are wrapped by ``wrap``; those layers and every layer depending on them
    are renamed with ``Layer.clone`` and ``dask.base.clone_key`` (public dask API).  ``None`` for any
    other graph (the caller then rewrites it task by task)."""
    from dask.base import clone_key
    from dask.blockwise import Blockwise
    from dask.highlevelgraph import HighLevelGraph, MaterializedLayer

    graph = x.__dask_graph__()
    if not isinstance(graph, HighLevelGraph) or x.name not in graph.layers:
        return None
    layers, deps = dict(graph.layers), graph.dependencies
    renamed = _with_dependants(seeds, deps)
    if any(not isinstance(layers[name], Blockwise) for name in renamed - seeds):
        return None
    for name in seeds:
        layer = layers[name]
        if isinstance(layer, Blockwise):
            layers[name] = Blockwise(
                output=layer.output, output_indices=layer.output_indices, task=layer.task,
                indices=[(wrap(a) if isinstance(a, array_type) else a, i) for a, i in layer.indices],
                numblocks=layer.numblocks, concatenate=layer.concatenate, new_axes=layer.new_axes,
                output_blocks=layer.output_blocks, annotations=layer.annotations, io_deps=layer.io_deps)
        elif isinstance(layer, MaterializedLayer):
            layers[name] = MaterializedLayer({k: wrap(v) for k, v in layer.mapping.items()})
    keys = set().union(*(layers[name].get_output_keys() for name in renamed))
    out_layers, out_deps = {}, {}
    for name, layer in layers.items():
        new_name = clone_key(name, seed) if name in renamed else name
        out_layers[new_name] = layer.clone(keys, seed)[0] if name in renamed else layer
        out_deps[new_name] = {clone_key(d, seed) if d in renamed else d for d in deps[name]}
    import dask.array as da

    name = clone_key(x.name, seed) if x.name in renamed else x.name
    return da.Array(HighLevelGraph(out_layers, out_deps), name, x.chunks, dtype=x.dtype, meta=x._meta)


def _wrapped_task_by_task(x: Any, array_type: type, wrap: Any, suffix: str) -> Any:
    """:func:`named_zarr_reads` on the materialized graph (slicing, rechunk and other non-``Blockwise``
    steps over a Zarr read; fused tasks): every ``DataNode`` holding an ``array_type``, as a task's
    argument, as a graph value or in a fused task's subgraph (:func:`_subgraph`, at any depth), gets
    the array wrapped by ``wrap``; the keys reading through a wrapper, and those
    depending on them, get ``suffix`` (``GraphNode.substitute``).  A bare array value (``from_zarr``'s
    ``original-`` layer) is taken as the ``DataNode`` it stands for.  ``x`` itself when the graph
    holds a value of another kind (a legacy tuple task, a key alias as text: converting those needs
    dask's private ``dask._task_spec.convert_legacy_graph``, so they disable the naming, never the
    computation) or when nothing reads a Zarr array.

    Public API: ``dask.task_spec`` (``GraphNode``, ``DataNode``, ``Task``; their ``key``, ``args``,
    ``kwargs``, ``func``, ``value``, ``dependencies`` and ``substitute``)."""
    import dask.array as da
    from dask.task_spec import DataNode, GraphNode, Task

    def reads_zarr(value: Any) -> bool:
        return isinstance(value, DataNode) and isinstance(value.value, array_type)

    def wrapped(value: Any) -> Any:
        if reads_zarr(value):
            return DataNode(value.key, wrap(value.value))
        inner = _subgraph(value)
        if inner is not None:  # a fused task: the reads in its subgraph and among its other arguments
            tasks = {k: wrapped(v) for k, v in inner.items()}
            rest = [wrapped(a) for a in value.args[1:]]
            if all(tasks[k] is v for k, v in inner.items()) and all(a is b for a, b in zip(rest, value.args[1:])):
                return value
            return Task(value.key, value.func, tasks, *rest, **value.kwargs)
        if isinstance(value, Task) and any(reads_zarr(a) for a in value.args):
            return Task(value.key, value.func, *(wrapped(a) for a in value.args), **value.kwargs)
        return value

    try:
        graph = dict(x.__dask_graph__())
        nodes = {}
        for k, v in graph.items():
            if isinstance(v, array_type):
                v = DataNode(k, v)
            elif not isinstance(v, GraphNode):
                return x  # a legacy value: see the docstring
            nodes[k] = wrapped(v)
        todo = [k for k in graph if nodes[k] is not graph[k]]
        if not todo:
            return x
        # every key that depends on a renamed one is renamed too
        renamed = _with_dependants(todo, {k: v.dependencies for k, v in nodes.items()})

        def rename(k: Any) -> Any:
            return (str(k[0]) + suffix,) + tuple(k[1:]) if isinstance(k, tuple) else str(k) + suffix

        subs = {k: rename(k) for k in renamed}
        out = {subs.get(k, k): (v.substitute(subs, key=subs[k]) if k in subs else v) for k, v in nodes.items()}
    except (AttributeError, TypeError):  # pragma: no cover - dask's task spec changed shape
        return x
    name = rename(x.name) if (x.name in renamed or any(isinstance(k, tuple) and k[0] == x.name
                                                       for k in renamed)) else x.name
    return da.Array(out, name, x.chunks, dtype=x.dtype, meta=x._meta)


def _subgraph(value: Any) -> Optional[Dict[Any, Any]]:
    """The subgraph a fused task runs, or ``None`` for any other value.

    ``dask.optimize`` fuses a chain of tasks (``GraphNode.fuse``) and dask's ``Blockwise`` fuses
    the steps of one chunk into one ``Task`` whose ``has_subgraph()`` is true; its first argument
    maps each inner key to its ``GraphNode`` (a Zarr read of ``da.from_zarr(..., inline_array=True)``
    sits there, or among the task's later arguments as a ``DataNode``).  ``None`` also when the
    installed dask has no ``Task.has_subgraph`` or that argument is not such a mapping: then the
    inner reads are not named, the computation is unchanged.  Public API only:
    ``dask.task_spec.Task`` (``has_subgraph``, ``args``); the task's function is taken from the
    task itself (``Task.func``), never imported."""
    from dask.task_spec import GraphNode, Task

    if not isinstance(value, Task):
        return None
    has = getattr(value, "has_subgraph", None)
    if has is None or not has() or not value.args:
        return None
    inner = value.args[0]
    if not isinstance(inner, dict) or not all(isinstance(v, GraphNode) for v in inner.values()):
        return None
    return inner


def _with_dependants(seeds: Any, dependencies: Any) -> set:
    """``seeds`` and every key (or layer name) depending on one of them, directly or not, given each
    key's ``dependencies``: one pass to list each key's dependants, one walk visiting each key once."""
    dependants: dict = {}
    for k, on in dependencies.items():
        for d in on:
            dependants.setdefault(d, []).append(k)
    found, todo = set(seeds), list(seeds)
    while todo:
        for k in dependants.get(todo.pop(), ()):
            if k not in found:
                found.add(k)
                todo.append(k)
    return found


def is_zarr(path: Any) -> bool:
    """True for a directory holding a Zarr array or group (v2 or v3 metadata), or a ``*.zarr`` name."""
    p = Path(path)
    if p.suffix.lower() == ".zarr":
        return True
    return p.is_dir() and any((p / f).exists() for f in ("zarr.json", ".zarray", ".zgroup"))


def _chunk_layout(array_dir: Path) -> Optional[Tuple[Tuple[int, ...], Tuple[int, ...], Any, Any]]:
    """(shape, stored chunk shape, chunk key function, fill value) of the Zarr array in ``array_dir``,
    from its own metadata (v3 ``zarr.json``: ``chunk_grid`` and ``chunk_key_encoding``, a shard being
    the stored chunk; v2 ``.zarray``: ``chunks`` and ``dimension_separator``); None when neither is there
    or readable (nothing can be said then)."""
    import json

    try:
        v3 = array_dir / "zarr.json"
        if v3.is_file():
            meta = json.loads(v3.read_text())
            shape = tuple(int(k) for k in meta["shape"])
            grid = tuple(int(k) for k in meta["chunk_grid"]["configuration"]["chunk_shape"])
            enc = meta.get("chunk_key_encoding", {"name": "default"})
            name = enc.get("name", "default")
            sep = enc.get("configuration", {}).get("separator", "/" if name == "default" else ".")
            if name == "default":
                return shape, grid, lambda c: sep.join(["c", *map(str, c)]), meta.get("fill_value")
            return shape, grid, lambda c: sep.join(map(str, c)) if c else "0", meta.get("fill_value")
        v2 = array_dir / ".zarray"
        if v2.is_file():
            meta = json.loads(v2.read_text())
            shape = tuple(int(k) for k in meta["shape"])
            grid = tuple(int(k) for k in meta["chunks"])
            sep = meta.get("dimension_separator") or "."
            return shape, grid, lambda c: sep.join(map(str, c)) if c else "0", meta.get("fill_value")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def missing_chunks(path: Any, key: Optional[str] = None) -> Tuple[int, List[str], Any]:
    """The chunk files a directory Zarr array (``path``, or its member ``key`` in a group) lacks.

    Returns ``(chunks in all, the missing ones as text, fill value)``: each missing one as
    ``Zarr chunk (1, 2): rows 256:384, columns 512:768``, in row-major chunk order.  Zarr reads a
    missing chunk as the fill value (writers leave out chunks that hold only it), so a store copied in
    part reads as a different tile without an error; this lists the store's files (cheap: no chunk is
    read).  v2 and v3 layouts; a sharded v3 array counts its shards.  ``(0, [], None)`` when the
    metadata cannot be read here (not a directory store).

    Source: no spec counterpart (file access only).
    """
    import itertools
    import os

    array_dir = Path(path) / key if key else Path(path)
    layout = _chunk_layout(array_dir)
    if layout is None:
        return 0, [], None
    shape, grid, chunk_key, fill = layout
    present = set()
    for root, _, names in os.walk(array_dir):
        rel = Path(root).relative_to(array_dir).as_posix()
        for name in names:
            present.add(name if rel == "." else f"{rel}/{name}")
    counts = [-(-n // c) if c else 0 for n, c in zip(shape, grid)]
    total, missing = 0, []
    for coords in itertools.product(*(range(k) for k in counts)):
        total += 1
        if chunk_key(coords) not in present:
            spans = [f"{('rows', 'columns')[a] if a < 2 else f'axis {a}'} {i * c}:{min(n, (i + 1) * c)}"
                     for a, (i, c, n) in enumerate(zip(coords, grid, shape))]
            missing.append(f"Zarr chunk ({', '.join(map(str, coords))}): {', '.join(spans)}")
    return total, missing, fill


def missing_chunks_text(path: Any, total: int, missing: List[str], fill: Any, shown: int = 3) -> str:
    """``a.zarr: 2 of 32 chunk files are missing (Zarr chunk (1, 2): rows ..., ...)``: the count and the
    first ``shown`` of :func:`missing_chunks`' list.

    Source: no spec counterpart (message text).
    """
    more = f"; and {len(missing) - shown} more" if len(missing) > shown else ""
    return (f"{path}: {len(missing)} of {total} chunk file{'s' if total != 1 else ''} "
            f"{'is' if len(missing) == 1 else 'are'} missing ({'; '.join(missing[:shown])}{more}); Zarr reads a "
            f"missing chunk as the fill value ({fill})")


def open_tile(path: Any, chunks: Optional[Tuple[int, int]] = None, *, key: Optional[str] = None,
              allow_missing_chunks: bool = False) -> Any:
    """Open a Zarr array/group or a ``.npy`` file as a dask array (nothing is read yet).

    ``chunks``: ``(rows, columns)``; default: the Zarr array's own chunks, or Dask's automatic
    chunking (about 128 MiB) for ``.npy``.  A Zarr *group* needs ``key`` unless it holds exactly
    one array (or one named ``acc``).

    Raises :class:`UsageError` for a missing path, an unknown suffix, a group without a unique
    array, or a file that is not a numeric ``.npy``; for a Zarr array with a chunk file missing
    (:func:`missing_chunks`: Zarr would read it as the fill value, so a store copied in part would
    be a silent wrong tile), naming the count and the first chunks with their rows and columns, unless
    ``allow_missing_chunks`` (a writer that leaves out chunks of fill value on purpose: zarr's
    ``write_empty_chunks=False``); computing a Zarr tile raises it (through
    :class:`ZarrTile`) for a chunk that cannot be decoded, naming the store and the chunk.
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
            why = (f"its metadata has no {exc.args[0]!r} entry" if isinstance(exc, KeyError) and exc.args
                   else str(exc) or type(exc).__name__)  # a bare KeyError read as "('zarr_format')"
            raise UsageError(f"ACC: {path}: not a readable Zarr store ({why})") from None
        if isinstance(node, zarr.Group):
            names = sorted(name for name, _ in node.arrays())
            if not names:
                raise UsageError(f"ACC: {path} is a Zarr group that holds no array")
            if key is not None and key not in names and key in {name for name, _ in node.groups()}:
                raise UsageError(f"ACC: {path}: {key!r} is a Zarr group, not an array (arrays: {', '.join(names)})")
            if key is None:
                if len(names) == 1:
                    key = names[0]
                elif "acc" in names:
                    key = "acc"
                else:
                    raise UsageError(f"ACC: {path} is a Zarr group with arrays {', '.join(names)}; "
                                     "choose one with --key")
            if key not in names:
                raise UsageError(f"ACC: {path} has no array {key!r} (it has {', '.join(names)})")
            arr = node[key]
            if not isinstance(arr, zarr.Array):
                raise UsageError(f"ACC: {path}: {key!r} is a Zarr group, not an array")
        else:
            if key is not None:
                raise UsageError(f"ACC: {path} is a Zarr array; --key applies to a Zarr group")
            arr = node
        if not allow_missing_chunks:
            total, missing, fill = missing_chunks(p, key)
            if missing:
                how = "--allow-missing-chunks (open_tile(..., allow_missing_chunks=True))"
                raise UsageError(f"ACC: {missing_chunks_text(path, total, missing, fill)}: "
                                 f"{MISSING_CHUNKS_HINT.format(how=how)}")
        from dask.base import tokenize

        ztile = ZarrTile(path, arr)
        use = chunks if chunks is not None else arr.chunks
        return da.from_array(ztile, chunks=use, asarray=True, fancy=False,
                             name=f"from-zarr-{tokenize(str(p.resolve()), key, arr.shape, str(arr.dtype), use)}")
    if p.suffix.lower() == ".npy":
        if key is not None:
            raise UsageError(f"ACC: {path} is a .npy file; --key applies to .npz and Zarr groups")
        tile = NpyTile(p)
        return da.from_array(tile, chunks=chunks if chunks is not None else "auto", asarray=True, fancy=False,
                             name=f"npy-{abs(hash((tile.path, p.stat().st_mtime_ns))):x}")
    raise UsageError(f"ACC: {path}: chunked input must be a Zarr store or a .npy file")
