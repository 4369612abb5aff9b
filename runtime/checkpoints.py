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

__all__ = [
    "CHECKPOINT_NAME",
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


@contextlib.contextmanager
def weights_from(model: keras.Model, checkpoint_path: str | os.PathLike | None):
    """Runs the block with `model` (and its optimizer, global step included) restored from
    `checkpoint_path`, then gives the model its own values back: TF1's
    `evaluate`/`predict(checkpoint_path=...)` read that checkpoint and left training where it was.
    Does nothing when `checkpoint_path` is None."""
    if checkpoint_path is None:
        yield
        return
    path = resolve_checkpoint_path(checkpoint_path)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and not optimizer.built:
        optimizer.build(model.trainable_variables)  # so no slot restore is deferred into later training
    variables = list(model.variables) + (list(optimizer.variables) if optimizer is not None else [])
    saved = [variable.numpy() for variable in variables]
    restore_path(model, path, where="checkpoint_path")
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
        from .tf1_checkpoint import load_tf1_checkpoint

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


def checkpoint_manager(model: keras.Model, model_dir: str | os.PathLike, config: Any) -> tf.train.CheckpointManager:
    """A `CheckpointManager` over `model_dir` with `config`'s retention (`keep_checkpoint_*`).

    A new manager is made for every call, so it starts from the `checkpoint` file on disk even when
    several model objects share the directory.
    """
    max_to_keep = getattr(config, "keep_checkpoint_max", 5)
    every_n_hours = getattr(config, "keep_checkpoint_every_n_hours", 10000)
    return tf.train.CheckpointManager(
        model_checkpoint(model),
        directory=os.fspath(model_dir),
        # TF1 Saver: max_to_keep=0 or None keeps every checkpoint.
        max_to_keep=max_to_keep or None,
        keep_checkpoint_every_n_hours=every_n_hours,
        checkpoint_name=CHECKPOINT_NAME,
    )
