"""Which runtime tier the codemod says a hosted estimator gets (`migrate/runtime_tier.py`): the
strategy tier unless the text shows what the runtime runs in TF1 graph mode (its fallbacks are in
`runtime/model_fn/strategy/checks.py` and `runtime/estimator/core.py`)."""

from __future__ import annotations

from tfmigrate.runtime_tier import graph_mode_reasons

MODEL_FN = """
def model_fn(features, labels, mode, params):
  loss = tf.reduce_mean(features)
  train_op = tf.train.AdamOptimizer().minimize(loss)
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op{extra})

estimator = tf.estimator.tpu.TPUEstimator(model_fn, config=tf.estimator.tpu.RunConfig({config}))
estimator.train(input_fn, max_steps=10{hooks})
"""


def reasons(extra: str = "", config: str = "", hooks: str = "", more: str = "") -> list[str]:
    return graph_mode_reasons(MODEL_FN.format(extra=extra, config=config, hooks=hooks) + more)


def test_a_model_fn_tf2_can_run_gets_the_strategy_tier() -> None:
    assert reasons() == []
    # A host_call runs on the host from the strategy tier; summaries and an empty hook list too.
    assert reasons(", host_call=(host_fn, [gs])", hooks=", hooks=[]") == []
    assert reasons(", training_hooks=None", more="tf.summary.scalar('lr', lr)\n") == []


def test_what_the_runtime_runs_in_graph_mode_is_named_once_each_in_order() -> None:
    # Training's hooks run on the strategy tier (their fetches come back from the step) unless
    # they save through their Session.
    assert reasons(", training_hooks=[tf.train.LoggingTensorHook({'loss': loss}, 10)]") == []
    assert reasons(", training_chief_hooks=[tf.train.CheckpointSaverHook('m', save_steps=5)]") == [
        "the spec's training hooks save through their Session"]
    assert reasons(", evaluation_hooks=[tf.train.LoggingTensorHook({'loss': loss}, 10)]") == []
    assert reasons(", prediction_hooks=[tf.train.SummarySaverHook(save_steps=1)]") == [
        "the spec's prediction hooks save through their Session"]
    assert reasons(hooks=", hooks=[hook]", config="train_distribute=strategy") == []
    assert reasons(hooks=", hooks=[tf.train.SummarySaverHook(save_steps=1)]") == [
        "`train(hooks=...)` hooks save through their Session"]
    parameter_server = "strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)\n"
    assert reasons(config="train_distribute=strategy", more=parameter_server) == [
        "RunConfig's train_distribute/eval_distribute ParameterServerStrategy runs on TF 2.15's graph-mode "
        "replica path only"]
    assert reasons(more=parameter_server) == []  # (a strategy no RunConfig takes)
    scaffold = ", scaffold_fn=lambda: tf.train.Scaffold(saver=tf.train.Saver(ema.variables_to_restore()))"
    assert reasons(scaffold) == []  # (restored and saved through by its names, on the strategy tier)
    init_fn = ", scaffold=tf.train.Scaffold(init_fn=lambda scaffold, session: saver.restore(session, 'pre'))"
    assert reasons(init_fn) == []  # (run on a side Session of the TF1 build, as TF 1.x ran it)
    queues = "images = tf.train.shuffle_batch([image], 8, 100, 10)\nimages = tf.train.batch([image], 8)\n"
    assert reasons(more=queues) == ["its input runs on TF1 queue runners"]
    assert reasons(more="tf.compat.v1.disable_v2_behavior()\n") == ["the program disables eager execution"]


def test_the_switch_to_graph_mode_is_not_counted_where_the_migration_drops_it() -> None:
    assert graph_mode_reasons("tf.compat.v1.disable_eager_execution()\n", switches=False) == []


def test_text_that_does_not_parse_gives_no_reason() -> None:
    assert graph_mode_reasons("def (:\n") == []


SESSION_PROGRAM = """import tensorflow as tf


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features["x"], 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def build_estimator(model_dir):
  return tf.estimator.Estimator(model_fn, model_dir=model_dir)


def main():
  x = tf.placeholder(tf.float32, [None, 1])
  with tf.Session() as sess:
    print(sess.run(x * 2, {x: [[1.0]]}))
  build_estimator("model").train(input_fn, steps=1)


if __name__ == "__main__":
  main()
"""


def test_a_hosted_estimator_in_a_session_program_is_noted_graph_as_the_report_counts_it() -> None:
    """TFM104 adds `disable_v2_behavior()` to a Session program, which sends every call of its
    hosted estimator to graph mode: the note above the estimator says so, as the report does."""
    from tfmigrate.engine import transform_source
    from tfmigrate.tiers import GRAPH

    result = transform_source(SESSION_PROGRAM)
    assert "tf.compat.v1.disable_v2_behavior()" in result.output
    note = next(line for line in result.output.splitlines() if "tfmigrate:" in line and "tfm.estimator" in line)
    assert "TF1 graph mode" in note and "TFM104 adds `disable_v2_behavior()`" in note, note
    assert [site["tier"] for site in result.estimators] == [GRAPH]


TPU_AND_GPU_PATHS = """import tensorflow.compat.v1 as tf


def model_fn(features, labels, mode, params):
  net = features
  for units in params["hidden"]:
    net = tf.layers.dense(net, units)
  loss = tf.losses.mean_squared_error(labels, tf.layers.dense(net, 1))
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def main(use_tpu, input_fn):
  if use_tpu:
    run_config = tf.estimator.tpu.RunConfig(model_dir="m")
    estimator = tf.estimator.tpu.TPUEstimator(model_fn, config=run_config, train_batch_size=8, params={"hidden": [4]})
  else:
    run_config = tf.estimator.RunConfig(model_dir="m", train_distribute=tf.distribute.experimental.CentralStorageStrategy())
    estimator = tf.estimator.Estimator(model_fn, config=run_config, params={"hidden": [4]})
  estimator.train(input_fn, max_steps=10)
"""


def test_train_distribute_sends_only_the_modules_estimators_to_graph_mode() -> None:
    """A TPU program's GPU path (an Estimator with `RunConfig(train_distribute=...)` of a strategy
    the strategy tier does not run) beside its TPUEstimator: a TPUEstimator never runs a
    train_distribute config, so only the Estimator is `graph`, and the TPUEstimator's note says TF2.
    With a MirroredStrategy both are `strategy`."""
    from tfmigrate.engine import transform_source
    from tfmigrate.tiers import GRAPH, STRATEGY

    result = transform_source(TPU_AND_GPU_PATHS)
    assert [(site["estimator"], site["tier"]) for site in result.estimators] == [("TPUEstimator", STRATEGY), ("Estimator", GRAPH)]
    notes = [line for line in result.output.splitlines() if "# tfmigrate: this" in line]
    assert "TF2 inside the strategy's tf.function" in notes[0] and "TF1 graph mode" in notes[1], notes
    mirrored = transform_source(TPU_AND_GPU_PATHS.replace("experimental.CentralStorageStrategy", "MirroredStrategy"))
    assert [site["tier"] for site in mirrored.estimators] == [STRATEGY, STRATEGY]


def test_hooks_run_on_the_strategy_tier_unless_they_save_through_their_session() -> None:
    """tensorflow/tpu's LoadEMAHook (it acts when the session is made), ResNet's flag-gated
    profiler hook and AmoebaNet's timing hook (they act with every step): no graph-mode reason.
    A CheckpointSaverHook written into the hook list: one."""
    hook = ("class LoadEMAHook(tf.train.SessionRunHook):\n"
            "  def begin(self):\n    self._saver = tf.train.Saver()\n"
            "  def after_create_session(self, sess, coord):\n    self._saver.restore(sess, 'm')\n")
    use = ("eval_hooks = [LoadEMAHook()] if FLAGS.ema else []\neval_hooks.append(TimingHook())\n"
           "estimator.evaluate(input_fn, hooks=eval_hooks)\nestimator.predict(input_fn, hooks=eval_hooks)\n"
           "hooks = []\nif FLAGS.profile:\n  hooks.append(ProfilerHook())\nestimator.train(input_fn, hooks=hooks)\n")
    assert graph_mode_reasons(hook + use) == []
    saver = "estimator.train(input_fn, hooks=[tf.train.CheckpointSaverHook('m', save_steps=5)])\n"
    assert graph_mode_reasons(saver) == ["`train(hooks=...)` hooks save through their Session"]
