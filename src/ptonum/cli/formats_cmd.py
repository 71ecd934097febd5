"""``ptonum formats``: the exact format descriptor of every floating and scale Tile DataType.

Source: ADR-0085 decision 182; ASL ``TileNumericFormatDescriptor``
(``asl/arch/data-types/numeric-formats.asl``, ``format-descriptor.asl``,
``formats/*.asl``).
"""

from __future__ import annotations

import dataclasses
from typing import Tuple

import rich_click as click
from rich.console import Console
from rich.table import Table

from ._common import errors_to_exit, out_console, print_table
from .._util import is_digits
from ..formats import FormatDescriptor, FormatKind, TileDataType, canonical_nan, descriptor, parse_data_type


_KIND_LABEL = {FormatKind.FIXED_BINARY: "fixed", FormatKind.HIF8: "HiF8", FormatKind.E8M0: "E8M0",
               FormatKind.UNAVAILABLE: "-"}


def _yn(flag: bool) -> str:
    return "yes" if flag else "-"


def _range(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}..{hi}"


def _nan_text(dt: TileDataType, d: FormatDescriptor) -> str:
    """The canonical NaN encoding of ``dt`` (``canonical_nan``, ASL ``TileNumericCanonicalNaN``) in hex, as many
    digits as the carrier has; '-' for a type without one.  One text for the summary row and the field table."""
    nan = canonical_nan(dt)
    return "-" if nan is None else f"0x{nan:0{(d.carrier_bits + 3) // 4}x}"


#: the summary's columns that hold numbers (right-aligned, as ``ptonum modes`` aligns its codes); the canonical
#: NaN is a bit pattern of 2 to 16 hex digits: left-aligned, its 0x and top (sign, exponent) digits line up
_NUMERIC = frozenset(("code", "carrier", "exp bits", "frac bits", "bias"))


def _console() -> Console:
    return out_console()  # a closed stdout pipe: status 141, not rich's 1; pipes and test runners: 200 columns


def _summary_table(types: Tuple[TileDataType, ...]) -> Table:
    table = Table(title="Floating and scale Tile DataTypes (TileNumericFormatDescriptor)",
                  show_lines=False, header_style="bold")
    for name in ("type", "code", "kind", "carrier", "lanes", "sign", "exp bits", "frac bits",
                 "bias", "must-be-zero", "zero", "±0", "subnormal", "inf", "qNaN", "sNaN", "canonical NaN"):
        table.add_column(name, justify="right" if name in _NUMERIC else "left")
    for dt in types:
        d = descriptor(dt)
        zero_bits = []
        if d.required_low_zero_bits:
            zero_bits.append(f"low {d.required_low_zero_bits}")
        if d.required_high_zero_bits:
            zero_bits.append(f"high {d.required_high_zero_bits}")
        table.add_row(
            dt.name, str(int(dt)), _KIND_LABEL[d.kind],
            str(d.carrier_bits),
            f"{d.lanes_per_carrier}x{d.lane_bits}",
            f"bit {d.sign_bit}" if d.sign_bits else "-",
            _range(d.exponent_bits_min, d.exponent_bits_max),
            _range(d.fraction_bits_min, d.fraction_bits_max),
            str(d.exponent_bias) if d.exponent_bias_available else "-",
            ", ".join(zero_bits) or "-",
            _yn(d.has_zero), _yn(d.has_signed_zero), _yn(d.has_subnormal), _yn(d.has_infinity),
            _yn(d.has_quiet_nan), _yn(d.has_signaling_nan),
            _nan_text(dt, d),
        )
    return table


def _field_table(dt: TileDataType, d: FormatDescriptor) -> Table:
    table = Table(title=f"{dt.name} (code {int(dt)})", header_style="bold")
    table.add_column("field (NumericFormatDescriptor)")
    table.add_column("value")
    for field in dataclasses.fields(d):
        value = getattr(d, field.name)
        text = value.name if field.name == "kind" else (str(value).lower() if isinstance(value, bool) else str(value))
        table.add_row(field.name, text)
    table.add_section()  # not a descriptor field: ASL TileNumericCanonicalNaN, the summary's last column
    table.add_row("canonical NaN", _nan_text(dt, d))
    return table


@click.command("formats")
@click.argument("types", nargs=-1, metavar="[TYPE]...")
def command(types: Tuple[str, ...]) -> None:
    """Print the exact format descriptor of the floating and scale Tile DataTypes.

    With no TYPE, one table row per floating/scale type: carrier and lane widths,
    sign position, exponent and fraction widths, bias, carrier bits that must be
    zero, which special values exist and the canonical NaN encoding. With TYPE
    names or codes, every descriptor field of each, as the ASL record names
    them, then its canonical NaN encoding ('-': the type has none).

    Integer types (S64..S4X2, U64..U4X2) have no floating-format descriptor.
    """
    console = _console()
    if not types:
        floating = tuple(t for t in TileDataType if t.is_floating)
        print_table(console, _summary_table(floating))
        integers = ", ".join(t.name for t in TileDataType if t.is_integer)
        console.print(f"Integer types have no floating-format descriptor: {integers}.")
        return
    with errors_to_exit("formats"):
        parsed = [parse_data_type(int(t.strip()) if is_digits(t.strip()) else t.strip(), "TYPE") for t in types]
    for i, dt in enumerate(parsed):
        if i:
            console.print()  # one blank line between the types' tables and notes
        d = descriptor(dt)
        if not d.available:
            console.print(f"{dt.name} (code {int(dt)}) is an integer type: it has no floating-format descriptor.")
            continue
        print_table(console, _field_table(dt, d))
