"""``ptonum explain``: the step-by-step trace of one element, lined up with the ASL functions.

Exit status: 0 the trace was printed; 1 ``--row`` and the model contradicts the row's
expected value (``MISMATCH``); 2 an error (one line on stderr).  ``explain postprocess``
traces the element function even for a configuration the B.FPATR tile operation rejects
(the element function is defined for it), after a ``note:`` line giving the tile
operation's reason; the exit status stays 0.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

import rich_click as click

from ..conformance.compare import parse_int, parse_mode, parse_relu
from ..conformance.explain import (
    explain_postprocess,
    explain_reduction,
    explain_row,
    explain_tcvt,
    tile_rejection,
)
from ._common import EXIT_MISMATCH, RMODE_HELP, errors_to_exit, parse_rmode


def _run(name: str, fn: Callable[[], Any]) -> None:
    with errors_to_exit(name):
        text = str(fn())
    click.echo(text)


@click.group("explain", invoke_without_command=True)
@click.option("--row", "row", default=None, metavar="FILE:LINE",
              help="Explain one row of a vector file (1-based line); exit 1 when the model contradicts it.")
@click.pass_context
def command(ctx: click.Context, row: Optional[str]) -> None:
    """Explain one element: `explain postprocess|tcvt|reduction ...` or `explain --row FILE:LINE`.

    Exit status: 0 trace printed (for `--row`: the model agrees with the row), 1 `--row` MISMATCH
    (the model contradicts the row's expected value), 2 an error.
    """
    if ctx.invoked_subcommand is not None:
        return
    if row is None:
        click.echo(ctx.get_help())  # bare `ptonum explain`: the help, and success
        return
    with errors_to_exit("explain", translate=False):  # messages name vector-file columns
        res = explain_row(row)
    click.echo(res.text)
    if not res.ok:
        sys.exit(EXIT_MISMATCH)


@command.command("postprocess")
@click.option("--mode", required=True, help="PreQuantMode code or name.")
@click.option("--relu", default="0", show_default=True, help="ReluMode 0-3 or name.")
@click.option("--acc-type", required=True, help="Accumulator type FP32, S32 or U32.")
@click.option("--acc", required=True, help="Accumulator element bits (0x...).")
@click.option("--quant-param", default=None, help="Quantization parameter word (0x...); default FP19 1.0 / none.")
@click.option("--relu-param", default="0", show_default=True, help="Activation parameter word (FP19 in [18:0]).")
@click.option("--rmode", default="NONE", show_default=True, help=RMODE_HELP)
@click.option("--sat", is_flag=True, help="B.DATR Sat=1 (clamp).")
def postprocess(mode: str, relu: str, acc_type: str, acc: str, quant_param: Optional[str], relu_param: str,
                rmode: str, sat: bool) -> None:
    """Trace TileProfileMatrixPostProcessWithFlags for one accumulator element.

    The tile operation's legality checks (B.DATR RMode/Sat for the mode, accumulator class,
    quantization and activation words) are run first; when the tile operation would reject the
    configuration a `note:` line says why, and the element trace follows (exit status 0).
    """
    def go() -> Any:
        m = parse_mode(mode, "--mode")
        r = parse_relu(relu, "--relu")
        rm = parse_rmode(rmode, "--rmode")
        qp = parse_int(quant_param, "--quant-param") if quant_param is not None else _default_qp(m)
        rp = parse_int(relu_param, "--relu-param")
        a = parse_int(acc, "--acc")
        why = tile_rejection(pre_quant_mode=m, relu_mode=r, acc_type=acc_type, quant_param=qp, relu_param=rp,
                             rmode=rm, sat=sat)
        text = explain_postprocess(a, pre_quant_mode=m, relu_mode=r, acc_type=acc_type, quant_param=qp,
                                   relu_param=rp, rmode=rm, sat=sat).text()
        if why is not None:
            text = f"note: the B.FPATR tile operation rejects this configuration: {why}\n{text}"
        return text
    _run("explain", go)


def _default_qp(mode: int) -> int:
    from ..fpatr import MODE_TABLE, quant_param_word, shift_param_word

    info = MODE_TABLE[int(mode)]
    if info.is_shift:
        return int(shift_param_word(0))
    if info.has_parameter:
        return int(quant_param_word(0x1FC00, 0, mode=int(mode)))
    return 0


@command.command("tcvt")
@click.option("--src-type", required=True, help="FP16, BF16 or FP32.")
@click.option("--bits", required=True, help="Source encoding (0x...).")
@click.option("--rmode", default="NONE", show_default=True, help=RMODE_HELP + " NONE resolves to RNE.")
@click.option("--sat", is_flag=True, help="Sat=1 (clamp to 0x00/0xFE).")
def tcvt(src_type: str, bits: str, rmode: str, sat: bool) -> None:
    """Trace ReferenceFloatToE8M0 for one source encoding."""
    _run("explain", lambda: explain_tcvt(parse_int(bits, "--bits"), src_type=src_type,
                                         rmode=parse_rmode(rmode, "--rmode"), sat=sat))


@command.command("reduction")
@click.option("--acc-type", required=True, help="FP32, S32 or U32.")
@click.option("--max-abs", is_flag=True, help="MaxAbsEn: absolute values of both operands.")
@click.option("--current", required=True, help="Current (left) operand bits.")
@click.option("--candidate", required=True, help="Candidate (right) operand bits.")
def reduction(acc_type: str, max_abs: bool, current: str, candidate: str) -> None:
    """Trace TileProfileMatrixReductionStepWithFlags for one step."""
    _run("explain", lambda: explain_reduction(parse_int(current, "--current"), parse_int(candidate, "--candidate"),
                                              acc_type=acc_type, max_abs=max_abs))
