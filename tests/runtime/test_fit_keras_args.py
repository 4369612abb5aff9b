"""`tfm.fit`/`evaluate`/`predict` also take Keras's own arguments (issue #16).

`epochs`, `steps_per_epoch`, `initial_epoch`, `validation_data`/`validation_steps`/`validation_freq`,
`class_weight`, `callbacks`, `verbose`, under every strategy kind: Keras's loop (default, one_device,
mirrored, with the runtime's device loop when steps_per_execution > 1) and the runtime's engine
(multi_worker_mirrored here in one process; two workers and a parameter-server cluster in the
multi-process tests at the end). Every kind, in both styles (Keras's `epochs x steps_per_epoch` and
Estimator's `steps`), must reach the weights Keras's own `model.fit` reaches under the default
strategy, with Keras's History (one entry per epoch, `val_` logs).
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm

from .test_multi_process import DEADLINE_S, WAIT_S, _parameter_server_run
from .test_strategy_family import TOLERANCE, _strategy
from .workers import scenario
from .workers.processes import ProcessGroup, local_cluster, tf_config

pytestmark = pytest.mark.tf

_references: dict[int, dict] = {}


def keras_reference(steps_per_execution: int) -> dict:
    if steps_per_execution not in _references:
        _references[steps_per_execution] = scenario.keras_reference(steps_per_execution)
    return _references[steps_per_execution]


def assert_matches_keras(result: dict, steps_per_execution: int) -> None:
    expected = keras_reference(steps_per_execution)
    total = scenario.EPOCHS * scenario.STEPS_PER_EPOCH
    assert expected["global_step"] == total
    for style in ("keras", "estimator"):
        difference = scenario.max_weight_difference(result[style], expected)
        assert difference <= TOLERANCE, f"{style} style: weights differ from Keras's model.fit by {difference}"
        assert result[style]["global_step"] == total, style
    keras_style = result["keras"]
    assert keras_style["epoch"] == expected["epoch"] == list(range(scenario.EPOCHS))
    assert set(keras_style["history"]) == set(expected["history"]) == {"loss", "mae", "val_loss", "val_mae"}
    for name, values in expected["history"].items():
        assert len(values) == scenario.EPOCHS
        np.testing.assert_allclose(keras_style["history"][name], values, rtol=TOLERANCE, err_msg=f"history[{name!r}]")
    assert result["estimator"]["epoch"] == [0] and set(result["estimator"]["history"]) == {"loss", "mae"}


@pytest.mark.parametrize("steps_per_execution", [1, 5])
@pytest.mark.parametrize("kind", ["default", "one_device", "mirrored", "multi_worker_mirrored"])
def test_both_styles_reach_keras_fit(kind, steps_per_execution, two_cpus, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    result = scenario.keras_args_run(_strategy(kind, two_cpus), steps_per_execution)
    assert_matches_keras(result, steps_per_execution)


def test_class_weight_changes_training_as_keras_does():
    """The reference itself: class_weight is not a no-op (so the comparisons above check it)."""
    plain = scenario.make_model(tf.distribute.get_strategy(), 1)
    tfm.fit(plain, scenario.class_dataset(), epochs=scenario.EPOCHS, steps_per_epoch=scenario.STEPS_PER_EPOCH)
    difference = scenario.max_weight_difference({"weights": scenario.weights(plain)}, keras_reference(1))
    assert difference > 1e-3


# -- the epoch loop, Keras's rules, under Keras's loop and the engine ---------------------------

KINDS = ["default", "multi_worker_mirrored"]


def _model(kind: str, steps_per_execution: int = 1) -> keras.Model:
    return scenario.make_model(tfm.make_strategy(kind), steps_per_execution)


def _step(model: keras.Model) -> int:
    return int(model.optimizer.iterations.numpy())


class Events(keras.callbacks.Callback):
    def __init__(self, stop_after_epoch: int | None = None):
        super().__init__()
        self.events: list[tuple] = []
        self.stop_after_epoch = stop_after_epoch

    def on_train_begin(self, logs=None):
        self.events.append(("train_begin",))

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(("epoch_begin", epoch, _step(self.model)))

    def on_epoch_end(self, epoch, logs=None):
        self.events.append(("epoch_end", epoch, _step(self.model), tuple(sorted(logs))))
        if epoch == self.stop_after_epoch:
            self.model.stop_training = True

    def on_test_begin(self, logs=None):
        self.events.append(("test_begin",))

    def on_train_end(self, logs=None):
        self.events.append(("train_end", tuple(sorted(logs or {}))))


@pytest.mark.parametrize("kind", KINDS)
def test_initial_epoch_validation_freq_and_epoch_events_are_keras(kind, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    arguments = dict(
        epochs=4,
        initial_epoch=1,
        steps_per_epoch=3,
        validation_data=scenario.dataset(repeat=False),
        validation_freq=2,
    )
    reference, theirs = _model("default"), Events()
    expected = reference.fit(scenario.dataset(), callbacks=[theirs], verbose=0, shuffle=False, **arguments)
    model, ours = _model(kind), Events()
    history = tfm.fit(model, scenario.dataset(), callbacks=[ours], **arguments)
    assert history.epoch == expected.epoch == [1, 2, 3]
    assert _step(model) == _step(reference) == 9
    assert ours.events == theirs.events
    assert len(history.history["val_loss"]) == 2  # validation_freq=2: after epoch indices 1 and 3.
    for name, values in expected.history.items():
        np.testing.assert_allclose(history.history[name], values, rtol=TOLERANCE, err_msg=name)


@pytest.mark.parametrize("kind", KINDS)
def test_epochs_without_steps_per_epoch_are_passes_over_the_data(kind, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    model = _model(kind, 3)
    history = tfm.fit(model, scenario.dataset(repeat=False), epochs=2)  # 64 / 8 = 8 batches an epoch.
    assert _step(model) == 16 and history.epoch == [0, 1]
    reference = _model("default", 1)
    expected = reference.fit(scenario.dataset(repeat=False), epochs=2, verbose=0, shuffle=False)
    np.testing.assert_allclose(history.history["loss"], expected.history["loss"], rtol=TOLERANCE)


@pytest.mark.parametrize("kind", KINDS)
def test_epochs_are_exact_when_steps_per_execution_does_not_divide_them(kind, monkeypatch):
    """Keras 3.15 alone would run 2 loops of 3 = 6 steps an epoch; TF1 and the runtime run 5."""
    monkeypatch.delenv("TF_CONFIG", raising=False)
    model = _model(kind, 3)
    ends = Events()
    tfm.fit(model, scenario.dataset(), epochs=3, steps_per_epoch=5, callbacks=[ends])
    assert _step(model) == 15
    assert [e[2] for e in ends.events if e[0] == "epoch_end"] == [5, 10, 15]
    same = _model(kind, 1)
    tfm.fit(same, scenario.dataset(), steps=15)
    np.testing.assert_allclose(np.concatenate([w.ravel() for w in model.get_weights()]),
                               np.concatenate([w.ravel() for w in same.get_weights()]), atol=TOLERANCE)


@pytest.mark.parametrize("kind", KINDS)
def test_stop_training_ends_the_epochs(kind, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    model, events = _model(kind), Events(stop_after_epoch=1)
    history = tfm.fit(model, scenario.dataset(), epochs=5, steps_per_epoch=2, callbacks=[events])
    assert history.epoch == [0, 1] and _step(model) == 4
    # A TF1 hook's stop request ends the epoch and the training mid-epoch.
    model = _model(kind)
    history = tfm.fit(model, scenario.dataset(), epochs=3, steps_per_epoch=5, hooks=[tfm.hooks.StopAtStepHook(last_step=7)])
    assert _step(model) == 7 and history.epoch == [0, 1]


@pytest.mark.parametrize("kind", KINDS)
def test_checkpoints_and_the_global_step_run_across_epochs_and_calls(kind, tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = tfm.RunConfig(model_dir=tmp_path, save_checkpoints_steps=4)
    model = _model(kind, 2)
    tfm.fit(model, scenario.dataset(), epochs=2, steps_per_epoch=5, config=config)
    numbers = sorted(int(p.name[len("ckpt-") : -len(".index")]) for p in tmp_path.glob("ckpt-*.index"))
    # Saves are checked after every execution: global steps 2, 4, 5 (the epoch's end), 7, 9, 10.
    assert numbers == [0, 4, 9, 10]
    tfm.fit(model, scenario.dataset(), max_steps=12, config=config)  # Estimator's style goes on.
    restored = _model(kind, 2)
    history = tfm.fit(restored, scenario.dataset(skip=12), epochs=1, steps_per_epoch=1, config=config)
    assert _step(restored) == 13 and history.epoch == [0]


@pytest.mark.parametrize("kind", KINDS)
def test_evaluate_and_predict_take_callbacks_and_verbose(kind, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)

    class Batches(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seen = []

        def on_test_batch_end(self, batch, logs=None):
            self.seen.append(("test", batch))

        def on_predict_batch_end(self, batch, logs=None):
            self.seen.append(("predict", batch))

    model = _model(kind, 2)
    tfm.fit(model, scenario.dataset(), epochs=1, steps_per_epoch=2)
    batches = Batches()
    results = tfm.evaluate(model, scenario.dataset(), steps=4, callbacks=[batches], verbose=0)
    predictions = tfm.predict(model, scenario.dataset(repeat=False), steps=3, callbacks=[batches], verbose=0)
    assert results["global_step"] == 2 and predictions.shape == (24, 1)
    # Keras names the last, shortened execution by its planned last batch (3), the engine by its own (2).
    assert batches.seen[:3] == [("test", 1), ("test", 3), ("predict", 1)] and len(batches.seen) == 4


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"steps": 10, "epochs": 2}, ValueError, "either Estimator's `steps` or Keras's `epochs`"),
        ({"max_steps": 10, "steps_per_epoch": 5}, ValueError, "`max_steps` or Keras's `steps_per_epoch`"),
        ({"steps": 3, "initial_epoch": 1}, ValueError, "not both"),
        ({"epochs": 0}, ValueError, "`epochs` > 0"),
        ({"epochs": 2, "steps_per_epoch": 0}, ValueError, "`steps_per_epoch` > 0"),
        ({"epochs": 2, "initial_epoch": -1}, ValueError, "initial_epoch"),
        ({"epochs": 1.5}, TypeError, "epochs"),
        ({"epochs": 1, "validation_steps": 2}, ValueError, "needs `validation_data`"),
        ({"epochs": 1, "validation_data": np.zeros(3)}, TypeError, "validation_data"),
        ({"epochs": 1, "validation_data": scenario.dataset(), "validation_freq": 0}, ValueError, "validation_freq"),
        ({"epochs": 1, "validation_split": 0.2}, TypeError, "sets validation_split itself"),
        ({"epochs": 1, "class_weight": [1.0, 2.0]}, TypeError, "class_weight"),
    ],
)
def test_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        tfm.fit(_model("default"), scenario.dataset(), **kwargs)


def test_the_engine_still_rejects_what_it_does_not_run(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(TypeError, match=r"engine.*`validation_batch_size`"):
        tfm.fit(_model("multi_worker_mirrored"), scenario.dataset(), epochs=1, steps_per_epoch=1, validation_batch_size=4)


# -- multi-process kinds (slow: one test each) ---------------------------------------------------


@pytest.mark.slow
def test_multi_worker_mirrored_two_workers_speak_keras(tmp_path):
    cluster = local_cluster(worker=2)
    spec = {"role": "mwms", "mode": "keras_args", "kind": "auto", "steps_per_execution": [5]}
    with ProcessGroup(tmp_path, DEADLINE_S) as group:
        workers = [group.start(f"worker{i}", spec, tf_config=tf_config(cluster, "worker", i)) for i in range(2)]
        group.wait(workers, timeout=WAIT_S)
        results = [worker.result() for worker in workers]
    for result in results:
        assert result["strategy"] == "CollectiveAllReduceStrategy"
        assert_matches_keras(result["runs"]["5"], 5)


@pytest.mark.slow
def test_parameter_server_one_worker_speaks_keras(tmp_path):
    result = _parameter_server_run(tmp_path, 1, {"mode": "keras_args", "kind": "auto", "steps_per_execution": [5]})
    assert result["strategy"] == "ParameterServerStrategyV2" and result["is_chief"]
    assert_matches_keras(result["runs"]["5"], 5)
