"""Optimizer facts the codemod relies on, checked against TF 2.15's TF1 optimizers (the oracle)."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

_RNG = np.random.RandomState(0)
W0 = _RNG.randn(6).astype("float32")
# Gradients over several magnitudes, where an epsilon next to the accumulator would show.
GRADS = (_RNG.randn(20, 6) * _RNG.choice([1e-4, 1e-2, 1.0], size=(20, 6))).astype("float32")


def test_keras_adagrad_with_epsilon_zero_is_tf1_adagrad():
    expected = np.asarray(
        run_oracle(
            """
            import numpy as np
            import tensorflow as tf
            with tf.Graph().as_default():
                w = tf.compat.v1.Variable(np.asarray(PAYLOAD["w0"], np.float32))
                g = tf.compat.v1.placeholder(tf.float32, [len(PAYLOAD["w0"])])
                step = tf.compat.v1.train.AdagradOptimizer(0.1).apply_gradients([(g, w)])
                with tf.compat.v1.Session() as session:
                    session.run(tf.compat.v1.global_variables_initializer())
                    for grad in PAYLOAD["grads"]:
                        session.run(step, {g: grad})
                    print(json.dumps(session.run(w).tolist()))
            """,
            {"w0": W0.tolist(), "grads": GRADS.tolist()},
        ),
        dtype="float32",
    )

    def run(epsilon):
        optimizer = tf.keras.optimizers.Adagrad(learning_rate=0.1, initial_accumulator_value=0.1, epsilon=epsilon)
        assert isinstance(optimizer, keras.optimizers.Adagrad)
        w = tf.Variable(W0)
        for grad in GRADS:
            optimizer.apply_gradients([(tf.constant(grad), w)])
        return w.numpy()

    # Measured bit-identical over 20 steps. (Keras's default epsilon=1e-7 is only ~1e-7 relative
    # away here, since the accumulator starts at 0.1; the codemod still sets epsilon=0.)
    np.testing.assert_array_equal(run(0.0), expected)


class _Named(tf.keras.Model):
    """Two weights whose attribute names say nothing; their TF1 names say which BERT excludes."""

    TF1_NAMES = {"first": "bert/encoder/LayerNorm/gamma", "second": "cls/output_weights"}

    def build(self, input_shape):
        self.first = self.add_weight(name="first", shape=[3], initializer="ones")
        self.second = self.add_weight(name="second", shape=[3], initializer="ones")

    def call(self, x):
        return x * self.first + x * self.second


def test_adam_weight_decay_is_berts_update_with_tf1_name_exclusions():
    """`AdamWeightDecay` takes BERT's steps (no bias correction, decay added to the update) and
    decays only the weights whose TF1 names match no exclusion pattern."""
    from tfmigrate.runtime.optimizers import AdamWeightDecay

    model = _Named()
    model.build((None, 3))
    optimizer = AdamWeightDecay(0.1, weight_decay_rate=0.3, epsilon=1e-6, exclude_from_weight_decay=["LayerNorm", "bias"], model=model)
    grads = np.random.RandomState(3).normal(size=(5, 3)).astype(np.float32)
    w = {"first": np.ones(3, np.float32), "second": np.ones(3, np.float32)}
    m = {k: np.zeros(3, np.float32) for k in w}
    v = {k: np.zeros(3, np.float32) for k in w}
    for g in grads:
        optimizer.apply_gradients([(tf.constant(g), model.first), (tf.constant(g), model.second)])
        for k in w:
            m[k] = np.float32(0.9) * m[k] + np.float32(1 - 0.9) * g
            v[k] = np.float32(0.999) * v[k] + np.float32(1 - 0.999) * g * g
            update = m[k] / (np.sqrt(v[k]) + np.float32(1e-6))
            if k == "second":  # cls/output_weights: decayed; bert/.../LayerNorm/gamma: excluded
                update = update + np.float32(0.3) * w[k]
            w[k] = w[k] - np.float32(0.1) * update
    np.testing.assert_allclose(model.first.numpy(), w["first"], rtol=1e-6)
    np.testing.assert_allclose(model.second.numpy(), w["second"], rtol=1e-6)
    assert not np.allclose(w["first"], w["second"])  # the exclusion made a difference
    assert optimizer.tf1_name(model.first) == "bert/encoder/LayerNorm/gamma"
