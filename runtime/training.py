"""`train_and_evaluate`: TF1 `tf.estimator.train_and_evaluate` in local mode, on a Keras model or
on a `ctl.EstimatorLoop` (`--target ctl`).

TF1's local (non-distributed) `train_and_evaluate` trained with `max_steps` and evaluated from a
checkpoint listener (`_NewCheckpointListenerForEvaluate`):

  * the checkpoint saved when training starts is not evaluated (the model is not trained yet);
  * after every later checkpoint save, the model is evaluated (`EvalSpec.steps` batches of its
    `input_fn`, under its `name`, with its `hooks`) unless fewer than `throttle_secs` seconds
    passed since the last evaluation, and then every exporter of the `EvalSpec` is called;
  * when training ends (`max_steps`, the input's end, or a hook's stop), the last checkpoint is
    evaluated unless it just was;
  * the return value is `(metrics of the last evaluation, results of its exporters)`.

Distributed (`TF_CONFIG` whose cluster has a "chief" or an "evaluator" task, or run as the
evaluator; TF1's evaluator usually sat outside the cluster its `TF_CONFIG` named), TF1's
`_TrainingExecutor` ran one procedure per task type, and so does `train_and_evaluate` here:

  * "chief" and "worker" tasks train (`fit`/`loop.train` with `max_steps`, the training hooks and
    listeners) under the strategy the program built (`make_strategy("auto")` picks
    MultiWorkerMirroredStrategy over the chief and workers), and do not evaluate;
  * the "evaluator" task (its strategy is a local one: `make_strategy` keeps it out of the training
    cluster) waits `start_delay_secs`, then evaluates every new checkpoint of `model_dir` as it
    appears (`checkpoint_path=` that checkpoint, at most one evaluation per `throttle_secs`), calls
    the `EvalSpec`'s exporters after each evaluation (exporting that checkpoint), and returns after
    evaluating a checkpoint at or past `max_steps` (its exporters get `is_the_final_export=True`);
  * as in TF1, the return value is None on every task ("undefined for distributed training").

"ps" tasks are not run here: a ParameterServerStrategy program's ps and worker tasks run
`tf.distribute.Server`s, and its chief trains (see `make_strategy`); `train_and_evaluate` on a "ps"
task raises. A cluster of "worker" tasks only (no chief: TF2's MultiWorkerMirroredStrategy
convention, which TF1's Estimator rejected) trains and evaluates as one local program, every
worker taking part in the evaluations.

`train_and_evaluate` here does exactly that through `fit(..., saving_listeners=[...])`: the
checkpoint schedule is `fit`'s (`config.save_checkpoints_steps`/`_secs`, TF1's defaults), and the
evaluation runs on the in-memory model between two training steps, which holds the weights TF1
restored from the checkpoint. `start_delay_secs` only delayed a separate evaluator process and
has no local meaning, as in TF1. The training `hooks` run after the checkpoint saver, as in TF1,
so an early-stopping hook sees the evaluation of the same step. A loop trains the same way through
`loop.train(..., saving_listeners=[...])` and evaluates with `loop.evaluate`; the exporters get the
loop where TF1's got the estimator.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from typing import Any, Callable, Sequence

from . import cluster
from ._logging import logger
from .hooks import CheckpointSaverListener, SecondOrStepTimer
from .checkpoints import latest_checkpoint
from .ctl import EstimatorLoop
from .inputs import input_fn_data
from .estimator_calls import evaluate, fit

__all__ = ["EvalSpec", "TrainSpec", "train_and_evaluate"]


class _SpecInput:
    """What `TrainSpec` and `EvalSpec` share: their `input_fn` wrapped after the fact."""

    def with_input_fn_data(self, **kwargs: Any) -> Any:
        """This spec with its TF1 `input_fn` called as the estimator called it:
        `input_fn_data(input_fn, **kwargs)`. The codemod writes it at `train_and_evaluate` for a spec
        made before the estimator, whose params and config were not bound yet where it was made."""
        return dataclasses.replace(self, input_fn=input_fn_data(self.input_fn, **kwargs))  # type: ignore[type-var, attr-defined]


@dataclasses.dataclass(frozen=True)
class TrainSpec(_SpecInput):
    """TF1's `tf.estimator.TrainSpec`; `input_fn` is what `fit` takes (an `input_fn_data(...)`)."""

    input_fn: Any
    max_steps: int | None = None
    hooks: Sequence[Any] = ()
    saving_listeners: Sequence[Any] = ()

    def __post_init__(self) -> None:
        if self.max_steps is not None and self.max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {self.max_steps}")
        object.__setattr__(self, "hooks", tuple(self.hooks or ()))
        object.__setattr__(self, "saving_listeners", tuple(self.saving_listeners or ()))


@dataclasses.dataclass(frozen=True)
class EvalSpec(_SpecInput):
    """TF1's `tf.estimator.EvalSpec`; `input_fn` is what `evaluate` takes."""

    input_fn: Any
    steps: int | None = 100
    name: str | None = None
    hooks: Sequence[Any] = ()
    exporters: Any = ()
    start_delay_secs: float = 120
    throttle_secs: float = 600

    def __post_init__(self) -> None:
        if self.steps is not None and self.steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {self.steps}")
        if self.start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {self.start_delay_secs}")
        if self.throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {self.throttle_secs}")
        exporters = self.exporters
        if exporters is None:
            exporters = ()
        elif not isinstance(exporters, (list, tuple)):
            exporters = (exporters,)
        names = [e.name for e in exporters]
        if len(set(names)) != len(names):
            raise ValueError(f"`exporters` must have unique names: {names}")
        object.__setattr__(self, "exporters", tuple(exporters))
        object.__setattr__(self, "hooks", tuple(self.hooks or ()))


class _EvaluateAfterSave(CheckpointSaverListener):
    """TF1's `_NewCheckpointListenerForEvaluate` + `_Evaluator.evaluate_and_export`.

    `evaluate()` runs the `EvalSpec`'s evaluation; the exporters get `estimator` (the Keras model,
    or the `EstimatorLoop`) as TF1's got the estimator.
    """

    def __init__(self, estimator, evaluate: Callable[[], dict[str, Any]], eval_spec: EvalSpec, max_steps, model_dir) -> None:
        self._estimator = estimator
        self._run_evaluation = evaluate
        self._spec = eval_spec
        self._max_steps = max_steps
        self._model_dir = model_dir
        self.eval_result: dict[str, Any] | None = None
        self.export_results: list[Any] | None = None
        self._last_evaluated: int | None = None

    def begin(self) -> None:
        self._timer = SecondOrStepTimer(every_secs=self._spec.throttle_secs)
        self._is_first_run = True

    def after_save(self, session, global_step_value):
        if self._is_first_run:  # the model is not trained yet
            self._is_first_run = False
            return None
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            logger.info("Skip the current checkpoint eval due to throttle secs (%s secs).", self._spec.throttle_secs)
        return None

    def end(self, session, global_step_value):
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, step: int) -> None:
        self._timer.update_last_triggered_step(step)
        if self._last_evaluated == step:  # TF1: no new checkpoint, same results
            return
        self.eval_result = self._run_evaluation()
        self._last_evaluated = step
        self.export_results = _export(self._estimator, self._spec, self._max_steps, self._model_dir, self.eval_result, None)


def _export(estimator, eval_spec: EvalSpec, max_steps, model_dir: str, eval_result, checkpoint_path) -> list[Any]:
    """TF1's `_Evaluator._export_eval_result`: every exporter, after one evaluation."""
    final = bool(max_steps) and eval_result["global_step"] >= max_steps
    base = os.path.join(model_dir, "export")
    return [
        exporter.export(estimator, os.path.join(base, exporter.name), checkpoint_path, eval_result, final)
        for exporter in eval_spec.exporters
    ]


# How long the evaluator waits between looks at `model_dir` when there is no new checkpoint and
# `throttle_secs` is 0 (TF1 looked again at once, warning that this overloads the job).
_POLL_SECS = 0.5


def evaluate_continuously(estimator, evaluate: Callable[[str], dict[str, Any]], eval_spec: EvalSpec, max_steps, model_dir: str) -> None:
    """TF1's `_TrainingExecutor.run_evaluator`: evaluate each new checkpoint until `max_steps`."""
    if eval_spec.start_delay_secs:
        logger.info("Waiting %f secs before starting eval.", eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    previous = None
    while True:
        start = time.time()
        path = latest_checkpoint(model_dir)
        evaluated = path is not None and path != previous
        if evaluated:
            eval_result = evaluate(path)
            previous = path
            _export(estimator, eval_spec, max_steps, model_dir, eval_result, path)
            step = eval_result.get("global_step")
            if step and max_steps and step >= max_steps:
                logger.info("Exiting evaluation, global_step=%s >= train max_steps=%s", step, max_steps)
                return
        elif path is None:
            logger.info("Estimator is not trained yet. Will start an evaluation when a checkpoint is ready.")
        wait = eval_spec.throttle_secs - (time.time() - start)
        if not evaluated:
            wait = max(wait, _POLL_SECS)
        if wait > 0:
            time.sleep(wait)


def distributed_task() -> str | None:
    """This task's type when `TF_CONFIG` asks for TF1's distributed train_and_evaluate, else None.

    Distributed: this task is the evaluator, or the cluster has a "chief" (every TF1 Estimator
    cluster had one) or an "evaluator". A cluster of "worker" tasks alone (TF2's
    MultiWorkerMirroredStrategy convention) trains and evaluates as one local program.
    """
    config = cluster.tf_config()
    if config is None:
        return None
    if config.task_type == "evaluator" or config.cluster.get("chief") or config.cluster.get("evaluator"):
        return config.task_type
    return None


def train_and_evaluate(
    model: Any,
    train_spec: TrainSpec,
    eval_spec: EvalSpec,
    *,
    config: Any = None,
    model_dir: str | os.PathLike | None = None,
    **fit_kwargs: Any,
) -> tuple[dict[str, Any] | None, list[Any] | None]:
    """Trains and evaluates `model` as TF1's local `tf.estimator.train_and_evaluate` did.

    Args:
        model: The migrated, compiled Keras model, or a `ctl.EstimatorLoop` (`--target ctl`),
            trained with its `train` and evaluated with its `evaluate`.
        train_spec: `TrainSpec(input_fn=<fit data>, max_steps, hooks)`.
        eval_spec: `EvalSpec(input_fn=<evaluate data>, steps, name, hooks, exporters, ...,
            throttle_secs)`.
        config: The `RunConfig` (checkpoint schedule, `model_dir`); a loop has its own.
        model_dir: Overrides `config.model_dir` (a loop's `model_dir`). Without either, a
            temporary directory is used, as TF1's Estimator did.
        **fit_kwargs: Passed to `fit` (not for a loop).

    Returns:
        `(eval_result, export_results)`: the last evaluation's results (None when training did not
        run because `max_steps` was already reached, as in TF1) and its exporters' results; None on
        every task of a distributed run (a cluster with an evaluator), as in TF1.

    Raises:
        TypeError: If the specs are not `TrainSpec`/`EvalSpec`, or `fit_kwargs` come with a loop.
    """
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type tfmigrate.runtime.TrainSpec, got {type(train_spec).__name__}.")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type tfmigrate.runtime.EvalSpec, got {type(eval_spec).__name__}.")
    loop = model if isinstance(model, EstimatorLoop) else None
    if loop is not None:
        if fit_kwargs or config is not None:
            raise TypeError("tfmigrate.runtime.train_and_evaluate: a loop has its own config; pass only the specs.")
        if model_dir is not None:
            loop.model_dir = os.fspath(model_dir)
        model_dir = loop.model_dir
    elif model_dir is None:
        model_dir = getattr(config, "model_dir", None)
    if model_dir is None:
        model_dir = tempfile.mkdtemp()
        logger.warning("Using temporary folder as model directory: %s", model_dir)
        if loop is not None:
            loop.model_dir = model_dir
    model_dir = os.fspath(model_dir)
    hooks, listeners = list(eval_spec.hooks), list(train_spec.saving_listeners)
    task = distributed_task()
    if task == "ps":
        raise ValueError(
            "tfmigrate.runtime.train_and_evaluate: this is a \"ps\" task (TF_CONFIG); a ParameterServerStrategy "
            "cluster's ps and worker tasks run `tf.distribute.Server(...).join()`, and only its chief runs the program."
        )
    if task == "evaluator":
        if loop is not None:
            def evaluate_checkpoint(path: str) -> dict[str, Any]:
                return loop.evaluate(eval_spec.input_fn, steps=eval_spec.steps, hooks=hooks, name=eval_spec.name, checkpoint_path=path)
        else:
            def evaluate_checkpoint(path: str) -> dict[str, Any]:
                return evaluate(
                    model, eval_spec.input_fn, steps=eval_spec.steps, config=config, model_dir=model_dir, hooks=hooks,
                    name=eval_spec.name, checkpoint_path=path,
                )
        evaluate_continuously(loop if loop is not None else model, evaluate_checkpoint, eval_spec, train_spec.max_steps, model_dir)
        return None
    if task is not None:  # "chief" or "worker": train only; the evaluator evaluates.
        if loop is not None:
            loop.train(train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks), saving_listeners=listeners)
        else:
            fit(
                model, train_spec.input_fn, max_steps=train_spec.max_steps, config=config, model_dir=model_dir,
                hooks=list(train_spec.hooks), saving_listeners=listeners, **fit_kwargs,
            )
        return None
    if loop is not None:
        listener = _EvaluateAfterSave(
            loop,
            lambda: loop.evaluate(eval_spec.input_fn, steps=eval_spec.steps, hooks=hooks, name=eval_spec.name),
            eval_spec,
            train_spec.max_steps,
            model_dir,
        )
        loop.train(
            train_spec.input_fn,
            max_steps=train_spec.max_steps,
            hooks=list(train_spec.hooks),
            saving_listeners=listeners + [listener],
        )
        return listener.eval_result, listener.export_results

    def run_evaluation() -> dict[str, Any]:
        return evaluate(
            model, eval_spec.input_fn, steps=eval_spec.steps, config=config, model_dir=model_dir, hooks=hooks, name=eval_spec.name
        )

    listener = _EvaluateAfterSave(model, run_evaluation, eval_spec, train_spec.max_steps, model_dir)
    fit(
        model,
        train_spec.input_fn,
        max_steps=train_spec.max_steps,
        config=config,
        model_dir=model_dir,
        hooks=list(train_spec.hooks),
        saving_listeners=listeners + [listener],
        **fit_kwargs,
    )
    return listener.eval_result, listener.export_results
