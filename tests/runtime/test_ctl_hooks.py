"""`EstimatorLoop` with TF1 hooks, saving listeners, `train_and_evaluate` and `export_saved_model`.

The loop drives `tfmigrate.runtime.hooks` objects with TF1's timing (`hooks.LoopHooks`): one
session run per step off TPU even when `steps_per_loop > 1`, `GLOBAL_STEP` read when the run
starts (and after it through `session.run`), `LOSS` the run's step loss.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import tfmigrate.runtime as tfm

from .test_ctl import X, Y, Loop, data

pytestmark = pytest.mark.tf


class PredictingLoop(Loop):
    """`Loop` with the PREDICT steps `--target ctl` writes for `predictions={'y': output}`."""

    def predict_step(self, batch):
        features, _, _ = tf.keras.utils.unpack_x_y_sample_weight(batch)
        return {"y": self.model(features, training=False)}

    @tf.function
    def distributed_predict_step(self, batch):
        per_replica = self.strategy.run(self.predict_step, args=(batch,))
        return tf.nest.map_structure(lambda value: self.strategy.gather(value, axis=0), per_replica)

    @tf.function
    def train_steps(self, iterator, steps):
        loss = tf.constant(0.0)
        for _ in tf.range(steps):
            batch = iterator.get_next_as_optional()
            if not batch.has_value():
                break
            loss = self.strategy.reduce("SUM", self.strategy.run(self.train_step, args=(batch.get_value(),)), axis=None)
        return loss


class Recorder(tfm.hooks.SessionRunHook):
    """A TF1-style hook (no `__init__` of its base) recording what each run shows it."""

    def begin(self):
        self.events = ["begin"]
        self.runs = []

    def after_create_session(self, session, coord):
        self.events.append(("created", int(session.run(tfm.hooks.GLOBAL_STEP))))

    def before_run(self, run_context):
        return tfm.hooks.SessionRunArgs({"step": tfm.hooks.GLOBAL_STEP, "loss": tfm.hooks.LOSS})

    def after_run(self, run_context, run_values):
        after = int(run_context.session.run(tfm.hooks.GLOBAL_STEP))
        self.runs.append((int(run_values.results["step"]), after, float(run_values.results["loss"])))

    def end(self, session):
        self.events.append(("end", int(session.run(tfm.hooks.GLOBAL_STEP))))


def test_train_hooks_see_one_step_per_run_and_its_loss(tmp_path):
    loop = PredictingLoop(tfm.make_strategy("default"), model_dir=str(tmp_path), steps_per_loop=3)
    recorder = Recorder()
    loop.train(data(), steps=5, hooks=[recorder])
    assert loop.global_step == 5
    assert recorder.events == ["begin", ("created", 0), ("end", 5)]
    assert [(start, after) for start, after, _ in recorder.runs] == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    # The first step's loss: the zero-initialised model predicts 0 on the first batch.
    assert recorder.runs[0][2] == pytest.approx(float(np.mean(Y[:8] ** 2)), rel=1e-6)
    assert len({loss for _, _, loss in recorder.runs}) == 5
    # Without hooks the loop runs `steps_per_loop` steps per call again.
    loop.train(data(), steps=4)
    assert loop.global_step == 9


def test_stop_at_step_hook_and_a_model_fn_training_hook(tmp_path):
    logged = []

    class HookedLoop(PredictingLoop):
        def training_hooks(self):  # What `--target ctl` writes for a spec's `training_hooks`.
            return [tfm.hooks.LoggingTensorHook({"loss": tfm.hooks.LOSS}, every_n_iter=2, formatter=lambda v: logged.append(dict(v)) or "")]

    loop = HookedLoop(tfm.make_strategy("default"), steps_per_loop=4)
    loop.train(data(), steps=20, hooks=[tfm.hooks.StopAtStepHook(num_steps=5)])
    assert loop.global_step == 5
    assert len(logged) == 3  # Runs 0, 2 and 4 of this call.
    loop.train(data(), max_steps=100, hooks=[tfm.hooks.StopAtStepHook(last_step=7)])
    assert loop.global_step == 7
    assert len(logged) == 4  # Made afresh for the call: counting starts again.


class Listener(tfm.hooks.CheckpointSaverListener):
    def __init__(self, stop_at=None):
        self.calls, self._stop_at = [], stop_at

    def begin(self):
        self.calls.append("begin")

    def before_save(self, session, step):
        self.calls.append(("before", step))

    def after_save(self, session, step):
        self.calls.append(("after", step))
        return step == self._stop_at

    def end(self, session, step):
        self.calls.append(("end", step))


def test_saving_listeners_hear_every_save_and_can_stop(tmp_path):
    config = tfm.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=2)
    loop = PredictingLoop(tfm.make_strategy("default"), config=config, steps_per_loop=3)
    listener = Listener()
    loop.train(data(), steps=5, saving_listeners=[listener])
    saves = [step for call, step in listener.calls[1:-1] if call == "after"]
    assert saves == [0, 2, 4, 5]  # One step per run while listeners watch, as TF1 checked per run.
    assert listener.calls[0] == "begin" and listener.calls[-1] == ("end", 5)
    stopper = Listener(stop_at=7)
    loop.train(data(), steps=10, saving_listeners=[stopper])
    assert loop.global_step == 7
    with pytest.raises(ValueError, match="CheckpointSaverHook"):
        PredictingLoop(tfm.make_strategy("default")).train(data(), steps=1, saving_listeners=[Listener()])


def test_evaluate_and_predict_hooks_and_eval_results(tmp_path):
    loop = PredictingLoop(tfm.make_strategy("default"), model_dir=str(tmp_path), steps_per_loop=3)
    loop.train(data(), steps=4)
    recorder = Recorder()
    results = loop.evaluate(data(repeat=False), hooks=[recorder], name="held_out")
    assert len(recorder.runs) == 4  # One batch per run: 32 examples in batches of 8.
    assert all(start == after == 4 for start, after, _ in recorder.runs)
    assert np.mean([loss for _, _, loss in recorder.runs]) == pytest.approx(results["loss"], rel=1e-6)
    written = tfm.hooks.read_eval_metrics(tfm.hooks.eval_dir(str(tmp_path), "held_out"))
    assert list(written) == [4] and written[4]["loss"] == pytest.approx(results["loss"], rel=1e-6)

    class StopAfterFirst(tfm.hooks.SessionRunHook):
        def begin(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            run_context.request_stop()

    stopper = StopAfterFirst()
    predictions = list(loop.predict(data(repeat=False), hooks=[stopper]))
    assert stopper.runs == 1 and len(predictions) == 8
    np.testing.assert_allclose([p["y"] for p in predictions], loop.model(X[:8]).numpy(), rtol=1e-6)


def _receiver():
    inputs = tfm.export.placeholder(tf.float32, [None, 3], name="inputs")
    return tfm.export.TensorServingInputReceiver(inputs, {"inputs": inputs})


def test_train_and_evaluate_and_export_from_a_loop(tmp_path):
    config = tfm.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=3)
    loop = PredictingLoop(tfm.make_strategy("default"), config=config, steps_per_loop=2)
    seen = []

    class Recording(tfm.export.Exporter):
        name = "recording"

        def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
            seen.append((estimator is loop, eval_result["global_step"], is_the_final_export))
            return eval_result["global_step"]

    eval_spec = tfm.EvalSpec(
        data(repeat=False), steps=2, throttle_secs=0,
        exporters=[Recording(), tfm.export.LatestExporter("latest", _receiver, exports_to_keep=2)],
    )
    metrics, exports = tfm.train_and_evaluate(loop, tfm.TrainSpec(data(), max_steps=7), eval_spec)
    # Evaluated after every save but the first (steps 3 and 6) and at the end (7).
    assert seen == [(True, 3, False), (True, 6, False), (True, 7, True)]
    assert metrics["global_step"] == 7 and exports[0] == 7
    assert len(list((tmp_path / "export" / "latest").iterdir())) == 2
    loaded = tf.saved_model.load(exports[1].decode())
    served = loaded.signatures["serving_default"](inputs=tf.constant(X[:4]))
    np.testing.assert_allclose(served["y"].numpy(), loop.model(X[:4]).numpy(), rtol=1e-6)

    # A fresh loop exports model_dir's latest checkpoint once its model is built.
    again = PredictingLoop(tfm.make_strategy("default"), config=config)
    with pytest.raises(ValueError, match="not built"):
        again.export_saved_model(str(tmp_path / "direct"), _receiver)
    again.model(X[:1])
    direct = again.export_saved_model(str(tmp_path / "direct"), _receiver)
    served = tf.saved_model.load(direct.decode()).signatures["serving_default"](inputs=tf.constant(X[:4]))
    np.testing.assert_allclose(served["y"].numpy(), loop.model(X[:4]).numpy(), rtol=1e-6)


def test_hooks_under_mirrored_strategy(two_cpus, tmp_path):
    strategy = tf.distribute.MirroredStrategy(two_cpus, cross_device_ops=tf.distribute.ReductionToOneDevice())
    loop = PredictingLoop(strategy, model_dir=str(tmp_path), steps_per_loop=3)
    recorder = Recorder()
    loop.train(data(), steps=4, hooks=[recorder, tfm.hooks.StopAtStepHook(last_step=3)])
    assert loop.global_step == 3
    assert [(start, after) for start, after, _ in recorder.runs] == [(0, 1), (1, 2), (2, 3)]
    # The loss of the global batch, as on one device.
    assert recorder.runs[0][2] == pytest.approx(float(np.mean(Y[:8] ** 2)), rel=1e-6)
