"""Checkpoints in `model_dir`, as TF1 Estimator kept them, for Keras models.

TF1 Estimator restored the latest checkpoint of `model_dir` at the start of every `train`/`evaluate`
call (it rebuilt the graph each time) and saved `model.ckpt-<global_step>` while training. Here the
Keras model object outlives a call, so a model is restored once per process: before its first
`fit`/`evaluate`, unless it was already trained by the runtime. Checkpoints are object-based
`tf.train.Checkpoint(model=..., optimizer=...)` files named `ckpt-<global_step>`, managed by
`tf.train.CheckpointManager`; the global step is `model.optimizer.iterations`.

A TF1 name-based checkpoint in `model_dir` (an Estimator's) is never restored silently as nothing
(which is what `tf.train.Checkpoint.restore` does with one): `tf1_checkpoint` maps its variable
names and optimizer slots onto the model, or raises saying what is missing.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

import keras
import tensorflow as tf

from ._logging import logger
from .tf1_checkpoint import load_tf1_checkpoint
from . import cluster

__all__ = [
    "CHECKPOINT_NAME",
    "SaveSchedule",
    "checkpointed_optimizers",
    "is_tf1_checkpoint",
    "latest_checkpoint",
    "model_checkpoint",
    "restore_latest",
]

#: File prefix of the checkpoints the runtime writes: `<model_dir>/ckpt-<global_step>.index`.
CHECKPOINT_NAME = "ckpt"
_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def model_checkpoint(model: keras.Model) -> tf.train.Checkpoint:
    """A `tf.train.Checkpoint(model=model, optimizer=model.optimizer)`, the object graph the runtime saves."""
    objects: dict[str, Any] = {"model": model}
    if getattr(model, "optimizer", None) is not None:
        objects["optimizer"] = model.optimizer
    return tf.train.Checkpoint(**objects)


def latest_checkpoint(model_dir: str | os.PathLike) -> str | None:
    """The newest checkpoint prefix recorded in `model_dir`'s `checkpoint` file, TF1 or TF2, or None."""
    return tf.train.latest_checkpoint(os.fspath(model_dir))


def is_tf1_checkpoint(path: str) -> bool:
    """Whether the checkpoint at prefix `path` is name-based (TF1 `Saver`) rather than object-based."""
    return _OBJECT_GRAPH_KEY not in tf.train.load_checkpoint(path).get_variable_to_shape_map()


def _learning_rate_variable(optimizer: Any) -> Any:
    learning_rate = getattr(optimizer, "_learning_rate", None)
    return learning_rate if isinstance(learning_rate, (keras.Variable, tf.Variable)) else None


def restore_latest(model: keras.Model, model_dir: str | os.PathLike) -> str | None:
    """Restores `model` and its optimizer from the latest checkpoint in `model_dir`, if there is one.

    The model and its optimizer must already be built, so every variable exists and is matched.
    The learning rate the model was compiled with is kept: TF1 graphs held it as a constant that no
    checkpoint restored, while a Keras optimizer keeps it in a (checkpointed) variable.

    Args:
        model: A built, compiled Keras model.
        model_dir: The directory to restore from.

    Returns:
        The checkpoint path restored, or None when `model_dir` has no checkpoint.

    A TF1 (Estimator) checkpoint is loaded through `tf1_checkpoint.load_tf1_checkpoint`: TF1
    variable names and optimizer slots mapped onto the model, `global_step` onto the iterations.

    Raises:
        ValueError: If the checkpoint does not match the model's variables.
    """
    model_dir = os.fspath(model_dir)
    path = latest_checkpoint(model_dir)
    if path is None:
        return None
    return restore_path(model, path, where=f"model_dir {model_dir!r}")


def resolve_checkpoint_path(path: str | os.PathLike) -> str:
    """A checkpoint prefix for TF1's `checkpoint_path=` arguments: a prefix as given, a directory's
    latest checkpoint, or, for a TF1 Estimator name (`<dir>/model.ckpt-8`) in a directory the
    runtime wrote, the runtime's checkpoint of the same step (`<dir>/ckpt-8`)."""
    path = os.fspath(path)
    if tf.io.gfile.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"no checkpoint in directory {path!r}")
        return latest
    if tf.io.gfile.exists(path + ".index"):
        return path
    match = re.fullmatch(r"model\.ckpt-(\d+)", os.path.basename(path))
    if match is not None:
        candidate = os.path.join(os.path.dirname(path), f"{CHECKPOINT_NAME}-{match.group(1)}")
        if tf.io.gfile.exists(candidate + ".index"):
            return candidate
    raise ValueError(f"checkpoint {path!r} does not exist")


def checkpointed_optimizers(model: keras.Model, optimizer: Any = None) -> list[Any]:
    """Every optimizer whose slots and step a checkpoint of `model` holds, built: `optimizer`
    (default `model.optimizer`) and the model's others (a canned wide & deep model's linear part
    has its own, `model.checkpointed_optimizers()`). Built so that no restore of theirs is
    deferred into later training."""
    if optimizer is None:
        optimizer = getattr(model, "optimizer", None)
    found: list[Any] = []
    own = getattr(model, "checkpointed_optimizers", None)
    for each in ([optimizer] if optimizer is not None else []) + (list(own()) if callable(own) else []):
        if all(each is not other for other in found):
            found.append(each)
    for each in found:
        if not each.built:
            each.build(model.trainable_variables)
    return found


@contextlib.contextmanager
def weights_from(
    model: keras.Model,
    checkpoint_path: str | os.PathLike | None,
    *,
    optimizer: Any = None,
    restore: Any = None,
):
    """Runs the block with `model` (and its optimizer, global step included) restored from
    `checkpoint_path`, then gives the model its own values back: TF1's
    `evaluate`/`predict(checkpoint_path=...)` read that checkpoint and left training where it was.
    Does nothing when `checkpoint_path` is None.

    `optimizer`: the one whose slots and step go with the model (default `model.optimizer`; a
    custom loop's own); the model's other checkpointed optimizers (`checkpointed_optimizers`) are
    given back too. `restore(path)`: how to restore a checkpoint (default `restore_path`)."""
    if checkpoint_path is None:
        yield
        return
    path = resolve_checkpoint_path(checkpoint_path)
    if optimizer is None:
        optimizer = getattr(model, "optimizer", None)
    variables = list(model.variables)
    for each in checkpointed_optimizers(model, optimizer):
        variables.extend(each.variables)
    saved = [variable.numpy() for variable in variables]
    if restore is None:
        restore_path(model, path, where="checkpoint_path")
    else:
        restore(path)
    try:
        yield
    finally:
        for variable, value in zip(variables, saved):
            variable.assign(value)


def restore_path(model: keras.Model, path: str, *, where: str = "") -> str:
    """Restores `model` and its optimizer from the checkpoint `path` (TF1 or TF2); see
    `restore_latest`."""
    model_dir = where
    learning_rate = _learning_rate_variable(getattr(model, "optimizer", None))
    compiled_learning_rate = None if learning_rate is None else learning_rate.numpy()
    if is_tf1_checkpoint(path):
        # An Estimator's model_dir: map TF1 names and optimizer slots onto the Keras model.
        load_tf1_checkpoint(model, path)
        if learning_rate is not None:
            learning_rate.assign(compiled_learning_rate)
        return path
    try:
        status = model_checkpoint(model).restore(path)
        status.assert_existing_objects_matched()
    except (AssertionError, ValueError) as error:
        raise ValueError(
            f"Checkpoint {path!r} ({model_dir}) does not match the model being restored "
            f"(a different architecture or optimizer?): {error}"
        ) from error
    status.expect_partial()
    if learning_rate is not None:
        learning_rate.assign(compiled_learning_rate)
    optimizer = getattr(model, "optimizer", None)
    step = int(optimizer.iterations.numpy()) if optimizer is not None else -1
    logger.info("tfmigrate.runtime: restored %s (global step %d).", path, step)
    return path


def checkpoint_manager(
    model: keras.Model | tf.train.Checkpoint, model_dir: str | os.PathLike, config: Any
) -> tf.train.CheckpointManager:
    """A `CheckpointManager` of `model` (or of a `tf.train.Checkpoint`, an `EstimatorLoop`'s) over
    `model_dir` with `config`'s retention (`keep_checkpoint_*`).

    A new manager is made for every call, so it starts from the `checkpoint` file on disk even when
    several model objects share the directory.
    """
    max_to_keep = getattr(config, "keep_checkpoint_max", 5)
    every_n_hours = getattr(config, "keep_checkpoint_every_n_hours", 10000)
    return tf.train.CheckpointManager(
        model if isinstance(model, tf.train.Checkpoint) else model_checkpoint(model),
        directory=os.fspath(model_dir),
        # TF1 Saver: max_to_keep=0 or None keeps every checkpoint.
        max_to_keep=max_to_keep or None,
        keep_checkpoint_every_n_hours=every_n_hours,
        checkpoint_name=CHECKPOINT_NAME,
    )


class SaveSchedule:
    """TF1's `CheckpointSaverHook` schedule, with its `CheckpointSaverListener`s, for any loop.

    Used by `fit`'s checkpoint callback (`estimator_calls`) and by `ctl.EstimatorLoop`. Saves
    `ckpt-<global_step>` of `checkpoint` into `model_dir`: when training starts (unless that
    checkpoint exists: TF1 saved the same values again, and its listeners heard of that save),
    whenever `config.save_checkpoints_steps` steps or `save_checkpoints_secs` seconds have passed
    since the last save (checked by `after_run`, i.e. after every session run: every
    `steps_per_execution`/`steps_per_loop` steps, as TPUEstimator checked once per loop), and at
    the end unless the last step was just saved. Without a config, TF1's default: every 600 s.
    `begin` and `after_run` return True when a listener's `after_save` asked training to stop.

    Under a multi-worker MultiWorkerMirroredStrategy every worker saves at the same steps (TF's
    convention, since a save may read variables collectively): the chief into `model_dir`, the
    others into a temporary directory they delete after each save (`cluster.checkpoint_dir`).
    Every worker therefore decides alike: the save at the start is always made (re-saving an
    existing checkpoint writes the same values), and a `save_secs` save is made when it is due on
    any worker.
    """

    def __init__(
        self,
        checkpoint: keras.Model | tf.train.Checkpoint,
        model_dir: str | os.PathLike,
        strategy: tf.distribute.Strategy,
        config: Any,
        *,
        global_step: Any,
        listeners: list[Any] | None = None,
    ) -> None:
        import time

        self._time = time.monotonic
        self._cluster = cluster
        self._strategy = strategy
        self._global_step = global_step
        self._listeners = list(listeners or [])
        self._model_dir = os.fspath(model_dir)
        self._multi_worker = cluster.is_multi_worker(strategy)
        directory, self._temporary = cluster.checkpoint_dir(self._model_dir, strategy)
        self._manager = checkpoint_manager(checkpoint, directory, config)
        if config is None:
            self._save_steps, self._save_secs = None, 600.0
        else:
            self._save_steps = config.save_checkpoints_steps or None
            self._save_secs = config.save_checkpoints_secs or None
        self._last_step: int | None = None
        self._last_time = 0.0

    def _save(self, step: int, *, write: bool = True) -> bool:
        for listener in self._listeners:
            listener.before_save(None, step)
        if write:
            path = self._manager.save(checkpoint_number=step)
            if self._temporary:
                tf.io.gfile.rmtree(self._manager.directory)
            else:
                logger.info("tfmigrate.runtime: saved checkpoint %s.", path)
        self._last_step, self._last_time = step, self._time()
        return any([bool(listener.after_save(None, step)) for listener in self._listeners])

    def begin(self) -> bool:
        for listener in self._listeners:
            listener.begin()
        step = self._global_step()
        prefix = os.path.join(self._model_dir, f"{CHECKPOINT_NAME}-{step}")
        return self._save(step, write=self._multi_worker or not tf.io.gfile.exists(prefix + ".index"))

    def after_run(self) -> bool:
        step = self._global_step()
        if step == self._last_step:
            return False
        due = self._save_steps is not None and (self._last_step is None or step >= self._last_step + self._save_steps)
        if not due and self._save_secs is not None:
            due = self._time() - self._last_time >= self._save_secs
            if self._multi_worker:
                due = self._cluster.on_any_worker(self._strategy, due)
        return self._save(step) if due else False

    def end(self) -> None:
        step = self._global_step()
        if step != self._last_step:
            self._save(step)
        for listener in self._listeners:
            listener.end(None, step)
