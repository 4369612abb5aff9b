"""`Analysis`: what the analysis's parts ask of the analyzer they are mixed into.

The parts (`shapes`, `forward`, `optimizer`, ...) are mixins of `analyzer.ModelFnAnalyzer`, and
their helper classes and functions are handed that analyzer. They type it as this protocol, the
queries and state they read, so that no part imports the analyzer: the package's imports run one
way, from `analyzer` down to its parts and from them to `syntax`, `tables` and `plan`.
"""

from __future__ import annotations

from typing import Protocol

from ..cst_on_demand import cst


class Analysis(Protocol):
    """The analyzer as its parts see it (`analyzer.ModelFnAnalyzer` is one)."""

    tf: str  # the module's alias of TensorFlow in the output
    tfm: str  # ... and of tfmigrate.runtime
    labels: str | None  # model_fn's labels parameter
    module_fns: dict[str, cst.FunctionDef]  # the module's top-level functions, by name
    arg_scopes: list[tuple[set[str], list[cst.Arg]]]  # the `slim.arg_scope` blocks around the statement
    variables: dict[str, str]  # `w = tf.get_variable(...)`: local name -> model attribute
    layer_objects: dict[str, cst.Call]  # `head = tf.keras.layers.Dense(...)`: name -> constructor
    layer_object_attrs: dict[str, str]
    uncollected_regularizers: list[str]
    update_ops_dependency: bool

    def code(self, node: cst.CSTNode) -> str: ...

    def canonical(self, node: cst.BaseExpression) -> str | None: ...

    def dict_value(self, node: cst.BaseExpression) -> cst.Dict | None: ...

    def is_mode_compare(self, node: cst.BaseExpression) -> tuple[bool, str] | None: ...

    def _is_global_step(self, node: cst.BaseExpression, names: set[str]) -> bool: ...

    def _needs_inline(self, fn: cst.FunctionDef, seen: frozenset[str] = frozenset()) -> bool: ...
