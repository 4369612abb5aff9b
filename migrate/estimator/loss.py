"""The loss: a plain Keras loss object when the TF1 loss has one, else `Model.compute_loss` with
the TF1 statements (`LossRewriter`), the TF1 LOSSES collection, labels read from the features.
"""

from __future__ import annotations

from ..cst_on_demand import cst

from .dataflow import Flow
from .forward import VariableRefs
from .plan import Stmt, StmtKind, Unsupported
from .syntax import CollectionReads, bind_args, calls_any, creates_layer, functional_layer
from .tables import CONTRIB_LAYERS, LOSSES, LOSS_COLLECTION_READERS, LOSS_PARAMS, REGULARIZATION_LOSS_FNS, TF1_LOSS_FNS


# Keras losses over a class axis: the output keeps it, so their per-example losses keep the batch.
CLASS_AXIS_LOSSES = frozenset({"SparseCategoricalCrossentropy", "CategoricalCrossentropy"})


class LossRewriter(VariableRefs):
    """TF1 `tf.losses.*` calls in a loss that has no plain Keras form -> the runtime's TF1-faithful ones."""

    collection: list[str] = []  # the LOSSES collection as the statement being rewritten sees it

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key in LOSS_COLLECTION_READERS:
            bound = bind_args(updated, ("add_regularization_losses", "name", "scope") if key == "losses.get_total_loss" else ("scope", "loss_collection"))
            if bound is None or "scope" in bound or "loss_collection" in bound:
                raise Unsupported(f"`tf.{key}` with a scope or collection is not migrated yet")
            names = ", ".join(self.collection)
            if key == "losses.get_losses":
                return cst.parse_expression(f"[{names}]")
            regularization = bound.get("add_regularization_losses")
            model = "" if isinstance(regularization, cst.Name) and regularization.value == "False" else ", self"
            if regularization is not None and not (isinstance(regularization, cst.Name) and regularization.value in ("True", "False")):
                raise Unsupported("`get_total_loss(add_regularization_losses=...)` is not a literal")
            return cst.parse_expression(f"{self.a.tfm}.losses.total_loss([{names}]{model})")
        if key == "losses.get_regularization_losses":
            if updated.args:
                raise Unsupported(f"`tf.{key}` with a scope is not migrated yet")
            return cst.parse_expression(f"{self.a.tfm}.losses.regularization_losses(self)")
        if key in REGULARIZATION_LOSS_FNS:
            if updated.args:
                raise Unsupported(f"`tf.{key}` with a scope is not migrated yet")
            return cst.parse_expression(f"{self.a.tfm}.losses.regularization_loss(self)")
        if key is not None and key.startswith("losses."):
            if key not in TF1_LOSS_FNS:
                raise Unsupported(f"`tf.{key}` is not migrated yet")
            return updated.with_changes(func=cst.parse_expression(f"{self.a.tfm}.{key}"))
        return super().leave_Call(original, updated)


class Loss:
    """`ModelFnAnalyzer`'s part: the loss."""

    def _loss_collection(self, stmts: list["Stmt"]) -> None:
        """TF1 loss functions added their result to the LOSSES collection, which
        `tf.losses.get_total_loss()`/`get_losses()` read back: record, in order, the names holding
        those results (a bare `tf.losses.x(...)` statement gets a name), per reading statement."""
        collection: list[str] = []
        for st in stmts:
            if st.kind:
                continue
            value = getattr(st.small, "value", None)
            key = self.canonical(value.func) if isinstance(value, cst.Call) else None
            collected = key in TF1_LOSS_FNS and not any(
                a.keyword is not None and a.keyword.value == "loss_collection" for a in value.args  # type: ignore[union-attr]
            )
            if isinstance(st.small, cst.Expr) and key == "losses.add_loss":
                if len(value.args) < 1 or not isinstance(value.args[0].value, cst.Name):  # type: ignore[union-attr]
                    raise Unsupported("`tf.losses.add_loss` of an expression (assign it to a name first)")
                collection.append(value.args[0].value.value)  # type: ignore[union-attr]
                st.kind = StmtKind.DROP
                continue
            if isinstance(st.small, cst.Expr) and collected:
                name = self.unique_attr(key.rsplit(".", 1)[-1] + "_loss")  # type: ignore[union-attr]
                st.small = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)  # type: ignore[arg-type]
                st.node = st.node.with_changes(body=[st.small])
                st.defs = {name}
            if collected and isinstance(st.small, cst.Assign) and len(st.defs) == 1:
                collection.extend(st.defs)
            if calls_any(st.small, self, LOSS_COLLECTION_READERS):
                st.uses |= set(collection)
                self.loss_collection_at[id(st.node)] = list(collection)

    def _labels_from_features(self, stmts: list["Stmt"]) -> list["Stmt"]:
        """When model_fn never reads `labels`: the statements that read labels out of the features
        (`label_ids = features['label_ids']`, `is_real_example = tf.cast(features[...], ...)`):
        computed from the features alone, and feeding no layer or variable of the network."""
        defs_at: dict[str, list[Stmt]] = {}
        for st in stmts:
            for name in st.defs:
                defs_at.setdefault(name, []).append(st)
        network = {id(st) for st in stmts if creates_layer(st.small, self) or st.kind == StmtKind.VARIABLE or st.uses & set(self.variables)}
        candidates: list[Stmt] = []
        from_features: set[str] = {self.features}
        for st in stmts:
            if st.kind or not isinstance(st.small, cst.Assign) or id(st) in network:
                continue
            reads = st.uses & from_features
            others = {n for n in st.uses - from_features if n in defs_at and any(x.kind == StmtKind.UNCLASSIFIED for x in defs_at[n])}
            if reads and not others and self.mode not in st.uses:
                candidates.append(st)
                from_features |= st.defs
        # Keep those whose values never reach a layer or a variable of the network.
        consumers: dict[str, list[Stmt]] = {}
        for st in stmts:
            for name in st.uses:
                consumers.setdefault(name, []).append(st)

        def reaches_network(st: Stmt, seen: set[int]) -> bool:
            for name in st.defs:
                for user in consumers.get(name, []):
                    if id(user) in seen:
                        continue
                    seen.add(id(user))
                    if id(user) in network or reaches_network(user, seen):
                        return True
            return False

        return [st for st in candidates if not reaches_network(st, set())]

    def _output_is_a_layer_result(self, stmts: list[Stmt], output: str) -> bool:
        """The model output is last bound to a layer's result (`logits = tf.layers.dense(net, 1)`),
        which keeps the batch axis apart from the last. A Keras loss object reduces the last axis:
        on an output squeezed to one axis (`tf.squeeze(logits, -1)`, `tf.reshape(logits, [-1])`)
        that is the batch, its per-example losses are already a scalar, and Keras then skips its
        division by the replicas (the loss came out x2 under two replicas). Anything else keeps
        the TF1 loss in `compute_loss`."""
        last = next((st for st in reversed(stmts) if output in st.defs and st.kind == StmtKind.FORWARD), None)
        value = getattr(last.small, "value", None) if last is not None else None
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Name) and func.value in self.layer_objects:
            return True
        if isinstance(func, cst.Call):  # `tf.keras.layers.Dense(2)(net)`
            func = func.func
        key = self.canonical(func) or ""
        return key.startswith(("layers.", "keras.layers.")) or key in CONTRIB_LAYERS or functional_layer(key, self)

    def _keras_loss(self, loss_stmts: list[Stmt], output: str, loss_name: str, stmts: list[Stmt]) -> str | None:
        if len(loss_stmts) != 1 or loss_stmts[0].defs != {loss_name}:
            return None
        value = getattr(loss_stmts[0].small, "value", None)
        if not isinstance(value, cst.Call):
            return None
        key = self.canonical(value.func)
        if key not in LOSSES:
            return None
        cls, labels_param, preds_param, passthrough, fixed = LOSSES[key]
        if cls not in CLASS_AXIS_LOSSES and not self._output_is_a_layer_result(stmts, output):
            return None
        bound = bind_args(value, LOSS_PARAMS[key])
        if bound is None:
            return None
        labels = bound.pop(labels_param, None)
        preds = bound.pop(preds_param, None)
        if not (isinstance(labels, cst.Name) and labels.value == self.labels):
            return None
        if not (isinstance(preds, cst.Name) and preds.value == output):
            return None
        args = [fixed] if fixed else []
        for tf1_name, expr in bound.items():
            if tf1_name in passthrough:
                args.append(f"{passthrough[tf1_name]}={self.code(expr)}")
            else:
                return None  # weights/reduction/scope: the TF1-faithful compute_loss path handles them
        return f"{self.tf}.keras.losses.{cls}({', '.join(args)})"

    # -- a step of `analyze()` ----------------------------------------------------------------
    def _loss_plan(self, flow: Flow) -> None:
        """The loss -> a Keras loss object (`plan.keras_loss`) when it has a plain one and needs
        nothing else, else `compute_loss`'s statements (`plan.loss_stmts`)."""
        plan, stmts, forward, loss_stmts, loss_name = flow.plan, flow.stmts, flow.forward, flow.loss_stmts, flow.loss_name
        loss_uses = set().union(*(s.uses for s in loss_stmts))
        model_side: list[cst.SimpleStatementLine] = []
        if plan.labels_from_features or loss_uses & forward - {plan.output, self.features}:
            model_side = self._model_side(plan, stmts, forward, loss_uses, "the loss", kinds=(StmtKind.LABEL_SOURCE, StmtKind.PURE))
        keras_loss = None if (plan.summaries or plan.host_summaries) else self._keras_loss(loss_stmts, plan.output, loss_name, stmts)
        loss_pure = flow.needed_pure(loss_uses)
        if keras_loss is not None and not loss_pure and not model_side:
            plan.keras_loss = keras_loss
        else:
            loss_rewriter = LossRewriter(self)
            lines_out = [st.node.visit(CollectionReads(self)) for st in loss_pure] if not model_side else model_side
            for st in loss_stmts:
                loss_rewriter.collection = self.loss_collection_at.get(id(st.node), [])
                lines_out.append(self._rewritten(st, loss_rewriter))
            plan.loss_stmts = lines_out
            plan.keras_loss = None
            plan.loss_uses_params = self.params in set().union(*(s.uses for s in loss_stmts + loss_pure))
