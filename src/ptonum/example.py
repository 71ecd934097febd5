"""The bundled example: a real model layer's accumulators, and what each destination costs.

``load_example()`` reads ``ptonum/data/example.npz`` (a 64-32-10 perceptron
trained on scikit-learn's ``load_digits``; see ``data/EXAMPLE.md``).
``RUNS`` lists the representative B.FPATR configurations on it and
``run_report()`` runs them through :func:`ptonum.fpatr.postprocess` and
measures each destination against the exact product the mode approximates:

* the exact reference of an element is ``select(acc) * scale + offset``: the
  accumulator value (S32 integer or exact FP32 value), replaced by 0 on the
  negative path when ReLU is on, times the FP19 scale, plus the offset.  The
  scales in the example have at most 11 significant bits, so this product is
  exact in float64 (FP32 24 bits or S32 31 bits, times 11 bits);
* error statistics: SQNR in dB (``10 log10(sum ref^2 / sum (d - ref)^2)``,
  ``inf`` when D is exact), the largest absolute error in destination units,
  and for the logits layer the top-1 agreement of D with the float model's
  logits (and accuracy against the true labels).

This module is a user of the model, not part of it: every destination value
comes from :func:`ptonum.fpatr.postprocess`.  Source of the semantics:
ADR-0085 D175-D181 (see :mod:`ptonum.fpatr.tile`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .errors import UsageError

__all__ = [
    "EXAMPLE_RESOURCE",
    "Example",
    "Run",
    "RunReport",
    "RUNS",
    "load_example",
    "run_arguments",
    "exact_reference",
    "run_one",
    "run_report",
    "sqnr_db",
]

EXAMPLE_RESOURCE = "example.npz"


class Example(Dict[str, np.ndarray]):
    """The arrays of ``example.npz`` by key (see ``data/EXAMPLE.md``) plus ``meta`` (a dict)."""

    meta: Dict[str, Any]


def load_example(path: Union[str, Path, None] = None) -> Example:
    """Load the bundled example (or an npz with the same keys at ``path``).

    Returns an :class:`Example`: a dict of numpy arrays (``acc_hidden_s32``
    int32 256x32, ``acc_logits_fp32`` float32 256x10, ``x_q``, ``w1_q``,
    scales, references...) with ``.meta`` the decoded JSON metadata.

    Raises :class:`UsageError` when the file cannot be read.
    """
    try:
        if path is None:
            ref = resources.files("ptonum").joinpath("data").joinpath(EXAMPLE_RESOURCE)
            with resources.as_file(ref) as p:
                with np.load(p, allow_pickle=False) as z:
                    arrays = {k: z[k] for k in z.files}
        else:
            with np.load(Path(path), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise UsageError(f"example: cannot read {path or EXAMPLE_RESOURCE}: {exc}") from None
    ex = Example(arrays)
    ex.meta = json.loads(str(arrays["meta"])) if "meta" in arrays else {}
    return ex


@dataclass(frozen=True)
class Run:
    """One representative post-process of the example.

    ``acc_key`` names the accumulator array; ``scale_key``/``offset_key`` the
    parameters (a per-column array for a vector mode, a scalar for a scalar
    mode; ``None`` for a mode without parameter).  ``layer`` is ``"hidden"``
    or ``"logits"`` (logits runs also report top-1 agreement).
    """

    name: str
    layer: str
    acc_key: str
    mode: str
    relu: str = "NONE"
    scale_key: Optional[str] = None
    offset_key: Optional[str] = None
    row_max: bool = False
    group_max: bool = False
    group_n: int = 0
    max_abs: bool = False
    rmode: str = "NONE"
    sat: bool = True
    note: str = ""

    @property
    def acc_type(self) -> str:
        return "S32" if self.acc_key.endswith("s32") else "FP32"


RUNS: Sequence[Run] = (
    Run("hidden VREQ8+ReLU+RowMax", "hidden", "acc_hidden_s32", "VREQ8", relu="RELU",
        scale_key="scale_vreq8", row_max=True, note="int8 requantization of a ReLU layer"),
    Run("hidden REQ8 asymmetric", "hidden", "acc_hidden_s32", "REQ8",
        scale_key="scale_req8", offset_key="offset_req8", note="scalar scale + S9 offset onto -128..127"),
    Run("hidden REQ4+ReLU", "hidden", "acc_hidden_s32", "REQ4", relu="RELU",
        scale_key="scale_req4", offset_key="offset_req4", note="int4: ReLU 0..15 shifted to -8..7"),
    Run("hidden VDEQS16", "hidden", "acc_hidden_s32", "VDEQS16",
        scale_key="scale_vdeqs16", offset_key="offset_vdeqs16", note="S16 fixed point, 2^-11 units"),
    Run("logits DEQF16", "logits", "acc_logits_s32", "DEQF16",
        scale_key="scale_deq_logits", note="dequantize int8 logits to FP16"),
    Run("logits QS322BF16_PRE", "logits", "acc_logits_s32", "QS322BF16_PRE",
        scale_key="scale_deq_logits", note="dequantize int8 logits to BF16"),
    Run("logits F322F16", "logits", "acc_logits_fp32", "F322F16", note="FP32 logits to FP16"),
    Run("logits F322BF16", "logits", "acc_logits_fp32", "F322BF16", note="FP32 logits to BF16"),
    Run("logits QF322FP8_PRE", "logits", "acc_logits_fp32", "QF322FP8_PRE",
        scale_key="scale_fp8_logits", note="E4M3, max |logit| scaled to just under 448"),
    Run("logits QF322HIF8_PRE", "logits", "acc_logits_fp32", "QF322HIF8_PRE",
        scale_key="scale_hif8_logits", note="HiF8, RMS logit scaled to 1"),
    Run("hidden VQF322B8_PRE+ReLU", "hidden", "acc_hidden_fp32", "VQF322B8_PRE", relu="RELU",
        scale_key="scale_vqb8_hidden", offset_key="offset_vqb8_hidden",
        note="per-channel int8 activations from FP32"),
    Run("hidden FP8 GroupMax/MaxAbs", "hidden", "acc_hidden_fp32", "QF322FP8_PRE",
        scale_key="scale_fp8_hidden", row_max=True, group_max=True, group_n=8, max_abs=True,
        note="E4M3 with per-8-column max|acc| block statistics"),
)


def _mode_info(mode: str) -> Any:
    from .fpatr.attributes import mode_info

    return mode_info(mode)


def run_arguments(run: Run, ex: Mapping[str, np.ndarray]) -> Dict[str, Any]:
    """The keyword arguments of :func:`ptonum.fpatr.postprocess` for ``run`` on ``ex``.

    Scales become FP19 words with :func:`ptonum.fpatr.params.quant_param`
    (``rounding="exact"``: the example's scales are exact FP19 values).
    """
    from .fpatr.attributes import FPATRAttributes
    from .fpatr.params import quant_param

    attrs = FPATRAttributes.from_fields(
        pre_quant_mode=run.mode, relu_mode=run.relu, group_n=run.group_n,
        row_max_en=run.row_max, group_max_en=run.group_max, max_abs_en=run.max_abs,
    )
    acc = np.asarray(ex[run.acc_key])
    kwargs: Dict[str, Any] = {
        "acc": acc, "acc_type": run.acc_type, "attributes": attrs,
        "rmode": run.rmode, "sat": run.sat,
    }
    info = _mode_info(run.mode)
    if info.parameter == "none":
        return kwargs
    assert run.scale_key is not None
    scale = np.asarray(ex[run.scale_key], dtype=np.float64)
    offset = int(ex[run.offset_key]) if run.offset_key else 0
    if info.parameter == "scalar":
        kwargs["quant_param"] = int(quant_param(float(scale), offset, mode=run.mode))
    else:
        words = [int(quant_param(float(s), offset, mode=run.mode)) for s in np.broadcast_to(scale, (acc.shape[1],))]
        kwargs["quant_tile"] = np.array(words, dtype=np.uint64).reshape(1, -1)
    return kwargs


def exact_reference(run: Run, ex: Mapping[str, np.ndarray]) -> np.ndarray:
    """The exact real value each D element approximates, float64 M x N.

    ``select(acc) * scale + offset``: ``select`` is the accumulator value, or 0
    on the negative path when ReLU is on (ADR-0085 D176); ``scale`` 1 for modes
    without parameter.  Exact in float64 for the bundled example (scales have
    at most 11 significant bits).
    """
    acc = np.asarray(ex[run.acc_key]).astype(np.float64)
    if run.relu.upper() == "RELU":
        acc = np.where(acc < 0, 0.0, acc)
    scale = np.asarray(ex[run.scale_key], dtype=np.float64) if run.scale_key else np.float64(1.0)
    offset = float(ex[run.offset_key]) if run.offset_key else 0.0
    return acc * scale + offset


def sqnr_db(ref: np.ndarray, got: np.ndarray) -> float:
    """Signal-to-quantization-noise ratio in dB of ``got`` against ``ref`` (``inf`` if equal)."""
    ref = np.asarray(ref, dtype=np.float64)
    err = np.asarray(got, dtype=np.float64) - ref
    noise = float(np.sum(err * err))
    signal = float(np.sum(ref * ref))
    if noise == 0.0:
        return float("inf")
    if signal == 0.0 or not np.isfinite(noise):
        return float("-inf")
    return 10.0 * float(np.log10(signal / noise))


@dataclass
class RunReport:
    """What one run produced and what it cost (see :func:`run_report`)."""

    run: Run
    dst_type: str
    d_shape: Tuple[int, ...]
    row_max_shape: Optional[Tuple[int, ...]]
    group_max_shape: Optional[Tuple[int, ...]]
    flags: int
    flag_names: str
    d_min: float
    d_max: float
    sqnr_db: float
    max_abs_err: float
    top1_float: Optional[float] = None
    top1_labels: Optional[float] = None
    seconds: float = 0.0
    extra: Dict[str, Any] = field(default_factory=dict)


def run_one(run: Run, ex: Mapping[str, np.ndarray], *, engine: str = "fast") -> RunReport:
    """Post-process the example accumulator of ``run`` and measure the result."""
    from .fpatr.tile import postprocess

    kwargs = run_arguments(run, ex)
    t0 = time.perf_counter()
    res = postprocess(kwargs.pop("acc"), engine=engine, **kwargs)
    seconds = time.perf_counter() - t0
    d = res.decode()
    ref = exact_reference(run, ex)
    finite = np.isfinite(d)
    err = np.abs(d - ref)
    rep = RunReport(
        run=run,
        dst_type=res.dst_type.name,
        d_shape=tuple(res.d_bits.shape),
        row_max_shape=None if res.row_max_bits is None else tuple(res.row_max_bits.shape),
        group_max_shape=None if res.group_max_bits is None else tuple(res.group_max_bits.shape),
        flags=int(res.flags),
        flag_names=res.flag_names,
        d_min=float(np.min(d[finite])) if finite.any() else float("nan"),
        d_max=float(np.max(d[finite])) if finite.any() else float("nan"),
        sqnr_db=sqnr_db(ref, d),
        max_abs_err=float(np.max(err)) if err.size else 0.0,
        seconds=seconds,
    )
    rms = float(np.sqrt(np.mean(np.square(np.asarray(ref, dtype=np.float64))))) if np.size(ref) else 0.0
    #: D - exact over the RMS of the exact product, finite elements (what ``postprocess --plot`` draws)
    rep.extra["relative_error"] = ((d - ref)[finite] / rms) if rms > 0 else (d - ref)[finite]
    if run.layer == "logits":
        pred = np.argmax(d, axis=1)
        rep.top1_float = float(np.mean(pred == np.argmax(np.asarray(ex["logits_ref"]), axis=1)))
        rep.top1_labels = float(np.mean(pred == np.asarray(ex["labels"])))
    if res.row_max_bits is not None:
        rm = np.asarray(res.row_max, dtype=np.float64)
        rep.extra["row_max_range"] = (float(rm.min()), float(rm.max()))
    if res.group_max_bits is not None:
        gm = np.asarray(res.group_max, dtype=np.float64)
        rep.extra["group_max_range"] = (float(gm.min()), float(gm.max()))
    return rep


def run_report(runs: Sequence[Run] = RUNS, *, example: Optional[Mapping[str, np.ndarray]] = None,
               engine: str = "fast") -> List[RunReport]:
    """Run every representative configuration on the bundled example; one :class:`RunReport` each."""
    ex = load_example() if example is None else example
    return [run_one(r, ex, engine=engine) for r in runs]
