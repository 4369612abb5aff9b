"""TF1 -> TF2 facts the model_fn analysis reads: TF1 layers (functional, class and
`tf.contrib.layers`/slim), `tf.get_variable`, initializers and regularizers, optimizers, losses,
learning-rate schedules, summaries, metrics, and the EstimatorSpec keys that are migrated.

Data only (and the few lines that derive one table from another); what is done with them lives
in the concern modules beside this one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..user_optimizers import ADAM_WEIGHT_DECAY
from .plan import MODEL_PLACEHOLDER


# Calls that make a helper function part of the model (it is inlined into model_fn).
MODEL_BUILDING_PREFIXES = (
    "layers.", "keras.layers.", "contrib.", "train.", "losses.", "metrics.", "summary.", "estimator.", "tpu.",
)
MODEL_BUILDING = {
    "get_variable", "variable_scope", "name_scope", "trainable_variables", "gradients", "get_collection",
    "add_to_collection", "clip_by_global_norm", "global_variables",
}

# TF1 reads of the graph's variable collections, which a Keras model has no counterpart of
# (`trainable_variables` has: the model's own, syntax.collection_read).
VARIABLE_COLLECTIONS = frozenset({
    "global_variables", "all_variables", "local_variables", "model_variables", "moving_average_variables",
    "get_collection", "get_collection_ref",
})

# Attributes and methods of a Keras 3 `keras.Model` (its `dir()`, and what its `__init__`/`compile`
# set): a layer or weight attribute of the generated model must not take one of these names (a TF1
# layer named 'output' made `self.output = ...`: "property 'output' has no setter").
KERAS_MODEL_ATTRIBUTES = frozenset({
    "add_loss", "add_metric", "add_variable", "add_weight", "build", "build_from_config", "call", "compile",
    "compile_from_config", "compiled_loss", "compiled_metrics", "compute_dtype", "compute_loss", "compute_mask",
    "compute_metrics", "compute_output_shape", "compute_output_spec", "count_params", "distribute_reduction_method",
    "distribute_strategy", "dtype", "dtype_policy", "evaluate", "export", "fit", "from_config", "get_build_config",
    "get_compile_config", "get_config", "get_layer", "get_metrics_result", "get_quantization_layer_structure",
    "get_state_tree", "get_weights", "input", "input_dtype", "input_spec", "jit_compile", "layers",
    "load_own_variables", "load_weights", "loss", "losses", "make_predict_function", "make_test_function",
    "make_train_function", "metrics", "metrics_names", "metrics_variables", "non_trainable_variables",
    "non_trainable_weights", "output", "path", "predict", "predict_on_batch", "predict_step", "quantization_mode",
    "quantize", "quantized_build", "quantized_call", "rematerialized_call", "reset_metrics", "run_eagerly", "save",
    "save_own_variables", "save_weights", "set_state_tree", "set_weights", "stateless_call", "stateless_compute_loss",
    "summary", "supports_masking", "symbolic_call", "test_on_batch", "test_step", "to_json", "train_on_batch",
    "train_step", "trainable", "trainable_variables", "trainable_weights", "variable_dtype", "variables", "weights",
    # instance attributes, and what the generated model defines itself
    "name", "built", "optimizer", "inputs", "outputs", "history", "stop_training", "steps_per_execution",
    "loss_tracker", "apply_tf1_gradients", "evaluation_hooks",
})

# Modules whose functions build no TF graph. A call in the forward pass into any other imported
# module (not TensorFlow's) may create TF1 variables the codemod cannot see (BERT's `modeling`).
PLAIN_MODULES = frozenset({
    "__future__", "absl", "collections", "copy", "functools", "itertools", "json", "logging", "math", "numpy", "os",
    "random", "re", "six", "string", "sys", "time", "typing", "tensorflow", "tf_slim", "tfmigrate",
})
# TF1 functional layers -> the runtime's functional forms (`tfm.tf1.*`), inside scoped code.
SCOPED_LAYERS = {
    "layers.dense": "dense", "layers.conv2d": "conv2d", "layers.dropout": "dropout",
    "contrib.layers.layer_norm": "layer_norm",
}


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
# TF1's RNN drivers, which call a TF1 cell (its variables made on the first call): the model_fn is hosted.
TF1_RNN_FUNCTIONS = frozenset({
    "nn.dynamic_rnn", "nn.bidirectional_dynamic_rnn", "nn.static_rnn", "nn.static_bidirectional_rnn",
    "nn.static_state_saving_rnn", "nn.raw_rnn",
})
FEATURE_COLUMN_LAYERS = frozenset({"feature_column.input_layer", "feature_column.linear_model"})
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
WEIGHTLESS_LAYERS = {
    "Dropout", "Flatten", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
    "AveragePooling3D",
}


CONTRIB_DROP = {"reuse", "variables_collections", "outputs_collections", "scope", "data_format", "normalizer_params"}

# `tf.get_variable(name, shape, ...)` parameters, in order; the ones Keras's `add_weight` lacks
# change nothing a migrated model computes (collections, devices, partitioning).
GET_VARIABLE_PARAMS = (
    "name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections", "caching_device",
    "partitioner", "validate_shape", "use_resource", "custom_getter", "constraint", "synchronization", "aggregation",
)
GET_VARIABLE_DROP = {"collections", "caching_device", "partitioner", "validate_shape", "use_resource", "synchronization"}
VARIABLE_SCOPES = {"variable_scope"}
NAME_SCOPES = {"name_scope"}

# TF1 arguments of layer constructors that have no Keras 3 counterpart.
LAYER_DROP = {"reuse", "_reuse"}
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
XAVIER = frozenset(
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
INITIALIZER_DROP = {"dtype", "verify_shape"}

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
OPTIMIZER_DROP = {"use_locking", "name", "accum_name", "linear_name"}


def keras_optimizer_args(bound: dict, renames: dict[str, str], spelled: dict[str, str], code: Callable[[Any], str]) -> list[str]:
    """The `name=value` arguments of the Keras optimizer for a TF1 optimizer call whose arguments
    are `bound` (name -> expression, `code` spells one; its `learning_rate` is popped): the
    learning rate first, TF1-only arguments dropped, `renames` applied, and the TF1 defaults
    Keras does not share (`spelled`, an `OPTIMIZERS` entry's) written out."""
    args: list[str] = []
    if "learning_rate" in bound:
        args.append(f"learning_rate={code(bound.pop('learning_rate'))}")
    elif "learning_rate" in spelled:
        args.append(f"learning_rate={spelled['learning_rate']}")
    for name, expr in bound.items():
        if name not in OPTIMIZER_DROP:
            args.append(f"{renames.get(name, name)}={code(expr)}")
    for name, default in spelled.items():
        if name != "learning_rate" and name not in bound:
            args.append(f"{name}={default}")
    return args

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
SUMMARY_DROP = {"collections", "family", "bad_color", "description"}
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
METRIC_DROP = {"metrics_collections", "updates_collections", "name"}
GLOBAL_STEP_FNS = {"train.get_global_step", "train.get_or_create_global_step"}
MODE_TRAIN = {"estimator.ModeKeys.TRAIN"}
MODE_ANY = {"estimator.ModeKeys.TRAIN", "estimator.ModeKeys.EVAL", "estimator.ModeKeys.PREDICT"}
