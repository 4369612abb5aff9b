"""What the model_fn analysis hands the code generators: `Plan` (and its `Layer`s), the record it
keeps per model_fn statement (`Stmt`, whose `kind` the analysis sets), and `Unsupported`, the
decline that carries the statements it declined at.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum

from ..cst_on_demand import cst


class Unsupported(Exception):
    """The model_fn has a construct this version cannot migrate; the message says which.

    `statements`: the statement that declined, when known, then the statements around it that
    the analysis was in (innermost first), for `ModelFnAnalyzer.blocking_statement`."""

    def __init__(self, message: str, node: cst.CSTNode | None = None) -> None:
        super().__init__(message)
        self.statements: list[cst.CSTNode] = [node] if node is not None else []

    @property
    def node(self) -> cst.CSTNode | None:
        """The innermost statement known to have declined."""
        return self.statements[0] if self.statements else None


@contextmanager
def declining_at(statement: cst.CSTNode) -> Iterator[None]:
    """Adds `statement` to the statements of an `Unsupported` raised inside (as the one that
    declined when the raise named none, else as one around it)."""
    try:
        yield
    except Unsupported as why:
        why.statements.append(statement)
        raise


# Stands for the model's variable in an optimizer expression; the code generators put theirs in.
MODEL_PLACEHOLDER = "__tfmigrate_model__"


# -- the plan -----------------------------------------------------------------------------


@dataclass
class Layer:
    attr: str
    func: str  # `tf.keras.layers.Dense`
    args: list[str]  # rendered constructor arguments


@dataclass
class Plan:
    fn_name: str
    class_name: str
    params_name: str
    features_name: str = "features"
    labels_name: str = "labels"
    loss_uses_params: bool = False
    layers: list[Layer] = field(default_factory=list)
    # `tf.get_variable`s: (attribute, `add_weight` arguments); TF1 names of attributes (or
    # `attribute/weight`) that the attribute name alone does not give.
    weights: list[tuple[str, list[str]]] = field(default_factory=list)
    weight_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)  # what their arguments need
    weights_use_params: bool = False
    tf1_names: dict[str, str] = field(default_factory=dict)
    init_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)
    call_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)
    call_uses_params: bool = False
    output: str = ""
    keras_loss: str | None = None  # a Keras loss object expression ...
    loss_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)  # ... or compute_loss's body
    loss_name: str = "loss"
    optimizer_prelude: list[cst.SimpleStatementLine] = field(default_factory=list)
    # A hand-written learning rate: `def <step_fn>(<param>): <stmts>; return <result>`.
    step_fn: str | None = None
    step_fn_param: str = "global_step"
    step_fn_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)
    step_fn_result: str = ""
    # Summaries, written from the training step: the model_fn's (every `save_summary_steps`) and
    # the TPU `host_call`'s (every step), each with the statements their values need.
    summaries: list[cst.SimpleStatementLine] = field(default_factory=list)
    host_summaries: list[cst.SimpleStatementLine] = field(default_factory=list)
    # `tf.train.init_from_checkpoint` calls: (condition or None, "ckpt, assignment_map").
    init_checkpoints: list[tuple[str | None, str]] = field(default_factory=list)
    optimizer: str = ""
    docstring: str | None = None
    notes: list[str] = field(default_factory=list)
    # eval_metrics: (attribute, class path, constructor args), how metric_fn's parameters map onto
    # Keras's (y, y_pred), metric_fn's own statements, and the update calls.
    metrics: list[tuple[str, str, list[str]]] = field(default_factory=list)
    metric_sources: list[tuple[str, str]] = field(default_factory=list)
    metric_prelude: list[cst.SimpleStatementLine] = field(default_factory=list)
    metric_updates: list[str] = field(default_factory=list)
    # TF1 gradient code (compute, transform, apply), run by `tfm.train_step` from `train_step`.
    gradient_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)
    gradient_scale_loss: bool = True
    gradient_loss_name: str = "loss"
    gradient_prelude: list[cst.SimpleStatementLine] = field(default_factory=list)
    gradient_uses_params: bool = False
    # The PREDICT branch: statements recomputed from the output, the branch's own, the dict.
    predictions: str | None = None
    predict_prelude: list[cst.SimpleStatementLine] = field(default_factory=list)
    predict_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)
    predict_uses_params: bool = False
    # Module-level functions (a metric_fn) whose body now lives in the model class.
    absorbed_functions: list[str] = field(default_factory=list)
    # The spec's hooks (estimator_surface.spec_hooks): method name (`training_hooks`, ...) ->
    # the list expression, and the statements building it.
    hooks: dict[str, str] = field(default_factory=dict)
    hook_stmts: dict[str, list[cst.SimpleStatementLine]] = field(default_factory=dict)
    hooks_use_params: bool = False
    # The PREDICT spec's `export_outputs=` (estimator_surface.export_statements): the branch's
    # statements for the `export_outputs` method, and the expression it returns.
    export_outputs: str | None = None
    export_stmts: list[cst.SimpleStatementLine] = field(default_factory=list)
    # BERT's input: one features dict, labels included (`label_ids = features['label_ids']`). The
    # model's `labels` is then the features dict, and these statements read the labels from it.
    labels_from_features: bool = False
    # The model_fn is a closure a builder returns (BERT's `model_fn_builder`): migrated in place.
    closure: bool = False
    # `tf.get_variable`s whose shape reads a tensor's static shape (BERT's `hidden_size =
    # output_layer.shape[-1].value`): (attribute, method, tensor parameter, the method's
    # statements, `add_weight` arguments); made by `tfm.layers.DeferredWeight` on first call.
    deferred_weights: list[tuple[str, str, str, list[cst.SimpleStatementLine], list[str]]] = field(default_factory=list)
    deferred_use_params: bool = False
    # Forward statements that call into another module (BERT's `modeling.BertModel(...)`), whose
    # TF1 variable-scope code the codemod cannot see: (attribute, static method, its parameters,
    # the statements, the names returned), run by `tfm.tf1.VariableScopeLayer`.
    scoped: list[tuple[str, str, list[str], list[cst.SimpleStatementLine], list[str]]] = field(default_factory=list)
    scoped_regularization: bool = False  # the TF1 loss read the regularizers that scoped code adds
    # Statements the eval metrics' tensors need from the model_fn's side (labels read from the
    # features, per-example losses), run before metric_fn's parameters are bound.
    metric_model_prelude: list[cst.SimpleStatementLine] = field(default_factory=list)


class StmtKind(StrEnum):
    """What a model_fn statement is to the plan; `analyze()` sets it, step by step.

    `UNCLASSIFIED` is the empty string, so `if st.kind:` reads "already classified"."""

    UNCLASSIFIED = ""
    PURE = "pure"  # reads neither features nor labels (hyper-parameters, constants): copied where needed
    FORWARD = "forward"  # the forward pass -> `Model.call`
    DEAD = "dead"  # a forward statement the model output does not need (PREDICT may recompute it)
    LAYER_OBJECT = "layerobj"  # `head = tf.keras.layers.Dense(2)`: a model attribute, built once
    VARIABLE = "variable"  # `w = tf.get_variable(...)` -> `add_weight`
    LOSS = "loss"  # reads labels -> the loss
    LABEL_SOURCE = "labelsrc"  # reads the labels out of the features (`label_ids = features[...]`)
    OPTIMIZER = "optimizer"  # the `tf.train.*Optimizer(...)`
    SCHEDULE = "schedule"  # a `tf.train.*_decay(...)` learning rate
    STEP_FN = "stepfn"  # part of a learning rate computed by hand from the global step
    GRADIENT = "grad"  # hand-written gradient code (compute, transform, apply)
    METRIC_OP = "metricop"  # `acc = tf.metrics.accuracy(...)`
    METRIC_DICT = "metricdict"  # `{'accuracy': acc, ...}`, the eval metric ops
    SUMMARY = "summary"  # `tf.summary.scalar(...)` & co.
    DROP = "drop"  # no job in TF2 (update ops, global step, minimize, logging, ...), or taken up elsewhere


@dataclass
class Stmt:
    """One model_fn statement (a line `StatementShapes._flatten` put out): the names it defines
    and reads, and its kind."""

    node: cst.SimpleStatementLine
    small: cst.BaseSmallStatement
    defs: set[str]
    uses: set[str]
    kind: StmtKind = StmtKind.UNCLASSIFIED
    line: cst.SimpleStatementLine = field(init=False)  # the line `_flatten` put out (`node` may be rewritten)

    def __post_init__(self) -> None:
        self.line = self.node


def camel(name: str) -> str:
    """The Keras model class name for a model_fn: `resnet_model_fn` -> `ResnetModel`. No leading
    underscore even for a private `_model_fn`: Keras 3 refuses a model whose name starts with one
    (it is not a valid root scope name)."""
    stripped = re.sub(r"_?fn$", "", name)
    lead = ""
    parts = [p for p in stripped.strip("_").split("_") if p]
    base = "".join(p[:1].upper() + p[1:] for p in parts) or "Migrated"
    if base == "Model":
        base = "KerasModel"
    elif not base.endswith("Model"):
        base += "Model"
    return lead + base
