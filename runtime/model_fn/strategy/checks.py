"""What the strategy tier reads off the graph-mode build before it runs a mode: whether TF2 can run
it as TF 1.x ran it (`check_spec` raises `Unsupported` with the reason), and which counters a
metric's value is computed from (`variable_reads`)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from ...inputs import ModeKeys

__all__ = ["Unsupported", "as_op", "check_spec", "variable_reads"]

_KEYS = tf.compat.v1.GraphKeys
_STATEFUL_WRITES = ("Assign", "AssignAdd", "AssignSub", "ScatterUpdate", "ScatterAdd", "ScatterSub")


class Unsupported(Exception):
    """Why this call runs on the graph-mode tier instead."""


def as_op(value: Any) -> Any:
    return value if isinstance(value, tf.Operation) else getattr(value, "op", value)


def variable_reads(graph: tf.Graph, tensors: list[Any]) -> tuple[list[Any], list[str]]:
    """The reads of variables the value tensors compute from (a reference variable's `read`
    snapshot, a resource variable's ReadVariableOp), and those variables' names. Raises
    `Unsupported` where a value reads anything but variables and constants."""
    reads: dict[Any, str] = {}
    seen: set = set()
    todo = [t.op for t in tensors]
    while todo:
        op = todo.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type in ("Identity", "ReadVariableOp") and op.inputs and op.inputs[0].op.type in ("VariableV2", "VarHandleOp"):
            reads[op.outputs[0]] = op.inputs[0].op.name
            continue
        if op.type in ("VariableV2", "VarHandleOp"):
            raise Unsupported(f"a metric value reads variable {op.name} other than through a read")
        if op.type in ("IteratorGetNext", "Placeholder") or op.type.startswith(_STATEFUL_WRITES):
            raise Unsupported(f"a metric value depends on {op.type} {op.name}, not only on its counters")
        todo.extend(t.op for t in op.inputs)
        todo.extend(op.control_inputs)
    items = list(reads.items())
    return [tensor for tensor, _ in items], [name for _, name in items]


def check_spec(mode: str, spec: Any, graph: tf.Graph, extra: dict) -> None:
    if spec.scaffold is not None and spec.scaffold.saver is not None:
        names = restore_names(spec.scaffold.saver, graph)
        if names is None:
            raise Unsupported("the spec's Scaffold has a Saver of its own that is not a name -> variable map of "
                              "every global variable (TF1 restored and saved through it)")
        extra["restore_names"] = names
        extra["saver_keeps"] = (getattr(spec.scaffold.saver, "_max_to_keep", None),
                                getattr(spec.scaffold.saver, "_keep_checkpoint_every_n_hours", None))
        scope = spec.scaffold.saver.saver_def.filename_tensor_name.split("/")[0] + "/"
        extra["saver_ops"] = set(extra.get("saver_ops", ())) | {op for op in graph.get_operations() if op.name.startswith(scope)}
    if graph.get_collection(_KEYS.QUEUE_RUNNERS):
        raise Unsupported("the graph has queue runners")
    if mode == ModeKeys.TRAIN:
        from .session_hooks import hooks_unsupported

        reason = hooks_unsupported(list(spec.training_hooks) + list(spec.training_chief_hooks))
        if reason:
            raise Unsupported(f"the spec's training hooks: {reason}")
        _check_unfetched_writes(graph, [spec.train_op, spec.loss], "train_op",
                                set(extra.get("host_ops", ())) | set(extra.get("saver_ops", ())))
    if mode == ModeKeys.EVAL:
        from .session_hooks import hooks_unsupported

        reason = hooks_unsupported(list(spec.evaluation_hooks))
        if reason:
            raise Unsupported(f"the spec's evaluation hooks: {reason}")
        metrics = [part for pair in spec.eval_metric_ops.values() for part in pair] + list(extra["loss_metric"])
        _check_unfetched_writes(graph, [spec.loss, *metrics], "evaluation", extra.get("saver_ops", ()))
    if mode == ModeKeys.PREDICT:
        from .session_hooks import hooks_unsupported

        reason = hooks_unsupported(list(spec.prediction_hooks))
        if reason:
            raise Unsupported(f"the spec's prediction hooks: {reason}")
        _check_unfetched_writes(graph, tf.nest.flatten(spec.predictions), "prediction", extra.get("saver_ops", ()))


def restore_names(saver: Any, graph: tf.Graph) -> dict[str, str] | None:
    """{variable's TF1 name: its name in the checkpoint} for a Scaffold's own Saver, which TF 1.x
    restored the checkpoint through (an exponential moving average's `variables_to_restore()`
    puts each average into its variable in evaluation) and, in training, saved through
    (`CheckpointSaverHook` took the Scaffold's Saver); it must cover every global variable of the
    mode's graph. A Saver of no var_list saves them all by their names. None where the Saver is
    not a plain name -> variable map of them."""
    var_list = getattr(saver, "_var_list", None)
    if var_list is None:
        var_list = graph.get_collection(_KEYS.GLOBAL_VARIABLES) + graph.get_collection(_KEYS.SAVEABLE_OBJECTS)
    if isinstance(var_list, dict):
        pairs = list(var_list.items())
    elif isinstance(var_list, (list, tuple)):
        pairs = [(getattr(getattr(v, "op", None), "name", None), v) for v in var_list]
    else:
        return None
    names: dict[str, str] = {}
    for key, variable in pairs:
        op = getattr(variable, "op", None)
        if not isinstance(key, str) or op is None or op.type not in ("VariableV2", "VarHandleOp") or op.name in names:
            return None
        names[op.name] = key
    if any(v.op.name not in names for v in graph.get_collection(_KEYS.GLOBAL_VARIABLES)):
        return None
    return names


def _check_unfetched_writes(graph: tf.Graph, fetches: list[Any], what: str, host_ops: Any = ()) -> None:
    """In TF1 only what the train_op needs runs; in a `tf.function` every stateful op does. A
    write to a model variable outside the train_op (batch norm's moving averages left out of
    UPDATE_OPS' dependencies) would then run here and not in TF 1.x."""
    from ..step_order import ancestors  # the estimator package imports this one

    needed = ancestors(fetches)
    local = {v.op.name for v in graph.get_collection(_KEYS.LOCAL_VARIABLES) + graph.get_collection(_KEYS.METRIC_VARIABLES)}
    initializers = ancestors([v.initializer for v in graph.get_collection(_KEYS.GLOBAL_VARIABLES)
                               + graph.get_collection(_KEYS.LOCAL_VARIABLES)])
    for op in graph.get_operations():
        if op in needed or op in initializers or op in host_ops or not (op.type.startswith(_STATEFUL_WRITES) or op.type.startswith(("ResourceApply", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "Apply"))):
            continue
        target = op.inputs[0].op if op.inputs else None
        while target is not None and target.type in ("Identity", "RefIdentity") and target.inputs:
            target = target.inputs[0].op
        if target is None or target.type not in ("VariableV2", "VarHandleOp") or target.name in local:
            continue
        if op.name == f"{target.name}/Assign":  # its initializer as made (a warm start or restore replaced it)
            continue
        raise Unsupported(f"in its {what}, model_fn writes variable {target.name} ({op.name}) where TF 1.x never "
                          "ran the write (it is not among what Estimator fetched); a tf.function runs every write")
