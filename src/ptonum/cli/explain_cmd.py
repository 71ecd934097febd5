"""``ptonum explain``: the step-by-step trace of one element, lined up with the ASL functions."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

import rich_click as click

from ..conformance.compare import parse_int, parse_mode, parse_relu
from ..conformance.explain import explain_file_line, explain_postprocess, explain_reduction, explain_tcvt
from ..errors import PtonumError


def _run(fn: Callable[[], Any]) -> None:
    try:
        text = str(fn())
    except PtonumError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    click.echo(text)


@click.group("explain", invoke_without_command=True)
@click.option("--row", "row", default=None, metavar="FILE:LINE", help="Explain one row of a vector file (1-based line).")
@click.pass_context
def command(ctx: click.Context, row: Optional[str]) -> None:
    """Explain one element: `explain postprocess|tcvt|reduction ...` or `explain --row FILE:LINE`."""
    if ctx.invoked_subcommand is not None:
        return
    if row is None:
        click.echo(ctx.get_help())
        sys.exit(2)
    _run(lambda: explain_file_line(row))


@command.command("postprocess")
@click.option("--mode", required=True, help="PreQuantMode code or name.")
@click.option("--relu", default="0", show_default=True, help="ReluMode 0-3 or name.")
@click.option("--acc-type", required=True, help="Accumulator type FP32, S32 or U32.")
@click.option("--acc", required=True, help="Accumulator element bits (0x...).")
@click.option("--quant-param", default=None, help="Quantization parameter word (0x...); default FP19 1.0 / none.")
@click.option("--relu-param", default="0", show_default=True, help="Activation parameter word (FP19 in [18:0]).")
@click.option("--rmode", default="NONE", show_default=True, help="B.DATR rounding mode.")
@click.option("--sat", is_flag=True, help="B.DATR Sat=1 (clamp).")
def postprocess(mode: str, relu: str, acc_type: str, acc: str, quant_param: Optional[str], relu_param: str,
                rmode: str, sat: bool) -> None:
    """Trace TileProfileMatrixPostProcessWithFlags for one accumulator element."""
    def go() -> Any:
        m = parse_mode(mode, "--mode")
        qp = parse_int(quant_param, "--quant-param") if quant_param is not None else _default_qp(m)
        return explain_postprocess(parse_int(acc, "--acc"), pre_quant_mode=m, relu_mode=parse_relu(relu, "--relu"),
                                   acc_type=acc_type, quant_param=qp, relu_param=parse_int(relu_param, "--relu-param"),
                                   rmode=rmode, sat=sat)
    _run(go)


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
@click.option("--rmode", default="NONE", show_default=True, help="B.DATR rounding mode.")
@click.option("--sat", is_flag=True, help="Sat=1 (clamp to 0x00/0xFE).")
def tcvt(src_type: str, bits: str, rmode: str, sat: bool) -> None:
    """Trace ReferenceFloatToE8M0 for one source encoding."""
    _run(lambda: explain_tcvt(parse_int(bits, "--bits"), src_type=src_type, rmode=rmode, sat=sat))


@command.command("reduction")
@click.option("--acc-type", required=True, help="FP32, S32 or U32.")
@click.option("--max-abs", is_flag=True, help="MaxAbsEn: absolute values of both operands.")
@click.option("--current", required=True, help="Current (left) operand bits.")
@click.option("--candidate", required=True, help="Candidate (right) operand bits.")
def reduction(acc_type: str, max_abs: bool, current: str, candidate: str) -> None:
    """Trace TileProfileMatrixReductionStepWithFlags for one step."""
    _run(lambda: explain_reduction(parse_int(current, "--current"), parse_int(candidate, "--candidate"),
                                   acc_type=acc_type, max_abs=max_abs))
