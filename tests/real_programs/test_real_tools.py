"""Published TF1 command-line tools with no estimator, migrated and run against the oracle.

tensor2tensor's `utils/avg_checkpoints.py` (tensor2tensor==1.15.7 from PyPI, as `packages.py`
fetches it) averages the variables of some checkpoints by feeding placeholders in a
`tf.Session`: TF 1.x graph code that fails under TF2's eager default. Migrated alone (a file,
not its package), it must run on current TF and write the checkpoint the original writes on the
oracle: every variable equal.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from equivalence.oracle import oracle_python, quiet_env

from .packages import package_dir

pytestmark = [pytest.mark.oracle, pytest.mark.tf, pytest.mark.slow]

LAUNCHER = Path(__file__).parent / "tf1_launcher.py"
TFMIGRATE = [sys.executable, "-c", "from tfmigrate.cli import entry; entry()"]


def _checkpoints(directory: Path) -> list[str]:
    """Two checkpoints of the same variables (a matrix, a vector, an int step) with other values."""
    import tensorflow as tf

    paths = []
    for index, scale in enumerate((1.0, -3.0)):
        with tf.Graph().as_default():
            tf.compat.v1.get_variable("dense/kernel", initializer=np.arange(6, dtype=np.float32).reshape(2, 3) * scale)
            tf.compat.v1.get_variable("dense/bias", initializer=np.full([3], 0.5 * scale, np.float32))
            step = tf.compat.v1.train.get_or_create_global_step()
            (directory / f"run{index}").mkdir(parents=True)
            with tf.compat.v1.Session() as session:
                session.run(tf.compat.v1.global_variables_initializer())
                session.run(step.assign(10 * (index + 1)))
                paths.append(tf.compat.v1.train.Saver().save(session, str(directory / f"run{index}" / "model.ckpt"), global_step=step))
    return paths


def _variables(directory: Path) -> dict[str, np.ndarray]:
    import tensorflow as tf

    path = tf.train.latest_checkpoint(str(directory))
    assert path is not None, f"no checkpoint in {directory}"
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name) for name, _ in tf.train.list_variables(path)}


def test_tensor2tensor_avg_checkpoints_migrated_writes_the_originals_average(tmp_path: Path) -> None:
    original, migrated = tmp_path / "original", tmp_path / "migrated"
    original.mkdir()
    shutil.copy(package_dir("tensor2tensor") / "utils" / "avg_checkpoints.py", original / "avg_checkpoints.py")
    run = subprocess.run([*TFMIGRATE, str(original / "avg_checkpoints.py"), "--out-dir", str(migrated)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert "(0 TODOs left)" in run.stdout, run.stdout + run.stderr
    assert "tf.compat.v1.disable_v2_behavior()" in (migrated / "avg_checkpoints.py").read_text(encoding="utf-8")
    paths = _checkpoints(tmp_path / "checkpoints")
    for python, program, cwd in ((oracle_python(), [str(LAUNCHER), "avg_checkpoints.py"], original),
                                 (sys.executable, ["avg_checkpoints.py"], migrated)):
        done = subprocess.run([str(python), *program, "--checkpoints", ",".join(paths), "--output_path", str(cwd / "avg" / "averaged.ckpt")],
                              cwd=cwd, capture_output=True, text=True, env=quiet_env(), timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    want, got = _variables(original / "avg"), _variables(migrated / "avg")
    assert sorted(want) == sorted(got) == ["dense/bias", "dense/kernel", "global_step"]
    np.testing.assert_allclose(want["dense/kernel"], np.arange(6).reshape(2, 3) * -1.0)  # the mean of x1 and x-3
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
