"""TFM401 + TFM201: `feature_column.input_layer`/`linear_model` inside a custom model_fn."""

from __future__ import annotations

from pathlib import Path

from tfmigrate.engine import Options, transform_source

FIXTURE = Path(__file__).parent.parent / "fixtures" / "TFM401_canned_estimators" / "input_layer_model_fn.in.py"


def test_keras_target_builds_the_input_layer_once_and_migrates_the_columns():
    out = transform_source(FIXTURE.read_text(encoding="utf-8"), filename=str(FIXTURE), options=Options()).output
    assert "self.input_layer = tfm.feature_columns.InputLayer(feature_columns=params['feature_columns'])" in out
    assert "net = self.input_layer(features)" in out
    assert "cols = [tfm.feature_columns.numeric_column('x')]" in out
    assert "TODO(tfmigrate" not in out


def test_ctl_target_builds_the_input_layer_once_and_migrates_the_columns():
    """TFM401 runs on the ctl target too, so the columns the model_fn's layer gets are the runtime's:
    the loop's Keras model builds the same `tfm.feature_columns.InputLayer`."""
    out = transform_source(FIXTURE.read_text(encoding="utf-8"), filename=str(FIXTURE), options=Options(target="ctl")).output
    assert "self.input_layer = tfm.feature_columns.InputLayer(feature_columns=params['feature_columns'])" in out
    assert "net = self.input_layer(features)" in out
    assert "cols = [tfm.feature_columns.numeric_column('x')]" in out
    assert "(tfm.ctl.EstimatorLoop)" in out
    assert "TODO(tfmigrate" not in out


def test_input_layer_outside_a_migrated_model_fn_runs_as_written():
    """No estimator here, so the columns stay TF's: TF's `input_layer` takes them (TF1 graph mode,
    the hosted tier) and needs no TODO; it keeps its compat.v1 spelling."""
    source = (
        "import tensorflow.compat.v1 as tf\n\n"
        "def features_to_net(features, columns):\n"
        "  return tf.feature_column.input_layer(features, columns)\n"
    )
    out = transform_source(source, filename="x.py", options=Options()).output
    assert "TODO(tfmigrate" not in out and "tf.compat.v1.feature_column.input_layer(features, columns)" in out
