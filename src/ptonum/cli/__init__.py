"""The ``ptonum`` command.

Each subcommand lives in its own module of this package (``<name>_cmd``, listed in
:data:`_COMMANDS`) and is imported only when it is run or help lists it, so that a small
``ptonum postprocess`` starts quickly (see :class:`_Group`); the group itself only sets up help and
the version option.
"""

from __future__ import annotations

import codecs
import errno
import importlib
import os
import signal
import sys
import warnings
from typing import Any, List, NoReturn, Optional, Sequence, Tuple

import click as _click
import rich_click as click

from .. import __version__
from .._util import surrogate_byte
from ..errors import PtonumError
from ..publish import (EXIT_SIGINT, EXIT_SIGTERM, Terminated, install_sigterm_handler, published_count,
                       published_summary, remove_temporaries)
from ._common import (EXIT_ERROR, broken_pipe_exit, error_line, fail, help_width, missing_command, os_error_text,
                      stdout_failure_exit, stdout_write_failed)

click.rich_click.TEXT_MARKUP = "markdown"
click.rich_click.SHOW_ARGUMENTS = True


def command_name(ctx: Optional[click.Context]) -> str:
    """``postprocess`` or ``explain reduction`` for the context an error was raised in (``""`` at the top).

    The root's own name is skipped (it is ``main`` under click's test runner, ``ptonum`` from a shell).
    """
    names: List[str] = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or ctx.command.name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def _command_from_args(group: click.Group, args: Sequence[str]) -> str:
    """Best guess of the (sub)command named on the command line, for an error click raised without
    a context (e.g. an option missing its value): leading command names, options skipped."""
    names: List[str] = []
    cmd: Any = group
    for arg in args:
        if arg.startswith("-"):
            continue
        sub = _subcommand(cmd, arg)
        if sub is None:
            break
        names.append(arg)
        cmd = sub
    return " ".join(names)


def _subcommand(cmd: Any, name: str) -> Any:
    """The subcommand ``name`` of group ``cmd`` (imported if it is one of ours), or None."""
    if isinstance(cmd, _Group):
        return cmd.command_named(name)
    if isinstance(cmd, _click.Group):
        return cmd.commands.get(name)
    return None


def usage_error_line(exc: _click.ClickException, fallback: str = "") -> str:
    """A click option-parsing error as the one line every ptonum error uses:
    ``ptonum <command>: error: <click's message> (see 'ptonum <command> --help')``
    (``fallback`` names the command when click gives the error no context)."""
    ctx = getattr(exc, "ctx", None)
    name = command_name(ctx) if ctx is not None else fallback
    full = f"ptonum {name}" if name else "ptonum"
    return f"{error_line(name, exc.format_message())} (see '{full} --help')".replace(
        "ptonum : error:", "ptonum: error:")


def _refuse_repeated_options(cmd: Any) -> None:
    """Make ``cmd`` (and a group's subcommands) refuse an option given more than once that takes one
    value (``--scale 1 --scale 2``, ``--progress --no-progress``): click keeps the last one without a
    word, which the user may not have meant.  Options that collect values (``multiple``) or count
    are not affected."""
    if getattr(cmd, "_ptonum_repeats_checked", False):
        return
    cmd._ptonum_repeats_checked = True
    for sub in getattr(cmd, "commands", {}).values():
        _refuse_repeated_options(sub)
    original = cmd.parse_args

    def parse_args(ctx: click.Context, args: List[str]) -> List[str]:
        _check_repeats(ctx, cmd, args)
        return original(ctx, args)

    cmd.parse_args = parse_args


def _check_repeats(ctx: click.Context, cmd: Any, args: Sequence[str]) -> None:
    """Raise click's UsageError for the first single-valued option of ``cmd`` that ``args`` give twice."""
    by_name: dict = {}
    for param in cmd.params:
        if isinstance(param, _click.Option) and not param.multiple and not param.count:
            for opt in (*param.opts, *param.secondary_opts):
                by_name[opt] = param
    seen: dict = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        param = by_name.get(name) if arg.startswith("-") else None
        if param is not None:
            if not eq and not param.is_flag and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            shown = name if param.is_flag else f"{name} {value}"
            seen.setdefault(param.name, []).append(shown)
            if len(seen[param.name]) > 1:
                raise _click.UsageError(f"{param.opts[0]} given twice ({', '.join(seen[param.name])}); give it once",
                                        ctx)
        i += 1



def _one_line_warning(shown: Any) -> Any:
    """A ``warnings.showwarning`` that writes a warning whose text runs over several lines (numba's warning
    about a ``NUMBA_*`` variable it cannot parse carries a whole traceback) as one line,
    ``ptonum: note: PACKAGE: Category: first line (last line)``; any other warning goes to ``shown``."""
    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        text = str(message).strip()
        if "\n" not in text:
            shown(message, category, filename, lineno, file, line)
            return
        lines = [t.strip() for t in text.splitlines() if t.strip()]
        parts = filename.replace("\\", "/").split("/")
        package = next((parts[i + 1] for i in range(len(parts) - 1) if parts[i] in ("site-packages", "dist-packages")),
                       os.path.basename(filename))
        tail = f" ({lines[-1]})" if len(lines) > 1 and lines[-1] != lines[0] else ""
        try:
            sys.stderr.write(f"ptonum: note: {package}: {category.__name__}: {lines[0]}{tail}\n")
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
    return show

class _Group(click.RichGroup):
    """The top-level group: any :class:`PtonumError` or :class:`OSError` a subcommand lets escape
    becomes one line on stderr (``ptonum <command>: error: ...``) and exit status 2; so does every
    click option-parsing error (bad or unknown option, missing argument, unknown command), instead
    of click's usage box.

    Subcommands are loaded lazily: a command's module is imported when the command is run (only
    that one), and all of them when help lists them (``ptonum``, ``ptonum --help``) or
    :meth:`load_all` is called.  ``self.commands`` holds the ones loaded so far.
    """

    _argv: List[str] = []

    def command_named(self, name: str) -> Optional[_click.Command]:
        """The subcommand ``name``, its module imported on first use (None if there is no such command)."""
        if name not in self.commands and name in _COMMANDS:
            mod = importlib.import_module(f"{__name__}.{name}_cmd")
            _refuse_repeated_options(mod.command)
            self.add_command(mod.command)
        return self.commands.get(name)

    def load_all(self) -> "_Group":
        """Import every subcommand (for help and shell completion listings); returns the group."""
        for name in _COMMANDS:
            self.command_named(name)
        return self

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[_click.Command]:
        self.command_named(cmd_name)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> List[str]:
        return sorted(set(_COMMANDS) | set(self.commands))

    def resolve_command(self, ctx: click.Context, args: List[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except _click.exceptions.NoSuchCommand as exc:  # "Did you mean ...?" from every command, loaded or not
            raise _click.exceptions.NoSuchCommand(exc.command_name, possibilities=self.list_commands(ctx),
                                                  ctx=ctx) from None

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.load_all()  # rich-click's command panels read self.commands
        super().format_help(ctx, formatter)

    def main(self, args: Optional[Sequence[str]] = None, prog_name: Optional[str] = None,
             complete_var: Optional[str] = None, standalone_mode: bool = True, **extra: Any) -> Any:
        shown = warnings.showwarning
        if not os.environ.get("PTONUM_TRACEBACK"):
            warnings.showwarning = _one_line_warning(shown)
        extra.setdefault("terminal_width", help_width())  # help's width: rich-click would read COLUMNS unchecked
        try:
            return self._main(args, prog_name, complete_var, standalone_mode, **extra)
        finally:
            warnings.showwarning = shown

    def _main(self, args: Optional[Sequence[str]], prog_name: Optional[str], complete_var: Optional[str],
              standalone_mode: bool, **extra: Any) -> Any:
        if not standalone_mode:  # the caller handles click's exceptions itself
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        argv = list(args) if args is not None else sys.argv[1:]
        self._argv = argv
        _stderr_or_devnull()
        _text_that_always_encodes()
        _stderr_that_never_fails()
        if getattr(sys, "stdout", None) is None:  # started with standard output closed (`>&-`)
            fail(_command_from_args(self, argv), "standard output is closed (started with >&-); nothing is run: "
                 "redirect it to a file or to /dev/null instead", translate=False)
        before = 0  # what this process had published before the command (one command per process: 0)
        previous = signal.getsignal(signal.SIGTERM)
        installed = False
        try:
            before = published_count()
            installed = install_sigterm_handler()
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _click.ClickException as exc:
            sys.stderr.write(usage_error_line(exc, _command_from_args(self, argv)) + "\n")
            sys.stderr.flush()
            sys.exit(EXIT_ERROR)
        except _click.Abort as exc:  # click turns KeyboardInterrupt outside a command into Abort
            if isinstance(exc.__context__, KeyboardInterrupt):
                interrupted(_command_from_args(self, argv), exc.__context__, before)
            sys.stderr.write("ptonum: aborted\n")
            sys.exit(1)
        except (KeyboardInterrupt, Terminated) as exc:
            interrupted(_command_from_args(self, argv), exc, before)
        except BrokenPipeError:  # help or an error message into a closed pipe
            broken_pipe_exit()
        except Exception as exc:  # a defect outside a command (option parsing): still one line
            if stdout_write_failed(exc):  # --help, --version > /dev/full
                stdout_failure_exit(_command_from_args(self, argv), exc, before)  # type: ignore[arg-type]
            if os.environ.get("PTONUM_TRACEBACK"):
                raise
            fail(_command_from_args(self, argv), internal_error_text(exc))
        finally:
            if installed:
                signal.signal(signal.SIGTERM, previous)
        # standalone_mode=False returns click.exceptions.Exit's code (--help, --version) or the command's value
        try:
            sys.stdout.flush()  # a pipe closed by its reader shows here at the latest (not at interpreter exit)
        except BrokenPipeError:
            broken_pipe_exit()
        except OSError as exc:  # a full disk under a redirection: the output is not all there
            stdout_failure_exit(_command_from_args(self, argv), exc, before)
        except (ValueError, AttributeError):
            pass
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        before = published_count()

        def name() -> str:  # the subcommand is known only once click has resolved it
            sub, named = ctx.invoked_subcommand, _command_from_args(self, self._argv)
            if sub and (named == sub or named.startswith(sub + " ")):
                return named  # with a nested subcommand: `sweep postprocess`, `explain tcvt`
            return sub or named

        try:
            return super().invoke(ctx)
        except PtonumError as exc:
            remove_temporaries()  # after the command's cluster was torn down (see publish._DISCARDED)
            fail(name(), exc)
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # stdout's reader is gone (`| head`): 141, never click's 1
                broken_pipe_exit()
            if stdout_write_failed(exc):
                stdout_failure_exit(name(), exc, before)
            fail(name(), os_error_text(exc))
        except (KeyboardInterrupt, Terminated) as exc:
            interrupted(name(), exc, before)
        except MemoryError:
            fail(name(), "out of memory (the input is too large for this machine)")
        except (_click.ClickException, _click.exceptions.Exit, _click.Abort):
            raise
        except Exception as exc:  # a defect: still one line, never a traceback (PTONUM_TRACEBACK=1 shows it)
            if os.environ.get("PTONUM_TRACEBACK"):
                raise
            fail(name(), internal_error_text(exc))


def _stderr_or_devnull() -> None:
    """A process started with standard error closed (``2>&-``) has ``sys.stderr`` None: point it at
    /dev/null, so the one-line errors and notes go nowhere and the exit status stays the command's."""
    if getattr(sys, "stderr", None) is None:
        try:
            setattr(sys, "stderr", open(os.devnull, "w", encoding="utf-8"))
        except OSError:  # pragma: no cover - no /dev/null
            pass


class _UnfailingStderr:
    """The process's standard error as ``sys.stderr`` during a command, except that a write or flush that
    fails (``2>/dev/full``, a full disk under a redirection, an I/O error, a closed pipe) points file
    descriptor 2 at /dev/null, drops what could not be written and carries on: a message that cannot be
    shown changes neither the command's exit status (2 for an error, as documented, was 1: the failed write
    of the one-line error ended the process with Python's status for an uncaught exception) nor its work
    (a note or a summary line on stderr ended a command that had succeeded, or had not yet begun, with 1)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except OSError:
            self._lost()
            return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            self._lost()

    def _lost(self) -> None:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())
            finally:
                os.close(devnull)
            self._stream.flush()  # what could not be written goes to /dev/null now, not again at shutdown
        except (OSError, ValueError):  # pragma: no cover - no /dev/null
            pass

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer, ...: the stream's own
        return getattr(self._stream, name)


def _stderr_that_never_fails() -> None:
    """Make ``sys.stderr`` an :class:`_UnfailingStderr` when it is the process's own standard error (not a
    stream a caller or test put there), for the rest of the process: notes and warnings written while the
    interpreter shuts down are covered too."""
    if sys.stderr is not None and sys.stderr is sys.__stderr__:
        sys.stderr = _UnfailingStderr(sys.stderr)


def _text_that_always_encodes() -> None:
    """Let the process's own standard output and error write any text in their encoding: a character it
    cannot hold (``é`` of a vector file's comment under ``PYTHONIOENCODING=ascii`` or a C locale without
    UTF-8 mode) is written as its escape (``\\xe9``) instead of ending the command with an internal error.
    Text the encoding holds is written as before.  Streams a caller or test put there are left alone."""
    try:
        codecs.lookup_error(_ESCAPE_ERRORS)
    except LookupError:
        codecs.register_error(_ESCAPE_ERRORS, _escape_unencodable)
    for stream in (sys.__stdout__, sys.__stderr__):
        if stream is None or getattr(stream, "errors", "strict") not in ("strict", "surrogateescape"):
            continue
        if stream is not sys.stdout and stream is not sys.stderr:
            continue
        try:
            stream.reconfigure(errors=_ESCAPE_ERRORS)
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper, or already written through a buffer
            pass


_ESCAPE_ERRORS = "ptonum.escape"  #: the codec error handler of :func:`_text_that_always_encodes`


def _escape_unencodable(exc: UnicodeError) -> Tuple[bytes, int]:
    """Codec error handler: a byte of a file name that is not text (U+DC80..U+DCFF, :pep:`383`) is written as
    that byte, as ``surrogateescape`` (the C locale's default) does; any other character the encoding cannot
    hold as its backslash escape (``\\xe9``, ``\\u2014``)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = bytearray()
    for c in exc.object[exc.start:exc.end]:
        byte = surrogate_byte(c)
        if byte is not None:
            out.append(byte)
        else:
            out += c.encode("ascii", "backslashreplace")
    return bytes(out), exc.end


def internal_error_text(exc: BaseException) -> str:
    """The one line for an exception ptonum did not raise on purpose (a defect)."""
    return (f"internal error: {type(exc).__name__}: {exc} (please report it; "
            "PTONUM_TRACEBACK=1 shows the traceback)")


def interrupted(command: str, exc: BaseException, published_before: int) -> NoReturn:
    """Exit after SIGINT (status 130) or SIGTERM (143): remove leftover temporaries and say on one
    line whether the command published anything (outputs are only ever published whole)."""
    remove_temporaries()
    term = isinstance(exc, Terminated)
    what = published_summary(published_before)
    name = f"ptonum {command}" if command else "ptonum"
    sys.stderr.write(f"{name}: {'terminated by SIGTERM' if term else 'interrupted by SIGINT'}; {what}\n")
    sys.stderr.flush()
    sys.exit(EXIT_SIGTERM if term else EXIT_SIGINT)


@click.group(cls=_Group, invoke_without_command=True, subcommand_metavar="COMMAND [ARGS]...",
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ptonum")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Bit-exact model of the PTO ISA B.FPATR matrix post-processing, Tile DataTypes and TCVT to E8M0 (ADR-0085).

    Run `ptonum postprocess` with no input to see the bundled example.

    Exit status of every command: 0 success (or match), 1 a mismatch was found (`check`, `compare`,
    `explain --row`), 2 an error or rejection (usage, illegal attributes or parameters, bad file),
    reported as one line `ptonum COMMAND: error: ...` on stderr (a missing command: the help, on
    stderr); 130 interrupted (SIGINT, Ctrl-C),
    143 terminated (SIGTERM), with one line saying whether anything was written; 141 (silently) the
    reader of stdout's pipe closed it (`| head`). Outputs are
    published all together or not at all.
    """
    environment_notes()
    if ctx.invoked_subcommand is None:  # bare `ptonum`: a usage error (help on stderr, status 2)
        missing_command(ctx)


#: the whole-number settings ptonum reads from the environment
_COUNT_VARIABLES = ("PTONUM_KERNEL_MIN_ELEMENTS", "PTONUM_OUTPUT_POOL_MIB")


def environment_notes() -> None:
    """One ``ptonum: note:`` line for each whole-number setting in the environment that is not one,
    and for a ``PTONUM_DISABLE_NUMBA`` that is not an on/off word (the engine then uses its default,
    as the library does silently): a typo there must not pass unseen."""
    from .._util import FALSE_WORDS, TRUE_WORDS, bool_text, count_text

    text = os.environ.get("PTONUM_DISABLE_NUMBA", "")
    try:
        bool_text(text)
    except ValueError:
        sys.stderr.write(f"ptonum: note: PTONUM_DISABLE_NUMBA = {text!r} is not an on/off word "
                         f"({'/'.join(TRUE_WORDS)} or {'/'.join(w for w in FALSE_WORDS if w)}, any case); "
                         f"the default is used (the compiled kernels, numba on)\n")

    for var in _COUNT_VARIABLES:
        text = os.environ.get(var, "")
        if not text.strip():
            continue
        try:
            count_text(text)
        except ValueError:
            if var == "PTONUM_KERNEL_MIN_ELEMENTS":
                from ..tables import DEFAULT_KERNEL_MIN_ELEMENTS as default
            else:
                from ..fpatr.tile import DEFAULT_OUTPUT_POOL_MIB as default
            sys.stderr.write(f"ptonum: note: {var} = {text!r} is not a whole number (ASCII digits 0-9); "
                             f"the default {default} is used\n")


# The subcommands: each is ``<name>_cmd``, a module of this package defining a click command
# ``command`` named ``<name>``; imported by :meth:`_Group.command_named` when needed.
_COMMANDS = (
    "formats",
    "modes",
    "decode",
    "postprocess",
    "tcvt",
    "check",
    "gen",
    "explain",
    "compare",
    "compile",
    "sweep",
)


def command_from_argv(argv: Sequence[str]) -> str:
    """The (sub)command a command line names (``postprocess``, ``explain reduction``; ``""`` if none),
    for messages printed before click has parsed it (:mod:`ptonum.__main__`)."""
    return _command_from_args(main, argv)
