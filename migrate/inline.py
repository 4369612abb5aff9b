"""Inlines a model_fn's helper functions (BERT's `create_model`, a `create_optimizer`) into it.

Real TF1 programs rarely build everything inside `model_fn`: the network, the loss and the
optimizer come from module-level helpers that create variables and layers. The model_fn analysis
works on one flat list of statements, so a call to such a helper is replaced by the helper's body:

    (total_loss, per_example_loss, logits) = create_model(is_training, input_ids, labels, 2)

becomes the helper's statements, its parameters bound to the arguments (a name argument renames
the parameter; anything else is assigned to it first), and a last assignment of what it returned.
A helper's local names that the caller also uses are renamed (`<name>_<helper>`), unless the
caller binds the same name to the same returned value, BERT's
`(loss, per_example_loss, logits, probabilities) = create_model(...)` returning
`(loss, per_example_loss, logits, probabilities)`.

Only a helper whose one `return` is its last statement (inside `with` blocks is fine) is inlined;
anything else raises `Unsupported` with the reason.
"""

from __future__ import annotations

from .cst_on_demand import Transformer, Visitor, cst

from .names import names_in
from .cst_walk import walk


class InlineError(Exception):
    """The helper has a shape that cannot be inlined; the message says which."""


class _Locals(Visitor):
    """Names a function body binds: assignment, augmented-assignment, `for` and `with ... as` targets."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.returns = 0

    def _targets(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._targets(element.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)  # type: ignore[arg-type]

    def visit_Return(self, node: cst.Return) -> None:
        self.returns += 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False  # a nested function's locals are its own

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class RenameNames(Transformer):
    """Renames variables (not attribute names or keyword-argument names)."""

    def __init__(self, mapping: dict[str, str], constants: dict[str, cst.BaseExpression] | None = None) -> None:
        self.mapping = mapping
        self.constants = constants or {}

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if original.value in self.constants:
            return self.constants[original.value]
        new = self.mapping.get(original.value)
        return updated.with_changes(value=new) if new else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


class _ReturnToAssign(Transformer):
    """The helper's tail `return X` -> `<targets> = X` (or nothing, when the result is unused)."""

    def __init__(self, targets: list[cst.AssignTarget] | None) -> None:
        self.targets = targets

    def leave_Return(self, original: cst.Return, updated: cst.Return):
        if self.targets is None or updated.value is None:
            return cst.RemovalSentinel.REMOVE
        return cst.Assign(targets=self.targets, value=updated.value)


def _tail_returns(body: list[cst.BaseStatement]) -> bool:
    """The function's one `return` is the last statement executed (through `with` blocks)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], cst.Return)
    if isinstance(last, cst.With):
        return _tail_returns(list(last.body.body))  # type: ignore[attr-defined]
    return False


def _bind(fn: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression]:
    params = fn.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg is not None:
        raise InlineError(f"`{fn.name.value}` takes *args or **kwargs")
    ordered = list(params.posonly_params) + list(params.params)
    names = [p.name.value for p in ordered] + [p.name.value for p in params.kwonly_params]
    bound: dict[str, cst.BaseExpression] = {}
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        raise InlineError(f"`{fn.name.value}` is called with *args or **kwargs")
    if len(positional) > len(ordered):
        raise InlineError(f"`{fn.name.value}` is called with too many arguments")
    for param, arg in zip(ordered, positional):
        bound[param.name.value] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in names or arg.keyword.value in bound:
                raise InlineError(f"`{fn.name.value}` is called with an unexpected `{arg.keyword.value}=`")
            bound[arg.keyword.value] = arg.value
    for param in ordered + list(params.kwonly_params):
        if param.name.value not in bound:
            if param.default is None:
                raise InlineError(f"`{fn.name.value}` is called without `{param.name.value}`")
            bound[param.name.value] = param.default
    return bound


def inline(
    line: cst.SimpleStatementLine, call: cst.Call, fn: cst.FunctionDef, caller: cst.FunctionDef,
    also_taken: set[str] | frozenset[str] = frozenset(),
) -> list[cst.BaseStatement]:
    """The statements that replace `line` (`[targets =] fn(...)`) inside `caller`. `also_taken`:
    names the caller's code binds besides its own text (what helpers inlined before this call
    bound: a helper inlined twice must not share its locals between the two).

    (Just over 100 lines: one pass of checks, renames and the return rewrite, in the order they
    must happen; each step is a few lines.)"""
    name = fn.name.value
    if fn.decorators or fn.asynchronous:
        raise InlineError(f"`{name}` is decorated or async")
    body = list(fn.body.body)  # type: ignore[attr-defined]
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) and isinstance(
        body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)
    ):
        body = body[1:]  # the docstring
    local = _Locals()
    for stmt in body:
        walk(stmt, local)
    if local.returns > 1 or (local.returns == 1 and not _tail_returns(body)):
        raise InlineError(f"`{name}` returns from more than one place")
    bound = _bind(fn, call)
    small = line.body[0]
    if isinstance(small, cst.Assign) and not local.returns:
        raise InlineError(f"`{name}` returns nothing, but its result is assigned")
    target_node = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None

    # Which returned names the caller binds to the same name (no rename, no re-assignment).
    returned: cst.BaseExpression | None = None
    if local.returns:
        tail = body[-1]
        while isinstance(tail, cst.With):
            tail = tail.body.body[-1]  # type: ignore[attr-defined]
        returned = tail.body[-1].value  # type: ignore[attr-defined]
    same: set[str] = set()
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
    if isinstance(target_node, (cst.Tuple, cst.List)) and isinstance(returned, (cst.Tuple, cst.List)) and len(
        target_node.elements
    ) == len(returned.elements):
        for t, r in zip(target_node.elements, returned.elements):
            if isinstance(t.value, cst.Name) and isinstance(r.value, cst.Name) and t.value.value == r.value.value:
                same.add(t.value.value)
            else:
                pairs.append((t.value, r.value))
    elif isinstance(target_node, cst.Name) and isinstance(returned, cst.Name) and target_node.value == returned.value:
        same.add(target_node.value)

    caller_names = (names_in(caller.body) | set(also_taken)) - same
    helper_locals = local.names | set(bound)
    rename: dict[str, str] = {}
    substituted: set[str] = set()
    constants: dict[str, cst.BaseExpression] = {}  # parameters given a number: the number itself
    for param, arg in bound.items():
        # A parameter given a caller's name (and never reassigned) simply is that name.
        if param not in local.names and isinstance(arg, cst.Name) and (arg.value == param or arg.value not in helper_locals):
            substituted.add(param)
            if arg.value != param:
                rename[param] = arg.value
        elif param not in local.names and isinstance(arg, (cst.Integer, cst.Float)):
            substituted.add(param)
            constants[param] = arg
    taken = caller_names | helper_locals | set(rename.values())
    for local_name in sorted(helper_locals - substituted):
        if local_name in caller_names:
            fresh = f"{local_name}_{name}"
            index = 2
            while fresh in taken:
                fresh = f"{local_name}_{name}{index}"
                index += 1
            taken.add(fresh)
            rename[local_name] = fresh
    prelude: list[cst.BaseStatement] = [
        cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(rename.get(param, param)))], value=arg)])
        for param, arg in bound.items()
        if param not in substituted
    ]

    renamer = RenameNames(rename, constants)
    new_body = [stmt.visit(renamer) for stmt in body]
    if returned is not None:
        returned_renamed = returned.visit(renamer)
    # The return becomes the caller's assignment.
    if isinstance(small, cst.Expr):
        new_body = [stmt.visit(_ReturnToAssign(None)) for stmt in new_body]
    elif pairs or not same:
        if pairs and isinstance(target_node, (cst.Tuple, cst.List)):
            assert isinstance(returned_renamed, (cst.Tuple, cst.List))
            keep = [
                (t, r)
                for t, r in zip(target_node.elements, returned_renamed.elements)
                if not (isinstance(t.value, cst.Name) and t.value.value in same)
            ]
            if len(keep) == 1:
                targets = [cst.AssignTarget(keep[0][0].value.with_changes(lpar=[], rpar=[]))]
                value: cst.BaseExpression = keep[0][1].value.with_changes(lpar=[], rpar=[])
            else:
                targets = [cst.AssignTarget(cst.Tuple([cst.Element(t.value) for t, _ in keep]))]
                value = cst.Tuple([cst.Element(r.value) for _, r in keep])
            new_body = [_replace_return(stmt, targets, value) for stmt in new_body]
        else:
            new_body = [stmt.visit(_ReturnToAssign(list(small.targets))) for stmt in new_body]  # type: ignore[attr-defined]
    else:
        new_body = [stmt.visit(_ReturnToAssign(None)) for stmt in new_body]
    out = prelude + [s for s in new_body if not _empty(s)]
    if out:
        out[0] = out[0].with_changes(leading_lines=line.leading_lines)
    return out


def _replace_return(stmt: cst.BaseStatement, targets: list[cst.AssignTarget], value: cst.BaseExpression) -> cst.BaseStatement:
    class Replace(Transformer):
        def leave_Return(self, original: cst.Return, updated: cst.Return):
            return cst.Assign(targets=targets, value=value)

    return stmt.visit(Replace())  # type: ignore[return-value]


def _empty(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and not stmt.body
