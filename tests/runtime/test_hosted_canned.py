"""`tfm.estimator`'s canned estimators: a program that returns its estimator from a helper and
hands it to `train_and_evaluate` (Google's census sample's shape) runs on the hosted tier, as the
`tfm.canned` Keras model, with TF 2.15's numbers.

The program (`canned_programs/`) is spelled for TF 2.15; the migrated copy is what the hosted
tier leaves (`tf.estimator.X` -> `tfm.estimator.X`, by text replacement here). The canned
class is the v2 one (`tf.estimator.X` on the oracle: `api="v2"` on the hosted side) or, spelled
`tf.compat.v1.estimator.X`, the v1 one (`tfm.estimator.X`'s default `api="v1"`). The runtime does
not reproduce TF1's seeded initial values of canned models, so the migrated program continues
from the oracle's model_dir (`harness.run_continued`): its second run must give what a second
TF 2.15 run gives, every value within 1e-5.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from equivalence.harness import compare, run_continued

PROGRAMS = Path(__file__).parent / "canned_programs"
CANNED = "DNNLinearCombinedClassifier("


def _pair(case: str, api: str, tmp_path: Path) -> tuple[Path, Path]:
    source = (PROGRAMS / f"{case}.py").read_text(encoding="utf-8")
    if api == "v1":
        source = source.replace(f"tf.estimator.{CANNED}", f"tf.compat.v1.estimator.{CANNED}")
    migrated = source.replace("tf.compat.v1.estimator.", "tfm.estimator.").replace("tf.estimator.", "tfm.estimator.")
    if api == "v2":
        migrated = migrated.replace(f"tfm.estimator.{CANNED}", f"tfm.estimator.{CANNED}api='v2', ")
    migrated = migrated.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport tfmigrate.runtime as tfm\n", 1)
    original_path, migrated_path = tmp_path / "original.py", tmp_path / "migrated.py"
    original_path.write_text(source, encoding="utf-8")
    migrated_path.write_text(migrated, encoding="utf-8")
    return original_path, migrated_path


@pytest.mark.tf
@pytest.mark.oracle
@pytest.mark.parametrize("api", ["v2", "v1"])
def test_census_build_estimator_train_and_evaluate(api: str, tmp_path: Path) -> None:
    original, migrated = _pair("census_build_estimator", api, tmp_path)
    assert "tf.estimator" not in migrated.read_text() and "compat.v1.estimator" not in migrated.read_text()
    expected, actual = run_continued(original, migrated, tmp_path / "runs")
    assert len(expected) == 2 * 5  # train_and_evaluate, evaluate, 3 predictions; two runs
    assert expected[0]["global_step"] == 30 and expected[5]["global_step"] == 60
    assert compare(expected, actual) == []


_CURRENT = r'''
import os
import numpy as np
import tensorflow as tf
import tfmigrate.runtime as tfm
from tfmigrate.runtime import feature_columns as tfc

fc = tf.feature_column
x = fc.numeric_column('x', shape=(2,))
word = fc.categorical_column_with_vocabulary_list('word', ['a', 'b', 'c'], num_oov_buckets=1)
ident = fc.categorical_column_with_identity('id', num_buckets=5)
columns = [x, fc.indicator_column(word), fc.embedding_column(ident, dimension=3),
           fc.embedding_column(fc.categorical_column_with_hash_bucket('word', 7), 2)]
converted = [tfm.estimator.canned.convert_feature_column(c) for c in columns]
assert [type(c).__name__ for c in converted] == ['NumericColumn', 'IndicatorColumn', 'EmbeddingColumn', 'EmbeddingColumn']
assert converted[2].initializer is None  # TF's stored default initializer is tfm's default
assert tfm.estimator.canned.convert_feature_column(converted[0]) is converted[0]

rng = np.random.RandomState(0)
DATA = {'x': rng.randn(40, 2).astype(np.float32), 'word': rng.choice(['a', 'b', 'c', 'd'], 40),
        'id': rng.randint(0, 5, 40).astype(np.int64)}
LABELS = rng.randint(0, 3, 40).astype(np.int64)

def input_fn():
  return tf.data.Dataset.from_tensor_slices((DATA, LABELS)).repeat().batch(8)

def eval_fn():
  return tf.data.Dataset.from_tensor_slices((DATA, LABELS)).batch(8)

# v1 positional arguments: hidden_units, feature_columns, model_dir, n_classes.
est = tfm.estimator.DNNClassifier([8], columns, 'job', 3, config=tfm.estimator.RunConfig(save_checkpoints_steps=5))
assert est.model_dir == 'job' and est.config.model_dir == 'job' and est.latest_checkpoint() is None
feature_spec = {'x': tf.io.FixedLenFeature([2], tf.float32), 'word': tf.io.VarLenFeature(tf.string),
                'id': tf.io.VarLenFeature(tf.int64)}
exporter = tfm.estimator.LatestExporter(
    'latest', tfm.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec), exports_to_keep=1)
metrics, exports = tfm.estimator.train_and_evaluate(
    est, tfm.estimator.TrainSpec(input_fn, max_steps=12),
    tfm.estimator.EvalSpec(eval_fn, steps=None, exporters=[exporter], throttle_secs=0))
assert metrics['global_step'] == 12 and 'accuracy' in metrics, metrics
assert len(exports) == 1 and os.path.isdir(exports[0]), exports
assert est.latest_checkpoint() and est.get_variable_names()
# The export serves (the vocabulary column's table travels with it): its predictions are predict's.
example = tf.train.Example(features=tf.train.Features(feature={
    'x': tf.train.Feature(float_list=tf.train.FloatList(value=DATA['x'][0])),
    'word': tf.train.Feature(bytes_list=tf.train.BytesList(value=[DATA['word'][0].encode()])),
    'id': tf.train.Feature(int64_list=tf.train.Int64List(value=[DATA['id'][0]]))}))
loaded = tf.saved_model.load(exports[0].decode() if isinstance(exports[0], bytes) else exports[0])
sig = loaded.signatures['serving_default']
served = sig(**{next(iter(sig.structured_input_signature[1])): tf.constant([example.SerializeToString()])})
first = next(iter(est.predict(eval_fn)))
np.testing.assert_allclose(served['probabilities'].numpy()[0], first['probabilities'], rtol=1e-6)
p = next(iter(est.predict(eval_fn, predict_keys=['class_ids'])))
assert set(p) == {'class_ids'}, p
for bad in (lambda: tfm.estimator.DNNClassifier([8], columns, input_layer_partitioner=None, api='v2'),
            lambda: tfm.estimator.LinearClassifier(columns, bogus=1)):
  try:
    bad()
  except TypeError:
    pass
  else:
    raise AssertionError('accepted an argument TF does not take')
print('ok')
'''


@pytest.mark.tf
def test_canned_estimator_on_current_tf(tmp_path: Path) -> None:
    """TF columns converted, v1 positional arguments, `train_and_evaluate` with an exporter,
    `predict(predict_keys=...)`, and TF's argument lists enforced (no oracle needed)."""
    import sys

    from equivalence import forked
    from equivalence.oracle import quiet_env

    proc = forked.run(sys.executable, [], tmp_path, quiet_env(), 600, code=_CURRENT)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-4000:]


@pytest.mark.tf
def test_a_tf1_optimizer_object_the_canned_models_cannot_take_is_refused_clearly() -> None:
    """A TF1 optimizer object's Keras counterpart needs a number for its rate and a class the
    runtime maps (the numbers of those it maps: tests/test_verify.py's canned optimizer program)."""
    import tensorflow as tf

    from tfmigrate.runtime.canned.optimizers import from_tf1

    with tf.Graph().as_default():
        decayed = tf.compat.v1.train.exponential_decay(0.1, tf.compat.v1.train.get_or_create_global_step(), 10, 0.9)
        with pytest.raises(ValueError, match="learning rate must be a number"):
            from_tf1(tf.compat.v1.train.GradientDescentOptimizer(decayed))
    with pytest.raises(ValueError, match="ProximalAdagradOptimizer .* has no Keras counterpart"):
        from_tf1(tf.compat.v1.train.ProximalAdagradOptimizer(0.1))
    assert from_tf1(tf.compat.v1.train.GradientDescentOptimizer(0.5)).get_config()["learning_rate"] == 0.5
