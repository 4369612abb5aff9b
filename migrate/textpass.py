"""The text fast path: what a file references, from stdlib `ast`, and byte-exact edits spliced into it.

LibCST is the reference for every rule, and a file some structural rule may change still goes
through it. But most TF1 files only need names spelled the TF2 way, and parsing them into a CST
(plus a transformer pass and codegen) costs many times what `ast.parse` does. `SourceView` reads
one file with `ast`: its import-alias table, every dotted chain rooted at an import (with byte
offsets and its statement), the canonical TF1 symbols it references (so the engine can tell which
rules can fire at all), and which names stay in use. A rule with a `text_edits` method turns that
into a `TextPlan` (replacements and TODO comments) and `SourceView.apply` splices it, or says
`None` whenever the CST path might come out differently (parenthesised chains, one-line suites,
f-strings, ...), and the engine falls back to LibCST. `tests/test_textpass.py` checks that both
paths agree, byte for byte, on every fixture and a generated corpus.
"""

from __future__ import annotations

import ast
import bisect
import io
import keyword
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field

from .names import AliasTable, SourceLines, canonical_name
from .parsing import NODE_FIELDS, STATEMENT_SCANS, child_fields, index_by_type, indexed, node_subtypes, remember_index, statement_start
from .todos import superseded, todo_comment

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

# (a set lookup in `_walk` costs less than `isinstance`)
_STATEMENT_TYPES = frozenset(node_subtypes(ast.stmt))
_SCOPE_TYPES = frozenset(_SCOPES)
# The other node types `_walk` reads more of than their children: f-strings and what binds names.
_OTHER_TYPES = frozenset({ast.JoinedStr, ast.arg, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping})
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", re.ASCII)
_TODO_MARK = b"TODO(tfmigrate"


@dataclass(slots=True)
class Chain:
    """A maximal dotted Name/Attribute chain whose root is an import (`tf.gfile.Exists`)."""

    dotted: str
    start: int  # byte offsets into the file
    end: int
    stmt: ast.stmt  # innermost statement holding it
    in_fstring: bool
    in_import: bool  # the module path of an `import`/`from ... import` statement
    # Inside another attribute's value (`tf.train.Saver(x).save`): TFM101's CST pass never visits
    # those (its visit_Attribute does not descend), but other rules and name uses see them.
    under_attribute: bool = False
    node: ast.expr | None = None
    call: bool = False  # the `func` of a call
    bare: bool = False  # a lone Name (recorded only as a call's func), not an Attribute chain

    def prefix_end(self, parts: int, lines: SourceLines) -> int:
        """Byte offset where the chain's first `parts` names end (`tf.estimator` of `tf.estimator.X`)."""
        node = self.node
        for _ in range(self.dotted.count(".") + 1 - parts):
            node = node.value  # type: ignore[union-attr]
        return lines.offset(node.end_lineno, node.end_col_offset)  # type: ignore[union-attr, arg-type]


@dataclass
class TextPlan:
    """Edits one rule wants: byte-range replacements and TODO comments above statements."""

    replacements: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, text); "" deletes
    todos: list[tuple[ast.stmt, str]] = field(default_factory=list)
    changed: bool = False
    # What the CST pass would have scheduled on the context (run after a successful splice).
    needs_tf2: bool = False
    needs_runtime: bool = False
    removals: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    imports: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # (module, obj, asname) to add

    def schedule(self, ctx) -> None:
        if self.needs_tf2:
            ctx.need_tf2()
        if self.needs_runtime:
            ctx.need_runtime()
        for module, obj, asname in self.imports:
            ctx.codemod.add(module, obj, asname)
        for module, obj, asname in self.removals:
            ctx.drop_import_if_unused(module, obj, asname)


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def heeded_removals(entries: list[tuple[str, str | None, str | None]]) -> list[tuple[str, str | None, str | None]]:
    """The removal requests LibCST's RemoveImportsVisitor acts on: of the aliases asked of one
    `import module`, only the last (it keeps one per module); every `from module import name`."""
    return list({(module, obj, asname if obj else None): (module, obj, asname) for module, obj, asname in entries}.values())


# Statements with a block: the lines after one's last statement may be its block's (LibCST's).
COMPOUND_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
                       ast.With, ast.AsyncWith, ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


class SourceView:
    """One module seen through stdlib `ast`: alias table, chains, symbols, name uses."""

    def __init__(self, source: str, tree: ast.Module | Callable[[], ast.Module], names: AliasTable | None = None) -> None:
        """`tree`: the module's `ast`, or a function that gives it when it is first needed (a
        rule's output is parsed again only if a later step reads its tree); `names`: resolve with
        this table (the original file's, once rules have run) instead."""
        self.source = source
        self._tree, self._tree_of = (None, tree) if callable(tree) else (tree, None)
        self.lines = SourceLines(source)
        self.names = names if names is not None else AliasTable.from_ast(tree, self.lines)
        self._scanned = False
        self._symbols: frozenset[str] | None = None
        self._by_type: dict[type, list[ast.AST]] | None = None

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = self._tree_of()  # type: ignore[misc]
            self._tree_of = None
        return self._tree

    def respells_chains_only(self, replacements: list[tuple[int, int, str]]) -> bool:
        """Whether each replacement puts a dotted name (`tf.compat.v1.placeholder`) where a chain
        read as a value stood, so the text still parses: a value read is an expression anywhere,
        and a dotted name is an expression with the same tokens at its ends (not under a walrus,
        `del`, an assignment or an f-string, which may want a bare name or other text)."""
        spans = {(chain.start, chain.end): chain for chain in self.chains}
        last = -1
        for start, end, text in sorted(replacements):
            if start < last or not _DOTTED_NAME.fullmatch(text) or any(keyword.iskeyword(part) for part in text.split(".")):
                return False
            last = end
            chain = spans.get((start, end))
            if chain is None:
                if not self._module_path_at(start, end):
                    return False
            elif chain.in_fstring or chain.node is None or type(getattr(chain.node, "ctx", None)) is not ast.Load:
                return False
        return True

    def _module_path_at(self, start: int, end: int) -> bool:
        """Whether bytes start:end are the whole module path of an import (`tensorflow.compat.v1`
        of `import tensorflow.compat.v1 as tf`), which another dotted path may replace."""
        data = self.lines.data
        if (start and data[start - 1 : start] not in (b" ", b"\t")) or data[end : end + 1] not in (b" ", b"\t", b"\n", b",", b""):
            return False
        path = data[start:end].decode("utf-8", "replace")
        line = bisect.bisect_right(self.lines.starts, start)
        for stmt, _ in self.imports:
            if stmt.lineno == line == stmt.end_lineno:
                if isinstance(stmt, ast.Import):
                    return any(alias.name == path for alias in stmt.names)
                return stmt.module == path and not stmt.level
        return False

    def nodes_of(self, *kinds: type) -> list:
        """Every node of the tree of one of these exact types (one type: depth-first order; several:
        by position). The tree is walked
        once for all the rules that share this view (an `ast.walk` per rule cost more than the rules)."""
        if self._by_type is None:
            self._by_type = indexed(self.tree)
        if len(kinds) == 1:
            return self._by_type.get(kinds[0], [])
        found = [node for kind in kinds for node in self._by_type.get(kind, ())]
        found.sort(key=_position)
        return found

    # -- the one walk -----------------------------------------------------------------------
    def _scan(self) -> None:
        """Every rule's chains, imports, loads and binds, from one walk of the tree. A top-level
        statement of several lines that this run walked before in another view of the file (a
        text pass's output shares the statements its edits missed, `reparse_edited`) is not walked
        again: what the walk found in it is kept, its byte offsets moved by what the edits added."""
        self._scanned = True
        roots = self.names.aliases
        key = frozenset(roots)
        offset, starts = self.lines.offset, self.lines.starts
        found = _Found({ast.Module: [self.tree]})
        run: list[ast.stmt] = []  # (short statements, walked together in order)
        for stmt in self.tree.body:
            if stmt.end_lineno - stmt.lineno < _KEPT_LINES:  # type: ignore[operator]
                run.append(stmt)
                continue
            if run:
                _walk(run, roots, offset, found)
                run = []
            base = starts[stmt.lineno - 1]
            span = offset(stmt.end_lineno, stmt.end_col_offset) - base  # type: ignore[arg-type]
            kept = STATEMENT_SCANS.get(id(stmt))
            if kept is None or kept.stmt is not stmt or kept.roots != key or kept.span != span:
                kept = STATEMENT_SCANS[id(stmt)] = _Found({}, stmt, key, base, span)
                _walk([stmt], roots, offset, kept)
            found.add(kept, base - kept.base)
        if run:
            _walk(run, roots, offset, found)
        found.chains.sort(key=lambda c: c.start)
        if self._by_type is None:
            self._by_type = found.by_type
            remember_index(self.tree, found.by_type)
        self._chains = found.chains
        self._lone = found.lone
        self._imports = found.imports
        self._bare = found.bare
        self._loads = found.loads
        self._top_loads = found.top_loads
        self._binds = found.binds

    @property
    def chains(self) -> list[Chain]:
        if not self._scanned:
            self._scan()
        return self._chains

    @property
    def lone_names(self) -> list[Chain]:
        """Every Name of an import alias that is no chain's root (loads, stores, `del`s; calls too),
        in source order, as bare chains: the Names TFM101's `leave_Name` sees, less those in imports."""
        if not self._scanned:
            self._scan()
        return self._lone

    @property
    def imports(self) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
        """Every import statement, with whether it sits at module scope."""
        if not self._scanned:
            self._scan()
        return self._imports

    def symbols(self) -> frozenset[str]:
        """Canonical TF1 paths of every chain and chain prefix the file spells (`estimator.tpu.RunConfig`),
        worked out once per view (the engine and the rules each ask)."""
        if self._symbols is None:
            self._symbols = frozenset(self._find_symbols())
        return self._symbols

    def _find_symbols(self) -> set[str]:
        if not self._scanned:
            self._scan()
        out: set[str] = set()
        qualify = self.names.qualify_dotted
        prefixes: set[str] = set()  # (chains share them: `tf`, `tf.nn` of every `tf.nn.*`)
        for dotted in {chain.dotted for chain in self._chains if not chain.bare}:
            parts = dotted.split(".")
            for end in range(1, len(parts) + 1):
                prefix = ".".join(parts[:end])
                if prefix in prefixes:
                    continue
                prefixes.add(prefix)
                full = qualify(prefix)
                folded = canonical_name(full) if full else None
                if folded is not None:
                    out.add(folded)
        for name in self._bare:
            full = qualify(name)
            folded = canonical_name(full) if full else None
            if folded is not None:
                out.add(folded)
        return out

    def quiet_defs(self, wanted: frozenset[str]) -> list[tuple[str, bool]] | None:
        """Each module-level def/class (name, in order) with whether it spells none of the
        canonical symbols `wanted` (no chain, and no prefix of one, resolves to one); None when
        a name bound to such a symbol is used other than as a call (it has no position here)."""
        if not self._scanned:
            self._scan()
        qualify = self.names.qualify_dotted
        for name in self._bare:
            full = qualify(name)
            if full and canonical_name(full) in wanted:
                return None
        spans: list[tuple[int, int]] = []
        out: list[tuple[str, bool]] = []
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = statement_start(stmt)
                spans.append((first, stmt.end_lineno))  # type: ignore[arg-type]
                out.append((stmt.name, True))
        if not out:
            return out
        firsts = [first for first, _ in spans]
        seen: dict[str, bool] = {}
        for chain in self._chains:
            if chain.node is None:
                continue  # an import's module path
            line = chain.node.lineno
            index = bisect.bisect_right(firsts, line) - 1
            if index < 0 or line > spans[index][1] or not out[index][1]:
                continue
            hit = seen.get(chain.dotted)
            if hit is None:
                parts = chain.dotted.split(".")
                hit = False
                for end in range(1, len(parts) + 1):
                    full = qualify(".".join(parts[:end]))
                    if full and canonical_name(full) in wanted:
                        hit = True
                        break
                seen[chain.dotted] = hit
            if hit:
                out[index] = (out[index][0], False)
        return out

    def bind_count(self, local: str) -> int:
        """How many times the module binds the import alias `local` (imports, assignments,
        parameters, defs, `global`s, handlers, match captures), in any scope."""
        if not self._scanned:
            self._scan()
        return self._binds.get(local, 0)

    def certainly_used(self, local: str, dropped_loads: int = 0, added_loads: int = 0) -> bool:
        """True when an import binding `local` is surely still referenced (so LibCST's
        RemoveImportsVisitor would keep it): bound exactly once, by a module-scope import, and
        loaded at least once after `dropped_loads` uses go away and `added_loads` come in."""
        if not self._scanned:
            self._scan()
        if self._binds.get(local, 0) != 1:
            return False
        bound = self.import_binding(local)
        if bound is None:
            return False
        if self._top_loads.get(local, 1 << 30) < bound.lineno:
            return False  # read at module level above its import: LibCST ties no such read to it
        return self._loads.get(local, 0) - dropped_loads + added_loads > 0

    def import_binding(self, local: str) -> ast.Import | ast.ImportFrom | None:
        """The first import statement outside functions and classes that binds `local`."""
        return next((imp for imp, top in self.imports if top and _binds(imp, local)), None)

    def removable_import(self, local: str, dropped_loads: int, module: str | None = None) -> tuple[int, int] | None:
        """The byte range of `import a.b as local` (of `module`, if given) when the import surely
        loses its last use (after `dropped_loads` chains rooted at it are respelled) and
        RemoveImportsVisitor would delete exactly that line: a lone one-line module-level import
        right below code. None otherwise."""
        if not self._scanned:
            self._scan()
        if self._binds.get(local, 0) != 1 or self._loads.get(local, 0) != dropped_loads:
            return None
        if len(re.findall(rf"\b{re.escape(local)}\b", self.source)) != dropped_loads + 1:
            return None  # also spelled in a string, a comment, `__all__`...: let LibCST look
        for stmt in self.tree.body:
            if not isinstance(stmt, ast.Import) or len(stmt.names) != 1 or stmt.names[0].asname != local:
                continue
            if module is not None and stmt.names[0].name != module:
                return None
            return self.lone_statement_lines(stmt) if stmt.lineno == stmt.end_lineno else None
        return None

    def lone_statement_lines(self, stmt: ast.stmt) -> tuple[int, int] | None:
        """The byte range of a top-level `stmt`'s lines when LibCST's node for it is just those
        lines: it starts a line below a line of code (blank or comment lines above belong to it
        and go with it) and nothing but a comment follows it (not `import x as y; more`), nor ends
        a file that has no final line break (LibCST then drops the line break before it too)."""
        lines = self.lines
        if stmt.col_offset != 0 or stmt.lineno < 2 or stmt.end_lineno is None or stmt.end_col_offset is None:
            return None
        start = lines.starts[stmt.lineno - 1]
        end = self._end_of_lines(stmt)
        above = lines.data[lines.starts[stmt.lineno - 2] : start].rstrip(b"\n")
        if end is None or not above.strip() or above.lstrip().startswith(b"#") or above.endswith(b"\\"):
            return None
        return start, end

    def statement_with_leading_lines(self, index: int) -> tuple[int, int] | None:
        """The byte range of top-level statement `index` with the blank and comment lines above
        it, which LibCST's node for it holds (its `leading_lines`), down from the line after the
        simple statement before it; nothing but a comment may follow it. None where that is not
        the node: the first statement, one after a compound statement (whose block may hold
        those lines), one sharing a line, or the last of a file with no final line break."""
        body = self.tree.body
        stmt = body[index]
        if not index or isinstance(body[index - 1], COMPOUND_STATEMENTS) or stmt.col_offset != 0:
            return None
        before = body[index - 1]
        if before.end_lineno is None or stmt.end_lineno is None or stmt.end_col_offset is None or before.end_lineno >= stmt.lineno:
            return None
        end = self._end_of_lines(stmt)
        return None if end is None else (self.lines.starts[before.end_lineno], end)

    def _end_of_lines(self, stmt: ast.stmt) -> int | None:
        """The byte offset after `stmt`'s last line, where LibCST's node for it ends: None when
        more than a comment follows it there (`import x as y; more`), or when that line ends a
        file with no final line break (LibCST then drops the line break before it too)."""
        lines = self.lines
        data = lines.data
        end = lines.after(stmt.end_lineno)  # type: ignore[arg-type]
        rest = data[lines.offset(stmt.end_lineno, stmt.end_col_offset) : end].strip()  # type: ignore[arg-type]
        if (rest and not rest.startswith(b"#")) or (end == len(data) and not data.endswith(b"\n")):
            return None
        return end

    # -- splicing ---------------------------------------------------------------------------
    def anchor(self, stmt: ast.stmt) -> tuple[int, bytes] | None:
        """(offset of the line a TODO comment goes above, its indentation) for a statement, the
        place LibCST renders a new leading line; None where that is not plain."""
        lines = self.lines
        if not lines.starts_line(stmt):
            return None  # `a; b` or `if x: b`: LibCST attaches to the whole line or compound
        indent = lines.prefix(stmt.lineno, stmt.col_offset)
        lineno = stmt.lineno
        decorators = getattr(stmt, "decorator_list", None)
        if decorators:
            lineno = min(d.lineno for d in decorators)
            if not lines.data.startswith(indent + b"@", lines.starts[lineno - 1]):
                return None
        if lineno > 1 and lines.data[lines.starts[lineno - 1] - 2 : lines.starts[lineno - 1] - 1] == b"\\":
            return None
        return lines.starts[lineno - 1], indent

    def existing_todos(self, line_start: int, indent: bytes, first_statement: bool) -> set[bytes] | None:
        """The tfmigrate TODO comments LibCST counts among a statement's leading lines (None: unsure).

        Walks up over blank and comment lines. Comments at the statement's own indentation are
        its leading lines; past a comment at another indentation LibCST may hand lines to the
        block above, so a TODO found there (or above a module's first statement, where LibCST
        has a header) makes the answer unsure.
        """
        data = self.lines.data
        found: set[bytes] = set()
        sure = not first_statement
        end = line_start
        while end > 0:
            begin = data.rfind(b"\n", 0, end - 1) + 1
            line = data[begin : end - 1]
            stripped = line.strip()
            if stripped and not stripped.startswith(b"#"):
                break
            if stripped:
                own = line.startswith(indent) and line[len(indent) : len(indent) + 1] == b"#"
                if not own:
                    sure = False
                if _TODO_MARK in line:
                    if not sure:
                        return None
                    found.add(line[len(indent) :])
            end = begin
        return found

    def apply(self, plan: TextPlan, code: str) -> str | None:
        """The source with `plan` spliced in, or None if the CST path must decide."""
        if b"\r" in self.lines.data or b"\f" in self.lines.data:
            return None
        data = self.lines.data
        edits: list[tuple[int, int, int, bytes]] = []
        for start, end, text in plan.replacements:
            edits.append((start, 1, end, text.encode("utf-8")))
        by_anchor: dict[int, tuple[bytes, list[str], ast.stmt]] = {}
        for stmt, message in plan.todos:
            where = self.anchor(stmt)
            if where is None:
                return None
            line_start, indent = where
            entry = by_anchor.setdefault(line_start, (indent, [], stmt))
            if entry[2] is not stmt:
                return None
            entry[1].append(message)
        first = (self.tree.body[0] if self.tree.body else None) if by_anchor else None
        for line_start, (indent, messages, stmt) in by_anchor.items():
            existing = self.existing_todos(line_start, indent, stmt is first)
            if existing is None:
                return None
            added = bytearray()
            for message in messages:
                text = todo_comment(code, message).encode("utf-8")
                if text not in existing and not superseded(code, message, existing):
                    existing.add(text)
                    added += indent + text + b"\n"
            if added:
                edits.append((line_start, 0, line_start, bytes(added)))
        edits.sort()
        out = bytearray()
        pos = 0
        for start, _, end, text in edits:
            if start < pos:
                return None
            out += data[pos:start]
            out += text
            pos = end
        out += data[pos:]
        return out.decode("utf-8")


def name_ids(tree: ast.Module) -> set[str]:
    """The ids of the tree's `Name` nodes, any context: read off what the scan kept of a top-level
    statement another view of the file shares (`STATEMENT_SCANS`), walking only the others."""
    out: set[str] = set()
    walked: list[ast.stmt] = []
    for stmt in tree.body:
        kept = STATEMENT_SCANS.get(id(stmt))
        if kept is not None and kept.stmt is stmt:
            out.update(node.id for node in kept.by_type.get(ast.Name, ()))  # type: ignore[attr-defined]
        else:
            walked.append(stmt)
    if walked:
        out.update(node.id for node in index_by_type(ast.Module(body=walked, type_ignores=[])).get(ast.Name, ()))  # type: ignore[attr-defined]
    return out


# A top-level statement this many lines longer than its first line or more is walked once per run
# (`SourceView._scan`); shorter ones cost less to walk again than to keep.
_KEPT_LINES = 4


@dataclass(slots=True)
class _Found:
    """What `SourceView._scan` finds: in a module, or in one top-level statement kept for later
    views (`STATEMENT_SCANS`; byte offsets as of `base`, where its first line started)."""

    by_type: dict[type, list[ast.AST]]
    stmt: ast.stmt | None = None
    roots: frozenset[str] = frozenset()
    base: int = 0
    span: int = 0  # bytes from `base` to the statement's end (a check that it is the same text)
    chains: list[Chain] = field(default_factory=list)
    lone: list[Chain] = field(default_factory=list)  # every lone Name of an import alias, any context
    imports: list[tuple[ast.Import | ast.ImportFrom, bool]] = field(default_factory=list)
    bare: set[str] = field(default_factory=set)
    loads: dict[str, int] = field(default_factory=dict)
    top_loads: dict[str, int] = field(default_factory=dict)  # the first line a module-scope statement loads a name on
    binds: dict[str, int] = field(default_factory=dict)

    def add(self, other: "_Found", delta: int) -> None:
        """What a kept statement holds, after what this holds, its offsets `delta` bytes on."""
        if delta:
            moved: dict[int, Chain] = {}
            self.chains.extend(_moved(chain, delta, moved) for chain in other.chains)
            self.lone.extend(_moved(use, delta, moved) for use in other.lone)
        else:
            self.chains.extend(other.chains)
            self.lone.extend(other.lone)
        self.imports.extend(other.imports)
        self.bare.update(other.bare)
        loads, top_loads, binds, by_type = self.loads, self.top_loads, self.binds, self.by_type
        for name, count in other.loads.items():
            loads[name] = loads.get(name, 0) + count
        for name, line in other.top_loads.items():
            if line < top_loads.get(name, 1 << 30):
                top_loads[name] = line
        for name, count in other.binds.items():
            binds[name] = binds.get(name, 0) + count
        for kind, group in other.by_type.items():
            known = by_type.get(kind)
            if known is None:
                by_type[kind] = list(group)
            else:
                known.extend(group)


def _moved(chain: Chain, delta: int, moved: dict[int, Chain]) -> Chain:
    """`chain` with its byte offsets `delta` further on (an import's module path has none); one
    copy per chain, so a call's bare name stays the same object in `chains` and `lone`."""
    copy = moved.get(id(chain))
    if copy is None:
        start, end = (chain.start, chain.end) if chain.start < 0 else (chain.start + delta, chain.end + delta)
        copy = moved[id(chain)] = Chain(chain.dotted, start, end, chain.stmt, chain.in_fstring, chain.in_import,
                                        chain.under_attribute, chain.node, chain.call, chain.bare)
    return copy


def _walk(statements: list[ast.stmt], roots: dict[str, str], offset, found: _Found) -> None:
    # One loop over the statements on purpose (~100 lines): it is the text path's hottest code, and
    # every rule's chains, imports, loads and binds come from this walk. It indexes the nodes by
    # type as it goes (what `nodes_of` reads; `index_by_type` would walk the tree again).
    by_type, chains, lone, imports = found.by_type, found.chains, found.lone, found.imports
    bare, loads, top_loads, binds = found.bare, found.loads, found.top_loads, found.binds
    # (node, innermost statement, inside an f-string, at module scope, under an attribute)
    stack: list[tuple[ast.AST, ast.stmt | None, bool, bool, bool]] = [(n, None, False, True, False) for n in reversed(statements)]
    pop, push = stack.pop, stack.append
    Attribute, Name, JoinedStr, Load, Call = ast.Attribute, ast.Name, ast.JoinedStr, ast.Load, ast.Call
    AST, fields, statements_, scopes, others = ast.AST, NODE_FIELDS, _STATEMENT_TYPES, _SCOPE_TYPES, _OTHER_TYPES
    by_type_get = by_type.get
    funcs: set[int] = set()
    while stack:
        node, stmt, fstr, top, under = pop()
        kind = type(node)
        group = by_type_get(kind)
        if group is None:
            group = by_type[kind] = []
        group.append(node)
        if kind is Name:
            name = node.id  # type: ignore[attr-defined]
            if name in roots:
                bare.add(name)
                if type(node.ctx) is Load:  # type: ignore[attr-defined]
                    loads[name] = loads.get(name, 0) + 1
                    if top and node.lineno < top_loads.get(name, 1 << 30):  # type: ignore[attr-defined]
                        top_loads[name] = node.lineno  # type: ignore[attr-defined]
                else:
                    binds[name] = binds.get(name, 0) + 1
                start = offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
                use = Chain(name, start, start + len(name.encode()), stmt, fstr, False, under, node, id(node) in funcs, True)  # type: ignore[arg-type]
                lone.append(use)
                if use.call:
                    chains.append(use)
            continue
        if kind is Attribute:
            inner = node.value  # type: ignore[attr-defined]
            attributes = []
            while type(inner) is Attribute:
                attributes.append(inner)
                inner = inner.value  # type: ignore[attr-defined]
            if type(inner) is Name:  # a pure chain, handled whole (as TFM101's visit_Attribute does)
                root = inner.id  # type: ignore[attr-defined]
                if root in roots:
                    loads[root] = loads.get(root, 0) + 1
                    if top and node.lineno < top_loads.get(root, 1 << 30):  # type: ignore[attr-defined]
                        top_loads[root] = node.lineno  # type: ignore[attr-defined]
                    start = offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
                    end = offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
                    dotted = ".".join([root, *[a.attr for a in reversed(attributes)], node.attr])  # type: ignore[attr-defined]
                    chains.append(Chain(dotted, start, end, stmt, fstr, False, under, node, id(node) in funcs))  # type: ignore[arg-type]
                if attributes:
                    group.extend(attributes)  # (the chain's inner attributes and its root name)
                names_group = by_type_get(Name)
                if names_group is None:
                    names_group = by_type[Name] = []
                names_group.append(inner)
                continue
            under = True
        elif kind is Call:
            funcs.add(id(node.func))  # type: ignore[attr-defined]
        elif kind in statements_:
            stmt = node
            if kind is ast.Import or kind is ast.ImportFrom:
                imports.append((node, top))  # type: ignore[arg-type]
                _import_chains(node, roots, chains, binds)  # type: ignore[arg-type]
                by_type.setdefault(ast.alias, []).extend(node.names)  # type: ignore[attr-defined]
                continue
            if kind in scopes:
                name = node.name  # type: ignore[attr-defined]
                if name in roots:
                    binds[name] = binds.get(name, 0) + 1
            elif kind is ast.Global or kind is ast.Nonlocal:
                for name in node.names:  # type: ignore[attr-defined]
                    binds[name] = binds.get(name, 0) + 1
        elif kind in others:
            if kind is JoinedStr:
                fstr = True
            elif kind is ast.arg:
                name = node.arg  # type: ignore[attr-defined]
                if name in roots:
                    binds[name] = binds.get(name, 0) + 1
                # fall through: annotations
            elif kind is ast.ExceptHandler:
                name = node.name  # type: ignore[attr-defined]
                if name and name in roots:
                    binds[name] = binds.get(name, 0) + 1
            else:  # MatchAs, MatchStar, MatchMapping
                name = getattr(node, "name", None) or getattr(node, "rest", None)
                if name and name in roots:
                    binds[name] = binds.get(name, 0) + 1
        inner_top = top and kind not in scopes
        names = fields.get(kind)  # (ast.iter_child_nodes, less the leaves it cannot matter to skip; last first)
        for name in reversed(names if names is not None else child_fields(kind)):
            value = getattr(node, name, None)
            if value is None:
                continue
            if type(value) is list:
                for item in reversed(value):
                    if isinstance(item, AST):
                        push((item, stmt, fstr, inner_top, under))
            elif isinstance(value, AST):
                push((value, stmt, fstr, inner_top, under))


def _import_chains(node: ast.Import | ast.ImportFrom, roots: dict[str, str], chains: list[Chain], binds: dict[str, int]) -> None:
    """Import statements bind names, and their dotted module paths are chains to LibCST too."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            local = alias.asname or alias.name.partition(".")[0]
            binds[local] = binds.get(local, 0) + 1
            if "." in alias.name and alias.name.partition(".")[0] in roots:
                chains.append(Chain(alias.name, -1, -1, node, False, True))
    else:
        for alias in node.names:
            local = alias.asname or alias.name
            binds[local] = binds.get(local, 0) + 1
        if node.module and "." in node.module and node.module.partition(".")[0] in roots:
            chains.append(Chain(node.module, -1, -1, node, False, True))


def _binds(imp: ast.Import | ast.ImportFrom, local: str) -> bool:
    for alias in imp.names:
        name = alias.asname or (alias.name.partition(".")[0] if isinstance(imp, ast.Import) else alias.name)
        if name == local:
            return True
    return False


def _line_offset(source: str, lineno: int) -> int:
    """Where line `lineno` (1-based) starts in `source`."""
    pos = 0
    for _ in range(lineno - 1):
        pos = source.find("\n", pos) + 1
    return pos


def add_imports(source: str, tree: ast.Module, items) -> str | None:
    """LibCST's `AddImportsVisitor` (no package name) on `source`, computed from its `ast`: the
    `ImportItem`s the top import block lacks, as new lines after it, or as names put first in the
    block's one-line `from m import ...` of their module. None where the visitor would do
    something this does not reproduce (it extends a parenthesized `from m import (...)`, nothing
    follows the top imports, statements share a line there, `__future__`, ...).

    Same bookkeeping as the visitor: what the top imports already provide is dropped, then
    `import m` (sorted), `import m as a` (in request order), `from m import ...` (aliased modules
    first, names sorted), and the statement after the block gets an empty line above it. (Over
    100 lines on purpose: it follows the visitor's own steps in its order, to be checked against it.)
    """
    if any(item.relative for item in items) or "\r" in source or "\f" in source:
        return None
    module_imports = {i.module for i in items if i.obj_name is None and i.alias is None}
    module_mapping = {
        m: {i.obj_name for i in items if i.module == m and i.obj_name is not None and i.alias is None}
        for m in sorted({i.module for i in items if i.obj_name is not None and i.alias is None})
    }
    module_aliases = {i.module: i.alias for i in items if i.obj_name is None and i.alias is not None}
    alias_mapping = {
        m: [(i.obj_name, i.alias) for i in items if i.module == m and i.obj_name is not None and i.alias is not None]
        for m in sorted({i.module for i in items if i.obj_name is not None and i.alias is not None})
    }
    if "__future__" in module_mapping or "__future__" in alias_mapping:
        return None

    body = tree.body
    start = 1 if body and _docstring_or_strict(body[0], source) else 0
    end = start
    while end < len(body) and type(body[end]) in (ast.Import, ast.ImportFrom):
        end += 1
    if end >= len(body):
        return None  # nothing after the imports: the visitor's own layout
    for before, after in zip(body[: end + 1], body[1 : end + 1]):
        if before.end_lineno >= after.lineno:  # type: ignore[operator]
            return None  # `a; b`: one LibCST line, which ends or splits the block differently
    # Where the block's last line ends (the new lines go there). With no block, below the
    # docstring; with neither, above the first statement (decorators included): LibCST keeps
    # every comment and blank line above it as the module's header, and the new lines go
    # below that (a notebook's code, whose first statements stand in for its magics).
    if end:
        last = body[end - 1].end_lineno  # type: ignore[assignment]
    else:
        last = min([body[0].lineno] + [d.lineno for d in getattr(body[0], "decorator_list", ())]) - 1
    pos = 0
    for _ in range(last):
        pos = source.find("\n", pos) + 1
        if pos == 0:
            return None
    block_start = 0
    if start:  # the docstring's own text may hold backslashes (`usage: prog \`): not a line join
        block_start = _line_offset(source, body[0].end_lineno)  # type: ignore[arg-type]  # its last line on
    if _joins_lines(source, block_start, pos):
        return None  # a backslash joins lines: `import a; \` + `x = 1` is one LibCST line

    # The gatherer: what the top import block provides.
    got_modules: set[str] = set()
    got_objects: dict[str, set[str]] = {}
    got_aliases: dict[str, str] = {}
    got_alias_mapping: dict[str, list[tuple[str, str]]] = {}
    for stmt in body[start:end]:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname is not None:
                    got_aliases[alias.name] = alias.asname
                else:
                    got_modules.add(alias.name)
            continue
        if stmt.level or stmt.module is None:  # type: ignore[union-attr]
            continue  # relative: the visitor cannot resolve it, and leaves it be
        module = stmt.module  # type: ignore[union-attr]
        if stmt.names[0].name == "*":  # type: ignore[union-attr]
            got_objects[module] = {"*"}
            continue
        aliased = [(a.name, a.asname) for a in stmt.names if a.asname is not None]  # type: ignore[union-attr]
        if aliased:
            got_alias_mapping.setdefault(module, []).extend(aliased)  # type: ignore[arg-type]
        plain = {a.name for a in stmt.names if a.asname is None}  # type: ignore[union-attr]
        if plain:
            objects = got_objects.setdefault(module, set())
            if "*" in objects:
                got_objects[module] = {"*"}
                continue
            objects.update(plain)

    # visit_Module: drop what is there already.
    module_imports -= got_modules
    for module, alias in got_aliases.items():
        if module in module_aliases and module_aliases[module] == alias:
            del module_aliases[module]
    for module, pairs in got_alias_mapping.items():
        for pair in pairs:
            if module in alias_mapping and pair in alias_mapping[module]:
                alias_mapping[module].remove(pair)
                if not alias_mapping[module]:
                    del alias_mapping[module]
    for module, objects in got_objects.items():
        if module not in module_mapping:
            continue
        if "*" in objects:
            del module_mapping[module]
        else:
            module_mapping[module] = module_mapping[module] - objects
            if not module_mapping[module]:
                del module_mapping[module]
    # leave_ImportFrom: the first top `from m import ...` of a module still wanted takes its names,
    # before its own (`from absl import flags` -> `from absl import app, flags`).
    extended: list[tuple[int, str]] = []  # (where in `source`, the names and their commas)
    for stmt in body[start:end]:
        if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module is not None and stmt.names[0].name != "*":
            module = stmt.module
            if module not in module_mapping and module not in alias_mapping:
                continue
            at = _first_name_at(source, stmt)
            if at is None:
                return None  # parenthesized or over several lines: the visitor's layout is its own
            names = sorted(module_mapping.pop(module, ()))
            names += [f"{obj} as {alias}" for obj, alias in sorted(alias_mapping.pop(module, []))]
            extended.append((at, "".join(f"{name}, " for name in names)))
    for at, names in reversed(extended):
        source = source[:at] + names + source[at:]
        pos += len(names)  # (all inside the block: its end moves by what went in)
    if not (module_imports or module_mapping or module_aliases or alias_mapping):
        return source

    merged: dict[str, list[tuple[str, str | None]]] = {}
    for module, pairs in alias_mapping.items():
        merged.setdefault(module, []).extend(pairs)
    for module, objects in module_mapping.items():
        merged.setdefault(module, []).extend((obj, None) for obj in objects)
    try:
        ordered = {module: sorted(pairs) for module, pairs in merged.items()}  # type: ignore[type-var]
    except TypeError:  # (obj, None) beside (obj, alias): the visitor fails the same way; let it
        return None
    added = [f"import {module}\n" for module in sorted(module_imports)]
    added += [f"import {module} as {asname}\n" for module, asname in module_aliases.items()]
    added += [
        f"from {module} import " + ", ".join(obj if alias is None else f"{obj} as {alias}" for obj, alias in pairs) + "\n"
        for module, pairs in ordered.items()
    ]

    # Splice after the block's last line; the next statement's leading lines start there.
    line_end = source.find("\n", pos)
    next_line = source[pos:] if line_end == -1 else source[pos:line_end]
    nxt = body[end]
    first = min([nxt.lineno] + [d.lineno for d in getattr(nxt, "decorator_list", ())])
    blank = first > last + 1 and not next_line.strip(" \t\f")
    return source[:pos] + "".join(added) + ("" if blank else "\n") + source[pos:]


def _joins_lines(source: str, start: int, end: int) -> bool:
    r"""Whether a backslash ends a line of `source[start:end]` other than in a comment: the top
    import block and the comments around it, where no string holds a `#` (`# usage: prog \` in a
    licence header joins nothing). The first line (the docstring's last, whose string may hold
    one) counts whatever it holds."""
    at = source.find("\\\n", start, end)
    while at != -1:
        line = source.rfind("\n", 0, at) + 1
        if line <= start or "#" not in source[line:at]:
            return True
        at = source.find("\\\n", at + 2, end)
    return False


def _first_name_at(source: str, stmt: ast.ImportFrom) -> int | None:
    """Where the first imported name of a one-line, unparenthesized `from m import a, b` starts
    in `source`; None for any other layout."""
    if stmt.end_lineno != stmt.lineno:
        return None
    begin = _line_offset(source, stmt.lineno)
    stop = source.find("\n", begin)
    line = source[begin : len(source) if stop == -1 else stop].encode("utf-8")
    first = stmt.names[0].col_offset  # (on the statement's one line)
    if b"(" in line[stmt.col_offset : first]:
        return None
    return begin + len(line[:first].decode("utf-8"))


def _docstring_or_strict(stmt: ast.stmt, source: str) -> bool:
    """LibCST's `_skip_first`: a lone `"docstring"` (one plain string literal) or `__strict__ = ...`."""
    if isinstance(stmt, ast.Assign):
        return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "__strict__"
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, (str, bytes))):
        return False
    value = stmt.value
    begin = 0
    for _ in range(value.lineno - 1):
        begin = source.find("\n", begin) + 1
    last = begin
    for _ in range(value.end_lineno - value.lineno):  # type: ignore[operator]
        last = source.find("\n", last) + 1
    stop = source.find("\n", last)
    head = source[begin : len(source) if stop == -1 else stop].encode("utf-8")
    end = len(source[begin:last].encode("utf-8")) + value.end_col_offset  # type: ignore[operator]
    segment = head[value.col_offset : end].decode("utf-8")  # ast.get_source_segment, without splitting the file
    try:
        strings = [t for t in tokenize.generate_tokens(io.StringIO(segment).readline) if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(strings) == 1  # `"a" "b"` is LibCST's ConcatenatedString
