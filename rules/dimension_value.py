"""TFM103: TF1 `Dimension.value` -> `tf.compat.dimension_value(...)`."""

from __future__ import annotations

import ast
import re

from tfmigrate.cst_on_demand import cst

from tfmigrate.rule import Rule
from tfmigrate.textpass import SourceView, TextPlan


def _is_shape_item(node: ast.AST) -> bool:
    """`x.shape[i]`, `x.get_shape()[i]`, `x.shape.dims[i]`: a TF1 `Dimension` (an int or None in TF2)."""
    if not isinstance(node, ast.Subscript):
        return False
    owner = node.value
    if isinstance(owner, ast.Call) and not owner.args and not owner.keywords:
        owner = owner.func
        return isinstance(owner, ast.Attribute) and owner.attr == "get_shape"
    if isinstance(owner, ast.Attribute) and owner.attr == "dims":
        owner = owner.value
    return isinstance(owner, ast.Attribute) and owner.attr == "shape"


# A word `value` after a `.`, a line break or a `\` (blanks between): the only ones that may be
# an attribute (any other character before it ends an expression's token that no `.` follows).
_VALUE_WORD = re.compile(r"[.\n\\][ \t\f]*(value)\b")


def _may_read_dimension(source: str) -> bool:
    """Whether `source` may spell `<subscript>.value`: False only where no word `value` follows a
    `.` that follows a `]` (across blanks, line breaks and continuations; a comment where one of
    them could be makes it True). Non-ASCII text may spell `value` in other characters (NFKC); a
    lone `\\r` ends a line (and so a comment) too."""
    if not source.isascii() or "\r" in source:
        return True
    for match in _VALUE_WORD.finditer(source):
        dot = _previous_char(source, match.start(1) - 1)
        if dot is None:
            return True
        if dot < 0 or source[dot] != ".":
            continue
        item_end = _previous_char(source, dot - 1)
        if item_end is None or (item_end >= 0 and source[item_end] == "]"):
            return True
    return False


def _previous_char(source: str, i: int) -> int | None:
    """The index of the last character at or before `i` that is no blank, line break or `\\`
    (-1: none); None where a line passed over holds a `#` (a comment may end there)."""
    while i >= 0:
        char = source[i]
        if char == "\n":
            if "#" in source[source.rfind("\n", 0, i) + 1 : i]:
                return None
        elif char not in " \t\f\\":
            return i
        i -= 1
    return -1


def _is_shape_item_cst(node: cst.BaseExpression) -> bool:
    if not isinstance(node, cst.Subscript):
        return False
    owner = node.value
    if isinstance(owner, cst.Call):
        return not owner.args and isinstance(owner.func, cst.Attribute) and owner.func.attr.value == "get_shape"
    if isinstance(owner, cst.Attribute) and owner.attr.value == "dims":
        owner = owner.value
    return isinstance(owner, cst.Attribute) and owner.attr.value == "shape"


class DimensionValue(Rule):
    """Read a static dimension the way both TF1 and TF2 shapes allow.

    In TF1 a shape's item (`x.shape[-1]`, `x.get_shape()[1]`, `x.shape.dims[0]`) was a
    `Dimension`, read with `.value`; in TF2 it is already the int (or None), and `.value` raises
    `AttributeError: 'int' object has no attribute 'value'`. `tf.compat.dimension_value(item)`
    gives the int (or None) under both, so `x.shape[-1].value` becomes
    `tf.compat.dimension_value(x.shape[-1])`.

    Guide: https://www.tensorflow.org/guide/migrate/migrate_tf2 (TensorShape)
    """

    CODE = "TFM103"
    SUMMARY = "TF1 `x.shape[i].value` -> tf.compat.dimension_value(x.shape[i])"
    SAFE = True
    RUNS_AFTER = ("TFM101",)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value != "value" or not _is_shape_item_cst(original.value):
            return updated
        self.mark_changed()
        tf = self.ctx.need_tf2()
        return cst.Call(
            func=cst.parse_expression(f"{tf}.compat.dimension_value"), args=[cst.Arg(value=updated.value)]
        )

    def text_edits(self, view: SourceView) -> TextPlan | None:
        plan = TextPlan()
        if not _may_read_dimension(view.source):
            return plan  # no `<item>.value` to rewrite: the tree need not be walked
        lines = view.lines
        tf = self.ctx.tf2_alias
        for node in view.nodes_of(ast.Attribute):
            if not (node.attr == "value" and _is_shape_item(node.value)):
                continue
            item = node.value
            if getattr(item, "end_lineno", None) is None or node.end_lineno is None:
                return None
            start = lines.offset(item.lineno, item.col_offset)
            item_end = lines.offset(item.end_lineno, item.end_col_offset)
            end = lines.offset(node.end_lineno, node.end_col_offset)
            if lines.data[item_end:end] != b".value":
                return None  # `x.shape[0] .value` or a comment in between: the CST pass decides
            if any(not (end <= s or start >= e) for s, e, _ in plan.replacements):
                return None  # nested (`a.shape[b.shape[0].value].value`)
            text = lines.data[start:item_end].decode("utf-8")
            plan.replacements.append((start, end, f"{tf}.compat.dimension_value({text})"))
            plan.changed = True
            plan.needs_tf2 = True
        return plan
