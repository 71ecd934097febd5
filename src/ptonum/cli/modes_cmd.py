"""``ptonum modes``: the closed PreQuantMode table of B.FPATR as a table.

Source: ADR-0085 D179; ASL ``asl/block/attributes/B.FPATR.asl``
(``BundleFPATRAccumulatorTypeLegal``, ``BundleFPATROutputType``,
``BundleFPATRModeOffsetWidth``, ``BundleFPATRModeFixedRounding``,
``BundleFPATRModeFinalSatProgrammable``).
"""

from __future__ import annotations

from typing import Tuple

import rich_click as click
from rich.table import Table

from ._common import errors_to_exit, out_console, print_table


def _offset_text(width: int) -> str:
    return f"S{width}" if width else "-"


@click.command("modes")
@click.argument("modes", nargs=-1, metavar="[MODE]...")
def command(modes: Tuple[str, ...]) -> None:
    """Print the 27 PreQuantModes of B.FPATR: code, name, accumulator, destination, parameter, offset,
    fixed rounding, shift and whether B.DATR Sat is programmable.

    With MODE names or codes, only those rows (each mode once). The same table is `ptonum.fpatr.MODE_TABLE` in Python.

    Columns: **acc** the accumulator types the mode accepts; **D** the destination type (mode 0 keeps
    the accumulator type); **param** none, scalar (one B.IOR word: --scale/--quant-param) or vector
    (a 1 x N U64 tile: --scale-tile/--quant-tile); **offset** the signed offset field (S5, S9, S17);
    **rounding** the rounding the mode forces (B.DATR RMode must then be NONE), or RMode when
    programmable; **shift** the arithmetic right-shift modes (--shift N); **Sat** whether B.DATR Sat
    selects clamp or wrap.
    """
    from ..conformance.compare import parse_mode
    from ..fpatr.attributes import MODE_TABLE

    console = out_console()
    with errors_to_exit("modes"):
        # one row per mode, in the order first named ("3 REQ8" names one mode twice)
        codes = list(dict.fromkeys(parse_mode(m, "MODE") for m in modes)) if modes else sorted(MODE_TABLE)
    table = Table(title="B.FPATR PreQuantModes (ADR-0085 D179)", header_style="bold")
    for name, just in (("code", "right"), ("name", "left"), ("acc", "left"), ("D", "left"), ("param", "left"),
                       ("offset", "left"), ("rounding", "left"), ("shift", "left"), ("Sat", "left")):
        table.add_column(name, justify=just)  # type: ignore[arg-type]
    for code in codes:
        info = MODE_TABLE[code]
        table.add_row(
            str(code), info.name, "/".join(t.name for t in info.accumulator_types),
            info.destination.name if info.destination is not None else "= acc",
            info.parameter, _offset_text(info.offset_width),
            info.fixed_rounding.name if info.fixed_rounding is not None else (
                "RMode" if info.rmode_programmable else "-"),
            "yes" if info.is_shift else "-", "clamp/wrap" if info.sat_programmable else "-")
    print_table(console, table)
