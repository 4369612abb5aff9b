"""Splits a TF1 `model_fn(features, labels, mode, params)` into the pieces of a Keras program.

The analysis is a data flow over the model_fn's top-level statements:
- statements that (transitively) read `features` are the forward pass -> `Model.call`; TF1 layer
  calls in them are hoisted into `Model.__init__` (Keras layers are built once, not per call);
- statements that read `labels` make the loss -> a Keras loss object, or `Model.compute_loss`;
- the `tf.train.*Optimizer` (minus `CrossShardOptimizer`, which the strategy replaces) -> compile;
- statements that read neither (hyper-parameters from `params`, constants) are copied to
  whichever piece needs them;
- `mode == ModeKeys.TRAIN` becomes Keras's `training` flag.

Anything outside that shape makes `analyze()` return reasons instead of a plan; the rule then
marks the program with TODOs and leaves it alone.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from .inline import InlineError, RenameNames, inline
from .names import AliasTable, dotted, names_in
from .user_optimizers import ADAM_WEIGHT_DECAY, recognise

_BUILTINS = set(dir(builtins))


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


# -- name collection ----------------------------------------------------------------------


def _assigned(stmt: cst.BaseSmallStatement) -> set[str]:
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


# -- tables -------------------------------------------------------------------------------

# Stands for the model's variable in an optimizer expression; the code generators put theirs in.
MODEL_PLACEHOLDER = "__tfmigrate_model__"

# Calls that make a helper function part of the model (it is inlined into model_fn).
_MODEL_BUILDING_PREFIXES = (
    "layers.", "keras.layers.", "contrib.", "train.", "losses.", "metrics.", "summary.", "estimator.", "tpu.",
)
_MODEL_BUILDING = {
    "get_variable", "variable_scope", "name_scope", "trainable_variables", "gradients", "get_collection",
    "add_to_collection", "clip_by_global_norm", "global_variables",
}

# Modules whose functions build no TF graph. A call in the forward pass into any other imported
# module (not TensorFlow's) may create TF1 variables the codemod cannot see (BERT's `modeling`).
_PLAIN_MODULES = frozenset({
    "__future__", "absl", "collections", "copy", "functools", "itertools", "json", "logging", "math", "numpy", "os",
    "random", "re", "six", "string", "sys", "time", "typing", "tensorflow", "tf_slim", "tfmigrate",
})
# TF1 functional layers -> the runtime's functional forms (`tfm.tf1.*`), inside scoped code.
_SCOPED_LAYERS = {
    "layers.dense": "dense", "layers.conv2d": "conv2d", "layers.dropout": "dropout",
    "contrib.layers.layer_norm": "layer_norm",
}


def foreign_names(module: cst.Module) -> set[str]:
    """Local names a module-level import binds to a module (or its members) outside `_PLAIN_MODULES`."""
    out: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted(alias.name) or ""
                    if full.split(".")[0] not in _PLAIN_MODULES:
                        out.add(alias.asname.name.value if alias.asname else full.split(".")[0])  # type: ignore[union-attr]
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                full = (dotted(small.module) or "") if small.module is not None else ""
                if small.relative or full.split(".")[0] not in _PLAIN_MODULES:
                    for alias in small.names:
                        out.add(alias.asname.name.value if alias.asname else (dotted(alias.name) or ""))  # type: ignore[union-attr]
    return out


def _foreign_calls(node: cst.CSTNode, foreign: set[str]) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Visit(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            name = dotted(call.func)
            if name is not None and name.split(".")[0] in foreign:
                found.append(call)

    node.visit(Visit())
    return found


# TF1 functional layer -> (Keras class, positional parameter names after `inputs`, arguments the
# Keras constructor does not take, which the call takes instead).
FUNCTIONAL_LAYERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "layers.dense": ("Dense", ("units",)),
    # TF1's fused kernel keeps a Bessel-corrected moving variance; the runtime's layer does too.
    "layers.batch_normalization": (
        "runtime:layers.BatchNormalization",
        (
            "axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
            "moving_mean_initializer", "moving_variance_initializer", "beta_regularizer", "gamma_regularizer",
            "beta_constraint", "gamma_constraint", "training", "trainable", "name", "reuse", "renorm",
            "renorm_clipping", "renorm_momentum", "fused", "virtual_batch_size", "adjustment",
        ),
    ),
    "layers.dropout": ("Dropout", ("rate", "noise_shape", "seed", "training")),
    "layers.flatten": ("Flatten", ()),
    "layers.conv1d": ("Conv1D", ("filters", "kernel_size", "strides", "padding")),
    "layers.conv2d": ("Conv2D", ("filters", "kernel_size", "strides", "padding")),
    "layers.conv3d": ("Conv3D", ("filters", "kernel_size", "strides", "padding")),
    "layers.max_pooling1d": ("MaxPooling1D", ("pool_size", "strides", "padding")),
    "layers.max_pooling2d": ("MaxPooling2D", ("pool_size", "strides", "padding")),
    "layers.max_pooling3d": ("MaxPooling3D", ("pool_size", "strides", "padding")),
    "layers.average_pooling1d": ("AveragePooling1D", ("pool_size", "strides", "padding")),
    "layers.average_pooling2d": ("AveragePooling2D", ("pool_size", "strides", "padding")),
    "layers.average_pooling3d": ("AveragePooling3D", ("pool_size", "strides", "padding")),
    # Feature columns: TFM401's runtime layers (TFM401 makes the columns the runtime's, on the keras
    # target only, so only an analyzer with `feature_column_layers` set builds them).
    "feature_column.input_layer": ("runtime:feature_columns.InputLayer", ("feature_columns",)),
    "feature_column.linear_model": ("runtime:feature_columns.LinearModel", ("feature_columns", "units", "sparse_combiner")),
}
_FEATURE_COLUMN_LAYERS = frozenset({"feature_column.input_layer", "feature_column.linear_model"})


def _functional_layer(key: str | None, analyzer: "ModelFnAnalyzer") -> bool:
    return key in FUNCTIONAL_LAYERS and (key not in _FEATURE_COLUMN_LAYERS or getattr(analyzer, "feature_column_layers", False))
LAYER_CLASSES = {
    "layers.BatchNormalization": "runtime:layers.BatchNormalization",
    "layers.Dense": "Dense",
    "layers.Dropout": "Dropout",
    "layers.Flatten": "Flatten",
    "layers.Conv1D": "Conv1D",
    "layers.Conv2D": "Conv2D",
    "layers.Conv3D": "Conv3D",
    "layers.MaxPooling1D": "MaxPooling1D",
    "layers.MaxPooling2D": "MaxPooling2D",
    "layers.AveragePooling2D": "AveragePooling2D",
}
# tf.contrib.layers / slim (and `tf_slim`) layer functions -> (Keras class, positional parameters
# after `inputs`, TF1 -> Keras renames, TF1 defaults to spell out where Keras's differ, TF1's
# default variable scope, TF1 weight names for the Keras ones, and the call's `training`
# parameter with its TF1 default).
CONTRIB_LAYERS: dict[str, tuple[str, tuple[str, ...], dict[str, str], dict[str, str], str, dict[str, str], tuple[str, str] | None]] = {
    "contrib.layers.fully_connected": (
        "Dense",
        ("num_outputs", "activation_fn", "normalizer_fn", "normalizer_params", "weights_initializer",
         "weights_regularizer", "biases_initializer", "biases_regularizer", "reuse", "variables_collections",
         "outputs_collections", "trainable", "scope"),
        {"num_outputs": "units", "activation_fn": "activation", "weights_initializer": "kernel_initializer",
         "weights_regularizer": "kernel_regularizer", "biases_initializer": "bias_initializer",
         "biases_regularizer": "bias_regularizer"},
        {"activation_fn": "{tf}.nn.relu"},
        "fully_connected",
        {"kernel": "weights", "bias": "biases"},
        None,
    ),
    "contrib.layers.conv2d": (
        "Conv2D",
        ("num_outputs", "kernel_size", "stride", "padding", "data_format", "rate", "activation_fn", "normalizer_fn",
         "normalizer_params", "weights_initializer", "weights_regularizer", "biases_initializer", "biases_regularizer",
         "reuse", "variables_collections", "outputs_collections", "trainable", "scope"),
        {"num_outputs": "filters", "stride": "strides", "rate": "dilation_rate", "activation_fn": "activation",
         "weights_initializer": "kernel_initializer", "weights_regularizer": "kernel_regularizer",
         "biases_initializer": "bias_initializer", "biases_regularizer": "bias_regularizer"},
        {"padding": "'same'", "activation_fn": "{tf}.nn.relu"},
        "Conv",
        {"kernel": "weights", "bias": "biases"},
        None,
    ),
    "contrib.layers.max_pool2d": (
        "MaxPooling2D",
        ("kernel_size", "stride", "padding", "data_format", "outputs_collections", "scope"),
        {"kernel_size": "pool_size", "stride": "strides"},
        {"stride": "2", "padding": "'valid'"},
        "MaxPool2D",
        {},
        None,
    ),
    "contrib.layers.avg_pool2d": (
        "AveragePooling2D",
        ("kernel_size", "stride", "padding", "data_format", "outputs_collections", "scope"),
        {"kernel_size": "pool_size", "stride": "strides"},
        {"stride": "2", "padding": "'valid'"},
        "AvgPool2D",
        {},
        None,
    ),
    "contrib.layers.flatten": ("Flatten", ("outputs_collections", "scope"), {}, {}, "Flatten", {}, None),
    "contrib.layers.dropout": (
        "Dropout",
        ("keep_prob", "noise_shape", "is_training", "outputs_collections", "scope", "seed"),
        {},
        {"keep_prob": "0.5"},
        "Dropout",
        {},
        ("is_training", "True"),
    ),
    # TF1's layer_norm: moments over [begin_norm_axis, rank), epsilon 1e-12 (the runtime's layer).
    "contrib.layers.layer_norm": (
        "runtime:layers.LayerNorm",
        ("center", "scale", "activation_fn", "reuse", "variables_collections", "outputs_collections", "trainable",
         "begin_norm_axis", "begin_params_axis", "scope"),
        {"activation_fn": "activation"},
        {},
        "LayerNorm",
        {},
        None,
    ),
    # slim's batch_norm: decay 0.999, no gamma (scale=False) by default; the runtime's layer keeps
    # the fused kernel's Bessel-corrected moving variance on 2-D and 4-D inputs.
    "contrib.layers.batch_norm": (
        "runtime:layers.SlimBatchNorm",
        ("decay", "center", "scale", "epsilon", "activation_fn", "param_initializers", "param_regularizers",
         "updates_collections", "is_training", "reuse", "variables_collections", "outputs_collections", "trainable",
         "batch_weights", "fused", "data_format", "zero_debias_moving_mean", "scope", "renorm", "renorm_clipping",
         "renorm_decay", "adjustment"),
        {"decay": "momentum"},
        {"decay": "0.999", "scale": "False", "epsilon": "0.001"},
        "BatchNorm",
        {},
        ("is_training", "True"),
    ),
}
CONTRIB_LAYERS["contrib.layers.convolution2d"] = CONTRIB_LAYERS["contrib.layers.conv2d"]
# `linear` is fully_connected without an activation.
_fc = CONTRIB_LAYERS["contrib.layers.fully_connected"]
CONTRIB_LAYERS["contrib.layers.linear"] = (_fc[0], _fc[1], _fc[2], {"activation_fn": "None"}, _fc[4], _fc[5], _fc[6])
_WEIGHTLESS_LAYERS = {
    "Dropout", "Flatten", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
    "AveragePooling3D",
}


def _one_minus(keep_prob: str) -> str:
    """slim's `keep_prob` -> Keras's dropout `rate`, folded when it is a literal."""
    try:
        return repr(round(1.0 - float(keep_prob), 12))
    except ValueError:
        return f"1 - {keep_prob}"


_CONTRIB_DROP = {"reuse", "variables_collections", "outputs_collections", "scope", "data_format", "normalizer_params"}

# `tf.get_variable(name, shape, ...)` parameters, in order; the ones Keras's `add_weight` lacks
# change nothing a migrated model computes (collections, devices, partitioning).
GET_VARIABLE_PARAMS = (
    "name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections", "caching_device",
    "partitioner", "validate_shape", "use_resource", "custom_getter", "constraint", "synchronization", "aggregation",
)
_GET_VARIABLE_DROP = {"collections", "caching_device", "partitioner", "validate_shape", "use_resource", "synchronization"}
VARIABLE_SCOPES = {"variable_scope"}
NAME_SCOPES = {"name_scope"}

# TF1 arguments of layer constructors that have no Keras 3 counterpart.
_LAYER_DROP = {"reuse", "_reuse"}
_CALL_ONLY = {"training"}

# TF1 initializers -> (Keras initializer, TF1 positional parameters, TF1 defaults to spell out
# where Keras's differ: TF1's normal/uniform initializers default to stddev 1 and [0, 1), Keras's
# to 0.05). Random values never match TF1's bit for bit (other generators); the equivalence
# harness starts such programs from the original's checkpoint instead.
INITIALIZERS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "constant_initializer": ("Constant", ("value", "dtype", "verify_shape"), {}),
    "zeros_initializer": ("Zeros", ("dtype",), {}),
    "ones_initializer": ("Ones", ("dtype",), {}),
    "glorot_uniform_initializer": ("GlorotUniform", ("seed", "dtype"), {}),
    "glorot_normal_initializer": ("GlorotNormal", ("seed", "dtype"), {}),
    "random_normal_initializer": ("RandomNormal", ("mean", "stddev", "seed", "dtype"), {"stddev": "1.0"}),
    "random_uniform_initializer": ("RandomUniform", ("minval", "maxval", "seed", "dtype"), {"minval": "0.0", "maxval": "1.0"}),
    "truncated_normal_initializer": ("TruncatedNormal", ("mean", "stddev", "seed", "dtype"), {"stddev": "1.0"}),
    "variance_scaling_initializer": ("VarianceScaling", ("scale", "mode", "distribution", "seed", "dtype"), {}),
    "orthogonal_initializer": ("Orthogonal", ("gain", "seed", "dtype"), {}),
    # slim's xavier_initializer() is GlorotUniform's distribution exactly; uniform=False (a
    # truncated normal of stddev sqrt(1.3 / n), Keras's GlorotNormal is 0.3% narrower) and
    # variance_scaling_initializer go to the runtime's TF1 definitions.
    "contrib.layers.xavier_initializer": ("GlorotUniform", ("uniform", "seed", "dtype"), {}),
    "contrib.layers.variance_scaling_initializer": (
        "runtime:initializers.VarianceScaling", ("factor", "mode", "uniform", "seed", "dtype"), {}
    ),
}
INITIALIZERS["contrib.layers.xavier_initializer_conv2d"] = INITIALIZERS["contrib.layers.xavier_initializer"]
for _name in ("xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer"):
    # slim's `slim.initializers.X` spelling.
    INITIALIZERS[f"contrib.layers.initializers.{_name}"] = INITIALIZERS[f"contrib.layers.{_name}"]
_XAVIER = frozenset(
    f"contrib.layers.{module}{name}" for module in ("", "initializers.") for name in ("xavier_initializer", "xavier_initializer_conv2d")
)
for _name, _target in (
    ("constant", "constant_initializer"),
    ("zeros", "zeros_initializer"),
    ("ones", "ones_initializer"),
    ("glorot_uniform", "glorot_uniform_initializer"),
    ("glorot_normal", "glorot_normal_initializer"),
    ("random_normal", "random_normal_initializer"),
    ("random_uniform", "random_uniform_initializer"),
    ("truncated_normal", "truncated_normal_initializer"),
    ("variance_scaling", "variance_scaling_initializer"),
    ("orthogonal", "orthogonal_initializer"),
):
    INITIALIZERS[f"initializers.{_name}"] = INITIALIZERS[_target]
for _name, _cls in (("he_normal", "HeNormal"), ("he_uniform", "HeUniform"), ("lecun_normal", "LecunNormal"), ("lecun_uniform", "LecunUniform")):
    INITIALIZERS[f"initializers.{_name}"] = (_cls, ("seed",), {})
_INITIALIZER_DROP = {"dtype", "verify_shape"}

# tf.contrib.layers regularizers -> Keras ones. TF1's l2_regularizer(s) is s * sum(w**2) / 2
# (nn.l2_loss); Keras's L2(l) is l * sum(w**2): halving is exact in float32.
REGULARIZERS = {
    "contrib.layers.l2_regularizer": ("L2", "0.5"),
    "contrib.layers.l1_regularizer": ("L1", ""),
}
# Reading the regularization losses the layers registered.
REGULARIZATION_LOSS_FNS = {"losses.get_regularization_loss", "losses.get_regularization_losses", "losses.get_total_loss"}
# Reading the LOSSES collection the TF1 loss functions added to.
LOSS_COLLECTION_READERS = {"losses.get_total_loss", "losses.get_losses"}

# TF1 optimizer -> (Keras optimizer, TF1 positional parameters, renames, Keras arguments that
# must be spelled out because the Keras default differs from TF1's).
OPTIMIZERS: dict[str, tuple[str, tuple[str, ...], dict[str, str], dict[str, str]]] = {
    "train.GradientDescentOptimizer": ("SGD", ("learning_rate", "use_locking", "name"), {}, {}),
    # BERT's hand-written AdamWeightDecayOptimizer class (see user_optimizers): the runtime's copy
    # matches its exclusion patterns against the model's TF1 variable names.
    ADAM_WEIGHT_DECAY: (
        "runtime:optimizers.AdamWeightDecay",
        ("learning_rate", "weight_decay_rate", "beta_1", "beta_2", "epsilon", "exclude_from_weight_decay", "name"),
        {},
        {"model": MODEL_PLACEHOLDER},
    ),
    # Keras Adam differs from TF1's in float32 bias-correction arithmetic (5e-6 relative after 30
    # steps, measured); the runtime's Adam keeps TF1's (and its epsilon=1e-8 default).
    "train.AdamOptimizer": (
        "runtime:optimizers.Adam",
        ("learning_rate", "beta1", "beta2", "epsilon", "use_locking", "name"),
        {"beta1": "beta_1", "beta2": "beta_2"},
        {"learning_rate": "0.001"},
    ),
    "train.AdagradOptimizer": (
        "Adagrad",
        ("learning_rate", "initial_accumulator_value", "use_locking", "name"),
        {},
        {"epsilon": "0.0"},
    ),
    # Keras SGD(momentum) drifts from TF1 under a schedule (TF1 rescales the whole velocity) and on
    # sparse gradients (TF1 leaves untouched rows alone): the runtime's Momentum is exact in both.
    "train.MomentumOptimizer": (
        "runtime:optimizers.Momentum",
        ("learning_rate", "momentum", "use_locking", "name", "use_nesterov"),
        {},
        {},
    ),
    "train.AdadeltaOptimizer": (
        "Adadelta",
        ("learning_rate", "rho", "epsilon", "use_locking", "name"),
        {},
        {"learning_rate": "0.001", "rho": "0.95", "epsilon": "1e-08"},
    ),
    "train.RMSPropOptimizer": (
        "runtime:optimizers.RMSProp",
        ("learning_rate", "decay", "momentum", "epsilon", "use_locking", "centered", "name"),
        {},
        {},
    ),
    "train.FtrlOptimizer": (
        "Ftrl",
        (
            "learning_rate",
            "learning_rate_power",
            "initial_accumulator_value",
            "l1_regularization_strength",
            "l2_regularization_strength",
            "use_locking",
            "name",
            "accum_name",
            "linear_name",
            "l2_shrinkage_regularization_strength",
            "beta",
        ),
        {},
        {},
    ),
}
_OPTIMIZER_DROP = {"use_locking", "name", "accum_name", "linear_name"}

# TF1 loss functions (they add their result to the LOSSES collection).
TF1_LOSS_FNS: set[str] = set()

# tf.compat.v1.losses.* -> (Keras loss class, labels parameter, predictions parameter,
# other TF1 parameters the Keras class takes (TF1 name -> Keras name), fixed Keras arguments).
LOSSES: dict[str, tuple[str, str, str, dict[str, str], str]] = {
    "losses.mean_squared_error": ("MeanSquaredError", "labels", "predictions", {}, ""),
    "losses.absolute_difference": ("MeanAbsoluteError", "labels", "predictions", {}, ""),
    "losses.huber_loss": ("Huber", "labels", "predictions", {"delta": "delta"}, ""),
    "losses.sparse_softmax_cross_entropy": ("SparseCategoricalCrossentropy", "labels", "logits", {}, "from_logits=True"),
    "losses.softmax_cross_entropy": (
        "CategoricalCrossentropy",
        "onehot_labels",
        "logits",
        {"label_smoothing": "label_smoothing"},
        "from_logits=True",
    ),
    "losses.sigmoid_cross_entropy": (
        "BinaryCrossentropy",
        "multi_class_labels",
        "logits",
        {"label_smoothing": "label_smoothing"},
        "from_logits=True",
    ),
}
# Positional order of the TF1 loss functions (to bind positional arguments by name).
LOSS_PARAMS: dict[str, tuple[str, ...]] = {
    "losses.mean_squared_error": ("labels", "predictions", "weights"),
    "losses.absolute_difference": ("labels", "predictions", "weights"),
    "losses.huber_loss": ("labels", "predictions", "weights", "delta"),
    "losses.sparse_softmax_cross_entropy": ("labels", "logits", "weights"),
    "losses.softmax_cross_entropy": ("onehot_labels", "logits", "weights", "label_smoothing"),
    "losses.sigmoid_cross_entropy": ("multi_class_labels", "logits", "weights", "label_smoothing"),
    "losses.log_loss": ("labels", "predictions", "weights", "epsilon"),
    "losses.hinge_loss": ("labels", "logits", "weights"),
    "losses.cosine_distance": ("labels", "predictions", "axis", "weights"),
}

TF1_LOSS_FNS.update(LOSS_PARAMS, {"losses.compute_weighted_loss"})

# tf.compat.v1.train.*_decay(learning_rate, global_step, ...) -> Keras schedules, which read
# `optimizer.iterations` before it is incremented, as TF1 read `global_step` (bit-identical).
# (TF1 positional parameters, index of the step parameter, target, TF1 -> target renames)
SCHEDULES: dict[str, tuple[tuple[str, ...], str, str, dict[str, str]]] = {
    "train.exponential_decay": (
        ("learning_rate", "global_step", "decay_steps", "decay_rate", "staircase", "name"),
        "global_step",
        "keras:ExponentialDecay",
        {"learning_rate": "initial_learning_rate"},
    ),
    "train.inverse_time_decay": (
        ("learning_rate", "global_step", "decay_steps", "decay_rate", "staircase", "name"),
        "global_step",
        "keras:InverseTimeDecay",
        {"learning_rate": "initial_learning_rate"},
    ),
    "train.polynomial_decay": (
        ("learning_rate", "global_step", "decay_steps", "end_learning_rate", "power", "cycle", "name"),
        "global_step",
        "keras:PolynomialDecay",
        {"learning_rate": "initial_learning_rate"},
    ),
    "train.piecewise_constant": (("x", "boundaries", "values", "name"), "x", "keras:PiecewiseConstantDecay", {}),
    "train.piecewise_constant_decay": (("x", "boundaries", "values", "name"), "x", "keras:PiecewiseConstantDecay", {}),
    "train.cosine_decay": (
        ("learning_rate", "global_step", "decay_steps", "alpha", "name"),
        "global_step",
        "keras:CosineDecay",
        {"learning_rate": "initial_learning_rate"},
    ),
    "train.cosine_decay_restarts": (
        ("learning_rate", "global_step", "first_decay_steps", "t_mul", "m_mul", "alpha", "name"),
        "global_step",
        "keras:CosineDecayRestarts",
        {"learning_rate": "initial_learning_rate", "first_decay_steps": "first_decay_steps"},
    ),
    "train.natural_exp_decay": (
        ("learning_rate", "global_step", "decay_steps", "decay_rate", "staircase", "name"),
        "global_step",
        "runtime:schedules.NaturalExpDecay",
        {},
    ),
}

SPEC_KEYS_SUPPORTED = {
    "mode", "loss", "train_op", "eval_metrics", "eval_metric_ops", "scaffold_fn", "scaffold", "host_call",
    # estimator_surface.spec_hooks
    "training_hooks", "evaluation_hooks", "prediction_hooks", "training_chief_hooks",
}

# TF1 summary functions -> (TF2 `tf.summary` function, TF1 positional parameters, TF1 -> TF2 renames).
# TF1 wrote model_fn summaries every `save_summary_steps` (SummarySaverHook); the runtime's `fit`
# keeps that cadence with a default writer on model_dir and `optimizer.iterations` as the step.
SUMMARY_FNS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "summary.scalar": ("scalar", ("name", "tensor", "collections", "family"), {"tensor": "data"}),
    "summary.histogram": ("histogram", ("name", "values", "collections", "family"), {"values": "data"}),
    "summary.image": ("image", ("name", "tensor", "max_outputs", "collections", "family"), {"tensor": "data"}),
    "summary.text": ("text", ("name", "tensor", "collections"), {"tensor": "data"}),
    "contrib.summary.scalar": ("scalar", ("name", "tensor", "family", "step"), {"tensor": "data"}),
    "contrib.summary.histogram": ("histogram", ("name", "tensor", "family", "step"), {"tensor": "data"}),
    "contrib.summary.image": ("image", ("name", "tensor", "bad_color", "max_images", "family", "step"), {"tensor": "data", "max_images": "max_outputs"}),
    "compat.v2.summary.scalar": ("scalar", ("name", "data", "step", "description"), {}),
    "compat.v2.summary.histogram": ("histogram", ("name", "data", "step", "buckets", "description"), {}),
    "compat.v2.summary.image": ("image", ("name", "data", "step", "max_outputs", "description"), {}),
    "compat.v2.summary.text": ("text", ("name", "data", "step", "description"), {}),
}
_SUMMARY_DROP = {"collections", "family", "bad_color", "description"}
# `with` blocks of a host_call function that only set up recording (the runtime does that).
SUMMARY_CONTEXTS = {
    "contrib.summary.create_file_writer", "contrib.summary.always_record_summaries",
    "contrib.summary.record_summaries_every_n_global_steps", "contrib.summary.record_summaries",
    "compat.v2.summary.create_file_writer", "compat.v2.summary.record_if", "summary.create_file_writer",
    "summary.record_if",
}
SUMMARY_RESULTS = {"contrib.summary.all_summary_ops", "summary.all_v2_summary_ops"}

# tf.compat.v1.metrics.* -> (tfmigrate.runtime.metrics class, update parameters in TF1 order,
# constructor parameters). The runtime classes keep TF1's arguments and arithmetic.
METRICS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "metrics.accuracy": ("Accuracy", ("labels", "predictions", "weights"), ()),
    "metrics.mean": ("Mean", ("values", "weights"), ()),
    "metrics.mean_squared_error": ("MeanSquaredError", ("labels", "predictions", "weights"), ()),
    "metrics.root_mean_squared_error": ("RootMeanSquaredError", ("labels", "predictions", "weights"), ()),
    "metrics.mean_absolute_error": ("MeanAbsoluteError", ("labels", "predictions", "weights"), ()),
    "metrics.precision": ("Precision", ("labels", "predictions", "weights"), ()),
    "metrics.recall": ("Recall", ("labels", "predictions", "weights"), ()),
    "metrics.mean_per_class_accuracy": (
        "MeanPerClassAccuracy",
        ("labels", "predictions", "num_classes", "weights", "metrics_collections", "updates_collections", "name"),
        ("num_classes",),
    ),
    "metrics.true_positives": ("TruePositives", ("labels", "predictions", "weights"), ()),
    "metrics.false_positives": ("FalsePositives", ("labels", "predictions", "weights"), ()),
    "metrics.true_negatives": ("TrueNegatives", ("labels", "predictions", "weights"), ()),
    "metrics.false_negatives": ("FalseNegatives", ("labels", "predictions", "weights"), ()),
    "metrics.mean_relative_error": ("MeanRelativeError", ("labels", "predictions", "normalizer", "weights"), ()),
    "metrics.percentage_below": ("PercentageBelow", ("values", "threshold", "weights"), ("threshold",)),
    "metrics.mean_cosine_distance": ("MeanCosineDistance", ("labels", "predictions", "dim", "weights"), ("dim",)),
    "metrics.mean_iou": ("MeanIoU", ("labels", "predictions", "num_classes", "weights"), ("num_classes",)),
    "metrics.auc": (
        "AUC",
        ("labels", "predictions", "weights", "num_thresholds", "metrics_collections", "updates_collections", "curve", "name", "summation_method"),
        ("num_thresholds", "curve", "summation_method"),
    ),
}
_METRIC_DROP = {"metrics_collections", "updates_collections", "name"}
GLOBAL_STEP_FNS = {"train.get_global_step", "train.get_or_create_global_step"}
MODE_TRAIN = {"estimator.ModeKeys.TRAIN"}
MODE_ANY = {"estimator.ModeKeys.TRAIN", "estimator.ModeKeys.EVAL", "estimator.ModeKeys.PREDICT"}


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


@dataclass
class _Stmt:
    node: cst.SimpleStatementLine
    small: cst.BaseSmallStatement
    defs: set[str]
    uses: set[str]
    kind: str = ""  # pure | forward | loss | optimizer | drop
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


def _statement_ids(fn: cst.FunctionDef) -> set[int]:
    """The ids of the statements inside `fn` (at any depth), not `fn` itself."""
    found: set[int] = set()

    class Statements(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                found.add(id(node))
            return not isinstance(node, cst.BaseExpression)

    fn.body.visit(Statements())
    return found


class ModelFnAnalyzer:
    """Builds a `Plan` for one model_fn, or raises `Unsupported`."""

    def __init__(self, fn: cst.FunctionDef, names: AliasTable, module: cst.Module, tf: str, tfm: str) -> None:
        self.fn = fn
        self.names = names
        self.module = module
        self.tf = tf
        self.tfm = tfm
        params = [p.name.value for p in fn.params.params]
        if len(params) < 1:
            raise Unsupported("model_fn takes no arguments")
        self.features = params[0]
        self.labels = params[1] if len(params) > 1 else None
        self.mode = params[2] if len(params) > 2 else None
        self.params = params[3] if len(params) > 3 else "params"
        if len(params) > 4 or isinstance(fn.params.star_arg, cst.Param) or fn.params.star_kwarg is not None or fn.params.kwonly_params:
            raise Unsupported("model_fn takes `config` or extra arguments")
        if fn.asynchronous or fn.decorators:
            raise Unsupported("model_fn is decorated or async")
        self.layer_attrs: dict[str, int] = {}
        self.local_fns: dict[str, cst.FunctionDef] = {}
        self.update_ops_dependency = False
        self.update_ops_dependency_names: set[str] = set()
        self.eval_return: cst.Return | None = None
        self.predict_return: cst.Return | None = None
        self.predict_stmts: list[cst.SimpleStatementLine] = []
        self.eval_metrics_expr: cst.BaseExpression | None = None
        self.eval_metric_ops_expr: cst.BaseExpression | None = None
        self.hook_exprs: dict[str, list[cst.BaseExpression]] = {}  # spec key -> hook list expressions
        # `tf.variable_scope` nesting: statement -> the TF1 scope its variables are created in.
        self.scope_of: dict[int, str] = {}
        self.scope_counts: dict[str, int] = {}
        # `w = tf.get_variable(...)`: local name -> model attribute; attribute (or attribute/weight)
        # -> TF1 variable name, for the runtime's TF1 checkpoint loader.
        self.variables: dict[str, str] = {}
        self.tf1_names: dict[str, str] = {}
        self.step_fn: str | None = None  # the learning-rate function of the global step, if any
        self.layer_objects: dict[str, cst.Call] = {}  # `head = tf.keras.layers.Dense(...)`: name -> constructor
        self.layer_object_attrs: dict[str, str] = {}
        self.loss_collection_at: dict[int, list[str]] = {}  # statement -> TF1 LOSSES collection
        # `tf.train.init_from_checkpoint`: (condition, rendered arguments, names read).
        self.init_checkpoints: list[tuple[str | None, str, set[str]]] = []
        self.scaffold_fn: str | None = None
        self.host_call_expr: cst.BaseExpression | None = None
        # Module-level helpers the model_fn calls that build part of the model (inlined), and
        # names bound to a mode test (`is_training = (mode == ModeKeys.TRAIN)`).
        self.module_fns = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        # Calls the forward pass makes into code it cannot restructure, run under a variable
        # store instead: other modules' functions, and helpers that share variables
        # (`variable_scope(..., reuse=tf.AUTO_REUSE)`, a siamese tower called on two inputs).
        self.foreign = foreign_names(module) | {name for name, f in self.module_fns.items() if self._shares_variables(f)}
        self.inlined: list[str] = []
        self._inlining: list[str] = []
        self.mode_aliases: dict[str, tuple[bool, str]] = {}
        # BERT's `scaffold_fn = None` / `if init_checkpoint: ... scaffold_fn = tpu_scaffold`: the
        # variable the spec's `scaffold_fn=` names, already recorded as an init_from_checkpoint.
        self.scaffold_vars: set[str] = set()
        # `with slim.arg_scope([slim.conv2d, ...], padding='SAME'):` blocks around the statement
        # being flattened, outermost first: (the functions' canonical names, default arguments).
        self.arg_scopes: list[tuple[set[str], list[cst.Arg]]] = []
        self.dict_literals: dict[str, cst.Dict] = {}  # `batch_norm_params = {...}`
        # A statement the analysis made or passed on (a line `_flatten` put out, a branch
        # `_spec_chain` rebuilt): (it, the statements it came from, innermost first).
        self._origins: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] = {}
        # Optimizer classes the program defines that are a known algorithm (BERT's AdamW).
        self.user_optimizers = {
            s.name.value: key
            for s in module.body
            if isinstance(s, cst.ClassDef) and (key := recognise(s, module, self.canonical)) is not None
        }

    # -- where a decline is ---------------------------------------------------------------
    def blocking_statement(self, why: Unsupported) -> cst.CSTNode | None:
        """The statement of the model_fn as written that `why` declined at: the innermost of its
        statements, or of those they came from, that is one of the model_fn's own (None: none is,
        as when the `def` itself declined)."""
        own = _statement_ids(self.fn)
        return next((statement for statement in self._with_origins(why.statements) if id(statement) in own), None)

    def _rewritten(self, st: "_Stmt", rewriter: cst.CSTTransformer) -> cst.SimpleStatementLine:
        """`st`'s statement through `rewriter`; an `Unsupported` the rewriter raises names it."""
        with declining_at(st.line):
            return st.node.visit(rewriter)  # type: ignore[return-value]

    def _came_from(self, statement: cst.CSTNode, origin: cst.CSTNode) -> None:
        """Records that the analysis made or passed on `statement` from `origin` (innermost first)."""
        self._origins.setdefault(id(statement), (statement, []))[1].append(origin)

    def _with_origins(self, statements: list[cst.CSTNode]) -> Iterator[cst.CSTNode]:
        """Each of `statements`, each followed by the statements it came from, each once."""
        seen: set[int] = set()
        pending = list(reversed(statements))
        while pending:
            statement = pending.pop()
            if id(statement) in seen:
                continue
            seen.add(id(statement))
            yield statement
            entry = self._origins.get(id(statement))
            if entry is not None and entry[0] is statement:
                pending.extend(reversed(entry[1]))

    # -- helpers --------------------------------------------------------------------------
    def dict_value(self, node: cst.BaseExpression) -> cst.Dict | None:
        """A dict literal, or the dict literal a name was assigned in model_fn."""
        if isinstance(node, cst.Dict):
            return node
        if isinstance(node, cst.Name):
            return self.dict_literals.get(node.value)
        return None

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def canonical(self, node: cst.BaseExpression) -> str | None:
        return self.names.canonical(node)

    def call_key(self, call: cst.Call) -> str | None:
        """The canonical TF name a call calls, or the key of a recognised user optimizer class."""
        key = self.canonical(call.func)
        if key is None and isinstance(call.func, cst.Name):
            return self.user_optimizers.get(call.func.value)
        return key

    def is_mode_compare(self, node: cst.BaseExpression) -> tuple[bool, str] | None:
        """`mode == ModeKeys.X` / `mode != ModeKeys.X` -> (equal?, X-path)."""
        if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1 or self.mode is None:
            return None
        target = node.comparisons[0]
        left, right = node.left, target.comparator
        if isinstance(right, cst.Name) and right.value == self.mode:
            left, right = right, left
        if not (isinstance(left, cst.Name) and left.value == self.mode):
            return None
        key = self.canonical(right)
        if key not in MODE_ANY:
            return None
        if isinstance(target.operator, cst.Equal):
            return True, key
        if isinstance(target.operator, cst.NotEqual):
            return False, key
        return None

    def _mode_test(self, node: cst.BaseExpression) -> tuple[bool, str] | None:
        """`is_mode_compare`, or a name bound to one (BERT's `is_training`)."""
        if isinstance(node, cst.Name) and node.value in self.mode_aliases:
            return self.mode_aliases[node.value]
        return self.is_mode_compare(node)

    def _shares_variables(self, fn: cst.FunctionDef) -> bool:
        """The helper opens a `variable_scope(reuse=...)` (True or AUTO_REUSE) or calls
        `reuse_variables()`: TF1 shared its variables between calls."""
        found = False
        analyzer = self

        class Visit(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                key = analyzer.canonical(node.func)
                if key in VARIABLE_SCOPES:
                    reuse = next((a.value for a in node.args if a.keyword and a.keyword.value == "reuse"), None)
                    if reuse is not None and not (isinstance(reuse, cst.Name) and reuse.value in ("None", "False")):
                        found = True
                elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "reuse_variables":
                    found = True

        fn.body.visit(Visit())
        return found

    def _needs_inline(self, fn: cst.FunctionDef, seen: frozenset[str] = frozenset()) -> bool:
        """The helper builds part of the model: it creates layers or variables, opens scopes, makes
        the optimizer or the loss, or calls a helper that does. Plain tensor helpers (a `gelu`)
        stay calls."""
        found = False
        analyzer = self

        class Visit(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                key = analyzer.canonical(node.func)
                if key is not None and (key.startswith(_MODEL_BUILDING_PREFIXES) or key in _MODEL_BUILDING):
                    found = True
                elif isinstance(node.func, cst.Name) and node.func.value in analyzer.module_fns:
                    name = node.func.value
                    if name not in seen and analyzer._needs_inline(analyzer.module_fns[name], seen | {fn.name.value}):
                        found = True

        fn.body.visit(Visit())
        return found

    def _inline_helper(self, stmt: cst.SimpleStatementLine) -> tuple[str, list[cst.BaseStatement]] | None:
        if len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        if not (isinstance(small, cst.Expr) or (isinstance(small, cst.Assign) and len(small.targets) == 1)):
            return None
        call = small.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
            return None
        fn = self.module_fns.get(call.func.value)
        if fn is None or fn is self.fn or fn.name.value in self.foreign or not self._needs_inline(fn):
            return None
        name = fn.name.value
        if name in self._inlining:
            raise Unsupported(f"`{name}` calls itself")
        try:
            statements = inline(stmt, call, fn, self.fn)
        except InlineError as exc:
            raise Unsupported(f"the helper {exc} (it builds part of the model, so it would have to be inlined)") from None
        if name not in self.inlined:
            self.inlined.append(name)
        return name, statements

    def _rescoped(self, old: cst.SimpleStatementLine, new: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """`new` replaces `old`: it keeps `old`'s TF1 variable scope."""
        if new is not old and id(old) in self.scope_of:
            self.scope_of[id(new)] = self.scope_of[id(old)]
        return new

    def _extend_conditional(
        self, out: list[cst.SimpleStatementLine], inner: list[cst.SimpleStatementLine], test: cst.BaseExpression
    ) -> None:
        """Appends the flattened body of `if <test>:` (no else) to `out`, each line through
        `_conditional` against what `out` defined before it."""
        defined = {self.features} | {n for line in out for n in _defs_of(line)}
        out.extend(self._rescoped(line, self._conditional(line, test, defined)) for line in inner)

    def _conditional(self, stmt: cst.SimpleStatementLine, test: cst.BaseExpression, defined: set[str]) -> cst.SimpleStatementLine:
        """`if is_training: x = f(x)` -> `x = f(x) if is_training else x`: a training-only rewrite of
        a value the model already has (BERT's dropout) must not run in evaluation."""
        small = stmt.body[0] if len(stmt.body) == 1 else None
        if not (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value in defined
        ):
            return stmt
        target = small.targets[0].target
        value = cst.IfExp(test=test, body=small.value, orelse=cst.Name(target.value))
        return stmt.with_changes(body=[small.with_changes(value=value)])

    def _split_chained_minimize(self, stmt: cst.SimpleStatementLine) -> list[cst.BaseStatement] | None:
        """`train_op = tf.train.AdamOptimizer(0.02).minimize(loss, ...)` -> `optimizer = ...` and
        `train_op = optimizer.minimize(loss, ...)`, the two statements the analysis reads."""
        small = stmt.body[0] if len(stmt.body) == 1 else None
        value = getattr(small, "value", None)
        if not (
            isinstance(small, (cst.Assign, cst.Expr))
            and isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("minimize", "apply_gradients", "compute_gradients")
            and isinstance(value.func.value, cst.Call)
            and self.call_key(value.func.value) in OPTIMIZERS
        ):
            return None
        taken = names_in(self.fn)
        name = "optimizer"
        index = 1
        while name in taken:
            name = f"optimizer_{index}"
            index += 1
        make = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value.func.value)],
            leading_lines=stmt.leading_lines,
        )
        use = stmt.with_changes(
            body=[small.with_changes(value=value.with_changes(func=value.func.with_changes(value=cst.Name(name))))],
            leading_lines=[],
        )
        return [make, use]

    def _python_switch(self, stmt: cst.If, out: list[cst.SimpleStatementLine], scope: str) -> bool:
        """`if num_warmup_steps:` around assignments: a switch on a Python value (a TF1 graph
        tensor cannot be a Python `if` test). Names it rebinds become `x = new if test else x`;
        names it introduces are computed either way (unused when the switch is off). With an
        `else:` assigning the same names (BERT's `if 'is_real_example' in features: ... else:
        ...`), each becomes `x = a if test else b`."""
        test = stmt.test
        key_test = (  # `'key' in features`: a Python test on the features dict
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn))
            and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == self.features
            and not names_in(test.left) & {self.features, self.labels, self.mode}
        )
        if not key_test and names_in(test) & {self.features, self.labels, self.mode} - {None}:
            return False
        inner: list[cst.SimpleStatementLine] = []
        self._flatten(list(stmt.body.body), inner, scope)  # type: ignore[attr-defined]
        if not all(len(line.body) == 1 and isinstance(line.body[0], cst.Assign) for line in inner):
            return False
        if stmt.orelse is not None:
            if not isinstance(stmt.orelse, cst.Else):
                return False
            other: list[cst.SimpleStatementLine] = []
            self._flatten(list(stmt.orelse.body.body), other, scope)  # type: ignore[attr-defined]
            targets = [_single_target(line) for line in inner]
            if len(other) != len(inner) or None in targets or targets != [_single_target(line) for line in other]:
                return False
            for line, alt in zip(inner, other):
                small = line.body[0]
                value = cst.IfExp(test=test, body=small.value, orelse=alt.body[0].value)  # type: ignore[attr-defined]
                out.append(self._rescoped(line, line.with_changes(body=[small.with_changes(value=value)])))
            return True
        self._extend_conditional(out, inner, stmt.test)
        return True

    # -- statement flattening ---------------------------------------------------------------
    def _flatten(self, body: list[cst.BaseStatement], out: list[cst.SimpleStatementLine], scope: str = "") -> None:
        for stmt in body:
            start = len(out)
            with declining_at(stmt):
                self._flatten_statement(stmt, out, scope)
            for line in out[start:]:
                self._came_from(line, stmt)

    def _flatten_statement(self, stmt: cst.BaseStatement, out: list[cst.SimpleStatementLine], scope: str) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            if self.arg_scopes:
                stmt = stmt.visit(_ArgScopeDefaults(self))
            split = self._split_chained_minimize(stmt)
            if split is not None:
                self._flatten(split, out, scope)
                return
            inlined = self._inline_helper(stmt)
            if inlined is not None:
                self._inlining.append(inlined[0])
                self._flatten(inlined[1], out, scope)
                self._inlining.pop()
                return
            small = stmt.body[0] if len(stmt.body) == 1 else None
            if isinstance(small, cst.Del) and names_in(small.target) <= {self.params, self.labels, self.mode} - {None}:
                return  # `del params`: the TPU reference models' "unused argument"
            target = _single_target(stmt) if small is not None else None
            if target is not None:
                if isinstance(small.value, cst.Dict):  # type: ignore[union-attr]
                    self.dict_literals[target] = small.value  # type: ignore[union-attr]
                mode = self.is_mode_compare(small.value)  # type: ignore[union-attr]
                if mode is not None:
                    self.mode_aliases[target] = mode
            if scope:
                self.scope_of[id(stmt)] = scope
            out.append(stmt)
            return
        if isinstance(stmt, cst.FunctionDef):
            self.local_fns[stmt.name.value] = stmt  # e.g. a metric_fn defined inside model_fn
            return
        if _logging_only(stmt, self):
            return  # `for var in tvars: tf.logging.info(...)`: nothing the model computes
        if isinstance(stmt, cst.If):
            if self._skippable_tpu_branch(stmt):
                return
            if stmt.orelse is None and self._bert_init_block(stmt):
                return
            if isinstance(stmt.test, cst.Name) and stmt.test.value in ("True", "False"):
                # A helper inlined with a constant flag (`encode(ids, mask, False)`).
                if stmt.test.value == "True":
                    self._flatten(list(stmt.body.body), out, scope)  # type: ignore[attr-defined]
                elif isinstance(stmt.orelse, cst.If):
                    self._flatten([stmt.orelse], out, scope)
                elif stmt.orelse is not None:
                    self._flatten(list(stmt.orelse.body.body), out, scope)  # type: ignore[attr-defined]
                return
            mode = self._mode_test(stmt.test)
            if mode == (True, "estimator.ModeKeys.TRAIN") and stmt.orelse is None:
                inner_lines: list[cst.SimpleStatementLine] = []
                self._flatten(list(stmt.body.body), inner_lines, scope)  # type: ignore[attr-defined]
                self._extend_conditional(out, inner_lines, stmt.test)
                return
            if mode == (True, "estimator.ModeKeys.EVAL") and stmt.orelse is None:
                inner: list[cst.SimpleStatementLine] = []
                self._flatten(list(stmt.body.body), inner, scope)  # type: ignore[attr-defined]
                if not inner or not isinstance(inner[-1].body[0], cst.Return) or self.eval_return is not None:
                    raise Unsupported("a `mode == ModeKeys.EVAL` branch that does not end with `return <spec>`")
                self.eval_return = inner[-1].body[0]  # type: ignore[assignment]
                out.extend(inner[:-1])
                return
            if mode == (True, "estimator.ModeKeys.PREDICT") and stmt.orelse is None and self.predict_return is None:
                inner = []
                self._flatten(list(stmt.body.body), inner, scope)  # type: ignore[attr-defined]
                if not inner or not isinstance(inner[-1].body[0], cst.Return):
                    raise Unsupported("a `mode == ModeKeys.PREDICT` branch that does not end with `return <spec>`")
                self.predict_return = inner[-1].body[0]  # type: ignore[assignment]
                self.predict_stmts = inner[:-1]
                return
            if mode is None and self._init_checkpoint_block(stmt):
                return
            if mode is not None:
                op = "==" if mode[0] else "!="
                raise Unsupported(f"a `mode {op} ModeKeys.{mode[1].rsplit('.', 1)[-1]}` branch in model_fn")
            if self._python_switch(stmt, out, scope):
                return
            raise Unsupported("an `if` in model_fn that is not a TRAIN-mode or use_tpu switch")
        if isinstance(stmt, cst.With):
            scoped = self._arg_scope(stmt)
            if scoped is not None:
                self.arg_scopes.append(scoped)
                self._flatten(list(stmt.body.body), out, scope)  # type: ignore[attr-defined]
                self.arg_scopes.pop()
                return
            if self._update_ops_block(stmt):
                self._flatten(list(stmt.body.body), out, scope)  # type: ignore[attr-defined]
                return
            inner_scope = self._scope_block(stmt, scope)
            if inner_scope is not None:
                self._flatten(list(stmt.body.body), out, inner_scope)  # type: ignore[attr-defined]
                return
        raise Unsupported(f"`{type(stmt).__name__}` statement in model_fn")

    def _arg_scope(self, stmt: cst.With) -> tuple[set[str], list[cst.Arg]] | None:
        """`with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=..., ...):` ->
        (the functions, the defaults), applied to their calls inside the block."""
        if len(stmt.items) != 1 or stmt.items[0].asname is not None:
            return None
        call = stmt.items[0].item
        if not (isinstance(call, cst.Call) and (self.canonical(call.func) or "").endswith(".arg_scope")):
            return None
        if not call.args or call.args[0].keyword is not None or not isinstance(call.args[0].value, (cst.List, cst.Tuple)):
            raise Unsupported("`arg_scope` without a list of functions")
        keys = set()
        for element in call.args[0].value.elements:  # type: ignore[attr-defined]
            key = self.canonical(element.value)
            if key is None:
                raise Unsupported(f"`arg_scope` over `{self.code(element.value)}`, not a TF layer function")
            keys.add(key)
        defaults = [arg for arg in call.args[1:] if arg.keyword is not None and not arg.star]
        if len(defaults) != len(call.args) - 1:
            raise Unsupported("`arg_scope` with positional or ** arguments")
        return keys, defaults

    def _update_ops_block(self, stmt: cst.With) -> bool:
        """`with tf.control_dependencies(update_ops):` around minimize: Keras layers update their own
        statistics, so the block dissolves; its presence decides whether TF1 BatchNorm updated them."""
        if len(stmt.items) != 1 or stmt.items[0].asname is not None:
            return False
        call = stmt.items[0].item
        if not (isinstance(call, cst.Call) and self.canonical(call.func) == "control_dependencies" and len(call.args) == 1):
            return False
        arg = call.args[0].value
        if isinstance(arg, cst.Call) and self._is_update_ops(arg):
            self.update_ops_dependency = True
            return True
        if isinstance(arg, cst.Name):
            self.update_ops_dependency_names.add(arg.value)
            self.update_ops_dependency = True
            return True
        return False

    def _summary_line(self, call: cst.Call) -> cst.SimpleStatementLine:
        """A TF1 summary call -> its TF2 `tf.summary` statement."""
        key = self.canonical(call.func)
        func, positional, renames = SUMMARY_FNS[key]  # type: ignore[index]
        bound = _bind(call, positional)
        if bound is None:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        args = ", ".join(f"{renames.get(k, k)}={self.code(v)}" for k, v in bound.items() if k not in _SUMMARY_DROP)
        # The runtime's: TF2's `tf.summary.scalar` & co. need TensorBoard installed, TF1's did not.
        line = cst.parse_statement(f"{self.tfm}.summary.{func}({args})\n")
        return line.visit(_VariableRefs(self))  # type: ignore[return-value]

    def _host_call(self, plan: "Plan") -> tuple[list[cst.BaseStatement], set[str]]:
        """`host_call=(fn, tensors)` -> fn's statements with its parameters bound to the tensors,
        the writer/recording `with` blocks dissolved and the summary calls in TF2 form."""
        expr = self.host_call_expr
        if not (isinstance(expr, (cst.Tuple, cst.List)) and len(expr.elements) == 2 and isinstance(expr.elements[0].value, cst.Name)):
            raise Unsupported("`host_call` is not a `(host_call_fn, tensors)` tuple")
        fn_name = expr.elements[0].value.value  # type: ignore[attr-defined]
        fn = self.local_fns.get(fn_name) or next(
            (s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == fn_name), None
        )
        if fn is None:
            raise Unsupported(f"host_call function `{fn_name}` is not defined in this file")
        params = [p.name.value for p in fn.params.params]
        tensors = expr.elements[1].value
        if isinstance(tensors, (cst.List, cst.Tuple)):
            if len(tensors.elements) != len(params):
                raise Unsupported("host_call's parameters and tensors do not line up")
            bound = list(zip(params, (e.value for e in tensors.elements)))
        elif isinstance(tensors, cst.Dict):
            bound = []
            for element in tensors.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                    raise Unsupported("host_call tensors dict with non-literal keys")
                bound.append((str(element.key.evaluated_value), element.value))
        else:
            raise Unsupported("host_call tensors are not a list or dict")
        lines: list[cst.SimpleStatementLine] = []
        uses = set().union(set(), *(names_in(v) for _, v in bound))

        def walk(body: list[cst.BaseStatement]) -> None:
            for stmt in body:
                if isinstance(stmt, cst.With):
                    if not all(self._summary_context(item.item) for item in stmt.items):
                        raise Unsupported("a `with` block in host_call other than summary writer/recording setup")
                    walk(list(stmt.body.body))  # type: ignore[attr-defined]
                    continue
                if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                    raise Unsupported("a host_call statement other than assignments and summary calls")
                small = stmt.body[0]
                if isinstance(small, cst.Return):
                    value = small.value
                    if value is None or (isinstance(value, cst.Call) and self.canonical(value.func) in SUMMARY_RESULTS):
                        continue
                    raise Unsupported("host_call returns something other than the summary ops")
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.canonical(small.value.func) in SUMMARY_FNS:
                    lines.append(self._summary_line(small.value))
                    continue
                if isinstance(small, cst.Assign):
                    lines.append(stmt)
                    continue
                raise Unsupported(f"host_call statement `{self.code(small).strip()}` is not migrated")

        body = list(fn.body.body)  # type: ignore[attr-defined]
        if body and _is_docstring(body[0]):
            body = body[1:]
        walk(body)
        if fn_name not in self.local_fns:
            plan.absorbed_functions.append(fn_name)
        # Kept as a function (its parameters must not clobber the step's names), called with the tensors.
        definition = fn.with_changes(body=cst.IndentedBlock(body=lines or [cst.SimpleStatementLine([cst.Pass()])]), leading_lines=[])
        if isinstance(tensors, cst.Dict):
            call = f"{fn_name}(**{{{', '.join(f'{k!r}: {self.code(v)}' for k, v in bound)}}})"
        else:
            call = f"{fn_name}({', '.join(self.code(v) for _, v in bound)})"
        return [definition, cst.parse_statement(call + "\n")], uses  # type: ignore[list-item]

    def _summary_context(self, node: cst.BaseExpression) -> bool:
        """`create_file_writer(...).as_default()`, `always_record_summaries()`, `record_if(...)`."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "as_default":
            node = node.func.value
        return isinstance(node, cst.Call) and self.canonical(node.func) in SUMMARY_CONTEXTS

    def _summaries(
        self,
        plan: "Plan",
        stmts: list["_Stmt"],
        forward: set[str],
        label_names: set[str],
        global_steps: set[str],
        schedule_nodes: dict[int, cst.SimpleStatementLine],
    ) -> None:
        """Summary statements -> plan.summaries / plan.host_summaries, each preceded by what its
        values need: statements recomputed from the model output, hyper-parameters, and the
        learning rate or other values of the global step (`self.optimizer.iterations`)."""
        calls = [st for st in stmts if st.kind == "summary"]
        host: list[cst.SimpleStatementLine] = []
        host_uses: set[str] = set()
        if self.host_call_expr is not None:
            host, host_uses = self._host_call(plan)
        if not calls and not host:
            return
        available = set(label_names) | {plan.output}
        param = min(global_steps) if global_steps else "global_step"

        def block(lines: list[cst.SimpleStatementLine], uses: set[str]) -> list[cst.SimpleStatementLine]:
            defs = {n: st for st in stmts if st.kind in ("pure", "stepfn", "schedule") for n in st.defs}
            needed: set[int] = set()
            forward_uses = (uses & forward) - available
            todo = [n for n in uses if n in defs and n not in available]
            while todo:
                st = defs[todo.pop()]
                if id(st) in needed:
                    continue
                needed.add(id(st))
                for name in st.uses:
                    if name in defs and name not in available:
                        todo.append(name)
                    elif name in forward and name not in available:
                        forward_uses.add(name)
            after = {id(node) for node in self._after_output(plan, stmts, forward, forward_uses, "the summaries")}
            steps = _GlobalStepRewriter(self, param)
            out: list[cst.SimpleStatementLine] = []
            step_used = bool(uses & global_steps)
            for st in stmts:
                if id(st) in needed:
                    if st.kind == "schedule":
                        out.append(_called_with(schedule_nodes[id(st)], param))
                        step_used = True
                    else:
                        out.append(self._rewritten(st, steps))
                        step_used = step_used or st.kind == "stepfn" or bool(st.uses & global_steps)
                elif id(st.node) in after:
                    out.append(st.node)
            if step_used:
                out.insert(0, cst.parse_statement(f"{param} = self.optimizer.iterations\n"))  # type: ignore[arg-type]
            return [line.visit(_VariableRefs(self)) for line in out] + lines  # type: ignore[misc]

        # A summary of something the training step cannot recompute (a tf.metrics update op, a
        # gradient) is left out, and said so.
        elsewhere = {
            n for st in stmts if st.kind not in ("pure", "stepfn", "schedule", "forward", "dead", "loss") for n in st.defs
        } - global_steps
        kept = []
        for st in calls:
            try:
                if st.uses & elsewhere:
                    raise Unsupported(f"it reads {', '.join(sorted(st.uses & elsewhere))}")
                block([], st.uses)
                kept.append(st)
            except Unsupported as why:
                key = self.canonical(st.small.value.func)  # type: ignore[union-attr]
                plan.notes.append(
                    f"`tf.{key}(...)` in `{plan.fn_name}` was not migrated ({why}): write it with "
                    f"`{self.tfm}.summary` in the training step"
                )
        calls = kept
        if calls:
            uses = set().union(*(st.uses for st in calls))
            plan.summaries = block([self._summary_line(st.small.value) for st in calls], uses)  # type: ignore[union-attr]
        if host:
            plan.host_summaries = block(host, host_uses)

    def _init_from_checkpoint(
        self, call: cst.BaseExpression, condition: cst.BaseExpression | None, after_optimizer: bool = False
    ) -> bool:
        """Records `tf.train.init_from_checkpoint(ckpt, assignment_map)` (under `condition`)."""
        if not (isinstance(call, cst.Call) and self.canonical(call.func) == "train.init_from_checkpoint"):
            return False
        bound = _bind(call, ("ckpt_dir_or_file", "assignment_map"))
        if bound is None or set(bound) != {"ckpt_dir_or_file", "assignment_map"}:
            raise Unsupported("unexpected arguments to `tf.train.init_from_checkpoint`")
        uses = names_in(call) | (names_in(condition) if condition is not None else set())
        slots = ", optimizer_variables=True" if after_optimizer else ""
        self.init_checkpoints.append(
            (
                None if condition is None else self.code(condition),
                f"{self.code(bound['ckpt_dir_or_file'])}, {self.code(bound['assignment_map'])}{slots}",
                uses,
            )
        )
        return True

    def _bert_init_block(self, stmt: cst.If) -> bool:
        """BERT's block, under `if init_checkpoint:`:
            (assignment_map, initialized_variable_names) = get_assignment_map_from_checkpoint(tvars, init_checkpoint)
            if use_tpu:
              def tpu_scaffold():
                tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
                return tf.train.Scaffold()
              scaffold_fn = tpu_scaffold
            else:
              tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
        Either way the model's variables start from the checkpoint -> one recorded init_from_checkpoint
        (the map helper, one that lists the checkpoint's variables, becomes `tfm.MATCHING_VARIABLES`)."""
        body = list(stmt.body.body)  # type: ignore[attr-defined]
        matching: set[str] = set()
        calls: list[cst.Call] = []
        scaffold_var = None
        for inner in body:
            small = inner.body[0] if isinstance(inner, cst.SimpleStatementLine) and len(inner.body) == 1 else None
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and self._matching_map_helper(small.value):
                target = small.targets[0].target
                first = target.elements[0].value if isinstance(target, (cst.Tuple, cst.List)) else target
                if not isinstance(first, cst.Name):
                    return False
                matching.add(first.value)
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.canonical(small.value.func) == "train.init_from_checkpoint":
                calls.append(small.value)
            elif isinstance(inner, cst.If) and isinstance(inner.orelse, cst.Else):
                branches = [list(inner.body.body), list(inner.orelse.body.body)]  # type: ignore[attr-defined]
                found = []
                for branch in branches:
                    fns = {s.name.value: s for s in branch if isinstance(s, cst.FunctionDef)}
                    for line in branch:
                        small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
                        if isinstance(line, cst.FunctionDef):
                            continue
                        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.canonical(small.value.func) == "train.init_from_checkpoint":
                            found.append(small.value)
                        elif (
                            isinstance(small, cst.Assign)
                            and isinstance(small.value, cst.Name)
                            and small.value.value in fns
                            and isinstance(small.targets[0].target, cst.Name)
                        ):
                            fn_body = [s for s in fns[small.value.value].body.body if not _is_docstring(s)]  # type: ignore[attr-defined]
                            inits = [s.body[0].value for s in fn_body[:-1] if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr)]
                            if len(inits) != len(fn_body) - 1 or not all(
                                isinstance(c, cst.Call) and self.canonical(c.func) == "train.init_from_checkpoint" for c in inits
                            ):
                                return False
                            found.extend(inits)  # type: ignore[arg-type]
                            scaffold_var = small.targets[0].target.value
                        else:
                            return False
                if len(found) != 2 or not found[0].deep_equals(found[1]):
                    return False
                calls.append(found[0])
            else:
                return False
        if not calls:
            return False
        for call in calls:
            args = list(call.args)
            if len(args) == 2 and isinstance(args[1].value, cst.Name) and args[1].value.value in matching:
                call = call.with_changes(args=[args[0], args[1].with_changes(value=cst.parse_expression(f"{self.tfm}.MATCHING_VARIABLES"))])
            self._init_from_checkpoint(call, stmt.test)
        if scaffold_var is not None:
            self.scaffold_vars.add(scaffold_var)
        return True

    def _matching_map_helper(self, call: cst.Call) -> bool:
        """A module-level helper that builds an assignment map by listing the checkpoint's
        variables (`tf.train.list_variables`), BERT's `get_assignment_map_from_checkpoint`."""
        fn = self.module_fns.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if fn is None or not _any_call(fn, lambda node: self.canonical(node.func) == "train.list_variables"):
            return False
        if fn.name.value not in self.inlined:
            self.inlined.append(fn.name.value)  # absorbed: it goes when nothing else calls it
        return True

    def _init_checkpoint_block(self, stmt: cst.If) -> bool:
        """`if init_checkpoint: tf.train.init_from_checkpoint(...)` (nothing else in the block)."""
        if stmt.orelse is not None:
            return False
        lines = list(stmt.body.body)  # type: ignore[attr-defined]
        calls = []
        for line in lines:
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Expr)):
                return False
            calls.append(line.body[0].value)
        if not calls or not all(isinstance(c, cst.Call) and self.canonical(c.func) == "train.init_from_checkpoint" for c in calls):
            return False
        for call in calls:
            self._init_from_checkpoint(call, stmt.test)
        return True

    def _scaffold_fn(self, name: str, plan: "Plan") -> None:
        """`scaffold_fn=f` where `f` only calls init_from_checkpoint and returns `tf.train.Scaffold()`."""
        fn = self.local_fns.get(name)
        if fn is None:
            fn = next((s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
            if fn is None:
                raise Unsupported(f"scaffold_fn `{name}` is not defined in this file")
            plan.absorbed_functions.append(name)
        body = list(fn.body.body)  # type: ignore[attr-defined]
        if body and _is_docstring(body[0]):
            body = body[1:]
        ok = bool(body) and not fn.params.params
        for index, line in enumerate(body):
            small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
            if index == len(body) - 1 and isinstance(small, cst.Return):
                value = small.value
                ok = ok and value is not None and self._plain_scaffold(value)
            elif not (isinstance(small, cst.Expr) and self._init_from_checkpoint(small.value, None, after_optimizer=True)):
                ok = False
        if not ok:
            raise Unsupported(
                f"scaffold_fn `{name}` does more than `tf.train.init_from_checkpoint(...)` + `return tf.train.Scaffold()`"
            )

    # Scaffold arguments whose TF1 job TF2 does itself: variables and tables are initialized when
    # they are created, summaries are written by the runtime's writers, and there is no session to
    # wait for. Each is accepted with the values TF1 programs give it.
    _SCAFFOLD_INIT_OPS = frozenset({
        "global_variables_initializer", "local_variables_initializer", "tables_initializer",
        "initializers.global_variables", "initializers.local_variables", "initializers.tables_initializer",
        "variables_initializer", "report_uninitialized_variables", "no_op",
    })
    _SCAFFOLD_OPS = {
        "init_op": "init", "ready_op": "init", "ready_for_local_init_op": "init", "local_init_op": "init",
        "summary_op": "summary",
    }

    def _plain_scaffold(self, node: cst.BaseExpression) -> bool:
        """`tf.train.Scaffold(...)` whose arguments have no job in TF2 (see `_SCAFFOLD_OPS`) -> True
        (it can go); one that configures something TF2 would do differently -> Unsupported, naming it;
        anything else -> False."""
        if not (isinstance(node, cst.Call) and self.canonical(node.func) == "train.Scaffold"):
            return False
        for arg in node.args:
            name = arg.keyword.value if arg.keyword else None
            if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                continue
            kind = self._SCAFFOLD_OPS.get(name or "")
            if kind == "init" and self._init_ops_only(arg.value):
                continue
            if kind == "summary" and isinstance(arg.value, cst.Call) and self.canonical(arg.value.func) in (
                "summary.merge_all", "contrib.summary.all_summary_ops"
            ):
                continue
            if name == "saver":
                raise Unsupported(
                    "`tf.train.Scaffold(saver=...)`: TF2 checkpoints every trackable variable; set how many "
                    "checkpoints to keep with RunConfig(keep_checkpoint_max=...) instead of a Saver"
                )
            raise Unsupported(f"`tf.train.Scaffold({name or '...'}=...)` is not migrated (only TF1 initializer and summary ops are)")
        return True

    def _init_ops_only(self, node: cst.BaseExpression) -> bool:
        """An initializer op (or `tf.group(...)` of them) that TF2 has no need of."""
        if not isinstance(node, cst.Call):
            return False
        key = self.canonical(node.func)
        if key in ("group", "control_flow_ops.group"):
            return all(not arg.star and arg.keyword is None and self._init_ops_only(arg.value) for arg in node.args)
        return key in self._SCAFFOLD_INIT_OPS

    def _scope_block(self, stmt: cst.With, scope: str) -> str | None:
        """`with tf.variable_scope('name'):` -> the nested TF1 scope; `tf.name_scope` -> unchanged
        (it names ops, not variables); anything else -> None."""
        if len(stmt.items) != 1:
            return None
        call = stmt.items[0].item
        if not isinstance(call, cst.Call):
            return None
        key = self.canonical(call.func)
        if key in NAME_SCOPES:
            return scope
        if key not in VARIABLE_SCOPES:
            return None
        if stmt.items[0].asname is not None:
            raise Unsupported("`with tf.variable_scope(...) as scope:` (the scope object) is not migrated")
        bound = _bind(call, ("name_or_scope", "default_name", "values", "initializer", "regularizer", "caching_device",
                             "partitioner", "custom_getter", "reuse", "dtype", "use_resource", "constraint", "auxiliary_name_scope"))
        if bound is None:
            raise Unsupported("unexpected arguments to `tf.variable_scope`")
        for name in ("initializer", "regularizer", "custom_getter", "dtype", "constraint"):
            if name in bound:
                raise Unsupported(f"`tf.variable_scope({name}=...)` is not migrated (set it on each variable)")
        reuse = bound.get("reuse")
        if reuse is not None and not (isinstance(reuse, cst.Name) and reuse.value in ("None", "False")):
            raise Unsupported(
                "`tf.variable_scope(reuse=...)` in the model_fn's own body is not migrated yet (opened in a helper "
                "function the model_fn calls, it runs in a `tfm.tf1.VariableScopeLayer`)"
            )
        name = bound.get("name_or_scope")
        if isinstance(name, cst.SimpleString):
            leaf = str(name.evaluated_value)
        elif (name is None or (isinstance(name, cst.Name) and name.value == "None")) and isinstance(
            bound.get("default_name"), cst.SimpleString
        ):
            # A default name is made unique in its parent scope, as TF1 did.
            base = f"{scope}/{bound['default_name'].evaluated_value}" if scope else str(bound["default_name"].evaluated_value)  # type: ignore[union-attr]
            count = self.scope_counts.get(base, 0)
            self.scope_counts[base] = count + 1
            return base if count == 0 else f"{base}_{count}"
        else:
            raise Unsupported("`tf.variable_scope` with a name that is not a string literal")
        return f"{scope}/{leaf}" if scope else leaf

    def tf1_layer_name(self, base: str, scope: str) -> tuple[str, str]:
        """(model attribute, TF1 scope) for a layer TF1 named `base` inside `scope`: TF1 made layer
        names unique per enclosing variable scope (`dense`, `dense_1`, `block/dense`)."""
        full = f"{scope}/{base}" if scope else base
        count = self.scope_counts.get(full, 0)
        self.scope_counts[full] = count + 1
        tf1 = full if count == 0 else f"{full}_{count}"
        return self.unique_attr(_attr_name(tf1) or "layer"), tf1

    def unique_attr(self, base: str) -> str:
        count = self.layer_attrs.get(base, 0)
        self.layer_attrs[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def _variable(self, st: "_Stmt", call: cst.Call) -> tuple[str, list[str], set[str]]:
        """`w = tf.get_variable('w', shape, initializer=...)` -> (attribute, `add_weight` arguments,
        names the arguments read)."""
        if not isinstance(st.small, cst.Assign) or len(st.defs) != 1 or len(st.small.targets) != 1:
            raise Unsupported("`tf.get_variable` whose result is not assigned to one name")
        bound = _bind(call, GET_VARIABLE_PARAMS)
        if bound is None or not isinstance(bound.get("name"), cst.SimpleString):
            raise Unsupported("`tf.get_variable` without a string-literal name")
        if "custom_getter" in bound:
            raise Unsupported("`tf.get_variable(custom_getter=...)` is not migrated")
        scope = self.scope_of.get(id(st.node), "")
        leaf = str(bound.pop("name").evaluated_value)  # type: ignore[union-attr]
        tf1 = f"{scope}/{leaf}" if scope else leaf
        attr = self.unique_attr(_attr_name(tf1) or "weight")
        if attr != tf1:
            self.tf1_names[attr] = tf1
        args = [f"name={leaf!r}"]
        initializer = bound.pop("initializer", None)
        shape = bound.pop("shape", None)
        if shape is not None:
            args.append(f"shape={self.code(shape)}")
        if initializer is not None and not (isinstance(initializer, cst.Name) and initializer.value == "None"):
            text = self.code(initializer.visit(_InitializerRewriter(self)))
            if shape is None:
                # No shape: TF1 took the initial value (and its shape) from `initializer`.
                args.append(f"shape={self.tf}.convert_to_tensor({text}).shape")
                text = f"{self.tf}.keras.initializers.Constant({text})"
            args.append(f"initializer={text}")
        elif shape is None:
            raise Unsupported("`tf.get_variable` with neither a shape nor an initial value")
        for name, value in bound.items():
            if name in _GET_VARIABLE_DROP:
                continue
            args.append(f"{name}={self.code(value.visit(_InitializerRewriter(self)))}")
        uses = names_in(cst.parse_expression(f"f({', '.join(args)})")) - {"f"}
        self.variables[next(iter(st.defs))] = attr
        return attr, args, uses

    def _is_update_ops(self, node: cst.BaseExpression) -> bool:
        """`tf.get_collection(tf.GraphKeys.UPDATE_OPS)`."""
        return (
            isinstance(node, cst.Call)
            and self.canonical(node.func) == "get_collection"
            and len(node.args) >= 1
            and self.canonical(node.args[0].value) == "GraphKeys.UPDATE_OPS"
        )

    def _skippable_tpu_branch(self, stmt: cst.If) -> bool:
        """`if use_tpu: optimizer = CrossShardOptimizer(optimizer)`: the strategy does the all-reduce."""
        if stmt.orelse is not None:
            return False
        inner = list(stmt.body.body)  # type: ignore[attr-defined]
        if not inner:
            return False
        for line in inner:
            if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
                return False
            small = line.body[0]
            if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)):
                return False
            if self.canonical(small.value.func) != "tpu.CrossShardOptimizer":
                return False
        return True

    def _spec_chain(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """BERT's ending: `output_spec = None`, then `if mode == TRAIN: ... output_spec = Spec(...)`
        / `elif mode == EVAL: ...` / `else: ...`, then `return output_spec` -> the early-return
        form the flattening reads (EVAL and PREDICT branches returning their spec, the TRAIN
        branch's statements last, ending with its `return`)."""
        if len(body) < 2:
            return body
        ret = body[-1]
        chain = body[-2]
        if not (
            isinstance(ret, cst.SimpleStatementLine)
            and isinstance(ret.body[0], cst.Return)
            and isinstance(ret.body[0].value, cst.Name)
            and isinstance(chain, cst.If)
        ):
            return body
        var = ret.body[0].value.value
        branches: list[tuple[str | None, cst.BaseExpression | None, list[cst.BaseStatement], cst.CSTNode]] = []
        node: cst.If | cst.Else | None = chain
        template: cst.BaseExpression | None = None
        while node is not None:
            if isinstance(node, cst.Else):
                branches.append((None, None, list(node.body.body), chain))  # type: ignore[attr-defined]
                break
            mode = self.is_mode_compare(node.test)
            if mode is None or not mode[0]:
                return body
            template = node.test
            branches.append((mode[1], node.test, list(node.body.body), node))  # type: ignore[attr-defined]
            node = node.orelse  # type: ignore[assignment]
        keys = [key for key, _, _, _ in branches if key is not None]
        rest = [k for k in ("estimator.ModeKeys.TRAIN", "estimator.ModeKeys.EVAL", "estimator.ModeKeys.PREDICT") if k not in keys]
        if branches[-1][0] is None:
            if len(rest) != 1:
                return body
            comparator = template.comparisons[0].comparator  # type: ignore[union-attr]
            if not isinstance(comparator, cst.Attribute):
                return body
            test = template.with_changes(  # type: ignore[union-attr]
                comparisons=[template.comparisons[0].with_changes(comparator=comparator.with_changes(attr=cst.Name(rest[0].rsplit(".", 1)[1])))]  # type: ignore[union-attr]
            )
            branches[-1] = (rest[0], test, branches[-1][2], chain)
        early: list[cst.BaseStatement] = []
        train: list[cst.BaseStatement] = []
        for key, test, inner, branch in branches:
            last = inner[-1] if inner else None
            small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
            if not (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == var
            ):
                return body
            returned = last.with_changes(body=[cst.Return(value=small.value)])  # type: ignore[union-attr]
            self._came_from(returned, last)  # type: ignore[arg-type]
            if key == "estimator.ModeKeys.TRAIN":
                train = inner[:-1] + [returned]
            else:
                early.append(cst.If(test=test, body=cst.IndentedBlock(body=inner[:-1] + [returned])))  # type: ignore[arg-type]
                self._came_from(early[-1], branch)
        if not train:
            return body
        before = [
            stmt
            for stmt in body[:-2]
            if not (  # `output_spec = None`
                isinstance(stmt, cst.SimpleStatementLine)
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign)
                and isinstance(stmt.body[0].value, cst.Name)
                and stmt.body[0].value.value == "None"
                and any(isinstance(t.target, cst.Name) and t.target.value == var for t in stmt.body[0].targets)
            )
        ]
        return before + early + train

    # -- main entry -------------------------------------------------------------------------
    def analyze(self) -> Plan:
        body = list(self.fn.body.body)  # type: ignore[attr-defined]
        plan = Plan(
            fn_name=self.fn.name.value,
            class_name=camel(self.fn.name.value),
            params_name=self.params,
            features_name=self.features,
            labels_name=self.labels or "labels",
        )
        if body and _is_docstring(body[0]):
            plan.docstring = body[0].body[0].value.evaluated_value  # type: ignore[attr-defined]
            body = body[1:]
        body = self._spec_chain(body)
        lines: list[cst.SimpleStatementLine] = []
        self._flatten(body, lines)
        plan.absorbed_functions.extend(self.inlined)
        if not lines or not isinstance(lines[-1].body[0], cst.Return):
            raise Unsupported("model_fn does not end with `return <EstimatorSpec>`", lines[-1] if lines else None)
        stmts: list[_Stmt] = []
        for line in lines[:-1]:
            if len(line.body) != 1:
                raise Unsupported("several statements on one line in model_fn", line)
            small = line.body[0]
            if isinstance(small, cst.Return):
                raise Unsupported("more than one `return` in model_fn", line)
            if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr)):
                raise Unsupported(f"`{type(small).__name__}` statement in model_fn", line)
            value = getattr(small, "value", None)
            uses = names_in(value) if value is not None else set()
            if isinstance(small, cst.AugAssign):
                uses |= names_in(small.target)
            stmts.append(_Stmt(line, small, _assigned(small), uses))
        with declining_at(lines[-1]):
            spec = self._spec(lines[-1].body[0])  # type: ignore[arg-type]
        if self.eval_return is not None:
            eval_spec = self._spec(self.eval_return)
            if eval_spec.get("loss") != spec["loss"]:
                raise Unsupported("the EVAL branch reports a different loss")
        metric_names: set[str] = set()
        if isinstance(self.eval_metrics_expr, cst.Name):
            metric_names.add(self.eval_metrics_expr.value)
            for st in stmts:
                if st.defs & metric_names:
                    st.kind = "drop"
                    if not isinstance(st.small, cst.Assign):
                        raise Unsupported("`eval_metrics` is not assigned a `(metric_fn, tensors)` tuple", st.line)
                    self.eval_metrics_expr = st.small.value
        if self.scaffold_fn is not None:
            self._scaffold_fn(self.scaffold_fn, plan)
        loss_name = spec["loss"]
        train_op = spec.get("train_op")
        plan.loss_name = loss_name
        if self.predict_return is not None and isinstance(self.predict_return.value, cst.Call):
            # The PREDICT spec's `prediction_hooks=`: a `prediction_hooks()` method, as for training.
            for arg in self.predict_return.value.args:
                if arg.keyword is not None and arg.keyword.value == "prediction_hooks" and not (
                    isinstance(arg.value, cst.Name) and arg.value.value == "None"
                ):
                    self.hook_exprs.setdefault("prediction_hooks", []).append(arg.value)
        if self.hook_exprs:
            from .estimator_surface import spec_hooks

            spec_hooks(self, plan, stmts, self.hook_exprs, loss_name)

        # Optimizer, CrossShardOptimizer, minimize, global step.
        optimizer_names: set[str] = set()
        optimizer_stmt: _Stmt | None = None
        global_step_names: set[str] = set()
        schedule_nodes: dict[int, cst.SimpleStatementLine] = {}
        self.schedule_names: set[str] = set()
        update_ops_defined: set[str] = set()
        weights: list[tuple[str, list[str], set[str]]] = []
        minimized = False  # TF1 made the optimizer's slots at `minimize`
        for st in stmts:
            with declining_at(st.line):
                value = getattr(st.small, "value", None)
                if isinstance(value, cst.Call):
                    key = self.call_key(value)
                    if isinstance(st.small, cst.Expr) and key in SUMMARY_FNS:
                        st.kind = "summary"
                        continue
                    if isinstance(st.small, cst.Expr) and self._init_from_checkpoint(value, None, after_optimizer=minimized):
                        st.kind = "drop"
                        continue
                    if key == "get_variable":
                        st.kind = "variable"
                        weights.append(self._variable(st, value))
                        continue
                    if key in METRICS and isinstance(st.small, cst.Assign):
                        st.kind = "metricop"
                        continue
                    if self._is_update_ops(value):
                        st.kind = "drop"
                        update_ops_defined = st.defs
                        continue
                    if key in SCHEDULES and isinstance(st.small, cst.Assign):
                        st.kind = "schedule"
                        schedule_nodes[id(st)] = self._schedule(st, key, value, global_step_names)
                        self.schedule_names |= st.defs
                        st.uses -= global_step_names
                    elif key in OPTIMIZERS:
                        if optimizer_stmt is not None:
                            raise Unsupported("more than one optimizer in model_fn")
                        optimizer_stmt, st.kind = st, "optimizer"
                        optimizer_names |= st.defs
                    elif key is not None and key.startswith("train.") and key.endswith("Optimizer"):
                        raise Unsupported(f"`tf.{key}` (its TF1-faithful Keras form comes with the fidelity work)")
                    elif key == "tpu.CrossShardOptimizer":
                        st.kind = "drop"
                        optimizer_names |= st.defs
                    elif key in GLOBAL_STEP_FNS:
                        st.kind = "drop"
                        global_step_names |= st.defs
                    elif (
                        isinstance(value.func, cst.Attribute)
                        and value.func.attr.value == "minimize"
                        and isinstance(value.func.value, cst.Name)
                        and value.func.value.value in optimizer_names
                    ):
                        self._check_minimize(value, loss_name, global_step_names)
                        st.kind = "drop"
                        minimized = True
        if optimizer_stmt is None:
            raise Unsupported("no `tf.train.*Optimizer(...).minimize(loss)` found in model_fn")
        deferred = self._defer_shaped_weights(stmts, weights)
        self._hand_step_increment(stmts, global_step_names, self.call_key(optimizer_stmt.small.value))  # type: ignore[union-attr,arg-type]
        self._gradient_code(stmts, plan, optimizer_names, global_step_names, loss_name)
        metric_ops = {name for st in stmts if st.kind == "metricop" for name in st.defs}
        for st in stmts:
            value = getattr(st.small, "value", None)
            if not st.kind and isinstance(value, cst.Dict) and value.elements and all(
                self._is_metric_value(element, metric_ops) for element in value.elements
            ):
                st.kind = "metricdict"
        if self.update_ops_dependency_names - update_ops_defined:
            raise Unsupported("`tf.control_dependencies(...)` on something other than the UPDATE_OPS collection")
        if train_op is not None and not any(train_op in st.defs for st in stmts if st.kind in ("drop", "grad")):
            raise Unsupported("train_op is not `optimizer.minimize(loss, ...)` or `optimizer.apply_gradients(...)`")
        # A learning rate computed by hand from the global step (a linear warmup blend over a
        # decay): those statements become a function of the step, called by the optimizer.
        step_names = set(global_step_names)
        for st in stmts:
            if (
                st.kind == ""
                and isinstance(st.small, (cst.Assign, cst.AugAssign, cst.AnnAssign))
                and not st.uses & optimizer_names
                and (st.uses & (step_names | self.schedule_names) or _calls(st.small, self, GLOBAL_STEP_FNS))
            ):
                st.kind = "stepfn"
                step_names |= st.defs
        for st in stmts:
            if st.kind == "" and st.uses & (step_names | optimizer_names):
                raise Unsupported("the optimizer or global step is used beyond `minimize`/`apply_gradients`", st.line)

        self._loss_collection(stmts)

        # Data flow: forward (features), loss (labels), pure.
        forward: set[str] = {self.features} | set(self.variables)
        label_names: set[str] = {self.labels} if self.labels else set()
        mode_names: set[str] = {self.mode} if self.mode else set()
        if not (self.labels and any(self.labels in st.uses for st in stmts)):
            for st in self._labels_from_features(stmts):
                st.kind = "labelsrc"
                label_names |= st.defs
                plan.labels_from_features = True
        for st in stmts:
            if st.kind:
                continue
            if isinstance(st.small, cst.Expr):
                value = st.small.value
                key = self.canonical(value.func) if isinstance(value, cst.Call) else None
                if key is not None and key.startswith(("summary.", "contrib.summary.")):
                    # Summaries change no number; they are left out, and said so.
                    st.kind = "drop"
                    plan.notes.append(
                        f"`tf.{key}(...)` in `{plan.fn_name}` was not migrated: write it with TF2's tf.summary "
                        "in the training step"
                    )
                    continue
                if isinstance(value, cst.Call) and _is_logging_call(value, self):
                    st.kind = "drop"  # `tf.logging.info(...)`: a message, no number
                    continue
                raise Unsupported(f"expression statement `{self.code(st.small).strip()}` in model_fn", st.line)
            if st.uses & label_names:
                st.kind = "loss"
                label_names |= st.defs
            elif st.uses & (forward | mode_names):
                st.kind = "forward"
                forward |= st.defs
            else:
                st.kind = "pure"
                if _creates_layer(st.small, self):
                    value = getattr(st.small, "value", None)
                    key = self.canonical(value.func) if isinstance(value, cst.Call) else None
                    is_class = key in LAYER_CLASSES or (key or "").startswith("keras.layers.")
                    if not (isinstance(st.small, cst.Assign) and len(st.defs) == 1 and is_class):
                        raise Unsupported("a layer object is created apart from its call; build it once in the model", st.line)
                    # `head = tf.keras.layers.Dense(2)` ... `head(net)`: one model attribute, built once
                    # (called twice, it shares its weights, as in TF1).
                    st.kind = "layerobj"
                    self.layer_objects[next(iter(st.defs))] = value  # type: ignore[assignment]
        for st in stmts:
            if st.kind not in ("forward", "layerobj") and st.uses & set(self.layer_objects):
                raise Unsupported("a layer object is used outside the forward pass", st.line)
        if loss_name not in label_names:
            raise Unsupported("the loss does not depend on labels")

        self._foreign_outside_forward(stmts, plan)

        # The model output: forward names the loss statements read.
        loss_stmts = [st for st in stmts if st.kind == "loss"]
        outputs = sorted(set().union(*(st.uses for st in loss_stmts)) & (forward - {self.features} - set(self.variables)))
        if len(outputs) != 1:
            raise Unsupported(f"the loss reads {len(outputs)} model outputs; one is supported")
        plan.output = self._narrow_output(outputs[0], stmts, forward)
        if self.eval_metrics_expr is not None:
            self._metrics(plan, stmts, forward)
        if self.predict_return is not None:
            self._predictions(plan, stmts, forward)
        if self.eval_metric_ops_expr is not None:
            if self.eval_metrics_expr is not None:
                raise Unsupported("both `eval_metrics` and `eval_metric_ops`")
            for st in stmts:
                if st.kind == "metricdict":
                    st.kind = ""
            self._metric_ops(plan, stmts, forward)
        elif any(st.kind == "metricop" for st in stmts):
            raise Unsupported("tf.metrics.* ops that no `eval_metric_ops` reports")

        pure = {name: st for st in stmts if st.kind == "pure" for name in st.defs}

        def needed_pure(uses: set[str]) -> list[_Stmt]:
            seen: set[int] = set()
            todo = [n for n in uses if n in pure]
            while todo:
                name = todo.pop()
                st = pure[name]
                if id(st) in seen:
                    continue
                seen.add(id(st))
                todo.extend(n for n in st.uses if n in pure)
            return [st for st in stmts if id(st) in seen]

        # Forward pass -> call(), hoisting layers.
        rewriter = _ForwardRewriter(self)
        call_lines: list[cst.SimpleStatementLine] = []
        forward_stmts = [st for st in stmts if st.kind == "forward"]
        # Forward statements the output does not need and that build no layer (say, probabilities
        # only the PREDICT branch reads) stay out of call(); predict_step recomputes what it needs.
        live: set[str] = {plan.output}
        for st in reversed(forward_stmts):
            if st.defs & live or _creates_layer(st.small, self):
                live |= st.uses
            else:
                st.kind = "dead"
        forward_stmts = [st for st in forward_stmts if st.kind == "forward"]
        scoped_lines = self._scoped(plan, stmts, forward_stmts)
        layer_uses: set[str] = set()
        for st in stmts:
            if st.kind == "forward" and id(st) in scoped_lines:
                if scoped_lines[id(st)] is not None:
                    call_lines.append(scoped_lines[id(st)])
            elif st.kind == "forward":
                rewriter.scope = self.scope_of.get(id(st.node), "")
                call_lines.append(self._rewritten(st, rewriter))
            elif st.kind == "pure" and any(st in needed_pure(f.uses) for f in forward_stmts):
                call_lines.append(st.node)
        if rewriter.pending_ctors:
            raise Unsupported("a layer object is created apart from its call; build it once in the model")
        for layer in rewriter.layers:
            layer_uses |= layer[1]
        if rewriter.uses_labels:
            raise Unsupported("the forward pass reads labels")
        bad = layer_uses & (forward | label_names)
        if bad:
            raise Unsupported(f"layer arguments depend on tensors ({', '.join(sorted(bad))}); cannot build the layer once")
        plan.layers = [Layer(attr, func, args) for attr, _, (func, args) in rewriter.layers]
        plan.weights = [(attr, args) for attr, args, _ in weights]
        for attr, method, tensor, shape_lines, args, uses in deferred:
            shape_uses = set().union(*(names_in(line) for line in shape_lines))
            prelude = [x.node for x in needed_pure((uses | shape_uses) - {tensor})]
            plan.deferred_weights.append((attr, method, tensor, prelude + shape_lines, args))
            plan.deferred_use_params = plan.deferred_use_params or self.params in uses | shape_uses | set().union(
                set(), *(names_in(line) for line in prelude)
            )
        weight_uses = set().union(set(), *(uses for _, _, uses in weights))
        bad = weight_uses & (forward | label_names)
        if bad:
            raise Unsupported(f"`tf.get_variable` arguments depend on tensors ({', '.join(sorted(bad))})")
        plan.tf1_names = dict(self.tf1_names)
        init_rewriter = _InitializerRewriter(self)
        plan.init_stmts = [self._rewritten(st, init_rewriter) for st in needed_pure(layer_uses)]
        weight_stmts = needed_pure(weight_uses)
        plan.weight_stmts = [self._rewritten(st, init_rewriter) for st in weight_stmts]
        plan.weights_use_params = self.params in weight_uses | set().union(set(), *(st.uses for st in weight_stmts))
        call_lines = _drop_folded_locals(call_lines, {plan.output})
        plan.call_stmts = call_lines
        call_names = set().union(set(), *(names_in(node) for node in call_lines))
        plan.call_uses_params = self.params in call_names
        if self.mode and self.mode in call_names:
            raise Unsupported("the forward pass uses `mode` beyond `mode == ModeKeys.TRAIN`")

        # Regularizers count only if the TF1 loss read them (tf.losses.get_regularization_loss());
        # Keras always adds them, so unread ones are dropped to keep TF1's numbers.
        reads_regularization = any(_calls(st.small, self, REGULARIZATION_LOSS_FNS) for st in loss_stmts)
        plan.scoped_regularization = reads_regularization
        if not reads_regularization:
            for layer in plan.layers:
                layer.args = [a for a in layer.args if not re.match(r"\w*_regularizer=", a)]
            plan.weights = [(attr, [a for a in args if not a.startswith("regularizer=")]) for attr, args in plan.weights]

        # Summaries (the model_fn's and a TPU host_call's), written from the training step.
        self._summaries(plan, stmts, forward, label_names, global_step_names, schedule_nodes)

        # Loss.
        loss_uses = set().union(*(s.uses for s in loss_stmts))
        model_side: list[cst.SimpleStatementLine] = []
        if plan.labels_from_features or loss_uses & forward - {plan.output, self.features}:
            model_side = self._model_side(plan, stmts, forward, loss_uses, "the loss", kinds=("labelsrc", "pure"))
        keras_loss = None if (plan.summaries or plan.host_summaries) else self._keras_loss(loss_stmts, plan.output, loss_name)
        loss_pure = needed_pure(loss_uses)
        if keras_loss is not None and not loss_pure and not model_side:
            plan.keras_loss = keras_loss
        else:
            loss_rewriter = _LossRewriter(self)
            lines_out = [st.node for st in loss_pure] if not model_side else model_side
            for st in loss_stmts:
                loss_rewriter.collection = self.loss_collection_at.get(id(st.node), [])
                lines_out.append(self._rewritten(st, loss_rewriter))
            plan.loss_stmts = lines_out
            plan.keras_loss = None
            plan.loss_uses_params = self.params in set().union(*(s.uses for s in loss_stmts + loss_pure))

        # Optimizer.
        schedules = [st for st in stmts if st.kind in ("schedule", "stepfn")]
        wanted = names_in(optimizer_stmt.small.value)  # type: ignore[union-attr]
        in_schedule: list[_Stmt] = []
        for st in reversed(schedules):
            if st.defs & wanted:
                wanted |= st.uses
                in_schedule.insert(0, st)
        init_uses = set().union(set(), *(uses for _, _, uses in self.init_checkpoints))
        bad = init_uses & ((forward - {self.features}) | label_names | {self.features})
        if bad:
            raise Unsupported(f"init_from_checkpoint reads tensors of the model ({', '.join(sorted(bad))})")
        init_prelude = {id(st) for st in needed_pure(init_uses)}
        plan.init_checkpoints = [(condition, args) for condition, args, _ in self.init_checkpoints]
        prelude = {id(st) for st in needed_pure(wanted)} | init_prelude
        if any(st.kind == "stepfn" for st in in_schedule):
            lr = _bind(optimizer_stmt.small.value, OPTIMIZERS[self.call_key(optimizer_stmt.small.value)][1]).get("learning_rate")  # type: ignore[union-attr,index]
            others = names_in(optimizer_stmt.small.value) - ({lr.value} if isinstance(lr, cst.Name) else set())  # type: ignore[union-attr]
            if not isinstance(lr, cst.Name) or others & step_names:
                raise Unsupported("an optimizer argument other than the learning rate is computed from the global step")
            param = min(global_step_names) if global_step_names else "global_step"
            plan.step_fn = f"{lr.value}_fn"
            plan.step_fn_param = param
            plan.step_fn_result = lr.value
            # The function computes everything the rate needs (pure values included: TF1 code
            # rebinds names, `learning_rate = tf.train.polynomial_decay(learning_rate, ...)`).
            steps = _GlobalStepRewriter(self, param)
            inside = {id(st) for st in in_schedule} | {id(st) for st in needed_pure(set().union(*(st.uses for st in in_schedule)))}
            plan.step_fn_stmts = [
                _called_with(schedule_nodes[id(st)], param) if st.kind == "schedule" else self._rewritten(st, steps)
                for st in stmts
                if id(st) in inside
            ]
            plan.optimizer_prelude = [st.node for st in stmts if id(st) in {id(x) for x in needed_pure(others)} | init_prelude]
            self.step_fn = plan.step_fn
        else:
            plan.optimizer_prelude = [
                schedule_nodes[id(st)] if st.kind == "schedule" else st.node
                for st in stmts
                if id(st) in prelude or (st.kind == "schedule" and st.defs & wanted)
            ]
        plan.optimizer = self._keras_optimizer(optimizer_stmt.small.value)  # type: ignore[union-attr]
        func = optimizer_stmt.small.value.func  # type: ignore[union-attr]
        if isinstance(func, cst.Name) and func.value in self.user_optimizers:
            plan.absorbed_functions.append(func.value)  # the class goes when nothing else uses it
        if plan.gradient_stmts:
            uses = self.gradient_uses - {loss_name} - optimizer_names - global_step_names
            bad = uses & ((forward - {self.features}) | label_names | {self.features})
            if bad:
                raise Unsupported(f"the gradient code reads tensors of the model ({', '.join(sorted(bad))})")
            gradient_pure = needed_pure(uses)
            plan.gradient_prelude = [st.node for st in gradient_pure]
            plan.gradient_uses_params = self.params in uses | set().union(set(), *(st.uses for st in gradient_pure))
        for st in stmts:
            if st.kind == "pure" and st.uses & mode_names:
                raise Unsupported("a statement uses `mode`", st.line)
        return plan

    def _foreign_outside_forward(self, stmts: list["_Stmt"], plan: "Plan") -> None:
        """A call into code run under a variable store (`_scoped`) belongs to the forward pass, and
        the object a class of it returns is read there only. A function of another module called
        on values that are not the model's (a "pure" statement, kept as written) is said so: if
        its TF1 code makes variables, they would not be the model's weights."""
        for st in stmts:
            if st.kind == "pure":
                for call in _foreign_calls(st.small, self.foreign):
                    parts = (dotted(call.func) or "").split(".")[1:]
                    if any(part[:1].isupper() for part in parts):
                        continue  # a class or its methods (`modeling.BertConfig.from_json_file`): a config
                    plan.notes.append(
                        f"`{self.code(call.func)}(...)` in `{plan.fn_name}` is kept as written, outside the model's "
                        "variable store: if the TF1 code behind it creates variables (tf.get_variable, tf.layers), "
                        "call it on the features so it becomes part of the forward pass"
                    )
            if st.kind not in ("forward", "pure", "drop") and _foreign_calls(st.small, self.foreign):
                call = _foreign_calls(st.small, self.foreign)[0]
                raise Unsupported(
                    f"`{self.code(call.func)}(...)` outside the forward pass: the TF1 code behind it is not migrated", st.line
                )
            if st.kind != "forward" or not isinstance(st.small, cst.Assign) or len(st.defs) != 1:
                continue
            value = st.small.value
            if isinstance(value, cst.Call) and _foreign_calls(value, self.foreign) and (
                (dotted(value.func) or "").rsplit(".", 1)[-1][:1].isupper()
            ):
                for other in stmts:
                    if other.kind not in ("forward", "dead") and other.uses & st.defs:
                        raise Unsupported(
                            f"`{self.code(value.func)}(...)`: the object it returns is used outside the forward pass "
                            "(only the outputs it computes can be)",
                            other.line,
                        )

    def _scoped(
        self, plan: "Plan", stmts: list["_Stmt"], forward_stmts: list["_Stmt"]
    ) -> dict[int, cst.SimpleStatementLine | None]:
        """Forward statements that call into another module (`model = modeling.BertModel(...)`),
        with those that use the object such a call returns (`model.get_pooled_output()`), become
        one `tfm.tf1.VariableScopeLayer` made in `__init__` and called in `call()`: the TF1 code
        behind the call makes its variables once, as the layer's weights, under their TF1 names.
        Returns statement -> the call line that replaces the group's first statement (None for
        the others)."""
        if not self.foreign:
            return {}
        out: dict[int, cst.SimpleStatementLine | None] = {}
        seeds = [st for st in forward_stmts if _foreign_calls(st.small, self.foreign)]
        if not seeds:
            return {}
        local = {self.features, self.params} | {n for n in (self.labels, self.mode) if n} | {n for st in stmts for n in st.defs}
        position = {id(st): i for i, st in enumerate(stmts)}
        objects: set[str] = set()
        group: list[_Stmt] = []
        for st in forward_stmts:
            if st in seeds or st.uses & objects:
                group.append(st)
                value = st.small.value if isinstance(st.small, cst.Assign) and len(st.defs) == 1 else None
                if isinstance(value, cst.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1][:1].isupper():
                    objects |= st.defs  # `model = modeling.BertModel(...)`: an object (a function gives tensors)
        members = {id(st) for st in group}
        defs = set().union(*(st.defs for st in group))
        uses = set().union(*(st.uses for st in group))
        first = group[0]
        described = self.code(_foreign_calls(first.small, self.foreign)[0].func)
        inputs = sorted((uses & local) - defs)
        for bad in (self.labels, self.mode):
            if bad and bad in inputs:
                raise Unsupported(f"`{described}(...)` reads `{bad}`: not migrated", first.line)
        later = {
            name
            for st in stmts
            if id(st) not in members
            and st.kind != "dead"
            for name in st.uses
        } | {plan.output}
        for st in stmts:
            if id(st) in members or not st.defs & set(inputs):
                continue
            if position[id(st)] > position[id(first)]:
                raise Unsupported(
                    f"`{described}(...)`: its inputs are computed after it ({', '.join(sorted(st.defs & set(inputs)))})", st.line
                )
        if objects & later:
            raise Unsupported(f"`{described}(...)`: the object it returns is used beyond reading its outputs", first.line)
        outputs = sorted((defs - objects) & later)
        if not outputs:
            raise Unsupported(f"`{described}(...)`: nothing the model computes reads its result", first.line)
        base = _snake(described.rsplit(".", 1)[-1]) or "tf1_model"
        attr = self.unique_attr(base)
        method = f"_{attr}_tf1"
        rewriter = _ScopedRewriter(self)
        body = [self._rewritten(st, rewriter) for st in group]
        params = inputs + (["training"] if rewriter.training else [])
        plan.scoped.append((attr, method, params, body, outputs))
        target = ", ".join(outputs)
        args = ", ".join(f"{name}={name}" for name in inputs)
        if rewriter.training:
            args = ", ".join(filter(None, [args, "training=training"]))
        out[id(first)] = cst.parse_statement(f"{target} = self.{attr}({args})\n")  # type: ignore[assignment]
        for st in group[1:]:
            out[id(st)] = None
        return out

    def _loss_collection(self, stmts: list["_Stmt"]) -> None:
        """TF1 loss functions added their result to the LOSSES collection, which
        `tf.losses.get_total_loss()`/`get_losses()` read back: record, in order, the names holding
        those results (a bare `tf.losses.x(...)` statement gets a name), per reading statement."""
        collection: list[str] = []
        for st in stmts:
            if st.kind:
                continue
            value = getattr(st.small, "value", None)
            key = self.canonical(value.func) if isinstance(value, cst.Call) else None
            collected = key in TF1_LOSS_FNS and not any(
                a.keyword is not None and a.keyword.value == "loss_collection" for a in value.args  # type: ignore[union-attr]
            )
            if isinstance(st.small, cst.Expr) and key == "losses.add_loss":
                if len(value.args) < 1 or not isinstance(value.args[0].value, cst.Name):  # type: ignore[union-attr]
                    raise Unsupported("`tf.losses.add_loss` of an expression (assign it to a name first)")
                collection.append(value.args[0].value.value)  # type: ignore[union-attr]
                st.kind = "drop"
                continue
            if isinstance(st.small, cst.Expr) and collected:
                name = self.unique_attr(key.rsplit(".", 1)[-1] + "_loss")  # type: ignore[union-attr]
                st.small = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)  # type: ignore[arg-type]
                st.node = st.node.with_changes(body=[st.small])
                st.defs = {name}
            if collected and isinstance(st.small, cst.Assign) and len(st.defs) == 1:
                collection.extend(st.defs)
            if _calls(st.small, self, LOSS_COLLECTION_READERS):
                st.uses |= set(collection)
                self.loss_collection_at[id(st.node)] = list(collection)

    def _labels_from_features(self, stmts: list["_Stmt"]) -> list["_Stmt"]:
        """When model_fn never reads `labels`: the statements that read labels out of the features
        (`label_ids = features['label_ids']`, `is_real_example = tf.cast(features[...], ...)`):
        computed from the features alone, and feeding no layer or variable of the network."""
        defs_at: dict[str, list[_Stmt]] = {}
        for st in stmts:
            for name in st.defs:
                defs_at.setdefault(name, []).append(st)
        network = {id(st) for st in stmts if _creates_layer(st.small, self) or st.kind == "variable" or st.uses & set(self.variables)}
        candidates: list[_Stmt] = []
        from_features: set[str] = {self.features}
        for st in stmts:
            if st.kind or not isinstance(st.small, cst.Assign) or id(st) in network:
                continue
            reads = st.uses & from_features
            others = {n for n in st.uses - from_features if n in defs_at and any(x.kind == "" for x in defs_at[n])}
            if reads and not others and self.mode not in st.uses:
                candidates.append(st)
                from_features |= st.defs
        # Keep those whose values never reach a layer or a variable of the network.
        consumers: dict[str, list[_Stmt]] = {}
        for st in stmts:
            for name in st.uses:
                consumers.setdefault(name, []).append(st)

        def reaches_network(st: _Stmt, seen: set[int]) -> bool:
            for name in st.defs:
                for user in consumers.get(name, []):
                    if id(user) in seen:
                        continue
                    seen.add(id(user))
                    if id(user) in network or reaches_network(user, seen):
                        return True
            return False

        return [st for st in candidates if not reaches_network(st, set())]

    def _narrow_output(self, output: str, stmts: list["_Stmt"], forward: set[str]) -> str:
        """The loss reads `log_probs = tf.nn.log_softmax(logits)` but the eval metrics want
        `logits`: the model returns the last tensor a layer or variable made, and what the
        loss computes from it alone moves to the loss."""
        if self.eval_metrics_expr is None or not isinstance(self.eval_metrics_expr, cst.Tuple):
            return output
        wanted = names_in(self.eval_metrics_expr.elements[1].value) & forward if len(self.eval_metrics_expr.elements) == 2 else set()
        while wanted - {output}:
            defining = [st for st in stmts if output in st.defs and st.kind in ("", "forward")]
            if len(defining) != 1:
                break
            st = defining[0]
            inputs = st.uses & (forward - {self.features})
            if _creates_layer(st.small, self) or st.uses & set(self.variables) or len(inputs) != 1 or output in st.uses:
                break
            output = next(iter(inputs))
        return output

    def _model_side(
        self, plan: "Plan", stmts: list["_Stmt"], forward: set[str], uses: set[str], what: str, kinds: tuple[str, ...]
    ) -> list[cst.SimpleStatementLine]:
        """The statements (of `kinds`: labels read from the features, losses, pure values; and
        forward ones recomputed from the output) that compute `uses` outside the model's call."""
        after = self._after_output_defs(plan, stmts, forward)
        allowed = {plan.output, self.features}
        after_ids = {id(st) for st in after.values()}
        needed = set(uses)
        chosen: list[_Stmt] = []
        for st in reversed(stmts):
            if st.defs & needed and (st.kind in kinds or id(st) in after_ids):
                chosen.append(st)
                if isinstance(st.small, cst.Assign):
                    needed -= st.defs  # defined here: earlier bindings of these names are not needed
                needed |= st.uses
        chosen.reverse()
        bad = needed & forward - allowed - set(after)
        if bad:
            raise Unsupported(f"{what} read tensors the model does not return ({', '.join(sorted(bad))})")
        # The migrated model's labels are the features dict these statements read them from.
        rename = RenameNames({self.features: plan.labels_name})
        return [self._rewritten(st, rename) if st.kind == "labelsrc" else st.node for st in chosen]

    def _defer_shaped_weights(self, stmts: list["_Stmt"], weights: list[tuple[str, list[str], set[str]]]) -> list:
        """`hidden_size = output_layer.shape[-1].value` then `tf.get_variable(..., [n, hidden_size])`:
        the weight cannot be made in `build` (no tensor exists yet), so a `tfm.layers.DeferredWeight`
        makes it when first called on the tensor, from a method that reads the tensor's static shape."""
        out = []
        for index, st in enumerate(stmts):
            if st.kind != "variable":
                continue
            entry = next(w for w in weights if w[0] == self.variables.get(next(iter(st.defs))))
            attr, args, uses = entry
            shape_stmts: list[_Stmt] = []
            tensors: set[str] = set()
            for earlier in stmts[:index]:
                if not (earlier.defs & uses) or earlier.kind or not isinstance(earlier.small, cst.Assign):
                    continue
                read = _static_shape_reads(earlier.small.value)
                if read and not (names_in(earlier.small.value) - read) & {n for x in stmts[:index] for n in x.defs}:
                    shape_stmts.append(earlier)
                    tensors |= read
            if not shape_stmts:
                continue
            if len(tensors) != 1:
                raise Unsupported("a `tf.get_variable` shape reads the static shapes of several tensors")
            tensor = next(iter(tensors))
            name = next(iter(st.defs))
            del self.variables[name]
            weights.remove(entry)
            leaf = next(a for a in args if a.startswith("name="))[len("name="):].strip("'\"")
            tf1 = self.tf1_names.pop(attr, attr)
            self.tf1_names[f"{attr}/{leaf}"] = tf1
            method = f"_{attr}_arguments"
            strip = _ShapeValue()
            out.append((attr, method, tensor, [self._rewritten(x, strip) for x in shape_stmts], args, uses))
            line = cst.parse_statement(f"{name} = self.{attr}({tensor})")
            st.node = line  # type: ignore[misc]
            st.small = line.body[0]  # type: ignore[attr-defined,misc]
            st.uses = {tensor}
            st.kind = ""
        return out

    def _hand_step_increment(self, stmts: list["_Stmt"], global_steps: set[str], optimizer_key: str | None) -> None:
        """BERT increments the global step by hand, because its AdamWeightDecayOptimizer ignores
        `global_step`: `new_global_step = global_step + 1` and `train_op = tf.group(train_op,
        [global_step.assign(new_global_step)])`. A Keras optimizer counts its own steps, so both go."""
        found = False
        for st in stmts:
            value = getattr(st.small, "value", None)
            if st.kind or not isinstance(st.small, cst.Assign):
                continue
            if (
                isinstance(value, cst.BinaryOperation)
                and isinstance(value.operator, cst.Add)
                and isinstance(value.left, cst.Name)
                and value.left.value in global_steps
                and isinstance(value.right, cst.Integer)
                and value.right.value == "1"
            ):
                st.kind = "drop"
            elif isinstance(value, cst.Call) and self.canonical(value.func) == "group" and _calls_method(value, global_steps, "assign"):
                st.kind = "drop"
                found = True
        if found and optimizer_key != ADAM_WEIGHT_DECAY:
            raise Unsupported("the global step is incremented by hand besides the optimizer's own increment")

    def _gradient_code(
        self, stmts: list["_Stmt"], plan: "Plan", optimizers: set[str], global_steps: set[str], loss_name: str
    ) -> None:
        """`compute_gradients`/`tf.gradients` + transforms + `apply_gradients`: kept as the model's
        `apply_tf1_gradients(loss, tape)`, called from a runtime train step."""
        apply_index = None
        for index, st in enumerate(stmts):
            value = getattr(st.small, "value", None)
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "apply_gradients"
                and isinstance(value.func.value, cst.Name)
                and value.func.value.value in optimizers
            ):
                if apply_index is not None:
                    raise Unsupported("more than one `apply_gradients`")
                apply_index = index
        if apply_index is None:
            return
        # The gradient section: statements that start from gradient sources, and what builds on them.
        sources = {"gradients", "trainable_variables"}
        grad_names: set[str] = set()
        section: list[_Stmt] = []
        used = set().union(*(st.uses for st in stmts))
        for st in stmts[: apply_index + 1]:
            if st.kind:
                continue
            value = getattr(st.small, "value", None)
            starts = value is not None and (
                _calls(value, self, sources)
                or _calls_method(value, optimizers, "compute_gradients")
            )
            if starts and not st.defs & used:
                st.kind = "drop"  # `tvars = tf.trainable_variables()` only logging loops read
                continue
            if starts or st.uses & grad_names or st is stmts[apply_index]:
                st.kind = "grad"
                grad_names |= st.defs
                section.append(st)
        rewriter = _GradientRewriter(self, optimizers, global_steps)
        plan.gradient_stmts = [self._rewritten(st, rewriter) for st in section]
        plan.gradient_scale_loss = not rewriter.uses_tf_gradients
        plan.gradient_loss_name = loss_name
        self.gradient_uses = set().union(*(st.uses for st in section)) - grad_names

    def _after_output_defs(self, plan: "Plan", stmts: list["_Stmt"], forward: set[str]) -> dict[str, "_Stmt"]:
        """Forward names computed from the model output alone (`predicted = tf.argmax(logits, 1)`),
        each with the statement that (last) defines it."""
        after: dict[str, _Stmt] = {}
        allowed = {plan.output, self.features}
        for st in stmts:
            if st.kind in ("forward", "dead") and st.uses & forward and st.uses & forward <= allowed | set(after):
                if plan.output in st.uses or st.uses & set(after):
                    after.update(dict.fromkeys(st.defs, st))
        return after

    def _after_output(
        self, plan: "Plan", stmts: list["_Stmt"], forward: set[str], uses: set[str], what: str
    ) -> list[cst.SimpleStatementLine]:
        """The statements that recompute `uses` after the model call: pure ones, and forward ones
        computed from the model output alone (`predicted = tf.argmax(logits, 1)`)."""
        after_output = self._after_output_defs(plan, stmts, forward)
        allowed = {plan.output, self.features}
        bad = (uses & forward) - allowed - set(after_output)
        if bad:
            raise Unsupported(f"{what} read tensors the model does not return ({', '.join(sorted(bad))})")
        needed: list[_Stmt] = []
        todo = [n for n in uses if n in after_output]
        while todo:
            st = after_output[todo.pop()]
            if st not in needed:
                needed.append(st)
                todo.extend(n for n in st.uses if n in after_output)
        pure = [st for st in stmts if st.kind == "pure" and st.defs & (uses | set().union(set(), *(x.uses for x in needed)))]
        return [st.node for st in stmts if st in pure or st in needed]

    def _is_metric_value(self, element: cst.BaseDictElement, metric_ops: set[str]) -> bool:
        """A `{name: metric}` entry: a `tf.metrics.*` op assigned before, or such a call inline."""
        if not isinstance(element, cst.DictElement):
            return False
        value = element.value
        if isinstance(value, cst.Name):
            return value.value in metric_ops
        return isinstance(value, cst.Call) and self.canonical(value.func) in METRICS

    def _metric_ops(self, plan: "Plan", stmts: list["_Stmt"], forward: set[str]) -> None:
        """`eval_metric_ops={name: tf.metrics.*(...)}` -> runtime metrics updated in `compute_metrics`."""
        expr = self.eval_metric_ops_expr
        if isinstance(expr, cst.Name):
            owner = next((st for st in stmts if st.defs == {expr.value} and isinstance(getattr(st.small, "value", None), cst.Dict)), None)
            if owner is None:
                raise Unsupported("`eval_metric_ops` is not a dict literal in model_fn")
            owner.kind = "drop"
            expr = owner.small.value  # type: ignore[union-attr]
        if not isinstance(expr, cst.Dict):
            raise Unsupported("`eval_metric_ops` is not a dict literal")
        ops = {name: st for st in stmts if st.kind == "metricop" for name in st.defs}
        updates, uses = [], set()
        for element in expr.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                raise Unsupported("`eval_metric_ops` has non-literal keys")
            call = element.value
            if isinstance(call, cst.Name) and call.value in ops:
                call = ops[call.value].small.value  # type: ignore[union-attr]
            metric = self.canonical(call.func) if isinstance(call, cst.Call) else None
            if metric not in METRICS:
                raise Unsupported(f"eval metric `{element.key.evaluated_value}` is not a supported tf.metrics.* call")
            cls, positional, ctor_params = METRICS[metric]
            args = _bind(call, positional)  # type: ignore[arg-type]
            if args is None:
                raise Unsupported(f"unexpected arguments to `tf.{metric}`")
            attr = _metric_attr(str(element.key.evaluated_value), self.layer_attrs)
            ctor = [f"name={element.key.value}"] + [f"{k}={self.code(v)}" for k, v in args.items() if k in ctor_params]
            update_args = {k: v for k, v in args.items() if k not in ctor_params and k not in _METRIC_DROP}
            for value in update_args.values():
                uses |= names_in(value)
            plan.metrics.append((attr, f"{self.tfm}.metrics.{cls}", ctor))
            updates.append(f"self.{attr}.update_state({', '.join(f'{k}={self.code(v)}' for k, v in update_args.items())})")
        labels = {self.labels} if self.labels else set()
        plan.metric_sources = [(self.labels or "labels", "y"), (plan.output, "y_pred")]
        plan.metric_prelude = self._after_output(plan, stmts, forward, uses - labels, "the eval metrics")
        plan.metric_updates = updates

    def _predictions(self, plan: "Plan", stmts: list["_Stmt"], forward: set[str]) -> None:
        """The PREDICT branch -> `predict_step`, returning the `predictions` TF1 returned."""
        assert self.predict_return is not None
        call = self.predict_return.value
        if not isinstance(call, cst.Call) or self.canonical(call.func) not in ("estimator.tpu.TPUEstimatorSpec", "estimator.EstimatorSpec"):
            raise Unsupported("the PREDICT branch does not return an EstimatorSpec")
        predictions = None
        export_outputs = None
        for index, arg in enumerate(call.args):
            name = arg.keyword.value if arg.keyword else ("mode", "predictions")[index] if index < 2 else "?"
            if name == "predictions":
                predictions = arg.value
            elif name == "export_outputs" and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                export_outputs = arg.value
            elif name == "prediction_hooks":
                continue  # the model's prediction_hooks() (see analyze)
            elif name == "scaffold_fn" and isinstance(arg.value, cst.Name) and arg.value.value in {self.scaffold_fn} | self.scaffold_vars:
                continue  # the model is built with the checkpoint already applied, for predict too
            elif name == "scaffold" and self._plain_scaffold(arg.value):
                continue
            elif name != "mode" and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                raise Unsupported(f"the PREDICT spec's `{name}=` is not migrated yet")
        if predictions is None:
            raise Unsupported("the PREDICT spec has no `predictions=`")
        branch_defs: set[str] = set()
        for line in self.predict_stmts:
            branch_defs |= _assigned(line.body[0]) if isinstance(line.body[0], (cst.Assign, cst.AnnAssign)) else set()
        uses = names_in(predictions).union(*(names_in(line) for line in self.predict_stmts))
        if export_outputs is not None:
            uses |= names_in(export_outputs)
        if self.labels and self.labels in uses:
            raise Unsupported("the predictions read labels")
        plan.predict_prelude = self._after_output(plan, stmts, forward, uses - branch_defs, "the predictions")
        plan.predict_stmts = list(self.predict_stmts)
        if export_outputs is not None:
            from .estimator_surface import export_statements

            rewritten, export_only, plan.export_outputs = export_statements(
                self, self.predict_stmts, export_outputs, predictions
            )
            plan.export_stmts = rewritten
            plan.predict_stmts = [line for i, line in enumerate(rewritten) if i not in export_only]
        plan.predictions = self.code(predictions)
        plan.predict_uses_params = self.params in uses

    def _metrics(self, plan: "Plan", stmts: list["_Stmt"], forward: set[str]) -> None:
        """`eval_metrics=(metric_fn, tensors)` -> runtime metric objects updated in `compute_metrics`."""
        expr = self.eval_metrics_expr
        if not (isinstance(expr, cst.Tuple) and len(expr.elements) == 2 and isinstance(expr.elements[0].value, cst.Name)):
            raise Unsupported("`eval_metrics` is not a `(metric_fn, tensors)` tuple")
        fn_name = expr.elements[0].value.value  # type: ignore[attr-defined]
        fn = self.local_fns.get(fn_name)
        if fn is None:
            fn = next((s for s in self.module.body if isinstance(s, cst.FunctionDef) and s.name.value == fn_name), None)
            if fn is None:
                raise Unsupported(f"metric_fn `{fn_name}` is not defined in this file")
            plan.absorbed_functions.append(fn_name)
        params = [p.name.value for p in fn.params.params]
        tensors = expr.elements[1].value
        bound: dict[str, cst.BaseExpression] = {}
        if isinstance(tensors, (cst.List, cst.Tuple)):
            if len(tensors.elements) != len(params):
                raise Unsupported("metric_fn's parameters and the eval_metrics tensors do not line up")
            bound = {p: e.value for p, e in zip(params, tensors.elements)}
        elif isinstance(tensors, cst.Dict):
            for element in tensors.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                    raise Unsupported("eval_metrics tensors dict with non-literal keys")
                bound[element.key.evaluated_value] = element.value  # type: ignore[index]
        else:
            raise Unsupported("eval_metrics tensors are not a list or dict")
        sources = []
        model_names: set[str] = set()
        for param, value in bound.items():
            if isinstance(value, cst.Name) and value.value == self.labels and not plan.labels_from_features:
                sources.append((param, "y"))
            elif isinstance(value, cst.Name) and value.value == plan.output:
                sources.append((param, "y_pred"))
            elif isinstance(value, cst.Name):
                # BERT's `[per_example_loss, label_ids, logits, is_real_example]`: recomputed
                # from the labels and the output beside the metrics.
                sources.append((param, value.value))
                model_names.add(value.value)
            else:
                raise Unsupported(f"metric_fn receives `{self.code(value)}`; only names of the model_fn's tensors migrate")
        if model_names:
            plan.metric_model_prelude = self._model_side(
                plan, stmts, forward, model_names, "the eval metrics", kinds=("labelsrc", "loss", "pure")
            )
            defined = {self.labels, plan.output} | {n for line in plan.metric_model_prelude for n in _defs_of(line)}
            missing = model_names - defined
            if missing:
                raise Unsupported(f"metric_fn receives {', '.join(sorted(missing))}, which the eval step cannot compute")
        body = list(fn.body.body)  # type: ignore[attr-defined]
        if body and _is_docstring(body[0]):
            body = body[1:]
        if not body or not isinstance(body[-1], cst.SimpleStatementLine) or not isinstance(body[-1].body[0], cst.Return):
            raise Unsupported("metric_fn does not end with `return {name: tf.metrics.*(...)}`")
        returned = body[-1].body[0].value  # type: ignore[attr-defined]
        if not isinstance(returned, cst.Dict):
            raise Unsupported("metric_fn does not return a dict literal")
        prelude = []
        for stmt in body[:-1]:
            if not isinstance(stmt, cst.SimpleStatementLine) or not all(isinstance(x, (cst.Assign, cst.AnnAssign)) for x in stmt.body):
                raise Unsupported("metric_fn has statements other than assignments before its return")
            prelude.append(stmt)
        # BERT names its metrics first: `accuracy = tf.metrics.accuracy(...)` ... `{'eval_accuracy': accuracy}`.
        metric_assigns: dict[str, tuple[cst.SimpleStatementLine, cst.Call]] = {}
        for stmt in prelude:
            small = stmt.body[0]
            if (
                len(stmt.body) == 1
                and isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Call)
                and self.canonical(small.value.func) in METRICS
            ):
                metric_assigns[small.targets[0].target.value] = (stmt, small.value)
        used_assigns: set[int] = set()
        updates = []
        for element in returned.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                raise Unsupported("metric_fn's dict has non-literal keys")
            key = element.key.evaluated_value
            call = element.value
            if isinstance(call, cst.Name) and call.value in metric_assigns:
                stmt, call = metric_assigns[call.value]
                used_assigns.add(id(stmt))
            metric = self.canonical(call.func) if isinstance(call, cst.Call) else None
            if metric not in METRICS:
                raise Unsupported(f"metric `{key}` is not a supported tf.metrics.* call")
            cls, positional, ctor_params = METRICS[metric]
            args = _bind(call, positional)  # type: ignore[arg-type]
            if args is None:
                raise Unsupported(f"unexpected arguments to `tf.{metric}`")
            attr = _metric_attr(str(key), self.layer_attrs)
            ctor = [f"name={element.key.value}"] + [
                f"{k}={self.code(v)}" for k, v in args.items() if k in ctor_params
            ]
            update = ", ".join(f"{k}={self.code(v)}" for k, v in args.items() if k not in ctor_params and k not in _METRIC_DROP)
            plan.metrics.append((attr, f"{self.tfm}.metrics.{cls}", ctor))
            updates.append(f"self.{attr}.update_state({update})")
        plan.metric_sources = sources
        prelude = [stmt for stmt in prelude if id(stmt) not in used_assigns]
        if any(names_in(stmt) & set(metric_assigns) for stmt in prelude):
            raise Unsupported("metric_fn uses a metric's (value, update_op) pair beyond returning it")
        plan.metric_prelude = prelude
        plan.metric_updates = updates

    def _is_global_step(self, node: cst.BaseExpression, names: set[str]) -> bool:
        if isinstance(node, cst.Name):
            return node.value in names
        if isinstance(node, cst.Call):
            return self.canonical(node.func) in GLOBAL_STEP_FNS
        return False

    def _schedule(self, st: _Stmt, key: str, call: cst.Call, global_steps: set[str]) -> cst.SimpleStatementLine:
        positional, step_param, target, renames = SCHEDULES[key]
        bound = _bind(call, positional)
        if bound is None or step_param not in bound:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        if not self._is_global_step(bound.pop(step_param), global_steps):
            raise Unsupported(f"`tf.{key}` is driven by something other than the global step")
        bound.pop("name", None)
        args = ", ".join(f"{renames.get(k, k)}={self.code(v)}" for k, v in bound.items())
        kind, cls = target.split(":")
        func = f"{self.tf}.keras.optimizers.schedules.{cls}" if kind == "keras" else f"{self.tfm}.{cls}"
        assign = st.small
        assert isinstance(assign, cst.Assign)
        new = assign.with_changes(value=cst.parse_expression(f"{func}({args})"))
        return st.node.with_changes(body=[new])

    def _spec(self, ret: cst.Return) -> dict[str, str]:
        value = ret.value
        if not isinstance(value, cst.Call):
            raise Unsupported("model_fn does not return an EstimatorSpec call")
        key = self.canonical(value.func)
        if key not in ("estimator.tpu.TPUEstimatorSpec", "estimator.EstimatorSpec"):
            raise Unsupported("model_fn does not return an EstimatorSpec call")
        spec: dict[str, str] = {}
        for index, arg in enumerate(value.args):
            name = arg.keyword.value if arg.keyword else ("mode", "predictions", "loss", "train_op")[index] if index < 4 else None
            if name is None:
                raise Unsupported("too many positional EstimatorSpec arguments")
            if name not in SPEC_KEYS_SUPPORTED:
                if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                    continue
                raise Unsupported(f"EstimatorSpec `{name}=` (not migrated yet)")
            if name == "mode":
                continue
            if name == "host_call":
                if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                    continue
                self.host_call_expr = arg.value
                continue
            if name == "scaffold":
                if not self._plain_scaffold(arg.value):
                    raise Unsupported("EstimatorSpec `scaffold=` is not a `tf.train.Scaffold(...)` call")
                continue  # what it configures, TF2 does itself (see _plain_scaffold)
            if name == "scaffold_fn":
                if isinstance(arg.value, cst.Name) and arg.value.value in self.scaffold_vars:
                    continue  # BERT's `scaffold_fn` variable: its init_from_checkpoint is recorded
                if not isinstance(arg.value, cst.Name):
                    raise Unsupported("`scaffold_fn=` is not the name of a function")
                self.scaffold_fn = arg.value.value
                continue
            if name == "eval_metric_ops":
                if self.eval_metric_ops_expr is not None:
                    raise Unsupported("`eval_metric_ops` given twice")
                self.eval_metric_ops_expr = arg.value
                continue
            if name == "eval_metrics":
                if self.eval_metrics_expr is not None:
                    raise Unsupported("`eval_metrics` given twice")
                self.eval_metrics_expr = arg.value
                continue
            if name.endswith("_hooks"):
                if not any(arg.value.deep_equals(e) for e in self.hook_exprs.get(name, [])):
                    self.hook_exprs.setdefault(name, []).append(arg.value)
                continue
            if not isinstance(arg.value, cst.Name):
                raise Unsupported(f"EstimatorSpec `{name}=` is not a plain name")
            spec[name] = arg.value.value
        if "loss" not in spec:
            raise Unsupported("EstimatorSpec has no `loss=`")
        return spec

    def _check_minimize(self, call: cst.Call, loss_name: str, global_steps: set[str]) -> None:
        for index, arg in enumerate(call.args):
            name = arg.keyword.value if arg.keyword else ("loss", "global_step")[index] if index < 2 else "?"
            if name == "loss":
                if not (isinstance(arg.value, cst.Name) and arg.value.value == loss_name):
                    raise Unsupported("`minimize` is called on something other than the spec's loss")
            elif name == "global_step":
                ok = (isinstance(arg.value, cst.Name) and arg.value.value in global_steps) or (
                    isinstance(arg.value, cst.Call) and self.canonical(arg.value.func) in GLOBAL_STEP_FNS
                )
                if not ok:
                    raise Unsupported("`minimize(global_step=...)` is not the global step")
            else:
                raise Unsupported(f"`minimize({name}=...)` is not migrated yet")

    def _keras_loss(self, loss_stmts: list[_Stmt], output: str, loss_name: str) -> str | None:
        if len(loss_stmts) != 1 or loss_stmts[0].defs != {loss_name}:
            return None
        value = getattr(loss_stmts[0].small, "value", None)
        if not isinstance(value, cst.Call):
            return None
        key = self.canonical(value.func)
        if key not in LOSSES:
            return None
        cls, labels_param, preds_param, passthrough, fixed = LOSSES[key]
        bound = _bind(value, LOSS_PARAMS[key])
        if bound is None:
            return None
        labels = bound.pop(labels_param, None)
        preds = bound.pop(preds_param, None)
        if not (isinstance(labels, cst.Name) and labels.value == self.labels):
            return None
        if not (isinstance(preds, cst.Name) and preds.value == output):
            return None
        args = [fixed] if fixed else []
        for tf1_name, expr in bound.items():
            if tf1_name in passthrough:
                args.append(f"{passthrough[tf1_name]}={self.code(expr)}")
            else:
                return None  # weights/reduction/scope: the TF1-faithful compute_loss path handles them
        return f"{self.tf}.keras.losses.{cls}({', '.join(args)})"

    def _keras_optimizer(self, call: cst.Call) -> str:
        key = self.call_key(call)
        assert key is not None
        cls, positional, renames, spelled = OPTIMIZERS[key]
        bound = _bind(call, positional)
        if bound is None:
            raise Unsupported(f"unexpected arguments to `{key}`")
        lr = bound.get("learning_rate")
        if self.step_fn and isinstance(lr, cst.Name):
            bound["learning_rate"] = lr = cst.parse_expression(f"{self.tfm}.schedules.StepFunction({self.step_fn})")
        scheduled = self.step_fn is not None or (isinstance(lr, cst.Name) and lr.value in self.schedule_names)
        if key == "train.MomentumOptimizer" and lr is not None and not (scheduled or _is_constant_like(lr)):
            raise Unsupported("MomentumOptimizer with a tensor learning rate (not a tf.train.*_decay schedule)")
        args: list[str] = []
        if "learning_rate" in bound:
            args.append(f"learning_rate={self.code(bound.pop('learning_rate'))}")
        elif "learning_rate" in spelled:
            args.append(f"learning_rate={spelled['learning_rate']}")
        for name, expr in bound.items():
            if name in _OPTIMIZER_DROP:
                continue
            args.append(f"{renames.get(name, name)}={self.code(expr)}")
        for name, default in spelled.items():
            if name != "learning_rate" and name not in bound:
                args.append(f"{name}={default}")
        for value in bound.values():
            if not _is_constant_like(value) and isinstance(value, cst.Call):
                raise Unsupported("an optimizer argument is a tensor expression (only tf.train.*_decay schedules migrate)")
        if cls.startswith("runtime:"):
            return f"{self.tfm}.{cls[len('runtime:'):]}({', '.join(args)})"
        return f"{self.tf}.keras.optimizers.{cls}({', '.join(args)})"


def _metric_attr(key: str, taken: dict[str, int]) -> str:
    base = re.sub(r"\W+", "_", key).strip("_") or "metric"
    if base[0].isdigit():
        base = "m_" + base
    base = f"{base}_metric"
    count = taken.get(base, 0)
    taken[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def _any_call(node: cst.CSTNode, predicate) -> bool:
    """Whether any call inside `node` satisfies `predicate(call)`."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal found
            found = found or bool(predicate(call))

    node.visit(Finder())
    return found


def _calls_method(node: cst.CSTNode, receivers: set[str], method: str) -> bool:
    """`<receiver>.<method>(...)` inside `node`, for a receiver name in `receivers`."""
    return _any_call(
        node,
        lambda call: isinstance(call.func, cst.Attribute)
        and call.func.attr.value == method
        and isinstance(call.func.value, cst.Name)
        and call.func.value.value in receivers,
    )


def _calls(node: cst.CSTNode, analyzer: "ModelFnAnalyzer", keys: set[str]) -> bool:
    """A call of one of the TF1 API paths `keys` inside `node`."""
    return _any_call(node, lambda call: analyzer.canonical(call.func) in keys)


def _creates_layer(node: cst.CSTNode, analyzer: "ModelFnAnalyzer") -> bool:
    """A TF1 or Keras layer (function or class) used inside `node`."""
    return _any_call(
        node,
        lambda call: (analyzer.canonical(call.func) or "").startswith(("layers.", "keras.layers."))
        or analyzer.canonical(call.func) in CONTRIB_LAYERS
        or _functional_layer(analyzer.canonical(call.func), analyzer),
    )


def _static_shape_reads(node: cst.BaseExpression) -> set[str]:
    """The names `node` reads only through their static shape (`x.shape[-1]`,
    `x.get_shape().as_list()`); empty when it reads any of them otherwise."""
    shaped: set[str] = set()
    plain: set[str] = set()

    class Visit(cst.CSTVisitor):
        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            if attr.attr.value in ("shape", "get_shape") and isinstance(attr.value, cst.Name):
                shaped.add(attr.value.value)
                return False
            attr.value.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

        def visit_Name(self, name: cst.Name) -> None:
            plain.add(name.value)

    node.visit(Visit())
    return shaped - plain


class _ShapeValue(cst.CSTTransformer):
    """`x.shape[-1].value` (TF1's Dimension) -> `x.shape[-1]` (an int in TF2)."""

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if updated.attr.value == "value" and isinstance(updated.value, cst.Subscript):
            inner = updated.value.value
            while isinstance(inner, cst.Call):
                inner = inner.func
            if isinstance(inner, cst.Attribute) and inner.attr.value in ("shape", "get_shape", "as_list"):
                return updated.value
        return updated


def _is_logging_call(call: cst.Call, analyzer: "ModelFnAnalyzer") -> bool:
    """`tf.logging.info(...)`, absl's `logging.info(...)` (TFM102's rewrite of it), `print(...)`."""
    key = analyzer.canonical(call.func) or ""
    if key.startswith("logging."):
        return True
    root = call.func
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in ("logging", "absl", "print")


def _logging_only(stmt: cst.BaseStatement, analyzer: "ModelFnAnalyzer") -> bool:
    """A `for` loop (BERT's `for var in tvars: tf.logging.info(...)`) that only builds and logs
    messages: logging calls, and assignments of strings, maybe under `if`s."""
    if not isinstance(stmt, cst.For) or stmt.orelse is not None:
        return False

    def quiet(body: list[cst.BaseStatement]) -> bool:
        for inner in body:
            if isinstance(inner, cst.If):
                if not quiet(list(inner.body.body)) or (inner.orelse is not None and not quiet(list(inner.orelse.body.body))):  # type: ignore[attr-defined,union-attr]
                    return False
                continue
            if not isinstance(inner, cst.SimpleStatementLine):
                return False
            for small in inner.body:
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _is_logging_call(small.value, analyzer):
                    continue
                if isinstance(small, cst.Assign) and isinstance(small.value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                    continue
                return False
        return True

    return quiet(list(stmt.body.body))  # type: ignore[attr-defined]


def _single_target(line: cst.SimpleStatementLine) -> str | None:
    small = line.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None


def _defs_of(line: cst.SimpleStatementLine) -> set[str]:
    try:
        return set().union(*(_assigned(small) for small in line.body))
    except Unsupported:
        return set()


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_constant_like(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float, cst.Name, cst.Subscript, cst.Attribute, cst.UnaryOperation))


def _bind(call: cst.Call, positional: tuple[str, ...]) -> dict[str, cst.BaseExpression] | None:
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


class _ScopedRewriter(cst.CSTTransformer):
    """Statements run inside a `tfm.tf1.VariableScopeLayer`: TF1 functional layers -> the
    runtime's (`tfm.tf1.dense`, same variables); `mode == TRAIN` -> the layer's `training`."""

    def __init__(self, analyzer: "ModelFnAnalyzer") -> None:
        super().__init__()
        self.a = analyzer
        self.training = False

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        mode = self.a.is_mode_compare(original)
        if mode is None:
            return updated
        equal, key = mode
        if key != "estimator.ModeKeys.TRAIN":
            raise Unsupported(f"the forward pass tests `mode` against {key.rsplit('.', 1)[-1]}")
        self.training = True
        return cst.Name("training") if equal else cst.UnaryOperation(cst.Not(), cst.Name("training"))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key in _SCOPED_LAYERS:
            return updated.with_changes(func=cst.parse_expression(f"{self.a.tfm}.tf1.{_SCOPED_LAYERS[key]}"))
        if key is not None and key.startswith(("layers.", "contrib.layers.", "contrib.slim.")):
            raise Unsupported(f"`tf.{key}` inside a call into another module's code is not migrated yet")
        return updated


class _ForwardRewriter(cst.CSTTransformer):
    """Hoists TF1 layer calls into Keras layers built once; `mode == TRAIN` -> `training`."""

    def __init__(self, analyzer: ModelFnAnalyzer) -> None:
        super().__init__()
        self.a = analyzer
        # (attr, names the constructor reads, (Keras class path, rendered arguments))
        self.layers: list[tuple[str, set[str], tuple[str, list[str]]]] = []
        self.uses_labels = False
        self.pending_ctors: set[int] = set()
        self.scope = ""  # the TF1 variable scope of the statement being rewritten
        self.refs = _VariableRefs(analyzer)

    def _attr(self, base: str, cls: str) -> str:
        attr, tf1 = self.a.tf1_layer_name(base, self.scope)
        if attr != tf1 and cls not in _WEIGHTLESS_LAYERS:
            self.a.tf1_names[attr] = tf1
        return attr

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self.refs.visit_Attribute(node)

    def visit_Arg(self, node: cst.Arg) -> bool:
        return self.refs.visit_Arg(node)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if self.a.labels and original.value == self.a.labels:
            self.uses_labels = True
        return self.refs.leave_Name(original, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return _ShapeValue().leave_Attribute(original, updated)

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        mode = self.a.is_mode_compare(original)
        if mode is None:
            return updated
        equal, key = mode
        if key != "estimator.ModeKeys.TRAIN":
            raise Unsupported(f"the forward pass tests `mode` against {key.rsplit('.', 1)[-1]}")
        return cst.Name("training") if equal else cst.UnaryOperation(cst.Not(), cst.Name("training"))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if isinstance(original.func, cst.Name) and original.func.value in self.a.layer_objects:
            name = original.func.value
            attr = self.a.layer_object_attrs.get(name)
            if attr is None:
                ctor = self.a.layer_objects[name]
                inner = self.a.canonical(ctor.func) or ""
                cls = LAYER_CLASSES.get(inner) or inner.rsplit(".", 1)[-1]
                attr = self.a.layer_object_attrs[name] = self._attr(_snake(cls), cls)
                self._add_layer(attr, cls, [a for a in ctor.args if not (a.keyword and a.keyword.value in _LAYER_DROP)])
            return updated.with_changes(func=cst.parse_expression(f"self.{attr}"))
        key = self.a.canonical(original.func)
        if key == "nn.dropout":
            return _dropout_rate(updated)
        if _functional_layer(key, self.a):
            return self._functional(key, updated)
        if key in CONTRIB_LAYERS:
            return self._contrib(key, updated)
        if isinstance(original.func, cst.Call):
            inner = self.a.canonical(original.func.func)
            cls = LAYER_CLASSES.get(inner or "") or (inner.rsplit(".", 1)[-1] if inner and inner.startswith("keras.layers.") else None)
            if cls is not None:
                self.pending_ctors.discard(id(original.func))
                ctor_call = updated.func
                assert isinstance(ctor_call, cst.Call)
                ctor_args = [a for a in ctor_call.args if not (a.keyword and a.keyword.value in _LAYER_DROP)]
                attr = self._attr(_snake(cls), cls)
                self._add_layer(attr, cls, ctor_args)
                return updated.with_changes(func=cst.parse_expression(f"self.{attr}"))
        if key in LAYER_CLASSES or (key or "").startswith("keras.layers."):
            self.pending_ctors.add(id(original))  # consumed by the enclosing `Layer(...)(x)` call
            return updated
        if key is not None and (
            key.startswith("layers.")
            or (key.startswith("contrib.layers.") and key not in INITIALIZERS and key not in REGULARIZERS)
        ):
            raise Unsupported(f"`tf.{key}` is not migrated yet")
        return updated

    def _functional(self, key: str, call: cst.Call) -> cst.BaseExpression:
        cls, positional = FUNCTIONAL_LAYERS[key]
        bound = _bind(call, ("inputs",) + positional)
        if bound is None or "inputs" not in bound:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        inputs = bound.pop("inputs")
        call_args = [cst.Arg(inputs)]
        if "training" in bound:
            call_args.append(cst.Arg(bound.pop("training"), keyword=cst.Name("training"), equal=_EQ))
        elif cls in ("Dropout", "runtime:layers.BatchNormalization"):
            # TF1 `dropout` defaults to training=False: it is a no-op unless told otherwise.
            call_args.append(cst.Arg(cst.Name("False"), keyword=cst.Name("training"), equal=_EQ))
        ctor_args = [
            cst.Arg(value, keyword=cst.Name(name), equal=_EQ)
            for name, value in bound.items()
            if name not in _LAYER_DROP
        ]
        name_arg = bound.get("name")
        base = _snake(cls)
        if isinstance(name_arg, cst.SimpleString) and name_arg.evaluated_value.isidentifier():  # type: ignore[union-attr]
            base = name_arg.evaluated_value  # type: ignore[assignment,union-attr]
        attr = self._attr(base, cls)
        self._add_layer(attr, cls, ctor_args)
        return cst.Call(func=cst.parse_expression(f"self.{attr}"), args=call_args)

    def _contrib(self, key: str, call: cst.Call) -> cst.BaseExpression:
        """`tf.contrib.layers.fully_connected(x, 10, scope='fc')` (and slim's) -> a Keras layer
        built once, its TF1 variable names (`fc/weights`) recorded for the checkpoint loader."""
        cls, positional, renames, defaults, default_scope, weight_names, training = CONTRIB_LAYERS[key]
        bound = _bind(call, ("inputs",) + positional)
        if bound is None or "inputs" not in bound:
            raise Unsupported(f"unexpected arguments to `tf.{key}`")
        normalizer = bound.pop("normalizer_fn", None)
        normalizer_params = bound.pop("normalizer_params", None)
        if normalizer is not None and isinstance(normalizer, cst.Name) and normalizer.value == "None":
            normalizer = None
        if normalizer is not None:
            if self.a.canonical(normalizer) != "contrib.layers.batch_norm":
                raise Unsupported(f"`tf.{key}(normalizer_fn={self.a.code(normalizer)})` is not migrated yet")
            return self._normalized(key, bound, normalizer_params)
        if key == "contrib.layers.batch_norm":
            self._check_batch_norm(bound)
        data_format = bound.get("data_format")
        if data_format is not None and not (
            isinstance(data_format, cst.SimpleString) and data_format.evaluated_value in ("NHWC", "NWC", "NDHWC")
        ) and not (isinstance(data_format, cst.Name) and data_format.value == "None"):
            raise Unsupported(f"`tf.{key}(data_format=...)` other than channels-last is not migrated")
        inputs = bound.pop("inputs")
        call_args = [cst.Arg(inputs)]
        if training is not None:
            param, default = training
            value = bound.pop(param, None)
            call_args.append(cst.Arg(value if value is not None else cst.Name(default), keyword=cst.Name("training"), equal=_EQ))
        scope_arg = bound.pop("scope", None)
        if scope_arg is not None and not (isinstance(scope_arg, cst.Name) and scope_arg.value == "None"):
            if not isinstance(scope_arg, cst.SimpleString):
                raise Unsupported(f"`tf.{key}(scope=...)` is not a string literal")
            base = str(scope_arg.evaluated_value)
        else:
            base = default_scope
        attr, tf1 = self.a.tf1_layer_name(base, self.scope)
        self.last_base = tf1[len(self.scope) + 1:] if self.scope else tf1  # the layer's name in its scope
        for keras_name, tf1_name in weight_names.items():
            self.a.tf1_names[f"{attr}/{keras_name}"] = f"{tf1}/{tf1_name}"
        if not weight_names and attr != tf1 and cls not in _WEIGHTLESS_LAYERS:
            self.a.tf1_names[attr] = tf1
        ctor: list[cst.Arg] = []
        for name, value in bound.items():
            if name in _CONTRIB_DROP:
                continue
            if name == "keep_prob":
                ctor.append(cst.Arg(cst.parse_expression(_one_minus(self.a.code(value))), keyword=cst.Name("rate"), equal=_EQ))
                continue
            if name == "biases_initializer" and isinstance(value, cst.Name) and value.value == "None":
                ctor.append(cst.Arg(cst.Name("False"), keyword=cst.Name("use_bias"), equal=_EQ))
                continue
            if name == "activation_fn" and isinstance(value, cst.Name) and value.value == "None":
                continue
            ctor.append(cst.Arg(value, keyword=cst.Name(renames.get(name, name)), equal=_EQ))
        for name, text in defaults.items():
            if name in bound:
                continue
            if name == "keep_prob":
                ctor.append(cst.Arg(cst.parse_expression(_one_minus(text)), keyword=cst.Name("rate"), equal=_EQ))
            elif text != "None":
                ctor.append(cst.Arg(cst.parse_expression(text.format(tf=self.a.tf)), keyword=cst.Name(renames.get(name, name)), equal=_EQ))
        self._add_layer(attr, cls, ctor)
        return cst.Call(func=cst.parse_expression(f"self.{attr}"), args=call_args)

    def _check_batch_norm(self, bound: dict[str, cst.BaseExpression]) -> None:
        """What of slim's batch_norm has a migration: updates in place (`updates_collections=None`)
        or through UPDATE_OPS; no activation, renorm, batch weights or zero-debiasing."""
        for name in ("activation_fn", "param_initializers", "param_regularizers", "batch_weights", "renorm", "adjustment"):
            value = bound.get(name)
            if value is not None and not (isinstance(value, cst.Name) and value.value in ("None", "False")):
                raise Unsupported(f"`slim.batch_norm({name}=...)` is not migrated yet")
        debias = bound.pop("zero_debias_moving_mean", None)
        if debias is not None and not (isinstance(debias, cst.Name) and debias.value == "False"):
            raise Unsupported("`slim.batch_norm(zero_debias_moving_mean=True)` is not migrated yet")
        for name in ("activation_fn", "param_initializers", "param_regularizers", "batch_weights", "renorm", "adjustment", "renorm_clipping", "renorm_decay"):
            bound.pop(name, None)
        collections = bound.pop("updates_collections", None)
        if collections is not None:
            if isinstance(collections, cst.Name) and collections.value == "None":
                # Updated in place: the moving statistics move whatever the train op depends on.
                bound["update_moving_statistics"] = cst.Name("True")
            elif self.a.canonical(collections) != "GraphKeys.UPDATE_OPS":
                raise Unsupported("`slim.batch_norm(updates_collections=...)` other than None or UPDATE_OPS")

    def _normalized(
        self, key: str, bound: dict[str, cst.BaseExpression], params: cst.BaseExpression | None
    ) -> cst.BaseExpression:
        """`slim.conv2d(x, 64, [3, 3], normalizer_fn=slim.batch_norm, normalizer_params={...})`: the
        layer without its bias or activation, then `<scope>/BatchNorm`, then the activation."""
        activation = bound.pop("activation_fn", None)
        if activation is None:
            activation = cst.parse_expression(CONTRIB_LAYERS[key][3].get("activation_fn", "None").format(tf=self.a.tf))
        bound["activation_fn"] = cst.Name("None")
        bound["biases_initializer"] = cst.Name("None")
        bound.pop("biases_regularizer", None)
        layer_call = self._contrib(key, cst.Call(func=cst.Name("_"), args=[cst.Arg(v, keyword=cst.Name(k)) for k, v in bound.items()]))
        params_dict = self.a.dict_value(params) if params is not None else cst.Dict([])
        if params_dict is None:
            raise Unsupported("`normalizer_params` is not a dict literal")
        norm_bound: dict[str, cst.BaseExpression] = {"inputs": layer_call}
        for element in params_dict.elements:  # type: ignore[attr-defined]
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                raise Unsupported("`normalizer_params` with non-literal keys")
            norm_bound[str(element.key.evaluated_value)] = element.value
        norm_bound["scope"] = cst.SimpleString(repr(f"{self.last_base}/BatchNorm"))
        normed = self._contrib(
            "contrib.layers.batch_norm",
            cst.Call(func=cst.Name("_"), args=[cst.Arg(v, keyword=cst.Name(k)) for k, v in norm_bound.items()]),
        )
        if isinstance(activation, cst.Name) and activation.value == "None":
            return normed
        return cst.Call(func=activation, args=[cst.Arg(normed)])

    def _add_layer(self, attr: str, cls: str, args: list[cst.Arg]) -> None:
        rendered = []
        for arg in args:
            value = arg.value.visit(_InitializerRewriter(self.a))
            text = self.a.code(value)
            rendered.append(f"{arg.keyword.value}={text}" if arg.keyword else text)
        if cls.startswith("runtime:"):
            func = f"{self.a.tfm}.{cls[len('runtime:'):]}"
            if (cls.endswith("BatchNormalization") or cls.endswith("SlimBatchNorm")) and not self.a.update_ops_dependency and not any(
                r.startswith("update_moving_statistics=") for r in rendered
            ):
                # No UPDATE_OPS dependency in the TF1 train op: its moving statistics never moved.
                rendered.append("update_moving_statistics=False")
        else:
            func = f"{self.a.tf}.keras.layers.{cls}"
        used = names_in(cst.parse_expression(f"{func}({', '.join(rendered)})"))
        self.layers.append((attr, used, (func, rendered)))


class _Effects(cst.CSTVisitor):
    """Whether an expression may do more than compute a value (a call, an await, a walrus, a yield)."""

    def __init__(self) -> None:
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Call, cst.Await, cst.NamedExpr, cst.Yield, cst.Lambda)):
            self.found = True
        return not self.found


def _call_free_local(line: cst.CSTNode) -> str | None:
    """`name` for a `name = <value without calls>` statement line, else None."""
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    assign = line.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    effects = _Effects()
    assign.value.visit(effects)
    return None if effects.found else assign.targets[0].target.value


def _drop_folded_locals(lines: list, keep: set[str]) -> list:
    """call() without the `name = <value without calls>` lines nothing in it reads any more.

    Every line of call() was needed by the TF1 forward pass; one that is read no longer had its
    uses folded away by the layer rewrite (slim's `normalizer_params=batch_norm_params` dict,
    now the `SlimBatchNorm` layers' arguments). Repeats until no such line is left.
    """
    while True:
        for index, line in enumerate(lines):
            name = _call_free_local(line)
            if name is None or name in keep:
                continue
            if any(name in names_in(other) for other in lines[:index] + lines[index + 1 :]):
                continue
            lines = lines[:index] + lines[index + 1 :]
            break
        else:
            return lines


_EQ = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _dropout_rate(call: cst.Call) -> cst.Call:
    """TF1's `tf.nn.dropout(x, keep_prob=k)` (or `tf.nn.dropout(x, k)`) -> `tf.nn.dropout(x, rate=1 - k)`."""
    args = list(call.args)
    for index, arg in enumerate(args):
        if (arg.keyword is not None and arg.keyword.value == "keep_prob") or (arg.keyword is None and index == 1):
            keep = arg.value
            if isinstance(keep, (cst.BinaryOperation, cst.UnaryOperation, cst.IfExp, cst.BooleanOperation)):
                keep = keep.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            value = cst.BinaryOperation(left=cst.Integer("1"), operator=cst.Subtract(
                whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")), right=keep)
            args[index] = arg.with_changes(keyword=cst.Name("rate"), value=value, equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            return call.with_changes(args=args)
    return call


def _attr_name(tf1: str) -> str:
    """A Python attribute name for a TF1 scope or variable name: `encoder/LayerNorm` -> `encoder_layer_norm`."""
    name = re.sub(r"(?<=[a-z])([A-Z])", r"_\1", tf1.replace("/", "_")).lower()
    return re.sub(r"\W+", "_", name).strip("_")


def _snake(cls: str) -> str:
    cls = cls.rsplit(".", 1)[-1]
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", cls).lower()
    return name.replace("conv1_d", "conv1d").replace("conv2_d", "conv2d").replace("conv3_d", "conv3d").replace(
        "pooling1_d", "pooling1d"
    ).replace("pooling2_d", "pooling2d").replace("pooling3_d", "pooling3d")


class _InitializerRewriter(cst.CSTTransformer):
    """`tf.constant_initializer(v)` -> `tf.keras.initializers.Constant(v)` inside layer arguments."""

    def __init__(self, analyzer: ModelFnAnalyzer) -> None:
        super().__init__()
        self.a = analyzer

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key in INITIALIZERS:
            cls, positional, defaults = INITIALIZERS[key]
            bound = _bind(updated, positional)
            if bound is None:
                raise Unsupported(f"unexpected arguments to `tf.{key}`")
            if key in _XAVIER and "uniform" in bound:
                uniform = bound["uniform"]
                if isinstance(uniform, cst.Name) and uniform.value == "True":
                    del bound["uniform"]
                else:
                    cls = "runtime:initializers.xavier_initializer"
            distribution = bound.get("distribution")
            if isinstance(distribution, cst.SimpleString) and distribution.evaluated_value == "normal":
                # TF1's "normal" was a truncated normal.
                bound["distribution"] = cst.SimpleString('"truncated_normal"')
            # Positional arguments stay positional while they line up with Keras's parameters.
            positional_ok = key not in _XAVIER
            args = []
            for arg in updated.args:
                name = arg.keyword.value if arg.keyword else positional[len(args)] if positional_ok else ""
                if arg.keyword is None and positional_ok and name not in _INITIALIZER_DROP:
                    args.append(self.a.code(bound[name]))
                    continue
                positional_ok = False
                break
            for name, value in list(bound.items())[len(args):]:
                if name not in _INITIALIZER_DROP:
                    args.append(f"{name}={self.a.code(value)}")
            args += [f"{k}={v}" for k, v in defaults.items() if k not in bound]
            if cls.startswith("runtime:"):
                return cst.parse_expression(f"{self.a.tfm}.{cls[len('runtime:'):]}({', '.join(args)})")
            return cst.parse_expression(f"{self.a.tf}.keras.initializers.{cls}({', '.join(args)})")
        if key in REGULARIZERS:
            cls, factor = REGULARIZERS[key]
            args = [a for a in updated.args if not (a.keyword and a.keyword.value == "scope")]
            if len(args) != 1:
                raise Unsupported(f"unexpected arguments to `tf.{key}`")
            value = self.a.code(args[0].value)
            value = f"{factor} * {value}" if factor else value
            return cst.parse_expression(f"{self.a.tf}.keras.regularizers.{cls}({value})")
        return updated


class _ArgScopeDefaults(cst.CSTTransformer):
    """Adds the enclosing `arg_scope`s' defaults to the calls of their functions, innermost scope
    first; arguments the call gives (by keyword or position) win, as in slim."""

    def __init__(self, analyzer: "ModelFnAnalyzer") -> None:
        self.a = analyzer

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        key = self.a.canonical(original.func)
        if key is None:
            return updated
        positional = CONTRIB_LAYERS[key][1] if key in CONTRIB_LAYERS else FUNCTIONAL_LAYERS.get(key, (None, ()))[1]
        bound = _bind(original, ("inputs",) + tuple(positional)) or {}
        given = set(bound) | {arg.keyword.value for arg in original.args if arg.keyword is not None}
        added: list[cst.Arg] = []
        for keys, defaults in reversed(self.a.arg_scopes):
            if key not in keys:
                continue
            for arg in defaults:
                if arg.keyword.value not in given:  # type: ignore[union-attr]
                    given.add(arg.keyword.value)  # type: ignore[union-attr]
                    added.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        if not added:
            return updated
        args = list(updated.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(args=args + added)


class _GradientRewriter(cst.CSTTransformer):
    """TF1 gradient code -> the same code on a `tf.GradientTape` and the model's Keras optimizer."""

    def __init__(self, analyzer: ModelFnAnalyzer, optimizers: set[str], global_steps: set[str]) -> None:
        super().__init__()
        self.a = analyzer
        self.optimizers = optimizers
        self.global_steps = global_steps
        self.uses_tf_gradients = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key == "trainable_variables":
            return cst.parse_expression("self.trainable_variables")
        if key == "gradients":
            self.uses_tf_gradients = True
            args = [a for a in updated.args if not a.keyword or a.keyword.value in ("ys", "xs")]
            if len(args) != 2:
                raise Unsupported("`tf.gradients` with arguments beyond (ys, xs)")
            return cst.Call(func=cst.parse_expression("tape.gradient"), args=[a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) for a in args])
        func = original.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in self.optimizers:
            method = func.attr.value
            if method == "compute_gradients":
                bound = _bind(updated, ("loss", "var_list"))
                if bound is None or "loss" not in bound:
                    raise Unsupported("`compute_gradients` with arguments beyond (loss, var_list)")
                loss = self.a.code(bound["loss"])
                variables = self.a.code(bound["var_list"]) if "var_list" in bound else "self.trainable_variables"
                return cst.parse_expression(f"list(zip(tape.gradient({loss}, {variables}), {variables}))")
            if method == "apply_gradients":
                bound = _bind(updated, ("grads_and_vars", "global_step", "name"))
                if bound is None or "grads_and_vars" not in bound:
                    raise Unsupported("unexpected arguments to `apply_gradients`")
                step = bound.get("global_step")
                if step is not None and not self.a._is_global_step(step, self.global_steps):
                    raise Unsupported("`apply_gradients(global_step=...)` is not the global step")
                return cst.parse_expression(f"self.optimizer.apply_gradients({self.a.code(bound['grads_and_vars'])})")
            raise Unsupported(f"`optimizer.{method}` in the gradient code")
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        # `train_op = self.optimizer.apply_gradients(...)`: the op is gone, the call stays.
        small = updated.body[0]
        if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
            func = small.value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "apply_gradients" and self.a.code(func.value) == "self.optimizer":
                return updated.with_changes(body=[cst.Expr(small.value)])
        return updated


class _GlobalStepRewriter(cst.CSTTransformer):
    """`tf.train.get_global_step()` inside a learning-rate computation -> the step parameter."""

    def __init__(self, analyzer: ModelFnAnalyzer, param: str) -> None:
        super().__init__()
        self.a = analyzer
        self.param = param

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.a.canonical(original.func) in GLOBAL_STEP_FNS:
            return cst.Name(self.param)
        return updated


def _called_with(line: cst.SimpleStatementLine, param: str) -> cst.SimpleStatementLine:
    """`lr = Schedule(...)` -> `lr = Schedule(...)(param)`: the schedule's value at the step."""
    assign = line.body[0]
    assert isinstance(assign, cst.Assign)
    return line.with_changes(body=[assign.with_changes(value=cst.Call(func=assign.value, args=[cst.Arg(cst.Name(param))]))])


class _VariableRefs(cst.CSTTransformer):
    """Names bound by `tf.get_variable` -> the model attributes holding the weights."""

    def __init__(self, analyzer: ModelFnAnalyzer) -> None:
        super().__init__()
        self.a = analyzer
        self.skip: set[int] = set()  # attribute names and keywords are not references

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.skip.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))
        return True

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        attr = self.a.variables.get(original.value)
        if attr is None or id(original) in self.skip:
            return updated
        return cst.Attribute(value=cst.Name("self"), attr=cst.Name(attr))


class _LossRewriter(_VariableRefs):
    """TF1 `tf.losses.*` calls in a loss that has no plain Keras form -> the runtime's TF1-faithful ones."""

    collection: list[str] = []  # the LOSSES collection as the statement being rewritten sees it

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.a.canonical(original.func)
        if key in LOSS_COLLECTION_READERS:
            bound = _bind(updated, ("add_regularization_losses", "name", "scope") if key == "losses.get_total_loss" else ("scope", "loss_collection"))
            if bound is None or "scope" in bound or "loss_collection" in bound:
                raise Unsupported(f"`tf.{key}` with a scope or collection is not migrated yet")
            names = ", ".join(self.collection)
            if key == "losses.get_losses":
                return cst.parse_expression(f"[{names}]")
            regularization = bound.get("add_regularization_losses")
            model = "" if isinstance(regularization, cst.Name) and regularization.value == "False" else ", self"
            if regularization is not None and not (isinstance(regularization, cst.Name) and regularization.value in ("True", "False")):
                raise Unsupported("`get_total_loss(add_regularization_losses=...)` is not a literal")
            return cst.parse_expression(f"{self.a.tfm}.losses.total_loss([{names}]{model})")
        if key == "losses.get_regularization_losses":
            if updated.args:
                raise Unsupported(f"`tf.{key}` with a scope is not migrated yet")
            return cst.parse_expression(f"{self.a.tfm}.losses.regularization_losses(self)")
        if key in REGULARIZATION_LOSS_FNS:
            if updated.args:
                raise Unsupported(f"`tf.{key}` with a scope is not migrated yet")
            return cst.parse_expression(f"{self.a.tfm}.losses.regularization_loss(self)")
        if key is not None and key.startswith("losses."):
            if key not in TF1_LOSS_FNS:
                raise Unsupported(f"`tf.{key}` is not migrated yet")
            return updated.with_changes(func=cst.parse_expression(f"{self.a.tfm}.{key}"))
        return updated
