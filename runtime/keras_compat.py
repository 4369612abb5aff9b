"""`fit` and `evaluate`: TF1 `Estimator.train`/`evaluate` semantics on a compiled Keras 3 model.

Separation of concerns:
  * `fit`/`evaluate` own the *outer* TF1 contract: `steps` vs `max_steps`, the global step
    (`model.optimizer.iterations`), restoring from and saving to `model_dir`, the random seed.
  * `_DataSource` owns how the data reaches Keras: a `tf.data.Dataset` is given as is (Keras splits
    its global batches across replicas); an `InputFnData` with `per_replica=False` becomes the
    dataset of one input pipeline; a per-replica `InputFnData` or any function of
    `tf.distribute.InputContext` goes through `strategy.distribute_datasets_from_function`.
  * Keras owns the *inner* loop: one `model.fit(epochs=1)` call, `steps_per_execution` steps per
    device call (TPUEstimator's `iterations_per_loop`), callbacks every `steps_per_execution` steps.
  * `_CheckpointSaver` (a Keras callback) owns TF1's `CheckpointSaverHook` schedule; `checkpoints`
    owns the files.

Step counts are exact. Keras 3.15 `fit(steps_per_epoch=n)` with `steps_per_execution=k` runs whole
device loops, ending at the next multiple of k (measured: n=5, k=4 -> 8 steps), whereas TF1
shortened the last loop. The runtime therefore also cuts the data to n batches (`take`), and Keras's
device loop stops when its input ends (n=5, k=4 -> 4 + 1 steps).

Under MirroredStrategy `fit` runs its own training loop instead of Keras's (`_device_loop`):
Keras 3.15's loop calls `strategy.run` inside a `tf.cond` and fails with "You must feed a value for
placeholder tensor" when `steps_per_execution > 1` (keras-team/keras#19246, measured on 2 CPUs),
and at the end of a finite `distribute_datasets_from_function` dataset it starts one more step
whose `OutOfRangeError` comes after `optimizer.iterations` was incremented (measured: 5 batches ->
global step 6). The runtime's loop asks `get_next_as_optional()` before every step and otherwise
calls the same `model.train_step` (measured: identical weights and logs to Keras's loop with
`steps_per_execution=1`). TPUStrategy keeps Keras's loop (untested here: no TPU).
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
import weakref
from typing import Any, Callable, Iterator, Mapping

import keras
import numpy as np
import tensorflow as tf

from . import checkpoints
from ._state import ModelState, model_state
from ._logging import logger
from .inputs import InputFnData

__all__ = ["evaluate", "fit"]

_RAN_OUT_OF_DATA = "Your input ran out of data"
_RESERVED_FIT_KWARGS = ("x", "y", "epochs", "steps_per_epoch", "batch_size", "initial_epoch", "validation_split")


# -- data ----------------------------------------------------------------------------------------


class _DataSource:
    """`fit`/`evaluate`'s `data`, turned into what Keras consumes for a given strategy."""

    def __init__(self, data: Any, strategy: tf.distribute.Strategy, *, argument: str = "data") -> None:
        self.strategy = strategy
        self.data = data
        if isinstance(data, tf.data.Dataset):
            self.kind = "dataset"
        elif isinstance(data, InputFnData):
            self.kind = "per_replica_fn" if data.per_replica else "global_fn"
        elif callable(data):
            self.kind = "per_replica_fn"
        else:
            raise TypeError(
                f"`{argument}` must be a tf.data.Dataset, an InputFnData (tfmigrate.runtime.input_fn_data) "
                f"or a function of tf.distribute.InputContext, got {type(data).__name__}."
            )

    def _single_pipeline_context(self) -> tf.distribute.InputContext:
        return tf.distribute.InputContext(
            num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=self.strategy.num_replicas_in_sync
        )

    def _call_fn(self, input_context: tf.distribute.InputContext) -> tf.data.Dataset:
        dataset = self.data(input_context)
        if not isinstance(dataset, tf.data.Dataset):
            raise TypeError(
                f"The dataset function returned {type(dataset).__name__}, not a tf.data.Dataset."
            )
        return dataset

    def first_batch(self) -> Any:
        """One element of the (single-pipeline) dataset, to build the model with."""
        if self.kind == "dataset":
            dataset = self.data
        elif self.kind == "global_fn":
            dataset = self.data.global_dataset(self.strategy.num_replicas_in_sync)
        else:
            dataset = self._call_fn(self._single_pipeline_context())
        for element in dataset.take(1):
            return element
        raise ValueError("The input data is empty: cannot build the model from its first batch.")

    def keras_input(self, limit: int | None) -> Any:
        """The `x` for Keras, cut to `limit` steps when not None."""
        if self.kind == "dataset":
            return self.data if limit is None else self.data.take(limit)
        if self.kind == "global_fn":
            dataset = self.data.global_dataset(self.strategy.num_replicas_in_sync)
            return dataset if limit is None else dataset.take(limit)

        def dataset_fn(input_context: tf.distribute.InputContext) -> tf.data.Dataset:
            dataset = self._call_fn(input_context)
            if limit is None:
                return dataset
            # One step takes one element per replica fed by this pipeline.
            per_step = max(1, input_context.num_replicas_in_sync // input_context.num_input_pipelines)
            return dataset.take(limit * per_step)

        return self.strategy.distribute_datasets_from_function(dataset_fn)


# -- model preparation ---------------------------------------------------------------------------


def _check_model(model: Any, caller: str) -> None:
    if not isinstance(model, keras.Model):
        raise TypeError(
            f"tfmigrate.runtime.{caller}: `model` must be a Keras 3 keras.Model, got {type(model).__name__}."
        )
    if getattr(model, "optimizer", None) is None or not getattr(model, "compiled", True):
        raise ValueError(
            f"tfmigrate.runtime.{caller}: compile the model first (model.compile(optimizer=..., loss=..., "
            "steps_per_execution=config.iterations_per_loop))."
        )


def _ensure_built(model: keras.Model, source: _DataSource) -> None:
    """Creates every model and optimizer variable, so a checkpoint can be restored into them."""
    strategy = model.distribute_strategy
    layers = model._flatten_layers() if hasattr(model, "_flatten_layers") else model.layers  # noqa: SLF001
    unbuilt = not model.built or not all(layer.built for layer in layers)
    if unbuilt:
        x, _, _ = keras.utils.unpack_x_y_sample_weight(source.first_batch())
        with strategy.scope():
            model(x, training=False)
    if not model.optimizer.built:
        with strategy.scope():
            model.optimizer.build(model.trainable_variables)


def _resolve_model_dir(model_dir: Any, config: Any) -> str | None:
    if model_dir is None and config is not None:
        model_dir = getattr(config, "model_dir", None)
    return None if model_dir is None else os.fspath(model_dir)


def _prepare(model: keras.Model, source: _DataSource, config: Any, model_dir: str | None) -> ModelState:
    """Seeds, builds and (once per model object) restores `model`; returns its runtime state."""
    state = model_state(model)
    seed = getattr(config, "tf_random_seed", None)
    if seed is not None and not state.seeded:
        keras.utils.set_random_seed(seed)
        state.seeded = True
    _ensure_built(model, source)
    if model_dir is not None and not state.restored:
        checkpoints.restore_latest(model, model_dir)
        state.restored = True
    return state


def _global_step(model: keras.Model) -> int:
    return int(model.optimizer.iterations.numpy())


def _check_steps(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` must be an int or None, got {value!r}.")
    if value <= 0:
        raise ValueError(f"Must specify `{name}` > 0, given: {value}.")
    return int(value)


# -- the device loop under MirroredStrategy ------------------------------------------------------


def _needs_own_loop(model: keras.Model) -> bool:
    """Whether Keras's device loop is replaced: under MirroredStrategy (see the module docstring)."""
    return not model.run_eagerly and isinstance(model.distribute_strategy, tf.distribute.MirroredStrategy)


def _mean_over_replicas(strategy: tf.distribute.Strategy, value: Any) -> Any:
    if isinstance(value, tf.distribute.DistributedValues):
        return tf.reduce_mean(tf.stack(strategy.experimental_local_results(value)), axis=0)
    return value


def _multi_step_function(model: keras.Model, step_name: str) -> Callable[[Any], Any]:
    """A Keras `train_function` running up to `steps_per_execution` steps of `step_name` per call.

    Unlike Keras 3.15's, the loop never wraps `strategy.run` in a `tf.cond`, and checks
    `get_next_as_optional().has_value()` before each step, so no step starts on exhausted input.
    Logs are averaged over replicas, as Keras's "auto" reduction does off TPU. The function holds
    the model weakly (it is kept in the model's runtime state).
    """
    strategy = model.distribute_strategy
    steps_per_execution = int(model.steps_per_execution)
    model_ref = weakref.ref(model)

    def one_step(data: Any) -> Any:
        outputs = strategy.run(getattr(model_ref(), step_name), args=(data,))
        return tf.nest.map_structure(lambda v: _mean_over_replicas(strategy, v), outputs)

    if model.jit_compile is True:
        one_step = tf.function(one_step, jit_compile=True)

    @tf.function(reduce_retracing=True)
    def multi_step(iterator: Any) -> tf.experimental.Optional:
        # The outputs' structure is only known once the body is traced; as in Keras, the empty
        # Optional's spec is filled in during tracing.
        no_outputs = tf.experimental.Optional.empty(None)

        def condition(step: tf.Tensor, outputs: Any, next_inputs: Any) -> tf.Tensor:
            del outputs
            return tf.logical_and(step < steps_per_execution, next_inputs.has_value())

        def body(step: tf.Tensor, outputs: Any, next_inputs: Any) -> tuple[Any, Any, Any]:
            del outputs
            new_outputs = tf.experimental.Optional.from_value(one_step(next_inputs.get_value()))
            no_outputs._element_spec = new_outputs.element_spec  # noqa: SLF001
            following = tf.cond(
                step + 1 < steps_per_execution, iterator.get_next_as_optional, lambda: next_inputs
            )
            return step + 1, new_outputs, following

        _, outputs, _ = tf.while_loop(
            condition, body, loop_vars=[tf.constant(0), no_outputs, iterator.get_next_as_optional()]
        )
        outputs._element_spec = no_outputs.element_spec  # noqa: SLF001
        return outputs

    def function(iterator: Any) -> Any:
        outputs = multi_step(iterator)
        if not outputs.has_value():
            raise StopIteration
        return outputs.get_value()

    return function


def _function_key(model: keras.Model) -> tuple[Any, ...]:
    return (
        int(model.steps_per_execution),
        id(model.optimizer),
        id(getattr(model, "_compile_loss", None)),
        id(getattr(model, "_compile_metrics", None)),
        model.jit_compile,
    )


@contextlib.contextmanager
def _device_loop(model: keras.Model) -> Iterator[None]:
    """Installs the runtime's training loop for one `model.fit` call when Keras's cannot be used.

    Keras's evaluation loop works under MirroredStrategy (an extra step on exhausted input only
    adds an empty batch to the metrics), so `evaluate` keeps it.
    """
    if not _needs_own_loop(model):
        yield
        return
    state = model_state(model)
    key = _function_key(model)
    cached = state.device_loop
    if cached is None or cached[0] != key:
        cached = (key, _multi_step_function(model, "train_step"))
        state.device_loop = cached
    saved = model.train_function
    model.train_function = cached[1]
    try:
        yield
    finally:
        model.train_function = saved


@contextlib.contextmanager
def _quiet_end_of_input() -> Iterator[None]:
    # Ending at the end of the input is how TF1 training and evaluation normally end.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_RAN_OUT_OF_DATA)
        yield


# -- checkpoints during training -----------------------------------------------------------------


class _CheckpointSaver(keras.callbacks.Callback):
    """TF1 `CheckpointSaverHook` as a Keras callback.

    Saves `ckpt-<global_step>` when training starts (unless that checkpoint exists), whenever
    `save_steps` steps or `save_secs` seconds have passed since the last save (checked on batch
    ends, i.e. every `steps_per_execution` steps, as TPUEstimator checked once per loop), and at the
    end unless the last step was just saved.
    """

    def __init__(self, manager: tf.train.CheckpointManager, *, save_steps: int | None, save_secs: float | None):
        super().__init__()
        self._manager = manager
        self._save_steps = save_steps or None
        self._save_secs = save_secs or None
        self._last_step: int | None = None
        self._last_time = 0.0

    def _step(self) -> int:
        return _global_step(self.model)

    def _save(self, step: int) -> None:
        path = self._manager.save(checkpoint_number=step)
        logger.info("tfmigrate.runtime: saved checkpoint %s.", path)
        self._last_step, self._last_time = step, time.monotonic()

    def on_train_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        step = self._step()
        prefix = os.path.join(self._manager.directory, f"{checkpoints.CHECKPOINT_NAME}-{step}")
        if tf.io.gfile.exists(prefix + ".index"):
            self._last_step, self._last_time = step, time.monotonic()
        else:
            self._save(step)

    def on_train_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        step = self._step()
        if step == self._last_step:
            return
        due = self._save_steps is not None and (self._last_step is None or step >= self._last_step + self._save_steps)
        due = due or (self._save_secs is not None and time.monotonic() - self._last_time >= self._save_secs)
        if due:
            self._save(step)

    def on_train_end(self, logs: Mapping[str, Any] | None = None) -> None:
        step = self._step()
        if step != self._last_step:
            self._save(step)


# -- the API -------------------------------------------------------------------------------------


def fit(
    model: keras.Model,
    data: Any,
    *,
    steps: int | None = None,
    max_steps: int | None = None,
    config: Any = None,
    model_dir: str | os.PathLike | None = None,
    callbacks: list[keras.callbacks.Callback] | None = None,
    **fit_kwargs: Any,
) -> keras.callbacks.History | None:
    """Trains a compiled Keras model as TF1 `Estimator.train(input_fn, steps, max_steps)` did.

    The global step is `model.optimizer.iterations`. With a model directory (`model_dir`, else
    `config.model_dir`), a model object not yet restored or trained in this process is first restored
    from the directory's latest checkpoint; checkpoints `ckpt-<global_step>` are saved when training
    starts, every `config.save_checkpoints_steps` steps or `config.save_checkpoints_secs` seconds
    (checked every `steps_per_execution` steps), and at the end, keeping `config.keep_checkpoint_max`.

    Args:
        model: A compiled Keras 3 model, built and compiled in the strategy's scope; its
            `steps_per_execution` plays TPUEstimator's `iterations_per_loop`.
        data: A `tf.data.Dataset` (global batches), an `InputFnData` from `input_fn_data`, or a
            function of `tf.distribute.InputContext` returning per-replica batches.
        steps: Train this many more steps (fewer if the data ends first).
        max_steps: Train until the global step reaches `max_steps`; nothing runs if it already has.
        config: A `RunConfig` (or None): `model_dir`, checkpoint schedule and retention,
            `tf_random_seed` (applied once per model object).
        model_dir: Overrides `config.model_dir`.
        callbacks: Keras callbacks; they see batch ends every `steps_per_execution` steps.
        **fit_kwargs: Other `keras.Model.fit` arguments (`verbose` defaults to 0). `epochs`,
            `steps_per_epoch`, `x`, `y`, `batch_size`, `initial_epoch` and `validation_split` are
            set by the runtime.

    Returns:
        The Keras `History` of the single epoch, or None when `max_steps` was already reached.

    Raises:
        ValueError: If both `steps` and `max_steps` are given, either is not positive, or the model
            is not compiled or its checkpoint does not match.
        TF1CheckpointError: If the latest checkpoint in the model directory is a TF1 one.
        TypeError: For `data` of an unsupported type or a reserved `fit_kwargs` key.
    """
    _check_model(model, "fit")
    if steps is not None and max_steps is not None:
        raise ValueError("Can not provide both `steps` and `max_steps`.")
    steps = _check_steps(steps, "steps")
    max_steps = _check_steps(max_steps, "max_steps")
    reserved = sorted(set(fit_kwargs) & set(_RESERVED_FIT_KWARGS))
    if reserved:
        raise TypeError(
            f"tfmigrate.runtime.fit sets {', '.join(reserved)} itself; use `steps`/`max_steps` and the data's batches."
        )
    model_dir = _resolve_model_dir(model_dir, config)
    source = _DataSource(data, model.distribute_strategy)
    state = _prepare(model, source, config, model_dir)

    start = _global_step(model)
    if max_steps is not None and start >= max_steps:
        logger.info(
            "tfmigrate.runtime.fit: skipping training, the global step (%d) has already reached max_steps=%d.",
            start,
            max_steps,
        )
        return None
    limit = max_steps - start if max_steps is not None else steps

    all_callbacks = list(callbacks or [])
    if model_dir is not None:
        # Without a config, TF1's default RunConfig: every 600 seconds.
        if config is None:
            save_steps, save_secs = None, 600
        else:
            save_steps, save_secs = config.save_checkpoints_steps, config.save_checkpoints_secs
        manager = checkpoints.checkpoint_manager(model, model_dir, config)
        all_callbacks.append(_CheckpointSaver(manager, save_steps=save_steps, save_secs=save_secs))
    fit_kwargs.setdefault("verbose", 0)
    fit_kwargs.setdefault("shuffle", False)
    with _device_loop(model), _quiet_end_of_input():
        history = model.fit(
            source.keras_input(limit), epochs=1, steps_per_epoch=limit, callbacks=all_callbacks, **fit_kwargs
        )
    state.restored = True  # Trained: the in-memory model is now newer than any checkpoint.
    logger.info("tfmigrate.runtime.fit: global step %d -> %d.", start, _global_step(model))
    return history


def _to_python(value: Any) -> Any:
    array = np.asarray(value)
    return float(array) if array.size == 1 else array.tolist()


def evaluate(
    model: keras.Model,
    data: Any,
    *,
    steps: int | None = None,
    config: Any = None,
    model_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Evaluates a compiled Keras model as TF1 `Estimator.evaluate(input_fn, steps)` did.

    A model object not yet restored or trained in this process is first restored from the model
    directory's latest checkpoint (`model_dir`, else `config.model_dir`).

    The `loss` differs from Estimator's when batch sizes differ: Estimator reported the unweighted
    mean of the per-batch losses (`tf.compat.v1.metrics.mean(loss)`), Keras weights each batch by
    its size. With equal batches (`drop_remainder=True`, as TPUs require anyway) they agree.

    Args:
        model: A compiled Keras 3 model.
        data: As for `fit`.
        steps: Evaluate this many batches, or until the data ends when None.
        config: A `RunConfig` or None (`model_dir`, `tf_random_seed`).
        model_dir: Overrides `config.model_dir`.
        **kwargs: Other `keras.Model.evaluate` arguments (`verbose` defaults to 0).

    Returns:
        A dict of Python floats keyed by `loss` and the compiled metrics' names, plus
        `global_step` (an int, `model.optimizer.iterations`).

    Raises:
        ValueError: If `steps` is not positive, the model is not compiled, or the model directory
            has no checkpoint for a model that was never trained (as TF1 raised).
        TF1CheckpointError: If the latest checkpoint in the model directory is a TF1 one.
    """
    _check_model(model, "evaluate")
    steps = _check_steps(steps, "steps")
    for key in ("x", "y", "batch_size", "return_dict"):
        if key in kwargs:
            raise TypeError(f"tfmigrate.runtime.evaluate sets `{key}` itself.")
    model_dir = _resolve_model_dir(model_dir, config)
    source = _DataSource(data, model.distribute_strategy)
    if (
        model_dir is not None
        and not model_state(model).restored
        and checkpoints.latest_checkpoint(model_dir) is None
        and _global_step(model) == 0
    ):
        raise ValueError(f"Could not find trained model in model_dir: {model_dir!r} (nothing to evaluate).")
    _prepare(model, source, config, model_dir)
    kwargs.setdefault("verbose", 0)
    with _quiet_end_of_input():
        logs = model.evaluate(source.keras_input(steps), steps=steps, return_dict=True, **kwargs)
    results = {name: _to_python(value) for name, value in logs.items()}
    results["global_step"] = _global_step(model)
    return results
