"""TFM104: a TF 1.x program that runs graphs in a `Session` keeps TF1's graph mode on TF2."""

from __future__ import annotations

import ast
import functools

import libcst as cst

from tfmigrate.names import AliasTable, SourceLines, ast_dotted, canonical_name
from tfmigrate.parsing import indexed, parse
from tfmigrate.rule import ADD_IMPORTS, RUNTIME_ALIAS, RUNTIME_MODULE, Rule
from tfmigrate.textpass import SourceView, TextPlan

# What cannot run eagerly: TF1's sessions and the placeholders they feed.
GRAPH_ONLY = frozenset({
    "Session", "InteractiveSession", "placeholder",
    "train.MonitoredTrainingSession", "train.MonitoredSession", "train.SingularMonitoredSession",
})
# What sets the default graph's state as the module is imported (eagerly, `set_random_seed` would
# seed the eager context, and the graph the switch makes later would draw unseeded).
_GRAPH_STATE = frozenset({"set_random_seed", "random.set_random_seed", "reset_default_graph"})
_SWITCHES = frozenset({"disable_eager_execution", "disable_v2_behavior", "enable_eager_execution", "enable_v2_behavior"})
# The runtime's names for TF1 graph code: the hosted estimator (its canned estimators aside: Keras
# models inside), TF1 layers and slim, their configs and helpers; they run in graph mode too. Its
# others (`fit`, `make_strategy`, `canned`) are Keras 3's, which has no graph mode, as has no Keras.
_GRAPH_RUNTIME = frozenset({"estimator", "legacy", "tf1", "RunConfig", "TPUConfig", "lookup", "initializers"})
_KERAS = frozenset({"keras"})  # (tf-keras, Keras 2, has a graph mode: `tfm.legacy.keras`)
NOTE = "# tfmigrate: TF1 graph mode, as under TF 1.x (Session/placeholder code cannot run eagerly)"


# What builds a serving input receiver: its function's placeholders are built in the graph the
# estimator's export makes (TF1 graph code that needs no switch), as are TF1's own builders'.
_RECEIVERS = frozenset({
    "estimator.export.ServingInputReceiver", "estimator.export.TensorServingInputReceiver",
    "estimator.export.build_raw_serving_input_receiver_fn", "estimator.export.build_parsing_serving_input_receiver_fn",
})


def _needs_graph(tree: ast.Module, names: AliasTable, tf: str, chains: set[str]) -> bool:
    """Whether the module feeds placeholders or runs sessions (`GRAPH_ONLY`, read off `chains`,
    its dotted names), outside the functions that build a serving input receiver (their
    placeholders are built in the export's graph) and `Session.reset(target)` (a static call
    that resets a TPU's containers, eagerly too)."""
    def graph_only(dotted: str) -> bool:
        return canonical_name(qualified(dotted, names, tf) or "") in GRAPH_ONLY

    graph_chains = {dotted for dotted in chains if graph_only(dotted)}  # (each chain qualified once)
    if not graph_chains:
        return False

    def builds_receiver(dotted: str) -> bool:
        full = qualified(dotted, names, tf) or ""
        hosted = full[len(RUNTIME_MODULE) + 1:] if full.startswith(RUNTIME_MODULE + ".") else None  # (`tfm.estimator.export.X`)
        return hosted in _RECEIVERS or canonical_name(full) in _RECEIVERS

    receiver_chains = {dotted for dotted in chains if builds_receiver(dotted)}

    def receiver(call: ast.AST) -> bool:
        return isinstance(call, ast.Call) and ast_dotted(call.func) in receiver_chains

    receivers: set[int] = set()
    if receiver_chains:  # (most modules build no receiver)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(receiver(call) for call in ast.walk(node)):
                receivers.add(id(node))
    elif not any(node.attr == "reset" for node in indexed(tree).get(ast.Attribute, ())):  # type: ignore[attr-defined]
        return True  # (`chains` are the tree's own: with nothing to skip, the walk below finds one)
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if id(node) in receivers:
            continue
        if isinstance(node, ast.Attribute) and node.attr == "reset" and isinstance(node.value, (ast.Attribute, ast.Name)):
            continue  # `tf.Session.reset(...)`
        if isinstance(node, (ast.Attribute, ast.Name)) and (dotted := ast_dotted(node)) and dotted in graph_chains:
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def switch_line(tf: str) -> str:
    return f"{tf}.compat.v1.disable_v2_behavior()"


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, either way round."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.ops) != 1:
        return False
    sides = [node.test.left, node.test.comparators[0]]
    return isinstance(node.test.ops[0], ast.Eq) and any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def _chains(nodes) -> list[str]:
    return [dotted for node in nodes if isinstance(node, (ast.Attribute, ast.Name)) and (dotted := ast_dotted(node))]


def keras_imports_added(ctx) -> bool:
    """Whether a rule of this pass asked for Keras 3 to be imported (a structural rule's Keras
    model): its chains do not resolve before the pass adds the import."""
    return any(item.module_name.split(".")[0] in _KERAS for item in ctx.codemod.scratch.get(ADD_IMPORTS, ()))


def dotted_names(tree: ast.Module) -> set[str]:
    """Every Name/Attribute chain's dotted name in the tree (`a`, `a.b`, `a.b.c`), once each, from
    the tree's index by node type (the walk other rules of the pass share)."""
    by_type = indexed(tree)
    names = {node.id for node in by_type.get(ast.Name, ())}  # type: ignore[attr-defined]
    names.update(dotted for node in by_type.get(ast.Attribute, ()) if (dotted := ast_dotted(node)))  # type: ignore[arg-type]
    return names


def _module_level(stmt: ast.stmt):
    """The nodes of a top-level statement that run when the module is imported (not in functions,
    lambdas or the main guard)."""
    stack: list[ast.AST] = [] if _is_main_guard(stmt) else [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(node.decorator_list if not isinstance(node, ast.Lambda) else ())
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def runs_eagerly(full: str) -> bool:
    """Keras (tf.keras included), or the runtime's names for Keras code: a migrated estimator's
    `tfm.fit`, a canned estimator (`tfm.estimator.DNNClassifier`, a Keras model inside)."""
    parts = full.split(".")
    if full.startswith(RUNTIME_MODULE + ".legacy."):
        return False  # TF 1.x's layers, cells and Keras (Keras 2's v1 API: TFM105), graph code
    if parts[0] in _KERAS or "keras" in parts:
        return True
    if not full.startswith(RUNTIME_MODULE + "."):
        return False
    if parts[2] == "estimator" and len(parts) > 3 and parts[3] != "Estimator":
        return parts[3].endswith(("Classifier", "Regressor", "Estimator"))
    return parts[2] not in _GRAPH_RUNTIME


def qualified(dotted: str, names: AliasTable, tf: str) -> str | None:
    """`names.qualify_dotted`, and the runtime's and TF's aliases the pass wrote before their
    imports (added at the end of the pass) bind them."""
    full = names.qualify_dotted(dotted)
    root, _, rest = dotted.partition(".")
    if full is None and root in (RUNTIME_ALIAS, tf):
        full = (RUNTIME_MODULE if root == RUNTIME_ALIAS else "tensorflow") + (f".{rest}" if rest else "")
    return full


def placement(tree: ast.Module, names: AliasTable, tf: str = "tf") -> tuple[str, int] | None:
    """Where the program turns graph mode on: ("main", index of the main guard in `tree.body`),
    ("top", how many top-level imports precede the switch), or None (no Session/placeholder code,
    a switch already, code that runs eagerly, or a module whose graphs some other entry runs)."""
    chains = dotted_names(tree)
    for dotted in chains:
        if dotted.rpartition(".")[2] in _SWITCHES:
            return None
        full = qualified(dotted, names, tf)
        if full is not None and runs_eagerly(full):
            return None
    if not _needs_graph(tree, names, tf, chains):
        return None
    # the first top-level statement that builds a graph (or seeds it) as the module is imported
    first = next((
        stmt for stmt in tree.body
        if any(canonical_name(qualified(d, names, tf) or "") in GRAPH_ONLY | _GRAPH_STATE for d in _chains(_module_level(stmt)))
    ), None)
    if first is not None:
        at = sum(1 for imp in tree.body if isinstance(imp, (ast.Import, ast.ImportFrom)) and imp.lineno < first.lineno)
        return ("top", at) if at else None  # (no import before it: TF comes from elsewhere)
    guard = next((i for i, stmt in enumerate(tree.body) if _is_main_guard(stmt)), None)
    return ("main", guard) if guard is not None else None


@functools.lru_cache(maxsize=8)  # (each estimator rule asks it of the same module's text)
def runs_session_code(code: str, tf: str) -> bool:
    """Whether a module with this text feeds placeholders or runs sessions itself (`GRAPH_ONLY`),
    code that needs TF1 graph mode whichever estimator it holds."""
    try:
        tree = parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return _needs_graph(tree, AliasTable.from_ast(tree, SourceLines(code)), tf, dotted_names(tree))


@functools.lru_cache(maxsize=8)  # (each estimator rule asks it of the same module's text)
def gets_the_switch(code: str, tf: str) -> bool:
    """Whether TFM104 would add `disable_v2_behavior()` to a module with this text (Session or
    placeholder code, no switch of its own, no Keras)."""
    try:
        tree = parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return placement(tree, AliasTable.from_ast(tree, SourceLines(code)), tf) is not None


class GraphModePrograms(Rule):
    """Keep TF 1.x's graph mode for a program that builds graphs to run in a `Session`.

    TF 1.x ran every program in graph mode; TF2 runs eagerly, where `tf.compat.v1.placeholder`
    and `Session.run` fail. A TF 1.x program whose code feeds placeholders or runs sessions
    (`Session`, `InteractiveSession`, `train.MonitoredTrainingSession`, ...) gets
    `tf.compat.v1.disable_v2_behavior()`, TF's own switch back to TF 1.x behaviour: as the first
    statement of its `if __name__ == "__main__":` block, or after its imports where the module
    builds a graph as it is imported, or seeds it (`tf.set_random_seed` run eagerly seeds the eager
    context, and the graph would draw unseeded). A module whose sessions run inside functions and
    that has no main block is left as is (the program's entry decides). Not where the file uses
    Keras 3 (`tf.keras` that TFM105 does not make TF 1.x's Keras 2, `tfm.legacy.keras`) or the
    runtime's Keras side (a TFM201/TFM301/TFM401 Keras model, `tfm.fit`, a canned estimator):
    Keras 3 has no graph mode. The hosted tier (`tfm.estimator`, `tfm.legacy`) runs TF1 graph
    code in either mode, as TF 2.15's Estimator did: the oracle runs a TF 1.x program with v2
    behaviour off, and so does its migration then. (A TF 2.15-spelled program trains to other
    numbers under the switch, on TF 2.15 and hosted alike.) Nor where the program already turns
    eager execution off or on. The program's other modules are not consulted: an entry file that
    switches runs what it imports in graph mode too.

    Guide: https://www.tensorflow.org/guide/migrate/migrate_tf2 (run TF1.x code in TF2)
    """

    CODE = "TFM104"
    SUMMARY = "TF 1.x Session/placeholder programs -> `tf.compat.v1.disable_v2_behavior()` at their entry (TF2 runs eagerly)"
    SAFE = True
    TRIGGERS = GRAPH_ONLY
    RUNS_AFTER = ("TFM101", "TFM102", "TFM103", "TFM105", "TFM201", "TFM301", "TFM302", "TFM401")

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if keras_imports_added(self.ctx):
            return updated
        code = updated.code
        tree = parse(code)
        where = placement(tree, AliasTable.from_ast(tree, SourceLines(code)), self.ctx.tf2_alias)
        if where is None:
            return updated
        tf = self.ctx.need_tf2()
        self.mark_changed()
        switch = cst.parse_statement(switch_line(tf) + "\n").with_changes(
            leading_lines=[cst.EmptyLine(comment=cst.Comment(NOTE))]
        )
        kind, at = where
        body = list(updated.body)
        if kind == "main":
            guard = [stmt for stmt in body if _is_cst_main_guard(stmt)][0]
            block = guard.body  # type: ignore[attr-defined]
            if isinstance(block, cst.SimpleStatementSuite):  # `if __name__ == "__main__": main()`: a block, for the note
                line = cst.SimpleStatementLine(body=block.body, trailing_whitespace=block.trailing_whitespace)
                block = cst.IndentedBlock(body=[switch, line])
            else:
                block = block.with_changes(body=[switch, *block.body])
            body[body.index(guard)] = guard.with_changes(body=block)  # type: ignore[attr-defined]
        else:
            index, seen = 0, 0
            for i, stmt in enumerate(body):
                if seen >= at:
                    break
                if isinstance(stmt, cst.SimpleStatementLine):
                    seen += sum(isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)
                    index = i + 1
            body.insert(index, switch)
        return updated.with_changes(body=body)

    def text_edits(self, view: SourceView) -> TextPlan | None:
        where = None if keras_imports_added(self.ctx) else placement(view.tree, view.names, self.ctx.tf2_alias)
        if where is None:
            return TextPlan()
        kind, at = where
        lines, tf = view.lines, self.ctx.tf2_alias
        if "\r" in view.source:
            return None  # the CST pass writes the file's own line ends
        if kind == "main":
            guard = view.tree.body[at]
            first = guard.body[0]  # type: ignore[attr-defined]
            indent = lines.prefix(first.lineno, first.col_offset)
            if first.lineno == guard.lineno or guard.test.end_lineno != guard.lineno or indent.strip():  # type: ignore[attr-defined]
                return None  # a one-line block, or a test across lines: the CST pass
            start = lines.offset(guard.lineno + 1, 0)
        else:
            imports = [stmt for stmt in view.tree.body if isinstance(stmt, (ast.Import, ast.ImportFrom))]
            indent = b""
            last = imports[at - 1]
            end = lines.offset(last.end_lineno, last.end_col_offset)  # type: ignore[arg-type]
            rest = lines.data[end : lines.data.find(b"\n", end) if b"\n" in lines.data[end:] else len(lines.data)]
            if b";" in rest or b"\n" not in lines.data[end:] or not lines.starts_line(last):
                return None
            start = lines.offset(last.end_lineno + 1, 0)  # type: ignore[operator]
        pad = indent.decode("utf-8")
        plan = TextPlan(changed=True, needs_tf2=True)
        plan.replacements.append((start, start, f"{pad}{NOTE}\n{pad}{switch_line(tf)}\n"))
        return plan


def _is_cst_main_guard(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.If) or not isinstance(node.test, cst.Comparison) or len(node.test.comparisons) != 1:
        return False
    target = node.test.comparisons[0]
    sides = [node.test.left, target.comparator]
    return isinstance(target.operator, cst.Equal) and any(isinstance(s, cst.Name) and s.value == "__name__" for s in sides) and any(
        isinstance(s, cst.SimpleString) and s.evaluated_value == "__main__" for s in sides
    )
