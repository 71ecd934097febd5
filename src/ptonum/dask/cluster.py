"""Where Dask work runs: an existing scheduler, a local cluster, or the current process.

Every scale-out entry point of ptonum (the Python API in :mod:`ptonum.dask` and
the ``--scheduler`` / ``--workers`` options of the commands) chooses the same
way:

* ``scheduler="tcp://host:8786"``: connect to an existing ``dask.distributed``
  scheduler (a cluster started by dask-jobqueue, dask-kubernetes, ``dask
  scheduler`` ...); its workers must have ptonum installed.
* ``workers=N``: start a :class:`distributed.LocalCluster` of ``N`` worker
  *processes* (one thread each) for the duration of the call.
* neither: no client; the work runs in the current process with Dask's
  threaded scheduler (or synchronously).

Worker processes are started with the ``spawn`` method (never ``fork``): the
compiled kernels run on an OpenMP thread pool, which a forked child may
inherit in a broken state.  Each local worker gets ``NUMBA_NUM_THREADS`` so
that N workers together use no more threads than there are cores.

No spec counterpart (execution placement only).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator, Optional, Tuple

from ..errors import UsageError

__all__ = ["require_dask", "open_client", "default_workers", "WORKER_START_METHOD"]

#: how local worker processes are started (``fork`` is never used: OpenMP is not fork-safe)
WORKER_START_METHOD = "spawn"


def require_dask() -> None:
    """Raise :class:`UsageError` naming the extra to install when Dask, distributed or Zarr is missing."""
    missing = []
    for name in ("dask", "dask.array", "distributed", "zarr"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise UsageError(
            f"scale-out needs {', '.join(missing)}: install the extra with pip install 'ptonum[dask]'"
        )


def default_workers() -> int:
    """One local worker per core available to this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _check_choice(scheduler: Optional[str], workers: Optional[int]) -> None:
    if scheduler is not None and workers is not None:
        raise UsageError("--scheduler and --workers both choose where to run: give one (or neither for this process)")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"--workers = {workers!r}: expected a positive number of worker processes")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise UsageError(f"--scheduler = {scheduler!r}: expected a scheduler address such as tcp://host:8786")


#: what a worker is asked before any work: its ptonum version and a digest of its ptonum source files (the
#: build: two installs of one version from different commits compute different bits), as an expression
#: evaluated there, so that the question itself needs no ptonum to arrive (a task that names a ptonum function
#: cannot even be read by a worker without it, whose connection then dies and leaves the run waiting for ever).
#: This process answers the same expression.
_BUILD_PROBE = ("(lambda p, os, h: (p.__version__, h.sha256(b''.join("
                "os.path.relpath(os.path.join(d, f), r).encode() + b'\\0' + open(os.path.join(d, f), 'rb').read() "
                "for r in [os.path.dirname(os.path.abspath(p.__file__))] for d, _, fs in sorted(os.walk(r)) "
                "for f in sorted(fs) if f.endswith('.py'))).hexdigest()[:12]))"
                "(__import__('ptonum'), __import__('os'), __import__('hashlib'))")


def build_identity() -> Tuple[str, str]:
    """(version, source digest) of this process's ptonum: :data:`_BUILD_PROBE` evaluated here.

    Source: no spec counterpart (scale-out).
    """
    return eval(_BUILD_PROBE)  # noqa: S307 - a constant expression of this module


def _check_workers(client: Any, scheduler: str) -> None:
    """Raise :class:`UsageError` when a worker of ``scheduler`` cannot import ptonum or runs another build than
    this process (another version, or the same version from other source files: docs/scale-out.md, workers
    must run the same ptonum), naming the worker and what it said; a scheduler without workers yet, or one
    that does not answer, is not judged here."""
    import functools

    version, digest = build_identity()
    try:
        answers = client.run(functools.partial(eval, _BUILD_PROBE), on_error="return")
    except Exception:  # the run itself reports a scheduler that stops answering
        return
    for worker, said in sorted(answers.items()):
        if isinstance(said, BaseException):
            raise UsageError(f"--scheduler = {scheduler}: worker {worker} cannot import ptonum "
                             f"({type(said).__name__}: {said}); install ptonum[dask] {version} in the workers' "
                             "environment") from None
        if tuple(said) != (version, digest):
            raise UsageError(f"--scheduler = {scheduler}: worker {worker} runs ptonum {said[0]} (source digest "
                             f"{said[1]}), this process {version} ({digest}); workers must run the same ptonum "
                             "build") from None


def _scheduler_lost(client: Any, exc: BaseException) -> bool:
    """Did the run fail because ``client`` lost its scheduler (killed, its machine gone, the network
    cut)?  Yes when distributed cancelled the work for that reason or the client no longer runs; any
    other failure is the run's own and propagates unchanged."""
    return ("scheduler-connection-lost" in str(exc)
            or getattr(client, "status", "running") not in ("running", "connecting"))


@contextlib.contextmanager
def open_client(scheduler: Optional[str] = None, workers: Optional[int] = None, *,
                memory_limit: Any = "auto", quiet: bool = True) -> Iterator[Any]:
    """Yield a ``distributed.Client`` for ``scheduler`` or a new ``LocalCluster`` of ``workers``
    processes, or ``None`` (run in this process) when both are ``None``.

    ``memory_limit`` is passed to each local worker (``"auto"`` splits the machine's memory;
    ``"700MiB"`` caps each worker, which then spills to disk and is restarted by its nanny
    only when it exceeds the limit).  The client (and a cluster it started) is closed on exit.

    Raises :class:`UsageError` when both are given, ``workers`` is not a positive int, or the
    scheduler cannot be reached (the address and the reason are named); and, from the body, when the
    connection to ``scheduler`` is lost during the run (the scheduler killed or unreachable: distributed's
    own log lines are silenced when ``quiet``, the failure is this one error naming the address); and, before
    yielding, when a worker of ``scheduler`` cannot import ptonum or runs another version (the worker named).
    """
    _check_choice(scheduler, workers)
    if scheduler is None and workers is None:
        yield None
        return
    require_dask()
    import logging

    import dask
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"--scheduler = {scheduler}: cannot connect ({exc})") from None
        # distributed logs a lost scheduler in lines of its own (an ERROR, a traceback of the closed
        # comm) before the run fails: the failure below says it in ptonum's one line instead
        logs = [logging.getLogger(name) for name in ("distributed", "distributed.client")]
        levels = [log.level for log in logs]
        if quiet:
            for log in logs:
                log.setLevel(logging.CRITICAL)
        try:
            _check_workers(client, scheduler)  # before the body: its refusal is not a lost scheduler
            try:
                yield client
            except Exception as exc:
                if not _scheduler_lost(client, exc):
                    raise
                raise UsageError(f"--scheduler = {scheduler}: lost the connection to the scheduler during the run "
                                 "(stopped or unreachable); the run did not finish: rerun it once the scheduler is "
                                 "back") from None
        finally:
            client.close()  # first: closing a client that lost its scheduler logs the cancelled reconnection
            for log, level in zip(logs, levels):
                log.setLevel(level)
        return
    assert workers is not None
    threads = max(1, default_workers() // workers)
    env = {"NUMBA_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
           "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    for key in ("PTONUM_DISABLE_NUMBA", "PTONUM_KERNEL_MIN_ELEMENTS", "NUMBA_CACHE_DIR"):
        if key in os.environ:
            env[key] = os.environ[key]
    with dask.config.set({"distributed.worker.multiprocessing-method": WORKER_START_METHOD,
                          "distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               memory_limit=memory_limit, dashboard_address=":0",
                               silence_logs=logging.CRITICAL if quiet else logging.WARNING, env=env)
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
