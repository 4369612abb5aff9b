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


_LOCAL_NAMES_PROGRAM = '''\
import tensorflow as tf

LOGS = "log-{task_id}"


def launch(n):
  tf.logging.info("Launching %d", n)
  logging = LOGS.format(task_id=n)
  tf.logging.info("log at %s", logging)
  return logging


def report(logging):
  tf.logging.warn("report %s", logging)


def drain(items):
  for flags in items:
    tf.logging.info("item %s", flags)
  try:
    raise ValueError("bad item")
  except ValueError as app:
    tf.logging.error("caught %s", app)


def main(_):
  tf.logging.set_verbosity(tf.logging.INFO)
  launch(3)
  report("r")
  drain(["a"])
  tf.logging.info("done %s", tf.flags.FLAGS.name)


tf.flags.DEFINE_string("name", "n", "a name")

if __name__ == "__main__":
  tf.app.run()
'''


def test_names_a_function_binds_keep_their_meaning(tmp_path: Path) -> None:
    """A function's own `logging` (a local string, a parameter), a loop's `flags`, an `except`'s
    `app`: absl's modules come in as `absl_logging`, `absl_flags`, `absl_app` there, so that
    `logging.info(...)` never reads the local (tensor2tensor's `parallel_launch.py`: an
    UnboundLocalError before its local `logging` was assigned). Both pipelines; the program runs."""
    from tfmigrate.engine import reference_transform, transform_source

    outputs = {migrate(_LOCAL_NAMES_PROGRAM).output for migrate in (transform_source, reference_transform)}
    assert len(outputs) == 1
    output = outputs.pop()
    assert "from absl import app as absl_app, flags as absl_flags, logging as absl_logging" in output, output
    assert "  absl_logging.info(\"Launching %d\", n)\n  logging = LOGS" in output
    assert "absl_app.run(main)" in output and "absl_flags.DEFINE_string" in output
    program = tmp_path / "launch.py"
    program.write_text(output, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(program), "--name=x"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for logged in ("Launching 3", "log at log-3", "report r", "item a", "caught bad item", "done x"):
        assert logged in proc.stderr, proc.stderr[-3000:]
