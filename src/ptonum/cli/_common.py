"""What every ``ptonum`` command shares: consoles, one-line errors, exit codes, option parsing.

Exit codes (all commands): 0 success / match; 1 a mismatch was found (``check``,
``compare``, ``explain --row``); 2 any error or rejection (usage error, illegal
attributes or parameters, unreadable or missing file); 141 stdout was a pipe that its reader
closed (``| head``), silently.  An error is one line on
stderr, ``ptonum <command>: error: <message>``; option syntax errors found by
click are the same one line, followed by ``(see 'ptonum <command> --help')``; a group run without
its command (bare ``ptonum``, ``ptonum explain``, ``ptonum sweep``) writes its help to stderr instead
and exits 2 (:func:`missing_command`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, Iterator, List, NoReturn, Optional, Sequence, Tuple

import click

from .._util import int_text, is_digits, printable, write_protected_mode
from ..errors import PtonumError, UsageError, short_numbers
from ..rounding import RoundingMode, parse_rounding_mode


if TYPE_CHECKING:
    from rich.console import Console

#: exit status of a mismatch (check, compare, explain --row)
EXIT_MISMATCH = 1
#: exit status of any error or rejection
EXIT_ERROR = 2

#: exit status when stdout is a pipe its reader closed (``ptonum check ... | head``): 128 + SIGPIPE, what a
#: shell reports for a command killed by SIGPIPE; never 1, which means "a mismatch was found"
EXIT_BROKEN_PIPE = 141

#: console width when stdout is not a terminal (pipes, files, test runners) and COLUMNS gives none: wide, so no
#: table is squeezed
PIPE_WIDTH = 200

RMODE_HELP = ("B.DATR RMode by name or code: NONE (0), RNE (1), RTZ (2), RTM (3), RTP (4), RNA (5), RTO (6), "
              "RHB (7); RDN is an alias of RTM and RUP of RTP.")


def broken_pipe_exit() -> NoReturn:
    """End the command after its stdout pipe was closed by the reader: stdout is pointed at
    ``/dev/null`` (so nothing fails again while Python shuts down) and the status is
    :data:`EXIT_BROKEN_PIPE`, silently (the reader asked for no more)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    sys.exit(EXIT_BROKEN_PIPE)


def console_class() -> Any:
    """rich's Console, with a closed stdout pipe ending the command by :func:`broken_pipe_exit` (rich's
    own handler exits with status 1, which ptonum's commands use for "a mismatch was found")."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            broken_pipe_exit()
    return _Console


def columns_env() -> Optional[int]:
    """The width the ``COLUMNS`` environment variable asks for: a positive decimal integer in ASCII digits
    (``COLUMNS=100``), else None -- unset, empty, ``0`` or anything else (``abc``, `` 80``, ``-5``, ``8_0``,
    other scripts' digits) is ignored, as if unset.  (rich reads any ``str.isdigit`` text, so ``COLUMNS=0`` gave
    it a width of 0, which printed nothing at all on a terminal.)"""
    text = os.environ.get("COLUMNS", "")
    if not is_digits(text):
        return None
    width = int(text)
    return width if width > 0 else None


def terminal_width(stderr: bool = False) -> Optional[int]:
    """The terminal's own width (its stream's size, then the other standard streams'), or None."""
    streams = (sys.stderr, sys.stdout, sys.stdin) if stderr else (sys.stdout, sys.stderr, sys.stdin)
    for stream in streams:
        try:
            return os.get_terminal_size(stream.fileno()).columns or None
        except (OSError, ValueError, AttributeError):
            continue
    return None


def console_width(is_terminal: bool, *, stderr: bool = False) -> Optional[int]:
    """The width ptonum's rich consoles print at: ``COLUMNS`` when it is a positive integer (:func:`columns_env`);
    otherwise the terminal's width on a TTY (None: rich measures it, when ``COLUMNS`` is unset) and
    :data:`PIPE_WIDTH` when the output is not a terminal (pipes, files, test runners).  Honoured in pipes too
    since the tables no longer cut a cell at any width (:func:`print_table`)."""
    width = columns_env()
    if width is not None:
        return width
    if not is_terminal:
        return PIPE_WIDTH
    if os.environ.get("COLUMNS") is None:
        return None
    return terminal_width(stderr) or 80  # COLUMNS set but ignored: rich would read it itself (0: no output)


#: the range help (``--help``, a group's help on a usage error) is laid out in
HELP_MIN_WIDTH, HELP_MAX_WIDTH = 74, 200


def help_width() -> int:
    """The width of help: ``COLUMNS`` when it is a positive integer (:func:`columns_env`), else the terminal's
    width, else 80 (a pipe, a file), kept within :data:`HELP_MIN_WIDTH`..:data:`HELP_MAX_WIDTH`.  rich-click
    read ``COLUMNS`` itself: ``COLUMNS=0`` printed nothing at all, ``COLUMNS=100000`` padded every line to
    100,000 columns, and its panels cut option names and words too long for a column with "…" (at 73 columns
    ``compare``'s ``--scale-rounding``; 74 is the narrowest width at which no command's help is cut)."""
    width = columns_env() or terminal_width() or 80
    return max(HELP_MIN_WIDTH, min(HELP_MAX_WIDTH, width))


def out_console(*, stderr: bool = False) -> "Console":
    """A rich console for tables and reports, at :func:`console_width`: ``COLUMNS`` when it is a positive
    integer, else the terminal's width on a TTY and :data:`PIPE_WIDTH` otherwise.

    rich is imported here, not at module level: a command that prints no table (a small
    ``ptonum postprocess``) writes its lines with :class:`TextOut` and never loads rich (start-up time).
    """
    Console = console_class()
    probe = Console(stderr=stderr)
    return Console(stderr=stderr, highlight=False, width=console_width(probe.is_terminal, stderr=stderr))


#: the narrowest a free-text table column (a file name, a message) is folded to: words up to this long stay whole
FOLD_MIN_WIDTH = 5


def frame_width(console: "Console", table: Any, widths: Sequence[int]) -> int:
    """The width rich adds around the cells of ``table`` when its columns are ``widths`` wide: the box's edges
    and column separators and each cell's padding (as ``padding``, ``pad_edge`` and ``collapse_padding`` set
    it).  Public API only: rich's own measurement of the table with every column's ``width`` fixed (a column of
    fixed width measures as that width plus its padding), less the widths; the columns' ``width`` and the
    table's ``width`` and ``min_width`` (which would replace or clamp that measurement) are restored after.
    (Was ``table._extra_width`` plus ``table._get_padding_width(i)``: private members of rich's Table, which
    any release of rich may rename or remove.)"""
    from rich.measure import Measurement

    columns = list(table.columns)
    saved = [column.width for column in columns], table.width, table.min_width
    try:
        for column, width in zip(columns, widths):
            column.width = width
        table.width = table.min_width = None
        # wide enough that rich never narrows a column to fit (the frame is far below 2**20 columns)
        options = console.options.update_width(sum(widths) + (1 << 20))
        measured = Measurement.get(console, options, table).maximum
    finally:
        for column, width in zip(columns, saved[0]):
            column.width = width
        table.width, table.min_width = saved[1], saved[2]
    return int(measured) - sum(widths)


def _plan(console: "Console", table: Any, fold: Sequence[str]) -> Tuple[List[int], List[int], List[int], int, bool]:
    """How :func:`print_table` lays ``table`` out: each column's narrowest width (its text), its unconstrained
    width, the indices of the free-text (``fold``) columns, the frame's width (:func:`frame_width`) and whether the
    box's right edge is blank (it may pass the console's width: printing crops it, nothing is lost).  Sets each
    column's ``overflow`` and ``no_wrap`` and makes its header a Text that wraps at its spaces."""
    from rich.measure import Measurement
    from rich.text import Text

    options = console.options.update_width(1 << 20)  # measure the text as it is, not at the console's width
    lows: List[int] = []  # the narrowest each column may be (its text)
    widths: List[int] = []  # the width it would take unconstrained
    folding: List[int] = []
    for column in table.columns:
        if isinstance(column.header, str):
            column.header = console.render_str(column.header, highlight=False)
        if isinstance(column.header, Text):
            column.header.no_wrap = False  # wraps at its spaces even in a no_wrap column
        head = Measurement.get(console, options, column.header)
        cells = [Measurement.get(console, options, cell) for cell in column.cells]
        widest = max([head.maximum, *(m.maximum for m in cells)])
        column.overflow = "fold"
        column.no_wrap = getattr(column.header, "plain", column.header) not in fold
        if column.no_wrap:
            low = max([column.min_width or 0, head.minimum, *(m.maximum for m in cells)])
        else:
            folding.append(len(lows))
            low = max([column.min_width or 0, head.minimum, min(FOLD_MIN_WIDTH, max([0, *(m.minimum for m in cells)]))])
        lows.append(low)
        widths.append(max(low, widest, column.min_width or 0))
    fixed = frame_width(console, table, widths)
    blank_edge = bool(table.box and table.show_edge and all(ln[-1:] == " " for ln in str(table.box).splitlines()))
    return lows, widths, folding, fixed, blank_edge


def table_fits(console: "Console", table: Any, *, fold: Sequence[str] = ()) -> bool:
    """Does :func:`print_table` print ``table`` within the console's width (every column at least as wide as its
    text, the ``fold`` columns folded to their narrowest, the headers wrapped at their spaces)?"""
    lows, _, _, fixed, blank_edge = _plan(console, table, fold)
    return sum(lows) + fixed - blank_edge <= console.width


def print_table(console: "Console", table: Any, *, fold: Sequence[str] = ()) -> None:
    """Print the rich ``table`` on ``console`` with no number or name cut, at any width.

    rich fits a table into the console by shrinking its columns, and cuts a ``no_wrap`` cell it shrank
    below its text ('FP6' for FP64, a bias of 1 for 1023, a count of 9 for 998; a column can even vanish).
    Here the widths are chosen before rich sees the table: every column keeps at least the width of its
    widest cell and of its header's longest word (the header wraps at its spaces), so each cell prints whole
    on one line.  The columns whose headers are in ``fold`` hold free text (file names, messages): they are
    narrowed first, wrapping at spaces and folding only a word longer than :data:`FOLD_MIN_WIDTH` across
    lines, then the headers wrap.  A table that still does not fit is printed wider than the console, never
    cropped: a terminal wraps its lines, a pipe or a file keeps them whole (:func:`table_fits` tells beforehand).
    """
    lows, widths, folding, fixed, blank_edge = _plan(console, table, fold)
    excess = sum(widths) + fixed - console.width - blank_edge
    if excess > 0:  # narrow the free text first, then wrap the headers; never below a column's text
        for group in (folding, [i for i in range(len(widths)) if i not in folding]):
            while excess > 0 and group:
                i = max(group, key=lambda k: widths[k] - lows[k])
                if widths[i] <= lows[i]:
                    break
                widths[i] -= 1
                excess -= 1
        for column, width in zip(table.columns, widths):
            column.width = width
        table.width = sum(widths) + fixed  # rich lays the table out at this width, wider than the console if need be
    console.print(table, crop=excess <= 0)  # too wide even so: printed whole, not cropped


def file_numbers(files: Sequence[int]) -> Dict[int, int]:
    """Each file's number in a numbered table (:func:`print_path_table`): ``files`` holds each row's file (its position
    among the command's files), and the files are numbered 1, 2, ... in the order their first row comes."""
    number: Dict[int, int] = {}
    for at in files:
        number.setdefault(at, len(number) + 1)
    return number


def print_path_table(console: "Console", table_of: Callable[[str, Sequence[str]], Any], paths: Sequence[str],
                     files: Sequence[int], *, fold: Sequence[str] = (),
                     labels: Optional[Sequence[str]] = None) -> None:
    """A table of results whose first column names each row's file: its path whole on one line, never folded (it
    is copied into other commands).  ``table_of(first, cells)`` builds the rich table, its first column headed
    ``first`` with ``cells`` in it (one a row); ``paths`` are the rows' paths as shown (plain text), ``files`` each
    row's file (its position among the command's files: rows of one file share it).

    The table with the paths (``file``, escaped: a ``[x]`` in a path is text, a control character is shown as its
    escape by :func:`~ptonum._util.printable`) when :func:`table_fits`; else the
    table numbers the files (``#``, right-aligned by ``table_of``) and each file's path follows it, whole on a line
    of its own (``1  PATH``); with ``labels`` (one a row, plain text: a count the numbered table leaves out) each
    file's label stands between its number and its path, right-aligned (``1  998 row(s)  PATH``).  ``fold`` as
    :func:`print_table`'s, for other free-text columns; a table that still does not fit is printed wider than the
    console, never cut."""
    from rich.markup import escape

    paths = [printable(p) for p in paths]  # a newline or ESC in a file name: shown as \\n, \\x1b, never sent
    wide = table_of("file", [escape(p) for p in paths])
    if table_fits(console, wide, fold=fold):
        print_table(console, wide, fold=fold)
        return
    number = file_numbers(files)
    print_table(console, table_of("#", [str(number[at]) for at in files]), fold=fold)
    listed = dict(zip(files, paths))
    digits = len(str(len(number)))
    label = dict(zip(reversed(files), reversed(labels))) if labels is not None else {}  # a file's first row's
    width = max((len(text) for text in label.values()), default=0)
    for at, k in number.items():
        text = f"{label[at]:>{width}}  " if labels is not None else ""
        console.print(f"{k:>{digits}}  {text}{listed[at]}", highlight=False, markup=False, soft_wrap=True)


class TextOut:
    """Plain text lines for a command's summary, without rich (which costs ~70 modules to import).

    ``print(text, head=...)`` writes ``head`` in bold, then ``text`` and a newline, to ``file``
    (stdout when None) as they are: no markup is interpreted, so file names with brackets print
    unchanged.  Bold applies on a terminal only (click strips the escape codes for pipes, files and
    captured output).
    """

    def __init__(self, file: Optional[IO[str]] = None) -> None:
        self.file = file

    def print(self, text: str = "", *, head: str = "") -> None:
        click.echo((click.style(head, bold=True) if head else "") + printable(text), file=self.file)


# Python parameter names in model messages -> the command-line options that set them.
_OPTION_NAMES = (
    (re.compile(r"pass rounding\s*=\s*'rne' to accept it"), "give --scale-rounding rne to accept it"),
    (re.compile(r"rounding\s*=\s*'rne'"), "--scale-rounding rne"),
    (re.compile(r"\bquant_param\b(?!_)"), "--quant-param"),
    (re.compile(r"\bquant_tile\b"), "--quant-tile"),
    (re.compile(r"\brelu_param\b(?!_)"), "--relu-param"),
    (re.compile(r"\brelu_tile\b"), "--relu-tile"),
    (re.compile(r"\brow_max_in\b"), "--row-max-in"),
    (re.compile(r"\bacc_type\b"), "--acc-type"),
    (re.compile(r"\bsrc_type\b"), "--src-type"),
    (re.compile(r"^group_n = "), "--group-n = "),
    # B.FPATR field combinations (BundleFPATRFieldsLegal): the options that set the fields
    (re.compile(r"^RowMaxInit requires RowMaxEn"), "--row-max-init needs --row-max (RowMaxInit requires RowMaxEn)"),
    (re.compile(r"^GroupMaxEn requires a nonzero GroupNCode"),
     "--group-max needs --group-n (GroupMaxEn requires a nonzero GroupNCode)"),
    (re.compile(r"^GroupNCode = (\d+) \(nonzero\) requires GroupMaxEn"),
     r"--group-n needs --group-max (GroupNCode = \1, nonzero, requires GroupMaxEn)"),
    (re.compile(r"^MaxAbsEn requires RowMaxEn or GroupMaxEn"),
     "--max-abs needs --row-max or --group-max (MaxAbsEn requires RowMaxEn or GroupMaxEn)"),
)


#: a run of the characters str.split splits at that are ASCII
_ASCII_BLANKS = re.compile("[ \t\n\r\x0b\x0c\x1c-\x1f]+")


def cli_message(message: Any, translate: bool = True) -> str:
    """A model error message as one line, with Python parameter names replaced by option names
    (``translate=False`` for messages about vector-file columns, which keep their names)."""
    # one line: runs of ASCII blanks (a newline among them) are one space; a Unicode line or paragraph separator
    # (U+2028, U+2029, NEL U+0085) or a no-break space is left to printable, which shows it as its escape
    # (str.split folded them into a space: a header column 'x<U+2028>y' was named as 'x y')
    text = short_numbers(_ASCII_BLANKS.sub(" ", str(message)).strip(" "))  # 5000 digits: not a screenful
    # a control character left (ESC of a file name such as 'acc\x1b[2K.npy', DEL, C1) is shown, never
    # sent to the terminal: it could recolour, erase or retitle, and hide what the line says
    text = printable(text)
    if not translate:
        return text
    for pattern, option in _OPTION_NAMES:
        text = pattern.sub(option, text)
    return text


def error_line(command: str, message: Any, translate: bool = True) -> str:
    """``ptonum <command>: error: <message>`` (``ptonum: error: ...`` without a command)."""
    return f"{'ptonum ' + command if command else 'ptonum'}: error: {cli_message(message, translate)}"


def fail(command: str, message: Any, code: int = EXIT_ERROR, translate: bool = True) -> NoReturn:
    """Write the one-line error to stderr and exit (status 2 unless told)."""
    sys.stderr.write(error_line(command, message, translate) + "\n")
    sys.stderr.flush()
    sys.exit(code)


def missing_command(ctx: click.Context) -> NoReturn:
    """A group run without a subcommand (bare ``ptonum``, ``ptonum explain``, ``ptonum sweep``): a usage
    error, like a missing argument, so the group's help goes to stderr and the exit status is 2
    (:data:`EXIT_ERROR`); ``--help`` asks for the help on stdout with status 0."""
    click.echo(ctx.get_help(), err=True)
    ctx.exit(EXIT_ERROR)


def stdout_write_failed(exc: BaseException) -> bool:
    """True when ``exc`` is the failure of writing standard output (``> /dev/full``, a full disk under
    a redirection, an I/O error): an :class:`OSError` without a file name (other than a closed pipe)
    raised where the innermost Python frame writes to ``sys.stdout`` (click's ``echo``: its ``file``;
    rich's ``Console``: its ``file``; a frame calling ``print`` with no file object of its own).
    A file ptonum writes is always named in its own error."""
    if not isinstance(exc, OSError) or exc.filename is not None or exc.errno == errno.EPIPE:
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    streams = [s for s in (sys.stdout, sys.__stdout__) if s is not None]
    streams += [b for b in (getattr(s, "buffer", None) for s in streams) if b is not None]

    def is_stdout(v: Any) -> bool:
        return any(v is s for s in streams)

    rich_console = getattr(sys.modules.get("rich.console"), "Console", None)
    for v in tb.tb_frame.f_locals.values():
        if is_stdout(v) or (rich_console is not None and isinstance(v, rich_console)
                            and is_stdout(getattr(v, "file", None))):
            return True
    # print() writes from C (rich-click's help: print(ctx.get_help())): a frame calling print and
    # holding no file object of its own
    code = tb.tb_frame.f_code
    return "print" in code.co_names and not any(hasattr(v, "write") for v in tb.tb_frame.f_locals.values())


def stdout_failure_exit(command: str, exc: OSError, published_before: int = 0) -> NoReturn:
    """Exit (status 2) after standard output could not be written: one line on stderr saying so, and
    what the command had already published (outputs are only ever published whole); stdout is
    pointed at ``/dev/null`` first, so Python's own flush at shutdown does not fail again."""
    from ..publish import published

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    text = f"cannot write standard output: {exc.strerror or exc}"
    if published(published_before):
        from ..publish import published_summary

        text += f"; {published_summary(published_before)}"
    fail(command, text, translate=False)


def os_error_text(exc: OSError) -> str:
    where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
    return f"{where}{exc.strerror or exc}"


@contextmanager
def errors_to_exit(command: str, translate: bool = True) -> Iterator[None]:
    """Turn every :class:`PtonumError` and :class:`OSError` inside the block into :func:`fail`."""
    try:
        yield
    except PtonumError as exc:
        fail(command, exc, translate=translate)
    except OSError as exc:
        if exc.errno == errno.EPIPE or stdout_write_failed(exc):  # the group's invoke says so (with outputs)
            raise
        fail(command, os_error_text(exc))


def parse_rmode(text: Any, name: str = "--rmode") -> RoundingMode:
    """``--rmode``: a name (NONE, RNE, ..., the aliases RDN/RUP) or a B.DATR code 0-7."""
    if isinstance(text, str) and is_digits(text.strip()):
        return parse_rounding_mode(int(text.strip()), name)
    return parse_rounding_mode(text, name)


def rmode_text(attrs: Any, rmode: Any) -> str:
    """``RMode=RTM``, or ``RMode=NONE (RNE used)`` when the conversion rounds otherwise than B.DATR
    says (NONE resolves to RNE; fixed-rounding modes use RNE or RHB), as the records' ``rmode``."""
    from ..fpatr.attributes import effective_control

    used, _ = effective_control(attrs.pre_quant_mode, rmode)
    return f"RMode={rmode.name}" + (f" ({used.name} used)" if used != rmode else "")


class _AsciiInt:
    """An integer option read by :func:`ptonum._util.int_text` (ASCII decimal digits, no separators):
    click's ``int`` also reads other scripts' digits (``'٣'`` as 3) and digit separators (``1_000``)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            if isinstance(value, str):
                int_text(value, decimal_only=True)
        except ValueError:
            self.fail(f"{value!r} is not a valid integer (ASCII digits 0-9, optional sign).", param, ctx)  # type: ignore[attr-defined]
        return super().convert(value, param, ctx)  # type: ignore[misc]


class AsciiIntRange(_AsciiInt, click.IntRange):
    """:class:`click.IntRange` over ASCII digits only (:class:`_AsciiInt`)."""


class _AsciiIntType(_AsciiInt, click.types.IntParamType):
    """click's ``int`` option type over ASCII digits only (:class:`_AsciiInt`)."""


#: ``type=`` of an integer option (ASCII digits only)
ASCII_INT = _AsciiIntType()


def decimal_in_format(text: str, fmt_name: str, name: str) -> Tuple[int, bool, int]:
    """The decimal ``text`` (or ``inf``/``nan``/``-0``) rounded once, from its exact value, to the binary
    format ``fmt_name`` (``FP64``, ``FP32``, ``FP16`` or ``BF16``; nearest, ties to even, overflow to
    infinity: :func:`ptonum.numtext.round_to_format`): ``(encoding, exact, flags)``.

    ``flags`` are the IEEE 754 exception flags of that rounding: ``OF|NX`` when a finite decimal became
    an infinity, ``UF|NX`` when an inexact one is tiny (below the smallest normal magnitude
    2^(1 - bias): tininess before rounding), ``NX`` for another inexact one, none for an exact value and
    for ``inf``/``nan``/``-0`` (read as themselves).  The one place the command line reads a decimal
    into a binary format with its flags (``tcvt --values``, ``explain tcvt --value``, ``decode FP64
    --value``).  Raises :class:`UsageError` naming ``name`` for text that is not a number
    (:func:`ptonum.numtext.parse_real`).

    Source: IEEE 754-2019 5.12.2 (conversion from a decimal string) and 7.4-7.6 (overflow, underflow,
    inexact); tininess before rounding, as the B.FPATR encoders judge it (encode.encode_reference).
    """
    from fractions import Fraction

    from ..flags import NX, OF, UF
    from ..numtext import BINARY_FORMATS, parse_real, round_to_format

    fmt = BINARY_FORMATS[fmt_name]
    value = parse_real(text, name)
    bits, exact = round_to_format(value, fmt)
    if exact or not isinstance(value, Fraction):
        return bits, exact, 0
    inf = ((1 << fmt.exponent_bits) - 1) << fmt.fraction_bits
    if bits & ~(1 << (fmt.exponent_bits + fmt.fraction_bits)) == inf:
        return bits, exact, OF | NX
    bias = (1 << (fmt.exponent_bits - 1)) - 1
    if abs(value) < Fraction(2) ** (1 - bias):
        return bits, exact, UF | NX
    return bits, exact, NX


#: The smallest tile a one-shot command (``ptonum postprocess`` or ``compare`` of one in-memory tile) runs on the compiled
#: kernels when ``PTONUM_KERNEL_MIN_ELEMENTS`` is not set: in a fresh process the kernels first cost numba's
#: import, its first-use set-up and the cached kernel's load (1.5-2.5 s on the 2-core Zen 3 of
#: docs/performance.md), more than the numpy path takes below about 16-32M elements (2048 x 2048: REQ8 0.6 s on
#: numpy against 2.7 s with the kernels, FP32->E4M3 with RowMax and GroupMax 2.0 s against 3.8 s; 4096 x 4096
#: about even for the FP8 modes with folds, numpy ahead for the others).  Same bits and flags either way.
ONE_SHOT_KERNEL_MIN_ELEMENTS = 1 << 24


@contextmanager
def kernels_from(elements: int, *, override: bool = False) -> Iterator[None]:
    """Within the block the fast engine uses the compiled kernels from ``elements`` elements on
    (``PTONUM_KERNEL_MIN_ELEMENTS`` in this process's environment, restored after); a value the user set
    is kept unless ``override``.  For the whole process only: a Dask cluster started inside the block
    would hand the value to its workers."""
    var = "PTONUM_KERNEL_MIN_ELEMENTS"
    saved = os.environ.get(var)
    if saved is not None and saved.strip() and not override:
        yield
        return
    os.environ[var] = str(elements)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = saved


def stderr_is_terminal() -> bool:
    """Is stderr a terminal?  Progress is reported by default only there (:func:`progress_report`)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced by an object without isatty
        return False


def progress_columns() -> Tuple[Any, ...]:
    """The columns of a rich progress bar: its task's description as literal text (a path's ``[red]`` or ``{0}`` is
    shown as it is: neither rich markup nor a format string), the bar, done/total and the time elapsed.  The label
    goes in as the task's description (``Progress.add_task(label, ...)``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    return (TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


@contextmanager
def progress_report(label: str, enabled: bool, total: Optional[int] = None
                    ) -> Iterator[Optional[Callable[[int, Optional[int]], None]]]:
    """Progress of ``label`` on stderr, and its callback ``cb(done, total)`` (None when not ``enabled``).

    On a terminal: a transient bar (rich), gone when the work ends, shown from the first progress
    (``done > 0``) on -- before that (a first call compiling the fast kernels for minutes, under its
    compile note) a bar at 0 would look like a hang.  Redirected (a file, a pipe, a CI
    log): plain lines, ``ptonum: progress: LABEL DONE/TOTAL (P%), S s``, one at each tenth of the work
    (and at the end), without control characters; nothing before the total is known.  A closed or
    broken stderr is ignored (the work goes on).
    """
    if not enabled:
        yield None
        return
    if stderr_is_terminal():
        from rich.console import Console
        from rich.progress import Progress

        prog = Progress(*progress_columns(), console=Console(stderr=True), transient=True)
        task: List[Any] = []  # the bar's task, once shown

        def bar(done: int, of: Optional[int] = None) -> None:
            n = of if of is not None else total
            if not task:
                if done <= 0:
                    return
                prog.start()
                task.append(prog.add_task(label, total=n))
            prog.update(task[0], completed=done, total=n)
        try:
            yield bar
        finally:
            if task:
                prog.stop()
        return
    import time

    start = time.monotonic()
    said = [-1]  # the last tenth written

    def lines(done: int, of: Optional[int] = None) -> None:
        n = of if of is not None else total
        if not n:
            return
        tenth = min(10, done * 10 // n)
        if tenth <= said[0]:
            return
        said[0] = tenth
        try:
            sys.stderr.write(f"ptonum: progress: {label} {done}/{n} ({100 * done // n}%), "
                             f"{time.monotonic() - start:.1f} s\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    yield lines


def same_file(a: "str | Path", b: "str | Path") -> bool:
    """Do paths ``a`` and ``b`` name one file: the same file on disk (also through a symbolic or hard
    link), or, when one does not exist, the same resolved path (``./x.npy`` and ``x.npy``)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_output_over_input(option: str, output: str, inputs: "Sequence[Tuple[str, Optional[str]]]") -> None:
    """Before any work: :class:`UsageError` when the output ``option = output`` is one of the
    ``inputs`` (``(name, path)`` pairs; ``file.npz:key`` names ``file.npz``; None skipped), by any
    spelling or link: publishing the output would replace that input.  The message names both."""
    for name, path in inputs:
        if not path:
            continue
        file = path
        low = path.lower()
        i = low.rfind(".npz:")
        if i >= 0:
            file = path[: i + 4]
        if same_file(output, file):
            raise UsageError(f"{option} = {output}: is the input {name} = {path}; writing it would replace the "
                             "input (give another output name)")


def out_of_memory_text(path: str) -> str:
    """The one-line reason for a file whose reading or computing ran out of memory: names the file."""
    return f"{path}: out of memory reading or computing this file (it needs more memory than is available)"


@contextmanager
def memory_errors_name(path: str) -> Iterator[None]:
    """Turn a :class:`MemoryError` inside the block (reading or computing the file ``path``) into a
    :class:`UsageError` that names the file (:func:`out_of_memory_text`); the top-level handler's
    message cannot know which file of a batch it was."""
    try:
        yield
    except MemoryError:
        raise UsageError(out_of_memory_text(path)) from None


def refuse_empty_path(option: str, path: str, what: str) -> None:
    """An empty (or blank) path is refused by name: ``Path("")`` would be the current directory."""
    if not str(path).strip():
        raise UsageError(f"{option}: the path is empty; give {what}")


def output_path(option: str, path: str) -> Path:
    """An output file, checked before any work and without writing anything: not empty, not a directory,
    and its nearest existing ancestor a writable directory (missing directories are created when the
    output is published, :class:`ptonum.publish.Publication`)."""
    refuse_empty_path(option, path, "a file name")
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{option} = {path}: is a directory; give a file name")
    _check_dir(option, path, p.parent, f"{p.parent} is not a directory")
    refuse_write_protected(option, p)
    return p


def refuse_write_protected(option: str, path: Path) -> None:
    """Before any work: :class:`UsageError` naming ``path`` when publishing would refuse to replace it after
    the work (:func:`ptonum.publish.unreplaceable`: a write-protected file, a pipe, device or socket, or a
    symbolic link to one)."""
    from ..publish import unreplaceable

    why = unreplaceable(path)
    if why:
        raise UsageError(f"{option}: cannot write {path}: {why}")


def output_dir(option: str, path: str) -> Path:
    """An output directory, checked before any work and without creating it: an empty path, an existing
    non-directory, or an unwritable or write-protected (no ``w`` bit: root included) nearest existing
    ancestor, is refused."""
    refuse_empty_path(option, path, "a directory (. for the current one)")
    p = Path(path)
    _check_dir(option, path, p, "is not a directory")
    return p


def _check_dir(option: str, path: str, directory: Path, not_dir: str) -> None:
    """``directory`` (for ``option = path``) is a directory or can be created: UsageError otherwise."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{option} = {path}: {not_dir}")
    d = directory
    while not d.exists() and d != d.parent:
        if os.path.lexists(d):  # there, but leading nowhere: a dangling or looping symbolic link
            try:
                os.stat(d)
                why = "a symbolic link to a missing directory"
            except OSError as exc:
                why = "a symbolic link loop" if exc.errno == errno.ELOOP else "a symbolic link to a missing directory"
            raise UsageError(f"{option} = {path}: {d} is {why}")
        d = d.parent
    if not d.is_dir():
        raise UsageError(f"{option} = {path}: {d} is not a directory")
    if not os.access(d, os.W_OK | os.X_OK):
        raise UsageError(f"{option} = {path}: {d} is not writable")
    mode = write_protected_mode(d)
    if mode is not None:  # no one may write it: refused for root too, as a write-protected output file is
        where = "" if d == Path(path) else f"{d} "
        raise UsageError(f"{option} = {path}: {where}is a write-protected directory (mode {mode:04o}); make it "
                         f"writable (chmod u+w) or choose another {option}")


#: what a path that is not a regular file is, by its ``stat.S_IS*`` test
_SPECIAL_FILES = (("S_ISFIFO", "a named pipe (FIFO)"), ("S_ISCHR", "a character device"),
                  ("S_ISBLK", "a block device"), ("S_ISSOCK", "a socket"))


def input_file(option: str, path: str, what: str = "a file name") -> Path:
    """An input file that must exist and be a regular file (not a directory, a device, a pipe, nor an
    empty path); a missing one says whether it is a dangling or looping symbolic link."""
    import stat

    refuse_empty_path(option, path, what)
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except OSError as exc:
        if os.path.islink(p):
            why = "a symbolic link loop" if exc.errno == errno.ELOOP else "a symbolic link to a missing file"
            raise UsageError(f"{option}: {path} is {why}") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise UsageError(f"{option}: no such file: {path}") from None
        raise UsageError(f"{option}: cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise UsageError(f"{option}: {path} is a directory, not a file")
    for test, kind in _SPECIAL_FILES:
        if getattr(stat, test)(mode):
            raise UsageError(f"{option}: {path} is {kind}, not a file")
    return p


def current_umask() -> int:
    """The process umask (read without changing it for longer than one call)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
