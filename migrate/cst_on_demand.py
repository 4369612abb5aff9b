"""LibCST, imported on its first use: `from .cst_on_demand import cst` reads as `import libcst as cst`.

Importing LibCST takes about a tenth of a second, a third of the CLI's start-up. Most files of a
run never need it: the text passes migrate them on stdlib `ast` (`textpass`), or show that no rule
can fire. So the codemod's modules name LibCST through `cst`, a module object that imports the
real one the first time an attribute of it is read, then holds its names as its own (a read after
that costs what a read of `libcst` costs).

Nothing may read `cst.<Name>` while a module is imported, or every run pays for LibCST again. So a
module-level visitor class derives from `Visitor` or `Transformer` below, not from LibCST's
`CSTVisitor`/`CSTTransformer`, and a tuple of node types is built in the function that uses it.
`tests/test_layering.py` holds the CLI's start-up to that.

`cst` holds LibCST's names as its own: a test that replaces one for the codemod (`parse_module`)
replaces it on `cst`, not on `libcst`.
"""

from __future__ import annotations

import functools
import importlib
import types
from typing import Any


def _first_use(name: str) -> Any:
    """`cst`'s module `__getattr__` (PEP 562), called for a name its own dict lacks: imports LibCST,
    takes its names, and gives the one asked for. (A plain module, not a subclass with a
    `__getattr__` method, so that a read of `cst.Name` costs what a read of `libcst.Name` does.)"""
    if name.startswith("__"):
        raise AttributeError(name)  # copy, pickle and the import system probe these
    real = importlib.import_module("libcst")
    real.CSTVisitor.register(Visitor)
    real.CSTTransformer.register(Transformer)
    own = vars(cst)
    for key, value in vars(real).items():
        if not key.startswith("__"):
            own.setdefault(key, value)  # (a name a test replaced on `cst` stays replaced)
    return own[name] if name in own else getattr(real, name)  # (a submodule LibCST gains after this)


cst: Any = types.ModuleType("libcst", "LibCST, imported on its first use (`tfmigrate.cst_on_demand`).")
cst.__getattr__ = _first_use


@functools.cache
def statement_types() -> tuple[type, ...]:
    """LibCST's statement nodes: a line of simple statements, or a compound statement."""
    return (cst.SimpleStatementLine, cst.BaseCompoundStatement)


def hooks(walker: type, node: type) -> tuple[Any, Any]:
    """`walker`'s (a `Visitor` or `Transformer` class) `visit_<Node>` and `leave_<Node>` for nodes
    of type `node` (None where it has none), looked up once per class and node type, in the class's
    own table (a visitor class made per call goes with its table)."""
    found = walker._hooks_by_node.get(node)
    if found is None:
        name = node.__name__
        found = walker._hooks_by_node[node] = (getattr(walker, f"visit_{name}", None), getattr(walker, f"leave_{name}", None))
    return found


class _Dispatch:
    """`on_visit`/`on_leave` by node type, through `hooks`' table of the walker's class (each
    subclass gets its own, so that a lookup through `self` never reads a base class's)."""

    _hooks_by_node: dict[type, tuple[Any, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._hooks_by_node = {}

    def on_visit(self, node) -> bool:
        kind = type(node)
        found = self._hooks_by_node.get(kind) or hooks(type(self), kind)
        return found[0] is None or found[0](self, node) is not False

    def on_visit_attribute(self, node, attribute: str) -> None:
        pass

    def on_leave_attribute(self, original_node, attribute: str) -> None:
        pass


class Visitor(_Dispatch):
    """What LibCST's `CSTVisitor` is to this codemod, defined without importing LibCST: it reads a
    tree through `visit_<Node>` (False: skip the node's children) and `leave_<Node>` methods. It
    has no per-field hooks (`visit_<Node>_<field>`). Once LibCST is imported, `Visitor` is a
    virtual subclass of `CSTVisitor`, so `node.visit` and `cst_walk.walk` take it as one."""

    def on_leave(self, original_node) -> None:
        kind = type(original_node)
        leave = (self._hooks_by_node.get(kind) or hooks(type(self), kind))[1]
        if leave is not None:
            leave(self, original_node)


class Transformer(_Dispatch):
    """`Visitor`'s twin for LibCST's `CSTTransformer`: `leave_<Node>(original, updated)` returns the
    node that takes the original's place (or a `RemovalSentinel`, or a `FlattenSentinel`)."""

    def on_leave(self, original_node, updated_node):
        kind = type(original_node)
        leave = (self._hooks_by_node.get(kind) or hooks(type(self), kind))[1]
        return updated_node if leave is None else leave(self, original_node, updated_node)
