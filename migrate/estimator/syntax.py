"""Small queries on libcst nodes that several parts of the model_fn analysis ask: the names a
statement assigns, the calls inside a node, argument binding (`bind_args`), attribute names.
"""

from __future__ import annotations

import re

from ..cst_on_demand import Transformer, Visitor, cst, statement_types

from .analysis import Analysis
from .plan import Unsupported
from .tables import CONTRIB_LAYERS, FEATURE_COLUMN_LAYERS, FUNCTIONAL_LAYERS, VARIABLE_COLLECTIONS
from ..cst_walk import walk


def assigned_names(stmt: cst.BaseSmallStatement) -> set[str]:
    targets: list[cst.BaseAssignTargetExpression] = []
    if isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
    elif isinstance(stmt, (cst.AnnAssign, cst.AugAssign)):
        targets = [stmt.target]
    out: set[str] = set()
    for target in targets:
        if isinstance(target, cst.Name):
            out.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                if isinstance(element.value, cst.Name):
                    out.add(element.value.value)
                else:
                    raise Unsupported("assignment to a non-name target")
        else:
            raise Unsupported("assignment to an attribute or subscript inside model_fn")
    return out


def functional_layer(key: str | None, analyzer: Analysis) -> bool:
    return key in FUNCTIONAL_LAYERS and (key not in FEATURE_COLUMN_LAYERS or getattr(analyzer, "feature_column_layers", False))


def statement_ids(fn: cst.FunctionDef) -> set[int]:
    """The ids of the statements inside `fn` (at any depth), not `fn` itself."""
    found: set[int] = set()

    class Statements(Visitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, statement_types()):
                found.add(id(node))
            return not isinstance(node, cst.BaseExpression)

    walk(fn.body, Statements())
    return found


def first_match(node: cst.CSTNode, match):
    """The first truthy `match(call)` of the calls inside `node` (in visit order), else None."""
    found = None

    class Finder(Visitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal found
            if found is None:
                found = match(call) or None

    walk(node, Finder())
    return found


def any_call(node: cst.CSTNode, predicate) -> bool:
    """Whether any call inside `node` satisfies `predicate(call)`."""
    return first_match(node, predicate) is not None


def calls_method(node: cst.CSTNode, receivers: set[str], method: str) -> bool:
    """`<receiver>.<method>(...)` inside `node`, for a receiver name in `receivers`."""
    return any_call(
        node,
        lambda call: isinstance(call.func, cst.Attribute)
        and call.func.attr.value == method
        and isinstance(call.func.value, cst.Name)
        and call.func.value.value in receivers,
    )


def calls_any(node: cst.CSTNode, analyzer: Analysis, keys: set[str]) -> bool:
    """A call of one of the TF1 API paths `keys` inside `node`."""
    return any_call(node, lambda call: analyzer.canonical(call.func) in keys)


def creates_layer(node: cst.CSTNode, analyzer: Analysis) -> bool:
    """A TF1 or Keras layer (function or class) used inside `node`."""
    return any_call(
        node,
        lambda call: (analyzer.canonical(call.func) or "").startswith(("layers.", "keras.layers."))
        or analyzer.canonical(call.func) in CONTRIB_LAYERS
        or functional_layer(analyzer.canonical(call.func), analyzer),
    )


def single_target(line: cst.SimpleStatementLine) -> str | None:
    small = line.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None


def defs_of(line: cst.SimpleStatementLine) -> set[str]:
    try:
        return set().union(*(assigned_names(small) for small in line.body))
    except Unsupported:
        return set()


def is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def is_constant_like(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float, cst.Name, cst.Subscript, cst.Attribute, cst.UnaryOperation))


def bind_args(call: cst.Call, positional: tuple[str, ...]) -> dict[str, cst.BaseExpression] | None:
    bound: dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
        elif index < len(positional):
            bound[positional[index]] = arg.value
        else:
            return None
    return bound


def attr_name(tf1: str) -> str:
    """A Python attribute name for a TF1 scope or variable name: `encoder/LayerNorm` -> `encoder_layer_norm`."""
    name = re.sub(r"(?<=[a-z])([A-Z])", r"_\1", tf1.replace("/", "_")).lower()
    return re.sub(r"\W+", "_", name).strip("_")


def snake(cls: str) -> str:
    cls = cls.rsplit(".", 1)[-1]
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", cls).lower()
    return name.replace("conv1_d", "conv1d").replace("conv2_d", "conv2d").replace("conv3_d", "conv3d").replace(
        "pooling1_d", "pooling1d"
    ).replace("pooling2_d", "pooling2d").replace("pooling3_d", "pooling3d")


def collection_read(analyzer: Analysis, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    """A TF1 read of the graph's variable collections, in code the Keras model runs: the model has
    no graph collections (`tf.compat.v1.trainable_variables()` is empty there). The trainable ones
    are the model's own (`self.trainable_variables`); the others have no Keras counterpart."""
    key = analyzer.canonical(original.func)
    if key == "trainable_variables":
        if updated.args:
            raise Unsupported("`tf.trainable_variables` with a scope is not migrated yet")
        return cst.parse_expression("self.trainable_variables")
    if key in VARIABLE_COLLECTIONS:
        raise Unsupported(f"`tf.{key}()` reads a TF1 graph collection, which a Keras model has no counterpart of")
    return updated


class CollectionReads(Transformer):
    """`collection_read` over a statement copied into the Keras model's methods as written (a pure
    value the loss or the metrics need: `decay = tf.add_n([... for v in tf.trainable_variables()])`)."""

    def __init__(self, analyzer: Analysis) -> None:
        super().__init__()
        self.a = analyzer

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return collection_read(self.a, original, updated)
