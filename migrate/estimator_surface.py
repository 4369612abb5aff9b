"""The surface around an estimator: hooks, train_and_evaluate specs, exporters and serving receivers.

TF1 symbols that only Estimator programs use map one to one onto the runtime's
(`tfmigrate.runtime.hooks`, `tfmigrate.runtime.export`, `TrainSpec`/`EvalSpec`), which keep TF1's
arguments; the Estimator-family rules (`estimator_sites`) apply `SurfaceRewriter` to the whole
file once they migrate an estimator in it, and the model_fn analysis (`estimator`) applies it to
a model_fn's `training_hooks`/`export_outputs` code, with the model_fn's tensors mapped onto the
runtime's handles (the spec's loss -> `tfm.hooks.LOSS`, the global step -> `tfm.hooks.GLOBAL_STEP`).
"""

from __future__ import annotations

from typing import Callable

from .cst_on_demand import Transformer, Visitor, cst

from .estimator.plan import StmtKind
from .cst_walk import walk

_HOOK_NAMES = (
    "SessionRunHook",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunValues",
    "LoggingTensorHook",
    "StopAtStepHook",
    "NanTensorHook",
    "NanLossDuringTrainingError",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "SummarySaverHook",
    "ProfilerHook",
    "StepCounterHook",
    "SecondOrStepTimer",
)
# canonical TF1 path -> path under the runtime alias.
SYMBOLS: dict[str, str] = {}
for _name in _HOOK_NAMES:
    SYMBOLS[f"train.{_name}"] = f"hooks.{_name}"
    SYMBOLS[f"estimator.{_name}"] = f"hooks.{_name}"
for _name in ("ServingInputReceiver", "TensorServingInputReceiver", "PredictOutput", "ClassificationOutput", "RegressionOutput"):
    SYMBOLS[f"estimator.export.{_name}"] = f"export.{_name}"
for _name in ("build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn"):
    SYMBOLS[f"estimator.export.{_name}"] = f"export.{_name}"
for _name in ("LatestExporter", "BestExporter", "FinalExporter", "Exporter"):
    SYMBOLS[f"estimator.{_name}"] = f"export.{_name}"
SYMBOLS["estimator.WarmStartSettings"] = "WarmStartSettings"
SYMBOLS["estimator.TrainSpec"] = "TrainSpec"
SYMBOLS["estimator.EvalSpec"] = "EvalSpec"

# Early-stopping hooks: their first argument, the estimator, becomes its model directory.
EARLY_STOPPING = {
    f"estimator.experimental.{name}": f"hooks.{name}"
    for name in (
        "stop_if_higher_hook",
        "stop_if_lower_hook",
        "stop_if_no_increase_hook",
        "stop_if_no_decrease_hook",
        "make_early_stopping_hook",
    )
}
GLOBAL_STEP_FNS = {"train.get_global_step", "train.get_or_create_global_step"}
HOOK_BASES = {"train.SessionRunHook", "estimator.SessionRunHook"}
LISTENER_BASES = {"train.CheckpointSaverListener", "estimator.CheckpointSaverListener"}
EXPORTER_BASES = {"estimator.Exporter"}
# What the rewriter reacts to in code outside hook classes and receiver functions (which spell
# some of these themselves): a module-level def that spells none of them is left as it is.
SURFACE_SYMBOLS = frozenset(SYMBOLS) | frozenset(EARLY_STOPPING) | HOOK_BASES | LISTENER_BASES | EXPORTER_BASES

# What a hook class's body can do in TF1 that has no TF2 counterpart.
_SESSION_ONLY = ("graph", "get_default_graph", "get_tensor_by_name", "get_operation_by_name", "get_collection", "feed_dict")


def _parse(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


class SurfaceRewriter(Transformer):
    """Rewrites hook, exporter, receiver and spec symbols (and their arguments) to the runtime's.

    Args:
      canonical: the file's `canonical(node)` (names.AliasTable).
      tfm: the runtime's local name.
      tensors: model_fn names to replace with runtime handles (`{'loss': 'tfm.hooks.LOSS'}`).
      model_dir_of: the model-directory expression of an estimator variable, or None (an
        early-stopping hook's first argument).
      todo: called with a message when something cannot be rewritten.
    """

    def __init__(
        self,
        canonical: Callable[[cst.BaseExpression], str | None],
        tfm: str,
        *,
        tensors: dict[str, str] | None = None,
        model_dir_of: Callable[[str], str | None] | None = None,
        todo: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__()
        self.canonical = canonical
        self.tfm = tfm
        self.tensors = tensors or {}
        self.model_dir_of = model_dir_of or (lambda name: None)
        self.report = todo or (lambda message: None)
        self.changed = False

    def runtime_spelling(self, node: cst.BaseExpression) -> str | None:
        """The runtime's spelling of a hook, exporter, receiver or early-stopping symbol (None: not one)."""
        if not isinstance(node, (cst.Attribute, cst.Name)):
            return None
        key = self.canonical(node)
        if key in SYMBOLS:
            return f"{self.tfm}.{SYMBOLS[key]}"
        if key in EARLY_STOPPING:
            return f"{self.tfm}.{EARLY_STOPPING[key]}"
        return None

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self.runtime_spelling(node) is None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        target = self.runtime_spelling(original)
        if target is None:
            return updated.with_changes(attr=original.attr)  # `x.loss` keeps its attribute name
        self.changed = True
        return _parse(target)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # `f(loss=...)` keeps its keyword

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if original.value in self.tensors:
            self.changed = True
            return _parse(self.tensors[original.value])
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return self.call(original, updated, global_step=True)

    def call(
        self, original: cst.Call, updated: cst.Call, *, global_step: bool, placeholders: bool = False
    ) -> cst.BaseExpression:
        """A call's rewrite: the global step (when `global_step`), a receiver's placeholder (when
        `placeholders`), an early-stopping hook's estimator."""
        key = self.canonical(original.func) if isinstance(original.func, (cst.Attribute, cst.Name)) else None
        if key == "placeholder" and placeholders:
            self.changed = True
            return updated.with_changes(func=_parse(f"{self.tfm}.export.placeholder"))
        if key in GLOBAL_STEP_FNS and global_step:
            self.changed = True
            return _parse(f"{self.tfm}.hooks.global_step_tensor()")
        if key in EARLY_STOPPING and original.args:
            first = original.args[0]
            if first.keyword is None or first.keyword.value == "estimator":
                expr = first.value
                model_dir = self.model_dir_of(expr.value) if isinstance(expr, cst.Name) else None
                if model_dir is None:
                    self.report(
                        f"`tf.{key}` needs the estimator's model directory: pass the RunConfig's `model_dir` "
                        "as its first argument"
                    )
                    return updated
                args = list(updated.args)
                args[0] = args[0].with_changes(value=_parse(model_dir), keyword=None, equal=cst.MaybeSentinel.DEFAULT)
                self.changed = True
                return updated.with_changes(args=args)
        return updated


def rewrite(node: cst.CSTNode, rewriter: SurfaceRewriter) -> cst.CSTNode:
    return node.visit(rewriter)


# A function calling one of these is a `serving_input_receiver_fn` (the estimator rules find
# them in their one walk over the module's calls).
RECEIVERS = frozenset({"estimator.export.ServingInputReceiver", "estimator.export.TensorServingInputReceiver"})


def base_kind(canonical: Callable[[cst.BaseExpression], str | None], cls: cst.ClassDef) -> str | None:
    """'hook', 'listener' or 'exporter' for a class deriving from TF1's, else None."""
    for base in cls.bases:
        key = canonical(base.value) if isinstance(base.value, (cst.Attribute, cst.Name)) else None
        if key in HOOK_BASES:
            return "hook"
        if key in LISTENER_BASES:
            return "listener"
        if key in EXPORTER_BASES:
            return "exporter"
    return None


def session_only_uses(cls: cst.ClassDef) -> list[str]:
    """What a TF1 hook class does with the graph or session that a TF2 run cannot (`graph`, feeds, ...)."""
    found: list[str] = []

    class Find(Visitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value in _SESSION_ONLY and node.attr.value not in found:
                found.append(node.attr.value)

        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None and node.keyword.value == "feed_dict" and "feed_dict" not in found:
                found.append("feed_dict")

    walk(cls, Find())
    return found


# -- a model_fn's spec hooks and export outputs (called by the estimator package) ----------------

HOOK_SPEC_KEYS = {
    "training_hooks": "training_hooks",
    "evaluation_hooks": "evaluation_hooks",
    "prediction_hooks": "prediction_hooks",
    # Chief-only hooks: a single process is the chief.
    "training_chief_hooks": "training_hooks",
}


def _names(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Names(Visitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            walk(n.value, self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            walk(n.value, self)
            return False

    walk(node, Names())
    return found


def spec_hooks(analyzer, plan, stmts, hook_exprs: dict[str, list[cst.BaseExpression]], loss_name: str) -> None:
    """A model_fn's `training_hooks=`/... -> `plan.hooks`: methods making them afresh on the model.

    The statements that only build the hooks leave the forward pass (`StmtKind.DROP`) and go with
    them; the spec's loss becomes `tfm.hooks.LOSS` and the global step `tfm.hooks.GLOBAL_STEP`.
    Hooks reading other model_fn tensors are not migrated: they get a note (a TODO) and are left
    out of the model.
    """
    canonical = analyzer.canonical
    needed: set[str] = set()
    for exprs in hook_exprs.values():
        for expr in exprs:
            needed |= _names(expr)
    global_steps = set()
    for st in stmts:
        value = getattr(st.small, "value", None)
        if isinstance(value, cst.Call) and isinstance(value.func, (cst.Attribute, cst.Name)) and canonical(value.func) in GLOBAL_STEP_FNS:
            global_steps |= st.defs
    def builds_hooks(value: cst.BaseExpression | None) -> bool:
        # A hook's construction or a literal list/dict of hooks and tags (not a tensor computation).
        if isinstance(value, cst.Call):
            return isinstance(value.func, (cst.Attribute, cst.Name)) and canonical(value.func) in SYMBOLS
        return isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.SimpleString, cst.Integer))

    chosen: list = []
    for st in reversed(stmts):
        if not isinstance(st.small, cst.Assign) or not st.defs or not st.defs <= needed:
            continue
        if not builds_hooks(st.small.value):
            continue
        if any(st.defs & other.uses for other in stmts if other is not st and not any(other is c for c in chosen)):
            continue
        chosen.append(st)
        needed |= st.uses
    chosen.reverse()
    local = {d for st in stmts for d in st.defs} | {analyzer.features, analyzer.labels or "", analyzer.mode or ""}
    local.discard("")
    chosen_defs = {d for st in chosen for d in st.defs}
    tensors = {loss_name: "tfm.hooks.LOSS", **{g: "tfm.hooks.GLOBAL_STEP" for g in global_steps}}
    unknown = sorted((needed & local) - chosen_defs - set(tensors))
    summaries = False

    class Summaries(Visitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal summaries
            key = canonical(node.func) if isinstance(node.func, (cst.Attribute, cst.Name)) else None
            if key is not None and key.startswith(("summary.", "contrib.summary.")):
                summaries = True

    for st in chosen:
        walk(st.node, Summaries())
    for exprs in hook_exprs.values():
        for expr in exprs:
            walk(expr, Summaries())
    for st in chosen:
        st.kind = StmtKind.DROP
    if unknown or summaries:
        what = f"the model_fn tensors {', '.join(f'`{n}`' for n in unknown)}" if unknown else "graph summary ops"
        plan.notes.append(
            f"the spec's hooks ({', '.join(f'`{k}=`' for k in hook_exprs)}) read {what}, which a Keras model does not "
            "expose per step: they are not migrated (the loss is `tfm.hooks.LOSS`, the global step `tfm.hooks.GLOBAL_STEP`)"
        )
        return
    rewriter = SurfaceRewriter(canonical, analyzer.tfm, tensors=tensors)
    nodes = [st.node.visit(rewriter) for st in chosen]
    for key, exprs in hook_exprs.items():
        method = HOOK_SPEC_KEYS[key]
        parts = [analyzer.code(expr.visit(rewriter)) for expr in exprs]
        text = parts[0] if len(parts) == 1 else " + ".join(f"list({p})" for p in parts)
        previous = plan.hooks.get(method)
        plan.hooks[method] = text if previous is None else f"list({previous}) + list({text})"
        # Each method gets the statements its hooks need (a statement may serve several).
        wanted = _names(cst.parse_expression(text))
        body = []
        for st, node in reversed(list(zip(chosen, nodes))):
            if st.defs & wanted:
                body.append(node)
                wanted |= st.uses
        plan.hook_stmts[method] = list(reversed(body))
    plan.hooks_use_params = analyzer.params in needed


def export_statements(
    analyzer, stmts: list[cst.SimpleStatementLine], export_outputs: cst.BaseExpression, predictions: cst.BaseExpression
):
    """The PREDICT branch's statements with runtime symbols, and which of them only build `export_outputs`."""
    rewriter = SurfaceRewriter(analyzer.canonical, analyzer.tfm)
    rewritten = [line.visit(rewriter) for line in stmts]
    needed = _names(export_outputs)
    keep = _names(predictions)
    export_only: set[int] = set()
    for index in range(len(stmts) - 1, -1, -1):
        small = stmts[index].body[0]
        if not isinstance(small, cst.Assign):
            continue
        defs = set().union(*(_names(t.target) for t in small.targets))
        if not defs or not defs <= needed or defs & keep:
            continue
        used_elsewhere = any(
            defs & _names(stmts[j]) for j in range(len(stmts)) if j != index and j not in export_only
        )
        if not used_elsewhere:
            export_only.add(index)
            needed |= _names(small.value)
    return rewritten, export_only, analyzer.code(export_outputs.visit(rewriter))


# Hooks whose arguments name TF1 graph tensors: (positional index, keyword).
_TENSOR_ARGS = {
    "LoggingTensorHook": (0, "tensors"),
    "NanTensorHook": (0, "loss_tensor"),
    "SummarySaverHook": (5, "summary_op"),
}


def tensor_arg_problem(canonical: Callable[[cst.BaseExpression], str | None], call: cst.Call) -> str | None:
    """Why a hook's tensors cannot be migrated (graph tensor names, summary ops), or None.

    Call-site hooks can read the runtime's handles only: a TF1 graph tensor named by a string
    (other than the global step) or a summary op has no TF2 counterpart.
    """
    key = canonical(call.func) if isinstance(call.func, (cst.Attribute, cst.Name)) else None
    if key is None or key.split(".", 1)[0] not in ("train", "estimator"):
        return None
    name = key.rsplit(".", 1)[-1]
    if name not in _TENSOR_ARGS or SYMBOLS.get(key) is None:
        return None
    index, keyword = _TENSOR_ARGS[name]
    value = None
    for position, arg in enumerate(call.args):
        if (arg.keyword is not None and arg.keyword.value == keyword) or (arg.keyword is None and position == index):
            value = arg.value
    if value is None:
        return None
    strings: list[str] = []
    ops: list[str] = []

    class Find(Visitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            if isinstance(getattr(self, "_parent_key", None), bool):
                return
            text = node.evaluated_value
            if isinstance(text, str) and text.split(":")[0] != "global_step":
                strings.append(text)

        def visit_DictElement(self, node: cst.DictElement) -> bool:
            walk(node.value, self)  # keys are tags, values are tensors
            return False

        def visit_Call(self, node: cst.Call) -> None:
            inner = canonical(node.func) if isinstance(node.func, (cst.Attribute, cst.Name)) else None
            if inner is not None and inner.startswith(("summary.", "contrib.summary.", "get_default_graph")):
                ops.append(inner)

    walk(value, Find())
    if ops:
        return (
            f"`{name}` runs the graph op `tf.{ops[0]}`; TF2 has no graph to run it in: give it "
            "`{tag: tfm.hooks.LOSS}`-style handles (the loss, the global step, metric names) instead"
        )
    if strings:
        return (
            f"`{name}` reads TF1 graph tensors by name ({', '.join(repr(s) for s in strings)}), which do not exist in "
            "TF2: use `tfm.hooks.LOSS`, `tfm.hooks.GLOBAL_STEP` or a compiled metric's name"
        )
    return None
