"""Summaries: the model_fn's `tf.summary.*` calls and a TPU `host_call`'s -> TF2 summary statements
written from the training step.
"""

from __future__ import annotations

from ..cst_on_demand import cst

from ..names import names_in
from .forward import VariableRefs
from .optimizer import GlobalStepRewriter, called_with
from .plan import Plan, Stmt, StmtKind, Unsupported
from .syntax import bind_args, is_docstring
from .tables import SUMMARY_CONTEXTS, SUMMARY_DROP, SUMMARY_FNS, SUMMARY_RESULTS


class Summaries:
    """`ModelFnAnalyzer`'s part: summaries and the TPU host_call."""

    def _summary_line(self, call: cst.Call) -> cst.SimpleStatementLine:
        """A TF1 summary call -> its TF2 `tf.summary` statement."""
        key = self.canonical(call.func)
        func, positional, renames = SUMMARY_FNS[key]  # type: ignore[index]
        bound = bind_args(call, positional)
        if bound is None:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        args = ", ".join(f"{renames.get(k, k)}={self.code(v)}" for k, v in bound.items() if k not in SUMMARY_DROP)
        # The runtime's: TF2's `tf.summary.scalar` & co. need TensorBoard installed, TF1's did not.
        line = cst.parse_statement(f"{self.tfm}.summary.{func}({args})\n")
        return line.visit(VariableRefs(self))  # type: ignore[return-value]

    def _host_call(self, plan: "Plan") -> tuple[list[cst.BaseStatement], set[str]]:
        """`host_call=(fn, tensors)` -> fn's statements with its parameters bound to the tensors,
        the writer/recording `with` blocks dissolved and the summary calls in TF2 form."""
        expr = self.host_call_expr
        if not (isinstance(expr, (cst.Tuple, cst.List)) and len(expr.elements) == 2 and isinstance(expr.elements[0].value, cst.Name)):
            raise Unsupported("`host_call` is not a `(host_call_fn, tensors)` tuple")
        fn_name = expr.elements[0].value.value  # type: ignore[attr-defined]
        fn = self.local_fns.get(fn_name) or next(
            (s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == fn_name), None
        )
        if fn is None:
            raise Unsupported(f"host_call function `{fn_name}` is not defined in this file")
        params = [p.name.value for p in fn.params.params]
        tensors = expr.elements[1].value
        if isinstance(tensors, (cst.List, cst.Tuple)):
            if len(tensors.elements) != len(params):
                raise Unsupported("host_call's parameters and tensors do not line up")
            bound = list(zip(params, (e.value for e in tensors.elements)))
        elif isinstance(tensors, cst.Dict):
            bound = []
            for element in tensors.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                    raise Unsupported("host_call tensors dict with non-literal keys")
                bound.append((str(element.key.evaluated_value), element.value))
        else:
            raise Unsupported("host_call tensors are not a list or dict")
        lines: list[cst.SimpleStatementLine] = []
        uses = set().union(set(), *(names_in(v) for _, v in bound))

        def walk(body: list[cst.BaseStatement]) -> None:
            for stmt in body:
                if isinstance(stmt, cst.With):
                    if not all(self._summary_context(item.item) for item in stmt.items):
                        raise Unsupported("a `with` block in host_call other than summary writer/recording setup")
                    walk(list(stmt.body.body))  # type: ignore[attr-defined]
                    continue
                if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                    raise Unsupported("a host_call statement other than assignments and summary calls")
                small = stmt.body[0]
                if isinstance(small, cst.Return):
                    value = small.value
                    if value is None or (isinstance(value, cst.Call) and self.canonical(value.func) in SUMMARY_RESULTS):
                        continue
                    raise Unsupported("host_call returns something other than the summary ops")
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.canonical(small.value.func) in SUMMARY_FNS:
                    lines.append(self._summary_line(small.value))
                    continue
                if isinstance(small, cst.Assign):
                    lines.append(stmt)
                    continue
                raise Unsupported(f"host_call statement `{self.code(small).strip()}` is not migrated")

        body = list(fn.body.body)  # type: ignore[attr-defined]
        if body and is_docstring(body[0]):
            body = body[1:]
        walk(body)
        if fn_name not in self.local_fns:
            plan.absorbed_functions.append(fn_name)
        # Kept as a function (its parameters must not clobber the step's names), called with the tensors.
        definition = fn.with_changes(body=cst.IndentedBlock(body=lines or [cst.SimpleStatementLine([cst.Pass()])]), leading_lines=[])
        if isinstance(tensors, cst.Dict):
            call = f"{fn_name}(**{{{', '.join(f'{k!r}: {self.code(v)}' for k, v in bound)}}})"
        else:
            call = f"{fn_name}({', '.join(self.code(v) for _, v in bound)})"
        return [definition, cst.parse_statement(call + "\n")], uses  # type: ignore[list-item]

    def _summary_context(self, node: cst.BaseExpression) -> bool:
        """`create_file_writer(...).as_default()`, `always_record_summaries()`, `record_if(...)`."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "as_default":
            node = node.func.value
        return isinstance(node, cst.Call) and self.canonical(node.func) in SUMMARY_CONTEXTS

    def _summaries(
        self,
        plan: "Plan",
        stmts: list["Stmt"],
        forward: set[str],
        label_names: set[str],
        global_steps: set[str],
        schedule_nodes: dict[int, cst.SimpleStatementLine],
    ) -> None:
        """Summary statements -> plan.summaries / plan.host_summaries, each preceded by what its
        values need: statements recomputed from the model output, hyper-parameters, and the
        learning rate or other values of the global step (`self.optimizer.iterations`)."""
        calls = [st for st in stmts if st.kind == StmtKind.SUMMARY]
        host: list[cst.SimpleStatementLine] = []
        host_uses: set[str] = set()
        if self.host_call_expr is not None:
            host, host_uses = self._host_call(plan)
        if not calls and not host:
            return
        available = set(label_names) | {plan.output}
        param = min(global_steps) if global_steps else "global_step"

        def block(lines: list[cst.SimpleStatementLine], uses: set[str]) -> list[cst.SimpleStatementLine]:
            defs = {n: st for st in stmts if st.kind in (StmtKind.PURE, StmtKind.STEP_FN, StmtKind.SCHEDULE) for n in st.defs}
            needed: set[int] = set()
            forward_uses = (uses & forward) - available
            todo = [n for n in uses if n in defs and n not in available]
            while todo:
                st = defs[todo.pop()]
                if id(st) in needed:
                    continue
                needed.add(id(st))
                for name in st.uses:
                    if name in defs and name not in available:
                        todo.append(name)
                    elif name in forward and name not in available:
                        forward_uses.add(name)
            after = {id(node) for node in self._after_output(plan, stmts, forward, forward_uses, "the summaries")}
            steps = GlobalStepRewriter(self, param)
            out: list[cst.SimpleStatementLine] = []
            step_used = bool(uses & global_steps)
            for st in stmts:
                if id(st) in needed:
                    if st.kind == StmtKind.SCHEDULE:
                        out.append(called_with(schedule_nodes[id(st)], param))
                        step_used = True
                    else:
                        out.append(self._rewritten(st, steps))
                        step_used = step_used or st.kind == StmtKind.STEP_FN or bool(st.uses & global_steps)
                elif id(st.node) in after:
                    out.append(st.node)
            if step_used:
                out.insert(0, cst.parse_statement(f"{param} = self.optimizer.iterations\n"))  # type: ignore[arg-type]
            return [line.visit(VariableRefs(self)) for line in out] + lines  # type: ignore[misc]

        # A summary of something the training step cannot recompute (a tf.metrics update op, a
        # gradient) is left out, and said so.
        elsewhere = {
            n for st in stmts if st.kind not in (StmtKind.PURE, StmtKind.STEP_FN, StmtKind.SCHEDULE, StmtKind.FORWARD, StmtKind.DEAD, StmtKind.LOSS) for n in st.defs
        } - global_steps
        kept = []
        for st in calls:
            try:
                if st.uses & elsewhere:
                    raise Unsupported(f"it reads {', '.join(sorted(st.uses & elsewhere))}")
                block([], st.uses)
                kept.append(st)
            except Unsupported as why:
                key = self.canonical(st.small.value.func)  # type: ignore[union-attr]
                plan.notes.append(
                    f"`tf.{key}(...)` in `{plan.fn_name}` was not migrated ({why}): write it with "
                    f"`{self.tfm}.summary` in the training step"
                )
        calls = kept
        if calls:
            uses = set().union(*(st.uses for st in calls))
            plan.summaries = block([self._summary_line(st.small.value) for st in calls], uses)  # type: ignore[union-attr]
        if host:
            plan.host_summaries = block(host, host_uses)
