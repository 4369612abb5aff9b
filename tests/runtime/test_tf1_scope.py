"""`tfmigrate.runtime.tf1`: TF1 variable-scope code in a Keras layer, against TF 2.15's graph mode.

One TF1 model function (`_MODEL`: embeddings made with `get_variable`, `tf.layers.dense`,
`tf.contrib.layers.layer_norm`, `tf.layers.conv2d`, a tower shared under
`variable_scope(reuse=tf.AUTO_REUSE)`, a `reuse=True` lookup, a non-trainable variable) runs on
the oracle with `tf.compat.v1.layers`/`tf_slim`, and here inside `tf1.VariableScopeLayer` with the
runtime's functional layers: same variables, same outputs from the oracle's checkpoint, same
weights after one SGD step under `fit` (MirroredStrategy, two CPUs).
"""

from __future__ import annotations

import functools
import types

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import tf1

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

keras = tf.keras

_MODEL = '''
def build(ids, image, is_training, L):
    with tf.variable_scope("net"):
        with tf.variable_scope("embeddings"):
            table = tf.get_variable("word_embeddings", [10, 6], initializer=tf.truncated_normal_initializer(stddev=0.5))
            position = tf.get_variable("position_embeddings", [3, 6], initializer=tf.truncated_normal_initializer(stddev=0.5))
            scale = tf.get_variable("scale", [], initializer=tf.constant_initializer(1.5), trainable=False)
            h = L.layer_norm((tf.gather(table, ids) + position) * scale, begin_norm_axis=-1, begin_params_axis=-1)
        h = L.dropout(h, rate=0.3, training=False)
        with tf.variable_scope("attention"):
            q = L.dense(h, 6, name="query")
            k = L.dense(h, 6, name="key", activation=tf.tanh)
            probs = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) * 0.5)
            h = L.layer_norm(tf.matmul(probs, h) + h, begin_norm_axis=-1, scope="output/LayerNorm")
        pooled = L.dense(h[:, 0], 4, activation=tf.tanh)
        c = L.conv2d(image, 3, 3, padding="same")
        c = L.dense(tf.reduce_mean(c, axis=[1, 2]), 4)

    def tower(x):
        with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
            x = L.dense(x, 5, name="fc", activation=tf.nn.relu)
            w = tf.get_variable("out", [5, 2])
            return tf.matmul(x, w)

    with tf.variable_scope("net", reuse=True):
        again = tf.get_variable("embeddings/word_embeddings", [10, 6])
    return tower(pooled) - tower(c) + tf.reduce_mean(again)
'''

_RNG = np.random.RandomState(3)
IDS = _RNG.randint(0, 10, size=(4, 3)).astype("int32")
IMAGE = _RNG.normal(size=(4, 5, 5, 2)).astype("float32")

_ORACLE = """
import numpy as np
import tensorflow.compat.v1 as tf
import tf_slim
tf.disable_eager_execution()
exec(PAYLOAD["model"])
L = type("L", (), dict(dense=staticmethod(tf.layers.dense), conv2d=staticmethod(tf.layers.conv2d),
                       dropout=staticmethod(tf.layers.dropout), layer_norm=staticmethod(tf_slim.layer_norm)))
with tf.Graph().as_default():
    tf.set_random_seed(7)
    ids = tf.constant(np.asarray(PAYLOAD["ids"], np.int32))
    image = tf.constant(np.asarray(PAYLOAD["image"], np.float32))
    out = build(ids, image, True, L)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_mean(tf.square(out)))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(s, PAYLOAD["dir"] + "/model.ckpt")
        before = s.run(out).tolist()
        s.run(train)
        after = {v.op.name: s.run(v).tolist() for v in tf.global_variables()}
    result = {
        "path": path,
        "variables": {v.op.name: v.shape.as_list() for v in tf.global_variables()},
        "trainable": sorted(v.op.name for v in tf.trainable_variables()),
        "outputs": before,
        "after_step": after,
    }
print(json.dumps(result))
"""


def _build(ids, image, is_training, L):
    namespace = {"tf": tf.compat.v1}
    exec(_MODEL, namespace)
    return namespace["build"](ids, image, is_training, L)


class ScopedNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.body = tf1.VariableScopeLayer(functools.partial(_build, L=tf1), training_argument="is_training")

    def build(self, input_shape):
        """Nothing to make here: the body makes its variables on its first call."""

    def call(self, inputs, training=None):
        return self.body(inputs["ids"], inputs["image"], training=training)


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> dict:
    directory = tmp_path_factory.mktemp("tf1_scope")
    return run_oracle(_ORACLE, {"model": _MODEL, "ids": IDS.tolist(), "image": IMAGE.tolist(), "dir": str(directory)})


def _inputs():
    return {"ids": tf.constant(IDS), "image": tf.constant(IMAGE)}


def test_variables_names_shapes_and_trainability_match_tf1(oracle: dict) -> None:
    model = ScopedNet()
    model(_inputs())
    names = model.body.tf1_absolute_names
    assert {name: list(v.shape) for name, v in names.items()} == oracle["variables"]
    assert sorted(name for name, v in names.items() if v.trainable) == oracle["trainable"]
    assert sorted(v.path for v in model.trainable_weights) == sorted(v.path for n, v in names.items() if v.trainable)
    assert len(model.weights) == len(oracle["variables"])


def test_outputs_from_the_tf1_checkpoint_match(oracle: dict) -> None:
    model = ScopedNet()
    model(_inputs())
    report = tfm.load_tf1_checkpoint(model, oracle["path"], include_optimizer=False)
    assert sorted(report.assigned.values()) == sorted(oracle["variables"])
    want = np.asarray(oracle["outputs"], np.float32)
    np.testing.assert_allclose(model(_inputs()).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tf.function(model)(_inputs()).numpy(), want, rtol=1e-5, atol=1e-6)


def test_fit_under_mirrored_strategy_takes_tf1s_sgd_step(oracle: dict, two_cpus: list[str]) -> None:
    # The runtime's MirroredStrategy (one per device set in a process): a second raw one over the
    # same devices restarts the collective keys and breaks later tests' training (tensorflow#62790).
    strategy = tfm.make_strategy("mirrored", devices=two_cpus)
    with strategy.scope():
        model = ScopedNet()
        model(_inputs())
        tfm.load_tf1_checkpoint(model, oracle["path"], include_optimizer=False)
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    data = tf.data.Dataset.from_tensor_slices(({"ids": IDS, "image": IMAGE}, np.zeros((4, 2), np.float32))).batch(4)
    tfm.fit(model, data, steps=1)
    assert len(model.weights) == len(oracle["variables"])
    for name, value in oracle["after_step"].items():
        np.testing.assert_allclose(model.body.tf1_absolute_names[name].numpy(), np.asarray(value), rtol=1e-5, atol=1e-6, err_msg=name)


def test_retraces_and_later_calls_create_no_variables() -> None:
    model = ScopedNet()
    step = tf.function(lambda inputs, training: model(inputs, training=training))
    step(_inputs(), True)
    first = {name: v for name, v in model.body.tf1_absolute_names.items()}
    step(_inputs(), False)  # a second trace
    step({"ids": tf.constant(IDS[:2]), "image": tf.constant(IMAGE[:2])}, True)  # a third, other shapes
    model(_inputs())  # eager
    assert model.body.tf1_absolute_names == first
    assert len(model.weights) == len(first)


def _single(function):
    layer = tf1.VariableScopeLayer(function)
    return layer, tf.function(layer)


def test_reuse_true_of_a_variable_not_made_yet_raises() -> None:
    def body(x):
        with tf.compat.v1.variable_scope("a", reuse=True):
            return x * tf.compat.v1.get_variable("w", [])

    with pytest.raises(ValueError, match="Variable a/w does not exist"):
        _single(body)[1](tf.ones([2]))


def test_a_second_variable_of_one_name_without_reuse_raises_in_graphs() -> None:
    def body(x):
        with tf.compat.v1.variable_scope("a"):
            w = tf.compat.v1.get_variable("w", [])
        with tf.compat.v1.variable_scope("a"):
            return x * w * tf.compat.v1.get_variable("w", [])

    with pytest.raises(ValueError, match="Variable a/w already exists"):
        _single(body)[1](tf.ones([2]))


def test_auto_reuse_shares_and_unnamed_layers_count_per_call() -> None:
    def body(x):
        outs = []
        for _ in range(2):
            with tf.compat.v1.variable_scope("shared", reuse=tf.compat.v1.AUTO_REUSE):
                outs.append(tf1.dense(x, 2, name="fc"))
        return tf1.dense(tf1.dense(outs[0] + outs[1], 2), 1)

    layer, traced = _single(body)
    x = tf.ones([3, 4])
    np.testing.assert_allclose(traced(x).numpy(), layer(x).numpy(), rtol=1e-6)
    assert sorted(layer.tf1_absolute_names) == [
        "dense/bias", "dense/kernel", "dense_1/bias", "dense_1/kernel", "shared/fc/bias", "shared/fc/kernel",
    ]


def test_functional_layers_match_keras_arithmetic() -> None:
    x = tf.constant(np.random.RandomState(0).normal(size=(2, 3, 4)).astype("float32"))
    layer = tf1.VariableScopeLayer(lambda x: tf1.layer_norm(tf1.dense(x, 5, activation=tf.nn.relu), begin_norm_axis=-1))
    got = layer(x).numpy()
    w = layer.tf1_absolute_names
    h = tf.nn.relu(tf.einsum("bti,io->bto", x, w["dense/kernel"]) + w["dense/bias"]).numpy()
    mean, var = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
    np.testing.assert_allclose(got, (h - mean) / np.sqrt(var + 1e-12), rtol=1e-4, atol=1e-5)
    assert np.all(w["LayerNorm/gamma"].numpy() == 1) and np.all(w["LayerNorm/beta"].numpy() == 0)
    assert np.all(tf1.dropout(x, 0.9).numpy() == x.numpy())


def test_float_units_and_filters_are_their_ints_as_in_tf1() -> None:
    # TF1's Keras layers took `units=hidden / 4` and `filters=channels / 4` (tensorflow-gan's
    # StarGAN generator): a float of an integral value.
    layer = tf1.VariableScopeLayer(lambda x: tf1.dense(tf1.conv2d(x, filters=64 / 4, kernel_size=3), units=8 / 2))
    out = layer(tf.ones([1, 4, 4, 3]))
    assert out.shape == (1, 2, 2, 4)
    assert layer.tf1_absolute_names["conv2d/kernel"].shape == (3, 3, 3, 16)


def test_python_arguments_pass_through_and_keras_sublayers_keep_their_weights() -> None:
    head = keras.layers.Dense(3)

    def body(features, is_training, scale):
        hidden = tf1.dense(features["x"], 4)
        hidden = tf1.dropout(hidden, rate=0.5, training=is_training)
        return head(hidden) * scale

    layer = tf1.VariableScopeLayer(body)
    out = layer(features={"x": tf.ones([2, 5])}, is_training=False, scale=2.0)
    assert out.shape == (2, 3)
    assert sorted(layer.tf1_absolute_names) == ["dense/bias", "dense/kernel"]
    assert len(layer.weights) == 2 and len(head.weights) == 2


def test_regularizers_count_once_per_call_only_when_asked() -> None:
    def body(x):
        outs = []
        for _ in range(2):  # the second pass reuses: TF1 regularized the variable once
            with tf.compat.v1.variable_scope("shared", reuse=tf.compat.v1.AUTO_REUSE):
                w = tf.compat.v1.get_variable(
                    "w", [2], initializer=tf.compat.v1.constant_initializer(3.0),
                    regularizer=lambda v: tf.reduce_sum(v) * 0.5,
                )
                outs.append(x * w)
        return outs[0] + outs[1]

    counted = tf1.VariableScopeLayer(body, regularization_losses=True)
    counted(tf.ones([2]))
    assert [float(loss) for loss in counted.losses] == [3.0]
    dropped = tf1.VariableScopeLayer(body)
    dropped(tf.ones([2]))
    assert dropped.losses == []


def test_tf2_checkpoints_save_and_restore_the_weights(tmp_path) -> None:
    model = ScopedNet()
    want = model(_inputs()).numpy()
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    restored = ScopedNet()
    restored(_inputs())
    assert not np.allclose(restored(_inputs()).numpy(), want)  # other random initial values
    tf.train.Checkpoint(model=restored).restore(path).assert_existing_objects_matched()
    np.testing.assert_allclose(restored(_inputs()).numpy(), want, rtol=1e-6)
    deferred = ScopedNet()  # restored before its first call: each weight takes its value when made
    tf.train.Checkpoint(model=deferred).restore(path)
    np.testing.assert_allclose(deferred(_inputs()).numpy(), want, rtol=1e-6)
