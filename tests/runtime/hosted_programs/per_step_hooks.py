"""Hooks that act with every step, as TF1 programs wrote them: a `train(hooks=...)` hook fetching
two named tensors of the model_fn each step and stopping training after five steps
(`run_context.request_stop()`), a spec `training_hooks` LoggingTensorHook, a hook that reads the
global step through its session at the end, an `evaluate(hooks=...)` hook fetching a tensor and
the global step that stops evaluation after two batches, and `predict(hooks=...)` with a hook
fetching a tensor per batch (stopping after three) beside one fetching nothing (AmoebaNet's
timing hook). Reports what the hooks saw."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
X = rng.randn(32, 4).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)
SEEN = []


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


class RecordingHook(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        graph = tf.compat.v1.get_default_graph()
        self._fetches = {"mean_logit": graph.get_tensor_by_name("mean_logit:0"),
                         "squared": "squared_norm:0"}
        self._runs = 0

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self._fetches)

    def after_run(self, run_context, run_values):
        SEEN.append(dict(run_values.results))
        self._runs += 1
        if self._runs == 5:
            run_context.request_stop()


class EndHook(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        self._step = tf.compat.v1.train.get_global_step()
        self.runs = 0

    def after_run(self, run_context, run_values):
        self.runs += 1

    def end(self, session):
        self.final = session.run(self._step)


class EvalHook(tf.compat.v1.train.SessionRunHook):
    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs([tf.compat.v1.train.get_global_step(), "mean_logit:0"])

    def after_run(self, run_context, run_values):
        step, mean = run_values.results
        SEEN.append({"eval_step": step, "eval_mean_logit": mean})
        if len(SEEN) % 7 == 0:
            run_context.request_stop()


class PredictHook(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        self.batches = []

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs({"mean": "mean_logit:0"})

    def after_run(self, run_context, run_values):
        self.batches.append(float(run_values.results["mean"]))
        if len(self.batches) == 3:
            run_context.request_stop()


class TimingHook(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        self.calls = 0

    def before_run(self, run_context):
        self.calls += 1


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)


def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(features["x"], 2, name="out",
                                       kernel_initializer=tf.compat.v1.constant_initializer(0.1))
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        tf.reduce_mean(logits, name="mean_logit")
        return tf.compat.v1.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    tf.reduce_mean(logits, name="mean_logit")
    tf.reduce_sum(tf.square(features["x"]), name="squared_norm")
    if mode == tf.compat.v1.estimator.ModeKeys.EVAL:
        return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss)
    train_op = tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    logging = tf.compat.v1.train.LoggingTensorHook({"loss": loss}, every_n_iter=2)
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[logging, END])


END = EndHook()
estimator = tf.compat.v1.estimator.Estimator(
    model_fn, config=tf.compat.v1.estimator.RunConfig(model_dir="hooks_model", tf_random_seed=1))
for _ in range(2):
    estimator.train(input_fn, steps=20, hooks=[RecordingHook()])
    report(estimator.evaluate(input_fn, steps=4, hooks=[EvalHook()]))
    report({"end_runs": END.runs, "end_final": END.final})
for seen in SEEN:
    report(seen)
predict_hook, timing = PredictHook(), TimingHook()
predictions = list(estimator.predict(input_fn, hooks=[predict_hook, timing]))
report({"predictions": len(predictions), "timed": timing.calls, "first": predictions[0]["logits"][0],
        **{f"batch_{i}": mean for i, mean in enumerate(predict_hook.batches)}})
