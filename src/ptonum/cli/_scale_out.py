"""What the commands share for running beyond one process: where work runs, chunked tiles, batches.

* :func:`placement_options` adds ``--workers N`` / ``--scheduler ADDRESS`` (neither: this
  process) to a command; :func:`client_for` opens the matching ``distributed.Client``.
* ``ptonum postprocess`` uses :func:`postprocess_options` (``--chunks``, ``--fail-fast``) and
  :func:`run_postprocess` for a Zarr/.npy tile processed chunk by chunk (written as
  ``OUT_DIR/STEM.zarr``) and for batches of many files (one summary table).
"""

from __future__ import annotations

import glob
import io
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, TypeVar

import rich_click as click

from .._util import int_text
from ..errors import PtonumError, UsageError
from ..flags import flag_names
from ..publish import output_directory_lock, unreplaceable, write_protected
from ._common import TextOut, cli_message, error_line, memory_errors_name, os_error_text, out_console, \
    out_of_memory_text, print_path_table, rmode_text, progress_report, same_file, stderr_is_terminal

F = TypeVar("F", bound=Callable[..., Any])

#: option names of :func:`placement_options` (for help panels)
PLACEMENT_OPTIONS = ["--workers", "--scheduler"]
#: option names of :func:`postprocess_options`
POSTPROCESS_SCALE_OPTIONS = ["--chunks", "--allow-missing-chunks", "--workers", "--scheduler", "--fail-fast"]

#: file options of ``ptonum postprocess`` whose paths are made absolute before a worker reads them
_PATH_OPTIONS = ("quant_tile", "relu_tile", "row_max_in", "scale_tile", "offset_tile", "alpha_tile", "out_dir")


#: the largest --chunks rows or columns (numpy's index type)
MAX_CHUNK = 2**63 - 1


def placement_options(fn: F) -> F:
    """Add ``--workers N`` and ``--scheduler ADDRESS`` (parameters ``workers``, ``scheduler``)."""
    fn = click.option("--scheduler", metavar="ADDRESS", default=None,
                      help="Run on an existing dask.distributed scheduler (e.g. tcp://host:8786); its workers "
                           "must see the same files.")(fn)
    fn = click.option("--workers", metavar="N|auto", default=None, callback=_workers_value,
                      help="Run on a local cluster of N worker processes (auto: one per core; neither option: "
                           "this process).")(fn)
    return fn


def _workers_value(ctx: Any, param: Any, value: Optional[str]) -> Optional[int]:
    """``--workers``: a positive count, or ``auto`` for one worker per core."""
    if value is None:
        return None
    if value.strip().lower() == "auto":
        from ..dask.cluster import default_workers

        return default_workers()
    try:
        n = int_text(value, decimal_only=True)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a number of workers (a positive integer or auto)") from None
    if n < 1:
        raise click.BadParameter(f"{value!r}: the number of workers must be at least 1")
    limit = max_local_workers()
    if n > limit:  # each is a process: tens of thousands would swamp the machine before any work
        raise click.BadParameter(f"{value!r}: at most {limit} local worker processes on this machine "
                                 f"({os.cpu_count() or 1} cores; auto gives one per core)")
    return n


def max_local_workers() -> int:
    """The largest ``--workers N`` accepted: 4 processes per core, and at least 32."""
    return max(32, 4 * (os.cpu_count() or 1))


def postprocess_options(fn: F) -> F:
    """``--chunks RxC``, ``--allow-missing-chunks`` and ``--fail-fast`` plus :func:`placement_options`."""
    fn = click.option("--fail-fast", is_flag=True,
                      help="With several inputs: stop at the first file that fails (default: report it and go on).")(fn)
    fn = placement_options(fn)
    fn = click.option("--allow-missing-chunks", is_flag=True,
                      help="Run a Zarr ACC that lacks chunk files (read as its fill value, as Zarr defines it), "
                           "with a note naming them: a store zarr-python 3 wrote with its default "
                           "write_empty_chunks=False lacks the chunks that hold only the fill value. Without it such "
                           "a store is refused (a store copied in part would be a silent wrong answer).")(fn)
    fn = click.option("--chunks", metavar="RxC", default=None,
                      help="Process a Zarr or .npy ACC chunk by chunk (ROWSxCOLUMNS, e.g. 1024x4096), memory-mapped, "
                           "writing OUT_DIR/STEM.zarr; a Zarr ACC defaults to its own chunks.")(fn)
    return fn


@contextmanager
def client_for(command: str, scheduler: Optional[str], workers: Optional[int]) -> Iterator[Any]:
    """The client of :func:`ptonum.dask.open_client` (``None`` when neither option is given).

    Raises :class:`UsageError` naming the extra to install when Dask, distributed or Zarr is missing."""
    if scheduler is None and workers is None:
        yield None
        return
    from contextlib import ExitStack

    from ..dask.cluster import require_dask

    require_dask()  # one line naming the extra, not an internal error on `import dask` below
    import dask
    import distributed  # noqa: F401  (its settings join dask.config on import: before config.set records them)

    from ..dask import open_client

    with ExitStack() as stack:
        if scheduler is None:  # the local workers ignore SIGINT (this process stops them): no tracebacks
            preload = list(dask.config.get("distributed.worker.preload", []) or [])
            stack.enter_context(dask.config.set({"distributed.worker.preload": preload + [_WORKER_SIGNALS]}))
        try:
            with _sigint_blocked_while_workers_start(scheduler is None):
                try:
                    client = stack.enter_context(open_client(scheduler=scheduler, workers=workers))
                except RuntimeError as exc:  # distributed's "Nanny failed to start", "Cluster failed to start"
                    if scheduler is not None:
                        raise
                    raise UsageError(f"--workers {workers}: the local cluster did not start ({exc}); "
                                     "a worker process ended while starting") from None
            stack.enter_context(_interrupts_not_swallowed())
            yield client
        except BaseException as exc:
            if not isinstance(exc, Exception):  # Ctrl-C, SIGTERM: the cluster is torn down mid-work
                _quiet_teardown()
            raise


@contextmanager
def _sigint_blocked_while_workers_start(local: bool) -> Iterator[None]:
    """While a local cluster starts (``local``): SIGINT blocked in this thread, so that every thread the
    cluster starts -- its event loop, the threads that spawn the worker processes -- inherits the blocked
    SIGINT, and so does every worker process from its first instruction (a signal mask survives fork and
    exec).  A Ctrl-C, which a terminal sends to the whole process group, then never reaches a worker that
    is still starting (it printed the traceback of its interrupted imports: the ``_worker_signals``
    preload runs only once the worker is up); this process takes it when the start is over (about 1-2
    s), at the end of this block, and shuts the cluster down.  SIGTERM is not blocked."""
    import signal

    if not local or not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return
    from multiprocessing import resource_tracker

    # multiprocessing starts its resource tracker with the first spawned process, and unblocks SIGINT in
    # the starting thread afterwards (the tracker ignores it): that thread would then spawn the first
    # worker with SIGINT unblocked.  Started here, before the block, it is not started again.
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a Ctrl-C held back is raised here


def _quiet_teardown() -> None:
    """After Ctrl-C or SIGTERM, while the cluster is torn down and the process ends: its connection errors
    and the half-started cluster's exit callbacks (``Exception ignored in atexit callback``) are not the
    user's news -- the command's one line is."""
    import logging

    for name in ("asyncio", "distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    sys.unraisablehook = lambda unraisable: None


@contextmanager
def _interrupts_not_swallowed() -> Iterator[None]:
    """While a Dask client runs in this process: a KeyboardInterrupt (Ctrl-C) or :class:`Terminated`
    (SIGTERM) that Python swallowed because it was raised inside a callback whose exceptions are only
    reported -- distributed's garbage-collector callback (``Exception ignored in: ... GCDiagnosis``), a
    ``__del__`` -- is delivered again: the same signal is sent to this process a moment later, so one
    Ctrl-C always stops the run (it could hang, waiting on workers that were gone) and nothing is printed
    about the swallowed one."""
    import signal

    from ..publish import Terminated

    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        kind = unraisable.exc_type
        if isinstance(kind, type) and issubclass(kind, (KeyboardInterrupt, Terminated)):
            sig = signal.SIGINT if issubclass(kind, KeyboardInterrupt) else signal.SIGTERM
            threading.Timer(0.05, os.kill, (os.getpid(), sig)).start()
            return
        previous(unraisable)
    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


#: the module each local worker process imports at its start (it then ignores SIGINT)
_WORKER_SIGNALS = "ptonum.cli._worker_signals"


def task_progress(label: str, enabled: bool) -> Any:
    """Progress of a Dask run on stderr (:func:`progress_report`) and its ``progress(done, total)``
    callback, or None."""
    return progress_report(label, enabled)


# ---------------------------------------------------------------------------
# Inputs


def expand_inputs(specs: Sequence[str]) -> List[str]:
    """Shell-style globs (``'runs/*.npy'``) expanded in sorted order; other names kept as given.

    Raises :class:`UsageError` for a glob that matches nothing.
    """
    out: List[str] = []
    for spec in specs:
        if any(ch in spec for ch in "*?[") and not os.path.exists(spec):
            hits = sorted(glob.glob(spec))
            if not hits:
                raise UsageError(f"ACC: no file matches {spec}")
            out.extend(hits)
        else:
            out.append(spec)
    return out


def _is_chunked_input(path: str, chunks: Optional[str]) -> bool:
    from ..dask.io import is_zarr

    return is_zarr(path) or (chunks is not None and Path(path).suffix.lower() == ".npy")


def wants_scale_out(accs: Sequence[str], options: Dict[str, Any]) -> bool:
    """True when the inputs or options ask for the scale-out path (not the single in-memory file)."""
    if len(accs) != 1 or any(options.get(k) for k in ("chunks", "workers", "scheduler")):
        return True
    spec = accs[0]
    return any(ch in spec for ch in "*?[") and not os.path.exists(spec) or _is_chunked_input(spec, None)


# ---------------------------------------------------------------------------
# One file


def output_stem(acc: str, key: Optional[str]) -> str:
    """The name every output of input ``acc`` starts with: its file stem, plus ``.KEY`` for an
    ``.npz`` member (``--key`` or ``FILE.npz:KEY``)."""
    from ._tile_args import split_key

    path_text, inline_key = split_key(acc)
    the_key = key or inline_key
    return Path(path_text.rstrip("/")).stem + (f".{the_key}" if the_key else "")


#: what ``ptonum postprocess`` can write for a stem, as ``OUT_DIR/STEM.<name>``: the in-memory
#: outputs (each ``.npy`` and, with --bin, ``.bin``), the summary, and a chunked run's Zarr group
OUTPUT_NAMES = tuple(f"{k}.{e}" for k in ("d", "row_max", "group_max", "d_packed") for e in ("npy", "bin")) + (
    "flags.json", "zarr")


def refuse_inputs_among_outputs(out_dir: Path, stem: str, inputs: Sequence[Optional[str]]) -> None:
    """Before any work: :class:`UsageError` when an input of this run (``inputs``: ACC and the file
    options given) is one of the ``OUT_DIR/STEM.<name>`` of :data:`OUTPUT_NAMES`, which the run
    would replace or remove."""
    given = [p for p in inputs if p]
    for name in OUTPUT_NAMES:
        p = out_dir / f"{stem}.{name}"
        if any(same_file(p, q) for q in given):  # any spelling, symbolic or hard link
            raise UsageError(f"--out-dir: {p} is an input of this run, and this run's outputs of {stem} would "
                             "replace or remove it; choose another --out-dir or move the file")


def _json_file(path: Path) -> Any:
    """The JSON document in the regular file ``path`` (None when absent, unreadable or not JSON)."""
    import json

    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > (1 << 22):
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def ptonum_zarr(path: Path) -> bool:
    """True when ``path`` is a Zarr group that a ptonum run wrote (its attributes say ``producer``
    ``ptonum``: :func:`ptonum.fpatr.tile.run_record`), v3 or v2 metadata."""
    if path.is_symlink() or not path.is_dir():
        return False
    for meta, inner in (("zarr.json", "attributes"), (".zattrs", None)):
        doc = _json_file(path / meta)
        attrs = doc.get(inner) if inner and isinstance(doc, dict) else doc
        if isinstance(attrs, dict) and attrs.get("producer") == "ptonum":
            return True
    return False


def earlier_outputs(out_dir: Path, stem: str) -> List[str]:
    """The names ``STEM.<name>`` in ``out_dir`` that an earlier ptonum run demonstrably wrote: the
    ``files`` its ``STEM.flags.json`` lists (with the record itself; ``producer`` ``ptonum``), and a
    ``STEM.zarr`` whose attributes say ``producer`` ``ptonum``.  A file or directory that merely has
    an output's name (the user's own ``acc.zarr`` beside ``acc.npy``) is not one."""
    names: List[str] = []
    record = _json_file(out_dir / f"{stem}.flags.json")
    if isinstance(record, dict) and record.get("producer") == "ptonum":
        names.append(f"{stem}.flags.json")
        files = record.get("files")
        if isinstance(files, list):
            names += [f for f in files if isinstance(f, str)]
    if ptonum_zarr(out_dir / f"{stem}.zarr"):
        names.append(f"{stem}.zarr")
    return names


def refuse_foreign_files(out_dir: Path, stem: str, writes: Sequence[str]) -> None:
    """Before anything is written: :class:`UsageError` when a file this run writes (``writes``: names in
    ``out_dir``) exists and no earlier ptonum run recorded writing it (:func:`earlier_outputs`), e.g. a
    device dump saved as ``acc.d_packed.bin`` beside ``acc.npy``: replacing it would lose the user's data."""
    ours = set(earlier_outputs(out_dir, stem))
    for name in writes:
        p = out_dir / name
        if os.path.lexists(p) and not p.is_dir() and name not in ours:  # a directory: publishing refuses it
            raise UsageError(f"--out-dir: {p} exists and no ptonum run recorded writing it (no {stem}.flags.json "
                             "lists it); this run would replace it: move it or choose another --out-dir")


def refuse_protected_outputs(out_dir: Path, stem: str, writes: Sequence[str] = ()) -> None:
    """Before any work: :class:`UsageError` naming the first output that publishing would refuse to touch
    after the work: an output of an earlier ptonum run of ``stem`` in ``out_dir`` (:func:`earlier_outputs`:
    this run replaces or removes every one of them) that is a write-protected file
    (:func:`ptonum.publish.write_protected`), or one of ``writes`` (names this run certainly writes) that
    :func:`ptonum.publish.unreplaceable` refuses (also a pipe, device or socket, or a link to one)."""
    for name in earlier_outputs(out_dir, stem):
        p = out_dir / name
        why = write_protected(p)
        if why:
            raise UsageError(f"--out-dir: cannot write {p}: {why}; ptonum does not replace a write-protected file "
                             "or directory: make it writable (chmod u+w; chmod -R u+w for a directory) or remove it")
    for name in writes:
        p = out_dir / name
        why = unreplaceable(p)
        if why:
            raise UsageError(f"--out-dir: cannot write {p}: {why}")


def stale_outputs(out_dir: Path, stem: str, writes: Sequence[str]) -> List[Path]:
    """The existing ``OUT_DIR/STEM.<name>`` of :data:`OUTPUT_NAMES` that an earlier ptonum run wrote
    (:func:`earlier_outputs`) and this run does not (``writes``: the file names it writes): taken
    away when this run's outputs are published, so that the stem's outputs are all one run's.
    Anything else named like an output is left alone."""
    ours = set(earlier_outputs(out_dir, stem))
    return [out_dir / f"{stem}.{name}" for name in OUTPUT_NAMES
            if f"{stem}.{name}" not in writes and f"{stem}.{name}" in ours
            and os.path.lexists(out_dir / f"{stem}.{name}")]


def run_chunked_file(console: TextOut, acc: str, options: Dict[str, Any], client: Any, chunks: Optional[str],
                     show_progress: Optional[bool], quiet: bool = False,
                     fields_text: Callable[[Any], str] = str, allow_missing_chunks: bool = False) -> Dict[str, Any]:
    """Post-process one Zarr/.npy ACC chunk by chunk into ``OUT_DIR/STEM.zarr``; return a summary row.

    Everything is checked (options, files, preflight) before the first task; the Zarr group is
    published only when every chunk succeeded.  A Zarr ACC lacking chunk files is refused
    (:func:`ptonum.dask.open_tile`) unless ``allow_missing_chunks``; then one note on stderr names them.
    """
    from ..dask import open_tile, parse_chunks
    from ._tile_args import build_tile_call

    if options.get("write_bin"):
        raise UsageError("--bin: a chunked run writes a Zarr group (OUT_DIR/STEM.zarr), not .bin files")
    for flag, name in (("--dtype", "bin_dtype"), ("--shape", "bin_shape")):
        if options.get(name) is not None:
            raise UsageError(f"{flag}: a chunked run reads a Zarr store or a .npy file, which carry their own layout")
    out_dir = Path(options["out_dir"])
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out-dir = {options['out_dir']}: is not a directory")
    x = open_tile(acc, parse_chunks(chunks) if chunks is not None else None, key=options.get("key"),
                  allow_missing_chunks=allow_missing_chunks)
    if allow_missing_chunks:
        from ..dask.io import is_zarr, missing_chunks, missing_chunks_text

        if is_zarr(acc):
            total, missing, fill = missing_chunks(acc, options.get("key"))
            if missing:
                sys.stderr.write(f"ptonum postprocess: note: ACC: {missing_chunks_text(acc, total, missing, fill)}"
                                 " (--allow-missing-chunks)\n")
    stem = output_stem(acc, options.get("key"))
    dest = out_dir / f"{stem}.zarr"
    refuse_inputs_among_outputs(out_dir, stem, [acc] + [options.get(k) for k in _PATH_OPTIONS])
    refuse_protected_outputs(out_dir, stem, [f"{stem}.zarr"])
    if dest.resolve() == Path(acc).resolve():
        raise UsageError(f"--out-dir: the output {dest} would replace the input ACC; choose another --out-dir")
    if os.path.lexists(dest) and not ptonum_zarr(dest):  # never replace a tree ptonum did not write
        raise UsageError(f"--out-dir: {dest} exists and is not a ptonum output (its attributes do not say "
                         "producer ptonum); move it or choose another --out-dir")
    call_options = {k: v for k, v in options.items() if k not in ("engine", "out_dir", "write_bin", "progress")}
    call = build_tile_call(acc, acc_array=x, **call_options)
    lazy = call.run_chunked(engine=options.get("engine", "fast"))
    m, n = x.shape
    enabled = show_progress if show_progress is not None else (m * n > (1 << 20) and not quiet
                                                               and stderr_is_terminal())
    # one run at a time publishes in out_dir (as the in-memory path does): the earlier outputs this run
    # takes away are read, and STEM.zarr put in place, under the directory's lock (held while the chunks
    # are computed, since the Zarr group is published at the end of to_zarr)
    # the compile note: without a client as for one tile (a kernel that compiles does so in the first chunk's
    # task, which runs a chunk-sized call, in this process's threads); with one, said here once before any
    # chunk is submitted when a worker would compile
    from .compile_cmd import compile_note_for

    cold = compile_note_for(client, x.chunksize[0] * x.chunksize[1], options.get("engine", "fast"), ("postprocess",))
    with output_directory_lock(out_dir), task_progress(f"{Path(acc).name}: chunks", bool(enabled)) as cb, cold:
        stale = stale_outputs(out_dir, stem, [f"{stem}.zarr"])
        # a chunk of ACC that cannot be decoded raises the UsageError of ptonum.dask.ZarrTile (naming the store
        # and the Zarr chunk), here or on a worker
        flags = lazy.to_zarr(dest, client=client, progress=cb, overwrite=True,
                             attrs={"source": os.path.abspath(acc), "parameters": call.parameter_record()},
                             remove=stale)
    row = {"file": acc, "ok": True, "shape": (m, n), "acc_type": lazy.acc_type.name, "dst_type": lazy.dst_type.name,
           "flags": int(flags), "outputs": [str(dest)], "removed": [str(p) for p in stale], "chunks": (x.chunksize[0], x.chunksize[1]),
           "tasks": x.numblocks[0] * x.numblocks[1] + x.numblocks[0]}
    if not quiet:
        a = call.attributes
        console.print(f" (B.FPATR word {a.word:#010x}), {rmode_text(a, call.rmode)}, "
                      f"Sat={int(bool(call.sat))}, engine {options.get('engine', 'fast')}", head=fields_text(a))
        console.print(f"ACC  {m} x {n} {lazy.acc_type.name}, chunks {x.chunksize[0]} x {x.chunksize[1]} "
                      f"({x.numblocks[0] * x.numblocks[1]} chunks)")
        # shapes as the in-memory summary gives them (its value ranges would read every output chunk back)
        import numpy as np

        from .._util import shape_text
        from ..fpatr.element import destination_dtype

        console.print(f"D    {m} x {n} {lazy.dst_type.name} ({np.dtype(destination_dtype(lazy.dst_type))} encodings)")
        if a.row_max_en:
            console.print(f"RowMaxOut   {m} x 1 {lazy.acc_type.name}")
        if a.group_max_en:
            console.print(f"GroupMaxOut {shape_text((m, -(-n // a.group_n)))} {lazy.acc_type.name} "
                          f"(GroupN {a.group_n})")
        console.print(f"flags {flags:#04x} {flag_names(flags)}")
        console.print(f"wrote {dest} (arrays {', '.join(k for k in ('d', 'row_max', 'group_max') if k == 'd' or (k == 'row_max' and a.row_max_en) or (k == 'group_max' and a.group_max_en))})")
        if stale:
            console.print("removed an earlier run's outputs of " + stem + ": " + ", ".join(str(p) for p in stale))
    return row


def batch_one(run_file: Callable[..., Dict[str, Any]], acc: str, options: Dict[str, Any]) -> Dict[str, Any]:
    """One in-memory file of a batch (runs on a worker or here): ``run_file`` (the single-file path of
    ``ptonum postprocess``) with its console captured; a summary row, or the error as text."""
    captured = io.StringIO()
    console = TextOut(captured)
    try:
        info = run_file(console, acc=acc, **options)
    except PtonumError as exc:
        return {"file": acc, "ok": False, "error": cli_message(exc)}
    except OSError as exc:
        return {"file": acc, "ok": False, "error": os_error_text(exc)}
    except MemoryError:  # this file's arrays are gone with its frames: the batch goes on
        return {"file": acc, "ok": False, "error": out_of_memory_text(acc)}
    row: Dict[str, Any] = {"file": acc, "ok": True, "text": captured.getvalue()}
    row.update(info)
    return row


def _absolute(options: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(options)
    for k in _PATH_OPTIONS:
        if out.get(k) is not None:
            out[k] = os.path.abspath(out[k])
    return out


def _report_error(row: Dict[str, Any]) -> None:
    text = row["error"] if row["file"] in row["error"] else f"{row['file']}: {row['error']}"
    sys.stderr.write(error_line("postprocess", text, translate=False) + "\n")
    sys.stderr.flush()


def _precheck_inputs(files: Sequence[str], missing_only: bool = False) -> None:
    """Every input of a batch exists (a regular file or a Zarr store) before the first file runs: a
    mistyped path is refused up front, not after other files' outputs were written.  A file that
    exists but fails on its contents is reported by the batch while the others complete (--fail-fast
    stops there).  ``missing_only``: only a path that does not exist (or a dangling link), the check made
    first, before the missing dask extra a ``.zarr`` name would ask for."""
    from ..dask.io import is_zarr
    from ._common import input_file
    from ._tile_args import split_key

    for f in files:
        path_text = split_key(f)[0]
        if (not Path(path_text).exists()) if missing_only else (not is_zarr(path_text)):
            input_file("ACC", path_text, "a .npy, .npz, .bin file or a Zarr store")


def run_postprocess(console: TextOut, accs: Sequence[str], options: Dict[str, Any], *, chunks: Optional[str],
                    workers: Optional[int], scheduler: Optional[str], fail_fast: bool,
                    run_file: Callable[..., Dict[str, Any]], fields_text: Callable[[Any], str],
                    allow_missing_chunks: bool = False) -> int:
    """The scale-out ``ptonum postprocess``: returns the exit status (0 all done, 2 a file failed).

    One input: its summary (a chunked run for Zarr/.npy with ``--chunks``, otherwise the in-memory
    path on a worker).  Several inputs (paths or globs): Zarr/--chunks inputs run one after the
    other with their chunks spread over the workers; the other files run one task each; then one
    table (each file's path whole, :func:`print_path_table`).  A failing file is reported on stderr while the others complete (``fail_fast``: stop).
    Raises :class:`UsageError` naming the extra to install when a Zarr/``--chunks`` input, ``--workers``
    or ``--scheduler`` needs Dask and it is missing, before any other check of the inputs and outputs.
    """
    files = expand_inputs(accs)
    _precheck_inputs(files, missing_only=True)  # a mistyped path first: "install dask" would not help
    if workers is not None or scheduler is not None or any(_is_chunked_input(f, chunks) for f in files):
        from ..dask.cluster import require_dask

        require_dask()  # the missing extra first: nothing else can run before it is installed
    if len(files) > 1:
        _precheck_inputs(files)
    if options.get("out_dir") is not None:  # two inputs must never write the same outputs
        seen: Dict[str, str] = {}
        for f in files:
            stem = output_stem(f, options.get("key"))
            if stem in seen:
                raise UsageError(f"ACC: {seen[stem]} and {f} would both write {stem}.* in --out-dir "
                                 f"{options['out_dir']}; give inputs with distinct names, or run them separately")
            seen[stem] = f
        inputs = files + [options.get(k) for k in _PATH_OPTIONS]
        for stem in seen:  # no input of the batch is another file's output
            refuse_inputs_among_outputs(Path(options["out_dir"]), stem, inputs)
    if chunks is not None:
        from ..dask import parse_chunks

        if max(parse_chunks(chunks)) > MAX_CHUNK:  # a chunk larger than the tile is cut to it; beyond int64 it broke
            raise UsageError(f"--chunks = {chunks}: chunk rows and columns must be at most {MAX_CHUNK} (2^63 - 1); "
                             "a chunk larger than the tile is cut to the tile")
    progress = options.get("progress")
    single = len(files) == 1
    rows: List[Dict[str, Any]] = []
    with client_for("postprocess", scheduler, workers) as client:
        chunked = [f for f in files if _is_chunked_input(f, chunks)]
        plain = [f for f in files if f not in chunked]
        if single and chunked:
            with memory_errors_name(files[0]):
                run_chunked_file(console, files[0], options, client, chunks, progress, fields_text=fields_text,
                                 allow_missing_chunks=allow_missing_chunks)
            return 0
        if single and client is None:
            with memory_errors_name(files[0]):
                run_file(console, acc=files[0], **options)
            return 0
        failed = False
        for f in chunked:
            try:
                rows.append(run_chunked_file(console, f, options, client, chunks, progress, quiet=True,
                                             fields_text=fields_text, allow_missing_chunks=allow_missing_chunks))
            except (PtonumError, MemoryError) as exc:
                text = out_of_memory_text(f) if isinstance(exc, MemoryError) else cli_message(exc)
                rows.append({"file": f, "ok": False, "error": text})
                _report_error(rows[-1])
                failed = True
                if fail_fast:
                    break
        if plain and not (failed and fail_fast):
            rows.extend(_run_plain(plain, options if client is None else _absolute(options), client, fail_fast,
                                   progress, run_file))
    if single and rows and rows[0]["ok"] and "text" in rows[0]:
        click.echo(rows[0]["text"], nl=False, file=console.file)
        return 0
    _print_table(rows, len(files))
    return 0 if rows and all(r["ok"] for r in rows) and len(rows) == len(files) else 2


def _largest_tile(files: Sequence[str], options: Dict[str, Any]) -> int:
    """The element count of the largest tile among ``files`` that can be told without reading one: a
    ``.npy`` file's header, a raw ``.bin`` file's ``--shape``; 0 for the others (``.npz``) and any file
    whose header cannot be read (the run reports it)."""
    import numpy as np

    from ._tile_args import parse_shape, split_key

    largest = 0
    for f in files:
        path = split_key(f)[0]
        suffix = Path(path).suffix.lower()
        try:
            if suffix == ".npy":
                with open(path, "rb") as fh:
                    version = np.lib.format.read_magic(fh)
                    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                        np.lib.format.read_array_header_2_0
                    shape = read(fh)[0]
            elif suffix == ".bin" and options.get("bin_shape"):
                shape = parse_shape(options["bin_shape"])
            else:
                continue
        except (OSError, ValueError, PtonumError):
            continue
        largest = max(largest, int(np.prod(shape, dtype=np.int64)))
    return largest


def _run_plain(files: List[str], options: Dict[str, Any], client: Any, fail_fast: bool,
               progress: Optional[bool], run_file: Callable[..., Dict[str, Any]]) -> List[Dict[str, Any]]:
    rows: Dict[str, Dict[str, Any]] = {}
    if client is not None:  # each file is one in-memory tile operation on a worker: its compile note, said here
        from .compile_cmd import compile_note_for

        compile_note_for(client, _largest_tile(files, options), options.get("engine", "fast"), ("postprocess",))
    enabled = progress if progress is not None else (len(files) > 1 and stderr_is_terminal())
    with task_progress("files", bool(enabled)) as cb:
        if client is None:
            for k, f in enumerate(files, 1):
                row = batch_one(run_file, f, options)
                rows[f] = row
                if not row["ok"]:
                    _report_error(row)
                    if fail_fast:
                        break
                if cb is not None:
                    cb(k, len(files))
        else:
            from distributed import as_completed

            futures = {client.submit(batch_one, run_file, os.path.abspath(f), options, pure=False, key=f"ptonum-file-{k}-{os.getpid()}-{id(files)}"): f
                       for k, f in enumerate(files)}
            try:
                for k, fut in enumerate(as_completed(list(futures)), 1):
                    row = fut.result()
                    row["file"] = futures[fut]
                    rows[futures[fut]] = row
                    if not row["ok"]:
                        _report_error(row)
                        if fail_fast:
                            break
                    if cb is not None:
                        cb(k, len(files))
            except BaseException:
                client.cancel([fut for fut in futures if not fut.done()])
                raise
            if fail_fast and len(rows) < len(files):
                client.cancel([fut for fut, f in futures.items() if f not in rows])
    return [rows[f] for f in files if f in rows]


def _print_table(rows: List[Dict[str, Any]], total: int) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = out_console()

    def table_of(first: str, cells: Sequence[str]) -> Table:
        table = Table(title=f"ptonum postprocess: {len(rows)} of {total} file(s)")
        table.add_column(first, justify="right" if first == "#" else "left")
        for col in ("status", "ACC", "D", "flags", "outputs / error"):
            table.add_column(col)
        for cell, r in zip(cells, rows):  # messages escaped: a [bracket] in a path is text, not markup
            if r["ok"]:
                shape = "x".join(str(v) for v in r.get("shape", ()))
                outputs = ", ".join(r.get("outputs", [])) + (
                    f" (removed an earlier run's {', '.join(Path(p).name for p in r['removed'])})" if r.get("removed")
                    else "")
                table.add_row(cell, "[green]ok[/green]", f"{shape} {r.get('acc_type', '')}",
                              r.get("dst_type", ""), f"{r['flags']:#04x} {flag_names(r['flags'])}", escape(outputs))
            else:
                table.add_row(cell, "[red]error[/red]", "", "", "", escape(r["error"]))
        return table

    # the ACC file's path whole (numbered, and listed under the table, when it would not fit), as check shows its
    # vector files'
    print_path_table(console, table_of, [r["file"] for r in rows], list(range(len(rows))), fold=("outputs / error",))
    bad = sum(1 for r in rows if not r["ok"])
    skipped = total - len(rows)
    summary = f"{len(rows) - bad} done, {bad} failed" + (f", {skipped} not run (--fail-fast)" if skipped else "")
    console.print(("[red]FAIL[/red]: " if bad or skipped else "[green]PASS[/green]: ") + summary, highlight=False)

