"""Renders a `estimator.plan.Plan` as a custom training loop (`--target ctl`): source text, never TF imports.

The model_fn becomes two classes, written as the TF2 distribution guides write a custom loop:

  * the Keras model of its forward pass (the same layers and initializers as the Keras target's,
    so the same numbers), with only `__init__` and `call`;
  * a loop class holding the model, optimizer, metrics and `tf.train.Checkpoint` (created in
    `strategy.scope()`), the per-replica `train_step` (`tf.GradientTape`,
    `tf.nn.compute_average_loss`), `train_steps` (a `tf.function` running `steps` of them through
    `strategy.run`: TPUEstimator's `iterations_per_loop`), `test_step`/`test_steps` (metrics
    updated inside `strategy.run`) and `predict_step`; a spec's `export_outputs=` and
    `training_hooks`/`evaluation_hooks`/`prediction_hooks` become methods of the loop (the same
    text as the Keras target's methods), which `export_saved_model` and the hooks machinery call.

By default the loop class derives from `tfmigrate.runtime.ctl.EstimatorLoop`, which keeps TF1
Estimator's `train(steps|max_steps)`/`evaluate`/`predict` contract (global step, checkpoints in
`model_dir`, TF1 checkpoints, chief-only writes). With `standalone` the class carries that host side
itself (`ctl_standalone`), so the program needs no runtime where it needs only stock TF pieces.
"""

from __future__ import annotations

import re

from .cst_on_demand import Transformer, cst

from .keras_codegen import (
    Slots,
    export_outputs_lines,
    hook_method_lines,
    init_checkpoint_lines,
    model_class_lines,
    step_fn_lines,
    summary_lines,
    wrap_call,
)
from .estimator.plan import MODEL_PLACEHOLDER, Plan
from .names import names_in

# Attributes that lived on the Keras model in the Keras target and live on `self.model` here.
_MODEL_ATTRS = frozenset({"trainable_variables", "trainable_weights", "variables", "weights", "losses", "layers"})


def loop_class_name(plan: Plan) -> str:
    """`model_fn` -> `ModelLoop`, `cnn_model_fn` -> `CnnModelLoop`."""
    stripped = re.sub(r"_?fn$", "", plan.fn_name)
    lead = "_" if stripped.startswith("_") else ""
    parts = [p for p in stripped.strip("_").split("_") if p]
    return lead + ("".join(p[:1].upper() + p[1:] for p in parts) or "Migrated") + "Loop"


def _per_example(keras_loss: str) -> str:
    """`tf.keras.losses.X(args)` -> `tf.keras.losses.X(args, reduction=None)`."""
    head, _, rest = keras_loss.partition("(")
    inner = rest[:-1].strip()
    return f"{head}({inner + ', ' if inner else ''}reduction=None)"


class _OnTheLoop(Transformer):
    """TF1 code carried from the Keras model's methods onto the loop: `self.trainable_variables`
    and a bare `self` (e.g. `tfm.losses.regularization_loss(self)`) mean the model."""

    def __init__(self, model_attrs: frozenset[str] = _MODEL_ATTRS) -> None:
        super().__init__()
        self.model_attrs = model_attrs

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if isinstance(updated.value, cst.Name) and updated.value.value == "self" and updated.attr.value in self.model_attrs:
            return updated.with_changes(value=cst.parse_expression("self.model"))
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if isinstance(updated.value, cst.Name) and updated.value.value == "self":
            return updated.with_changes(value=cst.parse_expression("self.model"))
        return updated


def _on_loop(stmts: list[cst.SimpleStatementLine], plan: Plan | None = None) -> list[cst.SimpleStatementLine]:
    attrs = _MODEL_ATTRS
    if plan is not None:  # the model's own weights and layers (`self.output_weights` in a TF1 loss)
        attrs = attrs | {attr for attr, _ in plan.weights} | {layer.attr for layer in plan.layers}
    return [s.visit(_OnTheLoop(attrs)) for s in stmts]  # type: ignore[misc]


def _metrics_use_params(plan: Plan) -> bool:
    used = set().union(*(names_in(stmt) for stmt in plan.metric_prelude)) if plan.metric_prelude else set()
    return plan.params_name in used or any(re.search(rf"\b{re.escape(plan.params_name)}\b", u) for u in plan.metric_updates)


def _uses_params(plan: Plan) -> bool:
    return (
        plan.loss_uses_params
        or plan.gradient_uses_params
        or plan.predict_uses_params
        or plan.hooks_use_params
        or _metrics_use_params(plan)
    )


def _unpack(plan: Plan) -> str:
    """How a step names its batch: `features, labels`, or (the labels inside the features dict)
    both names for the one dict."""
    if plan.labels_from_features:
        return f"{plan.features_name} = {plan.labels_name}"
    return f"{plan.features_name}, {plan.labels_name}"


def render(plan: Plan, *, tf: str, tfm: str, indent: str = "    ", standalone: bool = False) -> list[cst.BaseStatement]:
    """The model class and the loop class replacing `plan`'s model_fn, as module-level statements."""
    u = indent
    slots = Slots()
    lines: list[str] = []

    # -- the forward pass -------------------------------------------------------------------
    lines += model_class_lines(plan, slots, tf, u, store_params=plan.call_uses_params or plan.weights_use_params or plan.deferred_use_params, metrics=False)
    lines += ["", ""]

    # -- the loop ---------------------------------------------------------------------------
    name = loop_class_name(plan)
    lines += _loop_head_lines(plan, slots, tf, u, tfm=tfm, standalone=standalone)
    lines += _compute_loss_lines(plan, slots, tf, u)
    lines += _train_lines(plan, slots, tf, u)
    lines += _test_lines(plan, slots, tf, u)
    lines += _predict_lines(plan, slots, tf, u)

    # The spec's export_outputs and hooks: what `export_saved_model` and `train`/... run.
    lines += export_outputs_lines(
        plan, slots, u, model="self.model", writer="`export_saved_model`", stmts=lambda stmts: _on_loop(stmts, plan)
    )
    lines += hook_method_lines(plan, slots, u, caller="each call of the loop")

    if standalone:
        from .ctl_standalone import host_methods

        lines += host_methods(u, tf, predict=plan.predictions is not None)

    if plan.closure:
        # The builder returns `model_fn`: now the loop class, constructed where the estimator was.
        lines += ["", "", f"{plan.fn_name} = {name}"]

    text = "\n".join(lines) + "\n"
    module = cst.parse_module(text, config=cst.PartialParserConfig(default_indent=indent))
    return list(slots.fill(module).body)


def _loop_head_lines(plan: Plan, slots: Slots, tf: str, indent: str, *, tfm: str, standalone: bool) -> list[str]:
    """The loop class's head: its docstring and `__init__` (model, optimizer, loss, metrics, checkpoint)."""
    u, p = indent, plan.params_name
    lines: list[str] = []
    name = loop_class_name(plan)
    base = "" if standalone else f"({tfm}.ctl.EstimatorLoop)"
    lines.append(f"class {name}{base}:")
    lines.append(f'{u}"""A custom training loop running the TF1 `{plan.fn_name}` (migrated by tfmigrate).')
    lines.append("")
    lines.append(f"{u}`train`/`evaluate`/`predict` keep TF1 Estimator's meaning (global step, `steps` vs `max_steps`,")
    lines.append(f"{u}checkpoints in `model_dir`); `steps_per_loop` steps run per `train_steps` call, as")
    lines.append(f"{u}TPUEstimator's `iterations_per_loop` did.")
    if plan.docstring:
        lines.append("")
        lines.append(f"{u}The TF1 `{plan.fn_name}`'s docstring:")
        lines.append("")
        for text in plan.docstring.strip().splitlines():
            lines.append(f"{u}{u}{text.strip()}" if text.strip() else "")
    lines.append(f'{u}"""')
    lines.append("")
    lines.append(f"{u}def __init__(self, strategy, {p}, *, config=None, model_dir=None, steps_per_loop=1):")
    if standalone:
        lines.append(f"{u * 2}self._init_loop(strategy, config=config, model_dir=model_dir, steps_per_loop=steps_per_loop)")
    else:
        lines.append(f"{u * 2}super().__init__(strategy, config=config, model_dir=model_dir, steps_per_loop=steps_per_loop)")
    if _uses_params(plan):
        lines.append(f"{u * 2}self.{p} = {p}")
    lines.append(f"{u * 2}with strategy.scope():")
    lines += slots.block(plan.optimizer_prelude, 3, u)
    lines += step_fn_lines(plan, slots, 3, u)
    lines.append(f"{u * 3}self.model = {plan.class_name}({p})")
    lines += init_checkpoint_lines(plan, tfm, "self.model", 3, u)
    lines.append(f"{u * 3}self.optimizer = {plan.optimizer.replace(MODEL_PLACEHOLDER, 'self.model')}")
    if plan.keras_loss is not None:
        lines.append(f"{u * 3}self.loss_object = {_per_example(plan.keras_loss)}")
    for attr, func, args in plan.metrics:
        lines += wrap_call(f"self.{attr} = ", func, args, u * 3, u)
    if plan.metrics:
        items = [f"self.{attr}" for attr, _, _ in plan.metrics]
        one = f"{u * 3}self.eval_metrics = [{', '.join(items)}]"
        if len(one) <= 100:
            lines.append(one)
        else:
            lines += [f"{u * 3}self.eval_metrics = ["] + [f"{u * 4}{item}," for item in items] + [f"{u * 3}]"]
    lines.append(f"{u * 3}self.checkpoint = {tf}.train.Checkpoint(model=self.model, optimizer=self.optimizer)")
    return lines


def _compute_loss_lines(plan: Plan, slots: Slots, tf: str, indent: str) -> list[str]:
    """`compute_loss`: one replica's loss, scaled so that summing over replicas gives the batch mean."""
    u, p, out = indent, plan.params_name, plan.output
    labels = plan.labels_name
    summaries = bool(plan.summaries or plan.host_summaries)
    lines: list[str] = []
    # compute_loss: one replica's loss, scaled so that summing over replicas gives the batch mean.
    lines.append("")
    lines.append(f"{u}def compute_loss(self, {labels}, {out}{', training=False' if summaries else ''}):")
    if plan.keras_loss is not None:
        lines.append(f'{u * 2}"""The TF1 loss of `{plan.fn_name}` on one replica\'s examples, averaged over the global batch."""')
        lines.append(f"{u * 2}per_example_loss = self.loss_object({labels}, {out})")
        # A rank-1 output (`tf.squeeze(logits, -1)`) makes Keras's per-example loss the batch's
        # mean, a scalar: as one "example", it averages to the same global mean.
        lines.append(f"{u * 2}return {tf}.nn.compute_average_loss({tf}.reshape(per_example_loss, [-1]))")
    else:
        lines.append(f'{u * 2}"""The TF1 loss of `{plan.fn_name}`, kept as written (TF1\'s reductions) on one replica\'s batch.')
        lines.append("")
        lines.append(f"{u * 2}Divided by the number of replicas, as TF1's optimizer scaled it, so that the replicas' sum")
        lines.append(f"{u * 2}is the loss of the global batch.")
        lines.append(f'{u * 2}"""')
        if plan.loss_uses_params:
            lines.append(f"{u * 2}{p} = self.{p}")
        lines += slots.block(_on_loop(plan.loss_stmts, plan), 2, u)
        if summaries:
            on_loop = Plan(fn_name=plan.fn_name, class_name=plan.class_name, params_name=p)
            on_loop.summaries = _on_loop(plan.summaries, plan)
            on_loop.host_summaries = [s if not isinstance(s, cst.SimpleStatementLine) else _on_loop([s], plan)[0] for s in plan.host_summaries]
            lines += summary_lines(on_loop, slots, tf, 2, u)
        lines.append(f"{u * 2}return {plan.loss_name} / self.strategy.num_replicas_in_sync")
    return lines


def _train_lines(plan: Plan, slots: Slots, tf: str, indent: str) -> list[str]:
    """`train_step` and `train_steps` (up to `steps` steps in one call)."""
    u, p, out = indent, plan.params_name, plan.output
    feats, labels = plan.features_name, plan.labels_name
    summaries = bool(plan.summaries or plan.host_summaries)
    lines: list[str] = []
    # train_step / train_steps
    lines.append("")
    lines.append(f"{u}def train_step(self, batch):")
    lines.append(f'{u * 2}"""One training step on one replica: the TRAIN mode of the TF1 `{plan.fn_name}`."""')
    lines.append(f"{u * 2}{_unpack(plan)} = batch")
    if plan.gradient_stmts:
        lines.append(f"{u * 2}with {tf}.GradientTape(persistent=True) as tape:")
        lines.append(f"{u * 3}{out} = self.model({feats}, training=True)")
        grad_loss = plan.gradient_loss_name
        scaled = "scaled_loss" if (not plan.gradient_scale_loss and grad_loss == "loss") else "loss"
        lines.append(f"{u * 3}{scaled} = self.compute_loss({labels}, {out}{', training=True' if summaries else ''})")
        if not plan.gradient_scale_loss:
            lines.append(f"{u * 3}# The TF1 code took the gradients of the replica's own loss; the optimizer sums them.")
            lines.append(f"{u * 3}{grad_loss} = {scaled} * self.strategy.num_replicas_in_sync")
        elif grad_loss != scaled:
            lines.append(f"{u * 3}{grad_loss} = {scaled}")
        lines.append(f"{u * 2}# The gradient code of the TF1 `{plan.fn_name}`, kept as written.")
        if plan.gradient_uses_params:
            lines.append(f"{u * 2}{p} = self.{p}")
        lines += slots.block(_on_loop(plan.gradient_prelude, plan), 2, u)
        lines += slots.block(_on_loop(plan.gradient_stmts, plan), 2, u)
        lines.append(f"{u * 2}return {scaled}")
    else:
        lines.append(f"{u * 2}with {tf}.GradientTape() as tape:")
        lines.append(f"{u * 3}{out} = self.model({feats}, training=True)")
        lines.append(f"{u * 3}loss = self.compute_loss({labels}, {out}{', training=True' if summaries else ''})")
        lines.append(f"{u * 2}gradients = tape.gradient(loss, self.model.trainable_variables)")
        lines.append(f"{u * 2}self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))")
        lines.append(f"{u * 2}return loss")
    lines.append("")
    lines.append(f"{u}@{tf}.function")
    lines.append(f"{u}def train_steps(self, iterator, steps):")
    lines.append(f'{u * 2}"""Up to `steps` training steps in one call (TPUEstimator\'s `iterations_per_loop`)."""')
    lines.append(f"{u * 2}loss = {tf}.constant(0.0)")
    lines.append(f"{u * 2}for _ in {tf}.range(steps):")
    lines.append(f"{u * 3}batch = iterator.get_next_as_optional()")
    lines.append(f"{u * 3}if not batch.has_value():")
    lines.append(f"{u * 4}break")
    lines.append(f"{u * 3}per_replica_loss = self.strategy.run(self.train_step, args=(batch.get_value(),))")
    lines.append(f"{u * 3}loss = self.strategy.reduce({tf}.distribute.ReduceOp.SUM, per_replica_loss, axis=None)")
    lines.append(f"{u * 2}return loss")
    return lines


def _test_lines(plan: Plan, slots: Slots, tf: str, indent: str) -> list[str]:
    """`test_step` and `test_steps`."""
    u, p, out = indent, plan.params_name, plan.output
    feats, labels = plan.features_name, plan.labels_name
    lines: list[str] = []
    # test_step / test_steps
    lines.append("")
    lines.append(f"{u}def test_step(self, batch):")
    what = "with its eval metrics updated" if plan.metrics else "its loss"
    lines.append(f'{u * 2}"""One evaluation step on one replica: the EVAL mode of the TF1 `{plan.fn_name}`, {what}."""')
    lines.append(f"{u * 2}{_unpack(plan)} = batch")
    lines.append(f"{u * 2}{out} = self.model({feats}, training=False)")
    if plan.metrics:
        lines += slots.block(plan.metric_model_prelude, 2, u)
        mapping = {"y": labels, "y_pred": out, "x": feats}
        pairs = [(param, mapping.get(src, src)) for param, src in plan.metric_sources]
        pairs = [(a, b) for a, b in pairs if a != b]
        if pairs:
            lines.append(f"{u * 2}{', '.join(a for a, _ in pairs)} = {', '.join(b for _, b in pairs)}")
        if _metrics_use_params(plan):
            lines.append(f"{u * 2}{p} = self.{p}")
        lines += slots.block(plan.metric_prelude, 2, u)
        lines += [f"{u * 2}{update}" for update in plan.metric_updates]
    lines.append(f"{u * 2}return self.compute_loss({labels}, {out})")
    lines.append("")
    lines.append(f"{u}@{tf}.function")
    lines.append(f"{u}def test_steps(self, iterator, steps):")
    lines.append(f'{u * 2}"""Up to `steps` evaluation steps in one call: the sum of the batch losses, the steps run, and')
    lines.append(f"{u * 2}the batches (the replicas' batches that held examples: a last step may leave a replica none).")
    lines.append(f'{u * 2}"""')
    lines.append(f"{u * 2}loss_sum, steps_run, batches = {tf}.constant(0.0), {tf}.constant(0), {tf}.constant(0.0)")
    lines.append(f"{u * 2}replicas = float(self.strategy.num_replicas_in_sync)  # (compute_loss divides by it)")
    lines.append(f"{u * 2}for _ in {tf}.range(steps):")
    lines.append(f"{u * 3}batch = iterator.get_next_as_optional()")
    lines.append(f"{u * 3}if not batch.has_value():")
    lines.append(f"{u * 4}break")
    lines.append(f"{u * 3}per_replica_loss, held = self.strategy.run(self.counted_test_step, args=(batch.get_value(),))")
    lines.append(f"{u * 3}loss_sum += replicas * self.strategy.reduce({tf}.distribute.ReduceOp.SUM, per_replica_loss, axis=None)")
    lines.append(f"{u * 3}batches += self.strategy.reduce({tf}.distribute.ReduceOp.SUM, held, axis=None)")
    lines.append(f"{u * 3}steps_run += 1")
    lines.append(f"{u * 2}return loss_sum, steps_run, batches")
    return lines


def _predict_lines(plan: Plan, slots: Slots, tf: str, indent: str) -> list[str]:
    """`predict_step` and `distributed_predict_step`, when the model_fn predicts."""
    u, p, out = indent, plan.params_name, plan.output
    feats = plan.features_name
    lines: list[str] = []
    # predict_step
    if plan.predictions is not None:
        lines.append("")
        lines.append(f"{u}def predict_step(self, batch):")
        lines.append(f'{u * 2}"""The PREDICT mode of the TF1 `{plan.fn_name}` on one replica: its `predictions`, keyed as before."""')
        lines.append(f"{u * 2}{feats}, _, _ = {tf}.keras.utils.unpack_x_y_sample_weight(batch)")
        lines.append(f"{u * 2}{out} = self.model({feats}, training=False)")
        if plan.predict_uses_params:
            lines.append(f"{u * 2}{p} = self.{p}")
        lines += slots.block(_on_loop(plan.predict_prelude, plan), 2, u)
        lines += slots.block(_on_loop(plan.predict_stmts, plan), 2, u)
        lines.append(f"{u * 2}return {plan.predictions}")
        lines.append("")
        lines.append(f"{u}@{tf}.function")
        lines.append(f"{u}def distributed_predict_step(self, batch):")
        lines.append(f'{u * 2}"""The predictions for one global batch: every replica\'s, gathered in order."""')
        lines.append(f"{u * 2}per_replica = self.strategy.run(self.predict_step, args=(batch,))")
        lines.append(f"{u * 2}return {tf}.nest.map_structure(lambda value: self.strategy.gather(value, axis=0), per_replica)")
    return lines


def construct_loop(
    var: str,
    plan: Plan,
    strategy: str,
    *,
    params: str,
    config: str,
    model_dir: str | None,
    steps_per_loop: str | None,
    cls: str | None = None,
) -> str:
    """`loop = ModelLoop(strategy, params, config=..., steps_per_loop=...)`, replacing the estimator
    (`cls`: the name the loop class has there, when a builder returned it)."""
    args = [strategy, params]
    if config != "None":
        args.append(f"config={config}")
    if model_dir is not None:
        args.append(f"model_dir={model_dir}")
    if steps_per_loop is not None:
        args.append(f"steps_per_loop={steps_per_loop}")
    return f"{var} = {cls or loop_class_name(plan)}({', '.join(args)})"


def construct_canned_loop(
    var: str, model: str, build: str, strategy: str, *, tfm: str, config: str, model_dir: str | None
) -> list[str]:
    """A canned estimator's loop: its Keras model built in the strategy's scope, then
    `loop = tfm.ctl.CannedLoop(strategy, model, config=..., model_dir=...)`."""
    args = [strategy, model]
    if config != "None":
        args.append(f"config={config}")
    if model_dir is not None:
        args.append(f"model_dir={model_dir}")
    return [f"with {strategy}.scope():", f"    {model} = {build}", f"{var} = {tfm}.ctl.CannedLoop({', '.join(args)})"]


def call_loop(var: str, method: str, data: str, bound: dict, expr) -> str:
    """`est.train(input_fn, steps=...)` -> `loop.train(<data>, steps=...)` (and evaluate/predict)."""
    args = [data]
    for key in ("steps", "max_steps", "predict_keys", "hooks", "saving_listeners", "yield_single_examples", "name", "checkpoint_path"):
        if key in bound:
            args.append(f"{key}={expr(bound[key])}")
    return f"{var}.{method}({', '.join(args)})"
