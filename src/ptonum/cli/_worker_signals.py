"""Imported by the worker processes of a local Dask cluster that a ``ptonum`` command starts
(``--workers N``; the ``distributed.worker.preload`` setting of :func:`ptonum.cli._scale_out.client_for`):
the worker ignores SIGINT.  A Ctrl-C, which the terminal sends to the whole process group, then ends
only the command's own process, which shuts the cluster down and prints its one line, instead of every
worker printing its own KeyboardInterrupt traceback.

Only in a child process's main thread: imported anywhere else (the command's own process, a worker
thread) it does nothing.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading

if multiprocessing.parent_process() is not None and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
