"""`tfm.train_step`: TF1 gradient code under a strategy clips what TF1 clipped.

TF1 + CrossShardOptimizer with `tf.gradients(loss)`: every replica clips the gradients of its own
unscaled loss, and the update applies their sum. Keras's `global_clipnorm` would clip each
replica's 1/R-scaled gradients instead.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm

pytestmark = pytest.mark.tf

X = np.random.RandomState(0).normal(size=(8, 3)).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [3.0]], "float32")).astype("float32")
CLIP, LR = 6.0, 0.01  # between half and all of the per-replica gradient norms (8.3, 10.8)


class Clipped(tf.keras.Model):
    def __init__(self, scale_loss):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1, kernel_initializer="zeros", bias_initializer="zeros")
        self.scale_loss = scale_loss

    def call(self, features, training=False):
        return self.dense(features)

    def train_step(self, data):
        return tfm.train_step(self, data, self.apply_tf1_gradients, scale_loss=self.scale_loss)

    def apply_tf1_gradients(self, loss, tape):
        tvars = self.trainable_variables
        grads = tape.gradient(loss, tvars)
        grads, _ = tf.clip_by_global_norm(grads, clip_norm=CLIP)
        self.optimizer.apply_gradients(zip(grads, tvars))


def tf1_reference(replicas: int) -> np.ndarray:
    """Sum over replicas of each replica's clipped gradient of its unscaled mean-squared loss."""
    w, b = tf.Variable(tf.zeros((3, 1))), tf.Variable(tf.zeros((1,)))
    for x, y in zip(np.split(X, replicas), np.split(Y, replicas)):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x @ w + b - y))
        grads, _ = tf.clip_by_global_norm(tape.gradient(loss, [w, b]), CLIP)
        if x is X or replicas == 1:
            total = grads
        else:
            total = grads if "total" not in locals() else [t + g for t, g in zip(total, grads)]
    return (w - LR * total[0]).numpy()


def train(strategy, scale_loss: bool) -> np.ndarray:
    with strategy.scope():
        model = Clipped(scale_loss)
        model.compile(optimizer=tf.keras.optimizers.SGD(LR), loss="mse")
    model.fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(8), epochs=1, verbose=0)
    return model.dense.kernel.numpy()


def test_one_replica_is_plain_clipping() -> None:
    np.testing.assert_allclose(train(tf.distribute.get_strategy(), False), tf1_reference(1), rtol=1e-6)


def test_two_replicas_sum_per_replica_clipped_unscaled_gradients(two_cpus) -> None:
    strategy = tfm.make_strategy("mirrored", devices=two_cpus, cross_device_ops=tf.distribute.ReductionToOneDevice())
    got = train(strategy, False)
    want = tf1_reference(2)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # Clipping the 1/R-scaled gradients (Keras's way) gives another update.
    assert np.max(np.abs(train(strategy, True) - want)) > 1e-3
