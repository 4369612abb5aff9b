"""fit/evaluate: TF1 Estimator.train/evaluate semantics on Keras 3 (steps, max_steps, checkpoints)."""

from __future__ import annotations

import os
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm

pytestmark = pytest.mark.tf

_RNG = np.random.RandomState(0)
X = _RNG.rand(64, 3).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3).astype("float32")


def dataset(batch_size=4, repeat=True):
    ds = tf.data.Dataset.from_tensor_slices((X, Y))
    ds = ds.repeat() if repeat else ds
    return ds.batch(batch_size, drop_remainder=True)


def make_model(*, steps_per_execution=1, strategy=None, learning_rate=0.05, optimizer=None, metrics=("mae",)):
    with (strategy or tf.distribute.get_strategy()).scope():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")])
        model.compile(
            optimizer=optimizer or keras.optimizers.SGD(learning_rate),
            loss="mse",
            metrics=list(metrics),
            steps_per_execution=steps_per_execution,
        )
    return model


def step(model) -> int:
    return int(model.optimizer.iterations.numpy())


def checkpoint_numbers(model_dir) -> list[int]:
    return sorted(int(p.name[len("ckpt-") : -len(".index")]) for p in Path(model_dir).glob("ckpt-*.index"))


class BatchEnds(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.steps = []

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append(int(self.model.optimizer.iterations.numpy()))


def test_steps_accumulate_and_max_steps_is_absolute():
    model = make_model()
    assert tfm.fit(model, dataset(), steps=3) is not None and step(model) == 3
    tfm.fit(model, dataset(), steps=2)
    assert step(model) == 5
    assert tfm.fit(model, dataset(), max_steps=4) is None and step(model) == 5  # Already past: no-op.
    history = tfm.fit(model, dataset(), max_steps=8)
    assert step(model) == 8 and set(history.history) == {"loss", "mae"}


def test_no_steps_trains_until_the_data_ends():
    model = make_model(steps_per_execution=3)
    tfm.fit(model, dataset(repeat=False))  # 64 / 4 = 16 batches.
    assert step(model) == 16


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"steps": 2, "max_steps": 5}, ValueError),
        ({"steps": 0}, ValueError),
        ({"max_steps": -1}, ValueError),
        ({"steps": 1.5}, TypeError),
        ({"steps": 1, "epochs": 3}, ValueError),  # Estimator's steps or Keras's epochs, not both.
    ],
)
def test_bad_step_arguments(kwargs, error):
    with pytest.raises(error):
        tfm.fit(make_model(), dataset(), **kwargs)


def test_uncompiled_model_is_rejected():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="compile"):
        tfm.fit(model, dataset(), steps=1)


@pytest.mark.parametrize("steps_per_execution", [2, 4])
def test_steps_not_a_multiple_of_steps_per_execution_are_exact(steps_per_execution):
    """Keras 3.15 alone runs whole loops (steps_per_epoch=5, steps_per_execution=4 -> 8 steps)."""
    overshoot = make_model(steps_per_execution=4)
    overshoot.fit(dataset(), epochs=1, steps_per_epoch=5, verbose=0, shuffle=False)
    assert step(overshoot) == 8  # What the runtime must not do; if Keras changes, revisit the workaround.

    model = make_model(steps_per_execution=steps_per_execution)
    ends = BatchEnds()
    tfm.fit(model, dataset(), steps=5, callbacks=[ends])
    assert step(model) == 5
    assert ends.steps == list(range(steps_per_execution, 5, steps_per_execution)) + [5]  # Loops, last one shortened.
    tfm.fit(model, dataset(), max_steps=7)
    assert step(model) == 7


def test_same_result_as_one_step_per_execution():
    reference = make_model(steps_per_execution=1)
    looped = make_model(steps_per_execution=4)
    tfm.fit(reference, dataset(), steps=7)
    tfm.fit(looped, dataset(), steps=7)
    np.testing.assert_allclose(looped.get_weights()[0], reference.get_weights()[0], rtol=1e-6)


def test_second_model_object_restores_from_model_dir(tmp_path):
    config = tfm.RunConfig(model_dir=tmp_path, save_checkpoints_steps=100)
    first = make_model()
    tfm.fit(first, dataset(), max_steps=6, config=config)
    assert checkpoint_numbers(tmp_path) == [0, 6]

    second = make_model(learning_rate=0.05)
    assert tfm.fit(second, dataset(), max_steps=6, config=config) is None  # Restored step 6: nothing to do.
    assert step(second) == 6
    np.testing.assert_array_equal(second.get_weights()[0], first.get_weights()[0])

    third = make_model()
    tfm.fit(third, dataset(), steps=2, config=config)  # Continues from the restored step.
    assert step(third) == 8 and checkpoint_numbers(tmp_path) == [0, 6, 8]
    tfm.fit(first, dataset(), steps=1, config=config)  # `first` is not restored again (it trained here).
    assert step(first) == 7


def test_model_dir_argument_overrides_config(tmp_path):
    model = make_model()
    tfm.fit(model, dataset(), steps=2, config=tfm.RunConfig(model_dir=tmp_path / "a"), model_dir=tmp_path / "b")
    assert not (tmp_path / "a").exists() and checkpoint_numbers(tmp_path / "b") == [0, 2]


def test_checkpoints_every_save_checkpoints_steps_like_tf1(tmp_path):
    # TF 2.15 Estimator with save_checkpoints_steps=2 (use_tpu=False), measured on the oracle:
    # train(steps=5) -> model.ckpt-{0,2,4,5}; train(steps=3) -> model.ckpt-{2,4,5,7,8} (keep 5).
    config = tfm.RunConfig(model_dir=tmp_path, save_checkpoints_steps=2)
    model = make_model()
    tfm.fit(model, dataset(), steps=5, config=config)
    assert checkpoint_numbers(tmp_path) == [0, 2, 4, 5]
    tfm.fit(model, dataset(), steps=3, config=config)
    assert checkpoint_numbers(tmp_path) == [2, 4, 5, 7, 8]
    assert tfm.latest_checkpoint(tmp_path).endswith("ckpt-8")


def test_checkpoints_on_loop_boundaries_with_steps_per_execution(tmp_path):
    config = tfm.RunConfig(model_dir=tmp_path, save_checkpoints_steps=3, keep_checkpoint_max=2,
                           tpu_config=tfm.TPUConfig(iterations_per_loop=2))
    model = make_model(steps_per_execution=config.iterations_per_loop)
    tfm.fit(model, dataset(), steps=9, config=config)  # Loops end at 2, 4, 6, 8, 9.
    assert checkpoint_numbers(tmp_path) == [8, 9]  # Saved 0, 4, 8, 9; two kept.
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == ["ckpt-8", "ckpt-9"]


def test_evaluate_returns_loss_metrics_and_global_step(tmp_path):
    model = make_model()
    tfm.fit(model, dataset(), steps=4, config=tfm.RunConfig(model_dir=tmp_path))
    results = tfm.evaluate(model, dataset(repeat=False), steps=3)
    assert set(results) == {"loss", "mae", "global_step"}
    assert results["global_step"] == 4 and isinstance(results["global_step"], int)
    assert all(isinstance(results[k], float) for k in ("loss", "mae"))
    expected = model.evaluate(dataset(repeat=False), steps=3, verbose=0, return_dict=True)
    assert results["loss"] == pytest.approx(expected["loss"], rel=1e-6)
    # Equal batches: Keras's batch-weighted mean is Estimator's mean of per-batch losses.
    per_batch = [float(model.evaluate(x, y, verbose=0, return_dict=True)["loss"]) for x, y in dataset().take(3)]
    assert results["loss"] == pytest.approx(np.mean(per_batch), rel=1e-5)


def test_evaluate_loss_is_the_unweighted_mean_of_batch_losses_like_estimator(tmp_path):
    # Estimator's `loss` was tf.compat.v1.metrics.mean(loss): every batch counts once, a short last
    # batch too (30 examples in batches of 16: 16 + 14). Keras alone weights batches by size.
    model = make_model()
    tfm.fit(model, dataset(), steps=4, config=tfm.RunConfig(model_dir=tmp_path))
    short = tf.data.Dataset.from_tensor_slices((X[:30], Y[:30])).batch(16)
    per_batch = [float(model.evaluate(x, y, verbose=0, return_dict=True)["loss"]) for x, y in short]
    assert per_batch[0] != pytest.approx(per_batch[1], rel=1e-3)
    results = tfm.evaluate(model, short)
    assert results["loss"] == pytest.approx(np.mean(per_batch), rel=1e-6)
    # The metrics stay example-weighted, as TF1's tf.metrics were.
    weighted = model.evaluate(short, verbose=0, return_dict=True)
    assert results["mae"] == pytest.approx(weighted["mae"], rel=1e-6)
    # Training's own loss log is untouched (Keras's batch-size weighting).
    history = model.fit(short, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_evaluate_loss_counts_no_empty_batch_on_input_of_unknown_size(tmp_path):
    # Input of unknown size (a filter, or a TF1 iterator's get_next run through a generator): Keras's
    # last evaluation step can see no examples. TF1 ran no such batch; the loss is still the mean of
    # the batches that held examples.
    model = make_model()
    tfm.fit(model, dataset(), steps=4, config=tfm.RunConfig(model_dir=tmp_path))
    batches = tf.data.Dataset.from_tensor_slices((X[:30], Y[:30])).batch(10)
    per_batch = [float(model.evaluate(x, y, verbose=0, return_dict=True)["loss"]) for x, y in batches]
    unknown = batches.filter(lambda x, y: True)
    assert int(unknown.cardinality()) == int(tf.data.UNKNOWN_CARDINALITY)
    results = tfm.evaluate(model, unknown)
    assert results["loss"] == pytest.approx(np.mean(per_batch), rel=1e-6)


def test_evaluate_restores_a_new_model_object_first(tmp_path):
    config = tfm.RunConfig(model_dir=tmp_path)
    trained = make_model()
    tfm.fit(trained, dataset(), steps=6, config=config)
    fresh = make_model()
    results = tfm.evaluate(fresh, dataset(), steps=2, config=config)
    assert results["global_step"] == 6
    assert results == tfm.evaluate(trained, dataset(), steps=2, config=config)


def test_evaluate_without_a_checkpoint_raises_like_tf1(tmp_path):
    with pytest.raises(ValueError, match="Could not find trained model"):
        tfm.evaluate(make_model(), dataset(), steps=1, model_dir=tmp_path)


def _write_tf1_checkpoint(model_dir: Path) -> None:
    with tf.Graph().as_default():
        tf.compat.v1.get_variable("dense/kernel", [3, 1])
        tf.compat.v1.train.get_or_create_global_step()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, str(model_dir / "model.ckpt"), global_step=7)


def test_tf1_checkpoint_that_does_not_fit_the_model_raises_clearly(tmp_path):
    _write_tf1_checkpoint(tmp_path)
    assert tfm.is_tf1_checkpoint(tfm.latest_checkpoint(tmp_path))
    # The checkpoint has dense/kernel but no dense/bias and no optimizer slots: nothing is restored.
    with pytest.raises(ValueError, match=r"model\.ckpt-7.*nothing was restored.*Missing: .*bias"):
        tfm.fit(make_model(), dataset(), steps=1, model_dir=tmp_path)
    with pytest.raises(ValueError, match="model.ckpt-7"):
        tfm.evaluate(make_model(), dataset(), steps=1, model_dir=tmp_path)


def test_restore_keeps_the_compiled_learning_rate(tmp_path):
    tfm.fit(make_model(learning_rate=0.5), dataset(), steps=2, model_dir=tmp_path)
    resumed = make_model(learning_rate=0.01)
    tfm.fit(resumed, dataset(), steps=1, model_dir=tmp_path)
    assert step(resumed) == 3
    assert float(resumed.optimizer.learning_rate.numpy()) == pytest.approx(0.01)


def test_restore_brings_back_optimizer_slots(tmp_path):
    adam = lambda: keras.optimizers.Adam(0.01)  # noqa: E731
    continuous = make_model(optimizer=adam())
    tfm.fit(continuous, dataset(), steps=6)
    split = make_model(optimizer=adam())
    tfm.fit(split, dataset(), steps=3, model_dir=tmp_path)
    resumed = make_model(optimizer=adam())
    # Same batches as steps 4-6 of `continuous`: skip the 3 batches the first run consumed.
    tfm.fit(resumed, dataset().skip(3), steps=3, model_dir=tmp_path)
    np.testing.assert_allclose(resumed.get_weights()[0], continuous.get_weights()[0], rtol=1e-6)


def test_mismatched_checkpoint_raises(tmp_path):
    tfm.fit(make_model(), dataset(), steps=1, model_dir=tmp_path)
    with tf.distribute.get_strategy().scope():
        other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])
        other.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="does not match the model"):
        tfm.fit(other, dataset(), steps=1, model_dir=tmp_path)


def test_tf_random_seed_is_applied_once_per_model_before_building(monkeypatch):
    calls = []
    real = keras.utils.set_random_seed

    def spy(seed):
        calls.append((seed, [m.built for m in models]))
        real(seed)

    monkeypatch.setattr(keras.utils, "set_random_seed", spy)

    def unbuilt():
        model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])  # Built by fit.
        model.compile(optimizer="sgd", loss="mse")
        return model

    models = [unbuilt(), unbuilt()]
    config = tfm.RunConfig(tf_random_seed=1234)
    tfm.fit(models[0], dataset(), steps=1, config=config)
    tfm.fit(models[0], dataset(), steps=1, config=config)
    tfm.evaluate(models[1], dataset(), steps=1, config=config)
    tfm.fit(models[1], dataset(), steps=1, config=config)
    assert calls == [(1234, [False, False]), (1234, [True, False])]
    assert all(m.built for m in models)


def test_input_fn_data_and_context_functions():
    def input_fn(params, mode):
        assert mode == "train"
        return dataset(params["batch_size"])

    model = make_model()
    tfm.fit(model, tfm.input_fn_data(input_fn, batch_size=8, params={}), steps=3)
    tfm.fit(model, lambda ctx: dataset(ctx.get_per_replica_batch_size(8)), steps=2)
    assert step(model) == 5
    with pytest.raises(TypeError, match="tf.data.Dataset"):
        tfm.fit(model, [1, 2, 3], steps=1)


def test_mirrored_steps_per_execution_is_exact_and_matches_one_replica(two_cpus):
    """Keras 3.15's own loop fails here (keras-team/keras#19246); the runtime's loop must not."""
    strategy = tfm.make_strategy("mirrored", devices=two_cpus)
    mirrored = make_model(steps_per_execution=4, strategy=strategy)
    single = make_model(steps_per_execution=1)
    ends = BatchEnds()
    tfm.fit(mirrored, dataset(8), steps=6, callbacks=[ends])
    tfm.fit(single, dataset(8), steps=6)
    assert step(mirrored) == 6 and ends.steps == [4, 6]
    np.testing.assert_allclose(mirrored.get_weights()[0], single.get_weights()[0], rtol=1e-5, atol=1e-7)
    results = tfm.evaluate(mirrored, dataset(8, repeat=False))
    assert results["global_step"] == 6
    assert results["loss"] == pytest.approx(tfm.evaluate(single, dataset(8, repeat=False))["loss"], rel=1e-5)


def test_mirrored_per_replica_data_stops_exactly_at_the_end(two_cpus):
    """Keras's loop would start an 11th step on the exhausted input and count it (global step 11)."""
    strategy = tfm.make_strategy("mirrored", devices=two_cpus)
    model = make_model(steps_per_execution=1, strategy=strategy)
    tfm.fit(model, lambda ctx: dataset(2, repeat=False).take(20))  # 20 elements, 2 per step.
    assert step(model) == 10


def test_different_models_in_turn_under_mirrored(two_cpus):
    """Two programs' worth of models in one process: what broke with one MirroredStrategy per model."""
    for width in (3, 2):
        strategy = tfm.make_strategy("mirrored", devices=two_cpus)
        with strategy.scope():
            model = keras.Sequential([keras.Input((width,)), keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse", steps_per_execution=2)
        tfm.fit(model, lambda ctx, w=width: tf.data.Dataset.from_tensor_slices((X[:, :w], Y)).batch(2), steps=3)
        assert step(model) == 3


class GetVariableModel(keras.Model):
    """What the codemod writes for `tf.get_variable` weights: made in `build`, randomly initialized."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)

    def build(self, input_shape):
        self.table = self.add_weight(name="table", shape=[3, 4], initializer=keras.initializers.TruncatedNormal(stddev=1.0))

    def call(self, features, training=False):
        return self.dense(tf.matmul(features, self.table))


def test_tf_random_seed_seeds_get_variable_weights() -> None:
    """RunConfig(tf_random_seed) makes a migrated program's random initial weights repeatable."""
    from tfmigrate.runtime import RunConfig

    data = tf.data.Dataset.from_tensor_slices((np.ones((8, 3), np.float32), np.ones((8, 1), np.float32))).batch(4)
    weights = []
    for _ in range(2):
        config = RunConfig(tf_random_seed=7)
        tfm.seed_from_config(config)  # what the codemod writes before making the model
        model = GetVariableModel()
        model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
        tfm.fit(model, data, steps=1, config=config)
        weights.append([w.numpy() for w in (model.table, model.dense.kernel)])
    np.testing.assert_array_equal(weights[0][0], weights[1][0])
    np.testing.assert_array_equal(weights[0][1], weights[1][1])
    assert np.std(weights[0][0]) > 0.1
