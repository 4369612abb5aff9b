"""`fit`, `evaluate` and `predict`: TF1 `Estimator.train`/`evaluate`/`predict` semantics on a compiled
Keras 3 model, under every `tf.distribute` strategy kind.

Separation of concerns:
  * `fit`/`evaluate`/`predict` own the *outer* TF1 contract: `steps` vs `max_steps`, the global step
    (`model.optimizer.iterations`), restoring from and saving to `model_dir`, the random seed.
  * `DataSource` (data_source.py) owns how the data reaches the loop: a `tf.data.Dataset` is given as is (Keras splits
    its global batches across replicas); an `InputFnData` with `per_replica=False` becomes the
    dataset of one input pipeline; a per-replica `InputFnData` or any function of
    `tf.distribute.InputContext` goes through `strategy.distribute_datasets_from_function`. For the
    runtime's engine it also makes distributed, per-worker and local datasets.
  * The *inner* loop, `steps_per_execution` steps per device call (TPUEstimator's
    `iterations_per_loop`) with callbacks every `steps_per_execution` steps, is Keras's own
    `model.fit(epochs=1)`/`evaluate`/`predict` wherever it works, and the runtime's `engine`
    where it does not:

      kind                    fit                          evaluate / predict
      default, one_device     Keras                        Keras
      mirrored                Keras, with the runtime's    Keras
                              device loop (`keras_workarounds.device_loop`)
      central_storage         Keras (+ `keras_workarounds.use_native_increments`)
      tpu                     Keras (untested here: no TPU)
      multi_worker_mirrored   engine (keras-team/keras#20585)
      parameter_server        engine (no Keras 3 support): steps scheduled on the workers;
                              evaluate/predict on the coordinator

  * `_CheckpointSaver` (a Keras callback, used by both) runs `checkpoints.SaveSchedule`, TF1's
    `CheckpointSaverHook` schedule and the multi-worker convention (chief into `model_dir`, other
    workers into a temporary directory), which `ctl.EstimatorLoop` runs too; `checkpoints` owns
    the files, `cluster` says who is chief.

Step counts are exact, per `fit` call and per epoch (`_EpochBudget`). Keras 3.15 `fit(steps_per_epoch=n)` with `steps_per_execution=k` runs whole
device loops, ending at the next multiple of k (measured: n=5, k=4 -> 8 steps), whereas TF1
shortened the last loop. The runtime therefore also cuts the data to n batches (`take`), and Keras's
device loop stops when its input ends (n=5, k=4 -> 4 + 1 steps).

Under MirroredStrategy `fit` runs its own training loop instead of Keras's (`keras_workarounds.device_loop`):
Keras 3.15's loop calls `strategy.run` inside a `tf.cond` and fails with "You must feed a value for
placeholder tensor" when `steps_per_execution > 1` (keras-team/keras#19246, measured on 2 CPUs),
and at the end of a finite `distribute_datasets_from_function` dataset it starts one more step
whose `OutOfRangeError` comes after `optimizer.iterations` was incremented (measured: 5 batches ->
global step 6). The runtime's loop (the engine's `multi_step_function`) asks
`get_next_as_optional()` before every step and otherwise calls the same `model.train_step`
(measured: identical weights and logs to Keras's loop with `steps_per_execution=1`).

Under CentralStorageStrategy and ParameterServerStrategy Keras's `Variable.assign_add` (a read,
then an assignment) counts wrongly; `keras_workarounds.use_native_increments` explains and fixes it.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Any, Iterator, Mapping

import keras
import numpy as np
import tensorflow as tf

from . import checkpoints, cluster, early_stopping, engine, keras_workarounds, session_run
from . import hooks as hooks_lib
from ._state import ModelState, model_state
from ._logging import logger
from .data_source import DataSource, check_steps, ensure_built
from .tf1_checkpoint import apply_init_checkpoints
from .callbacks import StepLogger, SummarySaver
from .cluster import is_chief

__all__ = ["EstimatorCallsModel", "estimator_call", "evaluate", "fit", "predict", "seed_from_config"]

_RAN_OUT_OF_DATA = "Your input ran out of data"
_RESERVED_FIT_KWARGS = ("x", "y", "batch_size", "validation_split")
_KERAS_EPOCH_KWARGS = ("epochs", "steps_per_epoch", "initial_epoch")


class EstimatorCallsModel(keras.Model):
    """A Keras model whose `fit`/`evaluate`/`predict` are a TF1 Estimator's calls on an `input_fn`
    (`tfm.ModelFnModel`, which hosts a model_fn kept as written). `fit`, `evaluate`, `predict` and
    `predictions.predict_examples` hand such a model its own calls, with Estimator's arguments."""

    def predict_examples(self, x: Any = None, **kwargs: Any) -> Iterator[Any]:
        raise NotImplementedError


_ESTIMATOR_CALL_ARGS = {
    "fit": ("steps", "max_steps", "hooks", "saving_listeners"),
    "evaluate": ("steps", "hooks", "checkpoint_path", "name"),
    "predict": ("steps", "hooks", "checkpoint_path"),
    "predict_examples": ("predict_keys", "yield_single_examples", "hooks", "checkpoint_path"),
}


def estimator_call(model: EstimatorCallsModel, caller: str, data: Any, given: dict[str, Any]) -> Any:
    """`model`'s own call for `caller`, with the Estimator arguments given (`config`/`model_dir` must
    be the model's own: a kept model_fn reads them from its estimator)."""
    extra = sorted(key for key, value in given.items() if value is not None and key not in _ESTIMATOR_CALL_ARGS[caller]
                   and key not in ("config", "model_dir"))
    if extra:
        raise TypeError(f"tfmigrate.runtime.{caller}: {', '.join(extra)}: not an argument for a model hosting a "
                        "TF1 model_fn (it takes Estimator's).")
    model_dir = _resolve_model_dir(given.get("model_dir"), given.get("config"))
    if model_dir is not None and os.path.abspath(model_dir) != os.path.abspath(model.model_dir):
        raise ValueError(f"tfmigrate.runtime.{caller}: model_dir {model_dir!r} is not the model's own "
                         f"({model.model_dir!r}); give it to tfm.ModelFnModel(config=...).")
    kwargs = {key: value for key, value in given.items() if key in _ESTIMATOR_CALL_ARGS[caller]}
    return getattr(model, caller)(data, **kwargs)


# -- model preparation ---------------------------------------------------------------------------


def _check_model(model: Any, caller: str, *, compiled: bool = True) -> None:
    if not isinstance(model, keras.Model):
        raise TypeError(
            f"tfmigrate.runtime.{caller}: `model` must be a Keras 3 keras.Model, got {type(model).__name__}."
        )
    if compiled and (getattr(model, "optimizer", None) is None or not getattr(model, "compiled", True)):
        raise ValueError(
            f"tfmigrate.runtime.{caller}: compile the model first (model.compile(optimizer=..., loss=..., "
            "steps_per_execution=config.iterations_per_loop))."
        )


def _resolve_model_dir(model_dir: Any, config: Any) -> str | None:
    if model_dir is None and config is not None:
        model_dir = getattr(config, "model_dir", None)
    return None if model_dir is None else os.fspath(model_dir)


@contextlib.contextmanager
def training_summaries(model: keras.Model, model_dir: str | None, config: Any, optimizer: Any = None) -> Iterator[None]:
    """The default summary writer for the model's own `tf.summary` calls during `fit`.

    TF1 Estimator wrote a model_fn's summaries to `model_dir` every `save_summary_steps` global
    steps (a TPU `host_call` every step: the migrated code wraps those in `record_if(True)`). The
    step of every summary is `optimizer.iterations`, TF1's global step. One writer per model and
    directory, so a train function traced in an earlier `fit` keeps writing to the same place.
    """
    every = 100 if config is None else getattr(config, "save_summary_steps", 100)
    optimizer = optimizer if optimizer is not None else getattr(model, "optimizer", None)
    if model_dir is None or not every or optimizer is None:
        yield
        return
    state = model_state(model)
    if state.summary_writer is None or state.summary_writer[0] != model_dir:
        state.summary_writer = (model_dir, tf.summary.create_file_writer(model_dir))
    writer = state.summary_writer[1]
    step = optimizer.iterations
    step = getattr(step, "value", step)

    def record() -> Any:
        # The cadence is for summaries inside the training step; host-side writers (evaluation
        # results, hooks, SummarySaver) run eagerly and always record.
        if not tf.inside_function():
            return True
        return tf.equal(tf.math.floormod(step, every), 0)

    with writer.as_default(step=step), tf.summary.record_if(record):
        yield
    writer.flush()


def seed_from_config(config: Any) -> None:
    """Applies `RunConfig.tf_random_seed` (if set) before the model is made: Keras draws an unseeded
    initializer's seed when the layer is constructed, so seeding only at `fit` would be too late."""
    seed = getattr(config, "tf_random_seed", None)
    if seed is not None:
        keras.utils.set_random_seed(seed)


def _prepare(
    model: keras.Model, source: DataSource, config: Any, model_dir: str | None, *, with_labels: bool = True
) -> ModelState:
    """Seeds, builds and (once per model object) restores `model`; returns its runtime state."""
    state = model_state(model)
    if getattr(config, "tf_random_seed", None) is not None and not state.seeded:
        seed_from_config(config)
        state.seeded = True
    ensure_built(model, source, with_labels=with_labels)
    keras_workarounds.build_from_one_replica(model)
    restored = None
    if model_dir is not None and not state.restored:
        restored = checkpoints.restore_latest(model, model_dir)
        state.restored = True
    if state.init_checkpoints:
        if restored is None and (getattr(model, "optimizer", None) is None or _global_step(model) == 0):
            # A fresh start: TF1's init_from_checkpoint initializers apply.
            apply_init_checkpoints(model)
        state.init_checkpoints = []
    return state


def _global_step(model: keras.Model) -> int:
    return int(model.optimizer.iterations.numpy())


@contextlib.contextmanager
def _quiet_end_of_input() -> Iterator[None]:
    # Ending at the end of the input is how TF1 training and evaluation normally end.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_RAN_OUT_OF_DATA)
        yield


# -- checkpoints during training -----------------------------------------------------------------


def _config_callbacks(model: keras.Model, config: Any, model_dir: Any) -> list[keras.callbacks.Callback]:
    """RunConfig's `log_step_count_steps` and `save_summary_steps` (TF1 defaults: 100 each)."""
    log_steps = getattr(config, "log_step_count_steps", 100) if config is not None else 100
    summary_steps = getattr(config, "save_summary_steps", 100) if config is not None else 100
    out: list[keras.callbacks.Callback] = []
    if log_steps:
        out.append(StepLogger(int(log_steps)))
    if summary_steps and model_dir is not None and is_chief(model.distribute_strategy):
        out.append(SummarySaver(os.fspath(model_dir), int(summary_steps)))
    return out


class _CheckpointSaver(keras.callbacks.Callback):
    """TF1 `CheckpointSaverHook` as a Keras callback: `checkpoints.SaveSchedule` on batch ends
    (every `steps_per_execution` steps), with its listeners; a listener's stop ends training."""

    def __init__(self, model: keras.Model, model_dir: str, config: Any, *, listeners: list[Any] | None = None):
        super().__init__()
        self._schedule = checkpoints.SaveSchedule(
            model, model_dir, model.distribute_strategy, config, global_step=lambda: _global_step(model), listeners=listeners
        )

    def on_train_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        if self._schedule.begin():
            self.model.stop_training = True

    def on_train_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        if self._schedule.after_run():
            self.model.stop_training = True

    def on_train_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._schedule.end()


# -- hooks ---------------------------------------------------------------------------------------


def _hooks(model: keras.Model, hooks: Any, mode: str, caller: str) -> list[keras.callbacks.Callback]:
    """The caller's hooks plus the model's own (`training_hooks()`...), ready to run as callbacks."""
    out = session_run.check_hooks(hooks, caller) + session_run.model_hooks(model, mode)
    if any(session_run.is_hook(h) for h in out) and mode != "infer":
        session_run.record_losses(model)
    return out


@contextlib.contextmanager
def _session_runs(model: keras.Model, hooks: list[Any], listeners: list[Any] | None = None) -> Iterator[None]:
    """One step per Keras batch while TF1 hooks or saving listeners run, except on a TPU (see `hooks`)."""
    if not (listeners or any(session_run.is_hook(h) for h in hooks)) or isinstance(
        model.distribute_strategy, tf.distribute.TPUStrategy
    ):
        yield
        return
    with one_step_per_run(model):
        yield


@contextlib.contextmanager
def one_step_per_run(model: keras.Model) -> Iterator[None]:
    """Runs `model`'s Keras loops with `steps_per_execution=1` inside (the numbers do not change)."""
    if int(model.steps_per_execution) == 1:
        yield
        return
    saved = model.steps_per_execution
    model.steps_per_execution = 1
    session_run.retrace(model)
    try:
        yield
    finally:
        model.steps_per_execution = saved
        session_run.retrace(model)


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
    hooks: list[Any] | None = None,
    saving_listeners: list[Any] | None = None,
    **fit_kwargs: Any,
) -> keras.callbacks.History | None:
    """Trains a compiled Keras model as TF1 `Estimator.train(input_fn, steps, max_steps)` did.

    The global step is `model.optimizer.iterations`. With a model directory (`model_dir`, else
    `config.model_dir`), a model object not yet restored or trained in this process is first restored
    from the directory's latest checkpoint; checkpoints `ckpt-<global_step>` are saved when training
    starts, every `config.save_checkpoints_steps` steps or `config.save_checkpoints_secs` seconds
    (checked every `steps_per_execution` steps), and at the end, keeping `config.keep_checkpoint_max`.
    Under a multi-worker MultiWorkerMirroredStrategy every worker restores from `model_dir` and
    takes part in every save; only the chief writes to `model_dir` (the others write to a
    temporary directory and delete it), so a restarted cluster resumes from the chief's checkpoints.

    Which loop runs (the results are the default strategy's on the same global batches):
      * Keras's `model.fit`: default, one-device, central-storage (its metric sums fixed, see
        `use_native_increments`) and TPU strategies, and mirrored with `steps_per_execution=1`.
      * Keras's `model.fit` with the runtime's device loop: mirrored with `steps_per_execution > 1`
        (keras-team/keras#19246).
      * The runtime's engine (`engine.train`), calling the model's own `train_step` under
        `strategy.run`: MultiWorkerMirroredStrategy (Keras 3 fails on the first distributed batch,
        keras-team/keras#20585) and ParameterServerStrategy (Keras 3 has no `ClusterCoordinator`
        support). Under ParameterServerStrategy, `steps_per_execution` steps are scheduled per
        worker through `cluster_coordinator(strategy)`, each worker reading its own copy of the
        data (`create_per_worker_dataset`), and the coordinator waits for each wave of one
        execution per worker. The engine takes Keras's epoch, validation and `class_weight`
        arguments and `verbose`, no other `fit_kwargs`.

    Two ways to say how long (not both: a `ValueError`):
      * Estimator's: `steps` / `max_steps` (global steps, across calls), or neither for all the
        data; one Keras epoch.
      * Keras's: `epochs`, `steps_per_epoch`, `initial_epoch`, with Keras's rules: epochs
        `initial_epoch` to `epochs - 1`; with `steps_per_epoch` the data goes on from epoch to epoch
        (and starts again only once it ended), without it every epoch is one pass over the data.
        Unlike Keras 3.15, whose epochs run whole loops of `steps_per_execution` steps, every
        epoch is exactly `steps_per_epoch` steps (`_EpochBudget`). `epochs x steps_per_epoch` on
        repeated data trains what `steps=epochs * steps_per_epoch` trains.
    Either way: `validation_data` (data as for `data`), `validation_steps` (exact, as
    `evaluate`'s `steps`) and `validation_freq` evaluate after epochs into `val_<name>` logs;
    `class_weight` becomes per-example sample weights (Keras's own map); checkpoints, hooks,
    summaries and the global step run across epochs; a callback or hook setting
    `model.stop_training` (a hook's `request_stop`) ends training.

    Args:
        model: A compiled Keras 3 model, built and compiled in the strategy's scope; its
            `steps_per_execution` plays TPUEstimator's `iterations_per_loop`.
        data: A `tf.data.Dataset` (global batches), an `InputFnData` from `input_fn_data`, or a
            function of `tf.distribute.InputContext` returning per-replica batches. Under
            MultiWorkerMirroredStrategy a dataset is sharded across workers by data
            (`AutoShardPolicy.DATA` unless it sets a policy), so every step sees the global batch.
        steps: Train this many more steps (fewer if the data ends first).
        max_steps: Train until the global step reaches `max_steps`; nothing runs if it already has.
        config: A `RunConfig` (or None): `model_dir`, checkpoint schedule and retention,
            `tf_random_seed` (applied once per model object).
        model_dir: Overrides `config.model_dir`.
        callbacks: Keras callbacks; they see batch ends every `steps_per_execution` steps (under
            ParameterServerStrategy, after every wave of executions).
        hooks: TF1 `hooks=`: `tfmigrate.runtime.hooks.SessionRunHook`s (or Keras callbacks), called
            after the checkpoint saver as TF1 ordered them, together with the model's own
            `training_hooks()` (a model_fn's `training_hooks`). With hooks, a session run is one
            step unless the strategy is a TPUStrategy (TF1 ran `iterations_per_loop` steps per
            run only on a TPU); the numbers do not change.
        saving_listeners: TF1 `CheckpointSaverListener`s, called around each checkpoint save
            (`after_save` returning True stops training). A `CheckpointSaverHook` among `hooks`
            replaces the model directory's own saver, as in TF1, and gets the listeners.
        **fit_kwargs: Other `keras.Model.fit` arguments (`verbose` defaults to 0): `epochs`,
            `steps_per_epoch`, `initial_epoch`, `validation_data`, `validation_steps`,
            `validation_freq`, `class_weight` (see above). `x`, `y`, `batch_size` and
            `validation_split` are set by the runtime.

    Returns:
        The Keras `History`, one entry per epoch (TF1's style: one epoch), with the `val_` logs
        of the epochs validated; None when `max_steps` was already reached.

    Raises:
        ValueError: If both `steps` and `max_steps` are given, either of them with `epochs`,
            `steps_per_epoch` or `initial_epoch`, a count is not positive (`initial_epoch`
            negative), `validation_steps` comes without `validation_data`, or the model is not
            compiled or its checkpoint does not match.
        ValueError: If the latest checkpoint in the model directory is a TF1 one that does not fit the
            model (`tf1_checkpoint.load_tf1_checkpoint` says what is missing; nothing is restored).
        TypeError: For `data`/`validation_data` of an unsupported type, a non-dict `class_weight`,
            a reserved `fit_kwargs` key, or a `fit_kwargs` key the runtime's engine does not run.
    """
    if isinstance(model, EstimatorCallsModel):
        return estimator_call(model, "fit", data, dict(steps=steps, max_steps=max_steps, config=config, model_dir=model_dir, hooks=hooks, saving_listeners=saving_listeners, callbacks=callbacks, **fit_kwargs))
    _check_model(model, "fit")
    if steps is not None and max_steps is not None:
        raise ValueError("Can not provide both `steps` and `max_steps`.")
    steps = check_steps(steps, "steps")
    max_steps = check_steps(max_steps, "max_steps")
    reserved = sorted(set(fit_kwargs) & set(_RESERVED_FIT_KWARGS))
    if reserved:
        raise TypeError(
            f"tfmigrate.runtime.fit sets {', '.join(reserved)} itself; use `steps`/`max_steps` or "
            "`epochs`/`steps_per_epoch`, and the data's batches."
        )
    epochs_style = _epoch_arguments(fit_kwargs, steps, max_steps)
    validation = _validation_arguments(fit_kwargs, model.distribute_strategy)
    class_weight = fit_kwargs.pop("class_weight", None)
    model_dir = _resolve_model_dir(model_dir, config)
    source = DataSource(data, model.distribute_strategy)
    state = _prepare(model, source, config, model_dir)
    train_source = source.with_class_weight(class_weight)

    start = _global_step(model)
    if epochs_style is not None:
        epochs, initial_epoch, steps_per_epoch = epochs_style
        # The data is cut to the steps of all the epochs to run (exact step counts, see the module).
        limit = None if steps_per_epoch is None else max(0, epochs - initial_epoch) * steps_per_epoch
    else:
        if max_steps is not None and start >= max_steps:
            logger.info(
                "tfmigrate.runtime.fit: skipping training, the global step (%d) has already reached max_steps=%d.",
                start,
                max_steps,
            )
            return None
        limit = max_steps - start if max_steps is not None else steps
        # TF1's `train` call is one Keras epoch of `limit` steps.
        epochs, initial_epoch, steps_per_epoch = 1, 0, limit

    hooks = _hooks(model, hooks, "train", "fit")
    listeners = list(saving_listeners or [])
    user_saver = next((h for h in hooks if isinstance(h, hooks_lib.CheckpointSaverHook)), None)
    # TF1's order: the checkpoint saver (a chief hook), the step counter and summaries, then the
    # worker hooks (the caller's, then the model_fn's); Keras callbacks last.
    all_callbacks: list[keras.callbacks.Callback] = []
    if user_saver is not None:
        user_saver._listeners.extend(l for l in listeners if l not in user_saver._listeners)  # noqa: SLF001
    elif model_dir is not None:
        all_callbacks.append(_CheckpointSaver(model, model_dir, config, listeners=listeners))
    elif listeners:
        raise ValueError(
            "There should be a CheckpointSaverHook to use saving_listeners: give a model directory "
            "(`model_dir` or `config.model_dir`) or a CheckpointSaverHook."
        )
    all_callbacks += _config_callbacks(model, config, model_dir)
    all_callbacks += hooks
    all_callbacks += list(callbacks or [])
    fit_kwargs.setdefault("verbose", 0)
    fit_kwargs.setdefault("shuffle", False)
    if engine.uses_engine(model):
        fit_kwargs.pop("shuffle")  # The data's order is the dataset's.
        _check_engine_kwargs("fit", model, fit_kwargs)
        with training_summaries(model, model_dir, config):
            history = engine.train(
                model,
                train_source,
                limit=limit,
                epochs=epochs,
                initial_epoch=initial_epoch,
                steps_per_epoch=steps_per_epoch,
                validation=validation,
                callbacks=all_callbacks,
                **fit_kwargs,
            )
    else:
        if validation is not None:
            fit_kwargs.update(
                # Cut, as `evaluate`'s data: Keras 3.15 would run whole loops past `validation_steps`.
                validation_data=validation.source.keras_input(validation.steps),
                validation_steps=validation.source.keras_steps(validation.steps),
                validation_freq=validation.freq,
            )
        budget = _EpochBudget(model, steps_per_epoch, epochs - initial_epoch)
        if budget.needed:
            all_callbacks.append(budget)
        with _session_runs(model, hooks, listeners), keras_workarounds.device_loop(model, budget), _quiet_end_of_input(), training_summaries(
            model, model_dir, config
        ):
            history = model.fit(
                # Cut to `limit` unless the budget ends the epochs: Keras counts whole loops of
                # steps against the data's length, and would end the last epoch early.
                train_source.keras_input(None if budget.needed else limit),
                epochs=epochs,
                initial_epoch=initial_epoch,
                steps_per_epoch=steps_per_epoch,
                callbacks=all_callbacks,
                **fit_kwargs,
            )
    state.restored = True  # Trained: the in-memory model is now newer than any checkpoint.
    logger.info("tfmigrate.runtime.fit: global step %d -> %d.", start, _global_step(model))
    return history


def _epoch_arguments(
    fit_kwargs: dict[str, Any], steps: int | None, max_steps: int | None
) -> tuple[int, int, int | None] | None:
    """Pops Keras's `epochs`/`steps_per_epoch`/`initial_epoch`: (epochs, initial_epoch,
    steps_per_epoch), or None when none is given (Estimator's `steps`/`max_steps`, or all the data)."""
    given = {key: fit_kwargs.pop(key) for key in _KERAS_EPOCH_KWARGS if key in fit_kwargs}
    given = {key: value for key, value in given.items() if value is not None}
    if not given:
        return None
    if steps is not None or max_steps is not None:
        estimator = "`steps`" if steps is not None else "`max_steps`"
        raise ValueError(
            f"tfmigrate.runtime.fit: give either Estimator's {estimator} or Keras's "
            f"{', '.join(f'`{key}`' for key in given)} (epochs x steps_per_epoch), not both: "
            f"{estimator} counts global steps across `fit` calls, Keras's epochs count within one call."
        )
    epochs = check_steps(given.get("epochs", 1), "epochs")
    steps_per_epoch = check_steps(given.get("steps_per_epoch"), "steps_per_epoch")
    initial_epoch = given.get("initial_epoch", 0)
    if isinstance(initial_epoch, bool) or not isinstance(initial_epoch, (int, np.integer)):
        raise TypeError(f"`initial_epoch` must be an int, got {initial_epoch!r}.")
    if initial_epoch < 0:
        raise ValueError(f"`initial_epoch` must be >= 0, given: {initial_epoch}.")
    return epochs, int(initial_epoch), steps_per_epoch


def _validation_arguments(fit_kwargs: dict[str, Any], strategy: tf.distribute.Strategy) -> engine.Validation | None:
    """Pops Keras's `validation_data`/`validation_steps`/`validation_freq` (data as for `fit`)."""
    data = fit_kwargs.pop("validation_data", None)
    steps = check_steps(fit_kwargs.pop("validation_steps", None), "validation_steps")
    freq = fit_kwargs.pop("validation_freq", 1)
    if data is None:
        if steps is not None:
            raise ValueError("tfmigrate.runtime.fit: `validation_steps` needs `validation_data`.")
        return None
    return engine.Validation(DataSource(data, strategy, argument="validation_data"), steps, freq)


class _EpochBudget(keras.callbacks.Callback):
    """Makes every epoch of a Keras-loop `fit` exactly `steps_per_epoch` steps.

    Keras 3.15 runs whole device loops of `steps_per_execution` steps (steps_per_epoch=5,
    steps_per_execution=4: 8 steps an epoch, see the module docstring); cutting the data fixes only
    the last epoch. When several epochs run and `steps_per_epoch` is not a multiple of
    `steps_per_execution`, `device_loop` installs the runtime's loop, which runs
    `min(steps_per_execution, what is left of the epoch)` steps per call.
    """

    def __init__(self, model: keras.Model, steps_per_epoch: int | None, epochs: int) -> None:
        super().__init__()
        per_execution = int(model.steps_per_execution)
        self.needed = bool(
            steps_per_epoch and epochs > 1 and steps_per_epoch % per_execution and not model.run_eagerly
            and not isinstance(model.distribute_strategy, tf.distribute.TPUStrategy)
        )
        self.steps_per_epoch = steps_per_epoch or 0
        self.done = 0

    def on_epoch_begin(self, epoch: int, logs: Mapping[str, Any] | None = None) -> None:
        self.done = 0

    def take(self, per_execution: int) -> int:
        return max(1, min(per_execution, self.steps_per_epoch - self.done))


def _check_trained(model: keras.Model, model_dir: str | None, caller: str) -> None:
    """TF1 raised when `evaluate`/`predict` found no checkpoint for a model never trained."""
    if (
        model_dir is not None
        and not model_state(model).restored
        and checkpoints.latest_checkpoint(model_dir) is None
        and (getattr(model, "optimizer", None) is None or _global_step(model) == 0)
    ):
        raise ValueError(f"Could not find trained model in model_dir: {model_dir!r} (nothing to {caller}).")


def _check_engine_kwargs(caller: str, model: keras.Model, kwargs: Mapping[str, Any]) -> None:
    # fit's epochs, validation and class_weight were taken out before; `callbacks` is fit's own argument.
    supported = {"verbose"} if caller == "fit" else {"verbose", "callbacks"}
    unsupported = sorted(set(kwargs) - supported)
    if unsupported:
        raise TypeError(
            f"tfmigrate.runtime.{caller}: under {type(model.distribute_strategy).__name__} the runtime's engine "
            f"runs the model (Keras's own loop does not work there) and does not take "
            f"{', '.join(f'`{k}`' for k in unsupported)}."
        )


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
    hooks: list[Any] | None = None,
    name: str | None = None,
    checkpoint_path: str | os.PathLike | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Evaluates a compiled Keras model as TF1 `Estimator.evaluate(input_fn, steps)` did.

    A model object not yet restored or trained in this process is first restored from the model
    directory's latest checkpoint (`model_dir`, else `config.model_dir`).

    The `loss` is Estimator's: the unweighted mean of the per-batch losses
    (`tf.compat.v1.metrics.mean(loss)`), so a short last batch counts as much as a full one (Keras
    alone weights each batch by its size). The metrics stay example-weighted, as TF1's were.

    Which loop runs: Keras's `model.evaluate` under the default, one-device, mirrored,
    central-storage and TPU strategies; the runtime's engine (`engine.test`, the model's own
    `test_step`) under MultiWorkerMirroredStrategy (keras-team/keras#20585) and
    ParameterServerStrategy (no Keras 3 support; the coordinator evaluates by itself, TF's "inline
    evaluation", because every worker's dataset would be a full copy of the data). Either way
    `steps_per_execution` batches run per `tf.function` call, and the metrics are read across all
    replicas.

    Args:
        model: A compiled Keras 3 model.
        data: As for `fit`.
        steps: Evaluate this many batches, or until the data ends when None. Under a config's
            `train_distribute` with no `eval_distribute`, TF1 evaluated the `input_fn`'s batches
            one at a time on one device: `steps` batches in all, spread over the replicas
            (`DataSource.evaluated_on_one_device`), not `steps` batches per replica.
        config: A `RunConfig` or None (`model_dir`, `tf_random_seed`).
        model_dir: Overrides `config.model_dir`.
        hooks: TF1 `hooks=`: `tfmigrate.runtime.hooks.SessionRunHook`s, with the model's own
            `evaluation_hooks()`; one session run per batch off TPU (see `fit`).
        name: TF1's evaluation name: the results are written, as TF1 wrote them, as scalar
            summaries at the global step to `model_dir/eval` (`eval_<name>` with a name), where
            early-stopping hooks and `BestExporter` read them.
        checkpoint_path: TF1's `checkpoint_path=`: evaluate the weights (and global step) of this
            checkpoint, not the model's own; the model gets its own back afterwards. A TF1
            Estimator name (`model.ckpt-8`) finds the runtime's checkpoint of that step.
        **kwargs: Other `keras.Model.evaluate` arguments (`verbose` defaults to 0; the engine takes
            `verbose` and `callbacks`).

    Returns:
        A dict of Python floats keyed by `loss` and the compiled metrics' names, plus
        `global_step` (an int, `model.optimizer.iterations`).

    Raises:
        ValueError: If `steps` is not positive, the model is not compiled, or the model directory
            has no checkpoint for a model that was never trained (as TF1 raised).
        ValueError: If the latest checkpoint in the model directory is a TF1 one that does not fit the
            model (`tf1_checkpoint.load_tf1_checkpoint` says what is missing; nothing is restored).
        TypeError: For `data` of an unsupported type or a keyword the runtime sets or its engine
            does not take.
    """
    if isinstance(model, EstimatorCallsModel):
        return estimator_call(model, "evaluate", data, dict(steps=steps, config=config, model_dir=model_dir, hooks=hooks, name=name, checkpoint_path=checkpoint_path, **kwargs))
    _check_model(model, "evaluate")
    steps = check_steps(steps, "steps")
    for key in ("x", "y", "batch_size", "return_dict"):
        if key in kwargs:
            raise TypeError(f"tfmigrate.runtime.evaluate sets `{key}` itself.")
    model_dir = _resolve_model_dir(model_dir, config)
    source = DataSource(data, model.distribute_strategy)
    if checkpoint_path is None:
        _check_trained(model, model_dir, "evaluate")
    _prepare(model, source, config, model_dir)
    with checkpoints.weights_from(model, checkpoint_path):
        return _evaluate(model, source, steps, model_dir, hooks, name, kwargs)


class _Evaluating:
    """Whether `tfm.evaluate` is tracing. Process-wide, not per thread: MirroredStrategy traces
    each replica's step in a thread of its own (a thread-local flag read False there, and the
    mirrored evaluation's loss was Keras's example-weighted mean)."""

    active = False


_EVALUATING = _Evaluating()


def _count_batches_once(model: keras.Model) -> None:
    """Makes the model's evaluation `loss` Estimator's mean of batch losses (each batch weight 1).

    Keras's test step updates its loss tracker weighted by the batch size. The wrapper makes that
    weight 1 while `tfm.evaluate` traces the evaluation function (training's function, traced
    outside, keeps Keras's weighting), and 0 for an empty batch: on input of unknown size Keras's
    last step can see no examples, a batch TF1 never ran. An evaluation function traced before is
    dropped so that the next evaluation traces with the wrapper.
    """
    tracker = getattr(model, "_loss_tracker", None)
    if tracker is None or getattr(tracker, "_tfm_batch_mean", False):
        return
    weighted = tracker.update_state

    def update_state(values, sample_weight=None):
        if _EVALUATING.active and sample_weight is not None:
            counted = tf.not_equal(tf.cast(sample_weight, tf.float32), 0.0)
            sample_weight = tf.cast(counted, tf.float32)
            # An empty batch's loss may be NaN (a `reduce_mean` of nothing): weight 0 keeps NaN.
            values = tf.where(counted, values, tf.zeros_like(values))
        return weighted(values, sample_weight=sample_weight)

    tracker.update_state = update_state
    tracker._tfm_batch_mean = True
    model.test_function = None


@contextlib.contextmanager
def _estimator_eval_loss(model: keras.Model) -> Iterator[None]:
    _count_batches_once(model)
    previous, _EVALUATING.active = _EVALUATING.active, True
    try:
        yield
    finally:
        _EVALUATING.active = previous


def _evaluate(model, source, steps, model_dir, hooks, name, kwargs) -> dict[str, Any]:
    with _estimator_eval_loss(model):
        return _evaluate_logs(model, source, steps, model_dir, hooks, name, kwargs)


def _evaluate_logs(model, source, steps, model_dir, hooks, name, kwargs) -> dict[str, Any]:
    hooks = _hooks(model, hooks, "eval", "evaluate")
    kwargs.setdefault("verbose", 0)
    if hooks:
        kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + hooks
    if engine.uses_engine(model):
        _check_engine_kwargs("evaluate", model, kwargs)
        logs = engine.test(model, source, steps=steps, **kwargs)
    else:
        with _session_runs(model, hooks), _quiet_end_of_input():
            logs = model.evaluate(source.keras_input(steps), steps=source.keras_steps(steps), return_dict=True, **kwargs)
    results = {key: _to_python(value) for key, value in logs.items()}
    results["global_step"] = _global_step(model)
    if model_dir is not None and cluster.is_chief(model.distribute_strategy):
        early_stopping.write_eval_results(early_stopping.eval_dir(model_dir, name), results, results["global_step"])
    return results


def predict(
    model: keras.Model,
    data: Any,
    *,
    steps: int | None = None,
    config: Any = None,
    model_dir: str | os.PathLike | None = None,
    hooks: list[Any] | None = None,
    checkpoint_path: str | os.PathLike | None = None,
    **kwargs: Any,
) -> Any:
    """Predicts with a Keras model as TF1 `Estimator.predict(input_fn)` did, all at once.

    A model object not yet restored or trained in this process is first restored from the model
    directory's latest checkpoint (`model_dir`, else `config.model_dir`). Estimator yielded one
    prediction per example; this returns the arrays of all of them (Keras's `predict`).

    Which loop runs: Keras's `model.predict` under the default, one-device, mirrored,
    central-storage and TPU strategies; the runtime's engine (`engine.predict`) under
    MultiWorkerMirroredStrategy (keras-team/keras#20585: every worker gets the predictions of the
    whole global batch, gathered in replica order) and ParameterServerStrategy (no Keras 3 support:
    the coordinator predicts by itself, reading the variables from the parameter servers). Both run
    `steps_per_execution` batches per `tf.function` call.

    Args:
        model: A Keras 3 model (compiled or not) built in the strategy's scope.
        data: As for `fit`; labels in the batches are ignored.
        steps: Predict on this many batches, or until the data ends when None.
        config: A `RunConfig` or None (`model_dir`, `tf_random_seed`).
        model_dir: Overrides `config.model_dir`.
        hooks: TF1 `hooks=`, with the model's own `prediction_hooks()` (see `evaluate`).
        **kwargs: Other `keras.Model.predict` arguments (`verbose` defaults to 0; the engine takes
            `verbose` and `callbacks`).

    Returns:
        NumPy arrays: `predict_step`'s outputs concatenated along the batch axis, in its structure
        (one array for a single-output model).

    Raises:
        ValueError: If `steps` is not positive, the data is empty, or the model directory has no
            checkpoint for a model that was never trained (as TF1 raised).
        ValueError: If the latest checkpoint in the model directory is a TF1 one that does not fit the
            model (`tf1_checkpoint.load_tf1_checkpoint` says what is missing; nothing is restored).
        TypeError: For `data` of an unsupported type or a reserved keyword.
    """
    if isinstance(model, EstimatorCallsModel):
        return estimator_call(model, "predict", data, dict(steps=steps, config=config, model_dir=model_dir, hooks=hooks, checkpoint_path=checkpoint_path, **kwargs))
    _check_model(model, "predict", compiled=False)
    steps = check_steps(steps, "steps")
    for key in ("x", "batch_size"):
        if key in kwargs:
            raise TypeError(f"tfmigrate.runtime.predict sets `{key}` itself.")
    model_dir = _resolve_model_dir(model_dir, config)
    source = DataSource(data, model.distribute_strategy)
    if checkpoint_path is None:
        _check_trained(model, model_dir, "predict")
    _prepare(model, source, config, model_dir, with_labels=False)
    with checkpoints.weights_from(model, checkpoint_path):  # TF1's `checkpoint_path=` (see `evaluate`)
        return _predict(model, source, steps, hooks, kwargs)


def _predict(model, source, steps, hooks, kwargs) -> Any:
    hooks = _hooks(model, hooks, "infer", "predict")
    kwargs.setdefault("verbose", 0)
    if hooks:
        kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + hooks
    if engine.uses_engine(model):
        _check_engine_kwargs("predict", model, kwargs)
        return engine.predict(model, source, steps=steps, **kwargs)
    with _session_runs(model, hooks), _quiet_end_of_input():
        return model.predict(source.keras_input(steps), steps=steps, **kwargs)
