"""The optimizer and learning rate: the `tf.train.*Optimizer` -> its Keras (or runtime) optimizer,
`tf.train.*_decay` schedules and hand-written learning rates of the global step, hand-written
gradient code (`GradientRewriter`), a global step incremented by hand.
"""

from __future__ import annotations

from ..cst_on_demand import Transformer, cst

from ..names import names_in
from ..user_optimizers import ADAM_WEIGHT_DECAY
from .analysis import Analysis
from .dataflow import Flow
from .plan import Plan, Stmt, StmtKind, Unsupported
from .syntax import bind_args, calls_any, calls_method, is_constant_like
from .tables import GLOBAL_STEP_FNS, OPTIMIZERS, SCHEDULES, keras_optimizer_args


def _loss_statements(stmts: list[Stmt], loss_name: str) -> set[int]:
    """The ids of the statements the loss named `loss_name` is computed by, directly or through
    names they define (a backward walk over `stmts`)."""
    wanted = {loss_name}
    found: set[int] = set()
    for st in reversed(stmts):
        if st.defs & wanted:
            found.add(id(st))
            wanted |= st.uses
    return found


class _GradientRewriter(Transformer):
    """TF1 gradient code -> the same code on a `tf.GradientTape` and the model's Keras optimizer."""

    def __init__(self, analyzer: Analysis, optimizers: set[str], global_steps: set[str]) -> None:
        super().__init__()
        self.a = analyzer
        self.optimizers = optimizers
        self.global_steps = global_steps
        self.uses_tf_gradients = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key == "trainable_variables":
            return cst.parse_expression("self.trainable_variables")
        if key == "gradients":
            self.uses_tf_gradients = True
            args = [a for a in updated.args if not a.keyword or a.keyword.value in ("ys", "xs")]
            if len(args) != 2:
                raise Unsupported("`tf.gradients` with arguments beyond (ys, xs)")
            return cst.Call(func=cst.parse_expression("tape.gradient"), args=[a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) for a in args])
        func = original.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in self.optimizers:
            method = func.attr.value
            if method == "compute_gradients":
                bound = bind_args(updated, ("loss", "var_list"))
                if bound is None or "loss" not in bound:
                    raise Unsupported("`compute_gradients` with arguments beyond (loss, var_list)")
                loss = self.a.code(bound["loss"])
                variables = self.a.code(bound["var_list"]) if "var_list" in bound else "self.trainable_variables"
                return cst.parse_expression(f"list(zip(tape.gradient({loss}, {variables}), {variables}))")
            if method == "apply_gradients":
                bound = bind_args(updated, ("grads_and_vars", "global_step", "name"))
                if bound is None or "grads_and_vars" not in bound:
                    raise Unsupported("unexpected arguments to `apply_gradients`")
                step = bound.get("global_step")
                if step is not None and not self.a._is_global_step(step, self.global_steps):
                    raise Unsupported("`apply_gradients(global_step=...)` is not the global step")
                return cst.parse_expression(f"self.optimizer.apply_gradients({self.a.code(bound['grads_and_vars'])})")
            raise Unsupported(f"`optimizer.{method}` in the gradient code")
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        # `train_op = self.optimizer.apply_gradients(...)`: the op is gone, the call stays.
        small = updated.body[0]
        if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
            func = small.value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "apply_gradients" and self.a.code(func.value) == "self.optimizer":
                return updated.with_changes(body=[cst.Expr(small.value)])
        return updated


class GlobalStepRewriter(Transformer):
    """`tf.train.get_global_step()` inside a learning-rate computation -> the step parameter."""

    def __init__(self, analyzer: Analysis, param: str) -> None:
        super().__init__()
        self.a = analyzer
        self.param = param

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.a.canonical(original.func) in GLOBAL_STEP_FNS:
            return cst.Name(self.param)
        return updated


def called_with(line: cst.SimpleStatementLine, param: str) -> cst.SimpleStatementLine:
    """`lr = Schedule(...)` -> `lr = Schedule(...)(param)`: the schedule's value at the step."""
    assign = line.body[0]
    assert isinstance(assign, cst.Assign)
    return line.with_changes(body=[assign.with_changes(value=cst.Call(func=assign.value, args=[cst.Arg(cst.Name(param))]))])


class OptimizerAndSchedules:
    """`ModelFnAnalyzer`'s part: the optimizer, learning-rate schedules, gradient code and global step."""

    def _hand_step_increment(self, stmts: list["Stmt"], global_steps: set[str], optimizer_key: str | None) -> None:
        """BERT increments the global step by hand, because its AdamWeightDecayOptimizer ignores
        `global_step`: `new_global_step = global_step + 1` and `train_op = tf.group(train_op,
        [global_step.assign(new_global_step)])`. A Keras optimizer counts its own steps, so both go."""
        found = False
        for st in stmts:
            value = getattr(st.small, "value", None)
            if st.kind or not isinstance(st.small, cst.Assign):
                continue
            if (
                isinstance(value, cst.BinaryOperation)
                and isinstance(value.operator, cst.Add)
                and isinstance(value.left, cst.Name)
                and value.left.value in global_steps
                and isinstance(value.right, cst.Integer)
                and value.right.value == "1"
            ):
                st.kind = StmtKind.DROP
            elif isinstance(value, cst.Call) and self.canonical(value.func) == "group" and calls_method(value, global_steps, "assign"):
                st.kind = StmtKind.DROP
                found = True
        if found and optimizer_key != ADAM_WEIGHT_DECAY:
            raise Unsupported("the global step is incremented by hand besides the optimizer's own increment")

    def _gradient_code(
        self, stmts: list["Stmt"], plan: "Plan", optimizers: set[str], global_steps: set[str], loss_name: str
    ) -> None:
        """`compute_gradients`/`tf.gradients` + transforms + `apply_gradients`: kept as the model's
        `apply_tf1_gradients(loss, tape)`, called from a runtime train step."""
        apply_index = None
        for index, st in enumerate(stmts):
            value = getattr(st.small, "value", None)
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "apply_gradients"
                and isinstance(value.func.value, cst.Name)
                and value.func.value.value in optimizers
            ):
                if apply_index is not None:
                    raise Unsupported("more than one `apply_gradients`")
                apply_index = index
        if apply_index is None:
            return
        # The gradient section: statements that start from gradient sources, and what builds on them.
        # What the loss is computed from is the loss's, not gradient code, even where it reads the
        # trainable variables (`loss += 1e-3 * tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])`).
        sources = {"gradients", "trainable_variables"}
        grad_names: set[str] = set()
        section: list[Stmt] = []
        used = set().union(*(st.uses for st in stmts))
        of_the_loss = _loss_statements(stmts[:apply_index], loss_name)
        for st in stmts[: apply_index + 1]:
            if st.kind or id(st) in of_the_loss:
                continue
            value = getattr(st.small, "value", None)
            starts = value is not None and (
                calls_any(value, self, sources)
                or calls_method(value, optimizers, "compute_gradients")
            )
            if starts and not st.defs & used:
                st.kind = StmtKind.DROP  # `tvars = tf.trainable_variables()` only logging loops read
                continue
            if starts or st.uses & grad_names or st is stmts[apply_index]:
                st.kind = StmtKind.GRADIENT
                grad_names |= st.defs
                section.append(st)
        rewriter = _GradientRewriter(self, optimizers, global_steps)
        plan.gradient_stmts = [self._rewritten(st, rewriter) for st in section]
        plan.gradient_scale_loss = not rewriter.uses_tf_gradients
        plan.gradient_loss_name = loss_name
        self.gradient_uses = set().union(*(st.uses for st in section)) - grad_names

    def _is_global_step(self, node: cst.BaseExpression, names: set[str]) -> bool:
        if isinstance(node, cst.Name):
            return node.value in names
        if isinstance(node, cst.Call):
            return self.canonical(node.func) in GLOBAL_STEP_FNS
        return False

    def _schedule(self, st: Stmt, key: str, call: cst.Call, global_steps: set[str]) -> cst.SimpleStatementLine:
        positional, step_param, target, renames = SCHEDULES[key]
        bound = bind_args(call, positional)
        if bound is None or step_param not in bound:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        if not self._is_global_step(bound.pop(step_param), global_steps):
            raise Unsupported(f"`tf.{key}` is driven by something other than the global step")
        bound.pop("name", None)
        args = ", ".join(f"{renames.get(k, k)}={self.code(v)}" for k, v in bound.items())
        kind, cls = target.split(":")
        func = f"{self.tf}.keras.optimizers.schedules.{cls}" if kind == "keras" else f"{self.tfm}.{cls}"
        assign = st.small
        assert isinstance(assign, cst.Assign)
        new = assign.with_changes(value=cst.parse_expression(f"{func}({args})"))
        return st.node.with_changes(body=[new])

    def _check_minimize(self, call: cst.Call, loss_name: str, global_steps: set[str]) -> None:
        for index, arg in enumerate(call.args):
            name = arg.keyword.value if arg.keyword else ("loss", "global_step")[index] if index < 2 else "?"
            if name == "loss":
                if not (isinstance(arg.value, cst.Name) and arg.value.value == loss_name):
                    raise Unsupported("`minimize` is called on something other than the spec's loss")
            elif name == "global_step":
                ok = (isinstance(arg.value, cst.Name) and arg.value.value in global_steps) or (
                    isinstance(arg.value, cst.Call) and self.canonical(arg.value.func) in GLOBAL_STEP_FNS
                )
                if not ok:
                    raise Unsupported("`minimize(global_step=...)` is not the global step")
            else:
                raise Unsupported(f"`minimize({name}=...)` is not migrated yet")

    def _keras_optimizer(self, call: cst.Call) -> str:
        key = self.call_key(call)
        assert key is not None
        cls, positional, renames, spelled = OPTIMIZERS[key]
        bound = bind_args(call, positional)
        if bound is None:
            raise Unsupported(f"unexpected arguments to `{key}`")
        lr = bound.get("learning_rate")
        if self.step_fn and isinstance(lr, cst.Name):
            bound["learning_rate"] = lr = cst.parse_expression(f"{self.tfm}.schedules.StepFunction({self.step_fn})")
        scheduled = self.step_fn is not None or (isinstance(lr, cst.Name) and lr.value in self.schedule_names)
        if key == "train.MomentumOptimizer" and lr is not None and not (scheduled or is_constant_like(lr)):
            raise Unsupported("MomentumOptimizer with a tensor learning rate (not a tf.train.*_decay schedule)")
        args = keras_optimizer_args(bound, renames, spelled, self.code)
        for value in bound.values():
            if not is_constant_like(value) and isinstance(value, cst.Call):
                raise Unsupported("an optimizer argument is a tensor expression (only tf.train.*_decay schedules migrate)")
        if cls.startswith("runtime:"):
            return f"{self.tfm}.{cls[len('runtime:'):]}({', '.join(args)})"
        return f"{self.tf}.keras.optimizers.{cls}({', '.join(args)})"

    # -- steps of `analyze()` -----------------------------------------------------------------
    def _check_train_op(self, flow: Flow) -> None:
        """The spec's train_op is `minimize`'s or `apply_gradients`'s; `control_dependencies` only
        on the UPDATE_OPS collection."""
        stmts, train_op = flow.stmts, flow.train_op
        if self.update_ops_dependency_names - flow.update_ops_defined:
            raise Unsupported("`tf.control_dependencies(...)` on something other than the UPDATE_OPS collection")
        if train_op is not None and not any(train_op in st.defs for st in stmts if st.kind in (StmtKind.DROP, StmtKind.GRADIENT)):
            raise Unsupported("train_op is not `optimizer.minimize(loss, ...)` or `optimizer.apply_gradients(...)`")

    def _step_function(self, flow: Flow) -> None:
        """A learning rate computed by hand from the global step (a linear warmup blend over a
        decay): those statements become a function of the step, called by the optimizer."""
        stmts, optimizer_names = flow.stmts, flow.optimizer_names
        step_names = flow.step_names = set(flow.global_step_names)
        for st in stmts:
            if (
                st.kind == StmtKind.UNCLASSIFIED
                and isinstance(st.small, (cst.Assign, cst.AugAssign, cst.AnnAssign))
                and not st.uses & optimizer_names
                and (st.uses & (step_names | self.schedule_names) or calls_any(st.small, self, GLOBAL_STEP_FNS))
            ):
                st.kind = StmtKind.STEP_FN
                step_names |= st.defs
        for st in stmts:
            if st.kind == StmtKind.UNCLASSIFIED and st.uses & (step_names | optimizer_names):
                raise Unsupported("the optimizer or global step is used beyond `minimize`/`apply_gradients`", st.line)


    def _optimizer_plan(self, flow: Flow) -> None:
        """The optimizer -> `plan.optimizer`, with what its arguments need (`optimizer_prelude`),
        or a learning-rate function of the step (`step_fn`); init_from_checkpoint's arguments."""
        plan, stmts, optimizer_stmt = flow.plan, flow.stmts, flow.optimizer_stmt
        forward, label_names, step_names = flow.forward, flow.label_names, flow.step_names
        global_step_names, schedule_nodes, needed_pure = flow.global_step_names, flow.schedule_nodes, flow.needed_pure
        schedules = [st for st in stmts if st.kind in (StmtKind.SCHEDULE, StmtKind.STEP_FN)]
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
        if any(st.kind == StmtKind.STEP_FN for st in in_schedule):
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
                called_with(schedule_nodes[id(st)], param) if st.kind == StmtKind.SCHEDULE else self._rewritten(st, steps)
                for st in stmts
                if id(st) in inside
            ]
            plan.optimizer_prelude = [st.node for st in stmts if id(st) in {id(x) for x in needed_pure(others)} | init_prelude]
            self.step_fn = plan.step_fn
        else:
            plan.optimizer_prelude = [
                schedule_nodes[id(st)] if st.kind == StmtKind.SCHEDULE else st.node
                for st in stmts
                if id(st) in prelude or (st.kind == StmtKind.SCHEDULE and st.defs & wanted)
            ]
        plan.optimizer = self._keras_optimizer(optimizer_stmt.small.value)  # type: ignore[union-attr]
        func = optimizer_stmt.small.value.func  # type: ignore[union-attr]
        if isinstance(func, cst.Name) and func.value in self.user_optimizers:
            plan.absorbed_functions.append(func.value)  # the class goes when nothing else uses it

    def _gradient_plan(self, flow: Flow) -> None:
        """Hand-written gradient code: what it reads of the pure values (`gradient_prelude`)."""
        plan = flow.plan
        if plan.gradient_stmts:
            uses = self.gradient_uses - {flow.loss_name} - flow.optimizer_names - flow.global_step_names
            bad = uses & ((flow.forward - {self.features}) | flow.label_names | {self.features})
            if bad:
                raise Unsupported(f"the gradient code reads tensors of the model ({', '.join(sorted(bad))})")
            gradient_pure = flow.needed_pure(uses)
            plan.gradient_prelude = [st.node for st in gradient_pure]
            plan.gradient_uses_params = self.params in uses | set().union(set(), *(st.uses for st in gradient_pure))
