"""The EstimatorSpec the model_fn returns: its keys (`_spec`), a chain of mode branches that each
assign the spec (`_spec_chain`), and the PREDICT branch -> `predict_step` (`_predictions`).
"""

from __future__ import annotations

from ..cst_on_demand import cst

from ..names import names_in
from .dataflow import Flow
from .plan import Plan, Stmt, StmtKind, Unsupported, declining_at
from .syntax import assigned_names
from .tables import SPEC_KEYS_SUPPORTED


class SpecAndPredictions:
    """`ModelFnAnalyzer`'s part: the EstimatorSpec and its mode branches."""

    def _spec_chain(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """BERT's ending: `output_spec = None`, then `if mode == TRAIN: ... output_spec = Spec(...)`
        / `elif mode == EVAL: ...` / `else: ...`, then `return output_spec` -> the early-return
        form the flattening reads (EVAL and PREDICT branches returning their spec, the TRAIN
        branch's statements last, ending with its `return`)."""
        if len(body) < 2:
            return body
        ret = body[-1]
        chain = body[-2]
        if not (
            isinstance(ret, cst.SimpleStatementLine)
            and isinstance(ret.body[0], cst.Return)
            and isinstance(ret.body[0].value, cst.Name)
            and isinstance(chain, cst.If)
        ):
            return body
        var = ret.body[0].value.value
        branches: list[tuple[str | None, cst.BaseExpression | None, list[cst.BaseStatement], cst.CSTNode]] = []
        node: cst.If | cst.Else | None = chain
        template: cst.BaseExpression | None = None
        while node is not None:
            if isinstance(node, cst.Else):
                branches.append((None, None, list(node.body.body), chain))  # type: ignore[attr-defined]
                break
            mode = self.is_mode_compare(node.test)
            if mode is None or not mode[0]:
                return body
            template = node.test
            branches.append((mode[1], node.test, list(node.body.body), node))  # type: ignore[attr-defined]
            node = node.orelse  # type: ignore[assignment]
        keys = [key for key, _, _, _ in branches if key is not None]
        rest = [k for k in ("estimator.ModeKeys.TRAIN", "estimator.ModeKeys.EVAL", "estimator.ModeKeys.PREDICT") if k not in keys]
        if branches[-1][0] is None:
            if len(rest) != 1:
                return body
            comparator = template.comparisons[0].comparator  # type: ignore[union-attr]
            if not isinstance(comparator, cst.Attribute):
                return body
            test = template.with_changes(  # type: ignore[union-attr]
                comparisons=[template.comparisons[0].with_changes(comparator=comparator.with_changes(attr=cst.Name(rest[0].rsplit(".", 1)[1])))]  # type: ignore[union-attr]
            )
            branches[-1] = (rest[0], test, branches[-1][2], chain)
        early: list[cst.BaseStatement] = []
        train: list[cst.BaseStatement] = []
        for key, test, inner, branch in branches:
            last = inner[-1] if inner else None
            small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
            if not (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == var
            ):
                return body
            returned = last.with_changes(body=[cst.Return(value=small.value)])  # type: ignore[union-attr]
            self._came_from(returned, last)  # type: ignore[arg-type]
            if key == "estimator.ModeKeys.TRAIN":
                train = inner[:-1] + [returned]
            else:
                early.append(cst.If(test=test, body=cst.IndentedBlock(body=inner[:-1] + [returned])))  # type: ignore[arg-type]
                self._came_from(early[-1], branch)
        if not train:
            return body
        before = [
            stmt
            for stmt in body[:-2]
            if not (  # `output_spec = None`
                isinstance(stmt, cst.SimpleStatementLine)
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign)
                and isinstance(stmt.body[0].value, cst.Name)
                and stmt.body[0].value.value == "None"
                and any(isinstance(t.target, cst.Name) and t.target.value == var for t in stmt.body[0].targets)
            )
        ]
        return before + early + train

    def _tpu_spec_switch(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """A model_fn ending in a switch on a Python value between the two kinds of spec, `if
        params['use_tpu']: return TPUEstimatorSpec(...)` / `else: return EstimatorSpec(...)` (or
        the second `return` after the `if`): the TPUEstimatorSpec branch, whose `eval_metrics`
        the migration reads; the strategy, not the model_fn, says where the program runs."""
        if len(body) >= 2 and isinstance(body[-2], cst.If) and body[-2].orelse is None and self._returned_spec(body[-1]):
            switch, other, before = body[-2], [body[-1]], body[:-2]
        elif body and isinstance(body[-1], cst.If) and isinstance(body[-1].orelse, cst.Else):
            switch, other, before = body[-1], list(body[-1].orelse.body.body), body[:-1]  # type: ignore[attr-defined]
        else:
            return body
        if self.is_mode_compare(switch.test) is not None or names_in(switch.test) & {self.features, self.labels, self.mode} - {None}:
            return body  # not a Python switch
        taken = list(switch.body.body)  # type: ignore[attr-defined]
        kinds = [self._returned_spec(branch[-1]) if branch else None for branch in (taken, other)]
        if sorted(map(str, kinds)) != ["estimator.EstimatorSpec", "estimator.tpu.TPUEstimatorSpec"]:
            return body
        chosen = taken if kinds[0] == "estimator.tpu.TPUEstimatorSpec" else other
        for line in chosen:
            self._came_from(line, switch)
        return before + chosen

    def _returned_spec(self, stmt: cst.BaseStatement) -> str | None:
        """`return <EstimatorSpec or TPUEstimatorSpec call>`: which of the two, else None."""
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return)):
            return None
        call = stmt.body[0].value
        kind = self.canonical(call.func) if isinstance(call, cst.Call) else None
        return kind if kind in ("estimator.tpu.TPUEstimatorSpec", "estimator.EstimatorSpec") else None

    def _predictions(self, plan: "Plan", stmts: list["Stmt"], forward: set[str]) -> None:
        """The PREDICT branch -> `predict_step`, returning the `predictions` TF1 returned."""
        assert self.predict_return is not None
        call = self.predict_return.value
        if not isinstance(call, cst.Call) or self.canonical(call.func) not in ("estimator.tpu.TPUEstimatorSpec", "estimator.EstimatorSpec"):
            raise Unsupported("the PREDICT branch does not return an EstimatorSpec")
        predictions = None
        export_outputs = None
        for index, arg in enumerate(call.args):
            name = arg.keyword.value if arg.keyword else ("mode", "predictions")[index] if index < 2 else "?"
            if name == "predictions":
                predictions = arg.value
            elif name == "export_outputs" and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                export_outputs = arg.value
            elif name == "prediction_hooks":
                continue  # the model's prediction_hooks() (see analyze)
            elif name == "scaffold_fn" and isinstance(arg.value, cst.Name) and arg.value.value in {self.scaffold_fn} | self.scaffold_vars:
                continue  # the model is built with the checkpoint already applied, for predict too
            elif name == "scaffold" and self._plain_scaffold(arg.value):
                continue
            elif name != "mode" and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                raise Unsupported(f"the PREDICT spec's `{name}=` is not migrated yet")
        if predictions is None:
            raise Unsupported("the PREDICT spec has no `predictions=`")
        branch_defs: set[str] = set()
        for line in self.predict_stmts:
            branch_defs |= assigned_names(line.body[0]) if isinstance(line.body[0], (cst.Assign, cst.AnnAssign)) else set()
        uses = names_in(predictions).union(*(names_in(line) for line in self.predict_stmts))
        if export_outputs is not None:
            uses |= names_in(export_outputs)
        if self.labels and self.labels in uses:
            raise Unsupported("the predictions read labels")
        plan.predict_prelude = self._after_output(plan, stmts, forward, uses - branch_defs, "the predictions")
        plan.predict_stmts = list(self.predict_stmts)
        if export_outputs is not None:
            from ..estimator_surface import export_statements

            rewritten, export_only, plan.export_outputs = export_statements(
                self, self.predict_stmts, export_outputs, predictions
            )
            plan.export_stmts = rewritten
            plan.predict_stmts = [line for i, line in enumerate(rewritten) if i not in export_only]
        plan.predictions = self.code(predictions)
        plan.predict_uses_params = self.params in uses

    def _spec(self, ret: cst.Return) -> dict[str, str]:
        value = ret.value
        if not isinstance(value, cst.Call):
            raise Unsupported("model_fn does not return an EstimatorSpec call")
        key = self.canonical(value.func)
        if key not in ("estimator.tpu.TPUEstimatorSpec", "estimator.EstimatorSpec"):
            raise Unsupported("model_fn does not return an EstimatorSpec call")
        spec: dict[str, str] = {}
        for index, arg in enumerate(value.args):
            name = arg.keyword.value if arg.keyword else ("mode", "predictions", "loss", "train_op")[index] if index < 4 else None
            if name is None:
                raise Unsupported("too many positional EstimatorSpec arguments")
            if name not in SPEC_KEYS_SUPPORTED:
                if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                    continue
                raise Unsupported(f"EstimatorSpec `{name}=` (not migrated yet)")
            if name == "mode":
                continue
            if name == "host_call":
                if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                    continue
                self.host_call_expr = arg.value
                continue
            if name == "scaffold":
                if not self._plain_scaffold(arg.value):
                    raise Unsupported("EstimatorSpec `scaffold=` is not a `tf.train.Scaffold(...)` call")
                continue  # what it configures, TF2 does itself (see _plain_scaffold)
            if name == "scaffold_fn":
                if isinstance(arg.value, cst.Name) and arg.value.value in self.scaffold_vars:
                    continue  # BERT's `scaffold_fn` variable: its init_from_checkpoint is recorded
                if not isinstance(arg.value, cst.Name):
                    raise Unsupported("`scaffold_fn=` is not the name of a function")
                self.scaffold_fn = arg.value.value
                continue
            if name == "eval_metric_ops":
                if self.eval_metric_ops_expr is not None:
                    raise Unsupported("`eval_metric_ops` given twice")
                self.eval_metric_ops_expr = arg.value
                continue
            if name == "eval_metrics":
                if self.eval_metrics_expr is not None:
                    raise Unsupported("`eval_metrics` given twice")
                self.eval_metrics_expr = arg.value
                continue
            if name.endswith("_hooks"):
                if not any(arg.value.deep_equals(e) for e in self.hook_exprs.get(name, [])):
                    self.hook_exprs.setdefault(name, []).append(arg.value)
                continue
            if not isinstance(arg.value, cst.Name):
                raise Unsupported(f"EstimatorSpec `{name}=` is not a plain name")
            spec[name] = arg.value.value
        if "loss" not in spec:
            raise Unsupported("EstimatorSpec has no `loss=`")
        return spec

    # -- a step of `analyze()` ----------------------------------------------------------------
    def _read_spec(self, flow: Flow, ret: cst.SimpleStatementLine) -> None:
        """The spec's keys (the EVAL branch's loss must be the same): the loss and train_op
        names -> `flow`; a named `eval_metrics` tuple, a `scaffold_fn`, the spec's hooks."""
        plan, stmts = flow.plan, flow.stmts
        with declining_at(ret):
            spec = self._spec(ret.body[0])  # type: ignore[arg-type]
        if self.eval_return is not None:
            eval_spec = self._spec(self.eval_return)
            if eval_spec.get("loss") != spec["loss"]:
                raise Unsupported("the EVAL branch reports a different loss")
        metric_names: set[str] = set()
        if isinstance(self.eval_metrics_expr, cst.Name):
            metric_names.add(self.eval_metrics_expr.value)
            for st in stmts:
                if st.defs & metric_names:
                    st.kind = StmtKind.DROP
                    if not isinstance(st.small, cst.Assign):
                        raise Unsupported("`eval_metrics` is not assigned a `(metric_fn, tensors)` tuple", st.line)
                    self.eval_metrics_expr = st.small.value
        if self.scaffold_fn is not None:
            self._scaffold_fn(self.scaffold_fn, plan)
        loss_name = flow.loss_name = spec["loss"]
        flow.train_op = spec.get("train_op")
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
