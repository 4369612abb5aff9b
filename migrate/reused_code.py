"""A LibCST module's code, what a pass did not change copied from the text it came from.

A rule's CST pass hands back a module that shares every statement it did not touch with the
module LibCST parsed (the transform rebuilds only what holds a change). Rendering the new module
generates the code of all of them again, which costs as much as parsing the file. Here each
shared statement's code is the slice of the old text it was parsed from: its lines, from the
comment and blank lines LibCST gives it (`leading_lines`) to the last line of its last block and
the lines that block owns after it (`footer`), read off the `ast` of the same text. A class or
function whose body alone changed keeps the text of its head (decorators, `def` line) and of its
body's footer, and its body is put together the same way. The slices of a block must tile it
exactly (the module: header, statements, footer); anything else, and the module is rendered whole.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from itertools import accumulate

from .cst_on_demand import cst
from .parsing import parsed_already, statement_start
from .statement_lines import grouped_as_lines


@dataclasses.dataclass
class _Slices:
    header: str
    footer: str
    statements: dict[int, tuple[object, str]]  # id(statement) -> (statement, its code), at any depth in defs
    # id(a def's name node) -> (the def, its code before its body's first statement, its body's footer)
    defs: dict[int, tuple[object, str, str]]


# The last few modules rendered from: id -> (module, its slices or None where they do not tile).
_SLICES: dict[int, tuple[object, _Slices | None]] = {}


def code_reusing(module: cst.Module, old: cst.Module, old_code: str) -> str:
    """`module.code`, where `module` is what CST passes made of `old` (whose code is `old_code`)."""
    slices = _slices(old, old_code)
    if (
        slices is None or module.header is not old.header or module.footer is not old.footer
        or not module.has_trailing_newline or module.default_indent != old.default_indent
        or module.default_newline != old.default_newline
    ):
        return module.code
    code = "".join([slices.header, *(_code(stmt, slices, (), module) for stmt in module.body), slices.footer])
    if _CHECKED and code != module.code:
        raise AssertionError("a module's code reused from its text differs from LibCST's")
    return code


def _code(stmt: cst.CSTNode, slices: _Slices, indent: tuple[str, ...], module: cst.Module) -> str:
    """`stmt`'s code inside blocks indented by `indent` (as in the old module, where it holds a slice)."""
    kept = slices.statements.get(id(stmt))
    if kept is not None and kept[0] is stmt:
        return kept[1]
    twin = slices.defs.get(id(getattr(stmt, "name", None)))
    if twin is not None and _same_head(stmt, twin[0]):
        body = stmt.body  # type: ignore[attr-defined]
        inner = (*indent, module.default_indent if body.indent is None else body.indent)
        return "".join([twin[1], *(_code(child, slices, inner, module) for child in body.body), twin[2]])
    if not indent:
        return module.code_for_node(stmt)
    from libcst._nodes.internal import CodegenState  # (what `Module.code_for_node` renders with)

    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline, indent_tokens=list(indent))
    stmt._codegen(state)
    return "".join(state.tokens)


def _same_head(new: cst.CSTNode, old: cst.CSTNode) -> bool:
    """Whether `new` is `old` (a class or function) but for the statements of its body."""
    if type(new) is not type(old) or not isinstance(new.body, cst.IndentedBlock) or not isinstance(old.body, cst.IndentedBlock):  # type: ignore[attr-defined]
        return False
    body, old_body = new.body, old.body  # type: ignore[attr-defined]
    if body.header is not old_body.header or body.footer is not old_body.footer or body.indent != old_body.indent:
        return False
    return all(getattr(new, f.name) is getattr(old, f.name) for f in dataclasses.fields(new) if f.name != "body")  # type: ignore[arg-type]


def _slices(old: cst.Module, code: str) -> _Slices | None:
    held = _SLICES.get(id(old))
    if held is not None and held[0] is old:
        return held[1]
    if len(_SLICES) > 4:
        _SLICES.clear()
    found = _SLICES[id(old)] = (old, _tile(old, code))
    return found[1]


class _Untiled(Exception):
    pass


def _tile(old: cst.Module, code: str) -> _Slices | None:
    """`code` (`old`'s) in slices; None where they do not tile it exactly or its `ast` is not at hand."""
    if "\r" in code or not old.has_trailing_newline or not code.endswith("\n") or not old.body:
        return None
    tree = parsed_already(code)
    if tree is None:
        return None  # (no parse for this: rendering costs about as much)
    lines = code.split("\n")  # (the last is "": the code ends with a line break)
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    slices = _Slices(code[: starts[len(old.header)]], "", {}, {})
    try:
        end = _tile_block(old.body, tree.body, len(old.header) + 1, code, starts, slices)
    except _Untiled:
        return None
    if end + len(old.footer) != len(lines) - 1:
        return None
    slices.footer = code[starts[end] :]
    return slices


def _tile_block(statements, nodes: list[ast.stmt], line: int, code: str, starts: list[int], slices: _Slices) -> int:
    """Slice a block's statements, the first of which must start on `line`; the block's last line
    of code and of what its statements own after it. Raises `_Untiled`."""
    groups = grouped_as_lines(nodes)
    if len(groups) != len(statements):
        raise _Untiled
    last = line - 1
    for stmt, group in zip(statements, groups):
        first = statement_start(group[0]) - len(stmt.leading_lines)
        last = (group[-1].end_lineno or group[-1].lineno) + _owned_after(stmt)
        if first != line or last < first:
            raise _Untiled
        slices.statements[id(stmt)] = (stmt, code[starts[first - 1] : starts[last]])
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and isinstance(stmt.body, cst.IndentedBlock) and stmt.body.body:
            _tile_def(stmt, group[0], first, last, code, starts, slices)
        line = last + 1
    return last


def _tile_def(stmt, twin: ast.stmt, first: int, last: int, code: str, starts: list[int], slices: _Slices) -> None:
    """A def's head (from `first`, its slice's first line, to its body's first statement) and its
    body's footer (to `last`), its body's statements sliced."""
    body = stmt.body
    if not isinstance(twin, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not twin.body:
        raise _Untiled
    twin_body = twin.body
    opening = statement_start(twin_body[0]) - len(body.body[0].leading_lines)
    if opening <= first:
        raise _Untiled
    end = _tile_block(body.body, twin_body, opening, code, starts, slices)
    if end + len(body.footer) != last:
        raise _Untiled
    slices.defs[id(stmt.name)] = (stmt, code[starts[first - 1] : starts[opening - 1]], code[starts[end] : starts[last]])


def _owned_after(stmt: cst.CSTNode) -> int:
    """How many lines after its last line of code a statement owns: its last block's `footer`,
    after those its last statement owns."""
    block = _last_block(stmt)
    if not isinstance(block, cst.IndentedBlock):
        return 0
    return (_owned_after(block.body[-1]) if block.body else 0) + len(block.footer)


def _last_block(stmt: cst.CSTNode) -> cst.BaseSuite | None:
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef, cst.With)):
        return stmt.body
    if isinstance(stmt, (cst.For, cst.While)):
        return stmt.orelse.body if stmt.orelse is not None else stmt.body
    if isinstance(stmt, cst.If):
        if isinstance(stmt.orelse, cst.If):
            return _last_block(stmt.orelse)
        return stmt.orelse.body if stmt.orelse is not None else stmt.body
    if isinstance(stmt, (cst.Try, cst.TryStar)):
        if stmt.finalbody is not None:
            return stmt.finalbody.body
        if stmt.orelse is not None:
            return stmt.orelse.body
        return stmt.handlers[-1].body if stmt.handlers else stmt.body
    if isinstance(stmt, cst.Match):
        return stmt.cases[-1].body if stmt.cases else None
    return None


# Tests set TFMIGRATE_CHECK_REUSED_CODE=1: every module's code made here is compared with LibCST's.
_CHECKED = os.environ.get("TFMIGRATE_CHECK_REUSED_CODE") == "1"
