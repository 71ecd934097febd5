"""The ``ptonum`` command.

Each subcommand lives in its own module of this package and is registered
below; the group itself only sets up help and the version option.
"""

from __future__ import annotations

import errno
import importlib
from typing import Any

import rich_click as click

from .. import __version__
from ..errors import PtonumError
from ._common import fail, os_error_text

click.rich_click.TEXT_MARKUP = "markdown"
click.rich_click.SHOW_ARGUMENTS = True


class _Group(click.RichGroup):
    """The top-level group: any :class:`PtonumError` or :class:`OSError` a subcommand lets escape
    becomes one line on stderr (``ptonum <command>: error: ...``) and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PtonumError as exc:
            fail(ctx.invoked_subcommand or "ptonum", exc)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            fail(ctx.invoked_subcommand or "ptonum", os_error_text(exc))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ptonum")
def main() -> None:
    """Bit-exact model of the PTO ISA B.FPATR matrix post-processing, Tile DataTypes and TCVT to E8M0 (ADR-0085).

    Run `ptonum postprocess` with no input to see the bundled example.

    Exit status of every command: 0 success (or match), 1 a mismatch was found (`check`, `compare`,
    `explain --row`), 2 an error or rejection (usage, illegal attributes or parameters, bad file),
    reported as one line `ptonum COMMAND: error: ...` on stderr.
    """


# Subcommand modules: each defines a click command named ``command``.
_COMMANDS = (
    "formats_cmd",
    "decode_cmd",
    "postprocess_cmd",
    "tcvt_cmd",
    "check_cmd",
    "gen_cmd",
    "explain_cmd",
    "compare_cmd",
)

for _name in _COMMANDS:
    try:
        _mod = importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as _exc:  # a command not written yet
        if _exc.name != f"{__name__}.{_name}":
            raise
        continue
    main.add_command(_mod.command)
