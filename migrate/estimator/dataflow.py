"""Data-flow queries over the model_fn's statements: which model output the loss reads, and
which statements recompute a value after the model call (for the loss, the metrics, PREDICT).
"""

from __future__ import annotations

import libcst as cst

from ..inline import RenameNames
from ..names import names_in
from .plan import Plan, Stmt, Unsupported
from .syntax import creates_layer


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
            defining = [st for st in stmts if output in st.defs and st.kind in ("", "forward")]
            if len(defining) != 1:
                break
            st = defining[0]
            inputs = st.uses & (forward - {self.features})
            if creates_layer(st.small, self) or st.uses & set(self.variables) or len(inputs) != 1 or output in st.uses:
                break
            output = next(iter(inputs))
        return output

    def _model_side(
        self, plan: "Plan", stmts: list["Stmt"], forward: set[str], uses: set[str], what: str, kinds: tuple[str, ...]
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
        return [self._rewritten(st, rename) if st.kind == "labelsrc" else st.node for st in chosen]

    def _after_output_defs(self, plan: "Plan", stmts: list["Stmt"], forward: set[str]) -> dict[str, "Stmt"]:
        """Forward names computed from the model output alone (`predicted = tf.argmax(logits, 1)`),
        each with the statement that (last) defines it."""
        after: dict[str, Stmt] = {}
        allowed = {plan.output, self.features}
        for st in stmts:
            if st.kind in ("forward", "dead") and st.uses & forward and st.uses & forward <= allowed | set(after):
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
        pure = [st for st in stmts if st.kind == "pure" and st.defs & (uses | set().union(set(), *(x.uses for x in needed)))]
        return [st.node for st in stmts if st in pure or st in needed]
