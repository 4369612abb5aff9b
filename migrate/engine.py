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
from .rule import TODO_RE, FileContext

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
    standalone: bool = False  # --target ctl: loops that do not import tfmigrate.runtime where avoidable


def transform_source(source: str, *, filename: str = "<string>", options: Options = Options()) -> TransformResult:
    """Migrate one module's text. Errors are returned, never raised; on error `output == source`."""
    if not any(token in source for token in _PREFILTER):
        return TransformResult(source, source, todos=scan_todos(source))
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return TransformResult(source, source, error=Finding("E001", exc.raw_line, f"syntax error: {exc.message}"))
    try:
        return _transform(module, source, filename, options)
    except Exception as exc:  # noqa: BLE001 - per-file isolation: report, never crash the run
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return TransformResult(source, source, error=Finding("E999", 0, f"internal error: {detail}"))


def _transform(module: cst.Module, source: str, filename: str, options: Options) -> TransformResult:
    names = AliasTable.from_module(module)
    if not names.mentions_tensorflow():
        return TransformResult(source, source, todos=scan_todos(source))
    ctx = FileContext(
        filename=filename, target=options.target, names=names, tf2_alias=_tf2_alias(names), standalone=options.standalone
    )
    for rule_cls in all_rules():
        if options.select is not None and rule_cls.CODE not in options.select:
            continue
        if options.target not in rule_cls.TARGETS:
            continue
        rule = rule_cls(ctx)
        if not rule.should_run():
            continue
        module = module.visit(rule)
        if rule.changed:
            ctx.applied.append(rule_cls.CODE)
    if ctx.applied:
        module = AddImportsVisitor(ctx.codemod).transform_module(module)
        module = RemoveImportsVisitor(ctx.codemod).transform_module(module)
    output = module.code
    if output != source:
        try:
            ast.parse(output)
        except SyntaxError as exc:  # never hand back code that does not parse
            return TransformResult(
                source, source, error=Finding("E998", exc.lineno or 0, f"internal error: migration produced invalid code: {exc.msg}")
            )
    return TransformResult(source, output, rules=ctx.applied, todos=scan_todos(output))


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
