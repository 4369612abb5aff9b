"""The pure part of tfmigrate: `transform_source(text) -> TransformResult`, one file, never raises.

Separation of concerns:
- `engine` (this module) turns one file's text into migrated text plus findings (`results`:
  what it returns, and which rule changed which line).
- `runner` finds files, reads and writes them (atomically), runs jobs in parallel.
- `cli` parses options and sets the exit code. Nothing else.
"""

from __future__ import annotations

import ast
import difflib
import re
import traceback
from dataclasses import dataclass, replace

from .cst_on_demand import cst

from . import tiers
from .cst_walk import transform
from .exports import AskedNames, module_exports
from .gcpause import cyclic_gc_paused
from .tf1_program import is_tf1_source, written_for_tf2
from .names import AliasTable, SourceLines, bindings, import_bindings, import_statements, imported_names, reexported
from .registry import all_rules
from .rule import ADD_IMPORTS, REMOVE_IMPORTS, RUNTIME_ALIAS, RUNTIME_MODULE, FileContext, Rule
from .results import ChangeTrack, Finding, TransformResult, scan_todos
from .import_removal import ImportReads, import_reads, keep_directive_comments, remove_unused_top_level_imports
from .parsing import forget_parses, index_by_type, indexed, nodes_of_types, parse, reparse_edited, statement_start
from .settled import PassRecord, settled
from .textpass import SourceView, heeded_removals
from .textpass import add_imports as text_add_imports
from .rules.graph_mode_programs import graph_role
from .rules.tf1_keras import keras_code

# A file that never spells one of these cannot hold TF1 code (TorchFix-style text pre-filter).
_PREFILTER = ("tensorflow",)


@dataclass(frozen=True)
class Options:
    target: str = "keras"
    select: frozenset[str] | None = None  # None: every rule
    safe_only: bool = False  # unsafe (structural) rules only report what they would change
    standalone: bool = False  # --target ctl: loops that carry their host side (`--standalone`)
    # The file belongs to a TF 1.x project (`tf1_program.is_tf1_project`; the runner decides for a
    # run's files): bare `tf.estimator` canned estimators are the v1 ones. Not a file written for
    # TF2 (`written_for_tf2`), unless `tf1_decided`: the fixpoint's later passes read the file as
    # its first pass did.
    tf1_program: bool = False
    tf1_decided: bool = False
    # Module-level names other modules of the program import from this one (`exports.imported_names`;
    # the runner finds them for a run's files): never deleted as unused here.
    exported: frozenset[str] = frozenset()
    # A module of the program that imports this one runs its Keras code in a TF1 graph with TF 1.x's
    # Keras (`runner` decides, after a first migration said `keras_module`): this one's is too.
    graph_keras: bool = False
    # The program's entry module that reaches, through its imports, a module of its own whose
    # Session code waits for the entry to turn graph mode on (`runner` decides, after a first
    # migration said `graph_role`): TFM104 switches it as it switches a Session program.
    graph_entry: bool = False


def transform_source(source: str, *, filename: str = "<string>", options: Options = Options()) -> TransformResult:
    """Migrate one module's text. Errors are returned, never raised; on error `output == source`.

    Cheapest first: a text pre-filter, then stdlib `ast` (what the file imports and references,
    so rules that cannot fire are never run), then a rule's `text_edits` fast path when it is the
    only rule left, and LibCST only for the files that still need it.
    """
    with cyclic_gc_paused():
        try:
            return _with_newlines(source, filename, options, reference=False)
        finally:
            # The file's trees die here, while the collector is paused: once it runs again, its
            # first collection walks every young object still alive, whole trees included.
            forget_parses()


def reference_transform(source: str, *, filename: str = "<string>", options: Options = Options()) -> TransformResult:
    """The same migration on LibCST alone, every rule's CST pass, no shortcuts (what tests compare with)."""
    with cyclic_gc_paused():
        try:
            return _with_newlines(source, filename, options, reference=True)
        finally:
            forget_parses()


def _with_newlines(source: str, filename: str, options: Options, *, reference: bool) -> TransformResult:
    """A file written with `\r\n` (or old Mac `\r`) line ends throughout is migrated as its `\n`
    twin, then given its line ends back, so the output never depends on the line-ending style."""
    newline = _newline(source)
    if newline == "\n":
        return _fixpoint(source, filename, options, reference=reference)
    result = _fixpoint(source.replace(newline, "\n"), filename, options, reference=reference)
    result.newline = newline
    result.output = source if result.output == result.source else result.output.replace("\n", newline)
    result.source = source
    return result


# Passes at most: a rule's output can be another rule's input (`from tensorflow.compat.v1 import
# logging` -> `tf.compat.v1.logging`, which TFM102 then moves to absl), so a run repeats the
# pipeline until it changes nothing, like ruff's fix loop; a second run then has nothing to do.
# A pass whose text edits can feed no rule (`settled`) is the last: most files need one pass.
MAX_PASSES = 3


def _fixpoint(source: str, filename: str, options: Options, *, reference: bool) -> TransformResult:
    """The pipeline repeated on its own output until that is stable, and refused where its output
    would read the runtime through a name the program binds to something else (`_runtime_alias_taken`)."""
    result = _passes(source, filename, options, reference=reference)
    if result.error is None and result.changed:
        line = _runtime_alias_taken(source, result.output)
        if line is not None:
            return TransformResult(source, source, error=Finding(
                "E010", line, f"the file binds `{RUNTIME_ALIAS}` here, the name migrated code gives `{RUNTIME_MODULE}`: "
                "rename it and run again"))
    return result


def _passes(source: str, filename: str, options: Options, *, reference: bool) -> TransformResult:
    """The pipeline repeated on its own output until that is stable. A TODO an earlier pass put
    above a statement that a later pass rewrote is dropped (the later pass adds one if it still
    applies), so no TODO outlives the code it was about."""
    result = _transform(source, filename, options, reference=reference)
    for _ in range(MAX_PASSES - 1):
        if result.error is not None or not result.changed or result.settled:
            return result
        if not options.tf1_decided:
            # The first pass respelled what made the file TF 1.x code (`tf.contrib`, `tf.Session`):
            # the next passes read its output as the same TF 1.x program (or as TF2 code, as it
            # read a TF 1.x project's file written for TF2).
            options = replace(options, tf1_program=result.tf1_program, tf1_decided=True)
        again = _transform(result.output, filename, options, reference=reference)
        if again.error is not None or not again.changed:
            return result
        again.output = _without_stale_todos(result.output, again.output, source)
        result = _merge_passes(source, result, again)
    return result


def _runtime_alias_taken(source: str, output: str) -> int | None:
    """The first line where `source` binds `tfm` to anything but `tfmigrate.runtime` (a variable,
    a parameter, another import), when `output` reads the runtime through that name; else None.
    Migrated code there would call the program's `tfm`."""
    alias = RUNTIME_ALIAS
    if alias not in source or f"{alias}." not in output:
        return None  # (a substring test first: a regex led by `\b` scans a whole file at a tenth of the speed)
    if not re.search(rf"\b{alias}\b", source) or not re.search(rf"(?<![\w.]){alias}\.", output):
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    nodes_of = nodes_of_types(tree)
    lines = [node.lineno for name, node in bindings(nodes_of) if name == alias]  # type: ignore[attr-defined]
    for node in nodes_of(ast.Import, ast.ImportFrom):
        bound = import_bindings(node)
        if bound is None:  # a relative import names what it binds, unqualified
            bound = {name.asname or name.name: None for name in node.names}
        if alias in bound and bound[alias] != RUNTIME_MODULE:
            lines.append(node.lineno)
    return min(lines) if lines else None


def _without_stale_todos(before: str, after: str, source: str) -> str:
    """`after` less the TODO lines of `before` (not in `source`) just above a line that changed."""
    if "# TODO(tfmigrate " not in before:
        return after  # no TODO line to drop (and no line diff of a large module to work out)
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    original = set(source.splitlines(keepends=True))
    stale: set[int] = set()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    opcodes = matcher.get_opcodes()
    for tag, i1, _i2, _j1, _j2 in opcodes:
        if tag in ("replace", "delete"):
            i = i1 - 1
            while i >= 0 and _TODO_LINE.match(a[i]) and a[i] not in original:
                stale.add(i)
                i -= 1
    if not stale:
        return after
    kept = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            kept.extend(line for i, line in zip(range(i1, i2), b[j1:j2]) if i not in stale)
        else:
            kept.extend(b[j1:j2])
    return "".join(kept)


_TODO_LINE = re.compile(r"[ \t]*# TODO\(tfmigrate ")


def _merge_passes(source: str, first: TransformResult, again: TransformResult) -> TransformResult:
    """One result from two passes: `again`'s output and TODOs, both passes' rules and steps."""
    track = ChangeTrack(source)
    for result in (first, again):
        if result.track is not None:
            track.steps.extend(result.track.steps)
            track.add_owners.extend(result.track.add_owners)
            track.remove_owners.extend(result.track.remove_owners)
            track.last_applied = result.track.last_applied or track.last_applied
    rules = list(dict.fromkeys(first.rules + again.rules))
    merged = TransformResult(source, again.output, rules=rules, todos=scan_todos(again.output), track=track, sites=first.sites)
    merged.asked = first.asked | again.asked
    merged.keras_module, merged.tf1_program = first.keras_module or again.keras_module, first.tf1_program
    merged.keras_code = first.keras_code  # (what the source spelled; the second pass reads the first's respellings)
    merged.graph_role = first.graph_role
    return merged


def _newline(source: str) -> str:
    """The file's line end when it uses one other than `\n` for every line, else `\n`."""
    if "\r" not in source:
        return "\n"
    crlf = source.count("\r\n")
    if crlf and crlf == source.count("\r") == source.count("\n"):
        return "\r\n"
    if "\n" not in source:
        return "\r"
    return "\n"  # mixed: migrated as it is


def _transform(source: str, filename: str, options: Options, *, reference: bool) -> TransformResult:
    if not any(token in source for token in _PREFILTER):
        return TransformResult(source, source, todos=scan_todos(source))
    if "\0" in source:
        line = source.count("\n", 0, source.index("\0")) + 1
        return TransformResult(source, source, error=Finding("E001", line, "syntax error: source contains a null byte"))
    view = None
    ast_error: SyntaxError | None = None
    try:
        tree = parse(source)
        view = None if reference else SourceView(source, tree)
    except SyntaxError as exc:
        ast_error = exc  # LibCST reports it (E001), or parses what `ast` cannot
    except (RecursionError, MemoryError):
        return _too_deep(source)
    if view is None:
        try:
            if ast_error is None and max_depth(tree) > MAX_DEPTH:
                return _too_deep(source)
            module = cst.parse_module(source)
        except cst.ParserSyntaxError as exc:
            return TransformResult(source, source, error=Finding("E001", exc.raw_line, f"syntax error: {exc.message}"))
        except (RecursionError, MemoryError, ValueError):
            if ast_error is None:
                return _too_deep(source)
        if ast_error is not None:  # LibCST takes it, Python does not (`too many nested parentheses`)
            return TransformResult(source, source, error=Finding("E001", ast_error.lineno or 0, f"syntax error: {ast_error.msg}"))
    try:
        names = view.names if view is not None else AliasTable.from_module(module)
        if not names.mentions_tensorflow():
            return TransformResult(source, source, todos=scan_todos(source))
        # The view's one walk indexes the Attribute nodes `is_tf1_source` may ask for.
        symbols = view.symbols() if view is not None else frozenset()
        attributes = (lambda: view.nodes_of(ast.Attribute)) if view is not None else (lambda: index_by_type(tree).get(ast.Attribute, []))
        ctx = FileContext(
            filename=filename, target=options.target, names=names, tf2_alias=_tf2_alias(names, tree), standalone=options.standalone,
            tf1_program=_reads_as_tf1(source, tree, view, names, options, attributes),
            exported=AskedNames(options.exported | module_exports(tree)), graph_keras=options.graph_keras,
            graph_entry=options.graph_entry,
        )
        rules = _rules(ctx, options)
        ctx.hosted = any(rule.CODE == "TFM101" for rule in rules)
        ctx.session_switch = any(rule.CODE == "TFM104" for rule in rules)
        if view is None:
            result = _Pipeline(source, None, ctx, options, module=module, reference=reference).run(rules)
            result.asked, result.keras_module, result.tf1_program = frozenset(ctx.exported.asked), ctx.keras_module, ctx.tf1_program
            return result
        ctx.source, ctx.source_symbols = source, symbols
        sites = _estimator_sites(source, view, symbols)
        rules = [rule for rule in rules
                 if type(rule).triggered(symbols) or type(rule).wanted(options) or type(rule).imports_a_trigger(view.names)]
        if not rules:
            result = TransformResult(source, source, todos=scan_todos(source), sites=sites)
            result.keras_code = keras_code(symbols, view.names, ctx)
            result.graph_role = graph_role(view.tree, symbols, source, ctx, result.keras_code[1], sites)
            return result
        pipeline = _Pipeline(source, view, ctx, options)
        result = pipeline.run(rules)
        result.sites = sites
        result.asked, result.keras_module, result.tf1_program = frozenset(ctx.exported.asked), ctx.keras_module, ctx.tf1_program
        result.keras_code = keras_code(symbols, view.names, ctx)
        result.graph_role = graph_role(view.tree, symbols, result.output, ctx, result.keras_code[1], sites)
        if result.changed and not options.safe_only:
            candidates = [rule for rule in all_rules() if _selected(rule, options)]
            if pipeline.record.cst_writers:
                pipeline.record.read_cst_writes(source, result.output, ctx.names)
            result.settled = settled(pipeline.record, source, ctx.names, candidates, [rule.CODE for rule in rules])
        return result
    except cst.ParserSyntaxError as exc:
        return TransformResult(source, source, error=Finding("E001", exc.raw_line, f"syntax error: {exc.message}"))
    except (TooDeep, RecursionError):
        return _too_deep(source)
    except Exception as exc:  # noqa: BLE001 - per-file isolation: report, never crash the run
        return _internal_error(source, exc)


def _reads_as_tf1(source: str, tree: ast.Module | None, view: SourceView | None, names: AliasTable, options: Options,
                  attributes) -> bool:
    """Whether the file is read as TF 1.x code: it spells TF1-only API itself (`is_tf1_source`), or
    belongs to a TF 1.x project (`Options.tf1_program`) and is not written for TF2."""
    if options.tf1_program and options.tf1_decided:
        return True
    if is_tf1_source(source, attributes):
        return True
    if not options.tf1_program or tree is None:
        return options.tf1_program
    return not written_for_tf2(view if view is not None else SourceView(source, tree, names=names))


def _estimator_sites(source: str, view: SourceView, symbols: frozenset[str]) -> list[tuple[int, str, bool]]:
    keys = tiers.estimator_keys()
    if not (symbols & keys) and f"{RUNTIME_MODULE}" not in source:
        return []
    return tiers.estimator_calls(view.nodes_of(ast.Call), view.names, keys)


# Deeper than this (ast nodes, root to leaf), LibCST's recursive passes take seconds and then
# overflow the stack; the file is reported instead (E008). Python's own parser stops at 200
# nested brackets; only long operator chains (`a + b + ...`, thousands long) get here.
MAX_DEPTH = 500


class TooDeep(Exception):
    pass


def max_depth(tree: ast.AST, limit: int = MAX_DEPTH) -> int:
    """The tree's depth, counted no further than `limit` + 1 (iterative: any depth is safe)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _too_deep(source: str) -> TransformResult:
    return TransformResult(source, source, error=Finding("E008", 0, f"too deeply nested to migrate (more than {MAX_DEPTH} levels)"))


def _rules(ctx: FileContext, options: Options) -> list[Rule]:
    """The selected rules for this target whose `should_run` gate passes, in order."""
    out = []
    for rule_cls in all_rules():
        if not _selected(rule_cls, options):
            continue
        rule = rule_cls(ctx)
        if rule.should_run():
            out.append(rule)
    return out


def _selected(rule_cls: type[Rule], options: Options) -> bool:
    return (options.select is None or rule_cls.CODE in options.select) and options.target in rule_cls.TARGETS


class _Pipeline:
    """The rules in order over one file, holding it as text (with its `SourceView`) while rules
    take their `text_edits` fast path, and as a CST only from the first rule that needs one.

    Output is the reference pipeline's (`_transform_cst`), byte for byte: a fast path says None
    whenever it cannot be sure, and the import visitors run on just what they read and change.
    """

    def __init__(
        self,
        source: str,
        view: SourceView | None,
        ctx: FileContext,
        options: Options,
        *,
        module: cst.Module | None = None,
        reference: bool = False,
    ) -> None:
        self.source = source
        self.ctx = ctx
        self.options = options
        self.reference = reference  # LibCST only: every rule's CST pass, the plain import visitors
        self.text: str = source
        self.view: SourceView | None = view
        self.module: cst.Module | None = module  # set while the file is held as a CST
        # Which lines each rule changes: the text after each rule that did something, diffed lazily.
        self.track = ChangeTrack(source)
        self.parsed: str | None = None  # a text known to parse (the output need not be parsed again)
        # (a text, a tree whose top-level statements before the first edited one are that text's)
        self.head: tuple[str, ast.Module] | None = None
        self.depth_checked = module is not None  # nesting depth fits LibCST (`MAX_DEPTH`)
        self._rendered: tuple[cst.Module | None, str] = (None, "")  # (module, its code)
        self._module_of_text: tuple[str | None, cst.Module | None] = (None, None)  # (text, the CST it is the code of)
        self.record = PassRecord()  # what the pass wrote (`settled`)

    def _current(self) -> str:
        return self._code() if self.module is not None else self.text

    def _code(self) -> str:
        """The CST's text, rendered once: the change track's steps that hold this module get the
        text too (`ChangeTrack.lines` would render each again)."""
        module = self.module
        if self._rendered[0] is not module:
            code = self.ctx.code_of(module)
            self._rendered = (module, code)
            steps = self.track.steps
            for index, (rule, summary, after, dry_run) in enumerate(steps):
                if after is module:
                    steps[index] = (rule, summary, code, dry_run)
        return self._rendered[1]

    def run(self, rules: list[Rule]) -> TransformResult:
        ctx, track = self.ctx, self.track
        for rule in rules:
            dry_run = self.options.safe_only and not type(rule).SAFE
            saved = _save(ctx) if dry_run else None
            state = (self.text, self.view, self.module)
            requests, todos_before, applied_before = _import_requests(ctx), len(ctx.todos), len(ctx.applied)
            fast = not self.reference and type(rule).text_edits is not Rule.text_edits
            if not (fast and self._as_text() and self._text_pass(rule)):
                if type(rule).WALK_SYMBOLS is not None and not self.reference:
                    rule.quiet_defs = self._quiet_defs(type(rule).WALK_SYMBOLS)
                module = self._as_cst()
                rule.header_comments = _header_comments(module)
                module = transform(module, rule)
                self.module = module
                if rule.changed:
                    ctx.applied.append(rule.CODE)
                    self.record.cst_writers.append(rule.CODE)
            if len(ctx.applied) == applied_before and len(ctx.todos) == todos_before:
                continue
            track.steps.append((rule.CODE, rule.SUMMARY, self.module if self.module is not None else self.text, dry_run))
            if dry_run:
                _restore(ctx, saved)
                del ctx.applied[applied_before:]
                self.text, self.view, self.module = state
                continue
            adds, removes = _import_requests(ctx)
            if adds != requests[0]:
                track.add_owners.append(rule.CODE)
            if removes != requests[1]:
                track.remove_owners.append(rule.CODE)
        if ctx.applied:
            _keep_reexports(ctx, self.source, self.ctx.filename)
            if self.reference:
                from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

                context = ctx.codemod.libcst_context()
                module = AddImportsVisitor(context).transform_module(self._as_cst())
                before = module.code
                self.module = RemoveImportsVisitor(context).transform_module(module)
                self._keep_directives(before)
            else:
                if ctx.adds_imports():
                    self.record.added_imports(self.ctx.codemod.scratch[ADD_IMPORTS])
                    self._add_imports()
                if ctx.codemod.scratch.get(REMOVE_IMPORTS):
                    before = self._current()
                    self._remove_imports()
                    self._keep_directives(before)
        return self._finish(self._current())

    def _finish(self, output: str) -> TransformResult:
        source, ctx = self.source, self.ctx
        if output != source and output is not self.parsed:
            try:
                if self.view is not None and self.view.source is output:
                    self.view.tree  # noqa: B018 - (parsed again where edited, or whole)
                else:
                    parse(output)
            except SyntaxError as exc:  # never hand back code that does not parse
                return _invalid(source, exc)
        self.track.last_applied = ctx.applied[-1:]
        return TransformResult(source, output, rules=ctx.applied, todos=scan_todos(output), track=self.track)

    def _text_pass(self, rule: Rule) -> bool:
        view = self.view
        assert view is not None
        saved = _save(self.ctx)
        plan = rule.text_edits(view)
        output = view.apply(plan, rule.CODE) if plan is not None else None
        if output is None:
            _restore(self.ctx, saved)  # the CST pass starts from what the rule saw, not what it half-did
            return False
        plan.schedule(self.ctx)  # type: ignore[union-attr]
        if plan.changed:  # type: ignore[union-attr]
            self.ctx.applied.append(rule.CODE)
        # Each TODO asked for, as the CST pass records them (`Rule.attach_messages`): a pass that
        # only adds TODOs is a step of the change track too.
        self.ctx.todos.extend((rule.CODE, message) for _, message in plan.todos)  # type: ignore[union-attr]
        if output != self.text:
            replacements = plan.replacements  # type: ignore[union-attr]
            self.record.wrote(rule.CODE, view, replacements)
            self.text, self.view = output, None
            if not plan.todos:  # type: ignore[union-attr]
                # The output's tree, parsed again (only the statements the edits fell in) when a
                # later step reads it; respelled names alone leave it parsing and its head as it was.
                self.view = SourceView(output, lambda: reparse_edited(view.tree, view.lines, replacements, output) or parse(output),
                                       names=self.ctx.names)
                if view.respells_chains_only(replacements):
                    self.parsed, self.head = output, (output, view.tree)
        return True

    def _as_text(self) -> bool:
        """Hold the file as text and a SourceView (resolving names with the original table)."""
        if self.module is not None:
            self.text, self.module, self.view = self._code(), None, None
            self._module_of_text = (self.text, self._rendered[0])
        if self.view is None:
            if "\r" in self.text:
                return False
            self.view = SourceView(self.text, parse(self.text), names=self.ctx.names)
        return True

    def _quiet_defs(self, wanted: frozenset[str]) -> list[tuple[str, bool]] | None:
        """`SourceView.quiet_defs` of the file held as text (None once it is a CST)."""
        if self.module is not None or "\r" in self.text:
            return None
        try:
            if self.view is None:
                self.view = SourceView(self.text, parse(self.text), names=self.ctx.names)
            return self.view.quiet_defs(wanted)  # (a view from a text pass parses its text now)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def _as_cst(self) -> cst.Module:
        if self.module is None and self._module_of_text[0] is self.text:
            # Back to a CST with no text pass's edit since it was one (the text pass declined):
            # the same tree, not a parse of its code.
            self.module = self._module_of_text[1]
            self.ctx.parsed = (self.module, self.text)
        if self.module is None:
            if self.depth_checked is not True:
                tree = self.view.tree if self.view is not None else parse(self.text)
                if max_depth(tree) > MAX_DEPTH:
                    raise TooDeep
                self.depth_checked = True
            self.module = cst.parse_module(self.text)
            self.ctx.parsed = (self.module, self.text)
        return self.module

    def _add_imports(self) -> None:
        """AddImportsVisitor's result, computed on the module's head only.

        The visitor reads and changes nothing past the first statement after the top import
        block (it adds there and gives that statement an empty line); run on the whole module
        it still copies and walks every node, which costs more than all the rules together.
        """
        code = self._current()
        tree = None
        if "\r" not in code:
            if self.head is not None and self.head[0] is code and self.module is None:
                tree = self.head[1]  # the import block and the line after it are all it reads
            elif self.view is not None and self.module is None:
                tree = self.view.tree
            else:
                try:
                    tree = parse(code)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    pass  # the CST path below; the output check reports it
        if tree is not None:
            items = self.ctx.codemod.scratch[ADD_IMPORTS]
            output = text_add_imports(code, tree, items)
            if output is not None:
                # Whole import lines after a statement's last line: it parses as `code` did.
                self.parsed = output
                if self.module is not None or output is not code:
                    self.view = None
                self.text, self.module = output, None
                return
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
        # The head ends where that statement starts; a placeholder `pass` stands in for it (the
        # visitor only gives the statement after the imports its empty line), so a long first
        # function is not parsed for nothing.
        lines = SourceLines(self.text)
        first = body[index]
        start = statement_start(first)
        cut = lines.starts[start - 1]
        head_text = lines.data[:cut].decode("utf-8") + _PLACEHOLDER
        from libcst.codemod.visitors import AddImportsVisitor

        head = AddImportsVisitor(self.ctx.codemod.libcst_context()).transform_module(cst.parse_module(head_text)).code
        if not head.endswith(_PLACEHOLDER):  # pragma: no cover - the visitor never touches it
            self.module = _add_imports(self.ctx, self._as_cst())
            return
        self.text, self.view = head[: -len(_PLACEHOLDER)] + lines.data[cut:].decode("utf-8"), None

    def _keep_directives(self, before: str) -> None:
        """The linter directives the import removal took with an import, put back."""
        after = self._current()
        kept = keep_directive_comments(before, after)
        if kept is not after:
            self.text, self.view, self.module = kept, None, None

    def _remove_imports(self) -> None:
        """RemoveImportsVisitor (scope analysis of the whole module) only for imports that may
        really have lost their last use; those surely still used are kept without asking."""
        code = self._current()
        # (the last text pass's tree where it is this text's: only the statements it edited parsed again)
        current = self.view if self.view is not None and self.view.source is code and self.module is None else None
        view = SourceView(code, current.tree if current is not None else parse(code))
        entries = heeded_removals(self.ctx.codemod.scratch[REMOVE_IMPORTS])
        pending = [entry for entry in entries if not view.certainly_used(entry[2] or entry[1] or entry[0])]
        reads: ImportReads | None = None
        if any(obj is not None for _, obj, _ in pending):
            # `from m import x` used in every scope that imports it (in a function, say): kept.
            try:
                reads = import_reads(code, view.tree)
            except (SyntaxError, ValueError, RecursionError):  # pragma: no cover - the module parsed before
                reads = ImportReads(set(), set(), set())
            pending = [entry for entry in pending if entry[1] is None or (entry[2] or entry[1]) not in reads.in_every_scope]
        if pending and "\r" not in code and len({entry[0] for entry in pending}) == len(pending):
            # `import a.b as x` whose `x` appears nowhere else: the visitor deletes just its line
            # (one entry per module: the visitor keeps only the last alias asked of a module).
            spans = [view.removable_import(asname, 0, module) if obj is None and asname else None for module, obj, asname in pending]
            if all(spans) and len(set(spans)) == len(spans):
                data = view.lines.data
                for start, end in sorted(spans, reverse=True):  # type: ignore[type-var]
                    data = data[:start] + data[end:]
                self.text, self.view, self.module = data.decode("utf-8"), None, None
                self.parsed = self.text  # lone module-level import lines gone: it parses as `code` did
                return
        if pending:
            self.ctx.codemod.scratch[REMOVE_IMPORTS] = pending
            text = remove_unused_top_level_imports(code, view, pending, self.ctx.codemod, reads)
            if text is not None:
                self.text, self.view, self.module = text, None, None
                return
            from libcst.codemod.visitors import RemoveImportsVisitor

            self.module = RemoveImportsVisitor(self.ctx.codemod.libcst_context()).transform_module(self._as_cst())


_PLACEHOLDER = "pass\n"


def _keep_reexports(ctx: FileContext, source: str, filename: str) -> None:
    """Drops the removal requests for imports the source never read that it imports for other
    code to read (`reexported`: a package's `__init__.py`, `# noqa: F401`): the migration deletes
    those only where it made them unused."""
    entries = ctx.codemod.scratch.get(REMOVE_IMPORTS)
    if not entries:
        return
    kept = reexported(filename, source, parse)
    if kept is not None and not kept:
        return
    read = {node.id for node in indexed(parse(source)).get(ast.Name, ())}  # type: ignore[attr-defined]
    ctx.codemod.scratch[REMOVE_IMPORTS] = [
        (module, obj, asname) for module, obj, asname in entries
        if (local := asname or obj or module.partition(".")[0]) in read or (kept is not None and local not in kept)
    ]


def _header_comments(module: cst.Module) -> frozenset[str]:
    """The comments directly above the module's first statement, which LibCST holds in the module's
    header rather than in that statement's leading lines (`Rule.attach_messages` reads them)."""
    block: list[str] = []
    for line in module.header:
        if line.comment is None:
            block = []
        else:
            block.append(line.comment.value)
    return frozenset(block)



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
    from libcst.codemod.visitors import AddImportsVisitor

    head = AddImportsVisitor(ctx.codemod.libcst_context()).transform_module(head)
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


def _import_requests(ctx: FileContext) -> tuple[int, int]:
    scratch = ctx.codemod.scratch
    return (
        len(scratch.get(ADD_IMPORTS, ())),
        len(scratch.get(REMOVE_IMPORTS, ())),
    )


def _save(ctx: FileContext) -> tuple:
    scratch = {k: list(v) if isinstance(v, list) else v for k, v in ctx.codemod.scratch.items()}
    names = (dict(ctx.names.aliases), set(ctx.names.tf_roots), set(ctx.names.tf1_roots))
    return scratch, len(ctx.todos), dict(ctx.scratch), names


def _restore(ctx: FileContext, saved: tuple | None) -> None:
    """Undo a rule's side effects on the context (scheduled imports, TODOs, scratch, retired aliases)."""
    assert saved is not None
    scratch, todos, rule_scratch, (aliases, tf_roots, tf1_roots) = saved
    ctx.codemod.scratch.clear()
    ctx.codemod.scratch.update(scratch)
    del ctx.todos[todos:]
    ctx.scratch.clear()
    ctx.scratch.update(rule_scratch)
    for current, before in ((ctx.names.aliases, aliases), (ctx.names.tf_roots, tf_roots), (ctx.names.tf1_roots, tf1_roots)):
        current.clear()
        current.update(before)


def _invalid(source: str, exc: SyntaxError) -> TransformResult:
    return TransformResult(
        source, source, error=Finding("E998", exc.lineno or 0, f"internal error: migration produced invalid code: {exc.msg}")
    )


def _internal_error(source: str, exc: Exception) -> TransformResult:
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return TransformResult(source, source, error=Finding("E999", 0, f"internal error: {detail}"))


def _tf2_alias(names: AliasTable, tree: ast.Module) -> str:
    """The local name migrated code uses for `import tensorflow`: one the module binds so (a
    function's own `import tensorflow` binds it in that function only), else `tf` where that is
    free or TF1's, else `tf2`."""
    top = _module_level_imports(tree)
    roots = names.tf_roots & top
    if roots:
        return "tf" if "tf" in roots else sorted(roots)[0]
    if names.aliases.get("tf") == "tensorflow.compat.v2" and "tf" in top:
        return "tf"  # (TF2 itself: `import tensorflow.compat.v2 as tf` becomes `import tensorflow as tf`)
    if "tf" in names.tf1_roots or "tf" not in names.aliases or ("tf" in names.tf_roots and "tf" not in top):
        return "tf"
    return "tf2"


def _module_level_imports(tree: ast.Module) -> set[str]:
    """The names import statements bind at module level (in its `if`/`try`/`with` blocks too,
    not in a function or class)."""
    return {name for stmt in import_statements(tree, in_scopes=False) for name in imported_names(stmt)}

