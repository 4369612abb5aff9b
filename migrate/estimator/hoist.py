"""Hoists a model-building helper's call out of the expression it is nested in, so it can be inlined.

The model_fn analysis inlines a helper only where a statement is the call itself
(`h = dense_block(x, 12)`). Real code nests it: `h = tf.nn.relu(fully_connected(x, 6, 12, init))`.
Such a statement becomes two, the helper's call first:

    fully_connected_result = fully_connected(x, 6, 12, init)
    h = tf.nn.relu(fully_connected_result)

That keeps the program's order only where nothing the statement evaluates before the helper's call
is a call (which could make variables, and TF1 names them in order), and where the call runs
unconditionally (not inside `a if c else b`, `a and b`, a lambda or a comprehension). Elsewhere
`hoist_helper_call` returns None and the caller declines the model_fn (`nested_helper_call`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..cst_on_demand import Transformer, Visitor, cst

from ..cst_walk import walk


@functools.cache
def _not_straight() -> tuple[type, ...]:
    """Expressions whose parts run conditionally, later, or repeatedly: a call inside is not hoisted."""
    return (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _value(stmt: cst.SimpleStatementLine) -> cst.BaseExpression | None:
    """The expression a one-statement line evaluates first: an assignment's value, an expression."""
    if len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, (cst.Assign, cst.Expr)):
        return small.value
    return None


def nested_helper_call(stmt: cst.SimpleStatementLine, is_helper: Callable[[cst.Call], bool]) -> cst.Call | None:
    """The first call of a model-building helper nested in `stmt` (not the whole of its value)."""
    value = _value(stmt)
    found: list[cst.Call] = []

    class Find(Visitor):
        def visit_Call(self, node: cst.Call) -> bool:
            if node is not value and is_helper(node) and not found:
                found.append(node)
            return not found

    walk(stmt, Find())
    return found[0] if found else None


def _straight_first(root: cst.CSTNode, target: cst.Call) -> bool:
    """Whether `target` is the first call evaluated in `root` (source order is evaluation order
    for the expressions allowed) and runs unconditionally."""
    state = {"calls_before": False}

    def walk(node: cst.CSTNode, conditional: bool) -> bool | None:
        """True: reached `target` cleanly; False: reached it, not cleanly; None: not in `node`."""
        if node is target:
            return not (conditional or state["calls_before"])
        inside = conditional or isinstance(node, _not_straight())
        for child in node.children:
            result = walk(child, inside)
            if result is not None:
                return result
        if isinstance(node, cst.Call):
            state["calls_before"] = True  # evaluated, all of it, before `target`
        return None

    return bool(walk(root, False))


def hoist_helper_call(
    stmt: cst.SimpleStatementLine, call: cst.Call, name: str
) -> tuple[cst.SimpleStatementLine, cst.SimpleStatementLine] | None:
    """(`name = <call>`, `stmt` with `name` in the call's place), or None where that would change
    what runs or in which order (see the module docstring)."""
    value = _value(stmt)
    if value is None or not _straight_first(value, call):
        return None

    class Replace(Transformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
            return cst.Name(name) if original is call else updated

    first = cst.SimpleStatementLine(
        body=[cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))], value=call)],
        leading_lines=stmt.leading_lines,
    )
    rest = stmt.visit(Replace()).with_changes(leading_lines=())
    return first, rest  # type: ignore[return-value]
