"""``ptonum compare``: run the B.FPATR tile operation and compare it with a device dump."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import rich_click as click
from rich.console import Console
from rich.table import Table

from ..conformance.compare import CompareReport, as_device_bits, compare_arrays, parse_int
from ..errors import PtonumError, UsageError
from ..flags import flag_names

_BIN_DTYPES = {"uint32": np.uint32, "int32": np.int32, "float32": np.float32}


def _read(name: str, spec: str, **kw: Any) -> np.ndarray:
    # the postprocess command's reader (.npy, .npz[:key], raw .bin)
    from .postprocess_cmd import read_tile

    return read_tile(name, spec, **kw)


def _shape(text: str) -> Tuple[int, ...]:
    parts = [p for p in text.replace("x", ",").replace("X", ",").split(",") if p.strip()]
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise UsageError(f"--shape = {text!r}: expected M x N, e.g. 256x32") from None
    if len(shape) != 2 or min(shape) < 1:
        raise UsageError(f"--shape = {text!r}: expected two positive dimensions")
    return shape


def build_run(*, acc: str, key: Optional[str], bin_dtype: Optional[str], bin_shape: Optional[str],
              acc_type: Optional[str], attributes_word: Optional[str], mode: Optional[str], relu: Optional[str],
              group_n: Optional[int], row_max: bool, group_max: bool, row_max_init: bool, max_abs: bool,
              scale: Optional[float], offset: int, scale_rounding: str, quant_param: Optional[str],
              quant_tile: Optional[str], alpha: Optional[float], relu_param: Optional[str], relu_tile: Optional[str],
              row_max_in: Optional[str]) -> Tuple[np.ndarray, Any, Dict[str, Any], Optional[str]]:
    """(acc array, FPATRAttributes, postprocess keyword arguments, acc_type) from the options
    (same option names and meaning as ``ptonum postprocess``)."""
    from ..fpatr.attributes import FPATRAttributes, mode_info
    from ..fpatr.params import quant_param as make_quant_param
    from ..fpatr.params import relu_param as make_relu_param

    if attributes_word is not None:
        if mode is not None or relu is not None:
            raise UsageError("--attributes and --mode/--relu both describe B.FPATR; give one or the other")
        attrs = FPATRAttributes.from_word(parse_int(attributes_word, "--attributes"))
    else:
        if mode is None:
            raise UsageError("give --mode NAME (and field options) or --attributes WORD")
        attrs = FPATRAttributes.from_fields(
            pre_quant_mode=int(mode, 0) if mode.strip().isdigit() or mode.strip().startswith("0x") else mode,
            relu_mode=relu if relu is not None else "NONE", group_n=group_n or 0, row_max_en=row_max,
            group_max_en=group_max, row_max_init=row_max_init, max_abs_en=max_abs)
    info = mode_info(attrs.pre_quant_mode)
    shape = _shape(bin_shape) if bin_shape else None
    a = _read("--acc", acc, key=key, bin_dtype=_BIN_DTYPES.get(bin_dtype or ""), bin_shape=shape)
    if a.ndim != 2:
        raise UsageError(f"--acc: expected an M x N tile, got shape {a.shape}")
    m, n = a.shape
    kwargs: Dict[str, Any] = {}
    if sum(x is not None for x in (scale, quant_param, quant_tile)) > 1:
        raise UsageError("give one of --scale (with --offset), --quant-param WORD or --quant-tile FILE")
    qword: Optional[int] = None
    if scale is not None:
        qword = int(make_quant_param(scale, offset, mode=attrs.pre_quant_mode, rounding=scale_rounding))
    elif quant_param is not None:
        qword = parse_int(quant_param, "--quant-param")
    if qword is not None:
        if info.parameter == "vector":
            kwargs["quant_tile"] = np.full((1, n), qword, dtype=np.uint64)
        else:
            kwargs["quant_param"] = qword
    if quant_tile is not None:
        kwargs["quant_tile"] = _read("--quant-tile", quant_tile, bin_dtype=np.uint64, bin_shape=(1, n))
    if sum(x is not None for x in (alpha, relu_param, relu_tile)) > 1:
        raise UsageError("give one of --alpha, --relu-param WORD or --relu-tile FILE")
    rword: Optional[int] = None
    if alpha is not None:
        rword = int(make_relu_param(alpha, rounding=scale_rounding))
    elif relu_param is not None:
        rword = parse_int(relu_param, "--relu-param")
    if rword is not None:
        if int(attrs.relu_mode) == 3:
            kwargs["relu_tile"] = np.full((1, n), rword, dtype=np.uint64)
        else:
            kwargs["relu_param"] = rword
    if relu_tile is not None:
        kwargs["relu_tile"] = _read("--relu-tile", relu_tile, bin_dtype=np.uint64, bin_shape=(1, n))
    if row_max_in is not None:
        rdt = {"FP32": np.float32, "S32": np.int32}.get((acc_type or "").upper(), np.uint32)
        kwargs["row_max_in"] = _read("--row-max-in", row_max_in, bin_dtype=rdt, bin_shape=(m, 1))
    return a, attrs, kwargs, acc_type


def _acc_bits(a: np.ndarray) -> np.ndarray:
    if a.dtype.itemsize == 4 and a.dtype.kind in "fiu":
        return a.view(np.uint32)
    return a.astype(np.uint64)


def _element_param(kwargs: Dict[str, Any], scalar: str, tile: str, col: int) -> int:
    if tile in kwargs:
        return int(np.asarray(kwargs[tile]).reshape(-1)[col])
    return int(kwargs.get(scalar, 0) or 0)


@click.command("compare")
@click.option("--acc", required=True, help="Accumulator tile (.npy, FILE.npz:KEY or raw .bin with --dtype/--shape).")
@click.option("--key", help="Array name inside an --acc .npz file.")
@click.option("--dtype", "bin_dtype", type=click.Choice(sorted(_BIN_DTYPES)), help="Element type of a raw .bin --acc.")
@click.option("--shape", "bin_shape", help="M x N of a raw .bin --acc (device .bin dumps take the model's shape).")
@click.option("--acc-type", type=click.Choice(["FP32", "S32", "U32"], case_sensitive=False), help="Accumulator type.")
@click.option("--attributes", "attributes_word", metavar="WORD", help="The 32-bit B.FPATR word.")
@click.option("--mode", help="PreQuantMode name or code.")
@click.option("--relu", default=None, help="ReluMode NONE, RELU, LRELU or PRELU.")
@click.option("--group-n", type=int, default=None, help="GroupN columns.")
@click.option("--row-max", is_flag=True, help="RowMaxEn.")
@click.option("--group-max", is_flag=True, help="GroupMaxEn (needs --group-n).")
@click.option("--row-max-init", is_flag=True, help="RowMaxInit (with --row-max-in).")
@click.option("--max-abs", is_flag=True, help="MaxAbsEn.")
@click.option("--rmode", default="NONE", show_default=True, help="B.DATR rounding mode.")
@click.option("--sat", is_flag=True, help="B.DATR Sat=1.")
@click.option("--scale", type=float, default=None, help="Scale as a number (converted to FP19).")
@click.option("--offset", type=int, default=0, show_default=True, help="Signed offset.")
@click.option("--scale-rounding", type=click.Choice(["exact", "rne"]), default="exact", show_default=True,
              help="FP19 conversion of --scale/--alpha.")
@click.option("--quant-param", metavar="WORD", help="Raw 64-bit quantization word.")
@click.option("--quant-tile", metavar="FILE", help="1 x N U64 quantization words.")
@click.option("--alpha", type=float, default=None, help="LReLU/PReLU multiplier.")
@click.option("--relu-param", metavar="WORD", help="Raw activation word.")
@click.option("--relu-tile", metavar="FILE", help="1 x N U64 activation words.")
@click.option("--row-max-in", metavar="FILE", help="RowMaxIn (M x 1).")
@click.option("--device-d", required=True, help="Device D dump (bits or typed values; .npy/.npz/.bin).")
@click.option("--device-row-max", default=None, help="Device RowMaxOut dump.")
@click.option("--device-group-max", default=None, help="Device GroupMaxOut dump.")
@click.option("--engine", type=click.Choice(["fast", "reference"]), default="fast", show_default=True)
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
    """
    console = Console()
    try:
        from ..fpatr.tile import postprocess

        a, attrs, kwargs, at = build_run(
            acc=acc, key=key, bin_dtype=bin_dtype, bin_shape=bin_shape, acc_type=acc_type,
            attributes_word=attributes_word, mode=mode, relu=relu, group_n=group_n, row_max=row_max,
            group_max=group_max, row_max_init=row_max_init, max_abs=max_abs, scale=scale, offset=offset,
            scale_rounding=scale_rounding, quant_param=quant_param, quant_tile=quant_tile, alpha=alpha,
            relu_param=relu_param, relu_tile=relu_tile, row_max_in=row_max_in)
        res = postprocess(a, acc_type=at, attributes=attrs, rmode=rmode, sat=sat, engine=engine, **kwargs)
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
                        acc_type=res.acc_type, quant_param=_element_param(kwargs, "quant_param", "quant_tile", j),
                        relu_param=_element_param(kwargs, "relu_param", "relu_tile", j), rmode=rmode, sat=sat).text()
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
