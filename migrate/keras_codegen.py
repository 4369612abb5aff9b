"""Renders a `modelfn.Plan` as a Keras model class plus a builder function (source text)."""

from __future__ import annotations

import textwrap

from .modelfn import Plan

_IND = "    "
_WIDTH = 100


def wrap_call(head: str, func: str, args: list[str], indent: str, *, tail: str = "") -> list[str]:
    """`head + func(args) + tail` on one line if it fits, else one argument per line."""
    one = f"{indent}{head}{func}({', '.join(args)}){tail}"
    if len(one) <= _WIDTH or not args:
        return [one]
    inner = indent + _IND
    return [f"{indent}{head}{func}("] + [f"{inner}{arg}," for arg in args] + [f"{indent}){tail}"]


def _block(lines: list[str], depth: int) -> list[str]:
    """Re-indent rendered statements (each possibly multi-line, with its own continuation lines)."""
    out: list[str] = []
    for text in lines:
        text = text.rstrip("\n")
        first, *rest = text.split("\n")
        # Leading comment lines of a statement come first; every line of the statement keeps its
        # relative layout, so only the statement's own lines get the new indentation.
        out.append(_IND * depth + first.lstrip())
        out.extend(rest)
    return out


def render(plan: Plan, *, tf: str, tfm: str, indent: str = _IND) -> str:
    p = plan.params_name
    doc = f"The forward pass of the TF1 `{plan.fn_name}`, as a Keras model (migrated by tfmigrate)."
    lines = [f"class {plan.class_name}({tf}.keras.Model):", f'{_IND}"""{doc}"""', ""]
    lines.append(f"{_IND}def __init__(self, {p}):")
    lines.append(f"{_IND * 2}super().__init__()")
    if plan.call_uses_params:
        lines.append(f"{_IND * 2}self.{p} = {p}")
    lines += _block(plan.init_stmts, 2)
    for layer in plan.layers:
        lines += wrap_call(f"self.{layer.attr} = ", layer.func, layer.args, _IND * 2)
    lines.append("")
    lines.append(f"{_IND}def call(self, {plan.features_name}, training=False):")
    if plan.call_uses_params:
        lines.append(f"{_IND * 2}{p} = self.{p}")
    lines += _block(plan.call_stmts, 2)
    lines.append(f"{_IND * 2}return {plan.output}")
    if plan.keras_loss is None:
        lines.append("")
        lines.append(f"{_IND}def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):")
        lines.append(f'{_IND * 2}"""The TF1 loss of `{plan.fn_name}`, kept as written (TF1-faithful reductions)."""')
        if plan.loss_uses_params:
            lines.append(f"{_IND * 2}{p} = self.{p}")
        lines.append(f"{_IND * 2}{plan.labels_name}, {plan.output} = y, y_pred")
        lines += _block(plan.loss_stmts, 2)
        lines.append(f"{_IND * 2}return {tfm}.scale_loss_for_replicas({plan.loss_name})")
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
    lines += _block(plan.optimizer_prelude, 1)
    lines.append(f"{_IND}model = {plan.class_name}({p})")
    lines.append(f"{_IND}optimizer = {plan.optimizer}")
    loss = plan.keras_loss if plan.keras_loss is not None else "None"
    compile_args = ["optimizer=optimizer", f"loss={loss}", "steps_per_execution=steps_per_execution"]
    lines += wrap_call("", "model.compile", compile_args, _IND)
    lines.append(f"{_IND}return model")
    text = "\n".join(lines) + "\n"
    if indent != _IND:
        text = "\n".join(_reindent(line, indent) for line in text.split("\n"))
    return text


def _reindent(line: str, indent: str) -> str:
    """Swap the generated 4-space levels for the module's own indentation (leading run only)."""
    stripped = line.lstrip(" ")
    levels, extra = divmod(len(line) - len(stripped), len(_IND))
    return indent * levels + " " * extra + stripped
