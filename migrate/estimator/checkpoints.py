"""`tf.train.init_from_checkpoint` (plain, under `if init_checkpoint:`, or in a TPU `scaffold_fn`)
-> `plan.init_checkpoints`; a `tf.train.Scaffold` whose arguments have no job in TF2 is dropped.
"""

from __future__ import annotations

from ..cst_on_demand import cst

from ..names import names_in
from .plan import Plan, Unsupported
from .syntax import any_call, bind_args, is_docstring


class CheckpointsAndScaffold:
    """`ModelFnAnalyzer`'s part: `tf.train.init_from_checkpoint` and scaffolds."""

    def _init_from_checkpoint(
        self, call: cst.BaseExpression, condition: cst.BaseExpression | None, after_optimizer: bool = False
    ) -> bool:
        """Records `tf.train.init_from_checkpoint(ckpt, assignment_map)` (under `condition`)."""
        if not (isinstance(call, cst.Call) and self.canonical(call.func) == "train.init_from_checkpoint"):
            return False
        bound = bind_args(call, ("ckpt_dir_or_file", "assignment_map"))
        if bound is None or set(bound) != {"ckpt_dir_or_file", "assignment_map"}:
            raise Unsupported("unexpected arguments to `tf.train.init_from_checkpoint`")
        uses = names_in(call) | (names_in(condition) if condition is not None else set())
        slots = ", optimizer_variables=True" if after_optimizer else ""
        self.init_checkpoints.append(
            (
                None if condition is None else self.code(condition),
                f"{self.code(bound['ckpt_dir_or_file'])}, {self.code(bound['assignment_map'])}{slots}",
                uses,
            )
        )
        return True

    def _mapped_init_checkpoint_block(self, stmt: cst.If) -> bool:
        """BERT's block, under `if init_checkpoint:`:
            (assignment_map, initialized_variable_names) = get_assignment_map_from_checkpoint(tvars, init_checkpoint)
            if use_tpu:
              def tpu_scaffold():
                tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
                return tf.train.Scaffold()
              scaffold_fn = tpu_scaffold
            else:
              tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
        Either way the model's variables start from the checkpoint -> one recorded init_from_checkpoint
        (the map helper, one that lists the checkpoint's variables, becomes `tfm.MATCHING_VARIABLES`)."""
        body = list(stmt.body.body)  # type: ignore[attr-defined]
        matching: set[str] = set()
        calls: list[cst.Call] = []
        scaffold_var = None
        for inner in body:
            small = inner.body[0] if isinstance(inner, cst.SimpleStatementLine) and len(inner.body) == 1 else None
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and self._matching_map_helper(small.value):
                target = small.targets[0].target
                first = target.elements[0].value if isinstance(target, (cst.Tuple, cst.List)) else target
                if not isinstance(first, cst.Name):
                    return False
                matching.add(first.value)
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.canonical(small.value.func) == "train.init_from_checkpoint":
                calls.append(small.value)
            elif isinstance(inner, cst.If) and isinstance(inner.orelse, cst.Else):
                branches = [list(inner.body.body), list(inner.orelse.body.body)]  # type: ignore[attr-defined]
                found = []
                for branch in branches:
                    fns = {s.name.value: s for s in branch if isinstance(s, cst.FunctionDef)}
                    for line in branch:
                        small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
                        if isinstance(line, cst.FunctionDef):
                            continue
                        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.canonical(small.value.func) == "train.init_from_checkpoint":
                            found.append(small.value)
                        elif (
                            isinstance(small, cst.Assign)
                            and isinstance(small.value, cst.Name)
                            and small.value.value in fns
                            and isinstance(small.targets[0].target, cst.Name)
                        ):
                            fn_body = [s for s in fns[small.value.value].body.body if not is_docstring(s)]  # type: ignore[attr-defined]
                            inits = [s.body[0].value for s in fn_body[:-1] if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr)]
                            if len(inits) != len(fn_body) - 1 or not all(
                                isinstance(c, cst.Call) and self.canonical(c.func) == "train.init_from_checkpoint" for c in inits
                            ):
                                return False
                            found.extend(inits)  # type: ignore[arg-type]
                            scaffold_var = small.targets[0].target.value
                        else:
                            return False
                if len(found) != 2 or not found[0].deep_equals(found[1]):
                    return False
                calls.append(found[0])
            else:
                return False
        if not calls:
            return False
        for call in calls:
            args = list(call.args)
            if len(args) == 2 and isinstance(args[1].value, cst.Name) and args[1].value.value in matching:
                call = call.with_changes(args=[args[0], args[1].with_changes(value=cst.parse_expression(f"{self.tfm}.MATCHING_VARIABLES"))])
            self._init_from_checkpoint(call, stmt.test)
        if scaffold_var is not None:
            self.scaffold_vars.add(scaffold_var)
        return True

    def _matching_map_helper(self, call: cst.Call) -> bool:
        """A module-level helper that builds an assignment map by listing the checkpoint's
        variables (`tf.train.list_variables`), BERT's `get_assignment_map_from_checkpoint`."""
        fn = self.module_fns.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if fn is None or not any_call(fn, lambda node: self.canonical(node.func) == "train.list_variables"):
            return False
        if fn.name.value not in self.inlined:
            self.inlined.append(fn.name.value)  # absorbed: it goes when nothing else calls it
        return True

    def _init_checkpoint_block(self, stmt: cst.If) -> bool:
        """`if init_checkpoint: tf.train.init_from_checkpoint(...)` (nothing else in the block)."""
        if stmt.orelse is not None:
            return False
        lines = list(stmt.body.body)  # type: ignore[attr-defined]
        calls = []
        for line in lines:
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)):
                return False
            calls.append(line.body[0].value)
        if not calls or not all(isinstance(c, cst.Call) and self.canonical(c.func) == "train.init_from_checkpoint" for c in calls):
            return False
        for call in calls:
            self._init_from_checkpoint(call, stmt.test)
        return True

    def _scaffold_fn(self, name: str, plan: "Plan") -> None:
        """`scaffold_fn=f` where `f` only calls init_from_checkpoint and returns `tf.train.Scaffold()`."""
        fn = self.local_fns.get(name)
        if fn is None:
            fn = next((s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
            if fn is None:
                raise Unsupported(f"scaffold_fn `{name}` is not defined in this file")
            plan.absorbed_functions.append(name)
        body = list(fn.body.body)  # type: ignore[attr-defined]
        if body and is_docstring(body[0]):
            body = body[1:]
        ok = bool(body) and not fn.params.params
        for index, line in enumerate(body):
            small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
            if index == len(body) - 1 and isinstance(small, cst.Return):
                value = small.value
                ok = ok and value is not None and self._plain_scaffold(value)
            elif not (isinstance(small, cst.Expr) and self._init_from_checkpoint(small.value, None, after_optimizer=True)):
                ok = False
        if not ok:
            raise Unsupported(
                f"scaffold_fn `{name}` does more than `tf.train.init_from_checkpoint(...)` + `return tf.train.Scaffold()`"
            )

    # Scaffold arguments whose TF1 job TF2 does itself: variables and tables are initialized when
    # they are created, summaries are written by the runtime's writers, and there is no session to
    # wait for. Each is accepted with the values TF1 programs give it.
    _SCAFFOLD_INIT_OPS = frozenset({
        "global_variables_initializer", "local_variables_initializer", "tables_initializer",
        "initializers.global_variables", "initializers.local_variables", "initializers.tables_initializer",
        "variables_initializer", "report_uninitialized_variables", "no_op",
    })
    _SCAFFOLD_OPS = {
        "init_op": "init", "ready_op": "init", "ready_for_local_init_op": "init", "local_init_op": "init",
        "summary_op": "summary",
    }

    def _plain_scaffold(self, node: cst.BaseExpression) -> bool:
        """`tf.train.Scaffold(...)` whose arguments have no job in TF2 (see `_SCAFFOLD_OPS`) -> True
        (it can go); one that configures something TF2 would do differently -> Unsupported, naming it;
        anything else -> False."""
        if not (isinstance(node, cst.Call) and self.canonical(node.func) == "train.Scaffold"):
            return False
        for arg in node.args:
            name = arg.keyword.value if arg.keyword else None
            if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                continue
            kind = self._SCAFFOLD_OPS.get(name or "")
            if kind == "init" and self._init_ops_only(arg.value):
                continue
            if kind == "summary" and isinstance(arg.value, cst.Call) and self.canonical(arg.value.func) in (
                "summary.merge_all", "contrib.summary.all_summary_ops"
            ):
                continue
            if name == "saver":
                raise Unsupported(
                    "`tf.train.Scaffold(saver=...)`: TF2 checkpoints every trackable variable; set how many "
                    "checkpoints to keep with RunConfig(keep_checkpoint_max=...) instead of a Saver"
                )
            raise Unsupported(f"`tf.train.Scaffold({name or '...'}=...)` is not migrated (only TF1 initializer and summary ops are)")
        return True

    def _init_ops_only(self, node: cst.BaseExpression) -> bool:
        """An initializer op (or `tf.group(...)` of them) that TF2 has no need of."""
        if not isinstance(node, cst.Call):
            return False
        key = self.canonical(node.func)
        if key in ("group", "control_flow_ops.group"):
            return all(not arg.star and arg.keyword is None and self._init_ops_only(arg.value) for arg in node.args)
        return key in self._SCAFFOLD_INIT_OPS
