"""``ptonum gen``: write conformance vectors (boundary patterns + weighted random)."""

from __future__ import annotations

import sys
from typing import Optional, Tuple

import rich_click as click

from ..conformance.gen import Filters, write_vectors
from ..conformance.schema import SCHEMAS
from ._common import AsciiIntRange, RMODE_HELP, errors_to_exit, output_path


@click.command("gen")
@click.argument("op", type=click.Choice(sorted(SCHEMAS)), metavar="OP")
@click.option("--count", type=AsciiIntRange(min=1), required=True,
              help="Rows to write (boundary patterns first, then random).")
@click.option("--seed", type=AsciiIntRange(min=0), default=0, show_default=True,
              help="Random seed (a non-negative integer); same seed and options give the same file.")
@click.option("--out", "out", default=None,
              help="Output file (.gz = gzip; missing directories are created); default (or -) stdout.")
@click.option("--mode", multiple=True, help="PreQuantMode code or name (repeatable).")
@click.option("--relu", multiple=True, help="ReluMode 0-3 or name (repeatable).")
@click.option("--rmode", multiple=True, help=RMODE_HELP + " Repeatable.")
@click.option("--sat", multiple=True, help="Sat 0 or 1 (repeatable).")
@click.option("--acc-type", multiple=True, help="Accumulator type FP32/S32/U32 (repeatable).")
@click.option("--src-type", multiple=True, help="TCVT source type FP16/BF16/FP32 (repeatable).")
@click.option("--data-type", multiple=True, help="Decomposition data type (repeatable).")
def command(op: str, count: int, seed: int, out: Optional[str], mode: Tuple[str, ...], relu: Tuple[str, ...],
            rmode: Tuple[str, ...], sat: Tuple[str, ...], acc_type: Tuple[str, ...], src_type: Tuple[str, ...],
            data_type: Tuple[str, ...]) -> None:
    """Generate vectors for OP in the shared vector schema, expected columns from the reference engine.

    **Operations** (OP) and the filters each takes (any other filter is refused):

    - `postprocess_element`: --mode, --relu, --rmode, --sat, --acc-type (only legal parameter words)
    - `reduction_step`: --acc-type
    - `tcvt_e8m0`: --src-type, --rmode, --sat
    - `decomposition`: --data-type
    - `fp32_to_fp19`: no filter
    - `quant_param_legal`: --mode
    - `relu_param_legal`: no filter

    **Example**

    ```
    ptonum gen tcvt_e8m0 --count 1000 --seed 1 --src-type BF16 \\
        --out tcvt.csv.gz
    ```

    Exit status 2 with one line on stderr on any error.
    """
    if out == "-":  # the Unix convention: standard output
        out = None
    with errors_to_exit("gen"):
        filters = Filters.parse(mode=mode, relu=relu, rmode=rmode, sat=sat, acc_type=acc_type,
                                src_type=src_type, data_type=data_type)
        if out is not None:
            output_path("--out", out)
        text = write_vectors(out, op, count, seed, filters)
    if out is None:
        sys.stdout.write(text)
    else:
        click.echo(f"wrote {count} {op} rows to {out}", err=True)
