"""Exhaustive sweeps: every input code of a range through the fast and the reference engine.

A sweep is split into partitions of consecutive codes; each partition is one
task (a Dask future on a cluster, or a call in this process) that runs both
engines on its codes and returns the number of inputs, of mismatches (bits or
flags differ) and the first mismatches.  Each finished partition is recorded
as a small JSON file in the state directory as soon as it completes, so a
restarted sweep (``resume=True``) runs only the partitions not recorded yet.

* TCVT to E8M0: every FP16/BF16 (2^16) or FP32 (2^32) source code in all seven
  rounding modes and both Sat values (an FP16 sweep is 65,536 x 7 x 2 = 917,504
  inputs).
* B.FPATR element post-process: every 32-bit accumulator code through one
  configuration (PreQuantMode, ReluMode, accumulator type, RMode, Sat and the
  scalar parameter words), checked at the call by the tile operation's own
  preflight (:func:`ptonum.fpatr.tile.preflight_shape`).

Source: ADR-0085 D183 ``ReferenceFloatToE8M0``; D176-D180
``TileProfileMatrixPostProcessWithFlags`` (the functions swept; no spec
counterpart for the sweep itself).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .._util import int_text, write_protected_mode
from ..errors import UsageError
from ..publish import Publication, PublishError

if TYPE_CHECKING:  # annotations only: the fpatr modules are imported where a sweep runs
    from ..fpatr.params import ParamWordLike

__all__ = ["Sweep", "SweepReport", "TCVT_RMODES", "TCVT_PARTITION", "POSTPROCESS_PARTITION", "tcvt_sweep", "postprocess_sweep", "run_partition", "run_sweep",
           "parse_range", "report_json", "check_state_dir", "open_state", "SweepState"]

#: the seven B.DATR rounding modes a TCVT sweep covers (NONE resolves to RNE and is not repeated)
TCVT_RMODES = ("RNE", "RTZ", "RTM", "RTP", "RNA", "RTO", "RHB")


@dataclass(frozen=True)
class Sweep:
    """One sweep: the operation, its configuration (JSON-able), the code range ``[lo, hi)`` and the
    partition size.  Made by :func:`tcvt_sweep` or :func:`postprocess_sweep` (which check it)."""

    op: str
    config: Dict[str, Any]
    lo: int
    hi: int
    partition: int

    @property
    def variants(self) -> int:
        """Inputs per code: 7 x 2 for TCVT, 1 for the post-process."""
        return len(TCVT_RMODES) * 2 if self.op == "tcvt" else 1

    @property
    def inputs(self) -> int:
        return (self.hi - self.lo) * self.variants

    def partitions(self) -> List[Tuple[int, int]]:
        return [(a, min(self.hi, a + self.partition)) for a in range(self.lo, self.hi, self.partition)]

    def identity(self) -> Dict[str, Any]:
        return {"op": self.op, "config": self.config, "lo": self.lo, "hi": self.hi, "partition": self.partition}

    def key(self) -> str:
        """A short hash of :meth:`identity` (names the default state directory)."""
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:12]

    def describe(self) -> str:
        n = self.hi - self.lo
        if self.op == "tcvt":
            return (f"TCVT {self.config['src_type']} -> E8M0 codes [{self.lo:#x}, {self.hi:#x}): {n:,} codes x "
                    f"{len(TCVT_RMODES)} rounding modes x 2 Sat = {self.inputs:,} inputs")
        c = self.config
        return (f"B.FPATR element {c['pre_quant_mode']} ReluMode={c['relu_mode']} acc {c['acc_type']} "
                f"RMode={c['rmode']} Sat={int(c['sat'])} quant_param={c['quant_param']:#x} "
                f"relu_param={c['relu_param']:#x}, codes [{self.lo:#x}, {self.hi:#x}): {self.inputs:,} inputs")


def parse_range(text: Optional[str], width: int) -> Tuple[int, int]:
    """``LO:HI`` (decimal or 0x-hex, HI exclusive; either side may be empty) inside ``[0, 2**width)``.

    Raises :class:`UsageError` naming ``--range`` otherwise.
    """
    full = 1 << width
    if text is None:
        return 0, full
    lo_s, sep, hi_s = str(text).partition(":")
    if not sep:
        raise UsageError(f"--range = {text!r}: expected LO:HI (HI exclusive), e.g. 0x3c00:0x4000")
    try:
        lo = int_text(lo_s) if lo_s.strip() else 0
        hi = int_text(hi_s) if hi_s.strip() else full
    except ValueError:
        raise UsageError(f"--range = {text!r}: LO and HI are integers (decimal or 0x-hex)") from None
    if not 0 <= lo < hi <= full:
        raise UsageError(f"--range = {text!r}: need 0 <= LO < HI <= {full:#x} ({width}-bit codes)")
    return lo, hi


#: default codes per partition, chosen so that one partition is about half a second of one core (both
#: engines; measured 2026-11-30: TCVT ~7M inputs/s, i.e. 2^18 FP32 codes x 14 (RMode, Sat) in ~0.55 s and
#: ~70 MiB; B.FPATR element ~200K inputs/s, 2^17 codes in ~0.6 s): a task's scheduling cost (milliseconds
#: on a cluster, ~50 ms on a loaded 2-core machine) stays small against its work, and a 2^32 sweep is
#: 2^14 (TCVT) or 2^15 (post-process) partition records
TCVT_PARTITION = 1 << 18
POSTPROCESS_PARTITION = 1 << 17


def _check_partition(partition: int) -> int:
    if isinstance(partition, bool) or not isinstance(partition, int) or partition < 1:
        raise UsageError(f"--partition-size = {partition!r}: expected a positive number of codes")
    return partition


def tcvt_sweep(src_type: Any, *, lo: Optional[int] = None, hi: Optional[int] = None,
               partition: int = TCVT_PARTITION) -> Sweep:
    """A TCVT-to-E8M0 sweep over source codes ``[lo, hi)`` (default: every code of the type).

    Raises :class:`UnsupportedConversionError` / :class:`UsageError` as :func:`ptonum.tcvt.to_e8m0`
    for the source type, and :class:`UsageError` for a range outside the type's codes.
    """
    from ..tcvt import to_e8m0

    to_e8m0(np.zeros(0, np.uint32), src_type=src_type)  # checks the source type
    from ..formats import parse_data_type

    t = parse_data_type(src_type, "src_type")
    width = 32 if t.name == "FP32" else 16
    a, b = parse_range(None, width)
    lo = a if lo is None else lo
    hi = b if hi is None else hi
    if not 0 <= lo < hi <= (1 << width):
        raise UsageError(f"range [{lo:#x}, {hi:#x}) is not inside the {width}-bit codes of {t.name}")
    return Sweep("tcvt", {"src_type": t.name}, lo, hi, _check_partition(partition))


def postprocess_sweep(*, pre_quant_mode: Any, relu_mode: Any = "NONE", acc_type: Any, rmode: Any = "NONE",
                      sat: Any = False, quant_param: Optional[ParamWordLike] = None,
                      relu_param: Optional[ParamWordLike] = None,
                      lo: int = 0, hi: int = 1 << 32, partition: int = POSTPROCESS_PARTITION) -> Sweep:
    """A B.FPATR element sweep over accumulator codes ``[lo, hi)`` for one configuration.

    ``quant_param`` is the one word every element uses (a vector mode gets it in every column),
    ``relu_param`` the activation word of ReluMode 2/3.  The configuration is checked by the tile
    operation's preflight on a 1 x 1 tile (same errors as :func:`ptonum.fpatr.postprocess`).
    """
    from ..fpatr import FPATRAttributes, mode_info
    from ..fpatr.tile import preflight_shape

    attrs = FPATRAttributes.from_fields(pre_quant_mode=pre_quant_mode, relu_mode=relu_mode)
    info = mode_info(attrs.pre_quant_mode)
    kw: Dict[str, Any] = {}
    if quant_param is not None:
        kw["quant_tile" if info.parameter == "vector" else "quant_param"] = (
            np.full((1, 1), quant_param, np.uint64) if info.parameter == "vector" else quant_param)
    if relu_param is not None:
        kw["relu_tile" if int(attrs.relu_mode) == 3 else "relu_param"] = (
            np.full((1, 1), relu_param, np.uint64) if int(attrs.relu_mode) == 3 else relu_param)
    plan = preflight_shape((1, 1), np.dtype(np.uint32), acc_type=acc_type, attributes=attrs, rmode=rmode, sat=sat,
                           **kw)
    if not 0 <= lo < hi <= (1 << 32):
        raise UsageError(f"range [{lo:#x}, {hi:#x}) is not inside the 32-bit accumulator codes")
    config = {"pre_quant_mode": attrs.pre_quant_mode.name, "relu_mode": int(attrs.relu_mode),
              "acc_type": plan.acc_type.name, "rmode": plan.rmode.name, "sat": bool(plan.sat),
              "quant_param": int(plan.quant_words.reshape(-1)[0]), "relu_param": int(plan.relu_words.reshape(-1)[0])}
    return Sweep("postprocess", config, lo, hi, _check_partition(partition))


# ---------------------------------------------------------------------------
# One partition (runs on a worker)


def run_partition(sweep: Sweep, lo: int, hi: int, max_report: int = 5) -> Dict[str, Any]:
    """Both engines on codes ``[lo, hi)``: ``{"lo", "hi", "inputs", "mismatches", "first": [...]}``.

    Each reported mismatch holds the code, the variant (``rmode``/``sat`` for TCVT) and both
    engines' bits and flags.
    """
    first: List[Dict[str, Any]] = []
    mismatches = 0
    if sweep.op == "tcvt":
        from ..tcvt import to_e8m0

        src = sweep.config["src_type"]
        codes = np.arange(lo, hi, dtype=np.uint64).astype(np.uint32 if src == "FP32" else np.uint16)
        for rmode in TCVT_RMODES:
            for sat in (False, True):
                fb, ff = to_e8m0(codes, src_type=src, rmode=rmode, sat=sat, engine="fast")
                rb, rf = to_e8m0(codes, src_type=src, rmode=rmode, sat=sat, engine="reference")
                bad = np.flatnonzero((fb != rb) | (ff != rf))
                mismatches += int(bad.size)
                for i in bad[:max(0, max_report - len(first))].tolist():
                    first.append({"code": int(codes[i]), "rmode": rmode, "sat": sat, "fast": [int(fb[i]), int(ff[i])],
                                  "reference": [int(rb[i]), int(rf[i])]})
    else:
        from ..fpatr.element import postprocess_element

        c = sweep.config
        codes = np.arange(lo, hi, dtype=np.uint64).astype(np.uint32)
        args = dict(pre_quant_mode=c["pre_quant_mode"], relu_mode=c["relu_mode"], acc_type=c["acc_type"],
                    quant_param=np.uint64(c["quant_param"]), relu_param=np.uint64(c["relu_param"]),
                    rmode=c["rmode"], sat=c["sat"])
        fb, ff = postprocess_element(codes, engine="fast", **args)
        rb, rf = postprocess_element(codes, engine="reference", **args)
        bad = np.flatnonzero((np.asarray(fb) != np.asarray(rb)) | (np.asarray(ff) != np.asarray(rf)))
        mismatches = int(bad.size)
        for i in bad[:max_report].tolist():
            first.append({"code": int(codes[i]), "fast": [int(fb[i]), int(ff[i])],
                          "reference": [int(rb[i]), int(rf[i])]})
    return {"lo": lo, "hi": hi, "inputs": (hi - lo) * sweep.variants, "mismatches": mismatches, "first": first}


# ---------------------------------------------------------------------------
# The whole sweep


@dataclass
class SweepReport:
    """The totals of a sweep over the partitions recorded so far."""

    sweep: Sweep
    state_dir: str
    inputs: int = 0
    mismatches: int = 0
    partitions_run: int = 0
    partitions_resumed: int = 0
    first: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.partitions_run + self.partitions_resumed == len(self.sweep.partitions())


def _part_name(lo: int, hi: int) -> str:
    return f"part-{lo:09x}-{hi:09x}.json"


def _record(state: Path, part: Dict[str, Any]) -> None:
    """Write one partition record whole or not at all (:class:`ptonum.publish.Publication`: no
    temporary left by a failure or a signal; errors name the record)."""
    with Publication() as pub:
        pub.write_text(state / _part_name(part["lo"], part["hi"]), json.dumps(part))


def check_state_dir(state_dir: Any) -> None:
    """Refuse a state directory a sweep must not write into (:class:`UsageError` naming it): an existing
    non-directory; a write-protected directory (no ``w`` bit for anyone: refused as root too, as ptonum
    refuses a write-protected output); an existing directory without a ``sweep.json`` that holds other
    entries (a sweep records its state in a directory of its own: it must not scatter its records
    among unrelated files).  A missing directory or an empty one is fine.

    Source: no spec counterpart (file handling).
    """
    import os

    state = Path(state_dir)
    if not state.exists():
        return
    if not state.is_dir():
        raise UsageError(f"--state = {state}: is not a directory")
    mode = write_protected_mode(state)
    if mode is not None:
        raise UsageError(f"--state = {state}: is a write-protected directory (mode {mode:04o}); make it writable "
                         "(chmod u+w) or choose another --state")
    if not (state / "sweep.json").exists():
        try:
            others = sorted(os.listdir(state))
        except OSError as exc:
            raise UsageError(f"--state = {state}: cannot be listed ({exc.strerror or exc})") from None
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            raise UsageError(f"--state = {state}: holds {shown} and no sweep.json: not a sweep's state "
                             "directory; a sweep records its state in a directory of its own: give a new or "
                             "empty --state DIR")


@dataclass(frozen=True)
class SweepState:
    """A sweep's state directory as :func:`open_state` found it, checked: ``path``; ``recorded``, does it
    already hold this sweep (its ``sweep.json``); ``done``, the partitions recorded there, by ``(lo, hi)``,
    which :func:`run_sweep` does not run again."""

    sweep: Sweep
    path: Path
    recorded: bool
    done: Dict[Tuple[int, int], Dict[str, Any]]


def _differences(recorded: Any, wanted: Any, where: str = "") -> List[str]:
    """``name: recorded -> asked`` for each value of a sweep identity that differs (nested in ``config``)."""
    if isinstance(recorded, dict) and isinstance(wanted, dict):
        out: List[str] = []
        for key in list(wanted) + [k for k in recorded if k not in wanted]:
            out += _differences(recorded.get(key), wanted.get(key), f"{where}.{key}" if where else str(key))
        return out
    if recorded == wanted:
        return []

    def show(v: Any) -> str:
        return f"{v:#x}" if isinstance(v, int) and not isinstance(v, bool) and where in ("lo", "hi") else repr(v)
    return [f"{where} {show(recorded)} (recorded) vs {show(wanted)} (asked)"]


def open_state(sweep: Sweep, state_dir: Any, resume: bool = False) -> SweepState:
    """Check the state directory ``state_dir`` for ``sweep`` and read the partitions recorded there, writing
    nothing (:func:`run_sweep` creates ``sweep.json`` when it starts).  The one check of a state directory:
    :func:`run_sweep` makes it, and the command line makes it before it prints anything or starts a cluster
    and hands the result to :func:`run_sweep`.

    Raises :class:`UsageError` naming the directory for one :func:`check_state_dir` refuses, an unreadable
    ``sweep.json``, one that records another sweep (saying what differs: ``hi 0x3f10 (recorded) vs 0x3f20
    (asked)``), and, without ``resume``, one that already holds partitions of this sweep.

    Source: no spec counterpart (file handling).
    """
    state = Path(state_dir)
    meta = state / "sweep.json"
    done: Dict[Tuple[int, int], Dict[str, Any]] = {}
    check_state_dir(state)
    if not meta.exists():
        return SweepState(sweep, state, False, done)
    try:
        recorded = json.loads(meta.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"--state = {state}: unreadable sweep.json ({exc})") from None
    diff = _differences(recorded, sweep.identity())
    if diff:
        raise UsageError(f"--state = {state}: holds another sweep: {'; '.join(diff)}; give the same options to "
                         "resume it, or choose another --state")
    parts = sorted(state.glob("part-*.json"))
    if parts and not resume:
        raise UsageError(f"--state = {state}: {len(parts)} partition(s) already recorded; pass --resume to "
                         "continue the sweep, or choose another --state")
    wanted = set(sweep.partitions())
    for p in parts:
        try:
            rec = json.loads(p.read_text())
            key = (int(rec["lo"]), int(rec["hi"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a damaged record: that partition runs again
        if key in wanted:
            done[key] = rec
    return SweepState(sweep, state, True, done)


def run_sweep(sweep: Sweep, *, state_dir: Any = None, resume: bool = False, state: Optional[SweepState] = None,
              client: Any = None, progress: Optional[Callable[[int, int], None]] = None,
              max_report: int = 5) -> SweepReport:
    """Run every partition not yet recorded in ``state_dir`` and return the totals.

    ``state_dir`` (and ``resume``) is checked by :func:`open_state` first; or give ``state``, what
    :func:`open_state` returned for this sweep (checked already, e.g. before a cluster was started),
    instead of both.  ``client``: a ``distributed.Client`` (one future per partition, recorded as it
    completes) or ``None`` (this process, one partition after the other).  ``progress(inputs_done,
    inputs_total)`` counts resumed partitions as done.  A sweep interrupted (Ctrl-C, a lost worker) keeps
    every partition recorded so far; ``resume=True`` continues it.  Without ``resume`` a state directory
    that already holds partitions of this sweep is refused (:class:`UsageError`), as is one that holds
    another sweep, one that is write-protected, and an existing one that holds other files but no sweep
    (:func:`check_state_dir`).
    """
    if state is None:
        if state_dir is None:
            raise UsageError("run_sweep: give state_dir, the directory recording the sweep's partitions")
        state = open_state(sweep, state_dir, resume)
    elif state_dir is not None or resume or state.sweep != sweep:
        raise UsageError("run_sweep: give state_dir (and resume) or state, the result of open_state for this "
                         "sweep, not both")
    path, done = state.path, state.done
    if not state.recorded:
        try:
            with Publication() as pub:  # whole or not at all: a cut sweep.json would refuse every --resume
                pub.write_text(path / "sweep.json", json.dumps(sweep.identity(), sort_keys=True))
        except PublishError as exc:
            raise UsageError(f"--state = {path}: cannot create ({exc})") from None
    report = SweepReport(sweep, str(path), partitions_resumed=len(done))
    todo = [p for p in sweep.partitions() if p not in done]
    total = sweep.inputs
    inputs_done = sum(int(r["inputs"]) for r in done.values())
    results = dict(done)
    if progress is not None:
        progress(inputs_done, total)

    def finished(part: Dict[str, Any]) -> None:
        nonlocal inputs_done
        _record(path, part)
        results[(part["lo"], part["hi"])] = part
        report.partitions_run += 1
        inputs_done += int(part["inputs"])
        if progress is not None:
            progress(inputs_done, total)

    if client is None:
        for lo, hi in todo:
            finished(run_partition(sweep, lo, hi, max_report))
    else:
        from distributed import as_completed

        futures = [client.submit(run_partition, sweep, lo, hi, max_report, pure=False) for lo, hi in todo]
        try:
            for fut in as_completed(futures):
                finished(fut.result())
        except BaseException:
            client.cancel([f for f in futures if not f.done()])
            raise
    for key in sorted(results):
        r = results[key]
        report.inputs += int(r["inputs"])
        report.mismatches += int(r["mismatches"])
        for m in r["first"]:
            if len(report.first) < max_report:
                report.first.append(m)
    return report


def report_json(report: SweepReport) -> str:
    """The report as JSON text (sweep identity, totals, first mismatches)."""
    return json.dumps({"sweep": report.sweep.identity(), "inputs": report.inputs, "mismatches": report.mismatches,
                       "partitions_run": report.partitions_run, "partitions_resumed": report.partitions_resumed,
                       "complete": report.complete, "first": report.first}, indent=2)

