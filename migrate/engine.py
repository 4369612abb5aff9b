"""The pure part of tfmigrate: `transform_source(text) -> TransformResult`, one file, never raises.

Separation of concerns:
- `engine` (this module) turns one file's text into migrated text plus findings.
- `runner` finds files, reads and writes them (atomically), runs jobs in parallel.
- `cli` parses options and sets the exit code. Nothing else.
"""

from __future__ import annotations

import ast
import difflib
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
    """One report entry. `line`..`end_line` are 1-based; `cell` is set for notebooks (1-based, all cells)."""

    code: str
    line: int
    message: str
    end_line: int | None = None
    cell: int | None = None

    def as_dict(self) -> dict:
        out: dict = {"code": self.code, "line": self.line, "message": self.message}
        if self.end_line is not None:
            out["end_line"] = self.end_line
        if self.cell is not None:
            out["cell"] = self.cell
        return out

    def moved(self, line: int, end_line: int | None = None) -> Finding:
        return Finding(self.code, line, self.message, end_line if self.end_line is not None else None, self.cell)


@dataclass
class TransformResult:
    """What one file's migration did.

    Coordinates: `todos` are lines of `output`; `changes` (the lines each applied rule rewrote) and
    `unsafe_fixes` (what an unsafe rule would rewrite under `safe_only`) are lines of `source`.
    `origin[i]` is the `source` line that `output` line i+1 came from (negated when the line was
    rewritten rather than copied), so either can be mapped to the other (`todos_in_source`,
    `unsafe_fixes_in_output`).
    """

    source: str
    output: str
    rules: list[str] = field(default_factory=list)
    todos: list[Finding] = field(default_factory=list)
    error: Finding | None = None
    changes: list[Finding] = field(default_factory=list)
    unsafe_fixes: list[Finding] = field(default_factory=list)
    origin: list[int] | None = None  # None: output lines are source lines
    import_insertions: list[int] = field(default_factory=list)  # output lines the import pass inserted

    @property
    def todos_in_source(self) -> list[Finding]:
        return [t.moved(self.source_line(t.line)) for t in self.todos]

    @property
    def unsafe_fixes_in_output(self) -> list[Finding]:
        return [f.moved(self.output_line(f.line), self.output_line(f.end_line or f.line)) for f in self.unsafe_fixes]

    def source_line(self, line: int) -> int:
        if self.origin is None or not self.origin:
            return line
        return abs(self.origin[min(max(line, 1), len(self.origin)) - 1])

    def output_line(self, line: int) -> int:
        if self.origin is None:
            return line
        return output_line(self.origin, line, self.output.splitlines())

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
    safe_only: bool = False  # unsafe (structural) rules only report what they would change
    standalone: bool = False  # --target ctl: loops that carry their host side (`--standalone`)


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
    # Which lines each rule changes: the text before and after each rule that did something is
    # diffed, and `origin` carries every current line back to the source line it came from.
    code = source
    origin = list(range(1, _line_count(source) + 1))
    changes: list[Finding] = []
    unsafe: list[Finding] = []
    add_owners: list[str] = []  # rules that scheduled an import to add / to remove if unused
    remove_owners: list[str] = []
    for rule_cls in all_rules():
        if options.select is not None and rule_cls.CODE not in options.select:
            continue
        if options.target not in rule_cls.TARGETS:
            continue
        rule = rule_cls(ctx)
        if not rule.should_run():
            continue
        dry_run = options.safe_only and not rule_cls.SAFE
        saved = _save(ctx) if dry_run else None
        requests, todos_before = _import_requests(ctx), len(ctx.todos)
        updated = module.visit(rule)
        if not (rule.changed or len(ctx.todos) > todos_before):
            if not dry_run:
                module = updated
            continue
        new_code = updated.code
        hunks, new_origin = _line_diff(code, new_code, origin)
        found = [Finding(rule_cls.CODE, lo, rule_cls.SUMMARY, hi) for lo, hi in hunks]
        if dry_run:
            _restore(ctx, saved)
            unsafe.extend(found)
            continue
        module, code, origin = updated, new_code, new_origin
        changes.extend(found)
        if rule.changed:
            ctx.applied.append(rule_cls.CODE)
        adds, removes = _import_requests(ctx)
        if adds != requests[0]:
            add_owners.append(rule_cls.CODE)
        if removes != requests[1]:
            remove_owners.append(rule_cls.CODE)
    if ctx.applied:
        module = AddImportsVisitor(ctx.codemod).transform_module(module)
        module = RemoveImportsVisitor(ctx.codemod).transform_module(module)
    output = module.code
    import_insertions: list[int] = []
    if output != code:
        # The import pass: added lines are charged to the rules that asked for an import, removed
        # ones to the rules that asked for an unused import to go (a rule that changed text
        # without saying so would land on the last applied rule).
        kinds: list[str] = []
        hunks, new_origin = _line_diff(code, output, origin, inserted=import_insertions, kinds=kinds)
        summaries = {r.CODE: r.SUMMARY for r in all_rules()}
        for (lo, hi), kind in zip(hunks, kinds):
            owners = {"insert": add_owners, "delete": remove_owners}.get(kind, add_owners + remove_owners)
            for owner in dict.fromkeys(owners or ctx.applied[-1:]):
                changes.append(Finding(owner, lo, summaries[owner], hi))
        origin = new_origin
    if output != source:
        try:
            ast.parse(output)
        except SyntaxError as exc:  # never hand back code that does not parse
            return TransformResult(
                source, source, error=Finding("E998", exc.lineno or 0, f"internal error: migration produced invalid code: {exc.msg}")
            )
    changes.sort(key=lambda f: (f.line, f.code))
    unsafe.sort(key=lambda f: (f.line, f.code))
    return TransformResult(
        source,
        output,
        rules=ctx.applied,
        todos=scan_todos(output),
        changes=_merge(changes),
        unsafe_fixes=_merge(unsafe),
        origin=origin if output != source else None,
        import_insertions=import_insertions,
    )


def _import_requests(ctx: FileContext) -> tuple[int, int]:
    scratch = ctx.codemod.scratch
    return (
        len(scratch.get(AddImportsVisitor.CONTEXT_KEY, ())),
        len(scratch.get(RemoveImportsVisitor.CONTEXT_KEY, ())),
    )


def _save(ctx: FileContext) -> tuple:
    scratch = {k: list(v) if isinstance(v, list) else v for k, v in ctx.codemod.scratch.items()}
    return scratch, len(ctx.todos), dict(ctx.scratch)


def _restore(ctx: FileContext, saved: tuple | None) -> None:
    """Undo a dry-run rule's side effects on the context (scheduled imports, TODOs, scratch)."""
    assert saved is not None
    scratch, todos, rule_scratch = saved
    ctx.codemod.scratch.clear()
    ctx.codemod.scratch.update(scratch)
    del ctx.todos[todos:]
    ctx.scratch.clear()
    ctx.scratch.update(rule_scratch)


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _line_diff(
    before: str, after: str, origin: list[int], inserted: list[int] | None = None, kinds: list[str] | None = None
) -> tuple[list[tuple[int, int]], list[int]]:
    """Source-line ranges that changed from `before` to `after`, and `after`'s origin map.

    `origin[i]` is the source line of `before` line i+1, negated for a rewritten line. A pure
    insertion is charged to the line it lands before (a TODO comment to its statement). `inserted` collects `after` line numbers of
    pure insertions; `kinds` gets each range's opcode (insert, delete, replace).
    """
    a, b = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ranges: list[tuple[int, int]] = []
    new_origin: list[int] = []
    last = origin[-1] if origin else 1
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            new_origin.extend(origin[i1:i2])
            continue
        if i2 > i1:
            src = [abs(o) for o in origin[i1:i2]]
        else:
            src = [abs(origin[i1]) if i1 < len(origin) else abs(last)]
            if inserted is not None:
                inserted.extend(range(j1 + 1, j2 + 1))
        ranges.append((min(src), max(src)))
        if kinds is not None:
            kinds.append(tag)
        # Line k of the new block is charged to line k of the old one, counting code lines only: a
        # comment (a TODO) belongs to the line it precedes.
        k = 0
        for line in b[j1:j2]:
            new_origin.append(-src[min(k, len(src) - 1)])
            if not line.lstrip().startswith("#"):
                k += 1
    return ranges, new_origin


def _merge(found: list[Finding]) -> list[Finding]:
    """One finding per rule and contiguous run of source lines."""
    merged: dict[str, list[Finding]] = {}
    for item in sorted(found, key=lambda f: (f.code, f.line)):
        runs = merged.setdefault(item.code, [])
        end = item.end_line or item.line
        if runs and item.line <= (runs[-1].end_line or runs[-1].line) + 1:
            runs[-1].end_line = max(runs[-1].end_line or runs[-1].line, end)
        else:
            runs.append(Finding(item.code, item.line, item.message, end))
    return sorted((f for runs in merged.values() for f in runs), key=lambda f: (f.line, f.code))


def output_line(origin: list[int], line: int, text: list[str] | None = None) -> int:
    """The output line holding source `line`: its copy, else the first line (not a comment) rewritten
    from it, else the first line from a later source line."""
    derived = after = None
    for index, src in enumerate(origin, start=1):
        if src == line:
            return index
        comment = text is not None and index <= len(text) and text[index - 1].lstrip().startswith("#")
        if derived is None and -src == line and not comment:
            derived = index
        if after is None and abs(src) > line:
            after = index
    return derived or after or max(len(origin), 1)


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
