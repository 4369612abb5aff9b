"""`Controller`: the outer loop of a custom training loop (checkpoints, summaries, evaluation).

Separation of concerns:
  * `Controller` (this module) owns the *outer* loop: training up to a global step (`train(steps)`)
    in loops of `steps_per_loop` steps, the last one shortened so `steps` is hit exactly; when to
    evaluate (`train_and_evaluate`); restoring the latest checkpoint when it is created and saving
    one every `checkpoint_manager.checkpoint_interval` steps; writing each loop's logs as scalar
    summaries every `summary_interval` steps; calling the train/eval actions with the logs; and
    which worker writes (only the chief writes to the real directories; under multi-worker
    training the other workers write to temporary directories, deleted afterwards).
  * A `Trainer`/`Evaluator` (interfaces.py) owns the *inner* loop: what a step does, the model,
    the metrics and the input iterator. `train(num_steps)` runs one loop and returns its logs.
  * `StandardTrainer`/`StandardEvaluator` (standard.py) own how a loop runs (one `tf.while_loop`
    per loop, one `tf.function` call per step, or eagerly) and the per-step hooks;
    `KerasModelTrainer`/`KerasModelEvaluator` own the step of a compiled Keras model.
  * loops.py owns the loop functions (`create_loop_fn`, `create_tf_while_loop_fn`); the strategy
    (`make_strategy`) owns the devices and the gradient all-reduce.
  * `tf.train.CheckpointManager` owns the checkpoint files (names, retention); `tf.summary` the
    event files.

`steps_per_loop` is TF1 TPUEstimator's `iterations_per_loop`: the host runs that many steps per
`trainer.train` call, and checks, saves, writes and calls actions only between loops, so
`summary_interval` and `checkpoint_interval` must be multiples of it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

import keras
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import summary_pb2

from . import interfaces
from ._logging import logger

__all__ = ["Action", "Controller", "is_chief"]

#: An action: called with a loop's logs (train actions) or an evaluation's results (eval actions).
Action = Callable[[Mapping[str, Any]], Any]

# TensorBoard's scalar metadata, written with `tf.summary.write` so TensorBoard itself need not be
# installed (`tf.summary.scalar` requires it).
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
    data_class=summary_pb2.DATA_CLASS_SCALAR,
)


def write_scalar(name: str, value: float, step: int) -> Any:
    """Writes a scalar summary TensorBoard reads as one, without TensorBoard installed."""
    return tf.summary.write(name, tf.constant(value, tf.float32), step=step, metadata=_SCALAR_METADATA)


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process is the chief of `strategy`'s cluster (the one that writes files).

    A single-process strategy (no cluster resolver, as for the default, one-device and mirrored
    strategies) and a TPU strategy (one client) are chief. In a cluster, the chief is the task of
    type "chief", or worker 0 when the cluster has no "chief" job.

    Args:
        strategy: A `tf.distribute.Strategy` (anything with a `cluster_resolver` attribute).

    Returns:
        True on the chief.
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or isinstance(resolver, tf.distribute.cluster_resolver.TPUClusterResolver):
        return True
    task_type, task_id = getattr(resolver, "task_type", None), getattr(resolver, "task_id", None)
    if task_type in (None, "chief"):
        return True
    if task_type != "worker" or task_id not in (0, None):
        return False
    try:
        jobs = resolver.cluster_spec().jobs
    except (ValueError, RuntimeError, OSError):  # No cluster spec to read: a lone worker.
        return True
    return "chief" not in jobs


def _task_name(strategy: tf.distribute.Strategy) -> str:
    resolver = getattr(strategy, "cluster_resolver", None)
    return f"{getattr(resolver, 'task_type', None)}_{getattr(resolver, 'task_id', None)}"


def _is_positive_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0


def _check_actions(actions: Any, name: str) -> tuple[Action, ...]:
    if isinstance(actions, (str, bytes)) or not isinstance(actions, Iterable):
        raise TypeError(f"`{name}` must be a sequence of callables, got {type(actions).__name__}.")
    actions = tuple(actions)
    for index, action in enumerate(actions):
        if not callable(action):
            raise TypeError(f"`{name}[{index}]` must be callable (it is called with the logs), got {action!r}.")
    return actions


def _to_python(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _to_python(item) for key, item in value.items()}
    if hasattr(value, "numpy"):
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        return value
    return array.item() if array.ndim == 0 else array


def _flat_scalars(logs: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """The scalar numbers in `logs` (nested dicts become "outer/inner"), for summaries."""
    scalars: dict[str, float] = {}
    for key, value in logs.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            scalars.update(_flat_scalars(value, name + "/"))
            continue
        array = np.asarray(value)
        if array.size == 1 and (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
            scalars[name] = float(array.reshape(()))
    return scalars


def _format_logs(logs: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={value:.6g}" for name, value in _flat_scalars(logs).items()) or "{}"


class _SummaryWriter:
    """A lazily created `tf.summary` file writer; a temporary directory, deleted on `close`, off the chief."""

    def __init__(self, logdir: str | None, *, temporary: bool, task: str) -> None:
        self.logdir = logdir
        self._temporary = temporary
        self._task = task
        self._writer: Any = None
        self._temporary_dir: str | None = None

    def get(self) -> Any:
        """The writer, or None when there is no summary directory."""
        if self.logdir is None:
            return None
        if self._writer is None:
            directory = self.logdir
            if self._temporary:
                directory = self._temporary_dir = tempfile.mkdtemp(prefix=f"tfmigrate-summaries-{self._task}-")
            self._writer = tf.summary.create_file_writer(directory)
        return self._writer

    def write_scalars(self, logs: Mapping[str, Any], step: int) -> None:
        writer = self.get()
        if writer is None:
            return
        with writer.as_default():
            for name, value in _flat_scalars(logs).items():
                write_scalar(name, value, step)
        writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._temporary_dir is not None:
            shutil.rmtree(self._temporary_dir, ignore_errors=True)
            self._temporary_dir = None


class Controller:
    """Runs a `Trainer` and an `Evaluator` in loops of steps, with checkpoints, summaries and actions.

    Example:

    ```python
    with strategy.scope():
        model = build_and_compile_model()
    trainer = tfm.KerasModelTrainer(model, train_dataset, strategy=strategy)
    evaluator = tfm.KerasModelEvaluator(model, eval_dataset, strategy=strategy)
    manager = tf.train.CheckpointManager(trainer.checkpoint, model_dir, max_to_keep=5,
                                         step_counter=trainer.global_step, checkpoint_interval=100)
    controller = tfm.Controller(strategy=strategy, trainer=trainer, evaluator=evaluator,
                                global_step=trainer.global_step, steps_per_loop=50,
                                checkpoint_manager=manager, summary_dir=model_dir)
    controller.train_and_evaluate(train_steps=1000, eval_steps=-1, eval_interval=200)
    ```

    Checkpoints hold what the manager's `tf.train.Checkpoint` holds (for `KerasModelTrainer.checkpoint`,
    the model and optimizer, in the layout `tfmigrate.runtime.fit` writes); a resumed run restarts
    the input pipeline, as TF1 Estimator did on every `train` call.
    """

    def __init__(
        self,
        *,  # Every argument is keyword-only.
        strategy: tf.distribute.Strategy,
        trainer: interfaces.Trainer | None = None,
        evaluator: interfaces.Evaluator | None = None,
        global_step: tf.Variable,
        steps_per_loop: int | None,
        checkpoint_manager: tf.train.CheckpointManager | None = None,
        summary_dir: str | os.PathLike | None = None,
        eval_summary_dir: str | os.PathLike | None = None,
        summary_interval: int | None = None,
        train_actions: Sequence[Action] = (),
        eval_actions: Sequence[Action] = (),
    ) -> None:
        """Initializes the controller and restores the checkpoint manager's latest checkpoint, if any.

        Build every variable (e.g. create the `KerasModelTrainer`) before the controller: the
        checkpoint is restored into the variables that exist.

        Args:
            strategy: The `tf.distribute.Strategy` the trainer and evaluator run under; it decides
                which worker is the chief (see `is_chief`).
            trainer: A `Trainer` (anything with `train(num_steps)`), or None for evaluation only.
            evaluator: An `Evaluator` (anything with `evaluate(num_steps)`), or None.
            global_step: The variable counting training steps, incremented by the trainer (for a
                Keras model, `model.optimizer.iterations`, i.e. `KerasModelTrainer.global_step`).
            steps_per_loop: Training steps per `trainer.train` call (TPUEstimator's
                `iterations_per_loop`). Required with a trainer; None is allowed without one.
            checkpoint_manager: A `tf.train.CheckpointManager`, or None for no checkpoints. Its
                latest checkpoint is restored now; a checkpoint is saved after every loop that
                reaches or passes a multiple of its `checkpoint_interval` (when set) and at the end
                of `train`.
            summary_dir: Where training summaries (each loop's logs and `steps_per_second`, and the
                summaries written inside the steps) go; None for no training summaries.
            eval_summary_dir: Where evaluation results go; defaults to `summary_dir`.
            summary_interval: Write training summaries after every loop that reaches or passes a
                multiple of this many steps, and record the summaries written inside steps whose
                global step is a multiple of it. Defaults to `steps_per_loop`.
            train_actions: Callables called with each training loop's logs.
            eval_actions: Callables called with each evaluation's results.

        Raises:
            TypeError: If an argument has the wrong type.
            ValueError: If both `trainer` and `evaluator` are None, `steps_per_loop` is not a
                positive int, or an interval is not a positive multiple of `steps_per_loop`.
        """
        if not isinstance(strategy, tf.distribute.Strategy):
            raise TypeError(f"`strategy` must be a tf.distribute.Strategy, got {type(strategy).__name__}.")
        if trainer is None and evaluator is None:
            raise ValueError("`trainer` and `evaluator` must not both be None.")
        if trainer is not None and not callable(getattr(trainer, "train", None)):
            raise TypeError(f"`trainer` must have a `train(num_steps)` method, got {type(trainer).__name__}.")
        if evaluator is not None and not callable(getattr(evaluator, "evaluate", None)):
            raise TypeError(f"`evaluator` must have an `evaluate(num_steps)` method, got {type(evaluator).__name__}.")
        if not isinstance(global_step, (tf.Variable, keras.Variable)):
            raise TypeError(
                "`global_step` must be a tf.Variable or keras.Variable (for a Keras model, "
                f"`model.optimizer.iterations`), got {type(global_step).__name__}."
            )
        if steps_per_loop is not None and not _is_positive_int(steps_per_loop):
            raise ValueError(f"`steps_per_loop` ({steps_per_loop!r}) must be a positive integer.")
        if trainer is not None and steps_per_loop is None:
            raise ValueError("`steps_per_loop` (None) must be a positive integer when a `trainer` is given.")
        if summary_interval is not None:
            if not _is_positive_int(summary_interval):
                raise ValueError(f"`summary_interval` ({summary_interval!r}) must be a positive integer.")
            if summary_dir is None:
                raise ValueError(
                    f"`summary_interval` ({summary_interval}) is set but `summary_dir` is None: "
                    "give a `summary_dir` to write training summaries."
                )
            if steps_per_loop is not None and summary_interval % steps_per_loop:
                raise ValueError(
                    f"`summary_interval` ({summary_interval}) must be a multiple of "
                    f"`steps_per_loop` ({steps_per_loop})."
                )
        if checkpoint_manager is not None:
            if not isinstance(checkpoint_manager, tf.train.CheckpointManager):
                raise TypeError(
                    "`checkpoint_manager` must be a tf.train.CheckpointManager, "
                    f"got {type(checkpoint_manager).__name__}."
                )
            interval = checkpoint_manager.checkpoint_interval
            if interval is not None and steps_per_loop is not None and interval % steps_per_loop:
                raise ValueError(
                    f"`checkpoint_manager.checkpoint_interval` ({interval}) must be a multiple of "
                    f"`steps_per_loop` ({steps_per_loop})."
                )

        self.strategy = strategy
        self.trainer = trainer
        self.evaluator = evaluator
        self.global_step = global_step
        self.steps_per_loop = None if steps_per_loop is None else int(steps_per_loop)
        self.checkpoint_manager = checkpoint_manager
        self.summary_interval = int(summary_interval) if summary_interval is not None else self.steps_per_loop
        self.train_actions = _check_actions(train_actions, "train_actions")
        self.eval_actions = _check_actions(eval_actions, "eval_actions")
        self.is_chief = is_chief(strategy)

        summary_dir = None if summary_dir is None else os.fspath(summary_dir)
        eval_summary_dir = summary_dir if eval_summary_dir is None else os.fspath(eval_summary_dir)
        task = _task_name(strategy)
        self._train_summaries = _SummaryWriter(summary_dir, temporary=not self.is_chief, task=task)
        self._eval_summaries = (
            self._train_summaries
            if eval_summary_dir == summary_dir
            else _SummaryWriter(eval_summary_dir, temporary=not self.is_chief, task=task)
        )
        # The global step as a tf.Variable, for `tf.summary` (a keras.Variable wraps one).
        self._step_variable = global_step.value if isinstance(global_step, keras.Variable) else global_step
        self._record_summaries = self._should_record_summaries()
        self._num_steps_tensors: dict[int, tf.Tensor] = {}
        self._last_checkpoint_step: int | None = None
        if checkpoint_manager is not None:
            self.restore_checkpoint()

    # -- the global step ------------------------------------------------------------------------

    def _step(self) -> int:
        return int(self.global_step.numpy())

    def _should_record_summaries(self) -> Any:
        """`tf.summary.record_if`'s condition inside training steps: the global step is a multiple of the interval."""
        interval = self.summary_interval
        if self._train_summaries.logdir is None or interval is None:
            return False
        return lambda: tf.equal(tf.math.floormod(tf.convert_to_tensor(self._step_variable), interval), 0)

    # -- checkpoints ------------------------------------------------------------------------------

    def _require(self, what: str, method: str) -> None:
        if getattr(self, what) is None:
            raise ValueError(f"`{what}` must be given to the Controller to call `{method}()`.")

    def restore_checkpoint(self, checkpoint_path: str | os.PathLike | None = None) -> str | None:
        """Restores a checkpoint: `checkpoint_path`, or the checkpoint manager's latest.

        Without a checkpoint, the manager's `init_fn` (if any) is called instead.

        Args:
            checkpoint_path: A checkpoint prefix, or None for the latest one.

        Returns:
            The path restored, or None when there was no checkpoint.

        Raises:
            ValueError: Without a `checkpoint_manager`, or if the checkpoint does not match the
                variables that exist.
        """
        self._require("checkpoint_manager", "restore_checkpoint")
        manager = self.checkpoint_manager
        path = manager.latest_checkpoint if checkpoint_path is None else os.fspath(checkpoint_path)
        if path is None:
            manager.restore_or_initialize()
            logger.info("tfmigrate.runtime.Controller: no checkpoint in %s; starting from scratch.", manager.directory)
            return None
        status = manager.checkpoint.restore(path)
        try:
            status.assert_existing_objects_matched()
        except AssertionError as error:
            raise ValueError(f"Checkpoint {path!r} does not match the variables being restored: {error}") from error
        step = self._step()
        self._last_checkpoint_step = step
        logger.info("tfmigrate.runtime.Controller: restored %s (global step %d).", path, step)
        return path

    def save_checkpoint(self) -> str | None:
        """Saves a checkpoint numbered with the global step (the chief's; others' are deleted).

        Returns:
            The checkpoint path on the chief, None on other workers or when the manager declined
            (a checkpoint of this step already saved).

        Raises:
            ValueError: Without a `checkpoint_manager`.
        """
        self._require("checkpoint_manager", "save_checkpoint")
        step = self._step()
        manager = self.checkpoint_manager
        if self.is_chief:
            path = manager.save(checkpoint_number=step, check_interval=False)
        else:
            # Every worker must take part in saving (variables may be read with collectives); the
            # non-chief ones save to a temporary directory, deleted at once.
            directory = tempfile.mkdtemp(prefix=f"tfmigrate-checkpoint-{_task_name(self.strategy)}-")
            try:
                tf.train.CheckpointManager(manager.checkpoint, directory, max_to_keep=1).save(checkpoint_number=step)
            finally:
                shutil.rmtree(directory, ignore_errors=True)
            path = None
        self._last_checkpoint_step = step
        if path is not None:
            logger.info("tfmigrate.runtime.Controller: saved checkpoint %s.", path)
        return path

    def _maybe_save_checkpoint(self, previous_step: int, step: int) -> None:
        manager = self.checkpoint_manager
        if manager is None or not manager.checkpoint_interval or step == self._last_checkpoint_step:
            return
        if step // manager.checkpoint_interval > previous_step // manager.checkpoint_interval:
            self.save_checkpoint()

    def _save_checkpoint_at_completion(self) -> None:
        if self.checkpoint_manager is not None and self._step() != self._last_checkpoint_step:
            self.save_checkpoint()

    # -- training -------------------------------------------------------------------------------

    def _train_loop(self, num_steps: int, start_step: int) -> tuple[dict[str, Any], int]:
        """One `trainer.train(num_steps)` call from `start_step`, with summaries; returns its logs and the new step."""
        start_time = time.perf_counter()
        writer = self._train_summaries.get()
        with (writer.as_default(step=self._step_variable) if writer is not None else contextlib.nullcontext()):
            with tf.summary.record_if(self._record_summaries):
                logs = self.trainer.train(self._num_steps_tensor(num_steps))
        logs = _to_python(logs or {})
        step = self._step()
        steps_per_second = (step - start_step) / max(time.perf_counter() - start_time, 1e-9)
        if logger.isEnabledFor(logging.INFO):
            logger.info(
                "tfmigrate.runtime.Controller: train | step: %6d | steps/sec: %8.1f | %s",
                step,
                steps_per_second,
                _format_logs(logs),
            )
        interval = self.summary_interval
        if self._train_summaries.logdir is not None and interval and step // interval > start_step // interval:
            self._train_summaries.write_scalars({**logs, "steps_per_second": steps_per_second}, step)
        for action in self.train_actions:
            action(logs)
        return logs, step

    def _num_steps_tensor(self, num_steps: int) -> tf.Tensor:
        # Cached: the loops have at most two lengths (`steps_per_loop` and a shortened last one).
        tensor = self._num_steps_tensors.get(num_steps)
        if tensor is None:
            tensor = self._num_steps_tensors[num_steps] = tf.constant(num_steps, dtype=tf.int32)
        return tensor

    def train(self, steps: int, checkpoint_at_completion: bool = True) -> dict[str, Any]:
        """Trains until the global step reaches `steps`, in loops of `steps_per_loop` steps.

        The last loop is shortened so the global step ends at `steps` exactly. Training stops
        early, with a warning, when a loop does not advance the global step by its number of steps
        (the training data ended).

        Args:
            steps: The global step to train up to (not a number of further steps); nothing runs
                when the global step is already there.
            checkpoint_at_completion: Save a checkpoint at the end (if there is a checkpoint
                manager and the step was not just saved).

        Returns:
            The logs of the last loop (empty when nothing ran).

        Raises:
            ValueError: Without a `trainer`, or if `steps` is negative.
        """
        self._require("trainer", "train")
        if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 0:
            raise ValueError(f"`steps` ({steps!r}) must be a non-negative integer (the global step to train to).")
        logs: dict[str, Any] = {}
        try:
            step = self._step()
            while step < steps:
                num_steps = min(self.steps_per_loop, steps - step)
                logs, new_step = self._train_loop(num_steps, step)
                self._maybe_save_checkpoint(step, new_step)
                if new_step - step < num_steps:
                    logger.warning(
                        "tfmigrate.runtime.Controller: a loop of %d steps advanced the global step from %d to %d "
                        "only: the training data ended (or the trainer does not increment `global_step`); "
                        "stopping before `steps` (%d).",
                        num_steps,
                        step,
                        new_step,
                        steps,
                    )
                    break
                step = new_step
            if checkpoint_at_completion:
                self._save_checkpoint_at_completion()
        finally:
            self._close_temporary_writers()
        return logs

    # -- evaluation -----------------------------------------------------------------------------

    def evaluate(self, steps: int = -1) -> dict[str, Any]:
        """Runs the evaluator for `steps` steps (all of its data when -1) and returns its results.

        The results are logged, written as scalar summaries at the current global step to
        `eval_summary_dir`, and passed to the eval actions.

        Args:
            steps: The number of evaluation steps, or -1 to evaluate until the data ends.

        Returns:
            The evaluator's results, as Python numbers.

        Raises:
            ValueError: Without an `evaluator`, or if `steps` is neither -1 nor positive.
        """
        self._require("evaluator", "evaluate")
        if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or (steps != -1 and steps <= 0):
            raise ValueError(f"`steps` ({steps!r}) must be a positive integer, or -1 to evaluate until the data ends.")
        try:
            step = self._step()
            start_time = time.perf_counter()
            writer = self._eval_summaries.get()
            with (writer.as_default(step=self._step_variable) if writer is not None else contextlib.nullcontext()):
                logs = _to_python(self.evaluator.evaluate(tf.constant(steps, dtype=tf.int32)) or {})
            logger.info(
                "tfmigrate.runtime.Controller: eval | step: %6d | %.1f s | %s",
                step,
                time.perf_counter() - start_time,
                _format_logs(logs),
            )
            self._eval_summaries.write_scalars(logs, step)
            for action in self.eval_actions:
                action(logs)
        finally:
            self._close_temporary_writers()
        return logs

    def train_and_evaluate(
        self, train_steps: int, eval_steps: int = -1, eval_interval: int | None = None
    ) -> dict[str, Any]:
        """Alternates training and evaluation until the global step reaches `train_steps`.

        Trains `eval_interval` steps at a time (the last period shortened to end at `train_steps`),
        evaluating `eval_steps` steps after each period, and saves a checkpoint at the end.

        Args:
            train_steps: The global step to train up to.
            eval_steps: Evaluation steps after each period, -1 for all of the evaluation data.
            eval_interval: Training steps between evaluations; None evaluates once, at the end.

        Returns:
            The results of the last evaluation (empty when no training was needed).

        Raises:
            ValueError: Without a `trainer` or an `evaluator`, or for invalid step counts.
        """
        self._require("trainer", "train_and_evaluate")
        self._require("evaluator", "train_and_evaluate")
        if eval_interval is not None and not _is_positive_int(eval_interval):
            raise ValueError(f"`eval_interval` ({eval_interval!r}) must be a positive integer or None.")
        results: dict[str, Any] = {}
        step = self._step()
        while step < train_steps:
            target = train_steps if eval_interval is None else min(step + eval_interval, train_steps)
            self.train(target, checkpoint_at_completion=False)
            results = self.evaluate(eval_steps)
            new_step = self._step()
            if new_step < target:  # The training data ended (train() warned).
                break
            step = new_step
        self._save_checkpoint_at_completion()
        return results

    # -- files ----------------------------------------------------------------------------------

    def _close_temporary_writers(self) -> None:
        if not self.is_chief:
            self._train_summaries.close()
            self._eval_summaries.close()

    def close(self) -> None:
        """Closes the summary writers (the controller writes no more summaries until used again)."""
        self._train_summaries.close()
        self._eval_summaries.close()
