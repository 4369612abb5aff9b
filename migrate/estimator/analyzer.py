"""`ModelFnAnalyzer`: the analysis' state, the queries every part asks (`canonical`, `code`,
`is_mode_compare`, ...), and `analyze()`, which runs the parts in order and returns the `Plan`.

The parts are mixins, one module per concern (see the package docstring); they read and write
the state `__init__` sets up, and call each other through `self`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ..names import AliasTable, names_in
from ..user_optimizers import recognise
from .checkpoints import CheckpointsAndScaffold
from .dataflow import DataFlow
from .forward import ForwardPass, ForwardRewriter, InitializerRewriter, drop_folded_locals
from .loss import Loss, LossRewriter
from .metrics import EvalMetrics
from .optimizer import GlobalStepRewriter, OptimizerAndSchedules, called_with
from .plan import Layer, Plan, Stmt, Unsupported, camel, declining_at
from .scoped import ScopedCode, foreign_names
from .shapes import StatementShapes, is_logging_call
from .spec import SpecAndPredictions
from .summaries import Summaries
from .syntax import assigned_names, attr_name, bind_args, calls_any, creates_layer, is_docstring, statement_ids
from .tables import GLOBAL_STEP_FNS, LAYER_CLASSES, METRICS, MODE_ANY, OPTIMIZERS, REGULARIZATION_LOSS_FNS, SCHEDULES, SUMMARY_FNS


class ModelFnAnalyzer(
    StatementShapes,
    SpecAndPredictions,
    CheckpointsAndScaffold,
    DataFlow,
    ForwardPass,
    ScopedCode,
    Loss,
    OptimizerAndSchedules,
    EvalMetrics,
    Summaries,
):
    """Builds a `Plan` for one model_fn, or raises `Unsupported`."""

    def __init__(self, fn: cst.FunctionDef, names: AliasTable, module: cst.Module, tf: str, tfm: str) -> None:
        self.fn = fn
        self.names = names
        self.module = module
        self.tf = tf
        self.tfm = tfm
        params = [p.name.value for p in fn.params.params]
        if len(params) < 1:
            raise Unsupported("model_fn takes no arguments")
        self.features = params[0]
        self.labels = params[1] if len(params) > 1 else None
        self.mode = params[2] if len(params) > 2 else None
        self.params = params[3] if len(params) > 3 else "params"
        if len(params) > 4 or isinstance(fn.params.star_arg, cst.Param) or fn.params.star_kwarg is not None or fn.params.kwonly_params:
            raise Unsupported("model_fn takes `config` or extra arguments")
        if fn.asynchronous or fn.decorators:
            raise Unsupported("model_fn is decorated or async")
        self.layer_attrs: dict[str, int] = {}
        self.local_fns: dict[str, cst.FunctionDef] = {}
        self.update_ops_dependency = False
        self.update_ops_dependency_names: set[str] = set()
        self.eval_return: cst.Return | None = None
        self.predict_return: cst.Return | None = None
        self.predict_stmts: list[cst.SimpleStatementLine] = []
        self.eval_metrics_expr: cst.BaseExpression | None = None
        self.eval_metric_ops_expr: cst.BaseExpression | None = None
        self.hook_exprs: dict[str, list[cst.BaseExpression]] = {}  # spec key -> hook list expressions
        # `tf.variable_scope` nesting: statement -> the TF1 scope its variables are created in.
        self.scope_of: dict[int, str] = {}
        self.scope_counts: dict[str, int] = {}
        # `w = tf.get_variable(...)`: local name -> model attribute; attribute (or attribute/weight)
        # -> TF1 variable name, for the runtime's TF1 checkpoint loader.
        self.variables: dict[str, str] = {}
        self.tf1_names: dict[str, str] = {}
        self.step_fn: str | None = None  # the learning-rate function of the global step, if any
        self.layer_objects: dict[str, cst.Call] = {}  # `head = tf.keras.layers.Dense(...)`: name -> constructor
        self.layer_object_attrs: dict[str, str] = {}
        self.loss_collection_at: dict[int, list[str]] = {}  # statement -> TF1 LOSSES collection
        # `tf.train.init_from_checkpoint`: (condition, rendered arguments, names read).
        self.init_checkpoints: list[tuple[str | None, str, set[str]]] = []
        self.scaffold_fn: str | None = None
        self.host_call_expr: cst.BaseExpression | None = None
        # Module-level helpers the model_fn calls that build part of the model (inlined), and
        # names bound to a mode test (`is_training = (mode == ModeKeys.TRAIN)`).
        self.module_fns = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        # Calls the forward pass makes into code it cannot restructure, run under a variable
        # store instead: other modules' functions, and helpers that share variables
        # (`variable_scope(..., reuse=tf.AUTO_REUSE)`, a siamese tower called on two inputs).
        self.foreign = foreign_names(module) | {name for name, f in self.module_fns.items() if self._shares_variables(f)}
        self.inlined: list[str] = []
        self._inlining: list[str] = []
        self.mode_aliases: dict[str, tuple[bool, str]] = {}
        # BERT's `scaffold_fn = None` / `if init_checkpoint: ... scaffold_fn = tpu_scaffold`: the
        # variable the spec's `scaffold_fn=` names, already recorded as an init_from_checkpoint.
        self.scaffold_vars: set[str] = set()
        # `with slim.arg_scope([slim.conv2d, ...], padding='SAME'):` blocks around the statement
        # being flattened, outermost first: (the functions' canonical names, default arguments).
        self.arg_scopes: list[tuple[set[str], list[cst.Arg]]] = []
        self.dict_literals: dict[str, cst.Dict] = {}  # `batch_norm_params = {...}`
        # A statement the analysis made or passed on (a line `_flatten` put out, a branch
        # `_spec_chain` rebuilt): (it, the statements it came from, innermost first).
        self._origins: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] = {}
        # Optimizer classes the program defines that are a known algorithm (BERT's AdamW).
        self.user_optimizers = {
            s.name.value: key
            for s in module.body
            if isinstance(s, cst.ClassDef) and (key := recognise(s, module, self.canonical)) is not None
        }

    # -- where a decline is ---------------------------------------------------------------
    def blocking_statement(self, why: Unsupported) -> cst.CSTNode | None:
        """The statement of the model_fn as written that `why` declined at: the innermost of its
        statements, or of those they came from, that is one of the model_fn's own (None: none is,
        as when the `def` itself declined)."""
        own = statement_ids(self.fn)
        return next((statement for statement in self._with_origins(why.statements) if id(statement) in own), None)

    def _rewritten(self, st: "Stmt", rewriter: cst.CSTTransformer) -> cst.SimpleStatementLine:
        """`st`'s statement through `rewriter`; an `Unsupported` the rewriter raises names it."""
        with declining_at(st.line):
            return st.node.visit(rewriter)  # type: ignore[return-value]

    def _came_from(self, statement: cst.CSTNode, origin: cst.CSTNode) -> None:
        """Records that the analysis made or passed on `statement` from `origin` (innermost first)."""
        self._origins.setdefault(id(statement), (statement, []))[1].append(origin)

    def _with_origins(self, statements: list[cst.CSTNode]) -> Iterator[cst.CSTNode]:
        """Each of `statements`, each followed by the statements it came from, each once."""
        seen: set[int] = set()
        pending = list(reversed(statements))
        while pending:
            statement = pending.pop()
            if id(statement) in seen:
                continue
            seen.add(id(statement))
            yield statement
            entry = self._origins.get(id(statement))
            if entry is not None and entry[0] is statement:
                pending.extend(reversed(entry[1]))

    # -- helpers --------------------------------------------------------------------------
    def dict_value(self, node: cst.BaseExpression) -> cst.Dict | None:
        """A dict literal, or the dict literal a name was assigned in model_fn."""
        if isinstance(node, cst.Dict):
            return node
        if isinstance(node, cst.Name):
            return self.dict_literals.get(node.value)
        return None

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def canonical(self, node: cst.BaseExpression) -> str | None:
        return self.names.canonical(node)

    def call_key(self, call: cst.Call) -> str | None:
        """The canonical TF name a call calls, or the key of a recognised user optimizer class."""
        key = self.canonical(call.func)
        if key is None and isinstance(call.func, cst.Name):
            return self.user_optimizers.get(call.func.value)
        return key

    def is_mode_compare(self, node: cst.BaseExpression) -> tuple[bool, str] | None:
        """`mode == ModeKeys.X` / `mode != ModeKeys.X` -> (equal?, X-path)."""
        if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1 or self.mode is None:
            return None
        target = node.comparisons[0]
        left, right = node.left, target.comparator
        if isinstance(right, cst.Name) and right.value == self.mode:
            left, right = right, left
        if not (isinstance(left, cst.Name) and left.value == self.mode):
            return None
        key = self.canonical(right)
        if key not in MODE_ANY:
            return None
        if isinstance(target.operator, cst.Equal):
            return True, key
        if isinstance(target.operator, cst.NotEqual):
            return False, key
        return None

    def _mode_test(self, node: cst.BaseExpression) -> tuple[bool, str] | None:
        """`is_mode_compare`, or a name bound to one (BERT's `is_training`)."""
        if isinstance(node, cst.Name) and node.value in self.mode_aliases:
            return self.mode_aliases[node.value]
        return self.is_mode_compare(node)

    def tf1_layer_name(self, base: str, scope: str) -> tuple[str, str]:
        """(model attribute, TF1 scope) for a layer TF1 named `base` inside `scope`: TF1 made layer
        names unique per enclosing variable scope (`dense`, `dense_1`, `block/dense`)."""
        full = f"{scope}/{base}" if scope else base
        count = self.scope_counts.get(full, 0)
        self.scope_counts[full] = count + 1
        tf1 = full if count == 0 else f"{full}_{count}"
        return self.unique_attr(attr_name(tf1) or "layer"), tf1

    def unique_attr(self, base: str) -> str:
        count = self.layer_attrs.get(base, 0)
        self.layer_attrs[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    # -- main entry -------------------------------------------------------------------------
    def analyze(self) -> Plan:
        body = list(self.fn.body.body)  # type: ignore[attr-defined]
        plan = Plan(
            fn_name=self.fn.name.value,
            class_name=camel(self.fn.name.value),
            params_name=self.params,
            features_name=self.features,
            labels_name=self.labels or "labels",
        )
        if body and is_docstring(body[0]):
            plan.docstring = body[0].body[0].value.evaluated_value  # type: ignore[attr-defined]
            body = body[1:]
        body = self._spec_chain(body)
        lines: list[cst.SimpleStatementLine] = []
        self._flatten(body, lines)
        plan.absorbed_functions.extend(self.inlined)
        if not lines or not isinstance(lines[-1].body[0], cst.Return):
            raise Unsupported("model_fn does not end with `return <EstimatorSpec>`", lines[-1] if lines else None)
        stmts: list[Stmt] = []
        for line in lines[:-1]:
            if len(line.body) != 1:
                raise Unsupported("several statements on one line in model_fn", line)
            small = line.body[0]
            if isinstance(small, cst.Return):
                raise Unsupported("more than one `return` in model_fn", line)
            if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr)):
                raise Unsupported(f"`{type(small).__name__}` statement in model_fn", line)
            value = getattr(small, "value", None)
            uses = names_in(value) if value is not None else set()
            if isinstance(small, cst.AugAssign):
                uses |= names_in(small.target)
            stmts.append(Stmt(line, small, assigned_names(small), uses))
        with declining_at(lines[-1]):
            spec = self._spec(lines[-1].body[0])  # type: ignore[arg-type]
        if self.eval_return is not None:
            eval_spec = self._spec(self.eval_return)
            if eval_spec.get("loss") != spec["loss"]:
                raise Unsupported("the EVAL branch reports a different loss")
        metric_names: set[str] = set()
        if isinstance(self.eval_metrics_expr, cst.Name):
            metric_names.add(self.eval_metrics_expr.value)
            for st in stmts:
                if st.defs & metric_names:
                    st.kind = "drop"
                    if not isinstance(st.small, cst.Assign):
                        raise Unsupported("`eval_metrics` is not assigned a `(metric_fn, tensors)` tuple", st.line)
                    self.eval_metrics_expr = st.small.value
        if self.scaffold_fn is not None:
            self._scaffold_fn(self.scaffold_fn, plan)
        loss_name = spec["loss"]
        train_op = spec.get("train_op")
        plan.loss_name = loss_name
        if self.predict_return is not None and isinstance(self.predict_return.value, cst.Call):
            # The PREDICT spec's `prediction_hooks=`: a `prediction_hooks()` method, as for training.
            for arg in self.predict_return.value.args:
                if arg.keyword is not None and arg.keyword.value == "prediction_hooks" and not (
                    isinstance(arg.value, cst.Name) and arg.value.value == "None"
                ):
                    self.hook_exprs.setdefault("prediction_hooks", []).append(arg.value)
        if self.hook_exprs:
            from ..estimator_surface import spec_hooks

            spec_hooks(self, plan, stmts, self.hook_exprs, loss_name)

        # Optimizer, CrossShardOptimizer, minimize, global step.
        optimizer_names: set[str] = set()
        optimizer_stmt: Stmt | None = None
        global_step_names: set[str] = set()
        schedule_nodes: dict[int, cst.SimpleStatementLine] = {}
        self.schedule_names: set[str] = set()
        update_ops_defined: set[str] = set()
        weights: list[tuple[str, list[str], set[str]]] = []
        minimized = False  # TF1 made the optimizer's slots at `minimize`
        for st in stmts:
            with declining_at(st.line):
                value = getattr(st.small, "value", None)
                if isinstance(value, cst.Call):
                    key = self.call_key(value)
                    if isinstance(st.small, cst.Expr) and key in SUMMARY_FNS:
                        st.kind = "summary"
                        continue
                    if isinstance(st.small, cst.Expr) and self._init_from_checkpoint(value, None, after_optimizer=minimized):
                        st.kind = "drop"
                        continue
                    if key == "get_variable":
                        st.kind = "variable"
                        weights.append(self._variable(st, value))
                        continue
                    if key in METRICS and isinstance(st.small, cst.Assign):
                        st.kind = "metricop"
                        continue
                    if self._is_update_ops(value):
                        st.kind = "drop"
                        update_ops_defined = st.defs
                        continue
                    if key in SCHEDULES and isinstance(st.small, cst.Assign):
                        st.kind = "schedule"
                        schedule_nodes[id(st)] = self._schedule(st, key, value, global_step_names)
                        self.schedule_names |= st.defs
                        st.uses -= global_step_names
                    elif key in OPTIMIZERS:
                        if optimizer_stmt is not None:
                            raise Unsupported("more than one optimizer in model_fn")
                        optimizer_stmt, st.kind = st, "optimizer"
                        optimizer_names |= st.defs
                    elif key is not None and key.startswith("train.") and key.endswith("Optimizer"):
                        raise Unsupported(f"`tf.{key}` (its TF1-faithful Keras form comes with the fidelity work)")
                    elif key == "tpu.CrossShardOptimizer":
                        st.kind = "drop"
                        optimizer_names |= st.defs
                    elif key in GLOBAL_STEP_FNS:
                        st.kind = "drop"
                        global_step_names |= st.defs
                    elif (
                        isinstance(value.func, cst.Attribute)
                        and value.func.attr.value == "minimize"
                        and isinstance(value.func.value, cst.Name)
                        and value.func.value.value in optimizer_names
                    ):
                        self._check_minimize(value, loss_name, global_step_names)
                        st.kind = "drop"
                        minimized = True
        if optimizer_stmt is None:
            raise Unsupported("no `tf.train.*Optimizer(...).minimize(loss)` found in model_fn")
        deferred = self._defer_shaped_weights(stmts, weights)
        self._hand_step_increment(stmts, global_step_names, self.call_key(optimizer_stmt.small.value))  # type: ignore[union-attr,arg-type]
        self._gradient_code(stmts, plan, optimizer_names, global_step_names, loss_name)
        metric_ops = {name for st in stmts if st.kind == "metricop" for name in st.defs}
        for st in stmts:
            value = getattr(st.small, "value", None)
            if not st.kind and isinstance(value, cst.Dict) and value.elements and all(
                self._is_metric_value(element, metric_ops) for element in value.elements
            ):
                st.kind = "metricdict"
        if self.update_ops_dependency_names - update_ops_defined:
            raise Unsupported("`tf.control_dependencies(...)` on something other than the UPDATE_OPS collection")
        if train_op is not None and not any(train_op in st.defs for st in stmts if st.kind in ("drop", "grad")):
            raise Unsupported("train_op is not `optimizer.minimize(loss, ...)` or `optimizer.apply_gradients(...)`")
        # A learning rate computed by hand from the global step (a linear warmup blend over a
        # decay): those statements become a function of the step, called by the optimizer.
        step_names = set(global_step_names)
        for st in stmts:
            if (
                st.kind == ""
                and isinstance(st.small, (cst.Assign, cst.AugAssign, cst.AnnAssign))
                and not st.uses & optimizer_names
                and (st.uses & (step_names | self.schedule_names) or calls_any(st.small, self, GLOBAL_STEP_FNS))
            ):
                st.kind = "stepfn"
                step_names |= st.defs
        for st in stmts:
            if st.kind == "" and st.uses & (step_names | optimizer_names):
                raise Unsupported("the optimizer or global step is used beyond `minimize`/`apply_gradients`", st.line)

        self._loss_collection(stmts)

        # Data flow: forward (features), loss (labels), pure.
        forward: set[str] = {self.features} | set(self.variables)
        label_names: set[str] = {self.labels} if self.labels else set()
        mode_names: set[str] = {self.mode} if self.mode else set()
        if not (self.labels and any(self.labels in st.uses for st in stmts)):
            for st in self._labels_from_features(stmts):
                st.kind = "labelsrc"
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
                    st.kind = "drop"
                    plan.notes.append(
                        f"`tf.{key}(...)` in `{plan.fn_name}` was not migrated: write it with TF2's tf.summary "
                        "in the training step"
                    )
                    continue
                if isinstance(value, cst.Call) and is_logging_call(value, self):
                    st.kind = "drop"  # `tf.logging.info(...)`: a message, no number
                    continue
                raise Unsupported(f"expression statement `{self.code(st.small).strip()}` in model_fn", st.line)
            if st.uses & label_names:
                st.kind = "loss"
                label_names |= st.defs
            elif st.uses & (forward | mode_names):
                st.kind = "forward"
                forward |= st.defs
            else:
                st.kind = "pure"
                if creates_layer(st.small, self):
                    value = getattr(st.small, "value", None)
                    key = self.canonical(value.func) if isinstance(value, cst.Call) else None
                    is_class = key in LAYER_CLASSES or (key or "").startswith("keras.layers.")
                    if not (isinstance(st.small, cst.Assign) and len(st.defs) == 1 and is_class):
                        raise Unsupported("a layer object is created apart from its call; build it once in the model", st.line)
                    # `head = tf.keras.layers.Dense(2)` ... `head(net)`: one model attribute, built once
                    # (called twice, it shares its weights, as in TF1).
                    st.kind = "layerobj"
                    self.layer_objects[next(iter(st.defs))] = value  # type: ignore[assignment]
        for st in stmts:
            if st.kind not in ("forward", "layerobj") and st.uses & set(self.layer_objects):
                raise Unsupported("a layer object is used outside the forward pass", st.line)
        if loss_name not in label_names:
            raise Unsupported("the loss does not depend on labels")

        self._foreign_outside_forward(stmts, plan)

        # The model output: forward names the loss statements read.
        loss_stmts = [st for st in stmts if st.kind == "loss"]
        outputs = sorted(set().union(*(st.uses for st in loss_stmts)) & (forward - {self.features} - set(self.variables)))
        if len(outputs) != 1:
            raise Unsupported(f"the loss reads {len(outputs)} model outputs; one is supported")
        plan.output = self._narrow_output(outputs[0], stmts, forward)
        if self.eval_metrics_expr is not None:
            self._metrics(plan, stmts, forward)
        if self.predict_return is not None:
            self._predictions(plan, stmts, forward)
        if self.eval_metric_ops_expr is not None:
            if self.eval_metrics_expr is not None:
                raise Unsupported("both `eval_metrics` and `eval_metric_ops`")
            for st in stmts:
                if st.kind == "metricdict":
                    st.kind = ""
            self._metric_ops(plan, stmts, forward)
        elif any(st.kind == "metricop" for st in stmts):
            raise Unsupported("tf.metrics.* ops that no `eval_metric_ops` reports")

        pure = {name: st for st in stmts if st.kind == "pure" for name in st.defs}

        def needed_pure(uses: set[str]) -> list[Stmt]:
            seen: set[int] = set()
            todo = [n for n in uses if n in pure]
            while todo:
                name = todo.pop()
                st = pure[name]
                if id(st) in seen:
                    continue
                seen.add(id(st))
                todo.extend(n for n in st.uses if n in pure)
            return [st for st in stmts if id(st) in seen]

        # Forward pass -> call(), hoisting layers.
        rewriter = ForwardRewriter(self)
        call_lines: list[cst.SimpleStatementLine] = []
        forward_stmts = [st for st in stmts if st.kind == "forward"]
        # Forward statements the output does not need and that build no layer (say, probabilities
        # only the PREDICT branch reads) stay out of call(); predict_step recomputes what it needs.
        live: set[str] = {plan.output}
        for st in reversed(forward_stmts):
            if st.defs & live or creates_layer(st.small, self):
                live |= st.uses
            else:
                st.kind = "dead"
        forward_stmts = [st for st in forward_stmts if st.kind == "forward"]
        scoped_lines = self._scoped(plan, stmts, forward_stmts)
        layer_uses: set[str] = set()
        for st in stmts:
            if st.kind == "forward" and id(st) in scoped_lines:
                if scoped_lines[id(st)] is not None:
                    call_lines.append(scoped_lines[id(st)])
            elif st.kind == "forward":
                rewriter.scope = self.scope_of.get(id(st.node), "")
                call_lines.append(self._rewritten(st, rewriter))
            elif st.kind == "pure" and any(st in needed_pure(f.uses) for f in forward_stmts):
                call_lines.append(st.node)
        if rewriter.pending_ctors:
            raise Unsupported("a layer object is created apart from its call; build it once in the model")
        for layer in rewriter.layers:
            layer_uses |= layer[1]
        if rewriter.uses_labels:
            raise Unsupported("the forward pass reads labels")
        bad = layer_uses & (forward | label_names)
        if bad:
            raise Unsupported(f"layer arguments depend on tensors ({', '.join(sorted(bad))}); cannot build the layer once")
        plan.layers = [Layer(attr, func, args) for attr, _, (func, args) in rewriter.layers]
        plan.weights = [(attr, args) for attr, args, _ in weights]
        for attr, method, tensor, shape_lines, args, uses in deferred:
            shape_uses = set().union(*(names_in(line) for line in shape_lines))
            prelude = [x.node for x in needed_pure((uses | shape_uses) - {tensor})]
            plan.deferred_weights.append((attr, method, tensor, prelude + shape_lines, args))
            plan.deferred_use_params = plan.deferred_use_params or self.params in uses | shape_uses | set().union(
                set(), *(names_in(line) for line in prelude)
            )
        weight_uses = set().union(set(), *(uses for _, _, uses in weights))
        bad = weight_uses & (forward | label_names)
        if bad:
            raise Unsupported(f"`tf.get_variable` arguments depend on tensors ({', '.join(sorted(bad))})")
        plan.tf1_names = dict(self.tf1_names)
        init_rewriter = InitializerRewriter(self)
        plan.init_stmts = [self._rewritten(st, init_rewriter) for st in needed_pure(layer_uses)]
        weight_stmts = needed_pure(weight_uses)
        plan.weight_stmts = [self._rewritten(st, init_rewriter) for st in weight_stmts]
        plan.weights_use_params = self.params in weight_uses | set().union(set(), *(st.uses for st in weight_stmts))
        call_lines = drop_folded_locals(call_lines, {plan.output})
        plan.call_stmts = call_lines
        call_names = set().union(set(), *(names_in(node) for node in call_lines))
        plan.call_uses_params = self.params in call_names
        if self.mode and self.mode in call_names:
            raise Unsupported("the forward pass uses `mode` beyond `mode == ModeKeys.TRAIN`")

        # Regularizers count only if the TF1 loss read them (tf.losses.get_regularization_loss());
        # Keras always adds them, so unread ones are dropped to keep TF1's numbers.
        reads_regularization = any(calls_any(st.small, self, REGULARIZATION_LOSS_FNS) for st in loss_stmts)
        plan.scoped_regularization = reads_regularization
        if not reads_regularization:
            for layer in plan.layers:
                layer.args = [a for a in layer.args if not re.match(r"\w*_regularizer=", a)]
            plan.weights = [(attr, [a for a in args if not a.startswith("regularizer=")]) for attr, args in plan.weights]

        # Summaries (the model_fn's and a TPU host_call's), written from the training step.
        self._summaries(plan, stmts, forward, label_names, global_step_names, schedule_nodes)

        # Loss.
        loss_uses = set().union(*(s.uses for s in loss_stmts))
        model_side: list[cst.SimpleStatementLine] = []
        if plan.labels_from_features or loss_uses & forward - {plan.output, self.features}:
            model_side = self._model_side(plan, stmts, forward, loss_uses, "the loss", kinds=("labelsrc", "pure"))
        keras_loss = None if (plan.summaries or plan.host_summaries) else self._keras_loss(loss_stmts, plan.output, loss_name)
        loss_pure = needed_pure(loss_uses)
        if keras_loss is not None and not loss_pure and not model_side:
            plan.keras_loss = keras_loss
        else:
            loss_rewriter = LossRewriter(self)
            lines_out = [st.node for st in loss_pure] if not model_side else model_side
            for st in loss_stmts:
                loss_rewriter.collection = self.loss_collection_at.get(id(st.node), [])
                lines_out.append(self._rewritten(st, loss_rewriter))
            plan.loss_stmts = lines_out
            plan.keras_loss = None
            plan.loss_uses_params = self.params in set().union(*(s.uses for s in loss_stmts + loss_pure))

        # Optimizer.
        schedules = [st for st in stmts if st.kind in ("schedule", "stepfn")]
        wanted = names_in(optimizer_stmt.small.value)  # type: ignore[union-attr]
        in_schedule: list[Stmt] = []
        for st in reversed(schedules):
            if st.defs & wanted:
                wanted |= st.uses
                in_schedule.insert(0, st)
        init_uses = set().union(set(), *(uses for _, _, uses in self.init_checkpoints))
        bad = init_uses & ((forward - {self.features}) | label_names | {self.features})
        if bad:
            raise Unsupported(f"init_from_checkpoint reads tensors of the model ({', '.join(sorted(bad))})")
        init_prelude = {id(st) for st in needed_pure(init_uses)}
        plan.init_checkpoints = [(condition, args) for condition, args, _ in self.init_checkpoints]
        prelude = {id(st) for st in needed_pure(wanted)} | init_prelude
        if any(st.kind == "stepfn" for st in in_schedule):
            lr = bind_args(optimizer_stmt.small.value, OPTIMIZERS[self.call_key(optimizer_stmt.small.value)][1]).get("learning_rate")  # type: ignore[union-attr,index]
            others = names_in(optimizer_stmt.small.value) - ({lr.value} if isinstance(lr, cst.Name) else set())  # type: ignore[union-attr]
            if not isinstance(lr, cst.Name) or others & step_names:
                raise Unsupported("an optimizer argument other than the learning rate is computed from the global step")
            param = min(global_step_names) if global_step_names else "global_step"
            plan.step_fn = f"{lr.value}_fn"
            plan.step_fn_param = param
            plan.step_fn_result = lr.value
            # The function computes everything the rate needs (pure values included: TF1 code
            # rebinds names, `learning_rate = tf.train.polynomial_decay(learning_rate, ...)`).
            steps = GlobalStepRewriter(self, param)
            inside = {id(st) for st in in_schedule} | {id(st) for st in needed_pure(set().union(*(st.uses for st in in_schedule)))}
            plan.step_fn_stmts = [
                called_with(schedule_nodes[id(st)], param) if st.kind == "schedule" else self._rewritten(st, steps)
                for st in stmts
                if id(st) in inside
            ]
            plan.optimizer_prelude = [st.node for st in stmts if id(st) in {id(x) for x in needed_pure(others)} | init_prelude]
            self.step_fn = plan.step_fn
        else:
            plan.optimizer_prelude = [
                schedule_nodes[id(st)] if st.kind == "schedule" else st.node
                for st in stmts
                if id(st) in prelude or (st.kind == "schedule" and st.defs & wanted)
            ]
        plan.optimizer = self._keras_optimizer(optimizer_stmt.small.value)  # type: ignore[union-attr]
        func = optimizer_stmt.small.value.func  # type: ignore[union-attr]
        if isinstance(func, cst.Name) and func.value in self.user_optimizers:
            plan.absorbed_functions.append(func.value)  # the class goes when nothing else uses it
        if plan.gradient_stmts:
            uses = self.gradient_uses - {loss_name} - optimizer_names - global_step_names
            bad = uses & ((forward - {self.features}) | label_names | {self.features})
            if bad:
                raise Unsupported(f"the gradient code reads tensors of the model ({', '.join(sorted(bad))})")
            gradient_pure = needed_pure(uses)
            plan.gradient_prelude = [st.node for st in gradient_pure]
            plan.gradient_uses_params = self.params in uses | set().union(set(), *(st.uses for st in gradient_pure))
        for st in stmts:
            if st.kind == "pure" and st.uses & mode_names:
                raise Unsupported("a statement uses `mode`", st.line)
        return plan
