"""Removing the imports a migration left unused, as LibCST's `RemoveImportsVisitor` would, without
its scope analysis of the whole module where `symtable` and `ast` can tell its verdict for sure.

The engine asks `remove_unused_top_level_imports` first and runs the visitor itself only when this
module answers None; `tests/test_textpass.py` checks the two agree byte for byte.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from .cst_on_demand import cst

from .parsing import statement_start
from .rule import REMOVE_IMPORTS
from .textpass import COMPOUND_STATEMENTS, SourceView

# A comment line of its own that tells a linter or formatter about the lines below it.
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(?:pylint|pytype|flake8|mypy|isort|fmt|yapf)[ \t]*:", re.M)


def keep_directive_comments(before: str, after: str) -> str:
    """`after` (`before` less the imports a migration left unused) with the linter directives
    of `before` that went with a removed import put back where it stood. LibCST removes the
    comment lines above a statement with it; a `# pylint: disable=unused-import` there speaks
    for the imports below it too (which the migration reads: `names.reexported`)."""
    if not _DIRECTIVE.search(before) or len(_DIRECTIVE.findall(before)) == len(_DIRECTIVE.findall(after)):
        return after
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("delete", "replace"):
            gone = old[i1:i2]
            for k, line in enumerate(gone):
                if _DIRECTIVE.match(line):
                    blank = k
                    while blank and not gone[blank - 1].strip():
                        blank -= 1  # with the blank lines that set it apart
                    out.extend(gone[blank : k + 1])
        out.extend(new[j1:j2])
    return "".join(out)


# A line that stands in for the statement before an import, so the visitor sees it below code.
_PLACEHOLDER = "pass\n"


@dataclass
class ImportReads:
    """What LibCST's scope analysis would find of the reads of imported names, as far as the
    stdlib `symtable` and an `ast` walk can tell it for sure."""

    # Names every scope that imports them also reads (an import in a function read there).
    in_every_scope: set[str]
    # Names a module-scope import of which is surely read: some function or class reads it as a
    # global (LibCST counts such a read wherever it stands), or module-level code after the import.
    used: set[str]
    # Names whose reads LibCST may or may not tie to a module-scope import (read at module level
    # only above it, or in a scope that binds the name itself, where a read above the binding
    # falls back to the module's).
    unclear: set[str]


def import_reads(code: str, tree: ast.Module) -> ImportReads:
    import symtable

    top = symtable.symtable(code, "<module>", "exec")
    global_reads: set[str] = set()
    local_reads: set[str] = set()
    verdict: dict[str, bool] = {}
    tables = list(top.get_children())
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if symbol.is_imported():
                verdict[name] = verdict.get(name, True) and symbol.is_referenced()
            if not symbol.is_referenced():
                continue
            if symbol.is_global():
                global_reads.add(name)
            elif symbol.is_local() and not symbol.is_parameter():
                local_reads.add(name)  # parameters are bound before the body reads them
    module_reads = {symbol.get_name() for symbol in top.get_symbols() if symbol.is_referenced()}
    used = global_reads | _read_after_import(tree, module_reads)
    for symbol in top.get_symbols():
        if symbol.is_imported():
            name = symbol.get_name()
            verdict[name] = verdict.get(name, True) and name in used
    return ImportReads({name for name, read in verdict.items() if read}, used, (module_reads - used) | local_reads)


_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _read_after_import(tree: ast.Module, names: set[str]) -> set[str]:
    """Of `names`, those module-level code reads after a module-scope import binds them (reads in
    lambdas and comprehensions, and in the heads of functions and classes, not counted)."""
    first: dict[str, tuple[int, int]] = {}
    reads: dict[str, tuple[int, int]] = {}
    for stmt in _module_scope_statements(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                if name in names:
                    first[name] = min(first.get(name, (stmt.lineno, stmt.col_offset)), (stmt.lineno, stmt.col_offset))
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack = [value for field, value in ast.iter_fields(stmt) if field not in _BLOCKS]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, ast.Name):
                if node.id in names and isinstance(node.ctx, ast.Load):
                    at = (node.lineno, node.col_offset)
                    reads[node.id] = max(reads.get(node.id, at), at)
            elif isinstance(node, ast.AST) and not isinstance(node, _OWN_SCOPES):
                stack.extend(value for _, value in ast.iter_fields(node))
    return {name for name, at in reads.items() if name in first and at > first[name]}


def remove_unused_top_level_imports(code: str, view: SourceView, pending: list, codemod, reads: ImportReads | None) -> str | None:
    """RemoveImportsVisitor's result, computed statement by statement, or None.

    The visitor's scope analysis of the whole module is the codemod's dearest step on large files.
    Its verdict is read from `_import_reads` (stdlib `symtable` and `ast`) where the two surely agree:
    - a name some function or class reads as a global, or module-level code reads after its
      import, is used, so its import is kept;
    - a name read nowhere as the module's (not at module level, not as a global, not before a
      local binding that could fall back to it) and named in no annotation string or `__all__`
      is unused; when it is bound only by module-level import statements (or blocks holding
      them) that follow a simple statement, the visitor gives the same result run on each such
      statement alone, with the comment and blank lines above it that LibCST attaches to it (a
      `pass` line stands in for the statement before); an import all of whose aliases go is
      simply cut with those lines.
    Any other case is the visitor's.
    """
    if "\r" in code:
        return None
    names = set()
    for module, obj, asname in pending:
        if not (asname or obj or "." not in module):
            return None  # `import a.b` binds `a`: let the visitor decide
        names.add(asname or obj or module)
    body = view.tree.body
    module_scope = {id(node) for node in _module_scope_statements(body)}
    local = [node for node in view.nodes_of(ast.Import, ast.ImportFrom) if id(node) not in module_scope and _binds_any(node, names)]
    function_only: set[str] = set()  # names bound by imports in functions alone
    unread: dict[int, bool] = {}
    places: dict[int, tuple[list[ast.stmt], int, int]] = {}  # an import in a function that goes: its block, index, top-level index
    if local:
        # An import in a function whose name that function reads (itself, or a function nested
        # in it): the visitor keeps it; one it does not read, the visitor removes, as it does run
        # on the top-level statement holding the function alone (the function's scope is all it
        # reads). Any other import in a function or class is its to judge.
        verdict = _read_in_own_function(code, view, local, names)
        local_names = {alias.asname or alias.name.split(".")[0] for node in local for alias in node.names} & names
        if verdict is None or any(_binds_any(node, local_names) for node in view.nodes_of(ast.Import, ast.ImportFrom) if id(node) in module_scope):
            return None
        kept, unread = verdict
        pending = [entry for entry in pending if (entry[2] or entry[1] or entry[0]) not in kept]
        names -= kept
        function_only = local_names - kept
        if not pending:
            return code
        places = _places(body, set(unread))
    strings = _strings_read_as_names(view)
    if any(name in string for name in names for string in strings):
        return None  # perhaps named in an annotation or `__all__`: the visitor must look
    if reads is None:
        try:
            reads = import_reads(code, view.tree)
        except (SyntaxError, ValueError, RecursionError):  # pragma: no cover - the module parsed before
            return None
    unused = (names - function_only) - reads.used
    if unused & reads.unclear:
        return None
    asked = [entry for entry in pending if (entry[2] or entry[1] or entry[0]) in unused | function_only]
    lines, data = view.lines, view.lines.data
    statements = []
    in_blocks: set[int] = set()  # module-scope imports in a top-level block (`with`, `try:`) that go
    for i, stmt in enumerate(body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if _binds_any(stmt, unused):
                statements.append(i)
        else:
            in_blocks.update(id(node) for node in _module_scope_statements([stmt])
                             if isinstance(node, (ast.Import, ast.ImportFrom)) and _binds_any(node, unused))
    block_cuts: list[tuple[int, tuple[int, int, str]]] = []  # (top-level statement, its cut)
    headers = _one_line_headers(body)
    emptied: dict[int, int] = {}  # id of a block -> how many of its statements are cut
    for block, index, top in _places(body, in_blocks).values():
        # One all of whose aliases go is cut with the lines LibCST attaches to it, as an import in
        # a function is (below): below a simple statement of its block, from that statement's end;
        # first in its block below a one-line header (`try:`, `with x:`), from the header's end,
        # with a `pass` in their place where it is all the block holds (LibCST writes one there).
        # Otherwise the visitor run on the whole statement removes it its own way.
        stmt = block[index]
        cut = _cut_below_simple(block, index, asked, lines)
        if cut is None and not index and _below_header(headers.get(id(block)), stmt, lines) and _removed_whole(block, index, asked, lines):
            indent = lines.prefix(stmt.lineno, stmt.col_offset).decode("utf-8")
            cut = (lines.starts[headers[id(block)]], lines.after(stmt.end_lineno), "" if len(block) > 1 else f"{indent}pass\n")
        if cut is None:
            if top not in statements:
                statements.append(top)
            continue
        block_cuts.append((top, cut))
        emptied[id(block)] = emptied.get(id(block), 0) + 1
        if emptied[id(block)] == len(block) > 1 and top not in statements:
            statements.append(top)  # every statement of the block goes: the visitor's `pass`
    statements.sort()
    spans = []
    for index in statements:
        before = body[index - 1] if index else None
        if before is None or isinstance(before, COMPOUND_STATEMENTS) or body[index].end_lineno is None:
            return None
        spans.append((lines.after(before.end_lineno), lines.after(body[index].end_lineno)))
    cuts: list[tuple[int, int, str]] = []  # imports in functions and blocks that go whole: (start, end, what takes their place)
    pieces = []  # top-level statements holding one that goes otherwise (the visitor's)
    for key, (block, index, top) in places.items():
        if top in statements:
            continue  # the visitor runs on the whole statement anyway
        cut = _cut_below_simple(block, index, asked, lines) if unread[key] else None
        if cut is not None:
            cuts.append(cut)
        elif top not in pieces:
            pieces.append(top)
    for index in pieces:
        stmt = body[index]
        first = statement_start(stmt)
        if stmt.end_lineno is None or stmt.col_offset or (index and body[index - 1].end_lineno >= first):
            return None
        statements.append(index)
        spans.append((lines.starts[first - 1], lines.after(stmt.end_lineno)))
    cuts += [cut for top, cut in block_cuts if top not in statements]  # (the visitor's where it runs on the whole statement)
    if not spans and not cuts:
        return code
    ends = [end for _, end in spans] + [end for _, end, _ in cuts]
    if not data.endswith(b"\n") and len(data) in ends:
        return None  # the file's last line goes and it has no line break: LibCST drops the one before
    whole = {id(body[index]) for index in statements if _removed_whole(body, index, asked, lines)}
    context = None
    edits = [(start, end, index, "") for (start, end), index in zip(spans, statements)]
    edits += [(start, end, None, fill) for start, end, fill in cuts]
    for start, end, index, fill in sorted(edits, key=lambda edit: edit[0], reverse=True):
        if index is None or id(body[index]) in whole:
            # Every alias goes: the visitor removes the statement with the lines LibCST attaches
            # to it (the comments and blank lines above, the comment after), all of the span.
            data = data[:start] + fill.encode("utf-8") + data[end:]
            continue
        if context is None:
            # (imported here: `libcst.codemod`'s matchers take a tenth of a second to import,
            # more than a small file's whole migration, and most removals cut whole statements)
            from libcst.codemod.visitors import RemoveImportsVisitor

            context = codemod.libcst_context()
            context.scratch[REMOVE_IMPORTS] = asked
        piece = _PLACEHOLDER + data[start:end].decode("utf-8")
        done = RemoveImportsVisitor(context).transform_module(cst.parse_module(piece)).code
        if not done.startswith(_PLACEHOLDER):  # pragma: no cover - the stand-in is never removed
            return None
        data = data[:start] + done[len(_PLACEHOLDER) :].encode("utf-8") + data[end:]
    return data.decode("utf-8")


def _read_in_own_function(code: str, view: SourceView, imports: list, names: set[str]) -> tuple[set[str], dict[int, bool]] | None:
    """Of the names in `names` the `imports` (each in a function) bind, those every function
    importing one reads (itself, or a function nested there, where it is a free variable), and
    the ids of the imports whose function does not read a name they bind (with whether it reads
    none of the names they bind); None where some import is not a function's own (a class
    body's, or a name declared global there)."""
    import symtable

    owner: dict[int, ast.AST] = {}
    for fn in view.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef):
        for stmt in _module_scope_statements(fn.body):  # its own statements, not nested scopes'
            owner[id(stmt)] = fn
    try:
        tables = [symtable.symtable(code, "<module>", "exec")]
    except (SyntaxError, ValueError, RecursionError):  # pragma: no cover - the module parsed before
        return None
    functions: dict[tuple[str, int], symtable.SymbolTable] = {}
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        if table.get_type() == "function":
            key = (table.get_name(), table.get_lineno())
            if key in functions:
                return None  # two functions on one line under one name: no telling them apart
            functions[key] = table
    read: set[str] = set()
    unread: dict[int, bool] = {}
    unread_names: set[str] = set()
    for node in imports:
        fn = owner.get(id(node))
        table = functions.get((fn.name, fn.lineno)) if fn is not None else None
        if table is None:
            return None
        reads_one = False
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            if name not in names:
                continue
            symbol = table.lookup(name)
            if not (symbol.is_imported() and symbol.is_local()) or symbol.is_global():
                return None
            if symbol.is_referenced() or any(name in child.get_identifiers() and child.lookup(name).is_free()
                                             for child in table.get_children()):
                read.add(name)
                reads_one = True
            else:
                unread[id(node)] = True
                unread_names.add(name)
        if reads_one and id(node) in unread:
            unread[id(node)] = False
    return read - unread_names, unread


def _places(body: list[ast.stmt], wanted: set[int]) -> dict[int, tuple[list[ast.stmt], int, int]]:
    """For each statement inside a top-level one whose id is in `wanted`: the statement list
    holding it, its index there, and the index in `body` of the top-level statement."""
    found: dict[int, tuple[list[ast.stmt], int, int]] = {}
    for top, stmt in enumerate(body):
        stack = _blocks(stmt)
        while stack:
            block = stack.pop()
            for index, inner in enumerate(block):
                if id(inner) in wanted:
                    found[id(inner)] = (block, index, top)
                stack += _blocks(inner)
    return found


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside `stmt` (bodies, else and finally blocks, handlers, cases)."""
    blocks = [getattr(stmt, field) for field in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, field, None), list)]
    return blocks + [part.body for part in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ()))]


def _one_line_headers(body: list[ast.stmt]) -> dict[int, int]:
    """id of a block -> the line of its header (`try:`, `with x:`, `except E:`, `if x:`, a loop's)
    for the blocks inside top-level statements whose header is a statement's or a handler's own
    first line (not an `else:` or `finally:` block, whose header line `ast` does not give)."""
    found: dict[int, int] = {}
    stack = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        owners = [stmt, *getattr(stmt, "handlers", ())]
        for owner in owners:
            block = getattr(owner, "body", None)
            if isinstance(block, list) and block:
                found[id(block)] = owner.lineno
        for block in _blocks(stmt):
            stack.extend(block)
    return found


def _cut_below_simple(block: list[ast.stmt], index: int, asked: list, lines) -> tuple[int, int, str] | None:
    """`block[index]`'s cut (start, end, nothing in its place) when every alias of it goes and a
    simple statement of its block stands above it: from that statement's end, the lines LibCST
    attaches to the import with it; else None."""
    if index and not isinstance(block[index - 1], COMPOUND_STATEMENTS) and _removed_whole(block, index, asked, lines):
        return lines.starts[block[index - 1].end_lineno], lines.after(block[index].end_lineno), ""
    return None


def _below_header(header: int | None, stmt: ast.stmt, lines) -> bool:
    """Whether `stmt`, first in its block, follows the block's header (on line `header`) with only
    blank and comment lines between: then the header is that one line (a header over several
    lines ends on one holding its `:`), and the lines between are `stmt`'s own to LibCST."""
    if header is None or stmt.lineno <= header:
        return False
    data = lines.data
    between = data[lines.starts[header] : lines.starts[stmt.lineno - 1]]
    return all(not line.strip() or line.lstrip().startswith(b"#") for line in between.split(b"\n"))


def _removed_whole(body: list[ast.stmt], index: int, asked: list, lines) -> bool:
    """Whether RemoveImportsVisitor, asked `asked`, removes every alias of `body[index]` (an import
    alone on its lines, absolute; `body` is the module's or a block's statements, and at `index`
    0 the caller knows what stands above it), matching as it does: `import m as a` by the last
    alias asked of `m`, `from m import x as a` by `(x, a)` among those asked of `m`."""
    stmt = body[index]
    if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return False
    following = body[index + 1] if index + 1 < len(body) else None
    if (index and body[index - 1].end_lineno >= stmt.lineno) or (following is not None and following.lineno <= stmt.end_lineno):
        return False
    last_line = lines.data[lines.starts[stmt.end_lineno - 1]:].split(b"\n", 1)[0]
    tail = last_line[stmt.end_col_offset:].strip()  # ast's columns count UTF-8 bytes
    if tail and not tail.startswith(b"#"):
        return False  # `import m;` and the like: the visitor's to judge
    if isinstance(stmt, ast.Import):
        modules = {module: asname for module, obj, asname in asked if obj is None}
        return all(alias.name in modules and modules[alias.name] == alias.asname for alias in stmt.names)
    if stmt.level or stmt.module is None:
        return False
    objects = {(obj, asname) for module, obj, asname in asked if obj is not None and module == stmt.module}
    return all(alias.name != "*" and (alias.name, alias.asname) in objects for alias in stmt.names)


def _module_scope_statements(body: list[ast.stmt]):
    """Every statement run in the module's own scope: its body and the blocks of its compound
    statements (`if`, `try`, `with`, loops, `match`), not the bodies of functions and classes."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in _blocks(stmt):
            stack.extend(block)


def _strings_read_as_names(view: SourceView) -> list[str]:
    """Strings LibCST's import visitors may read names from: in annotations, in `TypeVar(...)`
    calls and in statements about `__all__` (a superset: every string under such a node)."""
    roots: list[ast.AST] = [node.annotation for node in view.nodes_of(ast.arg) if node.annotation is not None]
    roots += [node.returns for node in view.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef) if node.returns is not None]
    roots += view.nodes_of(ast.AnnAssign)
    for node in view.nodes_of(ast.Call):
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "TypeVar") or (isinstance(func, ast.Attribute) and func.attr == "TypeVar"):
            roots.append(node)
    if "__all__" in view.source:
        roots += [
            node for node in view.nodes_of(ast.Assign, ast.AugAssign, ast.Expr)
            if any(isinstance(n, ast.Name) and n.id == "__all__" for n in ast.walk(node))
        ]
    return [n.value for root in roots for n in ast.walk(root) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _binds_any(stmt: ast.Import | ast.ImportFrom, names: set[str]) -> bool:
    return any((alias.asname or alias.name.split(".")[0]) in names for alias in stmt.names)
