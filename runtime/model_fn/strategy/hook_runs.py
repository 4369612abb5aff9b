"""The strategy tier's runs of a call's hooks (`ModelFnRunner`'s part that calls them).

A call's hooks act where TF 1.x's `MonitoredSession` called them: `begin` and
`after_create_session` once before the steps (`session_hooks.py`), `before_run`/`after_run` around
each call of the step function with the fetches the traced step returns (`step_hooks.py`), `end`
after the last. `HookRuns` holds what the runner's train, evaluate and predict loops call;
`PredictCalls` is a predict call's batches, read lazily.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np
import tensorflow as tf

from .checks import Unsupported
from .held import first_copy, local_copy
from .session_hooks import on_side_session, run_session_start_hooks, session_start_hook
from .step_hooks import StepHooks
from ..._random_state import python_random_kept

__all__ = ["HookRuns", "PredictCalls"]


class HookRuns:
    """Mixed into `ModelFnRunner`: its `_held`, `_modes`, `_strategy`, `_tpu`, `_steps_per_call`,
    `_built` and `_predict_function` are the runner's."""

    def _held_value(self, name: str) -> Any:
        """A held variable's value (a replicated one's first copy), as NumPy."""
        if name not in self._held.by_name:
            raise Unsupported(f"a hook's begin() made variable {name}, which the model_fn's build did not")
        return first_copy(self._held.by_name[name]).numpy()

    def _assign_held(self, name: str, value: Any) -> None:
        with self._strategy.scope():
            self._held.by_name[name].assign(value, read_value=False)  # every replica's copy (read back: a collective)

    def _session_start_hooks(self, mode: str, hooks: list) -> None:
        """Hooks that act when the session is made, on the restored state (`session_hooks.py`)."""
        run_session_start_hooks(hooks, self._modes[mode].graph, self._held_value, self._assign_held)

    def _scaffold_initializes(self, mode: str) -> None:
        """Where no checkpoint gave the variables' values: the spec's Scaffold `init_op` and
        `init_fn(scaffold, session)` (a pretrained checkpoint's restore, say), run as TF 1.x's
        SessionManager ran them after initializing a fresh model, on a side Session of the mode's
        TF1 build whose values are then the held variables' (`session_hooks.on_side_session`)."""
        scaffold = self._modes[mode].spec.scaffold
        if scaffold is None or (scaffold.init_op is None and scaffold.init_fn is None):
            return

        def initialize(_: Any, session: Any) -> None:
            if scaffold.init_op is not None:
                session.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(session)  # (the Scaffold passes itself: `init_fn(scaffold, session)`)

        on_side_session([scaffold], self._modes[mode].graph, self._held_value, initialize, self._assign_held)

    def _steps_per_hook_call(self) -> int:
        """Steps per call of the step function: `steps_per_call`, or one where per-step hooks run
        off the TPU code path (TF 1.x called them every step there; on a TPU, once per loop)."""
        return 1 if self._step_hooks is not None and not self._tpu else self._steps_per_call

    def _hook_fetches(self) -> tuple:
        return tuple(self._step_hooks.fetched) if self._step_hooks else ()

    def _early_reads(self) -> dict:
        """In a trace, before the model_fn: the variables the step hooks read, as the step starts."""
        hooks = self._step_hooks
        return {name: tf.identity(local_copy(self._held.by_name[name])) for name in hooks.variable_names()} if hooks else {}

    def _hooked(self, early: dict) -> list:
        """In a trace, after the model_fn: the step hooks' fetches (`step_hooks.py`)."""
        hooks = self._step_hooks
        return hooks.traced(self._built.ops, self._built.scope, early.__getitem__) if hooks else []

    def _hook_dtypes(self) -> list:
        return self._step_hooks.dtypes() if self._step_hooks else []

    def _keep_hook_values(self, stacked: list) -> None:
        """The step hooks' fetches of a call's last step (`stacked`: a row per step)."""
        if self._step_hooks is not None and stacked:
            self._hook_values = {name: np.asarray(values[-1]) for name, values in zip(self._step_hooks.fetched, stacked)}

    @contextlib.contextmanager
    def _hooks_of_call(self, mode: str, hooks: list, end: bool = True) -> Iterator[None]:
        """A call's hooks: every hook's `begin` and `after_create_session` now (`session_hooks.py`),
        the per-step ones' `before_run`/`after_run` around the calls of the step function
        (`step_hooks.py`), their `end` after the last."""
        discovered = self._modes[mode]
        self._session_start_hooks(mode, hooks)
        per_step = [hook for hook in hooks if not session_start_hook(hook)]
        self._step_hooks = StepHooks(per_step, discovered.graph, discovered.extra["model_fn_ops"], self._held_value,
                                     set(self._held.by_name)) if per_step else None
        try:
            yield
            if end and self._step_hooks is not None:  # (as MonitoredSession: only when the call ran to its end)
                on_side_session(self._step_hooks.hooks, discovered.graph, self._held_value,
                                lambda hook, session: hook.end(session))
        finally:
            self._step_hooks = None


class PredictCalls:
    """One predict call's batches: the predict function called per batch, with the call's per-step
    hooks around each (`step_hooks.py`; kept here, as the predictions are read lazily)."""

    def __init__(self, runner: Any, predict_keys: Any, hooks: StepHooks | None, mode: Any) -> None:
        self._runner = runner
        self._keys = predict_keys
        self._hooks = hooks
        self._mode = mode
        self._function: Any = None
        self._stopped = False

    def next(self, iterator: Any) -> Any:
        """The next batch's predictions, or None at the input's end (or where a hook stopped)."""
        runner = self._runner
        if self._stopped:
            return None
        runner._step_hooks = self._hooks  # noqa: SLF001 - (what a trace of the function reads)
        try:
            more = self._hooks is not None and self._hooks.before_run()  # (True: a tensor not fetched yet)
            if self._function is None or more:
                self._function = runner._predict_function(self._keys)  # noqa: SLF001
            try:
                with python_random_kept():
                    predictions, hooked = self._function(iterator)
            except (tf.errors.OutOfRangeError, StopIteration):
                self._stopped = True
                return None
            if self._hooks is not None:
                runner._keep_hook_values(hooked)  # noqa: SLF001
                self._stopped = self._hooks.after_run(runner._hook_values)  # noqa: SLF001
            return predictions
        finally:
            runner._step_hooks = None  # noqa: SLF001

    def end(self) -> None:
        """The hooks' `end`, once the predictions ran out (as MonitoredSession closed)."""
        if self._hooks is not None:
            on_side_session(self._hooks.hooks, self._mode.graph, self._runner._held_value,  # noqa: SLF001
                            lambda hook, session: hook.end(session))
