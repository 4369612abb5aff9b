"""A LibCST module's code, its unchanged top-level statements copied from the text it came from.

A rule's CST pass hands back a module that shares every top-level statement it did not touch
with the module LibCST parsed (the transform rebuilds only what changed). Rendering the new
module generates the code of all of them again, which costs as much as parsing the file. Here
each shared statement's code is the slice of the old text it was parsed from: its lines, from
the comment and blank lines LibCST gives it (`leading_lines`) to the last line of its last block
and the lines that block owns after it (`footer`), read off the `ast` of the same text. The
slices must tile the text exactly (header, each statement, footer); anything else, and the
module is rendered whole.
"""

from __future__ import annotations

import os
from itertools import accumulate

from .cst_on_demand import cst
from .parsing import parsed_already, statement_start
from .statement_lines import grouped_as_lines

# A module's code in slices: (the header's lines, {id(statement): (statement, its code)}, the footer's).
Slices = tuple[str, dict[int, tuple[object, str]], str]
# The last few modules rendered from: id -> (module, its slices or None where they do not tile).
_SLICES: dict[int, tuple[object, Slices | None]] = {}


def code_reusing(module: cst.Module, old: cst.Module, old_code: str) -> str:
    """`module.code`, where `module` is what CST passes made of `old` (whose code is `old_code`)."""
    slices = _slices(old, old_code)
    if (
        slices is None or module.header is not old.header or module.footer is not old.footer
        or not module.has_trailing_newline or module.default_indent != old.default_indent
        or module.default_newline != old.default_newline
    ):
        return module.code
    header, statements, footer = slices
    parts = [header]
    for stmt in module.body:
        kept = statements.get(id(stmt))
        parts.append(kept[1] if kept is not None and kept[0] is stmt else module.code_for_node(stmt))
    parts.append(footer)
    code = "".join(parts)
    if _CHECKED and code != module.code:
        raise AssertionError("a module's code reused from its text differs from LibCST's")
    return code


def _slices(old: cst.Module, code: str) -> Slices | None:
    held = _SLICES.get(id(old))
    if held is not None and held[0] is old:
        return held[1]
    if len(_SLICES) > 4:
        _SLICES.clear()
    found = _SLICES[id(old)] = (old, _tile(old, code))
    return found[1]


def _tile(old: cst.Module, code: str) -> Slices | None:
    """`code` (`old`'s) in slices: the header's, each top-level statement's, the footer's; None
    where they do not tile it exactly or its `ast` is not at hand."""
    if "\r" in code or not old.has_trailing_newline or not code.endswith("\n") or not old.body:
        return None
    tree = parsed_already(code)
    if tree is None:
        return None  # (no parse for this: rendering costs about as much)
    groups = grouped_as_lines(tree.body)
    if len(groups) != len(old.body):
        return None
    lines = code.split("\n")  # (the last is "": the code ends with a line break)
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    out: dict[int, tuple[object, str]] = {}
    line = len(old.header) + 1  # (1-based: where the next slice must start)
    header = code[: starts[line - 1]]
    for stmt, group in zip(old.body, groups):
        first = statement_start(group[0]) - len(stmt.leading_lines)
        last = (group[-1].end_lineno or group[-1].lineno) + _owned_after(stmt)
        if first != line or last < first:
            return None
        out[id(stmt)] = (stmt, code[starts[first - 1] : starts[last]])
        line = last + 1
    if line + len(old.footer) != len(lines):
        return None
    return header, out, code[starts[line - 1] :]


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
