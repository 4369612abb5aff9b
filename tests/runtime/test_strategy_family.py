"""fit/evaluate/predict under every single-process strategy kind give the default strategy's numbers.

Each kind trains `workers.scenario` (a small dense model, constant initial weights, SGD, the same
global batches) for 10 steps with steps_per_execution 1 and 5, then evaluates and predicts. Keras's
own loops run under default/one_device/central_storage (with the runtime's fix of CentralStorage
metric sums) and mirrored (the runtime's device loop when steps_per_execution > 1); the runtime's
engine runs under a single-process MultiWorkerMirroredStrategy. The multi-process kinds are in
test_multi_process.py.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import engine

from .workers import scenario

pytestmark = pytest.mark.tf

TOLERANCE = 1e-5

_references: dict[tuple[int, str], dict] = {}


def reference(steps_per_execution: int, data: str = "dataset") -> dict:
    """The default strategy's results (computed once per session)."""
    key = (steps_per_execution, data)
    if key not in _references:
        _references[key] = scenario.run(tfm.make_strategy("default"), steps_per_execution, data=data)
    return _references[key]


def assert_matches_reference(result: dict, expected: dict) -> None:
    difference = scenario.max_weight_difference(result, expected)
    assert difference <= TOLERANCE, f"weights differ from the default strategy's by {difference}"
    assert result["global_step"] == expected["global_step"] == scenario.STEPS
    assert set(result["history"]) == set(expected["history"]) == {"loss", "mae"}
    for name, values in expected["history"].items():
        np.testing.assert_allclose(result["history"][name], values, rtol=TOLERANCE, err_msg=f"history[{name!r}]")
    assert set(result["evaluate"]) == set(expected["evaluate"]) == {"loss", "mae", "global_step"}
    for name, value in expected["evaluate"].items():
        assert result["evaluate"][name] == pytest.approx(value, rel=TOLERANCE), f"evaluate[{name!r}]"
    assert len(result["predictions"]) == len(expected["predictions"]) == scenario.PREDICT_STEPS * scenario.GLOBAL_BATCH
    np.testing.assert_allclose(result["predictions"], expected["predictions"], atol=TOLERANCE)


def _strategy(kind: str, cpus: list[str]) -> tf.distribute.Strategy:
    options = {
        "default": {},
        "one_device": {"devices": [cpus[1]]},
        "mirrored": {"devices": cpus},
        "central_storage": {"devices": cpus, "parameter_device": cpus[0]},
        "multi_worker_mirrored": {},  # No TF_CONFIG: this process alone.
    }[kind]
    return tfm.make_strategy(kind, **options)


@pytest.mark.parametrize("steps_per_execution", [1, 5])
@pytest.mark.parametrize("kind", ["default", "one_device", "mirrored", "central_storage", "multi_worker_mirrored"])
def test_kind_matches_the_default_strategy(kind, steps_per_execution, two_cpus, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    strategy = _strategy(kind, two_cpus)
    if kind in ("mirrored", "central_storage"):
        assert strategy.num_replicas_in_sync == 2
    result = scenario.run(strategy, steps_per_execution)
    assert_matches_reference(result, reference(steps_per_execution))


def test_input_fn_data_under_central_storage_and_multi_worker_mirrored(two_cpus, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    for kind in ("central_storage", "multi_worker_mirrored"):
        result = scenario.run(_strategy(kind, two_cpus), 5, data="input_fn")
        assert_matches_reference(result, reference(5, "input_fn"))


def test_which_loop_runs_each_kind(two_cpus, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    for kind in ("default", "one_device", "mirrored", "central_storage"):
        assert not engine.uses_engine(scenario.make_model(_strategy(kind, two_cpus), 1)), kind
    assert engine.uses_engine(scenario.make_model(_strategy("multi_worker_mirrored", two_cpus), 1))


def test_central_storage_metrics_count_every_replica_once(two_cpus):
    """Keras's `assign_add` is `assign(v + d)`: under CentralStorage the replicas' sums were summed."""
    model = scenario.make_model(_strategy("central_storage", two_cpus), 1)
    tfm.fit(model, scenario.dataset(), steps=2)
    loss_tracker = next(m for m in model.metrics if m.name == "loss")
    count = float(loss_tracker.variables[1].numpy())
    assert count == 2 * scenario.GLOBAL_BATCH  # Each example counted once (was 24 without the fix).


def test_engine_trains_until_the_data_ends_and_stops_exactly(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    strategy = tfm.make_strategy("multi_worker_mirrored")
    model = scenario.make_model(strategy, 3)
    history = tfm.fit(model, scenario.dataset(repeat=False))  # 64 / 8 = 8 batches, loops of 3, 3, 2.
    assert int(model.optimizer.iterations.numpy()) == 8 and set(history.history) == {"loss", "mae"}
    results = tfm.evaluate(model, scenario.dataset(repeat=False))
    assert results["global_step"] == 8
    per_replica = tfm.fit(model, lambda ctx: scenario.dataset(ctx.get_per_replica_batch_size(8), repeat=False), steps=5)
    assert int(model.optimizer.iterations.numpy()) == 13 and per_replica.history["loss"]


def test_engine_callbacks_see_every_execution(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)

    class Ends(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.steps = []

        def on_train_batch_end(self, batch, logs=None):
            self.steps.append(int(self.model.optimizer.iterations.numpy()))

    model = scenario.make_model(tfm.make_strategy("multi_worker_mirrored"), 4)
    ends = Ends()
    tfm.fit(model, scenario.dataset(), steps=10, callbacks=[ends])
    assert ends.steps == [4, 8, 10]


def test_engine_rejects_keras_only_arguments(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    model = scenario.make_model(tfm.make_strategy("multi_worker_mirrored"), 1)
    with pytest.raises(TypeError, match=r"engine.*`sample_weight`"):
        tfm.fit(model, scenario.dataset(), steps=1, sample_weight=np.ones(8))


def test_engine_checkpoints_and_restores_like_keras(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    strategy = tfm.make_strategy("multi_worker_mirrored")
    config = tfm.RunConfig(model_dir=tmp_path, save_checkpoints_steps=4)
    first = scenario.make_model(strategy, 2)
    tfm.fit(first, scenario.dataset(), steps=6, config=config)
    assert sorted(p.name for p in tmp_path.glob("ckpt-*.index")) == ["ckpt-0.index", "ckpt-4.index", "ckpt-6.index"]
    second = scenario.make_model(strategy, 2)
    assert tfm.evaluate(second, scenario.dataset(), steps=2, config=config)["global_step"] == 6
    np.testing.assert_array_equal(second.get_weights()[0], first.get_weights()[0])


def test_predict_under_the_default_strategy(tmp_path):
    model = scenario.make_model(tfm.make_strategy("default"), 2)
    tfm.fit(model, scenario.dataset(), steps=3, model_dir=tmp_path)
    outputs = tfm.predict(model, scenario.dataset(repeat=False), steps=5)
    assert isinstance(outputs, np.ndarray) and outputs.shape == (40, 1)
    np.testing.assert_allclose(outputs, model.predict(scenario.X[:40], verbose=0), rtol=1e-6)
    restored = scenario.make_model(tfm.make_strategy("default"), 2)
    again = tfm.predict(restored, scenario.dataset(repeat=False), steps=5, model_dir=tmp_path)
    np.testing.assert_array_equal(again, outputs)
    untrained = scenario.make_model(tfm.make_strategy("default"), 1)
    with pytest.raises(ValueError, match="Could not find trained model"):
        tfm.predict(untrained, scenario.dataset(), model_dir=tmp_path / "empty")


def test_engine_predict_keeps_the_output_structure_and_ignores_labels(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)

    def two_headed(strategy):
        with strategy.scope():
            inputs = keras.Input((3,))
            hidden = keras.layers.Dense(4, kernel_initializer=keras.initializers.Constant(0.2))(inputs)
            model = keras.Model(inputs, {"a": keras.layers.Dense(1)(hidden), "b": keras.layers.Dense(2)(hidden)})
            model.compile(optimizer="sgd", loss="mse", steps_per_execution=2)
        return model

    engine_model = two_headed(tfm.make_strategy("multi_worker_mirrored"))
    keras_model = two_headed(tfm.make_strategy("default"))
    keras_model.set_weights(engine_model.get_weights())
    features = scenario.dataset(repeat=False).map(lambda x, y: x)
    ours = tfm.predict(engine_model, features, steps=3)
    theirs = tfm.predict(keras_model, features, steps=3)
    assert set(ours) == {"a", "b"} and ours["a"].shape == (24, 1) and ours["b"].shape == (24, 2)
    for name in ("a", "b"):
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6)
    with pytest.raises(ValueError, match="empty"):
        tfm.predict(engine_model, features.take(0))
