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

from .names import AliasTable, SourceLines
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
    if view is None:
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError as exc:
            return TransformResult(source, source, error=Finding("E001", exc.raw_line, f"syntax error: {exc.message}"))
    try:
        names = view.names if view is not None else AliasTable.from_module(module)
        if not names.mentions_tensorflow():
            return TransformResult(source, source, todos=scan_todos(source))
        ctx = FileContext(filename=filename, target=options.target, names=names, tf2_alias=_tf2_alias(names))
        rules = _rules(ctx, options)
        if view is None:
            return _transform_cst(module, source, ctx, rules, reference=reference)
        symbols = view.symbols()
        rules = [rule for rule in rules if type(rule).triggered(symbols)]
        if not rules:
            return TransformResult(source, source, todos=scan_todos(source))
        return _Pipeline(source, view, ctx).run(rules)
    except cst.ParserSyntaxError as exc:
        return TransformResult(source, source, error=Finding("E001", exc.raw_line, f"syntax error: {exc.message}"))
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
    """Every rule's CST pass, then the import visitors (the reference pipeline)."""
    for rule in rules:
        module = module.visit(rule)
        if rule.changed:
            ctx.applied.append(rule.CODE)
    if ctx.applied:
        module = AddImportsVisitor(ctx.codemod).transform_module(module)
        module = RemoveImportsVisitor(ctx.codemod).transform_module(module)
    return _finish(source, module.code, ctx.applied)


class _Pipeline:
    """The rules in order over one file, holding it as text (with its `SourceView`) while rules
    take their `text_edits` fast path, and as a CST only from the first rule that needs one.

    Output is the reference pipeline's (`_transform_cst`), byte for byte: a fast path says None
    whenever it cannot be sure, and the import visitors run on just what they read and change.
    """

    def __init__(self, source: str, view: SourceView, ctx: FileContext) -> None:
        self.source = source
        self.ctx = ctx
        self.text: str = source
        self.view: SourceView | None = view
        self.module: cst.Module | None = None  # set while the file is held as a CST

    def run(self, rules: list[Rule]) -> TransformResult:
        ctx = self.ctx
        for rule in rules:
            if type(rule).text_edits is not Rule.text_edits and self._as_text() and self._text_pass(rule):
                continue
            module = self._as_cst().visit(rule)
            self.module = module
            if rule.changed:
                ctx.applied.append(rule.CODE)
        if ctx.applied:
            if ctx.adds_imports():
                self._add_imports()
            if ctx.codemod.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
                self._remove_imports()
        output = self.module.code if self.module is not None else self.text
        return _finish(self.source, output, ctx.applied)

    def _text_pass(self, rule: Rule) -> bool:
        view = self.view
        assert view is not None
        plan = rule.text_edits(view)
        output = view.apply(plan, rule.CODE) if plan is not None else None
        if output is None:
            return False
        plan.schedule(self.ctx)  # type: ignore[union-attr]
        if plan.changed:  # type: ignore[union-attr]
            self.ctx.applied.append(rule.CODE)
        if output != self.text:
            self.text, self.view = output, None
        return True

    def _as_text(self) -> bool:
        """Hold the file as text and a SourceView (resolving names with the original table)."""
        if self.module is not None:
            self.text, self.module, self.view = self.module.code, None, None
        if self.view is None:
            if "\r" in self.text:
                return False
            self.view = SourceView(self.text, parse(self.text), names=self.ctx.names)
        return True

    def _as_cst(self) -> cst.Module:
        if self.module is None:
            self.module = cst.parse_module(self.text)
        return self.module

    def _add_imports(self) -> None:
        """AddImportsVisitor's result, computed on the module's head only.

        The visitor reads and changes nothing past the first statement after the top import
        block (it adds there and gives that statement an empty line); run on the whole module
        it still copies and walks every node, which costs more than all the rules together.
        """
        if self.module is not None or "\r" in self.text:
            self.module = _add_imports(self.ctx, self._as_cst())
            return
        tree = self.view.tree if self.view is not None else parse(self.text)
        body = tree.body
        index = 1 if body and isinstance(body[0], (ast.Expr, ast.Assign)) else 0
        while index < len(body) and isinstance(body[index], (ast.Import, ast.ImportFrom)):
            index += 1
        if index >= len(body):
            self.module = _add_imports(self.ctx, self._as_cst())
            return
        # Up to the end of that statement's last line (a generous head is harmless; see above).
        lines = SourceLines(self.text)
        last = body[index].end_lineno or 0
        cut = lines.starts[last] if last < len(lines.starts) else len(lines.data)
        head_text = lines.data[:cut].decode("utf-8")
        head = AddImportsVisitor(self.ctx.codemod).transform_module(cst.parse_module(head_text))
        self.text, self.view = head.code + lines.data[cut:].decode("utf-8"), None

    def _remove_imports(self) -> None:
        """RemoveImportsVisitor (scope analysis of the whole module) only for imports that may
        really have lost their last use; those surely still used are kept without asking."""
        code = self.module.code if self.module is not None else self.text
        view = SourceView(code, parse(code))
        entries = self.ctx.codemod.scratch[RemoveImportsVisitor.CONTEXT_KEY]
        pending = [entry for entry in entries if not view.certainly_used(entry[2] or entry[1] or entry[0])]
        if pending:
            self.ctx.codemod.scratch[RemoveImportsVisitor.CONTEXT_KEY] = pending
            self.module = RemoveImportsVisitor(self.ctx.codemod).transform_module(self._as_cst())


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
    if "TODO(tfmigrate" not in text:
        return []
    found = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "TODO(tfmigrate" in line:
            match = TODO_RE.search(line)
            if match:
                found.append(Finding(match.group(1), lineno, match.group(2).strip()))
    return found
