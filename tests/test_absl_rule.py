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
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Training for 7 steps" in proc.stderr and "does not exist yet" in proc.stderr
    assert data_dir.is_dir()


def test_migrated_program_with_stdlib_logging_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(FIXTURES / "compat_v1_with_stdlib_logging.out.py"), "--learning_rate=0.5"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "lr=0.500000" in proc.stderr and "done" in proc.stderr


def test_migrated_contrib_data_pipeline_runs(tmp_path: Path) -> None:
    """TFM101's tf.contrib.data -> tf.data.experimental pipeline reads real TFRecords on current TF."""
    import importlib.util

    import tensorflow as tf

    path = tmp_path / "train-0.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(10):
            feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)] * 4))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    program = Path(__file__).resolve().parents[1] / "fixtures" / "TFM101_compat_v1_to_v2" / "contrib_data_pipeline.out.py"
    spec = importlib.util.spec_from_file_location("migrated_pipeline", program)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    batch = next(iter(module.input_fn({"pattern": str(tmp_path / "train-*"), "batch_size": 3})))
    assert batch.shape == (3, 4)


def test_a_self_assignment_the_program_wrote_stays() -> None:
    """TFM102 drops the `flags = flags` its own rewrite of `flags = tf.app.flags` leaves; an
    `x = x` the program wrote (a local bound from a global, a class attribute) is the program's.
    The LibCST pass dropped both, the text path neither; both now drop only the first."""
    from tfmigrate.engine import reference_transform, transform_source

    source = (
        "import tensorflow as tf\nflags = tf.app.flags\nFLAGS = flags.FLAGS\n\n\n"
        "class Config:\n  FLAGS = FLAGS\n\n\n"
        "def f(model):\n  tf.logging.info('x')\n  model = model\n  return model\n"
    )
    for migrate in (transform_source, reference_transform):
        output = migrate(source).output
        assert "flags = flags" not in output and "flags = tf" not in output
        assert "  FLAGS = FLAGS\n" in output and "  model = model\n" in output, output
