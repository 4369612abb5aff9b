"""TFM102's output runs on current TF: absl flags parse, logging logs, app.run calls main."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tf]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "TFM102_flags_logging_to_absl"


def test_migrated_flags_program_runs(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    proc = subprocess.run(
        [sys.executable, str(FIXTURES / "mnist_style_flags.out.py"), f"--data_dir={data_dir}", "--train_steps=7"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Training for 7 steps" in proc.stderr and "does not exist yet" in proc.stderr
    assert data_dir.is_dir()


def test_migrated_program_with_stdlib_logging_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(FIXTURES / "compat_v1_with_stdlib_logging.out.py"), "--learning_rate=0.5"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "lr=0.500000" in proc.stderr and "done" in proc.stderr
