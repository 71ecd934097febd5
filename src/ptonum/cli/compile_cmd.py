"""``ptonum compile``: compile (or load from numba's cache) every kernel of the fast engine ahead of time.

A first large fast-engine call (``PTONUM_KERNEL_MIN_ELEMENTS``, default 65536 elements) with a cold
cache otherwise compiles them on the spot, for several minutes (about 10 for all of them on 2 idle AVX2 cores).  No spec counterpart.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any, ContextManager, Iterator, Sequence

import numpy as np
import rich_click as click

from ._common import errors_to_exit, kernels_from, stderr_is_terminal

#: the kernel modules, in the order they are compiled
KERNEL_MODULES = ("postprocess", "tcvt", "decompose")

COLD_NOTE = ("compiling the fast kernels this call needs (once, cached for later runs: seconds for the TCVT and "
             "decomposition kernels, several minutes for post-processing's; `ptonum compile` compiles all of them "
             "ahead of time)")


def warn_if_cold(size: int, engine: str = "fast") -> ContextManager[object]:
    """A context for a ``size``-element ``engine`` call: one line on stderr (:data:`COLD_NOTE`) just before
    a kernel the call uses is compiled, i.e. when the kernel cache holds no compilation of it for these
    argument types (:class:`ptonum.kernels.compile_note`), and only when stderr is a terminal
    (:func:`ptonum.cli._common.stderr_is_terminal`): someone is watching a command that seems to hang for
    minutes, while a script, a pipe or a test capturing stderr never gets the line.  The
    no-writable-cache note, which asks for a fix, is written wherever stderr goes (by the kernel cache,
    armed or not).  Kernels the call does not use are not asked about.  A small call, or the reference
    engine, never imports numba (start-up time).  The line never changes stdout or the exit status."""
    from ..tables import kernel_size

    if engine != "fast" or not size or not kernel_size(size) or not stderr_is_terminal():
        return contextlib.nullcontext()
    from ..kernels import compile_note, numba_enabled

    if not numba_enabled(size):
        return contextlib.nullcontext()
    return compile_note(COLD_NOTE)


#: the line for a run whose kernels compile on Dask workers (said once, by the client)
WORKERS_COLD_NOTE = ("the Dask workers are compiling the fast kernels once (several minutes; cached for later "
                     "runs; `ptonum compile` where the workers run does it ahead of time)")


def kernels_cold(modules: Sequence[str], size: int) -> bool:
    """Would a ``size``-element fast-engine call in this process compile a kernel of one of ``modules``
    (``postprocess``, ``tcvt``, ``decompose``)?  True when the call would use the kernels
    (:func:`ptonum.kernels.numba_enabled`, ``NUMBA_DISABLE_JIT`` off) and the kernel cache holds no
    current compilation of every one of them (:func:`ptonum.kernels.kernel_cache_warm`, which reads the
    small index files only).  Run on each worker by :func:`compile_note_for`; any surprise is a no."""
    from ..tables import kernel_size

    if not kernel_size(size):  # numba is not imported for a call that would not use it
        return False
    try:
        from ..engines import kernels_available
        from ..kernels import kernel_cache_warm, numba_enabled

        return kernels_available() and numba_enabled(size) and not all(kernel_cache_warm(m) for m in modules)
    except Exception:
        return False


def compile_note_for(client: Any, size: int, engine: str, modules: Sequence[str]) -> ContextManager[object]:
    """The compile note of a run of ``size``-element fast-engine calls of ``modules``' kernels, in this
    process (``client`` None: :func:`warn_if_cold`) or on the Dask workers of ``client``.

    On workers the line cannot come from the compilation itself (it happens in their processes, whose
    stderr is not the user's): before any task is submitted, every worker is asked (``client.run``,
    :func:`kernels_cold`, a few index files read) and, when one of them would compile, this process
    writes :data:`WORKERS_COLD_NOTE` once, however many workers compile.  As :func:`warn_if_cold`: only
    when stderr is a terminal; a worker that does not answer counts as warm (no note; the run reports
    its own failures).  Returns a context to hold around the run (a no-op for workers)."""
    if client is None:
        return warn_if_cold(size, engine)
    if engine == "fast" and size and stderr_is_terminal():
        try:
            answers = client.run(kernels_cold, list(modules), int(size), on_error="ignore")
        except Exception:  # e.g. a scheduler that lost its workers: the run itself says so
            answers = {}
        if any(v is True for v in answers.values()):
            from ..kernels import note

            note("compile-workers", WORKERS_COLD_NOTE)
    return contextlib.nullcontext()


def _compile_tcvt() -> None:
    from ..formats import TileDataType
    from ..rounding import RoundingMode
    from ..tcvt import SUPPORTED_SOURCES, to_e8m0

    for src in SUPPORTED_SOURCES:
        bits = np.zeros(4, np.uint32 if src is TileDataType.FP32 else np.uint16)
        for mode in RoundingMode:
            for sat in (False, True):
                to_e8m0(bits, src_type=src, rmode=mode, sat=sat, engine="fast")


def _carrier_codes() -> Iterator[tuple]:
    from ..formats import TileDataType, carrier_bits

    for dt in TileDataType:
        bits = carrier_bits(dt)
        dtype = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}.get(bits, np.uint32)
        yield dt, np.zeros(4, dtype)
        if bits == 16:  # 16-bit codes held in bytes run their own specialization
            yield dt, np.zeros(4, np.uint8)


def _compile_decompose() -> None:
    from ..errors import PtonumError
    from ..formats import decompose

    for dt, codes in _carrier_codes():
        try:
            decompose(dt, codes, engine="fast")
        except PtonumError:  # a type without a floating decomposition
            pass


@click.command("compile")
def command() -> None:
    """Compile the fast engine's numba kernels now (or load them from the cache), and say where the cache is.

    The fast engine uses compiled kernels for calls of 65536 elements or more
    (`PTONUM_KERNEL_MIN_ELEMENTS`); the first such call with a cold cache compiles them, which
    takes minutes once (all of them: about 11 minutes on 2 idle cores of an AVX2 Zen 3, 227 s on an AVX-512 Zen 5, 2026-12-02; several times that under load).
    Run this after installing or upgrading ptonum to pay that up front. Kernels are looked up in `PTONUM_CACHE_DIR`, `NUMBA_CACHE_DIR` (each when set),
    `__pycache__` next to the kernel modules and numba's per-user cache, in that order, and
    saved in the first writable one. For a shared read-only install, run
    `PTONUM_CACHE_DIR=DIR ptonum compile` once and give every user `PTONUM_CACHE_DIR=DIR`
    (read access is enough), or run `ptonum compile` once as the install's owner.
    A damaged cache file is discarded and rebuilt.
    """
    from ..errors import UsageError
    from ..tables import numba_disabled
    from ..kernels import HALF_READY, NUMBA_AVAILABLE, kernel_cache_dir, kernel_cache_dirs, kernel_cache_warm, \
        numba_enabled, publish_kernels, writable_cache_dir

    if not NUMBA_AVAILABLE or not numba_enabled(None):
        if not NUMBA_AVAILABLE:
            why = "numba is not installed"
        elif numba_disabled():
            why = f"PTONUM_DISABLE_NUMBA = {os.environ.get('PTONUM_DISABLE_NUMBA', '')!r} turns the kernels off"
        elif not HALF_READY:  # no F16C and no binary16 conversion routines (ptonum.kernels.HALF_READY)
            why = ("numba's target has no F16C and no loaded library provides __extendhfsf2/__truncsfhf2 "
                   "(libgcc_s of GCC 12 or later)")
        else:  # forked after the kernels' threads started (ptonum.kernels.numba_enabled)
            why = "the kernels are off in this process (forked after their threads started)"
        click.echo(f"nothing to compile: {why}; the fast engine uses numpy only")
        return
    from ..engines import compile_postprocess, kernels_available

    if not kernels_available():  # numba is there but NUMBA_DISABLE_JIT is on: its decorators build nothing
        click.echo("nothing to compile: NUMBA_DISABLE_JIT is set; the fast engine uses numpy only")
        return

    steps = (("postprocess", compile_postprocess), ("tcvt", _compile_tcvt), ("decompose", _compile_decompose))
    total = 0.0
    with errors_to_exit("compile"), kernels_from(0, override=True):  # every size on the kernels
        from ..engines import threading_layer_problem

        layer_why = threading_layer_problem()  # before any kernel loads: its load would fail as if the file were damaged
        if layer_why:
            raise UsageError(layer_why)
        writable = writable_cache_dir()
        if writable is None and not all(kernel_cache_warm(n) for n, _ in steps):
            raise UsageError("no writable kernel cache directory (tried " + ", ".join(kernel_cache_dirs())
                             + "); set PTONUM_CACHE_DIR to a directory you can write")
        for name, fn in steps:
            was = "cached" if kernel_cache_warm(name) else "compiled"
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            total += dt
            click.echo(f"{name:<12} {dt:6.1f} s  ({was})")
        publish_kernels([n for n, _ in steps])
    dirs = sorted({d for d in (kernel_cache_dir(n) for n, _ in steps) if d})
    click.echo(f"all kernels ready in {total:.1f} s; cache: {', '.join(dirs) or 'unknown'}")
