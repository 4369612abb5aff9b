"""`ModelFnAnalyzer`: the analysis' state, the queries every part asks (`canonical`, `code`,
`is_mode_compare`, ...), and `analyze()`, which runs the parts in order and returns the `Plan`.

The parts are mixins, one module per concern (see the package docstring); they read and write
the state `__init__` sets up, and call each other through `self`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..cst_on_demand import cst

from ..names import AliasTable
from ..user_optimizers import recognise
from .checkpoints import CheckpointsAndScaffold
from .dataflow import DataFlow, Flow
from .forward import ForwardPass
from .loss import Loss
from .metrics import EvalMetrics
from .optimizer import OptimizerAndSchedules
from .plan import Plan, Stmt, StmtKind, Unsupported, camel, declining_at
from .scoped import ScopedCode, foreign_names
from .shapes import StatementShapes
from .spec import SpecAndPredictions
from .summaries import Summaries
from .syntax import attr_name, statement_ids
from .tables import KERAS_MODEL_ATTRIBUTES, MODE_ANY


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

    def __init__(self, fn: cst.FunctionDef, names: AliasTable, module: cst.Module, tf: str, tfm: str,
                 text: str | None = None) -> None:
        """`text`: the source `module` was parsed from, when known (it spares walks that look for
        what the text does not spell)."""
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
        self.tf1_program = False  # a TF 1.x program's (`tfmigrate.tf1_program`): its tf.keras was Keras 2 in a TF1 graph
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
        # Model attributes of the original's `tf.keras.layers` layers: TF1 never collected a Keras
        # layer's penalties into REGULARIZATION_LOSSES, so `get_regularization_loss()` left them out.
        self.uncollected_regularizers: list[str] = []
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
        # (Sharing needs `reuse=` or `reuse_variables()`: a text without "reuse" has none to find.)
        sharing = text is None or "reuse" in text
        self.foreign = foreign_names(module) | {name for name, f in self.module_fns.items() if sharing and self._shares_variables(f)}
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
        if base in KERAS_MODEL_ATTRIBUTES:
            base += "_layer"  # `self.output` is Keras's own
        count = self.layer_attrs.get(base, 0)
        self.layer_attrs[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    # -- the analysis, step by step ---------------------------------------------------------
    def analyze(self) -> Plan:
        """The `Plan` for the model_fn, or `Unsupported`. Each step classifies statements
        (`Stmt.kind`) or fills in the plan from what the steps before it left, so the order matters."""
        plan = Plan(
            fn_name=self.fn.name.value,
            class_name=camel(self.fn.name.value),
            params_name=self.params,
            features_name=self.features,
            labels_name=self.labels or "labels",
        )
        lines = self._lines(plan)
        flow = Flow(plan, self._statements(lines))
        self._read_spec(flow, lines[-1])
        self._classify_calls(flow)
        flow.deferred = self._defer_shaped_weights(flow.stmts, flow.weights)
        self._hand_step_increment(flow.stmts, flow.global_step_names, self.call_key(flow.optimizer_stmt.small.value))  # type: ignore[union-attr,arg-type]
        self._gradient_code(flow.stmts, plan, flow.optimizer_names, flow.global_step_names, flow.loss_name)
        self._metric_dicts(flow)
        self._check_train_op(flow)
        self._step_function(flow)
        self._loss_collection(flow.stmts)
        self._split_data_flow(flow)
        self._foreign_outside_forward(flow.stmts, plan)
        self._model_output(flow)
        self._metrics_and_predictions(flow)
        flow.pure = {name: st for st in flow.stmts if st.kind == StmtKind.PURE for name in st.defs}
        self._forward_plan(flow)
        self._drop_unread_regularizers(flow)
        # Summaries (the model_fn's and a TPU host_call's), written from the training step.
        self._summaries(plan, flow.stmts, flow.forward, flow.label_names, flow.global_step_names, flow.schedule_nodes)
        self._loss_plan(flow)
        self._optimizer_plan(flow)
        self._gradient_plan(flow)
        for st in flow.stmts:
            if st.kind == StmtKind.PURE and st.uses & flow.mode_names:
                raise Unsupported("a statement uses `mode`", st.line)
        return plan

    def _metrics_and_predictions(self, flow: Flow) -> None:
        """The eval metrics (`eval_metrics` or `eval_metric_ops`, not both) and the PREDICT branch."""
        plan, stmts, forward = flow.plan, flow.stmts, flow.forward
        if self.eval_metrics_expr is not None:
            self._metrics(plan, stmts, forward)
        if self.predict_return is not None:
            self._predictions(plan, stmts, forward)
        if self.eval_metric_ops_expr is not None:
            if self.eval_metrics_expr is not None:
                raise Unsupported("both `eval_metrics` and `eval_metric_ops`")
            for st in stmts:
                if st.kind == StmtKind.METRIC_DICT:
                    st.kind = StmtKind.UNCLASSIFIED
            self._metric_ops(plan, stmts, forward)
        elif any(st.kind == StmtKind.METRIC_OP for st in stmts):
            raise Unsupported("tf.metrics.* ops that no `eval_metric_ops` reports")
