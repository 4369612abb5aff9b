"""`train_and_evaluate` for the hosted `Estimator`: TF1's local train-and-evaluate loop.

As TF 2.15's `_TrainingExecutor.run_local`: `estimator.train(max_steps=train_spec.max_steps)`
with a checkpoint listener that skips the first save (the untrained model), evaluates after every
later save unless fewer than `throttle_secs` passed since the last evaluation, runs the
`EvalSpec`'s exporters after each evaluation (`model_dir/export/<name>`, `is_the_final_export`
once the global step reached `max_steps`), and evaluates the last checkpoint at the end unless it
just was. Returns `(last evaluation's metrics, its exporters' results)`.

Distributed (`TF_CONFIG` with a "chief" or an "evaluator" task, or run as the evaluator), as TF
2.15's `_TrainingExecutor` ran each task type: "chief" and "worker" tasks train to `max_steps`
(on the strategy tier: a parameter-server cluster's chief coordinates its workers, whose tasks then
serve, `Estimator._default_strategy`; a RunConfig `train_distribute` trains across the tasks); a
"ps" task serves its server; the "evaluator" evaluates each new checkpoint of `model_dir` and runs
the exporters after each evaluation, until one at or past `max_steps`. Every task returns None, as
TF 1.x's did. The graph-mode tier (`TFMIGRATE_MODEL_FN_TIER=graph`) trains locally only, and a
distributed `TF_CONFIG` raises there; so does a multi-task cluster of workers alone.
"""

from __future__ import annotations

import json
import os

import tensorflow as tf

from .._logging import logger
from ..training import EvalSpec, TrainSpec, distributed_task, evaluate_continuously
from ..model_fn import tier as model_fn_tier
from .hooks import CheckpointSaverListener, SecondOrStepTimer

__all__ = ["EvalSpec", "TrainSpec", "train_and_evaluate"]


class _Evaluator:
    def __init__(self, estimator, eval_spec: EvalSpec, max_steps) -> None:
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_steps

    def evaluate_and_export(self) -> tuple[dict | None, list]:
        checkpoint = self._estimator.latest_checkpoint()
        if not checkpoint:
            logger.warning("Estimator is not trained yet. Will start an evaluation when a checkpoint is ready.")
            return None, []
        result = self._estimator.evaluate(
            self._spec.input_fn, steps=self._spec.steps, name=self._spec.name, checkpoint_path=checkpoint,
            hooks=list(self._spec.hooks),
        )
        if not result or tf.compat.v1.GraphKeys.GLOBAL_STEP not in result:
            raise ValueError("Internal error: `Estimator.evaluate` should never return empty metrics.")
        step = result[tf.compat.v1.GraphKeys.GLOBAL_STEP]
        final = self._max_steps is not None and step >= self._max_steps
        exports = []
        for exporter in self._spec.exporters:
            path = os.path.join(tf.compat.as_str_any(self._estimator.model_dir), "export", exporter.name)
            exports.append(exporter.export(self._estimator, path, checkpoint, result, final))
        return result, exports


class _EvaluateAfterSave(CheckpointSaverListener):
    def __init__(self, evaluator: _Evaluator, throttle_secs: float) -> None:
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self.eval_result, self.export_results = None, None

    def begin(self) -> None:
        self._timer = SecondOrStepTimer(every_secs=self._throttle_secs)
        self._first = True

    def after_save(self, session, global_step_value) -> None:
        if self._first:  # The checkpoint of the untrained model.
            self._first = False
            return
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            logger.info("Skip the current checkpoint eval due to throttle secs (%s secs).", self._throttle_secs)

    def end(self, session, global_step_value) -> None:
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value) -> None:
        self._timer.update_last_triggered_step(global_step_value)
        self.eval_result, self.export_results = self._evaluator.evaluate_and_export()


def _run_task(task: str, estimator, train_spec: TrainSpec, eval_spec: EvalSpec) -> None:
    """This task's part of TF 1.x's distributed `train_and_evaluate` (see the module docstring)."""
    if task == "evaluator":
        def evaluate_checkpoint(path: str) -> dict:
            return estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, hooks=list(eval_spec.hooks),
                                      name=eval_spec.name, checkpoint_path=path)

        evaluate_continuously(estimator, evaluate_checkpoint, eval_spec, train_spec.max_steps,
                              tf.compat.as_str_any(estimator.model_dir))
        return None
    if task == "ps":
        from ..strategy import make_strategy

        make_strategy("auto")  # serves this task's server until the process is ended (a cluster with "ps" tasks)
        raise ValueError("tfm.estimator.train_and_evaluate: a \"ps\" task in a TF_CONFIG cluster without \"ps\" tasks.")
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks),
                    saving_listeners=list(train_spec.saving_listeners))
    return None


def _distributed_tf_config() -> bool:
    cluster = json.loads(os.environ.get("TF_CONFIG") or "{}").get("cluster") or {}
    return sum(len(tasks) for tasks in cluster.values()) > 1


def train_and_evaluate(estimator, train_spec: TrainSpec, eval_spec: EvalSpec):
    """TF1's `tf.estimator.train_and_evaluate`, locally (see the module docstring)."""
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}")
    task = distributed_task()
    if task is not None and model_fn_tier() == "strategy":
        return _run_task(task, estimator, train_spec, eval_spec)
    if _distributed_tf_config():
        raise NotImplementedError(
            "tfm.estimator.train_and_evaluate runs locally only here: a TF_CONFIG naming a multi-task cluster runs "
            "distributed on the strategy tier (a cluster with a \"chief\" or \"evaluator\" task, not "
            "TFMIGRATE_MODEL_FN_TIER=graph)."
        )
    config = estimator.config
    logger.info(
        "Start train and evaluate loop. The evaluate will happen after every checkpoint. Checkpoint frequency is "
        "determined based on RunConfig arguments: save_checkpoints_steps %s or save_checkpoints_secs %s.",
        config.save_checkpoints_steps, config.save_checkpoints_secs,
    )
    listener = _EvaluateAfterSave(_Evaluator(estimator, eval_spec, train_spec.max_steps), eval_spec.throttle_secs)
    estimator.train(
        input_fn=train_spec.input_fn,
        max_steps=train_spec.max_steps,
        hooks=list(train_spec.hooks),
        saving_listeners=list(train_spec.saving_listeners) + [listener],
    )
    return listener.eval_result, listener.export_results
