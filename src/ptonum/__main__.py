"""The entry point of the ``ptonum`` command (the console script) and of ``python -m ptonum``.

SIGINT (Ctrl-C) and SIGTERM get one answer at every instant of a ``ptonum`` process: one line
``ptonum [COMMAND]: interrupted by SIGINT|terminated by SIGTERM; <what was written>`` on stderr and
exit status 130 / 143 -- never a traceback, never the process killed with nothing said -- or, once
the command has ended and the interpreter is finishing, the command's own result:

* **While this module is imported** (by the console script or ``python -m ptonum``): its first
  statements take both signals over (``_signal``, built in, so nothing is imported first) with a
  handler that only notes the signal; :func:`main` answers a noted one before it imports anything.
  What comes before is the interpreter's own start-up, the console script's ``import re, sys`` and
  the package ``__init__`` (which imports nothing): a Ctrl-C there can still show Python's
  ``KeyboardInterrupt`` traceback (status 130), which no code of ptonum can prevent.
* **Start-up** (:func:`main` importing click, numpy and the command's modules, a few hundred
  milliseconds): the signal ends the command as during a run: one line, ``nothing was written``.
* **The run**: the command's own handling (:class:`ptonum.cli._Group`,
  :func:`ptonum.publish.install_sigterm_handler`); it gives SIGTERM back to this module's handler when
  the command ends.
* **After the command** (its outputs published, its summary printed; the interpreter joins thread
  pools and runs exit callbacks, up to seconds): the one line, saying the outputs were written in
  full, and 130 / 143 at once.
* **The last exit callback** (registered first, so it runs after every one the command's libraries
  registered): both signals are ignored from then on.  Python gives its signal handlers up while it
  finalizes (the default action would kill the process with nothing said, status 130 with no line);
  an ignored signal stays ignored, so the process ends with the command's own status and output.

A signal the caller set to be ignored (``SIG_IGN``, e.g. SIGINT of a background job) stays ignored.

Imported by anything else (a test, a program calling :func:`main`), this module installs nothing at
import; :func:`main` takes the signals over when it is called.  In a worker process that a ptonum
command starts with multiprocessing's ``spawn`` (a local Dask cluster, ``--workers N``), which imports
the parent's main module as ``__mp_main__`` and so this module, SIGINT is ignored from that import on:
a Ctrl-C, which a terminal sends to the whole process group, is the parent's to handle (it shuts the
workers down and prints the one line), not a traceback of a worker still starting up.
"""

from __future__ import annotations

import _signal  # built in and already loaded by the interpreter: taking the signals over costs nothing

_SIGINT: int = _signal.SIGINT
_SIGTERM: int = _signal.SIGTERM

#: the phases of the process, as :func:`_on_signal` answers a signal in them
_NOTING, _STARTING, _ENDED, _FINAL = 0, 1, 2, 3
_phase = _STARTING
#: the signals noted while this module was imported as the entry point (answered by :func:`main`)
_noted: list = []


def _on_signal(signum: int, frame: object) -> None:
    """The handler of SIGINT and SIGTERM outside the command's own handling (see the module docstring)."""
    if _phase == _NOTING:
        _noted.append(signum)
    elif _phase == _STARTING:
        exc = _StartupTerminated(signum) if signum == _SIGTERM else KeyboardInterrupt()
        # loaded by the command: numba's JIT comes after it; still being imported (the signal arrived while
        # its body runs, before it defines the function), it has no callback to be inside of yet
        raise_for_signal = getattr(sys.modules.get("ptonum.publish"), "raise_for_signal", None)
        if raise_for_signal is not None:
            raise_for_signal(exc, signum, frame)  # not inside a callback that would drop it
            return
        raise exc
    elif _phase == _ENDED:
        _late_signal(signum)
    # _FINAL: the command ended and the process is exiting with its status; nothing to add


def _take_over(phase: int) -> bool:
    """Point SIGINT and SIGTERM at :func:`_on_signal` (each unless ignored) in ``phase``; False outside
    the main thread (nothing changed)."""
    global _phase
    _phase = phase
    try:
        for sig in (_SIGINT, _SIGTERM):
            if _signal.getsignal(sig) != _signal.SIG_IGN:
                _signal.signal(sig, _on_signal)
    except ValueError:  # not the main thread: the signals are not ours to take
        return False
    return True


def _importer() -> object:
    """The ``__name__`` of the module that imports this one (skipping the import machinery), or this
    module's own when it is run (``python -m ptonum``): ``"__main__"`` when that is the program's main
    module (the console script, ``python -c``), ``"__mp_main__"`` in a spawned multiprocessing child
    (its copy of the parent's main module)."""
    import sys

    if __name__ in ("__main__", "__mp_main__"):
        return __name__
    frame = sys._getframe(1)
    while frame.f_back is not None and (frame.f_globals is globals()
                                        or frame.f_code.co_filename.startswith("<frozen importlib")):
        frame = frame.f_back
    return frame.f_globals.get("__name__") if frame.f_code.co_name == "<module>" else None


_IMPORTED_BY = _importer()
if _IMPORTED_BY == "__main__":
    _take_over(_NOTING)
elif _IMPORTED_BY == "__mp_main__":  # a spawned worker of a ptonum command: Ctrl-C is the parent's
    try:
        if _signal.getsignal(_SIGINT) != _signal.SIG_IGN:
            _signal.signal(_SIGINT, _signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass

import sys  # noqa: E402  (after the signals are taken over)

TYPE_CHECKING = False  # typing itself is not imported: it is a noticeable part of start-up
if TYPE_CHECKING:
    from typing import NoReturn

#: exit status after SIGINT / SIGTERM (128 + signal number), as ``ptonum.publish`` defines them
_EXIT_SIGINT = 130
_EXIT_SIGTERM = 143
_last_step_registered = False


#: the commands of :mod:`ptonum.cli` and their subcommands, for the one line of a signal answered before
#: the command line is imported (``tests/test_cli_faults.py`` checks that they agree)
_COMMANDS = {"formats": (), "modes": (), "decode": (), "postprocess": (), "tcvt": (), "check": (), "gen": (),
             "explain": ("postprocess", "tcvt", "reduction"), "compare": (), "compile": (),
             "sweep": ("tcvt", "postprocess")}


def _command_named(argv: list) -> str:
    """The (sub)command a command line names (``postprocess``, ``explain tcvt``; ``""`` if none), read
    without importing the command line."""
    words = [a for a in argv if not a.startswith("-")]
    if not words or words[0] not in _COMMANDS:
        return ""
    if len(words) > 1 and words[1] in _COMMANDS[words[0]]:
        return f"{words[0]} {words[1]}"
    return words[0]


class _StartupTerminated(BaseException):
    """SIGTERM before the command's own handler took over (a BaseException, like KeyboardInterrupt,
    so no ``except Exception`` in an imported module swallows it)."""


def main() -> None:
    """Run the ``ptonum`` command line (``sys.argv``); ends the process with the command's status.

    Exit status: the command's (0, 1, 2, 141), or 130 / 143 after SIGINT / SIGTERM with one line on
    stderr (see the module docstring).
    """
    global _phase, _last_step_registered
    if not _last_step_registered:
        import atexit

        atexit.register(_last_step)  # before the command's libraries register theirs: it runs after them
        _last_step_registered = True
    try:
        _take_over(_STARTING)  # a signal from here on raises, at the latest in the next line
        if _noted:  # noted while this module was imported: answered before anything is imported
            _on_signal(_noted[0], None)
        from .cli import main as command

        command()  # always ends with SystemExit
    except (_StartupTerminated, KeyboardInterrupt) as exc:
        _stopped(exc)
    except BaseException as exc:  # SystemExit: the command ended (or a defect PTONUM_TRACEBACK=1 shows)
        # Python 3.11 turns an exception raised in a descriptor's __set_name__ while a class is created
        # (rich-click's RichHelpFormatter.highlighter, a cached_property) into RuntimeError("Error calling
        # __set_name__ ...") with it as the cause: a signal of start-up all the same
        if isinstance(exc, RuntimeError) and isinstance(exc.__cause__, (_StartupTerminated, KeyboardInterrupt)):
            _stopped(exc.__cause__)
        _phase = _ENDED  # first, with no call before it: a signal from here on is a late one
        _take_over(_ENDED)  # SIGTERM is back from the command; SIGINT too if anything changed it
        raise


def _stopped(exc: BaseException) -> NoReturn:
    """The one line and exit status for a signal outside the command's own handling: during start-up
    (nothing can have been written yet) or in the instant after the command gave SIGTERM back (then
    :func:`ptonum.publish.published_summary` says what it wrote)."""
    term = isinstance(exc, _StartupTerminated)
    _report(term)
    sys.exit(_EXIT_SIGTERM if term else _EXIT_SIGINT)


def _late_signal(signum: int) -> NoReturn:
    """A signal after the command ended (its outputs published, its summary printed), while the
    interpreter shuts down: the one line, which says the outputs were written in full, and 130 / 143
    at once."""
    import os

    term = signum == _SIGTERM
    try:
        sys.stdout.flush()
    except Exception:  # a closed or broken stdout: the line on stderr still matters
        pass
    _report(term)
    os._exit(_EXIT_SIGTERM if term else _EXIT_SIGINT)  # nothing is left to clean: the command ended


def _last_step() -> None:
    """The last exit callback: from here on SIGINT and SIGTERM are ignored (see the module docstring)."""
    global _phase
    _phase = _FINAL  # a signal noted before the switch below is answered by nothing
    try:
        for sig in (_SIGINT, _SIGTERM):
            if _signal.getsignal(sig) is _on_signal:
                _signal.signal(sig, _signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


def _report(term: bool) -> None:
    """Write ``ptonum [COMMAND]: interrupted by SIGINT|terminated by SIGTERM; <what was written>``."""
    global _phase
    _phase = _FINAL
    _signal.signal(_SIGTERM, _signal.SIG_IGN)  # a second signal must not cut the report short
    _signal.signal(_SIGINT, _signal.SIG_IGN)
    what = "nothing was written"
    command = ""
    try:
        command = _command_named(sys.argv[1:])
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
