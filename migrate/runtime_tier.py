"""Which of the runtime's tiers a hosted estimator runs on, read off the module's text.

`tfm.estimator` runs a kept model_fn on the strategy tier: as written, in TF2, inside the
strategy's `tf.function`. A call goes to the graph-mode tier (TF1 graph mode) only for what a
`tf.function` cannot run as TF 1.x ran it; the runtime decides per call and logs why
(`runtime/estimator/core.py`, `runtime/model_fn/strategy/checks.py`). This module reads the same signs off
the text, so the note above a hosted site and the report say so before the program runs. The scan
is of the whole module the estimator is built in (a hook or queue in another estimator of the
same module counts too): it can say `graph` where only one call of one estimator falls back, and it
cannot see what the text does not show (an input_fn returning tensors other than a one-shot
iterator's; a hook saving through its Session built in another module; a Scaffold Saver that does
not cover every variable). The runtime's warning is the authority.
"""

from __future__ import annotations

import ast
import functools

from .names import ast_dotted
from .parsing import indexed, parse

__all__ = ["gives_a_runconfig_strategy", "graph_mode_reasons", "reasons_for"]

_DISTRIBUTE = "RunConfig's train_distribute/eval_distribute {} runs on TF 2.15's graph-mode replica path only"
# Hooks that save through their Session: only graph mode runs them. Other hooks run on the
# strategy tier (`runtime/model_fn/strategy/session_hooks.py`, `step_hooks.py`).
_SESSION_WRITERS = frozenset({"CheckpointSaverHook", "SummarySaverHook", "AsyncCheckpointSaverHook"})
_SPEC_HOOKS = {"training_hooks": "training", "training_chief_hooks": "training", "evaluation_hooks": "evaluation",
               "prediction_hooks": "prediction"}
_HOOKED_METHODS = frozenset({"train", "evaluate", "predict"})
_DISTRIBUTE_KEYWORDS = frozenset({"train_distribute", "eval_distribute"})
# A RunConfig strategy the strategy tier runs as TF 1.x's Estimator ran it (in-process or
# multi-worker synchronous replicas, `runtime/model_fn/__init__.py`); a module that builds
# another one and hands a RunConfig a strategy is read as handing it that one.
_STRATEGY_TIER_STRATEGIES = frozenset({
    "MirroredStrategy", "OneDeviceStrategy", "MultiWorkerMirroredStrategy", "CollectiveAllReduceStrategy",
})
# TF1's queue-runner input pipeline (`tf.train.*`).
_QUEUE_FUNCTIONS = frozenset(
    {
        "start_queue_runners", "string_input_producer", "slice_input_producer", "range_input_producer",
        "input_producer", "shuffle_batch", "batch_join", "shuffle_batch_join", "maybe_batch",
        "maybe_shuffle_batch", "QueueRunner", "add_queue_runner",
    }
)
_GRAPH_SWITCHES = frozenset({"disable_eager_execution", "disable_v2_behavior"})


def _empty(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant):
        return value.value is None
    return isinstance(value, (ast.List, ast.Tuple, ast.Dict)) and not (getattr(value, "elts", None) or getattr(value, "keys", None))


def _saves_through_session(value: ast.expr) -> bool:
    """A hook list written out with a hook that saves through its Session (CheckpointSaverHook)."""
    return isinstance(value, (ast.List, ast.Tuple)) and any(
        isinstance(item, ast.Call) and _last_name(item.func) in _SESSION_WRITERS for item in value.elts)


def _call_reasons(call: ast.Call, switches: bool) -> list[str]:
    name = ast_dotted(call.func) or ""
    last = _last_name(call.func)
    reasons = [f"the spec's {_SPEC_HOOKS[k.arg]} hooks save through their Session"
               for k in call.keywords if k.arg in _SPEC_HOOKS and _saves_through_session(k.value)]
    if last in _HOOKED_METHODS and isinstance(call.func, ast.Attribute):
        if any(k.arg == "hooks" and _saves_through_session(k.value) for k in call.keywords):
            reasons.append(f"`{last}(hooks=...)` hooks save through their Session")
    if last in _QUEUE_FUNCTIONS or name.endswith("train.batch"):
        reasons.append("its input runs on TF1 queue runners")
    if switches and last in _GRAPH_SWITCHES:
        reasons.append("the program disables eager execution")
    return reasons


def graph_mode_reasons(source: str, switches: bool = True) -> list[str]:
    """Why a hosted estimator built in a module with this text runs (some calls) in graph mode,
    each reason once, in the text's order; empty when every call runs on the strategy tier.
    `switches=False`: the program's `disable_eager_execution()` is not counted (the migration
    drops it)."""
    return list(_graph_mode_reasons(source, switches))


@functools.lru_cache(maxsize=8)  # (each estimator rule asks it of the same module's text)
def _graph_mode_reasons(source: str, switches: bool) -> tuple[str, ...]:
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    # (in the text's order: a tie is a call and the call it calls, the outer first, as the walk had them)
    calls = sorted(indexed(tree).get(ast.Call, ()), key=lambda node: (node.lineno, node.col_offset))
    reasons = [reason for call in calls for reason in _call_reasons(call, switches)]
    return tuple(dict.fromkeys(reasons + _distribute_reasons(calls)))


def gives_a_runconfig_strategy(source: str) -> bool:
    """Whether a call in the text passes a non-empty `train_distribute=`/`eval_distribute=`."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _gives_a_strategy([node for node in ast.walk(tree) if isinstance(node, ast.Call)])


def _gives_a_strategy(calls: list[ast.Call]) -> bool:
    return any(k.arg in _DISTRIBUTE_KEYWORDS and not _empty(k.value) for call in calls for k in call.keywords)


def _distribute_reasons(calls: list[ast.Call]) -> list[str]:
    """A RunConfig strategy the strategy tier does not run (ParameterServer, CentralStorage), where
    the module hands a RunConfig a strategy and builds such a one."""
    if not _gives_a_strategy(calls):
        return []
    built = [_last_name(call.func) for call in calls]
    other = [name for name in built if name.endswith("Strategy") and name not in _STRATEGY_TIER_STRATEGIES]
    return [_DISTRIBUTE.format(name) for name in dict.fromkeys(other)]


def _last_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def reasons_for(estimator: str, reasons: list[str]) -> list[str]:
    """The module's `reasons` that apply to an estimator of class `estimator`: a TPUEstimator
    never runs a RunConfig's train_distribute/eval_distribute (`tfm.estimator.tpu.TPUEstimator`
    refuses one), so that reason belongs to the module's Estimators (a GPU path beside the TPU one)."""
    if estimator == "TPUEstimator":
        return [reason for reason in reasons if not reason.startswith(_DISTRIBUTE.split("{")[0])]
    return reasons
