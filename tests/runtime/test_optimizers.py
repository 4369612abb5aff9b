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
