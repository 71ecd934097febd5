"""``ptonum tcvt``: TCVT to E8M0 on values or files (ADR-0085 D183)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional, Tuple

import numpy as np
import rich_click as click
from rich.table import Table

from .._util import int_text
from ..errors import UsageError
from ..flags import flag_names
from ..formats import TileDataType, parse_data_type
from ..publish import Publication
from ..tcvt import SUPPORTED_SOURCES, e8m0_scale, flag_summary, to_e8m0
from ._common import (AsciiIntRange, RMODE_HELP, decimal_in_format, errors_to_exit, input_file,
                      memory_errors_name, out_console, output_path, parse_rmode, print_table, refuse_output_over_input)
from ..npyfile import check_numpy_file, numpy_read_error
from ._tile_args import parse_shape, read_tile, split_key
from .compile_cmd import warn_if_cold

_DTYPES = ("float32", "float16", "bfloat16", "uint32", "uint16")


def _reshape(arr: np.ndarray, shape: str, holder: str) -> np.ndarray:
    """``arr`` in the ``--shape`` layout (row-major); UsageError when the element counts differ."""
    dims = parse_shape(shape)
    count = int(np.prod(dims))
    if count != arr.size:
        raise UsageError(f"--shape = {shape}: {count} elements, but {holder} {arr.size}")
    return arr.reshape(dims)


def _float_dtype(src: TileDataType) -> Any:
    import ml_dtypes

    return {TileDataType.FP32: np.float32, TileDataType.FP16: np.float16,
            TileDataType.BF16: ml_dtypes.bfloat16}[src]


def _bits_dtype(src: TileDataType) -> Any:
    return np.uint32 if src is TileDataType.FP32 else np.uint16


def _from_values(text: str, src: TileDataType) -> Tuple[np.ndarray, List[Optional[int]]]:
    """Comma-separated decimals (each rounded once, from its exact decimal value, to the source type:
    nearest, ties to even) or ``0x`` raw encodings: the source encodings, and for each item the flags of
    that rounding (:func:`ptonum.cli._common.decimal_in_format`: OF|NX, UF|NX, NX or 0; ``None``
    for an encoding, which is not rounded).  Raises :class:`UsageError` naming the item."""
    tokens = [t.strip() for t in text.split(",")]
    if not any(tokens):
        raise UsageError("--values: no values given")
    for i, tok in enumerate(tokens):
        if not tok:
            raise UsageError(f"--values[{i}] is empty ({text!r}): give one number or 0x encoding between commas")
    width = 32 if src is TileDataType.FP32 else 16
    out: List[int] = []
    read_flags: List[Optional[int]] = []
    for i, tok in enumerate(tokens):
        if tok.lower().startswith("0x"):
            try:
                v = int_text(tok)
            except ValueError:
                raise UsageError(f"--values[{i}] = {tok!r}: not a hex encoding") from None
            if v >> width:
                raise UsageError(f"--values[{i}] = {tok}: does not fit the {width}-bit {src.name} source")
            out.append(v)
            read_flags.append(None)
        else:
            from ..numtext import is_decimal_text

            if not is_decimal_text(tok):
                raise UsageError(f"--values[{i}] = {tok!r}: not a number (use decimals, inf, nan or 0x encodings)")
            bits, _, flags = decimal_in_format(tok, src.name, f"--values[{i}]")  # rounded once, from the decimal
            out.append(bits)
            read_flags.append(flags)
    return np.array(out, dtype=_bits_dtype(src)), read_flags


def _load(path: str, dtype: Optional[str], shape: Optional[str],
          src_opt: Optional[TileDataType]) -> Tuple[np.ndarray, TileDataType]:
    """Read FILE.npy or FILE.bin and return (raw encodings, source type)."""
    import ml_dtypes

    file_text = split_key(path)[0]
    p = input_file("FILE", file_text)
    suffix = p.suffix.lower()
    if suffix == ".npz":  # FILE.npz, or FILE.npz:KEY for one of several arrays
        if dtype is not None:
            raise UsageError("--dtype applies to raw .bin files; a .npz file carries its own dtypes")
        arr = read_tile("FILE", path)
        dt = arr.dtype
    elif suffix == ".npy":
        if dtype is not None:
            raise UsageError("--dtype applies to raw .bin files; a .npy file carries its own dtype")
        check_numpy_file("FILE", p)
        try:
            arr = np.load(p, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise numpy_read_error("FILE", p, exc) from None
        dt = arr.dtype
    elif suffix != ".bin":  # was: any other file read as raw bits (an .npz's zip bytes as values)
        raise UsageError(f"FILE: {path}: unknown file type {suffix or '(no suffix)'}; expected .npy, .npz "
                         f"(FILE.npz:KEY for one of several arrays) or a raw .bin with --dtype")
    else:
        if dtype is None:
            raise UsageError(f"FILE: {path}: a raw file needs --dtype ({'|'.join(_DTYPES)})")
        dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
        size = p.stat().st_size
        if size % dt.itemsize:
            raise UsageError(f"FILE: {path}: {size} bytes is not a whole number of {dtype} elements")
        arr = np.fromfile(p, dtype=dt)
    if arr.size == 0:
        raise UsageError(f"FILE: {path}: holds no elements (an empty file or array)")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
        dt = arr.dtype
    if shape is not None:
        arr = _reshape(arr, shape, "the file holds")
    floats = {np.dtype(np.float32): TileDataType.FP32, np.dtype(np.float16): TileDataType.FP16,
              np.dtype(ml_dtypes.bfloat16): TileDataType.BF16}
    if dt in floats:
        src = floats[dt]
        if src_opt is not None and src_opt is not src:
            raise UsageError(f"--src-type {src_opt.name} contradicts the {dt} data ({src.name})")
        return np.ascontiguousarray(arr).view(_bits_dtype(src)), src
    if dt.kind in "iu" and src_opt is not None and dt.itemsize * 8 < (32 if src_opt is TileDataType.FP32 else 16):
        raise UsageError(
            f"FILE: {path}: {dt} data cannot hold {src_opt.name} encodings ({32 if src_opt is TileDataType.FP32 else 16} "
            f"bits); give {'uint32' if src_opt is TileDataType.FP32 else 'uint16'} encodings or "
            f"{'float32' if src_opt is TileDataType.FP32 else src_opt.name.lower()} values")
    if dt == np.dtype(np.uint32):
        src = src_opt or TileDataType.FP32
        if src is not TileDataType.FP32:  # 16-bit codes held in uint32: each must fit, named here by FILE
            wide = np.flatnonzero(arr.reshape(-1) > 0xFFFF)
            if wide.size:
                i = int(wide[0])
                where = ", ".join(str(int(k)) for k in np.unravel_index(i, arr.shape))
                raise UsageError(f"FILE: {path}[{where}] = {int(arr.reshape(-1)[i]):#x}: does not fit a 16-bit "
                                 f"{src.name} encoding (uint32 data read with --src-type {src.name})")
        return arr, src
    if dt == np.dtype(np.uint16) or dt == np.dtype("V2"):
        if dt == np.dtype("V2"):  # np.save of an ml_dtypes bfloat16 array
            arr = arr.view(np.uint16)
            return arr, src_opt or TileDataType.BF16
        if src_opt is None:
            raise UsageError(f"FILE: {path}: uint16 encodings need --src-type FP16 or BF16")
        return arr, src_opt
    if dt == np.dtype(np.float64):
        raise UsageError(f"FILE: {path}: float64 data is an FP64 source, which TCVT to E8M0 rejects; "
                         "convert it to float32/float16/bfloat16 first (ADR-0085 D183)")
    raise UsageError(f"FILE: {path}: dtype {dt} is not float32, float16, bfloat16, uint32 or uint16")


def _source_text(bits: int, src: TileDataType) -> str:
    arr = np.array([bits], dtype=_bits_dtype(src)).view(_float_dtype(src))
    return repr(float(arr[0]))


def _scale_text(code: int) -> str:
    if code == 0xFF:
        return "NaN"
    k = code - 127
    v = float(e8m0_scale(code))
    return f"2^{k} = {v:.10g}"


@click.command("tcvt")
@click.argument("file", required=False)
@click.option("--to", "dst", default="E8M0", show_default=True, help="Destination type (only E8M0 is modelled).")
@click.option("--rmode", default="NONE", show_default=True, help=RMODE_HELP + " NONE resolves to RNE.")
@click.option("--sat", is_flag=True, help="Sat=1: underflow/overflow clamp to 0x00/0xFE instead of 0xFF.")
@click.option("--src-type", default=None,
              help="FP32, FP16 or BF16. Default: from the data's dtype; FP32 for --values and uint32 data.")
@click.option("--engine", type=click.Choice(["fast", "reference"]), default="fast", show_default=True)
@click.option("--values", default=None, help="Comma-separated inputs: decimals (each rounded once, exactly, to the source type, nearest even) "
                                             "or 0x raw encodings, e.g. 1.5,0.75,0x3fc00000.")
@click.option("--dtype", type=click.Choice(_DTYPES), default=None, help="Element type of a raw FILE.bin.")
@click.option("--shape", default=None, help="Shape of the input, M x N, e.g. 64x128 (64,128 also works).")
@click.option("--out", default=None,
              help="Write the codes (uint8) to OUT.npy, or codes and flags to OUT.npz (directories are created; "
                   "another suffix is refused).")
@click.option("--max-rows", type=AsciiIntRange(min=0), default=64, show_default=True,
              help="Inputs up to this size are listed element by element; larger ones are summarized.")
def command(file: Optional[str], dst: str, rmode: str, sat: bool, src_type: Optional[str], engine: str,
            values: Optional[str], dtype: Optional[str], shape: Optional[str], out: Optional[str],
            max_rows: int) -> None:
    """TCVT to **E8M0**: round log2 of each positive FP16/BF16/FP32 value to an exponent (ADR-0085 D183).

    Input is `--values` or a FILE (`.npy`, `.npz` (`FILE.npz:KEY` when it holds several arrays), or raw
    `.bin` with `--dtype`; any other file type is refused). Prints the E8M0 codes,
    their scales 2^(code-127) (0xff is NaN) and the NV/OF/UF/NX flags per element, or summary
    counts for large inputs; decimal `--values` also show the flags of their rounding to the source type
    (OF|NX, UF|NX, NX: not TCVT flags, not in the status). Exit status 2 with a one-line reason on bad input (an integer array
    narrower than the source carrier, e.g. uint16 data with `--src-type FP32`, is refused).
    """
    console = out_console()
    with errors_to_exit("tcvt"):
        d = parse_data_type(dst, "--to")
        if d is not TileDataType.E8M0:
            raise UsageError(f"--to = {dst}: only TCVT to E8M0 is modelled (ADR-0085 D183)")
        src_opt = parse_data_type(src_type, "--src-type") if src_type is not None else None
        if src_opt is not None and src_opt not in SUPPORTED_SOURCES:
            # Let the model raise its own UnsupportedConversionError text.
            to_e8m0(0, src_type=src_opt)
        mode = parse_rmode(rmode, "--rmode")
        if values is not None and file is not None:
            raise UsageError(f"give exactly one input: --values or FILE, not both ({file!r} was read as FILE; "
                             "--values takes one comma-separated list, e.g. --values 1.5,3)")
        if values is None and file is None:
            raise UsageError("give exactly one input: --values or FILE")
        read_flags: List[Optional[int]] = []  # per --values item: its decimal's rounding flags (None: 0x)
        if values is not None:
            if dtype is not None:
                raise UsageError("--dtype applies to a raw FILE.bin, not to --values")
            src = src_opt or TileDataType.FP32
            bits, read_flags = _from_values(values, src)
            if shape is not None:
                bits = _reshape(bits, shape, "--values has")
        else:
            assert file is not None
            with memory_errors_name(file):
                bits, src = _load(file, dtype, shape, src_opt)
        if out is not None:
            if Path(out).is_dir() or Path(out).suffix.lower() in (".npy", ".npz"):
                output_path("--out", out)  # refused before any work: a directory, an unwritable folder
            else:
                raise UsageError(f"--out = {out}: give a .npy file name (the codes) or .npz (codes and flags)")
            refuse_output_over_input("--out", out, [("FILE", file)])
        with warn_if_cold(int(bits.size), engine), memory_errors_name(file or "--values"):
            codes, flags = to_e8m0(bits, src_type=src, rmode=mode, sat=sat, engine=engine)
        if out is not None:
            with Publication() as pub, pub.open(out) as fh:  # a file object: numpy adds no suffix
                if Path(out).suffix.lower() == ".npz":
                    np.savez(fh, codes=codes, flags=flags)
                else:
                    np.save(fh, codes, allow_pickle=False)

    resolved = mode.resolved()
    head = (f"TCVT {src.name} -> E8M0, RMode {mode.name}"
            f"{' (= ' + resolved.name + ')' if resolved is not mode else ''}, Sat={int(sat)}, "
            f"engine {engine}, {codes.size} element(s)")
    status = int(np.bitwise_or.reduce(flags.reshape(-1))) if flags.size else 0
    decimals = [f for f in read_flags if f is not None]
    read_col = f"decimal->{src.name} flags"
    if codes.size <= max_rows:
        table = Table(title=head, title_justify="left")
        cols = ("index", "source bits", "source value") + ((read_col,) if decimals else ()) + ("E8M0", "scale",
                                                                                               "flags")
        for col in cols:
            table.add_column(col, justify="left" if col in ("scale", "flags", "index", read_col) else "right")
        width = 8 if src is TileDataType.FP32 else 4
        for k, i in enumerate(np.ndindex(codes.shape)):
            b, c, f = int(bits[i]), int(codes[i]), int(flags[i])
            rf = read_flags[k] if decimals else None
            read = [] if not decimals else ["(encoding)" if rf is None else flag_names(rf)]
            table.add_row(",".join(map(str, i)) or "0", f"0x{b:0{width}x}", _source_text(b, src), *read,
                          f"0x{c:02x}", _scale_text(c), flag_names(f))
        print_table(console, table)
    else:
        console.print(head, highlight=False)
        summary = flag_summary(flags)
        table = Table(title="summary", title_justify="left")
        table.add_column("count")
        table.add_column("elements", justify="right")
        finite = codes[codes != 0xFF]
        table.add_row("NaN code 0xff", str(int(codes.size - finite.size)))
        if finite.size:
            lo, hi = int(finite.min()), int(finite.max())
            table.add_row("code range", f"0x{lo:02x}..0x{hi:02x} (2^{lo - 127}..2^{hi - 127})")
        table.add_row("no flag", str(int(np.count_nonzero(flags == 0))))
        for name, n in summary.items():
            table.add_row(f"flag {name}", str(n))
        if decimals:
            for name, n in ((k, v) for k, v in flag_summary(np.array(decimals, np.uint8)).items() if v):
                table.add_row(f"{read_col[:-6]} flag {name}", str(n))
        print_table(console, table)
    if decimals:
        read_or = int(np.bitwise_or.reduce(np.array(decimals, np.uint8)))
        console.print(f"decimals read as {src.name} (rounded once, nearest even, IEEE 754): flags "
                      f"{flag_names(read_or)} (0x{read_or:02x}); those are not TCVT flags and not in the status below",
                      highlight=False, markup=False)
    console.print(f"status flags (OR): {flag_names(status)} (0x{status:02x})"
                  + (f"; codes written to {out}" if out else ""), highlight=False, markup=False)
