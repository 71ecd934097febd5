"""``ptonum compare``: run the B.FPATR tile operation and compare it with a device dump.

Exit status: 0 every compared output (and ``--device-flags``) matches, 1 a mismatch,
2 an error (bad option, file, shape, or a configuration the tile operation rejects).
"""

from __future__ import annotations

import sys
from typing import Any, List, Optional, Tuple

import numpy as np
import rich_click as click
from rich.table import Table

from ..conformance.compare import (CompareReport, as_device_bits, compare_arrays, parse_flags,
                                   unpack_s4x2)
from .._util import shape_text
from ..errors import UsageError
from ..flags import flag_names
from ._common import (ONE_SHOT_KERNEL_MIN_ELEMENTS, AsciiIntRange, EXIT_MISMATCH, errors_to_exit, kernels_from,
                      out_console, print_table, refuse_output_over_input)
from .compile_cmd import warn_if_cold
from ..fpatr.element import destination_dtype
from ..formats import TileDataType
from ._tile_args import build_tile_call, is_bin, read_tile, tile_options


def _acc_bits(a: np.ndarray) -> np.ndarray:
    if a.dtype.itemsize == 4 and a.dtype.kind in "fiu":
        return a.view(np.uint32)
    return a.astype(np.uint64)


def _read_dump(option: str, spec: str, output: str, bin_dtype: Any, shape: Tuple[int, ...]) -> np.ndarray:
    """A device dump: a raw .bin takes the model's shape; a .npy/.npz must have exactly that shape."""
    arr = read_tile(option, spec, bin_dtype=bin_dtype, bin_shape=shape)
    if not is_bin(spec) and arr.shape != tuple(shape):
        raise UsageError(f"{option}: {spec}: shape {shape_text(arr.shape)} does not match the model's {output} "
                         f"{shape_text(tuple(shape))} (a .npy/.npz dump must have exactly the model's shape; "
                         "only a raw .bin dump is read in the model's shape)")
    return arr


def _packed_dump(spec: str, shape: Tuple[int, int], packed: bool) -> bool:
    """Is the S4X2 D dump ``spec`` packed (two elements a byte)?  ``--packed`` says so; otherwise a raw
    .bin of M x ceil(N/2) bytes, or a .npy/.npz of that shape, is recognised as packed."""
    if packed:
        return True
    from pathlib import Path

    from ._tile_args import split_key

    m, n = shape
    half = (n + 1) // 2
    if half == n:
        return False
    if is_bin(spec):
        p = Path(split_key(spec)[0])
        return p.is_file() and p.stat().st_size == m * half
    return tuple(read_tile("--device-d", spec).shape) == (m, half)


def _read_d(spec: str, dst: TileDataType, shape: Tuple[int, int], packed: bool) -> np.ndarray:
    """The device D dump as encodings of ``dst`` (packed S4X2 unpacked)."""
    if packed and dst is not TileDataType.S4X2:
        raise UsageError(f"--packed: D is {dst.name}; only S4X2 (REQ4/VREQ4) is packed two elements a byte")
    if dst is TileDataType.S4X2 and _packed_dump(spec, shape, packed):
        m, n = shape
        raw = read_tile("--device-d", spec, bin_dtype=np.uint8, bin_shape=(m, (n + 1) // 2))
        return unpack_s4x2(f"--device-d: {spec}", raw, shape)
    dev = _read_dump("--device-d", spec, "D", destination_dtype(dst), shape)
    return as_device_bits(f"--device-d: {spec}", dev, dst, shape, "D")  # messages name the file


def _hex(bits: int, dst: TileDataType) -> str:
    """An encoding at its destination width (``0x08`` for S8, ``0x3c00`` for FP16)."""
    from ..encode import destination_width

    digits = max(1, (destination_width(dst) + 3) // 4)
    return f"{bits:#0{digits + 2}x}"


def _acc_text(bits: int, acc_type: TileDataType) -> str:
    """An accumulator element for ``explain --acc``: a signed decimal for S32, bits otherwise."""
    if acc_type.name == "S32":
        return str(bits - (1 << 32) if bits >> 31 else bits)
    return f"{bits:#010x}"


def _value_text(x: float) -> str:
    return format(x, ".6g")


@click.command("compare")
@click.argument("acc", metavar="ACC")
@tile_options
@click.option("--engine", type=click.Choice(["fast", "reference"]), default="fast", show_default=True,
              help="fast = vectorized numpy, compiled numba kernels for large tiles (same bits and flags); "
                   "reference = exact per-element model (slow).")
@click.option("--device-d", required=True,
              help="Device D dump: raw encodings (uint8/uint16/uint32) or typed values, .npy/.npz with exactly "
                   "the model's M x N shape, or a raw little-endian .bin (read in the model's shape).")
@click.option("--device-row-max", default=None, help="Device RowMaxOut dump (M x 1; .npy/.npz/.bin as --device-d).")
@click.option("--device-group-max", default=None,
              help="Device GroupMaxOut dump (M x ceil(N/GroupN); .npy/.npz/.bin as --device-d).")
@click.option("--packed", is_flag=True,
              help="The S4X2 D dump is packed, two elements a byte (M x ceil(N/2) bytes, even column in the low "
                   "nibble, as postprocess --bin writes STEM.d_packed.bin); recognised by size without it.")
@click.option("--device-flags", default=None, metavar="FLAGS",
              help="The device's sticky flags after the operation, by name as ptonum prints them (OF|NX, - for "
                   "none) or as a word (0x14; NV=0x01 DZ=0x02 OF=0x04 UF=0x08 NX=0x10), compared with the model's.")
@click.option("--plot", "plot", default=None, metavar="FILE.png",
              help="Draw the D mismatch map (coloured by distance, per-row and per-column counts on the edges) and "
                   "the distance histogram to FILE.png (needs matplotlib).")
@click.option("--max-report", type=AsciiIntRange(min=0), default=10, show_default=True,
              help="Mismatch positions listed per output.")
@click.option("--explain", "n_explain", type=AsciiIntRange(min=0), default=1, show_default=True,
              help="Explain the first N D mismatches.")
def command(acc: str, key: Optional[str], bin_dtype: Optional[str], bin_shape: Optional[str], acc_type: Optional[str],
            attributes_word: Optional[str], mode: Optional[str], relu: Optional[str], group_n: Optional[int],
            row_max: bool, group_max: bool, row_max_init: bool, max_abs: bool, rmode: str, sat: bool,
            scale: Optional[str], offset: int, scale_rounding: str, shift: Optional[int],
            quant_param: Optional[str], quant_tile: Optional[str], alpha: Optional[str],
            relu_param: Optional[str], relu_tile: Optional[str], row_max_in: Optional[str], device_d: str,
            device_row_max: Optional[str], device_group_max: Optional[str], device_flags: Optional[str],
            engine: str, max_report: int, n_explain: int, packed: bool = False, plot: Optional[str] = None,
            scale_tile: Optional[str] = None,
            offset_tile: Optional[str] = None, alpha_tile: Optional[str] = None) -> None:
    """Run the tile post-process on ACC and compare D (and RowMaxOut/GroupMaxOut, flags) with a device dump.

    Reports match/mismatch counts, the first mismatch positions, a distance
    histogram (integer difference for integer destinations, ulps for floating
    ones; NaN/Inf class mismatches and NaN payload differences counted apart) and explains the first
    mismatches. Exit status: 0 match, 1 any mismatch, 2 an error (one line on stderr).

    ACC and the operation options are those of `ptonum postprocess`; the device dump may hold raw
    encodings (uint8/uint16/uint32) or typed values. A .npy/.npz dump must have exactly the model's
    shape (a transposed or flattened dump is refused); a raw .bin dump is read in the model's shape.

    **Example**

    ```
    ptonum compare acc.npy --mode VREQ8 --relu RELU --row-max \\
        --quant-tile q.npy --sat --device-d dev_d.npy \\
        --device-row-max dev_rowmax.npy --device-flags 'OF|NX'
    ```

    Per-channel scales as numbers, and a picture of where the mismatches are:

    ```
    ptonum compare acc.npy --mode VREQ8 --scale-tile scales.npy \\
        --offset-tile offsets.npy --sat --device-d dev_d.bin \\
        --plot mismatches.png
    ```

    A packed S4X2 dump (two elements a byte, as `postprocess --bin` writes STEM.d_packed.bin):

    ```
    ptonum compare acc.npy --mode REQ4 --scale 0.0078125 \\
        --device-d acc.d_packed.bin
    ```

    Each mismatch line shows both encodings and their values; the summary gives the largest
    absolute and relative error; each explained mismatch ends with the `ptonum explain postprocess`
    command that traces it again.
    """
    console = out_console()
    with errors_to_exit("compare"):
        dev_flags = parse_flags(device_flags, "--device-flags") if device_flags is not None else None
        if plot is not None:
            from ._plot import check_plot_path

            check_plot_path(plot)  # before any work
            refuse_output_over_input("--plot", plot, [
                ("ACC", acc), ("--device-d", device_d), ("--device-row-max", device_row_max),
                ("--device-group-max", device_group_max), ("--quant-tile", quant_tile), ("--relu-tile", relu_tile),
                ("--row-max-in", row_max_in), ("--scale-tile", scale_tile), ("--offset-tile", offset_tile),
                ("--alpha-tile", alpha_tile)])
        call = build_tile_call(
            acc, key=key, bin_dtype=bin_dtype, bin_shape=bin_shape, acc_type=acc_type,
            attributes_word=attributes_word, mode=mode, relu=relu, group_n=group_n, row_max=row_max,
            group_max=group_max, row_max_init=row_max_init, max_abs=max_abs, scale=scale, offset=offset,
            scale_rounding=scale_rounding, quant_param=quant_param, quant_tile=quant_tile, alpha=alpha,
            relu_param=relu_param, relu_tile=relu_tile, row_max_in=row_max_in, rmode=rmode, sat=sat, shift=shift,
            scale_tile=scale_tile, offset_tile=offset_tile, alpha_tile=alpha_tile)
        attrs, a = call.attributes, call.acc
        # one tile in this process: the kernels only where they pay for their start-up
        with kernels_from(ONE_SHOT_KERNEL_MIN_ELEMENTS), warn_if_cold(int(a.size), engine):
            res = call.run(engine=engine)
        reports: List[CompareReport] = []
        dev_bits = _read_d(device_d, res.dst_type, res.d_bits.shape, packed)
        reports.append(compare_arrays("D", res.dst_type, res.d_bits, dev_bits, max_report))
        del dev_bits
        for name, option, spec, model in (("RowMaxOut", "--device-row-max", device_row_max, res.row_max_bits),
                                          ("GroupMaxOut", "--device-group-max", device_group_max,
                                           res.group_max_bits)):
            if spec is None:
                continue
            if model is None:
                raise UsageError(f"{option}: the attributes do not enable {name}")
            devx = _read_dump(option, spec, name, np.uint32, model.shape)
            reports.append(compare_arrays(name, res.acc_type, model,
                                          as_device_bits(f"{option}: {spec}", devx, res.acc_type, model.shape, name),
                                          max_report))

    mode_name = attrs.pre_quant_mode.name
    table = Table(title=f"ptonum compare ({mode_name} -> {res.dst_type.name}, RMode={call.rmode.name}, "
                        f"Sat={int(bool(sat))}, model flags {flag_names(res.flags)})")
    for c in ("output", "type", "elements", "match", "mismatch", "NaN/Inf class", "NaN payload", "signed zero"):
        table.add_column(c)
    for r in reports:
        st = "green" if r.ok else "red"
        table.add_row(r.output, r.dst_type.name, str(r.elements), str(r.elements - r.mismatches),
                      f"[{st}]{r.mismatches}[/{st}]", str(r.class_mismatches), str(r.nan_payload_mismatches),
                      "-" if r.dst_type.is_integer else str(r.signed_zero_mismatches))
    print_table(console, table)
    acc_bits = _acc_bits(a)
    for r in reports:
        if r.ok:
            continue
        unit = "integer difference" if r.dst_type.is_integer else f"ulps of {r.dst_type.name}"
        console.print(f"[bold]{r.output}[/bold]: first {len(r.first)} of {r.mismatches} mismatches:", soft_wrap=True)
        for mm in r.first:
            console.print(f"  {r.output}{list(mm.position)}: model {_hex(mm.model, r.dst_type)} = {mm.model_value}, "
                          f"device {_hex(mm.device, r.dst_type)} = {mm.device_value}, {mm.description}",
                          soft_wrap=True, markup=False)
        if r.hist:
            console.print(f"  histogram ({unit}): " + ", ".join(f"{k}: {v}" for k, v in r.hist), soft_wrap=True)
        if r.max_abs_error is not None:
            line = (f"  largest absolute error {_value_text(r.max_abs_error)} at {r.output}{list(r.max_abs_position or ())}")
            if r.max_rel_error is not None:
                line += f"; largest relative error {_value_text(r.max_rel_error)} at {r.output}{list(r.max_rel_position or ())}"
            console.print(line + " (|device - model| in values)", soft_wrap=True, markup=False)
        if r.output == "D" and n_explain > 0:
            from ..conformance.explain import explain_postprocess
            from ..errors import PtonumError

            for mm in r.first[:n_explain]:
                i, j = mm.position
                try:
                    text = explain_postprocess(
                        int(acc_bits[i, j]), pre_quant_mode=int(attrs.pre_quant_mode), relu_mode=int(attrs.relu_mode),
                        acc_type=res.acc_type, quant_param=call.element_param("quant_param", "quant_tile", j),
                        relu_param=call.element_param("relu_param", "relu_tile", j), rmode=call.rmode,
                        sat=sat).text()
                except (PtonumError, ImportError) as exc:
                    text = f"(no trace: {exc})"
                console.print(f"[bold]explain D\\[{i}, {j}][/bold] (device {_hex(mm.device, r.dst_type)} = "
                              f"{mm.device_value})")
                console.print(text, markup=False, soft_wrap=True)
                q = call.element_param("quant_param", "quant_tile", j)
                rp = call.element_param("relu_param", "relu_tile", j)
                console.print("  again: ptonum explain postprocess "
                              f"--attributes {attrs.word:#010x} --acc-type {res.acc_type.name} "
                              f"--acc {_acc_text(int(acc_bits[i, j]), res.acc_type)} --quant-param {q:#x}"
                              + (f" --relu-param {rp:#x}" if rp else "")
                              + (f" --rmode {call.rmode.name}" if call.rmode.name != "NONE" else "")
                              + (" --sat" if sat else ""), markup=False, soft_wrap=True)
    if plot is not None:
        from ._plot import compare_figure, png_bytes, publish_png

        with errors_to_exit("compare"):
            d_rep = reports[0]
            publish_png(plot, png_bytes(compare_figure(
                d_rep, f"ptonum compare: D {shape_text(d_rep.shape)} {mode_name} -> {res.dst_type.name}, "
                       f"RMode={call.rmode.name}, Sat={int(bool(sat))}")))
        console.print(f"wrote {plot}", soft_wrap=True, markup=False)
    bad = sum(r.mismatches for r in reports)
    flags_bad = dev_flags is not None and dev_flags != int(res.flags)
    if dev_flags is not None:
        verdict = "differ" if flags_bad else "match"
        console.print(f"flags: model {res.flags:#04x} ({flag_names(res.flags)}), device {dev_flags:#04x} "
                      f"({flag_names(dev_flags)}): {verdict}", soft_wrap=True)
    if bad or flags_bad:
        what = [f"{bad} element(s) differ"] if bad else []
        if flags_bad:
            what.append("the sticky flags differ")
        console.print(f"[red]MISMATCH[/red]: {', '.join(what)}", soft_wrap=True)
        sys.exit(EXIT_MISMATCH)
    console.print("[green]MATCH[/green]")
