"""TF1 `SessionRunHook`s as Keras callbacks, with Estimator's timing.

TF1 called a hook around every `Session.run` of the training (evaluation, prediction) loop:
`begin()`, `after_create_session(session, coord)`, then per run `before_run(run_context)` (which
may ask for tensors with `SessionRunArgs`) and `after_run(run_context, run_values)`, and finally
`end(session)`. `SessionRunHook` here keeps that interface and is a Keras callback, so a TF1 hook
class keeps its body and only changes its base class.

The session-run machinery (`SessionRunHook`, the fetch handles, `LoopHooks`) is in
`session_run`; this module holds TF1's hooks and re-exports the machinery's public names.

Separation of concerns:
  * `SessionRunHook` maps Keras's callback events onto the TF1 interface. A *session run* is one
    Keras batch end: one step, or `steps_per_execution` steps where TPUEstimator ran
    `iterations_per_loop` steps per run on a TPU. `fit`/`evaluate`/`predict`
    (`estimator_calls`) make a run one step whenever hooks are given and the strategy is not a
    TPUStrategy, as TF1 did off TPU (`use_tpu=False` TPUEstimator and Estimator ran one step per
    `Session.run`).
  * What a hook can fetch (`SessionRunArgs(fetches)`) are *handles*: `GLOBAL_STEP` (the global
    step read when the run starts: what TF1's `_get_or_create_global_step_read()` gave, and
    what fetching the `get_global_step()` variable beside the train op usually gave; that fetch
    raced with the step's increment in TF1 and could see the incremented value),
    `LOSS` (the loss of the run's last step, as `model_fn` computed it: the per-step value TF1's
    `loss` tensor had, not Keras's running mean), a Keras log name (a compiled metric), a
    `tf.Variable`, or a function of no arguments; in any nest of dicts, lists and tuples.
    `run_context.session.run(fetches)` reads the same handles after the run (the global step then
    counts the run's steps, as a second `session.run` did in TF1).
  * `run_context.request_stop()` ends the loop after the run (`model.stop_training`,
    `stop_evaluating`, `stop_predicting`).
  * A loop other than Keras's (`ctl.EstimatorLoop`, `--target ctl`) drives the same hooks through
    `LoopHooks`, one `before_run`/`after_run` per session run of its own; the hooks then read the
    global step, the loss and the checkpoint from the loop.
  * The TF1 hooks Estimator programs used are here with TF1's arguments and timers:
    `LoggingTensorHook`, `StopAtStepHook`, `NanTensorHook`, `CheckpointSaverHook` (+
    `CheckpointSaverListener`), `SummarySaverHook`, `ProfilerHook`, `StepCounterHook`, and the
    early-stopping hooks of `tf.estimator.experimental` (`stop_if_no_decrease_hook`, ...,
    `make_early_stopping_hook`), which read the evaluation results `evaluate` writes to the
    model directory's `eval` folder, as TF1 read its event files.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import tensorflow as tf

from . import early_stopping, summary
from ._logging import logger
from .early_stopping import eval_dir, read_eval_metrics, write_eval_results
from .session_run import (
    GLOBAL_STEP,
    LOSS,
    Handle,
    NanLossDuringTrainingError,
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    global_step_tensor,
)
from .session_run import LoopHooks, check_hooks, is_hook, model_hooks, record_losses  # used as hooks.* before the split
from .checkpoints import CHECKPOINT_NAME

keras = tf.keras

__all__ = [
    "GLOBAL_STEP",
    "LOSS",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "ProfilerHook",
    "SecondOrStepTimer",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
    "global_step_tensor",
    "make_early_stopping_hook",
    "read_eval_metrics",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]


# -- TF1's hooks ---------------------------------------------------------------------------------


def _write_scalar(name: str, value: float, step: int) -> None:
    summary.scalar(name, value, step)


def _tags(tensors: Any) -> tuple[list[str], dict[str, Any]]:
    if isinstance(tensors, Mapping):
        return list(tensors), dict(tensors)
    if isinstance(tensors, (str, Handle)):
        tensors = [tensors]
    tags = [t.name if isinstance(t, Handle) else str(t) for t in tensors]
    return tags, dict(zip(tags, tensors))


class LoggingTensorHook(SessionRunHook):
    """TF1's `tf.train.LoggingTensorHook`: logs the given values every N runs or seconds.

    The `tensors` are handles (`LOSS`, `GLOBAL_STEP`, log names, ...). Counting is per run from 0
    in each `fit`/`evaluate` call (TF1 counted per `train` call). The lines go to the
    `tfmigrate.runtime` logger at INFO (`formatter(values)` when given, else `tag = value, ...`).
    With `at_end=True` the values are logged once more at the end; `LOSS` is then the last step's
    loss (TF1 ran the loss once more on the next batch).
    """

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        super().__init__()
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        self._tag_order, self._tensors = _tags(tensors)
        self._timer = None if only_log_at_end else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end
        self._formatter = formatter

    def begin(self) -> None:
        if self._timer is not None:
            self._timer.reset()
        self._iter_count = 0

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._tensors) if self._should_trigger else None

    def _log_tensors(self, values: Mapping[str, Any]) -> None:
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count) if self._timer else (None, None)
        if self._formatter is not None:
            logger.info("%s", self._formatter(dict(values)))
        else:
            stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
            if elapsed_secs is not None:
                logger.info("%s (%.3f sec)", stats, elapsed_secs)
            else:
                logger.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._tensors))


class StopAtStepHook(SessionRunHook):
    """TF1's `tf.train.StopAtStepHook`: stop after `num_steps` more steps or at global step `last_step`."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        super().__init__()
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(GLOBAL_STEP)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(GLOBAL_STEP)

    def after_run(self, run_context, run_values):
        if run_context.session.run(GLOBAL_STEP) >= self._last_step:
            run_context.request_stop()


class NanTensorHook(SessionRunHook):
    """TF1's `tf.train.NanTensorHook`: raise `NanLossDuringTrainingError` (or stop) on a NaN loss."""

    def __init__(self, loss_tensor: Any = LOSS, fail_on_nan_loss: bool = True) -> None:
        super().__init__()
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logger.error(message)
                raise NanLossDuringTrainingError
            logger.warning(message)
            run_context.request_stop()


class CheckpointSaverListener:
    """TF1's `tf.train.CheckpointSaverListener`: called around the checkpoint saves of training.

    `after_save` returning True stops training. `session` is a stand-in that reads handles.
    """

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """TF1's `tf.train.CheckpointSaverHook`: saves `ckpt-<global step>` into `checkpoint_dir`.

    On TF1's schedule: when training starts, every `save_steps` steps or `save_secs` seconds
    (checked after each run), and at the end; `listeners` are called around each save. The
    checkpoints are TF2 ones (`tf.train.Checkpoint` of the model and optimizer, what `fit` saves
    in `model_dir`); `saver`, `checkpoint_basename` and `scaffold` have no TF2 meaning.
    """

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: Iterable[CheckpointSaverListener] | None = None,
        save_graph_def: bool = True,
    ) -> None:
        super().__init__()
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._manager = None
        self._manager_model = None
        self.keep_checkpoint_max = 5

    def _save(self, step: int) -> bool:
        for listener in self._listeners:
            listener.before_save(self._session, step)
        if self._manager is None or self._manager_model is not self.model:
            self._manager = tf.train.CheckpointManager(
                self._checkpoint(), self._checkpoint_dir, max_to_keep=self.keep_checkpoint_max,
                checkpoint_name=CHECKPOINT_NAME,
            )
            self._manager_model = self.model
        path = self._manager.save(checkpoint_number=step)
        logger.info("tfmigrate.runtime: saved checkpoint %s.", path)
        stop = False
        for listener in self._listeners:
            if listener.after_save(self._session, step):
                stop = True
        return stop

    def begin(self):
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = int(session.run(GLOBAL_STEP))
        self._save(step)
        self._timer.update_last_triggered_step(step)

    def after_run(self, run_context, run_values):
        step = int(run_context.session.run(GLOBAL_STEP))
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._save(step):
                run_context.request_stop()

    def end(self, session):
        step = int(session.run(GLOBAL_STEP))
        if step != self._timer.last_triggered_step():
            self._save(step)
        for listener in self._listeners:
            listener.end(session, step)


class SummarySaverHook(SessionRunHook):
    """TF1's `tf.train.SummarySaverHook`: writes scalar summaries every N steps or seconds.

    TF1 ran a graph `summary_op`; here `summary_op` is a dict `{tag: handle}` of scalars (what a
    `tf.summary.scalar(tag, loss)` op wrote becomes `{tag: LOSS}`), written with `tf.summary` to
    `output_dir` at the global step after the run.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ) -> None:
        super().__init__()
        if summary_op is None:
            raise ValueError("tfmigrate.runtime.hooks.SummarySaverHook needs `summary_op`: a dict {tag: handle}.")
        self._tags, self._summary = _tags(summary_op)
        self._output_dir = output_dir
        self._writer = summary_writer
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._writer is None and self._output_dir:
            self._writer = tf.summary.create_file_writer(os.fspath(self._output_dir))
        self._next_step: int | None = None

    def before_run(self, run_context):
        self._request = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        return SessionRunArgs(self._summary) if self._request else None

    def after_run(self, run_context, run_values):
        step = int(run_context.session.run(GLOBAL_STEP))
        if self._request and self._writer is not None:
            self._timer.update_last_triggered_step(step)
            with self._writer.as_default(step=step):
                for tag in self._tags:
                    _write_scalar(tag, float(np.asarray(run_values.results[tag])), step)
        self._next_step = step + 1

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """TF1's `tf.train.StepCounterHook`: logs (and writes) `global_step/sec` every N steps or seconds."""

    def __init__(self, every_n_steps: int | None = 100, every_n_secs: float | None = None, output_dir=None, summary_writer=None):
        super().__init__()
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir = output_dir
        self._writer = summary_writer

    def begin(self):
        if self._writer is None and self._output_dir:
            self._writer = tf.summary.create_file_writer(os.fspath(self._output_dir))

    def after_run(self, run_context, run_values):
        step = int(run_context.session.run(GLOBAL_STEP))
        if self._timer.should_trigger_for_step(step):
            secs, steps = self._timer.update_last_triggered_step(step)
            if secs is not None and secs > 0:
                rate = steps / secs
                logger.info("global_step/sec: %g", rate)
                if self._writer is not None:
                    with self._writer.as_default(step=step):
                        _write_scalar("global_step/sec", rate, step)


class ProfilerHook(SessionRunHook):
    """TF1's `tf.train.ProfilerHook`: profiles one run every N steps or seconds into `output_dir`.

    TF1 wrote Chrome traces `timeline-<step>.json`; TF2's profiler writes a TensorBoard profile
    (`plugins/profile/...` under `output_dir`) for each traced run.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False):
        super().__init__()
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir = os.fspath(output_dir)

    def begin(self):
        self._next_step: int | None = None
        self._tracing = False

    def before_run(self, run_context):
        request = self._next_step is not None and self._timer.should_trigger_for_step(self._next_step)
        if request:
            try:
                tf.profiler.experimental.start(self._output_dir)
                self._tracing = True
            except Exception as exc:  # noqa: BLE001 - another profiler session: TF1 would have traced anyway
                logger.warning("tfmigrate.runtime.hooks.ProfilerHook: could not start the profiler: %s", exc)
        return SessionRunArgs(GLOBAL_STEP)

    def after_run(self, run_context, run_values):
        stale = int(run_values.results)
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale)
        step = int(run_context.session.run(GLOBAL_STEP))
        if self._tracing:
            tf.profiler.experimental.stop()
            self._tracing = False
            self._timer.update_last_triggered_step(step)
            logger.info("Saved a profile for step %d into %s.", step, self._output_dir)
        self._next_step = step + 1

    def end(self, session):
        if self._tracing:
            tf.profiler.experimental.stop()
            self._tracing = False


# -- early stopping (tf.estimator.experimental) --------------------------------------------------


class _StopOnPredicateHook(SessionRunHook):
    def __init__(self, should_stop_fn: Callable[[], bool], run_every_secs=60, run_every_steps=None) -> None:
        super().__init__()
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._should_stop_fn = should_stop_fn
        self._timer = SecondOrStepTimer(every_secs=run_every_secs, every_steps=run_every_steps)

    def before_run(self, run_context):
        return SessionRunArgs(GLOBAL_STEP)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._should_stop_fn():
                logger.info("Requesting early stopping at global step %d", step)
                run_context.request_stop()


def make_early_stopping_hook(model_dir, should_stop_fn, run_every_secs=60, run_every_steps=None) -> SessionRunHook:
    """TF1's `tf.estimator.experimental.make_early_stopping_hook`; `model_dir` replaces the estimator.

    Every `run_every_secs` seconds or `run_every_steps` steps (checked after each run, at the global
    step read when the run started, as TF1 did) `should_stop_fn()` decides whether to stop.
    """
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` must be set.")
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _model_dir_of(model_dir: Any) -> str:
    directory = getattr(model_dir, "model_dir", model_dir)
    if directory is None:
        raise ValueError("tfmigrate.runtime.hooks: an early-stopping hook needs the model directory (or `eval_dir`).")
    return os.fspath(directory)


def _threshold_hook(model_dir, metric_name, threshold, higher_is_better, eval_dir_, min_steps, run_every_secs, run_every_steps):
    directory = eval_dir_ if eval_dir_ is not None else eval_dir(_model_dir_of(model_dir))
    should_stop = early_stopping.threshold_crossed(directory, metric_name, threshold, higher_is_better, min_steps)
    return make_early_stopping_hook(model_dir, should_stop, run_every_secs, run_every_steps)


def _no_improvement_hook(model_dir, metric_name, max_steps, higher_is_better, eval_dir_, min_steps, run_every_secs, run_every_steps):
    directory = eval_dir_ if eval_dir_ is not None else eval_dir(_model_dir_of(model_dir))
    should_stop = early_stopping.no_improvement(directory, metric_name, max_steps, higher_is_better, min_steps)
    return make_early_stopping_hook(model_dir, should_stop, run_every_secs, run_every_steps)


def stop_if_higher_hook(model_dir, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None):
    """TF1's `tf.estimator.experimental.stop_if_higher_hook` (`model_dir`, or a RunConfig, for the estimator)."""
    return _threshold_hook(model_dir, metric_name, threshold, True, eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_lower_hook(model_dir, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None):
    """TF1's `tf.estimator.experimental.stop_if_lower_hook`."""
    return _threshold_hook(model_dir, metric_name, threshold, False, eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(
    model_dir, metric_name, max_steps_without_increase, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    """TF1's `tf.estimator.experimental.stop_if_no_increase_hook`."""
    return _no_improvement_hook(
        model_dir, metric_name, max_steps_without_increase, True, eval_dir, min_steps, run_every_secs, run_every_steps
    )


def stop_if_no_decrease_hook(
    model_dir, metric_name, max_steps_without_decrease, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    """TF1's `tf.estimator.experimental.stop_if_no_decrease_hook`."""
    return _no_improvement_hook(
        model_dir, metric_name, max_steps_without_decrease, False, eval_dir, min_steps, run_every_secs, run_every_steps
    )
