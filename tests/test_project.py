"""The project's own commands as a newcomer runs them: the README's test command (``python -m pytest``
under the pyproject configuration) says what ran, file by file, and lists what did not pass and why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_test_command_shows_files_reasons_and_a_summary_line(tmp_path: Path) -> None:
    """Was: ``-q`` in the configuration -- only dots, skip reasons hidden (and ``python -m pytest -q``
    printed no summary line at all)."""
    (tmp_path / "test_x.py").write_text("import pytest\n\n\ndef test_ok():\n    pass\n\n\n"
                                        "@pytest.mark.skip(reason='needs a device')\ndef test_s():\n    pass\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir",
                        str(tmp_path), "-p", "no:cacheprovider", "test_x.py"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.rstrip().splitlines()
    assert any(line.startswith("test_x.py .s") for line in lines), r.stdout
    assert "SKIPPED [1] test_x.py:8: needs a device" in r.stdout
    assert lines[-1].strip("= ").startswith("1 passed, 1 skipped in "), lines[-1]
