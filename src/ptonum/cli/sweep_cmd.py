"""``ptonum sweep``: every input code of a range through the fast and the reference engine.

``ptonum sweep tcvt --src-type FP16`` covers every FP16 source code in all 7 rounding
modes and both Sat values; ``ptonum sweep postprocess --mode ...`` every 32-bit
accumulator code through one B.FPATR configuration.  Work is split into
partitions recorded in a state directory as they finish (``--resume`` continues
an interrupted sweep); ``--workers``/``--scheduler`` spread the partitions over
Dask workers.  Exit status: 0 no mismatch, 1 a mismatch, 2 an error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import rich_click as click

from ..errors import UsageError
from ._common import ASCII_INT, AsciiIntRange, EXIT_MISMATCH, RMODE_HELP, errors_to_exit, missing_command, \
    out_console, output_dir, stderr_is_terminal
from ._scale_out import client_for, placement_options, task_progress


def _common_options(fn: Any) -> Any:
    fn = click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")(fn)
    fn = click.option("--progress/--no-progress", default=None,
                      help="Progress on stderr (default: on a terminal): a bar on a terminal; redirected, "
                           "--progress writes a plain line at each tenth of the work.")(fn)
    fn = click.option("--max-report", type=AsciiIntRange(min=0), default=5, show_default=True,
                      help="Mismatches listed (the first is explained step by step).")(fn)
    fn = placement_options(fn)
    fn = click.option("--resume", is_flag=True,
                      help="Continue the sweep recorded in --state (finished partitions are not run again).")(fn)
    fn = click.option("--state", "state_dir", default=None, metavar="DIR",
                      help="Directory recording finished partitions (default: OP-HASH in ptonum/sweeps under "
                           "$XDG_STATE_HOME, else under ~/.local/state; one per sweep, so --resume finds it from "
                           "any directory).")(fn)
    fn = click.option("--partition-size", type=AsciiIntRange(min=1), default=None,
                      help="Codes per partition (one task each; default 262144 for tcvt, 131072 for postprocess: "
                           "about half a second of one core each).")(fn)
    fn = click.option("--range", "code_range", metavar="LO:HI", default=None,
                      help="Codes LO (inclusive) to HI (exclusive), decimal or 0x-hex (default: every code).")(fn)
    return fn


@click.group("sweep", invoke_without_command=True, subcommand_metavar="COMMAND [ARGS]...")  # a command is required
@click.pass_context
def command(ctx: click.Context) -> None:
    """Run every input code of a range through both engines and report the mismatches (exhaustive checks)."""
    if ctx.invoked_subcommand is None:  # bare `ptonum sweep`: a usage error (help on stderr, status 2)
        missing_command(ctx)


@command.command("tcvt")
@click.option("--src-type", required=True, type=click.Choice(["FP16", "BF16", "FP32"], case_sensitive=False),
              help="Source type (FP16/BF16: 65,536 codes; FP32: 2^32 codes).")
@_common_options
def tcvt(src_type: str, **options: Any) -> None:
    """TCVT to E8M0: every source code x 7 rounding modes x 2 Sat values (FP16: 917,504 inputs).

    **Examples**

    ```
    ptonum sweep tcvt --src-type FP16 --workers 2
    ptonum sweep tcvt --src-type FP32 --range 0x3f000000:0x40000000 \\
        --scheduler tcp://host:8786 --state s1
    ptonum sweep tcvt --src-type FP32 --range 0x3f000000:0x40000000 \\
        --scheduler tcp://host:8786 --state s1 --resume
    ```
    """
    from ..dask.sweep import TCVT_PARTITION, parse_range, tcvt_sweep

    with errors_to_exit("sweep tcvt", translate=False):
        width = 32 if src_type.upper() == "FP32" else 16
        lo, hi = parse_range(options["code_range"], width)
        sw = tcvt_sweep(src_type.upper(), lo=lo, hi=hi, partition=options["partition_size"] or TCVT_PARTITION)
        _run("sweep tcvt", sw, options)


@command.command("postprocess")
@click.option("--mode", required=True, help="PreQuantMode name or code (e.g. REQ8, QF322FP8_PRE, 26).")
@click.option("--relu", default="NONE", show_default=True, help="ReluMode: NONE, RELU, LRELU or PRELU (or 0-3).")
@click.option("--acc-type", type=click.Choice(["FP32", "S32", "U32"], case_sensitive=False), default=None,
              help="Accumulator type (default: the mode's first accumulator class).")
@click.option("--rmode", default="NONE", show_default=True, help=RMODE_HELP)
@click.option("--sat", is_flag=True, help="B.DATR Sat=1.")
@click.option("--scale", default=None, metavar="NUMBER",
              help="Quantization scale as a decimal (read exactly, converted to FP19; see --scale-rounding).")
@click.option("--offset", type=ASCII_INT, default=0, show_default=True, help="Signed offset with --scale.")
@click.option("--shift", type=AsciiIntRange(1, 16), default=None, help="Shift modes 12/13: right shift 1..16.")
@click.option("--quant-param", metavar="WORD", default=None, help="Raw 64-bit quantization word.")
@click.option("--alpha", default=None, metavar="NUMBER",
              help="LReLU/PReLU multiplier as a decimal (read exactly, converted to FP19; see --scale-rounding).")
@click.option("--scale-rounding", type=click.Choice(["exact", "rne"]), default="exact", show_default=True,
              help="exact: refuse a scale or alpha FP19 cannot hold; rne: round it once to FP32 and then to FP19 "
                   "(FP32ToFP19, nearest even), as postprocess does.")
@click.option("--relu-param", metavar="WORD", default=None, help="Raw activation word (FP19 in bits [18:0]).")
@_common_options
def postprocess(mode: str, relu: str, acc_type: Optional[str], rmode: str, sat: bool, scale: Optional[str],
                offset: int, shift: Optional[int], quant_param: Optional[str], alpha: Optional[str],
                scale_rounding: str, relu_param: Optional[str], **options: Any) -> None:
    """B.FPATR element post-process: every 32-bit accumulator code of --range through one configuration.

    All 2^32 codes by default (see docs/scale-out.md for what that costs); the configuration is
    checked like the tile operation before any work.

    **Example**

    ```
    ptonum sweep postprocess --mode REQ8 --scale 0.5 --offset -3 --sat \\
        --range 0:0x1000000 --workers 2
    ```
    """
    from ..dask.sweep import POSTPROCESS_PARTITION, parse_range, postprocess_sweep
    from ..fpatr import mode_info, shift_param_word
    from ._common import parse_rmode
    from ._tile_args import alpha_word, int_word, mode_fields, scale_word

    with errors_to_exit("sweep postprocess"):
        mode_value, relu_value = mode_fields(mode, relu)
        info = mode_info(mode_value)
        given = [o for o, v in (("--scale", scale), ("--shift", shift), ("--quant-param", quant_param)) if v is not None]
        if len(given) > 1:
            raise UsageError(f"{given[0]} and {given[1]} both give the quantization parameter")
        qword: Optional[int] = None
        if scale is not None:
            qword = scale_word(scale, offset, mode_value, scale_rounding)
        elif shift is not None:
            qword = int(shift_param_word(shift=shift))
        elif quant_param is not None:
            qword = int_word("--quant-param", quant_param)
        if alpha is not None and relu_param is not None:
            raise UsageError("--alpha and --relu-param both give the activation parameter")
        rword = (alpha_word(alpha, scale_rounding) if alpha is not None
                 else int_word("--relu-param", relu_param) if relu_param is not None else None)
        lo, hi = parse_range(options["code_range"], 32)
        sw = postprocess_sweep(pre_quant_mode=mode_value, relu_mode=relu_value,
                               acc_type=acc_type.upper() if acc_type else info.accumulator_types[0].name,
                               rmode=parse_rmode(rmode), sat=sat, quant_param=qword, relu_param=rword, lo=lo, hi=hi,
                               partition=options["partition_size"] or POSTPROCESS_PARTITION)
        _run("sweep postprocess", sw, options)


def default_state_dir(sw: Any) -> Path:
    """Where a sweep without ``--state`` is recorded: ``$XDG_STATE_HOME/ptonum/sweeps/OP-HASH``
    (``~/.local/state/...`` when XDG_STATE_HOME is unset or not absolute), one directory per sweep
    identity, so ``--resume`` finds it from any directory.  A ``ptonum-sweep-OP-HASH`` holding a sweep in
    the current directory (the default of earlier versions) is used instead, so it can be resumed."""
    import os

    legacy = Path(f"ptonum-sweep-{sw.op}-{sw.key()}")
    if (legacy / "sweep.json").is_file():
        return legacy
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        try:
            home = Path.home()
        except (RuntimeError, KeyError):
            home = None
        if home is None or not str(home).strip():
            raise UsageError("--state: not given, and no home directory for the default "
                             "(~/.local/state/ptonum/sweeps); give --state DIR")
        base = str(home / ".local" / "state")
    return Path(base) / "ptonum" / "sweeps" / f"{sw.op}-{sw.key()}"


def _run(name: str, sw: Any, options: Any) -> None:
    from ..conformance.explain import explain_postprocess, explain_tcvt
    from ..dask.sweep import open_state, report_json, run_sweep

    console = out_console()
    state = options["state_dir"] or str(default_state_dir(sw))
    try:  # a directory that cannot be created (an ancestor not a directory, or not writable): before any output
        output_dir("--state", state)
    except UsageError as exc:
        if options["state_dir"]:
            raise
        raise UsageError(str(exc).replace("--state = ", "--state (not given; the default state directory) = ", 1)
                         + "; give --state DIR") from None
    opened = open_state(sw, state, options["resume"])  # checked before anything is printed or the cluster starts
    if options["resume"] and not opened.recorded:
        raise UsageError(f"--resume: --state = {state} holds no sweep to resume (no {Path(state) / 'sweep.json'}); "
                         "run without --resume to start one, or give the --state of the sweep to continue")
    if options["scheduler"] is not None or options["workers"] is not None:
        from ..dask.cluster import require_dask

        require_dask()  # a missing dask extra: named before anything is printed
    if not options["as_json"]:
        console.print(f"[bold]{sw.describe()}[/bold]", highlight=False, soft_wrap=True)
        console.print(f"{len(sw.partitions())} partition(s) of {sw.partition} codes; state in {state}",
                      highlight=False, soft_wrap=True, markup=False)
    show = options["progress"] if options["progress"] is not None else stderr_is_terminal()
    with client_for(name, options["scheduler"], options["workers"]) as client:
        from .compile_cmd import compile_note_for

        # each partition runs both engines on up to sw.partition codes (ptonum.dask.sweep.run_partition)
        cold = compile_note_for(client, min(sw.partition, sw.hi - sw.lo), "fast",
                                ("tcvt",) if sw.op == "tcvt" else ("postprocess",))
        with cold, task_progress("inputs", bool(show)) as cb:
            rep = run_sweep(sw, state=opened, client=client, progress=cb, max_report=options["max_report"])
    if options["as_json"]:
        console.print(report_json(rep), highlight=False, markup=False, soft_wrap=True)
    else:
        ok = rep.mismatches == 0
        console.print(f"inputs {rep.inputs:,}, mismatches {rep.mismatches:,} "
                      f"({rep.partitions_run} partition(s) run, {rep.partitions_resumed} resumed)",
                      highlight=False, style="green" if ok else "red")
        for m in rep.first:
            variant = f" rmode={m['rmode']} sat={int(m['sat'])}" if "rmode" in m else ""
            console.print(f"  code {m['code']:#x}{variant}: fast {m['fast'][0]:#x} flags {m['fast'][1]:#04x}, "
                          f"reference {m['reference'][0]:#x} flags {m['reference'][1]:#04x}", highlight=False)
        if rep.first:
            m = rep.first[0]
            c = sw.config
            ex = (explain_tcvt(m["code"], src_type=c["src_type"], rmode=m["rmode"], sat=m["sat"]) if sw.op == "tcvt"
                  else explain_postprocess(m["code"], pre_quant_mode=c["pre_quant_mode"], relu_mode=c["relu_mode"],
                                           acc_type=c["acc_type"], quant_param=c["quant_param"],
                                           relu_param=c["relu_param"], rmode=c["rmode"], sat=c["sat"]))
            console.print(str(ex), highlight=False, markup=False, soft_wrap=True)
    if rep.mismatches:
        sys.exit(EXIT_MISMATCH)
