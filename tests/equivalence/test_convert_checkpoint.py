"""`tfmigrate-checkpoint`: a TF1 Estimator checkpoint becomes the TF2 checkpoint `tfm.fit` writes.

The original trains on the oracle (TF 2.15), leaving `model.ckpt-N`. Converting it with the
migrated program's builder and continuing from the TF2 checkpoint must give the same numbers as
the migration continuing from the TF1 checkpoint directly (which the equivalence suite ties to a
second TF1 run).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import compare, run_program
from .oracle import oracle_python, oracle_run_env, quiet_env

pytestmark = [pytest.mark.oracle, pytest.mark.tf]

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "TFM301_tpu_estimator_to_keras" / "variable_scope_get_variable"


def test_converted_checkpoint_continues_like_the_tf1_one(tmp_path: Path) -> None:
    original = tmp_path / "original.py"
    migrated = tmp_path / "migrated.py"
    shutil.copy(FIXTURE.with_suffix(".in.py"), original)
    shutil.copy(FIXTURE.with_suffix(".out.py"), migrated)
    tf1_dir, tf2_dir = tmp_path / "tf1", tmp_path / "tf2"
    tf1_dir.mkdir()
    tf2_dir.mkdir()
    run_program(oracle_python(), original, tf1_dir, env=oracle_run_env()).check()
    tf1_checkpoints = sorted(p.name for p in (tf1_dir / "model_dir").glob("model.ckpt-*.index"))
    assert tf1_checkpoints, "the original left no TF1 checkpoint"

    command = [
        sys.executable, "-m", "tfmigrate.runtime.convert", str(tf1_dir / "model_dir"), str(tf2_dir / "model_dir"),
        "--program", str(migrated), "--input-fn", "input_fn", "--batch-size", "8",
        "--params", '{"hidden_units": 10, "learning_rate": 0.05}',
    ]
    proc = subprocess.run(command, capture_output=True, text=True, env=quiet_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "global step 24" in proc.stdout
    written = sorted(p.name for p in (tf2_dir / "model_dir").iterdir())
    assert "ckpt-24.index" in written and not any(name.startswith("model.ckpt") for name in written)
    again = subprocess.run(command, capture_output=True, text=True, env=quiet_env(), cwd=tmp_path)
    assert again.returncode != 0 and "already holds a checkpoint" in again.stderr

    from_tf1 = run_program(sys.executable, migrated, tf1_dir).check().results
    from_tf2 = run_program(sys.executable, migrated, tf2_dir).check().results
    assert len(from_tf1) == 2
    assert not compare(from_tf1, from_tf2), compare(from_tf1, from_tf2)
    assert from_tf2[0]["global_step"] == 36.0

