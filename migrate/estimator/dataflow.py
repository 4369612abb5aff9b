"""Data-flow queries over the model_fn's statements: which model output the loss reads, and
which statements recompute a value after the model call (for the loss, the metrics, PREDICT).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..cst_on_demand import cst

from ..inline import RenameNames
from ..names import names_in
from .plan import Plan, Stmt, StmtKind, Unsupported, declining_at
from .shapes import is_logging_call
from .syntax import CollectionReads, creates_layer
from .tables import GLOBAL_STEP_FNS, LAYER_CLASSES, METRICS, OPTIMIZERS, SCHEDULES, SUMMARY_FNS


@dataclass
class Flow:
    """One model_fn's statements between the steps of `ModelFnAnalyzer.analyze()`, and what the
    steps found out about them that later steps read."""

    plan: Plan
    stmts: list[Stmt]
    loss_name: str = "loss"  # the spec's `loss=`
    train_op: str | None = None  # the spec's `train_op=`
    optimizer_stmt: Stmt | None = None
    optimizer_names: set[str] = field(default_factory=set)
    global_step_names: set[str] = field(default_factory=set)
    schedule_nodes: dict[int, cst.SimpleStatementLine] = field(default_factory=dict)  # id(Stmt) -> the Keras schedule
    update_ops_defined: set[str] = field(default_factory=set)
    # `tf.get_variable`s: (attribute, `add_weight` arguments, names read); the deferred ones.
    weights: list[tuple[str, list[str], set[str]]] = field(default_factory=list)
    deferred: list = field(default_factory=list)
    step_names: set[str] = field(default_factory=set)  # the global step and what is computed from it
    forward: set[str] = field(default_factory=set)  # names the forward pass computes
    label_names: set[str] = field(default_factory=set)
    mode_names: set[str] = field(default_factory=set)
    loss_stmts: list[Stmt] = field(default_factory=list)
    pure: dict[str, Stmt] = field(default_factory=dict)  # name -> the pure statement defining it

    def needed_pure(self, uses: set[str]) -> list[Stmt]:
        """The pure statements `uses` needs, transitively, in program order."""
        seen: set[int] = set()
        todo = [n for n in uses if n in self.pure]
        while todo:
            name = todo.pop()
            st = self.pure[name]
            if id(st) in seen:
                continue
            seen.add(id(st))
            todo.extend(n for n in st.uses if n in self.pure)
        return [st for st in self.stmts if id(st) in seen]


class DataFlow:
    """`ModelFnAnalyzer`'s part: data-flow queries over the model_fn's statements."""

    def _narrow_output(self, output: str, stmts: list["Stmt"], forward: set[str]) -> str:
        """The loss reads `log_probs = tf.nn.log_softmax(logits)` but the eval metrics want
        `logits`: the model returns the last tensor a layer or variable made, and what the
        loss computes from it alone moves to the loss."""
        if self.eval_metrics_expr is None or not isinstance(self.eval_metrics_expr, cst.Tuple):
            return output
        wanted = names_in(self.eval_metrics_expr.elements[1].value) & forward if len(self.eval_metrics_expr.elements) == 2 else set()
        while wanted - {output}:
            defining = [st for st in stmts if output in st.defs and st.kind in (StmtKind.UNCLASSIFIED, StmtKind.FORWARD)]
            if len(defining) != 1:
                break
            st = defining[0]
            inputs = st.uses & (forward - {self.features})
            if creates_layer(st.small, self) or st.uses & set(self.variables) or len(inputs) != 1 or output in st.uses:
                break
            output = next(iter(inputs))
        return output

    def _model_side(
        self, plan: "Plan", stmts: list["Stmt"], forward: set[str], uses: set[str], what: str, kinds: tuple[StmtKind, ...]
    ) -> list[cst.SimpleStatementLine]:
        """The statements (of `kinds`: labels read from the features, losses, pure values; and
        forward ones recomputed from the output) that compute `uses` outside the model's call."""
        after = self._after_output_defs(plan, stmts, forward)
        allowed = {plan.output, self.features}
        after_ids = {id(st) for st in after.values()}
        needed = set(uses)
        chosen: list[Stmt] = []
        for st in reversed(stmts):
            if st.defs & needed and (st.kind in kinds or id(st) in after_ids):
                chosen.append(st)
                if isinstance(st.small, cst.Assign):
                    needed -= st.defs  # defined here: earlier bindings of these names are not needed
                needed |= st.uses
        chosen.reverse()
        bad = needed & forward - allowed - set(after)
        if bad:
            raise Unsupported(f"{what} read tensors the model does not return ({', '.join(sorted(bad))})")
        # The migrated model's labels are the features dict these statements read them from.
        rename = RenameNames({self.features: plan.labels_name})
        reads = CollectionReads(self)
        return [self._rewritten(st, rename) if st.kind == StmtKind.LABEL_SOURCE else st.node.visit(reads) for st in chosen]

    def _after_output_defs(self, plan: "Plan", stmts: list["Stmt"], forward: set[str]) -> dict[str, "Stmt"]:
        """Forward names computed from the model output alone (`predicted = tf.argmax(logits, 1)`),
        each with the statement that (last) defines it."""
        after: dict[str, Stmt] = {}
        allowed = {plan.output, self.features}
        # The model returns the output's last binding (`logits = tf.squeeze(logits, -1)` included):
        # only what comes after it is computed from what the model returns.
        last = max((i for i, st in enumerate(stmts) if plan.output in st.defs and st.kind == StmtKind.FORWARD), default=-1)
        for st in stmts[last + 1:]:
            if st.kind in (StmtKind.FORWARD, StmtKind.DEAD) and st.uses & forward and st.uses & forward <= allowed | set(after):
                if plan.output in st.uses or st.uses & set(after):
                    after.update(dict.fromkeys(st.defs, st))
        return after

    def _after_output(
        self, plan: "Plan", stmts: list["Stmt"], forward: set[str], uses: set[str], what: str
    ) -> list[cst.SimpleStatementLine]:
        """The statements that recompute `uses` after the model call: pure ones, and forward ones
        computed from the model output alone (`predicted = tf.argmax(logits, 1)`)."""
        after_output = self._after_output_defs(plan, stmts, forward)
        allowed = {plan.output, self.features}
        bad = (uses & forward) - allowed - set(after_output)
        if bad:
            raise Unsupported(f"{what} read tensors the model does not return ({', '.join(sorted(bad))})")
        needed: list[Stmt] = []
        todo = [n for n in uses if n in after_output]
        while todo:
            st = after_output[todo.pop()]
            if st not in needed:
                needed.append(st)
                todo.extend(n for n in st.uses if n in after_output)
        pure = [st for st in stmts if st.kind == StmtKind.PURE and st.defs & (uses | set().union(set(), *(x.uses for x in needed)))]
        return [st.node for st in stmts if st in pure or st in needed]

    # -- steps of `analyze()` -----------------------------------------------------------------
    def _classify_calls(self, flow: Flow) -> None:
        """The statements a call of theirs classifies: summaries, init_from_checkpoint,
        `tf.get_variable`, metric ops, the UPDATE_OPS collection, schedules, the optimizer (one
        only), CrossShardOptimizer, the global step, `minimize`."""
        stmts, loss_name = flow.stmts, flow.loss_name
        optimizer_names, global_step_names, schedule_nodes = flow.optimizer_names, flow.global_step_names, flow.schedule_nodes
        weights = flow.weights
        optimizer_stmt: Stmt | None = None
        self.schedule_names: set[str] = set()
        minimized = False  # TF1 made the optimizer's slots at `minimize`
        for st in stmts:
            with declining_at(st.line):
                value = getattr(st.small, "value", None)
                if isinstance(value, cst.Call):
                    key = self.call_key(value)
                    if isinstance(st.small, cst.Expr) and key in SUMMARY_FNS:
                        st.kind = StmtKind.SUMMARY
                        continue
                    if isinstance(st.small, cst.Expr) and self._init_from_checkpoint(value, None, after_optimizer=minimized):
                        st.kind = StmtKind.DROP
                        continue
                    if key == "get_variable":
                        st.kind = StmtKind.VARIABLE
                        weights.append(self._variable(st, value))
                        continue
                    if key in METRICS and isinstance(st.small, cst.Assign):
                        st.kind = StmtKind.METRIC_OP
                        continue
                    if self._is_update_ops(value):
                        st.kind = StmtKind.DROP
                        flow.update_ops_defined = st.defs
                        continue
                    if key in SCHEDULES and isinstance(st.small, cst.Assign):
                        st.kind = StmtKind.SCHEDULE
                        schedule_nodes[id(st)] = self._schedule(st, key, value, global_step_names)
                        self.schedule_names |= st.defs
                        st.uses -= global_step_names
                    elif key in OPTIMIZERS:
                        if optimizer_stmt is not None:
                            raise Unsupported("more than one optimizer in model_fn")
                        optimizer_stmt, st.kind = st, StmtKind.OPTIMIZER
                        optimizer_names |= st.defs
                    elif key is not None and key.startswith("train.") and key.endswith("Optimizer"):
                        raise Unsupported(f"`tf.{key}` (its TF1-faithful Keras form comes with the fidelity work)")
                    elif key == "tpu.CrossShardOptimizer":
                        st.kind = StmtKind.DROP
                        optimizer_names |= st.defs
                    elif key in GLOBAL_STEP_FNS:
                        st.kind = StmtKind.DROP
                        global_step_names |= st.defs
                    elif (
                        isinstance(value.func, cst.Attribute)
                        and value.func.attr.value == "minimize"
                        and isinstance(value.func.value, cst.Name)
                        and value.func.value.value in optimizer_names
                    ):
                        self._check_minimize(value, loss_name, global_step_names)
                        st.kind = StmtKind.DROP
                        minimized = True
        flow.optimizer_stmt = optimizer_stmt
        if optimizer_stmt is None:
            raise Unsupported("no `tf.train.*Optimizer(...).minimize(loss)` found in model_fn")

    def _split_data_flow(self, flow: Flow) -> None:
        """The data flow: statements reading the labels -> the loss, the features (or `mode`) ->
        the forward pass, neither -> pure values; labels read out of the features; layer objects."""
        plan, stmts, loss_name = flow.plan, flow.stmts, flow.loss_name
        forward: set[str] = {self.features} | set(self.variables)
        label_names: set[str] = {self.labels} if self.labels else set()
        mode_names: set[str] = {self.mode} if self.mode else set()
        flow.forward, flow.label_names, flow.mode_names = forward, label_names, mode_names
        if not (self.labels and any(self.labels in st.uses for st in stmts)):
            for st in self._labels_from_features(stmts):
                st.kind = StmtKind.LABEL_SOURCE
                label_names |= st.defs
                plan.labels_from_features = True
        for st in stmts:
            if st.kind:
                continue
            if isinstance(st.small, cst.Expr):
                value = st.small.value
                key = self.canonical(value.func) if isinstance(value, cst.Call) else None
                if key is not None and key.startswith(("summary.", "contrib.summary.")):
                    # Summaries change no number; they are left out, and said so.
                    st.kind = StmtKind.DROP
                    plan.notes.append(
                        f"`tf.{key}(...)` in `{plan.fn_name}` was not migrated: write it with TF2's tf.summary "
                        "in the training step"
                    )
                    continue
                if isinstance(value, cst.Call) and is_logging_call(value, self):
                    st.kind = StmtKind.DROP  # `tf.logging.info(...)`: a message, no number
                    continue
                raise Unsupported(f"expression statement `{self.code(st.small).strip()}` in model_fn", st.line)
            if st.uses & label_names:
                st.kind = StmtKind.LOSS
                label_names |= st.defs
            elif st.uses & (forward | mode_names):
                st.kind = StmtKind.FORWARD
                forward |= st.defs
            else:
                st.kind = StmtKind.PURE
                if creates_layer(st.small, self):
                    value = getattr(st.small, "value", None)
                    key = self.canonical(value.func) if isinstance(value, cst.Call) else None
                    is_class = key in LAYER_CLASSES or (key or "").startswith("keras.layers.")
                    if not (isinstance(st.small, cst.Assign) and len(st.defs) == 1 and is_class):
                        raise Unsupported("a layer object is created apart from its call; build it once in the model", st.line)
                    # `head = tf.keras.layers.Dense(2)` ... `head(net)`: one model attribute, built once
                    # (called twice, it shares its weights, as in TF1).
                    st.kind = StmtKind.LAYER_OBJECT
                    self.layer_objects[next(iter(st.defs))] = value  # type: ignore[assignment]
        for st in stmts:
            if st.kind not in (StmtKind.FORWARD, StmtKind.LAYER_OBJECT) and st.uses & set(self.layer_objects):
                raise Unsupported("a layer object is used outside the forward pass", st.line)
        if loss_name not in label_names:
            raise Unsupported("the loss does not depend on labels")

    def _model_output(self, flow: Flow) -> None:
        """The model output: the one forward name the loss statements read (narrowed to what the
        eval metrics want) -> `plan.output`."""
        plan, stmts, forward = flow.plan, flow.stmts, flow.forward
        loss_stmts = flow.loss_stmts = [st for st in stmts if st.kind == StmtKind.LOSS]
        outputs = sorted(set().union(*(st.uses for st in loss_stmts)) & (forward - {self.features} - set(self.variables)))
        if len(outputs) != 1:
            raise Unsupported(f"the loss reads {len(outputs)} model outputs; one is supported")
        plan.output = self._narrow_output(outputs[0], stmts, forward)
