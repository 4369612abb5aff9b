"""Parsing with stdlib `ast` for the text path: `parse` (the collector paused, and the last few
texts' trees remembered), `reparse_edited` (after a text pass, only the top-level statements an
edit fell in are parsed again; the rest of the tree is shared) and `index_by_type` (one walk that
groups a tree's nodes by type, for every rule that reads the same tree).

The trees are shared between passes and callers, so no caller may change one.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from contextlib import contextmanager

from .gcpause import cyclic_gc_paused
from .names import SourceLines

# Fields holding only leaves the scan has nothing to do with: expression contexts and operators.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "type_ignores"})
# Fields that hold names, numbers or flags, never a node, in every node type that has them (a walk
# that reads them only tests and drops their values); `value` and `names` only where noted.
_NEVER_NODES = frozenset({
    "id", "attr", "name", "asname", "arg", "module", "level", "type_comment", "kind", "is_async",
    "conversion", "simple", "rest", "kwd_attrs", "tag",
})
_VALUE_NOT_NODE = (ast.Constant, ast.MatchSingleton)
_NAMES_NOT_NODES = (ast.Global, ast.Nonlocal)
NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of an ast node type that may hold nodes worth visiting (remembered in
    `NODE_FIELDS`, which a hot loop reads first)."""
    found = NODE_FIELDS[kind] = tuple(
        name for name in kind._fields  # type: ignore[attr-defined]
        if name not in _LEAF_FIELDS and name not in _NEVER_NODES
        and not (name == "value" and kind in _VALUE_NOT_NODE) and not (name == "names" and kind in _NAMES_NOT_NODES)
    )
    return found


def node_subtypes(kind: type = ast.AST) -> Iterator[type]:
    """Every node type deriving from `kind`, at any depth."""
    for sub in kind.__subclasses__():
        yield sub
        yield from node_subtypes(sub)


for _kind in node_subtypes():
    child_fields(_kind)


def nodes_of_types(tree: ast.AST):
    """`nodes_of(*types)` over one `index_by_type` of `tree`: its nodes of those exact types
    (as `SourceView.nodes_of` gives them for a view's tree)."""
    by_type = index_by_type(tree)
    return lambda *kinds: [node for kind in kinds for node in by_type.get(kind, ())]


def index_by_type(tree: ast.AST) -> dict[type, list[ast.AST]]:
    """The tree's nodes grouped by exact type, each group in depth-first order."""
    by_type: dict[type, list[ast.AST]] = {}
    AST, fields = ast.AST, NODE_FIELDS
    stack = [tree]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        kind = type(node)
        group = by_type.get(kind)
        if group is None:
            group = by_type[kind] = []
        group.append(node)
        names = fields.get(kind)
        if names is None:
            names = child_fields(kind)
        for name in reversed(names):
            value = getattr(node, name, None)
            if value is None:
                continue
            if type(value) is list:
                for item in reversed(value):
                    if isinstance(item, AST):
                        push(item)
            elif isinstance(value, AST):
                push(value)
    return by_type


def indexed(tree: ast.AST) -> dict[type, list[ast.AST]]:
    """`index_by_type(tree)`, or the index a walk of the same tree already built (`SourceView`'s
    scan gives its own: the project's reads of a module and its migration share one walk)."""
    hit = _INDEXED.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1]
    if _HELD_FIRST_PARSE and _HELD_FIRST_PARSE[1] is tree and len(_HELD_FIRST_PARSE) > 2:
        return _HELD_FIRST_PARSE[2]
    by_type = index_by_type(tree)
    remember_index(tree, by_type)
    return by_type


def remember_index(tree: ast.AST, by_type: dict[type, list[ast.AST]]) -> None:
    """Keep a tree's index by type (every node of it, grouped by exact type) for `indexed`."""
    if len(_INDEXED) >= _PARSED_KEPT:
        del _INDEXED[next(iter(_INDEXED))]
    _INDEXED[id(tree)] = (tree, by_type)
    if _HELD_FIRST_PARSE and _HELD_FIRST_PARSE[1] is tree:
        _HELD_FIRST_PARSE[2:] = [by_type]


def parse(source: str) -> ast.Module:
    """`ast.parse`, without the cyclic GC (an ast has no cycles, and collections triggered by its
    allocations would otherwise take most of the parse time), and once per text among the last
    few: a pass checks its output parses and the next pass reads that same text (a quarter of the
    parses over real code were of a text parsed just before); inside `parses_held`, the block's
    first text too. The trees are shared, so no caller may change one."""
    tree = parsed_already(source)
    if tree is not None:
        return tree
    tree = _parse_without_gc(source)
    _remember(source, tree)
    if _HELD and not _HELD_FIRST_PARSE:
        _HELD_FIRST_PARSE[:] = [source, tree]
    return tree


def parsed_already(source: str) -> ast.Module | None:
    """`parse(source)` where that text's tree is at hand (in the memo), else None."""
    tree = _PARSED.get(source)
    if tree is None and _HELD_FIRST_PARSE and _HELD_FIRST_PARSE[0] == source:
        return _HELD_FIRST_PARSE[1]
    return tree


def _remember(source: str, tree: ast.Module) -> None:
    if len(_PARSED) >= _PARSED_KEPT:
        del _PARSED[next(iter(_PARSED))]
    _PARSED[source] = tree


_PARSED: dict[str, ast.Module] = {}
_INDEXED: dict[int, tuple[ast.AST, dict[type, list[ast.AST]]]] = {}
# id(top-level statement) -> what `SourceView`'s scan found in it (`textpass._Found`): a
# text pass's output shares the statements its edits missed, and those are not walked again.
STATEMENT_SCANS: dict[int, object] = {}
# Inside `parses_held`: [text, tree, its index once made] of the block's first parse, kept past the
# memo's few (the runner reads a module's imports from its source's tree after its migration's
# passes parsed later texts).
_HELD_FIRST_PARSE: list = []
_PARSED_KEPT = 6
_HELD = 0


def forget_parses() -> None:
    """Empty `parse`'s memo and the indexes (a benchmark that repeats a file times each run from
    scratch), unless `parses_held` defers that to its end."""
    if _HELD:
        return
    _PARSED.clear()
    _INDEXED.clear()
    STATEMENT_SCANS.clear()
    _HELD_FIRST_PARSE.clear()


@contextmanager
def parses_held() -> Iterator[None]:
    """The trees parsed inside outlive a migration's `forget_parses` until the block ends (the
    runner reads a module's imports from the tree its migration parsed and indexed)."""
    global _HELD
    _HELD += 1
    try:
        yield
    finally:
        _HELD -= 1
        forget_parses()


def _parse_without_gc(source: str) -> ast.Module:
    with cyclic_gc_paused():
        return ast.parse(source)


def statement_groups(body: list[ast.stmt]) -> list[list]:
    """Top-level statements as groups of whole lines (`a; b` share one): [first line (a decorator's
    if any), last line, the statements' indexes in `body`], in order."""
    groups: list[list] = []
    for index, stmt in enumerate(body):
        first = statement_start(stmt)
        last = stmt.end_lineno or stmt.lineno
        if groups and first <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], last)
            groups[-1][2].append(index)
        else:
            groups.append([first, last, [index]])
    return groups


def reparse_edited(tree: ast.Module, lines: SourceLines, replacements: list[tuple[int, int, str]], output: str) -> ast.Module | None:
    """The `ast` of `output`, the text of `lines` with `replacements` (byte spans) spliced in, by
    parsing again only the top-level statements the replacements fall in (the others are shared
    with `tree`, unchanged: no caller changes a tree). None when that does not apply: an edit
    adds or removes a line, or falls outside a statement, or the statements do not parse alone."""
    data = lines.data
    if any(b"\n" in data[start:end] or "\n" in text for start, end, text in replacements):
        return None
    body = tree.body
    if not body or output.count("\n") != data.count(b"\n") or "barry_as_FLUFL" in output:
        return None  # (that one `__future__` import changes how later statements parse)
    groups = statement_groups(body)
    firsts = [group[0] for group in groups]
    touched: set[int] = set()
    spans: list[tuple[int, int, int]] = []  # (top-level group, first line, last line) of each edit
    for start, end, _ in replacements:
        lineno = bisect.bisect_right(lines.starts, start)
        at = bisect.bisect_right(firsts, lineno) - 1
        last = bisect.bisect_right(lines.starts, max(start, end - 1))
        if at < 0 or lineno > groups[at][1] or last > groups[at][1]:
            return None
        touched.add(at)
        spans.append((at, lineno, last))
    inner = _reparse_inner(tree, groups, spans, lines, output)
    if inner is not None:
        _remember(output, inner)
        return inner
    # One parse of the output with every line outside the touched statements blanked: their line
    # numbers come out right, and blank lines cost the parser next to nothing.
    new_lines = output.split("\n")
    kept = bytearray(len(new_lines))
    for at in touched:
        first, last, _ = groups[at]
        kept[first - 1 : last] = b"\x01" * (last - first + 1)
    try:
        parts = _parse_without_gc("\n".join(line if keep else "" for line, keep in zip(new_lines, kept))).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(parts) != sum(len(groups[at][2]) for at in touched):
        return None
    new_body: list[ast.stmt] = []
    done = taken = 0
    for at in sorted(touched):
        indexes = groups[at][2]
        new_body.extend(body[done : indexes[0]])
        new_body.extend(parts[taken : taken + len(indexes)])
        taken += len(indexes)
        done = indexes[-1] + 1
    new_body.extend(body[done:])
    result = ast.Module(body=new_body, type_ignores=tree.type_ignores)
    # `ast.parse` judges each top-level statement in its place, so this is the tree it would give
    # `output` (and proof that `output` parses): later parses of `output` take it.
    _remember(output, result)
    return result


# Statement lists a compound statement holds, in source order (`handlers` hold `ExceptHandler`s).
_BLOCK_FIELDS = ("body", "handlers", "orelse", "finalbody")


def _reparse_inner(tree: ast.Module, groups: list[list], spans: list[tuple[int, int, int]], lines: SourceLines,
                   output: str) -> ast.Module | None:
    """`reparse_edited`'s tree where each edit falls in a statement nested in a top-level one (a
    line of a function): only that statement is parsed again, under an `if 1:` put on the line
    above it, and the statements holding it are copied with the new one in its place (the rest
    is shared). None where that does not apply (an edit in a top-level statement's own lines, a
    statement sharing a line, two edits close together): the caller parses the top-level
    statements again."""
    body = tree.body
    targets: dict[int, list] = {}  # id(statement) -> its path from the top-level statement: [(node, field, index)]
    for at, first, last in spans:
        if len(groups[at][2]) != 1:
            return None
        path = _innermost(body[groups[at][2][0]], first, last, lines)
        if path is None:
            return None
        targets[id(_end_of(path))] = path
    chosen = list(targets.values())
    for path in chosen:  # (no edit's statement inside another's)
        outer = {id(node) for node, _, _ in path}
        if any(id(_end_of(other)) in outer for other in chosen if other is not path):
            return None
    statements = sorted((_end_of(path) for path in chosen), key=statement_start)
    new_lines = output.split("\n")
    kept = [""] * len(new_lines)
    for stmt in statements:
        first = statement_start(stmt)
        if any(kept[line] for line in range(first - 2, stmt.end_lineno)):  # type: ignore[arg-type]
            return None  # (its `if 1:` line would be another's)
        kept[first - 2] = "if 1:"
        kept[first - 1 : stmt.end_lineno] = new_lines[first - 1 : stmt.end_lineno]  # type: ignore[misc]
    try:
        parts = _parse_without_gc("\n".join(kept)).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(parts) != len(statements) or any(len(part.body) != 1 for part in parts):  # type: ignore[attr-defined]
        return None
    new_of = {id(old): part.body[0] for old, part in zip(statements, parts)}  # type: ignore[attr-defined]
    if any(type(new) is not type(old) or (new.lineno, new.col_offset, new.end_lineno) != (old.lineno, old.col_offset, old.end_lineno)
           for old, new in ((old, new_of[id(old)]) for old in statements)):
        return None
    copied = {id(node) for path in chosen for node, _, _ in path}
    new_body = [_copied(stmt, new_of, copied) if id(stmt) in copied else stmt for stmt in body]
    return ast.Module(body=new_body, type_ignores=tree.type_ignores)


def _end_of(path: list) -> ast.stmt:
    """The statement a path (`_innermost`) leads to."""
    node, field, index = path[-1]
    return getattr(node, field)[index]


def statement_start(stmt: ast.stmt) -> int:
    """The first line of `stmt`: its first decorator's, where it has one."""
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno] + [d.lineno for d in decorators]) if decorators else stmt.lineno


def _innermost(top: ast.stmt, first: int, last: int, lines: SourceLines) -> list | None:
    """The path [(node, field, index)] from `top` to the innermost statement nested in it whose
    lines hold lines `first`..`last` and that stands alone on its lines (nothing else on its
    first or last line, no decorator, no `elif`); None where that is `top` itself."""
    path: list = []
    node: ast.AST = top
    while True:
        found = None
        for field in _BLOCK_FIELDS:
            for index, child in enumerate(getattr(node, field, None) or ()):
                if isinstance(child, ast.ExceptHandler):
                    if child.lineno <= first and last <= child.end_lineno:  # type: ignore[operator]
                        found = (field, index, child)
                elif isinstance(child, ast.stmt) and statement_start(child) <= first and last <= child.end_lineno:  # type: ignore[operator]
                    found = (field, index, child)
            if found is not None:
                break
        if found is None:  # (a `match` statement's cases are no block field: it is parsed again whole)
            break
        field, index, child = found
        if isinstance(child, ast.ExceptHandler):
            path.append((node, field, index))
            node = child
            continue
        if not _alone(child, lines) or (field == "orelse" and _starts_with(child, lines, b"elif")):
            break
        path.append((node, field, index))
        node = child
    while path and isinstance(_end_of(path), ast.ExceptHandler):
        path.pop()  # (a handler is no statement: its `try` is parsed again)
    return path or None


def _alone(stmt: ast.stmt, lines: SourceLines) -> bool:
    """Whether `stmt` starts its line after indentation only and ends its last one before a
    comment at most, with no decorator (a one-line suite's or `a; b`'s statements do not)."""
    if getattr(stmt, "decorator_list", None) or stmt.end_lineno is None or stmt.end_col_offset is None:
        return False
    if lines.prefix(stmt.lineno, stmt.col_offset).strip():
        return False
    data = lines.data
    rest = data[lines.offset(stmt.end_lineno, stmt.end_col_offset) : lines.after(stmt.end_lineno)].strip()
    return not rest or rest.startswith(b"#")


def _starts_with(stmt: ast.stmt, lines: SourceLines, word: bytes) -> bool:
    start = lines.offset(stmt.lineno, stmt.col_offset)
    return lines.data[start : start + len(word)] == word


def _copied(node: ast.AST, new_of: dict[int, ast.stmt], copied: set[int]) -> ast.AST:
    """`node` with the statements `new_of` names in place of the old ones below it: each node on
    the way copied (shallow), its end moved where its last statement's end moved."""
    copy = type(node)(**{name: getattr(node, name) for name in node._fields},  # type: ignore[call-arg]
                      **{name: getattr(node, name) for name in node._attributes if hasattr(node, name)})
    last = None
    for field in _BLOCK_FIELDS:
        block = getattr(node, field, None)
        if not block:
            continue
        new_block = [new_of[id(child)] if id(child) in new_of else _copied(child, new_of, copied) if id(child) in copied else child
                     for child in block]
        setattr(copy, field, new_block)
        last = new_block[-1]
    if last is not None and last.end_lineno == node.end_lineno:  # type: ignore[attr-defined]
        copy.end_col_offset = last.end_col_offset  # type: ignore[attr-defined]
    return copy
