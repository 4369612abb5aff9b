"""tfmigrate.runtime.hooks, train_and_evaluate and export_saved_model, in process.

The oracle comparisons live in the equivalence fixtures (session_run_hooks,
train_and_evaluate_exporters, predict_batches_and_keys) and tests/equivalence/test_export.py;
these pin the runtime's own contract: session runs, handles, timers, listeners, specs, receivers.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm
from tfmigrate.runtime import hooks

pytestmark = pytest.mark.tf


def make_model(steps_per_execution=1):
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", steps_per_execution=steps_per_execution)
    return model


def data(n=40):
    x = np.random.RandomState(0).normal(size=(n, 2)).astype("float32")
    return tf.data.Dataset.from_tensor_slices((x, x[:, :1] - x[:, 1:])).batch(4)


class Recorder(hooks.SessionRunHook):
    def begin(self):
        self.runs = []
        self.ended = False

    def before_run(self, run_context):
        return hooks.SessionRunArgs({"step": hooks.GLOBAL_STEP, "loss": hooks.LOSS})

    def after_run(self, run_context, run_values):
        self.runs.append((int(run_values.results["step"]), float(run_values.results["loss"])))

    def end(self, session):
        self.ended = True
        self.final_step = int(session.run(hooks.GLOBAL_STEP))


def test_a_run_is_one_step_off_tpu_and_fetches_the_step_read_before_it():
    model = make_model(steps_per_execution=4)
    recorder = Recorder()
    tfm.fit(model, data(), steps=6, hooks=[recorder])
    assert [step for step, _ in recorder.runs] == [0, 1, 2, 3, 4, 5]
    assert recorder.ended and recorder.final_step == 6
    # The steps_per_execution of the model is back afterwards.
    assert int(model.steps_per_execution) == 4


def test_loss_is_the_step_loss_not_the_running_mean():
    model = make_model()
    recorder = Recorder()
    tfm.fit(model, data(), steps=3, hooks=[recorder])
    fresh = make_model()  # the same steps by hand: each step's loss before its update
    losses = []
    for x, y in data().take(3):
        losses.append(float(tf.reduce_mean(tf.square(fresh(x) - y))))
        fresh.train_on_batch(x, y)
    np.testing.assert_allclose([loss for _, loss in recorder.runs], losses, rtol=1e-6)


def test_request_stop_ends_training_after_the_run():
    class Stop(hooks.SessionRunHook):
        def before_run(self, run_context):
            return hooks.SessionRunArgs(hooks.GLOBAL_STEP)

        def after_run(self, run_context, run_values):
            if run_values.results >= 4:
                run_context.request_stop()

    model = make_model(steps_per_execution=3)
    tfm.fit(model, data(), steps=9, hooks=[Stop()])
    assert int(model.optimizer.iterations) == 5


def test_stop_at_step_hook_num_steps_and_last_step():
    model = make_model(steps_per_execution=5)
    tfm.fit(model, data().repeat(), steps=20, hooks=[hooks.StopAtStepHook(last_step=7)])
    assert int(model.optimizer.iterations) == 7
    tfm.fit(model, data().repeat(), steps=20, hooks=[hooks.StopAtStepHook(num_steps=2)])
    assert int(model.optimizer.iterations) == 9
    with pytest.raises(ValueError):
        hooks.StopAtStepHook()


def test_logging_tensor_hook_every_n_iter_and_at_end(caplog):
    logged = []
    hook = hooks.LoggingTensorHook(
        {"step": hooks.GLOBAL_STEP}, every_n_iter=3, at_end=True, formatter=lambda v: logged.append(int(v["step"])) or "x"
    )
    tfm.fit(make_model(), data(), steps=7, hooks=[hook])
    assert logged == [0, 3, 6, 7]
    with pytest.raises(ValueError):
        hooks.LoggingTensorHook({"step": hooks.GLOBAL_STEP})


def test_nan_tensor_hook_raises_or_stops():
    model = make_model()
    x = np.full((8, 2), np.nan, np.float32)
    nan_data = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(4)
    with pytest.raises(hooks.NanLossDuringTrainingError):
        tfm.fit(model, nan_data, steps=2, hooks=[hooks.NanTensorHook(hooks.LOSS)])
    model = make_model()
    tfm.fit(model, nan_data, steps=2, hooks=[hooks.NanTensorHook(hooks.LOSS, fail_on_nan_loss=False)])
    assert int(model.optimizer.iterations) == 1


def test_string_fetches_must_be_logs_or_the_global_step():
    class Fetch(hooks.SessionRunHook):
        def before_run(self, run_context):
            return hooks.SessionRunArgs("softmax_tensor")

    with pytest.raises(KeyError, match="graph tensor names"):
        tfm.fit(make_model(), data(), steps=1, hooks=[Fetch()])


def test_second_or_step_timer_matches_tf1():
    timer = hooks.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    timer.update_last_triggered_step(0)
    assert not timer.should_trigger_for_step(0)
    assert not timer.should_trigger_for_step(2)
    assert timer.should_trigger_for_step(3)
    zero = hooks.SecondOrStepTimer(every_secs=0)  # EvalSpec(throttle_secs=0)
    zero.update_last_triggered_step(1)
    assert zero.should_trigger_for_step(2)
    with pytest.raises(ValueError):
        hooks.SecondOrStepTimer()


def test_checkpoint_saver_hook_and_listeners(tmp_path):
    events = []

    class Listener(hooks.CheckpointSaverListener):
        def begin(self):
            events.append("begin")

        def after_save(self, session, global_step_value):
            events.append(global_step_value)

        def end(self, session, global_step_value):
            events.append(("end", global_step_value))

    saver = hooks.CheckpointSaverHook(str(tmp_path / "ckpts"), save_steps=4, listeners=[Listener()])
    tfm.fit(make_model(steps_per_execution=2), data(), steps=10, hooks=[saver])
    assert events == ["begin", 0, 4, 8, 10, ("end", 10)]
    assert tfm.latest_checkpoint(str(tmp_path / "ckpts")).endswith("ckpt-10")


def test_saving_listeners_on_the_model_dir_saver_and_their_stop(tmp_path):
    class StopAt(hooks.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            return global_step_value >= 6

    config = tfm.RunConfig(model_dir=str(tmp_path / "m"), save_checkpoints_steps=3)
    model = make_model()
    tfm.fit(model, data(), steps=10, config=config, saving_listeners=[StopAt()])
    assert int(model.optimizer.iterations) == 6
    with pytest.raises(ValueError, match="CheckpointSaverHook"):
        tfm.fit(make_model(), data(), steps=1, saving_listeners=[StopAt()])


def test_evaluate_writes_eval_results_that_early_stopping_reads(tmp_path):
    model_dir = str(tmp_path / "m")
    model = make_model()
    tfm.fit(model, data(), steps=3, model_dir=model_dir)
    first = tfm.evaluate(model, data(), steps=2, model_dir=model_dir)
    tfm.fit(model, data(), steps=3, model_dir=model_dir)
    second = tfm.evaluate(model, data(), steps=2, model_dir=model_dir, name="other")
    assert hooks.read_eval_metrics(hooks.eval_dir(model_dir)) == {3: {"loss": pytest.approx(first["loss"])}}
    assert list(hooks.read_eval_metrics(hooks.eval_dir(model_dir, "other"))) == [6]
    assert second["global_step"] == 6


def test_train_and_evaluate_local_semantics(tmp_path):
    config = tfm.RunConfig(model_dir=str(tmp_path / "m"), save_checkpoints_steps=3)
    seen = []

    class Recording(tfm.export.Exporter):
        name = "recording"

        def export(self, model, export_path, checkpoint_path, eval_result, is_the_final_export):
            seen.append((eval_result["global_step"], is_the_final_export))

    model = make_model()
    spec = tfm.EvalSpec(data(), steps=2, throttle_secs=0, exporters=Recording())
    metrics, exports = tfm.train_and_evaluate(model, tfm.TrainSpec(data().repeat(), max_steps=8), spec, config=config)
    # Not the start (step 0), after each later save, and the end.
    assert seen == [(3, False), (6, False), (8, True)]
    assert metrics["global_step"] == 8 and exports == [None]
    # Throttled: only the first save after the start and the end are evaluated.
    seen.clear()
    throttled = tfm.EvalSpec(data(), steps=2, throttle_secs=3600, exporters=[Recording()])
    tfm.train_and_evaluate(model, tfm.TrainSpec(data().repeat(), max_steps=16), throttled, config=config)
    assert seen == [(11, False), (16, True)]  # saves count from the start (8), as TF1's timer did
    # Already at max_steps: nothing runs, as in TF1.
    assert tfm.train_and_evaluate(model, tfm.TrainSpec(data(), max_steps=16), throttled, config=config) == (None, None)
    with pytest.raises(TypeError):
        tfm.train_and_evaluate(model, object(), throttled, config=config)


def test_train_and_evaluate_on_the_evaluator_and_the_chief_of_a_cluster(tmp_path, monkeypatch):
    """TF_CONFIG with an evaluator: the evaluator evaluates checkpoints until max_steps, the chief only trains."""
    import json

    model_dir = str(tmp_path / "m")
    config = tfm.RunConfig(model_dir=model_dir, save_checkpoints_steps=3)
    trained = make_model()
    tfm.fit(trained, data().repeat(), max_steps=8, config=config)  # checkpoints up to step 8, as a chief wrote them
    seen = []

    class Recording(tfm.export.Exporter):
        name = "recording"

        def export(self, model, export_path, checkpoint_path, eval_result, is_the_final_export):
            seen.append((eval_result["global_step"], is_the_final_export, os.path.basename(checkpoint_path)))

    cluster = {"chief": ["127.0.0.1:1"]}  # TF1's evaluator sat outside the cluster its TF_CONFIG named.
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "evaluator", "index": 0}}))
    spec = tfm.EvalSpec(data(), steps=2, start_delay_secs=0, throttle_secs=0, exporters=Recording())
    evaluator_model = make_model()
    assert tfm.train_and_evaluate(evaluator_model, tfm.TrainSpec(data().repeat(), max_steps=8), spec, config=config) is None
    assert seen == [(8, True, os.path.basename(tfm.checkpoints.latest_checkpoint(model_dir)))]
    expected = tfm.evaluate(trained, data(), steps=2, config=config)
    assert tfm.hooks.read_eval_metrics(os.path.join(model_dir, "eval"))[8]["loss"] == pytest.approx(expected["loss"], rel=1e-6)

    # The chief of such a cluster trains to max_steps and does not evaluate.
    seen.clear()
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}}))
    assert tfm.train_and_evaluate(trained, tfm.TrainSpec(data().repeat(), max_steps=11), spec, config=config) is None
    assert seen == [] and tfm.checkpoints.latest_checkpoint(model_dir).endswith("-11")


def test_export_saved_model_receivers_and_outputs(tmp_path):
    model = make_model()
    tfm.fit(model, data(), steps=2)
    raw = tfm.export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 2], tf.float32)})

    class Dict(tf.keras.Model):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def call(self, features, training=False):
            return self.inner(features["x"])

    wrapper = Dict(model)
    path = tfm.export_saved_model(wrapper, str(tmp_path / "exports"), raw)
    assert isinstance(path, bytes) and os.path.basename(path).decode().isdigit()
    loaded = tf.saved_model.load(path.decode())
    assert list(loaded.signatures) == ["serving_default"]
    x = np.ones((3, 2), np.float32)
    out = loaded.signatures["serving_default"](x=tf.constant(x))
    np.testing.assert_allclose(out["output"].numpy(), model(x).numpy(), rtol=1e-6)

    def tensor_receiver():
        inputs = tfm.export.placeholder(tf.float32, [None, 2], name="values")
        doubled = inputs * 2.0
        other = tfm.export.placeholder(tf.float32, [None, 2], name="other")
        # TF1's alternatives: `doubled` feeds the features directly; `unrelated` cannot compute them.
        return tfm.export.TensorServingInputReceiver(
            doubled, inputs, receiver_tensors_alternatives={"doubled": {"values": doubled}, "unrelated": other}
        )

    second = tfm.export_saved_model(model, str(tmp_path / "exports"), tensor_receiver)
    assert second != path  # a second later: TF1's unique timestamped directory
    loaded = tf.saved_model.load(second.decode())
    assert sorted(loaded.signatures) == ["doubled:serving_default", "serving_default"]
    out = loaded.signatures["serving_default"](input=tf.constant(x))
    np.testing.assert_allclose(out["output"].numpy(), model(2 * x).numpy(), rtol=1e-6)
    out = loaded.signatures["doubled:serving_default"](values=tf.constant(x))
    np.testing.assert_allclose(out["output"].numpy(), model(x).numpy(), rtol=1e-6)


def test_exporters_keep_and_final(tmp_path):
    model = make_model()
    tfm.fit(model, data(), steps=1)
    raw = tfm.export.build_raw_serving_input_receiver_fn({"x": tf.TensorSpec([None, 2], tf.float32)})

    class Dict(tf.keras.Model):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def call(self, features, training=False):
            return self.inner(features["x"])

    wrapper = Dict(model)
    latest = tfm.export.LatestExporter("latest", raw, exports_to_keep=1)
    base = str(tmp_path / "latest")
    latest.export(wrapper, base, None, {"loss": 1.0}, False)
    latest.export(wrapper, base, None, {"loss": 1.0}, False)
    assert len(os.listdir(base)) == 1
    final = tfm.export.FinalExporter("final", raw)
    assert final.export(wrapper, str(tmp_path / "final"), None, {"loss": 1.0}, False) is None
    best = tfm.export.BestExporter("best", raw, event_file_pattern=None)
    assert best.export(wrapper, str(tmp_path / "m" / "export" / "best"), None, {"loss": 2.0}, False) is not None
    assert best.export(wrapper, str(tmp_path / "m" / "export" / "best"), None, {"loss": 3.0}, False) is None


def test_hooks_run_per_step_under_mirrored_strategy(two_cpus):
    # ReductionToOneDevice: the collective default on CPU clashes with the other mirrored tests in this process.
    strategy = tf.distribute.MirroredStrategy(two_cpus, cross_device_ops=tf.distribute.ReductionToOneDevice())
    with strategy.scope():
        model = make_model(steps_per_execution=3)
    recorder = Recorder()
    tfm.fit(model, data(), steps=5, hooks=[recorder, hooks.StopAtStepHook(last_step=4)])
    assert [step for step, _ in recorder.runs] == [0, 1, 2, 3]
    assert all(np.isfinite(loss) for _, loss in recorder.runs)
    assert int(model.optimizer.iterations.numpy()) == 4
