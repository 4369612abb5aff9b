"""The line a LibCST statement starts on, read off the `ast` of the same text.

LibCST keeps no positions; its `PositionProvider` generates the code of everything before a node
to count lines. A statement's line is also its `ast` twin's `lineno`, and the two trees hold their
statements in the same blocks in the same order: LibCST's line of small statements (`a; b`) is
the run of `ast` statements sharing that line, and a one-line suite (`if x: y`) holds no
statement of its own. Where the blocks of the two trees do not pair up, nothing is said.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from .cst_on_demand import cst
from .textpass import COMPOUND_STATEMENTS



class _Unpaired(Exception):
    """The two trees' blocks do not pair up."""


def statement_line(module: cst.Module, tree: ast.Module, node: cst.CSTNode) -> int | None:
    """The line `node` (a statement of `module`, or a small statement of one) starts on, where its
    syntax begins (a decorated definition's `def` line, as `PositionProvider` has it), read off
    `tree`, the `ast` of the text LibCST parsed `module` from; None when `node` is no statement
    of `module` or the trees do not pair up."""
    try:
        return _in_block(module.body, tree.body, node)
    except _Unpaired:
        return None


def _in_block(statements: Sequence[cst.CSTNode], nodes: list[ast.stmt], node: cst.CSTNode) -> int | None:
    lines = grouped_as_lines(nodes)
    if len(lines) != len(statements):
        raise _Unpaired
    for statement, twins in zip(statements, lines):
        if statement is node:
            return twins[0].lineno
        if isinstance(statement, cst.SimpleStatementLine):
            if len(statement.body) != len(twins):
                raise _Unpaired
            for small, twin in zip(statement.body, twins):
                if small is node:
                    return twin.lineno
            continue
        clause, twin = statement, twins[0]
        while isinstance(clause, cst.If) and isinstance(clause.orelse, cst.If):  # an `elif` is an If too
            if not (isinstance(twin, ast.If) and len(twin.orelse) == 1 and isinstance(twin.orelse[0], ast.If)):
                raise _Unpaired
            clause, twin = clause.orelse, twin.orelse[0]
            if clause is node:
                return twin.lineno
        for block, twin_block in _blocks(statement, twins[0]):
            found = _in_block(block, twin_block, node)
            if found is not None:
                return found
    return None


def grouped_as_lines(nodes: list[ast.stmt]) -> list[list[ast.stmt]]:
    """`nodes` as LibCST holds them: a run of simple statements sharing a line is one line."""
    out: list[list[ast.stmt]] = []
    last_end = 0
    for stmt in nodes:
        if out and stmt.lineno == last_end and not isinstance(stmt, COMPOUND_STATEMENTS) and not isinstance(out[-1][-1], COMPOUND_STATEMENTS):
            out[-1].append(stmt)
        else:
            out.append([stmt])
        last_end = stmt.end_lineno or stmt.lineno
    return out


def _blocks(statement: cst.CSTNode, twin: ast.stmt) -> list[tuple[Sequence[cst.CSTNode], list[ast.stmt]]]:
    """The (LibCST, `ast`) statement lists of a compound statement's indented blocks, in order."""
    pairs: list[tuple[cst.BaseSuite | None, list[ast.stmt]]] = []
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.With)):
        if not isinstance(twin, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)):
            raise _Unpaired
        pairs.append((statement.body, twin.body))
    elif isinstance(statement, (cst.For, cst.While)):
        if not isinstance(twin, (ast.For, ast.AsyncFor, ast.While)):
            raise _Unpaired
        pairs.append((statement.body, twin.body))
        if statement.orelse is not None:
            pairs.append((statement.orelse.body, twin.orelse))
    elif isinstance(statement, cst.If):
        if not isinstance(twin, ast.If):
            raise _Unpaired
        pairs.append((statement.body, twin.body))
        orelse = statement.orelse
        if isinstance(orelse, cst.If):  # `elif`: the `ast` holds it as the `else` block's one `if`
            if len(twin.orelse) != 1:
                raise _Unpaired
            return _indented(pairs) + _blocks(orelse, twin.orelse[0])
        if orelse is not None:
            pairs.append((orelse.body, twin.orelse))
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        if not isinstance(twin, _TRIES) or len(statement.handlers) != len(twin.handlers):
            raise _Unpaired
        pairs.append((statement.body, twin.body))
        pairs += [(handler.body, twin_handler.body) for handler, twin_handler in zip(statement.handlers, twin.handlers)]
        if statement.orelse is not None:
            pairs.append((statement.orelse.body, twin.orelse))
        if statement.finalbody is not None:
            pairs.append((statement.finalbody.body, twin.finalbody))
    elif isinstance(statement, cst.Match):
        if not isinstance(twin, ast.Match) or len(statement.cases) != len(twin.cases):
            raise _Unpaired
        pairs += [(case.body, twin_case.body) for case, twin_case in zip(statement.cases, twin.cases)]
    else:
        raise _Unpaired
    return _indented(pairs)


def _indented(pairs: list) -> list[tuple[Sequence[cst.CSTNode], list[ast.stmt]]]:
    """The pairs whose LibCST block is indented (a one-line suite holds small statements on the
    header's line: no statement of its own)."""
    return [(block.body, nodes) for block, nodes in pairs if isinstance(block, cst.IndentedBlock)]


_TRIES = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
