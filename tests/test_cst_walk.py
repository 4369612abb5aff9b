"""`cst_walk.walk` and `cst_walk.transform` call a visitor or transformer as `node.visit` does, and
`transform` gives the same tree, rebuilding only what changed."""

from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst
import pytest

from tfmigrate import cst_walk
from tfmigrate.cst_walk import transform, walk

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# Every fixture's input and expected output: TF1 programs of every shape the rules meet, and
# the Python around them (decorators, comprehensions, f-strings, try/with, star-args, lambdas).
SOURCES = sorted(p for p in FIXTURES.rglob("*.py") if p.name.endswith((".in.py", ".out.py")))
SYNTAX = '''
@decorator(a, *b, **c)
async def f(x: int = 1, /, y=2, *args, z: "str" = f"{x!r:>{y}}", **kw) -> list[int]:
    """doc"""
    global g
    async with a as (b, c), d:
        async for i in range(3):
            yield [j async for j in k if j] or {m: n for m, n in o} or {*p} or (q for q in r)
    try:
        raise E from e
    except* (A, B) as err:
        del x[1:2, ::3], y.z
    else:
        pass
    finally:
        return lambda u, *v, w=1: (u if v else w) @ ~+-u ** 2
match command:
    case [1, *rest] | {"k": 2, **more} | Point(x=0, y=_) if rest:
        print(*rest, sep="" r"\\n", end=b"")
    case _:
        x: int
        x += (y := 3); x >>= 1; assert x, "m"
class C(B, metaclass=M):
    import os, sys as system
    from .. import (a as b, c)
    while not x is not y in z: break
    else: continue
'''


class Events(cst.CSTVisitor):
    """Records every on_visit/on_leave, and declines to descend into the node types in `skip`."""

    def __init__(self, skip: tuple[type, ...] = ()) -> None:
        self.events: list[tuple[str, int]] = []
        self.skip = skip

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        super().on_visit(node)
        return not isinstance(node, self.skip)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.events.append(("leave", id(original_node)))
        super().on_leave(original_node)


@functools.cache
def _modules() -> tuple[cst.Module, ...]:
    modules = [cst.parse_module(SYNTAX)]
    for path in SOURCES:
        try:
            modules.append(cst.parse_module(path.read_text(encoding="utf-8")))
        except cst.ParserSyntaxError:
            continue
    return tuple(modules)


def test_the_fixtures_are_read():
    assert len(SOURCES) > 300


@pytest.mark.parametrize(
    "skip, every", [((), 1), ((cst.Call, cst.Lambda), 4), ((cst.FunctionDef, cst.Subscript), 4)], ids=["all", "calls", "defs"]
)
def test_walk_makes_the_calls_visit_makes_in_the_same_order(skip, every):
    compared = 0
    for module in _modules()[::every]:
        by_libcst, by_walk = Events(skip), Events(skip)
        module.visit(by_libcst)
        walk(module, by_walk)
        assert by_walk.events == by_libcst.events
        compared += len(by_walk.events)
    assert compared > 20_000


def test_walk_dispatches_to_visit_and_leave_methods():
    seen: list[str] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            seen.append(f"visit {cst.Module([]).code_for_node(node.func)}")
            return node.func.value != "skip"  # type: ignore[attr-defined]

        def leave_Call(self, original_node: cst.Call) -> None:
            seen.append(f"leave {cst.Module([]).code_for_node(original_node.func)}")

    walk(cst.parse_module("f(g(1), skip(h(2)))\n"), Calls())
    assert seen == ["visit f", "visit g", "leave g", "visit skip", "leave skip", "leave f"]


def test_a_visitor_of_fields_gets_libcsts_own_walk():
    fields: list[str] = []

    class Funcs(cst.CSTVisitor):
        def visit_Call_func(self, node: cst.Call) -> None:
            fields.append("func")

    walk(cst.parse_module("f(g(1))\n"), Funcs())
    assert fields == ["func", "func"]


def test_a_transformer_is_refused():
    with pytest.raises(TypeError, match="not a CSTVisitor"):
        walk(cst.parse_module("x = 1\n"), cst.CSTTransformer())  # type: ignore[arg-type]


def test_a_field_visited_only_where_set_keeps_its_place(monkeypatch):
    """LibCST visits an f-string expression's `format_spec` only where there is one: the first
    expression walked (without one) must not fix the order for the next (with one)."""
    monkeypatch.setattr(cst_walk, "_FIELD_ORDER", {})
    module = cst.parse_module('a = f"{x}" f"{y:>{z}}" f"{w!r}"\n')
    by_libcst, by_walk = Events(), Events()
    module.visit(by_libcst)
    walk(module, by_walk)
    assert by_walk.events == by_libcst.events


class Rewrites(cst.CSTTransformer):
    """Records every on_visit/on_leave, and rewrites: names `x` -> `renamed_x`; every `pass` and
    `del` statement removed (a line left empty goes); each `return` doubled (FlattenSentinel);
    parameters' annotations and the commas of imported names removed (optional and sentinel
    fields); calls of `skip` left unvisited."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.inside = ""

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.events.append(("visit", id(node)))
        super().on_visit(node)
        return not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "skip")

    def on_leave(self, original_node, updated_node):
        self.events.append(("leave", id(original_node)))
        return super().on_leave(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value="renamed_x") if updated_node.value == "x" else updated_node

    def leave_Pass(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE

    def leave_Del(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if updated_node.body and isinstance(updated_node.body[0], cst.Return):
            return cst.FlattenSentinel([updated_node, updated_node])
        return updated_node

    def visit_Param(self, node: cst.Param) -> None:
        self.inside = "param"

    def leave_Param(self, original_node, updated_node):
        self.inside = ""
        return updated_node

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        self.inside = "alias"

    def leave_ImportAlias(self, original_node, updated_node):
        self.inside = ""
        return updated_node

    def leave_Annotation(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE if self.inside == "param" else updated_node  # (optional there)

    def leave_Comma(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE if self.inside == "alias" else updated_node  # (MaybeSentinel there)


class Unchanged(cst.CSTTransformer):
    pass


def test_transform_gives_libcsts_tree_and_calls():
    compared = 0
    for module in _modules()[::2]:
        by_libcst, by_transform = Rewrites(), Rewrites()
        expected = module.visit(by_libcst)
        got = transform(module, by_transform)
        assert by_transform.events == by_libcst.events
        assert got.code == expected.code
        assert got.deep_equals(expected)
        compared += 1
    assert compared > 100


def test_transform_keeps_what_did_not_change():
    module = cst.parse_module("def f(a):\n    return a + 1\n\nx = 2\n")
    assert transform(module, Unchanged()) is module
    renamed = transform(module, Rewrites())
    assert renamed is not module
    assert renamed.code == "def f(a):\n    return a + 1\n    return a + 1\n\nrenamed_x = 2\n"
    assert renamed.body[0] is not module.body[0]  # (its return doubled)
    assert renamed.body[0].body.body[0] is module.body[0].body.body[0]  # (the return itself unchanged)


def test_transform_refuses_what_libcst_refuses():
    class RemovesNames(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return cst.RemovalSentinel.REMOVE

    with pytest.raises(TypeError, match="does not allow it to be removed"):
        transform(cst.parse_module("x = 1\n"), RemovesNames())
    with pytest.raises(TypeError, match="not a CSTTransformer"):
        transform(cst.parse_module("x = 1\n"), Events())  # type: ignore[arg-type]


def _recorders(base: type) -> type:
    """A visitor of `base` that records its `visit_<Node>`/`leave_<Node>` calls and skips the
    insides of calls to `skip`."""

    class Recorder(base):  # type: ignore[valid-type, misc]
        def __init__(self) -> None:
            self.seen: list[tuple[str, int]] = []

        def visit_Call(self, node: cst.Call) -> bool:
            self.seen.append(("visit_Call", id(node)))
            return not (isinstance(node.func, cst.Name) and node.func.value.startswith("s"))

        def leave_Call(self, original_node: cst.Call) -> None:
            self.seen.append(("leave_Call", id(original_node)))

        def visit_Name(self, node: cst.Name) -> None:
            self.seen.append(("visit_Name", id(node)))

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.seen.append(("leave_FunctionDef", id(original_node)))

    return Recorder


def _renamers(base: type) -> type:
    """A transformer of `base` that renames `x` to `renamed` and drops every `pass` statement."""

    class Renamer(base):  # type: ignore[valid-type, misc]
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            return updated_node.with_changes(value="renamed") if updated_node.value == "x" else updated_node

        def leave_Pass(self, original_node: cst.Pass, updated_node: cst.Pass):
            return cst.RemoveFromParent()

    return Renamer


def test_the_codemods_own_bases_walk_as_libcsts_do():
    """`cst_on_demand.Visitor`/`Transformer` (what the codemod's module-level visitors derive from,
    so that importing them imports no LibCST) call the same methods in the same order and give the
    same trees as LibCST's `CSTVisitor`/`CSTTransformer`, through `node.visit` and through `walk`."""
    from tfmigrate.cst_on_demand import Transformer, Visitor

    ours, theirs = _recorders(Visitor), _recorders(cst.CSTVisitor)
    assert isinstance(ours(), cst.CSTVisitor) and cst_walk._nodes_only(ours())
    renamer_ours, renamer_theirs = _renamers(Transformer), _renamers(cst.CSTTransformer)
    assert isinstance(renamer_ours(), cst.CSTTransformer) and not isinstance(renamer_ours(), cst.CSTVisitor)
    compared = 0
    for module in _modules()[::3]:
        expected = theirs()
        module.visit(expected)
        by_visit = ours()
        module.visit(by_visit)
        by_walk = ours()
        walk(module, by_walk)
        assert by_visit.seen == expected.seen and by_walk.seen == expected.seen
        renamed = module.visit(renamer_theirs()).code
        assert module.visit(renamer_ours()).code == renamed
        assert transform(module, renamer_ours()).code == renamed
        compared += len(expected.seen)
    assert compared > 5_000
