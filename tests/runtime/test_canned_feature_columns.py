"""runtime.canned's optimizer conversion and feature-column layers in TF1 checkpoints (real TF)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import canned
from tfmigrate.runtime.tf1_checkpoint import load_tf1_checkpoint, tf1_variable_names

pytestmark = pytest.mark.tf


def test_v2_keras_adagrad_instance_steps_like_keras2_adagrad():
    """A v2 canned estimator given `tf.keras.optimizers.legacy.Adagrad(0.05)` (migrated to Keras 3's
    Adagrad with a float rate) trains with Keras 2's update: epsilon outside the square root."""
    optimizer = canned.get_optimizer(tf.keras.optimizers.Adagrad(learning_rate=0.05), None, "v2")
    assert isinstance(optimizer, canned.LegacyAdagrad)
    variable = tf.Variable([1.0, -2.0])
    gradient = np.array([0.5, 3.0], np.float32)
    optimizer.apply_gradients([(tf.constant(gradient), variable)])
    accumulator = 0.1 + gradient**2
    expected = np.array([1.0, -2.0], np.float32) - 0.05 * gradient / (np.sqrt(accumulator) + 1e-7)
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6)


def test_v2_keras_adagrad_instance_keeps_a_schedule():
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    optimizer = canned.get_optimizer(tf.keras.optimizers.Adagrad(learning_rate=schedule), None, "v2")
    assert isinstance(optimizer, canned.LegacyAdagrad)
    assert optimizer._learning_rate is schedule  # noqa: SLF001


class _ColumnsModel(tf.keras.Model):
    """What TFM201 builds from a model_fn calling `input_layer` and `linear_model`."""

    def __init__(self, deep, wide):
        super().__init__()
        self.input_layer = tfm.feature_columns.InputLayer(feature_columns=deep)
        self.dense = tf.keras.layers.Dense(units=1)
        self.linear_model = tfm.feature_columns.LinearModel(feature_columns=wide, units=1)

    def call(self, features, training=False):
        return self.dense(self.input_layer(features)) + self.linear_model(features)


def _columns():
    city = tfm.feature_columns.categorical_column_with_vocabulary_list("city", ["oslo", "rome", "lima"])
    deep = [tfm.feature_columns.numeric_column("x"), tfm.feature_columns.embedding_column(city, dimension=2)]
    return deep, [city]


def test_feature_column_layers_carry_tf1_names_into_checkpoints(tmp_path):
    """`input_layer/<col>_embedding/embedding_weights`, `linear_model/<col>/weights` and
    `linear_model/bias_weights` (TF1's names in a model_fn) are restored from a TF1 checkpoint."""
    model = _ColumnsModel(*_columns())
    features = {"x": tf.constant([[1.0], [2.0]]), "city": tf.constant([["rome"], ["lima"]])}
    model(features)
    names = tf1_variable_names(model)
    assert names["input_layer/city_embedding/embedding_weights"] is model.input_layer.tf1_names["city_embedding/embedding_weights"]
    assert {"dense/kernel", "dense/bias", "linear_model/city/weights", "linear_model/bias_weights"} <= set(names)

    values = {
        "input_layer/city_embedding/embedding_weights": np.arange(6, dtype=np.float32).reshape(3, 2),
        "dense/kernel": np.array([[0.5], [1.0], [-1.0]], np.float32),
        "dense/bias": np.array([0.25], np.float32),
        "linear_model/city/weights": np.array([[1.0], [2.0], [3.0]], np.float32),
        "linear_model/bias_weights": np.array([-0.5], np.float32),
    }
    with tf.Graph().as_default():
        for name, value in values.items():
            tf.compat.v1.get_variable(name, initializer=value)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, str(tmp_path / "model.ckpt"))
    load_tf1_checkpoint(model, str(tmp_path / "model.ckpt"), include_optimizer=False)
    # The input layer sorts its columns by name (TF1's order): [city_embedding (2), x]. rome = id 1,
    # lima = id 2: [emb0, emb1, x] . kernel + bias + the city's linear weight + the linear bias.
    expected = [2 * 0.5 + 3 * 1.0 - 1 * 1.0 + 0.25 + 2.0 - 0.5, 4 * 0.5 + 5 * 1.0 - 2 * 1.0 + 0.25 + 3.0 - 0.5]
    np.testing.assert_allclose(model(features).numpy()[:, 0], expected, rtol=1e-6)


def test_v2_rmsprop_name_steps_like_keras2_rmsprop():
    """A v2 canned estimator's 'RMSProp' is Keras 2's RMSprop (default rate 0.001, rho 0.9): epsilon
    added outside the square root of the mean square, which starts at zero."""
    optimizer = canned.get_optimizer("RMSProp", None, "v2")
    assert isinstance(optimizer, canned.LegacyRMSprop)
    variable = tf.Variable([1.0, -2.0, 0.5])
    rms = np.zeros(3, np.float32)
    expected = np.array([1.0, -2.0, 0.5], np.float32)
    for gradient in (np.array([0.5, 3.0, 0.0], np.float32), np.array([-1.0, 0.25, 1e-4], np.float32)):
        optimizer.apply_gradients([(tf.constant(gradient), variable)])
        rms = 0.9 * rms + 0.1 * gradient**2
        expected = expected - 0.001 * gradient / (np.sqrt(rms) + 1e-7)
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6)
    assert canned.get_optimizer("RMSProp", 0.2, "v2").learning_rate.numpy() == pytest.approx(0.2)
