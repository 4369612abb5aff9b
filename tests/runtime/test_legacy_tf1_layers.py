"""`tfm.legacy.tf1_layers` / `tf1_rnn_cell`: TF 1.x's default and named initializers, drawn from the
graph seed in the graph's order, where `tfm.legacy.layers` keeps TF 2.x's `tf.compat.v1.layers`
initializers (seeded from Python's `random`, no graph seed taken). The oracle comparison is
`tests/test_verify.py`'s graph-seeded program."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime import legacy

pytestmark = pytest.mark.tf


def _draws(build) -> list[np.ndarray]:
    """The values of what `build()` returns (variables initialized) in a graph seeded with 7."""
    with tf.Graph().as_default():
        tf.compat.v1.random.set_random_seed(7)
        with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), use_resource=False):
            tensors = build()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            return session.run(tensors)


def _tf1_kernel(initializer, shape=(3, 4)):
    return tf.compat.v1.get_variable("kernel", shape, initializer=initializer)


def test_default_and_named_initializers_are_tf1s_graph_seeded_ones() -> None:
    def layers():
        inputs = tf.ones([2, 3])
        dense = legacy.tf1_layers.Dense(4)
        dense(inputs)
        named = legacy.tf1_layers.dense(inputs, 4, kernel_initializer="glorot_normal", name="named")
        kernel = tf.compat.v1.get_default_graph().get_tensor_by_name("named/kernel:0")
        after = tf.random.uniform([2])
        return [dense.kernel, kernel, after]

    def reference():
        first = _tf1_kernel(tf.compat.v1.glorot_uniform_initializer())
        second = tf.compat.v1.get_variable("second", (3, 4), initializer=tf.compat.v1.glorot_normal_initializer())
        return [first, second, tf.random.uniform([2])]

    got, want = _draws(layers), _draws(reference)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_rnn_cell_weights_and_names_are_tf1s() -> None:
    def cell():
        gru = legacy.tf1_rnn_cell.GRUCell(2)
        tf.compat.v1.nn.dynamic_rnn(gru, tf.ones([1, 3, 2]), dtype=tf.float32)
        return [v for v in tf.compat.v1.global_variables() if v.name == "rnn/gru_cell/gates/kernel:0"]

    def reference():
        with tf.compat.v1.variable_scope("rnn/gru_cell/gates"):
            return [_tf1_kernel(tf.compat.v1.glorot_uniform_initializer(), (4, 4))]

    (got,), (want,) = _draws(cell), _draws(reference)
    np.testing.assert_array_equal(got, want)


def test_classes_keep_their_names_and_subclass_like_tf1s() -> None:
    """A subclass of `tf1_layers.Layer` (TF1 programs subclassed `tf.layers.Layer`) draws TF 1.x's way too."""

    class Scaled(legacy.tf1_layers.Layer):
        def build(self, input_shape):
            self.scale = self.add_weight("scale", [int(input_shape[-1])])

        def call(self, inputs):
            return inputs * self.scale

    def build():
        layer = legacy.tf1_layers.Dense(2)
        layer(tf.ones([1, 2]))
        scaled = Scaled()
        scaled(tf.ones([1, 2]))
        assert layer.kernel.name == "dense/kernel:0" and legacy.tf1_layers.Dense.__name__ == "Dense"
        assert isinstance(layer, legacy.layers.Dense)
        return [layer.kernel, scaled.scale]

    def reference():
        glorot = tf.compat.v1.glorot_uniform_initializer
        return [_tf1_kernel(glorot(), (2, 2)), tf.compat.v1.get_variable("scale", [2], initializer=glorot())]

    for got, want in zip(_draws(build), _draws(reference)):
        np.testing.assert_array_equal(got, want)


def test_isinstance_and_issubclass_answer_as_tf1s() -> None:
    """Programs dispatch on TF1's base classes (`isinstance(cell, tf.nn.rnn_cell.RNNCell)`,
    google/seq2seq's `issubclass(x, tf.contrib.rnn.RNNCell)`): the TF 1.x-initialized classes answer
    as tf-keras's own, and a program's own subclasses of them as classes do."""
    cells, layers = legacy.tf1_rnn_cell, legacy.tf1_layers
    cell = cells.BasicLSTMCell(4)
    assert isinstance(cell, cells.RNNCell) and isinstance(cell, legacy.rnn_cell.RNNCell)
    assert isinstance(cells.DropoutWrapper(cell, input_keep_prob=0.5), cells.RNNCell)
    assert issubclass(cells.GRUCell, cells.RNNCell) and not issubclass(cells.GRUCell, cells.BasicLSTMCell)
    assert isinstance(layers.Dense(3), layers.Layer) and not isinstance(layers.Dense(3), layers.Conv2D)

    class First(cells.RNNCell):
        pass

    class Second(cells.RNNCell):
        pass

    assert issubclass(First, cells.RNNCell) and not issubclass(Second, First)
    assert not isinstance(Second.__new__(Second), First) and isinstance(First.__new__(First), First)


def test_tf2_compat_v1_layers_take_no_graph_seed() -> None:
    """`tfm.legacy.layers` (TF 2.x programs): the default initializer is Keras 2's, so an unseeded
    random op after the layer still takes the graph's first op seed."""

    def layers():
        legacy.layers.dense(tf.ones([2, 3]), 4)
        return [tf.random.uniform([3])]

    def alone():
        return [tf.random.uniform([3])]

    np.testing.assert_array_equal(_draws(layers)[0], _draws(alone)[0])
