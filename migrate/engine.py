"""The pure part of tfmigrate: `transform_source(text) -> TransformResult`, one file, never raises.

Separation of concerns:
- `engine` (this module) turns one file's text into migrated text plus findings.
- `runner` finds files, reads and writes them (atomically), runs jobs in parallel.
- `cli` parses options and sets the exit code. Nothing else.
"""

from __future__ import annotations

import ast
import traceback
from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from .names import AliasTable
from .registry import all_rules
from .rule import TODO_RE, FileContext, Rule
from .textpass import SourceView, parse

MIGRATED = "migrated"
UNCHANGED = "unchanged"
TODO = "todo"
ERROR = "error"

# A file that never spells one of these cannot hold TF1 code (TorchFix-style text pre-filter).
_PREFILTER = ("tensorflow",)


@dataclass
class Finding:
    code: str
    line: int
    message: str

    def as_dict(self) -> dict:
        return {"code": self.code, "line": self.line, "message": self.message}


@dataclass
class TransformResult:
    source: str
    output: str
    rules: list[str] = field(default_factory=list)
    todos: list[Finding] = field(default_factory=list)
    error: Finding | None = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.output != self.source

    @property
    def status(self) -> str:
        if self.error is not None:
            return ERROR
        if self.todos:
            return TODO
        return MIGRATED if self.changed else UNCHANGED


@dataclass(frozen=True)
class Options:
    target: str = "keras"
    select: frozenset[str] | None = None  # None: every rule


def transform_source(source: str, *, filename: str = "<string>", options: Options = Options()) -> TransformResult:
    """Migrate one module's text. Errors are returned, never raised; on error `output == source`.

    Cheapest first: a text pre-filter, then stdlib `ast` (what the file imports and references,
    so rules that cannot fire are never run), then a rule's `text_edits` fast path when it is the
    only rule left, and LibCST only for the files that still need it.
    """
    return _transform(source, filename, options, reference=False)


def reference_transform(source: str, *, filename: str = "<string>", options: Options = Options()) -> TransformResult:
    """The same migration on LibCST alone, every rule's CST pass, no shortcuts (what tests compare with)."""
    return _transform(source, filename, options, reference=True)


def _transform(source: str, filename: str, options: Options, *, reference: bool) -> TransformResult:
    if not any(token in source for token in _PREFILTER):
        return TransformResult(source, source, todos=scan_todos(source))
    view = None
    if not reference:
        try:
            view = SourceView(source, parse(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # LibCST reports it (E001), or parses what `ast` cannot
    try:
        if view is not None:
            names = view.names
            if not names.mentions_tensorflow():
                return TransformResult(source, source, todos=scan_todos(source))
            ctx = FileContext(filename=filename, target=options.target, names=names, tf2_alias=_tf2_alias(names))
            symbols = view.symbols()
            rules = [rule for rule in _rules(ctx, options) if type(rule).triggered(symbols)]
            if not rules:
                return TransformResult(source, source, todos=scan_todos(source))
            if len(rules) == 1:
                plan = rules[0].text_edits(view)
                output = view.apply(plan, rules[0].CODE) if plan is not None else None
                if output is not None:
                    return _finish(source, output, [rules[0].CODE] if plan.changed else [])  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - per-file isolation: report, never crash the run
        return _internal_error(source, exc)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return TransformResult(source, source, error=Finding("E001", exc.raw_line, f"syntax error: {exc.message}"))
    try:
        if view is None:
            names = AliasTable.from_module(module)
            if not names.mentions_tensorflow():
                return TransformResult(source, source, todos=scan_todos(source))
            ctx = FileContext(filename=filename, target=options.target, names=names, tf2_alias=_tf2_alias(names))
            rules = _rules(ctx, options)
        return _transform_cst(module, source, ctx, rules, reference=reference)
    except Exception as exc:  # noqa: BLE001 - per-file isolation: report, never crash the run
        return _internal_error(source, exc)


def _rules(ctx: FileContext, options: Options) -> list[Rule]:
    """The selected rules for this target whose `should_run` gate passes, in order."""
    out = []
    for rule_cls in all_rules():
        if options.select is not None and rule_cls.CODE not in options.select:
            continue
        if options.target not in rule_cls.TARGETS:
            continue
        rule = rule_cls(ctx)
        if rule.should_run():
            out.append(rule)
    return out


def _transform_cst(module: cst.Module, source: str, ctx: FileContext, rules: list[Rule], *, reference: bool) -> TransformResult:
    for rule in rules:
        module = module.visit(rule)
        if rule.changed:
            ctx.applied.append(rule.CODE)
    if ctx.applied and reference:
        module = AddImportsVisitor(ctx.codemod).transform_module(module)
        module = RemoveImportsVisitor(ctx.codemod).transform_module(module)
    elif ctx.applied:
        if ctx.codemod.scratch.get(AddImportsVisitor.CONTEXT_KEY):
            module = _add_imports(ctx, module)
        if ctx.codemod.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
            # Scope analysis (and the copy of the tree it needs) only for imports that may really
            # have lost their last use; those surely still used are kept without asking.
            code = module.code
            try:
                tree = parse(code)
            except SyntaxError as exc:
                return _invalid(source, exc)
            view = SourceView(code, tree)
            pending = [
                entry
                for entry in ctx.codemod.scratch[RemoveImportsVisitor.CONTEXT_KEY]
                if not view.certainly_used(entry[2] or entry[1] or entry[0])
            ]
            if pending:
                ctx.codemod.scratch[RemoveImportsVisitor.CONTEXT_KEY] = pending
                module = RemoveImportsVisitor(ctx.codemod).transform_module(module)
    return _finish(source, module.code, ctx.applied)


def _add_imports(ctx: FileContext, module: cst.Module) -> cst.Module:
    """AddImportsVisitor's result, computed on the module's head only.

    The visitor reads and changes nothing past the first statement after the top import block
    (it adds there, and gives that statement an empty line); run on the whole module it still
    copies and walks every node, which costs more than all the rules together.
    """
    body = module.body
    start = 1 if body and _is_docstring_or_strict(body[0]) else 0
    end = start
    while end < len(body) and _is_import_line(body[end]):
        end += 1
    head = module.with_changes(body=body[: end + 1])
    head = AddImportsVisitor(ctx.codemod).transform_module(head)
    return module.with_changes(body=(*head.body, *body[end + 1 :]))


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))
    )


def _is_docstring_or_strict(stmt: cst.CSTNode) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or not stmt.body:
        return False
    first = stmt.body[0]
    if len(stmt.body) != 1:
        return False
    if isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString):
        return True
    return (
        isinstance(first, cst.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0].target, cst.Name)
        and first.targets[0].target.value == "__strict__"
    )


def _finish(source: str, output: str, applied: list[str]) -> TransformResult:
    if output != source:
        try:
            parse(output)
        except SyntaxError as exc:  # never hand back code that does not parse
            return _invalid(source, exc)
    return TransformResult(source, output, rules=applied, todos=scan_todos(output))


def _invalid(source: str, exc: SyntaxError) -> TransformResult:
    return TransformResult(
        source, source, error=Finding("E998", exc.lineno or 0, f"internal error: migration produced invalid code: {exc.msg}")
    )


def _internal_error(source: str, exc: Exception) -> TransformResult:
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return TransformResult(source, source, error=Finding("E999", 0, f"internal error: {detail}"))


def _tf2_alias(names: AliasTable) -> str:
    """The local name migrated code uses for `import tensorflow`."""
    if names.tf_roots:
        return "tf" if "tf" in names.tf_roots else sorted(names.tf_roots)[0]
    if "tf" in names.tf1_roots or "tf" not in names.aliases:
        return "tf"
    return "tf2"


def scan_todos(text: str) -> list[Finding]:
    found = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "TODO(tfmigrate" in line:
            match = TODO_RE.search(line)
            if match:
                found.append(Finding(match.group(1), lineno, match.group(2).strip()))
    return found
