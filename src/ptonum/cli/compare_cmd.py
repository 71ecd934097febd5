"""``ptonum compare``: run the B.FPATR tile operation and compare it with a device dump."""

from __future__ import annotations

import sys
from typing import Any, List, Optional

import numpy as np
import rich_click as click
from rich.console import Console
from rich.table import Table

from ..conformance.compare import CompareReport, as_device_bits, compare_arrays
from ..errors import PtonumError, UsageError
from ..flags import flag_names
from ._tile_args import build_tile_call, read_tile, tile_options

def _read(name: str, spec: str, **kw: Any) -> np.ndarray:
    return read_tile(name, spec, **kw)


def _acc_bits(a: np.ndarray) -> np.ndarray:
    if a.dtype.itemsize == 4 and a.dtype.kind in "fiu":
        return a.view(np.uint32)
    return a.astype(np.uint64)


@click.command("compare")
@click.argument("acc", metavar="ACC")
@tile_options
@click.option("--engine", type=click.Choice(["fast", "reference"]), default="fast", show_default=True)
@click.option("--device-d", required=True, help="Device D dump (bits or typed values; .npy/.npz/.bin).")
@click.option("--device-row-max", default=None, help="Device RowMaxOut dump.")
@click.option("--device-group-max", default=None, help="Device GroupMaxOut dump.")
@click.option("--max-report", type=int, default=10, show_default=True, help="Mismatch positions listed per output.")
@click.option("--explain", "n_explain", type=int, default=1, show_default=True, help="Explain the first N D mismatches.")
def command(acc: str, key: Optional[str], bin_dtype: Optional[str], bin_shape: Optional[str], acc_type: Optional[str],
            attributes_word: Optional[str], mode: Optional[str], relu: Optional[str], group_n: Optional[int],
            row_max: bool, group_max: bool, row_max_init: bool, max_abs: bool, rmode: str, sat: bool,
            scale: Optional[float], offset: int, scale_rounding: str, quant_param: Optional[str],
            quant_tile: Optional[str], alpha: Optional[float], relu_param: Optional[str], relu_tile: Optional[str],
            row_max_in: Optional[str], device_d: str, device_row_max: Optional[str], device_group_max: Optional[str],
            engine: str, max_report: int, n_explain: int) -> None:
    """Run the tile post-process on ACC and compare D (and RowMaxOut/GroupMaxOut) with a device dump.

    Reports match/mismatch counts, the first mismatch positions, a distance
    histogram (integer difference for integer destinations, ulps for floating
    ones; NaN/Inf class mismatches counted apart) and explains the first
    mismatches. Exits 1 on any mismatch, 2 on a usage error.

    ACC and the operation options are those of `ptonum postprocess`; the device dump may hold raw
    encodings (uint8/uint16/uint32) or typed values.

    **Example**

    ```
    ptonum compare acc.npy --mode VREQ8 --relu RELU --row-max --quant-tile q.npy --sat \\
        --device-d dev_d.npy --device-row-max dev_rowmax.npy
    ```
    """
    console = Console()
    try:
        call = build_tile_call(
            acc, key=key, bin_dtype=bin_dtype, bin_shape=bin_shape, acc_type=acc_type,
            attributes_word=attributes_word, mode=mode, relu=relu, group_n=group_n, row_max=row_max,
            group_max=group_max, row_max_init=row_max_init, max_abs=max_abs, scale=scale, offset=offset,
            scale_rounding=scale_rounding, quant_param=quant_param, quant_tile=quant_tile, alpha=alpha,
            relu_param=relu_param, relu_tile=relu_tile, row_max_in=row_max_in, rmode=rmode, sat=sat)
        attrs, a = call.attributes, call.acc
        res = call.run(engine=engine)
        reports: List[CompareReport] = []
        dev = _read("--device-d", device_d, bin_dtype=_dump_dtype(res.dst_type), bin_shape=res.d_bits.shape)
        reports.append(compare_arrays("D", res.dst_type, res.d_bits,
                                      as_device_bits("--device-d", dev, res.dst_type, res.d_bits.shape), max_report))
        for name, spec, model in (("RowMaxOut", device_row_max, res.row_max_bits),
                                  ("GroupMaxOut", device_group_max, res.group_max_bits)):
            if spec is None:
                continue
            if model is None:
                raise UsageError(f"--device-{'row' if name == 'RowMaxOut' else 'group'}-max: the attributes do not enable {name}")
            devx = _read(f"--device {name}", spec, bin_dtype=np.uint32, bin_shape=model.shape)
            reports.append(compare_arrays(name, res.acc_type, model,
                                          as_device_bits(name, devx, res.acc_type, model.shape), max_report))
    except PtonumError as exc:
        console.print(f"[red]error[/red]: {exc}", highlight=False)
        sys.exit(2)

    table = Table(title=f"ptonum compare ({attrs.pre_quant_mode.name if hasattr(attrs.pre_quant_mode, 'name') else attrs.pre_quant_mode} -> {res.dst_type.name}, model flags {flag_names(res.flags)})")
    for c in ("output", "type", "elements", "match", "mismatch", "NaN/Inf class"):
        table.add_column(c)
    for r in reports:
        st = "green" if r.ok else "red"
        table.add_row(r.output, r.dst_type.name, str(r.elements), str(r.elements - r.mismatches),
                      f"[{st}]{r.mismatches}[/{st}]", str(r.class_mismatches))
    console.print(table)
    acc_bits = _acc_bits(a)
    for r in reports:
        if r.ok:
            continue
        unit = "integer difference" if r.dst_type.is_integer else f"ulps of {r.dst_type.name}"
        console.print(f"[bold]{r.output}[/bold]: first {len(r.first)} of {r.mismatches} mismatches:", highlight=False)
        for mm in r.first:
            dist = "class mismatch (NaN/Inf)" if mm.distance is None else f"distance {mm.distance}"
            console.print(f"  {r.output}{list(mm.position)}: model {mm.model:#x}, device {mm.device:#x}, {dist}",
                          highlight=False)
        if r.hist:
            console.print(f"  histogram ({unit}): " + ", ".join(f"{k}: {v}" for k, v in r.hist), highlight=False)
        if r.output == "D" and n_explain > 0:
            from ..conformance.explain import explain_postprocess

            for mm in r.first[:n_explain]:
                i, j = mm.position
                try:
                    text = explain_postprocess(
                        int(acc_bits[i, j]), pre_quant_mode=int(attrs.pre_quant_mode), relu_mode=int(attrs.relu_mode),
                        acc_type=res.acc_type, quant_param=call.element_param("quant_param", "quant_tile", j),
                        relu_param=call.element_param("relu_param", "relu_tile", j), rmode=rmode, sat=sat).text()
                except (PtonumError, ImportError) as exc:
                    text = f"(no trace: {exc})"
                console.print(f"[bold]explain D[{i}, {j}][/bold] (device {mm.device:#x})", highlight=False)
                console.print(text, highlight=False, markup=False, soft_wrap=True)
    bad = sum(r.mismatches for r in reports)
    if bad:
        console.print(f"[red]MISMATCH[/red]: {bad} element(s) differ")
        sys.exit(1)
    console.print("[green]MATCH[/green]")


def _dump_dtype(dst: Any) -> Any:
    from ..formats import TileDataType

    return {TileDataType.FP32: np.uint32, TileDataType.S32: np.uint32, TileDataType.U32: np.uint32,
            TileDataType.FP16: np.uint16, TileDataType.BF16: np.uint16, TileDataType.S16: np.uint16}.get(dst, np.uint8)
