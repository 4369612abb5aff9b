"""TFM401: canned estimators + feature columns -> the runtime's Keras canned models and columns."""

from __future__ import annotations

import ast

from tfmigrate.cst_on_demand import Transformer, Visitor, cst

from tfmigrate import ctl_codegen
from tfmigrate.hosted import HOSTED_CANNED, canned_note
from tfmigrate.estimator.tables import OPTIMIZERS, keras_optimizer_args
from tfmigrate.estimator_scan import Site, fresh_name
from tfmigrate.estimator_sites import EstimatorSiteRule
from tfmigrate.names import ast_dotted, dotted, names_in
from tfmigrate.parsing import index_by_type, parse
from tfmigrate.rule import RUNTIME_ALIAS, RUNTIME_MODULE
from tfmigrate.textpass import SourceView, TextPlan
from tfmigrate.cst_walk import walk

_DNN_V2 = ("hidden_units", "feature_columns", "model_dir")
# Constructor parameters in TF 2.15's order (positional arguments are bound by them).
_SIGNATURES: dict[str, dict[str, tuple[str, ...]]] = {
    "v2": {
        "DNNClassifier": (*_DNN_V2, "n_classes", "weight_column", "label_vocabulary", "optimizer", "activation_fn",
                          "dropout", "config", "warm_start_from", "loss_reduction", "batch_norm"),
        "DNNRegressor": (*_DNN_V2, "label_dimension", "weight_column", "optimizer", "activation_fn", "dropout",
                         "config", "warm_start_from", "loss_reduction", "batch_norm"),
        "LinearClassifier": ("feature_columns", "model_dir", "n_classes", "weight_column", "label_vocabulary",
                             "optimizer", "config", "warm_start_from", "loss_reduction", "sparse_combiner"),
        "LinearRegressor": ("feature_columns", "model_dir", "label_dimension", "weight_column", "optimizer", "config",
                            "warm_start_from", "loss_reduction", "sparse_combiner"),
        "DNNLinearCombinedClassifier": ("model_dir", "linear_feature_columns", "linear_optimizer",
                                        "dnn_feature_columns", "dnn_optimizer", "dnn_hidden_units",
                                        "dnn_activation_fn", "dnn_dropout", "n_classes", "weight_column",
                                        "label_vocabulary", "config", "warm_start_from", "loss_reduction",
                                        "batch_norm", "linear_sparse_combiner"),
        "DNNLinearCombinedRegressor": ("model_dir", "linear_feature_columns", "linear_optimizer",
                                       "dnn_feature_columns", "dnn_optimizer", "dnn_hidden_units",
                                       "dnn_activation_fn", "dnn_dropout", "label_dimension", "weight_column",
                                       "config", "warm_start_from", "loss_reduction", "batch_norm",
                                       "linear_sparse_combiner"),
        "BaselineClassifier": ("model_dir", "n_classes", "weight_column", "label_vocabulary", "optimizer", "config",
                               "loss_reduction"),
        "BaselineRegressor": ("model_dir", "label_dimension", "weight_column", "optimizer", "config", "loss_reduction"),
    },
    "v1": {
        "DNNClassifier": (*_DNN_V2, "n_classes", "weight_column", "label_vocabulary", "optimizer", "activation_fn",
                          "dropout", "input_layer_partitioner", "config", "warm_start_from", "loss_reduction",
                          "batch_norm"),
        "DNNRegressor": (*_DNN_V2, "label_dimension", "weight_column", "optimizer", "activation_fn", "dropout",
                         "input_layer_partitioner", "config", "warm_start_from", "loss_reduction", "batch_norm"),
        "LinearClassifier": ("feature_columns", "model_dir", "n_classes", "weight_column", "label_vocabulary",
                             "optimizer", "config", "partitioner", "warm_start_from", "loss_reduction",
                             "sparse_combiner"),
        "LinearRegressor": ("feature_columns", "model_dir", "label_dimension", "weight_column", "optimizer", "config",
                            "partitioner", "warm_start_from", "loss_reduction", "sparse_combiner"),
        "DNNLinearCombinedClassifier": ("model_dir", "linear_feature_columns", "linear_optimizer",
                                        "dnn_feature_columns", "dnn_optimizer", "dnn_hidden_units",
                                        "dnn_activation_fn", "dnn_dropout", "n_classes", "weight_column",
                                        "label_vocabulary", "input_layer_partitioner", "config", "warm_start_from",
                                        "loss_reduction", "batch_norm", "linear_sparse_combiner"),
        "DNNLinearCombinedRegressor": ("model_dir", "linear_feature_columns", "linear_optimizer",
                                       "dnn_feature_columns", "dnn_optimizer", "dnn_hidden_units",
                                       "dnn_activation_fn", "dnn_dropout", "label_dimension", "weight_column",
                                       "input_layer_partitioner", "config", "warm_start_from", "loss_reduction",
                                       "batch_norm", "linear_sparse_combiner"),
        "BaselineClassifier": ("model_dir", "n_classes", "weight_column", "label_vocabulary", "optimizer", "config",
                               "loss_reduction"),
        "BaselineRegressor": ("model_dir", "label_dimension", "weight_column", "optimizer", "config", "loss_reduction"),
    },
}
# Arguments the Keras model does not take: `tfm.fit`/`evaluate` get `model_dir`/`config`; the
# runtime's checkpoint loader joins partitioned variables, so partitioners have nothing to do.
_SITE_ONLY = {"model_dir", "config", "input_layer_partitioner", "partitioner"}

# Estimators with no faithful Keras form: a precise TODO, never a different model.
_NO_KERAS = {
    "BoostedTreesClassifier": "gradient-boosted trees have no Keras form that reproduces TF1's: TensorFlow Decision "
    "Forests' `tfdf.keras.GradientBoostedTreesModel` is the maintained replacement (its own tree algorithm and "
    "hyper-parameters: retrain and re-validate), or keep this program on TF <= 2.15",
    "BoostedTreesRegressor": "gradient-boosted trees have no Keras form that reproduces TF1's: TensorFlow Decision "
    "Forests' `tfdf.keras.GradientBoostedTreesModel(task=tfdf.keras.Task.REGRESSION)` is the maintained replacement "
    "(its own tree algorithm: retrain and re-validate), or keep this program on TF <= 2.15",
    "BoostedTreesEstimator": "gradient-boosted trees with a custom head have no Keras form: TensorFlow Decision "
    "Forests (`tfdf.keras.GradientBoostedTreesModel`) is the maintained replacement (retrain and re-validate)",
    "DNNEstimator": "an estimator with a custom `head` is not migrated: build the same network with "
    "`tfm.canned.DNNRegressor`/`DNNClassifier` when the head is a plain regression/classification head, or "
    "write the head's loss and metrics in a Keras model",
    "LinearEstimator": "an estimator with a custom `head` is not migrated: use `tfm.canned.LinearRegressor`/"
    "`LinearClassifier` when the head is a plain one, or write the head's loss and metrics in a Keras model",
    "DNNLinearCombinedEstimator": "an estimator with a custom `head` is not migrated: use "
    "`tfm.canned.DNNLinearCombinedRegressor`/`Classifier` when the head is a plain one",
    "BaselineEstimator": "an estimator with a custom `head` is not migrated: use `tfm.canned.BaselineRegressor`/"
    "`BaselineClassifier` when the head is a plain one",
    "experimental.KMeans": "KMeans has no Keras form: use scikit-learn's KMeans or write the Lloyd iterations in TF2",
    "experimental.RNNClassifier": "RNNClassifier (sequence feature columns) is not migrated: build a Keras RNN over "
    "the sequence features",
    "experimental.RNNEstimator": "RNNEstimator (sequence feature columns) is not migrated: build a Keras RNN over "
    "the sequence features",
}

_COLUMNS = {
    "numeric_column",
    "bucketized_column",
    "categorical_column_with_vocabulary_list",
    "categorical_column_with_vocabulary_file",
    "categorical_column_with_identity",
    "categorical_column_with_hash_bucket",
    "indicator_column",
    "embedding_column",
    "crossed_column",
    "weighted_categorical_column",
    "shared_embedding_columns",
    "shared_embeddings",
    "make_parse_example_spec",
}
_COLUMN_TODO = {
    "input_layer": "this file's feature columns are the runtime's now (`tfm.feature_columns`), and TF's "
    "`feature_column.input_layer` takes only TF's (it is migrated inside a model_fn that TFM201 turns into a Keras "
    "model, not here): build `tfm.feature_columns.InputLayer(columns)` in the Keras model (same columns, same TF1 "
    "variable names under `input_layer/`) and call it on the features",
    "linear_model": "this file's feature columns are the runtime's now (`tfm.feature_columns`), and TF's "
    "`feature_column.linear_model` takes only TF's (it is migrated inside a model_fn that TFM201 turns into a Keras "
    "model, not here): build `tfm.feature_columns.LinearModel(columns, units)` in the Keras model and call it on the "
    "features",
}
_REDUCTIONS = {
    "SUM": "SUM",
    "SUM_OVER_BATCH_SIZE": "SUM_OVER_BATCH_SIZE",
    "AUTO": "SUM_OVER_BATCH_SIZE",
    "MEAN": "MEAN",
    "SUM_BY_NONZERO_WEIGHTS": "SUM_BY_NONZERO_WEIGHTS",
    "SUM_OVER_NONZERO_WEIGHTS": "SUM_BY_NONZERO_WEIGHTS",
}


class _Unsupported(Exception):
    pass


class CannedEstimatorsToKeras(EstimatorSiteRule):
    """Rewrite premade (canned) estimators and their feature columns into the runtime's Keras forms.

    `tf.estimator.DNNClassifier(...)` and the other canned classes (v1 `tf.compat.v1.estimator.*`
    and v2 `tf.estimator.*`) become `tfm.canned.<Class>(..., api="v1"|"v2")`, a compiled Keras
    model with the same hyper-parameters, the head's loss reduction, metrics and predictions, each
    flavour's optimizer defaults and the estimator's TF1 variable names (an Estimator `model_dir`
    keeps training). `tf.feature_column.*` become `tfm.feature_columns.*`, which compute what TF1
    computed. Train/evaluate/predict become `tfm.fit`/`evaluate`/`predict_examples` in the
    `RunConfig`'s strategy, as for TFM201 (which also says what becomes of a
    `disable_eager_execution()`). Boosted trees and custom-head estimators get a TODO.

    Guide: https://www.tensorflow.org/guide/migrate/canned_estimators
    """

    CODE = "TFM401"
    DECLINES = (
        ("a boosted-trees estimator (`BoostedTreesClassifier`/`Regressor`): no Keras form reproduces TF1's trees",
         "move to TensorFlow Decision Forests (`tfdf.keras.GradientBoostedTreesModel`; retrain and re-validate), or keep the program on TF <= 2.15"),
        ("`feature_column.input_layer`/`linear_model` outside a model_fn that TFM201 migrates, in a file whose feature "
         "columns become the runtime's",
         "build `tfm.feature_columns.InputLayer(columns)` / `LinearModel(columns, units)` in the Keras model and call it on the features"),
        ("a canned estimator with a custom head or arguments the rule does not map",
         "drop or rewrite those arguments and run tfmigrate again, or write the Keras model by hand"),
    )
    # Under `--target ctl` the canned model is driven by the runtime's `ctl.CannedLoop`.
    TARGETS = frozenset({"keras", "ctl"})
    EXTRA_TRIGGERS = frozenset({"feature_column.input_layer", "feature_column.linear_model"})
    SUMMARY = "canned estimators (DNN/Linear/wide & deep/Baseline) + feature columns -> tfm.canned Keras models"
    SAFE = False
    RUNS_AFTER = ("TFM302",)
    EXAMPLE = "iris_dnn_classifier"
    ESTIMATOR_KEYS = frozenset(
        {f"estimator.{name}" for name in _SIGNATURES["v2"]} | {f"estimator.{name}" for name in _NO_KERAS}
    )
    ESTIMATOR_NAME = "canned estimator"
    SKIPS_QUIET_DEFS = False  # feature columns and optimizers are rewritten wherever they are

    def text_edits(self, view: SourceView) -> TextPlan | None:
        """The CST pass's whole work on a file that builds no estimator this rule knows (no site,
        loose call or surface to rewrite) and no runtime column layer: nothing. Its feature columns
        stay TF's, so a `feature_column.input_layer`/`linear_model` call there runs as written and
        gets no TODO. Such a module (a model_fn module beside a trainer that builds the estimator,
        a test module of feature-column helpers, a trainer whose estimators TFM201/TFM301 have
        rewritten: `view` is the text they left) otherwise costs two CST walks a pass. None (the
        CST pass) whenever more may happen."""
        if view.symbols() & self.ESTIMATOR_KEYS:
            return None
        if ("InputLayer" in view.source or "LinearModel" in view.source) and _calls_column_layer(view.nodes_of(ast.Call), self.ctx.names):
            return None  # the columns a runtime column layer is given become the runtime's
        return TextPlan()

    def visit_Module(self, node: cst.Module) -> bool:
        self.builds: dict[int, str] = {}
        # TFM201 built `tfm.feature_columns.InputLayer`/`LinearModel` from a model_fn's
        # `input_layer`/`linear_model`: the columns they are given must be the runtime's too.
        self.runtime_column_layers = self._calls_runtime_column_layer(node)
        return super().visit_Module(node)

    def _calls_runtime_column_layer(self, node: cst.Module) -> bool:
        """`_calls_runtime_column_layer`, read from the pass's input text while no model_fn rule
        (the rules that build the column layers) has changed the module: a CST walk of a large
        module costs a second, `ast` a few milliseconds."""
        source = self.ctx.source
        if not source or {"TFM201", "TFM301"} & set(self.ctx.applied):
            return _calls_runtime_column_layer(node, self.ctx.names)
        if "InputLayer" not in source and "LinearModel" not in source:
            return False
        return _calls_column_layer(index_by_type(parse(source)).get(ast.Call, ()), self.ctx.names)  # (the engine's parse of it)

    # -- the estimator class at a call ---------------------------------------------------------
    def _class_of(self, call: cst.Call) -> tuple[str, str] | None:
        key = self.canonical(call.func)
        if key is None or key not in self.ESTIMATOR_KEYS:
            return None
        full = self.ctx.names.qualify(call.func) or ""
        v1 = ".compat.v1." in full or full.startswith("tensorflow_estimator.compat.v1") or self.ctx.tf1_program
        api = "v1" if v1 else "v2"
        return key[len("estimator."):], api

    def bind_constructor(self, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
        found = self._class_of(call)
        if found is None:
            return None
        name, api = found
        positional = _SIGNATURES[api].get(name, ())
        out: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(call.args):
            if arg.star:
                return None
            key = arg.keyword.value if arg.keyword else (positional[index] if index < len(positional) else None)
            if key is None:
                return None
            out[key] = arg.value
        return out

    def hosted_note(self, reason: str) -> str:
        return canned_note(reason)

    def can_host(self, call: cst.Call) -> bool:
        found = self._class_of(call)
        return found is not None and found[0] in HOSTED_CANNED

    def hosted_constructor(self, original: cst.Call, updated: cst.Call) -> cst.Call | None:
        """`tf.estimator.DNNClassifier(...)` kept where the program keeps it (returned from a
        `build_estimator()`, passed to `train_and_evaluate`) -> `tfm.estimator.DNNClassifier(...,
        api=...)`, the runtime's estimator-shaped canned estimator (TF feature columns converted)."""
        if not self.can_host(original):
            return None
        name, api = self._class_of(original)  # type: ignore[misc]
        self.mark_changed()
        func = cst.parse_expression(f"{self.ctx.need_runtime()}.estimator.{name}")
        args = list(updated.args)
        if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif args:
            args[-1] = args[-1].with_changes(comma=args[-1].comma)
        api_arg = cst.Arg(
            keyword=cst.Name("api"),
            value=cst.SimpleString(f'"{api}"'),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
        )
        return updated.with_changes(func=func, args=[*args, api_arg])

    # -- the site ------------------------------------------------------------------------------
    def prepare_model(self, site: Site) -> None:
        call = site.stmt.body[0].value  # type: ignore[attr-defined]
        found = self._class_of(call)
        assert found is not None
        name, api = found
        if name in _NO_KERAS:
            site.problems.append(f"`{name}`: {_NO_KERAS[name]}")
            return
        args = []
        try:
            for key, expr in site.args.items():
                if key in _SITE_ONLY:
                    continue
                args.append(f"{key}={self._translate(expr)}")
        except _Unsupported as exc:
            site.problems.append(f"`{name}` cannot be migrated automatically: {exc}")
            return
        args.append(f'api="{api}"')
        self.builds[id(site)] = f"{self.ctx.need_runtime()}.canned.{name}({', '.join(args)})"

    def build_call(self, site: Site, steps_per_execution: str | None) -> str:
        return self.builds[id(site)]

    def predicts(self, site: Site) -> bool:
        return True

    def construct_loop(self, site: Site, config: str, build: str, steps_per_loop: str | None) -> list[str]:
        taken = names_in(site.scope) | set(self.functions) | {site.model_var, site.strategy_var}
        model = fresh_name("model", taken, site.est_name)
        model_dir = self.code_of(site.args["model_dir"]) if "model_dir" in site.args else None
        return ctl_codegen.construct_canned_loop(
            site.model_var, model, build, site.strategy_var, tfm=self.ctx.need_runtime(), config=config, model_dir=model_dir
        )

    def _translate(self, expr: cst.BaseExpression) -> str:
        rewriter = _ArgRewriter(self)
        new = expr.visit(rewriter)
        if rewriter.problems:
            raise _Unsupported("; ".join(rewriter.problems))
        return self.module.code_for_node(new)  # type: ignore[arg-type]

    # -- feature columns elsewhere in the file ---------------------------------------------------
    def _migrating(self) -> bool:
        return bool(self.sites) or bool(self.loose_calls) or self.runtime_column_layers

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        result = super().leave_Call(original, updated)
        if result is not updated:
            return result
        key = self.canonical(original.func)
        if key and key.startswith("feature_column."):
            column = key[len("feature_column."):]
            if column in _COLUMN_TODO:
                # TF's `input_layer` takes TF's columns and runs as written (TF1 graph mode, the
                # hosted tier): it fails only where this file's columns become the runtime's.
                if self._migrating():
                    self.todo(_COLUMN_TODO[column])
            elif column in _COLUMNS and self._migrating():
                self.mark_changed()
                return updated.with_changes(func=_column_func(self.ctx.need_runtime(), column))
        return updated


_COLUMN_LAYERS = frozenset(f"{RUNTIME_MODULE}.feature_columns.{cls}" for cls in ("InputLayer", "LinearModel"))


def _qualified_column_layer(name: str, names) -> bool:
    """Whether the dotted callee `name` is the runtime's `InputLayer` or `LinearModel`."""
    if name.startswith(RUNTIME_ALIAS + ".") and RUNTIME_ALIAS not in names.aliases:
        # The runtime import an earlier rule scheduled is not in the alias table yet.
        return RUNTIME_MODULE + name[len(RUNTIME_ALIAS):] in _COLUMN_LAYERS
    return names.qualify_dotted(name) in _COLUMN_LAYERS


def _calls_column_layer(calls, names) -> bool:
    """Whether one of these `ast` calls is of the runtime's `InputLayer` or `LinearModel`."""
    for call in calls:
        name = ast_dotted(call.func)
        if name is not None and _qualified_column_layer(name, names):
            return True
    return False


def _calls_runtime_column_layer(module: cst.Module, names) -> bool:
    """Whether `module` calls `tfmigrate.runtime.feature_columns.InputLayer` or `LinearModel`."""
    found = False

    class _Finder(Visitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal found
            name = dotted(call.func)
            found = found or (name is not None and _qualified_column_layer(name, names))

    walk(module, _Finder())
    return found


def _column_func(tfm: str, column: str) -> cst.BaseExpression:
    # `shared_embeddings` (v2) stays itself: its table is named and trained otherwise than v1's.
    return cst.parse_expression(f"{tfm}.feature_columns.{column}")


class _ArgRewriter(Transformer):
    """Translates one canned-estimator argument: feature columns, TF1 optimizers, loss reductions."""

    def __init__(self, rule: CannedEstimatorsToKeras) -> None:
        super().__init__()
        self.rule = rule
        self.problems: list[str] = []

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self.rule.canonical(original.func)
        if key is None:
            return updated
        tfm = self.rule.ctx.need_runtime()
        if key.startswith("feature_column."):
            column = key[len("feature_column."):]
            if column in _COLUMNS:
                return updated.with_changes(func=_column_func(tfm, column))
            self.problems.append(f"`tf.{key}` has no runtime form")
            return updated
        if key.startswith("train.") and key.endswith("Optimizer"):
            return self._optimizer(key, updated, tfm)
        if key.startswith("keras.optimizers.legacy."):
            tf = self.rule.ctx.need_tf2()
            return updated.with_changes(func=cst.parse_expression(f"{tf}.keras.optimizers.{key.rsplit('.', 1)[1]}"))
        return updated

    def _optimizer(self, key: str, call: cst.Call, tfm: str) -> cst.BaseExpression:
        if key not in OPTIMIZERS:
            self.problems.append(
                f"`tf.{key}` has no Keras form tfmigrate reproduces (supported: "
                + ", ".join(sorted(k.split(".")[1] for k in OPTIMIZERS)) + ")"
            )
            return call
        cls, positional, renames, spelled = OPTIMIZERS[key]
        bound: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(call.args):
            if arg.star or (arg.keyword is None and index >= len(positional)):
                self.problems.append(f"unexpected arguments to `tf.{key}`")
                return call
            bound[arg.keyword.value if arg.keyword else positional[index]] = arg.value
        args = keras_optimizer_args(bound, renames, spelled, self.rule.module.code_for_node)
        if cls.startswith("runtime:"):
            return cst.parse_expression(f"{tfm}.{cls[len('runtime:'):]}({', '.join(args)})")
        tf = self.rule.ctx.need_tf2()
        return cst.parse_expression(f"{tf}.keras.optimizers.{cls}({', '.join(args)})")

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        key = self.rule.canonical(original)
        if key and key.rsplit(".", 1)[0] in ("losses.Reduction", "keras.losses.Reduction"):
            member = key.rsplit(".", 1)[1]
            if member in _REDUCTIONS:
                return cst.parse_expression(f"{self.rule.ctx.need_runtime()}.losses.Reduction.{_REDUCTIONS[member]}")
        return updated
