"""Renders a `estimator.plan.Plan` as a Keras model class plus a builder function (source text)."""

from __future__ import annotations

import textwrap
from typing import Callable

from .cst_on_demand import Transformer, cst

from .estimator.plan import MODEL_PLACEHOLDER, Plan

_IND = "    "
_WIDTH = 100


def wrap_call(head: str, func: str, args: list[str], indent: str, unit: str = _IND, *, tail: str = "") -> list[str]:
    """`head + func(args) + tail` on one line if it fits, else one argument per line."""
    one = f"{indent}{head}{func}({', '.join(args)}){tail}"
    if len(one) <= _WIDTH or not args:
        return [one]
    inner = indent + unit
    return [f"{indent}{head}{func}("] + [f"{inner}{arg}," for arg in args] + [f"{indent}){tail}"]


def wrap_dict(head: str, items: dict[str, str], indent: str, unit: str = _IND) -> list[str]:
    """`head + {'k': 'v', ...}` on one line if it fits, else one item per line."""
    pairs = [f"{k!r}: {v!r}" for k, v in items.items()]
    one = f"{indent}{head}{{{', '.join(pairs)}}}"
    if len(one) <= _WIDTH:
        return [one]
    return [f"{indent}{head}{{"] + [f"{indent}{unit}{pair}," for pair in pairs] + [f"{indent}}}"]


class Slots:
    """Placeholders for carried-over statements: generated text holds `__tfm_slot_N__`, and the
    parsed result gets the original nodes back, so comments and layout survive the move."""

    def __init__(self) -> None:
        self.nodes: list[cst.SimpleStatementLine] = []

    def block(self, stmts: list[cst.SimpleStatementLine], depth: int, unit: str) -> list[str]:
        out = []
        for node in stmts:
            out.append(f"{unit * depth}__tfm_slot_{len(self.nodes)}__")
            self.nodes.append(node)
        return out

    def fill(self, module: cst.Module) -> cst.Module:
        nodes = self.nodes

        class Fill(Transformer):
            def leave_SimpleStatementLine(self, original, updated):
                small = updated.body[0] if len(updated.body) == 1 else None
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Name):
                    name = small.value.value
                    if name.startswith("__tfm_slot_"):
                        return nodes[int(name[len("__tfm_slot_"):-2])]
                return updated

        return module.visit(Fill())


def model_class_lines(plan: Plan, slots: Slots, tf: str, u: str, *, store_params: bool, metrics: bool) -> list[str]:
    """The Keras model class of the model_fn's forward pass, up to and including `call`: layers
    made in `__init__`, `tf.get_variable` weights in `build`, TF1 names for checkpoint loading.
    (Shared by both targets: same layers and initializers, same numbers.)"""
    p = plan.params_name
    doc = f"The forward pass of the TF1 `{plan.fn_name}`, as a Keras model (migrated by tfmigrate)."
    lines = [f"class {plan.class_name}({tf}.keras.Model):", f'{u}"""{doc}"""', ""]
    if plan.tf1_names:
        lines.append(f"{u}# TF1 names of the layers and weights, for loading the original's checkpoints.")
        lines += wrap_dict("TF1_NAMES = ", plan.tf1_names, u, u)
        lines.append("")
    lines.append(f"{u}def __init__(self, {p}):")
    lines.append(f"{u * 2}super().__init__()")
    if store_params:
        lines.append(f"{u * 2}self.{p} = {p}")
    lines += slots.block(plan.init_stmts, 2, u)
    for layer in plan.layers:
        lines += wrap_call(f"self.{layer.attr} = ", layer.func, layer.args, u * 2, u)
    for attr, method, _, _, _ in plan.deferred_weights:
        lines.append(f"{u * 2}self.{attr} = tfm.layers.DeferredWeight(self.{method})")
    for attr, method, _, _, _ in plan.scoped:
        args = [f"self.{method}", f'name="{attr}"'] + (["regularization_losses=True"] if plan.scoped_regularization else [])
        lines += wrap_call(f"self.{attr} = ", "tfm.tf1.VariableScopeLayer", args, u * 2, u)
    if metrics:
        for attr, func, args in plan.metrics:
            lines += wrap_call(f"self.{attr} = ", func, args, u * 2, u)
    for attr, method, tensor, stmts, args in plan.deferred_weights:
        lines.append("")
        lines.append(f"{u}def {method}(self, {tensor}):")
        lines.append(f'{u * 2}"""The TF1 `tf.get_variable` arguments of `{attr}`, which read `{tensor}`\'s static shape."""')
        if plan.deferred_use_params:
            lines.append(f"{u * 2}{p} = self.{p}")
        lines += slots.block(stmts, 2, u)
        lines += wrap_call("return ", "dict", args, u * 2, u)
    for attr, method, params, stmts, outputs in plan.scoped:
        lines.append("")
        lines.append(f"{u}@staticmethod")
        lines.append(f"{u}def {method}({', '.join(params)}):")
        lines.append(f'{u * 2}"""TF1 variable-scope code; the variables it makes are `self.{attr}`\'s weights."""')
        lines += slots.block(stmts, 2, u)
        lines.append(f"{u * 2}return {', '.join(outputs)}")
    if plan.weights:
        lines.append("")
        lines.append(f"{u}def build(self, input_shape):")
        lines.append(f'{u * 2}"""The TF1 `tf.get_variable` weights, made when the model is built (so `tf_random_seed` seeds them)."""')
        if plan.weights_use_params:
            lines.append(f"{u * 2}{p} = self.{p}")
        lines += slots.block(plan.weight_stmts, 2, u)
        for attr, args in plan.weights:
            lines += wrap_call(f"self.{attr} = ", "self.add_weight", args, u * 2, u)
    lines.append("")
    lines.append(f"{u}def call(self, {plan.features_name}, training=False):")
    if plan.call_uses_params:
        lines.append(f"{u * 2}{p} = self.{p}")
    lines += slots.block(plan.call_stmts, 2, u)
    lines.append(f"{u * 2}return {plan.output}")
    return lines


def step_fn_lines(plan: Plan, slots: Slots, depth: int, u: str) -> list[str]:
    """`def learning_rate_fn(global_step): ...` for a hand-written TF1 learning rate (or nothing)."""
    if not plan.step_fn:
        return []
    lines = ["", f"{u * depth}def {plan.step_fn}({plan.step_fn_param}):"]
    lines.append(f'{u * (depth + 1)}"""The TF1 learning rate of `{plan.fn_name}`, computed from the global step as TF1 did at each step."""')
    lines += slots.block(plan.step_fn_stmts, depth + 1, u)
    lines.append(f"{u * (depth + 1)}return {plan.step_fn_result}")
    lines.append("")
    return lines


def summary_lines(plan: Plan, slots: Slots, tf: str, depth: int, u: str, *, training: str = "training") -> list[str]:
    """The model_fn's summaries (recorded every `save_summary_steps` by the runtime's writer) and
    the host_call's (every step), on the training step only."""
    if not plan.summaries and not plan.host_summaries:
        return []
    lines = [f"{u * depth}if {training}:"]
    if plan.summaries:
        lines += slots.block(plan.summaries, depth + 1, u)
    if plan.host_summaries:
        lines.append(f"{u * (depth + 1)}with {tf}.compat.v2.summary.record_if(True):")
        lines += slots.block(plan.host_summaries, depth + 2, u)
    return lines


def init_checkpoint_lines(plan: Plan, tfm: str, model: str, depth: int, u: str) -> list[str]:
    """`tfm.init_from_checkpoint(model, ...)` for each TF1 `init_from_checkpoint` (under its condition)."""
    lines = []
    for condition, args in plan.init_checkpoints:
        call = f"{tfm}.init_from_checkpoint({model}, {args})"
        if condition is None:
            lines.append(f"{u * depth}{call}")
        else:
            lines += [f"{u * depth}if {condition}:", f"{u * (depth + 1)}{call}"]
    return lines


def export_outputs_lines(
    plan: Plan, slots: Slots, u: str, *, model: str, writer: str, stmts: Callable[[list], list] = list
) -> list[str]:
    """The `export_outputs(features)` method (a PREDICT spec's `export_outputs=`), on the Keras
    model (`model="self"`) or on the ctl loop (`model="self.model"`, `stmts` moving the TF1 code
    onto the loop)."""
    if plan.export_outputs is None:
        return []
    p = plan.params_name
    lines = ["", f"{u}def export_outputs(self, {plan.features_name}):"]
    lines.append(
        f'{u * 2}"""The PREDICT-mode `export_outputs` of the TF1 `{plan.fn_name}`: the serving signatures '
        f'{writer} writes."""'
    )
    lines.append(f"{u * 2}{plan.output} = {model}({plan.features_name}, training=False)")
    if plan.predict_uses_params:
        lines.append(f"{u * 2}{p} = self.{p}")
    lines += slots.block(stmts(plan.predict_prelude), 2, u)
    lines += slots.block(stmts(plan.export_stmts), 2, u)
    lines.append(f"{u * 2}return {plan.export_outputs}")
    return lines


def hook_method_lines(plan: Plan, slots: Slots, u: str, *, caller: str) -> list[str]:
    """`training_hooks()`/`evaluation_hooks()`/`prediction_hooks()`: a spec's hooks, made per call."""
    p = plan.params_name
    lines: list[str] = []
    for method, expr in plan.hooks.items():
        lines.append("")
        lines.append(f"{u}def {method}(self):")
        lines.append(f'{u * 2}"""The TF1 `{plan.fn_name}`\'s `{method}`, made afresh for {caller} as model_fn made them."""')
        if plan.hooks_use_params:
            lines.append(f"{u * 2}{p} = self.{p}")
        lines += slots.block(plan.hook_stmts.get(method, []), 2, u)
        lines.append(f"{u * 2}return {expr}")
    return lines


def render(plan: Plan, *, tf: str, tfm: str, indent: str = _IND) -> list[cst.BaseStatement]:
    """The class and builder replacing `plan`'s model_fn, as module-level statements."""
    _IND = indent  # the module's own indentation unit
    slots = Slots()
    p = plan.params_name
    lines = model_class_lines(plan, slots, tf, _IND, store_params=(
        plan.call_uses_params
        or plan.loss_uses_params
        or plan.gradient_uses_params
        or plan.predict_uses_params
        or plan.weights_use_params
        or plan.deferred_use_params
        or plan.hooks_use_params
    ), metrics=True)
    if plan.keras_loss is None:
        lines.append("")
        lines.append(f"{_IND}def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):")
        lines.append(f'{_IND * 2}"""The TF1 loss of `{plan.fn_name}`, kept as written (TF1-faithful reductions)."""')
        if plan.loss_uses_params:
            lines.append(f"{_IND * 2}{p} = self.{p}")
        labels = "x" if plan.labels_from_features else "y"  # the features dict holds the labels
        lines.append(f"{_IND * 2}{plan.labels_name}, {plan.output} = {labels}, y_pred")
        lines += slots.block(plan.loss_stmts, 2, _IND)
        lines += summary_lines(plan, slots, tf, 2, _IND)
        lines.append(f"{_IND * 2}return {tfm}.scale_loss_for_replicas({plan.loss_name})")
    if plan.predictions is not None:
        lines.append("")
        lines.append(f"{_IND}def predict_step(self, data):")
        lines.append(f'{_IND * 2}"""The PREDICT-mode `predictions` of the TF1 `{plan.fn_name}`, keyed as before."""')
        lines.append(f"{_IND * 2}{plan.features_name}, _, _ = {tf}.keras.utils.unpack_x_y_sample_weight(data)")
        lines.append(f"{_IND * 2}{plan.output} = self({plan.features_name}, training=False)")
        if plan.predict_uses_params:
            lines.append(f"{_IND * 2}{p} = self.{p}")
        lines += slots.block(plan.predict_prelude, 2, _IND)
        lines += slots.block(plan.predict_stmts, 2, _IND)
        lines.append(f"{_IND * 2}return {plan.predictions}")
    lines += export_outputs_lines(plan, slots, _IND, model="self", writer=f"{tfm}.export_saved_model")
    lines += hook_method_lines(plan, slots, _IND, caller=f"each {tfm} call")
    if plan.gradient_stmts:
        lines.append("")
        lines.append(f"{_IND}def train_step(self, data):")
        lines.append(f'{_IND * 2}"""A Keras train step around the TF1 `{plan.fn_name}`\'s own gradient code."""')
        scale = "True" if plan.gradient_scale_loss else "False"
        lines.append(f"{_IND * 2}return {tfm}.train_step(self, data, self.apply_tf1_gradients, scale_loss={scale})")
        lines.append("")
        lines.append(f"{_IND}def apply_tf1_gradients(self, {plan.gradient_loss_name}, tape):")
        lines.append(f'{_IND * 2}"""The gradient code of the TF1 `{plan.fn_name}`, kept as written, on the tape."""')
        if plan.gradient_uses_params:
            lines.append(f"{_IND * 2}{p} = self.{p}")
        lines += slots.block(plan.gradient_prelude, 2, _IND)
        lines += slots.block(plan.gradient_stmts, 2, _IND)
    if plan.metrics:
        lines.append("")
        lines.append(f"{_IND}def compute_metrics(self, x, y, y_pred, sample_weight=None):")
        lines.append(f'{_IND * 2}"""The TF1 `eval_metrics` of `{plan.fn_name}`, as Keras metrics (TF1 numbers)."""')
        sources = plan.metric_sources
        if plan.metric_model_prelude:
            labels = "x" if plan.labels_from_features else "y"
            lines.append(f"{_IND * 2}{plan.labels_name}, {plan.output} = {labels}, y_pred")
            lines += slots.block(plan.metric_model_prelude, 2, _IND)
            mapping = {"y": plan.labels_name, "y_pred": plan.output}
            sources = [(param, mapping.get(src, src)) for param, src in sources]
            sources = [(param, src) for param, src in sources if param != src]
        if sources:
            names = ", ".join(param for param, _ in sources)
            values = ", ".join(source for _, source in sources)
            lines.append(f"{_IND * 2}{names} = {values}")
        lines += slots.block(plan.metric_prelude, 2, _IND)
        lines += [f"{_IND * 2}{update}" for update in plan.metric_updates]
        lines.append(f"{_IND * 2}return super().compute_metrics(x, y, y_pred, sample_weight)")
    lines += ["", ""]
    builder_doc = (
        f"Builds and compiles the Keras model that replaces the TF1 `{plan.fn_name}` (migrated by tfmigrate)."
    )
    lines.append(f"def {plan.fn_name}({p}, steps_per_execution=1):")
    if plan.docstring:
        lines.append(f'{_IND}"""{builder_doc}')
        lines.append("")
        lines.extend(textwrap.indent(textwrap.dedent(plan.docstring).strip(), _IND).split("\n"))
        lines.append(f'{_IND}"""')
    else:
        lines.append(f'{_IND}"""{builder_doc}"""')
    lines += slots.block(plan.optimizer_prelude, 1, _IND)
    lines += step_fn_lines(plan, slots, 1, _IND)
    lines.append(f"{_IND}model = {plan.class_name}({p})")
    lines += init_checkpoint_lines(plan, tfm, "model", 1, _IND)
    lines.append(f"{_IND}optimizer = {plan.optimizer.replace(MODEL_PLACEHOLDER, 'model')}")
    loss = plan.keras_loss if plan.keras_loss is not None else "None"
    compile_args = ["optimizer=optimizer", f"loss={loss}", "steps_per_execution=steps_per_execution"]
    lines += wrap_call("", "model.compile", compile_args, _IND, _IND)
    lines.append(f"{_IND}return model")
    text = "\n".join(lines) + "\n"
    module = cst.parse_module(text, config=cst.PartialParserConfig(default_indent=indent))
    return list(slots.fill(module).body)


