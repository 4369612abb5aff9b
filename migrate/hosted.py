"""The hosted tier: TF1 estimator programs kept as written, on the runtime's graph-mode Estimator.

An Estimator/TPUEstimator site that the structural rules do not migrate to Keras still comes out
runnable: its model_fn stays as written and every estimator-family symbol is spelled from
`tfmigrate.runtime.estimator` (`tfm.estimator.X`, TF 2.15's `tf.compat.v1.estimator` namespace),
TF1 layers and RNN cells from `tfm.legacy` (TF 2.15's `tf.compat.v1.layers` /
`tf.compat.v1.nn.rnn_cell`; in a TF 1.x program `tfm.legacy.tf1_layers` / `tf1_rnn_cell`, with TF
1.x's default initializers). This module says which canonical TF1 symbols the hosted namespace
holds (TFM101 respells them) and how a hosted site is marked.
"""

from __future__ import annotations

from .rule import RUNTIME_ALIAS

# `tfm.estimator`'s namespace (canonical TF1 paths relative to `estimator.`).
_ESTIMATOR = frozenset(
    {
        "Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "TrainSpec", "EvalSpec", "train_and_evaluate",
        "Exporter", "LatestExporter", "FinalExporter", "BestExporter", "WarmStartSettings", "VocabInfo",
        "SessionRunHook", "SessionRunArgs", "LoggingTensorHook", "StopAtStepHook", "CheckpointSaverHook",
        "CheckpointSaverListener", "NanTensorHook", "StepCounterHook", "SummarySaverHook", "FeedFnHook",
        "FinalOpsHook", "GlobalStepWaiterHook", "ProfilerHook", "SecondOrStepTimer",
        "export.ServingInputReceiver", "export.TensorServingInputReceiver", "export.PredictOutput",
        "export.ClassificationOutput", "export.RegressionOutput", "export.build_raw_serving_input_receiver_fn",
        "export.build_parsing_serving_input_receiver_fn",
        "inputs.numpy_input_fn", "inputs.pandas_input_fn",
        "experimental.stop_if_no_decrease_hook", "experimental.stop_if_no_increase_hook",
        "experimental.make_early_stopping_hook", "experimental.stop_if_higher_hook", "experimental.stop_if_lower_hook",
        "tpu.TPUEstimator", "tpu.TPUEstimatorSpec", "tpu.RunConfig", "tpu.TPUConfig", "tpu.InputPipelineConfig",
        # (private to TF's estimator module, which programs imported it from to resume a schedule)
        "_load_global_step_from_checkpoint_dir",
    }
)
# Canned estimators the hosted tier takes (`tfm.estimator.DNNClassifier(..., api=...)`: estimator-shaped
# objects over the runtime's canned Keras models, TF feature columns converted).
HOSTED_CANNED = frozenset(
    {
        "DNNClassifier", "DNNRegressor", "LinearClassifier", "LinearRegressor", "DNNLinearCombinedClassifier",
        "DNNLinearCombinedRegressor", "BaselineClassifier", "BaselineRegressor",
    }
)
HOSTED_ESTIMATOR = frozenset(f"estimator.{name}" for name in _ESTIMATOR | HOSTED_CANNED)
# TF1's estimator modules, which `tfm.estimator` holds as modules too.
_ESTIMATOR_MODULES = frozenset({"estimator", "estimator.tpu", "estimator.export", "estimator.inputs", "estimator.experimental"})

# The estimator classes whose sites the hosted tier takes when the structural rules do not.
HOSTED_SITES = frozenset({"estimator.Estimator", "estimator.tpu.TPUEstimator"}) | frozenset(
    f"estimator.{name}" for name in HOSTED_CANNED
)

# `tfm.legacy.rnn_cell` (= `tf.compat.v1.nn.rnn_cell`): the cell classes, also reached as `tf.contrib.rnn.X`.
RNN_CELLS = frozenset(
    {
        "RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper",
        "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple",
    }
)
# `tf.contrib.rnn`'s functions that were tf.compat.v1.nn's.
_CONTRIB_RNN_FUNCTIONS = frozenset({"static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn"})


# tf.contrib layers whose TF1 variables the runtime's `tf1` functions make in graph mode too, and
# contrib.layers' training helper `optimize_loss` with its module's other names (TF 1.15's code,
# kept in tf-slim as `tf_slim.layers.optimizers`: `tfm.legacy.optimizers`).
_CONTRIB_LAYERS = {"contrib.layers.layer_norm": "tf1.layer_norm"} | {
    f"{home}.{name}": f"legacy.optimizers.{name}"
    for home in ("contrib.layers", "contrib.layers.python.layers.optimizers")
    for name in ("optimize_loss", "adaptive_clipping_fn", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES")
}


# TF1's `tf.contrib.slim` and the layer functions of `tf.contrib.layers` went to tf-slim, which runs
# them in TF1 graph mode on current TF (`tfm.legacy.slim`): what `tf.contrib.layers` also held
# (feature columns, summaries) tf-slim does not have, and keeps its TODO (`optimize_loss`: above).
_SLIM_LAYERS = frozenset(
    {
        "avg_pool2d", "avg_pool3d", "batch_norm", "bias_add", "conv1d", "conv2d", "conv2d_in_plane",
        "conv2d_transpose", "conv3d", "conv3d_transpose", "convolution", "convolution1d", "convolution2d",
        "convolution2d_in_plane", "convolution2d_transpose", "convolution3d", "convolution3d_transpose", "dropout",
        "elu", "flatten", "fully_connected", "gdn", "images_to_sequence", "linear", "max_pool2d", "max_pool3d",
        "maxout", "one_hot_encoding", "pool", "relu", "relu6", "repeat", "separable_conv2d",
        "separable_convolution2d", "softmax", "spatial_softmax", "stack", "unit_norm", "l1_regularizer",
        "l2_regularizer", "l1_l2_regularizer", "sum_regularizer", "apply_regularization", "arg_scope",
        "add_arg_scope", "current_arg_scope",
        # slim's variable helpers (tf_slim.ops.variables)
        "get_variables", "get_model_variables", "get_local_variables", "get_trainable_variables",
        "get_variables_to_restore", "get_variables_by_suffix", "get_variables_by_name", "get_unique_variable",
        "variable", "model_variable", "local_variable", "global_variable", "add_model_variable",
        "assign_from_checkpoint", "assign_from_checkpoint_fn", "assign_from_values", "assign_from_values_fn",
        "get_variable_full_name", "filter_variables",
        # slim's modules: data decoding and providers, nets (tfm.legacy.slim imports tf_slim.nets), training
        "tfexample_decoder", "data_decoder", "data_provider", "dataset", "dataset_data_provider",
        "parallel_reader", "prefetch_queue", "nets", "losses", "learning", "evaluation", "summaries", "queues",
        "model_analyzer", "metrics", "utils", "get_or_create_global_step",
    }
)
# What tf.contrib.framework shared with slim: arg scopes and the variable helpers.
_FRAMEWORK_NAMES = frozenset(
    {
        "arg_scope", "add_arg_scope", "current_arg_scope", "get_variables", "get_model_variables",
        "get_local_variables", "get_trainable_variables", "get_variables_to_restore", "get_variables_by_suffix",
        "get_variables_by_name", "get_unique_variable", "variable", "model_variable", "local_variable",
        "global_variable", "add_model_variable", "assign_from_checkpoint", "assign_from_checkpoint_fn",
        "assign_from_values", "assign_from_values_fn", "filter_variables",
    }
)
# (`canonical_name` folds `contrib.slim` into `contrib.layers`, so slim's own names are looked up there;
# `contrib.slim.python.slim.X` arrives as `contrib.layers.python.slim.X`; its data modules are under
# `python.slim.data`, which tf-slim exports at its top as slim did.)
_SLIM_HOMES = ("contrib.layers.", "contrib.layers.python.layers.layers.", "contrib.layers.python.slim.",
               "contrib.layers.python.slim.data.", "contrib.framework.", "contrib.framework.python.ops.")


def _contrib_summary_symbol(parts: list[str]) -> tuple[str, str] | None:
    """`tfm.legacy.contrib_summary[.X]` for `contrib.summary[.X]` (TF 1.15's names, same functions), and
    `tfm.legacy.contrib_deprecated[.X]` for `contrib.deprecated[.X]` (the pre-1.0 `*_summary` functions)."""
    if parts[:2] == ["contrib", "summary"]:
        return f"{RUNTIME_ALIAS}.legacy.contrib_summary", ".".join(parts[2:])
    if parts[:2] == ["contrib", "deprecated"] and (len(parts) == 2 or parts[2] in _CONTRIB_DEPRECATED):
        return f"{RUNTIME_ALIAS}.legacy.contrib_deprecated", ".".join(parts[2:])
    return None


def _contrib_metrics_symbol(parts: list[str]) -> tuple[str, str] | None:
    """`tfm.legacy.slim.metrics[.X]` for `contrib.metrics[.X]`: TF 1.15's streaming metrics, which
    tf-slim kept (`tf_slim.metrics`). contrib's aliases of core TF (`confusion_matrix`, `set_*`) are
    TFM101's `RUNTIME_SYMBOLS`."""
    if parts[:2] == ["contrib", "metrics"] and (len(parts) == 2 or parts[2] in _SLIM_METRICS):
        return f"{RUNTIME_ALIAS}.legacy.slim.metrics", ".".join(parts[2:])
    return None


# tf_slim.metrics' names: TF 1.15's tf.contrib.metrics less its aliases of core TF.
_SLIM_METRICS = frozenset(
    """
    accuracy aggregate_metric_map aggregate_metrics auc_using_histogram auc_with_confidence_intervals
    cohen_kappa count f1_score precision_at_recall precision_recall_at_equal_thresholds recall_at_precision
    sparse_recall_at_top_k streaming_accuracy streaming_auc streaming_concat streaming_covariance
    streaming_curve_points streaming_dynamic_auc streaming_false_negative_rate
    streaming_false_negative_rate_at_thresholds streaming_false_negatives streaming_false_negatives_at_thresholds
    streaming_false_positive_rate streaming_false_positive_rate_at_thresholds streaming_false_positives
    streaming_false_positives_at_thresholds streaming_mean streaming_mean_absolute_error
    streaming_mean_cosine_distance streaming_mean_iou streaming_mean_relative_error streaming_mean_squared_error
    streaming_mean_tensor streaming_pearson_correlation streaming_percentage_less streaming_precision
    streaming_precision_at_thresholds streaming_recall streaming_recall_at_k streaming_recall_at_thresholds
    streaming_root_mean_squared_error streaming_sensitivity_at_specificity streaming_sparse_average_precision_at_k
    streaming_sparse_average_precision_at_top_k streaming_sparse_precision_at_k streaming_sparse_precision_at_top_k
    streaming_sparse_recall_at_k streaming_specificity_at_sensitivity streaming_true_negatives
    streaming_true_negatives_at_thresholds streaming_true_positives streaming_true_positives_at_thresholds
    """.split()
)


# (runtime/legacy.py's CONTRIB_DEPRECATED: the codemod never imports the runtime.)
_CONTRIB_DEPRECATED = frozenset(
    {"audio_summary", "histogram_summary", "image_summary", "merge_all_summaries", "merge_summary", "scalar_summary"}
)


# TF 1.x's tf.contrib.crf functions (runtime/crf.py's __all__: `tfm.legacy.crf.<name>`).
_CONTRIB_CRF = frozenset({
    "crf_binary_score", "crf_decode", "crf_log_likelihood", "crf_log_norm", "crf_multitag_sequence_score",
    "crf_sequence_score", "crf_unary_score", "viterbi_decode",
})


# TF 1.x's tf.contrib.predictor: `from_saved_model` (runtime/predictor.py: `tfm.legacy.predictor`).
_CONTRIB_PREDICTOR = frozenset({"from_saved_model"})
# contrib modules the runtime rebuilt whole under `tfm.legacy.<module>`: the names each has, and
# the implementation module TF1 programs also imported them from.
_CONTRIB_REBUILT = {
    "crf": (_CONTRIB_CRF, ["python", "ops", "crf"]),
    "predictor": (_CONTRIB_PREDICTOR, ["python", "predictor", "predictor_factories"]),
}


def _contrib_rebuilt_symbol(parts: list[str]) -> tuple[str, str] | None:
    """`tfm.legacy.<module>[.X]` for `contrib.<module>[.X]` (crf, predictor; also reached through
    their implementation module, `contrib.crf.python.ops.crf.X`)."""
    if parts[0] != "contrib" or len(parts) < 2 or parts[1] not in _CONTRIB_REBUILT:
        return None
    names, implementation = _CONTRIB_REBUILT[parts[1]]
    inside = parts[2 : 2 + len(implementation)] == implementation
    rest = parts[2 + len(implementation) :] if inside else parts[2:]
    if (not inside and rest[:1] == ["python"]) or (rest and rest[0] not in names):
        return None
    return f"{RUNTIME_ALIAS}.legacy.{parts[1]}", ".".join(rest)


# TF 1.x's fused LSTM classes of tf.contrib.rnn (runtime/fused_rnn.py's __all__: `tfm.legacy.fused_rnn.<name>`).
_FUSED_RNN = frozenset({"LSTMBlockFusedCell", "TimeReversedFusedRNN"})


# contrib.layers' modules that tf-slim kept under `tf_slim.layers` as TF 1.15 had them
# (runtime/legacy.py's CONTRIB_LAYER_MODULES: `tfm.legacy.contrib_layers.<module>`).
_SLIM_LAYER_MODULES = frozenset({
    "utils", "summaries", "regularizers", "initializers", "normalization", "rev_block_lib", "sparse_ops",
})


def _slim_symbol(parts: list[str]) -> tuple[str, str] | None:
    """`tfm.legacy.slim[.X]` for a TF1 slim chain (`contrib.slim...`, a slim layer of `contrib.layers`)."""
    if parts[:2] == ["contrib", "slim"]:
        return f"{RUNTIME_ALIAS}.legacy.slim", ".".join(parts[2:])
    if parts[:4] == ["contrib", "layers", "python", "layers"] and len(parts) > 4 and parts[4] in _SLIM_LAYER_MODULES:
        # `from tensorflow.contrib.layers.python.layers import utils`: tf-slim's `tf_slim.layers.utils`
        return f"{RUNTIME_ALIAS}.legacy.contrib_layers.{parts[4]}", ".".join(parts[5:])
    for home in _SLIM_HOMES:
        prefix = home.rstrip(".").split(".")
        if parts[: len(prefix)] == prefix and len(parts) > len(prefix) and parts[len(prefix)] in _SLIM_LAYERS:
            name = parts[len(prefix)]
            if home.startswith("contrib.framework") and name not in _FRAMEWORK_NAMES:
                return None
            rest = parts[len(prefix) + 1 :]
            if name == "summaries" and rest[:1] and rest[0].startswith("summarize_"):
                # `contrib.layers.summaries.summarize_activation`: contrib.layers' summaries module
                # (tf-slim's `tf_slim.layers.summaries`), not slim's (`add_scalar_summary`...),
                # which `canonical_name`'s fold of contrib.slim into contrib.layers spells alike.
                return f"{RUNTIME_ALIAS}.legacy.contrib_layers.summaries", ".".join(rest)
            return f"{RUNTIME_ALIAS}.legacy.slim.{name}", ".".join(rest)
    return None


def hosted_symbol(canonical: str, tf1_program: bool = False) -> tuple[str, str] | None:
    """(new head, rest) for a canonical TF1 chain the hosted tier spells from the runtime (or from
    current TF's `tf.compat.v1`, as `tf:compat.v1...`), longest prefix first; else None.
    `tf1_program`: TF 1.x's layers and cells (`tfm.legacy.tf1_layers`, `tf1_rnn_cell`: TF 1.x's
    graph-seeded default initializers), not TF 2.x's `tf.compat.v1` ones."""
    parts = canonical.split(".")
    layers, cells = ("legacy.tf1_layers", "legacy.tf1_rnn_cell") if tf1_program else ("legacy.layers", "legacy.rnn_cell")
    if canonical in _CONTRIB_LAYERS or canonical.startswith(tuple(f"{key}." for key in _CONTRIB_LAYERS)):
        pass  # the runtime's own (tfm.tf1) wins over tf-slim's
    elif parts[0] == "contrib":
        if parts[1:2] == ["keras"]:  # TF 1.x's `tf.contrib.keras` was its `tf.keras` (TFM105 then says which Keras)
            return "tf:keras", ".".join(parts[2:])
        found = (_slim_symbol(parts) or _contrib_summary_symbol(parts) or _contrib_metrics_symbol(parts)
                 or _contrib_rebuilt_symbol(parts))
        if found is not None:
            return found
    if canonical in _ESTIMATOR_MODULES:
        return f"{RUNTIME_ALIAS}.{canonical}", ""  # the module as a value (`hasattr(tf.estimator, "BestExporter")`)
    if canonical == "layers":
        return f"{RUNTIME_ALIAS}.{layers}", ""  # the module as a value (`mock.patch.object(tf.layers, ...)`)
    if canonical == "nn.rnn_cell":
        return f"{RUNTIME_ALIAS}.{cells}", ""
    for end in range(len(parts), 0, -1):
        head, rest = ".".join(parts[:end]), ".".join(parts[end:])
        if head in _CONTRIB_LAYERS:
            return f"{RUNTIME_ALIAS}.{_CONTRIB_LAYERS[head]}", rest
        if head in HOSTED_ESTIMATOR:
            return f"{RUNTIME_ALIAS}.{head}", rest
        if end == 2 and parts[0] == "layers":
            return f"{RUNTIME_ALIAS}.{layers}.{parts[1]}", rest
        if end == 3 and head.startswith("nn.rnn_cell.") and parts[2] in RNN_CELLS:
            return f"{RUNTIME_ALIAS}.{cells}.{parts[2]}", rest
        if end == 6 and parts[:5] == ["contrib", "rnn", "python", "ops", "core_rnn_cell"] and parts[5] in RNN_CELLS:
            # the core cells through contrib.rnn's module of them (`rnn.python.ops.core_rnn_cell.RNNCell`,
            # TF 1.x's `rnn_cell_impl.RNNCell`; TF 1.0-1.2's had the state tuples too)
            return f"{RUNTIME_ALIAS}.{cells}.{parts[5]}", rest
        if end == 3 and head.startswith("contrib.rnn."):
            if parts[2] in _FUSED_RNN:
                return f"{RUNTIME_ALIAS}.legacy.fused_rnn.{parts[2]}", rest
            if parts[2] in RNN_CELLS:
                return f"{RUNTIME_ALIAS}.{cells}.{parts[2]}", rest
            if parts[2] in _CONTRIB_RNN_FUNCTIONS:
                return f"tf:compat.v1.nn.{parts[2]}", rest
    return None


def site_note(estimator: str, reason: str, graph_mode: list[str] | None = None) -> str:
    """The comment above a site the hosted tier takes: on the strategy tier (the model_fn as
    written, in TF2), or where `graph_mode` says why (`runtime_tier.graph_mode_reasons`), with
    calls in TF1 graph mode."""
    reason = reason[0].lower() + reason[1:] if reason else reason
    if graph_mode:
        where = f"in TF1 graph mode where TF2 cannot run it as TF 1.x did ({'; '.join(graph_mode)})"
    else:
        where = "in TF2 inside the strategy's tf.function"
    return (
        f"# tfmigrate: this {estimator} runs on `{RUNTIME_ALIAS}.estimator` with the model_fn as written, {where}, "
        f"not as a Keras model: {reason}"
    )


def kept_model_note(estimator: str, reason: str) -> str:
    """The comment above a kept model_fn's site written as `tfm.ModelFnModel` (`kept_model`)."""
    reason = reason[0].lower() + reason[1:] if reason else reason
    return (
        f"# tfmigrate: this {estimator}'s model_fn runs as written, in TF2 inside the strategy's tf.function "
        f"(`{RUNTIME_ALIAS}.ModelFnModel`), not rewritten into Keras: {reason}"
    )


def canned_note(reason: str) -> str:
    """The comment above a canned estimator kept where the program keeps it."""
    reason = reason[0].lower() + reason[1:] if reason else reason
    return (
        f"# tfmigrate: this canned estimator is `{RUNTIME_ALIAS}.estimator`'s (an estimator-shaped object over the "
        f"runtime's canned Keras model, TF feature columns converted), not migrated in place: {reason}"
    )


# Modules TF1 programs imported estimator names from, and the hosted namespace each maps to
# (`from tensorflow.python.estimator.model_fn import ModeKeys`, `from tensorflow.contrib.tpu import
# TPUEstimator`): the names land in `tfmigrate.runtime.estimator` / `.estimator.tpu` / `.export`.
ESTIMATOR_MODULE_HOMES = (
    (("tensorflow.contrib.tpu", "tensorflow.estimator.tpu", "tensorflow.compat.v1.estimator.tpu",
      "tensorflow_estimator.python.estimator.tpu"), "estimator.tpu"),
    (("tensorflow.estimator.export", "tensorflow.compat.v1.estimator.export",
      "tensorflow.python.estimator.export", "tensorflow_estimator.python.estimator.export"), "estimator.export"),
    (("tensorflow.estimator", "tensorflow.compat.v1.estimator", "tensorflow.python.estimator",
      "tensorflow_estimator.python.estimator", "tensorflow_estimator"), "estimator"),
)


def hosted_import_home(module: str, names: list[str]) -> str | None:
    """The hosted module (`estimator`, `estimator.tpu`, `estimator.export`) holding every one of
    `names` imported from the TF1 estimator module `module`, or None."""
    for prefixes, home in ESTIMATOR_MODULE_HOMES:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            if all(hosted_symbol(f"{home}.{name}") == (f"{RUNTIME_ALIAS}.{home}.{name}", "") for name in names):
                return home
            return None
    return None
