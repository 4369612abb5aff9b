"""The rule base class and the per-file context rules share.

A rule is one `Rule` subclass (a LibCST transformer) in one module of `tfmigrate.rules`. It declares its
metadata on the class (django-upgrade/Fixit style) and the registry finds it; nothing else lists it.

    class TPUEstimatorToKeras(Rule):
        '''Why the rule exists (first line = what it does).'''
        CODE = "TFM301"
        SUMMARY = "TPUEstimator programs -> TPUStrategy + Keras compile/fit/evaluate"
        SAFE = False
        RUNS_AFTER = ("TFM302",)

What a rule cannot migrate it marks with `self.todo("...")`: a `# TODO(tfmigrate TFMxxx): ... (see
<docs URL>#tfmxxx)` comment above the statement being visited, and an entry in the report. The
message says what the user should do, not only what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING, ClassVar

from .cst_on_demand import Transformer, cst, hooks, statement_types

from .names import AliasTable
from .reused_code import code_reusing
from .todos import superseded, todo_comment

if TYPE_CHECKING:
    from .textpass import SourceView, TextPlan


RUNTIME_MODULE = "tfmigrate.runtime"
RUNTIME_ALIAS = "tfm"

# (rule class, node type) -> the rule's visit_<Node> and leave_<Node> (None where it has none), and
# whether the node is a statement (`Rule.on_visit`: a rule's walk looks these up for every node).
_DISPATCH: dict[tuple[type, type], tuple[Any, Any, bool]] = {}


def _methods(rule: type, node: type) -> tuple[Any, Any, bool]:
    hit = _DISPATCH.get((rule, node))
    if hit is None:
        hit = _DISPATCH[(rule, node)] = (*hooks(rule, node), issubclass(node, statement_types()))
    return hit


# Where libcst's AddImportsVisitor / RemoveImportsVisitor read their requests in a codemod
# context's scratch (their CONTEXT_KEYs). The rules keep requests in an `ImportContext` of the
# same shape; the engine hands them to those visitors only where it needs them: importing
# `libcst.codemod` (its matchers) costs a fifth of a second of every run's startup.
ADD_IMPORTS = "AddImportsVisitor"
REMOVE_IMPORTS = "RemoveImportsVisitor"


@dataclass(frozen=True)
class ImportItem:
    """An import to ensure (libcst's `ImportItem` fields: `from module import obj as alias`)."""

    module_name: str
    obj_name: str | None = None
    alias: str | None = None
    relative: int = 0

    @property
    def module(self) -> str:
        return "." * self.relative + self.module_name


class ImportContext:
    """What the rules' import requests need of libcst's `CodemodContext`: its `scratch`."""

    full_package_name = None

    def __init__(self) -> None:
        self.scratch: dict = {}

    def add(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        """`AddImportsVisitor.add_needed_import`."""
        self.scratch.setdefault(ADD_IMPORTS, []).append(ImportItem(module, obj, asname))

    def remove(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        """`RemoveImportsVisitor.remove_unused_import`."""
        self.scratch.setdefault(REMOVE_IMPORTS, []).append((module, obj, asname))

    def libcst_context(self):
        """A libcst `CodemodContext` holding these requests, for its import visitors."""
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import ImportItem as LibcstImportItem

        context = CodemodContext()
        for key, value in self.scratch.items():
            if key == ADD_IMPORTS:
                value = [LibcstImportItem(i.module_name, i.obj_name, i.alias, i.relative) for i in value]
            context.scratch[key] = list(value) if isinstance(value, list) else value
        return context


@dataclass
class FileContext:
    """What all rules running over one file share."""

    filename: str
    target: str
    names: AliasTable
    tf2_alias: str
    codemod: ImportContext = field(default_factory=ImportContext)  # scheduled imports (to add, to drop if unused)
    applied: list[str] = field(default_factory=list)
    todos: list[tuple[str, str]] = field(default_factory=list)
    scratch: dict = field(default_factory=dict)
    standalone: bool = False  # --target ctl --standalone: no tfmigrate.runtime where stock TF will do
    # TFM101 runs: estimator sites not migrated to Keras go to the hosted tier (`tfmigrate.hosted`).
    hosted: bool = False
    # TFM104 runs: a Session/placeholder program gets `disable_v2_behavior()` (every call of a
    # hosted estimator then runs in graph mode, as its note says).
    session_switch: bool = False
    # A TF 1.x program (`tfmigrate.tf1_program`): bare `tf.estimator` canned estimators are v1.
    tf1_program: bool = False
    # Module-level names another module imports or `__all__` lists: kept even when unused here.
    exported: frozenset[str] = frozenset()
    # A module of the program that imports this one runs its Keras in a TF1 graph (`Options.graph_keras`).
    graph_keras: bool = False
    # The program's entry that reaches a module's Session code through its imports (`Options.graph_entry`).
    graph_entry: bool = False
    # TFM104 found Session code it leaves to the program's entry (no main guard: `graph_role`).
    graph_library: bool = False
    # TFM105 found TF's Keras here and nothing else that decides which Keras it is (no graph code,
    # no Keras 3): the module takes its importers' (`TransformResult.keras_module`).
    keras_module: bool = False
    # The pass's input text and its canonical symbols (`SourceView.symbols`; None on the LibCST-only
    # path): while no rule has changed the file, what a rule would compute from the CST again.
    source: str = ""
    source_symbols: frozenset[str] | None = None
    # The module LibCST last parsed and the text it parsed (its positions can be read off the
    # text), or the last module rendered (`code_of`).
    parsed: tuple[Any, str] | None = None

    def code_of(self, module: Any) -> str:
        """`module.code`: the text LibCST parsed it from where it is that tree (or the tree rendered
        last), else rendered now (rendering a large module takes as long as parsing it; a CST pass
        that changes nothing hands the next rule the same tree)."""
        if self.parsed is None:
            self.parsed = (module, module.code)
        elif self.parsed[0] is not module:
            # (the top-level statements it shares with the module rendered or parsed last: their text)
            self.parsed = (module, code_reusing(module, *self.parsed))
        return self.parsed[1]

    def unchanged_source(self) -> str | None:
        """The file's text while no rule has changed it yet, else None."""
        return self.source if not self.applied and self.source_symbols is not None else None

    def need_tf2(self) -> str:
        """The local name of `import tensorflow`, scheduling the import if the file lacks one."""
        if self.tf2_alias not in self.names.tf_roots and self.tf2_alias not in self.names.tf1_roots \
                and self.names.aliases.get(self.tf2_alias) != "tensorflow.compat.v2":  # (TF2's API itself)
            self.codemod.add("tensorflow", asname=self.tf2_alias)
        return self.tf2_alias

    def need_runtime(self) -> str:
        self.codemod.add(RUNTIME_MODULE, asname=RUNTIME_ALIAS)
        return RUNTIME_ALIAS

    def adds_imports(self) -> bool:
        """Whether some rule has scheduled an import to add."""
        return bool(self.codemod.scratch.get(ADD_IMPORTS))

    def drop_import_if_unused(self, module: str, obj: str | None = None, asname: str | None = None) -> None:
        if (asname or obj or module.split(".")[0]) in self.exported:
            return  # another module imports it from here
        self.codemod.remove(module, obj, asname)


class _Note(str):
    """A pending comment that is not a TODO (`Rule.note`)."""


class Rule(Transformer):
    CODE: ClassVar[str] = ""
    SUMMARY: ClassVar[str] = ""
    RUNS_AFTER: ClassVar[tuple[str, ...]] = ()
    # Output targets the rule applies to.
    TARGETS: ClassVar[frozenset[str]] = frozenset({"keras", "ctl"})
    # Structural rewrites change program structure (model_fn -> Keras model); mechanical ones rename.
    STRUCTURAL: ClassVar[bool] = False
    # Every rule declares it (the registry refuses one that does not). Safe: a mechanical rewrite
    # that keeps the program's meaning by construction. Unsafe: a structural rewrite to review;
    # under `--safe-only` an unsafe rule only reports what it would change.
    SAFE: ClassVar[bool]
    # The comments directly above the module's first statement (set by the engine before each visit).
    header_comments: frozenset[str] = frozenset()
    # Optional: the fixtures/<CODE>_<slug>/<EXAMPLE>.in.py case the docs show (default: the smallest).
    EXAMPLE: ClassVar[str | None] = None
    # Why the rule can decline (leave a TODO or a note instead of a rewrite) and what to do for
    # each: (reason, action) pairs, listed by `--explain CODE` and docs/rules.md.
    DECLINES: ClassVar[tuple[tuple[str, str], ...]] = ()
    # Canonical TF1 symbols (`estimator.tpu.TPUEstimator`; a trailing "." means any symbol under
    # it) without which the rule can change nothing in a file: the engine then skips it without
    # parsing the file into a CST. None: the rule may act on any file that imports TensorFlow.
    TRIGGERS: ClassVar[frozenset[str] | None] = None
    # Optional: packages other than TensorFlow (standalone `keras`) whose import makes the rule
    # run on a file whatever TF symbols it spells (`TRIGGERS` reads TF's alone).
    TRIGGER_PACKAGES: ClassVar[frozenset[str]] = frozenset()
    # Optional: canonical TF1 symbols the rule's CST pass reacts to anywhere in a file. When set,
    # the engine tells the rule, through `quiet_defs`, which module-level def/class statements
    # (name and whether quiet, in order) spell none of them, so its walks may skip those.
    WALK_SYMBOLS: ClassVar[frozenset[str] | None] = None

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self._stmt_stack: list[cst.CSTNode] = []
        self._pending: dict[int, list[str]] = {}
        self.changed = False
        self.quiet_defs: list[tuple[str, bool]] | None = None  # see WALK_SYMBOLS

    # -- hooks for subclasses -------------------------------------------------------------
    def should_run(self) -> bool:
        """Cheap per-file gate, evaluated before the pass (override to skip files early)."""
        return True

    @classmethod
    def triggered(cls, symbols: set[str] | frozenset[str]) -> bool:
        """Whether a file referencing `symbols` (canonical TF1 paths) may need this rule."""
        if cls.TRIGGERS is None:
            return True
        for trigger in cls.TRIGGERS:
            if trigger.endswith("."):
                if any(symbol.startswith(trigger) for symbol in symbols):
                    return True
            elif trigger in symbols:
                return True
        return False

    @classmethod
    def imports_a_trigger(cls, names: AliasTable) -> bool:
        """Whether the file imports one of `TRIGGER_PACKAGES` (or a module or name under one)."""
        packages = cls.TRIGGER_PACKAGES
        return bool(packages) and any(full.partition(".")[0] in packages for full in names.aliases.values())

    @classmethod
    def wanted(cls, options: Any) -> bool:
        """Whether the run's options ask for this rule whatever symbols the file spells."""
        return False

    def text_edits(self, view: "SourceView") -> "TextPlan | None":
        """The rule's edits computed on `ast` alone (the fast path), or None to take the CST path.

        Optional. A rule that defines it must produce, through `view.apply`, byte for byte what
        its CST pass produces (`tests/test_textpass.py` holds every such rule to that).
        """
        return None

    # -- helpers --------------------------------------------------------------------------
    def canonical(self, node: cst.BaseExpression) -> str | None:
        return self.ctx.names.canonical(node)

    def todo(self, message: str, *, at: cst.CSTNode | None = None) -> None:
        """Mark the statement being visited (or `at`, an original statement node) as needing a human."""
        target = at if at is not None else (self._stmt_stack[-1] if self._stmt_stack else None)
        if target is None:
            return
        self._pending.setdefault(id(target), []).append(message)

    def note(self, comment: str, *, at: cst.CSTNode) -> None:
        """Put `comment` (a `# ...` line, no TODO) above the original statement `at`."""
        self._pending.setdefault(id(at), []).append(_Note(comment))

    def mark_changed(self) -> None:
        self.changed = True

    # -- statement tracking and TODO placement ----------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        visit, _, statement = _methods(type(self), type(node))
        if statement:
            self._stmt_stack.append(node)
        return visit is None or visit(self, node) is not False

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        _, leave, statement = _methods(type(self), type(original_node))
        result = updated_node if leave is None else leave(self, original_node, updated_node)
        if statement:
            self._stmt_stack.pop()
            messages = self._pending.pop(id(original_node), None)
            if messages:
                result = self.attach_messages(result, messages)
        return result

    def attach_messages(self, result, messages: list[str]):
        """`result` (a statement, or the first of a FlattenSentinel's) with `messages` as comment
        lines above it: a TODO each (recorded in the file's TODOs), or a note as written."""
        if isinstance(result, cst.FlattenSentinel):
            nodes = list(result.nodes)
            if nodes:
                nodes[0] = self.attach_messages(nodes[0], messages)
            return cst.FlattenSentinel(nodes)
        if not isinstance(result, statement_types()):
            return result
        # (with the module header's last comments: above a module's first statement they are the
        # ones LibCST keeps there; a TODO there says the same of no other statement)
        existing = {line.comment.value for line in result.leading_lines if line.comment is not None} | self.header_comments
        lines = list(result.leading_lines)
        for message in messages:
            if isinstance(message, _Note):
                text = str(message)
            elif superseded(self.CODE, message, existing):
                continue
            else:
                text = todo_comment(self.CODE, message)
                self.ctx.todos.append((self.CODE, message))
            if text not in existing:
                existing.add(text)
                lines.append(cst.EmptyLine(comment=cst.Comment(text)))
        return result.with_changes(leading_lines=lines)
