"""The Keras rewrite replaces a model_fn's `def` with the builder of its Keras model, under the same
name. Where anything but the estimator sites refers to that function, it would then be handed a
builder where it expects a TF1 model_fn: the migration said "migrated fully" and crashed. Such a
site now stays on the strategy tier with the model_fn as written, saying where the other use is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tfmigrate.cli import main
from tfmigrate.engine import Options, transform_source

PROGRAM = '''import tensorflow as tf


def model_fn(features, labels, mode):
  prediction = tf.layers.dense(features['x'], 1, name='out')
  loss = tf.losses.mean_squared_error(labels, prediction)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  return tf.data.Dataset.from_tensors(({'x': [[1.0]]}, [[2.0]])).repeat()


def main():
  est = tf.estimator.Estimator(model_fn, model_dir='m')
  est.train(input_fn, steps=2)
'''

BUILDER = '''import tensorflow as tf


def model_fn_builder(rate):
  def model_fn(features, labels, mode):
    prediction = tf.layers.dense(features['x'], 1, name='out')
    loss = tf.losses.mean_squared_error(labels, prediction)
    train_op = tf.train.GradientDescentOptimizer(rate).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
  return model_fn


def input_fn():
  return tf.data.Dataset.from_tensors(({'x': [[1.0]]}, [[2.0]])).repeat()


def main():
  model_fn = model_fn_builder(0.1)
  est = tf.estimator.Estimator(model_fn, model_dir='m')
  est.train(input_fn, steps=2)
'''

# Each: what the program does with its model_fn besides the estimator, and the line the note names.
OTHER_USES = {
    "called by another model_fn": (
        "\n\ndef scaled_model_fn(features, labels, mode):\n  return model_fn({'x': features['x'] * 2.0}, labels, mode)\n",
        "return model_fn({'x': features['x'] * 2.0}, labels, mode)"),
    "kept in a table": ("\n\nMODEL_FNS = {'linear': model_fn}\n", "MODEL_FNS = {'linear': model_fn}"),
    "read as a value in a call": ("\n\nprint(model_fn.__name__)\n", "print(model_fn.__name__)"),
    "given to another estimator class": (
        "\n\ndef tpu_main():\n  tpu = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=1)\n"
        "  tpu.train(input_fn, max_steps=2)\n",
        "tpu = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=1)"),
}


def _kept(output: str) -> None:
    assert "def model_fn(features, labels, mode):" in output, output
    assert "class KerasModel" not in output


@pytest.mark.parametrize("use", sorted(OTHER_USES))
def test_a_model_fn_used_beyond_its_estimators_is_kept_as_written(use: str) -> None:
    code, line = OTHER_USES[use]
    result = transform_source(PROGRAM + code)
    _kept(result.output)
    assert "`model_fn` is also used (line " in result.output and line in result.output
    assert "beyond the estimators, and the Keras rewrite would replace it" in result.output


def test_a_model_fn_only_its_estimator_uses_is_still_rewritten() -> None:
    output = transform_source(PROGRAM).output
    assert "class KerasModel" in output and "def model_fn(params" in output
    # Not references: a parameter, keyword or attribute spelled the same, a def of that name nested elsewhere.
    more = ("\n\ndef wrap(fn, model_fn=None):\n  return fn\n\n\ndef describe(config):\n  return config.model_fn\n\n\n"
            "def other():\n  return dict(model_fn=1)\n")
    assert "class KerasModel" in transform_source(PROGRAM + more).output


def test_a_builder_whose_model_fn_is_used_elsewhere_is_kept_as_written() -> None:
    assert "class KerasModel" in transform_source(BUILDER).output
    output = transform_source(BUILDER + "\n\ndef evaluate_only():\n  return model_fn_builder(0.0)\n").output
    assert "def model_fn(features, labels, mode):" in output and "class KerasModel" not in output
    assert "`model_fn_builder` is also used (line " in output


def test_a_model_fn_another_module_imports_is_kept_as_written(tmp_path: Path) -> None:
    assert "class KerasModel" not in transform_source(PROGRAM, options=Options(exported=frozenset({"model_fn"}))).output
    tree = tmp_path / "project"
    tree.mkdir()
    (tree / "trainer.py").write_text(PROGRAM)
    (tree / "test_trainer.py").write_text(
        "import tensorflow as tf\nfrom trainer import model_fn\n\n\ndef test_spec():\n"
        "  spec = model_fn({'x': tf.ones([1, 1])}, tf.ones([1, 1]), tf.estimator.ModeKeys.TRAIN)\n")
    result = CliRunner().invoke(main, [str(tree), "--out-dir", str(tmp_path / "out"), "-q"], catch_exceptions=False)
    assert result.exit_code == 1, result.output  # (files changed)
    output = (tmp_path / "out" / "trainer.py").read_text()
    _kept(output)
    assert "another module of the program imports `model_fn`" in output
