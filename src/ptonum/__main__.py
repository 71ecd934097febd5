"""The entry point of the ``ptonum`` command (the console script) and of ``python -m ptonum``.

Its first act is to take over SIGTERM, before the command line's heavy imports (click, numpy and
the command's modules, a few hundred milliseconds): a SIGTERM that arrives while the command
starts up ends it the way one arriving during a run does -- one line ``ptonum [COMMAND]:
terminated by SIGTERM; nothing was written`` on stderr and exit status 143 -- instead of the
default action (the process killed, status -15).  A SIGINT (Ctrl-C) during start-up likewise
gives one line and status 130 instead of a traceback.  Once the command runs, its own handler
(:func:`ptonum.publish.install_sigterm_handler`, installed by :class:`ptonum.cli._Group`) takes
over and gives SIGTERM back to this one when the command ends.

What is left before the handler exists is the interpreter's own start-up and the import of this
module and of the package ``__init__``, which import only ``signal`` and ``sys`` (a plain ``import
ptonum`` loads no numpy; ``tests/test_cli_faults.py`` checks both).  If SIGTERM is ignored
(``SIG_IGN``) it stays ignored.
"""

from __future__ import annotations

import signal
import sys

TYPE_CHECKING = False  # typing itself is not imported: it is a noticeable part of start-up
if TYPE_CHECKING:
    from types import FrameType
    from typing import NoReturn, Optional

#: exit status after SIGINT / SIGTERM (128 + signal number), as ``ptonum.publish`` defines them
_EXIT_SIGINT = 130
_EXIT_SIGTERM = 143


class _StartupTerminated(BaseException):
    """SIGTERM before the command's own handler took over (a BaseException, like KeyboardInterrupt,
    so no ``except Exception`` in an imported module swallows it)."""


def _raise_startup_terminated(signum: int, frame: Optional[FrameType]) -> None:
    raise _StartupTerminated(signum)


def main() -> None:
    """Run the ``ptonum`` command line (``sys.argv``); ends the process with the command's status."""
    installed = False
    if signal.getsignal(signal.SIGTERM) != signal.SIG_IGN:
        try:
            signal.signal(signal.SIGTERM, _raise_startup_terminated)
            installed = True
        except ValueError:  # not the main thread: leave SIGTERM alone
            pass
    try:
        from .cli import main as command

        command()  # always ends with SystemExit
    except (_StartupTerminated, KeyboardInterrupt) as exc:
        _stopped(exc)
    except SystemExit:
        _guard_shutdown(installed)
        raise
    finally:
        if installed and signal.getsignal(signal.SIGTERM) is _raise_startup_terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stopped(exc: BaseException) -> NoReturn:
    """The one line and exit status for a signal outside the command's own handling: during start-up
    (nothing can have been written yet) or in the instant after the command gave SIGTERM back (then
    :func:`ptonum.publish.published_summary` says what it wrote)."""
    term = isinstance(exc, _StartupTerminated)
    _report(term)
    sys.exit(_EXIT_SIGTERM if term else _EXIT_SIGINT)


def _guard_shutdown(term_installed: bool) -> None:
    """After the command ended (its outputs published, its summary printed): a SIGINT or SIGTERM that
    arrives while the interpreter shuts down (thread pools, caches: up to seconds) gives the one line,
    which says the outputs were written in full, and status 130/143 at once -- instead of the process
    killed by the signal with nothing said.  A signal the caller set to be ignored stays ignored."""
    try:
        if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
            signal.signal(signal.SIGINT, _late_signal)
        if term_installed:
            signal.signal(signal.SIGTERM, _late_signal)
    except ValueError:  # not the main thread
        pass


def _late_signal(signum: int, frame: Optional[FrameType]) -> None:
    import os

    term = signum == signal.SIGTERM
    try:
        sys.stdout.flush()
    except Exception:  # a closed or broken stdout: the line on stderr still matters
        pass
    _report(term)
    os._exit(_EXIT_SIGTERM if term else _EXIT_SIGINT)  # nothing is left to clean: the command ended


def _report(term: bool) -> None:
    """Write ``ptonum [COMMAND]: interrupted by SIGINT|terminated by SIGTERM; <what was written>``."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second signal must not cut the report short
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    what = "nothing was written"
    command = ""
    try:
        from . import publish

        publish.remove_temporaries()
        what = publish.published_summary()
        cli = sys.modules.get("ptonum.cli")
        if cli is not None and hasattr(cli, "command_from_argv"):  # fully imported
            command = cli.command_from_argv(sys.argv[1:])
    except Exception:  # the report must not fail; nothing was published by a command that never ran
        pass
    name = f"ptonum {command}" if command else "ptonum"
    try:
        sys.stderr.write(f"{name}: {'terminated by SIGTERM' if term else 'interrupted by SIGINT'}; {what}\n")
        sys.stderr.flush()
    except Exception:  # a closed stderr: the exit status still says it
        pass


if __name__ == "__main__":
    main()
