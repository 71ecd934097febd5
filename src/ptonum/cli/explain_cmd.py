"""``ptonum explain``: the step-by-step trace of one element, lined up with the ASL functions.

Exit status: 0 the trace was printed; 1 ``--row`` (or ``--tile``) and the model contradicts the row's
(the tile case's) expected values (``MISMATCH``); 2 an error (one line on stderr).  ``explain postprocess``
traces the element function even for a configuration the B.FPATR tile operation rejects
(the element function is defined for it), after a ``note:`` line giving the tile
operation's reason; the exit status stays 0.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, Tuple

import rich_click as click

from ..conformance.compare import parse_int, parse_mode, parse_relu
from ..conformance.explain import (
    explain_postprocess,
    explain_reduction,
    explain_row,
    explain_tcvt,
    explain_tile,
    tile_rejection,
)
from .._util import int_text, is_digits
from ..errors import UsageError
from ._tile_args import attributes_from_word
from ._common import ASCII_INT, EXIT_MISMATCH, RMODE_HELP, decimal_in_format, errors_to_exit, missing_command, \
    parse_rmode


def _run(name: str, fn: Callable[[], Any]) -> None:
    with errors_to_exit(name):
        text = str(fn())
    click.echo(text)


@click.group("explain", invoke_without_command=True)
@click.option("--row", "row", default=None, metavar="FILE:LINE",
              help="Explain one row of a CSV vector file (1-based line; FILE `-` reads standard input, as check "
                   "does); exit 1 when the model contradicts it.")
@click.option("--tile", "tile", default=None, metavar="FILE:INDEX",
              help="Explain one case of a tile file (tiles.json.gz; INDEX is the item number `ptonum check` "
                   "reports, from 0; FILE `-` reads standard input): the case, the trace of one element of D (the "
                   "first that differs, or --element) and whether the model's whole commit matches; exit 1 when "
                   "it does not.")
@click.option("--element", "element", default=None, metavar="I,J",
              help="With --tile: the element D[I, J] to trace (0-based row and column).")
@click.pass_context
def command(ctx: click.Context, row: Optional[str], tile: Optional[str], element: Optional[str]) -> None:
    """Explain one element: `explain postprocess|tcvt|reduction ...`, `explain --row FILE:LINE` or
    `explain --tile FILE:INDEX`.

    Exit status: 0 trace printed (for `--row`/`--tile`: the model agrees with the row or case), 1 `--row`/`--tile`
    MISMATCH (the model contradicts the expected values), 2 an error.
    """
    if ctx.invoked_subcommand is not None:  # `explain --row F:5 tcvt ...` ran tcvt alone, exit 0, the row unread
        given = [name for name, value in (("--row", row), ("--tile", tile), ("--element", element)) if value is not None]
        if given:
            raise click.UsageError(f"{' and '.join(given)} cannot go with `explain {ctx.invoked_subcommand}`, which "
                                   "traces the element its own options give: give one or the other")
        return
    if row is None and tile is None:  # bare `ptonum explain`: a usage error (help on stderr, status 2)
        if element is not None:
            raise click.UsageError("--element goes with --tile FILE:INDEX")
        missing_command(ctx)
    if row is not None and tile is not None:
        raise click.UsageError("--row and --tile: give one of them (--row takes a CSV row, --tile a tile case)")
    if element is not None and tile is None:
        raise click.UsageError("--element goes with --tile FILE:INDEX (a CSV row is one element already)")
    with errors_to_exit("explain", translate=False):  # messages name vector-file columns
        res = explain_row(row) if row is not None else explain_tile(tile or "", _element(element))
    click.echo(res.text)
    if not res.ok:
        sys.exit(EXIT_MISMATCH)


def _element(text: Optional[str]) -> Optional[Tuple[int, int]]:
    """``--element I,J``: two non-negative integers; :class:`UsageError` otherwise."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(is_digits(p) for p in parts):
        raise UsageError(f"--element = {text!r}: expected I,J (two non-negative integers: row, column)")
    return int(parts[0]), int(parts[1])


@command.command("postprocess")
@click.option("--attributes", "attributes_word", default=None, metavar="WORD",
              help="The 32-bit B.FPATR word (e.g. 0x08842023), as postprocess and compare take it: PreQuantMode "
                   "and ReluMode come from it (instead of --mode/--relu).")
@click.option("--mode", default=None, help="PreQuantMode code or name (or give --attributes).")
@click.option("--relu", default=None, help="ReluMode 0-3 or name (default NONE; or give --attributes).")
@click.option("--acc-type", default=None,
              help="Accumulator type FP32, S32 or U32 (default: the mode's, when it admits only one).")
@click.option("--acc", required=True,
              help="The accumulator element: its bits (0x... hex, 0b... binary), or its value as a decimal: a signed "
                   "integer for S32 (-153043), an unsigned one for U32, a decimal for FP32 (1.5, -2e-3, inf; it must "
                   "be an FP32 value: an inexact decimal is refused, naming the nearest FP32).")
@click.option("--quant-param", default=None, help="Quantization parameter word (0x...); default FP19 1.0 / none.")
@click.option("--scale", default=None, metavar="NUMBER",
              help="Quantization scale as a decimal (read exactly, converted to FP19), as postprocess takes it; "
                   "instead of --quant-param.")
@click.option("--offset", type=ASCII_INT, default=0, show_default=True, help="Signed offset with --scale.")
@click.option("--relu-param", default=None, help="Activation parameter word (FP19 in [18:0]; default 0).")
@click.option("--alpha", default=None, metavar="NUMBER",
              help="LReLU/PReLU alpha as a decimal (read exactly, converted to FP19), as postprocess takes it; "
                   "instead of --relu-param.")
@click.option("--scale-rounding", type=click.Choice(["exact", "rne"]), default="exact", show_default=True,
              help="exact: refuse a --scale or --alpha FP19 cannot hold; rne: round it once to FP32 and then to "
                   "FP19 (FP32ToFP19, nearest even), as postprocess does.")
@click.option("--rmode", default="NONE", show_default=True,
              help=RMODE_HELP + " The default NONE (as for postprocess_element and explain_postprocess) "
                                "means RNE.")
@click.option("--sat", is_flag=True, help="B.DATR Sat=1 (clamp).")
def postprocess(attributes_word: Optional[str], mode: Optional[str], relu: Optional[str], acc_type: Optional[str],
                acc: str, quant_param: Optional[str], scale: Optional[str], offset: int, relu_param: Optional[str],
                alpha: Optional[str], scale_rounding: str, rmode: str, sat: bool) -> None:
    """Trace TileProfileMatrixPostProcessWithFlags for one accumulator element.

    The tile operation's legality checks (B.DATR RMode/Sat for the mode, accumulator class,
    quantization and activation words) are run first; when the tile operation would reject the
    configuration a `note:` line says why, and the element trace follows (exit status 0).

    **Example** (the mismatch `ptonum compare` reported at D[3, 7], from its values):

    ```
    ptonum explain postprocess --attributes 0x08002023 --acc-type S32 \\
        --acc -153043 --quant-param 0x3c000000
    ```
    """
    def go() -> Any:
        if attributes_word is not None:
            given = [o for o, v in (("--mode", mode), ("--relu", relu)) if v is not None]
            if given:
                raise UsageError(f"--attributes and {given[0]} both give the {given[0][2:]}; give one or the other")
            attrs = attributes_from_word("--attributes", attributes_word)
            m, r = int(attrs.pre_quant_mode), int(attrs.relu_mode)
        else:
            if mode is None:
                raise UsageError("give --mode NAME (and --relu) or --attributes WORD")
            m = parse_mode(mode, "--mode")
            r = parse_relu(relu if relu is not None else "0", "--relu")
        rm = parse_rmode(rmode, "--rmode")
        acc_t = acc_type if acc_type is not None else _only_accumulator_type(m)
        if scale is not None and quant_param is not None:
            raise UsageError("--scale and --quant-param both give the quantization parameter; give one")
        if offset and scale is None:
            raise UsageError("--offset goes with --scale (a raw --quant-param word carries its own offset)")
        if scale is not None:
            from ._tile_args import scale_word

            qp = scale_word(scale, offset, m, scale_rounding)
        else:
            qp = parse_int(quant_param, "--quant-param") if quant_param is not None else _default_qp(m)
        if alpha is not None and relu_param is not None:
            raise UsageError("--alpha and --relu-param both give the activation parameter; give one")
        if alpha is not None:
            from ._tile_args import alpha_word

            rp = alpha_word(alpha, scale_rounding)
        else:
            rp = parse_int(relu_param if relu_param is not None else "0", "--relu-param")
        a = acc_bits(acc, acc_t)
        why = tile_rejection(pre_quant_mode=m, relu_mode=r, acc_type=acc_t, quant_param=qp, relu_param=rp,
                             rmode=rm, sat=sat)
        text = explain_postprocess(a, pre_quant_mode=m, relu_mode=r, acc_type=acc_t, quant_param=qp,
                                   relu_param=rp, rmode=rm, sat=sat).text()
        if why is not None:
            text = f"note: the B.FPATR tile operation rejects this configuration: {why}\n{text}"
        return text
    _run("explain postprocess", go)


def _only_accumulator_type(mode: int) -> str:
    """The accumulator type of ``mode`` when it admits only one; else a UsageError asking for --acc-type."""
    from ..fpatr import MODE_TABLE

    info = MODE_TABLE.get(int(mode))
    types = [t.name for t in info.accumulator_types] if info is not None else []
    if len(types) != 1:
        raise UsageError(f"give --acc-type: PreQuantMode {mode} admits {' or '.join(types) or 'no'} accumulators")
    return types[0]


def acc_bits(text: str, acc_type: str, name: str = "--acc") -> int:
    """``--acc``: bits written ``0x``/``0b``/``0o``, or the value as a decimal of the accumulator type
    (signed for S32, unsigned for U32, an exact FP32 value for FP32; an inexact FP32 decimal is refused
    with the nearest FP32, rounded once from the decimal).  Raises :class:`UsageError`."""
    from ..formats import parse_data_type
    from ..numtext import decimal_to_bits, is_decimal_text

    s = text.strip()
    if s[:2].lower() in ("0x", "0b", "0o"):
        return parse_int(s, name)
    t = parse_data_type(acc_type.strip().upper(), "--acc-type")
    if t.name == "FP32":
        bits, exact = decimal_to_bits(s, "FP32", name)
        if not exact:
            import numpy as np

            from ..numtext import names_value, parse_real

            parsed = parse_real(s, name)
            value = float(np.array(bits, np.uint32).view(np.float32))
            if not isinstance(parsed, float) and names_value(parsed, value):  # the printed form of an FP32
                return bits
        if not exact:
            import numpy as np

            near = repr(float(np.array(bits, np.uint32).view(np.float32)))
            raise UsageError(f"{name} = {s}: not an FP32 value; the nearest FP32 (rounded once from the decimal, "
                             f"nearest even) is {bits:#010x} = {near}: give {name} {bits:#010x}")
        return bits
    if t.name not in ("S32", "U32"):
        return parse_int(s, name)  # the model names the accumulator-type problem
    if not is_decimal_text(s) or any(c in s for c in ".eE"):
        raise UsageError(f"{name} = {text!r}: expected an integer (a decimal {t.name} value, or 0x... bits)")
    try:
        v = int_text(s, decimal_only=True)
    except ValueError:
        raise UsageError(f"{name} = {text!r}: expected an integer (a decimal {t.name} value, or 0x... bits)") from None
    lo, hi = (-(1 << 31), (1 << 31) - 1) if t.name == "S32" else (0, (1 << 32) - 1)
    if not lo <= v <= hi:
        raise UsageError(f"{name} = {s}: does not fit {t.name} ({lo} .. {hi})")
    return v & 0xFFFFFFFF


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
@click.option("--bits", default=None, help="Source encoding (0x...).")
@click.option("--value", "decimal", default=None, metavar="DECIMAL",
              help="Or the source as a decimal, rounded once, from its exact value, to --src-type (nearest even).")
@click.option("--rmode", default="NONE", show_default=True, help=RMODE_HELP + " NONE resolves to RNE.")
@click.option("--sat", is_flag=True, help="Sat=1 (clamp to 0x00/0xFE).")
def tcvt(src_type: str, bits: Optional[str], decimal: Optional[str], rmode: str, sat: bool) -> None:
    """Trace ReferenceFloatToE8M0 for one source encoding (--bits) or decimal (--value)."""
    def go() -> Any:
        if (bits is None) == (decimal is None):
            raise UsageError("give the source as --bits 0x... or as --value DECIMAL (one of them)")
        if decimal is not None:
            from ..flags import flag_names
            from ..formats import parse_data_type
            from ..tcvt import SUPPORTED_SOURCES, to_e8m0

            st = parse_data_type(src_type.strip().upper(), "--src-type")
            if st not in SUPPORTED_SOURCES:  # the model's own refusal, as for --bits and tcvt --values
                to_e8m0(0, src_type=st)
            code, exact, read = decimal_in_format(decimal, st.name, "--value")  # as tcvt --values shows
            note = (f"--value {decimal.strip()} is {st.name} {code:#x}"
                    + ("" if exact else f" (rounded once from the decimal, nearest even; flags {flag_names(read)}, "
                                        "not TCVT flags)") + "\n")
        else:
            code, note = parse_int(bits, "--bits"), ""
        return note + str(explain_tcvt(code, src_type=src_type, rmode=parse_rmode(rmode, "--rmode"), sat=sat))
    _run("explain tcvt", go)


@command.command("reduction")
@click.option("--acc-type", required=True, help="FP32, S32 or U32.")
@click.option("--max-abs", is_flag=True, help="MaxAbsEn: absolute values of both operands.")
@click.option("--current", required=True,
              help="Current (left) operand: bits (0x...) or a value (signed decimal for S32, exact decimal for FP32).")
@click.option("--candidate", required=True, help="Candidate (right) operand, as --current.")
def reduction(acc_type: str, max_abs: bool, current: str, candidate: str) -> None:
    """Trace TileProfileMatrixReductionStepWithFlags for one step."""
    _run("explain reduction", lambda: explain_reduction(acc_bits(current, acc_type, "--current"),
                                              acc_bits(candidate, acc_type, "--candidate"),
                                              acc_type=acc_type, max_abs=max_abs))
