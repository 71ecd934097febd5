"""Pictures (cli/_plot.py): ``ptonum postprocess --plot`` on the bundled example, rendered headless.

(The compare picture is tested in test_cli_compare.py.)  These are plumbing tests: the picture
must show the numbers the report computes, one bar and one box per configuration.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ptonum.cli import main
from ptonum.example import RUNS, load_example, run_one


def test_postprocess_plot_draws_sqnr_and_error_distribution(tmp_path: Path) -> None:
    import matplotlib.image

    png = tmp_path / "pics" / "example.png"
    r = CliRunner().invoke(main, ["postprocess", "--plot", str(png)])
    assert r.exit_code == 0, r.output
    assert f"wrote {png}" in " ".join(r.output.split())
    img = matplotlib.image.imread(png)
    assert img.ndim == 3 and img.shape[1] > 1000
    assert not list(png.parent.glob(".*.tmp"))

    from ptonum.cli._plot import example_figure

    ex = load_example()
    reports = [run_one(run, ex) for run in RUNS]
    fig = example_figure(RUNS, reports, [rep.extra["relative_error"] for rep in reports],
                         [run.mode for run in RUNS])
    ax_s, ax_e = fig.axes[:2]
    widths = [p.get_width() for p in ax_s.patches]
    assert len(widths) == len(RUNS)
    for w, rep in zip(widths, reports):
        if math.isfinite(rep.sqnr_db):
            assert w == rep.sqnr_db
    assert [t.get_text() for t in ax_s.get_yticklabels()] == [run.mode for run in RUNS]
    boxes = [ln for ln in ax_e.lines if ln.get_color() != "none"]
    assert boxes  # one box (several lines) per configuration with a nonzero error
    # every row says its share of exact elements, computed here from the errors; 0% too (break stop 23)
    shares = [float(np.mean(np.asarray(rep.extra["relative_error"]) == 0)) for rep in reports]
    assert 0.0 in shares
    want = [f"{100 * s:.0f}% exact" if s >= 0.01 or s == 0 else "<1% exact" for s in shares]
    assert [t.get_text() for t in ax_e.texts] == want


def test_postprocess_plot_refusals(tmp_path: Path) -> None:
    np.save(tmp_path / "acc.npy", np.zeros((2, 2), np.int32))
    r = CliRunner().invoke(main, ["postprocess", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--scale", "1",
                                  "--plot", str(tmp_path / "p.png"), "--out-dir", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--plot draws the bundled example" in r.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "p.png").exists()
    r = CliRunner().invoke(main, ["postprocess", "--plot", str(tmp_path / "p.svg")])
    assert r.exit_code == 2 and "give a .png file name" in r.stderr


def test_plot_over_a_write_protected_file_is_refused_before_any_work(tmp_path):
    from ptonum.cli._plot import check_plot_path
    from ptonum.errors import UsageError

    p = tmp_path / "m.png"
    p.write_bytes(b"kept")
    p.chmod(0o444)
    with pytest.raises(UsageError, match=r"--plot: cannot write .*m\.png: it is write-protected \(mode 0444\)"):
        check_plot_path(str(p))
    assert p.read_bytes() == b"kept"


@pytest.mark.parametrize("command", ["postprocess", "compare"])
def test_plot_into_a_write_protected_folder_is_refused_like_every_output(tmp_path, command):
    """README: a folder the outputs would go into that is write-protected (chmod 555) is refused, root included;
    --plot's folder too (break stop 23: the PNG was written into a chmod 555 folder with exit 0)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        args = (["postprocess", "--plot", str(ro / "x.png")] if command == "postprocess" else
                ["compare", str(tmp_path / "acc.npy"), "--mode", "REQ8", "--scale", "1",
                 "--device-d", str(tmp_path / "d.npy"), "--plot", str(ro / "x.png")])
        if command == "compare":
            np.save(tmp_path / "acc.npy", np.zeros((2, 3), np.int32))
            np.save(tmp_path / "d.npy", np.zeros((2, 3), np.uint8))
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert f"--plot = {ro / 'x.png'}: {ro} is a write-protected directory (mode 0555)" in r.stderr
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)
