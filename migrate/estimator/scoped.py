"""Forward-pass calls into code the codemod cannot restructure (another module's functions, helpers
that share variables): run under a variable store (`tfm.tf1.VariableScopeLayer`) instead.
"""

from __future__ import annotations

from ..cst_on_demand import Transformer, Visitor, cst

from ..names import dotted
from .analysis import Analysis
from .forward import training_test
from .plan import Plan, Stmt, StmtKind, Unsupported
from .syntax import snake
from .tables import PLAIN_MODULES, SCOPED_LAYERS, VARIABLE_SCOPES
from ..cst_walk import walk


def foreign_names(module: cst.Module) -> set[str]:
    """Local names a module-level import binds to a module (or its members) outside `PLAIN_MODULES`."""
    out: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted(alias.name) or ""
                    if full.split(".")[0] not in PLAIN_MODULES:
                        out.add(alias.asname.name.value if alias.asname else full.split(".")[0])  # type: ignore[union-attr]
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                full = (dotted(small.module) or "") if small.module is not None else ""
                if small.relative or full.split(".")[0] not in PLAIN_MODULES:
                    for alias in small.names:
                        out.add(alias.asname.name.value if alias.asname else (dotted(alias.name) or ""))  # type: ignore[union-attr]
    return out


def _foreign_calls(node: cst.CSTNode, foreign: set[str]) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Visit(Visitor):
        def visit_Call(self, call: cst.Call) -> None:
            name = dotted(call.func)
            if name is not None and name.split(".")[0] in foreign:
                found.append(call)

    walk(node, Visit())
    return found


def _calls_one_of(node: cst.CSTNode, names: set[str]) -> bool:
    """Whether `node` calls one of `names` (`model(image)`)."""
    found = False

    class Visit(Visitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal found
            found = found or (isinstance(call.func, cst.Name) and call.func.value in names)

    walk(node, Visit())
    return found


class _ScopedRewriter(Transformer):
    """Statements run inside a `tfm.tf1.VariableScopeLayer`: TF1 functional layers -> the
    runtime's (`tfm.tf1.dense`, same variables); `mode == TRAIN` -> the layer's `training`."""

    def __init__(self, analyzer: Analysis) -> None:
        super().__init__()
        self.a = analyzer
        self.training = False

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        training = training_test(self.a, original)
        if training is None:
            return updated
        self.training = True
        return training

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key in SCOPED_LAYERS:
            return updated.with_changes(func=cst.parse_expression(f"{self.a.tfm}.tf1.{SCOPED_LAYERS[key]}"))
        if key is not None and key.startswith(("layers.", "contrib.layers.", "contrib.slim.")):
            raise Unsupported(f"`tf.{key}` inside a call into another module's code is not migrated yet")
        return updated


class ScopedCode:
    """`ModelFnAnalyzer`'s part: calls run under a TF1 variable store."""

    def _shares_variables(self, fn: cst.FunctionDef) -> bool:
        """The helper opens a `variable_scope(reuse=...)` (True or AUTO_REUSE) or calls
        `reuse_variables()`: TF1 shared its variables between calls."""
        found = False
        analyzer = self

        class Visit(Visitor):
            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                key = analyzer.canonical(node.func)
                if key in VARIABLE_SCOPES:
                    reuse = next((a.value for a in node.args if a.keyword and a.keyword.value == "reuse"), None)
                    if reuse is not None and not (isinstance(reuse, cst.Name) and reuse.value in ("None", "False")):
                        found = True
                elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "reuse_variables":
                    found = True

        walk(fn.body, Visit())
        return found

    def _foreign_outside_forward(self, stmts: list["Stmt"], plan: "Plan") -> None:
        """A call into code run under a variable store (`_scoped`) belongs to the forward pass, and
        the object a class of it returns is read there only. A function of another module called
        on values that are not the model's (a "pure" statement, kept as written) is said so: if
        its TF1 code makes variables, they would not be the model's weights."""
        for st in stmts:
            if st.kind == StmtKind.PURE:
                for call in _foreign_calls(st.small, self.foreign):
                    parts = (dotted(call.func) or "").split(".")[1:]
                    if any(part[:1].isupper() for part in parts):
                        continue  # a class or its methods (`modeling.BertConfig.from_json_file`): a config
                    if any(other.kind == StmtKind.FORWARD and _calls_one_of(other.small, st.defs) for other in stmts):
                        # `model = mnist.create_model(...)`, then `model(image)`: made in `call()`,
                        # its variables would be made again each step (tf.function refuses them)
                        raise Unsupported(
                            f"`{self.code(call.func)}(...)` makes what the forward pass calls (a model or layer "
                            "another module builds): not migrated into the Keras model", st.line
                        )
                    plan.notes.append(
                        f"`{self.code(call.func)}(...)` in `{plan.fn_name}` is kept as written, outside the model's "
                        "variable store: if the TF1 code behind it creates variables (tf.get_variable, tf.layers), "
                        "call it on the features so it becomes part of the forward pass"
                    )
            if st.kind not in (StmtKind.FORWARD, StmtKind.PURE, StmtKind.DROP) and _foreign_calls(st.small, self.foreign):
                call = _foreign_calls(st.small, self.foreign)[0]
                raise Unsupported(
                    f"`{self.code(call.func)}(...)` outside the forward pass: the TF1 code behind it is not migrated", st.line
                )
            if st.kind != StmtKind.FORWARD or not isinstance(st.small, cst.Assign) or len(st.defs) != 1:
                continue
            value = st.small.value
            if isinstance(value, cst.Call) and _foreign_calls(value, self.foreign) and (
                (dotted(value.func) or "").rsplit(".", 1)[-1][:1].isupper()
            ):
                for other in stmts:
                    if other.kind not in (StmtKind.FORWARD, StmtKind.DEAD) and other.uses & st.defs:
                        raise Unsupported(
                            f"`{self.code(value.func)}(...)`: the object it returns is used outside the forward pass "
                            "(only the outputs it computes can be)",
                            other.line,
                        )

    def _scoped(
        self, plan: "Plan", stmts: list["Stmt"], forward_stmts: list["Stmt"]
    ) -> dict[int, cst.SimpleStatementLine | None]:
        """Forward statements that call into another module (`model = modeling.BertModel(...)`),
        with those that use the object such a call returns (`model.get_pooled_output()`), become
        one `tfm.tf1.VariableScopeLayer` made in `__init__` and called in `call()`: the TF1 code
        behind the call makes its variables once, as the layer's weights, under their TF1 names.
        Returns statement -> the call line that replaces the group's first statement (None for
        the others)."""
        if not self.foreign:
            return {}
        out: dict[int, cst.SimpleStatementLine | None] = {}
        seeds = [st for st in forward_stmts if _foreign_calls(st.small, self.foreign)]
        if not seeds:
            return {}
        local = {self.features, self.params} | {n for n in (self.labels, self.mode) if n} | {n for st in stmts for n in st.defs}
        position = {id(st): i for i, st in enumerate(stmts)}
        objects: set[str] = set()
        group: list[Stmt] = []
        for st in forward_stmts:
            if st in seeds or st.uses & objects:
                group.append(st)
                value = st.small.value if isinstance(st.small, cst.Assign) and len(st.defs) == 1 else None
                if isinstance(value, cst.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1][:1].isupper():
                    objects |= st.defs  # `model = modeling.BertModel(...)`: an object (a function gives tensors)
        members = {id(st) for st in group}
        defs = set().union(*(st.defs for st in group))
        first = group[0]
        described = self.code(_foreign_calls(first.small, self.foreign)[0].func)
        # What the group reads before it binds it (`net = tower(net, ...)` reads `net`).
        read_first: set[str] = set()
        bound: set[str] = set()
        for st in group:
            read_first |= (st.uses & local) - bound
            bound |= st.defs
        inputs = sorted(read_first)
        for bad in (self.labels, self.mode):
            if bad and bad in inputs:
                raise Unsupported(f"`{described}(...)` reads `{bad}`: not migrated", first.line)
        later = {
            name
            for st in stmts
            if id(st) not in members
            and st.kind != StmtKind.DEAD
            for name in st.uses
        } | {plan.output}
        # Each input must be bound before the group (a later rebinding of the same name is not it).
        before = {self.features, self.params} | {n for n in (self.labels, self.mode) if n}
        before |= {n for st in stmts if position[id(st)] < position[id(first)] for n in st.defs}
        late = sorted(set(inputs) - before)
        if late:
            raise Unsupported(f"`{described}(...)`: its inputs are computed after it ({', '.join(late)})", first.line)
        if objects & later:
            raise Unsupported(f"`{described}(...)`: the object it returns is used beyond reading its outputs", first.line)
        outputs = sorted((defs - objects) & later)
        if not outputs:
            raise Unsupported(f"`{described}(...)`: nothing the model computes reads its result", first.line)
        base = snake(described.rsplit(".", 1)[-1]) or "tf1_model"
        attr = self.unique_attr(base)
        method = f"_{attr}_tf1"
        rewriter = _ScopedRewriter(self)
        body = [self._rewritten(st, rewriter) for st in group]
        params = inputs + (["training"] if rewriter.training else [])
        plan.scoped.append((attr, method, params, body, outputs))
        target = ", ".join(outputs)
        args = ", ".join(f"{name}={name}" for name in inputs)
        if rewriter.training:
            args = ", ".join(filter(None, [args, "training=training"]))
        out[id(first)] = cst.parse_statement(f"{target} = self.{attr}({args})\n")  # type: ignore[assignment]
        for st in group[1:]:
            out[id(st)] = None
        return out
