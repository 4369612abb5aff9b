"""`tfm.ModelFnModel`: the Keras model the codemod writes around a kept model_fn (migrate/kept_model.py).

It runs the model_fn on the strategy tier under the strategy it was built in, `steps_per_execution`
steps per `tf.function` call, with Estimator's calls; these tests hold it to the estimator it
drives (whose numbers the oracle tests pin) and to the strategy and loop it was given."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.tf]


def _input_fn(params):
    import tensorflow as tf

    x = np.arange(64, dtype=np.float32).reshape(32, 2) / 10.0
    y = x @ np.array([[0.3], [-0.2]], dtype=np.float32) + 0.1
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(params["batch_size"], drop_remainder=True)


def _eval_input_fn(params):
    import tensorflow as tf

    x = np.arange(16, dtype=np.float32).reshape(8, 2) / 7.0
    return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1])).batch(params["batch_size"], drop_remainder=True)


def _model_fn(features, labels, mode, params):
    """A regression whose mean loss does not depend on how the batch is split."""
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.constant_initializer(0.1))
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    out = tf.matmul(features["x"], w) + b
    if mode == tfm.estimator.ModeKeys.PREDICT:
        return tfm.estimator.tpu.TPUEstimatorSpec(mode, predictions={"out": out})
    loss = tf.compat.v1.losses.mean_squared_error(labels, out)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.05)
    if params["use_tpu"]:
        optimizer = tf.compat.v1.tpu.CrossShardOptimizer(optimizer)
    if mode == tfm.estimator.ModeKeys.EVAL:
        return tfm.estimator.tpu.TPUEstimatorSpec(
            mode, loss=loss, eval_metrics=(lambda labels, out: {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, out)}, [labels, out]))
    return tfm.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss, tf.compat.v1.train.get_global_step()))


def _config(model_dir: Path, iterations_per_loop: int = 1, **kwargs):
    import tfmigrate.runtime as tfm

    return tfm.RunConfig(model_dir=str(model_dir), save_checkpoints_steps=100,
                         tpu_config=tfm.TPUConfig(iterations_per_loop=iterations_per_loop), **kwargs)


def test_it_trains_under_the_strategy_in_scope_with_its_estimators_numbers(
    tmp_path: Path, two_cpus: list[str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Built in a MirroredStrategy's scope (2 replicas, TPU code path: each replica a core with half
    the batch, CrossShardOptimizer's sum an all-reduce), it trains, evaluates and predicts on the
    strategy tier under that strategy, with the numbers its TPUEstimator gives on one device."""
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    monkeypatch.delenv("TFMIGRATE_STRATEGY", raising=False)
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    estimator = tfm.estimator.tpu.TPUEstimator(_model_fn, config=_config(tmp_path / "estimator"), use_tpu=False,
                                               train_batch_size=8, eval_batch_size=4, predict_batch_size=4)
    estimator.train(_input_fn, max_steps=7)
    expected = estimator.evaluate(_eval_input_fn)
    expected_predictions = list(estimator.predict(_eval_input_fn))

    strategy = tfm.make_strategy("mirrored", devices=two_cpus)
    with strategy.scope():
        model = tfm.ModelFnModel(_model_fn, config=_config(tmp_path / "model"), use_tpu=True,
                                 train_batch_size=8, eval_batch_size=4, predict_batch_size=4)
        model.compile(steps_per_execution=3)
    assert isinstance(model, tf.keras.Model)
    with caplog.at_level("WARNING"):
        assert tfm.fit(model, _input_fn, max_steps=7) is None
        result = tfm.evaluate(model, _eval_input_fn)
        predictions = list(tfm.predict_examples(model, _eval_input_fn))
    assert "graph mode" not in caplog.text
    assert model.estimator._runner._strategy is strategy  # noqa: SLF001
    assert sorted(result) == sorted(expected) == ["global_step", "loss", "mae"]
    assert result["global_step"] == 7
    for key in ("loss", "mae"):
        np.testing.assert_allclose(result[key], expected[key], rtol=1e-5)
    assert len(predictions) == len(expected_predictions) == 8
    # (compared at the scale of the outputs, about 0.1: the first is a cancellation near 0)
    np.testing.assert_allclose([p["out"] for p in predictions], [p["out"] for p in expected_predictions], rtol=1e-5, atol=1e-6)
    arrays = tfm.predict(model, _eval_input_fn)
    assert arrays["out"].shape == (8, 1)
    np.testing.assert_allclose(arrays["out"], [p["out"] for p in expected_predictions], rtol=1e-5, atol=1e-6)


def test_steps_per_execution_is_steps_per_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               model_fn_step_calls: dict) -> None:
    """`compile(steps_per_execution=N)` runs N steps per call of the one step function, whatever the
    config's iterations_per_loop; without it, the config's. (No `loss` summary: its first step
    would end a loop, test_strategy_tier.py.)"""
    import tfmigrate.runtime as tfm

    monkeypatch.delenv("TFMIGRATE_STRATEGY", raising=False)
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    calls = model_fn_step_calls
    for steps_per_execution, expected in ((5, [5, 5, 3]), (None, [4, 4, 4, 1])):
        calls.clear()
        model = tfm.ModelFnModel(_model_fn, config=_config(tmp_path / str(steps_per_execution), iterations_per_loop=4,
                                                save_summary_steps=None),
                                 use_tpu=False, train_batch_size=8)
        model.compile(steps_per_execution=steps_per_execution)
        assert model.steps_per_execution == (steps_per_execution or 4)
        model.fit(_input_fn, steps=13)
        (counts,) = calls.values()
        assert counts == expected
        assert model.get_variable_value("global_step") == 13


def test_jit_compile_compiles_the_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tfmigrate.runtime as tfm

    monkeypatch.delenv("TFMIGRATE_JIT_COMPILE", raising=False)
    monkeypatch.delenv("TFMIGRATE_STRATEGY", raising=False)
    monkeypatch.setenv("TFMIGRATE_MODEL_FN_TIER", "strategy")
    model = tfm.ModelFnModel(_model_fn, config=_config(tmp_path), use_tpu=False, train_batch_size=8)
    model.compile(jit_compile=True)
    tfm.fit(model, _input_fn, steps=2)
    assert model.estimator._runner._jit_compile()  # noqa: SLF001
    assert model.get_variable_value("global_step") == 2


def test_what_a_kept_model_fn_does_not_take_is_refused_clearly(tmp_path: Path) -> None:
    import tensorflow as tf

    import tfmigrate.runtime as tfm

    with pytest.raises(TypeError, match="train_batch_size are TPUEstimator's arguments; give use_tpu= too"):
        tfm.ModelFnModel(_model_fn, config=_config(tmp_path), train_batch_size=8)
    model = tfm.ModelFnModel(_model_fn, config=_config(tmp_path), use_tpu=False, train_batch_size=8)
    with pytest.raises(TypeError, match="optimizer: the model_fn's own optimizer"):
        model.compile(optimizer="adam")
    with pytest.raises(TypeError, match="callbacks: a kept model_fn trains with Estimator's arguments"):
        model.fit(_input_fn, steps=1, callbacks=[tf.keras.callbacks.History()])
    with pytest.raises(TypeError, match="give the TF1 input_fn"):
        model.fit(tf.data.Dataset.range(3), steps=1)
    with pytest.raises(TypeError, match="epochs: not an argument for a model hosting a TF1 model_fn"):
        tfm.fit(model, _input_fn, epochs=2)
    with pytest.raises(ValueError, match="is not the model's own"):
        tfm.evaluate(model, _eval_input_fn, model_dir=str(tmp_path / "elsewhere"))
    with pytest.raises(NotImplementedError, match="called by mode"):
        model({"x": tf.zeros([1, 2])})
