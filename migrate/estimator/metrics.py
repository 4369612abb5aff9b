"""Eval metrics: `eval_metrics=(metric_fn, tensors)` (TPUEstimator) and `eval_metric_ops={...}`
(Estimator) -> runtime metric objects updated in `compute_metrics`.
"""

from __future__ import annotations

import re

from ..cst_on_demand import cst

from ..names import names_in
from .dataflow import Flow
from .plan import Plan, Stmt, StmtKind, Unsupported
from .syntax import bind_args, defs_of, is_docstring
from .tables import METRICS, METRIC_DROP


def metric_attr(key: str, taken: dict[str, int]) -> str:
    base = re.sub(r"\W+", "_", key).strip("_") or "metric"
    if base[0].isdigit():
        base = "m_" + base
    base = f"{base}_metric"
    count = taken.get(base, 0)
    taken[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


class EvalMetrics:
    """`ModelFnAnalyzer`'s part: eval metrics."""

    def _is_metric_value(self, element: cst.BaseDictElement, metric_ops: set[str]) -> bool:
        """A `{name: metric}` entry: a `tf.metrics.*` op assigned before, or such a call inline."""
        if not isinstance(element, cst.DictElement):
            return False
        value = element.value
        if isinstance(value, cst.Name):
            return value.value in metric_ops
        return isinstance(value, cst.Call) and self.canonical(value.func) in METRICS

    def _metric_ops(self, plan: "Plan", stmts: list["Stmt"], forward: set[str]) -> None:
        """`eval_metric_ops={name: tf.metrics.*(...)}` -> runtime metrics updated in `compute_metrics`."""
        expr = self.eval_metric_ops_expr
        if isinstance(expr, cst.Name):
            owner = next((st for st in stmts if st.defs == {expr.value} and isinstance(getattr(st.small, "value", None), cst.Dict)), None)
            if owner is None:
                raise Unsupported("`eval_metric_ops` is not a dict literal in model_fn")
            owner.kind = StmtKind.DROP
            expr = owner.small.value  # type: ignore[union-attr]
        if not isinstance(expr, cst.Dict):
            raise Unsupported("`eval_metric_ops` is not a dict literal")
        ops = {name: st for st in stmts if st.kind == StmtKind.METRIC_OP for name in st.defs}
        updates, uses = [], set()
        for element in expr.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                raise Unsupported("`eval_metric_ops` has non-literal keys")
            call = element.value
            if isinstance(call, cst.Name) and call.value in ops:
                call = ops[call.value].small.value  # type: ignore[union-attr]
            metric = self.canonical(call.func) if isinstance(call, cst.Call) else None
            if metric not in METRICS:
                raise Unsupported(f"eval metric `{element.key.evaluated_value}` is not a supported tf.metrics.* call")
            cls, positional, ctor_params = METRICS[metric]
            args = bind_args(call, positional)  # type: ignore[arg-type]
            if args is None:
                raise Unsupported(f"unexpected arguments to `tf.{metric}`")
            attr = metric_attr(str(element.key.evaluated_value), self.layer_attrs)
            ctor = [f"name={element.key.value}"] + [f"{k}={self.code(v)}" for k, v in args.items() if k in ctor_params]
            update_args = {k: v for k, v in args.items() if k not in ctor_params and k not in METRIC_DROP}
            for value in update_args.values():
                uses |= names_in(value)
            plan.metrics.append((attr, f"{self.tfm}.metrics.{cls}", ctor))
            updates.append(f"self.{attr}.update_state({', '.join(f'{k}={self.code(v)}' for k, v in update_args.items())})")
        labels = {self.labels} if self.labels else set()
        plan.metric_sources = [(self.labels or "labels", "y"), (plan.output, "y_pred")]
        plan.metric_prelude = self._after_output(plan, stmts, forward, uses - labels, "the eval metrics")
        plan.metric_updates = updates

    def _metrics(self, plan: "Plan", stmts: list["Stmt"], forward: set[str]) -> None:
        """`eval_metrics=(metric_fn, tensors)` -> runtime metric objects updated in `compute_metrics`."""
        fn, sources = self._metric_fn_inputs(plan, stmts, forward)
        self._metric_fn_outputs(plan, fn, sources)

    def _metric_fn_inputs(self, plan: "Plan", stmts: list["Stmt"], forward: set[str]) -> tuple[cst.FunctionDef, list[tuple[str, str]]]:
        """metric_fn, and where each of its parameters comes from: `y`, `y_pred`, or a model_fn
        tensor recomputed beside the metrics (`plan.metric_model_prelude`)."""
        expr = self.eval_metrics_expr
        if not (isinstance(expr, cst.Tuple) and len(expr.elements) == 2 and isinstance(expr.elements[0].value, cst.Name)):
            raise Unsupported("`eval_metrics` is not a `(metric_fn, tensors)` tuple")
        fn_name = expr.elements[0].value.value  # type: ignore[attr-defined]
        fn = self.local_fns.get(fn_name)
        if fn is None:
            fn = next((s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == fn_name), None)
            if fn is None:
                raise Unsupported(f"metric_fn `{fn_name}` is not defined in this file")
            plan.absorbed_functions.append(fn_name)
        params = [p.name.value for p in fn.params.params]
        tensors = expr.elements[1].value
        bound: dict[str, cst.BaseExpression] = {}
        if isinstance(tensors, (cst.List, cst.Tuple)):
            if len(tensors.elements) != len(params):
                raise Unsupported("metric_fn's parameters and the eval_metrics tensors do not line up")
            bound = {p: e.value for p, e in zip(params, tensors.elements)}
        elif isinstance(tensors, cst.Dict):
            for element in tensors.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                    raise Unsupported("eval_metrics tensors dict with non-literal keys")
                bound[element.key.evaluated_value] = element.value  # type: ignore[index]
        else:
            raise Unsupported("eval_metrics tensors are not a list or dict")
        sources = []
        model_names: set[str] = set()
        for param, value in bound.items():
            if isinstance(value, cst.Name) and value.value == self.labels and not plan.labels_from_features:
                sources.append((param, "y"))
            elif isinstance(value, cst.Name) and value.value == plan.output:
                sources.append((param, "y_pred"))
            elif isinstance(value, cst.Name):
                # BERT's `[per_example_loss, label_ids, logits, is_real_example]`: recomputed
                # from the labels and the output beside the metrics.
                sources.append((param, value.value))
                model_names.add(value.value)
            else:
                raise Unsupported(f"metric_fn receives `{self.code(value)}`; only names of the model_fn's tensors migrate")
        if model_names:
            plan.metric_model_prelude = self._model_side(
                plan, stmts, forward, model_names, "the eval metrics", kinds=(StmtKind.LABEL_SOURCE, StmtKind.LOSS, StmtKind.PURE)
            )
            defined = {self.labels, plan.output} | {n for line in plan.metric_model_prelude for n in defs_of(line)}
            missing = model_names - defined
            if missing:
                raise Unsupported(f"metric_fn receives {', '.join(sorted(missing))}, which the eval step cannot compute")
        return fn, sources

    def _metric_fn_outputs(self, plan: "Plan", fn: cst.FunctionDef, sources: list[tuple[str, str]]) -> None:
        """metric_fn's returned `{name: tf.metrics.*(...)}` -> `plan.metrics` and their update
        calls; its other statements -> `plan.metric_prelude`."""
        body = list(fn.body.body)  # type: ignore[attr-defined]
        if body and is_docstring(body[0]):
            body = body[1:]
        if not body or not isinstance(body[-1], cst.SimpleStatementLine) or not isinstance(body[-1].body[0], cst.Return):
            raise Unsupported("metric_fn does not end with `return {name: tf.metrics.*(...)}`")
        returned = body[-1].body[0].value  # type: ignore[attr-defined]
        if not isinstance(returned, cst.Dict):
            raise Unsupported("metric_fn does not return a dict literal")
        prelude = []
        for stmt in body[:-1]:
            if not isinstance(stmt, cst.SimpleStatementLine) or not all(isinstance(x, (cst.Assign, cst.AnnAssign)) for x in stmt.body):
                raise Unsupported("metric_fn has statements other than assignments before its return")
            prelude.append(stmt)
        # BERT names its metrics first: `accuracy = tf.metrics.accuracy(...)` ... `{'eval_accuracy': accuracy}`.
        metric_assigns: dict[str, tuple[cst.SimpleStatementLine, cst.Call]] = {}
        for stmt in prelude:
            small = stmt.body[0]
            if (
                len(stmt.body) == 1
                and isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Call)
                and self.canonical(small.value.func) in METRICS
            ):
                metric_assigns[small.targets[0].target.value] = (stmt, small.value)
        used_assigns: set[int] = set()
        updates = []
        for element in returned.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                raise Unsupported("metric_fn's dict has non-literal keys")
            key = element.key.evaluated_value
            call = element.value
            if isinstance(call, cst.Name) and call.value in metric_assigns:
                stmt, call = metric_assigns[call.value]
                used_assigns.add(id(stmt))
            metric = self.canonical(call.func) if isinstance(call, cst.Call) else None
            if metric not in METRICS:
                raise Unsupported(f"metric `{key}` is not a supported tf.metrics.* call")
            cls, positional, ctor_params = METRICS[metric]
            args = bind_args(call, positional)  # type: ignore[arg-type]
            if args is None:
                raise Unsupported(f"unexpected arguments to `tf.{metric}`")
            attr = metric_attr(str(key), self.layer_attrs)
            ctor = [f"name={element.key.value}"] + [
                f"{k}={self.code(v)}" for k, v in args.items() if k in ctor_params
            ]
            update = ", ".join(f"{k}={self.code(v)}" for k, v in args.items() if k not in ctor_params and k not in METRIC_DROP)
            plan.metrics.append((attr, f"{self.tfm}.metrics.{cls}", ctor))
            updates.append(f"self.{attr}.update_state({update})")
        plan.metric_sources = sources
        prelude = [stmt for stmt in prelude if id(stmt) not in used_assigns]
        if any(names_in(stmt) & set(metric_assigns) for stmt in prelude):
            raise Unsupported("metric_fn uses a metric's (value, update_op) pair beyond returning it")
        plan.metric_prelude = prelude
        plan.metric_updates = updates

    # -- a step of `analyze()` ----------------------------------------------------------------
    def _metric_dicts(self, flow: Flow) -> None:
        """`{'accuracy': acc, ...}` of metric ops -> `StmtKind.METRIC_DICT`."""
        stmts = flow.stmts
        metric_ops = {name for st in stmts if st.kind == StmtKind.METRIC_OP for name in st.defs}
        for st in stmts:
            value = getattr(st.small, "value", None)
            if not st.kind and isinstance(value, cst.Dict) and value.elements and all(
                self._is_metric_value(element, metric_ops) for element in value.elements
            ):
                st.kind = StmtKind.METRIC_DICT
