"""Which of the runtime's tiers a hosted estimator runs on, read off the module's text.

`tfm.estimator` runs a kept model_fn on the strategy tier: as written, in TF2, inside the
strategy's `tf.function`. A call goes to the graph-mode tier (TF1 graph mode) only for what a
`tf.function` cannot run as TF 1.x ran it; the runtime decides per call and logs why
(`runtime/estimator/core.py`, `runtime/model_fn/checks.py`). This module reads the same signs off
the text, so the note above a hosted site and the report say so before the program runs. The scan
is of the whole module the estimator is built in (a hook or queue in another estimator of the
same module counts too): it can say `graph` where only one call of one estimator falls back, and it
cannot see what the text does not show (an input_fn returning tensors; a hook passed in from
another module). The runtime's warning is the authority.
"""

from __future__ import annotations

import ast

from .names import ast_dotted

__all__ = ["gives_a_runconfig_strategy", "graph_mode_reasons", "reasons_for"]

_DISTRIBUTE = "RunConfig's train_distribute/eval_distribute {} runs on TF 2.15's graph-mode replica path only"
# Keywords whose non-empty value sends a call to graph mode, and why.
_KEYWORDS = {
    "evaluation_hooks": "the spec's evaluation hooks run in a Session",
    "prediction_hooks": "the spec's prediction hooks run in a Session",
}
# Hooks that save through their Session: no tier but graph mode runs them (training's other hooks
# run on the strategy tier: `runtime/model_fn/step_hooks.py`).
_SESSION_WRITERS = frozenset({"CheckpointSaverHook", "SummarySaverHook", "AsyncCheckpointSaverHook"})
_TRAINING_HOOKS = frozenset({"training_hooks", "training_chief_hooks"})
_DISTRIBUTE_KEYWORDS = frozenset({"train_distribute", "eval_distribute"})
# A RunConfig strategy the strategy tier runs as TF 1.x's Estimator ran it (in-process or
# multi-worker synchronous replicas, `runtime/model_fn/__init__.py`); a module that builds
# another one and hands a RunConfig a strategy is read as handing it that one.
_STRATEGY_TIER_STRATEGIES = frozenset({
    "MirroredStrategy", "OneDeviceStrategy", "MultiWorkerMirroredStrategy", "CollectiveAllReduceStrategy",
})
# Estimator methods whose `hooks=` run in a Session.
_HOOKED_METHODS = frozenset({"train", "evaluate", "predict"})
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


_SESSION_START_METHODS = frozenset({"__init__", "begin", "after_create_session"})


def _session_start_hook_classes(tree: ast.AST) -> frozenset[str]:
    """The module's SessionRunHook classes that act only when the session is made (`begin`,
    `after_create_session`: tensorflow/tpu's LoadEMAHook); the strategy tier runs them
    (`runtime/model_fn/session_hooks.py`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any("SessionRunHook" in (ast_dotted(base) or "") for base in node.bases):
            methods = {item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if methods <= _SESSION_START_METHODS:
                found.add(node.name)
    return frozenset(found)


def _session_start_lists(tree: ast.AST, classes: frozenset[str]) -> frozenset[str]:
    """Names only ever bound to lists of those hooks (or empty lists), never added to."""
    good: set[str] = set()
    bad: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    (good if _session_start_list(node.value, classes) else bad).add(target.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            bad.add(node.target.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.attr in ("append", "extend", "insert"):
            bad.add(node.func.value.id)
    return frozenset(good - bad)


def _session_start_list(value: ast.expr, classes: frozenset[str]) -> bool:
    return isinstance(value, ast.List) and all(
        isinstance(item, ast.Call) and _last_name(item.func) in classes for item in value.elts)


def _flag_gated_lists(tree: ast.AST) -> frozenset[str]:
    """Names only ever bound to an empty list, and added to only under an `if` (ResNet's and
    EfficientNet's `hooks = []` filled when a flag asks for a profiler hook): empty unless the
    program's flags fill them. The runtime says so when a call gets hooks after all."""
    empty: set[str] = set()
    other: set[str] = set()

    def visit(node: ast.AST, gated: bool) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    (empty if _empty_list(node.value) else other).add(target.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and not gated:
            other.add(node.target.id)
        elif isinstance(node, ast.Call) and not gated and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("append", "extend", "insert") and isinstance(node.func.value, ast.Name):
            other.add(node.func.value.id)
        for child in ast.iter_child_nodes(node):
            visit(child, gated or isinstance(node, ast.If))

    visit(tree, False)
    return frozenset(empty - other)


def _saves_through_session(value: ast.expr) -> bool:
    """A hook list written out with a hook that saves through its Session (CheckpointSaverHook)."""
    return isinstance(value, (ast.List, ast.Tuple)) and any(
        isinstance(item, ast.Call) and _last_name(item.func) in _SESSION_WRITERS for item in value.elts)


def _empty_list(value: ast.expr) -> bool:
    return isinstance(value, ast.List) and not value.elts


def _call_reasons(call: ast.Call, switches: bool, gated: frozenset[str] = frozenset(),
                  classes: frozenset[str] = frozenset()) -> list[str]:
    name = ast_dotted(call.func) or ""
    last = _last_name(call.func)
    reasons = [_KEYWORDS[k.arg] for k in call.keywords if k.arg in _KEYWORDS and not _empty(k.value)]
    if any(k.arg in _TRAINING_HOOKS and _saves_through_session(k.value) for k in call.keywords):
        reasons.append("the spec's training hooks save through their Session")
    if last == "train" and isinstance(call.func, ast.Attribute):
        if any(k.arg == "hooks" and _saves_through_session(k.value) for k in call.keywords):
            reasons.append("`train(hooks=...)` hooks save through their Session")
    elif last in _HOOKED_METHODS and isinstance(call.func, ast.Attribute):
        if any(k.arg == "hooks" and not _empty(k.value) and not (isinstance(k.value, ast.Name) and k.value.id in gated)
               and not _session_start_list(k.value, classes) for k in call.keywords):
            reasons.append(f"`{last}(hooks=...)` hooks run in a Session")
    if last in _QUEUE_FUNCTIONS or name.endswith("train.batch"):
        reasons.append("its input runs on TF1 queue runners")
    if last == "Scaffold" and any(k.arg in ("init_fn", "init_op") and not _empty(k.value) for k in call.keywords):
        reasons.append("its Scaffold's init_fn/init_op runs in a Session")
    if switches and last in _GRAPH_SWITCHES:
        reasons.append("the program disables eager execution")
    return reasons


def graph_mode_reasons(source: str, switches: bool = True) -> list[str]:
    """Why a hosted estimator built in a module with this text runs (some calls) in graph mode,
    each reason once, in the text's order; empty when every call runs on the strategy tier.
    `switches=False`: the program's `disable_eager_execution()` is not counted (the migration
    drops it)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    calls = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Call)),
                   key=lambda node: (node.lineno, node.col_offset))
    classes = _session_start_hook_classes(tree)
    gated = _flag_gated_lists(tree) | _session_start_lists(tree, classes)
    reasons = [reason for call in calls for reason in _call_reasons(call, switches, gated, classes)]
    return list(dict.fromkeys(reasons + _distribute_reasons(calls)))


def gives_a_runconfig_strategy(source: str) -> bool:
    """Whether a call in the text passes a non-empty `train_distribute=`/`eval_distribute=`."""
    try:
        tree = ast.parse(source)
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
