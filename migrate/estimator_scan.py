"""What an Estimator-family rule finds: an estimator site (`Site`), why a model_fn is declined
(`Decline`, `MODEL_FN_DECLINES`), and the CST helpers that find sites and their uses.

`EstimatorSiteRule` (`estimator_sites`) walks a module with these; `estimator_codegen` writes
the statements that replace what they found.
"""

from __future__ import annotations

import ast
import functools
from contextlib import contextmanager
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .cst_on_demand import Transformer, Visitor, cst, statement_types

from .names import ReferenceVisitor
from .statement_lines import grouped_as_lines
from .cst_walk import walk

if TYPE_CHECKING:
    from .estimator.plan import Plan

# Why TFM201/TFM301 decline an estimator (a TODO, or the hosted tier with a note) and what to do.
MODEL_FN_DECLINES = (
    ("the model_fn has a construct the Keras translation does not cover (the TODO or note names it: an `if` that "
     "is not a TRAIN-mode or use_tpu switch, a second optimizer, `tf.variable_scope(reuse=...)` in its own body, "
     "`Scaffold(saver=...)`, an assignment to an attribute, ...)",
     "rewrite that statement into a form the rule reads (e.g. move the switch into a helper function, set "
     "`keep_checkpoint_max` on RunConfig instead of a Saver) and run tfmigrate again; or keep the hosted tier, "
     "which runs the model_fn as written"),
    ("model_fn is not a function defined at module level in the same file (a factory's closure, another module)",
     "define it at module level in the file that builds the estimator, or accept the hosted tier"),
    ("the estimator is constructed with arguments tfmigrate cannot read (`**kwargs`, computed values)",
     "pass model_fn=, config=, params= as plain keyword arguments"),
    ("the estimator is returned or passed on, not assigned to a variable whose train/evaluate calls are in the same function",
     "assign it and call train/evaluate/predict in one function, or migrate that part by hand"),
    ("`predict(...)` but model_fn has no PREDICT branch the rule could migrate",
     "give model_fn a `mode == ModeKeys.PREDICT` branch ending in `return EstimatorSpec(mode, predictions=...)`"),
    ("TF1 hooks that read graph tensors by name, run graph ops (`merge_all`) or use the session",
     "give them the runtime's handles instead (`tfm.hooks.LOSS`, `tfm.hooks.GLOBAL_STEP`, compiled metric names)"),
    ("a summary or helper call in model_fn that reads tensors the Keras model does not expose",
     "write it with `tfm.summary` in the training step, or call the helper on the features so it is part of the forward pass"),
    ("`--target ctl --standalone` and the program needs hooks, listeners or export (the runtime's EstimatorLoop)",
     "migrate without `--standalone`"),
)


@dataclass
class Decline:
    """Why a model_fn is not migrated, and the statement of its body that declined (None when
    unknown, or when it was the `def` itself): its line in the file and its first line of code."""

    reason: str
    statement: cst.CSTNode | None = None
    line: int = 0
    code: str = ""

    def with_line(self) -> str:
        """`reason (line 15: `if init_checkpoint:`)`, for a note: a note is written once (the
        hosted site it explains is not analysed again), so its line number stays right."""
        return f"{self.reason} (line {self.line}: `{self.code}`)" if self.statement is not None else self.reason

    def with_code(self) -> str:
        """`reason (`if init_checkpoint:`)`, for a TODO: every later pass and run derives a TODO
        again, and a line number that TODOs above the statement shift would make it a new one."""
        return f"{self.reason} (`{self.code}`)" if self.statement is not None else self.reason


def first_line(code: str) -> str:
    """The first line of a statement's code that is not blank or a comment, stripped."""
    return next((line.strip() for line in code.splitlines() if line.strip() and not line.strip().startswith("#")), "")


@dataclass
class Site:
    stmt: cst.SimpleStatementLine
    scope: cst.CSTNode
    est_name: str
    args: dict[str, cst.BaseExpression]
    plan: Plan | None = None
    problems: list[str] = field(default_factory=list)
    model_var: str = "model"
    strategy_var: str = "strategy"
    params_var: str | None = None
    config_var: str | None = None
    prelude: list[str] = field(default_factory=list)
    # Statements (by id) that use the estimator beyond train/evaluate/predict/export -> the TODO.
    other_uses: dict[int, str] = field(default_factory=dict)
    uses_at: list[cst.CSTNode] = field(default_factory=list)
    # The innermost `if`/`elif`/`else` (or `case`) block holding the site, and the blocks of the
    # same chain, which never run with it (None, () at the top of its scope).
    branch: cst.IndentedBlock | None = None
    exclusive: tuple[cst.IndentedBlock, ...] = ()
    # Kept as written, but as `tfm.ModelFnModel` in its strategy (`kept_model`), not `tfm.estimator`.
    kept_model: bool = False


ESTIMATOR_METHODS = ("train", "evaluate", "predict", "export_saved_model", "export_savedmodel")
POSITIONAL_ARGS = {
    "train": ("input_fn", "hooks", "steps", "max_steps", "saving_listeners"),
    "evaluate": ("input_fn", "steps", "hooks", "checkpoint_path", "name"),
    "predict": ("input_fn", "predict_keys", "hooks", "checkpoint_path", "yield_single_examples"),
    "export_saved_model": (
        "export_dir_base", "serving_input_receiver_fn", "assets_extra", "as_text", "checkpoint_path", "experimental_mode",
    ),
    "export_savedmodel": (
        "export_dir_base", "serving_input_receiver_fn", "assets_extra", "as_text", "checkpoint_path", "strip_default_attrs",
    ),
    "train_and_evaluate": ("estimator", "train_spec", "eval_spec"),
    "train_spec": ("input_fn", "max_steps", "hooks", "saving_listeners"),
    "eval_spec": ("input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs", "throttle_secs"),
}
SPEC_KEYS = {"train_spec": "estimator.TrainSpec", "eval_spec": "estimator.EvalSpec"}


def call_arguments(call: cst.Call, method: str) -> dict[str, cst.BaseExpression] | None:
    """`call`'s (`est.<method>(...)`, a spec's constructor) arguments by parameter name
    (`POSITIONAL_ARGS`); None where one cannot be read (a star, a positional past the known ones)."""
    positional = POSITIONAL_ARGS[method]
    bound: dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        if arg.star or (arg.keyword is None and index >= len(positional)):
            return None
        bound[arg.keyword.value if arg.keyword else positional[index]] = arg.value
    return bound


class DocstringIndent(Transformer):
    """Indents the continuation lines of docstrings by one more unit."""

    def __init__(self, unit: str) -> None:
        self.unit = unit

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> cst.Expr:
        value = updated.value
        if isinstance(value, cst.SimpleString) and "\n" in value.value:
            lines = value.value.split("\n")
            text = "\n".join([lines[0]] + [self.unit + line if line.strip() else line for line in lines[1:]])
            return updated.with_changes(value=value.with_changes(value=text))
        return updated


def returned_closure(fn: cst.FunctionDef) -> cst.FunctionDef | None:
    """The function `fn` defines in its body and returns as its last statement, if it does."""
    body = list(fn.body.body)  # type: ignore[attr-defined]
    last = body[-1] if body else None
    if not (
        isinstance(last, cst.SimpleStatementLine)
        and isinstance(last.body[0], cst.Return)
        and isinstance(last.body[0].value, cst.Name)
    ):
        return None
    name = last.body[0].value.value
    return next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


@functools.cache
def _clauses() -> tuple[type, ...]:
    """The parts of a compound statement that hold further blocks: `else:`, `elif` (an If),
    `except`, `finally:`, `case`."""
    return (cst.Else, cst.If, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


@functools.cache
def branching() -> tuple[type, ...]:
    """Compound statements whose blocks exclude each other: one run takes one branch."""
    return (cst.If, cst.Match)


def blocks_of(stmt: cst.CSTNode) -> list[cst.IndentedBlock]:
    """Every indented block of a compound statement, in source order: its body and each
    `elif`/`else`/`except`/`finally`/`case` clause's (a one-line suite holds no site)."""
    out = []
    for child in stmt.children:
        if isinstance(child, cst.IndentedBlock):
            out.append(child)
        elif isinstance(child, _clauses()):
            out += blocks_of(child)
    return out


def defs_left_out(module: cst.Module, entered: set[int], whole: set[int], acts_on: Callable[[cst.CSTNode], bool]) -> set[int]:
    """The defs (classes and functions, at any depth) a walk may leave out when all it acts on is
    known: every def but those holding something it acts on. Kept: the defs in `entered` (the
    walk goes in), the statements in `whole` and everything in them (the walk goes through them
    all), the defs holding a statement of theirs that `acts_on` says the walk acts on, and every
    def around one of those. Read off the statements alone (no expression is walked)."""
    parents: dict[int, int] = {}  # def id -> the def around it (0: module level)
    held: set[int] = set(entered)

    def scan(body, around: int) -> None:
        for stmt in body:
            inner = around
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                inner = id(stmt)
                parents[inner] = around
            elif isinstance(stmt, cst.SimpleStatementLine):
                if around and acts_on(stmt):
                    held.add(around)
                continue
            if id(stmt) in whole:
                held.add(inner)  # (nothing inside is looked at: none of it is left out)
                continue
            for block in blocks_of(stmt):
                scan(block.body, inner)

    scan(module.body, 0)
    kept: set[int] = set()
    for node in held:
        while node and node not in kept:
            kept.add(node)
            node = parents.get(node, 0)
    return {node for node in parents if node not in kept}


def nodes_within(blocks: tuple[cst.CSTNode, ...]) -> set[int]:
    """The ids of every node in `blocks` (walked once, however many nodes are then looked up)."""
    within: set[int] = set()

    class Collect(Visitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            within.add(id(node))
            return True

    for block in blocks:
        walk(block, Collect())
    return within


def once_per_node(memo: dict[int, tuple[Any, Any]], node: Any, make: Callable[[], Any]) -> Any:
    """`make()` for `node`, worked out once and kept in `memo` by the node's id (with the node
    itself, so that a later node given a freed one's id is not served its value)."""
    held = memo.get(id(node))
    if held is None or held[0] is not node:
        held = memo[id(node)] = (node, make())
    return held[1]


@dataclass
class StatementIndex:
    """What each statement of a scope holds, worked out in one walk, so that the walks looking for
    one name (each estimator's uses, `mentions`) skip the statements that cannot hold it."""

    names: dict[int, set[str]]  # statement id -> every Name a reference walk reaches in it
    assigned_calls: dict[int, list[cst.Assign]]  # statement id -> its `x = f(...)` (a spec made for later?)
    order: dict[int, int]  # statement or call id -> its place in the scope's text

    @classmethod
    def of(cls, scope: cst.CSTNode) -> "StatementIndex":
        index = cls({}, {}, {})

        class Walk(ReferenceVisitor):
            def __init__(self) -> None:
                self.open: list[set[str]] = []
                self.ids: list[int] = []

            def on_visit(self, node: cst.CSTNode) -> bool:
                if isinstance(node, statement_types()):
                    self.open.append(index.names.setdefault(id(node), set()))
                    self.ids.append(id(node))
                    index.order[id(node)] = len(index.order)
                elif isinstance(node, cst.Call):
                    index.order[id(node)] = len(index.order)
                return super().on_visit(node)

            def on_leave(self, node: cst.CSTNode) -> None:
                if isinstance(node, statement_types()):
                    names = self.open.pop()
                    self.ids.pop()
                    if self.open:
                        self.open[-1].update(names)
                super().on_leave(node)

            def visit_Name(self, node: cst.Name) -> None:
                if self.open:
                    self.open[-1].add(node.value)

            def visit_Assign(self, node: cst.Assign) -> None:
                if isinstance(node.value, cst.Call) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                    for held in self.ids:
                        index.assigned_calls.setdefault(held, []).append(node)

        walk(scope, Walk())
        return index

    def lacks(self, statement: cst.CSTNode, name: str) -> bool:
        """Whether `statement` (one of the scope's) surely never refers to `name`."""
        names = self.names.get(id(statement))
        return names is not None and name not in names


def mentions(node: cst.CSTNode, name: str, skip: set[int], index: StatementIndex | None = None) -> bool:
    """Whether `name` is referred to in `node` outside the subtrees whose ids are in `skip`
    (an attribute or keyword spelled `name` is not a reference); `index`: `node`'s statements."""

    class Find(ReferenceVisitor):
        found = False

        def on_visit(self, node: cst.CSTNode) -> bool:
            if index is not None and isinstance(node, statement_types()) and index.lacks(node, name):
                return False
            return id(node) not in skip and not self.found and super().on_visit(node)

        def visit_Name(self, node: cst.Name) -> None:
            self.found = self.found or node.value == name

    finder = Find()
    walk(node, finder)
    return finder.found


def first_reference(node: cst.CSTNode, name: str, skip: set[int]) -> cst.CSTNode | None:
    """The innermost statement of `node` that refers to `name` outside the subtrees whose ids are
    in `skip`, first in the text; None when none does. Not a reference: an attribute or keyword
    spelled `name`, a def's or class's own name, a parameter's name (its default and annotation
    are read)."""

    class Find(ReferenceVisitor):
        def __init__(self) -> None:
            self.open: list[cst.CSTNode] = []
            self.found: cst.CSTNode | None = None

        def on_visit(self, node: cst.CSTNode) -> bool:
            if self.found is not None or id(node) in skip:
                return False
            if isinstance(node, statement_types()):
                self.open.append(node)
            return super().on_visit(node)

        def on_leave(self, node: cst.CSTNode) -> None:
            if self.open and self.open[-1] is node:
                self.open.pop()
            super().on_leave(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            for part in (*node.decorators, node.params, node.returns, node.body):
                if part is not None:
                    walk(part, self)
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            for part in (*node.decorators, *node.bases, *node.keywords, node.body):
                walk(part, self)
            return False

        def visit_Param(self, node: cst.Param) -> bool:
            for part in (node.annotation, node.default):
                if part is not None:
                    walk(part, self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name and self.found is None:
                self.found = self.open[-1] if self.open else node

    finder = Find()
    walk(node, finder)
    return finder.found


def assigned_call(scope: cst.CSTNode, name: str) -> str | None:
    """`name = f(...)` as a statement of `scope`'s own body (not nested blocks): `f`."""
    call = assigned_call_node(scope, name)
    return call.func.value if call is not None else None  # type: ignore[attr-defined]


def assigned_call_node(scope: cst.CSTNode, name: str) -> cst.Call | None:
    """The call of the last `name = f(...)` statement of `scope`'s own body (`assigned_call`)."""
    body = getattr(getattr(scope, "body", None), "body", None) or getattr(scope, "body", [])
    found = None
    for stmt in body if isinstance(body, (list, tuple)) else []:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == name
                and isinstance(small.value, cst.Call)
                and isinstance(small.value.func, cst.Name)
            ):
                found = small.value
    return found


def name_counts(module: cst.CSTNode) -> dict[str, int]:
    counts: dict[str, int] = {}

    class Count(Visitor):
        def visit_Name(self, node: cst.Name) -> None:
            counts[node.value] = counts.get(node.value, 0) + 1

    walk(module, Count())
    return counts


def fresh_name(base: str, taken: set[str], est_name: str) -> str:
    if base not in taken:
        return base
    candidate = f"{est_name}_{base}"
    index = 2
    while candidate in taken:
        candidate = f"{base}_{index}"
        index += 1
    return candidate


def line_in_text(module: cst.Module, text: str, node: cst.CSTNode) -> int | None:
    """The first line of `node` (inside `module`, which LibCST parsed from `text`), from the
    positions of its top-level statement alone and that statement's line in `text`'s `ast`;
    None when the two trees' top-level statements do not pair up."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from .parsing import parse

    top = next((stmt for stmt in module.body if holds(stmt, node)), None)
    if top is None:
        return None
    lines = _top_level_lines(parse(text).body)
    if len(lines) != len(module.body):
        return None
    offset = _line_within(module, top, node)
    if offset is None:  # a node with no syntactic position of its own (whitespace, say)
        positions = MetadataWrapper(cst.Module(body=[top]), unsafe_skip_copy=True).resolve(PositionProvider)
        offset = positions[node].start.line - positions[top].start.line
    return lines[module.body.index(top)] + offset


def _line_within(module: cst.Module, top: cst.CSTNode, node: cst.CSTNode) -> int | None:
    """How many lines below `top`'s start (as PositionProvider puts it) `node` starts: the text of
    `top` generated only as far as both starts, counting line breaks, instead of the positions of
    every node in it."""
    if node is top:
        return 0
    state = _line_counting()(default_indent=module.default_indent, default_newline=module.default_newline)
    state.wanted, state.found, state.hoisted = {id(top): top, id(node): node}, {}, {}
    try:
        top._codegen(state)
    except _Found:
        return state.found[id(node)] - state.found[id(top)]
    return None


class _Found(Exception):
    pass


@functools.cache
def _line_counting() -> type:
    """The codegen state `_line_within` counts with, made on first use (it derives from LibCST's `CodegenState`)."""
    from libcst._nodes.internal import CodegenState

    class LineCounting(CodegenState):
        """Codegen that only counts line breaks and notes the line each wanted node starts on (where
        PositionProvider puts its start: where its syntax begins, or where the child it takes its
        start from begins); it stops once it has them all."""

        line = 1
        wanted: dict[int, cst.CSTNode]  # id of the node whose start is wanted -> the node
        found: dict[int, int]
        hoisted: dict[int, int]  # id of a child -> id of the wanted node whose start is the child's

        def add_token(self, value: str) -> None:
            if "\n" in value or "\r" in value:
                self.line += value.count("\n") + value.count("\r") - value.count("\r\n")

        def add_indent_tokens(self) -> None:
            pass  # indentation holds no line break

        @contextmanager
        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            key = self.hoisted.get(id(node), id(node))
            if key in self.wanted and key not in self.found:
                if start_node is not None:
                    self.hoisted[id(start_node)] = key
                else:
                    self.found[key] = self.line
                    if len(self.found) == len(self.wanted):
                        raise _Found
            yield

    return LineCounting


def holds(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether `node` is `tree` or inside it. A statement (what a decline names) is looked for
    through blocks only, never expressions; anything else through the whole tree."""
    if not isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
        finder = _Finder(node)
        walk(tree, finder)
        return finder.found
    stack = [tree]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        if isinstance(current, cst.SimpleStatementLine):
            if any(small is node for small in current.body):
                return True
            continue
        stack.extend(child for child in current.children if isinstance(child, _block_parts()))
    return False


@functools.cache
def _block_parts() -> tuple[type, ...]:
    """What a statement's blocks are made of (LibCST): suites, statements, and the clauses that hold them."""
    return (cst.BaseSuite, cst.BaseStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)


class _Finder(Visitor):
    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node, self.found = node, False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.node:
            self.found = True
        return not self.found


def _top_level_lines(body: list[ast.stmt]) -> list[int]:
    """The line each top-level statement as LibCST groups them (`a; b` is one line of small
    statements) starts on where its syntax begins, as PositionProvider has it (a decorated
    definition's `def` line, not its first decorator's)."""
    return [group[0].lineno for group in grouped_as_lines(body)]


