"""Start-up of the command line: ``ptonum postprocess`` on an 8 x 16 tile against ``python -c "import numpy"``.

Runs the installed ``ptonum`` console script (the one beside this interpreter, as users run it)
and a bare numpy import alternately, ``--runs`` times each, and reports the best wall time of
each and their ratio (issue 11 item 11: at most 2).  ``PYTHONDONTWRITEBYTECODE`` is removed from
the environment and one warm-up run writes the ``.pyc`` files, as ``pip install`` does: an
editable install in an environment that sets ``PYTHONDONTWRITEBYTECODE`` compiles ptonum's
sources again on every run (about 0.15 s more), which is not what users run.

Usage: ``python benchmarks/startup.py [--runs 20]``.  Wall time: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import numpy as np


def best_of(commands: Dict[str, List[str]], env: Dict[str, str], runs: int) -> Dict[str, float]:
    """Best wall time of each command, the commands interleaved so that load changes hit all of them."""
    best = {name: float("inf") for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            t = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="runs of each command (best kept)")
    args = ap.parse_args()
    script = Path(sys.executable).with_name("ptonum")
    exe = str(script) if script.exists() else shutil.which("ptonum")
    if exe is None:
        sys.exit("no ptonum console script found (pip install the package first)")
    with tempfile.TemporaryDirectory() as d:
        acc = os.path.join(d, "acc.npy")
        np.save(acc, (np.arange(128, dtype=np.int32).reshape(8, 16) - 64) * 1000)
        commands = {"python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
                    "ptonum postprocess 8x16": [exe, "postprocess", acc, "--mode", "REQ8", "--scale", "0.0078125",
                                                "--out-dir", d]}
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run(commands["ptonum postprocess 8x16"], check=True, stdout=subprocess.DEVNULL, env=env)
        best = best_of(commands, env, args.runs)
        numpy_s, ptonum_s = best.values()
        print(f"import numpy {numpy_s * 1e3:.0f} ms, ptonum postprocess 8x16 {ptonum_s * 1e3:.0f} ms, "
              f"ratio {ptonum_s / numpy_s:.2f} (best of {args.runs}; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
