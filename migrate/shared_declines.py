"""A model_fn one estimator rule declined is not analysed again by the next rule of the pass.

One model_fn often serves an `Estimator` and a `TPUEstimator` (`if use_tpu:` ... `else:`, as
cloudml-samples' TPU templates do): TFM201 analyses it and declines, then TFM301 analyses the same
function again on the module TFM201 left, which differs only in what TFM201 rewrote (the sites,
in `main`). The analysis reads the function and the module-level statements binding the names it
reaches (helpers, constants, found by name); so where the function is the same node and no
statement TFM201 changed binds one of those names, the decline is the same, and where nothing
above its statement changed, so is its line.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cst_on_demand import cst
from .estimator_scan import Decline, holds
from .names import names_in

_KEY = "declined model_fns"  # FileContext.scratch: id(function) -> SharedDecline


@dataclass
class SharedDecline:
    fn: cst.FunctionDef
    module: cst.Module  # the module the analysis read
    decline: Decline


def remember(scratch: dict, fn: cst.FunctionDef, module: cst.Module, decline: Decline) -> None:
    scratch.setdefault(_KEY, {})[id(fn)] = SharedDecline(fn, module, decline)


def recall(scratch: dict, fn: cst.FunctionDef, module: cst.Module, source: str) -> Decline | None:
    """The decline an earlier rule found for `fn` where it holds in `module` as it stood, line
    included; None where the function must be analysed again. `source`: the file's text (one
    that spells a walrus, which may bind a module-level name anywhere, is analysed again; so is
    one of the LibCST-only path, which gives none)."""
    shared = scratch.get(_KEY, {}).get(id(fn))
    if shared is None or shared.fn is not fn or not source or ":=" in source:
        return None
    old, decline = shared.module, shared.decline
    if module is old:
        return decline
    old_ids, new_ids = {id(s) for s in old.body}, {id(s) for s in module.body}
    changed = [s for s in old.body if id(s) not in new_ids] + [s for s in module.body if id(s) not in old_ids]
    reached = _reached_names(fn, old.body)
    for stmt in changed:
        bound = _bound_names(stmt)
        if bound is None or bound & reached:
            return None
    if decline.statement is None:
        return decline
    top = next((stmt for stmt in old.body if holds(stmt, decline.statement)), None)
    if top is None or id(top) not in new_ids:
        return None
    above_old, above_new = old.body[: old.body.index(top)], module.body[: module.body.index(top)]
    same_above = len(above_old) == len(above_new) and all(a is b for a, b in zip(above_old, above_new))
    return decline if same_above and tuple(old.header) == tuple(module.header) else None


def _reached_names(fn: cst.FunctionDef, body) -> set[str]:
    """The names `fn` mentions, and those the module-level statements binding them mention, on."""
    reached = names_in(fn)
    binding = [(stmt, _bound_names(stmt)) for stmt in body if stmt is not fn]
    grew = True
    while grew:
        grew = False
        for stmt, bound in binding:
            if bound is None or bound & reached:
                more = names_in(stmt) - reached
                if more:
                    reached |= more
                    grew = True
    return reached


def _bound_names(stmt: cst.CSTNode) -> set[str] | None:
    """The module-level names a top-level statement binds: a def's or class's name, the targets
    of assignments, imports, loops, `with ... as` and handlers, in blocks too (not in functions);
    None where that is not sure (`from m import *`, `global`)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return _small_names(stmt.body)
    if not isinstance(stmt, (cst.If, cst.For, cst.While, cst.Try, cst.With)):
        return None  # (`match` and the rest: not read here)
    out: set[str] = set()
    if isinstance(stmt, cst.For):
        out |= names_in(stmt.target)
    if isinstance(stmt, cst.With):
        for item in stmt.items:
            if item.asname is not None:
                out |= names_in(item.asname.name)
    blocks = [getattr(stmt, "body", None), getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)]
    for handler in getattr(stmt, "handlers", ()):
        if handler.name is not None:
            out |= names_in(handler.name.name)
        blocks.append(handler.body)
    for block in blocks:
        if block is None:
            continue
        inner = _bound_names(block) if isinstance(block, cst.If) else _block_names(
            block.body if isinstance(block, (cst.Else, cst.Finally)) else block)
        if inner is None:
            return None
        out |= inner
    return out


def _small_names(statements) -> set[str] | None:
    """What `_bound_names` says of a line's small statements."""
    out: set[str] = set()
    for small in statements:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                out |= names_in(target.target)
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            out |= names_in(small.target)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            if isinstance(small.names, cst.ImportStar):
                return None
            for alias in small.names:
                out |= names_in(alias.asname.name if alias.asname is not None else alias.name)
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            return None
        # (an expression, `del`, `pass`, `return`...: binds nothing at module level)
    return out


def _block_names(block) -> set[str] | None:
    """What `_bound_names` says of a block's statements (an indented block, or one line's)."""
    if isinstance(block, cst.SimpleStatementSuite):
        return _small_names(block.body)
    out: set[str] = set()
    for stmt in block.body:
        bound = _bound_names(stmt)
        if bound is None:
            return None
        out |= bound
    return out
