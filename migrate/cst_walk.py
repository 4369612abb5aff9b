"""LibCST walks that rebuild only what changed.

`node.visit(visitor)` rebuilds every node it passes: each node's `_visit_and_replace_children`
constructs a copy from its visited children, even for a `cst.CSTVisitor` that only reads, and
even where a transformer changed nothing beneath. On an estimator program those walks cost more
than parsing the file (the rules walk the module, and their analyses walk the same functions
many times). `walk` (a visitor) and `transform` (a transformer) call the same `on_visit` and
`on_leave` methods in the same order, skip the same subtrees and give the same tree; `walk`
rebuilds nothing, and `transform` rebuilds a node only where something beneath it changed (an
unchanged subtree is the same object, which LibCST's walk would have copied).

Neither calls LibCST's per-field hooks (`visit_<Node>_<field>`, `on_visit_attribute`): a visitor
that defines one gets LibCST's own walk.
"""

from __future__ import annotations

import dataclasses
import functools
import typing

from .cst_on_demand import Visitor, cst

# Each node type's fields that hold nodes, in the order LibCST visits them (not always the
# order they are declared in: a statement's `leading_lines` come first); and the fields that were
# None where the order was read and not visited, which LibCST may visit only where they are set
# (an f-string expression's `format_spec`).
_FIELD_ORDER: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_NODE_TYPES: set[type] = set()  # (an `isinstance` against the abstract CSTNode costs more)
# What a RemovalSentinel makes of a field holding one node: None (optional), MaybeSentinel.DEFAULT,
# or an error (required), by the field's type.
_ON_REMOVAL: dict[tuple[type, str], str] = {}


class _FieldOrder(Visitor):
    """Records the fields `_visit_and_replace_children` visits (LibCST announces each one it
    visits, present or not, through `on_visit_attribute`), without descending into them."""

    def __init__(self) -> None:
        self.fields: dict[str, None] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.fields[attribute] = None


@functools.cache
def _bodies() -> frozenset[tuple[type, str]]:
    """The fields whose children LibCST drops where a visit empties them (`visit_body_sequence`: a
    statement line left with no statement goes, where it had one)."""
    return frozenset({(cst.Module, "body"), (cst.IndentedBlock, "body")})


def _field_order(node: cst.CSTNode) -> tuple[tuple[str, ...], tuple[str, ...]]:
    recorder = _FieldOrder()
    node._visit_and_replace_children(recorder)  # (its children unchanged: a shallow copy, discarded)
    unseen = [f.name for f in dataclasses.fields(node) if f.name not in recorder.fields and getattr(node, f.name) is None]
    if unseen:  # (not a field that holds text: `Optional[str]`, `Optional[Literal["*"]]`)
        hints = typing.get_type_hints(type(node))
        unseen = [name for name in unseen if not _holds_text(hints.get(name))]
    order = _FIELD_ORDER[type(node)] = (tuple(recorder.fields), tuple(unseen))
    _NODE_TYPES.add(type(node))
    return order


def _options(hint: object) -> tuple:
    """The types a field's hint allows (a Union's members, else the hint itself)."""
    return typing.get_args(hint) if typing.get_origin(hint) is typing.Union else (hint,)


def _holds_text(hint: object) -> bool:
    return all(option is str or typing.get_origin(option) is typing.Literal for option in _options(hint) if option is not type(None))


def _fields(node: cst.CSTNode) -> tuple[str, ...] | None:
    """The node's fields in LibCST's order, or None where LibCST's own walk must visit it (a field
    set here whose place in the order is not known yet)."""
    fields, unseen = _FIELD_ORDER.get(type(node)) or _field_order(node)
    if unseen and any(getattr(node, name) is not None for name in unseen):
        return None
    return fields


def _is_node(value: object) -> bool:
    """Whether `value` is a node, for a type `_NODE_TYPES` does not hold yet (it does after)."""
    if isinstance(value, cst.CSTNode):
        _NODE_TYPES.add(type(value))
        return True
    return False


def _nodes_only(walker: cst.CSTVisitor | cst.CSTTransformer) -> bool:
    """Whether `walker` reacts to nodes only, not to the fields between them (LibCST's
    `visit_<Node>_<field>` methods and `on_visit_attribute`). Asked of the class, once (visitor
    classes are often made per call, inside a function)."""
    kind = type(walker)
    known = kind.__dict__.get("_cst_walk_nodes_only")
    if known is None:
        known = not any(
            name in ("on_visit_attribute", "on_leave_attribute") or (name.startswith(("visit_", "leave_")) and name.count("_") > 1)
            for klass in kind.__mro__
            if not klass.__module__.startswith("libcst") and klass.__module__ != Visitor.__module__  # (no field hooks there)
            for name in vars(klass)
        )
        kind._cst_walk_nodes_only = known  # type: ignore[attr-defined]
    return known


# -- reading ----------------------------------------------------------------------------------
def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a visitor that only reads: the same `on_visit`/`on_leave` calls in
    the same order (a node whose `on_visit` says False is left, and `on_leave` still called), with
    no node rebuilt."""
    if not isinstance(visitor, cst.CSTVisitor):
        raise TypeError(f"walk() reads a tree; {type(visitor).__name__} is not a CSTVisitor")
    if not _nodes_only(visitor):
        node.visit(visitor)
        return
    _walk(node, visitor)


def _walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    fields = _fields(node)
    if fields is None:
        node.visit(visitor)
        return
    if visitor.on_visit(node):
        for name in fields:
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                for child in value:
                    _walk(child, visitor)
            elif kind in _NODE_TYPES or _is_node(value):
                _walk(value, visitor)
    visitor.on_leave(node)


# -- transforming -----------------------------------------------------------------------------
def transform(node: cst.CSTNode, transformer: cst.CSTTransformer):
    """`node.visit(transformer)`: the same calls in the same order and an equal result, rebuilding
    only the nodes above a change (`updated_node is original_node` where nothing beneath changed)."""
    if not isinstance(transformer, cst.CSTTransformer):
        raise TypeError(f"transform() rewrites a tree; {type(transformer).__name__} is not a CSTTransformer")
    if not _nodes_only(transformer):
        return node.visit(transformer)
    return _transform(node, transformer)


def _transform(node: cst.CSTNode, transformer: cst.CSTTransformer):
    fields = _fields(node)
    if fields is None:
        return node.visit(transformer)
    updated = node
    if transformer.on_visit(node):
        changes: dict[str, object] = {}
        for name in fields:
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                children = _transform_children(node, name, value, transformer)
                if children is not None:
                    changes[name] = children
            elif kind in _NODE_TYPES or _is_node(value):
                new = _transform(value, transformer)
                if new is not value:
                    changes[name] = _one_node(node, name, value, new)
        if changes:
            updated = node.with_changes(**changes)
    result = transformer.on_leave(node, updated)
    if result is not updated and not isinstance(result, (cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel)):
        raise TypeError(f"Expected a node of type CSTNode or a RemovalSentinel, but got a return value of {type(result).__name__}")
    return result


def _transform_children(parent: cst.CSTNode, name: str, children, transformer: cst.CSTTransformer) -> tuple | None:
    """A sequence field's children transformed (removals dropped, flattened ones spliced in), or
    None where each came back as it was."""
    out: list | None = None
    body = (type(parent), name) in _bodies()
    for index, child in enumerate(children):
        new = _transform(child, transformer)
        if new is child:
            if out is not None:
                out.append(child)
            continue
        if out is None:
            out = list(children[:index])
        if isinstance(new, cst.RemovalSentinel):
            continue
        for each in new if isinstance(new, cst.FlattenSentinel) else (new,):
            if body and not child._is_removable() and each._is_removable():
                continue  # (`visit_body_sequence`: a statement emptied by removals goes)
            out.append(each)
    return None if out is None else tuple(out)


def _one_node(parent: cst.CSTNode, name: str, old: cst.CSTNode, new):
    """What a field holding one node becomes when its visit returned `new` (LibCST's
    `visit_required`/`visit_optional`/`visit_sentinel`)."""
    if isinstance(new, cst.FlattenSentinel):
        raise TypeError(f"We got a FlattenSentinel while visiting a {type(old).__name__}. This node's parent does not allow for it to be replaced with a sequence.")
    if not isinstance(new, cst.RemovalSentinel):
        return new
    key = (type(parent), name)
    removal = _ON_REMOVAL.get(key)
    if removal is None:
        options = _options(typing.get_type_hints(type(parent)).get(name))
        removal = _ON_REMOVAL[key] = "none" if type(None) in options else "sentinel" if cst.MaybeSentinel in options else "required"
    if removal == "required":
        raise TypeError(f"We got a RemovalSentinel while visiting a {type(old).__name__}. This node's parent does not allow it to be removed.")
    return None if removal == "none" else cst.MaybeSentinel.DEFAULT
