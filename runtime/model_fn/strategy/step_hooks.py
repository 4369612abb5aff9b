"""Hooks that act with every step (`before_run`/`after_run`), run on the strategy tier.

TF 1.x's `MonitoredSession` called each hook's `before_run` before a `session.run`, fetched the
tensors it asked for (`SessionRunArgs`) with the train_op, and gave them to its `after_run`; a hook
could stop training (`run_context.request_stop()`), read the session, and act at the end. Here,
for a training call's hooks (`train(hooks=...)` and the spec's `training_hooks`):

  * `begin()` runs in the mode's TF1 build (the graph the discovery made, as Estimator built it),
    so a hook's tensors are that graph's; the spec's hooks are the ones that build made;
    `after_create_session` and `end` run on a side Session of that graph holding the held
    variables' values (`session_hooks.py`);
  * before each call of the train function every hook's `before_run` is called; each tensor it
    asks for is found in the traced step: a tensor the model_fn made is the trace's op of the same
    type made in the same order among the model_fn's ops of that type (the variables' own ops
    left out: the graph-mode build makes and reads them, the trace is handed them), its name the
    same but for TF's uniquifying suffixes (checked); a read of a variable
    (the global step) reads the held variable as the step starts (TF 1.x read before the train
    op wrote). The step returns those values; `after_run` gets the call's last step's values
    (on the TPU code path TPUEstimator ran hooks once per `iterations_per_loop` loop; elsewhere
    a call with per-step hooks is one step, as TF 1.x ran them every step);
  * `run_context.session.run(...)` reads variables (the global step), nothing else;
  * a tensor the trace cannot give raises `Unsupported` before anything trains (the call then
    runs in graph mode).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import tensorflow as tf

from .checks import Unsupported

__all__ = ["StepHooks"]

_VARIABLE_OPS = ("VariableV2", "VarHandleOp")
_READS = ("Identity", "ReadVariableOp")


def _value_dtype(tensor: Any) -> Any:
    """The dtype of the value a fetch of `tensor` gives (a resource variable's: its value's)."""
    if tensor.dtype == tf.resource:
        return tf.as_dtype(tensor.op.get_attr("dtype"))
    return tensor.dtype.base_dtype


def _variable_read(op: Any) -> str | None:
    """The variable `op` is or reads (its TF1 name), or None."""
    if op.type in _VARIABLE_OPS:
        return op.name
    if op.type in _READS and op.inputs and op.inputs[0].op.type in _VARIABLE_OPS:
        return op.inputs[0].op.name
    return None


class _HostSession:
    """`run_context.session` for a hook: `run` reads variables of the TF1 build."""

    def __init__(self, graph: tf.Graph, read: Any) -> None:
        self.graph = graph
        self._read = read

    def run(self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None) -> Any:
        def value(fetch: Any) -> Any:
            element = self.graph.as_graph_element(fetch.name if isinstance(fetch, tf.Variable) else fetch)
            op = element if isinstance(element, tf.Operation) else element.op
            name = _variable_read(op)
            if name is None:
                raise RuntimeError(f"a hook ran {getattr(element, 'name', element)} in the session: on the strategy "
                                   "tier a hook's session reads variables only (TFMIGRATE_MODEL_FN_TIER=graph runs it)")
            return self._read(name)

        return tf.nest.map_structure(value, fetches)


class StepHooks:
    """One training call's per-step hooks (see the module doc)."""

    def __init__(self, hooks: list, graph: tf.Graph, model_fn_ops: list, read: Any, held: set[str]) -> None:
        self.hooks = hooks
        self._held = held
        self._graph = graph
        self._index = _ordinals(model_fn_ops)
        self._read = read
        self.session = _HostSession(graph, read)
        self.fetched: list[str] = []  # the tensors the traced step returns, by their TF1 names
        self._args: list = []
        self.context: Any = None

    def dtypes(self) -> list:
        return [_value_dtype(self._graph.get_tensor_by_name(name)) for name in self.fetched]

    def before_run(self) -> bool:
        """Calls every hook's `before_run`; True when a tensor not yet returned by the step is
        asked for (the step is traced again)."""
        original = tf.compat.v1.train.SessionRunArgs(fetches=None)
        self.context = tf.compat.v1.train.SessionRunContext(original_args=original, session=self.session)
        with self._graph.as_default():  # (MonitoredSession ran hooks in the graph's context)
            self._args = [hook.before_run(self.context) for hook in self.hooks]
        wanted = [name for args in self._args if args is not None for name in self._names(args.fetches)]
        added = [name for name in dict.fromkeys(wanted) if name not in self.fetched]
        for name in added:
            self._check(name)
        self.fetched.extend(added)
        return bool(added)

    def after_run(self, values: dict[str, np.ndarray]) -> bool:
        """Gives every hook its fetches' values; True when one asked to stop."""
        for hook, args in zip(self.hooks, self._args):
            fetches = args.fetches if args is not None else None
            results = tf.nest.map_structure(lambda fetch: self._value(fetch, values), fetches)
            with self._graph.as_default():
                hook.after_run(self.context, tf.compat.v1.train.SessionRunValues(
                    results=results, options=getattr(args, "options", None), run_metadata=tf.compat.v1.RunMetadata()))
        return self.context.stop_requested

    def _element(self, fetch: Any) -> Any:
        if isinstance(fetch, tf.Variable):
            fetch = fetch.name
        return self._graph.as_graph_element(fetch)

    def _names(self, fetches: Any) -> list[str]:
        names = []
        for fetch in tf.nest.flatten(fetches):
            if fetch is None:
                continue
            element = self._element(fetch)
            if isinstance(element, tf.Tensor):
                names.append(element.name)
        return names

    def _value(self, fetch: Any, values: dict) -> Any:
        if fetch is None:
            return None
        element = self._element(fetch)
        return values[element.name] if isinstance(element, tf.Tensor) else None

    def variable_names(self) -> list[str]:
        """The variables whose reads the hooks fetch (read as the step starts)."""
        ops = [self._graph.get_tensor_by_name(name).op for name in self.fetched]
        return [_variable_read(op) for op in ops if op not in self._index]

    def _check(self, name: str) -> None:
        op = self._graph.get_tensor_by_name(name).op
        if op not in self._index and _variable_read(op) not in self._held:
            raise Unsupported(f"a hook fetches {name}, which the model_fn did not make (only its tensors and variable "
                              "reads come back from a traced step)")

    def traced(self, trace_ops: list, scope: str, read_before_step: Any) -> list:
        """In the trace, after the model_fn: the fetched tensors (`trace_ops`: the ops the model_fn
        made there, under name scope `scope`; `read_before_step(name)`: a variable's value as the
        step starts)."""
        prefix = scope + "/" if scope else ""
        found = []
        traced = {key: op for op, key in _ordinals(trace_ops).items()}
        for name in self.fetched:
            tensor = self._graph.get_tensor_by_name(name)
            op = tensor.op
            if op in self._index:
                match = traced.get(self._index[op])
                if match is None or _base_name(match.name.removeprefix(prefix)) != _base_name(op.name):
                    raise Unsupported(f"a hook fetches {name}, and the traced model_fn made no op matching it "
                                      f"({match.name if match is not None else 'none'} in its place)")
                found.append(tf.identity(match.outputs[tensor.value_index]))
            else:
                found.append(tf.cast(read_before_step(_variable_read(op)), _value_dtype(tensor)))
        return found



_VARIABLE_OWN = ("VariableV2", "VarHandleOp", "ReadVariableOp", "Assign", "AssignVariableOp", "VarIsInitializedOp")


def _ordinals(ops: list) -> dict:
    """{op: (type, its order among `ops` of that type)}, leaving out the variables' own ops (made or
    read where a graph-mode build makes a variable; handed back in a trace)."""
    counts: dict[str, int] = {}
    found = {}
    for op in ops:
        if op.type in _VARIABLE_OWN or "/Initializer/" in op.name + "/" or _variable_read(op) is not None:
            continue
        counts[op.type] = counts.get(op.type, -1) + 1
        found[op] = (op.type, counts[op.type])
    return found


def _base_name(name: str) -> str:
    """An op's name without TF's uniquifying `_N` suffixes (`loss_1/Mean_2` -> `loss/Mean`)."""
    return "/".join(re.sub(r"_\d+$", "", part) for part in name.split("/"))
