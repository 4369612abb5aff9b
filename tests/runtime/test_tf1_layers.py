"""`tfmigrate.runtime.layers.BatchNormalization` against TF 2.15's `tf.compat.v1.layers.batch_normalization`."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime.layers import BatchNormalization

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

_RNG = np.random.RandomState(0)
X4 = (_RNG.normal(size=(3, 16, 4, 4, 3)) * 2 + 1).astype("float32")


@pytest.fixture(scope="module")
def oracle() -> dict:
    return run_oracle(
        """
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        out = {}
        xs = np.asarray(PAYLOAD["x"], np.float32)
        for rank in (4, 2):
            with tf.Graph().as_default():
                shape = list(xs.shape[1:]) if rank == 4 else [-1, xs.shape[-1]]
                x = tf.placeholder(tf.float32, [None] * (len(shape) - 1) + [xs.shape[-1]])
                y = tf.layers.batch_normalization(x, training=True, momentum=0.9)
                updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
                moving = sorted((v for v in tf.global_variables() if "moving" in v.name), key=lambda v: v.name)
                with tf.Session() as s:
                    s.run(tf.global_variables_initializer())
                    outs = [s.run([y, updates], {x: xs[i].reshape(shape)})[0].tolist() for i in range(3)]
                    out[str(rank)] = {"outputs": outs, "moving": [s.run(v).tolist() for v in moving]}
        print(json.dumps(out))
        """,
        {"x": X4.tolist()},
    )


@pytest.mark.parametrize("rank", [4, 2])
def test_batch_norm_matches_tf1(rank: int, oracle: dict) -> None:
    layer = BatchNormalization(momentum=0.9)
    outputs = []
    for i in range(3):
        x = X4[i] if rank == 4 else X4[i].reshape(-1, X4.shape[-1])
        outputs.append(layer(tf.constant(x), training=True).numpy())
    want = oracle[str(rank)]
    np.testing.assert_allclose(np.stack(outputs), np.asarray(want["outputs"], np.float32), rtol=1e-5, atol=1e-5)
    moving_mean, moving_variance = (np.asarray(v, np.float32) for v in want["moving"])
    np.testing.assert_allclose(layer.moving_mean.numpy(), moving_mean, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(layer.moving_variance.numpy(), moving_variance, rtol=1e-6)


def test_keras_batch_norm_misses_bessel_on_4d(oracle: dict) -> None:
    """Why the runtime layer exists: Keras's moving variance is the biased one."""
    layer = tf.keras.layers.BatchNormalization(momentum=0.9)
    for i in range(3):
        layer(tf.constant(X4[i]), training=True)
    want = np.asarray(oracle["4"]["moving"][1], np.float32)
    assert np.max(np.abs(layer.moving_variance.numpy() - want) / want) > 1e-4


def test_no_update_ops_keeps_moving_statistics() -> None:
    layer = BatchNormalization(update_moving_statistics=False)
    layer(tf.constant(X4[0]), training=True)
    np.testing.assert_array_equal(layer.moving_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(layer.moving_variance.numpy(), np.ones(3))
