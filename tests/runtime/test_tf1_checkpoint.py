"""Continuing from a TF1 checkpoint: N steps on TF 2.15, M more migrated == N+M steps on TF 2.15.

For every optimizer the codemod emits, the oracle trains a `tf.layers.dense` stack N steps, saves
a `Saver` checkpoint, trains M more steps and records the weights; the Keras side loads the
checkpoint (weights, slots, global step) and trains the same M steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from tfmigrate.runtime import optimizers
from tfmigrate.runtime.tf1_checkpoint import load_tf1_checkpoint

from .conftest import run_oracle

pytestmark = [pytest.mark.tf, pytest.mark.oracle]

_RNG = np.random.RandomState(3)
X = _RNG.normal(size=(8, 4)).astype("float32")
Y = _RNG.normal(size=(8, 2)).astype("float32")
N, M = 5, 6

CASES = {
    "adam": ("tf.train.AdamOptimizer(0.05, beta1=0.8)", lambda: optimizers.Adam(0.05, beta_1=0.8)),
    "momentum_keras_sgd": ("tf.train.MomentumOptimizer(0.05, 0.9)", lambda: tf.keras.optimizers.SGD(0.05, momentum=0.9)),
    "momentum_runtime": (
        "tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True)",
        lambda: optimizers.Momentum(0.05, 0.9, use_nesterov=True),
    ),
    "rmsprop_centered": (
        "tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True)",
        lambda: optimizers.RMSProp(0.01, momentum=0.5, centered=True),
    ),
    "rmsprop": ("tf.train.RMSPropOptimizer(0.01)", lambda: optimizers.RMSProp(0.01)),
    "adagrad": ("tf.train.AdagradOptimizer(0.1)", lambda: tf.keras.optimizers.Adagrad(0.1, epsilon=0.0)),
    "adadelta": ("tf.train.AdadeltaOptimizer(1.0)", lambda: tf.keras.optimizers.Adadelta(1.0, rho=0.95, epsilon=1e-8)),
    "ftrl": ("tf.train.FtrlOptimizer(0.3, l2_regularization_strength=0.01)", lambda: tf.keras.optimizers.Ftrl(0.3, l2_regularization_strength=0.01)),
    "gd": ("tf.train.GradientDescentOptimizer(0.1)", lambda: tf.keras.optimizers.SGD(0.1)),
}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tf1_checkpoints")
    out = run_oracle(
        """
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        x = np.asarray(PAYLOAD["x"], np.float32); y = np.asarray(PAYLOAD["y"], np.float32)
        out = {}
        for name, source in PAYLOAD["cases"].items():
            with tf.Graph().as_default():
                gs = tf.train.get_or_create_global_step()
                hidden = tf.layers.dense(tf.constant(x), 5, activation=tf.nn.tanh,
                                         kernel_initializer=tf.constant_initializer(0.1))
                pred = tf.layers.dense(hidden, 2, kernel_initializer=tf.constant_initializer(-0.2), name="out")
                loss = tf.losses.mean_squared_error(tf.constant(y), pred)
                train = eval(source).minimize(loss, global_step=gs)
                saver = tf.train.Saver()
                with tf.Session() as s:
                    s.run(tf.global_variables_initializer())
                    for _ in range(PAYLOAD["n"]):
                        s.run(train)
                    saver.save(s, PAYLOAD["root"] + "/" + name + "/model.ckpt", global_step=gs)
                    for _ in range(PAYLOAD["m"]):
                        s.run(train)
                    out[name] = {v.op.name: s.run(v).tolist() for v in tf.trainable_variables()}
        print(json.dumps(out))
        """,
        {"x": X.tolist(), "y": Y.tolist(), "cases": {k: v[0] for k, v in CASES.items()}, "n": N, "m": M, "root": str(root)},
    )
    return {"root": root, "weights": out}


class TwoLayers(tf.keras.Model):
    """The shape the codemod gives a model_fn: layers as attributes named like TF1's scopes."""

    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(5, activation=tf.nn.tanh)
        self.out = tf.keras.layers.Dense(2)

    def call(self, features, training=False):
        return self.out(self.dense(features))


@pytest.mark.parametrize("name", sorted(CASES))
def test_continue_from_tf1_checkpoint(name: str, oracle: dict) -> None:
    model = TwoLayers()
    model.compile(optimizer=CASES[name][1](), loss="mse")
    model(X)
    model.optimizer.build(model.trainable_variables)
    report = load_tf1_checkpoint(model, str(oracle["root"] / name))
    assert report.global_step == N
    assert int(model.optimizer.iterations.numpy()) == N
    assert report.unused == []
    for _ in range(M):
        model.train_on_batch(X, Y)
    want = oracle["weights"][name]
    for tf1_name, variable in (("dense/kernel", model.dense.kernel), ("out/kernel", model.out.kernel), ("out/bias", model.out.bias)):
        np.testing.assert_allclose(variable.numpy(), np.asarray(want[tf1_name]), rtol=2e-6, atol=1e-7)


def test_missing_variables_restore_nothing(oracle: dict) -> None:
    class Extra(TwoLayers):
        def __init__(self):
            super().__init__()
            self.other = tf.keras.layers.Dense(3)

        def call(self, features, training=False):
            return self.other(super().call(features))

    model = Extra()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    model(X)
    model.optimizer.build(model.trainable_variables)
    before = model.dense.kernel.numpy().copy()
    with pytest.raises(ValueError, match=r"nothing was restored.*other/kernel"):
        load_tf1_checkpoint(model, str(oracle["root"] / "gd"))
    np.testing.assert_array_equal(model.dense.kernel.numpy(), before)


def test_assignment_map_renames_scopes(oracle: dict) -> None:
    class Scoped(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.encoder = tf.keras.layers.Dense(5, activation=tf.nn.tanh)
            self.out = tf.keras.layers.Dense(2)

        def call(self, features, training=False):
            return self.out(self.encoder(features))

    model = Scoped()
    model(X)
    report = load_tf1_checkpoint(model, str(oracle["root"] / "gd"), assignment_map={"dense/": "encoder/"}, include_optimizer=False)
    assert report.assigned
    reader = tf.train.load_checkpoint(str(oracle["root"] / "gd"))
    np.testing.assert_array_equal(model.encoder.kernel.numpy(), reader.get_tensor("dense/kernel"))


def test_partitioned_tf1_variables_load_whole(tmp_path) -> None:
    """A kernel a TF1 partitioner split (Saver stores it as slices of one key) loads as one weight."""
    checkpoint = run_oracle(
        """
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        with tf.Graph().as_default():
            partitioner = tf.fixed_size_partitioner(3)
            with tf.variable_scope("dense", partitioner=partitioner):
                kernel = tf.get_variable("kernel", [7, 2], initializer=tf.random_normal_initializer(seed=1))
            bias = tf.get_variable("dense/bias", [2], initializer=tf.ones_initializer())
            with tf.Session() as s:
                s.run(tf.global_variables_initializer())
                value = s.run(tf.convert_to_tensor(kernel))
                tf.train.Saver().save(s, PAYLOAD + "/model.ckpt", global_step=3)
        print(json.dumps(value.tolist()))
        """,
        str(tmp_path),
    )

    class One(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        def call(self, features, training=False):
            return self.dense(features)

    model = One()
    model(np.zeros((1, 7), np.float32))
    report = load_tf1_checkpoint(model, str(tmp_path), include_optimizer=False)
    np.testing.assert_array_equal(model.dense.kernel.numpy(), np.asarray(checkpoint, np.float32))
    np.testing.assert_array_equal(model.dense.bias.numpy(), np.ones(2))
    assert report.unused == []


def test_part_n_keys_are_concatenated_along_their_split_axis(tmp_path) -> None:
    """Checkpoints whose keys are `<name>/part_N` (one tensor per shard) are stitched together."""
    full = np.arange(14, dtype=np.float32).reshape(7, 2)
    with tf.Graph().as_default():
        parts = {f"dense/kernel/part_{i}": tf.compat.v1.Variable(chunk) for i, chunk in enumerate(np.split(full, [3, 5]))}
        parts["dense/bias"] = tf.compat.v1.Variable(np.zeros(2, np.float32))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.train.Saver(parts).save(session, str(tmp_path / "model.ckpt"))
    model = tf.keras.Sequential([tf.keras.Input((7,)), tf.keras.layers.Dense(2, name="dense")])
    report = load_tf1_checkpoint(model, str(tmp_path), include_optimizer=False)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), full)
    assert report.unused == []


@pytest.mark.parametrize(
    "name,amap,want",
    [
        ("encoder/dense/kernel", {"encoder/": "encoder/"}, "encoder/dense/kernel"),
        ("encoder/dense/kernel", {"bert/": "encoder/"}, "bert/dense/kernel"),
        ("encoder/dense/kernel", {"/": "encoder/"}, "dense/kernel"),
        ("dense/kernel", {"pretrain/": "/"}, "pretrain/dense/kernel"),
        ("head/kernel", {"encoder/": "encoder/"}, None),
        ("head/kernel", {"old/w": "head/kernel"}, "old/w"),
        ("encoder/dense/kernel/Adam", {"encoder/": "encoder/"}, "encoder/dense/kernel/Adam"),
    ],
)
def test_assignment_map_follows_init_from_checkpoint(name, amap, want) -> None:
    """TF1's init_from_checkpoint forms: checkpoint name/scope -> current name/scope."""
    from tfmigrate.runtime.tf1_checkpoint import _mapped_name

    assert _mapped_name(name, amap) == want


def test_scope_mapped_to_a_variable_is_an_error() -> None:
    from tfmigrate.runtime.tf1_checkpoint import _mapped_name

    with pytest.raises(ValueError, match="scope must map to a scope"):
        _mapped_name("encoder/dense/kernel", {"old_variable": "encoder/"})
