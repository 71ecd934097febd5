"""Running a list of ``dask.delayed`` tasks with progress, on a client or in this process.

With a ``distributed.Client`` every task becomes a future (``client.compute``)
and progress advances as the futures complete (``distributed.as_completed``);
the first failed future cancels the others and its exception is raised.
Without a client the tasks run in this process with Dask's local scheduler,
and progress counts the finished tasks through a scheduler callback.

No spec counterpart (execution only).
"""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional, Sequence

__all__ = ["ProgressFn", "run_tasks", "local_scheduler"]

#: ``progress(done, total)``: tasks finished so far and the number of tasks
ProgressFn = Callable[[int, int], None]


def local_scheduler() -> str:
    """The Dask scheduler used without a client: ``threads`` (the kernels are thread-safe and release
    the GIL); ``PTONUM_DASK_SCHEDULER=sync`` runs every task in the calling thread instead."""
    import os

    return os.environ.get("PTONUM_DASK_SCHEDULER", "threads") or "threads"


def run_tasks(dsk: Mapping[Any, Any], keys: Sequence[Any], *, client: Any = None,
              progress: Optional[ProgressFn] = None) -> List[Any]:
    """Compute ``keys`` of the task graph ``dsk`` and return their results in order.

    ``client``: a ``distributed.Client`` (one future per key, ``client.get``) or ``None`` (this
    process, :func:`local_scheduler`).  ``progress(done, total)`` is called after each of the
    ``keys`` finishes (``total = len(keys)``).  Raises the first exception a task raised (the
    remaining futures are cancelled).
    """
    total = len(keys)
    if client is None:
        from dask import get as sync_get
        from dask.callbacks import Callback
        from dask.threaded import get as threaded_get

        wanted = set(keys)
        done = [0]

        class _Count(Callback):
            def _posttask(self, key: Any, result: Any, d: Any, state: Any, worker_id: Any) -> None:
                if key in wanted and progress is not None:
                    done[0] += 1
                    progress(done[0], total)

        if local_scheduler() == "sync":
            with _Count():
                return list(sync_get(dict(dsk), list(keys)))
        from concurrent.futures import ThreadPoolExecutor

        from dask.system import CPU_COUNT

        pool = ThreadPoolExecutor(CPU_COUNT)
        try:
            with _Count():
                return list(threaded_get(dict(dsk), list(keys), pool=pool))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # a task still running stops writing before we return
    from distributed import as_completed

    futures = client.get(dict(dsk), list(keys), sync=False)
    try:
        for k, fut in enumerate(as_completed(futures), 1):
            if fut.status == "error":
                fut.result()  # raises the task's exception
            if progress is not None:
                progress(k, total)
        return list(client.gather(futures))
    except BaseException:  # a failed task, Ctrl-C, SIGTERM: stop the rest of the work
        for fut in futures:  # released, not cancelled: the scheduler forgets every task nobody wants
            fut.release()      # (cancel() would also walk dependents that were never requested)
        _drain(client, {_name(k) for k in keys})
        raise


def _name(key: Any) -> str:
    return key[0] if isinstance(key, tuple) else str(key)


#: worker task states in which a task of the run may still run (and write): queued, running, cancelled or
#: rescheduled while running; a task finished (in memory, erred) or forgotten cannot write any more
_WORKER_LIVE = frozenset({"waiting", "ready", "constrained", "executing", "long-running", "cancelled", "resumed",
                          "rescheduled"})
#: scheduler task states from which a task of the run may still be sent to a worker
_SCHEDULER_LIVE = frozenset({"released", "waiting", "no-worker", "queued", "processing"})


def _known_to_worker(names: Any, dask_worker: Any = None) -> int:
    """On a worker: how many tasks of the key names ``names`` may still run there (:data:`_WORKER_LIVE`:
    queued, executing, cancelled while executing).  A finished task held in memory is not counted: it
    cannot write any more, and it stays there as long as a release has not arrived (which, after a
    signal, may be never: break stop 23 saw a SIGTERMed run wait its whole bound)."""
    state = getattr(dask_worker, "state", None)
    tasks = getattr(state, "tasks", None) or {}
    return sum(1 for key, ts in list(tasks.items())
               if _name(key) in names and getattr(ts, "state", "executing") in _WORKER_LIVE)


def _known_to_scheduler(names: Any, dask_scheduler: Any = None) -> int:
    """On the scheduler: how many tasks of the key names ``names`` could still be sent to a worker
    (:data:`_SCHEDULER_LIVE`: a task not yet sent could still be sent after the workers were asked)."""
    tasks = getattr(dask_scheduler, "tasks", None) or {}
    return sum(1 for key, ts in list(tasks.items())
               if _name(key) in names and getattr(ts, "state", "processing") in _SCHEDULER_LIVE)


def _drain(client: Any, names: Any, timeout: float = 120.0) -> None:
    """Wait (bounded) until neither the scheduler nor any worker holds a task of ``names`` that may
    still run (finished ones do not count):
    a released task that is already running cannot be stopped, a queued one may still start
    before the release reaches its worker, and neither may write into a temporary that is about
    to be removed.  Both are asked in each round (the release travels on another channel than
    these questions, so "nothing executing right now" alone is not enough).  Best effort: a lost
    connection, or a question not answered before the bound (each is given what is left of it:
    distributed's own calls wait for ever for an unresponsive worker or scheduler), ends the wait."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            on_scheduler = client.run_on_scheduler(_known_to_scheduler, names,
                                                   callback_timeout=max(deadline - time.monotonic(), 0.01))
            counts = client.run(_known_to_worker, names, callback_timeout=max(deadline - time.monotonic(), 0.01))
        except Exception:  # scheduler gone, or no answer within the bound: nothing more to wait for
            return
        if not on_scheduler and not any(counts.values()):
            return
        time.sleep(0.1)
