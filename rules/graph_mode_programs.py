"""TFM104: a TF 1.x program that runs graphs in a `Session` keeps TF1's graph mode on TF2."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator

from tfmigrate.cst_on_demand import cst

from tfmigrate.names import AliasTable, SourceLines, ast_dotted, canonical_name
from tfmigrate.parsing import indexed, parse
from tfmigrate.rule import ADD_IMPORTS, RUNTIME_ALIAS, RUNTIME_MODULE, Rule
from tfmigrate.textpass import SourceView, TextPlan

# What cannot run eagerly: TF1's sessions and the placeholders they feed, and what only a session
# runs (each raises eagerly on TF 2.21: a Supervisor, a dataset's initializable iterator, queue
# runners and the queue-fed input pipelines).
GRAPH_ONLY = frozenset({
    "Session", "InteractiveSession", "placeholder",
    "train.MonitoredTrainingSession", "train.MonitoredSession", "train.SingularMonitoredSession",
    "train.Supervisor", "data.make_initializable_iterator", "train.start_queue_runners", "train.QueueRunner",
    "train.add_queue_runner", "train.string_input_producer", "train.input_producer", "train.range_input_producer",
    "train.slice_input_producer", "train.batch", "train.batch_join", "train.shuffle_batch", "train.shuffle_batch_join",
    "train.maybe_batch", "train.maybe_shuffle_batch",
})
# What sets the default graph's state as the module is imported (eagerly, `set_random_seed` would
# seed the eager context, and the graph the switch makes later would draw unseeded).
_GRAPH_STATE = frozenset({"set_random_seed", "random.set_random_seed", "reset_default_graph"})
_SWITCHES = frozenset({"disable_eager_execution", "disable_v2_behavior", "enable_eager_execution", "enable_v2_behavior", "graph_mode_test"})
# The runtime's names for TF1 graph code: the hosted estimator (its canned estimators aside: Keras
# models inside), TF1 layers and slim, their configs and helpers; they run in graph mode too, as
# does `HParams` (contrib's hyper-parameters: a Python object). Its others (`fit`, `make_strategy`,
# `canned`) are Keras 3's, which has no graph mode, as has no Keras.
_GRAPH_RUNTIME = frozenset({"estimator", "legacy", "tf1", "RunConfig", "TPUConfig", "lookup", "initializers", "HParams"})
_KERAS = frozenset({"keras"})  # (tf-keras, Keras 2, has a graph mode: `tfm.legacy.keras`)
NOTE = "# tfmigrate: TF1 graph mode, as under TF 1.x (Session/placeholder code cannot run eagerly)"
TEST_NOTE = "# tfmigrate: its tests run in TF1 graph mode, as under TF 1.x (pytest and `python x_test.py` alike)"

# TF's test API (`tf.test.TestCase`, `test_util.TensorFlowTestCase`): a module's `self.session()`
# blocks are a TestCase's (a trailing "." means any symbol under it, as in `Rule.TRIGGERS`).
_TF_TESTS = frozenset({"test.", "python.platform.test.", "python.framework.test_util."})
# TF's TestCase classes: a module-level class deriving from one (or from such a class) is a TF test.
TF_TEST_CASES = frozenset({"test.TestCase", "python.platform.test.TestCase", "python.framework.test_util.TensorFlowTestCase"})
# A TestCase's helpers that open a session for a test. Run eagerly, `test_session()` yields None,
# `session()` an object whose every attribute raises, and `cached_session()` a stand-in whose
# `run(fetches)` evaluates eagerly (a feed, an option or any other attribute raises); a tensor's
# `.eval()` and an op's `.run()` raise in each. `self.evaluate(x)` runs in either mode.
_TEST_SESSIONS = frozenset({"session", "test_session", "cached_session"})
_EAGER_STAND_IN = "cached_session"
# TF's decorators that run a test in graph mode, in both modes, or in one API version only: a
# module that uses them was written for TF2 (and `disable_v2_behavior()` would run its
# `run_v1_only` tests).
_GRAPH_MODE_TESTS = frozenset(f"python.framework.test_util.{name}" for name in (
    "run_deprecated_v1", "deprecated_graph_mode_only", "run_all_in_deprecated_graph_mode_only",
    "run_v1_only", "run_v2_only", "run_in_graph_and_eager_modes", "run_all_in_graph_and_eager_modes",
    "run_in_v1_v2", "run_class_in_v1_v2", "build_as_function_and_v1_graph",
))


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
    that resets a TPU's containers, eagerly too). Asked again of the same tree and table (an
    estimator rule asks `runs_session_code` and `gets_the_switch` of one text), the last answer."""
    last = _LAST_NEEDS_GRAPH[0]
    if last is not None and last[0] is tree and last[1] is names and last[2] == tf and last[3] == chains:
        return last[4]
    answer = _reads_graph_only(tree, names, tf, chains)
    _LAST_NEEDS_GRAPH[0] = (tree, names, tf, chains, answer)
    return answer


_LAST_NEEDS_GRAPH: list[tuple[ast.Module, AliasTable, str, set[str], bool] | None] = [None]


def _reads_graph_only(tree: ast.Module, names: AliasTable, tf: str, chains: set[str]) -> bool:
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

    receivers: set[int] = set()  # the functions holding such a call (at any depth)
    if receiver_chains:  # (most modules build no receiver)
        walk: list[tuple[ast.AST, tuple[int, ...]]] = [(tree, ())]
        while walk:
            node, functions = walk.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions += (id(node),)
            elif receiver(node):
                receivers.update(functions)
            walk.extend((child, functions) for child in ast.iter_child_nodes(node))
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


def _opened_test_session(expr: ast.expr) -> str | None:
    """`self.session(...)`, `self.test_session(...)`, `self.cached_session(...)`: the helper's name."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _TEST_SESSIONS:
        owner = expr.func.value
        return expr.func.attr if isinstance(owner, ast.Name) and owner.id == "self" else None
    return None


IsGraphCall = Callable[[ast.AST], bool]


def _graph_names(tree: ast.Module, is_graph_call: IsGraphCall) -> set[str]:
    """The dotted names the module binds to a new graph (`g = tf.Graph()`, `... as_default() as g`)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_graph_call(node.value):
            out.update(dotted for target in node.targets if (dotted := ast_dotted(target)))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None \
                and _makes_default(node.context_expr, is_graph_call, out) and (dotted := ast_dotted(node.optional_vars)):
            out.add(dotted)
    return out


def _makes_default(expr: ast.expr, is_graph_call: IsGraphCall, graphs: set[str]) -> bool:
    """`tf.Graph().as_default()` or `g.as_default()` of a graph `g`: graph mode, eagerly too."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "as_default"):
        return False
    owner = expr.func.value
    return is_graph_call(owner) or ast_dotted(owner) in graphs


def _test_session_blocks(
    stmt: ast.stmt, in_graph_default: Callable[[ast.expr], bool],
) -> Iterator[tuple[ast.With | ast.AsyncWith, str, str | None]]:
    """Each `with self.session() [as sess]:` block (with the helper's name and the bound name)
    that no enclosing `with <graph>.as_default():` already runs in graph mode."""
    stack: list[tuple[ast.AST, bool]] = [(stmt, False)]
    while stack:
        node, in_graph = stack.pop()
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                helper = _opened_test_session(item.context_expr)
                if helper is not None and not in_graph:
                    bound = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
                    yield node, helper, bound
                in_graph = in_graph or in_graph_default(item.context_expr)
        stack.extend((child, in_graph) for child in ast.iter_child_nodes(node))


def _runs_a_value(call: ast.Call, not_values: set[str]) -> bool:
    """`x.eval(...)` or `op.run(...)`, called on a value (rooted at none of `not_values`)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("eval", "run")):
        return False
    return (ast_dotted(func.value) or "").partition(".")[0] not in not_values


def _uses_the_session(node: ast.AST, helper: str, bound: str) -> bool:
    """`sess.<anything>`; of `cached_session()`'s stand-in, anything but `sess.run(fetches)`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == bound:
        return helper != _EAGER_STAND_IN or node.attr != "run"
    if helper == _EAGER_STAND_IN and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and ast_dotted(node.func) == f"{bound}.run":
        return len(node.args) != 1 or bool(node.keywords) or isinstance(node.args[0], ast.Starred)
    return False


def _runs_only_in_graph_mode(block: ast.With | ast.AsyncWith, helper: str, bound: str | None, imported: set[str]) -> bool:
    """Whether the block runs its graph as only a session can: `.eval()`/`.run()` on a value
    (not on `self`, the session or an imported name), or through the session it binds."""
    not_values = imported | {"self"} | ({bound} if bound else set())
    for node in (inner for stmt in block.body for inner in ast.walk(stmt)):
        if isinstance(node, ast.Call) and _runs_a_value(node, not_values):
            return True
        if bound is not None and _uses_the_session(node, helper, bound):
            return True
    return False


def _tf_tests(names: AliasTable, tf: str, chains: set[str]) -> bool:
    """Whether a module with these dotted names reads TF's test API and none of TF's graph-mode
    test decorators (which mark it written for TF2)."""
    symbols = {canonical_name(qualified(dotted, names, tf) or "") or "" for dotted in chains}
    return any(symbol.startswith(tuple(_TF_TESTS)) for symbol in symbols) and not symbols & _GRAPH_MODE_TESTS


def _first_graph_mode_test(tree: ast.Module, names: AliasTable, tf: str, chains: set[str]) -> ast.stmt | None:
    """The first top-level statement whose TestCase code runs graphs through its session helpers
    in a way that fails eagerly (`_runs_only_in_graph_mode`), in a module of TF's tests that none
    of TF's graph-mode test decorators marks; else None."""
    calls = indexed(tree).get(ast.Call, ())
    if not any(isinstance(call.func, ast.Attribute) and call.func.attr in _TEST_SESSIONS for call in calls):  # type: ignore[attr-defined]
        return None  # (most modules open none)
    if not _tf_tests(names, tf, chains):
        return None

    def is_graph_call(expr: ast.AST) -> bool:
        return isinstance(expr, ast.Call) and canonical_name(qualified(ast_dotted(expr.func) or "", names, tf) or "") == "Graph"

    graphs = _graph_names(tree, is_graph_call)
    imported = set(names.aliases)
    for stmt in tree.body:
        blocks = _test_session_blocks(stmt, lambda expr: _makes_default(expr, is_graph_call, graphs))
        if any(_runs_only_in_graph_mode(block, helper, bound, imported) for block, helper, bound in blocks):
            return stmt
    return None


def _graph_mode_test_classes(tree: ast.Module, names: AliasTable, tf: str, *, building: bool = False) -> list[int] | None:
    """The indexes in `tree.body` of the module's classes that derive from TF's TestCase (not
    through another class of the module, which they inherit its `run` from), when the module's TF
    TestCase classes hold all of its code that needs graph mode: the test sessions that run graphs
    and every Session/placeholder use. Else None (other code needs it: the module's own switch).
    `building`: only those whose tests (theirs or their subclasses') build TF ops, not tests of
    Python code alone."""
    tests: dict[str, int] = {}
    family: dict[int, int] = {}  # class index -> the index of the root it derives from
    roots: list[int] = []
    for index, stmt in enumerate(tree.body):
        if not isinstance(stmt, ast.ClassDef):
            continue
        bases = [dotted for base in stmt.bases if (dotted := ast_dotted(base)) is not None]
        parent = next((tests[base] for base in bases if base in tests), None)
        if parent is not None:
            tests[stmt.name] = index
            family[index] = family[parent]
        elif any(canonical_name(qualified(base, names, tf) or "") in TF_TEST_CASES for base in bases):
            tests[stmt.name] = family[index] = index
            roots.append(index)
    if building:
        roots = sorted({family[index] for index in family if _builds_tf_ops(tree.body[index], names, tf)})
    if not roots:
        return None
    indexes = set(tests.values())
    rest = ast.Module(body=[stmt for index, stmt in enumerate(tree.body) if index not in indexes], type_ignores=[])
    chains = dotted_names(rest)
    if _first_graph_mode_test(rest, names, tf, chains) is not None or _needs_graph(rest, names, tf, chains):
        return None
    return roots


def _builds_tf_ops(cls: ast.stmt, names: AliasTable, tf: str) -> bool:
    """Whether a class's code reads TF beyond its test API (`tf.test`, `self.assert...`): a whole
    chain (not the parts of one) naming a TF symbol."""
    stack: list[ast.AST] = [cls]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Attribute, ast.Name)) and (dotted := ast_dotted(node)) is not None:
            full = qualified(dotted, names, tf) or ""
            symbol = canonical_name(full) if full.partition(".")[0] == "tensorflow" else None
            if symbol and not symbol.startswith(tuple(_TF_TESTS)):
                return True
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _after_imports_before(tree: ast.Module, stmt: ast.stmt) -> tuple[str, int] | None:
    """("top", how many top-level imports precede `stmt`), or None where none does (TF comes
    from elsewhere)."""
    at = sum(1 for imp in tree.body if isinstance(imp, (ast.Import, ast.ImportFrom)) and imp.lineno < stmt.lineno)
    return ("top", at) if at else None


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


def _main_guard(tree: ast.Module) -> int | None:
    """The index in `tree.body` of the module's `if __name__ == "__main__":`, else None."""
    return next((i for i, stmt in enumerate(tree.body) if _is_main_guard(stmt)), None)


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


def placement(tree: ast.Module, names: AliasTable, tf: str = "tf", *, tf1: bool = False,
              entry: bool = False) -> tuple[str, int | list[int]] | None:
    """Where the program turns graph mode on: ("main", index of the main guard in `tree.body`),
    ("top", how many top-level imports precede the switch), ("tests", the indexes of the TestCase
    classes whose tests run as under TF 1.x), ("library", 0) where the module's Session code runs
    in functions and it has no main guard (the program's entry decides: no switch here), or None
    (no Session/placeholder code or TestCase sessions, a switch already, code that runs eagerly).
    A module of tests whose other code needs graph mode too switches in its main guard, else after
    the imports before its first such test (its runner imports it). `tf1`: the module
    is TF 1.x code, whose TestCase tests TF 1.x ran in graph mode, each of them: those that build
    TF ops run so (`("tests", ...)`) even where their sessions would run eagerly, or they open none.
    `entry`: the program's main module, whose imports reach another module's Session code
    (`Options.graph_entry`): it switches in its main guard as a Session program does."""
    chains = dotted_names(tree)
    for dotted in chains:
        if dotted.rpartition(".")[2] in _SWITCHES:
            return None
        full = qualified(dotted, names, tf)
        if full is not None and runs_eagerly(full):
            return None
    tests = _first_graph_mode_test(tree, names, tf, chains)
    if tests is None and not _needs_graph(tree, names, tf, chains):
        guard = _main_guard(tree)
        if entry and guard is not None:
            return ("main", guard)
        if not tf1 or not _tf_tests(names, tf, chains):
            return None
        classes = _graph_mode_test_classes(tree, names, tf, building=True)
        return ("tests", classes) if classes is not None else None
    # the first top-level statement that builds a graph (or seeds it) as the module is imported
    first = next((
        stmt for stmt in tree.body
        if any(canonical_name(qualified(d, names, tf) or "") in GRAPH_ONLY | _GRAPH_STATE for d in _chains(_module_level(stmt)))
    ), None)
    if first is not None:
        return _after_imports_before(tree, first)
    if tests is not None:
        classes = _graph_mode_test_classes(tree, names, tf)
        if classes is not None:
            return ("tests", classes)
    guard = _main_guard(tree)
    if guard is not None:
        return ("main", guard)
    if tests is not None:
        return _after_imports_before(tree, tests)
    return ("library", 0)  # Session code in functions, no main guard: the program's entry decides


def graph_role(tree: ast.Module, symbols: frozenset[str], output: str, ctx, keras3: bool, sites) -> str | None:
    """What a module of a program is to TFM104's switch, for the runner to settle once it has read
    them all: "library" where its Session code waits for the program's entry (`placement`'s
    verdict, which TFM104 leaves in `ctx.graph_library`), "entry" where it is a TF 1.x main module
    that would take the switch for such a library (no Session code, switch, Keras 3, estimator or
    TF test of its own), else None."""
    if ctx.graph_library:
        return "library"  # (TFM104's `placement` said so)
    if symbols & GRAPH_ONLY or not ctx.tf1_program or keras3 or sites or any(symbol.startswith(tuple(_TF_TESTS)) for symbol in symbols):
        return None
    if _main_guard(tree) is None or any(switch in output for switch in _SWITCHES):
        return None
    return "entry"


@functools.lru_cache(maxsize=8)  # (each estimator rule asks it of the same module's text)
def runs_session_code(code: str, tf: str) -> bool:
    """Whether a module with this text feeds placeholders or runs sessions itself (`GRAPH_ONLY`),
    code that needs TF1 graph mode whichever estimator it holds."""
    read = _read(code)
    if read is None:
        return True
    return _needs_graph(read[0], read[1], tf, dotted_names(read[0]))


@functools.lru_cache(maxsize=8)  # (each estimator rule asks it of the same module's text)
def gets_the_switch(code: str, tf: str) -> bool:
    """Whether TFM104 would add `disable_v2_behavior()` to a module with this text (Session or
    placeholder code, no switch of its own, no Keras)."""
    read = _read(code)
    if read is None:
        return False
    where = placement(read[0], read[1], tf)
    return where is not None and where[0] != "library"


@functools.lru_cache(maxsize=4)
def _read(code: str) -> tuple[ast.Module, AliasTable] | None:
    """A module's text as a tree and its names table (one of each for both questions above)."""
    try:
        tree = parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree, AliasTable.from_ast(tree, SourceLines(code))


class GraphModePrograms(Rule):
    """Keep TF 1.x's graph mode for a program that builds graphs to run in a `Session`.

    TF 1.x ran every program in graph mode; TF2 runs eagerly, where `tf.compat.v1.placeholder`
    and `Session.run` fail. A TF 1.x program whose code feeds placeholders or runs sessions
    (`Session`, `InteractiveSession`, `train.MonitoredTrainingSession`, a `train.Supervisor`, queue
    runners and queue-fed input pipelines, `make_initializable_iterator`: `GRAPH_ONLY`) gets
    `tf.compat.v1.disable_v2_behavior()`, TF's own switch back to TF 1.x behaviour: as the first
    statement of its `if __name__ == "__main__":` block, or after its imports where the module
    builds a graph as it is imported, or seeds it (`tf.set_random_seed` run eagerly seeds the eager
    context, and the graph would draw unseeded). A module whose sessions run inside functions and
    that has no main block is left as is (the program's entry decides). A TF 1.x unit test
    (`tf.test.TestCase`) whose `with self.session()` / `test_session()` / `cached_session()`
    blocks run graphs as TF2 cannot (`sess.run`, `.eval()`, `op.run()`; `cached_session()`'s
    eager stand-in runs a plain `sess.run(fetches)`) gets `@tfm.tf1.graph_mode_test` on each of
    its module's classes deriving from TF's TestCase: each test runs with TF 1.x's behaviour and
    only it, under `python x_test.py` and pytest alike (a switch in the main block does not run
    under pytest, and one at import would turn every test collected after it to graph mode). In
    a TF 1.x program every such class whose tests build TF ops gets it, sessions or not (TF 1.x ran
    them in graph mode: `tf.trainable_variables()`, `tf.gradients` there). Where
    other code of the module needs graph mode too (a function of its own that runs a session), the
    module switches as a program does: in its main block, else after its imports. Not where its
    blocks only use `self.evaluate` or
    run inside a graph's `as_default()`, nor where TF's graph-mode test decorators
    (`test_util.run_deprecated_v1`, ...) mark the module as written for TF2. Not where the file uses
    Keras 3 (`tf.keras` that TFM105 does not make TF 1.x's Keras 2, `tfm.legacy.keras`) or the
    runtime's Keras side (a TFM201/TFM301/TFM401 Keras model, `tfm.fit`, a canned estimator):
    Keras 3 has no graph mode. The hosted tier (`tfm.estimator`, `tfm.legacy`) runs TF1 graph
    code in either mode, as TF 2.15's Estimator did: the oracle runs a TF 1.x program with v2
    behaviour off, and so does its migration then. (A TF 2.15-spelled program trains to other
    numbers under the switch, on TF 2.15 and hosted alike.) Nor where the program already turns
    eager execution off or on. An entry file that switches runs what it imports in graph mode too;
    and where a run migrates a program, a module whose Session code waits for its entry (no main
    block of its own) makes each TF 1.x main module whose imports reach it switch in its main block,
    unless those imports also reach Keras 3 code or an estimator, which the runtime runs in TF2
    (`runner.graph_entries`; an import naming modules of several projects run together counts not).

    Guide: https://www.tensorflow.org/guide/migrate/migrate_tf2 (run TF1.x code in TF2)
    """

    CODE = "TFM104"
    SUMMARY = "TF 1.x Session/placeholder programs -> `tf.compat.v1.disable_v2_behavior()` at their entry (TF2 runs eagerly)"
    SAFE = True
    TRIGGERS = GRAPH_ONLY | _TF_TESTS
    RUNS_AFTER = ("TFM101", "TFM102", "TFM103", "TFM105", "TFM201", "TFM301", "TFM302", "TFM401")

    @classmethod
    def wanted(cls, options) -> bool:
        return options.graph_entry  # the program's entry, for another module's Session code

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if keras_imports_added(self.ctx):
            return updated
        code = updated.code
        tree = parse(code)
        where = placement(tree, AliasTable.from_ast(tree, SourceLines(code)), self.ctx.tf2_alias, tf1=self.ctx.tf1_program,
                          entry=self.ctx.graph_entry)
        if where is None or where[0] == "library":
            self.ctx.graph_library = where is not None
            return updated
        self.mark_changed()
        kind, at = where
        body = list(updated.body)
        if kind == "tests":
            decorator = cst.Decorator(
                decorator=cst.parse_expression(f"{self.ctx.need_runtime()}.tf1.graph_mode_test"),
                leading_lines=[cst.EmptyLine(comment=cst.Comment(TEST_NOTE))],
            )
            for index in at:  # type: ignore[union-attr]
                cls = body[index]
                body[index] = cls.with_changes(decorators=[decorator, *cls.decorators])  # type: ignore[attr-defined]
            return updated.with_changes(body=body)
        tf = self.ctx.need_tf2()
        switch = cst.parse_statement(switch_line(tf) + "\n").with_changes(
            leading_lines=[cst.EmptyLine(comment=cst.Comment(NOTE))]
        )
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
        view.chains  # noqa: B018 - (the scan indexes the tree by node type too, walking only what it did not walk before)
        where = None if keras_imports_added(self.ctx) else placement(
            view.tree, view.names, self.ctx.tf2_alias, tf1=self.ctx.tf1_program, entry=self.ctx.graph_entry)
        if where is None or where[0] == "library":
            self.ctx.graph_library = where is not None
            return TextPlan()
        kind, at = where
        lines, tf = view.lines, self.ctx.tf2_alias
        if "\r" in view.source:
            return None  # the CST pass writes the file's own line ends
        if kind == "tests":
            plan = TextPlan(changed=True, needs_runtime=True)
            for index in at:  # type: ignore[union-attr]
                cls = view.tree.body[index]
                line = min([cls.lineno] + [decorator.lineno for decorator in cls.decorator_list])
                start = lines.offset(line, 0)
                if lines.data[start : start + 1] not in (b"@", b"c"):
                    return None  # a decorator's `@` on a line above its expression, or the like: the CST pass
                plan.replacements.append((start, start, f"{TEST_NOTE}\n@{RUNTIME_ALIAS}.tf1.graph_mode_test\n"))
            return plan
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
