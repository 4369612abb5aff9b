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


# A TF 2.15 graph program: three training-mode batches through a batch norm (LAYER, given the
# input `x`, says how), its outputs and moving statistics, for 4-D and 2-D inputs.
_BN_PROGRAM = """
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
out = {}
xs = np.asarray(PAYLOAD["x"], np.float32)
for rank in (4, 2):
    with tf.Graph().as_default():
        shape = list(xs.shape[1:]) if rank == 4 else [-1, xs.shape[-1]]
        x = tf.placeholder(tf.float32, [None] * (len(shape) - 1) + [xs.shape[-1]])
        y = LAYER
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        moving = sorted((v for v in tf.global_variables() if "moving" in v.name), key=lambda v: v.name)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            outs = [s.run([y, updates], {x: xs[i].reshape(shape)})[0].tolist() for i in range(3)]
            out[str(rank)] = {"outputs": outs, "moving": [s.run(v).tolist() for v in moving]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def oracle() -> dict:
    return run_oracle(_BN_PROGRAM.replace("LAYER", "tf.layers.batch_normalization(x, training=True, momentum=0.9)"), {"x": X4.tolist()})


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


# -- LayerNorm vs tf_slim's (= tf.contrib.layers') layer_norm ---------------------------------

X3 = (_RNG.normal(size=(4, 5, 6)) * 3 + 2).astype("float32")
LN_CASES = [(1, -1), (-1, -1), (2, -1), (1, 1)]


@pytest.fixture(scope="module")
def oracle_layer_norm() -> dict:
    return run_oracle(
        """
        import numpy as np
        import tensorflow.compat.v1 as tf
        import tf_slim as slim
        tf.disable_eager_execution()
        x = np.asarray(PAYLOAD["x"], np.float32)
        out = {}
        for norm_axis, params_axis in PAYLOAD["cases"]:
            with tf.Graph().as_default():
                inputs = tf.constant(x)
                y = slim.layer_norm(inputs, begin_norm_axis=norm_axis, begin_params_axis=params_axis,
                                    activation_fn=tf.nn.relu)
                shapes = {v.name: v.shape.as_list() for v in tf.global_variables()}
                with tf.Session() as s:
                    s.run(tf.global_variables_initializer())
                    out[f"{norm_axis},{params_axis}"] = {"y": s.run(y).tolist(), "shapes": shapes}
        print(json.dumps(out))
        """,
        {"x": X3.tolist(), "cases": LN_CASES},
    )


@pytest.mark.parametrize("norm_axis,params_axis", LN_CASES)
def test_layer_norm_matches_tf1(norm_axis: int, params_axis: int, oracle_layer_norm: dict) -> None:
    from tfmigrate.runtime.layers import LayerNorm

    layer = LayerNorm(begin_norm_axis=norm_axis, begin_params_axis=params_axis, activation="relu")
    got = layer(tf.constant(X3)).numpy()
    want = oracle_layer_norm[f"{norm_axis},{params_axis}"]
    np.testing.assert_allclose(got, np.asarray(want["y"], np.float32), rtol=1e-6, atol=1e-6)
    assert {f"LayerNorm/{w.name}:0": list(w.shape) for w in layer.weights} == want["shapes"]


def test_keras_layer_normalization_is_not_tf1_layer_norm(oracle_layer_norm: dict) -> None:
    """Why the runtime layer exists: Keras's epsilon (1e-3) moves the numbers well past 1e-5."""
    got = tf.keras.layers.LayerNormalization(axis=[1, 2])(tf.constant(X3)).numpy()
    want = np.maximum(np.asarray(oracle_layer_norm["1,-1"]["y"], np.float32), 0)
    assert np.max(np.abs(np.maximum(got, 0) - want)) > 1e-5


@pytest.fixture(scope="module")
def oracle_slim() -> dict:
    """What slim's batch_norm computes on TF1, through the pieces it used (tf_slim itself does not
    run on TF 2.15): on 4-D inputs TF1's BatchNormalization layer with `fused=True`; on 2-D inputs
    the fused kernel on the input reshaped to `[-1, 1, 1, C]` (slim's `_fused_batch_norm`)."""
    layer = (
        "tf.reshape(tf.layers.batch_normalization(x if rank == 4 else tf.reshape(x, [-1, 1, 1, xs.shape[-1]]), "
        "training=True, momentum=0.8, scale=False, epsilon=0.001, fused=True), tf.shape(x))"
    )
    return run_oracle(_BN_PROGRAM.replace("LAYER", layer), {"x": X4.tolist()})


@pytest.mark.parametrize("rank", [4, 2])
def test_slim_batch_norm_matches_tf1(rank: int, oracle_slim: dict) -> None:
    """`SlimBatchNorm` (slim's defaults spelled by the codemod) is TF1's fused batch norm on 4-D
    and, unlike `BatchNormalization`, on 2-D inputs too (a Bessel-corrected moving variance)."""
    from tfmigrate.runtime.layers import SlimBatchNorm

    layer = SlimBatchNorm(momentum=0.8, scale=False, epsilon=0.001)
    outputs = []
    for i in range(3):
        x = X4[i] if rank == 4 else X4[i].reshape(-1, X4.shape[-1])
        outputs.append(layer(tf.constant(x), training=True).numpy())
    want = oracle_slim[str(rank)]
    np.testing.assert_allclose(np.stack(outputs), np.asarray(want["outputs"], np.float32), rtol=1e-5, atol=1e-5)
    moving_mean, moving_variance = (np.asarray(v, np.float32) for v in want["moving"])
    np.testing.assert_allclose(layer.moving_mean.numpy(), moving_mean, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(layer.moving_variance.numpy(), moving_variance, rtol=1e-6)
    assert not layer.scale and layer.gamma is None
