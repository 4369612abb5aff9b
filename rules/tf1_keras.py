"""TFM105: `tf.keras` in a program's TF1 graph code -> the Keras 2 it was (`tfm.legacy.keras`, `tfm.legacy.keras_v2`)."""

from __future__ import annotations

import ast
import functools

from tfmigrate.cst_on_demand import cst

from tfmigrate.names import AliasTable, canonical_name, dotted_text, is_chain
from tfmigrate.rule import RUNTIME_ALIAS, RUNTIME_MODULE, Rule
from tfmigrate.parsing import parse
from tfmigrate.keras3_arguments import TF_KERAS_SPELLINGS, keras3_call_fixes, verdicts
from tfmigrate.rules.graph_mode_programs import GRAPH_ONLY, TF_TEST_CASES, dotted_names, keras_imports_added, qualified, runs_eagerly
from tfmigrate.textpass import SourceView, TextPlan
from tfmigrate.tf_api import api_table

# What makes a file's Keras code run in a TF1 graph: an estimator the hosted tier runs as written
# (or the model_fn of one, returning the hosted EstimatorSpec), or Session/placeholder code.
_HOSTED_GRAPH = frozenset(
    f"{RUNTIME_MODULE}.estimator.{name}"
    for name in ("Estimator", "EstimatorSpec", "tpu.TPUEstimator", "tpu.TPUEstimatorSpec")
)
# What the codemod writes around a kept model_fn (`tfmigrate.kept_model`): TF1 graph code's host,
# not Keras 3 code, in a file that builds a `tfm.ModelFnModel`.
_KEPT_MODEL = f"{RUNTIME_MODULE}.ModelFnModel"
_KEPT_MODEL_CALLS = frozenset(
    f"{RUNTIME_MODULE}.{name}"
    for name in ("ModelFnModel", "fit", "evaluate", "predict", "predict_examples", "make_strategy", "strategy_from_config")
)
_GRAPH_CODE = GRAPH_ONLY | TF_TEST_CASES  # (TF 1.x's graph code in a TF 1.x program's file)
# A module that turns TF2's behaviour off runs its Keras in a TF1 graph: Keras 3 has no graph mode.
_GRAPH_SWITCHES = frozenset({"disable_eager_execution", "disable_v2_behavior"})
_TF_KERAS = ("tensorflow.keras", "tensorflow.compat.v1.keras")
_V1_KERAS = "tensorflow.compat.v1.keras"
# TF 1.x's Keras (Keras 2's v1 API), and TF 2.x's up to 2.15 (Keras 2's v2 API): what `tf.keras`
# was in a TF 1.x program / under `tf.compat.v1`, and in a TF 2.x program's graph code.
_TARGET = f"{RUNTIME_ALIAS}.legacy.keras"
_TARGET_V2 = f"{RUNTIME_ALIAS}.legacy.keras_v2"


def _keras_rest(full: str) -> str | None:
    """The path under TF's Keras of a qualified chain (`layers.Dense`; "" for the module), else None."""
    for home in _TF_KERAS:
        if full == home:
            return ""
        if full.startswith(home + "."):
            return full[len(home) + 1 :]
    return None


def _local(imp: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
    """The name an import's alias binds (`import a.b` binds `a`)."""
    return alias.asname or (alias.name.partition(".")[0] if isinstance(imp, ast.Import) else alias.name)


def _keras_side(view: SourceView, tf: str, tf1: bool = True) -> str | None:
    """"graph" where the file runs TF1 graph code (a hosted estimator or model_fn; in a TF 1.x
    program (`tf1`), Session/placeholder code or TF's TestCase tests too) and has no Keras 3 code, "keras3" where it has
    Keras 3 code (standalone `keras`, the runtime's Keras side), else None. Its chains as TFM104
    reads them, the runtime's included before the pass adds its import. (A TF 2.x program's
    Session code runs a graph of its own beside eager Keras: it decides nothing.)"""
    graph = kept_calls = kept_model = False
    for dotted in dotted_names(view.tree):
        full = qualified(dotted, view.names, tf)
        if full is None or _keras_rest(full) is not None:
            continue
        if full in _KEPT_MODEL_CALLS:  # the runtime's Keras side, unless a kept model_fn's host is built here
            kept_calls, kept_model = True, kept_model or full == _KEPT_MODEL
            continue
        if full.split(".")[0] == "keras" or (full.startswith(RUNTIME_MODULE + ".") and runs_eagerly(full)):
            return "keras3"  # standalone, or the runtime's Keras side: one Keras per program
        # (a TF 1.x program's TestCase tests run in TF1 graph mode: TFM104's `graph_mode_test`)
        graph = graph or full in _HOSTED_GRAPH or (tf1 and canonical_name(full) in _GRAPH_CODE) \
            or (full.startswith("tensorflow.") and full.rpartition(".")[2] in _GRAPH_SWITCHES)
    if kept_calls and not kept_model:
        return "keras3"
    return "graph" if graph or kept_model else None


def keras_code(symbols: frozenset[str], names: AliasTable, ctx) -> tuple[bool, bool]:
    """(whether a file runs TF1 graph code of its own, whether it runs Keras 3) after its
    migration, from what the pass already knows (no parse): Session/placeholder code or TF 1.x's
    Keras (this rule applied) for the first; TF's Keras kept (Keras 3 on current TF), standalone
    `keras`, or a structural rule's Keras model for the second. The runner adds its estimators'
    tiers (`program_keras.keras_side`)."""
    tf1_keras = "TFM105" in ctx.applied
    graph = tf1_keras or bool(symbols & GRAPH_ONLY)
    keras3 = keras_imports_added(ctx) or ("keras" in symbols and not tf1_keras) or any(
        full == "keras" or full.startswith("keras.") for full in names.aliases.values())
    return graph, keras3


@functools.cache
def _keras3() -> tuple[frozenset[str], frozenset[str]]:
    """(every `keras.*` path current TF's `tf.keras` has, the modules among them)."""
    paths = frozenset(path for path in api_table()[3] if path == "keras" or path.startswith("keras."))
    return paths, frozenset(path.rpartition(".")[0] for path in paths if "." in path)


def keras3_lacks(full: str) -> str | None:
    """For a chain of TF's Keras (`tensorflow.keras.backend.learning_phase`), the TODO where Keras
    3, current TF's `tf.keras`, has no such name in that module (Keras 2's `learning_phase`,
    `CuDNNGRU`, `get_session`); None where it has it, or where the chain reads a class's member
    (not listed: not judged)."""
    # (`tf.compat.v1.keras` and `tf.compat.v2.keras` are Keras 3's `tf.keras` on current TF too)
    compat = next((prefix for prefix in TF_KERAS_SPELLINGS if full.startswith(prefix)), None)
    if compat is None or full[len(compat):].partition(".")[0] == "estimator":
        return None  # (`tf.keras.estimator`: TFM101's TODO, with Estimator's)
    paths, modules = _keras3()
    parts = ["keras", *full[len(compat):].split(".")]
    known = next((end for end in range(len(parts), 0, -1) if ".".join(parts[:end]) in paths), 0)
    if known == len(parts) or ".".join(parts[:known]) not in modules:
        return None
    missing = compat[len("tensorflow."):] + ".".join(parts[1: known + 1])
    return (f"`tf.{missing}` is Keras 2's: current TF's `tf.keras` is Keras 3 (TF 2.16+), which has no "
            f"`{parts[known]}` there, and this module keeps it: rewrite it with Keras 3's API")



def keras3_todos(view: SourceView) -> list[tuple[ast.stmt, str]]:
    """`keras3_lacks`'s TODO for each chain (and `from tensorflow.keras.X import Y`) of a module that
    keeps TF's Keras, once per statement and name."""
    found: list[tuple[ast.stmt, str]] = []
    seen: set[tuple[int, str]] = set()

    def add(stmt: ast.stmt, message: str | None) -> None:
        if message is not None and (id(stmt), message) not in seen:
            seen.add((id(stmt), message))
            found.append((stmt, message))

    for imp, _ in view.imports:
        if isinstance(imp, ast.ImportFrom) and not imp.level and imp.module:
            full = view.names.qualify_dotted(imp.module) if imp.module.partition(".")[0] != "tensorflow" else imp.module
            for alias in imp.names:
                add(imp, keras3_lacks(f"{full}.{alias.name}") if full else None)
    for chain in view.chains:
        if not chain.in_import and not chain.bare:
            add(chain.stmt, keras3_lacks(view.names.qualify_dotted(chain.dotted) or ""))
    return found


def plan_keras(view: SourceView, tf: str, tf1: bool = True) -> tuple[list[tuple[int, int, str]], set[str], str | None] | None:
    """Each use of TF's Keras in a file respelled from `tfm.legacy`, the local names of the
    imports that bound them, and which Keras the rest of the file decides (`_keras_side`: Keras 2
    where "graph"); None where it has none to respell or keeps Keras 3 (code on Keras 3's side, a
    name bound otherwise too, a use in an f-string). Keras 2's v1 API (`tfm.legacy.keras`) in a
    TF 1.x program (`tf1`) and for `tf.compat.v1.keras`; its v2 API (`tfm.legacy.keras_v2`) for a
    TF 2.x program's `tf.keras`, as TF 2.15 had them."""
    uses: list[tuple[int, int, str]] = []
    roots: set[str] = set()
    seen: set[int] = set()
    for chain in [*view.chains, *view.lone_names]:
        if chain.in_import or chain.start in seen:
            continue
        seen.add(chain.start)
        full = qualified(chain.dotted, view.names, tf)
        rest = None if full is None else _keras_rest(full)
        if rest is None or rest == "estimator" or rest.startswith("estimator."):
            continue  # (model_to_estimator: TFM101's TODO; no Keras hosts an estimator now)
        if chain.in_fstring or (chain.node is not None and type(getattr(chain.node, "ctx", None)) is not ast.Load):
            return None
        target = _TARGET if tf1 or full == _V1_KERAS or full.startswith(_V1_KERAS + ".") else _TARGET_V2
        uses.append((chain.start, chain.end, f"{target}.{rest}" if rest else target))
        roots.add(chain.dotted.partition(".")[0])
    if not uses:
        return None
    side = _keras_side(view, tf, tf1)
    if side == "keras3":
        return None
    bound = {root for root in roots if root != tf}
    for root in bound:
        imports = sum(1 for imp, _ in view.imports for alias in imp.names if _local(imp, alias) == root)
        if view.bind_count(root) > imports:
            return None  # the name is bound otherwise too (a parameter, an assignment): not only Keras
    return uses, bound, side


class TF1Keras(Rule):
    """Run a TF 1.x program's Keras code in its graph as TF 1.x did: with Keras 2's TF1 API.

    A TF 1.x program's `tf.keras` was Keras 2, built into its TF1 graph: a model_fn that calls
    `tf.keras.Sequential` / `tf.keras.layers` (TensorFlow's official r1 models do) or Session code
    over Keras layers. TF 2.15, the last release with Estimator, still ran it so (`tf.keras` under
    `tensorflow.compat.v1` is Keras 2's v1 API: TF1 initializers, the v1 BatchNormalization). On
    current TF, `tf.keras` is Keras 3: its variables are named otherwise (`sequential/dense/kernel`
    for `dense/kernel`; a TF1 checkpoint does not restore), its seeded initializers draw other
    values, and it has no graph mode. So where a TF 1.x program's file runs its Keras code in a TF1
    graph (a hosted estimator or its model_fn, Session/placeholder code, or a module that turns
    TF2's behaviour off itself: `disable_v2_behavior()`, `disable_eager_execution()`), each `tf.keras.X`
    becomes `tfm.legacy.keras.X`: tf-keras's Keras 2 v1 API, what `tf.keras` was there. Names
    imported from it (`from tensorflow.keras import layers`, `from tensorflow.keras.layers import
    Dense`) are spelled the same way where used, and the imports go when nothing else uses them.

    A TF 2.x-spelled program (`import tensorflow as tf`, TF1 API under `tf.compat.v1`) whose file
    runs a hosted estimator (or turns TF2's behaviour off) ran its `tf.keras` there as TF 2.15's Keras 2, the v2 API: there
    `tf.keras.X` becomes `tfm.legacy.keras_v2.X` (`tf.compat.v1.keras.X` stays TF 1.x's). Its
    Session code alone decides nothing (its graph is its own, beside eager Keras).

    Not where the file has Keras 3 code: a model_fn migrated to a Keras model, `tfm.fit`, a canned
    estimator, standalone `keras` (one Keras per program); nor where a name bound to Keras is bound
    otherwise too. A module of Keras code alone (no estimator or Session of its own) takes its
    importers' Keras: a run over the program migrates it with TF 1.x's where a module that imports
    it runs its Keras in a TF1 graph and none runs Keras 3 (`keras_side`); else it keeps `tf.keras`.

    A module that keeps `tf.keras` runs Keras 3 on current TF, which lacks some of Keras 2's names
    (`backend.learning_phase`, `layers.CuDNNGRU`, `layers.DenseFeatures`, `experimental`): each
    use or import of one gets a TODO (`keras3_lacks`, read off current TF's API paths). Its calls
    of Keras 3 (and standalone `keras`'s) get Keras 3's name for a Keras 2 alias (`lr=` ->
    `learning_rate=`) and a TODO for a keyword Keras 3 refuses or ignores (`migrate/keras3_arguments.py`).
    """

    CODE = "TFM105"
    SUMMARY = "`tf.keras` in a hosted model_fn or Session code -> `tfm.legacy.keras` (TF 1.x's Keras 2; `keras_v2` in TF 2.x-spelled code)"
    SAFE = True
    TRIGGERS = frozenset({"keras.", "contrib.keras"})  # (`tf.contrib.keras`: TFM101 respells it `tf.keras`)
    TRIGGER_PACKAGES = frozenset({"keras"})  # (standalone Keras: Keras 3 too, its calls checked as tf.keras's)
    RUNS_AFTER = ("TFM101", "TFM102", "TFM103", "TFM201", "TFM301", "TFM302", "TFM401")

    def _plan(self, view: SourceView) -> tuple[list[tuple[int, int, str]], set[str]] | None:
        if keras_imports_added(self.ctx):
            return None
        found = plan_keras(view, self.ctx.tf2_alias, self.ctx.tf1_program)
        if found is None:
            return None
        uses, bound, side = found
        if side is None and not self.ctx.graph_keras:
            # Keras code alone: it runs where its importers build it (`TransformResult.keras_module`).
            self.ctx.keras_module = True
            return None
        return uses, bound

    def _drop_imports(self, view: SourceView, bound: set[str]) -> list[tuple[str, str | None, str | None]]:
        """(module, obj, asname) of each import that bound a respelled name (dropped if unused)."""
        drops = []
        for imp, _ in view.imports:
            for alias in imp.names:
                if _local(imp, alias) not in bound:
                    continue
                if isinstance(imp, ast.Import):
                    drops.append((alias.name, None, alias.asname))
                elif not imp.level:
                    drops.append((imp.module or "", alias.name, alias.asname))
        return drops

    def text_edits(self, view: SourceView) -> TextPlan | None:
        found = self._plan(view)
        if found is None:
            # The module keeps TF's Keras, Keras 3: its Keras 2 names get their TODO, above each
            # innermost statement (`SourceView.apply` leaves a place it is unsure of to the CST pass),
            # and its Keras 2 keywords Keras 3's names or their TODOs.
            renames, todos = keras3_call_fixes(view, self.ctx.tf1_program)
            return TextPlan(replacements=renames, todos=keras3_todos(view) + todos, changed=bool(renames))
        uses, bound = found
        return TextPlan(replacements=uses, changed=True, needs_runtime=True, removals=self._drop_imports(view, bound))

    def visit_Module(self, node: cst.Module) -> bool:
        code = self.ctx.code_of(node)
        # Names resolve through the file's original table, as on the text path: `tf` bound by
        # `import tensorflow.compat.v1 as tf` still reads as TF1's once TFM101 respelled that import.
        self._view = SourceView(code, parse(code), self.ctx.names)
        self._found = self._plan(self._view)
        self._renamed: dict[int, str] = {}
        # (a module that keeps Keras 3 is walked for its Keras 2 names, `keras3_lacks`, and arguments)
        return self._found is None and (bool(keras3_todos(self._view)) or any(keras3_call_fixes(self._view, self.ctx.tf1_program)))

    def visit_Call(self, node: cst.Call) -> bool:
        full = self.ctx.names.qualify(node.func)
        if full is None:
            return True
        passed = [arg for arg in node.args if arg.keyword is not None or arg.star == "**"]
        keywords = [arg.keyword.value if arg.keyword else None for arg in passed]
        for index, name, message in verdicts(full, keywords, self.ctx.tf1_program):
            if name is not None:
                self._renamed[id(passed[index])] = name
            else:
                self.todo(message)  # type: ignore[arg-type]
        return True

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        name = self._renamed.get(id(original))
        if name is None or updated.keyword is None:
            return updated
        self.mark_changed()
        return updated.with_changes(keyword=updated.keyword.with_changes(value=name))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if not is_chain(node):
            return True
        full = self.ctx.names.qualify(node)
        message = keras3_lacks(full) if full is not None else None
        if message is not None:
            self.todo(message)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.module is None or node.relative or isinstance(node.names, cst.ImportStar):
            return False
        module = dotted_text(node.module)
        full = self.ctx.names.qualify_dotted(module) if module.partition(".")[0] != "tensorflow" else module
        for alias in node.names:
            message = keras3_lacks(f"{full}.{dotted_text(alias.name)}") if full else None
            if message is not None:
                self.todo(message)
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        view, found = self._view, self._found
        if found is None:
            return updated
        uses, bound = found
        data = view.lines.data
        out, pos = bytearray(), 0
        for start, end, text in sorted(uses):
            out += data[pos:start] + text.encode("utf-8")
            pos = end
        out += data[pos:]
        self.mark_changed()
        self.ctx.need_runtime()
        for module, obj, asname in self._drop_imports(view, bound):
            self.ctx.drop_import_if_unused(module, obj, asname)
        return cst.parse_module(out.decode("utf-8"))
