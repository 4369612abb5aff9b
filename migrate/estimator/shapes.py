"""Statement shapes: the model_fn body -> a straight list of one-statement lines the data flow reads.

`StatementShapes._flatten` inlines model-building helpers, dissolves `with tf.variable_scope`,
`arg_scope` and `control_dependencies(update_ops)` blocks (keeping each line's TF1 scope), turns
mode and Python-value `if`s into conditional expressions, splits `Optimizer(...).minimize(...)`,
records the EVAL/PREDICT branches' returns, and drops what has no TF2 job (logging loops, a TPU
`CrossShardOptimizer` branch, init_from_checkpoint blocks, which `checkpoints` records).
"""

from __future__ import annotations

from ..cst_on_demand import Transformer, Visitor, cst

from ..inline import InlineError, inline
from ..names import names_in
from .analysis import Analysis
from .hoist import hoist_helper_call, nested_helper_call
from .plan import Plan, Stmt, Unsupported, declining_at
from .syntax import assigned_names, bind_args, defs_of, first_match, is_docstring, single_target
from .tables import CONTRIB_LAYERS, FUNCTIONAL_LAYERS, MODEL_BUILDING, MODEL_BUILDING_PREFIXES, NAME_SCOPES, OPTIMIZERS, TF1_RNN_FUNCTIONS, VARIABLE_SCOPES
from ..cst_walk import walk


def is_logging_call(call: cst.Call, analyzer: Analysis) -> bool:
    """`tf.logging.info(...)`, absl's `logging.info(...)` (TFM102's rewrite of it), `print(...)`."""
    key = analyzer.canonical(call.func) or ""
    if key.startswith("logging."):
        return True
    root = call.func
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in ("logging", "absl", "print")


def logging_only(stmt: cst.BaseStatement, analyzer: Analysis) -> bool:
    """A `for` loop (BERT's `for var in tvars: tf.logging.info(...)`) that only builds and logs
    messages: logging calls, and assignments of strings, maybe under `if`s."""
    if not isinstance(stmt, cst.For) or stmt.orelse is not None:
        return False

    def quiet(body: list[cst.BaseStatement]) -> bool:
        for inner in body:
            if isinstance(inner, cst.If):
                if not quiet(list(inner.body.body)) or (inner.orelse is not None and not quiet(list(inner.orelse.body.body))):  # type: ignore[attr-defined,union-attr]
                    return False
                continue
            if not isinstance(inner, cst.SimpleStatementLine):
                return False
            for small in inner.body:
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and is_logging_call(small.value, analyzer):
                    continue
                if isinstance(small, cst.Assign) and isinstance(small.value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                    continue
                return False
        return True

    return quiet(list(stmt.body.body))  # type: ignore[attr-defined]


class ArgScopeDefaults(Transformer):
    """Adds the enclosing `arg_scope`s' defaults to the calls of their functions, innermost scope
    first; arguments the call gives (by keyword or position) win, as in slim."""

    def __init__(self, analyzer: Analysis) -> None:
        self.a = analyzer

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        key = self.a.canonical(original.func)
        if key is None:
            return updated
        positional = CONTRIB_LAYERS[key][1] if key in CONTRIB_LAYERS else FUNCTIONAL_LAYERS.get(key, (None, ()))[1]
        bound = bind_args(original, ("inputs",) + tuple(positional)) or {}
        given = set(bound) | {arg.keyword.value for arg in original.args if arg.keyword is not None}
        added: list[cst.Arg] = []
        for keys, defaults in reversed(self.a.arg_scopes):
            if key not in keys:
                continue
            for arg in defaults:
                if arg.keyword.value not in given:  # type: ignore[union-attr]
                    given.add(arg.keyword.value)  # type: ignore[union-attr]
                    added.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        if not added:
            return updated
        args = list(updated.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(args=args + added)


def _names_in_lines(lines: list[cst.SimpleStatementLine]) -> set[str]:
    """The names the flattened model_fn's `lines` mention (what a hoist or an inline must not reuse)."""
    return {name for line in lines for name in names_in(line)}


class StatementShapes:
    """`ModelFnAnalyzer`'s part: statement normalisation (see the module docstring)."""

    def _needs_inline(self, fn: cst.FunctionDef, seen: frozenset[str] = frozenset()) -> bool:
        """The helper builds part of the model: it creates layers or variables, opens scopes, makes
        the optimizer or the loss, or calls a helper that does. Plain tensor helpers (a `gelu`)
        stay calls."""
        found = False
        analyzer = self

        class Visit(Visitor):
            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                key = analyzer.canonical(node.func)
                if key is not None and (key.startswith(MODEL_BUILDING_PREFIXES) or key in MODEL_BUILDING):
                    found = True
                elif isinstance(node.func, cst.Name) and node.func.value in analyzer.module_fns:
                    name = node.func.value
                    if name not in seen and analyzer._needs_inline(analyzer.module_fns[name], seen | {fn.name.value}):
                        found = True

        walk(fn.body, Visit())
        return found

    def _decline_tf1_rnns(self, lines: list[cst.SimpleStatementLine]) -> None:
        """A TF1 RNN cell (`tf.nn.rnn_cell.*`, `tf.contrib.rnn.*`) or driver (`tf.nn.dynamic_rnn`)
        makes its variables when first called, under the graph's variable store, which a Keras
        model's `call` does not have: the model_fn is hosted as written."""

        def tf1_rnn(call: cst.Call) -> str | None:
            key = self.canonical(call.func)
            if key is not None and (key.startswith(("nn.rnn_cell.", "contrib.rnn.")) or key in TF1_RNN_FUNCTIONS):
                return key
            return None

        for line in lines:
            found = first_match(line, tf1_rnn)
            if found is not None:
                raise Unsupported(f"the TF1 RNN `tf.{found}` is not migrated yet", line)

    def _builds_model(self, call: cst.Call) -> bool:
        """`call` calls a module-level helper of this file that builds part of the model (inlined)."""
        if not isinstance(call.func, cst.Name):
            return False
        fn = self.module_fns.get(call.func.value)
        return fn is not None and fn is not self.fn and fn.name.value not in self.foreign and self._needs_inline(fn)

    def _hoist_nested_helper(
        self, stmt: cst.SimpleStatementLine, before: list[cst.SimpleStatementLine]
    ) -> list[cst.SimpleStatementLine] | None:
        """`h = tf.nn.relu(helper(x))` -> `helper_result = helper(x)`, `h = tf.nn.relu(helper_result)`
        (`hoist.py`), so the helper is inlined; declines where that would reorder or add calls."""
        call = nested_helper_call(stmt, self._builds_model)
        if call is None:
            return None
        helper = call.func.value  # type: ignore[attr-defined]
        taken = names_in(self.module) | _names_in_lines(before)
        name, index = f"{helper}_result", 1
        while name in taken:
            index += 1
            name = f"{helper}_result_{index}"
        hoisted = hoist_helper_call(stmt, call, name)
        if hoisted is None:
            raise Unsupported(
                f"the helper `{helper}` builds part of the model and is called inside an expression that "
                "runs it conditionally or after other calls: tfmigrate cannot move it out to inline it"
            )
        return list(hoisted)

    def _inline_helper(
        self, stmt: cst.SimpleStatementLine, before: list[cst.SimpleStatementLine]
    ) -> tuple[str, list[cst.BaseStatement]] | None:
        """The helper `stmt` calls, inlined (`inline.py`), renaming its locals away from the names
        the flattened model_fn `before` it binds (a helper called twice makes two sets of weights)."""
        if len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        if not (isinstance(small, cst.Expr) or (isinstance(small, cst.Assign) and len(small.targets) == 1)):
            return None
        call = small.value
        if not (isinstance(call, cst.Call) and self._builds_model(call)):
            return None
        fn = self.module_fns[call.func.value]  # type: ignore[attr-defined]
        name = fn.name.value
        if name in self._inlining:
            raise Unsupported(f"`{name}` calls itself")
        try:
            statements = inline(stmt, call, fn, self.fn, _names_in_lines(before))
        except InlineError as exc:
            raise Unsupported(f"the helper {exc} (it builds part of the model, so it would have to be inlined)") from None
        if name not in self.inlined:
            self.inlined.append(name)
        return name, statements

    def _rescoped(self, old: cst.SimpleStatementLine, new: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """`new` replaces `old`: it keeps `old`'s TF1 variable scope."""
        if new is not old and id(old) in self.scope_of:
            self.scope_of[id(new)] = self.scope_of[id(old)]
        return new

    def _extend_conditional(
        self, out: list[cst.SimpleStatementLine], inner: list[cst.SimpleStatementLine], test: cst.BaseExpression
    ) -> None:
        """Appends the flattened body of `if <test>:` (no else) to `out`, each line through
        `_conditional` against what `out` defined before it."""
        defined = {self.features} | {n for line in out for n in defs_of(line)}
        out.extend(self._rescoped(line, self._conditional(line, test, defined)) for line in inner)

    def _conditional(self, stmt: cst.SimpleStatementLine, test: cst.BaseExpression, defined: set[str]) -> cst.SimpleStatementLine:
        """`if is_training: x = f(x)` -> `x = f(x) if is_training else x`: a training-only rewrite of
        a value the model already has (BERT's dropout) must not run in evaluation."""
        small = stmt.body[0] if len(stmt.body) == 1 else None
        if not (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value in defined
        ):
            return stmt
        target = small.targets[0].target
        value = cst.IfExp(test=test, body=small.value, orelse=cst.Name(target.value))
        return stmt.with_changes(body=[small.with_changes(value=value)])

    def _split_chained_minimize(self, stmt: cst.SimpleStatementLine) -> list[cst.BaseStatement] | None:
        """`train_op = tf.train.AdamOptimizer(0.02).minimize(loss, ...)` -> `optimizer = ...` and
        `train_op = optimizer.minimize(loss, ...)`, the two statements the analysis reads."""
        small = stmt.body[0] if len(stmt.body) == 1 else None
        value = getattr(small, "value", None)
        if not (
            isinstance(small, (cst.Assign, cst.Expr))
            and isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("minimize", "apply_gradients", "compute_gradients")
            and isinstance(value.func.value, cst.Call)
            and self.call_key(value.func.value) in OPTIMIZERS
        ):
            return None
        taken = names_in(self.fn)
        name = "optimizer"
        index = 1
        while name in taken:
            name = f"optimizer_{index}"
            index += 1
        make = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value.func.value)],
            leading_lines=stmt.leading_lines,
        )
        use = stmt.with_changes(
            body=[small.with_changes(value=value.with_changes(func=value.func.with_changes(value=cst.Name(name))))],
            leading_lines=[],
        )
        return [make, use]

    def _python_switch(self, stmt: cst.If, out: list[cst.SimpleStatementLine], scope: str) -> bool:
        """`if num_warmup_steps:` around assignments: a switch on a Python value (a TF1 graph
        tensor cannot be a Python `if` test). Names it rebinds become `x = new if test else x`;
        names it introduces are computed either way (unused when the switch is off). With an
        `else:` assigning the same names (BERT's `if 'is_real_example' in features: ... else:
        ...`), each becomes `x = a if test else b`."""
        test = stmt.test
        key_test = (  # `'key' in features`: a Python test on the features dict
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn))
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == self.features
            and not names_in(test.left) & {self.features, self.labels, self.mode}
        )
        if not key_test and names_in(test) & {self.features, self.labels, self.mode} - {None}:
            return False
        inner: list[cst.SimpleStatementLine] = []
        self._flatten(list(stmt.body.body), inner, scope)  # type: ignore[attr-defined]
        if not all(len(line.body) == 1 and isinstance(line.body[0], cst.Assign) for line in inner):
            return False
        if stmt.orelse is not None:
            if not isinstance(stmt.orelse, cst.Else):
                return False
            other: list[cst.SimpleStatementLine] = []
            self._flatten(list(stmt.orelse.body.body), other, scope)  # type: ignore[attr-defined]
            targets = [single_target(line) for line in inner]
            if len(other) != len(inner) or None in targets or targets != [single_target(line) for line in other]:
                return False
            for line, alt in zip(inner, other):
                small = line.body[0]
                value = cst.IfExp(test=test, body=small.value, orelse=alt.body[0].value)  # type: ignore[attr-defined]
                out.append(self._rescoped(line, line.with_changes(body=[small.with_changes(value=value)])))
            return True
        self._extend_conditional(out, inner, stmt.test)
        return True

    # -- statement flattening ---------------------------------------------------------------
    def _flatten(self, body: list[cst.BaseStatement], out: list[cst.SimpleStatementLine], scope: str = "") -> None:
        for stmt in body:
            start = len(out)
            with declining_at(stmt):
                self._flatten_statement(stmt, out, scope)
            for line in out[start:]:
                self._came_from(line, stmt)

    def _flatten_statement(self, stmt: cst.BaseStatement, out: list[cst.SimpleStatementLine], scope: str) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            if self.arg_scopes:
                stmt = stmt.visit(ArgScopeDefaults(self))
            split = self._split_chained_minimize(stmt)
            if split is not None:
                self._flatten(split, out, scope)
                return
            hoisted = self._hoist_nested_helper(stmt, out)
            if hoisted is not None:
                self._flatten(hoisted, out, scope)  # type: ignore[arg-type]
                return
            inlined = self._inline_helper(stmt, out)
            if inlined is not None:
                self._inlining.append(inlined[0])
                self._flatten(inlined[1], out, scope)
                self._inlining.pop()
                return
            small = stmt.body[0] if len(stmt.body) == 1 else None
            if isinstance(small, cst.Del) and names_in(small.target) <= {self.params, self.labels, self.mode} - {None}:
                return  # `del params`: the TPU reference models' "unused argument"
            target = single_target(stmt) if small is not None else None
            if target is not None:
                if isinstance(small.value, cst.Dict):  # type: ignore[union-attr]
                    self.dict_literals[target] = small.value  # type: ignore[union-attr]
                mode = self.is_mode_compare(small.value)  # type: ignore[union-attr]
                if mode is not None:
                    self.mode_aliases[target] = mode
            if scope:
                self.scope_of[id(stmt)] = scope
            out.append(stmt)
            return
        if isinstance(stmt, cst.FunctionDef):
            self.local_fns[stmt.name.value] = stmt  # e.g. a metric_fn defined inside model_fn
            return
        if logging_only(stmt, self):
            return  # `for var in tvars: tf.logging.info(...)`: nothing the model computes
        if isinstance(stmt, cst.If):
            if self._skippable_tpu_branch(stmt):
                return
            if stmt.orelse is None and self._mapped_init_checkpoint_block(stmt):
                return
            if isinstance(stmt.test, cst.Name) and stmt.test.value in ("True", "False"):
                # A helper inlined with a constant flag (`encode(ids, mask, False)`).
                if stmt.test.value == "True":
                    self._flatten(list(stmt.body.body), out, scope)  # type: ignore[attr-defined]
                elif isinstance(stmt.orelse, cst.If):
                    self._flatten([stmt.orelse], out, scope)
                elif stmt.orelse is not None:
                    self._flatten(list(stmt.orelse.body.body), out, scope)  # type: ignore[attr-defined]
                return
            mode = self._mode_test(stmt.test)
            if mode == (True, "estimator.ModeKeys.TRAIN") and stmt.orelse is None:
                inner_lines: list[cst.SimpleStatementLine] = []
                self._flatten(list(stmt.body.body), inner_lines, scope)  # type: ignore[attr-defined]
                self._extend_conditional(out, inner_lines, stmt.test)
                return
            if mode == (True, "estimator.ModeKeys.EVAL") and stmt.orelse is None:
                inner: list[cst.SimpleStatementLine] = []
                self._flatten(list(stmt.body.body), inner, scope)  # type: ignore[attr-defined]
                if not inner or not isinstance(inner[-1].body[0], cst.Return) or self.eval_return is not None:
                    raise Unsupported("a `mode == ModeKeys.EVAL` branch that does not end with `return <spec>`")
                self.eval_return = inner[-1].body[0]  # type: ignore[assignment]
                out.extend(inner[:-1])
                return
            if mode == (True, "estimator.ModeKeys.PREDICT") and stmt.orelse is None and self.predict_return is None:
                inner = []
                self._flatten(list(stmt.body.body), inner, scope)  # type: ignore[attr-defined]
                if not inner or not isinstance(inner[-1].body[0], cst.Return):
                    raise Unsupported("a `mode == ModeKeys.PREDICT` branch that does not end with `return <spec>`")
                self.predict_return = inner[-1].body[0]  # type: ignore[assignment]
                self.predict_stmts = inner[:-1]
                return
            if mode is None and self._init_checkpoint_block(stmt):
                return
            if mode is not None:
                op = "==" if mode[0] else "!="
                raise Unsupported(f"a `mode {op} ModeKeys.{mode[1].rsplit('.', 1)[-1]}` branch in model_fn")
            if self._python_switch(stmt, out, scope):
                return
            raise Unsupported("an `if` in model_fn that is not a TRAIN-mode or use_tpu switch")
        if isinstance(stmt, cst.With):
            scoped = self._arg_scope(stmt)
            if scoped is not None:
                self.arg_scopes.append(scoped)
                self._flatten(list(stmt.body.body), out, scope)  # type: ignore[attr-defined]
                self.arg_scopes.pop()
                return
            if self._update_ops_block(stmt):
                self._flatten(list(stmt.body.body), out, scope)  # type: ignore[attr-defined]
                return
            inner_scope = self._scope_block(stmt, scope)
            if inner_scope is not None:
                self._flatten(list(stmt.body.body), out, inner_scope)  # type: ignore[attr-defined]
                return
        raise Unsupported(f"`{type(stmt).__name__}` statement in model_fn")

    def _arg_scope(self, stmt: cst.With) -> tuple[set[str], list[cst.Arg]] | None:
        """`with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=..., ...):` ->
        (the functions, the defaults), applied to their calls inside the block."""
        if len(stmt.items) != 1 or stmt.items[0].asname is not None:
            return None
        call = stmt.items[0].item
        if not (isinstance(call, cst.Call) and (self.canonical(call.func) or "").endswith(".arg_scope")):
            return None
        if not call.args or call.args[0].keyword is not None or not isinstance(call.args[0].value, (cst.List, cst.Tuple)):
            raise Unsupported("`arg_scope` without a list of functions")
        keys = set()
        for element in call.args[0].value.elements:  # type: ignore[attr-defined]
            key = self.canonical(element.value)
            if key is None:
                raise Unsupported(f"`arg_scope` over `{self.code(element.value)}`, not a TF layer function")
            keys.add(key)
        defaults = [arg for arg in call.args[1:] if arg.keyword is not None and not arg.star]
        if len(defaults) != len(call.args) - 1:
            raise Unsupported("`arg_scope` with positional or ** arguments")
        return keys, defaults

    def _update_ops_block(self, stmt: cst.With) -> bool:
        """`with tf.control_dependencies(update_ops):` around minimize: Keras layers update their own
        statistics, so the block dissolves; its presence decides whether TF1 BatchNorm updated them."""
        if len(stmt.items) != 1 or stmt.items[0].asname is not None:
            return False
        call = stmt.items[0].item
        if not (isinstance(call, cst.Call) and self.canonical(call.func) == "control_dependencies" and len(call.args) == 1):
            return False
        arg = call.args[0].value
        if isinstance(arg, cst.Call) and self._is_update_ops(arg):
            self.update_ops_dependency = True
            return True
        if isinstance(arg, cst.Name):
            self.update_ops_dependency_names.add(arg.value)
            self.update_ops_dependency = True
            return True
        return False

    def _scope_block(self, stmt: cst.With, scope: str) -> str | None:
        """`with tf.variable_scope('name'):` -> the nested TF1 scope; `tf.name_scope` -> unchanged
        (it names ops, not variables); anything else -> None."""
        if len(stmt.items) != 1:
            return None
        call = stmt.items[0].item
        if not isinstance(call, cst.Call):
            return None
        key = self.canonical(call.func)
        if key in NAME_SCOPES:
            return scope
        if key not in VARIABLE_SCOPES:
            return None
        if stmt.items[0].asname is not None:
            raise Unsupported("`with tf.variable_scope(...) as scope:` (the scope object) is not migrated")
        bound = bind_args(call, ("name_or_scope", "default_name", "values", "initializer", "regularizer", "caching_device",
                             "partitioner", "custom_getter", "reuse", "dtype", "use_resource", "constraint", "auxiliary_name_scope"))
        if bound is None:
            raise Unsupported("unexpected arguments to `tf.variable_scope`")
        for name in ("initializer", "regularizer", "custom_getter", "dtype", "constraint"):
            if name in bound:
                raise Unsupported(f"`tf.variable_scope({name}=...)` is not migrated (set it on each variable)")
        reuse = bound.get("reuse")
        if reuse is not None and not (isinstance(reuse, cst.Name) and reuse.value in ("None", "False")):
            raise Unsupported(
                "`tf.variable_scope(reuse=...)` in the model_fn's own body is not migrated yet (opened in a helper "
                "function the model_fn calls, it runs in a `tfm.tf1.VariableScopeLayer`)"
            )
        name = bound.get("name_or_scope")
        if isinstance(name, cst.SimpleString):
            leaf = str(name.evaluated_value)
        elif (name is None or (isinstance(name, cst.Name) and name.value == "None")) and isinstance(
            bound.get("default_name"), cst.SimpleString
        ):
            # A default name is made unique in its parent scope, as TF1 did.
            base = f"{scope}/{bound['default_name'].evaluated_value}" if scope else str(bound["default_name"].evaluated_value)  # type: ignore[union-attr]
            count = self.scope_counts.get(base, 0)
            self.scope_counts[base] = count + 1
            return base if count == 0 else f"{base}_{count}"
        else:
            raise Unsupported("`tf.variable_scope` with a name that is not a string literal")
        return f"{scope}/{leaf}" if scope else leaf

    def _is_update_ops(self, node: cst.BaseExpression) -> bool:
        """`tf.get_collection(tf.GraphKeys.UPDATE_OPS)`."""
        return (
            isinstance(node, cst.Call)
            and self.canonical(node.func) == "get_collection"
            and len(node.args) >= 1
            and self.canonical(node.args[0].value) == "GraphKeys.UPDATE_OPS"
        )

    def _skippable_tpu_branch(self, stmt: cst.If) -> bool:
        """`if use_tpu: optimizer = CrossShardOptimizer(optimizer)`: the strategy does the all-reduce."""
        if stmt.orelse is not None:
            return False
        inner = list(stmt.body.body)  # type: ignore[attr-defined]
        if not inner:
            return False
        for line in inner:
            if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
                return False
            small = line.body[0]
            if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)):
                return False
            if self.canonical(small.value.func) != "tpu.CrossShardOptimizer":
                return False
        return True

    # -- steps of `analyze()` -----------------------------------------------------------------
    def _lines(self, plan: Plan) -> list[cst.SimpleStatementLine]:
        """The model_fn's body as straight lines (its docstring -> `plan.docstring`), ending with
        its `return`."""
        body = list(self.fn.body.body)  # type: ignore[attr-defined]
        if body and is_docstring(body[0]):
            plan.docstring = body[0].body[0].value.evaluated_value  # type: ignore[attr-defined]
            body = body[1:]
        body = self._tpu_spec_switch(self._spec_chain(body))
        lines: list[cst.SimpleStatementLine] = []
        self._flatten(body, lines)
        self._decline_tf1_rnns(lines)
        plan.absorbed_functions.extend(self.inlined)
        if not lines or not isinstance(lines[-1].body[0], cst.Return):
            raise Unsupported("model_fn does not end with `return <EstimatorSpec>`", lines[-1] if lines else None)
        return lines

    def _statements(self, lines: list[cst.SimpleStatementLine]) -> list[Stmt]:
        """A `Stmt` for each line before the `return`: one assignment or expression statement each."""
        stmts: list[Stmt] = []
        for line in lines[:-1]:
            if len(line.body) != 1:
                raise Unsupported("several statements on one line in model_fn", line)
            small = line.body[0]
            if isinstance(small, cst.Return):
                raise Unsupported("more than one `return` in model_fn", line)
            if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr)):
                raise Unsupported(f"`{type(small).__name__}` statement in model_fn", line)
            value = getattr(small, "value", None)
            uses = names_in(value) if value is not None else set()
            if isinstance(small, cst.AugAssign):
                uses |= names_in(small.target)
            stmts.append(Stmt(line, small, assigned_names(small), uses))
        return stmts
