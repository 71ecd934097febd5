"""Pictures for ``ptonum compare --plot`` and ``ptonum postprocess --plot`` (matplotlib, headless).

matplotlib is imported only here and only when a picture is asked for (the Agg backend, so no
display is needed); without it, ``--plot`` is refused with the install hint.
"""

from __future__ import annotations

import io
import math
from typing import Any, List, Sequence, Tuple

import numpy as np

from ..errors import UsageError

#: the mismatch map is drawn at most this many cells a side (larger tiles: each cell the maximum over a block)
MAP_CELLS = 512


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the headless Agg backend (UsageError with the install hint when missing)."""
    try:
        import matplotlib
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'ptonum[plot]' (or pip install matplotlib)") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def check_plot_path(path: str) -> None:
    """Refuse a ``--plot`` destination before any work, as every other output file is
    (:func:`ptonum.cli._common.output_path`: an empty path, a directory, a parent that is a file or a
    dangling link, an unwritable or write-protected folder (chmod 555, root included), a write-protected
    file); also a name that is not ``.png``, and matplotlib missing."""
    from pathlib import Path

    from ._common import output_path

    if Path(path).suffix.lower() != ".png":
        raise UsageError(f"--plot = {path}: give a .png file name")
    output_path("--plot", path)
    pyplot()


def publish_png(path: str, data: bytes) -> None:
    """Publish the PNG bytes at ``path`` (:class:`ptonum.publish.Publication`: whole or not at all;
    missing directories are created)."""
    from ..publish import Publication

    with Publication() as pub:
        pub.write_bytes(path, data)


def png_bytes(fig: Any) -> bytes:
    """The figure as PNG bytes (the figure is closed)."""
    plt = pyplot()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=110)
    finally:
        plt.close(fig)
    return buf.getvalue()


def _blocks(m: int, n: int) -> Tuple[int, int]:
    """Rows and columns of ACC per map cell (1 up to :data:`MAP_CELLS` a side)."""
    return max(1, math.ceil(m / MAP_CELLS)), max(1, math.ceil(n / MAP_CELLS))


def mismatch_counts(report: Any) -> Tuple[np.ndarray, np.ndarray]:
    """(per-row, per-column) mismatch counts of an M x N :class:`~ptonum.conformance.compare.CompareReport`."""
    m, n = report.shape
    pos = report.positions
    return (np.bincount(pos[:, 0], minlength=m).astype(np.int64),
            np.bincount(pos[:, 1], minlength=n).astype(np.int64))


def _num_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else format(x, ".4g")


def distance_scale(dist: np.ndarray) -> Tuple[Any, Any, Any]:
    """Colour map, norm and (for a single value) ticks of the distance colour bar over the positive
    entries of ``dist``: several distinct values span min .. max on a log scale; a single value
    ``v`` (e.g. every mismatch 1 ulp) is one colour labelled ``v`` (a log scale from ``v`` to ``v``
    is empty: it used to span 1 .. 2); none (no numeric mismatch) a one-colour bar labelled 0."""
    plt = pyplot()
    from matplotlib import colors

    viridis = plt.get_cmap("viridis")
    pos = dist[dist > 0]
    lo, hi = (float(pos.min()), float(pos.max())) if pos.size else (0.0, 0.0)
    if hi > lo:
        return viridis, colors.LogNorm(vmin=lo, vmax=hi), None
    one = colors.ListedColormap([viridis(0.5)])
    return one, colors.BoundaryNorm([lo - 0.5, lo + 0.5], 1), [lo]


def compare_figure(report: Any, title: str) -> Any:
    """The mismatch picture of one M x N output.

    Top left, the M x N map of mismatch positions coloured by distance (log scale from the smallest
    to the largest distance, one colour when all are equal, :func:`distance_scale`; integer
    difference or ulps; NaN/Inf class and NaN payload mismatches in magenta; for a tile larger
    than :data:`MAP_CELLS` a side each cell shows the largest distance in its block); above it the
    mismatches per column, at its right the mismatches per row (so a bad column, row or block
    stands out); below, the histogram of distances by powers of two.
    """
    plt = pyplot()
    from matplotlib import colors
    from matplotlib.gridspec import GridSpec

    m, n = report.shape
    rows, cols = mismatch_counts(report)
    fy, fx = _blocks(m, n)
    gm, gn = math.ceil(m / fy), math.ceil(n / fx)
    dist = np.zeros((gm, gn), dtype=np.float64)
    special = np.zeros((gm, gn), dtype=bool)
    pos, d = report.positions, report.distances
    if pos.size:
        cells = (pos[:, 0] // fy, pos[:, 1] // fx)
        np.maximum.at(dist, cells, np.where(d > 0, d, 0).astype(np.float64))
        special[cells[0][d < 0], cells[1][d < 0]] = True
    unit = "integer difference" if report.dst_type.is_integer else f"ulps of {report.dst_type.name}"

    fig = plt.figure(figsize=(10, 9.5))
    outer = GridSpec(2, 1, figure=fig, height_ratios=[6, 2.2], hspace=0.28)
    gs = outer[0].subgridspec(2, 3, width_ratios=[5, 1, 0.18], height_ratios=[1, 5], hspace=0.06, wspace=0.08)
    ax_map = fig.add_subplot(gs[1, 0])
    ax_top = fig.add_subplot(gs[0, 0], sharex=ax_map)
    ax_right = fig.add_subplot(gs[1, 1], sharey=ax_map)
    ax_cbar = fig.add_subplot(gs[1, 2])
    ax_hist = fig.add_subplot(outer[1])
    fig.suptitle(title, fontsize=11)

    shown = np.ma.masked_where(dist <= 0, dist)
    cmap, norm, ticks = distance_scale(dist)
    im = ax_map.imshow(shown, cmap=cmap.with_extremes(bad="white"), norm=norm,
                       extent=(0, n, m, 0), aspect="auto", interpolation="nearest")
    if special.any():
        sp = np.ma.masked_where(~special, special.astype(float))
        ax_map.imshow(sp, cmap=colors.ListedColormap(["magenta"]), extent=(0, n, m, 0), aspect="auto",
                      interpolation="nearest")
    ax_map.set_xlim(0, n)
    ax_map.set_ylim(m, 0)
    ax_map.set_xlabel("column" + (f" (a cell = {fx} columns)" if fx > 1 else ""))
    ax_map.set_ylabel("row" + (f" (a cell = {fy} rows)" if fy > 1 else ""))
    ax_map.set_facecolor("white")
    for spine in ax_map.spines.values():
        spine.set_color("0.5")
    cb = fig.colorbar(im, cax=ax_cbar)
    if ticks is not None:  # one distance: one colour, one labelled tick
        cb.set_ticks(ticks, labels=[_num_text(t) for t in ticks])
        cb.minorticks_off()
    cb.set_label(f"distance ({unit})" + ("; magenta: no distance (NaN/Inf class, NaN payload, sign of zero)"
                                         if special.any() else ""))

    from matplotlib.ticker import MaxNLocator

    # one step per column / row, edges drawn, so a single bad column of a 4096-wide tile stays visible
    ax_top.stairs(cols, np.arange(n + 1), fill=True, color="tab:red", edgecolor="tab:red", linewidth=0.8)
    ax_top.set_ylabel("per column")
    ax_top.set_ylim(0, max(1, int(cols.max(initial=0))) * 1.08)
    ax_top.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
    ax_top.tick_params(labelbottom=False)
    ax_top.set_title(f"{report.mismatches} of {report.elements} elements differ", fontsize=10)
    ax_right.stairs(rows, np.arange(m + 1), orientation="horizontal", fill=True, color="tab:red",
                    edgecolor="tab:red", linewidth=0.8)
    ax_right.set_xlabel("per row")
    ax_right.set_xlim(0, max(1, int(rows.max(initial=0))) * 1.08)
    ax_right.xaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
    ax_right.tick_params(labelleft=False)

    labels = [k for k, _ in report.hist]
    counts = [v for _, v in report.hist]
    if report.class_mismatches or report.nan_payload_mismatches:
        labels.append("NaN/Inf class")
        counts.append(report.class_mismatches + report.nan_payload_mismatches)
    if report.signed_zero_mismatches:
        labels.append("+0 vs -0")
        counts.append(report.signed_zero_mismatches)
    ax_hist.bar(range(len(labels)), counts, color="tab:blue")
    ax_hist.set_xticks(range(len(labels)), labels, rotation=30 if len(labels) > 10 else 0)
    for i, v in enumerate(counts):
        ax_hist.annotate(str(v), (i, v), ha="center", va="bottom", fontsize=8)
    ax_hist.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax_hist.set_ylim(0, max(counts, default=1) * 1.15)
    ax_hist.set_xlabel(f"distance ({unit})")
    ax_hist.set_ylabel("mismatches")
    ax_hist.set_title("distance histogram", fontsize=10)
    if not labels:
        ax_hist.text(0.5, 0.5, "no mismatches", transform=ax_hist.transAxes, ha="center", va="center")
    return fig


def example_figure(runs: Sequence[Any], reports: Sequence[Any], errors: Sequence[np.ndarray],
                   labels: Sequence[str]) -> Any:
    """The bundled example as a picture: SQNR per configuration (left) and, per configuration, the
    distribution of the nonzero |D - exact| relative to the RMS of the exact product (right, log
    scale; the share of elements where D is exact, 0% included, is written at the right edge of every row)."""
    plt = pyplot()

    k = len(reports)
    height = 0.42 * k + 1.6
    fig, (ax_s, ax_e) = plt.subplots(1, 2, figsize=(13, height), sharey=True,
                                     gridspec_kw={"width_ratios": [1, 1.5], "wspace": 0.04})
    fig.suptitle("ptonum postprocess - bundled example: what each destination costs", fontsize=11)
    y = np.arange(k)
    finite = [r.sqnr_db for r in reports if math.isfinite(r.sqnr_db)]
    top = (max(finite) if finite else 0.0) * 1.1 + 5
    vals = [r.sqnr_db if math.isfinite(r.sqnr_db) else top for r in reports]
    bars = ax_s.barh(y, vals, color=["tab:green" if not math.isfinite(r.sqnr_db) else "tab:blue" for r in reports])
    for b, r in zip(bars, reports):
        text = "exact" if not math.isfinite(r.sqnr_db) else f"{r.sqnr_db:.1f}"
        ax_s.annotate(text, (b.get_width(), b.get_y() + b.get_height() / 2), xytext=(3, 0),
                      textcoords="offset points", va="center", fontsize=8)
    ax_s.set_xlim(0, top * 1.18)
    ax_s.set_xlabel("SQNR (dB) against the exact product")

    data: List[np.ndarray] = []
    where: List[int] = []
    for i, e in enumerate(errors):
        a = np.abs(np.asarray(e, dtype=np.float64))
        share = float(np.mean(a == 0)) if a.size else 1.0
        nz = a[a > 0]
        if nz.size:
            data.append(nz)
            where.append(i)
        # every row gets its share, 0% included (a missing label read as "not measured")
        pct = f"{100 * share:.0f}" if share >= 0.01 or share == 0 else "<1"
        ax_e.annotate(f"{pct}% exact", (1.0, i), xycoords=("axes fraction", "data"), xytext=(4, 0),
                      textcoords="offset points", ha="left", va="center", fontsize=8, color="tab:green")
    if data:
        ax_e.boxplot(data, positions=where, orientation="horizontal", widths=0.6, whis=(0, 100), showfliers=False,
                     manage_ticks=False)
    ax_e.set_xscale("log")
    ax_e.set_xlabel("nonzero |D - exact| / RMS(exact)   (box: quartiles, whiskers: min .. max)")
    ax_s.set_yticks(y, list(labels), fontsize=8)
    ax_s.set_ylim(k - 0.5, -0.5)
    fig.subplots_adjust(left=0.3, right=0.93, top=1 - 0.6 / height, bottom=0.75 / height)
    return fig
