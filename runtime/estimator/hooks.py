"""The hooks `tf.estimator` re-exported (TF1's `tf.compat.v1.train` ones, unchanged) and
`tf.estimator.experimental`'s early-stopping hooks (their conditions and `read_eval_metrics` are
the runtime's one implementation, in `..early_stopping`; what is hosted-specific is the stop: a
graph variable and `request_stop`).

The early-stopping hooks work as TF 2.15's did on a local (chief) Estimator: every
`run_every_secs` (or `run_every_steps`) of training they read the evaluation events in
`eval_dir` (the estimator's `eval` directory by default: what `evaluate` and
`train_and_evaluate` write), and when the metric crossed the threshold, or did not improve for
`max_steps_without_{decrease,increase}` global steps (evaluations before `min_steps` ignored),
they set the graph's `signal_early_stopping/STOP` variable and request a stop.
"""

from __future__ import annotations

from typing import Any, Callable

import tensorflow as tf

from .._logging import logger
from ..early_stopping import no_improvement, read_eval_metrics, threshold_crossed

_v1 = tf.compat.v1.train
SessionRunHook = _v1.SessionRunHook
SessionRunArgs = _v1.SessionRunArgs
SessionRunContext = _v1.SessionRunContext
SessionRunValues = _v1.SessionRunValues
LoggingTensorHook = _v1.LoggingTensorHook
StopAtStepHook = _v1.StopAtStepHook
CheckpointSaverHook = _v1.CheckpointSaverHook
CheckpointSaverListener = _v1.CheckpointSaverListener
NanTensorHook = _v1.NanTensorHook
NanLossDuringTrainingError = _v1.NanLossDuringTrainingError
StepCounterHook = _v1.StepCounterHook
SummarySaverHook = _v1.SummarySaverHook
FeedFnHook = _v1.FeedFnHook
FinalOpsHook = _v1.FinalOpsHook
GlobalStepWaiterHook = _v1.GlobalStepWaiterHook
ProfilerHook = _v1.ProfilerHook
SecondOrStepTimer = _v1.SecondOrStepTimer

__all__ = [
    "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook",
    "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "SecondOrStepTimer",
    "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook", "make_early_stopping_hook", "read_eval_metrics", "stop_if_higher_hook", "stop_if_lower_hook",
    "stop_if_no_decrease_hook", "stop_if_no_increase_hook",
]


def _stop_variable() -> Any:
    with tf.compat.v1.variable_scope("signal_early_stopping", values=[], reuse=tf.compat.v1.AUTO_REUSE):
        return tf.compat.v1.get_variable(
            name="STOP", shape=[], dtype=tf.bool, initializer=tf.compat.v1.initializers.constant(False),
            collections=[tf.compat.v1.GraphKeys.GLOBAL_VARIABLES], trainable=False,
        )


class _StopOnPredicateHook(SessionRunHook):
    def __init__(self, should_stop_fn: Callable[[], bool], run_every_secs=60, run_every_steps=None) -> None:
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._should_stop_fn = should_stop_fn
        self._timer = SecondOrStepTimer(every_secs=run_every_secs, every_steps=run_every_steps)

    def begin(self) -> None:
        self._global_step = tf.compat.v1.train.get_global_step()
        self._stop_op = tf.compat.v1.assign(_stop_variable(), True)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values) -> None:
        step = run_values.results
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._should_stop_fn():
                logger.info("Requesting early stopping at global step %d", step)
                run_context.session.run(self._stop_op)
                run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60, run_every_steps=None):
    """TF1's `tf.estimator.experimental.make_early_stopping_hook` (local, chief)."""
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` must be set.")
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _threshold_hook(estimator, metric_name, threshold, higher_is_better, eval_dir, min_steps, run_every_secs, run_every_steps):
    should_stop = threshold_crossed(eval_dir or estimator.eval_dir(), metric_name, threshold, higher_is_better, min_steps)
    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def _no_improvement_hook(estimator, metric_name, max_steps, higher_is_better, eval_dir, min_steps, run_every_secs, run_every_steps):
    should_stop = no_improvement(eval_dir or estimator.eval_dir(), metric_name, max_steps, higher_is_better, min_steps)
    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None):
    return _threshold_hook(estimator, metric_name, threshold, True, eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None):
    return _threshold_hook(estimator, metric_name, threshold, False, eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(
    estimator, metric_name, max_steps_without_increase, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    return _no_improvement_hook(
        estimator, metric_name, max_steps_without_increase, True, eval_dir, min_steps, run_every_secs, run_every_steps
    )


def stop_if_no_decrease_hook(
    estimator, metric_name, max_steps_without_decrease, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    return _no_improvement_hook(
        estimator, metric_name, max_steps_without_decrease, False, eval_dir, min_steps, run_every_secs, run_every_steps
    )
