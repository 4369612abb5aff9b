"""`runtime.ctl.EstimatorLoop`: TF1 Estimator's train/evaluate/predict contract around a generated loop.

`Loop` below is what `tfmigrate --target ctl` writes for a one-layer regression model_fn.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm

pytestmark = pytest.mark.tf

X = np.random.RandomState(0).uniform(-1, 1, (32, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


class Loop(tfm.ctl.EstimatorLoop):
    def __init__(self, strategy, *, config=None, model_dir=None, steps_per_loop=1):
        super().__init__(strategy, config=config, model_dir=model_dir, steps_per_loop=steps_per_loop)
        with strategy.scope():
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer="zeros")])
            self.optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
            self.loss_object = tf.keras.losses.MeanSquaredError(reduction=None)
            self.checkpoint = tf.train.Checkpoint(model=self.model, optimizer=self.optimizer)

    def train_step(self, batch):
        features, labels = batch
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(self.loss_object(labels, self.model(features, training=True)))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.model.trainable_variables), self.model.trainable_variables))
        return loss

    @tf.function
    def train_steps(self, iterator, steps):
        for _ in tf.range(steps):
            batch = iterator.get_next_as_optional()
            if not batch.has_value():
                break
            self.strategy.run(self.train_step, args=(batch.get_value(),))

    def test_step(self, batch):
        features, labels = batch
        return tf.nn.compute_average_loss(self.loss_object(labels, self.model(features, training=False)))

    @tf.function
    def test_steps(self, iterator, steps):
        loss_sum, steps_run = tf.constant(0.0), tf.constant(0)
        for _ in tf.range(steps):
            batch = iterator.get_next_as_optional()
            if not batch.has_value():
                break
            loss_sum += self.strategy.reduce("SUM", self.strategy.run(self.test_step, args=(batch.get_value(),)), axis=None)
            steps_run += 1
        return loss_sum, steps_run


def data(repeat=True):
    dataset = tf.data.Dataset.from_tensor_slices((X, Y))
    return (dataset.repeat() if repeat else dataset).batch(8)


def test_steps_max_steps_and_checkpoints(tmp_path):
    config = tfm.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=4, keep_checkpoint_max=10)
    loop = Loop(tfm.make_strategy("default"), config=config, steps_per_loop=3)
    loop.train(data(), steps=7)  # Loops of 3, 3, 1 steps.
    assert loop.global_step == 7
    loop.train(data(), max_steps=5)  # Already there: a no-op.
    assert loop.global_step == 7
    saved = sorted(int(p.name.split("-")[1].split(".")[0]) for p in tmp_path.glob("ckpt-*.index"))
    assert saved == [0, 6, 7]  # At the start, the first loop end 4 steps after it, the end.
    results = loop.evaluate(data(repeat=False))  # Until the input ends: 4 batches.
    assert set(results) == {"loss", "global_step"} and results["global_step"] == 7
    again = Loop(tfm.make_strategy("default"), config=config, steps_per_loop=3)
    assert again.evaluate(data(repeat=False)) == results  # Restored from model_dir.
    again.train(data(repeat=False), steps=100)  # Stops when the 4 batches end.
    assert again.global_step == 11


def test_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError, match="steps_per_loop"):
        Loop(tfm.make_strategy("default"), steps_per_loop=0)
    loop = Loop(tfm.make_strategy("default"), model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="both `steps` and `max_steps`"):
        loop.train(data(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="Could not find trained model"):
        loop.evaluate(data(), steps=1)


# -- CannedLoop: a canned estimator's Keras model (`tfm.canned`) driven by the loop ----------------

_RNG = np.random.RandomState(1)
CX = _RNG.normal(size=(48, 3)).astype(np.float32)
CY = (CX.sum(axis=1) > 0).astype(np.int64)


def _canned_input(repeat=False):
    dataset = tf.data.Dataset.from_tensor_slices(({"a": CX[:, 0], "b": CX[:, 1:]}, CY))
    return (dataset.repeat() if repeat else dataset).batch(8)


def _canned(config, strategy):
    def columns():
        return [tfm.feature_columns.numeric_column("a"), tfm.feature_columns.numeric_column("b", shape=(2,))]

    tfm.seed_from_config(config)
    with strategy.scope():
        return tfm.canned.DNNLinearCombinedClassifier(
            linear_feature_columns=columns(), dnn_feature_columns=columns(), dnn_hidden_units=[4], api="v1"
        )


def _data(config, mode):
    input_fn = (lambda: _canned_input(repeat=True)) if mode == "train" else _canned_input
    return tfm.input_fn_data(input_fn, batch_size=None, mode=mode, per_replica=True, config=config)


def test_canned_loop_gives_the_keras_targets_numbers(tmp_path):
    """Wide & deep (two optimizers): CannedLoop's train/evaluate/predict and checkpoints are tfm.fit's."""
    outcomes = []
    for target in ("keras", "ctl"):
        config = tfm.RunConfig(tf_random_seed=3, model_dir=str(tmp_path / target))
        strategy = tfm.strategy_from_config(config)
        model = _canned(config, strategy)
        if target == "ctl":
            loop = tfm.ctl.CannedLoop(strategy, model, config=config, steps_per_loop=3)
            loop.train(_data(config, "train"), steps=7)
            first = loop.evaluate(_data(config, "eval"))
            predictions = list(loop.predict(_data(config, "infer")))
            loop.train(_data(config, "train"), max_steps=10)
            second = loop.evaluate(_data(config, "eval"), steps=3)
        else:
            tfm.fit(model, _data(config, "train"), steps=7, config=config)
            first = tfm.evaluate(model, _data(config, "eval"), config=config)
            predictions = list(tfm.predict_examples(model, _data(config, "infer"), config=config))
            tfm.fit(model, _data(config, "train"), max_steps=10, config=config)
            second = tfm.evaluate(model, _data(config, "eval"), steps=3, config=config)
        outcomes.append((first, second, predictions))
    (k1, k2, kp), (c1, c2, cp) = outcomes
    assert set(c1) == set(k1) and {"loss", "average_loss", "accuracy", "auc", "global_step"} <= set(c1)
    assert c1["global_step"] == 7 and c2["global_step"] == 10
    for want, got in ((k1, c1), (k2, c2)):
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-6, err_msg=key)
    assert len(cp) == len(kp) == 48
    for want, got in zip(kp, cp):
        np.testing.assert_allclose(got["logits"], want["logits"], rtol=1e-6)
        assert got["classes"] == want["classes"]
    assert tf.train.latest_checkpoint(str(tmp_path / "ctl")).endswith("ckpt-10")


def test_canned_loop_continues_the_keras_targets_checkpoint(tmp_path):
    config = tfm.RunConfig(tf_random_seed=3, model_dir=str(tmp_path))
    strategy = tfm.strategy_from_config(config)
    model = _canned(config, strategy)
    tfm.fit(model, _data(config, "train"), steps=4, config=config)
    want = tfm.evaluate(model, _data(config, "eval"), config=config)
    loop = tfm.ctl.CannedLoop(strategy, _canned(config, strategy), config=config)
    got = loop.evaluate(_data(config, "eval"))
    assert got["global_step"] == 4
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-6)
    loop.train(_data(config, "train"), max_steps=6)
    assert loop.global_step == 6


def test_canned_loop_takes_canned_models_only():
    strategy = tf.distribute.get_strategy()
    with pytest.raises(TypeError, match="canned"):
        tfm.ctl.CannedLoop(strategy, tf.keras.Sequential([tf.keras.layers.Dense(1)]))


@pytest.mark.parametrize("target", ["keras", "ctl"])
def test_wide_and_deep_checkpoint_path_gives_every_optimizer_back(tmp_path, target):
    """`evaluate`/`predict(checkpoint_path=<older checkpoint>)` of wide & deep leave training where
    it was: both parts' optimizers (the linear part's Ftrl slots and step too), not only
    `model.optimizer`, get their own values back, so training on equals training without them."""

    def run(directory, with_checkpoint_path):
        config = tfm.RunConfig(tf_random_seed=3, model_dir=str(directory), save_checkpoints_steps=3, keep_checkpoint_max=10)
        strategy = tfm.strategy_from_config(config)
        model = _canned(config, strategy)
        if target == "ctl":
            loop = tfm.ctl.CannedLoop(strategy, model, config=config)
            loop.train(_data(config, "train"), steps=7)
            if with_checkpoint_path:
                loop.evaluate(_data(config, "eval"), checkpoint_path=str(directory / "ckpt-3"))
                list(loop.predict(_data(config, "infer"), checkpoint_path=str(directory / "ckpt-3")))
            loop.train(_data(config, "train"), steps=5)
            return loop.evaluate(_data(config, "eval")), model
        tfm.fit(model, _data(config, "train"), steps=7, config=config)
        if with_checkpoint_path:
            tfm.evaluate(model, _data(config, "eval"), config=config, checkpoint_path=str(directory / "ckpt-3"))
            list(tfm.predict_examples(model, _data(config, "infer"), config=config, checkpoint_path=str(directory / "ckpt-3")))
        tfm.fit(model, _data(config, "train"), steps=5, config=config)
        return tfm.evaluate(model, _data(config, "eval"), config=config), model

    want, plain = run(tmp_path / "plain", False)
    got, model = run(tmp_path / "with", True)
    assert got["global_step"] == want["global_step"] == 12
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-6, err_msg=key)
    linear = model.part_optimizers["linear"]
    assert int(linear.iterations.numpy()) == int(plain.part_optimizers["linear"].iterations.numpy())
    for mine, theirs in zip(linear.variables, plain.part_optimizers["linear"].variables):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)
