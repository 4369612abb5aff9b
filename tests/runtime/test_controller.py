"""Controller: exact step counts, checkpoints and resumption, summaries, chief-only writes, model.fit parity."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import controller as controller_module

pytestmark = pytest.mark.tf

_RNG = np.random.RandomState(0)
X = _RNG.rand(64, 3).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3).astype("float32")


def dataset(batch_size=8, repeat=True):
    ds = tf.data.Dataset.from_tensor_slices((X, Y))
    return (ds.repeat() if repeat else ds).batch(batch_size, drop_remainder=True)


def same_batch_dataset():
    """Every batch is the same, so a resumed run sees the data an uninterrupted one sees."""
    return tf.data.Dataset.from_tensor_slices((X[:8], Y[:8])).batch(8).repeat()


def make_model(strategy=None, seed=7, optimizer_fn=None):
    with (strategy or tf.distribute.get_strategy()).scope():
        keras.utils.set_random_seed(seed)
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(5, activation="relu"), keras.layers.Dense(1)])
        optimizer = optimizer_fn() if optimizer_fn else keras.optimizers.SGD(0.05, momentum=0.9)
        model.compile(optimizer=optimizer, loss="mse", metrics=["mae"])
    return model


class RecordingTrainer(tfm.KerasModelTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []

    def train(self, num_steps):
        self.calls.append(int(num_steps))
        return super().train(num_steps)


def make_controller(model, data=None, *, strategy=None, trainer_cls=tfm.KerasModelTrainer, **kwargs):
    strategy = strategy or tf.distribute.get_strategy()
    trainer = trainer_cls(model, data if data is not None else dataset(), strategy=strategy)
    kwargs.setdefault("steps_per_loop", 5)
    return tfm.Controller(strategy=strategy, trainer=trainer, global_step=trainer.global_step, **kwargs), trainer


def manager_for(trainer, directory, interval=None):
    return tf.train.CheckpointManager(
        trainer.checkpoint, os.fspath(directory), max_to_keep=None, step_counter=trainer.global_step,
        checkpoint_interval=interval, checkpoint_name="ckpt",
    )


def checkpoint_numbers(directory) -> list[int]:
    return sorted(int(p.name[len("ckpt-") : -len(".index")]) for p in Path(directory).glob("ckpt-*.index"))


def read_scalars(directory) -> dict[tuple[str, int], float]:
    """(tag, step) -> value for every summary in the event files under `directory`."""
    scalars = {}
    for path in sorted(Path(directory).glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for value in event.summary.value:
                scalars[(value.tag, event.step)] = float(tf.make_ndarray(value.tensor))
    return scalars


def step(model) -> int:
    return int(model.optimizer.iterations.numpy())


# -- the outer loop ------------------------------------------------------------------------------


def test_train_hits_steps_exactly_in_loops_of_steps_per_loop():
    logs = []
    model = make_model()
    controller, trainer = make_controller(model, trainer_cls=RecordingTrainer, train_actions=[logs.append])
    last = controller.train(12)
    assert step(model) == 12 and trainer.calls == [5, 5, 2]
    assert len(logs) == 3 and logs[-1] == last and set(last) == {"loss", "mae"} and 0 < last["loss"] < 10
    assert controller.train(12) == {} and trainer.calls == [5, 5, 2]  # Already there: nothing runs.
    controller.train(13)
    assert step(model) == 13 and trainer.calls[-1] == 1


def test_training_stops_when_the_data_ends(caplog):
    model = make_model()
    controller, _ = make_controller(model, dataset(repeat=False))  # 8 batches.
    with caplog.at_level(logging.WARNING, logger="tfmigrate.runtime"):
        controller.train(20)
    assert step(model) == 8
    assert "the training data ended" in caplog.text


def test_checkpoints_at_the_interval_and_a_new_controller_resumes(tmp_path):
    reference = make_model()
    make_controller(reference, same_batch_dataset())[0].train(30)

    model = make_model()
    controller, trainer = make_controller(model, same_batch_dataset())
    controller.checkpoint_manager = manager_for(trainer, tmp_path, interval=10)
    controller.train(23)
    assert checkpoint_numbers(tmp_path) == [10, 20, 23]  # Every 10 steps, and at completion.
    saved = model.get_weights()

    resumed_model = make_model(seed=99)  # Different initial weights: all must come from the checkpoint.
    resumed_trainer = tfm.KerasModelTrainer(resumed_model, same_batch_dataset(), strategy=tf.distribute.get_strategy())
    resumed = tfm.Controller(
        strategy=tf.distribute.get_strategy(),
        trainer=resumed_trainer,
        global_step=resumed_trainer.global_step,
        steps_per_loop=5,
        checkpoint_manager=manager_for(resumed_trainer, tmp_path, interval=10),
    )
    assert step(resumed_model) == 23  # Restored when the controller was created.
    for expected, actual in zip(saved, resumed_model.get_weights()):
        np.testing.assert_array_equal(actual, expected)
    resumed.train(30)
    assert checkpoint_numbers(tmp_path) == [10, 20, 23, 30]  # 23 -> 28 -> 30: passes 30 at the end.
    for expected, actual in zip(reference.get_weights(), resumed_model.get_weights()):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)  # Optimizer slots restored too.


def test_summaries_are_written_every_summary_interval(tmp_path):
    train_logs = []
    model = make_model()
    controller, _ = make_controller(
        model,
        summary_dir=tmp_path / "train",
        eval_summary_dir=tmp_path / "eval",
        summary_interval=10,
        train_actions=[train_logs.append],
    )
    controller.evaluator = tfm.KerasModelEvaluator(model, dataset(repeat=False), strategy=tf.distribute.get_strategy())
    controller.train(20)
    results = controller.evaluate()
    controller.close()

    scalars = read_scalars(tmp_path / "train")
    assert sorted(scalars) == [(tag, s) for tag in ("loss", "mae", "steps_per_second") for s in (10, 20)]
    assert scalars[("loss", 10)] == pytest.approx(train_logs[1]["loss"], rel=1e-6)  # Loops end at 5, 10, 15, 20.
    assert scalars[("loss", 20)] == pytest.approx(train_logs[3]["loss"], rel=1e-6)
    assert scalars[("steps_per_second", 20)] > 0
    eval_scalars = read_scalars(tmp_path / "eval")
    assert eval_scalars == pytest.approx({("loss", 20): results["loss"], ("mae", 20): results["mae"]}, rel=1e-6)


def test_train_and_evaluate_alternates_and_matches_keras_evaluate():
    eval_steps = []
    model = make_model()
    controller, trainer = make_controller(model, trainer_cls=RecordingTrainer)
    controller.evaluator = tfm.KerasModelEvaluator(model, dataset(repeat=False), strategy=tf.distribute.get_strategy())
    controller.eval_actions = (lambda logs: eval_steps.append(step(model)),)
    results = controller.train_and_evaluate(train_steps=10, eval_steps=-1, eval_interval=4)
    assert eval_steps == [4, 8, 10] and trainer.calls == [4, 4, 2]
    expected = model.evaluate(dataset(repeat=False), verbose=0, return_dict=True)
    assert results == pytest.approx(expected, rel=1e-6)


# -- Keras parity --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["default", "mirrored"])
@pytest.mark.parametrize("per_example_loss", [False, True], ids=["compiled_loss", "loss_fn"])
def test_keras_model_trainer_matches_model_fit(kind, per_example_loss, two_cpus):
    strategy = tfm.make_strategy(kind, devices=two_cpus if kind == "mirrored" else None)
    adam = lambda: keras.optimizers.Adam(0.02)  # noqa: E731
    reference = make_model(strategy, optimizer_fn=adam)
    history = reference.fit(dataset(), epochs=1, steps_per_epoch=9, verbose=0, shuffle=False)

    model = make_model(strategy, optimizer_fn=adam)
    def squared_error(y, y_pred, sample_weight):  # One loss per example, like Keras's "mse".
        return tf.reduce_mean(tf.square(y - y_pred), axis=-1)

    loss_fn = squared_error if per_example_loss else None
    trainer = tfm.KerasModelTrainer(model, dataset(), strategy=strategy, loss_fn=loss_fn)
    controller = tfm.Controller(strategy=strategy, trainer=trainer, global_step=trainer.global_step, steps_per_loop=9)
    logs = controller.train(9)

    assert strategy.num_replicas_in_sync == (2 if kind == "mirrored" else 1)
    assert step(model) == 9
    for expected, actual in zip(reference.get_weights(), model.get_weights()):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)
    assert np.max(np.abs(model.get_weights()[0] - make_model(strategy).get_weights()[0])) > 1e-2  # It trained.
    # One loop of 9 steps = fit's one epoch of 9 steps: the same logged means.
    assert logs == pytest.approx({name: values[-1] for name, values in history.history.items()}, rel=1e-6)


# -- multi-worker: chief-only writes -------------------------------------------------------------


class _StrategyWith:
    def __init__(self, resolver):
        self.cluster_resolver = resolver


def _resolver(cluster, task_type, task_id):
    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type=task_type, task_id=task_id
    )


def test_is_chief():
    workers = {"worker": ["a:1", "b:1"]}
    with_chief = {"chief": ["c:1"], "worker": ["a:1", "b:1"]}
    assert tfm.is_chief(tf.distribute.get_strategy())
    assert tfm.is_chief(_StrategyWith(_resolver(workers, "worker", 0)))
    assert not tfm.is_chief(_StrategyWith(_resolver(workers, "worker", 1)))
    assert tfm.is_chief(_StrategyWith(_resolver(with_chief, "chief", 0)))
    assert not tfm.is_chief(_StrategyWith(_resolver(with_chief, "worker", 0)))
    assert not tfm.is_chief(_StrategyWith(_resolver({"ps": ["p:1"], **workers}, "ps", 0)))


def test_non_chief_workers_write_to_temporary_dirs_that_are_removed(tmp_path, monkeypatch):
    created = []
    real_mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(*args, **kwargs):
        created.append(real_mkdtemp(*args, **kwargs))
        return created[-1]

    monkeypatch.setattr(controller_module, "is_chief", lambda strategy: False)
    monkeypatch.setattr(controller_module.tempfile, "mkdtemp", recording_mkdtemp)
    model = make_model()
    trainer = tfm.KerasModelTrainer(model, dataset(), strategy=tf.distribute.get_strategy())
    controller = tfm.Controller(
        strategy=tf.distribute.get_strategy(),
        trainer=trainer,
        global_step=trainer.global_step,
        steps_per_loop=5,
        checkpoint_manager=manager_for(trainer, tmp_path / "ckpt", interval=5),
        summary_dir=tmp_path / "summaries",
    )
    assert not controller.is_chief
    controller.train(10)
    assert step(model) == 10
    assert checkpoint_numbers(tmp_path / "ckpt") == [] and not (tmp_path / "summaries").exists()
    checkpoint_dirs = [d for d in created if "checkpoint" in d]
    summary_dirs = [d for d in created if "summaries" in d]
    assert len(checkpoint_dirs) == 2 and len(summary_dirs) == 1  # Saves at 5 and 10; one writer.
    assert not any(os.path.exists(d) for d in created)


# -- validation ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def parts():
    model = make_model()
    trainer = tfm.KerasModelTrainer(model, dataset(), strategy=tf.distribute.get_strategy())
    return trainer, tf.distribute.get_strategy()


@pytest.mark.parametrize(
    "changes, error, message",
    [
        ({"steps_per_loop": 0}, ValueError, "`steps_per_loop` (0) must be a positive integer."),
        ({"steps_per_loop": None}, ValueError, "`steps_per_loop` (None) must be a positive integer when a `trainer`"),
        (
            {"summary_interval": 7, "summary_dir": "/tmp/s"},
            ValueError,
            "`summary_interval` (7) must be a multiple of `steps_per_loop` (5).",
        ),
        ({"summary_interval": 10}, ValueError, "`summary_interval` (10) is set but `summary_dir` is None"),
        (
            {"checkpoint_interval": 7},
            ValueError,
            "`checkpoint_manager.checkpoint_interval` (7) must be a multiple of `steps_per_loop` (5).",
        ),
        ({"trainer": None}, ValueError, "`trainer` and `evaluator` must not both be None."),
        ({"global_step": 3}, TypeError, "`global_step` must be a tf.Variable or keras.Variable"),
        ({"train_actions": [print, 1]}, TypeError, "`train_actions[1]` must be callable"),
        ({"strategy": "mirrored"}, TypeError, "`strategy` must be a tf.distribute.Strategy, got str."),
    ],
)
def test_constructor_validation(parts, tmp_path, changes, error, message):
    trainer, strategy = parts
    kwargs = dict(strategy=strategy, trainer=trainer, global_step=trainer.global_step, steps_per_loop=5)
    interval = changes.pop("checkpoint_interval", None)
    if interval is not None:
        kwargs["checkpoint_manager"] = manager_for(trainer, tmp_path, interval=interval)
    kwargs.update(changes)
    with pytest.raises(error) as raised:
        tfm.Controller(**kwargs)
    assert message in str(raised.value)


def test_constructor_is_keyword_only_and_requires_steps_per_loop(parts):
    trainer, strategy = parts
    with pytest.raises(TypeError):
        tfm.Controller(strategy, trainer)  # type: ignore[misc]
    with pytest.raises(TypeError, match="steps_per_loop"):
        tfm.Controller(strategy=strategy, trainer=trainer, global_step=trainer.global_step)  # type: ignore[call-arg]


def test_method_argument_validation(parts):
    trainer, strategy = parts
    controller = tfm.Controller(strategy=strategy, trainer=trainer, global_step=trainer.global_step, steps_per_loop=5)
    with pytest.raises(ValueError, match=r"`steps` \(-1\) must be a non-negative integer"):
        controller.train(-1)
    with pytest.raises(ValueError, match="`evaluator` must be given to the Controller to call `evaluate\\(\\)`"):
        controller.evaluate()
    with pytest.raises(ValueError, match="`checkpoint_manager` must be given"):
        controller.save_checkpoint()
    controller.evaluator = tfm.KerasModelEvaluator(trainer.model, dataset(repeat=False), strategy=strategy)
    with pytest.raises(ValueError, match=r"`steps` \(0\) must be a positive integer, or -1"):
        controller.evaluate(0)
    with pytest.raises(ValueError, match=r"`eval_interval` \(0\) must be a positive integer"):
        controller.train_and_evaluate(10, eval_interval=0)
