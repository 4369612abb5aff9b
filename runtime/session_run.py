"""The session-run machinery under the runtime's TF1 hooks (see `hooks`' docstring for the contract).

  * What a hook can fetch (`GLOBAL_STEP`, `LOSS`, `Handle`), `SessionRunArgs`/`SessionRunValues`/
    `SessionRunContext`, TF1's `SecondOrStepTimer`, and `record_losses` (the per-step loss `LOSS`
    reads).
  * `SessionRunHook`, the base class: TF1's hook interface on Keras's callback events.
  * Who drives hooks: `fit`/`evaluate`/`predict` through Keras's callback events (`is_hook`,
    `model_hooks`, `check_hooks`), or a loop other than Keras's (`ctl.EstimatorLoop`) through
    `LoopHooks`.

`hooks` holds TF1's hooks themselves (`LoggingTensorHook`, ..., the early-stopping hooks) and
re-exports the public names here, which migrated programs use as `tfm.hooks.*`.
"""

from __future__ import annotations

import collections
import time
import weakref
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numpy as np
import tensorflow as tf
from ._state import model_state
from .checkpoints import model_checkpoint


keras = tf.keras

__all__ = [
    "GLOBAL_STEP", "LOSS", "Handle", "LoopHooks", "NanLossDuringTrainingError", "SecondOrStepTimer", "SessionRunArgs",
    "SessionRunContext", "SessionRunHook", "SessionRunValues", "check_hooks", "global_step_tensor", "is_hook",
    "model_hooks", "record_losses", "retrace",
]


# -- what a hook can fetch -----------------------------------------------------------------------


class Handle:
    """A value a hook can ask for; resolved by the runtime at the end of each session run."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"tfm.hooks.{self.name.upper()}"


#: The global step as a TF1 hook fetched it beside the train op: its value when the run started.
GLOBAL_STEP = Handle("global_step")
#: The loss of the session run's last step (training or evaluation), as `model_fn` computed it.
LOSS = Handle("loss")


def global_step_tensor() -> Handle:
    """What `tf.train.get_global_step()` / `get_or_create_global_step()` gave a hook: `GLOBAL_STEP`."""
    return GLOBAL_STEP


class NanLossDuringTrainingError(RuntimeError):
    """TF1's `tf.train.NanLossDuringTrainingError`."""

    def __str__(self) -> str:
        return "NaN loss during training."


class SessionRunArgs(NamedTuple):
    """TF1's `tf.train.SessionRunArgs`: what `before_run` asks the run to fetch (feeds are not supported)."""

    fetches: Any
    feed_dict: Any = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """TF1's `tf.train.SessionRunValues`: `results` has the structure of the requested `fetches`."""

    results: Any
    options: Any = None
    run_metadata: Any = None


class _Session:
    """What a hook's `run_context.session` / `session` can still do: read handles now."""

    def __init__(self, hook: "SessionRunHook") -> None:
        self._hook = hook

    def run(self, fetches: Any, feed_dict: Any = None, **unused: Any) -> Any:
        if feed_dict:
            raise NotImplementedError("tfmigrate.runtime.hooks: a hook's session.run cannot feed values in TF2.")
        return self._hook._resolve(fetches, after_run=True)


class SessionRunContext:
    """TF1's `tf.train.SessionRunContext`."""

    def __init__(self, original_args: SessionRunArgs | None, session: _Session) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs | None:
        return self._original_args

    @property
    def session(self) -> _Session:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        self._stop_requested = True


class SecondOrStepTimer:
    """TF1's `tf.train.SecondOrStepTimer`: triggers every `every_secs` seconds or `every_steps` steps."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        # As TF1: no range checks (`every_secs=0`, EvalSpec's `throttle_secs=0`, triggers every time).
        if (every_steps is None) == (every_secs is None):
            raise ValueError("exactly one of every_steps and every_secs should be provided.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step: int | None = None
        self._last_triggered_time: float | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        if self._every_steps is not None and step >= self._last_triggered_step + self._every_steps:
            return True
        return False

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        now = time.time()
        if self._last_triggered_time is None:
            elapsed: tuple[float | None, int | None] = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)  # type: ignore[operator]
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self) -> int | None:
        return self._last_triggered_step


# -- the per-step loss ---------------------------------------------------------------------------

_loss_variables: "weakref.WeakKeyDictionary[Any, tf.Variable]" = weakref.WeakKeyDictionary()


def _unscaled(loss: Any) -> Any:
    """The replica's own loss: Keras divides the loss by the replica count under a strategy."""
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    return loss * tf.cast(replicas, loss.dtype) if replicas > 1 else loss


def record_losses(model: keras.Model) -> tf.Variable:
    """Makes `model` remember the loss of its latest train/test step (what `LOSS` reads).

    `model.compute_loss` is wrapped once per model to store its result in a variable (replica 0's,
    as TPUEstimator reported it); the model's step functions are traced again.
    """
    variable = _loss_variables.get(model)
    if variable is not None:
        return variable
    with model.distribute_strategy.scope():
        variable = tf.Variable(
            float("nan"),
            trainable=False,
            dtype=tf.float32,
            synchronization=tf.VariableSynchronization.ON_READ,
            aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
            name="tfm_step_loss",
        )
    original = model.compute_loss
    import inspect

    takes_training = "training" in inspect.signature(original).parameters

    def compute_loss(x=None, y=None, y_pred=None, sample_weight=None, training=True):
        kwargs = {"training": training} if takes_training else {}
        loss = original(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, **kwargs)
        variable.assign(tf.cast(_unscaled(loss), tf.float32))
        return loss

    model.compute_loss = compute_loss
    _loss_variables[model] = variable
    retrace(model)
    return variable


def retrace(model: keras.Model) -> None:
    for name in ("train_function", "test_function", "predict_function"):
        if hasattr(model, name):
            setattr(model, name, None)
    model_state(model).device_loop = None


# -- the hook base class -------------------------------------------------------------------------


def _global_step(model: keras.Model) -> int:
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        return 0
    return int(optimizer.iterations.numpy())


class SessionRunHook(keras.callbacks.Callback):
    """TF1's `tf.train.SessionRunHook` interface on Keras's callback events.

    Override `begin`, `after_create_session`, `before_run`, `after_run` and `end` as in TF1. The
    same object may be passed to several `fit`/`evaluate`/`predict` calls; `begin` starts each.
    Under a loop of its own (`LoopHooks`, `ctl.EstimatorLoop`) the hook reads the global step,
    the loss and the checkpoint from that loop instead of the Keras model.
    """

    # Set by `LoopHooks` while a loop other than Keras's drives the hook (a class attribute: TF1
    # hook subclasses often skip `__init__`).
    _loop_hooks: "LoopHooks | None" = None

    def _step_now(self) -> int:
        if self._loop_hooks is not None:
            return self._loop_hooks.global_step()
        return _global_step(self.model)

    def _run_loss(self) -> np.float32:
        if self._loop_hooks is not None:
            return np.float32(self._loop_hooks.loss())
        variable = _loss_variables.get(self.model)
        if variable is None:
            raise ValueError("tfmigrate.runtime.hooks: LOSS is read only inside fit/evaluate with hooks.")
        return np.float32(variable.numpy())

    def _checkpoint(self) -> tf.train.Checkpoint:
        """What a `CheckpointSaverHook` saves: the loop's checkpoint, or the model's and its optimizer's."""
        if self._loop_hooks is not None and self._loop_hooks.checkpoint is not None:
            return self._loop_hooks.checkpoint
        return model_checkpoint(self.model)

    # -- the TF1 interface (no-ops by default) --
    def begin(self) -> None:
        pass

    def after_create_session(self, session: Any, coord: Any) -> None:
        pass

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        pass

    def end(self, session: Any) -> None:
        pass

    # -- resolving fetches --
    def _resolve(self, fetches: Any, *, after_run: bool = False) -> Any:
        if fetches is None:
            return None
        if isinstance(fetches, Mapping):
            return type(fetches)((k, self._resolve(v, after_run=after_run)) for k, v in fetches.items()) if not isinstance(
                fetches, collections.OrderedDict
            ) else collections.OrderedDict((k, self._resolve(v, after_run=after_run)) for k, v in fetches.items())
        if isinstance(fetches, (list, tuple)) and not hasattr(fetches, "_fields"):
            return type(fetches)(self._resolve(v, after_run=after_run) for v in fetches)
        if fetches is GLOBAL_STEP or (isinstance(fetches, str) and fetches.split(":")[0] == "global_step"):
            if after_run or self._run_start_step is None:
                return np.int64(self._step_now())
            return np.int64(self._run_start_step)
        if fetches is LOSS:
            return self._run_loss()
        if isinstance(fetches, str):
            if fetches in self._logs:
                return np.asarray(self._logs[fetches])
            raise KeyError(
                f"tfmigrate.runtime.hooks: {fetches!r} is not a value of this run (have: global_step, "
                f"{', '.join(sorted(self._logs)) or 'no logs'}); TF1 graph tensor names do not exist in TF2."
            )
        if isinstance(fetches, (tf.Variable, keras.Variable)):
            return fetches.numpy()
        if callable(fetches):
            return fetches()
        if isinstance(fetches, tf.Tensor):
            return fetches.numpy()
        return fetches

    # -- Keras events --
    def _begin(self) -> None:
        self._session = _Session(self)
        self._run_start_step: int | None = None
        self._logs: dict[str, Any] = {}
        self._args: SessionRunArgs | None = None
        self._context: SessionRunContext | None = None
        self.begin()
        self.after_create_session(self._session, None)

    def _batch_begin(self) -> None:
        self._run_start_step = self._step_now()
        self._context = SessionRunContext(None, self._session)
        self._args = self.before_run(self._context)
        self._context._original_args = self._args

    def _batch_end(self, logs: Mapping[str, Any] | None, stop_attr: str) -> None:
        self._logs = dict(logs or {})
        assert self._context is not None
        fetches = self._args.fetches if self._args is not None else None
        values = SessionRunValues(results=self._resolve(fetches))
        self.after_run(self._context, values)
        if self._context.stop_requested:
            setattr(self.model, stop_attr, True)
        self._run_start_step = None

    def _end(self) -> None:
        self.end(self._session)

    def on_train_begin(self, logs=None):
        self._begin()

    def on_train_batch_begin(self, batch, logs=None):
        self._batch_begin()

    def on_train_batch_end(self, batch, logs=None):
        self._batch_end(logs, "stop_training")

    def on_train_end(self, logs=None):
        self._end()

    def on_test_begin(self, logs=None):
        self._begin()

    def on_test_batch_begin(self, batch, logs=None):
        self._batch_begin()

    def on_test_batch_end(self, batch, logs=None):
        self._batch_end(logs, "stop_evaluating")

    def on_test_end(self, logs=None):
        self._end()

    def on_predict_begin(self, logs=None):
        self._begin()

    def on_predict_batch_begin(self, batch, logs=None):
        self._batch_begin()

    def on_predict_batch_end(self, batch, logs=None):
        self._batch_end(logs, "stop_predicting")

    def on_predict_end(self, logs=None):
        self._end()


# -- used by fit/evaluate/predict ---------------------------------------------------------------


def is_hook(callback: Any) -> bool:
    return isinstance(callback, SessionRunHook)


def model_hooks(model: keras.Model, mode: str) -> list[SessionRunHook]:
    """The model_fn's `training_hooks`/`evaluation_hooks`/`prediction_hooks`, made afresh (TF1 called model_fn per call)."""
    method = getattr(model, {"train": "training_hooks", "eval": "evaluation_hooks", "infer": "prediction_hooks"}[mode], None)
    if method is None or not callable(method):
        return []
    return list(method() or [])


def check_hooks(hooks: Any, caller: str) -> list[Any]:
    out = list(hooks or [])
    for hook in out:
        if not isinstance(hook, keras.callbacks.Callback):
            raise TypeError(
                f"tfmigrate.runtime.{caller}: hooks must be tfmigrate.runtime.hooks.SessionRunHook objects "
                f"(or Keras callbacks), got {type(hook).__name__}."
            )
    return out



class LoopHooks:
    """Hooks around the session runs of a loop other than Keras's (`ctl.EstimatorLoop`).

    TF1's timing, driven by the loop: `begin()` (each hook's `begin` and `after_create_session`),
    then around each session run (one `train_steps`/`test_steps` call or one predicted batch)
    `before_run()` and `after_run(loss)`, which says whether a hook asked to stop, and `end()`.
    Keras callbacks among the hooks get the matching Keras events. The hooks see the loop's Keras
    model as `self.model`; `GLOBAL_STEP`, `LOSS` (the run's last step's loss) and a
    `CheckpointSaverHook`'s checkpoint are the loop's.

    Args:
        hooks: The hooks, in TF1's order (the caller's, then the model_fn's).
        model: The loop's Keras model.
        mode: "train", "eval" or "infer".
        global_step: Reads the global step.
        checkpoint: What a `CheckpointSaverHook` saves (the loop's `tf.train.Checkpoint`).
    """

    _EVENTS = {"train": ("train", "stop_training"), "eval": ("test", "stop_evaluating"), "infer": ("predict", "stop_predicting")}

    def __init__(
        self,
        hooks: Iterable[Any],
        model: keras.Model,
        mode: str,
        *,
        global_step: Callable[[], int],
        checkpoint: Any = None,
    ) -> None:
        self.hooks = list(hooks)
        self.mode = mode
        self.checkpoint = checkpoint
        self._model = model
        self._event, self._stop_attr = self._EVENTS[mode]
        self._global_step = global_step
        self._loss = float("nan")
        self._runs = 0
        self._callbacks = keras.callbacks.CallbackList(self.hooks, model=model) if self.hooks else None

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def global_step(self) -> int:
        return self._global_step()

    def loss(self) -> float:
        if self.mode == "infer":
            raise ValueError("tfmigrate.runtime.hooks: LOSS is read only while training or evaluating.")
        return self._loss

    def _fire(self, event: str, *args: Any) -> None:
        if self._callbacks is not None:
            getattr(self._callbacks, f"on_{self._event}{event}")(*args)

    def begin(self) -> None:
        for hook in self.hooks:
            if is_hook(hook):
                hook._loop_hooks = self  # noqa: SLF001
        setattr(self._model, self._stop_attr, False)
        self._runs = 0
        self._fire("_begin")

    def before_run(self) -> None:
        self._fire("_batch_begin", self._runs)

    def after_run(self, loss: Any = None) -> bool:
        """Ends a session run whose last step's loss is `loss`; True when a hook asked to stop."""
        if loss is not None:
            self._loss = float(loss)
        self._fire("_batch_end", self._runs, {"loss": self._loss} if self.mode != "infer" else {})
        self._runs += 1
        return bool(getattr(self._model, self._stop_attr, False))

    def end(self) -> None:
        self._fire("_end")
        for hook in self.hooks:
            if is_hook(hook):
                hook._loop_hooks = None  # noqa: SLF001
