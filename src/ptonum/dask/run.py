"""Running a list of ``dask.delayed`` tasks with progress, on a client or in this process.

With a ``distributed.Client`` every task becomes a future (``client.compute``)
and progress advances as the futures complete (``distributed.as_completed``);
the first failed future cancels the others and its exception is raised.
Without a client the tasks run in this process with Dask's local scheduler,
and progress counts the finished tasks through a scheduler callback.

No spec counterpart (execution only).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

__all__ = ["ProgressFn", "run_tasks", "local_scheduler"]

#: ``progress(done, total)``: tasks finished so far and the number of tasks
ProgressFn = Callable[[int, int], None]


def local_scheduler() -> str:
    """The Dask scheduler used without a client: ``threads`` (the kernels are thread-safe and release
    the GIL); ``PTONUM_DASK_SCHEDULER=sync`` runs every task in the calling thread instead."""
    import os

    return os.environ.get("PTONUM_DASK_SCHEDULER", "threads") or "threads"


def run_tasks(tasks: Sequence[Any], *, client: Any = None, progress: Optional[ProgressFn] = None) -> List[Any]:
    """Compute ``tasks`` (``dask.delayed`` objects) and return their results in order.

    ``client``: a ``distributed.Client`` or ``None`` (this process).  ``progress(done, total)`` is
    called after each task finishes (``total = len(tasks)``).  Raises the first exception a task
    raised (remaining futures are cancelled).
    """
    total = len(tasks)
    if client is None:
        import dask
        from dask.callbacks import Callback

        if progress is None:
            return list(dask.compute(*tasks, scheduler=local_scheduler()))
        keys = {t.key for t in tasks}
        done = [0]

        class _Count(Callback):
            def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
                if key in keys:
                    done[0] += 1
                    assert progress is not None
                    progress(done[0], total)

        with _Count():
            return list(dask.compute(*tasks, scheduler=local_scheduler()))
    from distributed import as_completed

    futures = client.compute(list(tasks))
    try:
        for k, fut in enumerate(as_completed(futures), 1):
            if fut.status == "error":
                fut.result()  # raises the task's exception
            if progress is not None:
                progress(k, total)
        return list(client.gather(futures))
    finally:
        client.cancel(futures)
