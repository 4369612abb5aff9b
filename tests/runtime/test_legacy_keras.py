"""`tfm.legacy.keras`: TF 1.x's `tf.keras` (Keras 2's v1 API) with TF 1.x's graph-seeded
initializers, TF1's variable names, and classes that are Keras 2's for `isinstance`. The oracle
comparison is `tests/test_verify.py`'s Keras programs."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from tfmigrate.runtime import legacy

pytestmark = pytest.mark.tf


def _graph_values(build) -> tuple[list[str], list[np.ndarray]]:
    """(variable names, values) after `build()` in a graph seeded with 7, variables initialized."""
    with tf.Graph().as_default():
        tf.compat.v1.random.set_random_seed(7)
        build()
        variables = tf.compat.v1.global_variables()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            return [v.name for v in variables], session.run(variables)


def test_layers_take_tf1_names_and_tf1s_graph_seeded_default_initializers() -> None:
    keras = legacy.keras

    def build():
        keras.Sequential([keras.layers.Dense(4, input_shape=(3,)), keras.layers.Dense(2, kernel_initializer="glorot_normal")])

    def build_tf1():  # what TF 1.x's default and named initializers drew for the same variables, in order
        v1 = tf.compat.v1
        for name, shape, initializer in (("dense", (3, 4), v1.glorot_uniform_initializer()),
                                         ("dense_1", (4, 2), v1.glorot_normal_initializer())):
            with v1.variable_scope(name):
                v1.get_variable("kernel", shape, initializer=initializer)
                v1.get_variable("bias", shape[1:], initializer=v1.zeros_initializer())

    names, values = _graph_values(build)
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    expected_names, expected = _graph_values(build_tf1)
    assert names == expected_names
    for got, want in zip(values, expected):
        np.testing.assert_array_equal(got, want)


def test_a_subclassed_model_and_an_rnn_build_their_inner_layers_tf1s_way() -> None:
    keras = legacy.keras

    class Tower(keras.Model):
        def __init__(self):
            super().__init__()
            self.lstm = keras.layers.LSTM(3)

        def call(self, inputs):
            return self.lstm(inputs)

    def build():
        Tower()(tf.ones([2, 5, 4]))

    names, values = _graph_values(build)
    assert names == ["tower/lstm/lstm_cell/kernel:0", "tower/lstm/lstm_cell/recurrent_kernel:0", "tower/lstm/lstm_cell/bias:0"]
    again = _graph_values(build)[1]
    for got, want in zip(values, again):  # graph-seeded: the same graph seed draws the same values
        np.testing.assert_array_equal(got, want)


def test_classes_answer_isinstance_as_keras_2s_do() -> None:
    keras = legacy.keras
    plain = tf_keras.layers.Dense(2)
    assert isinstance(plain, keras.layers.Dense) and isinstance(keras.layers.Dense(2), tf_keras.layers.Dense)
    assert not isinstance(plain, keras.layers.Conv2D)
    assert issubclass(tf_keras.layers.Dense, keras.layers.Layer) and isinstance(tf_keras.metrics.Mean(), keras.metrics.Metric)
    assert keras.layers.Dense.__name__ == "Dense" and keras.layers.Dense is legacy.keras.layers.Dense


def test_a_subclassed_model_is_not_traced_over_placeholders_when_first_called_in_a_graph() -> None:
    """Keras never calls a subclassed Model's default `build` (it is marked `_is_default`); the TF1
    wrapper keeps the mark, or the model would be traced once more over placeholders, whose batch
    norm updates a train_op then runs unfed (EfficientNet's model_fn, hosted, failed so)."""
    keras = legacy.keras

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, inputs, training=None):
            return self.dense(inputs)

    with tf.Graph().as_default() as graph:
        Net()(tf.ones([2, 3]))
        assert [op.name for op in graph.get_operations() if op.type == "Placeholder"] == []


def test_the_global_step_of_a_model_dirs_latest_checkpoint(tmp_path) -> None:
    """TF's `_load_global_step_from_checkpoint_dir`, for the hosted tier's TF1 checkpoints and the
    Keras tier's object-based `ckpt-N` ones alike; 0 with none (or no directory at all)."""
    import tfmigrate.runtime as tfm

    load = tfm.estimator._load_global_step_from_checkpoint_dir
    assert load(str(tmp_path / "none")) == 0
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.Session() as session:
            session.run(step.initializer)
            session.run(step.assign(7))
            tf.compat.v1.train.Saver().save(session, str(tmp_path / "hosted" / "model.ckpt"), global_step=7)
    assert load(str(tmp_path / "hosted")) == 7
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), str(tmp_path / "keras"), max_to_keep=2)
    manager.save(checkpoint_number=12)
    assert load(str(tmp_path / "keras")) == 12
