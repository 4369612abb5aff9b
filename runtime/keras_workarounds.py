"""The runtime's workarounds for Keras 3 bugs and gaps, each with its upstream issue.

Every place the runtime replaces or patches what Keras 3 does, because Keras 3 (3.15 measured)
gets a TF1 program's numbers wrong under a `tf.distribute` strategy:

  * `device_loop` (with `needs_own_loop`, `multi_step_function`): under MirroredStrategy Keras
    3.15's training loop calls `strategy.run` inside a `tf.cond` and fails ("You must feed a value
    for placeholder tensor") when `steps_per_execution > 1`, and at the end of a finite
    distributed dataset starts one more step after incrementing `optimizer.iterations`. Upstream:
    keras-team/keras#19246. `fit` installs the engine's loop for the call instead.
  * `use_native_increments`: Keras 3's `Variable.assign_add`/`assign_sub` are a read then an
    assignment (keras/src/backend/common/variables.py), which CentralStorageStrategy's
    SUM-aggregated variables and ParameterServerStrategy's shared variables count wrongly. No
    upstream issue found (searched keras-team/keras for assign_add under these strategies);
    measured numbers in the docstring.

  * `build_from_one_replica`: before each `fit`/`evaluate`, Keras 3.15 (`_maybe_symbolic_build`)
    MEAN-reduces the first distributed batch across the replicas only to learn its shapes; when
    the replicas' batches differ in size (an evaluation of fewer batches than replicas, as TF1 ran
    them on one device) that reduction fails ("Inputs to operation AddN ... must have the same
    size and shape"). No upstream issue found. One replica's batch has the shapes.

Decided elsewhere, for the same reason (listed here so this is the index of them):
  * MultiWorkerMirroredStrategy and ParameterServerStrategy training runs the runtime's `engine`
    instead of Keras's loops: keras-team/keras#20585 (Keras 3 has no multi-worker support;
    tensorflow/tensorflow#72388 points to tf-keras) - `engine.uses_engine`, `strategy`.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

import keras
import tensorflow as tf

from . import engine
from ._state import model_state

__all__ = ["build_from_one_replica", "device_loop", "multi_step_function", "needs_own_loop", "use_native_increments"]


def _native_assign_add(variable: Any, value: Any) -> Any:
    return variable.value.assign_add(tf.cast(value, variable.value.dtype))


def _native_assign_sub(variable: Any, value: Any) -> Any:
    return variable.value.assign_sub(tf.cast(value, variable.value.dtype))


def use_native_increments(model: keras.Model) -> None:
    """Makes `assign_add`/`assign_sub` of the model's Keras variables one TF operation where needed.

    Keras 3's `Variable.assign_add(d)` is `assign(self + d)`, a read then a write
    (keras/src/backend/common/variables.py). Two strategies break on that:

      * CentralStorageStrategy: a metric's `total`/`count` is one `AggregatingVariable` with SUM
        aggregation, so the replicas' *assignments* are summed: R * v + sum(d) instead of
        v + sum(d) (measured on 2 CPUs: a `Mean`'s total went 3 -> 9 -> 21 for updates of 1 and 2
        per call; the logged loss was 0.4546 instead of 0.4376 after 10 steps, the weights agreed).
      * ParameterServerStrategy with several workers: workers read and write the same variable on a
        parameter server concurrently, so increments are lost (measured: `optimizer.iterations` 31
        after 40 steps on 2 workers; the metrics lose updates the same way).

    The TF variable's own `assign_add` merges the replicas' deltas (CentralStorage) and is a single
    operation on the parameter server, so those variables use it. (The optimizer's weight updates
    already call TF's `assign_sub` directly.) Weights and optimizer state under CentralStorage are
    not SUM-aggregated and are left alone.
    """
    strategy = model.distribute_strategy
    central = isinstance(strategy, tf.distribute.experimental.CentralStorageStrategy)
    if not central and not isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
        return
    optimizer = getattr(model, "optimizer", None)
    variables = list(model.variables) + list(model.metrics_variables)
    if optimizer is not None:
        variables += list(optimizer.variables)
    for variable in variables:
        if not isinstance(variable, keras.Variable) or "assign_add" in vars(variable):
            continue
        if central and getattr(variable.value, "aggregation", None) != tf.VariableAggregation.SUM:
            continue
        variable.assign_add = functools.partial(_native_assign_add, variable)
        variable.assign_sub = functools.partial(_native_assign_sub, variable)


def needs_own_loop(model: keras.Model) -> bool:
    """Whether Keras's device loop is replaced: under MirroredStrategy (keras-team/keras#19246; see `estimator_calls`'s docstring)."""
    return not model.run_eagerly and isinstance(model.distribute_strategy, tf.distribute.MirroredStrategy)


def multi_step_function(model: keras.Model, step_name: str, budget: Any = None) -> Callable[[Any], Any]:
    """A Keras `train_function` running up to `steps_per_execution` steps of `step_name` per call.

    The engine's inner loop (`engine.multi_step_function`): unlike Keras 3.15's, it never wraps
    `strategy.run` in a `tf.cond`, and checks `get_next_as_optional().has_value()` before each step,
    so no step starts on exhausted input. Logs are averaged over replicas, as Keras's "auto"
    reduction does off TPU. The function holds the model weakly (it is kept in the model's runtime
    state).
    """
    multi_step = engine.multi_step_function(engine.step_on_replicas(model, step_name, gather=False))
    steps_per_execution = int(model.steps_per_execution)

    def function(iterator: Any) -> Any:
        wanted = steps_per_execution if budget is None else budget.take(steps_per_execution)
        steps, outputs = multi_step(iterator, tf.constant(wanted))
        if budget is not None:
            budget.done += int(steps)
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
def device_loop(model: keras.Model, budget: Any = None) -> Iterator[None]:
    """Installs the runtime's training loop for one `model.fit` call when Keras's cannot be used,
    or when epochs must end at `steps_per_epoch` exactly (`estimator_calls._EpochBudget`: `needed`, `take(n)`, `done`).

    Keras's evaluation loop works under MirroredStrategy (an extra step on exhausted input only
    adds an empty batch to the metrics), so `evaluate` keeps it.
    """
    budget = budget if budget is not None and budget.needed else None
    if not needs_own_loop(model) and budget is None:
        yield
        return
    if budget is not None:
        # The budget changes from fit to fit; the traced step function is shared with the cache.
        function = multi_step_function(model, "train_step", budget)
    else:
        state = model_state(model)
        key = _function_key(model)
        cached = state.device_loop
        if cached is None or cached[0] != key:
            cached = (key, multi_step_function(model, "train_step"))
            state.device_loop = cached
        function = cached[1]
    saved = model.train_function
    model.train_function = function
    try:
        yield
    finally:
        model.train_function = saved


def _one_replica(strategy: tf.distribute.Strategy, value: Any) -> Any:
    """A replica's local value of `value` that holds examples (the first one), or `value` itself."""
    if not isinstance(value, tf.distribute.DistributedValues):
        return value
    local = strategy.experimental_local_results(value)
    return next((v for v in local if v.shape.rank == 0 or v.shape[0] != 0), local[0])


def build_from_one_replica(model: keras.Model) -> None:
    """Makes the model's symbolic build before `fit`/`evaluate` read one replica's first batch.

    Keras 3.15's `_maybe_symbolic_build` reads the first distributed batch and reduces it across
    the replicas (MEAN), only to learn the shapes to build the model and its metrics with. Replicas
    whose batches differ in size (one left without a batch when an evaluation runs fewer batches
    than there are replicas) make that reduction fail. The same build from the first replica that
    holds examples needs no reduction; everything else is Keras's own (the iterator is reset by
    the caller, as before).
    """
    if getattr(model, "_tfm_builds_from_one_replica", False):
        return
    original = model._maybe_symbolic_build

    def maybe_symbolic_build(iterator: Any = None, data_batch: Any = None) -> Any:
        strategy = getattr(model, "_distribute_strategy", None)
        if iterator is None or strategy is None or strategy.num_replicas_in_sync == 1:
            return original(iterator=iterator, data_batch=data_batch)
        for _, _, it in iterator:
            batch = next(it)
            data_batch = tf.nest.map_structure(functools.partial(_one_replica, strategy), batch)
            break
        with strategy.scope():
            model._symbolic_build(data_batch=data_batch)

    model._maybe_symbolic_build = maybe_symbolic_build
    model._tfm_builds_from_one_replica = True
