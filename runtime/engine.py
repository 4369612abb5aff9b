"""The runtime's Keras engine: training, evaluation and prediction loops where Keras 3's own fail.

Keras 3.15's `fit`/`evaluate`/`predict` do not run under two strategies (measured on TF 2.21):

  * MultiWorkerMirroredStrategy: before the first step Keras builds the model from the first
    distributed batch with `strategy.reduce("MEAN", batch)` (`_maybe_symbolic_build`), which fails
    with "Attempt to convert a value (PerReplica...) with an unsupported type"
    (keras-team/keras#20585; legacy tf-keras is the workaround TensorFlow points to, tensorflow#72388).
  * ParameterServerStrategy: Keras 3 has no `ClusterCoordinator` handling at all; steps must be
    scheduled on the workers and the data created per worker.

`uses_engine(model)` says whether a model's strategy is one of these; `estimator_calls.fit/evaluate/
predict` then call `train`/`test`/`predict` here instead of Keras's loops.

Separation of concerns:
  * `estimator_calls` owns the TF1 contract (`steps` vs `max_steps`, the global step, `model_dir`,
    restoring, checkpoint callbacks) and what the data is (`DataSource`): this module asks the
    source for a distributed dataset, a per-worker dataset, or a local one.
  * The model owns the step: `model.train_step`/`test_step`/`predict_step`, called unchanged, so
    an overridden step or `compute_loss`, `optimizer.apply` and the metrics' updates behave as
    under `model.fit`.
  * The *step functions* (`step_on_replicas`, `_step_on_worker`, `_step_here`) own where one step
    runs and how its outputs are reduced: `strategy.run` + `strategy.reduce("MEAN")` for logs,
    `strategy.gather` for predictions.
  * `multi_step_function`/`_predict_multi_step_function` own the inner loop: up to `num_steps`
    (the model's `steps_per_execution`) steps in one `tf.function`, asking
    `get_next_as_optional()` before each step so that no step starts on exhausted input.
  * The *executors* own how one execution is launched: `_SyncExecutor` calls the function on a
    distributed iterator (MultiWorkerMirroredStrategy: every worker runs the same steps in
    lockstep); `_CoordinatorExecutor` schedules one execution per worker through the
    `ClusterCoordinator` on per-worker datasets and waits for that wave
    (ParameterServerStrategy training); `_LocalExecutor` runs on this process alone
    (ParameterServerStrategy evaluation and prediction: TF's "inline evaluation" on the
    coordinator, reading the variables from the parameter servers).
  * The loops (`train`, `test`, `predict`) own the host side: callbacks, step counting, stopping
    when the data ends, and the logs (the metrics' values read across replicas, as Keras's
    `fit` reports them).

Why evaluation and prediction under ParameterServerStrategy run on the coordinator: every worker's
dataset is a full copy of the data (`create_per_worker_dataset`), so distributed evaluation over
several workers counts batches several times and predictions come back in scheduling order. On the
coordinator the results are the default strategy's, batch for batch.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Mapping, Protocol

import keras
import numpy as np
import tensorflow as tf

from ._logging import logger
from .strategy import cluster_coordinator

__all__ = ["EngineDataSource", "Validation", "predict", "test", "train", "uses_engine"]


class EngineDataSource(Protocol):
    """What the engine needs from `fit`'s data (implemented by `data_source.DataSource`)."""

    def distributed(self, limit: int | None) -> Any:
        """A `tf.distribute.DistributedDataset` for a synchronous strategy, cut to `limit` steps."""

    def per_worker(self) -> Any:
        """What `ClusterCoordinator.create_per_worker_dataset` takes: a dataset, or a function."""

    def local(self, limit: int | None) -> tf.data.Dataset:
        """The dataset of one input pipeline (global batches), cut to `limit` batches."""


def _is_parameter_server(strategy: tf.distribute.Strategy) -> bool:
    return isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy)


def _is_multi_worker_mirrored(strategy: tf.distribute.Strategy) -> bool:
    return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)


def uses_engine(model: keras.Model) -> bool:
    """Whether `fit`/`evaluate`/`predict` run `model` with this engine rather than Keras's loops.

    True under MultiWorkerMirroredStrategy (keras-team/keras#20585) and ParameterServerStrategy
    (no Keras 3 support), whether or not the model runs eagerly.
    """
    strategy = model.distribute_strategy
    return _is_multi_worker_mirrored(strategy) or _is_parameter_server(strategy)


# -- one step ------------------------------------------------------------------------------------


def _maybe_jit(model: keras.Model, function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return tf.function(function, jit_compile=True) if model.jit_compile is True else function


def step_on_replicas(model: keras.Model, step_name: str, gather: bool) -> Callable[[Any], Any]:
    """One step on every replica of a synchronous strategy, its outputs reduced across all of them.

    Logs are averaged over the replicas of all workers (`strategy.reduce("MEAN")`, Keras's "auto"
    reduction off TPU); predictions are gathered along the batch axis in replica order, which is the
    order of the global batch.
    """
    strategy = model.distribute_strategy
    model_ref = weakref.ref(model)
    step = _maybe_jit(model, lambda data: getattr(model_ref(), step_name)(data))

    def reduce(value: Any) -> Any:
        if value is None:
            return None
        if gather:
            return strategy.gather(value, axis=0)
        return strategy.reduce("MEAN", value, axis=None)

    def one_step(data: Any) -> Any:
        return tf.nest.map_structure(reduce, strategy.run(step, args=(data,)))

    return one_step


def _step_on_worker(model: keras.Model, step_name: str) -> Callable[[Any], Any]:
    """One step on a ParameterServerStrategy worker's replicas, logs averaged over them."""
    strategy = model.distribute_strategy
    model_ref = weakref.ref(model)
    step = _maybe_jit(model, lambda data: getattr(model_ref(), step_name)(data))

    def mean(value: Any) -> Any:
        if value is None:
            return None
        return tf.reduce_mean(tf.stack(strategy.experimental_local_results(value)), axis=0)

    def one_step(data: Any) -> Any:
        return tf.nest.map_structure(mean, strategy.run(step, args=(data,)))

    return one_step


def _step_here(model: keras.Model, step_name: str) -> Callable[[Any], Any]:
    """One step in this process, on its own (no `strategy.run`)."""
    model_ref = weakref.ref(model)
    return _maybe_jit(model, lambda data: getattr(model_ref(), step_name)(data))


# -- the inner loop: up to `num_steps` steps in one tf.function ----------------------------------


def multi_step_function(one_step: Callable[[Any], Any]) -> Callable[[Any, tf.Tensor], tuple[Any, Any]]:
    """A `tf.function(iterator, num_steps) -> (steps_run, Optional(last step's outputs))`.

    `num_steps` is a tensor, so executions of different lengths share one trace. The loop never
    puts the step inside a `tf.cond` (Keras 3.15's does, which breaks `strategy.run` under
    MirroredStrategy, keras-team/keras#19246).
    """

    @tf.function(reduce_retracing=True)
    def multi_step(iterator: Any, num_steps: tf.Tensor) -> tuple[tf.Tensor, tf.experimental.Optional]:
        # The outputs' structure is only known once the body is traced; as in Keras, the empty
        # Optional's spec is filled in during tracing.
        no_outputs = tf.experimental.Optional.empty(None)

        def condition(step: tf.Tensor, outputs: Any, next_inputs: Any) -> tf.Tensor:
            del outputs
            return tf.logical_and(step < num_steps, next_inputs.has_value())

        def body(step: tf.Tensor, outputs: Any, next_inputs: Any) -> tuple[Any, Any, Any]:
            del outputs
            new_outputs = tf.experimental.Optional.from_value(one_step(next_inputs.get_value()))
            no_outputs._element_spec = new_outputs.element_spec  # noqa: SLF001
            following = tf.cond(step + 1 < num_steps, iterator.get_next_as_optional, lambda: next_inputs)
            return step + 1, new_outputs, following

        steps, outputs, _ = tf.while_loop(
            condition, body, loop_vars=[tf.constant(0), no_outputs, iterator.get_next_as_optional()]
        )
        outputs._element_spec = no_outputs.element_spec  # noqa: SLF001
        return steps, outputs

    return multi_step


def _zeros_like_spec(spec: tf.TensorSpec) -> tf.Tensor:
    shape = [0] if spec.shape.rank is None else [0 if d is None else d for d in spec.shape.as_list()]
    return tf.zeros(shape, spec.dtype)


def _scheduled_function(one_step: Callable[[Any], Any]) -> Callable[[Any, tf.Tensor], tuple[Any, Any]]:
    """`multi_step_function` for `ClusterCoordinator.schedule`: returns plain tensors, not an Optional.

    An execution that found no data returns zeros of the outputs' structure (and 0 steps).
    """
    multi_step = multi_step_function(one_step)

    @tf.function(reduce_retracing=True)
    def scheduled(iterator: Any, num_steps: tf.Tensor) -> tuple[tf.Tensor, Any]:
        steps, outputs = multi_step(iterator, num_steps)
        spec = outputs.element_spec
        values = tf.cond(
            outputs.has_value(), outputs.get_value, lambda: tf.nest.map_structure(_zeros_like_spec, spec)
        )
        return steps, values

    return scheduled


def _predict_multi_step_function(
    one_step: Callable[[Any], Any],
) -> Callable[[Any, tf.Tensor], tuple[tf.Tensor, list[tf.Tensor], Any]]:
    """A `tf.function(iterator, num_steps) -> (steps_run, [outputs concatenated along the batch])`.

    Each flattened output is collected in a `TensorArray`; the outputs' structure comes from tracing
    the step on the iterator's element spec.
    """
    step_function = tf.function(one_step, reduce_retracing=True)
    structure: dict[str, Any] = {}

    @tf.function(reduce_retracing=True)
    def multi_step(iterator: Any, num_steps: tf.Tensor) -> tuple[tf.Tensor, list[tf.Tensor]]:
        traced = step_function.get_concrete_function(iterator.element_spec).structured_outputs
        structure["outputs"] = traced
        arrays = []
        for output in tf.nest.flatten(traced):
            if output.shape.rank == 0:
                raise ValueError("predict: `predict_step` returned a scalar; outputs must have a batch dimension.")
            element_shape = None if output.shape.rank is None else tf.TensorShape([None]).concatenate(output.shape[1:])
            arrays.append(
                tf.TensorArray(output.dtype, size=0, dynamic_size=True, infer_shape=False, element_shape=element_shape)
            )

        def condition(step: tf.Tensor, arrays: Any, next_inputs: Any) -> tf.Tensor:
            del arrays
            return tf.logical_and(step < num_steps, next_inputs.has_value())

        def body(step: tf.Tensor, arrays: Any, next_inputs: Any) -> tuple[Any, Any, Any]:
            outputs = tf.nest.flatten(step_function(next_inputs.get_value()))
            arrays = [array.write(step, output) for array, output in zip(arrays, outputs)]
            following = tf.cond(step + 1 < num_steps, iterator.get_next_as_optional, lambda: next_inputs)
            return step + 1, arrays, following

        steps, arrays, _ = tf.while_loop(
            condition, body, loop_vars=[tf.constant(0), arrays, iterator.get_next_as_optional()]
        )
        return steps, [array.concat() for array in arrays]

    def function(iterator: Any, num_steps: tf.Tensor) -> tuple[tf.Tensor, list[tf.Tensor], Any]:
        steps, outputs = multi_step(iterator, num_steps)
        return steps, outputs, structure["outputs"]

    return function


# Functions per model, rebuilt when what they close over changes; the model is held weakly.
_functions: weakref.WeakKeyDictionary[keras.Model, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _function_key(model: keras.Model, kind: str) -> tuple[Any, ...]:
    return (
        kind,
        id(model.distribute_strategy),
        id(model.optimizer),
        id(getattr(model, "_compile_loss", None)),
        id(getattr(model, "_compile_metrics", None)),
        model.jit_compile,
    )


def _cached(model: keras.Model, kind: str, build: Callable[[], Any]) -> Any:
    cache = _functions.setdefault(model, {})
    key = _function_key(model, kind)
    function = cache.get(key)
    if function is None:
        for stale in [k for k in cache if k[0] == kind]:
            del cache[stale]
        function = cache[key] = build()
    return function


# -- executors: how one execution is launched ----------------------------------------------------


class _Execution:
    """What one launch returned: steps run, the last step's outputs (or None), and whether the data ended."""

    __slots__ = ("ended", "outputs", "steps")

    def __init__(self, steps: int, outputs: Any, ended: bool) -> None:
        self.steps, self.outputs, self.ended = steps, outputs, ended


class _SyncExecutor:
    """Runs one execution on a distributed (or local) iterator in this process."""

    def __init__(self, function: Callable[..., Any], dataset: Any, steps_per_execution: int) -> None:
        self._function = function
        self._iterator = iter(dataset)
        self._steps_per_execution = steps_per_execution

    def run(self, budget: int) -> _Execution:
        wanted = min(self._steps_per_execution, budget)
        steps, outputs = self._function(self._iterator, tf.constant(wanted))
        steps = int(steps)
        return _Execution(steps, outputs.get_value() if steps else None, steps < wanted)


class _PredictExecutor(_SyncExecutor):
    """`_SyncExecutor` for prediction: the outputs are the execution's concatenated predictions."""

    def run(self, budget: int) -> _Execution:
        wanted = min(self._steps_per_execution, budget)
        steps, outputs, structure = self._function(self._iterator, tf.constant(wanted))
        steps = int(steps)
        packed = tf.nest.pack_sequence_as(structure, [output.numpy() for output in outputs]) if steps else None
        return _Execution(steps, packed, steps < wanted)


class _CoordinatorExecutor:
    """Schedules one execution per worker through the `ClusterCoordinator`, then waits for them all.

    Waiting after each wave keeps the host side exact: callbacks (the checkpoint saver) see the
    global step after every step of the wave has been applied.
    """

    def __init__(self, model: keras.Model, function: Callable[..., Any], per_worker: Any) -> None:
        strategy = model.distribute_strategy
        self._coordinator = cluster_coordinator(strategy)
        self._function = function
        self._iterator = iter(self._coordinator.create_per_worker_dataset(per_worker))
        self._steps_per_execution = int(model.steps_per_execution)
        # ParameterServerStrategy's own count of its cluster's workers (it has no public accessor).
        self._workers = max(1, int(getattr(strategy, "_num_workers", 1)))

    def run(self, budget: int) -> _Execution:
        scheduled = []
        while budget > 0 and len(scheduled) < self._workers:
            wanted = min(self._steps_per_execution, budget)
            remote = self._coordinator.schedule(self._function, args=(self._iterator, tf.constant(wanted)))
            scheduled.append((wanted, remote))
            budget -= wanted
        self._coordinator.join()
        total, outputs, ended = 0, None, False
        for wanted, remote in scheduled:
            steps, values = remote.fetch()
            steps = int(steps)
            total += steps
            ended = ended or steps < wanted
            if steps:
                outputs = values
        return _Execution(total, outputs, ended)


def _executor(model: keras.Model, source: EngineDataSource, mode: str, limit: int | None) -> Any:
    """The executor for `mode` ("train", "test" or "predict") under the model's strategy."""
    strategy = model.distribute_strategy
    step_name = f"{mode}_step"
    steps_per_execution = int(model.steps_per_execution)
    if _is_parameter_server(strategy):
        if mode == "train":
            function = _cached(model, "ps_train", lambda: _scheduled_function(_step_on_worker(model, step_name)))
            return _CoordinatorExecutor(model, function, source.per_worker())
        if mode == "test":
            function = _cached(model, "local_test", lambda: multi_step_function(_step_here(model, step_name)))
            return _SyncExecutor(function, source.local(limit), steps_per_execution)
        function = _cached(model, "local_predict", lambda: _predict_multi_step_function(_step_here(model, step_name)))
        return _PredictExecutor(function, source.local(limit), steps_per_execution)
    if mode == "predict":
        function = _cached(
            model, "sync_predict", lambda: _predict_multi_step_function(step_on_replicas(model, step_name, True))
        )
        return _PredictExecutor(function, source.distributed(limit), steps_per_execution)
    function = _cached(
        model, f"sync_{mode}", lambda: multi_step_function(step_on_replicas(model, step_name, False))
    )
    return _SyncExecutor(function, source.distributed(limit), steps_per_execution)


# -- the loops -----------------------------------------------------------------------------------


def _pythonify(logs: Any) -> dict[str, Any]:
    """Logs as Python floats (arrays stay arrays); a step returning no mapping gives no logs."""
    if not isinstance(logs, Mapping):
        return {}
    result = {}
    for name, value in logs.items():
        array = np.asarray(value)
        result[name] = float(array) if array.size == 1 else array
    return result


def _metrics_or_logs(model: keras.Model, logs: Any) -> dict[str, Any]:
    """The metrics' values read across all replicas when `logs` has their names (Keras's rule)."""
    metric_logs = model.get_metrics_result()
    if isinstance(logs, dict) and set(logs) == set(metric_logs):
        return _pythonify(metric_logs)
    return _pythonify(logs)


def _callback_list(
    model: keras.Model, callbacks: Any, *, verbose: int, steps: int | None, history: bool, epochs: int = 1
) -> Any:
    if isinstance(callbacks, keras.callbacks.CallbackList):
        return callbacks  # `fit`'s own list, for its validation (as Keras's `fit` passes it to `evaluate`).
    return keras.callbacks.CallbackList(
        callbacks,
        add_history=history,
        add_progbar=verbose != 0,
        verbose=verbose,
        epochs=epochs,
        steps=steps,
        model=model,
    )


def _remaining(limit: int | None, done: int) -> int:
    # Without a limit, executions run until the data ends; any budget of at least one wave will do.
    return np.iinfo(np.int32).max if limit is None else limit - done


class Validation:
    """`fit`'s validation, Keras's rules: `data` evaluated (`test`) after every epoch `freq` selects.

    `freq` is an int (every `freq`-th epoch) or a collection of 1-based epoch numbers, as Keras's
    `validation_freq`; `steps` batches (None: all the data), from the start of the data each time
    (Keras's `evaluate` in `fit` resets its validation iterator every epoch).
    """

    def __init__(self, source: EngineDataSource, steps: int | None = None, freq: Any = 1) -> None:
        if isinstance(freq, bool) or not (isinstance(freq, int) and freq > 0 or isinstance(freq, (list, tuple, set, range))):
            raise ValueError(
                f"`validation_freq` must be a positive int or a list of epoch numbers, got {freq!r}."
            )
        self.source, self.steps, self.freq = source, steps, freq

    def due(self, epoch: int) -> bool:
        """Whether to validate after 0-based `epoch` (Keras's `Trainer._should_eval`)."""
        if isinstance(self.freq, int):
            return (epoch + 1) % self.freq == 0
        return epoch + 1 in self.freq


def train(
    model: keras.Model,
    source: EngineDataSource,
    *,
    limit: int | None,
    epochs: int = 1,
    initial_epoch: int = 0,
    steps_per_epoch: int | None = None,
    validation: Validation | None = None,
    callbacks: list[keras.callbacks.Callback] | None = None,
    verbose: int = 0,
) -> keras.callbacks.History:
    """Trains `model` for epochs `initial_epoch` to `epochs - 1`, as Keras's `fit` does.

    An epoch is `steps_per_epoch` steps, or, when None, one pass over the data (Keras's rules: with
    `steps_per_epoch` the data's iterator goes on from epoch to epoch, and starts again after the data
    ended; without it, every epoch starts the data again). Unlike Keras 3.15, the last execution of
    an epoch is shortened, so an epoch is exactly `steps_per_epoch` steps. TF1's one `train` call is
    one epoch of `limit` steps (`steps_per_epoch=limit`).

    Callbacks see `on_train_batch_end` after every execution (`steps_per_execution` steps; under
    ParameterServerStrategy, one execution per worker), epoch begins and ends, and, during
    validation, `on_test_*`, as with Keras's `fit`; setting `model.stop_training` ends training
    after the current execution (or epoch).

    Args:
        model: A built, compiled model whose strategy `uses_engine`.
        source: The data (`data_source.DataSource`).
        limit: At most this many steps are read from the data over all epochs (None: no limit).
        epochs: Keras's `epochs`: the index of the epoch to stop before.
        initial_epoch: Keras's `initial_epoch`: the first epoch's index.
        steps_per_epoch: Steps per epoch, or None for one pass over the data.
        validation: Evaluate after epochs (`val_` logs in the epoch's logs), or None.
        callbacks: Keras callbacks.
        verbose: 0 (silent) or Keras's progress bar verbosity.

    Returns:
        The `History`: one entry per epoch run; its logs are the metrics' values over all replicas
        and the epoch's steps, and the validation's under `val_<name>`.
    """
    callback_list = _callback_list(
        model, callbacks, verbose=verbose, steps=steps_per_epoch, history=True, epochs=epochs
    )
    model.stop_training = False
    callback_list.on_train_begin()
    executor, total, training_logs = None, 0, None
    for epoch in range(initial_epoch, epochs):
        if executor is None or steps_per_epoch is None:
            executor = _executor(model, source, "train", limit if limit is None else limit - total)
        model.reset_metrics()
        callback_list.on_epoch_begin(epoch)
        done, logs = 0, None
        while steps_per_epoch is None or done < steps_per_epoch:
            callback_list.on_train_batch_begin(done)
            execution = executor.run(_remaining(steps_per_epoch, done))
            if execution.steps:
                done += execution.steps
                logs = _pythonify(execution.outputs)
                callback_list.on_train_batch_end(done - 1, logs)
            if execution.ended or not execution.steps:
                executor = None  # The data ended: the next epoch starts it again (Keras's rule).
                break
            if model.stop_training:
                break
        total += done
        epoch_logs = _metrics_or_logs(model, logs)
        if validation is not None and validation.due(epoch):
            val_logs = test(model, validation.source, steps=validation.steps, callbacks=callback_list)
            epoch_logs.update({f"val_{name}": value for name, value in val_logs.items()})
        callback_list.on_epoch_end(epoch, epoch_logs)
        training_logs = epoch_logs
        if model.stop_training or (limit is not None and total >= limit):
            break
    if isinstance(model.optimizer, keras.optimizers.Optimizer) and epochs > initial_epoch:
        model.optimizer.finalize_variable_values(model.trainable_weights)
    callback_list.on_train_end(training_logs)
    logger.info("tfmigrate.runtime.engine: trained %d steps under %s.", total, type(model.distribute_strategy).__name__)
    history = next(c for c in callback_list.callbacks if isinstance(c, keras.callbacks.History))
    return history


def test(
    model: keras.Model,
    source: EngineDataSource,
    *,
    steps: int | None,
    verbose: int = 0,
    callbacks: Any = None,
) -> dict[str, Any]:
    """Evaluates `model` on `steps` batches (or all the data); returns the metrics' values.

    Args:
        model: A built, compiled model whose strategy `uses_engine`.
        source: The data.
        steps: Batches to evaluate, or None for all the data.
        verbose: 0 (silent) or Keras's progress bar verbosity.
        callbacks: Keras callbacks (`on_test_*`), or `fit`'s `CallbackList` during validation.

    Returns:
        Python floats keyed by `loss` and the metrics' names (Keras's `evaluate(return_dict=True)`).
    """
    callback_list = _callback_list(model, callbacks, verbose=verbose, steps=steps, history=False)
    executor = _executor(model, source, "test", steps)
    model.reset_metrics()
    callback_list.on_test_begin()
    done, logs = 0, None
    while steps is None or done < steps:
        callback_list.on_test_batch_begin(done)
        execution = executor.run(_remaining(steps, done))
        if execution.steps:
            done += execution.steps
            logs = _pythonify(execution.outputs)
            callback_list.on_test_batch_end(done - 1, logs)
        if execution.ended or not execution.steps:
            break
    results = _metrics_or_logs(model, logs)
    callback_list.on_test_end(results)
    return results


def predict(
    model: keras.Model, source: EngineDataSource, *, steps: int | None, verbose: int = 0, callbacks: Any = None
) -> Any:
    """Predicts on `steps` batches (or all the data); returns the outputs as NumPy arrays.

    Args:
        model: A built model whose strategy `uses_engine`.
        source: The data (features, or `(features, labels)` whose labels are ignored).
        steps: Batches to predict, or None for all the data.
        verbose: 0 (silent) or Keras's progress bar verbosity.
        callbacks: Keras callbacks (`on_predict_*`).

    Returns:
        `predict_step`'s outputs for all batches, concatenated along the batch axis, in the
        structure `predict_step` returns (an array for a single-output model).

    Raises:
        ValueError: If the data is empty.
    """
    callback_list = _callback_list(model, callbacks, verbose=verbose, steps=steps, history=False)
    executor = _executor(model, source, "predict", steps)
    callback_list.on_predict_begin()
    done, chunks = 0, []
    while steps is None or done < steps:
        callback_list.on_predict_batch_begin(done)
        execution = executor.run(_remaining(steps, done))
        if execution.steps:
            done += execution.steps
            chunks.append(execution.outputs)
            callback_list.on_predict_batch_end(done - 1, {"outputs": execution.outputs})
        if execution.ended or not execution.steps:
            break
    callback_list.on_predict_end()
    if not chunks:
        raise ValueError("predict: the input data is empty; there is nothing to predict on.")
    return tf.nest.map_structure(lambda *parts: np.concatenate(parts, axis=0), *chunks)
