"""``ptonum postprocess``: run B.FPATR post-processing on an accumulator tile (or the bundled example).

With no ACC argument the command runs the bundled example (a small perceptron
on scikit-learn's digits, ``ptonum/data/EXAMPLE.md``) through the
representative PreQuant modes and prints what each destination costs.  With
ACC it post-processes that tile with :func:`ptonum.fpatr.postprocess` and
writes D, RowMaxOut and GroupMaxOut and a ``STEM.flags.json`` summary.  Every
rejection prints one line (the ptonum error message) on stderr and exits with
status 2 before any file is written.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import rich_click as click
import click as _click
from click.core import ParameterSource

from .._util import shape_text
from ..errors import UsageError
from ..flags import flag_names
from ..publish import Publication, output_directory_lock
from ._common import (ONE_SHOT_KERNEL_MIN_ELEMENTS, TextOut, errors_to_exit, kernels_from, memory_errors_name,
                      out_console, output_dir, print_table, progress_report, rmode_text, stderr_is_terminal)
from ._scale_out import (POSTPROCESS_SCALE_OPTIONS, output_stem, postprocess_options, run_postprocess,
                         refuse_foreign_files, refuse_inputs_among_outputs, refuse_protected_outputs,
                         stale_outputs, wants_scale_out)
from .compile_cmd import warn_if_cold
from ._tile_args import (
    INPUT_OPTIONS,
    OPERATION_OPTIONS,
    PARAMETER_OPTIONS,
    build_tile_call,
    split_key,
    tile_options,
)

if TYPE_CHECKING:
    from rich.console import Console

#: inputs with more elements than this show a progress bar
PROGRESS_ELEMENTS = 1 << 20


# ---------------------------------------------------------------------------
# Writing outputs (all or nothing)


def _write_outputs(out_dir: Path, files: Dict[str, np.ndarray], write_bin: bool,
                   texts: Optional[Dict[str, str]] = None, remove: Sequence[Path] = ()) -> Tuple[List[Path], List[Path]]:
    """Publish every output in ``out_dir`` together (:class:`ptonum.publish.Publication`): each
    ``STEM.npy`` (and ``STEM.bin`` with ``write_bin``) of ``files`` and each text file of ``texts``
    (name -> content), and take away the files of ``remove`` (an earlier run's outputs) in the same
    commit; all of it or, on any error or signal, none, and no temporary left.  Returns the paths
    written and the paths removed.

    Raises:
        PublishError: naming the output that could not be written or put in place.
    """
    with Publication() as pub:
        for stem, arr in files.items():
            a = np.ascontiguousarray(arr)
            with pub.open(out_dir / f"{stem}.npy") as fh:
                np.lib.format.write_array(fh, a, allow_pickle=False)
            if write_bin:
                with pub.open(out_dir / f"{stem}.bin") as fh:
                    fh.write(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
        for fname, text in (texts or {}).items():
            pub.write_text(out_dir / fname, text)
        for stale in remove:
            pub.remove(stale)
    return pub.paths, pub.removed


# ---------------------------------------------------------------------------
# The example report


def _fmt(x: Optional[float], spec: str = ".3g") -> str:
    if x is None:
        return ""
    if isinstance(x, float) and math.isinf(x):
        return "exact" if x > 0 else "-inf"
    return format(x, spec)


def _options_text(run: Any) -> str:
    parts = []
    if run.relu.upper() != "NONE":
        parts.append(run.relu.upper())
    if run.row_max:
        parts.append("RowMax")
    if run.group_max:
        parts.append(f"GroupMax/{run.group_n}")
    if run.max_abs:
        parts.append("MaxAbs")
    return " ".join(parts) or "-"


def _shape(t: Optional[Tuple[int, ...]]) -> str:
    return "-" if t is None else "x".join(map(str, t))


def _num(x: float) -> str:
    """An integer-valued number as an integer, anything else with 4 significant digits."""
    f = float(x)
    if math.isfinite(f) and f.is_integer() and abs(f) < 1e12:
        return str(int(f))
    return format(f, ".4g")


def _stat_cell(shape: Optional[Tuple[int, ...]], rng: Any) -> str:
    return "-" if rng is None else f"{_shape(shape)}\n{_num(rng[0])} .. {_num(rng[1])}"


def _run_example(console: "Console", engine: str, plot: Optional[str] = None) -> None:
    """The example report; both tables fit 80 columns (long notes go to a numbered list below)."""
    from rich import box
    from rich.table import Table

    from ..example import RUNS, load_example, run_one

    ex = load_example()
    meta = ex.meta
    m = ex["x_q"].shape[0]
    console.print(
        "[bold]ptonum postprocess[/bold] - bundled example: a 64-32-10 perceptron on scikit-learn's "
        f"handwritten digits (UCI optdigits, CC BY 4.0), {m} images; float-model top-1 accuracy "
        f"{100 * meta.get('float_model_accuracy_on_example', float('nan')):.1f} %. Accumulators: "
        "S32 from an int8 GEMM, FP32 from a float32 GEMM. Each run's D is compared with the exact "
        "product select(acc) x scale + offset.",
        highlight=False,
    )
    reports = [run_one(run, ex, engine=engine) for run in RUNS]
    if plot is not None:
        from ._plot import example_figure, png_bytes, publish_png

        labels = [f"{i}. {run.mode} {run.acc_type}->{rep.dst_type}" + (
            f" {_options_text(run)}" if _options_text(run) != "-" else "")
            for i, (run, rep) in enumerate(zip(RUNS, reports), 1)]
        data = png_bytes(example_figure(RUNS, reports, [rep.extra["relative_error"] for rep in reports], labels))
        publish_png(plot, data)

    cost = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0),
                 title="What each destination costs",
                 title_justify="left")
    for col, just, wrap in (("#", "right", False), ("mode", "left", False), ("options", "left", True),
                            ("acc->D", "left", False), ("flags", "left", False), ("SQNR dB", "right", False),
                            ("max|err|", "right", False), ("top-1 %¹", "right", False)):
        cost.add_column(col, justify=just, min_width=10 if wrap else None)  # type: ignore[arg-type]
    for i, (run, rep) in enumerate(zip(RUNS, reports), 1):
        top1 = "" if rep.top1_float is None else f"{100 * rep.top1_float:.1f}/{100 * (rep.top1_labels or 0):.1f}"
        cost.add_row(str(i), run.mode, _options_text(run), f"{run.acc_type}->{rep.dst_type}",
                     rep.flag_names, _fmt(rep.sqnr_db, ".1f"), _fmt(rep.max_abs_err, ".3g"), top1)
    print_table(console, cost, fold=("options",))

    shapes = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0),
                   title="Outputs (notes below)",
                   title_justify="left")
    for col, just in (("#", "right"), ("layer", "left"), ("D shape", "left"), ("D range", "right"),
                      ("RowMaxOut", "left"), ("GroupMaxOut", "left")):
        shapes.add_column(col, justify=just)  # type: ignore[arg-type]
    for i, (run, rep) in enumerate(zip(RUNS, reports), 1):
        shapes.add_row(
            str(i), run.layer, _shape(rep.d_shape), f"{_fmt(rep.d_min, '.6g')} .. {_fmt(rep.d_max, '.6g')}",
            _stat_cell(rep.row_max_shape, rep.extra.get("row_max_range")),
            _stat_cell(rep.group_max_shape, rep.extra.get("group_max_range")),
        )
    print_table(console, shapes)
    console.print("Notes:", highlight=False)
    for i, run in enumerate(RUNS, 1):
        console.print(f"{i:>3}. {run.mode}: {run.note}", highlight=False)
    if plot is not None:
        console.print(f"wrote {plot}", highlight=False, markup=False)
    console.print(
        "¹ top-1: argmax of the decoded logits against the float model's / against the true labels. "
        "SQNR = 10 log10(sum ref^2 / sum (D - ref)^2) and max|err| are in destination units; "
        "'exact' means D equals the product. Post-process your own tiles: ptonum postprocess --help",
        highlight=False,
    )


# ---------------------------------------------------------------------------
# The command



@click.command("postprocess")
@click.option_panel("Input", options=INPUT_OPTIONS)
@click.option_panel("Operation: B.FPATR word or fields, B.DATR RMode/Sat", options=OPERATION_OPTIONS)
@click.option_panel("Parameters", options=PARAMETER_OPTIONS)
@click.option_panel("Run and output", options=["--engine", "--out-dir", "--bin", "--progress", "--plot", "--help"])
@click.option_panel("Scale-out (Dask)", options=POSTPROCESS_SCALE_OPTIONS)
@click.argument("accs", nargs=-1, metavar="[ACC]...",
                help="Accumulator tile M x N: .npy, .npz (--key) or raw .bin (--dtype, --shape). Omit to run the bundled example.")
@tile_options
@click.option("--engine", type=click.Choice(["fast", "reference"]), default="fast", show_default=True,
              help="fast = vectorized numpy, compiled numba kernels for large tiles (same bits and flags); "
                   "reference = exact per-element model (slow).")
@click.option("--out-dir", default=".", show_default=True,
              help="Directory for the output files (created when missing).")
@click.option("--bin", "write_bin", is_flag=True, help="Also write raw little-endian .bin files.")
@click.option("--progress/--no-progress", default=None,
              help=f"Progress on stderr (default: on for more than {PROGRESS_ELEMENTS} elements when stderr is a "
                   "terminal): a bar on a terminal; redirected to a file or pipe, --progress writes a plain line "
                   "'ptonum: progress: ... DONE/TOTAL (P%), S s' at each tenth of the work.")
@click.option("--plot", "plot", default=None, metavar="FILE.png",
              help="Bundled example only: draw SQNR per configuration and each destination's error "
                   "distribution to FILE.png (needs matplotlib).")
@postprocess_options
def command(accs: Tuple[str, ...], chunks: Optional[str], workers: Optional[int], scheduler: Optional[str],
            fail_fast: bool, allow_missing_chunks: bool, **options: Any) -> None:
    """Post-process an M x N accumulator tile exactly as B.FPATR does (PreQuant, ReLU, RowMax/GroupMax).

    **Without ACC** it runs the bundled example - a small perceptron on real handwritten digits - through
    the representative modes (VREQ8, REQ8, REQ4, VDEQS16, DEQF16, QS322BF16_PRE on S32; F322F16, F322BF16,
    QF322FP8_PRE, QF322HIF8_PRE, VQF322B8_PRE on FP32; one with GroupMax and MaxAbs) and prints, per mode,
    the destination, shapes, flags, value range and the error against the exact product
    (SQNR, max abs error, top-1 agreement for the logits).

    **With ACC** (.npy, .npz with --key, or raw .bin with --dtype/--shape) it computes D, RowMaxOut and
    GroupMaxOut bit-exactly (ADR-0085), prints a summary (shapes, destination type, flags by name,
    value range) and writes the outputs. Describe the operation either with `--attributes WORD` or with
    `--mode` and the field options; give the parameter as `--scale/--offset` (or `--shift N` for the
    shift modes 12/13, a raw `--quant-param` word, per-column numbers with `--scale-tile` (and
    `--offset-tile`), or a per-column `--quant-tile`: a 1 x N uint64 .npy of words made with
    `ptonum.fpatr.quant_param(scale, offset, mode=...)`); PReLU alphas per column with `--alpha-tile`. Any rejection (illegal
    attributes, parameter, shape, file) prints one line on stderr and exits with status 2 without
    writing anything.

    **Examples**

    Run the bundled example (no input):

    ```
    ptonum postprocess
    ```

    Requantize an S32 tile to int8 with one scale for every column, ReLU and RowMax:

    ```
    ptonum postprocess acc.npy --acc-type S32 --mode VREQ8 --relu RELU \\
        --row-max --scale 0.0078125 --sat --out-dir out
    ```

    Per-channel scales and offsets of a layer as numbers (N floats and N integers):

    ```
    ptonum postprocess acc.npy --mode VREQ8 --scale-tile scales.npy \\
        --offset-tile offsets.npy --scale-rounding rne --sat
    ```

    The same from the 32-bit B.FPATR word and a 1 x N U64 tile of per-column quantization words:

    ```
    ptonum postprocess acc.npy --attributes 0x08842023 \\
        --quant-tile qwords.npy --sat
    ```

    An FP32 tile dumped as raw little-endian bits, to E4M3 with GroupMax of |acc| over 32 columns:

    ```
    ptonum postprocess acc.bin --dtype uint32 --shape 128x256 \\
        --acc-type FP32 --mode QF322FP8_PRE --scale 0.5 --group-n 32 \\
        --group-max --max-abs --bin
    ```

    Shift an S32 tile right by 4 bits to S16 (mode 13):

    ```
    ptonum postprocess acc.npy --mode SHIFTS322S16 --shift 4
    ```

    **Outputs** (in --out-dir, created when missing, named after ACC; `z.npz:acc` and `z.npz --key acc`
    both give STEM `z.acc`): `STEM.d.npy` holds the D encodings at the destination
    width (uint8 for S8/S4X2/E4M3/HiF8, uint16 for FP16/BF16/S16, uint32 for FP32/S32/U32; an S4X2
    element is its low nibble); `STEM.row_max.npy` (M x 1) and `STEM.group_max.npy`
    (M x ceil(N/GroupN)) hold uint32 encodings of the accumulator type; S4X2 also gets
    `STEM.d_packed.npy` (M x ceil(N/2) bytes, even column in the low nibble). `--bin` writes each
    also as a raw little-endian `.bin`. `STEM.flags.json` records the sticky flags (integer, and
    names as printed: `OF|NX`), the B.FPATR word and fields, the rounding mode the conversion used
    (`rmode`: NONE resolved to RNE, or the mode's fixed rounding), Sat, B.DATR as given (`datr`),
    the types, the engine, the shapes and the parameter words (`parameters`): the same keys and values as a
    chunked run's Zarr attributes. Nothing is written
    when the operation is rejected. The outputs of a STEM are always one run's: an earlier run's
    `STEM.*` outputs that this run does not write (e.g. `STEM.row_max.npy` of a run with `--row-max`,
    `.bin` files, a chunked run's `STEM.zarr`) are removed in the same all-or-nothing step that
    publishes the new ones, and the summary says so; only what an earlier ptonum run recorded writing
    (its `STEM.flags.json` files, a Zarr group marked producer ptonum) is removed, never a file or
    directory that merely has such a name. A file this run would write that exists and that no earlier ptonum run
    recorded writing (a device dump saved as `acc.d_packed.bin`) is never replaced: the run is refused
    (exit 2) before anything is written.
    """
    with errors_to_exit("postprocess"):
        if not accs:
            # every option given on the command line but these describes an ACC run (--out-dir, --bin and
            # --sat were silently ignored by the example, which writes nothing)
            ctx = _click.get_current_context()
            given = [p.opts[0] for p in ctx.command.params
                     if p.name not in ("accs", "engine", "plot", "progress") and p.opts
                     and _given(ctx.get_parameter_source(p.name or ""))]
            if given:
                raise UsageError(f"{given[0]} needs an ACC input file (run without options for the bundled example)")
            plot = options["plot"]
            if plot is not None:
                from ._plot import check_plot_path

                check_plot_path(plot)  # before any work
            _run_example(out_console(), options["engine"], plot)
            return
        if options.pop("plot") is not None:
            raise UsageError("--plot draws the bundled example (run without ACC); for a tile against a device "
                             "dump, ptonum compare --plot draws the mismatches")
        if chunks is not None:
            raw = [a for a in accs if Path(split_key(a)[0]).suffix.lower() in (".bin", ".npz")]
            if raw:
                raise UsageError(f"--chunks applies to a .npy or Zarr ACC, not {raw[0]} (a .bin or .npz is read whole; "
                                 "convert it to .npy or Zarr to read it chunk by chunk)")
        scale_options = {"chunks": chunks, "workers": workers, "scheduler": scheduler}
        if wants_scale_out(accs, scale_options):
            code = run_postprocess(TextOut(), accs, options, chunks=chunks, workers=workers, scheduler=scheduler,
                                   fail_fast=fail_fast, run_file=run_file, fields_text=fields_text,
                                   allow_missing_chunks=allow_missing_chunks)
            if code:
                sys.exit(code)
            return
        if allow_missing_chunks:
            raise UsageError(f"--allow-missing-chunks applies to a Zarr ACC, not {accs[0]}")
        # one tile in this process: the kernels only where they pay for their start-up
        with memory_errors_name(accs[0]), kernels_from(ONE_SHOT_KERNEL_MIN_ELEMENTS):
            _run_file(TextOut(), acc=accs[0], **options)


def _given(source: Any) -> bool:
    """Was an option set by the user (command line or environment), not left at its default?"""
    return source is ParameterSource.COMMANDLINE or source is ParameterSource.ENVIRONMENT


def fields_text(attrs: Any) -> str:
    """The B.FPATR fields with their names, e.g. ``PreQuantMode=VREQ8 ReluMode=RELU GroupN=0 RowMaxEn=1 ...``."""
    return (f"PreQuantMode={attrs.pre_quant_mode.name} ReluMode={attrs.relu_mode.name} GroupN={attrs.group_n} "
            f"RowMaxEn={int(attrs.row_max_en)} GroupMaxEn={int(attrs.group_max_en)} "
            f"RowMaxInit={int(attrs.row_max_init)} MaxAbsEn={int(attrs.max_abs_en)}")


def _range_text(values: np.ndarray, integer: bool) -> Optional[str]:
    v = np.asarray(values)
    if integer:
        return f"{int(v.min())} .. {int(v.max())}" if v.size else None
    f = v.astype(np.float64)
    fin = np.isfinite(f)
    return f"{np.min(f[fin]):.6g} .. {np.max(f[fin]):.6g}" if fin.any() else None


def _summary_json(res: Any, call: Any, acc_shape: Tuple[int, int], written: List[str], engine: str,
                  source: str, key: Optional[str]) -> str:
    """``STEM.flags.json``: :func:`ptonum.fpatr.tile.run_record` (the keys and values of a chunked
    run's Zarr attributes) plus the ``source`` (the ACC file's absolute path, as a chunked run's Zarr
    attributes name it) and ``source_key`` (the ``.npz`` member, else null), ``acc_sha256`` (SHA-256 of
    the ACC as read: its m x n elements row by row as little-endian 4-byte words, whatever the file's
    byte order or layout), the ``shapes`` of ACC and the outputs, the ``parameters`` (the words
    of the call, :meth:`TileCall.parameter_record`) and the ``files`` written."""
    import hashlib  # (here, not at the top: only a run that writes its record needs it)

    from ..fpatr.tile import run_record

    doc = run_record(call.attributes, acc_type=res.acc_type, dst_type=res.dst_type, rmode=call.rmode, sat=call.sat,
                     flags=res.flags, engine=engine)
    path_text, inline_key = split_key(source)
    doc["source"] = os.path.abspath(path_text)
    doc["source_key"] = key or inline_key or None
    acc = np.ascontiguousarray(call.acc)
    doc["acc_sha256"] = hashlib.sha256(acc.astype(acc.dtype.newbyteorder("<"), copy=False).tobytes()).hexdigest()
    doc["shapes"] = {"acc": list(acc_shape), "d": list(res.d_bits.shape),
                     "row_max": None if res.row_max_bits is None else list(res.row_max_bits.shape),
                     "group_max": None if res.group_max_bits is None else list(res.group_max_bits.shape)}
    doc["parameters"] = call.parameter_record()
    doc["files"] = written
    return json.dumps(doc, indent=2) + "\n"


def run_file(console: TextOut, **options: Any) -> Dict[str, Any]:
    """The single-file path (read ACC whole, post-process, write STEM.* outputs, print the summary
    lines on ``console``); also what each in-memory file of a batch runs.  Returns a summary row: ``shape``,
    ``acc_type``, ``dst_type``, ``flags`` and the ``outputs`` written.  Raises the model's typed
    errors and :class:`UsageError`; nothing is written then."""
    return _run_file(console, **options)


def _field_outputs(attrs: Any) -> List[str]:
    """The output kinds beyond ``d`` that a run with B.FPATR fields ``attrs`` writes: ``row_max``
    (RowMaxEn), ``group_max`` (GroupMaxEn), ``d_packed`` (the mode's destination is S4X2; a reserved
    mode adds none, the run refuses it)."""
    from ..datatypes import TileDataType
    from ..errors import PtonumError
    from ..fpatr.attributes import output_type

    kinds = [k for k, on in (("row_max", attrs.row_max_en), ("group_max", attrs.group_max_en)) if on]
    try:
        packed = output_type(attrs.pre_quant_mode) is TileDataType.S4X2
    except PtonumError:
        packed = False
    return kinds + (["d_packed"] if packed else [])


def _run_call(call: Any, engine: str, m: int, show: bool) -> Any:
    """``call.run``, with the progress of the rows on stderr when ``show`` (:func:`progress_report`)."""
    with progress_report("post-processing rows", show, m) as cb:
        return call.run(engine=engine, progress=cb) if cb is not None else call.run(engine=engine)


def _run_file(console: TextOut, *, acc: str, key: Optional[str], bin_dtype: Optional[str], bin_shape: Optional[str],
              acc_type: Optional[str], attributes_word: Optional[str], mode: Optional[str], relu: Optional[str],
              group_n: Optional[int], row_max: bool, group_max: bool, row_max_init: bool, max_abs: bool,
              rmode: str, sat: bool, scale: Optional[str], offset: int, scale_rounding: str,
              shift: Optional[int], quant_param: Optional[str], quant_tile: Optional[str], alpha: Optional[str],
              relu_param: Optional[str], relu_tile: Optional[str], row_max_in: Optional[str], engine: str,
              out_dir: str, write_bin: bool, progress: Optional[bool], scale_tile: Optional[str] = None,
              offset_tile: Optional[str] = None, alpha_tile: Optional[str] = None) -> Dict[str, Any]:
    out_path = output_dir("--out-dir", out_dir)  # refused before any work (not a directory, not writable)
    stem = output_stem(acc, key)
    refuse_inputs_among_outputs(out_path, stem, [acc, quant_tile, relu_tile, row_max_in, scale_tile, offset_tile,
                                                 alpha_tile])
    # before any work: an earlier run's output made read-only, or a pipe/device where an output goes
    refuse_protected_outputs(out_path, stem, [f"{stem}.d.npy", f"{stem}.flags.json"]
                             + ([f"{stem}.d.bin"] if write_bin else []))
    call = build_tile_call(acc, key=key, bin_dtype=bin_dtype, bin_shape=bin_shape, acc_type=acc_type,
                           attributes_word=attributes_word, mode=mode, relu=relu, group_n=group_n,
                           row_max=row_max, group_max=group_max, row_max_init=row_max_init, max_abs=max_abs,
                           rmode=rmode, sat=sat, scale=scale, offset=offset, scale_rounding=scale_rounding,
                           quant_param=quant_param, quant_tile=quant_tile, alpha=alpha, relu_param=relu_param,
                           relu_tile=relu_tile, row_max_in=row_max_in, shift=shift, scale_tile=scale_tile,
                           offset_tile=offset_tile, alpha_tile=alpha_tile)
    attrs = call.attributes
    m, n = call.acc.shape
    # the outputs this call's fields add (RowMaxOut, GroupMaxOut, the packed S4X2 D), checked as the
    # three above before any work: a pipe or a write-protected file there is refused now, not after the run
    refuse_protected_outputs(out_path, stem, [f"{stem}.{k}.{e}" for k in _field_outputs(attrs)
                                              for e in (("npy", "bin") if write_bin else ("npy",))])

    # ---- run (progress bar on large inputs; a note just before a kernel compiles)
    show = progress if progress is not None else (m * n > PROGRESS_ELEMENTS and stderr_is_terminal())
    with warn_if_cold(m * n, engine):
        res = _run_call(call, engine, m, show)

    # ---- outputs, only after success
    files: Dict[str, np.ndarray] = {f"{stem}.d": np.asarray(res.d_bits)}
    if res.row_max_bits is not None:
        files[f"{stem}.row_max"] = np.asarray(res.row_max_bits)
    if res.group_max_bits is not None:
        files[f"{stem}.group_max"] = np.asarray(res.group_max_bits)
    if res.dst_type.name == "S4X2":
        files[f"{stem}.d_packed"] = np.asarray(res.s4x2_packed())
    names = [f"{k}.npy" for k in files] + ([f"{k}.bin" for k in files] if write_bin else [])
    summary_name = f"{stem}.flags.json"
    # one run at a time publishes in out_path (another process may be writing the same STEM there):
    # what an earlier run wrote is read, and this run's outputs put in place, under the lock
    with output_directory_lock(out_path):
        refuse_foreign_files(out_path, stem, names + [summary_name])  # never replace a file ptonum did not write
        # an earlier run's outputs of this stem that this run does not write go away with the commit
        stale = stale_outputs(out_path, stem, names + [summary_name])
        written, removed = _write_outputs(out_path, files, write_bin,
                                          {summary_name: _summary_json(res, call, (m, n), names + [summary_name],
                                                                       engine, acc, key)}, stale)

    # ---- summary
    d = res.decode()
    d_int = res.dst_type.is_integer
    rng = _range_text(d, d_int) or "no finite values"
    specials = 0 if d_int else int(d.size - np.count_nonzero(np.isfinite(d)))
    acc_int = res.acc_type.is_integer
    console.print(f" (B.FPATR word {attrs.word:#010x}), {rmode_text(attrs, call.rmode)}, Sat={int(bool(sat))}, "
                  f"engine {engine}", head=fields_text(attrs))
    console.print(f"ACC  {m} x {n} {res.acc_type.name}")
    console.print(f"D    {m} x {n} {res.dst_type.name} ({res.d_bits.dtype} encodings), values {rng}"
                  + (f", {specials} Inf/NaN" if specials else ""))
    if res.row_max_bits is not None:
        r = _range_text(np.asarray(res.row_max), acc_int)
        console.print(f"RowMaxOut   {res.row_max_bits.shape[0]} x 1 {res.acc_type.name}"
                      + (f", values {r}" if r else ""))
    if res.group_max_bits is not None:
        g = _range_text(np.asarray(res.group_max), acc_int)
        console.print(f"GroupMaxOut {shape_text(res.group_max_bits.shape)} {res.acc_type.name} "
                      f"(GroupN {attrs.group_n})" + (f", values {g}" if g else ""))
    console.print(f"flags {res.flags:#04x} {flag_names(res.flags)}")
    console.print("wrote " + ", ".join(str(p) for p in written))
    if removed:
        console.print(f"removed an earlier run's outputs of {stem}: " + ", ".join(str(p) for p in removed))
    return {"shape": (m, n), "acc_type": res.acc_type.name, "dst_type": res.dst_type.name, "flags": int(res.flags),
            "outputs": [str(p) for p in written], "removed": [str(p) for p in removed]}
