"""Hooks that act only when the session is made, run on the strategy tier.

A `SessionRunHook` passed to `train`/`evaluate`/`predict(hooks=...)` that overrides only `begin`
and `after_create_session` acts once, before the first step: tensorflow/tpu's `LoadEMAHook` builds
a restore of the moving averages in `begin` and runs it on the new session, so evaluation uses
the averaged weights. TF 1.x made the session after restoring the checkpoint, then called the
hook. The strategy tier keeps that meaning without running the steps in a Session:

  * after the call's checkpoint is restored into the held variables, `begin()` runs in the mode's
    TF1 build (the graph the discovery made, as Estimator built it for the call);
  * a side Session on that graph gets the held variables' values, the hooks'
    `after_create_session(session, None)` run on it, and the values of the graph's global
    variables afterwards are copied back into the held variables;
  * the steps then run in the strategy's `tf.function` as always.

A hook that also acts per step (`before_run`/`after_run`: it fetches tensors or reads the step's
values) or at the end (`end(session)`) runs its call in graph mode (`core.Estimator` says why).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import tensorflow as tf

__all__ = ["hooks_unsupported", "on_side_session", "run_session_start_hooks", "session_start_hook"]

_PER_STEP = ("before_run", "after_run", "end")


def session_start_hook(hook: Any) -> bool:
    """Whether `hook` acts only at `begin`/`after_create_session` (see the module doc)."""
    base = tf.compat.v1.train.SessionRunHook
    return all(getattr(type(hook), name, None) is getattr(base, name) for name in _PER_STEP)


_SESSION_WRITERS = ("CheckpointSaverHook", "SummarySaverHook", "AsyncCheckpointSaverHook")


def hooks_unsupported(hooks: Any) -> str | None:
    """Why the strategy tier cannot run these hooks (None where it can): a hook saving
    checkpoints or summaries through its Session runs in graph mode only. Others act when the
    session is made (here) or with every step (`step_hooks.py`)."""
    for hook in hooks or ():
        if any(base.__name__ in _SESSION_WRITERS for base in type(hook).__mro__):
            return f"{type(hook).__name__} saves through its Session"
    return None


def run_session_start_hooks(hooks: list, graph: tf.Graph, held_value: Callable[[str], Any],
                            assign: Callable[[str, np.ndarray], None]) -> None:
    """Runs `hooks`' `begin` in `graph` and their `after_create_session` on a side Session whose
    global variables hold `held_value(name)`; `assign(name, value)` gets each global variable's
    value afterwards."""
    if not hooks:
        return
    with graph.as_default():
        for hook in hooks:
            hook.begin()
    on_side_session(hooks, graph, held_value, lambda hook, session: hook.after_create_session(session, None), assign)


def on_side_session(hooks: list, graph: tf.Graph, held_value: Callable[[str], Any], call: Callable[[Any, Any], None],
                    assign: Callable[[str, np.ndarray], None] | None = None) -> None:
    """`call(hook, session)` for each hook, on a side Session of `graph` whose global variables hold
    `held_value(name)`; `assign(name, value)` gets each one's value afterwards."""
    with graph.as_default():
        variables = list(graph.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES))
        local_init = tf.compat.v1.local_variables_initializer()
    held = [held_value(variable.op.name) for variable in variables]  # (read eagerly, before the session)
    with tf.compat.v1.Session(graph=graph) as session:
        for variable, value in zip(variables, held):
            variable.load(value, session)
        session.run(local_init)
        for hook in hooks:
            call(hook, session)
        values = session.run(variables) if assign is not None else []
    for variable, value in zip(variables, values):
        assign(variable.op.name, value)
